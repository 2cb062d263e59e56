// cuSPARSE baselines for compound entries (issue 6, "baselines in the same run"): b x b blocks as
// cuSPARSE BSR, quaternions expanded to real 4 x 4 BSR blocks, and quaternions decomposed into
// four real CSR matrices multiplied per the Hamilton product (four SpMMs, or sixteen chained
// SpMVs). Each is a prepared call: the constructor converts, creates the descriptors and
// allocates every buffer; run() only launches work on Kokkos' CUDA stream.
#pragma once

#ifdef SPK_HAVE_CUSPARSE

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>
#include <cusparse.h>
#include <string>
#include <type_traits>

#include <spk/compound/entry.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>

#include "cusparse_baseline.hpp"

namespace spk_bench {

/// The compound matrices the baselines take: int32 indices and offsets, in CUDA device memory.
template <class E>
using CudaCsr = spk::CsrMatrix<E, int, int, Kokkos::Device<Kokkos::Cuda, Kokkos::CudaSpace>>;

/// Which cuSPARSE BSR SpMV a BSR baseline calls: the generic cusparseSpMV on a
/// cusparseCreateBsr descriptor (CUSPARSE_SPMV_BSR_ALG1), the legacy cusparse<t>bsrmv, or
/// `automatic`: the generic call when this cuSPARSE runs it on the matrix, else the legacy one.
enum class BsrApi { automatic, generic, legacy };

namespace impl {

template <class Real>
using RealView = Kokkos::View<Real*, Kokkos::CudaSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using CudaRange = Kokkos::RangePolicy<Kokkos::Cuda>;

/// Sign of term t of output component o of the Hamilton product a * p, which is
/// (a * p)_o = sum_t hamilton_sign(o, t) a_t p_(o xor t) with components (w, x, y, z) = 0..3:
///   w: + a_w p_w - a_x p_x - a_y p_y - a_z p_z
///   x: + a_w p_x + a_x p_w + a_y p_z - a_z p_y
///   y: + a_w p_y - a_x p_z + a_y p_w + a_z p_x
///   z: + a_w p_z + a_x p_y - a_y p_x + a_z p_w
/// The minus signs are the set bits 4 o + t of 0x428E.
KOKKOS_INLINE_FUNCTION int hamilton_sign(int o, int t) {
  return ((0x428E >> (4 * o + t)) & 1) ? -1 : 1;
}

/// n entries of 4 reals, interleaved (AoS), to 4 arrays of stride ld (SoA): soa[c ld + i].
template <class Real>
struct AosToSoa4 {
  RealView<const Real> aos;
  RealView<Real> soa;
  std::int64_t ld;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    for (int c = 0; c < 4; ++c) soa(c * ld + i) = aos(4 * i + c);
  }
};

/// The inverse of AosToSoa4.
template <class Real>
struct Soa4ToAos {
  RealView<const Real> soa;
  RealView<Real> aos;
  std::int64_t ld;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    for (int c = 0; c < 4; ++c) aos(4 * i + c) = soa(c * ld + i);
  }
};

/// Quaternion entry k to its real 4 x 4 left-multiplication block (row-major), so that the block
/// times (p_w, p_x, p_y, p_z) is the Hamilton product q * p:
///   [[w, -x, -y, -z], [x, w, -z, y], [y, z, w, -x], [z, -y, x, w]].
template <class Real>
struct ExpandQuaternion {
  RealView<const Real> q;  // 4 per entry
  RealView<Real> block;    // 16 per entry
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k) const {
    for (int o = 0; o < 4; ++o)
      for (int c = 0; c < 4; ++c)
        block(16 * k + 4 * o + c) = Real(hamilton_sign(o, o ^ c)) * q(4 * k + (o ^ c));
  }
};

/// y = alpha s + beta y (AoS, 4 reals per row) with s_o = sum_t sign(o, t) T_t[:, o xor t], where
/// T_t (nrows x 4, column-major, leading dimension ld, at t 4 ld in `t`) is the product of the
/// real matrix of component t with the columns (w, x, y, z) of the input. beta = 0 does not read y.
template <class Real>
struct HamiltonCombine {
  RealView<const Real> t;
  RealView<Real> y;
  std::int64_t ld;
  Real alpha, beta;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    for (int o = 0; o < 4; ++o) {
      Real s = 0;
      for (int m = 0; m < 4; ++m) s += Real(hamilton_sign(o, m)) * t((4 * m + (o ^ m)) * ld + i);
      y(4 * i + o) = beta == Real(0) ? alpha * s : alpha * s + beta * y(4 * i + o);
    }
  }
};

