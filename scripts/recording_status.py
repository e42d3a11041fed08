#!/usr/bin/env python3
"""How far the H200 recordings of data/h200/ have come, and the device time the rest needs.

Prints one markdown row per store (data/h200/*.db.gz): the space (`steer space --count` on the
benchmark's spec), configurations recorded, valid, with counters, with energy (and how many of
those over windows of 0.4 s or more), the profiler range the store records, the best time,
the device seconds per test as recorded, and the device seconds the rest of the space would
take at that rate (for a recording meant to be a sample, such as gemm_cube128, ignore it).
Issue #4's recordings that have no store yet get a row of their own, and gemm_full's goal is
a sample of 20,000 configurations, not its whole space: its row counts what the sample lacks.

Seconds per test come from the tests' timestamps: consecutive tests of one run are seconds
apart, runs are separated by gaps of over a minute; the rate is the runs' duration over their
tests. Only tests measured as the latest one was (with or without counters, with or without
energy) count, since the rest of the space will be recorded the same way: DGEMM's first tests
had energy windows, the later ones are timing only and about five times faster.

    python3 scripts/recording_status.py [--steer build/steer] [--data data/h200]
"""
import argparse
import datetime
import gzip
import json
import pathlib
import shutil
import sqlite3
import subprocess
import sys
import tempfile


# Issue #4's ground truth: every benchmark at its h200 size, exhaustively except gemm_full,
# whose goal is a uniform sample of this many configurations.
EXPECTED = ["coulomb_h200", "transpose_h200", "gemm_h200", "nbody_h200", "conv_h200", "dgemm_energy_h200",
            "gemm_full_h200"]
SAMPLE_GOALS = {"gemm_full_h200": 20_000}


def space_size(steer, spec):
    done = subprocess.run([steer, "space", str(spec), "--count", "--json"], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"recording_status: steer space {spec} failed: {done.stderr.strip()}")
    return json.loads(done.stdout)["count"]


def seconds_per_test(tests):
    """tests: (timestamp, how it was measured) pairs, None for a failed test (it gets neither
    counters nor energy however it was run). The mean gap before each test measured as the
    latest valid test was, or failed, within runs."""
    tests = sorted(((datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")), kind) for stamp, kind in tests),
                   key=lambda test: test[0])
    valid_kinds = [kind for _, kind in tests if kind is not None]
    if not valid_kinds:
        return float("nan")
    latest_kind = valid_kinds[-1]
    gaps = [(later - earlier).total_seconds() for (earlier, _), (later, kind) in zip(tests, tests[1:])
            if kind is None or kind == latest_kind]
    within_runs = [gap for gap in gaps if gap <= 60]  # a longer gap separates two runs
    return sum(within_runs) / len(within_runs) if within_runs else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steer", default="build/steer")
    parser.add_argument("--data", default="data/h200")
    args = parser.parse_args()
    root = pathlib.Path(__file__).resolve().parent.parent
    data = root / args.data
    stores = sorted(data.glob("*.db.gz"))
    if not stores:
        raise SystemExit(f"recording_status: no stores in {data}")
    print("| recording | size | space | recorded | valid | with counters | with energy (≥ 0.4 s) "
          "| range | best | s per test | rest of the space |")
    print("|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as scratch:
        for store in stores:
            db = pathlib.Path(scratch) / store.name[:-3]
            with gzip.open(store) as source, open(db, "wb") as target:
                shutil.copyfileobj(source, target)
            con = sqlite3.connect(db)
            spec_name, size = con.execute("select spec_name, problem_size from tunings").fetchone()
            recorded, valid, energy, long_windows, best = con.execute(
                "select count(*), sum(status = 'ok'), count(energy_joules_per_launch), "
                "sum(energy_window_s >= 0.4), min(case when status = 'ok' then median_ms end) from tests").fetchone()
            counters = con.execute("select count(distinct test_id) from counters").fetchone()[0]
            has_range = con.execute("select name from sqlite_master where name = 'steer_recording'").fetchone()
            profiler_range = (con.execute("select value from steer_recording where key = 'profiler_range'").fetchone()
                              if has_range else None)
            rate = seconds_per_test([(stamp, (profiled, measured_energy) if ok else None)
                                     for stamp, ok, profiled, measured_energy in con.execute(
                "select timestamp, status = 'ok', exists (select 1 from counters where test_id = tests.id), "
                "energy_joules_per_launch is not null from tests")])
            con.close()
            spec = root / "kernels" / spec_name / "spec.json"
            space = space_size(args.steer, spec) if spec.exists() else None
            stem = store.name[:-6]
            goal = min(space, SAMPLE_GOALS[stem]) if stem in SAMPLE_GOALS and space is not None else space
            rest = max(goal - recorded, 0) * rate if goal is not None else float("nan")
            shown_space = f"{space:,}" if space is not None else "? (no kernels/" + spec_name + ")"
            if goal is not None and goal != space:
                shown_space += f" (sample of {goal:,})"
            print(f"| {stem} | {size} | {shown_space} | {recorded:,} | {valid:,} "
                  f"| {counters:,} | {energy:,} ({long_windows or 0:,}) | {profiler_range[0] if profiler_range else '—'} "
                  f"| {best:.3f} ms | {rate:.2f} | {rest:,.0f} s |")
    recorded_stems = {store.name[:-6] for store in stores}
    for stem in EXPECTED:
        if stem in recorded_stems:
            continue
        name = stem[: -len("_h200")]
        spec = root / "kernels" / name / "spec.json"
        space = space_size(args.steer, spec) if spec.exists() else None
        shown_space = f"{space:,}" if space is not None else "?"
        if stem in SAMPLE_GOALS:
            shown_space += f" (sample of {SAMPLE_GOALS[stem]:,})"
        print(f"| {stem} (no store yet) | h200 | {shown_space} | 0 | 0 | 0 | 0 (0) | — | — | — | not measured yet |")


if __name__ == "__main__":
    sys.exit(main())
