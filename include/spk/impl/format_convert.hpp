// spk/impl/format_convert.hpp: device conversions shared by the padded formats (ELL, HLL, HYB):
// sums over row lengths and the way back from a padded row format to CSR.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>

#include <spk/csr_matrix.hpp>
#include <spk/impl/format_common.hpp>
#include <spk/impl/radix_sort.hpp>

namespace spk {
namespace impl {

/// Sum of the entries of a rank-1 integer view, on ExecSpace.
template <class ExecSpace, class View>
std::int64_t sum_entries(const View& v) {
  std::int64_t s = 0;
  Kokkos::parallel_reduce(
      "spk::sum_entries", Range64<ExecSpace>(0, std::int64_t(v.extent(0))),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& acc) { acc += std::int64_t(v(i)); }, s);
  return s;
}

/// Turns row_map(i + 1) = length of row i (row_map(0) = 0) into CSR row offsets in place, on
/// ExecSpace, and returns the number of entries; throws when it does not fit the offset type.
template <class ExecSpace, class RowMap>
std::int64_t row_lengths_to_offsets(const RowMap& row_map) {
  using F = typename RowMap::non_const_value_type;
  std::int64_t nnz = 0;
  Kokkos::parallel_scan(
      "spk::to_csr::scan", Range64<ExecSpace>(0, std::int64_t(row_map.extent(0))),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& sum, const bool final) {
        sum += std::int64_t(row_map(i));
        if (final) row_map(i) = F(sum);
      },
      nnz);
  check_fits<F>("spk::to_csr", "entries", double(nnz));
  return nnz;
}

/// CSR matrix of the rows of a padded row format: row geom.row(p) holds the row_len(p) entries
/// at geom.base(p) + k * geom.stride(p) of values / col_idx, in that order. On the device.
template <class Csr, class S, class O, class Geometry, class D>
Csr padded_rows_to_csr(O nrows, O ncols, const S* values, const O* col_idx, const Geometry& geom,
                       const Kokkos::View<const O*, D>& row_len) {
  using F = typename Csr::size_type;
  using exec = typename Csr::execution_space;
  Kokkos::View<F*, typename Csr::device_type> row_map("spk::to_csr::row_map",
                                                      std::size_t(nrows) + 1);
  Kokkos::parallel_for(
      "spk::to_csr::lengths", Range64<exec>(0, std::int64_t(nrows)),
      KOKKOS_LAMBDA(const std::int64_t p) { row_map(geom.row(O(p)) + 1) = F(row_len(p)); });
  const std::int64_t nnz = row_lengths_to_offsets<exec>(row_map);
  Csr b(nrows, ncols, typename Csr::row_map_type(row_map),
        typename Csr::index_type(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::csr::col_idx"), std::size_t(nnz)),
        typename Csr::values_type(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::csr::values"), std::size_t(nnz)));
  const auto out_cols = b.col_idx();
  const auto out_vals = b.values();
  Kokkos::parallel_for(
      "spk::to_csr::fill", Range64<exec>(0, std::int64_t(nrows)),
      KOKKOS_LAMBDA(const std::int64_t p) {
        const F dst = row_map(geom.row(O(p)));
        const std::size_t base = geom.base(O(p));
        const std::size_t st = geom.stride(O(p));
        for (O k = 0; k < row_len(p); ++k) {
          out_cols(dst + k) = col_idx[base + std::size_t(k) * st];
          out_vals(dst + k) = values[base + std::size_t(k) * st];
        }
      });
  return b;
}

}  // namespace impl
}  // namespace spk
