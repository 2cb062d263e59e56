// spk-tune: the autotuner of compound matrices (spk/compound/tuning.hpp) on the command line.
// Times layouts and schedules of the compound SpMV on a set of matrices grouped by class, stores
// the best per (device, entry type, class) in a tuning file that spk::make_tuned reads, and
// prints per class and matrix the speedup and memory of every layout over the default
// CSR-AoS-AoS. Progress goes to stderr, the tables to stdout.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <spk/compound/compound_matrix.hpp>
#include <spk/compound/tuning.hpp>

#include "bench_util.hpp"
#include "compound_cases.hpp"
#include "tune_formats.hpp"

namespace {

const char* const usage = R"(usage: spk-tune --scalar TYPE CASES... [options]
       spk-tune --formats CASES... [options]   (format selection: spk-tune --formats --help)
Tunes the layout and schedule of the compound SpMV per (device, entry type, matrix class) and
merges the choice into a tuning file that spk::make_tuned (and so spmv) reads.
  --scalar TYPE          complex64 | complex128 | quaternion32 | quaternion64 |
                         block{2,3,4,6}_{32,64} (default complex128)
cases (each repeatable):
  --matrix FILE.mtx      a complex Matrix Market file (complex TYPE)
  --dir DIR              every .mtx file in DIR
  --gen SPEC             stencil3d:N (any TYPE) or helmholtz:N (complex TYPE)
  --mesh FILE[:L]        quaternion: Dirac operator of a triangle mesh; block3: elasticity of a
                         tetrahedral mesh; refined L times
  --cases FILE           one case per line (FILE.mtx, mesh:FILE[:L], stencil3d:N, ...; # comments)
options:
  --class NAME           tune all matrices as one class NAME (default: spk::matrix_class of each
                         matrix, e.g. r4^10-len8-regular; matrices are grouped by class)
  --out FILE             tuning file to merge into (default $SPK_TUNING_FILE, else
                         spk-tuning.json)
  --layouts LIST|all     outer-inner-vector layouts, comma-separated (default all 120: csr, ell,
                         sell16, sell32 x aos, soa, aosoa2/4/8/32 x aos, soa, aosoa2/4/8);
                         csr-aos-aos is always timed
  --schedules MODE       joint (every layout x every schedule), separate (layouts with the
                         default schedule, then every schedule for the best 3; default), product
                         (as separate, one n_t per n_t * n_b), none (default schedule only)
  --warmup N --repeat N  untimed / timed products per candidate and matrix (default 3 / 20;
                         the median counts)
  --json FILE            every timing as JSON (spk-bench shape, format "compound", variant
                         "<layout>/<schedule>")
  --apply                no tuning: build each matrix with spk::make_tuned from the tuning file,
                         run one SpMV and print the layout and schedule it used
Exit status: 0 success, 1 error, 2 bad usage.
)";

struct Options {
  std::string scalar = "complex128";
  std::vector<std::string> cases;
  std::string cls;
  std::string out = spk::default_tuning_path();
  std::vector<spk::CompoundLayout> layouts;  // empty: all
  spk::TuneOptions::Schedules schedules = spk::TuneOptions::Schedules::separate;
  int warmup = 3, repeat = 20;
  std::string json, command;
  bool apply = false;
};

[[noreturn]] void usage_error(const std::string& what) {
  std::cerr << "spk-tune: " << what << "\n" << usage;
  std::exit(2);
}

std::vector<std::string> mtx_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".mtx") out.push_back(e.path().string());
  if (ec) usage_error("cannot list --dir '" + dir + "': " + ec.message());
  if (out.empty()) usage_error("no .mtx file in --dir '" + dir + "'");
  std::sort(out.begin(), out.end());
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  o.command = spk_bench::command_line(argc, argv);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error("missing value after " + a);
      return argv[++i];
    };
    const auto count = [&](const std::string& v, int min) {
      try {
        std::size_t pos = 0;
        const int n = std::stoi(v, &pos);
        if (pos == v.size() && n >= min) return n;
      } catch (const std::exception&) {
      }
      usage_error("bad count '" + v + "' after " + a);
    };
    if (a == "--help" || a == "-h") {
      std::cout << usage;
      std::exit(0);
    } else if (a.rfind("--kokkos-", 0) == 0) {
      continue;  // Kokkos' own options
    } else if (a == "--scalar") {
      o.scalar = value();
    } else if (a == "--matrix" || a == "--gen") {
      o.cases.push_back(value());
    } else if (a == "--dir") {
      for (const auto& f : mtx_files(value())) o.cases.push_back(f);
    } else if (a == "--mesh") {
      o.cases.push_back("mesh:" + value());
    } else if (a == "--cases") {
      try {
        for (auto& c : spk_bench::read_cases(value())) o.cases.push_back(c);
      } catch (const std::exception& e) {
        usage_error(e.what());
      }
    } else if (a == "--class") {
      o.cls = value();
      if (o.cls.empty()) usage_error("empty --class");
    } else if (a == "--out") {
      o.out = value();
    } else if (a == "--layouts") {
      const std::string v = value();
      try {
        o.layouts = v == "all" ? std::vector<spk::CompoundLayout>{} : spk::parse_layout_list(v);
      } catch (const std::exception& e) {
        usage_error(e.what());
      }
    } else if (a == "--schedules") {
      const std::string v = value();
      using S = spk::TuneOptions::Schedules;
      if (v == "joint") {
        o.schedules = S::joint;
      } else if (v == "separate") {
        o.schedules = S::separate;
      } else if (v == "product") {
        o.schedules = S::product;
      } else if (v == "none") {
        o.schedules = S::none;
      } else {
        usage_error("unknown --schedules '" + v + "' (joint, separate, product or none)");
      }
    } else if (a == "--warmup") {
      o.warmup = count(value(), 0);
    } else if (a == "--repeat") {
      o.repeat = count(value(), 1);
    } else if (a == "--json") {
      o.json = value();
    } else if (a == "--apply") {
      o.apply = true;
    } else {
      usage_error("unknown option '" + a + "'");
    }
  }
  if (!spk_bench::is_compound_scalar(o.scalar)) usage_error("unknown --scalar '" + o.scalar + "'");
  if (o.cases.empty()) usage_error("no case (--matrix, --dir, --gen, --mesh or --cases)");
  return o;
}

