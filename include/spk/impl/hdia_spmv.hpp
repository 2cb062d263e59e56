// spk/impl/hdia_spmv.hpp: SpMV of hacked DIA (HDIA) and its launch parameters.
//
// HdiaSpmv: a team takes hacks_per_team consecutive hacks. Their diagonals are consecutive in the
// offsets array; the team copies those offsets into team scratch memory once, behind a single
// barrier, so each offset is read from global memory once per team instead of once per row. A
// team whose hacks hold more diagonals than the scratch holds (scratch_diags) reads its offsets
// from global memory instead: the choice is uniform over the team, so no thread diverges.
// Then each vector of threads_per_row lanes computes rows of the team's hacks: a row's hack and
// local row come from its rank in the team (a shift when hack_size is a power of two, 32-bit
// integers), its diagonals from two hack_offsets loads. Value (d, r) of hack h sits at
// d * hack_size + r (d counting the matrix's diagonals), so the rows of a hack read consecutive
// values and consecutive x entries of each diagonal. One lane per row (the default) keeps the
// loads of four diagonals in flight and writes y(i) directly: no partial sums in scratch and no
// barrier after the offsets. op = T / H scatters each product into y(i + offset) with atomics
// after y = beta y (the rows of a hack hit consecutive entries).
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include <spk/error.hpp>
#include <spk/impl/format_common.hpp>
#include <spk/impl/warp.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {

/// Launch parameters of HDIA SpMV. Zero means "choose" (see impl::resolve_hdia_launch).
struct HdiaSpmvParams {
  int threads_per_row = 0;  ///< lanes per row (splitting the hack's diagonals): 1, 2, ..., 32
  int team_size = 0;        ///< vectors (rows in flight) per team
  int hacks_per_team = 0;   ///< consecutive hacks a team takes
  int scratch_diags = 0;    ///< diagonal offsets a team can hold in scratch memory
  /// One thread per row: diagonals whose loads a thread issues before it multiplies, 4 or 8
  /// (the last 1 to in_flight - 1 diagonals of a hack predicated); 0 = choose (8 on GPUs, 4 on
  /// CPU backends).
  int in_flight = 0;
};

/// A short name of HDIA launch parameters, e.g. "tpr1-t128-h4-s28".
inline std::string describe(const HdiaSpmvParams& p) {
  return "tpr" + std::to_string(p.threads_per_row) + "-t" + std::to_string(p.team_size) + "-h" +
         std::to_string(p.hacks_per_team) + "-s" + std::to_string(p.scratch_diags) +
         (p.in_flight == 8 ? "-f8" : "");
}

namespace impl {

/// Checks the user's values and fills the zeros. threads_per_row: from the mean diagonals per
/// hack on GPUs (as ELL's threads per row from the row length), 1 on CPU backends.
/// hacks_per_team: 128 rows per team on GPUs (4 hacks of 32, as DIA's teams), 256 on CPU
/// backends. team_size: one row per vector on GPUs, up to 256 threads per team; 1 on CPU
/// backends (a team is one thread). scratch_diags: what the team's hacks can hold (max
/// diagonals per hack x hacks_per_team), at most 1024; a team with more reads its offsets from
/// global memory. O(1).
inline HdiaSpmvParams resolve_hdia_launch(HdiaSpmvParams p, int hack_size,
                                          std::int64_t max_hack_diags, double mean_hack_diags,
                                          bool gpu) {
  const char* where = "spk::spmv (HDIA)";
  require(p.threads_per_row >= 0 && p.threads_per_row <= 32 &&
              (p.threads_per_row & (p.threads_per_row - 1)) == 0,
          where, "threads_per_row = ", p.threads_per_row,
          " must be 0 (choose) or a power of two <= 32");
  require(p.team_size >= 0 && p.team_size <= 1024, where, "team_size = ", p.team_size,
          " must be in [0, 1024]");
  require(p.hacks_per_team >= 0 && p.hacks_per_team <= (1 << 20), where,
          "hacks_per_team = ", p.hacks_per_team, " must be in [0, 2^20]");
  require(p.scratch_diags >= 0, where, "scratch_diags = ", p.scratch_diags, " must be >= 0");
  require(p.in_flight == 0 || p.in_flight == 4 || p.in_flight == 8, where,
          "in_flight = ", p.in_flight, " must be 0 (choose), 4 or 8");
  if (p.in_flight == 0) p.in_flight = gpu ? 8 : 4;
  if (p.threads_per_row == 0)
    p.threads_per_row = gpu ? default_threads_per_row(mean_hack_diags) : 1;
  if (p.hacks_per_team == 0) p.hacks_per_team = std::max(1, (gpu ? 128 : 256) / hack_size);
  if (p.team_size == 0)
    p.team_size =
        gpu ? std::max(1, std::min(p.hacks_per_team * hack_size, 256 / p.threads_per_row)) : 1;
  if (p.scratch_diags == 0)
    p.scratch_diags = int(
        std::max<std::int64_t>(1, std::min<std::int64_t>(max_hack_diags * p.hacks_per_team, 1024)));
  return p;
}

template <class S, class O, class F, class Device, class XView, class YView>
struct HdiaSpmv {
  using exec = typename Device::execution_space;
  using member = typename Kokkos::TeamPolicy<exec>::member_type;
  using traits = scalar_traits<S>;
  using scratch_offsets =
      Kokkos::View<O*, typename exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  // Column arithmetic: j = i + offset in unsigned modular arithmetic of O's width, so one
  // unsigned compare rejects columns on either side (|offset| < nrows + ncols <= 2^32 for 32-bit
  // ordinals).
  using U = std::conditional_t<(sizeof(O) <= 4), std::uint32_t, std::uint64_t>;

