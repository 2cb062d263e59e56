// spk-cusparse-compound-check: runs every cuSPARSE compound baseline
// (cusparse_compound_baseline.hpp) on small random block (B = 2, 3, 4, 6) and quaternion matrices
// in float and double and compares y = alpha A x + beta y with a host reference computed in
// double with the operators of spk/compound/entry.hpp. Prints the largest relative error per case
// and exits with 1 when one exceeds its tolerance (see below), 2 on a usage error.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <spk/compound/entry.hpp>
#include <spk/csr_matrix.hpp>

#include "cusparse_compound_baseline.hpp"

namespace {

const char* const usage =
    "usage: spk-cusparse-compound-check [--rows N] [--seed S] [--tol-factor F]\n"
    "\n"
    "Runs the cuSPARSE compound baselines (cusparse-bsr for blocks 2, 3, 4, 6;\n"
    "cusparse-quat-bsr4, cusparse-quat-hamilton, cusparse-quat-hamilton-spmv for quaternions;\n"
    "float and double) on random N-block-row matrices (N/10 fewer columns, random row\n"
    "lengths, empty rows, one long row) with alpha, beta = (1.5, -0.5) and (1, 0), against\n"
    "a host reference in double.\n"
    "The error of a component is |y - ref| / (|alpha| (|A||x|) + |beta| |y0|); it must stay\n"
    "below F (len k + 8) u, len the row's entries, k the reals per vector entry, u the unit\n"
    "roundoff of the real type.\n"
    "\n"
    "  --rows N        block rows (default 300)\n"
    "  --seed S        random seed (default 1)\n"
    "  --tol-factor F  tolerance factor (default 4)\n"
    "Exit status: 0 all within tolerance, 1 a case failed, 2 usage error.\n";

struct Options {
  int rows = 300;
  unsigned seed = 1;
  double tol_factor = 4;
};

template <class Real>
Real uniform(std::mt19937& rng) {
  return Real(std::uniform_real_distribution<double>(-1.0, 1.0)(rng));
}

/// Random entry or vector entry: every real component uniform in [-1, 1].
template <class T, class Real>
T random_value(std::mt19937& rng) {
  T v{};
  Real* p = reinterpret_cast<Real*>(&v);
  for (std::size_t c = 0; c < sizeof(T) / sizeof(Real); ++c) p[c] = uniform<Real>(rng);
  return v;
}

// Entries and vector entries in double, for the reference.
template <class Real, int B>
spk::Block<double, B> to_double(const spk::Block<Real, B>& a) {
  spk::Block<double, B> d{};
  for (int i = 0; i < B * B; ++i) d.a[i] = a.a[i];
  return d;
}
template <class Real, int B>
spk::BlockVector<double, B> to_double(const spk::BlockVector<Real, B>& a) {
  spk::BlockVector<double, B> d{};
  for (int i = 0; i < B; ++i) d.v[i] = a.v[i];
  return d;
}
template <class Real>
spk::Quaternion<double> to_double(const spk::Quaternion<Real>& a) {
  return {a.w, a.x, a.y, a.z};
}

/// Per-component bound on |a * x|: |a| |x| for blocks, |a|_2 |x|_2 for quaternions (which bounds
/// every component of the product by Cauchy-Schwarz), written to out[0..k).
template <int B>
void magnitude(const spk::Block<double, B>& a, const spk::BlockVector<double, B>& x, double* out) {
  for (int r = 0; r < B; ++r) {
    out[r] = 0;
    for (int c = 0; c < B; ++c) out[r] += std::abs(a.a[r * B + c]) * std::abs(x.v[c]);
  }
}
inline void magnitude(const spk::Quaternion<double>& a, const spk::Quaternion<double>& x,
                      double* out) {
  const double na = std::sqrt(a.w * a.w + a.x * a.x + a.y * a.y + a.z * a.z);
  const double nx = std::sqrt(x.w * x.w + x.x * x.x + x.y * x.y + x.z * x.z);
  for (int c = 0; c < 4; ++c) out[c] = na * nx;
}

/// A random test problem: A (nrows x ncols entries of E) on the device and on the host, x and
/// y0 on the host and the device.
template <class E>
struct Problem {
  using traits = spk::entry_traits<E>;
  using Real = typename traits::real_type;
  using V = typename traits::vector_type;
  static constexpr int k = traits::vector_components;

