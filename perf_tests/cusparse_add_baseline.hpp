// cuSPARSE CSR addition baseline for spk-add: C = A + B with csrgeam2 (cuSPARSE 12.x, the
// library CUDA 13 ships, has no generic SpGEAM; csrgeam2 is the routine for C = alpha A + beta
// B in CSR), and op(A) = A^T by an explicit csr2csc (cusparseCsr2cscEx2).
//
// What a call costs is what a user pays for a new C: the row offsets of C, the nnz phase
// (cusparseXcsrgeam2Nnz, which returns nnz(C) to the host), the allocation of C's columns and
// values, and the compute phase (cusparse?csrgeam2). The work buffers' size queries are cached
// per shape (m, n, nnz(A), nnz(B)), as a user adding matrices of one structure repeatedly would.
#pragma once

#ifdef SPK_HAVE_CUSPARSE

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cusparse.h>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>

#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>

#include "cusparse_baseline.hpp"

namespace spk_bench {

/// "MAJOR.MINOR.PATCH" of the cuSPARSE library linked in.
inline std::string cusparse_version() {
  int v[3] = {0, 0, 0};
  const libraryPropertyType p[3] = {MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL};
  for (int i = 0; i < 3; ++i)
    cusparse_check(cusparseGetProperty(p[i], &v[i]), "cusparseGetProperty");
  return std::to_string(v[0]) + "." + std::to_string(v[1]) + "." + std::to_string(v[2]);
}

namespace impl {

// the typed csrgeam2 entry points (float and double: what HiSparse stores)
inline cusparseStatus_t csrgeam2_buffer_size(cusparseHandle_t h, int m, int n, const float* al,
                                             cusparseMatDescr_t da, int nnza, const float* va,
                                             const int* ra, const int* ca, const float* be,
                                             cusparseMatDescr_t db, int nnzb, const float* vb,
                                             const int* rb, const int* cb, cusparseMatDescr_t dc,
                                             const float* vc, const int* rc, const int* cc,
                                             std::size_t* bytes) {
  return cusparseScsrgeam2_bufferSizeExt(h, m, n, al, da, nnza, va, ra, ca, be, db, nnzb, vb, rb,
                                         cb, dc, vc, rc, cc, bytes);
}
inline cusparseStatus_t csrgeam2_buffer_size(cusparseHandle_t h, int m, int n, const double* al,
                                             cusparseMatDescr_t da, int nnza, const double* va,
                                             const int* ra, const int* ca, const double* be,
                                             cusparseMatDescr_t db, int nnzb, const double* vb,
                                             const int* rb, const int* cb, cusparseMatDescr_t dc,
                                             const double* vc, const int* rc, const int* cc,
                                             std::size_t* bytes) {
  return cusparseDcsrgeam2_bufferSizeExt(h, m, n, al, da, nnza, va, ra, ca, be, db, nnzb, vb, rb,
                                         cb, dc, vc, rc, cc, bytes);
}
inline cusparseStatus_t csrgeam2(cusparseHandle_t h, int m, int n, const float* al,
                                 cusparseMatDescr_t da, int nnza, const float* va, const int* ra,
                                 const int* ca, const float* be, cusparseMatDescr_t db, int nnzb,
                                 const float* vb, const int* rb, const int* cb,
                                 cusparseMatDescr_t dc, float* vc, int* rc, int* cc, void* buf) {
  return cusparseScsrgeam2(h, m, n, al, da, nnza, va, ra, ca, be, db, nnzb, vb, rb, cb, dc, vc, rc,
                           cc, buf);
}
inline cusparseStatus_t csrgeam2(cusparseHandle_t h, int m, int n, const double* al,
                                 cusparseMatDescr_t da, int nnza, const double* va, const int* ra,
                                 const int* ca, const double* be, cusparseMatDescr_t db, int nnzb,
                                 const double* vb, const int* rb, const int* cb,
                                 cusparseMatDescr_t dc, double* vc, int* rc, int* cc, void* buf) {
  return cusparseDcsrgeam2(h, m, n, al, da, nnza, va, ra, ca, be, db, nnzb, vb, rb, cb, dc, vc, rc,
                           cc, buf);
}

}  // namespace impl

/// C = A + B and A^T for CSR matrices with 32-bit offsets and indices on Kokkos' CUDA device,
/// by cuSPARSE on Kokkos' CUDA stream. Results are new spk::CsrMatrix objects (rows sorted by
/// column; csrgeam2 keeps an entry whose sum is zero). Work buffers grow as needed and are kept.
template <class S, class Device>
class CusparseAdd {
  static_assert(std::is_same<S, float>::value || std::is_same<S, double>::value,
                "spk_bench::CusparseAdd: values must be float or double");

