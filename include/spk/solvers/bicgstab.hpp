// spk/solvers/bicgstab.hpp: BiCGSTAB (van der Vorst 1992) for general non-singular systems
// A x = b, right-preconditioned by a pointwise preconditioner (spk::JacobiPreconditioner), on
// any spk matrix or user operator (spk/solvers/linear_operator.hpp).
#pragma once

#include <Kokkos_Core.hpp>
#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

#include <spk/error.hpp>
#include <spk/impl/krylov_kernels.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/scalar.hpp>
#include <spk/solvers/jacobi.hpp>
#include <spk/solvers/linear_operator.hpp>
#include <spk/solvers/solver_options.hpp>

namespace spk {

/// The work vectors of spk::bicgstab on Device: r (which also holds s), r_hat, p, v = A p_hat,
/// t = A s_hat, and for a preconditioned solve p_hat = M p and s_hat = M s (five or seven
/// vectors of n entries). Allocated on first use and kept between solves of the same size.
template <class Scalar, class Device = Kokkos::DefaultExecutionSpace>
class BicgstabWorkspace {
 public:
  using value_type = Scalar;
  using device_type = impl::device_t<Device>;
  using vector_type = Kokkos::View<Scalar*, device_type>;

  BicgstabWorkspace() = default;
  /// Allocates the vectors for n unknowns (with the two of a preconditioned solve or not).
  explicit BicgstabWorkspace(std::int64_t n, bool preconditioned = false) {
    resize(n, preconditioned);
  }

  /// Reallocates the vectors unless they already have n entries; allocates p_hat and s_hat
  /// when `preconditioned` and they are missing.
  void resize(std::int64_t n, bool preconditioned) {
    require(n >= 0, "spk::BicgstabWorkspace", "n = ", n, " must be >= 0");
    const auto alloc = [n](const char* label) {
      return vector_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)),
                         std::size_t(n));
    };
    if (!allocated_ || std::int64_t(r_.extent(0)) != n) {
      r_ = alloc("spk::bicgstab::r");
      r_hat_ = alloc("spk::bicgstab::r_hat");
      p_ = alloc("spk::bicgstab::p");
      v_ = alloc("spk::bicgstab::v");
      t_ = alloc("spk::bicgstab::t");
      p_hat_ = s_hat_ = vector_type();
      has_hat_ = false;
      allocated_ = true;
    }
    if (preconditioned && !has_hat_) {
      p_hat_ = alloc("spk::bicgstab::p_hat");
      s_hat_ = alloc("spk::bicgstab::s_hat");
      has_hat_ = true;
    }
  }

  /// Number of unknowns the vectors hold (0 before the first use).
  std::int64_t size() const { return std::int64_t(r_.extent(0)); }
  /// Bytes of the work vectors.
  std::size_t memory_bytes() const { return (has_hat_ ? 7 : 5) * r_.extent(0) * sizeof(Scalar); }

  /// The residual b - A x of the last solve (as updated by the recurrence).
  const vector_type& residual() const { return r_; }
  const vector_type& shadow_residual() const { return r_hat_; }
  const vector_type& direction() const { return p_; }
  const vector_type& v() const { return v_; }
  const vector_type& t() const { return t_; }
  const vector_type& preconditioned_direction() const { return p_hat_; }
  const vector_type& preconditioned_s() const { return s_hat_; }

 private:
  vector_type r_, r_hat_, p_, v_, t_, p_hat_, s_hat_;
  bool allocated_ = false, has_hat_ = false;
};

