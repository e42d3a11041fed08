// 2D convolution with a 7 × 7 filter, float (CLTune-style tuning space):
//   out[y][x] = Σ_{fy, fx < 7} in[y + fy][x + fx] · filter[fy][fx]
// `in` is the image with its 3-pixel halo: (HEIGHT + 6) rows of in_pitch = WIDTH + 8 floats
// (WIDTH + 6 rounded up to a multiple of 4, so that every row starts 16-byte aligned; the
// last 2 columns are padding the kernel may read but never uses). `out` is HEIGHT × WIDTH.
// Twin of kernel.cl for NVRTC; the two differ only in the API spelling (and the filter's
// memory: __constant in OpenCL, the read-only path here: see `filter`).
//
// Geometry. A block computes a tile of TILE_W = TBX·WPTX by TILE_H = TBY·WPTY outputs with
// TBX × TBY computing threads; thread (tx, ty) computes the WPTX × WPTY outputs starting at
// (tx·WPTX, ty·WPTY) of the tile (a contiguous patch, so that neighbouring outputs share
// their inputs in registers). The block has TBX_XL × TBY_XL threads: TBX × TBY, plus with
// LOCAL == 2 the halo threads that only help load the input tile.
//
// Parameters (set with -D):
//   TBX, TBY        computing threads per block along x and y.
//   WPTX, WPTY      outputs per thread along x and y (the register tile: WPTX·WPTY
//                   accumulators).
//   LOCAL           where the threads read their inputs:
//                   0  straight from global memory (neighbouring threads' windows overlap
//                      and meet in L1);
//                   1  from a shared-memory copy of the block's input tile with its halo,
//                      (TILE_H + 6) × (TILE_W + 6), loaded by the TBX × TBY threads together
//                      in coalesced rows of vectors;
//                   2  as 1, but loaded by TBX_XL × TBY_XL threads, each loading its own
//                      WPTX × WPTY patch: the halo threads load the halo.
//   VECTOR          width of every vector access: global loads and stores, shared-memory
//                   stores and loads, as float, float2 or float4. WPTX % VECTOR == 0; with
//                   LOCAL == 2 also 6 % VECTOR == 0, so that the tile width is whole vectors.
//   UNROLL_FACTOR   unroll factor of the loops over the filter's 7 rows and 7 columns.
//                   7 (complete): each thread walks its (WPTY + 6) input rows once, reading
//                   each row's WPTX + 6 inputs into registers with vector loads and applying
//                   every filter tap that uses them: each input is read once per thread.
//                   Otherwise `#pragma unroll UNROLL_FACTOR` on both filter loops: every tap
//                   reads its WPTX·WPTY inputs from memory (scalar loads).
//   PADDING         with LOCAL != 0: pad each shared-memory row by one vector (VECTOR floats)
//                   against bank conflicts between rows.
//   TBX_XL, TBY_XL  the block's shape: TBX + cdiv(6, WPTX) with LOCAL == 2, TBX otherwise
//                   (y likewise); checked below.
//
// Launch: grid (WIDTH / TILE_W, HEIGHT / TILE_H), block (TBX_XL, TBY_XL), dynamic shared
// memory 4·(TILE_H + 6)·LOCAL_PITCH bytes with LOCAL != 0 (LOCAL_PITCH below). No bounds
// checks: WIDTH and HEIGHT must be multiples of 512, the largest tile side.

#define HFS 3  // half filter size
#define FS 7   // filter size

#define STEER_PRAGMA(x) _Pragma(#x)
#define STEER_UNROLL(n) STEER_PRAGMA(unroll n)
#define ROUND_UP(a, b) (((a) + (b) - 1) / (b) * (b))

#define TILE_W (TBX * WPTX)                  // outputs per block along x
#define TILE_H (TBY * WPTY)                  // outputs per block along y
#define IN_W (TILE_W + 2 * HFS)              // input tile with its halo
#define IN_H (TILE_H + 2 * HFS)
#define LOCAL_PITCH (ROUND_UP(IN_W, VECTOR) + PADDING * VECTOR)  // shared row, floats
#define WINDOW_W ROUND_UP(WPTX + 2 * HFS, VECTOR)  // a thread's input row, whole vectors

#if VECTOR != 1 && VECTOR != 2 && VECTOR != 4
#error "VECTOR must be 1, 2 or 4"
#endif
#if WPTX % VECTOR != 0 || (LOCAL == 2 && (2 * HFS) % VECTOR != 0)
#error "WPTX (and with LOCAL == 2 the halo of 6) must be whole vectors"
#endif
#if TBX_XL != (LOCAL == 2 ? TBX + (2 * HFS + WPTX - 1) / WPTX : TBX) || \
    TBY_XL != (LOCAL == 2 ? TBY + (2 * HFS + WPTY - 1) / WPTY : TBY)
#error "TBX_XL and TBY_XL must be TBX and TBY, plus the halo threads with LOCAL == 2"
#endif

// VECTOR floats from p to dst[0..VECTOR) and back; p is VECTOR-aligned. Works on global and
// shared pointers alike (the address space is inferred after inlining).
__device__ __forceinline__ void load_vector(const float* p, float* dst) {
#if VECTOR == 1
  dst[0] = *p;
#elif VECTOR == 2
  const float2 t = *reinterpret_cast<const float2*>(p);
  dst[0] = t.x, dst[1] = t.y;
#else
  const float4 t = *reinterpret_cast<const float4*>(p);
  dst[0] = t.x, dst[1] = t.y, dst[2] = t.z, dst[3] = t.w;
#endif
}

