#!/usr/bin/env bash
# Quality against the limits: how close Steer's best configurations come to what the hardware
# and NVIDIA's libraries reach at the specs' sizes (docs/performance.md, "Quality against the
# limits"). On a machine with a CUDA GPU, nvcc and a built steer:
#   bash tools/limits/limits.sh OUT_DIR
# 1. tools/limits/limits.cu (compiled with nvcc for this GPU unless LIMITS_TOOL names a built
#    one) measures the references: a device-to-device copy of transpose's bytes, cuBLAS SGEMM at
#    gemm's size and DGEMM at dgemm_energy's (default and pedantic math), FP32/FP64 FMA and
#    rsqrt throughput, the FP32 peak.
# 2. Steer's best per benchmark: from its recording data/h200/NAME_SIZE.db.gz when there is one
#    (LIMITS_DATA names another folder), else a short tune (random searcher over a
#    neighbourhood of known-good configurations from tools/limits/seeds.json;
#    LIMITS_FALLBACK=random: over the whole space).
# 3. tools/limits/assemble.py writes OUT_DIR/limits.json and OUT_DIR/limits.md. Everything else
#    lands in OUT_DIR too: limits.txt (the log), limits_tool.json/.log, best/NAME/ (exports,
#    tune logs, where each best came from).
# Settings (environment):
#   STEER              the steer binary (default build/steer)
#   LIMITS_KERNELS     benchmarks, in priority order (default below)
#   LIMITS_TUNE        auto (tune where nothing is recorded) | always | never
#   LIMITS_FALLBACK    seeded (default) | random
#   LIMITS_BUDGET      tests per fallback tune (default 24)
#   LIMITS_TUNE_S      seconds per fallback tune, its setup included (default 20;
#                      LIMITS_TUNE_S_<name> for one benchmark: transpose's defaults to 30)
#   LIMITS_DEADLINE_S  start no tune after this many seconds of the script (default 125)
#   LIMITS_REPS        timed launches per reference in the limits tool (default 30)
#   LIMITS_DRY_RUN=1   no GPU: a made-up tool result (tools/limits/dry_run_tool.json), tunes
#                      only printed, the rest (recordings, export, table) for real
#   LIMITS_BACKEND, LIMITS_SIZE   for testing the plumbing elsewhere (default cuda, h200): e.g.
#                      LIMITS_DRY_RUN=1 LIMITS_TUNE=always LIMITS_BACKEND=opencl LIMITS_SIZE=small
#                      tunes for real on PoCL (the tool faked, the recordings ignored)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:?usage: tools/limits/limits.sh OUT_DIR}"
mkdir -p "$out/best"
out="$(cd "$out" && pwd)"
steer="${STEER:-$root/build/steer}"
data="${LIMITS_DATA:-$root/data/h200}"
dry="${LIMITS_DRY_RUN:-0}"
kernels="${LIMITS_KERNELS:-transpose gemm dgemm_energy nbody coulomb conv gemm_full}"
tune_mode="${LIMITS_TUNE:-auto}"
fallback="${LIMITS_FALLBACK:-seeded}"
budget="${LIMITS_BUDGET:-24}"
tune_s="${LIMITS_TUNE_S:-20}"
: "${LIMITS_TUNE_S_transpose:=30}"  # 1 G floats: CPU reference and validation take longer
: "${LIMITS_TUNE_S_conv:=75}"  # its CPU reference at 24576² alone takes over 20 s
deadline="${LIMITS_DEADLINE_S:-125}"
reps="${LIMITS_REPS:-30}"
backend="${LIMITS_BACKEND:-cuda}"
size="${LIMITS_SIZE:-h200}"
export LIMITS_SIZE="$size" LIMITS_BACKEND="$backend"  # for assemble.py
work="$(mktemp -d /tmp/steer-limits.XXXXXX)"
log="$out/limits.txt"
: >"$log"

cleanup() {
  rm -rf "$work"
  for name in $kernels; do rm -f "$root/kernels/$name/.limits_pinned.json"; done
}
trap cleanup EXIT

say() { echo "$*" | tee -a "$log"; }

say "== steer limits $(date -u +%Y-%m-%dT%H:%M:%SZ) (dry run: $dry)"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu \
    --format=csv 2>&1 | tee -a "$log"
fi
have_py=0
command -v python3 >/dev/null 2>&1 && have_py=1
[ "$have_py" = 1 ] || say "python3 missing: no table (tools/limits/assemble.py), sizes default to the h200 ones"

# --- sizes from the specs (h200)
size_of() {  # size_of NAME KEY DEFAULT
  if [ "$have_py" = 1 ]; then
    python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["sizes"]["h200"][sys.argv[2]]))' \
      "$root/kernels/$1/spec.json" "$2" 2>/dev/null && return
  fi
  echo "$3"
}
tm=$(size_of transpose M 32768); tn=$(size_of transpose N 32768)
copy_bytes=$((tm * tn * 4))
sg="$(size_of gemm M 4096) $(size_of gemm N 4096) $(size_of gemm K 4096)"
dg="$(size_of dgemm_energy M 4096) $(size_of dgemm_energy N 4096) $(size_of dgemm_energy K 4096)"
say "sizes: transpose ${tm}x${tn} (copy of $copy_bytes bytes), SGEMM $sg, DGEMM $dg"

# --- 1. the references
limits="${LIMITS_TOOL:-}"
if [ "$dry" = 1 ]; then
  if [ -n "$limits" ] && [ -x "$limits" ]; then
    say "== limits tool --dry-run"
    # shellcheck disable=SC2086  # sg and dg are three numbers each
    "$limits" --dry-run --copy-bytes "$copy_bytes" --sgemm $sg --dgemm $dg --reps "$reps" >"$out/limits_tool.json" 2>"$out/limits_tool.log"
    say "limits tool: exit $?"
  else
    say "== limits tool (dry run: tools/limits/dry_run_tool.json)"
    cp "$root/tools/limits/dry_run_tool.json" "$out/limits_tool.json"
  fi
