# Sourced by the scripts of scripts/gpu/ on the H200: where the repository, the bundle
# (scripts/gpu/bundle) and the output folder are, and where the bundle's and the driver's
# shared libraries are found.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bundle="$root/.gpu-bundle"
out="${OUT:-/tmp/steer-gpu}"
mkdir -p "$out"
export LD_LIBRARY_PATH="$bundle/lib:/usr/local/nvidia/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
