// spk/formats/ell.hpp: ELLPACK-R ("ELL-G" of Barbieri et al. 2015): every row padded to the
// longest row's length in 2-D value and column arrays, plus the length of each row so that
// kernels skip the padding.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/formats/padding_limit.hpp>
#include <spk/impl/ell_spmv.hpp>
#include <spk/impl/format_common.hpp>
#include <spk/impl/format_convert.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {

namespace impl {
/// ELL's default layout: column-major on GPUs (a warp's rows are adjacent in each column, so
/// loads coalesce), row-major on CPU backends (a thread's row is contiguous).
template <class Device>
using ell_default_layout_t = std::conditional_t<is_gpu_space<execution_space_t<Device>>(),
                                                Kokkos::LayoutLeft, Kokkos::LayoutRight>;
}  // namespace impl

/// Options of the conversion CSR -> ELL.
struct EllOptions {
  PaddingLimit limit;  ///< the conversion throws PaddingLimitExceeded above it
};

namespace impl {

/// The arrays of an ELL matrix (see EllMatrix).
template <class S, class O, class Layout, class D>
struct EllArrays {
  Kokkos::View<S**, Layout, D> values;
  Kokkos::View<O**, Layout, D> col_idx;
  Kokkos::View<O*, D> row_len;
};

/// ELL arrays of the first min(row length, width_cap) entries of every row of `a` (all of them
/// for width_cap < 0), built on a's device: width = the longest (capped) row; LayoutLeft arrays
/// get width columns of aligned_pitch(nrows) rows, LayoutRight arrays nrows rows of width
/// entries. Padding repeats the row's last column index (column 0 in empty and padding rows)
/// with a zero value. Throws PaddingLimitExceeded (from `where`) before allocating when the
/// padded arrays exceed the limit. O(pitch * width) work.
template <class Layout, class S, class O, class F, class D>
EllArrays<S, O, Layout, typename CsrMatrix<S, O, F, D>::device_type> csr_to_ell(
    const CsrMatrix<S, O, F, D>& a, std::int64_t width_cap, const PaddingLimit& limit,
    const char* where) {
  using dev = typename CsrMatrix<S, O, F, D>::device_type;
  using exec = typename dev::execution_space;
  check_limit_options(where, limit);
  EllArrays<S, O, Layout, dev> r;
  const auto full_len = row_lengths(a);
  const O nrows = a.nrows();
  const std::int64_t max_len = max_entry<exec>(full_len);
  const std::int64_t width = width_cap >= 0 && width_cap < max_len ? width_cap : max_len;
  const bool left = std::is_same<Layout, Kokkos::LayoutLeft>::value;
  const std::size_t rows = left ? aligned_pitch<S, O>(std::size_t(nrows)) : std::size_t(nrows);
  const double bytes =
      double(rows) * double(width) * double(sizeof(S) + sizeof(O)) + double(nrows) * sizeof(O);
  check_padding_limit(where,
                      str_cat("width ", width, " x ", left ? "pitch " : "rows ", rows, " = ",
                              std::uint64_t(double(rows) * double(width)), " entries"),
                      bytes, a.memory_bytes(), limit);
  r.values = Kokkos::View<S**, Layout, dev>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::ell::values"), rows,
      std::size_t(width));
  r.col_idx = Kokkos::View<O**, Layout, dev>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::ell::col_idx"), rows,
      std::size_t(width));
  r.row_len = full_len;
  const auto row_len = r.row_len;
  const auto values = r.values;
  const auto cols = r.col_idx;
  const auto row_map = a.row_map();
  const auto in_cols = a.col_idx();
  const auto in_vals = a.values();
  const O w = O(width);
  Kokkos::parallel_for(
      "spk::csr_to_ell", Range64<exec>(0, std::int64_t(rows)), KOKKOS_LAMBDA(const std::int64_t i) {
        O len = 0;
        F b = 0;
        if (i < std::int64_t(nrows)) {
          b = row_map(i);
          len = row_len(i) < w ? row_len(i) : w;
          row_len(i) = len;
        }
        const O pad_col = len > 0 ? in_cols(b + len - 1) : O(0);
        for (O k = 0; k < w; ++k) {
          const bool real = k < len;
          values(i, k) = real ? in_vals(b + k) : scalar_traits<S>::zero();
          cols(i, k) = real ? in_cols(b + k) : pad_col;
        }
      });
  return r;
}

}  // namespace impl

