// Tests of spk/mesh/reorder.hpp: the first-reference numbering is a permutation, keeps every
// element's geometry and orientation, numbers by first reference, and puts unreferenced vertices
// last; on a refined shared mesh it shortens the index distance between neighbours.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <spk/io/mesh_io.hpp>
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
                                             << mean_edge_distance(rt.triangles)
                                             << ", femur~2 " << mean_edge_distance(tet.tetrahedra)
                                             << " -> " << mean_edge_distance(rtet.tetrahedra));
}
