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

/// The lines of a dense leaf (rows for op = N, columns for T) taken by lane `lane` of `stride`:
/// add(o, sum of slot * x over line o) for each line holding a nonzero slot (zero slots are
/// absent entries and never touch x).
template <bool Trans, class S, class XView, class Add>
KOKKOS_INLINE_FUNCTION void dense_lines(const S* s, int d, int lane, int stride, const XView& x,
                                        std::int64_t in_base, const Add& add) {
  for (int o = lane; o < d; o += stride) {
    S acc = S(0);
    bool any = false;
    for (int i = 0; i < d; ++i) {
      const S v = Trans ? s[i * d + o] : s[o * d + i];
      if (v != S(0)) {
        acc += v * x(in_base + i);
        any = true;
      }
    }
    if (any) add(o, acc);
  }
}

/// Adds factor * (block of leaf w) * x (its transpose when Trans) into y with `stride` lanes
/// (this one is `lane`); buf is the lanes' d-entry scratch buffer for the buffered bins, sync
/// orders the lanes' buffer accesses (a warp or team barrier). Bin is the leaf's bin.
template <class exec, bool Trans, unsigned Bin, class S, class XView, class YView, class Sync>
KOKKOS_INLINE_FUNCTION void leaf_product(const char* pool, int log2d, const WorkItem& w,
                                         int lane, int stride, S* buf, const XView& x,
                                         const YView& y, S factor, const Sync& sync) {
  const int d = 1 << log2d;
  const std::int64_t in_base = std::int64_t(Trans ? w.rb : w.cb) * d;
  const std::int64_t out_base = std::int64_t(Trans ? w.cb : w.rb) * d;
  const NodeView nd{pool, w.ref};
  if constexpr (Bin == bin_large || Bin == bin_huge) {
    for (int i = lane; i < d; i += stride) buf[i] = S(0);
    sync();
    for_each_entry<exec, S>(nd, log2d, lane, stride, [&](unsigned r, unsigned c, S v) {
      Kokkos::atomic_add(&buf[Trans ? c : r], v * x(in_base + (Trans ? r : c)));
    });
    sync();
    for (int i = lane; i < d; i += stride) {
      const S v = buf[i];
      if (v != S(0)) Kokkos::atomic_add(&y(out_base + i), factor * v);
    }
  } else if constexpr (Bin == bin_dense) {
    dense_lines<Trans>(nd.template slots<S>(0), d, lane, stride, x, in_base,
                       [&](int o, S acc) { Kokkos::atomic_add(&y(out_base + o), factor * acc); });
  } else {
    for_each_entry<exec, S>(nd, log2d, lane, stride, [&](unsigned r, unsigned c, S v) {
      Kokkos::atomic_add(&y(out_base + (Trans ? c : r)), factor * v * x(in_base + (Trans ? r : c)));
    });
  }
}

/// Whether a bin's lanes share a d-entry scratch buffer.
KOKKOS_INLINE_FUNCTION constexpr bool buffered_bin(unsigned b) {
  return b == bin_large || b == bin_huge;
}

/// One launch per bin (HiSparseLaunch::per_bin): the bin's own geometry (see geometry()).
template <class S, class Device, class XView, class YView, bool Trans, unsigned Bin>
struct LeafSpmv {
  using exec = typename Device::execution_space;
  using scratch = Kokkos::View<S*, typename exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
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
    return buffered_bin(Bin) ? scratch::shmem_size(std::size_t(d) * std::size_t(groups_per_team))
                             : 0;
  }

  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const LaneInfo li = lane_info<exec>(m, lanes);
    const std::int64_t k = std::int64_t(m.league_rank()) * groups + li.group;
    // k is uniform across the lanes that share a buffer and its barriers
    if (k >= count) return;
    const int d = 1 << log2d;
    S* buf = nullptr;
    if constexpr (buffered_bin(Bin)) {
      scratch all(m.team_scratch(0), std::size_t(d) * std::size_t(groups));
      buf = all.data() + std::size_t(li.group) * std::size_t(d);
    }
    const int lanes_ = lanes;
    leaf_product<exec, Trans, Bin>(pool, log2d, items(begin + k), li.lane, li.stride, buf, x, y,
                                   factor, [&]() {
                                     if (lanes_ > 32) m.team_barrier();
                                     else Warp<exec>::sync();
                                   });
  }
};

