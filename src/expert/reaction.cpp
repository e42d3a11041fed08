// The reaction PC', method.md §4 (the paper's Section 3.4.2, eq. 11).
#include <array>
#include <string>

#include "steer/expert.hpp"

namespace steer {
namespace {

struct MemoryReaction {
  std::string_view counter;
  double Bottlenecks::*bottleneck;
};

// A loaded memory unit asks for fewer of the operations that load it.
constexpr std::array memory_reactions{
    MemoryReaction{abbr::DRAM_RT, &Bottlenecks::dram_read},  MemoryReaction{abbr::DRAM_WT, &Bottlenecks::dram_write},
    MemoryReaction{abbr::L2_RT, &Bottlenecks::l2_read},      MemoryReaction{abbr::L2_WT, &Bottlenecks::l2_write},
    MemoryReaction{abbr::SHR_LT, &Bottlenecks::shr_load},    MemoryReaction{abbr::SHR_WT, &Bottlenecks::shr_store},
    MemoryReaction{abbr::TEX_RWT, &Bottlenecks::tex},        MemoryReaction{abbr::LOC_O, &Bottlenecks::local},
};

// -b, written so that an idle unit gives +0 rather than -0 in reports.
double decrease(double bottleneck) { return bottleneck > 0 ? -bottleneck : 0.0; }

}  // namespace

CounterValues required_counter_changes(const Bottlenecks& bottlenecks, const ExpertOptions& options) {
  const double r = options.reaction_threshold();
  CounterValues changes;
  for (const MemoryReaction& memory : memory_reactions) {
    changes[std::string(memory.counter)] = decrease(bottlenecks.*memory.bottleneck);
  }
  // eq. 11: instructions are cheap next to memory, so a type asks to be reduced only
  // once its bottleneck passes r, scaled so that b = 1 asks for -1.
  for (const InstructionBottleneck& type : instruction_bottlenecks()) {
    double b = bottlenecks.*type.bottleneck;
    changes[std::string(type.counter)] = b > r ? -(b - r) / (1.0 - r) : 0.0;
  }
  // Not inverted: unused issue slots, idle SMs and too few threads ask for more.
  changes[std::string(abbr::INST_ISSUE_U)] = bottlenecks.issue;
  changes[std::string(abbr::SM_E)] = bottlenecks.sm;
  changes[std::string(abbr::THREADS)] = bottlenecks.parallelism;
  return changes;
}

}  // namespace steer
