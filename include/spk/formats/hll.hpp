// spk/formats/hll.hpp: hacked ELLPACK (HLL, Barbieri et al. 2015; sliced ELL): rows in groups
// ("hacks") of hack_size rows, each hack stored ELL-style (column-major) with its own width, so
// one long row pads only its own hack. Rows may be sorted by length first (globally or within
// windows, or automatically when unsorted padding would be large), with the permutation applied
// inside the kernel. Hacks much wider than the mean are split into work items for SpMV.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/formats/padding_limit.hpp>
#include <spk/impl/ell_spmv.hpp>
#include <spk/impl/format_common.hpp>
#include <spk/impl/format_convert.hpp>
#include <spk/impl/hll_spmv.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/radix_sort.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {

/// Order of the rows in an HLL matrix.
enum class HllSort {
  none,      ///< the matrix's order (no permutation stored)
  global,    ///< all rows by decreasing length (stable): long rows share hacks (JAD-like)
  window,    ///< by decreasing length within windows of sort_window rows (x locality kept)
  automatic  ///< window when the unsorted padding ratio exceeds HllOptions::auto_sort_padding,
             ///< else none (regular matrices keep the unpermuted layout)
};

inline const char* to_string(HllSort s) {
  return s == HllSort::none     ? "none"
         : s == HllSort::global ? "global"
         : s == HllSort::window ? "window"
                                : "automatic";
}

/// Options of the conversion CSR -> HLL.
struct HllOptions {
  int hack_size = 32;  ///< rows per hack: 16 or a positive multiple of 32 (a warp)
  HllSort sort = HllSort::automatic;
  int sort_window = 0;  ///< HllSort::window / automatic: rows per window, a multiple of
                        ///< hack_size; 0 = 32 hacks
  /// HllSort::automatic sorts within windows when the unsorted hacks would hold more than this
  /// many value slots per stored entry in the matrix's rows (the last hack's missing rows, which
  /// sorting cannot remove, not counted).
  double auto_sort_padding = 1.1;
  /// Columns of a hack that one SpMV work item takes (see HllMatrix); hacks wider than this are
  /// split. 0 = choose: max(64, 4 * the mean hack width rounded up).
  int split_width = 0;
  PaddingLimit limit;  ///< the conversion throws PaddingLimitExceeded above it
};