/// Every leaf bin in one launch (HiSparseLaunch::fused): teams [team_begin[b], team_begin[b +
/// 1]) take bin b, so a team works on one node type and size class. On GPUs every team has 8
/// warps; a bin's nodes per team follow its width: 256 (a thread per node), 32 (8 lanes), 8 (a
/// warp, with its own scratch buffer), 1 (the whole team); on CPU backends one node per team.
template <class S, class Device, class XView, class YView, bool Trans>
struct LeafSpmvFused {
  using exec = typename Device::execution_space;
  using scratch = Kokkos::View<S*, typename exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  static constexpr bool gpu = wide_warps<exec>();
  static constexpr int team_threads = gpu ? 256 : 1;
  const char* pool;
  int log2d;
  Kokkos::View<const WorkItem*, Device> items;
  std::int64_t begin[num_bins];
  std::int64_t count[num_bins];
  std::int64_t team_begin[num_bins + 1];  // teams of the j-th range
  unsigned range_bin[num_bins];           // the bin of the j-th range
  XView x;
  YView y;
  S factor;

  /// Lanes per node of bin b in this launch.
  KOKKOS_INLINE_FUNCTION static constexpr int lanes_of(unsigned b) {
    return !gpu ? 1
           : (b == bin_dense || b == bin_huge) ? 256
           : b == bin_large                    ? 32
           : b == bin_medium                   ? 8
                                               : 1;
  }
  KOKKOS_INLINE_FUNCTION static constexpr int nodes_per_team(unsigned b) { return team_threads / lanes_of(b); }
  /// Scratch bytes per team: the largest need of a bin (8 warp buffers on GPUs).
  static std::size_t scratch_bytes(int d) {
    return scratch::shmem_size(std::size_t(d) * std::size_t(nodes_per_team(bin_large)));
  }

  template <unsigned Bin, class Member>
  KOKKOS_INLINE_FUNCTION void run(const Member& m, std::int64_t t) const {
    constexpr int lanes = lanes_of(Bin);
    const int tid = m.team_rank() * Warp<exec>::size + Warp<exec>::lane();  // 0..255 on GPUs
    const int group = tid / lanes;
    const int lane = tid % lanes;
    const std::int64_t k = t * nodes_per_team(Bin) + group;
    if (k >= count[Bin]) return;  // uniform across a buffer's lanes (a warp or the team)
    S* buf = nullptr;
    if constexpr (buffered_bin(Bin)) {
      const int d = 1 << log2d;
      scratch all(m.team_scratch(0), std::size_t(d) * std::size_t(nodes_per_team(bin_large)));
      buf = all.data() + std::size_t(group) * std::size_t(d);
    }
    leaf_product<exec, Trans, Bin>(pool, log2d, items(begin[Bin] + k), lane, lanes, buf, x, y,
                                   factor, [&]() {
                                     if (lanes > 32) m.team_barrier();
                                     else Warp<exec>::sync();
                                   });
  }

  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const std::int64_t league = m.league_rank();
    unsigned j = 0;
    while (j + 1 < num_bins && league >= team_begin[j + 1]) ++j;
    const std::int64_t t = league - team_begin[j];
    switch (range_bin[j]) {
      case bin_dense: run<bin_dense>(m, t); break;
      case bin_coo1: run<bin_coo1>(m, t); break;
      case bin_coo2: run<bin_coo2>(m, t); break;
      case bin_small: run<bin_small>(m, t); break;
      case bin_medium: run<bin_medium>(m, t); break;
      case bin_large: run<bin_large>(m, t); break;
      default: run<bin_huge>(m, t); break;
    }
  }
};