/// ELLPACK-R matrix: `values` and `col_idx` are 2-D views with one row per matrix row and
/// width() columns (the longest row), `row_lengths` holds each row's number of entries.
///
/// Layout: LayoutLeft (column-major; the GPU default) pads the leading dimension to pitch() >=
/// nrows so that each column starts on a 128-byte boundary; LayoutRight (row-major; the CPU
/// default) stores rows contiguously. Entries keep the order of the CSR input (duplicates and
/// explicit zeros included); padding repeats a valid column index with a zero value. Template
/// parameters as spk::CsrMatrix plus the layout; Offset is the row_map type of to_csr(). Copies
/// are shallow.
template <class Scalar, class Ordinal = int, class Offset = int,
          class Device = Kokkos::DefaultExecutionSpace,
          class Layout = impl::ell_default_layout_t<Device>>
class EllMatrix {
  static_assert(std::is_same<Layout, Kokkos::LayoutLeft>::value ||
                    std::is_same<Layout, Kokkos::LayoutRight>::value,
                "spk::EllMatrix: Layout must be Kokkos::LayoutLeft or Kokkos::LayoutRight");

 public:
  using value_type = Scalar;
  using ordinal_type = Ordinal;
  using size_type = Offset;
  using array_layout = Layout;
  using device_type = impl::device_t<Device>;
  using execution_space = typename device_type::execution_space;
  using memory_space = typename device_type::memory_space;
  using values_type = Kokkos::View<value_type**, Layout, device_type>;
  using index_type = Kokkos::View<ordinal_type**, Layout, device_type>;
  using row_length_type = Kokkos::View<ordinal_type*, device_type>;
  using csr_type = CsrMatrix<Scalar, Ordinal, Offset, Device>;
  static constexpr const char* name = "ell";

  /// An empty 0 x 0 matrix.
  EllMatrix() = default;

  /// Converts a CSR matrix on its device. Throws PaddingLimitExceeded when the padded arrays
  /// (pitch x width values and indices) would exceed options.limit. O(pitch * width) work.
  explicit EllMatrix(const csr_type& a, const EllOptions& options = {})
      : EllMatrix(a.nrows(), a.ncols(),
                  impl::csr_to_ell<Layout>(a, -1, options.limit, "spk::EllMatrix")) {}

  /// Wraps existing views (no copy): values and col_idx of equal extents with at least nrows
  /// rows (LayoutLeft: the pitch), row_len of nrows entries, each <= the width (extent(1)).
  EllMatrix(ordinal_type nrows, ordinal_type ncols, values_type values, index_type col_idx,
            row_length_type row_len)
      : nrows_(nrows), ncols_(ncols), values_(values), col_idx_(col_idx), row_len_(row_len) {
    require(nrows >= 0 && ncols >= 0, "spk::EllMatrix", "negative dimensions ", nrows, " x ",
            ncols);
    require(values_.extent(0) == col_idx_.extent(0) && values_.extent(1) == col_idx_.extent(1),
            "spk::EllMatrix", "values is ", values_.extent(0), " x ", values_.extent(1),
            " but col_idx is ", col_idx_.extent(0), " x ", col_idx_.extent(1));
    require(values_.extent(0) >= std::size_t(nrows), "spk::EllMatrix", "values has ",
            values_.extent(0), " rows, fewer than nrows = ", nrows);
    require(row_len_.extent(0) == std::size_t(nrows), "spk::EllMatrix", "row_len has ",
            row_len_.extent(0), " entries, expected nrows = ", nrows);
    nnz_ = impl::sum_entries<execution_space>(row_len_);
  }

  ordinal_type nrows() const { return nrows_; }
  ordinal_type ncols() const { return ncols_; }
  /// Stored entries (the sum of the row lengths; padding excluded).
  std::int64_t nnz() const { return nnz_; }
  /// Entries per padded row (the longest row).
  ordinal_type width() const { return ordinal_type(values_.extent(1)); }
  /// Leading dimension: rows of a column (LayoutLeft, >= nrows) or width (LayoutRight).
  std::size_t pitch() const {
    return std::is_same<Layout, Kokkos::LayoutLeft>::value ? values_.extent(0) : values_.extent(1);
  }
  /// Allocated value slots per stored entry (1 = no padding; 1 for an empty matrix).
  double padding_ratio() const {
    const double slots = double(values_.extent(0)) * double(values_.extent(1));
    return nnz_ > 0 ? slots / double(nnz_) : 1.0;
  }
  /// Mean entries per row (0 for no rows).
  double mean_row_length() const { return nrows_ > 0 ? double(nnz_) / double(nrows_) : 0.0; }

