// spk/impl/assembly_kernels.hpp: the kernels behind spk/assembly/assemble.hpp: the node
// incidence (E in compressed-row form), the pattern of E E^T, the element data and the numeric
// placement through action maps. Every kernel gives each output row to one thread (with its
// vector lanes), so none of them needs an atomic on a value; the incidence count is the only
// integer atomic.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <spk/error.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/search.hpp>
#include <spk/impl/warp.hpp>

namespace spk {
namespace impl {

/// int64 values of scan_in_place's workspace for n entries.
inline std::size_t scan_workspace(std::size_t n) { return 2 * ((n + 4095) / 4096 + 1); }

/// Inclusive prefix sum of `a` in place (a(i) = a(0) + ... + a(i), summed in int64 and stored
/// as T) without waiting for it: three launches (chunk sums, their scan by one team, the chunks'
/// scans) on `workspace`, scan_workspace(a.extent(0)) int64 values on the device, after which
/// workspace[scan_result_index(a.extent(0))] holds the total and the next value the largest
/// entry of `a` before the scan. Nothing is copied to the host.
inline std::size_t scan_result_index(std::size_t n) { return (n + 4095) / 4096; }

template <class Device, class T>
void scan_in_place_async(const char* label, const Kokkos::View<T*, Device>& a,
                         std::int64_t* workspace) {
  using exec = typename Device::execution_space;
  using policy = Kokkos::TeamPolicy<exec>;
  using member = typename policy::member_type;
  const std::int64_t len = std::int64_t(a.extent(0));
  const std::int64_t chunk = 4096;
  const int chunks = int((len + chunk - 1) / chunk);
  // An explicit team size: Kokkos 3.4 computes an AUTO team size with occupancy queries at
  // every launch (about 0.1 ms each on the H100).
  const int team = is_gpu_space<exec>() ? 256 : 1;
  const Kokkos::View<std::int64_t*, Device, Kokkos::MemoryUnmanaged> sums(
      workspace, 2 * (std::size_t(chunks) + 1));
  // sums(0 .. chunks): chunk sums, then their scan; sums(chunks + 1 ..): chunk maxima, then
  // (in sums(chunks + 1)) the maximum.
  if (chunks > 0)
    Kokkos::parallel_for(
        std::string(label) + "/sums", policy(chunks, team), KOKKOS_LAMBDA(const member& m) {
          const std::int64_t lo = m.league_rank() * chunk;
          const std::int64_t hi = lo + chunk < len ? lo + chunk : len;
          std::int64_t s = 0, mx = 0;
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(m, int(hi - lo)),
              [&](int i, std::int64_t& acc) { acc += std::int64_t(a(lo + i)); }, s);
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(m, int(hi - lo)),
              [&](int i, std::int64_t& acc) {
                if (std::int64_t(a(lo + i)) > acc) acc = std::int64_t(a(lo + i));
              },
              Kokkos::Max<std::int64_t>(mx));
          Kokkos::single(Kokkos::PerTeam(m), [&]() {
            sums(m.league_rank() + 1) = s;
            sums(chunks + 2 + m.league_rank()) = mx;
          });
        });
  Kokkos::parallel_for(
      std::string(label) + "/top", policy(1, team), KOKKOS_LAMBDA(const member& m) {
        Kokkos::single(Kokkos::PerTeam(m), [&]() {
          sums(0) = 0;
          std::int64_t mx = 0;
          for (int c = 0; c < chunks; ++c)
            if (sums(chunks + 2 + c) > mx) mx = sums(chunks + 2 + c);
          sums(chunks + 1) = mx;
        });
        m.team_barrier();
        Kokkos::parallel_scan(Kokkos::TeamThreadRange(m, chunks + 1),
                              [&](int i, std::int64_t& partial, bool final) {
                                partial += sums(i);
                                if (final) sums(i) = partial;
                              });
      });
  if (chunks > 0)
    Kokkos::parallel_for(
        std::string(label) + "/chunks", policy(chunks, team), KOKKOS_LAMBDA(const member& m) {
          const std::int64_t lo = m.league_rank() * chunk;
          const std::int64_t hi = lo + chunk < len ? lo + chunk : len;
          const std::int64_t offset = sums(m.league_rank());
          Kokkos::parallel_scan(Kokkos::TeamThreadRange(m, int(hi - lo)),
                                [&](int i, std::int64_t& partial, bool final) {
                                  partial += std::int64_t(a(lo + i));
                                  if (final) a(lo + i) = T(offset + partial);
                                });
        });
}

/// Inclusive prefix sum of `a` in place (scan_in_place_async), returning the total (summed in
/// int64 and stored as T; the caller checks that the total fits); `max_value`, when given,
/// receives the largest entry of `a` before the scan. `workspace`, when given, holds
/// scan_workspace(a.extent(0)) int64 values on the device (else they are allocated).
template <class Device, class T>
std::int64_t scan_in_place(const char* label, const Kokkos::View<T*, Device>& a,
                           std::int64_t* workspace = nullptr, T* max_value = nullptr) {
  const std::size_t len = a.extent(0);
  if (len == 0) {
    if (max_value) *max_value = T(0);
    return 0;
  }
  Kokkos::View<std::int64_t*, Device> own;
  if (!workspace) {
    own = Kokkos::View<std::int64_t*, Device>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)),
        scan_workspace(len));
    workspace = own.data();
  }
  scan_in_place_async(label, a, workspace);
  std::int64_t ends[2] = {0, 0};  // total and maximum, one copy
  Kokkos::deep_copy(
      Kokkos::View<std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(ends, 2),
      Kokkos::View<std::int64_t*, Device, Kokkos::MemoryUnmanaged>(
          workspace + scan_result_index(len), 2));
  if (max_value) *max_value = T(ends[1]);
  return ends[0];
}

/// E in compressed-row form: node v is in the elements entries(map(v)) .. entries(map(v+1)-1),
/// each stored packed as e * K + k (k: v's local index in element e), in increasing e.
template <class Device>
struct NodeIncidence {
  Kokkos::View<int*, Device> map;
  Kokkos::View<int*, Device> entries;
  int max_degree = 0;
};

/// Transposes the element table `nodes` of n_nodes nodes: count (integer atomics), scan, fill
/// through per-node cursors (`cursor`: at least n_nodes ints the caller lends, else allocated;
/// `scan_ws`: scan_in_place's workspace, else allocated). Each node's list comes out in the
/// order the fill ran in; callers that need element order sort it (sort_incidence, or the
/// pattern kernels). Used by MeshMatrix; the symbolic phase has its own launches. O(nnz).
template <class Device>
NodeIncidence<Device> node_incidence(int n_nodes, const Kokkos::View<int*, Device>& nodes,
                                     Kokkos::View<int*, Device> cursor = {},
                                     std::int64_t* scan_ws = nullptr) {
  using exec = typename Device::execution_space;
  const int nnz = int(nodes.extent(0));
  NodeIncidence<Device> r;
  r.map = Kokkos::View<int*, Device>("spk::assembly::incidence_map", std::size_t(n_nodes) + 1);
  r.entries = Kokkos::View<int*, Device>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::assembly::incidence"),
      std::size_t(nnz));
  const auto map = r.map;
  const auto entries = r.entries;
  Kokkos::parallel_for(
      "spk::assembly::incidence::count", Kokkos::RangePolicy<exec>(0, nnz),
      KOKKOS_LAMBDA(int p) { atomic_add_int(&map(nodes(p) + 1), 1); });
  int max_degree = 0;
  scan_in_place("spk::assembly::incidence::scan", map, scan_ws, &max_degree);
  r.max_degree = max_degree;
  if (cursor.extent(0) < std::size_t(n_nodes))
    cursor = Kokkos::View<int*, Device>("spk::assembly::incidence::cursor", std::size_t(n_nodes));
  else
    Kokkos::deep_copy(cursor, 0);
  Kokkos::parallel_for(
      "spk::assembly::incidence::fill", Kokkos::RangePolicy<exec>(0, nnz), KOKKOS_LAMBDA(int p) {
        const int v = nodes(p);
        entries(map(v) + atomic_fetch_add_int(&cursor(v), 1)) = p;
      });
  return r;
}

