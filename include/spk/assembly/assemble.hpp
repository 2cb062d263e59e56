// spk/assembly/assemble.hpp: finite-element matrix assembly on the device through the
// multiplication pattern E E^T and action maps (Zayer, Steinberger, Seidel, HPEC 2017).
//
// The global matrix of a mesh has the pattern of S = E E^T (E: spk::MeshMatrix): node a meets
// node b where they share an element. Assembly runs in two phases:
//  - symbolic (spk::assemble_symbolic), once per mesh: E^T (each node's elements, with its local
//    index), then the pattern of E E^T, counted and filled on the device, and with it where each
//    local pair (k, b) of each element collides in E E^T (the contribution lists). Kept in an
//    spk::AssemblyPattern and reused while the mesh does not change.
//  - numeric (spk::element_data, spk::assemble_numeric), per new geometry or material: each
//    element's compact data (spk/assembly/elements.hpp), then each row of S placed by one thread
//    and its lanes, entry S(a, b) summing the action-map blocks of its contributions: the product
//    E E^T with the multiplication replaced by the action map. For elements with symmetric
//    entries the staged kernel forms only each row's diagonal and upper entries and stores
//    their transposes into the mirror entries (through the pattern's transpose map): about
//    (K + 1) / 2K of the blocks. No atomics, no per-element matrices in memory, and results
//    identical from run to run (and to spk::assemble's, bit for bit).
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <spk/assembly/elements.hpp>
#include <spk/assembly/mesh_matrix.hpp>
#include <spk/compound/entry.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/impl/assembly_kernels.hpp>
#include <string>
#include <type_traits>
#include <vector>

namespace spk {

/// Launch parameters of the assembly kernels (results do not depend on them). 0 picks the
/// default of the execution space: on GPUs a power of two of lanes per row near the mean row
/// work (pattern: 8..32, numeric: 4..32) and 128 threads per team (the staged numeric kernels
/// of block entries: one warp per team); on CPUs one row per thread, no lanes.
struct AssemblyParams {
  int symbolic_lanes = 0;  ///< lanes per row of the pattern kernels
  int numeric_lanes = 0;   ///< lanes per row of the numeric kernel
  int rows_per_team = 0;   ///< rows per team (both phases)
  /// Distinct columns per row that the pattern's main kernel holds (at least the lanes per row;
  /// incidences up to twice that rounded up to a power of two); longer rows go to the long-row
  /// kernels. 0: a power of two >= max(2 lanes, half the mean candidates per row), on CPUs
  /// >= 32.
  int row_capacity = 0;
  /// Contributions a row of the numeric kernels stages in scratch per pass (all its lanes
  /// compute blocks, then each sums some entry components in element order; longer rows take
  /// several passes). 0: automatic (on CUDA for rows of at least 32 contributions on average,
  /// a power of two near 1.25 x the mean contributions per row, 32..256, or with contribution
  /// slots and block entries a multiple of 16 >= 1.05 x the mean; otherwise none);
  /// negative: none (each lane sums its own entries).
  int numeric_stage = 0;
  /// spk::assemble_symbolic also keeps where each incidence's contributions lie in the action
  /// map (AssemblyPattern::contribution_slots, K ints per incidence), and the staged numeric
  /// kernel then takes a row's contributions in incidence order (the lanes that read one
  /// element's data read it together) and scatters their blocks to their entries' places; rows
  /// of more contributions than a stage pass holds keep the column order. false: neither (K^2
  /// ints per element less). The same bits either way. spk::assemble ignores it.
  bool incidence_slots = true;
  /// spk::assemble_symbolic also keeps the maps of symmetric assembly (AssemblyPattern::
  /// diagonal, transpose_map and, with incidence_slots, upper_slots: n + nnz + 2 K ints per
  /// incidence), and the staged numeric kernel then forms, for elements with symmetric entries
  /// (Element::symmetric_entries) and block entries, where the mirrored stores stay near their
  /// rows (impl::mirror_pays: locally ordered meshes), only each row's diagonal and upper
  /// entries from their contributions (about (K + 1) / 2K of them) and stores each upper
  /// entry's transpose to its mirror. The same bits either way. Off by default: the maps add
  /// 30-50% to the symbolic phase (H100: +0.3-0.8 ms for 1.3-1.9M tetrahedra, +0.46 ms for 2M
  /// triangles) and save 0.04-0.22 ms per numeric re-assembly of P1 and P2 elasticity on RCM
  /// or structured orderings (7-22%), so they pay from a few re-assemblies on such a mesh.
  /// spk::assemble ignores it.
  bool mirror = false;
};

/// Result of the symbolic phase: the mesh matrix, its transpose (node incidence) and the
/// pattern of E E^T (rows sorted, no duplicates, int offsets). Shallow copies share the views.
template <class Device = Kokkos::DefaultExecutionSpace>
struct AssemblyPattern {
  using device_type = impl::device_t<Device>;
  using execution_space = typename device_type::execution_space;
  MeshMatrix<Device> mesh;
  /// E in compressed-row form (see impl::NodeIncidence): element e * K + k per incidence.
  Kokkos::View<int*, device_type> incidence_map, incidence;
  /// The pattern of E E^T.
  Kokkos::View<int*, device_type> row_map, col_idx;
  /// The action map: the local pairs that land on entry j are contributions(q) for q in
  /// [contribution_map(j), contribution_map(j + 1)), each packed (e K + k) K + b (element e,
  /// local row node k, local column node b), in element order. K entries per incidence.
  Kokkos::View<int*, device_type> contributions, contribution_map;
  /// The action map inverted per incidence: contribution (e K + k) K + b of the incidence at
  /// incidence(j) = e K + k lies at contributions(contribution_slots(j K + b)). K entries per
  /// incidence; empty when params.incidence_slots is false.
  Kokkos::View<int*, device_type> contribution_slots;
  /// Symmetric assembly (params.mirror; else empty): diagonal(v) = the place of (v, v) in
  /// col_idx (-1 for an empty row); transpose_map(j) = the place of (u, v) for entry j = (v, u);
  /// upper_slots, pairs in the action map's index space (2 K ints per incidence; only with
  /// contribution slots): for row v, the t-th of its contributions, in incidence order, that
  /// belong to its diagonal or upper entries is upper_slots(2 (qu + t)) (packed as in
  /// contributions) and lies at contributions(qu + upper_slots(2 (qu + t) + 1)), where
  /// qu = contribution_map(diagonal(v)) (those contributions are the action map's [qu, row end)).
  Kokkos::View<int*, device_type> diagonal, transpose_map, upper_slots;
  /// Mean |transpose_map(j) - j| over the entries: how far, in entries, a mirrored store lands
  /// from the entry that makes it (symmetric assembly pays where that is near; 0 without maps).
  double mirror_distance = 0;
  int max_degree = 0;      ///< most elements at one node
  int max_row_length = 0;  ///< longest row of E E^T
  int long_rows = 0;       ///< rows past the main pattern kernel's capacity (row_capacity)
  AssemblyParams params;

