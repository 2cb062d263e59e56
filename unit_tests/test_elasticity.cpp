// Tests of spk/compound/elasticity.hpp on every backend: one tetrahedron against a direct
// 12 x 12 computation V B^T C B (shape-function gradients from a 4 x 4 linear solve, the 6 x 6
// isotropic C in Voigt notation), both orientations, and on the shared meshes the structure
// (one block row per referenced vertex, V + 2E sorted blocks), block symmetry, the six rigid-body
// modes in the null space, positive energy of random displacements, linearity in Young's modulus,
// float values as the rounded double ones, and the errors.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <spk/compound/elasticity.hpp>
#include <spk/io/mesh_io.hpp>
#include <spk/mesh/subdivide.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "test_common.hpp"

namespace {

using Host = spk::impl::HostDevice;
using Vec3 = std::array<double, 3>;
constexpr double eps = std::numeric_limits<double>::epsilon();

std::string mesh_path(const std::string& name) { return spk_test::data_dir() + "/meshes/" + name; }

/// A block matrix as host vectors.
template <class Real>
struct Plain {
  int n = 0;
  std::vector<int> row_map, cols;
  std::vector<spk::Block<Real, 3>> vals;
  int find(int a, int b) const {
    const auto first = cols.begin() + row_map[std::size_t(a)];
    const auto last = cols.begin() + row_map[std::size_t(a) + 1];
    const auto it = std::lower_bound(first, last, b);
    return it != last && *it == b ? int(it - cols.begin()) : -1;
  }
  /// Component (i, j) of block (a, b), NaN when the block is missing (failing any check).
  double at(int a, int b, int i, int j) const {
    const int k = find(a, b);
    return k >= 0 ? double(vals[std::size_t(k)].a[3 * i + j])
                  : std::numeric_limits<double>::quiet_NaN();
  }
};

template <class Real, class D>
Plain<Real> plain(const spk::CsrMatrix<spk::Block<Real, 3>, int, int, D>& a) {
  const auto h = spk::to_host(a);
  Plain<Real> p;
  p.n = h.nrows();
  REQUIRE(h.ncols() == h.nrows());
  p.row_map.assign(h.row_map().data(), h.row_map().data() + h.row_map().extent(0));
  p.cols.assign(h.col_idx().data(), h.col_idx().data() + h.col_idx().extent(0));
  p.vals.assign(h.values().data(), h.values().data() + h.values().extent(0));
  return p;
}

double block_max(const spk::Block<double, 3>& b) {
  double m = 0;
  for (double v : b.a) m = std::max(m, std::abs(v));
  return m;
}

/// y = K u for u given per row (3 components), with the bound sum_b max|K_ab| max|u_b| per row.
std::pair<std::vector<Vec3>, std::vector<double>> multiply(const Plain<double>& p,
                                                           const std::vector<Vec3>& u) {
  std::vector<Vec3> y(std::size_t(p.n), Vec3{0, 0, 0});
  std::vector<double> scale(std::size_t(p.n), 0.0);
  for (int a = 0; a < p.n; ++a)
    for (int k = p.row_map[a]; k < p.row_map[a + 1]; ++k) {
      const auto& b = p.vals[std::size_t(k)];
      const Vec3& x = u[std::size_t(p.cols[std::size_t(k)])];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) y[std::size_t(a)][i] += b.a[3 * i + j] * x[j];
      scale[std::size_t(a)] +=
          block_max(b) * std::max({std::abs(x[0]), std::abs(x[1]), std::abs(x[2])});
    }
  return {y, scale};
}

/// Positions of the matrix rows (the referenced vertices in order).
std::vector<Vec3> row_positions(const spk::TetMesh& m) {
  const auto rows = spk::vertex_rows(m);
  std::vector<Vec3> pos;
  for (std::size_t v = 0; v < rows.size(); ++v)
    if (rows[v] >= 0) pos.push_back(m.vertices[v]);
  return pos;
}

