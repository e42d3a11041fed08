// One time step of an all-pairs gravitational n-body simulation, float.
// Twin of kernel.cl for NVRTC; the two differ only in the API spelling, except for
// USE_CONSTANT_MEMORY (see there).
//
// Body i at position p_i, with mass m_i and velocity v_i, feels the acceleration
//   a_i = G · Σ_j m_j (p_j - p_i) / (|p_j - p_i|² + ε²)^{3/2}     (the j = i term is zero)
// and moves by  v_i' = v_i + dt · a_i,  p_i' = p_i + dt · v_i'.
// Outputs are float4: new_pos = (p', m), new_vel = (v', 0). Velocities are read as float4
// in both layouts: they are read once per body, the positions n times.
//
// A thread updates OUTER_UNROLL_FACTOR bodies, WORK_GROUP_SIZE_X apart (so that every
// load and store of the block's own bodies is coalesced); each body it loads from the
// others' list serves those OUTER_UNROLL_FACTOR bodies. The others are taken in chunks of
// WORK_GROUP_SIZE_X bodies. A pair costs one rsqrt and 12 FP32 instructions (3 subtractions,
// 3 FMAs for the distance, 3 multiplications, 3 FMAs for the sum; the SASS has exactly
// these): 20 flops by the usual count. On an H200 the 13 instructions a pair bound it at
// 128/13 pairs per clock per SM (one warp instruction per clock per scheduler), 2.6·10¹²
// pairs/s at 1.98 GHz (51 TFLOP/s at 20 flops a pair); the SFU (16 rsqrt/clock/SM) is not
// the limit.
//
// Parameters (set with -D):
//   WORK_GROUP_SIZE_X    threads per block, and bodies per chunk of the others.
//   OUTER_UNROLL_FACTOR  bodies per thread: the reuse of every load of another body.
//   INNER_UNROLL_FACTOR1 unroll factor of the loop over a chunk's bodies (`#pragma unroll`);
//                        0 writes no pragma.
//   INNER_UNROLL_FACTOR2 unroll factor of the loops over the thread's OUTER_UNROLL_FACTOR
//                        bodies (`#pragma unroll`); 0 writes no pragma. Less than
//                        OUTER_UNROLL_FACTOR indexes the per-body arrays at run time, which
//                        puts them in local memory.
//   USE_SOA              0: positions and masses as float4 (x, y, z, m), one 16-byte load per
//                        body; 1: as four arrays body_x, body_y, body_z, body_m.
//   LOCAL_MEM            1: each chunk is first copied to shared memory by the block (one body
//                        per thread, coalesced), and read from there; 0: read from global
//                        memory (every thread of a warp reads the same body: a broadcast).
//   USE_CONSTANT_MEMORY  1: read the bodies through the read-only/constant data path (__ldg,
//                        LDG.CONSTANT). CUDA's __constant__ memory can only be filled through
//                        a module symbol, and Steer hands kernels device pointers, so this is
//                        the nearest CUDA equivalent of kernel.cl's __constant buffers.
//   VECTOR_TYPE          bodies per load with USE_SOA: x, y, z and m are read as float,
//                        float2 or float4 of consecutive bodies, and each of the VECTOR_TYPE
//                        lanes keeps its own partial sums (added at the end). Needs USE_SOA
//                        when above 1.
//
// Launch: grid n / (WORK_GROUP_SIZE_X · OUTER_UNROLL_FACTOR), block WORK_GROUP_SIZE_X. No
// bounds checks: n must be a multiple of WORK_GROUP_SIZE_X · OUTER_UNROLL_FACTOR (4096
// covers the space) and of VECTOR_TYPE.

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

#if VECTOR_TYPE != 1 && VECTOR_TYPE != 2 && VECTOR_TYPE != 4
#error "VECTOR_TYPE must be 1, 2 or 4"
#endif
#if VECTOR_TYPE > 1 && !USE_SOA
#error "VECTOR_TYPE > 1 needs USE_SOA"
#endif

#if USE_CONSTANT_MEMORY
#define BODY_LOAD(pointer) __ldg(pointer)
#else
#define BODY_LOAD(pointer) (*(pointer))
#endif

#define V VECTOR_TYPE
#define OUF OUTER_UNROLL_FACTOR
#define WG WORK_GROUP_SIZE_X

// V consecutive floats from p (aligned: p is a multiple of V floats into its buffer).
__device__ __forceinline__ void load_lanes(const float* p, float (&lane)[V]) {
#if V == 1
  lane[0] = BODY_LOAD(p);
#elif V == 2
  const float2 t = BODY_LOAD(reinterpret_cast<const float2*>(p));
  lane[0] = t.x, lane[1] = t.y;
#else
  const float4 t = BODY_LOAD(reinterpret_cast<const float4*>(p));
  lane[0] = t.x, lane[1] = t.y, lane[2] = t.z, lane[3] = t.w;
#endif
}

// Same, from shared memory (plain loads: no read-only path there).
__device__ __forceinline__ void load_lanes_shared(const float* p, float (&lane)[V]) {
#if V == 1
  lane[0] = *p;
#elif V == 2
  const float2 t = *reinterpret_cast<const float2*>(p);
  lane[0] = t.x, lane[1] = t.y;
#else
  const float4 t = *reinterpret_cast<const float4*>(p);
  lane[0] = t.x, lane[1] = t.y, lane[2] = t.z, lane[3] = t.w;
#endif
}

