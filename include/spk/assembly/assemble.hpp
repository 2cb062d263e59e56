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
//    E E^T with the multiplication replaced by the action map. No atomics, no per-element
//    matrices in memory, and results identical from run to run.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
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
/// work (4..32) and 128 threads per team; on CPUs one row per thread, no lanes.
struct AssemblyParams {
  int symbolic_lanes = 0;  ///< lanes per row of the pattern kernels
  int numeric_lanes = 0;   ///< lanes per row of the numeric kernel
  int rows_per_team = 0;   ///< rows per team (both phases)
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
  int max_degree = 0;      ///< most elements at one node
  int max_row_length = 0;  ///< longest row of E E^T
  AssemblyParams params;

  int n_nodes() const { return mesh.n_nodes(); }
  std::int64_t nnz() const { return std::int64_t(col_idx.extent(0)); }
  /// Bytes of the symbolic data (incidence, pattern and action map, not the mesh matrix).
  std::size_t memory_bytes() const {
    return (incidence_map.extent(0) + incidence.extent(0) + row_map.extent(0) +
            col_idx.extent(0) + contributions.extent(0) + contribution_map.extent(0)) *
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

/// Symbolic phase on E's execution space: E^T (incidences sorted by element), the pattern of
/// E E^T and its action map (spk::AssemblyPattern). Throws std::invalid_argument when E E^T
/// would have more entries, or E more local pairs (K^2 per element), than int indexing holds.
/// O(nnz(E) K) work and memory (hash-table deduplication per row).
template <class Device>
AssemblyPattern<Device> assemble_symbolic(const MeshMatrix<Device>& mesh,
                                          const AssemblyParams& params = {}) {
  using exec = typename MeshMatrix<Device>::execution_space;
  using dev = typename MeshMatrix<Device>::device_type;
  const char* where = "spk::assemble_symbolic";
  AssemblyPattern<Device> p;
  p.mesh = mesh;
  p.params = params;
  const int n = mesh.n_nodes(), k = mesh.nodes_per_element();
  require(mesh.nnz() * k <= std::int64_t(std::numeric_limits<int>::max()), where,
          mesh.n_elements(), " elements of ", k, " nodes have ", mesh.nnz() * k,
          " local pairs, more than int indexing holds");
  // One workspace for the temporaries (allocations and frees cost more than several of the
  // kernels): the incidence cursors, the scans' chunk sums, and each row's K^2-per-element
  // slices of sorted columns and contribution starts.
  const std::size_t slices = std::size_t(mesh.nnz()) * std::size_t(k);
  const std::size_t scan_ints = 2 * impl::scan_workspace(std::size_t(n) + 1);
  Kokkos::View<int*, dev> work(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::assembly::work"),
      scan_ints + std::size_t(n) + 2 * slices + std::size_t(n) + 1);
  std::int64_t* scan_ws = reinterpret_cast<std::int64_t*>(work.data());
  const Kokkos::View<int*, dev, Kokkos::MemoryUnmanaged> cursor(work.data() + scan_ints,
                                                                std::size_t(n));
  const Kokkos::View<int*, dev, Kokkos::MemoryUnmanaged> tmp_cols(
      work.data() + scan_ints + std::size_t(n), slices);
  const Kokkos::View<int*, dev, Kokkos::MemoryUnmanaged> tmp_start(
      work.data() + scan_ints + std::size_t(n) + slices, slices);
  const Kokkos::View<int*, dev, Kokkos::MemoryUnmanaged> long_rows(
      work.data() + scan_ints + std::size_t(n) + 2 * slices, std::size_t(n) + 1);
  const impl::NodeIncidence<dev> inc = impl::node_incidence(n, mesh.nodes(), Kokkos::View<int*, dev>(cursor), scan_ws);
  p.incidence_map = inc.map;
  p.incidence = inc.entries;
  p.max_degree = inc.max_degree;
  const std::int64_t max_candidates = std::int64_t(inc.max_degree) * k;
  const double mean_candidates = n > 0 ? double(mesh.nnz()) * k / n : 1.0;

  // Rows up to `cap` candidates in one launch with scratch sized for them; longer rows
  // (high-valence nodes) listed and taken by launches of one row per team: in shared memory up
  // to `c_shared` candidates, beyond that in a global buffer sized for the listed rows only.
  using rows_t = impl::PatternRows<dev>;
  const int max_c = int(max_candidates);
  const int cap = std::min(max_c, std::max(64, int(2 * mean_candidates) + 1));
  const std::size_t shared_limit = 40 * 1024;
  int c_shared = cap;
  while (c_shared < max_c && rows_t::scratch_bytes(c_shared + 64) <= shared_limit) c_shared += 64;
  c_shared = std::min(c_shared, max_c);
  const int lanes = params.symbolic_lanes > 0
                        ? params.symbolic_lanes
                        : (impl::is_gpu_space<exec>() ? impl::pow2_clamp(mean_candidates / 4, 4, 8)
                                                      : 1);
  Kokkos::View<int*, dev> row_map(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::assembly::row_map"),
      std::size_t(n) + 1);  // every entry written by the row kernels
  if (n == 0) Kokkos::deep_copy(row_map, 0);
  Kokkos::View<int*, dev> contributions(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::assembly::contributions"), slices);
  const int bounds[4] = {-1, cap, c_shared, max_c};
  for (int pass = 0; pass < 3; ++pass) {
    const int c_lo = bounds[pass], c_hi = bounds[pass + 1];
    if (pass > 0 && c_hi <= c_lo) continue;
    // The long rows of this pass listed (in any order: rows are independent), so that their
    // launch has as many teams as such rows, not as rows.
    int n_list = -1;
    if (pass > 0) {
      const auto map = inc.map;
      Kokkos::deep_copy(Kokkos::subview(long_rows, std::size_t(n)), 0);
      Kokkos::parallel_for(
          "spk::assembly::pattern::long_rows_list", Kokkos::RangePolicy<exec>(0, n),
          KOKKOS_LAMBDA(int v) {
            const int c = (map(v + 1) - map(v)) * k;
            if (c > c_lo && c <= c_hi) long_rows(impl::atomic_fetch_add_int(&long_rows(n), 1)) = v;
          });
      Kokkos::deep_copy(n_list, Kokkos::subview(long_rows, std::size_t(n)));
      if (n_list == 0) continue;
    }
    const bool global = pass == 2;
    Kokkos::View<int*, dev> global_scratch;
    if (global)
      global_scratch = Kokkos::View<int*, dev>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::assembly::long_row_scratch"),
          std::size_t(n_list) * rows_t::scratch_ints_of(c_hi));
    const impl::RowLaunch l = impl::row_launch<exec>(
        mean_candidates, global ? 0 : rows_t::scratch_bytes(c_hi), pass == 0 ? lanes : 32,
        pass == 0 ? params.rows_per_team : 1, 256);
    rows_t f;
    f.nodes = mesh.nodes();
    f.inc_map = inc.map;
    f.inc = inc.entries;
    f.row_len = row_map;
    f.tmp_cols = tmp_cols;
    f.tmp_start = tmp_start;
    f.contrib = contributions;
    f.n = n;
    f.k = k;
    f.c_lo = c_lo;
    f.c_hi = c_hi;
    f.level = l.level;
    f.row_list = long_rows;
    f.list_n = n_list;
    f.global_base = global ? global_scratch.data() : nullptr;
    const int rows_taken = pass == 0 ? n : n_list;
    const int league = (rows_taken + l.rows - 1) / l.rows;
    const char* label = pass == 0   ? "spk::assembly::pattern::rows"
                        : pass == 1 ? "spk::assembly::pattern::long_rows"
                                    : "spk::assembly::pattern::very_long_rows";
    if (global)
      Kokkos::parallel_for(label, Kokkos::TeamPolicy<exec>(league, l.rows, l.lanes), f);
    else
      Kokkos::parallel_for(
          label,
          Kokkos::TeamPolicy<exec>(league, l.rows, l.lanes)
              .set_scratch_size(l.level, Kokkos::PerThread(rows_t::scratch_bytes(c_hi))),
          f);
  }
  int max_row = 0;
  const std::int64_t nnz =
      impl::scan_in_place("spk::assembly::pattern::scan", row_map, scan_ws, &max_row);
  p.max_row_length = max_row;  // nnz checked below

  require(nnz <= std::int64_t(std::numeric_limits<int>::max()), where, "E E^T of ", n,
          " nodes has ", nnz, " entries, more than int offsets hold");
  Kokkos::View<int*, dev> col_idx(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::assembly::col_idx"),
      std::size_t(nnz));
  Kokkos::View<int*, dev> contribution_map(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::assembly::contribution_map"),
      std::size_t(nnz) + 1);
  if (n == 0) Kokkos::deep_copy(contribution_map, 0);  // else written by the last row
  {
    impl::PatternCompact<dev> f;
    f.inc_map = inc.map;
    f.row_map = row_map;
    f.tmp_cols = tmp_cols;
    f.tmp_start = tmp_start;
    f.col_idx = col_idx;
    f.contrib_map = contribution_map;
    f.n = n;
    f.k = k;
    const double mean_row = n > 0 ? double(nnz) / n : 1.0;
    const impl::RowLaunch l =
        impl::row_launch<exec>(mean_row, 0, params.numeric_lanes, params.rows_per_team);
    Kokkos::parallel_for("spk::assembly::pattern::compact",
                         Kokkos::TeamPolicy<exec>((n + l.rows - 1) / l.rows, l.rows, l.lanes), f);
  }
  p.row_map = row_map;
  p.col_idx = col_idx;
  p.contributions = contributions;
  p.contribution_map = contribution_map;
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
}  // namespace impl

/// Writes the compact data of every element (Element::data_size reals each, element-major) into
/// `data` from the node coordinates. Throws std::invalid_argument naming the first degenerate
/// element (zero area or volume) and its nodes, or a size mismatch. O(elements).
template <class Element, class Device, class CoordDevice>
void element_data(const Element& element, const MeshMatrix<Device>& mesh,
                  const Kokkos::View<double* [3], Kokkos::LayoutRight, CoordDevice>& coords,
                  const Kokkos::View<double*, typename MeshMatrix<Device>::device_type>& data) {
  using dev = typename MeshMatrix<Device>::device_type;
  using exec = typename dev::execution_space;
  const char* where = "spk::element_data";
  impl::check_element_mesh<Element>(where, mesh);
  require(coords.extent(0) == std::size_t(mesh.n_nodes()), where, "coordinates of ",
          coords.extent(0), " nodes for a mesh of ", mesh.n_nodes(), " nodes");
  require(data.extent(0) == std::size_t(mesh.n_elements()) * Element::data_size, where,
          "element data of ", data.extent(0), " reals, expected ", mesh.n_elements(), " x ",
          Element::data_size);
  impl::ElementDataKernel<dev, Element> f{element, mesh.nodes(), coords, data};
  int bad = mesh.n_elements();
  Kokkos::parallel_reduce("spk::assembly::element_data",
                          Kokkos::RangePolicy<exec>(0, mesh.n_elements()), f,
                          Kokkos::Min<int>(bad));
  if (bad >= mesh.n_elements()) return;  // Min of nothing is the largest int
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
  impl::check_element_mesh<Element>(where, p.mesh);
  require(a.nrows() == p.n_nodes() && a.nnz() == int(p.nnz()) &&
              a.row_map().data() == p.row_map.data() && a.col_idx().data() == p.col_idx.data(),
          where, "the matrix (", a.nrows(), " rows, ", a.nnz(),
          " entries) does not share the pattern's structure (", p.n_nodes(), " rows, ", p.nnz(),
          " entries): make it with spk::assembled_matrix");
  require(data.extent(0) == std::size_t(p.mesh.n_elements()) * Element::data_size, where,
          "element data of ", data.extent(0), " reals, expected ", p.mesh.n_elements(), " x ",
          Element::data_size);
  impl::NumericRows<dev, Element> f;
  f.element = element;
  f.row_map = p.row_map;
  f.contrib = p.contributions;
  f.contrib_map = p.contribution_map;
  f.data = data;
  f.values = reinterpret_cast<double*>(a.values().data());
  f.n = p.n_nodes();
  const double mean_row = p.n_nodes() > 0 ? double(p.nnz()) / p.n_nodes() : 1.0;
  const impl::RowLaunch l =
      impl::row_launch<exec>(mean_row, 0, p.params.numeric_lanes, p.params.rows_per_team);
  const int league = (p.n_nodes() + l.rows - 1) / l.rows;
  Kokkos::parallel_for("spk::assembly::numeric", Kokkos::TeamPolicy<exec>(league, l.rows, l.lanes),
                       f);
  a.invalidate_analysis();
}

/// Full assembly: symbolic phase, element data and numeric phase. For repeated assembly on one
/// mesh keep the pattern (spk::assemble_symbolic) and call spk::assemble_numeric.
template <class Element, class Device, class CoordDevice>
CsrMatrix<assembled_entry_t<Element>, int, int, Device> assemble(
    const Element& element, const MeshMatrix<Device>& mesh,
    const Kokkos::View<double* [3], Kokkos::LayoutRight, CoordDevice>& coords,
    const AssemblyParams& params = {}) {
  impl::check_element_mesh<Element>("spk::assemble", mesh);
  const auto data = element_data(element, mesh, coords);
  const AssemblyPattern<Device> p = assemble_symbolic(mesh, params);
  const auto a = assembled_matrix<Element>(p);
  assemble_numeric(p, element, data, a);
  return a;
}

}  // namespace spk
