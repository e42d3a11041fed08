#include "tuner/tuning_choice.hpp"

#include <fmt/format.h>

#include "steer/error.hpp"

namespace steer::tuner_detail {
namespace {

// What sets tuning `id` apart from a run with `content`, in words.
std::string differences(const Store& store, std::int64_t id, const TuningContent& content) {
  const TuningContent stored = store.tuning_content(id);
  if (stored.empty()) {
    return "it was recorded by an older Steer, or imported, with no key for the sources, includes, inputs, "
           "compiler or driver it was measured with";
  }
  std::string text;
  for (const std::string& difference : content_differences(stored, content)) {
    text += (text.empty() ? "" : ", ") + difference;
  }
  return text.empty() ? "the same content under another spec hash" : text;
}

std::string describe(const TuningKey& key) {
  return fmt::format("'{}' on {} ({}), size '{}'", key.spec_name, key.device, key.backend, key.problem_size);
}

}  // namespace

TuningChoice choose_tuning(Store& store, const ExecutorInfo& info, const TuningContent& content,
                           const TuneOptions& options) {
  const TuningKey key{info.spec_name,           info.spec_hash,    info.device.name, info.device.backend,
                      info.problem_size, content.empty() ? std::string() : content_key(content)};
  TuningChoice choice;
  if (options.tuning) {
    choice.id = *options.tuning;
    const TuningKey stored = store.tuning_key(choice.id);  // throws for an unknown id
    if (stored.spec_name != key.spec_name || stored.device != key.device || stored.backend != key.backend ||
        stored.problem_size != key.problem_size) {
      throw Error(fmt::format("tuning {} of results store '{}' is {}; this run is {}: it cannot continue it",
                              choice.id, store.path().string(), describe(stored), describe(key)));
    }
    if (stored.content_key != key.content_key) {
      choice.warnings.push_back(fmt::format("continuing tuning {} as asked (--tuning), although its key differs: {}",
                                            choice.id, differences(store, choice.id, content)));
    }
    return choice;
  }
  if (options.fresh) {
    choice.id = store.new_tuning(key, content);
    choice.created = true;
    return choice;
  }
  const std::optional<std::int64_t> existing = store.find_tuning(key);
  choice.id = store.tuning(key, content);
  choice.created = !existing && choice.id != 0;
  if (!choice.created) return choice;
  // A new tuning: say if the store holds the same spec under another key, whose tests are
  // now left alone (the newest few; each is one line of the warning).
  constexpr std::size_t kNamed = 3;
  const auto others = store.other_keys(key);
  std::string listing;
  for (std::size_t i = 0; i < others.size() && i < kNamed; ++i) {
    const std::int64_t id = others[i].first;
    listing += fmt::format("\n  tuning {} ({} tests): {}", id, store.count(id), differences(store, id, content));
  }
  if (others.size() > kNamed) listing += fmt::format("\n  and {} older tunings", others.size() - kNamed);
  if (!listing.empty()) {
    choice.warnings.push_back(fmt::format(
        "the store holds {} under another key, so its tests are not reused; this run starts tuning {}:{}\n"
        "  (`--tuning ID` continues one of them instead)",
        describe(key), choice.id, listing));
  }
  return choice;
}

}  // namespace steer::tuner_detail
