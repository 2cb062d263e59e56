// Tests of spk/assembly/ (mesh matrix, symbolic and numeric assembly through E E^T and action
// maps) on every backend: hand-checked single elements; the five element types on structured,
// refined and real shared meshes against the independent host reference of
// assembly_reference.hpp (quadrature and B matrices); the pattern against the node pairs that
// share an element; physics (zero row sums of Laplacians, symmetry, rigid-body modes);
// numeric-only re-assembly with new data; launch-parameter independence; edge cases and errors.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <spk/assembly/assemble.hpp>
#include <spk/compound/elasticity.hpp>
#include <spk/io/mesh_io.hpp>
#include <spk/mesh/generate_mesh.hpp>
#include <spk/mesh/quadratic_mesh.hpp>
#include <spk/mesh/subdivide.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "assembly_reference.hpp"
#include "test_common.hpp"

namespace {

using Vec3 = std::array<double, 3>;

std::string mesh_path(const std::string& name) { return spk_test::data_dir() + "/meshes/" + name; }

/// An assembled matrix at DOF level on the host (B x B blocks expanded), rows sorted.
struct Expanded {
  std::int64_t n = 0;
  std::vector<std::int64_t> row_map;
  std::vector<std::int64_t> col_idx;
  std::vector<double> values;
};

template <int B, class Matrix>
Expanded expand(const Matrix& a) {
  const auto rm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.row_map());
  const auto ci = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.col_idx());
  const auto va = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.values());
  const double* v = reinterpret_cast<const double*>(va.data());
  Expanded e;
  e.n = std::int64_t(a.nrows()) * B;
  e.row_map.push_back(0);
  for (int i = 0; i < a.nrows(); ++i)
    for (int r = 0; r < B; ++r) {
      for (int s = rm(i); s < rm(i + 1); ++s)
        for (int c = 0; c < B; ++c) {
          e.col_idx.push_back(std::int64_t(ci(s)) * B + c);
          e.values.push_back(v[std::size_t(s) * B * B + std::size_t(r) * B + std::size_t(c)]);
        }
      e.row_map.push_back(std::int64_t(e.col_idx.size()));
    }
  return e;
}

/// Same pattern, and values within tol * (max |value| of the row) of the reference.
void check_against(const Expanded& got, const spk_test::ReferenceCsr& ref, double tol) {
  REQUIRE(got.n == ref.n);
  REQUIRE(got.row_map.size() == ref.row_map.size());
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < got.n; ++i) {
    const auto s0 = ref.row_map[std::size_t(i)], s1 = ref.row_map[std::size_t(i) + 1];
    if (got.row_map[std::size_t(i) + 1] != s1) {
      FAIL_CHECK("row ", i, " has ", got.row_map[std::size_t(i) + 1] - got.row_map[std::size_t(i)],
                 " entries, the reference ", s1 - s0);
      return;
    }
    double scale = 0;
    for (auto s = s0; s < s1; ++s) scale = std::max(scale, std::abs(ref.values[std::size_t(s)]));
    for (auto s = s0; s < s1; ++s) {
      if (got.col_idx[std::size_t(s)] != ref.col_idx[std::size_t(s)]) {
        FAIL_CHECK("row ", i, " entry ", s - s0, ": column ", got.col_idx[std::size_t(s)],
                   ", the reference ", ref.col_idx[std::size_t(s)]);
        return;
      }
      if (!(std::abs(got.values[std::size_t(s)] - ref.values[std::size_t(s)]) <=
            tol * scale + 1e-300) &&
          bad++ < 5)
        FAIL_CHECK("row ", i, " column ", ref.col_idx[std::size_t(s)], ": ",
                   got.values[std::size_t(s)], " vs reference ", ref.values[std::size_t(s)]);
    }
  }
  CHECK(bad == 0);
}

/// Symmetry max |a_ij - a_ji| / max |a|.
double asymmetry(const Expanded& a) {
  double worst = 0, scale = 0;
  for (double v : a.values) scale = std::max(scale, std::abs(v));
  for (std::int64_t i = 0; i < a.n; ++i)
    for (auto s = a.row_map[std::size_t(i)]; s < a.row_map[std::size_t(i) + 1]; ++s) {
      const std::int64_t j = a.col_idx[std::size_t(s)];
      const auto first = a.col_idx.begin() + a.row_map[std::size_t(j)];
      const auto last = a.col_idx.begin() + a.row_map[std::size_t(j) + 1];
      const auto it = std::lower_bound(first, last, i);
      if (it == last || *it != i) return std::numeric_limits<double>::infinity();
      worst = std::max(worst, std::abs(a.values[std::size_t(s)] -
                                       a.values[std::size_t(it - a.col_idx.begin())]));
    }
  return scale > 0 ? worst / scale : worst;
}

std::vector<double> matvec(const Expanded& a, const std::vector<double>& x) {
  std::vector<double> y(std::size_t(a.n), 0.0);
  for (std::int64_t i = 0; i < a.n; ++i)
    for (auto s = a.row_map[std::size_t(i)]; s < a.row_map[std::size_t(i) + 1]; ++s)
      y[std::size_t(i)] += a.values[std::size_t(s)] * x[std::size_t(a.col_idx[std::size_t(s)])];
  return y;
}

double norm(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

double max_abs(const Expanded& a) {
  double m = 0;
  for (double v : a.values) m = std::max(m, std::abs(v));
  return m;
}

/// Assembles with spk on Device (full, then numeric-only again into the same matrix).
template <class Device, class Element, std::size_t K>
Expanded spk_assemble(const Element& element, const std::vector<Vec3>& nodes,
                      const std::vector<std::array<int, K>>& elements,
                      const spk::AssemblyParams& params = {}) {
  const auto mesh = spk::mesh_matrix<Device>(int(nodes.size()), elements);
  const auto coords = spk::node_coordinates<Device>(nodes);
  const auto a = spk::assemble(element, mesh, coords, params);
  return expand<Element::dofs_per_node>(a);
}

/// n tetrahedra sharing node 0, otherwise disjoint (random vertices in [-1, 1]^3): node 0's
/// row has 4n contributions, every other row 4.
spk::TetMesh spike_mesh(int n, unsigned seed) {
  spk::TetMesh m;
  m.vertices.push_back({0, 0, 0});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int i = 0; i < n; ++i) {
    const int b = int(m.vertices.size());
    for (int j = 0; j < 3; ++j) m.vertices.push_back({u(rng), u(rng), u(rng)});
    m.tetrahedra.push_back({0, b, b + 1, b + 2});
  }
  return m;
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("assembly: hand-checked triangle and tetrahedron", Device,
                          assembly_hand) {
  // Right isosceles triangle: K = [[1, -1/2, -1/2], [-1/2, 1/2, 0], [-1/2, 0, 1/2]].
  const std::vector<Vec3> tri_nodes = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  const std::vector<std::array<int, 3>> tri = {{0, 1, 2}};
  const Expanded t = spk_assemble<Device>(spk::P1TriangleLaplacian{}, tri_nodes, tri);
  const std::vector<double> expected = {1, -0.5, -0.5, -0.5, 0.5, 0, -0.5, 0, 0.5};
  REQUIRE(t.values.size() == 9);
  for (std::size_t i = 0; i < 9; ++i) CHECK(t.values[i] == doctest::Approx(expected[i]));
  // Unit right tetrahedron: V = 1/6, g0 = (-1,-1,-1), g1..g3 = unit vectors:
  // K_00 = 1/2, K_0b = -1/6, K_bb = 1/6, K_bc = 0 (b != c >= 1).
  const std::vector<Vec3> tet_nodes = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  const std::vector<std::array<int, 4>> tet = {{0, 1, 2, 3}};
  const Expanded l = spk_assemble<Device>(spk::P1TetLaplacian{}, tet_nodes, tet);
  REQUIRE(l.values.size() == 16);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      const double want = a == b ? (a == 0 ? 0.5 : 1.0 / 6) : ((a == 0 || b == 0) ? -1.0 / 6 : 0);
      CHECK(l.values[std::size_t(4 * a + b)] == doctest::Approx(want));
    }
}
TEST_CASE_TEMPLATE_APPLY(assembly_hand, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("assembly: P1 tetrahedron elasticity equals spk::elasticity_stiffness",
                          Device, assembly_p1_elasticity) {
  const spk::TetMesh m = spk::read_tet_mesh(mesh_path("octopus-low.mesh"));
  const spk::ElasticMaterial mat{2.5, 0.3};
  const Expanded got =
      spk_assemble<Device>(spk::P1TetElasticity(mat), m.vertices, m.tetrahedra);
  const auto ref_matrix = spk::elasticity_stiffness<double, Device>(m, mat);
  const Expanded ref = expand<3>(ref_matrix);
  spk_test::ReferenceCsr r{ref.n, ref.row_map, ref.col_idx, ref.values};
  check_against(got, r, 1e-12);
}
TEST_CASE_TEMPLATE_APPLY(assembly_p1_elasticity, spk_test::all_devices);

namespace {

/// Coordinates moved by up to `amount` of the spacing (deterministic), z kept for plates.
std::vector<Vec3> perturbed(std::vector<Vec3> nodes, double amount, unsigned seed, bool keep_z) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-amount, amount);
  for (auto& p : nodes)
    for (int d = 0; d < (keep_z ? 2 : 3); ++d) p[std::size_t(d)] += u(rng);
  return nodes;
}

