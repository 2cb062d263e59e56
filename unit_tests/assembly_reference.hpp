// Sequential host reference assembly of finite-element stiffness matrices, the source of truth
// that the device assembly is tested against. Written from the textbook definitions and kept
// deliberately plain: reference-element shape functions in barycentric coordinates, the affine
// map of the element's vertices, numerical quadrature, explicit strain-displacement matrices B
// and K_e = sum over quadrature points of w |det J| B^T D B, scattered as (row, column, value)
// triplets that are sorted and summed. Nothing here shares code with the library's assembly.
//
// Output: a scalar CSR matrix at the level of degrees of freedom, dof = node * B + component
// (B = 1 for the Laplacians, 2 or 3 for elasticity), one row per node of the node table (nodes
// that no element references have empty rows), rows sorted, duplicates summed. Entry (dof(a, i),
// dof(b, j)) exists exactly when nodes a and b share an element, for all components i, j, also
// when its value is zero.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <spk/compound/elasticity.hpp>
#include <spk/error.hpp>
#include <utility>
#include <vector>

namespace spk_test {

/// Scalar CSR matrix on the host: n rows and columns, row_map of n + 1 offsets, columns sorted
/// and unique within each row.
struct ReferenceCsr {
  std::int64_t n = 0;
  std::vector<std::int64_t> row_map;
  std::vector<std::int64_t> col_idx;
  std::vector<double> values;

