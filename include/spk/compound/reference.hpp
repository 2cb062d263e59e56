// spk/compound/reference.hpp: the sequential host reference of the compound SpMV, written with
// the value types' own operators (spk/compound/entry.hpp), independently of entry_traits'
// component kernels.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include <spk/compound/entry.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>

namespace spk {
namespace reference {
namespace detail {

/// Euclidean norm of a value's components (Frobenius norm of a block).
template <class V>
double component_norm(const V& v) {
  using real = typename entry_traits<V>::real_type;
  static_assert(sizeof(V) % sizeof(real) == 0, "component_norm: not an array of reals");
  const real* p = reinterpret_cast<const real*>(&v);
  double s = 0;
  for (std::size_t c = 0; c < sizeof(V) / sizeof(real); ++c) s += double(p[c]) * double(p[c]);
  return std::sqrt(s);
}
template <class Real, int B>
double component_norm(const BlockVector<Real, B>& v) {
  double s = 0;
  for (int c = 0; c < B; ++c) s += double(v.v[c]) * double(v.v[c]);
  return std::sqrt(s);
}

/// s * v for a real scale factor, component-wise.
template <class V, class Real>
V scaled(Real s, V v) {
  Real* p = reinterpret_cast<Real*>(&v);
  for (std::size_t c = 0; c < sizeof(V) / sizeof(Real); ++c) p[c] *= s;
  return v;
}
template <class Real>
Kokkos::complex<Real> scaled(const Kokkos::complex<Real>& s, const Kokkos::complex<Real>& v) {
  return s * v;
}
inline double abs_scale(double s) { return std::abs(s); }
inline double abs_scale(float s) { return std::abs(double(s)); }
template <class Real>
double abs_scale(const Kokkos::complex<Real>& s) {
  return std::hypot(double(s.real()), double(s.imag()));
}

}  // namespace detail

/// y = alpha * A * x + beta * y for a CSR matrix of compound entries, sequentially on the host
/// with the value types' operators, in stored order. If `bound` is given it receives per row the
/// scale of any summation order's rounding error: (len + 2) * |alpha| * sum |a_ij| |x_j| +
/// 2 |beta| |y_i| (norms of components); a kernel is correct when |y_i - ref_i| <= c * eps *
/// bound_i for a small c times the number of components.
template <class E, class D>
void compound_spmv(const typename entry_traits<E>::scale_type& alpha,
                   const CsrMatrix<E, int, int, D>& a,
                   const std::vector<typename entry_traits<E>::vector_type>& x,
                   const typename entry_traits<E>::scale_type& beta,
                   std::vector<typename entry_traits<E>::vector_type>& y,
                   std::vector<double>* bound = nullptr) {
  using V = typename entry_traits<E>::vector_type;
  using scale_type = typename entry_traits<E>::scale_type;
  const auto h = to_host(a);
  require(x.size() == std::size_t(a.ncols()), "spk::reference::compound_spmv", "x has ",
          x.size(), " entries, expected ", a.ncols());
  require(y.size() == std::size_t(a.nrows()), "spk::reference::compound_spmv", "y has ",
          y.size(), " entries, expected ", a.nrows());
  if (bound) bound->assign(y.size(), 0.0);
  const bool beta_zero = beta == scale_type(0);
  for (int i = 0; i < h.nrows(); ++i) {
    V acc{};
    double mag = 0;
    int len = 0;
    for (int k = h.row_map()(i); k < h.row_map()(i + 1); ++k) {
      const E& v = h.values()(k);
      const V& xj = x[std::size_t(h.col_idx()(k))];
      acc = acc + v * xj;
      mag += detail::component_norm(v) * detail::component_norm(xj);
      ++len;
    }
    const V old = y[std::size_t(i)];
    y[std::size_t(i)] = beta_zero ? detail::scaled(alpha, acc)
                                  : detail::scaled(alpha, acc) + detail::scaled(beta, old);
    if (bound)
      (*bound)[std::size_t(i)] =
          double(len + 2) * detail::abs_scale(alpha) * mag +
          (beta_zero ? 0.0 : 2.0 * detail::abs_scale(beta) * detail::component_norm(old));
  }
}

}  // namespace reference
}  // namespace spk
