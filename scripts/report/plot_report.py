#!/usr/bin/env python3
"""Draws the plots of a `steer report` folder: python3 plot_report.py DIR.

`steer report` computes everything and writes it as CSV into DIR, with DIR/report.json
listing the plots to draw ({"title", "plots": [{"name", "kind", "csv", "title", "xlabel",
"ylabel", ...}]}). This script only draws: each plot becomes DIR/NAME.png and DIR/NAME.svg.
Kinds: convergence (best so far vs tests or simulated time, mean with a +-1 std band),
tests_to_target (box plot and cumulative fraction of runs), histogram, order, pareto.
Needs matplotlib and numpy (Debian: python3-matplotlib, python3-numpy; scripts/setup).
"""
import csv
import json
import math
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
except ImportError as error:  # steer report checks first; this is for running the script by hand
    sys.exit(f"plot_report.py: needs matplotlib and numpy ({error}); run scripts/setup")

plt.rcParams.update({"svg.hashsalt": "steer", "figure.dpi": 100, "axes.grid": True, "grid.alpha": 0.3})


def number(text):
    return float(text) if text not in ("", None) else math.nan


def read_rows(folder, name):
    with open(os.path.join(folder, name), newline="") as f:
        return list(csv.DictReader(f))


def ordered(values):
    """Distinct values in order of first appearance."""
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def wide(values, factor):
    """True when the positive values span more than `factor`: a log axis reads better."""
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    return len(positive) > 1 and max(positive) > factor * min(positive)


def colours(names):
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return {name: cycle[i % len(cycle)] for i, name in enumerate(names)}


def convergence(folder, plot, ax):
    rows = [r for r in read_rows(folder, plot["csv"]) if r["axis"] == plot["axis"] and r["mean_best_ms"] != ""]
    names = ordered(r["searcher"] for r in rows)
    colour = colours(names)
    xs_all, ys_all = [], []
    band_alpha = 0.15 if len(names) <= 4 else 0.07  # many overlapping bands would hide the lines
    for name in names:
        mine = [r for r in rows if r["searcher"] == name]
        x = np.array([number(r["x"]) for r in mine])
        mean = np.array([number(r["mean_best_ms"]) for r in mine])
        std = np.array([number(r["std_best_ms"]) for r in mine])
        ax.plot(x, mean, label=name, color=colour[name], linewidth=1.4, drawstyle="steps-post")
        ax.fill_between(x, mean - std, mean + std, color=colour[name], alpha=band_alpha, step="post", linewidth=0)
        xs_all.extend(x)
        ys_all.extend(mean)
    for key, style, label in (("best_ms", ":", "best in the space"), ("target_ms", "--", "target")):
        if plot.get(key) is not None:
            ax.axhline(plot[key], color="black", linestyle=style, linewidth=0.9, label=label)
            ys_all.append(plot[key])
    if wide(xs_all, 100):
        ax.set_xscale("log")
    if wide(ys_all, 20):
        ax.set_yscale("log")
    ax.legend(fontsize="small", ncol=2)


def score(folder, plot, ax):
    rows = [r for r in read_rows(folder, plot["csv"]) if r["axis"] == plot["axis"] and r["score"] != ""]
    names = ordered(r["searcher"] for r in rows)
    # Steer's searchers solid, another tool's runs ("tool:strategy") dashed; 20 colours.
    cycle = plt.get_cmap("tab20").colors if len(names) > 10 else None
    colour = {n: cycle[i % 20] for i, n in enumerate(names)} if cycle else colours(names)
    for name in names:
        mine = [r for r in rows if r["searcher"] == name]
        ax.plot([number(r["x"]) for r in mine], [number(r["score"]) for r in mine], label=name, color=colour[name],
                linewidth=1.4, linestyle="--" if ":" in name else "-")
    ax.axhline(0, color="black", linestyle="--", linewidth=0.9, label="random search (calculated)")
    ax.axhline(1, color="black", linestyle=":", linewidth=0.9, label="optimum")
    ax.legend(fontsize="small", ncol=2)


def tests_to_target(folder, plot, fig):
    rows = read_rows(folder, plot["csv"])
    names = ordered(r["searcher"] for r in rows)
    colour = colours(names)
    box, ecdf = fig.subplots(1, 2)
    reached, labels = [], []
    for name in names:
        mine = [r for r in rows if r["searcher"] == name]
        values = sorted(number(r["tests_to_target"]) for r in mine if r["tests_to_target"] != "")
        failed = len(mine) - len(values)
        reached.append(values if values else [math.nan])
        labels.append(name if failed == 0 else f"{name}\n({failed} failed)")
        if values:
            fraction = np.arange(1, len(values) + 1) / len(mine)
            ecdf.step([0] + values, [0] + list(fraction), where="post", color=colour[name], label=name)
    parts = box.boxplot(reached, whis=(5, 95), showfliers=False, patch_artist=True, showmeans=True)
    for patch, name in zip(parts["boxes"], names):
        patch.set_facecolor(colour[name])
        patch.set_alpha(0.5)
    box.set_xticks(range(1, len(names) + 1))
    box.set_xticklabels(labels, rotation=45, ha="right", fontsize="small")
    box.set_ylabel("tests to target")
    every = [v for values in reached for v in values if math.isfinite(v)]
    if wide(every, 30):
        box.set_yscale("log")
        ecdf.set_xscale("log")
    box.set_title("runs that reached the target", fontsize="medium")
    ecdf.set_xlabel("tests")
    ecdf.set_ylabel("fraction of runs at the target")
    ecdf.set_ylim(0, 1.02)
    ecdf.set_title(f"reached within n tests (target {plot.get('target', 1.1)}x)", fontsize="medium")
    ecdf.legend(fontsize="small")


