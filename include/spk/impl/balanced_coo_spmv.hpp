// spk/impl/balanced_coo_spmv.hpp: SpMV of the balanced COO format. Teams take chunks of B * K
// stored entries (B threads, K consecutive entries each, loaded with 16-byte loads where K allows;
// on GPUs a warp may take several consecutive windows of 32 K, loading the next one ahead); rows
// are combined as described in coo_spmv.hpp.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <type_traits>

#include <spk/impl/coo_spmv.hpp>
#include <spk/impl/csr_spmv.hpp>
#include <spk/impl/warp.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {
namespace impl {

/// The stored arrays of a balanced COO matrix as the kernels read them.
template <class S, class O, class Device>
struct BalancedCooData {
  Kokkos::View<const O*, Device> rows;
  Kokkos::View<const O*, Device> cols;
  Kokkos::View<const S*, Device> values;
  std::int64_t n = 0;  // stored entries (a multiple of 8; the last ones extend the last row)

  /// Window w of `window` entries: its first and last rows and whether they go on.
  KOKKOS_INLINE_FUNCTION CooWindowInfo<O> window_info(std::int64_t w, std::int64_t window) const {
    const std::int64_t beg = w * window;
    const std::int64_t end = beg + window < n ? beg + window : n;
    CooWindowInfo<O> info;
    info.first_row = rows(beg);
    info.last_row = rows(end - 1);
    info.first_continues = beg > 0 && rows(beg - 1) == info.first_row;
    info.last_continues = end < n && rows(end) == info.last_row;
    return info;
  }
};

/// Window information of balanced COO windows, for coo_window_fixup.
template <class S, class O, class Device>
struct BalancedCooWindows {
  BalancedCooData<S, O, Device> a;
  std::int64_t window;
  KOKKOS_INLINE_FUNCTION CooWindowInfo<O> operator()(std::int64_t w) const {
    return a.window_info(w, window);
  }
};

/// The launch policy of BalancedCooSpmv: CooTeamPolicy (four teams of 256 threads per SM, 64
/// registers) when each warp takes its windows one after the other; with the next window loaded
/// ahead (Ahead) the loaded entries of two windows live in registers, so three teams (85
/// registers) for K <= 4 and two (128) for K = 8, as CompressedCooPolicy does.
template <class ExecSpace, int K, bool Ahead>
using BalancedCooPolicy =
    std::conditional_t<Ahead,
                       Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<256, (K >= 8 ? 2 : 3)>>,
                       CooTeamPolicy<ExecSpace>>;

/// Windows of `window` entries: on CUDA a warp takes `per_warp` consecutive windows, lane l K
/// consecutive entries of each; on the CPU a thread takes one window, `groups` runs of K. With
/// Ahead (CUDA, op = N, per_warp > 1) a warp loads the next window's rows, columns and values
/// before it gathers x for the current one and combines its rows, so a window waits for one
/// round of loads instead of two.
template <class S, class O, class Device, class XView, class YView, int K, bool Trans,
          CooAccumulate Acc, bool Ahead = false>
struct BalancedCooSpmv {
  using exec = typename Device::execution_space;
  using member = typename BalancedCooPolicy<exec, K, Ahead>::member_type;
  using warp = Warp<exec>;
  using traits = scalar_traits<S>;

  BalancedCooData<S, O, Device> a;
  random_access_t<XView> x;
  CooOutput<S, O, YView, Device, Acc> out;
  bool conj;  // op = H
  int groups;
  std::int64_t window;  // warp::size * groups * K
  std::int64_t nwindows;
  int per_warp = 1;  // consecutive windows per warp (per thread on the CPU)
  /// GPUs, op = N: the window where a row starts finishes it (BalancedCooSpmvParams::
  /// finish_rows; no row is longer than a window), its next window's first `next_lanes` runs
  /// of K entries at most holding the rest.
  bool finish = false;
  int next_lanes = 0;

  /// Output of a finishing window: a row begun in an earlier window belongs to that window.
  struct FinishedRows {
    const CooOutput<S, O, YView, Device, Acc>& out;
    KOKKOS_INLINE_FUNCTION void complete(O r, const S& s) const { out.complete(r, s); }
    KOKKOS_INLINE_FUNCTION void partial(std::int64_t, O, const S&, bool) const {}
  };

