// Tests of spk/compound/compound_matrix.hpp (with layout.hpp, schedule.hpp, compound_vector.hpp
// and impl/compound_spmv.hpp): every outer x inner x vector layout and both schedules for
// complex, quaternion, b x b block and real entries and a user-defined entry type (dual
// quaternions), against the host reference, on random and the shared complex and mesh matrices;
// conversions both ways; memory; edge cases; errors.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <spk/compound/compound_matrix.hpp>
#include <spk/compound/generate_compound.hpp>
#include <spk/compound/reference.hpp>
#include <spk/convert.hpp>
#include <spk/io/matrix_market.hpp>

#include "test_common.hpp"

// --- a user-defined entry type: one struct and one traits specialisation -----------------------
namespace spk_test {
/// Dual quaternion r + eps d (eps^2 = 0), acting on dual quaternions by left multiplication.
struct DualQuaternion {
  spk::Quaternion<double> r, d;
};
inline DualQuaternion operator*(const DualQuaternion& a, const DualQuaternion& b) {
  return {a.r * b.r, a.r * b.d + a.d * b.r};
}
inline DualQuaternion operator+(const DualQuaternion& a, const DualQuaternion& b) {
  return {a.r + b.r, a.d + b.d};
}
}  // namespace spk_test

namespace spk {
template <>
struct entry_traits<spk_test::DualQuaternion> : impl::real_scaled_entry<double> {
  using entry_type = spk_test::DualQuaternion;
  using vector_type = spk_test::DualQuaternion;
  static constexpr int matrix_components = 8, vector_components = 8;
  static constexpr const char* name = "dualquaternion64";
  KOKKOS_INLINE_FUNCTION static void multiply_add(const double* a, const double* x, double* acc) {
    using q = entry_traits<Quaternion<double>>;
    q::multiply_add(a, x, acc);              // r_a r_x
    q::multiply_add(a, x + 4, acc + 4);      // r_a d_x
    q::multiply_add(a + 4, x, acc + 4);      // d_a r_x
  }
  KOKKOS_INLINE_FUNCTION static void scale(const double& s, double* v) {
    for (int c = 0; c < 8; ++c) v[c] *= s;
  }
};
}  // namespace spk

namespace {

using spk::ComponentLayout;
using spk::CompoundLayout;
using spk::OuterLayout;

template <class T>
T random_compound(std::mt19937_64& rng) {
  using real = typename spk::entry_traits<T>::real_type;
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  T v{};
  real* p = reinterpret_cast<real*>(&v);
  for (std::size_t c = 0; c < sizeof(T) / sizeof(real); ++c) p[c] = real(u(rng));
  return v;
}
template <class Real, int B>
spk::BlockVector<Real, B> random_block_vector(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  spk::BlockVector<Real, B> v{};
  for (int c = 0; c < B; ++c) v.v[c] = Real(u(rng));
  return v;
}
template <class V>
struct RandomVector {
  static V get(std::mt19937_64& rng) { return random_compound<V>(rng); }
};
template <class Real, int B>
struct RandomVector<spk::BlockVector<Real, B>> {
  static spk::BlockVector<Real, B> get(std::mt19937_64& rng) {
    return random_block_vector<Real, B>(rng);
  }
};

/// Random CSR matrix of E on Device: row lengths uniform in [0, 2 mean], every 7th row empty,
/// optionally one full row and rows holding the same column twice (duplicates add up).
template <class E, class Device>
spk::CsrMatrix<E, int, int, Device> random_matrix(int nrows, int ncols, int mean, std::uint64_t seed,
                                                  int dense_row = -1, bool duplicates = false) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> len(0, 2 * mean);
  std::vector<int> row_map(1, 0), cols;
  std::vector<E> vals;
  for (int i = 0; i < nrows; ++i) {
    const int n = i == dense_row ? ncols : (i % 7 == 3 || ncols == 0) ? 0 : len(rng);
    std::uniform_int_distribution<int> col(0, ncols > 0 ? ncols - 1 : 0);
    for (int j = 0; j < n; ++j) {
      cols.push_back(i == dense_row ? j : col(rng));
      vals.push_back(random_compound<E>(rng));
    }
    if (duplicates && n > 0) {
      cols.push_back(cols.back());
      vals.push_back(random_compound<E>(rng));
    }
    row_map.push_back(int(cols.size()));
  }
  return spk::make_csr<E, int, int, Device>(nrows, ncols, row_map, cols, vals);
}

