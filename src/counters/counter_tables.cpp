// The counter sets as data: canonical abbreviations, one translation table per counter
// family, and the default metric list. Logic that reads these lives in
// canonical_counters.cpp; a new GPU generation that renames a metric needs a row here,
// not code. Every table is checked at compile time (see table_is_consistent).
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "steer/counters.hpp"

namespace steer {
namespace {

using enum CounterClass;
using enum Transform;

constexpr std::array counter_infos{
    CounterInfo{abbr::DRAM_U, Stress, "DRAM utilisation, 0..10"},
    CounterInfo{abbr::DRAM_RT, Ops, "DRAM read sectors / transactions"},
    CounterInfo{abbr::DRAM_WT, Ops, "DRAM write sectors / transactions"},
    CounterInfo{abbr::L2_U, Stress, "L2 utilisation, 0..10"},
    CounterInfo{abbr::L2_RT, Ops, "L2 read sectors / transactions"},
    CounterInfo{abbr::L2_WT, Ops, "L2 write sectors / transactions"},
    CounterInfo{abbr::TEX_U, Stress, "texture / L1 global-load utilisation, 0..10"},
    CounterInfo{abbr::TEX_RWT, Ops, "texture / L1 global-load requests"},
    CounterInfo{abbr::LOC_O, Ops, "local memory: sectors (Volta+) or overhead % (pre-Volta)"},
    CounterInfo{abbr::SHR_U, Stress, "shared-memory utilisation, 0..10"},
    CounterInfo{abbr::SHR_LT, Ops, "shared-memory load wavefronts / transactions"},
    CounterInfo{abbr::SHR_WT, Ops, "shared-memory store wavefronts / transactions"},
    CounterInfo{abbr::SM_E, Stress, "SM efficiency (cycles with work), %"},
    CounterInfo{abbr::OCC, Stress, "achieved occupancy, %"},
    CounterInfo{abbr::INST_F32, Ops, "FP32 thread instructions"},
    CounterInfo{abbr::INST_F64, Ops, "FP64 thread instructions"},
    CounterInfo{abbr::INST_INT, Ops, "integer thread instructions"},
    CounterInfo{abbr::INST_MISC, Ops, "miscellaneous thread instructions"},
    CounterInfo{abbr::INST_LDST, Ops, "load/store thread instructions"},
    CounterInfo{abbr::INST_CONT, Ops, "control-flow thread instructions"},
    CounterInfo{abbr::INST_BCONV, Ops, "conversion thread instructions"},
    CounterInfo{abbr::INST_EXE, Ops, "warp instructions executed"},
    CounterInfo{abbr::INST_ISSUE_U, Ops, "issue-slot utilisation, %"},
    CounterInfo{abbr::WARP_E, Stress, "warp execution efficiency, %"},
    CounterInfo{abbr::WARP_NP_E, Stress, "non-predicated warp execution efficiency, %"},
    CounterInfo{abbr::THREADS, Ops, "launched threads (global size)"},
};

constexpr auto pc_ops = [] {
  constexpr auto count = std::ranges::count(counter_infos, Ops, &CounterInfo::counter_class);
  std::array<std::string_view, count> names{};
  std::size_t next = 0;
  for (const CounterInfo& info : counter_infos) {
    if (info.counter_class == Ops) names[next++] = info.abbreviation;
  }
  return names;
}();

// Legacy nvprof names (Kepler, Maxwell, Pascal). Utilisations are already levels 0..10;
// achieved_occupancy is a fraction. LOC_O is local_memory_overhead, the percentage of
// L1–L2 traffic caused by local memory, as in the paper's Table 1 (the expert system
// reads it as local_share = LOC_O / 100); local_{load,store}_transactions stay raw.
constexpr std::array pre_volta_table{
    CounterMapping{"dram_utilization", abbr::DRAM_U, Identity},
    CounterMapping{"dram_read_transactions", abbr::DRAM_RT, Identity},
    CounterMapping{"dram_write_transactions", abbr::DRAM_WT, Identity},
    CounterMapping{"l2_utilization", abbr::L2_U, Identity},
    CounterMapping{"l2_read_transactions", abbr::L2_RT, Identity},
    CounterMapping{"l2_write_transactions", abbr::L2_WT, Identity},
    CounterMapping{"tex_utilization", abbr::TEX_U, Identity},
    CounterMapping{"tex_cache_transactions", abbr::TEX_RWT, Identity},
    CounterMapping{"local_memory_overhead", abbr::LOC_O, Identity},
    CounterMapping{"shared_utilization", abbr::SHR_U, Identity},
    CounterMapping{"shared_load_transactions", abbr::SHR_LT, Identity},
    CounterMapping{"shared_store_transactions", abbr::SHR_WT, Identity},
    CounterMapping{"sm_efficiency", abbr::SM_E, Identity},
    CounterMapping{"achieved_occupancy", abbr::OCC, FractionToPercent},
    CounterMapping{"inst_fp_32", abbr::INST_F32, Identity},
    CounterMapping{"inst_fp_64", abbr::INST_F64, Identity},
    CounterMapping{"inst_integer", abbr::INST_INT, Identity},
    CounterMapping{"inst_misc", abbr::INST_MISC, Identity},
    CounterMapping{"inst_compute_ld_st", abbr::INST_LDST, Identity},
    CounterMapping{"inst_control", abbr::INST_CONT, Identity},
    CounterMapping{"inst_bit_convert", abbr::INST_BCONV, Identity},
    CounterMapping{"inst_executed", abbr::INST_EXE, Identity},
    CounterMapping{"issue_slot_utilization", abbr::INST_ISSUE_U, Identity},
    CounterMapping{"warp_execution_efficiency", abbr::WARP_E, Identity},
    CounterMapping{"warp_nonpred_execution_efficiency", abbr::WARP_NP_E, Identity},
    CounterMapping{"threads", abbr::THREADS, Identity},
};

// CUPTI profiler / Nsight Compute names (Volta and newer), method.md §2. Where Nsight
// Compute renamed a metric, the deprecated name comes first and its successor follows as
// an alternative (identical values; whichever was collected is used).
constexpr std::array volta_plus_table{
    CounterMapping{"dram__throughput.avg.pct_of_peak_sustained_elapsed", abbr::DRAM_U, PercentToTenths},
    CounterMapping{"dram__sectors_read.sum", abbr::DRAM_RT, Identity},
    CounterMapping{"dram__sectors_write.sum", abbr::DRAM_WT, Identity},
    CounterMapping{"lts__t_sectors.avg.pct_of_peak_sustained_elapsed", abbr::L2_U, PercentToTenths},
    CounterMapping{"lts__t_sectors_op_read.sum", abbr::L2_RT, Identity},
    CounterMapping{"lts__t_sectors_op_write.sum", abbr::L2_WT, Identity},
    CounterMapping{"l1tex__t_requests_pipe_lsu_mem_global_op_ld.avg.pct_of_peak_sustained_active", abbr::TEX_U,
                   PercentToTenths},
    CounterMapping{"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", abbr::TEX_RWT, Identity},
    CounterMapping{"l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", abbr::LOC_O, Summand},
    CounterMapping{"l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", abbr::LOC_O, Summand},
    CounterMapping{"l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed", abbr::SHR_U,
                   PercentToTenths},
    CounterMapping{"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", abbr::SHR_LT, Identity},
    CounterMapping{"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", abbr::SHR_WT, Identity},
    CounterMapping{"smsp__cycles_active.avg.pct_of_peak_sustained_elapsed", abbr::SM_E, Identity},
    CounterMapping{"sm__warps_active.avg.pct_of_peak_sustained_active", abbr::OCC, Identity},
    CounterMapping{"smsp__sass_thread_inst_executed_op_fp32_pred_on.sum", abbr::INST_F32, Identity},
    CounterMapping{"smsp__sass_thread_inst_executed_op_fp64_pred_on.sum", abbr::INST_F64, Identity},
    CounterMapping{"smsp__sass_thread_inst_executed_op_integer_pred_on.sum", abbr::INST_INT, Identity},
    CounterMapping{"smsp__sass_thread_inst_executed_op_misc_pred_on.sum", abbr::INST_MISC, Identity},
    CounterMapping{"smsp__sass_thread_inst_executed_op_memory_pred_on.sum", abbr::INST_LDST, Identity},
    CounterMapping{"smsp__sass_thread_inst_executed_op_control_pred_on.sum", abbr::INST_CONT, Identity},
    CounterMapping{"smsp__sass_thread_inst_executed_op_conversion_pred_on.sum", abbr::INST_BCONV, Identity},
    CounterMapping{"smsp__inst_executed.sum", abbr::INST_EXE, Identity},
    CounterMapping{"smsp__issue_active.avg.pct_of_peak_sustained_active", abbr::INST_ISSUE_U, Identity},
    CounterMapping{"smsp__thread_inst_executed_per_inst_executed.ratio", abbr::WARP_E, WarpRatioToPercent},
    CounterMapping{"smsp__average_thread_inst_executed_per_inst_executed.ratio", abbr::WARP_E, WarpRatioToPercent},
    CounterMapping{"smsp__thread_inst_executed_per_inst_executed.pct", abbr::WARP_NP_E, Identity},
    CounterMapping{"smsp__average_thread_inst_executed_per_inst_executed.pct", abbr::WARP_NP_E, Identity},
    CounterMapping{"threads", abbr::THREADS, Identity},
};

// KTT 2.x's selection on Volta and newer, in the order KTT writes it: the 26 metrics
// that give canonical counters (both local-memory directions, summed into LOC_O), and 7
// more (FP16, per-pipe utilisations) kept under their own names.
constexpr std::array ktt_table{
    CounterMapping{"dram__throughput.avg.pct_of_peak_sustained_elapsed", abbr::DRAM_U, PercentToTenths},
    CounterMapping{"dram__sectors_read.sum", abbr::DRAM_RT, Identity},
    CounterMapping{"dram__sectors_write.sum", abbr::DRAM_WT, Identity},
    CounterMapping{"lts__t_sectors.avg.pct_of_peak_sustained_elapsed", abbr::L2_U, PercentToTenths},
    CounterMapping{"lts__t_sectors_op_read.sum", abbr::L2_RT, Identity},
    CounterMapping{"lts__t_sectors_op_write.sum", abbr::L2_WT, Identity},
    CounterMapping{"l1tex__t_requests_pipe_lsu_mem_global_op_ld.avg.pct_of_peak_sustained_active", abbr::TEX_U,
                   PercentToTenths},
    CounterMapping{"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", abbr::TEX_RWT, Identity},
    CounterMapping{"l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed", abbr::SHR_U,
                   PercentToTenths},
    CounterMapping{"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", abbr::SHR_LT, Identity},
    CounterMapping{"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", abbr::SHR_WT, Identity},
    CounterMapping{"l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", abbr::LOC_O, Summand},
    CounterMapping{"l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", abbr::LOC_O, Summand},
    CounterMapping{"sm__warps_active.avg.pct_of_peak_sustained_active", abbr::OCC, Identity},
    CounterMapping{"smsp__cycles_active.avg.pct_of_peak_sustained_elapsed", abbr::SM_E, Identity},
    CounterMapping{"smsp__sass_thread_inst_executed_op_fp16_pred_on.sum", {}, KeepRaw},
    CounterMapping{"smsp__sass_thread_inst_executed_op_fp32_pred_on.sum", abbr::INST_F32, Identity},
    CounterMapping{"smsp__sass_thread_inst_executed_op_fp64_pred_on.sum", abbr::INST_F64, Identity},
    CounterMapping{"smsp__sass_thread_inst_executed_op_integer_pred_on.sum", abbr::INST_INT, Identity},
    CounterMapping{"smsp__sass_thread_inst_executed_op_control_pred_on.sum", abbr::INST_CONT, Identity},
    CounterMapping{"smsp__sass_thread_inst_executed_op_memory_pred_on.sum", abbr::INST_LDST, Identity},
    CounterMapping{"smsp__sass_thread_inst_executed_op_misc_pred_on.sum", abbr::INST_MISC, Identity},
    CounterMapping{"smsp__sass_thread_inst_executed_op_conversion_pred_on.sum", abbr::INST_BCONV, Identity},
    CounterMapping{"smsp__inst_executed.sum", abbr::INST_EXE, Identity},
    CounterMapping{"smsp__inst_executed_pipe_fp16.sum", {}, KeepRaw},
    CounterMapping{"smsp__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", {}, KeepRaw},
    CounterMapping{"smsp__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active", {}, KeepRaw},
    CounterMapping{"smsp__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active", {}, KeepRaw},
    CounterMapping{"smsp__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active", {}, KeepRaw},
    CounterMapping{"smsp__inst_executed_pipe_tex.avg.pct_of_peak_sustained_active", {}, KeepRaw},
    CounterMapping{"smsp__issue_active.avg.pct_of_peak_sustained_active", abbr::INST_ISSUE_U, Identity},
    CounterMapping{"smsp__thread_inst_executed_per_inst_executed.ratio", abbr::WARP_E, WarpRatioToPercent},
    CounterMapping{"smsp__thread_inst_executed_per_inst_executed.pct", abbr::WARP_NP_E, Identity},
    CounterMapping{"threads", abbr::THREADS, Identity},
};

// reference/metrics.txt: what the CUDA backend collects unless told otherwise.
constexpr std::array default_metrics{
    std::string_view{"dram__throughput.avg.pct_of_peak_sustained_elapsed"},
    std::string_view{"dram__sectors_read.sum"},
    std::string_view{"dram__sectors_write.sum"},
    std::string_view{"lts__t_sectors.avg.pct_of_peak_sustained_elapsed"},
    std::string_view{"lts__t_sectors_op_read.sum"},
    std::string_view{"lts__t_sectors_op_write.sum"},
    std::string_view{"l1tex__t_requests_pipe_lsu_mem_global_op_ld.avg.pct_of_peak_sustained_active"},
    std::string_view{"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"},
    std::string_view{"l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"},
    std::string_view{"l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed"},
    std::string_view{"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"},
    std::string_view{"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"},
    std::string_view{"smsp__cycles_active.avg.pct_of_peak_sustained_elapsed"},
    std::string_view{"smsp__sass_thread_inst_executed_op_fp32_pred_on.sum"},
    std::string_view{"smsp__sass_thread_inst_executed_op_fp64_pred_on.sum"},
    std::string_view{"smsp__sass_thread_inst_executed_op_integer_pred_on.sum"},
    std::string_view{"smsp__sass_thread_inst_executed_op_misc_pred_on.sum"},
    std::string_view{"smsp__sass_thread_inst_executed_op_memory_pred_on.sum"},
    std::string_view{"smsp__sass_thread_inst_executed_op_control_pred_on.sum"},
    std::string_view{"smsp__sass_thread_inst_executed_op_conversion_pred_on.sum"},
    std::string_view{"smsp__inst_executed.sum"},
    std::string_view{"smsp__issue_active.avg.pct_of_peak_sustained_active"},
    std::string_view{"smsp__thread_inst_executed_per_inst_executed.ratio"},
    std::string_view{"smsp__thread_inst_executed_per_inst_executed.pct"},
    std::string_view{"sm__warps_active.avg.pct_of_peak_sustained_active"},
};

constexpr bool is_canonical(std::string_view abbreviation) {
  return std::ranges::find(counter_infos, abbreviation, &CounterInfo::abbreviation) != counter_infos.end();
}

// A table is consistent when every row names a canonical abbreviation (or none, exactly
// for KeepRaw rows), no hardware name appears twice, and the rows of one abbreviation
// are either all Summands or all alternatives.
template <std::size_t N>
constexpr bool table_is_consistent(const std::array<CounterMapping, N>& table) {
  for (std::size_t i = 0; i < N; ++i) {
    const CounterMapping& row = table[i];
    if ((row.transform == KeepRaw) != row.abbreviation.empty()) return false;
    if (!row.abbreviation.empty() && !is_canonical(row.abbreviation)) return false;
    for (std::size_t j = i + 1; j < N; ++j) {
      if (table[j].hardware_name == row.hardware_name) return false;
      if (!row.abbreviation.empty() && table[j].abbreviation == row.abbreviation &&
          (table[j].transform == Summand) != (row.transform == Summand)) {
        return false;
      }
    }
  }
  return true;
}

template <std::size_t N>
constexpr bool maps_every_name(const std::array<CounterMapping, N>& table) {
  return std::ranges::all_of(default_metrics, [&](std::string_view name) {
    auto row = std::ranges::find(table, name, &CounterMapping::hardware_name);
    return row != table.end() && !row->abbreviation.empty();
  });
}

static_assert(table_is_consistent(pre_volta_table));
static_assert(table_is_consistent(volta_plus_table));
static_assert(table_is_consistent(ktt_table));
static_assert(ktt_table.size() == 33 + 1, "KTT records 33 metrics; the extra row is the global size");
static_assert(maps_every_name(volta_plus_table), "every default metric must give a canonical counter");

}  // namespace

std::span<const CounterInfo> canonical_counter_infos() noexcept { return counter_infos; }

std::span<const std::string_view> pc_ops_counters() noexcept { return pc_ops; }

std::span<const CounterMapping> counter_table(CounterFamily family) noexcept {
  switch (family) {
    case CounterFamily::PreVolta: return pre_volta_table;
    case CounterFamily::VoltaPlus: return volta_plus_table;
    case CounterFamily::Ktt: return ktt_table;
  }
  return {};
}

std::span<const std::string_view> default_profiling_metrics() noexcept { return default_metrics; }

std::vector<std::string> select_profiling_metrics(std::string_view selection) {
  std::vector<std::string> metrics;
  auto add = [&](std::string_view name) {
    if (name != abbr::THREADS && std::ranges::find(metrics, name) == metrics.end()) metrics.emplace_back(name);
  };
  if (selection == "default") {
    for (std::string_view name : default_metrics) add(name);
  } else if (selection == "all") {
    for (std::string_view name : default_metrics) add(name);
    for (const CounterMapping& row : volta_plus_table) add(row.hardware_name);
    for (const CounterMapping& row : ktt_table) add(row.hardware_name);
  } else {
    for (std::size_t start = 0; start <= selection.size();) {
      std::size_t comma = std::min(selection.find(',', start), selection.size());
      std::string_view name = selection.substr(start, comma - start);
      if (name.empty()) {
        throw CounterError(fmt::format("counter selection '{}': expected default, all or METRIC,METRIC,... "
                                       "without empty names",
                                       selection));
      }
      add(name);
      start = comma + 1;
    }
  }
  return metrics;
}

}  // namespace steer
