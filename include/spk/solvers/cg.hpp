// spk/solvers/cg.hpp: the conjugate gradient method (Hestenes and Stiefel 1952) for Hermitian
// positive definite systems A x = b, optionally preconditioned by a pointwise preconditioner
// (spk::JacobiPreconditioner), on any spk matrix or user operator
// (spk/solvers/linear_operator.hpp).
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

/// The work vectors of spk::cg (r, p, A p: three vectors of n entries on Device), allocated on
/// first use and kept between solves of the same size, so a caller solving repeatedly (a
/// benchmark) allocates once.
template <class Scalar, class Device = Kokkos::DefaultExecutionSpace>
class CgWorkspace {
 public:
  using value_type = Scalar;
  using device_type = impl::device_t<Device>;
  using vector_type = Kokkos::View<Scalar*, device_type>;

  CgWorkspace() = default;
  /// Allocates the vectors for n unknowns.
  explicit CgWorkspace(std::int64_t n) { resize(n); }

  /// Reallocates the vectors unless they already have n entries.
  void resize(std::int64_t n) {
    require(n >= 0, "spk::CgWorkspace", "n = ", n, " must be >= 0");
    if (allocated_ && std::int64_t(r_.extent(0)) == n) return;
    const auto alloc = [n](const char* label) {
      return vector_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)),
                         std::size_t(n));
    };
    r_ = alloc("spk::cg::r");
    p_ = alloc("spk::cg::p");
    q_ = alloc("spk::cg::q");
    allocated_ = true;
  }

  /// Number of unknowns the vectors hold (0 before the first use).
  std::int64_t size() const { return std::int64_t(r_.extent(0)); }
  /// Bytes of the work vectors.
  std::size_t memory_bytes() const { return 3 * r_.extent(0) * sizeof(Scalar); }

  /// The residual b - A x of the last solve (as updated by the recurrence).
  const vector_type& residual() const { return r_; }
  const vector_type& direction() const { return p_; }
  const vector_type& product() const { return q_; }

 private:
  vector_type r_, p_, q_;
  bool allocated_ = false;
};

namespace impl {

template <class Op, class S, class Device, class P, class WsDevice>
SolverResult cg_solve(const Op& op, const Kokkos::View<const S*, Device>& b,
                      const Kokkos::View<S*, Device>& x, const SolverOptions& opts, const P& m,
                      CgWorkspace<S, WsDevice>& ws) {
  using exec = typename Device::execution_space;
  using Vec = Kokkos::View<S*, Device>;
  using ConstVec = Kokkos::View<const S*, Device>;
  const char* where = "spk::cg";
  check_solver_options(where, opts);
  check_solver_sizes(where, op, b.extent(0), x.extent(0));
  const std::int64_t n = std::int64_t(b.extent(0));
  check_preconditioner<exec>(where, m, n);
  ws.resize(n);
  const Vec r = ws.residual(), p = ws.direction(), q = ws.product();
  constexpr unsigned dc = dot_count<S>();

  // r = b - A x, p = M r; ||b||, ||r||, r^H M r
  op.apply(ConstVec(x), r);
  double start[2 + dc];
  reduce_to_host<exec>("spk::cg::start", n, CgStartKernel<S, P, Vec, ConstVec>{b, r, p, m}, start);
  const double b_norm = std::sqrt(start[0]);
  ResultBuilder res(opts, b_norm);
  if (b_norm == 0) {
    Kokkos::deep_copy(x, scalar_traits<S>::zero());
    res.record(0, 0.0);
    return res.finish(StopReason::zero_rhs, "b = 0, so x = 0");
  }
  const double target = residual_target(opts, b_norm);
  double r_norm = std::sqrt(start[1]);
  std::complex<double> rz = P::is_identity ? std::complex<double>(start[1]) : dot_of<S>(start + 2);
  res.record(0, r_norm);
  if (!std::isfinite(r_norm) || !std::isfinite(b_norm) || !finite(rz))
    return res.finish(StopReason::non_finite, "||b|| = ", b_norm, ", ||b - A x0|| = ", r_norm);
  if (r_norm <= target)
    return res.finish(StopReason::converged, "||r|| = ", r_norm, " <= ", target, " at x0");

  for (int k = 1; k <= opts.max_iterations; ++k) {
    op.apply(ConstVec(p), q);
    double pq_sums[dc];
    reduce_to_host<exec>("spk::cg::pAp", n, DotKernel<S, Vec>{p, q}, pq_sums);
    const std::complex<double> pq = dot_of<S>(pq_sums);
    if (!finite(pq))
      return res.finish(StopReason::non_finite, "(p, A p) = ", pq, " at iteration ", k);
    if (!(pq.real() > 0))
      return res.finish(StopReason::not_positive, "(p, A p) = ", pq.real(), " at iteration ", k,
                        "; the operator is not positive definite");
    const std::complex<double> alpha = rz / pq;
    double upd[1 + dc];
    reduce_to_host<exec>("spk::cg::update", n,
                         CgUpdateKernel<S, P, Vec>{x, r, p, q, m, to_scalar<S>(alpha)}, upd);
    r_norm = std::sqrt(upd[0]);
    res.record(k, r_norm);
    const std::complex<double> rz_new =
        P::is_identity ? std::complex<double>(upd[0]) : dot_of<S>(upd + 1);
    if (!std::isfinite(r_norm) || !finite(rz_new))
      return res.finish(StopReason::non_finite, "||r|| = ", r_norm, " at iteration ", k);
    if (r_norm <= target)
      return res.finish(StopReason::converged, "||r|| = ", r_norm, " <= ", target, " after ", k,
                        " iterations");
    const std::complex<double> beta = rz_new / rz;
    rz = rz_new;
    Kokkos::parallel_for("spk::cg::direction", Range64<exec>(0, n),
                         CgDirectionKernel<S, P, Vec>{r, p, m, to_scalar<S>(beta)});
  }
  return res.finish(StopReason::max_iterations, "||r|| / ||b|| = ", r_norm / b_norm, " after ",
                    opts.max_iterations, " iterations (target ", target / b_norm, ")");
}

}  // namespace impl