namespace impl {

/// The arrays of an HLL matrix (see HllMatrix).
template <class S, class O, class F, class D>
struct HllArrays {
  Kokkos::View<S*, D> values;
  Kokkos::View<O*, D> col_idx;
  Kokkos::View<F*, D> hack_offsets;
  Kokkos::View<O*, D> row_len;    // by position
  Kokkos::View<O*, D> perm;       // position -> row; empty when not sorted
  Kokkos::View<O*, D> item_hack;  // wide hacks' work items: hack, first column
  Kokkos::View<O*, D> item_col;
  int hack_size = 32;
  std::int64_t max_width = 0;
  std::int64_t split_width = 0;
  HllSort sort = HllSort::none;  // as applied: none, global or window
};

/// Throws std::invalid_argument unless the options are valid; returns the window (rows) of
/// HllSort::window (0 otherwise).
inline std::int64_t check_hll_options(const HllOptions& o, const char* where) {
  require(o.hack_size == 16 || (o.hack_size > 0 && o.hack_size % 32 == 0), where,
          "hack_size = ", o.hack_size, " must be 16 or a positive multiple of 32");
  check_limit_options(where, o.limit);
  require(o.split_width >= 0, where, "split_width = ", o.split_width, " must be >= 0");
  require(o.auto_sort_padding >= 1.0, where, "auto_sort_padding = ", o.auto_sort_padding,
          " must be >= 1");
  if (o.sort != HllSort::window && o.sort != HllSort::automatic) return 0;
  require(o.sort_window >= 0 && o.sort_window % o.hack_size == 0, where,
          "sort_window = ", o.sort_window, " must be 0 (choose) or a positive multiple of ",
          "hack_size = ", o.hack_size);
  return o.sort_window > 0 ? o.sort_window : 32 * std::int64_t(o.hack_size);
}

/// Widths (longest row) of the hacks of hack_size positions of the row lengths `len` (by
/// position) into `widths`; returns the padded entries, sum of width * hack_size. With
/// `row_slots`, also the slots of the real rows (sum of width * rows in the hack): the padding
/// that sorting can remove, unlike the last hack's missing rows.
template <class ExecSpace, class O, class D>
std::int64_t hll_hack_widths(const Kokkos::View<O*, D>& len, const O hs,
                             Kokkos::View<std::int64_t*, D>& widths,
                             std::int64_t* row_slots = nullptr) {
  const std::int64_t nrows = std::int64_t(len.extent(0));
  const std::int64_t n_hacks = (nrows + hs - 1) / hs;
  widths = Kokkos::View<std::int64_t*, D>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::widths"), std::size_t(n_hacks));
  const auto w = widths;
  std::int64_t total = 0;
  Kokkos::parallel_reduce(
      "spk::hll::widths", Range64<ExecSpace>(0, n_hacks),
      KOKKOS_LAMBDA(const std::int64_t h, std::int64_t& sum) {
        const std::int64_t end = (h + 1) * hs < nrows ? (h + 1) * hs : nrows;
        std::int64_t m = 0;
        for (std::int64_t p = h * hs; p < end; ++p)
          m = std::int64_t(len(p)) > m ? std::int64_t(len(p)) : m;
        w(h) = m;
        sum += m * hs;
      },
      total);
  if (row_slots != nullptr) {
    const std::int64_t last_rows = nrows - (n_hacks - 1) * hs;
    std::int64_t last_width = 0;
    if (n_hacks > 0) Kokkos::deep_copy(last_width, Kokkos::subview(widths, n_hacks - 1));
    *row_slots = total - last_width * (hs - last_rows);
  }
  return total;
}

/// HLL arrays of `a`, built on its device: row lengths; for HllSort::automatic the unsorted
/// padding, which picks none or window; the permutation (a stable radix sort of the rows by
/// decreasing length, keyed by window for HllSort::window); each hack's width (its longest row)
/// and the exclusive scan of width * hack_size into hack_offsets; the wide hacks' work items;
/// then the fill, one thread per position, padding with the row's last column (column 0 for
/// empty and padding rows) and zero values. Throws PaddingLimitExceeded before allocating the
/// padded arrays. O(nrows * passes + padded entries) work.
template <class S, class O, class F, class D>
HllArrays<S, O, F, typename CsrMatrix<S, O, F, D>::device_type> csr_to_hll(
    const CsrMatrix<S, O, F, D>& a, const HllOptions& opt) {
  using dev = typename CsrMatrix<S, O, F, D>::device_type;
  using exec = typename dev::execution_space;
  const char* where = "spk::HllMatrix";
  const std::int64_t window = check_hll_options(opt, where);
  HllArrays<S, O, F, dev> r;
  r.hack_size = opt.hack_size;
  const O nrows = a.nrows();
  const O hs = O(opt.hack_size);
  const auto lens = row_lengths(a);
  const std::int64_t max_len = max_entry<exec>(lens);

  Kokkos::View<std::int64_t*, dev> widths;
  std::int64_t total = -1;
  HllSort sort = nrows > 1 ? opt.sort : HllSort::none;
  if (sort == HllSort::automatic) {
    std::int64_t row_slots = 0;
    total = hll_hack_widths<exec>(lens, hs, widths, &row_slots);
    sort = double(row_slots) > opt.auto_sort_padding * double(a.nnz()) ? HllSort::window
                                                                       : HllSort::none;
  }
  r.sort = sort;
  Kokkos::View<O*, dev> slen = lens;  // row length by position
  if (sort != HllSort::none) {
    Kokkos::View<std::int64_t*, dev> keys(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::keys"), std::size_t(nrows));
    Kokkos::View<O*, dev> perm(Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::perm"),
                               std::size_t(nrows));
    const std::int64_t span = max_len + 1;
    const std::int64_t w = sort == HllSort::window ? window : 0;
    Kokkos::parallel_for(
        "spk::hll::sort_keys", Range64<exec>(0, std::int64_t(nrows)),
        KOKKOS_LAMBDA(const std::int64_t i) {
          keys(i) = (w > 0 ? (i / w) * span : 0) + (max_len - std::int64_t(lens(i)));
          perm(i) = O(i);
        });
    const std::int64_t max_key = (w > 0 ? (std::int64_t(nrows) - 1) / w * span : 0) + max_len;
    stable_radix_sort<exec>(keys, perm, bit_width(std::uint64_t(max_key)), RadixSortParams{});
    slen = Kokkos::View<O*, dev>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::len"),
                                 std::size_t(nrows));
    const auto sorted_len = slen;
    Kokkos::parallel_for(
        "spk::hll::permute_lengths", Range64<exec>(0, std::int64_t(nrows)),
        KOKKOS_LAMBDA(const std::int64_t p) { sorted_len(p) = lens(perm(p)); });
    r.perm = perm;
    total = -1;
  }
  r.row_len = slen;
  if (total < 0) total = hll_hack_widths<exec>(slen, hs, widths);

  const std::int64_t n_hacks = std::int64_t(widths.extent(0));
  r.max_width = max_entry<exec>(widths);
  const std::int64_t mean_width = n_hacks > 0 ? (total / hs + n_hacks - 1) / n_hacks : 0;
  r.split_width = opt.split_width > 0 ? std::int64_t(opt.split_width)
                                      : std::max<std::int64_t>(64, 4 * mean_width);
  if (r.split_width >= r.max_width) r.split_width = std::max<std::int64_t>(r.max_width, 1);

  // Work items: columns [split, 2 split), [2 split, 3 split), ... of each hack wider than split
  // (its first split columns go to the padded-row kernel).
  const std::int64_t split = r.split_width;
  Kokkos::View<std::int64_t*, dev> item_start(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::item_start"),
      std::size_t(n_hacks) + 1);
  std::int64_t n_items = 0;
  Kokkos::parallel_scan(
      "spk::hll::item_start", Range64<exec>(0, n_hacks + 1),
      KOKKOS_LAMBDA(const std::int64_t h, std::int64_t& sum, const bool final) {
        if (final) item_start(h) = sum;
        if (h < n_hacks) sum += widths(h) > split ? (widths(h) - 1) / split : 0;
      },
      n_items);
  r.item_hack = Kokkos::View<O*, dev>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::item_hack"), std::size_t(n_items));
  r.item_col = Kokkos::View<O*, dev>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::item_col"), std::size_t(n_items));
  if (n_items > 0) {
    const auto item_hack = r.item_hack;
    const auto item_col = r.item_col;
    Kokkos::parallel_for(
        "spk::hll::items", Range64<exec>(0, n_hacks), KOKKOS_LAMBDA(const std::int64_t h) {
          for (std::int64_t j = item_start(h); j < item_start(h + 1); ++j) {
            item_hack(j) = O(h);
            item_col(j) = O((j - item_start(h) + 1) * split);
          }
        });
  }

  const double bytes = double(total) * double(sizeof(S) + sizeof(O)) +
                       double(nrows) * sizeof(O) * (r.perm.extent(0) > 0 ? 2 : 1) +
                       double(n_hacks + 1) * sizeof(F) + double(n_items) * 2 * sizeof(O);
  check_padding_limit(where,
                      str_cat(n_hacks, " hacks of ", hs, " rows, widths up to ", r.max_width, " = ",
                              total, " entries"),
                      bytes, a.memory_bytes(), opt.limit);
  check_fits<F>(where, "padded entries", double(total));

  r.hack_offsets = Kokkos::View<F*, dev>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::hack_offsets"),
      std::size_t(n_hacks) + 1);
  const auto hack_offsets = r.hack_offsets;
  Kokkos::parallel_scan(
      "spk::hll::hack_offsets", Range64<exec>(0, n_hacks + 1),
      KOKKOS_LAMBDA(const std::int64_t h, std::int64_t& sum, const bool final) {
        if (final) hack_offsets(h) = F(sum);
        if (h < n_hacks) sum += widths(h) * hs;
      });
  r.values = Kokkos::View<S*, dev>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::values"), std::size_t(total));
  r.col_idx = Kokkos::View<O*, dev>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::col_idx"), std::size_t(total));
  const auto values = r.values;
  const auto cols = r.col_idx;
  const auto perm = r.perm;
  const bool permuted = perm.extent(0) > 0;
  const auto row_map = a.row_map();
  const auto in_cols = a.col_idx();
  const auto in_vals = a.values();
  Kokkos::parallel_for(
      "spk::csr_to_hll", Range64<exec>(0, n_hacks * hs), KOKKOS_LAMBDA(const std::int64_t p) {
        const std::int64_t h = p / hs;
        const std::size_t base = std::size_t(hack_offsets(h)) + std::size_t(p % hs);
        const O w = O(widths(h));
        O len = 0;
        F b = 0;
        if (p < std::int64_t(nrows)) {
          const O i = permuted ? perm(p) : O(p);
          b = row_map(i);
          len = O(row_map(i + 1) - b);
        }
        const O pad_col = len > 0 ? in_cols(b + len - 1) : O(0);
        for (O k = 0; k < w; ++k) {
          const std::size_t e = base + std::size_t(k) * std::size_t(hs);
          const bool real = k < len;
          values(e) = real ? in_vals(b + k) : scalar_traits<S>::zero();
          cols(e) = real ? in_cols(b + k) : pad_col;
        }
      });
  return r;
}

}  // namespace impl

