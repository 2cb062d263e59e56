// spk/impl/compound_convert.hpp: the device conversion of a CSR matrix of compound entries into
// an outer layout (CSR, ELLPACK-R, sliced ELLPACK) and an inner layout (spk/compound/layout.hpp).
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <string>

#include <spk/compound/entry.hpp>
#include <spk/compound/layout.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/formats/padding_limit.hpp>
#include <spk/impl/format_common.hpp>
#include <spk/impl/format_convert.hpp>

namespace spk {
namespace impl {

/// The row geometry of an outer layout and the arrays behind it.
template <class Device>
struct CompoundOuter {
  OuterGeometry<Device> geometry;
  Kokkos::View<int*, Device> offsets;  ///< CSR row offsets or SELL slice offsets (else empty)
  Kokkos::View<int*, Device> row_len;  ///< ELL / SELL row lengths (else empty)
  std::size_t slots = 0;               ///< stored slots including padding
};

/// Row geometry of `layout.outer` for a: O(nrows) on the device. Throws PaddingLimitExceeded
/// when the padded slots (with their column index and entry) exceed `limit`, and
/// std::invalid_argument when the slot count does not fit int32.
template <class E, class Device>
CompoundOuter<Device> compound_outer(const CsrMatrix<E, int, int, Device>& a,
                                     const CompoundLayout& layout, const PaddingLimit& limit) {
  using exec = typename Device::execution_space;
  using real = typename entry_traits<E>::real_type;
  CompoundOuter<Device> out;
  out.geometry.layout = layout.outer;
  const int nrows = a.nrows();
  if (layout.outer == OuterLayout::csr) {
    out.offsets = Kokkos::View<int*, Device>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::compound::offsets"),
        a.row_map().extent(0));
    Kokkos::deep_copy(out.offsets, a.row_map());
    out.slots = std::size_t(a.nnz());
  } else {
    out.row_len = row_lengths(a);
    const std::size_t csr_bytes = a.memory_bytes();
    const double per_slot = sizeof(int) + entry_traits<E>::matrix_components * sizeof(real);
    if (layout.outer == OuterLayout::ell) {
      const std::int64_t width = max_entry<exec>(out.row_len);
      out.geometry.pitch = round_up(std::size_t(nrows), 32);
      const double slots = double(width) * double(out.geometry.pitch);
      check_padding_limit("spk::CompoundMatrix (ELL)",
                          "width " + std::to_string(width) + " x pitch " +
                              std::to_string(out.geometry.pitch),
                          slots * per_slot, csr_bytes, limit);
      check_fits<int>("spk::CompoundMatrix (ELL)", "slots", slots);
      out.slots = std::size_t(slots);
    } else {
      const int slice = layout.slice;
      out.geometry.slice_shift = log2_exact(slice);
      const std::int64_t nslices = (std::int64_t(nrows) + slice - 1) / slice;
      Kokkos::View<std::int64_t*, Device> off("spk::compound::slice_offsets",
                                              std::size_t(nslices) + 1);
      const auto len = out.row_len;
      Kokkos::parallel_for(
          "spk::compound::slice_widths", Range64<exec>(0, nslices),
          KOKKOS_LAMBDA(const std::int64_t s) {
            int w = 0;
            for (std::int64_t i = s * slice; i < (s + 1) * slice && i < nrows; ++i)
              w = len(i) > w ? len(i) : w;
            off(s + 1) = std::int64_t(w) * slice;
          });
      const std::int64_t slots = row_lengths_to_offsets<exec>(off);
      check_padding_limit(
          "spk::CompoundMatrix (SELL)",
          std::to_string(nslices) + " slices of " + std::to_string(slice) + " rows",
          double(slots) * per_slot, csr_bytes, limit);
      check_fits<int>("spk::CompoundMatrix (SELL)", "slots", double(slots));
      out.offsets = Kokkos::View<int*, Device>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::compound::offsets"),
          std::size_t(nslices) + 1);
      const auto o = out.offsets;
      Kokkos::parallel_for(
          "spk::compound::slice_offsets", Range64<exec>(0, nslices + 1),
          KOKKOS_LAMBDA(const std::int64_t s) { o(s) = int(off(s)); });
      out.slots = std::size_t(slots);
    }
  }
  out.geometry.offsets = out.offsets;
  out.geometry.row_len = out.row_len;
  return out;
}

/// Writes the column indices and entry components of a into the slots of `outer` (entries laid
/// out as g). Padding slots keep their zero column and zero entry. O(nnz) on the device.
template <class E, class Device>
void compound_fill(const CsrMatrix<E, int, int, Device>& a, const OuterGeometry<Device>& outer,
                   const ComponentGeometry& g, const Kokkos::View<int*, Device>& cols,
                   const Kokkos::View<typename entry_traits<E>::real_type*, Device>& entries) {
  using exec = typename Device::execution_space;
  using real = typename entry_traits<E>::real_type;
  constexpr int components = entry_traits<E>::matrix_components;
  const auto row_map = a.row_map();
  const auto src_cols = a.col_idx();
  const auto src_vals = a.values();
  Kokkos::parallel_for(
      "spk::compound::fill", Range64<exec>(0, a.nrows()), KOKKOS_LAMBDA(const std::int64_t i) {
        const std::size_t first = outer.first(int(i)), stride = outer.stride(int(i));
        const int begin = row_map(i), n = row_map(i + 1) - begin;
        for (int j = 0; j < n; ++j) {
          const std::size_t k = first + std::size_t(j) * stride;
          cols(k) = src_cols(begin + j);
          const real* src = reinterpret_cast<const real*>(&src_vals(begin + j));
          for (int c = 0; c < components; ++c) entries(g.index(k, c)) = src[c];
        }
      });
}

}  // namespace impl
}  // namespace spk
