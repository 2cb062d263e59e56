// spk/impl/krylov_kernels.hpp: the fused vector kernels of spk::cg and spk::bicgstab, and the
// host-side checks and scalar helpers they share. Each kernel does all the vector updates of one
// step of its solver in one pass over the vectors, with the preconditioner applied pointwise,
// and reduces the sums that step needs (norms and conjugated dot products, accumulated in
// double) into one small array brought to the host: one synchronisation per reduction kernel.
#pragma once

#include <Kokkos_Core.hpp>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <spk/error.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/radix_sort.hpp>
#include <spk/scalar.hpp>

namespace spk {
namespace impl {

// --- device helpers ----------------------------------------------------------------------------

/// Number of doubles of a dot product of S: 1 (real) or 2 (real and imaginary part).
template <class S>
KOKKOS_INLINE_FUNCTION constexpr unsigned dot_count() {
  return scalar_traits<S>::is_complex ? 2u : 1u;
}

/// acc[0] (+ i acc[1] for complex S) += conj(a) * b.
template <class S>
KOKKOS_INLINE_FUNCTION void add_dot(double* acc, const S& a, const S& b) {
  using t = scalar_traits<S>;
  const double ar = t::real(a), ai = t::imag(a), br = t::real(b), bi = t::imag(b);
  acc[0] += ar * br + ai * bi;
  if (t::is_complex) acc[1] += ar * bi - ai * br;
}

/// |a|^2.
template <class S>
KOKKOS_INLINE_FUNCTION double abs2(const S& a) {
  using t = scalar_traits<S>;
  const double ar = t::real(a), ai = t::imag(a);
  return ar * ar + ai * ai;
}

// --- host side -------------------------------------------------------------------------------

/// Runs the reduction functor f over [0, n) on ExecSpace and stores its value_count sums in
/// out[0 .. value_count) on the host (blocks until they are there).
template <class ExecSpace, class Functor>
void reduce_to_host(const char* name, std::int64_t n, const Functor& f, double* out) {
  Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> result(out, f.value_count);
  Kokkos::parallel_reduce(name, Range64<ExecSpace>(0, n), f, result);
}

/// Checks the vector types of a solver call against the operator's value type and device.
template <class S, class Device, class BView, class XView>
constexpr bool check_solver_vectors() {
  static_assert(Kokkos::is_view<BView>::value && Kokkos::is_view<XView>::value,
                "spk solvers: b and x must be Kokkos::Views");
  static_assert(BView::rank == 1 && XView::rank == 1, "spk solvers: b and x must be rank-1 views");
  static_assert(std::is_same<typename XView::value_type, S>::value,
                "spk solvers: x must hold non-const values of the operator's value type");
  static_assert(std::is_same<typename BView::non_const_value_type, S>::value,
                "spk solvers: b must hold values of the operator's value type");
  static_assert(std::is_same<typename XView::memory_space, memory_space_t<Device>>::value &&
                    std::is_same<typename BView::memory_space, memory_space_t<Device>>::value,
                "spk solvers: b and x must live in the matrix's memory space");
  return true;
}

/// Throws std::invalid_argument unless the operator is square and b, x match it.
template <class Op>
void check_solver_sizes(const char* where, const Op& op, std::size_t nb, std::size_t nx) {
  require(op.nrows() == op.ncols(), where, "the operator is ", op.nrows(), " x ", op.ncols(),
          "; the solver needs a square one");
  require(nb == std::size_t(op.nrows()), where, "b has ", nb, " entries, the operator ", op.nrows(),
          " rows");
  require(nx == std::size_t(op.ncols()), where, "x has ", nx, " entries, the operator ", op.ncols(),
          " columns");
}

/// The scalar of type S with the given value (real part only for real S).
template <class S>
S to_scalar(const std::complex<double>& z) {
  return scalar_traits<S>::make(z.real(), z.imag());
}

/// The dot product of a reduction's sums (real, or real and imaginary part).
template <class S>
std::complex<double> dot_of(const double* sums) {
  return std::complex<double>(sums[0], scalar_traits<S>::is_complex ? sums[1] : 0.0);
}

/// True when both parts are finite.
inline bool finite(const std::complex<double>& z) {
  return std::isfinite(z.real()) && std::isfinite(z.imag());
}

// --- shared kernels ----------------------------------------------------------------------------

/// Sums: a^H b (dot_count<S> doubles).
template <class S, class Vec>
struct DotKernel {
  using value_type = double[];
  Vec a, b;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, double* acc) const {
    add_dot(acc, a(i), b(i));
  }
  unsigned value_count = dot_count<S>();
};

/// x += alpha y.
template <class S, class Vec>
struct AxpyKernel {
  Vec x, y;
  S alpha;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const { x(i) = x(i) + alpha * y(i); }
};

// --- CG ----------------------------------------------------------------------------------------

/// On entry r = A x. r = b - r; p = M r. Sums: ||b||^2, ||r||^2, then r^H M r (dot_count<S>;
/// only for a preconditioned solve, where it differs from ||r||^2).
template <class S, class P, class Vec, class ConstVec>
struct CgStartKernel {
  using value_type = double[];
  ConstVec b;
  Vec r, p;
  P m;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, double* acc) const {
    const S bi = b(i);
    const S ri = bi - r(i);
    const S zi = m.apply(i, ri);
    r(i) = ri;
    p(i) = zi;
    acc[0] += abs2(bi);
    acc[1] += abs2(ri);
    if (!P::is_identity) add_dot(acc + 2, ri, zi);
  }
  unsigned value_count = 2 + (P::is_identity ? 0 : dot_count<S>());
};