/// Sorts each node's incidences (insertion sort, one thread per node: lists are as long as a
/// node's element count). O(sum of squared degrees).
template <class Device>
void sort_incidence(int n_nodes, const NodeIncidence<Device>& r) {
  using exec = typename Device::execution_space;
  const auto map = r.map;
  const auto entries = r.entries;
  Kokkos::parallel_for(
      "spk::assembly::incidence::sort", Kokkos::RangePolicy<exec>(0, n_nodes),
      KOKKOS_LAMBDA(int v) {
        for (int s = map(v) + 1; s < map(v + 1); ++s) {
          const int key = entries(s);
          int t = s - 1;
          for (; t >= map(v) && entries(t) > key; --t) entries(t + 1) = entries(t);
          entries(t + 1) = key;
        }
      });
}

/// Launch shape of the row kernels: `rows` rows per team, `lanes` vector lanes per row, the
/// per-row scratch in level `level` (0: shared memory, 1: global).
struct RowLaunch {
  int rows = 1;
  int lanes = 1;
  int level = 0;
};

/// Smallest power of two >= x, clamped to [lo, hi].
inline int pow2_clamp(double x, int lo, int hi) {
  int p = lo;
  while (p < hi && p < x) p *= 2;
  return p;
}

/// Shape for rows of mean work `mean` (lanes: a power of two near it) with `scratch_bytes` of
/// per-row scratch and about `threads` threads per team; lanes and rows from the caller when
/// positive.
template <class ExecSpace>
RowLaunch row_launch(double mean, std::size_t scratch_bytes, int lanes, int rows,
                     int threads = 128) {
  require(lanes >= 0 && lanes <= 32 && (lanes & (lanes - 1)) == 0, "spk::AssemblyParams",
          "lanes per row must be 0 (automatic) or a power of two up to 32, not ", lanes);
  require(rows >= 0, "spk::AssemblyParams", "rows per team must be >= 0, not ", rows);
  RowLaunch l;
  if (is_gpu_space<ExecSpace>()) {
    l.lanes = lanes > 0 ? lanes : pow2_clamp(mean, 4, 32);
    // A row's lanes synchronise with the whole warp (Warp::sync), so a team is whole warps:
    // rows a multiple of 32 / lanes.
    const int per_warp = 32 / l.lanes;
    l.rows = rows > 0 ? rows : (threads + l.lanes - 1) / l.lanes;
    l.rows = (l.rows + per_warp - 1) / per_warp * per_warp;
    const std::size_t shared_limit = 40 * 1024;
    while (l.rows > per_warp && std::size_t(l.rows) * scratch_bytes > shared_limit)
      l.rows -= per_warp;
    l.level = std::size_t(l.rows) * scratch_bytes > shared_limit ? 1 : 0;
  } else {
    l.lanes = 1;
    l.rows = 1;
    l.level = 0;
  }
  return l;
}

/// Pattern of E E^T and its action map, one row v per thread and its vector lanes, for the
/// rows whose candidate count c lies in (c_lo, c_hi] (the scratch is sized for c_hi; a second
/// launch takes the few longer rows). Row v's candidates are t = s K + b for each of v's
/// incidences s (element e, v's local index k) and each local node b of e: node nodes(e K + b),
/// contribution (e K + k) K + b. The row
///  - sorts v's incidences by element (written back to inc), so contributions come in element
///    order;
///  - finds the distinct candidate nodes through a hash table in scratch (compare-and-swap
///    inserts) and ranks them: the sorted row, written to tmp_cols(base + r), base = inc_map(v) K
///    (u <= c, so row v owns [base, base + c) of every K^2-per-element array);
///  - groups the contributions by column in candidate order: contrib(base ...) (their final
///    place) with column r's first at tmp_start(base + r);
///  - writes u to row_len(v + 1);
///  - when `slots` is given, the inverse of that grouping: slots(base + t) = where candidate t
///    (incidence t / K, local column node t % K) went in contrib.
/// O(c + deg^2 + u^2 + sum of squared column counts) / lanes per row (deg incidences, u
/// distinct nodes).
template <class Device>
struct PatternRows {
  using exec = typename Device::execution_space;
  using member = typename Kokkos::TeamPolicy<exec>::member_type;
  using scratch_ints = Kokkos::View<int*, typename exec::scratch_memory_space,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::View<const int*, Device> nodes, inc_map;
  Kokkos::View<int*, Device> inc, row_len, tmp_cols, tmp_start, contrib;
  /// When given (non-empty), slots(base + t) = where candidate t's contribution went in contrib.
  Kokkos::View<int*, Device> slots;
  /// When list_n >= 0, the rows to take are row_list(0 .. list_n - 1) (the long rows), else all.
  Kokkos::View<const int*, Device> row_list;
  int list_n = -1;
  /// When set, row list entry i works in global_base + i * scratch_ints(c_hi) instead of team
  /// scratch (rows too long for shared memory; sized by the caller for list_n rows).
  int* global_base = nullptr;
  int n = 0, k = 1, c_lo = -1, c_hi = 0, level = 0;

  /// Hash-table slots for c candidates: a power of two >= 2 c.
  KOKKOS_INLINE_FUNCTION static int table_size(int c) {
    int h = 2;
    while (h < 2 * c) h *= 2;
    return h;
  }
  /// Per-row scratch in ints: the table (keys, values), sorted incidences, candidates, their
  /// columns, distinct nodes, a counter.
  KOKKOS_INLINE_FUNCTION static std::size_t scratch_ints_of(int c) {
    return 2 * std::size_t(table_size(c)) + 4 * std::size_t(c) + 1;
  }
  static std::size_t scratch_bytes(int c) { return scratch_ints_of(c) * sizeof(int) + 64; }

