// spk-tune --formats: automatic format selection on the command line (spk/select_format.hpp).
// For each matrix: the features, the feature-only choice and its time to choose, then every
// candidate converted and timed (the trial over all of them), the fastest stored in the tuning
// file per (GPU, scalar, fingerprint), and the feature choice's time against the best measured.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <spk/select_format.hpp>

#include "bench_cases.hpp"
#include "bench_util.hpp"

namespace spk_tune_formats {

inline const char* usage = R"(usage: spk-tune --formats CASES... [options]
Chooses a storage format per matrix with spk::select_format: the cost model's choice from the
matrix features, then a trial of every candidate; stores the fastest per (GPU, scalar, matrix
fingerprint) in the tuning file, where spk::select_format with SelectOptions::trial and that
file finds it without measuring again.
cases (each repeatable):
  --matrix FILE.mtx[*K]  Matrix Market file (K copies on the diagonal)
  --gen SPEC             generated matrix (see spk-bench --help)
  --cases FILE           one case per line (# comments)
options:
  --scalar TYPE          float | double | complex64 | complex128 (default double)
  --out FILE             tuning file to merge into (default $SPK_TUNING_FILE, else spk-tuning.json)
  --warmup N --repeat N  untimed / timed products per candidate (default 3 / 20; median counts)
  --json FILE            every candidate's time as JSON (spk-bench shape, format "tune-formats")
Exit status: 0 success, 1 error, 2 bad usage.
)";

struct Options {
  std::vector<std::string> cases;
  std::string scalar = "double";
  std::string out = spk::default_tuning_path();
  int warmup = 3, repeat = 20;
  std::string json, command;
};

[[noreturn]] inline void usage_error(const std::string& what) {
  std::cerr << "spk-tune: " << what << "\n" << usage;
  std::exit(2);
}

inline Options parse(int argc, char** argv) {
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
    if (a == "--formats" || a.rfind("--kokkos-", 0) == 0) {
      continue;
    } else if (a == "--help" || a == "-h") {
      std::cout << usage;
      std::exit(0);
    } else if (a == "--matrix" || a == "--gen") {
      o.cases.push_back(value());
    } else if (a == "--cases") {
      try {
        for (auto& c : spk_bench::read_cases(value())) o.cases.push_back(c);
      } catch (const std::exception& e) {
        usage_error(e.what());
      }
    } else if (a == "--scalar") {
      o.scalar = value();
    } else if (a == "--out") {
      o.out = value();
    } else if (a == "--warmup") {
      o.warmup = count(value(), 0);
    } else if (a == "--repeat") {
      o.repeat = count(value(), 1);
    } else if (a == "--json") {
      o.json = value();
    } else {
      usage_error("unknown option '" + a + "'");
    }
  }
  if (o.scalar != "float" && o.scalar != "double" && o.scalar != "complex64" &&
      o.scalar != "complex128")
    usage_error("unknown --scalar '" + o.scalar + "'");
  if (o.cases.empty()) usage_error("no case (--matrix, --gen or --cases)");
  return o;
}

struct Row {
  std::string matrix, config;
  long long rows, cols, nnz;
  double model_us, median_ms;
  std::size_t memory;
};

