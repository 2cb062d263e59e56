// spk-gen: generates a matrix on the device from a spec and prints its statistics, optionally
// writing it as a Matrix Market file.
#include <Kokkos_Core.hpp>
#include <cstdio>
#include <iostream>
#include <string>

#include <spk/csr_matrix.hpp>
#include <spk/generate.hpp>
#include <spk/io/matrix_market.hpp>

#include "bench_cases.hpp"

int main(int argc, char** argv) {
  std::string spec, out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-o" && i + 1 < argc) {
      out = argv[++i];
    } else if (a == "--help" || a == "-h") {
      spec.clear();
      break;
    } else if (spec.empty()) {
      spec = a;
    } else {
      std::cerr << "spk-gen: unexpected argument '" << a << "'\n";
      return 2;
    }
  }
  if (spec.empty()) {
    std::cout << "usage: spk-gen NAME:SIZE[:key=value,...] [-o FILE.mtx]\n"
              << "       spk-gen FILE.mtx*K [-o FILE.mtx]   (K copies of FILE on the diagonal)\n"
              << "\nGenerators:\n"
              << spk::generate::describe_generators();
    return argc == 1 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h" ? 0 : 2;
  }
  Kokkos::ScopeGuard guard(argc, argv);
  try {
    Kokkos::Timer timer;
    const auto a = spk_bench::load_case<double, Kokkos::DefaultExecutionSpace>(spec);
    Kokkos::fence();
    const double seconds = timer.seconds();
    std::printf("%s: %d x %d, nnz %lld, %.1f MB in CSR, generated in %.3f s on %s\n",
                spec.c_str(), a.nrows(), a.ncols(), (long long)a.nnz(),
                double(a.memory_bytes()) / 1e6, seconds, Kokkos::DefaultExecutionSpace::name());
    if (!out.empty()) {
      spk::io::write_matrix_market(out, a);
      std::printf("wrote %s\n", out.c_str());
    }
  } catch (const std::exception& e) {
    std::cerr << "spk-gen: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
