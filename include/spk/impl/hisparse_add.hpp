// spk/impl/hisparse_add.hpp: sparse addition C = op(A) + op(B) of two HiSparse matrices by a
// dual top-down traversal (Derler et al., section 6).
//
// Work items are node pairs: (node of A or null, node of B or null) at the same position of the
// result's tree, with their block coordinates and the byte offset of the result's parent slot
// that will reference them. Every operand is read in the orientation of its state (a transposed
// operand's local coordinates and block coordinates are swapped when read, so its children are
// transposed too) and its leaf values are multiplied by its scale. A pair is processed by:
//   1. the union of its two entry sets (n entries; a node present in one operand only is the
//      same machinery with one side empty, i.e. a copy);
//   2. one output node of the conversion's type rule (choose_type: dense when not larger)
//      allocated from the result's pool by an atomic counter, its reference written into the
//      parent's slot ("patched"; the root's goes to a device variable), and the result's
//      statistics of its level counted with atomics;
//   3. the fill: coordinates row-major, padding cleared by the writer (the pool is not
//      zero-filled; see AddPairs::clear); at the leaf
//      level the values sA a + sB b; above it, one child pair per union entry goes to the next
//      level's queue, carrying the address of the slot it will patch.
// The traversal runs level by level, one launch per level and pair class ("bin", PairBin):
//   small       two sparse nodes (or one) of <= 16 entries together: one thread loads both
//               lists into registers, sorts them by output position with a sorting network
//               (constant indices keep the arrays in registers) and merges them serially;
//   merge       neither side is transposed or dense: the coordinate lists are already sorted
//               row-major, so a team merges them: each entry finds its rank in the other list
//               by binary search and a team scan over "also in the other list" flags gives its
//               output position (no scratch, no sort: the paper's fast path); pairs of up to 512
//               entries take a warp-sized team, larger ones a team of 256 (merge_huge); a team
//               of one thread (CPU backends) merges with two pointers;
//   bitmap      a dense side or a transposed one: a team sets one bit per entry in two d x d
//               occupancy bitmaps in team scratch (a counting sort over local positions), scans
//               the word popcounts of their union for the output positions and fills the node:
//               the first operand writes, then after a barrier the second adds (leaf) or pairs
//               up with the child the first left in the slot (inner); a sparse leaf that fits
//               is built in team scratch and written out in order (stage_entries);
//   warp        (GPU default for 32 <= d <= 128) two sparse nodes, either orientation, of up
//               to add_warp_max entries together (larger pairs go to bitmap), one warp per
//               pair: up to 64 entries a bitonic sort of the keys across the warp (warp_sort),
//               else the bitmap method in that warp's part of the team scratch, with
//               warp-level synchronisation and a shuffle scan of the word popcounts.
// Every writer clears its node's padding (dense nodes: every slot before the entries go in),
// so the result's pool needs no zero fill.
// A launch has at most add_waves waves of the teams the device holds; teams loop over their
// bin's pairs (the count is read on the device), so the host launches each level with bounds
// from the operands' statistics and reads nothing back while traversing; child pairs are
// enqueued with warp-aggregated atomics. The whole addition reads back once: the pool bytes
// used, the root reference and the statistics.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <spk/error.hpp>
#include <spk/impl/device_info.hpp>
#include <spk/impl/hisparse_build.hpp>
#include <spk/impl/hisparse_node.hpp>
#include <spk/impl/hisparse_schedule.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/radix_sort.hpp>
#include <spk/impl/warp.hpp>

