#!/usr/bin/env bash
# One device call that carries the H200 ground truth forward, most valuable first, and
# stops cleanly at a deadline (the device allows 600 s per call):
#   1. the CUDA GPU tests                               -> $OUT/tests.txt
#   2. user range vs kernel range vs ncu (ranges.sh)     -> $OUT/ranges.txt
#   3. counters for the recordings that lack them, then new configurations (record.sh)
#   4. energy samples and the near-best band (energy.sh)
# The scripts write into a scratch folder; $OUT receives results.tgz and summary.txt only
# (the device returns at most 8 files, and a folder of many would lose the archive).
#   device run: bash scripts/gpu/continue.sh     (carry: [".gpu-bundle"]; after scripts/gpu/bundle here)
# Environment: CONTINUE_DEADLINE (default 560 s), CONTINUE_RECORD (default "coulomb nbody conv gemm"),
# CONTINUE_ENERGY (default "gemm:1000 dgemm_energy:2100"), CONTINUE_SKIP (stage numbers to skip, e.g. "1 2").
set -uo pipefail
final="${OUT:-/tmp/steer-gpu}"
mkdir -p "$final"
export OUT="$(mktemp -d)"
source "$(dirname "$0")/environment.sh"
exec > >(tee "$final/summary.txt") 2>&1
deadline="${CONTINUE_DEADLINE:-560}"
skip=" ${CONTINUE_SKIP:-} "
left() { echo $((deadline - SECONDS)); }
stage() { [[ "$skip" != *" $1 "* ]]; }

if stage 1; then
  {
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv
    timeout 150 "$bundle/tests/steer_backend_tests" --gtest_filter='Cuda*'
    echo "tests exit $?"
  } >"$out/tests.txt" 2>&1
  grep -E "PASSED|FAILED|tests exit" "$out/tests.txt"
fi
if stage 2 && [ "$(left)" -gt 300 ]; then
  timeout 150 bash "$root/scripts/gpu/ranges.sh" | tail -n 30
fi
if stage 3 && [ "$(left)" -gt 60 ]; then
  # Half of what is left, the other half for energy.
  STEER_RECORD_COUNTERS=default STEER_RECORD_MAX_TEST_MS=50 STEER_RECORD_DEADLINE=$(($(left) / 2)) \
    bash "$root/scripts/gpu/record.sh" ${CONTINUE_RECORD:-coulomb nbody conv gemm} | grep -v '^test '
fi
if stage 4 && [ "$(left)" -gt 40 ]; then
  STEER_ENERGY_DEADLINE=$(($(left) - 15)) bash "$root/scripts/gpu/energy.sh" ${CONTINUE_ENERGY:-gemm:1000 dgemm_energy:2100} |
    grep -v '^test '
fi
(cd "$out" && tar czf "$final/results.tgz" ./* && ls -la "$final/results.tgz")
echo "continue.sh: done in $SECONDS s"
