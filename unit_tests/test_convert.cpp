// Tests of spk/convert.hpp: coo_to_csr, csr_to_coo, transpose, sort_rows and sum_duplicates
// against sequential host references, on every enabled backend.
#include <cstdint>
#include <numeric>
#include <spk/convert.hpp>
#include <spk/coo_matrix.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/io/matrix_market.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "test_common.hpp"

namespace {

// A CSR matrix as plain host vectors, for references and comparisons.
template <class S, class O, class F>
struct HostCsr {
  O nrows = 0, ncols = 0;
  std::vector<F> row_map;
  std::vector<O> cols;
  std::vector<S> vals;
};

template <class S, class O, class F>
struct Triplets {
  O nrows = 0, ncols = 0;
  std::vector<O> rows, cols;
  std::vector<S> vals;
};

template <class S, class O, class F, class D>
HostCsr<S, O, F> to_host_csr(const spk::CsrMatrix<S, O, F, D>& a) {
  const auto h = spk::to_host(a);
  HostCsr<S, O, F> r;
  r.nrows = h.nrows();
  r.ncols = h.ncols();
  r.row_map.assign(h.row_map().data(), h.row_map().data() + h.row_map().extent(0));
  r.cols.assign(h.col_idx().data(), h.col_idx().data() + h.col_idx().extent(0));
  r.vals.assign(h.values().data(), h.values().data() + h.values().extent(0));
  return r;
}

template <class S, class O, class F, class D>
Triplets<S, O, F> to_host_triplets(const spk::CooMatrix<S, O, F, D>& a) {
  const auto h = spk::to_host(a);
  Triplets<S, O, F> t;
  t.nrows = h.nrows();
  t.ncols = h.ncols();
  t.rows.assign(h.row_idx().data(), h.row_idx().data() + h.nnz());
  t.cols.assign(h.col_idx().data(), h.col_idx().data() + h.nnz());
  t.vals.assign(h.values().data(), h.values().data() + h.nnz());
  return t;
}

template <class Device, class S, class O, class F>
spk::CooMatrix<S, O, F, Device> to_device_coo(const Triplets<S, O, F>& t) {
  spk::CooMatrix<S, O, F, spk::impl::HostDevice> h(t.nrows, t.ncols, F(t.vals.size()));
  for (std::size_t k = 0; k < t.vals.size(); ++k) {
    h.row_idx()(k) = t.rows[k];
    h.col_idx()(k) = t.cols[k];
    h.values()(k) = t.vals[k];
  }
  return spk::copy_to<Device>(h);
}

template <class Device, class S, class O, class F>
spk::CsrMatrix<S, O, F, Device> to_device_csr(const HostCsr<S, O, F>& a) {
  return spk::make_csr<S, O, F, Device>(a.nrows, a.ncols, a.row_map, a.cols, a.vals);
}

// Reference COO -> CSR: stable sort of the positions by (row, column), then each run of equal
// (row, column) summed in input order.
template <class S, class O, class F>
HostCsr<S, O, F> reference_coo_to_csr(const Triplets<S, O, F>& t) {
  std::vector<std::size_t> order(t.vals.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return t.rows[x] != t.rows[y] ? t.rows[x] < t.rows[y] : t.cols[x] < t.cols[y];
  });
  HostCsr<S, O, F> r;
  r.nrows = t.nrows;
  r.ncols = t.ncols;
  r.row_map.assign(std::size_t(t.nrows) + 1, F(0));
  std::vector<O> out_rows;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t p = order[k];
    if (k > 0 && t.rows[p] == out_rows.back() && t.cols[p] == r.cols.back()) {
      r.vals.back() = r.vals.back() + t.vals[p];
    } else {
      out_rows.push_back(t.rows[p]);
      r.cols.push_back(t.cols[p]);
      r.vals.push_back(t.vals[p]);
    }
  }
  for (O i : out_rows) ++r.row_map[std::size_t(i) + 1];
  for (std::size_t i = 0; i < std::size_t(t.nrows); ++i) r.row_map[i + 1] += r.row_map[i];
  return r;
}

