// One kernel, one fault per value of FAULT (spec.json says which). 0 and 6 are correct.
__kernel void faults(__global float* out, __global const float* in, const int n) {
  const int i = get_global_id(0);
#if FAULT == 1
  // Never finishes. The stores keep the loop from being optimised away.
  for (uint k = 0;; k = (k + 1) & 0xffff) out[i] = k;
#elif FAULT == 2
  // Writes terabytes past the buffer (work-item 0 alone stays inside it).
  out[(long)i << 40] = in[i];
#elif FAULT == 3
  this line is not OpenCL C;
#elif FAULT == 4
  // 4 MiB of local memory, more than a work-group may have.
  __local float scratch[1 << 20];
  scratch[get_local_id(0)] = in[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (i < n) out[i] = 2 * scratch[get_local_id(0)];
#elif FAULT == 5
  if (i < n) out[i] = 2 * in[i] + 1;  // wrong
#else
  if (i < n) out[i] = 2 * in[i];
#endif
}
