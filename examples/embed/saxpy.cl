// y = a x + y, ITEMS elements per work-item, in work-groups of BLOCK.
__kernel void saxpy(const int n, const float a, __global const float* x, __global float* y) {
  const int first = get_global_id(0) * ITEMS;
  for (int i = 0; i < ITEMS; ++i) {
    const int j = first + i;
    if (j < n) y[j] = a * x[j] + y[j];
  }
}
