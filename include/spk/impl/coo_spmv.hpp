// spk/impl/coo_spmv.hpp: the SpMV machinery shared by the balanced and the compressed COO
// formats (Aliaga, Anzt, Quintana-Orti, Tomas, Tsai 2020).
//
// The stored entries are in row-major order and every row has at least one (an empty row holds an
// explicit zero), so consecutive entries belong to the same row or to the next one. They are cut
// into windows: on CUDA a window is one warp's share of a team's chunk (32 lanes, each K
// consecutive entries, or one K-entry slot of the compressed format); on the CPU backends a window
// is a whole chunk taken by one thread. A lane multiplies its entries and walks them in order
// (CooLaneRows): rows that start and end inside its entries are complete and written at once;
// its first and last rows may continue in the neighbouring lanes. Those are combined by a
// segmented scan over the warp's lanes keyed by row (shuffles), and each row is then closed by
// exactly one lane (coo_close_window). Rows inside a window are written once, y = alpha s +
// beta y. A row that crosses windows is, by default, scaled by beta in a short pre-pass and
// gets every window's part by one atomic add (CooAccumulate::direct); with
// CooAccumulate::deterministic the window where it starts keeps `head`, every later window it
// touches keeps `carry`, and a fix-up kernel adds them in order and writes y once (bitwise
// reproducible, but a row crossing many windows is summed by one thread). The paper's scheme (y
// scaled by beta first, every row segment added with an atomic) is CooAccumulate::atomic.
// op = T / H scatters every product into y with atomics after y = beta * y.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>
#include <type_traits>

#include <spk/error.hpp>
#include <spk/impl/csr_spmv.hpp>
#include <spk/impl/warp.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {

/// How SpMV (op = N) combines the partial sums of rows shared by several windows (see
/// impl/coo_spmv.hpp).
enum class CooAccumulate {
  direct,        ///< rows inside a window written once; crossing rows: pre-scaled, atomic adds
  atomic,        ///< y = beta * y first, then one atomic add per row segment (the paper's scheme)
  deterministic  ///< no atomics: crossing rows completed in order by a fix-up kernel
};

inline const char* to_string(CooAccumulate a) {
  return a == CooAccumulate::direct ? "direct"
         : a == CooAccumulate::atomic ? "atomic"
                                      : "deterministic";
}

namespace impl {

/// Where a window's first and last rows lie relative to the neighbouring windows.
template <class O>
struct CooWindowInfo {
  O first_row = 0;
  O last_row = 0;
  bool first_continues = false;  ///< the first row has entries in the previous window
  bool last_continues = false;   ///< the last row has entries in the next window
};

/// A lane's walk over its products in order: the first and last rows it touches with their
/// partial sums; the rows strictly between are complete and handed to `complete` at once.
template <class O, class S>
struct CooLaneRows {
  bool any = false;    ///< the lane has entries
  bool multi = false;  ///< they touch more than one row
  O first_row = 0;
  O row = 0;  ///< the last (still open) row
  S first_sum = scalar_traits<S>::zero();
  S sum = scalar_traits<S>::zero();

  template <class Complete>
  KOKKOS_INLINE_FUNCTION void push(O r, const S& p, const Complete& complete) {
    if (!any) {
      any = true;
      first_row = row = r;
      sum = p;
    } else if (r == row) {
      sum += p;
    } else {
      if (multi)
        complete(row, sum);
      else
        first_sum = sum;
      multi = true;
      row = r;
      sum = p;
    }
  }
};

/// Where rows go once summed: y directly (complete rows), or the window's partial sums (see
/// the file comment); Acc is the CooAccumulate mode.
template <class S, class O, class YView, class Device, CooAccumulate Acc>
struct CooOutput {
  YView y;
  S alpha;
  S beta;
  bool beta_zero;
  Kokkos::View<S*, Device> carry;  // per window: the part of a row begun in an earlier window
  Kokkos::View<S*, Device> head;   // per window: the part of a row that goes on after it

