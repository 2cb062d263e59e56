// Tests of spk::spmv for CSR against the sequential host reference: modes N, T and H, every
// kernel variant and schedule, explicit and atomic transposes.
#include "test_common.hpp"

#include <algorithm>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <spk/convert.hpp>
#include <spk/io/matrix_market.hpp>
#include <spk/reference.hpp>
#include <spk/spmv.hpp>

namespace {

// Runs y = alpha op(A) x + beta y on Device and compares with spk::reference::spmv.
template <class Device, class Scalar, class Ordinal, class Offset>
void check_spmv(const spk::CsrMatrix<Scalar, Ordinal, Offset, spk::impl::HostDevice>& host_a,
                spk::Mode mode, Scalar alpha, Scalar beta, std::uint64_t seed,
                const spk::CsrSpmvParams& params) {
  const auto a = spk::copy_to<Device>(host_a);
  const bool trans = mode != spk::Mode::N;
  const std::size_t nx = trans ? a.nrows() : a.ncols();
  const std::size_t ny = trans ? a.ncols() : a.nrows();
  const auto x = spk_test::random_vector<Scalar>(nx, seed);
  auto y_ref = spk_test::random_vector<Scalar>(ny, seed + 1);
  const auto xd = spk_test::to_view<Device>(x);
  const auto yd = spk_test::to_view<Device>(y_ref);
  spk::spmv(mode, alpha, a, xd, beta, yd, params);
  std::vector<double> bound;
  spk::reference::spmv(mode, alpha, host_a, x, beta, y_ref, &bound);
  INFO("mode " << std::string(spk::to_string(mode)) << ", " << a.nrows() << " x " << a.ncols() << ", nnz "
               << a.nnz() << ", scalar " << std::string(spk::scalar_traits<Scalar>::name) << ", schedule "
               << spk::describe(spk::resolve_params(a, mode, params))
               << std::string(params.transpose == spk::TransposeMethod::explicit_ ? " explicit" : ""));
  spk_test::check_close(spk_test::to_vector(yd), y_ref, bound,
                        8 * spk::unit_roundoff<Scalar>());
}

// Every variant and schedule, with small teams and windows so that rows cross windows and
// chunks.
template <class Device>
std::vector<spk::CsrSpmvParams> schedules() {
  // CPU backends run teams of one thread (Serial allows no more)
  const bool gpu = spk::impl::is_gpu_space<typename Device::execution_space>();
  using V = spk::CsrSpmvVariant;
  std::vector<spk::CsrSpmvParams> all;
  spk::CsrSpmvParams p;
  all.push_back(p);  // automatic
  for (auto sched : {spk::SpmvSchedule::static_chunks, spk::SpmvSchedule::dynamic_chunks}) {
    p = {};
    p.variant = V::thread;
    p.team_size = gpu ? 4 : 1;
    p.rows_per_thread = 3;
    p.schedule = sched;
    all.push_back(p);
    for (int k : {4, 8}) {  // rows loaded in chunks of k entries, the last one predicated
      p.entries_per_lane = k;
      all.push_back(p);
    }
    for (int v : {2, 8, 32}) {
      p = {};
      p.variant = V::vector;
      p.vector_length = v;
      p.team_size = gpu ? 2 : 1;
      p.rows_per_thread = 2;
      p.schedule = sched;
      p.league_size = 3;
      all.push_back(p);
    }
  }
  for (int v : {2, 8}) {  // several rows per vector (5: the last chunk is partial)
    for (int r : {4, 5}) {
      p = {};
      p.variant = V::vector;
      p.vector_length = v;
      p.team_size = gpu ? 3 : 1;
      p.rows_per_thread = r;
      all.push_back(p);
    }
  }
  for (int chunk : {1, 7, 64}) {
    p = {};
    p.variant = V::balanced;
    p.chunk_nnz = chunk;
    p.threads_per_team = gpu ? 4 : 1;
    all.push_back(p);
  }
  for (int k : {4, 8}) {
    p = {};
    p.variant = V::warp;
    p.entries_per_lane = k;
    p.team_size = gpu ? 3 : 1;
    all.push_back(p);
  }
  // staged (entries or products staged; op = T / H stage entries either way): one to 32
  // lanes per row; chunks of 4 entries per lane force rows across chunks
  for (int sp : {-1, 1, 2}) {
    for (int v : {1, 2, 4, 32}) {
      for (int k : {4, 16}) {
        p = {};
        p.variant = V::staged;
        p.vector_length = v;
        p.entries_per_lane = k;
        p.team_size = gpu ? 3 : 1;
        p.stage_products = sp;
        all.push_back(p);
      }
    }
    for (int v : {8, 16}) {  // the other lane counts, the other chunk sizes, one warp per team
      for (int k : {8, 32}) {
        p = {};
        p.variant = V::staged;
        p.vector_length = v;
        p.entries_per_lane = k;
        p.team_size = 1;
        p.stage_products = sp;
        all.push_back(p);
      }
    }
  }
  p = {};
  p.transpose = spk::TransposeMethod::explicit_;
  all.push_back(p);
  return all;
}

// A CSR matrix with the given row lengths (columns distinct, ascending, random; values random).
template <class Scalar>
spk::CsrMatrix<Scalar, int, int, spk::impl::HostDevice> csr_with_row_lengths(
    const std::vector<int>& lengths, int ncols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  const int nrows = int(lengths.size());
  int nnz = 0;
  for (int len : lengths) nnz += len;
  spk::CsrMatrix<Scalar, int, int, spk::impl::HostDevice> a(nrows, ncols, nnz);
  int k = 0;
  a.row_map()(0) = 0;
  for (int i = 0; i < nrows; ++i) {
    std::vector<int> cols(static_cast<std::size_t>(ncols));
    for (int j = 0; j < ncols; ++j) cols[std::size_t(j)] = j;
    std::shuffle(cols.begin(), cols.end(), rng);
    cols.resize(std::size_t(lengths[std::size_t(i)]));
    std::sort(cols.begin(), cols.end());
    for (int c : cols) {
      a.col_idx()(k) = c;
      a.values()(k) = spk::scalar_traits<Scalar>::make(val(rng), val(rng));
      ++k;
    }
    a.row_map()(i + 1) = k;
  }
  return a;
}

template <class Device, class Scalar, class Ordinal>
void check_all_modes(const spk::CsrMatrix<Scalar, Ordinal, int, spk::impl::HostDevice>& a,
                     std::uint64_t seed) {
  using traits = spk::scalar_traits<Scalar>;
  const Scalar alpha = traits::make(1.5, traits::is_complex ? -0.5 : 0.0);
  for (const auto& params : schedules<Device>()) {
    for (spk::Mode mode : {spk::Mode::N, spk::Mode::T, spk::Mode::H}) {
      // op = T / H stage entries whatever stage_products asks (csr_spmv_staged_dispatch checks
      // that), so the products schedules would repeat the entries schedules' launches there
      if (mode != spk::Mode::N && params.variant == spk::CsrSpmvVariant::staged &&
          params.stage_products > 0)
        continue;
      check_spmv<Device>(a, mode, alpha, traits::zero(), seed, params);
      check_spmv<Device>(a, mode, alpha, traits::make(-0.75, 0.25), seed + 7, params);
      check_spmv<Device>(a, mode, traits::one(), traits::one(), seed + 11, params);
    }
  }
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("csr spmv matches the host reference", Device, csr_spmv) {
  spk_test::for_each_type<spk_test::all_scalars>([](auto* tag) {
    using Scalar = std::remove_pointer_t<decltype(tag)>;
    // random, larger than a warp, with empty rows
    check_all_modes<Device, Scalar, int>(spk_test::random_csr<Scalar, int>(300, 200, 6, 1), 3);
    // int64 ordinals, one dense row
    check_all_modes<Device, Scalar, long long>(
        spk_test::random_csr<Scalar, long long>(150, 170, 3, 2, 40), 5);
    // one row; one column; 0 nonzeros; 0 x 0
    check_all_modes<Device, Scalar, int>(spk_test::random_csr<Scalar, int>(1, 90, 30, 3), 7);
    check_all_modes<Device, Scalar, int>(spk_test::random_csr<Scalar, int>(90, 1, 1, 4), 9);
    check_all_modes<Device, Scalar, int>(spk_test::random_csr<Scalar, int>(40, 30, 0, 5), 11);
    check_all_modes<Device, Scalar, int>(spk_test::random_csr<Scalar, int>(0, 0, 0, 6), 13);
  });
}
TEST_CASE_TEMPLATE_APPLY(csr_spmv, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("csr spmv: rows at and across window and warp boundaries", Device,
                          csr_spmv_boundaries) {
  // leading, trailing and consecutive empty rows; rows of exactly a warp window (32 x 4 = 128,
  // 32 x 8 = 256 entries) starting on and off a window boundary; a row spanning several windows;
  // single-entry rows between them
  std::vector<int> lengths = {0, 0, 0, 128, 0, 1, 300, 0, 0, 4, 4, 4, 4, 124, 256, 0, 3, 1000};
  for (int i = 0; i < 70; ++i) lengths.push_back(i % 5 == 0 ? 0 : 1 + i % 9);
  for (int i = 0; i < 40; ++i) lengths.push_back(0);
  spk_test::for_each_type<spk_test::all_scalars>([&](auto* tag) {
    using Scalar = std::remove_pointer_t<decltype(tag)>;
    check_all_modes<Device, Scalar, int>(csr_with_row_lengths<Scalar>(lengths, 1200, 41), 43);
    // one long row only; one entry only
    check_all_modes<Device, Scalar, int>(csr_with_row_lengths<Scalar>({1100}, 1100, 47), 53);
    check_all_modes<Device, Scalar, int>(csr_with_row_lengths<Scalar>({0, 1, 0}, 3, 59), 61);
  });
}
TEST_CASE_TEMPLATE_APPLY(csr_spmv_boundaries, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("csr spmv: staged kernel on rows of one length (slot swizzle)", Device,
                          csr_spmv_staged_uniform) {
  // rows of an even length (16, 32) swizzle the staged slots with one lane per row, odd ones
  // (17, 27) do not; 500 rows span many warps, chunks of 128 to 512 entries cut rows
  using V = spk::CsrSpmvVariant;
  spk_test::for_each_type<spk_test::all_scalars>([](auto* tag) {
    using Scalar = std::remove_pointer_t<decltype(tag)>;
    using traits = spk::scalar_traits<Scalar>;
    for (int len : {16, 17, 27, 32}) {
      const auto a = csr_with_row_lengths<Scalar>(std::vector<int>(500, len), 700, 71 + len);
      for (int sp : {-1, 0, 1, 2}) {
        for (int v : {1, 2, 4}) {
          for (int k : {4, 8, 16}) {
            spk::CsrSpmvParams p;
            p.variant = V::staged;
            p.vector_length = v;
            p.entries_per_lane = k;
            p.stage_products = sp;
            p.team_size = 2;  // 2 warps of 512 complex128 entries fit team scratch
            check_spmv<Device>(a, spk::Mode::N, traits::make(1.5, 0.5), traits::make(-0.5, 0.0),
                               73, p);
          }
        }
      }
    }
  });
}
TEST_CASE_TEMPLATE_APPLY(csr_spmv_staged_uniform, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("csr spmv: staged products or entries, the kernel that runs", Device,
                          csr_spmv_staged_dispatch) {
  // stage_products resolves by the mean row length (products above 16, op = N only); the
  // launch label tells which path ran, and the product is checked either way
  const auto run = [](const auto& host, spk::Mode mode, int sp) {
    spk::CsrSpmvParams p;
    p.variant = spk::CsrSpmvVariant::staged;
    p.stage_products = sp;
    spk_test::KernelLabels seen;
    check_spmv<Device>(host, mode, 0.5, -1.0, 79, p);
    return seen.ran("spk::csr_spmv_staged_products_ahead") ? 2
           : seen.ran("spk::csr_spmv_staged_products")     ? 1
           : seen.ran("spk::csr_spmv_staged")              ? -1
           : seen.ran("spk::csr_spmv_staged_t")            ? -2
                                                           : 0;
  };
  const auto rows17 = csr_with_row_lengths<double>(std::vector<int>(300, 17), 400, 81);
  const auto rows7 = csr_with_row_lengths<double>(std::vector<int>(300, 7), 400, 83);
  CHECK(run(rows17, spk::Mode::N, 0) == 2);  // products, the next chunk loaded ahead
  CHECK(run(rows7, spk::Mode::N, 0) == -1);
  CHECK(run(rows7, spk::Mode::N, 1) == 1);
  CHECK(run(rows7, spk::Mode::N, 2) == 2);
  CHECK(run(rows17, spk::Mode::N, 1) == 1);
  CHECK(run(rows17, spk::Mode::N, -1) == -1);
  CHECK(run(rows17, spk::Mode::T, 1) == -2);  // op = T stages entries
  CHECK(run(rows17, spk::Mode::T, 2) == -2);
  // products staged beyond team scratch throw before y is touched (GPUs: 8 warps of 1024
  // products in double are 64 KiB)
  if (spk::impl::is_gpu_space<typename Device::execution_space>()) {
    spk::CsrSpmvParams p;
    p.variant = spk::CsrSpmvVariant::staged;
    p.stage_products = 1;
    p.entries_per_lane = 32;
    p.team_size = 8;
    const auto a = spk::copy_to<Device>(rows17);
    const auto y0 = spk_test::random_vector<double>(300, 5);
    const auto x = spk_test::to_view<Device>(spk_test::random_vector<double>(400, 4));
    const auto y = spk_test::to_view<Device>(y0);
    CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, a, x, 2.0, y, p),
                         doctest::Contains("staged products need"), std::invalid_argument);
    CHECK(spk_test::to_vector(y) == y0);
  }
}
TEST_CASE_TEMPLATE_APPLY(csr_spmv_staged_dispatch, spk_test::all_devices);

TEST_CASE("csr spmv: alpha and beta convert to the matrix value type") {
  // as with KokkosSparse::spmv, double literals work for a float or complex matrix
  const auto a = spk_test::random_csr<float, int>(20, 20, 3, 1);
  Kokkos::View<float*, Kokkos::HostSpace> x("x", 20), y("y", 20);
  Kokkos::deep_copy(x, 1.0f);
  spk::spmv(spk::Mode::N, 2.0, a, x, 0.0, y);
  std::vector<float> xr(20, 1.0f), yr(20, 0.0f);
  spk::reference::spmv(spk::Mode::N, 2.0f, a, xr, 0.0f, yr);
  for (int i = 0; i < 20; ++i) CHECK(y(i) == doctest::Approx(yr[i]).epsilon(1e-5));
  const auto c = spk_test::random_csr<Kokkos::complex<double>, int>(5, 5, 2, 2);
  Kokkos::View<Kokkos::complex<double>*, Kokkos::HostSpace> xc("x", 5), yc("y", 5);
  spk::spmv(spk::Mode::N, 1.0, c, xc, 0.0, yc);
  CHECK(yc(0) == Kokkos::complex<double>(0.0, 0.0));
}

TEST_CASE_TEMPLATE_DEFINE("csr spmv: staged chunks beyond shared memory throw, y unchanged",
                          Device, csr_spmv_staged_scratch) {
  // on a GPU 8 warps (the most Kokkos launches with 32 lanes) of 1024 staged entries need
  // about 98 KB of team scratch in double, more than shared memory; on the CPU backends a team
  // is one lane with 32 entries, which fits
  spk::CsrSpmvParams p;
  p.variant = spk::CsrSpmvVariant::staged;
  p.entries_per_lane = 32;
  p.team_size = 8;
  const auto host = spk_test::random_csr<double, int>(3000, 700, 20, 8);
  if (spk::impl::is_gpu_space<typename Device::execution_space>()) {
    const auto a = spk::copy_to<Device>(host);
    const auto y0 = spk_test::random_vector<double>(700, 5);
    const auto x = spk_test::to_view<Device>(spk_test::random_vector<double>(3000, 4));
    const auto y = spk_test::to_view<Device>(y0);
    CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::T, 1.0, a, x, 2.0, y, p),
                         doctest::Contains("bytes of team scratch, more than the maximum"),
                         std::invalid_argument);
    CHECK(spk_test::to_vector(y) == y0);  // y = beta y does not run before the checks
  } else {
    for (spk::Mode mode : {spk::Mode::N, spk::Mode::T})
      check_spmv<Device>(host, mode, 1.5, -0.5, 9, p);
  }
}
TEST_CASE_TEMPLATE_APPLY(csr_spmv_staged_scratch, spk_test::all_devices);

TEST_CASE("csr spmv: wrong vector sizes throw with both sizes") {
  const auto a = spk_test::random_csr<double, int>(5, 4, 2, 1);
  Kokkos::View<double*, Kokkos::HostSpace> x("x", 5), y("y", 5);
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, a, x, 0.0, y),
                       doctest::Contains("x has 5 entries, op(A) has 4 columns"),
                       std::invalid_argument);
  Kokkos::View<double*, Kokkos::HostSpace> xt("x", 5), yt("y", 3);
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::T, 1.0, a, xt, 0.0, yt),
                       doctest::Contains("y has 3 entries, op(A) has 4 rows"),
                       std::invalid_argument);
}

