// spk/scalar.hpp: the value types spk stores and multiplies.
//
// Every value type is described once by a specialisation of spk::scalar_traits: its name, its
// number of real components, zero/one, magnitude and conjugate, and how it is built from and
// split into real parts (for I/O and references). Kernels use only operator+ and operator* of the
// type and these traits, so compound entries (quaternions, dense b x b blocks) are added later as
// new specialisations (with a matching vector entry type), not by editing every kernel.
#pragma once

#include <Kokkos_Complex.hpp>
#include <Kokkos_Core.hpp>
#include <cmath>
#include <spk/impl/kokkos_compat.hpp>
#include <type_traits>

namespace spk {

/// Traits of a value type. Only the specialisations below exist; using another type is a
/// compile-time error naming the type.
template <class T>
struct scalar_traits {
  static_assert(sizeof(T) == 0,
                "spk::scalar_traits: unsupported value type (float, double, "
                "Kokkos::complex<float>, Kokkos::complex<double>)");
};

namespace impl {
template <class Real, int Components, bool Complex>
struct scalar_traits_base {
  using mag_type = Real;  ///< type of |x| and of the components
  static constexpr int components = Components;
  static constexpr bool is_complex = Complex;
};
}  // namespace impl

template <>
struct scalar_traits<float> : impl::scalar_traits_base<float, 1, false> {
  using value_type = float;
  static constexpr const char* name = "float";
  KOKKOS_INLINE_FUNCTION static float zero() { return 0.0f; }
  KOKKOS_INLINE_FUNCTION static float one() { return 1.0f; }
  KOKKOS_INLINE_FUNCTION static float abs(float x) { return x < 0 ? -x : x; }
  KOKKOS_INLINE_FUNCTION static float conj(float x) { return x; }
  KOKKOS_INLINE_FUNCTION static float make(double re, double /*im*/ = 0) { return float(re); }
  KOKKOS_INLINE_FUNCTION static double real(float x) { return x; }
  KOKKOS_INLINE_FUNCTION static double imag(float) { return 0; }
};

template <>
struct scalar_traits<double> : impl::scalar_traits_base<double, 1, false> {
  using value_type = double;
  static constexpr const char* name = "double";
  KOKKOS_INLINE_FUNCTION static double zero() { return 0.0; }
  KOKKOS_INLINE_FUNCTION static double one() { return 1.0; }
  KOKKOS_INLINE_FUNCTION static double abs(double x) { return x < 0 ? -x : x; }
  KOKKOS_INLINE_FUNCTION static double conj(double x) { return x; }
  KOKKOS_INLINE_FUNCTION static double make(double re, double /*im*/ = 0) { return re; }
  KOKKOS_INLINE_FUNCTION static double real(double x) { return x; }
  KOKKOS_INLINE_FUNCTION static double imag(double) { return 0; }
};

template <class Real>
struct scalar_traits<Kokkos::complex<Real>> : impl::scalar_traits_base<Real, 2, true> {
  using value_type = Kokkos::complex<Real>;
  static constexpr const char* name = std::is_same<Real, float>::value ? "complex64" : "complex128";
  KOKKOS_INLINE_FUNCTION static value_type zero() { return value_type(Real(0), Real(0)); }
  KOKKOS_INLINE_FUNCTION static value_type one() { return value_type(Real(1), Real(0)); }
  KOKKOS_INLINE_FUNCTION static Real abs(const value_type& x) {
    // hypot without overflow for the magnitudes spk handles
    const Real a = x.real() < 0 ? -x.real() : x.real();
    const Real b = x.imag() < 0 ? -x.imag() : x.imag();
    const Real m = a > b ? a : b;
    if (m == Real(0)) return Real(0);
    const Real p = a / m, q = b / m;
    return m * impl::sqrt(p * p + q * q);
  }
  KOKKOS_INLINE_FUNCTION static value_type conj(const value_type& x) {
    return value_type(x.real(), -x.imag());
  }
  KOKKOS_INLINE_FUNCTION static value_type make(double re, double im = 0) {
    return value_type(Real(re), Real(im));
  }
  KOKKOS_INLINE_FUNCTION static double real(const value_type& x) { return x.real(); }
  KOKKOS_INLINE_FUNCTION static double imag(const value_type& x) { return x.imag(); }
};

/// True for the value types spk supports.
template <class T>
struct is_scalar : std::false_type {};
template <>
struct is_scalar<float> : std::true_type {};
template <>
struct is_scalar<double> : std::true_type {};
template <>
struct is_scalar<Kokkos::complex<float>> : std::true_type {};
template <>
struct is_scalar<Kokkos::complex<double>> : std::true_type {};

/// Unit roundoff of a value type's components (for tolerances in references and tests).
template <class T>
constexpr double unit_roundoff() {
  return std::is_same<typename scalar_traits<T>::mag_type, float>::value ? 5.96e-8 : 1.11e-16;
}

}  // namespace spk
