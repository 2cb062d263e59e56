// Tests of spk/formats/balanced_coo.hpp: conversion from CSR (empty rows get a filler entry),
// the exact round trip to_csr(), and SpMV (N with direct and atomic accumulation, T / H by
// atomics; every B x K shape, including windows small enough that rows cross many of them, and
// several windows per warp with the next one loaded ahead) against the host reference.
#include <string>
#include <vector>

#include <spk/formats/balanced_coo.hpp>

#include "format_checks.hpp"
#include "test_common.hpp"

namespace {

using spk_test::RoundTrip;

std::vector<spk::BalancedCooSpmvParams> balanced_params() {
  std::vector<spk::BalancedCooSpmvParams> all{{}};
  for (int k : {1, 2, 4, 8}) {
    for (int b : {32, 64}) {
      spk::BalancedCooSpmvParams p;
      p.threads_per_team = b;
      p.entries_per_thread = k;
      all.push_back(p);
    }
  }
  for (auto acc : {spk::CooAccumulate::atomic, spk::CooAccumulate::deterministic}) {
    spk::BalancedCooSpmvParams p;
    p.accumulate = acc;
    all.push_back(p);
    p.threads_per_team = 32;
    p.entries_per_thread = 1;
    all.push_back(p);
  }
  // several windows per warp, the next one loaded ahead (GPUs; one window per thread on the
  // CPU): 2, 3 and 7 (the last warp's share cut short), with every accumulation mode
  for (int w : {2, 3, 7})
    for (int k : {1, 4, 8}) all.push_back({32, k, spk::CooAccumulate::direct, w});
  all.push_back({64, 2, spk::CooAccumulate::atomic, 3});
  all.push_back({32, 8, spk::CooAccumulate::deterministic, 4});
  all.push_back({256, 4, spk::CooAccumulate::deterministic, 2});
  return all;
}

template <class Device, class S, class O>
void check_balanced(const spk_test::HostCsr<S, O>& a, std::uint64_t seed) {
  spk_test::check_format<Device>(
      a,
      [](const spk::CsrMatrix<S, O, int, Device>& d) {
        return spk::BalancedCooMatrix<S, O, int, Device>(d);
      },
      balanced_params(), seed, RoundTrip::exact);
}

/// rows of lengths `lens` (column j of row i at (i * 7 + j) % ncols), random values.
template <class S, class O = int>
spk_test::HostCsr<S, O> rows_of_lengths(const std::vector<int>& lens, int ncols,
                                        std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int> row_map(1, 0);
  std::vector<O> cols;
  std::vector<S> vals;
  for (std::size_t i = 0; i < lens.size(); ++i) {
    for (int j = 0; j < lens[i]; ++j) {
      cols.push_back(O((i * 7 + std::size_t(j)) % std::size_t(ncols)));
      vals.push_back(spk_test::random_value<S>(rng));
    }
    row_map.push_back(int(cols.size()));
  }
  return spk::make_csr<S, O, int, spk::impl::HostDevice>(O(lens.size()), O(ncols), row_map, cols,
                                                         vals);
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("balanced coo spmv matches the host reference", Device, bcoo_spmv) {
  spk_test::for_each_type<spk_test::all_scalars>([](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    // random, larger than a warp, with empty rows; int64 ordinals, non-square
    check_balanced<Device>(spk_test::random_csr<S, int>(300, 200, 6, 1), 3);
    check_balanced<Device>(spk_test::random_csr<S, long long>(150, 170, 3, 2), 5);
    // one row (it crosses every window); one column; 0 nonzeros; 0 x 0
    check_balanced<Device>(spk_test::random_csr<S, int>(1, 900, 700, 3), 7);
    check_balanced<Device>(spk_test::random_csr<S, int>(90, 1, 1, 4), 9);
    check_balanced<Device>(spk_test::random_csr<S, int>(40, 30, 0, 5), 11);
    check_balanced<Device>(spk_test::random_csr<S, int>(0, 0, 0, 6), 13);
    check_balanced<Device>(spk_test::random_csr<S, int>(0, 5, 0, 6), 13);
    check_balanced<Device>(spk_test::random_csr<S, int>(7, 0, 0, 6), 13);
    // one dense row among short ones
    check_balanced<Device>(spk_test::random_csr<S, int>(150, 170, 3, 7, 40), 15);
    // duplicate entries, from CSR and from COO
    check_balanced<Device>(spk_test::csr_with_duplicates<S, int>(8), 17);
    check_balanced<Device>(spk_test::csr_from_coo_with_duplicates<S, int>(9), 19);
  });
}
TEST_CASE_TEMPLATE_APPLY(bcoo_spmv, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("balanced coo: rows at and across window boundaries", Device,
                          bcoo_boundaries) {
  using S = double;
  // leading, trailing and consecutive empty rows; rows ending exactly at multiples of 8, 32,
  // 64 and 256 entries; a row of 1100 entries spanning windows of every shape; single entries
  std::vector<int> lens{0, 0, 8, 24, 32, 0, 64, 1, 1, 1, 0, 0, 0, 31, 33, 1100, 1, 7, 9,
                        256, 0, 128, 5, 3, 2, 1, 0, 0};
  for (int i = 0; i < 60; ++i) lens.push_back((i * 13) % 11);
  lens.push_back(0);
  check_balanced<Device>(rows_of_lengths<S>(lens, 97, 1), 21);
  check_balanced<Device>(rows_of_lengths<Kokkos::complex<double>>(lens, 50, 2), 23);
  // every row of one entry; every row empty but the last
  check_balanced<Device>(rows_of_lengths<S>(std::vector<int>(700, 1), 700, 3), 25);
  std::vector<int> last(500, 0);
  last.back() = 3;
  check_balanced<Device>(rows_of_lengths<S>(last, 4, 4), 27);
}
TEST_CASE_TEMPLATE_APPLY(bcoo_boundaries, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("balanced coo: rows finished by the window where they start", Device,
                          bcoo_finish) {
  // GPUs finish a row that crosses into the next window in the window where it starts when no
  // row is longer than a window of 32 K entries (BalancedCooSpmvParams::finish_rows); CPUs run
  // the crossing-row paths. Rows of a whole window, one less, one, empty, K + 1 and random
  // lengths up to a window, so rows cross at every offset.
  for (int k : {1, 2, 4, 8}) {
    CAPTURE(k);
    const int window = 32 * k;
    std::mt19937_64 rng{std::uint64_t(k)};
    std::vector<int> lens{window, 0, window - 1, 1, k + 1, 0, 0, window, window};
    for (int i = 0; i < 120; ++i) lens.push_back(int(rng() % std::uint64_t(window + 1)));
    lens.push_back(window);
    const auto host = rows_of_lengths<double>(lens, 97, std::uint64_t(30 + k));
    std::vector<spk::BalancedCooSpmvParams> params;
    for (auto acc : {spk::CooAccumulate::direct, spk::CooAccumulate::deterministic})
      for (int w : {1, 2, 5})
        for (bool finish : {true, false}) {
          spk::BalancedCooSpmvParams p{32, k, acc, w};
          p.finish_rows = finish;
          params.push_back(p);
        }
    params.push_back({128, k, spk::CooAccumulate::direct, 1});
    spk_test::check_format<Device>(
        host,
        [](const spk::CsrMatrix<double, int, int, Device>& d) {
          return spk::BalancedCooMatrix<double, int, int, Device>(d);
        },
        params, 41, RoundTrip::exact, {spk::Mode::N});
    // complex entries through the same scan
    const auto hc = rows_of_lengths<Kokkos::complex<double>>(lens, 50, std::uint64_t(40 + k));
    spk_test::check_format<Device>(
        hc,
        [](const spk::CsrMatrix<Kokkos::complex<double>, int, int, Device>& d) {
          return spk::BalancedCooMatrix<Kokkos::complex<double>, int, int, Device>(d);
        },
        std::vector<spk::BalancedCooSpmvParams>{{32, k, spk::CooAccumulate::direct, 1}}, 43,
        RoundTrip::exact, {spk::Mode::N});
    // no atomics: the same bits on every run (GPUs finish the rows under direct accumulation;
    // CPU backends add crossing rows by atomics there, so only deterministic is checked)
    const bool gpu = spk::impl::is_gpu_space<typename Device::execution_space>();
    const spk::BalancedCooMatrix<double, int, int, Device> a(spk::copy_to<Device>(host));
    CHECK(a.longest_row() == window);
    const auto x = spk_test::to_view<Device>(spk_test::random_vector<double>(97, 5));
    for (auto acc : {spk::CooAccumulate::direct, spk::CooAccumulate::deterministic}) {
      if (acc == spk::CooAccumulate::direct && !gpu) continue;
      const spk::BalancedCooSpmvParams p{32, k, acc, 1};
      CHECK(spk::impl::balanced_coo_finishes(a, spk::Mode::N, p, k) == gpu);
      const auto y0 = spk_test::to_view<Device>(spk_test::random_vector<double>(lens.size(), 6));
      const auto y1 = spk_test::to_view<Device>(spk_test::random_vector<double>(lens.size(), 6));
      spk::spmv(spk::Mode::N, 1.5, a, x, 0.5, y0, p);
      spk::spmv(spk::Mode::N, 1.5, a, x, 0.5, y1, p);
      CHECK(spk_test::to_vector(y0) == spk_test::to_vector(y1));
    }
    // short longest rows (2, 3, 5 or 17 runs of the next window scanned, not a power of two),
    // int64 ordinals; and the last row across the last window boundary, its padding past the
    // runs the window scans
    for (int longest : {5, 17, 33, 3 * k + 1}) {
      if (longest > window) continue;
      CAPTURE(longest);
      std::vector<int> short_lens;
      for (int i = 0; i < 300; ++i) short_lens.push_back(int(rng() % std::uint64_t(longest + 1)));
      short_lens[7] = longest;
      std::vector<int> ends(std::size_t(window - 1), 1);  // a window less one, then a row of 5
      ends.push_back(5);
      for (const auto* l : {&short_lens, &ends}) {
        const auto h = rows_of_lengths<double>(*l, 61, std::uint64_t(70 + longest));
        const auto h64 = rows_of_lengths<double, long long>(*l, 61, std::uint64_t(70 + longest));
        const std::vector<spk::BalancedCooSpmvParams> ps{{32, k, spk::CooAccumulate::direct, 1},
                                                         {64, k, spk::CooAccumulate::direct, 2}};
        spk_test::check_format<Device>(
            h,
            [](const spk::CsrMatrix<double, int, int, Device>& d) {
              return spk::BalancedCooMatrix<double, int, int, Device>(d);
            },
            ps, 61, RoundTrip::exact, {spk::Mode::N});
        spk_test::check_format<Device>(
            h64,
            [](const spk::CsrMatrix<double, long long, int, Device>& d) {
              return spk::BalancedCooMatrix<double, long long, int, Device>(d);
            },
            ps, 67, RoundTrip::exact, {spk::Mode::N});
      }
    }
  }
  // one row longer than a window among short ones: every launch takes the crossing-row path
  std::vector<int> lens(200, 3);
  lens[77] = 257;
  check_balanced<Device>(rows_of_lengths<double>(lens, 300, 9), 47);
  // rows from empty to three windows long at K = 1, 2, 4, 8: short and long crossing rows mixed
  // (the crossing-row paths, finishing on or off)
  for (int k : {1, 2, 4, 8}) {
    CAPTURE(k);
    const int window = 32 * k;
    std::mt19937_64 rng{std::uint64_t(50 + k)};
    std::vector<int> mixed{3 * window, 1, 2 * window + 1, 0, window + 2, 5};
    for (int i = 0; i < 150; ++i)
      mixed.push_back(i % 10 == 0 ? int(rng() % std::uint64_t(3 * window))
                                  : int(rng() % std::uint64_t(2 * k + 2)));
    std::vector<spk::BalancedCooSpmvParams> params;
    for (int w : {1, 2, 5})
      for (bool finish : {true, false}) {
        spk::BalancedCooSpmvParams p{32, k, spk::CooAccumulate::direct, w};
        p.finish_rows = finish;
        params.push_back(p);
      }
    params.push_back({32, k, spk::CooAccumulate::deterministic, 1});
    spk_test::check_format<Device>(
        rows_of_lengths<double>(mixed, 130, std::uint64_t(60 + k)),
        [](const spk::CsrMatrix<double, int, int, Device>& d) {
          return spk::BalancedCooMatrix<double, int, int, Device>(d);
        },
        params, 53, RoundTrip::exact, {spk::Mode::N});
  }
}
TEST_CASE_TEMPLATE_APPLY(bcoo_finish, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("balanced coo: the default launch", Device, bcoo_default_launch) {
  using exec = typename Device::execution_space;
  const bool gpu = spk::impl::is_gpu_space<exec>();
  const auto make = [](int longest) {
    std::vector<int> lens(300, 5);
    lens[10] = longest;
    return spk::BalancedCooMatrix<double, int, int, Device>(
        spk::copy_to<Device>(rows_of_lengths<double>(lens, 400, 3)));
  };
  const auto short_rows = make(128), long_rows = make(129);
  CHECK(short_rows.longest_row() == 128);
  const auto n = spk::resolve_params(short_rows, spk::Mode::N);
  CHECK(n.threads_per_team == (gpu ? 128 : 256));
  CHECK(n.windows_per_warp == 1);
  // GPUs: K = 8 (windows of 256 entries), CPU backends K = 4
  CHECK(n.entries_per_thread == (gpu ? 8 : 4));
  CHECK(spk::resolve_params(long_rows, spk::Mode::N).entries_per_thread == (gpu ? 8 : 4));
  CHECK(spk::resolve_params(short_rows, spk::Mode::T).entries_per_thread == (gpu ? 8 : 4));
  spk::BalancedCooSpmvParams p;
  p.finish_rows = false;
  CHECK(spk::resolve_params(short_rows, spk::Mode::N, p).entries_per_thread == (gpu ? 8 : 4));
  CHECK(spk::describe(spk::resolve_params(short_rows, spk::Mode::N, p)).find("-crossing") !=
        std::string::npos);
  p = {};
  p.accumulate = spk::CooAccumulate::atomic;
  CHECK(spk::resolve_params(short_rows, spk::Mode::N, p).entries_per_thread == (gpu ? 8 : 4));
  CHECK(spk::impl::balanced_coo_finishes(short_rows, spk::Mode::N, n, 4) == gpu);
  CHECK_FALSE(spk::impl::balanced_coo_finishes(long_rows, spk::Mode::N, n, 4));
  CHECK(spk::impl::balanced_coo_finishes(long_rows, spk::Mode::N, n, 8) == gpu);
}
TEST_CASE_TEMPLATE_APPLY(bcoo_default_launch, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("balanced coo on generated matrices", Device, bcoo_generated) {
  for (const auto& g : spk_test::generated_matrices<double>()) {
    INFO("matrix " << g.first);
    check_balanced<Device>(g.second, 29);
  }
}
TEST_CASE_TEMPLATE_APPLY(bcoo_generated, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("balanced coo on the shared real matrices", Device, bcoo_real) {
  spk_test::for_each_shared_matrix(
      "balanced-coo", [](const auto& host, const std::string&, bool complex) {
        using S = typename std::decay_t<decltype(host)>::value_type;
        const auto a = spk::copy_to<Device>(host);
        const spk::BalancedCooMatrix<S, int, int, Device> f(a);
        spk_test::check_round_trip(host, spk::to_host(f.to_csr()), RoundTrip::exact);
        spk::BalancedCooSpmvParams small;
        small.threads_per_team = 32;
        small.entries_per_thread = 2;
        spk::BalancedCooSpmvParams atomic, det;
        atomic.accumulate = spk::CooAccumulate::atomic;
        det.accumulate = spk::CooAccumulate::deterministic;
        det.threads_per_team = 32;
        const std::vector<spk::BalancedCooSpmvParams> launches{{}, small, atomic, det};
        spk_test::check_real_spmv<Device>(f, host, complex, launches);
        return true;
      });
}
TEST_CASE_TEMPLATE_APPLY(bcoo_real, spk_test::all_devices);

TEST_CASE("balanced coo: layout, fillers and memory") {
  using D = spk::impl::HostDevice;
  // 4 x 3: row 1 empty, row 2 has a duplicate, row 3 an explicit zero
  const auto a = spk::make_csr<double, int, int, D>(4, 3, {0, 2, 2, 5, 6}, {2, 0, 1, 1, 0, 2},
                                                    {1, 2, 3, 4, 5, 0});
  const spk::BalancedCooMatrix<double, int, int, D> b(a);
  CHECK(b.nnz() == 6);
  CHECK(b.stored_entries() == 7);
  REQUIRE(b.rows().extent(0) == 8);  // padded to a multiple of 8
  const std::vector<int> rows{0, 0, 1, 2, 2, 2, 3, 3}, cols{2, 0, 0, 1, 1, 0, 2, 0};
  const std::vector<double> vals{1, 2, 0, 3, 4, 5, 0, 0};
  for (int k = 0; k < 8; ++k) {
    INFO("entry " << k);
    CHECK(b.rows()(k) == rows[std::size_t(k)]);
    CHECK(b.cols()(k) == cols[std::size_t(k)]);
    CHECK(b.values()(k) == vals[std::size_t(k)]);
  }
  REQUIRE(b.empty_rows().extent(0) == 1);
  CHECK(b.empty_rows()(0) == 1);
  CHECK(b.longest_row() == 3);
  CHECK(b.memory_bytes() == 8 * (4 + 4 + 8) + 4);
  CHECK(std::string(spk::BalancedCooMatrix<double>::name) == "balanced-coo");
  spk_test::check_round_trip(a, b.to_csr(), RoundTrip::exact);
  const spk::BalancedCooMatrix<double, int, int, D> z(spk_test::random_csr<double, int>(0, 0, 0, 1));
  CHECK(z.memory_bytes() == 0);
  CHECK(z.longest_row() == 0);
  CHECK(z.to_csr().nrows() == 0);
}

TEST_CASE("balanced coo spmv: wrong sizes and parameters throw") {
  using D = spk::impl::HostDevice;
  const spk::BalancedCooMatrix<double, int, int, D> a(spk_test::random_csr<double, int>(5, 4, 2, 1));
  Kokkos::View<double*, Kokkos::HostSpace> x("x", 5), y("y", 5);
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, a, x, 0.0, y),
                       doctest::Contains("x has 5 entries, op(A) has 4 columns"),
                       std::invalid_argument);
  Kokkos::View<double*, Kokkos::HostSpace> x4("x", 4);
  spk::BalancedCooSpmvParams p;
  p.entries_per_thread = 3;
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, a, x4, 0.0, y, p),
                       doctest::Contains("entries per thread K = 3"), std::invalid_argument);
  p.entries_per_thread = 4;
  p.threads_per_team = 48;
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, a, x4, 0.0, y, p),
                       doctest::Contains("threads per team B = 48"), std::invalid_argument);
  p.threads_per_team = 64;
  p.windows_per_warp = -1;
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, a, x4, 0.0, y, p),
                       doctest::Contains("windows_per_warp = -1"), std::invalid_argument);
  p.windows_per_warp = 3;
  CHECK(spk::describe(p) == "b64-k4-direct-w3");
  // CPU backends take one chunk per thread (on GPUs, op = T / H too)
  CHECK(spk::resolve_params(a, spk::Mode::N, p).windows_per_warp == 1);
  CHECK(spk::resolve_params(a, spk::Mode::T, p).windows_per_warp == 1);
  // one window per warp keeps the names of earlier runs
  p.windows_per_warp = 1;
  CHECK(spk::describe(p) == "b64-k4-direct");
  p.windows_per_warp = 0;
  CHECK(spk::describe(p) == "b64-k4-direct");
}
