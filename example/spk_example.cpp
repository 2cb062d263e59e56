// Minimal spk application: build a small CSR matrix, multiply, check against the reference.
#include <Kokkos_Core.hpp>
#include <cstdio>
#include <vector>

#include <spk/csr_matrix.hpp>
#include <spk/reference.hpp>
#include <spk/spmv.hpp>

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  // 1D Laplacian, 8 rows: 2 on the diagonal, -1 beside it
  const int n = 8;
  std::vector<int> row_map{0}, cols;
  std::vector<double> vals;
  for (int i = 0; i < n; ++i) {
    for (int j = i - 1; j <= i + 1; ++j) {
      if (j < 0 || j >= n) continue;
      cols.push_back(j);
      vals.push_back(i == j ? 2.0 : -1.0);
    }
    row_map.push_back(int(cols.size()));
  }
  const auto a = spk::make_csr<double>(n, n, row_map, cols, vals);

  Kokkos::View<double*> x("x", n), y("y", n);
  Kokkos::deep_copy(x, 1.0);
  spk::spmv(spk::Mode::N, 1.0, a, x, 0.0, y);
  auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);

  std::vector<double> xr(n, 1.0), yr(n, 0.0);
  spk::reference::spmv(spk::Mode::N, 1.0, a, xr, 0.0, yr);
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += (yh(i) != yr[i]);
  std::printf("spk example: y = A * ones = [%g %g ... %g], %s\n", yh(0), yh(1), yh(n - 1),
              bad ? "MISMATCH" : "matches the reference");
  return bad ? 1 : 0;
}
