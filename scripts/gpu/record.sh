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
#   STEER_RECORD_RECOUNT=1         drop the store's counters first, so every valid test is profiled
#                                  again (with the kernel range)
# The profiler range (docs/counters.md) is kept per store, in a table steer_recording that
# Steer itself ignores: a store's counters are all measured with one range. Stores with counters
# and no such table are from before the kernel range became the default: they keep the user
# range until STEER_RECORD_RECOUNT=1 measures them again.
set -uo pipefail
source "$(dirname "$0")/environment.sh"
started=$(date +%s)

# store_profiler_range DB RECOUNT: prints the range the store's counters are measured with, and
# records it in the store (with RECOUNT=1, after dropping the store's counters). A store Steer
# has not made yet is left alone (Steer refuses a database with tables of others only): the
# call after the tuning records the range then.
store_profiler_range() {
  python3 - "$1" "$2" <<'PY'
import os, sqlite3, sys
db, recount = sys.argv[1], sys.argv[2] == "1"
asked = os.environ.get("STEER_CUPTI_RANGE")
if not os.path.exists(db):
    print(asked or "kernel"); sys.exit(0)
con = sqlite3.connect(db)
if con.execute("select name from sqlite_master where name = 'tunings'").fetchone() is None:
    print(asked or "kernel"); sys.exit(0)
con.execute("create table if not exists steer_recording (key text primary key, value text not null)")
has_counters = con.execute("select name from sqlite_master where name = 'counters'").fetchone() is not None
if recount and has_counters:
    dropped = con.execute("select count(distinct test_id) from counters").fetchone()[0]
    con.execute("delete from counters")
    con.execute("delete from steer_recording where key = 'profiler_range'")
    print(f"   recount: dropped the counters of {dropped} tests", file=sys.stderr)
row = con.execute("select value from steer_recording where key = 'profiler_range'").fetchone()
if row:
    kept = row[0]
elif has_counters and con.execute("select count(*) from counters").fetchone()[0] > 0:
    kept = "user"  # measured before the store said, when the user range was the default
else:
    kept = asked or "kernel"
if asked and asked != kept:
    print(f"   {db}: STEER_CUPTI_RANGE={asked} ignored: the store's counters were measured with the {kept} "
          "range (STEER_RECORD_RECOUNT=1 measures them again)", file=sys.stderr)
con.execute("insert or replace into steer_recording values ('profiler_range', ?)", (kept,))
con.commit()
print(kept)
PY
}
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
  if [ -n "${STEER_RECORD_COUNTERS:-}" ]; then
    extra+=(--counters "$STEER_RECORD_COUNTERS")
    STEER_CUPTI_RANGE="$(store_profiler_range "$db" "${STEER_RECORD_RECOUNT:-0}")" || exit 1
    export STEER_CUPTI_RANGE
    echo "   counters with the $STEER_CUPTI_RANGE range"
  fi
  limit="${STEER_RECORD_TIME:-}"
  if [ -n "${STEER_RECORD_DEADLINE:-}" ] && { [ -z "$limit" ] || [ "$limit" -gt "$((left - 10))" ]; }; then
    limit=$((left - 10))  # --time counts setup too; 10 s for the last test and the summary
  fi
  [ -n "$limit" ] && extra+=(--time "$limit")
  "$bundle/steer" tune "$root/kernels/$name/spec.json" --backend cuda --size "$size" \
    --repetitions "${STEER_RECORD_REPETITIONS:-10}" --max-test-ms "${STEER_RECORD_MAX_TEST_MS:-100}" "${extra[@]}" --db "$db" --json >"$out/$stem.json" 2>"$out/$stem.log"
  echo "exit $?"
  [ -n "${STEER_RECORD_COUNTERS:-}" ] && store_profiler_range "$db" 0 >/dev/null
  tail -n 2 "$out/$stem.log"
  cat "$out/$stem.json"
  echo
done
