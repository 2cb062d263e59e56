// Shared checks of the solver tests (CG, BiCGSTAB): the true residual of a solution computed on
// the host with the sequential reference SpMV, the bookkeeping of a SolverResult, the shared
// real matrices by name, and a loop over the operators a solve is tested through (CSR, HLL, DIA,
// a user operator).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <spk/convert.hpp>
#include <spk/formats/dia.hpp>
#include <spk/formats/hll.hpp>
#include <spk/io/matrix_market.hpp>
#include <spk/reference.hpp>
#include <spk/solvers/jacobi.hpp>
#include <spk/solvers/linear_operator.hpp>
#include <spk/solvers/solver_options.hpp>
#include <spk/spmv.hpp>

#include "format_checks.hpp"
#include "test_common.hpp"

namespace spk_test {

/// ||v||_2 of a host vector.
template <class S>
double norm2(const std::vector<S>& v) {
  double s = 0;
  for (const S& x : v) s += double(spk::scalar_traits<S>::abs(x)) * spk::scalar_traits<S>::abs(x);
  return std::sqrt(s);
}

/// ||b - A x|| / ||b|| (||b - A x|| when b = 0), computed on the host by spk::reference::spmv,
/// independently of the solver.
template <class S, class O>
double true_relative_residual(const HostCsr<S, O>& a, const std::vector<S>& b,
                              const std::vector<S>& x) {
  using traits = spk::scalar_traits<S>;
  std::vector<S> r = b;
  spk::reference::spmv(spk::Mode::N, traits::make(-1.0), a, x, traits::one(), r);
  const double nb = norm2(b);
  return nb > 0 ? norm2(r) / nb : norm2(r);
}

/// Checks the bookkeeping of a result: history of iterations + 1 entries ending with
/// residual_norm, relative_residual = residual_norm / ||b||, converged matching the reason.
inline void check_bookkeeping(const spk::SolverResult& r, double b_norm) {
  INFO("reason " << spk::to_string(r.reason) << ": " << r.message);
  REQUIRE(r.history.size() == std::size_t(r.iterations) + 1);
  CHECK(r.history.back() == r.residual_norm);
  CHECK(r.rhs_norm == doctest::Approx(b_norm).epsilon(1e-5));
  if (b_norm > 0) CHECK(r.relative_residual == doctest::Approx(r.residual_norm / r.rhs_norm));
  CHECK(r.converged ==
        (r.reason == spk::StopReason::converged || r.reason == spk::StopReason::zero_rhs));
  CHECK(!r.message.empty());
}

/// Checks a solve that must converge: the result says so within the tolerance, its bookkeeping
/// holds, and the true residual of x (on the host) is within `slack` x tol.
template <class S, class O>
void check_converged(const spk::SolverResult& r, const HostCsr<S, O>& a, const std::vector<S>& b,
                     const std::vector<S>& x, double tol, double slack = 10) {
  INFO("reason " << spk::to_string(r.reason) << ": " << r.message);
  CHECK(r.converged);
  CHECK(r.reason == spk::StopReason::converged);
  CHECK(r.relative_residual <= tol);
  check_bookkeeping(r, norm2(b));
  const double true_res = true_relative_residual(a, b, x);
  INFO("true relative residual " << true_res << ", solver's " << r.relative_residual
                                 << ", iterations " << r.iterations);
  CHECK(true_res <= slack * tol);
}

/// The shared matrix `file` (under data_dir()/matrices) in CSR on the host, symmetric storage
/// expanded.
template <class S>
HostCsr<S, int> shared_matrix(const std::string& file) {
  const auto coo = spk::io::read_matrix_market_coo<S, int, int>(data_dir() + "/matrices/" + file);
  return spk::to_host(spk::coo_to_csr(coo));
}

/// The operators a solve is run through for host_a on Device: "csr", "hll", "dia" (when DIA
/// accepts the matrix under its default padding limit with at most 4 slots per entry) and
/// "operator" (a user callable calling
/// spk::spmv on the CSR matrix). Calls run(name, op, jacobi) for each, with jacobi the Jacobi
/// preconditioner built from that operator's own matrix (from the CSR one for the callable).
template <class Device, class S, class Run>
void for_each_operator(const HostCsr<S, int>& host_a, const Run& run) {
  using Csr = spk::CsrMatrix<S, int, int, Device>;
  const Csr a = spk::copy_to<Device>(host_a);
  run("csr", a, spk::make_jacobi(a));
  const spk::HllMatrix<S, int, int, Device> hll(a);
  run("hll", hll, spk::make_jacobi(hll));
  try {
    const spk::DiaMatrix<S, int, int, Device> dia(a);
    // far from a banded shape (e.g. bcsstk15: 20x more slots than entries) a DIA solve costs
    // seconds on the host and tests nothing the banded cases do not
    if (dia.padding_ratio() <= 4)
      run("dia", dia, spk::make_jacobi(dia));
    else
      MESSAGE("dia skipped: padding ratio " << dia.padding_ratio());
  } catch (const spk::PaddingLimitExceeded&) {
    MESSAGE("dia refuses the matrix by its padding limit");
  }
  const auto op = spk::make_operator(a.nrows(), [a](const auto& x, const auto& y) {
    spk::spmv(spk::Mode::N, spk::scalar_traits<S>::one(), a, x, spk::scalar_traits<S>::zero(), y);
  });
  run("operator", op, spk::make_jacobi(a));
}

/// A random sparse n x n complex matrix, strictly diagonally dominant by rows: Hermitian
/// positive definite when `hermitian` (B + B^H plus a positive diagonal), else non-Hermitian
/// (B plus a complex diagonal). About `per_row` off-diagonal entries per row.
template <class S>
HostCsr<S, int> random_dominant(int n, int per_row, bool hermitian, std::uint64_t seed) {
  using traits = spk::scalar_traits<S>;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> col(0, n - 1);
  std::vector<double> row_sum(std::size_t(n), 0.0);
  spk::CooBuilder<S, int, int> b(n, n);
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < per_row; ++k) {
      const int j = col(rng);
      if (j == i) continue;
      const S v = random_value<S>(rng);
      b.add(i, j, v);
      row_sum[std::size_t(i)] += traits::abs(v);
      if (hermitian) {
        b.add(j, i, traits::conj(v));
        row_sum[std::size_t(j)] += traits::abs(v);
      }
    }
  }
  for (int i = 0; i < n; ++i) {
    const double d = row_sum[std::size_t(i)] + 1.0;
    b.add(i, i, traits::make(d, hermitian ? 0.0 : 0.5 * d));
  }
  return spk::to_host(spk::coo_to_csr(b.template build<spk::impl::HostDevice>()));
}

/// b = A x on the host (by the reference SpMV).
template <class S, class O>
std::vector<S> host_product(const HostCsr<S, O>& a, const std::vector<S>& x) {
  std::vector<S> y(std::size_t(a.nrows()), spk::scalar_traits<S>::zero());
  spk::reference::spmv(spk::Mode::N, spk::scalar_traits<S>::one(), a, x,
                       spk::scalar_traits<S>::zero(), y);
  return y;
}

}  // namespace spk_test
