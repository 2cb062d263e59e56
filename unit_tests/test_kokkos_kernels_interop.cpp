// Tests of spk/kokkos_kernels_interop.hpp: both conversions share memory (writes are seen on the
// other side, nothing is copied), the shared memory stays alive as long as either side needs it,
// and KokkosSparse::spmv on a converted matrix matches the host reference.
#include "test_common.hpp"
// Kokkos Kernels 3.4's headers expect Kokkos_Core.hpp (from test_common.hpp) to come first.
#include <KokkosSparse_spmv.hpp>
#include <cstdint>
#include <spk/csr_matrix.hpp>
#include <spk/kokkos_kernels_interop.hpp>
#include <spk/mode.hpp>
#include <spk/reference.hpp>
#include <spk/spmv.hpp>
#include <string>
#include <type_traits>
#include <vector>

namespace {

// Writes v to element i of a view (any memory space).
template <class View>
void write_element(const View& view, std::size_t i, typename View::non_const_value_type v) {
  Kokkos::deep_copy(Kokkos::subview(view, i), v);
}

template <class View>
typename View::non_const_value_type read_element(const View& view, std::size_t i) {
  return spk::impl::read_element(view, i);
}

// A Kokkos Kernels matrix built the Kokkos Kernels way (its own views) from a host CSR matrix.
template <class Device, class S, class O, class F>
KokkosSparse::CrsMatrix<S, O, Device, void, F> make_kk(
    const spk::CsrMatrix<S, O, F, spk::impl::HostDevice>& h) {
  using KK = KokkosSparse::CrsMatrix<S, O, Device, void, F>;
  typename KK::row_map_type::non_const_type row_map("kk::row_map", h.row_map().extent(0));
  typename KK::index_type cols("kk::cols", h.col_idx().extent(0));
  typename KK::values_type vals("kk::vals", h.values().extent(0));
  Kokkos::deep_copy(row_map, h.row_map());
  Kokkos::deep_copy(cols, h.col_idx());
  Kokkos::deep_copy(vals, h.values());
  return KK("kk", h.nrows(), h.ncols(), F(h.nnz()), vals, row_map, cols);
}

// y = alpha * op(A) x + beta * y through KokkosSparse::spmv, compared to spk::reference::spmv.
template <class Device, class KKMatrix, class S, class O, class F>
void check_kk_spmv(const KKMatrix& kk, const spk::CsrMatrix<S, O, F, spk::impl::HostDevice>& h,
                   spk::Mode mode, std::uint64_t seed) {
  const bool trans = mode != spk::Mode::N;
  const std::size_t nx = trans ? std::size_t(h.nrows()) : std::size_t(h.ncols());
  const std::size_t ny = trans ? std::size_t(h.ncols()) : std::size_t(h.nrows());
  const auto x = spk_test::random_vector<S>(nx, seed);
  const auto y0 = spk_test::random_vector<S>(ny, seed + 1);
  const S alpha = spk::scalar_traits<S>::make(1.5, -0.5);
  const S beta = spk::scalar_traits<S>::make(-0.75, 0.25);
  auto ref = y0;
  std::vector<double> bound;
  spk::reference::spmv(mode, alpha, h, x, beta, ref, &bound);
  const auto xd = spk_test::to_view<Device>(x);
  const auto yd = spk_test::to_view<Device>(y0);
  const char* kk_mode = mode == spk::Mode::N ? "N" : mode == spk::Mode::T ? "T" : "H";
  KokkosSparse::spmv(kk_mode, alpha, kk, xd, beta, yd);
  spk_test::check_close(spk_test::to_vector(yd), ref, bound, 8 * spk::unit_roundoff<S>());
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("to_kokkos_kernels: shares the views", Device, to_kk_shares) {
  const auto h = spk_test::random_csr<double, int, int>(50, 40, 5, 1);
  const auto a = spk::copy_to<Device>(h);
  const auto kk = spk::to_kokkos_kernels(a);
  static_assert(std::is_same<std::remove_const_t<decltype(kk)>,
                             KokkosSparse::CrsMatrix<double, int, Device, void, int>>::value,
                "to_kokkos_kernels: unexpected type");
  CHECK(kk.numRows() == 50);
  CHECK(kk.numCols() == 40);
  CHECK(kk.nnz() == a.nnz());
  CHECK(kk.graph.row_map.data() == a.row_map().data());
  CHECK(kk.graph.entries.data() == a.col_idx().data());
  CHECK(kk.values.data() == a.values().data());
  // both sides hold references to the same allocations
  CHECK(a.values().use_count() == 2);
  CHECK(a.row_map().use_count() == 2);

  write_element(a.values(), 3, 42.0);
  CHECK(read_element(kk.values, 3) == 42.0);
  write_element(kk.values, 4, -7.0);
  CHECK(read_element(a.values(), 4) == -7.0);
  write_element(kk.graph.entries, 0, 39);
  CHECK(read_element(a.col_idx(), 0) == 39);
  write_element(a.row_map(), 50, 12345);
  CHECK(read_element(kk.graph.row_map, 50) == 12345);

  // the Kokkos Kernels matrix keeps the memory alive on its own
  decltype(spk::to_kokkos_kernels(a)) kept;
  {
    const auto b = spk::copy_to<Device>(h);
    kept = spk::to_kokkos_kernels(b);
    CHECK(b.values().use_count() == 2);
  }
  CHECK(kept.values.use_count() == 1);
  CHECK(kept.graph.row_map.use_count() == 1);
  CHECK(read_element(kept.graph.row_map, 50) == h.row_map()(50));

  // empty matrices
  const auto e =
      spk::to_kokkos_kernels(spk::CsrMatrix<float, std::int64_t, std::int64_t, Device>());
  CHECK(e.numRows() == 0);
  CHECK(e.nnz() == 0);
}
TEST_CASE_TEMPLATE_APPLY(to_kk_shares, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("from_kokkos_kernels: shares the views, keeps them alive", Device,
                          from_kk_shares) {
  const auto h = spk_test::random_csr<double, int, std::size_t>(30, 60, 4, 2);
  const auto kk = make_kk<Device>(h);
  CHECK(kk.graph.row_map.use_count() == 1);
  {
    const auto a = spk::from_kokkos_kernels(kk);
    static_assert(std::is_same<std::remove_const_t<decltype(a)>,
                               spk::CsrMatrix<double, int, std::size_t, Device>>::value,
                  "from_kokkos_kernels: unexpected type");
    CHECK(a.nrows() == 30);
    CHECK(a.ncols() == 60);
    CHECK(a.nnz() == h.nnz());
    CHECK(a.row_map().data() == kk.graph.row_map.data());
    CHECK(a.col_idx().data() == kk.graph.entries.data());
    CHECK(a.values().data() == kk.values.data());
    // the owner handle holds one reference to the Kokkos Kernels row map; copies share it
    CHECK(kk.graph.row_map.use_count() == 2);
    CHECK(kk.values.use_count() == 2);
    const auto copy = a;
    CHECK(kk.graph.row_map.use_count() == 2);

    write_element(a.values(), 5, 3.25);
    CHECK(read_element(kk.values, 5) == 3.25);
    write_element(a.col_idx(), 1, 59);
    CHECK(read_element(kk.graph.entries, 1) == 59);
    // the non-const spk row map writes into the Kokkos Kernels one
    const std::size_t old = read_element(a.row_map(), 30);
    write_element(a.row_map(), 30, std::size_t(777));
    CHECK(read_element(kk.graph.row_map, 30) == 777);
    write_element(a.row_map(), 30, old);

    // round trip: Kokkos Kernels gets its own reference-counted row map back
    const auto back = spk::to_kokkos_kernels(a);
    CHECK(back.graph.row_map.data() == kk.graph.row_map.data());
    CHECK(kk.graph.row_map.use_count() == 3);
  }
  CHECK(kk.graph.row_map.use_count() == 1);
  CHECK(kk.values.use_count() == 1);

  // the spk matrix outlives the Kokkos Kernels one
  using Csr = spk::CsrMatrix<double, int, std::size_t, Device>;
  Csr kept;
  {
    const auto local = make_kk<Device>(h);
    kept = spk::from_kokkos_kernels(local);
    CHECK(local.graph.row_map.use_count() == 2);
  }
  REQUIRE(kept.owner() != nullptr);
  CHECK(spk::to_kokkos_kernels(kept).graph.row_map.use_count() == 2);
  const auto back = spk::to_host(kept);
  for (std::size_t i = 0; i <= 30; ++i) CHECK(back.row_map()(i) == h.row_map()(i));

  // a default-constructed Kokkos Kernels matrix has no row map at all
  const auto empty = spk::from_kokkos_kernels(KokkosSparse::CrsMatrix<float, int, Device>());
  CHECK(empty.nrows() == 0);
  CHECK(empty.nnz() == 0);
  CHECK(empty.row_map().extent(0) == 1);
}
TEST_CASE_TEMPLATE_APPLY(from_kk_shares, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("KokkosSparse::spmv on converted matrices", Device, kk_spmv) {
  spk_test::for_each_type<spk_test::all_scalars>([](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    CAPTURE(spk::scalar_traits<S>::name);
    for (const auto& h : {spk_test::random_csr<S, int, int>(300, 200, 9, 3),
                          spk_test::random_csr<S, int, int>(40, 1000, 5, 4, 7),
                          spk_test::random_csr<S, int, int>(1, 5, 2, 5)}) {
      const auto kk = spk::to_kokkos_kernels(spk::copy_to<Device>(h));
      check_kk_spmv<Device>(kk, h, spk::Mode::N, 10);
      check_kk_spmv<Device>(kk, h, spk::Mode::T, 20);
      if (spk::scalar_traits<S>::is_complex) check_kk_spmv<Device>(kk, h, spk::Mode::H, 30);
    }
  });
  // int64 indices and size_t offsets, both directions
  const auto h = spk_test::random_csr<double, std::int64_t, std::size_t>(500, 400, 6, 6);
  const auto kk = make_kk<Device>(h);
  check_kk_spmv<Device>(kk, h, spk::Mode::N, 40);
  const auto a = spk::from_kokkos_kernels(kk);
  check_kk_spmv<Device>(spk::to_kokkos_kernels(a), h, spk::Mode::N, 50);
  // spk's own SpMV on the shared matrix agrees with the reference too
  const auto x = spk_test::random_vector<double>(400, 60);
  std::vector<double> ref(500, 0.0), bound;
  spk::reference::spmv(spk::Mode::N, 2.0, h, x, 0.0, ref, &bound);
  const auto yd = spk_test::to_view<Device>(std::vector<double>(500, 1.0));
  spk::spmv(spk::Mode::N, 2.0, a, spk_test::to_view<Device>(x), 0.0, yd);
  spk_test::check_close(spk_test::to_vector(yd), ref, bound, 8 * spk::unit_roundoff<double>());
}
TEST_CASE_TEMPLATE_APPLY(kk_spmv, spk_test::all_devices);
