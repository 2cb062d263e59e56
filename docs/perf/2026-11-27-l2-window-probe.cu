// Probe: does pinning x in L2 (stream access policy window, persisting) speed up gather-bound
// CSR SpMV (R-MAT, circuit-like random columns)? cuSPARSE ALG1 and a simple vector kernel,
// with and without the window, same process. Not part of spk.
#include "2026-11-27-probe-common.cuh"

int main(int argc, char** argv) {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  std::printf("%s L2 %d MB persistingL2CacheMaxSize %d MB accessPolicyMaxWindowSize %d MB SMs %d\n",
              p.name, p.l2CacheSize >> 20, p.persistingL2CacheMaxSize >> 20,
              p.accessPolicyMaxWindowSize >> 20, p.multiProcessorCount);
  cudaStream_t s; CK(cudaStreamCreate(&s));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  // copy bandwidth
  {
    std::size_t bytes = std::size_t(1) << 30; void *a, *b; CK(cudaMalloc(&a, bytes)); CK(cudaMalloc(&b, bytes));
    std::vector<float> t;
    for (int r = 0; r < 30; ++r) { CK(cudaEventRecord(e0, s)); CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s)); CK(cudaEventRecord(e1, s)); CK(cudaEventSynchronize(e1)); float ms; cudaEventElapsedTime(&ms, e0, e1); if (r >= 5) t.push_back(ms); }
    std::printf("copy bandwidth %.0f GB/s\n", 2.0 * bytes / median(t) / 1e6);
    cudaFree(a); cudaFree(b);
  }
  cusparseHandle_t h; CS(cusparseCreate(&h)); CS(cusparseSetStream(h, s));
  for (int which = 0; which < 3; ++which) {
    Csr a = which == 0 ? rmat(21, 16) : which == 1 ? circuit(4000000, 6) : rmat(22, 8);
    const char* name = which == 0 ? "rmat21x16" : which == 1 ? "circuit4M" : "rmat22x8";
    const int n = a.n; const std::int64_t nnz = a.ci.size();
    int *rp, *ci; double *v, *x, *y;
    CK(cudaMalloc(&rp, 4 * (n + 1))); CK(cudaMalloc(&ci, 4 * nnz)); CK(cudaMalloc(&v, 8 * nnz));
    CK(cudaMalloc(&x, 8 * n)); CK(cudaMalloc(&y, 8 * n));
    CK(cudaMemcpy(rp, a.rp.data(), 4 * (n + 1), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(ci, a.ci.data(), 4 * nnz, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(v, a.v.data(), 8 * nnz, cudaMemcpyHostToDevice));
    std::vector<double> hx(n); for (int i = 0; i < n; ++i) hx[i] = 1.0 + (i % 7) * 0.125;
    CK(cudaMemcpy(x, hx.data(), 8 * n, cudaMemcpyHostToDevice));
    cusparseSpMatDescr_t A; cusparseDnVecDescr_t X, Y;
    CS(cusparseCreateCsr(&A, n, n, nnz, rp, ci, v, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    CS(cusparseCreateDnVec(&X, n, x, CUDA_R_64F)); CS(cusparseCreateDnVec(&Y, n, y, CUDA_R_64F));
    double alpha = 1, beta = 0; std::size_t bs = 0; void* buf = nullptr;
    CS(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y, CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1, &bs));
    CK(cudaMalloc(&buf, bs + 16));
    const std::size_t xbytes = std::size_t(8) * n;
    const double model = 12.0 * nnz + 4.0 * (n + 1) + 16.0 * n;
    auto set_window = [&](double frac_setaside, float hit) {
      cudaStreamAttrValue at{};
      if (frac_setaside > 0) {
        std::size_t set = std::size_t(p.persistingL2CacheMaxSize * frac_setaside);
        CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, set));
        at.accessPolicyWindow.base_ptr = x;
        at.accessPolicyWindow.num_bytes = std::min<std::size_t>(xbytes, p.accessPolicyMaxWindowSize);
        at.accessPolicyWindow.hitRatio = hit;
        at.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
        at.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
      } else {
        at.accessPolicyWindow.num_bytes = 0;
        CK(cudaCtxResetPersistingL2Cache());
        CK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
      }
      CK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &at));
    };
    std::printf("%s: n %d nnz %lld x %.1f MB\n", name, n, (long long)nnz, xbytes / 1e6);
    struct Cfg { const char* label; double frac; float hit; };
    const float fit = float(std::min(1.0, double(p.persistingL2CacheMaxSize) / double(xbytes)));
    Cfg cfgs[] = {{"none", 0, 0}, {"pin x (hit=min(1,setaside/x))", 1.0, fit}, {"pin x hit 1.0", 1.0, 1.0f}, {"pin x hit 0.5", 1.0, 0.5f}, {"none again", 0, 0}};
    for (auto& c : cfgs) {
      set_window(c.frac, c.hit);
      for (int k = 0; k < 2; ++k) {
        std::vector<float> t;
        for (int r = 0; r < 55; ++r) {
          CK(cudaEventRecord(e0, s));
          if (k == 0) CS(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y, CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1, buf));
          else vec4<<<int((std::int64_t(n) * 4 + 255) / 256), 256, 0, s>>>(n, rp, ci, v, x, y);
          CK(cudaEventRecord(e1, s)); CK(cudaEventSynchronize(e1));
          float ms; cudaEventElapsedTime(&ms, e0, e1); if (r >= 5) t.push_back(ms);
        }
        const double m = median(t);
        std::printf("  %-32s %-10s %.4f ms  %.0f GB/s (model)\n", c.label, k == 0 ? "cusparse" : "vec4", m, model / m / 1e6);
      }
    }
    set_window(0, 0);
    cusparseDestroySpMat(A); cusparseDestroyDnVec(X); cusparseDestroyDnVec(Y);
    cudaFree(rp); cudaFree(ci); cudaFree(v); cudaFree(x); cudaFree(y); cudaFree(buf);
  }
  return 0;
}
