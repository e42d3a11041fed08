#include "progress.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <string>

namespace steer::cli {
namespace {

std::string eta_text(const TuneProgress& p) {
  if (!p.planned || p.tests == 0 || p.tests >= *p.planned) return "";
  double per_test = p.elapsed_s / static_cast<double>(p.tests);
  double left = per_test * static_cast<double>(*p.planned - p.tests);
  if (left >= 3600) return fmt::format(" ETA {:.1f} h", left / 3600);
  if (left >= 60) return fmt::format(" ETA {:.1f} min", left / 60);
  return fmt::format(" ETA {:.0f} s", left);
}

std::string best_text(const TuneProgress& p) {
  return p.best ? fmt::format("best {:.4f} ms", p.best->time.median_ms) : std::string("best -");
}

}  // namespace

void Progress::update(const Result& result, const TuneProgress& p) {
  if (!terminal_) {
    std::string time = result.ok() ? fmt::format("{:.4f} ms", result.time.median_ms) : result.message.substr(0, 80);
    for (char& c : time) {
      if (c == '\n') c = ' ';
    }
    fmt::print(stderr, "test {}{} {} {} | {}{}\n", p.tests, p.planned ? fmt::format("/{}", *p.planned) : "",
               to_string(result.status), time, best_text(p), eta_text(p));
    return;
  }
  constexpr int kWidth = 30;
  int filled = p.planned && *p.planned > 0
                   ? static_cast<int>(kWidth * static_cast<double>(p.tests) / static_cast<double>(*p.planned))
                   : 0;
  std::string bar(static_cast<std::size_t>(std::min(filled, kWidth)), '#');
  bar.resize(kWidth, '.');
  fmt::print(stderr, "\r[{}] {}{} valid {} | {}{}\033[K", bar, p.tests,
             p.planned ? fmt::format("/{}", *p.planned) : "", p.valid, best_text(p), eta_text(p));
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::note(const std::string& line) {
  fmt::print(stderr, "{}{}\n", terminal_ && drawn_ ? "\r\033[K" : "", line);
  drawn_ = false;
}

void Progress::finish() {
  if (terminal_ && drawn_) fmt::print(stderr, "\n");
}

}  // namespace steer::cli