/// One launch for every leaf bin (see LeafSpmvFused).
template <bool Trans, class S, class Device, class XView, class YView>
void leaf_spmv_fused(const HiSparseData<Device>& a, const LevelQueues<Device>& q, S factor,
                     const XView& x, const YView& y) {
  using exec = typename Device::execution_space;
  using F = LeafSpmvFused<S, Device, input_vector_t<XView>, YView, Trans>;
  F f{};
  f.pool = reinterpret_cast<const char*>(a.pool.data());
  f.log2d = a.log2d;
  f.items = q.items;
  f.x = x;
  f.y = y;
  f.factor = factor;
  // heavy bins first: their teams start early and the small nodes fill the tail
  const unsigned order[num_bins] = {bin_dense, bin_huge,  bin_large, bin_medium,
                                    bin_small, bin_coo2, bin_coo1};
  std::int64_t teams = 0;
  for (unsigned j = 0; j < num_bins; ++j) {
    const unsigned b = order[j];
    f.begin[b] = q.begin[b];
    f.count[b] = q.count[b];
    f.range_bin[j] = b;
    f.team_begin[j] = teams;
    teams += (q.count[b] + F::nodes_per_team(b) - 1) / F::nodes_per_team(b);
  }
  f.team_begin[num_bins] = teams;
  if (teams == 0) return;
  Kokkos::TeamPolicy<exec> policy(int(teams), F::gpu ? 8 : 1, F::gpu ? Warp<exec>::size : 1);
  policy = policy.set_scratch_size(0, Kokkos::PerTeam(F::scratch_bytes(a.d)));
  Kokkos::parallel_for(Trans ? "spk::hisparse::spmv_t_fused" : "spk::hisparse::spmv_fused",
                       policy, f);
}

/// Adds (block of leaf w) * x (its transpose when Trans) into the team's d-entry buffer `buf`
/// (shared memory, atomics) with `stride` lanes (this one is `lane`). A lane sums its
/// consecutive entries of one output in a register first (in a row-major leaf, op = N turns the
/// runs of a row into one shared atomic).
template <class exec, bool Trans, unsigned Bin, class S, class XView>
KOKKOS_INLINE_FUNCTION void leaf_accumulate(const char* pool, int log2d, const WorkItem& w,
                                            int lane, int stride, S* buf, const XView& x) {
  const int d = 1 << log2d;
  const std::int64_t in_base = std::int64_t(Trans ? w.rb : w.cb) * d;
  const NodeView nd{pool, w.ref};
  if constexpr (Bin == bin_dense) {
    dense_lines<Trans>(nd.template slots<S>(0), d, lane, stride, x, in_base,
                       [&](int o, S acc) { Kokkos::atomic_add(&buf[o], acc); });
  } else if (Trans && nd.type() == coo4 && stride > 1) {
    // op = T: lanes take consecutive entries (entry lane, lane + stride, ...), so a step
    // covers a few rows whose columns rarely collide in the buffer
    const std::int64_t n = nd.count(0);
    const std::uint16_t* co = nd.coords();
    const S* s = nd.template slots<S>(n);
    for (std::int64_t e = lane; e < n; e += stride) {
      const std::uint16_t pc = co[e];
      Kokkos::atomic_add(&buf[coord_col(pc)], s[e] * x(in_base + coord_row(pc)));
    }
  } else {
    // a lane's entries come in runs of four consecutive ones: for op = N, the runs of a row sum
    // in a register before one shared atomic
    int cur = -1;
    S acc = S(0);
    for_each_entry<exec, S>(nd, log2d, lane, stride, [&](unsigned r, unsigned c, S v) {
      const int o = int(Trans ? c : r);
      const S p = v * x(in_base + (Trans ? r : c));
      if (o == cur) {
        acc += p;
      } else {
        if (cur >= 0) Kokkos::atomic_add(&buf[cur], acc);
        cur = o;
        acc = p;
      }
    });
    if (cur >= 0) Kokkos::atomic_add(&buf[cur], acc);
  }
}

