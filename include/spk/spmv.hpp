// spk/spmv.hpp: y = alpha * op(A) * x + beta * y for spk's formats.
#pragma once

#include <Kokkos_Core.hpp>
#include <memory>
#include <type_traits>

#include <spk/convert.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/csr_spmv_params.hpp>
#include <spk/error.hpp>
#include <spk/impl/csr_analysis.hpp>
#include <spk/impl/csr_spmv.hpp>
#include <spk/impl/csr_spmv_staged.hpp>
#include <spk/impl/csr_spmv_warp.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/mode.hpp>

namespace spk {

/// The schedule spmv would use for `a` with the given (partly filled) parameters: zero fields
/// are chosen from the matrix's cached row statistics and its execution space.
template <class S, class O, class F, class D>
CsrSpmvParams resolve_params(const CsrMatrix<S, O, F, D>& a, Mode mode,
                             const CsrSpmvParams& params = {}) {
  using exec = typename CsrMatrix<S, O, F, D>::execution_space;
  return choose_csr_spmv_params(row_stats(a), impl::is_gpu_space<exec>(), params, mode);
}

/// y = alpha * op(A) * x + beta * y with A in CSR.
///
/// x and y are rank-1 views accessible from A's execution space, of lengths ncols/nrows
/// (op = N) or nrows/ncols (op = T, H). `params` selects the kernel variant and launch
/// parameters; its zero fields are chosen from row-length statistics computed once per matrix
/// (cached with it). With TransposeMethod::explicit_ the transpose is built once and cached.
/// beta == 0 overwrites y (NaN in y does not propagate). Runs asynchronously on A's execution
/// space. Throws std::invalid_argument on a size mismatch or invalid parameters.
/// Cost: O(nnz + nrows + ncols) memory traffic.
template <class S, class O, class F, class D, class XView, class YView>
void spmv(Mode mode, typename CsrMatrix<S, O, F, D>::value_type alpha,
          const CsrMatrix<S, O, F, D>& a, const XView& x,
          typename CsrMatrix<S, O, F, D>::value_type beta, const YView& y,
          const CsrSpmvParams& params = {}) {
  using Matrix = CsrMatrix<S, O, F, D>;
  static_assert(Kokkos::is_view<XView>::value && Kokkos::is_view<YView>::value,
                "spk::spmv: x and y must be Kokkos::Views");
  static_assert(std::is_same<typename YView::value_type, S>::value,
                "spk::spmv: y must hold non-const values of the matrix value type");
  static_assert(std::is_same<typename XView::non_const_value_type, S>::value,
                "spk::spmv: x must hold values of the matrix value type");
  static_assert(Kokkos::SpaceAccessibility<typename Matrix::execution_space,
                                           typename YView::memory_space>::accessible,
                "spk::spmv: y must be accessible from the matrix's execution space");
  static_assert(Kokkos::SpaceAccessibility<typename Matrix::execution_space,
                                           typename XView::memory_space>::accessible,
                "spk::spmv: x must be accessible from the matrix's execution space");
  const bool trans = mode != Mode::N;
  const std::size_t nx = trans ? std::size_t(a.nrows()) : std::size_t(a.ncols());
  const std::size_t ny = trans ? std::size_t(a.ncols()) : std::size_t(a.nrows());
  require(x.extent(0) == nx, "spk::spmv", "x has ", x.extent(0), " entries, op(A) has ", nx,
          " columns (mode ", to_string(mode), ")");
  require(y.extent(0) == ny, "spk::spmv", "y has ", y.extent(0), " entries, op(A) has ", ny,
          " rows (mode ", to_string(mode), ")");
  if (trans && params.transpose == TransposeMethod::explicit_) {
    auto& an = impl::csr_analysis(a);
    auto& cached = mode == Mode::H ? an.conj_transpose : an.transpose;
    if (!cached) cached = std::make_shared<Matrix>(transpose(a, mode == Mode::H));
    CsrSpmvParams p = params;
    p.transpose = TransposeMethod::atomic;
    spmv(Mode::N, alpha, *cached, x, beta, y, p);
    return;
  }
  const CsrSpmvParams p = resolve_params(a, mode, params);
  if (p.variant == CsrSpmvVariant::warp)
    impl::csr_spmv_warp(p, mode, alpha, a, x, beta, y);
  else if (p.variant == CsrSpmvVariant::staged)
    impl::csr_spmv_staged(p, mode, alpha, a, x, beta, y);
  else if (p.variant == CsrSpmvVariant::balanced && mode == Mode::N)
    impl::csr_spmv_balanced(p, alpha, a, x, beta, y);
  else if (p.variant == CsrSpmvVariant::balanced)
    impl::csr_spmv_balanced_t(p, mode, alpha, a, x, beta, y);
  else
    impl::csr_spmv_vector(p, mode, alpha, a, x, beta, y);
}

}  // namespace spk
