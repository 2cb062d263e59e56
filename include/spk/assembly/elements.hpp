// spk/assembly/elements.hpp: the finite elements spk::assemble knows, each as compact element
// data plus an action map (Zayer, Steinberger, Seidel, HPEC 2017, section IV).
//
// An element type stores per element only `data_size` reals computed from its geometry (its
// "compact data": 3 half-cotangents per linear triangle instead of 9 entries, 6 edge weights per
// linear tetrahedron instead of 16, the scaled barycentric gradients of a linear elasticity
// element instead of its 144 entries). Its `entry(data, a, b, out)` is the action map: it
// expands the compact data into the B x B block that local node a and local node b exchange
// (B = dofs_per_node), on the fly, where the global assembly places it.
//
// Every element type provides
//   static constexpr int nodes_per_element;  // K, the nodes of an element (its column of E)
//   static constexpr int geometry_nodes;     // the leading nodes whose coordinates define it
//   static constexpr int dofs_per_node;      // B
//   static constexpr int data_size;          // reals of compact data per element
//   static constexpr const char* name;
//   bool element_data(const double (*x)[3], double* data) const;  // false: degenerate element
//   void entry(const double* data, int a, int b, double* out) const;  // out: B x B, row-major
// and may declare
//   static constexpr bool symmetric_entries = true;
// when entry(data, b, a) is, bit for bit, the transpose of entry(data, a, b) (true of every
// element here: symmetric bilinear forms, products formed so that swapping a and b swaps only
// commuting factors). spk::assemble_numeric then forms only the diagonal and upper entries
// and writes each upper entry's transpose to its mirror (spk::AssemblyParams::mirror).
// Local node order: vertices first; quadratic elements then the edge midpoints, triangles
// (0,1), (1,2), (2,0) and tetrahedra (0,1), (1,2), (0,2), (0,3), (1,3), (2,3)
// (spk/mesh/quadratic_mesh.hpp numbers them so).
#pragma once

#include <Kokkos_Core.hpp>
#include <cmath>
#include <spk/compound/elasticity.hpp>
#include <spk/error.hpp>
#include <spk/impl/kokkos_compat.hpp>

