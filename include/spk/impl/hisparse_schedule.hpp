// spk/impl/hisparse_schedule.hpp: the node-type scheduler of HiSparse (Derler et al., section 4),
// built without dynamic parallelism.
//
// The paper's GPU controller launches kernels from the device whenever a queue of nodes of one
// type and size range fills up. Kokkos cannot launch from the device, so spk keeps the device
// queues and replaces the controller by the host, which needs no read-backs: a HiSparse matrix
// is static, so the conversion already counted, per level, how many nodes fall in each queue
// (type and entry-count bin, hisparse::work_bin). The traversal therefore runs level by level:
// for each level and each non-empty bin one launch, sized exactly, whose groups of lanes (the
// bin's width: a thread, 8 lanes, a warp or a team of 256 per node, so "many small nodes per
// team, one heavy node per team") take the queued nodes of that bin and push every child into
// the next level's queue of the child's bin with a device-side atomic tail. The leaf level's
// queues are the work lists of SpMV, kept as the matrix's plan (built on the first product,
// shared by copies, transposed and scaled views), so a product launches only the leaf kernels:
// one launch per non-empty leaf bin plus y = beta y. HiSparseSpmvParams::traverse re-runs the
// traversal in every product (levels - 1 levels of launches more) to measure its cost.
#pragma once

#include <Kokkos_Core.hpp>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include <spk/impl/hisparse_build.hpp>
#include <spk/impl/device_info.hpp>
#include <spk/impl/format_convert.hpp>
#include <spk/impl/hisparse_node.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/radix_sort.hpp>
#include <spk/impl/warp.hpp>