  std::int64_t nnz() const { return std::int64_t(col_idx.size()); }
  /// Position of entry (i, j) in col_idx, or -1 when it is not stored. O(log row length).
  std::int64_t find(std::int64_t i, std::int64_t j) const {
    const auto first = col_idx.begin() + row_map[std::size_t(i)];
    const auto last = col_idx.begin() + row_map[std::size_t(i) + 1];
    const auto it = std::lower_bound(first, last, j);
    return it != last && *it == j ? std::int64_t(it - col_idx.begin()) : -1;
  }
  /// Value of entry (i, j), NaN when it is not stored (failing any comparison).
  double at(std::int64_t i, std::int64_t j) const {
    const std::int64_t k = find(i, j);
    return k >= 0 ? values[std::size_t(k)] : std::numeric_limits<double>::quiet_NaN();
  }
};

using Point3 = std::array<double, 3>;

/// Values and derivatives (with respect to the D reference coordinates) of NEN shape functions
/// at one point of the reference element.
template <int D, int NEN>
struct ShapeValues {
  std::array<double, NEN> n;
  std::array<std::array<double, D>, NEN> dn;
};

/// A quadrature rule on the reference simplex {xi >= 0, sum xi <= 1} (weights sum to its
/// measure, 1/2 or 1/6).
template <int D>
struct QuadratureRule {
  std::vector<std::array<double, D>> points;
  std::vector<double> weights;
};

/// 3-point rule on the reference triangle, exact for polynomials of degree 2 (Strang-Fix).
inline QuadratureRule<2> triangle_rule_degree2() {
  const double w = 1.0 / 6.0;
  return {{{1.0 / 6, 1.0 / 6}, {2.0 / 3, 1.0 / 6}, {1.0 / 6, 2.0 / 3}}, {w, w, w}};
}

/// 4-point rule on the reference tetrahedron, exact for polynomials of degree 2 (Keast).
inline QuadratureRule<3> tet_rule_degree2() {
  const double a = (5.0 - std::sqrt(5.0)) / 20.0, b = (5.0 + 3.0 * std::sqrt(5.0)) / 20.0;
  const double w = 1.0 / 24.0;
  return {{{a, a, a}, {b, a, a}, {a, b, a}, {a, a, b}}, {w, w, w, w}};
}

namespace reference_impl {
/// Barycentric coordinates L_0 = 1 - sum xi, L_k = xi_{k-1} of a reference point.
template <std::size_t D>
std::array<double, D + 1> barycentric(const std::array<double, D>& xi) {
  std::array<double, D + 1> l;
  l[0] = 1.0;
  for (std::size_t j = 0; j < D; ++j) {
    l[j + 1] = xi[j];
    l[0] -= xi[j];
  }
  return l;
}
/// dL_k / dxi_j.
inline double barycentric_derivative(std::size_t k, std::size_t j) {
  return k == 0 ? -1.0 : (k - 1 == j ? 1.0 : 0.0);
}

/// Quadratic shape functions of a simplex with D + 1 vertices and the edge nodes `edges`:
/// vertex a: L_a (2 L_a - 1); edge node (i, j): 4 L_i L_j. Derivatives by the chain rule
/// through the barycentric coordinates.
template <int D, std::size_t NE>
ShapeValues<D, D + 1 + int(NE)> p2_shape(const std::array<double, D>& xi,
                                         const std::array<std::array<int, 2>, NE>& edges) {
  constexpr std::size_t d = D, nen = d + 1 + NE;
  const auto l = barycentric<d>(xi);
  ShapeValues<D, int(nen)> s{};
  // dN_a / dL_k, then dN_a / dxi_j = sum_k dN_a / dL_k dL_k / dxi_j
  std::array<std::array<double, d + 1>, nen> dl{};
  for (std::size_t a = 0; a <= d; ++a) {
    s.n[a] = l[a] * (2 * l[a] - 1);
    dl[a][a] = 4 * l[a] - 1;
  }
  for (std::size_t e = 0; e < NE; ++e) {
    const std::size_t a = d + 1 + e;
    const auto i = std::size_t(edges[e][0]), j = std::size_t(edges[e][1]);
    s.n[a] = 4 * l[i] * l[j];
    dl[a][i] = 4 * l[j];
    dl[a][j] = 4 * l[i];
  }
  for (std::size_t a = 0; a < nen; ++a)
    for (std::size_t j = 0; j < d; ++j) {
      double g = 0;
      for (std::size_t k = 0; k <= d; ++k) g += dl[a][k] * barycentric_derivative(k, j);
      s.dn[a][j] = g;
    }
  return s;
}
}  // namespace reference_impl

/// Linear shape functions N_a = L_a of the reference simplex with D + 1 vertices (0, e_1, ..).
template <int D>
ShapeValues<D, D + 1> p1_shape(const std::array<double, D>& xi) {
  constexpr std::size_t d = D;
  const auto l = reference_impl::barycentric<d>(xi);
  ShapeValues<D, D + 1> s{};
  for (std::size_t a = 0; a <= d; ++a) {
    s.n[a] = l[a];
    for (std::size_t j = 0; j < d; ++j) s.dn[a][j] = reference_impl::barycentric_derivative(a, j);
  }
  return s;
}

/// Six-node triangle at reference point (r, s): vertices 0, 1, 2 at (0, 0), (1, 0), (0, 1),
/// then the midpoints of the edges (0, 1), (1, 2), (2, 0).
inline ShapeValues<2, 6> p2_triangle_shape(const std::array<double, 2>& xi) {
  return reference_impl::p2_shape<2>(xi,
                                     std::array<std::array<int, 2>, 3>{{{0, 1}, {1, 2}, {2, 0}}});
}

/// Ten-node tetrahedron at reference point (r, s, t): vertices 0 .. 3 at the origin and the unit
/// points, then the midpoints of the edges (0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3).
inline ShapeValues<3, 10> p2_tet_shape(const std::array<double, 3>& xi) {
  return reference_impl::p2_shape<3>(
      xi, std::array<std::array<int, 2>, 6>{{{0, 1}, {1, 2}, {0, 2}, {0, 3}, {1, 3}, {2, 3}}});
}

namespace reference_impl {

/// How an element's reference coordinates map to space: a triangle in its own plane in 3D, a
/// triangle in the x-y plane (z ignored), a tetrahedron.
enum class Frame { surface, plane_xy, volume };

/// Inverse of the D x D matrix a by Gauss-Jordan elimination with partial pivoting; returns its
/// determinant (0 and an unspecified inverse when a pivot vanishes).
template <int D>
double invert(std::array<std::array<double, D>, D> a, std::array<std::array<double, D>, D>& inv) {
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j) inv[std::size_t(i)][std::size_t(j)] = i == j ? 1.0 : 0.0;
  double det = 1.0;
  for (std::size_t c = 0; c < std::size_t(D); ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < std::size_t(D); ++r)
      if (std::abs(a[r][c]) > std::abs(a[piv][c])) piv = r;
    if (a[piv][c] == 0.0) return 0.0;
    if (piv != c) {
      std::swap(a[piv], a[c]);
      std::swap(inv[piv], inv[c]);
      det = -det;
    }
    const double p = a[c][c];
    det *= p;
    for (std::size_t k = 0; k < std::size_t(D); ++k) {
      a[c][k] /= p;
      inv[c][k] /= p;
    }
    for (std::size_t r = 0; r < std::size_t(D); ++r)
      if (r != c) {
        const double f = a[r][c];
        for (std::size_t k = 0; k < std::size_t(D); ++k) {
          a[r][k] -= f * a[c][k];
          inv[r][k] -= f * inv[c][k];
        }
      }
  }
  return det;
}

