#pragma once
// A recording of the same kernel on another GPU or input, as searchers that transfer what it
// measured read it: its configurations ranked by recorded runtime, placed in the tuned space.
// The runtimes come from a recording file (`source=FILE`) or from the recording a counter
// model was trained on, which the model carries (CounterModel::recorded_runtimes).
#include <string>
#include <utility>
#include <vector>

#include "steer/model.hpp"
#include "steer/recording.hpp"
#include "steer/space.hpp"

namespace steer::search {

// What a source measured: its parameters (names, value lists) and the configurations that ran.
struct SourceRuntimes {
  std::vector<Parameter> parameters;
  RecordedRuntimes runtimes;  // rows index parameters' value lists
  std::string origin;         // where it came from, for errors: a file, or a model's recording
};

SourceRuntimes source_runtimes(const Recording& recording);
SourceRuntimes source_runtimes(const CounterModel& model);  // empty runtimes where the model carries none

// The configurations of `tuned` whose counterpart ran in `source`, with its recorded runtime,
// fastest first (ties: lower index). Counterparts match by the values of the parameters both
// spaces have: a parameter only the tuned space has does not matter, and where the source has
// parameters the tuned space lacks, its fastest variant counts. Throws Error, naming the
// source and both parameter lists, when the two share no parameter.
std::vector<std::pair<double, ConfigIndex>> source_order(const Space& tuned, const SourceRuntimes& source);
std::vector<std::pair<double, ConfigIndex>> source_order(const Space& tuned, const Recording& source);

// The share of `tuned`'s configurations whose every value, of each parameter both spaces
// have, occurs among the configurations that ran in `source`: how much of the tuned space
// the source can rank. A source recorded over a narrower space (fewer values of a parameter)
// covers its own slice only; a sparse sample of the same space covers all of it. 1 for an
// empty tuned space.
double source_coverage(const Space& tuned, const SourceRuntimes& source);

}  // namespace steer::search
