// Bottleneck analysis, method.md §3 (the paper's eq. 2–10).
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "steer/expert.hpp"

namespace steer {
namespace {

constexpr std::array instruction_table{
    InstructionBottleneck{abbr::INST_F32, &Bottlenecks::inst_f32},
    InstructionBottleneck{abbr::INST_F64, &Bottlenecks::inst_f64},
    InstructionBottleneck{abbr::INST_INT, &Bottlenecks::inst_int},
    InstructionBottleneck{abbr::INST_MISC, &Bottlenecks::inst_misc},
    InstructionBottleneck{abbr::INST_LDST, &Bottlenecks::inst_ldst},
    InstructionBottleneck{abbr::INST_CONT, &Bottlenecks::inst_cont},
    InstructionBottleneck{abbr::INST_BCONV, &Bottlenecks::inst_bconv},
};

constexpr std::array input_counters{
    abbr::DRAM_U,   abbr::DRAM_RT,   abbr::DRAM_WT,  abbr::L2_U,      abbr::L2_RT,     abbr::L2_WT,
    abbr::TEX_U,    abbr::LOC_O,     abbr::SHR_U,    abbr::SHR_LT,    abbr::SHR_WT,    abbr::SM_E,
    abbr::OCC,      abbr::INST_F32,  abbr::INST_F64, abbr::INST_INT,  abbr::INST_MISC, abbr::INST_LDST,
    abbr::INST_CONT, abbr::INST_BCONV, abbr::INST_EXE, abbr::INST_ISSUE_U, abbr::WARP_E, abbr::WARP_NP_E,
    abbr::THREADS,
};

// Bottlenecks live in [0, 1]; counters from different replay passes can disagree
// slightly (a share of 1.0001, a percentage of 100.2), which must not leak out.
double clamp_unit(double value) { return std::clamp(value, 0.0, 1.0); }

// numerator / denominator, or 0 when there is nothing to divide by (no traffic, no
// instructions): an idle unit is no bottleneck.
double ratio(double numerator, double denominator) { return denominator > 0 ? numerator / denominator : 0.0; }

struct ReadWrite {
  double read, write;
};

// eq. 2–3: the unit's utilisation (0..10) split by the share of reads and writes.
ReadWrite by_direction(double reads, double writes, double utilisation_tenths) {
  double total = reads + writes;
  double load = utilisation_tenths / 10.0;
  return {clamp_unit(ratio(reads, total) * load), clamp_unit(ratio(writes, total) * load)};
}

// Stand-ins for inputs some counter sets lack. Kepler (compute capability 3.x) lacks three:
// there, as in the paper's implementation, full warp efficiency (100 %) stands in for WARP_E
// and WARP_NP_E, and shared_efficiency (a percentage, so tenths of it) for the shared-memory
// utilisation SHR_U. KTT 2.3 collects no DRAM sectors (dram__sectors_read/write):
// where both DRAM_RT and DRAM_WT are missing, L2's reads and writes stand in for them. The
// two only split DRAM_U by direction (eq. 2–3), and DRAM traffic is L2's misses and
// write-backs, so L2's share of reads is the nearest measured one.
constexpr double kFullEfficiency = 100.0;
constexpr std::string_view kKeplerSharedEfficiency = "shared_efficiency";

std::optional<double> stand_in(const CounterValues& counters, std::string_view name) {
  if (name == abbr::WARP_E || name == abbr::WARP_NP_E) return kFullEfficiency;
  auto value = [&](std::string_view counter) -> std::optional<double> {
    auto found = counters.find(std::string(counter));
    if (found == counters.end()) return std::nullopt;
    return found->second;
  };
  if (name == abbr::SHR_U) {
    if (auto efficiency = value(kKeplerSharedEfficiency)) return *efficiency / 10.0;
  }
  if ((name == abbr::DRAM_RT || name == abbr::DRAM_WT) && !value(abbr::DRAM_RT) && !value(abbr::DRAM_WT)) {
    return value(name == abbr::DRAM_RT ? abbr::L2_RT : abbr::L2_WT);
  }
  return std::nullopt;
}

void require_inputs(const CounterValues& counters) {
  const std::vector<std::string_view> missing = missing_expert_inputs(counters);
  if (!missing.empty()) {
    throw CounterError(fmt::format("bottleneck analysis: missing canonical counters {}", fmt::join(missing, ", ")));
  }
}

}  // namespace

std::span<const InstructionBottleneck> instruction_bottlenecks() noexcept { return instruction_table; }

std::span<const std::string_view> expert_input_counters() noexcept { return input_counters; }

std::vector<std::string_view> missing_expert_inputs(const CounterValues& counters) {
  std::vector<std::string_view> missing;
  for (std::string_view name : input_counters) {
    if (!counters.contains(std::string(name)) && !stand_in(counters, name)) missing.push_back(name);
  }
  return missing;
}

double ExpertOptions::reaction_threshold() const {
  double r = compute_bound ? compute_bound_inst_reaction : inst_reaction;
  if (!(r >= 0.0 && r < 1.0)) throw CounterError(fmt::format("inst_reaction must be in [0, 1), got {}", r));
  return r;
}

namespace {

// The analysis; `cores` (SMs × FP32 cores per SM) unknown leaves b_paral at 0.
Bottlenecks analyse(const CounterValues& counters, CounterFamily family, std::optional<double> cores,
                    const ExpertOptions& options) {
  const double r = options.reaction_threshold();
  require_inputs(counters);
  auto counter = [&](std::string_view name) {
    auto found = counters.find(std::string(name));
    return found != counters.end() ? found->second : *stand_in(counters, name);  // require_inputs checked
  };
  const bool volta = is_volta_or_newer(family);
  Bottlenecks b;

  // Memory.
  auto dram = by_direction(counter(abbr::DRAM_RT), counter(abbr::DRAM_WT), counter(abbr::DRAM_U));
  auto l2 = by_direction(counter(abbr::L2_RT), counter(abbr::L2_WT), counter(abbr::L2_U));
  auto shr = by_direction(counter(abbr::SHR_LT), counter(abbr::SHR_WT), counter(abbr::SHR_U));
  b.dram_read = dram.read;
  b.dram_write = dram.write;
  b.l2_read = l2.read;
  b.l2_write = l2.write;
  b.shr_load = shr.read;
  b.shr_store = shr.write;
  b.tex = clamp_unit(counter(abbr::TEX_U) / 10.0);

  // eq. 4. Volta+ has no local-memory overhead counter; the estimate of method.md is
  // local sectors over L2 write sectors, capped at 1 (local memory is cached in L1, so
  // LOC_O can exceed what reaches L2). Before Volta, LOC_O is nvprof's
  // local_memory_overhead, that share already, in percent.
  b.local_share = volta ? clamp_unit(ratio(counter(abbr::LOC_O), counter(abbr::L2_WT)))
                        : clamp_unit(counter(abbr::LOC_O) / 100.0);
  double busiest_memory = std::max({counter(abbr::DRAM_U), counter(abbr::L2_U), counter(abbr::TEX_U)});
  b.local = clamp_unit(b.local_share * busiest_memory / 10.0);

  // eq. 5–7. INST_EXE counts warp instructions; scaled by 32 and by the warp
  // efficiencies it stands for the thread instructions a full warp would execute.
  b.ins_fitted = 32.0 * counter(abbr::INST_EXE) * ratio(100.0, counter(abbr::WARP_E)) *
                 ratio(100.0, counter(abbr::WARP_NP_E));
  double full_issue_pct = volta ? options.volta_full_issue_pct : 100.0;
  b.ins_util = clamp_unit(ratio(counter(abbr::INST_ISSUE_U), full_issue_pct));
  for (const InstructionBottleneck& type : instruction_table) {
    double share = clamp_unit(ratio(counter(type.counter), b.ins_fitted));
    b.*type.bottleneck = share * b.ins_util;
    b.util_max = std::max(b.util_max, share);
  }

  // eq. 8: unused issue slots matter only when one instruction type dominates.
  double weight = b.util_max > r ? (b.util_max - r) / (1.0 - r) : 0.0;
  b.issue = clamp_unit((1.0 - counter(abbr::INST_ISSUE_U) / 100.0) * weight);

  // eq. 9–10.
  b.sm = clamp_unit((100.0 - counter(abbr::SM_E)) / 100.0);
  b.occupancy = clamp_unit(1.0 - counter(abbr::OCC) / 100.0);
  if (cores) {
    b.cores = *cores;
    double enough_threads = options.threads_per_core * b.cores;
    b.parallelism = clamp_unit(ratio(enough_threads - counter(abbr::THREADS), enough_threads));
  }
  return b;
}

}  // namespace

Bottlenecks analyse_bottlenecks(const CounterValues& counters, const DeviceFacts& device,
                                const ExpertOptions& options) {
  if (device.sm_count < 1) throw CounterError(fmt::format("device has {} SMs", device.sm_count));
  const double cores = static_cast<double>(device.sm_count) * fp32_cores_per_sm(device.compute_capability);
  return analyse(counters, device.family, cores, options);
}

Bottlenecks analyse_bottlenecks(const CounterValues& counters, CounterFamily family, const ExpertOptions& options) {
  return analyse(counters, family, std::nullopt, options);
}

std::vector<std::pair<std::string, double>> named_bottlenecks(const Bottlenecks& b) {
  return {{"dram_read", b.dram_read}, {"dram_write", b.dram_write}, {"l2_read", b.l2_read},
          {"l2_write", b.l2_write},   {"shr_load", b.shr_load},     {"shr_store", b.shr_store},
          {"tex", b.tex},             {"local", b.local},           {"inst_f32", b.inst_f32},
          {"inst_f64", b.inst_f64},   {"inst_int", b.inst_int},     {"inst_misc", b.inst_misc},
          {"inst_ldst", b.inst_ldst}, {"inst_cont", b.inst_cont},   {"inst_bconv", b.inst_bconv},
          {"issue", b.issue},         {"sm", b.sm},                 {"occupancy", b.occupancy},
          {"parallelism", b.parallelism}};
}

}  // namespace steer