/// Gradients in space (x, y, z; z = 0 in the x-y frame) of the NEN shape functions, and the
/// quadrature weight times the measure |det J| (sqrt(det J^T J) on a surface), at each point.
template <int NEN>
struct PointGradients {
  std::array<Point3, NEN> grad;
  double weight;
};

/// Element geometry at the points of `rule`: the affine map x(xi) = x_0 + J xi of the element's
/// D + 1 vertices (column j of J is x_{j+1} - x_0), physical gradients grad N = J^{-T} dN/dxi
/// (J (J^T J)^{-1} dN/dxi on a surface). Throws naming `where` and element k when the element
/// has zero measure relative to its longest edge.
template <int D, int NEN, class Shape>
std::vector<PointGradients<NEN>> element_gradients(const char* where, std::size_t k,
                                                   const std::array<Point3, D + 1>& x, Frame frame,
                                                   Shape shape, const QuadratureRule<D>& rule) {
  constexpr std::size_t d = D, nen = NEN;
  const std::size_t sd = frame == Frame::plane_xy ? 2 : 3;  // coordinates used
  std::array<std::array<double, d>, 3> jac{};               // jac[i][j] = dx_i / dxi_j
  for (std::size_t i = 0; i < sd; ++i)
    for (std::size_t j = 0; j < d; ++j) jac[i][j] = x[j + 1][i] - x[0][i];
  double longest = 0;
  for (std::size_t a = 0; a <= d; ++a)
    for (std::size_t b = a + 1; b <= d; ++b) {
      double l2 = 0;
      for (std::size_t i = 0; i < sd; ++i) l2 += (x[a][i] - x[b][i]) * (x[a][i] - x[b][i]);
      longest = std::max(longest, std::sqrt(l2));
    }
  // grad N_a component i = sum_j map[i][j] dN_a / dxi_j
  std::array<std::array<double, d>, 3> map{};
  double measure = 0;
  std::array<std::array<double, d>, d> inv{};
  if (frame == Frame::surface) {
    std::array<std::array<double, d>, d> metric{};  // J^T J
    for (std::size_t p = 0; p < d; ++p)
      for (std::size_t q = 0; q < d; ++q)
        for (std::size_t i = 0; i < 3; ++i) metric[p][q] += jac[i][p] * jac[i][q];
    measure = std::sqrt(std::max(invert<D>(metric, inv), 0.0));
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < d; ++j)
        for (std::size_t p = 0; p < d; ++p) map[i][j] += jac[i][p] * inv[p][j];
  } else {
    std::array<std::array<double, d>, d> square{};
    for (std::size_t i = 0; i < d; ++i) square[i] = jac[i];
    measure = std::abs(invert<D>(square, inv));
    // dxi_j / dx_i = inv[j][i]
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j < d; ++j) map[i][j] = inv[j][i];
  }
  const double eps = std::numeric_limits<double>::epsilon();
  if (!(measure > 64 * eps * std::pow(longest, D)))
    spk::throw_invalid_argument(
        where, "element ", k, " has zero ",
        D == 3 ? "volume" : (frame == Frame::plane_xy ? "area in x-y" : "area"));
  std::vector<PointGradients<NEN>> out(rule.points.size());
  for (std::size_t q = 0; q < rule.points.size(); ++q) {
    const auto s = shape(rule.points[q]);
    out[q].weight = rule.weights[q] * measure;
    for (std::size_t a = 0; a < nen; ++a)
      for (std::size_t i = 0; i < 3; ++i) {
        double g = 0;
        for (std::size_t j = 0; j < d; ++j) g += map[i][j] * s.dn[a][j];
        out[q].grad[a][i] = g;
      }
  }
  return out;
}