/// The launch shapes every comparison runs with (defaults, then forced lanes / rows).
std::vector<spk::AssemblyParams> launch_variants() {
  std::vector<spk::AssemblyParams> v(3);
  v[1].symbolic_lanes = 1;
  v[1].numeric_lanes = 1;
  v[1].rows_per_team = 32;
  v[2].symbolic_lanes = 32;
  v[2].numeric_lanes = 8;
  v[2].rows_per_team = 4;
  v.push_back(spk::AssemblyParams{8, 4, 5});  // rows rounded up to whole warps on GPUs
  // Numeric staging: lanes summing their own entries (the default on CPUs), and staged in
  // passes of 5 contributions (rows span passes; staged on every backend).
  v.push_back(v[0]);
  v.back().numeric_stage = -1;
  v.push_back(v[0]);
  v.back().numeric_stage = 5;
  v.push_back(v[2]);
  v.back().numeric_stage = 64;
  return v;
}

/// Max over rows of |row sum| / max |entry| of the row (Laplacians: 0 up to rounding).
double row_sum_defect(const Expanded& a) {
  double worst = 0;
  for (std::int64_t i = 0; i < a.n; ++i) {
    double s = 0, m = 0;
    for (auto p = a.row_map[std::size_t(i)]; p < a.row_map[std::size_t(i) + 1]; ++p) {
      s += a.values[std::size_t(p)];
      m = std::max(m, std::abs(a.values[std::size_t(p)]));
    }
    if (m > 0) worst = std::max(worst, std::abs(s) / m);
  }
  return worst;
}