std::vector<CompoundLayout> all_layouts() {
  std::vector<CompoundLayout> out;
  const std::vector<std::pair<ComponentLayout, int>> comps = {
      {ComponentLayout::aos, 4},   {ComponentLayout::soa, 4},   {ComponentLayout::aosoa, 2},
      {ComponentLayout::aosoa, 4}, {ComponentLayout::aosoa, 8}, {ComponentLayout::aosoa, 32}};
  for (auto outer : {std::make_pair(OuterLayout::csr, 32), std::make_pair(OuterLayout::ell, 32),
                     std::make_pair(OuterLayout::sell, 16), std::make_pair(OuterLayout::sell, 32)})
    for (auto inner : comps)
      for (auto vec : comps) {
        CompoundLayout l;
        l.outer = outer.first;
        l.slice = outer.second;
        l.inner = inner.first;
        l.inner_width = inner.second;
        l.vector = vec.first;
        l.vector_width = vec.second;
        out.push_back(l);
      }
  return out;
}

template <class Device>
std::vector<spk::CompoundSchedule> test_schedules() {
  const bool gpu = spk::impl::is_gpu_space<typename Device::execution_space>();
  spk::CompoundSchedule dyn;
  dyn.kind = spk::ScheduleKind::dynamic_chunks;
  spk::CompoundSchedule odd;  // a team size that is not a multiple of 32, short chunks, 1 team/SM
  odd.threads_per_team = gpu ? 96 : 1;
  odd.teams_per_sm = 1;
  odd.rows_per_chunk = 7;
  spk::CompoundSchedule odd_dyn = odd;
  odd_dyn.kind = spk::ScheduleKind::dynamic_chunks;
  return {spk::CompoundSchedule{}, dyn, odd, odd_dyn};
}

/// Checks spmv on `a` in layout l with schedule s against the reference, and to_csr().
template <class E, class Device>
void check_spmv(const spk::CsrMatrix<E, int, int, Device>& a, const CompoundLayout& l,
                const spk::CompoundSchedule& s, std::uint64_t seed,
                typename spk::entry_traits<E>::scale_type alpha,
                typename spk::entry_traits<E>::scale_type beta) {
  using traits = spk::entry_traits<E>;
  using V = typename traits::vector_type;
  using real = typename traits::real_type;
  INFO("entry " << std::string(traits::name) << ", layout " << spk::to_string(l) << ", schedule "
                << spk::to_string(s) << ", " << a.nrows() << " x " << a.ncols() << ", nnz "
                << a.nnz());
  std::mt19937_64 rng(seed);
  std::vector<V> x(std::size_t(a.ncols())), y(std::size_t(a.nrows()));
  for (auto& v : x) v = RandomVector<V>::get(rng);
  for (auto& v : y) v = RandomVector<V>::get(rng);
  spk::PaddingLimit generous;  // the tests pad rows to a full one on purpose
  generous.max_csr_ratio = 1e4;
  spk::CompoundMatrix<E, Device> m(a, l, generous);
  using vec = spk::CompoundVector<E, Device>;
  const vec xv = vec::from_view(spk_test::to_view<Device>(x), l.vector, l.vector_width);
  const vec yv = vec::from_view(spk_test::to_view<Device>(y), l.vector, l.vector_width);
  spk::spmv(spk::Mode::N, alpha, m, xv, beta, yv, s);
  const std::vector<V> got = spk_test::to_vector(yv.to_view());
  std::vector<double> bound;
  spk::reference::compound_spmv(alpha, a, x, beta, y, &bound);
  const double eps = std::is_same<real, float>::value ? 5.96e-8 : 1.11e-16;
  const double tol = 4.0 * traits::matrix_components * eps;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const real* g = reinterpret_cast<const real*>(&got[i]);
    const real* r = reinterpret_cast<const real*>(&y[i]);
    for (int c = 0; c < traits::vector_components; ++c) {
      const double err = std::abs(double(g[c]) - double(r[c]));
      if (!(err <= tol * (1.0 + bound[i]))) {
        INFO("row " << i << " component " << c << ": got " << g[c] << ", reference " << r[c]
                    << ", error " << err << " > " << tol * (1.0 + bound[i]));
        CHECK(err <= tol * (1.0 + bound[i]));
        return;
      }
    }
  }
  // conversion back is exact and in stored order
  const auto b = spk::to_host(m.to_csr());
  const auto ah = spk::to_host(a);
  REQUIRE(b.nnz() == ah.nnz());
  bool same = true;
  for (int i = 0; i <= a.nrows(); ++i) same = same && b.row_map()(i) == ah.row_map()(i);
  for (int k = 0; k < ah.nnz(); ++k) {
    same = same && b.col_idx()(k) == ah.col_idx()(k);
    same = same && std::memcmp(&b.values()(k), &ah.values()(k), sizeof(E)) == 0;
  }
  CHECK(same);
}

