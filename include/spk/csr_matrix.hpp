// spk/csr_matrix.hpp: compressed sparse row matrix on Kokkos views.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <spk/error.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/scalar.hpp>

namespace spk {

namespace impl {
/// Data that kernels derive from a matrix's structure (row statistics, plans, an explicit
/// transpose), computed on first use and shared by all copies of the matrix. Opaque here.
struct AnalysisSlot {
  std::shared_ptr<void> data;
};
}  // namespace impl

/// Compressed sparse row matrix: `row_map` (nrows + 1 offsets), `col_idx` and `values` (nnz each).
///
/// Template parameters: the value type (see spk/scalar.hpp), the column-index type (int32 or
/// int64), the offset type of row_map (int32 or int64) and anything Kokkos::View accepts as a
/// device (execution space, memory space or Kokkos::Device). The matrix shares its views (copying
/// a CsrMatrix is shallow, like copying a View); spk::copy_to makes deep copies. Entries of a row
/// are expected sorted by column without duplicates where a kernel says so; spk::validate checks.
template <class Scalar, class Ordinal = int, class Offset = int,
          class Device = Kokkos::DefaultExecutionSpace>
class CsrMatrix {
  static_assert(std::is_integral<Ordinal>::value && std::is_signed<Ordinal>::value,
                "spk::CsrMatrix: Ordinal must be a signed integer type (int32_t or int64_t)");
  static_assert(std::is_integral<Offset>::value,
                "spk::CsrMatrix: Offset must be an integer type (int32_t, int64_t or size_t)");

 public:
  using value_type = Scalar;
  using ordinal_type = Ordinal;
  using size_type = Offset;
  using device_type = impl::device_t<Device>;
  using execution_space = typename device_type::execution_space;
  using memory_space = typename device_type::memory_space;
  using row_map_type = Kokkos::View<size_type*, device_type>;
  using index_type = Kokkos::View<ordinal_type*, device_type>;
  using values_type = Kokkos::View<value_type*, device_type>;
  using host_type = CsrMatrix<Scalar, Ordinal, Offset, impl::HostDevice>;
  static constexpr const char* name = "csr";

  /// An empty 0 x 0 matrix.
  CsrMatrix() : row_map_("spk::csr::row_map", 1) {}

