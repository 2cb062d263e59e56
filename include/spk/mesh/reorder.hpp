// spk/mesh/reorder.hpp: vertex numberings of meshes that keep neighbouring vertices close in
// index (the locality of x in the products of mesh-built matrices, and of the element-node
// matrix in assembly): by first reference, reverse Cuthill-McKee, Morton (Z-order) curve and
// spectral (Fiedler vector) orderings, a random one to compare with, and the bandwidth and
// profile that measure them (Zayer et al. 2017, section VII).
//
// A numbering is a std::vector<int> new_index with new_index[old] = new, a permutation of
// [0, n_vertices); spk::renumbered applies it to a mesh.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/mesh_edges.hpp>
#include <spk/mesh/mesh.hpp>
#include <spk/solvers/cg.hpp>
#include <spk/solvers/jacobi.hpp>
#include <spk/solvers/solver_options.hpp>
#include <spk/spmv.hpp>

namespace spk {

namespace impl {
/// new_index[v] for numbering by first reference in element order; unreferenced vertices follow
/// in their old order.
template <std::size_t K>
std::vector<int> first_reference_numbering(std::size_t nv,
                                           const std::vector<std::array<int, K>>& elements) {
  std::vector<int> index(nv, -1);
  int next = 0;
  for (std::size_t e = 0; e < elements.size(); ++e)
    for (int v : elements[e]) {
      require(v >= 0 && std::size_t(v) < nv, "spk::renumber_by_first_reference", "element ", e,
              " references vertex ", v, " of ", nv);
      if (index[std::size_t(v)] < 0) index[std::size_t(v)] = next++;
    }
  for (auto& i : index)
    if (i < 0) i = next++;
  return index;
}

template <class Mesh, std::size_t K>
Mesh renumbered(const Mesh& m, std::vector<std::array<int, K>> Mesh::*elements) {
  const std::vector<int> index = first_reference_numbering(m.vertices.size(), m.*elements);
  Mesh r;
  r.vertices.resize(m.vertices.size());
  for (std::size_t v = 0; v < m.vertices.size(); ++v)
    r.vertices[std::size_t(index[v])] = m.vertices[v];
  r.*elements = m.*elements;
  for (auto& el : r.*elements)
    for (int& v : el) v = index[std::size_t(v)];
  return r;
}
}  // namespace impl

/// The same mesh with its vertices numbered by first reference in element order (the vertices of
/// element 0 in order, then the new ones of element 1, ...); unreferenced vertices follow in
/// their old order. Elements keep their order and orientation. spk::subdivide lists the children
/// of an element consecutively, so after refinement this numbering follows the original element
/// order recursively and neighbouring vertices get nearby numbers; the appended-midpoint
/// numbering of spk::subdivide puts every vertex's new neighbours about V entries away.
/// O(V + elements). Throws std::invalid_argument for an element referencing a missing vertex.
inline TriangleMesh renumber_by_first_reference(const TriangleMesh& m) {
  return impl::renumbered(m, &TriangleMesh::triangles);
}
inline TetMesh renumber_by_first_reference(const TetMesh& m) {
  return impl::renumbered(m, &TetMesh::tetrahedra);
}

// --- graph orderings -------------------------------------------------------------------------

namespace impl {

/// Throws std::invalid_argument (naming `where`) when n vertices cannot be numbered by int.
inline void check_vertex_count(const char* where, std::size_t n) {
  require(n <= std::size_t(std::numeric_limits<int>::max()), where, n,
          " vertices, more than int can number");
}

/// The vertex graph of a mesh: vertices are adjacent when they share an element. Neighbours of
/// each vertex sorted increasing, without the vertex itself; `referenced` marks the vertices of
/// some element (a vertex of a degenerate element can be referenced with no neighbour).
struct VertexGraph {
  std::vector<std::int64_t> start;  ///< n + 1 offsets into `adjacent`
  std::vector<int> adjacent;
  std::vector<char> referenced;

