#!/usr/bin/env bash
# One device call that carries the H200 ground truth forward and stops cleanly at a deadline
# (the device allows 600 s per call). Two lanes of work:
#   counters lane: 1. the CUDA GPU tests                                 -> tests.txt
#                  2. user range vs kernel range vs ncu (ranges.sh)      -> ranges.txt
#                  3. steer tune --searcher profile-based on the GPU: gemm at 4096³ steered by
#                     a model trained on the 128³ recording            -> profile_based_gemm.*
#                  6. the cost of profiling pass by pass, and the 5-pass default set against
#                     ncu (pass_cost.sh)                                 -> pass_cost.txt
#                  4. counters and new configurations (record.sh; each store keeps the
#                     profiler range its counters were measured with)
#   energy lane:   5. energy samples and the near-best band (energy.sh), then record.sh for
#                     CONTINUE_RECORD_AFTER_ENERGY
# On a machine with two GPUs (device kind nvidia-h200-x2) the lanes run side by side, one per
# GPU (NVML is addressed by PCI bus id, so each lane's energy is its own GPU's); on one GPU
# the energy lane follows the counters lane, whose recording then gets half of the call (all
# of it when the energy lane has nothing to do). The lanes must name different stores.
# The scripts write into a scratch folder; $OUT receives results.tgz and summary.txt only
# (the device returns at most 8 files, and a folder of many would lose the archive).
#   device run: bash scripts/gpu/continue.sh     (carry: [".gpu-bundle"]; after scripts/gpu/bundle here)
#   then here: bash scripts/gpu/take_results /work/.device/N continue_sessionS_callN (before the next call)
# The defaults are the next step after session 7 (docs/performance.md, "Next device calls"):
# the rest of gemm's space with counters in the counters lane; in the energy lane DGEMM's
# near-best band, the rest of conv with counters, then the timing-only recordings (the
# gemm_full sample, the rest of the DGEMM space). nbody, transpose and coulomb are complete;
# the one-off stages are skipped.
# Environment: CONTINUE_DEADLINE (default 530 s; then every lane is stopped), CONTINUE_SKIP
# (stage numbers to skip; default "1 2 3 6", all done on 2026-11-30; "" runs all), CONTINUE_RECORD
# (default "gemm"), CONTINUE_ENERGY (default "dgemm_energy:0": its near-best band, which grows
# as the recording does; "" skips the energy work), CONTINUE_RECORD_AFTER_ENERGY (benchmarks the
# energy lane records with counters once its energy work is done; default "conv"),
# STEER_RECORD_RECOUNT (default 0; 1 measures the stores' configurations again into
# *_kernel_range stores), CONTINUE_EXTEND and CONTINUE_EXTEND_AFTER_ENERGY (benchmarks whose
# stores get new configurations of the space, with counters, without recount, once everything
# else of the counters lane / the energy lane is done; default none), CONTINUE_TIMING and
# CONTINUE_TIMING_AFTER_ENERGY (timing-only recordings, last in each lane: NAME or NAME:N, N the
# size of the sample the store grows to; defaults "" and "gemm_full:20000 dgemm_energy").
# Two lanes must never name the same store: on two GPUs continue.sh refuses to start then.
# One space on both GPUs: bash scripts/gpu/split_remaining NAME 2 here, then NAME/part1 in one
# lane's list and NAME/part2 in the other's (record.sh); take_results appends the parts.
set -uo pipefail
final="${OUT:-/tmp/steer-gpu}"
mkdir -p "$final"
export OUT="$(mktemp -d)"
source "$(dirname "$0")/environment.sh"
exec > >(tee "$final/summary.txt") 2>&1
tee_pid=$!  # waited for at the end, so that summary.txt and the caller get the last lines
deadline="${CONTINUE_DEADLINE:-530}"
skip=" ${CONTINUE_SKIP-1 2 3 6} "
export STEER_RECORD_RECOUNT="${STEER_RECORD_RECOUNT:-0}"
# The energy lane's work, defaults applied once ("" is kept: it means none).
energy_work="${CONTINUE_ENERGY-dgemm_energy:0}"
record_after_energy="${CONTINUE_RECORD_AFTER_ENERGY-conv}"
extend_after_energy="${CONTINUE_EXTEND_AFTER_ENERGY:-}"
timing_after_energy="${CONTINUE_TIMING_AFTER_ENERGY-gemm_full:20000 dgemm_energy}"
left() { echo $((deadline - SECONDS)); }
stage() { [[ "$skip" != *" $1 "* ]]; }
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)
nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv

# The stores each lane would write (NAME of NAME:N; NAME@SIZE is a store of its own).
stores_of() { local item; for item in "$@"; do echo "${item%%:*}"; done; }
counters_lane_stores() {
  { stage 4 && stores_of ${CONTINUE_RECORD:-gemm}; stores_of ${CONTINUE_EXTEND:-} ${CONTINUE_TIMING:-}; } | sort -u
}
energy_lane_stores() {
  { stage 5 && stores_of $energy_work; stores_of $record_after_energy $extend_after_energy $timing_after_energy; } | sort -u
}
# On two GPUs the lanes run side by side: a store named in both would be measured on both GPUs
# at once, the same configurations twice into one file. Refused before anything runs. (On one
# GPU the energy lane follows the counters lane, and resuming one store twice is safe.)
if [ "$gpus" -ge 2 ]; then
  both=$(comm -12 <(counters_lane_stores) <(energy_lane_stores) | tr '\n' ' ')
  if [ -n "$both" ]; then
    echo "continue.sh: both lanes would record ${both% }: on two GPUs a store may be in one lane only" \
      "(CONTINUE_RECORD, CONTINUE_EXTEND, CONTINUE_TIMING against CONTINUE_ENERGY, CONTINUE_*_AFTER_ENERGY)"
    exec >&- 2>&-
    wait "$tee_pid" 2>/dev/null
    exit 2
  fi
fi

counters_lane() {
  if stage 1; then
    timeout -k 5 120 "$bundle/tests/steer_backend_tests" --gtest_filter='Cuda*' >"$out/tests.txt" 2>&1
    echo "tests exit $?" >>"$out/tests.txt"
    grep -E "PASSED|FAILED|tests exit" "$out/tests.txt"
  fi
  if stage 2 && [ "$(left)" -gt 300 ]; then
    timeout -k 5 200 bash "$root/scripts/gpu/ranges.sh" | tail -n 40
  fi
  if stage 3 && [ "$(left)" -gt 200 ]; then
    echo "== steer tune gemm (4096³) --searcher profile-based, model trained on gemm at 128³"
    "$bundle/steer" model train --data "$root/data/h200/gemm_cube128.db.gz" --spec "$root/kernels/gemm/spec.json" \
      --kind tree --out "$out/gemm_cube128.tree.json" >"$out/profile_based_gemm_model.txt" 2>&1
    echo "model train exit $?"
    timeout -k 5 150 "$bundle/steer" tune "$root/kernels/gemm/spec.json" --backend cuda --size h200 \
      --searcher profile-based --model "$out/gemm_cube128.tree.json" --budget 60 --seed 1 \
      --db "$out/profile_based_gemm.db" --json >"$out/profile_based_gemm.json" 2>"$out/profile_based_gemm.log"
    echo "tune exit $?"
    tail -n 3 "$out/profile_based_gemm.log"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("tests", d["tests"], "valid", d["valid"], "profiled", d["profiling"]["profiled_tests"], "best", d["best"]["time_ms"], "ms", d["best"]["config"])' \
      "$out/profile_based_gemm.json" 2>&1
  fi
  if stage 6 && [ "$(left)" -gt 300 ]; then
    timeout -k 5 240 bash "$root/scripts/gpu/pass_cost.sh" | grep -E '^(==|pass |kernel|test )'
  fi
  if stage 4 && [ "$(left)" -gt 60 ]; then
    local share=$(left)
    # On one GPU the energy lane follows: half of what is left, unless it has nothing to do.
    [ "$gpus" -lt 2 ] && energy_lane_has_work && share=$((share / 2))
    STEER_RECORD_COUNTERS=default STEER_RECORD_MAX_TEST_MS=50 STEER_RECORD_DEADLINE=$((share - 10)) \
      bash "$root/scripts/gpu/record.sh" ${CONTINUE_RECORD:-gemm} | grep -v '^test '
  fi
  extend ${CONTINUE_EXTEND:-}
  timing ${CONTINUE_TIMING:-}
}