/// One line on stderr, redrawn with \r: bar, percent, pairs, ETA and what was timed last.
class ProgressBar {
 public:
  explicit ProgressBar(std::string label) : label_(std::move(label)) {}
  void operator()(std::size_t done, std::size_t total, const std::string& what) {
    const auto now = std::chrono::steady_clock::now();
    if (done < total && done > 0 && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    const double f = total ? double(done) / double(total) : 1.0;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const int width = 24, filled = int(f * width + 0.5);
    std::string eta = "--:--";
    if (done > 0 && done < total) {
      const long s = long(elapsed / double(done) * double(total - done) + 0.5);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
      eta = buf;
    } else if (done >= total) {
      eta = "0:00";
    }
    char line[512];
    std::snprintf(line, sizeof line, "\r%s [%s%s] %3d%% %zu/%zu ETA %s  %-48.48s", label_.c_str(),
                  std::string(std::size_t(filled), '#').c_str(),
                  std::string(std::size_t(width - filled), '.').c_str(), int(100 * f + 0.5), done,
                  total, eta.c_str(), what.c_str());
    std::cerr << line << std::flush;
  }
  void finish() { std::cerr << "\n"; }

 private:
  std::string label_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_{};
};

/// A loaded case.
template <class E, class Device>
struct Case {
  std::string text, name, cls;
  spk::CsrMatrix<E, int, int, Device> a;
};

template <class E, class Device>
std::vector<Case<E, Device>> load_cases(const Options& o) {
  std::vector<Case<E, Device>> out;
  for (const auto& text : o.cases) {
    std::cerr << "spk-tune: loading " << text << "\n";
    Case<E, Device> c{text, spk_bench::compound_case_name(text), "",
                      spk_bench::load_compound_case<E, Device>(text)};
    c.cls = o.cls.empty() ? spk::matrix_class(c.a) : o.cls;
    out.push_back(std::move(c));
  }
  return out;
}

/// Matrices grouped by class, in the order classes first appear.
template <class E, class Device>
std::vector<std::pair<std::string, std::vector<std::size_t>>> group_by_class(
    const std::vector<Case<E, Device>>& cases) {
  std::vector<std::pair<std::string, std::vector<std::size_t>>> groups;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& g) { return g.first == cases[i].cls; });
    if (it == groups.end()) {
      groups.emplace_back(cases[i].cls, std::vector<std::size_t>{});
      it = groups.end() - 1;
    }
    it->second.push_back(i);
  }
  return groups;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// The summary of one class: per matrix the default time and per layout its speedup with the