  std::size_t n() const { return referenced.size(); }
  int degree(int v) const { return int(start[std::size_t(v) + 1] - start[std::size_t(v)]); }
};

/// The vertex graph of `elements` (indices checked by the caller) from their edges `pairs`.
/// O(V + E) time and memory (E edges) after the EdgeIndex.
template <class Element, std::size_t NP>
VertexGraph vertex_graph(std::size_t nv, const std::vector<Element>& elements,
                         const std::array<std::array<int, 2>, NP>& pairs) {
  const EdgeIndex edges(nv, elements, pairs);
  VertexGraph g;
  g.referenced.assign(nv, 0);
  for (const auto& el : elements)
    for (int v : el) g.referenced[std::size_t(v)] = 1;
  g.start.assign(nv + 1, 0);
  for (std::size_t a = 0; a < nv; ++a)
    for (std::int64_t e = edges.start(a); e < edges.start(a + 1); ++e) {
      ++g.start[a + 1];
      ++g.start[std::size_t(edges.upper(std::size_t(e))) + 1];
    }
  for (std::size_t v = 0; v < nv; ++v) g.start[v + 1] += g.start[v];
  g.adjacent.resize(std::size_t(g.start[nv]));
  std::vector<std::int64_t> fill(g.start.begin(), g.start.end() - 1);
  // Visiting the edges (a, b), a < b, in increasing a appends to b's list the lower neighbours
  // in increasing order, all before a = b appends the upper ones: every list comes out sorted.
  for (std::size_t a = 0; a < nv; ++a)
    for (std::int64_t e = edges.start(a); e < edges.start(a + 1); ++e) {
      const int b = edges.upper(std::size_t(e));
      g.adjacent[std::size_t(fill[a]++)] = b;
      g.adjacent[std::size_t(fill[std::size_t(b)]++)] = int(a);
    }
  return g;
}

inline VertexGraph vertex_graph(const TriangleMesh& m, const char* where) {
  check_mesh(m, where);
  check_vertex_count(where, m.vertices.size());
  return vertex_graph(m.vertices.size(), m.triangles, triangle_edges);
}
inline VertexGraph vertex_graph(const TetMesh& m, const char* where) {
  check_mesh(m, where);
  check_vertex_count(where, m.vertices.size());
  return vertex_graph(m.vertices.size(), m.tetrahedra, tetrahedron_edges);
}

/// Breadth-first level structures of a VertexGraph, reusing its marks between searches.
class LevelStructure {
 public:
  explicit LevelStructure(const VertexGraph& g) : g_(g), mark_(g.n(), 0) {}

  /// Level structure rooted at `root`: its component, level by level; returns the number of
  /// levels (eccentricity of root + 1). O(size of the component + its edges).
  int build(int root) {
    ++stamp_;
    order_.clear();
    level_start_.assign(1, 0);
    order_.push_back(root);
    mark_[std::size_t(root)] = stamp_;
    std::size_t head = 0;
    while (head < order_.size()) {
      const std::size_t level_end = order_.size();
      level_start_.push_back(std::int64_t(level_end));
      for (; head < level_end; ++head) {
        const int v = order_[head];
        for (std::int64_t k = g_.start[std::size_t(v)]; k < g_.start[std::size_t(v) + 1]; ++k) {
          const int w = g_.adjacent[std::size_t(k)];
          if (mark_[std::size_t(w)] != stamp_) {
            mark_[std::size_t(w)] = stamp_;
            order_.push_back(w);
          }
        }
      }
    }
    return int(level_start_.size()) - 1;
  }

  /// Vertices of the last structure, level by level.
  const std::vector<int>& order() const { return order_; }
  /// Offsets of the levels in order() (levels + 1 entries).
  const std::vector<std::int64_t>& level_start() const { return level_start_; }

  /// Vertex of minimum degree among order()[first, last), ties by smallest index.
  int min_degree(std::int64_t first, std::int64_t last) const {
    int best = order_[std::size_t(first)];
    for (std::int64_t k = first + 1; k < last; ++k) {
      const int v = order_[std::size_t(k)];
      const int dv = g_.degree(v), db = g_.degree(best);
      if (dv < db || (dv == db && v < best)) best = v;
    }
    return best;
  }