// Reference transpose: sequential counting sort by column, rows visited in order.
template <class S, class O, class F>
HostCsr<S, O, F> reference_transpose(const HostCsr<S, O, F>& a, bool conjugate) {
  HostCsr<S, O, F> t;
  t.nrows = a.ncols;
  t.ncols = a.nrows;
  t.row_map.assign(std::size_t(a.ncols) + 1, F(0));
  for (O j : a.cols) ++t.row_map[std::size_t(j) + 1];
  for (std::size_t j = 0; j < std::size_t(a.ncols); ++j) t.row_map[j + 1] += t.row_map[j];
  std::vector<F> next(t.row_map.begin(), t.row_map.end() - 1);
  t.cols.resize(a.cols.size());
  t.vals.resize(a.vals.size());
  for (O i = 0; i < a.nrows; ++i) {
    for (F k = a.row_map[i]; k < a.row_map[i + 1]; ++k) {
      const F pos = next[a.cols[k]]++;
      t.cols[pos] = i;
      t.vals[pos] = conjugate ? spk::scalar_traits<S>::conj(a.vals[k]) : a.vals[k];
    }
  }
  return t;
}

// Exact comparison: the conversions sum in input order on every backend.
template <class S, class O, class F>
void check_same(const HostCsr<S, O, F>& got, const HostCsr<S, O, F>& want) {
  REQUIRE(got.nrows == want.nrows);
  REQUIRE(got.ncols == want.ncols);
  REQUIRE(got.row_map == want.row_map);
  REQUIRE(got.cols == want.cols);
  REQUIRE(got.vals.size() == want.vals.size());
  for (std::size_t k = 0; k < got.vals.size(); ++k) {
    if (!(got.vals[k] == want.vals[k])) {
      INFO("value " << k << " differs");
      CHECK(got.vals[k] == want.vals[k]);
      return;
    }
  }
}

template <class S, class O, class F>
HostCsr<S, O, F> host_csr(const spk::CsrMatrix<S, O, F, spk::impl::HostDevice>& h) {
  return to_host_csr(h);
}

// Random triplets in random order: `n` entries, rows in [0, active_rows) (the other rows
// stay empty), about `dup_percent` percent of the entries repeating an earlier position.
template <class S, class O, class F>
Triplets<S, O, F> random_triplets(O nrows, O ncols, std::size_t n, std::uint64_t seed,
                                  O active_rows = -1, int dup_percent = 30) {
  std::mt19937_64 rng(seed);
  Triplets<S, O, F> t;
  t.nrows = nrows;
  t.ncols = ncols;
  if (active_rows < 0) active_rows = nrows;
  std::uniform_int_distribution<int> pct(0, 99);
  for (std::size_t k = 0; k < n; ++k) {
    if (k > 0 && pct(rng) < dup_percent) {
      const std::size_t p = std::uniform_int_distribution<std::size_t>(0, k - 1)(rng);
      t.rows.push_back(t.rows[p]);
      t.cols.push_back(t.cols[p]);
    } else {
      t.rows.push_back(std::uniform_int_distribution<O>(0, active_rows - 1)(rng));
      t.cols.push_back(std::uniform_int_distribution<O>(0, ncols - 1)(rng));
    }
    t.vals.push_back(spk_test::random_value<S>(rng));
  }
  return t;
}

// Index type pairs (Ordinal, Offset) the conversions are tested with.
using index_pairs = std::tuple<std::pair<int, int>, std::pair<std::int64_t, std::int64_t>>;