/// Collects element matrices as (row, column, value) triplets; finish() sorts them (stably, so
/// duplicates are summed in element order) and builds the CSR matrix.
class TripletAssembly {
 public:
  TripletAssembly(std::size_t n_nodes, int block) : n_nodes_(n_nodes), block_(block) {}

  /// Adds the element matrix ke ((NEN B) x (NEN B), row-major, local dof a B + i) of the
  /// element with nodes el.
  template <std::size_t NEN>
  void add(const std::array<int, NEN>& el, const std::vector<double>& ke) {
    const std::size_t nd = NEN * std::size_t(block_);
    for (std::size_t r = 0; r < nd; ++r)
      for (std::size_t c = 0; c < nd; ++c)
        triplets_.push_back({dof(el[r / std::size_t(block_)], r % std::size_t(block_)),
                             dof(el[c / std::size_t(block_)], c % std::size_t(block_)),
                             ke[r * nd + c]});
  }

  ReferenceCsr finish() {
    std::stable_sort(triplets_.begin(), triplets_.end(), [](const Triplet& a, const Triplet& b) {
      return a.row != b.row ? a.row < b.row : a.col < b.col;
    });
    ReferenceCsr m;
    m.n = std::int64_t(n_nodes_) * block_;
    m.row_map.assign(std::size_t(m.n) + 1, 0);
    for (std::size_t t = 0; t < triplets_.size(); ++t) {
      const Triplet& x = triplets_[t];
      if (t > 0 && x.row == triplets_[t - 1].row && x.col == triplets_[t - 1].col) {
        m.values.back() += x.value;
      } else {
        m.col_idx.push_back(x.col);
        m.values.push_back(x.value);
        ++m.row_map[std::size_t(x.row) + 1];
      }
    }
    for (std::size_t i = 0; i < std::size_t(m.n); ++i) m.row_map[i + 1] += m.row_map[i];
    triplets_.clear();
    return m;
  }

 private:
  struct Triplet {
    std::int64_t row, col;
    double value;
  };
  std::int64_t dof(int node, std::size_t component) const {
    return std::int64_t(node) * block_ + std::int64_t(component);
  }
  std::size_t n_nodes_;
  int block_;
  std::vector<Triplet> triplets_;
};

/// Throws naming `where` and the element when an element refers to a node outside [0, n).
template <std::size_t NEN>
void check_nodes(const char* where, const std::vector<std::array<int, NEN>>& elements,
                 std::size_t n) {
  for (std::size_t k = 0; k < elements.size(); ++k)
    for (int v : elements[k])
      if (v < 0 || std::size_t(v) >= n)
        spk::throw_invalid_argument(where, "element ", k, " refers to node ", v, ", outside [0, ",
                                    n, ")");
}

/// The first D + 1 nodes (the vertices) of an element.
template <int D, std::size_t NEN>
std::array<Point3, D + 1> vertices_of(const std::vector<Point3>& nodes,
                                      const std::array<int, NEN>& el) {
  std::array<Point3, D + 1> x;
  for (std::size_t a = 0; a <= std::size_t(D); ++a) x[a] = nodes[std::size_t(el[a])];
  return x;
}

/// Element Laplacian K_ab = sum_q w_q grad N_a . grad N_b.
template <int NEN>
std::vector<double> laplacian_matrix(const std::vector<PointGradients<NEN>>& pts) {
  std::vector<double> ke(std::size_t(NEN * NEN), 0.0);
  for (const auto& p : pts)
    for (std::size_t a = 0; a < std::size_t(NEN); ++a)
      for (std::size_t b = 0; b < std::size_t(NEN); ++b) {
        double d = 0;
        for (std::size_t i = 0; i < 3; ++i) d += p.grad[a][i] * p.grad[b][i];
        ke[a * NEN + b] += p.weight * d;
      }
  return ke;
}