namespace spk {
namespace impl {
namespace hisparse {

/// Pair classes of the addition (see the file comment).
enum PairBin : unsigned {
  pair_small = 0,
  pair_merge = 1,
  pair_merge_huge = 2,
  pair_bitmap = 3,
  pair_warp = 4
};
constexpr unsigned num_pair_bins = 5;
/// Warps per team of the warp bin.
constexpr int add_warps_per_team = 4;
/// Largest entry count of a pair of the warp bin (larger ones: a team, the bitmap bin); a
/// pair this large holds a node of bin_huge (> 512 entries), which bounds the bitmap queue.
constexpr std::int64_t add_warp_max = 1024;
/// Largest entry count of a pair processed by one thread (its register arrays).
constexpr int add_small_max = 16;
/// Largest entry count of a pair merged by a warp-sized team.
constexpr std::int64_t add_merge_max = 512;

/// A queued node pair: the nodes (0: absent) in their operands' pools, the block coordinates of
/// the result's node, and the byte offset in the result's pool of the slot to patch with the
/// result node's reference (-1: the root).
struct AddItem {
  std::uint64_t ref_a;
  std::uint64_t ref_b;
  std::int32_t rb;
  std::int32_t cb;
  std::int64_t parent;
};

/// Resolved launch settings of the addition (spk::HiSparseAddParams with defaults applied).
struct AddLaunch {
  int small_entries = add_small_max;  ///< pairs with at most this many entries: one thread
  bool merge = true;                  ///< merge path for untransposed sparse pairs
  int small_pairs_per_team = 1;       ///< threads (= pairs) per team of the small bin
  int merge_team = 1;                 ///< team size of the merge bin
  int big_team = 1;                   ///< team size of the merge_huge and bitmap bins
  bool warp_pairs = false;            ///< pairs of sparse nodes by a warp each (see file comment)
  int max_teams = 0;                  ///< teams per launch at most (0: add_league's bound)
};

/// Whether the warp bin can take node size d on ExecSpace: a bitmap of d^2 bits is at least a
/// word per lane and three of them (6 KiB at d = 128) fit a warp's share of the scratch.
template <class ExecSpace>
bool warp_pairs_possible(int d) {
  return Warp<ExecSpace>::size == 32 && d >= 32 && d <= 128;
}

/// Default launch settings of ExecSpace: one thread per team on CPU backends.
template <class ExecSpace>
AddLaunch default_add_launch() {
  AddLaunch l;
  if (is_gpu_space<ExecSpace>()) {
    l.small_pairs_per_team = 128;
    l.merge_team = 32;
    l.big_team = 256;
    l.warp_pairs = true;
  }
  return l;
}

/// Segments of a level's queue: bin b holds items [begin[b], begin[b] + cap[b]).
struct PairBins {
  std::int64_t begin[num_pair_bins];
  std::int64_t cap[num_pair_bins];
};

/// Layout of the device-side results: bytes used, root reference, error flag, then per level
/// add_stat_slices copies of: sparse nodes, dense nodes, sparse entries, dense entries, bytes,
/// nodes per work_bin (a node counts in the copy its offset picks, so the atomics of concurrent
/// nodes spread over 32 addresses instead of all hitting one; the host sums the copies).
constexpr int add_stat_slices = 32;
enum AddInfo : int {
  add_info_used = 0,
  add_info_root = 1,
  add_info_error = 2,
  add_info_levels = 3,
  add_info_per_level = 5 + int(num_bins)
};

/// A packed coordinate as a row-major sort key (the packed form has the row in the low byte).
KOKKOS_INLINE_FUNCTION unsigned row_major_key(std::uint16_t p) {
  return (coord_row(p) << 8) | coord_col(p);
}

/// First position in co[0, n) whose row-major key is not below `key`.
KOKKOS_INLINE_FUNCTION std::int64_t lower_bound_coord(const std::uint16_t* co, std::int64_t n,
                                                      unsigned key) {
  std::int64_t lo = 0, hi = n;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (row_major_key(co[mid]) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/// The type of a result node with n union entries: the conversion's rule; a pair whose nodes
/// hold no nonzero (a dense node whose every slot reads as zero) still needs a node, since its
/// parent has a slot for it: an empty COO4 node (16 bytes).
KOKKOS_INLINE_FUNCTION unsigned add_node_type(std::int64_t n, int slot_bytes, int d) {
  return n == 0 ? unsigned(coo4) : choose_type(n, slot_bytes, d);
}

/// The bin of a pair (see the file comment). Entry counts are read from the nodes' headers.
struct PairClassifier {
  const char* pool_a;
  const char* pool_b;
  int d;
  bool trans_a, trans_b;
  int small_entries;
  bool merge;
  bool warp_pairs;

  KOKKOS_INLINE_FUNCTION unsigned operator()(std::uint64_t ra, std::uint64_t rb) const {
    const NodeView a{pool_a, ra}, b{pool_b, rb};
    const std::int64_t na = ra ? a.count(d) : 0;
    const std::int64_t nb = rb ? b.count(d) : 0;
    const bool dense_side = (ra && a.type() == dense) || (rb && b.type() == dense);
    if (na + nb <= small_entries && !dense_side) return pair_small;
    const bool trans_side = (ra && trans_a) || (rb && trans_b);
    if (dense_side) return pair_bitmap;
    if (warp_pairs) return na + nb <= add_warp_max ? pair_warp : pair_bitmap;
    if (trans_side || !merge) return pair_bitmap;
    return na + nb <= add_merge_max ? pair_merge : pair_merge_huge;
  }
};

/// Local coordinates of an operand's stored entry in the result's orientation.
KOKKOS_INLINE_FUNCTION void orient(bool trans, unsigned r, unsigned c, unsigned& ro,
                                   unsigned& co) {
  ro = trans ? c : r;
  co = trans ? r : c;
}

/// The two entry lists of a pair of sparse nodes (an absent node: no entries), indexed as one
/// list (A's entries, then B's) by the sort-based paths (AddPairs::small, warp_sort).
template <class Slot>
struct PairLists {
  std::int64_t n_a, n_b;
  const std::uint16_t* ca;
  const std::uint16_t* cb;
  const Slot* sa;
  const Slot* sb;

  KOKKOS_INLINE_FUNCTION PairLists(const PairClassifier& cls, const AddItem& w) {
    const NodeView na{cls.pool_a, w.ref_a}, nb{cls.pool_b, w.ref_b};
    n_a = w.ref_a ? na.count(cls.d) : 0;
    n_b = w.ref_b ? nb.count(cls.d) : 0;
    ca = w.ref_a ? na.coords() : nullptr;
    cb = w.ref_b ? nb.coords() : nullptr;
    sa = w.ref_a ? na.template slots<Slot>(n_a) : nullptr;
    sb = w.ref_b ? nb.template slots<Slot>(n_b) : nullptr;
  }
  /// (row-major position in the result's orientation << shift) | e for entry e of the joint
  /// list, ~0 past its end.
  KOKKOS_INLINE_FUNCTION std::uint32_t key(const PairClassifier& cls, int e, int shift) const {
    unsigned ro = 0, co = 0;
    if (e < n_a) orient(cls.trans_a, coord_row(ca[e]), coord_col(ca[e]), ro, co);
    else if (e - n_a < n_b)
      orient(cls.trans_b, coord_row(cb[e - n_a]), coord_col(cb[e - n_a]), ro, co);
    else return ~std::uint32_t(0);
    return ((ro * unsigned(cls.d) + co) << shift) | unsigned(e);
  }
  KOKKOS_INLINE_FUNCTION Slot value(int e) const { return e < n_a ? sa[e] : sb[e - n_a]; }
};

/// Processes the queued pairs of one bin of one level (Leaf: values, else child references).
template <class S, class Device, bool Leaf, unsigned Bin>
struct AddPairs {
  using exec = typename Device::execution_space;
  using ref_type = ref_t<S>;
  using Slot = std::conditional_t<Leaf, S, ref_type>;
  using scratch_u32 =
      Kokkos::View<std::uint32_t*, typename exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  using scratch_i64 =
      Kokkos::View<std::int64_t*, typename exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;

  PairClassifier classify;  // pools, d, orientation; classifies the child pairs
  char* out;
  std::int64_t out_capacity;  // bytes of the result's pool
  int log2d;
  S scale_a, scale_b;
  int level;
  int groups;  // pairs per team (small bin)
  Kokkos::View<const AddItem*, Device> in;
  std::int64_t begin;
  Kokkos::View<const std::int64_t*, Device> in_count;  // the level's tails
  std::int64_t in_cap = 0;  // the bin's capacity (a tail past it: items dropped, error 2)
  Kokkos::View<AddItem*, Device> next;
  PairBins next_bins;
  Kokkos::View<std::int64_t*, Device> next_tail;
  Kokkos::View<std::int64_t*, Device> info;

  /// Team scratch bytes of bin Bin: bitmap: two bitmaps and the prefix counts of their union;
  /// warp: that for each warp of the team; small: publish_team's counters for `units` pairs.
  static std::size_t scratch_bytes(int d, int units) {
    return Bin == pair_bitmap ? scratch_u32::shmem_size(bitmap_scratch_words(d))
           : Bin == pair_warp ? scratch_u32::shmem_size(3 * bitmap_words(d) * add_warps_per_team)
           : Bin == pair_small ? scratch_i64::shmem_size(std::size_t(publish_scratch(units)))
                               : 0;
  }
  KOKKOS_INLINE_FUNCTION static std::size_t bitmap_words(int d) {
    return std::size_t(d) * std::size_t(d) < 32 ? 1 : std::size_t(d) * std::size_t(d) / 32;
  }
  /// Entries of a result leaf that the bitmap bin builds in team scratch before writing it out
  /// in order (a multiple of 4; 0: none): what fits beside the bitmaps in 44 KiB, at most
  /// 4096 and d^2 (CUDA gives a block 48 KiB; Kokkos keeps 8 bytes per thread + 16; the
  /// launch rounds the team size down to a power of two, which Kokkos's team scans need). Writing
  /// the entries of a pair straight to their ranks in global memory scatters 2- and 8-byte
  /// stores over the node (each lane's four entries are four ranks apart from its
  /// neighbours'), which made that kernel L2-bound (82% of L2 throughput, 24% of DRAM's).
  KOKKOS_INLINE_FUNCTION static std::int64_t stage_entries(int d) {
    if (!Leaf || Bin != pair_bitmap) return 0;
    const std::int64_t budget = 44 * 1024 - 3 * 4 * std::int64_t(bitmap_words(d));
    std::int64_t c = budget / std::int64_t(sizeof(Slot) + 2);
    if (c > 4096) c = 4096;
    const std::int64_t leaf_max = (std::int64_t(d) * d + 3) & ~std::int64_t(3);
    if (c > leaf_max) c = leaf_max;  // no leaf holds more
    return c < 4 ? 0 : c & ~std::int64_t(3);
  }
  /// 32-bit words of the bitmap bin's scratch: the staged leaf (values, then coordinates), then
  /// the two bitmaps and the prefix counts.
  KOKKOS_INLINE_FUNCTION static std::size_t bitmap_scratch_words(int d) {
    return std::size_t(stage_entries(d)) * (sizeof(Slot) + 2) / 4 + 3 * bitmap_words(d);
  }

  /// Allocates the result node of a pair with n entries, writes its count, patches the parent
  /// slot and counts the node in the level's statistics. Returns its offset, -1 on overflow.
  KOKKOS_INLINE_FUNCTION std::int64_t publish(std::int64_t n, std::int64_t parent) const {
    const std::int64_t bytes = result_bytes(n);
    const std::int64_t off = atomic_fetch_add_int(&info(add_info_used), bytes);
    if (off + bytes > out_capacity) {
      info(add_info_error) = 1;
      return -1;
    }
    place(off, n, parent);
    count_node(level_stats(off), n);
    return off;
  }

  /// The copy of this level's statistics that a node at byte `off` counts in.
  KOKKOS_INLINE_FUNCTION std::int64_t* level_stats(std::int64_t off) const {
    const int slice = int((off >> 4) & (add_stat_slices - 1));
    return &info(add_info_levels + (level * add_stat_slices + slice) * add_info_per_level);
  }

  /// Bytes of the result node of a pair with n entries.
  KOKKOS_INLINE_FUNCTION std::int64_t result_bytes(std::int64_t n) const {
    const int d = 1 << log2d;
    return node_bytes(add_node_type(n, int(sizeof(S)), d), n, int(sizeof(S)), d);
  }

  /// Writes the count of the result node at `off` with n entries and patches its parent slot.
  KOKKOS_INLINE_FUNCTION void place(std::int64_t off, std::int64_t n, std::int64_t parent) const {
    const unsigned t = add_node_type(n, int(sizeof(S)), 1 << log2d);
    if (t != dense) *reinterpret_cast<std::uint32_t*>(out + off) = std::uint32_t(n);
    const std::uint64_t ref = make_ref(std::uint64_t(off), t);
    if (parent < 0) info(add_info_root) = std::int64_t(ref);
    else *reinterpret_cast<ref_type*>(out + parent) = ref_type(ref);
  }

  /// Adds a result node with n entries to the statistics `st` of a level (laid out as in
  /// AddInfo: sparse nodes, dense nodes, sparse entries, dense entries, bytes, nodes per bin).
  KOKKOS_INLINE_FUNCTION void count_node(std::int64_t* st, std::int64_t n) const {
    const int d = 1 << log2d;
    const unsigned t = add_node_type(n, int(sizeof(S)), d);
    const bool is_dense = t == dense;
    atomic_add_int(&st[is_dense ? 1 : 0], std::int64_t(1));
    atomic_add_int(&st[is_dense ? 3 : 2], n);
    atomic_add_int(&st[4], node_bytes(t, n, int(sizeof(S)), d));
    atomic_add_int(&st[5 + int(work_bin(t, n))], std::int64_t(1));
  }

  /// int64 values of the team scratch publish_team needs for `units` units.
  KOKKOS_INLINE_FUNCTION static int publish_scratch(int units) {
    return units + 1 + add_info_per_level;
  }

  /// publish() for the units of a team (the threads of the small bin) at once: one atomic on
  /// the pool counter and one per nonzero statistic per team instead of per node (the
  /// counters are few and every node hits them). Every thread of the team calls it (two team
  /// barriers): unit `unit` of `units` (vec lanes each, `leader` its first lane),
  /// `active` when it holds a pair whose result has n entries. Returns the node's offset; -1
  /// for an inactive unit or on overflow. `shared`: publish_scratch(units) int64 of scratch.
  template <class Member>
  KOKKOS_INLINE_FUNCTION std::int64_t publish_team(const Member& m, int unit, int units, int vec,
                                                   bool leader, bool active, std::int64_t n,
                                                   std::int64_t parent,
                                                   std::int64_t* shared) const {
    std::int64_t* part = shared;       // bytes per unit, then their exclusive offsets
    std::int64_t* base = shared + units;  // the team's first byte in the pool
    std::int64_t* st = base + 1;          // the team's statistics of this level
    const int flat = m.team_rank() * vec + Warp<exec>::lane() % vec;
    const int threads = m.team_size() * vec;
    if (leader) part[unit] = active ? result_bytes(n) : 0;
    for (int i = flat; i < add_info_per_level; i += threads) st[i] = 0;
    m.team_barrier();
    if (leader && active) count_node(st, n);
    if (flat == 0) {
      std::int64_t total = 0;
      for (int u = 0; u < units; ++u) {
        const std::int64_t b = part[u];
        part[u] = total;
        total += b;
      }
      std::int64_t at = total > 0 ? atomic_fetch_add_int(&info(add_info_used), total) : 0;
      if (at + total > out_capacity) {
        info(add_info_error) = 1;
        at = -1;
      }
      *base = at;
    }
    m.team_barrier();
    std::int64_t* global = level_stats(*base < 0 ? 0 : *base);
    for (int i = flat; i < add_info_per_level; i += threads)
      if (st[i] != 0) atomic_add_int(&global[i], st[i]);
    if (!active || *base < 0) return -1;
    const std::int64_t off = *base + part[unit];
    if (leader) place(off, n, parent);
    return off;
  }

  /// Clears what the entries of the result node at `off` with n entries leave unwritten, with
  /// lanes lane, lane + stride, ...: every slot of a dense node (the caller synchronises before
  /// writing entries), the padding of a sparse one (by lane 0; disjoint from the entries).
  KOKKOS_INLINE_FUNCTION void clear(std::int64_t off, std::int64_t n, int lane, int stride) const {
    const int d = 1 << log2d;
    const unsigned t = add_node_type(n, int(sizeof(S)), d);
    char* node = out + off;
    if (t == dense) {
      Slot* s = reinterpret_cast<Slot*>(node);
      for (std::int64_t i = lane; i < std::int64_t(d) * d; i += stride) s[i] = Slot(0);
      return;
    }
    if (lane != 0) return;
    if (t == coo4) *reinterpret_cast<std::uint32_t*>(node + 4) = 0;
    std::uint16_t* co = reinterpret_cast<std::uint16_t*>(node + coords_offset(t));
    const std::int64_t so = slots_offset(t, n);
    for (std::int64_t i = n; coords_offset(t) + 2 * i < so; ++i) co[i] = 0;
    Slot* s = reinterpret_cast<Slot*>(node + so);
    const std::int64_t end = node_bytes(t, n, int(sizeof(S)), d);
    for (std::int64_t i = n; so + i * std::int64_t(sizeof(Slot)) < end; ++i) s[i] = Slot(0);
  }

  /// Queues the child pair (ra, rb) of the result's entry (r, c) of pair w, whose reference
  /// goes to byte `slot_at` of the result's pool.
  KOKKOS_INLINE_FUNCTION void enqueue(std::uint64_t ra, std::uint64_t rb, const AddItem& w,
                                      unsigned r, unsigned c, std::int64_t slot_at) const {
    const int d = 1 << log2d;
    const unsigned b = classify(ra, rb);
    const std::int64_t at = aggregated_increment(&next_tail(b));
    if (at >= next_bins.cap[b]) {
      info(add_info_error) = 2;
      return;
    }
    next(next_bins.begin[b] + at) =
        AddItem{ra, rb, std::int32_t(w.rb * d + int(r)), std::int32_t(w.cb * d + int(c)), slot_at};
  }

  /// Writes entry `pos` (row-major rank; (r, c) in the result's orientation) of the result
  /// node at `off` with n entries: its coordinate, and its value or its child pair. Used by the
  /// paths where one thread owns the entry (small, merge).
  KOKKOS_INLINE_FUNCTION void emit(std::int64_t off, std::int64_t n, std::int64_t pos, unsigned r,
                                   unsigned c, const AddItem& w, bool has_a, Slot va, bool has_b,
                                   Slot vb) const {
    const int d = 1 << log2d;
    const unsigned t = add_node_type(n, int(sizeof(S)), d);
    char* node = out + off;
    std::int64_t idx = pos;
    if (t == dense) idx = std::int64_t(r) * d + c;
    else reinterpret_cast<std::uint16_t*>(node + coords_offset(t))[pos] = pack(r, c);
    const std::int64_t slots_at = off + slots_offset(t, n);
    if constexpr (Leaf) {
      S* slots = reinterpret_cast<S*>(out + slots_at);
      slots[idx] = has_a && has_b ? scale_a * va + scale_b * vb
                   : has_a        ? scale_a * va
                                  : scale_b * vb;
    } else {
      enqueue(has_a ? std::uint64_t(va) : 0, has_b ? std::uint64_t(vb) : 0, w, r, c,
              slots_at + idx * std::int64_t(sizeof(Slot)));
    }
  }

  /// emit() for the sort-based paths: the result entry with sorted key `key` ((position <<
  /// shift) | joint-list index) at rank pos; `next` is the key after it (B's entry of a
  /// position both operands hold follows A's).
  KOKKOS_INLINE_FUNCTION void emit_key(std::int64_t off, std::int64_t n, std::int64_t pos,
                                       std::uint32_t key, std::uint32_t next, int shift,
                                       const PairLists<Slot>& l, const AddItem& w) const {
    const unsigned p = key >> shift;
    const unsigned r = p >> log2d, c = p & ((1u << log2d) - 1);
    const int e = int(key & ((1u << shift) - 1));
    if ((next >> shift) == p) {
      emit(off, n, pos, r, c, w, true, l.value(e), true,
           l.value(int(next & ((1u << shift) - 1))));
    } else {
      const bool from_a = e < l.n_a;
      const Slot v = l.value(e);
      emit(off, n, pos, r, c, w, from_a, v, !from_a, v);
    }
  }

  /// A team loops over the bin's pairs (its units: pairs of the small bin in groups of
  /// `groups`, a warp's pair of the warp bin, a team's pair otherwise), league_size units apart:
  /// the launch is bounded by what the device holds at once, not by the bin's capacity, so
  /// a level whose bins are mostly empty costs no empty teams. Loop bounds are uniform over
  /// the team (the bin's count is read from device memory by every thread). The team scratch is
  /// taken once, before the loop (every scratch view made takes more of it).
  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& m) const {
    // a tail can pass the capacity (enqueue then drops the item and flags the error)
    const std::int64_t tail = in_count(Bin);
    const std::int64_t count = tail < in_cap ? tail : in_cap;
    const std::int64_t league = m.league_size();
    const std::size_t nw = bitmap_words(1 << log2d);
    if constexpr (Bin == pair_small) {
      std::int64_t* shared =
          scratch_i64(m.team_scratch(0), std::size_t(publish_scratch(groups))).data();
      for (std::int64_t u = m.league_rank(); u * groups < count; u += league)
        small(m, u, count, shared);
    } else if constexpr (Bin == pair_warp) {
      std::uint32_t* all =
          scratch_u32(m.team_scratch(0), 3 * nw * std::size_t(m.team_size())).data();
      const std::int64_t warps = league * m.team_size();
      for (std::int64_t k = std::int64_t(m.league_rank()) * m.team_size() + m.team_rank();
           k < count; k += warps)
        warp_bitmap(m, k, all + 3 * nw * std::size_t(m.team_rank()));
    } else {
      std::uint32_t* bits = nullptr;
      if constexpr (Bin == pair_bitmap)
        bits = scratch_u32(m.team_scratch(0), bitmap_scratch_words(1 << log2d)).data();
      for (std::int64_t k = m.league_rank(); k < count; k += league) {
        if constexpr (Bin == pair_bitmap) bitmap(m, k, bits);
        else merge(m, k);
        m.team_barrier();  // the next pair reuses the team's scratch and counters
      }
    }
  }

  /// One thread per group member: a pair of sparse nodes (<= 16 entries together), its keys
  /// sorted in registers by a bitonic network, written in order.
  template <class Member>
  KOKKOS_INLINE_FUNCTION void small(const Member& m, std::int64_t unit, std::int64_t count,
                                     std::int64_t* shared) const {
    const std::int64_t k = unit * groups + m.team_rank();
    const bool active = k < count;
    AddItem w{0, 0, 0, 0, 0};
    if (active) w = in(begin + k);
    // both lists' keys in registers: every index below is a compile-time constant once the
    // loops are unrolled (a loop counter as index put the arrays in local memory: 224 bytes of
    // stack per thread, and on R-MAT's millions of small pairs most of that kernel's DRAM
    // traffic); values stay in the nodes until written (keys and values in registers took 80
    // registers and were slower still). Key: (row-major position << 4) | index in the list
    // A's entries, then B's; slots past the pair's entries hold the largest key.
    constexpr int M = add_small_max;
    static_assert(M <= 16, "the small bin's keys hold a 4-bit list index");
    constexpr std::uint32_t none = ~std::uint32_t(0);
    std::uint32_t key[M];
    const PairLists<Slot> lists(classify, w);  // sparse nodes (PairClassifier)
    SPK_DEVICE_UNROLL
    for (int e = 0; e < M; ++e) key[e] = lists.key(classify, e, 4);
    // bitonic sorting network (A's entry before B's at one position: lower index); 8 slots
    // suffice when the pair has at most 8 entries (the rest hold `none`)
    auto sort = [&](auto width) {
      constexpr int W = decltype(width)::value;
      SPK_DEVICE_UNROLL
      for (int kk = 2; kk <= W; kk <<= 1)
        SPK_DEVICE_UNROLL
        for (int j = kk >> 1; j > 0; j >>= 1)
          SPK_DEVICE_UNROLL
          for (int i = 0; i < W; ++i) {
            const int l = i ^ j;
            if (l > i) {
              const std::uint32_t lo = key[i] < key[l] ? key[i] : key[l];
              const std::uint32_t hi = key[i] < key[l] ? key[l] : key[i];
              key[i] = (i & kk) == 0 ? lo : hi;
              key[l] = (i & kk) == 0 ? hi : lo;
            }
          }
    };
    if (lists.n_a + lists.n_b <= M / 2) sort(std::integral_constant<int, M / 2>{});
    else sort(std::integral_constant<int, M>{});
    // a position held by both operands is two neighbours, A's first
    std::int64_t n = 0;
    SPK_DEVICE_UNROLL
    for (int i = 0; i < M; ++i)
      n += key[i] != none && !(i > 0 && (key[i] >> 4) == (key[i - 1] >> 4));
    const std::int64_t off =
        publish_team(m, m.team_rank(), groups, 1, true, active, n, w.parent, shared);
    if (off < 0) return;
    clear(off, n, 0, 1);
    std::int64_t pos = 0;
    SPK_DEVICE_UNROLL
    for (int i = 0; i < M; ++i) {
      if (key[i] == none || (i > 0 && (key[i] >> 4) == (key[i - 1] >> 4))) continue;
      emit_key(off, n, pos, key[i], i + 1 < M ? key[i + 1] : none, 4, lists, w);
      ++pos;
    }
  }

  /// A team per pair of untransposed sparse nodes: merge of the two row-major lists.
  template <class Member>
  KOKKOS_INLINE_FUNCTION void merge(const Member& m, std::int64_t k) const {
    const AddItem w = in(begin + k);
    const PairLists<Slot> lists(classify, w);
    const std::int64_t n_a = lists.n_a, n_b = lists.n_b;
    const std::uint16_t* ca = lists.ca;
    const std::uint16_t* cb = lists.cb;
    const Slot* sa = lists.sa;
    const Slot* sb = lists.sb;
    if (m.team_size() == 1) {
      // one thread (CPU backends): the two-pointer merge, linear instead of binary searches
      std::int64_t n = n_a + n_b;
      for (std::int64_t i = 0, j = 0; i < n_a && j < n_b;) {
        const unsigned ka = row_major_key(ca[i]), kb = row_major_key(cb[j]);
        if (ka == kb) --n;
        i += ka <= kb;
        j += kb <= ka;
      }
      const std::int64_t off = publish(n, w.parent);
      if (off < 0) return;
      clear(off, n, 0, 1);
      for (std::int64_t i = 0, j = 0, pos = 0; i < n_a || j < n_b; ++pos) {
        const unsigned ka = i < n_a ? row_major_key(ca[i]) : 0x10000u;
        const unsigned kb = j < n_b ? row_major_key(cb[j]) : 0x10000u;
        const std::uint16_t p = ka <= kb ? ca[i] : cb[j];
        emit(off, n, pos, coord_row(p), coord_col(p), w, ka <= kb, ka <= kb ? sa[i] : Slot(0),
             kb <= ka, kb <= ka ? sb[j] : Slot(0));
        i += ka <= kb;
        j += kb <= ka;
      }
      return;
    }
    std::int64_t common = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(m, n_a),
        [&](const std::int64_t i, std::int64_t& sum) {
          const unsigned key = row_major_key(ca[i]);
          const std::int64_t lb = lower_bound_coord(cb, n_b, key);
          if (lb < n_b && row_major_key(cb[lb]) == key) sum += 1;
        },
        common);
    const std::int64_t n = n_a + n_b - common;
    std::int64_t off = -1;
    Kokkos::single(
        Kokkos::PerTeam(m), [&](std::int64_t& o) { o = publish(n, w.parent); }, off);
    if (off < 0) return;
    clear(off, n, m.team_rank(), m.team_size());
    m.team_barrier();
    // output rank of A's entry i: i + (B's entries before it) - (common entries before it); the
    // scan counts the common ones among A's entries, so the B side of a common entry is
    // written by A's thread
    Kokkos::parallel_scan(Kokkos::TeamThreadRange(m, n_a),
                          [&](const std::int64_t i, std::int64_t& before, const bool final) {
                            const unsigned key = row_major_key(ca[i]);
                            const std::int64_t lb = lower_bound_coord(cb, n_b, key);
                            const bool both = lb < n_b && row_major_key(cb[lb]) == key;
                            if (final)
                              emit(off, n, i + lb - before, coord_row(ca[i]), coord_col(ca[i]),
                                   w, true, sa[i], both, both ? sb[lb] : Slot(0));
                            if (both) before += 1;
                          });
    Kokkos::parallel_scan(Kokkos::TeamThreadRange(m, n_b),
                          [&](const std::int64_t j, std::int64_t& before, const bool final) {
                            const unsigned key = row_major_key(cb[j]);
                            const std::int64_t la = lower_bound_coord(ca, n_a, key);
                            const bool both = la < n_a && row_major_key(ca[la]) == key;
                            if (final && !both)
                              emit(off, n, j + la - before, coord_row(cb[j]), coord_col(cb[j]),
                                   w, false, Slot(0), true, sb[j]);
                            if (both) before += 1;
                          });
  }

  /// Sets one bit per entry of pair w's operands (in the result's orientation) in the d x d
  /// occupancy bitmaps bits_a and bits_b, with lanes lane, lane + stride, ...
  KOKKOS_INLINE_FUNCTION void mark_bits(const AddItem& w, std::uint32_t* bits_a,
                                        std::uint32_t* bits_b, int lane, int stride) const {
    const int d = 1 << log2d;
    auto mark = [&](const char* pool, std::uint64_t ref, bool trans, std::uint32_t* bits) {
      if (!ref) return;
      // positions only: a sparse node's slots are not read
      for_each_entry<exec, Slot, false>(NodeView{pool, ref}, log2d, lane, stride,
                                        [&](unsigned r, unsigned c, Slot) {
                                          unsigned ro, co;
                                          orient(trans, r, c, ro, co);
                                          const unsigned p = ro * unsigned(d) + co;
                                          Kokkos::atomic_fetch_or(&bits[p >> 5],
                                                                  std::uint32_t(1) << (p & 31));
                                        });
    };
    mark(classify.pool_a, w.ref_a, classify.trans_a, bits_a);
    mark(classify.pool_b, w.ref_b, classify.trans_b, bits_b);
  }

  /// Fills the result node at `off` (n entries) of pair w from the operands' occupancy bitmaps
  /// (prefix: union entries before each word), with lanes lane, lane + stride, ...: A's entries
  /// first (leaf values scaled; a child shared with B waits in its slot, others are queued),
  /// then, after sync(), B's (added to A's value, or paired with A's child).
  /// `staged_slots` / `staged_coords` (a sparse leaf only): the entries go there instead
  /// (write_staged copies them out).
  template <class Sync>
  KOKKOS_INLINE_FUNCTION void fill_from_bitmaps(std::int64_t off, std::int64_t n,
                                                const AddItem& w, const std::uint32_t* bits_a,
                                                const std::uint32_t* bits_b,
                                                const std::uint32_t* prefix, int lane, int stride,
                                                const Sync& sync, Slot* staged_slots = nullptr,
                                                std::uint16_t* staged_coords = nullptr) const {
    const int d = 1 << log2d;
    const unsigned t = add_node_type(n, int(sizeof(S)), d);
    std::uint16_t* coords = staged_coords ? staged_coords
                                          : reinterpret_cast<std::uint16_t*>(
                                                out + off + coords_offset(t));
    Slot* slots =
        staged_slots ? staged_slots : reinterpret_cast<Slot*>(out + off + slots_offset(t, n));
    const std::int64_t slots_at = off + slots_offset(t, n);
    // the slot of position p: p itself in a dense node, its rank among the union otherwise
    auto slot_of = [&](unsigned p) -> std::int64_t {
      if (t == dense) return p;
      const std::uint32_t below = (std::uint32_t(1) << (p & 31)) - 1;
      return std::int64_t(prefix[p >> 5]) + popcount32((bits_a[p >> 5] | bits_b[p >> 5]) & below);
    };
    auto in_bits = [](const std::uint32_t* bits, unsigned p) {
      return ((bits[p >> 5] >> (p & 31)) & 1u) != 0;
    };
    const NodeView na{classify.pool_a, w.ref_a}, nb{classify.pool_b, w.ref_b};
    if (w.ref_a)
      for_each_entry<exec, Slot>(na, log2d, lane, stride, [&](unsigned r, unsigned c, Slot v) {
        unsigned ro, co;
        orient(classify.trans_a, r, c, ro, co);
        const unsigned p = ro * unsigned(d) + co;
        const std::int64_t s = slot_of(p);
        if (t != dense) coords[s] = pack(ro, co);
        if constexpr (Leaf) {
          slots[s] = scale_a * v;
        } else {
          if (in_bits(bits_b, p)) slots[s] = v;
          else enqueue(std::uint64_t(v), 0, w, ro, co, slots_at + s * std::int64_t(sizeof(Slot)));
        }
      });
    sync();
    if (w.ref_b)
      for_each_entry<exec, Slot>(nb, log2d, lane, stride, [&](unsigned r, unsigned c, Slot v) {
        unsigned ro, co;
        orient(classify.trans_b, r, c, ro, co);
        const unsigned p = ro * unsigned(d) + co;
        const std::int64_t s = slot_of(p);
        const bool both = in_bits(bits_a, p);
        if (t != dense && !both) coords[s] = pack(ro, co);
        if constexpr (Leaf) {
          slots[s] = both ? slots[s] + scale_b * v : scale_b * v;
        } else {
          enqueue(both ? std::uint64_t(slots[s]) : 0, std::uint64_t(v), w, ro, co,
                  slots_at + s * std::int64_t(sizeof(Slot)));
        }
      });
  }

  /// A warp per pair of sparse nodes (any orientation): the bitmap method of bitmap() in the
  /// warp's part of the team scratch; lanes synchronise with __syncwarp (which also orders the
  /// warp's global writes) and scan the word popcounts with shuffles, 32 words per round.
  /// `mine`: the warp's 3 bitmap_words(d) words of scratch.
  template <class Member>
  KOKKOS_INLINE_FUNCTION void warp_bitmap(const Member&, std::int64_t k,
                                          std::uint32_t* mine) const {
    using warp = Warp<exec>;
    const int d = 1 << log2d;
    const int nw = int(bitmap_words(d));  // a multiple of 32 (warp_pairs_possible)
    const int lane = warp::lane();
    warp::sync();  // the warp's previous pair has read its scratch
    const AddItem w = in(begin + k);
    {
      const PairLists<Slot> lists(classify, w);
      if (lists.n_a + lists.n_b <= 2 * warp::size) {  // uniform over the warp
        warp_sort(w, lists, lane);
        return;
      }
    }
    std::uint32_t* bits_a = mine;
    std::uint32_t* bits_b = bits_a + nw;
    std::uint32_t* prefix = bits_b + nw;
    for (int i = lane; i < nw; i += warp::size) {
      bits_a[i] = 0;
      bits_b[i] = 0;
    }
    warp::sync();
    mark_bits(w, bits_a, bits_b, lane, warp::size);
    warp::sync();
    std::uint32_t total = 0;
    for (int j = 0; j < nw; j += warp::size) {
      const std::uint32_t c = std::uint32_t(popcount32(bits_a[j + lane] | bits_b[j + lane]));
      std::uint32_t incl = c;
      for (int o = 1; o < warp::size; o <<= 1) {
        const std::uint32_t v = warp::shfl_up(incl, o);
        if (lane >= o) incl += v;
      }
      prefix[j + lane] = total + incl - c;
      total += warp::shfl(incl, warp::size - 1);
    }
    warp::sync();
    const std::int64_t n = total;
    // one lane allocates (the statistics' atomics spread over add_stat_slices copies); a team
    // allocation (publish_team) was slower here: its two barriers tie four warps together
    std::int64_t off = 0;
    if (lane == 0) off = publish(n, w.parent);
    off = warp::shfl(off, 0);
    if (off < 0) return;
    clear(off, n, lane, warp::size);
    warp::sync();
    fill_from_bitmaps(off, n, w, bits_a, bits_b, prefix, lane, warp::size, [] { warp::sync(); });
  }

  /// A pair of two sparse nodes of at most 64 entries together (any orientation) by one warp
  /// without scratch: lane l holds the keys (row-major position << 7 | index in the list of
  /// A's entries, then B's) of entries l and l + 32, a bitonic network over the warp sorts
  /// them (21 steps, a shuffle per key each), a ballot of "first of its position" flags gives
  /// every result entry its rank, and lanes write consecutive ranks. The bitmap method costs
  /// d^2 / 32 words of zeroing and scanning per pair whatever its size (512 at d = 128), which
  /// made small warp pairs (R-MAT's, a band's off-diagonal leaves) slow.
  KOKKOS_INLINE_FUNCTION void warp_sort(const AddItem& w, const PairLists<Slot>& lists,
                                        int lane) const {
    using warp = Warp<exec>;
    constexpr std::uint32_t none = ~std::uint32_t(0);
    // elements lane and lane + 32
    std::uint32_t x[2] = {lists.key(classify, lane, 7), lists.key(classify, lane + 32, 7)};
    SPK_DEVICE_UNROLL
    for (int kk = 2; kk <= 64; kk <<= 1)
      SPK_DEVICE_UNROLL
      for (int j = kk >> 1; j > 0; j >>= 1) {
        if (j == 32) {  // partner in the same lane (kk = 64: ascending)
          const std::uint32_t lo = x[0] < x[1] ? x[0] : x[1];
          x[1] = x[0] < x[1] ? x[1] : x[0];
          x[0] = lo;
          continue;
        }
        SPK_DEVICE_UNROLL
        for (int h = 0; h < 2; ++h) {
          const bool ascending = kk == 64 || ((lane + 32 * h) & kk) == 0;
          const bool lower = (lane & j) == 0;
          const std::uint32_t y = warp::shfl_xor(x[h], j);
          const bool keep_min = lower == ascending;
          x[h] = keep_min ? (x[h] < y ? x[h] : y) : (x[h] < y ? y : x[h]);
        }
      }
    // neighbours in sorted order: before (for "first of its position") and after (B's entry
    // of a position both operands hold follows A's)
    const std::uint32_t up0 = warp::shfl_up(x[0], 1), up1 = warp::shfl_up(x[1], 1);
    const std::uint32_t last0 = warp::shfl(x[0], warp::size - 1);
    const std::uint32_t down0 = warp::shfl_down(x[0], 1), down1 = warp::shfl_down(x[1], 1);
    const std::uint32_t first1 = warp::shfl(x[1], 0);
    const std::uint32_t prev[2] = {lane == 0 ? none : up0, lane == 0 ? last0 : up1};
    const std::uint32_t next[2] = {lane == warp::size - 1 ? first1 : down0,
                                   lane == warp::size - 1 ? none : down1};
    bool head[2];
    SPK_DEVICE_UNROLL
    for (int h = 0; h < 2; ++h) head[h] = x[h] != none && (x[h] >> 7) != (prev[h] >> 7);
    const unsigned b0 = warp::ballot(head[0]), b1 = warp::ballot(head[1]);
    const unsigned below = (1u << lane) - 1u;
    const std::int64_t rank[2] = {popcount32(b0 & below),
                                  popcount32(b0) + popcount32(b1 & below)};
    const std::int64_t n = popcount32(b0) + popcount32(b1);
    std::int64_t off = 0;
    if (lane == 0) off = publish(n, w.parent);
    off = warp::shfl(off, 0);
    if (off < 0) return;
    clear(off, n, lane, warp::size);
    SPK_DEVICE_UNROLL
    for (int h = 0; h < 2; ++h)
      if (head[h]) emit_key(off, n, rank[h], x[h], next[h], 7, lists, w);
  }

  /// A team per pair with a dense or a transposed side (or a sparse pair too large for the warp
  /// bin): occupancy bitmaps in team scratch (`scratch`: bitmap_scratch_words(d) words: the
  /// staged leaf, then the bitmaps and prefix counts).
  template <class Member>
  KOKKOS_INLINE_FUNCTION void bitmap(const Member& m, std::int64_t k,
                                      std::uint32_t* scratch) const {
    const AddItem w = in(begin + k);
    const int d = 1 << log2d;
    const std::int64_t nw = std::int64_t(bitmap_words(d));
    const std::int64_t stage = stage_entries(d);
    Slot* staged_slots = reinterpret_cast<Slot*>(scratch);
    std::uint16_t* staged_coords = reinterpret_cast<std::uint16_t*>(staged_slots + stage);
    std::uint32_t* bits = reinterpret_cast<std::uint32_t*>(staged_coords + stage);
    std::uint32_t* bits_a = bits;
    std::uint32_t* bits_b = bits + nw;
    std::uint32_t* prefix = bits + 2 * nw;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, nw), [&](const std::int64_t i) {
      bits_a[i] = 0;
      bits_b[i] = 0;
    });
    m.team_barrier();
    const int lane = m.team_rank(), stride = m.team_size();
    mark_bits(w, bits_a, bits_b, lane, stride);
    m.team_barrier();
    Kokkos::parallel_scan(Kokkos::TeamThreadRange(m, nw),
                          [&](const std::int64_t i, std::int64_t& before, const bool final) {
                            if (final) prefix[i] = std::uint32_t(before);
                            before += popcount32(bits_a[i] | bits_b[i]);
                          });
    m.team_barrier();
    const std::int64_t n =
        std::int64_t(prefix[nw - 1]) + popcount32(bits_a[nw - 1] | bits_b[nw - 1]);
    std::int64_t off = -1;
    Kokkos::single(
        Kokkos::PerTeam(m), [&](std::int64_t& o) { o = publish(n, w.parent); }, off);
    if (off < 0) return;
    if (stage > 0 && n <= stage && add_node_type(n, int(sizeof(S)), d) == coo4) {
      // a sparse leaf: built in scratch, written out in order
      fill_from_bitmaps(off, n, w, bits_a, bits_b, prefix, lane, stride,
                        [&] { m.team_barrier(); }, staged_slots, staged_coords);
      m.team_barrier();
      write_staged(off, n, staged_slots, staged_coords, lane, stride);
      return;
    }
    clear(off, n, m.team_rank(), m.team_size());
    m.team_barrier();
    fill_from_bitmaps(off, n, w, bits_a, bits_b, prefix, lane, stride,
                      [&] { m.team_barrier(); });
  }