/// A cuSPARSE handle on Kokkos' CUDA stream (owning, not copyable).
class CusparseHandle {
 public:
  CusparseHandle() {
    cusparse_check(cusparseCreate(&h_), "cusparseCreate");
    cusparse_check(cusparseSetStream(h_, Kokkos::Cuda().cuda_stream()), "cusparseSetStream");
  }
  CusparseHandle(const CusparseHandle&) = delete;
  CusparseHandle& operator=(const CusparseHandle&) = delete;
  ~CusparseHandle() {
    if (h_) cusparseDestroy(h_);
  }
  cusparseHandle_t get() const { return h_; }

 private:
  cusparseHandle_t h_ = nullptr;
};

/// Byte offsets of consecutive work buffers in one allocation, each 256-byte aligned.
inline std::size_t align_buffer(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

/// Reals of a vector view of compound entries (x or y of a baseline): its data as Real*, checked
/// to be contiguous and to hold at least `entries` entries.
template <class Real, class V, class View>
Real* vector_reals(const View& v, std::int64_t entries, const char* who, const char* which) {
  using value = typename View::non_const_value_type;
  static_assert(std::is_same<value, V>::value,
                "spk_bench::vector_reals: the vector's value type must be the entry's vector_type");
  static_assert(Kokkos::SpaceAccessibility<Kokkos::Cuda, typename View::memory_space>::accessible,
                "spk_bench::vector_reals: the vector must be in CUDA-accessible memory");
  spk::require(v.span_is_contiguous(), who, which, " is not contiguous");
  spk::require(std::int64_t(v.extent(0)) >= entries, who, which, " has ", v.extent(0),
               " entries, the matrix needs ", entries);
  return const_cast<Real*>(reinterpret_cast<const Real*>(v.data()));
}

inline cusparseStatus_t legacy_bsrmv(cusparseHandle_t h, int mb, int nb, int nnzb,
                                     const float* alpha, cusparseMatDescr_t d, const float* v,
                                     const int* rows, const int* cols, int block, const float* x,
                                     const float* beta, float* y) {
  return cusparseSbsrmv(h, CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE, mb, nb, nnzb,
                        alpha, d, v, rows, cols, block, x, beta, y);
}
inline cusparseStatus_t legacy_bsrmv(cusparseHandle_t h, int mb, int nb, int nnzb,
                                     const double* alpha, cusparseMatDescr_t d, const double* v,
                                     const int* rows, const int* cols, int block, const double* x,
                                     const double* beta, double* y) {
  return cusparseDbsrmv(h, CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE, mb, nb, nnzb,
                        alpha, d, v, rows, cols, block, x, beta, y);
}

/// One prepared BSR SpMV y = alpha A x + beta y on arrays owned by the caller: mb x nb blocks of
/// block x block reals, row-major, int32 block row offsets and block columns.
///
/// With BsrApi::automatic or generic, the constructor creates the generic descriptors, sizes and
/// allocates the buffer and runs one product into a scratch vector (so that a cuSPARSE that
/// declares BSR_ALG1 but refuses these parameters is found here, not in run()); automatic falls
/// back to cusparse<t>bsrmv (no buffer) when that fails, generic throws.
template <class Real>
class BsrCall {
 public:
  BsrCall(std::int64_t mb, std::int64_t nb, std::int64_t nnzb, int block, const int* row_map,
          const int* col_idx, const Real* values, const Real* x, Real* y, BsrApi api)
      : mb_(int(mb)),
        nb_(int(nb)),
        nnzb_(int(nnzb)),
        block_(block),
        row_map_(row_map),
        col_idx_(col_idx),
        values_(values),
        x_(x),
        y_(y) {
    spk::require(mb * block < (std::int64_t(1) << 31) && nb * block < (std::int64_t(1) << 31) &&
                     nnzb < (std::int64_t(1) << 31),
                 "spk_bench::BsrCall", "matrix of ", mb, " x ", nb, " blocks of ", block, "x",
                 block, " with ", nnzb, " blocks does not fit 32-bit indices");
    if (api != BsrApi::legacy) {
      std::string why;
      if (prepare_generic(why)) return;
      if (api == BsrApi::generic)
        spk::throw_runtime_error("spk_bench::BsrCall",
                                 "cusparseSpMV refuses this BSR matrix: ", why);
    }
    cusparse_check(cusparseCreateMatDescr(&descr_), "cusparseCreateMatDescr");
  }

  BsrCall(const BsrCall&) = delete;
  BsrCall& operator=(const BsrCall&) = delete;

  ~BsrCall() {
    destroy_generic();
    if (descr_) cusparseDestroyMatDescr(descr_);
  }

  void run(Real alpha, Real beta) {
    if (mat_) {
      cusparse_check(
          cusparseSpMV(handle_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat_, xvec_, &beta,
                       yvec_, cuda_type<Real>(), CUSPARSE_SPMV_BSR_ALG1, buffer_.data()),
          "cusparseSpMV (BSR)");
    } else {
      cusparse_check(legacy_bsrmv(handle_.get(), mb_, nb_, nnzb_, &alpha, descr_, values_, row_map_,
                                  col_idx_, block_, x_, &beta, y_),
                     "cusparse<t>bsrmv");
    }
  }

  /// The call run() makes.
  const char* api() const { return mat_ ? "cusparseSpMV(BSR_ALG1)" : "cusparse<t>bsrmv"; }

 private:
  bool prepare_generic(std::string& why) {
    const std::int64_t n_in = std::int64_t(nb_) * block_, n_out = std::int64_t(mb_) * block_;
    auto ok = [&](cusparseStatus_t s, const char* what) {
      if (s == CUSPARSE_STATUS_SUCCESS) return true;
      why = std::string(what) + ": " + cusparseGetErrorString(s);
      return false;
    };
    const Real one(1), zero(0);
    std::size_t bytes = 0;
    bool good =
        ok(cusparseCreateBsr(&mat_, mb_, nb_, nnzb_, block_, block_, const_cast<int*>(row_map_),
                             const_cast<int*>(col_idx_), const_cast<Real*>(values_),
                             CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                             cuda_type<Real>(), CUSPARSE_ORDER_ROW),
           "cusparseCreateBsr") &&
        ok(cusparseCreateDnVec(&xvec_, n_in, const_cast<Real*>(x_), cuda_type<Real>()),
           "cusparseCreateDnVec") &&
        ok(cusparseCreateDnVec(&yvec_, n_out, y_, cuda_type<Real>()), "cusparseCreateDnVec") &&
        ok(cusparseSpMV_bufferSize(handle_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_,
                                   xvec_, &zero, yvec_, cuda_type<Real>(), CUSPARSE_SPMV_BSR_ALG1,
                                   &bytes),
           "cusparseSpMV_bufferSize");
    if (good) {
      buffer_ = Kokkos::View<char*, Kokkos::CudaSpace>("spk_bench::bsr_buffer", bytes + 1);
      Kokkos::View<Real*, Kokkos::CudaSpace> scratch("spk_bench::bsr_scratch", n_out + 1);
      cusparseDnVecDescr_t svec = nullptr;
      good =
          ok(cusparseCreateDnVec(&svec, n_out, scratch.data(), cuda_type<Real>()),
             "cusparseCreateDnVec") &&
          ok(cusparseSpMV(handle_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, xvec_, &zero,
                          svec, cuda_type<Real>(), CUSPARSE_SPMV_BSR_ALG1, buffer_.data()),
             "cusparseSpMV");
      if (svec) cusparseDestroyDnVec(svec);
      const cudaError_t e = cudaStreamSynchronize(Kokkos::Cuda().cuda_stream());
      if (good && e != cudaSuccess) {
        why = std::string("cusparseSpMV: ") + cudaGetErrorString(e);
        good = false;
      }
    }
    if (!good) destroy_generic();
    return good;
  }

  void destroy_generic() {
    if (xvec_) cusparseDestroyDnVec(xvec_);
    if (yvec_) cusparseDestroyDnVec(yvec_);
    if (mat_) cusparseDestroySpMat(mat_);
    xvec_ = yvec_ = nullptr;
    mat_ = nullptr;
    buffer_ = Kokkos::View<char*, Kokkos::CudaSpace>();
  }

  CusparseHandle handle_;
  int mb_, nb_, nnzb_, block_;
  const int* row_map_;
  const int* col_idx_;
  const Real* values_;
  const Real* x_;
  Real* y_;
  cusparseSpMatDescr_t mat_ = nullptr;  // generic path when set
  cusparseDnVecDescr_t xvec_ = nullptr, yvec_ = nullptr;
  Kokkos::View<char*, Kokkos::CudaSpace> buffer_;
  cusparseMatDescr_t descr_ = nullptr;  // legacy path
};

/// A quaternion matrix's four real component matrices W, X, Y, Z (A = W + X i + Y j + Z k) as one
/// array: component t of entry k at t nnz + k. Built on the device.
template <class Real>
Kokkos::View<Real*, Kokkos::CudaSpace> quaternion_components(
    const CudaCsr<spk::Quaternion<Real>>& a) {
  const std::int64_t nnz = a.nnz();
  Kokkos::View<Real*, Kokkos::CudaSpace> out(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk_bench::quat_components"),
      std::size_t(4 * nnz + 1));
  Kokkos::parallel_for(
      "spk_bench::quat_components", CudaRange(0, nnz),
      AosToSoa4<Real>{RealView<const Real>(reinterpret_cast<const Real*>(a.values().data()),
                                           std::size_t(4 * nnz)),
                      RealView<Real>(out.data(), out.extent(0)), nnz});
  return out;
}

/// Leading dimension of an n x 4 column-major work array (at least 1, as cuSPARSE requires).
inline std::int64_t work_ld(std::int64_t n) { return n > 0 ? n : 1; }

}  // namespace impl