/// Hacked ELLPACK matrix. The rows, in stored order ("positions"; the matrix order, or sorted by
/// length, see HllSort), are cut into hacks of hack_size() rows. Hack h holds width_h = its
/// longest row's length columns of hack_size entries, column-major, at values / col_idx
/// [hack_offsets(h), hack_offsets(h + 1)); so entry k of position p is at hack_offsets(p /
/// hack_size) + k * hack_size + p % hack_size. row_lengths() is indexed by position,
/// permutation() maps positions to rows (empty when unsorted). Entries keep the order of the
/// CSR input; padding repeats a valid column index with a zero value. With hack_size a multiple
/// of 32, every hack starts on a 32-entry boundary. SpMV takes the first split_width() columns
/// of every hack with one vector per row; the further columns of a wider hack form work items
/// of split_width() columns each (item_hacks(), item_columns(): hack, first column), spread over
/// threads that add into y with atomics. Template parameters as spk::CsrMatrix;
/// Offset also types hack_offsets. Copies are shallow.
template <class Scalar, class Ordinal = int, class Offset = int,
          class Device = Kokkos::DefaultExecutionSpace>
class HllMatrix {
 public:
  using value_type = Scalar;
  using ordinal_type = Ordinal;
  using size_type = Offset;
  using device_type = impl::device_t<Device>;
  using execution_space = typename device_type::execution_space;
  using memory_space = typename device_type::memory_space;
  using values_type = Kokkos::View<value_type*, device_type>;
  using index_type = Kokkos::View<ordinal_type*, device_type>;
  using offsets_type = Kokkos::View<size_type*, device_type>;
  using csr_type = CsrMatrix<Scalar, Ordinal, Offset, Device>;
  static constexpr const char* name = "hll";