  /// Writes the COO4 leaf at `off` with n entries (count already placed) from its entries in
  /// scratch (ranks 0..n-1), with lanes lane, lane + stride, ...: consecutive lanes write
  /// consecutive 8-byte words (four coordinates, or a value), padding included.
  KOKKOS_INLINE_FUNCTION void write_staged(std::int64_t off, std::int64_t n, const Slot* sv,
                                           const std::uint16_t* sc, int lane, int stride) const {
    char* node = out + off;
    const std::int64_t padded = padded_count(coo4, n);
    const std::int64_t so = slots_offset(coo4, n);
    if (lane == 0) *reinterpret_cast<std::uint32_t*>(node + 4) = 0;
    std::uint64_t* cw = reinterpret_cast<std::uint64_t*>(node + coords_offset(coo4));
    const std::int64_t words = (so - coords_offset(coo4)) / 8;
    for (std::int64_t i = lane; i < words; i += stride) {
      std::uint64_t v = 0;
      for (int j = 0; j < 4; ++j)
        if (4 * i + j < n) v |= std::uint64_t(sc[4 * i + j]) << (16 * j);
      cw[i] = v;
    }
    Slot* slots = reinterpret_cast<Slot*>(node + so);
    for (std::int64_t i = lane; i < padded; i += stride) slots[i] = i < n ? sv[i] : Slot(0);
  }
};

/// A level's queue: per bin a segment of `items`, its capacity and its device-side fill.
template <class Device>
struct AddQueue {
  Kokkos::View<AddItem*, Device> items;
  PairBins bins{};
  Kokkos::View<std::int64_t*, Device> tail;
};

/// Buffers an addition can keep for the next one (spk::HiSparseAddWorkspace): the working pool,
/// the device counters and one queue per level. Each grows to the largest request seen; a
/// request that fits reuses the buffer (counters and queue tails are reset with a memset).
/// Copies share the buffers (Kokkos views): one addition at a time per workspace and its
/// copies; destroy it before Kokkos::finalize.
template <class Device>
struct AddWorkspace {
  Kokkos::View<std::uint64_t*, Device> pool;
  Kokkos::View<std::int64_t*, Device> info;
  std::vector<Kokkos::View<AddItem*, Device>> items;
  std::vector<Kokkos::View<std::int64_t*, Device>> tails;