template <class S>
int run(const Options& o) {
  using Device = Kokkos::DefaultExecutionSpace::device_type;
  spk::TuningFile file = spk::TuningFile::load(o.out);
  std::vector<Row> rows;
  int rc = 0;
  for (const auto& c : o.cases) {
    try {
      const auto a = spk_bench::load_case<S, Device>(c);
      const std::string name = spk_bench::case_name(c);
      spk::SelectOptions so;
      const spk::FormatChoice features = spk::select_format(a, so);
      so.trial = true;
      so.trial_candidates = 1000;  // every candidate
      so.trial_warmup = o.warmup;
      so.trial_repeat = o.repeat;
      const spk::FormatChoice trial = spk::select_format(a, so);
      double feature_ms = -1, best_ms = -1;
      for (const auto& r : trial.ranked) {
        if (r.config.name() == features.config.name()) feature_ms = r.measured_ms;
        if (r.measured_ms >= 0 && (best_ms < 0 || r.measured_ms < best_ms)) best_ms = r.measured_ms;
      }
      const auto& f = features.features;
      std::printf("%s: %lld x %lld, nnz %lld; fingerprint %s\n", name.c_str(),
                  (long long)f.nrows, (long long)f.ncols, (long long)f.nnz,
                  f.fingerprint_string().c_str());
      std::printf("  features (%.3f ms): rows mean %.2f cv %.2f max %lld, empty %lld, diagonals "
                  "%lld, padding ell %.2f hack %.2f dia %.2f, block %.2f, distinct values "
                  "%lld of %lld, near %.3f, bandwidth %lld\n",
                  f.seconds * 1e3, f.row_mean, f.row_cv(), (long long)f.row_max,
                  (long long)f.empty_rows, (long long)f.diagonals, f.ell_padding, f.hack_padding,
                  f.dia_padding, f.block_fraction, (long long)f.distinct_values,
                  (long long)f.value_sample, f.near_fraction, (long long)f.bandwidth);
      std::printf("  %-16s %12s %12s %14s  %s\n", "candidate", "model_us", "measured_ms",
                  "memory_bytes", "note");
      for (const auto& r : trial.ranked) {
        std::printf("  %-16s %12.2f %12.4f %14.0f  %s\n", r.config.name().c_str(),
                    r.estimate.microseconds, r.measured_ms, r.estimate.memory_bytes,
                    r.note.c_str());
        if (r.measured_ms >= 0)
          rows.push_back({name, r.config.name(), f.nrows, f.ncols, f.nnz,
                          r.estimate.microseconds, r.measured_ms,
                          std::size_t(r.estimate.memory_bytes)});
      }
      std::printf("  feature choice %s: %.4f ms, chosen in %.3f ms; best measured %s: %.4f ms "
                  "(feature choice / best %.3f); trial of all took %.1f ms\n",
                  features.config.name().c_str(), feature_ms, features.seconds * 1e3,
                  trial.config.name().c_str(), best_ms,
                  best_ms > 0 ? feature_ms / best_ms : 0.0, trial.seconds * 1e3);
      file.set_format({spk::impl::device_name<Kokkos::DefaultExecutionSpace>(),
                       spk::scalar_traits<S>::name, f.fingerprint_string(), trial.config.name(),
                       best_ms, -1});
    } catch (const std::exception& e) {
      std::cerr << "spk-tune: error in case " << c << ": " << e.what() << "\n";
      rc = 1;
    }
  }
  file.save(o.out);
  std::printf("format records written to %s\n", o.out.c_str());
  if (!o.json.empty()) {
    std::ofstream out(o.json);
    out << "{\"gpu\": " << spk_bench::json_string(spk_bench::device_name())
        << ", \"date\": " << spk_bench::json_string(spk_bench::utc_now())
        << ", \"commit\": " << spk_bench::json_string(spk_bench::commit_id())
        << ", \"command\": " << spk_bench::json_string(o.command) << ", \"results\": [";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      out << (i ? ",\n  " : "\n  ") << "{\"matrix\": " << spk_bench::json_string(r.matrix)
          << ", \"rows\": " << r.rows << ", \"cols\": " << r.cols << ", \"nnz\": " << r.nnz
          << ", \"scalar\": " << spk_bench::json_string(o.scalar)
          << ", \"format\": \"tune-formats\", \"variant\": " << spk_bench::json_string(r.config)
          << ", \"model_us\": " << spk_bench::json_number(r.model_us)
          << ", \"median_ms\": " << spk_bench::json_number(r.median_ms)
          << ", \"memory_bytes\": " << r.memory << "}";
    }
    out << "\n]}\n";
  }
  return rc;
}

inline int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  Kokkos::ScopeGuard guard(argc, argv);
  try {
    if (o.scalar == "float") return run<float>(o);
    if (o.scalar == "double") return run<double>(o);
    if (o.scalar == "complex64") return run<Kokkos::complex<float>>(o);
    return run<Kokkos::complex<double>>(o);
  } catch (const std::exception& e) {
    std::cerr << "spk-tune: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace spk_tune_formats
