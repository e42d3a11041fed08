// 2D convolution with a 7 × 7 filter, float (CLTune-style tuning space):
//   out[y][x] = Σ_{fy, fx < 7} in[y + fy][x + fx] · filter[fy][fx]
// `in` is the image with its 3-pixel halo: (HEIGHT + 6) rows of in_pitch = WIDTH + 8 floats
// (WIDTH + 6 rounded up to a multiple of 4, so that every row starts 16-byte aligned; the
// last 2 columns are padding the kernel may read but never uses). `out` is HEIGHT × WIDTH.
// Twin of kernel.cu; the two differ only in the API spelling (and the filter's memory:
// __constant here, the read-only path in CUDA).
//
// Geometry. A work-group computes a tile of TILE_W = TBX·WPTX by TILE_H = TBY·WPTY outputs
// with TBX × TBY computing work-items; work-item (tx, ty) computes the WPTX × WPTY outputs
// starting at (tx·WPTX, ty·WPTY) of the tile (a contiguous patch, so that neighbouring
// outputs share their inputs in registers). The work-group has TBX_XL × TBY_XL work-items:
// TBX × TBY, plus with LOCAL == 2 the halo work-items that only help load the input tile.
//
// Parameters (set with -D):
//   TBX, TBY        computing work-items per work-group along x and y.
//   WPTX, WPTY      outputs per work-item along x and y (WPTX·WPTY accumulators).
//   LOCAL           where the work-items read their inputs:
//                   0  straight from global memory;
//                   1  from a local-memory copy of the work-group's input tile with its halo,
//                      (TILE_H + 6) × (TILE_W + 6), loaded by the TBX × TBY work-items
//                      together in coalesced rows of vectors;
//                   2  as 1, but loaded by TBX_XL × TBY_XL work-items, each loading its own
//                      WPTX × WPTY patch: the halo work-items load the halo.
//   VECTOR          width of every vector access: global loads and stores, local-memory
//                   stores and loads, as float, float2 or float4. WPTX % VECTOR == 0; with
//                   LOCAL == 2 also 6 % VECTOR == 0, so that the tile width is whole vectors.
//   UNROLL_FACTOR   unroll factor of the loops over the filter's 7 rows and 7 columns.
//                   7 (complete): each work-item walks its (WPTY + 6) input rows once, reading
//                   each row's WPTX + 6 inputs into registers with vector loads and applying
//                   every filter tap that uses them: each input is read once per work-item.
//                   Otherwise `#pragma unroll UNROLL_FACTOR` on both filter loops: every tap
//                   reads its WPTX·WPTY inputs from memory (scalar loads).
//   PADDING         with LOCAL != 0: pad each local-memory row by one vector (VECTOR floats)
//                   against bank conflicts between rows.
//   TBX_XL, TBY_XL  the work-group's shape: TBX + cdiv(6, WPTX) with LOCAL == 2, TBX
//                   otherwise (y likewise); checked below.
//
// Launch: global size (WIDTH / TILE_W · TBX_XL, HEIGHT / TILE_H · TBY_XL), work-group
// (TBX_XL, TBY_XL); with LOCAL != 0 a last argument of 4·(TILE_H + 6)·LOCAL_PITCH bytes of
// local memory (LOCAL_PITCH below). No bounds checks: WIDTH and HEIGHT must be multiples of
// 512, the largest tile side.

#define HFS 3  // half filter size
#define FS 7   // filter size

#define STEER_PRAGMA(x) _Pragma(#x)
#define STEER_UNROLL(n) STEER_PRAGMA(unroll n)
#define ROUND_UP(a, b) (((a) + (b) - 1) / (b) * (b))

#define TILE_W (TBX * WPTX)                  // outputs per work-group along x
#define TILE_H (TBY * WPTY)                  // outputs per work-group along y
#define IN_W (TILE_W + 2 * HFS)              // input tile with its halo
#define IN_H (TILE_H + 2 * HFS)
#define LOCAL_PITCH (ROUND_UP(IN_W, VECTOR) + PADDING * VECTOR)  // local row, floats
#define WINDOW_W ROUND_UP(WPTX + 2 * HFS, VECTOR)  // a work-item's input row, whole vectors

#if VECTOR == 1
typedef float vector_t;
#define SPLIT(v, a) ((a)[0] = (v))
#define JOIN(a) ((a)[0])
#elif VECTOR == 2
typedef float2 vector_t;
#define SPLIT(v, a) ((a)[0] = (v).s0, (a)[1] = (v).s1)
#define JOIN(a) ((float2)((a)[0], (a)[1]))
#elif VECTOR == 4
typedef float4 vector_t;
#define SPLIT(v, a) ((a)[0] = (v).s0, (a)[1] = (v).s1, (a)[2] = (v).s2, (a)[3] = (v).s3)
#define JOIN(a) ((float4)((a)[0], (a)[1], (a)[2], (a)[3]))
#else
#error "VECTOR must be 1, 2 or 4"
#endif
#if WPTX % VECTOR != 0 || (LOCAL == 2 && (2 * HFS) % VECTOR != 0)
#error "WPTX (and with LOCAL == 2 the halo of 6) must be whole vectors"
#endif
#if TBX_XL != (LOCAL == 2 ? TBX + (2 * HFS + WPTX - 1) / WPTX : TBX) || \
    TBY_XL != (LOCAL == 2 ? TBY + (2 * HFS + WPTY - 1) / WPTY : TBY)
