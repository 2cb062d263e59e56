// Tests of spk/select_format.hpp: compute_features against a host computation (random, edge-case,
// generated and shared real matrices, every backend; the fingerprint equal on every backend and
// structural), the cost model's choices on matrices whose best format is clear from their bytes,
// the memory budget, trial selection, and the tuning file's format records (written, reused,
// kept beside compound records, bad records rejected).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <spk/io/matrix_market.hpp>
#include <spk/select_format.hpp>

#include "format_checks.hpp"
#include "test_common.hpp"

namespace {

using spk_test::HostCsr;

/// The features by a plain host loop (fingerprint and value sample left out).
template <class S>
spk::MatrixFeatures host_features(const HostCsr<S, int>& a) {
  spk::MatrixFeatures f;
  f.nrows = a.nrows();
  f.ncols = a.ncols();
  f.nnz = a.nnz();
  const auto& rm = a.row_map();
  const auto& ci = a.col_idx();
  double sum2 = 0, slots = 0, same = 0, near = 0;
  std::set<long long> diags;
  for (int h = 0; h < a.nrows(); h += 32) {
    long long hmax = 0;
    const int end = std::min(a.nrows(), h + 32);
    for (int i = h; i < end; ++i) hmax = std::max<long long>(hmax, rm(i + 1) - rm(i));
    slots += double(hmax) * double(end - h);
  }
  for (int i = 0; i < a.nrows(); ++i) {
    const long long len = rm(i + 1) - rm(i);
    sum2 += double(len) * double(len);
    f.empty_rows += len == 0;
    f.row_max = std::max<std::int64_t>(f.row_max, len);
    for (int k = rm(i); k < rm(i + 1); ++k) {
      const long long off = (long long)ci(k) - i;
      diags.insert(off);
      f.bandwidth = std::max<std::int64_t>(f.bandwidth, std::llabs(off));
      near += std::llabs(off) <= 4096;
      if (i > 0 && rm(i + 1) - rm(i) == rm(i) - rm(i - 1) && ci(rm(i - 1) + (k - rm(i))) == ci(k))
        same += 1;
    }
  }
  f.diagonals = std::int64_t(diags.size());
  if (f.nrows > 0) {
    f.row_mean = double(f.nnz) / double(f.nrows);
    const double var = sum2 / double(f.nrows) - f.row_mean * f.row_mean;
    f.row_stddev = var > 0 ? std::sqrt(var) : 0.0;
  }
  if (f.nnz > 0) {
    f.ell_padding = double(f.row_max) * double(f.nrows) / double(f.nnz);
    f.hack_padding = slots / double(f.nnz);
    f.dia_padding = double(f.diagonals) * double(f.nrows) / double(f.nnz);
    f.block_fraction = same / double(f.nnz);
    f.near_fraction = near / double(f.nnz);
  }
  return f;
}

template <class Device, class S>
spk::MatrixFeatures check_features(const HostCsr<S, int>& host) {
  const auto got = spk::compute_features(spk::copy_to<Device>(host));
  const auto want = host_features(host);
  INFO(host.nrows() << " x " << host.ncols() << ", nnz " << host.nnz());
  CHECK(got.nrows == want.nrows);
  CHECK(got.ncols == want.ncols);
  CHECK(got.nnz == want.nnz);
  CHECK(got.row_max == want.row_max);
  CHECK(got.empty_rows == want.empty_rows);
  CHECK(got.diagonals == want.diagonals);
  CHECK(got.bandwidth == want.bandwidth);
  CHECK(got.row_mean == doctest::Approx(want.row_mean).epsilon(1e-12));
  CHECK(got.row_stddev == doctest::Approx(want.row_stddev).epsilon(1e-9));
  CHECK(got.ell_padding == doctest::Approx(want.ell_padding).epsilon(1e-12));
  CHECK(got.hack_padding == doctest::Approx(want.hack_padding).epsilon(1e-12));
  CHECK(got.dia_padding == doctest::Approx(want.dia_padding).epsilon(1e-12));
  CHECK(got.block_fraction == doctest::Approx(want.block_fraction).epsilon(1e-12));
  CHECK(got.near_fraction == doctest::Approx(want.near_fraction).epsilon(1e-12));
  // the value sample: the first entry of every stride-th chunk of entries, at most 1024
  const long long chunk = spk::impl::feature_chunk;
  const long long chunks = (host.nnz() + chunk - 1) / chunk;
  const long long most = spk::impl::feature_max_sample;
  const long long stride = chunks > 0 ? (chunks + most - 1) / most : 0;
  std::set<std::vector<unsigned char>> distinct;
  long long sampled = 0;
  for (long long c = 0; stride > 0 && c < chunks; c += stride, ++sampled) {
    const S v = host.values()(std::size_t(c * chunk));
    const auto* p = reinterpret_cast<const unsigned char*>(&v);
    distinct.insert(std::vector<unsigned char>(p, p + sizeof(S)));
  }
  CHECK(got.value_sample == sampled);
  CHECK(got.distinct_values == (long long)distinct.size());
  return got;
}

TEST_CASE_TEMPLATE_DEFINE("compute_features matches a host computation", Device, features) {
  using S = double;
  check_features<Device>(spk_test::random_csr<S>(500, 420, 7, 3, 100));
  check_features<Device>(spk_test::random_csr<S>(64, 5000, 40, 5));
  check_features<Device>(spk_test::random_csr<S>(1, 1, 1, 7, 0));
  check_features<Device>(spk_test::csr_with_duplicates<S, int>(9));
  check_features<Device>(spk::make_csr<S, int, int, spk::impl::HostDevice>(
      4, 9, std::vector<int>(5, 0), std::vector<int>{}, std::vector<S>{}));
  check_features<Device>(spk::make_csr<S, int, int, spk::impl::HostDevice>(
      0, 0, std::vector<int>{0}, std::vector<int>{}, std::vector<S>{}));
  // generated structure: 7 diagonals, no padding of DIA beyond the boundary rows
  const auto p = check_features<Device>(
      spk::to_host(spk::generate::poisson3d_7pt<S, int, int, Device>(12)));
  CHECK(p.diagonals == 7);
  CHECK(p.distinct_values == 2);  // 6 and -1
  // rows in blocks of 3 with one pattern: block fraction 2/3
  std::vector<int> rm{0}, cols;
  std::vector<S> vals;
  for (int i = 0; i < 300; ++i) {
    const int b = i / 3;
    for (int nb : {b - 1, b, b + 1})
      if (nb >= 0 && nb < 100)
        for (int d = 0; d < 3; ++d) {
          cols.push_back(3 * nb + d);
          vals.push_back(1.0 + i);
        }
    rm.push_back(int(cols.size()));
  }
  const auto blocked = check_features<Device>(
      spk::make_csr<S, int, int, spk::impl::HostDevice>(300, 300, rm, cols, vals));
  CHECK(blocked.block_fraction == doctest::Approx(2.0 / 3.0));
  // shared real matrices (a long-row one and a power-law one among them)
  for (const std::string name : {"rajat19.mtx", "wiki-Vote.mtx", "bcsstk38.mtx", "arrow.mtx"}) {
    INFO(name);
    check_features<Device>(spk::coo_to_csr(spk::io::read_matrix_market_coo<S, int, int>(
        spk_test::data_dir() + "/matrices/" + name)));
  }
}
TEST_CASE_TEMPLATE_APPLY(features, spk_test::all_devices);

/// Rows in runs: `empty` empty rows after every row of `len` entries spread over the columns.
spk_test::HostCsr<double, int> sparse_rows(int nrows, int ncols, int len, int empty) {
  std::vector<int> rm{0}, cols;
  std::vector<double> vals;
  for (int i = 0; i < nrows; ++i) {
    if (i % (empty + 1) == 0)
      for (int k = 0; k < len; ++k) {
        cols.push_back(int((std::int64_t(i) * 7 + std::int64_t(k) * 131) % ncols));
        vals.push_back(double(k % 5));
      }
    std::sort(cols.begin() + rm.back(), cols.end());
    cols.erase(std::unique(cols.begin() + rm.back(), cols.end()), cols.end());
    vals.resize(cols.size());
    rm.push_back(int(cols.size()));
  }
  return spk::make_csr<double, int, int, spk::impl::HostDevice>(nrows, ncols, rm, cols, vals);
}

TEST_CASE_TEMPLATE_DEFINE("compute_features across calls and team boundaries", Device,
                          features_calls) {
  // the pass keeps buffers between calls (two diagonal bitmaps used in turn, counters that the
  // last team puts back to zero): alternate large and small matrices and repeat each, so a
  // bitmap or counter left dirty by an earlier call would change a later result
  const auto big = spk_test::random_csr<double>(20000, 30000, 9, 41);
  const auto small = spk_test::random_csr<double>(300, 200, 4, 42);
  const auto band =
      spk::to_host(spk::generate::poisson3d_7pt<double, int, int, Device>(30));  // 27000 rows
  for (int round = 0; round < 3; ++round) {
    check_features<Device>(big);
    check_features<Device>(small);
    check_features<Device>(band);
    const auto again = check_features<Device>(band);
    CHECK(again.diagonals == 7);
  }
  // thousands of empty rows between non-empty ones: a team's entries span more rows than its
  // scratch holds, so it searches the row map in global memory
  check_features<Device>(sparse_rows(200000, 5000, 20, 999));
  check_features<Device>(sparse_rows(50000, 5000, 3, 7));
  // one dense row among short ones (a team's entries may all lie in one row)
  check_features<Device>(spk_test::random_csr<double>(3000, 9000, 2, 43, 1500));
  // over 512k entries: 16 per GPU lane (fewer matrices above take 1-8); 70000 rows take the
  // team's row search three rounds of 128 probes
  check_features<Device>(spk_test::random_csr<double>(70000, 60000, 9, 44));
}
TEST_CASE_TEMPLATE_APPLY(features_calls, spk_test::all_devices);

TEST_CASE("the fingerprint is the same on every backend and depends on the structure only") {
  using S = double;
  const auto host = spk_test::random_csr<S>(700, 650, 9, 13, 3);
  std::set<std::uint64_t> prints;
  spk_test::for_each_type<spk_test::all_devices>([&](auto* tag) {
    using Device = std::remove_pointer_t<decltype(tag)>;
    prints.insert(spk::compute_features(spk::copy_to<Device>(host)).fingerprint);
  });
  CHECK(prints.size() == 1);
  const std::uint64_t fp = *prints.begin();
  // other values, same structure: same fingerprint
  auto other = spk_test::random_csr<S>(700, 650, 9, 13, 3);
  for (std::size_t k = 0; k < other.values().extent(0); ++k) other.values()(k) *= 2;
  CHECK(spk::compute_features(other).fingerprint == fp);
  // one column moved: another fingerprint
  auto moved = spk_test::random_csr<S>(700, 650, 9, 13, 3);
  moved.col_idx()(5) = (moved.col_idx()(5) + 1) % 650;
  CHECK(spk::compute_features(moved).fingerprint != fp);
  // the same entries in a wider matrix: another fingerprint
  const auto wide = spk::make_csr<S, int, int, spk::impl::HostDevice>(
      2, 3, std::vector<int>{0, 1, 2}, std::vector<int>{0, 1}, std::vector<S>{1, 1});
  const auto narrow = spk::make_csr<S, int, int, spk::impl::HostDevice>(
      2, 2, std::vector<int>{0, 1, 2}, std::vector<int>{0, 1}, std::vector<S>{1, 1});
  CHECK(spk::compute_features(wide).fingerprint != spk::compute_features(narrow).fingerprint);
}

/// The feature-only choice, with no cache-resident regime (cache_bytes = 1): bytes decide.
template <class Device>
std::string chosen(const spk::CsrMatrix<double, int, int, Device>& a) {
  spk::SelectOptions o;
  o.cache_bytes = 1;
  return spk::select_format(a, o).config.name();
}

TEST_CASE_TEMPLATE_DEFINE("the cost model chooses by bytes moved", Device, model_choice) {
  using S = double;
  spk::generate::GeneratorOptions random_values;
  random_values.random_values = true;
  // a stencil with random values: DIA stores no column indices
  CHECK(chosen(spk::generate::poisson3d_7pt<S, int, int, Device>(40, random_values)) == "dia");
  // a power-law graph with one value: compressed COO's 1-byte value codes and short offsets
  CHECK(chosen(spk::generate::rmat<S, int, int, Device>(18, 16, 3)) == "compressed-coo");
  // random columns in a wide band, equal row lengths: ELL (no padding); DIA would pad 8x
  const auto band = spk::generate::random_banded<S, int, int, Device>(60000, 64, 16, 3);
  CHECK(chosen(band) == "ell");
  // a few very long rows: CSR's balanced schedule or a COO format, never a padded one
  const auto circuit = spk::generate::circuit_like<S, int, int, Device>(60000, 5, 2, 20000, 5);
  const std::string c = chosen(circuit);
  INFO("circuit-like: " << c);
  CHECK((c == "csr-balanced" || c == "balanced-coo" || c == "compressed-coo" || c == "csr"));
  // a cache-resident matrix on a GPU (the default cache_bytes): launches decide, one-kernel CSR
  const auto tiny = spk::generate::poisson2d_5pt<S, int, int, Device>(4, random_values);
  const spk::FormatConfig t = spk::select_format(tiny).config;
  INFO("tiny: " << t.name());
  if (spk::impl::is_gpu_space<typename Device::execution_space>())
    CHECK((t.format == spk::Format::csr && t.csr.variant != spk::CsrSpmvVariant::balanced &&
           t.csr.variant != spk::CsrSpmvVariant::warp));
  // every ranked candidate has an estimate; feasible ones first
  const auto choice = spk::select_format(band);
  bool seen_note = false;
  for (const auto& r : choice.ranked) {
    CHECK(r.estimate.microseconds > 0);
    CHECK(r.measured_ms < 0);
    if (!r.note.empty()) seen_note = true;
    if (seen_note) CHECK(!r.note.empty());
  }
  CHECK(!choice.trial);
  CHECK(choice.seconds >= choice.features.seconds);
}
TEST_CASE_TEMPLATE_APPLY(model_choice, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("a memory budget excludes formats", Device, budget) {
  using S = double;
  const auto a = spk::generate::random_banded<S, int, int, Device>(20000, 64, 16, 3);
  spk::SelectOptions o;
  const auto free_choice = spk::select_format(a, o);
  const std::size_t free_bytes = spk::Matrix<S, Device>(a, free_choice.config).memory_bytes();
  // the actual bytes of every candidate
  std::map<std::string, std::size_t> bytes;
  for (const auto& r : free_choice.ranked) {
    try {
      bytes[r.config.name()] = spk::Matrix<S, Device>(a, r.config).memory_bytes();
    } catch (const spk::PaddingLimitExceeded&) {
    }
  }
  o.memory_budget_bytes = free_bytes - 1;
  int fit = 0;
  for (const auto& b : bytes) fit += b.second <= o.memory_budget_bytes;
  REQUIRE(fit >= 1);  // the case tests an exclusion, not an empty choice
  for (const bool trial : {false, true}) {
    INFO("trial " << trial << ", free choice " << free_choice.config.name());
    o.trial = trial;
    spk::Matrix<S, Device> m;
    const auto c = spk::select_format(a, o, &m);
    CHECK(c.config.name() != free_choice.config.name());
    CHECK(m.memory_bytes() <= o.memory_budget_bytes);
    CHECK(bytes.at(c.config.name()) <= o.memory_budget_bytes);
    CHECK(m.format_name() == c.config.name());
  }
  // nothing fits
  o.memory_budget_bytes = 100;
  for (const bool trial : {false, true}) {
    o.trial = trial;
    CHECK_THROWS_WITH_AS(spk::select_format(a, o), doctest::Contains("memory budget"),
                         std::invalid_argument);
  }
}
TEST_CASE_TEMPLATE_APPLY(budget, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("trial selection times candidates and keeps the winner in the tuning "
                          "file",
                          Device, trial) {
  using S = double;
  const std::string path = "spk-test-select-format-tuning.json";
  std::remove(path.c_str());
  // a compound record already in the file must survive
  {
    std::ofstream out(path);
    out << "{\"spk_tuning\": 1, \"records\": [{\"gpu\": \"g\", \"entry\": \"quaternion64\", "
           "\"class\": \"c\", \"layout\": \"csr-aos-aos\", \"schedule\": "
           "\"static-t128-b0-r1\"}]}\n";
  }
  const auto a = spk::generate::pde_convdiff3d<S, int, int, Device>(20);
  spk::SelectOptions o;
  o.trial = true;
  o.trial_candidates = 3;
  o.trial_repeat = 3;
  o.tuning_file = path;
  o.cache_bytes = 1;  // not cache-resident: the 3 best-ranked and the default CSR are timed
  spk::Matrix<S, Device> m;
  const auto first = spk::select_format(a, o, &m);
  CHECK(first.trial);
  CHECK(!first.from_tuning_file);
  CHECK(m.format_name() == first.config.name());
  int timed = 0;
  double best = 1e300;
  std::string best_name;
  bool csr_timed = false;
  for (const auto& r : first.ranked) {
    if (r.measured_ms < 0) continue;
    ++timed;
    if (r.config.name() == "csr") csr_timed = true;
    if (r.measured_ms < best) {
      best = r.measured_ms;
      best_name = r.config.name();
    }
  }
  CHECK(timed >= 3);
  CHECK(timed <= 4);
  CHECK(csr_timed);
  CHECK(best_name == first.config.name());
  const spk::TuningFile file = spk::TuningFile::load(path);
  REQUIRE(file.format_records().size() == 1);
  CHECK(file.records().size() == 1);
  CHECK(file.format_records()[0].config == first.config.name());
  CHECK(file.format_records()[0].fingerprint == first.features.fingerprint_string());
  // the second call takes the record without timing
  const auto second = spk::select_format(a, o);
  CHECK(second.from_tuning_file);
  CHECK(second.config.name() == first.config.name());
  for (const auto& r : second.ranked) CHECK(r.measured_ms < 0);
  // a record naming a configuration select_format does not know is ignored (re-measured)
  spk::TuningFile edited = file;
  auto rec = file.format_records()[0];
  rec.config = "no-such-format";
  edited.set_format(rec);
  edited.save(path);
  const auto third = spk::select_format(a, o);
  CHECK(!third.from_tuning_file);
  CHECK(third.trial);
  // malformed format records name what is missing
  CHECK_THROWS_WITH_AS(
      spk::TuningFile::parse("{\"spk_tuning\": 1, \"records\": [], \"formats\": [{\"gpu\": "
                             "\"g\", \"scalar\": \"double\", \"config\": \"csr\"}]}",
                             "t.json"),
      doctest::Contains("fingerprint"), std::runtime_error);
  std::remove(path.c_str());
  // a cache-resident matrix: every candidate that accepts it is timed
  spk::SelectOptions all;
  all.trial = true;
  all.trial_repeat = 2;
  all.cache_bytes = std::size_t(1) << 40;
  const auto every = spk::select_format(a, all);
  for (const auto& r : every.ranked) {
    INFO(r.config.name() << ": " << r.note);
    CHECK((r.measured_ms >= 0) != !r.note.empty());
  }
  // bad options
  o.trial_repeat = 0;
  CHECK_THROWS_AS(spk::select_format(a, o), std::invalid_argument);
}
TEST_CASE_TEMPLATE_APPLY(trial, spk_test::all_devices);

}  // namespace
