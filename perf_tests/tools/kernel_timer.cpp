// perf_tests/tools/kernel_timer.cpp: a Kokkos profiling tool (load it with
// KOKKOS_PROFILE_LIBRARY=/path/libspk-kernel-timer.so, or KOKKOS_TOOLS_LIBS in Kokkos 4) that
// times every kernel and region of a program by its label, so a slow phase of a long run shows
// which launch it is. The GPU has no fence here of its own: the tool synchronises the current
// CUDA context (the driver's cuCtxSynchronize, looked up at run time, so the tool builds with a
// plain C++ compiler and needs no CUDA to load) before and after each kernel; on host backends
// the launches are synchronous anyway. Synchronising serialises the launches, so use it to find
// where time goes, not to report the program's speed.
//
// Output (stderr, or the file named by SPK_KTIMER_OUT): at the end, per label the count, total
// and mean ms, sorted by total; the time between kernels (host work, allocations, copies) is
// charged to "[host] before <next label>". A kernel or gap longer than SPK_KTIMER_SLOW_MS
// (default 500) is also printed when it ends, so a run killed by a time limit still says where
// it was.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

// Kokkos' memory-space handle, passed by value to the copy callbacks
struct SpaceHandle {
  char name[64];
};

struct Totals {
  std::uint64_t count = 0;
  double ms = 0;
};

struct State {
  int (*sync)() = nullptr;  // cuCtxSynchronize, when libcuda is there
  std::map<std::string, Totals> totals;
  std::vector<std::string> names;  // label per kernel id
  std::vector<std::pair<std::string, clock_type::time_point>> regions;
  clock_type::time_point last_end = clock_type::now();
  clock_type::time_point begin;
  double slow_ms = 500;
  FILE* out = stderr;
};

State& state() {
  static State s;
  return s;
}

double ms_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

void synchronize() {
  if (state().sync) state().sync();
}

void add(const std::string& label, double ms) {
  Totals& t = state().totals[label];
  t.count += 1;
  t.ms += ms;
  if (ms > state().slow_ms) {
    std::fprintf(state().out, "spk-kernel-timer: slow: %s %.1f ms\n", label.c_str(), ms);
    std::fflush(state().out);
  }
}

void begin_kernel(const char* kind, const char* name, std::uint64_t* id) {
  State& s = state();
  synchronize();
  const std::string label = std::string(kind) + " " + name;
  add("[host] before " + label, ms_since(s.last_end));
  *id = s.names.size();
  s.names.push_back(label);
  s.begin = clock_type::now();
}

void end_kernel(std::uint64_t id) {
  State& s = state();
  synchronize();
  add(s.names[id], ms_since(s.begin));
  s.last_end = clock_type::now();
}

}  // namespace

extern "C" {

void kokkosp_init_library(int, std::uint64_t, std::uint32_t, void*) {
  State& s = state();
  if (const char* path = std::getenv("SPK_KTIMER_OUT")) {
    if (FILE* f = std::fopen(path, "w")) s.out = f;
  }
  if (const char* slow = std::getenv("SPK_KTIMER_SLOW_MS")) s.slow_ms = std::atof(slow);
  if (void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL))
    s.sync = reinterpret_cast<int (*)()>(dlsym(lib, "cuCtxSynchronize"));
  s.last_end = clock_type::now();
}

void kokkosp_finalize_library() {
  State& s = state();
  std::vector<std::pair<std::string, Totals>> rows(s.totals.begin(), s.totals.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
  std::fprintf(s.out, "spk-kernel-timer: %-70s %8s %12s %10s\n", "label", "count", "total_ms",
               "mean_ms");
  for (const auto& r : rows)
    std::fprintf(s.out, "spk-kernel-timer: %-70s %8llu %12.3f %10.4f\n", r.first.c_str(),
                 static_cast<unsigned long long>(r.second.count), r.second.ms,
                 r.second.ms / double(r.second.count));
  std::fflush(s.out);
}

void kokkosp_begin_parallel_for(const char* name, std::uint32_t, std::uint64_t* id) {
  begin_kernel("for", name, id);
}
void kokkosp_end_parallel_for(std::uint64_t id) { end_kernel(id); }
void kokkosp_begin_parallel_scan(const char* name, std::uint32_t, std::uint64_t* id) {
  begin_kernel("scan", name, id);
}
void kokkosp_end_parallel_scan(std::uint64_t id) { end_kernel(id); }
void kokkosp_begin_parallel_reduce(const char* name, std::uint32_t, std::uint64_t* id) {
  begin_kernel("reduce", name, id);
}
void kokkosp_end_parallel_reduce(std::uint64_t id) { end_kernel(id); }

// deep copies (cudaMemcpy and host copies) time like kernels; the labels name the views
void kokkosp_begin_deep_copy(SpaceHandle, const char* dst, const void*, SpaceHandle,
                             const char* src, const void*, std::uint64_t size) {
  State& s = state();
  synchronize();
  add("[host] before copy", ms_since(s.last_end));
  s.names.push_back("copy " + std::string(src) + " -> " + dst + " (" +
                    std::to_string(size >> 20) + " MiB)");
  s.begin = clock_type::now();
}
void kokkosp_end_deep_copy() { end_kernel(state().names.size() - 1); }

void kokkosp_push_profile_region(const char* name) {
  synchronize();
  state().regions.emplace_back(name, clock_type::now());
}
void kokkosp_pop_profile_region() {
  State& s = state();
  if (s.regions.empty()) return;
  synchronize();
  add("[region] " + s.regions.back().first, ms_since(s.regions.back().second));
  s.regions.pop_back();
}

}  // extern "C"
