#!/usr/bin/env bash
# Measures energy per launch on the H200 for the energy study (issue 5, item 8), into the
# same stores as scripts/gpu/record.sh ($OUT/<name>_<size>.db, resumed from
# data/h200/<name>_<size>.db.gz): for each NAME[@SIZE]:COUNT (COUNT 0: step 2 only),
#   1. the first COUNT configurations of record.sh's random order (seed 1), a uniform sample;
#      stored tests without energy are measured again and keep their counters;
#   2. every stored valid configuration within STEER_ENERGY_NEAR (1.2) x the best stored time
#      that lacks energy, or has it from a window shorter than 0.8x the one asked for (its energy
#      is cleared and measured again): where equally fast kernels can differ in energy.
# Run after scripts/gpu/bundle:
#   device run: bash scripts/gpu/energy.sh dgemm_energy:2100 gemm:1000   (carry: [".gpu-bundle"])
# Environment:
#   STEER_ENERGY_WINDOW=SECONDS    seconds of back-to-back launches per figure (default 0.5: 0.1 s
#                                  is within 3 % for one configuration measured five times, but
#                                  run to run a third of 911 DGEMMs differed by more; docs/energy.md)
#   STEER_ENERGY_NEAR=FACTOR       the near-best band of step 2 (default 1.2)
#   STEER_ENERGY_DEADLINE=SECONDS  stop everything this long after the script started
#   STEER_RECORD_MAX_TEST_MS=T     as in record.sh (default 100)
set -uo pipefail
source "$(dirname "$0")/environment.sh"
window="${STEER_ENERGY_WINDOW:-0.5}"
near="${STEER_ENERGY_NEAR:-1.2}"
started=$(date +%s)

# Seconds left before the deadline, minus a margin for the last test and the summary.
time_left() {
  if [ -z "${STEER_ENERGY_DEADLINE:-}" ]; then echo 100000; return; fi
  echo $((STEER_ENERGY_DEADLINE - ($(date +%s) - started) - 10))
}

tune() {  # tune NAME SIZE DB LOG-STEM ARGS...
  local name="$1" size="$2" db="$3" stem="$4"
  shift 4
  local left
  left=$(time_left)
  if [ "$left" -lt 20 ]; then
    echo "   skipped: the deadline leaves ${left} s"
    return
  fi
  "$bundle/steer" tune "$root/kernels/$name/spec.json" --backend cuda --size "$size" --objective energy \
    --energy-window "$window" --repetitions 10 --max-test-ms "${STEER_RECORD_MAX_TEST_MS:-100}" \
    --time "$left" --db "$db" --json "$@" >"$out/$stem.json" 2>"$out/$stem.log"
  echo "   exit $?"
  tail -n 2 "$out/$stem.log"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("   tests", d["tests"], "valid", d["valid"], "resumed", d["resumed"], "stop:", d["stop_reason"], "best", d["best"])' "$out/$stem.json" 2>/dev/null
}

# restore_energy DB: puts back the energy cleared for measuring again where the run did not
# measure it (a deadline), so no measurement is lost.
restore_energy() {
  python3 - "$1" <<'PY'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
if con.execute("select name from sqlite_master where name = 'steer_energy_earlier'").fetchone():
    columns = [r[1] for r in con.execute("pragma table_info(steer_energy_earlier)") if r[1] != "config_key"]
    restored = con.execute(f"update tests set ({', '.join(columns)}) = (select {', '.join(columns)} from steer_energy_earlier e"
                           " where e.config_key = tests.config_key) where energy_joules_per_launch is null and config_key in"
                           " (select config_key from steer_energy_earlier)").rowcount
    con.execute("drop table steer_energy_earlier")
    con.commit()
    if restored: print(f"   {restored} configurations not measured again keep their earlier energy")
PY
}

for item in "$@"; do
  target="${item%:*}"
  count="${item##*:}"
  open_store "$target"

  if [ "$count" -gt 0 ]; then
    echo "== $stem: energy of the first $count configurations of the random order (window $window s)"
    tune "$name" "$size" "$db" "${stem}_energy_sample" --searcher random --seed 1 --budget "$count"
  fi

  echo "== $stem: energy of every configuration within ${near}x of the best stored time (window $window s)"
  list="$out/${stem}_near_best.txt"
  python3 - "$db" "$near" "$list" "$window" <<'PY'
import sqlite3, sys
db, near, path, window = sys.argv[1], float(sys.argv[2]), sys.argv[3], float(sys.argv[4])
try:
    con = sqlite3.connect(db)
    best = con.execute("select min(median_ms) from tests where status = 'ok'").fetchone()[0]
except sqlite3.Error as e:  # no store yet: nothing recorded to compare with
    print(f"   {db}: {e}")
    best = None
band = "status = 'ok' and median_ms <= ?"
short = band + " and energy_window_s < ?"
columns = ["energy_joules_per_launch", "energy_spread", "energy_average_watts", "energy_window_s", "energy_launches",
           "energy_sm_clock_mhz", "energy_temperature_c"]
if best:
    # Energy from a window much shorter than asked is measured again: kept aside in a table of
    # this script's (Steer ignores it), cleared so that the tuner sees it missing, and put back
    # by restore_energy below wherever the run did not measure it again.
    con.execute(f"create table if not exists steer_energy_earlier (config_key text primary key, {', '.join(c + ' real' for c in columns)})")
    con.execute(f"insert or replace into steer_energy_earlier select config_key, {', '.join(columns)} from tests where {short}",
                (best * near, 0.8 * window))
    cleared = con.execute(f"update tests set {', '.join(c + ' = null' for c in columns)} where {short}",
                          (best * near, 0.8 * window)).rowcount
    con.commit()
    if cleared: print(f"   {cleared} configurations in the band had energy from windows under {0.8 * window:g} s: measured again")
rows = con.execute(f"select config_key from tests where {band} and energy_joules_per_launch is null"
                   " order by median_ms", (best * near,)).fetchall() if best else []
with open(path, "w") as f:
    f.write(f"# valid configurations within {near}x of the best stored time ({best} ms) without energy\n")
    for (key,) in rows: f.write(key + "\n")
print(f"   {len(rows)} configurations within {near}x of {best} ms lack energy")
PY
  if grep -qv '^#' "$list"; then
    tune "$name" "$size" "$db" "${stem}_energy_near_best" --searcher list --set "file=$list"
  fi
  restore_energy "$db"
done
