// Tests of spk/compound/dirac_operator.hpp on every backend: the hand-computed matrix of one
// equilateral triangle (with and without potential), and on shared meshes the structure (one row
// per referenced vertex, V + 2E sorted entries, symmetric pattern), quaternionic Hermitian
// symmetry, zero row sums without potential, the real part against the cotangent formula
// computed from angles, float values as the rounded double ones, the default potential, and the
// errors.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <set>
#include <spk/compound/dirac_operator.hpp>
#include <spk/io/mesh_io.hpp>
#include <spk/mesh/subdivide.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "test_common.hpp"

namespace {

using Q = spk::Quaternion<double>;
using Host = spk::impl::HostDevice;
constexpr double eps = std::numeric_limits<double>::epsilon();

std::string mesh_path(const std::string& name) { return spk_test::data_dir() + "/meshes/" + name; }

/// A matrix as host vectors.
template <class Real>
struct Plain {
  int n = 0;
  std::vector<int> row_map, cols;
  std::vector<spk::Quaternion<Real>> vals;
  /// Position of (a, b), or -1.
  int find(int a, int b) const {
    const auto first = cols.begin() + row_map[std::size_t(a)];
    const auto last = cols.begin() + row_map[std::size_t(a) + 1];
    const auto it = std::lower_bound(first, last, b);
    return it != last && *it == b ? int(it - cols.begin()) : -1;
  }
  spk::Quaternion<Real> at(int a, int b) const {
    const int k = find(a, b);
    const Real nan = std::numeric_limits<Real>::quiet_NaN();  // a missing entry fails checks
    return k >= 0 ? vals[std::size_t(k)] : spk::Quaternion<Real>{nan, nan, nan, nan};
  }
};

template <class Real, class D>
Plain<Real> plain(const spk::CsrMatrix<spk::Quaternion<Real>, int, int, D>& a) {
  const auto h = spk::to_host(a);
  Plain<Real> p;
  p.n = h.nrows();
  REQUIRE(h.ncols() == h.nrows());
  p.row_map.assign(h.row_map().data(), h.row_map().data() + h.row_map().extent(0));
  p.cols.assign(h.col_idx().data(), h.col_idx().data() + h.col_idx().extent(0));
  p.vals.assign(h.values().data(), h.values().data() + h.values().extent(0));
  return p;
}

double norm(const Q& q) { return std::sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z); }
Q conj(const Q& q) { return {q.w, -q.x, -q.y, -q.z}; }
double max_diff(const Q& a, const Q& b) {
  return std::max(
      {std::abs(a.w - b.w), std::abs(a.x - b.x), std::abs(a.y - b.y), std::abs(a.z - b.z)});
}

/// Rows strictly increasing, a diagonal in each row, pattern symmetric; nnz = rows + 2 edges.
void check_structure(const Plain<double>& p, const spk::TriangleMesh& mesh) {
  std::set<int> referenced;
  std::set<std::pair<int, int>> edges;
  for (const auto& t : mesh.triangles)
    for (int k = 0; k < 3; ++k) {
      referenced.insert(t[k]);
      edges.insert({std::min(t[k], t[(k + 1) % 3]), std::max(t[k], t[(k + 1) % 3])});
    }
  CHECK(p.n == int(referenced.size()));
  CHECK(p.cols.size() == referenced.size() + 2 * edges.size());
  std::size_t unsorted = 0, no_diagonal = 0, asymmetric = 0;
  for (int a = 0; a < p.n; ++a) {
    for (int k = p.row_map[a]; k + 1 < p.row_map[a + 1]; ++k)
      unsorted += p.cols[std::size_t(k)] < p.cols[std::size_t(k) + 1] ? 0 : 1;
    no_diagonal += p.find(a, a) < 0 ? 1 : 0;
    for (int k = p.row_map[a]; k < p.row_map[a + 1]; ++k)
      asymmetric += p.find(p.cols[std::size_t(k)], a) < 0 ? 1 : 0;
  }
  CHECK(unsorted == 0);
  CHECK(no_diagonal == 0);
  CHECK(asymmetric == 0);
}

