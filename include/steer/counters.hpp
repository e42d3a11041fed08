#pragma once
// Performance counters under canonical abbreviations (method.md §2, Table 1 of the paper).
//
// Profilers name the same quantity differently on each GPU generation (nvprof before
// Volta, CUPTI / Nsight Compute from Volta on, and KTT records its own 33-counter
// selection). Everything above this layer — the expert system, the models, the scoring —
// speaks only the abbreviations below (DRAM_U, INST_F32, ...), with each value put on
// one convention whatever the source:
//   - DRAM_U, L2_U, TEX_U, SHR_U: utilisation on a 0..10 scale;
//   - SM_E, OCC, INST_ISSUE_U, WARP_E, WARP_NP_E: percentages (0..100);
//   - the other counters: operation counts, in the source's own unit (sectors,
//     transactions, thread instructions), so compare them only within one family.
// The translation is data: one table per counter family, {hardware name, abbreviation,
// transform} per row (see counter_table()).
//
//   auto family = steer::detect_counter_family(result.counters).value();
//   steer::CanonicalCounters canonical = steer::canonical_counters(result.counters, family);
//   double dram = canonical.values.at(std::string(steer::abbr::DRAM_U));  // 0..10
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "steer/error.hpp"

namespace steer {

// Counter name -> value. The same type as Result::counters, so canonical values can be
// stored in a Result as they are.
using CounterValues = std::map<std::string, double>;

// Counters that cannot be interpreted: a counter the analysis needs is missing, or the
// device facts are unknown (an unlisted compute capability) or invalid.
class CounterError : public Error {
 public:
  using Error::Error;
};

// ---- Canonical abbreviations ----------------------------------------------------------

namespace abbr {
inline constexpr std::string_view DRAM_U = "DRAM_U";              // DRAM utilisation, 0..10
inline constexpr std::string_view DRAM_RT = "DRAM_RT";            // DRAM reads
inline constexpr std::string_view DRAM_WT = "DRAM_WT";            // DRAM writes
inline constexpr std::string_view L2_U = "L2_U";                  // L2 utilisation, 0..10
inline constexpr std::string_view L2_RT = "L2_RT";                // L2 reads
inline constexpr std::string_view L2_WT = "L2_WT";                // L2 writes
inline constexpr std::string_view TEX_U = "TEX_U";                // texture / L1 global-load utilisation, 0..10
inline constexpr std::string_view TEX_RWT = "TEX_RWT";            // texture / L1 global-load requests
inline constexpr std::string_view LOC_O = "LOC_O";                // local-memory (spill) traffic; see counters.md
inline constexpr std::string_view SHR_U = "SHR_U";                // shared-memory utilisation, 0..10
inline constexpr std::string_view SHR_LT = "SHR_LT";              // shared-memory loads
inline constexpr std::string_view SHR_WT = "SHR_WT";              // shared-memory stores
inline constexpr std::string_view SM_E = "SM_E";                  // SM efficiency (cycles active), %
inline constexpr std::string_view OCC = "OCC";                    // achieved occupancy, %
inline constexpr std::string_view INST_F32 = "INST_F32";          // thread-level instructions by type
inline constexpr std::string_view INST_F64 = "INST_F64";
inline constexpr std::string_view INST_INT = "INST_INT";
inline constexpr std::string_view INST_MISC = "INST_MISC";
inline constexpr std::string_view INST_LDST = "INST_LDST";
inline constexpr std::string_view INST_CONT = "INST_CONT";
inline constexpr std::string_view INST_BCONV = "INST_BCONV";
inline constexpr std::string_view INST_EXE = "INST_EXE";          // warp-level instructions executed
inline constexpr std::string_view INST_ISSUE_U = "INST_ISSUE_U";  // issue-slot utilisation, %
inline constexpr std::string_view WARP_E = "WARP_E";              // warp execution efficiency, %
inline constexpr std::string_view WARP_NP_E = "WARP_NP_E";        // non-predicated warp execution efficiency, %
inline constexpr std::string_view THREADS = "threads";            // launched threads (global size), not a hardware counter
}  // namespace abbr

// PC_stress: how loaded a unit is. PC_ops: how much work a unit did — what the models
// predict and the reaction asks to change. (INST_ISSUE_U is ops, as in the paper: it
// stands for the issue cycles a configuration leaves unused.)
enum class CounterClass { Stress, Ops };

struct CounterInfo {
  std::string_view abbreviation;
  CounterClass counter_class;
  std::string_view meaning;
};

// All canonical counters, in the order of method.md §2.
std::span<const CounterInfo> canonical_counter_infos() noexcept;
// nullptr when `abbreviation` is not canonical.
const CounterInfo* find_counter_info(std::string_view abbreviation) noexcept;
// The PC_ops abbreviations, in the order of method.md §2.
std::span<const std::string_view> pc_ops_counters() noexcept;

// ---- Counter families and their tables ------------------------------------------------

enum class CounterFamily {
  PreVolta,   // legacy nvprof / CUPTI event-metric names (compute capability < 7.0)
  VoltaPlus,  // CUPTI profiler / Nsight Compute names (7.0 and newer), incl. renamed metrics
  Ktt,        // the 33 Nsight Compute metrics KTT 2.x records on Volta and newer
};
const char* to_string(CounterFamily family) noexcept;  // "pre-volta", "volta+", "ktt"

// Whether the family's counters follow the Volta-and-newer conventions (two issue paths,
// local traffic in sectors) that the expert system distinguishes.
constexpr bool is_volta_or_newer(CounterFamily family) noexcept {
  return family != CounterFamily::PreVolta;
}

// How a hardware value becomes the canonical value.
enum class Transform {
  Identity,            // already on the canonical scale
  PercentToTenths,     // percentage of peak -> utilisation 0..10 (pct / 10)
  FractionToPercent,   // 0..1 -> percentage (x 100)
  WarpRatioToPercent,  // threads per warp instruction (0..32) -> percentage (x 100 / 32)
  Summand,             // added to the other Summand rows of the same abbreviation
  KeepRaw,             // no canonical counter; kept under its hardware name
};

// One row of a family table. Rows with the same abbreviation are alternatives (the first
// one present wins: a metric and its renamed successor) unless they are Summands.
struct CounterMapping {
  std::string_view hardware_name;
  std::string_view abbreviation;  // empty for KeepRaw rows
  Transform transform;
};

std::span<const CounterMapping> counter_table(CounterFamily family) noexcept;

struct ComputeCapability {
  int major = 0;
  int minor = 0;
  friend constexpr auto operator<=>(const ComputeCapability&, const ComputeCapability&) = default;
};

// The family a device's own profiler (CUPTI) reports for it: PreVolta below 7.0.
CounterFamily counter_family_for(ComputeCapability capability) noexcept;

// The family whose table names the most of `raw`'s counters ("threads" does not count);
// ties go to VoltaPlus, then Ktt (both map their common names identically). nullopt when
// no table knows any of the names.
std::optional<CounterFamily> detect_counter_family(const CounterValues& raw);

// Whether `raw` holds hardware counters: names a family table knows, or canonical
// abbreviations. "threads" alone is not a measurement, nor are the other per-configuration
// values the importers keep (a Kernel Tuner cache's extra columns, for example).
bool has_hardware_counters(const CounterValues& raw);

struct CanonicalCounters {
  // Abbreviation -> canonical value, plus every raw counter the table does not translate,
  // under its own name (a value computed from the table wins over a raw counter that
  // happens to carry the same name). Canonicalising this map again changes nothing.
  CounterValues values;
  // Canonical abbreviations (method.md §2 order) with no value in `values`.
  std::vector<std::string_view> missing;
};

CanonicalCounters canonical_counters(const CounterValues& raw, CounterFamily family);

// The metrics to collect on a Volta-or-newer GPU: the 24 hardware counters of
// method.md §2 and achieved occupancy (= reference/metrics.txt; 5 replay passes on H200).
std::span<const std::string_view> default_profiling_metrics() noexcept;

// What `steer tune/profile --counters SELECTION` collects: "default" (the set above),
// "all" (every Volta-and-newer metric the tables know: the default set, the local-memory
// loads, the renamed successors and KTT's extras) or "METRIC,METRIC,...". Throws
// CounterError for an empty selection or list item.
std::vector<std::string> select_profiling_metrics(std::string_view selection);

}  // namespace steer
