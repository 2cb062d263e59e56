#!/usr/bin/env bash
# Runs ON THE GPU MACHINE (issue 9, spk::Matrix and automatic format selection), after pack.sh:
# the CUDA tests of the operator interface and the selection, then spk-bench --format all (every
# spk format and schedule, format "auto", cuSPARSE and Kokkos Kernels) on the GPU suite: the
# large generated matrices (perf_tests/device/suite.txt) and every shared real matrix, in two
# JSON files; then spk-tune --formats on two large matrices (the trial over every candidate and
# the tuning file). Logs and JSON go to $OUT.
# Usage:
#   bash perf_tests/device/select.sh [tests|profile|large|small|tune|all]   (default all)
# Environment: REPEAT (default 30), WARMUP (default 5), ROUNDS (spk-bench --rounds, default 5:
# each configuration timed in 5 blocks spread over the matrix's timing), LARGE_TIMEOUT /
# SMALL_TIMEOUT (seconds, default 420 / 240).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/device-out}
mkdir -p "$out"
run="bash $root/perf_tests/device/run.sh"
$run bench --help >/dev/null 2>&1  # unpacks the carried binaries and data once
bin=/tmp/spk-device/bin
export SPK_DATA_DIR=/tmp/spk-device/data OMP_NUM_THREADS=${OMP_NUM_THREADS:-8} OMP_PROC_BIND=false
export SPK_COMMIT=$(cat "$root/.carry/commit" 2>/dev/null || echo unknown)
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
done
steps=${1:-all}
if [ "$steps" = profile ] || [ "$steps" = all ]; then
  # where the time of select_format goes: every kernel, copy and host gap by label
  echo "== kernel timer: spk-bench --format auto"
  g++ -O2 -shared -fPIC -o /tmp/spk-device/libkt.so "$root/perf_tests/tools/kernel_timer.cpp" -ldl &&
    for c in "$SPK_DATA_DIR/matrices/bcsstk13.mtx" poisson3d27:110; do
      tag=$(basename "$c" | tr ':' '_')
      KOKKOS_PROFILE_LIBRARY=/tmp/spk-device/libkt.so SPK_KTIMER_OUT=$out/kt-$tag.txt \
        timeout 120 "$bin/perf_tests/spk-bench" --matrix "$c" --format auto --repeat 5 \
        > "$out/kt-$tag.log" 2>&1 || true
      grep -E "features|spk::select" "$out/kt-$tag.txt" | head -12
    done
fi
rc=0
bench_args="--format all --scalar double --repeat ${REPEAT:-30} --warmup ${WARMUP:-5} --rounds ${ROUNDS:-5}"
if [ "$steps" = tests ] || [ "$steps" = all ]; then
  for t in matrix select_format; do
    [ -x "$bin/unit_tests/spk_test_$t" ] || { echo "== spk_test_$t: not carried, skipped"; continue; }
    echo "== spk_test_$t"
    "$bin/unit_tests/spk_test_$t" > "$out/test-$t.log" 2>&1
    r=$?
    tail -n 3 "$out/test-$t.log"
    [ $r -ne 0 ] && { echo "FAILED: spk_test_$t (exit $r)"; rc=1; }
  done
fi
if [ "$steps" = large ] || [ "$steps" = all ]; then
  echo "== suite, large generated matrices"
  SUITE_SMALL=0 SUITE_TAG=select-large timeout "${LARGE_TIMEOUT:-420}" $run suite $bench_args \
    > /dev/null 2> "$out/select-large.err"
  r=$?
  [ $r -ne 0 ] && { echo "FAILED: large suite (exit $r)"; rc=1; }
  grep "^auto " "$out/select-large.log"
fi
if [ "$steps" = small ] || [ "$steps" = all ]; then
  echo "== suite, shared real matrices"
  SUITE_FILE=perf_tests/device/suite_shared_only.txt SUITE_TAG=select-small timeout "${SMALL_TIMEOUT:-240}" \
    $run suite $bench_args > /dev/null 2> "$out/select-small.err"
  r=$?
  [ $r -ne 0 ] && { echo "FAILED: small suite (exit $r)"; rc=1; }
  grep "^auto " "$out/select-small.log" | grep features | head -60
fi
if [ "$steps" = tune ] || [ "$steps" = all ]; then
  echo "== spk-tune --formats"
  SPK_TUNING_FILE=$out/spk-tuning.json timeout 120 "$bin/perf_tests/spk-tune" --formats \
    --gen poisson3d27:110 --gen rmat:21 --matrix "$SPK_DATA_DIR/matrices/bcsstk38.mtx*64" \
    --json "$out/tune-formats.json" > "$out/tune-formats.log" 2>&1
  r=$?
  [ $r -ne 0 ] && { echo "FAILED: spk-tune --formats (exit $r)"; rc=1; }
  grep -E "feature choice|^[a-z].*nnz" "$out/tune-formats.log"
fi
exit $rc