  KOKKOS_INLINE_FUNCTION static int slot_of(int x, int mask) {
    return int((unsigned(x) * 2654435761u) & unsigned(mask));
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const int idx = m.league_rank() * m.team_size() + m.team_rank();
    const int v = list_n < 0 ? idx : (idx < list_n ? row_list(idx) : n);
    const int first = v < n ? inc_map(v) : 0;
    const int deg_all = v < n ? inc_map(v + 1) - first : 0;
    const bool active = v < n && deg_all * k > c_lo && deg_all * k <= c_hi;
    const int deg = active ? deg_all : 0;
    const int c = deg * k;
    const int h = table_size(c_hi), mask = h - 1;
    const int h_used = active ? h : 0;  // inactive rows touch no scratch (none exists for them
                                        // in the global case)
    int* base = nullptr;
    if (global_base)
      base = idx < list_n ? global_base + std::size_t(idx) * scratch_ints_of(c_hi) : nullptr;
    else
      base = static_cast<int*>(
          m.thread_scratch(level).get_shmem(scratch_ints_of(c_hi) * sizeof(int)));
    const std::size_t hh = std::size_t(h), cc = std::size_t(c_hi);
    scratch_ints keys(base, hh);
    scratch_ints vals(base ? base + hh : nullptr, hh);
    scratch_ints sinc(base ? base + 2 * hh : nullptr, cc);
    scratch_ints cand(base ? base + 2 * hh + cc : nullptr, cc);
    scratch_ints ccol(base ? base + 2 * hh + 2 * cc : nullptr, cc);
    scratch_ints uniq(base ? base + 2 * hh + 3 * cc : nullptr, cc);
    scratch_ints counter(base ? base + 2 * hh + 4 * cc : nullptr, 1);
    // v's incidences (packed e K + k) into cand[0, deg), sorted into sinc[0, deg) by rank (they
    // are distinct); the table emptied.
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, deg),
                         [&](int s) { cand(s) = inc(first + s); });
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, h_used), [&](int i) { keys(i) = -1; });
    Kokkos::single(Kokkos::PerThread(m), [&]() {
      if (active) counter(0) = 0;
    });
    Warp<exec>::sync();
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, deg), [&](int s) {
      const int p = cand(s);
      int rank = 0;
      for (int u = 0; u < deg; ++u) rank += cand(u) < p ? 1 : 0;
      sinc(rank) = p;
      inc(first + rank) = p;
    });
    Warp<exec>::sync();
    // Candidates (in sorted incidence order) and the distinct ones.
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, c), [&](int t) {
      const int p = sinc(t / k);
      const int x = nodes(p - p % k + t % k);
      cand(t) = x;
      for (int i = slot_of(x, mask);; i = (i + 1) & mask) {
        const int prev = Kokkos::atomic_compare_exchange(&keys(i), -1, x);
        if (prev == -1) {
          uniq(Kokkos::atomic_fetch_add(&counter(0), 1)) = x;
          break;
        }
        if (prev == x) break;
      }
    });
    Warp<exec>::sync();
    const int u = active ? counter(0) : 0;
    const int slice = first * k;
    // Distinct nodes ranked: the sorted row, and each node's rank in the table.
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, u), [&](int i) {
      const int x = uniq(i);
      int rank = 0;
      for (int j = 0; j < u; ++j) rank += uniq(j) < x ? 1 : 0;
      tmp_cols(slice + rank) = x;
      int slot = slot_of(x, mask);
      while (keys(slot) != x) slot = (slot + 1) & mask;
      vals(slot) = rank;
    });
    Warp<exec>::sync();
    // Each candidate's column.
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, c), [&](int t) {
      const int x = cand(t);
      int slot = slot_of(x, mask);
      while (keys(slot) != x) slot = (slot + 1) & mask;
      ccol(t) = vals(slot);
    });
    Warp<exec>::sync();
    // Contributions grouped by column: counts (shared atomics), starts, placement through
    // per-column cursors, then each column's few candidates sorted back into candidate order
    // (element order), so the result does not depend on the order of the atomics. The table
    // and the distinct-node list are free now: keys = counts, vals = starts, uniq = cursors.
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, u), [&](int r) {
      keys(r) = 0;
      uniq(r) = 0;
    });
    Warp<exec>::sync();
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, c),
                         [&](int t) { Kokkos::atomic_add(&keys(ccol(t)), 1); });
    Warp<exec>::sync();
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, u), [&](int r) {
      int start = 0;
      for (int j = 0; j < r; ++j) start += keys(j);
      vals(r) = start;
      tmp_start(slice + r) = slice + start;
    });
    Warp<exec>::sync();
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, c), [&](int t) {
      const int r = ccol(t);
      cand(vals(r) + Kokkos::atomic_fetch_add(&uniq(r), 1)) = t;
    });
    Warp<exec>::sync();
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, u), [&](int r) {
      const int lo = vals(r), hi = lo + keys(r);
      for (int q = lo + 1; q < hi; ++q) {
        const int t = cand(q);
        int j = q - 1;
        for (; j >= lo && cand(j) > t; --j) cand(j + 1) = cand(j);
        cand(j + 1) = t;
      }
    });
    Warp<exec>::sync();
    const bool with_slots = slots.extent(0) > 0;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, c), [&](int q) {
      const int t = cand(q);
      contrib(slice + q) = sinc(t / k) * k + t % k;
      if (with_slots) slots(slice + t) = slice + q;
    });
    Kokkos::single(Kokkos::PerThread(m), [&]() {
      if (active) row_len(v + 1) = u;
      if (v == 0 && c_lo < 0) row_len(0) = 0;  // row_len is not zero-initialised
    });
    Warp<exec>::sync();  // the scratch is reused by the next row of this thread's team slot
  }
};

/// The W consecutive vector lanes that take one row together (W = the launch's vector length,
/// a power of two up to 32; on CUDA a row's lanes are part of one warp, elsewhere W is 1): lane
/// index, a barrier and the warp vote / match operations restricted to the group, bit i of a
/// result standing for the group's lane i.
struct LaneGroup {
  int w = 1;
#if defined(__CUDA_ARCH__)
  unsigned shift = 0, mask = 1;
  KOKKOS_INLINE_FUNCTION explicit LaneGroup(int lanes) : w(lanes) {
    // Kokkos launches a TeamPolicy with blockDim (vector length, team size): a row's lanes are
    // threadIdx.x, and whole rows share a warp.
    shift = (threadIdx.y * blockDim.x + threadIdx.x) & 31u & ~unsigned(lanes - 1);
    mask = (lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u)) << shift;
  }
  KOKKOS_INLINE_FUNCTION int lane() const { return int(threadIdx.x); }
  KOKKOS_INLINE_FUNCTION void sync() const { __syncwarp(mask); }
  KOKKOS_INLINE_FUNCTION unsigned ballot(bool p) const {
    return __ballot_sync(mask, p) >> shift;
  }
  /// The group's lanes holding the same x as this one.
  KOKKOS_INLINE_FUNCTION unsigned match(int x) const {
    return __match_any_sync(mask, x) >> shift;
  }
  KOKKOS_INLINE_FUNCTION static int popc(unsigned x) { return __popc(x); }
#else
  KOKKOS_INLINE_FUNCTION explicit LaneGroup(int lanes) : w(lanes) {}
  KOKKOS_INLINE_FUNCTION int lane() const { return 0; }
  KOKKOS_INLINE_FUNCTION void sync() const {}
  KOKKOS_INLINE_FUNCTION unsigned ballot(bool p) const { return p ? 1u : 0u; }
  KOKKOS_INLINE_FUNCTION unsigned match(int) const { return 1u; }
  KOKKOS_INLINE_FUNCTION static int popc(unsigned x) {
    int c = 0;
    for (; x; x &= x - 1) ++c;
    return c;
  }
#endif
};

/// Lanes per row the group kernel can use on ExecSpace: up to 32 on CUDA (lanes vote and match
/// through warp instructions), 1 elsewhere.
template <class ExecSpace>
constexpr bool lane_groups_on() {
#if defined(KOKKOS_ENABLE_CUDA)
  return std::is_same<ExecSpace, Kokkos::Cuda>::value;
#else
  return false;
#endif
}

/// Pattern of E E^T and its action map for rows of at most `cap` distinct columns and
/// 2 cap (rounded up to a power of two, `table`) incidences: one row per group of W lanes, in
/// 3 table + 3 cap ints of scratch per row (a few KB, so the launch keeps the GPU full). A row
/// past either capacity is appended to overflow(0 ..) (count in overflow(n)) and left to
/// PatternRows. Same outputs as PatternRows: the row's incidences sorted by element (written
/// back to inc); its sorted columns at tmp_cols(base ..) and their contribution starts at
/// tmp_start(base ..), base = inc_map(v) K; its contributions grouped by column in element
/// order at contrib(base ..); u at row_len(v + 1). Per row:
///  - the incidences ranked (O(deg^2 / W));
///  - pass 1 over the candidates, W at a time in element order: equal nodes within the W found by
///    a warp match, one insert per distinct node into a hash table in scratch (compare-and-swap),
///    new nodes numbered in lane order by a ballot, a count per node;
///  - the distinct nodes ranked (O(u^2 / W)), the counts' prefix sums give each column's start;
///  - pass 2 over the candidates: each one's column by binary search in the sorted row, its
///    place = the column's cursor + the number of earlier lanes with that column (a match), so
///    contributions land in element order without sorting; the cursors advance per W; the
///    place also goes to slots(base + t) when slots are kept.
/// Deterministic: no result depends on the order of the atomics.
template <class Device>
struct PatternRowsGroup {
  using exec = typename Device::execution_space;
  using member = typename Kokkos::TeamPolicy<exec>::member_type;
  Kokkos::View<const int*, Device> nodes, inc_map;
  Kokkos::View<int*, Device> inc, row_len, tmp_cols, tmp_start, contrib, overflow;
  /// Optional (empty: not written): slots(base + t) = candidate t's place in contrib.
  Kokkos::View<int*, Device> slots;
  int n = 0, k = 1, w = 1, cap = 1, table = 2;

