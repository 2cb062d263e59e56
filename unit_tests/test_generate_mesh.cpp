// Tests of spk/mesh/generate_mesh.hpp: vertex and element counts, coordinates, total area and
// volume, positive orientation of every element, conformity (every interior edge or face shared
// by exactly two elements, the others on the boundary, Euler characteristic 1) and the errors.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include <spk/mesh/generate_mesh.hpp>

#include "test_common.hpp"

namespace {

/// Number of elements on each sorted k-subset of vertices (edges of triangles, faces of
/// tetrahedra).
template <std::size_t K, std::size_t M>
std::map<std::array<int, M>, int> count_subsets(
    const std::vector<std::array<int, K>>& elements,
    const std::vector<std::array<int, M>>& local_subsets) {
  std::map<std::array<int, M>, int> count;
  for (const auto& e : elements)
    for (const auto& s : local_subsets) {
      std::array<int, M> key;
      for (std::size_t i = 0; i < M; ++i) key[i] = e[std::size_t(s[i])];
      std::sort(key.begin(), key.end());
      ++count[key];
    }
  return count;
}

/// Signed area of triangle t seen from +z.
double signed_area_z(const spk::TriangleMesh& m, std::size_t t) {
  const auto& p = m.vertices;
  const auto& f = m.triangles[t];
  return 0.5 * ((p[f[1]][0] - p[f[0]][0]) * (p[f[2]][1] - p[f[0]][1]) -
                (p[f[1]][1] - p[f[0]][1]) * (p[f[2]][0] - p[f[0]][0]));
}

bool on_box_boundary(const std::array<double, 3>& p, const std::array<double, 3>& l, int axis) {
  return p[std::size_t(axis)] == 0.0 || p[std::size_t(axis)] == l[std::size_t(axis)];
}

}  // namespace

TEST_CASE("plate_mesh: counts, coordinates, area, orientation and conformity") {
  for (const auto& c : std::vector<std::array<int, 2>>{{1, 1}, {3, 2}, {1, 5}, {17, 11}}) {
    const int nx = c[0], ny = c[1];
    const double lx = 2.0, ly = 1.5;
    CAPTURE(nx);
    CAPTURE(ny);
    const auto m = spk::plate_mesh(nx, ny, lx, ly);
    REQUIRE(m.n_vertices() == std::size_t((nx + 1) * (ny + 1)));
    REQUIRE(m.n_triangles() == std::size_t(2 * nx * ny));
    spk::check_mesh(m);
    // x-fastest numbering
    const auto& v = m.vertices[std::size_t(ny * (nx + 1) + 1)];
    CHECK(v[0] == doctest::Approx(lx / nx));
    CHECK(v[1] == ly);
    CHECK(v[2] == 0.0);
    CHECK(m.vertices.back() == std::array<double, 3>{lx, ly, 0.0});
    CHECK(spk::surface_area(m) == doctest::Approx(lx * ly));
    double min_area = std::numeric_limits<double>::max();
    for (std::size_t t = 0; t < m.n_triangles(); ++t)
      min_area = std::min(min_area, signed_area_z(m, t));
    CHECK(min_area == doctest::Approx(lx * ly / (2.0 * nx * ny)));
    // conformity: interior edges in two triangles, boundary edges (on the rectangle's sides)
    // in one; each directed edge at most once (consistent orientation); V - E + F = 1
    const auto edges = count_subsets<3, 2>(m.triangles, {{{0, 1}}, {{1, 2}}, {{2, 0}}});
    int boundary = 0, bad = 0;
    for (const auto& e : edges) {
      const auto& p = m.vertices[std::size_t(e.first[0])];
      const auto& q = m.vertices[std::size_t(e.first[1])];
      const bool side = (p[0] == q[0] && (p[0] == 0.0 || p[0] == lx)) ||
                        (p[1] == q[1] && (p[1] == 0.0 || p[1] == ly));
      if (e.second == 1 && side) ++boundary;
      if (e.second != (side ? 1 : 2)) ++bad;
    }
    CHECK(bad == 0);
    CHECK(boundary == 2 * (nx + ny));
    std::map<std::pair<int, int>, int> half_edges;
    for (const auto& t : m.triangles)
      for (int k = 0; k < 3; ++k) ++half_edges[{t[std::size_t(k)], t[std::size_t((k + 1) % 3)]}];
    int repeated = 0;
    for (const auto& h : half_edges) repeated += h.second > 1;
    CHECK(repeated == 0);
    CHECK(std::int64_t(m.n_vertices()) - std::int64_t(edges.size()) +
              std::int64_t(m.n_triangles()) ==
          1);
  }
}

