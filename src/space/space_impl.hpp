#pragma once
// The storage of a built Space, shared by its construction (space_build.cpp) and its
// queries (space.cpp).
//
// Parameters fall into independent groups: the connected components of the graph in
// which a constraint links the parameters it reads (an unconstrained parameter is a
// group of its own). The valid configurations are exactly the cross product of each
// group's valid rows, so only the rows are stored, never the product.
//
// ConfigIndex order (documented at ConfigIndex in steer/space.hpp): a mixed-radix number
// over the groups' row counts, groups ordered by their first parameter, the first group
// the most significant digit (the largest stride); rows in lexicographic order.
#include <cstdint>
#include <span>
#include <variant>
#include <vector>

#include "steer/space.hpp"

namespace steer {

struct Group {
  std::vector<std::uint32_t> parameters;  // definition indices, ascending: the row's columns
  std::uint64_t rows = 0;
  std::uint64_t stride = 1;  // ConfigIndex weight of one row step
  // Row r, column c is cells[r * parameters.size() + c]: the narrowest cell type that holds
  // every value index of the group.
  std::variant<std::vector<std::uint8_t>, std::vector<std::uint16_t>, std::vector<std::uint32_t>> cells;

  std::size_t width() const noexcept { return parameters.size(); }
};

struct Space::Impl {
  std::vector<Parameter> parameters;
  std::vector<Group> groups;             // most significant first
  std::vector<std::uint32_t> group_of;   // per parameter: its group
  std::vector<std::uint32_t> column_of;  // per parameter: its column in that group's rows
  std::uint64_t size = 0;
  BuildStats stats;

  // Bytes held by all of the above: the capacities of its buffers, not their sizes.
  std::size_t storage_bytes() const;
  // Throws std::out_of_range unless index < size.
  void check(ConfigIndex index) const;
};

// Calls f(cells) with the group's cells as a span of their actual type.
template <typename F>
decltype(auto) visit_cells(const Group& group, F&& f) {
  return std::visit([&](const auto& cells) -> decltype(auto) { return f(std::span(cells)); }, group.cells);
}

}  // namespace steer
