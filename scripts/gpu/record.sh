#!/usr/bin/env bash
# Records ground truth on the H200: tunes each named benchmark exhaustively at its `h200`
# size (NAME@SIZE picks another of the spec's sizes) into $OUT/<name>_<size>.db, resumable:
# carry an earlier store back in as data/h200/<name>_<size>.db.gz and it continues. The
# order is random (seed 1) unless STEER_RECORD_SEARCHER says otherwise, so a recording that
# is still being built up is a uniform sample of the space. Run after scripts/gpu/bundle:
#   device run: bash scripts/gpu/record.sh coulomb nbody gemm@cube128    (carry: [".gpu-bundle"])
# Environment:
#   STEER_RECORD_COUNTERS=default  also collect counters (stored tests without them are
#                                  measured again and replaced)
#   STEER_RECORD_TIME=SECONDS      stop each benchmark after this long (resume later)
#   STEER_RECORD_DEADLINE=SECONDS  stop everything this long after the script started: later
#                                  benchmarks get what the earlier ones left (resume later)
#   STEER_RECORD_REPETITIONS=N     timed launches per test (default 10)
#   STEER_RECORD_MAX_TEST_MS=T     fewer launches once T ms were timed (default 100: a 50 ms
#                                  configuration gets 2, a 1 ms one all 10)
#   STEER_RECORD_SEARCHER=NAME     random (default, seed 1) or exhaustive (index order)
#   STEER_RECORD_BUDGET=N          stop each benchmark after N tests (a sample, e.g. model training data)
set -uo pipefail
source "$(dirname "$0")/environment.sh"
started=$(date +%s)
for item in "$@"; do
  if [ -n "${STEER_RECORD_DEADLINE:-}" ]; then
    left=$((STEER_RECORD_DEADLINE - ($(date +%s) - started)))
    if [ "$left" -lt 30 ]; then
      echo "== $item: skipped, the deadline leaves ${left} s"
      continue
    fi
  fi
  open_store "$item"
  searcher="${STEER_RECORD_SEARCHER:-random}"
  echo "== $name ($size, $searcher${STEER_RECORD_BUDGET:+, budget $STEER_RECORD_BUDGET})"
  extra=(--searcher "$searcher" --seed 1)
  [ -n "${STEER_RECORD_BUDGET:-}" ] && extra+=(--budget "$STEER_RECORD_BUDGET")
  [ -n "${STEER_RECORD_COUNTERS:-}" ] && extra+=(--counters "$STEER_RECORD_COUNTERS")
  limit="${STEER_RECORD_TIME:-}"
  if [ -n "${STEER_RECORD_DEADLINE:-}" ] && { [ -z "$limit" ] || [ "$limit" -gt "$((left - 10))" ]; }; then
    limit=$((left - 10))  # --time counts setup too; 10 s for the last test and the summary
  fi
  [ -n "$limit" ] && extra+=(--time "$limit")
  "$bundle/steer" tune "$root/kernels/$name/spec.json" --backend cuda --size "$size" \
    --repetitions "${STEER_RECORD_REPETITIONS:-10}" --max-test-ms "${STEER_RECORD_MAX_TEST_MS:-100}" "${extra[@]}" --db "$db" --json >"$out/$stem.json" 2>"$out/$stem.log"
  echo "exit $?"
  tail -n 2 "$out/$stem.log"
  cat "$out/$stem.json"
  echo
done
