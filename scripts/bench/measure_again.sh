#!/usr/bin/env bash
# Measures a list of configurations again, apart from the tunings that chose them: ROUNDS tunings
# of the `list` searcher over the file's configurations, each round starting further into the
# list than the one before (so that no configuration is always measured first, after an idle GPU).
#
#   [TUNE_ARGS=...] scripts/bench/measure_again.sh OUT KERNEL SIZE ROUNDS LIST
#
# LIST: one NAME=VALUE,... line per configuration (scripts/bench/final_check_summary.py --pairs
# writes one). Writes OUT/order_R.txt, OUT/round_R.{db,json,log} for R = 1..ROUNDS, which
# `final_check_summary.py DIR --recheck OUT` reads. TUNE_ARGS: more `steer tune` options for every
# round, e.g. "--objective energy" to measure energy too. STEER: the binary (default build/steer);
# BACKEND: the backend (default cuda).
set -euo pipefail
if [ $# -ne 5 ]; then
  sed -n '2,12p' "$0" >&2
  exit 2
fi
out=$1 kernel=$2 size=$3 rounds=$4 list=$5
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "measure_again.sh: ROUNDS is '$rounds'; expected a positive number" >&2; exit 2; }
[ -s "$list" ] || { echo "measure_again.sh: LIST '$list' is missing or empty" >&2; exit 2; }
steer="${STEER:-build/steer}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
mkdir -p "$out"
n=$(grep -c . "$list")
for r in $(seq 1 "$rounds"); do
  k=$(((r - 1) * n / rounds))
  # Round r starts at the list's (k+1)-th configuration and wraps round (blank lines dropped).
  { awk -v k="$k" 'NF && ++i > k' "$list"; awk -v k="$k" 'NF && ++i <= k' "$list"; } >"$out/order_$r.txt"
  rm -f "$out/round_$r.db"
  # shellcheck disable=SC2086  # TUNE_ARGS is a list of options
  "$steer" tune "$root/kernels/$kernel/spec.json" --backend "${BACKEND:-cuda}" --size "$size" --searcher list \
    --set "file=$out/order_$r.txt" --final-check 0 --db "$out/round_$r.db" --json ${TUNE_ARGS:-} \
    >"$out/round_$r.json" 2>"$out/round_$r.log" ||
    echo "measure_again.sh: round $r: steer tune exited with $? (its log: $out/round_$r.log)" >&2
  echo "$kernel round $r: $n configurations"
done
