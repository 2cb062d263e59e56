// spk/impl/csr_spmv.hpp: CSR SpMV kernels (one row per thread; transposed with atomics).
#pragma once

#include <Kokkos_Core.hpp>

#include <spk/csr_matrix.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {
namespace impl {

/// y = beta * y (beta == 0 overwrites, so NaN in y does not propagate).
template <class ExecSpace, class S, class YView>
void scale_vector(const ExecSpace& space, S beta, const YView& y) {
  using traits = scalar_traits<S>;
  const bool zero = beta == traits::zero();
  Kokkos::parallel_for(
      "spk::scale_vector", Kokkos::RangePolicy<ExecSpace>(space, 0, y.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i) { y(i) = zero ? traits::zero() : beta * y(i); });
}

/// y = alpha * A * x + beta * y, one row per thread.
template <class S, class O, class F, class D, class XView, class YView>
void csr_spmv_n_row_per_thread(S alpha, const CsrMatrix<S, O, F, D>& a, const XView& x, S beta,
                               const YView& y) {
  using traits = scalar_traits<S>;
  using exec = typename CsrMatrix<S, O, F, D>::execution_space;
  const auto row_map = a.row_map();
  const auto col_idx = a.col_idx();
  const auto values = a.values();
  const bool beta_zero = beta == traits::zero();
  Kokkos::parallel_for(
      "spk::csr_spmv_n", Kokkos::RangePolicy<exec>(0, a.nrows()), KOKKOS_LAMBDA(const O i) {
        S sum = traits::zero();
        for (F k = row_map(i); k < row_map(i + 1); ++k) sum += values(k) * x(col_idx(k));
        y(i) = beta_zero ? alpha * sum : alpha * sum + beta * y(i);
      });
}

/// y = alpha * op(A) * x + beta * y for op = T or H, scattering with atomics (no transpose is
/// materialised).
template <class S, class O, class F, class D, class XView, class YView>
void csr_spmv_t_atomic(Mode mode, S alpha, const CsrMatrix<S, O, F, D>& a, const XView& x,
                       S beta, const YView& y) {
  using traits = scalar_traits<S>;
  using exec = typename CsrMatrix<S, O, F, D>::execution_space;
  scale_vector(exec(), beta, y);
  const auto row_map = a.row_map();
  const auto col_idx = a.col_idx();
  const auto values = a.values();
  const bool conj = mode == Mode::H;
  Kokkos::parallel_for(
      "spk::csr_spmv_t_atomic", Kokkos::RangePolicy<exec>(0, a.nrows()),
      KOKKOS_LAMBDA(const O i) {
        const S xi = alpha * x(i);
        for (F k = row_map(i); k < row_map(i + 1); ++k) {
          const S v = conj ? traits::conj(values(k)) : values(k);
          Kokkos::atomic_add(&y(col_idx(k)), v * xi);
        }
      });
}

}  // namespace impl
}  // namespace spk
