// spk/compound/entry.hpp: compound matrix entries (complex, quaternion, dense b x b blocks) and
// the one description kernels need of them.
//
// A compound entry type E is described once by a specialisation of spk::entry_traits<E>: the real
// type of its components, how many reals a matrix entry and a vector entry hold, the product
// "matrix entry times vector entry" added to an accumulator, and how a scale factor (alpha, beta)
// acts on a vector entry. Kernels work on arrays of components only, so a new entry type (e.g.
// dual quaternions, see unit_tests/test_compound_entry.cpp) is one small struct plus one traits
// specialisation, never a new kernel.
//
// The value types (spk::Quaternion, spk::Block, spk::BlockVector) are plain aggregates with
// operators for host code and references; kernels never use the operators.
#pragma once

#include <Kokkos_Complex.hpp>
#include <Kokkos_Core.hpp>
#include <type_traits>

namespace spk {

/// Quaternion w + x i + y j + z k over float or double (16 or 32 bytes, aligned for vector loads).
template <class Real>
struct alignas(4 * sizeof(Real) >= 16 ? 16 : 4 * sizeof(Real)) Quaternion {
  static_assert(std::is_floating_point<Real>::value,
                "spk::Quaternion: Real must be float or double");
  Real w, x, y, z;
};

/// Hamilton product a * b.
template <class Real>
KOKKOS_INLINE_FUNCTION Quaternion<Real> operator*(const Quaternion<Real>& a,
                                                  const Quaternion<Real>& b) {
  return {a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
          a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
          a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
          a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}
template <class Real>
KOKKOS_INLINE_FUNCTION Quaternion<Real> operator+(const Quaternion<Real>& a,
                                                  const Quaternion<Real>& b) {
  return {a.w + b.w, a.x + b.x, a.y + b.y, a.z + b.z};
}
template <class Real>
KOKKOS_INLINE_FUNCTION bool operator==(const Quaternion<Real>& a, const Quaternion<Real>& b) {
  return a.w == b.w && a.x == b.x && a.y == b.y && a.z == b.z;
}

/// Dense B x B block of reals, row-major: a[r * B + c].
template <class Real, int B>
struct Block {
  static_assert(std::is_floating_point<Real>::value && B >= 1,
                "spk::Block: Real must be float or double and B >= 1");
  Real a[B * B];
};

/// Vector entry that a B x B block multiplies: B reals.
template <class Real, int B>
struct BlockVector {
  Real v[B];
};

/// Block times vector entry.
template <class Real, int B>
KOKKOS_INLINE_FUNCTION BlockVector<Real, B> operator*(const Block<Real, B>& m,
                                                      const BlockVector<Real, B>& x) {
  BlockVector<Real, B> y{};
  for (int r = 0; r < B; ++r) {
    Real s = 0;
    for (int c = 0; c < B; ++c) s += m.a[r * B + c] * x.v[c];
    y.v[r] = s;
  }
  return y;
}
template <class Real, int B>
KOKKOS_INLINE_FUNCTION BlockVector<Real, B> operator+(const BlockVector<Real, B>& a,
                                                      const BlockVector<Real, B>& b) {
  BlockVector<Real, B> y{};
  for (int r = 0; r < B; ++r) y.v[r] = a.v[r] + b.v[r];
  return y;
}
template <class Real, int B>
KOKKOS_INLINE_FUNCTION Block<Real, B> operator+(const Block<Real, B>& a, const Block<Real, B>& b) {
  Block<Real, B> y{};
  for (int r = 0; r < B * B; ++r) y.a[r] = a.a[r] + b.a[r];
  return y;
}

/// Description of a matrix entry type for the compound kernels. Only the specialisations below
/// (and users' own) exist; using another type is a compile-time error naming the requirement.
///
/// A specialisation provides:
///   using entry_type, vector_type, real_type, scale_type;
///   static constexpr int matrix_components, vector_components;  // reals per entry
///   static constexpr const char* name;                          // "quaternion64", ...
///   static void multiply_add(const real_type* a, const real_type* x, real_type* acc);
///       acc (vector_components) += a (matrix_components) * x (vector_components)
///   static void scale(const scale_type& s, real_type* v);     // v = s * v
///   static scale_type scale_from(double);                     // a real scale factor
/// entry_type and vector_type must be trivially copyable aggregates whose bytes are exactly their
/// components in order (spk reinterprets arrays of them as arrays of reals).
template <class E>
struct entry_traits {
  static_assert(sizeof(E) == 0,
                "spk::entry_traits: no description of this entry type (specialise "
                "spk::entry_traits, see spk/compound/entry.hpp)");
};

namespace impl {
/// The parts of a description shared by the entry types whose scale factor is a real.
template <class Real>
struct real_scaled_entry {
  using real_type = Real;
  using scale_type = Real;
  template <int N>
  KOKKOS_INLINE_FUNCTION static void scale_components(const Real& s, Real* v) {
    for (int i = 0; i < N; ++i) v[i] *= s;
  }
  KOKKOS_INLINE_FUNCTION static Real scale_from(double s) { return Real(s); }
};
}  // namespace impl

template <>
struct entry_traits<float> : impl::real_scaled_entry<float> {
  using entry_type = float;
  using vector_type = float;
  static constexpr int matrix_components = 1, vector_components = 1;
  static constexpr const char* name = "float";
  KOKKOS_INLINE_FUNCTION static void multiply_add(const float* a, const float* x, float* acc) {
    acc[0] += a[0] * x[0];
  }
  KOKKOS_INLINE_FUNCTION static void scale(const float& s, float* v) { v[0] *= s; }
};

template <>
struct entry_traits<double> : impl::real_scaled_entry<double> {
  using entry_type = double;
  using vector_type = double;
  static constexpr int matrix_components = 1, vector_components = 1;
  static constexpr const char* name = "double";
  KOKKOS_INLINE_FUNCTION static void multiply_add(const double* a, const double* x, double* acc) {
    acc[0] += a[0] * x[0];
  }
  KOKKOS_INLINE_FUNCTION static void scale(const double& s, double* v) { v[0] *= s; }
};

template <class Real>
struct entry_traits<Kokkos::complex<Real>> {
  using entry_type = Kokkos::complex<Real>;
  using vector_type = Kokkos::complex<Real>;
  using real_type = Real;
  using scale_type = Kokkos::complex<Real>;
  static constexpr int matrix_components = 2, vector_components = 2;
  static constexpr const char* name = std::is_same<Real, float>::value ? "complex64" : "complex128";
  KOKKOS_INLINE_FUNCTION static void multiply_add(const Real* a, const Real* x, Real* acc) {
    acc[0] += a[0] * x[0] - a[1] * x[1];
    acc[1] += a[0] * x[1] + a[1] * x[0];
  }
  KOKKOS_INLINE_FUNCTION static void scale(const scale_type& s, Real* v) {
    const Real re = s.real() * v[0] - s.imag() * v[1];
    v[1] = s.real() * v[1] + s.imag() * v[0];
    v[0] = re;
  }
  KOKKOS_INLINE_FUNCTION static scale_type scale_from(double s) { return scale_type(Real(s)); }
};

template <class Real>
struct entry_traits<Quaternion<Real>> : impl::real_scaled_entry<Real> {
  using entry_type = Quaternion<Real>;
  using vector_type = Quaternion<Real>;
  static constexpr int matrix_components = 4, vector_components = 4;
  static constexpr const char* name =
      std::is_same<Real, float>::value ? "quaternion32" : "quaternion64";
  /// acc += a * x (Hamilton product, the matrix entry on the left).
  KOKKOS_INLINE_FUNCTION static void multiply_add(const Real* a, const Real* x, Real* acc) {
    acc[0] += a[0] * x[0] - a[1] * x[1] - a[2] * x[2] - a[3] * x[3];
    acc[1] += a[0] * x[1] + a[1] * x[0] + a[2] * x[3] - a[3] * x[2];
    acc[2] += a[0] * x[2] - a[1] * x[3] + a[2] * x[0] + a[3] * x[1];
    acc[3] += a[0] * x[3] + a[1] * x[2] - a[2] * x[1] + a[3] * x[0];
  }
  KOKKOS_INLINE_FUNCTION static void scale(const Real& s, Real* v) {
    impl::real_scaled_entry<Real>::template scale_components<4>(s, v);
  }
};

namespace impl {
/// "block3_64" style names: B and the bits of the real type.
template <class Real, int B>
struct block_name {
  static constexpr const char* get() {
    constexpr bool f = std::is_same<Real, float>::value;
    return B == 2   ? (f ? "block2_32" : "block2_64")
           : B == 3 ? (f ? "block3_32" : "block3_64")
           : B == 4 ? (f ? "block4_32" : "block4_64")
           : B == 6 ? (f ? "block6_32" : "block6_64")
                    : (f ? "blockN_32" : "blockN_64");
  }
};
}  // namespace impl

template <class Real, int B>
struct entry_traits<Block<Real, B>> : impl::real_scaled_entry<Real> {
  using entry_type = Block<Real, B>;
  using vector_type = BlockVector<Real, B>;
  static constexpr int matrix_components = B * B, vector_components = B;
  static constexpr int block_size = B;
  static constexpr const char* name = impl::block_name<Real, B>::get();
  /// acc += a * x, a row-major.
  KOKKOS_INLINE_FUNCTION static void multiply_add(const Real* a, const Real* x, Real* acc) {
    for (int r = 0; r < B; ++r) {
      Real s = acc[r];
      for (int c = 0; c < B; ++c) s += a[r * B + c] * x[c];
      acc[r] = s;
    }
  }
  KOKKOS_INLINE_FUNCTION static void scale(const Real& s, Real* v) {
    impl::real_scaled_entry<Real>::template scale_components<B>(s, v);
  }
};

/// True when entry_traits<E> is specialised (the compound kernels accept E).
template <class E, class = void>
struct is_compound_entry : std::false_type {};
template <class E>
struct is_compound_entry<E, std::void_t<decltype(entry_traits<E>::matrix_components)>>
    : std::true_type {};

}  // namespace spk
