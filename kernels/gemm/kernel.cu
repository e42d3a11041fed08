// Single-precision GEMM, C = alpha·A·B + beta·C, with the tuning parameters of CLBlast's
// "xgemm" kernel (written afresh for Steer). Twin of kernel.cl; the two differ only in the
// API spelling. Used by the specs kernels/gemm (reduced space) and kernels/gemm_full.
//
// Data layout (column-major, as BLAS and cuBLAS):
//   A: M × K column-major, element (m, k) at A[k·M + m]   (m contiguous)
//   B: K × N row-major,    element (k, n) at B[k·N + n]   (n contiguous; = column-major Bᵀ)
//   C: M × N column-major, element (m, n) at C[n·M + m]   (m contiguous)
// so that both operand tiles are read along their contiguous dimension, in vectors of VWM
// (A) and VWN (B) elements. The same product in cuBLAS is
//   cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, M, N, K, &alpha, A, M, B, N, &beta, C, M).
//
// Sizes: M and N must be multiples of 4 (the widest vector, so that every vector is aligned
// and lies wholly inside or outside the matrix); K is any positive number. M·K, K·N and M·N
// must stay below 2^31 (int indices). The grid is cdiv(M, MWG) × cdiv(N, NWG) work-groups;
// partial tiles at the edges are handled without slowing the main loop: reads of rows of A
// (columns of B) beyond M (N) are clamped to the last one (they only feed elements of C that
// are not stored), the last k-tile is zero-filled beyond K, and stores are guarded.
// beta == 0 does not read C (as in BLAS: C may then hold anything, NaN included).
//
// Parameters (set with -D):
//   MWG, NWG   the work-group's tile of C: MWG rows (m) × NWG columns (n).
//   KWG        depth of the k-tile: A (KWG × MWG) and B (KWG × NWG) tiles per step.
//   MDIMC, NDIMC  threads per work-group along m (x) and n (y). Each thread accumulates
//              MWI × NWI = (MWG/MDIMC) × (NWG/NDIMC) elements of C in registers.
//   MDIMA      with SA: the threads re-shaped as MDIMA (along m) × KDIMA = MDIMC·NDIMC/MDIMA
//              (along k) to copy the A tile from global to shared memory; each copies
//              (MWG/MDIMA) × (KWG/KDIMA) elements.
//   NDIMB      likewise for the B tile: NDIMB along n × KDIMB = MDIMC·NDIMC/NDIMB along k.
//   KWI        unroll factor of the loop over the k-tile: the loop runs KWG/KWI times (not
//              unrolled) around a body of KWI fully unrolled k-steps.
//   VWM, VWN   vector width (1, 2, 4: float, float2, float4) of every access along m (A, C)
//              and along n (B): global loads, shared-memory stores and loads, C stores.
//   STRM       how a thread's m-elements lie: 0 contiguous (thread t owns vectors
//              t·MWI/VWM ... t·MWI/VWM + MWI/VWM - 1), 1 strided (vectors t, t + MDIMC, ...,
//              so neighbouring threads touch neighbouring vectors: coalesced global access
//              and conflict-free shared access). Applies to the compute sub-tile, to the
//              C stores, and to the A-tile copy (stride MDIMA there).
//   STRN       the same along n (B tile, compute sub-tile of B).
//   SA, SB     1: stage the A (B) tile in shared memory, copied cooperatively by the
//              re-shaped threads, with a register prefetch of the next tile issued before
//              the current one is computed; 0: every thread reads its own A (B) values
//              straight from global memory (through the read-only/L1 cache) in the inner loop.
//   PRECISION  32 (float); the only precision these kernels provide.

#if PRECISION != 32
#error "PRECISION must be 32"
#endif

#define MWI (MWG / MDIMC)              // C rows per thread
#define NWI (NWG / NDIMC)              // C columns per thread
#define MVI (MWI / VWM)                // ... in vectors
#define NVI (NWI / VWN)
#define KDIMA ((MDIMC * NDIMC) / MDIMA)  // loader threads along k for A
#define KDIMB ((MDIMC * NDIMC) / NDIMB)  // ... for B
#define MVA (MWG / (MDIMA * VWM))      // A vectors per loader thread along m
#define KWA (KWG / KDIMA)              // A rows (k) per loader thread
#define NVB (NWG / (NDIMB * VWN))      // B vectors per loader thread along n
#define KWB (KWG / KDIMB)              // B rows (k) per loader thread