  /// Hash-table slots (and incidence capacity) for `cap` distinct columns: a power of two
  /// >= 2 cap.
  static int table_of(int cap) {
    int h = 2;
    while (h < 2 * cap) h *= 2;
    return h;
  }
  static std::size_t scratch_bytes(int cap) {
    return (3 * std::size_t(table_of(cap)) + 3 * std::size_t(cap)) * sizeof(int) + 64;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const int v = m.league_rank() * m.team_size() + m.team_rank();
    if (v >= n) return;  // the whole group
    const LaneGroup g(w);
    const int lane = g.lane();
    const unsigned below = (1u << lane) - 1u;  // the group's lanes before this one
    const std::size_t ints = 3 * std::size_t(table) + 3 * std::size_t(cap);
    int* const base = static_cast<int*>(m.thread_scratch(0).get_shmem(ints * sizeof(int)));
    int* const sinc = base;               // sorted incidences (table)
    int* const keys = base + table;       // hash keys; first the unsorted incidences
    int* const slot_id = keys + table;    // per slot: its node's number
    int* const uniq = slot_id + table;    // numbered distinct nodes (cap)
    int* const count = uniq + cap;        // per number: candidates (cap)
    int* const cols = count + cap;        // sorted distinct nodes (cap)
    const int first = inc_map(v), deg = inc_map(v + 1) - first;
    const int c = deg * k, slice = first * k;
    if (deg > table) {
      if (lane == 0) overflow(atomic_fetch_add_int(&overflow(n), 1)) = v;
      return;
    }
    for (int s = lane; s < deg; s += w) keys[s] = inc(first + s);
    g.sync();
    for (int s = lane; s < deg; s += w) {
      const int p = keys[s];
      int rank = 0;
      for (int q = 0; q < deg; ++q) rank += keys[q] < p ? 1 : 0;
      sinc[rank] = p;
      inc(first + rank) = p;
    }
    g.sync();
    for (int i = lane; i < table; i += w) keys[i] = -1;
    g.sync();
    const int hmask = table - 1;
    int u = 0;
    for (int t0 = 0; t0 < c; t0 += w) {
      const int t = t0 + lane;
      const bool active = t < c;
      int x = -1;
      if (active) {
        const int p = sinc[t / k];
        x = nodes(p - p % k + t % k);
      }
      const unsigned same = g.match(x);
      const bool leader = active && (same & below) == 0u;
      int slot = -1;
      bool fresh = false;
      if (leader)
        for (int i = PatternRows<Device>::slot_of(x, hmask);; i = (i + 1) & hmask) {
          const int prev = Kokkos::atomic_compare_exchange(&keys[i], -1, x);
          if (prev == -1) fresh = true;
          if (prev == -1 || prev == x) {
            slot = i;
            break;
          }
        }
      const unsigned fresh_lanes = g.ballot(fresh);
      int id = -1;
      if (fresh) {
        id = u + LaneGroup::popc(fresh_lanes & below);
        slot_id[slot] = id;
        if (id < cap) {
          uniq[id] = x;
          count[id] = 0;
        }
      } else if (leader) {
        id = slot_id[slot];  // numbered in an earlier round
      }
      if (leader && id < cap) count[id] += LaneGroup::popc(same);
      u += LaneGroup::popc(fresh_lanes);
      g.sync();
      if (u > cap) break;  // the same in every lane
    }
    if (u > cap) {
      if (lane == 0) overflow(atomic_fetch_add_int(&overflow(n), 1)) = v;
      return;
    }
    // Distinct nodes ranked: the sorted row; counts by rank into keys(0 .. u), then each
    // column's start (in contrib) into keys(cap ..) as its cursor.
    for (int i = lane; i < u; i += w) {
      const int x = uniq[i];
      int rank = 0;
      for (int j = 0; j < u; ++j) rank += uniq[j] < x ? 1 : 0;
      cols[rank] = x;
      keys[rank] = count[i];
      tmp_cols(slice + rank) = x;
    }
    g.sync();
    int* const cursor = keys + cap;
    for (int r = lane; r < u; r += w) {
      int start = slice;
      for (int j = 0; j < r; ++j) start += keys[j];
      cursor[r] = start;
      tmp_start(slice + r) = start;
    }
    g.sync();
    const bool with_slots = slots.extent(0) > 0;
    for (int t0 = 0; t0 < c; t0 += w) {
      const int t = t0 + lane;
      const bool active = t < c;
      int r = -1, p = 0;
      if (active) {
        p = sinc[t / k];
        const int x = nodes(p - p % k + t % k);
        int lo = 0, hi = u - 1;
        while (lo < hi) {
          const int mid = (lo + hi) / 2;
          if (cols[mid] < x)
            lo = mid + 1;
          else
            hi = mid;
        }
        r = lo;
      }
      const unsigned same = g.match(r);
      if (active) {
        const int q = cursor[r] + LaneGroup::popc(same & below);
        contrib(q) = p * k + t % k;
        if (with_slots) slots(slice + t) = q;
      }
      g.sync();
      if (active && (same & below) == 0u) cursor[r] += LaneGroup::popc(same);
      g.sync();
    }
    if (lane == 0) row_len(v + 1) = u;
  }
};

/// acc[0 .. B*B) += the blocks entry(data_e, k, b) of contributions contrib(q0 .. q1 - 1), each
/// packed (e K + k) K + b, added in that order. Four at a time, their loads issued before the
/// first is added (a row's diagonal has one contribution per incidence, and that lane's chain of
/// dependent loads set the kernels' time); the order of the additions, and so every bit of
/// the result, is that of the plain loop.
template <class Element, class Contrib, class Data>
KOKKOS_INLINE_FUNCTION void add_contributions(const Element& element, const Contrib& contrib,
                                              const Data& data, int q0, int q1,
                                              double* acc) {
  constexpr int K = Element::nodes_per_element;
  constexpr int BB = Element::dofs_per_node * Element::dofs_per_node;
  constexpr int C = Element::data_size;
  constexpr int U = 4;
  int q = q0;
  for (; q + U <= q1; q += U) {
    int w[U];
    for (int j = 0; j < U; ++j) w[j] = contrib(q + j);
    double block[U][BB];
    for (int j = 0; j < U; ++j) {
      const int b = w[j] % K, p = w[j] / K;
      const int e = p / K, local = p - e * K;
      element.entry(&data(std::size_t(e) * C), local, b, block[j]);
    }
    for (int j = 0; j < U; ++j)
      for (int i = 0; i < BB; ++i) acc[i] += block[j][i];
  }
  for (; q < q1; ++q) {
    const int w = contrib(q);
    const int b = w % K, p = w / K;
    const int e = p / K, local = p - e * K;
    double block[BB];
    element.entry(&data(std::size_t(e) * C), local, b, block);
    for (int i = 0; i < BB; ++i) acc[i] += block[i];
  }
}

/// No mirrored stores (sum_staged's default).
struct NoMirror {
  KOKKOS_INLINE_FUNCTION double* operator()(int) const { return nullptr; }
};

/// Elements whose entry(data, b, a) is bit for bit the transpose of entry(data, a, b) declare
/// `static constexpr bool symmetric_entries = true` (spk/assembly/elements.hpp).
template <class Element, class = void>
struct symmetric_entries : std::false_type {};
template <class Element>
struct symmetric_entries<Element, std::void_t<decltype(Element::symmetric_entries)>>
    : std::integral_constant<bool, Element::symmetric_entries> {};