/// Young's modulus and Poisson's ratio, checked: E > 0 finite, nu in (-1, 0.5).
inline void check_material(const char* where, const spk::ElasticMaterial& m) {
  const double e = m.youngs_modulus, nu = m.poisson_ratio;
  if (!(e > 0 && std::isfinite(e)))
    spk::throw_invalid_argument(where, "Young's modulus ", e, " must be positive and finite");
  if (!(nu > -1.0 && nu < 0.5))
    spk::throw_invalid_argument(where, "Poisson's ratio ", nu, " must lie in (-1, 0.5)");
}

/// The 6 x 6 isotropic elasticity matrix, Voigt order xx, yy, zz, xy, yz, zx, engineering shear
/// strains: lambda + 2 mu and lambda in the normal block, mu on the shear diagonal.
inline std::array<std::array<double, 6>, 6> isotropic_d(const spk::ElasticMaterial& m) {
  const double e = m.youngs_modulus, nu = m.poisson_ratio;
  const double lambda = e * nu / ((1 + nu) * (1 - 2 * nu)), mu = e / (2 * (1 + nu));
  std::array<std::array<double, 6>, 6> d{};
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) d[i][j] = i == j ? lambda + 2 * mu : lambda;
  for (std::size_t i = 3; i < 6; ++i) d[i][i] = mu;
  return d;
}

/// The 3 x 3 plane-stress elasticity matrix, order xx, yy, xy (engineering shear).
inline std::array<std::array<double, 3>, 3> plane_stress_d(const spk::ElasticMaterial& m) {
  const double e = m.youngs_modulus, nu = m.poisson_ratio;
  const double c = e / (1 - nu * nu);
  return {{{c, c * nu, 0}, {c * nu, c, 0}, {0, 0, c * (1 - nu) / 2}}};
}

/// Element stiffness sum_q w_q B_q^T D B_q, B_q the S x (NEN B) strain-displacement matrix at
/// point q (3D: rows xx, yy, zz, xy, yz, zx; 2D: xx, yy, xy; column a B + i is node a's
/// displacement component i).
template <int NEN, int B, int S>
std::vector<double> elasticity_matrix(const std::vector<PointGradients<NEN>>& pts,
                                      const std::array<std::array<double, S>, S>& d) {
  static_assert((B == 3 && S == 6) || (B == 2 && S == 3), "elasticity_matrix: B = 3 or 2");
  constexpr std::size_t nd = std::size_t(NEN * B);
  std::vector<double> ke(nd * nd, 0.0);
  std::vector<std::array<double, S>> bt(nd), dbt(nd);  // columns of B and of D B
  for (const auto& p : pts) {
    for (std::size_t a = 0; a < std::size_t(NEN); ++a) {
      const Point3& g = p.grad[a];
      for (std::size_t i = 0; i < std::size_t(B); ++i) bt[a * B + i].fill(0.0);
      auto& bx = bt[a * B];
      auto& by = bt[a * B + 1];
      if constexpr (B == 3) {
        // strains of the displacements N_a e_x, N_a e_y, N_a e_z
        auto& bz = bt[a * B + 2];
        bx[0] = g[0];
        by[1] = g[1];
        bz[2] = g[2];
        bx[3] = g[1];
        by[3] = g[0];
        by[4] = g[2];
        bz[4] = g[1];
        bx[5] = g[2];
        bz[5] = g[0];
      } else {
        bx[0] = g[0];
        by[1] = g[1];
        bx[2] = g[1];
        by[2] = g[0];
      }
    }
    for (std::size_t c = 0; c < nd; ++c)
      for (std::size_t i = 0; i < std::size_t(S); ++i) {
        double s = 0;
        for (std::size_t j = 0; j < std::size_t(S); ++j) s += d[i][j] * bt[c][j];
        dbt[c][i] = s;
      }
    for (std::size_t r = 0; r < nd; ++r)
      for (std::size_t c = 0; c < nd; ++c) {
        double s = 0;
        for (std::size_t i = 0; i < std::size_t(S); ++i) s += bt[r][i] * dbt[c][i];
        ke[r * nd + c] += p.weight * s;
      }
  }
  return ke;
}

}  // namespace reference_impl