template <class E, class Device>
void check_all_layouts(std::uint64_t seed, int nrows, int ncols, int mean) {
  const auto a = random_matrix<E, Device>(nrows, ncols, mean, seed, nrows / 3, true);
  using scale = typename spk::entry_traits<E>::scale_type;
  int n = 0;
  for (const auto& l : all_layouts()) {
    const auto scheds = test_schedules<Device>();
    ++n;
    check_spmv(a, l, scheds[std::size_t(n) % scheds.size()], seed + std::uint64_t(n),
               spk::entry_traits<E>::scale_from(1.5), spk::entry_traits<E>::scale_from(-0.5));
  }
  for (const auto& s : test_schedules<Device>())
    check_spmv(a, CompoundLayout{}, s, seed, scale(spk::entry_traits<E>::scale_from(0.75)),
               spk::entry_traits<E>::scale_from(0.0));
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("compound spmv: every layout and schedule, against the reference", Device,
                          every_layout) {
  // larger than a warp and a few slices; one full row (ELL pads every row to it); duplicates
  check_all_layouts<Kokkos::complex<double>, Device>(11, 150, 170, 4);
  check_all_layouts<Kokkos::complex<float>, Device>(12, 150, 120, 4);
  check_all_layouts<spk::Quaternion<double>, Device>(13, 150, 150, 5);
  check_all_layouts<spk::Quaternion<float>, Device>(14, 150, 150, 5);
  check_all_layouts<spk::Block<double, 3>, Device>(15, 100, 90, 4);
  check_all_layouts<spk::Block<float, 3>, Device>(16, 100, 90, 4);
  check_all_layouts<spk::Block<double, 2>, Device>(17, 100, 90, 4);
  check_all_layouts<spk::Block<double, 4>, Device>(18, 100, 90, 4);
  check_all_layouts<spk::Block<double, 6>, Device>(19, 70, 70, 3);
  check_all_layouts<double, Device>(20, 150, 150, 6);
  check_all_layouts<spk_test::DualQuaternion, Device>(21, 80, 80, 3);
}
TEST_CASE_TEMPLATE_APPLY(every_layout, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("compound spmv: edge cases", Device, edge_cases) {
  using E = spk::Quaternion<double>;
  const double one = 1.0;
  for (const auto& l : {CompoundLayout{}, spk::parse_layout("ell-soa-aosoa4"),
                        spk::parse_layout("sell16-aosoa8-soa"),
                        spk::parse_layout("sell32-aos-aos")}) {
    for (const auto& s : test_schedules<Device>()) {
      check_spmv(random_matrix<E, Device>(0, 0, 2, 1), l, s, 1, one, 0.5);      // 0 x 0
      check_spmv(random_matrix<E, Device>(0, 5, 2, 1), l, s, 1, one, 0.5);      // 0 rows
      check_spmv(random_matrix<E, Device>(6, 0, 2, 1), l, s, 1, one, 0.5);      // 0 columns
      check_spmv(random_matrix<E, Device>(1, 1, 2, 2), l, s, 2, one, 0.5);      // 1 x 1
      check_spmv(random_matrix<E, Device>(1, 300, 2, 3, 0), l, s, 3, 2.0, 0.0); // one full row
      check_spmv(random_matrix<E, Device>(40, 3, 0, 4), l, s, 4, one, -1.0);    // 0 entries
      check_spmv(random_matrix<E, Device>(33, 500, 3, 5, 32), l, s, 5, one, 1.0);  // tall/wide
      check_spmv(random_matrix<E, Device>(500, 20, 3, 6, -1, true), l, s, 6, one, 0.0);
    }
  }
}
TEST_CASE_TEMPLATE_APPLY(edge_cases, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("compound spmv: beta = 0 overwrites NaN, complex scale factors", Device,
                          beta_zero) {
  using E = Kokkos::complex<double>;
  const auto a = random_matrix<E, Device>(64, 64, 3, 7);
  spk::CompoundMatrix<E, Device> m(a, spk::parse_layout("sell32-soa-soa"));
  using vec = spk::CompoundVector<E, Device>;
  vec x(64, ComponentLayout::soa), y(64, ComponentLayout::soa);
  Kokkos::deep_copy(x.data(), 1.0);
  Kokkos::deep_copy(y.data(), std::nan(""));
  spk::spmv(spk::Mode::N, E(1.0, 0.0), m, x, E(0.0, 0.0), y);
  for (double v : spk_test::to_vector(y.data())) CHECK(std::isfinite(v));
  // a complex alpha and beta
  check_spmv(a, spk::parse_layout("csr-aosoa4-aos"), spk::CompoundSchedule{}, 8, E(0.5, -2.0),
             E(-1.0, 0.25));
}
TEST_CASE_TEMPLATE_APPLY(beta_zero, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("compound matrix: memory of each layout", Device, memory) {
  using E = spk::Block<double, 3>;
  // rows 0..63 with lengths 1, 2, 1, 2, ... and row 10 of length 9: counts by hand
  std::vector<int> row_map(1, 0), cols;
  std::vector<E> vals;
  for (int i = 0; i < 64; ++i) {
    const int n = i == 10 ? 9 : 1 + i % 2;
    for (int j = 0; j < n; ++j) {
      cols.push_back(j);
      vals.push_back(E{});
    }
    row_map.push_back(int(cols.size()));
  }
  const auto a = spk::make_csr<E, int, int, Device>(64, 64, row_map, cols, vals);
  const std::size_t nnz = cols.size();
  const std::size_t entry = 9 * sizeof(double);
  CHECK(spk::CompoundMatrix<E, Device>(a).memory_bytes() == 65 * 4 + nnz * (4 + entry));
  // ELL: width 9, pitch 64; row lengths
  CHECK(spk::CompoundMatrix<E, Device>(a, spk::parse_layout("ell-aos-aos")).memory_bytes() ==
        64 * 4 + 9 * 64 * (4 + entry));
  // SELL16: slice 0 (rows 0-15) width 9, slices 1-3 width 2; 3 + ... slice offsets
  const std::size_t sell16 = (9 + 2 + 2 + 2) * 16;
  CHECK(spk::CompoundMatrix<E, Device>(a, spk::parse_layout("sell16-soa-aos")).memory_bytes() ==
        5 * 4 + 64 * 4 + sell16 * 4 + ((sell16 + 31) / 32 * 32) * entry);
  // AoSoA pads the slot count to a multiple of W
  const std::size_t csr_aosoa = (nnz + 7) / 8 * 8;
  CHECK(spk::CompoundMatrix<E, Device>(a, spk::parse_layout("csr-aosoa8-aos")).memory_bytes() ==
        65 * 4 + nnz * 4 + csr_aosoa * entry);
}
TEST_CASE_TEMPLATE_APPLY(memory, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("compound: invalid input throws with the value", Device, errors) {
  using E = spk::Quaternion<float>;
  using matrix = spk::CompoundMatrix<E, Device>;
  const auto a = random_matrix<E, Device>(50, 40, 3, 9);
  CompoundLayout bad;
  bad.outer = OuterLayout::sell;
  bad.slice = 8;
  CHECK_THROWS_WITH_AS(matrix(a, bad),
                       doctest::Contains("slice 8"), std::invalid_argument);
  bad = {};
  bad.inner = ComponentLayout::aosoa;
  bad.inner_width = 3;
  CHECK_THROWS_WITH_AS(matrix(a, bad), doctest::Contains("width 3"),
                       std::invalid_argument);
  matrix m(a);
  using vec = spk::CompoundVector<E, Device>;
  vec x(40), y(50), y_soa(50, ComponentLayout::soa), x_short(39);
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::T, 1.0f, m, x, 0.0f, y), doctest::Contains("op = T"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0f, m, x_short, 0.0f, y),
                       doctest::Contains("x has 39"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0f, m, x, 0.0f, y_soa),
                       doctest::Contains("same vector layout"), std::invalid_argument);
  spk::CompoundSchedule huge;
  huge.threads_per_team = 1 << 20;
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0f, m, x, 0.0f, y, huge),
                       doctest::Contains("team size"), std::invalid_argument);
  spk::CompoundSchedule neg;
  neg.rows_per_chunk = -2;
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0f, m, x, 0.0f, y, neg),
                       doctest::Contains("negative"), std::invalid_argument);
  // one full row pads ELL far beyond the limit
  const auto arrow = random_matrix<E, Device>(4000, 4000, 1, 10, 5);
  CHECK_THROWS_AS(matrix(arrow, spk::parse_layout("ell-aos-aos")),
                  spk::PaddingLimitExceeded);
  // a failed dynamic launch takes no tickets: the next dynamic product is still right
  spk::CompoundSchedule dyn_huge = huge;
  dyn_huge.kind = spk::ScheduleKind::dynamic_chunks;
  CHECK_THROWS(spk::spmv(spk::Mode::N, 1.0f, m, x, 0.0f, y, dyn_huge));
  spk::CompoundSchedule dyn;
  dyn.kind = spk::ScheduleKind::dynamic_chunks;
  check_spmv(a, CompoundLayout{}, dyn, 3, 1.0f, 0.0f);
}
TEST_CASE_TEMPLATE_APPLY(errors, spk_test::all_devices);