#error "TBX_XL and TBY_XL must be TBX and TBY, plus the halo work-items with LOCAL == 2"
#endif

#if LOCAL == 0
#define SOURCE_SPACE __global
#else
#define SOURCE_SPACE __local
#endif
// One vector at p (VECTOR-aligned) of address space `space`.
#define VECTOR_AT(space, p) (*(space vector_t*)(p))

// filter: 49 floats, row-major, in constant memory (all work-items read the same tap).
__kernel __attribute__((reqd_work_group_size(TBX_XL, TBY_XL, 1)))
void conv(__global float* restrict out, __global const float* restrict in, __constant float* restrict filter,
          const int width, const int in_pitch
#if LOCAL != 0
          , __local float* restrict tile
#endif
) {
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int x0 = get_group_id(0) * TILE_W, y0 = get_group_id(1) * TILE_H;  // first output = first input

#if LOCAL == 0
  __global const float* source = in + (long)(y0 + ty * WPTY) * in_pitch + x0 + tx * WPTX;
  const int source_pitch = in_pitch;
#else
  __global const float* tile_in = in + (long)y0 * in_pitch + x0;
#if LOCAL == 1
  // All work-items copy the tile row by row, consecutive work-items taking consecutive
  // vectors (coalesced). Rows are ROUND_UP(IN_W, VECTOR) wide: up to 2 floats more than the
  // halo needs, which the input's padded pitch holds.
  const int row_vectors = ROUND_UP(IN_W, VECTOR) / VECTOR;
  for (int i = ty * TBX + tx; i < IN_H * row_vectors; i += TBX * TBY) {
    const int r = i / row_vectors, c = (i - r * row_vectors) * VECTOR;
    VECTOR_AT(__local, tile + r * LOCAL_PITCH + c) = VECTOR_AT(__global const, tile_in + (long)r * in_pitch + c);
  }
#else
  // Each of the TBX_XL × TBY_XL work-items copies its WPTX × WPTY patch, clipped to the tile
  // (IN_W and WPTX are whole vectors).
#pragma unroll
  for (int wy = 0; wy < WPTY; ++wy) {
    const int r = ty * WPTY + wy;
    if (r < IN_H) {
#pragma unroll
      for (int wx = 0; wx < WPTX; wx += VECTOR) {
        const int c = tx * WPTX + wx;
        if (c < IN_W)
          VECTOR_AT(__local, tile + r * LOCAL_PITCH + c) = VECTOR_AT(__global const, tile_in + (long)r * in_pitch + c);
      }
    }
  }
#endif
  barrier(CLK_LOCAL_MEM_FENCE);
#if LOCAL == 2
  if (tx >= TBX || ty >= TBY) return;  // halo work-items are done
#endif
  __local const float* source = tile + ty * WPTY * LOCAL_PITCH + tx * WPTX;
  const int source_pitch = LOCAL_PITCH;
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
  for (int t = 0; t < FS * FS; ++t) taps[t] = filter[t];
#pragma unroll
  for (int r = 0; r < WPTY + 2 * HFS; ++r) {
    float window[WINDOW_W];
#pragma unroll
    for (int c = 0; c < WINDOW_W; c += VECTOR) {
      const vector_t v = VECTOR_AT(SOURCE_SPACE const, source + r * source_pitch + c);
      SPLIT(v, window + c);
    }
#pragma unroll
    for (int wy = 0; wy < WPTY; ++wy) {
      const int fy = r - wy;
      if (fy >= 0 && fy < FS) {
#pragma unroll
        for (int fx = 0; fx < FS; ++fx) {
#pragma unroll
          for (int wx = 0; wx < WPTX; ++wx) acc[wy][wx] = fma(window[wx + fx], taps[fy * FS + fx], acc[wy][wx]);
        }
      }
    }
  }
#else
  STEER_UNROLL(UNROLL_FACTOR)
  for (int fy = 0; fy < FS; ++fy) {
    STEER_UNROLL(UNROLL_FACTOR)
    for (int fx = 0; fx < FS; ++fx) {
      const float tap = filter[fy * FS + fx];
      SOURCE_SPACE const float* row = source + fy * source_pitch + fx;
#pragma unroll
      for (int wy = 0; wy < WPTY; ++wy)
#pragma unroll
        for (int wx = 0; wx < WPTX; ++wx) acc[wy][wx] = fma(row[wy * source_pitch + wx], tap, acc[wy][wx]);
    }
  }
#endif

  __global float* result = out + (long)(y0 + ty * WPTY) * width + x0 + tx * WPTX;
#pragma unroll
  for (int wy = 0; wy < WPTY; ++wy)
#pragma unroll
    for (int wx = 0; wx < WPTX; wx += VECTOR) VECTOR_AT(__global, result + (long)wy * width + wx) = JOIN(&acc[wy][wx]);
}
