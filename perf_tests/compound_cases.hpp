// Benchmark cases of matrices with compound entries, shared by spk-bench (compound scalars) and
// spk-tune:
//   FILE.mtx[*K]         a complex Matrix Market file (complex entry types only)
//   helmholtz:N          complex-shifted 3D Helmholtz operator on an N^3 grid (complex only)
//   mesh:PATH[:L]        quaternion entries: the Dirac operator E = D - rho of a triangle mesh;
//                        3x3 blocks: the linear elasticity stiffness of a tetrahedral mesh;
//                        refined L times (default 0), refined vertices numbered by first
//                        reference (spk::renumber_by_first_reference)
//   mesh-appended:PATH[:L]  the same with spk::subdivide's appended-midpoint numbering
//   stencil3d:N          a 3D 7-point pattern on an N^3 grid with deterministic entries of any
//                        type (diagonal entries dominant), for large matrices of every type
// ${VAR} is taken from the environment.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>
#include <type_traits>

#include <spk/compound/entry.hpp>
#include <spk/compound/generate_compound.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/generate.hpp>
#include <spk/impl/radix_sort.hpp>

#include "bench_cases.hpp"

namespace spk_bench {

/// The scalar names of the compound entry types the tools instantiate.
inline bool is_compound_scalar(const std::string& s) {
  return s == "complex64" || s == "complex128" || s == "quaternion32" || s == "quaternion64" ||
         s == "block2_32" || s == "block2_64" || s == "block3_32" || s == "block3_64" ||
         s == "block4_32" || s == "block4_64" || s == "block6_32" || s == "block6_64";
}

/// Calls f(static_cast<E*>(nullptr)) with the entry type named `scalar` (is_compound_scalar).
template <class F>
auto with_compound_scalar(const std::string& scalar, F&& f) {
  using spk::Block;
  using spk::Quaternion;
  if (scalar == "complex64") return f(static_cast<Kokkos::complex<float>*>(nullptr));
  if (scalar == "complex128") return f(static_cast<Kokkos::complex<double>*>(nullptr));
  if (scalar == "quaternion32") return f(static_cast<Quaternion<float>*>(nullptr));
  if (scalar == "quaternion64") return f(static_cast<Quaternion<double>*>(nullptr));
  if (scalar == "block2_32") return f(static_cast<Block<float, 2>*>(nullptr));
  if (scalar == "block2_64") return f(static_cast<Block<double, 2>*>(nullptr));
  if (scalar == "block3_32") return f(static_cast<Block<float, 3>*>(nullptr));
  if (scalar == "block3_64") return f(static_cast<Block<double, 3>*>(nullptr));
  if (scalar == "block4_32") return f(static_cast<Block<float, 4>*>(nullptr));
  if (scalar == "block4_64") return f(static_cast<Block<double, 4>*>(nullptr));
  if (scalar == "block6_32") return f(static_cast<Block<float, 6>*>(nullptr));
  if (scalar == "block6_64") return f(static_cast<Block<double, 6>*>(nullptr));
  spk::throw_invalid_argument("spk-bench", "unknown compound scalar '", scalar, "'");
}

template <class E>
constexpr bool is_complex_entry() {
  return std::is_same<E, Kokkos::complex<float>>::value ||
         std::is_same<E, Kokkos::complex<double>>::value;
}
template <class E>
struct is_quaternion_entry : std::false_type {};
template <class R>
struct is_quaternion_entry<spk::Quaternion<R>> : std::true_type {};

/// Deterministic entries on a real sparsity pattern: component c of entry (i, j) is a hash of
/// (i, j, c) in [-0.5, 0.5], plus (row length + 1) on the "diagonal" components of diagonal
/// entries (component 0, or the block's diagonal), so the matrices are well conditioned.
template <class E, class Device>
struct FillCompoundEntries {
  using real = typename spk::entry_traits<E>::real_type;
  Kokkos::View<const int*, Device> row_map, col_idx;
  Kokkos::View<E*, Device> values;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    constexpr int C = spk::entry_traits<E>::matrix_components;
    constexpr int VC = spk::entry_traits<E>::vector_components;
    const int len = row_map(i + 1) - row_map(i);
    for (int k = row_map(i); k < row_map(i + 1); ++k) {
      real* p = reinterpret_cast<real*>(&values(k));
      for (int c = 0; c < C; ++c) {
        std::uint64_t h = (std::uint64_t(i) * 0x9E3779B97F4A7C15ull) ^
                          (std::uint64_t(col_idx(k)) * 0xC2B2AE3D27D4EB4Full) ^
                          (std::uint64_t(c) * 0x165667B19E3779F9ull);
        h ^= h >> 29;
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 32;
        p[c] = real(double(h >> 11) * (1.0 / 9007199254740992.0) - 0.5);
        const bool diag_component = C == VC ? c == 0 : c % (VC + 1) == 0;
        if (col_idx(k) == int(i) && diag_component) p[c] += real(len + 1);
      }
    }
  }
};

