// spk/mesh/generate_mesh.hpp: structured meshes of a rectangle (triangles) and of a box
// (tetrahedra), for tests and benchmarks of mesh-built matrices and of mesh reorderings
// (spk/mesh/reorder.hpp) at any size.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <spk/error.hpp>
#include <spk/mesh/mesh.hpp>

namespace spk {

namespace impl {
/// Throws std::invalid_argument (naming `where` and the value) unless n >= 1.
inline void check_cells(const char* where, const char* name, int n) {
  require(n >= 1, where, name, " = ", n, " must be >= 1");
}

/// Throws std::invalid_argument (naming `where` and the value) unless l is positive and finite.
inline void check_length(const char* where, const char* name, double l) {
  require(std::isfinite(l) && l > 0, where, name, " = ", l, " must be positive and finite");
}

/// The product of `factors` (each in [1, INT_MAX]), as an int; throws std::invalid_argument
/// naming `where`, `what` and the factors when it exceeds INT_MAX.
template <std::size_t N>
int checked_count(const char* where, const char* what, const std::array<std::int64_t, N>& factors) {
  constexpr std::int64_t limit = std::numeric_limits<int>::max();
  std::int64_t p = 1;
  bool fits = true;
  for (std::int64_t f : factors) {
    p *= f;  // p <= 2^31 and f <= 2^31: no overflow
    if (p > limit) {
      fits = false;
      break;
    }
  }
  if (!fits) {
    std::string product;
    for (std::size_t i = 0; i < N; ++i) product += (i ? " * " : "") + std::to_string(factors[i]);
    throw_invalid_argument(where, "the mesh would have ", product, " ", what,
                           ", more than int can index");
  }
  return int(p);
}

/// Coordinate of grid line i of n over [0, l]; exactly 0 and l at the ends.
inline double grid_coordinate(int i, int n, double l) {
  return i == n ? l : l * (double(i) / double(n));
}
}  // namespace impl

/// Structured triangulation of the rectangle [0, lx] x [0, ly] in the plane z = 0: nx x ny
/// rectangular cells, (nx + 1)(ny + 1) vertices numbered x-fastest (vertex (i, j) is
/// j (nx + 1) + i, at (lx i / nx, ly j / ny, 0)), and 2 nx ny triangles, cell by cell x-fastest.
/// Every cell is cut along the same diagonal, from its corner (i, j) to (i + 1, j + 1) (no
/// alternation), into (v(i, j), v(i+1, j), v(i+1, j+1)) and (v(i, j), v(i+1, j+1), v(i, j+1)):
/// all counter-clockwise seen from +z (normal +z, area lx ly / (2 nx ny) each).
/// Throws std::invalid_argument for nx or ny < 1, lx or ly not positive and finite, or more
/// vertices or triangles than int can index. O(nx ny).
inline TriangleMesh plate_mesh(int nx, int ny, double lx = 1.0, double ly = 1.0) {
  const char* where = "spk::plate_mesh";
  impl::check_cells(where, "nx", nx);
  impl::check_cells(where, "ny", ny);
  impl::check_length(where, "lx", lx);
  impl::check_length(where, "ly", ly);
  const int nv =
      impl::checked_count<2>(where, "vertices", {std::int64_t(nx) + 1, std::int64_t(ny) + 1});
  const int nt = impl::checked_count<3>(where, "triangles", {2, nx, ny});
  TriangleMesh m;
  m.vertices.resize(std::size_t(nv));
  for (int j = 0; j <= ny; ++j)
    for (int i = 0; i <= nx; ++i)
      m.vertices[std::size_t(j) * std::size_t(nx + 1) + std::size_t(i)] = {
          impl::grid_coordinate(i, nx, lx), impl::grid_coordinate(j, ny, ly), 0.0};
  m.triangles.reserve(std::size_t(nt));
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const int a = j * (nx + 1) + i, b = a + 1, c = b + (nx + 1), d = a + (nx + 1);
      m.triangles.push_back({a, b, c});
      m.triangles.push_back({a, c, d});
    }
  return m;
}

