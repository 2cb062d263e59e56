// spk/formats/dia.hpp: DIA (storage by diagonals): every diagonal holding an entry is stored in
// full (one value per row, zeros where the matrix has none) with its offset (column - row), so
// no index is stored per entry. Suited to stencil and banded matrices; a few scattered entries
// add whole diagonals, which the padding limit catches.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <string>

#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/formats/padding_limit.hpp>
#include <spk/impl/dia_spmv.hpp>
#include <spk/impl/format_common.hpp>
#include <spk/impl/format_convert.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {

/// Options of the conversion CSR -> DIA.
struct DiaOptions {
  PaddingLimit limit;  ///< the conversion throws PaddingLimitExceeded above it
};

namespace impl {

/// The arrays of a DIA matrix (see DiaMatrix).
template <class S, class O, class D>
struct DiaArrays {
  Kokkos::View<S**, Kokkos::LayoutLeft, D> values;
  Kokkos::View<O*, D> offsets;
};

/// Marks flags(col - row + nrows - 1) = 1 for every entry of `a` (one thread per row; a flag
/// already set is not written again, so the main diagonal costs no atomic contention).
template <class ExecSpace, class Csr, class Flags>
void mark_diagonals(const Csr& a, const Flags& flags) {
  using F = typename Csr::size_type;
  const auto row_map = a.row_map();
  const auto cols = a.col_idx();
  const std::int64_t shift = std::int64_t(a.nrows()) - 1;
  Kokkos::parallel_for(
      "spk::dia::mark", Range64<ExecSpace>(0, std::int64_t(a.nrows())),
      KOKKOS_LAMBDA(const std::int64_t i) {
        for (F k = row_map(i); k < row_map(i + 1); ++k) {
          const std::int64_t d = std::int64_t(cols(k)) - i + shift;
          if (flags(d) == 0) Kokkos::atomic_exchange(&flags(d), 1);
        }
      });
}

/// DIA arrays of `a`, built on its device: occupied diagonals flagged, numbered by an exclusive
/// scan (so offsets come out ascending), then values added in one thread per row (duplicate
/// entries summed in stored order). The value array is column-major: n_diags columns of
/// aligned_pitch(nrows) rows, row i of column d holding A(i, i + offset_d). Throws
/// PaddingLimitExceeded before allocating it. O(nrows + ncols + nnz + pitch * n_diags) work.
template <class S, class O, class F, class D>
DiaArrays<S, O, typename CsrMatrix<S, O, F, D>::device_type> csr_to_dia(
    const CsrMatrix<S, O, F, D>& a, const DiaOptions& opt) {
  using dev = typename CsrMatrix<S, O, F, D>::device_type;
  using exec = typename dev::execution_space;
  const char* where = "spk::DiaMatrix";
  check_limit_options(where, opt.limit);
  DiaArrays<S, O, dev> r;
  const std::int64_t nrows = a.nrows(), ncols = a.ncols();
  const std::int64_t span = nrows > 0 && ncols > 0 ? nrows + ncols - 1 : 0;
  Kokkos::View<int*, dev> flags("spk::dia::flags", std::size_t(span));
  if (a.nnz() > 0) mark_diagonals<exec>(a, flags);
  Kokkos::View<std::int64_t*, dev> slot(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::dia::slot"), std::size_t(span));
  std::int64_t n_diags = 0;
  Kokkos::parallel_scan(
      "spk::dia::number", Range64<exec>(0, span),
      KOKKOS_LAMBDA(const std::int64_t d, std::int64_t& sum, const bool final) {
        if (final) slot(d) = sum;
        sum += flags(d);
      },
      n_diags);
  const std::size_t pitch = aligned_pitch<S, S>(std::size_t(nrows));
  const double bytes = double(pitch) * double(n_diags) * sizeof(S) + double(n_diags) * sizeof(O);
  check_padding_limit(where,
                      str_cat(n_diags, " diagonals x pitch ", pitch, " = ",
                              std::uint64_t(double(pitch) * double(n_diags)), " entries"),
                      bytes, a.memory_bytes(), opt.limit);
  r.offsets = Kokkos::View<O*, dev>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::dia::offsets"), std::size_t(n_diags));
  const auto offsets = r.offsets;
  Kokkos::parallel_for(
      "spk::dia::offsets", Range64<exec>(0, span), KOKKOS_LAMBDA(const std::int64_t d) {
        if (flags(d)) offsets(slot(d)) = O(d - (nrows - 1));
      });
  r.values =
      Kokkos::View<S**, Kokkos::LayoutLeft, dev>("spk::dia::values", pitch, std::size_t(n_diags));
  const auto values = r.values;
  const auto row_map = a.row_map();
  const auto in_cols = a.col_idx();
  const auto in_vals = a.values();
  Kokkos::parallel_for(
      "spk::csr_to_dia", Range64<exec>(0, nrows), KOKKOS_LAMBDA(const std::int64_t i) {
        for (F k = row_map(i); k < row_map(i + 1); ++k) {
          const std::int64_t s = slot(std::int64_t(in_cols(k)) - i + nrows - 1);
          values(i, s) = values(i, s) + in_vals(k);
        }
      });
  return r;
}

/// CSR of a DIA matrix: per row, the nonzero values in diagonal order (ascending columns).
template <class Csr, class S, class O, class D>
Csr dia_to_csr(std::int64_t nrows, std::int64_t ncols,
               const Kokkos::View<const S**, Kokkos::LayoutLeft, D>& values,
               const Kokkos::View<const O*, D>& offsets) {
  using F = typename Csr::size_type;
  using exec = typename Csr::execution_space;
  const O ndiags = O(offsets.extent(0));
  Kokkos::View<F*, typename Csr::device_type> row_map("spk::to_csr::row_map",
                                                      std::size_t(nrows) + 1);
  Kokkos::parallel_for(
      "spk::dia_to_csr::count", Range64<exec>(0, nrows), KOKKOS_LAMBDA(const std::int64_t i) {
        F n = 0;
        for (O d = 0; d < ndiags; ++d) {
          const std::int64_t j = i + offsets(d);
          if (j >= 0 && j < ncols && !(values(i, d) == scalar_traits<S>::zero())) ++n;
        }
        row_map(i + 1) = n;
      });
  const std::int64_t nnz = impl::row_lengths_to_offsets<exec>(row_map);
  Csr b(O(nrows), O(ncols), typename Csr::row_map_type(row_map),
        typename Csr::index_type(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::csr::col_idx"), std::size_t(nnz)),
        typename Csr::values_type(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::csr::values"), std::size_t(nnz)));
  const auto out_cols = b.col_idx();
  const auto out_vals = b.values();
  Kokkos::parallel_for(
      "spk::dia_to_csr::fill", Range64<exec>(0, nrows), KOKKOS_LAMBDA(const std::int64_t i) {
        F dst = row_map(i);
        for (O d = 0; d < ndiags; ++d) {
          const std::int64_t j = i + offsets(d);
          if (j >= 0 && j < ncols && !(values(i, d) == scalar_traits<S>::zero())) {
            out_cols(dst) = O(j);
            out_vals(dst) = values(i, d);
            ++dst;
          }
        }
      });
  return b;
}

}  // namespace impl

/// DIA matrix: `offsets` (n_diags, ascending) holds column - row of every diagonal with an
/// entry; `values` is column-major, n_diags columns of pitch() >= nrows rows (each column starts
/// on a 128-byte boundary), row i of column d holding A(i, i + offsets(d)) or zero. Duplicate
/// entries of the input are summed; zeros are not distinguished from padding (to_csr() returns
/// the nonzeros). Template parameters as spk::CsrMatrix; Offset is the row_map type of
/// to_csr(). Copies are shallow.
template <class Scalar, class Ordinal = int, class Offset = int,
          class Device = Kokkos::DefaultExecutionSpace>
class DiaMatrix {
 public:
  using value_type = Scalar;
  using ordinal_type = Ordinal;
  using size_type = Offset;
  using device_type = impl::device_t<Device>;
  using execution_space = typename device_type::execution_space;
  using memory_space = typename device_type::memory_space;
  using values_type = Kokkos::View<value_type**, Kokkos::LayoutLeft, device_type>;
  using offsets_type = Kokkos::View<ordinal_type*, device_type>;
  using csr_type = CsrMatrix<Scalar, Ordinal, Offset, Device>;
  static constexpr const char* name = "dia";

  /// An empty 0 x 0 matrix.
  DiaMatrix() = default;

  /// Converts a CSR matrix on its device. Throws PaddingLimitExceeded when the diagonals
  /// (n_diags x pitch values) would exceed options.limit.
  explicit DiaMatrix(const csr_type& a, const DiaOptions& options = {})
      : DiaMatrix(a.nrows(), a.ncols(), std::int64_t(a.nnz()), impl::csr_to_dia(a, options)) {}

  ordinal_type nrows() const { return nrows_; }
  ordinal_type ncols() const { return ncols_; }
  /// Entries of the CSR input (duplicates counted).
  std::int64_t nnz() const { return nnz_; }
  /// Number of stored diagonals.
  ordinal_type n_diags() const { return ordinal_type(offsets_.extent(0)); }
  std::size_t pitch() const { return values_.extent(0); }
  /// Allocated value slots per input entry (1 for an empty matrix).
  double padding_ratio() const { return nnz_ > 0 ? double(values_.span()) / double(nnz_) : 1.0; }

  const values_type& values() const { return values_; }
  const offsets_type& offsets() const { return offsets_; }

  /// Bytes held by the arrays (padding included).
  std::size_t memory_bytes() const {
    return values_.span() * sizeof(value_type) + offsets_.extent(0) * sizeof(ordinal_type);
  }

  /// The nonzeros in CSR on the same device, each row sorted by column. O(nrows * n_diags).
  csr_type to_csr() const {
    return impl::dia_to_csr<csr_type>(
        nrows_, ncols_, Kokkos::View<const value_type**, Kokkos::LayoutLeft, device_type>(values_),
        Kokkos::View<const ordinal_type*, device_type>(offsets_));
  }

 private:
  DiaMatrix(ordinal_type nrows, ordinal_type ncols, std::int64_t nnz,
            const impl::DiaArrays<value_type, ordinal_type, device_type>& arr)
      : nrows_(nrows), ncols_(ncols), values_(arr.values), offsets_(arr.offsets), nnz_(nnz) {}

  ordinal_type nrows_ = 0;
  ordinal_type ncols_ = 0;
  values_type values_;
  offsets_type offsets_;
  std::int64_t nnz_ = 0;
};

/// The launch spmv would use for `a` (zero fields chosen from the number of diagonals and the
/// execution space).
template <class S, class O, class F, class D>
DiaSpmvParams resolve_params(const DiaMatrix<S, O, F, D>& a, Mode /*mode*/,
                             const DiaSpmvParams& params = {}) {
  using exec = typename DiaMatrix<S, O, F, D>::execution_space;
  const impl::RowLaunch r = impl::resolve_row_launch(
      "spk::spmv (DIA)", params.threads_per_row, params.team_size, params.rows_per_team,
      double(a.n_diags()), impl::is_gpu_space<exec>());
  return DiaSpmvParams{r.threads_per_row, r.team_size, r.rows_per_team};
}

/// y = alpha * op(A) * x + beta * y with A in DIA; op = N, T or H (T and H run the gather along
/// negated offsets, without atomics). Vectors, beta == 0 and errors as the ELL overload.
/// O((nrows or ncols) * n_diags) work.
template <class S, class O, class F, class D, class XView, class YView>
void spmv(Mode mode, typename DiaMatrix<S, O, F, D>::value_type alpha,
          const DiaMatrix<S, O, F, D>& a, const XView& x,
          typename DiaMatrix<S, O, F, D>::value_type beta, const YView& y,
          const DiaSpmvParams& params = {}) {
  using Matrix = DiaMatrix<S, O, F, D>;
  using dev = typename Matrix::device_type;
  static_assert(impl::check_vector_types<S, typename Matrix::execution_space, XView, YView>(),
                "spk::spmv: invalid vector types");
  impl::check_vector_sizes("spk::spmv", mode != Mode::N, a.nrows(), a.ncols(), x, y,
                           to_string(mode));
  const DiaSpmvParams p = resolve_params(a, mode, params);
  impl::dia_spmv<dev>(impl::RowLaunch{p.threads_per_row, p.team_size, p.rows_per_team}, mode, alpha,
                      Kokkos::View<const S**, Kokkos::LayoutLeft, dev>(a.values()),
                      Kokkos::View<const O*, dev>(a.offsets()), a.nrows(), a.ncols(), x, beta, y);
}

}  // namespace spk
