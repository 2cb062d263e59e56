// spk/generate.hpp: test and benchmark matrices generated on the device.
//
// Every generator returns a spk::CsrMatrix built on its device by Kokkos kernels (count the
// entries of each row, exclusive scan, fill), with the columns of each row sorted and distinct.
// Nothing proportional to the number of nonzeros runs on the host, so sizes are limited by device
// memory only. Sizes are checked in int64 before anything is allocated: a matrix whose dimension
// does not fit Ordinal or whose nonzeros do not fit Offset throws std::invalid_argument naming the
// generator, the size and the type needed.
//
// Determinism: all randomness comes from counter_hash(seed, stream, a, b), a splitmix64-based
// hash, so the same arguments and seeds give the same matrix on every backend and every run.
//
// Values: stencils use their exact coefficients (few distinct values), R-MAT uses 1, the random
// patterns use random values; GeneratorOptions::random_values switches stencils and R-MAT to
// random values too. A random value of entry (i, j) is random_entry<Scalar>(options.seed, i, j):
// components 2 * hash_to_unit(counter_hash(options.seed, stream_value_real / _imag, i, j)) - 1 in
// [-1, 1); complex types get an imaginary part only for random values.
//
// Spec strings ("NAME:SIZE[:key=value[,key=value...]]", see describe_generators()) name a
// generator from the command line; from_spec() builds it and estimate_nnz() bounds its size.
#pragma once

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/impl/generate_kernels.hpp>
#include <spk/scalar.hpp>
#include <string>
#include <vector>

