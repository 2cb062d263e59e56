// cuSPARSE SpMV baselines (CSR ALG1/ALG2, COO) on spk's device arrays, for the benchmarks.
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
