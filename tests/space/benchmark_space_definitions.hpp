#pragma once
// The reference benchmark spaces, written from the benchmarks' published parameter lists and
// rules (the comments below say how each was read; for pnpoly, data/recordings/PROVENANCE.md)
// as specifications for the space tests. The benchmark programs keep their own copy
// (bench/benchmark_spaces.hpp) so that a change there cannot silently change what these
// tests check.
#include <string>
#include <vector>

#include "steer/space.hpp"

namespace steer::test_spaces {

inline std::vector<Value> ints(std::initializer_list<int> values) {
  return std::vector<Value>(values.begin(), values.end());
}

inline std::vector<Value> int_range(int first, int last) {  // inclusive
  std::vector<Value> values;
  for (int v = first; v <= last; ++v) values.emplace_back(v);
  return values;
}

inline SpaceDefinition coulomb() {
  SpaceDefinition d;
  d.add_parameter("WORK_GROUP_SIZE_X", ints({16, 32}));
  d.add_parameter("WORK_GROUP_SIZE_Y", ints({1, 2, 4, 8}));
  d.add_parameter("WORK_GROUP_SIZE_Z", ints({1}));
  d.add_parameter("Z_ITERATIONS", ints({1, 2, 4, 8, 16, 32}));
  d.add_parameter("INNER_UNROLL_FACTOR", ints({0, 1, 2, 4, 8, 16, 32}));
  d.add_parameter("USE_CONSTANT_MEMORY", ints({0}));
  d.add_parameter("USE_SOA", ints({0, 1}));
  d.add_parameter("VECTOR_SIZE", ints({1}));
  d.add_constraint("INNER_UNROLL_FACTOR < Z_ITERATIONS");
  d.add_constraint("WORK_GROUP_SIZE_X * WORK_GROUP_SIZE_Y >= 64");
  return d;
}

inline SpaceDefinition transpose() {
  SpaceDefinition d;
  const std::vector<Value> sizes = ints({1, 2, 4, 8, 16, 32, 64});
  d.add_parameter("VECTOR_TYPE", ints({1, 2, 4}));
  d.add_parameter("CR", ints({0, 1}));
  d.add_parameter("LOCAL_MEM", ints({0, 1}));
  d.add_parameter("PADD_LOCAL", ints({0, 1}));
  d.add_parameter("WORK_GROUP_SIZE_X", sizes);
  d.add_parameter("WORK_GROUP_SIZE_Y", sizes);
  d.add_parameter("TILE_SIZE_X", sizes);
  d.add_parameter("TILE_SIZE_Y", sizes);
  d.add_parameter("DIAGONAL_MAP", ints({0, 1}));
  d.add_constraint("TILE_SIZE_X == WORK_GROUP_SIZE_X");
  d.add_constraint("WORK_GROUP_SIZE_Y <= TILE_SIZE_Y and TILE_SIZE_Y % WORK_GROUP_SIZE_Y == 0");
  d.add_constraint("not LOCAL_MEM or TILE_SIZE_Y <= WORK_GROUP_SIZE_X * WORK_GROUP_SIZE_Y");
  d.add_constraint("LOCAL_MEM or not PADD_LOCAL");
  d.add_constraint("not LOCAL_MEM or VECTOR_TYPE == 1");
  d.add_constraint("TILE_SIZE_X * VECTOR_TYPE <= 64");
  d.add_constraint("WORK_GROUP_SIZE_X * WORK_GROUP_SIZE_Y >= 32");
  return d;
}

// CLBlast xgemm; `full` is the CLTune space with the CUDA vector widths.
inline SpaceDefinition gemm(bool full) {
  SpaceDefinition d;
  const std::vector<Value> tile = full ? ints({16, 32, 64, 128}) : ints({16, 32, 64});
  const std::vector<Value> dims = ints({8, 16, 32});
  const std::vector<Value> off_on = full ? ints({0, 1}) : ints({0});
  d.add_parameter("MWG", tile);
  d.add_parameter("NWG", tile);
  d.add_parameter("KWG", full ? ints({16, 32}) : ints({32}));
  d.add_parameter("MDIMC", dims);
  d.add_parameter("NDIMC", dims);
  d.add_parameter("MDIMA", dims);
  d.add_parameter("NDIMB", dims);
  d.add_parameter("KWI", full ? ints({2, 8}) : ints({2}));
  d.add_parameter("VWM", ints({1, 2, 4}));
  d.add_parameter("VWN", ints({1, 2, 4}));
  d.add_parameter("STRM", off_on);
  d.add_parameter("STRN", off_on);
  d.add_parameter("SA", ints({0, 1}));
  d.add_parameter("SB", ints({0, 1}));
  d.add_parameter("PRECISION", ints({32}));
  d.add_constraint("KWG % KWI == 0");
  d.add_constraint("MWG % (MDIMC * VWM) == 0");
  d.add_constraint("NWG % (NDIMC * VWN) == 0");
  d.add_constraint("MWG % (MDIMA * VWM) == 0");
  d.add_constraint("NWG % (NDIMB * VWN) == 0");
  // True division, as in the Python of Kernel Tuner; the operands are powers of two, so
  // the quotient is exact.
  d.add_constraint("KWG % ((MDIMC * NDIMC) / MDIMA) == 0");
  d.add_constraint("KWG % ((MDIMC * NDIMC) / NDIMB) == 0");
  return d;
}

inline SpaceDefinition nbody() {
  SpaceDefinition d;
  const std::vector<Value> unroll = ints({0, 1, 2, 4, 8, 16, 32});
  d.add_parameter("WORK_GROUP_SIZE_X", ints({64, 128, 256, 512}));
  d.add_parameter("OUTER_UNROLL_FACTOR", ints({1, 2, 4, 8}));
  d.add_parameter("INNER_UNROLL_FACTOR1", unroll);
  d.add_parameter("INNER_UNROLL_FACTOR2", unroll);
  d.add_parameter("USE_SOA", ints({0, 1}));
  d.add_parameter("LOCAL_MEM", ints({0, 1}));
  d.add_parameter("USE_CONSTANT_MEMORY", ints({0}));
  d.add_parameter("VECTOR_TYPE", ints({1, 2, 4}));
  d.add_constraint("INNER_UNROLL_FACTOR2 <= OUTER_UNROLL_FACTOR");
  d.add_constraint("INNER_UNROLL_FACTOR1 * INNER_UNROLL_FACTOR2 <= 256");
  d.add_constraint("(VECTOR_TYPE == 1 and USE_SOA == 0) or USE_SOA == 1");
  return d;
}

// How the conv rules were read (this reading gives 5,248):
//  - TBX_XL and TBY_XL list every integer in 8..26, 32..42 and 64..74: 19 + 11 + 11 = 41
//    values each (the ranges hold every TBX + halo the rules can ask for, so the count does
//    not depend on the exact ranges as long as they do).
//  - "LOCAL == 2 => TBX_XL == TBX + ceil(6/WPTX), otherwise TBX_XL == TBX": one
//    conditional equality per axis; 6/WPTX is true division (6/4 = 1.5 -> halo 2).
//  - "LOCAL == 2 => 6 % VECTOR == 0 and WPTX % VECTOR == 0, otherwise WPTX % VECTOR == 0":
//    with LOCAL == 2, VECTOR must divide both the halo width 6 and WPTX (so VECTOR 4 is
//    out); otherwise only WPTX. Reading the first clause as applying to WPTX alone (dropping
//    "6 % VECTOR == 0") gives 5,760 instead.
//  - "PADDING == 0 || LOCAL != 0", "TBX % WPTX == 0", "TBY % WPTY == 0" as written.
inline SpaceDefinition conv() {
  SpaceDefinition d;
  std::vector<Value> with_halo = int_range(8, 26);
  for (int v = 32; v <= 42; ++v) with_halo.emplace_back(v);
  for (int v = 64; v <= 74; ++v) with_halo.emplace_back(v);
  const std::vector<Value> block = ints({8, 16, 32, 64});
  const std::vector<Value> work = ints({1, 2, 4, 8});
  d.add_parameter("TBX", block);
  d.add_parameter("TBY", block);
  d.add_parameter("LOCAL", ints({0, 1, 2}));
  d.add_parameter("WPTX", work);
  d.add_parameter("WPTY", work);
  d.add_parameter("VECTOR", ints({1, 2, 4}));
  d.add_parameter("UNROLL_FACTOR", ints({1, 7}));
  d.add_parameter("PADDING", ints({0, 1}));
  d.add_parameter("TBX_XL", with_halo);
  d.add_parameter("TBY_XL", with_halo);
  d.add_constraint("TBX_XL == (TBX + ceil(6 / WPTX) if LOCAL == 2 else TBX)");
  d.add_constraint("TBY_XL == (TBY + ceil(6 / WPTY) if LOCAL == 2 else TBY)");
  d.add_constraint("(6 % VECTOR == 0 and WPTX % VECTOR == 0) if LOCAL == 2 else WPTX % VECTOR == 0");
  d.add_constraint("PADDING == 0 or LOCAL != 0");
  d.add_constraint("TBX % WPTX == 0");
  d.add_constraint("TBY % WPTY == 0");
  return d;
}

// benchmark_hub's pnpoly: tile_size "{1, 2, 4, ..., 20}" is 1 and the even numbers to 20
// (11 values), which with no constraints gives 4 * 31 * 11 * 3 = 4,092.
inline SpaceDefinition pnpoly() {
  SpaceDefinition d;
  d.add_parameter("between_method", ints({0, 1, 2, 3}));
  d.add_parameter("block_size_x", "[32*i for i in range(1, 32)]");
  d.add_parameter("tile_size", "[1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20]");
  d.add_parameter("use_method", ints({0, 1, 2}));
  return d;
}

}  // namespace steer::test_spaces
