// spk/solvers/jacobi.hpp: pointwise preconditioners of the Krylov solvers: none
// (IdentityPreconditioner) and Jacobi (z_i = r_i / a_ii), and spk::diagonal(A) to build the
// latter. A pointwise preconditioner is applied entry by entry inside the solvers' fused vector
// kernels, so it costs no kernel launch and no vector of its own.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/radix_sort.hpp>
#include <spk/scalar.hpp>

namespace spk {

/// No preconditioning: z = r. The default of spk::cg and spk::bicgstab.
struct IdentityPreconditioner {
  static constexpr bool is_identity = true;
  template <class S>
  KOKKOS_INLINE_FUNCTION S apply(std::int64_t /*i*/, const S& r) const {
    return r;
  }
};

/// The diagonal of a CSR matrix, on its device: min(nrows, ncols) entries, d(i) the sum of the
/// entries stored at (i, i) (0 where none is). O(nnz) work.
template <class S, class O, class F, class D>
Kokkos::View<S*, typename CsrMatrix<S, O, F, D>::device_type> diagonal(
    const CsrMatrix<S, O, F, D>& a) {
  using exec = typename CsrMatrix<S, O, F, D>::execution_space;
  const std::int64_t n = a.nrows() < a.ncols() ? a.nrows() : a.ncols();
  Kokkos::View<S*, typename CsrMatrix<S, O, F, D>::device_type> d(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::diagonal"), std::size_t(n));
  const auto row_map = a.row_map();
  const auto cols = a.col_idx();
  const auto vals = a.values();
  Kokkos::parallel_for(
      "spk::diagonal", impl::Range64<exec>(0, n), KOKKOS_LAMBDA(const std::int64_t i) {
        S sum = scalar_traits<S>::zero();
        for (F k = row_map(i); k < row_map(i + 1); ++k)
          if (std::int64_t(cols(k)) == i) sum = sum + vals(k);
        d(i) = sum;
      });
  return d;
}

/// The diagonal of any spk format with to_csr() (ELL, HLL, DIA, HDIA, HYB, ...), through its
/// CSR form on the same device. O(conversion + nnz).
template <class Matrix, class = decltype(std::declval<const Matrix&>().to_csr())>
auto diagonal(const Matrix& a) {
  return diagonal(a.to_csr());
}

namespace impl {

/// inv(i) = 1 / d(i) on ExecSpace; returns the first row with d(i) = 0 (there inv(i) = 0), or
/// d.extent(0) when there is none. O(n).
template <class ExecSpace, class ConstVec, class Vec>
std::int64_t invert_diagonal(const ConstVec& d, const Vec& inv) {
  using S = typename Vec::non_const_value_type;
  const std::int64_t n = std::int64_t(d.extent(0));
  std::int64_t first_zero = n;
  Kokkos::parallel_reduce(
      "spk::jacobi::invert", Range64<ExecSpace>(0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& first) {
        const S di = d(i);
        if (di == scalar_traits<S>::zero()) {
          inv(i) = di;
          if (i < first) first = i;
        } else {
          inv(i) = scalar_traits<S>::one() / di;
        }
      },
      Kokkos::Min<std::int64_t>(first_zero));
  return first_zero < n ? first_zero : n;
}

}  // namespace impl

/// Jacobi preconditioner: z_i = r_i / d_i for a diagonal d without zeros (d = spk::diagonal(A)
/// for A's own diagonal). Holds 1 / d on Device; copies are shallow.
template <class Scalar, class Device = Kokkos::DefaultExecutionSpace>
class JacobiPreconditioner {
 public:
  using value_type = Scalar;
  using device_type = impl::device_t<Device>;
  using execution_space = typename device_type::execution_space;
  using memory_space = typename device_type::memory_space;
  static constexpr bool is_identity = false;

  JacobiPreconditioner() = default;

  /// Inverts `diag` on Device. Throws std::invalid_argument naming the first row whose diagonal
  /// entry is zero. O(n).
  explicit JacobiPreconditioner(const Kokkos::View<const Scalar*, Device>& diag)
      : inverse_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::jacobi::inverse"),
                 diag.extent(0)) {
    const std::int64_t n = std::int64_t(diag.extent(0));
    const std::int64_t first_zero = impl::invert_diagonal<execution_space>(
        Kokkos::View<const Scalar*, device_type>(diag), inverse_);
    require(first_zero >= n, "spk::JacobiPreconditioner", "the diagonal entry of row ", first_zero,
            " is zero (", n, " rows); Jacobi needs every diagonal entry nonzero");
  }

  /// Number of rows.
  std::int64_t size() const { return std::int64_t(inverse_.extent(0)); }
  /// 1 / d on Device.
  const Kokkos::View<Scalar*, device_type>& inverse_diagonal() const { return inverse_; }

  /// z_i = r_i / d_i.
  KOKKOS_INLINE_FUNCTION Scalar apply(std::int64_t i, const Scalar& r) const {
    return inverse_(i) * r;
  }

 private:
  Kokkos::View<Scalar*, device_type> inverse_;
};

/// Jacobi preconditioner from a diagonal view (see JacobiPreconditioner).
template <class S, class... P>
JacobiPreconditioner<typename Kokkos::View<S*, P...>::non_const_value_type,
                     typename Kokkos::View<S*, P...>::device_type>
make_jacobi(const Kokkos::View<S*, P...>& diag) {
  using V = Kokkos::View<S*, P...>;
  return JacobiPreconditioner<typename V::non_const_value_type, typename V::device_type>(diag);
}

/// Jacobi preconditioner of a square matrix of any spk format, from spk::diagonal(a) on its
/// device. Throws std::invalid_argument if a is not square or a diagonal entry is zero.
template <class Matrix, class = std::enable_if_t<!Kokkos::is_view<Matrix>::value>>
JacobiPreconditioner<typename Matrix::value_type, typename Matrix::device_type> make_jacobi(
    const Matrix& a) {
  require(a.nrows() == a.ncols(), "spk::make_jacobi", "the matrix is ", a.nrows(), " x ", a.ncols(),
          "; Jacobi needs a square matrix");
  return JacobiPreconditioner<typename Matrix::value_type, typename Matrix::device_type>(
      diagonal(a));
}

namespace impl {

/// Checks a pointwise preconditioner against a solve on ExecSpace with n unknowns: its data
/// must be accessible from ExecSpace (compile time) and it must have n rows (else throws
/// std::invalid_argument).
template <class ExecSpace, class P>
void check_preconditioner(const char* where, const P& m, std::int64_t n) {
  if constexpr (!P::is_identity) {
    static_assert(
        Kokkos::SpaceAccessibility<ExecSpace, typename P::memory_space>::accessible,
        "spk solvers: the preconditioner's data must be accessible from the solve's device");
    require(m.size() == n, where, "the preconditioner has ", m.size(), " rows, the operator ", n);
  }
}

}  // namespace impl
}  // namespace spk