/// The 12 x 12 stiffness of one tetrahedron, V B^T C B, computed directly: gradients of the
/// linear shape functions from the inverse of [[1, x_a, y_a, z_a]] (Gauss-Jordan), B the 6 x 12
/// strain-displacement matrix (xx, yy, zz, xy, yz, zx; engineering shears), C isotropic.
std::array<std::array<double, 12>, 12> direct_stiffness(const std::array<Vec3, 4>& p, double e,
                                                        double nu) {
  double m[4][8] = {};
  for (int a = 0; a < 4; ++a) {
    m[a][0] = 1;
    for (int d = 0; d < 3; ++d) m[a][d + 1] = p[a][d];
    m[a][4 + a] = 1;
  }
  for (int c = 0; c < 4; ++c) {
    int piv = c;
    for (int r = c + 1; r < 4; ++r)
      if (std::abs(m[r][c]) > std::abs(m[piv][c])) piv = r;
    for (int k = 0; k < 8; ++k) std::swap(m[c][k], m[piv][k]);
    const double d = m[c][c];
    for (int k = 0; k < 8; ++k) m[c][k] /= d;
    for (int r = 0; r < 4; ++r)
      if (r != c) {
        const double f = m[r][c];
        for (int k = 0; k < 8; ++k) m[r][k] -= f * m[c][k];
      }
  }
  // N_a(x) = inv[0][a] + inv[1][a] x + inv[2][a] y + inv[3][a] z, inv = m[.][4..7]
  double g[4][3];
  for (int a = 0; a < 4; ++a)
    for (int d = 0; d < 3; ++d) g[a][d] = m[d + 1][4 + a];
  double b[6][12] = {};
  for (int a = 0; a < 4; ++a) {
    const double gx = g[a][0], gy = g[a][1], gz = g[a][2];
    b[0][3 * a] = gx;
    b[1][3 * a + 1] = gy;
    b[2][3 * a + 2] = gz;
    b[3][3 * a] = gy;
    b[3][3 * a + 1] = gx;
    b[4][3 * a + 1] = gz;
    b[4][3 * a + 2] = gy;
    b[5][3 * a] = gz;
    b[5][3 * a + 2] = gx;
  }
  const double f = e / ((1 + nu) * (1 - 2 * nu));
  double c[6][6] = {};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) c[i][j] = f * (i == j ? 1 - nu : nu);
  for (int i = 3; i < 6; ++i) c[i][i] = f * (1 - 2 * nu) / 2;
  const Vec3 e1{p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]};
  const Vec3 e2{p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]};
  const Vec3 e3{p[3][0] - p[0][0], p[3][1] - p[0][1], p[3][2] - p[0][2]};
  const double vol =
      std::abs(e1[0] * (e2[1] * e3[2] - e2[2] * e3[1]) - e1[1] * (e2[0] * e3[2] - e2[2] * e3[0]) +
               e1[2] * (e2[0] * e3[1] - e2[1] * e3[0])) /
      6;
  std::array<std::array<double, 12>, 12> k{};
  for (int r = 0; r < 12; ++r)
    for (int s = 0; s < 12; ++s) {
      double sum = 0;
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) sum += b[i][r] * c[i][j] * b[j][s];
      k[std::size_t(r)][std::size_t(s)] = vol * sum;
    }
  return k;
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("elasticity_stiffness: one tetrahedron against V B^T C B", Device,
                          elasticity_single) {
  const std::array<Vec3, 4> p{Vec3{0.1, 0, 0.05}, Vec3{1.2, 0.1, 0}, Vec3{0.2, 0.9, 0.1},
                              Vec3{0.3, 0.2, 1.1}};
  struct Case {
    double e, nu;
    bool flip;
  };
  for (const Case& c : {Case{1.0, 0.3, false}, Case{2.5, 0.25, false}, Case{210e9, 0.45, true}}) {
    INFO("E " << c.e << " nu " << c.nu << " flipped " << c.flip);
    spk::TetMesh m;
    m.vertices.assign(p.begin(), p.end());
    m.tetrahedra = {c.flip ? std::array<int, 4>{0, 2, 1, 3} : std::array<int, 4>{0, 1, 2, 3}};
    const auto k = plain(spk::elasticity_stiffness<double, Device>(m, {c.e, c.nu}));
    REQUIRE(k.n == 4);
    REQUIRE(k.cols.size() == 16);
    const auto want = direct_stiffness(p, c.e, c.nu);
    double big = 0, worst = 0;
    for (const auto& row : want)
      for (double v : row) big = std::max(big, std::abs(v));
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b)
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j)
            worst = std::max(worst, std::abs(k.at(a, b, i, j) - want[3 * a + i][3 * b + j]));
    CHECK(worst <= 64 * eps * big);
  }
}
TEST_CASE_TEMPLATE_APPLY(elasticity_single, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE(
    "elasticity_stiffness: shared meshes: structure, symmetry, rigid modes, "
    "positive energy",
    Device, elasticity_shared) {
  for (const char* name : {"femur_interior.1.ele", "octopus-low.mesh", "hand.msh"}) {
    INFO(std::string(name));
    const auto mesh = spk::read_tet_mesh(mesh_path(name));
    const auto k = plain(spk::elasticity_stiffness<double, Device>(mesh));
    // structure: one row per referenced vertex, the vertex and its edge neighbours, sorted
    std::set<int> referenced;
    std::set<std::pair<int, int>> edges;
    for (const auto& t : mesh.tetrahedra)
      for (int a = 0; a < 4; ++a) {
        referenced.insert(t[a]);
        for (int b = a + 1; b < 4; ++b) edges.insert({std::min(t[a], t[b]), std::max(t[a], t[b])});
      }
    CHECK(k.n == int(referenced.size()));
    CHECK(k.cols.size() == referenced.size() + 2 * edges.size());
    std::size_t unsorted = 0;
    for (int a = 0; a < k.n; ++a)
      for (int j = k.row_map[a]; j + 1 < k.row_map[a + 1]; ++j)
        unsorted += k.cols[std::size_t(j)] < k.cols[std::size_t(j) + 1] ? 0 : 1;
    CHECK(unsorted == 0);

    // block symmetry K_ba = K_ab^T, relative to the diagonal blocks
    double asym = 0, min_diag = 1e300;
    for (int a = 0; a < k.n; ++a) {
      for (int i = 0; i < 3; ++i) min_diag = std::min(min_diag, k.at(a, a, i, i));
      for (int j = k.row_map[a]; j < k.row_map[a + 1]; ++j) {
        const int b = k.cols[std::size_t(j)];
        const double scale = block_max(k.vals[std::size_t(k.find(a, a))]) +
                             block_max(k.vals[std::size_t(k.find(b, b))]);
        for (int r = 0; r < 3; ++r)
          for (int s = 0; s < 3; ++s) {
            const double d = std::abs(k.at(b, a, s, r) - k.at(a, b, r, s)) / scale;
            asym = std::isnan(d) ? 1e300 : std::max(asym, d);
          }
      }
    }
    CHECK(asym <= 8 * eps);
    CHECK(min_diag > 0);

    // the 6 rigid-body modes: 3 translations, 3 infinitesimal rotations u(p) = w x p
    const auto pos = row_positions(mesh);
    REQUIRE(int(pos.size()) == k.n);
    for (int mode = 0; mode < 6; ++mode) {
      INFO("rigid mode " << mode);
      std::vector<Vec3> u(pos.size());
      for (std::size_t a = 0; a < pos.size(); ++a) {
        if (mode < 3) {
          u[a] = Vec3{0, 0, 0};
          u[a][mode] = 1;
        } else {
          Vec3 w{0, 0, 0};
          w[mode - 3] = 1;
          const Vec3& x = pos[a];
          u[a] = {w[1] * x[2] - w[2] * x[1], w[2] * x[0] - w[0] * x[2], w[0] * x[1] - w[1] * x[0]};
        }
      }
      const auto r = multiply(k, u);
      double worst = 0;
      for (std::size_t a = 0; a < pos.size(); ++a)
        for (int i = 0; i < 3; ++i) worst = std::max(worst, std::abs(r.first[a][i]) / r.second[a]);
      CHECK(worst <= 256 * eps);
    }

    // x^T K x > 0 for random (non-rigid) displacements, well above rounding
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> dist(-1, 1);
    for (int trial = 0; trial < 3; ++trial) {
      std::vector<Vec3> x(pos.size());
      for (auto& v : x) v = {dist(rng), dist(rng), dist(rng)};
      const auto r = multiply(k, x);
      double energy = 0, bound = 0;
      for (std::size_t a = 0; a < x.size(); ++a)
        for (int i = 0; i < 3; ++i) {
          energy += x[a][i] * r.first[a][i];
          bound += std::abs(x[a][i]) * r.second[a];
        }
      CHECK(energy > 1e-3 * bound);
    }
  }
}
TEST_CASE_TEMPLATE_APPLY(elasticity_shared, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("elasticity_stiffness: linear in E, float rounding, device = host",
                          Device, elasticity_float) {
  const auto mesh = spk::subdivide(spk::read_tet_mesh(mesh_path("octopus-low.mesh")), 1);
  const auto d = plain(spk::elasticity_stiffness<double, Device>(mesh));
  const auto h = plain(spk::elasticity_stiffness<double, Host>(mesh));
  const auto two = plain(spk::elasticity_stiffness<double, Device>(mesh, {2.0, 0.3}));
  const auto f = plain(spk::elasticity_stiffness<float, Device>(mesh));
  CHECK(d.row_map == h.row_map);
  CHECK(d.cols == h.cols);
  CHECK(f.cols == d.cols);
  CHECK(two.cols == d.cols);
  std::size_t differ = 0, not_doubled = 0, not_rounded = 0;
  for (std::size_t k = 0; k < d.vals.size(); ++k)
    for (int i = 0; i < 9; ++i) {
      differ += d.vals[k].a[i] == h.vals[k].a[i] ? 0 : 1;
      not_doubled += two.vals[k].a[i] == 2 * d.vals[k].a[i] ? 0 : 1;
      not_rounded += f.vals[k].a[i] == float(d.vals[k].a[i]) ? 0 : 1;
    }
  CHECK(differ == 0);
  CHECK(not_doubled == 0);
  CHECK(not_rounded == 0);
}
TEST_CASE_TEMPLATE_APPLY(elasticity_float, spk_test::all_devices);

TEST_CASE("elasticity_stiffness: inverted tetrahedra count with |volume|") {
  spk::TetMesh m;
  m.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}};
  m.tetrahedra = {{0, 1, 2, 3}, {1, 2, 3, 4}};
  spk::TetMesh flipped = m;
  flipped.tetrahedra = {{1, 0, 2, 3}, {1, 3, 2, 4}};
  REQUIRE(spk::tetrahedron_signed_volume(m, 0) > 0);
  REQUIRE(spk::tetrahedron_signed_volume(flipped, 0) < 0);
  const auto a = plain(spk::elasticity_stiffness<double, Host>(m));
  const auto b = plain(spk::elasticity_stiffness<double, Host>(flipped));
  REQUIRE(a.cols == b.cols);
  double worst = 0, big = 0;
  for (std::size_t k = 0; k < a.vals.size(); ++k)
    for (int i = 0; i < 9; ++i) {
      worst = std::max(worst, std::abs(a.vals[k].a[i] - b.vals[k].a[i]));
      big = std::max(big, std::abs(a.vals[k].a[i]));
    }
  CHECK(worst <= 16 * eps * big);
}

TEST_CASE("elasticity_stiffness: errors") {
  auto throws = [](auto&& f, const std::string& part) {
    bool thrown = false;
    try {
      f();
    } catch (const std::invalid_argument& e) {
      thrown = true;
      INFO("message: " << e.what());
      CHECK(std::string(e.what()).find(part) != std::string::npos);
    }
    CHECK(thrown);
  };
  spk::TetMesh m;
  m.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}};
  m.tetrahedra = {{0, 1, 2, 3}, {0, 1, 2, 4}};  // the second is flat
  throws([&] { spk::elasticity_stiffness<double, Host>(m); }, "tetrahedron 1");
  throws([&] { spk::elasticity_stiffness<double, Host>(m); }, "zero volume");
  m.tetrahedra = {{0, 1, 2, 3}};
  throws([&] { spk::elasticity_stiffness<double, Host>(m, {1.0, 0.5}); }, "Poisson");
  throws([&] { spk::elasticity_stiffness<double, Host>(m, {0.0, 0.3}); }, "Young");
  m.tetrahedra = {{0, 1, 2, 7}};
  throws([&] { spk::elasticity_stiffness<double, Host>(m); }, "vertex 7");
}
