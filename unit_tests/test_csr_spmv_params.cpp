// Tests of the CSR SpMV schedule heuristic (spk::choose_csr_spmv_params) and its checks.
#include "test_common.hpp"

#include <spk/csr_spmv_params.hpp>

namespace {
spk::CsrRowStats stats(std::int64_t nrows, double mean, double stddev, std::int64_t max_row) {
  spk::CsrRowStats s;
  s.nrows = nrows;
  s.nnz = std::int64_t(mean * double(nrows));
  s.mean = mean;
  s.stddev = stddev;
  s.max_row = max_row;
  return s;
}
}  // namespace

TEST_CASE("csr spmv params: the staged kernel's lanes per row fit a warp's rows in a chunk") {
  using V = spk::CsrSpmvVariant;
  spk::CsrSpmvParams staged;
  staged.variant = V::staged;
  // 32 rows of 7 fit 256 entries with the alignment's room: one lane per row
  auto p = spk::choose_csr_spmv_params(stats(20'000'000, 7.0, 0.1, 7), true, staged);
  CHECK(p.vector_length == 1);
  CHECK(p.entries_per_lane == 8);
  CHECK(p.team_size == 4);
  CHECK(spk::describe(p) == "staged-v1-k8-t4");
  CHECK(p.stage_products == -1);  // 7 per row: entries staged
  // entries staged (up to 16 per row, or asked for): 16 per row: 8 rows of 4 lanes; 27 per
  // row: also 4; 45 per row: 8; 300 per row: a warp
  CHECK(spk::choose_csr_spmv_params(stats(2'000'000, 16.0, 0.0, 16), true, staged)
            .vector_length == 4);
  spk::CsrSpmvParams entries = staged;
  entries.stage_products = -1;
  CHECK(spk::choose_csr_spmv_params(stats(1'300'000, 27.0, 1.0, 27), true, entries)
            .vector_length == 4);
  CHECK(spk::choose_csr_spmv_params(stats(500'000, 45.0, 9.0, 90), true, entries)
            .vector_length == 8);
  CHECK(spk::choose_csr_spmv_params(stats(5'000, 300.0, 9.0, 400), true, entries)
            .vector_length == 32);
  // products staged (chosen above 16 per row): one lane per row up to 32 per row, then the
  // fewest lanes whose warp's rows take at most 384 entries (45: 4; 64: 8; 300: a warp)
  p = spk::choose_csr_spmv_params(stats(2'000'000, 16.5, 0.5, 17), true, staged);
  CHECK(p.stage_products == 2);
  CHECK(p.entries_per_lane == 4);
  CHECK(spk::describe(p) == "staged-v1-k4-t4-pf");
  CHECK(spk::choose_csr_spmv_params(stats(1'300'000, 32.0, 1.0, 32), true, staged)
            .vector_length == 1);
  CHECK(spk::choose_csr_spmv_params(stats(500'000, 45.0, 9.0, 90), true, staged)
            .vector_length == 4);
  CHECK(spk::choose_csr_spmv_params(stats(500'000, 64.0, 9.0, 90), true, staged)
            .vector_length == 8);
  CHECK(spk::choose_csr_spmv_params(stats(5'000, 300.0, 9.0, 400), true, staged)
            .vector_length == 32);
  // products asked for on short rows: one lane per row
  spk::CsrSpmvParams products = staged;
  products.stage_products = 1;
  CHECK(spk::describe(spk::choose_csr_spmv_params(stats(20'000'000, 7.0, 0.1, 7), true,
                                                  products)) == "staged-v1-k8-t4-p");
  // op = T / H stage entries, whatever was asked
  for (spk::Mode m : {spk::Mode::T, spk::Mode::H}) {
    CHECK(spk::choose_csr_spmv_params(stats(1'300'000, 27.0, 1.0, 27), true, products, m)
              .stage_products == -1);
  }
  // out of range
  // loading ahead asked for: kept with its chunk size, chunks of 128 when none is given; op =
  // T / H stage entries (chunks of 256)
  spk::CsrSpmvParams ahead = staged;
  ahead.stage_products = 2;
  CHECK(spk::describe(spk::choose_csr_spmv_params(stats(20'000'000, 7.0, 0.1, 7), true, ahead)) ==
        "staged-v1-k4-t4-pf");
  ahead.entries_per_lane = 16;
  CHECK(spk::describe(spk::choose_csr_spmv_params(stats(500'000, 45.0, 9.0, 90), true, ahead)) ==
        "staged-v4-k16-t4-pf");
  ahead.entries_per_lane = 0;
  CHECK(spk::describe(spk::choose_csr_spmv_params(stats(1'300'000, 27.0, 1.0, 27), true, ahead,
                                                  spk::Mode::T)) == "staged-v4-k8-t4");
  // out of range
  for (int bad : {3, -2}) {
    products.stage_products = bad;
    const std::string msg =
        "stage_products (-1 entries, 0 choose, 1 products, 2 products with the next chunk "
        "loaded ahead) = " +
        std::to_string(bad) + " is out of range";
    CHECK_THROWS_WITH_AS(
        spk::choose_csr_spmv_params(stats(1'300'000, 27.0, 1.0, 27), true, products),
        doctest::Contains(msg.c_str()), std::invalid_argument);
  }
  // CPU: one lane, one warp per team
  p = spk::choose_csr_spmv_params(stats(20'000'000, 7.0, 0.1, 7), false, staged);
  CHECK(p.vector_length == 1);
  CHECK(p.team_size == 1);
}

TEST_CASE("csr spmv params: GPU choices follow the row statistics") {
  using V = spk::CsrSpmvVariant;
  // large 2D 5-point Poisson, 3D 7-point stencils, PSBLAS pdeN (short even rows): one row per
  // thread, two rows each, loads in chunks of 4, 256 threads per team
  for (const auto& st : {stats(5'000'000, 5.0, 0.1, 5), stats(20'000'000, 7.0, 0.3, 7),
                         stats(4'096'000, 7.0, 0.5, 7), stats(5'000'000, 8.0, 3.0, 12)}) {
    const auto q = spk::choose_csr_spmv_params(st, true);
    CHECK(spk::describe(q) == "thread-t256-r2-static-k4");
  }
  // short uneven rows (standard deviation above mean / 4 + 1) and banded 16 per row: the
  // staged kernel, one lane per row, chunks of 256 entries, 4 warps per team
  for (const auto& st : {stats(5'000'000, 6.0, 2.6, 20), stats(2'000'000, 16.0, 0.0, 16)}) {
    const auto q = spk::choose_csr_spmv_params(st, true);
    CHECK(spk::describe(q) == "staged-v1-k8-t4");
  }
  // more than 16 per row up to 64: products staged in chunks of 128 with the next one loaded
  // ahead, one lane per row up to 32 (full band of 17, 24, 27-point stencil, 32), four lanes
  // for 33-48 per row (bcsstk38 x 64: 45), eight up to 64; above 64 warps over windows of 8
  // entries per lane, 4 warps per team
  auto p = spk::choose_csr_spmv_params(stats(2'000'000, 17.0, 0.0, 17), true);
  CHECK(spk::describe(p) == "staged-v1-k4-t4-pf");
  p = spk::choose_csr_spmv_params(stats(2'000'000, 16.5, 0.5, 17), true);
  CHECK(spk::describe(p) == "staged-v1-k4-t4-pf");
  p = spk::choose_csr_spmv_params(stats(2'000'000, 24.0, 2.0, 26), true);
  CHECK(spk::describe(p) == "staged-v1-k4-t4-pf");
  p = spk::choose_csr_spmv_params(stats(1'300'000, 27.0, 1.0, 27), true);
  CHECK(spk::describe(p) == "staged-v1-k4-t4-pf");
  p = spk::choose_csr_spmv_params(stats(1'300'000, 32.0, 1.0, 32), true);
  CHECK(spk::describe(p) == "staged-v1-k4-t4-pf");
  p = spk::choose_csr_spmv_params(stats(500'000, 44.0, 10.0, 90), true);
  CHECK(spk::describe(p) == "staged-v4-k4-t4-pf");
  p = spk::choose_csr_spmv_params(stats(1'000'000, 40.0, 1.0, 40), true);
  CHECK(spk::describe(p) == "staged-v4-k4-t4-pf");
  p = spk::choose_csr_spmv_params(stats(500'000, 64.0, 3.0, 70), true);
  CHECK(spk::describe(p) == "staged-v8-k4-t4-pf");
  p = spk::choose_csr_spmv_params(stats(500'000, 64.5, 3.0, 70), true);
  CHECK(spk::describe(p) == "warp-k8-t4");
  // the rules apply to op = N on GPUs only: CPU backends keep one row per thread
  CHECK(spk::choose_csr_spmv_params(stats(2'000'000, 17.0, 0.0, 17), false).variant == V::thread);
  // irregular rows: windows of 2048 nonzeros, 4096 above 32M nonzeros
  p = spk::choose_csr_spmv_params(stats(4'000'000, 6.4, 400.0, 400'000), true);
  CHECK(p.variant == V::balanced);
  CHECK(p.chunk_nnz == 2048);
  CHECK(p.threads_per_team == 256);
  p = spk::choose_csr_spmv_params(stats(1'500'000, 17.0, 200.0, 60'000), true);
  CHECK(p.variant == V::balanced);
  CHECK(p.chunk_nnz == 2048);
  p = spk::choose_csr_spmv_params(stats(4'000'000, 10.0, 200.0, 60'000), true);
  CHECK(p.chunk_nnz == 4096);
  // below the large-matrix size the staged kernel is not chosen
  p = spk::choose_csr_spmv_params(stats(100'000, 7.0, 0.3, 7), true);
  CHECK(p.variant == V::vector);
  // small regular (cache-resident): full-warp vectors, one row each
  p = spk::choose_csr_spmv_params(stats(10'000, 13.0, 2.0, 20), true);
  CHECK(p.variant == V::vector);
  CHECK(p.vector_length == 32);
  CHECK(p.rows_per_thread == 1);
  // irregular (a few very long rows): windows, smaller ones when the matrix is small
  p = spk::choose_csr_spmv_params(stats(46'500, 3.0, 215.0, 46'500), true);
  CHECK(p.variant == V::balanced);
  CHECK(p.chunk_nnz == 128);
  // transposed, irregular and large: warps over windows, chunks of 4, 4 warps per team (H too)
  p = spk::choose_csr_spmv_params(stats(4'000'000, 6.4, 400.0, 400'000), true, {}, spk::Mode::T);
  CHECK(spk::describe(p) == "warp-k4-t4");
  p = spk::choose_csr_spmv_params(stats(2'000'000, 16.0, 200.0, 60'000), true, {}, spk::Mode::H);
  CHECK(spk::describe(p) == "warp-k4-t4");
  // transposed, irregular and smaller: runs of 4 nonzeros per thread
  p = spk::choose_csr_spmv_params(stats(600'000, 6.4, 400.0, 40'000), true, {}, spk::Mode::T);
  CHECK(p.variant == V::balanced);
  CHECK(p.chunk_nnz / p.threads_per_team == 4);
  // transposed, regular and large, 3-64 per row: the staged kernel, the fewest lanes whose
  // warp's rows fit a chunk of 256 entries (5 per row: one; 16 and 27: four; 44: eight), for
  // op = H too; outside 3-64 per row vectors of about the mean length
  p = spk::choose_csr_spmv_params(stats(2'000'000, 16.0, 0.0, 16), true, {}, spk::Mode::T);
  CHECK(spk::describe(p) == "staged-v4-k8-t4");
  p = spk::choose_csr_spmv_params(stats(5'000'000, 5.0, 0.1, 5), true, {}, spk::Mode::T);
  CHECK(spk::describe(p) == "staged-v1-k8-t4");
  p = spk::choose_csr_spmv_params(stats(1'300'000, 27.0, 1.0, 27), true, {}, spk::Mode::H);
  CHECK(spk::describe(p) == "staged-v4-k8-t4");
  p = spk::choose_csr_spmv_params(stats(500'000, 44.0, 10.0, 90), true, {}, spk::Mode::T);
  CHECK(spk::describe(p) == "staged-v8-k8-t4");
  p = spk::choose_csr_spmv_params(stats(200'000, 100.0, 5.0, 110), true, {}, spk::Mode::T);
  CHECK(p.variant == V::vector);
  p = spk::choose_csr_spmv_params(stats(8'000'000, 2.0, 0.5, 3), true, {}, spk::Mode::T);
  CHECK(p.variant == V::thread);
  // given values are kept in the new branches
  spk::CsrSpmvParams given;
  given.team_size = 8;
  given.entries_per_lane = 8;
  CHECK(spk::describe(spk::choose_csr_spmv_params(stats(4'000'000, 6.4, 400.0, 400'000), true,
                                                   given, spk::Mode::T)) == "warp-k8-t8");
  CHECK(spk::describe(spk::choose_csr_spmv_params(stats(2'000'000, 17.0, 0.0, 17), true, given)) ==
        "staged-v1-k8-t8-pf");
  CHECK(spk::describe(spk::choose_csr_spmv_params(stats(500'000, 80.0, 3.0, 90), true, given)) ==
        "warp-k8-t8");
  // transposed, regular and small (cache-resident): vectors of the mean length rounded down
  p = spk::choose_csr_spmv_params(stats(200'000, 16.0, 0.0, 16), true, {}, spk::Mode::T);
  CHECK(p.variant == V::vector);
  CHECK(p.vector_length == 16);
  // CPU backends: one row per thread
  p = spk::choose_csr_spmv_params(stats(2'000'000, 16.0, 0.0, 16), false, {}, spk::Mode::T);
  CHECK(p.variant == V::thread);
}

TEST_CASE("csr spmv params: CPU choices and explicit values") {
  using V = spk::CsrSpmvVariant;
  auto p = spk::choose_csr_spmv_params(stats(100'000, 27.0, 1.0, 27), false);
  CHECK(p.variant == V::thread);
  CHECK(p.team_size == 1);
  CHECK(p.schedule == spk::SpmvSchedule::static_chunks);
  p = spk::choose_csr_spmv_params(stats(100'000, 3.0, 50.0, 20'000), false);
  CHECK(p.variant == V::balanced);
  // explicit values are kept
  spk::CsrSpmvParams given;
  given.variant = V::vector;
  given.vector_length = 4;
  given.team_size = 32;
  p = spk::choose_csr_spmv_params(stats(100'000, 27.0, 1.0, 27), true, given);
  CHECK(p.vector_length == 4);
  CHECK(p.team_size == 32);
  CHECK(spk::describe(p) == "vector-v4-t32-r1-static");
}

TEST_CASE("csr spmv params: out-of-range values throw with the value") {
  spk::CsrSpmvParams p;
  p.vector_length = 3;
  CHECK_THROWS_WITH_AS(spk::choose_csr_spmv_params(stats(10, 2.0, 0.0, 2), true, p),
                       doctest::Contains("vector_length (a power of two <= 32) = 3"),
                       std::invalid_argument);
  p = {};
  p.team_size = 4096;
  CHECK_THROWS_WITH_AS(spk::choose_csr_spmv_params(stats(10, 2.0, 0.0, 2), true, p),
                       doctest::Contains("team_size = 4096"), std::invalid_argument);
  p = {};
  p.variant = spk::CsrSpmvVariant::warp;
  p.entries_per_lane = 3;
  CHECK_THROWS_WITH_AS(spk::choose_csr_spmv_params(stats(10, 2.0, 0.0, 2), true, p),
                       doctest::Contains("entries_per_lane (4 or 8) = 3"), std::invalid_argument);
  p = {};
  p.variant = spk::CsrSpmvVariant::warp;
  p.team_size = 64;
  CHECK_THROWS_WITH_AS(spk::choose_csr_spmv_params(stats(10, 2.0, 0.0, 2), true, p),
                       doctest::Contains("team_size (warps per team, <= 32) = 64"),
                       std::invalid_argument);
  p = {};
  p.variant = spk::CsrSpmvVariant::thread;
  p.entries_per_lane = 16;
  CHECK_THROWS_WITH_AS(spk::choose_csr_spmv_params(stats(10, 2.0, 0.0, 2), true, p),
                       doctest::Contains("entries_per_lane (thread variant: 0, 4 or 8) = 16"),
                       std::invalid_argument);
  p = {};
  p.variant = spk::CsrSpmvVariant::staged;
  p.entries_per_lane = 12;
  CHECK_THROWS_WITH_AS(spk::choose_csr_spmv_params(stats(10, 2.0, 0.0, 2), true, p),
                       doctest::Contains("entries_per_lane (4, 8, 16 or 32) = 12"),
                       std::invalid_argument);
  p = {};
  p.variant = spk::CsrSpmvVariant::staged;
  p.team_size = 40;
  CHECK_THROWS_WITH_AS(spk::choose_csr_spmv_params(stats(10, 2.0, 0.0, 2), true, p),
                       doctest::Contains("team_size (warps per team, <= 32) = 40"),
                       std::invalid_argument);
  p = {};
  p.chunk_nnz = -1;
  CHECK_THROWS_AS(spk::choose_csr_spmv_params(stats(10, 2.0, 0.0, 2), true, p),
                  std::invalid_argument);
}