  /// An empty 0 x 0 matrix.
  HllMatrix() = default;

  /// Converts a CSR matrix on its device (see HllOptions). Throws std::invalid_argument for
  /// invalid options and PaddingLimitExceeded when the padded hacks would exceed options.limit.
  explicit HllMatrix(const csr_type& a, const HllOptions& options = {})
      : HllMatrix(a.nrows(), a.ncols(), impl::csr_to_hll(a, options)) {}

  ordinal_type nrows() const { return nrows_; }
  ordinal_type ncols() const { return ncols_; }
  /// Stored entries (padding excluded).
  std::int64_t nnz() const { return nnz_; }
  int hack_size() const { return hack_size_; }
  /// Number of hacks, ceil(nrows / hack_size).
  std::int64_t n_hacks() const {
    return hack_offsets_.extent(0) > 0 ? std::int64_t(hack_offsets_.extent(0)) - 1 : 0;
  }
  /// Width of the widest hack.
  std::int64_t max_width() const { return max_width_; }
  /// Mean hack width (padded entries / (n_hacks * hack_size)).
  double mean_width() const {
    return n_hacks() > 0 ? double(values_.extent(0)) / double(n_hacks() * hack_size_) : 0.0;
  }
  /// Allocated value slots per stored entry (1 = no padding; 1 for an empty matrix).
  double padding_ratio() const { return nnz_ > 0 ? double(values_.extent(0)) / double(nnz_) : 1.0; }
  double mean_row_length() const { return nrows_ > 0 ? double(nnz_) / double(nrows_) : 0.0; }
  /// The order applied: none, global or window (HllSort::automatic resolves to none or window).
  HllSort sort() const { return sort_; }
  /// Columns of a hack taken per row by the main SpMV kernel and per work item.
  std::int64_t split_width() const { return split_width_; }
  /// Work items of the hacks wider than split_width().
  std::int64_t n_items() const { return std::int64_t(item_hack_.extent(0)); }

