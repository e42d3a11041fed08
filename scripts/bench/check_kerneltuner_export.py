#!/usr/bin/env python3
"""Checks that Kernel Tuner accepts `steer export --format kerneltuner` as a cache file.

For a Steer store (default: data/h200/coulomb_h200.db.gz), exports its tuning as a Kernel
Tuner cache, then lets Kernel Tuner replay it in simulation mode with brute force (every
configuration once) through both of its entry points, tune_kernel (with the recorded
configurations as the only restriction) and tune_cache. It must serve every recorded
configuration from the cache, find the same best configuration and runtime as Steer (the
mean of the timed launches, Kernel Tuner's objective), and see the failed tests fail.
Exits non-zero with the reason when anything differs.

    python3 scripts/bench/check_kerneltuner_export.py --steer build/steer [STORE.db[.gz]]
"""
import argparse
import contextlib
import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("store", nargs="?", default=os.path.join(ROOT, "data", "h200", "coulomb_h200.db.gz"))
    parser.add_argument("--steer", default=os.path.join(ROOT, "build", "steer"))
    args = parser.parse_args()

    import kernel_tuner
    from constraint import FunctionConstraint

    with tempfile.TemporaryDirectory(prefix="steer-kt-export-") as workdir:
        db = os.path.join(workdir, "store.db")
        if args.store.endswith(".gz"):
            with gzip.open(args.store, "rb") as src, open(db, "wb") as dst:
                shutil.copyfileobj(src, dst)
        else:
            shutil.copy(args.store, db)
        cache_file = os.path.join(workdir, "cache.json")
        subprocess.run([args.steer, "export", "--db", db, "--format", "kerneltuner", "--out", cache_file], check=True)
        csv = subprocess.run([args.steer, "export", "--db", db, "--format", "csv"], check=True, capture_output=True,
                             text=True).stdout.splitlines()
        with open(cache_file) as f:
            cache = json.load(f)

        header = csv[0].split(",")
        names = cache["tune_params_keys"]
        if header[: len(names)] != names:
            fail(f"parameters {names} differ from the store's {header[:len(names)]}")
        status, mean = header.index("status"), header.index("mean_ms")
        steer_ok = {}
        steer_failed = set()
        for line in csv[1:]:  # numeric parameters and statuses only: no quoting to undo in these stores
            row = line.split(",")
            key = ",".join(row[: len(names)])
            if row[status] == "ok":
                steer_ok[key] = float(row[mean])
            else:
                steer_failed.add(key)
        recorded = set(cache["cache"])
        if len(recorded) != len(csv) - 1:
            fail(f"{len(recorded)} cache entries for {len(csv) - 1} tests in the store")

        def in_recording(*values):
            return ",".join(str(v) for v in values) in recorded

        size = cache["problem_size"]
        problem_size = tuple(size) if isinstance(size, list) else size
        runs = {
            "tune_kernel": lambda: kernel_tuner.tune_kernel(
                cache["kernel_name"], "", problem_size, [], cache["tune_params"],
                restrictions=[FunctionConstraint(in_recording)], cache=cache_file, simulation_mode=True,
                strategy="brute_force", quiet=True),
        }
        if not isinstance(size, str):  # tune_cache cannot infer a textual problem size
            runs["tune_cache"] = lambda: kernel_tuner.tune_cache(cache_file, strategy="brute_force", quiet=True)
        for entry_point, run in runs.items():
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                warnings.simplefilter("ignore")
                results, env = run()
            served = {",".join(str(r[n]) for n in names): r for r in results}
            expected = recorded if entry_point == "tune_kernel" else set(steer_ok)  # tune_cache: valid ones
            if set(served) != expected:
                fail(f"{entry_point}: Kernel Tuner served {len(served)} configurations, expected {len(expected)}")
            failed = {k for k, r in served.items() if "__error__" in r}
            if failed != steer_failed & set(served):
                fail(f"{entry_point}: Kernel Tuner sees {len(failed)} failed tests, Steer {len(steer_failed)}")
            best = env["best_config"]
            best_key = ",".join(str(best[n]) for n in names)
            steer_best = min(steer_ok, key=steer_ok.get)
            if best_key != steer_best or best["time"] != steer_ok[steer_best]:
                fail(f"{entry_point}: Kernel Tuner's best {best_key} ({best['time']} ms) is not Steer's "
                     f"{steer_best} ({steer_ok[steer_best]} ms)")
            print(f"{entry_point}: Kernel Tuner {kernel_tuner.__version__} replayed {len(served)} configurations "
                  f"({len(failed)} failed) from the exported cache; best {best_key} at {best['time']:.4f} ms, "
                  "as in the store")


if __name__ == "__main__":
    main()
