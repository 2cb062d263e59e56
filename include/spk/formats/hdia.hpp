// spk/formats/hdia.hpp: hacked DIA (HDIA, Barbieri et al. 2015): rows in hacks of hack_size
// rows (32 by default), each hack stored in DIA with only the diagonals that occur in it, so an
// entry far from the band pads one hack instead of the whole matrix.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <string>

#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/formats/padding_limit.hpp>
#include <spk/impl/format_common.hpp>
#include <spk/impl/format_convert.hpp>
#include <spk/impl/hdia_spmv.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/radix_sort.hpp>
#include <spk/impl/search.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {

/// Options of the conversion CSR -> HDIA.
struct HdiaOptions {
  int hack_size = 32;  ///< rows per hack: 16 or a positive multiple of 32 (a warp)
  PaddingLimit limit;  ///< the conversion throws PaddingLimitExceeded above it
};

namespace impl {

/// The arrays of an HDIA matrix (see HdiaMatrix).
template <class S, class O, class F, class D>
struct HdiaArrays {
  Kokkos::View<S*, D> values;
  Kokkos::View<O*, D> offsets;
  Kokkos::View<F*, D> hack_offsets;
  int hack_size = 32;
  std::int64_t max_hack_diags = 0;
};

/// HDIA arrays of `a`, built on its device. Every entry gets the key (hack, column - row); a
/// stable radix sort of the keys and a scan over their distinct values give each hack's
/// diagonals in ascending order (offsets) and where each hack's diagonals start (hack_offsets,
/// by binary search). Values are then added in one thread per row, each entry at diagonal d
/// (found by binary search among its hack's offsets) at d * hack_size + row % hack_size;
/// duplicates are summed in stored order. Throws PaddingLimitExceeded before allocating the
/// values. O(nnz) work per radix pass plus O(nnz log(diagonals per hack) + padded entries).
template <class S, class O, class F, class D>
HdiaArrays<S, O, F, typename CsrMatrix<S, O, F, D>::device_type> csr_to_hdia(
    const CsrMatrix<S, O, F, D>& a, const HdiaOptions& opt) {
  using dev = typename CsrMatrix<S, O, F, D>::device_type;
  using exec = typename dev::execution_space;
  const char* where = "spk::HdiaMatrix";
  require(opt.hack_size == 16 || (opt.hack_size > 0 && opt.hack_size % 32 == 0), where,
          "hack_size = ", opt.hack_size, " must be 16 or a positive multiple of 32");
  check_limit_options(where, opt.limit);
  HdiaArrays<S, O, F, dev> r;
  r.hack_size = opt.hack_size;
  const std::int64_t nrows = a.nrows(), ncols = a.ncols();
  const std::int64_t hs = opt.hack_size;
  const std::int64_t n_hacks = (nrows + hs - 1) / hs;
  const std::int64_t span = nrows > 0 && ncols > 0 ? nrows + ncols - 1 : 1;
  const std::int64_t nnz = std::int64_t(a.nnz());
  const auto row_map = a.row_map();
  const auto in_cols = a.col_idx();
  const auto in_vals = a.values();

  Kokkos::View<std::int64_t*, dev> keys(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hdia::keys"), std::size_t(nnz));
  Kokkos::parallel_for(
      "spk::hdia::keys", Range64<exec>(0, nrows), KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t base = (i / hs) * span + nrows - 1 - i;
        for (F k = row_map(i); k < row_map(i + 1); ++k) keys(k) = base + std::int64_t(in_cols(k));
      });
  const std::int64_t max_key = n_hacks * span - 1;
  stable_radix_sort<exec>(keys, bit_width(std::uint64_t(max_key > 0 ? max_key : 0)),
                          RadixSortParams{});
  std::int64_t total = 0;
  Kokkos::parallel_reduce(
      "spk::hdia::count", Range64<exec>(0, nnz),
      KOKKOS_LAMBDA(const std::int64_t k, std::int64_t& n) {
        n += k == 0 || keys(k) != keys(k - 1) ? 1 : 0;
      },
      total);
  const double bytes = double(total) * double(hs) * sizeof(S) + double(total) * sizeof(O) +
                       double(n_hacks + 1) * sizeof(F);
  check_padding_limit(where,
                      str_cat(n_hacks, " hacks of ", hs, " rows, ", total, " hack diagonals = ",
                              std::uint64_t(double(total) * double(hs)), " entries"),
                      bytes, a.memory_bytes(), opt.limit);

  Kokkos::View<std::int64_t*, dev> ukeys(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hdia::diagonal_keys"),
      std::size_t(total));
  Kokkos::parallel_scan(
      "spk::hdia::unique", Range64<exec>(0, nnz),
      KOKKOS_LAMBDA(const std::int64_t k, std::int64_t& n, const bool final) {
        if (k == 0 || keys(k) != keys(k - 1)) {
          if (final) ukeys(n) = keys(k);
          n += 1;
        }
      });
  r.offsets = Kokkos::View<O*, dev>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hdia::offsets"), std::size_t(total));
  r.hack_offsets = Kokkos::View<F*, dev>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hdia::hack_offsets"),
      std::size_t(n_hacks) + 1);
  const auto offsets = r.offsets;
  const auto hack_offsets = r.hack_offsets;
  Kokkos::parallel_for(
      "spk::hdia::offsets", Range64<exec>(0, total),
      KOKKOS_LAMBDA(const std::int64_t u) { offsets(u) = O(ukeys(u) % span - (nrows - 1)); });
  Kokkos::parallel_for(
      "spk::hdia::hack_offsets", Range64<exec>(0, n_hacks + 1),
      KOKKOS_LAMBDA(const std::int64_t h) {
        hack_offsets(h) = F(impl::lower_bound(ukeys, std::int64_t(0), total, h * span));
      });
  std::int64_t max_diags = 0;
  Kokkos::parallel_reduce(
      "spk::hdia::max_diags", Range64<exec>(0, n_hacks),
      KOKKOS_LAMBDA(const std::int64_t h, std::int64_t& m) {
        const std::int64_t n = std::int64_t(hack_offsets(h + 1) - hack_offsets(h));
        if (n > m) m = n;
      },
      Kokkos::Max<std::int64_t>(max_diags));
  r.max_hack_diags = n_hacks > 0 ? max_diags : 0;