  /// Device bytes held.
  std::size_t bytes() const {
    std::size_t b = pool.span() * sizeof(std::uint64_t) + info.span() * sizeof(std::int64_t);
    for (const auto& v : items) b += v.span() * sizeof(AddItem);
    for (const auto& v : tails) b += v.span() * sizeof(std::int64_t);
    return b;
  }
};

/// A buffer of at least n elements: `keep` when it is large enough, else a new one (stored in
/// `keep` when a workspace is given). `zero`: the first n elements read as zero.
template <class View>
View add_buffer(View* keep, std::size_t n, const char* label, bool zero) {
  if (keep && keep->extent(0) >= n) {
    if (zero)
      Kokkos::deep_copy(Kokkos::subview(*keep, std::make_pair(std::size_t(0), n)),
                        typename View::non_const_value_type{});
    return *keep;
  }
  if (keep) *keep = View();  // the smaller buffer goes before the larger one comes
  View v = zero ? View(std::string(label), n)
                : View(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), n);
  if (keep) {
    *keep = v;
  }
  return v;
}

/// Capacities of the bins of level l: the pairs of a level are at most the operands' nodes of
/// that level together (every node is in exactly one pair), and a pair of a bin contains a node
/// of a kind the operands' statistics count:
///   small: a sparse node with <= 16 entries (COO1, COO2, COO4 up to 64);
///   merge: a sparse node of an untransposed operand; merge_huge: one with > 256 entries;
///   bitmap: a dense node, or a sparse node of a transposed operand (any, without merging);
///   warp (when enabled: merge gets no pairs, bitmap only sparse pairs of more than
///   add_warp_max entries, which hold a node of more than 512): a sparse node.
template <class Device>
AddQueue<Device> make_add_queue(const HiSparseData<Device>& a, bool ta,
                                const HiSparseData<Device>& b, bool tb, int l,
                                const AddLaunch& launch, AddWorkspace<Device>* ws) {
  std::int64_t cap[num_pair_bins] = {};
  std::int64_t total = 0;
  auto count = [&](const HiSparseData<Device>& x, bool trans) {
    if (std::size_t(l) >= x.stats.level.size()) return;
    const HiSparseLevelStats& s = x.stats.level[std::size_t(l)];
    total += s.sparse_nodes + s.dense_nodes;
    cap[pair_small] += s.bin_nodes[bin_coo1] + s.bin_nodes[bin_coo2] + s.bin_nodes[bin_small] +
                       s.bin_nodes[bin_medium];
    const bool merged = !launch.warp_pairs && launch.merge && !trans;
    if (launch.warp_pairs) cap[pair_warp] += s.sparse_nodes;
    if (merged) {
      cap[pair_merge] += s.sparse_nodes;
      cap[pair_merge_huge] += s.bin_nodes[bin_large] + s.bin_nodes[bin_huge];
    }
    cap[pair_bitmap] += s.dense_nodes + (launch.warp_pairs ? s.bin_nodes[bin_huge]
                                         : merged       ? 0
                                                        : s.sparse_nodes);
  };
  count(a, ta);
  count(b, tb);
  AddQueue<Device> q;
  std::int64_t at = 0;
  for (unsigned k = 0; k < num_pair_bins; ++k) {
    q.bins.begin[k] = at;
    q.bins.cap[k] = std::min(cap[k], total);
    at += q.bins.cap[k];
  }
  if (ws && ws->items.size() <= std::size_t(l)) {
    ws->items.resize(std::size_t(l) + 1);
    ws->tails.resize(std::size_t(l) + 1);
  }
  q.items = add_buffer(ws ? &ws->items[std::size_t(l)] : nullptr, std::size_t(at),
                       "spk::hisparse::add_queue", false);
  q.tail = add_buffer(ws ? &ws->tails[std::size_t(l)] : nullptr, std::size_t(num_pair_bins),
                      "spk::hisparse::add_tail", true);
  return q;
}

