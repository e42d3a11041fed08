// 3D direct Coulomb summation: the electrostatic potential at every point of a regular grid,
// V(p) = Σ_a w_a / |p - r_a|, over all atoms a (position r_a, charge w_a).
// Twin of kernel.cl for NVRTC; the two differ only in the API spelling, except for
// USE_CONSTANT_MEMORY (see there).
//
// Each thread owns one grid column (x, y) and Z_ITERATIONS consecutive points along z. For
// every atom it computes dx² + dy² once and reuses it for its Z_ITERATIONS points, so a
// point costs one subtraction, one FMA, one rsqrt and one FMA per atom (the paper's
// Listing 1). Grid point (x, y, z) lies at spacing·(x, y, z); the output is stored x fastest.
// rsqrt runs on the SFU (16 per clock per SM on Hopper, a quarter of the FMA rate), which
// bounds the kernel at ~4.2·10¹² point-atom pairs/s on an H200.
//
// Parameters (set with -D):
//   WORK_GROUP_SIZE_X, WORK_GROUP_SIZE_Y, WORK_GROUP_SIZE_Z   the block shape, in grid columns
//                       (x fastest: consecutive threads store consecutive points).
//   Z_ITERATIONS        grid points per thread along z: the reuse of each atom load and of
//                       dx² + dy²; also the number of accumulators a thread keeps.
//   INNER_UNROLL_FACTOR unroll factor of the inner loop over the thread's Z_ITERATIONS points
//                       (`#pragma unroll INNER_UNROLL_FACTOR`); 0 writes no pragma and leaves
//                       it to the compiler. A partial unroll indexes the per-point arrays with
//                       a run-time index, which puts them in local memory: that is the cost
//                       this parameter lets the tuner find.
//   USE_SOA             0: atoms as an array of float4 (x, y, z, charge), one 16-byte load per
//                       atom; 1: as a structure of arrays (separate x, y, z, charge buffers).
//   VECTOR_SIZE         atoms per load: with USE_SOA, x, y, z and charge are read as floatN of
//                       VECTOR_SIZE consecutive atoms; with an array of float4, VECTOR_SIZE
//                       consecutive float4 are read per iteration. Atoms left over (a count not
//                       divisible by VECTOR_SIZE) are taken one by one.
//   USE_CONSTANT_MEMORY 1: read the atoms through the read-only/constant data path (__ldg,
//                       LDG.CONSTANT). CUDA's __constant__ memory can only be filled through a
//                       module symbol, and Steer hands kernels device pointers, so this is the
//                       nearest CUDA equivalent of kernel.cl's __constant buffers. 0: plain loads.
//
// Launch: grid (cdiv(gx, WGX), cdiv(gy, WGY), cdiv(gz, WGZ·Z_ITERATIONS)), block (WGX, WGY, WGZ).
// Any grid size works: columns outside the grid return, points beyond gz are not stored.

#define STEER_PRAGMA(x) _Pragma(#x)
#define STEER_UNROLL(n) STEER_PRAGMA(unroll n)

#if VECTOR_SIZE != 1 && VECTOR_SIZE != 2 && VECTOR_SIZE != 4
#error "VECTOR_SIZE must be 1, 2 or 4"
#endif

#if USE_CONSTANT_MEMORY
#define ATOM_LOAD(pointer) __ldg(pointer)
#else
#define ATOM_LOAD(pointer) (*(pointer))
#endif

