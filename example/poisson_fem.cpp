// Poisson problem on a tetrahedral mesh with spk: assemble the linear-tetrahedron Laplacian on
// the device (spk::assemble), impose Dirichlet values on the boundary nodes, solve with CG.
//
//   spk_poisson [MESH.mesh|.msh|.node [LEVELS]]   (default: a generated 16^3 cube)
//
// The boundary values are those of the linear field u = x + 2y - 3z, which P1 elements
// reproduce exactly: the discrete solution must equal it at every node up to the solver
// tolerance, which the program checks (exit status 1 if not).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <spk/assembly/assemble.hpp>
#include <spk/io/mesh_io.hpp>
#include <spk/mesh/generate_mesh.hpp>
#include <spk/mesh/reorder.hpp>
#include <spk/mesh/subdivide.hpp>
#include <spk/solvers/cg.hpp>

namespace {

/// Nodes on faces that belong to one tetrahedron only.
std::vector<int> boundary_flags(const spk::TetMesh& m) {
  std::map<std::array<int, 3>, int> faces;
  for (const auto& t : m.tetrahedra)
    for (int skip = 0; skip < 4; ++skip) {
      std::array<int, 3> f{};
      for (int k = 0, j = 0; k < 4; ++k)
        if (k != skip) f[std::size_t(j++)] = t[std::size_t(k)];
      std::sort(f.begin(), f.end());
      ++faces[f];
    }
  std::vector<int> flag(m.vertices.size(), 0);
  for (const auto& [f, count] : faces)
    if (count == 1)
      for (int v : f) flag[std::size_t(v)] = 1;
  return flag;
}

double exact(const std::array<double, 3>& p) { return p[0] + 2 * p[1] - 3 * p[2]; }

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  spk::TetMesh mesh = argc > 1 ? spk::subdivide(spk::read_tet_mesh(argv[1]),
                                                argc > 2 ? std::stoi(argv[2]) : 0)
                               : spk::cube_mesh(16, 16, 16);
  // Reverse Cuthill-McKee: neighbouring nodes close in memory (faster assembly and products).
  mesh = spk::renumbered(mesh, spk::rcm_numbering(mesh));
  const int n = int(mesh.vertices.size());
  std::printf("mesh: %d nodes, %zu tetrahedra\n", n, mesh.tetrahedra.size());

  // Assembly on the device: mesh matrix, symbolic phase, element data, numeric phase.
  const auto e = spk::mesh_matrix(n, mesh.tetrahedra);
  const auto coords = spk::node_coordinates(mesh.vertices);
  const auto a = spk::assemble(spk::P1TetLaplacian{}, e, coords);
  std::printf("Laplacian: %d rows, %d entries\n", a.nrows(), a.nnz());

  // Dirichlet rows become identity rows; their columns move to the right-hand side, so the
  // system stays symmetric positive definite.
  const std::vector<int> flag = boundary_flags(mesh);
  Kokkos::View<int*> boundary("boundary", std::size_t(n));
  Kokkos::View<double*> g("g", std::size_t(n)), b("b", std::size_t(n)), u("u", std::size_t(n));
  {
    auto bh = Kokkos::create_mirror_view(boundary);
    auto gh = Kokkos::create_mirror_view(g);
    for (int i = 0; i < n; ++i) {
      bh(i) = flag[std::size_t(i)];
      gh(i) = exact(mesh.vertices[std::size_t(i)]);
    }
    Kokkos::deep_copy(boundary, bh);
    Kokkos::deep_copy(g, gh);
  }
  const auto row_map = a.row_map();
  const auto col_idx = a.col_idx();
  const auto values = a.values();
  Kokkos::parallel_for(
      "poisson::dirichlet", n, KOKKOS_LAMBDA(int i) {
        double rhs = 0;  // f = 0: u is harmonic
        for (int s = row_map(i); s < row_map(i + 1); ++s) {
          const int j = col_idx(s);
          if (boundary(i)) {
            values(s) = j == i ? 1.0 : 0.0;
          } else if (boundary(j)) {
            rhs -= values(s) * g(j);
            values(s) = 0.0;
          }
        }
        b(i) = boundary(i) ? g(i) : rhs;
      });

  spk::SolverOptions options;
  options.relative_tolerance = 1e-10;
  options.max_iterations = 5000;
  const spk::SolverResult r = spk::cg(a, b, u, options);
  auto uh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u);
  double err = 0, scale = 0;
  for (int i = 0; i < n; ++i) {
    const double x = exact(mesh.vertices[std::size_t(i)]);
    err = std::max(err, std::abs(uh(i) - x));
    scale = std::max(scale, std::abs(x));
  }
  std::printf("CG: %s after %d iterations, relative residual %.2e\n",
              r.converged ? "converged" : "NOT converged", r.iterations, r.relative_residual);
  std::printf("max |u - exact| = %.3e (max |exact| = %.3e)\n", err, scale);
  const bool ok = r.converged && err <= 1e-6 * scale;
  std::printf("%s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
