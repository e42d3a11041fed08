#!/usr/bin/env python3
"""Assembles the results of tools/limits/limits.sh into OUT/limits.json and OUT/limits.md.

Usage: assemble.py ROOT OUT [NAME...]
Reads OUT/limits_tool.json (the limits tool's JSON; missing or broken: references are
null), and per benchmark NAME the Steer result exports OUT/best/NAME/export_*.json (format
steer-results, from `steer export --format json`) with OUT/best/NAME/source.txt (one line:
where they came from). Throughput uses the FLOP and byte counts of
ROOT/kernels/NAME/spec.json at its 'h200' size. Never fails on missing parts: a row
then says what is missing. Standard library only.
"""
import glob
import json
import math
import os
import sys

SIZE = os.environ.get("LIMITS_SIZE", "h200")  # other sizes and backends only to test the plumbing
BACKEND = os.environ.get("LIMITS_BACKEND", "cuda")
# What each benchmark is judged against (docs/performance.md, "Quality against the limits").
KIND = {
    "transpose": "copy",
    "gemm": "sgemm",
    "gemm_full": "sgemm",
    "dgemm_energy": "dgemm",
    "nbody": "fp32",
    "coulomb": "fp32",
    "conv": "conv",
}
GOAL = {"copy": 0.85, "sgemm": 0.50, "dgemm": 0.50}
# Flops per interaction as the specs count them, and the MUFU (rsqrt) operations per interaction.
PAIR_FLOPS = {"nbody": 20, "coulomb": 11}


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"assemble: cannot read {path}: {e}", file=sys.stderr)
        return None


def get(d, *keys):
    for k in keys:
        if not isinstance(d, dict) or d.get(k) is None:
            return None
        d = d[k]
    return d


