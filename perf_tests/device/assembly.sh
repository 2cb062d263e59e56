#!/usr/bin/env bash
# Runs ON THE GPU MACHINE (issue 8, FEM assembly), after pack.sh: the CUDA tests of the assembly,
# the meshes and the orderings, then spk-assemble on the acceptance cases (>= 1M tetrahedra for
# the P1 Laplacian and elasticity, >= 2M triangles), generated and refined real meshes, each
# ordering, every baseline. JSON and logs go to $OUT.
# Usage:
#   bash perf_tests/device/assembly.sh [tests|bench|all]   (default all)
# Environment: KK_ALGORITHM (spk-assemble --kk-algorithm, default kk-memory), REPEAT (default 20), WARMUP (default 3), CASE_TIMEOUT (seconds per case, default
# 600), CASES (override the list below, one "CASE|ELEMENTS|ORDERINGS|METHODS" per line; $data
# stands for the carried data folder; e.g. CASES="$(cat perf_tests/device/assembly_acceptance.txt)").
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/device-out}
mkdir -p "$out"
run="bash $root/perf_tests/device/run.sh"
$run bench --help >/dev/null 2>&1  # unpacks the carried binaries and data once
bin=/tmp/spk-device/bin
data=/tmp/spk-device/data
export SPK_DATA_DIR=$data OMP_NUM_THREADS=${OMP_NUM_THREADS:-8} OMP_PROC_BIND=false
export SPK_COMMIT=$(cat "$root/.carry/commit" 2>/dev/null || echo unknown)
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
done
steps=${1:-all}
rc=0
all_orderings=natural,random,rcm,morton,spectral
# Kokkos Kernels 3.4's SpGEMM (KK_MEMORY; KK and KK_DENSE too) hit an illegal address on the
# refined real meshes and on cube:60 (H100), so those cases leave it out; where it runs, its
# products disagree with spk's and the host's (reported as MISMATCH, exit 3).
no_kk=spk,coo-sort,thrust-sort,host-sort
default_cases="plate:1000|p1-triangle-laplacian|$all_orderings|all
cube:60|p1-tet-laplacian,p1-tet-elasticity|$all_orderings|$no_kk
mesh:$data/meshes/hand.mesh:2|p1-tet-laplacian,p1-tet-elasticity|natural,random,rcm|$no_kk
mesh:$data/meshes/armadillo.obj:3|p1-triangle-laplacian|natural,random,rcm|$no_kk
plate:400|p2-triangle-elasticity|natural,rcm|all
cube:24|p2-tet-elasticity|natural,rcm|all"
cases=${CASES:-$default_cases}
cases=${cases//\$data/$data}

if [ "$steps" = tests ] || [ "$steps" = all ]; then
  for t in assembly assembly_reference generate_mesh reorder; do
    echo "== spk_test_$t"
    "$bin/unit_tests/spk_test_$t" > "$out/test-$t.log" 2>&1
    r=$?
    tail -n 3 "$out/test-$t.log"
    [ $r -ne 0 ] && { echo "FAILED: spk_test_$t (exit $r)"; rc=1; }
  done
fi
if [ "$steps" = bench ] || [ "$steps" = all ]; then
  while IFS='|' read -r c elements orderings methods; do
    [ -n "$c" ] || continue
    tag=$(echo "$c" | sed -e 's#.*/##' -e 's/[^A-Za-z0-9._-]/_/g')
    [ -n "${CASES:-}" ] && tag=$tag-$(echo "$orderings" | tr , _)  # a case may have several lines
    echo "== assembly $tag ($elements; $orderings)"
    timeout "${CASE_TIMEOUT:-600}" "$bin/perf_tests/spk-assemble" "$c" --element "$elements" \
      --ordering "$orderings" --method "${methods:-all}" --kk-algorithm "${KK_ALGORITHM:-kk-memory}" --warmup "${WARMUP:-3}" --repeat "${REPEAT:-20}" \
      --json "$out/assembly-$tag.json" > "$out/assembly-$tag.log" 2> "$out/assembly-$tag.err"
    r=$?
    grep -E "MISMATCH|error" "$out/assembly-$tag.err" | head -5
    [ $r -ne 0 ] && { echo "FAILED: $tag (exit $r)"; rc=1; }
    grep -E "spk-full|spk-numeric|coo-sort|thrust-sort|kk-spgemm |host-sort" "$out/assembly-$tag.log" |
      awk '{printf "  %-8s %-22s %-18s %10s ms  x%s\n", $2, $3, $4, $8, $9}'
  done <<< "$cases"
fi
exit $rc
