// spk/formats/balanced_coo.hpp: balanced COO (Aliaga et al. 2020, after Anzt et al.'s balanced
// CSR): the entries in row-major order as (row, column, value) triplets, cut for SpMV into equal
// chunks of B * K entries (B threads per team, K entries per thread, both launch parameters), so
// every team does the same work whatever the row lengths. Empty rows hold one explicit zero
// entry (so a chunk's rows are consecutive and every row is written by its chunk); the matrix
// remembers which rows those are, and to_csr() gives the input back exactly.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/impl/balanced_coo_spmv.hpp>
#include <spk/impl/coo_spmv.hpp>
#include <spk/impl/device_info.hpp>
#include <spk/impl/format_common.hpp>
#include <spk/impl/format_convert.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/radix_sort.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {

/// Launch parameters of balanced COO SpMV. Zero means "choose": on GPUs B = 128, K = 8 (the
/// fastest shape over the nine large matrices on an H100 and an H200: 0.897x and 0.873x
/// cuSPARSE COO against 0.844x and 0.791x for the paper's B = 256, K = 4; docs/PERFORMANCE.md);
/// on CPU backends B = 256, K = 4, one thread taking a chunk of B * K entries.
struct BalancedCooSpmvParams {
  int threads_per_team = 0;    ///< B: a multiple of 32 in [32, 256]
  int entries_per_thread = 0;  ///< K: 1, 2, 4 or 8
  CooAccumulate accumulate = CooAccumulate::direct;
  /// GPUs: consecutive windows of 32 K entries one warp takes, the next one's entries loaded
  /// while the current one is multiplied (op = N); 1: one window per warp, nothing loaded
  /// ahead (the paper's scheme); 0: choose (K <= 4: 2 where there are at least 64 chunks of
  /// B K entries per multiprocessor, else 1; K = 8: 1, where loading ahead measured no gain).
  /// CPU backends and op = T / H take one window at a time.
  int windows_per_warp = 0;
  /// GPUs, op = N, direct or deterministic accumulation: when no row is longer than a window
  /// (32 K stored entries; BalancedCooMatrix::longest_row()), the window where a row starts
  /// also adds the row's entries in the next window (loaded by its last lanes, summed by a
  /// shuffle scan) and writes the row once, so the rows that cross windows need no y = beta y
  /// pre-pass and no atomic adds (deterministic: no fix-up kernel). 4–10% on the stencils and
  /// banded matrices (H100, docs/PERFORMANCE.md). false: crossing rows as `accumulate` says.
  bool finish_rows = true;
};

/// A short name of balanced COO launch parameters, e.g. "b256-k4-direct", with "-wM" when a
/// warp takes M > 1 windows (one window per warp keeps the name it had before windows_per_warp).
inline std::string describe(const BalancedCooSpmvParams& p) {
  return "b" + std::to_string(p.threads_per_team) + "-k" + std::to_string(p.entries_per_thread) +
         "-" + to_string(p.accumulate) +
         (p.windows_per_warp > 1 ? "-w" + std::to_string(p.windows_per_warp) : std::string()) +
         (p.finish_rows ? "" : "-crossing");
}

