#!/usr/bin/env bash
# Runs ON THE GPU MACHINE, after pack.sh: Nsight Compute on one Kokkos kernel of spk-bench,
# chosen by its functor's name (every Kokkos kernel is called cuda_parallel_launch_local_memory,
# so the demangled name is filtered). Prints the details page (speed of light, launch,
# occupancy, warp states) and the SASS instructions with the most stall samples, with the
# report in $OUT.
# Usage:
#   bash perf_tests/device/ncu_kernel.sh FUNCTOR_REGEX SKIP TAG -- SPK_BENCH_ARGS...
# NCU_BIN names another carried binary (e.g. perf_tests/spk-assemble) to profile instead.
# e.g. ncu_kernel.sh FeatureTeamKernel 2 bcsstk38 -- --matrix '${SPK_DATA_DIR}/matrices/bcsstk38.mtx' --format auto
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/device-out}
mkdir -p "$out"
bash "$root/perf_tests/device/run.sh" bench --help >/dev/null 2>&1  # unpacks once
regex=$1 skip=$2 tag=$3
shift 4
export SPK_DATA_DIR=/tmp/spk-device/data
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
done
ncu=$(ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
[ -n "$ncu" ] || ncu=$(command -v ncu)
args=()
for a in "$@"; do args+=("$(eval echo "$a")"); done
"$ncu" --clock-control none --kernel-name-base demangled -k "regex:$regex" \
  --launch-skip "$skip" --launch-count 1 --import-source no \
  --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
  --section SchedulerStats --section SourceCounters --section MemoryWorkloadAnalysis \
  -f -o "$out/ncu-$tag" "/tmp/spk-device/bin/${NCU_BIN:-perf_tests/spk-bench}" "${args[@]}" \
  > "$out/ncu-$tag.log" 2>&1
echo "ncu exit $?"
"$ncu" --import "$out/ncu-$tag.ncu-rep" --page details > "$out/ncu-$tag-details.txt" 2>&1
grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Compute \(SM\) Thr|Memory Thr|DRAM Thr|Grid Size|Block Size|Shared Memory Config|Dynamic Shared|Warp Cycles Per Issued|Issued Warp|No Eligible|Stall" \
  "$out/ncu-$tag-details.txt" | head -40
"$ncu" --import "$out/ncu-$tag.ncu-rep" --page source --print-source sass --csv \
  > "$out/ncu-$tag-sass.csv" 2>&1
python3 - "$out/ncu-$tag-sass.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
hdr = next((i for i, r in enumerate(rows) if any("Source" == c.strip() for c in r)), None)
if hdr is None:
    print("no source table:", rows[:3]); sys.exit(0)
h = rows[hdr]
src = h.index("Source")
stall = next((i for i, c in enumerate(h) if c.startswith("Warp Stall Sampling (All")), None)
if stall is None:
    print("columns:", h); sys.exit(0)
body = [r for r in rows[hdr + 1:] if len(r) > stall]
def num(x):
    try: return float(x.replace(",", ""))
    except ValueError: return 0.0
total = sum(num(r[stall]) for r in body)
print("stall samples:", total, "instructions:", len(body))
order = sorted(range(len(body)), key=lambda i: -num(body[i][stall]))[:30]
for i in sorted(order):
    print("%5d %6.1f%%  %s" % (i, 100 * num(body[i][stall]) / max(total, 1), body[i][src][:90]))
PY