/// cuSPARSE BSR SpMV ("cusparse-bsr") on an spk block-CSR matrix of B x B row-major blocks,
/// read in place: spk's row_map and col_idx are the block row offsets and block columns, its
/// values the blocks. y = alpha A x + beta y on Kokkos' CUDA stream; x and y (views of
/// spk::BlockVector<Real, B>, ncols and nrows entries) must outlive this object, as must A's arrays
/// (held here by a shallow copy). Which cuSPARSE call runs: see BsrApi; api() names it.
template <class Real, int B>
class CusparseBsrSpmv {
  static_assert(B >= 2, "spk_bench::CusparseBsrSpmv: cuSPARSE BSR needs blocks of at least 2x2");

 public:
  using entry_type = spk::Block<Real, B>;
  using vector_type = spk::BlockVector<Real, B>;
  using matrix_type = CudaCsr<entry_type>;
  static constexpr const char* name = "cusparse-bsr";

  template <class XView, class YView>
  CusparseBsrSpmv(const matrix_type& a, const XView& x, const YView& y,
                  BsrApi api = BsrApi::automatic)
      : a_(a),
        call_(
            a.nrows(), a.ncols(), a.nnz(), B, a.row_map().data(), a.col_idx().data(),
            reinterpret_cast<const Real*>(a.values().data()),
            impl::vector_reals<Real, vector_type>(x, a.ncols(), "spk_bench::CusparseBsrSpmv", "x"),
            impl::vector_reals<Real, vector_type>(y, a.nrows(), "spk_bench::CusparseBsrSpmv", "y"),
            api) {}

