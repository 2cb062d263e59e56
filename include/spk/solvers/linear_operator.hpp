// spk/solvers/linear_operator.hpp: what a solver multiplies by. Either any spk matrix for which
// spk::spmv(spk::Mode::N, alpha, A, x, beta, y) is callable (detected by is_spmv_matrix), or a
// square LinearOperator made from a user callable by make_operator(n, apply).
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <spk/error.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>
#include <spk/spmv.hpp>

namespace spk {

namespace impl {

// Unqualified: spmv overloads of formats declared after this header are found by argument
// dependent lookup when the trait is instantiated.
template <class A, class = void>
struct has_spmv : std::false_type {};
template <class A>
struct has_spmv<
    A,
    std::void_t<decltype(spmv(
        Mode::N, std::declval<typename A::value_type>(), std::declval<const A&>(),
        std::declval<const Kokkos::View<const typename A::value_type*, typename A::device_type>&>(),
        std::declval<typename A::value_type>(),
        std::declval<const Kokkos::View<typename A::value_type*, typename A::device_type>&>()))>>
    : std::true_type {};

}  // namespace impl

/// True for a matrix type A (with value_type and device_type) for which
/// spk::spmv(Mode::N, alpha, A, x, beta, y) is callable on views of A's device: CsrMatrix,
/// EllMatrix, HllMatrix, DiaMatrix, HdiaMatrix, HybMatrix and any format adding that overload.
template <class A>
struct is_spmv_matrix : impl::has_spmv<std::decay_t<A>> {};

/// A square n x n linear operator given by a callable: apply(x, y) computes y = A x, with x a
/// Kokkos::View<const S*, Device> and y a Kokkos::View<S*, Device> of n entries, where S and
/// Device are those of the solver's x (the callable may be generic: [&](auto x, auto y) {...}).
/// It is called on the host; the work it launches must run on Device's execution space (or be
/// complete before it returns). Made by make_operator.
template <class Apply>
class LinearOperator {
 public:
  LinearOperator(std::int64_t n, Apply apply) : n_(n), apply_(std::move(apply)) {
    require(n >= 0, "spk::make_operator", "n = ", n, " must be >= 0");
  }

  std::int64_t nrows() const { return n_; }
  std::int64_t ncols() const { return n_; }

  /// y = A x.
  template <class XView, class YView>
  void apply(const XView& x, const YView& y) const {
    apply_(x, y);
  }

 private:
  std::int64_t n_;
  Apply apply_;
};

/// The n x n operator x -> apply(x, y) (see LinearOperator).
template <class Apply>
LinearOperator<std::decay_t<Apply>> make_operator(std::int64_t n, Apply&& apply) {
  return LinearOperator<std::decay_t<Apply>>(n, std::forward<Apply>(apply));
}

/// True for the types make_operator returns.
template <class T>
struct is_linear_operator : std::false_type {};
template <class Apply>
struct is_linear_operator<LinearOperator<Apply>> : std::true_type {};

namespace impl {

/// A matrix seen as an operator: apply(x, y) is spmv(N, 1, A, x, 0, y). Holds a reference; it
/// lives for one solve.
template <class Matrix>
class MatrixOperator {
 public:
  using value_type = typename Matrix::value_type;
  explicit MatrixOperator(const Matrix& a) : a_(a) {}
  std::int64_t nrows() const { return std::int64_t(a_.nrows()); }
  std::int64_t ncols() const { return std::int64_t(a_.ncols()); }
  template <class XView, class YView>
  void apply(const XView& x, const YView& y) const {
    spmv(Mode::N, scalar_traits<value_type>::one(), a_, x, scalar_traits<value_type>::zero(), y);
  }

 private:
  const Matrix& a_;
};

/// What a solver needs of its operator argument Op, given the solution view type XView: the
/// value type, the device the solve runs on (the matrix's, or x's for a LinearOperator) and the
/// operator to apply.
template <class Op, class XView, class = void>
struct solver_operator {
  static_assert(sizeof(Op) == 0,
                "spk solvers: A must be an spk matrix with an spk::spmv overload (see "
                "spk::is_spmv_matrix) or an operator made by spk::make_operator(n, apply)");
};

template <class Op, class XView>
struct solver_operator<Op, XView, std::enable_if_t<is_spmv_matrix<Op>::value>> {
  using value_type = typename Op::value_type;
  using device_type = typename Op::device_type;
  using type = MatrixOperator<Op>;
  static type make(const Op& a) { return type(a); }
};

template <class Op, class XView>
struct solver_operator<
    Op, XView, std::enable_if_t<!is_spmv_matrix<Op>::value && is_linear_operator<Op>::value>> {
  using value_type = typename XView::non_const_value_type;
  using device_type = device_t<typename XView::device_type>;
  using type = const Op&;
  static type make(const Op& a) { return a; }
};

}  // namespace impl
}  // namespace spk