namespace impl {

/// The arrays of a balanced COO matrix (see BalancedCooMatrix).
template <class S, class O, class D>
struct BalancedCooArrays {
  Kokkos::View<O*, D> rows;
  Kokkos::View<O*, D> cols;
  Kokkos::View<S*, D> values;
  Kokkos::View<O*, D> empty_rows;  // ascending
  std::int64_t stored = 0;         // entries before the padding to a multiple of 8
  std::int64_t longest = 0;        // stored entries of the longest row (an empty row stores 1)
};

/// Stored entries are padded to a multiple of this (the widest run one thread loads).
constexpr std::int64_t balanced_coo_pad = 8;

/// Balanced COO arrays of `a`, built on its device: entries per row (one for an empty row),
/// their exclusive scan, then one thread per row copying its entries (or writing the filler
/// (row, 0, 0)); the padding entries extend the last row with zeros. O(nrows + nnz) work.
template <class S, class O, class F, class D>
BalancedCooArrays<S, O, typename CsrMatrix<S, O, F, D>::device_type> csr_to_balanced_coo(
    const CsrMatrix<S, O, F, D>& a) {
  using dev = typename CsrMatrix<S, O, F, D>::device_type;
  using exec = typename dev::execution_space;
  BalancedCooArrays<S, O, dev> r;
  const std::int64_t nrows = a.nrows();
  const auto row_map = a.row_map();
  Kokkos::View<std::int64_t*, dev> start("spk::balanced_coo::start", std::size_t(nrows) + 1);
  Kokkos::parallel_reduce(
      "spk::balanced_coo::count", Range64<exec>(0, nrows),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& longest) {
        const std::int64_t len = std::int64_t(row_map(i + 1)) - std::int64_t(row_map(i));
        const std::int64_t stored = len > 0 ? len : 1;
        start(i + 1) = stored;
        if (stored > longest) longest = stored;
      },
      Kokkos::Max<std::int64_t>(r.longest));
  if (nrows == 0) r.longest = 0;
  r.stored = row_lengths_to_offsets<exec>(start);
  const std::int64_t n = (r.stored + balanced_coo_pad - 1) / balanced_coo_pad * balanced_coo_pad;
  check_fits<O>("spk::BalancedCooMatrix", "rows", double(nrows));
  r.rows = Kokkos::View<O*, dev>(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                                    "spk::balanced_coo::rows"),
                                 std::size_t(n));
  r.cols = Kokkos::View<O*, dev>(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                                    "spk::balanced_coo::cols"),
                                 std::size_t(n));
  r.values = Kokkos::View<S*, dev>(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                                      "spk::balanced_coo::values"),
                                   std::size_t(n));
  const auto rows = r.rows;
  const auto cols = r.cols;
  const auto vals = r.values;
  const auto in_cols = a.col_idx();
  const auto in_vals = a.values();
  Kokkos::parallel_for(
      "spk::csr_to_balanced_coo", Range64<exec>(0, nrows), KOKKOS_LAMBDA(const std::int64_t i) {
        std::int64_t dst = start(i);
        if (row_map(i) == row_map(i + 1)) {
          rows(dst) = O(i);
          cols(dst) = O(0);
          vals(dst) = scalar_traits<S>::zero();
          return;
        }
        for (F k = row_map(i); k < row_map(i + 1); ++k, ++dst) {
          rows(dst) = O(i);
          cols(dst) = in_cols(k);
          vals(dst) = in_vals(k);
        }
      });
  const std::int64_t stored = r.stored;
  Kokkos::parallel_for(
      "spk::balanced_coo::pad", Range64<exec>(stored, n), KOKKOS_LAMBDA(const std::int64_t k) {
        rows(k) = O(nrows - 1);
        cols(k) = O(0);
        vals(k) = scalar_traits<S>::zero();
      });
  // the empty rows, ascending: a flag scan
  Kokkos::View<std::int64_t*, dev> slot("spk::balanced_coo::empty_slot", std::size_t(nrows) + 1);
  Kokkos::parallel_for(
      "spk::balanced_coo::empty_flags", Range64<exec>(0, nrows),
      KOKKOS_LAMBDA(const std::int64_t i) { slot(i + 1) = row_map(i) == row_map(i + 1) ? 1 : 0; });
  const std::int64_t n_empty = row_lengths_to_offsets<exec>(slot);
  r.empty_rows = Kokkos::View<O*, dev>(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                                          "spk::balanced_coo::empty_rows"),
                                       std::size_t(n_empty));
  const auto empty = r.empty_rows;
  Kokkos::parallel_for(
      "spk::balanced_coo::empty_rows", Range64<exec>(0, nrows),
      KOKKOS_LAMBDA(const std::int64_t i) {
        if (slot(i + 1) != slot(i)) empty(slot(i)) = O(i);
      });
  return r;
}

}  // namespace impl

/// Balanced COO matrix: rows(), cols() and values() hold the entries in the row-major order of the
/// CSR input (duplicates kept, in stored order), plus one zero entry (row, 0, 0) per empty row
/// (listed in empty_rows()), padded with zero entries of the last row to a multiple of 8.
/// Template parameters as spk::CsrMatrix. Copies are shallow.
template <class Scalar, class Ordinal = int, class Offset = int,
          class Device = Kokkos::DefaultExecutionSpace>
class BalancedCooMatrix {
 public:
  using value_type = Scalar;
  using ordinal_type = Ordinal;
  using size_type = Offset;
  using device_type = impl::device_t<Device>;
  using execution_space = typename device_type::execution_space;
  using memory_space = typename device_type::memory_space;
  using index_type = Kokkos::View<ordinal_type*, device_type>;
  using values_type = Kokkos::View<value_type*, device_type>;
  using csr_type = CsrMatrix<Scalar, Ordinal, Offset, Device>;
  static constexpr const char* name = "balanced-coo";

