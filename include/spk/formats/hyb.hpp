// spk/formats/hyb.hpp: HYB (Bell and Garland 2009): an ELL part holding the first ell_width
// entries of every row and a COO part holding the rest, so that a few long rows do not pad the
// whole matrix. The width is chosen automatically by the classic rule or set by the user.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include <spk/coo_matrix.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/formats/ell.hpp>
#include <spk/formats/padding_limit.hpp>
#include <spk/impl/ell_spmv.hpp>
#include <spk/impl/format_common.hpp>
#include <spk/impl/format_convert.hpp>
#include <spk/impl/hyb_spmv.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/search.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {

/// Options of the conversion CSR -> HYB.
struct HybOptions {
  /// Entries per row in the ELL part; -1 = automatic: the largest width K such that at least
  /// max(nrows / relative_speed, breakeven_rows) rows have K or more entries (0 when none),
  /// the rule of Bell and Garland (2009) and CUSP: an ELL column pays when at least a third of
  /// the rows fill it, and the ELL part needs enough rows to occupy the device.
  std::int64_t ell_width = -1;
  double relative_speed = 3.0;         ///< ELL throughput relative to COO, per stored entry
  std::int64_t breakeven_rows = 4096;  ///< rows below which COO is as fast as ELL
  PaddingLimit limit;                  ///< for the ELL part (PaddingLimitExceeded above it)
};