# extend NAME...: new configurations, with counters, for stores that need no recount.
extend() {
  [ "$#" -gt 0 ] && [ "$(left)" -gt 60 ] || return 0
  STEER_RECORD_RECOUNT=0 STEER_RECORD_COUNTERS=default STEER_RECORD_MAX_TEST_MS=50 STEER_RECORD_DEADLINE=$(($(left) - 10)) \
    bash "$root/scripts/gpu/record.sh" "$@" | grep -v '^test '
}

# timing NAME[:N]...: new configurations without counters or energy (the fastest way through a
# big space); NAME:N stops once the store holds N tests (a uniform sample of the space). Launches
# stop once 50 ms were timed, as in the counters recordings (a 10 ms kernel gets 5; the store
# keeps each test's count): the launch loop, not compilation, is what a timing-only test costs.
timing() {
  local item
  for item in "$@"; do
    [ "$(left)" -gt 60 ] || return 0
    local budget=""
    [[ "$item" == *:* ]] && budget="${item##*:}"
    STEER_RECORD_RECOUNT=0 STEER_RECORD_COUNTERS= STEER_RECORD_BUDGET="$budget" \
      STEER_RECORD_MAX_TEST_MS="${STEER_RECORD_MAX_TEST_MS:-50}" STEER_RECORD_DEADLINE=$(($(left) - 10)) \
      bash "$root/scripts/gpu/record.sh" "${item%%:*}" | grep -v '^test '
  done
}

energy_lane_has_work() {
  { stage 5 && [ -n "$energy_work" ]; } || [ -n "$record_after_energy$extend_after_energy$timing_after_energy" ]
}

energy_lane() {
  if stage 5 && [ -n "$energy_work" ] && [ "$(left)" -gt 40 ]; then
    STEER_ENERGY_DEADLINE=$(($(left) - 20)) bash "$root/scripts/gpu/energy.sh" $energy_work | grep -v '^test '
  fi
  # What is left of this lane's GPU records counters for CONTINUE_RECORD_AFTER_ENERGY.
  if [ -n "$record_after_energy" ] && [ "$(left)" -gt 60 ]; then
    STEER_RECORD_COUNTERS=default STEER_RECORD_MAX_TEST_MS=50 STEER_RECORD_DEADLINE=$(($(left) - 10)) \
      bash "$root/scripts/gpu/record.sh" $record_after_energy | grep -v '^test '
  fi
  extend $extend_after_energy
  timing $timing_after_energy
}

# Each lane runs in its own process group, so that at the deadline everything it started
# (steer, its workers, ncu) can be stopped, and what was measured by then still comes back:
# the stores are written test by test.
start_lane() {  # start_lane NAME GPU: runs NAME_lane in the background, its lines prefixed
  (
    [ -n "$2" ] && export CUDA_VISIBLE_DEVICES="$2"
    "$1_lane" 2>&1 | sed -u "s/^/[$1] /"
  ) &
}
set -m  # background jobs get process groups of their own
if [ "$gpus" -ge 2 ]; then
  echo "$gpus GPUs: the counters lane on GPU 0, the energy lane on GPU 1"
  start_lane counters 0
  start_lane energy 1
else
  (counters_lane; energy_lane) 2>&1 &
fi
while [ -n "$(jobs -rp)" ] && [ "$(left)" -gt 0 ]; do sleep 2; done
for pid in $(jobs -rp); do
  echo "continue.sh: the deadline stops job $pid"
  kill -TERM -- "-$pid" 2>/dev/null
done
# `timeout` puts what it runs into a process group of its own: stop those by name.
pkill -TERM -f "$bundle/" 2>/dev/null
pkill -TERM -x ncu 2>/dev/null
sleep 5
for pid in $(jobs -rp); do kill -KILL -- "-$pid" 2>/dev/null; done
pkill -KILL -f "$bundle/" 2>/dev/null
(cd "$out" && tar czf "$final/results.tgz" ./* && ls -la "$final/results.tgz")
echo "continue.sh: done in $SECONDS s"
exec >&- 2>&-
wait "$tee_pid" 2>/dev/null
