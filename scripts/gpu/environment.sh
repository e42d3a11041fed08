# Sourced by the scripts of scripts/gpu/ on the H200: where the repository, the bundle
# (scripts/gpu/bundle) and the output folder are, and where the bundle's and the driver's
# shared libraries are found.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bundle="${STEER_GPU_BUNDLE:-$root/.gpu-bundle}"  # another bundle: tests/scripts/ use a fake steer
out="${OUT:-/tmp/steer-gpu}"
mkdir -p "$out"
export LD_LIBRARY_PATH="$bundle/lib:/usr/local/nvidia/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"

# open_store NAME[@SIZE] [SUFFIX]: sets name, size (default h200), stem (NAME_SIZE, then SUFFIX)
# and db ($out/STEM.db), and starts db from the committed data/h200/STEM.db.gz unless this call
# already has it.
open_store() {
  name="${1%@*}"
  size=h200
  [ "$1" != "$name" ] && size="${1#*@}"
  stem="${name}_${size}${2:-}"
  db="$out/$stem.db"
  local previous="$root/data/h200/$stem.db.gz"
  if [ -f "$previous" ] && [ ! -f "$db" ]; then gunzip -c "$previous" >"$db"; fi
}

# ncu_of_profile SECONDS METRICS KERNEL SPEC SIZE CONFIG STEM: Nsight Compute's values of METRICS
# for one `steer profile` launch of CONFIG (clocks left alone, values in base units), as CSV in
# $out/STEM.csv (its messages in STEM.log); KERNEL, unless empty, limits ncu to that kernel (not
# the cache flush or the restores the worker launches around it). Returns ncu's exit status.
ncu_of_profile() {
  local seconds="$1" metrics="$2" kernel="$3" spec="$4" size="$5" config="$6" stem="$7"
  local ncu filter=()
  ncu="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
  [ -n "$kernel" ] && filter=(-k "$kernel")
  timeout -k 5 "$seconds" "$ncu" --clock-control none --metrics "$metrics" "${filter[@]}" --launch-count 1 \
    --target-processes all --csv --print-units base "$bundle/steer" profile "$spec" --backend cuda --size "$size" \
    --config "$config" --counters none --no-energy --repetitions 1 >"$out/$stem.csv" 2>"$out/$stem.log"
}
