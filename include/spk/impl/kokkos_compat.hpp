// spk/impl/kokkos_compat.hpp: everything in spk that depends on the Kokkos version.
//
// spk compiles against Kokkos 3.4 and Kokkos 4.x. Code elsewhere uses only APIs common to both;
// the few names that differ are given one spelling here.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <type_traits>

#ifndef KOKKOS_VERSION
#error "spk: Kokkos does not define KOKKOS_VERSION (spk needs Kokkos 3.4 or newer)"
#endif
#if KOKKOS_VERSION < 30400
#error "spk: Kokkos 3.4 or newer is required"
#endif

namespace spk {
namespace impl {

/// The host mirror type of a view (`HostMirror` in Kokkos 3.x and 4.x, `host_mirror_type` later).
#if KOKKOS_VERSION >= 40700
template <class View>
using host_mirror_t = typename View::host_mirror_type;
#else
template <class View>
using host_mirror_t = typename View::HostMirror;
#endif

/// Set bits of x (Kokkos::popcount exists only from Kokkos 4.1 on).
KOKKOS_INLINE_FUNCTION int popcount32(std::uint32_t x) {
  x = x - ((x >> 1) & 0x55555555u);
  x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
  x = (x + (x >> 4)) & 0x0f0f0f0fu;
  return int((x * 0x01010101u) >> 24);
}

/// Memory space of anything a Kokkos::View accepts as its device argument.
template <class Device>
using memory_space_t = typename Kokkos::View<int*, Device>::memory_space;

/// Execution space of anything a Kokkos::View accepts as its device argument.
template <class Device>
using execution_space_t = typename Kokkos::View<int*, Device>::execution_space;

/// Kokkos::Device<exec, mem> made from anything a Kokkos::View accepts as its device argument.
template <class Device>
using device_t = Kokkos::Device<execution_space_t<Device>, memory_space_t<Device>>;

/// Square root on host and device (Kokkos::Experimental::sqrt before Kokkos 3.7).
template <class T>
KOKKOS_INLINE_FUNCTION T sqrt(T x) {
#if KOKKOS_VERSION >= 30700
  return Kokkos::sqrt(x);
#else
  return Kokkos::Experimental::sqrt(x);
#endif
}

/// True when ExecSpace runs on a GPU (launch parameters differ from CPU backends).
template <class ExecSpace>
constexpr bool is_gpu_space() {
#if defined(KOKKOS_ENABLE_CUDA)
  if (std::is_same<ExecSpace, Kokkos::Cuda>::value) return true;
#endif
#if defined(KOKKOS_ENABLE_HIP)
  if (std::is_same<ExecSpace, Kokkos::Experimental::HIP>::value) return true;
#endif
  return false;
}

/// Kokkos::atomic_fetch_add for integers. Kokkos 3.4's CUDA backend has no native atomic for
/// `long` (std::int64_t): it falls back to a compare-and-swap loop, which collapses under
/// contention (an H100 took 1 s, instead of well under 1 ms, to count 300k HiSparse nodes into
/// a few counters). On the device, 8-byte integers therefore go through unsigned long long
/// (native in shared and global memory; two's complement gives the same bits for any value).
template <class T>
KOKKOS_INLINE_FUNCTION T atomic_fetch_add_int(T* p, T v) {
  static_assert(std::is_integral<T>::value, "spk::impl::atomic_fetch_add_int: integers only");
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  if constexpr (sizeof(T) == sizeof(unsigned long long))
    return T(Kokkos::atomic_fetch_add(reinterpret_cast<unsigned long long*>(p),
                                      static_cast<unsigned long long>(v)));
  else
    return Kokkos::atomic_fetch_add(p, v);
#else
  return Kokkos::atomic_fetch_add(p, v);
#endif
}

/// Kokkos::atomic_add for integers (see atomic_fetch_add_int).
template <class T>
KOKKOS_INLINE_FUNCTION void atomic_add_int(T* p, T v) {
  (void)atomic_fetch_add_int(p, v);
}

/// The device of host-side copies.
using HostDevice = Kokkos::Device<Kokkos::DefaultHostExecutionSpace, Kokkos::HostSpace>;

}  // namespace impl
}  // namespace spk