/// The second half of a staged pass: the W lanes of g each own some (entry, component) pairs
/// of the row (len entries, B x B components each) and add that component of the entry's
/// staged blocks, stage[i ld + (q - qa)] for its contributions q in [start(r), start(r + 1))
/// that lie in the pass [qa, qa + nq), in order into out[r B^2 + i] (the row's first value):
/// the pass that holds an entry's first contribution starts it at 0, later passes continue
/// from out. The pass that holds an entry's last contribution also stores the sum, transposed,
/// into mirror(r) when that is not null (the entry's mirror block, symmetric assembly). The
/// lanes' work is balanced (a diagonal has one contribution per incidence, the rest a few) and
/// the stores to out are contiguous. Block entries (B > 1: several pairs per lane) load the
/// starts of up to U pairs before the first sum, so a lane waits on them once per batch of U
/// pairs rather than once per pair (H100, P1 elasticity placement with the row's starts
/// prefetched, hand x2 natural 0.765 -> 0.728 ms); scalar entries (about one pair per lane)
/// would only load starts they do not use (P1 tetrahedron Laplacian 0.330 -> 0.383 ms), so
/// they keep one pair at a time.
template <int B, class Start, class Mirror = NoMirror>
KOKKOS_INLINE_FUNCTION void sum_staged(const LaneGroup& g, int qa, int nq, int len,
                                       const Start& start, const double* stage, int ld,
                                       double* out, const Mirror& mirror = Mirror()) {
  constexpr int BB = B * B;
  constexpr int U = B > 1 ? 4 : 1;
  const int pairs = len * BB;
  for (int t0 = g.lane(); t0 < pairs; t0 += U * g.w) {
    int sa[U], sb[U];
    for (int u = 0; u < U; ++u) {
      const int t = t0 + u * g.w;
      const int r = t < pairs ? t / BB : 0;  // lanes past the row load a start they ignore
      sa[u] = start(r);
      sb[u] = start(r + 1);
    }
    for (int u = 0; u < U; ++u) {
      const int t = t0 + u * g.w;
      if (t >= pairs) break;
      const int r = t / BB, i = t - r * BB;
      const int a = sa[u], b = sb[u];
      if (b <= qa || a >= qa + nq) continue;  // no contribution in this pass
      double acc = a >= qa ? 0.0 : out[t];
      const int s1 = b - qa < nq ? b - qa : nq;
      for (int j = a > qa ? a - qa : 0; j < s1; ++j) acc += stage[i * ld + j];
      out[t] = acc;
      if (b <= qa + nq) {
        double* const m = mirror(r);
        if (m) m[(i % B) * B + i / B] = acc;
      }
    }
  }
}

/// Stages one row's contributions in `stage` ((cap + 1) B^2 doubles of scratch, component-major)
/// and sums them per entry: the row's contributions are contrib(q0 .. q1 - 1), entry r's those
/// in [start(r), start(r + 1)) (start(len) = q1), in element order. Per pass of up to cap
/// contributions, the W lanes of g each compute the blocks entry(data_e, k, b) of every W-th
/// contribution (independent loads) into stage column q - qa, then sum_staged adds them per
/// entry component. The additions are those of add_contributions, in the same order, so every
/// bit of the result is the same.
template <class Element, class Contrib, class Data, class Start, class Mirror = NoMirror>
KOKKOS_INLINE_FUNCTION void place_row_staged(const LaneGroup& g, const Element& element,
                                             const Contrib& contrib, const Data& data, int q0,
                                             int q1, int len, const Start& start, double* stage,
                                             int cap, double* out,
                                             const Mirror& mirror = Mirror()) {
  constexpr int K = Element::nodes_per_element;
  constexpr int BB = Element::dofs_per_node * Element::dofs_per_node;
  constexpr int C = Element::data_size;
  const int lane = g.lane(), w = g.w;
  const int ld = cap + 1;  // odd stride: an entry's components fall in different banks
  for (int qa = q0; qa < q1; qa += cap) {
    const int nq = q1 - qa < cap ? q1 - qa : cap;
    int s = lane;
    for (; s + w < nq; s += 2 * w) {  // two at a time: both loads before the first store
      const int x0 = contrib(qa + s), x1 = contrib(qa + s + w);
      double b0[BB], b1[BB];
      element.entry(&data(std::size_t(x0 / (K * K)) * C), (x0 / K) % K, x0 % K, b0);
      element.entry(&data(std::size_t(x1 / (K * K)) * C), (x1 / K) % K, x1 % K, b1);
      for (int i = 0; i < BB; ++i) {
        stage[i * ld + s] = b0[i];
        stage[i * ld + s + w] = b1[i];
      }
    }
    if (s < nq) {
      const int x = contrib(qa + s);
      double b0[BB];
      element.entry(&data(std::size_t(x / (K * K)) * C), (x / K) % K, x % K, b0);
      for (int i = 0; i < BB; ++i) stage[i * ld + s] = b0[i];
    }
    g.sync();
    sum_staged<Element::dofs_per_node>(g, qa, nq, len, start, stage, ld, out, mirror);
    g.sync();
  }
}

/// place_row_staged for a row whose c = deg K contributions fit one pass (c <= cap), taken in
/// incidence order instead of column order. The row's incidences are inc(first .. first + deg
/// - 1) (each e K + k, in element order); its contribution t = s K + b, (e K + k) K + b of
/// incidence s, lies at slots(first K + t) of the action map (AssemblyPattern::
/// contribution_slots), so its block goes to stage column slots(first K + t) - first K, where
/// place_row_staged puts it; then sum_staged. Lane t takes contributions t, t + W, ...: the K
/// lanes of one incidence load the same element's data in the same instructions (a warp's
/// load touches about W / K elements, where column order touches up to W), and the slots are
/// read contiguously. The same blocks in the same places: the same bits as place_row_staged.
template <class Element, class Inc, class Slots, class Data, class Start>
KOKKOS_INLINE_FUNCTION void place_row_by_incidence(const LaneGroup& g, const Element& element,
                                                   const Inc& inc, const Slots& slots,
                                                   const Data& data, int first, int deg, int len,
                                                   const Start& start, double* stage, int cap,
                                                   double* out) {
  constexpr int K = Element::nodes_per_element;
  constexpr int BB = Element::dofs_per_node * Element::dofs_per_node;
  constexpr int C = Element::data_size;
  const int lane = g.lane(), w = g.w;
  const int ld = cap + 1;
  const int q0 = first * K, c = deg * K;
  int t = lane;
  for (; t + w < c; t += 2 * w) {  // two at a time: both loads before the first store
    const int p0 = inc(first + t / K), p1 = inc(first + (t + w) / K);
    const int s0 = slots(q0 + t) - q0, s1 = slots(q0 + t + w) - q0;
    double b0[BB], b1[BB];
    element.entry(&data(std::size_t(p0 / K) * C), p0 % K, t % K, b0);
    element.entry(&data(std::size_t(p1 / K) * C), p1 % K, (t + w) % K, b1);
    for (int i = 0; i < BB; ++i) {
      stage[i * ld + s0] = b0[i];
      stage[i * ld + s1] = b1[i];
    }
  }
  if (t < c) {
    const int p = inc(first + t / K), s0 = slots(q0 + t) - q0;
    double b0[BB];
    element.entry(&data(std::size_t(p / K) * C), p % K, t % K, b0);
    for (int i = 0; i < BB; ++i) stage[i * ld + s0] = b0[i];
  }
  g.sync();
  sum_staged<Element::dofs_per_node>(g, q0, c, len, start, stage, ld, out);
  g.sync();
}

/// Two ints read by one 8-byte load.
struct alignas(8) IntPair {
  int first, second;
};

