#!/usr/bin/env bash
# Runs ON THE GPU MACHINE (HiSparse), after pack.sh: the CUDA tests of HiSparse, SpMV N and T
# of HiSparse against spk CSR, cuSPARSE CSR ALG1/ALG2 and Kokkos Kernels (spk-bench), addition
# against cuSPARSE csrgeam2 (spk-add), and the memory of HiSparse against CSR (spk-bench
# --memory-only), over the large suite (the generated cases of perf_tests/device/suite.txt,
# >= 20M entries each) and every shared real matrix. JSON, logs and the tests' output go to
# $OUT; summarise with
#   python3 perf_tests/summarize.py --hisparse $OUT/hisparse-*.json
# Usage:
#   bash perf_tests/device/hisparse.sh [tests|spmv|add|memory|all]...   (default all)
# Environment (a small subset first, e.g. SUITES=small MATCH=bcsstk REPEAT=10):
#   SUITES     "large small" (default both): large = the cases of $SUITE_FILE (default
#              perf_tests/device/suite.txt), small = every shared matrix in $SPK_DATA_DIR/matrices
#   MATCH      extended regex a case (large: its suite line, small: its file name) must match
#              (default: all)
#   MODES      SpMV modes (default "N T")
#   OPS        spk-add --ops (default NN,TN,NT,TT)
#   SCALAR     float | double (default double)
#   REPEAT     timed runs of spk-bench (default 50) and spk-add (default 20); WARMUP likewise
#              (default 5 / 3)
#   FORMATS    spk-bench --format (default hisparse,csr,cusparse-csr-alg1,cusparse-csr-alg2,
#              kokkoskernels)
#   TESTS      test names without spk_test_ (default "hisparse hisparse_add")
#   CASE_TIMEOUT  seconds a large case may run (default 900); a case past it loses its rows
# Each large case runs in its own process with its own JSON (a case that fails or runs out of
# time loses only its own rows); the small matrices run in one process per step.
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
suites=${SUITES:-large small}
match=${MATCH:-.}
scalar=${SCALAR:-double}
formats=${FORMATS:-hisparse,csr,cusparse-csr-alg1,cusparse-csr-alg2,kokkoskernels}
steps=${*:-all}
rc=0

# the large cases, one per line (comments dropped, ${SPK_DATA_DIR} left for the tools)
large_cases() {
  sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^[[:space:]]*$/d' \
    "$root/${SUITE_FILE:-perf_tests/device/suite.txt}" | grep -E -- "$match" || true
}
small_cases() {
  ls "$SPK_DATA_DIR"/matrices/*.mtx | while read -r f; do
    basename "$f" | grep -qE -- "$match" && echo "$f"
  done
}
# a file-name-safe tag of a case
tag_of() { echo "$1" | sed -e 's#.*/##' -e 's/[^A-Za-z0-9._-]/_/g'; }

# runs TOOL ARGS... with the cases of suite $1 (large: one process per case): JSON and log
# named hisparse-$2-<suite or case>.json/.log
over_suite() {
  local suite=$1 name=$2
  shift 2
  local tool=("$@")
  if [ "$suite" = large ]; then
    while read -r c; do
      [ -n "$c" ] || continue
      local t="hisparse-$name-$(tag_of "$c")"
      echo "== $t"
      timeout "${CASE_TIMEOUT:-900}" "${tool[@]}" "$(case_opt "$c")" "$c" --json "$out/$t.json" \
        > "$out/$t.log" 2>&1 || { echo "FAILED: $t (exit $?)"; rc=1; }
      grep -E "WRONG|error" "$out/$t.log" | head -5
    done < <(large_cases)
  else
    local cases=$out/hisparse-small-cases.txt t="hisparse-$name-small"
    small_cases > "$cases"
    [ -s "$cases" ] || { echo "== $t: no matrix matches '$match'"; return; }
    echo "== $t ($(wc -l < "$cases") matrices)"
    "${tool[@]}" --cases "$cases" --json "$out/$t.json" > "$out/$t.log" 2>&1 ||
      { echo "FAILED: $t"; rc=1; }
    grep -E "WRONG|error" "$out/$t.log" | head -5
  fi
}

# a suite line is a generator spec or FILE.mtx[*K]: the option the tools take it with
case_opt() { case "$1" in *.mtx|*.mtx\**) echo --matrix ;; *) echo --gen ;; esac; }

spk_bench=$bin/perf_tests/spk-bench
spk_add=$bin/perf_tests/spk-add

for step in $steps; do
  if [ "$step" = tests ] || [ "$step" = all ]; then
    for t in ${TESTS:-hisparse hisparse_add}; do
      exe=$bin/unit_tests/spk_test_$t
      if [ ! -x "$exe" ]; then
        echo "MISSING: spk_test_$t (not among the carried binaries)"
        rc=1
        continue
      fi
      echo "== spk_test_$t"
      "$exe" > "$out/hisparse-test-$t.log" 2>&1 || { echo "FAILED: spk_test_$t"; rc=1; }
      tail -n 3 "$out/hisparse-test-$t.log"
    done
  fi
  if [ "$step" = spmv ] || [ "$step" = all ]; then
    for m in ${MODES:-N T}; do
      for s in $suites; do
        over_suite "$s" "spmv-$m" "$spk_bench" --format "$formats" --scalar "$scalar" --mode "$m" \
          --warmup "${WARMUP:-5}" --repeat "${REPEAT:-50}"
      done
    done
  fi
  if [ "$step" = add ] || [ "$step" = all ]; then
    for s in $suites; do
      over_suite "$s" add "$spk_add" --scalar "$scalar" --ops "${OPS:-NN,TN,NT,TT}" \
        --warmup "${WARMUP:-3}" --repeat "${REPEAT:-20}"
    done
  fi
  if [ "$step" = memory ] || [ "$step" = all ]; then
    # on the host (no timing): HiSparse's pool against the CSR arrays
    for s in $suites; do
      over_suite "$s" memory "$spk_bench" --memory-only --format hisparse --scalar "$scalar"
    done
  fi
done
echo "hisparse.sh: exit $rc"
exit $rc
