// spk/impl/radix_sort.hpp: the stable LSD radix sort behind every ordering step of spk (COO ->
// CSR, transpose, sort_rows, duplicate detection in validate, R-MAT edge keys).
//
// Each pass costs O(n) whatever the distribution of the keys (one very long row costs the same as
// many short ones) and moves equal digits in input order, so results never depend on the
// backend, the thread count or the launch parameters. Runs on any execution space (Serial,
// OpenMP, Cuda, ...): the host only launches kernels.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <spk/error.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <type_traits>
#include <utility>

namespace spk {
namespace impl {

/// Range policy with 64-bit indices (entry counts may exceed 2^31).
template <class ExecSpace>
using Range64 = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;

/// Launch parameters of the stable radix sort (they change the speed, never the result).
struct RadixSortParams {
  /// Keys each thread counts and scatters in order (this keeps the sort stable); 0 picks the
  /// default of the execution space (see default_radix_chunk).
  std::int64_t chunk = 0;
  /// Key bits per pass, in [1, 16]; each pass keeps 2^digit_bits counters per chunk.
  int digit_bits = 8;
};

/// Default chunk of the radix sort for n keys: short chunks on GPUs (one thread each, so many
/// threads), on host spaces about 8 chunks per thread but at least 1024 keys (few counters).
template <class ExecSpace>
std::int64_t default_radix_chunk(std::int64_t n) {
  if (is_gpu_space<ExecSpace>()) return 256;
  const std::int64_t parts = 8 * std::max<std::int64_t>(1, ExecSpace().concurrency());
  return std::max<std::int64_t>(1024, (n + parts - 1) / parts);
}

/// Number of bits needed to write x (0 for x == 0): the key_bits of keys in [0, x].
inline int bit_width(std::uint64_t x) {
  int bits = 0;
  for (; x != 0; x >>= 1) ++bits;
  return bits;
}

/// The payload of a keys-only sort: no storage, moving it does nothing.
struct NoPayload {};

/// A new, uninitialised payload buffer of n elements of the same type as `like`.
template <class PayloadView>
PayloadView radix_payload_buffer(const PayloadView& /*like*/, std::size_t n) {
  return PayloadView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::radix::payload"), n);
}
inline NoPayload radix_payload_buffer(const NoPayload&, std::size_t) { return {}; }

/// out(to) = in(from) for a payload view; nothing for NoPayload.
template <class PayloadView>
KOKKOS_INLINE_FUNCTION void radix_move_payload(const PayloadView& in, const PayloadView& out,
                                               std::int64_t from, std::int64_t to) {
  out(to) = in(from);
}
KOKKOS_INLINE_FUNCTION void radix_move_payload(const NoPayload&, const NoPayload&, std::int64_t,
                                               std::int64_t) {}

/// One pass of the LSD radix sort: stably moves (keys_in, payload_in) to (keys_out, payload_out)
/// by the digit (key >> shift) & (2^bits - 1). Each chunk of `chunk` consecutive keys is handled
/// by one thread in order; the counters (2^bits * ceil(n / chunk) of them), laid out digit-major,
/// give every (digit, chunk) pair its slot range after an exclusive scan, which keeps equal
/// digits in input order. Three launches, O(n + 2^bits * n / chunk) work.
template <class ExecSpace, class KeyView, class PayloadView, class CountView>
void radix_pass(const KeyView& keys_in, const PayloadView& payload_in, const KeyView& keys_out,
                const PayloadView& payload_out, const CountView& counts, int shift, int bits,
                std::int64_t chunk) {
  using key_type = typename KeyView::non_const_value_type;
  using ukey = std::make_unsigned_t<key_type>;
  const std::int64_t n = std::int64_t(keys_in.extent(0));
  const std::int64_t nchunks = (n + chunk - 1) / chunk;
  const std::int64_t ndigits = std::int64_t(1) << bits;
  const ukey mask = ukey(ndigits - 1);
  Kokkos::parallel_for(
      "spk::radix_count", Range64<ExecSpace>(0, nchunks), KOKKOS_LAMBDA(const std::int64_t c) {
        for (std::int64_t d = 0; d < ndigits; ++d) counts(d * nchunks + c) = 0;
        const std::int64_t end = (c + 1) * chunk < n ? (c + 1) * chunk : n;
        for (std::int64_t i = c * chunk; i < end; ++i) {
          const std::int64_t d = std::int64_t((ukey(keys_in(i)) >> shift) & mask);
          counts(d * nchunks + c) += 1;
        }
      });
  Kokkos::parallel_scan(
      "spk::radix_offsets", Range64<ExecSpace>(0, ndigits * nchunks),
      KOKKOS_LAMBDA(const std::int64_t j, std::int64_t& sum, const bool final) {
        const std::int64_t count = counts(j);
        if (final) counts(j) = sum;
        sum += count;
      });
  Kokkos::parallel_for(
      "spk::radix_scatter", Range64<ExecSpace>(0, nchunks), KOKKOS_LAMBDA(const std::int64_t c) {
        const std::int64_t end = (c + 1) * chunk < n ? (c + 1) * chunk : n;
        for (std::int64_t i = c * chunk; i < end; ++i) {
          const std::int64_t d = std::int64_t((ukey(keys_in(i)) >> shift) & mask);
          const std::int64_t pos = counts(d * nchunks + c);
          counts(d * nchunks + c) = pos + 1;
          keys_out(pos) = keys_in(i);
          radix_move_payload(payload_in, payload_out, i, pos);
        }
      });
}

/// Sorts the n keys of `keys` (integers in [0, 2^key_bits)) stably on ExecSpace, applying the
/// same permutation to `payload` (a view of n elements, or NoPayload). keys and payload are
/// managed rank-1 views; each is replaced by the view holding the result, which is either the
/// input view or a newly allocated one (the input views may be overwritten). Passes:
/// ceil(key_bits / digit_bits), each with digits of equal width (fewer counters) and O(n +
/// 2^digit_bits * n / chunk) work; extra memory: one more key and payload buffer and
/// 2^digit_bits * ceil(n / chunk) int64 counters.
template <class ExecSpace, class KeyView, class PayloadView>
void stable_radix_sort(KeyView& keys, PayloadView& payload, int key_bits,
                       const RadixSortParams& p) {
  using key_type = typename KeyView::non_const_value_type;
  static_assert(std::is_integral<key_type>::value,
                "stable_radix_sort: the keys must be of an integer type");
  require(p.digit_bits >= 1 && p.digit_bits <= 16, "spk::impl::stable_radix_sort",
          "digit_bits = ", p.digit_bits, " must be in [1, 16]");
  require(key_bits <= int(8 * sizeof(key_type)), "spk::impl::stable_radix_sort",
          "key_bits = ", key_bits, " exceeds the ", 8 * sizeof(key_type), " bits of the key type");
  const std::int64_t n = std::int64_t(keys.extent(0));
  if (n <= 1 || key_bits <= 0) return;
  const int passes = (key_bits + p.digit_bits - 1) / p.digit_bits;
  const int bits = (key_bits + passes - 1) / passes;  // equal digits: fewer counters
  const std::int64_t chunk = p.chunk > 0 ? p.chunk : default_radix_chunk<ExecSpace>(n);
  const std::int64_t nchunks = (n + chunk - 1) / chunk;
  using device = typename KeyView::device_type;
  Kokkos::View<std::int64_t*, device> counts(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::radix::counts"),
      (std::size_t(1) << bits) * std::size_t(nchunks));
  KeyView keys2(Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::radix::keys"),
                std::size_t(n));
  PayloadView payload2 = radix_payload_buffer(payload, std::size_t(n));
  for (int pass = 0; pass < passes; ++pass) {
    radix_pass<ExecSpace>(keys, payload, keys2, payload2, counts, pass * bits, bits, chunk);
    std::swap(keys, keys2);
    std::swap(payload, payload2);
  }
}

/// Sorts keys alone: stable_radix_sort with no payload (same passes, work and key memory).
template <class ExecSpace, class KeyView>
void stable_radix_sort(KeyView& keys, int key_bits, const RadixSortParams& p) {
  NoPayload none;
  stable_radix_sort<ExecSpace>(keys, none, key_bits, p);
}

}  // namespace impl
}  // namespace spk