/// Symmetric assembly's place_row_by_incidence: the row's diagonal and upper entries only,
/// whose nu = q1 - qu contributions are the action map's [qu, q1) (from the diagonal's first
/// on; nu <= cap), taken in incidence order: the t-th is upper[qu + t] (AssemblyPattern::
/// upper_slots: the packed contribution and its place relative to qu), its block going to stage
/// column second, where place_row_staged puts it. Then sum_staged, which also stores each upper
/// entry's transpose to mirror(r). The same blocks in the same places: the same bits as
/// place_row_staged.
template <class Element, class Data, class Start, class Mirror>
KOKKOS_INLINE_FUNCTION void place_upper_by_incidence(const LaneGroup& g, const Element& element,
                                                     const IntPair* upper, const Data& data,
                                                     int qu, int nu, int len, const Start& start,
                                                     double* stage, int cap, double* out,
                                                     const Mirror& mirror) {
  constexpr int K = Element::nodes_per_element;
  constexpr int BB = Element::dofs_per_node * Element::dofs_per_node;
  constexpr int C = Element::data_size;
  const int lane = g.lane(), w = g.w;
  const int ld = cap + 1;
  int t = lane;
  for (; t + w < nu; t += 2 * w) {  // two at a time: both loads before the first store
    const IntPair u0 = upper[qu + t], u1 = upper[qu + t + w];
    const int x0 = u0.first, x1 = u1.first;
    double b0[BB], b1[BB];
    element.entry(&data(std::size_t(x0 / (K * K)) * C), (x0 / K) % K, x0 % K, b0);
    element.entry(&data(std::size_t(x1 / (K * K)) * C), (x1 / K) % K, x1 % K, b1);
    for (int i = 0; i < BB; ++i) {
      stage[i * ld + u0.second] = b0[i];
      stage[i * ld + u1.second] = b1[i];
    }
  }
  if (t < nu) {
    const IntPair u0 = upper[qu + t];
    const int x = u0.first;
    double b0[BB];
    element.entry(&data(std::size_t(x / (K * K)) * C), (x / K) % K, x % K, b0);
    for (int i = 0; i < BB; ++i) stage[i * ld + u0.second] = b0[i];
  }
  g.sync();
  sum_staged<Element::dofs_per_node>(g, qu, nu, len, start, stage, ld, out, mirror);
  g.sync();
}

/// Full assembly's last step, after the pattern rows and the scan of their lengths: row v's CSR
/// offsets, columns (from its slice tmp_cols(inc_map(v) K ..)) and values, entry r summing, in
/// element order, the blocks entry(data_e, k, b) of the contributions contrib(tmp_start(base +
/// r) .. end), end the next column's start or the end of the row's slice. No contribution map
/// is built: it would only be read here. With `cap` > 0 the row's lanes stage its contributions
/// (place_row_staged, cap per pass, scratch level 0 per row); else lanes own entries and sum
/// their contributions directly. No atomics; the same bits either way.
template <class Device, class Element>
struct AssembleRows {
  static constexpr int K = Element::nodes_per_element;
  static constexpr int B = Element::dofs_per_node;
  static constexpr int C = Element::data_size;
  using exec = typename Device::execution_space;
  using member = typename Kokkos::TeamPolicy<exec>::member_type;
  Element element;
  Kokkos::View<const int*, Device> inc_map, offsets, tmp_cols, tmp_start, contrib;
  Kokkos::View<const double*, Device> data;
  Kokkos::View<int*, Device> row_map, col_idx;
  double* values = nullptr;  // B * B reals per entry
  int n = 0, w = 1, cap = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const int v = m.league_rank() * m.team_size() + m.team_rank();
    if (v > n) return;
    const int r0 = offsets(v);
    Kokkos::single(Kokkos::PerThread(m), [&]() { row_map(v) = r0; });
    if (v == n) return;
    const int len = offsets(v + 1) - r0;
    const int base = inc_map(v) * K, end = inc_map(v + 1) * K;
    if (cap > 0) {
      const LaneGroup g(w);
      for (int c = g.lane(); c < len; c += w) col_idx(r0 + c) = tmp_cols(base + c);
      double* const stage = static_cast<double*>(m.thread_scratch(0).get_shmem_aligned(
          std::size_t(cap + 1) * B * B * sizeof(double), sizeof(double)));
      place_row_staged(
          g, element, contrib, data, base, end, len,
          [&](int r) { return r < len ? tmp_start(base + r) : end; }, stage, cap,
          values + std::size_t(r0) * (B * B));
      return;
    }
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, len), [&](int c) {
      col_idx(r0 + c) = tmp_cols(base + c);
      double acc[B * B];
      for (int q = 0; q < B * B; ++q) acc[q] = 0;
      add_contributions(element, contrib, data, tmp_start(base + c),
                        c + 1 < len ? tmp_start(base + c + 1) : end, acc);
      double* out = values + std::size_t(r0 + c) * (B * B);
      for (int i = 0; i < B * B; ++i) out[i] = acc[i];
    });
  }
};

/// Moves each row's sorted columns and contribution starts from its K^2-per-element slice
/// (tmp_cols, tmp_start at inc_map(v) K) to the CSR arrays (at offsets(v), the scanned row
/// lengths, which go to row_map); thread n writes the ends of row_map and the contribution map.
/// Launched for n + 1 rows.
template <class Device>
struct PatternCompact {
  using exec = typename Device::execution_space;
  using member = typename Kokkos::TeamPolicy<exec>::member_type;
  Kokkos::View<const int*, Device> inc_map, offsets, tmp_cols, tmp_start;
  Kokkos::View<int*, Device> row_map, col_idx, contrib_map;
  int n = 0, k = 1;

  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const int v = m.league_rank() * m.team_size() + m.team_rank();
    if (v > n) return;
    const int r0 = offsets(v);
    Kokkos::single(Kokkos::PerThread(m), [&]() {
      row_map(v) = r0;
      if (v == n) contrib_map(r0) = inc_map(n) * k;
    });
    if (v == n) return;
    const int base = inc_map(v) * k;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, offsets(v + 1) - r0), [&](int r) {
      col_idx(r0 + r) = tmp_cols(base + r);
      contrib_map(r0 + r) = tmp_start(base + r);
    });
  }
};

/// The maps of symmetric assembly (spk::AssemblyParams::mirror), row v by one thread and its
/// lanes: diagonal(v) = the place of (v, v) in col_idx (-1 for an empty row), transpose(j) =
/// the place of (u, v) for each entry j = (v, u) of the row (binary search in row u), and, when
/// `upper` is not empty (contribution slots kept), the pair upper(2 (qu + t)), upper(2 (qu + t)
/// + 1) = the t-th of the row's contributions, in incidence order, that belong to its diagonal
/// or upper entries (packed) and its action-map place - qu (qu = contrib_map(diagonal(v)):
/// those are the action map's [qu, contrib_map(row end))).
template <class Device>
struct PatternMirror {
  using exec = typename Device::execution_space;
  using member = typename Kokkos::TeamPolicy<exec>::member_type;
  Kokkos::View<const int*, Device> row_map, col_idx, contrib_map, inc_map, slots, contrib;
  Kokkos::View<int*, Device> diagonal, transpose, upper;
  int n = 0, k = 1;

  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const int v = m.league_rank() * m.team_size() + m.team_rank();
    if (v >= n) return;
    const int r0 = row_map(v), r1 = row_map(v + 1);
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, r1 - r0), [&](int r) {
      const int u = col_idx(r0 + r);
      transpose(r0 + r) = lower_bound(col_idx, row_map(u), row_map(u + 1), v);
    });
    const int d = r1 > r0 ? lower_bound(col_idx, r0, r1, v) : -1;
    Kokkos::single(Kokkos::PerThread(m), [&]() { diagonal(v) = d; });
    if (d < 0 || upper.extent(0) == 0) return;
    // the row's slots in incidence order, those at or past qu compacted by a lane scan
    const int qu = contrib_map(d), base = inc_map(v) * k;
    Kokkos::parallel_scan(Kokkos::ThreadVectorRange(m, inc_map(v + 1) * k - base),
                          [&](int s, int& t, const bool final) {
                            const int q = slots(base + s);
                            if (q < qu) return;
                            if (final) {  // 2 (qu + t) may pass int: S up to 2^31
                              upper(2 * std::size_t(qu + t)) = contrib(q);
                              upper(2 * std::size_t(qu + t) + 1) = q - qu;
                            }
                            ++t;
                          });
  }
};

