// Tests of spk/formats/hll.hpp: conversion from CSR (hack sizes, sorting globally and within
// windows), to_csr(), shape statistics, the padding limit, invalid options, and SpMV (N, T, H,
// every launch shape) against the host reference.
#include <string>
#include <vector>

#include <spk/formats/hll.hpp>

#include "format_checks.hpp"
#include "test_common.hpp"

namespace {

using spk_test::RoundTrip;

template <class Device>
std::vector<spk::HllSpmvParams> hll_params() {
  const bool gpu = spk::impl::is_gpu_space<typename Device::execution_space>();
  std::vector<spk::HllSpmvParams> all{{}};
  for (int tpr : {1, 2, 4, 32}) {
    spk::HllSpmvParams p;
    p.threads_per_row = tpr;
    p.team_size = gpu ? 3 : 1;
    p.rows_per_team = 5;
    all.push_back(p);
  }
  return all;
}

// Hack sizes 32 (default), 16 and 64; sorting globally and within windows of two hacks.
std::vector<spk::HllOptions> hll_options() {
  std::vector<spk::HllOptions> all(1);
  spk::HllOptions o;
  o.hack_size = 16;
  all.push_back(o);
  o.hack_size = 64;
  all.push_back(o);
  o = {};
  o.sort = spk::HllSort::global;
  all.push_back(o);
  o.sort = spk::HllSort::window;
  o.sort_window = 64;
  all.push_back(o);
  return all;
}

template <class Device, class S, class O>
void check_hll(const spk_test::HostCsr<S, O>& a, std::uint64_t seed,
               const spk::PaddingLimit& limit = {}) {
  for (auto options : hll_options()) {
    INFO("hack_size " << options.hack_size << ", sort "
                      << std::string(spk::to_string(options.sort)));
    options.limit = limit;
    spk_test::check_format<Device>(
        a,
        [&](const spk::CsrMatrix<S, O, int, Device>& d) {
          return spk::HllMatrix<S, O, int, Device>(d, options);
        },
        hll_params<Device>(), seed, RoundTrip::exact);
  }
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("hll spmv matches the host reference", Device, hll_spmv) {
  spk_test::for_each_type<spk_test::all_scalars>([](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    check_hll<Device>(spk_test::random_csr<S, int>(300, 200, 6, 1), 3);
    check_hll<Device>(spk_test::random_csr<S, long long>(150, 170, 3, 2), 5);
    check_hll<Device>(spk_test::random_csr<S, int>(1, 90, 30, 3), 7);
    check_hll<Device>(spk_test::random_csr<S, int>(90, 1, 1, 4), 9);
    check_hll<Device>(spk_test::random_csr<S, int>(40, 30, 0, 5), 11);
    check_hll<Device>(spk_test::random_csr<S, int>(0, 0, 0, 6), 13);
    // one dense row: only its hack is padded, within the default limit
    check_hll<Device>(spk_test::random_csr<S, int>(150, 170, 3, 7, 40), 15);
    check_hll<Device>(spk_test::csr_with_duplicates<S, int>(8), 17);
    check_hll<Device>(spk_test::csr_from_coo_with_duplicates<S, int>(9), 19);
  });
}
TEST_CASE_TEMPLATE_APPLY(hll_spmv, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("hll on generated matrices", Device, hll_generated) {
  for (const auto& g : spk_test::generated_matrices<double>()) {
    INFO("matrix " << g.first);
    check_hll<Device>(g.second, 21);
  }
}
TEST_CASE_TEMPLATE_APPLY(hll_generated, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("hll on the shared real matrices", Device, hll_real) {
  std::vector<double> ratios;
  spk_test::for_each_shared_matrix("hll", [&](const auto& host, const std::string&, bool complex) {
    using S = typename std::decay_t<decltype(host)>::value_type;
    const auto a = spk::copy_to<Device>(host);
    spk::HllOptions sorted;
    sorted.sort = spk::HllSort::window;
    try {
      for (const auto& options : {spk::HllOptions{}, sorted}) {
        const spk::HllMatrix<S, int, int, Device> f(a, options);
        if (options.sort == spk::HllSort::none)
          ratios.push_back(double(f.memory_bytes()) / double(a.memory_bytes()));
        spk_test::check_round_trip(host, spk::to_host(f.to_csr()), RoundTrip::exact);
        spk::HllSpmvParams two;
        two.threads_per_row = 2;
        const S alpha = spk::scalar_traits<S>::make(0.5, complex ? 0.25 : 0.0);
        for (const auto& p : {spk::HllSpmvParams{}, two}) {
          spk_test::check_format_spmv<Device>(f, host, spk::Mode::N, alpha, S(0), 17, p);
          spk_test::check_format_spmv<Device>(f, host, spk::Mode::T, alpha, S(2), 19, p);
          if (complex)
            spk_test::check_format_spmv<Device>(f, host, spk::Mode::H, alpha, S(2), 23, p);
        }
      }
      return true;
    } catch (const spk::PaddingLimitExceeded& e) {
      MESSAGE("hll refuses by its padding limit: " << std::string(e.what()));
      return false;
    }
  });
  double sum = 0;
  for (double r : ratios) sum += r;
  MESSAGE("hll (hack 32, unsorted) memory / CSR memory, mean over "
          << ratios.size() << " matrices: " << sum / double(ratios.size()));
}
TEST_CASE_TEMPLATE_APPLY(hll_real, spk_test::all_devices);

TEST_CASE("hll: layout, sorting and shape statistics") {
  using D = spk::impl::HostDevice;
  // 40 rows: row i has i % 5 entries, row 37 has 12 (hacks of 16: 0-15, 16-31, 32-39)
  std::vector<int> row_map{0};
  std::vector<int> cols;
  std::vector<double> vals;
  for (int i = 0; i < 40; ++i) {
    const int len = i == 37 ? 12 : i % 5;
    for (int k = 0; k < len; ++k) {
      cols.push_back((i + 3 * k) % 20);
      vals.push_back(1.0 + i + 0.01 * k);
    }
    std::sort(cols.end() - len, cols.end());
    row_map.push_back(int(cols.size()));
  }
  const auto a = spk::make_csr<double, int, int, D>(40, 20, row_map, cols, vals);
  spk::HllOptions o;
  o.hack_size = 16;
  const spk::HllMatrix<double, int, int, D> h(a, o);
  CHECK(h.hack_size() == 16);
  CHECK(h.n_hacks() == 3);
  CHECK(h.max_width() == 12);
  CHECK(h.hack_offsets()(0) == 0);
  CHECK(h.hack_offsets()(1) == 4 * 16);
  CHECK(h.hack_offsets()(2) == 8 * 16);
  CHECK(h.hack_offsets()(3) == 20 * 16);  // the last hack (8 rows) is padded to 16 rows
  CHECK(h.nnz() == a.nnz());
  CHECK(h.padding_ratio() == doctest::Approx(320.0 / double(a.nnz())));
  CHECK(h.mean_width() == doctest::Approx(320.0 / 48));
  CHECK(h.permutation().extent(0) == 0);
  CHECK(h.memory_bytes() == 320 * 12 + 4 * 4 + 40 * 4);
  // entry k of row 6 (hack 0, length 1) at hack_offsets(0) + k * 16 + 6, padding after it
  CHECK(h.col_idx()(6) == a.col_idx()(a.row_map()(6)));
  CHECK(h.values()(16 + 6) == 0.0);
  CHECK(h.col_idx()(16 + 6) == a.col_idx()(a.row_map()(6)));
  CHECK(std::string(spk::HllMatrix<double>::name) == "hll");
  // global sort: decreasing length, ties in row order (stable)
  o.sort = spk::HllSort::global;
  const spk::HllMatrix<double, int, int, D> g(a, o);
  REQUIRE(g.permutation().extent(0) == 40);
  CHECK(g.permutation()(0) == 37);
  CHECK(g.permutation()(1) == 4);
  CHECK(g.permutation()(2) == 9);
  for (int p = 1; p < 40; ++p) CHECK(g.row_lengths()(p - 1) >= g.row_lengths()(p));
  CHECK(g.memory_bytes() < h.memory_bytes() + 40 * 4);
  // window sort: decreasing length within each window of 16 rows
  o.sort = spk::HllSort::window;
  o.sort_window = 16;
  const spk::HllMatrix<double, int, int, D> w(a, o);
  for (int p = 0; p < 40; ++p) {
    CHECK(w.permutation()(p) / 16 == p / 16);
    if (p % 16 != 0) CHECK(w.row_lengths()(p - 1) >= w.row_lengths()(p));
  }
  CHECK(w.permutation()(32) == 37);
}

TEST_CASE("hll: invalid options and the padding limit") {
  using D = spk::impl::HostDevice;
  const auto a = spk_test::random_csr<double, int>(100, 100, 3, 1);
  for (int bad : {0, -32, 8, 24, 48, 100}) {
    spk::HllOptions o;
    o.hack_size = bad;
    CHECK_THROWS_WITH_AS((spk::HllMatrix<double, int, int, D>(a, o)),
                         doctest::Contains(("hack_size = " + std::to_string(bad) +
                                            " must be 16 or a positive multiple of 32")
                                               .c_str()),
                         std::invalid_argument);
  }
  spk::HllOptions o;
  o.sort = spk::HllSort::window;
  o.sort_window = 40;
  CHECK_THROWS_WITH_AS((spk::HllMatrix<double, int, int, D>(a, o)),
                       doctest::Contains("sort_window = 40"), std::invalid_argument);
  // arrow.mtx: the full first row pads one hack only, so HLL accepts it by default...
  const auto arrow = spk::to_host(spk::coo_to_csr(spk::io::read_matrix_market_coo<double, int, int>(
      spk_test::data_dir() + "/matrices/arrow.mtx")));
  const spk::HllMatrix<double, int, int, D> h(arrow);
  CHECK(h.max_width() == 46500);
  CHECK(double(h.memory_bytes()) < 20.0 * double(arrow.memory_bytes()));
  // ...and refuses it under a stricter limit, naming the shape
  spk::HllOptions strict;
  strict.limit.max_csr_ratio = 4;
  CHECK_THROWS_WITH_AS((spk::HllMatrix<double, int, int, D>(arrow, strict)),
                       doctest::Contains("spk::HllMatrix: padded storage (1454 hacks of 32 rows"),
                       spk::PaddingLimitExceeded);
  // a matrix with one full row: accepted by default, refused with a limit of 2 x CSR
  const auto full = spk_test::random_csr<double, int>(3000, 3000, 1, 4, 1234);
  const spk::HllMatrix<double, int, int, D> hf(full);
  CHECK(hf.max_width() == 3000);
  strict.limit.max_csr_ratio = 2;
  CHECK_THROWS_AS((spk::HllMatrix<double, int, int, D>(full, strict)), spk::PaddingLimitExceeded);
}

TEST_CASE("hll spmv: wrong sizes and parameters throw") {
  using D = spk::impl::HostDevice;
  const spk::HllMatrix<double, int, int, D> a(spk_test::random_csr<double, int>(5, 4, 2, 1));
  Kokkos::View<double*, Kokkos::HostSpace> x("x", 5), y("y", 5);
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, a, x, 0.0, y),
                       doctest::Contains("x has 5 entries, op(A) has 4 columns"),
                       std::invalid_argument);
  Kokkos::View<double*, Kokkos::HostSpace> x4("x", 4);
  spk::HllSpmvParams p;
  p.team_size = -1;
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, a, x4, 0.0, y, p),
                       doctest::Contains("team_size = -1"), std::invalid_argument);
}
