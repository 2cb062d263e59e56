// spk/impl/hisparse_build.hpp: COO -> HiSparse on the device (Derler et al., section 3.2).
//
// 1. Every entry gets its hierarchical key (hisparse::entry_key); a stable radix sort by key puts
//    the entries in tree order (root child, child of that child, ..., row-major in the leaf), and
//    repeated coordinates are summed in input order.
// 2. Top-down binning, done bottom-up on the sorted keys: the items of the leaf level are the
//    entries; a node is a run of items with the same key >> (2 log2 d); its children (the items of
//    the level above) are those runs. Each level costs one flag scan, and gives every node its
//    entry count, type (dense when not larger) and size.
// 3. One pool allocation for all nodes (root level first), from one scan of the node sizes per
//    level; then the fill, leaves first and parents after (a parent's slots are its children's
//    references, known since every offset is), all items of a level in parallel.
// Host round trips: one small read-back per level (node count, bytes, statistics).
#pragma once

#include <Kokkos_Core.hpp>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <spk/error.hpp>
#include <spk/impl/hisparse_node.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/radix_sort.hpp>

namespace spk {

/// Node statistics of one level of a HiSparse matrix (level 0 is the root).
struct HiSparseLevelStats {
  std::int64_t sparse_nodes = 0;
  std::int64_t dense_nodes = 0;
  std::int64_t sparse_entries = 0;  ///< entries (leaf values or children) in sparse nodes
  std::int64_t dense_entries = 0;   ///< nonzero slots of dense nodes (values or children)
  std::int64_t bytes = 0;           ///< bytes of the level's nodes
  /// Nodes per scheduling bin (see impl::hisparse::work_bin).
  std::array<std::int64_t, impl::hisparse::num_bins> bin_nodes{};
};

/// Structure statistics of a HiSparse matrix, filled by the conversion.
struct HiSparseStats {
  int node_size = 0;
  int levels = 0;
  std::int64_t stored_entries = 0;  ///< distinct (row, column) entries
  std::int64_t pool_bytes = 0;
  std::vector<HiSparseLevelStats> level;  ///< level[0] = root, level.back() = leaves
};

namespace impl {

/// The shared, immutable content of a HiSparse matrix: the pool and what describes it. The
/// traversal plan of SpMV (hisparse_schedule.hpp) is cached here on first use.
template <class Device>
struct HiSparseData {
  int d = 128;
  int log2d = 7;
  int levels = 1;
  std::int64_t nrows = 0, ncols = 0;
  std::int64_t input_entries = 0;
  Kokkos::View<std::uint64_t*, Device> pool;
  std::uint64_t root = 0;  ///< reference of the root node (0: no entries)
  HiSparseStats stats;
  mutable std::shared_ptr<void> plan;  ///< hisparse::Plan<Device>, built by the first product
};

/// Levels of a tree of d x d nodes covering an nrows x ncols matrix: the smallest D >= 1 with
/// d^D >= max(nrows, ncols).
inline int hisparse_levels(std::int64_t nrows, std::int64_t ncols, int log2d) {
  const std::int64_t n = std::max<std::int64_t>({nrows, ncols, 1});
  int levels = 1;
  while (levels * log2d < 63 && (std::int64_t(1) << (levels * log2d)) < n) ++levels;
  return levels;
}

/// Checks the node size (a power of two in [2, 256]) and returns its log2.
inline int hisparse_log2(int d) {
  require(d >= 2 && d <= 256 && (d & (d - 1)) == 0, "spk::HiSparseMatrix", "node size d = ", d,
          " must be a power of two in [2, 256] (local coordinates are 8-bit)");
  int l = 0;
  while ((1 << l) < d) ++l;
  return l;
}

/// One level of the conversion (see build_hisparse).
template <class Device>
struct HiSparseBuildLevel {
  Kokkos::View<std::uint64_t*, Device> item_keys;   // items (children or entries), sorted
  Kokkos::View<std::int64_t*, Device> node_start;   // first item of each node, + end
  Kokkos::View<std::int64_t*, Device> node_offset;  // byte offset in the level
  Kokkos::View<std::uint8_t*, Device> node_type;
  std::int64_t nodes = 0, items = 0, bytes = 0;
};

/// Builds the HiSparse content of the nrows x ncols matrix whose n entries are (rows(k),
/// cols(k), vals(k)) on Device; indices are checked. Repeated coordinates are summed.
template <class S, class Device, class RowView, class ColView, class ValView>
std::shared_ptr<HiSparseData<Device>> build_hisparse(std::int64_t nrows, std::int64_t ncols,
                                                     const RowView& rows, const ColView& cols,
                                                     const ValView& vals, int d) {
  using exec = typename Device::execution_space;
  using ref_type = hisparse::ref_t<S>;
  static_assert(sizeof(S) == sizeof(ref_type), "HiSparse slots: value and reference widths");
  const char* where = "spk::HiSparseMatrix";
  auto out = std::make_shared<HiSparseData<Device>>();
  out->d = d;
  out->log2d = hisparse_log2(d);
  out->levels = hisparse_levels(nrows, ncols, out->log2d);
  out->nrows = nrows;
  out->ncols = ncols;
  const std::int64_t n = std::int64_t(vals.extent(0));
  out->input_entries = n;
  const int log2d = out->log2d;
  const int levels = out->levels;
  out->stats.node_size = d;
  out->stats.levels = levels;
  out->stats.level.resize(std::size_t(levels));
  // --- 1. keys, checked indices, stable sort, duplicates summed --------------------------------
  Kokkos::View<std::uint64_t*, Device> keys(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hisparse::keys"), std::size_t(n));
  Kokkos::View<std::int64_t*, Device> perm(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hisparse::perm"), std::size_t(n));
  std::int64_t first_bad = n;
  Kokkos::parallel_reduce(
      "spk::hisparse::keys", Range64<exec>(0, n),
      KOKKOS_LAMBDA(const std::int64_t k, std::int64_t& bad) {
        const std::int64_t r = std::int64_t(rows(k));
        const std::int64_t c = std::int64_t(cols(k));
        perm(k) = k;
        if (r < 0 || r >= nrows || c < 0 || c >= ncols) {
          if (k < bad) bad = k;
          keys(k) = 0;
          return;
        }
        keys(k) = hisparse::entry_key(r, c, log2d, levels);
      },
      Kokkos::Min<std::int64_t>(first_bad));
  if (first_bad < n) {
    auto hr = Kokkos::create_mirror_view_and_copy(
        Kokkos::HostSpace(), Kokkos::subview(rows, std::make_pair(first_bad, first_bad + 1)));
    auto hc = Kokkos::create_mirror_view_and_copy(
        Kokkos::HostSpace(), Kokkos::subview(cols, std::make_pair(first_bad, first_bad + 1)));
    throw_invalid_argument(where, "entry ", first_bad, " has index (", std::int64_t(hr(0)), ", ",
                           std::int64_t(hc(0)), ") outside the ", nrows, " x ", ncols, " matrix");
  }
  if (n == 0) return out;
  {
    const std::int64_t top_r = (nrows - 1) >> (log2d * (levels - 1));
    const std::int64_t top_c = (ncols - 1) >> (log2d * (levels - 1));
    const int key_bits = bit_width(std::uint64_t((std::max(top_r, top_c) << log2d) | (d - 1))) +
                         2 * log2d * (levels - 1);
    require(key_bits <= 64, where, "a ", nrows, " x ", ncols, " matrix with node size d = ", d,
            " needs ", key_bits, "-bit hierarchical keys (at most 64): dimensions up to 2^29 fit",
            " with d = 128, up to 2^31 with d = 256; use node size 256");
    stable_radix_sort<exec>(keys, perm, key_bits, RadixSortParams{});
  }
  // unique keys: run heads, summed values in input order
  Kokkos::View<std::int64_t*, Device> head(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hisparse::head"), std::size_t(n) + 1);
  std::int64_t nu = 0;
  Kokkos::parallel_scan(
      "spk::hisparse::unique", Range64<exec>(0, n),
      KOKKOS_LAMBDA(const std::int64_t k, std::int64_t& sum, const bool final) {
        const bool first = k == 0 || keys(k) != keys(k - 1);
        if (final && first) head(sum) = k;
        if (first) sum += 1;
        if (final && k == n - 1) head(sum) = n;
      },
      nu);
  Kokkos::View<std::uint64_t*, Device> item_keys(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hisparse::item_keys"),
      std::size_t(nu));
  Kokkos::View<S*, Device> leaf_vals(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hisparse::leaf_values"),
      std::size_t(nu));
  Kokkos::parallel_for(
      "spk::hisparse::sum_duplicates", Range64<exec>(0, nu), KOKKOS_LAMBDA(const std::int64_t u) {
        S v = vals(perm(head(u)));
        for (std::int64_t k = head(u) + 1; k < head(u + 1); ++k) v += vals(perm(k));
        item_keys(u) = keys(head(u));
        leaf_vals(u) = v;
      });
  out->stats.stored_entries = nu;
  keys = decltype(keys)();
  perm = decltype(perm)();
  head = decltype(head)();
  // --- 2. levels, bottom-up: nodes, counts, types, sizes ------------------------------------------
  using Level = HiSparseBuildLevel<Device>;
  std::vector<Level> lv(static_cast<std::size_t>(levels));
  const int slot_bytes = int(sizeof(S));
  const std::uint64_t local_mask = (std::uint64_t(1) << (2 * log2d)) - 1;
  for (int l = levels - 1; l >= 0; --l) {
    Level& L = lv[std::size_t(l)];
    L.item_keys = item_keys;
    L.items = std::int64_t(item_keys.extent(0));
    const std::int64_t ni = L.items;
    const auto ik = item_keys;
    const int s = 2 * log2d;
    L.node_start = Kokkos::View<std::int64_t*, Device>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hisparse::node_start"),
        std::size_t(ni) + 1);
    const auto ns = L.node_start;
    Kokkos::parallel_scan(
        "spk::hisparse::nodes", Range64<exec>(0, ni),
        KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& sum, const bool final) {
          const bool first = i == 0 || (ik(i) >> s) != (ik(i - 1) >> s);
          if (final && first) ns(sum) = i;
          if (first) sum += 1;
          if (final && i == ni - 1) ns(sum) = ni;
        },
        L.nodes);
    const std::int64_t nn = L.nodes;
    L.node_offset = Kokkos::View<std::int64_t*, Device>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hisparse::node_offset"),
        std::size_t(nn) + 1);
    L.node_type = Kokkos::View<std::uint8_t*, Device>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hisparse::node_type"),
        std::size_t(nn));
    Kokkos::View<std::uint64_t*, Device> parent_keys(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hisparse::item_keys"),
        std::size_t(nn));
    const auto off = L.node_offset;
    const auto nt = L.node_type;
    // per-level statistics: [sparse nodes, dense nodes, sparse entries, dense entries, bins...]
    Kokkos::View<std::int64_t*, Device> st("spk::hisparse::stats", 4 + hisparse::num_bins);
    Kokkos::parallel_scan(
        "spk::hisparse::node_sizes", Range64<exec>(0, nn),
        KOKKOS_LAMBDA(const std::int64_t j, std::int64_t& sum, const bool final) {
          const std::int64_t cnt = ns(j + 1) - ns(j);
          const unsigned t = hisparse::choose_type(cnt, slot_bytes, 1 << log2d);
          if (final) {
            off(j) = sum;
            nt(j) = std::uint8_t(t);
            parent_keys(j) = ik(ns(j)) >> s;
            const bool is_dense = t == hisparse::dense;
            atomic_add_int(&st(is_dense ? 1 : 0), std::int64_t(1));
            atomic_add_int(&st(is_dense ? 3 : 2), cnt);
            atomic_add_int(&st(4 + hisparse::work_bin(t, cnt)), std::int64_t(1));
          }
          sum += hisparse::node_bytes(t, cnt, slot_bytes, 1 << log2d);
          if (final && j == nn - 1) off(nn) = sum;
        },
        L.bytes);
    auto hst = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), st);
    HiSparseLevelStats& ls = out->stats.level[std::size_t(l)];
    ls.sparse_nodes = hst(0);
    ls.dense_nodes = hst(1);
    ls.sparse_entries = hst(2);
    ls.dense_entries = hst(3);
    ls.bytes = L.bytes;
    for (unsigned b = 0; b < hisparse::num_bins; ++b) ls.bin_nodes[b] = hst(4 + b);
    item_keys = parent_keys;
  }
  require(lv[0].nodes == 1, where, "internal error: ", lv[0].nodes, " root nodes");
  // --- 3. one pool, root level first; fill leaves, then parents -----------------------------------
  std::vector<std::int64_t> base(std::size_t(levels) + 1, 0);
  for (int l = 0; l < levels; ++l) base[std::size_t(l) + 1] = base[std::size_t(l)] + lv[std::size_t(l)].bytes;
  const std::int64_t pool_bytes = base[std::size_t(levels)];
  require(sizeof(ref_type) == 8 || pool_bytes <= std::int64_t(0xffffffff), where,
          "the pool needs ", pool_bytes,
          " bytes, more than 4-byte child references (float values) address");
  out->pool = Kokkos::View<std::uint64_t*, Device>("spk::hisparse::pool",
                                                   std::size_t(pool_bytes / 8));  // zeroed
  out->stats.pool_bytes = pool_bytes;
  char* pool = reinterpret_cast<char*>(out->pool.data());
  for (int l = levels - 1; l >= 0; --l) {
    const Level& L = lv[std::size_t(l)];
    const bool leaf = l == levels - 1;
    const std::int64_t my_base = base[std::size_t(l)];
    const std::int64_t child_base = leaf ? 0 : base[std::size_t(l) + 1];
    const auto ik = L.item_keys;
    const auto ns = L.node_start;
    const auto off = L.node_offset;
    const auto nt = L.node_type;
    const auto child_off = leaf ? L.node_offset : lv[std::size_t(l) + 1].node_offset;
    const auto child_type = leaf ? L.node_type : lv[std::size_t(l) + 1].node_type;
    const auto lvals = leaf_vals;
    // node of each item: binary search over node_start (nodes are few per item)
    const std::int64_t nn = L.nodes;
    Kokkos::parallel_for(
        leaf ? "spk::hisparse::fill_leaves" : "spk::hisparse::fill_inner",
        Range64<exec>(0, L.items), KOKKOS_LAMBDA(const std::int64_t i) {
          std::int64_t lo = 0, hi = nn - 1;  // last node with start <= i
          while (lo < hi) {
            const std::int64_t mid = (lo + hi + 1) / 2;
            if (ns(mid) <= i) lo = mid;
            else hi = mid - 1;
          }
          const std::int64_t j = lo;
          const std::int64_t pos = i - ns(j);
          const std::int64_t cnt = ns(j + 1) - ns(j);
          const unsigned t = nt(j);
          char* node = pool + my_base + off(j);
          const std::uint64_t local = ik(i) & local_mask;
          const unsigned r = unsigned(local >> log2d);
          const unsigned c = unsigned(local & ((std::uint64_t(1) << log2d) - 1));
          std::int64_t slot = pos;
          if (t == hisparse::dense) {
            slot = std::int64_t(r) * (std::int64_t(1) << log2d) + c;
          } else {
            if (pos == 0) *reinterpret_cast<std::uint32_t*>(node) = std::uint32_t(cnt);
            reinterpret_cast<std::uint16_t*>(node + hisparse::coords_offset(t))[pos] =
                hisparse::pack(r, c);
          }
          char* slots = node + hisparse::slots_offset(t, cnt);
          if (leaf) {
            reinterpret_cast<S*>(slots)[slot] = lvals(i);
          } else {
            reinterpret_cast<ref_type*>(slots)[slot] = ref_type(hisparse::make_ref(std::uint64_t(child_base + child_off(i)),
                                                      unsigned(child_type(i))));
          }
        });
  }
  {
    auto h_type = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lv[0].node_type);
    out->root = hisparse::make_ref(0, unsigned(h_type(0)));
  }
  return out;
}

}  // namespace impl
}  // namespace spk