 private:
  const VertexGraph& g_;
  std::vector<std::int64_t> mark_;
  std::int64_t stamp_ = 0;
  std::vector<int> order_;
  std::vector<std::int64_t> level_start_;
};

/// George-Liu pseudo-peripheral vertex of the component of `seed` (SPARSPAK's FNROOT): from a
/// vertex of minimum degree of the component, repeatedly root a level structure at a vertex of
/// minimum degree of the last level while the number of levels grows. On return `ls` holds the
/// level structure rooted at the returned vertex. O(k (size + edges)) for k searches (few).
inline int pseudo_peripheral_vertex(LevelStructure& ls, int seed) {
  ls.build(seed);
  const std::int64_t size = std::int64_t(ls.order().size());
  int root = ls.min_degree(0, size);
  int levels = ls.build(root);
  while (levels > 1 && levels < size) {
    const int x = ls.min_degree(ls.level_start()[std::size_t(levels) - 1], size);
    const int new_levels = ls.build(x);
    root = x;
    if (new_levels <= levels) break;
    levels = new_levels;
  }
  return root;
}

/// new_index from an order (order[new] = old) of all n vertices.
inline std::vector<int> index_of_order(const std::vector<int>& order) {
  std::vector<int> index(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) index[std::size_t(order[k])] = int(k);
  return index;
}

inline std::vector<int> rcm_numbering(const VertexGraph& g) {
  const std::size_t n = g.n();
  std::vector<int> order;
  order.reserve(n);
  std::vector<char> placed(n, 0);
  LevelStructure ls(g);
  const auto by_degree = [&g](int a, int b) {
    const int da = g.degree(a), db = g.degree(b);
    return da < db || (da == db && a < b);
  };
  for (std::size_t s = 0; s < n; ++s) {
    if (!g.referenced[s] || placed[s]) continue;
    const int root = pseudo_peripheral_vertex(ls, int(s));
    const std::size_t first = order.size();
    order.push_back(root);
    placed[std::size_t(root)] = 1;
    for (std::size_t head = first; head < order.size(); ++head) {
      const int v = order[head];
      const std::size_t new_first = order.size();
      for (std::int64_t k = g.start[std::size_t(v)]; k < g.start[std::size_t(v) + 1]; ++k) {
        const int w = g.adjacent[std::size_t(k)];
        if (!placed[std::size_t(w)]) {
          placed[std::size_t(w)] = 1;
          order.push_back(w);
        }
      }
      std::sort(order.begin() + std::ptrdiff_t(new_first), order.end(), by_degree);
    }
    std::reverse(order.begin() + std::ptrdiff_t(first), order.end());
  }
  for (std::size_t v = 0; v < n; ++v)
    if (!g.referenced[v]) order.push_back(int(v));
  return index_of_order(order);
}

/// The low 21 bits of x spread to every third bit (bit i to bit 3 i).
inline std::uint64_t spread_bits_3(std::uint64_t x) {
  x &= 0x1fffffu;
  x = (x | x << 32) & 0x1f00000000ffffull;
  x = (x | x << 16) & 0x1f0000ff0000ffull;
  x = (x | x << 8) & 0x100f00f00f00f00full;
  x = (x | x << 4) & 0x10c30c30c30c30c3ull;
  x = (x | x << 2) & 0x1249249249249249ull;
  return x;
}

inline std::vector<int> morton_numbering(const std::vector<std::array<double, 3>>& p,
                                         const char* where) {
  check_vertex_count(where, p.size());
  std::array<double, 3> lo{0, 0, 0}, hi{0, 0, 0};
  for (std::size_t v = 0; v < p.size(); ++v)
    for (int d = 0; d < 3; ++d) {
      // halved, so that hi - lo cannot overflow
      const double c = 0.5 * p[v][d];
      if (!std::isfinite(c))
        throw_invalid_argument(where, "vertex ", v, " has the non-finite coordinate ", p[v][d]);
      if (v == 0 || c < lo[d]) lo[d] = c;
      if (v == 0 || c > hi[d]) hi[d] = c;
    }
  constexpr double cells = double(1u << 21);
  std::vector<std::pair<std::uint64_t, int>> key(p.size());
  for (std::size_t v = 0; v < p.size(); ++v) {
    std::uint64_t code = 0;
    for (int d = 0; d < 3; ++d) {
      const double extent = hi[d] - lo[d];
      const double t = extent > 0 ? (0.5 * p[v][d] - lo[d]) / extent : 0.0;
      const std::uint64_t q =
          std::uint64_t(std::min(cells - 1, std::max(0.0, std::floor(t * cells))));
      code |= spread_bits_3(q) << d;
    }
    key[v] = {code, int(v)};
  }
  std::sort(key.begin(), key.end());
  std::vector<int> order(p.size());
  for (std::size_t k = 0; k < key.size(); ++k) order[k] = key[k].second;
  return index_of_order(order);
}

}  // namespace impl

/// Reverse Cuthill-McKee numbering (new_index[old] = new) of the vertex graph of m (vertices
/// adjacent when they share a triangle), which keeps the bandwidth of mesh matrices small:
/// each connected component, in order of its smallest vertex, is numbered breadth-first from a
/// George-Liu pseudo-peripheral vertex (level structures rooted at a minimum-degree vertex of the
/// last level while the eccentricity grows, starting from a minimum-degree vertex of the
/// component), the unnumbered neighbours of each vertex by increasing degree, ties by old index,
/// and the component's order is then reversed. Vertices in no triangle come last, in their old
/// order. Host only. O((V + E) log(max degree)) for E edges, times the few level structures of
/// the start vertex search. Throws std::invalid_argument for a triangle referencing a missing
/// vertex.
inline std::vector<int> rcm_numbering(const TriangleMesh& m) {
  return impl::rcm_numbering(impl::vertex_graph(m, "spk::rcm_numbering"));
}
/// rcm_numbering for the vertex graph of a tetrahedral mesh.
inline std::vector<int> rcm_numbering(const TetMesh& m) {
  return impl::rcm_numbering(impl::vertex_graph(m, "spk::rcm_numbering"));
}

/// Morton (Z-order curve) numbering: vertices sorted by the Morton code of their coordinates,
/// each quantised to 21 bits over the bounding box of all vertices (an axis of zero extent
/// quantises to 0), x in the lowest bit; ties by old index. Referenced or not, every vertex is
/// placed by its coordinates alone. Host only, O(V log V). Throws std::invalid_argument for a
/// non-finite coordinate.
inline std::vector<int> morton_numbering(const TriangleMesh& m) {
  return impl::morton_numbering(m.vertices, "spk::morton_numbering");
}
/// morton_numbering for the vertices of a tetrahedral mesh.
inline std::vector<int> morton_numbering(const TetMesh& m) {
  return impl::morton_numbering(m.vertices, "spk::morton_numbering");
}

/// Stopping rules of spk::spectral_numbering.
struct SpectralOptions {
  /// Inverse iterations (Laplacian solves) at most (>= 0).
  int max_iterations = 50;
  /// Stop when every component's Rayleigh quotient rho and unit vector x satisfy
  /// ||L x - rho x|| <= tolerance * rho (>= 0).
  double tolerance = 1e-4;
  /// Each solve: spk::cg with a Jacobi preconditioner, from x / rho. An inexact solve only slows
  /// the iteration down, so max_iterations reached is no error.
  SolverOptions solver{1000, 1e-6, 0.0, false};
};

/// What spk::spectral_numbering did.
struct SpectralReport {
  int components = 0;                  ///< connected components with an edge
  int iterations = 0;                  ///< inverse iterations done
  std::int64_t solver_iterations = 0;  ///< CG iterations over all solves
  double residual = 0.0;               ///< max over components of ||L x - rho x|| / rho at the end
  bool converged = false;              ///< residual <= tolerance
};

namespace impl {

template <class Device>
std::vector<int> spectral_numbering(const VertexGraph& g, const SpectralOptions& opt,
                                    SpectralReport* report) {
  const char* where = "spk::spectral_numbering";
  require(opt.max_iterations >= 0, where, "SpectralOptions::max_iterations = ", opt.max_iterations,
          " must be >= 0");
  require(opt.tolerance >= 0 && std::isfinite(opt.tolerance), where,
          "SpectralOptions::tolerance = ", opt.tolerance, " must be >= 0 and finite");
  check_solver_options(where, opt.solver);
  const std::size_t n = g.n();

  // Components (in order of their smallest vertex) with a pseudo-peripheral root each. The
  // vertices with an edge get rows of the Laplacian in breadth-first order from the root, which
  // keeps its bandwidth small (fast products) whatever the input numbering.
  std::vector<int> component(n, -1), row(n, -1), roots, row_component;
  std::vector<double> host_x;
  LevelStructure ls(g);
  for (std::size_t s = 0; s < n; ++s) {
    if (!g.referenced[s] || component[s] >= 0) continue;
    const int c = int(roots.size());
    roots.push_back(pseudo_peripheral_vertex(ls, int(s)));
    // start vector: the distance from the root, the Fiedler vector's shape on a long mesh
    const auto& order = ls.order();
    const auto& level = ls.level_start();
    for (std::size_t l = 0; l + 1 < level.size(); ++l)
      for (std::int64_t k = level[l]; k < level[l + 1]; ++k) {
        const int v = order[std::size_t(k)];
        component[std::size_t(v)] = c;
        if (g.degree(v) == 0) continue;
        row[std::size_t(v)] = int(host_x.size());
        row_component.push_back(c);
        host_x.push_back(double(l));
      }
  }
  const int n_components = int(roots.size());
  const int n_rows = int(host_x.size());

  SpectralReport rep;
  for (int c = 0; c < n_components; ++c)
    if (g.degree(roots[std::size_t(c)]) > 0) ++rep.components;

  if (n_rows > 0) {
    // Laplacian D - A on Device, Jacobi-preconditioned (every row has a neighbour: D > 0)
    using Matrix = CsrMatrix<double, int, std::int64_t, Device>;
    typename Matrix::host_type h(n_rows, n_rows,
                                 std::int64_t(n_rows) + std::int64_t(g.adjacent.size()));
    for (std::size_t v = 0; v < n; ++v)
      if (row[v] >= 0) h.row_map()(std::size_t(row[v]) + 1) = g.degree(int(v)) + 1;
    for (int i = 0; i < n_rows; ++i) h.row_map()(std::size_t(i) + 1) += h.row_map()(std::size_t(i));
    std::vector<std::pair<int, double>> entries;  // one row, sorted by column
    for (std::size_t v = 0; v < n; ++v) {
      if (row[v] < 0) continue;
      entries.assign(1, {row[v], double(g.degree(int(v)))});
      for (std::int64_t k = g.start[v]; k < g.start[v + 1]; ++k)
        entries.emplace_back(row[std::size_t(g.adjacent[std::size_t(k)])], -1.0);
      std::sort(entries.begin(), entries.end());
      const std::size_t first = std::size_t(h.row_map()(std::size_t(row[v])));
      for (std::size_t k = 0; k < entries.size(); ++k) {
        h.col_idx()(first + k) = entries[k].first;
        h.values()(first + k) = entries[k].second;
      }
    }
    const Matrix lap = copy_to<Device>(h);
    const auto jacobi = make_jacobi(lap);
    using Vec = Kokkos::View<double*, typename Matrix::device_type>;
    const Vec x("spk::spectral::x", std::size_t(n_rows)),
        y("spk::spectral::y", std::size_t(n_rows));
    // a separate host buffer (create_mirror_view of a host view would alias x)
    const auto host_view = Kokkos::create_mirror(x);
    CgWorkspace<double, typename Matrix::device_type> ws(n_rows);
    const std::size_t nc = std::size_t(n_components);
    std::vector<double> sum(nc), norm2(nc), rho(nc), res2(nc);
    const auto per_component = [&](std::vector<double>& acc, auto&& term) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (std::size_t i = 0; i < host_x.size(); ++i) acc[std::size_t(row_component[i])] += term(i);
    };
    std::vector<double> count(nc);
    per_component(count, [](std::size_t) { return 1.0; });
    for (int it = 0;; ++it) {
      // x <- x minus its mean, unit norm, per component (constants are L's null space)
      per_component(sum, [&](std::size_t i) { return host_x[i]; });
      for (std::size_t i = 0; i < host_x.size(); ++i)
        host_x[i] -= sum[std::size_t(row_component[i])] / count[std::size_t(row_component[i])];
      per_component(norm2, [&](std::size_t i) { return host_x[i] * host_x[i]; });
      for (std::size_t i = 0; i < host_x.size(); ++i) {
        const double s = std::sqrt(norm2[std::size_t(row_component[i])]);
        host_x[i] = s > 0 ? host_x[i] / s : 0.0;
        host_view(i) = host_x[i];
      }
      Kokkos::deep_copy(x, host_view);
      // Rayleigh quotients and residuals ||L x - rho x|| per component
      spmv(Mode::N, 1.0, lap, Kokkos::View<const double*, typename Matrix::device_type>(x), 0.0, y);
      Kokkos::deep_copy(host_view, y);
      per_component(rho, [&](std::size_t i) { return host_x[i] * host_view(i); });
      per_component(res2, [&](std::size_t i) {
        const double r = host_view(i) - rho[std::size_t(row_component[i])] * host_x[i];
        return r * r;
      });
      rep.residual = 0;
      for (std::size_t c = 0; c < nc; ++c)
        if (rho[c] > 0) rep.residual = std::max(rep.residual, std::sqrt(res2[c]) / rho[c]);
      rep.iterations = it;
      rep.converged = rep.residual <= opt.tolerance;
      if (rep.converged || it == opt.max_iterations) break;
      // solve L y = x from y = x / rho (exact for an eigenvector)
      for (std::size_t i = 0; i < host_x.size(); ++i) {
        const double r = rho[std::size_t(row_component[i])];
        host_view(i) = r > 0 ? host_x[i] / r : 0.0;
      }
      Kokkos::deep_copy(y, host_view);
      const SolverResult sr = cg(lap, x, y, opt.solver, jacobi, ws);
      rep.solver_iterations += sr.iterations;
      if (sr.reason == StopReason::non_finite || sr.reason == StopReason::not_positive)
        throw_runtime_error(where, "the Laplacian solve of inverse iteration ", it + 1,
                            " failed: ", sr.message);
      Kokkos::deep_copy(host_view, y);
      for (std::size_t i = 0; i < host_x.size(); ++i) host_x[i] = host_view(i);
    }
    // the sign that puts each component's pseudo-peripheral root first
    std::vector<double> sign(nc, 1.0);
    for (std::size_t c = 0; c < nc; ++c) {
      const int r = row[std::size_t(roots[c])];
      if (r >= 0 && host_x[std::size_t(r)] > 0) sign[c] = -1.0;
    }
    for (std::size_t i = 0; i < host_x.size(); ++i)
      host_x[i] *= sign[std::size_t(row_component[i])];
  }
  if (report) *report = rep;

