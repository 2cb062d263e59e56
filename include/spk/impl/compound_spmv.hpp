// spk/impl/compound_spmv.hpp: the SpMV kernel of compound matrices (spk/compound/) for every
// outer, inner and vector layout and both schedules of Mueller-Roemer et al. 2020.
//
// One thread computes one row: it walks the row's slots (first + j * stride, from the outer
// layout), loads each entry's components (inner layout) and the components of x at its column
// (vector layout) and accumulates entry_traits<E>::multiply_add; then y = alpha * acc + beta * y.
// Teams of n_t threads take chunks of rows: statically (team t takes chunks t, t + T, ...) or
// dynamically from an atomic counter. The inner and vector layouts are template tags (AoS entries
// are loaded with the widest aligned loads); the outer layout is a run-time switch uniform over
// the whole launch.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>

#include <spk/compound/entry.hpp>
#include <spk/compound/layout.hpp>
#include <spk/compound/schedule.hpp>
#include <spk/error.hpp>
#include <spk/impl/device_info.hpp>
#include <spk/impl/format_common.hpp>
#include <spk/impl/warp.hpp>

namespace spk {
namespace impl {

/// Per-matrix state of the compound kernel: the dynamic schedule's chunk counter. The counter is
/// never reset: every launch takes exactly (chunks + teams) tickets (each team's last ticket is
/// past the end), so launch L starts at the sum of the earlier launches' tickets. Two products
/// on one matrix must therefore not run concurrently on different execution-space instances.
template <class Device>
struct CompoundSpmvState {
  Kokkos::View<unsigned long long, Device> counter{"spk::compound::chunk_counter"};
  unsigned long long base = 0;
};

/// Loads that may be cached as read-only (matrix entries, x).
template <class ExecSpace>
using ReadOnlyLoad = Warp<ExecSpace>;

/// Plain loads (y, which the kernel writes).
struct PlainLoad {
  template <int K, class T>
  KOKKOS_INLINE_FUNCTION static void load(const T* p, T (&out)[K]) {
    for (int j = 0; j < K; ++j) out[j] = p[j];
  }
};

template <class E, class Device, ComponentLayout Inner, ComponentLayout Vec>
struct CompoundSpmvFunctor {
  using traits = entry_traits<E>;
  using real = typename traits::real_type;
  using scale_type = typename traits::scale_type;
  using exec = typename Device::execution_space;
  using member_type = typename Kokkos::TeamPolicy<exec>::member_type;
  static constexpr int MC = traits::matrix_components;
  static constexpr int VC = traits::vector_components;

  OuterGeometry<Device> outer;
  Kokkos::View<const int*, Device> col_idx;
  Kokkos::View<const real*, Device> entries;
  ComponentGeometry entry_geom;
  Kokkos::View<const real*, Device> x;
  ComponentGeometry x_geom;
  Kokkos::View<real*, Device> y;
  ComponentGeometry y_geom;
  scale_type alpha, beta;
  bool beta_zero = false;
  int nrows = 0;
  int rows_per_chunk = 1;
  std::int64_t chunks = 0;
  bool dynamic = false;
  Kokkos::View<unsigned long long, Device> counter;
  unsigned long long base = 0;

  KOKKOS_INLINE_FUNCTION void row(const int i) const {
    using load = ReadOnlyLoad<exec>;
    real acc[VC];
    for (int c = 0; c < VC; ++c) acc[c] = real(0);
    const std::size_t first = outer.first(i), stride = outer.stride(i);
    const int n = outer.count(i);
    // One entry per step: two in flight (tried, run 2) raised registers (quaternion64: 56,
    // 50% occupancy) and was slower.
    for (int j = 0; j < n; ++j) {
      const std::size_t k = first + std::size_t(j) * stride;
      int col[1];
      load::template load<1>(col_idx.data() + k, col);
      real a[MC], xv[VC];
      load_components<Inner, load>(entries.data(), entry_geom, k, a);
      load_components<Vec, load>(x.data(), x_geom, std::size_t(col[0]), xv);
      traits::multiply_add(a, xv, acc);
    }
    traits::scale(alpha, acc);
    if (!beta_zero) {
      real yv[VC];
      load_components<Vec, PlainLoad>(y.data(), y_geom, std::size_t(i), yv);
      traits::scale(beta, yv);
      for (int c = 0; c < VC; ++c) acc[c] += yv[c];
    }
    store_components<Vec>(y.data(), y_geom, std::size_t(i), acc);
  }