// rsqrt with flush-to-zero, one MUFU.RSQ: r² + ε² is never denormal (ε > 0).
__device__ __forceinline__ float fast_rsqrt(float x) {
  float r;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

extern "C" __global__ void __launch_bounds__(WG)
nbody(float4* __restrict__ new_pos, float4* __restrict__ new_vel, const float4* bodies, const float* body_x,
      const float* body_y, const float* body_z, const float* body_m, const float4* __restrict__ vel, const int n,
      const float dt, const float softening2, const float G) {
  const int tid = threadIdx.x;
  const int first = blockIdx.x * (WG * OUF) + tid;  // own bodies: first + k·WG

  float px[OUF], py[OUF], pz[OUF];
  float acc_x[OUF][V], acc_y[OUF][V], acc_z[OUF][V];  // per-lane partial sums of m_j (p_j - p_i) / r³
  UNROLL_OWN
  for (int k = 0; k < OUF; ++k) {
    const int i = first + k * WG;
#if USE_SOA
    px[k] = body_x[i], py[k] = body_y[i], pz[k] = body_z[i];
#else
    const float4 b = bodies[i];
    px[k] = b.x, py[k] = b.y, pz[k] = b.z;
#endif
#pragma unroll
    for (int l = 0; l < V; ++l) acc_x[k][l] = acc_y[k][l] = acc_z[k][l] = 0.0f;
  }

#if LOCAL_MEM
#if USE_SOA
  __shared__ __align__(16) float tile_x[WG];
  __shared__ __align__(16) float tile_y[WG];
  __shared__ __align__(16) float tile_z[WG];
  __shared__ __align__(16) float tile_m[WG];
#else
  __shared__ float4 tile[WG];
#endif
#endif

  for (int start = 0; start < n; start += WG) {
#if LOCAL_MEM
    __syncthreads();  // everyone is done with the previous chunk
#if USE_SOA
    tile_x[tid] = BODY_LOAD(body_x + start + tid);
    tile_y[tid] = BODY_LOAD(body_y + start + tid);
    tile_z[tid] = BODY_LOAD(body_z + start + tid);
    tile_m[tid] = BODY_LOAD(body_m + start + tid);
#else
    tile[tid] = BODY_LOAD(bodies + start + tid);
#endif
    __syncthreads();
#endif

    UNROLL_CHUNK
    for (int j = 0; j < WG; j += V) {
      // The V bodies start + j ... start + j + V - 1.
      float bx[V], by[V], bz[V], bm[V];
#if USE_SOA
#if LOCAL_MEM
      load_lanes_shared(tile_x + j, bx);
      load_lanes_shared(tile_y + j, by);
      load_lanes_shared(tile_z + j, bz);
      load_lanes_shared(tile_m + j, bm);
#else
      load_lanes(body_x + start + j, bx);
      load_lanes(body_y + start + j, by);
      load_lanes(body_z + start + j, bz);
      load_lanes(body_m + start + j, bm);
#endif
#else
#if LOCAL_MEM
      const float4 b = tile[j];
#else
      const float4 b = BODY_LOAD(bodies + start + j);
#endif
      bx[0] = b.x, by[0] = b.y, bz[0] = b.z, bm[0] = b.w;
#endif

      UNROLL_OWN
      for (int k = 0; k < OUF; ++k) {
#pragma unroll
        for (int l = 0; l < V; ++l) {
          const float dx = bx[l] - px[k], dy = by[l] - py[k], dz = bz[l] - pz[k];
          const float r2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, softening2)));
          const float inv_r = fast_rsqrt(r2);
          const float s = bm[l] * inv_r * (inv_r * inv_r);  // m_j / r³
          acc_x[k][l] = fmaf(s, dx, acc_x[k][l]);
          acc_y[k][l] = fmaf(s, dy, acc_y[k][l]);
          acc_z[k][l] = fmaf(s, dz, acc_z[k][l]);
        }
      }
    }
  }

  const float g_dt = G * dt;
  UNROLL_OWN
  for (int k = 0; k < OUF; ++k) {
    const int i = first + k * WG;
    // Lanes summed pairwise: (0 + 1) + (2 + 3).
    float ax = acc_x[k][0], ay = acc_y[k][0], az = acc_z[k][0];
#if V >= 2
    ax += acc_x[k][1], ay += acc_y[k][1], az += acc_z[k][1];
#endif
#if V == 4
    ax += acc_x[k][2] + acc_x[k][3], ay += acc_y[k][2] + acc_y[k][3], az += acc_z[k][2] + acc_z[k][3];
#endif
    const float4 v = vel[i];
    const float vx = fmaf(g_dt, ax, v.x), vy = fmaf(g_dt, ay, v.y), vz = fmaf(g_dt, az, v.z);
#if USE_SOA
    const float m = body_m[i];
#else
    const float m = bodies[i].w;
#endif
    new_vel[i] = make_float4(vx, vy, vz, 0.0f);
    new_pos[i] = make_float4(fmaf(dt, vx, px[k]), fmaf(dt, vy, py[k]), fmaf(dt, vz, pz[k]), m);
  }
}