  std::vector<std::tuple<int, double, int>> key;
  key.reserve(n);
  for (std::size_t v = 0; v < n; ++v)
    key.emplace_back(component[v] >= 0 ? component[v] : n_components,
                     row[v] >= 0 ? host_x[std::size_t(row[v])] : 0.0, int(v));
  std::sort(key.begin(), key.end());
  std::vector<int> order(n);
  for (std::size_t k = 0; k < n; ++k) order[k] = std::get<2>(key[k]);
  return index_of_order(order);
}

}  // namespace impl

/// Spectral numbering: vertices sorted by their entry of the Fiedler vector of the vertex-graph
/// Laplacian L = D - A (unit edge weights), the minimiser of sum over edges of (x_i - x_j)^2 for
/// a unit x orthogonal to the constants, so neighbours get close positions. Each connected
/// component is ordered on its own, components in order of their smallest vertex, then the
/// vertices in no triangle in their old order; ties by old index. Within a component the order
/// starts at the end nearer its George-Liu pseudo-peripheral vertex (see rcm_numbering).
///
/// Computed by inverse iteration x <- L^+ x on Device: each solve by spk::cg with a Jacobi
/// preconditioner on a CsrMatrix of L (rows in breadth-first order, for locality), from the
/// initial guess x / rho; after each solve x is made zero-mean and of unit norm on every
/// component (the constants of each component are L's null space, so the semidefinite system
/// stays consistent). The start vector is the breadth-first distance from the pseudo-peripheral
/// vertex. Stops after options.max_iterations solves or when every component's eigen-residual
/// ||L x - rho x|| / rho (rho its Rayleigh quotient) is at most options.tolerance; `report`
/// (optional) receives the figures. Converges as (lambda_2 / lambda_3)^k, each solve costing up
/// to sqrt(lambda_max / lambda_2) CG iterations (~ the mesh's diameter in edges): seconds for
/// 10^5 vertices; much larger meshes want a multilevel method.
/// Kokkos must be initialised. Throws std::invalid_argument for a triangle referencing a missing
/// vertex or invalid options, std::runtime_error when a solve breaks down.
template <class Device = Kokkos::DefaultExecutionSpace>
std::vector<int> spectral_numbering(const TriangleMesh& m, const SpectralOptions& options = {},
                                    SpectralReport* report = nullptr) {
  return impl::spectral_numbering<Device>(impl::vertex_graph(m, "spk::spectral_numbering"), options,
                                          report);
}
/// spectral_numbering for the vertex graph of a tetrahedral mesh.
template <class Device = Kokkos::DefaultExecutionSpace>
std::vector<int> spectral_numbering(const TetMesh& m, const SpectralOptions& options = {},
                                    SpectralReport* report = nullptr) {
  return impl::spectral_numbering<Device>(impl::vertex_graph(m, "spk::spectral_numbering"), options,
                                          report);
}

