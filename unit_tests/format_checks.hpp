// Shared checks of the tests of the sparse formats (ELL, HLL, DIA, HDIA, HYB): SpMV of a
// converted matrix against the sequential host reference on the CSR input, the round trip
// to_csr(), and loops over the shared real matrices and the generated ones. A format test passes
// a "make" callable (CSR on the device -> format) and its list of launch parameters.
#pragma once

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <spk/convert.hpp>
#include <spk/coo_matrix.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/formats/padding_limit.hpp>
#include <spk/generate.hpp>
#include <spk/io/matrix_market.hpp>
#include <spk/mode.hpp>
#include <spk/reference.hpp>

#include "test_common.hpp"

namespace spk_test {

template <class S, class O>
using HostCsr = spk::CsrMatrix<S, O, int, spk::impl::HostDevice>;

/// What to_csr() of a format gives back: the input exactly (entries in stored order, duplicates
/// and explicit zeros kept), or its canonical nonzeros (rows sorted, duplicates summed, zeros
/// dropped: the diagonal formats cannot tell a stored zero from padding).
/// Or the input in stored order without its zero-valued entries (formats that pad with zeros
/// inside rows but keep the entries' order and duplicates: compressed COO).
enum class RoundTrip { exact, nonzeros, without_zeros };

/// The input without its zero-valued entries (see RoundTrip::without_zeros), by a host loop.
template <class S, class O>
HostCsr<S, O> without_zeros(const HostCsr<S, O>& a) {
  std::vector<int> row_map(1, 0);
  std::vector<O> cols;
  std::vector<S> vals;
  for (O i = 0; i < a.nrows(); ++i) {
    for (int k = a.row_map()(i); k < a.row_map()(i + 1); ++k) {
      if (a.values()(k) == spk::scalar_traits<S>::zero()) continue;
      cols.push_back(a.col_idx()(k));
      vals.push_back(a.values()(k));
    }
    row_map.push_back(int(cols.size()));
  }
  return spk::make_csr<S, O, int, spk::impl::HostDevice>(a.nrows(), a.ncols(), row_map, cols, vals);
}

/// The canonical nonzero form of a host CSR matrix (see RoundTrip::nonzeros), by a host loop.
template <class S, class O>
HostCsr<S, O> canonical_nonzeros(const HostCsr<S, O>& a) {
  std::vector<int> row_map(1, 0);
  std::vector<O> cols;
  std::vector<S> vals;
  for (O i = 0; i < a.nrows(); ++i) {
    std::vector<std::pair<O, S>> row;
    for (int k = a.row_map()(i); k < a.row_map()(i + 1); ++k)
      row.emplace_back(a.col_idx()(k), a.values()(k));
    std::stable_sort(
        row.begin(), row.end(),
        [](const std::pair<O, S>& p, const std::pair<O, S>& q) { return p.first < q.first; });
    for (std::size_t k = 0; k < row.size();) {
      S sum = row[k].second;
      std::size_t e = k + 1;
      for (; e < row.size() && row[e].first == row[k].first; ++e) sum = sum + row[e].second;
      if (!(sum == spk::scalar_traits<S>::zero())) {
        cols.push_back(row[k].first);
        vals.push_back(sum);
      }
      k = e;
    }
    row_map.push_back(int(cols.size()));
  }
  return spk::make_csr<S, O, int, spk::impl::HostDevice>(a.nrows(), a.ncols(), row_map, cols, vals);
}

/// Checks that `got` (to_csr() of a format, on the host) equals `input` under `rt`. Values are
/// compared exactly for RoundTrip::exact, within rounding of the summed duplicates otherwise.
template <class S, class O>
void check_round_trip(const HostCsr<S, O>& input, const HostCsr<S, O>& got, RoundTrip rt) {
  const HostCsr<S, O> want = rt == RoundTrip::exact           ? input
                             : rt == RoundTrip::without_zeros ? without_zeros(input)
                                                              : canonical_nonzeros(input);
  REQUIRE(got.nrows() == want.nrows());
  REQUIRE(got.ncols() == want.ncols());
  REQUIRE(got.nnz() == want.nnz());
  for (O i = 0; i <= want.nrows(); ++i) {
    if (got.row_map()(i) != want.row_map()(i)) {
      INFO("row_map(" << i << ") = " << got.row_map()(i) << ", expected " << want.row_map()(i));
      CHECK(got.row_map()(i) == want.row_map()(i));
      return;
    }
  }
  using traits = spk::scalar_traits<S>;
  for (int k = 0; k < want.nnz(); ++k) {
    const bool col_ok = got.col_idx()(k) == want.col_idx()(k);
    const double err = traits::abs(got.values()(k) - want.values()(k));
    const bool val_ok = rt != RoundTrip::nonzeros
                            ? got.values()(k) == want.values()(k)
                            : err <= 64 * spk::unit_roundoff<S>() * traits::abs(want.values()(k));
    if (!col_ok || !val_ok) {
      INFO("entry " << k << ": column " << got.col_idx()(k) << " (expected " << want.col_idx()(k)
                    << "), value error " << err);
      CHECK(col_ok);
      CHECK(val_ok);
      return;
    }
  }
}

/// Runs y = alpha op(A) x + beta y with the format `f` of host_a on Device for every launch of
/// `params` and compares with spk::reference::spmv on host_a (computed once). Launches that
/// resolve to the same parameters on Device (CPU backends ignore most of the GPU schedule) run
/// once. For beta == 0, y starts as NaN (it must be overwritten).
template <class Device, class Format, class S, class O, class Params>
void check_format_spmv(const Format& f, const HostCsr<S, O>& host_a, spk::Mode mode, S alpha,
                       S beta, std::uint64_t seed, const std::vector<Params>& params) {
  using traits = spk::scalar_traits<S>;
  const bool trans = mode != spk::Mode::N;
  const std::size_t nx = trans ? host_a.nrows() : host_a.ncols();
  const std::size_t ny = trans ? host_a.ncols() : host_a.nrows();
  const auto x = random_vector<S>(nx, seed);
  auto y_ref = random_vector<S>(ny, seed + 1);
  auto y_in = y_ref;
  if (beta == traits::zero())
    std::fill(y_in.begin(), y_in.end(),
              traits::make(std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::quiet_NaN()));
  std::vector<double> bound;
  spk::reference::spmv(mode, alpha, host_a, x, beta, y_ref, &bound);
  const auto xd = to_view<Device>(x);
  std::set<std::string> seen;
  for (const auto& p : params) {
    const std::string launch = spk::describe(spk::resolve_params(f, mode, p));
    if (!seen.insert(launch).second) continue;
    const auto yd = to_view<Device>(y_in);
    spk::spmv(mode, alpha, f, xd, beta, yd, p);
    INFO("format " << std::string(Format::name) << ", mode " << std::string(spk::to_string(mode))
                   << ", " << host_a.nrows() << " x " << host_a.ncols() << ", nnz "
                   << host_a.nnz() << ", scalar " << std::string(traits::name) << ", params "
                   << launch << ", beta " << traits::real(beta));
    check_close(to_vector(yd), y_ref, bound, 8 * spk::unit_roundoff<S>());
  }
}

/// The same for one launch.
template <class Device, class Format, class S, class O, class Params>
void check_format_spmv(const Format& f, const HostCsr<S, O>& host_a, spk::Mode mode, S alpha,
                       S beta, std::uint64_t seed, const Params& params) {
  check_format_spmv<Device>(f, host_a, mode, alpha, beta, seed, std::vector<Params>{params});
}

/// The products checked on a shared real matrix (double, or complex<double> when `complex`):
/// N with beta = 0, T with beta = 2 and, for complex values, H, for every launch of `params`.
template <class Device, class Format, class S, class O, class Params>
void check_real_spmv(const Format& f, const HostCsr<S, O>& host, bool complex,
                     const std::vector<Params>& params) {
  const S alpha = spk::scalar_traits<S>::make(0.5, complex ? 0.25 : 0.0);
  check_format_spmv<Device>(f, host, spk::Mode::N, alpha, S(0), 17, params);
  check_format_spmv<Device>(f, host, spk::Mode::T, alpha, S(2), 19, params);
  if (complex) check_format_spmv<Device>(f, host, spk::Mode::H, alpha, S(2), 23, params);
}

/// All modes of a scalar type: N, T and H (H equals T for real types but is still checked).
inline std::vector<spk::Mode> all_modes() { return {spk::Mode::N, spk::Mode::T, spk::Mode::H}; }

/// Converts host_a on Device with `make`, checks the round trip, then every params x mode with
/// beta = 0 (y NaN), a general beta, and alpha = beta = 1.
template <class Device, class S, class O, class Make, class Params>
void check_format(const HostCsr<S, O>& host_a, const Make& make, const std::vector<Params>& params,
                  std::uint64_t seed, RoundTrip rt,
                  const std::vector<spk::Mode>& modes = all_modes()) {
  using traits = spk::scalar_traits<S>;
  const auto a = spk::copy_to<Device>(host_a);
  const auto f = make(a);
  check_round_trip(host_a, spk::to_host(f.to_csr()), rt);
  const S alpha = traits::make(1.5, traits::is_complex ? -0.5 : 0.0);
  for (spk::Mode mode : modes) {
    check_format_spmv<Device>(f, host_a, mode, alpha, traits::zero(), seed, params);
    check_format_spmv<Device>(f, host_a, mode, alpha, traits::make(-0.75, 0.25), seed + 7, params);
    check_format_spmv<Device>(f, host_a, mode, traits::one(), traits::one(), seed + 11, params);
  }
}

/// A host CSR matrix with duplicate (row, column) entries kept as separate entries (row 3 holds
/// column 5 three times, row 7 column 0 twice), unsorted within rows, 40 x 33.
template <class S, class O>
HostCsr<S, O> csr_with_duplicates(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int> row_map(1, 0);
  std::vector<O> cols;
  std::vector<S> vals;
  for (O i = 0; i < 40; ++i) {
    std::vector<O> row;
    if (i == 3) row = std::vector<O>{5, 9, 5, 1, 5};
    if (i == 7) row = std::vector<O>{0, 32, 0};
    if (i % 5 == 1) row = std::vector<O>{O(i % 33), O((i * 7) % 33), O((i * 11 + 3) % 33)};
    for (O j : row) {
      cols.push_back(j);
      vals.push_back(random_value<S>(rng));
    }
    row_map.push_back(int(cols.size()));
  }
  return spk::make_csr<S, O, int, spk::impl::HostDevice>(40, 33, row_map, cols, vals);
}

/// The same kind of matrix built from a COO with duplicate triplets, summed by coo_to_csr.
template <class S, class O>
HostCsr<S, O> csr_from_coo_with_duplicates(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  spk::CooBuilder<S, O, int> b(70, 50);
  for (int t = 0; t < 400; ++t) {
    const O i = O(rng() % 70), j = O(rng() % 50);
    b.add(i, j, random_value<S>(rng));
    if (t % 9 == 0) b.add(i, j, random_value<S>(rng));  // a duplicate triplet
  }
  b.add(0, 0, random_value<S>(rng));
  b.add(0, 0, random_value<S>(rng));
  return spk::to_host(spk::coo_to_csr(b.template build<spk::impl::HostDevice>()));
}

/// A dense nrows x ncols host matrix with random values (every entry stored).
template <class S>
HostCsr<S, int> dense_csr(int nrows, int ncols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int> row_map(1, 0), cols;
  std::vector<S> vals;
  for (int i = 0; i < nrows; ++i) {
    for (int j = 0; j < ncols; ++j) {
      cols.push_back(j);
      vals.push_back(random_value<S>(rng));
    }
    row_map.push_back(int(cols.size()));
  }
  return spk::make_csr<S, int, int, spk::impl::HostDevice>(nrows, ncols, row_map, cols, vals);
}

/// Generated matrices of the format comparisons (small sizes): the PSBLAS pdeN model problem,
/// Poisson 2D 5-point and 3D 27-point.
template <class S>
std::vector<std::pair<std::string, HostCsr<S, int>>> generated_matrices() {
  using spk::impl::HostDevice;
  return {{"pde:12", spk::generate::pde_convdiff3d<S, int, int, HostDevice>(12)},
          {"poisson2d5:30", spk::generate::poisson2d_5pt<S, int, int, HostDevice>(30)},
          {"poisson3d27:9", spk::generate::poisson3d_27pt<S, int, int, HostDevice>(9)}};
}

/// Runs `check(host_csr, file)` on every matrix of the shared MANIFEST, in double
/// (complex<double> for complex files); `check` returns false when the format refused the matrix
/// by its padding limit. Requires all 51 files to be visited and reports the refused ones.
template <class Check>
void for_each_shared_matrix(const char* format, const Check& check) {
  const std::string dir = data_dir() + "/matrices/";
  std::ifstream manifest(dir + "MANIFEST.tsv");
  REQUIRE_MESSAGE(manifest.good(), "cannot open " << dir << "MANIFEST.tsv");
  std::string line;
  std::getline(manifest, line);  // header
  int visited = 0, converted = 0;
  std::string refused;
  while (std::getline(manifest, line)) {
    if (line.empty()) continue;
    const std::string file = line.substr(0, line.find('\t'));
    const bool complex = line.find("\tcomplex\t") != std::string::npos;
    INFO("matrix " << file);
    bool ok = false;
    if (complex) {
      using S = Kokkos::complex<double>;
      const auto coo = spk::io::read_matrix_market_coo<S, int, int>(dir + file);
      ok = check(spk::to_host(spk::coo_to_csr(coo)), file, true);
    } else {
      const auto coo = spk::io::read_matrix_market_coo<double, int, int>(dir + file);
      ok = check(spk::to_host(spk::coo_to_csr(coo)), file, false);
    }
    ++visited;
    if (ok)
      ++converted;
    else
      refused += (refused.empty() ? "" : ", ") + file;
  }
  CHECK(visited == 51);
  MESSAGE(std::string(format) << ": " << converted << " of " << visited
                              << " shared matrices checked"
                              << (refused.empty()
                                      ? std::string()
                                      : "; refused by the padding limit (skipped): " + refused));
}

}  // namespace spk_test
