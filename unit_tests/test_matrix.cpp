// Tests of spk/matrix.hpp: spk::Matrix holds every format (every candidate configuration of
// select_format and each format's defaults), its SpMV (N, T, H; beta = 0 with y NaN, general
// alpha and beta) matches the host reference on random, edge-case and shared real matrices,
// conversions between formats keep the operator, concrete matrices can be wrapped, HiSparse of
// complex values is refused, format names round-trip, and a Matrix is a solver operator.
#include <limits>
#include <string>
#include <vector>

#include <spk/io/matrix_market.hpp>
#include <spk/matrix.hpp>
#include <spk/reference.hpp>
#include <spk/select_format.hpp>
#include <spk/solvers/cg.hpp>

#include "format_checks.hpp"
#include "test_common.hpp"

namespace {

using spk_test::HostCsr;

/// y = alpha op(M) x + beta y through the Matrix against the reference on host_a, for N, T and
/// H, with beta = 0 (y NaN), a general beta and alpha = beta = 1.
template <class Device, class S>
void check_matrix_spmv(const spk::Matrix<S, Device>& m, const HostCsr<S, int>& host_a,
                       std::uint64_t seed) {
  using traits = spk::scalar_traits<S>;
  INFO("format " << m.format_name() << ", " << host_a.nrows() << " x " << host_a.ncols()
                 << ", nnz " << host_a.nnz() << ", scalar " << traits::name);
  CHECK(m.nrows() == host_a.nrows());
  CHECK(m.ncols() == host_a.ncols());
  const S alpha = traits::make(1.5, traits::is_complex ? -0.5 : 0.0);
  for (spk::Mode mode : spk_test::all_modes()) {
    for (int variant = 0; variant < 3; ++variant) {
      const S a = variant == 2 ? traits::one() : alpha;
      const S b = variant == 0 ? traits::zero()
                  : variant == 1 ? traits::make(-0.75, 0.25)
                                 : traits::one();
      const bool trans = mode != spk::Mode::N;
      const auto x = spk_test::random_vector<S>(trans ? host_a.nrows() : host_a.ncols(), seed);
      auto y_ref = spk_test::random_vector<S>(trans ? host_a.ncols() : host_a.nrows(), seed + 1);
      auto y_in = y_ref;
      if (variant == 0)
        for (auto& v : y_in)
          v = traits::make(std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::quiet_NaN());
      const auto xd = spk_test::to_view<Device>(x);
      const auto yd = spk_test::to_view<Device>(y_in);
      spk::spmv(mode, a, m, xd, b, yd);
      std::vector<double> bound;
      spk::reference::spmv(mode, a, host_a, x, b, y_ref, &bound);
      INFO("mode " << spk::to_string(mode) << ", beta variant " << variant);
      spk_test::check_close(spk_test::to_vector(yd), y_ref, bound, 8 * spk::unit_roundoff<S>());
    }
  }
}

/// Every candidate configuration and every format's defaults that `a` can be converted into,
/// checked; formats refusing `a` by their padding limit are skipped (only those may refuse).
/// Returns how many were checked.
template <class Device, class S>
int check_all_formats(const HostCsr<S, int>& host_a, std::uint64_t seed) {
  using M = spk::Matrix<S, Device>;
  const auto a = spk::copy_to<Device>(host_a);
  std::vector<spk::FormatConfig> configs =
      spk::format_candidates<S>(spk::impl::is_gpu_space<typename Device::execution_space>());
  for (spk::Format f : spk::all_formats())
    if (spk::format_supports<S>(f)) configs.push_back(spk::FormatConfig::of(f));
  int checked = 0;
  for (const auto& c : configs) {
    INFO("configuration " << c.name());
    M m;
    try {
      m = M(a, c);
    } catch (const spk::PaddingLimitExceeded&) {
      CHECK((c.format == spk::Format::ell || c.format == spk::Format::dia ||
             c.format == spk::Format::hdia || c.format == spk::Format::hll ||
             c.format == spk::Format::hyb));
      continue;
    }
    CHECK(m.format() == c.format);
    CHECK(m.format_name() == c.name());
    CHECK((m.memory_bytes() > 0 || host_a.nnz() == 0));
    check_matrix_spmv<Device>(m, host_a, seed);
    // back to CSR and into CSR again: the same operator
    check_matrix_spmv<Device>(m.converted(spk::FormatConfig::of(spk::Format::csr)), host_a,
                              seed + 3);
    ++checked;
  }
  return checked;
}

TEST_CASE_TEMPLATE_DEFINE("Matrix holds every format and multiplies like the reference", Device,
                          matrix_formats) {
  spk_test::for_each_type<spk_test::all_scalars>([&](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    INFO("scalar " << spk::scalar_traits<S>::name);
    // random rows (empty ones included) with one dense row, non-square
    CHECK(check_all_formats<Device>(spk_test::random_csr<S>(300, 250, 6, 11, 17), 21) >= 7);
    // banded: every format accepts it
    const auto band = spk::to_host(
        spk::generate::poisson2d_5pt<S, int, int, Device>(14));
    const int all = int(spk::format_candidates<S>(
                            spk::impl::is_gpu_space<typename Device::execution_space>())
                            .size());
    CHECK(check_all_formats<Device>(band, 23) ==
          all + int(spk::format_supports<S>(spk::Format::hisparse) ? 9 : 8));
  });
}
TEST_CASE_TEMPLATE_APPLY(matrix_formats, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("Matrix edge cases: 0 x 0, no entries, one row, duplicates", Device,
                          matrix_edges) {
  using S = double;
  const std::vector<int> z{0};
  // no entries, 5 x 7
  const auto empty = spk::make_csr<S, int, int, spk::impl::HostDevice>(
      5, 7, std::vector<int>(6, 0), std::vector<int>{}, std::vector<S>{});
  CHECK(check_all_formats<Device>(empty, 31) >= 7);
  // 0 x 0
  const auto none = spk::make_csr<S, int, int, spk::impl::HostDevice>(0, 0, z, std::vector<int>{},
                                                                       std::vector<S>{});
  CHECK(check_all_formats<Device>(none, 33) >= 7);
  // one row, one column
  CHECK(check_all_formats<Device>(spk_test::random_csr<S>(1, 1, 1, 35, 0), 37) >= 7);
  // one dense row in a 1 x 400 matrix
  CHECK(check_all_formats<Device>(spk_test::random_csr<S>(1, 400, 1, 39, 0), 41) >= 7);
  // duplicate (row, column) entries, unsorted rows
  CHECK(check_all_formats<Device>(spk_test::csr_with_duplicates<S, int>(43), 45) >= 7);
}
TEST_CASE_TEMPLATE_APPLY(matrix_edges, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("Matrix on shared real matrices, selected format", Device, matrix_real) {
  using S = double;
  int n = 0;
  for (const char* name : {"bcsstk13.mtx", "rajat19.mtx", "wiki-Vote.mtx", "lap3D_7pt_n20.mtx",
                           "arrow.mtx", "mbeacxc.mtx"}) {
    const std::string path = spk_test::data_dir() + "/matrices/" + name;
    INFO("matrix " << path);
    const auto host = spk::coo_to_csr(spk::io::read_matrix_market_coo<S, int, int>(path));
    const auto a = spk::copy_to<Device>(host);
    spk::FormatChoice choice;
    const spk::Matrix<S, Device> m = spk::make_matrix(a, {}, &choice);
    CHECK(m.format() == choice.config.format);
    CHECK(m.format_name() == choice.config.name());
    check_matrix_spmv<Device>(m, host, 51);
    // and the configuration ranked last that can hold it
    for (auto it = choice.ranked.rbegin(); it != choice.ranked.rend(); ++it) {
      if (!it->note.empty()) continue;
      try {
        check_matrix_spmv<Device>(m.converted(it->config), host, 53);
        break;
      } catch (const spk::PaddingLimitExceeded&) {
      }
    }
    ++n;
  }
  CHECK(n == 6);
}
TEST_CASE_TEMPLATE_APPLY(matrix_real, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("Matrix wraps concrete formats; bad formats throw", Device,
                          matrix_wrap) {
  using S = double;
  const auto host = spk_test::random_csr<S>(90, 90, 4, 61);
  const auto a = spk::copy_to<Device>(host);
  spk::HllSpmvParams p;
  p.threads_per_row = 2;
  spk::FormatConfig c;
  c.hll = p;
  c.label = "my-hll";
  const spk::Matrix<S, Device> m(spk::HllMatrix<S, int, int, Device>(a), c);
  CHECK(m.format() == spk::Format::hll);
  CHECK(m.format_name() == "my-hll");
  CHECK(m.template get_if<spk::HllMatrix<S, int, int, Device>>() != nullptr);
  CHECK(m.template get_if<spk::CsrMatrix<S, int, int, Device>>() == nullptr);
  check_matrix_spmv<Device>(m, host, 63);
  const spk::Matrix<S, Device> plain(a);
  CHECK(plain.format() == spk::Format::csr);
  CHECK(plain.format_name() == "csr");

  using Z = Kokkos::complex<double>;
  const auto az = spk::copy_to<Device>(spk_test::random_csr<Z>(20, 20, 3, 65));
  CHECK_THROWS_AS((spk::Matrix<Z, Device>(az, spk::FormatConfig::of(spk::Format::hisparse))),
                  std::invalid_argument);
  for (spk::Format f : spk::all_formats()) CHECK(spk::parse_format(spk::to_string(f)) == f);
  CHECK_THROWS_WITH_AS(spk::parse_format("bsr"),
                       doctest::Contains("unknown format 'bsr'"), std::invalid_argument);
  // a padded format refusing a matrix says so through Matrix's constructor
  spk::FormatConfig ell = spk::FormatConfig::of(spk::Format::ell);
  ell.ell_options.limit.max_csr_ratio = 1.0;
  ell.ell_options.limit.min_limit_bytes = 0;
  CHECK_THROWS_AS((spk::Matrix<S, Device>(
                      spk::copy_to<Device>(spk_test::random_csr<S>(200, 200, 2, 67, 5)), ell)),
                  spk::PaddingLimitExceeded);
}
TEST_CASE_TEMPLATE_APPLY(matrix_wrap, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("Matrix is a Krylov operator", Device, matrix_solver) {
  using S = double;
  static_assert(spk::is_spmv_matrix<spk::Matrix<S, Device>>::value,
                "spk::Matrix must be usable by the solvers");
  const auto a = spk::generate::poisson2d_5pt<S, int, int, Device>(30);
  const auto host = spk::to_host(a);
  for (spk::Format f : {spk::Format::csr, spk::Format::dia, spk::Format::hll,
                        spk::Format::compressed_coo}) {
    INFO("format " << spk::to_string(f));
    const spk::Matrix<S, Device> m(a, spk::FormatConfig::of(f));
    const auto b = spk_test::random_vector<S>(std::size_t(a.nrows()), 71);
    const auto bd = spk_test::to_view<Device>(b, "b");
    Kokkos::View<S*, Device> x("x", std::size_t(a.nrows()));
    spk::SolverOptions opts;
    opts.relative_tolerance = 1e-10;
    opts.max_iterations = 5000;
    const spk::SolverResult r = spk::cg(m, bd, x, opts);
    CHECK(r.converged);
    // true residual on the host
    std::vector<S> ax(b.size(), 0.0);
    spk::reference::spmv(spk::Mode::N, 1.0, host, spk_test::to_vector(x), 0.0, ax);
    double res = 0, nb = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
      res += (b[i] - ax[i]) * (b[i] - ax[i]);
      nb += b[i] * b[i];
    }
    CHECK(std::sqrt(res / nb) <= 1e-9);
  }
}
TEST_CASE_TEMPLATE_APPLY(matrix_solver, spk_test::all_devices);

}  // namespace
