#!/usr/bin/env python3
"""Writes a copy of kernels/<name>/spec.json whose parameters keep only the values of a
neighbourhood from seeds.json, next to the original (sources and data files are resolved
relative to the spec's folder). Prints the new spec's path; exits 3 when the kernel has
no seed. Usage: pin_spec.py SPEC SEEDS NAME OUTPUT"""
import json
import sys


def main() -> int:
    spec_path, seeds_path, name, output = sys.argv[1:5]
    seeds = json.load(open(seeds_path))
    if name not in seeds:
        return 3
    seed = seeds[name]
    spec = json.load(open(spec_path))
    names = {p["name"] for p in spec["parameters"]}
    unknown = sorted(set(seed) - names)
    if unknown:
        print(f"pin_spec: {name}: unknown parameters {unknown}", file=sys.stderr)
        return 2
    for p in spec["parameters"]:
        if p["name"] in seed:
            p["values"] = list(seed[p["name"]])
    spec["description"] = [f"limits.sh: {name} pinned to a neighbourhood of known-good configurations"]
    spec.pop("$schema", None)
    with open(output, "w") as f:
        json.dump(spec, f, indent=1)
    print(output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
