// Result helpers: status names (as stored and exported) and the configuration key.
#include "steer/result.hpp"

#include <array>
#include <string>

namespace steer {
namespace {
constexpr std::array<std::pair<Status, const char*>, 6> kStatusNames{{
    {Status::Ok, "ok"},
    {Status::CompileError, "compile_error"},
    {Status::LaunchError, "launch_error"},
    {Status::InvalidOutput, "invalid_output"},
    {Status::Timeout, "timeout"},
    {Status::Skipped, "skipped"},
}};
}  // namespace

const char* to_string(Status status) noexcept {
  for (const auto& [s, name] : kStatusNames) {
    if (s == status) return name;
  }
  return "unknown";
}

std::optional<Status> status_from_string(std::string_view text) noexcept {
  for (const auto& [s, name] : kStatusNames) {
    if (text == name) return s;
  }
  return std::nullopt;
}

std::string Result::key() const {
  std::string key;
  for (const auto& [name, value] : configuration) {
    if (!key.empty()) key += ',';
    key += name;
    key += '=';
    key += value.to_string();
  }
  return key;
}

}  // namespace steer