/// SpMV by output band (HiSparseSchedule::band): a warp per chunk of a band's leaves (see
/// BandPlan; teams of 4 warps on GPUs, each warp with its own chunk and scratch buffer; one lane
/// per team on CPU backends). The warp takes the chunk's bins in order, each with its lanes per
/// node (a lane, 8 lanes or the whole warp per leaf), summing into a d-entry buffer in shared
/// memory; then it writes its band of y once (y = beta y + alpha buf), or adds it atomically
/// when the band is split over several chunks. No atomics into y and no separate pass over y
/// for unsplit bands.
template <class S, class Device, class XView, class YView, bool Trans>
struct LeafSpmvBand {
  using exec = typename Device::execution_space;
  using scratch = Kokkos::View<S*, typename exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  static constexpr bool gpu = wide_warps<exec>();
  static constexpr int warp = Warp<exec>::size;
  static constexpr int warps_per_team = gpu ? 4 : 1;
  const char* pool;
  int log2d;
  Kokkos::View<const WorkItem*, Device> leaves;
  Kokkos::View<const std::uint32_t*, Device> bins;
  Kokkos::View<const std::int64_t*, Device> chunk_begin;
  Kokkos::View<const std::int32_t*, Device> chunk_band;
  Kokkos::View<const std::uint8_t*, Device> chunk_split;
  std::int64_t nchunks;
  XView x;
  YView y;
  S factor, beta;
  bool beta_zero;
  std::int64_t nout;

  KOKKOS_INLINE_FUNCTION static constexpr int lanes_of(unsigned b) {
    return !gpu ? 1 : b == bin_medium ? 8 : (b == bin_dense || b >= bin_large) ? warp : 1;
  }
  static std::size_t scratch_bytes(int d) {
    return scratch::shmem_size(std::size_t(d) * warps_per_team);
  }

  template <unsigned Bin>
  KOKKOS_INLINE_FUNCTION void run(int tid, std::int64_t lo, std::int64_t hi, S* buf) const {
    constexpr int lanes = lanes_of(Bin);
    constexpr int groups = warp / lanes;
    const int group = tid / lanes, lane = tid % lanes;
    for (std::int64_t k = lo + group; k < hi; k += groups)
      leaf_accumulate<exec, Trans, Bin>(pool, log2d, leaves(k), lane, lanes, buf, x);
  }

  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const std::int64_t c = std::int64_t(m.league_rank()) * warps_per_team + m.team_rank();
    if (c >= nchunks) return;  // uniform in the warp
    const int d = 1 << log2d;
    const int tid = Warp<exec>::lane();
    scratch all(m.team_scratch(0), std::size_t(d) * warps_per_team);
    S* buf = all.data() + std::size_t(m.team_rank()) * std::size_t(d);
    for (int i = tid; i < d; i += warp) buf[i] = S(0);
    Warp<exec>::sync();
    const std::int64_t end = chunk_begin(c + 1);
    std::int64_t i = chunk_begin(c);
    while (i < end) {  // the chunk's runs of equal bin, in bin order (uniform in the warp)
      const std::uint32_t b = bins(i);
      std::int64_t lo = i, hi = end;  // first leaf of a larger bin
      while (lo < hi) {
        const std::int64_t mid = (lo + hi) / 2;
        if (bins(mid) <= b) lo = mid + 1;
        else hi = mid;
      }
      if (lo <= i) lo = i + 1;  // progress even if a chunk's bins were not sorted
      switch (b) {
        case bin_dense: run<bin_dense>(tid, i, lo, buf); break;
        case bin_coo1: run<bin_coo1>(tid, i, lo, buf); break;
        case bin_coo2: run<bin_coo2>(tid, i, lo, buf); break;
        case bin_small: run<bin_small>(tid, i, lo, buf); break;
        case bin_medium: run<bin_medium>(tid, i, lo, buf); break;
        case bin_large: run<bin_large>(tid, i, lo, buf); break;
        default: run<bin_huge>(tid, i, lo, buf); break;
      }
      i = lo;
    }
    Warp<exec>::sync();
    const std::int64_t base = std::int64_t(chunk_band(c)) * d;
    const bool split = chunk_split(c) != 0;
    for (int t = tid; t < d && base + t < nout; t += warp) {
      const S v = buf[t];
      if (split) {
        if (v != S(0)) Kokkos::atomic_add(&y(base + t), factor * v);
      } else {
        y(base + t) = (beta_zero ? S(0) : beta * y(base + t)) + factor * v;
      }
    }
  }
};

