// spk/impl/hisparse_spmv.hpp: the leaf kernels of HiSparse SpMV (Derler et al., section 5).
//
// Every queued leaf adds alpha * scale * (its block of A) * x into y, after y = beta * y. The
// transposed product only swaps the roles of a leaf's local row and column (and of its block
// coordinates), so both directions read the same bytes in the same order:
//   - COO1, COO2 and small COO4 leaves (a thread each) and medium COO4 leaves (8 lanes each):
//     one atomic add into y per entry;
//   - large COO4 leaves (a warp each) and huge ones (a team of 256 each): the lanes first sum
//     into a d-entry buffer in team scratch (shared memory), then add its nonzero entries into y,
//     one atomic per touched row (column for op = T) instead of one per entry;
//   - dense leaves (a team each): a thread per row (op = N) or per column (op = T) sums its line
//     and adds it with one atomic; the slots it reads are row-major, so op = T reads them
//     coalesced and op = N through the cache.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>

#include <spk/impl/format_common.hpp>
#include <spk/impl/hisparse_node.hpp>
#include <spk/impl/hisparse_schedule.hpp>
#include <spk/impl/warp.hpp>

namespace spk {
namespace impl {
namespace hisparse {

template <class S, class Device, class XView, class YView, bool Trans, unsigned Bin>
struct LeafSpmv {
  using exec = typename Device::execution_space;
  using scratch = Kokkos::View<S*, typename exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  static constexpr bool buffered = Bin == bin_large || Bin == bin_huge;
  const char* pool;
  int log2d;
  int lanes, groups;
  Kokkos::View<const WorkItem*, Device> items;
  std::int64_t begin, count;
  XView x;
  YView y;
  S factor;  // alpha * the matrix's scale

  /// Team scratch bytes of a launch: one d-entry buffer per node of the team.
  static std::size_t scratch_bytes(int d, int groups_per_team) {
    return buffered ? scratch::shmem_size(std::size_t(d) * std::size_t(groups_per_team)) : 0;
  }

  template <class Member>
  KOKKOS_INLINE_FUNCTION void sync(const Member& m) const {
    if (lanes > 32) m.team_barrier();
    else Warp<exec>::sync();
  }

  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const LaneInfo li = lane_info<exec>(m, lanes);
    const std::int64_t k = std::int64_t(m.league_rank()) * groups + li.group;
    const int d = 1 << log2d;
    if constexpr (buffered) {
      // k is uniform across the lanes that share a buffer and its barriers
      if (k >= count) return;
      const WorkItem w = items(begin + k);
      const NodeView nd{pool, w.ref};
      scratch all(m.team_scratch(0), std::size_t(d) * std::size_t(groups));
      S* buf = all.data() + std::size_t(li.group) * std::size_t(d);
      for (int i = li.lane; i < d; i += li.stride) buf[i] = S(0);
      sync(m);
      const std::int64_t in_base = std::int64_t(Trans ? w.rb : w.cb) * d;
      for_each_entry<exec, S>(nd, log2d, li.lane, li.stride, [&](unsigned r, unsigned c, S v) {
        Kokkos::atomic_add(&buf[Trans ? c : r], v * x(in_base + (Trans ? r : c)));
      });
      sync(m);
      const std::int64_t out_base = std::int64_t(Trans ? w.cb : w.rb) * d;
      for (int i = li.lane; i < d; i += li.stride) {
        const S v = buf[i];
        if (v != S(0)) Kokkos::atomic_add(&y(out_base + i), factor * v);
      }
    } else if constexpr (Bin == bin_dense) {
      if (k >= count) return;
      const WorkItem w = items(begin + k);
      const S* s = NodeView{pool, w.ref}.template slots<S>(0);
      const std::int64_t in_base = std::int64_t(Trans ? w.rb : w.cb) * d;
      const std::int64_t out_base = std::int64_t(Trans ? w.cb : w.rb) * d;
      for (int o = li.lane; o < d; o += li.stride) {
        S acc = S(0);
        bool any = false;
        for (int i = 0; i < d; ++i) {
          const S v = Trans ? s[i * d + o] : s[o * d + i];
          if (v != S(0)) {
            acc += v * x(in_base + i);
            any = true;
          }
        }
        if (any) Kokkos::atomic_add(&y(out_base + o), factor * acc);
      }
    } else {
      if (k >= count) return;
      const WorkItem w = items(begin + k);
      const NodeView nd{pool, w.ref};
      const std::int64_t in_base = std::int64_t(Trans ? w.rb : w.cb) * d;
      const std::int64_t out_base = std::int64_t(Trans ? w.cb : w.rb) * d;
      for_each_entry<exec, S>(nd, log2d, li.lane, li.stride, [&](unsigned r, unsigned c, S v) {
        Kokkos::atomic_add(&y(out_base + (Trans ? c : r)),
                           factor * v * x(in_base + (Trans ? r : c)));
      });
    }
  }
};

/// Runs the leaf kernels of every non-empty leaf bin: y += factor * op(A) * x (op = T when
/// trans), where y was already scaled by beta.
template <bool Trans, unsigned Bin, class S, class Device, class XView, class YView>
void leaf_spmv_bin(const HiSparseData<Device>& a, const LevelQueues<Device>& q, S factor,
                   const XView& x, const YView& y) {
  using exec = typename Device::execution_space;
  if (q.count[Bin] == 0) return;
  using F = LeafSpmv<S, Device, input_vector_t<XView>, YView, Trans, Bin>;
  const Geometry g = geometry<exec>(Bin);
  F f{reinterpret_cast<const char*>(a.pool.data()),
      a.log2d,
      g.lanes,
      g.groups,
      q.items,
      q.begin[Bin],
      q.count[Bin],
      x,
      y,
      factor};
  const std::int64_t league = (q.count[Bin] + g.groups - 1) / g.groups;
  Kokkos::TeamPolicy<exec> policy(int(league), g.team_size(), g.vector());
  const std::size_t bytes = F::scratch_bytes(a.d, g.groups);
  if (bytes > 0) policy = policy.set_scratch_size(0, Kokkos::PerTeam(bytes));
  Kokkos::parallel_for(Trans ? "spk::hisparse::spmv_t" : "spk::hisparse::spmv", policy, f);
}

template <bool Trans, class S, class Device, class XView, class YView>
void leaf_spmv(const HiSparseData<Device>& a, const LevelQueues<Device>& q, S factor,
               const XView& x, const YView& y) {
  // heavy bins first: their teams start early and small nodes fill the tail
  leaf_spmv_bin<Trans, bin_dense>(a, q, factor, x, y);
  leaf_spmv_bin<Trans, bin_huge>(a, q, factor, x, y);
  leaf_spmv_bin<Trans, bin_large>(a, q, factor, x, y);
  leaf_spmv_bin<Trans, bin_medium>(a, q, factor, x, y);
  leaf_spmv_bin<Trans, bin_small>(a, q, factor, x, y);
  leaf_spmv_bin<Trans, bin_coo2>(a, q, factor, x, y);
  leaf_spmv_bin<Trans, bin_coo1>(a, q, factor, x, y);
}

}  // namespace hisparse
}  // namespace impl
}  // namespace spk
