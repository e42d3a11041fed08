#pragma once
// GFLOP/s and GB/s of a result, as tune and profile print them: from the spec's `flops` and
// `bytes` at the size the result was measured at (steer::throughput).
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "steer/spec.hpp"

namespace steer::cli {

// Empty when the spec has no size of that name (a recording made elsewhere) or no counts.
Throughput work_rate(const Spec& spec, std::string_view size_name, double median_ms);

// "12.3 GFLOP/s, 45.6 GB/s", "45.6 GB/s", or "" when neither is known.
std::string work_rate_text(const Throughput& rate);

// Sets "gflop_per_s" and "gb_per_s" in `object`, null where unknown.
void add_work_rate(nlohmann::json& object, const Throughput& rate);

}  // namespace steer::cli
