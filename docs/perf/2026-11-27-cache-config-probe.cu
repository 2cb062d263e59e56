// Probe (not part of spk): the L1 / shared-memory carveout and CSR SpMV on an H100. cuSPARSE
// CSR ALG1 under each device-wide cache preference, and two simple CSR kernels under each
// per-function preference and carveout, on R-MAT, a circuit-like matrix and the 3D 7-point stencil.
// Build: nvcc -O3 -arch=sm_90 -std=c++17 2026-11-27-cache-config-probe.cu -lcusparse
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


__global__ void rowthread(int n, const int* __restrict__ rp, const int* __restrict__ ci,
                          const double* __restrict__ v, const double* __restrict__ x, double* y) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n) return;
  double s = 0;
  for (int k = rp[row]; k < rp[row + 1]; ++k) s += __ldcs(v + k) * __ldg(x + __ldcs(ci + k));
  y[row] = s;
}

static double median(std::vector<float> t) { std::sort(t.begin(), t.end()); return t[t.size() / 2]; }

static Csr stencil7(int m) {
  Csr a; a.n = m * m * m; a.rp.assign(a.n + 1, 0);
  a.ci.reserve(std::size_t(a.n) * 7); a.v.reserve(std::size_t(a.n) * 7);
  for (int i = 0; i < m; ++i) for (int j = 0; j < m; ++j) for (int k = 0; k < m; ++k) {
    const int r = (i * m + j) * m + k;
    auto add = [&](int c, double val) { a.ci.push_back(c); a.v.push_back(val); };
    if (i > 0) add(r - m * m, -1); if (j > 0) add(r - m, -1); if (k > 0) add(r - 1, -1);
    add(r, 6); if (k < m - 1) add(r + 1, -1); if (j < m - 1) add(r + m, -1); if (i < m - 1) add(r + m * m, -1);
    a.rp[r + 1] = int(a.ci.size());
  }
  return a;
}

int main() {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  std::printf("%s sharedMemPerMultiprocessor %zu KB\n", p.name, p.sharedMemPerMultiprocessor >> 10);
  cudaStream_t s; CK(cudaStreamCreate(&s));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  cusparseHandle_t h; CS(cusparseCreate(&h)); CS(cusparseSetStream(h, s));
  const cudaFuncCache cfg[3] = {cudaFuncCachePreferNone, cudaFuncCachePreferShared, cudaFuncCachePreferL1};
  const char* cname[3] = {"none", "prefer-shared", "prefer-L1"};
  for (int which = 0; which < 3; ++which) {
    Csr a = which == 0 ? rmat(21, 16) : which == 1 ? circuit(4000000, 6) : stencil7(272);
    const char* name = which == 0 ? "rmat21x16" : which == 1 ? "circuit4M" : "poisson3d7:272";
    const int n = a.n; const std::int64_t nnz = a.ci.size();
    int *rp, *ci; double *v, *x, *y;
    CK(cudaMalloc(&rp, 4 * (n + 1))); CK(cudaMalloc(&ci, 4 * nnz)); CK(cudaMalloc(&v, 8 * nnz));
    CK(cudaMalloc(&x, 8 * std::size_t(n))); CK(cudaMalloc(&y, 8 * std::size_t(n)));
    CK(cudaMemcpy(rp, a.rp.data(), 4 * (n + 1), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(ci, a.ci.data(), 4 * nnz, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(v, a.v.data(), 8 * nnz, cudaMemcpyHostToDevice));
    std::vector<double> hx(n); for (int i = 0; i < n; ++i) hx[i] = 1.0 + (i % 7) * 0.125;
    CK(cudaMemcpy(x, hx.data(), 8 * std::size_t(n), cudaMemcpyHostToDevice));
    cusparseSpMatDescr_t A; cusparseDnVecDescr_t X, Y;
    CS(cusparseCreateCsr(&A, n, n, nnz, rp, ci, v, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    CS(cusparseCreateDnVec(&X, n, x, CUDA_R_64F)); CS(cusparseCreateDnVec(&Y, n, y, CUDA_R_64F));
    double alpha = 1, beta = 0; std::size_t bs = 0; void* buf = nullptr;
    CS(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y, CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1, &bs));
    CK(cudaMalloc(&buf, bs + 16));
    const double model = 12.0 * nnz + 4.0 * (n + 1) + 16.0 * n;
    std::printf("%s: n %d nnz %lld\n", name, n, (long long)nnz);
    auto timeit = [&](auto&& f) {
      std::vector<float> t;
      for (int r = 0; r < 45; ++r) {
        CK(cudaEventRecord(e0, s)); f(); CK(cudaEventRecord(e1, s)); CK(cudaEventSynchronize(e1));
        float ms; cudaEventElapsedTime(&ms, e0, e1); if (r >= 5) t.push_back(ms);
      }
      return median(t);
    };
    for (int c = 0; c < 3; ++c) {
      CK(cudaDeviceSetCacheConfig(cfg[c]));
      double m = timeit([&] { CS(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y, CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1, buf)); });
      std::printf("  device %-14s cusparse-alg1 %.4f ms %5.0f GB/s\n", cname[c], m, model / m / 1e6);
    }
    CK(cudaDeviceSetCacheConfig(cudaFuncCachePreferNone));
    for (int c = 0; c < 3; ++c) {
      CK(cudaFuncSetCacheConfig(rowthread, cfg[c])); CK(cudaFuncSetCacheConfig(vec4, cfg[c]));
      if (which != 0) {
        double m = timeit([&] { rowthread<<<(n + 127) / 128, 128, 0, s>>>(n, rp, ci, v, x, y); });
        std::printf("  func   %-14s rowthread     %.4f ms %5.0f GB/s\n", cname[c], m, model / m / 1e6);
        m = timeit([&] { vec4<<<int((std::int64_t(n) * 4 + 255) / 256), 256, 0, s>>>(n, rp, ci, v, x, y); });
        std::printf("  func   %-14s vec4          %.4f ms %5.0f GB/s\n", cname[c], m, model / m / 1e6);
      }
    }
    for (int pct : {0, 25, 50, 100}) {
      CK(cudaFuncSetCacheConfig(rowthread, cudaFuncCachePreferNone));
      CK(cudaFuncSetAttribute(rowthread, cudaFuncAttributePreferredSharedMemoryCarveout, pct));
      if (which != 0) {
        double m = timeit([&] { rowthread<<<(n + 127) / 128, 128, 0, s>>>(n, rp, ci, v, x, y); });
        std::printf("  carveout %3d%% rowthread %.4f ms %5.0f GB/s\n", pct, m, model / m / 1e6);
      }
    }
    CK(cudaFuncSetAttribute(rowthread, cudaFuncAttributePreferredSharedMemoryCarveout, -1));
    cusparseDestroySpMat(A); cusparseDestroyDnVec(X); cusparseDestroyDnVec(Y);
    cudaFree(rp); cudaFree(ci); cudaFree(v); cudaFree(x); cudaFree(y); cudaFree(buf);
  }
  return 0;
}