/// y = beta y on the bands of p split over several chunks (their chunks add with atomics): one
/// small launch, only when there are any and beta != 1.
template <class S, class Device, class YView>
void scale_split_bands(const BandPlan<Device>& p, int d, S beta, const YView& y) {
  using exec = typename Device::execution_space;
  if (p.nsplit == 0 || beta == S(1)) return;
  const std::int64_t nout = std::int64_t(y.extent(0));
  const bool beta_zero = beta == S(0);
  const auto sb = p.split_bands;
  Kokkos::parallel_for(
      "spk::hisparse::scale_split_bands", Range64<exec>(0, p.nsplit * d),
      KOKKOS_LAMBDA(const std::int64_t k) {
        const std::int64_t row = std::int64_t(sb(k / d)) * d + k % d;
        if (row < nout) y(row) = beta_zero ? S(0) : beta * y(row);
      });
}

/// y = beta y + factor op(A) x by output bands (see LeafSpmvBand): the bands split over several
/// teams are pre-scaled first (one small launch, only when there are any), then one launch.
template <bool Trans, class S, class Device, class XView, class YView>
void leaf_spmv_band(const HiSparseData<Device>& a, const BandPlan<Device>& p, S factor, S beta,
                    const XView& x, const YView& y) {
  using exec = typename Device::execution_space;
  const std::int64_t nout = std::int64_t(y.extent(0));
  const int d = a.d;
  const bool beta_zero = beta == S(0);
  scale_split_bands(p, d, beta, y);
  using F = LeafSpmvBand<S, Device, input_vector_t<XView>, YView, Trans>;
  F f{reinterpret_cast<const char*>(a.pool.data()),
      a.log2d,
      p.leaves,
      p.bins,
      p.chunk_begin,
      p.chunk_band,
      p.chunk_split,
      p.chunks,
      x,
      y,
      factor,
      beta,
      beta_zero,
      nout};
  const std::int64_t league = (p.chunks + F::warps_per_team - 1) / F::warps_per_team;
  Kokkos::TeamPolicy<exec> policy(int(league), F::warps_per_team, F::warp);
  policy = policy.set_scratch_size(0, Kokkos::PerTeam(F::scratch_bytes(d)));
  Kokkos::parallel_for(Trans ? "spk::hisparse::spmv_t_band" : "spk::hisparse::spmv_band", policy,
                       f);
}

/// SpMV by output band with the sparse leaves of a chunk read as one stream of entry groups
/// (HiSparseSchedule::stream; the chunks of BandPlan, a warp per chunk as in LeafSpmvBand).
/// A group is four consecutive entries of a COO4 leaf (one 8-byte load of coordinates, one or
/// two 16-byte loads of values) or the one or two entries of a COO1 / COO2 leaf. The warp takes
/// the chunk's leaves 32 at a time (a lane loads one work item and, for COO4, the entry count,
/// the next 32 work items already in flight); a warp-wide scan of the leaves' group counts numbers
/// the groups, and the lanes take groups lane, lane + 32, ..., U per lane per step: each lane
/// finds its group's leaf by a binary search over the lanes' scan (shuffles), issues the loads of
/// its U groups, then their U x 4 gathers of x, then the products. So a lane has U groups of
/// loads in flight whatever the leaves' sizes, and no step waits on a leaf's header (the band
/// kernel's per-leaf chain: work item, header, entries, x). Dense leaves keep a warp each.
/// Products go into the warp's d-entry shared buffer: with Rotate each on its own, a lane's four
/// from a lane-dependent start (see below), else a lane's run of one output summed in a
/// register first; the band is written as in LeafSpmvBand. U = 1 is what spmv instantiates
/// (two groups per lane per step took 72-78 registers and were 6-30% slower, run S3).
template <class S, class Device, class XView, class YView, bool Trans, int U, bool Rotate>
struct LeafSpmvStream {
  using exec = typename Device::execution_space;
  using scratch = Kokkos::View<S*, typename exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  using W = Warp<exec>;
  static constexpr bool gpu = wide_warps<exec>();
  static constexpr int warp = W::size;
  static constexpr int warps_per_team = gpu ? 4 : 1;
  const char* pool;
  int log2d;
  Kokkos::View<const WorkItem*, Device> leaves;
  Kokkos::View<const std::int64_t*, Device> chunk_begin;
  Kokkos::View<const std::int32_t*, Device> chunk_band;
  Kokkos::View<const std::uint8_t*, Device> chunk_split;
  std::int64_t nchunks;
  XView x;
  YView y;
  S factor, beta;
  bool beta_zero;
  std::int64_t nout;

