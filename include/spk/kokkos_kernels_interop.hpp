// spk/kokkos_kernels_interop.hpp: zero-copy views of spk::CsrMatrix as KokkosSparse::CrsMatrix
// and back (Kokkos Kernels 3.4 and 4.x).
//
// Both types hold three views: row offsets, column indices, values. Converting shares them, so
// a write through one matrix is seen by the other and neither conversion allocates or copies.
// One asymmetry: Kokkos Kernels stores its row offsets as a view of const values, spk as a view
// of non-const values. A non-const view cannot be made from a const one, so from_kokkos_kernels
// gives spk an unmanaged view of the same memory and stores the Kokkos Kernels view in the
// matrix's owner handle (spk::CsrMatrix::owner()), which keeps the memory alive for as long as
// the spk matrix or any copy of it lives; to_kokkos_kernels recovers that view, so a round trip
// hands Kokkos Kernels its own reference-counted view again. Writing through the alias is
// well-defined: Kokkos allocations are never const objects. Data that spk caches per matrix
// (spk::CsrMatrix::analysis()) is not told about writes made through the other side: call
// invalidate_analysis() on the spk matrix after changing its arrays that way.
#pragma once

#include <Kokkos_Core.hpp>
// Kokkos Kernels 3.4's headers expect Kokkos_Core.hpp to come first.
#include <KokkosSparse_CrsMatrix.hpp>
#include <memory>
#include <spk/csr_matrix.hpp>
#include <spk/scalar.hpp>
#include <type_traits>

namespace spk {

/// The KokkosSparse::CrsMatrix type that shares the arrays of CsrMatrix<S, O, F, D>.
template <class S, class O, class F, class D>
using kokkos_kernels_matrix_t =
    KokkosSparse::CrsMatrix<S, O, typename CsrMatrix<S, O, F, D>::device_type, void, F>;

namespace impl {
/// Deleter of the owner handle from_kokkos_kernels gives a CsrMatrix: it holds the Kokkos
/// Kernels row-offset view (found again with std::get_deleter) and drops it when the last copy
/// of the matrix goes.
template <class RowMap>
struct KokkosKernelsRowMapOwner {
  RowMap row_map;
  void operator()(const void*) { row_map = RowMap(); }
};
}  // namespace impl

/// A KokkosSparse::CrsMatrix sharing a's row offsets, column indices and values (no copy, O(1)).
/// The result keeps the shared memory alive on its own (reference-counted views), except when a
/// wraps unmanaged views passed in by the caller.
template <class S, class O, class F, class D>
kokkos_kernels_matrix_t<S, O, F, D> to_kokkos_kernels(const CsrMatrix<S, O, F, D>& a) {
  using KK = kokkos_kernels_matrix_t<S, O, F, D>;
  using row_map_t = typename KK::row_map_type;
  row_map_t row_map = a.row_map();
  // A matrix made by from_kokkos_kernels aliases a Kokkos Kernels view: hand that one back.
  if (const auto* owner = std::get_deleter<impl::KokkosKernelsRowMapOwner<row_map_t>>(a.owner()))
    if (owner->row_map.data() == a.row_map().data()) row_map = owner->row_map;
  return KK("spk::to_kokkos_kernels", a.nrows(), a.ncols(), F(a.nnz()),
            typename KK::values_type(a.values()), row_map, typename KK::index_type(a.col_idx()));
}

/// An spk::CsrMatrix sharing m's row offsets, column indices and values (no copy, O(1)); see the
/// top of this header for how the const row offsets are shared. The contents are not checked
/// (spk::validate does). A matrix without row offsets (default-constructed) gives an empty
/// 0 x ncols matrix with a newly allocated zero offset.
template <class S, class O, class KDevice, class MemoryTraits, class F>
CsrMatrix<S, O, F, typename KokkosSparse::CrsMatrix<S, O, KDevice, MemoryTraits, F>::device_type>
from_kokkos_kernels(const KokkosSparse::CrsMatrix<S, O, KDevice, MemoryTraits, F>& m) {
  static_assert(is_scalar<S>::value,
                "spk::from_kokkos_kernels: the value type must be float, double, "
                "Kokkos::complex<float> or Kokkos::complex<double> (non-const)");
  using device = typename KokkosSparse::CrsMatrix<S, O, KDevice, MemoryTraits, F>::device_type;
  using Csr = CsrMatrix<S, O, F, device>;
  using row_map_t = typename kokkos_kernels_matrix_t<S, O, F, device>::row_map_type;
  const typename Csr::index_type col_idx = m.graph.entries;
  const typename Csr::values_type values = m.values;
  if (m.graph.row_map.extent(0) == 0) {
    require(col_idx.extent(0) == 0, "spk::from_kokkos_kernels",
            "the matrix has no row offsets but ", col_idx.extent(0), " entries");
    return Csr(O(0), m.numCols(), typename Csr::row_map_type("spk::csr::row_map", 1), col_idx,
               values);
  }
  const row_map_t kk_row_map = m.graph.row_map;
  const typename Csr::row_map_type row_map(const_cast<F*>(kk_row_map.data()), kk_row_map.extent(0));
  std::shared_ptr<const void> owner(kk_row_map.data(),
                                    impl::KokkosKernelsRowMapOwner<row_map_t>{kk_row_map});
  return Csr(m.numRows(), m.numCols(), row_map, col_idx, values, std::move(owner));
}

}  // namespace spk