/// A uniformly random permutation of [0, n_vertices) (new_index[old] = new), the same for the
/// same seed on every platform: Fisher-Yates driven by std::mt19937_64(seed), with unbiased
/// bounded draws by rejection. O(n). Throws std::invalid_argument when n_vertices exceeds int.
inline std::vector<int> random_numbering(std::size_t n_vertices, std::uint64_t seed) {
  impl::check_vertex_count("spk::random_numbering", n_vertices);
  std::vector<int> index(n_vertices);
  std::iota(index.begin(), index.end(), 0);
  std::mt19937_64 rng(seed);
  for (std::size_t i = n_vertices; i > 1; --i) {
    // uniform in [0, i): reject the lowest 2^64 mod i draws so that the rest divide evenly
    const std::uint64_t bound = i, threshold = (0 - bound) % bound;
    std::uint64_t r = rng();
    while (r < threshold) r = rng();
    std::swap(index[i - 1], index[std::size_t(r % bound)]);
  }
  return index;
}

// --- applying and measuring numberings ---------------------------------------------------------

namespace impl {

/// Throws std::invalid_argument (naming `where` and the first bad entry) unless new_index is a
/// permutation of [0, n).
inline void check_permutation(const char* where, const std::vector<int>& new_index, std::size_t n) {
  require(new_index.size() == n, where, "new_index has ", new_index.size(),
          " entries, the mesh has ", n, " vertices");
  std::vector<int> from(n, -1);
  for (std::size_t v = 0; v < n; ++v) {
    const int k = new_index[v];
    if (k < 0 || std::size_t(k) >= n)
      throw_invalid_argument(where, "new_index[", v, "] = ", k, " is outside [0, ", n, ")");
    if (from[std::size_t(k)] >= 0)
      throw_invalid_argument(where, "new_index[", v, "] = ", k, " repeats new_index[",
                             from[std::size_t(k)], "]; not a permutation");
    from[std::size_t(k)] = int(v);
  }
}

template <class Mesh, std::size_t K>
Mesh permuted(const Mesh& m, std::vector<std::array<int, K>> Mesh::*elements,
              const std::vector<int>& new_index) {
  const char* where = "spk::renumbered";
  check_mesh(m, where);
  check_vertex_count(where, m.vertices.size());
  check_permutation(where, new_index, m.vertices.size());
  const std::size_t nv = m.vertices.size();
  const auto& old_elements = m.*elements;
  Mesh r;
  r.vertices.resize(nv);
  for (std::size_t v = 0; v < nv; ++v) r.vertices[std::size_t(new_index[v])] = m.vertices[v];
  // elements by their smallest new vertex, stably: a counting sort
  std::vector<std::size_t> first(nv + 1, 0);
  std::vector<int> lowest(old_elements.size());
  for (std::size_t e = 0; e < old_elements.size(); ++e) {
    int lo = std::numeric_limits<int>::max();
    for (int v : old_elements[e]) lo = std::min(lo, new_index[std::size_t(v)]);
    lowest[e] = lo;
    ++first[std::size_t(lo) + 1];
  }
  for (std::size_t v = 0; v < nv; ++v) first[v + 1] += first[v];
  auto& out = r.*elements;
  out.resize(old_elements.size());
  for (std::size_t e = 0; e < old_elements.size(); ++e) {
    auto& el = out[first[std::size_t(lowest[e])]++];
    for (std::size_t c = 0; c < K; ++c) el[c] = new_index[std::size_t(old_elements[e][c])];
  }
  return r;
}

template <std::size_t K>
std::int64_t bandwidth(const std::vector<std::array<int, K>>& elements) {
  std::int64_t b = 0;
  for (const auto& el : elements) {
    const auto mm = std::minmax_element(el.begin(), el.end());
    b = std::max(b, std::int64_t(*mm.second) - std::int64_t(*mm.first));
  }
  return b;
}

template <std::size_t K>
std::int64_t profile(std::size_t nv, const std::vector<std::array<int, K>>& elements) {
  std::vector<int> lowest(nv);
  std::iota(lowest.begin(), lowest.end(), 0);
  for (const auto& el : elements) {
    const int lo = *std::min_element(el.begin(), el.end());
    for (int v : el) lowest[std::size_t(v)] = std::min(lowest[std::size_t(v)], lo);
  }
  std::int64_t p = 0;
  for (std::size_t v = 0; v < nv; ++v) p += std::int64_t(v) - lowest[v];
  return p;
}

}  // namespace impl

