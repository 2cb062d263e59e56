// Tests of spk/mesh/subdivide.hpp: hand-checked single elements, and on the shared meshes the
// counts (V + E vertices, 4F / 8T elements, with E counted here independently), preserved area,
// enclosed volume and tetrahedral volume, orientation of every child, watertight surfaces staying
// watertight, open boundaries splitting in two, and conforming tetrahedral meshes staying
// conforming (boundary faces x 4, boundary area kept).
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <spk/io/mesh_io.hpp>
#include <spk/mesh/mesh.hpp>
#include <spk/mesh/subdivide.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "test_common.hpp"

namespace {

using Tri = std::array<int, 3>;
using Tet = std::array<int, 4>;
using Vec3 = std::array<double, 3>;

std::string mesh_path(const std::string& name) { return spk_test::data_dir() + "/meshes/" + name; }

/// Distinct undirected edges of a set of elements.
template <class Element>
std::size_t count_edges(const std::vector<Element>& elements) {
  std::set<std::pair<int, int>> edges;
  for (const auto& e : elements)
    for (std::size_t a = 0; a < e.size(); ++a)
      for (std::size_t b = a + 1; b < e.size(); ++b)
        edges.insert({std::min(e[a], e[b]), std::max(e[a], e[b])});
  return edges.size();
}

/// Every directed edge appears once and its reverse once: closed, manifold, oriented.
bool is_watertight(const spk::TriangleMesh& m) {
  std::map<std::pair<int, int>, int> directed;
  for (const auto& t : m.triangles)
    for (int k = 0; k < 3; ++k) ++directed[{t[k], t[(k + 1) % 3]}];
  for (const auto& e : directed) {
    if (e.second != 1) return false;
    const auto r = directed.find({e.first.second, e.first.first});
    if (r == directed.end() || r->second != 1) return false;
  }
  return true;
}

/// Undirected edges used by exactly one triangle.
std::size_t boundary_edges(const spk::TriangleMesh& m) {
  std::map<std::pair<int, int>, int> uses;
  for (const auto& t : m.triangles)
    for (int k = 0; k < 3; ++k)
      ++uses[{std::min(t[k], t[(k + 1) % 3]), std::max(t[k], t[(k + 1) % 3])}];
  std::size_t n = 0;
  for (const auto& e : uses) n += e.second == 1 ? 1 : 0;
  return n;
}

Vec3 normal(const spk::TriangleMesh& m, const Tri& t) {
  const auto& p = m.vertices;
  const Vec3 a{p[t[1]][0] - p[t[0]][0], p[t[1]][1] - p[t[0]][1], p[t[1]][2] - p[t[0]][2]};
  const Vec3 b{p[t[2]][0] - p[t[0]][0], p[t[2]][1] - p[t[0]][1], p[t[2]][2] - p[t[0]][2]};
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

/// Faces of a tetrahedral mesh (sorted vertex triples) and how many tetrahedra use each.
std::map<std::array<int, 3>, int> tet_faces(const spk::TetMesh& m) {
  std::map<std::array<int, 3>, int> faces;
  for (const auto& t : m.tetrahedra)
    for (int skip = 0; skip < 4; ++skip) {
      std::array<int, 3> f;
      int k = 0;
      for (int j = 0; j < 4; ++j)
        if (j != skip) f[std::size_t(k++)] = t[std::size_t(j)];
      std::sort(f.begin(), f.end());
      ++faces[f];
    }
  return faces;
}

/// Faces used by one tetrahedron (the boundary) and their total area.
std::pair<std::size_t, double> tet_boundary(const spk::TetMesh& m) {
  spk::TriangleMesh b;
  b.vertices = m.vertices;
  std::size_t overused = 0;  // conforming: a face is shared by at most two tetrahedra
  for (const auto& f : tet_faces(m)) {
    overused += f.second > 2 ? 1 : 0;
    if (f.second == 1) b.triangles.push_back(f.first);
  }
  CHECK(overused == 0);
  return {b.triangles.size(), spk::surface_area(b)};
}

Vec3 midpoint(const Vec3& a, const Vec3& b) {
  return {0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1]), 0.5 * (a[2] + b[2])};
}

}  // namespace