/// The compact data of element e (K = Element::nodes_per_element nodes per element in `nodes`)
/// from the coordinates of its geometry nodes; false for a degenerate element.
template <class Element, class Nodes, class Coords>
KOKKOS_INLINE_FUNCTION bool compute_element_data(const Element& element, const Nodes& nodes,
                                                 const Coords& coords, int e, double* data) {
  constexpr int K = Element::nodes_per_element;
  double x[Element::geometry_nodes][3];
  for (int g = 0; g < Element::geometry_nodes; ++g)
    for (int d = 0; d < 3; ++d) x[g][d] = coords(nodes(std::size_t(e) * K + g), d);
  return element.element_data(x, data);
}

/// Element data: data(e * C .. e * C + C - 1) from the coordinates of e's geometry nodes; the
/// reduction finds the first degenerate element (n_elements when none).
template <class Device, class Element>
struct ElementDataKernel {
  static constexpr int C = Element::data_size;
  Element element;
  Kokkos::View<const int*, Device> nodes;
  Kokkos::View<const double* [3], Kokkos::LayoutRight, Device> coords;
  Kokkos::View<double*, Device> data;

  KOKKOS_INLINE_FUNCTION void operator()(int e, int& bad) const {
    if (!compute_element_data(element, nodes, coords, e, &data(std::size_t(e) * C)) && e < bad)
      bad = e;
  }
};

/// Element data of every element (ElementDataKernel) without a reduction to the host: the
/// first degenerate element goes to *bad by an atomic minimum (the caller initialises it).
template <class Device, class Element>
struct ElementDataMin {
  static constexpr int C = Element::data_size;
  Element element;
  Kokkos::View<const int*, Device> nodes;
  Kokkos::View<const double* [3], Kokkos::LayoutRight, Device> coords;
  double* data = nullptr;
  int* bad = nullptr;

  KOKKOS_INLINE_FUNCTION void operator()(int e) const {
    if (!compute_element_data(element, nodes, coords, e, data + std::size_t(e) * C))
      Kokkos::atomic_fetch_min(bad, e);
  }
};

/// Reals of element data from which GPUs compute it by ElementDataTeam (H100, 2026-11-22: 13
/// reals, P1 tetrahedron elasticity, 0.25 -> 0.09 ms for 1.3M elements; 3 reals, P1
/// triangles, random ordering: 0.10 -> 0.22 ms for 2M elements, so those keep one thread per
/// element).
constexpr int element_data_team_min = 8;

/// Element data on GPUs, a team of T threads per T consecutive elements: each thread computes
/// its element's C reals into its warp's part of the team scratch (32 C doubles per warp,
/// scratch_bytes(T)), then the warp copies its 32 elements' block to data(e0 C ..) in order,
/// so stores are contiguous (one thread per element would store C reals at a stride of C: 12
/// for P1 elasticity), and no warp waits for the rest of its team (the copy was team-wide
/// behind a team barrier before). The first degenerate element goes to *bad by an atomic
/// minimum. The same data as ElementDataKernel.
template <class Device, class Element>
struct ElementDataTeam {
  static constexpr int C = Element::data_size;
  static constexpr int warp = 32;
  using exec = typename Device::execution_space;
  using member = typename Kokkos::TeamPolicy<exec>::member_type;
  Element element;
  Kokkos::View<const int*, Device> nodes;
  Kokkos::View<const double* [3], Kokkos::LayoutRight, Device> coords;
  double* data = nullptr;
  int* bad = nullptr;
  int n = 0;

  /// Threads (elements) per team: whole warps.
  static constexpr int team_threads = 128;

  static std::size_t scratch_bytes(int team) {
    return std::size_t(team) * C * sizeof(double) + sizeof(double);
  }

  /// Runs the kernel over the n elements (teams of team_threads, vector length 1), no wait.
  void launch() const {
    constexpr int team = team_threads;
    Kokkos::parallel_for("spk::assembly::element_data",
                         Kokkos::TeamPolicy<exec>((n + team - 1) / team, team, 1)
                             .set_scratch_size(0, Kokkos::PerTeam(scratch_bytes(team))),
                         *this);
  }

  /// This thread's element, or n when it has none or it is not degenerate. Launched with a
  /// vector length of 1 and teams of whole warps (a warp is 32 consecutive team ranks).
  KOKKOS_INLINE_FUNCTION int compute(const member& m) const {
    const int team = m.team_size(), rank = m.team_rank(), e = m.league_rank() * team + rank;
    double* const stage = static_cast<double*>(m.team_scratch(0).get_shmem_aligned(
        std::size_t(team) * C * sizeof(double), sizeof(double)));
    bool ok = true;
    if (e < n) ok = compute_element_data(element, nodes, coords, e, stage + rank * C);
#if defined(__CUDA_ARCH__)
    // a warp's threads are consecutive team ranks (vector length 1): the warp's own block
    __syncwarp();
    const int w0 = rank - rank % warp, e0 = m.league_rank() * team + w0;
    const int count = (n - e0 < warp ? n - e0 : warp) * C;
    const double* const from = stage + w0 * C;
    double* const out = data + std::size_t(e0) * C;
    for (int i = rank - w0; i < count; i += warp) out[i] = from[i];
    __syncwarp();  // the stage is free again (were a block to run another league rank)
#else
    m.team_barrier();
    const int e0 = m.league_rank() * team;
    const int count = (n - e0 < team ? n - e0 : team) * C;
    double* const out = data + std::size_t(e0) * C;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(m, count), [&](int i) { out[i] = stage[i]; });
#endif
    return ok ? n : e;
  }
  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const int e = compute(m);
    if (e < n) Kokkos::atomic_fetch_min(bad, e);
  }
};

