#!/usr/bin/env bash
# Installs what spk needs on a fresh Debian 12 machine and builds Kokkos + Kokkos Kernels 3.4.01
# from Debian's `trilinos` source package with spk's patches (cmake/patches/), into a cache
# directory outside the clone keyed by version and patch hash. Re-running it when everything is
# present takes seconds. Prints the install prefix on the last line of stdout.
#
# usage: scripts/bootstrap-deps.sh [host|cuda] [--arch sm_90|sm_80] [--jobs N]
#   host : Kokkos OpenMP + Serial
#   cuda : Kokkos CUDA (sm_90 by default, sm_80 selectable) + OpenMP + Serial
# environment:
#   SPK_DEPS_DIR   cache root (default: $HOME/.cache/spk-deps)
#   SPK_NO_APT=1   never call apt-get (fail if something is missing)
set -euo pipefail

config=host
arch=sm_90
jobs=$(nproc 2>/dev/null || echo 2)
while [ $# -gt 0 ]; do
  case "$1" in
    host | cuda) config=$1 ;;
    --arch) arch=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "bootstrap-deps: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
case "$arch" in
  sm_90) kokkos_arch=HOPPER90 ;;
  sm_80) kokkos_arch=AMPERE80 ;;
  *) echo "bootstrap-deps: --arch must be sm_90 or sm_80, got '$arch'" >&2; exit 2 ;;
esac