#if MWG % (MDIMC * VWM) != 0 || NWG % (NDIMC * VWN) != 0 || KWG % KWI != 0
#error "the tile does not divide among the threads and vectors"
#endif
#if SA && (MWG % (MDIMA * VWM) != 0 || KWG % KDIMA != 0)
#error "the A tile does not divide among the loader threads"
#endif
#if SB && (NWG % (NDIMB * VWN) != 0 || KWG % KDIMB != 0)
#error "the B tile does not divide among the loader threads"
#endif

// Vector types and their lanes. UNPACK_w(dst, base, v) copies the lanes of v into
// dst[base ...]; PACK_w(v, f) sets lane i of v to f(i).
#define UNPACK_1(dst, base, v) { dst[(base)] = (v); }
#define UNPACK_2(dst, base, v) { dst[(base)] = (v).x; dst[(base) + 1] = (v).y; }
#define UNPACK_4(dst, base, v) \
  { dst[(base)] = (v).x; dst[(base) + 1] = (v).y; dst[(base) + 2] = (v).z; dst[(base) + 3] = (v).w; }
#define PACK_1(v, f) { (v) = f(0); }
#define PACK_2(v, f) { (v).x = f(0); (v).y = f(1); }
#define PACK_4(v, f) { (v).x = f(0); (v).y = f(1); (v).z = f(2); (v).w = f(3); }
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

#if VWM == 1
typedef float realM;
#define ZERO_M 0.0f
#elif VWM == 2
typedef float2 realM;
#define ZERO_M make_float2(0.0f, 0.0f)
#elif VWM == 4
typedef float4 realM;
#define ZERO_M make_float4(0.0f, 0.0f, 0.0f, 0.0f)
#else
#error "VWM must be 1, 2 or 4"
#endif
#if VWN == 1
typedef float realN;
#define ZERO_N 0.0f
#elif VWN == 2
typedef float2 realN;
#define ZERO_N make_float2(0.0f, 0.0f)
#elif VWN == 4
typedef float4 realN;
#define ZERO_N make_float4(0.0f, 0.0f, 0.0f, 0.0f)
#else
#error "VWN must be 1, 2 or 4"
#endif
#define UNPACK_M CAT(UNPACK_, VWM)
#define UNPACK_N CAT(UNPACK_, VWN)
#define PACK_M CAT(PACK_, VWM)

// Position (in vectors, within the work-group's tile) of a thread's i-th vector along m / n
// in the compute sub-tile, and of a loader thread's v-th vector in the tile copy.
#if STRM
#define M_VEC(t, i) ((i) * MDIMC + (t))
#define MA_VEC(t, v) ((v) * MDIMA + (t))
#else
#define M_VEC(t, i) ((t) * MVI + (i))
#define MA_VEC(t, v) ((t) * MVA + (v))
#endif
#if STRN
#define N_VEC(t, j) ((j) * NDIMC + (t))
#define NB_VEC(t, v) ((v) * NDIMB + (t))
#else
#define N_VEC(t, j) ((t) * NVI + (j))
#define NB_VEC(t, v) ((t) * NVB + (v))
#endif

