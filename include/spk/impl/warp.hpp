// spk/impl/warp.hpp: warp-level primitives (lane index, shuffles, wide read-only and streaming
// loads) for kernels whose vectors are hardware warps, stream_load for data a kernel reads
// once, and prefetch_l2 for data a thread reads later.
//
// A kernel launched with TeamPolicy(league, team_size, Warp<exec>::size) runs, on CUDA, each
// vector as one warp (Kokkos maps vector lanes to threadIdx.x), so code outside a
// ThreadVectorRange runs on all lanes at once and may exchange values with these shuffles. On
// the CPU backends a "warp" is one lane, the shuffles return their argument and the loads are
// plain loads, so the same kernel is correct (and tested) everywhere.
#pragma once

#include <Kokkos_Complex.hpp>
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstring>
#if defined(__CUDACC__)
#include <cooperative_groups.h>
#endif

#include <spk/impl/kokkos_compat.hpp>

/// `#pragma unroll` in device code (nvcc's device pass), nothing elsewhere: loops over register
/// arrays that must be unrolled for their indices to be compile-time constants.
#if defined(__CUDA_ARCH__)
#define SPK_DEVICE_UNROLL _Pragma("unroll")
#else
#define SPK_DEVICE_UNROLL
#endif

namespace spk {
namespace impl {

/// Lanes of a warp and their exchange operations on execution space ExecSpace (generic: 1).
template <class ExecSpace>
struct Warp {
  static constexpr int size = 1;
  KOKKOS_INLINE_FUNCTION static int lane() { return 0; }
  /// Orders the warp's shared-memory writes before its later reads (__syncwarp).
  KOKKOS_INLINE_FUNCTION static void sync() {}
  /// The value of lane (lane - delta); a lane below delta gets its own value.
  template <class T>
  KOKKOS_INLINE_FUNCTION static T shfl_up(const T& v, int) {
    return v;
  }
  /// The value of lane `src` (every lane gets it).
  template <class T>
  KOKKOS_INLINE_FUNCTION static T shfl(const T& v, int) {
    return v;
  }
  /// The highest lane whose `pred` is true (every lane gets it), -1 when none is.
  KOKKOS_INLINE_FUNCTION static int last_true(bool pred) { return pred ? 0 : -1; }
  /// The value of lane (lane ^ mask).
  template <class T>
  KOKKOS_INLINE_FUNCTION static T shfl_xor(const T& v, int) {
    return v;
  }
  /// The value of lane (lane + delta); a lane beyond the last gets its own value.
  template <class T>
  KOKKOS_INLINE_FUNCTION static T shfl_down(const T& v, int) {
    return v;
  }
  /// Bit l set when lane l's `pred` is true (every lane gets it).
  KOKKOS_INLINE_FUNCTION static unsigned ballot(bool pred) { return pred ? 1u : 0u; }
  /// out[j] = p[j], j < K; p must be aligned as Warp<Kokkos::Cuda>::load requires.
  template <int K, class T>
  KOKKOS_INLINE_FUNCTION static void load(const T* p, T (&out)[K]) {
    for (int j = 0; j < K; ++j) out[j] = p[j];
  }
  /// As load, for data read once per kernel (see Warp<Kokkos::Cuda>::stream).
  template <int K, class T>
  KOKKOS_INLINE_FUNCTION static void stream(const T* p, T (&out)[K]) {
    load<K>(p, out);
  }
};

/// Asks L2 for the cache line holding *p, without waiting and without a register (on CUDA,
/// prefetch.global.L2; elsewhere nothing): for data a thread reads later, after loads it waits
/// on first.
KOKKOS_INLINE_FUNCTION void prefetch_l2(const void* p) {
#if defined(__CUDA_ARCH__)
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#else
  (void)p;
#endif
}

/// atomic_fetch_add_int(p, 1) for every calling thread (each gets a distinct old value), with
/// the atomics aggregated: on CUDA the threads of a warp that reach the call together with the
/// same p (a queue tail) share one atomic, the group's first adding the group's size and
/// handing out ranks by a shuffle. Kernels that bump a few tails from every thread (a level's
/// queues) so cause a thirty-second of the same-address atomics. Elsewhere a plain atomic.
template <class T>
KOKKOS_INLINE_FUNCTION T aggregated_increment(T* p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700  // labeled_partition: Volta and later
  namespace cg = cooperative_groups;
  const cg::coalesced_group active = cg::coalesced_threads();
  const cg::coalesced_group peers =
      cg::labeled_partition(active, reinterpret_cast<unsigned long long>(p));
  T base = 0;
  if (peers.thread_rank() == 0) base = atomic_fetch_add_int(p, T(peers.size()));
  base = peers.shfl(base, 0);
  return base + T(peers.thread_rank());
#else
  return atomic_fetch_add_int(p, T(1));
#endif
}

/// *p, for data a kernel reads once (a matrix's entries in SpMV): on CUDA through the
/// streaming, evict-first path (ld.global.cs) so that it does not push x out of L1 and L2;
/// elsewhere a plain load. p must be aligned to sizeof(T) when that is 4, 8 or 16.
template <class T>
KOKKOS_INLINE_FUNCTION T stream_load(const T* p) {
#if defined(__CUDA_ARCH__)
  T t;
  if constexpr (sizeof(T) == 4 && alignof(T) >= 4) {
    const unsigned u = __ldcs(reinterpret_cast<const unsigned*>(p));
    memcpy(static_cast<void*>(&t), &u, 4);
  } else if constexpr (sizeof(T) == 8 && alignof(T) >= 8) {
    const unsigned long long u = __ldcs(reinterpret_cast<const unsigned long long*>(p));
    memcpy(static_cast<void*>(&t), &u, 8);
  } else if constexpr (sizeof(T) == 16 && alignof(T) >= 16) {
    const int4 u = __ldcs(reinterpret_cast<const int4*>(p));
    memcpy(static_cast<void*>(&t), &u, 16);
  } else {
    t = *p;
  }
  return t;
#else
  return *p;
#endif
}

#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct Warp<Kokkos::Cuda> {
  static constexpr int size = 32;
  KOKKOS_INLINE_FUNCTION static int lane() {
#if defined(__CUDA_ARCH__)
    return int(threadIdx.x);
#else
    return 0;
#endif
  }

