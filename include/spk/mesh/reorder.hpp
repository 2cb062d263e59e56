// spk/mesh/reorder.hpp: vertex numberings of meshes that keep neighbouring vertices close in
// index (the locality of x in the products of mesh-built matrices).
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include <spk/error.hpp>
#include <spk/mesh/mesh.hpp>

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
  for (std::size_t v = 0; v < m.vertices.size(); ++v) r.vertices[std::size_t(index[v])] = m.vertices[v];
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

}  // namespace spk
