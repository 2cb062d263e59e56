#!/usr/bin/env bash
# Runs ON THE GPU MACHINE from the repository root, with .carry/ made by pack.sh:
#   bash perf_tests/device/run.sh tests            CUDA unit tests (all backends in the binaries)
#   bash perf_tests/device/run.sh bench ARGS...    spk-bench with ARGS
#   bash perf_tests/device/run.sh suite [ARGS]     the GPU suite (perf_tests/device/suite.txt, or
#                                                  $SUITE_FILE; the shared matrices appended
#                                                  unless SUITE_SMALL=0)
# Logs and JSON go to $OUT (or ./device-out when OUT is unset).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/device-out}
mkdir -p "$out"
work=/tmp/spk-device
if [ ! -d "$work/bin" ]; then
  mkdir -p "$work/bin" "$work/data"
  xz -dc "$root/.carry/spk-cuda-bin.tar.xz" | tar xf - -C "$work/bin"
  xz -dc "$root/.carry/matrices.tar.xz" | tar xf - -C "$work/data"
fi
export SPK_DATA_DIR=$work/data SPK_COMMIT=$(cat "$root/.carry/commit" 2>/dev/null || echo unknown)
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
done
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8} OMP_PROC_BIND=false
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv | tee "$out/gpu.txt"
cmd=${1:-tests}
shift || true
case "$cmd" in
  tests)
    rc=0
    for t in "$work"/bin/unit_tests/spk_test_*; do
      name=$(basename "$t")
      echo "== $name"
      "$t" 2>&1 | tee "$out/$name.log" | tail -n 4
      r=${PIPESTATUS[0]}
      [ "$r" -ne 0 ] && { echo "FAILED: $name (exit $r)"; rc=1; }
    done
    echo "unit tests: exit $rc"
    exit $rc
    ;;
  bench)
    "$work/bin/perf_tests/spk-bench" "$@"
    ;;
  suite)
    # generated suite + every shared real matrix; ARGS go to spk-bench (e.g. --mode T)
    tag=${SUITE_TAG:-suite}
    cases=$work/cases.txt
    cp "$root/${SUITE_FILE:-perf_tests/device/suite.txt}" "$cases"
    [ "${SUITE_SMALL:-1}" = 0 ] || ls "$SPK_DATA_DIR"/matrices/*.mtx >> "$cases"
    "$work/bin/perf_tests/spk-bench" --cases "$cases" --json "$out/$tag.json" "$@" 2>&1 |
      tee "$out/$tag.log"
    ;;
  *) echo "run.sh: unknown command '$cmd'" >&2; exit 2 ;;
esac