here=$(cd "$(dirname "$0")/.." && pwd)
deps=${SPK_DEPS_DIR:-$HOME/.cache/spk-deps}
kokkos_version=3.4.01
trilinos_version=13.2.0
patch_hash=$(cat "$here"/cmake/patches/*.patch "$0" | sha256sum | cut -c1-12)
tag=kokkos-$kokkos_version-$patch_hash
if [ "$config" = cuda ]; then tag=$tag-cuda-$arch; else tag=$tag-host; fi
prefix=$deps/install/$tag
log() { echo "[bootstrap-deps] $*" >&2; }

# --- Debian packages --------------------------------------------------------------------------
need_pkgs=()
for p in g++ cmake make doctest-dev ccache dpkg-dev patch xz-utils; do
  dpkg -s "$p" >/dev/null 2>&1 || need_pkgs+=("$p")
done
if [ ${#need_pkgs[@]} -gt 0 ]; then
  [ "${SPK_NO_APT:-0}" = 1 ] && { log "missing Debian packages: ${need_pkgs[*]}"; exit 1; }
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  log "installing ${need_pkgs[*]}"
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need_pkgs[@]}" >&2
fi
if [ "$config" = cuda ] && ! command -v nvcc >/dev/null 2>&1; then
  for d in /usr/local/cuda/bin /usr/local/cuda-13.0/bin; do [ -x "$d/nvcc" ] && export PATH=$d:$PATH; done
  command -v nvcc >/dev/null 2>&1 || { log "cuda configuration needs nvcc on PATH"; exit 1; }
fi

if [ -f "$prefix/.spk-complete" ]; then
  log "up to date: $prefix"
  echo "$prefix"
  exit 0
fi

# --- source: Debian's trilinos source package --------------------------------------------------
src_root=$deps/src
orig=$src_root/trilinos_$trilinos_version.orig.tar.gz
mkdir -p "$src_root"
if [ ! -f "$orig" ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  if ! grep -rqs "^Types:.*deb-src" /etc/apt/sources.list.d/ &&
     ! grep -qs "^deb-src .* bookworm " /etc/apt/sources.list; then
    log "adding a deb-src line for bookworm main"
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
      $sudo tee /etc/apt/sources.list.d/spk-deb-src.sources >/dev/null
    $sudo apt-get update -qq >&2
  fi
  log "downloading Debian source package trilinos $trilinos_version"
  (cd "$src_root" && apt-get source --download-only "trilinos=$trilinos_version-4" >&2 ||
     apt-get source --download-only trilinos >&2)
  [ -f "$orig" ] || { log "trilinos_$trilinos_version.orig.tar.gz not found after apt-get source"; exit 1; }
fi
srcdir=$src_root/kokkos-$kokkos_version-$patch_hash
if [ ! -f "$srcdir/.spk-patched" ]; then
  log "extracting packages/kokkos and packages/kokkos-kernels"
  rm -rf "$srcdir" && mkdir -p "$srcdir"
  tar xzf "$orig" -C "$srcdir" --strip-components=2 \
    --wildcards '*/packages/kokkos/*' '*/packages/kokkos-kernels/*'
  for p in "$here"/cmake/patches/kokkos-*.patch; do
    log "applying $(basename "$p")"
    patch -d "$srcdir/kokkos" -p1 --quiet < "$p"
  done
  touch "$srcdir/.spk-patched"
fi

# --- build ------------------------------------------------------------------------------------
build=$deps/build/$tag
rm -rf "$build" "$prefix"
mkdir -p "$build"
common=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_CXX_STANDARD=17
        -DCMAKE_POSITION_INDEPENDENT_CODE=ON)
command -v ccache >/dev/null 2>&1 && common+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
kokkos_opts=(-DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_TESTS=OFF
             -DKokkos_ENABLE_EXAMPLES=OFF -DKokkos_CXX_STANDARD=17)
if [ "$config" = cuda ]; then
  kokkos_opts+=(-DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON -DKokkos_ARCH_$kokkos_arch=ON
                -DCMAKE_CXX_COMPILER="$srcdir/kokkos/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS="-arch=$arch")
fi
log "configuring Kokkos $kokkos_version ($config)"
cmake -S "$srcdir/kokkos" -B "$build/kokkos" "${common[@]}" "${kokkos_opts[@]}" >"$build/kokkos.log" 2>&1 ||
  { tail -40 "$build/kokkos.log" >&2; exit 1; }
log "building Kokkos ($jobs jobs)"
cmake --build "$build/kokkos" -j "$jobs" >>"$build/kokkos.log" 2>&1 &&
  cmake --install "$build/kokkos" >>"$build/kokkos.log" 2>&1 ||
  { tail -40 "$build/kokkos.log" >&2; exit 1; }

kk_opts=(-DKokkos_ROOT="$prefix" -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF
         -DKokkosKernels_ADD_DEFAULT_ETI=OFF -DKokkosKernels_ENABLE_TPL_BLAS=OFF
         -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF -DKokkosKernels_ENABLE_TPL_CUBLAS=OFF)
for i in INST_DOUBLE INST_FLOAT INST_COMPLEX_DOUBLE INST_COMPLEX_FLOAT INST_OFFSET_INT INST_OFFSET_SIZE_T \
         INST_ORDINAL_INT INST_ORDINAL_INT64_T INST_LAYOUTLEFT INST_LAYOUTRIGHT; do
  kk_opts+=(-DKokkosKernels_$i=OFF)
done
[ "$config" = cuda ] && kk_opts+=(-DCMAKE_CXX_COMPILER="$prefix/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS="-arch=$arch")
log "configuring Kokkos Kernels $kokkos_version ($config, ETI off)"
cmake -S "$srcdir/kokkos-kernels" -B "$build/kokkos-kernels" "${common[@]}" "${kk_opts[@]}" \
  >"$build/kokkos-kernels.log" 2>&1 || { tail -40 "$build/kokkos-kernels.log" >&2; exit 1; }
log "building Kokkos Kernels"
cmake --build "$build/kokkos-kernels" -j "$jobs" >>"$build/kokkos-kernels.log" 2>&1 &&
  cmake --install "$build/kokkos-kernels" >>"$build/kokkos-kernels.log" 2>&1 ||
  { tail -40 "$build/kokkos-kernels.log" >&2; exit 1; }

rm -rf "$build"
touch "$prefix/.spk-complete"
log "installed: $prefix"
echo "$prefix"
