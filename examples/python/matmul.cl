// C = A B for square, row-major matrices of WIDTH x WIDTH floats (WIDTH a multiple of every
// block's rows and columns, and of tile_k).
//
// A work-group of block_size_x x block_size_y work-items computes a block of
// (block_size_y * tile_size_y) rows and (block_size_x * tile_size_x) columns of C; each
// work-item computes tile_size_y x tile_size_x of its elements, strided by the work-group's
// extent so that neighbouring work-items touch neighbouring memory. The slices of A and B that
// the block needs pass through local memory tile_k columns (of A) and rows (of B) at a time,
// loaded by all work-items together.
#define BLOCK_ROWS (block_size_y * tile_size_y)
#define BLOCK_COLS (block_size_x * tile_size_x)

__kernel __attribute__((reqd_work_group_size(block_size_x, block_size_y, 1)))
void matmul_kernel(__global float *C, __global const float *A, __global const float *B) {
  __local float a_slice[BLOCK_ROWS][tile_k];
  __local float b_slice[tile_k][BLOCK_COLS];
  const int lx = get_local_id(0);
  const int ly = get_local_id(1);
  const int local_index = ly * block_size_x + lx;
  const int work_items = block_size_x * block_size_y;
  const int row0 = get_group_id(1) * BLOCK_ROWS;
  const int col0 = get_group_id(0) * BLOCK_COLS;

  float sum[tile_size_y][tile_size_x];
  for (int i = 0; i < tile_size_y; i++) {
    for (int j = 0; j < tile_size_x; j++) sum[i][j] = 0.0f;
  }

  for (int k0 = 0; k0 < WIDTH; k0 += tile_k) {
    for (int e = local_index; e < BLOCK_ROWS * tile_k; e += work_items) {
      a_slice[e / tile_k][e % tile_k] = A[(row0 + e / tile_k) * WIDTH + k0 + e % tile_k];
    }
    for (int e = local_index; e < tile_k * BLOCK_COLS; e += work_items) {
      b_slice[e / BLOCK_COLS][e % BLOCK_COLS] = B[(k0 + e / BLOCK_COLS) * WIDTH + col0 + e % BLOCK_COLS];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < tile_k; k++) {
      for (int i = 0; i < tile_size_y; i++) {
        const float a = a_slice[ly + i * block_size_y][k];
        for (int j = 0; j < tile_size_x; j++) sum[i][j] += a * b_slice[k][lx + j * block_size_x];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  for (int i = 0; i < tile_size_y; i++) {
    for (int j = 0; j < tile_size_x; j++) {
      C[(row0 + ly + i * block_size_y) * WIDTH + col0 + lx + j * block_size_x] = sum[i][j];
    }
  }
}