TEST_CASE("one triangle: midpoints, children, area") {
  spk::TriangleMesh m;
  m.vertices = {{0, 0, 0}, {2, 0, 0}, {0, 2, 1}};
  m.triangles = {{0, 1, 2}};
  const auto r = spk::subdivide(m);
  REQUIRE(r.n_vertices() == 6);
  REQUIRE(r.n_triangles() == 4);
  // edges in (lower, upper) order: (0,1) -> 3, (0,2) -> 4, (1,2) -> 5
  CHECK(r.vertices[3] == midpoint(m.vertices[0], m.vertices[1]));
  CHECK(r.vertices[4] == midpoint(m.vertices[0], m.vertices[2]));
  CHECK(r.vertices[5] == midpoint(m.vertices[1], m.vertices[2]));
  CHECK(r.triangles[0] == Tri{0, 3, 4});
  CHECK(r.triangles[1] == Tri{3, 1, 5});
  CHECK(r.triangles[2] == Tri{4, 5, 2});
  CHECK(r.triangles[3] == Tri{3, 5, 4});
  const double a = spk::surface_area(m);
  for (std::size_t t = 0; t < 4; ++t) CHECK(spk::triangle_area(r, t) == doctest::Approx(a / 4));
  const auto r2 = spk::subdivide(m, 2);
  CHECK(r2.n_vertices() == 15);
  CHECK(r2.n_triangles() == 16);
  CHECK(spk::surface_area(r2) == doctest::Approx(a).epsilon(1e-14));
}

TEST_CASE("two triangles share their edge's midpoint; unreferenced vertices are kept") {
  spk::TriangleMesh m;
  m.vertices = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {5, 5, 5}};
  m.triangles = {{0, 1, 2}, {0, 2, 3}};
  const auto r = spk::subdivide(m);
  CHECK(r.n_vertices() == 5 + 5);
  CHECK(r.n_triangles() == 8);
  CHECK(r.vertices[4] == Vec3{5, 5, 5});
  CHECK(boundary_edges(r) == 8);
}

TEST_CASE("closed shared surfaces: counts, area, volume, orientation, watertightness") {
  for (const char* name : {"bunny.off", "decimated-knight.off", "spot.obj", "cow.obj",
                           "fandisk.obj", "fertility.off"}) {
    INFO(std::string(name));
    const auto m = spk::read_triangle_mesh(mesh_path(name));
    REQUIRE(is_watertight(m));
    const double area = spk::surface_area(m);
    const double vol = spk::enclosed_volume(m);
    spk::TriangleMesh prev = m;
    for (int level = 1; level <= 2; ++level) {
      INFO("level " << level);
      const auto r = spk::subdivide(m, level);
      CHECK(r.n_vertices() == prev.n_vertices() + count_edges(prev.triangles));
      CHECK(r.n_triangles() == 4 * prev.n_triangles());
      CHECK(std::abs(spk::surface_area(r) - area) <= 1e-12 * area);
      CHECK(std::abs(spk::enclosed_volume(r) - vol) <= 1e-11 * std::abs(vol));
      CHECK(is_watertight(r));
      prev = r;
    }
    // each child's normal is a quarter of its parent's (same plane, same orientation)
    const auto r = spk::subdivide(m);
    double worst = 0;
    for (std::size_t t = 0; t < m.n_triangles(); ++t) {
      const Vec3 n = normal(m, m.triangles[t]);
      const double len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
      for (std::size_t c = 0; c < 4; ++c) {
        const Vec3 nc = normal(r, r.triangles[4 * t + c]);
        for (int d = 0; d < 3; ++d) worst = std::max(worst, std::abs(4 * nc[d] - n[d]) / len);
      }
    }
    CHECK(worst <= 1e-12);
  }
}

TEST_CASE("open shared surfaces: every boundary edge splits in two") {
  for (const char* name : {"beetle.off", "camelhead.off", "stanford-bunny.obj"}) {
    INFO(std::string(name));
    const auto m = spk::read_triangle_mesh(mesh_path(name));
    const auto r = spk::subdivide(m);
    const std::size_t b = boundary_edges(m);
    CHECK(b > 0);
    CHECK(boundary_edges(r) == 2 * b);
    CHECK(r.n_vertices() == m.n_vertices() + count_edges(m.triangles));
    CHECK(std::abs(spk::surface_area(r) - spk::surface_area(m)) <= 1e-12 * spk::surface_area(m));
  }
}