  /// An empty 0 x 0 matrix.
  BalancedCooMatrix() = default;

  /// Converts a CSR matrix on its device. O(nrows + nnz).
  explicit BalancedCooMatrix(const csr_type& a)
      : BalancedCooMatrix(a.nrows(), a.ncols(), std::int64_t(a.nnz()),
                          impl::csr_to_balanced_coo(a)) {}

  ordinal_type nrows() const { return nrows_; }
  ordinal_type ncols() const { return ncols_; }
  /// Entries of the CSR input (duplicates counted).
  std::int64_t nnz() const { return nnz_; }
  /// Stored entries: nnz() plus one per empty row (padding to a multiple of 8 not counted).
  std::int64_t stored_entries() const { return stored_; }
  /// Stored entries of the longest row (an empty row stores one; 0 without rows).
  std::int64_t longest_row() const { return longest_; }

  const index_type& rows() const { return rows_; }
  const index_type& cols() const { return cols_; }
  const values_type& values() const { return values_; }
  const index_type& empty_rows() const { return empty_rows_; }

  /// Bytes held by the arrays (fillers and padding included).
  std::size_t memory_bytes() const {
    return rows_.extent(0) * (2 * sizeof(ordinal_type) + sizeof(value_type)) +
           empty_rows_.extent(0) * sizeof(ordinal_type);
  }

  /// The input in CSR on the same device, exactly (order, duplicates and zeros as given).
  csr_type to_csr() const;

  /// The arrays as the kernels read them.
  impl::BalancedCooData<value_type, ordinal_type, device_type> data() const {
    return {rows_, cols_, values_, std::int64_t(rows_.extent(0))};
  }

  /// Partial-sum buffers of SpMV (op = N, direct accumulation), reused between products.
  impl::CooPartials<value_type, device_type>& partials() const { return *partials_; }

 private:
  BalancedCooMatrix(ordinal_type nrows, ordinal_type ncols, std::int64_t nnz,
                    const impl::BalancedCooArrays<value_type, ordinal_type, device_type>& arr)
      : nrows_(nrows),
        ncols_(ncols),
        rows_(arr.rows),
        cols_(arr.cols),
        values_(arr.values),
        empty_rows_(arr.empty_rows),
        nnz_(nnz),
        stored_(arr.stored),
        longest_(arr.longest) {}

  ordinal_type nrows_ = 0;
  ordinal_type ncols_ = 0;
  index_type rows_;
  index_type cols_;
  values_type values_;
  index_type empty_rows_;
  std::int64_t nnz_ = 0;
  std::int64_t stored_ = 0;
  std::int64_t longest_ = 0;
  std::shared_ptr<impl::CooPartials<value_type, device_type>> partials_ =
      std::make_shared<impl::CooPartials<value_type, device_type>>();
};

template <class S, class O, class F, class D>
typename BalancedCooMatrix<S, O, F, D>::csr_type BalancedCooMatrix<S, O, F, D>::to_csr() const {
  using exec = execution_space;
  using dev = device_type;
  const std::int64_t nrows = nrows_;
  Kokkos::View<F*, dev> row_map("spk::to_csr::row_map", std::size_t(nrows) + 1);
  const auto rows = rows_;
  const auto empty = empty_rows_;
  const std::int64_t stored = stored_;
  // each row's stored entries start where the row index changes
  Kokkos::View<std::int64_t*, dev> first(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::balanced_coo::first"),
      std::size_t(nrows) + 1);
  Kokkos::parallel_for(
      "spk::balanced_coo_to_csr::starts", impl::Range64<exec>(0, stored),
      KOKKOS_LAMBDA(const std::int64_t k) {
        if (k == 0 || rows(k - 1) != rows(k)) first(rows(k)) = k;
        if (k == stored - 1) first(nrows) = stored;
      });
  Kokkos::parallel_for(
      "spk::balanced_coo_to_csr::count", impl::Range64<exec>(0, nrows),
      KOKKOS_LAMBDA(const std::int64_t i) { row_map(i + 1) = F(first(i + 1) - first(i)); });
  Kokkos::parallel_for(
      "spk::balanced_coo_to_csr::empty", impl::Range64<exec>(0, std::int64_t(empty.extent(0))),
      KOKKOS_LAMBDA(const std::int64_t e) { row_map(empty(e) + 1) = F(0); });
  const std::int64_t nnz = impl::row_lengths_to_offsets<exec>(row_map);
  csr_type b(nrows_, ncols_, typename csr_type::row_map_type(row_map),
             typename csr_type::index_type(
                 Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::csr::col_idx"),
                 std::size_t(nnz)),
             typename csr_type::values_type(
                 Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::csr::values"),
                 std::size_t(nnz)));
  const auto out_cols = b.col_idx();
  const auto out_vals = b.values();
  const auto cols = cols_;
  const auto vals = values_;
  Kokkos::parallel_for(
      "spk::balanced_coo_to_csr::fill", impl::Range64<exec>(0, nrows),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const F len = row_map(i + 1) - row_map(i);
        for (F j = 0; j < len; ++j) {
          out_cols(row_map(i) + j) = cols(first(i) + j);
          out_vals(row_map(i) + j) = vals(first(i) + j);
        }
      });
  return b;
}