__device__ __forceinline__ void store_vector(float* p, const float* src) {
#if VECTOR == 1
  *p = src[0];
#elif VECTOR == 2
  *reinterpret_cast<float2*>(p) = make_float2(src[0], src[1]);
#else
  *reinterpret_cast<float4*>(p) = make_float4(src[0], src[1], src[2], src[3]);
#endif
}

__device__ __forceinline__ void copy_vector(float* to, const float* from) {
  float v[VECTOR];
  load_vector(from, v);
  store_vector(to, v);
}

#if TBX_XL * TBY_XL <= 1024
#define LAUNCH_BOUNDS __launch_bounds__(TBX_XL * TBY_XL)
#else
#define LAUNCH_BOUNDS  // more than a CUDA block can hold: the launch check refuses it
#endif

// filter: 49 floats, row-major. Read through the read-only path (all threads read the same
// tap: a broadcast); with UNROLL_FACTOR == 7 each thread loads the 49 taps into registers
// once. (CUDA's __constant__ memory would need a module symbol filled by the host.)
extern "C" __global__ void LAUNCH_BOUNDS conv(float* __restrict__ out, const float* __restrict__ in,
                                              const float* __restrict__ filter, const int width, const int in_pitch) {
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x0 = blockIdx.x * TILE_W, y0 = blockIdx.y * TILE_H;  // the tile's first output = its first input

#if LOCAL == 0
  const float* source = in + static_cast<long>(y0 + ty * WPTY) * in_pitch + x0 + tx * WPTX;
  const int source_pitch = in_pitch;
#else
  extern __shared__ float4 shared_raw[];  // float4: 16-byte aligned
  float* tile = reinterpret_cast<float*>(shared_raw);
  const float* tile_in = in + static_cast<long>(y0) * in_pitch + x0;
#if LOCAL == 1
  // All threads copy the tile row by row, consecutive threads taking consecutive vectors
  // (coalesced). Rows are ROUND_UP(IN_W, VECTOR) wide: up to 2 floats more than the halo
  // needs, which the input's padded pitch holds.
  constexpr int kRowVectors = ROUND_UP(IN_W, VECTOR) / VECTOR;
  for (int i = ty * TBX + tx; i < IN_H * kRowVectors; i += TBX * TBY) {
    const int r = i / kRowVectors, c = (i - r * kRowVectors) * VECTOR;
    copy_vector(tile + r * LOCAL_PITCH + c, tile_in + static_cast<long>(r) * in_pitch + c);
  }
#else
  // Each of the TBX_XL × TBY_XL threads copies its WPTX × WPTY patch, clipped to the tile
  // (IN_W and WPTX are whole vectors).
#pragma unroll
  for (int wy = 0; wy < WPTY; ++wy) {
    const int r = ty * WPTY + wy;
    if (r < IN_H) {
#pragma unroll
      for (int wx = 0; wx < WPTX; wx += VECTOR) {
        const int c = tx * WPTX + wx;
        if (c < IN_W) copy_vector(tile + r * LOCAL_PITCH + c, tile_in + static_cast<long>(r) * in_pitch + c);
      }
    }
  }
#endif
  __syncthreads();
#if LOCAL == 2
  if (tx >= TBX || ty >= TBY) return;  // halo threads are done
#endif
  const float* source = tile + ty * WPTY * LOCAL_PITCH + tx * WPTX;
  constexpr int source_pitch = LOCAL_PITCH;
#endif

  float acc[WPTY][WPTX];
#pragma unroll
  for (int wy = 0; wy < WPTY; ++wy)
#pragma unroll
    for (int wx = 0; wx < WPTX; ++wx) acc[wy][wx] = 0.0f;

#if UNROLL_FACTOR == FS
  // Complete unroll: input row r feeds output rows wy = r - fy for the filter rows fy it
  // meets. Taps are applied in the order fy, fx for every output, as in the rolled loops.
  float taps[FS * FS];
#pragma unroll
  for (int t = 0; t < FS * FS; ++t) taps[t] = __ldg(filter + t);
#pragma unroll
  for (int r = 0; r < WPTY + 2 * HFS; ++r) {
    float window[WINDOW_W];
#pragma unroll
    for (int c = 0; c < WINDOW_W; c += VECTOR) load_vector(source + r * source_pitch + c, window + c);
#pragma unroll
    for (int wy = 0; wy < WPTY; ++wy) {
      const int fy = r - wy;
      if (fy >= 0 && fy < FS) {
#pragma unroll
        for (int fx = 0; fx < FS; ++fx) {
#pragma unroll
          for (int wx = 0; wx < WPTX; ++wx) acc[wy][wx] = fmaf(window[wx + fx], taps[fy * FS + fx], acc[wy][wx]);
        }
      }
    }
  }
#else
  STEER_UNROLL(UNROLL_FACTOR)
  for (int fy = 0; fy < FS; ++fy) {
    STEER_UNROLL(UNROLL_FACTOR)
    for (int fx = 0; fx < FS; ++fx) {
      const float tap = __ldg(filter + fy * FS + fx);
      const float* row = source + fy * source_pitch + fx;
#pragma unroll
      for (int wy = 0; wy < WPTY; ++wy)
#pragma unroll
        for (int wx = 0; wx < WPTX; ++wx) acc[wy][wx] = fmaf(row[wy * source_pitch + wx], tap, acc[wy][wx]);
    }
  }
#endif

  float* result = out + static_cast<long>(y0 + ty * WPTY) * width + x0 + tx * WPTX;
#pragma unroll
  for (int wy = 0; wy < WPTY; ++wy)
#pragma unroll
    for (int wx = 0; wx < WPTX; wx += VECTOR) store_vector(result + static_cast<long>(wy) * width + wx, &acc[wy][wx]);
}