  static std::size_t scratch_bytes(int d) {
    return scratch::shmem_size(std::size_t(d) * warps_per_team);
  }

  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    const std::int64_t c = std::int64_t(m.league_rank()) * warps_per_team + m.team_rank();
    if (c >= nchunks) return;  // uniform in the warp
    const int d = 1 << log2d;
    const int tid = W::lane();
    scratch all(m.team_scratch(0), std::size_t(d) * warps_per_team);
    S* buf = all.data() + std::size_t(m.team_rank()) * std::size_t(d);
    for (int i = tid; i < d; i += warp) buf[i] = S(0);
    W::sync();
    // a lane's run of products of one output, added to buf when the output changes
    int cur = -1;
    S acc = S(0);
    const std::int64_t begin = chunk_begin(c), end = chunk_begin(c + 1);
    WorkItem next{0, 0, 0};
    if (begin + tid < end) next = leaves(begin + tid);
    for (std::int64_t base = begin; base < end; base += warp) {
      const WorkItem w = next;
      if (base + warp + tid < end) next = leaves(base + warp + tid);
      const unsigned t = base + tid < end ? ref_type(w.ref) : unsigned(null_node);
      const std::int32_t inblk = Trans ? w.rb : w.cb;
      const char* node = pool + ref_offset(w.ref);
      // dense leaves (first in a chunk's bin order): a warp each
      const int last_dense = W::last_true(t == dense);
      for (int j = 0; j <= last_dense; ++j) {
        const std::uint64_t rj = W::shfl(w.ref, j);
        const std::int32_t bj = W::shfl(inblk, j);
        if (ref_type(rj) == dense)
          dense_lines<Trans>(reinterpret_cast<const S*>(pool + ref_offset(rj)), d, tid, warp, x,
                             std::int64_t(bj) * d,
                             [&](int o, S a) { Kokkos::atomic_add(&buf[o], a); });
      }
      // sparse leaves: groups of up to four entries, numbered by a scan over the lanes
      const std::int32_t n = t == coo4   ? std::int32_t(*reinterpret_cast<const std::uint32_t*>(node))
                             : t == coo2 ? 2
                             : t == coo1 ? 1
                                         : 0;
      const std::int32_t groups = (n + 3) / 4;
      std::int32_t incl = groups;
      for (int s = 1; s < warp; s *= 2) {
        const std::int32_t v = W::shfl_up(incl, s);
        if (tid >= s) incl += v;
      }
      const std::int32_t total = W::shfl(incl, warp - 1);
      const std::uint64_t info =
          (std::uint64_t(std::uint32_t(incl - groups)) << 32) | std::uint64_t(std::uint32_t(n));
      for (std::int32_t q0 = 0; q0 < total; q0 += warp * U) {
        std::uint64_t packed[U];
        S v[U][4];
        std::int64_t ib[U];
        int cnt[U];
        for (int u = 0; u < U; ++u) {
          const std::int32_t q = q0 + u * warp + tid;
          const std::int32_t qc = q < total ? q : total - 1;
          int j = 0;  // the leaf of group qc: the lanes whose scan is <= qc
          for (int s = warp / 2; s >= 1; s /= 2)
            if (W::shfl(incl, j + s - 1) <= qc) j += s;
          const std::uint64_t rj = W::shfl(w.ref, j);
          const std::uint64_t ij = W::shfl(info, j);
          const std::int32_t bj = W::shfl(inblk, j);
          const std::int32_t g = qc - std::int32_t(ij >> 32);
          const std::int32_t nj = std::int32_t(std::uint32_t(ij));
          const std::int32_t left = nj - 4 * g;
          cnt[u] = q < total ? (left < 4 ? left : 4) : 0;
          ib[u] = std::int64_t(bj) * d;
          packed[u] = 0;
          for (int k = 0; k < 4; ++k) v[u][k] = S(0);
          const char* p = pool + ref_offset(rj);
          if (cnt[u] > 0) {
            if (ref_type(rj) == coo4) {
              packed[u] = *reinterpret_cast<const std::uint64_t*>(p + 8 + 8 * std::int64_t(g));
              W::template load<4>(reinterpret_cast<const S*>(p + slots_offset(coo4, nj)) + 4 * std::int64_t(g),
                                  v[u]);
            } else {
              packed[u] = *reinterpret_cast<const std::uint32_t*>(p + 4);
              const S* sl = reinterpret_cast<const S*>(p + 8);
              v[u][0] = sl[0];
              if (cnt[u] > 1) v[u][1] = sl[1];
            }
          }
        }
        S xv[U][4];
        for (int u = 0; u < U; ++u)
          for (int k = 0; k < 4; ++k) {
            const std::uint16_t pc = std::uint16_t(packed[u] >> (16 * k));
            xv[u][k] = k < cnt[u] ? x(ib[u] + (Trans ? coord_row(pc) : coord_col(pc))) : S(0);
          }
        for (int u = 0; u < U; ++u) {
          if constexpr (Rotate) {
            // every product its own shared atomic, a lane's four from a lane-dependent start,
            // (lane + lane / 4 + lane / 16) mod 4: where groups hold one entry per output (op = N
            // on a leaf of one entry per row, op = T on a stencil's leaves) the outputs of one
            // step are 4 apart from lane to lane, and all 32 lanes' FP64 words fell into 4 of
            // the 16 bank pairs; rotated, each half-warp touches 16 different ones
            const int rot = (tid + (tid >> 2) + (tid >> 4)) & 3;
            for (int j = 0; j < 4; ++j) {
              const int k = (j + rot) & 3;
              const S vk = k == 0 ? v[u][0] : k == 1 ? v[u][1] : k == 2 ? v[u][2] : v[u][3];
              const S xk = k == 0 ? xv[u][0] : k == 1 ? xv[u][1] : k == 2 ? xv[u][2] : xv[u][3];
              const std::uint16_t pc = std::uint16_t(packed[u] >> (16 * k));
              if (k < cnt[u])
                Kokkos::atomic_add(&buf[Trans ? coord_col(pc) : coord_row(pc)], vk * xk);
            }
          } else {
            for (int k = 0; k < 4; ++k) {
              if (k >= cnt[u]) continue;
              const std::uint16_t pc = std::uint16_t(packed[u] >> (16 * k));
              const int o = int(Trans ? coord_col(pc) : coord_row(pc));
              const S prod = v[u][k] * xv[u][k];
              if (o == cur) {
                acc += prod;
              } else {
                if (cur >= 0) Kokkos::atomic_add(&buf[cur], acc);
                cur = o;
                acc = prod;
              }
            }
          }
        }
      }
    }
    if (cur >= 0) Kokkos::atomic_add(&buf[cur], acc);
    W::sync();
    const std::int64_t band = std::int64_t(chunk_band(c)) * d;
    const bool split = chunk_split(c) != 0;
    for (int t = tid; t < d && band + t < nout; t += warp) {
      const S val = buf[t];
      if (split) {
        if (val != S(0)) Kokkos::atomic_add(&y(band + t), factor * val);
      } else {
        y(band + t) = (beta_zero ? S(0) : beta * y(band + t)) + factor * val;
      }
    }
  }
};

