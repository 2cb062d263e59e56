// Tests of spk/generate.hpp: every generator against a straightforward sequential host
// implementation written here (sharing only the documented hash primitives), structural
// properties (symmetry, row sums, nnz formulas, bands, long rows), determinism across calls and
// seeds, spec parsing and the size checks that must throw before allocating.
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <spk/generate.hpp>
#include <string>
#include <utility>
#include <vector>

#include "test_common.hpp"

namespace {

namespace gen = spk::generate;
using i64 = std::int64_t;
using u64 = std::uint64_t;

/// A CSR matrix as plain host vectors, whatever its index types.
template <class S>
struct PlainCsr {
  i64 nrows = 0, ncols = 0;
  std::vector<i64> row_map{0};
  std::vector<i64> cols;
  std::vector<S> vals;
  i64 nnz() const { return i64(cols.size()); }
};

template <class S, class O, class F, class D>
PlainCsr<S> plain(const spk::CsrMatrix<S, O, F, D>& a) {
  const auto h = spk::to_host(a);
  PlainCsr<S> p;
  p.nrows = h.nrows();
  p.ncols = h.ncols();
  REQUIRE(h.row_map().extent(0) == std::size_t(h.nrows()) + 1);
  p.row_map.assign(h.row_map().extent(0), 0);
  for (std::size_t i = 0; i < p.row_map.size(); ++i) p.row_map[i] = i64(h.row_map()(i));
  for (std::size_t k = 0; k < h.col_idx().extent(0); ++k) {
    p.cols.push_back(i64(h.col_idx()(k)));
    p.vals.push_back(h.values()(k));
  }
  return p;
}

/// CSR from one ordered map per row.
template <class S>
PlainCsr<S> from_rows(i64 nrows, i64 ncols, const std::vector<std::map<i64, S>>& rows) {
  PlainCsr<S> p;
  p.nrows = nrows;
  p.ncols = ncols;
  for (const auto& r : rows) {
    for (const auto& e : r) {
      p.cols.push_back(e.first);
      p.vals.push_back(e.second);
    }
    p.row_map.push_back(i64(p.cols.size()));
  }
  return p;
}

/// Exact structural equality, values within rel_tol (0: exact). Reports the first mismatch.
template <class S>
void check_same(const PlainCsr<S>& got, const PlainCsr<S>& want, double rel_tol = 0.0) {
  using traits = spk::scalar_traits<S>;
  REQUIRE(got.nrows == want.nrows);
  REQUIRE(got.ncols == want.ncols);
  REQUIRE(got.row_map == want.row_map);
  REQUIRE(got.cols == want.cols);
  for (std::size_t k = 0; k < got.vals.size(); ++k) {
    const double err = traits::abs(got.vals[k] - want.vals[k]);
    const double bound = rel_tol * traits::abs(want.vals[k]);
    if (!(err <= bound)) {
      INFO("value " << k << ": got " << traits::real(got.vals[k]) << " + "
                    << traits::imag(got.vals[k]) << "i, want " << traits::real(want.vals[k])
                    << " + " << traits::imag(want.vals[k]) << "i");
      CHECK(err <= bound);
      return;
    }
  }
}

/// Columns strictly increasing within each row and inside [0, ncols).
template <class S>
void check_sorted_unique(const PlainCsr<S>& a) {
  REQUIRE(a.row_map.size() == std::size_t(a.nrows) + 1);
  REQUIRE(a.row_map.back() == a.nnz());
  for (i64 i = 0; i < a.nrows; ++i) {
    for (i64 k = a.row_map[i]; k < a.row_map[i + 1]; ++k) {
      if (a.cols[k] < 0 || a.cols[k] >= a.ncols ||
          (k > a.row_map[i] && a.cols[k] <= a.cols[k - 1])) {
        INFO("row " << i << " position " << k - a.row_map[i] << " column " << a.cols[k]);
        CHECK(false);
        return;
      }
    }
  }
}

/// The documented random value of entry (i, j), written out from the hash primitives.
template <class S>
S ref_random(u64 seed, i64 i, i64 j) {
  using traits = spk::scalar_traits<S>;
  const double re =
      2.0 * gen::hash_to_unit(gen::counter_hash(seed, gen::stream_value_real, u64(i), u64(j))) -
      1.0;
  double im = 0.0;
  if (traits::is_complex)
    im = 2.0 * gen::hash_to_unit(gen::counter_hash(seed, gen::stream_value_imag, u64(i), u64(j))) -
         1.0;
  return traits::make(re, im);
}

/// Grid stencil reference: a list of (dx, dy, dz, value) applied to every point of an
/// nx x ny x nz grid numbered x fastest.
struct Tap {
  int dx, dy, dz;
  double value;
};

template <class S>
PlainCsr<S> ref_stencil(i64 nx, i64 ny, i64 nz, const std::vector<Tap>& taps, bool random,
                        u64 seed) {
  const i64 n = nx * ny * nz;
  std::vector<std::map<i64, S>> rows(static_cast<std::size_t>(n));
  for (i64 z = 0; z < nz; ++z)
    for (i64 y = 0; y < ny; ++y)
      for (i64 x = 0; x < nx; ++x) {
        const i64 i = x + nx * (y + ny * z);
        for (const Tap& t : taps) {
          const i64 xx = x + t.dx, yy = y + t.dy, zz = z + t.dz;
          if (xx < 0 || yy < 0 || zz < 0 || xx >= nx || yy >= ny || zz >= nz) continue;
          const i64 j = xx + nx * (yy + ny * zz);
          rows[i][j] = random ? ref_random<S>(seed, i, j) : spk::scalar_traits<S>::make(t.value);
        }
      }
  return from_rows(n, n, rows);
}

std::vector<Tap> taps_5pt() {
  return {{0, 0, 0, 4}, {-1, 0, 0, -1}, {1, 0, 0, -1}, {0, -1, 0, -1}, {0, 1, 0, -1}};
}
std::vector<Tap> taps_7pt(double diag, double minus, double plus) {
  return {{0, 0, 0, diag}, {-1, 0, 0, minus}, {1, 0, 0, plus}, {0, -1, 0, minus},
          {0, 1, 0, plus}, {0, 0, -1, minus}, {0, 0, 1, plus}};
}
std::vector<Tap> taps_27pt() {
  std::vector<Tap> t;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        t.push_back({dx, dy, dz, (dx == 0 && dy == 0 && dz == 0) ? 26.0 : -1.0});
  return t;
}

/// The documented column sampler: Floyd for m <= 32 (with a std::set), strata above.
std::vector<i64> ref_row_columns(u64 seed, i64 row, i64 lo, i64 w, i64 diag, i64 m) {
  std::vector<i64> cols;
  if (m <= 32) {
    std::set<i64> picked;
    for (i64 t = w - m; t <= w - 2; ++t) {
      const i64 q = i64(gen::hash_below(
          gen::counter_hash(seed, gen::stream_columns, u64(row), u64(t)), u64(t + 1)));
      picked.insert(picked.count(q) ? t : q);
    }
    for (i64 p : picked) cols.push_back(lo + p < diag ? lo + p : lo + p + 1);
    cols.push_back(diag);
  } else {
    for (i64 s = 0; s < m; ++s) {
      const i64 first = lo + (s * w) / m, last = lo + ((s + 1) * w) / m;  // [first, last)
      if (first <= diag && diag < last)
        cols.push_back(diag);
      else
        cols.push_back(first + i64(gen::hash_below(
                                   gen::counter_hash(seed, gen::stream_columns, u64(row), u64(s)),
                                   u64(last - first))));
    }
  }
  std::sort(cols.begin(), cols.end());
  return cols;
}

template <class S>
PlainCsr<S> ref_banded(i64 n, i64 hbw, i64 k, u64 seed, u64 value_seed) {
  std::vector<std::map<i64, S>> rows(static_cast<std::size_t>(n));
  for (i64 i = 0; i < n; ++i) {
    const i64 lo = std::max<i64>(0, i - hbw), hi = std::min<i64>(n - 1, i + hbw);
    const i64 w = hi - lo + 1;
    for (i64 j : ref_row_columns(seed, i, lo, w, i, std::min(k, w)))
      rows[i][j] = ref_random<S>(value_seed, i, j);
  }
  return from_rows(n, n, rows);
}

std::vector<i64> ref_long_rows(i64 n, i64 nlong, u64 seed) {
  std::vector<i64> r;
  for (i64 t = 0; t < nlong; ++t) {
    const i64 first = t * n / nlong, width = (t + 1) * n / nlong - first;
    r.push_back(first +
                i64(gen::hash_below(gen::counter_hash(seed, gen::stream_long_rows, u64(t), 0),
                                    u64(width))));
  }
  return r;
}

template <class S>
PlainCsr<S> ref_circuit(i64 n, i64 mean, i64 nlong, i64 long_len, u64 seed, u64 value_seed) {
  const std::vector<i64> longs = ref_long_rows(n, nlong, seed);
  const std::set<i64> long_set(longs.begin(), longs.end());
  std::vector<std::map<i64, S>> rows(static_cast<std::size_t>(n));
  for (i64 i = 0; i < n; ++i) {
    i64 len = long_len;
    if (!long_set.count(i)) {
      len = 1 + i64(gen::hash_below(gen::counter_hash(seed, gen::stream_row_length, u64(i), 0),
                                    u64(2 * mean - 1)));
      len = std::min(len, n);
    }
    for (i64 j : ref_row_columns(seed, i, 0, n, i, len))
      rows[i][j] = ref_random<S>(value_seed, i, j);
  }
  return from_rows(n, n, rows);
}

template <class S>
PlainCsr<S> ref_rmat(int scale, i64 edge_factor, u64 seed, double a, double b, double c,
                     bool random, u64 value_seed) {
  const i64 n = i64(1) << scale;
  std::set<std::pair<i64, i64>> edges;
  for (i64 e = 0; e < edge_factor * n; ++e) {
    i64 r = 0, col = 0;
    for (int l = 0; l < scale; ++l) {
      const double u = gen::hash_to_unit(gen::counter_hash(seed, gen::stream_rmat, u64(e), u64(l)));
      r *= 2;
      col *= 2;
      if (u < a) {
      } else if (u < a + b) {
        col += 1;
      } else if (u < a + b + c) {
        r += 1;
      } else {
        r += 1;
        col += 1;
      }
    }
    edges.insert({r, col});
  }
  std::vector<std::map<i64, S>> rows(static_cast<std::size_t>(n));
  for (const auto& e : edges)
    rows[e.first][e.second] =
        random ? ref_random<S>(value_seed, e.first, e.second) : spk::scalar_traits<S>::one();
  return from_rows(n, n, rows);
}

/// A(i, j) or 0.
template <class S>
S entry(const PlainCsr<S>& a, i64 i, i64 j) {
  for (i64 k = a.row_map[i]; k < a.row_map[i + 1]; ++k)
    if (a.cols[k] == j) return a.vals[k];
  return spk::scalar_traits<S>::zero();
}

template <class S>
bool is_symmetric(const PlainCsr<S>& a) {
  for (i64 i = 0; i < a.nrows; ++i)
    for (i64 k = a.row_map[i]; k < a.row_map[i + 1]; ++k)
      if (!(entry(a, a.cols[k], i) == a.vals[k])) return false;
  return true;
}

}  // namespace

