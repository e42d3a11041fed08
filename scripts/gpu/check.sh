#!/usr/bin/env bash
# Runs on the H200 (device tool), from the repository root, after scripts/gpu/bundle ran
# here and .gpu-bundle was carried along:
#   device run: bash scripts/gpu/check.sh      (carry: [".gpu-bundle"])
# Runs the CUDA tests, then tunes transpose with and without compile-ahead and records
# tests per second and the framework overhead per test. Everything lands in $OUT.
set -uo pipefail
source "$(dirname "$0")/environment.sh"
steer="$bundle/steer"

{
  echo "== device"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv
  nproc
} 2>&1 | tee "$out/check.txt"

if [ "${STEER_CHECK_TESTS:-1}" = 1 ]; then
echo "== CUDA backend tests"
"$bundle/tests/steer_backend_tests" --gtest_filter='Cuda*:Nvrtc*:Launch*:Lru*' 2>&1 | tail -n 40 | tee -a "$out/check.txt"

echo "== CUDA kernel compile tests (NVRTC, sm_90)"
"$bundle/tests/steer_kernels_tests" --gtest_filter='*Nvrtc*:*Compile*' 2>&1 | tail -n 15 | tee -a "$out/check.txt"
fi

size=${STEER_CHECK_SIZE:-paper}
budget=${STEER_CHECK_BUDGET:-200}
for mode in ahead inline; do
  flag=""
  [ "$mode" = inline ] && flag="--no-compile-ahead"
  echo "== tune transpose ($size, $budget tests, compile $mode)"
  "$steer" tune kernels/transpose/spec.json --backend cuda --size "$size" --searcher random --seed 7 \
    --budget "$budget" $flag --db "$out/transpose_$mode.db" --json >"$out/tune_$mode.json" 2>"$out/tune_$mode.log"
  echo "exit $?"
  tail -n 3 "$out/tune_$mode.log"
  python3 - "$out/tune_$mode.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"tests {d['tests']} valid {d['valid']} failed {d['failed']} wall {d['wall_s']:.2f} s "
      f"-> {d['tests'] / d['wall_s']:.2f} tests/s; compile wait {d['compile_wait_s']:.2f} s, "
      f"compiler {d['compile_cpu_s']:.2f} s, run {d['run_s']:.2f} s, validation {d['validation_s']:.2f} s, "
      f"framework {d['overhead_s']:.3f} s, median framework overhead {d['median_overhead_ms']:.3f} ms/test; "
      f"best {d['best']['time_ms'] if d['best'] else None} ms")
PY
done 2>&1 | tee -a "$out/check.txt"