  r.values = Kokkos::View<S*, dev>("spk::hdia::values", std::size_t(total * hs));
  const auto values = r.values;
  Kokkos::parallel_for(
      "spk::csr_to_hdia", Range64<exec>(0, nrows), KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t h = i / hs;
        const std::int64_t lo = std::int64_t(hack_offsets(h));
        const std::int64_t hi = std::int64_t(hack_offsets(h + 1));
        for (F k = row_map(i); k < row_map(i + 1); ++k) {
          const O off = O(std::int64_t(in_cols(k)) - i);
          const std::int64_t d = impl::lower_bound(offsets, lo, hi, off);
          const std::size_t e = std::size_t(d * hs + (i - h * hs));
          values(e) = values(e) + in_vals(k);
        }
      });
  return r;
}

/// CSR of an HDIA matrix: per row, the nonzero values in its hack's diagonal order (ascending
/// columns).
template <class Csr, class S, class O, class F, class D>
Csr hdia_to_csr(std::int64_t nrows, std::int64_t ncols, std::int64_t hs,
                const Kokkos::View<const S*, D>& values, const Kokkos::View<const O*, D>& offsets,
                const Kokkos::View<const F*, D>& hack_offsets) {
  using RF = typename Csr::size_type;
  using exec = typename Csr::execution_space;
  Kokkos::View<RF*, typename Csr::device_type> row_map("spk::to_csr::row_map",
                                                       std::size_t(nrows) + 1);
  Kokkos::parallel_for(
      "spk::hdia_to_csr::count", Range64<exec>(0, nrows), KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t h = i / hs;
        RF n = 0;
        for (std::int64_t d = hack_offsets(h); d < std::int64_t(hack_offsets(h + 1)); ++d) {
          const std::int64_t j = i + offsets(d);
          const S v = values(std::size_t(d * hs + (i - h * hs)));
          if (j >= 0 && j < ncols && !(v == scalar_traits<S>::zero())) ++n;
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
      "spk::hdia_to_csr::fill", Range64<exec>(0, nrows), KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t h = i / hs;
        RF dst = row_map(i);
        for (std::int64_t d = hack_offsets(h); d < std::int64_t(hack_offsets(h + 1)); ++d) {
          const std::int64_t j = i + offsets(d);
          const S v = values(std::size_t(d * hs + (i - h * hs)));
          if (j >= 0 && j < ncols && !(v == scalar_traits<S>::zero())) {
            out_cols(dst) = O(j);
            out_vals(dst) = v;
            ++dst;
          }
        }
      });
  return b;
}

}  // namespace impl

