// Results -> Steer JSON: every field, so that import_recording gives back equal Results.
// One result per line: large exports stay readable with line tools and diff well.
#include <ostream>

#include "steer/recording.hpp"
#include "steer/store.hpp"
#include "recording/formats.hpp"

namespace steer {

void export_steer_json(std::ostream& out, const TuningKey& tuning, std::span<const Result> results) {
  using store_detail::Json;
  Json header{{"format", store_detail::kSteerFormatName},
              {"version", store_detail::kSteerFormatVersion},
              {"tuning", store_detail::tuning_to_json(tuning)}};
  std::string text = header.dump();
  text.pop_back();  // reopen the object to append "results"
  out << text << ",\"results\":[";
  for (std::size_t i = 0; i < results.size(); ++i) {
    out << (i == 0 ? "\n" : ",\n") << store_detail::result_to_json(results[i]).dump();
  }
  out << "\n]}\n";
}

}  // namespace steer
