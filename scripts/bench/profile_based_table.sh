#!/usr/bin/env bash
# The profile-based searcher against random search for each kind of counter model, in the
# form of the paper's Tables 4-7 (docs/results.md, "Profile-based searcher"): one markdown
# row per "tuned recording | model recording | settings" line, mean tests to the first
# configuration within 1.1x of the best (median, p90), and the ratio to random search's mean.
# settings: --set values (space-separated); compute_bound=true where the kernel's spec
# declares it compute-bound (coulomb, gemm, conv, nbody), as steer tune does; a word starting
# with -- is a steer simulate flag (e.g. --with-counters for a recording whose counters lag behind its tests).
#   BUILD=build-lead RUNS=1000 bash scripts/bench/profile_based_table.sh
# PAIRS="TUNED|MODEL_DATA|SETTINGS" lines override the default list below.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
steer="${STEER:-${BUILD:-build}/steer}"
runs="${RUNS:-1000}"
d=data/recordings/ktt
h=data/h200
default_pairs="$d/coulomb_rtx2080.ktt.json.gz|$d/coulomb_rtx2080.ktt.json.gz|compute_bound=true
$d/pnpoly_rtx3090.ktt.json.gz|$d/pnpoly_rtx2080ti.ktt.json.gz|
$d/coulomb_gtx1070.ktt.json.gz|$d/coulomb_rtx2080.ktt.json.gz|compute_bound=true
$d/pnpoly_rtx2080ti.ktt.json.gz|$d/pnpoly_rtx2080ti.ktt.json.gz|
$h/coulomb_h200.db.gz|$d/coulomb_rtx2080.ktt.json.gz|compute_bound=true
$h/coulomb_h200.db.gz|$h/coulomb_h200.db.gz|compute_bound=true
$h/transpose_h200.db.gz|$h/transpose_h200.db.gz|
$h/gemm_h200.db.gz|$h/gemm_h200.db.gz|compute_bound=true
$h/gemm_h200.db.gz|$h/gemm_cube128.db.gz|compute_bound=true
$h/conv_h200.db.gz|$h/conv_h200.db.gz|compute_bound=true
$h/nbody_h200.db.gz|$h/nbody_h200.db.gz|compute_bound=true"
pairs="${PAIRS:-$default_pairs}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

stem() { basename "$1" | sed -E 's/\.(ktt\.json|kt\.json|db)\.gz$//'; }
cell() {  # cell JSON SEARCHER -> "mean (median, p90) · ratio"
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = next(x for x in d["searchers"] if x["name"] == sys.argv[2])
text = f'{s["mean_tests"]:.1f} ({s["median_tests"]:g}, {s["p90_tests"]:g})'
if sys.argv[2] != "random": text += f' · {s["ratio_to_random"]:.3f}'
if s["failed_runs"]: text += f' ({s["failed_runs"]} failed)'
print(text)
PY
}

echo "| tuned recording | model trained on | random | tree | forest | lsq |"
echo "|---|---|---:|---:|---:|---:|"
while IFS='|' read -r tuned model_data settings; do
  [ -n "$tuned" ] || continue
  row="| $(stem "$tuned") | $(stem "$model_data")${settings:+ ($settings)} |"
  sets=()
  for setting in $settings; do
    case "$setting" in
      --*) sets+=("$setting") ;;  # a steer simulate flag, e.g. --with-counters
      *) sets+=(--set "profile-based.$setting") ;;
    esac
  done
  first=1
  for kind in tree forest lsq; do
    model="$work/$(stem "$model_data").$kind.json"
    [ -f "$model" ] || "$steer" model train --data "$model_data" --kind "$kind" --out "$model" >/dev/null
    "$steer" simulate --data "$tuned" --searcher random,profile-based --runs "$runs" --model "$model" "${sets[@]}" --no-score --json >"$work/sim.json"
    if ((first)); then row+=" $(cell "$work/sim.json" random) |"; first=0; fi
    row+=" $(cell "$work/sim.json" profile-based) |"
  done
  echo "$row"
done <<<"$pairs"
