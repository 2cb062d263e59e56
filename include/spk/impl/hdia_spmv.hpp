// spk/impl/hdia_spmv.hpp: SpMV of hacked DIA (HDIA) and its launch parameters.
//
// HdiaSpmv: a team takes hacks_per_team consecutive hacks. Their diagonals are consecutive in the
// offsets array, and the team copies them into team scratch memory (scratch_diags at a time when
// there are more, with a barrier between chunks), so each offset is read from global memory once
// per team instead of once per row. A vector of threads_per_row lanes computes one row of a hack,
// lane l taking the hack's diagonals l, l + threads_per_row, ...: value (d, r) of hack h sits at
// d * hack_size + r (d counting the matrix's diagonals), so the threads of a hack read
// consecutive values and consecutive x entries of each diagonal. Partial sums of a row over the
// chunks add up in scratch; op = N then writes y once per row. op = T / H scatters each product
// into y(i + offset) with atomics after y = beta y (the rows of a hack hit consecutive entries).
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <string>

#include <spk/error.hpp>
#include <spk/impl/format_common.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {

/// Launch parameters of HDIA SpMV. Zero means "choose" (see impl::resolve_hdia_launch).
struct HdiaSpmvParams {
  int threads_per_row = 0;  ///< lanes per row (splitting the hack's diagonals): 1, 2, ..., 32
  int team_size = 0;        ///< vectors (rows in flight) per team
  int hacks_per_team = 0;   ///< consecutive hacks a team takes
  int scratch_diags = 0;    ///< diagonal offsets a team holds in scratch memory at a time
};

/// A short name of HDIA launch parameters, e.g. "tpr1-t128-h4-s28".
inline std::string describe(const HdiaSpmvParams& p) {
  return "tpr" + std::to_string(p.threads_per_row) + "-t" + std::to_string(p.team_size) + "-h" +
         std::to_string(p.hacks_per_team) + "-s" + std::to_string(p.scratch_diags);
}

namespace impl {

/// Checks the user's values and fills the zeros. threads_per_row: from the mean diagonals per
/// hack on GPUs (as ELL's threads per row from the row length), 1 on CPU backends.
/// hacks_per_team: 128 rows per team on GPUs (4 hacks of 32), 256 on CPU backends.
/// team_size: one row per vector on GPUs, up to 256 threads per team; 1 on CPU backends.
/// scratch_diags: what the team's hacks can hold (max diagonals per hack x hacks_per_team), at
/// most 1024. O(1).
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
  require(p.hacks_per_team >= 0, where, "hacks_per_team = ", p.hacks_per_team, " must be >= 0");
  require(p.scratch_diags >= 0, where, "scratch_diags = ", p.scratch_diags, " must be >= 0");
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
  using scratch_sums =
      Kokkos::View<S*, typename exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;

  Kokkos::View<const S*, Device> values;
  Kokkos::View<const O*, Device> offsets;
  Kokkos::View<const F*, Device> hack_offsets;
  input_vector_t<XView> x;
  YView y;
  S alpha, beta;
  bool beta_zero;
  bool scatter;  // op = T / H
  bool conj;     // op = H
  std::int64_t nrows, ncols;
  std::int64_t n_hacks;
  std::int64_t hack_size;
  std::int64_t hacks_per_team;
  std::int64_t chunk;  // scratch_diags
  int threads_per_row;
  int scratch_level;

