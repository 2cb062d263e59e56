// Tests of spk/solvers/bicgstab.hpp: BiCGSTAB converges on generated and shared non-symmetric
// matrices, with and without Jacobi, through CSR, HLL, DIA, a user operator and the two COO
// formats, in real and complex arithmetic; the true residual is checked on the host with the
// reference SpMV. Edge cases: b = 0, exact initial guess, 1 x 1, sizes that throw, max_iterations,
// the three breakdowns (constructed so that they happen in exact arithmetic on every backend),
// workspace reuse.
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <spk/formats/balanced_coo.hpp>
#include <spk/formats/compressed_coo.hpp>
#include <spk/solvers/bicgstab.hpp>

#include "solver_checks.hpp"
#include "test_common.hpp"

namespace {

using spk_test::HostCsr;

/// Solves host_a x = b with BiCGSTAB on Device through every operator of for_each_operator,
/// with and without Jacobi (as selected), from x0 = 0, and checks convergence and the true
/// residual.
template <class Device, class S>
void check_bicgstab(const HostCsr<S, int>& host_a, double tol, std::uint64_t seed,
                    bool plain = true, bool jacobi = true) {
  const auto b = spk_test::random_vector<S>(std::size_t(host_a.nrows()), seed);
  const auto bd = spk_test::to_view<Device>(b, "b");
  spk::SolverOptions opts;
  opts.relative_tolerance = tol;
  opts.max_iterations = 5000;
  spk_test::for_each_operator<Device>(host_a, [&](const char* name, const auto& op, const auto& m) {
    for (const bool precond : {false, true}) {
      if ((precond && !jacobi) || (!precond && !plain)) continue;
      INFO("operator " << name << (precond ? ", Jacobi" : ", no preconditioner") << ", "
                       << host_a.nrows() << " rows, scalar " << spk::scalar_traits<S>::name);
      Kokkos::View<S*, Device> x("x", std::size_t(host_a.nrows()));
      const spk::SolverResult r =
          precond ? spk::bicgstab(op, bd, x, opts, m) : spk::bicgstab(op, bd, x, opts);
      spk_test::check_converged(r, host_a, b, spk_test::to_vector(x), tol);
      CHECK(r.history.front() == doctest::Approx(spk_test::norm2(b)).epsilon(1e-5));
    }
  });
}

/// A small host CSR matrix from dense rows (zeros not stored).
HostCsr<double, int> dense_csr(const std::vector<std::vector<double>>& rows) {
  std::vector<int> row_map{0}, cols;
  std::vector<double> vals;
  for (const auto& row : rows) {
    for (std::size_t j = 0; j < row.size(); ++j)
      if (row[j] != 0) {
        cols.push_back(int(j));
        vals.push_back(row[j]);
      }
    row_map.push_back(int(cols.size()));
  }
  const int n = int(rows.size());
  return spk::make_csr<double, int, int, spk::impl::HostDevice>(n, n, row_map, cols, vals);
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("bicgstab converges on generated non-symmetric matrices", Device,
                          bicgstab_generated) {
  using spk::impl::HostDevice;
  // convection-diffusion (PSBLAS pdeN), and symmetric stencils
  check_bicgstab<Device>(spk::generate::pde_convdiff3d<double, int, int, HostDevice>(10), 1e-10, 3);
  check_bicgstab<Device>(spk::generate::poisson2d_5pt<double, int, int, HostDevice>(20), 1e-10, 5);
  check_bicgstab<Device>(spk::generate::poisson3d_27pt<double, int, int, HostDevice>(6), 1e-10, 7);
  check_bicgstab<Device>(spk::generate::pde_convdiff3d<float, int, int, HostDevice>(6), 1e-5, 9);
}
TEST_CASE_TEMPLATE_APPLY(bicgstab_generated, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("bicgstab through the COO formats", Device, bicgstab_coo) {
  // formats added after the solvers: their spmv overload is all the solvers need
  using D = Device;
  using spk::impl::HostDevice;
  const auto host_a = spk::generate::pde_convdiff3d<double, int, int, HostDevice>(10);
  const auto a = spk::copy_to<D>(host_a);
  const auto b = spk_test::random_vector<double>(std::size_t(host_a.nrows()), 21);
  const auto bd = spk_test::to_view<D>(b, "b");
  const auto solve = [&](const char* name, const auto& m) {
    static_assert(spk::is_spmv_matrix<std::decay_t<decltype(m)>>::value, "an spk format");
    INFO("format " << name);
    for (const bool precond : {false, true}) {
      Kokkos::View<double*, D> x("x", std::size_t(host_a.nrows()));
      const auto r =
          precond ? spk::bicgstab(m, bd, x, {}, spk::make_jacobi(m)) : spk::bicgstab(m, bd, x);
      spk_test::check_converged(r, host_a, b, spk_test::to_vector(x), 1e-8);
    }
  };
  solve("balanced-coo", spk::BalancedCooMatrix<double, int, int, D>(a));
  solve("compressed-coo", spk::CompressedCooMatrix<double, int, int, D>(a));
}
TEST_CASE_TEMPLATE_APPLY(bicgstab_coo, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("bicgstab converges on the shared non-symmetric matrices", Device,
                          bicgstab_real) {
  // CFD convection-diffusion, 3D Laplacian (general storage), FEM anisotropic diffusion, a
  // circuit, and primes on the diagonal with 2^k off-diagonals
  for (const char* file :
       {"BentPipe2D100.mtx", "Laplace3D10.mtx", "ani4.mtx", "add32.mtx", "Trefethen_500.mtx"}) {
    INFO("matrix " << std::string(file));
    check_bicgstab<Device>(spk_test::shared_matrix<double>(file), 1e-8, 11);
  }
}
TEST_CASE_TEMPLATE_APPLY(bicgstab_real, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("bicgstab converges on complex systems", Device, bicgstab_complex) {
  using C = Kokkos::complex<double>;
  check_bicgstab<Device>(spk_test::random_dominant<C>(300, 4, false, 13), 1e-10, 15);
  check_bicgstab<Device>(spk_test::random_dominant<Kokkos::complex<float>>(100, 3, false, 14), 1e-5,
                         17);
  // complex acoustics (5 diagonals): with Jacobi
  INFO("matrix young1c.mtx");
  check_bicgstab<Device>(spk_test::shared_matrix<C>("young1c.mtx"), 1e-8, 19, false, true);
}
TEST_CASE_TEMPLATE_APPLY(bicgstab_complex, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("bicgstab breakdowns are reported, not thrown", Device, bicgstab_bd) {
  using D = Device;
  Kokkos::View<double*, D> x("x", 3);
  const auto b3 = spk_test::to_view<D>(std::vector<double>{1.0, -1.0, -1.0}, "b");

  SUBCASE("(r_hat, A p) = 0: a rotation") {
    const auto a = spk::copy_to<D>(dense_csr({{0, -1}, {1, 0}}));
    const auto b = spk_test::to_view<D>(std::vector<double>{1.0, 0.0}, "b");
    Kokkos::View<double*, D> x2("x", 2);
    const auto r = spk::bicgstab(a, b, x2);
    CHECK(!r.converged);
    CHECK(r.reason == spk::StopReason::breakdown_alpha);
    CHECK(r.iterations == 0);
    CHECK(r.message == "breakdown_alpha: (r_hat, A p) = 0 at iteration 1 (rho = (1,0))");
    spk_test::check_bookkeeping(r, 1.0);
    CHECK(spk_test::to_vector(x2) == std::vector<double>{0.0, 0.0});
  }
  SUBCASE("omega = 0: diag(-2, -2, 1), b = 1") {
    // r0 = (1,1,1), alpha = -1, s = (-1,-1,2), t = A s = (2,2,2) is orthogonal to s
    const auto a = spk::copy_to<D>(dense_csr({{-2, 0, 0}, {0, -2, 0}, {0, 0, 1}}));
    const auto b = spk_test::to_view<D>(std::vector<double>{1.0, 1.0, 1.0}, "b");
    const auto r = spk::bicgstab(a, b, x);
    CHECK(!r.converged);
    CHECK(r.reason == spk::StopReason::breakdown_omega);
    CHECK(r.iterations == 1);
    CHECK(r.message.find("omega = (t, s) / (t, t) = (0,0) / 12 at iteration 1") !=
          std::string::npos);
    spk_test::check_bookkeeping(r, std::sqrt(3.0));
    CHECK(r.residual_norm == doctest::Approx(std::sqrt(6.0)));
    // the half step is kept: x = alpha p = -r0
    CHECK(spk_test::to_vector(x) == std::vector<double>{-1.0, -1.0, -1.0});
  }
  SUBCASE("rho = 0: the new residual is orthogonal to the shadow residual") {
    // r0 = (1,-1,-1): alpha = 1, omega = -1/2, x1 = (1.5, 0.5, -2), r1 = (1,-1,2), (r0, r1) = 0
    const auto a = dense_csr({{-2, -2, -2}, {-2, -2, -2}, {-1, 1, 1}});
    const auto run = [&](const char* name, const auto& op) {
      INFO("operator " << name);
      Kokkos::deep_copy(x, 0.0);
      const auto r = spk::bicgstab(op, b3, x);
      CHECK(!r.converged);
      CHECK(r.reason == spk::StopReason::breakdown_rho);
      CHECK(r.iterations == 1);
      CHECK(r.message.find("rho = (r_hat, r) = 0 at iteration 2") != std::string::npos);
      spk_test::check_bookkeeping(r, std::sqrt(3.0));
      CHECK(r.history == std::vector<double>{std::sqrt(3.0), std::sqrt(6.0)});
      CHECK(spk_test::to_vector(x) == std::vector<double>{1.5, 0.5, -2.0});
    };
    const auto ad = spk::copy_to<D>(a);
    run("csr", ad);
    run("dia", spk::DiaMatrix<double, int, int, D>(ad));
    run("operator", spk::make_operator(3, [ad](const auto& in, const auto& out) {
          spk::spmv(spk::Mode::N, 1.0, ad, in, 0.0, out);
        }));
  }
}
TEST_CASE_TEMPLATE_APPLY(bicgstab_bd, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("bicgstab edge cases", Device, bicgstab_edges) {
  using D = Device;
  using spk::impl::HostDevice;
  const auto host_a = spk::generate::pde_convdiff3d<double, int, int, HostDevice>(5);
  const auto a = spk::copy_to<D>(host_a);
  const std::size_t n = 125;

  SUBCASE("b = 0 gives x = 0 at once") {
    Kokkos::View<double*, D> b("b", n);
    const auto x = spk_test::to_view<D>(spk_test::random_vector<double>(n, 1), "x");
    const auto r = spk::bicgstab(a, b, x, {}, spk::make_jacobi(a));
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
    const auto r = spk::bicgstab(a, spk_test::to_view<D>(b, "b"), x);
    CHECK(r.converged);
    CHECK(r.iterations == 0);
    CHECK(r.relative_residual <= 1e-14);
    CHECK(spk_test::to_vector(x) == xt);
  }
  SUBCASE("a good initial guess converges, from where it starts") {
    const auto xt = spk_test::random_vector<double>(n, 3);
    const auto bh = spk_test::host_product(host_a, xt);
    auto x0 = xt;
    for (auto& v : x0) v *= 1.01;
    const auto x = spk_test::to_view<D>(x0, "x");
    const auto r = spk::bicgstab(a, spk_test::to_view<D>(bh, "b"), x);
    spk_test::check_converged(r, host_a, bh, spk_test::to_vector(x), 1e-8);
    CHECK(r.history.front() ==
          doctest::Approx(spk_test::true_relative_residual(host_a, bh, x0) * spk_test::norm2(bh)));
  }
  SUBCASE("1 x 1") {
    const auto one = spk::make_csr<double, int, int, HostDevice>(1, 1, {0, 1}, {0}, {-4.0});
    const auto b = spk_test::to_view<D>(std::vector<double>{2.0}, "b");
    Kokkos::View<double*, D> x("x", 1);
    const auto r = spk::bicgstab(spk::copy_to<D>(one), b, x);
    CHECK(r.converged);
    CHECK(r.iterations == 1);
    CHECK(r.message.find("half step") != std::string::npos);
    CHECK(spk_test::to_vector(x)[0] == -0.5);
    const spk::HllMatrix<double, int, int, D> hll(spk::copy_to<D>(one));
    Kokkos::deep_copy(x, 0.0);
    CHECK(spk::bicgstab(hll, b, x, {}, spk::make_jacobi(hll)).iterations == 1);
    CHECK(spk_test::to_vector(x)[0] == -0.5);
  }
  SUBCASE("wrong sizes and options throw, naming the values") {
    Kokkos::View<double*, D> b("b", n), x("x", n), short_x("x", n - 2);
    CHECK_THROWS_WITH_AS(
        spk::bicgstab(a, b, short_x),
        doctest::Contains("spk::bicgstab: x has 123 entries, the operator 125 columns"),
        std::invalid_argument);
    const auto op = spk::make_operator(7, [](const auto&, const auto&) {});
    CHECK_THROWS_WITH_AS(spk::bicgstab(op, b, x),
                         doctest::Contains("spk::bicgstab: b has 125 entries, the operator 7 rows"),
                         std::invalid_argument);
    spk::SolverOptions bad;
    bad.relative_tolerance = std::numeric_limits<double>::infinity();
    CHECK_THROWS_WITH_AS(
        spk::bicgstab(a, b, x, bad),
        doctest::Contains("spk::bicgstab: SolverOptions::relative_tolerance = inf"),
        std::invalid_argument);
  }
  SUBCASE("max_iterations reached is reported, not thrown") {
    const auto bh = spk_test::random_vector<double>(n, 4);
    Kokkos::View<double*, D> x("x", n);
    spk::SolverOptions opts;
    opts.max_iterations = 2;
    const auto r = spk::bicgstab(a, spk_test::to_view<D>(bh, "b"), x, opts);
    CHECK(!r.converged);
    CHECK(r.reason == spk::StopReason::max_iterations);
    CHECK(r.iterations == 2);
    spk_test::check_bookkeeping(r, spk_test::norm2(bh));
    CHECK(spk_test::true_relative_residual(host_a, bh, spk_test::to_vector(x)) ==
          doctest::Approx(r.relative_residual).epsilon(1e-8));
  }
  SUBCASE("a workspace is reused, and grows the preconditioned vectors when needed") {
    const auto bh = spk_test::random_vector<double>(n, 5);
    const auto b = spk_test::to_view<D>(bh, "b");
    Kokkos::View<double*, D> x("x", n);
    spk::BicgstabWorkspace<double, D> ws{std::int64_t(n)};
    CHECK(ws.memory_bytes() == 5 * n * sizeof(double));
    const auto data = ws.residual().data();
    const auto r1 = spk::bicgstab(a, b, x, {}, spk::IdentityPreconditioner{}, ws);
    CHECK(ws.residual().data() == data);
    spk_test::check_converged(r1, host_a, bh, spk_test::to_vector(x), 1e-8);
    Kokkos::deep_copy(x, 0.0);
    const auto m = spk::make_jacobi(a);
    const auto r2 = spk::bicgstab(a, b, x, {}, m, ws);
    CHECK(ws.residual().data() == data);
    CHECK(ws.memory_bytes() == 7 * n * sizeof(double));
    spk_test::check_converged(r2, host_a, bh, spk_test::to_vector(x), 1e-8);
    Kokkos::deep_copy(x, 0.0);
    const auto r3 = spk::bicgstab(a, b, x, {}, m, ws);
    CHECK(r3.iterations == r2.iterations);
    CHECK(r3.residual_norm == r2.residual_norm);
  }
}
TEST_CASE_TEMPLATE_APPLY(bicgstab_edges, spk_test::all_devices);