// --- stencils ----------------------------------------------------------------------------------

TEST_CASE_TEMPLATE_DEFINE("generate: Poisson stencils match the grid reference", Device,
                          gen_poisson) {
  for (i64 n : {0, 1, 2, 3, 6}) {
    CAPTURE(n);
    const auto p2 = plain(gen::poisson2d_5pt<double, int, int, Device>(n));
    check_same(p2, ref_stencil<double>(n, n, 1, taps_5pt(), false, 0));
    CHECK(p2.nnz() == (n == 0 ? 0 : 5 * n * n - 4 * n));
    const auto p7 = plain(gen::poisson3d_7pt<double, int, int, Device>(n));
    check_same(p7, ref_stencil<double>(n, n, n, taps_7pt(6, -1, -1), false, 0));
    CHECK(p7.nnz() == (n == 0 ? 0 : 7 * n * n * n - 6 * n * n));
    const auto p27 = plain(gen::poisson3d_27pt<double, int, int, Device>(n));
    check_same(p27, ref_stencil<double>(n, n, n, taps_27pt(), false, 0));
    CHECK(p27.nnz() == (n == 0 ? 0 : (3 * n - 2) * (3 * n - 2) * (3 * n - 2)));
    for (const auto* a : {&p2, &p7, &p27}) {
      check_sorted_unique(*a);
      CHECK(is_symmetric(*a));
    }
  }
  // zero row sums exactly on the rows with all their neighbours
  const i64 n = 5;
  const auto p7 = plain(gen::poisson3d_7pt<double, int, int, Device>(n));
  const auto p27 = plain(gen::poisson3d_27pt<double, int, int, Device>(n));
  const auto p2 = plain(gen::poisson2d_5pt<double, int, int, Device>(n));
  int interior = 0;
  for (i64 i = 0; i < n * n * n; ++i) {
    const i64 x = i % n, y = (i / n) % n, z = i / (n * n);
    if (x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1) continue;
    ++interior;
    double s7 = 0, s27 = 0;
    for (i64 k = p7.row_map[i]; k < p7.row_map[i + 1]; ++k) s7 += p7.vals[k];
    for (i64 k = p27.row_map[i]; k < p27.row_map[i + 1]; ++k) s27 += p27.vals[k];
    CHECK(s7 == 0.0);
    CHECK(s27 == 0.0);
    CHECK(p27.row_map[i + 1] - p27.row_map[i] == 27);
  }
  CHECK(interior == 27);
  double corner_sum = 0;  // a boundary row is not zero-sum: Dirichlet neighbours dropped
  for (i64 k = p2.row_map[0]; k < p2.row_map[1]; ++k) corner_sum += p2.vals[k];
  CHECK(corner_sum == 2.0);
  // int64 ordinals and offsets give the same matrix
  check_same(plain(gen::poisson2d_5pt<double, i64, i64, Device>(7)),
             plain(gen::poisson2d_5pt<double, int, int, Device>(7)));
  check_same(plain(gen::poisson3d_27pt<double, i64, std::size_t, Device>(4)),
             plain(gen::poisson3d_27pt<double, int, int, Device>(4)));
  CHECK_THROWS_WITH_AS((gen::poisson3d_7pt<double, int, int, Device>(-1)),
                       doctest::Contains("spk::generate::poisson3d_7pt: grid size n = -1"),
                       std::invalid_argument);
}
TEST_CASE_TEMPLATE_APPLY(gen_poisson, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("generate: pde_convdiff3d has the documented coefficients", Device,
                          gen_pde) {
  for (i64 n : {1, 2, 4, 5}) {
    CAPTURE(n);
    const double h = 1.0 / double(n + 1);
    const double b = 1.0 / std::sqrt(3.0);
    const double diag = 6.0 / (h * h);
    const double minus = -1.0 / (h * h) - b / (2.0 * h);
    const double plus = -1.0 / (h * h) + b / (2.0 * h);
    const auto a = plain(gen::pde_convdiff3d<double, int, int, Device>(n));
    check_same(a, ref_stencil<double>(n, n, n, taps_7pt(diag, minus, plus), false, 0), 1e-14);
    check_sorted_unique(a);
    CHECK(a.nnz() == 7 * n * n * n - 6 * n * n);
    if (n > 1) {
      CHECK_FALSE(is_symmetric(a));
      // A(i, i + 1) - A(i + 1, i) = b / h for an x neighbour
      CHECK(std::abs(entry(a, 0, 1) - entry(a, 1, 0) - b / h) <= 1e-12 * diag);
    }
  }
  // float and complex: real stencil values, imaginary part zero
  const auto af = plain(gen::pde_convdiff3d<float, int, int, Device>(3));
  CHECK(af.vals[0] == doctest::Approx(6.0 * 16.0).epsilon(1e-6));
  const auto ac = plain(gen::pde_convdiff3d<Kokkos::complex<double>, int, int, Device>(3));
  for (const auto& v : ac.vals) CHECK(v.imag() == 0.0);
  CHECK(ac.vals[0].real() == doctest::Approx(96.0));
}
TEST_CASE_TEMPLATE_APPLY(gen_pde, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("generate: random stencil values keep the pattern", Device,
                          gen_random_stencil) {
  gen::GeneratorOptions opt;
  opt.random_values = true;
  opt.seed = 42;
  check_same(plain(gen::poisson3d_7pt<double, int, int, Device>(4, opt)),
             ref_stencil<double>(4, 4, 4, taps_7pt(6, -1, -1), true, 42));
  check_same(plain(gen::poisson2d_5pt<float, int, int, Device>(5, opt)),
             ref_stencil<float>(5, 5, 1, taps_5pt(), true, 42));
  using C = Kokkos::complex<double>;
  const auto c = plain(gen::poisson3d_27pt<C, int, int, Device>(3, opt));
  check_same(c, ref_stencil<C>(3, 3, 3, taps_27pt(), true, 42));
  int nonzero_imag = 0;
  for (const auto& v : c.vals) {
    CHECK(std::abs(v.real()) <= 1.0);
    CHECK(std::abs(v.imag()) <= 1.0);
    nonzero_imag += v.imag() != 0.0;
  }
  CHECK(nonzero_imag > 0);
  // another seed changes the values, not the pattern
  opt.seed = 43;
  const auto other = plain(gen::poisson3d_7pt<double, int, int, Device>(4, opt));
  const auto first =
      plain(gen::poisson3d_7pt<double, int, int, Device>(4, gen::GeneratorOptions{42, true}));
  CHECK(other.cols == first.cols);
  CHECK(other.vals != first.vals);
}
TEST_CASE_TEMPLATE_APPLY(gen_random_stencil, spk_test::all_devices);

// --- random patterns ---------------------------------------------------------------------------

TEST_CASE_TEMPLATE_DEFINE("generate: random_banded matches the reference and stays in the band",
                          Device, gen_banded) {
  struct Case {
    i64 n, hbw, k;
    u64 seed;
  };
  // Floyd rows, stratified rows (k > 32), band wider than the matrix, full band, diagonal only,
  // one row, no rows
  for (const Case& c :
       {Case{200, 10, 5, 1}, Case{300, 60, 40, 2}, Case{50, 100, 7, 3}, Case{40, 3, 9, 4},
        Case{30, 0, 5, 5}, Case{1, 4, 4, 6}, Case{0, 2, 2, 7}, Case{500, 1000, 33, 8}}) {
    CAPTURE(c.n);
    CAPTURE(c.hbw);
    CAPTURE(c.k);
    const gen::GeneratorOptions opt{c.seed + 100, false};
    const auto a =
        plain(gen::random_banded<double, int, int, Device>(c.n, c.hbw, c.k, c.seed, opt));
    check_same(a, ref_banded<double>(c.n, c.hbw, c.k, c.seed, c.seed + 100));
    check_sorted_unique(a);
    for (i64 i = 0; i < a.nrows; ++i) {
      const i64 lo = std::max<i64>(0, i - c.hbw), hi = std::min<i64>(c.n - 1, i + c.hbw);
      CHECK(a.row_map[i + 1] - a.row_map[i] == std::min(c.k, hi - lo + 1));
      bool has_diag = false;
      for (i64 k = a.row_map[i]; k < a.row_map[i + 1]; ++k) {
        CHECK(a.cols[k] >= lo);
        CHECK(a.cols[k] <= hi);
        CHECK(std::abs(a.vals[k]) <= 1.0);
        has_diag = has_diag || a.cols[k] == i;
      }
      CHECK(has_diag);
    }
  }
  // same seed twice: identical; other seed: another pattern
  const auto a = plain(gen::random_banded<double, int, int, Device>(400, 20, 6, 11));
  check_same(plain(gen::random_banded<double, int, int, Device>(400, 20, 6, 11)), a);
  CHECK(plain(gen::random_banded<double, int, int, Device>(400, 20, 6, 12)).cols != a.cols);
  check_same(plain(gen::random_banded<double, i64, i64, Device>(400, 20, 6, 11)), a);
  CHECK_THROWS_WITH_AS((gen::random_banded<double, int, int, Device>(10, 2, 0, 1)),
                       doctest::Contains("spk::generate::random_banded: nnz_per_row = 0"),
                       std::invalid_argument);
  CHECK_THROWS_AS((gen::random_banded<double, int, int, Device>(10, -1, 2, 1)),
                  std::invalid_argument);
}
TEST_CASE_TEMPLATE_APPLY(gen_banded, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("generate: circuit_like has its long rows and matches the reference",
                          Device, gen_circuit) {
  struct Case {
    i64 n, mean, nlong, long_len;
    u64 seed;
  };
  for (const Case& c : {Case{2000, 4, 3, 500, 1}, Case{500, 3, 5, 20, 2}, Case{64, 2, 64, 64, 3},
                        Case{1, 5, 1, 1, 4}, Case{0, 5, 0, 0, 5}, Case{100, 40, 0, 0, 6}}) {
    CAPTURE(c.n);
    CAPTURE(c.nlong);
    const gen::GeneratorOptions opt{c.seed * 7, false};
    const auto a = plain(
        gen::circuit_like<double, int, int, Device>(c.n, c.mean, c.nlong, c.long_len, c.seed, opt));
    check_same(a, ref_circuit<double>(c.n, c.mean, c.nlong, c.long_len, c.seed, c.seed * 7));
    check_sorted_unique(a);
    for (i64 i = 0; i < a.nrows; ++i) CHECK(entry(a, i, i) != 0.0);
  }
  // the long rows are the requested ones: exactly n_long_rows rows of long_row_len entries
  const i64 n = 3000, long_len = 700;
  const auto a = plain(gen::circuit_like<double, int, int, Device>(n, 5, 4, long_len, 9));
  std::vector<i64> long_rows;
  for (i64 i = 0; i < n; ++i) {
    const i64 len = a.row_map[i + 1] - a.row_map[i];
    if (len == long_len) long_rows.push_back(i);
    if (len != long_len) CHECK(len <= 9);
  }
  CHECK(long_rows == ref_long_rows(n, 4, 9));
  CHECK(long_rows.size() == 4);
  const double mean_short = double(a.nnz() - 4 * long_len) / double(n - 4);
  CHECK(mean_short == doctest::Approx(5.0).epsilon(0.05));
  check_same(plain(gen::circuit_like<double, int, int, Device>(n, 5, 4, long_len, 9)), a);
  check_same(
      plain(gen::circuit_like<double, int, int, spk::impl::HostDevice>(n, 5, 4, long_len, 9)), a);
  CHECK(plain(gen::circuit_like<double, int, int, Device>(n, 5, 4, long_len, 10)).cols != a.cols);
  CHECK_THROWS_WITH_AS((gen::circuit_like<double, int, int, Device>(10, 2, 11, 3, 1)),
                       doctest::Contains("n_long_rows = 11 is outside [0, nrows = 10]"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((gen::circuit_like<double, int, int, Device>(10, 2, 1, 11, 1)),
                       doctest::Contains("long_row_len = 11"), std::invalid_argument);
  CHECK_THROWS_AS((gen::circuit_like<double, int, int, Device>(10, 0, 1, 3, 1)),
                  std::invalid_argument);
}
TEST_CASE_TEMPLATE_APPLY(gen_circuit, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("generate: rmat matches the edge-list reference", Device, gen_rmat) {
  struct Case {
    int scale;
    i64 ef;
    u64 seed;
    double a, b, c;
    bool random;
  };
  // 0, 1, 2 and 3 radix passes; several radix chunks (> 2048 edges); other probabilities
  for (const Case& c :
       {Case{0, 3, 1, 0.57, 0.19, 0.19, false}, Case{3, 4, 2, 0.57, 0.19, 0.19, false},
        Case{6, 8, 3, 0.57, 0.19, 0.19, true}, Case{10, 4, 4, 0.45, 0.15, 0.15, false},
        Case{12, 8, 5, 0.57, 0.19, 0.19, true}, Case{5, 0, 6, 0.57, 0.19, 0.19, false},
        Case{4, 16, 7, 0.25, 0.25, 0.25, false}}) {
    CAPTURE(c.scale);
    CAPTURE(c.ef);
    const gen::GeneratorOptions opt{c.seed + 1, c.random};
    const auto a =
        plain(gen::rmat<double, int, int, Device>(c.scale, c.ef, c.seed, c.a, c.b, c.c, opt));
    check_same(a, ref_rmat<double>(c.scale, c.ef, c.seed, c.a, c.b, c.c, c.random, c.seed + 1));
    check_sorted_unique(a);
    CHECK(a.nnz() <= c.ef * (i64(1) << c.scale));
  }
  // power law: row 0 collects about edges * (a + b)^scale entries, far above the mean of 8
  const auto a = plain(gen::rmat<double, int, int, Device>(12, 8, 5));
  CHECK(a.row_map[1] - a.row_map[0] > 400);
  check_same(plain(gen::rmat<double, int, int, Device>(12, 8, 5)), a);
  CHECK(plain(gen::rmat<double, int, int, Device>(12, 8, 6)).cols != a.cols);
  check_same(plain(gen::rmat<double, i64, i64, Device>(12, 8, 5)), a);
  check_same(plain(gen::rmat<double, int, int, spk::impl::HostDevice>(12, 8, 5)), a);
  CHECK_THROWS_WITH_AS((gen::rmat<double, int, int, Device>(5, 2, 1, 0.6, 0.3, 0.3)),
                       doctest::Contains("a + b + c <= 1"), std::invalid_argument);
  CHECK_THROWS_AS((gen::rmat<double, int, int, Device>(5, -2, 1)), std::invalid_argument);
  CHECK_THROWS_WITH_AS((gen::rmat<double, int, int, Device>(32, 1, 1)),
                       doctest::Contains("scale = 32 is outside [0, 31]"), std::invalid_argument);
  CHECK_THROWS_WITH_AS((gen::rmat<double, int, int, Device>(31, 1, 1)),
                       doctest::Contains("Ordinal type int32_t"), std::invalid_argument);
}
TEST_CASE_TEMPLATE_APPLY(gen_rmat, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("generate: the radix sort of edge keys equals std::sort", Device,
                          gen_radix) {
  using Keys = Kokkos::View<u64*, typename spk::CsrMatrix<double, int, int, Device>::device_type>;
  std::mt19937_64 rng(5);
  for (int nbits : {1, 8, 13, 40, 64}) {
    for (i64 chunk : {1, 3, 2048}) {
      CAPTURE(nbits);
      CAPTURE(chunk);
      std::vector<u64> keys(1000);
      for (auto& k : keys) k = nbits == 64 ? rng() : rng() & ((u64(1) << nbits) - 1);
      for (std::size_t k = 0; k < 100; ++k) keys[k + 500] = keys[k];  // duplicates
      const Keys sorted = spk::impl::radix_sort_keys(spk_test::to_view<Device>(keys), nbits, chunk);
      std::sort(keys.begin(), keys.end());
      CHECK(spk_test::to_vector(sorted) == keys);
    }
  }
}
TEST_CASE_TEMPLATE_APPLY(gen_radix, spk_test::all_devices);

// --- block diagonal ----------------------------------------------------------------------------

TEST_CASE_TEMPLATE_DEFINE("generate: block_diag_replicate copies A entry by entry", Device,
                          gen_block_diag) {
  using Host = spk::impl::HostDevice;
  const auto host_a = spk_test::random_csr<double, int, int>(7, 5, 2, 99, 3);
  const auto a = spk::copy_to<Device>(host_a);
  const auto pa = plain(a);
  for (i64 copies : {0, 1, 4}) {
    CAPTURE(copies);
    const auto b = plain(gen::block_diag_replicate(a, copies));
    CHECK(b.nrows == copies * 7);
    CHECK(b.ncols == copies * 5);
    REQUIRE(b.nnz() == copies * pa.nnz());
    REQUIRE(b.row_map.size() == std::size_t(copies * 7 + 1));
    for (i64 c = 0; c < copies; ++c)
      for (i64 i = 0; i < 7; ++i) {
        const i64 r = c * 7 + i;
        REQUIRE(b.row_map[r + 1] - b.row_map[r] == pa.row_map[i + 1] - pa.row_map[i]);
        for (i64 k = 0; k < pa.row_map[i + 1] - pa.row_map[i]; ++k) {
          CHECK(b.cols[b.row_map[r] + k] == c * 5 + pa.cols[pa.row_map[i] + k]);
          CHECK(b.vals[b.row_map[r] + k] == pa.vals[pa.row_map[i] + k]);
        }
      }
  }
  // wider index types for the result, an empty A
  const auto wide = plain(gen::block_diag_replicate<i64, i64>(a, 3));
  check_same(wide, plain(gen::block_diag_replicate(a, 3)));
  const auto empty = spk::copy_to<Device>(spk::CsrMatrix<double, int, int, Host>(0, 4, 0));
  const auto be = plain(gen::block_diag_replicate(empty, 5));
  CHECK(be.nrows == 0);
  CHECK(be.ncols == 20);
  CHECK(be.row_map == std::vector<i64>{0});
  CHECK_THROWS_WITH_AS(gen::block_diag_replicate(a, 400000000),
                       doctest::Contains("2800000000 rows, more than the Ordinal type int32_t"),
                       std::invalid_argument);
  CHECK_THROWS_AS(gen::block_diag_replicate(a, -1), std::invalid_argument);
}
TEST_CASE_TEMPLATE_APPLY(gen_block_diag, spk_test::all_devices);

// --- perturbed copies ----------------------------------------------------------------------------

/// perturb_entries written out from its documentation: entry k (storage order) moved by the
/// hashed shifts, clamped, coinciding entries summed in storage order.
template <class S>
PlainCsr<S> ref_perturb(const PlainCsr<S>& a, int radius, u64 seed) {
  std::vector<std::map<i64, S>> rows(static_cast<std::size_t>(a.nrows));
  const u64 width = 2 * u64(radius) + 1;
  for (i64 i = 0; i < a.nrows; ++i)
    for (i64 k = a.row_map[i]; k < a.row_map[i + 1]; ++k) {
      const i64 dr = i64(gen::hash_below(gen::counter_hash(seed, gen::stream_perturb, u64(k), 0),
                                         width)) - radius;
      const i64 dc = i64(gen::hash_below(gen::counter_hash(seed, gen::stream_perturb, u64(k), 1),
                                         width)) - radius;
      const i64 r = std::min(std::max<i64>(i + dr, 0), a.nrows - 1);
      const i64 c = std::min(std::max<i64>(a.cols[k] + dc, 0), a.ncols - 1);
      auto it = rows[r].find(c);
      if (it == rows[r].end()) rows[r].emplace(c, a.vals[k]);
      else it->second = it->second + a.vals[k];
    }
  return from_rows(a.nrows, a.ncols, rows);
}

TEST_CASE_TEMPLATE_DEFINE("generate: perturb_entries moves entries within the radius", Device,
                          gen_perturb) {
  const auto host_a = spk_test::random_csr<double, int, int>(300, 250, 6, 7, 40);
  const auto a = spk::copy_to<Device>(host_a);
  const auto pa = plain(a);
  double sum_a = 0, abs_a = 0;
  for (double v : pa.vals) {
    sum_a += v;
    abs_a += std::abs(v);
  }
  for (int radius : {0, 1, 3}) {
    CAPTURE(radius);
    const auto b = plain(gen::perturb_entries(a, radius, 11));
    check_sorted_unique(b);
    CHECK(b.nrows == pa.nrows);
    CHECK(b.ncols == pa.ncols);
    CHECK(b.nnz() <= pa.nnz());
    check_same(b, ref_perturb(pa, radius, 11));
    // every entry lies within the radius of an entry of A
    std::set<std::pair<i64, i64>> in_a;
    for (i64 i = 0; i < pa.nrows; ++i)
      for (i64 k = pa.row_map[i]; k < pa.row_map[i + 1]; ++k) in_a.emplace(i, pa.cols[k]);
    i64 far = 0;
    for (i64 i = 0; i < b.nrows; ++i)
      for (i64 k = b.row_map[i]; k < b.row_map[i + 1]; ++k) {
        bool near = false;
        for (i64 dr = -radius; dr <= radius && !near; ++dr)
          for (i64 dc = -radius; dc <= radius && !near; ++dc)
            near = in_a.count({i + dr, b.cols[k] + dc}) != 0;
        if (!near) ++far;
      }
    CHECK(far == 0);
    double sum_b = 0;
    for (double v : b.vals) sum_b += v;
    CHECK(std::abs(sum_b - sum_a) <= 1e-12 * abs_a);
    // deterministic: the same arguments give the same matrix
    check_same(plain(gen::perturb_entries(a, radius, 11)), b);
    if (radius == 0) check_same(b, pa);  // distinct sorted entries stay where they are
    if (radius > 0) {
      CHECK(b.nnz() < pa.nnz());  // some entries of 300 x 250 with 6 per row collide
      const auto other = plain(gen::perturb_entries(a, radius, 12));
      CHECK(other.cols != b.cols);
    }
  }
  // duplicates in the input are summed too; other index types; a 1 x 1 matrix keeps its entry
  const auto dup = spk::copy_to<Device>(spk::make_csr<float, long long, int, spk::impl::HostDevice>(
      4, 6, std::vector<int>{0, 3, 3, 5, 7}, std::vector<long long>{5, 1, 5, 0, 0, 2, 3},
      std::vector<float>{1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f}));
  check_same(plain(gen::perturb_entries(dup, 2, 3)), ref_perturb(plain(dup), 2, 3), 1e-6);
  const auto one = spk::copy_to<Device>(spk::make_csr<double, int, int, spk::impl::HostDevice>(
      1, 1, std::vector<int>{0, 2}, std::vector<int>{0, 0}, std::vector<double>{1.5, 2.0}));
  const auto p1 = plain(gen::perturb_entries(one, 5, 1));
  REQUIRE(p1.nnz() == 1);
  CHECK(p1.vals[0] == 3.5);
  const auto empty =
      spk::copy_to<Device>(spk::CsrMatrix<double, int, int, spk::impl::HostDevice>(0, 4, 0));
  CHECK(plain(gen::perturb_entries(empty, 1, 1)).nnz() == 0);
  CHECK_THROWS_WITH_AS(gen::perturb_entries(a, -1, 1), doctest::Contains("radius = -1 is negative"),
                       std::invalid_argument);
}
TEST_CASE_TEMPLATE_APPLY(gen_perturb, spk_test::all_devices);

// --- specs -------------------------------------------------------------------------------------

TEST_CASE("generate: spec strings parse, print and list the generators") {
  auto s = gen::parse_generator_spec("poisson3d7:100");
  CHECK(s.name == "poisson3d7");
  CHECK(s.size == 100);
  CHECK(s.params.empty());
  CHECK(gen::spec_nrows(s) == 1000000);
  s = gen::parse_generator_spec("banded:1M:hbw=50,nnz_per_row=9,seed=7,values=random");
  CHECK(s.name == "banded");
  CHECK(s.size == 1000000);
  CHECK(s.params.size() == 4);
  CHECK(gen::spec_int_param(s, "hbw") == 50);
  CHECK(gen::spec_int_param(s, "nnz_per_row") == 9);
  CHECK(gen::spec_options(s).seed == 7);
  CHECK(gen::spec_options(s).random_values);
  CHECK(gen::to_string(s) == "banded:1000000:hbw=50,nnz_per_row=9,seed=7,values=random");
  const auto again = gen::parse_generator_spec(gen::to_string(s));
  CHECK(again.params == s.params);
  s = gen::parse_generator_spec("rmat:20:edge_factor=8,a=0.6,b=0.15,c=0.15");
  CHECK(gen::spec_int_param(s, "edge_factor") == 8);
  CHECK(gen::spec_real_param(s, "a") == 0.6);
  CHECK(gen::spec_real_param(s, "c") == 0.15);
  CHECK(gen::spec_nrows(s) == (i64(1) << 20));
  s = gen::parse_generator_spec("rmat:5");
  CHECK(gen::spec_real_param(s, "a") == 0.57);
  CHECK(gen::spec_int_param(s, "edge_factor") == 16);
  CHECK(gen::spec_options(s).seed == 1);
  CHECK_FALSE(gen::spec_options(s).random_values);
  s = gen::parse_generator_spec("circuit:2k");
  CHECK(s.size == 2000);
  CHECK(gen::spec_int_param(s, "long_rows") == 4);
  CHECK(gen::spec_int_param(s, "long_row_len") == 200);
  CHECK(gen::parse_generator_spec("poisson2d5:3G").size == 3000000000);

  const auto names = gen::generator_names();
  CHECK(names == std::vector<std::string>{"poisson2d5", "poisson3d7", "poisson3d27", "pde",
                                          "banded", "rmat", "circuit"});
  const std::string help = gen::describe_generators();
  for (const auto& name : names) CHECK(help.find(name + ":N") != std::string::npos);
  CHECK(help.find("nnz_per_row=") != std::string::npos);
  CHECK(help.find("seed=") != std::string::npos);
}

TEST_CASE("generate: bad spec strings throw naming the text and the valid names") {
  struct Bad {
    const char* text;
    const char* reason;
  };
  for (const Bad& b :
       {Bad{"", "missing generator name"},
        Bad{"foo:10", "unknown generator 'foo'"},
        Bad{"poisson3d7", "missing ':SIZE'"},
        Bad{"poisson3d7:", "SIZE '' is not a non-negative integer"},
        Bad{"poisson3d7:-5", "SIZE '-5'"},
        Bad{"poisson3d7:12x", "SIZE '12x'"},
        Bad{"poisson3d7:99999999999999999999", "SIZE '99999999999999999999'"},
        Bad{"poisson3d7:9999999999G", "SIZE '9999999999G'"},
        Bad{"poisson3d7:10:", "empty key=value list"},
        Bad{"poisson3d7:10:seed", "item 'seed' is not of the form key=value"},
        Bad{"poisson3d7:10:seed=1,", "empty key=value item"},
        Bad{"poisson3d7:10:=3", "item '=3'"},
        Bad{"poisson3d7:10:hbw=3",
            "unknown key 'hbw' for generator 'poisson3d7' (valid keys: seed, values)"},
        Bad{"banded:10:bogus=1", "(valid keys: seed, values, hbw, nnz_per_row)"},
        Bad{"banded:10:hbw=x", "value 'x' of key 'hbw' is not a non-negative integer"},
        Bad{"banded:10:hbw=1,hbw=2", "key 'hbw' is given twice"},
        Bad{"rmat:10:a=nan", "value 'nan' of key 'a' is not a finite real number"},
        Bad{"rmat:10:a=", "value '' of key 'a'"},
        Bad{"poisson3d7:10:values=maybe", "is not 'random' or 'default'"},
        Bad{"poisson3d7:10:seed=-1", "value '-1' of key 'seed'"}}) {
    CAPTURE(b.text);
    const std::string head =
        std::string("spk::generate::parse_generator_spec: bad generator spec '") + b.text + "': ";
    CHECK_THROWS_WITH_AS(gen::parse_generator_spec(b.text), doctest::Contains(head.c_str()),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(gen::parse_generator_spec(b.text), doctest::Contains(b.reason),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(gen::parse_generator_spec(b.text),
                         doctest::Contains("generators: poisson2d5, poisson3d7, poisson3d27, pde, "
                                           "banded, rmat, circuit"),
                         std::invalid_argument);
  }
  // specs built in code are validated as well
  gen::GeneratorSpec s{"banded", 10, {{"hbw", "two"}}};
  CHECK_THROWS_WITH_AS(gen::validate_generator_spec(s), doctest::Contains("value 'two'"),
                       std::invalid_argument);
  CHECK_THROWS_AS(gen::estimate_nnz(gen::GeneratorSpec{"nope", 3, {}}), std::invalid_argument);
  CHECK_THROWS_AS(gen::validate_generator_spec(gen::GeneratorSpec{"pde", -3, {}}),
                  std::invalid_argument);
  CHECK_THROWS_WITH_AS(gen::spec_int_param(gen::parse_generator_spec("pde:3"), "hbw"),
                       doctest::Contains("generator 'pde' has no integer key 'hbw'"),
                       std::invalid_argument);
}

TEST_CASE("generate: estimate_nnz bounds the spec sizes on the host") {
  using gen::estimate_nnz;
  using gen::parse_generator_spec;
  CHECK(estimate_nnz(parse_generator_spec("poisson2d5:1000")) == 5 * 1000000 - 4000);
  CHECK(estimate_nnz(parse_generator_spec("poisson3d7:100")) == 7000000 - 60000);
  CHECK(estimate_nnz(parse_generator_spec("pde:100")) == 7000000 - 60000);
  CHECK(estimate_nnz(parse_generator_spec("poisson3d27:50")) == i64(148) * 148 * 148);
  CHECK(estimate_nnz(parse_generator_spec("poisson3d27:0")) == 0);
  CHECK(estimate_nnz(parse_generator_spec("banded:1M:hbw=2,nnz_per_row=9")) == 5000000);
  CHECK(estimate_nnz(parse_generator_spec("banded:1M")) == 16000000);
  CHECK(estimate_nnz(parse_generator_spec("rmat:20")) == i64(16) << 20);
  CHECK(estimate_nnz(parse_generator_spec("circuit:1M:long_rows=2,long_row_len=1000,"
                                          "mean_row_len=5")) == (1000000 - 2) * 9 + 2000);
  // the 27-point stencil on a 2000^3 grid needs 64-bit offsets: the estimate says so
  const i64 big = estimate_nnz(parse_generator_spec("poisson3d27:2000"));
  CHECK(big == i64(5998) * 5998 * 5998);
  CHECK(big > std::numeric_limits<int>::max());
  CHECK(gen::spec_nrows(parse_generator_spec("poisson3d27:2000")) == i64(8000000000));
  CHECK_THROWS_WITH_AS(estimate_nnz(parse_generator_spec("poisson3d7:3000000")),
                       doctest::Contains("more rows than int64 can count"), std::invalid_argument);
  CHECK_THROWS_AS(estimate_nnz(parse_generator_spec("rmat:63")), std::invalid_argument);
}

TEST_CASE_TEMPLATE_DEFINE("generate: from_spec builds the named matrix, sizes are checked first",
                          Device, gen_from_spec) {
  // every generator through its spec equals the direct call, and its nnz is within the estimate
  const gen::GeneratorOptions random_opt{9, true};
  check_same(plain(gen::from_spec<double, int, int, Device>("poisson2d5:6")),
             plain(gen::poisson2d_5pt<double, int, int, Device>(6)));
  check_same(plain(gen::from_spec<double, int, int, Device>("poisson3d7:4:values=random,seed=9")),
             plain(gen::poisson3d_7pt<double, int, int, Device>(4, random_opt)));
  check_same(plain(gen::from_spec<double, int, int, Device>("poisson3d27:3")),
             plain(gen::poisson3d_27pt<double, int, int, Device>(3)));
  check_same(plain(gen::from_spec<double, int, int, Device>("pde:4")),
             plain(gen::pde_convdiff3d<double, int, int, Device>(4)));
  check_same(
      plain(gen::from_spec<double, int, int, Device>("banded:300:hbw=5,nnz_per_row=4,seed=9")),
      plain(gen::random_banded<double, int, int, Device>(300, 5, 4, 9, {9, false})));
  check_same(
      plain(gen::from_spec<double, int, int, Device>("rmat:8:edge_factor=4,seed=9,values=random")),
      plain(gen::rmat<double, int, int, Device>(8, 4, 9, 0.57, 0.19, 0.19, random_opt)));
  check_same(plain(gen::from_spec<double, int, int, Device>("circuit:500:seed=9")),
             plain(gen::circuit_like<double, int, int, Device>(500, 5, 4, 50, 9, {9, false})));
  for (const char* text : {"poisson2d5:7", "poisson3d7:5", "poisson3d27:4", "pde:3", "banded:100",
                           "banded:100:hbw=200,nnz_per_row=50", "rmat:7", "circuit:300",
                           "circuit:50:mean_row_len=100", "poisson3d7:0", "poisson2d5:1"}) {
    CAPTURE(text);
    const auto spec = gen::parse_generator_spec(text);
    const auto a = plain(gen::from_spec<double, int, int, Device>(spec));
    check_sorted_unique(a);
    CHECK(a.nrows == gen::spec_nrows(spec));
    CHECK(a.nnz() <= gen::estimate_nnz(spec));
    if (spec.name.rfind("poisson", 0) == 0 || spec.name == "pde")
      CHECK(a.nnz() == gen::estimate_nnz(spec));
  }

  // sizes that do not fit the index types throw (before allocating) with the size and the type
  const i64 n27 = 1000, nnz27 = (3 * n27 - 2) * (3 * n27 - 2) * (3 * n27 - 2);
  CHECK_THROWS_WITH_AS(
      (gen::from_spec<double, int, int, Device>("poisson3d27:1000")),
      doctest::Contains(("spk::generate::poisson3d_27pt: n = 1000 needs " + std::to_string(nnz27) +
                         " nonzeros, more than the Offset type int32_t holds")
                            .c_str()),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS((gen::from_spec<double, int, i64, Device>("poisson3d7:2000")),
                       doctest::Contains("spk::generate::poisson3d_7pt: n = 2000 gives 8000000000 "
                                         "rows, more than the Ordinal type int32_t"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((gen::from_spec<double, i64, int, Device>("banded:2G:nnz_per_row=2")),
                       doctest::Contains("random_banded: nrows = 2000000000 needs at least "
                                         "4000000000 nonzeros, more than the Offset type int32_t"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((gen::from_spec<double, i64, int, Device>("circuit:3G")),
                       doctest::Contains("circuit_like: nrows = 3000000000 needs at least"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((gen::from_spec<double, int, int, Device>("rmat:40")),
                       doctest::Contains("rmat scale 40 is outside [0, 31]"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((gen::from_spec<double, int, int, Device>("fancy:3")),
                       doctest::Contains("unknown generator 'fancy'"), std::invalid_argument);
}
TEST_CASE_TEMPLATE_APPLY(gen_from_spec, spk_test::all_devices);