// rsqrt with flush-to-zero, one MUFU.RSQ: the squared distances are ≥ (min distance)² and
// never denormal, so the denormal fix-up that plain rsqrtf() carries is wasted work here.
__device__ __forceinline__ float fast_rsqrt(float x) {
  float r;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

// Adds one atom's contribution to the thread's Z_ITERATIONS points.
__device__ __forceinline__ void add_atom(float (&energy)[Z_ITERATIONS], float px, float py, float pz0, float spacing,
                                         float ax, float ay, float az, float aw) {
  const float dx = px - ax;
  const float dy = py - ay;
  const float dxy2 = fmaf(dy, dy, dx * dx);
  float pz = pz0;  // exact: a multiple of the spacing
#if INNER_UNROLL_FACTOR > 0
  STEER_UNROLL(INNER_UNROLL_FACTOR)
#endif
  for (int k = 0; k < Z_ITERATIONS; ++k) {
    const float dz = pz - az;
    energy[k] = fmaf(aw, fast_rsqrt(fmaf(dz, dz, dxy2)), energy[k]);
    pz += spacing;
  }
}

extern "C" __global__ void __launch_bounds__(WORK_GROUP_SIZE_X * WORK_GROUP_SIZE_Y * WORK_GROUP_SIZE_Z)
coulomb(float* __restrict__ energy, const float4* atoms, const float* atoms_x, const float* atoms_y,
        const float* atoms_z, const float* atoms_w, const int num_atoms, const float spacing, const int grid_x,
        const int grid_y, const int grid_z) {
  const int x = blockIdx.x * WORK_GROUP_SIZE_X + threadIdx.x;
  const int y = blockIdx.y * WORK_GROUP_SIZE_Y + threadIdx.y;
  const int z0 = (blockIdx.z * WORK_GROUP_SIZE_Z + threadIdx.z) * Z_ITERATIONS;
  if (x >= grid_x || y >= grid_y) return;  // no barrier follows

  const float px = spacing * x, py = spacing * y, pz0 = spacing * z0;
  float e[Z_ITERATIONS];
#pragma unroll
  for (int k = 0; k < Z_ITERATIONS; ++k) e[k] = 0.0f;

  int a = 0;
#if VECTOR_SIZE > 1
  const int vector_end = num_atoms - num_atoms % VECTOR_SIZE;
  for (; a < vector_end; a += VECTOR_SIZE) {
    float ax[VECTOR_SIZE], ay[VECTOR_SIZE], az[VECTOR_SIZE], aw[VECTOR_SIZE];
#if USE_SOA
#if VECTOR_SIZE == 2
    const float2 vx = ATOM_LOAD(reinterpret_cast<const float2*>(atoms_x + a));
    const float2 vy = ATOM_LOAD(reinterpret_cast<const float2*>(atoms_y + a));
    const float2 vz = ATOM_LOAD(reinterpret_cast<const float2*>(atoms_z + a));
    const float2 vw = ATOM_LOAD(reinterpret_cast<const float2*>(atoms_w + a));
    ax[0] = vx.x, ax[1] = vx.y, ay[0] = vy.x, ay[1] = vy.y;
    az[0] = vz.x, az[1] = vz.y, aw[0] = vw.x, aw[1] = vw.y;
#else
    const float4 vx = ATOM_LOAD(reinterpret_cast<const float4*>(atoms_x + a));
    const float4 vy = ATOM_LOAD(reinterpret_cast<const float4*>(atoms_y + a));
    const float4 vz = ATOM_LOAD(reinterpret_cast<const float4*>(atoms_z + a));
    const float4 vw = ATOM_LOAD(reinterpret_cast<const float4*>(atoms_w + a));
    ax[0] = vx.x, ax[1] = vx.y, ax[2] = vx.z, ax[3] = vx.w;
    ay[0] = vy.x, ay[1] = vy.y, ay[2] = vy.z, ay[3] = vy.w;
    az[0] = vz.x, az[1] = vz.y, az[2] = vz.z, az[3] = vz.w;
    aw[0] = vw.x, aw[1] = vw.y, aw[2] = vw.z, aw[3] = vw.w;
#endif
#else
#pragma unroll
    for (int v = 0; v < VECTOR_SIZE; ++v) {
      const float4 atom = ATOM_LOAD(atoms + a + v);
      ax[v] = atom.x, ay[v] = atom.y, az[v] = atom.z, aw[v] = atom.w;
    }
#endif
#pragma unroll
    for (int v = 0; v < VECTOR_SIZE; ++v) add_atom(e, px, py, pz0, spacing, ax[v], ay[v], az[v], aw[v]);
  }
#endif
  for (; a < num_atoms; ++a) {
#if USE_SOA
    add_atom(e, px, py, pz0, spacing, ATOM_LOAD(atoms_x + a), ATOM_LOAD(atoms_y + a), ATOM_LOAD(atoms_z + a),
             ATOM_LOAD(atoms_w + a));
#else
    const float4 atom = ATOM_LOAD(atoms + a);
    add_atom(e, px, py, pz0, spacing, atom.x, atom.y, atom.z, atom.w);
#endif
  }

  // Coalesced along x; one slice of the grid apart per point.
  const long slice = static_cast<long>(grid_x) * grid_y;
  float* out = energy + z0 * slice + static_cast<long>(y) * grid_x + x;
#pragma unroll
  for (int k = 0; k < Z_ITERATIONS; ++k)
    if (z0 + k < grid_z) out[k * slice] = e[k];
}
