// spk/impl/format_common.hpp: what the padded formats (ELL, HLL, DIA, HDIA, HYB) share: the
// padding-limit check, row lengths and reductions used by their conversions, and the small
// device helpers and launch-parameter rules of their kernels.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include <spk/error.hpp>
#include <spk/formats/padding_limit.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/radix_sort.hpp>
#include <spk/scalar.hpp>

namespace spk {
namespace impl {

/// The most entries of a segment [offsets(t), offsets(t + 1)) (0 for no segment).
template <class ExecSpace, class Offsets>
std::int64_t longest_segment(const Offsets& offsets) {
  const std::int64_t n = std::int64_t(offsets.extent(0)) - 1;
  std::int64_t longest = 0;
  if (n <= 0) return longest;
  Kokkos::parallel_reduce(
      "spk::longest_segment", Range64<ExecSpace>(0, n),
      KOKKOS_LAMBDA(const std::int64_t t, std::int64_t& m) {
        const std::int64_t len = std::int64_t(offsets(t + 1)) - std::int64_t(offsets(t));
        if (len > m) m = len;
      },
      Kokkos::Max<std::int64_t>(longest));
  return longest;
}

// --- conversions -----------------------------------------------------------------------------

/// Throws std::invalid_argument unless `limit` is usable (a positive, finite ratio).
inline void check_limit_options(const char* where, const PaddingLimit& limit) {
  require(limit.max_csr_ratio > 0 && std::isfinite(limit.max_csr_ratio), where,
          "PaddingLimit::max_csr_ratio = ", limit.max_csr_ratio, " must be positive and finite");
}

/// The number of bytes a padded format may allocate for a CSR input of csr_bytes bytes.
inline double padding_limit_bytes(const PaddingLimit& limit, std::size_t csr_bytes) {
  return std::max(limit.max_csr_ratio * double(csr_bytes), double(limit.min_limit_bytes));
}

/// Throws PaddingLimitExceeded when `bytes` (the padded storage described by `shape`) exceeds
/// the limit for an input of csr_bytes bytes. Called before anything padded is allocated.
inline void check_padding_limit(const char* where, const std::string& shape, double bytes,
                                std::size_t csr_bytes, const PaddingLimit& limit) {
  const double allowed = padding_limit_bytes(limit, csr_bytes);
  if (bytes <= allowed) return;
  throw PaddingLimitExceeded(
      str_cat(where, ": padded storage (", shape, ") needs ", std::uint64_t(bytes), " bytes, ",
              bytes / double(csr_bytes > 0 ? csr_bytes : 1), " x the ", csr_bytes,
              " bytes of the CSR input, above the limit of ", std::uint64_t(allowed), " bytes (",
              limit.max_csr_ratio, " x CSR, PaddingLimit::max_csr_ratio; at least ",
              limit.min_limit_bytes, ", PaddingLimit::min_limit_bytes)"));
}

/// Throws std::invalid_argument when `count` does not fit the index type T (what says which
/// count, e.g. "padded entries").
template <class T>
void check_fits(const char* where, const char* what, double count) {
  if (count <= double(std::numeric_limits<T>::max())) return;
  throw_invalid_argument(where, what, " = ", std::uint64_t(count), " do not fit the index type ",
                         integer_type_name<T>(), "; use a 64-bit type");
}

/// The length of every row of a CSR matrix, on its device. O(nrows).
template <class Csr>
Kokkos::View<typename Csr::ordinal_type*, typename Csr::device_type> row_lengths(const Csr& a) {
  using O = typename Csr::ordinal_type;
  using exec = typename Csr::execution_space;
  Kokkos::View<O*, typename Csr::device_type> len(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::row_lengths"), std::size_t(a.nrows()));
  const auto row_map = a.row_map();
  Kokkos::parallel_for(
      "spk::row_lengths", Range64<exec>(0, std::int64_t(a.nrows())),
      KOKKOS_LAMBDA(const std::int64_t i) { len(i) = O(row_map(i + 1) - row_map(i)); });
  return len;
}

/// The largest entry of a rank-1 integer view (0 when it is empty), on ExecSpace.
template <class ExecSpace, class View>
std::int64_t max_entry(const View& v) {
  std::int64_t m = 0;
  Kokkos::parallel_reduce(
      "spk::max_entry", Range64<ExecSpace>(0, std::int64_t(v.extent(0))),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& acc) {
        if (std::int64_t(v(i)) > acc) acc = std::int64_t(v(i));
      },
      Kokkos::Max<std::int64_t>(m));
  return m < 0 ? 0 : m;
}

/// Number of entries of a rank-1 integer view that are >= k, on ExecSpace.
template <class ExecSpace, class View>
std::int64_t count_at_least(const View& v, std::int64_t k) {
  std::int64_t n = 0;
  Kokkos::parallel_reduce(
      "spk::count_at_least", Range64<ExecSpace>(0, std::int64_t(v.extent(0))),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& acc) {
        acc += std::int64_t(v(i)) >= k ? 1 : 0;
      },
      n);
  return n;
}

/// n rounded up to a multiple of m (m > 0).
constexpr std::size_t round_up(std::size_t n, std::size_t m) { return (n + m - 1) / m * m; }

/// Leading dimension of a column-major array of nrows rows holding both a T1 and a T2 array:
/// nrows rounded up so that every column of either array is a whole number of 128-byte lines
/// (the coalescing unit of current GPUs). The base address comes from Kokkos' allocator (on
/// CUDA 256-byte aligned, so every column then starts on a 128-byte boundary).
template <class T1, class T2>
constexpr std::size_t aligned_pitch(std::size_t nrows) {
  return round_up(nrows,
                  std::max<std::size_t>({std::size_t(1), 128 / sizeof(T1), 128 / sizeof(T2)}));
}

// --- kernels ---------------------------------------------------------------------------------

/// y = beta * y on ExecSpace; beta == 0 overwrites y with zeros (NaN in y does not propagate).
template <class ExecSpace, class S, class YView>
void scale_output(S beta, const YView& y) {
  using traits = scalar_traits<S>;
  const bool zero = beta == traits::zero();
  Kokkos::parallel_for(
      "spk::scale_output", Range64<ExecSpace>(0, std::int64_t(y.extent(0))),
      KOKKOS_LAMBDA(const std::int64_t i) { y(i) = zero ? traits::zero() : beta * y(i); });
}

/// Atomic *dst += v; complex values as two real atomics (no lock).
template <class S>
KOKKOS_INLINE_FUNCTION void atomic_accumulate(S* dst, const S& v) {
  Kokkos::atomic_add(dst, v);
}
template <class Real>
KOKKOS_INLINE_FUNCTION void atomic_accumulate(Kokkos::complex<Real>* dst,
                                              const Kokkos::complex<Real>& v) {
  Real* parts = reinterpret_cast<Real*>(dst);
  Kokkos::atomic_add(parts, v.real());
  Kokkos::atomic_add(parts + 1, v.imag());
}

/// x seen by the kernels: const and random-access (the read-only data cache on CUDA).
template <class XView>
using input_vector_t =
    Kokkos::View<const typename XView::non_const_value_type*, typename XView::array_layout,
                 typename XView::device_type, Kokkos::MemoryTraits<Kokkos::RandomAccess>>;

/// Throws std::invalid_argument when a team of team_size x vector_length threads cannot run f.
template <class Policy, class Functor>
void require_team_size(const char* where, const Policy& policy, const Functor& f, int team_size,
                       int vector_length) {
  using exec = typename Policy::execution_space;
  const int max_team = policy.team_size_max(f, Kokkos::ParallelForTag());
  require(team_size <= max_team, where, "team size ", team_size, " (threads per row ",
          vector_length, ") exceeds the maximum ", max_team, " of execution space ", exec::name());
}

/// Resolved launch of the row-parallel kernels (ELL, HLL, DIA, the ELL part of HYB): teams take
/// chunks of rows_per_team consecutive rows with team_size vectors of threads_per_row lanes.
struct RowLaunch {
  int threads_per_row = 1;
  int team_size = 1;
  int rows_per_team = 1;
  /// Padded-row kernels: entries a lane loads before it multiplies (see PaddedRowsSpmv); 0 =
  /// the kernel's default.
  int in_flight = 0;
};

/// The suffix of describe() for a resolved in_flight: "-f4", "-f8" (chunks), "-s4" (-4: four
/// in flight, the remainder one by one); none for 0 (not resolved).
inline std::string describe_in_flight(int f) {
  if (f == 4 || f == 8) return "-f" + std::to_string(f);
  return f == -4 ? "-s4" : "";
}
/// Checks an in_flight parameter (0, -4, 4 or 8).
inline void check_in_flight(const char* where, int f) {
  require(f == 0 || f == -4 || f == 4 || f == 8, where, "in_flight = ", f,
          " must be 0 (choose), -4, 4 or 8");
}
/// Checks in_flight and resolves 0 (choose): chunks of 8 on GPUs, where a row's loads then
/// take ceil(entries / 8) dependent rounds (H200, double, the large suite, HLL with one thread
/// per row: 1.09-1.18x faster than -4 on the 2D / 3D stencils and pdeN, 1.00-1.03x on the
/// 27-point stencil and the bands, 0.98x on the circuit-like matrix; four threads per row on
/// bcsstk38 x 64 1.14x; docs/PERFORMANCE.md); -4 on CPU backends.
inline int resolve_in_flight(const char* where, int f, bool gpu) {
  check_in_flight(where, f);
  return f != 0 ? f : gpu ? 8 : -4;
}

/// Default threads per row on a GPU from the mean number of entries per row. Barbieri et al.
/// found extra threads per row pay only for densely populated rows, so one thread up to a mean
/// of 48 entries, then 2, 4 and 8 (provisional, to be tuned with spk-bench).
inline int default_threads_per_row(double mean_row_len) {
  return mean_row_len >= 512 ? 8 : mean_row_len >= 128 ? 4 : mean_row_len >= 48 ? 2 : 1;
}

/// Checks the user's values (0 = choose) and fills the zeros: on GPUs threads per row from the
/// mean row length, teams of 128 threads, one row per vector; on CPU backends one thread per
/// team (Serial allows no more) taking chunks of 256 rows.
inline RowLaunch resolve_row_launch(const char* where, int threads_per_row, int team_size,
                                    int rows_per_team, double mean_row_len, bool gpu) {
  require(threads_per_row >= 0 && threads_per_row <= 32 &&
              (threads_per_row & (threads_per_row - 1)) == 0,
          where, "threads_per_row = ", threads_per_row,
          " must be 0 (choose) or a power of two <= 32");
  require(team_size >= 0 && team_size <= 1024, where, "team_size = ", team_size,
          " must be in [0, 1024]");
  require(rows_per_team >= 0, where, "rows_per_team = ", rows_per_team, " must be >= 0");
  RowLaunch r;
  r.threads_per_row =
      threads_per_row > 0 ? threads_per_row : (gpu ? default_threads_per_row(mean_row_len) : 1);
  r.team_size = team_size > 0 ? team_size : (gpu ? std::max(1, 128 / r.threads_per_row) : 1);
  r.rows_per_team = rows_per_team > 0 ? rows_per_team : (gpu ? r.team_size : 256);
  return r;
}

/// Compile-time checks of spk::spmv's vector arguments for a matrix of value type S on
/// ExecSpace.
template <class S, class ExecSpace, class XView, class YView>
constexpr bool check_vector_types() {
  static_assert(Kokkos::is_view<XView>::value && Kokkos::is_view<YView>::value,
                "spk::spmv: x and y must be Kokkos::Views");
  static_assert(std::is_same<typename YView::value_type, S>::value,
                "spk::spmv: y must hold non-const values of the matrix value type");
  static_assert(std::is_same<typename XView::non_const_value_type, S>::value,
                "spk::spmv: x must hold values of the matrix value type");
  static_assert(XView::rank == 1 && YView::rank == 1, "spk::spmv: x and y must be rank-1 views");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename YView::memory_space>::accessible,
                "spk::spmv: y must be accessible from the matrix's execution space");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename XView::memory_space>::accessible,
                "spk::spmv: x must be accessible from the matrix's execution space");
  return true;
}

/// Checks x and y against op(A)'s shape (the message names both sizes and the mode).
template <class XView, class YView>
void check_vector_sizes(const char* where, bool trans, std::int64_t nrows, std::int64_t ncols,
                        const XView& x, const YView& y, const char* mode_name) {
  const std::size_t nx = std::size_t(trans ? nrows : ncols);
  const std::size_t ny = std::size_t(trans ? ncols : nrows);
  require(x.extent(0) == nx, where, "x has ", x.extent(0), " entries, op(A) has ", nx,
          " columns (mode ", mode_name, ")");
  require(y.extent(0) == ny, where, "y has ", y.extent(0), " entries, op(A) has ", ny,
          " rows (mode ", mode_name, ")");
}

}  // namespace impl
}  // namespace spk