/// Hacked DIA matrix. Rows are cut into hacks of hack_size() rows; hack h owns the diagonals
/// offsets(hack_offsets(h)) .. offsets(hack_offsets(h + 1) - 1) (column - row, ascending,
/// only those with an entry in the hack), and the value of its row r on its diagonal d (d
/// counting all hacks' diagonals) is values(d * hack_size + r): each hack is a hack_size x
/// n_diags(h) column-major block. Duplicate entries of the input are summed; zeros are not
/// distinguished from padding (to_csr() returns the nonzeros). Template parameters as
/// spk::CsrMatrix; Offset also types hack_offsets. Copies are shallow.
template <class Scalar, class Ordinal = int, class Offset = int,
          class Device = Kokkos::DefaultExecutionSpace>
class HdiaMatrix {
 public:
  using value_type = Scalar;
  using ordinal_type = Ordinal;
  using size_type = Offset;
  using device_type = impl::device_t<Device>;
  using execution_space = typename device_type::execution_space;
  using memory_space = typename device_type::memory_space;
  using values_type = Kokkos::View<value_type*, device_type>;
  using offsets_type = Kokkos::View<ordinal_type*, device_type>;
  using hack_offsets_type = Kokkos::View<size_type*, device_type>;
  using csr_type = CsrMatrix<Scalar, Ordinal, Offset, Device>;
  static constexpr const char* name = "hdia";

  /// An empty 0 x 0 matrix.
  HdiaMatrix() = default;

  /// Converts a CSR matrix on its device (see HdiaOptions). Throws std::invalid_argument for an
  /// invalid hack size and PaddingLimitExceeded when the hacks' diagonals would exceed
  /// options.limit.
  explicit HdiaMatrix(const csr_type& a, const HdiaOptions& options = {})
      : HdiaMatrix(a.nrows(), a.ncols(), std::int64_t(a.nnz()), impl::csr_to_hdia(a, options)) {}

  ordinal_type nrows() const { return nrows_; }
  ordinal_type ncols() const { return ncols_; }
  /// Entries of the CSR input (duplicates counted).
  std::int64_t nnz() const { return nnz_; }
  int hack_size() const { return hack_size_; }
  std::int64_t n_hacks() const {
    return hack_offsets_.extent(0) > 0 ? std::int64_t(hack_offsets_.extent(0)) - 1 : 0;
  }
  /// Diagonals summed over the hacks (the length of offsets()).
  std::int64_t n_diags() const { return std::int64_t(offsets_.extent(0)); }
  /// Diagonals of the hack with the most.
  std::int64_t max_hack_diags() const { return max_hack_diags_; }
  /// Mean diagonals per hack.
  double mean_hack_diags() const {
    return n_hacks() > 0 ? double(n_diags()) / double(n_hacks()) : 0.0;
  }
  /// Allocated value slots per input entry (1 for an empty matrix).
  double padding_ratio() const { return nnz_ > 0 ? double(values_.extent(0)) / double(nnz_) : 1.0; }

