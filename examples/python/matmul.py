#!/usr/bin/env python3
"""Tune a tiled matrix multiply (OpenCL) with Kernel Tuner's interface, run by Steer.

A Kernel Tuner script, ported by changing its import: `from kernel_tuner import tune_kernel`
became `from steer import tune_kernel`. Everything else is what Kernel Tuner takes: a kernel
file, a problem size that the grid divisors divide, numpy arguments and answer, restrictions
as strings, a strategy with max_fevals, a cache file, a GFLOP/s metric.

    python3 examples/python/matmul.py                      # 512 x 512, 30 configurations
    python3 examples/python/matmul.py --size 256 --fevals 10 --cache matmul
"""
import argparse
import os

import numpy as np

from steer import tune_kernel  # was: from kernel_tuner import tune_kernel


def tune(size=512, fevals=30, cache=None, quiet=False):
    problem_size = (size, size)
    A = np.random.rand(size, size).astype(np.float32)
    B = np.random.rand(size, size).astype(np.float32)
    C = np.zeros((size, size), dtype=np.float32)
    arguments = [C, A, B]
    answer = [A @ B, None, None]

    tune_params = {
        "block_size_x": [8, 16, 32],
        "block_size_y": [1, 2, 4, 8, 16],
        "tile_size_x": [1, 2, 4],
        "tile_size_y": [1, 2, 4],
        "tile_k": [8, 16, 32],
    }
    restrictions = [
        "block_size_x * block_size_y >= 32",
        "tile_size_x * tile_size_y <= 8",
        f"{size} % (block_size_x * tile_size_x) == 0 and {size} % (block_size_y * tile_size_y) == 0",
        "(block_size_y * tile_size_y + block_size_x * tile_size_x) * tile_k * 4 <= 16384",
    ]
    grid_div_x = ["block_size_x", "tile_size_x"]
    grid_div_y = ["block_size_y", "tile_size_y"]
    metrics = {"GFLOP/s": lambda p: 2 * size**3 / 1e9 / (p["time"] / 1e3)}

    kernel_file = os.path.join(os.path.dirname(os.path.abspath(__file__)), "matmul.cl")
    return tune_kernel("matmul_kernel", kernel_file, problem_size, arguments, tune_params,
                       grid_div_x=grid_div_x, grid_div_y=grid_div_y, restrictions=restrictions,
                       answer=answer, atol=1e-3, compiler_options=[f"-DWIDTH={size}"], lang="OpenCL",
                       strategy="random_sample", strategy_options={"max_fevals": fevals},
                       metrics=metrics, cache=cache, quiet=quiet)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--fevals", type=int, default=30)
    parser.add_argument("--cache", default=None)
    args = parser.parse_args()
    results, env = tune(args.size, args.fevals, args.cache)
    valid = [r for r in results if "__error__" not in r]
    print(f"{len(results)} configurations tested, {len(valid)} valid, on {env['device_name']}")