/// default schedule and with its best schedule, its memory and its ratio to the default's.
template <class E, class Device>
void print_class(const std::string& cls, const std::vector<const Case<E, Device>*>& cases,
                 const spk::TuneResult& r) {
  const spk::TuningRecord rec = r.record(cls);
  const auto& def = r.candidates[r.default_index];
  std::printf("\nclass %s (%s, %s): %zu matrices, %zu layouts, %zu candidates\n", cls.c_str(),
              r.entry.c_str(), r.gpu.c_str(), cases.size(), r.layouts.size(), r.candidates.size());
  std::printf("chosen: %s / %s, %.3fx over the default %s / %s (%.4f ms vs %.4f ms summed)\n",
              spk::to_string(rec.layout).c_str(), spk::to_string(rec.schedule).c_str(),
              rec.time_ms > 0 ? rec.default_ms / rec.time_ms : 1.0,
              spk::to_string(def.layout).c_str(), spk::to_string(def.schedule).c_str(), rec.time_ms,
              rec.default_ms);
  for (std::size_t m = 0; m < cases.size(); ++m) {
    const auto& a = cases[m]->a;
    const double t0 = r.times_ms[r.default_index][m];
    const std::size_t bytes0 = r.memory_bytes[0][m];
    std::printf("\nmatrix %s: %d x %d, nnz %lld; default csr-aos-aos %.4f ms, %zu bytes\n",
                cases[m]->name.c_str(), a.nrows(), a.ncols(), (long long)a.nnz(), t0, bytes0);
    std::printf("  %-22s %9s %9s  %-24s %12s %7s\n", "layout", "speedup", "best", "best schedule",
                "bytes", "memory");
    struct Row {
      std::size_t layout = 0;
      double with_default = 0, best = 0;
      std::string best_schedule, skipped;
    };
    std::vector<Row> rows;
    for (std::size_t l = 0; l < r.layouts.size(); ++l) {
      Row row;
      row.layout = l;
      double best_t = std::numeric_limits<double>::infinity();
      for (std::size_t c = 0; c < r.candidates.size(); ++c) {
        if (!(r.candidates[c].layout == r.layouts[l])) continue;
        const double t = r.times_ms[c][m];
        if (r.candidates[c].schedule == def.schedule && std::isfinite(t)) row.with_default = t0 / t;
        if (!r.skipped[c][m].empty() && row.skipped.empty()) row.skipped = r.skipped[c][m];
        if (t < best_t) {
          best_t = t;
          row.best_schedule = spk::to_string(r.candidates[c].schedule);
        }
      }
      if (std::isfinite(best_t)) row.best = t0 / best_t;
      rows.push_back(row);
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Row& a, const Row& b) { return a.best > b.best; });
    for (const Row& row : rows) {
      const bool chosen = r.layouts[row.layout] == rec.layout;
      const std::size_t bytes = r.memory_bytes[row.layout][m];
      if (row.best == 0) {
        std::printf("  %-22s skipped: %.80s\n", spk::to_string(r.layouts[row.layout]).c_str(),
                    row.skipped.c_str());
        continue;
      }
      std::printf("%s %-22s %9s %9s  %-24s %12zu %7s\n", chosen ? "*" : " ",
                  spk::to_string(r.layouts[row.layout]).c_str(),
                  row.with_default > 0 ? fmt("%.3fx", row.with_default).c_str() : "-",
                  fmt("%.3fx", row.best).c_str(), row.best_schedule.c_str(), bytes,
                  bytes0 ? fmt("%.3f", double(bytes) / double(bytes0)).c_str() : "-");
    }
    const double tc = r.times_ms[r.chosen][m];
    std::printf("  chosen %s / %s: %.3fx on this matrix\n", spk::to_string(rec.layout).c_str(),
                spk::to_string(rec.schedule).c_str(), tc > 0 ? t0 / tc : 1.0);
  }
}

struct JsonRow {
  std::string matrix, cls, variant, skipped;
  long long rows = 0, cols = 0, nnz = 0;
  double median = 0, min = 0, max = 0;
  std::size_t bytes = 0;
  bool chosen = false, is_default = false;
};

void write_json(const Options& o, const std::vector<JsonRow>& rows) {
  using spk_bench::json_number;
  using spk_bench::json_string;
  std::ofstream out(o.json);
  if (!out) spk::throw_runtime_error("spk-tune", "cannot write '", o.json, "'");
  out << "{\"gpu\": " << json_string(spk_bench::device_name())
      << ", \"date\": " << json_string(spk_bench::utc_now())
      << ", \"commit\": " << json_string(spk_bench::commit_id())
      << ", \"command\": " << json_string(o.command) << ", \"results\": [";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const JsonRow& r = rows[i];
    out << (i ? ",\n  " : "\n  ") << "{\"matrix\": " << json_string(r.matrix)
        << ", \"rows\": " << r.rows << ", \"cols\": " << r.cols << ", \"nnz\": " << r.nnz
        << ", \"scalar\": " << json_string(o.scalar) << ", \"mode\": \"N\""
        << ", \"format\": \"compound\", \"variant\": " << json_string(r.variant)
        << ", \"class\": " << json_string(r.cls) << ", \"median_ms\": " << json_number(r.median)
        << ", \"min_ms\": " << json_number(r.min) << ", \"max_ms\": " << json_number(r.max)
        << ", \"memory_bytes\": " << r.bytes
        << ", \"default\": " << (r.is_default ? "true" : "false")
        << ", \"chosen\": " << (r.chosen ? "true" : "false")
        << ", \"skipped\": " << (r.skipped.empty() ? "null" : json_string(r.skipped)) << "}";
  }
  out << "\n]}\n";
}