/// Max over the rigid-body modes r of |K r| / (max |K| |r|).
double rigid_defect(const Expanded& a, const std::vector<std::vector<double>>& modes) {
  double worst = 0;
  for (const auto& r : modes) worst = std::max(worst, norm(matvec(a, r)) / (max_abs(a) * norm(r)));
  return worst;
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("assembly: the five elements against the host reference", Device,
                          assembly_reference) {
  const spk::ElasticMaterial mat{3.0, 0.28};
  const spk::TriangleMesh plate = spk::plate_mesh(9, 7, 2.0, 1.5);
  const spk::TetMesh cube = spk::cube_mesh(4, 3, 3);
  const std::vector<Vec3> plate_xyz = perturbed(plate.vertices, 0.04, 1, true);
  const std::vector<Vec3> cube_xyz = perturbed(cube.vertices, 0.04, 2, false);
  const spk::TriangleMesh surface = spk::read_triangle_mesh(mesh_path("spot.obj"));
  const spk::TetMesh octopus = spk::read_tet_mesh(mesh_path("octopus-low.mesh"));
  const spk::TriangleMesh plate_p{plate_xyz, plate.triangles};
  const spk::TetMesh cube_p{cube_xyz, cube.tetrahedra};
  const spk::QuadraticTriangleMesh plate2 = spk::quadratic_mesh(plate_p);
  const spk::QuadraticTetMesh cube2 = spk::quadratic_mesh(cube_p);
  const spk::QuadraticTetMesh octopus2 = spk::quadratic_mesh(octopus);
  for (const auto& params : launch_variants()) {
    CAPTURE(params.symbolic_lanes);
    CAPTURE(params.numeric_lanes);
    CAPTURE(params.rows_per_team);
    CAPTURE(params.numeric_stage);
    SUBCASE("P1 triangle Laplacian, perturbed plate and a real surface") {
      for (const auto* m : {&plate_p, &surface}) {
        const Expanded a =
            spk_assemble<Device>(spk::P1TriangleLaplacian{}, m->vertices, m->triangles, params);
        check_against(a, spk_test::reference_p1_triangle_laplacian(m->vertices, m->triangles),
                      1e-12);
        CHECK(row_sum_defect(a) < 1e-12);
        CHECK(asymmetry(a) == 0.0);
      }
    }
    SUBCASE("P1 tetrahedron Laplacian, perturbed cube and a real volume") {
      for (const auto* m : {&cube_p, &octopus}) {
        const Expanded a =
            spk_assemble<Device>(spk::P1TetLaplacian{}, m->vertices, m->tetrahedra, params);
        check_against(a, spk_test::reference_p1_tet_laplacian(m->vertices, m->tetrahedra),
                      1e-11);
        CHECK(row_sum_defect(a) < 1e-11);
        CHECK(asymmetry(a) == 0.0);
      }
    }
    SUBCASE("P1 tetrahedron elasticity") {
      for (const auto* m : {&cube_p, &octopus}) {
        const Expanded a = spk_assemble<Device>(spk::P1TetElasticity(mat), m->vertices,
                                                m->tetrahedra, params);
        check_against(a, spk_test::reference_p1_tet_elasticity(m->vertices, m->tetrahedra, mat),
                      1e-11);
        CHECK(asymmetry(a) < 1e-13);
        CHECK(rigid_defect(a, spk_test::rigid_body_modes_3d(m->vertices)) < 1e-10);
      }
    }
    SUBCASE("P2 triangle plane-stress elasticity") {
      const Expanded a = spk_assemble<Device>(spk::P2TriangleElasticity(mat), plate2.nodes,
                                              plate2.elements, params);
      check_against(
          a, spk_test::reference_p2_triangle_elasticity(plate2.nodes, plate2.elements, mat),
          1e-11);
      CHECK(asymmetry(a) < 1e-13);
      CHECK(rigid_defect(a, spk_test::rigid_body_modes_2d(plate2.nodes)) < 1e-10);
    }
    SUBCASE("P2 tetrahedron elasticity") {
      for (const auto* m : {&cube2, &octopus2}) {
        const Expanded a = spk_assemble<Device>(spk::P2TetElasticity(mat), m->nodes,
                                                m->elements, params);
        check_against(a, spk_test::reference_p2_tet_elasticity(m->nodes, m->elements, mat),
                      1e-10);
        CHECK(asymmetry(a) < 1e-12);
        CHECK(rigid_defect(a, spk_test::rigid_body_modes_3d(m->nodes)) < 1e-10);
      }
    }
  }
}
TEST_CASE_TEMPLATE_APPLY(assembly_reference, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("assembly: symbolic once, numeric re-assembly with new data", Device,
                          assembly_numeric) {
  const spk::TetMesh cube = spk::cube_mesh(5, 4, 3);
  const spk::ElasticMaterial mat{1.0, 0.25};
  const spk::P1TetElasticity element(mat);
  const auto mesh = spk::mesh_matrix<Device>(int(cube.vertices.size()), cube.tetrahedra);
  const auto pattern = spk::assemble_symbolic(mesh);
  CHECK(pattern.nnz() > 0);
  CHECK(pattern.memory_bytes() > 0);
  const auto a = spk::assembled_matrix<spk::P1TetElasticity>(pattern);
  const auto b = spk::assembled_matrix<spk::P1TetElasticity>(pattern);
  Kokkos::View<double*, Device> work(
      "work", mesh.n_elements() * std::size_t(spk::P1TetElasticity::data_size));
  for (unsigned step = 0; step < 3; ++step) {
    const std::vector<Vec3> xyz = perturbed(cube.vertices, 0.05, 10 + step, false);
    const auto coords = spk::node_coordinates<Device>(xyz);
    const auto data = spk::element_data(element, mesh, coords);
    spk::assemble_numeric(pattern, element, data, a);
    const Expanded ea = expand<3>(a);
    check_against(ea, spk_test::reference_p1_tet_elasticity(xyz, cube.tetrahedra, mat), 1e-11);
    // from the coordinates in one call (one wait): the same bits
    spk::assemble_numeric(pattern, element, coords, work, b);
    CHECK(expand<3>(b).values == ea.values);
  }
  // The action map is linear in the element data: doubled data, doubled matrix.
  const auto data = spk::element_data(spk::P1TetLaplacian{}, mesh,
                                      spk::node_coordinates<Device>(cube.vertices));
  const auto lap = spk::assembled_matrix<spk::P1TetLaplacian>(pattern);
  spk::assemble_numeric(pattern, spk::P1TetLaplacian{}, data, lap);
  const Expanded once = expand<1>(lap);
  Kokkos::View<double*, Device> twice("twice", data.extent(0));
  Kokkos::deep_copy(twice, data);
  Kokkos::parallel_for(
      "double", Kokkos::RangePolicy<typename Device::execution_space>(0, int(twice.extent(0))),
      KOKKOS_LAMBDA(int i) { twice(i) *= 2; });
  spk::assemble_numeric(pattern, spk::P1TetLaplacian{}, twice, lap);
  const Expanded doubled = expand<1>(lap);
  REQUIRE(doubled.values.size() == once.values.size());
  for (std::size_t i = 0; i < once.values.size(); ++i)
    CHECK(doubled.values[i] == 2 * once.values[i]);
}
TEST_CASE_TEMPLATE_APPLY(assembly_numeric, spk_test::all_devices);

namespace {

/// Full assembly and numeric-only re-assembly with each numeric staging (none, passes of 1, 4,
/// 7, 24, 128 and 4096 contributions, the default), numeric-only on a pattern with and without
/// contribution slots (rows of at most a pass's contributions by incidence, the others in
/// column order) and with and without the mirror maps (staged: symmetric assembly, the upper
/// entries formed and mirrored), must give the same bits: every variant adds each entry's
/// blocks in element order, and the elements' entries are bitwise symmetric.
template <class Device, class Element, std::size_t K>
void check_same_bits(const Element& element, const std::vector<Vec3>& nodes,
                     const std::vector<std::array<int, K>>& elements) {
  const auto mesh = spk::mesh_matrix<Device>(int(nodes.size()), elements);
  const auto coords = spk::node_coordinates<Device>(nodes);
  constexpr int B = Element::dofs_per_node;
  const Expanded full = expand<B>(spk::assemble(element, mesh, coords));
  const auto data = spk::element_data(element, mesh, coords);
  for (const int variant : {0, 1, 2, 3}) {
    const bool slots = (variant & 1) == 0, mirror = (variant & 2) == 0;
    CAPTURE(slots);
    CAPTURE(mirror);
    spk::AssemblyParams sp;
    sp.incidence_slots = slots;
    sp.mirror = mirror;
    auto pattern = spk::assemble_symbolic(mesh, sp);
    CHECK((pattern.contribution_slots.extent(0) > 0) == (slots && mesh.nnz() > 0));
    const auto a = spk::assembled_matrix<Element>(pattern);
    // symmetric assembly runs where rows are staged (block entries, mirrors near on these
    // small meshes), so the mirrored variants test it
    if (mirror && B > 1) CHECK(spk::impl::mirror_pays(B * B, pattern.mirror_distance));
    for (int stage : {-1, 1, 4, 7, 24, 128, 4096, 0}) {
      CAPTURE(stage);
      spk::AssemblyParams p;
      p.numeric_stage = stage;
      const Expanded f = expand<B>(spk::assemble(element, mesh, coords, p));
      pattern.params.numeric_stage = stage;
      // NaN first: an entry the numeric phase did not write cannot pass
      Kokkos::deep_copy(Kokkos::View<double*, typename Device::memory_space,
                                     Kokkos::MemoryUnmanaged>(
                            reinterpret_cast<double*>(a.values().data()),
                            a.values().extent(0) * B * B),
                        std::numeric_limits<double>::quiet_NaN());
      spk::assemble_numeric(pattern, element, data, a);
      const Expanded g = expand<B>(a);
      REQUIRE(f.values.size() == full.values.size());
      REQUIRE(g.values.size() == full.values.size());
      std::size_t differ = 0;
      for (std::size_t i = 0; i < full.values.size(); ++i)
        differ += (f.values[i] != full.values[i]) + (g.values[i] != full.values[i]);
      CHECK(differ == 0);
      CHECK(f.col_idx == full.col_idx);
      CHECK(g.col_idx == full.col_idx);
    }
  }
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("assembly: numeric staging gives the same bits", Device,
                          assembly_staging) {
  const spk::ElasticMaterial mat{2.0, 0.3};
  const spk::TetMesh octopus = spk::read_tet_mesh(mesh_path("octopus-low.mesh"));
  const spk::TriangleMesh surface = spk::read_triangle_mesh(mesh_path("spot.obj"));
  const spk::TetMesh cube = spk::cube_mesh(3, 3, 2);
  const spk::QuadraticTetMesh cube2 = spk::quadratic_mesh(cube);
  check_same_bits<Device>(spk::P1TetElasticity(mat), octopus.vertices, octopus.tetrahedra);
  check_same_bits<Device>(spk::P1TetLaplacian{}, octopus.vertices, octopus.tetrahedra);
  check_same_bits<Device>(spk::P1TriangleLaplacian{}, surface.vertices, surface.triangles);
  check_same_bits<Device>(spk::P2TetElasticity(mat), cube2.nodes, cube2.elements);
  const spk::QuadraticTriangleMesh plate2 = spk::quadratic_mesh(spk::plate_mesh(4, 3));
  check_same_bits<Device>(spk::P2TriangleElasticity(mat), plate2.nodes, plate2.elements);
  // One tetrahedron repeated 16,400 times in a small cube: its nodes' rows have 65,600 and more
  // contributions over a few entries, past the 16-bit offsets a staged row's entry starts are
  // copied to shared memory as (those rows read them from global memory).
  spk::TetMesh heavy = spk::cube_mesh(2, 2, 1);
  heavy.tetrahedra.insert(heavy.tetrahedra.end(), 16400, heavy.tetrahedra[0]);
  check_same_bits<Device>(spk::P1TetElasticity(mat), heavy.vertices, heavy.tetrahedra);
  check_same_bits<Device>(spk::P1TetLaplacian{}, heavy.vertices, heavy.tetrahedra);
  for (const int stage : {0, 64}) {
    spk::AssemblyParams p;
    p.numeric_stage = stage;
    check_against(spk_assemble<Device>(spk::P1TetElasticity(mat), heavy.vertices,
                                       heavy.tetrahedra, p),
                  spk_test::reference_p1_tet_elasticity(heavy.vertices, heavy.tetrahedra, mat),
                  1e-10);
  }
}
TEST_CASE_TEMPLATE_APPLY(assembly_staging, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("assembly: edge cases", Device, assembly_edges) {
  SUBCASE("no elements: every row empty") {
    const std::vector<Vec3> nodes(5, Vec3{0, 0, 0});
    const std::vector<std::array<int, 3>> none;
    const Expanded a = spk_assemble<Device>(spk::P1TriangleLaplacian{}, nodes, none);
    CHECK(a.n == 5);
    CHECK(a.values.empty());
    CHECK(a.row_map == std::vector<std::int64_t>(6, 0));
  }
  SUBCASE("no nodes, no elements") {
    const Expanded a = spk_assemble<Device>(spk::P1TetLaplacian{}, std::vector<Vec3>{},
                                            std::vector<std::array<int, 4>>{});
    CHECK(a.n == 0);
    CHECK(a.values.empty());
  }
  SUBCASE("unreferenced nodes get empty rows; a repeated element counts twice") {
    spk::TriangleMesh m = spk::plate_mesh(3, 2);
    m.vertices.push_back({7, 7, 0});  // node 12: in no element
    m.triangles.push_back(m.triangles[2]);
    const Expanded a = spk_assemble<Device>(spk::P1TriangleLaplacian{}, m.vertices, m.triangles);
    check_against(a, spk_test::reference_p1_triangle_laplacian(m.vertices, m.triangles), 1e-12);
    CHECK(a.row_map[12] == a.row_map[13]);
  }
  SUBCASE("one node in 300 or 3000 triangles (dense rows) and in 500 tetrahedra") {
    // 300: the shared-memory long-row launch; 3000 (9000 candidates): the global-scratch one.
    for (const int k : {300, 3000}) {
      spk::TriangleMesh fan;
      fan.vertices.push_back({0, 0, 0});
      for (int i = 0; i < k; ++i) {
        const double t = 2 * 3.14159265358979 * i / k;
        fan.vertices.push_back({std::cos(t), std::sin(t), 0});
        fan.triangles.push_back({0, 1 + i, 1 + (i + 1) % k});
      }
      for (const auto& params : launch_variants()) {
        const Expanded a = spk_assemble<Device>(spk::P1TriangleLaplacian{}, fan.vertices,
                                                fan.triangles, params);
        // 3000 slivers: cotangents near 1/angle, computed by two different formulas
        check_against(a,
                      spk_test::reference_p1_triangle_laplacian(fan.vertices, fan.triangles),
                      k > 1000 ? 1e-9 : 1e-12);
        CHECK(a.row_map[1] - a.row_map[0] == k + 1);
      }
    }
    const spk::TetMesh spikes = spike_mesh(500, 5);  // 500 tetrahedra sharing node 0
    const Expanded e = spk_assemble<Device>(spk::P1TetElasticity(spk::ElasticMaterial{}),
                                            spikes.vertices, spikes.tetrahedra);
    check_against(
        e,
        spk_test::reference_p1_tet_elasticity(spikes.vertices, spikes.tetrahedra,
                                              spk::ElasticMaterial{}),
        1e-9);
  }
}
TEST_CASE_TEMPLATE_APPLY(assembly_edges, spk_test::all_devices);

namespace {

template <class View>
std::vector<int> host_ints(const View& v) {
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<int>(h.data(), h.data() + h.extent(0));
}

/// Triangles around node 0: a fan of k (u = k + 1 columns in row 0), or one triangle repeated
/// k times (deg = k, u = 3 in rows 0, 1, 2).
spk::TriangleMesh fan_mesh(int k, bool repeated) {
  spk::TriangleMesh m;
  m.vertices.push_back({0, 0, 0});
  for (int i = 0; i < (repeated ? 2 : k); ++i) {
    const double t = 2 * 3.14159265358979 * i / (repeated ? 4 : k);
    m.vertices.push_back({std::cos(t), std::sin(t), 0});
  }
  for (int i = 0; i < k; ++i)
    m.triangles.push_back(repeated ? std::array<int, 3>{0, 1, 2}
                                   : std::array<int, 3>{0, 1 + i, 1 + (i + 1) % k});
  return m;
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("assembly: the pattern kernel's capacities and the long-row kernels",
                          Device, assembly_capacity) {
  SUBCASE("rows on each side of the column and incidence capacities") {
    // row_capacity 16 (16 lanes, or 1 on CPUs): 16 distinct columns and 32 incidences fit.
    spk::AssemblyParams params;
    params.symbolic_lanes = 16;
    params.row_capacity = 16;
    struct Case {
      int k;
      bool repeated;
      int long_rows;
    };
    for (const Case c : {Case{15, false, 0}, Case{16, false, 1}, Case{32, true, 0},
                         Case{33, true, 3}, Case{300, false, 1}}) {
      CAPTURE(c.k);
      CAPTURE(c.repeated);
      const spk::TriangleMesh m = fan_mesh(c.k, c.repeated);
      const auto mesh = spk::mesh_matrix<Device>(int(m.vertices.size()), m.triangles);
      const auto p = spk::assemble_symbolic(mesh, params);
      CHECK(p.long_rows == c.long_rows);
      CHECK(p.max_degree == c.k);
      const Expanded a =
          spk_assemble<Device>(spk::P1TriangleLaplacian{}, m.vertices, m.triangles, params);
      check_against(a, spk_test::reference_p1_triangle_laplacian(m.vertices, m.triangles),
                    1e-12);
    }
  }
  SUBCASE("every capacity and lane count gives the same pattern and action map") {
    const spk::TetMesh octopus = spk::read_tet_mesh(mesh_path("octopus-low.mesh"));
    const spk::TetMesh cube = spk::cube_mesh(4, 4, 3);
    for (const spk::TetMesh* m : {&octopus, &cube}) {
      const auto mesh = spk::mesh_matrix<Device>(int(m->vertices.size()), m->tetrahedra);
      const auto ref = spk::assemble_symbolic(mesh);
      CHECK(ref.long_rows == 0);
      const std::vector<int> inc = host_ints(ref.incidence), cols = host_ints(ref.col_idx),
                             rows = host_ints(ref.row_map), contrib = host_ints(ref.contributions),
                             cmap = host_ints(ref.contribution_map);
      // incidences sorted by element per node
      const std::vector<int> imap = host_ints(ref.incidence_map);
      for (std::size_t v = 0; v + 1 < imap.size(); ++v)
        CHECK(std::is_sorted(inc.begin() + imap[v], inc.begin() + imap[v + 1]));
      const auto reference = spk_test::reference_p1_tet_laplacian(m->vertices, m->tetrahedra);
      for (const int lanes : {0, 1, 8, 32})
        for (const int cap : {0, 1, 8, 12, 16, 24, 40}) {
          CAPTURE(lanes);
          CAPTURE(cap);
          spk::AssemblyParams params;
          params.symbolic_lanes = lanes;
          params.row_capacity = cap;
          const auto p = spk::assemble_symbolic(mesh, params);
          // the capacity is at least the lanes per row (1 on CPUs whatever is asked)
          if (cap > 0 && cap < 12 && (lanes == 1 || lanes == 8)) CHECK(p.long_rows > 0);
          CHECK(host_ints(p.incidence) == inc);
          CHECK(host_ints(p.row_map) == rows);
          CHECK(host_ints(p.col_idx) == cols);
          CHECK(host_ints(p.contributions) == contrib);
          CHECK(host_ints(p.contribution_map) == cmap);
          check_against(
              spk_assemble<Device>(spk::P1TetLaplacian{}, m->vertices, m->tetrahedra, params),
              reference, 1e-11);
        }
    }
  }
}
TEST_CASE_TEMPLATE_APPLY(assembly_capacity, spk_test::all_devices);

namespace {

/// The pattern's contribution slots invert its action map: for incidence j (e K + k) and local
/// node b, contributions(slots(j K + b)) = (e K + k) K + b, and each row's slots are a
/// permutation of its slice [inc_map(v) K, inc_map(v + 1) K).
template <class Device>
void check_slots(const spk::AssemblyPattern<Device>& p) {
  const int k = p.mesh.nodes_per_element();
  const std::vector<int> inc = host_ints(p.incidence), imap = host_ints(p.incidence_map),
                         contrib = host_ints(p.contributions),
                         slots = host_ints(p.contribution_slots);
  REQUIRE(slots.size() == contrib.size());
  std::size_t wrong = 0, outside = 0;
  for (std::size_t v = 0; v + 1 < imap.size(); ++v) {
    const int lo = imap[v] * k, hi = imap[v + 1] * k;
    std::vector<char> seen(std::size_t(hi - lo), 0);
    for (int t = lo; t < hi; ++t) {
      const int q = slots[std::size_t(t)];
      if (q < lo || q >= hi || seen[std::size_t(q - lo)]) {
        ++outside;
        continue;
      }
      seen[std::size_t(q - lo)] = 1;
      wrong += contrib[std::size_t(q)] != inc[std::size_t(t / k)] * k + t % k;
    }
  }
  CHECK(outside == 0);
  CHECK(wrong == 0);
}

/// The maps of symmetric assembly: diagonal(v) is the place of (v, v) (-1 for an empty row);
/// transpose_map(j) of entry (v, u) is the place of (u, v) and an involution; with slots, row
/// v's upper_slots pairs from qu = contribution_map(diagonal(v)) to the row's end name places
/// qu + second in [qu, row end), each once, holding their contributions (first), whose column
/// nodes are >= v, in incidence order (packed contributions strictly increasing).
template <class Device>
void check_mirror(const spk::AssemblyPattern<Device>& p) {
  const int k = p.mesh.nodes_per_element();
  const std::vector<int> rows = host_ints(p.row_map), cols = host_ints(p.col_idx),
                         cmap = host_ints(p.contribution_map), contrib = host_ints(p.contributions),
                         diag = host_ints(p.diagonal), tr = host_ints(p.transpose_map),
                         upper = host_ints(p.upper_slots), nodes = host_ints(p.mesh.nodes());
  const std::size_t n = std::size_t(p.n_nodes());
  REQUIRE(diag.size() == n);
  REQUIRE(tr.size() == cols.size());
  CHECK(upper.size() == 2 * p.contribution_slots.extent(0));
  std::size_t bad_diag = 0, bad_tr = 0, bad_upper = 0;
  for (std::size_t v = 0; v < n; ++v) {
    const int r0 = rows[v], r1 = rows[v + 1];
    if (r0 == r1) {
      bad_diag += diag[v] != -1;
      continue;
    }
    const int d = diag[v];
    if (d < r0 || d >= r1 || cols[std::size_t(d)] != int(v)) {
      ++bad_diag;
      continue;
    }
    for (int j = r0; j < r1; ++j) {
      const int u = cols[std::size_t(j)], t = tr[std::size_t(j)];
      bad_tr += t < rows[std::size_t(u)] || t >= rows[std::size_t(u) + 1] ||
                cols[std::size_t(t)] != int(v) || tr[std::size_t(t)] != j;
    }
    if (upper.empty()) continue;
    const int qu = cmap[std::size_t(d)], q1 = cmap[std::size_t(r1)];
    std::vector<char> seen(std::size_t(q1 - qu), 0);
    int previous = -1;
    for (int t = qu; t < q1; ++t) {
      const int x = upper[2 * std::size_t(t)], q = qu + upper[2 * std::size_t(t) + 1];
      if (q < qu || q >= q1 || seen[std::size_t(q - qu)] || contrib[std::size_t(q)] != x) {
        ++bad_upper;
        continue;
      }
      seen[std::size_t(q - qu)] = 1;
      const int column = nodes[std::size_t(x / k / k) * std::size_t(k) + std::size_t(x % k)];
      bad_upper += column < int(v) || x <= previous;
      previous = x;
    }
  }
  CHECK(bad_diag == 0);
  CHECK(bad_tr == 0);
  CHECK(bad_upper == 0);
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("assembly: contribution slots invert the action map", Device,
                          assembly_slots) {
  SUBCASE("tetrahedra, every lane count and capacity (main and long-row kernels)") {
    const spk::TetMesh octopus = spk::read_tet_mesh(mesh_path("octopus-low.mesh"));
    const auto mesh =
        spk::mesh_matrix<Device>(int(octopus.vertices.size()), octopus.tetrahedra);
    spk::AssemblyParams none;
    none.incidence_slots = false;
    none.mirror = true;  // the mirror maps without upper slots
    const auto bare = spk::assemble_symbolic(mesh, none);
    CHECK(bare.contribution_slots.extent(0) == 0);
    CHECK(bare.upper_slots.extent(0) == 0);
    check_mirror(bare);
    spk::AssemblyParams plain = none;
    plain.mirror = false;
    const auto unmirrored = spk::assemble_symbolic(mesh, plain);
    CHECK(unmirrored.diagonal.extent(0) == 0);
    CHECK(unmirrored.transpose_map.extent(0) == 0);
    CHECK(bare.memory_bytes() - unmirrored.memory_bytes() ==
          (bare.diagonal.extent(0) + bare.nnz()) * sizeof(int));
    for (const int lanes : {0, 1, 8, 32})
      for (const int cap : {0, 8, 40}) {
        CAPTURE(lanes);
        CAPTURE(cap);
        spk::AssemblyParams params;
        params.symbolic_lanes = lanes;
        params.row_capacity = cap;
        params.mirror = true;
        const auto p = spk::assemble_symbolic(mesh, params);
        // the capacity is at least the lanes per row (1 on CPUs whatever is asked)
        if (cap == 8 && (lanes == 1 || lanes == 8)) CHECK(p.long_rows > 0);
        check_slots(p);
        check_mirror(p);
        // the rest of the pattern as without slots, and K^2 ints per element more memory for
        // the slots, twice as many for the upper slots
        CHECK(host_ints(p.contributions) == host_ints(bare.contributions));
        CHECK(host_ints(p.contribution_map) == host_ints(bare.contribution_map));
        CHECK(host_ints(p.col_idx) == host_ints(bare.col_idx));
        CHECK(host_ints(p.transpose_map) == host_ints(bare.transpose_map));
        CHECK(p.memory_bytes() - bare.memory_bytes() ==
              3 * p.contributions.extent(0) * sizeof(int));
      }
  }
  SUBCASE("fans of 300 and 3000 triangles (shared and global long-row scratch), P2 tetrahedra") {
    spk::AssemblyParams mirrored;
    mirrored.mirror = true;
    for (const int k : {300, 3000}) {
      const spk::TriangleMesh m = fan_mesh(k, false);
      const auto p = spk::assemble_symbolic(
          spk::mesh_matrix<Device>(int(m.vertices.size()), m.triangles), mirrored);
      CHECK(p.long_rows == 1);
      check_slots(p);
      check_mirror(p);
    }
    const spk::QuadraticTetMesh cube2 = spk::quadratic_mesh(spk::cube_mesh(2, 2, 2));
    const auto p2 = spk::assemble_symbolic(
        spk::mesh_matrix<Device>(int(cube2.nodes.size()), cube2.elements), mirrored);
    check_slots(p2);
    check_mirror(p2);
  }
  SUBCASE("no elements: no slots") {
    const auto p =
        spk::assemble_symbolic(spk::mesh_matrix<Device>(4, std::vector<std::array<int, 4>>{}));
    CHECK(p.contribution_slots.extent(0) == 0);
    CHECK(p.nnz() == 0);
    CHECK(p.diagonal.extent(0) == 0);  // the default: no mirror maps
  }
}
TEST_CASE_TEMPLATE_APPLY(assembly_slots, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("assembly: numeric re-assembly by incidence against the reference",
                          Device, assembly_by_incidence) {
  const spk::ElasticMaterial mat{1.5, 0.3};
  const spk::P1TetElasticity element(mat);
  SUBCASE("rows on each side of the stage capacity, new data each time") {
    // 500 tetrahedra share node 0 (2000 contributions in its row), the other rows have 4; an
    // unreferenced node (empty row) and a repeated tetrahedron.
    spk::TetMesh m = spike_mesh(500, 11);
    m.tetrahedra.push_back(m.tetrahedra[7]);
    m.vertices.push_back({5, 5, 5});
    const auto mesh = spk::mesh_matrix<Device>(int(m.vertices.size()), m.tetrahedra);
    // 3: every row in column order; 4: by incidence all but row 0 and the repeated
    // tetrahedron's nodes (8 contributions); 8: all but row 0; 2004 (row 0: 501 incidences)
    // and 4096: every row (on GPUs the capacity may be halved to fit shared memory, which
    // moves row 0 back to column order); 2003: all but row 0. With the mirror maps
    // (symmetric placement) the dense row 0 forms its upper entries and mirrors them.
    for (const bool mirror : {false, true}) {
      spk::AssemblyParams sp;
      sp.mirror = mirror;
      auto pattern = spk::assemble_symbolic(mesh, sp);
      const auto a = spk::assembled_matrix<spk::P1TetElasticity>(pattern);
      if (mirror) CHECK(spk::impl::mirror_pays(9, pattern.mirror_distance));
      for (const int stage : {3, 4, 8, 2003, 2004, 4096}) {
        CAPTURE(mirror);
        CAPTURE(stage);
        pattern.params.numeric_stage = stage;
        const std::vector<Vec3> xyz = perturbed(m.vertices, 0.02, unsigned(stage), false);
        const auto data = spk::element_data(element, mesh, spk::node_coordinates<Device>(xyz));
        spk::assemble_numeric(pattern, element, data, a);
        const Expanded got = expand<3>(a);
        check_against(got, spk_test::reference_p1_tet_elasticity(xyz, m.tetrahedra, mat), 1e-9);
        CHECK(got.row_map[3 * (m.vertices.size() - 1)] == got.row_map[3 * m.vertices.size()]);
      }
    }
  }
  SUBCASE("a perturbed cube and a real volume, default and forced stages, three steps") {
    const spk::TetMesh cube = spk::cube_mesh(5, 4, 3);
    const spk::TetMesh octopus = spk::read_tet_mesh(mesh_path("octopus-low.mesh"));
    for (const spk::TetMesh* m : {&cube, &octopus}) {
      const auto mesh = spk::mesh_matrix<Device>(int(m->vertices.size()), m->tetrahedra);
      auto pattern = spk::assemble_symbolic(mesh);
      const auto a = spk::assembled_matrix<spk::P1TetElasticity>(pattern);
      for (const int stage : {0, 32, 64, 512})
        for (unsigned step = 0; step < 3; ++step) {
          CAPTURE(stage);
          CAPTURE(step);
          pattern.params.numeric_stage = stage;
          const std::vector<Vec3> xyz = perturbed(m->vertices, 0.03, 20 + step, false);
          const auto data = spk::element_data(element, mesh, spk::node_coordinates<Device>(xyz));
          spk::assemble_numeric(pattern, element, data, a);
          check_against(expand<3>(a),
                        spk_test::reference_p1_tet_elasticity(xyz, m->tetrahedra, mat), 1e-11);
        }
    }
  }
}
TEST_CASE_TEMPLATE_APPLY(assembly_by_incidence, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("assembly: the numeric stage capacity", Device, assembly_stage_cap) {
  using exec = typename Device::execution_space;
  const bool groups = spk::impl::lane_groups_on<exec>();
  // automatic: staged only with lane groups (CUDA) and >= 32 contributions per row on average
  CHECK(spk::impl::numeric_launch<exec>(14.6, 20.0, 9, 0, 0, 0, true).cap == 0);
  const auto columns = spk::impl::numeric_launch<exec>(14.6, 91.4, 9, 0, 0, 0, false);
  const auto incidence = spk::impl::numeric_launch<exec>(14.6, 91.4, 9, 0, 0, 0, true);
  const auto laplacian = spk::impl::numeric_launch<exec>(14.6, 91.4, 1, 0, 0, 0, true);
  CHECK(columns.cap == (groups ? 128 : 0));  // a power of two near 1.25 x the mean
  CHECK(incidence.cap == (groups ? 96 : 0));  // a multiple of 16 >= 1.05 x the mean
  CHECK(laplacian.cap == (groups ? 128 : 0));  // scalar entries: as in column order
  CHECK(spk::impl::numeric_launch<exec>(14.6, 400.0, 9, 0, 0, 0, true).cap ==
        (groups ? 256 : 0));
  if (groups) CHECK(incidence.scratch_bytes == std::size_t(97 * 9 + 1) * sizeof(double));
  // a given stage is kept (on GPUs halved only where one warp's rows would not fit)
  CHECK(spk::impl::numeric_launch<exec>(14.6, 91.4, 9, 0, 0, 100, true).cap == 100);
  CHECK(spk::impl::numeric_launch<exec>(14.6, 91.4, 9, 0, 0, -1, true).cap == 0);
  // symmetric assembly: a row stages its upper contributions, so a smaller stage
  CHECK(spk::impl::numeric_launch<exec>(14.6, 91.4, 9, 0, 0, 0, true, 53.2).cap ==
        (groups ? 64 : 0));
  // symmetric assembly pays for block entries whose mirrors land near (16 MB of values)
  CHECK(spk::impl::mirror_pays(9, 29402));
  CHECK_FALSE(spk::impl::mirror_pays(9, 1029842));
  CHECK_FALSE(spk::impl::mirror_pays(1, 100));
}
TEST_CASE_TEMPLATE_APPLY(assembly_stage_cap, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("assembly: the mesh matrix E", Device, assembly_mesh_matrix) {
  // The paper's example (section III), zero-based: 8 nodes, 6 triangles.
  const std::vector<std::array<int, 3>> tris = {{0, 1, 2}, {0, 2, 3}, {3, 5, 0},
                                                {5, 3, 4}, {6, 0, 5}, {0, 6, 7}};
  const auto e = spk::mesh_matrix<Device>(8, tris);
  CHECK(e.n_nodes() == 8);
  CHECK(e.n_elements() == 6);
  CHECK(e.nnz() == 18);
  CHECK(e.memory_bytes() == 18 * sizeof(int));
  const auto csr = e.to_csr();
  const auto rm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), csr.row_map());
  const auto ci = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), csr.col_idx());
  const auto va = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), csr.values());
  CHECK(csr.nrows() == 8);
  CHECK(csr.ncols() == 6);
  // Row 0 (node 1 of the paper): elements 0..5 with local indices 0, 0, 2, -, 1, 0.
  REQUIRE(rm(1) == 5);
  const int cols0[5] = {0, 1, 2, 4, 5}, vals0[5] = {0, 0, 2, 1, 0};
  for (int s = 0; s < 5; ++s) {
    CHECK(ci(s) == cols0[s]);
    CHECK(va(s) == vals0[s]);
  }
  for (int v = 0; v < 8; ++v)
    for (int s = rm(v); s < rm(v + 1); ++s) CHECK(tris[std::size_t(ci(s))][std::size_t(va(s))] == v);
  // S = E E^T as printed in the paper: diagonal = elements per node, row lengths below.
  const auto p = spk::assemble_symbolic(e);
  const auto prm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p.row_map);
  const auto inc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p.incidence_map);
  const int degree[8] = {5, 1, 2, 3, 1, 3, 2, 1}, length[8] = {7, 3, 4, 5, 3, 5, 4, 3};
  for (int v = 0; v < 8; ++v) {
    CHECK(inc(v + 1) - inc(v) == degree[v]);
    CHECK(prm(v + 1) - prm(v) == length[v]);
  }
  CHECK(p.max_degree == 5);
  CHECK(p.max_row_length == 7);
  // The action map: every local pair of every element exactly once, on the entry (node k,
  // node b) of its element, in element order within an entry; incidences sorted by element.
  const auto pci = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p.col_idx);
  const auto con = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p.contributions);
  const auto cmap = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p.contribution_map);
  const auto incs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p.incidence);
  REQUIRE(con.extent(0) == 6 * 9);
  std::vector<int> seen(6 * 9, 0);
  for (int v = 0; v < 8; ++v) {
    for (int s = inc(v) + 1; s < inc(v + 1); ++s) CHECK(incs(s - 1) < incs(s));
    for (int j = prm(v); j < prm(v + 1); ++j)
      for (int q = cmap(j); q < cmap(j + 1); ++q) {
        const int w = con(q), b = w % 3, e = w / 9, k = (w / 3) % 3;
        CHECK(tris[std::size_t(e)][std::size_t(k)] == v);
        CHECK(tris[std::size_t(e)][std::size_t(b)] == pci(j));
        if (q > cmap(j)) CHECK(con(q - 1) / 9 < e);
        ++seen[std::size_t(w)];
      }
  }
  CHECK(std::count(seen.begin(), seen.end(), 1) == 6 * 9);
  CHECK(cmap(std::size_t(p.nnz())) == 6 * 9);
}
TEST_CASE_TEMPLATE_APPLY(assembly_mesh_matrix, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("assembly: errors name the element and the value", Device,
                          assembly_errors) {
  const std::vector<Vec3> nodes = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {2, 0, 0}};
  CHECK_THROWS_WITH_AS(spk::mesh_matrix<Device>(4, std::vector<std::array<int, 3>>{{0, 1, 2},
                                                                                   {1, 2, 9}}),
                       doctest::Contains("element 1 (nodes 1, 2, 9)"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::mesh_matrix<Device>(4, std::vector<std::array<int, 3>>{{0, 1, 2},
                                                                                   {1, 1, 2}}),
                       doctest::Contains("repeated node"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::mesh_matrix<Device>(4, std::vector<std::array<int, 3>>{{-1, 1, 2}}),
                       doctest::Contains("element 0"), std::invalid_argument);
  const auto mesh =
      spk::mesh_matrix<Device>(4, std::vector<std::array<int, 3>>{{0, 1, 2}, {0, 1, 3}});
  const auto coords = spk::node_coordinates<Device>(nodes);
  CHECK_THROWS_WITH_AS(spk::assemble(spk::P1TriangleLaplacian{}, mesh, coords),
                       doctest::Contains("element 1 (nodes 0, 1, 3) is degenerate"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::assemble(spk::P1TetLaplacian{}, mesh, coords),
                       doctest::Contains("p1-tet-laplacian elements have 4 nodes"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      spk::assemble(spk::P1TriangleLaplacian{}, mesh, spk::node_coordinates<Device>({{0, 0, 0}})),
      doctest::Contains("coordinates of 1 nodes for a mesh of 4"), std::invalid_argument);
  const auto good = spk::mesh_matrix<Device>(4, std::vector<std::array<int, 3>>{{0, 1, 2}});
  const auto p = spk::assemble_symbolic(good);
  const auto a = spk::assembled_matrix<spk::P1TriangleLaplacian>(p);
  Kokkos::View<double*, Device> short_data("short", 2);
  CHECK_THROWS_WITH_AS(spk::assemble_numeric(p, spk::P1TriangleLaplacian{}, short_data, a),
                       doctest::Contains("element data of 2 reals, expected 1 x 3"),
                       std::invalid_argument);
  const auto other = spk::assembled_matrix<spk::P1TriangleLaplacian>(spk::assemble_symbolic(good));
  const auto data = spk::element_data(spk::P1TriangleLaplacian{}, good, coords);
  CHECK_THROWS_WITH_AS(spk::assemble_numeric(p, spk::P1TriangleLaplacian{}, data, other),
                       doctest::Contains("does not share the pattern's structure"),
                       std::invalid_argument);
  spk::AssemblyParams odd;
  odd.symbolic_lanes = 12;
  CHECK_THROWS_WITH_AS(spk::assemble_symbolic(good, odd),
                       doctest::Contains("power of two up to 32, not 12"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::P1TetElasticity(spk::ElasticMaterial{1.0, 0.5}),
                       doctest::Contains("Poisson's ratio"), std::invalid_argument);
}
TEST_CASE_TEMPLATE_APPLY(assembly_errors, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("assembly: element data names the first degenerate element per call",
                          Device, assembly_degenerate_calls) {
  // Elasticity (12 reals: GPUs compute it by teams into the mesh matrix's flag): repeated calls
  // on one mesh (and its copy, which shares the flag), degenerate, good, degenerate again.
  const spk::TetMesh cube = spk::cube_mesh(3, 2, 2);
  const spk::P1TetElasticity element(spk::ElasticMaterial{1.0, 0.3});
  const auto mesh = spk::mesh_matrix<Device>(int(cube.vertices.size()), cube.tetrahedra);
  const auto copy = mesh;
  CHECK(mesh.flag().data() == copy.flag().data());
  std::vector<Vec3> flat = cube.vertices;
  for (int i : {cube.tetrahedra[5][0], cube.tetrahedra[5][1], cube.tetrahedra[5][2],
                cube.tetrahedra[5][3]})
    flat[std::size_t(i)] = {0.5, 0.5, 0.5};  // collapses element 5 and its neighbours
  int first = int(cube.tetrahedra.size());  // by the elements' own test (spk::impl)
  for (int e = int(cube.tetrahedra.size()) - 1; e >= 0; --e) {
    double x[4][3], g[10];
    const auto& tet = cube.tetrahedra[std::size_t(e)];
    for (int a = 0; a < 4; ++a)
      for (int d = 0; d < 3; ++d)
        x[a][d] = flat[std::size_t(tet[std::size_t(a)])][std::size_t(d)];
    if (!spk::impl::tet_gradients(x, g)) first = e;
  }
  REQUIRE(first <= 5);
  const std::string message = "element " + std::to_string(first) + " (nodes";
  Kokkos::View<double*, Device> data("data",
                                     cube.tetrahedra.size() * spk::P1TetElasticity::data_size);
  const auto bad_xyz = spk::node_coordinates<Device>(flat);
  const auto good_xyz = spk::node_coordinates<Device>(cube.vertices);
  for (int round = 0; round < 2; ++round) {
    CAPTURE(round);
    CHECK_THROWS_WITH_AS(spk::element_data(element, mesh, bad_xyz, data),
                         doctest::Contains(message.c_str()), std::invalid_argument);
    CHECK_NOTHROW(spk::element_data(element, copy, good_xyz, data));
    CHECK_NOTHROW(spk::element_data(element, mesh, good_xyz, data));
    CHECK_THROWS_WITH_AS(spk::element_data(element, copy, bad_xyz, data),
                         doctest::Contains(message.c_str()), std::invalid_argument);
    // numeric re-assembly from coordinates names it too (after its single wait)
    const auto pattern = spk::assemble_symbolic(mesh);
    const auto a = spk::assembled_matrix<spk::P1TetElasticity>(pattern);
    CHECK_THROWS_WITH_AS(spk::assemble_numeric(pattern, element, bad_xyz, data, a),
                         doctest::Contains(message.c_str()), std::invalid_argument);
    CHECK_THROWS_WITH_AS(spk::assemble_numeric(pattern, element, bad_xyz, data, a),
                         doctest::Contains("spk::assemble_numeric"), std::invalid_argument);
    CHECK_NOTHROW(spk::assemble_numeric(pattern, element, good_xyz, data, a));
    // a workspace of the wrong size
    Kokkos::View<double*, Device> short_data("short", data.extent(0) - 1);
    CHECK_THROWS_WITH_AS(spk::assemble_numeric(pattern, element, good_xyz, short_data, a),
                         doctest::Contains("spk::assemble_numeric: element data of"),
                         std::invalid_argument);
  }
  // The Laplacian (6 reals: GPUs compute it under a minimum reduction into the flag): the same
  // first degenerate element, by element_data and by numeric re-assembly from coordinates.
  {
    const spk::P1TetLaplacian lap;
    Kokkos::View<double*, Device> lap_data("lap", cube.tetrahedra.size() * lap.data_size);
    const auto pattern = spk::assemble_symbolic(mesh);
    const auto a = spk::assembled_matrix<spk::P1TetLaplacian>(pattern);
    for (int round = 0; round < 2; ++round) {
      CAPTURE(round);
      CHECK_THROWS_WITH_AS(spk::element_data(lap, mesh, bad_xyz, lap_data),
                           doctest::Contains(message.c_str()), std::invalid_argument);
      CHECK_NOTHROW(spk::element_data(lap, copy, good_xyz, lap_data));
      CHECK_THROWS_WITH_AS(spk::assemble_numeric(pattern, lap, bad_xyz, lap_data, a),
                           doctest::Contains(message.c_str()), std::invalid_argument);
      CHECK_NOTHROW(spk::assemble_numeric(pattern, lap, good_xyz, lap_data, a));
    }
  }
  // no elements: nothing to compute and nothing to report, by either call
  {
    const std::vector<std::array<int, 4>> none;
    const auto empty = spk::mesh_matrix<Device>(5, none);
    const auto xyz = spk::node_coordinates<Device>(std::vector<Vec3>(5, Vec3{0, 0, 0}));
    Kokkos::View<double*, Device> nothing("nothing", 0);
    CHECK_NOTHROW(spk::element_data(element, empty, xyz, nothing));
    CHECK_NOTHROW(spk::element_data(spk::P1TetLaplacian{}, empty, xyz, nothing));
    const auto pattern = spk::assemble_symbolic(empty);
    const auto a = spk::assembled_matrix<spk::P1TetElasticity>(pattern);
    CHECK(a.nnz() == 0);
    CHECK_NOTHROW(spk::assemble_numeric(pattern, element, xyz, nothing, a));
  }
  // a default-constructed mesh matrix has no flag and no elements
  CHECK(spk::MeshMatrix<Device>().flag().data() == nullptr);
}
TEST_CASE_TEMPLATE_APPLY(assembly_degenerate_calls, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("assembly: the chunked device scan", Device, assembly_scan) {
  for (const int len : {0, 1, 4095, 4096, 4097, 20011}) {
    CAPTURE(len);
    Kokkos::View<int*, Device> a("a", std::size_t(len));
    auto h = Kokkos::create_mirror_view(a);
    std::mt19937 rng{unsigned(len)};
    std::vector<std::int64_t> want(static_cast<std::size_t>(len));
    std::int64_t sum = 0;
    int biggest = 0;
    for (int i = 0; i < len; ++i) {
      h(i) = int(rng() % 50);
      sum += h(i);
      biggest = std::max(biggest, h(i));
      want[std::size_t(i)] = sum;
    }
    Kokkos::deep_copy(a, h);
    // with a lent workspace every other length, allocating its own otherwise
    Kokkos::View<std::int64_t*, Device> ws("ws", spk::impl::scan_workspace(std::size_t(len)));
    int got_max = -1;
    CHECK(spk::impl::scan_in_place("test", a, len % 2 ? ws.data() : nullptr, &got_max) == sum);
    CHECK(got_max == biggest);
    Kokkos::deep_copy(h, a);
    int bad = 0;
    for (int i = 0; i < len; ++i) bad += h(i) == want[std::size_t(i)] ? 0 : 1;
    CHECK(bad == 0);
  }
}
TEST_CASE_TEMPLATE_APPLY(assembly_scan, spk_test::all_devices);
