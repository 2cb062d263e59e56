// spk/compound/generate_compound.hpp: large compound-entry test matrices for the benchmarks: a
// complex-shifted 3D Laplacian generated on the device, and the quaternion and 3 x 3 block
// matrices of (uniformly refined) mesh files.
#pragma once

#include <Kokkos_Complex.hpp>
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <spk/compound/dirac_operator.hpp>
#include <spk/compound/elasticity.hpp>
#include <spk/compound/entry.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/impl/generate_kernels.hpp>
#include <spk/io/mesh_io.hpp>
#include <spk/mesh/reorder.hpp>
#include <spk/mesh/subdivide.hpp>
#include <string>

namespace spk {

/// Parameters of generate_complex_helmholtz: the wavenumber times the grid step (k h) and the
/// complex shift (beta_1, beta_2) of the shifted operator -Laplacian - (beta_1 - i beta_2) k^2.
struct HelmholtzOptions {
  double kh = 0.5;          ///< k h; about 2 pi / (points per wavelength)
  double shift_real = 1.0;  ///< beta_1 (1: the Helmholtz operator itself)
  double shift_imag = 0.5;  ///< beta_2 (damping; 0.5 is the usual shifted-Laplacian choice)
};

namespace impl {
/// Adds i * imag to the diagonal entry of every row (one thread per row; rows sorted).
template <class RowMap, class Cols, class Values, class Real>
struct AddImaginaryDiagonal {
  RowMap row_map;
  Cols col_idx;
  Values values;
  Real imag;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    for (std::int64_t k = std::int64_t(row_map(i)); k < std::int64_t(row_map(i + 1)); ++k)
      if (std::int64_t(col_idx(k)) == i) values(k) = Kokkos::complex<Real>(values(k).real(), imag);
  }
};
}  // namespace impl

/// Complex-shifted Helmholtz matrix h^2 (-Laplacian_h - (beta_1 - i beta_2) k^2) on an
/// n x n x n grid with Dirichlet boundary (7-point stencil, row = x + n (y + n z)): diagonal
/// 6 - (k h)^2 beta_1 + i (k h)^2 beta_2, -1 for each of the 6 grid neighbours inside the grid.
/// Complex symmetric (not Hermitian), n^3 rows, 7 n^3 - 6 n^2 entries, columns sorted. Built on
/// Device by Kokkos kernels (spk/generate.hpp's stencil machinery, then one pass over the
/// diagonals); sizes are checked against Ordinal and Offset before allocating (throws
/// std::invalid_argument). n >= 0. O(n^3) work on the device.
template <class Real = double, class Ordinal = int, class Offset = int,
          class Device = Kokkos::DefaultExecutionSpace>
CsrMatrix<Kokkos::complex<Real>, Ordinal, Offset, Device> generate_complex_helmholtz(
    std::int64_t n, const HelmholtzOptions& options = HelmholtzOptions()) {
  static_assert(std::is_floating_point<Real>::value,
                "spk::generate_complex_helmholtz: Real must be float or double");
  const char* who = "spk::generate_complex_helmholtz";
  require(std::isfinite(options.kh) && std::isfinite(options.shift_real) &&
              std::isfinite(options.shift_imag),
          who, "options must be finite (kh = ", options.kh, ", shift = ", options.shift_real, ", ",
          options.shift_imag, ")");
  const double k2 = options.kh * options.kh;
  impl::Stencil27 st;
  for (int o : {4, 10, 12, 14, 16, 22}) {
    st.used[o] = true;
    st.coef[o] = -1.0;
  }
  st.used[13] = true;
  st.coef[13] = 6.0 - k2 * options.shift_real;
  using matrix = CsrMatrix<Kokkos::complex<Real>, Ordinal, Offset, Device>;
  matrix a = impl::stencil_matrix<Kokkos::complex<Real>, Ordinal, Offset, Device>(who, n, n, n, n,
                                                                                  st, false, 0);
  using functor =
      impl::AddImaginaryDiagonal<typename matrix::row_map_type, typename matrix::index_type,
                                 typename matrix::values_type, Real>;
  Kokkos::parallel_for(
      "spk::generate_complex_helmholtz::diagonal",
      Kokkos::RangePolicy<typename matrix::execution_space, Kokkos::IndexType<std::int64_t>>(
          0, std::int64_t(a.nrows())),
      functor{a.row_map(), a.col_idx(), a.values(), Real(k2 * options.shift_imag)});
  Kokkos::fence();
  return a;
}

/// How the vertices of a refined mesh are numbered (level 0 always keeps the file's order).
enum class RefinedNumbering {
  first_reference,   ///< spk::renumber_by_first_reference after refining (the default)
  appended_midpoints ///< spk::subdivide's own: old vertices, then the new edge midpoints
};

/// The quaternion matrix E = D - rho (spk::dirac_operator, default potential) of the triangle
/// mesh in `path` (any format of spk::read_triangle_mesh) refined `subdivision_levels` times by
/// spk::subdivide: about V 4^levels rows and 7 V 4^levels entries for a closed surface of V
/// vertices. Unrefined, rows follow the file's vertex order; refined, `numbering`. Throws like
/// the reader, spk::subdivide and spk::dirac_operator.
template <class Real = double, class Device = Kokkos::DefaultExecutionSpace>
CsrMatrix<Quaternion<Real>, int, int, Device> quaternion_mesh_matrix(
    const std::string& path, int subdivision_levels = 0,
    RefinedNumbering numbering = RefinedNumbering::first_reference) {
  TriangleMesh mesh = subdivide(read_triangle_mesh(path), subdivision_levels);
  if (subdivision_levels > 0 && numbering == RefinedNumbering::first_reference)
    mesh = renumber_by_first_reference(mesh);
  return dirac_operator<Real, Device>(mesh);
}

/// The 3 x 3 block stiffness matrix (spk::elasticity_stiffness) of the tetrahedral mesh in
/// `path` (any format of spk::read_tet_mesh) refined `subdivision_levels` times by
/// spk::subdivide: about V 8^levels block rows for V vertices; rows numbered as in
/// quaternion_mesh_matrix. Throws like the reader,
/// spk::subdivide and spk::elasticity_stiffness.
template <class Real = double, class Device = Kokkos::DefaultExecutionSpace>
CsrMatrix<Block<Real, 3>, int, int, Device> elasticity_mesh_matrix(
    const std::string& path, int subdivision_levels = 0,
    const ElasticMaterial& material = ElasticMaterial(),
    RefinedNumbering numbering = RefinedNumbering::first_reference) {
  TetMesh mesh = subdivide(read_tet_mesh(path), subdivision_levels);
  if (subdivision_levels > 0 && numbering == RefinedNumbering::first_reference)
    mesh = renumber_by_first_reference(mesh);
  return elasticity_stiffness<Real, Device>(mesh, material);
}

}  // namespace spk