TEST_CASE("one tetrahedron, both orientations: 8 children of 1/8 volume and the same sign") {
  for (bool flip : {false, true}) {
    INFO("flipped " << flip);
    spk::TetMesh m;
    m.vertices = {{0.1, 0, 0}, {1, 0.2, 0}, {0, 1, 0.3}, {0.2, 0.1, 1.5}};
    m.tetrahedra = {flip ? Tet{1, 0, 2, 3} : Tet{0, 1, 2, 3}};
    const double v = spk::tetrahedron_signed_volume(m, 0);
    const auto r = spk::subdivide(m);
    REQUIRE(r.n_vertices() == 10);
    REQUIRE(r.n_tetrahedra() == 8);
    // edges (0,1) (0,2) (0,3) (1,2) (1,3) (2,3) -> vertices 4..9
    CHECK(r.vertices[4] == midpoint(m.vertices[0], m.vertices[1]));
    CHECK(r.vertices[9] == midpoint(m.vertices[2], m.vertices[3]));
    for (std::size_t t = 0; t < 8; ++t)
      CHECK(spk::tetrahedron_signed_volume(r, t) == doctest::Approx(v / 8).epsilon(1e-13));
    CHECK(tet_faces(r).size() == 4 * 4 + 8);  // 16 boundary faces, 8 inner ones
    CHECK(tet_boundary(r).first == 16);
  }
}

TEST_CASE("shared tetrahedral meshes: counts, volume, orientation, conformity") {
  for (const char* name : {"femur_interior.1.ele", "octopus-low.mesh", "hand.msh"}) {
    INFO(std::string(name));
    const auto m = spk::read_tet_mesh(mesh_path(name));
    const auto r = spk::subdivide(m);
    CHECK(r.n_vertices() == m.n_vertices() + count_edges(m.tetrahedra));
    REQUIRE(r.n_tetrahedra() == 8 * m.n_tetrahedra());
    const double vol = spk::volume(m);
    CHECK(std::abs(spk::volume(r) - vol) <= 1e-12 * vol);
    std::size_t bad = 0;
    for (std::size_t t = 0; t < m.n_tetrahedra(); ++t) {
      const double v = spk::tetrahedron_signed_volume(m, t);
      for (std::size_t c = 0; c < 8; ++c) {
        const double vc = spk::tetrahedron_signed_volume(r, 8 * t + c);
        if (!(std::abs(8 * vc - v) <= 1e-9 * std::abs(v))) ++bad;
      }
    }
    CHECK(bad == 0);
    const auto b0 = tet_boundary(m);
    const auto b1 = tet_boundary(r);
    CHECK(b1.first == 4 * b0.first);
    CHECK(std::abs(b1.second - b0.second) <= 1e-12 * b0.second);
  }
  const auto f2 = spk::subdivide(spk::read_tet_mesh(mesh_path("femur_interior.1")), 2);
  CHECK(f2.n_tetrahedra() == 64 * 6906);
  CHECK(std::abs(spk::volume(f2) - spk::volume(spk::read_tet_mesh(
                                       mesh_path("femur_interior.1")))) <= 1e-11 * spk::volume(f2));
}

TEST_CASE("subdivide: levels 0, invalid arguments") {
  spk::TriangleMesh m;
  m.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  m.triangles = {{0, 1, 2}};
  const auto same = spk::subdivide(m, 0);
  CHECK(same.vertices == m.vertices);
  CHECK(same.triangles == m.triangles);
  CHECK_THROWS_AS(spk::subdivide(m, -1), std::invalid_argument);
  m.triangles = {{0, 1, 3}};
  CHECK_THROWS_WITH_AS(spk::subdivide(m), doctest::Contains("vertex 3"), std::invalid_argument);
  m.triangles = {{0, 1, 2}, {0, 1, 1}};
  CHECK_THROWS_WITH_AS(spk::subdivide(m), doctest::Contains("triangle 1"), std::invalid_argument);
  spk::TetMesh t;
  t.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  t.tetrahedra = {{0, 1, 2, 3}, {0, 1, 2, 2}};
  CHECK_THROWS_WITH_AS(spk::subdivide(t), doctest::Contains("tetrahedron 1"),
                       std::invalid_argument);
  t.tetrahedra = {{0, 1, 2, -1}};
  CHECK_THROWS_WITH_AS(spk::subdivide(t), doctest::Contains("vertex -1"), std::invalid_argument);
}
