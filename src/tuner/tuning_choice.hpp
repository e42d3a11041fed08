#pragma once
// Which tuning of a results store a run continues (TuneOptions::fresh and ::tuning say how
// to choose), and the warnings about the same spec stored under another key.
#include <cstdint>
#include <string>
#include <vector>

#include "steer/store.hpp"
#include "steer/tuner.hpp"

namespace steer::tuner_detail {

struct TuningChoice {
  std::int64_t id = 0;
  bool created = false;
  std::vector<std::string> warnings;
};

// Throws Error when options.tuning names a tuning of another spec, device, backend or size.
TuningChoice choose_tuning(Store& store, const ExecutorInfo& info, const TuningContent& content,
                           const TuneOptions& options);

}  // namespace steer::tuner_detail
