// Tests of spk/solvers/cg.hpp (with spk/solvers/jacobi.hpp and linear_operator.hpp): CG converges
// on generated and shared SPD matrices, with and without Jacobi, through CSR, HLL, DIA and a user
// operator, in real and complex arithmetic; the true residual is checked on the host with the
// reference SpMV. Edge cases: b = 0, exact initial guess, 1 x 1, sizes and options that throw,
// max_iterations, an indefinite matrix, non-finite input, workspace reuse, spk::diagonal.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <spk/solvers/cg.hpp>

#include "solver_checks.hpp"
#include "test_common.hpp"

namespace {

using spk_test::HostCsr;

/// Solves host_a x = b with CG on Device through every operator of for_each_operator, with and
/// without Jacobi, from x0 = 0, and checks convergence and the true residual. Returns the
/// iteration counts (CSR without preconditioner first).
template <class Device, class S>
std::vector<int> check_cg(const HostCsr<S, int>& host_a, double tol, std::uint64_t seed,
                          bool with_plain = true) {
  const auto b = spk_test::random_vector<S>(std::size_t(host_a.nrows()), seed);
  const auto bd = spk_test::to_view<Device>(b, "b");
  spk::SolverOptions opts;
  opts.relative_tolerance = tol;
  opts.max_iterations = 20000;
  std::vector<int> iterations;
  spk_test::for_each_operator<Device>(
      host_a, [&](const char* name, const auto& op, const auto& jacobi) {
        for (const bool precond : {false, true}) {
          if (!precond && !with_plain) continue;
          INFO("operator " << name << (precond ? ", Jacobi" : ", no preconditioner") << ", "
                           << host_a.nrows() << " rows, scalar " << spk::scalar_traits<S>::name);
          Kokkos::View<S*, Device> x("x", std::size_t(host_a.nrows()));
          const spk::SolverResult r =
              precond ? spk::cg(op, bd, x, opts, jacobi) : spk::cg(op, bd, x, opts);
          spk_test::check_converged(r, host_a, b, spk_test::to_vector(x), tol);
          CHECK(r.history.front() == doctest::Approx(spk_test::norm2(b)).epsilon(1e-5));
          iterations.push_back(r.iterations);
        }
      });
  return iterations;
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("cg converges on generated SPD matrices", Device, cg_generated) {
  using spk::impl::HostDevice;
  const std::vector<std::pair<std::string, HostCsr<double, int>>> cases = {
      {"poisson2d5:24", spk::generate::poisson2d_5pt<double, int, int, HostDevice>(24)},
      {"poisson3d7:9", spk::generate::poisson3d_7pt<double, int, int, HostDevice>(9)},
      {"poisson3d27:6", spk::generate::poisson3d_27pt<double, int, int, HostDevice>(6)}};
  for (const auto& c : cases) {
    INFO("matrix " << c.first);
    const auto its = check_cg<Device>(c.second, 1e-10, 3);
    // every operator takes the same path up to rounding
    for (int k : its) CHECK(std::abs(k - its.front()) <= 3);
  }
  // single precision
  check_cg<Device>(spk::generate::poisson2d_5pt<float, int, int, HostDevice>(16), 1e-5, 5);
}
TEST_CASE_TEMPLATE_APPLY(cg_generated, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("cg converges on the shared SPD matrices", Device, cg_real) {
  // structural FEM, Laplacians (DIA-shaped), a 9-point Laplacian and a mass matrix
  for (const char* file : {"bcsstk09.mtx", "lap2D_5pt_n100.mtx", "lap3D_7pt_n20.mtx",
                           "gr_900_900_crg.mtx", "crystm01.mtx"}) {
    INFO("matrix " << std::string(file));
    check_cg<Device>(spk_test::shared_matrix<double>(file), 1e-8, 7);
  }
  // ill-conditioned structural matrices: only with Jacobi (hundreds to ~1500 iterations)
  for (const char* file : {"bcsstk13.mtx", "bcsstk15.mtx"}) {
    INFO("matrix " << std::string(file));
    check_cg<Device>(spk_test::shared_matrix<double>(file), 1e-8, 9, false);
  }
}
TEST_CASE_TEMPLATE_APPLY(cg_real, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("cg converges on complex Hermitian positive definite systems", Device,
                          cg_complex) {
  check_cg<Device>(spk_test::random_dominant<Kokkos::complex<double>>(300, 4, true, 11), 1e-10, 13);
  check_cg<Device>(spk_test::random_dominant<Kokkos::complex<float>>(100, 3, true, 12), 1e-5, 15);
}
TEST_CASE_TEMPLATE_APPLY(cg_complex, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("cg: residual history, error monotonicity and finite termination", Device,
                          cg_history) {
  using D = Device;
  // diagonal SPD matrix with 4 distinct eigenvalues: CG terminates in at most 4 iterations
  std::vector<int> rows{0}, cols;
  std::vector<double> vals;
  const double eig[] = {1.0, 2.0, 5.0, 11.0};
  for (int i = 0; i < 40; ++i) {
    cols.push_back(i);
    vals.push_back(eig[i % 4]);
    rows.push_back(i + 1);
  }
  const auto host_a =
      spk::make_csr<double, int, int, spk::impl::HostDevice>(40, 40, rows, cols, vals);
  const auto a = spk::copy_to<D>(host_a);
  const auto b = spk_test::random_vector<double>(40, 21);
  const auto bd = spk_test::to_view<D>(b, "b");
  Kokkos::View<double*, D> x("x", 40);
  spk::SolverOptions opts;
  opts.relative_tolerance = 1e-12;
  const auto r = spk::cg(a, bd, x, opts);
  spk_test::check_converged(r, host_a, b, spk_test::to_vector(x), 1e-12);
  CHECK(r.iterations <= 4);
  // Jacobi makes it the identity: one iteration
  Kokkos::deep_copy(x, 0.0);
  const auto rj = spk::cg(a, bd, x, opts, spk::make_jacobi(a));
  spk_test::check_converged(rj, host_a, b, spk_test::to_vector(x), 1e-12);
  CHECK(rj.iterations == 1);

  // on a 2D Poisson matrix, ||r_k|| need not decrease (it does not here), but the A-norm of the
  // error does at every iteration (CG minimises it over the Krylov space): x_k is recovered by
  // stopping after k iterations (the same operations as the first k of the full solve), which
  // also checks that history[k] is the residual after iteration k
  const auto host_p = spk::generate::poisson2d_5pt<double, int, int, spk::impl::HostDevice>(20);
  const auto p = spk::copy_to<D>(host_p);
  const auto x_true = spk_test::random_vector<double>(400, 23);
  const auto bp = spk_test::host_product(host_p, x_true);
  const auto bpd = spk_test::to_view<D>(bp, "b");
  Kokkos::View<double*, D> xp("x", 400);
  const auto rp = spk::cg(p, bpd, xp, opts);
  spk_test::check_converged(rp, host_p, bp, spk_test::to_vector(xp), 1e-12);
  CHECK(rp.history.front() == doctest::Approx(spk_test::norm2(bp)));
  const auto a_norm_error = [&](const std::vector<double>& xk) {
    std::vector<double> e(xk.size());
    for (std::size_t i = 0; i < e.size(); ++i) e[i] = xk[i] - x_true[i];
    const auto ae = spk_test::host_product(host_p, e);
    double s = 0;
    for (std::size_t i = 0; i < e.size(); ++i) s += e[i] * ae[i];
    return std::sqrt(s);
  };
  double previous = a_norm_error(std::vector<double>(400, 0.0));
  bool residual_rises = false;
  for (int k = 1; k <= rp.iterations && k <= 40; ++k) {
    spk::SolverOptions stop = opts;
    stop.max_iterations = k;
    Kokkos::deep_copy(xp, 0.0);
    const auto rk = spk::cg(p, bpd, xp, stop);
    INFO("iteration " << k);
    REQUIRE(rk.history.size() == std::size_t(k) + 1);
    CHECK(rk.history.back() == rp.history[std::size_t(k)]);
    const double err = a_norm_error(spk_test::to_vector(xp));
    CHECK(err < previous);
    previous = err;
    residual_rises = residual_rises || rp.history[std::size_t(k)] > rp.history[std::size_t(k) - 1];
  }
  CHECK(residual_rises);  // the 2-norm of the residual is not monotone on this case

  // without recording, the same solve keeps no history
  opts.record_history = false;
  Kokkos::deep_copy(xp, 0.0);
  const auto rn = spk::cg(p, bpd, xp, opts);
  CHECK(rn.history.empty());
  CHECK(rn.iterations == rp.iterations);
  CHECK(rn.converged);
}
TEST_CASE_TEMPLATE_APPLY(cg_history, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("cg edge cases", Device, cg_edges) {
  using D = Device;
  using spk::impl::HostDevice;
  const auto host_a = spk::generate::poisson2d_5pt<double, int, int, HostDevice>(10);
  const auto a = spk::copy_to<D>(host_a);
  const std::size_t n = 100;

  SUBCASE("b = 0 gives x = 0 at once") {
    Kokkos::View<double*, D> b("b", n);
    const auto x = spk_test::to_view<D>(spk_test::random_vector<double>(n, 1), "x");
    const auto r = spk::cg(a, b, x);
    CHECK(r.converged);
    CHECK(r.reason == spk::StopReason::zero_rhs);
    CHECK(r.iterations == 0);
    CHECK(r.history == std::vector<double>{0.0});
    for (double v : spk_test::to_vector(x)) CHECK(v == 0.0);
  }
  SUBCASE("the exact solution as initial guess: 0 iterations") {
    const auto xt = spk_test::random_vector<double>(n, 2);
    const auto b = spk_test::host_product(host_a, xt);
    const auto x = spk_test::to_view<D>(xt, "x");
    const auto r = spk::cg(a, spk_test::to_view<D>(b, "b"), x);
    CHECK(r.converged);
    CHECK(r.iterations == 0);
    CHECK(r.relative_residual <= 1e-14);
    CHECK(r.history.size() == 1);
    CHECK(spk_test::to_vector(x) == xt);  // x untouched
  }
  SUBCASE("1 x 1") {
    const auto one = spk::make_csr<double, int, int, HostDevice>(1, 1, {0, 1}, {0}, {4.0});
    const auto b = spk_test::to_view<D>(std::vector<double>{2.0}, "b");
    Kokkos::View<double*, D> x("x", 1);
    const auto r = spk::cg(spk::copy_to<D>(one), b, x);
    CHECK(r.converged);
    CHECK(r.iterations == 1);
    CHECK(spk_test::to_vector(x)[0] == 0.5);
    const spk::DiaMatrix<double, int, int, D> dia(spk::copy_to<D>(one));
    Kokkos::deep_copy(x, 0.0);
    CHECK(spk::cg(dia, b, x, {}, spk::make_jacobi(dia)).iterations == 1);
    CHECK(spk_test::to_vector(x)[0] == 0.5);
  }
  SUBCASE("an empty system") {
    const auto empty = spk::make_csr<double, int, int, HostDevice>(0, 0, {0}, {}, {});
    Kokkos::View<double*, D> b("b", 0), x("x", 0);
    const auto r = spk::cg(spk::copy_to<D>(empty), b, x);
    CHECK(r.reason == spk::StopReason::zero_rhs);
    CHECK(r.iterations == 0);
  }
  SUBCASE("wrong sizes and options throw, naming the values") {
    Kokkos::View<double*, D> b("b", n), x("x", n), short_b("b", n - 1), long_x("x", n + 1);
    CHECK_THROWS_WITH_AS(spk::cg(a, short_b, x),
                         doctest::Contains("spk::cg: b has 99 entries, the operator 100 rows"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(spk::cg(a, b, long_x),
                         doctest::Contains("spk::cg: x has 101 entries, the operator 100 columns"),
                         std::invalid_argument);
    const auto rect = spk::copy_to<D>(spk_test::random_csr<double, int>(100, 101, 3, 1));
    CHECK_THROWS_WITH_AS(spk::cg(rect, b, long_x), doctest::Contains("the operator is 100 x 101"),
                         std::invalid_argument);
    spk::SolverOptions bad;
    bad.max_iterations = -1;
    CHECK_THROWS_WITH_AS(spk::cg(a, b, x, bad),
                         doctest::Contains("SolverOptions::max_iterations = -1"),
                         std::invalid_argument);
    bad = {};
    bad.relative_tolerance = -1e-3;
    CHECK_THROWS_WITH_AS(spk::cg(a, b, x, bad),
                         doctest::Contains("SolverOptions::relative_tolerance = -0.001"),
                         std::invalid_argument);
    bad = {};
    bad.absolute_tolerance = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_WITH_AS(spk::cg(a, b, x, bad),
                         doctest::Contains("SolverOptions::absolute_tolerance = nan"),
                         std::invalid_argument);
    const auto small = spk::make_jacobi(
        spk::copy_to<D>(spk::generate::poisson2d_5pt<double, int, int, HostDevice>(3)));
    CHECK_THROWS_WITH_AS(spk::cg(a, b, x, {}, small),
                         doctest::Contains("the preconditioner has 9 rows, the operator 100"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(spk::make_operator(-2, [](const auto&, const auto&) {}),
                         doctest::Contains("n = -2"), std::invalid_argument);
  }
  SUBCASE("max_iterations reached is reported, not thrown") {
    const auto bh = spk_test::random_vector<double>(n, 3);
    const auto b = spk_test::to_view<D>(bh, "b");
    Kokkos::View<double*, D> x("x", n);
    spk::SolverOptions opts;
    opts.max_iterations = 3;
    const auto r = spk::cg(a, b, x, opts);
    CHECK(!r.converged);
    CHECK(r.reason == spk::StopReason::max_iterations);
    CHECK(r.iterations == 3);
    spk_test::check_bookkeeping(r, spk_test::norm2(bh));
    CHECK(r.message.find("after 3 iterations") != std::string::npos);
    // the reported residual is x's: the recurrence has not drifted in 3 steps
    CHECK(spk_test::true_relative_residual(host_a, bh, spk_test::to_vector(x)) ==
          doctest::Approx(r.relative_residual).epsilon(1e-8));
    opts.max_iterations = 0;
    Kokkos::deep_copy(x, 0.0);
    const auto r0 = spk::cg(a, b, x, opts);
    CHECK(!r0.converged);
    CHECK(r0.iterations == 0);
    CHECK(r0.history.size() == 1);
  }
  SUBCASE("an absolute tolerance stops first when it is the larger") {
    const auto bh = spk_test::random_vector<double>(n, 4);
    Kokkos::View<double*, D> x("x", n);
    spk::SolverOptions opts;
    opts.relative_tolerance = 0;
    opts.absolute_tolerance = 1e-3 * spk_test::norm2(bh);
    const auto r = spk::cg(a, spk_test::to_view<D>(bh, "b"), x, opts);
    CHECK(r.converged);
    CHECK(r.residual_norm <= opts.absolute_tolerance);
    CHECK(r.relative_residual > 1e-6);  // well short of a tight relative tolerance
  }
  SUBCASE("an indefinite matrix is reported as not positive") {
    const auto indef =
        spk::make_csr<double, int, int, HostDevice>(2, 2, {0, 1, 2}, {0, 1}, {1.0, -1.0});
    const auto b = spk_test::to_view<D>(std::vector<double>{1.0, 2.0}, "b");
    Kokkos::View<double*, D> x("x", 2);
    const auto r = spk::cg(spk::copy_to<D>(indef), b, x);
    CHECK(!r.converged);
    CHECK(r.reason == spk::StopReason::not_positive);
    CHECK(r.iterations == 0);
    CHECK(r.message.find("(p, A p) = -3") != std::string::npos);
  }
  SUBCASE("NaN in b is reported as non-finite") {
    auto bh = spk_test::random_vector<double>(n, 5);
    bh[17] = std::numeric_limits<double>::quiet_NaN();
    Kokkos::View<double*, D> x("x", n);
    const auto r = spk::cg(a, spk_test::to_view<D>(bh, "b"), x);
    CHECK(!r.converged);
    CHECK(r.reason == spk::StopReason::non_finite);
  }
  SUBCASE("a workspace is reused and resized") {
    const auto bh = spk_test::random_vector<double>(n, 6);
    const auto b = spk_test::to_view<D>(bh, "b");
    Kokkos::View<double*, D> x("x", n);
    spk::CgWorkspace<double, D> ws;
    CHECK(ws.size() == 0);
    const auto r1 = spk::cg(a, b, x, {}, spk::IdentityPreconditioner{}, ws);
    CHECK(ws.size() == 100);
    CHECK(ws.memory_bytes() == 3 * 100 * sizeof(double));
    const auto data = ws.residual().data();
    Kokkos::deep_copy(x, 0.0);
    const auto r2 = spk::cg(a, b, x, {}, spk::IdentityPreconditioner{}, ws);
    CHECK(ws.residual().data() == data);  // not reallocated
    CHECK(r2.iterations == r1.iterations);
    CHECK(r2.residual_norm == r1.residual_norm);
    // a 1 x 1 solve with the same workspace
    const auto one = spk::make_csr<double, int, int, HostDevice>(1, 1, {0, 1}, {0}, {2.0});
    const auto b1 = spk_test::to_view<D>(std::vector<double>{1.0}, "b");
    Kokkos::View<double*, D> x1("x", 1);
    CHECK(spk::cg(spk::copy_to<D>(one), b1, x1, {}, spk::IdentityPreconditioner{}, ws).converged);
    CHECK(ws.size() == 1);
    CHECK(spk_test::to_vector(x1)[0] == 0.5);
  }
}
TEST_CASE_TEMPLATE_APPLY(cg_edges, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("spk::diagonal and the Jacobi preconditioner", Device, jacobi) {
  using D = Device;
  using spk::impl::HostDevice;
  // 3 x 4 with a duplicate diagonal entry (row 1: 2 + 3) and no entry at (2, 2)
  const auto host_a = spk::make_csr<double, int, int, HostDevice>(
      3, 4, {0, 2, 5, 6}, {0, 2, 1, 0, 1, 3}, {1.0, 9.0, 2.0, 4.0, 3.0, 7.0});
  const auto a = spk::copy_to<D>(host_a);
  CHECK(spk_test::to_vector(spk::diagonal(a)) == std::vector<double>{1.0, 5.0, 0.0});
  // the same through a format's to_csr()
  const spk::HllMatrix<double, int, int, D> hll(a);
  CHECK(spk_test::to_vector(spk::diagonal(hll)) == std::vector<double>{1.0, 5.0, 0.0});
  CHECK_THROWS_WITH_AS(spk::make_jacobi(a), doctest::Contains("the matrix is 3 x 4"),
                       std::invalid_argument);
  // a zero diagonal entry names its row
  const auto sq = spk::copy_to<D>(spk::make_csr<double, int, int, HostDevice>(
      3, 3, {0, 1, 3, 4}, {0, 0, 2, 2}, {2.0, 1.0, 3.0, 4.0}));
  CHECK_THROWS_WITH_AS(spk::make_jacobi(sq),
                       doctest::Contains("spk::JacobiPreconditioner: the diagonal entry of row 1 "
                                         "is zero"),
                       std::invalid_argument);
  // from a diagonal view: the inverse, complex too
  const auto d = spk_test::to_view<D>(std::vector<double>{2.0, -4.0, 0.5}, "d");
  const auto m = spk::make_jacobi(d);
  CHECK(m.size() == 3);
  CHECK(spk_test::to_vector(m.inverse_diagonal()) == std::vector<double>{0.5, -0.25, 2.0});
  using C = Kokkos::complex<double>;
  const auto dc = spk_test::to_view<D>(std::vector<C>{C(0, 2), C(1, 1)}, "d");
  const auto inv = spk_test::to_vector(spk::make_jacobi(dc).inverse_diagonal());
  CHECK(inv[0] == C(0, -0.5));
  CHECK(inv[1] == C(0.5, -0.5));
}
TEST_CASE_TEMPLATE_APPLY(jacobi, spk_test::all_devices);

TEST_CASE("solver operators: the matrix trait and the types solvers accept") {
  using D = spk::impl::HostDevice;
  static_assert(spk::is_spmv_matrix<spk::CsrMatrix<double, int, int, D>>::value, "csr");
  static_assert(spk::is_spmv_matrix<spk::HllMatrix<float, int, int, D>>::value, "hll");
  static_assert(spk::is_spmv_matrix<spk::DiaMatrix<double, long long, int, D>>::value, "dia");
  static_assert(!spk::is_spmv_matrix<int>::value, "int");
  static_assert(!spk::is_spmv_matrix<Kokkos::View<double*, D>>::value, "view");
  const auto op = spk::make_operator(5, [](const auto&, const auto&) {});
  static_assert(!spk::is_spmv_matrix<decltype(op)>::value, "operator");
  static_assert(spk::is_linear_operator<std::decay_t<decltype(op)>>::value, "operator");
  CHECK(op.nrows() == 5);
  CHECK(op.ncols() == 5);
  CHECK(std::string(spk::to_string(spk::StopReason::breakdown_omega)) == "breakdown_omega");
}