namespace spk {
namespace generate {

// --- randomness (public so that tests and tools can reproduce a generated matrix) -------------
using impl::counter_hash;
using impl::hash_below;
using impl::hash_to_unit;
using impl::mix64;
using impl::random_entry;
using impl::RngStream;
using impl::stream_columns;
using impl::stream_long_rows;
using impl::stream_perturb;
using impl::stream_rmat;
using impl::stream_row_length;
using impl::stream_value_imag;
using impl::stream_value_real;

/// Options shared by all generators.
struct GeneratorOptions {
  /// Seed of the random values (the pattern of a random generator has its own seed argument).
  std::uint64_t seed = 1;
  /// Stencils and rmat: random values in [-1, 1) instead of their coefficients / ones.
  /// The random patterns (random_banded, circuit_like) always have random values.
  bool random_values = false;
};

// --- stencils --------------------------------------------------------------------------------

/// 2D Poisson matrix, 5-point stencil on an n x n grid (row = x + n * y): n^2 rows, 4 on the
/// diagonal, -1 for each grid neighbour; neighbours outside the grid are dropped (Dirichlet), so
/// nnz = 5 n^2 - 4 n. Symmetric. n >= 0. O(n^2) work on the device.
template <class Scalar = double, class Ordinal = int, class Offset = int,
          class Device = Kokkos::DefaultExecutionSpace>
CsrMatrix<Scalar, Ordinal, Offset, Device> poisson2d_5pt(
    std::int64_t n, const GeneratorOptions& options = GeneratorOptions()) {
  impl::Stencil27 st;
  for (int o : {10, 12, 14, 16}) {
    st.used[o] = true;
    st.coef[o] = -1.0;
  }
  st.used[13] = true;
  st.coef[13] = 4.0;
  return impl::stencil_matrix<Scalar, Ordinal, Offset, Device>(
      "spk::generate::poisson2d_5pt", n, n, n, 1, st, options.random_values, options.seed);
}

/// 3D Poisson matrix, 7-point stencil on an n x n x n grid (row = x + n * (y + n * z)): n^3
/// rows, 6 on the diagonal, -1 for the 6 face neighbours inside the grid; nnz = 7 n^3 - 6 n^2.
/// Symmetric. n >= 0. O(n^3) work on the device.
template <class Scalar = double, class Ordinal = int, class Offset = int,
          class Device = Kokkos::DefaultExecutionSpace>
CsrMatrix<Scalar, Ordinal, Offset, Device> poisson3d_7pt(
    std::int64_t n, const GeneratorOptions& options = GeneratorOptions()) {
  impl::Stencil27 st;
  for (int o : {4, 10, 12, 14, 16, 22}) {
    st.used[o] = true;
    st.coef[o] = -1.0;
  }
  st.used[13] = true;
  st.coef[13] = 6.0;
  return impl::stencil_matrix<Scalar, Ordinal, Offset, Device>(
      "spk::generate::poisson3d_7pt", n, n, n, n, st, options.random_values, options.seed);
}

/// 3D Poisson-like matrix, 27-point stencil on an n x n x n grid: n^3 rows, 26 on the diagonal,
/// -1 for the 26 neighbours inside the grid; nnz = (3n - 2)^3 for n >= 1. Symmetric, zero row
/// sums on interior rows. n >= 0. O(n^3) work on the device.
template <class Scalar = double, class Ordinal = int, class Offset = int,
          class Device = Kokkos::DefaultExecutionSpace>
CsrMatrix<Scalar, Ordinal, Offset, Device> poisson3d_27pt(
    std::int64_t n, const GeneratorOptions& options = GeneratorOptions()) {
  impl::Stencil27 st;
  for (int o = 0; o < 27; ++o) {
    st.used[o] = true;
    st.coef[o] = o == 13 ? 26.0 : -1.0;
  }
  return impl::stencil_matrix<Scalar, Ordinal, Offset, Device>(
      "spk::generate::poisson3d_27pt", n, n, n, n, st, options.random_values, options.seed);
}

/// The PSBLAS "pdeN" model problem: -Laplacian(u) + b . grad(u) = f on the unit cube with
/// Dirichlet boundary, b = (1, 1, 1) / sqrt(3), discretised by centred finite differences on the
/// n x n x n interior points of a grid of step h = 1 / (n + 1) (row = x + n * (y + n * z)).
/// Entries: diagonal 6 / h^2; the neighbour at -1 in direction k: -1 / h^2 - b_k / (2h), at +1:
/// -1 / h^2 + b_k / (2h) (computed as 6 * (n+1)^2, -(n+1)^2 -/+ (n+1) / (2 sqrt(3))).
/// Non-symmetric, 7 n^3 - 6 n^2 nonzeros. The report of Barbieri et al. (2015) that uses these
/// matrices names the PSBLAS generator without restating the operator (the stored excerpt omits its
/// evaluation section); PSBLAS parametrises the problem by diffusion a_k, convection b_k and
/// reaction c, and unit diffusion, a unit convection field along the cube diagonal and no reaction
/// give the simplest non-symmetric member of that family, with equal treatment of the three axes.
/// n >= 0. O(n^3) work on the device.
template <class Scalar = double, class Ordinal = int, class Offset = int,
          class Device = Kokkos::DefaultExecutionSpace>
CsrMatrix<Scalar, Ordinal, Offset, Device> pde_convdiff3d(
    std::int64_t n, const GeneratorOptions& options = GeneratorOptions()) {
  const double inv_h = double(n) + 1.0;
  const double inv_h2 = inv_h * inv_h;
  const double half_b_over_h = inv_h / (2.0 * std::sqrt(3.0));
  impl::Stencil27 st;
  for (int o : {4, 10, 12}) {  // the -1 neighbours in z, y, x
    st.used[o] = true;
    st.coef[o] = -inv_h2 - half_b_over_h;
  }
  for (int o : {14, 16, 22}) {  // the +1 neighbours in x, y, z
    st.used[o] = true;
    st.coef[o] = -inv_h2 + half_b_over_h;
  }
  st.used[13] = true;
  st.coef[13] = 6.0 * inv_h2;
  return impl::stencil_matrix<Scalar, Ordinal, Offset, Device>(
      "spk::generate::pde_convdiff3d", n, n, n, n, st, options.random_values, options.seed);
}

// --- random patterns -------------------------------------------------------------------------

/// Random banded matrix, nrows x nrows: row i holds m_i = min(nnz_per_row, w_i) distinct
/// columns of its band [i - half_bandwidth, i + half_bandwidth] n [0, nrows) (w_i columns),
/// always the diagonal among them. Columns are drawn from counter_hash(seed, stream_columns, i,
/// t): rows drawing at most 32 columns take a uniformly random subset (Floyd's algorithm, O(m^2)
/// per row); longer rows cut the band into m_i equal strata and draw one column in each (O(m) per
/// row). Values random (GeneratorOptions::seed). nrows >= 0, half_bandwidth >= 0,
/// nnz_per_row >= 1.
template <class Scalar = double, class Ordinal = int, class Offset = int,
          class Device = Kokkos::DefaultExecutionSpace>
CsrMatrix<Scalar, Ordinal, Offset, Device> random_banded(
    std::int64_t nrows, std::int64_t half_bandwidth, std::int64_t nnz_per_row, std::uint64_t seed,
    const GeneratorOptions& options = GeneratorOptions()) {
  return impl::banded_matrix<Scalar, Ordinal, Offset, Device>(
      "spk::generate::random_banded", nrows, half_bandwidth, nnz_per_row, seed, options.seed);
}

/// R-MAT power-law graph (Chakrabarti, Zhan, Faloutsos 2004): 2^scale rows and columns and
/// edge_factor * 2^scale generated edges, duplicates merged (nnz <= edges). Edge e descends
/// `scale` levels of the quadrant tree, most significant bit first; at level l it draws
/// u = hash_to_unit(counter_hash(seed, stream_rmat, e, l)) and goes to quadrant a (u < a),
/// b (column bit set, u < a + b), c (row bit set, u < a + b + c) or d (both bits set).
/// Values 1, or random with GeneratorOptions::random_values. 0 <= scale <= 31 (and 2^scale must
/// fit Ordinal), edge_factor >= 0, a, b, c >= 0 with a + b + c <= 1. Work O(edges * scale) for the
/// edges plus a radix sort of the edge keys; device memory about 16 bytes per edge (two key
/// buffers) before the CSR arrays are allocated.
template <class Scalar = double, class Ordinal = int, class Offset = int,
          class Device = Kokkos::DefaultExecutionSpace>
CsrMatrix<Scalar, Ordinal, Offset, Device> rmat(
    int scale, std::int64_t edge_factor, std::uint64_t seed, double a = 0.57, double b = 0.19,
    double c = 0.19, const GeneratorOptions& options = GeneratorOptions()) {
  const char* who = "spk::generate::rmat";
  require(scale >= 0 && scale <= 31, who, "scale = ", scale, " is outside [0, 31]");
  require(edge_factor >= 0, who, "edge_factor = ", edge_factor, " is negative");
  require(a >= 0 && b >= 0 && c >= 0 && a + b + c <= 1.0 + 1e-12, who, "probabilities a = ", a,
          ", b = ", b, ", c = ", c, " must be >= 0 with a + b + c <= 1");
  const std::string size_text = str_cat("scale = ", scale);
  impl::check_dimension_fits<Ordinal>(who, size_text, std::int64_t(1) << scale, "rows");
  const std::int64_t edges = impl::mul_or_overflow(edge_factor, std::int64_t(1) << scale);
  require(edges >= 0, who, size_text, " with edge_factor = ", edge_factor,
          " gives more edges than int64 can count");
  return impl::rmat_matrix<Scalar, Ordinal, Offset, Device>(
      who, scale, edges, a, a + b, a + b + c, seed, options.random_values, options.seed);
}

/// Circuit-like matrix, nrows x nrows: most rows are short, with 1 + hash_below(counter_hash(
/// seed, stream_row_length, i, 0), 2 mean_row_len - 1) entries (mean mean_row_len, capped at
/// nrows) at random columns anywhere in the matrix, diagonal included; n_long_rows rows (a supply
/// net connected to many nodes) have long_row_len entries each, diagonal included. Long row t
/// lies at a hashed position in [t * nrows / n_long_rows, (t + 1) * nrows / n_long_rows), so long
/// rows are spread over the matrix. Columns are drawn as in random_banded with the whole row as
/// the band. Values random (GeneratorOptions::seed). mean_row_len >= 1,
/// 0 <= n_long_rows <= nrows, 1 <= long_row_len <= nrows, nrows <= 3037000499.
template <class Scalar = double, class Ordinal = int, class Offset = int,
          class Device = Kokkos::DefaultExecutionSpace>
CsrMatrix<Scalar, Ordinal, Offset, Device> circuit_like(
    std::int64_t nrows, std::int64_t mean_row_len, std::int64_t n_long_rows,
    std::int64_t long_row_len, std::uint64_t seed,
    const GeneratorOptions& options = GeneratorOptions()) {
  return impl::circuit_matrix<Scalar, Ordinal, Offset, Device>("spk::generate::circuit_like", nrows,
                                                               mean_row_len, n_long_rows,
                                                               long_row_len, seed, options.seed);
}

// --- from a given matrix ---------------------------------------------------------------------

/// Block-diagonal matrix holding `copies` copies of A (m x n): block c covers rows c m .. c m +
/// m - 1 and columns c n .. c n + n - 1, so the result is (copies m) x (copies n) with copies *
/// nnz(A) entries, in A's order within each row. Built on A's device; the index types of the
/// result are OutOrdinal and OutOffset (to grow past int32), checked before allocating.
/// copies >= 0. O(copies * (m + nnz(A))) work on the device.
template <class OutOrdinal, class OutOffset, class S, class O, class F, class D>
CsrMatrix<S, OutOrdinal, OutOffset, D> block_diag_replicate(const CsrMatrix<S, O, F, D>& a,
                                                            std::int64_t copies) {
  return impl::block_diag_matrix<OutOrdinal, OutOffset>("spk::generate::block_diag_replicate", a,
                                                        copies);
}

/// block_diag_replicate with the index types of A.
template <class S, class O, class F, class D>
CsrMatrix<S, O, F, D> block_diag_replicate(const CsrMatrix<S, O, F, D>& a, std::int64_t copies) {
  return impl::block_diag_matrix<O, F>("spk::generate::block_diag_replicate", a, copies);
}

/// A perturbed copy of A, the second operand of the sparse-addition tests of Derler et al.
/// (2017): every stored entry (r, c) of A, the k-th in storage order, moves to (r + dr, c + dc)
/// with dr = hash_below(counter_hash(seed, stream_perturb, k, 0), 2 radius + 1) - radius and dc
/// likewise from (k, 1), i.e. uniform in [-radius, radius], clamped to the matrix (so entries
/// on the border move inwards or stay more often). Entries that land on the same position are
/// summed in storage order; the result has A's shape, rows sorted by column, at most nnz(A)
/// entries and the same sum of values up to rounding, and depends only on A, radius and seed
/// (never on the backend). radius >= 0 (0: A with its duplicates summed); throws
/// std::invalid_argument for a negative radius or a malformed A. O(nnz) work plus a radix sort,
/// on A's device.
template <class S, class O, class F, class D>
CsrMatrix<S, O, F, D> perturb_entries(const CsrMatrix<S, O, F, D>& a, int radius,
                                      std::uint64_t seed) {
  return impl::perturb_matrix("spk::generate::perturb_entries", a, radius, seed);
}

// --- spec strings (non-template parts in src/generator_spec.cpp) ------------------------------

/// A generator named by text: "NAME:SIZE[:key=value[,key=value...]]".
struct GeneratorSpec {
  std::string name;                           ///< generator name (see generator_names())
  std::int64_t size = 0;                      ///< grid side, row count or R-MAT scale
  std::map<std::string, std::string> params;  ///< key=value options as written
};

/// Parses "NAME:SIZE[:key=value[,key=value...]]". SIZE and integer values are decimal integers
/// with an optional suffix k, M or G (10^3, 10^6, 10^9). Checks the name, the keys allowed for
/// it and the format of every value; throws std::invalid_argument naming the spec text and the
/// valid names or keys. O(length of text).
GeneratorSpec parse_generator_spec(const std::string& text);

/// The valid generator names, in the order describe_generators() lists them.
std::vector<std::string> generator_names();

/// Multi-line help on the spec syntax, the generators, their SIZE and their keys with defaults
/// (for --help of command-line tools).
std::string describe_generators();

/// Canonical text of a spec (parse_generator_spec(to_string(s)) gives s back).
std::string to_string(const GeneratorSpec& spec);

/// Throws std::invalid_argument unless the spec has a valid name, a non-negative size and only
/// keys of its generator with well-formed values (for specs built in code).
void validate_generator_spec(const GeneratorSpec& spec);

/// Integer parameter `key` of a spec, or its generator's default. Throws for unknown keys.
std::int64_t spec_int_param(const GeneratorSpec& spec, const std::string& key);

/// Real parameter `key` of a spec (rmat's a, b, c), or its default.
double spec_real_param(const GeneratorSpec& spec, const std::string& key);

/// GeneratorOptions of a spec: seed= (default 1) and values=random|default.
GeneratorOptions spec_options(const GeneratorSpec& spec);

/// Exact number of rows of the matrix a spec describes; throws std::invalid_argument past int64.
std::int64_t spec_nrows(const GeneratorSpec& spec);

/// Cheap host-side upper bound of the nonzeros of the matrix a spec describes (exact for the
/// stencils); throws std::invalid_argument if even the bound exceeds int64. Lets tools choose
/// 64-bit offsets before generating. O(1).
std::int64_t estimate_nnz(const GeneratorSpec& spec);

/// Builds the matrix a spec describes (see describe_generators()). The spec's seed seeds both
/// pattern and values. Throws std::invalid_argument for invalid specs or sizes that do not fit
/// Ordinal / Offset, before allocating.
template <class Scalar = double, class Ordinal = int, class Offset = int,
          class Device = Kokkos::DefaultExecutionSpace>
CsrMatrix<Scalar, Ordinal, Offset, Device> from_spec(const GeneratorSpec& spec) {
  validate_generator_spec(spec);
  const GeneratorOptions opt = spec_options(spec);
  const std::string& g = spec.name;
  const std::int64_t n = spec.size;
  if (g == "poisson2d5") return poisson2d_5pt<Scalar, Ordinal, Offset, Device>(n, opt);
  if (g == "poisson3d7") return poisson3d_7pt<Scalar, Ordinal, Offset, Device>(n, opt);
  if (g == "poisson3d27") return poisson3d_27pt<Scalar, Ordinal, Offset, Device>(n, opt);
  if (g == "pde") return pde_convdiff3d<Scalar, Ordinal, Offset, Device>(n, opt);
  if (g == "banded")
    return random_banded<Scalar, Ordinal, Offset, Device>(
        n, spec_int_param(spec, "hbw"), spec_int_param(spec, "nnz_per_row"), opt.seed, opt);
  if (g == "rmat") {
    require(n <= 31, "spk::generate::from_spec", "rmat scale ", n, " is outside [0, 31]");
    return rmat<Scalar, Ordinal, Offset, Device>(
        int(n), spec_int_param(spec, "edge_factor"), opt.seed, spec_real_param(spec, "a"),
        spec_real_param(spec, "b"), spec_real_param(spec, "c"), opt);
  }
  if (g == "circuit")
    return circuit_like<Scalar, Ordinal, Offset, Device>(
        n, spec_int_param(spec, "mean_row_len"), spec_int_param(spec, "long_rows"),
        spec_int_param(spec, "long_row_len"), opt.seed, opt);
  throw_runtime_error("spk::generate::from_spec", "internal error: generator '", g,
                      "' passed validation but has no builder");
}

/// from_spec(parse_generator_spec(text)).
template <class Scalar = double, class Ordinal = int, class Offset = int,
          class Device = Kokkos::DefaultExecutionSpace>
CsrMatrix<Scalar, Ordinal, Offset, Device> from_spec(const std::string& text) {
  return from_spec<Scalar, Ordinal, Offset, Device>(parse_generator_spec(text));
}

}  // namespace generate
}  // namespace spk
