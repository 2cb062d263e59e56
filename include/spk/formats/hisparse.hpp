// spk/formats/hisparse.hpp: HiSparse, the hierarchical sparse format of Derler, Zayer, Seidel and
// Steinberger ("Dynamic Scheduling for Efficient Hierarchical Sparse Matrix Operations on the
// GPU", ICS 2017): a tree of d x d nodes (d a power of two <= 256, default 128, so local
// coordinates take 8 bits each), each node dense or sparse COO1/COO2/COO4, all in one pool of
// 16-byte aligned nodes (layout: impl/hisparse_node.hpp). A matrix is shared content plus a
// state (a transposed flag and a scale factor applied on access), so transpose() and scaled()
// are O(1) and share the pool. SpMV for op = N and T reads the same nodes (scheduler:
// impl/hisparse_schedule.hpp, kernels: impl/hisparse_spmv.hpp); addition: spk::add
// (impl/hisparse_add.hpp).
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include <spk/convert.hpp>
#include <spk/coo_matrix.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/impl/format_common.hpp>
#include <spk/impl/format_convert.hpp>
#include <spk/impl/hisparse_add.hpp>
#include <spk/impl/hisparse_build.hpp>
#include <spk/impl/hisparse_node.hpp>
#include <spk/impl/hisparse_schedule.hpp>
#include <spk/impl/hisparse_spmv.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/search.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {

/// How HiSparse SpMV schedules the leaves (see impl/hisparse_schedule.hpp, hisparse_spmv.hpp).
enum class HiSparseSchedule {
  stream,  ///< a warp per output band chunk, its sparse leaves read as one stream of 4-entry
           ///< groups, y written once (default)
  band,    ///< a warp per output band chunk, its leaves bin by bin, y written once
  fused,   ///< one launch, teams split by bin, atomics into y after y = beta y
  per_bin  ///< one launch per bin, atomics into y after y = beta y
};

/// Options of HiSparse SpMV.
struct HiSparseSpmvParams {
  /// Re-run the top-down traversal that fills the leaf queues in this product instead of using
  /// the matrix's cached plan (what a changing matrix would need; measures the scheduler's cost).
  bool traverse = false;
  HiSparseSchedule schedule = HiSparseSchedule::stream;
  /// Schedule stream, the kernel's shape (impl::hisparse::LeafSpmvStream): 1 every product its
  /// own shared atomic in a rotated order, 2 a lane's runs of one output summed in a register
  /// first; 0 (default) the faster of the two, timed once per matrix and direction on the first
  /// product (eight products on a scratch vector, kept with the matrix's plan).
  int stream_shape = 0;
};

/// A short name of the options: "band", "stream" (with "-each" or "-runs" for stream_shape 1
/// or 2), "fused" or "per-bin", "-traverse" appended when set.
inline std::string describe(const HiSparseSpmvParams& p) {
  return std::string(p.schedule == HiSparseSchedule::band     ? "band"
                     : p.schedule == HiSparseSchedule::stream ? "stream"
                     : p.schedule == HiSparseSchedule::fused  ? "fused"
                                                              : "per-bin") +
         (p.schedule != HiSparseSchedule::stream || p.stream_shape <= 0 || p.stream_shape > 2
              ? std::string()
              : std::string(p.stream_shape == 1 ? "-each" : "-runs")) +
         (p.traverse ? "-traverse" : "");
}

/// HiSparse matrix of float or double values on Device (see the file comment). Copies are
/// shallow (they share the pool, the cached plan and nothing else).
template <class Scalar, class Ordinal = int, class Device = Kokkos::DefaultExecutionSpace>
class HiSparseMatrix {
  static_assert(std::is_same<Scalar, float>::value || std::is_same<Scalar, double>::value,
                "spk::HiSparseMatrix: values must be float or double");

 public:
  using value_type = Scalar;
  using ordinal_type = Ordinal;
  using device_type = impl::device_t<Device>;
  using execution_space = typename device_type::execution_space;
  using memory_space = typename device_type::memory_space;
  using data_type = impl::HiSparseData<device_type>;
  static constexpr const char* name = "hisparse";
  static constexpr int default_node_size = 128;

  /// An empty 0 x 0 matrix.
  HiSparseMatrix() : data_(std::make_shared<data_type>()) {}

