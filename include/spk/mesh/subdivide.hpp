// spk/mesh/subdivide.hpp: uniform refinement of triangle and tetrahedral meshes by edge
// midpoints, to grow the mesh-built matrices of spk/compound/ to benchmark sizes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <spk/error.hpp>
#include <spk/impl/mesh_edges.hpp>
#include <spk/mesh/mesh.hpp>

namespace spk {

namespace impl {
/// Vertices of a refined mesh: the old ones (same indices), then one midpoint per edge of `edges`
/// in its numbering. Throws when the count does not fit int.
inline std::vector<std::array<double, 3>> with_midpoints(
    const char* where, const std::vector<std::array<double, 3>>& vertices, const EdgeIndex& edges) {
  const std::size_t nv = vertices.size(), ne = edges.n_edges();
  if (nv + ne > std::size_t(std::numeric_limits<int>::max()))
    throw_invalid_argument(where, "refined mesh would have ", nv + ne,
                           " vertices, more than int can index");
  std::vector<std::array<double, 3>> out(nv + ne);
  for (std::size_t v = 0; v < nv; ++v) {
    out[v] = vertices[v];
    for (std::int64_t e = edges.start(v); e < edges.start(v + 1); ++e) {
      const auto& q = vertices[std::size_t(edges.upper(std::size_t(e)))];
      auto& m = out[nv + std::size_t(e)];
      for (int d = 0; d < 3; ++d) m[d] = 0.5 * (vertices[v][d] + q[d]);
    }
  }
  return out;
}

inline TriangleMesh subdivide_once(const TriangleMesh& m) {
  const EdgeIndex edges(m.vertices.size(), m.triangles, triangle_edges);
  TriangleMesh r;
  r.vertices = with_midpoints("spk::subdivide", m.vertices, edges);
  const int nv = int(m.vertices.size());
  r.triangles.reserve(4 * m.triangles.size());
  for (std::size_t k = 0; k < m.triangles.size(); ++k) {
    const auto& t = m.triangles[k];
    const int a = t[0], b = t[1], c = t[2];
    if (a == b || b == c || a == c)
      throw_invalid_argument("spk::subdivide", "triangle ", k, " (", a, ", ", b, ", ", c,
                             ") repeats a vertex");
    const int ab = nv + int(edges.find(a, b));
    const int bc = nv + int(edges.find(b, c));
    const int ca = nv + int(edges.find(c, a));
    r.triangles.push_back({a, ab, ca});
    r.triangles.push_back({ab, b, bc});
    r.triangles.push_back({ca, bc, c});
    r.triangles.push_back({ab, bc, ca});
  }
  return r;
}

inline TetMesh subdivide_once(const TetMesh& m) {
  const EdgeIndex edges(m.vertices.size(), m.tetrahedra, tetrahedron_edges);
  TetMesh r;
  r.vertices = with_midpoints("spk::subdivide", m.vertices, edges);
  const int nv = int(m.vertices.size());
  r.tetrahedra.reserve(8 * m.tetrahedra.size());
  for (std::size_t k = 0; k < m.tetrahedra.size(); ++k) {
    const auto& t = m.tetrahedra[k];
    const int v0 = t[0], v1 = t[1], v2 = t[2], v3 = t[3];
    if (v0 == v1 || v0 == v2 || v0 == v3 || v1 == v2 || v1 == v3 || v2 == v3)
      throw_invalid_argument("spk::subdivide", "tetrahedron ", k, " (", v0, ", ", v1, ", ", v2,
                             ", ", v3, ") repeats a vertex");
    const int m01 = nv + int(edges.find(v0, v1)), m02 = nv + int(edges.find(v0, v2));
    const int m03 = nv + int(edges.find(v0, v3)), m12 = nv + int(edges.find(v1, v2));
    const int m13 = nv + int(edges.find(v1, v3)), m23 = nv + int(edges.find(v2, v3));
    // Four corner tetrahedra, then the inner octahedron cut along its diagonal m02 - m13 into
    // four around it (ring m01, m12, m23, m03). Each child is the parent's image under an affine
    // map of positive determinant, so all keep the parent's orientation.
    r.tetrahedra.push_back({v0, m01, m02, m03});
    r.tetrahedra.push_back({m01, v1, m12, m13});
    r.tetrahedra.push_back({m02, m12, v2, m23});
    r.tetrahedra.push_back({m03, m13, m23, v3});
    r.tetrahedra.push_back({m02, m13, m01, m12});
    r.tetrahedra.push_back({m02, m13, m12, m23});
    r.tetrahedra.push_back({m02, m13, m23, m03});
    r.tetrahedra.push_back({m02, m13, m03, m01});
  }
  return r;
}
}  // namespace impl

/// Uniform refinement of a triangle mesh, `levels` times: each triangle (a, b, c) becomes four,
/// (a, ab, ca), (ab, b, bc), (ca, bc, c), (ab, bc, ca), where xy is the midpoint of edge (x, y),
/// shared by the triangles on that edge. Vertices: the old ones first (same indices), then one
/// per distinct edge in (lower index, upper index) order; each level turns V, E, F into V + E,
/// 2E + 3F, 4F. Orientation, area and (for a closed surface) watertightness are kept.
/// levels >= 0 (0 returns a copy). O(4^levels F) time and memory.
inline TriangleMesh subdivide(const TriangleMesh& mesh, int levels = 1) {
  require(levels >= 0, "spk::subdivide", "negative number of levels ", levels);
  check_mesh(mesh, "spk::subdivide");
  TriangleMesh r = mesh;
  for (int l = 0; l < levels; ++l) r = impl::subdivide_once(r);
  return r;
}

/// Uniform refinement of a tetrahedral mesh, `levels` times: each tetrahedron becomes eight,
/// four at its corners and four splitting the inner octahedron along the diagonal between the
/// midpoints of its edges (v0, v2) and (v1, v3); edge midpoints are shared between neighbouring
/// tetrahedra, so a conforming mesh stays conforming. Vertices: the old ones first, then one per
/// distinct edge in (lower index, upper index) order. Each child has 1/8 of its parent's volume
/// and its orientation. levels >= 0 (0 returns a copy). O(8^levels T) time and memory.
inline TetMesh subdivide(const TetMesh& mesh, int levels = 1) {
  require(levels >= 0, "spk::subdivide", "negative number of levels ", levels);
  check_mesh(mesh, "spk::subdivide");
  TetMesh r = mesh;
  for (int l = 0; l < levels; ++l) r = impl::subdivide_once(r);
  return r;
}

}  // namespace spk
