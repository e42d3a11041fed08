#!/usr/bin/env bash
# Seconds from launch to the end of a one-test tuning (setting up the inputs, the reference
# output and the worker, one compile and test, and shutting down) for two builds of steer,
# alternating, on a GPU: what a user waits for before the first result. The first round of
# each fills the reference cache for its inputs (and is reported as "fill").
#
#   scripts/bench/startup_time.sh STEER_A STEER_B KERNEL SIZE [ROUNDS]
#
# Each STEER_X is a steer binary with its steer-worker beside it. Prints one line per tuning:
# LABEL ROUND MILLISECONDS and the tuning's last progress line.
set -euo pipefail
if [ $# -lt 4 ]; then
  sed -n '2,10p' "$0" >&2
  exit 2
fi
a=$1 b=$2 kernel=$3 size=$4 rounds=${5:-2}
root="$(cd "$(dirname "$0")/../.." && pwd)"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
run() {  # BINARY LABEL ROUND
  local start ms
  start=$(date +%s%N)
  STEER_WORKER="$(dirname "$1")/steer-worker" "$1" tune "$root/kernels/$kernel/spec.json" --backend cuda --size "$size" \
    --budget 1 --seed 1 --db "$scratch/$2_$3.db" --final-check 0 >/dev/null 2>"$scratch/$2_$3.err"
  ms=$((($(date +%s%N) - start) / 1000000))
  echo "$2 $3 $ms $(tail -1 "$scratch/$2_$3.err")"
}
for round in fill $(seq 1 "$rounds"); do
  run "$a" A "$round"
  run "$b" B "$round"
done
