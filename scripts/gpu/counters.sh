#!/usr/bin/env bash
# Checks counters and energy on the H200 (device tool, after scripts/gpu/bundle here):
#   device run: bash scripts/gpu/counters.sh        (carry: [".gpu-bundle"])
# 1. Steer's in-process counters against Nsight Compute (ncu --clock-control none) for the
#    same configuration: instruction counts must be equal, DRAM reads within 1 %.
# 2. Energy per launch of one configuration, 5 measurements per window length: the
#    spread across them (goal: within 3 %), to pick the shortest window that achieves it.
# 3. The cost of profiling in a real tune (--counters default) and a tune for energy.
# Everything lands in $OUT (counters.txt is the summary).
set -uo pipefail
source "$(dirname "$0")/environment.sh"
steer="$bundle/steer"
log="$out/counters.txt"
: >"$log"
say() { echo "$@" | tee -a "$log"; }

transpose_config="VECTOR_TYPE=1,CR=0,LOCAL_MEM=1,PADD_LOCAL=1,WORK_GROUP_SIZE_X=32,WORK_GROUP_SIZE_Y=8,TILE_SIZE_X=32,TILE_SIZE_Y=32,DIAGONAL_MAP=0"
gemm_config="MWG=64,NWG=64,KWG=32,MDIMC=16,NDIMC=16,MDIMA=8,NDIMB=8,KWI=2,VWM=2,VWN=2,STRM=0,STRN=0,SA=1,SB=1,PRECISION=32"
compare_metrics="smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_fp32_pred_on.sum,smsp__sass_thread_inst_executed_op_integer_pred_on.sum,smsp__sass_thread_inst_executed_op_memory_pred_on.sum,dram__sectors_read.sum,lts__t_sectors_op_read.sum"

say "== device"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv 2>&1 | tee -a "$log"

say "== 1. Steer's counters against ncu"
for case in "transpose paper $transpose_config" "gemm paper $gemm_config"; do
  read -r name size config <<<"$case"
  spec="kernels/$name/spec.json"
  timeout 120 "$steer" profile "$spec" --backend cuda --size "$size" --config "$config" --no-energy --json \
    >"$out/profile_${name}.json" 2>"$out/profile_${name}.log"
  say "steer profile $name (default set): exit $?"
  timeout 120 "$steer" profile "$spec" --backend cuda --size "$size" --config "$config" --no-energy \
    --counters "$compare_metrics" --json >"$out/steer_${name}.json" 2>>"$out/profile_${name}.log"
  say "steer profile $name (compared metrics): exit $?"
  ncu_of_profile 180 "$compare_metrics" "" "$spec" "$size" "$config" "ncu_${name}"
  say "ncu $name: exit $?"
  python3 "$root/scripts/gpu/compare_ncu.py" "$out/steer_${name}.json" "$out/ncu_${name}.csv" "$name" 2>&1 | tee -a "$log"
done

say "== 2. energy repeatability (gemm paper, 5 measurements per window)"
for window in 0.1 0.25 0.5 1.0; do
  timeout 120 "$steer" profile kernels/gemm/spec.json --backend cuda --size paper --config "$gemm_config" \
    --counters none --energy-window "$window" --repeat 5 --json >"$out/energy_${window}.json" 2>"$out/energy_${window}.log"
  say "window $window s: exit $?"
  python3 - "$out/energy_${window}.json" <<'PY' 2>&1 | tee -a "$log"
import json, sys
d = json.load(open(sys.argv[1]))
js = [r.get("joules_per_launch") for r in d.get("repeats", [])]
print("  J/launch:", " ".join(f"{j:.5f}" for j in js), f"| spread across repeats {100 * d.get('energy_repeat_spread', float('nan')):.2f} %",
      "| within-window spreads", " ".join(f"{100 * r.get('spread', 0):.1f}%" for r in d.get("repeats", [])),
      "| W", " ".join(f"{r.get('average_watts', 0):.0f}" for r in d.get("repeats", [])),
      "| MHz", " ".join(f"{r.get('sm_clock_mhz', 0):.0f}" for r in d.get("repeats", [])))
PY
done

say "== 3. profiling cost in a tune (transpose paper, 40 random tests, --counters default)"
timeout 300 "$steer" tune kernels/transpose/spec.json --backend cuda --size paper --searcher random --seed 3 \
  --budget 40 --counters default --db "$out/transpose_counters.db" --json >"$out/tune_counters.json" 2>"$out/tune_counters.log"
say "exit $?"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(d['profiling']), 'best', d['best'] and d['best']['time_ms'], 'warnings', d['warnings'])" \
  "$out/tune_counters.json" 2>&1 | tee -a "$log"

say "== 4. tune for energy (gemm paper, 30 random tests, --objective energy, window 0.25 s)"
timeout 300 "$steer" tune kernels/gemm/spec.json --backend cuda --size paper --searcher random --seed 3 \
  --budget 30 --objective energy --energy-window 0.25 --db "$out/gemm_energy.db" >"$out/tune_energy.txt" 2>"$out/tune_energy.log"
say "exit $?"
tail -n 20 "$out/tune_energy.txt" | tee -a "$log"
