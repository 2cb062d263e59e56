// Tests of spk/formats/hll.hpp: conversion from CSR (hack sizes, sorting globally, within
// windows and automatically), to_csr(), shape statistics, the padding limit, invalid options,
// and SpMV (N, T, H, every launch shape, wide hacks split into work items) against the host
// reference.
#include <algorithm>
#include <cmath>
#include <random>
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

// Automatic sorting (default) and none with hack sizes 32, 16, 64 and 96 (not a power of two);
// sorting globally and within windows of two hacks.
std::vector<spk::HllOptions> hll_options() {
  std::vector<spk::HllOptions> all(1);
  spk::HllOptions o;
  o.sort = spk::HllSort::none;
  all.push_back(o);
  o.hack_size = 16;
  all.push_back(o);
  o.hack_size = 64;
  all.push_back(o);
  o.hack_size = 96;
  all.push_back(o);
  o = {};
  o.sort = spk::HllSort::global;
  all.push_back(o);
  o.sort = spk::HllSort::window;
  o.sort_window = 64;
  all.push_back(o);
  // these tests check values, not the limit (tested below): unsorted hacks of long rows pass
  for (auto& a : all) a.limit.max_csr_ratio = 1000;
  return all;
}

template <class Device, class S, class O>
void check_hll(const spk_test::HostCsr<S, O>& a, std::uint64_t seed) {
  for (const auto& options : hll_options()) {
    INFO("hack_size " << options.hack_size << ", sort "
                      << std::string(spk::to_string(options.sort)));
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
        if (options.sort == spk::HllSort::automatic)
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
  double sum = 0, log_sum = 0;
  for (double r : ratios) {
    sum += r;
    log_sum += std::log(r);
  }
  MESSAGE("hll (hack 32, automatic sort) memory / CSR memory over "
          << ratios.size() << " matrices: mean " << sum / double(ratios.size())
          << ", geometric mean " << std::exp(log_sum / double(ratios.size())));
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
  o.sort = spk::HllSort::none;
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
  CHECK(h.sort() == spk::HllSort::none);
  CHECK(h.split_width() == 12);  // max(64, 4 * 7) exceeds the widest hack: no work items
  CHECK(h.n_items() == 0);
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
  // automatic: unsorted, 320 slots for 90 entries (3.6 > 1.1), so it sorts within windows
  spk::HllOptions ao;
  ao.hack_size = 16;
  ao.sort_window = 16;
  const spk::HllMatrix<double, int, int, D> au(a, ao);
  CHECK(au.sort() == spk::HllSort::window);
  REQUIRE(au.permutation().extent(0) == 40);
  for (int p = 0; p < 40; ++p) CHECK(au.permutation()(p) == w.permutation()(p));
  CHECK(au.memory_bytes() == w.memory_bytes());
  // ...unless the threshold allows that padding
  ao.auto_sort_padding = 4;
  const spk::HllMatrix<double, int, int, D> au4(a, ao);
  CHECK(au4.sort() == spk::HllSort::none);
  CHECK(au4.permutation().extent(0) == 0);
  // a regular matrix (3 entries in every row) stays unsorted
  std::vector<int> reg_map{0}, reg_cols;
  std::vector<double> reg_vals;
  for (int i = 0; i < 100; ++i) {
    for (int k = 0; k < 3; ++k) {
      reg_cols.push_back((i + k * 30) % 100);
      reg_vals.push_back(1.0 + k);
    }
    reg_map.push_back(3 * (i + 1));
  }
  const spk::HllMatrix<double, int, int, D> r(
      spk::make_csr<double, int, int, D>(100, 100, reg_map, reg_cols, reg_vals));
  CHECK(r.sort() == spk::HllSort::none);
  CHECK(r.permutation().extent(0) == 0);
  CHECK(r.padding_ratio() == doctest::Approx(128.0 / 100.0));  // 4 hacks of 32 rows
  CHECK(std::string(spk::to_string(spk::HllSort::automatic)) == "automatic");
}

namespace {

// 300 x 5000: rows of 0-5 entries, and rows 3, 40, 41, 170 and 299 (the last, partial hack) of
// 3001, 4500, 1000, 2557 and 1999 entries; columns sorted and distinct within each row.
template <class S>
spk_test::HostCsr<S, int> csr_with_wide_rows(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int n = 300, m = 5000;
  std::vector<int> row_map{0}, cols;
  std::vector<S> vals;
  for (int i = 0; i < n; ++i) {
    const int len = i == 3     ? 3001
                    : i == 40  ? 4500
                    : i == 41  ? 1000
                    : i == 170 ? 2557
                    : i == 299 ? 1999
                               : int(rng() % 6);
    std::vector<int> row;
    for (int k = 0; k < len; ++k) row.push_back(int((std::int64_t(k) * 7 + i) % m));
    std::sort(row.begin(), row.end());
    for (int j : row) {
      cols.push_back(j);
      vals.push_back(spk_test::random_value<S>(rng));
    }
    row_map.push_back(int(cols.size()));
  }
  return spk::make_csr<S, int, int, spk::impl::HostDevice>(n, m, row_map, cols, vals);
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("hll spmv: wide hacks split into work items", Device, hll_wide) {
  spk_test::for_each_type<spk_test::all_scalars>([](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    const auto host = csr_with_wide_rows<S>(31);
    const auto a = spk::copy_to<Device>(host);
    // split widths that cut rows mid-item (the long rows' lengths are no multiples of them),
    // the automatic one, and one above every width (no items)
    for (int split : {0, 100, 64, 333, 5000}) {
      for (auto options : hll_options()) {
        options.split_width = split;
        INFO("split_width " << split << ", hack_size " << options.hack_size << ", sort "
                            << std::string(spk::to_string(options.sort)));
        const spk::HllMatrix<S, int, int, Device> f(a, options);
        if (split == 5000) {
          CHECK(f.n_items() == 0);
        } else if (split > 0) {
          CHECK(f.split_width() == split);
          CHECK(f.n_items() > 0);
        }
        spk_test::check_format<Device>(
            host, [&](const spk::CsrMatrix<S, int, int, Device>&) { return f; },
            hll_params<Device>(), 41, RoundTrip::exact);
      }
    }
  });
}
TEST_CASE_TEMPLATE_APPLY(hll_wide, spk_test::all_devices);

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
  o.sort = spk::HllSort::automatic;
  CHECK_THROWS_WITH_AS((spk::HllMatrix<double, int, int, D>(a, o)),
                       doctest::Contains("sort_window = 40"), std::invalid_argument);
  o = {};
  o.split_width = -1;
  CHECK_THROWS_WITH_AS((spk::HllMatrix<double, int, int, D>(a, o)),
                       doctest::Contains("split_width = -1"), std::invalid_argument);
  o = {};
  o.auto_sort_padding = 0.5;
  CHECK_THROWS_WITH_AS((spk::HllMatrix<double, int, int, D>(a, o)),
                       doctest::Contains("auto_sort_padding = 0.5"), std::invalid_argument);
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