/// Numeric placement through the action map: row v's entries each sum, in element order, the
/// blocks entry(data_e, k, b) of the contributions contrib(contrib_map(entry) ..
/// contrib_map(entry + 1) - 1), each packed (e K + k) K + b. With `cap` > 0 the row's W lanes
/// stage its contributions (scratch level 0 per row): by incidence (place_row_by_incidence)
/// when the pattern kept its slots and the row's contributions fit one pass, else in column
/// order (place_row_staged, cap per pass); with `cap` 0 lanes own entries and sum their
/// contributions directly. Symmetric assembly (`symmetric`, staged only): the row's diagonal
/// and upper entries alone, by incidence (place_upper_by_incidence) when the pattern kept its
/// upper slots and they fit one pass, else in column order, each upper entry's transpose
/// stored to its mirror (transpose map); every entry is written once (the lower ones by the
/// rows of their columns). No atomics, and the same summation order
/// (so the same bits) on every backend, launch shape and run.
template <class Device, class Element>
struct NumericRows {
  static constexpr int K = Element::nodes_per_element;
  static constexpr int B = Element::dofs_per_node;
  static constexpr int C = Element::data_size;
  using exec = typename Device::execution_space;
  using member = typename Kokkos::TeamPolicy<exec>::member_type;
  Element element;
  Kokkos::View<const int*, Device> row_map, contrib, contrib_map;
  /// The pattern's incidences and contribution slots (slots empty: column order only).
  Kokkos::View<const int*, Device> inc_map, inc, slots;
  /// Symmetric assembly (with cap > 0): the pattern's diagonal, transpose map and upper slots
  /// (upper empty: the upper entries in column order).
  Kokkos::View<const int*, Device> diagonal, transpose, upper;
  bool symmetric = false;
  Kokkos::View<const double*, Device> data;
  double* values = nullptr;  // B * B reals per entry
  int n = 0, w = 1, cap = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const int v = m.league_rank() * m.team_size() + m.team_rank();
    if (v >= n) return;
    const int r0 = row_map(v), len = row_map(v + 1) - r0;
    if (B > 1 && cap > 0 && LaneGroup(w).lane() == 0) {
      // The cache lines holding the row's first and last entry starts (a row of up to ~30
      // entries: all of them), which the by-incidence staging reads only after its own loads:
      // into L2 now (H100, P1 elasticity placement on hand x2, with sum_staged's batched
      // starts: 0.765 -> 0.728 ms natural, 0.80 -> 0.753 random, 0.72 -> 0.69 RCM; the batched
      // starts alone 0.772 natural). Scalar entries do without (P1 tetrahedron Laplacian
      // +2-3% with it).
      prefetch_l2(&contrib_map(r0));
      prefetch_l2(&contrib_map(r0 + len));
    }
    if (cap > 0) {
      double* const stage = static_cast<double*>(m.thread_scratch(0).get_shmem_aligned(
          std::size_t(cap + 1) * B * B * sizeof(double), sizeof(double)));
      if (symmetric) {
        // The diagonal and upper entries (from place d on) from their contributions; each
        // upper entry's transpose goes to its mirror (u, v), which row u does not form.
        if (len == 0) return;
        const int d = diagonal(v), qu = contrib_map(d), q1 = contrib_map(r0 + len);
        const auto start = [&](int r) { return contrib_map(d + r); };
        const auto mirror = [&](int r) -> double* {
          return r > 0 ? values + std::size_t(transpose(d + r)) * (B * B) : nullptr;
        };
        double* const out = values + std::size_t(d) * (B * B);
        if (upper.extent(0) > 0 && q1 - qu <= cap)
          place_upper_by_incidence(LaneGroup(w), element,
                                   reinterpret_cast<const IntPair*>(upper.data()), data, qu,
                                   q1 - qu, r0 + len - d, start, stage, cap, out, mirror);
        else
          place_row_staged(LaneGroup(w), element, contrib, data, qu, q1, r0 + len - d, start,
                           stage, cap, out, mirror);
        return;
      }
      const int first = inc_map(v), deg = inc_map(v + 1) - first;
      if (slots.extent(0) > 0 && deg * K <= cap) {
        place_row_by_incidence(
            LaneGroup(w), element, inc, slots, data, first, deg, len,
            [&](int r) { return contrib_map(r0 + r); }, stage, cap,
            values + std::size_t(r0) * (B * B));
        return;
      }
      place_row_staged(
          LaneGroup(w), element, contrib, data, contrib_map(r0), contrib_map(r0 + len), len,
          [&](int r) { return contrib_map(r0 + r); }, stage, cap,
          values + std::size_t(r0) * (B * B));
      return;
    }
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, len), [&](int c) {
      double acc[B * B];
      for (int q = 0; q < B * B; ++q) acc[q] = 0;
      add_contributions(element, contrib, data, contrib_map(r0 + c), contrib_map(r0 + c + 1),
                        acc);
      double* out = values + std::size_t(r0 + c) * (B * B);
      for (int i = 0; i < B * B; ++i) out[i] = acc[i];
    });
  }
};

/// Whether symmetric assembly pays for entries of bb reals whose mirrored stores land
/// `distance` entries away on average (AssemblyPattern::mirror_distance): block entries only
/// (scalar ones: forming half the entries saved less than the mirrored stores cost, H100, P1
/// tetrahedron Laplacian placement 0.18 -> 0.20 ms on cube:60), and only where the stores stay
/// within about 16 MB of their rows (a third of an H100's L2): scattered over the matrix they
/// cost more than they save (H100, P1 elasticity placement on random orderings, cube:60 0.53 ->
/// 0.60 ms, hand x2 0.84 -> 0.93 ms; on local ones 0.48 -> 0.43 ms, RCM hand x2 0.75 -> 0.65).
inline bool mirror_pays(int bb, double distance) {
  return bb >= 4 && distance * bb * sizeof(double) <= 16.0 * 1024 * 1024;
}

/// Numeric launch shape: lanes, rows per team and the contributions a row stages per pass
/// (cap; 0: none).
struct NumericLaunch {
  RowLaunch rows;
  int cap = 0;
  std::size_t scratch_bytes = 0;  ///< per row (level 0)
};

/// The numeric kernels' shape for rows of mean length mean_row and mean_contrib contributions with
/// bb reals per entry, of which a row stages staged_contrib on average (symmetric assembly: those
/// of its diagonal and upper entries; 0: mean_contrib). Staged (place_row_staged) when `stage` > 0
/// (on any backend), or when `stage` is 0 on CUDA for rows of at least 32 contributions on average
/// (tetrahedra): cap = `stage` or a power of two near 1.25 x the mean contributions (32 .. 256);
/// `by_incidence` (rows that fit one pass placed by incidence) with blocks (bb >= 4): a multiple of
/// 16 >= 1.05 x the mean (32 .. 256), the smallest stage most rows fit, since the stage's shared
/// memory bounds the resident rows (H100, P1 elasticity on cube:60: 0.53 ms at 128, 0.46 at 96,
/// 0.84 at 256); lanes (unless given) a power of two near half the mean contributions (8 .. 32),
/// rows per team (unless given) one warp's for blocks (bb >= 4), else about 128 threads, then rows
/// and, where one warp's rows would not fit, cap halved until the team's scratch stays within about
/// 40 KB (the results do not depend on either). Else row_launch.
template <class ExecSpace>
NumericLaunch numeric_launch(double mean_row, double mean_contrib, int bb, int lanes, int rows,
                             int stage, bool by_incidence = false, double staged_contrib = 0) {
  NumericLaunch l;
  const bool groups = lane_groups_on<ExecSpace>();
  // Automatic: staged for rows of many contributions, where per-entry lanes diverge most (H100,
  // 2026-11-22, placement: P1 tetrahedron Laplacian 0.33 -> 0.24 ms on cube:60, 0.59 -> 0.36 ms
  // on hand x2; P1 tetrahedron elasticity the same on natural orderings, 0.78 -> 0.68 ms and
  // 1.19 -> 1.00 ms on random ones; P2 tetrahedron elasticity 1.78 -> 0.84 ms on cube:24; P1
  // triangles, 18 contributions per row, slower: 0.16 -> 0.26 ms).
  const bool automatic = groups && mean_contrib >= 32;
  if (!(stage > 0 || (stage == 0 && automatic))) {
    l.rows = row_launch<ExecSpace>(mean_row, 0, lanes, rows);
    return l;
  }
  // lanes and rows checked as row_launch checks them
  row_launch<ExecSpace>(mean_row, 0, lanes, rows);
  const double staged = staged_contrib > 0 ? staged_contrib : mean_contrib;
  if (stage > 0)
    l.cap = stage;
  else if (by_incidence && bb >= 4)
    l.cap = std::min(256, std::max(32, (int(1.05 * staged) + 15) / 16 * 16));
  else
    l.cap = pow2_clamp(1.25 * staged, 32, 256);
  const auto bytes = [&](int cap) {
    return std::size_t(cap + 1) * std::size_t(bb) * sizeof(double) + sizeof(double);
  };
  if (!groups) {
    l.rows.lanes = 1;
    l.rows.rows = 1;
  } else {
    const std::size_t limit = 40 * 1024;
    l.rows.lanes = lanes > 0 ? lanes : pow2_clamp(mean_contrib / 2, 8, 32);
    const int per_warp = 32 / l.rows.lanes;
    while (l.cap > 1 && std::size_t(per_warp) * bytes(l.cap) > limit) l.cap /= 2;
    // Block entries stage several KB per row: one warp per team, so that a team's shared
    // memory goes back when its own rows end rather than its slowest row's (H200, P1
    // elasticity on hand x2: placement 0.856 -> 0.779 ms natural, 0.877 -> 0.800 random;
    // registers already hold these kernels to 32 warps per SM, the block limit). Scalar
    // entries keep about 128 threads per team (their occupancy is not register-bound).
    l.rows.rows = rows > 0 ? rows : bb >= 4 ? per_warp : (128 + l.rows.lanes - 1) / l.rows.lanes;
    l.rows.rows = (l.rows.rows + per_warp - 1) / per_warp * per_warp;
    while (l.rows.rows > per_warp && std::size_t(l.rows.rows) * bytes(l.cap) > limit)
      l.rows.rows -= per_warp;
  }
  l.rows.level = 0;
  l.scratch_bytes = bytes(l.cap);
  return l;
}

}  // namespace impl
}  // namespace spk
