// Tests of spk/validate.hpp: each kind of defect is caught with a message naming what, where and
// which value; valid matrices pass; on every enabled backend.
#include <cstdint>
#include <spk/coo_matrix.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/validate.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "test_common.hpp"

namespace {

template <class Device, class O = int, class F = int>
spk::CsrMatrix<double, O, F, Device> csr(O nrows, O ncols, const std::vector<F>& row_map,
                                         const std::vector<O>& cols) {
  return spk::make_csr<double, O, F, Device>(nrows, ncols, row_map, cols,
                                             std::vector<double>(cols.size(), 1.0));
}

template <class Device, class O = int>
spk::CooMatrix<double, O, int, Device> coo(O nrows, O ncols, const std::vector<O>& rows,
                                           const std::vector<O>& cols) {
  spk::CooMatrix<double, O, int, spk::impl::HostDevice> h(nrows, ncols, int(rows.size()));
  for (std::size_t k = 0; k < rows.size(); ++k) {
    h.row_idx()(k) = rows[k];
    h.col_idx()(k) = cols[k];
    h.values()(k) = 1.0;
  }
  return spk::copy_to<Device>(h);
}

spk::ValidateOptions options(bool sorted, bool duplicates) {
  spk::ValidateOptions o;
  o.require_sorted = sorted;
  o.allow_duplicates = duplicates;
  return o;
}

// Checks that validate throws std::invalid_argument with exactly `message` and that is_valid
// agrees.
template <class Matrix, class Options>
void check_rejects(const Matrix& a, const Options& opt, const std::string& message) {
  CHECK_FALSE(spk::is_valid(a, opt));
  std::string got;
  try {
    spk::validate(a, opt);
  } catch (const std::invalid_argument& e) {
    got = e.what();
  }
  CHECK(got == message);
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("validate: valid CSR matrices pass", Device, valid_csr) {
  spk_test::for_each_type<spk_test::all_scalars>([](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    for (const auto& h :
         {spk_test::random_csr<S>(300, 200, 7, 1),
          spk_test::random_csr<S>(20, 5000, 30, 2, 3),  // dense row, empty rows
          spk_test::random_csr<S>(1, 40, 10, 3), spk_test::random_csr<S>(7, 7, 0, 4),
          spk_test::random_csr<S>(0, 0, 0, 5)}) {
      const auto a = spk::copy_to<Device>(h);
      CHECK_NOTHROW(spk::validate(a));
      CHECK(spk::is_valid(a));
      CHECK(spk::is_valid(a, options(false, true)));
    }
  });
  const auto h64 = spk_test::random_csr<float, std::int64_t, std::int64_t>(500, 60, 9, 6);
  CHECK_NOTHROW(spk::validate(spk::copy_to<Device>(h64)));
  const auto hs = spk_test::random_csr<double, int, std::size_t>(100, 100, 5, 7);
  CHECK_NOTHROW(spk::validate(spk::copy_to<Device>(hs)));
  CHECK(spk::is_valid(spk::CsrMatrix<double, int, int, Device>()));
  CHECK(spk::is_valid(spk::CsrMatrix<double, int, int, Device>(4, 3, 0)));
  // a row ending with a large column followed by a row starting with a small one is fine
  CHECK(spk::is_valid(csr<Device>(3, 9, {0, 2, 2, 4}, {3, 8, 0, 1})));
}
TEST_CASE_TEMPLATE_APPLY(valid_csr, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("validate: CSR row_map(0) != 0", Device, csr_first_offset) {
  check_rejects(csr<Device>(2, 3, {1, 2, 3}, {0, 1, 2}), spk::ValidateOptions{},
                "spk::validate: CSR row_map(0) = 1, expected 0");
}
TEST_CASE_TEMPLATE_APPLY(csr_first_offset, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("validate: CSR row_map decreasing", Device, csr_decreasing) {
  check_rejects(
      csr<Device>(4, 3, {0, 1, 3, 2, 4}, {0, 1, 2, 0}), options(false, true),
      "spk::validate: CSR row_map decreases after row 2: row_map(2) = 3 > row_map(3) = 2");
  // int64 offsets, the decrease deep inside a long row_map (the first one is reported)
  std::vector<std::int64_t> rm(100001);
  for (std::size_t i = 0; i < rm.size(); ++i) rm[i] = std::int64_t(i);
  rm[70000] = 5;
  rm[80000] = 6;
  const auto a =
      csr<Device, std::int64_t, std::int64_t>(100000, 1, rm, std::vector<std::int64_t>(100000, 0));
  check_rejects(a, spk::ValidateOptions{},
                "spk::validate: CSR row_map decreases after row 69999: row_map(69999) = 69999 > "
                "row_map(70000) = 5");
}
TEST_CASE_TEMPLATE_APPLY(csr_decreasing, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("validate: CSR row_map(nrows) != nnz", Device, csr_last_offset) {
  check_rejects(csr<Device>(2, 3, {0, 1, 2}, {0, 1, 2}), spk::ValidateOptions{},
                "spk::validate: CSR row_map(nrows = 2) = 2, but col_idx and values have 3 entries");
  check_rejects(csr<Device>(2, 3, {0, 1, 4}, {0, 1, 2}), spk::ValidateOptions{},
                "spk::validate: CSR row_map(nrows = 2) = 4, but col_idx and values have 3 entries");
}
TEST_CASE_TEMPLATE_APPLY(csr_last_offset, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("validate: CSR column index out of range", Device, csr_column_range) {
  // 10 x 100; row 5 holds entries 17..20, entry 18 has column 1000; row 8 has a negative one
  std::vector<int> rm = {0, 3, 6, 9, 12, 17, 20, 23, 26, 29, 32};
  std::vector<int> cols;
  for (int i = 0; i < 10; ++i)
    for (int k = rm[i]; k < rm[i + 1]; ++k) cols.push_back(10 * (k - rm[i]) + i);
  cols[18] = 1000;
  cols[27] = -4;
  const auto a = csr<Device>(10, 100, rm, cols);
  const std::string msg =
      "spk::validate: CSR row 5 (entries 17..20): column index 1000 at entry 18 out of range "
      "[0, 100)";
  for (const auto& opt : {options(true, false), options(false, false), options(false, true)})
    check_rejects(a, opt, msg);
  cols[18] = 11;
  check_rejects(csr<Device>(10, 100, rm, cols), spk::ValidateOptions{},
                "spk::validate: CSR row 8 (entries 26..29): column index -4 at entry 27 out of "
                "range [0, 100)");
  // a range defect after an order defect: the earlier entry is reported
  cols[27] = 100;
  cols[24] = 0;
  check_rejects(csr<Device>(10, 100, rm, cols), spk::ValidateOptions{},
                "spk::validate: CSR row 7 (entries 23..26): column index 0 at entry 24 comes "
                "after column index 7 (columns must be sorted within rows)");
}
TEST_CASE_TEMPLATE_APPLY(csr_column_range, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("validate: CSR columns not sorted", Device, csr_unsorted) {
  const auto a = csr<Device>(3, 6, {0, 2, 5, 6}, {0, 4, 2, 5, 1, 3});
  check_rejects(a, spk::ValidateOptions{},
                "spk::validate: CSR row 1 (entries 2..5): column index 1 at entry 4 comes after "
                "column index 5 (columns must be sorted within rows)");
  check_rejects(a, options(true, true),
                "spk::validate: CSR row 1 (entries 2..5): column index 1 at entry 4 comes after "
                "column index 5 (columns must be sorted within rows)");
  CHECK(spk::is_valid(a, options(false, false)));
  CHECK(spk::is_valid(a, options(false, true)));
  // one 200000-entry row, sorted except at two places: the first is reported
  std::vector<int> cols(200000);
  for (int k = 0; k < 200000; ++k) cols[k] = k;
  std::swap(cols[123456], cols[123457]);
  std::swap(cols[150000], cols[150001]);
  check_rejects(csr<Device>(2, 200000, {0, 0, 200000}, cols), spk::ValidateOptions{},
                "spk::validate: CSR row 1 (entries 0..200000): column index 123456 at entry "
                "123457 comes after column index 123457 (columns must be sorted within rows)");
}
TEST_CASE_TEMPLATE_APPLY(csr_unsorted, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("validate: CSR duplicate columns", Device, csr_duplicates) {
  // sorted rows: adjacent repeats
  const auto a = csr<Device>(3, 6, {0, 1, 5, 6}, {3, 0, 2, 2, 5, 5});
  check_rejects(a, spk::ValidateOptions{},
                "spk::validate: CSR row 1 (entries 1..5): duplicate column index 2 at entries 2 "
                "and 3");
  CHECK(spk::is_valid(a, options(true, true)));
  // unsorted rows: repeats anywhere in the row, found by sorting (row 0 is fine)
  const auto b = csr<Device, std::int64_t, std::int64_t>(2, 9, {0, 3, 8}, {8, 1, 0, 5, 2, 7, 2, 6});
  check_rejects(b, options(false, false),
                "spk::validate: CSR row 1 (entries 3..8): duplicate column index 2 at entries 4 "
                "and 6");
  CHECK(spk::is_valid(b, options(false, true)));
  check_rejects(b, spk::ValidateOptions{},
                "spk::validate: CSR row 0 (entries 0..3): column index 1 at entry 1 comes after "
                "column index 8 (columns must be sorted within rows)");
  // a repeated column right after a row boundary is not a duplicate
  CHECK(spk::is_valid(csr<Device>(2, 4, {0, 2, 4}, {1, 3, 3, 0}), options(false, false)));
}
TEST_CASE_TEMPLATE_APPLY(csr_duplicates, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("validate: COO index range, order, duplicates", Device, coo_checks) {
  const auto ok = coo<Device>(4, 5, {3, 0, 2, 0}, {4, 1, 0, 1});
  CHECK_NOTHROW(spk::validate(ok));
  CHECK(spk::is_valid(ok));
  CHECK(spk::is_valid(coo<Device>(0, 0, {}, {})));

  check_rejects(coo<Device>(4, 5, {3, 0, 4, 0, -1}, {4, 1, 0, 1, 0}), spk::CooValidateOptions{},
                "spk::validate: COO entry 2 (row 4, col 0) out of range for a 4 x 5 matrix");
  check_rejects(coo<Device>(4, 5, {3, 0, 1, 0}, {4, 1, 0, -2}), spk::CooValidateOptions{},
                "spk::validate: COO entry 3 (row 0, col -2) out of range for a 4 x 5 matrix");
  check_rejects(coo<Device, std::int64_t>(4, 5, {3, 0, 1, 0}, {4, 5, 0, 1}),
                spk::CooValidateOptions{},
                "spk::validate: COO entry 1 (row 0, col 5) out of range for a 4 x 5 matrix");

  spk::CooValidateOptions sorted;
  sorted.require_sorted = true;
  CHECK(spk::is_valid(coo<Device>(4, 5, {0, 0, 0, 2, 3}, {1, 1, 3, 0, 4}), sorted));
  check_rejects(ok, sorted,
                "spk::validate: COO entry 1 (row 0, col 1) comes after COO entry 0 (row 3, col 4) "
                "(entries must be sorted by row, then column)");
  check_rejects(coo<Device>(4, 5, {0, 0, 1, 1}, {1, 3, 4, 2}), sorted,
                "spk::validate: COO entry 3 (row 1, col 2) comes after COO entry 2 (row 1, col 4) "
                "(entries must be sorted by row, then column)");

  spk::CooValidateOptions unique;
  unique.allow_duplicates = false;
  check_rejects(ok, unique, "spk::validate: COO entries 1 and 3 are both at (0, 1)");
  // several repeated positions: the smallest (row, column) is reported, first two occurrences
  check_rejects(coo<Device>(4, 5, {3, 2, 3, 2, 2}, {4, 2, 4, 2, 2}), unique,
                "spk::validate: COO entries 1 and 3 are both at (2, 2)");
  CHECK(spk::is_valid(coo<Device>(4, 5, {3, 2, 3}, {4, 2, 3}), unique));
}
TEST_CASE_TEMPLATE_APPLY(coo_checks, spk_test::all_devices);
