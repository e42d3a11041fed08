#include "search/source_recording.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "steer/error.hpp"

namespace steer::search {

std::vector<std::pair<double, ConfigIndex>> source_order(const Space& tuned, const Recording& source) {
  const Space& recorded = source.space();
  std::vector<std::size_t> tuned_at, source_at;  // the shared parameters' positions
  for (std::size_t p = 0; p < tuned.parameters().size(); ++p) {
    if (auto at = recorded.find_parameter(tuned.parameters()[p].name)) {
      tuned_at.push_back(p);
      source_at.push_back(*at);
    }
  }
  if (tuned_at.empty()) throw Error("source recording: it shares no parameter with the tuned space");
  std::map<std::vector<Value>, double> fastest;  // shared values -> fastest recorded runtime
  std::vector<Value> key(tuned_at.size());
  for (ConfigIndex c = 0; c < recorded.size(); ++c) {
    if (!source.present(c) || source.status(c) != Status::Ok) continue;
    const double runtime = source.runtime_ms(c);
    if (!std::isfinite(runtime)) continue;
    for (std::size_t k = 0; k < source_at.size(); ++k) key[k] = recorded.value(c, source_at[k]);
    auto [it, inserted] = fastest.try_emplace(key, runtime);
    if (!inserted) it->second = std::min(it->second, runtime);
  }
  std::vector<std::pair<double, ConfigIndex>> order;
  for (ConfigIndex c = 0; c < tuned.size(); ++c) {
    for (std::size_t k = 0; k < tuned_at.size(); ++k) key[k] = tuned.value(c, tuned_at[k]);
    if (auto it = fastest.find(key); it != fastest.end()) order.emplace_back(it->second, c);
  }
  std::sort(order.begin(), order.end());
  return order;
}

}  // namespace steer::search