namespace impl {

/// Whether SpMV with `p` and k entries per thread finishes each row in the window where it
/// starts (BalancedCooSpmvParams::finish_rows): GPUs, op = N, direct or deterministic
/// accumulation, no row longer than a window of one warp's k-entry runs.
template <class S, class O, class F, class D>
bool balanced_coo_finishes(const BalancedCooMatrix<S, O, F, D>& a, Mode mode,
                           const BalancedCooSpmvParams& p, int k) {
  using exec = typename BalancedCooMatrix<S, O, F, D>::execution_space;
  return is_gpu_space<exec>() && mode == Mode::N && p.finish_rows &&
         p.accumulate != CooAccumulate::atomic &&
         a.longest_row() <= std::int64_t(Warp<exec>::size) * k;
}

}  // namespace impl

/// The launch spmv would use for `a`: zero fields chosen for its execution space. On GPUs,
/// B = 128, K = 8, one window per warp (rows finished by their window where none is longer
/// than 256 entries). Before spk's Kokkos build left the L1 its share of the SM (2026-11-27,
/// docs/PERFORMANCE.md, "The L1 / shared-memory carveout") K = 4 was faster where its windows
/// finished every row; with the larger L1, K = 8 is faster on every large matrix of the suite.
template <class S, class O, class F, class D>
BalancedCooSpmvParams resolve_params(const BalancedCooMatrix<S, O, F, D>& a, Mode mode,
                                     const BalancedCooSpmvParams& params = {}) {
  using exec = typename BalancedCooMatrix<S, O, F, D>::execution_space;
  BalancedCooSpmvParams p = params;
  const bool gpu = impl::is_gpu_space<exec>();
  if (p.threads_per_team == 0) p.threads_per_team = gpu ? 128 : 256;
  if (p.entries_per_thread == 0) p.entries_per_thread = gpu ? 8 : 4;
  impl::check_coo_launch("spk::spmv (balanced COO)", p.threads_per_team, p.entries_per_thread,
                         256);
  require(p.windows_per_warp >= 0, "spk::spmv (balanced COO)",
          "windows_per_warp = ", p.windows_per_warp, " must be 0 (choose) or positive");
  const bool finish = impl::balanced_coo_finishes(a, mode, p, p.entries_per_thread);
  if (!gpu || mode != Mode::N ||
      (params.windows_per_warp == 0 && (p.entries_per_thread >= 8 || finish))) {
    p.windows_per_warp = 1;
  } else if (p.windows_per_warp == 0) {
    const std::int64_t window = 32 * std::int64_t(p.entries_per_thread);
    const std::int64_t chunks =
        (a.stored_entries() + window * (p.threads_per_team / 32) - 1) /
        (window * (p.threads_per_team / 32));
    const std::int64_t teams = 32 * std::int64_t(impl::multiprocessor_count<exec>());
    // H200, nine large matrices: b128-k4 0.817x cuSPARSE COO with one window per warp, 0.861x
    // with 2; 4 were no better than 2 on the five it was timed on (docs/PERFORMANCE.md)
    p.windows_per_warp = int(std::clamp<std::int64_t>(chunks / teams, 1, 2));
  }
  return p;
}

