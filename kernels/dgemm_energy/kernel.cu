// Double-precision GEMM "stencil", C = alpha·A·B + beta·C, in the style of the MAGMA/BEAST
// kernels tuned for time and energy by Anzt et al. (written afresh for Steer). Twin of
// kernel.cl; the two differ only in the API spelling (and in READ_ONLY, see below).
//
// Data layout: column-major throughout, no transposes (BLAS "NN"):
//   A: M × K, element (m, k) at A[k·M + m]
//   B: K × N, element (k, n) at B[n·K + k]
//   C: M × N, element (m, n) at C[n·M + m]
// In cuBLAS: cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A, M, B, K, &beta, C, M).
//
// Sizes: any positive M, N, K with M·K, K·N and M·N below 2^31 (int indices). The grid is
// cdiv(M, BLK_M) × cdiv(N, BLK_N) thread blocks; at the edges reads are clamped into the
// matrix (they feed only elements of C that are not stored), the last k-tile is zero-filled
// beyond K, and stores are guarded. beta == 0 does not read C.
//
// A thread block of DIM_X × DIM_Y threads computes a BLK_M × BLK_N tile of C. A and B are
// streamed through shared memory in stripes of BLK_M × BLK_K and BLK_K × BLK_N; each thread
// accumulates THR_M × THR_N = (BLK_M/DIM_X) × (BLK_N/DIM_Y) elements of C in registers, the
// elements (tx + i·DIM_X, ty + j·DIM_Y), so that neighbouring threads touch neighbouring
// elements in shared memory and in C.
//
// Parameters (set with -D):
//   DIM_X, DIM_Y     threads per block along m and n.
//   BLK_M, BLK_N     the block's tile of C.
//   BLK_K            depth of the k-tile (the shared stripes); the loop over it is unrolled.
//   DIM_XA, DIM_YA   the threads re-shaped as DIM_XA (along m) × DIM_YA (along k) to copy the
//                    A stripe from global to shared memory: each copies (BLK_M/DIM_XA) ×
//                    (BLK_K/DIM_YA) elements, neighbouring threads neighbouring elements of a
//                    column of A (coalesced).
//   DIM_XB, DIM_YB   likewise for B: DIM_XB along k (B's contiguous dimension) × DIM_YB along n.
//   READ_ONLY        1: read A and B through the read-only (texture) data cache: const
//                    __restrict__ pointers and __ldg(); 0: plain loads through the L1 path.
//                    (OpenCL: 1 declares the operands `const restrict`, 0 plain `const`; the
//                    compiler decides the cache path.)
//   PAD_SHARED       1: pad each shared stripe by one column ([BLK_K][BLK_M+1] and
//                    [BLK_N][BLK_K+1]), so that the threads of a warp that read different
//                    columns of the B stripe hit different banks.
//   PREFETCH         1: load the next k-tile from global memory into registers before the
//                    current one is multiplied (its latency hidden behind the arithmetic),
//                    and store it to shared memory afterwards; 0: load, store and wait
//                    for each tile before multiplying it.
// Shared memory: 8·(BLK_K·(BLK_M + PAD_SHARED) + BLK_N·(BLK_K + PAD_SHARED)) bytes of static
// shared memory, within the 48 KiB a block may have statically.

#define THR_M (BLK_M / DIM_X)   // C rows per thread
#define THR_N (BLK_N / DIM_Y)   // C columns per thread
#define A_M (BLK_M / DIM_XA)    // A elements per loader thread along m
#define A_K (BLK_K / DIM_YA)    // ... along k
#define B_K (BLK_K / DIM_XB)    // B elements per loader thread along k
#define B_N (BLK_N / DIM_YB)    // ... along n

#if BLK_M % DIM_X != 0 || BLK_N % DIM_Y != 0 || BLK_M % DIM_XA != 0 || BLK_K % DIM_YA != 0 || \
    BLK_K % DIM_XB != 0 || BLK_N % DIM_YB != 0
#error "the tiles do not divide among the threads"
#endif
#if DIM_XA * DIM_YA != DIM_X * DIM_Y || DIM_XB * DIM_YB != DIM_X * DIM_Y
#error "the loading grids must have as many threads as the block"
#endif

#if READ_ONLY
#define OPERAND const double* __restrict__
#define FETCH(pointer) __ldg(pointer)
#else
#define OPERAND const double*
#define FETCH(pointer) (*(pointer))
#endif

