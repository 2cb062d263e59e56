// Shared by the 2026-11-27 probes (not part of spk): CUDA / cuSPARSE checks, host generators of
// R-MAT and circuit-like CSR matrices, a 4-lanes-per-row CSR kernel and a median.
#pragma once
#include <cuda_runtime.h>
#include <cusparse.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e_)); std::exit(1);} } while (0)
#define CS(x) do { cusparseStatus_t e_ = (x); if (e_ != CUSPARSE_STATUS_SUCCESS) { std::printf("cuSPARSE %s at %d: %d\n", #x, __LINE__, int(e_)); std::exit(1);} } while (0)

struct Csr { int n; std::vector<int> rp, ci; std::vector<double> v; };

static std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull; z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull; return z ^ (z >> 31);
}

static Csr from_edges(int n, std::vector<std::pair<int,int>>& e) {
  Csr a; a.n = n; a.rp.assign(n + 1, 0);
  for (auto& p : e) a.rp[p.first + 1]++;
  for (int i = 0; i < n; ++i) a.rp[i + 1] += a.rp[i];
  a.ci.resize(e.size()); a.v.resize(e.size());
  std::vector<int> pos(a.rp.begin(), a.rp.end() - 1);
  for (std::size_t k = 0; k < e.size(); ++k) {
    int p = pos[e[k].first]++;
    a.ci[p] = e[k].second; a.v[p] = double(mix(k) % 1000) / 1000.0 - 0.5;
  }
  for (int i = 0; i < n; ++i) std::sort(a.ci.begin() + a.rp[i], a.ci.begin() + a.rp[i + 1]);
  return a;
}

static Csr rmat(int scale, int ef) {
  const int n = 1 << scale; const std::int64_t m = std::int64_t(ef) << scale;
  std::vector<std::pair<int,int>> e(m);
  for (std::int64_t k = 0; k < m; ++k) {
    int r = 0, c = 0;
    for (int l = 0; l < scale; ++l) {
      double u = double(mix(k * 64 + l) >> 11) * 0x1.0p-53;
      int rb = 0, cb = 0;
      if (u < 0.57) {} else if (u < 0.76) cb = 1; else if (u < 0.95) rb = 1; else { rb = cb = 1; }
      r = (r << 1) | rb; c = (c << 1) | cb;
    }
    e[k] = {r, c};
  }
  return from_edges(n, e);
}

static Csr circuit(int n, int mean) {
  std::vector<std::pair<int,int>> e; e.reserve(std::size_t(n) * mean);
  for (int i = 0; i < n; ++i) {
    int len = 1 + int(mix(std::uint64_t(i) * 7 + 1) % std::uint64_t(2 * mean - 1));
    e.push_back({i, i});
    for (int j = 1; j < len; ++j) e.push_back({i, int(mix(std::uint64_t(i) * 131 + j) % std::uint64_t(n))});
  }
  return from_edges(n, e);
}

// 4 lanes per row, streaming loads of the matrix, x through the read-only path
__global__ void vec4(int n, const int* __restrict__ rp, const int* __restrict__ ci,
                     const double* __restrict__ v, const double* __restrict__ x, double* y) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = t >> 2, lane = t & 3;
  double s = 0;
  if (row < n) {
    const int b = rp[row], e = rp[row + 1];
    for (int k = b + lane; k < e; k += 4) s += __ldcs(v + k) * __ldg(x + __ldcs(ci + k));
  }
  s += __shfl_down_sync(0xffffffffu, s, 2, 4);
  s += __shfl_down_sync(0xffffffffu, s, 1, 4);
  if (row < n && lane == 0) y[row] = s;
}

static double median(std::vector<float> t) { std::sort(t.begin(), t.end()); return t[t.size() / 2]; }