/// Teams of a launch over `units` units (see AddPairs::operator()) of teams of `threads`
/// threads: on a GPU at most add_waves times what its multiprocessors hold at once (2048 threads
/// each), so that the capacity bound of a bin (every node of the level's operands) launches no
/// crowd of empty teams, while the teams that find the device's multiprocessors full wait
/// for a wave of a few units each (at most 1/add_waves of the kernel's time is imbalance);
/// one team per unit on CPU backends.
constexpr std::int64_t add_waves = 8;
template <class ExecSpace>
std::int64_t add_league(std::int64_t units, int threads, int max_teams) {
  if (max_teams > 0) return std::min(units, std::int64_t(max_teams));
  if (!is_gpu_space<ExecSpace>()) return units;
  const std::int64_t resident =
      std::int64_t(multiprocessor_count<ExecSpace>()) * std::max(1, 2048 / std::max(1, threads));
  return std::min(units, add_waves * resident);
}

/// Launches the pairs of bin Bin of a level.
template <class S, class Device, bool Leaf, unsigned Bin>
void launch_add_bin(const PairClassifier& cls, char* out, std::int64_t out_capacity, int log2d,
                    S scale_a, S scale_b, int level, const AddQueue<Device>& q,
                    const AddQueue<Device>* next, const Kokkos::View<std::int64_t*, Device>& info,
                    const AddLaunch& launch) {
  using exec = typename Device::execution_space;
  using F = AddPairs<S, Device, Leaf, Bin>;
  const std::int64_t cap = q.bins.cap[Bin];
  if (cap == 0) return;
  F f;
  f.classify = cls;
  f.out = out;
  f.out_capacity = out_capacity;
  f.log2d = log2d;
  f.scale_a = scale_a;
  f.scale_b = scale_b;
  f.level = level;
  f.in = q.items;
  f.begin = q.bins.begin[Bin];
  f.in_count = q.tail;
  f.in_cap = cap;
  if (next) {
    f.next = next->items;
    f.next_bins = next->bins;
    f.next_tail = next->tail;
  } else {
    f.next_bins = PairBins{};
  }
  f.info = info;
  if constexpr (Bin == pair_warp) {
    // add_warps_per_team warps of 32 lanes, a pair each
    const std::size_t scratch = F::scratch_bytes(1 << log2d, add_warps_per_team);
    f.groups = add_warps_per_team;
    const std::int64_t league = add_league<exec>(
        (cap + add_warps_per_team - 1) / add_warps_per_team, add_warps_per_team * Warp<exec>::size,
        launch.max_teams);
    require(league <= std::int64_t(std::numeric_limits<int>::max()), "spk::add (HiSparse)",
            "level ", level, " has ", cap, " node pairs, more than one launch takes");
    Kokkos::TeamPolicy<exec> policy(int(league), add_warps_per_team, Warp<exec>::size);
    policy = policy.set_scratch_size(0, Kokkos::PerTeam(scratch));
    Kokkos::parallel_for(Leaf ? "spk::hisparse::add_leaves_warp" : "spk::hisparse::add_inner_warp",
                         policy, f);
    return;
  }
  const int want = Bin == pair_small  ? launch.small_pairs_per_team
                   : Bin == pair_merge ? launch.merge_team
                                       : launch.big_team;
  Kokkos::TeamPolicy<exec> probe(1, 1);
  const std::size_t probe_scratch = F::scratch_bytes(1 << log2d, want);
  if (probe_scratch > 0) probe = probe.set_scratch_size(0, Kokkos::PerTeam(probe_scratch));
  int team = std::max(1, std::min(want, probe.team_size_max(f, Kokkos::ParallelForTag())));
  // Kokkos's CUDA team scans need a power-of-two team (team_size_max need not be one: it
  // counts the scratch, ~45 KiB in the bitmap bin)
  while (team & (team - 1)) team &= team - 1;
  const std::size_t scratch = F::scratch_bytes(1 << log2d, team);
  f.groups = Bin == pair_small ? team : 1;
  const std::int64_t league =
      add_league<exec>((cap + f.groups - 1) / f.groups, team, launch.max_teams);
  require(league <= std::int64_t(std::numeric_limits<int>::max()), "spk::add (HiSparse)",
          "level ", level, " has ", cap, " node pairs, more than one launch takes");
  Kokkos::TeamPolicy<exec> policy(int(league), team, 1);
  if (scratch > 0) policy = policy.set_scratch_size(0, Kokkos::PerTeam(scratch));
  Kokkos::parallel_for(Leaf ? "spk::hisparse::add_leaves" : "spk::hisparse::add_inner", policy,
                       f);
}