/// y = beta y + factor op(A) x by output bands, the sparse leaves read as a stream of entry
/// groups, U per lane per step (see LeafSpmvStream); split bands pre-scaled as in leaf_spmv_band.
template <bool Trans, int U, bool Rotate, class S, class Device, class XView, class YView>
void leaf_spmv_stream(const HiSparseData<Device>& a, const BandPlan<Device>& p, S factor, S beta,
                      const XView& x, const YView& y) {
  using exec = typename Device::execution_space;
  const std::int64_t nout = std::int64_t(y.extent(0));
  const int d = a.d;
  const bool beta_zero = beta == S(0);
  scale_split_bands(p, d, beta, y);
  using F = LeafSpmvStream<S, Device, input_vector_t<XView>, YView, Trans, U, Rotate>;
  F f{reinterpret_cast<const char*>(a.pool.data()),
      a.log2d,
      p.leaves,
      p.chunk_begin,
      p.chunk_band,
      p.chunk_split,
      p.chunks,
      x,
      y,
      factor,
      beta,
      beta_zero,
      nout};
  const std::int64_t league = (p.chunks + F::warps_per_team - 1) / F::warps_per_team;
  Kokkos::TeamPolicy<exec> policy(int(league), F::warps_per_team, F::warp);
  policy = policy.set_scratch_size(0, Kokkos::PerTeam(F::scratch_bytes(d)));
  Kokkos::parallel_for(Trans ? "spk::hisparse::spmv_t_stream" : "spk::hisparse::spmv_stream",
                       policy, f);
}

