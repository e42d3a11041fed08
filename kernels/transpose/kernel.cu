// Matrix transpose, float: out (N rows × M columns) = transpose of in (M rows × N columns).
// Twin of kernel.cl for NVRTC; the two differ only in the API spelling.
//
// The work-group's x axis runs along the rows of one matrix, called W below; the other
// matrix is O, and W[r][c] corresponds to O[c][r]. A work-group handles one tile of W:
// TILE_SIZE_Y rows × TILE_SIZE_X·VECTOR_TYPE columns.
//
// Parameters (set with -D):
//   CR               0: W is `in` (reads coalesced, writes strided);
//                    1: W is `out` (writes coalesced, reads strided).
//                    With LOCAL_MEM both sides are coalesced; CR then decides which
//                    matrix the tile's TILE_SIZE_X columns lie along.
//   VECTOR_TYPE      elements per work-item access along W's rows, read or written as one
//                    float / float2 / float4.
//   WORK_GROUP_SIZE_X, WORK_GROUP_SIZE_Y   the work-group shape.
//   TILE_SIZE_X      tile width in vectors; equals WORK_GROUP_SIZE_X (one vector column per
//                    work-item).
//   TILE_SIZE_Y      tile height; each work-item handles TILE_SIZE_Y / WORK_GROUP_SIZE_Y rows.
//   LOCAL_MEM        stage the tile in shared memory so that both the read and the write are
//                    coalesced (needs VECTOR_TYPE == 1).
//   PADD_LOCAL       pad the shared tile's rows by one element, against bank conflicts in
//                    its column-wise access.
//   DIAGONAL_MAP     work-group (x, y) takes tile (x, (x + y) mod rows of tiles), so that
//                    work-groups running together spread over memory partitions.
//
// Launch: grid (W's columns / (TILE_SIZE_X·VECTOR_TYPE), W's rows / TILE_SIZE_Y), block
// (WORK_GROUP_SIZE_X, WORK_GROUP_SIZE_Y). The grid covers the matrices exactly, without
// bounds checks: M and N must be multiples of 64 (the largest tile side), and M·N < 2^31.

#if VECTOR_TYPE == 1
typedef float vector_t;
#elif VECTOR_TYPE == 2
typedef float2 vector_t;
#elif VECTOR_TYPE == 4
typedef float4 vector_t;
#else
#error "VECTOR_TYPE must be 1, 2 or 4"
#endif

#if LOCAL_MEM && VECTOR_TYPE != 1
#error "LOCAL_MEM needs VECTOR_TYPE == 1"
#endif

// A vector and its elements, one by one (reading the member not last written: CUDA
// compilers define it, as OpenCL C does).
union lanes_t {
  vector_t vector;
  float element[VECTOR_TYPE];
};

extern "C" __global__ void __launch_bounds__(WORK_GROUP_SIZE_X * WORK_GROUP_SIZE_Y)
transpose(float* __restrict__ out, const float* __restrict__ in, const int M, const int N) {
#if CR == 0
  const float* __restrict__ w = in;  // W = in: M × N
  float* __restrict__ o = out;
  const int w_columns = N, o_columns = M;
#else
  float* __restrict__ w = out;       // W = out: N × M
  const float* __restrict__ o = in;
  const int w_columns = M, o_columns = N;
#endif

  const int group_x = blockIdx.x;
#if DIAGONAL_MAP
  const int group_y = (blockIdx.x + blockIdx.y) % gridDim.y;
#else
  const int group_y = blockIdx.y;
#endif
  const int lx = threadIdx.x, ly = threadIdx.y;
  const int tile_row = group_y * TILE_SIZE_Y;                    // first row of W in the tile
  const int tile_column = group_x * TILE_SIZE_X * VECTOR_TYPE;   // first column of W in the tile

#if LOCAL_MEM
  __shared__ float tile[TILE_SIZE_Y][TILE_SIZE_X + PADD_LOCAL];  // the tile as it lies in W

  // W side: work-items walk W's rows, lx along the columns.
  // O side: re-shaped so that consecutive work-items walk O's rows (the tile's columns):
  // TILE_SIZE_Y ≤ work-group size, both powers of two.
  const int id = ly * WORK_GROUP_SIZE_X + lx;
  const int o_lane = id % TILE_SIZE_Y;
  const int o_first = id / TILE_SIZE_Y;
  const int o_step = WORK_GROUP_SIZE_X * WORK_GROUP_SIZE_Y / TILE_SIZE_Y;
#if CR == 0
  for (int y = ly; y < TILE_SIZE_Y; y += WORK_GROUP_SIZE_Y)
    tile[y][lx] = w[(tile_row + y) * w_columns + tile_column + lx];
  __syncthreads();
  for (int x = o_first; x < TILE_SIZE_X; x += o_step)
    o[(tile_column + x) * o_columns + tile_row + o_lane] = tile[o_lane][x];
#else
  for (int x = o_first; x < TILE_SIZE_X; x += o_step)
    tile[o_lane][x] = o[(tile_column + x) * o_columns + tile_row + o_lane];
  __syncthreads();
  for (int y = ly; y < TILE_SIZE_Y; y += WORK_GROUP_SIZE_Y)
    w[(tile_row + y) * w_columns + tile_column + lx] = tile[y][lx];
#endif

#else  // !LOCAL_MEM: each work-item moves VECTOR_TYPE elements per row, straight through.
  const int column = tile_column + lx * VECTOR_TYPE;
  for (int y = ly; y < TILE_SIZE_Y; y += WORK_GROUP_SIZE_Y) {
    const int row = tile_row + y;
    const int w_index = (row * w_columns + column) / VECTOR_TYPE;
    lanes_t lanes;
#if CR == 0
    lanes.vector = reinterpret_cast<const vector_t*>(w)[w_index];
    for (int k = 0; k < VECTOR_TYPE; ++k) o[(column + k) * o_columns + row] = lanes.element[k];
#else
    for (int k = 0; k < VECTOR_TYPE; ++k) lanes.element[k] = o[(column + k) * o_columns + row];
    reinterpret_cast<vector_t*>(w)[w_index] = lanes.vector;
#endif
  }
#endif
}
