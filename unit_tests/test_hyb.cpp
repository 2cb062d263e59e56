// Tests of spk/formats/hyb.hpp: the automatic ELL width, conversion from CSR (ELL part + COO
// overflow), to_csr(), the padding limit of the ELL part, invalid options, and SpMV (N, T, H,
// every launch shape, both layouts) against the host reference.
#include <string>
#include <vector>

#include <spk/formats/hyb.hpp>

#include "format_checks.hpp"
#include "test_common.hpp"

namespace {

using spk_test::RoundTrip;

template <class Device>
std::vector<spk::HybSpmvParams> hyb_params() {
  const bool gpu = spk::impl::is_gpu_space<typename Device::execution_space>();
  std::vector<spk::HybSpmvParams> all{{}};
  for (int tpr : {1, 2, 32}) {
    for (int run : {1, 3}) {
      spk::HybSpmvParams p;
      p.threads_per_row = tpr;
      p.team_size = gpu ? 3 : 1;
      p.rows_per_team = 5;
      p.coo_entries_per_thread = run;
      all.push_back(p);
    }
  }
  for (int f : {4, 8, -4}) {  // the ELL part's loads in flight per lane
    spk::HybSpmvParams p;
    p.threads_per_row = 2;
    p.in_flight = f;
    all.push_back(p);
  }
  return all;
}

// Widths: automatic (the classic rule: all COO below 4096 rows), automatic without the
// breakeven row count, and fixed widths 0, 2 and 1000 (past the longest row: all ELL).
std::vector<spk::HybOptions> hyb_options() {
  std::vector<spk::HybOptions> all(1);
  spk::HybOptions o;
  o.breakeven_rows = 0;
  all.push_back(o);
  for (int w : {0, 2, 1000}) {
    o = {};
    o.ell_width = w;
    o.limit.max_csr_ratio = 1000;
    all.push_back(o);
  }
  return all;
}

template <class Device, class Layout, class S, class O>
void check_hyb_layout(const spk_test::HostCsr<S, O>& a, std::uint64_t seed) {
  for (const auto& options : hyb_options()) {
    INFO("ell_width option " << options.ell_width << ", breakeven_rows " << options.breakeven_rows);
    spk_test::check_format<Device>(
        a,
        [&](const spk::CsrMatrix<S, O, int, Device>& d) {
          return spk::HybMatrix<S, O, int, Device, Layout>(d, options);
        },
        hyb_params<Device>(), seed, RoundTrip::exact);
  }
}

template <class Device, class S, class O>
void check_hyb(const spk_test::HostCsr<S, O>& a, std::uint64_t seed) {
  check_hyb_layout<Device, Kokkos::LayoutLeft>(a, seed);
  check_hyb_layout<Device, Kokkos::LayoutRight>(a, seed);
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("hyb spmv matches the host reference", Device, hyb_spmv) {
  spk_test::for_each_type<spk_test::all_scalars>([](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    check_hyb<Device>(spk_test::random_csr<S, int>(300, 200, 6, 1), 3);
    check_hyb<Device>(spk_test::random_csr<S, long long>(150, 170, 3, 2), 5);
    check_hyb<Device>(spk_test::random_csr<S, int>(1, 90, 30, 3), 7);
    check_hyb<Device>(spk_test::random_csr<S, int>(90, 1, 1, 4), 9);
    check_hyb<Device>(spk_test::random_csr<S, int>(40, 30, 0, 5), 11);
    check_hyb<Device>(spk_test::random_csr<S, int>(0, 0, 0, 6), 13);
    // one dense row: its overflow goes to COO
    check_hyb<Device>(spk_test::random_csr<S, int>(150, 170, 3, 7, 40), 15);
    check_hyb<Device>(spk_test::csr_with_duplicates<S, int>(8), 17);
    check_hyb<Device>(spk_test::csr_from_coo_with_duplicates<S, int>(9), 19);
  });
}
TEST_CASE_TEMPLATE_APPLY(hyb_spmv, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("hyb on generated matrices", Device, hyb_generated) {
  for (const auto& g : spk_test::generated_matrices<double>()) {
    INFO("matrix " << g.first);
    check_hyb<Device>(g.second, 21);
  }
}
TEST_CASE_TEMPLATE_APPLY(hyb_generated, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("hyb on the shared real matrices", Device, hyb_real) {
  spk_test::for_each_shared_matrix("hyb", [](const auto& host, const std::string&, bool complex) {
    using S = typename std::decay_t<decltype(host)>::value_type;
    const auto a = spk::copy_to<Device>(host);
    spk::HybOptions no_breakeven;  // the rule by row fractions only: a real ELL part
    no_breakeven.breakeven_rows = 0;
    try {
      for (const auto& options : {spk::HybOptions{}, no_breakeven}) {
        const spk::HybMatrix<S, int, int, Device> f(a, options);
        spk_test::check_round_trip(host, spk::to_host(f.to_csr()), RoundTrip::exact);
        spk::HybSpmvParams two;
        two.threads_per_row = 2;
        two.coo_entries_per_thread = 1;
        const std::vector<spk::HybSpmvParams> launches{{}, two};
        spk_test::check_real_spmv<Device>(f, host, complex, launches);
      }
      return true;
    } catch (const spk::PaddingLimitExceeded& e) {
      MESSAGE("hyb refuses by its padding limit: " << std::string(e.what()));
      return false;
    }
  });
}
TEST_CASE_TEMPLATE_APPLY(hyb_real, spk_test::all_devices);

TEST_CASE("hyb: the automatic width and the split") {
  using D = spk::impl::HostDevice;
  // 12 rows of 1 entry, 10 of 3, 8 of 8 (30 rows, 106 entries)
  std::vector<int> row_map{0}, cols;
  std::vector<double> vals;
  for (int i = 0; i < 30; ++i) {
    const int len = i < 12 ? 1 : i < 22 ? 3 : 8;
    for (int k = 0; k < len; ++k) {
      cols.push_back((i + k) % 10);
      vals.push_back(i + 0.1 * k);
    }
    std::sort(cols.end() - len, cols.end());
    row_map.push_back(int(cols.size()));
  }
  const auto a = spk::make_csr<double, int, int, D>(30, 10, row_map, cols, vals);
  // 18 rows (>= 30 / 3) have 3 or more entries, only 8 have 4 or more: width 3
  spk::HybOptions o;
  o.breakeven_rows = 0;
  const spk::HybMatrix<double, int, int, D> h(a, o);
  CHECK(h.ell_width() == 3);
  CHECK(h.ell_nnz() == 12 + 30 + 24);
  CHECK(h.coo_nnz() == 8 * 5);
  CHECK(h.nnz() == 106);
  CHECK(h.coo().row_idx()(0) == 22);
  CHECK(h.coo().col_idx()(0) == a.col_idx()(a.row_map()(22) + 3));
  CHECK(h.padding_ratio() == doctest::Approx((30.0 * 3 + 40) / 106));
  CHECK(h.memory_bytes() == h.ell().memory_bytes() + 40 * (4 + 4 + 8));
  CHECK(std::string(spk::HybMatrix<double>::name) == "hyb");
  // a third of the rows is the threshold: relative speed 1.5 needs 20 rows, i.e. width 1
  o.relative_speed = 1.5;
  CHECK(spk::HybMatrix<double, int, int, D>(a, o).ell_width() == 1);
  // the classic breakeven of 4096 rows: a 30-row matrix is all COO
  const spk::HybMatrix<double, int, int, D> classic(a);
  CHECK(classic.ell_width() == 0);
  CHECK(classic.coo_nnz() == 106);
  // a user width
  spk::HybOptions w;
  w.ell_width = 5;
  const spk::HybMatrix<double, int, int, D> five(a, w);
  CHECK(five.ell_width() == 5);
  CHECK(five.coo_nnz() == 8 * 3);
  // pdeN: every interior row has 7 entries, so the ELL part takes 7 and COO is empty
  const spk::HybMatrix<double, int, int, D> pde(
      spk::generate::pde_convdiff3d<double, int, int, D>(20));
  CHECK(pde.ell_width() == 7);
  CHECK(pde.coo_nnz() == 0);
}

TEST_CASE("hyb: invalid options and the padding limit") {
  using D = spk::impl::HostDevice;
  const auto a = spk_test::random_csr<double, int>(100, 100, 3, 1);
  spk::HybOptions o;
  o.ell_width = -2;
  CHECK_THROWS_WITH_AS((spk::HybMatrix<double, int, int, D>(a, o)),
                       doctest::Contains("ell_width = -2"), std::invalid_argument);
  o = {};
  o.relative_speed = 0;
  CHECK_THROWS_WITH_AS((spk::HybMatrix<double, int, int, D>(a, o)),
                       doctest::Contains("relative_speed = 0"), std::invalid_argument);
  // arrow.mtx: the automatic width (2) puts the long first row in COO...
  const auto arrow = spk::to_host(spk::coo_to_csr(spk::io::read_matrix_market_coo<double, int, int>(
      spk_test::data_dir() + "/matrices/arrow.mtx")));
  const spk::HybMatrix<double, int, int, D> h(arrow);
  CHECK(h.ell_width() == 2);
  CHECK(h.coo_nnz() == 46500 - 2);
  // ...while a user width covering the long row is refused before allocating
  o = {};
  o.ell_width = 46500;
  CHECK_THROWS_WITH_AS((spk::HybMatrix<double, int, int, D>(arrow, o)),
                       doctest::Contains("spk::HybMatrix: padded storage (width 46500"),
                       spk::PaddingLimitExceeded);
  const auto full = spk_test::random_csr<double, int>(3000, 3000, 1, 4, 1234);
  CHECK_THROWS_AS((spk::HybMatrix<double, int, int, D>(full, o)), spk::PaddingLimitExceeded);
  const spk::HybMatrix<double, int, int, D> auto_full(full);
  CHECK(auto_full.ell_width() <= 2);
}

TEST_CASE("hyb spmv: wrong sizes and parameters throw") {
  using D = spk::impl::HostDevice;
  const spk::HybMatrix<double, int, int, D> a(spk_test::random_csr<double, int>(5, 4, 2, 1));
  Kokkos::View<double*, Kokkos::HostSpace> x("x", 5), y("y", 5);
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, a, x, 0.0, y),
                       doctest::Contains("x has 5 entries, op(A) has 4 columns"),
                       std::invalid_argument);
  Kokkos::View<double*, Kokkos::HostSpace> x4("x", 4);
  spk::HybSpmvParams p;
  p.coo_entries_per_thread = -1;
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, a, x4, 0.0, y, p),
                       doctest::Contains("coo_entries_per_thread = -1"), std::invalid_argument);
  spk::HybSpmvParams f;
  f.in_flight = 5;
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, a, x4, 0.0, y, f),
                       doctest::Contains("in_flight = 5 must be 0 (choose), -4, 4 or 8"),
                       std::invalid_argument);
  CHECK(spk::resolve_params(a, spk::Mode::N).in_flight == -4);  // CPU backend
}