/// Linear (P1) Laplacian of triangles in 3D: K_ab = integral over the triangle of
/// grad N_a . grad N_b, gradients taken in the triangle's plane (so K_ab = -cot(angle opposite
/// the edge ab) / 2 for a != b). B = 1. Throws for bad indices or zero-area triangles.
inline ReferenceCsr reference_p1_triangle_laplacian(const std::vector<Point3>& nodes,
                                                    const std::vector<std::array<int, 3>>& tris) {
  using namespace reference_impl;
  const char* where = "reference_p1_triangle_laplacian";
  check_nodes(where, tris, nodes.size());
  const auto rule = triangle_rule_degree2();
  TripletAssembly out(nodes.size(), 1);
  for (std::size_t k = 0; k < tris.size(); ++k)
    out.add(tris[k],
            laplacian_matrix<3>(element_gradients<2, 3>(where, k, vertices_of<2>(nodes, tris[k]),
                                                        Frame::surface, p1_shape<2>, rule)));
  return out.finish();
}

/// Linear (P1) Laplacian of tetrahedra: K_ab = V grad N_a . grad N_b (by quadrature). B = 1.
/// Either orientation (|det J|). Throws for bad indices or zero-volume tetrahedra.
inline ReferenceCsr reference_p1_tet_laplacian(const std::vector<Point3>& nodes,
                                               const std::vector<std::array<int, 4>>& tets) {
  using namespace reference_impl;
  const char* where = "reference_p1_tet_laplacian";
  check_nodes(where, tets, nodes.size());
  const auto rule = tet_rule_degree2();
  TripletAssembly out(nodes.size(), 1);
  for (std::size_t k = 0; k < tets.size(); ++k)
    out.add(tets[k],
            laplacian_matrix<4>(element_gradients<3, 4>(where, k, vertices_of<3>(nodes, tets[k]),
                                                        Frame::volume, p1_shape<3>, rule)));
  return out.finish();
}

/// Linear-tetrahedron isotropic elasticity: K = integral of B^T D B, D the 6 x 6 isotropic
/// matrix (Voigt xx, yy, zz, xy, yz, zx, engineering shear) with lambda = E nu / ((1 + nu)
/// (1 - 2 nu)), mu = E / (2 (1 + nu)). B = 3. |volume| for inverted tetrahedra.
inline ReferenceCsr reference_p1_tet_elasticity(const std::vector<Point3>& nodes,
                                                const std::vector<std::array<int, 4>>& tets,
                                                const spk::ElasticMaterial& material) {
  using namespace reference_impl;
  const char* where = "reference_p1_tet_elasticity";
  check_material(where, material);
  check_nodes(where, tets, nodes.size());
  const auto d = isotropic_d(material);
  const auto rule = tet_rule_degree2();
  TripletAssembly out(nodes.size(), 3);
  for (std::size_t k = 0; k < tets.size(); ++k)
    out.add(tets[k], elasticity_matrix<4, 3, 6>(
                         element_gradients<3, 4>(where, k, vertices_of<3>(nodes, tets[k]),
                                                 Frame::volume, p1_shape<3>, rule),
                         d));
  return out.finish();
}

/// Quadratic (six-node) triangle elasticity in plane stress in the x-y plane (z ignored):
/// D = E / (1 - nu^2) [[1, nu, 0], [nu, 1, 0], [0, 0, (1 - nu) / 2]], straight-sided triangles
/// (the geometry is the affine map of the three vertices; the midpoint nodes' coordinates are
/// not used), the degree-2 3-point rule (exact). Element nodes as in spk::QuadraticTriangleMesh.
/// B = 2. |area| for clockwise triangles; throws for zero area in x-y.
inline ReferenceCsr reference_p2_triangle_elasticity(
    const std::vector<Point3>& nodes, const std::vector<std::array<int, 6>>& elements,
    const spk::ElasticMaterial& material) {
  using namespace reference_impl;
  const char* where = "reference_p2_triangle_elasticity";
  check_material(where, material);
  check_nodes(where, elements, nodes.size());
  const auto d = plane_stress_d(material);
  const auto rule = triangle_rule_degree2();
  TripletAssembly out(nodes.size(), 2);
  for (std::size_t k = 0; k < elements.size(); ++k)
    out.add(elements[k], elasticity_matrix<6, 2, 3>(
                             element_gradients<2, 6>(where, k, vertices_of<2>(nodes, elements[k]),
                                                     Frame::plane_xy, p2_triangle_shape, rule),
                             d));
  return out.finish();
}

