#!/usr/bin/env python3
"""Writes the nbody benchmark's bodies, the same 131072 bodies in both layouts the kernel reads:

  bodies.f32                 float4 per body (x, y, z, mass), array of structures
  body_{x,y,z,m}.f32         one float per body each, structure of arrays

Steer fills each buffer independently, so the two layouts can only agree when they come
from files; the spec's sizes use the first BODIES bodies (at most 131072). Raw
little-endian float32. Positions are uniform in [-1, 1)^3, masses uniform in [0.5, 1.5);
the spec scales the masses by G = 1 / BODIES, so that the total mass, and with it the
accelerations, stay of order 1 at every size.

Deterministic (Python's Mersenne Twister, seed 20261130): rerun to regenerate the files
byte for byte.
"""
import array
import pathlib
import random
import sys

CAPACITY = 131072
SEED = 20261130


def main() -> None:
    rng = random.Random(SEED)
    bodies = [(rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0), rng.uniform(0.5, 1.5))
              for _ in range(CAPACITY)]
    folder = pathlib.Path(__file__).resolve().parent
    if sys.byteorder != "little":
        raise SystemExit("writes little-endian floats: run on a little-endian machine")
    (folder / "bodies.f32").write_bytes(array.array("f", [c for body in bodies for c in body]).tobytes())
    for index, name in enumerate("xyzm"):
        (folder / f"body_{name}.f32").write_bytes(array.array("f", [body[index] for body in bodies]).tobytes())


if __name__ == "__main__":
    main()
