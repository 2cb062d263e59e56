// Tests of spk/mesh/reorder.hpp: the first-reference numbering is a permutation, keeps every
// element's geometry and orientation, numbers by first reference, and puts unreferenced vertices
// last; on a refined shared mesh it shortens the index distance between neighbours. The RCM,
// Morton and spectral numberings are permutations that cut the bandwidth and profile of a
// random numbering (generated and shared meshes), handle several components and unreferenced
// vertices; renumbered keeps the elements, their geometry and orientation.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <spk/io/mesh_io.hpp>
#include <spk/mesh/generate_mesh.hpp>
#include <spk/mesh/reorder.hpp>
#include <spk/mesh/subdivide.hpp>

#include "test_common.hpp"

namespace {

/// Mean |i - j| over the edges of the elements (the index distance of neighbouring vertices).
template <std::size_t K>
double mean_edge_distance(const std::vector<std::array<int, K>>& elements) {
  double sum = 0;
  std::size_t n = 0;
  for (const auto& e : elements)
    for (std::size_t p = 0; p < K; ++p)
      for (std::size_t q = p + 1; q < K; ++q, ++n) sum += std::abs(double(e[p]) - double(e[q]));
  return n ? sum / double(n) : 0.0;
}

}  // namespace

TEST_CASE("renumber_by_first_reference: a hand-checked triangle mesh") {
  spk::TriangleMesh m;
  m.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {5, 5, 5}};  // vertex 4 unused
  m.triangles = {{3, 1, 2}, {1, 0, 2}};
  const auto r = spk::renumber_by_first_reference(m);
  // first references: 3 -> 0, 1 -> 1, 2 -> 2, 0 -> 3; the unused vertex last
  REQUIRE(r.triangles.size() == 2);
  CHECK(r.triangles[0] == std::array<int, 3>{0, 1, 2});
  CHECK(r.triangles[1] == std::array<int, 3>{1, 3, 2});
  CHECK(r.vertices[0] == m.vertices[3]);
  CHECK(r.vertices[3] == m.vertices[0]);
  CHECK(r.vertices[4] == m.vertices[4]);
  spk::TriangleMesh bad = m;
  bad.triangles[1][2] = 7;
  CHECK_THROWS_WITH_AS(spk::renumber_by_first_reference(bad), doctest::Contains("vertex 7"),
                       std::invalid_argument);
}

TEST_CASE("renumber_by_first_reference: refined shared meshes keep geometry, gain locality") {
  const std::string dir = spk_test::data_dir() + "/meshes/";
  const auto tri = spk::subdivide(spk::read_triangle_mesh(dir + "spot.obj"), 2);
  const auto rt = spk::renumber_by_first_reference(tri);
  REQUIRE(rt.vertices.size() == tri.vertices.size());
  REQUIRE(rt.triangles.size() == tri.triangles.size());
  bool same = true;  // element k has the same corner coordinates, in the same order
  for (std::size_t k = 0; k < tri.triangles.size(); ++k)
    for (int c = 0; c < 3; ++c)
      same = same && rt.vertices[std::size_t(rt.triangles[k][c])] ==
                         tri.vertices[std::size_t(tri.triangles[k][c])];
  CHECK(same);
  std::vector<int> seen(rt.vertices.size(), 0);  // a permutation: every index used once
  for (const auto& t : rt.triangles)
    for (int v : t) seen[std::size_t(v)] = 1;
  CHECK(std::count(seen.begin(), seen.end(), 1) == std::ptrdiff_t(rt.vertices.size()));
  CHECK(mean_edge_distance(rt.triangles) < 0.5 * mean_edge_distance(tri.triangles));

  const auto tet = spk::subdivide(spk::read_tet_mesh(dir + "femur_interior.1"), 2);
  const auto rtet = spk::renumber_by_first_reference(tet);
  same = rtet.tetrahedra.size() == tet.tetrahedra.size();
  for (std::size_t k = 0; same && k < tet.tetrahedra.size(); ++k)
    for (int c = 0; c < 4; ++c)
      same = same && rtet.vertices[std::size_t(rtet.tetrahedra[k][c])] ==
                         tet.vertices[std::size_t(tet.tetrahedra[k][c])];
  CHECK(same);
  CHECK(mean_edge_distance(rtet.tetrahedra) < mean_edge_distance(tet.tetrahedra));
  MESSAGE("mean edge index distance: spot~2 " << mean_edge_distance(tri.triangles) << " -> "
                                              << mean_edge_distance(rt.triangles) << ", femur~2 "
                                              << mean_edge_distance(tet.tetrahedra) << " -> "
                                              << mean_edge_distance(rtet.tetrahedra));
}

