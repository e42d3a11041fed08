#include "work_rate.hpp"

#include <fmt/format.h>

namespace steer::cli {

Throughput work_rate(const Spec& spec, std::string_view size_name, double median_ms) {
  for (const ProblemSize& size : spec.sizes) {
    if (size.name == size_name) return throughput(size, median_ms);
  }
  return {};
}

std::string work_rate_text(const Throughput& rate) {
  std::string text;
  if (rate.gflop_per_s) text = fmt::format("{:.1f} GFLOP/s", *rate.gflop_per_s);
  if (rate.gb_per_s) text += fmt::format("{}{:.1f} GB/s", text.empty() ? "" : ", ", *rate.gb_per_s);
  return text;
}

void add_work_rate(nlohmann::json& object, const Throughput& rate) {
  object["gflop_per_s"] = rate.gflop_per_s ? nlohmann::json(*rate.gflop_per_s) : nlohmann::json(nullptr);
  object["gb_per_s"] = rate.gb_per_s ? nlohmann::json(*rate.gb_per_s) : nlohmann::json(nullptr);
}

}  // namespace steer::cli