  const values_type& values() const { return values_; }
  const offsets_type& offsets() const { return offsets_; }
  const hack_offsets_type& hack_offsets() const { return hack_offsets_; }

  /// Bytes held by the arrays (padding included).
  std::size_t memory_bytes() const {
    return values_.extent(0) * sizeof(value_type) + offsets_.extent(0) * sizeof(ordinal_type) +
           hack_offsets_.extent(0) * sizeof(size_type);
  }

  /// The nonzeros in CSR on the same device, each row sorted by column.
  /// O(nrows * diagonals per hack).
  csr_type to_csr() const {
    return impl::hdia_to_csr<csr_type>(nrows_, ncols_, hack_size_,
                                       Kokkos::View<const value_type*, device_type>(values_),
                                       Kokkos::View<const ordinal_type*, device_type>(offsets_),
                                       Kokkos::View<const size_type*, device_type>(hack_offsets_));
  }

 private:
  HdiaMatrix(ordinal_type nrows, ordinal_type ncols, std::int64_t nnz,
             const impl::HdiaArrays<value_type, ordinal_type, size_type, device_type>& arr)
      : nrows_(nrows),
        ncols_(ncols),
        values_(arr.values),
        offsets_(arr.offsets),
        hack_offsets_(arr.hack_offsets),
        hack_size_(arr.hack_size),
        max_hack_diags_(arr.max_hack_diags),
        nnz_(nnz) {}

  ordinal_type nrows_ = 0;
  ordinal_type ncols_ = 0;
  values_type values_;
  offsets_type offsets_;
  hack_offsets_type hack_offsets_;
  int hack_size_ = 32;
  std::int64_t max_hack_diags_ = 0;
  std::int64_t nnz_ = 0;
};

/// The launch spmv would use for `a` (see impl::resolve_hdia_launch).
template <class S, class O, class F, class D>
HdiaSpmvParams resolve_params(const HdiaMatrix<S, O, F, D>& a, Mode /*mode*/,
                              const HdiaSpmvParams& params = {}) {
  using exec = typename HdiaMatrix<S, O, F, D>::execution_space;
  return impl::resolve_hdia_launch(params, a.hack_size(), a.max_hack_diags(), a.mean_hack_diags(),
                                   impl::is_gpu_space<exec>());
}

/// y = alpha * op(A) * x + beta * y with A in HDIA; op = N, T or H (T and H scatter with
/// atomics after y = beta y). Each team keeps its hacks' diagonal offsets in team scratch
/// memory (a team with more than params.scratch_diags reads them from global memory). Vectors,
/// beta == 0 and errors as the ELL overload; also throws when the scratch memory asked for
/// exceeds the execution space's. O(nrows * diagonals per hack) work.
template <class S, class O, class F, class D, class XView, class YView>
void spmv(Mode mode, typename HdiaMatrix<S, O, F, D>::value_type alpha,
          const HdiaMatrix<S, O, F, D>& a, const XView& x,
          typename HdiaMatrix<S, O, F, D>::value_type beta, const YView& y,
          const HdiaSpmvParams& params = {}) {
  using Matrix = HdiaMatrix<S, O, F, D>;
  using dev = typename Matrix::device_type;
  static_assert(impl::check_vector_types<S, typename Matrix::execution_space, XView, YView>(),
                "spk::spmv: invalid vector types");
  impl::check_vector_sizes("spk::spmv", mode != Mode::N, a.nrows(), a.ncols(), x, y,
                           to_string(mode));
  impl::hdia_spmv<dev>(
      resolve_params(a, mode, params), mode, alpha, Kokkos::View<const S*, dev>(a.values()),
      Kokkos::View<const O*, dev>(a.offsets()), Kokkos::View<const F*, dev>(a.hack_offsets()),
      a.hack_size(), a.nrows(), a.ncols(), x, beta, y);
}

}  // namespace spk