/// The mesh with its vertices renumbered by new_index (vertex v moves to new_index[v]) and its
/// triangles reordered by their smallest new vertex index, stably (ties keep their order); each
/// triangle keeps its corners in the same order, so its orientation. This is the layout of
/// Zayer et al. (2017, section VII): after an RCM numbering, the element-node matrix is banded.
/// O(V + F). Throws std::invalid_argument when new_index is not a permutation of
/// [0, n_vertices) (naming the first bad entry) or a triangle references a missing vertex.
inline TriangleMesh renumbered(const TriangleMesh& m, const std::vector<int>& new_index) {
  return impl::permuted(m, &TriangleMesh::triangles, new_index);
}
/// renumbered for a tetrahedral mesh: tetrahedra reordered by their smallest new vertex.
inline TetMesh renumbered(const TetMesh& m, const std::vector<int>& new_index) {
  return impl::permuted(m, &TetMesh::tetrahedra, new_index);
}

/// Bandwidth of the vertex numbering: the largest |i - j| over vertices i, j sharing a triangle
/// (0 without triangles), the half bandwidth of the mesh matrices. O(F). Throws
/// std::invalid_argument for a triangle referencing a missing vertex.
inline std::int64_t mesh_bandwidth(const TriangleMesh& m) {
  check_mesh(m, "spk::mesh_bandwidth");
  return impl::bandwidth(m.triangles);
}
/// mesh_bandwidth over the tetrahedra of a tetrahedral mesh.
inline std::int64_t mesh_bandwidth(const TetMesh& m) {
  check_mesh(m, "spk::mesh_bandwidth");
  return impl::bandwidth(m.tetrahedra);
}

/// Profile (envelope size) of the vertex numbering: the sum over vertices i of i - (the smallest
/// index among i and the vertices sharing a triangle with i), the entries of the lower envelope
/// of the mesh matrices. O(V + F). Throws std::invalid_argument for a triangle referencing a
/// missing vertex.
inline std::int64_t mesh_profile(const TriangleMesh& m) {
  check_mesh(m, "spk::mesh_profile");
  return impl::profile(m.vertices.size(), m.triangles);
}
/// mesh_profile over the tetrahedra of a tetrahedral mesh.
inline std::int64_t mesh_profile(const TetMesh& m) {
  check_mesh(m, "spk::mesh_profile");
  return impl::profile(m.vertices.size(), m.tetrahedra);
}

}  // namespace spk