  int n_nodes() const { return mesh.n_nodes(); }
  std::int64_t nnz() const { return std::int64_t(col_idx.extent(0)); }
  /// Bytes of the symbolic data (incidence, pattern and action map, not the mesh matrix).
  std::size_t memory_bytes() const {
    return (incidence_map.extent(0) + incidence.extent(0) + row_map.extent(0) +
            col_idx.extent(0) + contributions.extent(0) + contribution_map.extent(0) +
            contribution_slots.extent(0) + diagonal.extent(0) + transpose_map.extent(0) +
            upper_slots.extent(0)) *
           sizeof(int);
  }
};

/// The CSR entry type assembled for Element: double for one DOF per node, else
/// spk::Block<double, B> (row-major B x B blocks, the compound formats' block type).
template <class Element>
using assembled_entry_t =
    typename std::conditional<Element::dofs_per_node == 1, double,
                              Block<double, Element::dofs_per_node>>::type;

/// Node coordinates (x, y, z per node) copied to Device in the layout the kernels read.
template <class Device = Kokkos::DefaultExecutionSpace>
Kokkos::View<double* [3], Kokkos::LayoutRight, impl::device_t<Device>> node_coordinates(
    const std::vector<std::array<double, 3>>& xyz) {
  Kokkos::View<double* [3], Kokkos::LayoutRight, impl::device_t<Device>> c(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::node_coordinates"), xyz.size());
  const auto h = Kokkos::create_mirror_view(c);
  for (std::size_t i = 0; i < xyz.size(); ++i)
    for (int d = 0; d < 3; ++d) h(i, d) = xyz[i][std::size_t(d)];
  Kokkos::deep_copy(c, h);
  return c;
}

namespace impl {

/// Where one symbolic run keeps its arrays: views into memory the caller owns (N = n + 1
/// entries, Z = nnz(E), S = Z K).
template <class Dev>
struct SymbolicArrays {
  using ints = Kokkos::View<int*, Dev, Kokkos::MemoryUnmanaged>;
  ints inc_map;    ///< N: E^T's offsets (scanned in place)
  ints inc;        ///< Z: E^T's entries e K + k, sorted per node by the pattern kernels
  ints contrib;    ///< S: the action map's contributions
  ints slots;      ///< S: where each incidence's contributions lie in contrib (optional)
  ints tmp_cols;   ///< S: each row's sorted columns at its slice inc_map(v) K
  ints tmp_start;  ///< S: and their contribution starts
  ints row_len;    ///< N: row lengths at v + 1, scanned in place into offsets
  ints cursor;     ///< n: incidence fill cursors
  ints overflow;   ///< N: rows left to the long-row kernels, their count at n
  std::int64_t* scan_inc = nullptr;   ///< scan_workspace(N)
  std::int64_t* scan_rows = nullptr;  ///< scan_workspace(N)
  std::int64_t* stats = nullptr;      ///< 4 values copied to the host at the end
  int* bad = nullptr;  ///< first degenerate element (full assembly), else nullptr

  /// ints of the temporaries (everything but inc_map, inc, contrib) and of the three outputs.
  static std::size_t temp_ints(std::size_t n, std::size_t s) {
    return 4 * scan_workspace(n + 1) + 8 + 2 * s + 3 * (n + 1) + 2;
  }
  static std::size_t output_ints(std::size_t n, std::size_t z, std::size_t s,
                                 bool with_slots = false) {
    return n + 1 + z + (with_slots ? 2 : 1) * s;
  }
  /// Lays the temporaries out from `w` (8-byte aligned, temp_ints) and the outputs from `o`
  /// (slots after contrib when with_slots).
  void place(int* w, int* o, std::size_t n, std::size_t z, std::size_t s,
             bool with_slots = false) {
    const std::size_t ws = scan_workspace(n + 1);
    scan_inc = reinterpret_cast<std::int64_t*>(w);
    scan_rows = scan_inc + ws;
    stats = scan_rows + ws;
    int* q = reinterpret_cast<int*>(stats + 4);
    tmp_cols = ints(q, s);
    tmp_start = ints(q + s, s);
    q += 2 * s;
    row_len = ints(q, n + 1);
    overflow = ints(q + n + 1, n + 1);
    cursor = ints(q + 2 * (n + 1), n);
    bad = q + 3 * n + 2;
    inc_map = ints(o, n + 1);
    inc = ints(o + n + 1, z);
    contrib = ints(o + n + 1 + z, s);
    if (with_slots) slots = ints(o + n + 1 + z + s, s);
  }
};

/// What the symbolic run reports to the host.
struct SymbolicCounts {
  std::int64_t nnz = 0;
  int max_row = 0, max_degree = 0, long_rows = 0;
  int bad = 0;  ///< first degenerate element when SymbolicArrays::bad was given
};

/// The symbolic phase into `a`: E^T (count, scan, fill), the pattern rows (PatternRowsGroup,
/// the rows past its capacity by PatternRows: in shared memory up to ~1000 candidates, a global
/// buffer beyond), the row lengths scanned into offsets (a.row_len). `after_zero` runs right
/// after the initialising launch (the full assembly starts its element data there). Two waits
/// on the device: the count of long rows, and the final counts (one copy).
template <class MeshDevice, class Dev>
SymbolicCounts symbolic_rows(const MeshMatrix<MeshDevice>& mesh, const AssemblyParams& params,
                             const SymbolicArrays<Dev>& a, int n_elements,
                             const std::function<void()>& after_zero) {
  using exec = typename Dev::execution_space;
  const int n = mesh.n_nodes(), k = mesh.nodes_per_element();
  const int nnz_e = int(mesh.nnz());
  const auto nodes = mesh.nodes();
  const auto inc_map = a.inc_map;
  const auto inc = a.inc;
  const auto cursor = a.cursor;
  const auto row_len = a.row_len;
  const auto overflow = a.overflow;
  int* const bad = a.bad;
  Kokkos::parallel_for(
      "spk::assembly::zero", Kokkos::RangePolicy<exec>(0, n + 1), KOKKOS_LAMBDA(int i) {
        inc_map(i) = 0;
        if (i < n) cursor(i) = 0;
        if (i == 0) {
          row_len(0) = 0;
          overflow(n) = 0;
          if (bad) *bad = n_elements;
        }
      });
  if (after_zero) after_zero();
  Kokkos::parallel_for(
      "spk::assembly::incidence::count", Kokkos::RangePolicy<exec>(0, nnz_e),
      KOKKOS_LAMBDA(int p) { atomic_add_int(&inc_map(nodes(p) + 1), 1); });
  scan_in_place_async("spk::assembly::incidence::scan", Kokkos::View<int*, Dev>(inc_map),
                      a.scan_inc);
  Kokkos::parallel_for(
      "spk::assembly::incidence::fill", Kokkos::RangePolicy<exec>(0, nnz_e), KOKKOS_LAMBDA(int p) {
        const int v = nodes(p);
        inc(inc_map(v) + atomic_fetch_add_int(&cursor(v), 1)) = p;
      });

  const double mean_c = n > 0 ? double(nnz_e) * k / n : 1.0;
  require(params.symbolic_lanes >= 0 && params.symbolic_lanes <= 32 &&
              (params.symbolic_lanes & (params.symbolic_lanes - 1)) == 0,
          "spk::AssemblyParams",
          "lanes per row must be 0 (automatic) or a power of two up to 32, not ",
          params.symbolic_lanes);
  require(params.rows_per_team >= 0, "spk::AssemblyParams", "rows per team must be >= 0, not ",
          params.rows_per_team);
  require(params.row_capacity >= 0, "spk::AssemblyParams", "row capacity must be >= 0, not ",
          params.row_capacity);
  {
    using group_t = PatternRowsGroup<Dev>;
    const bool lanes_on = lane_groups_on<exec>();
    const int w = !lanes_on ? 1 : params.symbolic_lanes > 0 ? params.symbolic_lanes
                                                             : pow2_clamp(mean_c / 2, 8, 32);
    int cap = params.row_capacity > 0
                  ? params.row_capacity
                  : pow2_clamp(std::max(double(lanes_on ? 2 * w : 32), mean_c / 2), 2, 1024);
    cap = std::max(cap, w);
    const int per_warp = lanes_on ? 32 / w : 1;
    const std::size_t shared_limit = 40 * 1024;
    while (cap > w && std::size_t(per_warp) * group_t::scratch_bytes(cap) > shared_limit)
      cap = std::max(w, cap / 2);
    int rows = !is_gpu_space<exec>() ? 1 : params.rows_per_team > 0 ? params.rows_per_team
                                                                     : std::max(1, 128 / w);
    rows = (rows + per_warp - 1) / per_warp * per_warp;
    while (rows > per_warp && std::size_t(rows) * group_t::scratch_bytes(cap) > shared_limit)
      rows -= per_warp;
    group_t f;
    f.nodes = nodes;
    f.inc_map = inc_map;
    f.inc = inc;
    f.row_len = row_len;
    f.tmp_cols = a.tmp_cols;
    f.tmp_start = a.tmp_start;
    f.contrib = a.contrib;
    f.slots = a.slots;
    f.overflow = overflow;
    f.n = n;
    f.k = k;
    f.w = w;
    f.cap = cap;
    f.table = group_t::table_of(cap);
    Kokkos::parallel_for(
        "spk::assembly::pattern::rows",
        Kokkos::TeamPolicy<exec>((n + rows - 1) / rows, rows, w)
            .set_scratch_size(0, Kokkos::PerThread(group_t::scratch_bytes(cap))),
        f);
  }
  SymbolicCounts out;
  Kokkos::deep_copy(out.long_rows, Kokkos::subview(overflow, std::size_t(n)));
  if (out.long_rows > 0) {
    // The long rows by PatternRows: one row per team, in shared memory up to c_shared
    // candidates, beyond that in a global buffer sized for the listed rows.
    using rows_t = PatternRows<Dev>;
    std::int64_t max_degree = 0;
    Kokkos::deep_copy(max_degree,
                      Kokkos::View<std::int64_t, Dev, Kokkos::MemoryUnmanaged>(
                          a.scan_inc + scan_result_index(std::size_t(n) + 1) + 1));
    const int max_c = int(max_degree) * k;
    const std::size_t shared_limit = 40 * 1024;
    int c_shared = 64;
    while (c_shared < max_c && rows_t::scratch_bytes(c_shared + 64) <= shared_limit) c_shared += 64;
    c_shared = std::min(c_shared, max_c);
    const int bounds[3] = {-1, c_shared, max_c};
    for (int pass = 0; pass < 2; ++pass) {
      const int c_lo = bounds[pass], c_hi = bounds[pass + 1];
      if (c_hi <= c_lo) continue;
      const bool global = pass == 1;
      Kokkos::View<int*, Dev> global_scratch;
      if (global)
        global_scratch = Kokkos::View<int*, Dev>(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::assembly::long_row_scratch"),
            std::size_t(out.long_rows) * rows_t::scratch_ints_of(c_hi));
      const RowLaunch l = row_launch<exec>(mean_c, global ? 0 : rows_t::scratch_bytes(c_hi),
                                           is_gpu_space<exec>() ? 32 : 0, 1, 256);
      rows_t f;
      f.nodes = nodes;
      f.inc_map = inc_map;
      f.inc = inc;
      f.row_len = row_len;
      f.tmp_cols = a.tmp_cols;
      f.tmp_start = a.tmp_start;
      f.contrib = a.contrib;
      f.slots = a.slots;
      f.n = n;
      f.k = k;
      f.c_lo = c_lo;
      f.c_hi = c_hi;
      f.level = l.level;
      f.row_list = overflow;
      f.list_n = out.long_rows;
      f.global_base = global ? global_scratch.data() : nullptr;
      const int league = (out.long_rows + l.rows - 1) / l.rows;
      const char* label =
          global ? "spk::assembly::pattern::very_long_rows" : "spk::assembly::pattern::long_rows";
      if (global)
        Kokkos::parallel_for(label, Kokkos::TeamPolicy<exec>(league, l.rows, l.lanes), f);
      else
        Kokkos::parallel_for(
            label,
            Kokkos::TeamPolicy<exec>(league, l.rows, l.lanes)
                .set_scratch_size(l.level, Kokkos::PerThread(rows_t::scratch_bytes(c_hi))),
            f);
    }
  }
  scan_in_place_async("spk::assembly::pattern::scan", Kokkos::View<int*, Dev>(row_len),
                      a.scan_rows);
  {
    std::int64_t* const stats = a.stats;
    const std::int64_t* const si = a.scan_inc + scan_result_index(std::size_t(n) + 1);
    const std::int64_t* const sr = a.scan_rows + scan_result_index(std::size_t(n) + 1);
    Kokkos::parallel_for(
        "spk::assembly::counts", Kokkos::RangePolicy<exec>(0, 1), KOKKOS_LAMBDA(int) {
          stats[0] = sr[0];
          stats[1] = sr[1];
          stats[2] = si[1];
          stats[3] = bad ? *bad : 0;
        });
  }
  std::int64_t h[4];
  Kokkos::deep_copy(Kokkos::View<std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(h, 4),
                    Kokkos::View<std::int64_t*, Dev, Kokkos::MemoryUnmanaged>(a.stats, 4));
  out.nnz = h[0];
  out.max_row = int(h[1]);
  out.max_degree = int(h[2]);
  out.bad = int(h[3]);
  return out;
}

/// Checks that E's local pairs fit int indexing.
template <class Device>
void check_pairs(const char* where, const MeshMatrix<Device>& mesh) {
  const int k = mesh.nodes_per_element();
  require(mesh.nnz() * k <= std::int64_t(std::numeric_limits<int>::max()), where,
          mesh.n_elements(), " elements of ", k, " nodes have ", mesh.nnz() * k,
          " local pairs, more than int indexing holds");
}

inline void check_entries(const char* where, int n, std::int64_t nnz) {
  require(nnz <= std::int64_t(std::numeric_limits<int>::max()), where, "E E^T of ", n,
          " nodes has ", nnz, " entries, more than int offsets hold");
}

}  // namespace impl

/// Symbolic phase on E's execution space: E^T (incidences sorted by element), the pattern of
/// E E^T and its action map (spk::AssemblyPattern). Throws std::invalid_argument when E E^T
/// would have more entries, or E more local pairs (K^2 per element), than int indexing holds.
/// O(nnz(E) K) work and memory (hash-table deduplication per row). Device memory: one
/// allocation for E^T and the action map, one for the pattern (row offsets and columns), one
/// for the contribution map, one temporary.
template <class Device>
AssemblyPattern<Device> assemble_symbolic(const MeshMatrix<Device>& mesh,
                                          const AssemblyParams& params = {}) {
  using exec = typename MeshMatrix<Device>::execution_space;
  using dev = typename MeshMatrix<Device>::device_type;
  const char* where = "spk::assemble_symbolic";
  impl::check_pairs(where, mesh);
  AssemblyPattern<Device> p;
  p.mesh = mesh;
  p.params = params;
  const int n = mesh.n_nodes(), k = mesh.nodes_per_element();
  const std::size_t nn = std::size_t(n), z = std::size_t(mesh.nnz()), s = z * std::size_t(k);
  using arrays_t = impl::SymbolicArrays<dev>;
  // The outputs the pattern keeps in one allocation, the temporaries in another (allocations
  // and frees cost more than several of the kernels).
  Kokkos::View<int*, dev> outputs(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::assembly::incidence_and_action_map"),
      arrays_t::output_ints(nn, z, s, params.incidence_slots));
  Kokkos::View<int*, dev> work(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::assembly::work"),
      arrays_t::temp_ints(nn, s));
  arrays_t a;
  a.place(work.data(), outputs.data(), nn, z, s, params.incidence_slots);
  const impl::SymbolicCounts counts = impl::symbolic_rows(mesh, params, a, 0, nullptr);
  impl::check_entries(where, n, counts.nnz);
  p.max_degree = counts.max_degree;
  p.max_row_length = counts.max_row;
  p.long_rows = counts.long_rows;
  p.incidence_map = Kokkos::subview(outputs, std::make_pair(std::size_t(0), nn + 1));
  p.incidence = Kokkos::subview(outputs, std::make_pair(nn + 1, nn + 1 + z));
  p.contributions = Kokkos::subview(outputs, std::make_pair(nn + 1 + z, nn + 1 + z + s));
  if (params.incidence_slots)
    p.contribution_slots =
        Kokkos::subview(outputs, std::make_pair(nn + 1 + z + s, nn + 1 + z + 2 * s));
  const std::size_t nnz = std::size_t(counts.nnz);
  Kokkos::View<int*, dev> csr(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::assembly::pattern"), nn + 1 + nnz);
  Kokkos::View<int*, dev> contribution_map(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::assembly::contribution_map"),
      nnz + 1);
  p.row_map = Kokkos::subview(csr, std::make_pair(std::size_t(0), nn + 1));
  p.col_idx = Kokkos::subview(csr, std::make_pair(nn + 1, nn + 1 + nnz));
  // row launch of the compaction and the mirror maps
  const impl::RowLaunch l = impl::row_launch<exec>(n > 0 ? double(nnz) / n : 1.0, 0,
                                                   params.numeric_lanes, params.rows_per_team);
  {
    impl::PatternCompact<dev> f;
    f.inc_map = p.incidence_map;
    f.offsets = a.row_len;
    f.tmp_cols = a.tmp_cols;
    f.tmp_start = a.tmp_start;
    f.row_map = p.row_map;
    f.col_idx = p.col_idx;
    f.contrib_map = contribution_map;
    f.n = n;
    f.k = k;
    Kokkos::parallel_for("spk::assembly::pattern::compact",
                         Kokkos::TeamPolicy<exec>((n + 1 + l.rows - 1) / l.rows, l.rows, l.lanes),
                         f);
  }
  p.contribution_map = contribution_map;
  if (params.mirror && nnz > 0) {
    // the upper slots first: their pairs are read as 8-byte loads
    const std::size_t upper = 2 * p.contribution_slots.extent(0);
    Kokkos::View<int*, dev> maps(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::assembly::mirror_maps"),
        upper + nn + nnz);
    if (upper > 0) p.upper_slots = Kokkos::subview(maps, std::make_pair(std::size_t(0), upper));
    p.diagonal = Kokkos::subview(maps, std::make_pair(upper, upper + nn));
    p.transpose_map = Kokkos::subview(maps, std::make_pair(upper + nn, upper + nn + nnz));
    impl::PatternMirror<dev> f;
    f.row_map = p.row_map;
    f.col_idx = p.col_idx;
    f.contrib_map = p.contribution_map;
    f.inc_map = p.incidence_map;
    f.slots = p.contribution_slots;
    f.contrib = p.contributions;
    f.diagonal = p.diagonal;
    f.transpose = p.transpose_map;
    f.upper = p.upper_slots;
    f.n = n;
    f.k = k;
    Kokkos::parallel_for("spk::assembly::pattern::mirror",
                         Kokkos::TeamPolicy<exec>((n + l.rows - 1) / l.rows, l.rows, l.lanes), f);
    const auto tr = p.transpose_map;
    std::int64_t distance = 0;
    Kokkos::parallel_reduce(
        "spk::assembly::pattern::mirror_distance", Kokkos::RangePolicy<exec>(0, int(nnz)),
        KOKKOS_LAMBDA(int j, std::int64_t& sum) { sum += tr(j) > j ? tr(j) - j : j - tr(j); },
        distance);
    p.mirror_distance = double(distance) / double(nnz);
  }
  return p;
}

/// A matrix with the pattern of `p` (sharing its row_map and col_idx) and uninitialised values,
/// to be filled by spk::assemble_numeric.
template <class Element, class Device>
CsrMatrix<assembled_entry_t<Element>, int, int, Device> assembled_matrix(
    const AssemblyPattern<Device>& p) {
  using matrix = CsrMatrix<assembled_entry_t<Element>, int, int, Device>;
  typename matrix::values_type values(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::assembly::values"),
      std::size_t(p.nnz()));
  return matrix(p.n_nodes(), p.n_nodes(), p.row_map, p.col_idx, values);
}

namespace impl {
template <class Element, class Device>
void check_element_mesh(const char* where, const MeshMatrix<Device>& mesh) {
  require(mesh.nodes_per_element() == Element::nodes_per_element, where, Element::name,
          " elements have ", Element::nodes_per_element, " nodes, the mesh matrix has ",
          mesh.nodes_per_element(), " per element");
}

template <class Device, class Coords>
void check_coordinates(const char* where, const MeshMatrix<Device>& mesh, const Coords& coords) {
  require(coords.extent(0) == std::size_t(mesh.n_nodes()), where, "coordinates of ",
          coords.extent(0), " nodes for a mesh of ", mesh.n_nodes(), " nodes");
}

/// Throws std::invalid_argument naming degenerate element `bad` and its geometry nodes.
template <class Element, class Device>
[[noreturn]] void throw_degenerate(const char* where, const MeshMatrix<Device>& mesh, int bad) {
  const auto host = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(),
      Kokkos::subview(mesh.nodes(),
                      std::make_pair(std::size_t(bad) * Element::nodes_per_element,
                                     std::size_t(bad + 1) * Element::nodes_per_element)));
  std::string list;
  for (int a = 0; a < Element::geometry_nodes; ++a)
    list += (a ? ", " : "") + std::to_string(host(a));
  throw_invalid_argument(where, Element::name, " element ", bad, " (nodes ", list,
                         ") is degenerate: zero ",
                         Element::geometry_nodes == 3 ? "area" : "volume");
}
}  // namespace impl

namespace impl {
/// Launches the kernels of spk::element_data without waiting for them; the returned view (the
/// mesh matrix's flag) then holds the first degenerate element, or a value >= n_elements when
/// there is none, once they have run. The caller checks it (finish_element_data).
template <class Element, class Device, class CoordDevice>
Kokkos::View<int, typename MeshMatrix<Device>::device_type> launch_element_data(
    const Element& element, const MeshMatrix<Device>& mesh,
    const Kokkos::View<double* [3], Kokkos::LayoutRight, CoordDevice>& coords,
    const Kokkos::View<double*, typename MeshMatrix<Device>::device_type>& data,
    const char* where) {
  using dev = typename MeshMatrix<Device>::device_type;
  using exec = typename dev::execution_space;
  check_element_mesh<Element>(where, mesh);
  check_coordinates(where, mesh, coords);
  require(data.extent(0) == std::size_t(mesh.n_elements()) * Element::data_size, where,
          "element data of ", data.extent(0), " reals, expected ", mesh.n_elements(), " x ",
          Element::data_size);
  // The first degenerate element goes to the mesh matrix's flag on the device (no allocation,
  // no copy to the device, no wait).
  Kokkos::View<int, dev> first = mesh.flag();
  if (!first.data())
    first = Kokkos::View<int, dev>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::assembly::first_degenerate"));
  const int n_elements = mesh.n_elements();
  if (is_gpu_space<exec>() && Element::data_size >= element_data_team_min) {
    // by an atomic minimum, the flag set by a launch: under parallel_reduce this kernel took
    // 0.22 ms against 0.09 ms for 1.3M tetrahedra (H100, Kokkos 3.4)
    Kokkos::parallel_for(
        "spk::assembly::element_data::flag", Kokkos::RangePolicy<exec>(0, 1),
        KOKKOS_LAMBDA(int) { first() = n_elements; });
    ElementDataTeam<dev, Element>{element,     mesh.nodes(), coords,
                                  data.data(), first.data(), n_elements}
        .launch();
  } else {
    // a minimum reduction into the device int (asynchronous: the result is a device view);
    // the same kernel as a parallel_for with an atomic minimum was 10% slower on the P1
    // tetrahedron Laplacian of hand x2 in random order (H100)
    ElementDataKernel<dev, Element> f{element, mesh.nodes(), coords, data};
    Kokkos::parallel_reduce("spk::assembly::element_data",
                            Kokkos::RangePolicy<exec>(0, n_elements), f,
                            Kokkos::Min<int, typename dev::memory_space>(first));
  }
  return first;
}

/// Waits for launch_element_data's kernels (one copy of an int to the host) and throws
/// std::invalid_argument naming the first degenerate element and its nodes, if any.
template <class Element, class Device>
void finish_element_data(const char* where, const MeshMatrix<Device>& mesh,
                         const Kokkos::View<int, typename MeshMatrix<Device>::device_type>& first) {
  int bad = mesh.n_elements();
  Kokkos::deep_copy(bad, first);
  if (bad < mesh.n_elements()) throw_degenerate<Element>(where, mesh, bad);
}
}  // namespace impl

/// Writes the compact data of every element (Element::data_size reals each, element-major) into
/// `data` from the node coordinates. Throws std::invalid_argument naming the first degenerate
/// element (zero area or volume) and its nodes, or a size mismatch. O(elements).
template <class Element, class Device, class CoordDevice>
void element_data(const Element& element, const MeshMatrix<Device>& mesh,
                  const Kokkos::View<double* [3], Kokkos::LayoutRight, CoordDevice>& coords,
                  const Kokkos::View<double*, typename MeshMatrix<Device>::device_type>& data) {
  const char* where = "spk::element_data";
  impl::finish_element_data<Element>(
      where, mesh, impl::launch_element_data(element, mesh, coords, data, where));
}

/// element_data into a new view.
template <class Element, class Device, class CoordDevice>
Kokkos::View<double*, typename MeshMatrix<Device>::device_type> element_data(
    const Element& element, const MeshMatrix<Device>& mesh,
    const Kokkos::View<double* [3], Kokkos::LayoutRight, CoordDevice>& coords) {
  Kokkos::View<double*, typename MeshMatrix<Device>::device_type> data(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::assembly::element_data"),
      std::size_t(mesh.n_elements()) * Element::data_size);
  element_data(element, mesh, coords, data);
  return data;
}

namespace impl {
/// Checks that `a` can take spk::assemble_numeric's values for Element on pattern p.
template <class Element, class Device>
void check_numeric_matrix(const char* where, const AssemblyPattern<Device>& p,
                          const CsrMatrix<assembled_entry_t<Element>, int, int, Device>& a) {
  check_element_mesh<Element>(where, p.mesh);
  require(a.nrows() == p.n_nodes() && a.nnz() == int(p.nnz()) &&
              a.row_map().data() == p.row_map.data() && a.col_idx().data() == p.col_idx.data(),
          where, "the matrix (", a.nrows(), " rows, ", a.nnz(),
          " entries) does not share the pattern's structure (", p.n_nodes(), " rows, ", p.nnz(),
          " entries): make it with spk::assembled_matrix");
}

/// Whether spk::assemble_numeric places Element on pattern p symmetrically (in the rows it
/// stages): entries symmetric bit for bit, the pattern's mirror maps kept (params.mirror) and
/// the mirrors near enough to pay (mirror_pays).
template <class Element, class Device>
bool symmetric_numeric(const AssemblyPattern<Device>& p) {
  constexpr int BB = Element::dofs_per_node * Element::dofs_per_node;
  return symmetric_entries<Element>::value && p.diagonal.extent(0) > 0 &&
         mirror_pays(BB, p.mirror_distance);
}
}  // namespace impl

/// Numeric phase: a.values() = the assembled matrix of `element` with per-element compact data
/// `data` (from spk::element_data, or any values of the same shape, e.g. updated
/// coefficients) on the pattern `p`. `a` must have p's pattern (spk::assembled_matrix).
/// Every value is written; nothing is accumulated into what `a` held. O(one action-map entry per
/// contribution, K^2 per element) work, no atomics.
template <class Element, class Device>
void assemble_numeric(
    const AssemblyPattern<Device>& p, const Element& element,
    const Kokkos::View<const double*, typename AssemblyPattern<Device>::device_type>& data,
    const CsrMatrix<assembled_entry_t<Element>, int, int, Device>& a) {
  using dev = typename AssemblyPattern<Device>::device_type;
  using exec = typename dev::execution_space;
  const char* where = "spk::assemble_numeric";
  impl::check_numeric_matrix<Element>(where, p, a);
  require(data.extent(0) == std::size_t(p.mesh.n_elements()) * Element::data_size, where,
          "element data of ", data.extent(0), " reals, expected ", p.mesh.n_elements(), " x ",
          Element::data_size);
  impl::NumericRows<dev, Element> f;
  f.element = element;
  f.row_map = p.row_map;
  f.contrib = p.contributions;
  f.contrib_map = p.contribution_map;
  f.inc_map = p.incidence_map;
  f.inc = p.incidence;
  f.slots = p.contribution_slots;
  f.data = data;
  f.values = reinterpret_cast<double*>(a.values().data());
  f.n = p.n_nodes();
  const bool symmetric = impl::symmetric_numeric<Element>(p);
  const double mean_row = p.n_nodes() > 0 ? double(p.nnz()) / p.n_nodes() : 1.0;
  const double mean_contrib =
      p.n_nodes() > 0 ? double(p.contributions.extent(0)) / p.n_nodes() : 1.0;
  // symmetric: a row stages its diagonal's contributions (one per incidence) and half the rest
  const double staged_contrib =
      !symmetric ? mean_contrib
                 : p.n_nodes() > 0 ? 0.5 * double(p.contributions.extent(0) +
                                                  p.incidence.extent(0)) / p.n_nodes()
                                   : 1.0;
  const impl::NumericLaunch l = impl::numeric_launch<exec>(
      mean_row, mean_contrib, Element::dofs_per_node * Element::dofs_per_node,
      p.params.numeric_lanes, p.params.rows_per_team, p.params.numeric_stage,
      (symmetric ? p.upper_slots : p.contribution_slots).extent(0) > 0, staged_contrib);
  f.w = l.rows.lanes;
  f.cap = l.cap;
  f.symmetric = symmetric && l.cap > 0;
  f.diagonal = p.diagonal;
  f.transpose = p.transpose_map;
  f.upper = p.upper_slots;
  const int league = (p.n_nodes() + l.rows.rows - 1) / l.rows.rows;
  Kokkos::TeamPolicy<exec> policy(league, l.rows.rows, l.rows.lanes);
  if (l.cap > 0) policy.set_scratch_size(0, Kokkos::PerThread(l.scratch_bytes));
  Kokkos::parallel_for("spk::assembly::numeric", policy, f);
  a.invalidate_analysis();
}

/// Numeric re-assembly from new node coordinates: spk::element_data into `data` (the caller's
/// workspace of n_elements x Element::data_size reals, kept between calls) and
/// spk::assemble_numeric, with a single wait at the end instead of one after the element data.
/// Throws like both; when it names a degenerate element, `a`'s values are unspecified.
template <class Element, class Device, class CoordDevice>
void assemble_numeric(
    const AssemblyPattern<Device>& p, const Element& element,
    const Kokkos::View<double* [3], Kokkos::LayoutRight, CoordDevice>& coords,
    const Kokkos::View<double*, typename AssemblyPattern<Device>::device_type>& data,
    const CsrMatrix<assembled_entry_t<Element>, int, int, Device>& a) {
  const char* where = "spk::assemble_numeric";
  impl::check_numeric_matrix<Element>(where, p, a);  // before data is overwritten
  const auto first = impl::launch_element_data(element, p.mesh, coords, data, where);
  assemble_numeric(p, element,
                   Kokkos::View<const double*, typename AssemblyPattern<Device>::device_type>(data),
                   a);
  impl::finish_element_data<Element>(where, p.mesh, first);
}

/// Full assembly: element data, symbolic phase and numeric phase in one pass over the device
/// (the same matrix as spk::assemble_symbolic, spk::element_data and spk::assemble_numeric give):
/// the pattern's arrays and the element data share one temporary allocation, the matrix takes
/// two (offsets with columns, values), and no contribution map is built. Throws like those
/// three. For repeated assembly on one mesh keep the pattern (spk::assemble_symbolic) and call
/// spk::assemble_numeric.
template <class Element, class Device, class CoordDevice>
CsrMatrix<assembled_entry_t<Element>, int, int, Device> assemble(
    const Element& element, const MeshMatrix<Device>& mesh,
    const Kokkos::View<double* [3], Kokkos::LayoutRight, CoordDevice>& coords,
    const AssemblyParams& params = {}) {
  using dev = typename MeshMatrix<Device>::device_type;
  using exec = typename dev::execution_space;
  using matrix = CsrMatrix<assembled_entry_t<Element>, int, int, Device>;
  constexpr int C = Element::data_size;
  const char* where = "spk::assemble";
  impl::check_element_mesh<Element>(where, mesh);
  impl::check_coordinates(where, mesh, coords);
  impl::check_pairs(where, mesh);
  const int n = mesh.n_nodes(), n_elements = mesh.n_elements();
  const std::size_t nn = std::size_t(n), z = std::size_t(mesh.nnz()),
                    s = z * std::size_t(Element::nodes_per_element);
  using arrays_t = impl::SymbolicArrays<dev>;
  // The element data first (8-byte aligned), then the temporaries, then E^T and the action map.
  const std::size_t data_ints = 2 * std::size_t(n_elements) * C;
  const std::size_t temp_ints = arrays_t::temp_ints(nn, s);
  Kokkos::View<int*, dev> work(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::assembly::work"),
      data_ints + temp_ints + arrays_t::output_ints(nn, z, s));
  double* const data = reinterpret_cast<double*>(work.data());
  arrays_t a;
  a.place(work.data() + data_ints, work.data() + data_ints + temp_ints, nn, z, s);
  const impl::SymbolicCounts counts =
      impl::symbolic_rows(mesh, params, a, n_elements, [&] {
        if (impl::is_gpu_space<exec>() && Element::data_size >= impl::element_data_team_min) {
          impl::ElementDataTeam<dev, Element>{element, mesh.nodes(), coords,
                                              data,    a.bad,        n_elements}
              .launch();
        } else {
          impl::ElementDataMin<dev, Element> fd{element, mesh.nodes(), coords, data, a.bad};
          Kokkos::parallel_for("spk::assembly::element_data",
                               Kokkos::RangePolicy<exec>(0, n_elements), fd);
        }
      });
  if (counts.bad < n_elements) impl::throw_degenerate<Element>(where, mesh, counts.bad);
  impl::check_entries(where, n, counts.nnz);
  const std::size_t nnz = std::size_t(counts.nnz);
  Kokkos::View<int*, dev> csr(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::assembly::pattern"), nn + 1 + nnz);
  typename matrix::values_type values(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::assembly::values"), nnz);
  const matrix out(n, n, Kokkos::subview(csr, std::make_pair(std::size_t(0), nn + 1)),
                   Kokkos::subview(csr, std::make_pair(nn + 1, nn + 1 + nnz)), values);
  impl::AssembleRows<dev, Element> f;
  f.element = element;
  f.inc_map = a.inc_map;
  f.offsets = a.row_len;
  f.tmp_cols = a.tmp_cols;
  f.tmp_start = a.tmp_start;
  f.contrib = a.contrib;
  f.data = Kokkos::View<const double*, dev, Kokkos::MemoryUnmanaged>(
      data, std::size_t(n_elements) * C);
  f.row_map = out.row_map();
  f.col_idx = out.col_idx();
  f.values = reinterpret_cast<double*>(values.data());
  f.n = n;
  const double mean_row = n > 0 ? double(nnz) / n : 1.0;
  const double mean_contrib = n > 0 ? double(s) / n : 1.0;
  const impl::NumericLaunch l = impl::numeric_launch<exec>(
      mean_row, mean_contrib, Element::dofs_per_node * Element::dofs_per_node,
      params.numeric_lanes, params.rows_per_team, params.numeric_stage);
  f.w = l.rows.lanes;
  f.cap = l.cap;
  Kokkos::TeamPolicy<exec> policy((n + 1 + l.rows.rows - 1) / l.rows.rows, l.rows.rows,
                                  l.rows.lanes);
  if (l.cap > 0) policy.set_scratch_size(0, Kokkos::PerThread(l.scratch_bytes));
  Kokkos::parallel_for("spk::assembly::numeric", policy, f);
  return out;
}

}  // namespace spk
