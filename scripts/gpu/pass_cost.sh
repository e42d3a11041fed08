#!/usr/bin/env bash
# Where does a profiled test's time go, pass by pass (docs/performance.md, "Cost of profiling")?
# For the best stored configuration of gemm, coulomb and transpose at the h200 size, profiles
# with three metric sets: the default set, its hardware counters only (without the seven
# smsp__sass_thread_inst_executed_op_* metrics, which CUPTI counts by patching the kernel's
# SASS) and those seven alone. The worker's trace (STEER_CUDA_TRACE, timestamped) gives each
# pass: restoring the inputs and flushing L2, then the profiled launch. Then ncu measures the
# default set on gemm and transpose, compared with Steer's kernel range (the 5-pass set; the
# range check of ranges.sh used one-pass sets). Last, six random gemm tests in one
# `steer tune --counters default`, pass by pass: a tuning compiles a new module per test.
#   device run: bash scripts/gpu/pass_cost.sh     (carry: [".gpu-bundle"]; after scripts/gpu/bundle)
# PASS_COST_PARTS picks the parts: "profile ncu tune" (the default) or any of them.
# Writes $OUT/pass_cost.txt (the summary) and the profiles and logs beside it. Results of
# 2026-11-30: data/h200/check/pass_cost_session5.txt, pass_cost_tune_session5.txt.
set -uo pipefail
source "$(dirname "$0")/environment.sh"
steer="$bundle/steer"
log="$out/pass_cost.txt"
: >"$log"
# metrics_of JSON [FILTER]: the metrics a `steer profile --json` collected (grep -E FILTER, -v with !).
metrics_of() {
  python3 -c 'import json,sys; print("\n".join(m for m in json.load(open(sys.argv[1]))["counters"] if m != "threads"))' "$1" |
    { local filter="${2:-.}"; if [ "${filter:0:1}" = "!" ]; then grep -Ev "${filter:1}"; else grep -E "$filter"; fi; } | paste -sd, -
}

# best_config NAME: the best configuration of data/h200/NAME_h200.json as NAME=VALUE,...
best_config() {
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["best"]["config"]; print(",".join(f"{k}={v}" for k,v in c.items()))' \
    "$root/data/h200/$1_h200.json"
}

# passes LOG: one line per profiler pass from the worker's timestamped trace.
passes() {
  python3 - "$1" <<'PY'
import re, sys
steps = []
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"\[steer worker \d+ \+([0-9.]+) ms\] (.*)", line.strip())
    if m: steps.append((float(m.group(1)), m.group(2)))
starts = [i for i, (_, s) in enumerate(steps) if s == "cuptiRangeProfilerStart"]
out = []
for n, i in enumerate(starts):
    stop = next((j for j in range(i, len(steps)) if steps[j][1] == "cuptiRangeProfilerStop"), None)
    launch = steps[stop][0] - steps[i][0] if stop is not None else float("nan")
    end = steps[starts[n + 1]][0] if n + 1 < len(starts) else next(
        (t for t, s in steps[i:] if s == "cuptiRangeProfilerDecodeData"), float("nan"))
    # "to the next pass" adds the next pass's preparation (restoring the inputs, the L2 flush).
    out.append(f"pass {n + 1}: launch+stop {launch:8.1f} ms, to the next pass {end - steps[i][0]:8.1f} ms")
print("\n".join(out) if out else "no passes in the trace")
PY
}

summary() {  # summary JSON: the test's time and its profiling figures
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("kernel", d.get("time_ms"), "ms; profiling", d.get("profiling"))' "$1" 2>&1
}
parts=" ${PASS_COST_PARTS:-profile ncu tune} "  # which of the three parts below run

for name in gemm coulomb transpose; do
  [[ "$parts" == *" profile "* ]] || break
  config=$(best_config "$name")
  spec="$root/kernels/$name/spec.json"
  for set in default hardware sass; do
    case $set in
      default) metrics=default ;;  # the sets below are read from what it collected
      hardware) metrics=$(metrics_of "$out/pass_cost_${name}_default.json" '!^smsp__sass_') ;;
      sass) metrics=$(metrics_of "$out/pass_cost_${name}_default.json" '^smsp__sass_') ;;
    esac
    STEER_CUDA_TRACE=1 timeout -k 5 120 "$steer" profile "$spec" --backend cuda --size h200 --config "$config" \
      --no-energy --counters "$metrics" --json >"$out/pass_cost_${name}_$set.json" 2>"$out/pass_cost_${name}_$set.log"
    {
      echo "== $name h200, $set set: exit $? ($config)"
      summary "$out/pass_cost_${name}_$set.json"
      passes "$out/pass_cost_${name}_$set.log"
    } | tee -a "$log"
  done
done

# The kernel range with the multi-pass default set against Nsight Compute.
for name in gemm transpose; do
  [[ "$parts" == *" ncu "* ]] || break
  config=$(best_config "$name")
  spec="$root/kernels/$name/spec.json"
  default=$(metrics_of "$out/pass_cost_${name}_default.json")
  ncu_of_profile 150 "$default" "$name" "$spec" h200 "$config" "pass_cost_ncu_$name"
  echo "== ncu $name h200, default set: exit $?" | tee -a "$log"
  python3 "$root/scripts/gpu/compare_ncu.py" "$out/pass_cost_${name}_default.json" "$out/pass_cost_ncu_$name.csv" \
    kernel 2>&1 | tee -a "$log"
done

# In a tuning, pass by pass: six random gemm tests with counters (a new module each).
if [[ "$parts" == *" tune "* ]]; then
  STEER_CUDA_TRACE=1 timeout -k 5 120 "$steer" tune "$root/kernels/gemm/spec.json" --backend cuda --size h200 \
    --searcher random --seed 7 --budget 6 --counters default --db "$out/pass_cost_tune.db" --json \
    >"$out/pass_cost_tune.json" 2>"$out/pass_cost_tune.log"
  echo "== tune gemm h200, 6 random tests with counters: exit $?" | tee -a "$log"
  python3 -c 'import sqlite3,sys
for r in sqlite3.connect(sys.argv[1]).execute("select sequence, median_ms, profiling_ms, profiling_passes from tests order by sequence"):
    print(f"test {r[0]}: kernel {r[1]:.2f} ms, profiling {r[2]:.1f} ms in {r[3]} passes")' "$out/pass_cost_tune.db" 2>&1 | tee -a "$log"
  passes "$out/pass_cost_tune.log" | tee -a "$log"
fi