namespace impl {

/// The ELL width of HybOptions::ell_width = -1 (see there) for rows of lengths `lens`, by binary
/// search over the width with one counting reduction per step. O(nrows log max_len).
template <class ExecSpace, class Lens>
std::int64_t hyb_auto_width(const Lens& lens, const HybOptions& opt) {
  const std::int64_t nrows = std::int64_t(lens.extent(0));
  const std::int64_t max_len = max_entry<ExecSpace>(lens);
  const auto enough = [&](std::int64_t k) {
    const std::int64_t n = count_at_least<ExecSpace>(lens, k);
    return double(n) * opt.relative_speed >= double(nrows) && n >= opt.breakeven_rows;
  };
  std::int64_t lo = 0, hi = max_len;  // lo: a width known to qualify (0 always does)
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (enough(mid))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/// The COO part of HYB: the entries of each row of `a` beyond its first `width`, in row order
/// then stored order (an exclusive scan of the overflow counts places each row's run).
template <class S, class O, class F, class D>
CooMatrix<S, O, F, D> csr_overflow_to_coo(const CsrMatrix<S, O, F, D>& a, std::int64_t width) {
  using dev = typename CsrMatrix<S, O, F, D>::device_type;
  using exec = typename dev::execution_space;
  const std::int64_t nrows = a.nrows();
  const auto row_map = a.row_map();
  Kokkos::View<std::int64_t*, dev> start(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hyb::coo_start"),
      std::size_t(nrows) + 1);
  std::int64_t total = 0;
  Kokkos::parallel_scan(
      "spk::hyb::overflow", Range64<exec>(0, nrows + 1),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& sum, const bool final) {
        if (final) start(i) = sum;
        if (i < nrows) {
          const std::int64_t len = std::int64_t(row_map(i + 1) - row_map(i));
          sum += len > width ? len - width : 0;
        }
      },
      total);
  CooMatrix<S, O, F, D> coo(a.nrows(), a.ncols(), F(total));
  const auto rows = coo.row_idx();
  const auto cols = coo.col_idx();
  const auto vals = coo.values();
  const auto in_cols = a.col_idx();
  const auto in_vals = a.values();
  Kokkos::parallel_for(
      "spk::hyb::fill_coo", Range64<exec>(0, nrows), KOKKOS_LAMBDA(const std::int64_t i) {
        std::int64_t dst = start(i);
        for (std::int64_t k = std::int64_t(row_map(i)) + width; k < std::int64_t(row_map(i + 1));
             ++k, ++dst) {
          rows(dst) = O(i);
          cols(dst) = in_cols(k);
          vals(dst) = in_vals(k);
        }
      });
  return coo;
}

/// CSR of a HYB matrix: each row's ELL entries, then its COO entries (the input's order).
template <class Csr, class Ell, class Coo>
Csr hyb_to_csr(const Ell& ell, const Coo& coo) {
  using O = typename Csr::ordinal_type;
  using F = typename Csr::size_type;
  using exec = typename Csr::execution_space;
  const std::int64_t nrows = ell.nrows();
  const std::int64_t ncoo = std::int64_t(coo.nnz());
  const auto coo_rows = coo.row_idx();
  const auto coo_cols = coo.col_idx();
  const auto coo_vals = coo.values();
  const auto ell_len = ell.row_lengths();
  const auto ell_vals = ell.values();
  const auto ell_cols = ell.col_idx();
  Kokkos::View<F*, typename Csr::device_type> row_map("spk::to_csr::row_map",
                                                      std::size_t(nrows) + 1);
  Kokkos::parallel_for(
      "spk::hyb_to_csr::count", Range64<exec>(0, nrows), KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t b = impl::lower_bound(coo_rows, std::int64_t(0), ncoo, O(i));
        const std::int64_t e = impl::lower_bound(coo_rows, b, ncoo, O(i + 1));
        row_map(i + 1) = F(std::int64_t(ell_len(i)) + e - b);
      });
  const std::int64_t nnz = impl::row_lengths_to_offsets<exec>(row_map);
  Csr b(O(nrows), ell.ncols(), typename Csr::row_map_type(row_map),
        typename Csr::index_type(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::csr::col_idx"), std::size_t(nnz)),
        typename Csr::values_type(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::csr::values"), std::size_t(nnz)));
  const auto out_cols = b.col_idx();
  const auto out_vals = b.values();
  Kokkos::parallel_for(
      "spk::hyb_to_csr::fill", Range64<exec>(0, nrows), KOKKOS_LAMBDA(const std::int64_t i) {
        F dst = row_map(i);
        for (O k = 0; k < ell_len(i); ++k, ++dst) {
          out_cols(dst) = ell_cols(i, k);
          out_vals(dst) = ell_vals(i, k);
        }
        for (std::int64_t k = impl::lower_bound(coo_rows, std::int64_t(0), ncoo, O(i));
             k < ncoo && std::int64_t(coo_rows(k)) == i; ++k, ++dst) {
          out_cols(dst) = coo_cols(k);
          out_vals(dst) = coo_vals(k);
        }
      });
  return b;
}

}  // namespace impl

/// HYB matrix: an EllMatrix holding the first ell_width() entries of every row and a CooMatrix
/// holding the remaining entries (sorted by row, then in stored order). Entries keep the order
/// of the CSR input (duplicates and explicit zeros included). Template parameters as
/// spk::EllMatrix. Copies are shallow.
template <class Scalar, class Ordinal = int, class Offset = int,
          class Device = Kokkos::DefaultExecutionSpace,
          class Layout = impl::ell_default_layout_t<Device>>
class HybMatrix {
 public:
  using value_type = Scalar;
  using ordinal_type = Ordinal;
  using size_type = Offset;
  using array_layout = Layout;
  using device_type = impl::device_t<Device>;
  using execution_space = typename device_type::execution_space;
  using memory_space = typename device_type::memory_space;
  using ell_type = EllMatrix<Scalar, Ordinal, Offset, Device, Layout>;
  using coo_type = CooMatrix<Scalar, Ordinal, Offset, Device>;
  using csr_type = CsrMatrix<Scalar, Ordinal, Offset, Device>;
  static constexpr const char* name = "hyb";

  /// An empty 0 x 0 matrix.
  HybMatrix() = default;

  /// Converts a CSR matrix on its device (see HybOptions). Throws std::invalid_argument for
  /// invalid options and PaddingLimitExceeded when the ELL part would exceed options.limit.
  explicit HybMatrix(const csr_type& a, const HybOptions& options = {})
      : HybMatrix(a, options, choose_width(a, options)) {}

  /// Wraps an ELL part and a COO part (entries sorted by row) of the same shape.
  HybMatrix(const ell_type& ell, const coo_type& coo) : ell_(ell), coo_(coo) {
    require(ell.nrows() == coo.nrows() && ell.ncols() == coo.ncols(), "spk::HybMatrix",
            "the ELL part is ", ell.nrows(), " x ", ell.ncols(), " but the COO part is ",
            coo.nrows(), " x ", coo.ncols());
  }

  ordinal_type nrows() const { return ell_.nrows(); }
  ordinal_type ncols() const { return ell_.ncols(); }
  /// Stored entries of both parts (padding excluded).
  std::int64_t nnz() const { return ell_.nnz() + std::int64_t(coo_.nnz()); }
  /// Entries per row of the ELL part.
  ordinal_type ell_width() const { return ell_.width(); }
  std::int64_t ell_nnz() const { return ell_.nnz(); }
  std::int64_t coo_nnz() const { return std::int64_t(coo_.nnz()); }
  /// Allocated value slots (ELL padded + COO) per stored entry (1 for an empty matrix).
  double padding_ratio() const {
    const double slots =
        double(ell_.values().extent(0)) * double(ell_.values().extent(1)) + double(coo_.nnz());
    return nnz() > 0 ? slots / double(nnz()) : 1.0;
  }

  const ell_type& ell() const { return ell_; }
  const coo_type& coo() const { return coo_; }

  /// Bytes held by both parts.
  std::size_t memory_bytes() const { return ell_.memory_bytes() + coo_.memory_bytes(); }

  /// The matrix in CSR on the same device: rows in order, entries in stored order (the CSR
  /// input's). O(nrows log coo_nnz + nnz) work.
  csr_type to_csr() const { return impl::hyb_to_csr<csr_type>(ell_, coo_); }

 private:
  /// The ELL width: the user's, or the automatic one (after checking the options).
  static std::int64_t choose_width(const csr_type& a, const HybOptions& o) {
    require(o.ell_width >= -1, "spk::HybMatrix", "ell_width = ", o.ell_width,
            " must be -1 (automatic) or >= 0");
    require(o.relative_speed > 0, "spk::HybMatrix", "relative_speed = ", o.relative_speed,
            " must be positive");
    require(o.breakeven_rows >= 0, "spk::HybMatrix", "breakeven_rows = ", o.breakeven_rows,
            " must be >= 0");
    if (o.ell_width >= 0) return o.ell_width;
    return impl::hyb_auto_width<execution_space>(impl::row_lengths(a), o);
  }

  static ell_type ell_part(const csr_type& a, const HybOptions& o, std::int64_t width) {
    const auto arr = impl::csr_to_ell<Layout>(a, width, o.limit, "spk::HybMatrix");
    return ell_type(a.nrows(), a.ncols(), arr.values, arr.col_idx, arr.row_len);
  }

  HybMatrix(const csr_type& a, const HybOptions& o, std::int64_t width)
      : ell_(ell_part(a, o, width)),
        coo_(impl::csr_overflow_to_coo(a, std::int64_t(ell_.width()))) {}

  ell_type ell_;
  coo_type coo_;
};

/// The launch spmv would use for `a`: the ELL part's from its mean row length (see
/// impl::resolve_row_launch), the COO run from impl::default_coo_run.
template <class S, class O, class F, class D, class L>
HybSpmvParams resolve_params(const HybMatrix<S, O, F, D, L>& a, Mode /*mode*/,
                             const HybSpmvParams& params = {}) {
  using exec = typename HybMatrix<S, O, F, D, L>::execution_space;
  const impl::RowLaunch r = impl::resolve_row_launch(
      "spk::spmv (HYB)", params.threads_per_row, params.team_size, params.rows_per_team,
      a.ell().mean_row_length(), impl::is_gpu_space<exec>());
  require(params.coo_entries_per_thread >= 0, "spk::spmv (HYB)",
          "coo_entries_per_thread = ", params.coo_entries_per_thread, " must be >= 0");
  return HybSpmvParams{r.threads_per_row, r.team_size, r.rows_per_team,
                       params.coo_entries_per_thread > 0
                           ? params.coo_entries_per_thread
                           : impl::default_coo_run<exec>(a.coo_nnz()),
                       impl::resolve_in_flight("spk::spmv (HYB)", params.in_flight,
                                               impl::is_gpu_space<exec>())};
}

/// y = alpha * op(A) * x + beta * y with A in HYB; op = N, T or H: the ELL part's kernel, then
/// the COO part's atomic updates (see spk/impl/hyb_spmv.hpp). Vectors, beta == 0 and errors as
/// the ELL overload. O(nnz + nrows) work.
template <class S, class O, class F, class D, class L, class XView, class YView>
void spmv(Mode mode, typename HybMatrix<S, O, F, D, L>::value_type alpha,
          const HybMatrix<S, O, F, D, L>& a, const XView& x,
          typename HybMatrix<S, O, F, D, L>::value_type beta, const YView& y,
          const HybSpmvParams& params = {}) {
  using Matrix = HybMatrix<S, O, F, D, L>;
  using dev = typename Matrix::device_type;
  using exec = typename Matrix::execution_space;
  static_assert(impl::check_vector_types<S, exec, XView, YView>(),
                "spk::spmv: invalid vector types");
  impl::check_vector_sizes("spk::spmv", mode != Mode::N, a.nrows(), a.ncols(), x, y,
                           to_string(mode));
  const HybSpmvParams p = resolve_params(a, mode, params);
  const auto& ell = a.ell();
  impl::padded_rows_spmv<dev>(
      "spk::hyb_ell_spmv",
      impl::RowLaunch{p.threads_per_row, p.team_size, p.rows_per_team, p.in_flight}, mode,
      alpha, ell.values().data(), ell.col_idx().data(), ell.geometry(),
      Kokkos::View<const O*, dev>(ell.row_lengths()), ell.nrows(), x, beta, y);
  impl::hyb_coo_spmv<exec>(mode, alpha, a.coo().row_idx(), a.coo().col_idx(), a.coo().values(),
                           p.coo_entries_per_thread, x, y);
}

}  // namespace spk
