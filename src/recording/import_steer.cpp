// Steer JSON (written by export_steer_json) -> Results, every field as it was stored.
//
//   {"format": "steer-results", "version": 1,
//    "tuning": {spec_name, spec_hash, device, backend, problem_size},
//    "results": [Result as in result_to_json, in sequence order]}
#include <fmt/core.h>

#include "recording/formats.hpp"

namespace steer::store_detail {

ImportedRecording import_steer_json(const Node& root) {
  Node version = root["version"];
  if (version.integer() > kSteerFormatVersion) {
    version.fail(fmt::format("written by a newer Steer (format version {}; this build reads up to {})",
                             version.integer(), kSteerFormatVersion));
  }
  ImportedRecording recording;
  recording.format = RecordingFormat::Steer;
  Node tuning = root["tuning"];
  recording.kernel = tuning["spec_name"].string();
  recording.spec_hash = tuning["spec_hash"].string();
  recording.device = tuning["device"].string();
  recording.backend = tuning["backend"].string();
  recording.problem_size = tuning["problem_size"].string();
  Node results = root["results"];
  recording.results.reserve(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) recording.results.push_back(result_from_json(results[i]));
  recording.parameters = parameters_found(recording.results);
  return recording;
}

}  // namespace steer::store_detail
