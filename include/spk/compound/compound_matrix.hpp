// spk/compound/compound_matrix.hpp: a sparse matrix with compound entries (complex, quaternion,
// b x b blocks, or any type described by spk::entry_traits) in a chosen layout
// (spk/compound/layout.hpp), and its SpMV.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <spk/compound/compound_vector.hpp>
#include <spk/compound/entry.hpp>
#include <spk/compound/layout.hpp>
#include <spk/compound/schedule.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/formats/padding_limit.hpp>
#include <spk/impl/compound_convert.hpp>
#include <spk/impl/compound_spmv.hpp>
#include <spk/impl/format_common.hpp>
#include <spk/impl/format_convert.hpp>
#include <spk/mode.hpp>

namespace spk {

/// Sparse matrix of compound entries E in a run-time layout (outer CSR / ELLPACK-R / sliced
/// ELLPACK, inner AoS / SoA / AoSoA). Built on the device from the default CSR-AoS form, a
/// spk::CsrMatrix<E> (int32 indices, as the paper). Copies are shallow.
///
/// Storage: `col_idx` and the entry components per slot; CSR slots are the CSR entries, ELL and
/// SELL slots include padding (column 0, zero entry, never multiplied: rows carry their lengths).
template <class E, class Device = Kokkos::DefaultExecutionSpace>
class CompoundMatrix {
 public:
  using traits = entry_traits<E>;
  using value_type = E;
  using real_type = typename traits::real_type;
  using vector_type = typename traits::vector_type;
  using scale_type = typename traits::scale_type;
  using ordinal_type = int;
  using device_type = impl::device_t<Device>;
  using execution_space = typename device_type::execution_space;
  using memory_space = typename device_type::memory_space;
  using csr_type = CsrMatrix<E, int, int, device_type>;
  using vector_t = CompoundVector<E, device_type>;
  static constexpr int components = traits::matrix_components;
  static constexpr const char* name = "compound";
  static_assert(sizeof(E) == components * sizeof(real_type),
                "spk::CompoundMatrix: an entry must be exactly its components (see entry_traits)");

  CompoundMatrix() = default;

  /// Converts a CSR matrix of E (rows need not be sorted) to `layout` on the device. Throws
  /// PaddingLimitExceeded when ELL/SELL padding exceeds `limit`, std::invalid_argument for an
  /// invalid layout or a slot count above int32.
  explicit CompoundMatrix(const csr_type& a, const CompoundLayout& layout = {},
                          const PaddingLimit& limit = {})
      : nrows_(a.nrows()), ncols_(a.ncols()), nnz_(std::size_t(a.nnz())), layout_(layout) {
    validate(layout);
    impl::check_limit_options("spk::CompoundMatrix", limit);
    auto outer = impl::compound_outer(a, layout, limit);
    outer_ = outer.geometry;
    offsets_ = outer.offsets;
    row_len_ = outer.row_len;
    slots_ = outer.slots;
    inner_ = impl::ComponentGeometry(layout.inner, layout.inner_width, components, slots_);
    col_idx_ = Kokkos::View<int*, device_type>("spk::compound::col_idx", slots_);
    entries_ = Kokkos::View<real_type*, device_type>("spk::compound::entries", inner_.size(slots_));
    impl::compound_fill(a, outer_, inner_, col_idx_, entries_);
  }

  int nrows() const { return nrows_; }
  int ncols() const { return ncols_; }
  /// Entries of the CSR input (padding not counted).
  std::size_t nnz() const { return nnz_; }
  /// Stored slots including padding.
  std::size_t slots() const { return slots_; }
  const CompoundLayout& layout() const { return layout_; }
  const impl::OuterGeometry<device_type>& outer() const { return outer_; }
  const Kokkos::View<int*, device_type>& col_idx() const { return col_idx_; }
  const Kokkos::View<real_type*, device_type>& entries() const { return entries_; }
  const impl::ComponentGeometry& inner() const { return inner_; }

  /// Bytes of every array the matrix holds (offsets, row lengths, column indices, entries).
  std::size_t memory_bytes() const {
    return (offsets_.extent(0) + row_len_.extent(0) + col_idx_.extent(0)) * sizeof(int) +
           entries_.extent(0) * sizeof(real_type);
  }