def histogram(folder, plot, ax):
    rows = read_rows(folder, plot["csv"])
    low = np.array([number(r["bin_low_ms"]) for r in rows])
    high = np.array([number(r["bin_high_ms"]) for r in rows])
    count = np.array([int(r["count"]) for r in rows])
    width = np.where(high > low, high - low, np.maximum(np.abs(low) * 0.02, 1e-9))
    ax.bar(low, count, width=width, align="edge", edgecolor="white", linewidth=0.5)
    if plot.get("log_x"):
        ax.set_xscale("log")


def order(folder, plot, ax):
    rows = read_rows(folder, plot["csv"])
    test = np.array([number(r["test"]) for r in rows])
    runtime = np.array([number(r["runtime_ms"]) for r in rows])
    best = np.array([number(r["best_ms"]) for r in rows])
    ax.scatter(test, runtime, s=4, color="grey", alpha=0.5, label="valid test")
    ax.plot(test, best, drawstyle="steps-post", color="C3", linewidth=1.5, label="best so far")
    if wide(list(runtime[np.isfinite(runtime)]), 20):
        ax.set_yscale("log")
    ax.legend(fontsize="small")


def pareto(folder, plot, ax):
    rows = read_rows(folder, plot["csv"])
    runtime = np.array([number(r["runtime_ms"]) for r in rows])
    energy = np.array([number(r["energy_j"]) for r in rows])
    front = np.array([r["on_front"] == "1" for r in rows])
    ax.scatter(runtime[~front], energy[~front], s=6, color="grey", alpha=0.5, label="configuration")
    by_runtime = np.argsort(runtime[front])
    ax.plot(runtime[front][by_runtime], energy[front][by_runtime], "o-", color="C3", markersize=4,
            drawstyle="steps-post", label="Pareto front")
    ax.legend(fontsize="small")


def explain(folder, plot, ax):
    rows = read_rows(folder, plot["csv"])
    test = np.array([number(r["test"]) for r in rows])
    runtime = np.array([number(r["runtime_ms"]) for r in rows])
    by = [r["proposed_by"] for r in rows]
    ax.scatter(test, runtime, s=8, color="lightgrey", label="test")
    colours = plt.get_cmap("tab10")
    for n in sorted({int(b) for b in by if b}):
        mine = np.array([b == str(n) for b in by])
        ax.scatter(test[mine], runtime[mine], s=14, color=colours((n - 1) % 10))
    for r, t, y in zip(rows, test, runtime):
        if not r["explanation"] or not np.isfinite(y):
            continue
        n = int(r["explanation"])
        ax.scatter([t], [y], s=90, marker="*", color=colours((n - 1) % 10), edgecolors="black", zorder=3)
        ax.annotate(r["label"], (t, y), xytext=(4, 6), textcoords="offset points", fontsize="x-small")
    finite = runtime[np.isfinite(runtime)]
    if wide(list(finite), 20):
        ax.set_yscale("log")
    ax.scatter([], [], s=90, marker="*", color="white", edgecolors="black", label="profiled, explained")
    ax.legend(fontsize="small")


def draw(folder, plot):
    kind = plot["kind"]
    if kind == "tests_to_target":
        fig = plt.figure(figsize=(11, 4.8))
        tests_to_target(folder, plot, fig)
    else:
        fig, ax = plt.subplots(figsize=(8, 5))
        {"convergence": convergence, "explain": explain, "histogram": histogram, "order": order, "pareto": pareto,
         "score": score}[kind](folder, plot, ax)
        ax.set_xlabel(plot.get("xlabel", ""))
        ax.set_ylabel(plot.get("ylabel", ""))
    fig.suptitle(plot["title"], fontsize="medium")
    fig.tight_layout()
    base = os.path.join(folder, plot["name"])
    fig.savefig(base + ".png", dpi=120)
    fig.savefig(base + ".svg", metadata={"Date": None})
    plt.close(fig)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: plot_report.py DIR (a folder written by steer report)")
    folder = sys.argv[1]
    with open(os.path.join(folder, "report.json")) as f:
        manifest = json.load(f)
    for plot in manifest["plots"]:
        try:
            draw(folder, plot)
        except Exception as error:  # say which plot, then fail
            sys.exit(f"plot_report.py: cannot draw {plot.get('name')} ({plot.get('kind')}) from {plot.get('csv')}: "
                     f"{type(error).__name__}: {error}")


if __name__ == "__main__":
    main()
