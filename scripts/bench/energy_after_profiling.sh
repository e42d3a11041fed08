#!/usr/bin/env bash
# Energy per launch of the configurations of a list file, measured by two builds of steer,
# alternating, each with and without counters on every test (`--counters default`): whether
# a profiled test changes the energy that is measured after it. Each STEER_X is a steer
# binary with its steer-worker beside it; LIST is a `--searcher list` file of KERNEL's
# configurations. Writes OUT/X_{plain,counters}_ROUND.db and prints, per tuning, the energy
# of each test, the mean power and the profiling time of each test.
#
#   scripts/bench/energy_after_profiling.sh STEER_A STEER_B KERNEL SIZE LIST OUT [ROUNDS]
set -euo pipefail
if [ $# -lt 6 ]; then
  sed -n '2,9p' "$0" >&2
  exit 2
fi
a=$1 b=$2 kernel=$3 size=$4 list=$5 out=$6 rounds=${7:-2}
root="$(cd "$(dirname "$0")/../.." && pwd)"
mkdir -p "$out"
one() {  # BINARY LABEL KIND ROUND [OPTIONS...]
  local binary=$1 stem="$out/$2_$3_$4"
  shift 4
  rm -f "$stem.db"
  STEER_WORKER="$(dirname "$binary")/steer-worker" "$binary" tune "$root/kernels/$kernel/spec.json" --backend cuda \
    --size "$size" --searcher list --set "file=$list" --objective energy --final-check 0 --db "$stem.db" "$@" \
    >"$stem.json" 2>"$stem.err"
}
one "$a" A warm 0  # the first tuning of a machine also compiles and fills caches: not reported
for round in $(seq 1 "$rounds"); do
  one "$a" A plain "$round"
  one "$a" A counters "$round" --counters default
  one "$b" B counters "$round" --counters default
  one "$b" B plain "$round"
done
python3 - "$out" <<'PY'
import glob, os, sqlite3, statistics, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.db"))):
    if "_warm_" in path:
        continue
    rows = sqlite3.connect(path).execute(
        "select energy_joules_per_launch, energy_average_watts, coalesce(profiling_ms, 0) from tests "
        "where energy_joules_per_launch is not null order by sequence").fetchall()
    print(f"{os.path.basename(path):18} J {' '.join(f'{r[0]:.3f}' for r in rows)}  mean {statistics.mean(r[0] for r in rows):.3f}"
          f"  W {statistics.mean(r[1] for r in rows):.0f}  profiling ms {' '.join(f'{r[2]:.0f}' for r in rows)}")
PY
