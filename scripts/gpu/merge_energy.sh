#!/usr/bin/env bash
# Copies the energy figures of one results store into another recorded on the same device,
# input and spec: for every configuration valid in both that lacks energy in TARGET, the
# energy_* columns of SOURCE are written into TARGET's test (its times, counters and order
# stay). For recordings built in separate device calls, e.g. counters in one and energy in
# the other:  bash scripts/gpu/merge_energy.sh gemm_h200.db gemm_h200_energy.db
set -euo pipefail
if [ $# -ne 2 ] || [ ! -f "$1" ] || [ ! -f "$2" ]; then
  echo "usage: merge_energy.sh TARGET.db SOURCE.db (both existing, uncompressed Steer stores)" >&2
  exit 2
fi
target="$1" source="$2"
same="SELECT count(*) FROM tunings t, other.tunings o WHERE t.spec_name = o.spec_name AND
  t.spec_hash = o.spec_hash AND t.device = o.device AND t.backend = o.backend AND t.problem_size = o.problem_size"
if [ "$(sqlite3 "$target" "ATTACH '$source' AS other; $same")" != 1 ]; then
  echo "merge_energy: $target and $source hold different tunings (spec, device, backend or size)" >&2
  exit 1
fi
sqlite3 "$target" <<SQL
ATTACH '$source' AS other;
UPDATE tests SET
  energy_joules_per_launch = o.energy_joules_per_launch, energy_spread = o.energy_spread,
  energy_average_watts = o.energy_average_watts, energy_window_s = o.energy_window_s,
  energy_launches = o.energy_launches, energy_sm_clock_mhz = o.energy_sm_clock_mhz,
  energy_temperature_c = o.energy_temperature_c
FROM other.tests o
WHERE o.config_key = tests.config_key AND tests.status = 'ok' AND o.status = 'ok'
  AND tests.energy_joules_per_launch IS NULL AND o.energy_joules_per_launch IS NOT NULL;
SELECT changes() || ' tests got energy';
SQL
