// Tests of spk/compound/tuning.hpp: the tuning file (JSON round trip, merge, malformed files,
// missing file), matrix classes, the selection rule on made-up tables, the schedule grid's
// limits, tune() on tiny matrices and make_tuned() with and without a record. No test asserts
// anything about measured times.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <spk/compound/reference.hpp>
#include <spk/compound/tuning.hpp>

#include "test_common.hpp"

namespace {

using spk::CompoundLayout;
using spk::CompoundSchedule;
using spk::TuningFile;
using spk::TuningRecord;

constexpr double inf = std::numeric_limits<double>::infinity();

TuningRecord make_record(const std::string& gpu, const std::string& entry, const std::string& cls,
                         const std::string& layout, const std::string& schedule, double t,
                         double d) {
  TuningRecord r;
  r.gpu = gpu;
  r.entry = entry;
  r.matrix_class = cls;
  r.layout = spk::parse_layout(layout);
  r.schedule = spk::parse_schedule(schedule);
  r.time_ms = t;
  r.default_ms = d;
  return r;
}

bool same_record(const TuningRecord& a, const TuningRecord& b) {
  return a.gpu == b.gpu && a.entry == b.entry && a.matrix_class == b.matrix_class &&
         a.layout == b.layout && a.schedule == b.schedule && a.time_ms == b.time_ms &&
         a.default_ms == b.default_ms;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

/// CSR matrix of E on Device with the given row lengths, columns (i + j) % ncols and entries
/// whose components are small distinct numbers.
template <class E, class Device>
spk::CsrMatrix<E, int, int, Device> rows_matrix(const std::vector<int>& lengths, int ncols,
                                                std::uint64_t seed = 1) {
  using real = typename spk::entry_traits<E>::real_type;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<int> row_map(1, 0), cols;
  std::vector<E> vals;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    for (int j = 0; j < lengths[i]; ++j) {
      cols.push_back(int((i + std::size_t(j)) % std::size_t(ncols)));
      E v{};
      real* p = reinterpret_cast<real*>(&v);
      for (std::size_t c = 0; c < sizeof(E) / sizeof(real); ++c) p[c] = real(u(rng));
      vals.push_back(v);
    }
    row_map.push_back(int(cols.size()));
  }
  return spk::make_csr<E, int, int, Device>(int(lengths.size()), ncols, row_map, cols, vals);
}

/// spmv with the matrix's own schedule in its own vector layout against the host reference.
template <class E, class Device>
void check_against_reference(const spk::CsrMatrix<E, int, int, Device>& a,
                             const spk::CompoundMatrix<E, Device>& m) {
  using traits = spk::entry_traits<E>;
  using V = typename traits::vector_type;
  using real = typename traits::real_type;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<V> x(std::size_t(a.ncols())), y(std::size_t(a.nrows()));
  for (auto& v : x) {
    real* p = reinterpret_cast<real*>(&v);
    for (int c = 0; c < traits::vector_components; ++c) p[c] = real(u(rng));
  }
  using vec = spk::CompoundVector<E, Device>;
  const auto& l = m.layout();
  const vec xv = vec::from_view(spk_test::to_view<Device>(x), l.vector, l.vector_width);
  const vec yv(y.size(), l.vector, l.vector_width);
  spk::spmv(spk::Mode::N, traits::scale_from(1.0), m, xv, traits::scale_from(0.0), yv);
  const std::vector<V> got = spk_test::to_vector(yv.to_view());
  std::vector<double> bound;
  spk::reference::compound_spmv(traits::scale_from(1.0), a, x, traits::scale_from(0.0), y, &bound);
  const double eps = std::is_same<real, float>::value ? 5.96e-8 : 1.11e-16;
  const double tol = 4.0 * traits::matrix_components * eps;
  int bad = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const real* g = reinterpret_cast<const real*>(&got[i]);
    const real* r = reinterpret_cast<const real*>(&y[i]);
    for (int c = 0; c < traits::vector_components; ++c)
      if (!(std::abs(double(g[c]) - double(r[c])) <= tol * (1.0 + bound[i]))) ++bad;
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("tuning file: JSON round trip, replacement and merge") {
  const std::string path = "test_tuning_roundtrip.json";
  std::remove(path.c_str());
  TuningFile f;
  // a name with quotes, a backslash, a tab, a newline and UTF-8
  const TuningRecord a =
      make_record("GPU \"A\"\\ \t\nK\xc3\xa9", "quaternion64", "r4^10-len8-regular",
                  "sell32-soa-aos", "dynamic-t128-b8-r128", 1.25, 2.5);
  const TuningRecord b =
      make_record("NVIDIA H100 80GB HBM3", "complex128", "mine", "ell-aosoa8-aosoa4",
                  "static-t96-b3-r96", 0.1, 0.30000000000000004);
  f.set(a);
  f.set(b);
  REQUIRE(f.records().size() == 2);
  f.save(path);
  CHECK_FALSE(file_exists(path + ".tmp"));
  const TuningFile g = TuningFile::load(path);
  REQUIRE(g.records().size() == 2);
  CHECK(same_record(g.records()[0], a));
  CHECK(same_record(g.records()[1], b));
  REQUIRE(g.find(a.gpu, a.entry, a.matrix_class) != nullptr);
  CHECK(same_record(*g.find(a.gpu, a.entry, a.matrix_class), a));
  CHECK(g.find(a.gpu, "quaternion32", a.matrix_class) == nullptr);
  CHECK(g.find(a.gpu, a.entry, "other") == nullptr);
  CHECK(g.find("other", a.entry, a.matrix_class) == nullptr);

  // set() replaces the record of the same key in place
  TuningFile h = g;
  TuningRecord a2 = a;
  a2.layout = spk::parse_layout("csr-aos-soa");
  a2.time_ms = 2.0;
  h.set(a2);
  REQUIRE(h.records().size() == 2);
  CHECK(same_record(h.records()[0], a2));

  // merge into the saved file: one replaced, one added, one kept
  TuningFile more;
  const TuningRecord c = make_record("OpenMP x2", "block3_64", "r4^3-len16-irregular",
                                     "sell16-aosoa32-aosoa2", "static-t1-b4-r64", 3, 3);
  more.set(c);
  more.set(a2);
  TuningFile merged = TuningFile::load(path);
  merged.merge(more);
  merged.save(path);
  const TuningFile back = TuningFile::load(path);
  REQUIRE(back.records().size() == 3);
  CHECK(same_record(back.records()[0], a2));
  CHECK(same_record(back.records()[1], b));
  CHECK(same_record(back.records()[2], c));
  CHECK_FALSE(file_exists(path + ".tmp"));

  // an empty file object round-trips; unknown keys, nested values and \u escapes are read
  CHECK(TuningFile::parse(TuningFile().to_json(), "empty").records().empty());
  const TuningFile extra = TuningFile::parse(
      "{\"comment\": {\"a\": [1, -2.5e3, true, false, null, {}], \"b\": \"x\"},\n"
      " \"spk_tuning\": 1, \"records\": [{\"gpu\": \"G\\u00e9\\ud83d\\ude00\\/\", \"entry\": "
      "\"complex64\", \"class\": \"c\", \"note\": [[]], \"layout\": \"csr-aos-aos\",\n"
      " \"schedule\": \"static-t1-b4-r64\"}], \"tool\": \"spk-tune\"}\n",
      "extra.json");
  REQUIRE(extra.records().size() == 1);
  CHECK(extra.records()[0].gpu == "G\xc3\xa9\xf0\x9f\x98\x80/");
  CHECK(extra.records()[0].time_ms == 0);
  std::remove(path.c_str());
}

TEST_CASE("tuning file: a missing file is empty; the default path follows SPK_TUNING_FILE") {
  CHECK(TuningFile::load("no/such/directory/spk-tuning.json").records().empty());
  // the test runs without SPK_TUNING_FILE unless a user set it; both cases are checked
  const char* env = std::getenv("SPK_TUNING_FILE");
  CHECK(spk::default_tuning_path() ==
        (env && *env ? std::string(env) : std::string("spk-tuning.json")));
}

TEST_CASE("tuning file: malformed files throw naming file, line and what was expected") {
  struct Bad {
    const char* text;
    const char* message;
  };
  const std::string ok_record =
      "{\"gpu\": \"g\", \"entry\": \"complex64\", \"class\": \"c\", \"layout\": "
      "\"csr-aos-aos\", \"schedule\": \"static-t1-b4-r64\"}";
  const std::vector<Bad> bad = {
      {"", "bad.json:1: expected '{' opening the tuning file, found end of file"},
      {"{\"spk_tuning\": 1,\n \"records\": [\n {\"gpu\": 5}]}",
       "bad.json:3: expected a string for \"gpu\", found '5'"},
      {"{\"spk_tuning\": 1, \"records\": [", "bad.json:1: expected '{' opening a record"},
      {"{\"spk_tuning\": 1,\n\"records\": []\n\"x\": 1}",
       "bad.json:3: expected ',' or '}' after a top-level value, found '\"'"},
      {"{\"spk_tuning\": 2, \"records\": []}", "bad.json:1: spk_tuning version is not 1"},
      {"{\"records\": []}\n", "expected \"spk_tuning\": 1"},
      {"{\"spk_tuning\": 1}", "expected \"records\""},
      {"{\"spk_tuning\": 1, \"records\": []}\n\n}", "bad.json:3: expected the end of the file"},
      {"{\"spk_tuning\": 1, \"records\": [{\"gpu\": \"g\n\"}]}",
       "bad.json:1: expected '\"' before the end of the line"},
      {"{\"spk_tuning\": 1, \"records\": [{\"gpu\": \"\\q\"}]}", "bad.json:1: expected an escape"},
      {"{\"spk_tuning\": 1, \"records\": [{\"gpu\": \"\\u12\"}]}", "four hex digits"},
      {"{\"spk_tuning\": 1, \"records\": [{\"time_ms\": -}]}",
       "bad.json:1: expected a number for \"time_ms\""},
      {"{\"spk_tuning\": 1, \"records\": [{\"x\": nope}]}", "bad.json:1: expected a value"},
      {"{\"spk_tuning\": 1, \"records\": [\n{\"gpu\": \"g\", \"entry\": \"complex64\",\n"
       "\"class\": \"c\",\n \"schedule\": \"static-t1-b4-r64\"}]}",
       "bad.json:2: expected \"layout\" in the record starting here"},
      {"{\"spk_tuning\": 1, \"records\": [\n\n{\"gpu\": \"g\", \"entry\": \"complex64\", "
       "\"class\": \"c\", \"layout\": \"csr-aos-aosoa3\", \"schedule\": \"static-t1-b4-r64\"}]}",
       "bad.json:3: expected a layout"},
      {"{\"spk_tuning\": 1, \"records\": [{\"gpu\": \"g\", \"entry\": \"complex64\", "
       "\"class\": \"c\", \"layout\": \"csr-aos-aos\", \"schedule\": \"guided\"}]}",
       "bad.json:1: expected a schedule"},
  };
  for (const auto& b : bad) {
    INFO("text: " << b.text);
    CHECK_THROWS_WITH_AS(TuningFile::parse(b.text, "bad.json"), doctest::Contains(b.message),
                         std::runtime_error);
  }
  // through load(), the path names the file
  const std::string path = "test_tuning_malformed.json";
  write_file(path, "{\"spk_tuning\": 1, \"records\": [\n" + ok_record + ",\n" + ok_record + "\n");
  CHECK_THROWS_WITH_AS(TuningFile::load(path),
                       doctest::Contains((path + ":4: expected ',' or ']' after a record").c_str()),
                       std::runtime_error);
  std::remove(path.c_str());
}

TEST_CASE("matrix classes: row_class buckets") {
  CHECK(spk::row_class(0, 0, 0) == "r4^0-len0-regular");
  CHECK(spk::row_class(3, 0.5, 0.2) == "r4^0-len0-regular");
  CHECK(spk::row_class(4, 1, 0) == "r4^1-len1-regular");
  CHECK(spk::row_class(15, 1.99, 0.5) == "r4^1-len1-regular");
  CHECK(spk::row_class(16, 2, 0.51) == "r4^2-len2-irregular");
  CHECK(spk::row_class(1 << 20, 8, 0.1) == "r4^10-len8-regular");
  CHECK(spk::row_class((1 << 20) - 1, 15.9, 0.1) == "r4^9-len8-regular");
  CHECK(spk::row_class(std::int64_t(1) << 40, 1000, 3) == "r4^20-len512-irregular");
}

TEST_CASE_TEMPLATE_DEFINE("matrix classes: matrix_class on hand-made matrices", Device,
                          matrix_classes) {
  using E = Kokkos::complex<double>;
  // 16 rows of 4: mean 4, cv 0
  CHECK(spk::matrix_class(rows_matrix<E, Device>(std::vector<int>(16, 4), 20)) ==
        "r4^2-len4-regular");
  // 15 rows of 4: one power of 4 fewer
  CHECK(spk::matrix_class(rows_matrix<E, Device>(std::vector<int>(15, 4), 20)) ==
        "r4^1-len4-regular");
  // 64 rows alternating 1 and 15: mean 8, standard deviation 7, cv 0.875
  std::vector<int> alt;
  for (int i = 0; i < 64; ++i) alt.push_back(i % 2 ? 15 : 1);
  CHECK(spk::matrix_class(rows_matrix<spk::Quaternion<float>, Device>(alt, 64)) ==
        "r4^3-len8-irregular");
  // 64 rows alternating 6 and 10: mean 8, cv 0.25
  std::vector<int> mild;
  for (int i = 0; i < 64; ++i) mild.push_back(i % 2 ? 10 : 6);
  CHECK(spk::matrix_class(rows_matrix<spk::Block<double, 3>, Device>(mild, 64)) ==
        "r4^3-len8-regular");
  // 64 rows alternating 4 and 12: mean 8, cv exactly 0.5 is regular
  std::vector<int> edge;
  for (int i = 0; i < 64; ++i) edge.push_back(i % 2 ? 12 : 4);
  CHECK(spk::matrix_class(rows_matrix<E, Device>(edge, 64)) == "r4^3-len8-regular");
  // empty matrices
  CHECK(spk::matrix_class(rows_matrix<E, Device>({}, 0)) == "r4^0-len0-regular");
  CHECK(spk::matrix_class(rows_matrix<E, Device>(std::vector<int>(5, 0), 3)) ==
        "r4^1-len0-regular");
}
TEST_CASE_TEMPLATE_APPLY(matrix_classes, spk_test::all_devices);

TEST_CASE(
    "select_candidate: the geometric-mean best among candidates never slower than the "
    "default") {
  // candidate 1 is fastest on average but slower than the default on matrix 2
  const std::vector<std::vector<double>> slower_once = {
      {1.0, 1.0, 1.0}, {0.1, 0.1, 1.01}, {0.9, 0.95, 1.0}, {2.0, 0.5, 0.5}};
  CHECK(spk::select_candidate(slower_once, 0) == 2);
  // everything else is slower on one matrix: the default wins
  const std::vector<std::vector<double>> default_wins = {
      {1.0, 2.0}, {0.5, 2.5}, {1.5, 1.0}, {inf, 0.1}, {std::nan(""), 0.1}};
  CHECK(spk::select_candidate(default_wins, 0) == 0);
  // the default need not be index 0
  CHECK(spk::select_candidate({{0.5, 2.5}, {1.0, 2.0}, {1.5, 1.0}}, 1) == 1);
  // geometric, not arithmetic mean: ratios (0.5, 1.0) beat (0.75, 0.75) (equal arithmetic means)
  CHECK(spk::select_candidate({{2.0, 4.0}, {1.0, 4.0}, {1.5, 3.0}}, 0) == 1);
  // the arithmetic mean would pick 2 (0.4 < 0.505), the geometric mean picks 1 (0.1 < 0.4)
  CHECK(spk::select_candidate({{1.0, 1.0}, {0.01, 1.0}, {0.4, 0.4}}, 0) == 1);
  CHECK(spk::select_candidate({{1.0, 1.0}, {0.9, 0.9}, {0.1, 1.0}}, 0) == 2);
  // ties: the default against an equal candidate; then the lower index (ratios (0.5, 1) and
  // (1, 0.5) have the same geometric mean)
  CHECK(spk::select_candidate({{1.0, 2.0}, {1.0, 2.0}}, 0) == 0);
  CHECK(spk::select_candidate({{1.0, 2.0}, {0.5, 2.0}, {1.0, 1.0}, {0.5, 2.0}}, 0) == 1);
  // a single candidate, no matrices
  CHECK(spk::select_candidate({{3.0}}, 0) == 0);
  CHECK(spk::select_candidate({{}, {}}, 1) == 1);
  // zero default times: only equal zero times are admissible there, and count as ratio 1
  CHECK(spk::select_candidate({{0.0, 1.0}, {0.0, 0.5}, {0.1, 0.1}}, 0) == 1);
  // errors
  CHECK_THROWS_WITH_AS(spk::select_candidate({{1.0}}, 1), doctest::Contains("default index 1"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(spk::select_candidate({{1.0, 2.0}, {1.0}}, 0),
                       doctest::Contains("candidate 1 has 1 times"), std::invalid_argument);
}

TEST_CASE("schedule_grid: the paper's grid within the device limits") {
  spk::ScheduleLimits h100;
  h100.gpu = true;
  h100.max_threads_per_team = 1024;
  h100.max_threads_per_sm = 2048;
  h100.max_teams_per_sm = 32;
  const std::set<int> ts = {32, 64, 96, 128, 192, 256, 384, 512, 768, 1024};
  const std::set<int> bs = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32};
  const auto all = spk::schedule_grid(h100, false);
  CHECK(all.size() == 120);  // 60 (n_t, n_b) pairs x static/dynamic
  int dynamic = 0;
  bool has_default = false;
  for (const auto& s : all) {
    INFO(spk::to_string(s));
    CHECK(ts.count(s.threads_per_team) == 1);
    CHECK(bs.count(s.teams_per_sm) == 1);
    CHECK(s.threads_per_team * s.teams_per_sm <= 2048);
    CHECK(s.rows_per_chunk == 0);
    dynamic += s.kind == spk::ScheduleKind::dynamic_chunks;
    has_default = has_default || (s.kind == spk::ScheduleKind::static_chunks &&
                                  s.threads_per_team == 128 && s.teams_per_sm == 8);
  }
  CHECK(dynamic == 60);
  CHECK(has_default);
  // a kernel limited to 256 threads, a device with 1536 threads and 16 teams per SM
  spk::ScheduleLimits small = h100;
  small.max_threads_per_team = 256;
  small.max_threads_per_sm = 1536;
  small.max_teams_per_sm = 16;
  for (const auto& s : spk::schedule_grid(small, false)) {
    INFO(spk::to_string(s));
    CHECK(s.threads_per_team <= 256);
    CHECK(s.teams_per_sm <= 16);
    CHECK(s.threads_per_team * s.teams_per_sm <= 1536);
  }
  // product only: one n_t per product, the one nearest 128
  const auto prod = spk::schedule_grid(h100, true);
  std::set<int> products;
  for (const auto& s : prod)
    if (s.kind == spk::ScheduleKind::static_chunks) {
      INFO(spk::to_string(s));
      CHECK(products.insert(s.threads_per_team * s.teams_per_sm).second);
      CHECK(s.threads_per_team * s.teams_per_sm <= 2048);
      if (s.threads_per_team * s.teams_per_sm == 1024) CHECK(s.threads_per_team == 128);
      if (s.threads_per_team * s.teams_per_sm == 32) CHECK(s.threads_per_team == 32);
      if (s.threads_per_team * s.teams_per_sm == 96) CHECK(s.threads_per_team == 96);
    }
  CHECK(prod.size() == 2 * products.size());
  CHECK(products.size() < all.size() / 2);
  // host spaces: one thread per team, 1-8 teams per thread
  const auto host = spk::schedule_grid(spk::ScheduleLimits{}, false);
  REQUIRE(host.size() == 8);
  for (const auto& s : host) {
    CHECK(s.threads_per_team == 1);
    CHECK(
        (s.teams_per_sm == 1 || s.teams_per_sm == 2 || s.teams_per_sm == 4 || s.teams_per_sm == 8));
  }
  CHECK(spk::schedule_grid(spk::ScheduleLimits{}, true).size() == 8);
}

TEST_CASE_TEMPLATE_DEFINE("schedule_candidates: resolved, default first, within the limits", Device,
                          candidates) {
  using E = spk::Quaternion<double>;
  using exec = typename Device::execution_space;
  const CompoundSchedule def = spk::resolve_schedule<exec>(CompoundSchedule{});
  for (const char* layout : {"csr-aos-aos", "sell32-soa-aosoa4"}) {
    const CompoundLayout l = spk::parse_layout(layout);
    const spk::ScheduleLimits lim = spk::schedule_limits<E, Device>(l);
    CHECK(lim.gpu == spk::impl::is_gpu_space<exec>());
    using S = spk::TuneOptions::Schedules;
    for (S mode : {S::joint, S::separate, S::product, S::none}) {
      const auto c = spk::schedule_candidates<E, Device>(l, mode);
      REQUIRE(!c.empty());
      CHECK(c[0] == def);
      if (mode == S::none) CHECK(c.size() == 1);
      for (std::size_t i = 0; i < c.size(); ++i) {
        INFO(spk::to_string(c[i]));
        CHECK(c[i].threads_per_team <= lim.max_threads_per_team);
        CHECK(c[i].rows_per_chunk > 0);
        if (lim.gpu) CHECK(c[i].threads_per_team * c[i].teams_per_sm <= lim.max_threads_per_sm);
        for (std::size_t j = 0; j < i; ++j) CHECK_FALSE(c[i] == c[j]);
      }
    }
  }
}
TEST_CASE_TEMPLATE_APPLY(candidates, spk_test::all_devices);

TEST_CASE("layout lists: all and parsed lists") {
  const auto all = spk::all_compound_layouts();
  CHECK(all.size() == 120);
  CHECK(all[0] == CompoundLayout{});
  for (std::size_t i = 0; i < all.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) CHECK_FALSE(all[i] == all[j]);
  CHECK(spk::parse_layout_list("all").size() == 120);
  const auto two = spk::parse_layout_list("csr-aos-aos,sell16-aosoa8-soa");
  REQUIRE(two.size() == 2);
  CHECK(two[1] == spk::parse_layout("sell16-aosoa8-soa"));
  CHECK_THROWS_AS(spk::parse_layout_list("csr-aos-aos,nope"), std::invalid_argument);
  CHECK_THROWS_AS(spk::parse_layout_list(","), std::invalid_argument);
}

TEST_CASE_TEMPLATE_DEFINE("tune: a complete table and an admissible choice", Device, tune) {
  using E = Kokkos::complex<float>;
  std::vector<int> l1, l2;
  for (int i = 0; i < 70; ++i) l1.push_back(1 + i % 5);
  for (int i = 0; i < 40; ++i) l2.push_back(3);
  const std::vector<spk::CsrMatrix<E, int, int, Device>> ms = {rows_matrix<E, Device>(l1, 70),
                                                               rows_matrix<E, Device>(l2, 50)};
  using S = spk::TuneOptions::Schedules;
  for (S mode : {S::none, S::separate, S::product, S::joint}) {
    spk::TuneOptions o;
    o.layouts = spk::parse_layout_list("sell32-soa-aos,ell-aosoa4-soa,csr-aos-aos");
    o.schedules = mode;
    o.warmup = 0;
    o.repeat = 1;
    std::size_t calls = 0, last_done = 0, last_total = 0;
    o.progress = [&](std::size_t done, std::size_t total, const std::string&) {
      CHECK(done <= total);
      CHECK(done >= last_done);
      ++calls;
      last_done = done;
      last_total = total;
    };
    const spk::TuneResult r = spk::tune(ms, o);
    INFO("mode " << int(mode));
    CHECK(r.entry == "complex64");
    CHECK(r.gpu == spk::impl::device_name<typename Device::execution_space>());
    REQUIRE(r.layouts.size() == 3);
    CHECK(r.layouts[0] == CompoundLayout{});  // the default moves to the front
    REQUIRE(!r.candidates.empty());
    CHECK(r.default_index == 0);
    CHECK(r.candidates[0].layout == CompoundLayout{});
    CHECK(r.candidates[0].schedule ==
          spk::resolve_schedule<typename Device::execution_space>(CompoundSchedule{}));
    REQUIRE(r.times_ms.size() == r.candidates.size());
    REQUIRE(r.skipped.size() == r.candidates.size());
    for (std::size_t c = 0; c < r.candidates.size(); ++c) {
      REQUIRE(r.times_ms[c].size() == 2);
      for (std::size_t m = 0; m < 2; ++m) {
        CHECK(std::isfinite(r.times_ms[c][m]));
        CHECK(r.min_ms[c][m] <= r.times_ms[c][m]);
        CHECK(r.times_ms[c][m] <= r.max_ms[c][m]);
        CHECK(r.skipped[c][m].empty());
      }
    }
    for (std::size_t l = 0; l < 3; ++l)
      for (std::size_t m = 0; m < 2; ++m) CHECK(r.memory_bytes[l][m] > 0);
    CHECK(r.memory_bytes[0][0] == spk::CompoundMatrix<E, Device>(ms[0]).memory_bytes());
    if (mode == S::none) CHECK(r.candidates.size() == 3);
    REQUIRE(r.chosen < r.candidates.size());
    for (std::size_t m = 0; m < 2; ++m) CHECK(r.times_ms[r.chosen][m] <= r.times_ms[0][m]);
    CHECK(r.chosen == spk::select_candidate(r.times_ms, 0));
    CHECK(calls >= 2);
    CHECK(last_done == r.candidates.size() * 2);
    CHECK(last_total == last_done);
    const TuningRecord rec = r.record("cls");
    CHECK(rec.layout == r.candidates[r.chosen].layout);
    CHECK(rec.schedule == r.candidates[r.chosen].schedule);
    CHECK(rec.time_ms <= rec.default_ms);
    CHECK(rec.default_ms == r.times_ms[0][0] + r.times_ms[0][1]);
  }
  // a layout refused by the padding limit is recorded as skipped and never chosen
  std::vector<int> arrow(3000, 1);
  arrow[7] = 3000;
  spk::TuneOptions o;
  o.layouts = spk::parse_layout_list("ell-aos-aos,csr-soa-soa");
  o.schedules = S::none;
  o.warmup = 0;
  o.repeat = 1;
  const auto r = spk::tune(
      std::vector<spk::CsrMatrix<E, int, int, Device>>{ms[1], rows_matrix<E, Device>(arrow, 3000)},
      o);
  const std::size_t ell = r.layout_index(spk::parse_layout("ell-aos-aos"));
  REQUIRE(ell == 1);
  CHECK(r.memory_bytes[ell][0] > 0);
  CHECK(r.memory_bytes[ell][1] == 0);
  CHECK(r.skipped[1][0].empty());
  CHECK(r.skipped[1][1].find("padding limit") != std::string::npos);
  CHECK(std::isinf(r.times_ms[1][1]));
  CHECK(r.chosen != 1);
  // bad options
  o.repeat = 0;
  CHECK_THROWS_WITH_AS(spk::tune(ms, o), doctest::Contains("repeat 0"), std::invalid_argument);
  o.repeat = 1;
  CHECK_THROWS_WITH_AS(spk::tune(std::vector<spk::CsrMatrix<E, int, int, Device>>{}, o),
                       doctest::Contains("no matrices"), std::invalid_argument);
}
TEST_CASE_TEMPLATE_APPLY(tune, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("make_tuned: uses the record for this device, else the default", Device,
                          make_tuned) {
  using E = spk::Quaternion<double>;
  using exec = typename Device::execution_space;
  constexpr bool gpu = spk::impl::is_gpu_space<exec>();
  std::vector<int> lengths;
  for (int i = 0; i < 90; ++i) lengths.push_back(i % 9);
  const auto a = rows_matrix<E, Device>(lengths, 80, 3);
  const std::string cls = spk::matrix_class(a);
  CHECK(cls == "r4^3-len4-irregular");  // 90 rows, mean 4, cv 0.65
  const std::string gpu_name = spk::impl::device_name<exec>();
  CompoundSchedule s;
  s.kind = spk::ScheduleKind::dynamic_chunks;
  s.threads_per_team = gpu ? 64 : 1;
  s.teams_per_sm = 2;
  s.rows_per_chunk = 7;
  TuningFile f;
  TuningRecord r;
  r.gpu = gpu_name;
  r.entry = "quaternion64";
  r.matrix_class = cls;
  r.layout = spk::parse_layout("sell16-aosoa8-soa");
  r.schedule = s;
  f.set(r);
  TuningRecord named = r;
  named.matrix_class = "my class";
  named.layout = spk::parse_layout("ell-soa-aosoa4");
  named.schedule.kind = spk::ScheduleKind::static_chunks;
  f.set(named);
  // through a file, as a later run would see it
  const std::string path = "test_tuning_make_tuned.json";
  f.save(path);
  const TuningFile g = TuningFile::load(path);
  std::remove(path.c_str());

  REQUIRE(spk::tuned_record(a, g) != nullptr);
  CHECK(spk::tuned_record(a, g)->layout == r.layout);
  const auto m = spk::make_tuned(a, g);
  CHECK(m.layout() == r.layout);
  CHECK(m.schedule() == r.schedule);
  check_against_reference(a, m);

  const auto mn = spk::make_tuned(a, g, "my class");
  CHECK(mn.layout() == named.layout);
  CHECK(mn.schedule() == named.schedule);
  check_against_reference(a, mn);

  // no record: another class, another entry type, another device, an empty file
  CHECK(spk::tuned_record(a, g, "other class") == nullptr);
  const auto d = spk::make_tuned(a, g, "other class");
  CHECK(d.layout() == CompoundLayout{});
  CHECK(d.schedule() == CompoundSchedule{});
  check_against_reference(a, d);
  const auto af = rows_matrix<spk::Quaternion<float>, Device>(lengths, 80, 3);
  CHECK(spk::tuned_record(af, g) == nullptr);
  CHECK(spk::make_tuned(af, g).layout() == CompoundLayout{});
  TuningFile other;
  TuningRecord elsewhere = r;
  elsewhere.gpu = gpu_name + " (another)";
  other.set(elsewhere);
  CHECK(spk::tuned_record(a, other) == nullptr);
  CHECK(spk::make_tuned(a, other).layout() == CompoundLayout{});
  CHECK(spk::make_tuned(a, TuningFile()).schedule() == CompoundSchedule{});

  // a recorded layout this matrix cannot take within the padding limit falls back to the default
  std::vector<int> arrow(3000, 1);
  arrow[0] = 3000;
  const auto big = rows_matrix<E, Device>(arrow, 3000);
  TuningRecord ell = r;
  ell.matrix_class = "arrow";
  ell.layout = spk::parse_layout("ell-aos-aos");
  TuningFile fe;
  fe.set(ell);
  REQUIRE(spk::tuned_record(big, fe, "arrow") != nullptr);
  const auto fallback = spk::make_tuned(big, fe, "arrow");
  CHECK(fallback.layout() == CompoundLayout{});
  CHECK(fallback.schedule() == CompoundSchedule{});
}
TEST_CASE_TEMPLATE_APPLY(make_tuned, spk_test::all_devices);
