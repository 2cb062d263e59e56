#!/usr/bin/env bash
# Runs HERE (no GPU needed): builds the cuda configuration and packs what the GPU machine needs
# into .carry/ (ignored by git, named in the device tool's `carry`): the test and benchmark
# binaries, and the shared matrices (the ../shared beside the checkout does not travel).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
bash scripts/spk.sh build --config cuda
mkdir -p .carry
build=${SPK_BUILD_DIR:-build-cuda}
files=$(cd "$build" && ls unit_tests/spk_test_* perf_tests/spk-bench perf_tests/spk-gen \
  perf_tests/spk-tune perf_tests/spk-add perf_tests/spk-assemble perf_tests/spk-cusparse-compound-check 2>/dev/null)
(cd "$build" && tar cf - $files CTestTestfile.cmake unit_tests/CTestTestfile.cmake) |
  xz -T2 -6 > .carry/spk-cuda-bin.tar.xz
data=${SPK_DATA_DIR:-$root/../shared/data}
# the shared matrices and meshes (the compound benchmarks build matrices from the meshes)
if [ ! -f .carry/matrices.tar.xz ] || [ "$data/matrices/MANIFEST.tsv" -nt .carry/matrices.tar.xz ] ||
   ! xz -dc .carry/matrices.tar.xz | tar tf - | grep -q '^meshes/'; then
  tar cf - -C "$data" matrices meshes | xz -T2 -6 > .carry/matrices.tar.xz
fi
git rev-parse --short HEAD > .carry/commit
ls -la .carry
