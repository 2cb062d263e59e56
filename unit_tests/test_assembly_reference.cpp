// Tests of the host reference assembly (assembly_reference.hpp) and of spk/mesh/quadratic_mesh.hpp,
// so that the reference can be trusted as the source of truth of the device assembly:
//  - quadratic_mesh: hand-checked small meshes (node order, midpoints, edge numbering), the shared
//    meshes (V + E nodes, every midpoint where it belongs, shared edges sharing their node),
//    errors;
//  - the reference element: shape functions (Kronecker property, partition of unity, derivatives
//    against finite differences), quadrature rules exact for degree 2;
//  - hand-computed element matrices of all five element types;
//  - on hand-made meshes and the shared octopus mesh: the pattern (node pairs sharing an element,
//    explicit zeros kept), symmetry, zero row sums of the Laplacians and the cotangent formula,
//    rigid-body modes in the null space of the elasticity matrices, positive energy of random
//    vectors, the energy of linear fields on single elements (both orientations);
//  - patch tests: linear fields give zero interior residuals, quadratic fields on P2 meshes give
//    exactly the consistent load of their constant body force -div sigma (Navier's equations);
//  - P1 in P2: P^T K2 P = K1 for the prolongation P of linear into quadratic tetrahedra;
//  - P1 tetrahedral elasticity equal to spk::elasticity_stiffness.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <spk/compound/elasticity.hpp>
#include <spk/io/mesh_io.hpp>
#include <spk/mesh/mesh.hpp>
#include <spk/mesh/quadratic_mesh.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "assembly_reference.hpp"
#include "test_common.hpp"

namespace {

using spk_test::Point3;
using spk_test::ReferenceCsr;
constexpr double eps = std::numeric_limits<double>::epsilon();

std::string mesh_path(const std::string& name) { return spk_test::data_dir() + "/meshes/" + name; }

double max_abs(const ReferenceCsr& k) {
  double m = 0;
  for (double v : k.values) m = std::max(m, std::abs(v));
  return m;
}

/// max_i sum_j |K_ij|.
double inf_norm(const ReferenceCsr& k) {
  double m = 0;
  for (std::int64_t i = 0; i < k.n; ++i) {
    double s = 0;
    for (std::int64_t p = k.row_map[std::size_t(i)]; p < k.row_map[std::size_t(i) + 1]; ++p)
      s += std::abs(k.values[std::size_t(p)]);
    m = std::max(m, s);
  }
  return m;
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

/// max |K_ij - K_ji| / max |K|; infinite when the pattern is not symmetric.
double asymmetry(const ReferenceCsr& k) {
  double worst = 0;
  for (std::int64_t i = 0; i < k.n; ++i)
    for (std::int64_t p = k.row_map[std::size_t(i)]; p < k.row_map[std::size_t(i) + 1]; ++p) {
      const double d = std::abs(k.values[std::size_t(p)] - k.at(k.col_idx[std::size_t(p)], i));
      worst = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(worst, d);
    }
  return worst / max_abs(k);
}

/// |K r| / (|K| |r|) in the max norms.
double null_residual(const ReferenceCsr& k, const std::vector<double>& r) {
  return max_abs(spk_test::reference_matvec(k, r)) / (inf_norm(k) * max_abs(r));
}

/// x^T K x relative to its bound sum_i |x_i| sum_j |K_ij| |x_j|.
double energy_ratio(const ReferenceCsr& k, const std::vector<double>& x) {
  const auto y = spk_test::reference_matvec(k, x);
  double e = 0, bound = 0;
  for (std::int64_t i = 0; i < k.n; ++i) {
    e += x[std::size_t(i)] * y[std::size_t(i)];
    double s = 0;
    for (std::int64_t p = k.row_map[std::size_t(i)]; p < k.row_map[std::size_t(i) + 1]; ++p)
      s += std::abs(k.values[std::size_t(p)] * x[std::size_t(k.col_idx[std::size_t(p)])]);
    bound += std::abs(x[std::size_t(i)]) * s;
  }
  return e / bound;
}

/// Checks the pattern: n_nodes * block rows, columns strictly increasing, and the entries exactly
/// the components of the node pairs sharing an element.
template <std::size_t NEN>
void check_pattern(const ReferenceCsr& k, std::size_t n_nodes,
                   const std::vector<std::array<int, NEN>>& elements, int block) {
  std::set<std::pair<int, int>> pairs;
  for (const auto& el : elements)
    for (int a : el)
      for (int b : el) pairs.insert({a, b});
  CHECK(k.n == std::int64_t(n_nodes) * block);
  REQUIRE(k.row_map.size() == std::size_t(k.n) + 1);
  CHECK(k.nnz() == std::int64_t(pairs.size()) * block * block);
  CHECK(k.values.size() == k.col_idx.size());
  std::size_t unsorted = 0, foreign = 0;
  for (std::int64_t i = 0; i < k.n; ++i)
    for (std::int64_t p = k.row_map[std::size_t(i)]; p < k.row_map[std::size_t(i) + 1]; ++p) {
      const std::int64_t j = k.col_idx[std::size_t(p)];
      if (p + 1 < k.row_map[std::size_t(i) + 1] && !(j < k.col_idx[std::size_t(p) + 1])) ++unsorted;
      if (!pairs.count({int(i / block), int(j / block)})) ++foreign;
    }
  CHECK(unsorted == 0);
  CHECK(foreign == 0);
}

/// The n x n unit square [0, 1]^2 in squares cut along alternating diagonals, counter-clockwise
/// triangles, interior vertices moved randomly by up to 0.15 h (straight edges, all positive).
spk::TriangleMesh plate(int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> jitter(-0.15 / n, 0.15 / n);
  spk::TriangleMesh m;
  for (int j = 0; j <= n; ++j)
    for (int i = 0; i <= n; ++i) {
      const bool inner = i > 0 && i < n && j > 0 && j < n;
      m.vertices.push_back({double(i) / n + (inner ? jitter(rng) : 0.0),
                            double(j) / n + (inner ? jitter(rng) : 0.0), 0.0});
    }
  const auto v = [n](int i, int j) { return j * (n + 1) + i; };
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      if ((i + j) % 2 == 0) {
        m.triangles.push_back({v(i, j), v(i + 1, j), v(i + 1, j + 1)});
        m.triangles.push_back({v(i, j), v(i + 1, j + 1), v(i, j + 1)});
      } else {
        m.triangles.push_back({v(i, j), v(i + 1, j), v(i, j + 1)});
        m.triangles.push_back({v(i + 1, j), v(i + 1, j + 1), v(i, j + 1)});
      }
    }
  return m;
}

/// The unit cube in n^3 cubes of six tetrahedra each (Kuhn: one per path along the edges from the
/// low to the high corner; conforming, both orientations occur), interior vertices moved randomly
/// by up to 0.1 h.
spk::TetMesh cube(int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> jitter(-0.1 / n, 0.1 / n);
  spk::TetMesh m;
  for (int k = 0; k <= n; ++k)
    for (int j = 0; j <= n; ++j)
      for (int i = 0; i <= n; ++i) {
        const bool inner = i > 0 && i < n && j > 0 && j < n && k > 0 && k < n;
        m.vertices.push_back({double(i) / n + (inner ? jitter(rng) : 0.0),
                              double(j) / n + (inner ? jitter(rng) : 0.0),
                              double(k) / n + (inner ? jitter(rng) : 0.0)});
      }
  const auto v = [n](std::array<int, 3> c) { return (c[2] * (n + 1) + c[1]) * (n + 1) + c[0]; };
  std::array<int, 3> perm{0, 1, 2};
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        std::sort(perm.begin(), perm.end());
        do {
          std::array<int, 3> c{i, j, k};
          std::array<int, 4> t;
          t[0] = v(c);
          for (int s = 0; s < 3; ++s) {
            ++c[std::size_t(perm[std::size_t(s)])];
            t[std::size_t(s) + 1] = v(c);
          }
          m.tetrahedra.push_back(t);
        } while (std::next_permutation(perm.begin(), perm.end()));
      }
  return m;
}