  int nrows = 0, ncols = 0;
  std::vector<int> row_map, col_idx;
  std::vector<E> values;
  std::vector<V> x, y0;
  spk_bench::CudaCsr<E> a;
  Kokkos::View<V*, Kokkos::CudaSpace> dx, dy;

  Problem(int rows, std::mt19937& rng) : nrows(rows), ncols(std::max(1, rows - rows / 10)) {
    std::vector<int> cols(static_cast<std::size_t>(ncols));
    std::iota(cols.begin(), cols.end(), 0);
    row_map.push_back(0);
    for (int i = 0; i < nrows; ++i) {
      int len = std::uniform_int_distribution<int>(1, std::min(ncols, 24))(rng);
      if (i % 11 == 3 || i == nrows - 1) len = 0;
      if (i == 5) len = std::min(ncols, 150);
      // the first len of a partial Fisher-Yates shuffle, sorted
      for (int j = 0; j < len; ++j)
        std::swap(cols[std::size_t(j)],
                  cols[std::size_t(std::uniform_int_distribution<int>(j, ncols - 1)(rng))]);
      std::vector<int> row(cols.begin(), cols.begin() + len);
      std::sort(row.begin(), row.end());
      for (int c : row) {
        col_idx.push_back(c);
        values.push_back(random_value<E, Real>(rng));
      }
      row_map.push_back(int(col_idx.size()));
    }
    for (int j = 0; j < ncols; ++j) x.push_back(random_value<V, Real>(rng));
    for (int i = 0; i < nrows; ++i) y0.push_back(random_value<V, Real>(rng));
    a = spk::make_csr<E, int, int, Kokkos::Device<Kokkos::Cuda, Kokkos::CudaSpace>>(
        nrows, ncols, row_map, col_idx, values);
    dx = Kokkos::View<V*, Kokkos::CudaSpace>("check::x", std::size_t(ncols));
    dy = Kokkos::View<V*, Kokkos::CudaSpace>("check::y", std::size_t(nrows));
    auto hx = Kokkos::create_mirror_view(dx);
    for (int j = 0; j < ncols; ++j) hx(j) = x[std::size_t(j)];
    Kokkos::deep_copy(dx, hx);
  }

  void reset_y() const {
    auto hy = Kokkos::create_mirror_view(dy);
    for (int i = 0; i < nrows; ++i) hy(i) = y0[std::size_t(i)];
    Kokkos::deep_copy(dy, hy);
  }

