// spk/reference.hpp: the sequential host reference every kernel is checked against.
#pragma once

#include <cstddef>
#include <vector>

#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {
namespace reference {

/// y = alpha * op(A) * x + beta * y computed sequentially on the host, in the order of the
/// stored entries. A may live on any device (it is copied to the host). If `bound` is given it
/// receives, per output entry, the magnitude scale of the rounding error of any summation order:
/// len * (|alpha| * sum |a_ij| |x_j|) + |beta| |y_i|, with len the number of terms. A kernel is
/// correct when |y_i - ref_i| <= c * eps * bound_i for a small c.
template <class S, class O, class F, class D>
void spmv(Mode mode, S alpha, const CsrMatrix<S, O, F, D>& a, const std::vector<S>& x, S beta,
          std::vector<S>& y, std::vector<double>* bound = nullptr) {
  using traits = scalar_traits<S>;
  const auto h = to_host(a);
  const bool trans = mode != Mode::N;
  const std::size_t nx = trans ? std::size_t(a.nrows()) : std::size_t(a.ncols());
  const std::size_t ny = trans ? std::size_t(a.ncols()) : std::size_t(a.nrows());
  require(x.size() == nx, "spk::reference::spmv", "x has ", x.size(), " entries, expected ", nx);
  require(y.size() == ny, "spk::reference::spmv", "y has ", y.size(), " entries, expected ", ny);
  std::vector<S> acc(ny, traits::zero());
  std::vector<double> mag(ny, 0.0);
  std::vector<std::size_t> len(ny, 0);
  for (O i = 0; i < h.nrows(); ++i) {
    for (F k = h.row_map()(i); k < h.row_map()(i + 1); ++k) {
      const O j = h.col_idx()(k);
      S v = h.values()(k);
      if (mode == Mode::H) v = traits::conj(v);
      const std::size_t out = trans ? std::size_t(j) : std::size_t(i);
      const std::size_t in = trans ? std::size_t(i) : std::size_t(j);
      acc[out] = acc[out] + v * x[in];
      mag[out] += double(traits::abs(v)) * double(traits::abs(x[in]));
      ++len[out];
    }
  }
  if (bound) bound->assign(ny, 0.0);
  for (std::size_t i = 0; i < ny; ++i) {
    const S old = y[i];
    y[i] = (beta == traits::zero() ? alpha * acc[i] : alpha * acc[i] + beta * old);
    if (bound)
      (*bound)[i] = double(len[i] + 2) * double(traits::abs(alpha)) * mag[i] +
                    (beta == traits::zero() ? 0.0 : 2.0 * double(traits::abs(beta)) *
                                                        double(traits::abs(old)));
  }
}

}  // namespace reference
}  // namespace spk
