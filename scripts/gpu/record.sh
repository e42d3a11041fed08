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
#   STEER_RECORD_RECOUNT=1         measure the store's configurations again, counters with the
#                                  kernel range, into a new store <name>_<size>_kernel_range.db
#                                  (same order; resumable like any other): the original stays
#                                  as it is, and is replaced by hand once the new one is complete
# NAME/PART (e.g. dgemm_energy/part1) measures the configurations of the list
# scripts/gpu/split_remaining put into the bundle into a store of its own, NAME_SIZE_PART.db:
# two GPUs record one space side by side, and take_results appends each part to NAME_SIZE's store.
# The profiler range (docs/counters.md) is kept per store, in a table steer_recording that
# Steer itself ignores: a store's counters are all measured with one range. Stores with counters
# and no such table are from before the kernel range became the default: they keep the user
# range, and STEER_RECORD_RECOUNT=1 measures them again.
set -uo pipefail
source "$(dirname "$0")/environment.sh"
started=$(date +%s)
asked_range="${STEER_CUPTI_RANGE:-}"  # each store decides its own range; this is only the ask

# store_profiler_range DB [USED]: prints the range the store's counters are (to be) measured
# with and records it in the store: the store's own record; else USED, the range a run just
# used; else "user" for a store that holds counters (recorded before stores said); else
# STEER_CUPTI_RANGE or "kernel". A store Steer has not made yet is left alone (Steer refuses
# a database with tables of others only): the call after the tuning records the range.
store_profiler_range() {
  python3 - "$1" "${2:-}" <<'PY'
import os, sqlite3, sys
db, used = sys.argv[1], sys.argv[2]
asked = os.environ.get("STEER_CUPTI_RANGE")
if not os.path.exists(db):
    print(asked or "kernel"); sys.exit(0)
con = sqlite3.connect(db)
if con.execute("select name from sqlite_master where name = 'tunings'").fetchone() is None:
    print(asked or "kernel"); sys.exit(0)
con.execute("create table if not exists steer_recording (key text primary key, value text not null)")
row = con.execute("select value from steer_recording where key = 'profiler_range'").fetchone()
has_counters = con.execute("select name from sqlite_master where name = 'counters'").fetchone() is not None and \
    con.execute("select count(*) from counters").fetchone()[0] > 0
if row:
    kept = row[0]
elif used:
    kept = used
elif has_counters:
    kept = "user"  # measured before stores said, when the user range was the default
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

# recount_list ORIGINAL LIST: every configuration of the original store, in its order.
recount_list() {
  python3 - "$1" "$2" <<'PY'
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute("select config_key from tests order by sequence").fetchall()
with open(sys.argv[2], "w") as f:
    f.write(f"# the configurations of {sys.argv[1]}, in its order\n")
    for (key,) in rows: f.write(key + "\n")
print(f"   recount: {len(rows)} configurations of {sys.argv[1]}, counters with the kernel range")
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
  part=""
  if [[ "$item" == */* ]]; then  # NAME/PART: the configurations of a list split_remaining made
    part="${item#*/}"
    item="${item%%/*}"
  fi
  open_store "$item" "${part:+_$part}"
  unset STEER_CUPTI_RANGE
  [ -n "$asked_range" ] && export STEER_CUPTI_RANGE="$asked_range"
  searcher="${STEER_RECORD_SEARCHER:-random}"
  extra=(--searcher "$searcher" --seed 1)
  if [ "${STEER_RECORD_RECOUNT:-0}" = 1 ]; then
    if [ ! -f "$db" ]; then
      echo "== $item: nothing to recount (no store $stem)"
      continue
    fi
    original="$db"
    open_store "$item" _kernel_range
    recount_list "$original" "$out/$stem.list"
    searcher="list"
    extra=(--searcher list --set "file=$out/$stem.list")
    export STEER_CUPTI_RANGE=kernel STEER_RECORD_COUNTERS="${STEER_RECORD_COUNTERS:-default}"
  elif [ -n "$part" ]; then
    list="$bundle/lists/$stem.list"
    if [ ! -f "$list" ]; then
      echo "== $item/$part: no list $list (scripts/gpu/split_remaining $item N, before the call)"
      continue
    fi
    searcher="list"
    extra=(--searcher list --set "file=$list")
  fi
  echo "== $name ($size, $searcher${STEER_RECORD_BUDGET:+, budget $STEER_RECORD_BUDGET})"
  [ -n "${STEER_RECORD_BUDGET:-}" ] && extra+=(--budget "$STEER_RECORD_BUDGET")
  if [ -n "${STEER_RECORD_COUNTERS:-}" ]; then
    extra+=(--counters "$STEER_RECORD_COUNTERS")
    STEER_CUPTI_RANGE="$(store_profiler_range "$db")" || exit 1
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
  [ -n "${STEER_RECORD_COUNTERS:-}" ] && store_profiler_range "$db" "$STEER_CUPTI_RANGE" >/dev/null
  tail -n 2 "$out/$stem.log"
  cat "$out/$stem.json"
  echo
done