  Kokkos::View<const S*, Device> values;
  Kokkos::View<const O*, Device> offsets;
  Kokkos::View<const F*, Device> hack_offsets;
  input_vector_t<XView> x;
  YView y;
  S alpha, beta;
  bool beta_zero;
  bool scatter;  // op = T / H
  bool conj;     // op = H
  std::int64_t nrows;
  O ncols;
  std::int64_t n_hacks;
  int hack_size;
  int hack_shift;  // log2(hack_size), or -1 when it is not a power of two
  int hacks_per_team;
  int capacity;  // scratch_diags
  int threads_per_row;
  int scratch_level;
  int in_flight;  // 8: row_sum_chunks; else row_sum (four in flight)
  bool warp_staging = false;  // a hack is a warp: each warp stages its own hack's offsets

  /// Per-warp staging (op = N, one row per thread, hack_size == warp size, a thread per row of
  /// the team): warp w stages the offsets of hack h0 + w in its part of the team scratch and
  /// synchronises only itself (__syncwarp), so no warp waits for the others; a hack with more
  /// offsets than its part reads them from global memory (the same for the whole warp).
  KOKKOS_INLINE_FUNCTION void warp_rows(const member& team, const std::int64_t h0,
                                        const std::int64_t h1, const std::int64_t r0) const {
    using warp = Warp<exec>;
    const int t = team.team_rank();
    const int hk = t / warp::size;
    const int lane = t - hk * warp::size;
    if (h0 + hk >= h1) return;  // the same for the whole warp
    const F hb = hack_offsets(h0 + hk);
    const F he = hack_offsets(h0 + hk + 1);
    const int part = capacity / hacks_per_team;
    const scratch_offsets all(team.team_scratch(scratch_level), std::size_t(capacity));
    const std::int64_t i = r0 + t;
    S sum = traits::zero();
    if (std::int64_t(he - hb) <= part) {
      const scratch_offsets mine(all.data() + std::size_t(hk) * std::size_t(part),
                                 std::size_t(part));
      for (int k = lane; k < int(he - hb); k += warp::size) mine(k) = offsets(hb + k);
      warp::sync();
      if (i < nrows) sum = row_dot<true>(i, lane, hb, he, mine, hb);
    } else if (i < nrows) {
      sum = row_dot<false>(i, lane, hb, he, scratch_offsets(), hb);
    }
    if (i < nrows) y(i) = beta_zero ? alpha * sum : alpha * sum + beta * y(i);
  }

  /// Scratch bytes per team: the offsets of its hacks.
  static std::size_t scratch_bytes(int capacity) {
    return scratch_offsets::shmem_size(std::size_t(capacity));
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const std::int64_t h0 = std::int64_t(team.league_rank()) * hacks_per_team;
    const std::int64_t h1 = h0 + hacks_per_team < n_hacks ? h0 + hacks_per_team : n_hacks;
    const std::int64_t r0 = h0 * hack_size;
    const int rows = int((h1 * hack_size < nrows ? h1 * hack_size : nrows) - r0);
    if (warp_staging) {
      warp_rows(team, h0, h1, r0);
      return;
    }
    const F d0 = hack_offsets(h0);
    const std::int64_t n_offsets = std::int64_t(hack_offsets(h1) - d0);
    if (n_offsets <= capacity) {
      const scratch_offsets offs(team.team_scratch(scratch_level), std::size_t(capacity));
      Kokkos::parallel_for(Kokkos::TeamVectorRange(team, int(n_offsets)),
                           [&](const int k) { offs(k) = offsets(d0 + k); });
      team.team_barrier();
      rows_of_team<true>(team, h0, r0, rows, offs, d0);
    } else {
      rows_of_team<false>(team, h0, r0, rows, scratch_offsets(), d0);
    }
  }

