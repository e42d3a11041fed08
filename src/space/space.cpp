// Queries on a built Space: index <-> configuration, neighbourhoods, sampling, keys.
// The storage and the ConfigIndex order are described in space_impl.hpp.
#include <fmt/core.h>

#include <algorithm>
#include <stdexcept>
#include <unordered_set>

#include "space/space_impl.hpp"
#include "steer/error.hpp"

namespace steer {
namespace {

// Binary search in rows [low, high), which share their columns before `from`, for the
// row whose column c holds key(c) for every c >= from. Rows are sorted lexicographically,
// so comparing stops at the first differing column.
template <typename Cell, typename Key>
std::optional<std::uint64_t> find_row(std::span<const Cell> cells, std::size_t width, std::uint64_t low,
                                      std::uint64_t high, std::size_t from, Key key) {
  while (low < high) {
    const std::uint64_t middle = low + (high - low) / 2;
    const Cell* row = cells.data() + middle * width;
    std::size_t column = from;
    while (column < width && row[column] == key(column)) ++column;
    if (column == width) return middle;
    if (row[column] < key(column)) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return std::nullopt;
}

// A valid row of one group near the row of a configuration, and how many of the group's
// parameters it changes.
struct RowChange {
  std::uint64_t row;
  int changed;
};

// The valid rows of one group within a neighbourhood of a row. Rows that share
// their first columns are contiguous, so the rows form a trie: the search descends it
// column by column, keeping or changing each column's value while the distance allows,
// and a prefix that no valid row has is cut off at once. Once no change is left to spend,
// one binary search over the remaining columns finds the row, if it is valid.
template <typename Cell>
class RowNeighbours {
 public:
  // `row` holds the value indices of the starting row, one per column; it is changed during
  // the search and restored at its end.
  RowNeighbours(std::span<const Cell> cells, const Group& group, const std::vector<Parameter>& parameters,
                Neighbourhood::Kind kind, std::span<std::uint32_t> row, std::vector<RowChange>& found)
      : cells_(cells), group_(group), parameters_(parameters), kind_(kind), row_(row), found_(found) {}

  // Rows [low, high) hold row_'s values in the columns before `column`.
  void descend(std::size_t column, std::uint64_t low, std::uint64_t high, int budget, int changed) {
    if (low == high) return;
    if (column == group_.width() || budget == 0) {
      if (changed == 0) return;  // the configuration itself
      const auto found = find_row(cells_, group_.width(), low, high, column, [&](std::size_t c) { return row_[c]; });
      if (found) found_.push_back({*found, changed});
      return;
    }
    const std::uint32_t original = row_[column];
    descend(column + 1, first_at_least(column, original, low, high), first_at_least(column, original + 1, low, high),
            budget, changed);
    auto change_to = [&](std::uint32_t value) {
      row_[column] = value;
      if (budget == 1) {  // nothing left to change: search the rest of the row directly
        descend(column, low, high, 0, changed + 1);
      } else {
        descend(column + 1, first_at_least(column, value, low, high), first_at_least(column, value + 1, low, high),
                budget - 1, changed + 1);
      }
    };
    const auto count = static_cast<std::uint32_t>(parameters_[group_.parameters[column]].values.size());
    if (kind_ == Neighbourhood::Kind::Adjacent) {
      if (original > 0) change_to(original - 1);
      if (original + 1 < count) change_to(original + 1);
    } else {
      for (std::uint32_t value = 0; value < count; ++value) {
        if (value != original) change_to(value);
      }
    }
    row_[column] = original;
  }

 private:
  // First row in [low, high) whose `column` holds at least `value`; the rows there are
  // sorted by that column, as they share the columns before it.
  std::uint64_t first_at_least(std::size_t column, std::uint32_t value, std::uint64_t low, std::uint64_t high) const {
    const std::size_t width = group_.width();
    while (low < high) {
      const std::uint64_t middle = low + (high - low) / 2;
      if (cells_[middle * width + column] < value) {
        low = middle + 1;
      } else {
        high = middle;
      }
    }
    return low;
  }

  std::span<const Cell> cells_;
  const Group& group_;
  const std::vector<Parameter>& parameters_;
  Neighbourhood::Kind kind_;
  std::span<std::uint32_t> row_;
  std::vector<RowChange>& found_;
};

// A draw in [0, bound) from the 64-bit generator, without modulo bias (Lemire's
// multiply-and-reject). Written out rather than std::uniform_int_distribution, whose
// algorithm each standard library chooses, so that a seed gives the same sample everywhere.
std::uint64_t draw_below(std::mt19937_64& rng, std::uint64_t bound) {
  __extension__ using Wide = unsigned __int128;
  Wide product = static_cast<Wide>(rng()) * bound;
  if (static_cast<std::uint64_t>(product) < bound) {
    const std::uint64_t threshold = (0 - bound) % bound;
    while (static_cast<std::uint64_t>(product) < threshold) product = static_cast<Wide>(rng()) * bound;
  }
  return static_cast<std::uint64_t>(product >> 64);
}

// Fisher-Yates over the first `count` positions, with the portable draw above.
void shuffle_prefix(std::vector<ConfigIndex>& items, std::size_t count, std::mt19937_64& rng) {
  for (std::size_t i = 0; i < count && i + 1 < items.size(); ++i) {
    std::swap(items[i], items[i + draw_below(rng, items.size() - i)]);
  }
}

}  // namespace

Space::Space(Space&&) noexcept = default;
Space& Space::operator=(Space&&) noexcept = default;
Space::~Space() = default;

void Space::Impl::check(ConfigIndex index) const {
  if (index >= size) {
    throw std::out_of_range(fmt::format("configuration index {} is outside the space of {}", index, size));
  }
}

std::uint64_t Space::size() const noexcept { return impl_->size; }
const std::vector<Parameter>& Space::parameters() const noexcept { return impl_->parameters; }
const BuildStats& Space::stats() const noexcept { return impl_->stats; }

std::optional<std::size_t> Space::find_parameter(std::string_view name) const {
  const auto& parameters = impl_->parameters;
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    if (parameters[i].name == name) return i;
  }
  return std::nullopt;
}

void Space::value_indices(ConfigIndex index, std::span<std::uint32_t> out) const {
  impl_->check(index);
  if (out.size() != impl_->parameters.size()) {
    throw std::invalid_argument(
        fmt::format("{} value indices asked of a space of {} parameters", out.size(), impl_->parameters.size()));
  }
  for (auto group = impl_->groups.rbegin(); group != impl_->groups.rend(); ++group) {
    const std::uint64_t row = index % group->rows;
    index /= group->rows;
    visit_cells(*group, [&](auto cells) {
      const std::size_t width = group->width();
      for (std::size_t column = 0; column < width; ++column) {
        out[group->parameters[column]] = cells[row * width + column];
      }
    });
  }
}

ValueIndices Space::value_indices(ConfigIndex index) const {
  ValueIndices out(impl_->parameters.size());
  value_indices(index, out);
  return out;
}

const Value& Space::value(ConfigIndex index, std::size_t parameter) const {
  impl_->check(index);
  const Group& group = impl_->groups[impl_->group_of.at(parameter)];
  const std::uint64_t row = index / group.stride % group.rows;
  const std::size_t cell = row * group.width() + impl_->column_of[parameter];
  const std::uint32_t value_index = visit_cells(group, [&](auto cells) -> std::uint32_t { return cells[cell]; });
  return impl_->parameters[parameter].values[value_index];
}

std::vector<Value> Space::values(ConfigIndex index) const {
  const ValueIndices indices = value_indices(index);
  std::vector<Value> out;
  out.reserve(indices.size());
  for (std::size_t p = 0; p < indices.size(); ++p) out.push_back(impl_->parameters[p].values[indices[p]]);
  return out;
}

std::optional<ConfigIndex> Space::index_of(std::span<const std::uint32_t> value_indices) const {
  if (value_indices.size() != impl_->parameters.size()) {
    throw std::invalid_argument(fmt::format("{} value indices given to a space of {} parameters", value_indices.size(),
                                            impl_->parameters.size()));
  }
  ConfigIndex index = 0;
  for (const Group& group : impl_->groups) {
    const std::optional<std::uint64_t> row = visit_cells(group, [&](auto cells) {
      return find_row(cells, group.width(), 0, group.rows, 0,
                      [&](std::size_t column) { return value_indices[group.parameters[column]]; });
    });
    if (!row) return std::nullopt;
    index += *row * group.stride;
  }
  return index;
}

std::optional<ConfigIndex> Space::index_of(std::span<const std::pair<std::string, Value>> named) const {
  const auto& parameters = impl_->parameters;
  constexpr std::uint32_t kUnset = UINT32_MAX;
  ValueIndices indices(parameters.size(), kUnset);
  for (const auto& [name, value] : named) {
    const std::optional<std::size_t> p = find_parameter(name);
    if (!p) throw SpaceError(fmt::format("the space has no parameter '{}'", name));
    const auto& values = parameters[*p].values;
    auto match = std::find(values.begin(), values.end(), value);  // numbers match across types: 2 == 2.0
    if (match == values.end()) return std::nullopt;
    indices[*p] = static_cast<std::uint32_t>(match - values.begin());
  }
  for (std::size_t p = 0; p < parameters.size(); ++p) {
    if (indices[p] == kUnset) throw SpaceError(fmt::format("no value given for parameter '{}'", parameters[p].name));
  }
  return index_of(indices);
}

// Neighbours are found group by group: a change inside one group leaves the other groups'
// rows valid, so each group lists its own valid changed rows (with how many parameters
// changed), and the neighbours are the combinations of those lists within the distance.
std::vector<ConfigIndex> Space::neighbours(ConfigIndex index, Neighbourhood hood) const {
  impl_->check(index);
  const auto& groups = impl_->groups;
  const int distance = std::max(hood.distance, 0);
  std::vector<std::vector<RowChange>> changes(groups.size());
  std::vector<std::uint64_t> rows(groups.size());
  std::vector<std::uint32_t> row_buffer(impl_->parameters.size());
  ConfigIndex rest = index;
  for (std::size_t g = groups.size(); g-- > 0;) {
    const Group& group = groups[g];
    rows[g] = rest % group.rows;
    rest /= group.rows;
    visit_cells(group, [&](auto cells) {
      const std::span row(row_buffer.data(), group.width());
      std::copy_n(cells.begin() + static_cast<std::ptrdiff_t>(rows[g] * group.width()), group.width(), row.begin());
      RowNeighbours(cells, group, impl_->parameters, hood.kind, row, changes[g]).descend(0, 0, group.rows, distance, 0);
    });
  }

  // One entry of each group's list, or no change, within the distance. Index arithmetic is
  // modulo 2^64, and every combination lands inside the space.
  std::vector<ConfigIndex> out;
  auto combine = [&](auto& self, std::size_t g, int budget, ConfigIndex at) -> void {
    if (budget == 0 || g == groups.size()) {
      if (at != index) out.push_back(at);
      return;
    }
    self(self, g + 1, budget, at);
    for (const RowChange& change : changes[g]) {
      if (change.changed <= budget) {
        self(self, g + 1, budget - change.changed, at + (change.row - rows[g]) * groups[g].stride);
      }
    }
  };
  combine(combine, 0, distance, index);
  std::sort(out.begin(), out.end());
  return out;
}

ConfigIndex Space::sample(std::mt19937_64& rng) const { return draw_below(rng, impl_->size); }

// Without replacement, in random order. When most of the space is wanted, a partial
// shuffle of all indices; otherwise Floyd's algorithm, which touches only `count` draws,
// followed by a shuffle (Floyd's set comes out in a biased order).
std::vector<ConfigIndex> Space::sample(std::mt19937_64& rng, std::uint64_t count) const {
  const std::uint64_t size = impl_->size;
  count = std::min(count, size);
  std::vector<ConfigIndex> out;
  if (count > size / 4) {
    out.resize(size);
    for (ConfigIndex i = 0; i < size; ++i) out[i] = i;
    shuffle_prefix(out, count, rng);
    out.resize(count);
    return out;
  }
  std::unordered_set<ConfigIndex> chosen;
  chosen.reserve(count);
  out.reserve(count);
  for (std::uint64_t j = size - count; j < size; ++j) {
    ConfigIndex pick = draw_below(rng, j + 1);
    if (!chosen.insert(pick).second) {
      pick = j;  // j cannot have been chosen yet: earlier draws were all below j
      chosen.insert(j);
    }
    out.push_back(pick);
  }
  shuffle_prefix(out, out.size(), rng);
  return out;
}

std::string Space::key(ConfigIndex index) const {
  const ValueIndices indices = value_indices(index);
  std::string out;
  for (std::size_t p = 0; p < indices.size(); ++p) {
    if (p > 0) out += ',';
    out += impl_->parameters[p].name;
    out += '=';
    out += impl_->parameters[p].values[indices[p]].to_string();
  }
  return out;
}

ConfigIndex Space::index_of_key(std::string_view text) const {
  const auto& parameters = impl_->parameters;
  std::vector<std::uint32_t> indices(parameters.size(), UINT32_MAX);
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t comma = std::min(text.find(',', start), text.size());
    std::string_view item = text.substr(start, comma - start);
    start = comma + 1;
    auto eq = item.find('=');
    if (eq == std::string_view::npos) throw Error(fmt::format("'{}' is not NAME=VALUE", item));
    std::string name(item.substr(0, eq)), value(item.substr(eq + 1));
    auto p = find_parameter(name);
    if (!p) throw Error(fmt::format("the space has no parameter '{}'", name));
    const auto& values = parameters[*p].values;
    std::optional<std::uint32_t> found;
    for (std::size_t v = 0; v < values.size() && !found; ++v) {
      if (values[v].to_string() == value) {
        found = static_cast<std::uint32_t>(v);
      } else if (values[v].is_numeric()) {
        try {
          std::size_t used = 0;
          double number = std::stod(value, &used);
          if (used == value.size() && values[v].as_double() == number) found = static_cast<std::uint32_t>(v);
        } catch (const std::exception&) {
        }
      }
    }
    if (!found) {
      std::string allowed;
      for (const Value& v : values) allowed += (allowed.empty() ? "" : ", ") + v.to_string();
      throw Error(fmt::format("{}={} is not one of the parameter's values ({})", name, value, allowed));
    }
    indices[*p] = *found;
  }
  std::string missing;
  for (std::size_t p = 0; p < parameters.size(); ++p) {
    if (indices[p] == UINT32_MAX) missing += (missing.empty() ? "" : ", ") + parameters[p].name;
  }
  if (!missing.empty()) throw Error(fmt::format("no value given for {}", missing));
  auto index = index_of(indices);
  if (!index) throw Error(fmt::format("{} is not a valid configuration (it breaks a constraint)", text));
  return *index;
}

}  // namespace steer