TEST_CASE_TEMPLATE_DEFINE("csr spmv on the shared real matrices", Device, csr_spmv_real) {
  // every matrix of the manifest, in double (complex128 for complex files), modes N and T (and
  // H for complex), with the automatic, vector, balanced and warp schedules and the staged
  // kernel staging entries, products, and products with the next chunk loaded ahead
  const std::string dir = spk_test::data_dir() + "/matrices/";
  std::ifstream manifest(dir + "MANIFEST.tsv");
  REQUIRE_MESSAGE(manifest.good(), "cannot open " << dir << "MANIFEST.tsv");
  std::string line;
  std::getline(manifest, line);  // header
  int checked = 0;
  while (std::getline(manifest, line)) {
    if (line.empty()) continue;
    const std::string file = line.substr(0, line.find('\t'));
    const bool complex = line.find("\tcomplex\t") != std::string::npos;
    INFO("matrix " << file);
    auto run = [&](auto* tag) {
      using Scalar = std::remove_pointer_t<decltype(tag)>;
      const auto coo = spk::io::read_matrix_market_coo<Scalar, int, int>(dir + file);
      const auto host = spk::to_host(spk::coo_to_csr(coo));
      spk::CsrSpmvParams vec, bal, warp, staged, products, ahead;
      vec.variant = spk::CsrSpmvVariant::vector;
      bal.variant = spk::CsrSpmvVariant::balanced;
      warp.variant = spk::CsrSpmvVariant::warp;
      staged.variant = spk::CsrSpmvVariant::staged;
      products.variant = spk::CsrSpmvVariant::staged;
      products.stage_products = 1;
      ahead.variant = spk::CsrSpmvVariant::staged;
      ahead.stage_products = 2;
      const Scalar alpha = spk::scalar_traits<Scalar>::make(0.5, complex ? 0.25 : 0.0);
      for (const auto& params : {spk::CsrSpmvParams{}, vec, bal, warp, staged, products, ahead}) {
        check_spmv<Device>(host, spk::Mode::N, alpha, Scalar(0), 17, params);
        check_spmv<Device>(host, spk::Mode::T, alpha, Scalar(2), 19, params);
        if (complex) check_spmv<Device>(host, spk::Mode::H, alpha, Scalar(2), 23, params);
      }
    };
    if (complex)
      run(static_cast<Kokkos::complex<double>*>(nullptr));
    else
      run(static_cast<double*>(nullptr));
    ++checked;
  }
  CHECK(checked == 51);
}
TEST_CASE_TEMPLATE_APPLY(csr_spmv_real, spk_test::all_devices);
