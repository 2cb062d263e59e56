// spk/impl/convert_kernels.hpp: device kernels behind spk/convert.hpp and spk/validate.hpp.
//
// Everything here runs on the matrix's execution space; the host only launches kernels and reads
// a few scalars. Ordering work is done by the stable LSD radix sort of spk/impl/radix_sort.hpp,
// whose passes cost O(n) each whatever the distribution of the keys (one very long row costs the
// same as many short ones), and whose stability makes every result independent of the backend and
// of the thread count.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <spk/coo_matrix.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/radix_sort.hpp>
#include <spk/impl/search.hpp>
#include <spk/scalar.hpp>

namespace spk {
namespace impl {

/// Reads element i of a view (in any memory space) on the host.
template <class View>
typename View::non_const_value_type read_element(const View& v, std::size_t i) {
  typename View::non_const_value_type x{};
  Kokkos::deep_copy(x, Kokkos::subview(v, i));
  return x;
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
      KOKKOS_LAMBDA(const std::int64_t i) {
        row_map(i) = F(impl::lower_bound(urows, std::int64_t(0), nunique, O(i)));
      });
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
      KOKKOS_LAMBDA(const std::int64_t j) {
        row_map(j) = F(impl::lower_bound(keys, std::int64_t(0), n, O(j)));
      });
  return b;
}

}  // namespace impl
}  // namespace spk