namespace impl {

template <class Op, class S, class Device, class P, class WsDevice>
SolverResult bicgstab_solve(const Op& op, const Kokkos::View<const S*, Device>& b,
                            const Kokkos::View<S*, Device>& x, const SolverOptions& opts,
                            const P& m, BicgstabWorkspace<S, WsDevice>& ws) {
  using exec = typename Device::execution_space;
  using Vec = Kokkos::View<S*, Device>;
  using ConstVec = Kokkos::View<const S*, Device>;
  using cplx = std::complex<double>;
  const char* where = "spk::bicgstab";
  check_solver_options(where, opts);
  check_solver_sizes(where, op, b.extent(0), x.extent(0));
  const std::int64_t n = std::int64_t(b.extent(0));
  check_preconditioner<exec>(where, m, n);
  ws.resize(n, !P::is_identity);
  const Vec r = ws.residual(), r_hat = ws.shadow_residual(), p = ws.direction(), v = ws.v(),
            t = ws.t();
  // without preconditioner p_hat is p and s_hat is s (held in r)
  const Vec p_hat = P::is_identity ? p : ws.preconditioned_direction();
  const Vec s_hat = P::is_identity ? r : ws.preconditioned_s();
  constexpr unsigned dc = dot_count<S>();

  // r = b - A x, r_hat = r; ||b||, ||r||
  op.apply(ConstVec(x), r);
  double start[2];
  reduce_to_host<exec>("spk::bicgstab::start", n,
                       BicgstabStartKernel<S, Vec, ConstVec>{b, r, r_hat}, start);
  const double b_norm = std::sqrt(start[0]);
  ResultBuilder res(opts, b_norm);
  if (b_norm == 0) {
    Kokkos::deep_copy(x, scalar_traits<S>::zero());
    res.record(0, 0.0);
    return res.finish(StopReason::zero_rhs, "b = 0, so x = 0");
  }
  const double target = residual_target(opts, b_norm);
  double r_norm = std::sqrt(start[1]);
  res.record(0, r_norm);
  if (!std::isfinite(r_norm) || !std::isfinite(b_norm))
    return res.finish(StopReason::non_finite, "||b|| = ", b_norm, ", ||b - A x0|| = ", r_norm);
  if (r_norm <= target)
    return res.finish(StopReason::converged, "||r|| = ", r_norm, " <= ", target, " at x0");

  cplx rho(start[1]), rho_old(1), alpha(1), omega(1);
  const auto axpy = [&](const cplx& a, const Vec& y) {
    Kokkos::parallel_for("spk::bicgstab::axpy", Range64<exec>(0, n),
                         AxpyKernel<S, Vec>{x, y, to_scalar<S>(a)});
  };
  for (int k = 1; k <= opts.max_iterations; ++k) {
    if (rho == cplx(0))
      return res.finish(StopReason::breakdown_rho, "rho = (r_hat, r) = 0 at iteration ", k,
                        " (||r|| = ", r_norm, ")");
    // p = r + beta (p - omega v), p_hat = M p; v = A p_hat; alpha = rho / (r_hat, v)
    const cplx beta = k == 1 ? cplx(0) : (rho / rho_old) * (alpha / omega);
    Kokkos::parallel_for("spk::bicgstab::direction", Range64<exec>(0, n),
                         BicgstabDirectionKernel<S, P, Vec>{r, p, v, p_hat, m, to_scalar<S>(beta),
                                                            to_scalar<S>(omega), k == 1});
    op.apply(ConstVec(p_hat), v);
    double rv_sums[dc];
    reduce_to_host<exec>("spk::bicgstab::rv", n, DotKernel<S, Vec>{r_hat, v}, rv_sums);
    const cplx rv = dot_of<S>(rv_sums);
    if (!finite(rv))
      return res.finish(StopReason::non_finite, "(r_hat, A p) = ", rv, " at iteration ", k);
    if (rv == cplx(0))
      return res.finish(StopReason::breakdown_alpha, "(r_hat, A p) = 0 at iteration ", k,
                        " (rho = ", rho, ")");
    alpha = rho / rv;
    // s = r - alpha v (in r), s_hat = M s; t = A s_hat; (t, s), ||t||, ||s||
    Kokkos::parallel_for("spk::bicgstab::half", Range64<exec>(0, n),
                         BicgstabHalfKernel<S, P, Vec>{r, v, s_hat, m, to_scalar<S>(alpha)});
    op.apply(ConstVec(s_hat), t);
    double ts_sums[dc + 2];
    reduce_to_host<exec>("spk::bicgstab::omega", n, BicgstabOmegaKernel<S, Vec>{t, r}, ts_sums);
    const cplx ts = dot_of<S>(ts_sums);
    const double tt = ts_sums[dc];
    const double s_norm = std::sqrt(ts_sums[dc + 1]);
    if (!finite(ts) || !std::isfinite(tt) || !std::isfinite(s_norm))
      return res.finish(StopReason::non_finite, "(t, s) = ", ts, ", (t, t) = ", tt,
                        ", ||s|| = ", s_norm, " at iteration ", k);
    if (s_norm <= target) {  // converged at the half step: x += alpha p_hat
      axpy(alpha, p_hat);
      res.record(k, s_norm);
      return res.finish(StopReason::converged, "||s|| = ", s_norm, " <= ", target, " after ", k,
                        " iterations (half step)");
    }
    if (tt == 0 || ts == cplx(0)) {  // keep the half step; omega would be 0 or undefined
      axpy(alpha, p_hat);
      res.record(k, s_norm);
      return res.finish(StopReason::breakdown_omega, "omega = (t, s) / (t, t) = ", ts, " / ", tt,
                        " at iteration ", k, " (||s|| = ", s_norm, ")");
    }
    omega = ts / tt;
    // x += alpha p_hat + omega s_hat; r = s - omega t; ||r||, rho = (r_hat, r)
    double upd[1 + dc];
    reduce_to_host<exec>("spk::bicgstab::update", n,
                         BicgstabUpdateKernel<S, P, Vec>{x, r, r_hat, t, p_hat, s_hat,
                                                         to_scalar<S>(alpha), to_scalar<S>(omega)},
                         upd);
    r_norm = std::sqrt(upd[0]);
    res.record(k, r_norm);
    rho_old = rho;
    rho = dot_of<S>(upd + 1);
    if (!std::isfinite(r_norm) || !finite(rho))
      return res.finish(StopReason::non_finite, "||r|| = ", r_norm, ", rho = ", rho,
                        " at iteration ", k);
    if (r_norm <= target)
      return res.finish(StopReason::converged, "||r|| = ", r_norm, " <= ", target, " after ", k,
                        " iterations");
  }
  return res.finish(StopReason::max_iterations, "||r|| / ||b|| = ", r_norm / b_norm, " after ",
                    opts.max_iterations, " iterations (target ", target / b_norm, ")");
}

}  // namespace impl