  const values_type& values() const { return values_; }
  const index_type& col_idx() const { return col_idx_; }
  const offsets_type& hack_offsets() const { return hack_offsets_; }
  const index_type& row_lengths() const { return row_len_; }
  const index_type& permutation() const { return perm_; }
  const index_type& item_hacks() const { return item_hack_; }
  const index_type& item_columns() const { return item_col_; }

  /// Bytes held by the arrays (padding, hack offsets, row lengths, permutation and work items
  /// included).
  std::size_t memory_bytes() const {
    return values_.extent(0) * sizeof(value_type) + col_idx_.extent(0) * sizeof(ordinal_type) +
           hack_offsets_.extent(0) * sizeof(size_type) +
           (row_len_.extent(0) + perm_.extent(0) + item_hack_.extent(0) + item_col_.extent(0)) *
               sizeof(ordinal_type);
  }

  /// The matrix in CSR on the same device: rows in the original order, entries in stored
  /// order. O(nrows + nnz) work.
  csr_type to_csr() const {
    return impl::padded_rows_to_csr<csr_type>(
        nrows_, ncols_, values_.data(), col_idx_.data(), geometry(),
        Kokkos::View<const ordinal_type*, device_type>(row_len_));
  }

  /// Where entry k of position p lives, and which row p is (for the kernels).
  impl::HllRowGeometry<ordinal_type, size_type, device_type> geometry() const {
    impl::HllRowGeometry<ordinal_type, size_type, device_type> g;
    g.hack_offsets = hack_offsets_;
    g.perm = perm_;
    g.hack_size = ordinal_type(hack_size_);
    g.hack_shift = impl::exact_log2(hack_size_);
    g.permuted = perm_.extent(0) > 0;
    g.head_width = ordinal_type(split_width_);
    return g;
  }