template <class S, class Device, bool Leaf>
void launch_add_level(const PairClassifier& cls, char* out, std::int64_t out_capacity, int log2d,
                      S scale_a, S scale_b, int level, const AddQueue<Device>& q,
                      const AddQueue<Device>* next,
                      const Kokkos::View<std::int64_t*, Device>& info, const AddLaunch& launch) {
  // heavy bins first: their teams start early, many small pairs fill the tail
  launch_add_bin<S, Device, Leaf, pair_bitmap>(cls, out, out_capacity, log2d, scale_a, scale_b,
                                               level, q, next, info, launch);
  launch_add_bin<S, Device, Leaf, pair_merge_huge>(cls, out, out_capacity, log2d, scale_a,
                                                   scale_b, level, q, next, info, launch);
  launch_add_bin<S, Device, Leaf, pair_warp>(cls, out, out_capacity, log2d, scale_a, scale_b,
                                             level, q, next, info, launch);
  launch_add_bin<S, Device, Leaf, pair_merge>(cls, out, out_capacity, log2d, scale_a, scale_b,
                                              level, q, next, info, launch);
  launch_add_bin<S, Device, Leaf, pair_small>(cls, out, out_capacity, log2d, scale_a, scale_b,
                                              level, q, next, info, launch);
}

/// Nodes of all levels of a content.
template <class Device>
std::int64_t total_nodes(const HiSparseData<Device>& x) {
  std::int64_t n = 0;
  for (const auto& s : x.stats.level) n += s.sparse_nodes + s.dense_nodes;
  return n;
}