/// The pattern of `pattern` with deterministic entries of type E (FillCompoundEntries).
template <class E, class Device>
spk::CsrMatrix<E, int, int, Device> with_compound_entries(
    const spk::CsrMatrix<double, int, int, Device>& pattern) {
  using exec = typename spk::CsrMatrix<E, int, int, Device>::execution_space;
  Kokkos::View<E*, Device> values(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk_bench::compound_values"),
      std::size_t(pattern.nnz()));
  Kokkos::parallel_for("spk_bench::fill_compound", spk::impl::Range64<exec>(0, pattern.nrows()),
                       FillCompoundEntries<E, Device>{pattern.row_map(), pattern.col_idx(), values});
  return spk::CsrMatrix<E, int, int, Device>(pattern.nrows(), pattern.ncols(), pattern.row_map(),
                                             pattern.col_idx(), values);
}

/// Splits "PATH[:L]" (L a non-negative integer) into path and L.
inline std::pair<std::string, int> mesh_and_levels(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon != std::string::npos && colon + 1 < text.size() &&
      text.find_first_not_of("0123456789", colon + 1) == std::string::npos)
    return {text.substr(0, colon), std::stoi(text.substr(colon + 1))};
  return {text, 0};
}

/// Short name of a compound case for tables: mesh cases by file name and refinement level
/// ("bunny.obj~2"), others as case_name does.
inline std::string compound_case_name(const std::string& text) {
  const std::string t = expand_env(text);
  const bool appended = t.rfind("mesh-appended:", 0) == 0;
  if (t.rfind("mesh:", 0) != 0 && !appended) return case_name(t);
  const auto ml = mesh_and_levels(t.substr(appended ? 14 : 5));
  const auto slash = ml.first.find_last_of('/');
  const std::string base = slash == std::string::npos ? ml.first : ml.first.substr(slash + 1);
  return (ml.second > 0 ? base + "~" + std::to_string(ml.second) : base) + (appended ? "(app)" : "");
}

/// Loads a compound case (see the file comment) as CSR on Device.
template <class E, class Device>
spk::CsrMatrix<E, int, int, Device> load_compound_case(const std::string& text) {
  using real = typename spk::entry_traits<E>::real_type;
  const std::string t = expand_env(text);
  const CaseSpec c = parse_case(t);
  if (!c.file.empty()) {
    if constexpr (is_complex_entry<E>()) {
      return load_case<E, Device>(t);
    } else {
      spk::throw_invalid_argument("spk-bench", "case '", text,
                                  "': Matrix Market files need a complex --scalar");
    }
  }
  const auto colon = t.find(':');
  const std::string name = t.substr(0, colon);
  const std::string rest = colon == std::string::npos ? "" : t.substr(colon + 1);
  if (name == "mesh" || name == "mesh-appended") {
    const auto ml = mesh_and_levels(rest);
    const auto numbering = name == "mesh" ? spk::RefinedNumbering::first_reference
                                          : spk::RefinedNumbering::appended_midpoints;
    if constexpr (is_quaternion_entry<E>::value) {
      return spk::quaternion_mesh_matrix<real, Device>(ml.first, ml.second, numbering);
    } else if constexpr (std::is_same<E, spk::Block<real, 3>>::value) {
      return spk::elasticity_mesh_matrix<real, Device>(ml.first, ml.second, {}, numbering);
    } else {
      spk::throw_invalid_argument("spk-bench", "case '", text,
                                  "': mesh cases need a quaternion or block3 --scalar");
    }
  }
  if (name == "helmholtz") {
    if constexpr (is_complex_entry<E>()) {
      return spk::generate_complex_helmholtz<real, int, int, Device>(std::stoll(rest));
    } else {
      spk::throw_invalid_argument("spk-bench", "case '", text, "': helmholtz needs a complex --scalar");
    }
  }
  if (name == "stencil3d") {
    const auto pattern = spk::generate::from_spec<double, int, int, Device>(
        spk::generate::parse_generator_spec("poisson3d7:" + rest));
    return with_compound_entries<E, Device>(pattern);
  }
  spk::throw_invalid_argument("spk-bench", "unknown compound case '", text,
                              "' (expected FILE.mtx, helmholtz:N, mesh:PATH[:L] or stencil3d:N)");
}

}  // namespace spk_bench