 private:
  HllMatrix(ordinal_type nrows, ordinal_type ncols,
            const impl::HllArrays<value_type, ordinal_type, size_type, device_type>& arr)
      : nrows_(nrows),
        ncols_(ncols),
        values_(arr.values),
        col_idx_(arr.col_idx),
        hack_offsets_(arr.hack_offsets),
        row_len_(arr.row_len),
        perm_(arr.perm),
        item_hack_(arr.item_hack),
        item_col_(arr.item_col),
        hack_size_(arr.hack_size),
        max_width_(arr.max_width),
        split_width_(arr.split_width),
        sort_(arr.sort) {
    nnz_ = impl::sum_entries<execution_space>(row_len_);
  }

  ordinal_type nrows_ = 0;
  ordinal_type ncols_ = 0;
  values_type values_;
  index_type col_idx_;
  offsets_type hack_offsets_;
  index_type row_len_;
  index_type perm_;
  index_type item_hack_;
  index_type item_col_;
  int hack_size_ = 32;
  std::int64_t max_width_ = 0;
  std::int64_t split_width_ = 0;
  HllSort sort_ = HllSort::none;
  std::int64_t nnz_ = 0;
};

/// The launch spmv would use for `a` (zero fields chosen from the mean row length and the
/// execution space). Below a mean of 128 entries per row a GPU takes one row per thread, 128
/// threads per team: consecutive threads then read consecutive entries of the column-major
/// hacks, and long rows are cut by the work items anyway.
template <class S, class O, class F, class D>
HllSpmvParams resolve_params(const HllMatrix<S, O, F, D>& a, Mode /*mode*/,
                             const HllSpmvParams& params = {}) {
  using exec = typename HllMatrix<S, O, F, D>::execution_space;
  const impl::RowLaunch r = impl::resolve_row_launch(
      "spk::spmv (HLL)", params.threads_per_row, params.team_size, params.rows_per_team,
      a.mean_row_length() < 128 ? 0.0 : a.mean_row_length(), impl::is_gpu_space<exec>());
  return HllSpmvParams{r.threads_per_row, r.team_size, r.rows_per_team};
}

/// y = alpha * op(A) * x + beta * y with A in HLL; op = N, T or H (T and H scatter with atomics
/// after y = beta y). The first split_width() columns of each row: one vector per row, y written
/// directly (op = N); the wide hacks' work items then add with atomics. With sorted rows,
/// position p's result goes to y(permutation(p)) (op = N) or reads x(permutation(p)) (T, H).
/// Vectors, beta == 0 and errors as the ELL overload.
/// O(nnz + nrows) work; the padding is not read.
template <class S, class O, class F, class D, class XView, class YView>
void spmv(Mode mode, typename HllMatrix<S, O, F, D>::value_type alpha,
          const HllMatrix<S, O, F, D>& a, const XView& x,
          typename HllMatrix<S, O, F, D>::value_type beta, const YView& y,
          const HllSpmvParams& params = {}) {
  using Matrix = HllMatrix<S, O, F, D>;
  using dev = typename Matrix::device_type;
  static_assert(impl::check_vector_types<S, typename Matrix::execution_space, XView, YView>(),
                "spk::spmv: invalid vector types");
  impl::check_vector_sizes("spk::spmv", mode != Mode::N, a.nrows(), a.ncols(), x, y,
                           to_string(mode));
  const HllSpmvParams p = resolve_params(a, mode, params);
  const auto geom = a.geometry();
  const Kokkos::View<const O*, dev> row_len = a.row_lengths();
  impl::padded_rows_spmv<dev>(
      "spk::hll_spmv", impl::RowLaunch{p.threads_per_row, p.team_size, p.rows_per_team}, mode,
      alpha, a.values().data(), a.col_idx().data(), geom, row_len, a.nrows(), x, beta, y);
  impl::hll_wide_items_spmv<dev>(mode, alpha, a.values().data(), a.col_idx().data(), geom, row_len,
                                 Kokkos::View<const O*, dev>(a.item_hacks()),
                                 Kokkos::View<const O*, dev>(a.item_columns()), a.nrows(), x, y);
}

}  // namespace spk