template <class Device, class S, class O, class F>
void check_coo_to_csr(const Triplets<S, O, F>& t) {
  const auto a = to_device_coo<Device>(t);
  const auto want = reference_coo_to_csr(t);
  check_same(to_host_csr(spk::coo_to_csr(a)), want);
  // Small chunks and digits: many chunks and passes, same result.
  spk::ConvertParams p;
  p.chunk = 7;
  p.digit_bits = 3;
  check_same(to_host_csr(spk::coo_to_csr(a, p)), want);
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("coo_to_csr: hand-checked example", Device, coo_to_csr_small) {
  // 3 x 4 with (0,3) twice and (2,1) twice, in scrambled order:
  // row 0: (0,0)=3, (0,3)=2+5; row 1 empty; row 2: (2,1)=1+4.
  Triplets<double, int, int> t;
  t.nrows = 3;
  t.ncols = 4;
  t.rows = {2, 0, 0, 2, 0};
  t.cols = {1, 3, 0, 1, 3};
  t.vals = {1.0, 2.0, 3.0, 4.0, 5.0};
  const auto b = to_host_csr(spk::coo_to_csr(to_device_coo<Device>(t)));
  CHECK(b.row_map == std::vector<int>{0, 2, 2, 3});
  CHECK(b.cols == std::vector<int>{0, 3, 1});
  CHECK(b.vals == std::vector<double>{3.0, 7.0, 5.0});
}
TEST_CASE_TEMPLATE_APPLY(coo_to_csr_small, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("coo_to_csr: random triplets, duplicates, shapes", Device,
                          coo_to_csr_random) {
  spk_test::for_each_type<spk_test::all_scalars>([](auto* s_tag) {
    using S = std::remove_pointer_t<decltype(s_tag)>;
    spk_test::for_each_type<index_pairs>([](auto* i_tag) {
      using O = typename std::remove_pointer_t<decltype(i_tag)>::first_type;
      using F = typename std::remove_pointer_t<decltype(i_tag)>::second_type;
      CAPTURE(spk::scalar_traits<S>::name);
      CAPTURE(sizeof(O));
      // many duplicates, random order, larger than a warp
      check_coo_to_csr<Device>(random_triplets<S, O, F>(50, 40, 3000, 1, -1, 50));
      // non-square, wide and tall
      check_coo_to_csr<Device>(random_triplets<S, O, F>(3, 700, 1500, 2));
      check_coo_to_csr<Device>(random_triplets<S, O, F>(900, 2, 1200, 3));
      // empty rows: only the first 10 of 300 rows have entries
      check_coo_to_csr<Device>(random_triplets<S, O, F>(300, 300, 500, 4, O(10)));
      // one row, one column, one entry
      check_coo_to_csr<Device>(random_triplets<S, O, F>(1, 64, 200, 5));
      check_coo_to_csr<Device>(random_triplets<S, O, F>(64, 1, 200, 6));
      check_coo_to_csr<Device>(random_triplets<S, O, F>(1, 1, 1, 7));
      check_coo_to_csr<Device>(random_triplets<S, O, F>(1, 1, 50, 8, -1, 90));
      // 0 entries, 0 rows
      check_coo_to_csr<Device>(random_triplets<S, O, F>(5, 7, 0, 9));
      check_coo_to_csr<Device>(random_triplets<S, O, F>(0, 0, 0, 10));
      // one dense row (every column, shuffled) among sparse ones
      auto t = random_triplets<S, O, F>(40, 500, 300, 11);
      std::mt19937_64 rng(12);
      for (O j = 0; j < 500; ++j) {
        t.rows.push_back(17);
        t.cols.push_back(j);
        t.vals.push_back(spk_test::random_value<S>(rng));
      }
      std::vector<std::size_t> perm(t.vals.size());
      std::iota(perm.begin(), perm.end(), std::size_t(0));
      std::shuffle(perm.begin(), perm.end(), rng);
      Triplets<S, O, F> shuffled = t;
      for (std::size_t k = 0; k < perm.size(); ++k) {
        shuffled.rows[k] = t.rows[perm[k]];
        shuffled.cols[k] = t.cols[perm[k]];
        shuffled.vals[k] = t.vals[perm[k]];
      }
      check_coo_to_csr<Device>(shuffled);
    });
  });
  // size_t offsets (the Kokkos Kernels default)
  check_coo_to_csr<Device>(random_triplets<double, int, std::size_t>(60, 70, 2000, 13));
}
TEST_CASE_TEMPLATE_APPLY(coo_to_csr_random, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("coo_to_csr: one very long row", Device, coo_to_csr_long_row) {
  // 200000 triplets of row 3 of a 10 x 150000 matrix (about a quarter repeated), in random order,
  // plus a few in other rows; a quadratic per-row sort would take minutes.
  auto t = random_triplets<double, int, int>(10, 150000, 200000, 21, -1, 25);
  for (std::size_t k = 0; k < t.rows.size(); ++k)
    if (k % 1000 != 0) t.rows[k] = 3;
  check_coo_to_csr<Device>(t);
  // int64 indices and more columns than fit 16 bits of a digit pass
  auto t64 = random_triplets<float, std::int64_t, std::int64_t>(2, 3000000, 100000, 22, -1, 10);
  for (auto& r : t64.rows) r = 1;
  check_coo_to_csr<Device>(t64);
}
TEST_CASE_TEMPLATE_APPLY(coo_to_csr_long_row, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("coo_to_csr: out-of-range triplets throw naming the first", Device,
                          coo_to_csr_throws) {
  auto t = random_triplets<double, int, int>(4, 6, 20, 31);
  t.rows[9] = 4;  // the first bad entry
  t.cols[12] = -1;
  const std::string msg9 = spk::str_cat("spk::coo_to_csr: COO entry 9 (row 4, col ", t.cols[9],
                                        ") out of range for a 4 x 6 matrix");
  CHECK_THROWS_WITH_AS(spk::coo_to_csr(to_device_coo<Device>(t)), doctest::Contains(msg9.c_str()),
                       std::invalid_argument);
  t.rows[9] = 0;
  const std::string msg12 =
      spk::str_cat("COO entry 12 (row ", t.rows[12], ", col -1) out of range");
  CHECK_THROWS_WITH_AS(spk::coo_to_csr(to_device_coo<Device>(t)), doctest::Contains(msg12.c_str()),
                       std::invalid_argument);
  t.cols[12] = 6;
  CHECK_THROWS_WITH_AS(spk::coo_to_csr(to_device_coo<Device>(t)), doctest::Contains("COO entry 12"),
                       std::invalid_argument);
  t.cols[12] = 5;
  CHECK_NOTHROW(spk::coo_to_csr(to_device_coo<Device>(t)));
  // every entry of an empty-dimension matrix is out of range
  Triplets<double, int, int> e;
  e.nrows = 0;
  e.ncols = 3;
  e.rows = {0};
  e.cols = {0};
  e.vals = {1.0};
  CHECK_THROWS_WITH_AS(spk::coo_to_csr(to_device_coo<Device>(e)),
                       doctest::Contains("COO entry 0 (row 0, col 0) out of range for a 0 x 3"),
                       std::invalid_argument);
  spk::ConvertParams bad;
  bad.digit_bits = 0;
  CHECK_THROWS_WITH_AS(spk::coo_to_csr(to_device_coo<Device>(t), bad),
                       doctest::Contains("digit_bits = 0 must be in [1, 16]"),
                       std::invalid_argument);
}
TEST_CASE_TEMPLATE_APPLY(coo_to_csr_throws, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("csr_to_coo: entries in storage order, round trip", Device,
                          csr_to_coo_round_trip) {
  spk_test::for_each_type<spk_test::all_scalars>([](auto* s_tag) {
    using S = std::remove_pointer_t<decltype(s_tag)>;
    spk_test::for_each_type<index_pairs>([](auto* i_tag) {
      using O = typename std::remove_pointer_t<decltype(i_tag)>::first_type;
      using F = typename std::remove_pointer_t<decltype(i_tag)>::second_type;
      for (const auto& h :
           {spk_test::random_csr<S, O, F>(200, 150, 6, 41),
            spk_test::random_csr<S, O, F>(30, 400, 3, 42, O(7)),
            spk_test::random_csr<S, O, F>(1, 10, 4, 43), spk_test::random_csr<S, O, F>(6, 6, 0, 44),
            spk_test::random_csr<S, O, F>(0, 0, 0, 45)}) {
        const auto want = host_csr(h);
        const auto a = spk::copy_to<Device>(h);
        const auto t = to_host_triplets(spk::csr_to_coo(a));
        CHECK(t.nrows == want.nrows);
        CHECK(t.ncols == want.ncols);
        std::vector<O> rows;
        for (O i = 0; i < want.nrows; ++i)
          for (F k = want.row_map[i]; k < want.row_map[i + 1]; ++k) rows.push_back(i);
        CHECK(t.rows == rows);
        CHECK(t.cols == want.cols);
        CHECK(t.vals == want.vals);
        check_same(to_host_csr(spk::coo_to_csr(spk::csr_to_coo(a))), want);
      }
    });
  });
}
TEST_CASE_TEMPLATE_APPLY(csr_to_coo_round_trip, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("transpose: against a host transpose, involution, conjugate", Device,
                          transpose_random) {
  spk_test::for_each_type<spk_test::all_scalars>([](auto* s_tag) {
    using S = std::remove_pointer_t<decltype(s_tag)>;
    spk_test::for_each_type<index_pairs>([](auto* i_tag) {
      using O = typename std::remove_pointer_t<decltype(i_tag)>::first_type;
      using F = typename std::remove_pointer_t<decltype(i_tag)>::second_type;
      CAPTURE(spk::scalar_traits<S>::name);
      for (const auto& h : {spk_test::random_csr<S, O, F>(300, 200, 8, 51),
                            spk_test::random_csr<S, O, F>(20, 3000, 40, 52, O(4)),  // dense row
                            spk_test::random_csr<S, O, F>(2000, 7, 1, 53),
                            spk_test::random_csr<S, O, F>(1, 90, 30, 54),
                            spk_test::random_csr<S, O, F>(5, 9, 0, 55),
                            spk_test::random_csr<S, O, F>(0, 4, 0, 56)}) {
        const auto ref = host_csr(h);
        const auto a = spk::copy_to<Device>(h);
        const auto at = spk::transpose(a);
        check_same(to_host_csr(at), reference_transpose(ref, false));
        check_same(to_host_csr(spk::transpose(at)), ref);
        check_same(to_host_csr(spk::transpose(a, true)), reference_transpose(ref, true));
        check_same(to_host_csr(spk::transpose(spk::transpose(a, true), true)), ref);
        spk::ConvertParams p;
        p.chunk = 5;
        p.digit_bits = 2;
        check_same(to_host_csr(spk::transpose(a, false, p)), reference_transpose(ref, false));
      }
    });
  });
}
TEST_CASE_TEMPLATE_APPLY(transpose_random, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("transpose, sort_rows, sum_duplicates: unsorted rows, duplicates", Device,
                          unsorted_rows) {
  using Complex = Kokkos::complex<double>;
  // 3 x 5, rows unsorted, row 0 holds column 4 twice:
  // row 0: (0,4)=1+2i, (0,1)=2, (0,4)=3; row 1 empty; row 2: (2,3)=4, (2,0)=5-1i
  const auto a = spk::make_csr<Complex, int, int, Device>(
      3, 5, {0, 3, 3, 5}, {4, 1, 4, 3, 0},
      {Complex(1, 2), Complex(2, 0), Complex(3, 0), Complex(4, 0), Complex(5, -1)});
  const auto t = to_host_csr(spk::transpose(a, true));
  CHECK(t.row_map == std::vector<int>{0, 1, 2, 2, 3, 5});
  CHECK(t.cols == std::vector<int>{2, 0, 2, 0, 0});
  CHECK(t.vals == std::vector<Complex>{Complex(5, 1), Complex(2, 0), Complex(4, 0), Complex(1, -2),
                                       Complex(3, 0)});
  const auto s = to_host_csr(spk::sort_rows(a));
  CHECK(s.row_map == std::vector<int>{0, 3, 3, 5});
  CHECK(s.cols == std::vector<int>{1, 4, 4, 0, 3});
  CHECK(s.vals == std::vector<Complex>{Complex(2, 0), Complex(1, 2), Complex(3, 0), Complex(5, -1),
                                       Complex(4, 0)});
  const auto m = to_host_csr(spk::sum_duplicates(a));
  CHECK(m.row_map == std::vector<int>{0, 2, 2, 4});
  CHECK(m.cols == std::vector<int>{1, 4, 0, 3});
  CHECK(m.vals ==
        std::vector<Complex>{Complex(2, 0), Complex(4, 2), Complex(5, -1), Complex(4, 0)});

  // Larger: random rows scrambled in place, then compared to the host references.
  auto h = host_csr(
      spk_test::random_csr<double, std::int64_t, std::int64_t>(400, 300, 10, 61, std::int64_t(9)));
  std::mt19937_64 rng(62);
  for (std::int64_t i = 0; i < h.nrows; ++i) {
    // repeat the first column of the row, then shuffle the row
    if (h.row_map[i + 1] - h.row_map[i] >= 2) h.cols[h.row_map[i] + 1] = h.cols[h.row_map[i]];
    for (std::int64_t k = h.row_map[i + 1] - 1; k > h.row_map[i]; --k) {
      const std::int64_t j = std::uniform_int_distribution<std::int64_t>(h.row_map[i], k)(rng);
      std::swap(h.cols[k], h.cols[j]);
      std::swap(h.vals[k], h.vals[j]);
    }
  }
  const auto d = to_device_csr<Device>(h);
  check_same(to_host_csr(spk::transpose(d)), reference_transpose(h, false));
  Triplets<double, std::int64_t, std::int64_t> trip;
  trip.nrows = h.nrows;
  trip.ncols = h.ncols;
  trip.cols = h.cols;
  trip.vals = h.vals;
  for (std::int64_t i = 0; i < h.nrows; ++i)
    for (std::int64_t k = h.row_map[i]; k < h.row_map[i + 1]; ++k) trip.rows.push_back(i);
  check_same(to_host_csr(spk::sum_duplicates(d)), reference_coo_to_csr(trip));
  check_same(to_host_csr(spk::sort_rows(d)),
             reference_transpose(reference_transpose(h, false), false));
}
TEST_CASE_TEMPLATE_APPLY(unsorted_rows, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("transpose, csr_to_coo: malformed input throws", Device,
                          transpose_throws) {
  // row 1 (entries 1..3) holds column 9 of a 3 x 5 matrix
  const auto a =
      spk::make_csr<double, int, int, Device>(3, 5, {0, 1, 3, 3}, {0, 2, 9}, {1.0, 2.0, 3.0});
  CHECK_THROWS_WITH_AS(
      spk::transpose(a),
      doctest::Contains(
          "spk::transpose: CSR row 1 (entries 1..3): column index 9 at entry 2 out of range"),
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::csr_to_coo(a), doctest::Contains("spk::csr_to_coo: CSR row 1"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::sort_rows(a), doctest::Contains("spk::sort_rows: CSR row 1"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::sum_duplicates(a), doctest::Contains("spk::sum_duplicates: CSR row 1"),
                       std::invalid_argument);
  const auto b = spk::make_csr<double, int, int, Device>(2, 2, {0, 2, 1}, {0, 1}, {1.0, 2.0});
  CHECK_THROWS_WITH_AS(spk::transpose(b), doctest::Contains("row_map decreases after row 1"),
                       std::invalid_argument);
}
TEST_CASE_TEMPLATE_APPLY(transpose_throws, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("coo_to_csr, transpose: real matrices", Device, real_matrices) {
  for (const char* name : {"arrow.mtx", "bcsstk13.mtx", "memplus.mtx", "mhd1280b.mtx"}) {
    CAPTURE(name);
    const std::string path = spk_test::data_dir() + "/matrices/" + name;
    const auto header = spk::io::read_matrix_market_header(path);
    const auto check = [&](auto* tag) {
      using S = std::remove_pointer_t<decltype(tag)>;
      const auto h = spk::io::read_matrix_market_coo<S, int, int>(path);
      const auto t = to_host_triplets(h);
      const auto want = reference_coo_to_csr(t);
      const auto a = spk::coo_to_csr(spk::copy_to<Device>(h));
      check_same(to_host_csr(a), want);
      check_same(to_host_csr(spk::transpose(a, true)), reference_transpose(want, true));
      check_same(to_host_csr(spk::transpose(spk::transpose(a))), want);
    };
    if (header.field == spk::io::MatrixMarketHeader::Field::complex)
      check(static_cast<Kokkos::complex<double>*>(nullptr));
    else
      check(static_cast<double*>(nullptr));
  }
}
TEST_CASE_TEMPLATE_APPLY(real_matrices, spk_test::all_devices);