  /// Converts a CSR matrix on its device (repeated coordinates are summed). Throws
  /// std::invalid_argument for a node size that is not a power of two in [2, 256] or a column
  /// index out of range.
  template <class F>
  explicit HiSparseMatrix(const CsrMatrix<Scalar, Ordinal, F, Device>& a,
                          int node_size = default_node_size)
      : HiSparseMatrix(csr_to_coo(a), node_size) {}

  /// Converts a COO matrix on its device (any order; repeated coordinates are summed). Throws
  /// std::invalid_argument naming the first entry outside the matrix.
  template <class F>
  explicit HiSparseMatrix(const CooMatrix<Scalar, Ordinal, F, Device>& a,
                          int node_size = default_node_size)
      : data_(impl::build_hisparse<Scalar, device_type>(a.nrows(), a.ncols(), a.row_idx(),
                                                         a.col_idx(), a.values(), node_size)) {}

  /// Wraps converted content with a state (used by transpose(), scaled() and spk::add).
  HiSparseMatrix(std::shared_ptr<const data_type> data, bool transposed, Scalar scale)
      : data_(std::move(data)), transposed_(transposed), scale_(scale) {}

  /// Rows and columns of the matrix this state describes (swapped when transposed).
  ordinal_type nrows() const { return ordinal_type(transposed_ ? data_->ncols : data_->nrows); }
  ordinal_type ncols() const { return ordinal_type(transposed_ ? data_->nrows : data_->ncols); }
  /// Distinct stored (row, column) entries.
  std::int64_t nnz() const { return data_->stats.stored_entries; }
  int node_size() const { return data_->d; }
  int levels() const { return data_->levels; }
  bool transposed() const { return transposed_; }
  Scalar scale() const { return scale_; }

  /// The transpose, sharing this matrix's content: O(1).
  HiSparseMatrix transpose() const { return HiSparseMatrix(data_, !transposed_, scale_); }
  /// s times this matrix, sharing its content: O(1).
  HiSparseMatrix scaled(Scalar s) const { return HiSparseMatrix(data_, transposed_, scale_ * s); }

  /// Bytes of the node pool (the format's storage; the SpMV work lists are extra, see
  /// plan_bytes()).
  std::size_t memory_bytes() const { return std::size_t(data_->stats.pool_bytes); }
  /// Bytes of the cached work lists (0 before the first product).
  std::size_t plan_bytes() const {
    return data_->plan ? static_cast<impl::hisparse::Plan<device_type>*>(data_->plan.get())
                             ->memory_bytes()
                       : 0;
  }
  /// Node statistics per level (see HiSparseStats).
  const HiSparseStats& stats() const { return data_->stats; }

  const data_type& data() const { return *data_; }
  const std::shared_ptr<const data_type>& shared_data() const { return data_; }

  /// The traversal's work lists, built on first use and shared by every state of this content.
  const impl::hisparse::Plan<device_type>& plan() const {
    if (!data_->plan) data_->plan = impl::hisparse::make_plan<Scalar>(*data_);
    return *static_cast<impl::hisparse::Plan<device_type>*>(data_->plan.get());
  }

  /// Whether the band plan of a direction was made already (builds the leaf plan, if needed).
  bool has_band_plan(bool trans) const {
    return bool(const_cast<impl::hisparse::Plan<device_type>&>(plan()).bands[trans ? 1 : 0]);
  }

  /// The leaves grouped by output band for products in the stored orientation (trans = false:
  /// by row band) or transposed, built on first use (see impl::hisparse::BandPlan).
  const impl::hisparse::BandPlan<device_type>& band_plan(bool trans) const {
    auto& p = const_cast<impl::hisparse::Plan<device_type>&>(plan());
    auto& slot = p.bands[trans ? 1 : 0];
    if (!slot)
      slot = std::make_shared<impl::hisparse::BandPlan<device_type>>(
          impl::hisparse::make_band_plan(*data_, p.level.back(), trans));
    return *slot;
  }

  /// The matrix this state describes (transposition and scale applied) in CSR on the same
  /// device, rows sorted by column, no duplicates, no zero values (a dense node cannot tell a
  /// stored zero from an absent entry, so none are kept). O(nnz) plus a sort.
  template <class F = int>
  CsrMatrix<Scalar, Ordinal, F, Device> to_csr() const;

 private:
  std::shared_ptr<const data_type> data_;
  bool transposed_ = false;
  Scalar scale_ = Scalar(1);
};