  KOKKOS_INLINE_FUNCTION static void sync() {
#if defined(__CUDA_ARCH__)
    __syncwarp();
#endif
  }

  template <class T>
  KOKKOS_INLINE_FUNCTION static T shfl_up(const T& v, int delta) {
#if defined(__CUDA_ARCH__)
    return __shfl_up_sync(0xffffffffu, v, unsigned(delta));
#else
    (void)delta;
    return v;
#endif
  }
  template <class R>
  KOKKOS_INLINE_FUNCTION static Kokkos::complex<R> shfl_up(const Kokkos::complex<R>& v,
                                                           int delta) {
    return Kokkos::complex<R>(shfl_up(v.real(), delta), shfl_up(v.imag(), delta));
  }

  template <class T>
  KOKKOS_INLINE_FUNCTION static T shfl(const T& v, int src) {
#if defined(__CUDA_ARCH__)
    return __shfl_sync(0xffffffffu, v, src);
#else
    (void)src;
    return v;
#endif
  }
  template <class R>
  KOKKOS_INLINE_FUNCTION static Kokkos::complex<R> shfl(const Kokkos::complex<R>& v, int src) {
    return Kokkos::complex<R>(shfl(v.real(), src), shfl(v.imag(), src));
  }

  KOKKOS_INLINE_FUNCTION static int last_true(bool pred) {
#if defined(__CUDA_ARCH__)
    const unsigned votes = __ballot_sync(0xffffffffu, pred);
    return votes == 0u ? -1 : 31 - __clz(int(votes));
#else
    return pred ? 0 : -1;
#endif
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static T shfl_xor(const T& v, int mask) {
#if defined(__CUDA_ARCH__)
    return __shfl_xor_sync(0xffffffffu, v, mask);
#else
    (void)mask;
    return v;
#endif
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static T shfl_down(const T& v, int delta) {
#if defined(__CUDA_ARCH__)
    return __shfl_down_sync(0xffffffffu, v, unsigned(delta));
#else
    (void)delta;
    return v;
#endif
  }
  KOKKOS_INLINE_FUNCTION static unsigned ballot(bool pred) {
#if defined(__CUDA_ARCH__)
    return __ballot_sync(0xffffffffu, pred);
#else
    return pred ? 1u : 0u;
#endif
  }

  /// K consecutive entries through the read-only (non-coherent) path with the widest loads
  /// that K * sizeof(T) is a multiple of: 16, else 8, else 4 bytes (the caller guarantees that
  /// p is aligned to that width).
  template <int K, class T>
  KOKKOS_INLINE_FUNCTION static void load(const T* p, T (&out)[K]) {
    wide_load<false, K>(p, out);
  }

  /// As load, through the streaming, evict-first path (ld.global.cs): for data a kernel reads
  /// once, a matrix's entries in SpMV, so that they do not push x out of L1 and L2. On an H100
  /// this made compressed COO 12-18% faster on matrices with scattered x (rmat, circuit) and
  /// 10% on the replicated FEM matrix. Balanced COO keeps load: with streaming it was 8-15%
  /// slower on the stencils (docs/PERFORMANCE.md, run 13).
  template <int K, class T>
  KOKKOS_INLINE_FUNCTION static void stream(const T* p, T (&out)[K]) {
    wide_load<true, K>(p, out);
  }

 private:
  template <bool Streaming, class V>
  KOKKOS_INLINE_FUNCTION static V ld(const V* p) {
#if defined(__CUDA_ARCH__)
    if constexpr (Streaming)
      return __ldcs(p);
    else
      return __ldg(p);
#else
    return *p;
#endif
  }

  template <bool Streaming, int K, class T>
  KOKKOS_INLINE_FUNCTION static void wide_load(const T* p, T (&out)[K]) {
#if defined(__CUDA_ARCH__)
    constexpr int bytes = K * int(sizeof(T));
    if constexpr (bytes % 16 == 0) {
      int4 raw[bytes / 16];
      const int4* src = reinterpret_cast<const int4*>(p);
      for (int i = 0; i < bytes / 16; ++i) raw[i] = ld<Streaming>(src + i);
      memcpy(static_cast<void*>(out), raw, bytes);
    } else if constexpr (bytes % 8 == 0) {
      uint2 raw[bytes / 8];
      const uint2* src = reinterpret_cast<const uint2*>(p);
      for (int i = 0; i < bytes / 8; ++i) raw[i] = ld<Streaming>(src + i);
      memcpy(static_cast<void*>(out), raw, bytes);
    } else if constexpr (bytes % 4 == 0) {
      unsigned raw[bytes / 4];
      const unsigned* src = reinterpret_cast<const unsigned*>(p);
      for (int i = 0; i < bytes / 4; ++i) raw[i] = ld<Streaming>(src + i);
      memcpy(static_cast<void*>(out), raw, bytes);
    } else {
      for (int j = 0; j < K; ++j) out[j] = p[j];
    }
#else
    for (int j = 0; j < K; ++j) out[j] = p[j];
#endif
  }
};
#endif

}  // namespace impl
}  // namespace spk