/// Largest |E(b, a) - conj(E(a, b))| over entries, relative to |E(a, a)| + |E(b, b)|.
double hermitian_error(const Plain<double>& p) {
  double worst = 0;
  for (int a = 0; a < p.n; ++a)
    for (int k = p.row_map[a]; k < p.row_map[a + 1]; ++k) {
      const int b = p.cols[std::size_t(k)];
      const double scale = norm(p.at(a, a)) + norm(p.at(b, b));
      worst = std::max(worst, max_diff(p.at(b, a), conj(p.vals[std::size_t(k)])) / scale);
    }
  return worst;
}

/// Largest |sum_b E(a, b)| (E times the all-ones quaternion vector) relative to sum_b |E(a, b)|.
double row_sum_error(const Plain<double>& p) {
  double worst = 0;
  for (int a = 0; a < p.n; ++a) {
    Q s{0, 0, 0, 0};
    double mag = 0;
    for (int k = p.row_map[a]; k < p.row_map[a + 1]; ++k) {
      s = s + p.vals[std::size_t(k)];
      mag += norm(p.vals[std::size_t(k)]);
    }
    worst = std::max(worst, norm(s) / mag);
  }
  return worst;
}

spk::TriangleMesh equilateral() {
  spk::TriangleMesh m;
  m.vertices = {{0, 0, 0}, {1, 0, 0}, {0.5, std::sqrt(3.0) / 2, 0}};
  m.triangles = {{0, 1, 2}};
  return m;
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("dirac_operator: one equilateral triangle by hand", Device,
                          dirac_equilateral) {
  // A = sqrt(3)/4, e_0 = (-1/2, sqrt(3)/2, 0), e_1 = (-1/2, -sqrt(3)/2, 0), e_2 = (1, 0, 0):
  // e_a e_a = -1, e_a . e_b = -1/2 and e_a x e_b = (0, 0, sqrt(3)/2) for (a, b) cyclic, so
  // -e_a e_b / (4A) is 1/sqrt(3) on the diagonal and (-1/(2 sqrt(3)), 0, 0, -1/2) for cyclic
  // pairs (0,1), (1,2), (2,0), its conjugate for the others; rho adds A rho^2 / 9 = sqrt(3)
  // rho^2 / 36 to every entry and rho / 6 (e_b - e_a) to the imaginary part.
  const double s3 = std::sqrt(3.0);
  for (double r : {0.0, 0.3}) {
    INFO("rho " << r);
    const auto a = spk::dirac_operator<double, Device>(equilateral(), std::vector<double>{r});
    const auto p = plain(a);
    REQUIRE(p.n == 3);
    REQUIRE(p.cols.size() == 9);
    const double c = s3 * r * r / 36;
    const Q diag{1 / s3 + c, 0, 0, 0};
    const Q fwd{-1 / (2 * s3) + c, 0, 0, -0.5};
    const Q bwd{-1 / (2 * s3) + c, 0, 0, 0.5};
    const double e[3][3] = {{-0.5, s3 / 2, 0}, {-0.5, -s3 / 2, 0}, {1, 0, 0}};
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        INFO("entry " << i << ", " << j);
        Q want = i == j ? diag : ((j - i + 3) % 3 == 1 ? fwd : bwd);
        want.x += r / 6 * (e[j][0] - e[i][0]);
        want.y += r / 6 * (e[j][1] - e[i][1]);
        want.z += r / 6 * (e[j][2] - e[i][2]);
        CHECK(max_diff(p.at(i, j), want) <= 4 * eps);
      }
  }
}
TEST_CASE_TEMPLATE_APPLY(dirac_equilateral, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("dirac_operator: shared meshes are Hermitian with zero row sums", Device,
                          dirac_shared) {
  for (const char* name : {"spot.obj", "decimated-knight.off", "beetle.off", "hand.msh"}) {
    INFO(std::string(name));
    const auto mesh = spk::read_triangle_mesh(mesh_path(name));
    const auto with_rho = plain(spk::dirac_operator<double, Device>(mesh));
    check_structure(with_rho, mesh);
    CHECK(hermitian_error(with_rho) <= 16 * eps);
    const auto zero_rho =
        plain(spk::dirac_operator<double, Device>(mesh, std::vector<double>(mesh.n_triangles())));
    CHECK(zero_rho.cols == with_rho.cols);
    CHECK(hermitian_error(zero_rho) <= 16 * eps);
    CHECK(row_sum_error(zero_rho) <= 64 * eps);
    // the potential matters: with rho the rows no longer sum to zero
    CHECK(row_sum_error(with_rho) > 1e3 * eps);
  }
}
TEST_CASE_TEMPLATE_APPLY(dirac_shared, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("dirac_operator: real part is the cotangent Laplacian (rho = 0)", Device,
                          dirac_cotan) {
  // For a != b, Re E(a, b) = -1/2 sum over the triangles on edge (a, b) of the cotangent of the
  // angle opposite the edge (e_a . e_b = -|e_a||e_b| cos(angle at the third vertex) and
  // |e_a x e_b| = 2A); computed here from angles with atan2.
  const auto mesh = spk::read_triangle_mesh(mesh_path("fandisk.obj"));
  const auto rows = spk::vertex_rows(mesh);
  const auto p =
      plain(spk::dirac_operator<double, Device>(mesh, std::vector<double>(mesh.n_triangles())));
  std::vector<double> want(p.cols.size(), 0.0);
  for (const auto& t : mesh.triangles)
    for (int k = 0; k < 3; ++k) {
      const auto& pc = mesh.vertices[t[k]];
      const auto& pa = mesh.vertices[t[(k + 1) % 3]];
      const auto& pb = mesh.vertices[t[(k + 2) % 3]];
      std::array<double, 3> u, v;
      for (int d = 0; d < 3; ++d) {
        u[d] = pa[d] - pc[d];
        v[d] = pb[d] - pc[d];
      }
      const double dot = u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
      const double cx = u[1] * v[2] - u[2] * v[1], cy = u[2] * v[0] - u[0] * v[2],
                   cz = u[0] * v[1] - u[1] * v[0];
      const double angle = std::atan2(std::sqrt(cx * cx + cy * cy + cz * cz), dot);
      const double half_cot = 0.5 / std::tan(angle);
      const int a = rows[t[(k + 1) % 3]], b = rows[t[(k + 2) % 3]];
      want[std::size_t(p.find(a, b))] -= half_cot;
      want[std::size_t(p.find(b, a))] -= half_cot;
      want[std::size_t(p.find(a, a))] += half_cot;
      want[std::size_t(p.find(b, b))] += half_cot;
    }
  double worst = 0;
  for (int a = 0; a < p.n; ++a)
    for (int k = p.row_map[a]; k < p.row_map[a + 1]; ++k)
      worst = std::max(worst, std::abs(p.vals[std::size_t(k)].w - want[std::size_t(k)]) /
                                  std::abs(p.at(a, a).w));
  CHECK(worst <= 1e-10);
}
TEST_CASE_TEMPLATE_APPLY(dirac_cotan, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("dirac_operator: float values are the rounded double ones; device = host",
                          Device, dirac_float) {
  const auto mesh = spk::subdivide(spk::read_triangle_mesh(mesh_path("octopus-low.mesh")), 1);
  const auto d = plain(spk::dirac_operator<double, Device>(mesh));
  const auto h = plain(spk::dirac_operator<double, Host>(mesh));
  const auto f = plain(spk::dirac_operator<float, Device>(mesh));
  CHECK(d.row_map == h.row_map);
  CHECK(d.cols == h.cols);
  CHECK(f.cols == d.cols);
  std::size_t differ = 0, not_rounded = 0;
  for (std::size_t k = 0; k < d.vals.size(); ++k) {
    differ += d.vals[k] == h.vals[k] ? 0 : 1;
    const auto& q = d.vals[k];
    const spk::Quaternion<float> r{float(q.w), float(q.x), float(q.y), float(q.z)};
    not_rounded += f.vals[k] == r ? 0 : 1;
  }
  CHECK(differ == 0);
  CHECK(not_rounded == 0);
}
TEST_CASE_TEMPLATE_APPLY(dirac_float, spk_test::all_devices);

TEST_CASE("dirac_operator: unreferenced vertices get no row; rows in vertex order") {
  spk::TriangleMesh m;
  // vertex 0 and 3 unreferenced; rows: vertex 1 -> 0, 2 -> 1, 4 -> 2
  m.vertices = {{9, 9, 9}, {0, 0, 0}, {1, 0, 0}, {7, 7, 7}, {0.5, std::sqrt(3.0) / 2, 0}};
  m.triangles = {{1, 2, 4}};
  const auto rows = spk::vertex_rows(m);
  CHECK(rows == std::vector<int>{-1, 0, 1, -1, 2});
  const auto a = plain(spk::dirac_operator<double, Host>(m, std::vector<double>{0.3}));
  const auto b = plain(spk::dirac_operator<double, Host>(equilateral(), std::vector<double>{0.3}));
  CHECK(a.n == 3);
  CHECK(a.cols == b.cols);
  for (std::size_t k = 0; k < a.vals.size(); ++k) CHECK(a.vals[k] == b.vals[k]);
}

TEST_CASE("default_dirac_potential: the documented field") {
  const auto mesh = spk::read_triangle_mesh(mesh_path("cow.obj"));
  const auto rho = spk::default_dirac_potential(mesh);
  REQUIRE(rho.size() == mesh.n_triangles());
  double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
  for (const auto& v : mesh.vertices)
    for (int d = 0; d < 3; ++d) {
      lo[d] = std::min(lo[d], v[d]);
      hi[d] = std::max(hi[d], v[d]);
    }
  const double len =
      std::sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                (hi[2] - lo[2]) * (hi[2] - lo[2]));
  double worst = 0, biggest = 0;
  for (std::size_t f = 0; f < rho.size(); ++f) {
    double s = 0;
    for (int v : mesh.triangles[f])
      for (int d = 0; d < 3; ++d) s += mesh.vertices[v][d];
    const double want = 0.1 * std::sin(2 * std::acos(-1.0) * (s / 3) / len);
    worst = std::max(worst, std::abs(rho[f] - want));
    biggest = std::max(biggest, std::abs(rho[f]));
  }
  CHECK(worst <= 1e-15);
  CHECK(biggest <= 0.1);
  CHECK(biggest > 0.05);
  CHECK(spk::default_dirac_potential(mesh) == rho);
}

TEST_CASE("dirac_operator: errors") {
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
  auto m = equilateral();
  m.vertices.push_back({2, 0, 0});
  m.triangles.push_back({1, 3, 0});  // collinear: zero area
  throws([&] { spk::dirac_operator<double, Host>(m, std::vector<double>{0, 0}); }, "triangle 1");
  throws([&] { spk::dirac_operator<double, Host>(m); }, "zero area");
  auto e = equilateral();
  throws(
      [&] {
        spk::dirac_operator<double, Host>(e, std::vector<double>{0, 0});
      },
      "rho has 2 values");
  throws([&] { spk::dirac_operator<double, Host>(e, std::vector<double>{std::nan("")}); },
         "rho of triangle 0");
  e.triangles[0][2] = 3;
  throws([&] { spk::dirac_operator<double, Host>(e); }, "vertex 3");
  const spk::TriangleMesh empty;
  const auto z = spk::dirac_operator<double, Host>(empty);
  CHECK(z.nrows() == 0);
  CHECK(z.nnz() == 0);
}
