// spk/impl/generate_kernels.hpp: device kernels behind spk/generate.hpp.
//
// Every generator builds its CSR matrix on the device in three steps: count the entries of each
// row, turn the counts into row offsets with an exclusive Kokkos::parallel_scan (in int64, so an
// overflow of the Offset type is detected before col_idx and values are allocated), then fill
// each row in column order. Randomness comes from a counter-based hash of (seed, stream, a, b),
// so a matrix depends only on its arguments, never on the backend or the thread schedule.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <spk/convert.hpp>
#include <spk/coo_matrix.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/radix_sort.hpp>
#include <spk/impl/search.hpp>
#include <spk/scalar.hpp>
#include <string>
#include <type_traits>

namespace spk {
namespace impl {

// --- counter-based random numbers ------------------------------------------------------------

/// The splitmix64 finaliser: a bijective 64-bit mixing function (Steele, Lea, Flood 2014).
KOKKOS_INLINE_FUNCTION std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Hash of (seed, stream, a, b): the one source of randomness of the generators. O(1).
KOKKOS_INLINE_FUNCTION std::uint64_t counter_hash(std::uint64_t seed, std::uint64_t stream,
                                                  std::uint64_t a, std::uint64_t b) {
  return mix64(mix64(mix64(mix64(seed) ^ stream) ^ a) ^ b);
}

/// The top 53 bits of a hash as a double in [0, 1) (exact, so equal on every backend).
KOKKOS_INLINE_FUNCTION double hash_to_unit(std::uint64_t h) {
  return double(h >> 11) * (1.0 / 9007199254740992.0);
}

/// A hash mapped to [0, r) for r >= 1: multiply-shift for r <= 2^32, modulo above.
KOKKOS_INLINE_FUNCTION std::uint64_t hash_below(std::uint64_t h, std::uint64_t r) {
  return r <= (std::uint64_t(1) << 32) ? ((h >> 32) * r) >> 32 : h % r;
}

/// Independent streams of counter_hash, one per use.
enum RngStream : std::uint64_t {
  stream_value_real = 1,  ///< (row, col): real part of a random value
  stream_value_imag = 2,  ///< (row, col): imaginary part of a random value
  stream_row_length = 3,  ///< (row, 0): length of a short circuit_like row
  stream_columns = 4,     ///< (row, draw): column choices of a row
  stream_long_rows = 5,   ///< (t, 0): position of long row t of circuit_like
  stream_rmat = 6,        ///< (edge, level): quadrant choice of an R-MAT edge
  stream_perturb = 7      ///< (entry, 0 / 1): row / column shift of perturb_entries
};

/// Random value of entry (i, j): components 2 * hash_to_unit(...) - 1 in [-1, 1), the imaginary
/// part only for complex types.
template <class Scalar>
KOKKOS_INLINE_FUNCTION Scalar random_entry(std::uint64_t seed, std::int64_t i, std::int64_t j) {
  using traits = scalar_traits<Scalar>;
  const double re = 2.0 * hash_to_unit(counter_hash(seed, stream_value_real, std::uint64_t(i),
                                                    std::uint64_t(j))) -
                    1.0;
  const double im = traits::is_complex
                        ? 2.0 * hash_to_unit(counter_hash(seed, stream_value_imag, std::uint64_t(i),
                                                          std::uint64_t(j))) -
                              1.0
                        : 0.0;
  return traits::make(re, im);
}

// --- host-side size arithmetic ---------------------------------------------------------------

/// a * b for a, b >= 0, or -1 when it overflows int64.
inline std::int64_t mul_or_overflow(std::int64_t a, std::int64_t b) {
  if (a < 0 || b < 0) return -1;
  if (a != 0 && b > std::numeric_limits<std::int64_t>::max() / a) return -1;
  return a * b;
}

/// a + b for a, b >= 0, or -1 when it overflows int64 (or either is -1).
inline std::int64_t add_or_overflow(std::int64_t a, std::int64_t b) {
  if (a < 0 || b < 0) return -1;
  if (b > std::numeric_limits<std::int64_t>::max() - a) return -1;
  return a + b;
}

/// Throws unless a matrix dimension `dim` (-1: past int64) fits Ordinal.
template <class Ordinal>
void check_dimension_fits(const char* who, const std::string& size_text, std::int64_t dim,
                          const char* what) {
  if (dim < 0)
    throw_invalid_argument(who, size_text, " gives more ", what, " than int64 can count");
  if (std::uint64_t(dim) > std::uint64_t(std::numeric_limits<Ordinal>::max()))
    throw_invalid_argument(who, size_text, " gives ", dim, " ", what,
                           ", more than the Ordinal type ", integer_type_name<Ordinal>(),
                           " holds (max ", std::numeric_limits<Ordinal>::max(),
                           "); use a 64-bit Ordinal (int64_t)");
}

/// Throws unless `nnz` entries (-1: past int64) can be indexed by Offset.
template <class Offset>
void check_nnz_fits(const char* who, const std::string& size_text, std::int64_t nnz,
                    const char* qualifier = "") {
  if (nnz < 0)
    throw_invalid_argument(who, size_text, " needs ", qualifier,
                           "more nonzeros than int64 can count");
  if (std::uint64_t(nnz) > std::uint64_t(std::numeric_limits<Offset>::max()))
    throw_invalid_argument(who, size_text, " needs ", qualifier, nnz,
                           " nonzeros, more than the Offset type ", integer_type_name<Offset>(),
                           " holds (max ", std::numeric_limits<Offset>::max(),
                           "); use a 64-bit Offset (int64_t)");
}

// --- count -> offsets -> fill ----------------------------------------------------------------

/// Exclusive scan of counts(0 .. nrows-1) into row_map(0 .. nrows), computed in int64; returns
/// the total. row_map holds garbage when the total does not fit Offset (the caller checks).
template <class Offset, class Device>
std::int64_t counts_to_row_map(const Kokkos::View<std::int64_t*, Device>& counts,
                               const Kokkos::View<Offset*, Device>& row_map) {
  using exec = typename Kokkos::View<Offset*, Device>::execution_space;
  const std::int64_t nrows = std::int64_t(row_map.extent(0)) - 1;
  const auto c = counts;
  const auto r = row_map;
  std::int64_t total = 0;
  Kokkos::parallel_scan(
      "spk::generate::row_offsets",
      Kokkos::RangePolicy<exec, Kokkos::IndexType<std::int64_t>>(0, nrows + 1),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& update, const bool final) {
        const std::int64_t len = i < nrows ? c(i) : 0;
        if (final) r(i) = Offset(update);
        update += len;
      },
      total);
  return total;
}

/// Allocates col_idx and values for nnz entries (uninitialised).
template <class S, class O, class F, class D>
CsrMatrix<S, O, F, D> allocate_csr(std::int64_t nrows, std::int64_t ncols,
                                   const typename CsrMatrix<S, O, F, D>::row_map_type& row_map,
                                   std::int64_t nnz) {
  using csr = CsrMatrix<S, O, F, D>;
  typename csr::index_type col_idx(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::csr::col_idx"), std::size_t(nnz));
  typename csr::values_type values(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::csr::values"), std::size_t(nnz));
  return csr(O(nrows), O(ncols), row_map, col_idx, values);
}

// --- stencils --------------------------------------------------------------------------------

/// A stencil on a 3 x 3 x 3 neighbourhood: offset (dx, dy, dz) in {-1, 0, 1}^3 has index
/// 9 * (dz + 1) + 3 * (dy + 1) + (dx + 1); `used` marks the entries present.
struct Stencil27 {
  double coef[27] = {};
  bool used[27] = {};
};

/// Number of (point, neighbour) pairs of a stencil inside an nx x ny x nz grid, or -1 past int64.
inline std::int64_t stencil_nnz(const Stencil27& st, std::int64_t nx, std::int64_t ny,
                                std::int64_t nz) {
  std::int64_t total = 0;
  for (int o = 0; o < 27; ++o) {
    if (!st.used[o]) continue;
    const int dx = o % 3 - 1, dy = (o / 3) % 3 - 1, dz = o / 9 - 1;
    auto span = [](std::int64_t n, int d) { return n > std::abs(d) ? n - std::abs(d) : 0; };
    total = add_or_overflow(
        total, mul_or_overflow(mul_or_overflow(span(nx, dx), span(ny, dy)), span(nz, dz)));
  }
  return total;
}

/// CSR matrix of a stencil on an nx x ny x nz grid with x fastest (row = x + nx * (y + ny * z)),
/// neighbours outside the grid dropped. Values: the stencil coefficients, or random_entry(seed,
/// row, col) when `random`. Sizes are checked (in int64) before anything is allocated.
template <class S, class O, class F, class D>
CsrMatrix<S, O, F, D> stencil_matrix(const char* who, std::int64_t n, std::int64_t nx,
                                     std::int64_t ny, std::int64_t nz, const Stencil27& st,
                                     bool random, std::uint64_t seed) {
  using csr = CsrMatrix<S, O, F, D>;
  using dev = typename csr::device_type;
  using exec = typename csr::execution_space;
  using policy = Kokkos::RangePolicy<exec, Kokkos::IndexType<std::int64_t>>;
  using traits = scalar_traits<S>;
  require(n >= 0, who, "grid size n = ", n, " is negative");
  const std::string size_text = str_cat("n = ", n);
  const std::int64_t nrows = mul_or_overflow(mul_or_overflow(nx, ny), nz);
  check_dimension_fits<O>(who, size_text, nrows, "rows");
  const std::int64_t nnz = stencil_nnz(st, nx, ny, nz);
  check_nnz_fits<F>(who, size_text, nnz);

  typename csr::row_map_type row_map("spk::csr::row_map", std::size_t(nrows) + 1);
  Kokkos::View<std::int64_t*, dev> counts(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::generate::counts"), std::size_t(nrows));
  Kokkos::parallel_for(
      "spk::generate::stencil_count", policy(0, nrows), KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t x = i % nx, y = (i / nx) % ny, z = i / (nx * ny);
        std::int64_t len = 0;
        for (int o = 0; o < 27; ++o) {
          const std::int64_t xx = x + o % 3 - 1, yy = y + (o / 3) % 3 - 1, zz = z + o / 9 - 1;
          if (st.used[o] && xx >= 0 && xx < nx && yy >= 0 && yy < ny && zz >= 0 && zz < nz) ++len;
        }
        counts(i) = len;
      });
  const std::int64_t total = counts_to_row_map(counts, row_map);
  if (total != nnz)
    throw_runtime_error(who, "internal error: counted ", total, " entries, expected ", nnz);
  auto a = allocate_csr<S, O, F, D>(nrows, nrows, row_map, nnz);
  const auto col_idx = a.col_idx();
  const auto values = a.values();
  Kokkos::parallel_for(
      "spk::generate::stencil_fill", policy(0, nrows), KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t x = i % nx, y = (i / nx) % ny, z = i / (nx * ny);
        // offsets visited in (dz, dy, dx) order give increasing columns
        std::int64_t k = std::int64_t(row_map(i));
        for (int o = 0; o < 27; ++o) {
          const int dx = o % 3 - 1, dy = (o / 3) % 3 - 1, dz = o / 9 - 1;
          const std::int64_t xx = x + dx, yy = y + dy, zz = z + dz;
          if (st.used[o] && xx >= 0 && xx < nx && yy >= 0 && yy < ny && zz >= 0 && zz < nz) {
            const std::int64_t j = xx + nx * (yy + ny * zz);
            col_idx(k) = O(j);
            values(k) = random ? random_entry<S>(seed, i, j) : traits::make(st.coef[o]);
            ++k;
          }
        }
      });
  return a;
}

// --- random column sets ----------------------------------------------------------------------

/// Rows drawing at most this many columns use Floyd's exact sampling (O(m^2)); longer rows use
/// stratified sampling (O(m)).
constexpr std::int64_t floyd_max_entries = 32;

/// Column of stratum s (0 <= s < m) in the stratified sampling of sample_row_columns, so that
/// long rows can be filled one entry per thread.
KOKKOS_INLINE_FUNCTION std::int64_t stratum_column(std::uint64_t seed, std::int64_t row,
                                                   std::int64_t lo, std::int64_t w,
                                                   std::int64_t diag, std::int64_t m,
                                                   std::int64_t s) {
  const std::int64_t a = lo + s * w / m;
  const std::int64_t b = lo + (s + 1) * w / m;
  if (a <= diag && diag < b) return diag;
  return a + std::int64_t(hash_below(
                 counter_hash(seed, stream_columns, std::uint64_t(row), std::uint64_t(s)),
                 std::uint64_t(b - a)));
}

/// Writes m distinct columns of [lo, lo + w), the diagonal `diag` (inside that range) among them,
/// sorted, to col(base .. base + m), with 1 <= m <= w. Draws are counter_hash(seed,
/// stream_columns, row, t):
///  - m <= floyd_max_entries: Floyd's algorithm picks m - 1 distinct positions p of the w - 1
///    off-diagonal columns (for t = w - m, ..., w - 2: q = hash_below(draw t, t + 1); take q, or t
///    if q is taken); position p is column lo + p, plus one from the diagonal on. A uniformly
///    random subset, kept sorted by insertion in the output itself.
///  - otherwise: [0, w) is cut into m strata [s * w / m, (s + 1) * w / m) (integer division);
///    stratum s contributes the diagonal if it holds it, else lo + its start +
///    hash_below(draw s, its width).
template <class ColView>
KOKKOS_INLINE_FUNCTION void sample_row_columns(std::uint64_t seed, std::int64_t row,
                                               std::int64_t lo, std::int64_t w, std::int64_t diag,
                                               std::int64_t m, const ColView& col,
                                               std::int64_t base) {
  using O = typename ColView::non_const_value_type;
  if (m <= floyd_max_entries) {
    const std::int64_t pop = w - 1;
    std::int64_t cnt = 0;
    for (std::int64_t t = pop - (m - 1); t < pop; ++t) {
      const std::int64_t q = std::int64_t(
          hash_below(counter_hash(seed, stream_columns, std::uint64_t(row), std::uint64_t(t)),
                     std::uint64_t(t + 1)));
      bool taken = false;
      for (std::int64_t c = 0; c < cnt; ++c) taken = taken || std::int64_t(col(base + c)) == q;
      const std::int64_t p = taken ? t : q;
      std::int64_t pos = cnt;
      while (pos > 0 && std::int64_t(col(base + pos - 1)) > p) {
        col(base + pos) = col(base + pos - 1);
        --pos;
      }
      col(base + pos) = O(p);
      ++cnt;
    }
    std::int64_t pos = cnt;
    for (std::int64_t c = cnt - 1; c >= 0; --c) {
      const std::int64_t j = lo + std::int64_t(col(base + c));
      if (j >= diag) {
        col(base + c + 1) = O(j + 1);
        pos = c;
      } else {
        col(base + c) = O(j);
      }
    }
    col(base + pos) = O(diag);
  } else {
    for (std::int64_t s = 0; s < m; ++s)
      col(base + s) = O(stratum_column(seed, row, lo, w, diag, m, s));
  }
}

/// values(k) = random_entry(seed, row, col(k)) for k in [begin, end).
template <class ColView, class ValView>
KOKKOS_INLINE_FUNCTION void random_row_values(std::uint64_t seed, std::int64_t row,
                                              const ColView& col, const ValView& values,
                                              std::int64_t begin, std::int64_t end) {
  using S = typename ValView::non_const_value_type;
  for (std::int64_t k = begin; k < end; ++k)
    values(k) = random_entry<S>(seed, row, std::int64_t(col(k)));
}

/// Whether `value` is among sorted(0 .. n - 1).
template <class View>
KOKKOS_INLINE_FUNCTION bool sorted_contains(const View& sorted, std::int64_t n,
                                            std::int64_t value) {
  const std::int64_t p = impl::lower_bound(sorted, std::int64_t(0), n, value);
  return p < n && std::int64_t(sorted(p)) == value;
}

/// Banded rows: row i holds min(nnz_per_row, w_i) columns of its band [lo_i, lo_i + w_i).
template <class S, class O, class F, class D>
CsrMatrix<S, O, F, D> banded_matrix(const char* who, std::int64_t nrows, std::int64_t hbw,
                                    std::int64_t nnz_per_row, std::uint64_t seed,
                                    std::uint64_t value_seed) {
  using csr = CsrMatrix<S, O, F, D>;
  using dev = typename csr::device_type;
  using exec = typename csr::execution_space;
  using policy = Kokkos::RangePolicy<exec, Kokkos::IndexType<std::int64_t>>;
  require(nrows >= 0, who, "nrows = ", nrows, " is negative");
  require(hbw >= 0, who, "half_bandwidth = ", hbw, " is negative");
  require(nnz_per_row >= 1, who, "nnz_per_row = ", nnz_per_row,
          " (each row holds at least its diagonal)");
  const std::string size_text = str_cat("nrows = ", nrows);
  check_dimension_fits<O>(who, size_text, nrows, "rows");
  // each row's band holds at least min(hbw, nrows - 1) + 1 columns
  const std::int64_t min_width = nrows == 0 ? 0 : std::min(hbw, nrows - 1) + 1;
  const std::int64_t per_row = std::min(nnz_per_row, min_width);
  check_nnz_fits<F>(who, size_text, mul_or_overflow(nrows, per_row), "at least ");
  // s * w / m in the stratified sampler needs m * w to fit int64
  require(mul_or_overflow(std::min(nnz_per_row, nrows), nrows) >= 0, who,
          "nnz_per_row = ", nnz_per_row, " and nrows = ", nrows, " are too large together");

  typename csr::row_map_type row_map("spk::csr::row_map", std::size_t(nrows) + 1);
  Kokkos::View<std::int64_t*, dev> counts(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::generate::counts"), std::size_t(nrows));
  Kokkos::parallel_for(
      "spk::generate::banded_count", policy(0, nrows), KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t lo = i > hbw ? i - hbw : 0;
        const std::int64_t hi = nrows - 1 - i > hbw ? i + hbw : nrows - 1;
        const std::int64_t w = hi - lo + 1;
        counts(i) = nnz_per_row < w ? nnz_per_row : w;
      });
  const std::int64_t nnz = counts_to_row_map(counts, row_map);
  check_nnz_fits<F>(who, size_text, nnz);
  counts = Kokkos::View<std::int64_t*, dev>();
  auto a = allocate_csr<S, O, F, D>(nrows, nrows, row_map, nnz);
  const auto col_idx = a.col_idx();
  const auto values = a.values();
  Kokkos::parallel_for(
      "spk::generate::banded_fill", policy(0, nrows), KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t lo = i > hbw ? i - hbw : 0;
        const std::int64_t hi = nrows - 1 - i > hbw ? i + hbw : nrows - 1;
        const std::int64_t base = std::int64_t(row_map(i));
        const std::int64_t end = std::int64_t(row_map(i + 1));
        sample_row_columns(seed, i, lo, hi - lo + 1, i, end - base, col_idx, base);
        random_row_values(value_seed, i, col_idx, values, base, end);
      });
  return a;
}

/// circuit_like rows: short rows of 1 + hash_below(hash, 2 * mean - 1) entries (capped at
/// nrows) anywhere in [0, nrows), and n_long rows of long_len entries, one in each stratum
/// [t * nrows / n_long, (t + 1) * nrows / n_long) of the rows.
template <class S, class O, class F, class D>
CsrMatrix<S, O, F, D> circuit_matrix(const char* who, std::int64_t nrows, std::int64_t mean,
                                     std::int64_t n_long, std::int64_t long_len, std::uint64_t seed,
                                     std::uint64_t value_seed) {
  using csr = CsrMatrix<S, O, F, D>;
  using dev = typename csr::device_type;
  using exec = typename csr::execution_space;
  using policy = Kokkos::RangePolicy<exec, Kokkos::IndexType<std::int64_t>>;
  require(nrows >= 0, who, "nrows = ", nrows, " is negative");
  require(mean >= 1, who, "mean_row_len = ", mean, " (each row holds at least its diagonal)");
  require(n_long >= 0 && n_long <= nrows, who, "n_long_rows = ", n_long,
          " is outside [0, nrows = ", nrows, "]");
  require(n_long == 0 || (long_len >= 1 && long_len <= nrows), who, "long_row_len = ", long_len,
          " is outside [1, nrows = ", nrows, "]");
  const std::string size_text = str_cat("nrows = ", nrows);
  check_dimension_fits<O>(who, size_text, nrows, "rows");
  check_nnz_fits<F>(who, size_text, nrows, "at least ");
  require(mean <= std::numeric_limits<std::int64_t>::max() / 2, who, "mean_row_len = ", mean,
          " is too large");
  // t * nrows and s * w (w <= nrows) in the samplers need to fit int64
  require(mul_or_overflow(nrows, nrows) >= 0, who, "nrows = ", nrows,
          " is too large for the row and column samplers (at most 3037000499)");

  Kokkos::View<std::int64_t*, dev> long_rows(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::generate::long_rows"),
      std::size_t(n_long));
  Kokkos::parallel_for(
      "spk::generate::circuit_long_rows", policy(0, n_long), KOKKOS_LAMBDA(const std::int64_t t) {
        const std::int64_t first = t * nrows / n_long;
        const std::int64_t width = (t + 1) * nrows / n_long - first;
        long_rows(t) = first + std::int64_t(hash_below(
                                   counter_hash(seed, stream_long_rows, std::uint64_t(t), 0),
                                   std::uint64_t(width)));
      });
  typename csr::row_map_type row_map("spk::csr::row_map", std::size_t(nrows) + 1);
  Kokkos::View<std::int64_t*, dev> counts(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::generate::counts"), std::size_t(nrows));
  const std::uint64_t len_range = std::uint64_t(2 * mean - 1);
  Kokkos::parallel_for(
      "spk::generate::circuit_count", policy(0, nrows), KOKKOS_LAMBDA(const std::int64_t i) {
        std::int64_t len;
        if (sorted_contains(long_rows, n_long, i)) {
          len = long_len;
        } else {
          len = 1 + std::int64_t(hash_below(
                        counter_hash(seed, stream_row_length, std::uint64_t(i), 0), len_range));
          if (len > nrows) len = nrows;
        }
        counts(i) = len;
      });
  const std::int64_t nnz = counts_to_row_map(counts, row_map);
  check_nnz_fits<F>(who, size_text, nnz);
  counts = Kokkos::View<std::int64_t*, dev>();
  auto a = allocate_csr<S, O, F, D>(nrows, nrows, row_map, nnz);
  const auto col_idx = a.col_idx();
  const auto values = a.values();
  // long stratified rows get one thread per entry instead of one per row
  const bool flat_long = long_len > floyd_max_entries;
  Kokkos::parallel_for(
      "spk::generate::circuit_fill", policy(0, nrows), KOKKOS_LAMBDA(const std::int64_t i) {
        if (flat_long && sorted_contains(long_rows, n_long, i)) return;
        const std::int64_t base = std::int64_t(row_map(i));
        const std::int64_t end = std::int64_t(row_map(i + 1));
        sample_row_columns(seed, i, 0, nrows, i, end - base, col_idx, base);
        random_row_values(value_seed, i, col_idx, values, base, end);
      });
  if (flat_long)
    Kokkos::parallel_for(
        "spk::generate::circuit_fill_long", policy(0, n_long * long_len),
        KOKKOS_LAMBDA(const std::int64_t e) {
          const std::int64_t t = e / long_len, s = e % long_len;
          const std::int64_t row = long_rows(t);
          const std::int64_t k = std::int64_t(row_map(row)) + s;
          const std::int64_t j = stratum_column(seed, row, 0, nrows, row, long_len, s);
          col_idx(k) = O(j);
          values(k) = random_entry<S>(value_seed, row, j);
        });
  return a;
}

// --- R-MAT -----------------------------------------------------------------------------------

/// Sorts R-MAT edge keys (their low `nbits` bits; higher bits must be zero) with the stable radix
/// sort of spk/impl/radix_sort.hpp: at most 8-bit digits, each thread owning `chunk` contiguous
/// keys (a launch parameter: it changes the speed, not the result; 2048 keeps the counters near
/// one byte per key). O(n * nbits / 8) work, n + 256 * n / chunk extra memory. Returns the view
/// that holds the sorted keys (`keys` or a new one), so that the caller can reuse the other.
template <class Device>
Kokkos::View<std::uint64_t*, Device> radix_sort_keys(Kokkos::View<std::uint64_t*, Device> keys,
                                                     int nbits, std::int64_t chunk = 2048) {
  using exec = typename Kokkos::View<std::uint64_t*, Device>::execution_space;
  RadixSortParams p;
  p.chunk = chunk;
  p.digit_bits = 8;
  stable_radix_sort<exec>(keys, nbits, p);
  return keys;
}

/// R-MAT graph: edge e (0 <= e < edges) descends `scale` levels; at level l it draws u =
/// hash_to_unit(counter_hash(seed, stream_rmat, e, l)) and sets bit scale - 1 - l of the column
/// (quadrant b: a <= u < ab), of the row (quadrant c: ab <= u < abc) or of both (quadrant d:
/// u >= abc); u < a keeps quadrant a. ab = a + b and abc = a + b + c are computed by the caller.
/// Edge keys (row << scale | col) are radix sorted and duplicates merged. Values: 1, or
/// random_entry(value_seed, row, col) when `random`.
template <class S, class O, class F, class D>
CsrMatrix<S, O, F, D> rmat_matrix(const char* who, int scale, std::int64_t edges, double a,
                                  double ab, double abc, std::uint64_t seed, bool random,
                                  std::uint64_t value_seed) {
  using csr = CsrMatrix<S, O, F, D>;
  using dev = typename csr::device_type;
  using exec = typename csr::execution_space;
  using policy = Kokkos::RangePolicy<exec, Kokkos::IndexType<std::int64_t>>;
  using traits = scalar_traits<S>;
  const std::string size_text = str_cat("scale = ", scale);
  const std::int64_t n = std::int64_t(1) << scale;
  const std::uint64_t col_mask = std::uint64_t(n) - 1;

  Kokkos::View<std::uint64_t*, dev> keys(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::generate::rmat_keys"),
      std::size_t(edges));
  Kokkos::parallel_for(
      "spk::generate::rmat_edges", policy(0, edges), KOKKOS_LAMBDA(const std::int64_t e) {
        std::uint64_t row = 0, col = 0;
        for (int l = 0; l < scale; ++l) {
          const double u =
              hash_to_unit(counter_hash(seed, stream_rmat, std::uint64_t(e), std::uint64_t(l)));
          const std::uint64_t bit = std::uint64_t(1) << (scale - 1 - l);
          if (u >= abc) {
            row |= bit;
            col |= bit;
          } else if (u >= ab) {
            row |= bit;
          } else if (u >= a) {
            col |= bit;
          }
        }
        keys(e) = (row << scale) | col;
      });
  auto sorted = radix_sort_keys(keys, 2 * scale);
  // the buffer radix_sort_keys did not return receives the distinct keys
  auto unique =
      sorted.data() == keys.data()
          ? Kokkos::View<std::uint64_t*, dev>(
                Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::generate::rmat_unique"),
                std::size_t(edges))
          : keys;
  keys = Kokkos::View<std::uint64_t*, dev>();
  std::int64_t nnz = 0;
  {
    const auto s = sorted;
    const auto u = unique;
    Kokkos::parallel_scan(
        "spk::generate::rmat_unique", policy(0, edges),
        KOKKOS_LAMBDA(const std::int64_t k, std::int64_t& update, const bool final) {
          if (k == 0 || s(k) != s(k - 1)) {
            if (final) u(update) = s(k);
            ++update;
          }
        },
        nnz);
  }
  sorted = Kokkos::View<std::uint64_t*, dev>();
  check_nnz_fits<F>(who, size_text, nnz);

  typename csr::row_map_type row_map(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::csr::row_map"), std::size_t(n) + 1);
  const auto u = unique;
  Kokkos::parallel_for(
      "spk::generate::rmat_row_map", policy(0, n + 1), KOKKOS_LAMBDA(const std::int64_t r) {
        // first distinct key of row >= r
        row_map(r) = F(impl::lower_bound(u, std::int64_t(0), nnz, std::uint64_t(r) << scale));
      });
  auto mat = allocate_csr<S, O, F, D>(n, n, row_map, nnz);
  const auto col_idx = mat.col_idx();
  const auto values = mat.values();
  Kokkos::parallel_for(
      "spk::generate::rmat_fill", policy(0, nnz), KOKKOS_LAMBDA(const std::int64_t k) {
        const std::uint64_t key = u(k);
        const std::int64_t col = std::int64_t(key & col_mask);
        col_idx(k) = O(col);
        values(k) =
            random ? random_entry<S>(value_seed, std::int64_t(key >> scale), col) : traits::one();
      });
  return mat;
}

// --- block diagonal --------------------------------------------------------------------------

/// `copies` copies of A on the block diagonal: block c holds rows c * m .. and columns c * n ..
template <class OO, class OF, class S, class O, class F, class D>
CsrMatrix<S, OO, OF, D> block_diag_matrix(const char* who, const CsrMatrix<S, O, F, D>& a,
                                          std::int64_t copies) {
  using out_t = CsrMatrix<S, OO, OF, D>;
  using exec = typename out_t::execution_space;
  using policy = Kokkos::RangePolicy<exec, Kokkos::IndexType<std::int64_t>>;
  require(copies >= 0, who, "copies = ", copies, " is negative");
  const std::int64_t m = a.nrows(), ncols = a.ncols(), nnz_a = std::int64_t(a.nnz());
  const std::string size_text =
      str_cat("copies = ", copies, " of a ", m, " x ", ncols, " matrix with ", nnz_a, " nonzeros");
  const std::int64_t nrows = mul_or_overflow(copies, m);
  check_dimension_fits<OO>(who, size_text, nrows, "rows");
  check_dimension_fits<OO>(who, size_text, mul_or_overflow(copies, ncols), "columns");
  const std::int64_t nnz = mul_or_overflow(copies, nnz_a);
  check_nnz_fits<OF>(who, size_text, nnz);

  typename out_t::row_map_type row_map(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::csr::row_map"), std::size_t(nrows) + 1);
  auto b = allocate_csr<S, OO, OF, D>(nrows, copies * ncols, row_map, nnz);
  const auto a_row_map = a.row_map();
  const auto a_col_idx = a.col_idx();
  const auto a_values = a.values();
  const auto col_idx = b.col_idx();
  const auto values = b.values();
  Kokkos::parallel_for(
      "spk::generate::block_diag_fill", policy(0, nrows + 1), KOKKOS_LAMBDA(const std::int64_t r) {
        if (r == nrows) {
          row_map(r) = OF(nnz);
          return;
        }
        const std::int64_t c = r / m, i = r % m;
        const std::int64_t shift = c * nnz_a;
        row_map(r) = OF(shift + std::int64_t(a_row_map(i)));
        for (std::int64_t k = std::int64_t(a_row_map(i)); k < std::int64_t(a_row_map(i + 1)); ++k) {
          col_idx(shift + k) = OO(c * ncols + std::int64_t(a_col_idx(k)));
          values(shift + k) = a_values(k);
        }
      });
  return b;
}

// --- perturbed copy --------------------------------------------------------------------------

/// A with entry k (storage order) moved by (dr, dc), each hash_below(counter_hash(seed,
/// stream_perturb, k, 0 / 1), 2 radius + 1) - radius, clamped to the matrix; coinciding entries
/// are summed (in storage order) by coo_to_csr.
template <class S, class O, class F, class D>
CsrMatrix<S, O, F, D> perturb_matrix(const char* who, const CsrMatrix<S, O, F, D>& a, int radius,
                                     std::uint64_t seed) {
  using exec = typename CsrMatrix<S, O, F, D>::execution_space;
  using policy = Kokkos::RangePolicy<exec, Kokkos::IndexType<std::int64_t>>;
  require(radius >= 0, who, "radius = ", radius, " is negative");
  CooMatrix<S, O, F, D> coo = csr_to_coo(a);
  const std::int64_t nrows = a.nrows(), ncols = a.ncols();
  const std::uint64_t width = 2 * std::uint64_t(radius) + 1;
  const auto rows = coo.row_idx();
  const auto cols = coo.col_idx();
  Kokkos::parallel_for(
      "spk::generate::perturb", policy(0, std::int64_t(coo.nnz())),
      KOKKOS_LAMBDA(const std::int64_t k) {
        const std::uint64_t e = std::uint64_t(k);
        const std::int64_t dr =
            std::int64_t(hash_below(counter_hash(seed, stream_perturb, e, 0), width)) - radius;
        const std::int64_t dc =
            std::int64_t(hash_below(counter_hash(seed, stream_perturb, e, 1), width)) - radius;
        const std::int64_t r = std::int64_t(rows(k)) + dr, c = std::int64_t(cols(k)) + dc;
        rows(k) = O(r < 0 ? 0 : r >= nrows ? nrows - 1 : r);
        cols(k) = O(c < 0 ? 0 : c >= ncols ? ncols - 1 : c);
      });
  return coo_to_csr(coo);
}

}  // namespace impl
}  // namespace spk