namespace spk {

namespace impl {

/// Machine epsilon of double (usable in device code without relaxed constexpr).
constexpr double double_epsilon = 2.220446049250313e-16;

KOKKOS_INLINE_FUNCTION double max2(double a, double b) { return a > b ? a : b; }
KOKKOS_INLINE_FUNCTION double abs1(double a) { return a < 0 ? -a : a; }

KOKKOS_INLINE_FUNCTION double dot3(const double* a, const double* b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/// Gradients of the barycentric coordinates 1..3 of a tetrahedron (rows of the inverse of
/// [x1-x0, x2-x0, x3-x0]) into g[0..8] and its volume into g[9]; false when the volume is zero
/// at the rounding level of the triple product. Either orientation.
KOKKOS_INLINE_FUNCTION bool tet_gradients(const double (*x)[3], double* g) {
  double c[3][3];
  for (int k = 0; k < 3; ++k)
    for (int d = 0; d < 3; ++d) c[k][d] = x[k + 1][d] - x[0][d];
  double r[3][3];  // r[0] = c1 x c2 ... cyclic: the adjugate rows
  for (int k = 0; k < 3; ++k) {
    const double* u = c[(k + 1) % 3];
    const double* v = c[(k + 2) % 3];
    r[k][0] = u[1] * v[2] - u[2] * v[1];
    r[k][1] = u[2] * v[0] - u[0] * v[2];
    r[k][2] = u[0] * v[1] - u[1] * v[0];
  }
  const double det = dot3(c[0], r[0]);
  double l2 = 0;
  for (int k = 0; k < 3; ++k) l2 = impl::max2(l2, dot3(c[k], c[k]));
  if (!(impl::abs1(det) > 64 * impl::double_epsilon * l2 *
                                 impl::sqrt(l2)))
    return false;
  const double inv = 1.0 / det;  // one division instead of nine
  for (int k = 0; k < 3; ++k)
    for (int d = 0; d < 3; ++d) g[3 * k + d] = r[k][d] * inv;
  g[9] = impl::abs1(det) / 6.0;
  return true;
}

/// Gradient (3 reals) of barycentric coordinate v of a tetrahedron from tet_gradients' data.
KOKKOS_INLINE_FUNCTION void tet_gradient(const double* data, int v, double* g) {
  for (int d = 0; d < 3; ++d)
    g[d] = v == 0 ? -(data[d] + data[3 + d] + data[6 + d]) : data[3 * (v - 1) + d];
}

/// Gradients of all 4 barycentric coordinates (d[3 v .. 3 v + 2], v = 0..3) and the volume
/// (d[12]); false for a degenerate tetrahedron. P2TetElasticity's compact data (P1TetElasticity
/// keeps the gradients scaled by sqrt(V)): an entry then reads only the gradients it needs.
KOKKOS_INLINE_FUNCTION bool tet_all_gradients(const double (*x)[3], double* d) {
  double g[10];
  if (!tet_gradients(x, g)) return false;
  for (int v = 0; v < 4; ++v) tet_gradient(g, v, d + 3 * v);
  d[12] = g[9];
  return true;
}

/// Endpoints of edge e (0..5) of a tetrahedron in the quadratic local order.
KOKKOS_INLINE_FUNCTION int tet_edge_vertex(int e, int end) {
  // (0,1), (1,2), (0,2), (0,3), (1,3), (2,3)
  const int first = (e == 1 || e == 4) ? 1 : (e == 5 ? 2 : 0);
  const int second = e == 0 ? 1 : ((e == 1 || e == 2) ? 2 : 3);
  return end == 0 ? first : second;
}

/// K = lambda A + mu A^T + mu tr(A) I for the D x D block A: isotropic elasticity from the
/// integral A of grad(phi_a) grad(phi_b)^T over the element.
template <int D>
KOKKOS_INLINE_FUNCTION void lame_block(double lambda, double mu, const double (&a)[D][D],
                                       double* out) {
  double tr = 0;
  for (int i = 0; i < D; ++i) tr += a[i][i];
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j)
      out[i * D + j] = lambda * a[i][j] + mu * a[j][i] + (i == j ? mu * tr : 0.0);
}

}  // namespace impl

/// Linear triangle, Laplacian (cotangent) stiffness K_ab = integral of grad phi_a . grad phi_b,
/// for triangles anywhere in 3D (surfaces). Compact data: half the cotangent of the angle at
/// each vertex; the action map puts -data[c] on the edge opposite vertex c and the sum of the
/// two on the diagonal (the map I - (Q + Q^2) of the paper). 3 reals instead of 9 entries.
struct P1TriangleLaplacian {
  static constexpr int nodes_per_element = 3;
  static constexpr int geometry_nodes = 3;
  static constexpr int dofs_per_node = 1;
  static constexpr int data_size = 3;
  static constexpr bool symmetric_entries = true;
  static constexpr const char* name = "p1-triangle-laplacian";

  KOKKOS_INLINE_FUNCTION bool element_data(const double (*x)[3], double* data) const {
    for (int c = 0; c < 3; ++c) {
      double u[3], v[3], n[3];
      for (int d = 0; d < 3; ++d) {
        u[d] = x[(c + 1) % 3][d] - x[c][d];
        v[d] = x[(c + 2) % 3][d] - x[c][d];
      }
      n[0] = u[1] * v[2] - u[2] * v[1];
      n[1] = u[2] * v[0] - u[0] * v[2];
      n[2] = u[0] * v[1] - u[1] * v[0];
      const double area2 = impl::sqrt(impl::dot3(n, n));
      const double scale = impl::max2(impl::dot3(u, u), impl::dot3(v, v));
      if (!(area2 > 64 * impl::double_epsilon * scale)) return false;
      data[c] = 0.5 * impl::dot3(u, v) / area2;
    }
    return true;
  }

  KOKKOS_INLINE_FUNCTION void entry(const double* data, int a, int b, double* out) const {
    out[0] = a == b ? data[(a + 1) % 3] + data[(a + 2) % 3] : -data[3 - a - b];
  }
};

/// Linear tetrahedron, Laplacian stiffness K_ab = V grad phi_a . grad phi_b. Compact data: the
/// 6 edge weights w_ab = -K_ab of edges (0,1), (0,2), (0,3), (1,2), (1,3), (2,3) (the paper's
/// l cot / 6 form); the action map puts -w on the edges and the sum of a row's weights on its
/// diagonal. 6 reals instead of 16 entries.
struct P1TetLaplacian {
  static constexpr int nodes_per_element = 4;
  static constexpr int geometry_nodes = 4;
  static constexpr int dofs_per_node = 1;
  static constexpr int data_size = 6;
  static constexpr bool symmetric_entries = true;
  static constexpr const char* name = "p1-tet-laplacian";

