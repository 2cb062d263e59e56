// cuSPARSE SpMV baselines (CSR ALG1/ALG2, COO, sliced ELL) on spk's device arrays, for the
// benchmarks.
#pragma once

#ifdef SPK_HAVE_CUSPARSE

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cusparse.h>
#include <memory>
#include <string>
#include <type_traits>

#include <spk/error.hpp>
#include <spk/mode.hpp>

namespace spk_bench {

inline void cusparse_check(cusparseStatus_t s, const char* what) {
  if (s != CUSPARSE_STATUS_SUCCESS)
    spk::throw_runtime_error("cusparse", what, " failed: ", cusparseGetErrorString(s));
}

template <class S>
cudaDataType cuda_type() {
  if (std::is_same<S, float>::value) return CUDA_R_32F;
  if (std::is_same<S, double>::value) return CUDA_R_64F;
  if (std::is_same<S, Kokkos::complex<float>>::value) return CUDA_C_32F;
  return CUDA_C_64F;
}

template <class I>
cusparseIndexType_t cuda_index_type() {
  return sizeof(I) == 4 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
}

/// A CSR matrix in cuSPARSE's sliced ELL layout (slices of slice_size rows, each stored
/// column-major with the width of its longest row; padding has column -1 and value 0), built on
/// the device.
template <class S>
struct SellArrays {
  Kokkos::View<int*, Kokkos::CudaSpace> slice_offsets;  ///< n_slices + 1, in entries
  Kokkos::View<int*, Kokkos::CudaSpace> col_idx;
  Kokkos::View<S*, Kokkos::CudaSpace> values;
  int slice_size = 32;
  std::int64_t nrows = 0, ncols = 0, nnz = 0;
  std::size_t memory_bytes() const {
    return slice_offsets.extent(0) * sizeof(int) + col_idx.extent(0) * (sizeof(int) + sizeof(S));
  }
};

template <class Matrix>
SellArrays<typename Matrix::value_type> make_sell(const Matrix& a, int slice_size) {
  using S = typename Matrix::value_type;
  using exec = Kokkos::Cuda;
  SellArrays<S> out;
  out.slice_size = slice_size;
  out.nrows = a.nrows();
  out.ncols = a.ncols();
  out.nnz = a.nnz();
  const std::int64_t nrows = a.nrows();
  const std::int64_t nslices = (nrows + slice_size - 1) / slice_size;
  const auto row_map = a.row_map();
  const auto cols = a.col_idx();
  const auto vals = a.values();
  Kokkos::View<int*, Kokkos::CudaSpace> offsets("spk_bench::sell_offsets", nslices + 1);
  Kokkos::parallel_for(
      "spk_bench::sell_widths", Kokkos::RangePolicy<exec>(0, nslices),
      KOKKOS_LAMBDA(const std::int64_t s) {
        int w = 0;
        for (std::int64_t i = s * slice_size; i < nrows && i < (s + 1) * slice_size; ++i) {
          const int len = int(row_map(i + 1) - row_map(i));
          w = len > w ? len : w;
        }
        offsets(s + 1) = w * slice_size;
      });
  std::int64_t total = 0;
  Kokkos::parallel_scan(
      "spk_bench::sell_offsets_scan", Kokkos::RangePolicy<exec>(0, nslices + 1),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& acc, const bool final) {
        acc += offsets(i);
        if (final) offsets(i) = int(acc);
      },
      total);
  spk::require(total < (std::int64_t(1) << 31), "spk_bench::make_sell", "sliced ELL of ", total,
               " entries does not fit 32-bit offsets");
  out.col_idx = Kokkos::View<int*, Kokkos::CudaSpace>("spk_bench::sell_cols", total);
  out.values = Kokkos::View<S*, Kokkos::CudaSpace>("spk_bench::sell_vals", total);
  Kokkos::deep_copy(out.col_idx, -1);
  const auto oc = out.col_idx;
  const auto ov = out.values;
  Kokkos::parallel_for(
      "spk_bench::sell_fill", Kokkos::RangePolicy<exec>(0, nrows),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t s = i / slice_size, lane = i % slice_size;
        std::int64_t pos = offsets(s) + lane;
        for (auto k = row_map(i); k < row_map(i + 1); ++k, pos += slice_size) {
          oc(pos) = int(cols(k));
          ov(pos) = vals(k);
        }
      });
  out.slice_offsets = offsets;
  return out;
}

/// One prepared cusparseSpMV call: y = alpha op(A) x + beta y on Kokkos' CUDA stream.
/// `rows` is a CSR row_map (csr) or COO row indices (coo); the arrays stay owned by the caller.
template <class S>
class CusparseSpmv {
 public:
  enum class Format { csr, coo };

