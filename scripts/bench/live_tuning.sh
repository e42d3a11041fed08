#!/usr/bin/env bash
# Live tunings side by side on one GPU: every searcher with every seed for the same wall-clock
# budget, one after another (seeds outermost, so drift in the GPU's state spreads over all
# searchers). Each test's progress line is stamped with the seconds since that tuning was
# launched, so best-so-far can be drawn against wall-clock time (scripts/bench/live_summary.py).
#
#   MODEL=M SOURCE=S [TUNE_ARGS=...] scripts/bench/live_tuning.sh OUT KERNEL SIZE SECONDS "SEEDS" SEARCHER...
#
# SEARCHER is any `steer searchers` name, or NAME+KEY=VALUE[+KEY=VALUE...] for that searcher
# with those settings (`--set KEY=VALUE`; its files carry the whole label, so that two settings
# of one searcher run side by side). A part tune.OPTION=VALUE is the `steer tune` option
# --OPTION VALUE for that tuning alone: `guided+tune.guesses=0` beside `guided` measures what
# compiling guesses ahead gains, in one session. `guided` (and `default-model`, the default searcher
# given the model) get --model MODEL and --set source=SOURCE (a recording of the kernel on
# another GPU or input: docs/models.md). SOURCE=model: no setting, so the runtimes MODEL
# carries of its own recording are the source, as for a user who passes only --model;
# without SOURCE, source=none: no source at all. Writes
# OUT/KERNEL_SEARCHER_SEED.{db,log,json}. STEER: the binary (default build/steer); TUNE_ARGS:
# more `steer tune` options for every tuning (e.g. "--objective energy"). ROTATE=1: seed S
# starts with the ((S-1) mod N)-th of the N searchers and goes round, so that no searcher is
# always first after the GPU idled (with a shared compile cache, below, the first tuning of a
# session compiles slowest). WARMUP=1: a one-test tuning first (OUT/KERNEL_warmup.txt), which
# computes and caches the reference outputs, so that no timed tuning pays for them.
#
# NVRTC (12.9 and later) keeps what it compiles in the CUDA driver's compute cache, shared by
# every process of the machine: a tuning would compile what an earlier one compiled in a
# fraction of the time, and the searchers that test the same configurations in every seed
# would gain most. So each tuning gets an empty cache of its own (CUDA_CACHE_PATH, removed
# afterwards), as the first tuning of a kernel on a machine has it. COMPILE_CACHE=shared: the
# machine's cache, as a user's later tunings have it.
set -euo pipefail
if [ $# -lt 6 ]; then
  sed -n '2,30p' "$0" >&2
  exit 2
fi
case "${COMPILE_CACHE:-own}" in
  own | shared) ;;
  *) echo "live_tuning.sh: COMPILE_CACHE is '$COMPILE_CACHE'; expected own (the default) or shared" >&2; exit 2 ;;
esac
out=$1 kernel=$2 size=$3 seconds=$4 seeds=$5
shift 5
steer="${STEER:-build/steer}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
mkdir -p "$out"
cache=""
# Points CUDA_CACHE_PATH at a new empty folder (unless COMPILE_CACHE=shared).
fresh_compile_cache() {
  [ "${COMPILE_CACHE:-own}" = shared ] && return
  [ -z "$cache" ] || rm -rf "$cache"
  cache=$(mktemp -d "${TMPDIR:-/tmp}/steer-compile-cache.XXXXXX")
  export CUDA_CACHE_PATH="$cache"
}
trap '[ -z "$cache" ] || rm -rf "$cache"' EXIT
if [ "${WARMUP:-0}" = 1 ]; then
  fresh_compile_cache
  "$steer" tune "$root/kernels/$kernel/spec.json" --backend cuda --size "$size" --budget 1 --seed 99 \
    --final-check 0 >"$out/${kernel}_warmup.txt" 2>&1
fi
for seed in $seeds; do
  order=("$@")
  if [ "${ROTATE:-0}" = 1 ]; then
    k=$(((seed - 1) % $#))
    order=("${order[@]:$k}" "${order[@]:0:$k}")
  fi
  for label in "${order[@]}"; do
    name=$label
    IFS=+ read -ra parts <<<"$label"
    searcher=${parts[0]}
    args=(--searcher "$searcher")
    for setting in "${parts[@]:1}"; do
      [[ $setting == ?*=* ]] || { echo "live_tuning.sh: '$label': expected NAME+KEY=VALUE, got '$setting'" >&2; exit 2; }
      if [[ $setting == tune.* ]]; then
        option=${setting#tune.}
        [[ $option == ?*=* ]] || { echo "live_tuning.sh: '$label': expected tune.OPTION=VALUE, got '$setting'" >&2; exit 2; }
        args+=("--${option%%=*}" "${option#*=}")
      else
        args+=(--set "$setting")
      fi
    done
    case "$searcher" in
      guided | default-model)
        [ -n "${MODEL:-}" ] || { echo "live_tuning.sh: $searcher needs MODEL=FILE" >&2; exit 2; }
        [ "$searcher" = default-model ] && args[1]=default  # keeps the label's settings
        args+=(--model "$MODEL")
        [ "${SOURCE:-}" = model ] || args+=(--set "source=${SOURCE:-none}")
        ;;
    esac
    stem="$out/${kernel}_${name}_${seed}"
    rm -f "$stem.db"
    fresh_compile_cache
    start=$(date +%s%N)
    "$steer" tune "$root/kernels/$kernel/spec.json" --backend cuda --size "$size" --time "$seconds" \
      --seed "$seed" --db "$stem.db" --json "${args[@]}" ${TUNE_ARGS:-} 2>&1 >"$stem.json" |
      while IFS= read -r line; do
        ms=$((($(date +%s%N) - start) / 1000000))
        printf '%d.%03d %s\n' $((ms / 1000)) $((ms % 1000)) "$line"
      done >"$stem.log"
    echo "$kernel $name seed $seed: $(tail -1 "$stem.log")"
  done
done
