// spk/mesh/mesh.hpp: triangle and tetrahedral meshes on the host (vertex coordinates plus
// zero-based vertex indices per element), the input of the mesh-built compound matrices
// (spk/compound/dirac_operator.hpp, spk/compound/elasticity.hpp).
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <spk/error.hpp>
#include <vector>

namespace spk {

/// A surface made of triangles: `vertices` holds (x, y, z) per vertex, `triangles` three
/// zero-based vertex indices per triangle, counter-clockwise seen from the side the normal
/// (p1 - p0) x (p2 - p0) points to. Vertices need not all be referenced by a triangle.
struct TriangleMesh {
  std::vector<std::array<double, 3>> vertices;
  std::vector<std::array<int, 3>> triangles;

  std::size_t n_vertices() const { return vertices.size(); }
  std::size_t n_triangles() const { return triangles.size(); }
};

/// A volume made of tetrahedra: `vertices` holds (x, y, z) per vertex, `tetrahedra` four
/// zero-based vertex indices per tetrahedron (either orientation). Vertices need not all be
/// referenced by a tetrahedron.
struct TetMesh {
  std::vector<std::array<double, 3>> vertices;
  std::vector<std::array<int, 4>> tetrahedra;

  std::size_t n_vertices() const { return vertices.size(); }
  std::size_t n_tetrahedra() const { return tetrahedra.size(); }
};

namespace impl {
/// Throws std::invalid_argument naming `where`, the element and the index when an element of
/// `elements` refers to a vertex outside [0, n_vertices). O(elements).
template <class Element>
void check_element_indices(const char* where, const std::vector<Element>& elements,
                           std::size_t n_vertices, const char* element_name) {
  for (std::size_t e = 0; e < elements.size(); ++e)
    for (int v : elements[e])
      if (v < 0 || std::size_t(v) >= n_vertices)
        throw_invalid_argument(where, element_name, " ", e, " refers to vertex ", v,
                               ", outside [0, ", n_vertices, ")");
}

inline std::array<double, 3> sub3(const std::array<double, 3>& a, const std::array<double, 3>& b) {
  return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}
inline std::array<double, 3> cross3(const std::array<double, 3>& a,
                                    const std::array<double, 3>& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
inline double dot3(const std::array<double, 3>& a, const std::array<double, 3>& b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
}  // namespace impl

/// Throws std::invalid_argument (naming `where`, the triangle and the index) unless every
/// triangle refers to existing vertices. O(triangles).
inline void check_mesh(const TriangleMesh& m, const char* where = "spk::check_mesh") {
  impl::check_element_indices(where, m.triangles, m.vertices.size(), "triangle");
}

/// Throws std::invalid_argument (naming `where`, the tetrahedron and the index) unless every
/// tetrahedron refers to existing vertices. O(tetrahedra).
inline void check_mesh(const TetMesh& m, const char* where = "spk::check_mesh") {
  impl::check_element_indices(where, m.tetrahedra, m.vertices.size(), "tetrahedron");
}

/// Row numbering of the mesh matrices (spk/compound/): for each vertex, its number among the
/// vertices referenced by some triangle, counted in vertex order, or -1 for an unreferenced
/// vertex. O(vertices + triangles).
inline std::vector<int> vertex_rows(const TriangleMesh& m) {
  check_mesh(m, "spk::vertex_rows");
  std::vector<int> row(m.vertices.size(), -1);
  for (const auto& t : m.triangles)
    for (int v : t) row[std::size_t(v)] = 0;
  int next = 0;
  for (auto& r : row)
    if (r == 0) r = next++;
  return row;
}

/// vertex_rows for the vertices referenced by some tetrahedron. O(vertices + tetrahedra).
inline std::vector<int> vertex_rows(const TetMesh& m) {
  check_mesh(m, "spk::vertex_rows");
  std::vector<int> row(m.vertices.size(), -1);
  for (const auto& t : m.tetrahedra)
    for (int v : t) row[std::size_t(v)] = 0;
  int next = 0;
  for (auto& r : row)
    if (r == 0) r = next++;
  return row;
}

/// Area of triangle t of m (>= 0). O(1); t is not checked.
inline double triangle_area(const TriangleMesh& m, std::size_t t) {
  const auto& p = m.vertices;
  const auto& f = m.triangles[t];
  const auto n = impl::cross3(impl::sub3(p[f[1]], p[f[0]]), impl::sub3(p[f[2]], p[f[0]]));
  return 0.5 * std::sqrt(impl::dot3(n, n));
}

/// Signed volume of tetrahedron t of m: det(p1 - p0, p2 - p0, p3 - p0) / 6, positive when
/// p3 lies on the side of (p0, p1, p2) that its normal points to. O(1); t is not checked.
inline double tetrahedron_signed_volume(const TetMesh& m, std::size_t t) {
  const auto& p = m.vertices;
  const auto& e = m.tetrahedra[t];
  const auto a = impl::sub3(p[e[1]], p[e[0]]);
  const auto b = impl::sub3(p[e[2]], p[e[0]]);
  const auto c = impl::sub3(p[e[3]], p[e[0]]);
  return impl::dot3(a, impl::cross3(b, c)) / 6.0;
}

/// Total area of the triangles of m (same units as the coordinates, squared). O(triangles).
inline double surface_area(const TriangleMesh& m) {
  check_mesh(m, "spk::surface_area");
  double s = 0;
  for (std::size_t t = 0; t < m.triangles.size(); ++t) s += triangle_area(m, t);
  return s;
}

/// Volume enclosed by a closed, consistently oriented triangle surface (divergence theorem:
/// the sum of det(p0, p1, p2) / 6 over triangles); positive for outward normals. Meaningless for
/// open surfaces. O(triangles).
inline double enclosed_volume(const TriangleMesh& m) {
  check_mesh(m, "spk::enclosed_volume");
  double s = 0;
  for (const auto& f : m.triangles)
    s += impl::dot3(m.vertices[f[0]], impl::cross3(m.vertices[f[1]], m.vertices[f[2]]));
  return s / 6.0;
}

/// Total volume of the tetrahedra of m, the sum of |signed volume|. O(tetrahedra).
inline double volume(const TetMesh& m) {
  check_mesh(m, "spk::volume");
  double s = 0;
  for (std::size_t t = 0; t < m.tetrahedra.size(); ++t)
    s += std::abs(tetrahedron_signed_volume(m, t));
  return s;
}

}  // namespace spk