def evaluate(expression, sizes):
    if isinstance(expression, (int, float)):
        return float(expression)
    env = dict(sizes)
    env.update({"cdiv": lambda a, b: -(-a // b), "min": min, "max": max})
    return float(eval(str(expression), {"__builtins__": {}}, env))  # the repository's own spec files


def best_result(name, out):
    """The fastest valid result at the h200 size over every export of NAME."""
    best, tests, valid, sources = None, 0, 0, []
    for path in sorted(glob.glob(os.path.join(out, "best", name, "export_*.json"))):
        data = load_json(path)
        if not isinstance(data, dict) or not isinstance(data.get("results"), list):
            continue
        tuning = data.get("tuning") or {}
        if tuning.get("problem_size") not in (None, SIZE) or tuning.get("backend") not in (None, BACKEND):
            continue
        for r in data["results"]:
            if r.get("problem_size") not in (None, SIZE):
                continue
            tests += 1
            t = get(r, "time", "median_ms")
            if r.get("status") != "ok" or not isinstance(t, (int, float)) or not t > 0:
                continue
            valid += 1
            if best is None or t < best["time_ms"]:
                best = {"time_ms": float(t), "config": r.get("configuration"), "reps": get(r, "time", "repetitions"),
                        "min_ms": get(r, "time", "min_ms"), "file": os.path.basename(path)}
    try:
        with open(os.path.join(out, "best", name, "source.txt")) as f:
            sources = [line.strip() for line in f if line.strip()]
    except OSError:
        pass
    return best, tests, valid, "; ".join(sources)


def fmt(v, digits=1, unit=""):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "—"
    return f"{v:,.{digits}f}{unit}"


def pct(v):
    return "—" if v is None else f"{100 * v:.0f} %"


def ratio(a, b):
    return a / b if a is not None and b else None


def main():
    root, out = sys.argv[1], sys.argv[2]
    names = sys.argv[3:] or list(KIND)
    tool = load_json(os.path.join(out, "limits_tool.json")) or {}

    copy_gbs = get(tool, "copy", "reference_gbs")
    copy_kernel_gbs = get(tool, "copy", "copy_kernel", "gbs")
    sgemm_ms = get(tool, "sgemm", "default", "median_ms")
    sgemm_ped_ms = get(tool, "sgemm", "pedantic", "median_ms")
    dgemm_ms = get(tool, "dgemm", "default", "median_ms")
    dgemm_ped_ms = get(tool, "dgemm", "pedantic", "median_ms")
    fp32_peak = get(tool, "fp32", "reference_gflops")
    fp32_fma = get(tool, "fp32", "fma_benchmark", "gflops")
    fp64_simt = get(tool, "fp64", "reference_gflops")
    rsqrt_rate = get(tool, "rsqrt", "benchmark", "g_rsqrt_per_s")
    max_clock = get(tool, "device", "nvml_max_sm_clock_mhz") or get(tool, "device", "clock_attribute_mhz")

    rows, kernels = [], {}
    for name in names:
        kind = KIND.get(name, "fp32")
        spec = load_json(os.path.join(root, "kernels", name, "spec.json")) or {}
        sizes = get(spec, "sizes", SIZE) or {}
        entry = {"size": sizes, "kind": kind}
        try:
            flops = evaluate(spec.get("flops", 0), sizes)
            moved = evaluate(spec.get("bytes", 0), sizes)
        except Exception as e:  # noqa: BLE001 - report, never fail
            print(f"assemble: {name}: cannot evaluate flops/bytes: {e}", file=sys.stderr)
            flops = moved = None
        best, tests, valid, source = best_result(name, out)
        entry.update({"flops": flops, "bytes": moved, "tests": tests, "valid": valid, "source": source, "best": best})
        size_text = " × ".join(f"{v}" for k, v in sizes.items() if k not in ("GRID_SPACING",)) or "?"
        if name == "coulomb" and sizes:
            size_text = f"{sizes['GRID_X']}³ grid, {sizes['ATOMS']} atoms"
        elif name == "nbody" and sizes:
            size_text = f"{sizes['BODIES']:,} bodies"
        if best is None:
            rows.append([name, size_text, "—", "no valid result", "—", "—", "—", source or "no recording, no tune"])
            kernels[name] = entry
            continue
        t = best["time_ms"]
        gbs = moved / (t * 1e-3) / 1e9 if moved else None
        gflops = flops / (t * 1e-3) / 1e9 if flops else None
        entry.update({"gbs": gbs, "gflops": gflops})
        goal = GOAL.get(kind)
        note = ""
        if kind == "copy":
            r = ratio(gbs, copy_gbs)
            achieved = f"{fmt(gbs)} GB/s"
            reference = f"D2D copy {fmt(copy_gbs)} GB/s"
            entry.update({"reference": "cudaMemcpy D2D", "reference_gbs": copy_gbs, "ratio": r,
                          "ratio_copy_kernel": ratio(gbs, copy_kernel_gbs)})
            note = f"{pct(ratio(gbs, copy_kernel_gbs))} of a float4 copy kernel ({fmt(copy_kernel_gbs)} GB/s)"
        elif kind == "sgemm":
            r = ratio(sgemm_ms, t)
            achieved = f"{fmt(gflops)} GFLOP/s"
            ref_gflops = flops / (sgemm_ms * 1e-3) / 1e9 if sgemm_ms and flops else None
            reference = f"cuBLAS SGEMM {fmt(ref_gflops)} GFLOP/s ({fmt(sgemm_ms, 3)} ms)"
            entry.update({"reference": "cublasSgemm, CUBLAS_DEFAULT_MATH", "reference_ms": sgemm_ms, "ratio": r,
                          "ratio_pedantic": ratio(sgemm_ped_ms, t), "fraction_of_fp32_peak": ratio(gflops, fp32_peak)})
            note = f"{pct(ratio(gflops, fp32_peak))} of the FP32 peak"
            if sgemm_ped_ms and sgemm_ms and abs(sgemm_ped_ms / sgemm_ms - 1) > 0.02:
                note += f"; vs pedantic-math cuBLAS ({fmt(sgemm_ped_ms, 3)} ms): {pct(ratio(sgemm_ped_ms, t))}"
        elif kind == "dgemm":
            r = ratio(dgemm_ms, t)
            achieved = f"{fmt(gflops)} GFLOP/s"
            ref_gflops = flops / (dgemm_ms * 1e-3) / 1e9 if dgemm_ms and flops else None
            reference = f"cuBLAS DGEMM {fmt(ref_gflops)} GFLOP/s ({fmt(dgemm_ms, 3)} ms, FP64 tensor cores)"
            entry.update({"reference": "cublasDgemm, CUBLAS_DEFAULT_MATH (DMMA)", "reference_ms": dgemm_ms, "ratio": r,
                          "ratio_pedantic": ratio(dgemm_ped_ms, t), "fraction_of_fp64_simt_peak": ratio(gflops, fp64_simt)})
            note = f"{pct(ratio(gflops, fp64_simt))} of the FP64 SIMT peak ({fmt(fp64_simt)} GFLOP/s, no tensor cores)"
            if dgemm_ped_ms and dgemm_ms and abs(dgemm_ped_ms / dgemm_ms - 1) > 0.02:
                note += f"; vs pedantic-math cuBLAS ({fmt(dgemm_ped_ms, 3)} ms): {pct(ratio(dgemm_ped_ms, t))}"
        elif kind == "fp32":
            r = ratio(gflops, fp32_peak)
            achieved = f"{fmt(gflops)} GFLOP/s"
            reference = f"FP32 peak {fmt(fp32_peak)} GFLOP/s"
            entry.update({"reference": "FP32 peak, 2 x 128 lanes x SMs x max SM clock", "reference_gflops": fp32_peak,
                          "ratio": r, "ratio_fma_benchmark": ratio(gflops, fp32_fma)})
            note = f"{pct(ratio(gflops, fp32_fma))} of the measured FMA rate"
            if name in PAIR_FLOPS and flops:
                pairs_per_s = flops / PAIR_FLOPS[name] / (t * 1e-3) / 1e9
                entry["g_pairs_per_s"] = pairs_per_s
                entry["ratio_rsqrt_bound"] = ratio(pairs_per_s, rsqrt_rate)
                note += f"; {fmt(pairs_per_s, 0)} G pairs/s = {pct(ratio(pairs_per_s, rsqrt_rate))} of the measured rsqrt (SFU) rate"
        else:  # conv: both
            r = None
            achieved = f"{fmt(gbs)} GB/s, {fmt(gflops)} GFLOP/s"
            reference = f"D2D copy {fmt(copy_gbs)} GB/s; FP32 peak {fmt(fp32_peak)} GFLOP/s"
            entry.update({"ratio_copy": ratio(gbs, copy_gbs), "ratio_fp32_peak": ratio(gflops, fp32_peak)})
            note = f"{pct(ratio(gbs, copy_gbs))} of the copy bandwidth, {pct(ratio(gflops, fp32_peak))} of the FP32 peak"
        entry["goal"] = goal
        entry["goal_met"] = (r >= goal) if (r is not None and goal is not None) else None
        ratio_text = pct(r) if kind != "conv" else f"{pct(entry['ratio_copy'])} / {pct(entry['ratio_fp32_peak'])}"
        goal_text = "—" if goal is None else f"≥ {100 * goal:.0f} %" + ("" if entry["goal_met"] is None else (" ✓" if entry["goal_met"] else " ✗"))
        rows.append([name, size_text, fmt(t, 4), achieved, reference, ratio_text, goal_text,
                     f"{note}; best of {valid} valid / {tests} tests ({source or 'unknown source'})"])
        kernels[name] = entry

    result = {"size": SIZE, "tool": tool or None, "kernels": kernels}
    with open(os.path.join(out, "limits.json"), "w") as f:
        json.dump(result, f, indent=1)

    dev = tool.get("device") or {}
    lines = []
    lines.append(f"**Device**: {dev.get('name', '?')}, {dev.get('sm_count', '?')} SMs, max SM clock "
                 f"{fmt(max_clock, 0)} MHz, driver {dev.get('nvml_driver') or dev.get('cuda_driver', '?')}, "
                 f"cuBLAS {get(tool, 'cublas', 'version') or '—'}.")
    if tool.get("error"):
        lines.append("")
        lines.append(f"**The limits tool stopped early**: {tool['error']} (what it measured before is below).")
    lines.append("")
    lines.append("| kernel | size | Steer best (ms) | achieved | reference | ratio | goal | notes |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for row in rows:
        lines.append("| " + " | ".join(str(c).replace("|", "/") for c in row) + " |")
    lines.append("")
    lines.append("Best configurations:")
    lines.append("")
    for name, entry in kernels.items():
        cfg = get(entry, "best", "config")
        if cfg:
            text = ", ".join(f"{k}={v}" for k, v in cfg.items())
            lines.append(f"- {name}: {text} ({fmt(get(entry, 'best', 'time_ms'), 4)} ms, "
                         f"median of {get(entry, 'best', 'reps') or '?'} launches)")
    lines.append("")
    lines.append("References (median of "
                 f"{get(tool, 'copy', 'memcpy_d2d', 'reps') or '?'} launches after warm-up, CUDA events; "
                 "SM clock = median NVML reading during the timed launches):")
    lines.append("")
    lines.append("| reference | time (ms) | throughput | SM clock (MHz) | power (W) | notes |")
    lines.append("|---|---|---|---|---|---|")

    def ref_row(label, stats, throughput, notes=""):
        if not isinstance(stats, dict):
            lines.append(f"| {label} | — | — | — | — | not measured |")
            return
        lines.append(f"| {label} | {fmt(stats.get('median_ms'), 4)} | {throughput} | {fmt(stats.get('sm_clock_mhz'), 0)} | "
                     f"{fmt(stats.get('power_w'), 0)} | {notes} |")

    copy_bytes = get(tool, "copy", "bytes_per_buffer")
    ref_row("cudaMemcpy D2D", get(tool, "copy", "memcpy_d2d"), f"{fmt(copy_gbs)} GB/s",
            f"{fmt(copy_bytes / 1e9 if copy_bytes else None, 2)} GB copied, read + written counted")
    ref_row("float4 copy kernel", get(tool, "copy", "copy_kernel"), f"{fmt(copy_kernel_gbs)} GB/s", "same bytes")
    for key, label in (("sgemm", "cuBLAS SGEMM"), ("dgemm", "cuBLAS DGEMM")):
        sec = get(tool, key)
        for mode in ("default", "pedantic"):
            st = get(sec, mode)
            shape = f"{get(sec, 'm')}×{get(sec, 'n')}×{get(sec, 'k')}" if sec else ""
            err = get(st, "spot_check_max_scaled_error")
            extra = f"{shape}, spot-check error {'—' if err is None else f'{err:.1e}'}"
            if key == "sgemm" and get(st, "tf32_suspected"):
                extra += " — TF32 suspected!"
            if key == "dgemm":
                extra += ", FP64 tensor cores (DMMA)"
            ref_row(f"{label}, {mode} math", st, f"{fmt(get(st, 'gflops'))} GFLOP/s", extra)
    ref_row("FP32 FMA microbenchmark", get(tool, "fp32", "fma_benchmark"), f"{fmt(fp32_fma)} GFLOP/s",
            f"peak 2 × 128 × SMs × clock: {fmt(fp32_peak)} GFLOP/s at {fmt(max_clock, 0)} MHz, "
            f"{fmt(get(tool, 'fp32', 'peak_gflops_at_measured_clock'))} at the measured clock")
    ref_row("FP64 FMA microbenchmark", get(tool, "fp64", "fma_benchmark"),
            f"{fmt(get(tool, 'fp64', 'fma_benchmark', 'gflops'))} GFLOP/s",
            f"SIMT peak 2 × 64 × SMs × clock: {fmt(fp64_simt)} GFLOP/s")
    ref_row("rsqrt (MUFU) microbenchmark", get(tool, "rsqrt", "benchmark"), f"{fmt(rsqrt_rate)} G/s",
            f"bound 16/clk/SM: {fmt(get(tool, 'rsqrt', 'bound_g_per_s_at_max_clock'))} G/s")
    with open(os.path.join(out, "limits.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