/// Structured conforming tetrahedral mesh of the box [0, lx] x [0, ly] x [0, lz]: nx x ny x nz
/// cells, (nx + 1)(ny + 1)(nz + 1) vertices numbered x-fastest (vertex (i, j, k) is
/// (k (ny + 1) + j)(nx + 1) + i, at (lx i / nx, ly j / ny, lz k / nz)), and 6 nx ny nz
/// tetrahedra, cell by cell x-fastest. Each cell is split by the Kuhn (Freudenthal) subdivision:
/// one tetrahedron per order of the axes, along the path from the cell's corner (i, j, k) to
/// (i + 1, j + 1, k + 1) that steps along the axes in that order. All six share the cell's main
/// diagonal, every cell is cut the same way, so the faces of neighbouring cells match (the mesh is
/// conforming). Vertex order is chosen so that every tetrahedron has positive signed volume
/// (spk::tetrahedron_signed_volume), lx ly lz / (6 nx ny nz) each.
/// Throws std::invalid_argument for nx, ny or nz < 1, a length not positive and finite, or more
/// vertices or tetrahedra than int can index. O(nx ny nz).
inline TetMesh cube_mesh(int nx, int ny, int nz, double lx = 1.0, double ly = 1.0,
                         double lz = 1.0) {
  const char* where = "spk::cube_mesh";
  impl::check_cells(where, "nx", nx);
  impl::check_cells(where, "ny", ny);
  impl::check_cells(where, "nz", nz);
  impl::check_length(where, "lx", lx);
  impl::check_length(where, "ly", ly);
  impl::check_length(where, "lz", lz);
  const int nv = impl::checked_count<3>(
      where, "vertices", {std::int64_t(nx) + 1, std::int64_t(ny) + 1, std::int64_t(nz) + 1});
  const int nt = impl::checked_count<4>(where, "tetrahedra", {6, nx, ny, nz});
  TetMesh m;
  m.vertices.resize(std::size_t(nv));
  const std::size_t sx = std::size_t(nx) + 1, sy = std::size_t(ny) + 1;
  for (int k = 0; k <= nz; ++k)
    for (int j = 0; j <= ny; ++j)
      for (int i = 0; i <= nx; ++i)
        m.vertices[(std::size_t(k) * sy + std::size_t(j)) * sx + std::size_t(i)] = {
            impl::grid_coordinate(i, nx, lx), impl::grid_coordinate(j, ny, ly),
            impl::grid_coordinate(k, nz, lz)};
  // The path for axis order (a, b, c) visits 0, e_a, e_a + e_b, e_a + e_b + e_c; its volume has
  // the sign of the permutation (det(e_a, e_b, e_c)), so odd orders swap the middle vertices.
  struct Path {
    std::array<int, 3> axes;
    bool odd;
  };
  constexpr std::array<Path, 6> paths{{{{0, 1, 2}, false},
                                       {{1, 2, 0}, false},
                                       {{2, 0, 1}, false},
                                       {{0, 2, 1}, true},
                                       {{1, 0, 2}, true},
                                       {{2, 1, 0}, true}}};
  const int step[3] = {1, nx + 1, (nx + 1) * (ny + 1)};
  m.tetrahedra.reserve(std::size_t(nt));
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const int v0 = (k * (ny + 1) + j) * (nx + 1) + i;
        for (const Path& p : paths) {
          const int v1 = v0 + step[p.axes[0]];
          const int v2 = v1 + step[p.axes[1]];
          const int v3 = v2 + step[p.axes[2]];
          if (p.odd)
            m.tetrahedra.push_back({v0, v2, v1, v3});
          else
            m.tetrahedra.push_back({v0, v1, v2, v3});
        }
      }
  return m;
}

}  // namespace spk