/// Solves A x = b by BiCGSTAB, A square and non-singular: an spk matrix (any format with an
/// spmv overload) or an operator from spk::make_operator. x (a rank-1 view in A's memory space,
/// or of the operator's device) is the initial guess on entry and the last iterate on return;
/// b is not modified. `m` is a pointwise preconditioner (IdentityPreconditioner or
/// JacobiPreconditioner) applied on the right, so the residual is that of the original system;
/// `workspace` holds the work vectors (reused between solves of the same size).
///
/// Stops when ||r|| <= max(relative_tolerance ||b||, absolute_tolerance) (converged; also
/// checked on s at the half step, which then counts as the iteration), after max_iterations,
/// on a breakdown (rho = (r_hat, r) = 0, (r_hat, A p) = 0, or omega = (t, s) / (t, t) = 0 or
/// undefined; x keeps the last complete update) or on NaN/infinity (non_finite); none of these
/// throws. b = 0 gives x = 0 at once. Per iteration: two operator applications, five fused
/// vector kernels, three reductions (one synchronisation each). Throws std::invalid_argument for
/// invalid options or sizes (A not square, b, x or m not of A's size).
template <class Op, class BView, class XView, class Precond, class S, class D>
SolverResult bicgstab(const Op& a, const BView& b, const XView& x, const SolverOptions& options,
                      const Precond& m, BicgstabWorkspace<S, D>& workspace) {
  using traits = impl::solver_operator<Op, XView>;
  using Device = typename traits::device_type;
  static_assert(impl::check_solver_vectors<typename traits::value_type, Device, BView, XView>(),
                "spk::bicgstab: invalid vector types");
  static_assert(std::is_same<S, typename traits::value_type>::value &&
                    std::is_same<impl::device_t<D>, Device>::value,
                "spk::bicgstab: the workspace must have the operator's value type and device");
  return impl::bicgstab_solve(traits::make(a), Kokkos::View<const S*, Device>(b),
                              Kokkos::View<S*, Device>(x), options, m, workspace);
}

/// spk::bicgstab with preconditioner `m` and work vectors allocated for this solve.
template <class Op, class BView, class XView, class Precond>
SolverResult bicgstab(const Op& a, const BView& b, const XView& x, const SolverOptions& options,
                      const Precond& m) {
  using traits = impl::solver_operator<Op, XView>;
  BicgstabWorkspace<typename traits::value_type, typename traits::device_type> ws;
  return bicgstab(a, b, x, options, m, ws);
}

/// spk::bicgstab without preconditioner.
template <class Op, class BView, class XView>
SolverResult bicgstab(const Op& a, const BView& b, const XView& x,
                      const SolverOptions& options = {}) {
  return bicgstab(a, b, x, options, IdentityPreconditioner{});
}

}  // namespace spk
