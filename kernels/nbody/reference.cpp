// CPU reference of the nbody benchmark: one all-pairs gravitational step in double precision,
//   a_i = G · Σ_j m_j (p_j - p_i) / (|p_j - p_i|² + ε²)^{3/2},
//   v_i' = v_i + dt · a_i,   p_i' = p_i + dt · v_i',
// over the first BODIES bodies of the float4 buffer 'bodies' (x, y, z, m) and the float4
// velocities 'vel'. Outputs new_pos = (p', m) and new_vel = (v', 0), as float4. The kernels
// read the same bodies from either layout (the data files hold both; the test checks they
// agree). Bodies are split over the hardware threads (the H200 size has 1.7·10¹⁰ pairs).
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

// The kernels take the others in chunks of up to 512 bodies, up to 8 own bodies per thread,
// without bounds checks.
constexpr std::int64_t kMultiple = 4096;

void nbody_reference(const steer::ReferenceInput& input, steer::ReferenceOutputs& outputs) {
  const std::int64_t n = input.variable("BODIES");
  if (n <= 0 || n % kMultiple != 0)
    throw steer::Error(fmt::format("nbody: BODIES ({}) must be a positive multiple of {}", n, kMultiple));
  const auto count = static_cast<std::size_t>(n);
  const std::vector<float> bodies = input.buffer<float>("bodies", 4 * count);
  const std::vector<float> velocities = input.buffer<float>("vel", 4 * count);
  const double dt = input.scalar<float>("dt");
  const double softening2 = input.scalar<float>("softening2");
  const double g = input.scalar<float>("G");
  if (outputs.size() != 2 || outputs[0].size() != 4 * count * sizeof(float) ||
      outputs[1].size() != 4 * count * sizeof(float))
    throw steer::Error(fmt::format("nbody reference: expected two float4 outputs of BODIES = {} elements", n));

  // Structure of arrays in double, for a vectorisable inner loop.
  std::vector<double> x(count), y(count), z(count), m(count);
  for (std::size_t i = 0; i < count; ++i) {
    x[i] = bodies[4 * i], y[i] = bodies[4 * i + 1], z[i] = bodies[4 * i + 2], m[i] = bodies[4 * i + 3];
  }

  auto step = [&](std::size_t first, std::size_t last) {
    std::vector<float> pos_out(4 * (last - first)), vel_out(4 * (last - first));
    for (std::size_t i = first; i < last; ++i) {
      double ax = 0, ay = 0, az = 0;
      const double xi = x[i], yi = y[i], zi = z[i];
      for (std::size_t j = 0; j < count; ++j) {
        const double dx = x[j] - xi, dy = y[j] - yi, dz = z[j] - zi;
        const double r2 = dx * dx + dy * dy + dz * dz + softening2;
        const double inv_r = 1.0 / std::sqrt(r2);
        const double s = m[j] * inv_r * inv_r * inv_r;
        ax += s * dx, ay += s * dy, az += s * dz;
      }
      const double vx = velocities[4 * i] + dt * g * ax;
      const double vy = velocities[4 * i + 1] + dt * g * ay;
      const double vz = velocities[4 * i + 2] + dt * g * az;
      float* p = &pos_out[4 * (i - first)];
      float* v = &vel_out[4 * (i - first)];
      p[0] = static_cast<float>(xi + dt * vx), p[1] = static_cast<float>(yi + dt * vy);
      p[2] = static_cast<float>(zi + dt * vz), p[3] = bodies[4 * i + 3];
      v[0] = static_cast<float>(vx), v[1] = static_cast<float>(vy), v[2] = static_cast<float>(vz), v[3] = 0.0f;
    }
    std::memcpy(outputs[0].data() + 4 * first * sizeof(float), pos_out.data(), pos_out.size() * sizeof(float));
    std::memcpy(outputs[1].data() + 4 * first * sizeof(float), vel_out.data(), vel_out.size() * sizeof(float));
  };
  const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, count);
  std::vector<std::jthread> workers;
  for (std::size_t t = 0; t < threads; ++t) workers.emplace_back(step, count * t / threads, count * (t + 1) / threads);
}  // the workers join here

}  // namespace

STEER_REGISTER_REFERENCE("nbody", nbody_reference);