/// y = beta y + factor op(A) x with stream shape `shape` (1: rotated, every product its own
/// atomic; 2: run sums in entry order; see LeafSpmvStream).
template <bool Trans, class S, class Device, class XView, class YView>
void leaf_spmv_stream_shape(int shape, const HiSparseData<Device>& a, const BandPlan<Device>& p,
                            S factor, S beta, const XView& x, const YView& y) {
  if (shape == 1) leaf_spmv_stream<Trans, 1, true>(a, p, factor, beta, x, y);
  else leaf_spmv_stream<Trans, 1, false>(a, p, factor, beta, x, y);
}

/// The faster stream shape (1 or 2) of op(A) x for plan p, timed on a scratch output: one
/// warm-up and three fenced runs of each, the fastest run counting. Which one wins depends on
/// how a matrix's leaves hold their outputs (measured: rotated atomics for op = N on 5- and
/// 7-point stencils and for op = T on stencils and narrow bands, run sums elsewhere); the choice
/// is kept in the plan, so it costs eight products once per direction. CPU backends (one lane
/// per warp, nothing to rotate) take 2 without timing.
template <bool Trans, class S, class Device, class XView>
int choose_stream_shape(const HiSparseData<Device>& a, const BandPlan<Device>& p, const XView& x,
                        std::int64_t nout) {
  using exec = typename Device::execution_space;
  if (!wide_warps<exec>()) return 2;
  Kokkos::View<S*, Device> scratch_y(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hisparse::stream_shape_y"),
      std::size_t(nout));
  double best[2] = {0, 0};
  for (int shape = 1; shape <= 2; ++shape) {
    leaf_spmv_stream_shape<Trans>(shape, a, p, S(1), S(0), x, scratch_y);
    exec().fence();
    for (int rep = 0; rep < 3; ++rep) {
      Kokkos::Timer timer;
      leaf_spmv_stream_shape<Trans>(shape, a, p, S(1), S(0), x, scratch_y);
      exec().fence();
      const double t = timer.seconds();
      if (rep == 0 || t < best[shape - 1]) best[shape - 1] = t;
    }
  }
  return best[0] < best[1] ? 1 : 2;
}

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