  /// y = alpha A x + beta y.
  void run(Real alpha, Real beta) { call_.run(alpha, beta); }

  /// Bytes of the arrays cuSPARSE reads: block row offsets, block columns, B^2 reals per block.
  std::size_t memory_bytes() const {
    return a_.row_map().extent(0) * sizeof(int) +
           a_.col_idx().extent(0) * (sizeof(int) + B * B * sizeof(Real));
  }

  const char* api() const { return call_.api(); }

 private:
  matrix_type a_;
  impl::BsrCall<Real> call_;
};

/// cuSPARSE BSR SpMV of a quaternion matrix expanded to real 4 x 4 blocks ("cusparse-quat-bsr4"):
/// entry q = w + x i + y j + z k becomes its left-multiplication matrix
/// [[w, -x, -y, -z], [x, w, -z, y], [y, z, w, -x], [z, -y, x, w]] (row-major), expanded on the
/// device in the constructor; row_map and col_idx are A's. x and y are views of
/// spk::Quaternion<Real> (read as 4 reals each) that must outlive this object.
template <class Real>
class CusparseQuaternionBsrSpmv {
 public:
  using entry_type = spk::Quaternion<Real>;
  using vector_type = spk::Quaternion<Real>;
  using matrix_type = CudaCsr<entry_type>;
  static constexpr const char* name = "cusparse-quat-bsr4";