  /// Row r is summed completely by the caller (no other window holds entries of it).
  KOKKOS_INLINE_FUNCTION void complete(O r, const S& s) const {
    if (Acc == CooAccumulate::atomic)
      y(r) += alpha * s;  // y was scaled by beta before; r belongs to this lane alone
    else
      y(r) = beta_zero ? alpha * s : alpha * s + beta * y(r);
  }
  /// This window's part s of row r, which other windows share; `starts` when r begins here.
  KOKKOS_INLINE_FUNCTION void partial(std::int64_t w, O r, const S& s, bool starts) const {
    if (Acc != CooAccumulate::deterministic)
      atomic_add_value(&y(r), alpha * s);  // r was scaled by beta before
    else if (starts)
      head(w) = s;
    else
      carry(w) = s;
  }
};

/// Closes window w after every lane has walked its entries (see the file comment). `uniform`
/// says every lane's entries lie in one row, known beforehand (a plain reduction suffices).
/// ShortRows: when no row spans more than two lanes (checked by a vote), each lane closes its
/// open row with the next lane's first part (two shuffles) instead of the keyed scan; for
/// kernels whose lanes often start rows (compressed COO's packed layout), compiled only there.
template <class Warp, bool ShortRows = false, class O, class S, class Out>
KOKKOS_INLINE_FUNCTION void coo_close_window(const CooLaneRows<O, S>& lane_rows,
                                             const CooWindowInfo<O>& win, std::int64_t w,
                                             bool uniform, const Out& out) {
  using traits = scalar_traits<S>;
  using key_type = std::conditional_t<(sizeof(O) <= 4), int, long long>;
  const int lane = Warp::lane();
  const auto starts_here = [&](O r) { return !(r == win.first_row && win.first_continues); };
  const auto close = [&](O r, const S& s) {
    if (starts_here(r))
      out.complete(r, s);
    else
      out.partial(w, r, s, false);
  };
  // the open (last) row of each lane, keyed by row; idle lanes get a key no lane shares
  const key_type key = lane_rows.any ? key_type(lane_rows.row) : key_type(-1 - lane);
  // the previous lane's key (read once: the vote and the closing below both use it)
  const key_type before = uniform ? key : Warp::shfl_up(key, 1);
  if (!uniform) {
    // No lane's first row is the open row of the lane before (e.g. every lane holds whole
    // rows): no row spans lanes, so each lane closes its own rows and the keyed scan below,
    // which would add nothing to them, is skipped (one vote instead of 2 log2(W) + 2
    // shuffles). The same rows, values and complete / partial choices (a first row's sum is
    // no longer added to +0, so a -0 sum stays -0). Relies, as the scan does, on the
    // callers' lanes taking their entries in order, idle lanes (no entries) only at the end.
    const bool joins =
        lane > 0 && lane_rows.any && before >= 0 && before == key_type(lane_rows.first_row);
    if (Warp::last_true(joins) < 0) {
      if (!lane_rows.any) return;
      if (lane_rows.multi) close(lane_rows.first_row, lane_rows.first_sum);
      if (lane == Warp::size - 1 && win.last_continues)
        out.partial(w, lane_rows.row, lane_rows.sum, starts_here(lane_rows.row));
      else
        close(lane_rows.row, lane_rows.sum);
      return;
    }
    // rows of at most two lanes: no lane lies inside a row that the lane before it began, so
    // a row that goes on past its lane ends in the next one, and the lane where it began
    // closes it with the next lane's part of it
    if (ShortRows && Warp::last_true(joins && !lane_rows.multi) < 0) {
      const int next = lane + 1 < Warp::size ? lane + 1 : lane;
      const S next_part = Warp::shfl(lane_rows.multi ? lane_rows.first_sum : lane_rows.sum, next);
      const bool next_joins = Warp::shfl(joins ? 1 : 0, next) != 0 && next != lane;
      if (!lane_rows.any) return;
      if (lane_rows.multi && !joins) close(lane_rows.first_row, lane_rows.first_sum);
      const S total = next_joins ? lane_rows.sum + next_part : lane_rows.sum;
      if (lane == Warp::size - 1 && win.last_continues)
        out.partial(w, lane_rows.row, total, starts_here(lane_rows.row));
      else
        close(lane_rows.row, total);
      return;
    }
  }
  S s = lane_rows.any ? lane_rows.sum : traits::zero();
  for (int d = 1; d < Warp::size; d *= 2) {
    const S other = Warp::shfl_up(s, d);
    const bool same = uniform || Warp::shfl_up(key, d) == key;
    if (lane >= d && same) s += other;
  }
  if (uniform) {  // one row for all lanes: the last lane holds the window's sum
    if (lane == Warp::size - 1 && lane_rows.any) {
      if (win.last_continues)
        out.partial(w, lane_rows.row, s, starts_here(lane_rows.row));
      else
        close(lane_rows.row, s);
    }
    return;
  }
  const S prev_s = Warp::shfl_up(s, 1);
  const key_type prev_key = before;
  const bool has_prev = lane > 0 && prev_key >= 0;
  // a lane that moves on to other rows closes its first row, adding what the lanes before it
  // hold of that row
  if (lane_rows.any && lane_rows.multi)
    close(lane_rows.first_row,
          lane_rows.first_sum +
              (has_prev && prev_key == key_type(lane_rows.first_row) ? prev_s : traits::zero()));
  // the previous lane's open row ended with that lane
  if (has_prev && (!lane_rows.any || prev_key != key_type(lane_rows.first_row)))
    close(O(prev_key), prev_s);
  // the last lane's open row reaches the window's end
  if (lane == Warp::size - 1 && lane_rows.any) {
    if (win.last_continues)
      out.partial(w, lane_rows.row, s, starts_here(lane_rows.row));
    else
      close(lane_rows.row, s);
  }
}

/// Completes the rows that cross windows (CooAccumulate::deterministic): for every window where such a
/// row starts, y(r) = alpha * (head + the carries of the later windows it reaches) + beta * y(r).
/// `info(w)` returns window w's CooWindowInfo. O(nwindows + crossing rows' windows) work.
template <class ExecSpace, class S, class Info, class Device, class YView>
void coo_window_fixup(std::int64_t nwindows, const Info& info,
                      const Kokkos::View<S*, Device>& carry, const Kokkos::View<S*, Device>& head,
                      S alpha, S beta, const YView& y) {
  const bool beta_zero = beta == scalar_traits<S>::zero();
  Kokkos::parallel_for(
      "spk::coo_window_fixup", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
                                   0, nwindows),
      KOKKOS_LAMBDA(const std::int64_t w) {
        const auto wi = info(w);
        if (!wi.last_continues) return;
        if (wi.first_continues && wi.first_row == wi.last_row) return;  // begun earlier
        const auto r = wi.last_row;
        S sum = head(w);
        for (std::int64_t v = w + 1; v < nwindows; ++v) {
          sum += carry(v);
          const auto vi = info(v);
          if (!(vi.last_row == r && vi.last_continues)) break;
        }
        y(r) = beta_zero ? alpha * sum : alpha * sum + beta * y(r);
      });
}