  /// Closes window w (op = N). Finishing: when its last row goes on, the last next_lanes lanes
  /// each load K entries of the next window (lane 31 its first K, lane 30 the next K, ...), add
  /// those of that row, and a shuffle scan brings their sum to lane 31, whose open row it is;
  /// the row then closes as complete, and the next window leaves it alone. Each row is written
  /// once, in the same order on every run. Else coo_close_window as the accumulation says.
  KOKKOS_INLINE_FUNCTION void close(std::int64_t w, CooLaneRows<O, S>& lane_rows) const {
    CooWindowInfo<O> info = a.window_info(w, window);
    if (!finish) {
      coo_close_window<warp>(lane_rows, info, w, false, out);
      return;
    }
    if (info.last_continues) {  // the window is full and the row goes on
      const int lane = warp::lane();
      const int g = warp::size - 1 - lane;
      const std::int64_t at = (w + 1) * window + std::int64_t(g) * K;
      S e = traits::zero();
      if (g < next_lanes && at < a.n) {
        O r[K], c[K];
        S v[K];
        warp::template load<K>(&a.rows(at), r);
        warp::template load<K>(&a.cols(at), c);
        warp::template load<K>(&a.values(at), v);
        for (int j = 0; j < K; ++j)
          if (r[j] == info.last_row) e += v[j] * x(c[j]);
      }
      for (int d = 1; d < next_lanes; d *= 2) {
        const S o = warp::shfl_up(e, d);
        if (lane >= d) e += o;
      }
      if (lane == warp::size - 1) lane_rows.sum += e;
      info.last_continues = false;
    }
    coo_close_window<warp>(lane_rows, info, w, false, FinishedRows{out});
  }

  /// This lane's run g of window w: K entries from `at` (false: past the window's end).
  KOKKOS_INLINE_FUNCTION bool load(std::int64_t w, int g, O (&r)[K], O (&c)[K], S (&v)[K]) const {
    const std::int64_t beg = w * window;
    const std::int64_t end = beg + window < a.n ? beg + window : a.n;
    const std::int64_t at = beg + (std::int64_t(warp::lane()) * groups + g) * K;
    if (at >= end) return false;  // n is a multiple of 8, so a started run of K is in bounds
    warp::template load<K>(&a.rows(at), r);
    warp::template load<K>(&a.cols(at), c);
    warp::template load<K>(&a.values(at), v);
    return true;
  }

  /// Multiplies a run of K loaded entries: scattered into y (op = T / H) or walked by row.
  template <class Complete>
  KOKKOS_INLINE_FUNCTION void multiply(const O (&r)[K], const O (&c)[K], const S (&v)[K],
                                       CooLaneRows<O, S>& lane_rows,
                                       const Complete& complete) const {
    if (Trans) {
      for (int j = 0; j < K; ++j)
        atomic_add_value(&out.y(c[j]), (conj ? traits::conj(v[j]) : v[j]) * (out.alpha * x(r[j])));
    } else {
      S p[K];
      for (int j = 0; j < K; ++j) p[j] = v[j] * x(c[j]);
      for (int j = 0; j < K; ++j) lane_rows.push(r[j], p[j], complete);
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    // Ahead is launched on GPUs only, where groups == 1: it loads run 0 of each window
    const std::int64_t w0 =
        (std::int64_t(team.league_rank()) * team.team_size() + team.team_rank()) * per_warp;
    if (w0 >= nwindows) return;  // the same for every lane of a warp
    const std::int64_t w1 = w0 + per_warp < nwindows ? w0 + per_warp : nwindows;
    const auto complete = [&](O r, const S& s) { out.complete(r, s); };
    if constexpr (Ahead) {
      O r[K], c[K];
      S v[K];
      bool on = load(w0, 0, r, c, v);
      for (std::int64_t w = w0; w < w1; ++w) {
        O rn[K], cn[K];
        S vn[K];
        const bool next = w + 1 < w1 && load(w + 1, 0, rn, cn, vn);
        CooLaneRows<O, S> lane_rows;
        if (on) multiply(r, c, v, lane_rows, complete);
        close(w, lane_rows);
        on = next;
        if (next)
          for (int j = 0; j < K; ++j) {
            r[j] = rn[j];
            c[j] = cn[j];
            v[j] = vn[j];
          }
      }
    } else {
      for (std::int64_t w = w0; w < w1; ++w) {
        CooLaneRows<O, S> lane_rows;
        for (int g = 0; g < groups; ++g) {
          O r[K], c[K];
          S v[K];
          if (!load(w, g, r, c, v)) break;
          multiply(r, c, v, lane_rows, complete);
        }
        if (!Trans) close(w, lane_rows);
      }
    }
  }
};

}  // namespace impl
}  // namespace spk
