// spk/compound/dirac_operator.hpp: the quaternionic matrix E = D - rho of a triangle mesh
// (Crane, Pinkall, Schroeder, "Spin transformations of discrete surfaces", SIGGRAPH 2011), the
// quaternion test matrices of the compound kernels.
//
// Rows and columns: one per vertex referenced by some triangle, numbered in the mesh's vertex
// order (spk::vertex_rows). For a triangle f = (i, j, k) with area A_f, a real potential rho_f
// and the edge vectors opposite its vertices taken as imaginary quaternions,
//   e_i = p_k - p_j,  e_j = p_i - p_k,  e_k = p_j - p_i,
// every ordered pair (a, b) of its vertices (a = b included) receives
//   E(a, b) += -1 / (4 A_f) e_a e_b + rho_f / 6 (e_b - e_a) + A_f rho_f^2 / 9
// (Hamilton products). E is quaternionic Hermitian (E(b, a) = conj(E(a, b))), and with rho = 0
// every row sums to zero (the three edge vectors of a triangle sum to zero).
#pragma once

#include <Kokkos_Core.hpp>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <spk/compound/entry.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/impl/mesh_edges.hpp>
#include <spk/impl/mesh_matrix.hpp>
#include <spk/mesh/mesh.hpp>
#include <vector>