/// y(r) = beta * y(r) for every row r that crosses windows (CooAccumulate::direct, before the
/// product), once per row: by the window where it starts. O(nwindows).
template <class ExecSpace, class S, class Info, class YView>
void coo_prescale_crossing_rows(std::int64_t nwindows, const Info& info, S beta, const YView& y) {
  const bool beta_zero = beta == scalar_traits<S>::zero();
  Kokkos::parallel_for(
      "spk::coo_prescale_crossing_rows",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(0, nwindows),
      KOKKOS_LAMBDA(const std::int64_t w) {
        const auto wi = info(w);
        if (!wi.last_continues) return;
        if (wi.first_continues && wi.first_row == wi.last_row) return;  // begun earlier
        y(wi.last_row) = beta_zero ? scalar_traits<S>::zero() : beta * y(wi.last_row);
      });
}

/// The per-window partial sums of CooAccumulate::deterministic, kept with a matrix and reused
/// while large enough (two products on one matrix must not run concurrently).
template <class S, class Device>
struct CooPartials {
  Kokkos::View<S*, Device> carry;
  Kokkos::View<S*, Device> head;
  void reserve(std::int64_t nwindows) {
    if (std::int64_t(carry.extent(0)) >= nwindows) return;
    carry = Kokkos::View<S*, Device>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::coo::carry"), std::size_t(nwindows));
    head = Kokkos::View<S*, Device>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::coo::head"), std::size_t(nwindows));
  }
};

/// The runtime choices of a COO product as compile-time constants: calls
/// launch(std::integral_constant<int, K>, std::bool_constant<op != N>,
/// std::integral_constant<CooAccumulate, mode>) for k in {1, 2, 4, 8} (op = T / H always scatter
/// with atomics). First y = beta y where the kernels add into y (op = T / H, the atomic mode) or
/// where nothing runs (`empty`: no rows or no columns).
template <class ExecSpace, class S, class YView, class Launch>
void coo_dispatch(Mode mode, CooAccumulate acc, int k, bool empty, S beta, const YView& y,
                  const Launch& launch) {
  const bool trans = mode != Mode::N;
  if (trans || acc == CooAccumulate::atomic || empty) scale_vector(ExecSpace(), beta, y);
  if (empty) return;
  const auto with_k = [&](auto kc) {
    using A = CooAccumulate;
    if (trans)
      launch(kc, std::true_type{}, std::integral_constant<A, A::atomic>{});
    else if (acc == A::atomic)
      launch(kc, std::false_type{}, std::integral_constant<A, A::atomic>{});
    else if (acc == A::deterministic)
      launch(kc, std::false_type{}, std::integral_constant<A, A::deterministic>{});
    else
      launch(kc, std::false_type{}, std::integral_constant<A, A::direct>{});
  };
  switch (k) {
    case 1: with_k(std::integral_constant<int, 1>{}); break;
    case 2: with_k(std::integral_constant<int, 2>{}); break;
    case 4: with_k(std::integral_constant<int, 4>{}); break;
    default: with_k(std::integral_constant<int, 8>{}); break;
  }
}

/// The launch policy of the balanced COO kernel with one window per warp: teams of at most 256
/// threads, and registers bounded so that four such teams fit an SM (64 per thread). With the
/// next window loaded ahead it takes BalancedCooPolicy, and the compressed COO kernel its own
/// (CompressedCooPolicy).
template <class ExecSpace>
using CooTeamPolicy = Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<256, 4>>;

/// Checks the launch of a chunked COO kernel: entries (or slots) per thread K in {1, 2, 4, 8}
/// and threads per team B a multiple of 32 in [32, max_threads].
inline void check_coo_launch(const char* where, int threads, int k, int max_threads) {
  require(k == 1 || k == 2 || k == 4 || k == 8, where, "entries per thread K = ", k,
          " must be 1, 2, 4 or 8");
  require(threads >= 32 && threads <= max_threads && threads % 32 == 0, where,
          "threads per team B = ", threads, " must be a multiple of 32 in [32, ", max_threads, "]");
}

}  // namespace impl
}  // namespace spk
