// spk/mesh/quadratic_mesh.hpp: quadratic (P2) node numberings of triangle and tetrahedral meshes,
// the vertices followed by one node per edge midpoint, for assembling quadratic finite elements.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <spk/error.hpp>
#include <spk/impl/mesh_edges.hpp>
#include <spk/mesh/mesh.hpp>
#include <spk/mesh/subdivide.hpp>
#include <vector>

namespace spk {

/// Six-node (quadratic) triangles: `nodes` holds (x, y, z) per node, `elements` six zero-based
/// node indices per triangle, the vertices (0, 1, 2) then the midpoints of the edges (0, 1),
/// (1, 2), (2, 0) as local nodes 3, 4, 5.
struct QuadraticTriangleMesh {
  std::vector<std::array<double, 3>> nodes;
  std::vector<std::array<int, 6>> elements;

  std::size_t n_nodes() const { return nodes.size(); }
  std::size_t n_elements() const { return elements.size(); }
};

/// Ten-node (quadratic) tetrahedra: `nodes` holds (x, y, z) per node, `elements` ten zero-based
/// node indices per tetrahedron, the vertices (0, 1, 2, 3) then the midpoints of the edges
/// (0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3) as local nodes 4 .. 9.
struct QuadraticTetMesh {
  std::vector<std::array<double, 3>> nodes;
  std::vector<std::array<int, 10>> elements;

  std::size_t n_nodes() const { return nodes.size(); }
  std::size_t n_elements() const { return elements.size(); }
};

namespace impl {
/// Throws naming `where` and element k when `el` repeats a vertex (its edges would collapse).
template <std::size_t K>
void check_distinct_vertices(const char* where, const char* element_name, std::size_t k,
                             const std::array<int, K>& el) {
  for (std::size_t a = 0; a < K; ++a)
    for (std::size_t b = a + 1; b < K; ++b)
      if (el[a] == el[b])
        throw_invalid_argument(where, element_name, " ", k, " repeats vertex ", el[a],
                               " (local vertices ", a, " and ", b, ")");
}
}  // namespace impl

/// The quadratic node numbering of `mesh`: nodes are the mesh's vertices (same indices, all of
/// them, also unreferenced ones), then one midpoint per distinct edge, numbered nv + e in the
/// edge order of spk::impl::EdgeIndex ((lower vertex, upper vertex) lexicographically); triangles
/// sharing an edge share its midpoint node. Throws std::invalid_argument for indices out of range
/// or a triangle repeating a vertex (naming it), or more than int nodes. O(vertices + triangles).
inline QuadraticTriangleMesh quadratic_mesh(const TriangleMesh& mesh) {
  const char* where = "spk::quadratic_mesh";
  check_mesh(mesh, where);
  for (std::size_t k = 0; k < mesh.triangles.size(); ++k)
    impl::check_distinct_vertices(where, "triangle", k, mesh.triangles[k]);
  const impl::EdgeIndex edges(mesh.vertices.size(), mesh.triangles, impl::triangle_edges);
  QuadraticTriangleMesh q;
  q.nodes = impl::with_midpoints(where, mesh.vertices, edges);
  const int nv = int(mesh.vertices.size());
  q.elements.reserve(mesh.triangles.size());
  for (const auto& t : mesh.triangles) {
    const auto mid = [&](int a, int b) { return nv + int(edges.find(t[a], t[b])); };
    q.elements.push_back({t[0], t[1], t[2], mid(0, 1), mid(1, 2), mid(2, 0)});
  }
  return q;
}

/// The quadratic node numbering of `mesh`: the vertices (same indices, all of them), then one
/// midpoint per distinct edge in spk::impl::EdgeIndex order, shared by the tetrahedra on that
/// edge. Throws std::invalid_argument for indices out of range or a tetrahedron repeating a
/// vertex (naming it), or more than int nodes. O(vertices + tetrahedra).
inline QuadraticTetMesh quadratic_mesh(const TetMesh& mesh) {
  const char* where = "spk::quadratic_mesh";
  check_mesh(mesh, where);
  for (std::size_t k = 0; k < mesh.tetrahedra.size(); ++k)
    impl::check_distinct_vertices(where, "tetrahedron", k, mesh.tetrahedra[k]);
  const impl::EdgeIndex edges(mesh.vertices.size(), mesh.tetrahedra, impl::tetrahedron_edges);
  QuadraticTetMesh q;
  q.nodes = impl::with_midpoints(where, mesh.vertices, edges);
  const int nv = int(mesh.vertices.size());
  q.elements.reserve(mesh.tetrahedra.size());
  for (const auto& t : mesh.tetrahedra) {
    const auto mid = [&](int a, int b) { return nv + int(edges.find(t[a], t[b])); };
    q.elements.push_back(
        {t[0], t[1], t[2], t[3], mid(0, 1), mid(1, 2), mid(0, 2), mid(0, 3), mid(1, 3), mid(2, 3)});
  }
  return q;
}

}  // namespace spk
