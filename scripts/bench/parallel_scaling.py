#!/usr/bin/env python3
"""Scaling of tuning over several devices, in replay on the simulated clock.

For each H200 recording and searcher, `steer simulate --devices N` for N in 1, 2, 4, 8, 16
and 64: the mean simulated time to the first configuration within 1.1x of the best, over
--runs seeds, and the speed-up against one device. Prints a Markdown table per searcher
(every kernel, and the geometric mean of the speed-ups over kernels) and, with --plot, draws
the mean speed-ups against N (matplotlib).

    python3 scripts/bench/parallel_scaling.py --binary build/steer --runs 100 --plot docs/parallel_scaling.png

`guided`, the counter-guided searcher, runs with the counter model (and source recording) that
scripts/bench/counter_guided_table.py gives each H200 recording: a tree model trained on
another GPU's or input's recording where one exists (coulomb: the RTX 2080 Ti's; gemm: gemm
at 128^3, also its source), else on the recording itself.
"""
import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "bench"))
import counter_guided_table  # noqa: E402  (the model and source each recording's guided run gets)
KERNELS = ["conv", "coulomb", "gemm", "nbody", "transpose"]
SEARCHERS = ["default", "random", "bayes", "basin-hopping", "annealing", "mls", "ils", "mcmc", "starchart"]
DEVICES = [1, 2, 4, 8, 16, 64]


def guided_arguments(binary, recording, work):
    """--model and settings for `guided` on `recording`, as counter_guided_table.py pairs them."""
    table = counter_guided_table
    for pair in table.PAIRS:
        tuned, model_data, compute_bound = pair[:3]
        if Path(tuned).name != Path(recording).name:
            continue
        source = pair[3] if len(pair) > 3 else model_data
        model = Path(work) / (table.stem(model_data) + ".tree.json")
        if not model.exists():
            subprocess.run([binary, "model", "train", "--data", str(ROOT / model_data), "--out", str(model)],
                           check=True, capture_output=True)
        arguments = ["--model", str(model)]
        if compute_bound:
            arguments += ["--set", "guided.compute_bound=true"]
        arguments += ["--set", f"guided.source={ROOT / source}" if source else "guided.source=none"]
        return arguments
    raise SystemExit(f"no counter model is paired with {recording} (scripts/bench/counter_guided_table.py)")


def simulate(binary, recording, searchers, devices, runs, target, searcher_time, work):
    times = {}
    # With a model, `default` would be guided: guided runs on its own.
    groups = [[s for s in searchers if s != "guided"], [s for s in searchers if s == "guided"]]
    for group in groups:
        if not group:
            continue
        command = [binary, "simulate", "--data", str(recording), "--devices", str(devices), "--runs", str(runs),
                   "--target", str(target), "--no-score", "--json"]
        if not searcher_time:
            command.append("--no-searcher-time")
        if group == ["guided"]:
            command += guided_arguments(binary, recording, work)
        for s in group:
            command += ["--searcher", s]
        out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        times.update({s["name"]: s["mean_time_s"] for s in json.loads(out)["searchers"]})
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=str(ROOT / "build" / "steer"))
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--target", type=float, default=1.1)
    parser.add_argument("--searcher", action="append", help="searchers (default: %s)" % ", ".join(SEARCHERS))
    parser.add_argument("--kernel", action="append", help="kernels (default: %s)" % ", ".join(KERNELS))
    parser.add_argument("--devices", type=int, action="append", help="device counts (default: %s)" % DEVICES)
    parser.add_argument("--searcher-time", action="store_true",
                        help="charge the searchers' own computation, as measured here, to the simulated clock")
    parser.add_argument("--plot", help="write a PNG of the mean speed-ups")
    args = parser.parse_args()
    if args.plot:
        try:  # checked first, so that a missing matplotlib does not end the run after the tables
            import matplotlib  # noqa: F401
        except ImportError as error:
            sys.exit(f"parallel_scaling.py: --plot needs matplotlib ({error}); run scripts/setup, which installs it for /usr/bin/python3")
    searchers = args.searcher or SEARCHERS
    kernels = args.kernel or KERNELS
    devices = args.devices or DEVICES

    times = {}  # (kernel, n) -> {searcher: seconds}
    with tempfile.TemporaryDirectory(prefix="steer_scaling_") as work:  # guided's models
        for kernel in kernels:
            recording = ROOT / "data" / "h200" / f"{kernel}_h200.db.gz"
            for n in devices:
                times[kernel, n] = simulate(args.binary, recording, searchers, n, args.runs, args.target,
                                            args.searcher_time, work)
                print(f"{kernel} N={n} done", file=sys.stderr)

    mean_speedup = {}
    for s in searchers:
        print(f"\n### {s}\n")
        print("| kernel | " + " | ".join(f"N={n}" for n in devices) + " |")
        print("|---|" + "---|" * len(devices))
        logs = {n: [] for n in devices}
        for kernel in kernels:
            base = times[kernel, devices[0]][s]
            cells = []
            for n in devices:
                t = times[kernel, n][s]
                speedup = base / t if t and t > 0 else float("nan")
                logs[n].append(math.log(speedup))
                cells.append(f"{t:.3g} s ({speedup:.2f}×)")
            print(f"| {kernel} | " + " | ".join(cells) + " |")
        mean_speedup[s] = [math.exp(sum(logs[n]) / len(logs[n])) for n in devices]
        print("| geometric mean speed-up | " + " | ".join(f"{v:.2f}× ({v / n:.2f}·N)" for v, n in
                                                        zip(mean_speedup[s], devices)) + " |")

    print("\n### Geometric mean speed-up over the kernels\n")
    print("| searcher | " + " | ".join(f"N={n}" for n in devices) + " |")
    print("|---|" + "---|" * len(devices))
    for s in searchers:
        print(f"| {s} | " + " | ".join(f"{v:.2f}" for v in mean_speedup[s]) + " |")

    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(7, 5))
        ax.plot(devices, devices, "k--", linewidth=1, label="ideal (N)")
        ax.plot(devices, [0.8 * n for n in devices], "k:", linewidth=1, label="0.8·N")
        for s in searchers:
            ax.plot(devices, mean_speedup[s], marker="o", label=s)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xticks(devices)
        ax.set_xticklabels([str(n) for n in devices])
        ax.set_xlabel("devices (simulated H200s)")
        ax.set_ylabel(f"speed-up of the time to within {args.target}× of the best")
        ax.set_title("Tuning on N devices, replayed (geometric mean over %d kernels)" % len(kernels))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)


if __name__ == "__main__":
    main()