/// Whether p lies on the boundary of the unit square (dims = 2) or cube (dims = 3).
bool on_unit_boundary(const Point3& p, int dims) {
  for (int d = 0; d < dims; ++d)
    if (std::abs(p[std::size_t(d)]) < 1e-12 || std::abs(p[std::size_t(d)] - 1) < 1e-12) return true;
  return false;
}

/// Random vector of n entries in [-1, 1].
std::vector<double> random_vector(std::size_t n, std::uint64_t seed) {
  return spk_test::random_vector<double>(n, seed);
}

/// A quadratic displacement field u_i(x) = sum_j a_ij x_j + 1/2 sum_jk h_ijk x_j x_k (h
/// symmetric in j, k) in `dims` dimensions, and its Navier body force -div sigma (constant):
/// div sigma = mu lap u + (lambda + mu) grad div u, lambda the plane-stress lambda* = E nu /
/// (1 - nu^2) in 2D.
struct QuadraticField {
  int dims;
  double a[3][3] = {}, h[3][3][3] = {};

  QuadraticField(int dims_, std::uint64_t seed) : dims(dims_) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    for (int i = 0; i < dims; ++i)
      for (int j = 0; j < dims; ++j) {
        a[i][j] = u(rng);
        for (int k = j; k < dims; ++k) h[i][j][k] = h[i][k][j] = u(rng);
      }
  }
  double value(int i, const Point3& x) const {
    double s = 0;
    for (int j = 0; j < dims; ++j) {
      s += a[i][j] * x[std::size_t(j)];
      for (int k = 0; k < dims; ++k) s += 0.5 * h[i][j][k] * x[std::size_t(j)] * x[std::size_t(k)];
    }
    return s;
  }
  std::array<double, 3> body_force(const spk::ElasticMaterial& m) const {
    const double e = m.youngs_modulus, nu = m.poisson_ratio;
    const double mu = e / (2 * (1 + nu));
    const double lambda = dims == 3 ? e * nu / ((1 + nu) * (1 - 2 * nu)) : e * nu / (1 - nu * nu);
    std::array<double, 3> b{0, 0, 0};
    for (int k = 0; k < dims; ++k) {
      double lap = 0, grad_div = 0;
      for (int j = 0; j < dims; ++j) lap += h[k][j][j];
      for (int i = 0; i < dims; ++i) grad_div += h[i][i][k];
      b[std::size_t(k)] = -(mu * lap + (lambda + mu) * grad_div);
    }
    return b;
  }
};

/// A scalar CSR at dof level from spk's 3 x 3 block matrix, rows mapped back from vertex_rows
/// numbering to vertex numbering (n_vertices block rows, unreferenced ones empty).
template <class Matrix>
ReferenceCsr expand_blocks(const Matrix& a, const std::vector<int>& rows) {
  auto rm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.row_map());
  auto ci = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.col_idx());
  auto va = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.values());
  std::vector<int> vertex_of;
  for (std::size_t v = 0; v < rows.size(); ++v)
    if (rows[v] >= 0) vertex_of.push_back(int(v));
  REQUIRE(std::size_t(a.nrows()) == vertex_of.size());
  std::map<std::pair<std::int64_t, std::int64_t>, double> entries;
  for (std::size_t r = 0; r < vertex_of.size(); ++r)
    for (auto p = rm(r); p < rm(r + 1); ++p) {
      const std::int64_t va_ = vertex_of[r], vb = vertex_of[std::size_t(ci(p))];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) entries[{3 * va_ + i, 3 * vb + j}] = va(p).a[3 * i + j];
    }
  ReferenceCsr k;
  k.n = 3 * std::int64_t(rows.size());
  k.row_map.assign(std::size_t(k.n) + 1, 0);
  for (const auto& e : entries) {
    ++k.row_map[std::size_t(e.first.first) + 1];
    k.col_idx.push_back(e.first.second);
    k.values.push_back(e.second);
  }
  for (std::size_t i = 0; i < std::size_t(k.n); ++i) k.row_map[i + 1] += k.row_map[i];
  return k;
}

template <class F>
void check_throws(F&& f, const std::string& part) {
  bool thrown = false;
  try {
    f();
  } catch (const std::invalid_argument& e) {
    thrown = true;
    INFO("message: " << e.what());
    CHECK(std::string(e.what()).find(part) != std::string::npos);
  }
  CHECK(thrown);
}

/// Midpoint of p and q.
Point3 mid(const Point3& p, const Point3& q) {
  return {0.5 * (p[0] + q[0]), 0.5 * (p[1] + q[1]), 0.5 * (p[2] + q[2])};
}