  /// The rows of the team: offsets of diagonal d from scratch (offs(d - d0)) when Staged, from
  /// global memory otherwise.
  template <bool Staged>
  KOKKOS_INLINE_FUNCTION void rows_of_team(const member& team, const std::int64_t h0,
                                           const std::int64_t r0, const int rows,
                                           const scratch_offsets& offs, const F d0) const {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](const int t) {
      const int hk = hack_shift >= 0 ? t >> hack_shift : t / hack_size;
      const int lr = t - hk * hack_size;
      const std::int64_t i = r0 + t;
      const F hb = hack_offsets(h0 + hk);
      const F he = hack_offsets(h0 + hk + 1);
      if (scatter) {
        scatter_row<Staged>(team, i, lr, hb, he, offs, d0);
        return;
      }
      S sum = traits::zero();
      if (threads_per_row == 1) {
        sum = row_dot<Staged>(i, lr, hb, he, offs, d0);
      } else {
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, int(he - hb)),
            [&](const int k, S& s) {
              const F d = hb + k;
              const U j = U(i) + U(offset<Staged>(d, offs, d0));
              if (j < U(ncols)) s += values(std::size_t(d) * hack_size + lr) * x(j);
            },
            sum);
      }
      Kokkos::single(Kokkos::PerThread(team), [&]() {
        y(i) = beta_zero ? alpha * sum : alpha * sum + beta * y(i);
      });
    });
  }

  template <bool Staged>
  KOKKOS_FORCEINLINE_FUNCTION O offset(const F d, const scratch_offsets& offs, const F d0) const {
    if constexpr (Staged) {
      return offs(d - d0);
    } else {
      (void)offs;
      (void)d0;
      return offsets(d);
    }
  }

  /// sum over the diagonals [hb, he) of row i (local row lr) of A(i, i + offset) x(i + offset),
  /// by one thread with four diagonals in flight.
  template <bool Staged>
  KOKKOS_INLINE_FUNCTION S row_sum(const std::int64_t i, const int lr, const F hb, const F he,
                                   const scratch_offsets& offs, const F d0) const {
    const std::size_t step = std::size_t(hack_size);
    const S* v = values.data();
    std::size_t e = std::size_t(hb) * step + std::size_t(lr);
    const U ui = U(i), nc = U(ncols);
    S s0 = traits::zero(), s1 = traits::zero(), s2 = traits::zero(), s3 = traits::zero();
    F d = hb;
    for (; d + 4 <= he; d += 4, e += 4 * step) {
      const U j0 = ui + U(offset<Staged>(d, offs, d0));
      const U j1 = ui + U(offset<Staged>(d + 1, offs, d0));
      const U j2 = ui + U(offset<Staged>(d + 2, offs, d0));
      const U j3 = ui + U(offset<Staged>(d + 3, offs, d0));
      const S v0 = v[e], v1 = v[e + step], v2 = v[e + 2 * step], v3 = v[e + 3 * step];
      if (j0 < nc) s0 += v0 * x(j0);
      if (j1 < nc) s1 += v1 * x(j1);
      if (j2 < nc) s2 += v2 * x(j2);
      if (j3 < nc) s3 += v3 * x(j3);
    }
    // The last 0 to 3 diagonals, guarded one by one so that their loads are in flight together.
    if (d < he) {
      const U j = ui + U(offset<Staged>(d, offs, d0));
      if (j < nc) s0 += v[e] * x(j);
    }
    if (d + 1 < he) {
      const U j = ui + U(offset<Staged>(d + 1, offs, d0));
      if (j < nc) s1 += v[e + step] * x(j);
    }
    if (d + 2 < he) {
      const U j = ui + U(offset<Staged>(d + 2, offs, d0));
      if (j < nc) s2 += v[e + 2 * step] * x(j);
    }
    return (s0 + s1) + (s2 + s3);
  }

  /// As row_sum with chunks of 8 diagonals: every load of a chunk issued before its first
  /// multiply-add, the last 1 to 7 diagonals too (those past he load diagonal d again and add
  /// nothing), so a row costs ceil(diagonals / 8) dependent rounds of loads.
  template <bool Staged>
  KOKKOS_INLINE_FUNCTION S row_sum_chunks(const std::int64_t i, const int lr, const F hb,
                                          const F he, const scratch_offsets& offs,
                                          const F d0) const {
    constexpr int W = 8;
    const std::size_t step = std::size_t(hack_size);
    const S* v = values.data();
    std::size_t e = std::size_t(hb) * step + std::size_t(lr);
    const U ui = U(i), nc = U(ncols);
    S s0 = traits::zero(), s1 = traits::zero();
    F d = hb;
    for (; d + W <= he; d += W, e += W * step) {
      U j[W];
      S vv[W];
      for (int k = 0; k < W; ++k) {
        j[k] = ui + U(offset<Staged>(d + k, offs, d0));
        vv[k] = v[e + std::size_t(k) * step];
      }
      for (int k = 0; k < W; k += 2) {
        if (j[k] < nc) s0 += vv[k] * x(j[k]);
        if (j[k + 1] < nc) s1 += vv[k + 1] * x(j[k + 1]);
      }
    }
    if (d < he) {
      U j[W - 1];
      S vv[W - 1];
      for (int k = 0; k < W - 1; ++k) {
        const F dk = d + k < he ? d + k : d;
        j[k] = ui + U(offset<Staged>(dk, offs, d0));
        vv[k] = v[e + std::size_t(dk - d) * step];
      }
      for (int k = 0; k < W - 1; ++k)
        if (d + k < he && j[k] < nc) (k % 2 == 0 ? s0 : s1) += vv[k] * x(j[k]);
    }
    return s0 + s1;
  }

  template <bool Staged>
  KOKKOS_INLINE_FUNCTION S row_dot(const std::int64_t i, const int lr, const F hb, const F he,
                                   const scratch_offsets& offs, const F d0) const {
    return in_flight == 8 ? row_sum_chunks<Staged>(i, lr, hb, he, offs, d0)
                          : row_sum<Staged>(i, lr, hb, he, offs, d0);
  }

  /// y(i + offset) += alpha op(A)(i, i + offset) x(i) over the diagonals [hb, he) of row i.
  template <bool Staged>
  KOKKOS_INLINE_FUNCTION void scatter_row(const member& team, const std::int64_t i, const int lr,
                                          const F hb, const F he, const scratch_offsets& offs,
                                          const F d0) const {
    const S xi = alpha * x(i);
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, int(he - hb)), [&](const int k) {
      const F d = hb + k;
      const U j = U(i) + U(offset<Staged>(d, offs, d0));
      if (j >= U(ncols)) return;
      const S v = values(std::size_t(d) * hack_size + lr);
      atomic_accumulate(&y(j), (conj ? traits::conj(v) : v) * xi);
    });
  }
};