  /// Index of edge (a, b), a != b, in the order above.
  KOKKOS_INLINE_FUNCTION static int edge(int a, int b) {
    const int lo = a < b ? a : b, hi = a < b ? b : a;
    return lo == 0 ? hi - 1 : (lo == 1 ? hi + 1 : 5);
  }

  KOKKOS_INLINE_FUNCTION bool element_data(const double (*x)[3], double* data) const {
    double g[10];
    if (!impl::tet_gradients(x, g)) return false;
    double grad[4][3];
    for (int v = 0; v < 4; ++v) impl::tet_gradient(g, v, grad[v]);
    for (int a = 0; a < 4; ++a)
      for (int b = a + 1; b < 4; ++b) data[edge(a, b)] = -g[9] * impl::dot3(grad[a], grad[b]);
    return true;
  }

  KOKKOS_INLINE_FUNCTION void entry(const double* data, int a, int b, double* out) const {
    if (a != b) {
      out[0] = -data[edge(a, b)];
    } else {
      double s = 0;
      for (int c = 0; c < 4; ++c)
        if (c != a) s += data[edge(a, c)];
      out[0] = s;
    }
  }
};

/// Linear tetrahedron, isotropic linear elasticity, 3 DOF per node (3 x 3 blocks):
/// K_ab = V (lambda g_a g_b^T + mu g_b g_a^T + mu (g_a . g_b) I), the same matrix as
/// spk::elasticity_stiffness. Compact data: sqrt(V) times the gradients of the 4 barycentric
/// coordinates, 12 reals instead of 144 entries; an entry reads the two it needs (deriving the
/// first gradient from the other three, 9 reals, made the placement 5-10% slower on an H100:
/// the lanes of local node 0 diverge and load more).
struct P1TetElasticity {
  static constexpr int nodes_per_element = 4;
  static constexpr int geometry_nodes = 4;
  static constexpr int dofs_per_node = 3;
  static constexpr int data_size = 12;
  static constexpr bool symmetric_entries = true;
  static constexpr const char* name = "p1-tet-elasticity";
  double lambda = 0, mu = 0;

  P1TetElasticity() = default;
  explicit P1TetElasticity(const ElasticMaterial& m) {
    const auto l = impl::lame_parameters(m);
    lambda = l.first;
    mu = l.second;
  }

  KOKKOS_INLINE_FUNCTION bool element_data(const double (*x)[3], double* data) const {
    double g[13];
    if (!impl::tet_all_gradients(x, g)) return false;
    const double s = impl::sqrt(g[12]);
    for (int i = 0; i < 12; ++i) data[i] = s * g[i];
    return true;
  }

  KOKKOS_INLINE_FUNCTION void entry(const double* data, int a, int b, double* out) const {
    const double* ga = data + 3 * a;  // sqrt(V) grad phi_a
    const double* gb = data + 3 * b;
    double m[3][3];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) m[i][j] = ga[i] * gb[j];  // symmetric in a, b
    impl::lame_block<3>(lambda, mu, m, out);
  }
};

/// Quadratic (6-node) triangle, plane-stress elasticity in the x-y plane, 2 DOF per node (2 x 2
/// blocks); z is ignored. Lame form with lambda* = 2 lambda mu / (lambda + 2 mu). Compact data:
/// the x-y gradients of barycentric coordinates 1 and 2 and the area, 5 reals instead of 144
/// entries; the action map integrates the quadratic shape-function gradients (each a
/// combination of barycentric gradients) exactly with the 3 edge-midpoint quadrature points.
struct P2TriangleElasticity {
  static constexpr int nodes_per_element = 6;
  static constexpr int geometry_nodes = 3;
  static constexpr int dofs_per_node = 2;
  static constexpr int data_size = 5;
  static constexpr bool symmetric_entries = true;
  static constexpr const char* name = "p2-triangle-elasticity";
  double lambda = 0, mu = 0;  // lambda is the plane-stress lambda*

  P2TriangleElasticity() = default;
  explicit P2TriangleElasticity(const ElasticMaterial& m) {
    const auto l = impl::lame_parameters(m);
    lambda = 2 * l.first * l.second / (l.first + 2 * l.second);
    mu = l.second;
  }

