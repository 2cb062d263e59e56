// spk/convert.hpp: conversions between COO and CSR, transposition and row canonicalisation, all
// running on the matrix's execution space.
//
// Ordering is done by a stable LSD radix sort (spk/impl/convert_kernels.hpp): O(nnz) work per
// pass, ceil(bits(ncols - 1) / digit_bits) + ceil(bits(nrows - 1) / digit_bits) passes, the same
// cost for one very long row as for many short ones. Because the sort is stable, duplicates are
// summed in their input order and every result is identical on every backend.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <spk/coo_matrix.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/impl/convert_kernels.hpp>
#include <spk/validate.hpp>
#include <string>

namespace spk {

/// Tuning of the radix sort behind the conversions (results do not depend on it).
struct ConvertParams {
  /// Keys each thread counts and scatters in order; 0 picks the execution space's default (256
  /// on GPUs; on host spaces about 8 chunks per thread, at least 1024 keys).
  std::int64_t chunk = 0;
  /// Key bits sorted per pass, in [1, 16]; each pass keeps 2^digit_bits counters per chunk.
  int digit_bits = 8;
};

namespace impl {
inline RadixSortParams radix_params(const ConvertParams& p, const char* where) {
  require(p.chunk >= 0, where, "ConvertParams::chunk = ", p.chunk, " must be >= 0");
  require(p.digit_bits >= 1 && p.digit_bits <= 16, where,
          "ConvertParams::digit_bits = ", p.digit_bits, " must be in [1, 16]");
  RadixSortParams r;
  r.chunk = p.chunk;
  r.digit_bits = p.digit_bits;
  return r;
}

// Conversions that read a CSR matrix need only a well-formed structure and in-range columns.
inline ValidateOptions structure_only() {
  ValidateOptions opt;
  opt.require_sorted = false;
  opt.allow_duplicates = true;
  return opt;
}
}  // namespace impl

/// COO -> CSR on a's execution space: triplets in any order become rows sorted by column, with
/// the values of repeated (row, column) summed in input order (explicit zeros are kept). Throws
/// std::invalid_argument naming the first triplet with an index outside the matrix (position,
/// row, column, dimensions). O(nnz) work per radix pass plus O(nrows log nnz); O(nnz) scratch.
template <class S, class O, class F, class D>
CsrMatrix<S, O, F, D> coo_to_csr(const CooMatrix<S, O, F, D>& a, const ConvertParams& params = {}) {
  const impl::RadixSortParams p = impl::radix_params(params, "spk::coo_to_csr");
  const std::string defect = impl::coo_defect(a, CooValidateOptions{});
  if (!defect.empty()) throw_invalid_argument("spk::coo_to_csr", defect);
  return impl::coo_to_csr_checked(a, p);
}

/// CSR -> COO on a's execution space: one triplet per stored entry, in storage order (new
/// arrays). Throws std::invalid_argument if the row_map is malformed or a column is out of range.
/// O(nnz log nrows) work.
template <class S, class O, class F, class D>
CooMatrix<S, O, F, D> csr_to_coo(const CsrMatrix<S, O, F, D>& a) {
  const std::string defect = impl::csr_defect(a, impl::structure_only());
  if (!defect.empty()) throw_invalid_argument("spk::csr_to_coo", defect);
  return impl::csr_to_coo_checked(a);
}

/// A^T (or A^H with conjugate = true; the same for real values) as a new ncols x nrows CSR
/// matrix on a's execution space. Rows of the result are sorted by column whatever the order
/// within the rows of A; repeated entries stay repeated. Throws std::invalid_argument if the
/// row_map is malformed or a column is out of range. O(nnz) work per radix pass plus
/// O(nnz log nrows).
template <class S, class O, class F, class D>
CsrMatrix<S, O, F, D> transpose(const CsrMatrix<S, O, F, D>& a, bool conjugate = false,
                                const ConvertParams& params = {}) {
  const impl::RadixSortParams p = impl::radix_params(params, "spk::transpose");
  const std::string defect = impl::csr_defect(a, impl::structure_only());
  if (!defect.empty()) throw_invalid_argument("spk::transpose", defect);
  return impl::transpose_checked(a, conjugate, p);
}

/// A copy of A with each row sorted by column; repeated columns are kept, in stored order.
/// Throws like spk::transpose; costs two transpositions.
template <class S, class O, class F, class D>
CsrMatrix<S, O, F, D> sort_rows(const CsrMatrix<S, O, F, D>& a, const ConvertParams& params = {}) {
  const impl::RadixSortParams p = impl::radix_params(params, "spk::sort_rows");
  const std::string defect = impl::csr_defect(a, impl::structure_only());
  if (!defect.empty()) throw_invalid_argument("spk::sort_rows", defect);
  return impl::transpose_checked(impl::transpose_checked(a, false, p), false, p);
}

/// A copy of A with each row sorted by column and repeated columns summed in stored order (the
/// canonical form spk::validate accepts with default options). Throws like spk::transpose.
/// Costs a csr_to_coo and a coo_to_csr.
template <class S, class O, class F, class D>
CsrMatrix<S, O, F, D> sum_duplicates(const CsrMatrix<S, O, F, D>& a,
                                     const ConvertParams& params = {}) {
  const impl::RadixSortParams p = impl::radix_params(params, "spk::sum_duplicates");
  const std::string defect = impl::csr_defect(a, impl::structure_only());
  if (!defect.empty()) throw_invalid_argument("spk::sum_duplicates", defect);
  return impl::coo_to_csr_checked(impl::csr_to_coo_checked(a), p);
}

}  // namespace spk