 public:
  using Csr = spk::CsrMatrix<S, int, int, Device>;
  using memory_space = typename Csr::memory_space;

  CusparseAdd() {
    cusparse_check(cusparseCreate(&handle_), "cusparseCreate");
    cusparse_check(cusparseSetStream(handle_, Kokkos::Cuda().cuda_stream()), "cusparseSetStream");
    // alpha, beta and nnz(C) live on the host
    cusparse_check(cusparseSetPointerMode(handle_, CUSPARSE_POINTER_MODE_HOST),
                   "cusparseSetPointerMode");
    for (cusparseMatDescr_t* d : {&da_, &db_, &dc_}) {
      cusparse_check(cusparseCreateMatDescr(d), "cusparseCreateMatDescr");
      cusparse_check(cusparseSetMatType(*d, CUSPARSE_MATRIX_TYPE_GENERAL), "cusparseSetMatType");
      cusparse_check(cusparseSetMatIndexBase(*d, CUSPARSE_INDEX_BASE_ZERO),
                     "cusparseSetMatIndexBase");
    }
  }

  CusparseAdd(const CusparseAdd&) = delete;
  CusparseAdd& operator=(const CusparseAdd&) = delete;

  ~CusparseAdd() {
    for (cusparseMatDescr_t d : {da_, db_, dc_})
      if (d) cusparseDestroyMatDescr(d);
    if (handle_) cusparseDestroy(handle_);
  }

  /// Sizes (and grows) the work buffer for add(a, b) so that a timed call does not query it.
  void prepare_add(const Csr& a, const Csr& b) { geam_buffer(a, b); }

  /// Sizes (and grows) the work buffer for transpose(a).
  void prepare_transpose(const Csr& a) { transpose_buffer(a); }

  /// C = A + B (same shape; rows of A and B sorted by column, no duplicates): a new matrix.
  /// Synchronises once (nnz(C) comes back to the host between the two phases).
  Csr add(const Csr& a, const Csr& b) {
    spk::require(a.nrows() == b.nrows() && a.ncols() == b.ncols(), "spk_bench::CusparseAdd::add",
                 "A is ", a.nrows(), " x ", a.ncols(), " but B is ", b.nrows(), " x ", b.ncols());
    void* buf = geam_buffer(a, b);
    const int m = a.nrows(), n = a.ncols();
    Kokkos::View<int*, Device> row_map(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk_bench::geam_row_map"),
        std::size_t(m) + 1);
    int nnz_c = 0;
    cusparse_check(cusparseXcsrgeam2Nnz(handle_, m, n, da_, int(a.nnz()), a.row_map().data(),
                                        a.col_idx().data(), db_, int(b.nnz()), b.row_map().data(),
                                        b.col_idx().data(), dc_, row_map.data(), &nnz_c, buf),
                   "cusparseXcsrgeam2Nnz");
    Kokkos::View<int*, Device> cols(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk_bench::geam_col_idx"),
        std::size_t(nnz_c));
    Kokkos::View<S*, Device> vals(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk_bench::geam_values"),
        std::size_t(nnz_c));
    const S one(1);
    cusparse_check(impl::csrgeam2(handle_, m, n, &one, da_, int(a.nnz()), a.values().data(),
                                  a.row_map().data(), a.col_idx().data(), &one, db_, int(b.nnz()),
                                  b.values().data(), b.row_map().data(), b.col_idx().data(), dc_,
                                  vals.data(), row_map.data(), cols.data(), buf),
                   "cusparse?csrgeam2");
    return Csr(m, n, row_map, cols, vals);
  }

