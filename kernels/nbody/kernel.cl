// One time step of an all-pairs gravitational n-body simulation, float.
// Twin of kernel.cu; the two differ only in the API spelling, except for
// USE_CONSTANT_MEMORY (see there).
//
// Body i at position p_i, with mass m_i and velocity v_i, feels the acceleration
//   a_i = G · Σ_j m_j (p_j - p_i) / (|p_j - p_i|² + ε²)^{3/2}     (the j = i term is zero)
// and moves by  v_i' = v_i + dt · a_i,  p_i' = p_i + dt · v_i'.
// Outputs are float4: new_pos = (p', m), new_vel = (v', 0). Velocities are read as float4
// in both layouts: they are read once per body, the positions n times.
//
// A work-item updates OUTER_UNROLL_FACTOR bodies, WORK_GROUP_SIZE_X apart (so that every
// load and store of the work-group's own bodies is coalesced); each body it loads from the
// others' list serves those OUTER_UNROLL_FACTOR bodies. The others are taken in chunks of
// WORK_GROUP_SIZE_X bodies.
//
// Parameters (set with -D):
//   WORK_GROUP_SIZE_X    work-items per work-group, and bodies per chunk of the others.
//   OUTER_UNROLL_FACTOR  bodies per work-item: the reuse of every load of another body.
//   INNER_UNROLL_FACTOR1 unroll factor of the loop over a chunk's bodies (`#pragma unroll`);
//                        0 writes no pragma.
//   INNER_UNROLL_FACTOR2 unroll factor of the loops over the work-item's OUTER_UNROLL_FACTOR
//                        bodies (`#pragma unroll`); 0 writes no pragma. Less than
//                        OUTER_UNROLL_FACTOR indexes the per-body arrays at run time.
//   USE_SOA              0: positions and masses as float4 (x, y, z, m), one 16-byte load per
//                        body; 1: as four arrays body_x, body_y, body_z, body_m.
//   LOCAL_MEM            1: each chunk is first copied to local memory by the work-group (one
//                        body per work-item, coalesced), and read from there; 0: read from
//                        global memory.
//   USE_CONSTANT_MEMORY  1: the body buffers of the layout in use are __constant (they must
//                        fit CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE); 0: __global.
//   VECTOR_TYPE          bodies per load and per vector operation with USE_SOA: x, y, z and m
//                        are read as float, float2 or float4 of consecutive bodies, the pair
//                        terms computed in floatN, and each lane keeps its own partial sums
//                        (added at the end). Needs USE_SOA when above 1.
//
// Launch: global size n / OUTER_UNROLL_FACTOR, work-group WORK_GROUP_SIZE_X. No bounds
// checks: n must be a multiple of WORK_GROUP_SIZE_X · OUTER_UNROLL_FACTOR (4096 covers the
// space) and of VECTOR_TYPE.

#define STEER_PRAGMA(x) _Pragma(#x)
#define STEER_UNROLL(n) STEER_PRAGMA(unroll n)

#if INNER_UNROLL_FACTOR1 > 0
#define UNROLL_CHUNK STEER_UNROLL(INNER_UNROLL_FACTOR1)
#else
#define UNROLL_CHUNK
#endif
#if INNER_UNROLL_FACTOR2 > 0
#define UNROLL_OWN STEER_UNROLL(INNER_UNROLL_FACTOR2)
#else
#define UNROLL_OWN
#endif

#if VECTOR_TYPE == 1
typedef float vector_t;
#elif VECTOR_TYPE == 2
typedef float2 vector_t;
#elif VECTOR_TYPE == 4
typedef float4 vector_t;
#else
#error "VECTOR_TYPE must be 1, 2 or 4"
#endif
#if VECTOR_TYPE > 1 && !USE_SOA
#error "VECTOR_TYPE > 1 needs USE_SOA"
#endif

// Only the layout in use goes to constant memory (devices allow few, small constant buffers).
#if USE_CONSTANT_MEMORY && !USE_SOA
#define AOS_SPACE __constant
#else
#define AOS_SPACE __global const
#endif
#if USE_CONSTANT_MEMORY && USE_SOA
#define SOA_SPACE __constant
#else
#define SOA_SPACE __global const
#endif

