// spk/impl/mesh_matrix.hpp: host assembly of matrices with one row per mesh vertex (the
// vertices referenced by some element, in vertex order) and one entry per pair of vertices that
// share an element: the compacted elements, the CSR pattern (sorted rows, no duplicates) and the
// copy of the assembled values into a spk::CsrMatrix on a device.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/mesh_edges.hpp>
#include <type_traits>
#include <vector>

namespace spk {
namespace impl {

/// The sparsity pattern of a mesh matrix: row a holds a and every vertex sharing an element
/// with a, sorted. Built from the edge numbering in O(rows + edges).
struct MeshPattern {
  std::int64_t nrows = 0;
  std::vector<std::int64_t> row_map;
  std::vector<int> col_idx;

  /// Position of entry (a, b) in col_idx; the entry must exist. O(log row length).
  std::int64_t position(int a, int b) const {
    const auto first = col_idx.begin() + row_map[std::size_t(a)];
    const auto last = col_idx.begin() + row_map[std::size_t(a) + 1];
    return std::int64_t(std::lower_bound(first, last, b) - col_idx.begin());
  }
};

/// Pattern of the compacted elements `elements` (row indices in [0, nrows)); throws naming
/// `where` when the entries do not fit int offsets.
template <class Element, std::size_t NP>
MeshPattern mesh_pattern(const char* where, std::int64_t nrows,
                         const std::vector<Element>& elements,
                         const std::array<std::array<int, 2>, NP>& pairs) {
  const EdgeIndex edges(std::size_t(nrows), elements, pairs);
  MeshPattern p;
  p.nrows = nrows;
  p.row_map.assign(std::size_t(nrows) + 1, 0);
  for (std::int64_t a = 0; a < nrows; ++a) {
    p.row_map[std::size_t(a) + 1] +=
        1 + (edges.start(std::size_t(a) + 1) - edges.start(std::size_t(a)));
    for (std::int64_t e = edges.start(std::size_t(a)); e < edges.start(std::size_t(a) + 1); ++e)
      p.row_map[std::size_t(edges.upper(std::size_t(e))) + 1] += 1;
  }
  for (std::int64_t a = 0; a < nrows; ++a)
    p.row_map[std::size_t(a) + 1] += p.row_map[std::size_t(a)];
  const std::int64_t nnz = p.row_map[std::size_t(nrows)];
  if (nnz > std::int64_t(std::numeric_limits<int>::max()))
    throw_invalid_argument(where, "matrix of ", nrows, " rows would have ", nnz,
                           " entries, more than int offsets can address");
  p.col_idx.resize(std::size_t(nnz));
  std::vector<std::int64_t> next(p.row_map.begin(), p.row_map.end() - 1);
  // Rows are visited in increasing order, so every row receives its lower neighbours (from the
  // rows before it), then itself, then its upper neighbours: sorted without a sort.
  for (std::int64_t a = 0; a < nrows; ++a) {
    p.col_idx[std::size_t(next[std::size_t(a)]++)] = int(a);
    for (std::int64_t e = edges.start(std::size_t(a)); e < edges.start(std::size_t(a) + 1); ++e) {
      const int b = edges.upper(std::size_t(e));
      p.col_idx[std::size_t(next[std::size_t(a)]++)] = b;
      p.col_idx[std::size_t(next[std::size_t(b)]++)] = int(a);
    }
  }
  return p;
}

/// A CSR matrix on Device with the pattern `p` and the values that `assemble(double* v)` adds
/// into v (N reals per entry, entries in the pattern's order, zero on entry). Scalar must consist
/// of exactly N values of Real in order (spk/compound/entry.hpp's value types do). For Real =
/// double the values are assembled in place in the host mirror of the matrix (no copy at all on
/// host devices); for float in a double buffer, then rounded. O(nnz) besides `assemble`.
template <class Scalar, class Real, int N, class Device, class Assemble>
CsrMatrix<Scalar, int, int, Device> mesh_csr(const MeshPattern& p, Assemble&& assemble) {
  static_assert(sizeof(Scalar) == N * sizeof(Real),
                "spk::impl::mesh_csr: Scalar must hold exactly N values of Real");
  using matrix = CsrMatrix<Scalar, int, int, Device>;
  const std::size_t nnz = p.col_idx.size();
  matrix a(int(p.nrows), int(p.nrows), int(nnz));
  const auto row_map = Kokkos::create_mirror_view(a.row_map());
  const auto col_idx = Kokkos::create_mirror_view(a.col_idx());
  const auto values = Kokkos::create_mirror_view(a.values());
  for (std::size_t i = 0; i < p.row_map.size(); ++i) row_map(i) = int(p.row_map[i]);
  std::copy(p.col_idx.begin(), p.col_idx.end(), col_idx.data());
  if constexpr (std::is_same<Real, double>::value) {
    double* v = reinterpret_cast<double*>(values.data());
    std::fill(v, v + N * nnz, 0.0);
    assemble(v);
  } else {
    std::vector<double> v(N * nnz, 0.0);
    assemble(v.data());
    Real* out = reinterpret_cast<Real*>(values.data());
    for (std::size_t k = 0; k < N * nnz; ++k) out[k] = Real(v[k]);
  }
  Kokkos::deep_copy(a.row_map(), row_map);
  Kokkos::deep_copy(a.col_idx(), col_idx);
  Kokkos::deep_copy(a.values(), values);
  return a;
}

}  // namespace impl
}  // namespace spk
