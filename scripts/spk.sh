#!/usr/bin/env bash
# One entry point for a fresh machine: installs what is missing (scripts/bootstrap-deps.sh),
# configures and builds spk, then runs the requested job.
#
# usage: scripts/spk.sh COMMAND [--config host|cuda] [--arch sm_90|sm_80] [-- ARGS...]
#   bench   build, then run the main job: spk-bench on a built-in generated matrix
#           (3D 27-point Poisson; ARGS replace the default spk-bench arguments)
#   test    build, then run all unit tests through ctest (ARGS go to ctest)
#   build   configure and build only (the cuda configuration compiles without a GPU)
# environment:
#   SPK_BUILD_DIR   build directory (default: build-<config> in the checkout)
#   SPK_DEPS_DIR    dependency cache (default: $HOME/.cache/spk-deps)
#   SPK_JOBS        parallel build jobs (default: nproc)
#   SPK_CMAKE_ARGS  more CMake arguments, e.g. -DSPK_TEST_HOST_BACKENDS=OFF (CUDA tests only)
set -euo pipefail

cmd=${1:-}
[ -n "$cmd" ] || { sed -n '2,14p' "$0"; exit 2; }
shift
config=host
arch=sm_90
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --config) config=$2; shift ;;
    --arch) arch=$2; shift ;;
    --) shift; args=("$@"); break ;;
    *) echo "spk.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
case "$cmd" in bench | test | build) ;; *) echo "spk.sh: unknown command '$cmd'" >&2; exit 2 ;; esac
case "$config" in host | cuda) ;; *) echo "spk.sh: --config must be host or cuda" >&2; exit 2 ;; esac

root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${SPK_JOBS:-$(nproc 2>/dev/null || echo 2)}
prefix=$(bash "$root/scripts/bootstrap-deps.sh" "$config" --arch "$arch" --jobs "$jobs" | tail -n 1)
build=${SPK_BUILD_DIR:-$root/build-$config}

cmake_args=(-DKokkos_ROOT="$prefix" -DCMAKE_BUILD_TYPE=Release -DSPK_ENABLE_TESTS=ON
            -DSPK_ENABLE_PERFTESTS=ON)
command -v ccache >/dev/null 2>&1 && cmake_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
read -r -a extra_args <<<"${SPK_CMAKE_ARGS:-}"
cmake_args+=("${extra_args[@]}")
if [ "$config" = cuda ]; then
  # nvcc_wrapper calls plain nvcc: make sure the CUDA toolkit is on PATH
  if ! command -v nvcc >/dev/null 2>&1; then
    for d in ${CUDA_ROOT:+$CUDA_ROOT/bin} /usr/local/cuda/bin /usr/local/cuda-13.0/bin; do
      [ -x "$d/nvcc" ] && { export PATH=$d:$PATH; break; }
    done
  fi
  command -v nvcc >/dev/null 2>&1 ||
    { echo "spk.sh: the cuda configuration needs the CUDA toolkit (nvcc)" >&2; exit 1; }
  export CUDA_ROOT=${CUDA_ROOT:-$(dirname "$(dirname "$(command -v nvcc)")")}
  # nvcc_wrapper defaults to sm_35, which nvcc 13 rejects
  cmake_args+=(-DCMAKE_CXX_COMPILER="$prefix/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS="-arch=$arch")
fi
echo "[spk.sh] configuring $build ($config)" >&2
mkdir -p "$build"
cmake -S "$root" -B "$build" "${cmake_args[@]}" >"$build/spk-configure.log" 2>&1 ||
  { tail -40 "$build/spk-configure.log" >&2; exit 1; }
echo "[spk.sh] building ($jobs jobs)" >&2
cmake --build "$build" -j "$jobs"

case "$cmd" in
  test)
    export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$jobs} OMP_PROC_BIND=${OMP_PROC_BIND:-false}
    cd "$build" && ctest --output-on-failure "${args[@]}"
    ;;
  bench)
    if [ ${#args[@]} -eq 0 ]; then
      # the main job: a 3D 27-point Poisson matrix, a few million rows on a GPU, smaller on the host
      if [ "$config" = cuda ]; then size=150; else size=60; fi
      args=(--gen "poisson3d27:$size" --format all --repeat 50)
    fi
    export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$jobs} OMP_PROC_BIND=${OMP_PROC_BIND:-false}
    SPK_COMMIT=${SPK_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)} \
      "$build/perf_tests/spk-bench" "${args[@]}"
    ;;
  build) ;;
esac