  /// A^T as a new CSR matrix (the CSC form of A by cusparseCsr2cscEx2, values copied).
  Csr transpose(const Csr& a) {
    void* buf = transpose_buffer(a);
    const int m = a.nrows(), n = a.ncols(), nnz = int(a.nnz());
    Kokkos::View<int*, Device> row_map(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk_bench::csc_col_ptr"),
        std::size_t(n) + 1);
    Kokkos::View<int*, Device> cols(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk_bench::csc_row_idx"),
        std::size_t(nnz));
    Kokkos::View<S*, Device> vals(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk_bench::csc_values"), std::size_t(nnz));
    cusparse_check(cusparseCsr2cscEx2(handle_, m, n, nnz, a.values().data(), a.row_map().data(),
                                      a.col_idx().data(), vals.data(), row_map.data(), cols.data(),
                                      cuda_type<S>(), CUSPARSE_ACTION_NUMERIC,
                                      CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, buf),
                   "cusparseCsr2cscEx2");
    return Csr(n, m, row_map, cols, vals);
  }

  /// Bytes of the work buffers held.
  std::size_t buffer_bytes() const { return buffer_.extent(0); }

 private:
  using Key = std::tuple<int, int, int, long long, long long>;  // kind, m, n, nnz, nnz

  void* grow(std::size_t bytes) {
    if (bytes > buffer_.extent(0))
      buffer_ = Kokkos::View<char*, Device>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk_bench::cusparse_add_buffer"), bytes);
    return buffer_.data();
  }

  void* geam_buffer(const Csr& a, const Csr& b) {
    const Key key{0, a.nrows(), a.ncols(), (long long)a.nnz(), (long long)b.nnz()};
    auto it = sizes_.find(key);
    if (it == sizes_.end()) {
      // the query gets valid C arrays (C's row offsets at full size) though it only sizes
      Kokkos::View<int*, Device> rows("spk_bench::geam_query_rows", std::size_t(a.nrows()) + 1);
      Kokkos::View<int*, Device> cols("spk_bench::geam_query_cols", 1);
      Kokkos::View<S*, Device> vals("spk_bench::geam_query_vals", 1);
      std::size_t bytes = 0;
      const S one(1);
      cusparse_check(impl::csrgeam2_buffer_size(
                         handle_, a.nrows(), a.ncols(), &one, da_, int(a.nnz()), a.values().data(),
                         a.row_map().data(), a.col_idx().data(), &one, db_, int(b.nnz()),
                         b.values().data(), b.row_map().data(), b.col_idx().data(), dc_,
                         vals.data(), rows.data(), cols.data(), &bytes),
                     "cusparse?csrgeam2_bufferSizeExt");
      it = sizes_.emplace(key, bytes + 1).first;
    }
    return grow(it->second);
  }

  void* transpose_buffer(const Csr& a) {
    const Key key{1, a.nrows(), a.ncols(), (long long)a.nnz(), 0};
    auto it = sizes_.find(key);
    if (it == sizes_.end()) {
      Kokkos::View<int*, Device> ptr("spk_bench::csc_query_ptr", std::size_t(a.ncols()) + 1);
      Kokkos::View<int*, Device> idx("spk_bench::csc_query_idx", 1);
      Kokkos::View<S*, Device> vals("spk_bench::csc_query_vals", 1);
      std::size_t bytes = 0;
      cusparse_check(
          cusparseCsr2cscEx2_bufferSize(
              handle_, a.nrows(), a.ncols(), int(a.nnz()), a.values().data(), a.row_map().data(),
              a.col_idx().data(), vals.data(), ptr.data(), idx.data(), cuda_type<S>(),
              CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, &bytes),
          "cusparseCsr2cscEx2_bufferSize");
      it = sizes_.emplace(key, bytes + 1).first;
    }
    return grow(it->second);
  }

  cusparseHandle_t handle_ = nullptr;
  cusparseMatDescr_t da_ = nullptr, db_ = nullptr, dc_ = nullptr;
  Kokkos::View<char*, Device> buffer_;
  std::map<Key, std::size_t> sizes_;
};

}  // namespace spk_bench

#endif  // SPK_HAVE_CUSPARSE