else
  if [ -z "$limits" ] || [ ! -x "$limits" ]; then
    say "== compiling tools/limits/limits.cu with nvcc for this GPU"
    nvcc_bin="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
    limits="$work/limits"
    "$nvcc_bin" -O3 -std=c++17 -arch=native -o "$limits" "$root/tools/limits/limits.cu" -ldl 2>&1 | tail -n 20 | tee -a "$log"
  fi
  say "== limits tool"
  # shellcheck disable=SC2086  # sg and dg are three numbers each
  "$limits" --copy-bytes "$copy_bytes" --sgemm $sg --dgemm $dg --reps "$reps" --warmup 3 \
    --timeout 180 >"$out/limits_tool.json" 2>"$out/limits_tool.log"
  rc=$?
  tee -a "$log" <"$out/limits_tool.log"
  say "limits tool: exit $rc"
  if [ "$rc" != 0 ] || grep -q "dlopen" "$out/limits_tool.log"; then
    find /usr/local/cuda/lib64/ /usr/local/cuda-13.0/targets/x86_64-linux/lib/ -maxdepth 1 -name "libcublas*" 2>&1 | tee -a "$log"
  fi
fi

# --- 2. Steer's best per benchmark
export_db() {  # export_db DB PREFIX: every tuning of the store, as Steer JSON
  if "$steer" export --db "$1" --format json --out "$2.json" 2>"$2.err"; then
    return 0
  fi
  local ids id ok=1
  ids=$(awk '$1 ~ /^[0-9]+$/ {print $1}' "$2.err")
  [ -n "$ids" ] || { say "export of $1 failed: $(tail -n 3 "$2.err")"; return 1; }
  for id in $ids; do  # several tunings: all of them; assemble.py keeps the h200 CUDA ones
    "$steer" export --db "$1" --tuning "$id" --format json --out "$2_$id.json" 2>>"$2.err" && ok=0
  done
  return $ok
}

for name in $kernels; do
  dir="$out/best/$name"
  rm -rf "$dir"
  mkdir -p "$dir"
  spec="$root/kernels/$name/spec.json"
  [ -f "$spec" ] || { say "== $name: no spec, skipped"; continue; }
  recorded=0
  rec="$data/${name}_${size}.db.gz"
  if [ "$tune_mode" != always ] && [ -f "$rec" ]; then
    gunzip -c "$rec" >"$work/${name}_rec.db" && export_db "$work/${name}_rec.db" "$dir/export_recording" && recorded=1
    [ "$recorded" = 1 ] && echo "recording ${rec#"$root"/}" >>"$dir/source.txt"
    say "== $name: recording ${rec#"$root"/} (exported: $recorded)"
  fi
  if [ "$recorded" = 1 ] || [ "$tune_mode" = never ]; then continue; fi

  elapsed=$SECONDS
  left=$((deadline - elapsed))
  if [ "$left" -lt 20 ]; then
    say "== $name: not tuned ($elapsed s gone, deadline $deadline s)"
    echo "not tuned: out of time" >>"$dir/source.txt"
    continue
  fi
  per_kernel="LIMITS_TUNE_S_$name"
  limit="${!per_kernel:-$tune_s}"
  [ "$limit" -gt "$left" ] && limit=$left
  tune_spec="$spec"
  what="random over the whole space"
  if [ "$fallback" = seeded ] && [ "$have_py" = 1 ] &&
    python3 "$root/tools/limits/pin_spec.py" "$spec" "$root/tools/limits/seeds.json" "$name" \
      "$root/kernels/$name/.limits_pinned.json" >/dev/null; then
    tune_spec="$root/kernels/$name/.limits_pinned.json"
    what="random over a neighbourhood of known-good configurations (tools/limits/seeds.json)"
  fi
  db="$work/${name}_tune.db"
  rm -f "$db" "$db-wal" "$db-shm"
  cmd=("$steer" tune "$tune_spec" --backend "$backend" --size "$size" --searcher random --seed 1 --budget "$budget"
    --time "$limit" --db "$db" --json)
  say "== $name: tune, $what, budget $budget, ${limit} s"
  if [ "$dry" = 1 ] && [ "$tune_mode" != always ]; then
    say "dry run: ${cmd[*]}"
    echo "dry run: not tuned" >>"$dir/source.txt"
    continue
  fi
  # --time is checked between tests; SIGINT ends a stuck one after the test in progress,
  # SIGKILL 15 s later. Finished tests are in the store either way.
  timeout -s INT -k 15 $((limit + 40)) "${cmd[@]}" >"$dir/tune_summary.json" 2>"$dir/tune.log"
  rc=$?
  tail -n 2 "$dir/tune.log" | tee -a "$log"
  say "exit $rc after $((SECONDS - elapsed)) s"
  if [ -f "$db" ] && export_db "$db" "$dir/export_tune"; then
    echo "tuned here: $what, budget $budget, ${limit} s, exit $rc" >>"$dir/source.txt"
  else
    echo "tune failed (exit $rc)" >>"$dir/source.txt"
  fi
done

# --- 3. the table
if [ "$have_py" = 1 ]; then
  say "== table"
  # shellcheck disable=SC2086  # kernels is a list
  python3 "$root/tools/limits/assemble.py" "$root" "$out" $kernels 2>&1 | tee -a "$log"
fi
say "== done in $SECONDS s: $out/limits.md, $out/limits.json"
