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
#include <spk/impl/hisparse_node.hpp>
#include <spk/impl/kokkos_compat.hpp>
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
struct Plan {
  std::vector<LevelQueues<Device>> level;
  std::size_t memory_bytes() const {
    std::size_t b = 0;
    for (const auto& q : level) b += q.items.extent(0) * sizeof(WorkItem);
    return b;
  }
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

template <class ExecSpace>
Geometry geometry(unsigned bin) {
  if (!is_gpu_space<ExecSpace>()) return {1, 1};
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
template <class ExecSpace, class Slot, class F>
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
    for (std::int64_t e = lane; e < n; e += stride) f(coord_row(co[e]), coord_col(co[e]), s[e]);
    return;
  }
  for (std::int64_t g = lane; 4 * g < n; g += stride) {
    const std::uint64_t packed = reinterpret_cast<const std::uint64_t*>(co)[g];
    Slot v[4];
    Warp<ExecSpace>::template load<4>(s + 4 * g, v);
    const int m = n - 4 * g < 4 ? int(n - 4 * g) : 4;
    for (int j = 0; j < m; ++j) {
      const std::uint16_t p = std::uint16_t(packed >> (16 * j));
      f(coord_row(p), coord_col(p), v[j]);
    }
  }
}

/// Expands the queued inner nodes of one bin of a level: every child goes to the next level's
/// queue of its bin.
template <class S, class Device>
struct Expand {
  using exec = typename Device::execution_space;
  using ref_type = ref_t<S>;
  const char* pool;
  int log2d;
  int lanes, groups;
  Kokkos::View<const WorkItem*, Device> in;
  std::int64_t begin, count;
  Kokkos::View<WorkItem*, Device> out;
  Kokkos::View<std::int64_t*, Device> tail;

  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const LaneInfo li = lane_info<exec>(m, lanes);
    const std::int64_t k = std::int64_t(m.league_rank()) * groups + li.group;
    if (k >= count) return;
    const WorkItem w = in(begin + k);
    const NodeView nd{pool, w.ref};
    const int d = 1 << log2d;
    for_each_entry<exec, ref_type>(nd, log2d, li.lane, li.stride,
                                   [&](unsigned r, unsigned c, ref_type child) {
                                     const NodeView cn{pool, std::uint64_t(child)};
                                     const unsigned b = work_bin(cn.type(), cn.count(d));
                                     const std::int64_t at = Kokkos::atomic_fetch_add(
                                         &tail(b), std::int64_t(1));
                                     out(at) = WorkItem{std::uint64_t(child),
                                                        std::int32_t(w.rb * d + int(r)),
                                                        std::int32_t(w.cb * d + int(c))};
                                   });
  }
};

/// Launches f (a functor over TeamPolicy members) for the `count` queued nodes of bin b.
template <class ExecSpace, class F>
void launch_bin(const char* label, unsigned b, std::int64_t count, const F& f) {
  const Geometry g = geometry<ExecSpace>(b);
  const std::int64_t league = (count + g.groups - 1) / g.groups;
  Kokkos::TeamPolicy<ExecSpace> policy(int(league), g.team_size(), g.vector());
  Kokkos::parallel_for(label, policy, f);
}

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
      launch_bin<exec>("spk::hisparse::expand", b, in.count[b], f);
    }
  }
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

}  // namespace hisparse
}  // namespace impl
}  // namespace spk