/// x += alpha p; r -= alpha q. Sums: ||r||^2, then r^H M r when preconditioned.
template <class S, class P, class Vec>
struct CgUpdateKernel {
  using value_type = double[];
  Vec x, r, p, q;
  P m;
  S alpha;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, double* acc) const {
    x(i) = x(i) + alpha * p(i);
    const S ri = r(i) - alpha * q(i);
    r(i) = ri;
    acc[0] += abs2(ri);
    if (!P::is_identity) add_dot(acc + 1, ri, m.apply(i, ri));
  }
  unsigned value_count = 1 + (P::is_identity ? 0 : dot_count<S>());
};

/// p = M r + beta p.
template <class S, class P, class Vec>
struct CgDirectionKernel {
  Vec r, p;
  P m;
  S beta;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    p(i) = m.apply(i, r(i)) + beta * p(i);
  }
};

// --- BiCGSTAB ----------------------------------------------------------------------------------

/// On entry r = A x. r = b - r; r_hat = r. Sums: ||b||^2, ||r||^2.
template <class S, class Vec, class ConstVec>
struct BicgstabStartKernel {
  using value_type = double[];
  ConstVec b;
  Vec r, r_hat;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, double* acc) const {
    const S bi = b(i);
    const S ri = bi - r(i);
    r(i) = ri;
    r_hat(i) = ri;
    acc[0] += abs2(bi);
    acc[1] += abs2(ri);
  }
  unsigned value_count = 2;
};

/// p = r (first iteration) or p = r + beta (p - omega v); p_hat = M p when preconditioned (else
/// p_hat is p).
template <class S, class P, class Vec>
struct BicgstabDirectionKernel {
  Vec r, p, v, p_hat;
  P m;
  S beta, omega;
  bool first;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    const S pi = first ? r(i) : r(i) + beta * (p(i) - omega * v(i));
    p(i) = pi;
    if (!P::is_identity) p_hat(i) = m.apply(i, pi);
  }
};

/// s = r - alpha v, stored in r; s_hat = M s when preconditioned (else s_hat is r).
template <class S, class P, class Vec>
struct BicgstabHalfKernel {
  Vec r, v, s_hat;
  P m;
  S alpha;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    const S si = r(i) - alpha * v(i);
    r(i) = si;
    if (!P::is_identity) s_hat(i) = m.apply(i, si);
  }
};

/// Sums: t^H s (dot_count<S>), ||t||^2, ||s||^2 (s stored in r).
template <class S, class Vec>
struct BicgstabOmegaKernel {
  using value_type = double[];
  Vec t, s;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, double* acc) const {
    const S ti = t(i), si = s(i);
    add_dot(acc, ti, si);
    acc[dot_count<S>()] += abs2(ti);
    acc[dot_count<S>() + 1] += abs2(si);
  }
  unsigned value_count = dot_count<S>() + 2;
};

/// x += alpha p_hat + omega s_hat; r = s - omega t (s stored in r). Sums: ||r||^2, then
/// r_hat^H r (dot_count<S>).
template <class S, class P, class Vec>
struct BicgstabUpdateKernel {
  using value_type = double[];
  Vec x, r, r_hat, t, p_hat, s_hat;
  S alpha, omega;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, double* acc) const {
    const S si = r(i);
    const S shi = P::is_identity ? si : s_hat(i);
    x(i) = x(i) + alpha * p_hat(i) + omega * shi;
    const S ri = si - omega * t(i);
    r(i) = ri;
    acc[0] += abs2(ri);
    add_dot(acc + 1, r_hat(i), ri);
  }
  unsigned value_count = 1 + dot_count<S>();
};

}  // namespace impl
}  // namespace spk