/// Checks a quadratic mesh against its linear mesh: V + E nodes with E counted here, the
/// vertices unchanged, each element's vertices and midpoints (local pairs `pairs`) in place,
/// one node per distinct edge, shared by all elements on it, numbered in (lower, upper) order.
template <class Quad, std::size_t K, std::size_t NE>
void check_quadratic(const Quad& q, const std::vector<Point3>& vertices,
                     const std::vector<std::array<int, K>>& elements,
                     const std::array<std::array<int, 2>, NE>& pairs) {
  std::map<std::pair<int, int>, int> node_of_edge;
  for (const auto& el : elements)
    for (const auto& p : pairs)
      node_of_edge[{std::min(el[std::size_t(p[0])], el[std::size_t(p[1])]),
                    std::max(el[std::size_t(p[0])], el[std::size_t(p[1])])}] = -1;
  REQUIRE(q.nodes.size() == vertices.size() + node_of_edge.size());
  REQUIRE(q.elements.size() == elements.size());
  std::size_t moved = 0, misplaced = 0, inconsistent = 0;
  for (std::size_t v = 0; v < vertices.size(); ++v) moved += q.nodes[v] == vertices[v] ? 0 : 1;
  for (std::size_t k = 0; k < elements.size(); ++k) {
    for (std::size_t a = 0; a < K; ++a) misplaced += q.elements[k][a] == elements[k][a] ? 0 : 1;
    for (std::size_t e = 0; e < NE; ++e) {
      const int u = elements[k][std::size_t(pairs[e][0])],
                w = elements[k][std::size_t(pairs[e][1])];
      const int node = q.elements[k][K + e];
      REQUIRE(node >= int(vertices.size()));
      REQUIRE(std::size_t(node) < q.nodes.size());
      misplaced +=
          q.nodes[std::size_t(node)] == mid(vertices[std::size_t(u)], vertices[std::size_t(w)]) ? 0
                                                                                                : 1;
      int& seen = node_of_edge[{std::min(u, w), std::max(u, w)}];
      if (seen < 0) seen = node;
      inconsistent += seen == node ? 0 : 1;
    }
  }
  CHECK(moved == 0);
  CHECK(misplaced == 0);
  CHECK(inconsistent == 0);
  // edge order: the map iterates (lower, upper) lexicographically
  int expect = int(vertices.size());
  std::size_t out_of_order = 0;
  for (const auto& e : node_of_edge) out_of_order += e.second == expect++ ? 0 : 1;
  CHECK(out_of_order == 0);
}

constexpr std::array<std::array<int, 2>, 3> tri_pairs{{{0, 1}, {1, 2}, {2, 0}}};
constexpr std::array<std::array<int, 2>, 6> tet_pairs{
    {{0, 1}, {1, 2}, {0, 2}, {0, 3}, {1, 3}, {2, 3}}};

}  // namespace

// --- quadratic_mesh ---------------------------------------------------------------------------

TEST_CASE("quadratic_mesh: two triangles and two tetrahedra by hand") {
  spk::TriangleMesh t;
  t.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {5, 5, 5}};  // vertex 4 unreferenced
  t.triangles = {{0, 1, 2}, {3, 2, 1}};
  const auto qt = spk::quadratic_mesh(t);
  // edges in order (0,1) (0,2) (1,2) (1,3) (2,3): nodes 5 .. 9
  REQUIRE(qt.nodes.size() == 10);
  CHECK(qt.elements[0] == std::array<int, 6>{0, 1, 2, 5, 7, 6});
  CHECK(qt.elements[1] == std::array<int, 6>{3, 2, 1, 9, 7, 8});
  CHECK(qt.nodes[4] == Point3{5, 5, 5});
  CHECK(qt.nodes[7] == Point3{0.5, 0.5, 0});
  CHECK(qt.nodes[9] == Point3{0.5, 1, 0});
  check_quadratic(qt, t.vertices, t.triangles, tri_pairs);

  spk::TetMesh m;
  m.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}};
  m.tetrahedra = {{0, 1, 2, 3}, {4, 3, 2, 1}};
  const auto qm = spk::quadratic_mesh(m);
  // edges (0,1) (0,2) (0,3) (1,2) (1,3) (1,4) (2,3) (2,4) (3,4): nodes 5 .. 13
  REQUIRE(qm.nodes.size() == 14);
  CHECK(qm.elements[0] == std::array<int, 10>{0, 1, 2, 3, 5, 8, 6, 7, 9, 11});
  CHECK(qm.elements[1] == std::array<int, 10>{4, 3, 2, 1, 13, 11, 12, 10, 9, 8});
  CHECK(qm.nodes[10] == Point3{1, 0.5, 0.5});
  check_quadratic(qm, m.vertices, m.tetrahedra, tet_pairs);
}

TEST_CASE("quadratic_mesh: shared meshes and generated ones") {
  const auto tri = spk::read_triangle_mesh(mesh_path("octopus-low.mesh"));
  check_quadratic(spk::quadratic_mesh(tri), tri.vertices, tri.triangles, tri_pairs);
  const auto tet = spk::read_tet_mesh(mesh_path("octopus-low.mesh"));
  check_quadratic(spk::quadratic_mesh(tet), tet.vertices, tet.tetrahedra, tet_pairs);
  const auto p = plate(3, 1);
  check_quadratic(spk::quadratic_mesh(p), p.vertices, p.triangles, tri_pairs);
  const auto c = cube(2, 1);
  check_quadratic(spk::quadratic_mesh(c), c.vertices, c.tetrahedra, tet_pairs);
  CHECK(spk::quadratic_mesh(spk::TetMesh{}).nodes.empty());
}

TEST_CASE("quadratic_mesh: errors name the element") {
  spk::TriangleMesh t;
  t.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  t.triangles = {{0, 1, 2}, {0, 1, 7}};
  check_throws([&] { spk::quadratic_mesh(t); }, "triangle 1 refers to vertex 7");
  t.triangles = {{0, 1, 2}, {2, 1, 2}};
  check_throws([&] { spk::quadratic_mesh(t); }, "triangle 1 repeats vertex 2");
  spk::TetMesh m;
  m.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  m.tetrahedra = {{0, 1, 2, -1}};
  check_throws([&] { spk::quadratic_mesh(m); }, "tetrahedron 0 refers to vertex -1");
  m.tetrahedra = {{0, 1, 2, 3}, {0, 1, 2, 3}, {0, 3, 2, 3}};
  check_throws([&] { spk::quadratic_mesh(m); }, "tetrahedron 2 repeats vertex 3");
}

