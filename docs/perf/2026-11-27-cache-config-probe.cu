// Probe (not part of spk): the L1 / shared-memory carveout and CSR SpMV on an H100. cuSPARSE
// CSR ALG1 under each device-wide cache preference, and two simple CSR kernels under each
// per-function preference and carveout, on R-MAT, a circuit-like matrix and the 3D 7-point stencil.
// Build: nvcc -O3 -arch=sm_90 -std=c++17 2026-11-27-cache-config-probe.cu -lcusparse
#include "2026-11-27-probe-common.cuh"

__global__ void rowthread(int n, const int* __restrict__ rp, const int* __restrict__ ci,
                          const double* __restrict__ v, const double* __restrict__ x, double* y) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n) return;
  double s = 0;
  for (int k = rp[row]; k < rp[row + 1]; ++k) s += __ldcs(v + k) * __ldg(x + __ldcs(ci + k));
  y[row] = s;
}


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