template <class E, class Device>
int tune_all(const Options& o) {
  const auto cases = load_cases<E, Device>(o);
  const auto groups = group_by_class(cases);
  std::vector<JsonRow> json;
  std::size_t g = 0;
  for (const auto& group : groups) {
    ++g;
    std::vector<spk::CsrMatrix<E, int, int, Device>> matrices;
    std::vector<const Case<E, Device>*> members;
    for (std::size_t i : group.second) {
      matrices.push_back(cases[i].a);
      members.push_back(&cases[i]);
    }
    spk::TuneOptions t;
    t.layouts = std::vector<spk::CompoundLayout>(
        o.layouts);  // (copy-assignment: a GCC 12 -Wnonnull false positive)
    t.schedules = o.schedules;
    t.warmup = o.warmup;
    t.repeat = o.repeat;
    ProgressBar bar("class " + std::to_string(g) + "/" + std::to_string(groups.size()));
    t.progress = std::ref(bar);
    const spk::TuneResult r = spk::tune(matrices, t);
    bar.finish();
    // merged into the file as it is now (another run may have written it meanwhile)
    spk::TuningFile file = spk::TuningFile::load(o.out);
    file.set(r.record(group.first));
    file.save(o.out);
    print_class(group.first, members, r);
    std::printf("  -> %s\n", o.out.c_str());
    for (std::size_t c = 0; c < r.candidates.size(); ++c)
      for (std::size_t m = 0; m < members.size(); ++m) {
        JsonRow row;
        row.matrix = members[m]->name;
        row.cls = group.first;
        row.variant =
            spk::to_string(r.candidates[c].layout) + "/" + spk::to_string(r.candidates[c].schedule);
        row.skipped = r.skipped[c][m];
        row.rows = members[m]->a.nrows();
        row.cols = members[m]->a.ncols();
        row.nnz = members[m]->a.nnz();
        row.median = r.times_ms[c][m];
        row.min = r.min_ms[c][m];
        row.max = r.max_ms[c][m];
        row.bytes = r.memory_bytes[r.layout_index(r.candidates[c].layout)][m];
        row.chosen = c == r.chosen;
        row.is_default = c == r.default_index;
        json.push_back(row);
      }
  }
  if (!o.json.empty()) write_json(o, json);
  return 0;
}

/// --apply: make_tuned from the file, one SpMV, and the layout it used.
template <class E, class Device>
int apply_all(const Options& o) {
  using traits = spk::entry_traits<E>;
  using vec = spk::CompoundVector<E, Device>;
  const spk::TuningFile file = spk::TuningFile::load(o.out);
  for (const auto& c : load_cases<E, Device>(o)) {
    const spk::TuningRecord* rec = spk::tuned_record(c.a, file, o.cls);
    const auto m = spk::make_tuned(c.a, file, o.cls);
    const auto& l = m.layout();
    vec x(std::size_t(c.a.ncols()), l.vector, l.vector_width);
    vec y(std::size_t(c.a.nrows()), l.vector, l.vector_width);
    Kokkos::deep_copy(x.data(), typename traits::real_type(1));
    spk::spmv(spk::Mode::N, traits::scale_from(1.0), m, x, traits::scale_from(0.0), y);
    Kokkos::fence();
    if (rec && rec->layout == l) {
      std::printf("%s: class %s: using tuned %s / %s (%.3fx over the default when tuned)\n",
                  c.name.c_str(), c.cls.c_str(), spk::to_string(l).c_str(),
                  spk::to_string(m.schedule()).c_str(),
                  rec->time_ms > 0 ? rec->default_ms / rec->time_ms : 1.0);
    } else {
      std::printf("%s: class %s: %s, using the default %s\n", c.name.c_str(), c.cls.c_str(),
                  rec ? "tuned layout refused by the padding limit" : "no tuning record",
                  spk::to_string(l).c_str());
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // spk-tune --formats: automatic format selection of scalar matrices (tune_formats.hpp)
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--formats") return spk_tune_formats::main(argc, argv);
  const Options o = parse(argc, argv);
  int rc = 0;
  Kokkos::initialize(argc, argv);
  spk_bench::reset_device_cache_preference();
  try {
    using Device = Kokkos::DefaultExecutionSpace::device_type;
    rc = spk_bench::with_compound_scalar(o.scalar, [&](auto* tag) {
      using E = std::remove_pointer_t<decltype(tag)>;
      return o.apply ? apply_all<E, Device>(o) : tune_all<E, Device>(o);
    });
  } catch (const std::exception& e) {
    std::cerr << "\nspk-tune: " << e.what() << "\n";
    rc = 1;
  }
  Kokkos::finalize();
  return rc;
}