  template <class XView, class YView>
  CusparseQuaternionBsrSpmv(const matrix_type& a, const XView& x, const YView& y,
                            BsrApi api = BsrApi::automatic)
      : a_(a),
        blocks_(expand(a)),
        call_(a.nrows(), a.ncols(), a.nnz(), 4, a.row_map().data(), a.col_idx().data(),
              blocks_.data(),
              impl::vector_reals<Real, vector_type>(x, a.ncols(),
                                                    "spk_bench::CusparseQuaternionBsrSpmv", "x"),
              impl::vector_reals<Real, vector_type>(y, a.nrows(),
                                                    "spk_bench::CusparseQuaternionBsrSpmv", "y"),
              api) {}

  /// y = alpha A x + beta y.
  void run(Real alpha, Real beta) { call_.run(alpha, beta); }

  /// Bytes of the expanded arrays cuSPARSE reads: block row offsets, block columns, 16 reals per
  /// entry.
  std::size_t memory_bytes() const {
    return a_.row_map().extent(0) * sizeof(int) +
           a_.col_idx().extent(0) * (sizeof(int) + 16 * sizeof(Real));
  }

  const char* api() const { return call_.api(); }

 private:
  static Kokkos::View<Real*, Kokkos::CudaSpace> expand(const matrix_type& a) {
    const std::int64_t nnz = a.nnz();
    Kokkos::View<Real*, Kokkos::CudaSpace> blocks(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk_bench::quat_bsr4_values"),
        std::size_t(16 * nnz + 1));
    Kokkos::parallel_for(
        "spk_bench::quat_bsr4_expand", impl::CudaRange(0, nnz),
        impl::ExpandQuaternion<Real>{
            impl::RealView<const Real>(reinterpret_cast<const Real*>(a.values().data()),
                                       std::size_t(4 * nnz)),
            impl::RealView<Real>(blocks.data(), blocks.extent(0))});
    return blocks;
  }

  matrix_type a_;
  Kokkos::View<Real*, Kokkos::CudaSpace> blocks_;
  impl::BsrCall<Real> call_;
};

/// Quaternion SpMV by the Hamilton product over four real CSR matrices
/// ("cusparse-quat-hamilton"): A = W + X i + Y j + Z k (four value arrays built on the device,
/// sharing A's row_map and col_idx). run() splits x into the ncols x 4 column-major matrix
/// [w x y z], makes four cusparseSpMM calls (each component matrix times it, into an nrows x 4
/// temporary) and one kernel that combines them with the Hamilton product's signs, alpha and
/// beta into y (AoS). x and y are views of spk::Quaternion<Real> that must outlive this object.
template <class Real>
class CusparseQuaternionHamiltonSpmv {
 public:
  using entry_type = spk::Quaternion<Real>;
  using vector_type = spk::Quaternion<Real>;
  using matrix_type = CudaCsr<entry_type>;
  static constexpr const char* name = "cusparse-quat-hamilton";

