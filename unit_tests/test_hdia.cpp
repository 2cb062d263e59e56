// Tests of spk/formats/hdia.hpp: conversion from CSR (hack sizes, duplicates summed), to_csr()
// (the nonzeros), shape statistics, the padding limit, invalid options, and SpMV (N, T, H, every
// launch shape, hack sizes that are and are not powers of two, teams whose offsets fit the
// scratch memory and teams that read them from global memory) against the host reference.
#include <string>
#include <vector>

#include <spk/formats/hdia.hpp>

#include "format_checks.hpp"
#include "test_common.hpp"

namespace {

using spk_test::RoundTrip;

// The default; then small scratch capacities (3 offsets: teams with at most 3 diagonals use
// scratch, the others global memory; 1: nearly every team reads global memory), several hacks per
// team, fewer threads than rows per team (GPU), and 1 to 32 threads per row.
template <class Device>
std::vector<spk::HdiaSpmvParams> hdia_params() {
  const bool gpu = spk::impl::is_gpu_space<typename Device::execution_space>();
  std::vector<spk::HdiaSpmvParams> all{{}};
  spk::HdiaSpmvParams p;
  p.threads_per_row = 1;
  p.team_size = gpu ? 7 : 1;
  p.hacks_per_team = 2;
  p.scratch_diags = 3;
  all.push_back(p);
  p = {};
  p.threads_per_row = 2;
  p.scratch_diags = 1;
  all.push_back(p);
  p = {};
  p.threads_per_row = 4;
  p.hacks_per_team = 3;
  all.push_back(p);
  p = {};
  p.threads_per_row = 32;
  p.hacks_per_team = 1;
  p.team_size = gpu ? 8 : 1;
  all.push_back(p);
  for (int f : {4, 8}) {  // diagonals in flight, one thread per row, staged and global offsets
    p = {};
    p.threads_per_row = 1;
    p.in_flight = f;
    all.push_back(p);
    p.scratch_diags = 1;
    all.push_back(p);
  }
  return all;
}

spk::PaddingLimit loose() {
  spk::PaddingLimit l;
  l.max_csr_ratio = 1e4;
  return l;
}

template <class Device, class S, class O>
void check_hdia(const spk_test::HostCsr<S, O>& a, std::uint64_t seed,
                const spk::PaddingLimit& limit = loose()) {
  for (int hs : {32, 16, 64, 96}) {
    INFO("hack_size " << hs);
    spk::HdiaOptions options;
    options.hack_size = hs;
    options.limit = limit;
    spk_test::check_format<Device>(
        a,
        [&](const spk::CsrMatrix<S, O, int, Device>& d) {
          return spk::HdiaMatrix<S, O, int, Device>(d, options);
        },
        hdia_params<Device>(), seed, RoundTrip::nonzeros);
  }
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("hdia spmv matches the host reference", Device, hdia_spmv) {
  spk_test::for_each_type<spk_test::all_scalars>([](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    using spk::impl::HostDevice;
    // banded, default limit
    check_hdia<Device>(spk::generate::random_banded<S, int, int, HostDevice>(300, 10, 9, 3), 1,
                       spk::PaddingLimit{});
    // random (above the default limit: raised), with empty rows; int64 ordinals, non-square
    check_hdia<Device>(spk_test::random_csr<S, int>(300, 200, 6, 1), 3);
    check_hdia<Device>(spk_test::random_csr<S, long long>(150, 170, 3, 2), 5);
    // one row; one column; 0 nonzeros; 0 x 0
    check_hdia<Device>(spk_test::random_csr<S, int>(1, 90, 30, 3), 7);
    check_hdia<Device>(spk_test::random_csr<S, int>(90, 1, 1, 4), 9);
    check_hdia<Device>(spk_test::random_csr<S, int>(40, 30, 0, 5), 11);
    check_hdia<Device>(spk_test::random_csr<S, int>(0, 0, 0, 6), 13);
    // one dense row; duplicate entries from CSR and from COO
    check_hdia<Device>(spk_test::random_csr<S, int>(150, 170, 3, 7, 40), 15);
    check_hdia<Device>(spk_test::csr_with_duplicates<S, int>(8), 17);
    check_hdia<Device>(spk_test::csr_from_coo_with_duplicates<S, int>(9), 19);
  });
}
TEST_CASE_TEMPLATE_APPLY(hdia_spmv, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("hdia on generated matrices", Device, hdia_generated) {
  for (const auto& g : spk_test::generated_matrices<double>()) {
    INFO("matrix " << g.first);
    check_hdia<Device>(g.second, 21, spk::PaddingLimit{});
  }
}
TEST_CASE_TEMPLATE_APPLY(hdia_generated, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("hdia on the shared real matrices", Device, hdia_real) {
  spk_test::for_each_shared_matrix("hdia", [](const auto& host, const std::string&, bool complex) {
    using S = typename std::decay_t<decltype(host)>::value_type;
    const auto a = spk::copy_to<Device>(host);
    try {
      const spk::HdiaMatrix<S, int, int, Device> f(a);
      spk_test::check_round_trip(host, spk::to_host(f.to_csr()), RoundTrip::nonzeros);
      spk::HdiaSpmvParams small;
      small.threads_per_row = 2;
      small.scratch_diags = 5;
      const std::vector<spk::HdiaSpmvParams> launches{{}, small};
      spk_test::check_real_spmv<Device>(f, host, complex, launches);
      return true;
    } catch (const spk::PaddingLimitExceeded& e) {
      MESSAGE("hdia refuses by its padding limit: " << std::string(e.what()));
      return false;
    }
  });
}
TEST_CASE_TEMPLATE_APPLY(hdia_real, spk_test::all_devices);

// A tridiagonal matrix with one full row and one half-full row: the teams of those rows hold
// more diagonal offsets than the default scratch capacity (1024) and read them from global
// memory, every other team from scratch; then capacities that split the teams differently.
TEST_CASE_TEMPLATE_DEFINE("hdia spmv: teams beyond the scratch capacity", Device, hdia_fallback) {
  const bool gpu = spk::impl::is_gpu_space<typename Device::execution_space>();
  std::vector<int> row_map{0}, cols;
  std::vector<double> vals;
  for (int i = 0; i < 3000; ++i) {
    for (int j = 0; j < 3000; ++j) {
      if (i == 1234 || (i == 2900 && j % 2 == 0) || (j >= i - 1 && j <= i + 1)) {
        cols.push_back(j);
        vals.push_back(1.0 + 0.001 * j - 0.002 * i);
      }
    }
    row_map.push_back(int(cols.size()));
  }
  const auto host = spk::make_csr<double, int, int, spk::impl::HostDevice>(3000, 3000, row_map,
                                                                         cols, vals);
  std::vector<spk::HdiaSpmvParams> params{{}};
  spk::HdiaSpmvParams p;
  p.scratch_diags = 12;  // hacks of 32: 4 tridiagonal hacks per team fit (GPU), 8 do not (CPU)
  params.push_back(p);
  p.threads_per_row = 4;
  p.team_size = gpu ? 16 : 1;
  params.push_back(p);
  p = {};
  p.scratch_diags = 1600;  // the half-full row's team fits, the full row's does not
  p.hacks_per_team = 1;
  params.push_back(p);
  for (int hs : {32, 96}) {
    INFO("hack_size " << hs);
    spk::HdiaOptions options;
    options.hack_size = hs;
    options.limit = loose();
    const auto a = spk::copy_to<Device>(host);
    const spk::HdiaMatrix<double, int, int, Device> f(a, options);
    REQUIRE(f.max_hack_diags() >= 3000);
    CHECK(spk::resolve_params(f, spk::Mode::N).scratch_diags == 1024);
    spk_test::check_format<Device>(
        host,
        [&](const spk::CsrMatrix<double, int, int, Device>& d) {
          return spk::HdiaMatrix<double, int, int, Device>(d, options);
        },
        params, 31, RoundTrip::nonzeros);
  }
}
TEST_CASE_TEMPLATE_APPLY(hdia_fallback, spk_test::all_devices);

TEST_CASE("hdia: layout and shape statistics") {
  using D = spk::impl::HostDevice;
  // 40 x 40 tridiagonal (2 on the diagonal, -1 off it), plus (5, 39) = 7 and (20, 20) twice
  std::vector<int> row_map{0}, cols;
  std::vector<double> vals;
  for (int i = 0; i < 40; ++i) {
    for (int j = i - 1; j <= i + 1; ++j) {
      if (j < 0 || j >= 40) continue;
      cols.push_back(j);
      vals.push_back(j == i ? 2.0 : -1.0);
      if (i == 20 && j == 20) {
        cols.push_back(20);
        vals.push_back(0.5);
      }
    }
    if (i == 5) {
      cols.push_back(39);
      vals.push_back(7.0);
    }
    row_map.push_back(int(cols.size()));
  }
  const auto a = spk::make_csr<double, int, int, D>(40, 40, row_map, cols, vals);
  spk::HdiaOptions o;
  o.hack_size = 16;
  const spk::HdiaMatrix<double, int, int, D> h(a, o);
  CHECK(h.hack_size() == 16);
  REQUIRE(h.n_hacks() == 3);
  // hack 0: -1, 0, 1, 34; hack 1: -1, 0, 1; hack 2 (rows 32..39): -1, 0, 1
  REQUIRE(h.n_diags() == 10);
  CHECK(h.hack_offsets()(0) == 0);
  CHECK(h.hack_offsets()(1) == 4);
  CHECK(h.hack_offsets()(2) == 7);
  CHECK(h.hack_offsets()(3) == 10);
  CHECK(h.offsets()(0) == -1);
  CHECK(h.offsets()(3) == 34);
  CHECK(h.offsets()(4) == -1);
  CHECK(h.max_hack_diags() == 4);
  CHECK(h.mean_hack_diags() == doctest::Approx(10.0 / 3));
  // row 5 on diagonal 34 (d = 3): values(3 * 16 + 5); row 20 on its diagonal (d = 5)
  CHECK(h.values()(3 * 16 + 5) == 7.0);
  CHECK(h.values()(5 * 16 + 4) == 2.5);
  CHECK(h.values()(0 * 16 + 0) == 0.0);  // (0, -1): outside the matrix
  CHECK(h.nnz() == a.nnz());
  CHECK(h.padding_ratio() == doctest::Approx(160.0 / double(a.nnz())));
  CHECK(h.memory_bytes() == 160 * 8 + 10 * 4 + 4 * 4);
  CHECK(std::string(spk::HdiaMatrix<double>::name) == "hdia");
  const auto c = spk::to_host(h.to_csr());
  CHECK(c.nnz() == a.nnz() - 1);  // (20, 20) summed
  // the stencils: every hack holds the stencil's diagonals (or fewer at the boundary)
  const spk::HdiaMatrix<double, int, int, D> p(
      spk::generate::pde_convdiff3d<double, int, int, D>(10));
  CHECK(p.max_hack_diags() == 7);
  CHECK(p.n_hacks() == (1000 + 31) / 32);
}

TEST_CASE("hdia: invalid options and the padding limit") {
  using D = spk::impl::HostDevice;
  const auto a = spk::generate::poisson2d_5pt<double, int, int, D>(20);
  for (int bad : {0, -16, 8, 33, 40}) {
    spk::HdiaOptions o;
    o.hack_size = bad;
    CHECK_THROWS_WITH_AS((spk::HdiaMatrix<double, int, int, D>(a, o)),
                         doctest::Contains(("hack_size = " + std::to_string(bad) +
                                            " must be 16 or a positive multiple of 32")
                                               .c_str()),
                         std::invalid_argument);
  }
  // arrow.mtx: hack 0 holds all 46500 diagonals of the first row, the others the diagonals of
  // their column-0 entries; refused under a limit of 4 x CSR, named by its shape
  const auto arrow = spk::to_host(spk::coo_to_csr(spk::io::read_matrix_market_coo<double, int, int>(
      spk_test::data_dir() + "/matrices/arrow.mtx")));
  spk::HdiaOptions strict;
  strict.limit.max_csr_ratio = 4;
  CHECK_THROWS_WITH_AS((spk::HdiaMatrix<double, int, int, D>(arrow, strict)),
                       doctest::Contains("spk::HdiaMatrix: padded storage (1454 hacks of 32 rows"),
                       spk::PaddingLimitExceeded);
  // tridiagonal with one full row: only the full row's hack holds its 3000 diagonals, so the
  // default limit accepts it (about 5 x CSR); a limit of 2 x CSR refuses it
  std::vector<int> row_map{0}, cols;
  std::vector<double> vals;
  for (int i = 0; i < 3000; ++i) {
    for (int j = 0; j < 3000; ++j) {
      if (i == 1234 || (j >= i - 1 && j <= i + 1)) {
        cols.push_back(j);
        vals.push_back(1.0 + j);
      }
    }
    row_map.push_back(int(cols.size()));
  }
  const auto full = spk::make_csr<double, int, int, D>(3000, 3000, row_map, cols, vals);
  const spk::HdiaMatrix<double, int, int, D> hf(full);
  CHECK(hf.max_hack_diags() >= 3000);
  CHECK(double(hf.memory_bytes()) < 8.0 * double(full.memory_bytes()));
  strict.limit.max_csr_ratio = 2;
  CHECK_THROWS_WITH_AS((spk::HdiaMatrix<double, int, int, D>(full, strict)),
                       doctest::Contains("above the limit"), spk::PaddingLimitExceeded);
  // random columns: every entry costs a whole diagonal of its hack; with hacks of 64 rows
  // that is 512 bytes per entry, far above the default 20 x CSR
  const auto scattered = spk_test::random_csr<double, int>(3000, 3000, 12, 4);
  spk::HdiaOptions wide;
  wide.hack_size = 64;
  CHECK_THROWS_AS((spk::HdiaMatrix<double, int, int, D>(scattered, wide)),
                  spk::PaddingLimitExceeded);
}

TEST_CASE("hdia spmv: wrong sizes and parameters throw") {
  using D = spk::impl::HostDevice;
  const spk::HdiaMatrix<double, int, int, D> a(spk_test::random_csr<double, int>(5, 4, 2, 1));
  Kokkos::View<double*, Kokkos::HostSpace> x("x", 5), y("y", 5);
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, a, x, 0.0, y),
                       doctest::Contains("x has 5 entries, op(A) has 4 columns"),
                       std::invalid_argument);
  Kokkos::View<double*, Kokkos::HostSpace> x4("x", 4);
  spk::HdiaSpmvParams p;
  p.scratch_diags = -2;
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, a, x4, 0.0, y, p),
                       doctest::Contains("scratch_diags = -2"), std::invalid_argument);
  p = {};
  p.hacks_per_team = (1 << 20) + 1;
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, a, x4, 0.0, y, p),
                       doctest::Contains("hacks_per_team = 1048577"), std::invalid_argument);
  p = {};
  p.in_flight = 6;
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, a, x4, 0.0, y, p),
                       doctest::Contains("in_flight = 6 must be 0 (choose), 4 or 8"),
                       std::invalid_argument);
  CHECK(spk::resolve_params(a, spk::Mode::N).in_flight == 4);  // CPU backend
  // hacks of 32 with 7 diagonals: chunks of 8 on GPUs (named), four in flight on CPUs
  CHECK(spk::describe(spk::impl::resolve_hdia_launch({}, 32, 7, 7.0, true)) ==
        "tpr1-t128-h4-s28-f8");
  CHECK(spk::describe(spk::impl::resolve_hdia_launch({}, 32, 7, 7.0, false)) == "tpr1-t1-h8-s56");
  p = {};
  p.scratch_diags = 1 << 28;  // 1 GiB of offsets per team
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, a, x4, 0.0, y, p),
                       doctest::Contains("bytes of team scratch"), std::invalid_argument);
}