/// The content of C = op(A) + op(B), op(X) = scale_x * (X or X^T), both nrows x ncols (checked
/// by the caller, with equal node sizes). O(nodes + entries) work; one read-back.
template <class S, class Device>
std::shared_ptr<HiSparseData<Device>> add_hisparse(const HiSparseData<Device>& a, bool trans_a,
                                                   S scale_a, const HiSparseData<Device>& b,
                                                   bool trans_b, S scale_b, std::int64_t nrows,
                                                   std::int64_t ncols, const AddLaunch& launch_in,
                                                   AddWorkspace<Device>* ws = nullptr) {
  using exec = typename Device::execution_space;
  using ref_type = ref_t<S>;
  static_assert(sizeof(S) == sizeof(ref_type), "HiSparse slots: value and reference widths");
  const char* where = "spk::add (HiSparse)";
  require(a.d == b.d && a.levels == b.levels, where, "internal error: node sizes ", a.d, " and ",
          b.d, ", levels ", a.levels, " and ", b.levels);
  auto out = std::make_shared<HiSparseData<Device>>();
  out->d = a.d;
  out->log2d = a.log2d;
  out->levels = a.levels;
  out->nrows = nrows;
  out->ncols = ncols;
  out->stats.node_size = a.d;
  out->stats.levels = a.levels;
  out->stats.level.resize(std::size_t(a.levels));
  if (a.root == 0 && b.root == 0) return out;
  const int levels = a.levels;
  const int d = a.d;
  const int slot_bytes = int(sizeof(S));
  AddLaunch launch = launch_in;
  launch.warp_pairs = launch.warp_pairs && warp_pairs_possible<exec>(d);
  // Pool bound. A result node is never larger than a dense node, so a pair with a dense side
  // takes at most that side's bytes, and a one-sided pair at most its node's (sizes grow with
  // the entry count). For two sparse nodes of a and b entries (bytes >= 4 + (2 + s) a each: a
  // header, coordinates and slots) the union has m <= a + b entries in at most
  // align16(8 + 2p) + p s <= 16 + (2 + s) (m + 3) bytes (p = m rounded up to 4), i.e. at most
  // 14 + 3 s bytes more than the two inputs (e.g. COO1 + COO4 of 4 -> COO4 of 5: 16 + 32 -> 64
  // bytes for floats): the inputs' pools plus that much per two-sided pair, of which there are
  // at most min(nodes of A, nodes of B).
  const std::int64_t extra = align16(14 + 3 * slot_bytes);
  const std::int64_t capacity = a.stats.pool_bytes + b.stats.pool_bytes +
                                extra * std::min(total_nodes(a), total_nodes(b));
  // not zeroed: every node's writer clears its padding (AddPairs::clear)
  const Kokkos::View<std::uint64_t*, Device> big = add_buffer(
      ws ? &ws->pool : nullptr, std::size_t(capacity / 8), "spk::hisparse::add_pool", false);
  const Kokkos::View<std::int64_t*, Device> info = add_buffer(
      ws ? &ws->info : nullptr,
      std::size_t(add_info_levels + levels * add_stat_slices * add_info_per_level),
      "spk::hisparse::add_info", true);
  const PairClassifier cls{reinterpret_cast<const char*>(a.pool.data()),
                           reinterpret_cast<const char*>(b.pool.data()),
                           d,
                           trans_a,
                           trans_b,
                           launch.small_entries,
                           launch.merge,
                           launch.warp_pairs};
  AddQueue<Device> q = make_add_queue(a, trans_a, b, trans_b, 0, launch, ws);
  {
    const std::uint64_t ra = a.root, rb = b.root;
    const auto items = q.items;
    const auto tail = q.tail;
    const PairBins bins = q.bins;
    Kokkos::parallel_for(
        "spk::hisparse::add_root", Range64<exec>(0, 1), KOKKOS_LAMBDA(const std::int64_t) {
          const unsigned bin = cls(ra, rb);
          const std::int64_t at = atomic_fetch_add_int(&tail(bin), std::int64_t(1));
          items(bins.begin[bin] + at) = AddItem{ra, rb, 0, 0, -1};
        });
  }
  char* pool = reinterpret_cast<char*>(big.data());
  for (int l = 0; l < levels; ++l) {
    const bool leaf = l == levels - 1;
    AddQueue<Device> next;
    if (!leaf) next = make_add_queue(a, trans_a, b, trans_b, l + 1, launch, ws);
    if (leaf)
      launch_add_level<S, Device, true>(cls, pool, capacity, a.log2d, scale_a, scale_b, l, q,
                                        nullptr, info, launch);
    else
      launch_add_level<S, Device, false>(cls, pool, capacity, a.log2d, scale_a, scale_b, l, q,
                                         &next, info, launch);
    q = next;
  }
  // the one read-back
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
  if (h(add_info_error) != 0)
    throw_runtime_error(where, "internal error: ",
                        h(add_info_error) == 1 ? "the pool bound" : "a queue bound",
                        " was exceeded");
  const std::int64_t used = h(add_info_used);
  require(sizeof(ref_type) == 8 || used <= std::int64_t(0xffffffff), where, "the result needs ",
          used, " bytes, more than 4-byte child references (float values) address");
  out->pool = Kokkos::View<std::uint64_t*, Device>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hisparse::pool"),
      std::size_t(used / 8));
  Kokkos::deep_copy(out->pool, Kokkos::subview(big, std::make_pair(std::size_t(0),
                                                                   std::size_t(used / 8))));
  out->root = std::uint64_t(h(add_info_root));
  out->stats.pool_bytes = used;
  for (int l = 0; l < levels; ++l) {
    std::int64_t sum[add_info_per_level] = {};
    for (int c = 0; c < add_stat_slices; ++c)
      for (int i = 0; i < add_info_per_level; ++i)
        sum[i] += h(add_info_levels + (l * add_stat_slices + c) * add_info_per_level + i);
    HiSparseLevelStats& s = out->stats.level[std::size_t(l)];
    s.sparse_nodes = sum[0];
    s.dense_nodes = sum[1];
    s.sparse_entries = sum[2];
    s.dense_entries = sum[3];
    s.bytes = sum[4];
    for (unsigned k = 0; k < num_bins; ++k) s.bin_nodes[k] = sum[5 + int(k)];
  }
  const HiSparseLevelStats& leaves = out->stats.level.back();
  out->stats.stored_entries = leaves.sparse_entries + leaves.dense_entries;
  out->input_entries = out->stats.stored_entries;
  return out;
}

}  // namespace hisparse
}  // namespace impl
}  // namespace spk