// --- graph orderings: rcm_numbering, morton_numbering, spectral_numbering, random_numbering,
// renumbered, mesh_bandwidth, mesh_profile ------------------------------------------------------

namespace {

bool is_permutation_of(const std::vector<int>& index, std::size_t n) {
  if (index.size() != n) return false;
  std::vector<char> seen(n, 0);
  for (int k : index) {
    if (k < 0 || std::size_t(k) >= n || seen[std::size_t(k)]) return false;
    seen[std::size_t(k)] = 1;
  }
  return true;
}

/// Each element as its corner coordinates in local order, sorted: equal for two meshes exactly
/// when they have the same elements (node sets, corner order, so orientation) up to numbering.
template <class Mesh, std::size_t K>
std::vector<std::array<std::array<double, 3>, K>> element_corners(
    const Mesh& m, const std::vector<std::array<int, K>>& elements) {
  std::vector<std::array<std::array<double, 3>, K>> out;
  for (const auto& e : elements) {
    std::array<std::array<double, 3>, K> c;
    for (std::size_t k = 0; k < K; ++k) c[k] = m.vertices[std::size_t(e[k])];
    out.push_back(c);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Checks that r is m renumbered by new_index: vertices moved, same elements (with the same
/// corner order) and geometry, elements sorted by their smallest vertex.
void check_renumbered(const spk::TriangleMesh& m, const spk::TriangleMesh& r,
                      const std::vector<int>& new_index) {
  REQUIRE(r.vertices.size() == m.vertices.size());
  REQUIRE(r.triangles.size() == m.triangles.size());
  bool moved = true;
  for (std::size_t v = 0; v < m.vertices.size(); ++v)
    moved = moved && r.vertices[std::size_t(new_index[v])] == m.vertices[v];
  CHECK(moved);
  CHECK(element_corners(r, r.triangles) == element_corners(m, m.triangles));
  CHECK(spk::surface_area(r) == doctest::Approx(spk::surface_area(m)));
  bool sorted = true;
  for (std::size_t t = 1; t < r.triangles.size(); ++t)
    sorted = sorted && *std::min_element(r.triangles[t - 1].begin(), r.triangles[t - 1].end()) <=
                           *std::min_element(r.triangles[t].begin(), r.triangles[t].end());
  CHECK(sorted);
}

void check_renumbered_tet(const spk::TetMesh& m, const spk::TetMesh& r,
                          const std::vector<int>& new_index) {
  REQUIRE(r.vertices.size() == m.vertices.size());
  REQUIRE(r.tetrahedra.size() == m.tetrahedra.size());
  bool moved = true;
  for (std::size_t v = 0; v < m.vertices.size(); ++v)
    moved = moved && r.vertices[std::size_t(new_index[v])] == m.vertices[v];
  CHECK(moved);
  CHECK(element_corners(r, r.tetrahedra) == element_corners(m, m.tetrahedra));
  CHECK(spk::volume(r) == doctest::Approx(spk::volume(m)));
  int sign_changed = 0;  // signed volumes, matched by the sorted corner lists above
  std::vector<double> vm, vr;
  for (std::size_t t = 0; t < m.tetrahedra.size(); ++t) {
    vm.push_back(spk::tetrahedron_signed_volume(m, t));
    vr.push_back(spk::tetrahedron_signed_volume(r, t));
  }
  std::sort(vm.begin(), vm.end());
  std::sort(vr.begin(), vr.end());
  for (std::size_t t = 0; t < vm.size(); ++t) sign_changed += (vm[t] > 0) != (vr[t] > 0);
  CHECK(sign_changed == 0);
  bool sorted = true;
  for (std::size_t t = 1; t < r.tetrahedra.size(); ++t)
    sorted = sorted && *std::min_element(r.tetrahedra[t - 1].begin(), r.tetrahedra[t - 1].end()) <=
                           *std::min_element(r.tetrahedra[t].begin(), r.tetrahedra[t].end());
  CHECK(sorted);
}

/// Two plates (5 x 4 and 6 x 3 cells, apart) with their vertices interleaved at random and two
/// vertices in no triangle (old indices 0 and 31).
spk::TriangleMesh two_plates() {
  auto a = spk::plate_mesh(5, 4);
  const auto b = spk::plate_mesh(6, 3, 2.0, 1.0);
  spk::TriangleMesh m;
  m.vertices.push_back({-5, -5, 0});
  const int offset_a = 1;
  for (const auto& p : a.vertices) m.vertices.push_back(p);
  m.vertices.push_back({9, 9, 9});
  const int offset_b = int(m.vertices.size());
  for (const auto& p : b.vertices) m.vertices.push_back({p[0] + 3.0, p[1], p[2]});
  for (const auto& t : a.triangles)
    m.triangles.push_back({t[0] + offset_a, t[1] + offset_a, t[2] + offset_a});
  for (const auto& t : b.triangles)
    m.triangles.push_back({t[0] + offset_b, t[1] + offset_b, t[2] + offset_b});
  return m;
}

}  // namespace

TEST_CASE("mesh_bandwidth, mesh_profile and renumbered: hand-checked") {
  spk::TriangleMesh m;
  m.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {7, 7, 7}};
  m.triangles = {{3, 1, 2}, {1, 0, 2}, {0, 1, 2}};
  CHECK(spk::mesh_bandwidth(m) == 2);
  CHECK(spk::mesh_profile(m) == 0 + 1 + 2 + 2 + 0);
  // new: 0 -> 4, 1 -> 2, 2 -> 0, 3 -> 3, 4 -> 1
  const std::vector<int> p{4, 2, 0, 3, 1};
  const auto r = spk::renumbered(m, p);
  CHECK(r.vertices ==
        std::vector<std::array<double, 3>>{{0, 1, 0}, {7, 7, 7}, {1, 0, 0}, {1, 1, 0}, {0, 0, 0}});
  // all three triangles have new minimum 0: kept in order, corners in order
  REQUIRE(r.triangles.size() == 3);
  CHECK(r.triangles[0] == std::array<int, 3>{3, 2, 0});
  CHECK(r.triangles[1] == std::array<int, 3>{2, 4, 0});
  CHECK(r.triangles[2] == std::array<int, 3>{4, 2, 0});
  m.triangles = {{3, 1, 4}, {1, 0, 2}, {3, 4, 1}, {0, 3, 4}};
  const auto r2 = spk::renumbered(m, p);  // minima 1, 0, 1, 1 -> stable order 1, 0, 2, 3
  CHECK(r2.triangles ==
        std::vector<std::array<int, 3>>{{2, 4, 0}, {3, 2, 1}, {3, 1, 2}, {4, 3, 1}});
  CHECK(spk::mesh_bandwidth(spk::TriangleMesh{}) == 0);
  CHECK(spk::mesh_profile(spk::TetMesh{}) == 0);
  spk::TetMesh t;
  t.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}, {2, 2, 2}};
  t.tetrahedra = {{4, 1, 2, 3}, {0, 1, 2, 3}};
  CHECK(spk::mesh_bandwidth(t) == 3);
  CHECK(spk::mesh_profile(t) == 0 + 1 + 2 + 3 + 3 + 0);
}