namespace impl {
namespace hisparse {

/// Entries of every leaf in the plan's leaf queue (dense leaves: nonzero slots), in queue order.
template <class S, class Device>
struct LeafCount {
  const char* pool;
  int log2d;
  Kokkos::View<const WorkItem*, Device> items;
  Kokkos::View<std::int64_t*, Device> start;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    const NodeView nd{pool, items(k).ref};
    std::int64_t n = 0;
    for_each_entry<Kokkos::DefaultHostExecutionSpace, S>(nd, log2d, 0, 1,
                                                         [&](unsigned, unsigned, S v) {
                                                           if (v != S(0)) ++n;
                                                         });
    start(k + 1) = n;
  }
};

}  // namespace hisparse
}  // namespace impl

template <class S, class O, class D>
template <class F>
CsrMatrix<S, O, F, D> HiSparseMatrix<S, O, D>::to_csr() const {
  using exec = execution_space;
  using dev = device_type;
  const std::int64_t nr = nrows(), nc = ncols();
  if (data_->root == 0) return CsrMatrix<S, O, F, D>(O(nr), O(nc), F(0));
  const auto& q = plan().level.back();
  const std::int64_t nleaves = std::int64_t(q.items.extent(0));
  Kokkos::View<std::int64_t*, dev> start("spk::hisparse::leaf_start", std::size_t(nleaves) + 1);
  const char* pool = reinterpret_cast<const char*>(data_->pool.data());
  const int log2d = data_->log2d;
  Kokkos::parallel_for("spk::hisparse::to_csr::count", impl::Range64<exec>(0, nleaves),
                       impl::hisparse::LeafCount<S, dev>{pool, log2d, q.items, start});
  const std::int64_t n = impl::row_lengths_to_offsets<exec>(start);
  CooMatrix<S, O, F, D> coo{O(nr), O(nc), F(n)};
  const auto rows = coo.row_idx();
  const auto cols = coo.col_idx();
  const auto vals = coo.values();
  const auto items = q.items;
  const bool tr = transposed_;
  const S sc = scale_;
  Kokkos::parallel_for(
      "spk::hisparse::to_csr::fill", impl::Range64<exec>(0, nleaves),
      KOKKOS_LAMBDA(const std::int64_t k) {
        const impl::hisparse::WorkItem w = items(k);
        const impl::hisparse::NodeView nd{pool, w.ref};
        const std::int64_t d = std::int64_t(1) << log2d;
        std::int64_t at = start(k);
        impl::hisparse::for_each_entry<Kokkos::DefaultHostExecutionSpace, S>(
            nd, log2d, 0, 1, [&](unsigned r, unsigned c, S v) {
              if (v == S(0)) return;
              const std::int64_t gr = w.rb * d + r, gc = w.cb * d + c;
              rows(at) = O(tr ? gc : gr);
              cols(at) = O(tr ? gr : gc);
              vals(at) = sc * v;
              ++at;
            });
      });
  return coo_to_csr(coo);
}

/// The options spmv uses for `a` (HiSparse has nothing to choose: the bins fix the launches).
template <class S, class O, class D>
HiSparseSpmvParams resolve_params(const HiSparseMatrix<S, O, D>& /*a*/, Mode /*mode*/,
                                  const HiSparseSpmvParams& params = {}) {
  return params;
}