  /// The CSR-AoS form back (rows in order, entries in stored order), on the device.
  csr_type to_csr() const {
    using exec = execution_space;
    Kokkos::View<int*, device_type> row_map("spk::csr::row_map", std::size_t(nrows_) + 1);
    const auto outer = outer_;
    Kokkos::parallel_for(
        "spk::compound::to_csr::lengths", impl::Range64<exec>(0, nrows_),
        KOKKOS_LAMBDA(const std::int64_t i) { row_map(i + 1) = outer.count(int(i)); });
    const std::int64_t nnz = impl::row_lengths_to_offsets<exec>(row_map);
    csr_type b(nrows_, ncols_, row_map,
               Kokkos::View<int*, device_type>(
                   Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::csr::col_idx"), nnz),
               Kokkos::View<E*, device_type>(
                   Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::csr::values"), nnz));
    const auto cols = b.col_idx();
    const auto vals = b.values();
    const auto my_cols = col_idx_;
    const auto my_entries = entries_;
    const auto g = inner_;
    Kokkos::parallel_for(
        "spk::compound::to_csr::fill", impl::Range64<exec>(0, nrows_),
        KOKKOS_LAMBDA(const std::int64_t i) {
          const std::size_t first = outer.first(int(i)), stride = outer.stride(int(i));
          const int n = outer.count(int(i));
          for (int j = 0; j < n; ++j) {
            const std::size_t k = first + std::size_t(j) * stride;
            cols(row_map(i) + j) = my_cols(k);
            real_type* dst = reinterpret_cast<real_type*>(&vals(row_map(i) + j));
            for (int c = 0; c < components; ++c) dst[c] = my_entries(g.index(k, c));
          }
        });
    return b;
  }

  /// The schedule spmv uses when none is given (e.g. one loaded from a tuning file).
  const CompoundSchedule& schedule() const { return schedule_; }
  void set_schedule(const CompoundSchedule& s) { schedule_ = s; }

  /// Kernels' state (the dynamic schedule's counter), shared by copies.
  impl::CompoundSpmvState<device_type>& state() const { return *state_; }

 private:
  int nrows_ = 0, ncols_ = 0;
  std::size_t nnz_ = 0, slots_ = 0;
  CompoundLayout layout_;
  impl::OuterGeometry<device_type> outer_;
  Kokkos::View<int*, device_type> offsets_, row_len_, col_idx_;
  Kokkos::View<real_type*, device_type> entries_;
  impl::ComponentGeometry inner_;
  CompoundSchedule schedule_;
  std::shared_ptr<impl::CompoundSpmvState<device_type>> state_ =
      std::make_shared<impl::CompoundSpmvState<device_type>>();
};

/// y = alpha * A * x + beta * y for a compound matrix (mode N only: the compound kernels compute
/// one row per thread, as the paper). x and y must have the same vector layout; beta == 0
/// overwrites y (NaN in y does not propagate). Throws std::invalid_argument for mode T/H,
/// mismatched sizes or layouts, or a schedule the device cannot launch.
template <class E, class D>
void spmv(Mode mode, const typename entry_traits<E>::scale_type& alpha,
          const CompoundMatrix<E, D>& a, const CompoundVector<E, D>& x,
          const typename entry_traits<E>::scale_type& beta, const CompoundVector<E, D>& y,
          const CompoundSchedule& schedule) {
  require(mode == Mode::N, "spk::spmv (compound)", "op = ", to_string(mode),
          " is not supported for compound matrices (only N)");
  require(x.size() == std::size_t(a.ncols()) && y.size() == std::size_t(a.nrows()),
          "spk::spmv (compound)", "x has ", x.size(), " entries and y ", y.size(), " for a ",
          a.nrows(), " x ", a.ncols(), " matrix");
  require(x.layout() == y.layout() &&
              (x.layout() != ComponentLayout::aosoa || x.width() == y.width()),
          "spk::spmv (compound)", "x is ", to_string(x.layout(), x.width()), " but y is ",
          to_string(y.layout(), y.width()), " (x and y need the same vector layout)");
  impl::compound_spmv<E>(alpha, a.outer(), a.col_idx(), a.entries(), a.inner(), x.data(),
                      x.geometry(), beta, y.data(), y.geometry(), a.nrows(),
                      resolve_schedule<typename CompoundMatrix<E, D>::execution_space>(schedule),
                      a.state());
}

/// The same with the matrix's own schedule (CompoundMatrix::schedule(), e.g. a tuned one).
template <class E, class D>
void spmv(Mode mode, const typename entry_traits<E>::scale_type& alpha,
          const CompoundMatrix<E, D>& a, const CompoundVector<E, D>& x,
          const typename entry_traits<E>::scale_type& beta, const CompoundVector<E, D>& y) {
  spmv(mode, alpha, a, x, beta, y, a.schedule());
}

/// The same with x and y as plain (AoS) views of vector entries (aliased, not copied).
template <class E, class D, class XD, class YD>
void spmv(Mode mode, const typename entry_traits<E>::scale_type& alpha,
          const CompoundMatrix<E, D>& a,
          const Kokkos::View<typename entry_traits<E>::vector_type*, XD>& x,
          const typename entry_traits<E>::scale_type& beta,
          const Kokkos::View<typename entry_traits<E>::vector_type*, YD>& y,
          const CompoundSchedule& schedule) {
  using vec = CompoundVector<E, typename CompoundMatrix<E, D>::device_type>;
  spmv(mode, alpha, a, vec::alias(x), beta, vec::alias(y), schedule);
}

/// The same with AoS views and the matrix's own schedule.
template <class E, class D, class XD, class YD>
void spmv(Mode mode, const typename entry_traits<E>::scale_type& alpha,
          const CompoundMatrix<E, D>& a,
          const Kokkos::View<typename entry_traits<E>::vector_type*, XD>& x,
          const typename entry_traits<E>::scale_type& beta,
          const Kokkos::View<typename entry_traits<E>::vector_type*, YD>& y) {
  spmv(mode, alpha, a, x, beta, y, a.schedule());
}

}  // namespace spk
