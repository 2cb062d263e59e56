#!/usr/bin/env bash
# Runs ON THE GPU MACHINE (issue 6), after pack.sh: the CUDA tests of the compound code, the
# cuSPARSE compound baselines against the host reference, and the compound benchmarks:
# complex (Helmholtz, the shared complex matrices), quaternion (Dirac operators of refined
# meshes) and 3x3 blocks (elasticity of refined tetrahedral meshes), float and double, every
# layout on the small ones and 48 layouts on the large ones (>= 20M entries each). With
# TUNING=FILE the benchmarks add spk::make_tuned's matrix. JSON and logs go to $OUT.
#   bash perf_tests/device/compound.sh [tests|large|small|all]   (default all)
# Environment: PRECISIONS (large runs, default "64 32"), SCHEDULES (default the static default
# schedule), REPEAT (default 50), TESTS (test names).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/device-out}
mkdir -p "$out"
run="bash $root/perf_tests/device/run.sh"
what=${1:-all}
bin=/tmp/spk-device/bin
$run bench --help >/dev/null 2>&1  # unpacks the carried binaries and data once
data=/tmp/spk-device/data
export SPK_DATA_DIR=$data OMP_NUM_THREADS=${OMP_NUM_THREADS:-8} OMP_PROC_BIND=false
rc=0
if [ "$what" = tests ] || [ "$what" = all ]; then
  for t in ${TESTS:-compound_matrix tuning dirac_operator elasticity generate_compound mesh_io subdivide reorder}; do
    [ -x "$bin/unit_tests/spk_test_$t" ] || continue
    echo "== spk_test_$t"
    "$bin/unit_tests/spk_test_$t" > /tmp/test_$t.log 2>&1 || { echo "FAILED: $t"; rc=1; }
    { echo "== spk_test_$t"; grep -v "^Kokkos::OpenMP\|OMP_P\|^  In general\|^  For " /tmp/test_$t.log; } >> "$out/tests.log"
    tail -n 3 /tmp/test_$t.log
  done
  echo "== spk-cusparse-compound-check"
  "$bin/perf_tests/spk-cusparse-compound-check" 2>&1 | tee "$out/cusparse-compound-check.log" |
    tail -n 30 || rc=1
fi
large_layouts=$(for o in csr ell sell16 sell32; do for i in aos soa aosoa4 aosoa32; do
  for v in aos soa aosoa4; do printf '%s-%s-%s,' $o $i $v; done; done; done)
large_layouts=${large_layouts%,}
sched=()
[ -n "${TUNING:-}" ] && sched+=(--tuning "$TUNING")
for s in ${SCHEDULES:-static-t0-b0-r0}; do sched+=(--schedule "$s"); done
bench() {  # tag, args...
  local tag=$1
  shift
  echo "== $tag"
  $run bench "$@" "${sched[@]}" --json "$out/$tag.json" > "$out/$tag.log" 2>&1 || rc=1
  grep -E "WRONG|error" "$out/$tag.log" | head -5
  tail -n +1 "$out/$tag.log" | grep -E "csr-aos-aos/|cusparse" | head -20
}
if [ "$what" = large ] || [ "$what" = all ]; then
  for s in ${PRECISIONS:-64 32}; do
    c=complex$((2 * s))
    bench "$c-large" --scalar $c --format compound,cusparse-csr \
      --gen helmholtz:200 --layouts "$large_layouts" --repeat ${REPEAT:-50}
    bench "quaternion$s-large" --scalar quaternion$s --format all \
      --mesh "$data/meshes/igea.ply:3" --mesh "$data/meshes/armadillo.obj:4" \
      --layouts "$large_layouts" --repeat ${REPEAT:-50}
    bench "block3_$s-large" --scalar block3_$s --format all \
      --mesh "$data/meshes/hand.msh:3" --mesh "$data/meshes/bunny.mesh:3" \
      --layouts "$large_layouts" --repeat ${REPEAT:-50}
  done
fi
if [ "$what" = small ] || [ "$what" = all ]; then
  bench complex128-small --scalar complex128 --format compound,cusparse-csr --repeat ${REPEAT:-50} \
    --matrix "$data/matrices/mhd1280b.mtx" --matrix "$data/matrices/mhd1280a.mtx" \
    --matrix "$data/matrices/qc324.mtx" --matrix "$data/matrices/young1c.mtx" \
    --matrix "$data/matrices/dwg961a.mtx" --matrix "$data/matrices/w156.mtx"
  bench quaternion64-small --scalar quaternion64 --format all --repeat ${REPEAT:-50} \
    --mesh "$data/meshes/stanford-bunny.obj" --mesh "$data/meshes/spot.obj"
  bench block3_64-small --scalar block3_64 --format all --repeat ${REPEAT:-50} \
    --mesh "$data/meshes/femur_interior.1.ele:1" --mesh "$data/meshes/hand.mesh"
fi
echo "compound.sh: exit $rc"
exit $rc