/// y = alpha * op(A) * x + beta * y with A in HiSparse (op = N, T or H; H = T for real values).
/// op(A) includes A's state (transposed flag and scale). beta == 0 overwrites y (NaN in y does
/// not propagate). The first product builds the matrix's plan (the leaf work lists, see
/// impl/hisparse_schedule.hpp); later ones launch only the leaf kernels. Throws
/// std::invalid_argument on size mismatch. O(nnz) work.
template <class S, class O, class D, class XView, class YView>
void spmv(Mode mode, S alpha, const HiSparseMatrix<S, O, D>& a, const XView& x, S beta,
          const YView& y, const HiSparseSpmvParams& params = {}) {
  using Matrix = HiSparseMatrix<S, O, D>;
  using exec = typename Matrix::execution_space;
  using dev = typename Matrix::device_type;
  static_assert(impl::check_vector_types<S, exec, XView, YView>(),
                "spk::spmv: invalid vector types");
  impl::check_vector_sizes("spk::spmv (HiSparse)", mode != Mode::N, a.nrows(), a.ncols(), x, y,
                           to_string(mode));
  if (params.stream_shape < 0 || params.stream_shape > 2)
    throw std::invalid_argument("spk::spmv (HiSparse): stream_shape = " +
                                std::to_string(params.stream_shape) +
                                " is outside 0..2 (0 timed choice, 1 each, 2 runs)");
  if (a.data().root == 0 || alpha == S(0)) {
    if (beta != S(1)) impl::scale_output<exec>(beta, y);
    return;
  }
  const auto& plan = a.plan();
  if (params.traverse)
    impl::hisparse::traverse<S>(a.data(), const_cast<impl::hisparse::Plan<dev>&>(plan));
  // the stored orientation: op = T on a transposed state reads the content untransposed
  const bool trans = (mode != Mode::N) != a.transposed();
  const S factor = alpha * a.scale();
  const auto& leaves = plan.level.back();
  if (params.schedule == HiSparseSchedule::band || params.schedule == HiSparseSchedule::stream) {
    std::shared_ptr<const impl::hisparse::BandPlan<dev>> fresh;
    if (params.traverse)  // regroup the fresh leaf queue too: a changing matrix would
      fresh = std::make_shared<const impl::hisparse::BandPlan<dev>>(
          impl::hisparse::make_band_plan(a.data(), leaves, trans));
    const auto& bp = fresh ? *fresh : a.band_plan(trans);
    if (params.schedule == HiSparseSchedule::band) {
      if (trans) impl::hisparse::leaf_spmv_band<true>(a.data(), bp, factor, beta, x, y);
      else impl::hisparse::leaf_spmv_band<false>(a.data(), bp, factor, beta, x, y);
      return;
    }
    // shape 0: the timed choice (impl::hisparse::choose_stream_shape), made on the first such
    // product in this direction and kept in the matrix's plan
    int shape = params.stream_shape;
    if (shape == 0) {
      int& chosen = const_cast<impl::hisparse::Plan<dev>&>(plan).stream_shape[trans ? 1 : 0];
      if (chosen == 0)
        chosen = trans ? impl::hisparse::choose_stream_shape<true, S>(a.data(), bp, x, y.extent(0))
                       : impl::hisparse::choose_stream_shape<false, S>(a.data(), bp, x, y.extent(0));
      shape = chosen;
    }
    if (trans) impl::hisparse::leaf_spmv_stream_shape<true>(shape, a.data(), bp, factor, beta, x, y);
    else impl::hisparse::leaf_spmv_stream_shape<false>(shape, a.data(), bp, factor, beta, x, y);
    return;
  }
  if (beta != S(1)) impl::scale_output<exec>(beta, y);
  const bool fused = params.schedule == HiSparseSchedule::fused;
  if (trans && fused)
    impl::hisparse::leaf_spmv_fused<true>(a.data(), leaves, factor, x, y);
  else if (trans)
    impl::hisparse::leaf_spmv<true>(a.data(), leaves, factor, x, y);
  else if (fused)
    impl::hisparse::leaf_spmv_fused<false>(a.data(), leaves, factor, x, y);
  else
    impl::hisparse::leaf_spmv<false>(a.data(), leaves, factor, x, y);
}

/// Launch settings of spk::add for HiSparse (zero fields: the execution space's defaults, one
/// thread per team on CPU backends). The result does not depend on them.
struct HiSparseAddParams {
  /// Pairs of sparse nodes holding at most this many entries together are added by one thread
  /// each (a sorting network on keys in registers); in [0, 16].
  int small_entries = impl::hisparse::add_small_max;
  /// Merge the row-major coordinate lists of pairs of sparse nodes when neither operand is
  /// transposed (the paper's fast path); false sends them through the occupancy bitmaps.
  bool merge = true;
  /// Pairs (threads) per team of the small pairs (GPU default 128).
  int small_pairs_per_team = 0;
  /// Team size merging pairs of up to 512 entries (GPU default 32).
  int merge_team_size = 0;
  /// Team size of larger merges and of the bitmap pairs (GPU default 256).
  int team_size = 0;
  /// Pairs of two sparse nodes (either orientation) by one warp each, with occupancy bitmaps in
  /// shared memory: used where possible (32-lane warps, 32 <= d <= 128); false sends them to
  /// the team merge and bitmap paths above.
  bool warp_pairs = true;
  /// Most teams of one launch (a level's pair class); a team loops over the pairs beyond
  /// them. 0: as many as the device holds at once, times 8, on a GPU (a team per pair, or per
  /// group of small pairs, below that), a team per pair or group on CPU backends.
  int max_teams = 0;
};

