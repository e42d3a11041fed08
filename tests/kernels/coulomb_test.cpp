// The coulomb benchmark: its data files, its CPU reference, and its OpenCL kernel tuned on
// the OpenCL device (PoCL in CI) at the 'small' size, every configuration validated.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

#include "benchmark_tuning.hpp"
#include "steer/reference.hpp"

namespace steer {
namespace {

std::vector<float> read_floats(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

HostArgument float_buffer(const std::string& name, const std::vector<float>& values) {
  HostArgument argument{.name = name, .type = ElementType::F32};
  argument.data.resize(values.size() * sizeof(float));
  std::memcpy(argument.data.data(), values.data(), argument.data.size());
  return argument;
}

HostArgument float_scalar(const std::string& name, float value) {
  HostArgument argument = float_buffer(name, {value});
  argument.is_buffer = false;
  return argument;
}

TEST(CoulombData, BothLayoutsHoldTheSameAtoms) {
  const auto folder = std::filesystem::path(STEER_SOURCE_DIR) / "kernels" / "coulomb" / "data";
  const std::vector<float> aos = read_floats(folder / "atoms.f32");
  ASSERT_EQ(aos.size(), 4u * 1024u);
  const char* names[] = {"atoms_x.f32", "atoms_y.f32", "atoms_z.f32", "atoms_w.f32"};
  for (std::size_t component = 0; component < 4; ++component) {
    const std::vector<float> soa = read_floats(folder / names[component]);
    ASSERT_EQ(soa.size(), 1024u) << names[component];
    for (std::size_t a = 0; a < soa.size(); ++a)
      ASSERT_EQ(soa[a], aos[4 * a + component]) << names[component] << ", atom " << a;
  }
}

TEST(CoulombReference, SumsChargeOverDistanceAtEveryPoint) {
  // A 3 × 2 × 2 grid with spacing 0.5 and two atoms; point (x, y, z) at 0.5·(x, y, z).
  const std::vector<float> atoms{0.3f, 0.2f, 0.1f, 2.0f, 1.1f, -0.4f, 0.7f, 0.5f};
  const ProblemSize size{.name = "tiny",
                         .variables = {{"GRID_X", 3}, {"GRID_Y", 2}, {"GRID_Z", 2}, {"GRID_SPACING", 0.5}, {"ATOMS", 2}}};
  const std::vector<HostArgument> arguments{float_buffer("atoms", atoms), float_scalar("spacing", 0.5f)};
  ReferenceOutputs outputs{std::vector<std::byte>(12 * sizeof(float))};
  find_reference("coulomb")(ReferenceInput{size, arguments}, outputs);
  std::vector<float> energy(12);
  std::memcpy(energy.data(), outputs[0].data(), outputs[0].size());
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 3; ++x) {
        double expected = 0;
        for (int a = 0; a < 2; ++a) {
          const double dx = 0.5 * x - atoms[4 * a], dy = 0.5 * y - atoms[4 * a + 1], dz = 0.5 * z - atoms[4 * a + 2];
          expected += atoms[4 * a + 3] / std::sqrt(dx * dx + dy * dy + dz * dz);
        }
        EXPECT_FLOAT_EQ(energy[(z * 2 + y) * 3 + x], static_cast<float>(expected)) << x << ", " << y << ", " << z;
      }
}

}  // namespace
}  // namespace steer