extern "C" __global__ void __launch_bounds__(DIM_X * DIM_Y)
dgemm_energy(const int M, const int N, const int K, const double alpha, const double beta,
             OPERAND A, OPERAND B, double* C) {
  __shared__ double sA[BLK_K][BLK_M + PAD_SHARED];  // A stripe, m contiguous
  __shared__ double sB[BLK_N][BLK_K + PAD_SHARED];  // B stripe, k contiguous

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * DIM_X + tx;
  const int txA = tid % DIM_XA, tyA = tid / DIM_XA;
  const int txB = tid % DIM_XB, tyB = tid / DIM_XB;
  const int m0 = blockIdx.x * BLK_M, n0 = blockIdx.y * BLK_N;

  // The loader threads' global rows of A and columns of B, clamped into the matrices.
  OPERAND a_rows[A_M];
#pragma unroll
  for (int i = 0; i < A_M; ++i) a_rows[i] = A + min(m0 + txA + i * DIM_XA, M - 1);
  OPERAND b_columns[B_N];
#pragma unroll
  for (int j = 0; j < B_N; ++j) b_columns[j] = B + min(n0 + tyB + j * DIM_YB, N - 1) * K;

  // The copy of one k-tile, staged in registers; rows beyond K read as zero.
  double ra[A_K][A_M], rb[B_N][B_K];
#define LOAD_TILE(k0)                                                                   \
  {                                                                                     \
    _Pragma("unroll") for (int j = 0; j < A_K; ++j) {                                   \
      const int k = (k0) + tyA + j * DIM_YA;                                            \
      _Pragma("unroll") for (int i = 0; i < A_M; ++i) ra[j][i] = k < K ? FETCH(a_rows[i] + k * M) : 0.0; \
    }                                                                                   \
    _Pragma("unroll") for (int j = 0; j < B_N; ++j)                                     \
      _Pragma("unroll") for (int i = 0; i < B_K; ++i) {                                 \
        const int k = (k0) + txB + i * DIM_XB;                                          \
        rb[j][i] = k < K ? FETCH(b_columns[j] + k) : 0.0;                               \
      }                                                                                 \
  }
#define STORE_TILE()                                                                    \
  {                                                                                     \
    _Pragma("unroll") for (int j = 0; j < A_K; ++j)                                     \
      _Pragma("unroll") for (int i = 0; i < A_M; ++i) sA[tyA + j * DIM_YA][txA + i * DIM_XA] = ra[j][i]; \
    _Pragma("unroll") for (int j = 0; j < B_N; ++j)                                     \
      _Pragma("unroll") for (int i = 0; i < B_K; ++i) sB[tyB + j * DIM_YB][txB + i * DIM_XB] = rb[j][i]; \
  }

  double rC[THR_N][THR_M];
#pragma unroll
  for (int j = 0; j < THR_N; ++j)
#pragma unroll
    for (int i = 0; i < THR_M; ++i) rC[j][i] = 0.0;

  const int tiles = (K + BLK_K - 1) / BLK_K;
#if PREFETCH
  LOAD_TILE(0)
#endif
  for (int t = 0; t < tiles; ++t) {
#if !PREFETCH
    LOAD_TILE(t * BLK_K)
#endif
    STORE_TILE()
    __syncthreads();
#if PREFETCH
    if (t + 1 < tiles) LOAD_TILE((t + 1) * BLK_K)
#endif
#pragma unroll
    for (int k = 0; k < BLK_K; ++k) {
      double rA[THR_M], rB[THR_N];
#pragma unroll
      for (int i = 0; i < THR_M; ++i) rA[i] = sA[k][tx + i * DIM_X];
#pragma unroll
      for (int j = 0; j < THR_N; ++j) rB[j] = sB[ty + j * DIM_Y][k];
#pragma unroll
      for (int j = 0; j < THR_N; ++j)
#pragma unroll
        for (int i = 0; i < THR_M; ++i) rC[j][i] = fma(rA[i], rB[j], rC[j][i]);
    }
    __syncthreads();  // the stripes are consumed before the next tile overwrites them
  }

#pragma unroll
  for (int j = 0; j < THR_N; ++j) {
    const int n = n0 + ty + j * DIM_Y;
    if (n >= N) continue;
#pragma unroll
    for (int i = 0; i < THR_M; ++i) {
      const int m = m0 + tx + i * DIM_X;
      if (m >= M) continue;
      double* const target = C + n * M + m;
      *target = beta == 0.0 ? alpha * rC[j][i] : alpha * rC[j][i] + beta * *target;
    }
  }
}
