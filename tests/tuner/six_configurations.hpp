#pragma once
// The recording the replay tests tune over, and the cost model that charges only what it
// recorded.
#include "steer/recording.hpp"
#include "steer/tuner.hpp"

namespace steer::testing_support {

// The recorded costs alone: the searchers' own measured computation is left out.
inline CostModel exact() {
  CostModel cost;
  cost.charge_searcher = false;
  return cost;
}

// X in {1, ..., 6}: X ms to run and 100 ms to compile each; X=4 failed to compile.
inline Recording six_configurations() {
  ImportedRecording imported;
  imported.device = "Recorded GPU";
  imported.kernel = "six";
  imported.parameters = {{"X", {1, 2, 3, 4, 5, 6}}};
  for (int x = 1; x <= 6; ++x) {
    Result result;
    result.configuration = {{"X", x}};
    result.compile_ms = 100;
    if (x == 4) {
      result.status = Status::CompileError;
      result.message = "error: too many registers";
    } else {
      result.status = Status::Ok;
      result.time = TimingStats::from_samples({static_cast<double>(x)});
    }
    imported.results.push_back(result);
  }
  return Recording::from_import(imported);
}

}  // namespace steer::testing_support