TEST_CASE("renumbered: a new_index that is not a permutation throws, naming the entry") {
  const auto m = spk::plate_mesh(2, 1);  // 6 vertices
  CHECK_THROWS_WITH_AS(spk::renumbered(m, std::vector<int>{0, 1, 2, 3, 4}),
                       doctest::Contains("new_index has 5 entries, the mesh has 6"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::renumbered(m, std::vector<int>{0, 1, 6, 3, 4, 5}),
                       doctest::Contains("new_index[2] = 6 is outside [0, 6)"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::renumbered(m, std::vector<int>{0, 1, 2, -1, 4, 5}),
                       doctest::Contains("new_index[3] = -1"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::renumbered(m, std::vector<int>{5, 1, 2, 3, 1, 0}),
                       doctest::Contains("new_index[4] = 1 repeats new_index[1]"),
                       std::invalid_argument);
  const auto c = spk::cube_mesh(1, 1, 1);
  CHECK_THROWS_WITH_AS(spk::renumbered(c, std::vector<int>(8, 0)),
                       doctest::Contains("new_index[1] = 0 repeats new_index[0]"),
                       std::invalid_argument);
  spk::TriangleMesh bad = m;
  bad.triangles[1][0] = 9;
  CHECK_THROWS_WITH_AS(spk::rcm_numbering(bad), doctest::Contains("vertex 9"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::mesh_bandwidth(bad), doctest::Contains("vertex 9"),
                       std::invalid_argument);
  bad = m;
  bad.vertices[4][1] = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH_AS(spk::morton_numbering(bad), doctest::Contains("vertex 4"),
                       std::invalid_argument);
}

TEST_CASE("random_numbering: deterministic uniform permutations") {
  CHECK(spk::random_numbering(0, 1).empty());
  CHECK(spk::random_numbering(1, 1) == std::vector<int>{0});
  const auto a = spk::random_numbering(1000, 42);
  CHECK(is_permutation_of(a, 1000));
  CHECK(a == spk::random_numbering(1000, 42));
  CHECK(a != spk::random_numbering(1000, 43));
  // the 6 permutations of 3 elements, 6000 draws: each about 1000 times (sd ~ 29)
  std::map<std::vector<int>, int> count;
  for (std::uint64_t s = 0; s < 6000; ++s) ++count[spk::random_numbering(3, s)];
  CHECK(count.size() == 6);
  for (const auto& c : count) CHECK(std::abs(c.second - 1000) < 150);
}

TEST_CASE("rcm_numbering: hand-checked strip, components, unreferenced vertices") {
  // 5 x 2 strip of 8 triangles: the optimal bandwidth 2. The search for the start begins at
  // vertex 4 (corner (4, 0), degree 2, the smallest such index); its last level is vertex 5
  // (corner (0, 1)), as eccentric: the start, numbered last by the reversal, 4 first
  const auto strip = spk::plate_mesh(4, 1);
  const auto s = spk::rcm_numbering(strip);
  REQUIRE(is_permutation_of(s, 10));
  CHECK(s[5] == 9);
  CHECK(s[4] == 0);
  CHECK(spk::mesh_bandwidth(spk::renumbered(strip, s)) == 2);

  // one triangle, a degenerate triangle (3, 3, 3) and a vertex in none
  spk::TriangleMesh m;
  m.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {2, 2, 0}, {3, 3, 0}};
  m.vertices.insert(m.vertices.begin(), {5, 5, 5});  // vertex 0 in no triangle
  m.triangles = {{1, 2, 3}, {4, 4, 4}};
  const auto r = spk::rcm_numbering(m);
  REQUIRE(is_permutation_of(r, 6));
  CHECK(std::vector<int>{r[0], r[4], r[5]} == std::vector<int>{4, 3, 5});

  // two plates, shuffled: each component contiguous, in order of its smallest vertex, the two
  // unreferenced vertices last in their old order, bandwidth within a plate small
  const auto plates = two_plates();
  const auto shuffle = spk::random_numbering(plates.n_vertices(), 5);
  const auto sm = spk::renumbered(plates, shuffle);
  const auto rp = spk::rcm_numbering(sm);
  REQUIRE(is_permutation_of(rp, sm.n_vertices()));
  const int u0 = shuffle[0], u1 = shuffle[31];
  CHECK(rp[std::size_t(std::min(u0, u1))] == int(sm.n_vertices()) - 2);
  CHECK(rp[std::size_t(std::max(u0, u1))] == int(sm.n_vertices()) - 1);
  const auto rr = spk::renumbered(sm, rp);
  check_renumbered(sm, rr, rp);
  // plate a (30 vertices, old 1..30) holds the smallest shuffled index or not
  int smallest_a = 1 << 30, smallest_b = 1 << 30;
  for (int v = 1; v <= 30; ++v) smallest_a = std::min(smallest_a, shuffle[std::size_t(v)]);
  for (int v = 32; v < 60; ++v) smallest_b = std::min(smallest_b, shuffle[std::size_t(v)]);
  const bool a_first = smallest_a < smallest_b;
  int misplaced = 0;
  for (int v = 1; v < 60; ++v) {
    if (v == 31) continue;
    const int k = rp[std::size_t(shuffle[std::size_t(v)])];
    const bool in_a = v <= 30;
    const bool first_block = k < (a_first ? 30 : 28);
    misplaced += in_a != (first_block == a_first);
  }
  CHECK(misplaced == 0);
  CHECK(spk::mesh_bandwidth(rr) <= 2 * (3 + 2));
  CHECK(spk::mesh_bandwidth(sm) > spk::mesh_bandwidth(rr));
}

TEST_CASE("rcm, morton and spectral numberings of a shuffled plate and cube") {
  const int nx = 40, ny = 30;
  const auto plate = spk::plate_mesh(nx, ny);
  const auto shuffle = spk::random_numbering(plate.n_vertices(), 11);
  const auto shuffled = spk::renumbered(plate, shuffle);
  check_renumbered(plate, shuffled, shuffle);
  const auto band_random = spk::mesh_bandwidth(shuffled);
  const auto profile_random = spk::mesh_profile(shuffled);

  const auto rcm = spk::rcm_numbering(shuffled);
  REQUIRE(is_permutation_of(rcm, shuffled.n_vertices()));
  const auto r = spk::renumbered(shuffled, rcm);
  check_renumbered(shuffled, r, rcm);
  CHECK(spk::mesh_bandwidth(r) <= 2 * (std::min(nx, ny) + 2));
  CHECK(spk::mesh_bandwidth(r) * 10 < band_random);

  const auto morton = spk::morton_numbering(shuffled);
  REQUIRE(is_permutation_of(morton, shuffled.n_vertices()));
  const auto mo = spk::renumbered(shuffled, morton);
  check_renumbered(shuffled, mo, morton);
  CHECK(spk::mesh_profile(mo) * 4 < profile_random);
  CHECK(spk::mesh_bandwidth(mo) < band_random);

  spk::SpectralReport report;
  const auto spectral = spk::spectral_numbering(shuffled, {}, &report);
  REQUIRE(is_permutation_of(spectral, shuffled.n_vertices()));
  CHECK(report.converged);
  CHECK(report.components == 1);
  const auto sp = spk::renumbered(shuffled, spectral);
  check_renumbered(shuffled, sp, spectral);
  CHECK(spk::mesh_bandwidth(sp) * 5 < band_random);
  CHECK(spk::mesh_profile(sp) * 10 < profile_random);
  // from the structured numbering (other ties) as well
  CHECK(spk::mesh_bandwidth(spk::renumbered(plate, spk::rcm_numbering(plate))) <=
        2 * (std::min(nx, ny) + 2));
  MESSAGE("plate 40 x 30 bandwidth / profile: random "
          << band_random << " / " << profile_random << ", rcm " << spk::mesh_bandwidth(r) << " / "
          << spk::mesh_profile(r) << ", morton " << spk::mesh_bandwidth(mo) << " / "
          << spk::mesh_profile(mo) << ", spectral " << spk::mesh_bandwidth(sp) << " / "
          << spk::mesh_profile(sp) << " (" << report.iterations << " solves, "
          << report.solver_iterations << " CG iterations)");

  const auto cube = spk::cube_mesh(8, 7, 6);
  const auto cshuffle = spk::random_numbering(cube.n_vertices(), 12);
  const auto cs = spk::renumbered(cube, cshuffle);
  check_renumbered_tet(cube, cs, cshuffle);
  const auto cband = spk::mesh_bandwidth(cs), cprofile = spk::mesh_profile(cs);
  const auto crcm = spk::rcm_numbering(cs);
  const auto cr = spk::renumbered(cs, crcm);
  check_renumbered_tet(cs, cr, crcm);
  CHECK(spk::mesh_bandwidth(cr) * 3 < cband);
  CHECK(spk::mesh_profile(cr) * 3 < cprofile);
  const auto cmorton = spk::morton_numbering(cs);
  const auto cm = spk::renumbered(cs, cmorton);
  check_renumbered_tet(cs, cm, cmorton);
  CHECK(spk::mesh_profile(cm) * 3 < cprofile);
  const auto cspectral = spk::spectral_numbering(cs, {}, &report);
  CHECK(report.converged);
  const auto csp = spk::renumbered(cs, cspectral);
  check_renumbered_tet(cs, csp, cspectral);
  CHECK(spk::mesh_bandwidth(csp) * 2 < cband);
  CHECK(spk::mesh_profile(csp) * 4 < cprofile);
  MESSAGE("cube 8 x 7 x 6 bandwidth / profile: random "
          << cband << " / " << cprofile << ", rcm " << spk::mesh_bandwidth(cr) << " / "
          << spk::mesh_profile(cr) << ", morton " << spk::mesh_bandwidth(cm) << " / "
          << spk::mesh_profile(cm) << ", spectral " << spk::mesh_bandwidth(csp) << " / "
          << spk::mesh_profile(csp));
}

TEST_CASE("morton_numbering: hand-checked Z order, flat extent and ties") {
  spk::TriangleMesh m;  // the unit square's corners, z = 0 everywhere
  m.vertices = {{1, 1, 0}, {0, 0, 0}, {0, 1, 0}, {1, 0, 0}, {0, 0, 0}};
  // codes: (0,0) -> 0 (old 1, then old 4), (1,0) -> 1, (0,1) -> 2, (1,1) -> 3
  CHECK(spk::morton_numbering(m) == std::vector<int>{4, 0, 3, 2, 1});
  // a 4 x 4 grid in the yz plane (x extent 0): y is the lower bit
  spk::TetMesh t;
  for (int z = 0; z < 4; ++z)
    for (int y = 0; y < 4; ++y) t.vertices.push_back({2.0, double(y), double(z)});
  const auto z = spk::morton_numbering(t);
  // Z order over (y, z): quadrant (y < 2, z < 2) first, in the order (0,0) (1,0) (0,1) (1,1)
  CHECK(std::vector<int>{z[0], z[1], z[4], z[5], z[2], z[3], z[6], z[7]} ==
        std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(z[15] == 15);
}

TEST_CASE("spectral_numbering: a strip is ordered along x, components and options") {
  const auto strip = spk::plate_mesh(50, 1, 50.0, 1.0);
  const auto shuffle = spk::random_numbering(strip.n_vertices(), 3);
  const auto s = spk::renumbered(strip, shuffle);
  spk::SpectralReport report;
  const auto index = spk::spectral_numbering(s, {}, &report);
  REQUIRE(is_permutation_of(index, s.n_vertices()));
  CHECK(report.converged);
  const auto r = spk::renumbered(s, index);
  int up = 0, down = 0;
  for (std::size_t v = 1; v < r.vertices.size(); ++v) {
    up += r.vertices[v][0] >= r.vertices[v - 1][0];
    down += r.vertices[v][0] <= r.vertices[v - 1][0];
  }
  CHECK(std::max(up, down) == int(r.vertices.size()) - 1);
  CHECK(spk::mesh_bandwidth(r) <= 3);

  // two plates: components contiguous in order of their smallest vertex, unreferenced last
  const auto plates = two_plates();
  const auto two = spk::spectral_numbering(plates, {}, &report);
  REQUIRE(is_permutation_of(two, plates.n_vertices()));
  CHECK(report.components == 2);
  CHECK(report.converged);
  CHECK(two[0] == 58);
  CHECK(two[31] == 59);
  int misplaced = 0;
  for (int v = 1; v < 60; ++v)
    if (v != 31) misplaced += (v <= 30) != (two[std::size_t(v)] < 30);
  CHECK(misplaced == 0);
  check_renumbered(plates, spk::renumbered(plates, two), two);

  // no iteration: the breadth-first start vector; invalid options throw
  spk::SpectralOptions none;
  none.max_iterations = 0;
  const auto start = spk::spectral_numbering(plates, none, &report);
  CHECK(is_permutation_of(start, plates.n_vertices()));
  CHECK(report.iterations == 0);
  CHECK(report.solver_iterations == 0);
  none.max_iterations = -1;
  CHECK_THROWS_WITH_AS(spk::spectral_numbering(plates, none),
                       doctest::Contains("max_iterations = -1"), std::invalid_argument);
  none.max_iterations = 5;
  none.tolerance = -1;
  CHECK_THROWS_WITH_AS(spk::spectral_numbering(plates, none), doctest::Contains("tolerance = -1"),
                       std::invalid_argument);
  CHECK(spk::spectral_numbering(spk::TriangleMesh{}).empty());
}

TEST_CASE("rcm, morton and spectral numberings of the shared meshes beat a random one") {
  const std::string dir = spk_test::data_dir() + "/meshes/";
  const auto check_tri = [](const spk::TriangleMesh& mesh, const char* name) {
    const auto shuffle = spk::random_numbering(mesh.n_vertices(), 17);
    const auto s = spk::renumbered(mesh, shuffle);
    const auto rcm = spk::rcm_numbering(s);
    REQUIRE(is_permutation_of(rcm, s.n_vertices()));
    const auto r = spk::renumbered(s, rcm);
    check_renumbered(s, r, rcm);
    const auto morton = spk::renumbered(s, spk::morton_numbering(s));
    const auto spectral = spk::renumbered(s, spk::spectral_numbering(s));
    CHECK(spk::mesh_bandwidth(r) * 5 < spk::mesh_bandwidth(s));
    CHECK(spk::mesh_profile(r) * 10 < spk::mesh_profile(s));
    CHECK(spk::mesh_profile(morton) * 3 < spk::mesh_profile(s));
    CHECK(spk::mesh_profile(spectral) * 5 < spk::mesh_profile(s));
    MESSAGE(
        std::string(name) << " (" << mesh.n_vertices() << " vertices) bandwidth / profile: file "
                          << spk::mesh_bandwidth(mesh) << " / " << spk::mesh_profile(mesh)
                          << ", random " << spk::mesh_bandwidth(s) << " / " << spk::mesh_profile(s)
                          << ", rcm " << spk::mesh_bandwidth(r) << " / " << spk::mesh_profile(r)
                          << ", morton " << spk::mesh_bandwidth(morton) << " / "
                          << spk::mesh_profile(morton) << ", spectral "
                          << spk::mesh_bandwidth(spectral) << " / " << spk::mesh_profile(spectral));
  };
  const auto check_tet = [](const spk::TetMesh& mesh, const char* name) {
    const auto shuffle = spk::random_numbering(mesh.n_vertices(), 18);
    const auto s = spk::renumbered(mesh, shuffle);
    const auto rcm = spk::rcm_numbering(s);
    REQUIRE(is_permutation_of(rcm, s.n_vertices()));
    const auto r = spk::renumbered(s, rcm);
    check_renumbered_tet(s, r, rcm);
    const auto morton = spk::renumbered(s, spk::morton_numbering(s));
    const auto spectral = spk::renumbered(s, spk::spectral_numbering(s));
    CHECK(spk::mesh_bandwidth(r) * 3 < spk::mesh_bandwidth(s));
    CHECK(spk::mesh_profile(r) * 5 < spk::mesh_profile(s));
    CHECK(spk::mesh_profile(morton) * 2 < spk::mesh_profile(s));
    CHECK(spk::mesh_profile(spectral) * 3 < spk::mesh_profile(s));
    MESSAGE(
        std::string(name) << " (" << mesh.n_vertices() << " vertices) bandwidth / profile: file "
                          << spk::mesh_bandwidth(mesh) << " / " << spk::mesh_profile(mesh)
                          << ", random " << spk::mesh_bandwidth(s) << " / " << spk::mesh_profile(s)
                          << ", rcm " << spk::mesh_bandwidth(r) << " / " << spk::mesh_profile(r)
                          << ", morton " << spk::mesh_bandwidth(morton) << " / "
                          << spk::mesh_profile(morton) << ", spectral "
                          << spk::mesh_bandwidth(spectral) << " / " << spk::mesh_profile(spectral));
  };
  check_tri(spk::read_triangle_mesh(dir + "bunny.off"), "bunny.off");
  check_tri(spk::read_triangle_mesh(dir + "hand.mesh"), "hand.mesh triangles");
  check_tet(spk::read_tet_mesh(dir + "hand.mesh"), "hand.mesh tetrahedra");
  check_tet(spk::read_tet_mesh(dir + "femur_interior.1"), "femur_interior.1");
}