  template <class RowView, class ColView, class ValView, class XView, class YView>
  CusparseSpmv(Format format, cusparseSpMVAlg_t alg, spk::Mode mode, std::int64_t nrows,
               std::int64_t ncols, std::int64_t nnz, const RowView& rows, const ColView& cols,
               const ValView& vals, const XView& x, const YView& y)
      : alg_(alg) {
    cusparse_check(cusparseCreate(&handle_), "cusparseCreate");
    cusparse_check(cusparseSetStream(handle_, Kokkos::Cuda().cuda_stream()), "cusparseSetStream");
    using R = typename RowView::non_const_value_type;
    using C = typename ColView::non_const_value_type;
    if (format == Format::csr) {
      cusparse_check(
          cusparseCreateCsr(&mat_, nrows, ncols, nnz, (void*)rows.data(), (void*)cols.data(),
                            (void*)vals.data(), cuda_index_type<R>(), cuda_index_type<C>(),
                            CUSPARSE_INDEX_BASE_ZERO, cuda_type<S>()),
          "cusparseCreateCsr");
    } else {
      cusparse_check(cusparseCreateCoo(&mat_, nrows, ncols, nnz, (void*)rows.data(),
                                       (void*)cols.data(), (void*)vals.data(),
                                       cuda_index_type<C>(), CUSPARSE_INDEX_BASE_ZERO,
                                       cuda_type<S>()),
                     "cusparseCreateCoo");
    }
    setup(mode, x, y);
  }

  /// Sliced ELL (op = N only in cuSPARSE).
  template <class XView, class YView>
  CusparseSpmv(const SellArrays<S>& sell, cusparseSpMVAlg_t alg, spk::Mode mode, const XView& x,
               const YView& y)
      : alg_(alg) {
    cusparse_check(cusparseCreate(&handle_), "cusparseCreate");
    cusparse_check(cusparseSetStream(handle_, Kokkos::Cuda().cuda_stream()), "cusparseSetStream");
    cusparse_check(
        cusparseCreateSlicedEll(&mat_, sell.nrows, sell.ncols, sell.nnz,
                                std::int64_t(sell.values.extent(0)), sell.slice_size,
                                (void*)sell.slice_offsets.data(), (void*)sell.col_idx.data(),
                                (void*)sell.values.data(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                CUSPARSE_INDEX_BASE_ZERO, cuda_type<S>()),
        "cusparseCreateSlicedEll");
    setup(mode, x, y);
  }

  template <class XView, class YView>
  void setup(spk::Mode mode, const XView& x, const YView& y) {
    cusparse_check(cusparseCreateDnVec(&x_, std::int64_t(x.extent(0)), (void*)x.data(),
                                       cuda_type<S>()),
                   "cusparseCreateDnVec");
    cusparse_check(cusparseCreateDnVec(&y_, std::int64_t(y.extent(0)), (void*)y.data(),
                                       cuda_type<S>()),
                   "cusparseCreateDnVec");
    op_ = mode == spk::Mode::N   ? CUSPARSE_OPERATION_NON_TRANSPOSE
          : mode == spk::Mode::T ? CUSPARSE_OPERATION_TRANSPOSE
                                 : CUSPARSE_OPERATION_CONJUGATE_TRANSPOSE;
    std::size_t bytes = 0;
    const S one(1), zero(0);
    cusparse_check(cusparseSpMV_bufferSize(handle_, op_, &one, mat_, x_, &zero, y_,
                                           cuda_type<S>(), alg_, &bytes),
                   "cusparseSpMV_bufferSize");
    buffer_ = Kokkos::View<char*, Kokkos::CudaSpace>("spk_bench::cusparse_buffer", bytes + 1);
  }

  CusparseSpmv(const CusparseSpmv&) = delete;
  CusparseSpmv& operator=(const CusparseSpmv&) = delete;

  ~CusparseSpmv() {
    if (x_) cusparseDestroyDnVec(x_);
    if (y_) cusparseDestroyDnVec(y_);
    if (mat_) cusparseDestroySpMat(mat_);
    if (handle_) cusparseDestroy(handle_);
  }

  void run(S alpha, S beta) {
    cusparse_check(cusparseSpMV(handle_, op_, &alpha, mat_, x_, &beta, y_, cuda_type<S>(), alg_,
                                buffer_.data()),
                   "cusparseSpMV");
  }

  std::size_t buffer_bytes() const { return buffer_.extent(0) - 1; }

 private:
  cusparseHandle_t handle_ = nullptr;
  cusparseSpMatDescr_t mat_ = nullptr;
  cusparseDnVecDescr_t x_ = nullptr, y_ = nullptr;
  cusparseOperation_t op_ = CUSPARSE_OPERATION_NON_TRANSPOSE;
  cusparseSpMVAlg_t alg_;
  Kokkos::View<char*, Kokkos::CudaSpace> buffer_;
};

}  // namespace spk_bench

#endif  // SPK_HAVE_CUSPARSE