namespace spk {
namespace impl {
namespace hisparse {

/// A queued node: its reference and its block coordinates (the node covers rows
/// [rb * span, (rb + 1) * span) for the span of its level; at the leaf level span = d).
struct WorkItem {
  std::uint64_t ref;
  std::int32_t rb;
  std::int32_t cb;
};

/// The queues of one level: the items of bin b at [begin[b], begin[b] + count[b]) of items;
/// tail[b] is the device-side fill position while the level above is expanded.
template <class Device>
struct LevelQueues {
  Kokkos::View<WorkItem*, Device> items;
  std::array<std::int64_t, num_bins> begin{};
  std::array<std::int64_t, num_bins> count{};
  Kokkos::View<std::int64_t*, Device> tail;
};

/// Work lists of every level (level.back(): the leaves, what SpMV processes).
template <class Device>
struct BandPlan;

template <class Device>
struct Plan {
  std::vector<LevelQueues<Device>> level;
  /// The leaves grouped by output band for op = N ([0]) and T ([1]), made on first use.
  std::shared_ptr<BandPlan<Device>> bands[2];
  /// The stream kernel shape chosen by timing for op = N ([0]) and T ([1])
  /// (HiSparseSpmvParams::stream_shape 0, see choose_stream_shape in hisparse_spmv.hpp); 0
  /// until the first such product in that direction. Kept here, not in a BandPlan, so that
  /// products regrouping a fresh band plan (traverse) time it once too.
  int stream_shape[2] = {0, 0};
  std::size_t memory_bytes() const;
};

/// How the nodes of a bin are spread over lanes: `lanes` cooperate on one node (a thread, 8
/// lanes, a warp, or a team of 256 = 8 warps), `groups` nodes per team. One lane per node and
/// one node per team on CPU backends.
struct Geometry {
  int lanes = 1;
  int groups = 1;
  int team_size() const { return lanes > 32 ? lanes / 32 : groups; }
  int vector() const { return lanes > 32 ? 32 : lanes; }
};

/// True when ExecSpace's warps are 32 wide (impl/warp.hpp): the only case in which the kernels
/// below spread a node over several lanes. Elsewhere (CPU backends, and GPU backends without a
/// Warp specialisation) one lane takes one node.
template <class ExecSpace>
constexpr bool wide_warps() {
  return Warp<ExecSpace>::size == 32;
}

template <class ExecSpace>
Geometry geometry(unsigned bin) {
  if (!wide_warps<ExecSpace>()) return {1, 1};
  switch (bin) {
    case bin_dense:
    case bin_huge: return {256, 1};
    case bin_large: return {32, 4};
    case bin_medium: return {8, 16};
    default: return {1, 128};
  }
}

/// The lane and group of the calling thread under Geometry g (see geometry()).
struct LaneInfo {
  int group;   ///< which of the team's nodes
  int lane;    ///< rank among the node's lanes
  int stride;  ///< lanes on the node
};

template <class ExecSpace, class Member>
KOKKOS_INLINE_FUNCTION LaneInfo lane_info(const Member& m, int lanes) {
  if (lanes > 32)
    return {0, m.team_rank() * Warp<ExecSpace>::size + Warp<ExecSpace>::lane(),
            m.team_size() * Warp<ExecSpace>::size};
  const int w = Warp<ExecSpace>::size < lanes ? Warp<ExecSpace>::size : lanes;
  return {m.team_rank(), Warp<ExecSpace>::lane() % w, w};
}

/// Calls f(r, c, slot) for the entries of node `nd` taken by lane `lane` of `stride` lanes:
/// dense nodes by slot index (null / zero slots skipped), COO1/COO2 entry by entry, COO4 four
/// entries per lane at a time (one 8-byte coordinate load, one vector load of four slots).
/// Values = false: a sparse node's slots are not read (f gets Slot(0)), for callers that need
/// the positions only.
template <class ExecSpace, class Slot, bool Values = true, class F>
KOKKOS_INLINE_FUNCTION void for_each_entry(const NodeView& nd, int log2d, int lane, int stride,
                                           F&& f) {
  const unsigned t = nd.type();
  if (t == dense) {
    const int dd = 1 << (2 * log2d);
    const Slot* s = nd.slots<Slot>(0);
    for (int idx = lane; idx < dd; idx += stride) {
      const Slot v = s[idx];
      if (v != Slot(0)) f(unsigned(idx >> log2d), unsigned(idx & ((1 << log2d) - 1)), v);
    }
    return;
  }
  const std::int64_t n = nd.count(0);
  const std::uint16_t* co = nd.coords();
  const Slot* s = nd.slots<Slot>(n);
  if (t != coo4) {
    for (std::int64_t e = lane; e < n; e += stride)
      f(coord_row(co[e]), coord_col(co[e]), Values ? s[e] : Slot(0));
    return;
  }
  for (std::int64_t g = lane; 4 * g < n; g += stride) {
    const std::uint64_t packed = reinterpret_cast<const std::uint64_t*>(co)[g];
    Slot v[4];
    if constexpr (Values) Warp<ExecSpace>::template load<4>(s + 4 * g, v);
    else for (int j = 0; j < 4; ++j) v[j] = Slot(0);
    const int m = n - 4 * g < 4 ? int(n - 4 * g) : 4;
    for (int j = 0; j < m; ++j) {
      const std::uint16_t p = std::uint16_t(packed >> (16 * j));
      f(coord_row(p), coord_col(p), v[j]);
    }
  }
}

/// Expands the queued inner nodes of one bin of a level: every child goes to the next level's
/// queue of its bin. Enqueueing is aggregated per team: the team counts its children per bin
/// in scratch, reserves each bin's range with one device atomic, then writes (so the queues'
/// tails see one atomic per team and bin, not one per child).
template <class S, class Device>
struct Expand {
  using exec = typename Device::execution_space;
  using ref_type = ref_t<S>;
  using counters = Kokkos::View<std::int64_t*, typename exec::scratch_memory_space,
                                Kokkos::MemoryUnmanaged>;
  const char* pool;
  int log2d;
  int lanes, groups;
  Kokkos::View<const WorkItem*, Device> in;
  std::int64_t begin, count;
  Kokkos::View<WorkItem*, Device> out;
  Kokkos::View<std::int64_t*, Device> tail;

