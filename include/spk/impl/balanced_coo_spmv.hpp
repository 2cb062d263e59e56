// spk/impl/balanced_coo_spmv.hpp: SpMV of the balanced COO format. Teams take chunks of B * K
// stored entries (B threads, K consecutive entries each, loaded with 16-byte loads where K allows);
// rows are combined as described in coo_spmv.hpp.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>

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

/// One window per warp (CUDA) or per thread (CPU): lane l takes `groups` runs of K entries.
template <class S, class O, class Device, class XView, class YView, int K, bool Trans,
          CooAccumulate Acc>
struct BalancedCooSpmv {
  using exec = typename Device::execution_space;
  using member = typename CooTeamPolicy<exec>::member_type;
  using warp = Warp<exec>;
  using traits = scalar_traits<S>;

  BalancedCooData<S, O, Device> a;
  random_access_t<XView> x;
  CooOutput<S, O, YView, Device, Acc> out;
  bool conj;  // op = H
  int groups;
  std::int64_t window;  // warp::size * groups * K
  std::int64_t nwindows;

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const std::int64_t w = std::int64_t(team.league_rank()) * team.team_size() + team.team_rank();
    if (w >= nwindows) return;  // the same for every lane of a warp
    const std::int64_t beg = w * window;
    const std::int64_t end = beg + window < a.n ? beg + window : a.n;
    const std::int64_t first = beg + std::int64_t(warp::lane()) * groups * K;
    CooLaneRows<O, S> lane_rows;
    const auto complete = [&](O r, const S& s) { out.complete(r, s); };
    for (int g = 0; g < groups; ++g) {
      const std::int64_t at = first + std::int64_t(g) * K;
      if (at >= end) break;  // n is a multiple of 8, so a started run of K is in bounds
      O r[K], c[K];
      S v[K];
      warp::template load<K>(&a.rows(at), r);
      warp::template load<K>(&a.cols(at), c);
      warp::template load<K>(&a.values(at), v);
      if (Trans) {
        for (int j = 0; j < K; ++j)
          atomic_add_value(&out.y(c[j]), (conj ? traits::conj(v[j]) : v[j]) * (out.alpha * x(r[j])));
      } else {
        S p[K];
        for (int j = 0; j < K; ++j) p[j] = v[j] * x(c[j]);
        for (int j = 0; j < K; ++j) lane_rows.push(r[j], p[j], complete);
      }
    }
    if (Trans) return;
    coo_close_window<warp>(lane_rows, a.window_info(w, window), w, false, out);
  }
};

}  // namespace impl
}  // namespace spk