  KOKKOS_INLINE_FUNCTION void chunk(const member_type& team, const std::int64_t c) const {
    const std::int64_t begin = c * rows_per_chunk;
    const std::int64_t end = begin + rows_per_chunk < nrows ? begin + rows_per_chunk : nrows;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, int(begin), int(end)),
                         [&](const int i) { row(i); });
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    if (!dynamic) {
      for (std::int64_t c = team.league_rank(); c < chunks; c += team.league_size())
        chunk(team, c);
      return;
    }
    for (;;) {
      std::int64_t c = 0;
      Kokkos::single(
          Kokkos::PerTeam(team),
          [&](std::int64_t& ticket) {
            ticket = std::int64_t(Kokkos::atomic_fetch_add(&counter(), 1ull) - base);
          },
          c);
      if (c >= chunks) break;
      chunk(team, c);
    }
  }
};

/// The kernel of one (inner, vector) layout pair.
template <ComponentLayout Inner, ComponentLayout Vec, class E, class Device, class Common>
void launch_compound_spmv(const Common& common, const CompoundSchedule& s, int league) {
  using exec = typename Device::execution_space;
  CompoundSpmvFunctor<E, Device, Inner, Vec> f;
  static_cast<void>(common(f));
  // The largest team this kernel can run, queried once per kernel (a product of a small matrix
  // takes microseconds; the query is a driver call). Checked before constructing the policy:
  // host spaces abort on a policy with too large a team.
  static const int max_team =
      Kokkos::TeamPolicy<exec>(1, 1).team_size_max(f, Kokkos::ParallelForTag());
  require(s.threads_per_team <= max_team, "spk::spmv (compound)", "team size ",
          s.threads_per_team, " exceeds the maximum ", max_team, " of execution space ",
          exec::name());
  Kokkos::parallel_for("spk::compound_spmv", Kokkos::TeamPolicy<exec>(league, s.threads_per_team),
                       f);
}

/// y = alpha * A * x + beta * y for the arrays of a compound matrix: dispatches to the kernel of
/// the inner and vector layouts. `s` is resolved (resolve_schedule).
template <class E, class Device>
void compound_spmv(const typename entry_traits<E>::scale_type& alpha,
                   const OuterGeometry<Device>& outer, const Kokkos::View<int*, Device>& col_idx,
                   const Kokkos::View<typename entry_traits<E>::real_type*, Device>& entries,
                   const ComponentGeometry& entry_geom,
                   const Kokkos::View<typename entry_traits<E>::real_type*, Device>& x,
                   const ComponentGeometry& x_geom,
                   const typename entry_traits<E>::scale_type& beta,
                   const Kokkos::View<typename entry_traits<E>::real_type*, Device>& y,
                   const ComponentGeometry& y_geom, int nrows, const CompoundSchedule& s,
                   CompoundSpmvState<Device>& state) {
  using exec = typename Device::execution_space;
  require(s.threads_per_team > 0 && s.teams_per_sm > 0 && s.rows_per_chunk > 0,
          "spk::spmv (compound)", "unresolved schedule ", to_string(s));
  if (nrows == 0) return;
  const std::int64_t chunks = (std::int64_t(nrows) + s.rows_per_chunk - 1) / s.rows_per_chunk;
  static const int multiprocessors = multiprocessor_count<exec>();  // one device per process
  const int league = multiprocessors * s.teams_per_sm;
  const bool dynamic = s.kind == ScheduleKind::dynamic_chunks;
  const unsigned long long base = state.base;
  const auto common = [&](auto& f) {
    f.outer = outer;
    f.col_idx = col_idx;
    f.entries = entries;
    f.entry_geom = entry_geom;
    f.x = x;
    f.x_geom = x_geom;
    f.y = y;
    f.y_geom = y_geom;
    f.alpha = alpha;
    f.beta = beta;
    f.beta_zero = beta == typename entry_traits<E>::scale_type(0);
    f.nrows = nrows;
    f.rows_per_chunk = s.rows_per_chunk;
    f.chunks = chunks;
    f.dynamic = dynamic;
    f.counter = state.counter;
    f.base = base;
    return 0;
  };
  using L = ComponentLayout;
  const auto by_vector = [&](auto inner_tag) {
    constexpr L inner = decltype(inner_tag)::layout;
    switch (x_geom.layout) {
      case L::aos: return launch_compound_spmv<inner, L::aos, E, Device>(common, s, league);
      case L::soa: return launch_compound_spmv<inner, L::soa, E, Device>(common, s, league);
      case L::aosoa: return launch_compound_spmv<inner, L::aosoa, E, Device>(common, s, league);
    }
  };
  switch (entry_geom.layout) {
    case L::aos: by_vector(ComponentTag<L::aos>{}); break;
    case L::soa: by_vector(ComponentTag<L::soa>{}); break;
    case L::aosoa: by_vector(ComponentTag<L::aosoa>{}); break;
  }
  // counted only once the launch was accepted (a throwing launch takes no tickets)
  if (dynamic) state.base += static_cast<unsigned long long>(chunks + league);
}

}  // namespace impl
}  // namespace spk
