// Tests of spk/formats/dia.hpp: conversion from CSR (duplicates summed), to_csr() (the
// nonzeros), shape statistics, the padding limit, and SpMV (N, and T / H by negated offsets,
// every launch shape) against the host reference.
#include <string>
#include <vector>

#include <spk/formats/dia.hpp>

#include "format_checks.hpp"
#include "test_common.hpp"

namespace {

using spk_test::RoundTrip;

template <class Device>
std::vector<spk::DiaSpmvParams> dia_params() {
  const bool gpu = spk::impl::is_gpu_space<typename Device::execution_space>();
  std::vector<spk::DiaSpmvParams> all{{}};
  for (int tpr : {1, 2, 4, 32}) {
    spk::DiaSpmvParams p;
    p.threads_per_row = tpr;
    p.team_size = gpu ? 3 : 1;
    p.rows_per_team = 5;
    all.push_back(p);
  }
  return all;
}

// Random patterns have a diagonal for almost every entry: far above the default limit, so the
// random cases raise it (the limit itself is tested below).
spk::DiaOptions loose() {
  spk::DiaOptions o;
  o.limit.max_csr_ratio = 1e4;
  return o;
}

template <class Device, class S, class O>
void check_dia(const spk_test::HostCsr<S, O>& a, std::uint64_t seed,
               const spk::DiaOptions& options = loose()) {
  spk_test::check_format<Device>(
      a,
      [&](const spk::CsrMatrix<S, O, int, Device>& d) {
        return spk::DiaMatrix<S, O, int, Device>(d, options);
      },
      dia_params<Device>(), seed, RoundTrip::nonzeros);
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("dia spmv matches the host reference", Device, dia_spmv) {
  spk_test::for_each_type<spk_test::all_scalars>([](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    using spk::impl::HostDevice;
    // banded (the DIA case), default limit; 300 rows, 9 random diagonals of a band of 21
    check_dia<Device>(spk::generate::random_banded<S, int, int, HostDevice>(300, 10, 9, 3), 1,
                      spk::DiaOptions{});
    // random, larger than a warp, with empty rows; int64 ordinals, non-square
    check_dia<Device>(spk_test::random_csr<S, int>(300, 200, 6, 1), 3);
    check_dia<Device>(spk_test::random_csr<S, long long>(150, 170, 3, 2), 5);
    // one row; one column; 0 nonzeros; 0 x 0
    check_dia<Device>(spk_test::random_csr<S, int>(1, 90, 30, 3), 7);
    check_dia<Device>(spk_test::random_csr<S, int>(90, 1, 1, 4), 9);
    check_dia<Device>(spk_test::random_csr<S, int>(40, 30, 0, 5), 11);
    check_dia<Device>(spk_test::random_csr<S, int>(0, 0, 0, 6), 13);
    // one dense row
    check_dia<Device>(spk_test::random_csr<S, int>(150, 170, 3, 7, 40), 15);
    // duplicate entries (summed into one diagonal slot), from CSR and from COO
    check_dia<Device>(spk_test::csr_with_duplicates<S, int>(8), 17);
    check_dia<Device>(spk_test::csr_from_coo_with_duplicates<S, int>(9), 19);
  });
}
TEST_CASE_TEMPLATE_APPLY(dia_spmv, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("dia on generated matrices", Device, dia_generated) {
  for (const auto& g : spk_test::generated_matrices<double>()) {
    INFO("matrix " << g.first);
    check_dia<Device>(g.second, 21, spk::DiaOptions{});
  }
}
TEST_CASE_TEMPLATE_APPLY(dia_generated, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("dia on the shared real matrices", Device, dia_real) {
  spk_test::for_each_shared_matrix("dia", [](const auto& host, const std::string&, bool complex) {
    using S = typename std::decay_t<decltype(host)>::value_type;
    const auto a = spk::copy_to<Device>(host);
    try {
      const spk::DiaMatrix<S, int, int, Device> f(a);
      spk_test::check_round_trip(host, spk::to_host(f.to_csr()), RoundTrip::nonzeros);
      spk::DiaSpmvParams two;
      two.threads_per_row = 2;
      const std::vector<spk::DiaSpmvParams> launches{{}, two};
      spk_test::check_real_spmv<Device>(f, host, complex, launches);
      return true;
    } catch (const spk::PaddingLimitExceeded& e) {
      MESSAGE("dia refuses by its padding limit: " << std::string(e.what()));
      return false;
    }
  });
}
TEST_CASE_TEMPLATE_APPLY(dia_real, spk_test::all_devices);

TEST_CASE("dia: layout, duplicates and shape statistics") {
  using D = spk::impl::HostDevice;
  // 3 x 4: diagonals -1, 0, 2; (1, 1) stored twice (2 + 3), (2, 0) an explicit zero
  const auto a = spk::make_csr<double, int, int, D>(3, 4, {0, 2, 5, 7}, {0, 2, 1, 0, 1, 2, 0},
                                                    {1, 2, 2, 4, 3, 6, 0});
  const spk::DiaMatrix<double, int, int, D> d(a);
  REQUIRE(d.n_diags() == 4);  // -2 (the explicit zero), -1, 0, 2
  CHECK(d.offsets()(0) == -2);
  CHECK(d.offsets()(1) == -1);
  CHECK(d.offsets()(2) == 0);
  CHECK(d.offsets()(3) == 2);
  CHECK(d.pitch() == 16);  // 128 bytes of doubles
  CHECK(d.values()(1, 2) == 5.0);
  CHECK(d.values()(1, 1) == 4.0);
  CHECK(d.values()(0, 3) == 2.0);
  CHECK(d.values()(2, 3) == 0.0);  // column 4: outside the matrix, padding
  CHECK(d.nnz() == 7);
  CHECK(d.padding_ratio() == doctest::Approx(16.0 * 4 / 7));
  CHECK(d.memory_bytes() == 16 * 4 * 8 + 4 * 4);
  CHECK(std::string(spk::DiaMatrix<double>::name) == "dia");
  // to_csr: the nonzeros sorted by column, duplicates summed, the explicit zero dropped
  const auto c = spk::to_host(d.to_csr());
  REQUIRE(c.nnz() == 5);
  CHECK(c.row_map()(1) == 2);
  CHECK(c.row_map()(2) == 4);
  CHECK(c.col_idx()(2) == 0);
  CHECK(c.values()(3) == 5.0);
  CHECK(c.col_idx()(4) == 2);
  // an empty and a 0 x 0 matrix
  const spk::DiaMatrix<double, int, int, D> e(spk_test::random_csr<double, int>(10, 7, 0, 1));
  CHECK(e.n_diags() == 0);
  CHECK(e.memory_bytes() == 0);
  const spk::DiaMatrix<double, int, int, D> z(spk_test::random_csr<double, int>(0, 0, 0, 1));
  CHECK(z.n_diags() == 0);
  // the generated stencils have their stencil's diagonals
  CHECK(spk::DiaMatrix<double, int, int, D>(spk::generate::pde_convdiff3d<double, int, int, D>(10))
            .n_diags() == 7);
  CHECK(spk::DiaMatrix<double, int, int, D>(spk::generate::poisson3d_27pt<double, int, int, D>(6))
            .n_diags() == 27);
}

TEST_CASE("dia: the padding limit refuses arrow.mtx and a matrix with one full row") {
  using D = spk::impl::HostDevice;
  const auto arrow = spk::to_host(spk::coo_to_csr(spk::io::read_matrix_market_coo<double, int, int>(
      spk_test::data_dir() + "/matrices/arrow.mtx")));
  CHECK_THROWS_WITH_AS(
      (spk::DiaMatrix<double, int, int, D>(arrow)),
      doctest::Contains("spk::DiaMatrix: padded storage (92999 diagonals x pitch 46512"),
      spk::PaddingLimitExceeded);
  const auto full = spk_test::random_csr<double, int>(3000, 3000, 1, 4, 1234);
  CHECK_THROWS_WITH_AS((spk::DiaMatrix<double, int, int, D>(full)),
                       doctest::Contains("above the limit"), spk::PaddingLimitExceeded);
  spk::DiaOptions strict;
  strict.limit.max_csr_ratio = 0.5;  // DIA of a 5-point stencil is smaller than its CSR
  strict.limit.min_limit_bytes = 0;
  const auto stencil = spk::generate::poisson2d_5pt<double, int, int, D>(40);
  CHECK(spk::DiaMatrix<double, int, int, D>(stencil).memory_bytes() < stencil.memory_bytes());
  CHECK_THROWS_AS((spk::DiaMatrix<double, int, int, D>(stencil, strict)),
                  spk::PaddingLimitExceeded);
  strict.limit.max_csr_ratio = -1;
  CHECK_THROWS_WITH_AS((spk::DiaMatrix<double, int, int, D>(stencil, strict)),
                       doctest::Contains("max_csr_ratio = -1"), std::invalid_argument);
}

TEST_CASE("dia spmv: wrong sizes and parameters throw") {
  using D = spk::impl::HostDevice;
  const spk::DiaMatrix<double, int, int, D> a(spk_test::random_csr<double, int>(5, 4, 2, 1));
  Kokkos::View<double*, Kokkos::HostSpace> x("x", 5), y("y", 5);
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, a, x, 0.0, y),
                       doctest::Contains("x has 5 entries, op(A) has 4 columns"),
                       std::invalid_argument);
  Kokkos::View<double*, Kokkos::HostSpace> xt("x", 5), yt("y", 3);
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::T, 1.0, a, xt, 0.0, yt),
                       doctest::Contains("y has 3 entries, op(A) has 4 rows"),
                       std::invalid_argument);
  Kokkos::View<double*, Kokkos::HostSpace> x4("x", 4);
  spk::DiaSpmvParams p;
  p.threads_per_row = 64;
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, a, x4, 0.0, y, p),
                       doctest::Contains("threads_per_row = 64"), std::invalid_argument);
}
