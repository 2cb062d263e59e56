// spk/impl/assembly_kernels.hpp: the kernels behind spk/assembly/assemble.hpp: the node
// incidence (E in compressed-row form), the pattern of E E^T, the element data and the numeric
// placement through action maps. Every kernel gives each output row to one thread (with its
// vector lanes), so none of them needs an atomic on a value; the incidence count is the only
// integer atomic.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <spk/error.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/warp.hpp>

namespace spk {
namespace impl {

/// E in compressed-row form: node v is in the elements entries(map(v)) .. entries(map(v+1)-1),
/// each stored packed as e * K + k (k: v's local index in element e), in increasing e.
template <class Device>
struct NodeIncidence {
  Kokkos::View<int*, Device> map;
  Kokkos::View<int*, Device> entries;
  int max_degree = 0;
};

/// Transposes the element table `nodes` of n_nodes nodes: count (integer
/// atomics), scan, fill through per-node cursors, then each node's list sorted (insertion sort:
/// lists are as long as a node's element count), so the result does not depend on the order the
/// fill ran in. O(nnz + sum of squared degrees) work.
template <class Device>
NodeIncidence<Device> node_incidence(int n_nodes, const Kokkos::View<int*, Device>& nodes) {
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
  Kokkos::parallel_reduce(
      "spk::assembly::incidence::max", Kokkos::RangePolicy<exec>(0, n_nodes + 1),
      KOKKOS_LAMBDA(int v, int& m) {
        if (map(v) > m) m = map(v);
      },
      Kokkos::Max<int>(max_degree));
  r.max_degree = max_degree;
  Kokkos::parallel_scan(
      "spk::assembly::incidence::scan", Kokkos::RangePolicy<exec>(0, n_nodes + 1),
      KOKKOS_LAMBDA(int v, int& sum, bool final) {
        sum += map(v);
        if (final) map(v) = sum;
      });
  Kokkos::View<int*, Device> cursor("spk::assembly::incidence::cursor", std::size_t(n_nodes));
  Kokkos::parallel_for(
      "spk::assembly::incidence::fill", Kokkos::RangePolicy<exec>(0, nnz), KOKKOS_LAMBDA(int p) {
        const int v = nodes(p);
        entries(map(v) + atomic_fetch_add_int(&cursor(v), 1)) = p;
      });
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
  return r;
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

/// Shape for rows of mean work `mean` (candidates or entries) with `scratch_bytes` of per-row
/// scratch; lanes and rows from the caller when positive.
template <class ExecSpace>
RowLaunch row_launch(double mean, std::size_t scratch_bytes, int lanes, int rows) {
  RowLaunch l;
  if (is_gpu_space<ExecSpace>()) {
    l.lanes = lanes > 0 ? lanes : pow2_clamp(mean, 4, 32);
    l.rows = rows > 0 ? rows : 128 / l.lanes;
    // A sub-warp row synchronises with the whole warp (Warp::sync), so a team spans whole warps.
    while (l.rows * l.lanes < 32) l.rows *= 2;
    const std::size_t shared_limit = 40 * 1024;
    while (l.rows * l.lanes > 32 && std::size_t(l.rows) * scratch_bytes > shared_limit)
      l.rows /= 2;
    l.level = std::size_t(l.rows) * scratch_bytes > shared_limit ? 1 : 0;
  } else {
    l.lanes = 1;
    l.rows = 1;
    l.level = 0;
  }
  return l;
}

/// Pattern of E E^T, pass 1 (count) or 2 (fill): row v holds every node sharing an element with
/// v (v included), sorted. Row v's candidates are the K nodes of each of v's elements; they are
/// staged in the row's scratch, the first occurrence of each value counts, and in the fill pass
/// a first occurrence goes to its rank among the distinct values. O(c^2 / lanes) per row of c
/// candidates: meant for mesh rows (tens to a few hundred candidates).
template <class Device, bool Fill>
struct PatternRows {
  using exec = typename Device::execution_space;
  using member = typename Kokkos::TeamPolicy<exec>::member_type;
  using scratch_ints = Kokkos::View<int*, typename exec::scratch_memory_space,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Kokkos::View<const int*, Device> nodes, inc_map, inc;
  Kokkos::View<int*, Device> row_len;  // count pass: the row lengths (at v + 1)
  Kokkos::View<const int*, Device> row_map;  // fill pass
  Kokkos::View<int*, Device> col_idx;        // fill pass
  int n = 0, k = 1, max_candidates = 0, level = 0;

  static std::size_t scratch_bytes(int max_candidates) {
    return scratch_ints::shmem_size(std::size_t(max_candidates)) * (Fill ? 2 : 1);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const int v = m.league_rank() * m.team_size() + m.team_rank();
    const bool active = v < n;
    const int first = active ? inc_map(v) : 0;
    const int c = active ? (inc_map(v + 1) - first) * k : 0;
    scratch_ints cand(m.thread_scratch(level), std::size_t(max_candidates));
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, c), [&](int t) {
      const int p = inc(first + t / k);
      cand(t) = nodes(p - p % k + t % k);
    });
    Warp<exec>::sync();
    if (!Fill) {
      int distinct = 0;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(m, c),
          [&](int t, int& s) {
            const int x = cand(t);
            bool is_first = true;
            for (int u = 0; u < t && is_first; ++u) is_first = cand(u) != x;
            s += is_first ? 1 : 0;
          },
          distinct);
      Kokkos::single(Kokkos::PerThread(m), [&]() {
        if (active) row_len(v + 1) = distinct;
      });
    } else {
      scratch_ints is_first(m.thread_scratch(level), std::size_t(max_candidates));
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, c), [&](int t) {
        const int x = cand(t);
        bool f = true;
        for (int u = 0; u < t && f; ++u) f = cand(u) != x;
        is_first(t) = f ? 1 : 0;
      });
      Warp<exec>::sync();
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, c), [&](int t) {
        if (!is_first(t)) return;
        const int x = cand(t);
        int rank = 0;
        for (int u = 0; u < c; ++u) rank += (is_first(u) && cand(u) < x) ? 1 : 0;
        col_idx(row_map(v) + rank) = x;
      });
    }
    Warp<exec>::sync();  // the next row of this thread (none here) would reuse the scratch
  }
};