  const values_type& values() const { return values_; }
  const index_type& col_idx() const { return col_idx_; }
  const row_length_type& row_lengths() const { return row_len_; }

  /// Bytes held by the arrays (padding included).
  std::size_t memory_bytes() const {
    return values_.span() * sizeof(value_type) + col_idx_.span() * sizeof(ordinal_type) +
           row_len_.extent(0) * sizeof(ordinal_type);
  }

  /// The matrix in CSR on the same device: rows in order, each row's entries in stored order.
  /// O(nrows + nnz) work.
  csr_type to_csr() const {
    return impl::padded_rows_to_csr<csr_type>(
        nrows_, ncols_, values_.data(), col_idx_.data(), geometry(),
        Kokkos::View<const ordinal_type*, device_type>(row_len_));
  }

  /// Where entry k of row i lives (for the kernels).
  impl::EllRowGeometry<ordinal_type> geometry() const {
    impl::EllRowGeometry<ordinal_type> g;
    g.s0 = values_.stride(0);
    g.s1 = values_.stride(1);
    return g;
  }

 private:
  EllMatrix(ordinal_type nrows, ordinal_type ncols,
            const impl::EllArrays<value_type, ordinal_type, Layout, device_type>& arr)
      : EllMatrix(nrows, ncols, arr.values, arr.col_idx, arr.row_len) {}

  ordinal_type nrows_ = 0;
  ordinal_type ncols_ = 0;
  values_type values_;
  index_type col_idx_;
  row_length_type row_len_;
  std::int64_t nnz_ = 0;
};

/// Converts a CSR matrix to ELL (the layout defaults to the device's; see EllMatrix).
template <class Layout = void, class S, class O, class F, class D>
auto to_ell(const CsrMatrix<S, O, F, D>& a, const EllOptions& options = {}) {
  using L = std::conditional_t<std::is_void<Layout>::value, impl::ell_default_layout_t<D>, Layout>;
  return EllMatrix<S, O, F, D, L>(a, options);
}

/// The launch spmv would use for `a` (zero fields chosen from the mean row length and the
/// execution space).
template <class S, class O, class F, class D, class L>
EllSpmvParams resolve_params(const EllMatrix<S, O, F, D, L>& a, Mode /*mode*/,
                             const EllSpmvParams& params = {}) {
  using exec = typename EllMatrix<S, O, F, D, L>::execution_space;
  const impl::RowLaunch r = impl::resolve_row_launch(
      "spk::spmv (ELL)", params.threads_per_row, params.team_size, params.rows_per_team,
      a.mean_row_length(), impl::is_gpu_space<exec>());
  return EllSpmvParams{
      r.threads_per_row, r.team_size, r.rows_per_team,
      impl::resolve_in_flight("spk::spmv (ELL)", params.in_flight, impl::is_gpu_space<exec>())};
}

/// y = alpha * op(A) * x + beta * y with A in ELL; op = N, T or H (T and H scatter with atomics
/// after y = beta y). x and y are rank-1 views accessible from A's execution space, of lengths
/// ncols / nrows (N) or nrows / ncols (T, H). beta == 0 overwrites y (NaN in y does not
/// propagate). Runs asynchronously. Throws std::invalid_argument on a size mismatch or invalid
/// parameters. O(nnz + nrows) work; the padding is not read.
template <class S, class O, class F, class D, class L, class XView, class YView>
void spmv(Mode mode, typename EllMatrix<S, O, F, D, L>::value_type alpha,
          const EllMatrix<S, O, F, D, L>& a, const XView& x,
          typename EllMatrix<S, O, F, D, L>::value_type beta, const YView& y,
          const EllSpmvParams& params = {}) {
  using Matrix = EllMatrix<S, O, F, D, L>;
  using dev = typename Matrix::device_type;
  static_assert(impl::check_vector_types<S, typename Matrix::execution_space, XView, YView>(),
                "spk::spmv: invalid vector types");
  impl::check_vector_sizes("spk::spmv", mode != Mode::N, a.nrows(), a.ncols(), x, y,
                           to_string(mode));
  const EllSpmvParams p = resolve_params(a, mode, params);
  impl::padded_rows_spmv<dev>("spk::ell_spmv",
                              impl::RowLaunch{p.threads_per_row, p.team_size, p.rows_per_team,
                                              p.in_flight},
                              mode, alpha, a.values().data(), a.col_idx().data(), a.geometry(),
                              Kokkos::View<const O*, dev>(a.row_lengths()), a.nrows(), x, beta, y);
}

}  // namespace spk
