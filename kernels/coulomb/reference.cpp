// CPU reference of the coulomb benchmark: the potential V(p) = Σ_a w_a / |p - r_a| at every
// point p = spacing·(x, y, z) of a GRID_X × GRID_Y × GRID_Z grid, over the first ATOMS atoms
// of the float4 buffer 'atoms' (x, y, z, charge), in double precision. The kernels read the
// same atoms from either layout (the data files hold both; the test checks they agree).
// Rows of the grid are split over the hardware threads (the H200 size has 1.7·10¹⁰ pairs).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "steer/reference.hpp"

namespace {

struct Atom {
  double x, y, z, w;
};

void coulomb_reference(const steer::ReferenceInput& input, steer::ReferenceOutputs& outputs) {
  const std::int64_t gx = input.variable("GRID_X"), gy = input.variable("GRID_Y"), gz = input.variable("GRID_Z");
  const std::int64_t count = input.variable("ATOMS");
  const steer::HostArgument& atoms_argument = input.argument("atoms");
  // The spacing as the kernel gets it (a float), not the size variable (maybe not a float).
  const double spacing = input.scalar<float>("spacing");
  const auto points = static_cast<std::size_t>(gx * gy * gz);
  if (atoms_argument.type != steer::ElementType::F32 ||
      atoms_argument.data.size() < static_cast<std::size_t>(count) * 4 * sizeof(float))
    throw steer::Error(fmt::format("coulomb reference: 'atoms' must hold at least ATOMS = {} float4", count));
  if (outputs.size() != 1 || outputs[0].size() != points * sizeof(float))
    throw steer::Error(fmt::format("coulomb reference: expected one float output of GRID_X·GRID_Y·GRID_Z = {} points",
                                   points));

  std::vector<Atom> atoms(static_cast<std::size_t>(count));
  {
    std::vector<float> raw(atoms.size() * 4);
    std::memcpy(raw.data(), atoms_argument.data.data(), raw.size() * sizeof(float));
    for (std::size_t a = 0; a < atoms.size(); ++a) atoms[a] = {raw[4 * a], raw[4 * a + 1], raw[4 * a + 2], raw[4 * a + 3]};
  }

  // One grid row (y, z) at a time: dy² + dz² per atom, then a loop over x.
  auto rows = [&](std::int64_t first_row, std::int64_t last_row) {
    std::vector<double> px(static_cast<std::size_t>(gx)), row(static_cast<std::size_t>(gx));
    std::vector<float> row_out(static_cast<std::size_t>(gx));
    for (std::int64_t x = 0; x < gx; ++x) px[static_cast<std::size_t>(x)] = spacing * static_cast<double>(x);
    for (std::int64_t r = first_row; r < last_row; ++r) {
      const double py = spacing * static_cast<double>(r % gy), pz = spacing * static_cast<double>(r / gy);
      std::fill(row.begin(), row.end(), 0.0);
      for (const Atom& atom : atoms) {
        const double dy = py - atom.y, dz = pz - atom.z, dyz2 = dy * dy + dz * dz;
        for (std::size_t x = 0; x < row.size(); ++x) {
          const double dx = px[x] - atom.x;
          row[x] += atom.w / std::sqrt(dx * dx + dyz2);
        }
      }
      std::transform(row.begin(), row.end(), row_out.begin(), [](double v) { return static_cast<float>(v); });
      std::memcpy(outputs[0].data() + static_cast<std::size_t>(r * gx) * sizeof(float), row_out.data(),
                  row_out.size() * sizeof(float));
    }
  };
  const std::int64_t total_rows = gy * gz;
  const std::int64_t threads = std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, total_rows);
  std::vector<std::jthread> workers;
  for (std::int64_t t = 0; t < threads; ++t)
    workers.emplace_back(rows, total_rows * t / threads, total_rows * (t + 1) / threads);
}  // the workers join here

}  // namespace

STEER_REGISTER_REFERENCE("coulomb", coulomb_reference);
