#!/usr/bin/env bash
# Runs ON THE GPU MACHINE (issue 6), after pack.sh: spk-tune on the large compound matrices of
# compound.sh (per entry type; classes from spk::matrix_class), merging into one tuning file.
#   bash perf_tests/device/compound_tune.sh [TYPE...]     (default: every type below)
# Environment: TUNING_FILE (default $OUT/spk-tuning.json), SCHEDULES_MODE (spk-tune
# --schedules, default separate), REPEAT (default 20). Logs and JSON go to $OUT.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/device-out}
mkdir -p "$out"
bash "$root/perf_tests/device/run.sh" bench --help >/dev/null 2>&1  # unpacks binaries and data
bin=/tmp/spk-device/bin
m=/tmp/spk-device/data/meshes
export SPK_DATA_DIR=/tmp/spk-device/data SPK_COMMIT=$(cat "$root/.carry/commit" 2>/dev/null || echo unknown)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
file=${TUNING_FILE:-$out/spk-tuning.json}
layouts=$(for o in csr ell sell16 sell32; do for i in aos soa aosoa4 aosoa32; do
  for v in aos soa aosoa4; do printf '%s-%s-%s,' $o $i $v; done; done; done)
layouts=${layouts%,}
rc=0
for t in ${@:-quaternion64 quaternion32 block3_64 block3_32 complex128 complex64}; do
  case $t in
    quaternion*) cases=(--mesh "$m/igea.ply:3" --mesh "$m/armadillo.obj:4") ;;
    block3*) cases=(--mesh "$m/hand.msh:3" --mesh "$m/bunny.mesh:3") ;;
    complex*) cases=(--gen helmholtz:200) ;;
  esac
  echo "== spk-tune $t"
  "$bin/perf_tests/spk-tune" --scalar "$t" "${cases[@]}" --layouts "$layouts" \
    --schedules "${SCHEDULES_MODE:-separate}" --repeat "${REPEAT:-20}" --out "$file" \
    --json "$out/tune-$t.json" > "$out/tune-$t.log" 2> "$out/tune-$t.err" || rc=1
  grep -E "^class|^chosen" "$out/tune-$t.log"
done
echo "compound_tune.sh: exit $rc"
exit $rc