  template <class XView, class YView>
  CusparseQuaternionHamiltonSpmv(const matrix_type& a, const XView& x, const YView& y,
                                 cusparseSpMMAlg_t alg = CUSPARSE_SPMM_ALG_DEFAULT)
      : a_(a),
        alg_(alg),
        nrows_(a.nrows()),
        ncols_(a.ncols()),
        ldx_(impl::work_ld(a.ncols())),
        ldy_(impl::work_ld(a.nrows())),
        x_(impl::vector_reals<Real, vector_type>(x, a.ncols(),
                                                 "spk_bench::CusparseQuaternionHamiltonSpmv", "x")),
        y_(impl::vector_reals<Real, vector_type>(y, a.nrows(),
                                                 "spk_bench::CusparseQuaternionHamiltonSpmv", "y")),
        comps_(impl::quaternion_components(a)),
        xs_("spk_bench::quat_hamilton_x", std::size_t(4 * ldx_)),
        t_("spk_bench::quat_hamilton_t", std::size_t(16 * ldy_)) {
    const std::int64_t nnz = a.nnz();
    const Real one(1), zero(0);
    cusparse_check(cusparseCreateDnMat(&xmat_, ncols_, 4, ldx_, xs_.data(), cuda_type<Real>(),
                                       CUSPARSE_ORDER_COL),
                   "cusparseCreateDnMat");
    std::size_t offsets[5] = {0, 0, 0, 0, 0};
    for (int m = 0; m < 4; ++m) {
      cusparse_check(
          cusparseCreateCsr(&mats_[m], nrows_, ncols_, nnz, a.row_map().data(), a.col_idx().data(),
                            comps_.data() + m * nnz, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                            CUSPARSE_INDEX_BASE_ZERO, cuda_type<Real>()),
          "cusparseCreateCsr");
      cusparse_check(cusparseCreateDnMat(&tmats_[m], nrows_, 4, ldy_, t_.data() + 4 * m * ldy_,
                                         cuda_type<Real>(), CUSPARSE_ORDER_COL),
                     "cusparseCreateDnMat");
      std::size_t bytes = 0;
      cusparse_check(
          cusparseSpMM_bufferSize(handle_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE,
                                  CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mats_[m], xmat_, &zero,
                                  tmats_[m], cuda_type<Real>(), alg_, &bytes),
          "cusparseSpMM_bufferSize");
      offsets[m + 1] = offsets[m] + impl::align_buffer(bytes);
    }
    buffer_ =
        Kokkos::View<char*, Kokkos::CudaSpace>("spk_bench::quat_hamilton_buffer", offsets[4] + 1);
    for (int m = 0; m < 4; ++m) buffers_[m] = buffer_.data() + offsets[m];
  }

  CusparseQuaternionHamiltonSpmv(const CusparseQuaternionHamiltonSpmv&) = delete;
  CusparseQuaternionHamiltonSpmv& operator=(const CusparseQuaternionHamiltonSpmv&) = delete;

  ~CusparseQuaternionHamiltonSpmv() {
    for (int m = 0; m < 4; ++m) {
      if (tmats_[m]) cusparseDestroyDnMat(tmats_[m]);
      if (mats_[m]) cusparseDestroySpMat(mats_[m]);
    }
    if (xmat_) cusparseDestroyDnMat(xmat_);
  }

  /// y = alpha A x + beta y: split x (one kernel), four SpMMs, combine (one kernel).
  void run(Real alpha, Real beta) {
    Kokkos::parallel_for(
        "spk_bench::quat_hamilton_split", impl::CudaRange(0, ncols_),
        impl::AosToSoa4<Real>{impl::RealView<const Real>(x_, std::size_t(4 * ncols_)),
                              impl::RealView<Real>(xs_.data(), xs_.extent(0)), ldx_});
    const Real one(1), zero(0);
    for (int m = 0; m < 4; ++m)
      cusparse_check(cusparseSpMM(handle_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE,
                                  CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mats_[m], xmat_, &zero,
                                  tmats_[m], cuda_type<Real>(), alg_, buffers_[m]),
                     "cusparseSpMM");
    Kokkos::parallel_for("spk_bench::quat_hamilton_combine", impl::CudaRange(0, nrows_),
                         impl::HamiltonCombine<Real>{
                             impl::RealView<const Real>(t_.data(), t_.extent(0)),
                             impl::RealView<Real>(y_, std::size_t(4 * nrows_)), ldy_, alpha, beta});
  }

  /// Bytes of the arrays cuSPARSE reads: one row_map and col_idx, four real value arrays.
  std::size_t memory_bytes() const {
    return a_.row_map().extent(0) * sizeof(int) +
           a_.col_idx().extent(0) * (sizeof(int) + 4 * sizeof(Real));
  }

