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