/// Quadratic (ten-node) tetrahedron isotropic elasticity, D as in reference_p1_tet_elasticity,
/// straight-sided (affine map of the four vertices), the degree-2 4-point rule (exact). Element
/// nodes as in spk::QuadraticTetMesh. B = 3. |volume| for inverted tetrahedra.
inline ReferenceCsr reference_p2_tet_elasticity(const std::vector<Point3>& nodes,
                                                const std::vector<std::array<int, 10>>& elements,
                                                const spk::ElasticMaterial& material) {
  using namespace reference_impl;
  const char* where = "reference_p2_tet_elasticity";
  check_material(where, material);
  check_nodes(where, elements, nodes.size());
  const auto d = isotropic_d(material);
  const auto rule = tet_rule_degree2();
  TripletAssembly out(nodes.size(), 3);
  for (std::size_t k = 0; k < elements.size(); ++k)
    out.add(elements[k], elasticity_matrix<10, 3, 6>(
                             element_gradients<3, 10>(where, k, vertices_of<3>(nodes, elements[k]),
                                                      Frame::volume, p2_tet_shape, rule),
                             d));
  return out.finish();
}

/// The six rigid-body motions of the nodes as flat vectors of 3 n (dof = node * 3 + component):
/// translations along x, y, z, then infinitesimal rotations w x (p - c) about the x, y, z axes
/// through the centroid c of the nodes.
inline std::vector<std::vector<double>> rigid_body_modes_3d(const std::vector<Point3>& nodes) {
  Point3 c{0, 0, 0};
  for (const auto& p : nodes)
    for (std::size_t i = 0; i < 3; ++i) c[i] += p[i] / double(nodes.size());
  std::vector<std::vector<double>> modes(6, std::vector<double>(3 * nodes.size(), 0.0));
  for (std::size_t a = 0; a < nodes.size(); ++a) {
    const Point3 x{nodes[a][0] - c[0], nodes[a][1] - c[1], nodes[a][2] - c[2]};
    for (std::size_t i = 0; i < 3; ++i) modes[i][3 * a + i] = 1.0;
    // w = e_x: (0, -z, y); w = e_y: (z, 0, -x); w = e_z: (-y, x, 0)
    modes[3][3 * a + 1] = -x[2];
    modes[3][3 * a + 2] = x[1];
    modes[4][3 * a + 0] = x[2];
    modes[4][3 * a + 2] = -x[0];
    modes[5][3 * a + 0] = -x[1];
    modes[5][3 * a + 1] = x[0];
  }
  return modes;
}

/// The three rigid-body motions in the x-y plane as flat vectors of 2 n: translations along x
/// and y, then the rotation (-(y - c_y), x - c_x) about the centroid c of the nodes.
inline std::vector<std::vector<double>> rigid_body_modes_2d(const std::vector<Point3>& nodes) {
  double cx = 0, cy = 0;
  for (const auto& p : nodes) {
    cx += p[0] / double(nodes.size());
    cy += p[1] / double(nodes.size());
  }
  std::vector<std::vector<double>> modes(3, std::vector<double>(2 * nodes.size(), 0.0));
  for (std::size_t a = 0; a < nodes.size(); ++a) {
    modes[0][2 * a] = 1.0;
    modes[1][2 * a + 1] = 1.0;
    modes[2][2 * a] = -(nodes[a][1] - cy);
    modes[2][2 * a + 1] = nodes[a][0] - cx;
  }
  return modes;
}

/// y = A x, sequentially in row order. Throws when x has not n entries.
inline std::vector<double> reference_matvec(const ReferenceCsr& a, const std::vector<double>& x) {
  if (std::int64_t(x.size()) != a.n)
    spk::throw_invalid_argument("reference_matvec", "x has ", x.size(), " entries, the matrix ",
                                a.n, " columns");
  std::vector<double> y(std::size_t(a.n), 0.0);
  for (std::size_t i = 0; i < std::size_t(a.n); ++i) {
    double s = 0;
    for (std::int64_t k = a.row_map[i]; k < a.row_map[i + 1]; ++k)
      s += a.values[std::size_t(k)] * x[std::size_t(a.col_idx[std::size_t(k)])];
    y[i] = s;
  }
  return y;
}

}  // namespace spk_test