/// Element data: data(e * C .. e * C + C - 1) from the coordinates of e's geometry nodes; the
/// reduction finds the first degenerate element (n_elements when none).
template <class Device, class Element>
struct ElementDataKernel {
  static constexpr int K = Element::nodes_per_element;
  static constexpr int G = Element::geometry_nodes;
  static constexpr int C = Element::data_size;
  Element element;
  Kokkos::View<const int*, Device> nodes;
  Kokkos::View<const double* [3], Kokkos::LayoutRight, Device> coords;
  Kokkos::View<double*, Device> data;

  KOKKOS_INLINE_FUNCTION void operator()(int e, int& bad) const {
    double x[G][3];
    for (int g = 0; g < G; ++g) {
      const int v = nodes(std::size_t(e) * K + g);
      for (int d = 0; d < 3; ++d) x[g][d] = coords(v, d);
    }
    if (!element.element_data(x, &data(std::size_t(e) * C)) && e < bad) bad = e;
  }
};

/// Numeric placement: row v's lanes each own some of its columns j and sum, over v's elements
/// in increasing order, the action-map block entry(data_e, k, b) of the local node b of e that
/// is j (k: v's local index). No atomics, and the sums run in element order, the order of a
/// sequential element loop.
template <class Device, class Element>
struct NumericRows {
  static constexpr int K = Element::nodes_per_element;
  static constexpr int B = Element::dofs_per_node;
  static constexpr int C = Element::data_size;
  using exec = typename Device::execution_space;
  using member = typename Kokkos::TeamPolicy<exec>::member_type;
  Element element;
  Kokkos::View<const int*, Device> nodes, inc_map, inc, row_map, col_idx;
  Kokkos::View<const double*, Device> data;
  double* values = nullptr;  // B * B reals per entry
  int n = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const member& m) const {
    const int v = m.league_rank() * m.team_size() + m.team_rank();
    if (v >= n) return;
    const int s0 = inc_map(v), s1 = inc_map(v + 1);
    const int r0 = row_map(v);
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(m, row_map(v + 1) - r0), [&](int c) {
      const int j = col_idx(r0 + c);
      double acc[B * B];
      for (int q = 0; q < B * B; ++q) acc[q] = 0;
      for (int s = s0; s < s1; ++s) {
        const int p = inc(s);
        const int e = p / K;
        const int local = p - e * K;
        for (int b = 0; b < K; ++b)
          if (nodes(std::size_t(e) * K + b) == j) {
            double block[B * B];
            element.entry(&data(std::size_t(e) * C), local, b, block);
            for (int q = 0; q < B * B; ++q) acc[q] += block[q];
            break;
          }
      }
      double* out = values + std::size_t(r0 + c) * (B * B);
      for (int q = 0; q < B * B; ++q) out[q] = acc[q];
    });
  }
};

}  // namespace impl
}  // namespace spk
