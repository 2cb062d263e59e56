// spk/solvers/solver_options.hpp: what every Krylov solver of spk takes and returns: the stopping
// rule (SolverOptions), why a solve stopped (StopReason) and its outcome (SolverResult).
#pragma once

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <spk/error.hpp>

namespace spk {

/// Stopping rule and bookkeeping of a Krylov solve. A solve has converged when the residual
/// norm ||r_k|| = ||b - A x_k||_2 (as updated by the recurrence) is at most
/// max(relative_tolerance * ||b||_2, absolute_tolerance).
struct SolverOptions {
  int max_iterations = 1000;         ///< iterations at most (>= 0; 0 only checks x0)
  double relative_tolerance = 1e-8;  ///< on ||r|| / ||b|| (>= 0, finite)
  double absolute_tolerance = 0.0;   ///< on ||r|| (>= 0, finite)
  bool record_history = true;        ///< keep ||r_k|| of every iteration in SolverResult::history
};

/// Why a solve stopped.
enum class StopReason {
  converged,        ///< the stopping rule of SolverOptions holds
  zero_rhs,         ///< b = 0: x was set to 0 (converged, 0 iterations)
  max_iterations,   ///< SolverOptions::max_iterations reached without converging
  breakdown_rho,    ///< BiCGSTAB: rho = (r_hat, r) = 0, the shadow residual is orthogonal to r
  breakdown_alpha,  ///< BiCGSTAB: (r_hat, A p) = 0, alpha is undefined
  breakdown_omega,  ///< BiCGSTAB: omega = (t, s) / (t, t) is 0 or undefined (t = A s)
  not_positive,     ///< CG: (p, A p) <= 0, the operator is not (Hermitian) positive definite
  non_finite,       ///< a reduction gave NaN or infinity (overflow or invalid input)
};

/// The name of a StopReason ("converged", "breakdown_rho", ...).
inline const char* to_string(StopReason r) {
  switch (r) {
    case StopReason::converged:
      return "converged";
    case StopReason::zero_rhs:
      return "zero_rhs";
    case StopReason::max_iterations:
      return "max_iterations";
    case StopReason::breakdown_rho:
      return "breakdown_rho";
    case StopReason::breakdown_alpha:
      return "breakdown_alpha";
    case StopReason::breakdown_omega:
      return "breakdown_omega";
    case StopReason::not_positive:
      return "not_positive";
    case StopReason::non_finite:
      return "non_finite";
  }
  return "unknown";
}

/// Outcome of a solve. A breakdown is not an exception: the solver stops, leaves its last
/// iterate in x and says why in `reason` and `message`.
struct SolverResult {
  bool converged = false;          ///< reason is converged or zero_rhs
  int iterations = 0;              ///< iterations done (each one or two operator applications)
  double residual_norm = 0.0;      ///< final ||r|| of the recurrence
  double relative_residual = 0.0;  ///< residual_norm / ||b|| (residual_norm when b = 0)
  double rhs_norm = 0.0;           ///< ||b||
  std::vector<double> history;     ///< ||r_0||, ..., ||r_iterations|| when recorded
  StopReason reason = StopReason::max_iterations;
  std::string message;  ///< one line naming the reason and the values involved
};

namespace impl {

/// Throws std::invalid_argument (naming the solver, the field and the value) for options no
/// solve can run with.
inline void check_solver_options(const char* where, const SolverOptions& o) {
  require(o.max_iterations >= 0, where, "SolverOptions::max_iterations = ", o.max_iterations,
          " must be >= 0");
  require(o.relative_tolerance >= 0 && std::isfinite(o.relative_tolerance), where,
          "SolverOptions::relative_tolerance = ", o.relative_tolerance, " must be >= 0 and finite");
  require(o.absolute_tolerance >= 0 && std::isfinite(o.absolute_tolerance), where,
          "SolverOptions::absolute_tolerance = ", o.absolute_tolerance, " must be >= 0 and finite");
}

/// The residual norm a solve must reach: max(relative_tolerance * ||b||, absolute_tolerance).
inline double residual_target(const SolverOptions& o, double rhs_norm) {
  const double rel = o.relative_tolerance * rhs_norm;
  return rel > o.absolute_tolerance ? rel : o.absolute_tolerance;
}

/// Result bookkeeping shared by the solvers: the history, the final figures and the reason.
class ResultBuilder {
 public:
  ResultBuilder(const SolverOptions& o, double rhs_norm) : record_(o.record_history) {
    r_.rhs_norm = rhs_norm;
  }

  /// Records ||r|| after `iterations` iterations.
  void record(int iterations, double residual_norm) {
    r_.iterations = iterations;
    r_.residual_norm = residual_norm;
    if (record_) r_.history.push_back(residual_norm);
  }

  /// The result, stopped for `reason` with a message built from the arguments.
  template <class... Args>
  SolverResult finish(StopReason reason, Args&&... what) {
    r_.reason = reason;
    r_.converged = reason == StopReason::converged || reason == StopReason::zero_rhs;
    r_.relative_residual = r_.rhs_norm > 0 ? r_.residual_norm / r_.rhs_norm : r_.residual_norm;
    r_.message = str_cat(to_string(reason), ": ", std::forward<Args>(what)...);
    return r_;
  }

 private:
  SolverResult r_;
  bool record_;
};

}  // namespace impl
}  // namespace spk
