// spk/coo_matrix.hpp: coordinate (triplet) sparse matrix on Kokkos views.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <type_traits>
#include <vector>

#include <spk/error.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/scalar.hpp>

namespace spk {

/// Coordinate matrix: nnz triplets (row_idx, col_idx, values) in any order, duplicates allowed
/// (they add up when converted to CSR). Template parameters as spk::CsrMatrix; `Offset` is the
/// type that counts entries.
template <class Scalar, class Ordinal = int, class Offset = int,
          class Device = Kokkos::DefaultExecutionSpace>
class CooMatrix {
  static_assert(std::is_integral<Ordinal>::value && std::is_signed<Ordinal>::value,
                "spk::CooMatrix: Ordinal must be a signed integer type (int32_t or int64_t)");
  static_assert(std::is_integral<Offset>::value,
                "spk::CooMatrix: Offset must be an integer type (int32_t, int64_t or size_t)");

 public:
  using value_type = Scalar;
  using ordinal_type = Ordinal;
  using size_type = Offset;
  using device_type = impl::device_t<Device>;
  using execution_space = typename device_type::execution_space;
  using memory_space = typename device_type::memory_space;
  using index_type = Kokkos::View<ordinal_type*, device_type>;
  using values_type = Kokkos::View<value_type*, device_type>;
  using host_type = CooMatrix<Scalar, Ordinal, Offset, impl::HostDevice>;
  static constexpr const char* name = "coo";

  CooMatrix() = default;

  /// Allocates room for nnz triplets (contents uninitialised).
  CooMatrix(ordinal_type nrows, ordinal_type ncols, size_type nnz)
      : nrows_(nrows),
        ncols_(ncols),
        row_idx_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::coo::row_idx"),
                 check_nnz(nrows, ncols, nnz)),
        col_idx_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::coo::col_idx"),
                 std::size_t(nnz)),
        values_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::coo::values"),
                std::size_t(nnz)) {
    check_dims();
  }

  /// Wraps existing views (no copy); the three must have the same extent.
  CooMatrix(ordinal_type nrows, ordinal_type ncols, index_type row_idx, index_type col_idx,
            values_type values)
      : nrows_(nrows), ncols_(ncols), row_idx_(row_idx), col_idx_(col_idx), values_(values) {
    check_dims();
    require(row_idx_.extent(0) == col_idx_.extent(0) && col_idx_.extent(0) == values_.extent(0),
            "spk::CooMatrix", "row_idx, col_idx and values have different extents (",
            row_idx_.extent(0), ", ", col_idx_.extent(0), ", ", values_.extent(0), ")");
  }

  ordinal_type nrows() const { return nrows_; }
  ordinal_type ncols() const { return ncols_; }
  size_type nnz() const { return size_type(values_.extent(0)); }
  const index_type& row_idx() const { return row_idx_; }
  const index_type& col_idx() const { return col_idx_; }
  const values_type& values() const { return values_; }

  /// Bytes held by the three arrays.
  std::size_t memory_bytes() const {
    return values_.extent(0) * (2 * sizeof(ordinal_type) + sizeof(value_type));
  }

 private:
  static std::size_t check_nnz(ordinal_type nrows, ordinal_type ncols, size_type nnz) {
    require(nrows >= 0 && ncols >= 0, "spk::CooMatrix", "negative dimensions ", nrows, " x ",
            ncols);
    require(!(nnz < size_type(0)), "spk::CooMatrix", "negative number of entries ", nnz);
    return std::size_t(nnz);
  }

  void check_dims() const {
    require(nrows_ >= 0 && ncols_ >= 0, "spk::CooMatrix", "negative dimensions ", nrows_, " x ",
            ncols_);
  }

  ordinal_type nrows_ = 0;
  ordinal_type ncols_ = 0;
  index_type row_idx_;
  index_type col_idx_;
  values_type values_;
};

/// Deep copy of a COO matrix into the memory space of DstDevice.
template <class DstDevice, class S, class O, class F, class D>
CooMatrix<S, O, F, DstDevice> copy_to(const CooMatrix<S, O, F, D>& a) {
  CooMatrix<S, O, F, DstDevice> b(a.nrows(), a.ncols(), a.nnz());
  Kokkos::deep_copy(b.row_idx(), a.row_idx());
  Kokkos::deep_copy(b.col_idx(), a.col_idx());
  Kokkos::deep_copy(b.values(), a.values());
  return b;
}

/// Deep copy into host memory.
template <class S, class O, class F, class D>
typename CooMatrix<S, O, F, D>::host_type to_host(const CooMatrix<S, O, F, D>& a) {
  return copy_to<impl::HostDevice>(a);
}

/// Host-side builder: collect triplets, then build a CooMatrix on any device.
template <class Scalar, class Ordinal = int, class Offset = int>
class CooBuilder {
 public:
  CooBuilder(Ordinal nrows, Ordinal ncols) : nrows_(nrows), ncols_(ncols) {
    require(nrows >= 0 && ncols >= 0, "spk::CooBuilder", "negative dimensions ", nrows, " x ",
            ncols);
  }
  void reserve(std::size_t n) {
    rows_.reserve(n);
    cols_.reserve(n);
    vals_.reserve(n);
  }
  /// Appends entry (i, j) = v; throws std::invalid_argument when (i, j) is out of range.
  void add(Ordinal i, Ordinal j, const Scalar& v) {
    if (i < 0 || i >= nrows_ || j < 0 || j >= ncols_)
      throw_invalid_argument("spk::CooBuilder::add", "entry (", i, ", ", j,
                             ") out of range for a ", nrows_, " x ", ncols_, " matrix");
    rows_.push_back(i);
    cols_.push_back(j);
    vals_.push_back(v);
  }
  std::size_t size() const { return vals_.size(); }

  /// Copies the triplets into a new CooMatrix on Device.
  template <class Device = Kokkos::DefaultExecutionSpace>
  CooMatrix<Scalar, Ordinal, Offset, Device> build() const {
    CooMatrix<Scalar, Ordinal, Offset, impl::HostDevice> h(nrows_, ncols_, Offset(vals_.size()));
    for (std::size_t k = 0; k < vals_.size(); ++k) {
      h.row_idx()(k) = rows_[k];
      h.col_idx()(k) = cols_[k];
      h.values()(k) = vals_[k];
    }
    return copy_to<Device>(h);
  }

 private:
  Ordinal nrows_, ncols_;
  std::vector<Ordinal> rows_, cols_;
  std::vector<Scalar> vals_;
};

}  // namespace spk
