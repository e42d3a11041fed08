#!/usr/bin/env bash
# How fast the loop's compile pool compiles with 1, 2, 4, 8 and 15 threads, and with each
# compile just before its test (inline): random search, the same seed and so the same
# configurations each time, on a small size whose kernels run in microseconds, so the loop
# waits on the compiler. Per tuning: its store (each test's compile_ms) and JSON summary.
#
#   scripts/bench/compile_scaling.sh OUT "KERNEL..." [SIZE] [TESTS]
#
# scripts/bench/compile_scaling.py OUT prints the table (compile time per configuration
# against the compiles in flight; wall time per test). STEER: the binary (default
# build/steer), with its steer-worker beside it or at STEER_WORKER.
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,11p' "$0" >&2
  exit 2
fi
out=$1 kernels=$2 size=${3:-small} tests=${4:-120}
steer="${STEER:-build/steer}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
mkdir -p "$out"
nproc >"$out/nproc.txt"
# One tuning first, so that the first measured one does not pay for starting the driver.
"$steer" tune "$root/kernels/gemm/spec.json" --backend cuda --size "$size" --budget 2 --final-check 0 \
  --db "$out/warm.db" >/dev/null 2>&1
for kernel in $kernels; do
  for threads in inline 1 2 4 8 15; do
    if [ "$threads" = inline ]; then pool=(--no-compile-ahead); else pool=(--compile-threads "$threads"); fi
    rm -f "$out/${kernel}_$threads.db"
    "$steer" tune "$root/kernels/$kernel/spec.json" --backend cuda --size "$size" --searcher random --seed 3 \
      --budget "$tests" --final-check 0 "${pool[@]}" --db "$out/${kernel}_$threads.db" --json \
      >"$out/${kernel}_$threads.json" 2>"$out/${kernel}_$threads.log"
    echo "$kernel $threads: $(tail -1 "$out/${kernel}_$threads.log")"
  done
done
