// Tests of spk::CsrMatrix and spk::CooMatrix: construction, extents checks, deep copies.
#include "test_common.hpp"

#include <spk/coo_matrix.hpp>
#include <spk/csr_matrix.hpp>

TEST_CASE_TEMPLATE_DEFINE("csr and coo containers: build, copy, memory", Device, containers) {
  using Csr = spk::CsrMatrix<double, int, int, Device>;
  // 3 x 4: [1 0 2 0; 0 0 0 0; 0 3 0 4]
  const auto a = spk::make_csr<double, int, int, Device>(3, 4, {0, 2, 2, 4}, {0, 2, 1, 3},
                                                         {1.0, 2.0, 3.0, 4.0});
  CHECK(a.nrows() == 3);
  CHECK(a.ncols() == 4);
  CHECK(a.nnz() == 4);
  CHECK(a.memory_bytes() == 4 * sizeof(int) + 4 * (sizeof(int) + sizeof(double)));
  const auto h = spk::to_host(a);
  CHECK(h.row_map()(3) == 4);
  CHECK(h.col_idx()(2) == 1);
  CHECK(h.values()(3) == 4.0);
  // deep copy: changing the copy leaves the original alone
  auto b = spk::copy_to<Device>(a);
  Kokkos::deep_copy(b.values(), 7.0);
  CHECK(spk::to_host(a).values()(0) == 1.0);
  CHECK(spk::to_host(b).values()(0) == 7.0);

  const Csr empty;
  CHECK(empty.nrows() == 0);
  CHECK(empty.nnz() == 0);

  spk::CooBuilder<double, long long> builder(2, 3);
  builder.add(1, 2, 5.0);
  builder.add(0, 0, -1.0);
  const auto coo = builder.template build<Device>();
  CHECK(coo.nnz() == 2);
  CHECK(spk::to_host(coo).col_idx()(0) == 2);
}
TEST_CASE_TEMPLATE_APPLY(containers, spk_test::all_devices);

TEST_CASE("csr and coo containers: bad sizes throw with the offending values") {
  using Host = spk::impl::HostDevice;
  CHECK_THROWS_WITH_AS((spk::make_csr<double, int, int, Host>(3, 3, {0, 1}, {0}, {1.0})),
                       doctest::Contains("row_map has 2 entries, expected nrows + 1 = 4"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((spk::make_csr<double, int, int, Host>(1, 3, {0, 1}, {0}, {1.0, 2.0})),
                       doctest::Contains("col_idx has 1 entries but values has 2"),
                       std::invalid_argument);
  CHECK_THROWS_AS((spk::CsrMatrix<double, int, int, Host>(-1, 3, 0)), std::invalid_argument);
  CHECK_THROWS_WITH_AS((spk::CsrMatrix<double, int, int, Host>(3, 3, -1)),
                       doctest::Contains("negative number of entries -1"), std::invalid_argument);
  CHECK_THROWS_WITH_AS((spk::CooMatrix<double, int, int, Host>(3, 3, -5)),
                       doctest::Contains("negative number of entries -5"), std::invalid_argument);
  CHECK_THROWS_AS((spk::CooMatrix<double, int, int, Host>(3, -3, 1)), std::invalid_argument);
  spk::CooBuilder<double> builder(2, 2);
  CHECK_THROWS_WITH_AS(builder.add(2, 0, 1.0), doctest::Contains("entry (2, 0) out of range"),
                       std::invalid_argument);
}