namespace spk {

/// The default potential of dirac_operator(mesh): for each triangle,
///   rho_f = 0.1 * sin(2 pi (c_x + c_y + c_z) / L),
/// where c is the triangle's centroid and L the length of the diagonal of the bounding box of
/// the vertices referenced by triangles (L = 1 if that is 0). Smooth, deterministic, in
/// [-0.1, 0.1], and independent of the mesh's scale and refinement (spk::subdivide keeps the
/// bounding box). O(vertices + triangles).
inline std::vector<double> default_dirac_potential(const TriangleMesh& mesh) {
  check_mesh(mesh, "spk::default_dirac_potential");
  const double inf = std::numeric_limits<double>::infinity();
  std::array<double, 3> lo{inf, inf, inf}, hi{-inf, -inf, -inf};
  for (const auto& t : mesh.triangles)
    for (int v : t)
      for (int d = 0; d < 3; ++d) {
        lo[d] = std::min(lo[d], mesh.vertices[std::size_t(v)][d]);
        hi[d] = std::max(hi[d], mesh.vertices[std::size_t(v)][d]);
      }
  double l2 = 0;
  if (!mesh.triangles.empty())
    for (int d = 0; d < 3; ++d) l2 += (hi[d] - lo[d]) * (hi[d] - lo[d]);
  const double len = l2 > 0 ? std::sqrt(l2) : 1.0;
  const double two_pi = 6.283185307179586476925286766559;
  std::vector<double> rho(mesh.triangles.size());
  for (std::size_t f = 0; f < rho.size(); ++f) {
    double s = 0;
    for (int v : mesh.triangles[f])
      for (int d = 0; d < 3; ++d) s += mesh.vertices[std::size_t(v)][d];
    rho[f] = 0.1 * std::sin(two_pi * (s / 3.0) / len);
  }
  return rho;
}

namespace impl {
/// Hamilton product of two quaternions (w, x, y, z) in double.
inline std::array<double, 4> quaternion_product(const std::array<double, 4>& a,
                                                const std::array<double, 4>& b) {
  return {a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
          a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
          a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
          a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
}

/// The checked input of the assembly of E = D - rho: triangles in row numbers, their areas,
/// and the pattern.
struct DiracInput {
  std::vector<std::array<int, 3>> faces;
  std::vector<double> area;
  MeshPattern pattern;
};

/// Checks the mesh and rho (indices, length, finite values, zero-area triangles: the error
/// names the first such triangle) and builds the pattern.
inline DiracInput dirac_input(const TriangleMesh& mesh, const std::vector<double>& rho) {
  const char* where = "spk::dirac_operator";
  check_mesh(mesh, where);
  require(rho.size() == mesh.triangles.size(), where, "rho has ", rho.size(),
          " values, expected one per triangle (", mesh.triangles.size(), ")");
  const std::vector<int> row = vertex_rows(mesh);
  std::int64_t nrows = 0;
  for (int r : row) nrows += r >= 0 ? 1 : 0;
  DiracInput in;
  in.faces.resize(mesh.triangles.size());
  in.area.resize(mesh.triangles.size());
  const double eps = std::numeric_limits<double>::epsilon();
  for (std::size_t f = 0; f < in.faces.size(); ++f) {
    const auto& t = mesh.triangles[f];
    for (int k = 0; k < 3; ++k) in.faces[f][k] = row[std::size_t(t[k])];
    if (!std::isfinite(rho[f]))
      throw_invalid_argument(where, "rho of triangle ", f, " is ", rho[f]);
    const auto& p0 = mesh.vertices[std::size_t(t[0])];
    const auto& p1 = mesh.vertices[std::size_t(t[1])];
    const auto& p2 = mesh.vertices[std::size_t(t[2])];
    const auto n = cross3(sub3(p1, p0), sub3(p2, p0));
    const double n2 = dot3(n, n);
    const double l2 = std::max({dot3(sub3(p1, p0), sub3(p1, p0)), dot3(sub3(p2, p1), sub3(p2, p1)),
                                dot3(sub3(p0, p2), sub3(p0, p2))});
    // |n| = 2 A at the rounding level of the cross product: zero area.
    if (!(n2 > (16 * eps * l2) * (16 * eps * l2)))
      throw_invalid_argument(where, "triangle ", f, " (vertices ", t[0], ", ", t[1], ", ", t[2],
                             ") has zero area");
    in.area[f] = 0.5 * std::sqrt(n2);
  }
  in.pattern = mesh_pattern(where, nrows, in.faces, triangle_edges);
  return in;
}

/// Adds the triangles' terms of E = D - rho to `values` (4 doubles per entry: w, x, y, z).
inline void dirac_accumulate(const TriangleMesh& mesh, const std::vector<double>& rho,
                             const DiracInput& in, double* values) {
  for (std::size_t f = 0; f < in.faces.size(); ++f) {
    const auto& t = mesh.triangles[f];
    const double a = in.area[f], r = rho[f];
    std::array<std::array<double, 4>, 3> e;
    for (int k = 0; k < 3; ++k) {
      const auto d = sub3(mesh.vertices[std::size_t(t[(k + 2) % 3])],
                          mesh.vertices[std::size_t(t[(k + 1) % 3])]);
      e[k] = {0.0, d[0], d[1], d[2]};
    }
    for (int x = 0; x < 3; ++x)
      for (int y = 0; y < 3; ++y) {
        const auto prod = quaternion_product(e[x], e[y]);
        double* v = values + 4 * in.pattern.position(in.faces[f][x], in.faces[f][y]);
        v[0] += -prod[0] / (4 * a) + a * r * r / 9;
        for (int c = 1; c < 4; ++c) v[c] += -prod[c] / (4 * a) + r / 6 * (e[y][c] - e[x][c]);
      }
  }
}
}  // namespace impl

/// E = D - rho of `mesh` (see the file comment) with one real potential value per triangle,
/// as a quaternion CSR matrix on Device: rows sorted by column, no duplicates, int indices.
/// Assembled in double on the host, rounded to Real, copied to Device. Throws
/// std::invalid_argument for indices out of range, a rho of the wrong length or non-finite, a
/// zero-area triangle (naming its index), or more entries than int offsets hold.
/// O(vertices + triangles) time and host memory.
template <class Real = double, class Device = Kokkos::DefaultExecutionSpace>
CsrMatrix<Quaternion<Real>, int, int, Device> dirac_operator(const TriangleMesh& mesh,
                                                             const std::vector<double>& rho) {
  static_assert(std::is_floating_point<Real>::value,
                "spk::dirac_operator: Real must be float or double");
  const impl::DiracInput in = impl::dirac_input(mesh, rho);
  return impl::mesh_csr<Quaternion<Real>, Real, 4, Device>(
      in.pattern, [&](double* values) { impl::dirac_accumulate(mesh, rho, in, values); });
}

/// dirac_operator with the default potential default_dirac_potential(mesh).
template <class Real = double, class Device = Kokkos::DefaultExecutionSpace>
CsrMatrix<Quaternion<Real>, int, int, Device> dirac_operator(const TriangleMesh& mesh) {
  return dirac_operator<Real, Device>(mesh, default_dirac_potential(mesh));
}

}  // namespace spk