  /// Scratch bytes per team: the offsets chunk, and the row sums for op = N.
  static std::size_t scratch_bytes(std::int64_t chunk, std::int64_t rows, bool scatter) {
    return scratch_offsets::shmem_size(std::size_t(chunk)) +
           (scatter ? 0 : scratch_sums::shmem_size(std::size_t(rows)));
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const std::int64_t h0 = std::int64_t(team.league_rank()) * hacks_per_team;
    const std::int64_t h1 = h0 + hacks_per_team < n_hacks ? h0 + hacks_per_team : n_hacks;
    const std::int64_t r0 = h0 * hack_size;
    const std::int64_t r1 = h1 * hack_size < nrows ? h1 * hack_size : nrows;
    const std::int64_t d0 = std::int64_t(hack_offsets(h0));
    const std::int64_t d1 = std::int64_t(hack_offsets(h1));
    scratch_offsets offs(team.team_scratch(scratch_level), std::size_t(chunk));
    scratch_sums acc;
    if (!scatter) {
      acc = scratch_sums(team.team_scratch(scratch_level), std::size_t(hacks_per_team * hack_size));
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r1 - r0), [&](const std::int64_t r) {
        Kokkos::single(Kokkos::PerThread(team), [&]() { acc(r) = traits::zero(); });
      });
    }
    for (std::int64_t c0 = d0; c0 < d1; c0 += chunk) {
      const std::int64_t c1 = c0 + chunk < d1 ? c0 + chunk : d1;
      team.team_barrier();  // the previous chunk is no longer read
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, c1 - c0), [&](const std::int64_t j) {
        Kokkos::single(Kokkos::PerThread(team), [&]() { offs(j) = offsets(c0 + j); });
      });
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r1 - r0), [&](const std::int64_t r) {
        const std::int64_t i = r0 + r;
        const std::int64_t h = i / hack_size;
        const std::int64_t lr = i - h * hack_size;
        const std::int64_t hb = std::int64_t(hack_offsets(h));
        const std::int64_t he = std::int64_t(hack_offsets(h + 1));
        const std::int64_t lo = hb > c0 ? hb : c0;
        const std::int64_t hi = he < c1 ? he : c1;
        if (lo >= hi) return;
        if (!scatter) {
          S sum = traits::zero();
          if (threads_per_row == 1) {
            for (std::int64_t d = lo; d < hi; ++d) sum += product(i, lr, d, offs(d - c0));
          } else {
            Kokkos::parallel_reduce(
                Kokkos::ThreadVectorRange(team, lo, hi),
                [&](const std::int64_t d, S& s) { s += product(i, lr, d, offs(d - c0)); }, sum);
          }
          Kokkos::single(Kokkos::PerThread(team), [&]() { acc(r) += sum; });
        } else {
          const S xi = alpha * x(i);
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, lo, hi), [&](const std::int64_t d) {
            const std::int64_t j = i + offs(d - c0);
            if (j < 0 || j >= ncols) return;
            const S v = values(std::size_t(d * hack_size + lr));
            atomic_accumulate(&y(j), (conj ? traits::conj(v) : v) * xi);
          });
        }
      });
    }
    if (scatter) return;
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r1 - r0), [&](const std::int64_t r) {
      Kokkos::single(Kokkos::PerThread(team), [&]() {
        const std::int64_t i = r0 + r;
        y(i) = beta_zero ? alpha * acc(r) : alpha * acc(r) + beta * y(i);
      });
    });
  }

  /// A(i, i + off) x(i + off) for diagonal d of row i (local row lr), zero outside the matrix.
  KOKKOS_INLINE_FUNCTION S product(const std::int64_t i, const std::int64_t lr,
                                   const std::int64_t d, const O off) const {
    const std::int64_t j = i + off;
    return j >= 0 && j < ncols ? values(std::size_t(d * hack_size + lr)) * x(j) : traits::zero();
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
            ncols,
            n_hacks,
            std::int64_t(hack_size),
            std::int64_t(p.hacks_per_team),
            std::int64_t(p.scratch_diags),
            p.threads_per_row,
            0};
  Kokkos::TeamPolicy<exec> policy(int(league), p.team_size, p.threads_per_row);
  require_team_size("spk::spmv", policy, f, p.team_size, p.threads_per_row);
  const std::size_t bytes =
      functor::scratch_bytes(p.scratch_diags, std::int64_t(p.hacks_per_team) * hack_size, scatter);
  const int level = bytes <= std::size_t(policy.scratch_size_max(0)) ? 0 : 1;
  require(bytes <= std::size_t(policy.scratch_size_max(level)), "spk::spmv", "HDIA teams need ",
          bytes, " bytes of team scratch (scratch_diags = ", p.scratch_diags,
          ", hacks_per_team = ", p.hacks_per_team, "), more than the maximum ",
          policy.scratch_size_max(level));
  f.scratch_level = level;
  Kokkos::parallel_for("spk::hdia_spmv", policy.set_scratch_size(level, Kokkos::PerTeam(bytes)), f);
}

}  // namespace impl
}  // namespace spk
