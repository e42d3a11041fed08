#pragma once
// The expert system of the paper's Section 3.4 (method.md §3–4): from the canonical
// counters of one profiled configuration to its bottlenecks (each in [0, 1]), and from
// the bottlenecks to the reaction PC' — how much each counter should change (in [-1, 1],
// negative: decrease) to soften them.
//
//   steer::DeviceFacts h200{132, {9, 0}, steer::CounterFamily::VoltaPlus};
//   auto counters = steer::canonical_counters(result.counters, h200.family).values;
//   steer::Bottlenecks b = steer::analyse_bottlenecks(counters, h200);
//   steer::CounterValues wanted = steer::required_counter_changes(b);  // "DRAM_RT" -> -0.4, ...
//
// The reaction is keyed by canonical abbreviations, which every counter family shares:
// the analysis reads the counters of the GPU being tuned, while a model trained on
// another GPU can be steered by the same reaction.
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "steer/counters.hpp"
#include "steer/device.hpp"

namespace steer {

struct ExpertOptions {
  // inst_reaction r: instruction bottlenecks at or below r ask for no change (eq. 11).
  double inst_reaction = 0.7;
  // r used instead when the user declares the kernel compute-bound, so that the reaction
  // to an emerging instruction bottleneck starts earlier.
  double compute_bound_inst_reaction = 0.5;
  bool compute_bound = false;
  // Issue utilisation (%) that counts as full use of the issue slots on Volta and newer,
  // which issue over two paths: ins_util = min(1, INST_ISSUE_U / 50). Before Volta: 100.
  double volta_full_issue_pct = 50.0;
  // Threads per FP32 core needed to make b_paral zero (eq. 10).
  double threads_per_core = 5.0;

  // The r in force. Throws CounterError unless 0 <= r < 1.
  double reaction_threshold() const;
};

// Every bottleneck is in [0, 1]: 0 the unit is idle, 1 at its peak. Values computed from
// counters slightly outside their range (they come from different replay passes) are
// clamped; a zero denominator (no traffic, no instructions) gives 0.
struct Bottlenecks {
  // Memory (eq. 2–4).
  double dram_read = 0, dram_write = 0;
  double l2_read = 0, l2_write = 0;
  double shr_load = 0, shr_store = 0;
  double tex = 0;
  double local = 0;
  // Instruction types (eq. 6): share of the fitted instruction count, times ins_util.
  double inst_f32 = 0, inst_f64 = 0, inst_int = 0, inst_misc = 0, inst_ldst = 0, inst_cont = 0,
         inst_bconv = 0;
  double issue = 0;        // eq. 8
  // Parallelism (eq. 9–10).
  double sm = 0;           // idle SM cycles
  double occupancy = 0;    // 1 - achieved occupancy (reported, not reacted on)
  double parallelism = 0;  // b_paral: too few threads for the cores

  // Intermediate values of the analysis, for reports and tests.
  double local_share = 0;  // fraction of memory traffic that is local (spill) traffic
  double ins_fitted = 0;   // eq. 5
  double ins_util = 0;     // issue utilisation, 0..1
  double util_max = 0;     // eq. 7: largest instruction-type share
  double cores = 0;        // SMs x FP32 cores per SM
};

// One instruction-type bottleneck and the counter it is read from and reacted on.
struct InstructionBottleneck {
  std::string_view counter;  // abbr::INST_F32, ...
  double Bottlenecks::*bottleneck;
};
std::span<const InstructionBottleneck> instruction_bottlenecks() noexcept;

// Every bottleneck by name ("dram_read", ..., "parallelism"), in the order of the struct:
// what reports and explanations print.
std::vector<std::pair<std::string, double>> named_bottlenecks(const Bottlenecks& bottlenecks);

// The canonical counters analyse_bottlenecks reads (all but TEX_RWT).
std::span<const std::string_view> expert_input_counters() noexcept;

// The inputs analyse_bottlenecks would miss in `counters`: neither present nor stood in for
// (Kepler's warp efficiencies and shared-memory utilisation, L2's reads and writes for DRAM's).
std::vector<std::string_view> missing_expert_inputs(const CounterValues& counters);

// Bottleneck analysis (method.md §3). `counters` are canonical (canonical_counters());
// throws CounterError naming every missing input counter, for an unknown compute
// capability, or for sm_count < 1.
Bottlenecks analyse_bottlenecks(const CounterValues& counters, const DeviceFacts& device,
                                const ExpertOptions& options = {});

// The same analysis for a GPU whose SM count and compute capability are unknown (a recording
// of a GPU not in known_device_facts' table, no facts given): every bottleneck but b_paral,
// which needs the GPU's FP32 cores, stays as above; b_paral and `cores` stay 0, so the
// reaction asks nothing of the thread count. `family` is the counters' own.
Bottlenecks analyse_bottlenecks(const CounterValues& counters, CounterFamily family,
                                const ExpertOptions& options = {});

// The reaction PC' (method.md §4): abbreviation -> required change in [-1, 1] for the
// memory counters (DRAM_RT, DRAM_WT, L2_RT, L2_WT, SHR_LT, SHR_WT, TEX_RWT, LOC_O), the
// instruction types, INST_ISSUE_U, SM_E and threads. Use the options of the analysis.
CounterValues required_counter_changes(const Bottlenecks& bottlenecks, const ExpertOptions& options = {});

}  // namespace steer