// One k-tile of the product: acc += A[k0 .. k0+KWG) · B[k0 .. k0+KWG), from the shared
// tiles (SA / SB) or straight from global memory. `guard` (a literal at each call, so that
// it costs nothing where false) zeroes the global reads beyond K in the last tile; the
// shared tiles are zero-filled there already.
__device__ __forceinline__ void multiply_tile(float (&acc)[MWI][NWI],
#if SA
                                              const realM (*__restrict__ As)[MWG / VWM],
#else
                                              const realM* const* a_columns,
#endif
#if SB
                                              const realN (*__restrict__ Bs)[NWG / VWN],
#else
                                              const realN* const* b_columns,
#endif
                                              const int tid_m, const int tid_n, const int Mv, const int Nv,
                                              const int k0, const int K, const bool guard) {
  // KWI: the outer loop stays a loop; its body is KWI unrolled k-steps.
#pragma unroll 1
  for (int kw = 0; kw < KWG; kw += KWI) {
#pragma unroll
    for (int ki = 0; ki < KWI; ++ki) {
      const int k = kw + ki;
      float a[MWI], b[NWI];
#pragma unroll
      for (int i = 0; i < MVI; ++i) {
#if SA
        const realM v = As[k][M_VEC(tid_m, i)];
#else
        const realM v = (!guard || k0 + k < K) ? a_columns[i][(k0 + k) * Mv] : ZERO_M;
#endif
        UNPACK_M(a, i * VWM, v)
      }
#pragma unroll
      for (int j = 0; j < NVI; ++j) {
#if SB
        const realN v = Bs[k][N_VEC(tid_n, j)];
#else
        const realN v = (!guard || k0 + k < K) ? b_columns[j][(k0 + k) * Nv] : ZERO_N;
#endif
        UNPACK_N(b, j * VWN, v)
      }
#pragma unroll
      for (int mi = 0; mi < MWI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NWI; ++ni) acc[mi][ni] = fmaf(a[mi], b[ni], acc[mi][ni]);
    }
  }
}

#if SA
// The A tile copy, global -> registers: loader thread (la_m, la_k) reads rows
// k0 + la_k + ka·KDIMA (ka < KWA) at its MVA columns; rows beyond K read as zero.
__device__ __forceinline__ void load_a(realM (&next)[KWA][MVA], const realM* const* columns, const int la_k,
                                       const int k0, const int K, const int Mv) {
#pragma unroll
  for (int ka = 0; ka < KWA; ++ka) {
    const int k = k0 + la_k + ka * KDIMA;
#pragma unroll
    for (int v = 0; v < MVA; ++v) next[ka][v] = k < K ? columns[v][k * Mv] : ZERO_M;
  }
}
// ... registers -> shared memory.
__device__ __forceinline__ void store_a(realM (*__restrict__ As)[MWG / VWM], const realM (&next)[KWA][MVA],
                                        const int la_m, const int la_k) {
#pragma unroll
  for (int ka = 0; ka < KWA; ++ka)
#pragma unroll
    for (int v = 0; v < MVA; ++v) As[la_k + ka * KDIMA][MA_VEC(la_m, v)] = next[ka][v];
}
#endif
#if SB
__device__ __forceinline__ void load_b(realN (&next)[KWB][NVB], const realN* const* columns, const int lb_k,
                                       const int k0, const int K, const int Nv) {
#pragma unroll
  for (int kb = 0; kb < KWB; ++kb) {
    const int k = k0 + lb_k + kb * KDIMB;
#pragma unroll
    for (int v = 0; v < NVB; ++v) next[kb][v] = k < K ? columns[v][k * Nv] : ZERO_N;
  }
}
__device__ __forceinline__ void store_b(realN (*__restrict__ Bs)[NWG / VWN], const realN (&next)[KWB][NVB],
                                        const int lb_n, const int lb_k) {
#pragma unroll
  for (int kb = 0; kb < KWB; ++kb)
#pragma unroll
    for (int v = 0; v < NVB; ++v) Bs[lb_k + kb * KDIMB][NB_VEC(lb_n, v)] = next[kb][v];
}
#endif

