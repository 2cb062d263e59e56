// Tests of spk/formats/ell.hpp: conversion from CSR, to_csr(), shape statistics, the padding
// limit, and SpMV (N, T, H, every launch shape, both layouts) against the host reference.
#include <string>
#include <vector>

#include <spk/formats/ell.hpp>

#include "format_checks.hpp"
#include "test_common.hpp"

namespace {

using spk_test::RoundTrip;

// Launch shapes: the default, then 1, 2, 4 and 32 threads per row with partial row chunks, and
// each inner loop (4 or 8 entries in flight with a predicated last chunk, 4 with the remainder
// one at a time) with 1 and 2 threads per row. CPU backends run teams of one thread (Serial
// allows no more).
template <class Device>
std::vector<spk::EllSpmvParams> ell_params() {
  const bool gpu = spk::impl::is_gpu_space<typename Device::execution_space>();
  std::vector<spk::EllSpmvParams> all{{}};
  for (int tpr : {1, 2, 4, 32}) {
    spk::EllSpmvParams p;
    p.threads_per_row = tpr;
    p.team_size = gpu ? 3 : 1;
    p.rows_per_team = 5;
    all.push_back(p);
  }
  for (int f : {4, 8, -4}) {
    for (int tpr : {1, 2}) {
      spk::EllSpmvParams p;
      p.threads_per_row = tpr;
      p.in_flight = f;
      all.push_back(p);
    }
  }
  return all;
}

template <class Device, class Layout, class S, class O>
void check_ell(const spk_test::HostCsr<S, O>& a, std::uint64_t seed,
               const spk::EllOptions& options = {}) {
  spk_test::check_format<Device>(
      a,
      [&](const spk::CsrMatrix<S, O, int, Device>& d) {
        return spk::EllMatrix<S, O, int, Device, Layout>(d, options);
      },
      ell_params<Device>(), seed, RoundTrip::exact);
}

template <class Device, class S, class O>
void check_both_layouts(const spk_test::HostCsr<S, O>& a, std::uint64_t seed,
                        const spk::EllOptions& options = {}) {
  check_ell<Device, Kokkos::LayoutLeft>(a, seed, options);
  check_ell<Device, Kokkos::LayoutRight>(a, seed, options);
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("ell spmv matches the host reference", Device, ell_spmv) {
  spk_test::for_each_type<spk_test::all_scalars>([](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    // random, larger than a warp, with empty rows
    check_both_layouts<Device>(spk_test::random_csr<S, int>(300, 200, 6, 1), 3);
    // int64 ordinals, non-square
    check_both_layouts<Device>(spk_test::random_csr<S, long long>(150, 170, 3, 2), 5);
    // one row; one column; 0 nonzeros; 0 x 0
    check_both_layouts<Device>(spk_test::random_csr<S, int>(1, 90, 30, 3), 7);
    check_both_layouts<Device>(spk_test::random_csr<S, int>(90, 1, 1, 4), 9);
    check_both_layouts<Device>(spk_test::random_csr<S, int>(40, 30, 0, 5), 11);
    check_both_layouts<Device>(spk_test::random_csr<S, int>(0, 0, 0, 6), 13);
    // one dense row (allowed by a raised limit: it pads every row to 170 entries)
    spk::EllOptions loose;
    loose.limit.max_csr_ratio = 1000;
    check_both_layouts<Device>(spk_test::random_csr<S, int>(150, 170, 3, 7, 40), 15, loose);
    // duplicate entries: kept as such in CSR, or summed from a COO
    check_both_layouts<Device>(spk_test::csr_with_duplicates<S, int>(8), 17);
    check_both_layouts<Device>(spk_test::csr_from_coo_with_duplicates<S, int>(9), 19);
  });
}
TEST_CASE_TEMPLATE_APPLY(ell_spmv, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("ell on generated matrices", Device, ell_generated) {
  for (const auto& g : spk_test::generated_matrices<double>()) {
    INFO("matrix " << g.first);
    check_ell<Device, Kokkos::LayoutLeft>(g.second, 21);
    check_ell<Device, Kokkos::LayoutRight>(g.second, 21);
  }
}
TEST_CASE_TEMPLATE_APPLY(ell_generated, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("ell on the shared real matrices", Device, ell_real) {
  spk_test::for_each_shared_matrix("ell", [](const auto& host, const std::string&, bool complex) {
    using S = typename std::decay_t<decltype(host)>::value_type;
    const auto a = spk::copy_to<Device>(host);
    try {
      const spk::EllMatrix<S, int, int, Device> f(a);
      spk_test::check_round_trip(host, spk::to_host(f.to_csr()), RoundTrip::exact);
      spk::EllSpmvParams two;
      two.threads_per_row = 2;
      const std::vector<spk::EllSpmvParams> launches{{}, two};
      spk_test::check_real_spmv<Device>(f, host, complex, launches);
      return true;
    } catch (const spk::PaddingLimitExceeded& e) {
      MESSAGE("ell refuses by its padding limit: " << std::string(e.what()));
      return false;
    }
  });
}
TEST_CASE_TEMPLATE_APPLY(ell_real, spk_test::all_devices);

TEST_CASE("ell: shape statistics, alignment and memory") {
  using D = spk::impl::HostDevice;
  // rows of lengths 0, 3, 1, 5 (width 5, 9 entries)
  const auto a = spk::make_csr<double, int, int, D>(
      4, 6, {0, 0, 3, 4, 9}, {0, 2, 4, 5, 0, 1, 2, 3, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const spk::EllMatrix<double, int, int, D, Kokkos::LayoutLeft> left(a);
  CHECK(left.width() == 5);
  CHECK(left.nnz() == 9);
  CHECK(left.pitch() == 32);  // 128-byte columns: 32 ints, 16 doubles
  CHECK(left.values().extent(0) == 32);
  CHECK(left.pitch() * sizeof(double) % 128 == 0);
  CHECK(left.padding_ratio() == doctest::Approx(32.0 * 5 / 9));
  CHECK(left.memory_bytes() == 32 * 5 * (8 + 4) + 4 * 4);
  // padding repeats the row's last column with a zero value; empty rows use column 0
  CHECK(left.col_idx()(1, 3) == 4);
  CHECK(left.values()(1, 3) == 0.0);
  CHECK(left.col_idx()(0, 0) == 0);
  CHECK(left.values()(0, 0) == 0.0);
  CHECK(left.row_lengths()(3) == 5);
  const spk::EllMatrix<double, int, int, D, Kokkos::LayoutRight> right(a);
  CHECK(right.pitch() == 5);
  CHECK(right.values().extent(0) == 4);
  CHECK(right.memory_bytes() == 4 * 5 * (8 + 4) + 4 * 4);
  CHECK(right.padding_ratio() == doctest::Approx(20.0 / 9));
  CHECK(std::string(spk::EllMatrix<double>::name) == "ell");
  // the deducing helper picks the device's default layout (row-major on CPU backends)
  const auto def = spk::to_ell(a);
  CHECK(std::is_same<typename decltype(def)::array_layout, Kokkos::LayoutRight>::value);
  // complex<double> with int64 indices: 128 / 16 = 8 and 128 / 8 = 16 rows per line
  const auto c = spk_test::random_csr<Kokkos::complex<double>, long long>(20, 20, 2, 1);
  const spk::EllMatrix<Kokkos::complex<double>, long long, int, D, Kokkos::LayoutLeft> lc(c);
  CHECK(lc.pitch() == 32);
}

TEST_CASE("ell: the padding limit refuses arrow.mtx and a matrix with one full row") {
  using D = spk::impl::HostDevice;
  const auto arrow = spk::to_host(spk::coo_to_csr(spk::io::read_matrix_market_coo<double, int, int>(
      spk_test::data_dir() + "/matrices/arrow.mtx")));
  CHECK_THROWS_WITH_AS((spk::EllMatrix<double, int, int, D, Kokkos::LayoutLeft>(arrow)),
                       doctest::Contains("spk::EllMatrix: padded storage (width 46500 x pitch"),
                       spk::PaddingLimitExceeded);
  CHECK_THROWS_AS((spk::EllMatrix<double, int, int, D>(arrow)), std::invalid_argument);
  // one full row of 3000 entries among rows of about 2
  const auto full = spk_test::random_csr<double, int>(3000, 3000, 1, 4, 1234);
  CHECK_THROWS_WITH_AS((spk::EllMatrix<double, int, int, D>(full)),
                       doctest::Contains("above the limit"), spk::PaddingLimitExceeded);
  // the limit is configurable both ways
  spk::EllOptions loose;
  loose.limit.max_csr_ratio = 1000;
  const auto full_small = spk_test::random_csr<double, int>(500, 500, 1, 4, 77);
  CHECK_THROWS_AS((spk::EllMatrix<double, int, int, D>(full_small)), spk::PaddingLimitExceeded);
  const spk::EllMatrix<double, int, int, D> ok(full_small, loose);
  CHECK(ok.width() == 500);
  spk::EllOptions strict;
  strict.limit.max_csr_ratio = 1.01;
  strict.limit.min_limit_bytes = 0;
  const auto regular = spk::generate::poisson2d_5pt<double, int, int, D>(20);
  CHECK_THROWS_AS((spk::EllMatrix<double, int, int, D>(regular, strict)),
                  spk::PaddingLimitExceeded);
  spk::EllOptions bad;
  bad.limit.max_csr_ratio = 0;
  CHECK_THROWS_WITH_AS((spk::EllMatrix<double, int, int, D>(regular, bad)),
                       doctest::Contains("max_csr_ratio = 0"), std::invalid_argument);
}

TEST_CASE("ell spmv: wrong sizes and parameters throw") {
  using D = spk::impl::HostDevice;
  const spk::EllMatrix<double, int, int, D> a(spk_test::random_csr<double, int>(5, 4, 2, 1));
  Kokkos::View<double*, Kokkos::HostSpace> x("x", 5), y("y", 5);
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, a, x, 0.0, y),
                       doctest::Contains("x has 5 entries, op(A) has 4 columns"),
                       std::invalid_argument);
  Kokkos::View<double*, Kokkos::HostSpace> xt("x", 5), yt("y", 3);
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::T, 1.0, a, xt, 0.0, yt),
                       doctest::Contains("y has 3 entries, op(A) has 4 rows"),
                       std::invalid_argument);
  Kokkos::View<double*, Kokkos::HostSpace> x4("x", 4);
  spk::EllSpmvParams p;
  p.threads_per_row = 3;
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, a, x4, 0.0, y, p),
                       doctest::Contains("threads_per_row = 3"), std::invalid_argument);
  spk::EllSpmvParams f;
  f.in_flight = 6;
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, a, x4, 0.0, y, f),
                       doctest::Contains("in_flight = 6 must be 0 (choose), -4, 4 or 8"),
                       std::invalid_argument);
  // resolved: the four-then-one loop on CPU backends (chunks of 8 on GPUs), a given value kept
  CHECK(spk::resolve_params(a, spk::Mode::N).in_flight == -4);
  CHECK(spk::describe(spk::resolve_params(a, spk::Mode::N)).find("-s4") != std::string::npos);
  spk::EllSpmvParams four;
  four.in_flight = 4;
  CHECK(spk::resolve_params(a, spk::Mode::N, four).in_flight == 4);
  CHECK(spk::impl::resolve_in_flight("w", 0, true) == 8);
  CHECK(spk::impl::resolve_in_flight("w", 0, false) == -4);
}