  static std::size_t scratch_bytes() { return counters::shmem_size(2 * num_bins); }

  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const LaneInfo li = lane_info<exec>(m, lanes);
    const std::int64_t k = std::int64_t(m.league_rank()) * groups + li.group;
    const bool active = k < count;  // every lane reaches the barriers below
    counters cnt(m.team_scratch(0), 2 * num_bins);
    const int tid = lanes > 32 ? li.lane : m.team_rank() * li.stride + li.lane;
    const int nthreads = lanes > 32 ? li.stride : m.team_size() * li.stride;
    for (int i = tid; i < int(2 * num_bins); i += nthreads) cnt(i) = 0;
    m.team_barrier();
    const int d = 1 << log2d;
    WorkItem w{0, 0, 0};
    if (active) w = in(begin + k);
    const NodeView nd{pool, w.ref};
    if (active)
      for_each_entry<exec, ref_type>(nd, log2d, li.lane, li.stride,
                                     [&](unsigned, unsigned, ref_type child) {
                                       const NodeView cn{pool, std::uint64_t(child)};
                                       atomic_add_int(&cnt(work_bin(cn.type(), cn.count(d))),
                                                     std::int64_t(1));
                                     });
    m.team_barrier();
    if (tid == 0)
      for (unsigned b = 0; b < num_bins; ++b)
        cnt(num_bins + b) = cnt(b) > 0 ? atomic_fetch_add_int(&tail(b), cnt(b)) : 0;
    m.team_barrier();
    for (int i = tid; i < int(num_bins); i += nthreads) cnt(i) = 0;
    m.team_barrier();
    if (active)
      for_each_entry<exec, ref_type>(
          nd, log2d, li.lane, li.stride, [&](unsigned r, unsigned c, ref_type child) {
            const NodeView cn{pool, std::uint64_t(child)};
            const unsigned b = work_bin(cn.type(), cn.count(d));
            const std::int64_t at = cnt(num_bins + b) + atomic_fetch_add_int(&cnt(b), std::int64_t(1));
            out(at) = WorkItem{std::uint64_t(child), std::int32_t(w.rb * d + int(r)),
                               std::int32_t(w.cb * d + int(c))};
          });
  }
};

/// Fills the queues of levels 1 .. levels - 1 from the queue of level 0 (the root).
template <class S, class Device>
void traverse(const HiSparseData<Device>& a, Plan<Device>& plan) {
  using exec = typename Device::execution_space;
  for (int l = 0; l + 1 < a.levels; ++l) {
    auto& in = plan.level[std::size_t(l)];
    auto& next = plan.level[std::size_t(l) + 1];
    auto h_tail = Kokkos::create_mirror_view(next.tail);
    for (unsigned b = 0; b < num_bins; ++b) h_tail(b) = next.begin[b];
    Kokkos::deep_copy(next.tail, h_tail);
    for (unsigned b = 0; b < num_bins; ++b) {
      if (in.count[b] == 0) continue;
      const Geometry g = geometry<exec>(b);
      Expand<S, Device> f{reinterpret_cast<const char*>(a.pool.data()),
                          a.log2d,
                          g.lanes,
                          g.groups,
                          in.items,
                          in.begin[b],
                          in.count[b],
                          next.items,
                          next.tail};
      const std::int64_t league = (in.count[b] + g.groups - 1) / g.groups;
      Kokkos::TeamPolicy<exec> policy(int(league), g.team_size(), g.vector());
      policy = policy.set_scratch_size(0, Kokkos::PerTeam(Expand<S, Device>::scratch_bytes()));
      Kokkos::parallel_for("spk::hisparse::expand", policy, f);
    }
  }
}

template <class Device>
std::size_t Plan<Device>::memory_bytes() const {
  std::size_t b = 0;
  for (const auto& q : level) b += q.items.extent(0) * sizeof(WorkItem);
  for (const auto& bp : bands)
    if (bp) b += bp->memory_bytes();
  return b;
}

/// Allocates the queues of every level with the conversion's exact counts and runs the
/// traversal from the root. O(nodes) work, one launch per level and non-empty bin.
template <class S, class Device>
std::shared_ptr<Plan<Device>> make_plan(const HiSparseData<Device>& a) {
  auto plan = std::make_shared<Plan<Device>>();
  const int levels = a.levels;
  plan->level.resize(std::size_t(levels));
  for (int l = 0; l < levels; ++l) {
    auto& q = plan->level[std::size_t(l)];
    std::int64_t total = 0;
    for (unsigned b = 0; b < num_bins; ++b) {
      q.begin[b] = total;
      q.count[b] = a.stats.level.empty() ? 0 : a.stats.level[std::size_t(l)].bin_nodes[b];
      total += q.count[b];
    }
    q.items = Kokkos::View<WorkItem*, Device>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hisparse::queue"),
        std::size_t(total));
    q.tail = Kokkos::View<std::int64_t*, Device>("spk::hisparse::tail", num_bins);
  }
  if (a.root == 0) return plan;
  {
    auto& q0 = plan->level[0];
    unsigned rb = 0;
    while (q0.count[rb] == 0) ++rb;
    auto h = Kokkos::create_mirror_view(Kokkos::subview(q0.items, std::make_pair(q0.begin[rb],
                                                                                 q0.begin[rb] + 1)));
    h(0) = WorkItem{a.root, 0, 0};
    Kokkos::deep_copy(Kokkos::subview(q0.items, std::make_pair(q0.begin[rb], q0.begin[rb] + 1)),
                      h);
  }
  traverse<S>(a, *plan);
  return plan;
}

/// The leaves of one product direction grouped by output band (op = N: leaf row band, op = T:
/// leaf column band), for SpMV without atomics into y. Within a band the leaves are sorted by
/// bin, so a team takes its band's bins one after the other, each with that bin's lanes per
/// node; a band of more than `chunk_entries` entries is cut at leaf boundaries into chunks taken
/// by several warps (such "split" bands are pre-scaled by beta and added with atomics).
template <class Device>
struct BandPlan {
  Kokkos::View<WorkItem*, Device> leaves;             // sorted by (band, bin)
  Kokkos::View<std::uint32_t*, Device> bins;          // bin of each sorted leaf
  Kokkos::View<std::int64_t*, Device> chunk_begin;    // first leaf of each chunk, + end
  Kokkos::View<std::int32_t*, Device> chunk_band;     // band of each chunk
  Kokkos::View<std::uint8_t*, Device> chunk_split;    // the chunk's band is split
  Kokkos::View<std::int32_t*, Device> split_bands;    // bands cut into several chunks
  std::int64_t chunks = 0;
  std::int64_t nsplit = 0;
  std::size_t memory_bytes() const {
    return leaves.extent(0) * (sizeof(WorkItem) + sizeof(std::uint32_t)) +
           chunk_begin.extent(0) * sizeof(std::int64_t) +
           chunk_band.extent(0) * (sizeof(std::int32_t) + 1) +
           split_bands.extent(0) * sizeof(std::int32_t);
  }
};

/// Entries a warp takes at most from one band before the band is split: about 4 chunks per
/// warp the device keeps resident (64 per multiprocessor on GPUs), between 256 and 2048, so
/// long bands of power-law matrices spread over several warps and few long bands still fill
/// the device.
template <class ExecSpace>
std::int64_t band_chunk_entries(std::int64_t entries) {
  const std::int64_t resident =
      std::int64_t(multiprocessor_count<ExecSpace>()) * (is_gpu_space<ExecSpace>() ? 64 : 1);
  const std::int64_t target = entries / (4 * resident);
  return target < 256 ? 256 : target > 2048 ? 2048 : target;
}

/// Groups the leaf queue `q` by output band for op = T (trans) or N, on the device: a stable
/// radix sort by (band, bin), per-band leaf and entry counts, and the chunks. nbands = output
/// length / d rounded up; every band gets at least one chunk (an empty band's chunk writes
/// beta * y). A few read-backs (totals).
template <class Device>
BandPlan<Device> make_band_plan(const HiSparseData<Device>& a, const LevelQueues<Device>& q,
                                bool trans) {
  using exec = typename Device::execution_space;
  BandPlan<Device> p;
  const std::int64_t n = std::int64_t(q.items.extent(0));
  const int d = a.d;
  const int log2d = a.log2d;
  const std::int64_t nout = trans ? a.ncols : a.nrows;
  const std::int64_t nbands = (nout + d - 1) / d;
  const char* pool = reinterpret_cast<const char*>(a.pool.data());
  const auto items = q.items;
  Kokkos::View<std::uint64_t*, Device> keys(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hisparse::band_keys"), std::size_t(n));
  Kokkos::View<std::int64_t*, Device> perm(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hisparse::band_perm"), std::size_t(n));
  Kokkos::parallel_for(
      "spk::hisparse::band_keys", Range64<exec>(0, n), KOKKOS_LAMBDA(const std::int64_t i) {
        const WorkItem w = items(i);
        const NodeView nd{pool, w.ref};
        const std::uint64_t band = std::uint64_t(trans ? w.cb : w.rb);
        keys(i) = band * 8 + work_bin(nd.type(), nd.count(1 << log2d));
        perm(i) = i;
      });
  stable_radix_sort<exec>(keys, perm, bit_width(std::uint64_t(nbands) * 8), RadixSortParams{});
  p.leaves = Kokkos::View<WorkItem*, Device>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hisparse::band_leaves"), std::size_t(n));
  p.bins = Kokkos::View<std::uint32_t*, Device>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hisparse::band_bins"), std::size_t(n));
  // entries of each sorted leaf (dense: d * d, an upper bound), leaves per band
  Kokkos::View<std::int64_t*, Device> ent(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hisparse::band_entries"),
      std::size_t(n) + 1);
  Kokkos::View<std::int64_t*, Device> band_ptr("spk::hisparse::band_ptr", std::size_t(nbands) + 1);
  const auto leaves = p.leaves;
  const auto bins = p.bins;
  Kokkos::parallel_for(
      "spk::hisparse::band_fill", Range64<exec>(0, n), KOKKOS_LAMBDA(const std::int64_t i) {
        const WorkItem w = items(perm(i));
        leaves(i) = w;
        bins(i) = std::uint32_t(keys(i) & 7);
        ent(i + 1) = NodeView{pool, w.ref}.count(1 << log2d);
        atomic_add_int(&band_ptr(std::int64_t(keys(i) >> 3) + 1), std::int64_t(1));
      });
  row_lengths_to_offsets<exec>(band_ptr);
  Kokkos::parallel_for(
      "spk::hisparse::band_ent0", Range64<exec>(0, 1),
      KOKKOS_LAMBDA(const std::int64_t) { ent(0) = 0; });
  row_lengths_to_offsets<exec>(ent);  // ent(i) = entries before sorted leaf i
  // chunks per band: leaf i goes to chunk floor((ent(i) - ent(band start)) / chunk_entries)
  Kokkos::View<std::int64_t*, Device> chunk_ptr("spk::hisparse::chunk_ptr", std::size_t(nbands) + 1);
  const std::int64_t ce = band_chunk_entries<exec>(a.stats.stored_entries);
  Kokkos::parallel_for(
      "spk::hisparse::band_chunks", Range64<exec>(0, nbands), KOKKOS_LAMBDA(const std::int64_t b) {
        const std::int64_t lo = band_ptr(b), hi = band_ptr(b + 1);
        chunk_ptr(b + 1) = lo == hi ? 1 : (ent(hi - 1) - ent(lo)) / ce + 1;
      });
  p.chunks = row_lengths_to_offsets<exec>(chunk_ptr);
  p.chunk_begin = Kokkos::View<std::int64_t*, Device>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hisparse::chunk_begin"),
      std::size_t(p.chunks) + 1);
  p.chunk_band = Kokkos::View<std::int32_t*, Device>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hisparse::chunk_band"),
      std::size_t(p.chunks));
  p.chunk_split = Kokkos::View<std::uint8_t*, Device>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hisparse::chunk_split"),
      std::size_t(p.chunks));
  const auto cb = p.chunk_begin;
  const auto cband = p.chunk_band;
  const auto csplit = p.chunk_split;
  const std::int64_t nchunks = p.chunks;
  Kokkos::parallel_for(
      "spk::hisparse::band_chunk_fill", Range64<exec>(0, nbands),
      KOKKOS_LAMBDA(const std::int64_t b) {
        const std::int64_t lo = band_ptr(b), hi = band_ptr(b + 1);
        const std::int64_t c0 = chunk_ptr(b), nc = chunk_ptr(b + 1) - c0;
        std::int64_t i = lo;
        for (std::int64_t j = 0; j < nc; ++j) {
          cb(c0 + j) = i;
          cband(c0 + j) = std::int32_t(b);
          csplit(c0 + j) = nc > 1 ? 1 : 0;
          while (i < hi && (ent(i) - ent(lo)) / ce == j) ++i;
        }
        if (b == nbands - 1) cb(nchunks) = n;
      });
  // split bands (pre-scaled by beta, then added atomically)
  Kokkos::View<std::int64_t*, Device> split_ptr("spk::hisparse::split_ptr", std::size_t(nbands) + 1);
  Kokkos::parallel_for(
      "spk::hisparse::split_count", Range64<exec>(0, nbands), KOKKOS_LAMBDA(const std::int64_t b) {
        split_ptr(b + 1) = chunk_ptr(b + 1) - chunk_ptr(b) > 1 ? 1 : 0;
      });
  p.nsplit = row_lengths_to_offsets<exec>(split_ptr);
  p.split_bands = Kokkos::View<std::int32_t*, Device>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hisparse::split_bands"),
      std::size_t(p.nsplit));
  const auto sb = p.split_bands;
  Kokkos::parallel_for(
      "spk::hisparse::split_fill", Range64<exec>(0, nbands), KOKKOS_LAMBDA(const std::int64_t b) {
        if (split_ptr(b + 1) != split_ptr(b)) sb(split_ptr(b)) = std::int32_t(b);
      });
  return p;
}

}  // namespace hisparse
}  // namespace impl
}  // namespace spk
