// spk/compound/elasticity.hpp: the stiffness matrix of isotropic linear elasticity on a
// tetrahedral mesh with linear (constant-strain) elements, the 3 x 3 block test matrices of the
// compound kernels.
//
// Rows and columns: one block per vertex referenced by some tetrahedron, in vertex order
// (spk::vertex_rows); unknowns are the three displacement components of each such vertex. For a
// tetrahedron with volume V and shape-function gradients g_a (a = its 4 vertices), constant
// over it, the strain-displacement matrix of vertex a is the 6 x 3 B_a (Voigt order xx, yy, zz,
// xy, yz, zx with engineering shear strains) and the element adds
//   K_ab += V B_a^T C B_b = V (lambda g_a g_b^T + mu g_b g_a^T + mu (g_a . g_b) I)
// where C is the isotropic elasticity matrix with Lame parameters lambda = E nu / ((1 + nu)
// (1 - 2 nu)) and mu = E / (2 (1 + nu)). K is block-symmetric (K_ba = K_ab^T), positive
// semi-definite, and its null space holds the 6 rigid-body motions.
#pragma once

#include <Kokkos_Core.hpp>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <spk/compound/entry.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/impl/mesh_edges.hpp>
#include <spk/impl/mesh_matrix.hpp>
#include <spk/mesh/mesh.hpp>
#include <utility>
#include <vector>

namespace spk {

/// Material of spk::elasticity_stiffness: Young's modulus (> 0, any unit of pressure; K scales
/// with it) and Poisson's ratio (in (-1, 0.5)).
struct ElasticMaterial {
  double youngs_modulus = 1.0;
  double poisson_ratio = 0.3;
};

namespace impl {
/// Lame parameters (lambda, mu) of a checked material.
inline std::pair<double, double> lame_parameters(const ElasticMaterial& material) {
  const char* where = "spk::elasticity_stiffness";
  const double e_mod = material.youngs_modulus, nu = material.poisson_ratio;
  require(e_mod > 0 && std::isfinite(e_mod), where, "Young's modulus ", e_mod,
          " must be positive and finite");
  require(nu > -1.0 && nu < 0.5, where, "Poisson's ratio ", nu, " must lie in (-1, 0.5)");
  return {e_mod * nu / ((1 + nu) * (1 - 2 * nu)), e_mod / (2 * (1 + nu))};
}

/// The tetrahedra in row numbers and their pattern.
struct ElasticityInput {
  std::vector<std::array<int, 4>> tets;
  MeshPattern pattern;
};

inline ElasticityInput elasticity_input(const TetMesh& mesh) {
  const char* where = "spk::elasticity_stiffness";
  check_mesh(mesh, where);
  const std::vector<int> row = vertex_rows(mesh);
  std::int64_t nrows = 0;
  for (int r : row) nrows += r >= 0 ? 1 : 0;
  ElasticityInput in;
  in.tets.resize(mesh.tetrahedra.size());
  for (std::size_t t = 0; t < in.tets.size(); ++t)
    for (int k = 0; k < 4; ++k) in.tets[t][k] = row[std::size_t(mesh.tetrahedra[t][k])];
  in.pattern = mesh_pattern(where, nrows, in.tets, tetrahedron_edges);
  return in;
}

/// Adds every tetrahedron's V B_a^T C B_b to `values` (9 doubles per entry, row-major blocks);
/// throws naming the first tetrahedron of zero volume.
inline void elasticity_accumulate(const TetMesh& mesh, double lambda, double mu,
                                  const ElasticityInput& in, double* values) {
  const double eps = std::numeric_limits<double>::epsilon();
  for (std::size_t t = 0; t < in.tets.size(); ++t) {
    const auto& el = mesh.tetrahedra[t];
    const auto& p0 = mesh.vertices[std::size_t(el[0])];
    const auto c1 = sub3(mesh.vertices[std::size_t(el[1])], p0);
    const auto c2 = sub3(mesh.vertices[std::size_t(el[2])], p0);
    const auto c3 = sub3(mesh.vertices[std::size_t(el[3])], p0);
    const auto r1 = cross3(c2, c3), r2 = cross3(c3, c1), r3 = cross3(c1, c2);
    const double det = dot3(c1, r1);
    double l2 = 0;
    for (int a = 0; a < 4; ++a)
      for (int b = a + 1; b < 4; ++b) {
        const auto d = sub3(mesh.vertices[std::size_t(el[a])], mesh.vertices[std::size_t(el[b])]);
        l2 = std::max(l2, dot3(d, d));
      }
    // |det| at the rounding level of the triple product: zero volume.
    if (!(std::abs(det) > 64 * eps * l2 * std::sqrt(l2)))
      throw_invalid_argument("spk::elasticity_stiffness", "tetrahedron ", t, " (vertices ", el[0],
                             ", ", el[1], ", ", el[2], ", ", el[3], ") has zero volume");
    // Rows of the inverse of [c1 c2 c3] are the gradients of the barycentric coordinates of
    // vertices 1..3; they hold for either orientation, only the volume takes |det|.
    std::array<std::array<double, 3>, 4> g;
    for (int d = 0; d < 3; ++d) {
      g[1][d] = r1[d] / det;
      g[2][d] = r2[d] / det;
      g[3][d] = r3[d] / det;
      g[0][d] = -(g[1][d] + g[2][d] + g[3][d]);
    }
    const double v = std::abs(det) / 6.0;
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) {
        const auto& ga = g[a];
        const auto& gb = g[b];
        const double dab = dot3(ga, gb);
        double* k = values + 9 * in.pattern.position(in.tets[t][a], in.tets[t][b]);
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j)
            k[3 * i + j] +=
                v * (lambda * ga[i] * gb[j] + mu * ga[j] * gb[i] + (i == j ? mu * dab : 0.0));
      }
  }
}
}  // namespace impl

/// Stiffness matrix K of isotropic linear elasticity on `mesh` with linear tetrahedra (see the
/// file comment) as a 3 x 3 block CSR matrix on Device (row-major blocks, rows sorted by column,
/// no duplicates, int indices). Inverted tetrahedra count with their |volume|. Assembled in
/// double on the host, rounded to Real, copied to Device. Throws std::invalid_argument for
/// indices out of range, an invalid material, a zero-volume tetrahedron (naming its index) or
/// more entries than int offsets hold. O(vertices + tetrahedra) time and host memory.
template <class Real = double, class Device = Kokkos::DefaultExecutionSpace>
CsrMatrix<Block<Real, 3>, int, int, Device> elasticity_stiffness(
    const TetMesh& mesh, const ElasticMaterial& material = ElasticMaterial()) {
  static_assert(std::is_floating_point<Real>::value,
                "spk::elasticity_stiffness: Real must be float or double");
  const auto lame = impl::lame_parameters(material);
  const impl::ElasticityInput in = impl::elasticity_input(mesh);
  return impl::mesh_csr<Block<Real, 3>, Real, 9, Device>(in.pattern, [&](double* values) {
    impl::elasticity_accumulate(mesh, lame.first, lame.second, in, values);
  });
}

}  // namespace spk
