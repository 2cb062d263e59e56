// spk/impl/csr_analysis.hpp: structure-derived data of a CSR matrix that SpMV computes once and
// caches with the matrix (row statistics; the explicit transpose when asked for).
#pragma once

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <memory>

#include <spk/csr_matrix.hpp>
#include <spk/csr_spmv_params.hpp>

namespace spk {
namespace impl {

template <class Matrix>
struct CsrAnalysis {
  CsrRowStats stats;
  /// Balanced kernel: window_rows(w) = first row starting at or after w * window_nnz, for
  /// w = 0 .. nwindows (the last entry is nrows); rebuilt when the window size changes.
  Kokkos::View<typename Matrix::ordinal_type*, typename Matrix::device_type> window_rows;
  std::int64_t window_nnz = 0;
  /// Warp kernel: the same for its (much smaller) windows of warp_nnz nonzeros, kept beside the
  /// balanced kernel's so that alternating between the two does not rebuild either.
  Kokkos::View<typename Matrix::ordinal_type*, typename Matrix::device_type> warp_rows;
  std::int64_t warp_nnz = 0;
  /// Partial sums of rows that cross windows (balanced and warp kernels), one per window; kept
  /// between products so that a product allocates nothing. Two products on the same matrix must
  /// therefore not run concurrently on different execution space instances.
  Kokkos::View<typename Matrix::value_type*, typename Matrix::device_type> carry, head;
  std::shared_ptr<Matrix> transpose;       ///< A^T, built on first explicit-transpose product
  std::shared_ptr<Matrix> conj_transpose;  ///< A^H, likewise
};

/// Row-length statistics computed on the matrix's execution space. O(nrows).
template <class S, class O, class F, class D>
CsrRowStats compute_csr_row_stats(const CsrMatrix<S, O, F, D>& a) {
  using exec = typename CsrMatrix<S, O, F, D>::execution_space;
  CsrRowStats s;
  s.nrows = a.nrows();
  s.nnz = a.nnz();
  if (a.nrows() == 0) return s;
  const auto row_map = a.row_map();
  std::int64_t max_row = 0, empty = 0;
  double sum_sq = 0;
  Kokkos::parallel_reduce(
      "spk::csr_row_stats_max", Kokkos::RangePolicy<exec>(0, a.nrows()),
      KOKKOS_LAMBDA(const O i, std::int64_t& m) {
        const std::int64_t len = std::int64_t(row_map(i + 1)) - std::int64_t(row_map(i));
        if (len > m) m = len;
      },
      Kokkos::Max<std::int64_t>(max_row));
  Kokkos::parallel_reduce(
      "spk::csr_row_stats_empty", Kokkos::RangePolicy<exec>(0, a.nrows()),
      KOKKOS_LAMBDA(const O i, std::int64_t& n) { n += row_map(i + 1) == row_map(i) ? 1 : 0; },
      empty);
  Kokkos::parallel_reduce(
      "spk::csr_row_stats_sq", Kokkos::RangePolicy<exec>(0, a.nrows()),
      KOKKOS_LAMBDA(const O i, double& q) {
        const double len = double(row_map(i + 1)) - double(row_map(i));
        q += len * len;
      },
      sum_sq);
  s.max_row = max_row;
  s.empty_rows = empty;
  s.mean = double(s.nnz) / double(s.nrows);
  const double var = sum_sq / double(s.nrows) - s.mean * s.mean;
  s.stddev = var > 0 ? std::sqrt(var) : 0.0;
  return s;
}

/// The cached analysis of `a`, computed on first use.
template <class Matrix>
CsrAnalysis<Matrix>& csr_analysis(const Matrix& a) {
  auto& slot = a.analysis();
  if (!slot.data) {
    auto an = std::make_shared<CsrAnalysis<Matrix>>();
    an->stats = compute_csr_row_stats(a);
    slot.data = an;
  }
  return *std::static_pointer_cast<CsrAnalysis<Matrix>>(slot.data);
}

}  // namespace impl

/// Row-length statistics of a CSR matrix (computed on the device on first use, then cached with
/// the matrix; see CsrMatrix::invalidate_analysis).
template <class S, class O, class F, class D>
const CsrRowStats& row_stats(const CsrMatrix<S, O, F, D>& a) {
  return impl::csr_analysis(a).stats;
}

}  // namespace spk