TEST_CASE("compound layouts and schedules: names round-trip, bad text throws") {
  for (const auto& l : all_layouts()) CHECK(spk::parse_layout(spk::to_string(l)) == l);
  CHECK(spk::to_string(spk::parse_layout("sell16-aosoa8-soa")) == "sell16-aosoa8-soa");
  for (const char* bad : {"csr", "csr-aos", "coo-aos-aos", "csr-aosoa3-aos", "csr-aosoa64-aos",
                          "csr-aos-aos-aos", "sell8-aos-aos", "csr-aosoa-aos"})
    CHECK_THROWS_AS(spk::parse_layout(bad), std::invalid_argument);
  spk::CompoundSchedule s;
  s.kind = spk::ScheduleKind::dynamic_chunks;
  s.threads_per_team = 192;
  s.teams_per_sm = 6;
  s.rows_per_chunk = 384;
  CHECK(spk::parse_schedule(spk::to_string(s)) == s);
  for (const char* bad : {"static", "dynamic-t1-b2", "guided-t1-b2-r3", "static-t1-b2-r3x"})
    CHECK_THROWS_AS(spk::parse_schedule(bad), std::invalid_argument);
}

TEST_CASE("compound entries: Hamilton product and block product by hand") {
  using Q = spk::Quaternion<double>;
  const Q one{1, 0, 0, 0}, i{0, 1, 0, 0}, j{0, 0, 1, 0}, k{0, 0, 0, 1};
  const Q minus_one{-1, 0, 0, 0};
  CHECK(i * j == k);
  CHECK(j * k == i);
  CHECK(k * i == j);
  CHECK(j * i == Q{0, 0, 0, -1});
  CHECK(i * i == minus_one);
  CHECK(i * j * k == minus_one);
  CHECK(one * k == k);
  // entry_traits' component kernel agrees with the operator on a general pair
  const Q a{1, 2, 3, 4}, b{-2, 0.5, 7, -1};
  double acc[4] = {0, 0, 0, 0};
  spk::entry_traits<Q>::multiply_add(&a.w, &b.w, acc);
  const Q ab = a * b;  // (1 + 2i + 3j + 4k)(-2 + 0.5i + 7j - k)
  CHECK(ab == Q{-2 - 1 - 21 + 4, 0.5 - 4 + (-3) - 28, 7 + 2 - 6 + 2, -1 + 14 - 1.5 - 8});
  CHECK(acc[0] == ab.w);
  CHECK(acc[1] == ab.x);
  CHECK(acc[2] == ab.y);
  CHECK(acc[3] == ab.z);
  const spk::Block<double, 2> m{{1, 2, 3, 4}};
  const spk::BlockVector<double, 2> v{{5, 6}};
  const auto mv = m * v;
  CHECK(mv.v[0] == 17);
  CHECK(mv.v[1] == 39);
  double bacc[2] = {1, 1};
  spk::entry_traits<spk::Block<double, 2>>::multiply_add(m.a, v.v, bacc);
  CHECK(bacc[0] == 18);
  CHECK(bacc[1] == 40);
  CHECK(std::string(spk::entry_traits<spk::Block<float, 3>>::name) == "block3_32");
  CHECK(std::string(spk::entry_traits<spk::Quaternion<double>>::name) == "quaternion64");
  CHECK(std::string(spk::entry_traits<Kokkos::complex<double>>::name) == "complex128");
}

