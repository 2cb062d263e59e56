// spk/impl/convert_kernels.hpp: device kernels behind spk/convert.hpp and spk/validate.hpp.
//
// Everything here runs on the matrix's execution space; the host only launches kernels and reads
// a few scalars. Ordering work is done by one stable LSD radix sort whose passes cost O(n) each
// whatever the distribution of the keys (one very long row costs the same as many short ones),
// and whose stability makes every result independent of the backend and of the thread count.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <spk/coo_matrix.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/scalar.hpp>
#include <type_traits>
#include <utility>

namespace spk {
namespace impl {

/// Range policy with 64-bit indices (entry counts may exceed 2^31).
template <class ExecSpace>
using Range64 = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;

/// Launch parameters of the stable radix sort.
struct RadixSortParams {
  /// Keys each thread counts and scatters in order (this keeps the sort stable); 0 picks the
  /// default of the execution space (see default_radix_chunk).
  std::int64_t chunk = 0;
  /// Key bits per pass; each pass keeps 2^digit_bits counters per chunk.
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

/// Number of bits needed to write x (0 for x == 0).
inline int bit_width(std::uint64_t x) {
  int bits = 0;
  for (; x != 0; x >>= 1) ++bits;
  return bits;
}

/// Reads element i of a view (in any memory space) on the host.
template <class View>
typename View::non_const_value_type read_element(const View& v, std::size_t i) {
  typename View::non_const_value_type x{};
  Kokkos::deep_copy(x, Kokkos::subview(v, i));
  return x;
}

/// The row i in [0, nrows) with row_map(i) <= k < row_map(i + 1), by binary search. Requires a
/// monotone row_map with row_map(0) <= k < row_map(nrows).
template <class RowMap, class O, class F>
KOKKOS_INLINE_FUNCTION O row_of_entry(const RowMap& row_map, O nrows, F k) {
  O lo = 0, hi = nrows;  // row_map(lo) <= k < row_map(hi)
  while (hi - lo > 1) {
    const O mid = lo + (hi - lo) / 2;
    if (row_map(mid) <= k)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/// The first position p in [0, n) of a sorted view with keys(p) >= value, or n.
template <class Keys, class T>
KOKKOS_INLINE_FUNCTION std::int64_t lower_bound(const Keys& keys, std::int64_t n, T value) {
  std::int64_t lo = 0, hi = n;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (keys(mid) < value)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/// The smallest k in [begin, end) with pred(k) true, or end if there is none. pred is a device
/// callable taking std::int64_t. One parallel_reduce on ExecSpace; blocks until it is done.
template <class ExecSpace, class Pred>
std::int64_t find_first(std::int64_t begin, std::int64_t end, const Pred& pred) {
  if (end <= begin) return end;
  std::int64_t first = end;
  Kokkos::parallel_reduce(
      "spk::find_first", Range64<ExecSpace>(begin, end),
      KOKKOS_LAMBDA(const std::int64_t k, std::int64_t& m) {
        if (k < m && pred(k)) m = k;
      },
      Kokkos::Min<std::int64_t>(first));
  return first < end ? first : end;
}

/// v(k) = k.
template <class ExecSpace, class View>
void fill_iota(const View& v) {
  using T = typename View::value_type;
  Kokkos::parallel_for(
      "spk::iota", Range64<ExecSpace>(0, std::int64_t(v.extent(0))),
      KOKKOS_LAMBDA(const std::int64_t k) { v(k) = T(k); });
}

/// Row index of every entry of a CSR structure (row_map monotone, row_map(nrows) == nnz), one
/// binary search per entry, so long rows cost no more than short ones.
template <class ExecSpace, class O, class D, class RowMap>
Kokkos::View<O*, D> entry_rows(const RowMap& row_map, O nrows, std::int64_t nnz) {
  using F = typename RowMap::non_const_value_type;
  Kokkos::View<O*, D> rows(Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::entry_rows"),
                           std::size_t(nnz));
  Kokkos::parallel_for(
      "spk::entry_rows", Range64<ExecSpace>(0, nnz),
      KOKKOS_LAMBDA(const std::int64_t k) { rows(k) = row_of_entry(row_map, nrows, F(k)); });
  return rows;
}

/// One pass of the LSD radix sort: stably moves (keys_in, perm_in) to (keys_out, perm_out) by the
/// digit (key >> shift) & (2^bits - 1). Each chunk of `chunk` consecutive keys is handled by one
/// thread in order; the counters, laid out digit-major, give every (digit, chunk) pair its slot
/// range after an exclusive scan, which keeps equal digits in input order.
template <class ExecSpace, class KeyView, class PermView, class CountView>
void radix_pass(const KeyView& keys_in, const PermView& perm_in, const KeyView& keys_out,
                const PermView& perm_out, const CountView& counts, int shift, int bits,
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
          perm_out(pos) = perm_in(i);
        }
      });
}

/// Sorts keys (non-negative, below 2^key_bits) stably, applying the same permutation to perm.
/// keys and perm are replaced by newly allocated views holding the result (the input views may
/// be overwritten). O(n * ceil(key_bits / digit_bits)) work.
template <class ExecSpace, class KeyView, class PermView>
void stable_radix_sort(KeyView& keys, PermView& perm, int key_bits, const RadixSortParams& p) {
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
  PermView perm2(Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::radix::perm"),
                 std::size_t(n));
  for (int pass = 0; pass < passes; ++pass) {
    radix_pass<ExecSpace>(keys, perm, keys2, perm2, counts, pass * bits, bits, chunk);
    std::swap(keys, keys2);
    std::swap(perm, perm2);
  }
}

/// Entries sorted by (row, column, original position): the sorted rows and columns and, for
/// each sorted entry, its position in the input.
template <class O, class F, class D>
struct SortedEntries {
  Kokkos::View<O*, D> rows;
  Kokkos::View<O*, D> cols;
  Kokkos::View<F*, D> perm;
};

/// Sorts n entries (rows(k), cols(k)), all inside [0, nrows) x [0, ncols), by row, then column,
/// then k: a stable radix sort by column followed by a stable one by row.
template <class ExecSpace, class O, class F, class D, class RowView, class ColView>
SortedEntries<O, F, D> sort_by_row_col(const RowView& rows, const ColView& cols, O nrows, O ncols,
                                       const RadixSortParams& p) {
  const std::size_t n = cols.extent(0);
  SortedEntries<O, F, D> s;
  Kokkos::View<O*, D> keys(Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::sort::keys"), n);
  s.perm =
      Kokkos::View<F*, D>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::sort::perm"), n);
  Kokkos::deep_copy(keys, cols);
  fill_iota<ExecSpace>(s.perm);
  stable_radix_sort<ExecSpace>(keys, s.perm, bit_width(std::uint64_t(ncols > 0 ? ncols - 1 : 0)),
                               p);
  {
    const auto perm = s.perm;
    Kokkos::parallel_for(
        "spk::sort::gather_rows", Range64<ExecSpace>(0, std::int64_t(n)),
        KOKKOS_LAMBDA(const std::int64_t k) { keys(k) = rows(perm(k)); });
  }
  stable_radix_sort<ExecSpace>(keys, s.perm, bit_width(std::uint64_t(nrows > 0 ? nrows - 1 : 0)),
                               p);
  s.rows = keys;
  s.cols =
      Kokkos::View<O*, D>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::sort::cols"), n);
  const auto perm = s.perm;
  const auto sorted_cols = s.cols;
  Kokkos::parallel_for(
      "spk::sort::gather_cols", Range64<ExecSpace>(0, std::int64_t(n)),
      KOKKOS_LAMBDA(const std::int64_t k) { sorted_cols(k) = cols(perm(k)); });
  return s;
}

/// COO -> CSR for triplets already known to be in range: sort, then one output entry per run of
/// equal (row, column), its value the sum of the run in input order (so the result does not
/// depend on the backend), then row_map by binary search of each row in the sorted rows.
template <class S, class O, class F, class D>
CsrMatrix<S, O, F, D> coo_to_csr_checked(const CooMatrix<S, O, F, D>& a, const RadixSortParams& p) {
  using Csr = CsrMatrix<S, O, F, D>;
  using exec = typename Csr::execution_space;
  using dev = typename Csr::device_type;
  const std::int64_t n = std::int64_t(a.nnz());
  if (n == 0) return Csr(a.nrows(), a.ncols(), F(0));
  const auto s =
      sort_by_row_col<exec, O, F, dev>(a.row_idx(), a.col_idx(), a.nrows(), a.ncols(), p);
  const auto srows = s.rows;
  const auto scols = s.cols;
  const auto perm = s.perm;

  Kokkos::View<F*, dev> start(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::coo_to_csr::start"), std::size_t(n));
  std::int64_t nunique = 0;
  Kokkos::parallel_scan(
      "spk::coo_to_csr::runs", Range64<exec>(0, n),
      KOKKOS_LAMBDA(const std::int64_t k, std::int64_t& count, const bool final) {
        if (k == 0 || srows(k) != srows(k - 1) || scols(k) != scols(k - 1)) {
          if (final) start(count) = F(k);
          count += 1;
        }
      },
      nunique);

  Csr b(a.nrows(), a.ncols(), F(nunique));
  const auto row_map = b.row_map();
  const auto col_idx = b.col_idx();
  const auto values = b.values();
  const auto in_values = a.values();
  Kokkos::View<O*, dev> urows(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::coo_to_csr::rows"),
      std::size_t(nunique));
  Kokkos::parallel_for(
      "spk::coo_to_csr::sum", Range64<exec>(0, nunique), KOKKOS_LAMBDA(const std::int64_t e) {
        const std::int64_t k0 = std::int64_t(start(e));
        const std::int64_t k1 = e + 1 < nunique ? std::int64_t(start(e + 1)) : n;
        urows(e) = srows(k0);
        col_idx(e) = scols(k0);
        S sum = in_values(perm(k0));
        for (std::int64_t k = k0 + 1; k < k1; ++k) sum = sum + in_values(perm(k));
        values(e) = sum;
      });
  Kokkos::parallel_for(
      "spk::coo_to_csr::row_map", Range64<exec>(0, std::int64_t(a.nrows()) + 1),
      KOKKOS_LAMBDA(const std::int64_t i) { row_map(i) = F(lower_bound(urows, nunique, O(i))); });
  return b;
}

/// CSR -> COO for a structurally valid CSR matrix: the row of each entry by binary search, the
/// columns and values copied.
template <class S, class O, class F, class D>
CooMatrix<S, O, F, D> csr_to_coo_checked(const CsrMatrix<S, O, F, D>& a) {
  using Coo = CooMatrix<S, O, F, D>;
  using exec = typename Coo::execution_space;
  using dev = typename Coo::device_type;
  const auto rows = entry_rows<exec, O, dev>(a.row_map(), a.nrows(), std::int64_t(a.nnz()));
  typename Coo::index_type cols(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::coo::col_idx"), std::size_t(a.nnz()));
  typename Coo::values_type vals(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::coo::values"), std::size_t(a.nnz()));
  Kokkos::deep_copy(cols, a.col_idx());
  Kokkos::deep_copy(vals, a.values());
  return Coo(a.nrows(), a.ncols(), rows, cols, vals);
}

/// Transpose of a structurally valid CSR matrix: a stable sort of the entries by column keeps,
/// within each column, the order of the rows, so every row of the result comes out sorted (and
/// duplicates stay, in stored order) without a per-row sort.
template <class S, class O, class F, class D>
CsrMatrix<S, O, F, D> transpose_checked(const CsrMatrix<S, O, F, D>& a, bool conjugate,
                                        const RadixSortParams& p) {
  using Csr = CsrMatrix<S, O, F, D>;
  using exec = typename Csr::execution_space;
  using dev = typename Csr::device_type;
  using traits = scalar_traits<S>;
  const std::int64_t n = std::int64_t(a.nnz());
  Csr b(a.ncols(), a.nrows(), a.nnz());
  if (n == 0) return b;
  Kokkos::View<O*, dev> keys(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::transpose::keys"), std::size_t(n));
  Kokkos::View<F*, dev> perm(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::transpose::perm"), std::size_t(n));
  Kokkos::deep_copy(keys, a.col_idx());
  fill_iota<exec>(perm);
  stable_radix_sort<exec>(keys, perm, bit_width(std::uint64_t(a.ncols() - 1)), p);

  const auto in_row_map = a.row_map();
  const auto in_values = a.values();
  const O nrows = a.nrows();
  const auto col_idx = b.col_idx();
  const auto values = b.values();
  const auto row_map = b.row_map();
  Kokkos::parallel_for(
      "spk::transpose::fill", Range64<exec>(0, n), KOKKOS_LAMBDA(const std::int64_t k) {
        const F src = perm(k);
        col_idx(k) = row_of_entry(in_row_map, nrows, src);
        values(k) = conjugate ? traits::conj(in_values(src)) : in_values(src);
      });
  Kokkos::parallel_for(
      "spk::transpose::row_map", Range64<exec>(0, std::int64_t(a.ncols()) + 1),
      KOKKOS_LAMBDA(const std::int64_t j) { row_map(j) = F(lower_bound(keys, n, O(j))); });
  return b;
}

}  // namespace impl
}  // namespace spk