extern "C" __global__ void __launch_bounds__(MDIMC * NDIMC)
gemm(const int M, const int N, const int K, const float alpha, const float beta,
     const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C) {
  const int tid_m = threadIdx.x, tid_n = threadIdx.y;
  const int Mv = M / VWM, Nv = N / VWN;              // matrix widths in vectors
  const int m0v = blockIdx.x * (MWG / VWM);           // the tile's first vector along m
  const int n0v = blockIdx.y * (NWG / VWN);           // ... along n
  const realM* __restrict__ Av = reinterpret_cast<const realM*>(A);
  const realN* __restrict__ Bv = reinterpret_cast<const realN*>(B);

#if SA || SB
  const int tid = tid_n * MDIMC + tid_m;
#endif
#if SA
  // The A tile in shared memory, m contiguous; the loader threads' layout and their
  // (clamped) global columns, and the registers that prefetch the next tile.
  __shared__ realM As[KWG][MWG / VWM];
  const int la_m = tid % MDIMA, la_k = tid / MDIMA;
  const realM* a_columns[MVA];
#pragma unroll
  for (int v = 0; v < MVA; ++v) a_columns[v] = Av + min(m0v + MA_VEC(la_m, v), Mv - 1);
  realM a_next[KWA][MVA];
#else
  // Each thread's own columns of A, clamped into the matrix.
  const realM* a_columns[MVI];
#pragma unroll
  for (int i = 0; i < MVI; ++i) a_columns[i] = Av + min(m0v + M_VEC(tid_m, i), Mv - 1);
#endif
#if SB
  __shared__ realN Bs[KWG][NWG / VWN];
  const int lb_n = tid % NDIMB, lb_k = tid / NDIMB;
  const realN* b_columns[NVB];
#pragma unroll
  for (int v = 0; v < NVB; ++v) b_columns[v] = Bv + min(n0v + NB_VEC(lb_n, v), Nv - 1);
  realN b_next[KWB][NVB];
#else
  const realN* b_columns[NVI];
#pragma unroll
  for (int j = 0; j < NVI; ++j) b_columns[j] = Bv + min(n0v + N_VEC(tid_n, j), Nv - 1);
#endif

  float acc[MWI][NWI];
#pragma unroll
  for (int mi = 0; mi < MWI; ++mi)
#pragma unroll
    for (int ni = 0; ni < NWI; ++ni) acc[mi][ni] = 0.0f;

  // The operands of multiply_tile: the shared tiles, or the threads' own global columns.
#if SA
#define A_OPERAND As
#else
#define A_OPERAND a_columns
#endif
#if SB
#define B_OPERAND Bs
#else
#define B_OPERAND b_columns
#endif

  // The loop over k-tiles. With SA or SB the next tile's global loads are always issued
  // before the current tile is multiplied (register prefetch), and land in shared memory
  // after it: one shared buffer, two barriers per tile.
  const int tiles = (K + KWG - 1) / KWG;
#if SA
  load_a(a_next, a_columns, la_k, 0, K, Mv);
#endif
#if SB
  load_b(b_next, b_columns, lb_k, 0, K, Nv);
#endif
  for (int t = 0; t < tiles; ++t) {
    const int k0 = t * KWG;
#if SA || SB
#if SA
    store_a(As, a_next, la_m, la_k);
#endif
#if SB
    store_b(Bs, b_next, lb_n, lb_k);
#endif
    __syncthreads();
    // The next tile's loads are in flight while this one is multiplied.
    if (t + 1 < tiles) {
#if SA
      load_a(a_next, a_columns, la_k, k0 + KWG, K, Mv);
#endif
#if SB
      load_b(b_next, b_columns, lb_k, k0 + KWG, K, Nv);
#endif
    }
#endif
    if (t + 1 < tiles)
      multiply_tile(acc, A_OPERAND, B_OPERAND, tid_m, tid_n, Mv, Nv, k0, K, false);
    else
      multiply_tile(acc, A_OPERAND, B_OPERAND, tid_m, tid_n, Mv, Nv, k0, K, true);
#if SA || SB
    __syncthreads();  // the tile is consumed before the next one overwrites it
#endif
  }

  // C = alpha·acc + beta·C, in vectors along m; elements outside the matrix are skipped.
  realM* __restrict__ Cv = reinterpret_cast<realM*>(C);
#pragma unroll
  for (int j = 0; j < NVI; ++j) {
#pragma unroll
    for (int y = 0; y < VWN; ++y) {
      const int n = (n0v + N_VEC(tid_n, j)) * VWN + y;
      if (n >= N) continue;
#pragma unroll
      for (int i = 0; i < MVI; ++i) {
        const int mv = m0v + M_VEC(tid_m, i);
        if (mv >= Mv) continue;
        realM* const target = Cv + n * Mv + mv;
        realM result;
#define SCALED(x) (alpha * acc[i * VWM + (x)][j * VWN + y])
        PACK_M(result, SCALED)
#undef SCALED
        if (beta != 0.0f) {
          const realM old = *target;
          float o[VWM];
          UNPACK_M(o, 0, old)
#define UPDATED(x) (alpha * acc[i * VWM + (x)][j * VWN + y] + beta * o[(x)])
          PACK_M(result, UPDATED)
#undef UPDATED
        }
        *target = result;
      }
    }
  }
}
