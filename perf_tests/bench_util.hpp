// Benchmark utilities shared by spk's perf tests: timing with fences, statistics, JSON output,
// run metadata and the device copy bandwidth.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <type_traits>
#include <string>
#include <vector>

#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime.h>
#endif

namespace spk_bench {

/// Median, minimum and maximum of a sample, in the sample's unit.
struct Stats {
  double median = 0, min = 0, max = 0;
};

inline Stats stats_of(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  s.min = v.front();
  s.max = v.back();
  return s;
}

/// Times `run` (device work, fenced before and after each repetition) `repeat` times after
/// `warmup` untimed runs; returns per-repetition times in milliseconds.
inline std::vector<double> time_ms(const std::function<void()>& run, int warmup, int repeat) {
  for (int i = 0; i < warmup; ++i) run();
  Kokkos::fence();
  std::vector<double> t;
  t.reserve(std::size_t(repeat));
  for (int i = 0; i < repeat; ++i) {
    Kokkos::fence();
    const auto t0 = std::chrono::steady_clock::now();
    run();
    Kokkos::fence();
    const auto t1 = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return t;
}

/// Device copy bandwidth in GB/s (bytes read + bytes written per second) of a large
/// device-to-device deep_copy on the default execution space: median of 20 copies.
inline double copy_bandwidth_gbps() {
  using exec = Kokkos::DefaultExecutionSpace;
#ifdef KOKKOS_ENABLE_CUDA
  const std::size_t n = std::is_same<exec, Kokkos::Cuda>::value ? (std::size_t(1) << 27)
                                                                 : (std::size_t(1) << 24);
#else
  const std::size_t n = std::size_t(1) << 24;  // 128 MiB of doubles: beyond the host caches
#endif
  Kokkos::View<double*, exec> a("spk_bench::copy_a", n), b("spk_bench::copy_b", n);
  Kokkos::deep_copy(a, 1.0);
  const auto t = time_ms([&] { Kokkos::deep_copy(exec(), b, a); }, 3, 20);
  return 2.0 * double(n * sizeof(double)) / (stats_of(t).median * 1e6);
}

/// Gives kernels launched outside Kokkos (cuSPARSE's baselines) the CUDA default split of L1 and
/// shared memory (no preference: the driver sizes shared memory per kernel). Kokkos 3.x sets
/// cudaFuncCachePreferShared device-wide at initialisation, which left cuSPARSE's CSR SpMV a
/// minimal L1 (1.8x slower on a circuit-like matrix, 1.4x on R-MAT; docs/PERFORMANCE.md, "The L1
/// carveout"); spk's own Kokkos build no longer does (cmake/patches/), a user's Kokkos may. Call
/// after Kokkos is initialised; a no-op without CUDA.
inline void reset_device_cache_preference() {
#ifdef KOKKOS_ENABLE_CUDA
  if (std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::Cuda>::value) {
    const cudaError_t e = cudaDeviceSetCacheConfig(cudaFuncCachePreferNone);
    if (e != cudaSuccess)
      std::fprintf(stderr, "warning: cudaDeviceSetCacheConfig(cudaFuncCachePreferNone): %s\n",
                   cudaGetErrorString(e));
  }
#endif
}

/// Name of the device the default execution space runs on.
inline std::string device_name() {
#ifdef KOKKOS_ENABLE_CUDA
  if (std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::Cuda>::value) {
    cudaDeviceProp prop;
    int dev = 0;
    if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
      return prop.name;
  }
#endif
  return std::string("host ") + Kokkos::DefaultExecutionSpace::name() + " (" +
         std::to_string(Kokkos::DefaultExecutionSpace().concurrency()) + " threads)";
}

/// UTC date and time, ISO 8601.
inline std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

/// The commit a run measures: $SPK_COMMIT (set by the scripts that build and run the tools),
/// else "unknown".
inline std::string commit_id() {
  const char* v = std::getenv("SPK_COMMIT");
  return v ? v : "unknown";
}

/// The command line, arguments joined by spaces (the "command" of a JSON report).
inline std::string command_line(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) out += (i ? " " : "") + std::string(argv[i]);
  return out;
}

/// JSON string literal with escapes.
inline std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

/// JSON number (finite values; NaN and infinities become null).
inline std::string json_number(double v) {
  if (!(v == v) || v > 1e308 || v < -1e308) return "null";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace spk_bench