  /// Allocates an nrows x ncols matrix with room for nnz entries; row_map is zero-filled.
  CsrMatrix(ordinal_type nrows, ordinal_type ncols, size_type nnz)
      : nrows_(nrows),
        ncols_(ncols),
        row_map_("spk::csr::row_map", std::size_t(check_dims(nrows, ncols)) + 1),
        col_idx_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::csr::col_idx"),
                 check_nnz(nnz)),
        values_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::csr::values"),
                std::size_t(nnz)) {}

  /// Wraps existing views (no copy). Checks the extents; spk::validate checks the contents.
  CsrMatrix(ordinal_type nrows, ordinal_type ncols, row_map_type row_map, index_type col_idx,
            values_type values)
      : nrows_(nrows), ncols_(ncols), row_map_(row_map), col_idx_(col_idx), values_(values) {
    check_dims(nrows, ncols);
    require(row_map_.extent(0) == std::size_t(nrows) + 1, "spk::CsrMatrix",
            "row_map has ", row_map_.extent(0), " entries, expected nrows + 1 = ",
            std::size_t(nrows) + 1);
    require(col_idx_.extent(0) == values_.extent(0), "spk::CsrMatrix", "col_idx has ",
            col_idx_.extent(0), " entries but values has ", values_.extent(0));
  }

  /// Wraps existing views (no copy) like the constructor above and keeps `owner` alive for as
  /// long as this matrix or any copy of it. For views that do not own their memory (unmanaged
  /// views, e.g. the non-const alias of another library's const row map made by
  /// spk::from_kokkos_kernels): `owner` holds what does. Views taken out of such a matrix with
  /// row_map() etc. are valid only while the matrix (or a copy) lives.
  CsrMatrix(ordinal_type nrows, ordinal_type ncols, row_map_type row_map, index_type col_idx,
            values_type values, std::shared_ptr<const void> owner)
      : CsrMatrix(nrows, ncols, row_map, col_idx, values) {
    owner_ = std::move(owner);
  }

  ordinal_type nrows() const { return nrows_; }
  ordinal_type ncols() const { return ncols_; }
  /// Number of stored entries (the extent of col_idx and values).
  size_type nnz() const { return size_type(col_idx_.extent(0)); }

  const row_map_type& row_map() const { return row_map_; }
  const index_type& col_idx() const { return col_idx_; }
  const values_type& values() const { return values_; }
  /// What keeps unmanaged views of this matrix alive (see the constructor above); empty for
  /// matrices that own their views. Pass it on when wrapping this matrix's views elsewhere.
  const std::shared_ptr<const void>& owner() const { return owner_; }

  /// Kernels' cache of structure-derived data (see impl::AnalysisSlot), shared by copies.
  impl::AnalysisSlot& analysis() const { return *analysis_; }
  /// Drops the cached analysis; call after changing row_map, col_idx or (when an explicit
  /// transpose was cached by spmv) values in place.
  void invalidate_analysis() const { analysis_->data.reset(); }

  /// Bytes held by the three arrays.
  std::size_t memory_bytes() const {
    return row_map_.extent(0) * sizeof(size_type) +
           col_idx_.extent(0) * (sizeof(ordinal_type) + sizeof(value_type));
  }

 private:
  static std::size_t check_nnz(size_type nnz) {
    require(!(nnz < size_type(0)), "spk::CsrMatrix", "negative number of entries ", nnz);
    return std::size_t(nnz);
  }

  static ordinal_type check_dims(ordinal_type nrows, ordinal_type ncols) {
    require(nrows >= 0 && ncols >= 0, "spk::CsrMatrix", "negative dimensions ", nrows, " x ",
            ncols);
    return nrows;
  }

  ordinal_type nrows_ = 0;
  ordinal_type ncols_ = 0;
  row_map_type row_map_;
  index_type col_idx_;
  values_type values_;
  std::shared_ptr<const void> owner_;  // keeps unmanaged views' memory alive (usually empty)
  std::shared_ptr<impl::AnalysisSlot> analysis_ = std::make_shared<impl::AnalysisSlot>();
};

/// Deep copy of a CSR matrix into the memory space of DstDevice (a new matrix, same types).
template <class DstDevice, class S, class O, class F, class D>
CsrMatrix<S, O, F, DstDevice> copy_to(const CsrMatrix<S, O, F, D>& a) {
  CsrMatrix<S, O, F, DstDevice> b(a.nrows(), a.ncols(), a.nnz());
  Kokkos::deep_copy(b.row_map(), a.row_map());
  Kokkos::deep_copy(b.col_idx(), a.col_idx());
  Kokkos::deep_copy(b.values(), a.values());
  return b;
}

/// Deep copy into host memory.
template <class S, class O, class F, class D>
typename CsrMatrix<S, O, F, D>::host_type to_host(const CsrMatrix<S, O, F, D>& a) {
  return copy_to<impl::HostDevice>(a);
}

/// Builds a CSR matrix on Device from host arrays (copied). Sizes are checked; contents are not
/// (call spk::validate).
template <class Scalar, class Ordinal = int, class Offset = int,
          class Device = Kokkos::DefaultExecutionSpace>
CsrMatrix<Scalar, Ordinal, Offset, Device> make_csr(Ordinal nrows, Ordinal ncols,
                                                    const std::vector<Offset>& row_map,
                                                    const std::vector<Ordinal>& col_idx,
                                                    const std::vector<Scalar>& values) {
  require(row_map.size() == std::size_t(nrows) + 1, "spk::make_csr", "row_map has ",
          row_map.size(), " entries, expected nrows + 1 = ", std::size_t(nrows) + 1);
  require(col_idx.size() == values.size(), "spk::make_csr", "col_idx has ", col_idx.size(),
          " entries but values has ", values.size());
  using host_t = typename CsrMatrix<Scalar, Ordinal, Offset, Device>::host_type;
  host_t h(nrows, ncols, Offset(col_idx.size()));
  for (std::size_t i = 0; i < row_map.size(); ++i) h.row_map()(i) = row_map[i];
  for (std::size_t k = 0; k < col_idx.size(); ++k) {
    h.col_idx()(k) = col_idx[k];
    h.values()(k) = values[k];
  }
  return copy_to<Device>(h);
}

}  // namespace spk