// --- the reference element --------------------------------------------------------------------

TEST_CASE("reference: shape functions and quadrature rules") {
  // nodes of the reference elements in the local order
  const std::vector<std::array<double, 2>> tri_nodes{{0, 0},   {1, 0},     {0, 1},
                                                     {0.5, 0}, {0.5, 0.5}, {0, 0.5}};
  const std::vector<std::array<double, 3>> tet_nodes{
      {0, 0, 0},     {1, 0, 0},   {0, 1, 0},   {0, 0, 1},     {0.5, 0, 0},
      {0.5, 0.5, 0}, {0, 0.5, 0}, {0, 0, 0.5}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
  double kronecker = 0, unity = 0, fd = 0;
  for (std::size_t b = 0; b < 6; ++b) {
    const auto s = spk_test::p2_triangle_shape(tri_nodes[b]);
    for (std::size_t a = 0; a < 6; ++a)
      kronecker = std::max(kronecker, std::abs(s.n[a] - (a == b ? 1.0 : 0.0)));
  }
  for (std::size_t b = 0; b < 10; ++b) {
    const auto s = spk_test::p2_tet_shape(tet_nodes[b]);
    for (std::size_t a = 0; a < 10; ++a)
      kronecker = std::max(kronecker, std::abs(s.n[a] - (a == b ? 1.0 : 0.0)));
  }
  // partition of unity and central differences (exact for quadratics up to rounding)
  const double h = 1e-3;
  const std::array<double, 3> x{0.21, 0.17, 0.33};
  {
    const auto s = spk_test::p2_tet_shape(x);
    double sum = 0;
    for (std::size_t a = 0; a < 10; ++a) {
      sum += s.n[a];
      for (std::size_t j = 0; j < 3; ++j) {
        auto xp = x, xm = x;
        xp[j] += h;
        xm[j] -= h;
        const double d =
            (spk_test::p2_tet_shape(xp).n[a] - spk_test::p2_tet_shape(xm).n[a]) / (2 * h);
        fd = std::max(fd, std::abs(d - s.dn[a][j]));
      }
    }
    unity = std::max(unity, std::abs(sum - 1));
    const auto p1 = spk_test::p1_shape<3>(x);
    CHECK(std::abs(p1.n[0] + p1.n[1] + p1.n[2] + p1.n[3] - 1) <= 4 * eps);
  }
  {
    const std::array<double, 2> y{0.3, 0.45};
    const auto s = spk_test::p2_triangle_shape(y);
    double sum = 0;
    for (std::size_t a = 0; a < 6; ++a) {
      sum += s.n[a];
      for (std::size_t j = 0; j < 2; ++j) {
        auto yp = y, ym = y;
        yp[j] += h;
        ym[j] -= h;
        const double d =
            (spk_test::p2_triangle_shape(yp).n[a] - spk_test::p2_triangle_shape(ym).n[a]) / (2 * h);
        fd = std::max(fd, std::abs(d - s.dn[a][j]));
      }
    }
    unity = std::max(unity, std::abs(sum - 1));
  }
  CHECK(kronecker <= 4 * eps);
  CHECK(unity <= 8 * eps);
  CHECK(fd <= 1e-10);

  // integral of r^i s^j (t^k) over the reference simplex: i! j! (k!) / (i + j (+ k) + 2 (3))!
  const auto fact = [](int n) {
    double f = 1;
    for (int i = 2; i <= n; ++i) f *= i;
    return f;
  };
  const auto tr = spk_test::triangle_rule_degree2();
  const auto te = spk_test::tet_rule_degree2();
  double worst = 0;
  for (int i = 0; i <= 2; ++i)
    for (int j = 0; i + j <= 2; ++j) {
      double q = 0;
      for (std::size_t p = 0; p < tr.points.size(); ++p)
        q += tr.weights[p] * std::pow(tr.points[p][0], i) * std::pow(tr.points[p][1], j);
      worst = std::max(worst, std::abs(q - fact(i) * fact(j) / fact(i + j + 2)));
      for (int k = 0; i + j + k <= 2; ++k) {
        double qt = 0;
        for (std::size_t p = 0; p < te.points.size(); ++p)
          qt += te.weights[p] * std::pow(te.points[p][0], i) * std::pow(te.points[p][1], j) *
                std::pow(te.points[p][2], k);
        worst = std::max(worst, std::abs(qt - fact(i) * fact(j) * fact(k) / fact(i + j + k + 3)));
      }
    }
  CHECK(worst <= 8 * eps);
}

// --- hand-checked elements ----------------------------------------------------------------------

TEST_CASE("reference: P1 triangle Laplacian by hand, in 3D, and the cotangent formula") {
  const double want[3][3] = {{1, -0.5, -0.5}, {-0.5, 0.5, 0}, {-0.5, 0, 0.5}};
  // the right isoceles triangle, then the same triangle scaled by 3, rotated and moved in 3D
  // (the 2D Laplacian does not depend on scale)
  const double c = std::cos(0.7), s = std::sin(0.7);
  const auto place = [&](double x, double y) {
    // rotate about the x axis by 0.7, then about z by 0.7, scale, shift
    const Point3 p{3 * x, 3 * y * c, 3 * y * s};
    return Point3{c * p[0] - s * p[1] + 1, s * p[0] + c * p[1] - 2, p[2] + 0.5};
  };
  for (int placed = 0; placed < 2; ++placed) {
    INFO("placed in 3D " << placed);
    const std::vector<Point3> nodes =
        placed ? std::vector<Point3>{place(0, 0), place(1, 0), place(0, 1)}
               : std::vector<Point3>{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    const auto k = spk_test::reference_p1_triangle_laplacian(nodes, {{0, 1, 2}});
    check_pattern(k, 3, std::vector<std::array<int, 3>>{{0, 1, 2}}, 1);
    double worst = 0;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) worst = std::max(worst, std::abs(k.at(a, b) - want[a][b]));
    CHECK(worst <= 16 * eps);
    CHECK(k.find(1, 2) >= 0);  // the explicit zero is stored
  }
  // a general triangle in 3D: K_ab = -cot(angle at the third vertex) / 2, from the angles
  const std::vector<Point3> p{{0.1, 0.2, 0.3}, {1.3, -0.2, 0.9}, {0.4, 1.1, -0.5}};
  const auto k = spk_test::reference_p1_triangle_laplacian(p, {{0, 1, 2}});
  double worst = 0;
  for (int a = 0; a < 3; ++a) {
    const int b = (a + 1) % 3, o = (a + 2) % 3;
    const auto u = spk::impl::sub3(p[std::size_t(a)], p[std::size_t(o)]);
    const auto v = spk::impl::sub3(p[std::size_t(b)], p[std::size_t(o)]);
    const double angle =
        std::acos(spk::impl::dot3(u, v) / std::sqrt(spk::impl::dot3(u, u) * spk::impl::dot3(v, v)));
    worst = std::max(worst, std::abs(k.at(a, b) + 0.5 / std::tan(angle)));
    worst = std::max(worst, std::abs(k.at(b, a) + 0.5 / std::tan(angle)));
  }
  CHECK(worst <= 64 * eps * max_abs(k));
}

TEST_CASE("reference: P1 tetrahedron Laplacian by hand, both orientations") {
  const std::vector<Point3> nodes{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  // V = 1/6, gradients (-1, -1, -1), e_x, e_y, e_z: K_00 = 3/6, K_0k = -1/6, K_kk = 1/6, else 0
  for (const auto& tet : {std::array<int, 4>{0, 1, 2, 3}, std::array<int, 4>{0, 2, 1, 3}}) {
    const auto k = spk_test::reference_p1_tet_laplacian(nodes, {tet});
    check_pattern(k, 4, std::vector<std::array<int, 4>>{tet}, 1);
    double worst = 0;
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) {
        const double want = a == 0 && b == 0       ? 0.5
                            : (a == 0) != (b == 0) ? -1.0 / 6
                            : a == b               ? 1.0 / 6
                                                   : 0.0;
        worst = std::max(worst, std::abs(k.at(a, b) - want));
      }
    CHECK(worst <= 16 * eps);
  }
}

TEST_CASE("reference: P1 tetrahedron elasticity by hand") {
  // E = 2.6, nu = 0.3: lambda = 1.5, mu = 1; unit right tetrahedron, V = 1/6.
  const std::vector<Point3> nodes{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  const auto k = spk_test::reference_p1_tet_elasticity(nodes, {{0, 1, 2, 3}}, {2.6, 0.3});
  check_pattern(k, 4, std::vector<std::array<int, 4>>{{0, 1, 2, 3}}, 3);
  struct Entry {
    int r, c;
    double v;
  };
  // dof = 3 node + component. B columns: node 1 u_x -> eps_xx, node 1 u_y -> gamma_xy, node 2
  // u_x -> gamma_xy, node 2 u_y -> eps_yy; node 0's gradient is (-1, -1, -1).
  const Entry entries[] = {
      {3, 3, 3.5 / 6},    // (lambda + 2 mu) V
      {4, 4, 1.0 / 6},    // mu V
      {3, 6, 0.0},        // eps_xx against gamma_xy
      {3, 7, 1.5 / 6},    // lambda V
      {4, 6, 1.0 / 6},    // mu V
      {0, 0, 5.5 / 6},    // (lambda + 2 mu + 2 mu) V
      {0, 1, 2.5 / 6},    // (lambda + mu) V
      {0, 3, -3.5 / 6},   // -(lambda + 2 mu) V
      {5, 11, 0.0},       // node 1 u_z (gamma_zx) against node 3 u_z (eps_zz)
      {11, 11, 3.5 / 6},  // node 3 u_z: (lambda + 2 mu) V
  };
  for (const auto& e : entries) {
    INFO("entry (" << e.r << ", " << e.c << ")");
    CHECK(std::abs(k.at(e.r, e.c) - e.v) <= 16 * eps);
  }
}

TEST_CASE("reference: P2 elements by hand (nu = 0, E = 1, unit right simplices)") {
  // Triangle, A = 1/2, D = diag(1, 1, 1/2): grad N_0 = (4 L0 - 1)(-1, -1), int (4 L0 - 1)^2 = A;
  // N_3 = 4 L0 L1: grad = 4 (L0 - L1, -L1), int 16 (L0 - L1)^2 = int 16 L1^2 = 8 A / 3.
  {
    const std::vector<Point3> nodes{{0, 0, 0},   {1, 0, 0},     {0, 1, 0},
                                    {0.5, 0, 0}, {0.5, 0.5, 0}, {0, 0.5, 0}};
    // counter-clockwise, then the same triangle clockwise
    for (const auto& el :
         {std::array<int, 6>{0, 1, 2, 3, 4, 5}, std::array<int, 6>{0, 2, 1, 5, 4, 3}}) {
      const auto k = spk_test::reference_p2_triangle_elasticity(nodes, {el}, {1.0, 0.0});
      check_pattern(k, 6, std::vector<std::array<int, 6>>{el}, 2);
      CHECK(std::abs(k.at(0, 0) - 0.75) <= 16 * eps);  // A (1 + 1/2)
      CHECK(std::abs(k.at(0, 1) - 0.25) <= 16 * eps);  // A / 2
      CHECK(std::abs(k.at(6, 6) - 2.0) <= 16 * eps);   // 4/3 + 4/3 / 2
      CHECK(std::abs(k.at(7, 7) - 2.0) <= 16 * eps);
    }
  }
  // Tetrahedron, V = 1/6, D = diag(1, 1, 1, 1/2, 1/2, 1/2): int (4 L0 - 1)^2 = 3 V / 5;
  // N_4 = 4 L0 L1: grad = 4 (L0 - L1, -L1, -L1), each component squared integrates to 16 V / 10.
  {
    std::vector<Point3> nodes{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (const auto& e : tet_pairs)
      nodes.push_back(mid(nodes[std::size_t(e[0])], nodes[std::size_t(e[1])]));
    const std::array<int, 10> el{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    const auto k = spk_test::reference_p2_tet_elasticity(nodes, {el}, {1.0, 0.0});
    check_pattern(k, 10, std::vector<std::array<int, 10>>{el}, 3);
    CHECK(std::abs(k.at(0, 0) - 0.2) <= 16 * eps);         // 3V/5 (1 + 1/2 + 1/2)
    CHECK(std::abs(k.at(0, 1) - 0.05) <= 16 * eps);        // 3V/5 / 2
    CHECK(std::abs(k.at(12, 12) - 8.0 / 15) <= 16 * eps);  // 16V/10 (1 + 1/2 + 1/2)
  }
}

TEST_CASE("reference: energy of a linear field on single elements, both orientations") {
  // u = A x: u^T K u = |element| sigma : eps, sigma = lambda tr(eps) I + 2 mu eps (3D), plane
  // stress c (eps_xx^2 + 2 nu eps_xx eps_yy + eps_yy^2) + mu gamma_xy^2 (2D).
  const spk::ElasticMaterial mat{3.0, 0.27};
  const double e = mat.youngs_modulus, nu = mat.poisson_ratio;
  const double lambda = e * nu / ((1 + nu) * (1 - 2 * nu)), mu = e / (2 * (1 + nu));
  const double a[3][3] = {{0.3, -0.7, 0.2}, {0.5, 0.1, -0.4}, {-0.6, 0.8, 0.9}};
  double eps3[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) eps3[i][j] = 0.5 * (a[i][j] + a[j][i]);
  double density3 = 0, tr = eps3[0][0] + eps3[1][1] + eps3[2][2];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) density3 += 2 * mu * eps3[i][j] * eps3[i][j];
  density3 += lambda * tr * tr;
  const double c = e / (1 - nu * nu), gxy = a[0][1] + a[1][0];
  const double density2 =
      c * (a[0][0] * a[0][0] + 2 * nu * a[0][0] * a[1][1] + a[1][1] * a[1][1]) + mu * gxy * gxy;
  const auto energy = [](const ReferenceCsr& k, const std::vector<double>& u) {
    const auto y = spk_test::reference_matvec(k, u);
    double s = 0;
    for (std::size_t i = 0; i < u.size(); ++i) s += u[i] * y[i];
    return s;
  };
  const auto field = [&](const std::vector<Point3>& nodes, int dims) {
    std::vector<double> u;
    for (const auto& p : nodes)
      for (int i = 0; i < dims; ++i) {
        double s = 0;
        for (int j = 0; j < dims; ++j) s += a[i][j] * p[std::size_t(j)];
        u.push_back(s);
      }
    return u;
  };
  const std::vector<Point3> tet{{0.1, 0, 0.05}, {1.2, 0.1, 0}, {0.2, 0.9, 0.1}, {0.3, 0.2, 1.1}};
  for (bool flip : {false, true}) {
    INFO("flipped " << flip);
    spk::TetMesh m;
    m.vertices = tet;
    m.tetrahedra = {flip ? std::array<int, 4>{0, 2, 1, 3} : std::array<int, 4>{0, 1, 2, 3}};
    const double vol = spk::volume(m);
    const auto k1 = spk_test::reference_p1_tet_elasticity(m.vertices, m.tetrahedra, mat);
    CHECK(std::abs(energy(k1, field(m.vertices, 3)) - vol * density3) <= 64 * eps * vol * density3);
    const auto q = spk::quadratic_mesh(m);
    const auto k2 = spk_test::reference_p2_tet_elasticity(q.nodes, q.elements, mat);
    CHECK(std::abs(energy(k2, field(q.nodes, 3)) - vol * density3) <= 256 * eps * vol * density3);

    spk::TriangleMesh t;
    t.vertices = {{0.1, 0, 7}, {1.2, 0.1, -3}, {0.2, 0.9, 1}};  // z is ignored
    t.triangles = {flip ? std::array<int, 3>{0, 2, 1} : std::array<int, 3>{0, 1, 2}};
    const double area = 0.5 * std::abs((1.2 - 0.1) * (0.9 - 0) - (0.2 - 0.1) * (0.1 - 0));
    const auto qt = spk::quadratic_mesh(t);
    const auto kt = spk_test::reference_p2_triangle_elasticity(qt.nodes, qt.elements, mat);
    CHECK(std::abs(energy(kt, field(qt.nodes, 2)) - area * density2) <=
          256 * eps * area * density2);
  }
}

// --- meshes: structure, symmetry, null spaces, definiteness --------------------------------------

TEST_CASE("reference: Laplacians on meshes: pattern, symmetry, zero row sums, cotangents") {
  const auto surf = spk::read_triangle_mesh(mesh_path("octopus-low.mesh"));
  const auto vol = spk::read_tet_mesh(mesh_path("octopus-low.mesh"));
  const auto c = cube(3, 5);
  const auto kt = spk_test::reference_p1_triangle_laplacian(surf.vertices, surf.triangles);
  check_pattern(kt, surf.vertices.size(), surf.triangles, 1);
  for (const auto* m : {&vol, &c}) {
    const auto k = spk_test::reference_p1_tet_laplacian(m->vertices, m->tetrahedra);
    check_pattern(k, m->vertices.size(), m->tetrahedra, 1);
  }
  const auto kv = spk_test::reference_p1_tet_laplacian(vol.vertices, vol.tetrahedra);
  const auto kc = spk_test::reference_p1_tet_laplacian(c.vertices, c.tetrahedra);
  for (const ReferenceCsr* k : {&kt, &kv, &kc}) {
    CHECK(asymmetry(*k) <= 4 * eps);
    const std::vector<double> ones(std::size_t(k->n), 1.0);
    CHECK(null_residual(*k, ones) <= 64 * eps);
    for (std::uint64_t seed = 1; seed <= 3; ++seed)
      CHECK(energy_ratio(*k, random_vector(std::size_t(k->n), seed)) > 1e-3);
  }
  // cotangent formula on the whole surface: K_ab = -(cot alpha + cot beta) / 2
  std::map<std::pair<int, int>, double> cot;
  for (const auto& f : surf.triangles)
    for (int a = 0; a < 3; ++a) {
      const int i = f[std::size_t(a)], j = f[std::size_t(a + 1) % 3], o = f[std::size_t(a + 2) % 3];
      const auto u = spk::impl::sub3(surf.vertices[std::size_t(i)], surf.vertices[std::size_t(o)]);
      const auto v = spk::impl::sub3(surf.vertices[std::size_t(j)], surf.vertices[std::size_t(o)]);
      const auto n = spk::impl::cross3(u, v);
      const double w = -0.5 * spk::impl::dot3(u, v) / std::sqrt(spk::impl::dot3(n, n));
      cot[{i, j}] += w;
      cot[{j, i}] += w;
    }
  double worst = 0;
  for (const auto& e : cot)
    worst = std::max(worst, std::abs(kt.at(e.first.first, e.first.second) - e.second));
  CHECK(worst <= 1e3 * eps * max_abs(kt));
  // linear patch test: a linear function is harmonic, so interior rows of K u vanish
  std::vector<double> lin;
  for (const auto& p : c.vertices) lin.push_back(0.3 + 1.1 * p[0] - 0.7 * p[1] + 0.4 * p[2]);
  const auto r = spk_test::reference_matvec(kc, lin);
  double interior = 0;
  for (std::size_t v = 0; v < c.vertices.size(); ++v)
    if (!on_unit_boundary(c.vertices[v], 3)) interior = std::max(interior, std::abs(r[v]));
  CHECK(interior <= 64 * eps * inf_norm(kc));
}

TEST_CASE("reference: elasticity on meshes: pattern, symmetry, rigid modes, positive energy") {
  const spk::ElasticMaterial mat{2.0, 0.35};
  const auto vol = spk::read_tet_mesh(mesh_path("octopus-low.mesh"));
  const auto c = cube(2, 3);
  const auto p = plate(4, 3);
  const auto qv = spk::quadratic_mesh(vol);
  const auto qc = spk::quadratic_mesh(c);
  const auto qp = spk::quadratic_mesh(p);
  struct Case {
    const char* name;
    ReferenceCsr k;
    std::vector<std::vector<double>> modes;
  };
  std::vector<Case> cases;
  cases.push_back({"P1 tet octopus",
                   spk_test::reference_p1_tet_elasticity(vol.vertices, vol.tetrahedra, mat),
                   spk_test::rigid_body_modes_3d(vol.vertices)});
  check_pattern(cases.back().k, vol.vertices.size(), vol.tetrahedra, 3);
  cases.push_back({"P1 tet cube",
                   spk_test::reference_p1_tet_elasticity(c.vertices, c.tetrahedra, mat),
                   spk_test::rigid_body_modes_3d(c.vertices)});
  cases.push_back({"P2 tet octopus",
                   spk_test::reference_p2_tet_elasticity(qv.nodes, qv.elements, mat),
                   spk_test::rigid_body_modes_3d(qv.nodes)});
  check_pattern(cases.back().k, qv.nodes.size(), qv.elements, 3);
  cases.push_back({"P2 tet cube", spk_test::reference_p2_tet_elasticity(qc.nodes, qc.elements, mat),
                   spk_test::rigid_body_modes_3d(qc.nodes)});
  cases.push_back({"P2 triangle plate",
                   spk_test::reference_p2_triangle_elasticity(qp.nodes, qp.elements, mat),
                   spk_test::rigid_body_modes_2d(qp.nodes)});
  check_pattern(cases.back().k, qp.nodes.size(), qp.elements, 2);
  for (const auto& cs : cases) {
    INFO(cs.name);
    CHECK(asymmetry(cs.k) <= 8 * eps);
    double worst = 0;
    for (const auto& r : cs.modes) worst = std::max(worst, null_residual(cs.k, r));
    CHECK(worst <= 256 * eps);
    double least = 1;
    for (std::uint64_t seed = 1; seed <= 4; ++seed)
      least = std::min(least, energy_ratio(cs.k, random_vector(std::size_t(cs.k.n), seed)));
    CHECK(least > 1e-3);
    std::int64_t nonpositive_diagonal = 0;
    for (std::int64_t i = 0; i < cs.k.n; ++i) nonpositive_diagonal += cs.k.at(i, i) > 0 ? 0 : 1;
    CHECK(nonpositive_diagonal == 0);
  }
}

TEST_CASE("reference: patch tests, linear and quadratic fields") {
  const spk::ElasticMaterial mat{1.7, 0.31};
  // P1 tetrahedra, linear field: interior residuals vanish
  {
    const auto c = cube(3, 11);
    CHECK(std::abs(spk::volume(c) - 1) <= 1e3 * eps);  // no tetrahedron inverted
    const auto k = spk_test::reference_p1_tet_elasticity(c.vertices, c.tetrahedra, mat);
    const QuadraticField f(3, 2);
    std::vector<double> u;
    for (const auto& x : c.vertices)
      for (int i = 0; i < 3; ++i) {
        double s = 0;
        for (int j = 0; j < 3; ++j) s += f.a[i][j] * x[std::size_t(j)];
        u.push_back(s);
      }
    const auto r = spk_test::reference_matvec(k, u);
    double worst = 0;
    for (std::size_t v = 0; v < c.vertices.size(); ++v)
      if (!on_unit_boundary(c.vertices[v], 3))
        for (std::size_t i = 0; i < 3; ++i) worst = std::max(worst, std::abs(r[3 * v + i]));
    CHECK(worst <= 256 * eps * inf_norm(k) * max_abs(u));
  }
  // P2 tetrahedra and triangles, quadratic field (interpolated exactly): interior residual
  // (K u)_a = b * integral of N_a, with b = -div sigma constant and, per element, the integral of
  // a vertex function -V/20 (tetrahedron) or 0 (triangle), of an edge function V/5 or A/3.
  for (int dims : {3, 2}) {
    INFO("dimensions " << dims);
    std::vector<Point3> nodes;
    std::vector<double> load;  // integral of N_a
    ReferenceCsr k;
    if (dims == 3) {
      const auto c = cube(3, 12);
      CHECK(std::abs(spk::volume(c) - 1) <= 1e3 * eps);
      const auto q = spk::quadratic_mesh(c);
      nodes = q.nodes;
      load.assign(nodes.size(), 0.0);
      for (std::size_t t = 0; t < c.tetrahedra.size(); ++t) {
        const double v = std::abs(spk::tetrahedron_signed_volume(c, t));
        for (std::size_t a = 0; a < 10; ++a)
          load[std::size_t(q.elements[t][a])] += a < 4 ? -v / 20 : v / 5;
      }
      k = spk_test::reference_p2_tet_elasticity(q.nodes, q.elements, mat);
    } else {
      const auto p = plate(4, 12);
      CHECK(std::abs(spk::surface_area(p) - 1) <= 64 * eps);
      const auto q = spk::quadratic_mesh(p);
      nodes = q.nodes;
      load.assign(nodes.size(), 0.0);
      for (std::size_t t = 0; t < p.triangles.size(); ++t)
        for (std::size_t a = 3; a < 6; ++a)
          load[std::size_t(q.elements[t][a])] += spk::triangle_area(p, t) / 3;
      k = spk_test::reference_p2_triangle_elasticity(q.nodes, q.elements, mat);
    }
    const QuadraticField f(dims, 7);
    std::vector<double> u;
    for (const auto& x : nodes)
      for (int i = 0; i < dims; ++i) u.push_back(f.value(i, x));
    const auto r = spk_test::reference_matvec(k, u);
    const auto b = f.body_force(mat);
    double worst = 0, scale = 0;
    std::size_t interior = 0;
    for (std::size_t a = 0; a < nodes.size(); ++a) {
      if (on_unit_boundary(nodes[a], dims)) continue;
      ++interior;
      for (std::size_t i = 0; i < std::size_t(dims); ++i) {
        worst = std::max(worst, std::abs(r[std::size_t(dims) * a + i] - b[i] * load[a]));
        scale = std::max(scale, std::abs(b[i] * load[a]));
      }
    }
    CHECK(interior > 20);
    CHECK(scale > 0);
    CHECK(worst <= 1e3 * eps * inf_norm(k) * max_abs(u));
  }
}

TEST_CASE("reference: P1 in P2, P^T K2 P = K1 for the prolongation of linear tetrahedra") {
  const spk::ElasticMaterial mat{1.0, 0.3};
  const auto m = spk::read_tet_mesh(mesh_path("octopus-low.mesh"));
  const auto q = spk::quadratic_mesh(m);
  const auto k1 = spk_test::reference_p1_tet_elasticity(m.vertices, m.tetrahedra, mat);
  const auto k2 = spk_test::reference_p2_tet_elasticity(q.nodes, q.elements, mat);
  // ends of each midpoint node
  std::vector<std::array<int, 2>> ends(q.nodes.size() - m.vertices.size());
  for (std::size_t t = 0; t < m.tetrahedra.size(); ++t)
    for (std::size_t e = 0; e < 6; ++e)
      ends[std::size_t(q.elements[t][4 + e]) - m.vertices.size()] = {
          m.tetrahedra[t][std::size_t(tet_pairs[e][0])],
          m.tetrahedra[t][std::size_t(tet_pairs[e][1])]};
  const std::size_t nv = m.vertices.size();
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const auto x1 = random_vector(3 * nv, seed);
    std::vector<double> x2(3 * q.nodes.size());
    std::copy(x1.begin(), x1.end(), x2.begin());
    for (std::size_t e = 0; e < ends.size(); ++e)
      for (std::size_t i = 0; i < 3; ++i)
        x2[3 * (nv + e) + i] =
            0.5 * (x1[3 * std::size_t(ends[e][0]) + i] + x1[3 * std::size_t(ends[e][1]) + i]);
    const auto y2 = spk_test::reference_matvec(k2, x2);
    std::vector<double> y(y2.begin(), y2.begin() + std::ptrdiff_t(3 * nv));
    for (std::size_t e = 0; e < ends.size(); ++e)
      for (std::size_t i = 0; i < 3; ++i)
        for (int end : ends[e]) y[3 * std::size_t(end) + i] += 0.5 * y2[3 * (nv + e) + i];
    const auto y1 = spk_test::reference_matvec(k1, x1);
    double worst = 0;
    for (std::size_t i = 0; i < y1.size(); ++i) worst = std::max(worst, std::abs(y[i] - y1[i]));
    CHECK(worst <= 1e3 * eps * inf_norm(k2));
  }
}

TEST_CASE("reference: P1 tetrahedral elasticity equals spk::elasticity_stiffness") {
  const auto octopus = spk::read_tet_mesh(mesh_path("octopus-low.mesh"));
  const spk::TetMesh gap = [] {
    spk::TetMesh m = cube(2, 4);
    m.vertices.insert(m.vertices.begin(), Point3{9, 9, 9});  // an unreferenced vertex first
    for (auto& t : m.tetrahedra)
      for (int& v : t) ++v;
    return m;
  }();
  for (const auto* m : {&octopus, &gap})
    for (const spk::ElasticMaterial mat :
         {spk::ElasticMaterial{1.0, 0.3}, spk::ElasticMaterial{210e9, 0.45},
          spk::ElasticMaterial{3.0, -0.2}}) {
      INFO("vertices " << m->vertices.size() << " E " << mat.youngs_modulus << " nu "
                       << mat.poisson_ratio);
      const auto ref = spk_test::reference_p1_tet_elasticity(m->vertices, m->tetrahedra, mat);
      const auto lib =
          expand_blocks(spk::elasticity_stiffness<double>(*m, mat), spk::vertex_rows(*m));
      REQUIRE(lib.row_map == ref.row_map);
      REQUIRE(lib.col_idx == ref.col_idx);
      double worst = 0;
      for (std::size_t i = 0; i < ref.values.size(); ++i)
        worst = std::max(worst, std::abs(lib.values[i] - ref.values[i]));
      CHECK(worst <= 64 * eps * max_abs(ref));
    }
}

TEST_CASE("reference: errors") {
  const std::vector<Point3> nodes{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}};
  check_throws(
      [&] {
        spk_test::reference_p1_triangle_laplacian(nodes, {{0, 1, 2}, {0, 1, 5}});
      },
      "element 1 refers to node 5");
  check_throws(
      [&] {
        spk_test::reference_p1_triangle_laplacian(nodes, {{0, 1, 2}, {0, 1, 1}});
      },
      "element 1 has zero area");
  check_throws(
      [&] {
        spk_test::reference_p1_tet_laplacian(nodes, {{0, 1, 2, 4}});
      },
      "element 0 has zero volume");
  check_throws(
      [&] {
        spk_test::reference_p1_tet_elasticity(nodes, {{0, 1, 2, 3}}, {1.0, 0.5});
      },
      "Poisson");
  check_throws(
      [&] {
        spk_test::reference_p1_tet_elasticity(nodes, {{0, 1, 2, 3}}, {0.0, 0.3});
      },
      "Young");
  // a triangle standing in the x-z plane has zero area in x-y
  check_throws(
      [&] {
        spk_test::reference_p2_triangle_elasticity(nodes, {{0, 1, 3, 0, 1, 3}}, {1.0, 0.3});
      },
      "element 0 has zero area in x-y");
  check_throws(
      [&] {
        spk_test::reference_p2_tet_elasticity(nodes, {{0, 1, 2, 3, 0, 0, 0, 0, 0, -1}}, {1.0, 0.3});
      },
      "element 0 refers to node -1");
  check_throws(
      [&] {
        spk_test::reference_matvec(spk_test::reference_p1_tet_laplacian(nodes, {{0, 1, 2, 3}}),
                                   {1.0});
      },
      "x has 1 entries");
}
