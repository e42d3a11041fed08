// 3D direct Coulomb summation: the electrostatic potential at every point of a regular grid,
// V(p) = Σ_a w_a / |p - r_a|, over all atoms a (position r_a, charge w_a).
// Twin of kernel.cu; the two differ only in the API spelling, except for
// USE_CONSTANT_MEMORY (see there).
//
// Each thread owns one grid column (x, y) and Z_ITERATIONS consecutive points along z. For
// every atom it computes dx² + dy² once and reuses it for its Z_ITERATIONS points, so a
// point costs one subtraction, one FMA, one rsqrt and one FMA per atom (the paper's
// Listing 1). Grid point (x, y, z) lies at spacing·(x, y, z); the output is stored x fastest.
//
// Parameters (set with -D):
//   WORK_GROUP_SIZE_X, WORK_GROUP_SIZE_Y, WORK_GROUP_SIZE_Z   the work-group shape, in grid
//                       columns (x fastest: consecutive work-items store consecutive points).
//   Z_ITERATIONS        grid points per work-item along z: the reuse of each atom load and of
//                       dx² + dy²; also the number of accumulators a work-item keeps.
//   INNER_UNROLL_FACTOR unroll factor of the inner loop over the work-item's Z_ITERATIONS
//                       points (`#pragma unroll INNER_UNROLL_FACTOR`); 0 writes no pragma and
//                       leaves it to the compiler. A partial unroll indexes the per-point arrays
//                       with a run-time index, which puts them in private (off-register) memory.
//   USE_SOA             0: atoms as an array of float4 (x, y, z, charge), one 16-byte load per
//                       atom; 1: as a structure of arrays (separate x, y, z, charge buffers).
//   VECTOR_SIZE         atoms per load: with USE_SOA, x, y, z and charge are read as floatN of
//                       VECTOR_SIZE consecutive atoms; with an array of float4, VECTOR_SIZE
//                       consecutive float4 are read per iteration. Atoms left over (a count not
//                       divisible by VECTOR_SIZE) are taken one by one.
//   USE_CONSTANT_MEMORY 1: the atom buffers of the layout in use are __constant (they must fit
//                       the device's CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE: 64 KiB is 4096 atoms as
//                       float4); 0: __global.
//
// Launch: global size (cdiv(gx, WGX)·WGX, cdiv(gy, WGY)·WGY, cdiv(gz, WGZ·Z_ITERATIONS)·WGZ),
// work-group (WGX, WGY, WGZ). Any grid size works: columns outside the grid return, points
// beyond gz are not stored.

#define STEER_PRAGMA(x) _Pragma(#x)
#define STEER_UNROLL(n) STEER_PRAGMA(unroll n)

#if VECTOR_SIZE == 1
typedef float vector_t;
#elif VECTOR_SIZE == 2
typedef float2 vector_t;
#elif VECTOR_SIZE == 4
typedef float4 vector_t;
#else
#error "VECTOR_SIZE must be 1, 2 or 4"
#endif

// Only the layout in use goes to constant memory (devices allow few, small constant buffers).
#if USE_CONSTANT_MEMORY && !USE_SOA
#define AOS_SPACE __constant
#else
#define AOS_SPACE __global const
#endif
#if USE_CONSTANT_MEMORY && USE_SOA
#define SOA_SPACE __constant
#else
#define SOA_SPACE __global const
#endif

// Adds one atom's contribution to the work-item's Z_ITERATIONS points.
#define ADD_ATOM(ax, ay, az, aw)                           \
  do {                                                     \
    const float dx = px - (ax);                            \
    const float dy = py - (ay);                            \
    const float dxy2 = fma(dy, dy, dx * dx);               \
    const float atom_z = (az), atom_w = (aw);              \
    float pz = pz0; /* exact: a multiple of the spacing */ \
    INNER_UNROLL                                           \
    for (int k = 0; k < Z_ITERATIONS; ++k) {               \
      const float dz = pz - atom_z;                        \
      e[k] = fma(atom_w, rsqrt(fma(dz, dz, dxy2)), e[k]);  \
      pz += spacing;                                       \
    }                                                      \
  } while (0)

#if INNER_UNROLL_FACTOR > 0
#define INNER_UNROLL STEER_UNROLL(INNER_UNROLL_FACTOR)
#else
#define INNER_UNROLL
#endif

__kernel __attribute__((reqd_work_group_size(WORK_GROUP_SIZE_X, WORK_GROUP_SIZE_Y, WORK_GROUP_SIZE_Z)))
void coulomb(__global float* restrict energy, AOS_SPACE float4* restrict atoms, SOA_SPACE float* restrict atoms_x,
             SOA_SPACE float* restrict atoms_y, SOA_SPACE float* restrict atoms_z, SOA_SPACE float* restrict atoms_w,
             const int num_atoms, const float spacing, const int grid_x, const int grid_y, const int grid_z) {
  const int x = get_global_id(0);
  const int y = get_global_id(1);
  const int z0 = get_global_id(2) * Z_ITERATIONS;
  if (x >= grid_x || y >= grid_y) return;  // no barrier follows

  const float px = spacing * x, py = spacing * y, pz0 = spacing * z0;
  float e[Z_ITERATIONS];
#pragma unroll
  for (int k = 0; k < Z_ITERATIONS; ++k) e[k] = 0.0f;

  int a = 0;
#if VECTOR_SIZE > 1
  const int vector_end = num_atoms - num_atoms % VECTOR_SIZE;
  for (; a < vector_end; a += VECTOR_SIZE) {
#if USE_SOA
    const vector_t vx = *(SOA_SPACE vector_t*)(atoms_x + a);
    const vector_t vy = *(SOA_SPACE vector_t*)(atoms_y + a);
    const vector_t vz = *(SOA_SPACE vector_t*)(atoms_z + a);
    const vector_t vw = *(SOA_SPACE vector_t*)(atoms_w + a);
    ADD_ATOM(vx.s0, vy.s0, vz.s0, vw.s0);
    ADD_ATOM(vx.s1, vy.s1, vz.s1, vw.s1);
#if VECTOR_SIZE == 4
    ADD_ATOM(vx.s2, vy.s2, vz.s2, vw.s2);
    ADD_ATOM(vx.s3, vy.s3, vz.s3, vw.s3);
#endif
#else
    float4 atom[VECTOR_SIZE];
#pragma unroll
    for (int v = 0; v < VECTOR_SIZE; ++v) atom[v] = atoms[a + v];
#pragma unroll
    for (int v = 0; v < VECTOR_SIZE; ++v) ADD_ATOM(atom[v].x, atom[v].y, atom[v].z, atom[v].w);
#endif
  }
#endif
  for (; a < num_atoms; ++a) {
#if USE_SOA
    ADD_ATOM(atoms_x[a], atoms_y[a], atoms_z[a], atoms_w[a]);
#else
    const float4 atom = atoms[a];
    ADD_ATOM(atom.x, atom.y, atom.z, atom.w);
#endif
  }

  // Coalesced along x; one slice of the grid apart per point.
  const long slice = (long)grid_x * grid_y;
  __global float* out = energy + z0 * slice + (long)y * grid_x + x;
#pragma unroll
  for (int k = 0; k < Z_ITERATIONS; ++k)
    if (z0 + k < grid_z) out[k * slice] = e[k];
}
