// spk/impl/device_info.hpp: what launch rules and tuning files need to know about the device an
// execution space runs on: its name and its number of multiprocessors.
#pragma once

#include <Kokkos_Core.hpp>
#include <atomic>
#include <string>
#include <type_traits>

#include <spk/error.hpp>

namespace spk {
namespace impl {

/// Number of multiprocessors (SMs) of the current CUDA device (asked once per device: launch
/// rules call this on every product); the concurrency of a host space.
template <class ExecSpace>
int multiprocessor_count() {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    static std::atomic<int> known[64] = {};
    int dev = 0, n = 0;
    require(cudaGetDevice(&dev) == cudaSuccess, "spk::multiprocessor_count",
            "the current CUDA device is unavailable");
    if (dev >= 0 && dev < 64 && (n = known[dev].load(std::memory_order_relaxed)) > 0) return n;
    require(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess,
            "spk::multiprocessor_count", "the CUDA device's multiprocessor count is unavailable");
    if (dev >= 0 && dev < 64) known[dev].store(n, std::memory_order_relaxed);
    return n;
  }
#endif
  return ExecSpace().concurrency() > 0 ? int(ExecSpace().concurrency()) : 1;
}

/// Name of the device an execution space runs on: the CUDA device's name (e.g. "NVIDIA H100
/// 80GB HBM3"), or "<space> x<concurrency>" for host spaces (e.g. "OpenMP x8").
template <class ExecSpace>
std::string device_name() {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    int dev = 0;
    cudaDeviceProp prop{};
    require(cudaGetDevice(&dev) == cudaSuccess &&
                cudaGetDeviceProperties(&prop, dev) == cudaSuccess,
            "spk::device_name", "the CUDA device's properties are unavailable");
    return prop.name;
  }
#endif
  return std::string(ExecSpace::name()) + " x" + std::to_string(ExecSpace().concurrency());
}

}  // namespace impl
}  // namespace spk