/// Launches HdiaSpmv (see the file comment); `p` is resolved.
template <class Device, class S, class O, class F, class XView, class YView>
void hdia_spmv(const HdiaSpmvParams& p, Mode mode, S alpha,
               const Kokkos::View<const S*, Device>& values,
               const Kokkos::View<const O*, Device>& offsets,
               const Kokkos::View<const F*, Device>& hack_offsets, int hack_size,
               std::int64_t nrows, std::int64_t ncols, const XView& x, S beta, const YView& y) {
  using exec = typename Device::execution_space;
  using functor = HdiaSpmv<S, O, F, Device, XView, YView>;
  const bool scatter = mode != Mode::N;
  if (scatter) scale_output<exec>(beta, y);
  const std::int64_t n_hacks = std::int64_t(hack_offsets.extent(0)) - 1;
  if (n_hacks <= 0) return;
  const std::int64_t league = (n_hacks + p.hacks_per_team - 1) / p.hacks_per_team;
  require(std::int64_t(p.hacks_per_team) * hack_size <= (std::int64_t(1) << 30), "spk::spmv",
          "HDIA teams of ", p.hacks_per_team, " hacks of ", hack_size, " rows are too large");
  int shift = 0;
  while ((1 << shift) < hack_size) ++shift;
  if ((1 << shift) != hack_size) shift = -1;
  functor f{values,
            offsets,
            hack_offsets,
            x,
            y,
            alpha,
            beta,
            beta == scalar_traits<S>::zero(),
            scatter,
            mode == Mode::H,
            nrows,
            O(ncols),
            n_hacks,
            hack_size,
            shift,
            p.hacks_per_team,
            p.scratch_diags,
            p.threads_per_row,
            0,
            p.in_flight};
  Kokkos::TeamPolicy<exec> policy(int(league), p.team_size, p.threads_per_row);
  require_team_size("spk::spmv", policy, f, p.team_size, p.threads_per_row);
  const std::size_t bytes = functor::scratch_bytes(p.scratch_diags);
  const int level = bytes <= std::size_t(policy.scratch_size_max(0)) ? 0 : 1;
  require(bytes <= std::size_t(policy.scratch_size_max(level)), "spk::spmv", "HDIA teams need ",
          bytes, " bytes of team scratch (scratch_diags = ", p.scratch_diags,
          "), more than the maximum ", policy.scratch_size_max(level));
  f.scratch_level = level;
  f.warp_staging = !scatter && Warp<exec>::size > 1 && hack_size == Warp<exec>::size &&
                   p.threads_per_row == 1 && p.team_size == p.hacks_per_team * hack_size &&
                   p.scratch_diags / p.hacks_per_team > 0;
  Kokkos::parallel_for("spk::hdia_spmv", policy.set_scratch_size(level, Kokkos::PerTeam(bytes)), f);
}

}  // namespace impl
}  // namespace spk
