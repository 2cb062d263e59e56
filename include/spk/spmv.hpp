// spk/spmv.hpp: y = alpha * op(A) * x + beta * y for spk's formats.
#pragma once

#include <Kokkos_Core.hpp>
#include <type_traits>

#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/impl/csr_spmv.hpp>
#include <spk/mode.hpp>

namespace spk {

/// y = alpha * op(A) * x + beta * y with A in CSR. x and y are rank-1 views accessible from A's
/// execution space, of lengths ncols/nrows (op = N) or nrows/ncols (op = T, H). Runs
/// asynchronously on A's execution space. Throws std::invalid_argument on a size mismatch.
template <class S, class O, class F, class D, class XView, class YView>
void spmv(Mode mode, S alpha, const CsrMatrix<S, O, F, D>& a, const XView& x, S beta,
          const YView& y) {
  static_assert(Kokkos::is_view<XView>::value && Kokkos::is_view<YView>::value,
                "spk::spmv: x and y must be Kokkos::Views");
  static_assert(std::is_same<typename YView::value_type, S>::value,
                "spk::spmv: y must hold non-const values of the matrix value type");
  const bool trans = mode != Mode::N;
  const std::size_t nx = trans ? std::size_t(a.nrows()) : std::size_t(a.ncols());
  const std::size_t ny = trans ? std::size_t(a.ncols()) : std::size_t(a.nrows());
  require(x.extent(0) == nx, "spk::spmv", "x has ", x.extent(0), " entries, op(A) has ", nx,
          " columns (mode ", to_string(mode), ")");
  require(y.extent(0) == ny, "spk::spmv", "y has ", y.extent(0), " entries, op(A) has ", ny,
          " rows (mode ", to_string(mode), ")");
  if (!trans)
    impl::csr_spmv_n_row_per_thread(alpha, a, x, beta, y);
  else
    impl::csr_spmv_t_atomic(mode, alpha, a, x, beta, y);
}

}  // namespace spk