TEST_CASE("cube_mesh: counts, volume, positive orientation and conformity") {
  for (const auto& c : std::vector<std::array<int, 3>>{{1, 1, 1}, {3, 2, 4}, {5, 1, 2}}) {
    const int nx = c[0], ny = c[1], nz = c[2];
    const std::array<double, 3> l{1.0, 2.0, 0.5};
    CAPTURE(nx);
    CAPTURE(ny);
    CAPTURE(nz);
    const auto m = spk::cube_mesh(nx, ny, nz, l[0], l[1], l[2]);
    REQUIRE(m.n_vertices() == std::size_t((nx + 1) * (ny + 1) * (nz + 1)));
    REQUIRE(m.n_tetrahedra() == std::size_t(6 * nx * ny * nz));
    spk::check_mesh(m);
    const auto& v = m.vertices[std::size_t(((nz * (ny + 1)) + 1) * (nx + 1) + nx)];
    CHECK(v[0] == l[0]);
    CHECK(v[1] == doctest::Approx(l[1] / ny));
    CHECK(v[2] == l[2]);
    CHECK(spk::volume(m) == doctest::Approx(l[0] * l[1] * l[2]));
    const double cell = l[0] * l[1] * l[2] / (6.0 * nx * ny * nz);
    int wrong_volume = 0;
    double min_volume = std::numeric_limits<double>::max();
    for (std::size_t t = 0; t < m.n_tetrahedra(); ++t) {
      const double vol = spk::tetrahedron_signed_volume(m, t);
      min_volume = std::min(min_volume, vol);
      wrong_volume += std::abs(vol - cell) > 1e-12 * cell;
    }
    CHECK(min_volume > 0);
    CHECK(wrong_volume == 0);
    // conformity: interior faces in two tetrahedra, faces on the box's sides in one, and each
    // box side square cut into two triangles; V - E + F - T = 1
    const auto faces =
        count_subsets<4, 3>(m.tetrahedra, {{{0, 1, 2}}, {{0, 1, 3}}, {{0, 2, 3}}, {{1, 2, 3}}});
    int boundary = 0, bad = 0;
    for (const auto& f : faces) {
      bool side = false;
      for (int axis = 0; axis < 3; ++axis) {
        const auto& p0 = m.vertices[std::size_t(f.first[0])];
        bool all = true;
        for (int k = 0; k < 3; ++k) {
          const auto& p = m.vertices[std::size_t(f.first[std::size_t(k)])];
          all = all && on_box_boundary(p, l, axis) && p[std::size_t(axis)] == p0[std::size_t(axis)];
        }
        side = side || all;
      }
      if (f.second == 1 && side) ++boundary;
      if (f.second != (side ? 1 : 2)) ++bad;
    }
    CHECK(bad == 0);
    CHECK(boundary == 4 * (nx * ny + ny * nz + nz * nx));
    const auto edges = count_subsets<4, 2>(
        m.tetrahedra, {{{0, 1}}, {{0, 2}}, {{0, 3}}, {{1, 2}}, {{1, 3}}, {{2, 3}}});
    CHECK(std::int64_t(m.n_vertices()) - std::int64_t(edges.size()) + std::int64_t(faces.size()) -
              std::int64_t(m.n_tetrahedra()) ==
          1);
  }
}

TEST_CASE("plate_mesh and cube_mesh: invalid sizes and lengths throw, naming the value") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH_AS(spk::plate_mesh(0, 3), doctest::Contains("spk::plate_mesh: nx = 0"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::plate_mesh(2, -4), doctest::Contains("ny = -4"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::plate_mesh(2, 2, -1.5), doctest::Contains("lx = -1.5"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::plate_mesh(2, 2, 1.0, 0.0), doctest::Contains("ly = 0"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::plate_mesh(2, 2, nan), doctest::Contains("lx = nan"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::plate_mesh(std::numeric_limits<int>::max(), 1),
                       doctest::Contains("vertices, more than int"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::plate_mesh(40000, 40000),
                       doctest::Contains("2 * 40000 * 40000 triangles"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::cube_mesh(1, 0, 1), doctest::Contains("spk::cube_mesh: ny = 0"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::cube_mesh(1, 1, -2), doctest::Contains("nz = -2"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::cube_mesh(1, 1, 1, 1, 1, inf), doctest::Contains("lz = inf"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::cube_mesh(1, 1, 1, 1, -nan, 1), doctest::Contains("ly = "),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::cube_mesh(2000, 2000, 2000),
                       doctest::Contains("2001 * 2001 * 2001 vertices"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::cube_mesh(1000, 1000, 400),
                       doctest::Contains("6 * 1000 * 1000 * 400 tetrahedra"),
                       std::invalid_argument);
  CHECK_NOTHROW(spk::cube_mesh(1, 1, 1, 1e-300, 1e300, 1));
}
