#!/usr/bin/env bash
# Records ground truth on the H200: tunes each named benchmark exhaustively at its `h200`
# size into $OUT/<name>_h200.db (resumable: carry an earlier store back in as
# data/h200/<name>_h200.db.gz and it continues). Run after scripts/gpu/bundle:
#   device run: bash scripts/gpu/record.sh coulomb nbody     (carry: [".gpu-bundle"])
# Environment:
#   STEER_RECORD_COUNTERS=default  also collect counters (stored tests without them are
#                                  measured again and replaced)
#   STEER_RECORD_TIME=SECONDS      stop each benchmark after this long (resume later)
#   STEER_RECORD_DEADLINE=SECONDS  stop everything this long after the script started: later
#                                  benchmarks get what the earlier ones left (resume later)
#   STEER_RECORD_REPETITIONS=N     timed launches per test (default 10)
#   STEER_RECORD_MAX_TEST_MS=T     fewer launches once T ms were timed (default 100: a 50 ms
#                                  configuration gets 2, a 1 ms one all 10)
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bundle="$root/.gpu-bundle"
out="${OUT:-/tmp/steer-gpu}"
mkdir -p "$out"
export LD_LIBRARY_PATH="$bundle/lib:/usr/local/nvidia/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
started=$(date +%s)
for name in "$@"; do
  if [ -n "${STEER_RECORD_DEADLINE:-}" ]; then
    left=$((STEER_RECORD_DEADLINE - ($(date +%s) - started)))
    if [ "$left" -lt 30 ]; then
      echo "== $name: skipped, the deadline leaves ${left} s"
      continue
    fi
  fi
  db="$out/${name}_h200.db"
  previous="$root/data/h200/${name}_h200.db.gz"
  [ -f "$previous" ] && gunzip -c "$previous" >"$db"
  echo "== $name (h200, exhaustive)"
  extra=()
  [ -n "${STEER_RECORD_COUNTERS:-}" ] && extra+=(--counters "$STEER_RECORD_COUNTERS")
  limit="${STEER_RECORD_TIME:-}"
  if [ -n "${STEER_RECORD_DEADLINE:-}" ] && { [ -z "$limit" ] || [ "$limit" -gt "$((left - 10))" ]; }; then
    limit=$((left - 10))  # --time counts setup too; 10 s for the last test and the summary
  fi
  [ -n "$limit" ] && extra+=(--time "$limit")
  "$bundle/steer" tune "$root/kernels/$name/spec.json" --backend cuda --size h200 --searcher exhaustive \
    --repetitions "${STEER_RECORD_REPETITIONS:-10}" --max-test-ms "${STEER_RECORD_MAX_TEST_MS:-100}" "${extra[@]}" --db "$db" --json >"$out/${name}_h200.json" 2>"$out/${name}_h200.log"
  echo "exit $?"
  tail -n 2 "$out/${name}_h200.log"
  cat "$out/${name}_h200.json"
  echo
done
