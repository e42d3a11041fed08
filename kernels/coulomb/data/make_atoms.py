#!/usr/bin/env python3
"""Writes the coulomb benchmark's atoms, the same 1024 atoms in both layouts the kernel reads:

  atoms.f32                  float4 per atom (x, y, z, charge), array of structures
  atoms_{x,y,z,w}.f32        one float per atom each, structure of arrays

Steer fills each buffer independently, so the two layouts can only agree when they come
from files; the spec's sizes use the first ATOMS atoms (at most 1024). Raw little-endian
float32. Atoms lie in [0, 128)³ (the paper's grid: 256 points, spacing 0.5), each
coordinate 0.05..0.45 away from the nearest multiple of 0.5, so no atom comes closer than
0.087 to a point of any grid whose spacing is a multiple of 0.5 (1/r stays below 11.6 and
float32 distances stay accurate). Charges are positive, uniform in [0.1, 1): the potential
has no cancellation, so its relative error is that of the float arithmetic.

Deterministic (Python's Mersenne Twister, seed 20261130): rerun to regenerate the files
byte for byte.
"""
import array
import pathlib
import random
import sys

CAPACITY = 1024
SEED = 20261130


def main() -> None:
    rng = random.Random(SEED)

    def coordinate() -> float:
        return 0.5 * rng.randrange(256) + rng.uniform(0.05, 0.45)

    atoms = [(coordinate(), coordinate(), coordinate(), rng.uniform(0.1, 1.0)) for _ in range(CAPACITY)]
    folder = pathlib.Path(__file__).resolve().parent
    if sys.byteorder != "little":
        raise SystemExit("writes little-endian floats: run on a little-endian machine")
    (folder / "atoms.f32").write_bytes(array.array("f", [c for atom in atoms for c in atom]).tobytes())
    for index, name in enumerate("xyzw"):
        (folder / f"atoms_{name}.f32").write_bytes(array.array("f", [atom[index] for atom in atoms]).tobytes())


if __name__ == "__main__":
    main()