 private:
  impl::CusparseHandle handle_;
  matrix_type a_;
  cusparseSpMMAlg_t alg_;
  std::int64_t nrows_, ncols_, ldx_, ldy_;
  const Real* x_;
  Real* y_;
  Kokkos::View<Real*, Kokkos::CudaSpace> comps_;  // W, X, Y, Z values, nnz each
  Kokkos::View<Real*, Kokkos::CudaSpace> xs_;     // ncols x 4, column-major
  Kokkos::View<Real*, Kokkos::CudaSpace> t_;      // four nrows x 4, column-major
  Kokkos::View<char*, Kokkos::CudaSpace> buffer_;
  void* buffers_[4] = {nullptr, nullptr, nullptr, nullptr};
  cusparseSpMatDescr_t mats_[4] = {nullptr, nullptr, nullptr, nullptr};
  cusparseDnMatDescr_t xmat_ = nullptr;
  cusparseDnMatDescr_t tmats_[4] = {nullptr, nullptr, nullptr, nullptr};
};

/// Quaternion SpMV by the Hamilton product as sixteen chained real SpMVs
/// ("cusparse-quat-hamilton-spmv", the paper's serial chaining): run() splits x and y into four
/// real vectors each (y only when beta != 0), computes each output component y_o by four
/// cusparseSpMV calls W, X, Y, Z times the matching input component with alpha times the
/// Hamilton sign, the first with beta and the others accumulating (beta = 1), and writes y back
/// (AoS). Matrices as CusparseQuaternionHamiltonSpmv; x and y must outlive this object.
template <class Real>
class CusparseQuaternionHamilton16Spmv {
 public:
  using entry_type = spk::Quaternion<Real>;
  using vector_type = spk::Quaternion<Real>;
  using matrix_type = CudaCsr<entry_type>;
  static constexpr const char* name = "cusparse-quat-hamilton-spmv";

  template <class XView, class YView>
  CusparseQuaternionHamilton16Spmv(const matrix_type& a, const XView& x, const YView& y,
                                   cusparseSpMVAlg_t alg = CUSPARSE_SPMV_ALG_DEFAULT)
      : a_(a),
        alg_(alg),
        nrows_(a.nrows()),
        ncols_(a.ncols()),
        ldx_(impl::work_ld(a.ncols())),
        ldy_(impl::work_ld(a.nrows())),
        x_(impl::vector_reals<Real, vector_type>(
            x, a.ncols(), "spk_bench::CusparseQuaternionHamilton16Spmv", "x")),
        y_(impl::vector_reals<Real, vector_type>(
            y, a.nrows(), "spk_bench::CusparseQuaternionHamilton16Spmv", "y")),
        comps_(impl::quaternion_components(a)),
        xs_("spk_bench::quat_hamilton16_x", std::size_t(4 * ldx_)),
        ys_("spk_bench::quat_hamilton16_y", std::size_t(4 * ldy_)) {
    const std::int64_t nnz = a.nnz();
    const Real one(1);
    for (int c = 0; c < 4; ++c) {
      cusparse_check(
          cusparseCreateCsr(&mats_[c], nrows_, ncols_, nnz, a.row_map().data(), a.col_idx().data(),
                            comps_.data() + c * nnz, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                            CUSPARSE_INDEX_BASE_ZERO, cuda_type<Real>()),
          "cusparseCreateCsr");
      cusparse_check(
          cusparseCreateDnVec(&xvecs_[c], ncols_, xs_.data() + c * ldx_, cuda_type<Real>()),
          "cusparseCreateDnVec");
      cusparse_check(
          cusparseCreateDnVec(&yvecs_[c], nrows_, ys_.data() + c * ldy_, cuda_type<Real>()),
          "cusparseCreateDnVec");
    }
    std::size_t offsets[17] = {};
    for (int o = 0; o < 4; ++o)
      for (int m = 0; m < 4; ++m) {
        std::size_t bytes = 0;
        cusparse_check(cusparseSpMV_bufferSize(handle_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE,
                                               &one, mats_[m], xvecs_[o ^ m], &one, yvecs_[o],
                                               cuda_type<Real>(), alg_, &bytes),
                       "cusparseSpMV_bufferSize");
        offsets[4 * o + m + 1] = offsets[4 * o + m] + impl::align_buffer(bytes);
      }
    buffer_ = Kokkos::View<char*, Kokkos::CudaSpace>("spk_bench::quat_hamilton16_buffer",
                                                     offsets[16] + 1);
    for (int k = 0; k < 16; ++k) buffers_[k] = buffer_.data() + offsets[k];
  }

