// spk/validate.hpp: structural checks of CSR and COO matrices, run on the matrix's device.
//
// The checks are parallel reductions that find the first offending row or entry; only that
// entry's few values are copied to the host to build the message.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <spk/coo_matrix.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/impl/convert_kernels.hpp>
#include <string>

namespace spk {

/// What spk::validate requires of a CSR matrix besides a well-formed row_map (row_map(0) == 0,
/// non-decreasing, row_map(nrows) == nnz) and column indices in [0, ncols).
struct ValidateOptions {
  /// Columns non-decreasing within each row (strictly increasing unless duplicates are allowed).
  bool require_sorted = true;
  /// The same column may appear more than once in a row.
  bool allow_duplicates = false;
};

/// What spk::validate requires of a COO matrix besides indices inside the matrix.
struct CooValidateOptions {
  /// Entries in row-major order: by row, then by column.
  bool require_sorted = false;
  /// The same (row, column) may appear more than once (a conversion to CSR sums them).
  bool allow_duplicates = true;
};

namespace impl {

/// A repeated (row, column) and the input positions of its first two occurrences.
template <class O, class F>
struct Duplicate {
  bool found = false;
  O row = 0, col = 0;
  F first = 0, second = 0;
};

/// The duplicate of smallest (row, column) among n in-range entries given by their rows and
/// columns, found by sorting them.
template <class ExecSpace, class O, class F, class D, class RowView, class ColView>
Duplicate<O, F> find_duplicate(const RowView& rows, const ColView& cols, O nrows, O ncols) {
  Duplicate<O, F> dup;
  const std::int64_t n = std::int64_t(cols.extent(0));
  if (n < 2) return dup;
  const auto s = sort_by_row_col<ExecSpace, O, F, D>(rows, cols, nrows, ncols, RadixSortParams{});
  const auto sr = s.rows;
  const auto sc = s.cols;
  const std::int64_t k = find_first<ExecSpace>(
      1, n,
      KOKKOS_LAMBDA(const std::int64_t j) { return sr(j) == sr(j - 1) && sc(j) == sc(j - 1); });
  if (k == n) return dup;
  dup.found = true;
  dup.row = read_element(sr, k);
  dup.col = read_element(sc, k);
  // The sort is stable, so the pair appears in input order.
  dup.first = read_element(s.perm, k - 1);
  dup.second = read_element(s.perm, k);
  return dup;
}

/// The first defect of a CSR matrix as text ("" if there is none), in this order: row_map
/// extent, row_map(0), monotonicity, row_map(nrows) == nnz, then the first entry (in storage
/// order) whose column is out of range, out of order or repeated.
template <class S, class O, class F, class D>
std::string csr_defect(const CsrMatrix<S, O, F, D>& a, const ValidateOptions& opt) {
  using Csr = CsrMatrix<S, O, F, D>;
  using exec = typename Csr::execution_space;
  using dev = typename Csr::device_type;
  const auto row_map = a.row_map();
  const auto col_idx = a.col_idx();
  const O nrows = a.nrows();
  const O ncols = a.ncols();
  const std::int64_t nnz = std::int64_t(a.nnz());
  if (row_map.extent(0) != std::size_t(nrows) + 1)
    return str_cat("CSR row_map has ", row_map.extent(0),
                   " entries, expected nrows + 1 = ", std::size_t(nrows) + 1);
  const F first = read_element(row_map, 0);
  if (first != F(0)) return str_cat("CSR row_map(0) = ", first, ", expected 0");
  const std::int64_t bad_row = find_first<exec>(
      0, nrows, KOKKOS_LAMBDA(const std::int64_t i) { return row_map(i + 1) < row_map(i); });
  if (bad_row < nrows)
    return str_cat("CSR row_map decreases after row ", bad_row, ": row_map(", bad_row,
                   ") = ", read_element(row_map, bad_row), " > row_map(", bad_row + 1,
                   ") = ", read_element(row_map, bad_row + 1));
  const F last = read_element(row_map, nrows);
  if (std::int64_t(last) != nnz)
    return str_cat("CSR row_map(nrows = ", nrows, ") = ", last, ", but col_idx and values have ",
                   nnz, " entries");

  // From here on row_map is a valid partition of [0, nnz), so entries can find their rows.
  const auto row_context = [&](std::int64_t i) {
    return str_cat("CSR row ", i, " (entries ", read_element(row_map, i), "..",
                   read_element(row_map, i + 1), "): ");
  };
  const bool sorted = opt.require_sorted;
  const bool duplicates = opt.allow_duplicates;
  const std::int64_t k = find_first<exec>(
      0, nnz, KOKKOS_LAMBDA(const std::int64_t j) {
        const O c = col_idx(j);
        if (c < 0 || c >= ncols) return true;
        if (!sorted || j == 0 || row_map(row_of_entry(row_map, nrows, F(j))) == F(j)) return false;
        const O prev = col_idx(j - 1);
        return c < prev || (c == prev && !duplicates);
      });
  if (k < nnz) {
    const std::int64_t i = find_first<exec>(
        0, nrows, KOKKOS_LAMBDA(const std::int64_t r) { return row_map(r + 1) > F(k); });
    const O c = read_element(col_idx, k);
    if (c < 0 || c >= ncols)
      return str_cat(row_context(i), "column index ", c, " at entry ", k, " out of range [0, ",
                     ncols, ")");
    const O prev = read_element(col_idx, k - 1);
    if (c == prev)
      return str_cat(row_context(i), "duplicate column index ", c, " at entries ", k - 1, " and ",
                     k);
    return str_cat(row_context(i), "column index ", c, " at entry ", k,
                   " comes after column index ", prev, " (columns must be sorted within rows)");
  }
  if (!duplicates && !sorted && nnz > 1) {
    const auto rows = entry_rows<exec, O, dev>(row_map, nrows, nnz);
    const auto d = find_duplicate<exec, O, F, dev>(rows, col_idx, nrows, ncols);
    if (d.found)
      return str_cat(row_context(d.row), "duplicate column index ", d.col, " at entries ", d.first,
                     " and ", d.second);
  }
  return {};
}

/// The first defect of a COO matrix as text ("" if there is none): the first entry with an index
/// out of range, then (if asked) the first entry out of row-major order, then (if asked) the
/// duplicate pair of the smallest (row, column).
template <class S, class O, class F, class D>
std::string coo_defect(const CooMatrix<S, O, F, D>& a, const CooValidateOptions& opt) {
  using Coo = CooMatrix<S, O, F, D>;
  using exec = typename Coo::execution_space;
  using dev = typename Coo::device_type;
  const auto rows = a.row_idx();
  const auto cols = a.col_idx();
  const O nrows = a.nrows();
  const O ncols = a.ncols();
  const std::int64_t n = std::int64_t(a.nnz());
  const auto entry = [&](std::int64_t k) {
    return str_cat("COO entry ", k, " (row ", read_element(rows, k), ", col ",
                   read_element(cols, k), ")");
  };
  const std::int64_t bad = find_first<exec>(
      0, n, KOKKOS_LAMBDA(const std::int64_t k) {
        const O r = rows(k), c = cols(k);
        return r < 0 || r >= nrows || c < 0 || c >= ncols;
      });
  if (bad < n) return str_cat(entry(bad), " out of range for a ", nrows, " x ", ncols, " matrix");
  if (opt.require_sorted) {
    const std::int64_t k = find_first<exec>(
        1, n, KOKKOS_LAMBDA(const std::int64_t j) {
          return rows(j) < rows(j - 1) || (rows(j) == rows(j - 1) && cols(j) < cols(j - 1));
        });
    if (k < n)
      return str_cat(entry(k), " comes after ", entry(k - 1),
                     " (entries must be sorted by row, then column)");
  }
  if (!opt.allow_duplicates) {
    const auto d = find_duplicate<exec, O, F, dev>(rows, cols, nrows, ncols);
    if (d.found)
      return str_cat("COO entries ", d.first, " and ", d.second, " are both at (", d.row, ", ",
                     d.col, ")");
  }
  return {};
}

}  // namespace impl

/// Checks the structure of a CSR matrix: row_map(0) == 0, row_map non-decreasing,
/// row_map(nrows) == nnz, every column index in [0, ncols) and, per the options, columns sorted
/// within rows and no repeated column in a row. Throws std::invalid_argument describing the first
/// defect, e.g. "spk::validate: CSR row 5 (entries 17..20): column index 1000 at entry 18 out of
/// range [0, 100)". Runs on a's execution space: O(nnz log nrows) work (plus a sort of the
/// entries when duplicates must be found in unsorted rows), a few scalars copied to the host.
template <class S, class O, class F, class D>
void validate(const CsrMatrix<S, O, F, D>& a, const ValidateOptions& opt = {}) {
  const std::string defect = impl::csr_defect(a, opt);
  if (!defect.empty()) throw_invalid_argument("spk::validate", defect);
}

/// Whether spk::validate(a, opt) would pass (the same checks, returning false instead of
/// throwing).
template <class S, class O, class F, class D>
bool is_valid(const CsrMatrix<S, O, F, D>& a, const ValidateOptions& opt = {}) {
  return impl::csr_defect(a, opt).empty();
}

/// Checks a COO matrix: every (row, column) inside the matrix and, per the options, row-major
/// order and no repeated (row, column). Throws std::invalid_argument describing the first defect,
/// e.g. "spk::validate: COO entry 7 (row 3, col 12) out of range for a 10 x 10 matrix". Runs on
/// a's execution space: O(nnz) work (plus a sort when duplicates are to be found).
template <class S, class O, class F, class D>
void validate(const CooMatrix<S, O, F, D>& a, const CooValidateOptions& opt = {}) {
  const std::string defect = impl::coo_defect(a, opt);
  if (!defect.empty()) throw_invalid_argument("spk::validate", defect);
}

/// Whether spk::validate(a, opt) would pass, returning false instead of throwing.
template <class S, class O, class F, class D>
bool is_valid(const CooMatrix<S, O, F, D>& a, const CooValidateOptions& opt = {}) {
  return impl::coo_defect(a, opt).empty();
}

}  // namespace spk