TEST_CASE_TEMPLATE_DEFINE("compound spmv: AoS views and the matrix's own schedule", Device,
                          aos_views) {
  using E = spk::Block<double, 3>;
  using V = spk::BlockVector<double, 3>;
  const auto a = random_matrix<E, Device>(90, 70, 4, 31, 5);
  spk::CompoundMatrix<E, Device> m(a, spk::parse_layout("sell16-aosoa8-aos"));
  spk::CompoundSchedule s;
  s.kind = spk::ScheduleKind::dynamic_chunks;
  s.rows_per_chunk = 5;
  m.set_schedule(s);
  CHECK(m.schedule() == s);
  std::mt19937_64 rng(5);
  std::vector<V> x(70), y(90);
  for (auto& v : x) v = random_block_vector<double, 3>(rng);
  for (auto& v : y) v = random_block_vector<double, 3>(rng);
  const auto xd = spk_test::to_view<Device>(x);
  const auto yd = spk_test::to_view<Device>(y);
  for (int rep = 0; rep < 3; ++rep) {  // repeated dynamic launches reuse the ticket counter
    Kokkos::deep_copy(yd, spk_test::to_view<Device>(y));
    spk::spmv(spk::Mode::N, 2.0, m, xd, -1.0, yd);
    std::vector<V> ref = y;
    std::vector<double> bound;
    spk::reference::compound_spmv(2.0, a, x, -1.0, ref, &bound);
    const auto got = spk_test::to_vector(yd);
    double worst = 0;
    for (std::size_t i = 0; i < ref.size(); ++i)
      for (int c = 0; c < 3; ++c)
        worst = std::max(worst, std::abs(got[i].v[c] - ref[i].v[c]) / (1.0 + bound[i]));
    CHECK(worst <= 40 * 1.11e-16);
  }
}
TEST_CASE_TEMPLATE_APPLY(aos_views, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("compound spmv: the shared complex matrices and mesh matrices", Device,
                          shared_matrices) {
  const std::string dir = spk_test::data_dir();
  const std::vector<CompoundLayout> layouts = {
      CompoundLayout{}, spk::parse_layout("ell-aosoa32-aos"), spk::parse_layout("sell32-soa-soa"),
      spk::parse_layout("sell16-aos-aosoa4")};
  spk::CompoundSchedule dyn;
  dyn.kind = spk::ScheduleKind::dynamic_chunks;
  using C = Kokkos::complex<double>;
  for (const char* name : {"mhd1280b.mtx", "mhd1280a.mtx", "qc324.mtx", "young1c.mtx",
                           "dwg961a.mtx", "w156.mtx", "arrowc.mtx"}) {
    const auto a = spk::coo_to_csr(spk::copy_to<Device>(
        spk::io::read_matrix_market_coo<C, int, int>(dir + "/matrices/" + name)));
    for (const auto& l : layouts) check_spmv(a, l, dyn, 3, C(1.0, 0.5), C(-0.5, 0.0));
  }
  const auto q = spk::quaternion_mesh_matrix<double, Device>(dir + "/meshes/spot.obj", 1);
  const auto b = spk::elasticity_mesh_matrix<double, Device>(dir + "/meshes/femur_interior.1");
  for (const auto& l : layouts) {
    check_spmv(q, l, spk::CompoundSchedule{}, 4, 1.0, 0.0);
    check_spmv(b, l, dyn, 5, 2.0, 1.0);
  }
}
TEST_CASE_TEMPLATE_APPLY(shared_matrices, spk_test::all_devices);