  CusparseQuaternionHamilton16Spmv(const CusparseQuaternionHamilton16Spmv&) = delete;
  CusparseQuaternionHamilton16Spmv& operator=(const CusparseQuaternionHamilton16Spmv&) = delete;

  ~CusparseQuaternionHamilton16Spmv() {
    for (int c = 0; c < 4; ++c) {
      if (xvecs_[c]) cusparseDestroyDnVec(xvecs_[c]);
      if (yvecs_[c]) cusparseDestroyDnVec(yvecs_[c]);
      if (mats_[c]) cusparseDestroySpMat(mats_[c]);
    }
  }

  /// y = alpha A x + beta y: split x (and y), sixteen SpMVs, merge y.
  void run(Real alpha, Real beta) {
    Kokkos::parallel_for(
        "spk_bench::quat_hamilton16_split_x", impl::CudaRange(0, ncols_),
        impl::AosToSoa4<Real>{impl::RealView<const Real>(x_, std::size_t(4 * ncols_)),
                              impl::RealView<Real>(xs_.data(), xs_.extent(0)), ldx_});
    if (beta != Real(0))
      Kokkos::parallel_for(
          "spk_bench::quat_hamilton16_split_y", impl::CudaRange(0, nrows_),
          impl::AosToSoa4<Real>{impl::RealView<const Real>(y_, std::size_t(4 * nrows_)),
                                impl::RealView<Real>(ys_.data(), ys_.extent(0)), ldy_});
    const Real one(1);
    for (int o = 0; o < 4; ++o)
      for (int m = 0; m < 4; ++m) {
        const Real a = alpha * Real(impl::hamilton_sign(o, m));
        cusparse_check(cusparseSpMV(handle_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &a, mats_[m],
                                    xvecs_[o ^ m], m == 0 ? &beta : &one, yvecs_[o],
                                    cuda_type<Real>(), alg_, buffers_[4 * o + m]),
                       "cusparseSpMV");
      }
    Kokkos::parallel_for(
        "spk_bench::quat_hamilton16_merge_y", impl::CudaRange(0, nrows_),
        impl::Soa4ToAos<Real>{impl::RealView<const Real>(ys_.data(), ys_.extent(0)),
                              impl::RealView<Real>(y_, std::size_t(4 * nrows_)), ldy_});
  }

  /// Bytes of the arrays cuSPARSE reads: one row_map and col_idx, four real value arrays.
  std::size_t memory_bytes() const {
    return a_.row_map().extent(0) * sizeof(int) +
           a_.col_idx().extent(0) * (sizeof(int) + 4 * sizeof(Real));
  }

 private:
  impl::CusparseHandle handle_;
  matrix_type a_;
  cusparseSpMVAlg_t alg_;
  std::int64_t nrows_, ncols_, ldx_, ldy_;
  const Real* x_;
  Real* y_;
  Kokkos::View<Real*, Kokkos::CudaSpace> comps_;  // W, X, Y, Z values, nnz each
  Kokkos::View<Real*, Kokkos::CudaSpace> xs_;     // x as four vectors of stride ldx_
  Kokkos::View<Real*, Kokkos::CudaSpace> ys_;     // y as four vectors of stride ldy_
  Kokkos::View<char*, Kokkos::CudaSpace> buffer_;
  void* buffers_[16] = {};
  cusparseSpMatDescr_t mats_[4] = {nullptr, nullptr, nullptr, nullptr};
  cusparseDnVecDescr_t xvecs_[4] = {nullptr, nullptr, nullptr, nullptr};
  cusparseDnVecDescr_t yvecs_[4] = {nullptr, nullptr, nullptr, nullptr};
};

}  // namespace spk_bench

#endif  // SPK_HAVE_CUSPARSE
