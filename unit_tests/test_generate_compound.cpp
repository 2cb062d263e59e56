// Tests of spk/compound/generate_compound.hpp on every backend: the complex-shifted Helmholtz
// matrix against a grid reference written here (entries, sorted columns, nnz formula, complex
// symmetry, float version, size checks), and the mesh-file builders against reading,
// subdividing and assembling step by step, with the sizes of a closed surface refined once
// (V + E rows, V' + 2 E' entries with E' = 2E + 3F) and of a refined tetrahedral mesh.
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <spk/compound/generate_compound.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "test_common.hpp"

namespace {

std::string mesh_path(const std::string& name) { return spk_test::data_dir() + "/meshes/" + name; }

/// Host copies of the three arrays of a CSR matrix.
template <class S, class D>
struct Plain {
  int n = 0;
  std::vector<int> row_map, cols;
  std::vector<S> vals;
  explicit Plain(const spk::CsrMatrix<S, int, int, D>& a) {
    const auto h = spk::to_host(a);
    n = h.nrows();
    row_map.assign(h.row_map().data(), h.row_map().data() + h.row_map().extent(0));
    cols.assign(h.col_idx().data(), h.col_idx().data() + h.col_idx().extent(0));
    vals.assign(h.values().data(), h.values().data() + h.values().extent(0));
  }
};

/// The Helmholtz matrix of the documented formula, one ordered map per row.
template <class Real>
std::vector<std::map<int, Kokkos::complex<Real>>> helmholtz_reference(
    int n, const spk::HelmholtzOptions& o) {
  const double k2 = o.kh * o.kh;
  std::vector<std::map<int, Kokkos::complex<Real>>> rows(std::size_t(n) * n * n);
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const int i = x + n * (y + n * z);
        auto& r = rows[std::size_t(i)];
        r[i] = Kokkos::complex<Real>(Real(6 - k2 * o.shift_real), Real(k2 * o.shift_imag));
        const int d[6][3] = {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};
        for (const auto& s : d) {
          const int xx = x + s[0], yy = y + s[1], zz = z + s[2];
          if (xx >= 0 && xx < n && yy >= 0 && yy < n && zz >= 0 && zz < n)
            r[xx + n * (yy + n * zz)] = Kokkos::complex<Real>(Real(-1), Real(0));
        }
      }
  return rows;
}