  /// Largest error of the device y, in units of the per-component tolerance (<= 1 passes);
  /// `max_rel` gets the largest relative error.
  double scaled_error(double alpha, double beta, double tol_factor, double& max_rel) const {
    auto hy = Kokkos::create_mirror_view(dy);
    Kokkos::deep_copy(hy, dy);
    const double u = std::numeric_limits<Real>::epsilon() / 2;
    double worst = 0;
    max_rel = 0;
    for (int i = 0; i < nrows; ++i) {
      auto acc = to_double(V{});
      double bound[k] = {};
      for (int p = row_map[std::size_t(i)]; p < row_map[std::size_t(i) + 1]; ++p) {
        const auto ad = to_double(values[std::size_t(p)]);
        const auto xd = to_double(x[std::size_t(col_idx[std::size_t(p)])]);
        acc = acc + ad * xd;
        double m[k];
        magnitude(ad, xd, m);
        for (int c = 0; c < k; ++c) bound[c] += m[c];
      }
      const double* ref = reinterpret_cast<const double*>(&acc);
      const Real* y0i = reinterpret_cast<const Real*>(&y0[std::size_t(i)]);
      const Real* yi = reinterpret_cast<const Real*>(&hy(i));
      const int len = row_map[std::size_t(i) + 1] - row_map[std::size_t(i)];
      const double tol = tol_factor * (double(len) * k + 8) * u;
      for (int c = 0; c < k; ++c) {
        const double expect = alpha * ref[c] + beta * double(y0i[c]);
        const double norm = std::abs(alpha) * bound[c] + std::abs(beta) * std::abs(double(y0i[c]));
        const double diff = std::abs(double(yi[c]) - expect);
        const double rel = norm > 0 ? diff / norm : diff;
        const double scaled =
            diff == 0 ? 0 : (norm > 0 ? rel / tol : std::numeric_limits<double>::infinity());
        if (!(rel <= max_rel)) max_rel = rel;  // NaN sticks
        if (!(scaled <= worst)) worst = scaled;
      }
    }
    return worst;
  }
};

int failures = 0;

/// Builds Baseline on the problem, runs it with each (alpha, beta) from y0 and reports.
template <class Baseline, class E, class... Args>
void check(const Problem<E>& pb, double tol_factor, const char* variant, Args... args) {
  using Real = typename Problem<E>::Real;
  const char* entry = spk::entry_traits<E>::name;
  try {
    Baseline op(pb.a, pb.dx, pb.dy, args...);
    const double pairs[2][2] = {{1.5, -0.5}, {1.0, 0.0}};
    for (const auto& ab : pairs) {
      pb.reset_y();
      op.run(Real(ab[0]), Real(ab[1]));
      Kokkos::fence();
      double rel = 0;
      const double scaled = pb.scaled_error(ab[0], ab[1], tol_factor, rel);
      const bool ok = scaled <= 1;
      if (!ok) ++failures;
      std::printf("%-10s %-28s %-24s alpha=%-4g beta=%-5g max rel err %.3e (%.3f of tol) %s\n",
                  entry, Baseline::name, variant, ab[0], ab[1], rel, scaled, ok ? "ok" : "FAILED");
    }
  } catch (const std::exception& e) {
    ++failures;
    std::printf("%-10s %-28s %-24s FAILED: %s\n", entry, Baseline::name, variant, e.what());
  }
}

template <class Real, int B>
void check_block(const Options& opt, std::mt19937& rng) {
  const Problem<spk::Block<Real, B>> pb(opt.rows, rng);
  using Op = spk_bench::CusparseBsrSpmv<Real, B>;
  {
    const Op probe(pb.a, pb.dx, pb.dy);
    std::printf("# %s: automatic BSR API is %s\n", spk::entry_traits<spk::Block<Real, B>>::name,
                probe.api());
  }
  check<Op>(pb, opt.tol_factor, "automatic", spk_bench::BsrApi::automatic);
  check<Op>(pb, opt.tol_factor, "legacy bsrmv", spk_bench::BsrApi::legacy);
}

template <class Real>
void check_quaternion(const Options& opt, std::mt19937& rng) {
  const Problem<spk::Quaternion<Real>> pb(opt.rows, rng);
  using Bsr = spk_bench::CusparseQuaternionBsrSpmv<Real>;
  {
    const Bsr probe(pb.a, pb.dx, pb.dy);
    std::printf("# %s: automatic BSR API is %s\n", spk::entry_traits<spk::Quaternion<Real>>::name,
                probe.api());
  }
  check<Bsr>(pb, opt.tol_factor, "automatic", spk_bench::BsrApi::automatic);
  check<Bsr>(pb, opt.tol_factor, "legacy bsrmv", spk_bench::BsrApi::legacy);
  check<spk_bench::CusparseQuaternionHamiltonSpmv<Real>>(pb, opt.tol_factor, "spmm default");
  check<spk_bench::CusparseQuaternionHamilton16Spmv<Real>>(pb, opt.tol_factor, "spmv default");
}

template <class Real>
void check_real(const Options& opt, std::mt19937& rng) {
  check_block<Real, 2>(opt, rng);
  check_block<Real, 3>(opt, rng);
  check_block<Real, 4>(opt, rng);
  check_block<Real, 6>(opt, rng);
  check_quaternion<Real>(opt, rng);
}

bool parse(int argc, char** argv, Options& opt) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(usage, stdout);
      std::exit(0);
    }
    if (i + 1 >= argc) return false;
    const char* v = argv[++i];
    char* end = nullptr;
    if (arg == "--rows") {
      opt.rows = int(std::strtol(v, &end, 10));
      if (opt.rows < 1) return false;
    } else if (arg == "--seed") {
      opt.seed = unsigned(std::strtoul(v, &end, 10));
    } else if (arg == "--tol-factor") {
      opt.tol_factor = std::strtod(v, &end);
      if (!(opt.tol_factor > 0)) return false;
    } else {
      return false;
    }
    if (!end || *end != '\0') return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!parse(argc, argv, opt)) {
    std::fputs(usage, stderr);
    return 2;
  }
  Kokkos::ScopeGuard guard(argc, argv);
  std::mt19937 rng(opt.seed);
  check_real<float>(opt, rng);
  check_real<double>(opt, rng);
  std::printf("%s: %d failed\n", failures ? "FAILED" : "all ok", failures);
  return failures ? 1 : 0;
}