  KOKKOS_INLINE_FUNCTION bool element_data(const double (*x)[3], double* data) const {
    const double c1x = x[1][0] - x[0][0], c1y = x[1][1] - x[0][1];
    const double c2x = x[2][0] - x[0][0], c2y = x[2][1] - x[0][1];
    const double det = c1x * c2y - c1y * c2x;
    const double l2 = impl::max2(c1x * c1x + c1y * c1y, c2x * c2x + c2y * c2y);
    if (!(impl::abs1(det) > 64 * impl::double_epsilon * l2)) return false;
    data[0] = c2y / det;
    data[1] = -c2x / det;
    data[2] = -c1y / det;
    data[3] = c1x / det;
    data[4] = 0.5 * impl::abs1(det);
    return true;
  }

  /// Gradient of shape function n at barycentric point l.
  KOKKOS_INLINE_FUNCTION static void shape_gradient(const double* data, int n, const double* l,
                                                    double* g) {
    double grad[3][2];
    for (int d = 0; d < 2; ++d) {
      grad[1][d] = data[d];
      grad[2][d] = data[2 + d];
      grad[0][d] = -(data[d] + data[2 + d]);
    }
    if (n < 3) {
      for (int d = 0; d < 2; ++d) g[d] = (4 * l[n] - 1) * grad[n][d];
    } else {
      const int p = n - 3, q = (n - 2) % 3;  // edges (0,1), (1,2), (2,0)
      for (int d = 0; d < 2; ++d) g[d] = 4 * (l[p] * grad[q][d] + l[q] * grad[p][d]);
    }
  }

  KOKKOS_INLINE_FUNCTION void entry(const double* data, int a, int b, double* out) const {
    double m[2][2] = {{0, 0}, {0, 0}};
    for (int q = 0; q < 3; ++q) {
      double l[3] = {0.5, 0.5, 0.5};
      l[(q + 2) % 3] = 0;  // midpoints of edges (0,1), (1,2), (2,0)
      double ga[2], gb[2];
      shape_gradient(data, a, l, ga);
      shape_gradient(data, b, l, gb);
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) m[i][j] += ga[i] * gb[j];
    }
    const double w = data[4] / 3;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) m[i][j] *= w;
    impl::lame_block<2>(lambda, mu, m, out);
  }
};

/// Quadratic (10-node) tetrahedron, isotropic linear elasticity, 3 DOF per node (3 x 3 blocks).
/// Compact data: the gradients of the 4 barycentric coordinates and the volume (13 reals
/// instead of 900 entries); the action map
/// integrates the quadratic shape-function gradients exactly with the 4-point degree-2 rule.
struct P2TetElasticity {
  static constexpr int nodes_per_element = 10;
  static constexpr int geometry_nodes = 4;
  static constexpr int dofs_per_node = 3;
  static constexpr int data_size = 13;
  static constexpr bool symmetric_entries = true;
  static constexpr const char* name = "p2-tet-elasticity";
  double lambda = 0, mu = 0;

  P2TetElasticity() = default;
  explicit P2TetElasticity(const ElasticMaterial& m) {
    const auto l = impl::lame_parameters(m);
    lambda = l.first;
    mu = l.second;
  }

  KOKKOS_INLINE_FUNCTION bool element_data(const double (*x)[3], double* data) const {
    return impl::tet_all_gradients(x, data);
  }

  /// Gradient of shape function n at barycentric point l.
  KOKKOS_INLINE_FUNCTION static void shape_gradient(const double* data, int n, const double* l,
                                                    double* g) {
    if (n < 4) {
      for (int d = 0; d < 3; ++d) g[d] = (4 * l[n] - 1) * data[3 * n + d];
    } else {
      const int p = impl::tet_edge_vertex(n - 4, 0), q = impl::tet_edge_vertex(n - 4, 1);
      for (int d = 0; d < 3; ++d) g[d] = 4 * (l[p] * data[3 * q + d] + l[q] * data[3 * p + d]);
    }
  }

  KOKKOS_INLINE_FUNCTION void entry(const double* data, int a, int b, double* out) const {
    const double alpha = 0.5854101966249685, beta = 0.1381966011250105;
    double m[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    for (int q = 0; q < 4; ++q) {
      double l[4] = {beta, beta, beta, beta};
      l[q] = alpha;
      double ga[3], gb[3];
      shape_gradient(data, a, l, ga);
      shape_gradient(data, b, l, gb);
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) m[i][j] += ga[i] * gb[j];
    }
    const double w = data[12] / 4;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) m[i][j] *= w;
    impl::lame_block<3>(lambda, mu, m, out);
  }
};

}  // namespace spk