template <class Real, class Device>
void check_helmholtz(int n, const spk::HelmholtzOptions& o) {
  INFO("n = " << n << ", kh = " << o.kh);
  const Plain<Kokkos::complex<Real>, Device> a(
      spk::generate_complex_helmholtz<Real, int, int, Device>(n, o));
  const auto ref = helmholtz_reference<Real>(n, o);
  REQUIRE(a.n == int(ref.size()));
  CHECK(std::int64_t(a.cols.size()) == 7 * std::int64_t(n) * n * n - 6 * std::int64_t(n) * n);
  std::size_t wrong = 0, asym = 0;
  for (int i = 0; i < a.n; ++i) {
    const auto& r = ref[std::size_t(i)];
    if (a.row_map[i + 1] - a.row_map[i] != int(r.size())) {
      ++wrong;
      continue;
    }
    int k = a.row_map[i];
    for (const auto& e : r) {
      wrong += a.cols[std::size_t(k)] == e.first && a.vals[std::size_t(k)] == e.second ? 0 : 1;
      asym += ref[std::size_t(e.first)].at(i) == e.second ? 0 : 1;  // complex symmetric
      ++k;
    }
  }
  CHECK(wrong == 0);
  CHECK(asym == 0);
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("generate_complex_helmholtz: entries against the grid reference", Device,
                          gen_helmholtz) {
  for (int n : {0, 1, 2, 5, 9}) {
    check_helmholtz<double, Device>(n, spk::HelmholtzOptions());
    check_helmholtz<float, Device>(n, spk::HelmholtzOptions());
  }
  spk::HelmholtzOptions o;
  o.kh = 0.8;
  o.shift_real = 0.5;
  o.shift_imag = -1.25;
  check_helmholtz<double, Device>(6, o);
  // the default diagonal: 6 - 0.25 + 0.125 i
  const Plain<Kokkos::complex<double>, Device> one(
      spk::generate_complex_helmholtz<double, int, int, Device>(1));
  REQUIRE(one.vals.size() == 1);
  CHECK(one.vals[0] == Kokkos::complex<double>(5.75, 0.125));
}
TEST_CASE_TEMPLATE_APPLY(gen_helmholtz, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("generate_complex_helmholtz: sizes are checked before allocating", Device,
                          gen_helmholtz_sizes) {
  // 2000^3 rows do not fit int; 1000^3 rows do but 7 n^3 entries do not
  CHECK_THROWS_AS((spk::generate_complex_helmholtz<double, int, int, Device>(2000)),
                  std::invalid_argument);
  CHECK_THROWS_AS((spk::generate_complex_helmholtz<double, int, int, Device>(1000)),
                  std::invalid_argument);
  CHECK_THROWS_AS((spk::generate_complex_helmholtz<double, int, int, Device>(-1)),
                  std::invalid_argument);
  spk::HelmholtzOptions bad;
  bad.kh = std::nan("");
  CHECK_THROWS_AS((spk::generate_complex_helmholtz<double, int, int, Device>(3, bad)),
                  std::invalid_argument);
  const auto big = spk::generate_complex_helmholtz<float, std::int64_t, std::int64_t, Device>(40);
  CHECK(big.nrows() == 64000);
  CHECK(big.nnz() == 7 * 64000 - 6 * 1600);
}
TEST_CASE_TEMPLATE_APPLY(gen_helmholtz_sizes, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("quaternion_mesh_matrix: read, subdivide, assemble", Device,
                          gen_quaternion_mesh) {
  using Q = spk::Quaternion<double>;
  for (int levels : {0, 1}) {
    INFO("levels " << levels);
    const Plain<Q, Device> a(
        spk::quaternion_mesh_matrix<double, Device>(mesh_path("spot.obj"), levels));
    auto mesh = spk::subdivide(spk::read_triangle_mesh(mesh_path("spot.obj")), levels);
    if (levels > 0) mesh = spk::renumber_by_first_reference(mesh);
    const Plain<Q, Device> b(spk::dirac_operator<double, Device>(mesh));
    CHECK(a.row_map == b.row_map);
    CHECK(a.cols == b.cols);
    std::size_t differ = 0;
    for (std::size_t k = 0; k < a.vals.size(); ++k) differ += a.vals[k] == b.vals[k] ? 0 : 1;
    CHECK(differ == 0);
  }
  // armadillo is closed: E = 3F/2; once refined V' = V + E, E' = 2E + 3F, nnz = V' + 2 E'
  const auto m = spk::read_triangle_mesh(mesh_path("armadillo.obj"));
  const std::int64_t v = std::int64_t(m.n_vertices()), f = std::int64_t(m.n_triangles());
  const std::int64_t e = 3 * f / 2;
  const auto q = spk::quaternion_mesh_matrix<float, Device>(mesh_path("armadillo.obj"), 1);
  CHECK(q.nrows() == v + e);
  CHECK(q.nnz() == (v + e) + 2 * (2 * e + 3 * f));
}
TEST_CASE_TEMPLATE_APPLY(gen_quaternion_mesh, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("elasticity_mesh_matrix: read, subdivide, assemble", Device,
                          gen_elasticity_mesh) {
  using B = spk::Block<double, 3>;
  const spk::ElasticMaterial steel{210e9, 0.3};
  const Plain<B, Device> a(
      spk::elasticity_mesh_matrix<double, Device>(mesh_path("femur_interior.1.ele"), 1, steel));
  const auto mesh = spk::renumber_by_first_reference(
      spk::subdivide(spk::read_tet_mesh(mesh_path("femur_interior.1")), 1));
  const Plain<B, Device> b(spk::elasticity_stiffness<double, Device>(mesh, steel));
  CHECK(a.row_map == b.row_map);
  CHECK(a.cols == b.cols);
  std::size_t differ = 0;
  for (std::size_t k = 0; k < a.vals.size(); ++k)
    for (int i = 0; i < 9; ++i) differ += a.vals[k].a[i] == b.vals[k].a[i] ? 0 : 1;
  CHECK(differ == 0);
  // every vertex of the refined mesh is referenced: V + E rows
  const auto m0 = spk::read_tet_mesh(mesh_path("femur_interior.1"));
  std::set<std::pair<int, int>> edges;
  for (const auto& t : m0.tetrahedra)
    for (int p = 0; p < 4; ++p)
      for (int q = p + 1; q < 4; ++q) edges.insert({std::min(t[p], t[q]), std::max(t[p], t[q])});
  CHECK(a.n == int(m0.n_vertices() + edges.size()));
  CHECK_THROWS_AS((spk::elasticity_mesh_matrix<double, Device>(mesh_path("spot.obj"))),
                  std::invalid_argument);
}
TEST_CASE_TEMPLATE_APPLY(gen_elasticity_mesh, spk_test::all_devices);
