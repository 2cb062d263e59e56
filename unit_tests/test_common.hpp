// Shared helpers of the spk unit tests: the list of enabled backends, random inputs, the shared
// data directory and tolerance checks against the sequential host reference.
#pragma once

#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <spk/csr_matrix.hpp>
#include <spk/scalar.hpp>

namespace spk_test {

// --- backends: every test case runs once per enabled execution space --------------------------
// With CUDA enabled, SPK_TEST_GPU_ONLY (CMake: SPK_TEST_HOST_BACKENDS=OFF) leaves Serial and
// OpenMP to the host configuration, which builds and runs the same cases for them: the tests
// then compile and run for Cuda only (CI's compile-only CUDA step: less to compile).
#if defined(KOKKOS_ENABLE_CUDA) && defined(SPK_TEST_GPU_ONLY)
#define SPK_TEST_HOST_BACKENDS 0
#else
#define SPK_TEST_HOST_BACKENDS 1
#endif
#ifdef KOKKOS_ENABLE_SERIAL
using SerialDevice = Kokkos::Device<Kokkos::Serial, Kokkos::HostSpace>;
#endif
#if defined(KOKKOS_ENABLE_SERIAL) && SPK_TEST_HOST_BACKENDS
using serial_list = std::tuple<SerialDevice>;
#else
using serial_list = std::tuple<>;
#endif
#ifdef KOKKOS_ENABLE_OPENMP
using OpenMPDevice = Kokkos::Device<Kokkos::OpenMP, Kokkos::HostSpace>;
#endif
#if defined(KOKKOS_ENABLE_OPENMP) && SPK_TEST_HOST_BACKENDS
using openmp_list = std::tuple<OpenMPDevice>;
#else
using openmp_list = std::tuple<>;
#endif
#ifdef KOKKOS_ENABLE_CUDA
using CudaDevice = Kokkos::Device<Kokkos::Cuda, Kokkos::CudaSpace>;
using cuda_list = std::tuple<CudaDevice>;
#else
using cuda_list = std::tuple<>;
#endif

/// All enabled devices, for TEST_CASE_TEMPLATE_APPLY(id, spk_test::all_devices).
using all_devices = decltype(std::tuple_cat(std::declval<serial_list>(),
                                            std::declval<openmp_list>(),
                                            std::declval<cuda_list>()));

/// The scalar types every kernel is tested with.
using all_scalars = std::tuple<float, double, Kokkos::complex<float>, Kokkos::complex<double>>;

/// The labels of the parallel_for launches made while a KernelLabels lives (a Kokkos Tools
/// begin-parallel-for callback): tells a test which kernel ran. One at a time.
inline std::vector<std::string>* kernel_labels = nullptr;
inline void record_kernel_label(const char* name, std::uint32_t, std::uint64_t*) {
  if (kernel_labels != nullptr) kernel_labels->push_back(name);
}
struct KernelLabels {
  std::vector<std::string> labels;
  KernelLabels() {
    kernel_labels = &labels;
    Kokkos::Tools::Experimental::set_begin_parallel_for_callback(record_kernel_label);
  }
  ~KernelLabels() {
    Kokkos::Tools::Experimental::set_begin_parallel_for_callback(nullptr);
    kernel_labels = nullptr;
  }
  KernelLabels(const KernelLabels&) = delete;
  KernelLabels& operator=(const KernelLabels&) = delete;
  bool ran(const std::string& label) const {
    return std::find(labels.begin(), labels.end(), label) != labels.end();
  }
};

/// Calls f.template operator()<T>() ... for each T of a tuple (a loop over types in a test).
template <class Tuple, class F, std::size_t... I>
void for_each_type_impl(F&& f, std::index_sequence<I...>) {
  (f(static_cast<std::tuple_element_t<I, Tuple>*>(nullptr)), ...);
}
template <class Tuple, class F>
void for_each_type(F&& f) {
  for_each_type_impl<Tuple>(std::forward<F>(f),
                            std::make_index_sequence<std::tuple_size<Tuple>::value>{});
}

// --- data ------------------------------------------------------------------------------------
/// Directory holding matrices/ and meshes/: $SPK_DATA_DIR, else the configured default. A test
/// that needs it fails (it does not skip) when it is missing.
inline std::string data_dir() {
  if (const char* env = std::getenv("SPK_DATA_DIR")) return env;
  return SPK_SHARED_DATA_DIR;
}

// --- random inputs ---------------------------------------------------------------------------
/// Random value of a scalar type, components uniform in [-1, 1].
template <class Scalar>
Scalar random_value(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double re = u(rng);
  const double im = spk::scalar_traits<Scalar>::is_complex ? u(rng) : 0.0;
  return spk::scalar_traits<Scalar>::make(re, im);
}

/// Random host vector of n values.
template <class Scalar>
std::vector<Scalar> random_vector(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Scalar> v(n);
  for (auto& x : v) x = random_value<Scalar>(rng);
  return v;
}

/// Random CSR matrix on the host with sorted, unique columns. Row lengths are uniform in
/// [0, 2 * mean_row_len], so empty rows occur; `dense_row` >= 0 makes that row full.
template <class Scalar, class Ordinal = int, class Offset = int>
spk::CsrMatrix<Scalar, Ordinal, Offset, spk::impl::HostDevice> random_csr(
    Ordinal nrows, Ordinal ncols, int mean_row_len, std::uint64_t seed, Ordinal dense_row = -1) {
  std::mt19937_64 rng(seed);
  std::vector<Offset> row_map(std::size_t(nrows) + 1, 0);
  std::vector<Ordinal> cols;
  std::vector<Scalar> vals;
  std::uniform_int_distribution<int> len_dist(0, 2 * mean_row_len);
  std::vector<char> used(std::size_t(ncols), 0);
  for (Ordinal i = 0; i < nrows; ++i) {
    Ordinal len = (i == dense_row) ? ncols : std::min<Ordinal>(ncols, Ordinal(len_dist(rng)));
    std::vector<Ordinal> row;
    if (len == ncols) {
      for (Ordinal j = 0; j < ncols; ++j) row.push_back(j);
    } else {
      std::uniform_int_distribution<Ordinal> col_dist(0, ncols - 1);
      while (Ordinal(row.size()) < len) {
        Ordinal j = col_dist(rng);
        if (!used[j]) {
          used[j] = 1;
          row.push_back(j);
        }
      }
      for (Ordinal j : row) used[j] = 0;
      std::sort(row.begin(), row.end());
    }
    for (Ordinal j : row) {
      cols.push_back(j);
      vals.push_back(random_value<Scalar>(rng));
    }
    row_map[std::size_t(i) + 1] = Offset(cols.size());
  }
  return spk::make_csr<Scalar, Ordinal, Offset, spk::impl::HostDevice>(nrows, ncols, row_map,
                                                                        cols, vals);
}

// --- checks ----------------------------------------------------------------------------------
/// Checks |y[i] - ref[i]| <= tol * (1 + scale[i]) for every i, where scale[i] is the magnitude
/// bound of the reference (e.g. (|A||x|)_i times the row length, see spk::reference). Reports
/// the first mismatch with its index.
template <class Scalar>
void check_close(const std::vector<Scalar>& y, const std::vector<Scalar>& ref,
                 const std::vector<double>& scale, double tol) {
  REQUIRE(y.size() == ref.size());
  using traits = spk::scalar_traits<Scalar>;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double err = traits::abs(y[i] - ref[i]);
    const double bound = tol * (1.0 + scale[i]);
    if (!(err <= bound)) {
      INFO("entry " << i << ": got (" << traits::real(y[i]) << ", " << traits::imag(y[i])
                    << "), reference (" << traits::real(ref[i]) << ", " << traits::imag(ref[i])
                    << "), error " << err << " > bound " << bound);
      CHECK(err <= bound);
      return;
    }
  }
}

/// Host copy of a rank-1 view as a std::vector.
template <class View>
std::vector<typename View::non_const_value_type> to_vector(const View& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<typename View::non_const_value_type>(h.data(), h.data() + h.extent(0));
}

/// Device view filled from a host vector.
template <class Device, class T>
Kokkos::View<T*, Device> to_view(const std::vector<T>& v, const char* label = "spk_test") {
  Kokkos::View<T*, Device> d(std::string(label), v.size());
  auto h = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < v.size(); ++i) h(i) = v[i];
  Kokkos::deep_copy(d, h);
  return d;
}

}  // namespace spk_test

// Readable backend names in doctest's output.
#ifdef KOKKOS_ENABLE_SERIAL
TYPE_TO_STRING(spk_test::SerialDevice);
#endif
#ifdef KOKKOS_ENABLE_OPENMP
TYPE_TO_STRING(spk_test::OpenMPDevice);
#endif
#ifdef KOKKOS_ENABLE_CUDA
TYPE_TO_STRING(spk_test::CudaDevice);
#endif
