// spk-features: what spk::select_format sees of a matrix and what seeing it costs. For each case
// (a generator spec, FILE.mtx or FILE.mtx*K) it prints the features of spk::compute_features,
// the median time of a call against the median time of a CSR product (the default schedule and
// a warp per row), and the feature-only choice of select_format.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <spk/select_format.hpp>
#include <spk/spmv.hpp>

#include "bench_cases.hpp"
#include "bench_util.hpp"

namespace {

using exec = Kokkos::DefaultExecutionSpace;

/// Median microseconds of f (each run fenced, spk_bench::time_ms), after `warmup` runs.
template <class F>
double median_us(const F& f, int warmup, int repeat) {
  return 1e3 * spk_bench::stats_of(spk_bench::time_ms(f, warmup, repeat)).median;
}

int usage(int code) {
  std::cout << "usage: spk-features [--warmup N] [--repeat N] CASE...\n"
            << "  CASE: NAME:SIZE[:key=value,...] (see spk-gen --help), FILE.mtx or FILE.mtx*K\n"
            << "Prints spk::compute_features of each case on the default execution space, the\n"
            << "median time of a call (each call's own clock, results read back) against the\n"
            << "median CSR product (default schedule and csr-v32 on GPUs), and the feature-only\n"
            << "choice of spk::select_format. Defaults: --warmup 20 --repeat 200.\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  int warmup = 20, repeat = 200;
  std::vector<std::string> cases;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--warmup" || a == "--repeat") && i + 1 < argc) {
      const int v = std::atoi(argv[++i]);
      if (v < (a == "--repeat" ? 1 : 0)) {
        std::cerr << "spk-features: " << a << " must be " << (a == "--repeat" ? ">= 1" : ">= 0")
                  << ", got '" << argv[i] << "'\n";
        return 2;
      }
      (a == "--warmup" ? warmup : repeat) = v;
    } else if (a == "--help" || a == "-h") {
      return usage(0);
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "spk-features: unknown option '" << a << "'\n";
      return usage(2);
    } else {
      cases.push_back(a);
    }
  }
  if (cases.empty()) return usage(2);
  Kokkos::ScopeGuard guard(argc, argv);
  spk_bench::reset_device_cache_preference();
  try {
    for (const auto& c : cases) {
      const auto a = spk_bench::load_case<double, exec>(c);
      Kokkos::View<double*, exec> x("x", a.ncols()), y("y", a.nrows());
      Kokkos::deep_copy(x, 1.0);
      const double csr_us =
          median_us([&] { spk::spmv(spk::Mode::N, 1.0, a, x, 0.0, y); }, warmup, repeat);
      spk::CsrSpmvParams v32;
      v32.variant = spk::CsrSpmvVariant::vector;
      v32.vector_length = 32;
      v32.team_size = 8;
      const bool gpu = spk::impl::is_gpu_space<exec>();
      const double v32_us =
          gpu ? median_us([&] { spk::spmv(spk::Mode::N, 1.0, a, x, 0.0, y, v32); }, warmup,
                          repeat)
              : -1;
      spk::MatrixFeatures f;
      std::vector<double> t;
      for (int r = 0; r < warmup + repeat; ++r) {
        f = spk::compute_features(a);
        if (r >= warmup) t.push_back(f.seconds * 1e6);
      }
      const double feat_us = spk_bench::stats_of(t).median;
      const double best = v32_us > 0 ? std::min(csr_us, v32_us) : csr_us;
      const spk::FormatChoice choice = spk::select_format(a);
      std::printf("%s: %lld x %lld, nnz %lld on %s\n", spk_bench::case_name(c).c_str(),
                  (long long)f.nrows, (long long)f.ncols, (long long)f.nnz, exec::name());
      std::printf("  rows: mean %.2f, cv %.3f, max %lld, empty %lld\n", f.row_mean, f.row_cv(),
                  (long long)f.row_max, (long long)f.empty_rows);
      std::printf("  padding: ell %.3f, 32-row hacks %.3f, dia %.3f (%lld diagonals)\n",
                  f.ell_padding, f.hack_padding, f.dia_padding, (long long)f.diagonals);
      std::printf("  bandwidth %lld, near the diagonal %.4f, repeated columns %.4f\n",
                  (long long)f.bandwidth, f.near_fraction, f.block_fraction);
      std::printf("  distinct values %lld of %lld sampled, fingerprint %s\n",
                  (long long)f.distinct_values, (long long)f.value_sample,
                  f.fingerprint_string().c_str());
      std::printf("  compute_features %.2f us; CSR product %.2f us", feat_us, csr_us);
      if (v32_us > 0) std::printf(", csr-v32 %.2f us", v32_us);
      std::printf(" -> %.2f products of the faster\n", best > 0 ? feat_us / best : 0.0);
      std::printf("  feature-only choice: %s\n", choice.config.name().c_str());
    }
  } catch (const std::exception& e) {
    std::cerr << "spk-features: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