/// Solves A x = b by conjugate gradients, A Hermitian positive definite: an spk matrix (any
/// format with an spmv overload) or an operator from spk::make_operator. x (a rank-1 view in
/// A's memory space, or of the operator's device) is the initial guess on entry and the last
/// iterate on return; b is not modified. `m` is a pointwise preconditioner
/// (IdentityPreconditioner or JacobiPreconditioner, itself Hermitian positive definite);
/// `workspace` holds the work vectors (reused between solves of the same size).
///
/// Stops when ||r|| <= max(relative_tolerance ||b||, absolute_tolerance) (converged), after
/// max_iterations, when (p, A p) <= 0 (not_positive) or on NaN/infinity (non_finite); none of
/// these throws. b = 0 gives x = 0 at once. Per iteration: one operator application, three fused
/// vector kernels, two reductions (one synchronisation each). Throws std::invalid_argument for
/// invalid options or sizes (A not square, b, x or m not of A's size).
template <class Op, class BView, class XView, class Precond, class S, class D>
SolverResult cg(const Op& a, const BView& b, const XView& x, const SolverOptions& options,
                const Precond& m, CgWorkspace<S, D>& workspace) {
  using traits = impl::solver_operator<Op, XView>;
  using Device = typename traits::device_type;
  static_assert(impl::check_solver_vectors<typename traits::value_type, Device, BView, XView>(),
                "spk::cg: invalid vector types");
  static_assert(std::is_same<S, typename traits::value_type>::value &&
                    std::is_same<impl::device_t<D>, Device>::value,
                "spk::cg: the workspace must have the operator's value type and device");
  return impl::cg_solve(traits::make(a), Kokkos::View<const S*, Device>(b),
                        Kokkos::View<S*, Device>(x), options, m, workspace);
}

/// spk::cg with preconditioner `m` and work vectors allocated for this solve.
template <class Op, class BView, class XView, class Precond>
SolverResult cg(const Op& a, const BView& b, const XView& x, const SolverOptions& options,
                const Precond& m) {
  using traits = impl::solver_operator<Op, XView>;
  CgWorkspace<typename traits::value_type, typename traits::device_type> ws;
  return cg(a, b, x, options, m, ws);
}

/// spk::cg without preconditioner.
template <class Op, class BView, class XView>
SolverResult cg(const Op& a, const BView& b, const XView& x, const SolverOptions& options = {}) {
  return cg(a, b, x, options, IdentityPreconditioner{});
}

}  // namespace spk