#define OUF OUTER_UNROLL_FACTOR
#define WG WORK_GROUP_SIZE_X

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void nbody(__global float4* restrict new_pos, __global float4* restrict new_vel, AOS_SPACE float4* restrict bodies,
           SOA_SPACE float* restrict body_x, SOA_SPACE float* restrict body_y, SOA_SPACE float* restrict body_z,
           SOA_SPACE float* restrict body_m, __global const float4* restrict vel, const int n, const float dt,
           const float softening2, const float G) {
  const int tid = get_local_id(0);
  const int first = get_group_id(0) * (WG * OUF) + tid;  // own bodies: first + k·WG

  float px[OUF], py[OUF], pz[OUF];
  vector_t acc_x[OUF], acc_y[OUF], acc_z[OUF];  // per-lane partial sums of m_j (p_j - p_i) / r³
  UNROLL_OWN
  for (int k = 0; k < OUF; ++k) {
    const int i = first + k * WG;
#if USE_SOA
    px[k] = body_x[i], py[k] = body_y[i], pz[k] = body_z[i];
#else
    const float4 b = bodies[i];
    px[k] = b.x, py[k] = b.y, pz[k] = b.z;
#endif
    acc_x[k] = acc_y[k] = acc_z[k] = (vector_t)(0.0f);
  }

#if LOCAL_MEM
#if USE_SOA
  __local vector_t tile_x[WG / VECTOR_TYPE], tile_y[WG / VECTOR_TYPE], tile_z[WG / VECTOR_TYPE],
      tile_m[WG / VECTOR_TYPE];
#else
  __local float4 tile[WG];
#endif
#endif

  for (int start = 0; start < n; start += WG) {
#if LOCAL_MEM
    barrier(CLK_LOCAL_MEM_FENCE);  // everyone is done with the previous chunk
#if USE_SOA
    ((__local float*)tile_x)[tid] = body_x[start + tid];
    ((__local float*)tile_y)[tid] = body_y[start + tid];
    ((__local float*)tile_z)[tid] = body_z[start + tid];
    ((__local float*)tile_m)[tid] = body_m[start + tid];
#else
    tile[tid] = bodies[start + tid];
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
#endif

    UNROLL_CHUNK
    for (int j = 0; j < WG; j += VECTOR_TYPE) {
      // The VECTOR_TYPE bodies start + j ... start + j + VECTOR_TYPE - 1.
#if USE_SOA
#if LOCAL_MEM
      const vector_t bx = tile_x[j / VECTOR_TYPE], by = tile_y[j / VECTOR_TYPE], bz = tile_z[j / VECTOR_TYPE],
                     bm = tile_m[j / VECTOR_TYPE];
#else
      const int b = (start + j) / VECTOR_TYPE;
      const vector_t bx = ((SOA_SPACE vector_t*)body_x)[b], by = ((SOA_SPACE vector_t*)body_y)[b],
                     bz = ((SOA_SPACE vector_t*)body_z)[b], bm = ((SOA_SPACE vector_t*)body_m)[b];
#endif
#else
#if LOCAL_MEM
      const float4 b = tile[j];
#else
      const float4 b = bodies[start + j];
#endif
      const float bx = b.x, by = b.y, bz = b.z, bm = b.w;
#endif

      UNROLL_OWN
      for (int k = 0; k < OUF; ++k) {
        const vector_t dx = bx - px[k], dy = by - py[k], dz = bz - pz[k];
        const vector_t r2 = fma(dx, dx, fma(dy, dy, fma(dz, dz, (vector_t)(softening2))));
        const vector_t inv_r = rsqrt(r2);
        const vector_t s = bm * inv_r * (inv_r * inv_r);  // m_j / r³
        acc_x[k] = fma(s, dx, acc_x[k]);
        acc_y[k] = fma(s, dy, acc_y[k]);
        acc_z[k] = fma(s, dz, acc_z[k]);
      }
    }
  }

  const float g_dt = G * dt;
  UNROLL_OWN
  for (int k = 0; k < OUF; ++k) {
    const int i = first + k * WG;
    // Lanes summed pairwise: (0 + 1) + (2 + 3).
#if VECTOR_TYPE == 1
    const float ax = acc_x[k], ay = acc_y[k], az = acc_z[k];
#elif VECTOR_TYPE == 2
    const float ax = acc_x[k].s0 + acc_x[k].s1, ay = acc_y[k].s0 + acc_y[k].s1, az = acc_z[k].s0 + acc_z[k].s1;
#else
    const float ax = (acc_x[k].s0 + acc_x[k].s1) + (acc_x[k].s2 + acc_x[k].s3);
    const float ay = (acc_y[k].s0 + acc_y[k].s1) + (acc_y[k].s2 + acc_y[k].s3);
    const float az = (acc_z[k].s0 + acc_z[k].s1) + (acc_z[k].s2 + acc_z[k].s3);
#endif
    const float4 v = vel[i];
    const float vx = fma(g_dt, ax, v.x), vy = fma(g_dt, ay, v.y), vz = fma(g_dt, az, v.z);
#if USE_SOA
    const float m = body_m[i];
#else
    const float m = bodies[i].w;
#endif
    new_vel[i] = (float4)(vx, vy, vz, 0.0f);
    new_pos[i] = (float4)(fma(dt, vx, px[k]), fma(dt, vy, py[k]), fma(dt, vz, pz[k]), m);
  }
}
