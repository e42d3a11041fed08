// The nbody benchmark: its data files, its CPU reference, and its OpenCL kernel tuned on
// the OpenCL device (PoCL in CI) at the 'small' size, every configuration validated.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
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

HostArgument float_argument(const std::string& name, const std::vector<float>& values, bool is_buffer = true) {
  HostArgument argument{.name = name, .is_buffer = is_buffer, .type = ElementType::F32};
  argument.data.resize(values.size() * sizeof(float));
  std::memcpy(argument.data.data(), values.data(), argument.data.size());
  return argument;
}

std::vector<float> as_floats(const std::vector<std::byte>& bytes) {
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

TEST(NbodyData, BothLayoutsHoldTheSameBodies) {
  const auto folder = std::filesystem::path(STEER_SOURCE_DIR) / "kernels" / "nbody" / "data";
  const std::vector<float> aos = read_floats(folder / "bodies.f32");
  ASSERT_EQ(aos.size(), 4u * 131072u);
  const char* names[] = {"body_x.f32", "body_y.f32", "body_z.f32", "body_m.f32"};
  for (std::size_t component = 0; component < 4; ++component) {
    const std::vector<float> soa = read_floats(folder / names[component]);
    ASSERT_EQ(soa.size(), 131072u) << names[component];
    for (std::size_t b = 0; b < soa.size(); ++b)
      ASSERT_EQ(soa[b], aos[4 * b + component]) << names[component] << ", body " << b;
  }
}

TEST(NbodyReference, StepsTwoBodiesAndRefusesCountsTheKernelsCannotCover) {
  // 4096 bodies, all massless but body 0 (mass 1 at the origin) and body 1 (mass 2 at
  // (1, 0, 0)): with a negligible softening (which keeps a body's own term 0 · finite),
  // body 0 accelerates by G·2 along x, body 1 by -G·1.
  constexpr int n = 4096;
  std::vector<float> bodies(4 * n, 0.0f), velocities(4 * n, 0.0f);
  for (int i = 2; i < n; ++i) bodies[4 * i] = 10.0f + static_cast<float>(i);  // far, massless
  bodies[3] = 1.0f;
  bodies[4] = 1.0f, bodies[7] = 2.0f;
  velocities[1] = 0.5f;  // body 0 moves along y
  const float g = 3.0f, dt = 0.25f;
  const ProblemSize size{.name = "two", .variables = {{"BODIES", n}}};
  const std::vector<HostArgument> arguments{
      float_argument("bodies", bodies), float_argument("vel", velocities), float_argument("dt", {dt}, false),
      float_argument("softening2", {1e-12f}, false), float_argument("G", {g}, false)};
  ReferenceOutputs outputs{std::vector<std::byte>(4 * n * sizeof(float)), std::vector<std::byte>(4 * n * sizeof(float))};
  find_reference("nbody")(ReferenceInput{size, arguments}, outputs);
  const std::vector<float> pos = as_floats(outputs[0]), vel = as_floats(outputs[1]);
  // Body 0: v' = (0, 0.5, 0) + dt·(2g, 0, 0); p' = dt·v'.
  EXPECT_FLOAT_EQ(vel[0], dt * 2 * g);
  EXPECT_FLOAT_EQ(vel[1], 0.5f);
  EXPECT_FLOAT_EQ(vel[2], 0.0f);
  EXPECT_FLOAT_EQ(vel[3], 0.0f);
  EXPECT_FLOAT_EQ(pos[0], dt * dt * 2 * g);
  EXPECT_FLOAT_EQ(pos[1], dt * 0.5f);
  EXPECT_FLOAT_EQ(pos[3], 1.0f);  // the mass, copied
  // Body 1: v' = dt·(-g, 0, 0), p' = (1, 0, 0) + dt·v'.
  EXPECT_FLOAT_EQ(vel[4], -dt * g);
  EXPECT_FLOAT_EQ(pos[4], 1.0f - dt * dt * g);
  EXPECT_FLOAT_EQ(pos[7], 2.0f);

  const ProblemSize ragged{.name = "ragged", .variables = {{"BODIES", 1000}}};
  EXPECT_THROW(find_reference("nbody")(ReferenceInput{ragged, arguments}, outputs), Error);
}

}  // namespace
}  // namespace steer