/// Buffers spk::add can keep from one addition to the next (the working pool of about the two
/// operands' bytes, the level queues, the device counters): repeated additions that pass the
/// same workspace skip those allocations (like a cuSPARSE external buffer). It grows to the
/// largest addition it served; bytes() says how much it holds. One addition at a time (copies
/// share the buffers); destroy it before Kokkos::finalize.
template <class Device>
using HiSparseAddWorkspace = impl::hisparse::AddWorkspace<impl::device_t<Device>>;

namespace impl {
namespace hisparse {
/// spk::add after checking its arguments (workspace: null for none).
template <class S, class O, class D>
HiSparseMatrix<S, O, D> add_checked(const HiSparseMatrix<S, O, D>& a,
                                    const HiSparseMatrix<S, O, D>& b,
                                    const HiSparseAddParams& params,
                                    HiSparseAddWorkspace<D>* workspace) {
  using Matrix = HiSparseMatrix<S, O, D>;
  using exec = typename Matrix::execution_space;
  const char* where = "spk::add (HiSparse)";
  require(a.nrows() == b.nrows() && a.ncols() == b.ncols(), where, "op(A) is ", a.nrows(), " x ",
          a.ncols(), a.transposed() ? " (transposed)" : "", ", op(B) is ", b.nrows(), " x ",
          b.ncols(), b.transposed() ? " (transposed)" : "", ": the shapes must match");
  require(a.node_size() == b.node_size(), where, "A has node size d = ", a.node_size(),
          ", B has d = ", b.node_size(), ": they must be equal");
  require(params.small_entries >= 0 && params.small_entries <= impl::hisparse::add_small_max,
          where, "HiSparseAddParams::small_entries = ", params.small_entries,
          " must be in [0, ", impl::hisparse::add_small_max, "]");
  require(params.small_pairs_per_team >= 0 && params.merge_team_size >= 0 &&
              params.team_size >= 0,
          where, "HiSparseAddParams team sizes must be >= 0 (0: default), got ",
          params.small_pairs_per_team, ", ", params.merge_team_size, ", ", params.team_size);
  require(params.max_teams >= 0, where,
          "HiSparseAddParams::max_teams must be >= 0 (0: default), got ", params.max_teams);
  impl::hisparse::AddLaunch launch = impl::hisparse::default_add_launch<exec>();
  launch.small_entries = params.small_entries;
  launch.merge = params.merge;
  if (params.small_pairs_per_team > 0) launch.small_pairs_per_team = params.small_pairs_per_team;
  if (params.merge_team_size > 0) launch.merge_team = params.merge_team_size;
  if (params.team_size > 0) launch.big_team = params.team_size;
  launch.max_teams = params.max_teams;
  launch.warp_pairs = launch.warp_pairs && params.warp_pairs &&
                      impl::hisparse::warp_pairs_possible<exec>(a.node_size());
  auto data = impl::hisparse::add_hisparse<S>(a.data(), a.transposed(), a.scale(), b.data(),
                                              b.transposed(), b.scale(), a.nrows(), a.ncols(),
                                              launch, workspace);
  return Matrix(std::shared_ptr<const typename Matrix::data_type>(std::move(data)), false, S(1));
}
}  // namespace hisparse
}  // namespace impl

/// C = op(A) + op(B), where op applies each operand's state (transposed flag and scale), e.g.
/// add(A.transpose(), B.scaled(2)) = A^T + 2 B, by a dual top-down traversal of both trees on
/// their device (impl/hisparse_add.hpp). The result is new content (not transposed, scale 1)
/// with the node size of A and B and the conversion's node rules; entries whose values sum to
/// exactly zero are kept in sparse nodes (a zero slot of a dense node reads as absent). Throws
/// std::invalid_argument when the shapes of op(A) and op(B) or the node sizes differ, or for
/// invalid params. O(nodes + entries) work, one launch per tree level and pair class; memory:
/// a pool of about the two inputs' bytes while adding, the exact result after.
template <class S, class O, class D>
HiSparseMatrix<S, O, D> add(const HiSparseMatrix<S, O, D>& a, const HiSparseMatrix<S, O, D>& b,
                            const HiSparseAddParams& params = {}) {
  return impl::hisparse::add_checked(a, b, params, nullptr);
}

/// spk::add with a workspace kept between calls (see HiSparseAddWorkspace); same result.
template <class S, class O, class D>
HiSparseMatrix<S, O, D> add(const HiSparseMatrix<S, O, D>& a, const HiSparseMatrix<S, O, D>& b,
                            const HiSparseAddParams& params, HiSparseAddWorkspace<D>& workspace) {
  return impl::hisparse::add_checked(a, b, params, &workspace);
}

}  // namespace spk