namespace impl {

template <int K, bool Trans, CooAccumulate Acc, class S, class O, class F, class D, class XView,
          class YView>
void balanced_coo_launch(const BalancedCooSpmvParams& p, Mode mode, S alpha,
                         const BalancedCooMatrix<S, O, F, D>& a, const XView& x, S beta,
                         const YView& y) {
  using Matrix = BalancedCooMatrix<S, O, F, D>;
  using dev = typename Matrix::device_type;
  using exec = typename Matrix::execution_space;
  const bool gpu = is_gpu_space<exec>();
  const int lanes = Warp<exec>::size;
  const int warps = gpu ? p.threads_per_team / lanes : 1;
  const int groups = gpu ? 1 : p.threads_per_team;
  const auto data = a.data();
  const std::int64_t window = std::int64_t(lanes) * groups * K;
  const std::int64_t nwindows = (data.n + window - 1) / window;
  auto& part = a.partials();
  // rows finished by the window where they start (see BalancedCooSpmvParams::finish_rows): a
  // row of at most a window's entries continues into one more window at most
  const bool finish = !Trans && balanced_coo_finishes(a, mode, p, K);
  if (!Trans && !finish && Acc == CooAccumulate::deterministic) part.reserve(nwindows);
  if (!Trans && !finish && Acc == CooAccumulate::direct)
    coo_prescale_crossing_rows<exec>(nwindows, BalancedCooWindows<S, O, dev>{data, window},
                                     beta, y);
  const int per_warp = gpu ? p.windows_per_warp : 1;
  const std::int64_t league = (nwindows + std::int64_t(warps) * per_warp - 1) /
                              (std::int64_t(warps) * per_warp);
  const auto run = [&](auto ahead) {
    constexpr bool Ahead = decltype(ahead)::value;
    using functor = BalancedCooSpmv<S, O, dev, XView, YView, K, Trans, Acc, Ahead>;
    functor f{data,
              x,
              CooOutput<S, O, YView, dev, Acc>{y, alpha, beta, beta == scalar_traits<S>::zero(),
                                                  part.carry, part.head},
              mode == Mode::H,
              groups,
              window,
              nwindows,
              per_warp,
              finish,
              // lanes whose K entries cover a row's part in the next window (at most
              // longest - 1 <= 32 K - 1 entries when finishing)
              finish ? int((std::max<std::int64_t>(a.longest_row() - 1, 0) + K - 1) / K) : 0};
    BalancedCooPolicy<exec, K, Ahead> policy(int(league), warps, lanes);
    check_team_size(policy, f, warps, lanes);
    Kokkos::parallel_for(Trans ? "spk::balanced_coo_spmv_t" : "spk::balanced_coo_spmv", policy,
                         f);
  };
  // the next window loaded ahead only where a warp takes several (GPUs, op = N); CPU builds
  // do not instantiate that kernel
  if constexpr (!Trans && is_gpu_space<exec>()) {
    if (per_warp > 1) {
      run(std::true_type{});
    } else {
      run(std::false_type{});
    }
  } else {
    run(std::false_type{});
  }
  if (!Trans && !finish && Acc == CooAccumulate::deterministic)
    coo_window_fixup<exec>(nwindows, BalancedCooWindows<S, O, dev>{data, window}, part.carry,
                           part.head, alpha, beta, y);
}

}  // namespace impl

/// y = alpha * op(A) * x + beta * y with A in balanced COO; op = N (rows combined by warp
/// segmented scans, see impl/coo_spmv.hpp), T or H (atomic scatter after y = beta * y). beta == 0
/// overwrites y. Throws std::invalid_argument on size mismatch or invalid parameters.
/// O(stored entries) work, balanced over the teams.
template <class S, class O, class F, class D, class XView, class YView>
void spmv(Mode mode, typename BalancedCooMatrix<S, O, F, D>::value_type alpha,
          const BalancedCooMatrix<S, O, F, D>& a, const XView& x,
          typename BalancedCooMatrix<S, O, F, D>::value_type beta, const YView& y,
          const BalancedCooSpmvParams& params = {}) {
  using Matrix = BalancedCooMatrix<S, O, F, D>;
  using exec = typename Matrix::execution_space;
  static_assert(impl::check_vector_types<S, exec, XView, YView>(),
                "spk::spmv: invalid vector types");
  impl::check_vector_sizes("spk::spmv", mode != Mode::N, a.nrows(), a.ncols(), x, y,
                           to_string(mode));
  const BalancedCooSpmvParams p = resolve_params(a, mode, params);
  impl::coo_dispatch<exec>(mode, p.accumulate, p.entries_per_thread,
                           a.nrows() == 0 || a.ncols() == 0, beta, y,
                           [&](auto k, auto trans, auto acc) {
                             impl::balanced_coo_launch<decltype(k)::value, decltype(trans)::value,
                                                       decltype(acc)::value>(p, mode, alpha, a, x,
                                                                             beta, y);
                           });
}

}  // namespace spk
