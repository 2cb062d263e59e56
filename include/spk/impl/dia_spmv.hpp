// spk/impl/dia_spmv.hpp: SpMV of the DIA format and its launch parameters.
//
// DiaSpmv: teams take chunks of output entries; a vector of threads_per_row lanes computes one
// output, lane l taking diagonals l, l + threads_per_row, ... For op = N, output i sums
// values(i, d) * x(i + offset_d) over the diagonals whose column is inside the matrix. For op = T /
// H the transpose has the diagonals of A with negated offsets, so output j gathers
// values(j - offset_d, d) * x(j - offset_d) over the rows inside the matrix: no atomics. Either
// way consecutive threads read consecutive entries of a diagonal and of x (coalesced), and no
// index is loaded.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>

#include <spk/impl/format_common.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {

/// Launch parameters of DIA SpMV. Zero means "choose" (see impl::resolve_row_launch; the row
/// length there is the number of diagonals).
struct DiaSpmvParams {
  int threads_per_row = 0;  ///< lanes per output entry (splitting the diagonals): 1, 2, ..., 32
  int team_size = 0;        ///< vectors (outputs in flight) per team
  int rows_per_team = 0;    ///< consecutive outputs a team takes
};

/// A short name of DIA launch parameters, e.g. "tpr1-t128-r128".
inline std::string describe(const DiaSpmvParams& p) {
  return "tpr" + std::to_string(p.threads_per_row) + "-t" + std::to_string(p.team_size) + "-r" +
         std::to_string(p.rows_per_team);
}

namespace impl {

template <class S, class O, class Device, class XView, class YView>
struct DiaSpmv {
  using exec = typename Device::execution_space;
  using member = typename Kokkos::TeamPolicy<exec>::member_type;
  using traits = scalar_traits<S>;

  Kokkos::View<const S**, Kokkos::LayoutLeft, Device> values;  // pitch x n_diags
  Kokkos::View<const O*, Device> offsets;
  input_vector_t<XView> x;
  YView y;
  S alpha, beta;
  bool beta_zero;
  bool trans;  // op = T / H: gather along the negated offsets
  bool conj;   // op = H
  std::int64_t nrows, ncols;
  std::int64_t nout;  // outputs: nrows (N) or ncols (T, H)
  std::int64_t rows_per_team;
  O ndiags;
  int threads_per_row;

  /// Term of diagonal d for output o (zero where the diagonal leaves the matrix).
  KOKKOS_INLINE_FUNCTION S term(const std::int64_t o, const O d) const {
    const std::int64_t off = offsets(d);
    if (!trans) {
      const std::int64_t j = o + off;
      return j >= 0 && j < ncols ? values(o, d) * x(j) : traits::zero();
    }
    const std::int64_t i = o - off;
    if (i < 0 || i >= nrows) return traits::zero();
    const S v = values(i, d);
    return (conj ? traits::conj(v) : v) * x(i);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const std::int64_t begin = std::int64_t(team.league_rank()) * rows_per_team;
    const std::int64_t end = begin + rows_per_team < nout ? begin + rows_per_team : nout;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](const std::int64_t o) {
      S sum = traits::zero();
      if (threads_per_row == 1) {
        S s1 = traits::zero();
        O d = 0;
        for (; d + 1 < ndiags; d += 2) {  // two diagonals in flight
          const S t0 = term(o, d), t1 = term(o, d + 1);
          sum += t0;
          s1 += t1;
        }
        if (d < ndiags) sum += term(o, d);
        sum += s1;
      } else {
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, ndiags), [&](const O d, S& s) { s += term(o, d); },
            sum);
      }
      Kokkos::single(Kokkos::PerThread(team),
                     [&]() { y(o) = beta_zero ? alpha * sum : alpha * sum + beta * y(o); });
    });
  }
};

/// Launches DiaSpmv: every output entry is written (beta == 0 overwrites y).
template <class Device, class S, class O, class XView, class YView>
void dia_spmv(const RowLaunch& launch, Mode mode, S alpha,
              const Kokkos::View<const S**, Kokkos::LayoutLeft, Device>& values,
              const Kokkos::View<const O*, Device>& offsets, std::int64_t nrows, std::int64_t ncols,
              const XView& x, S beta, const YView& y) {
  using exec = typename Device::execution_space;
  using functor = DiaSpmv<S, O, Device, XView, YView>;
  const bool trans = mode != Mode::N;
  const std::int64_t nout = trans ? ncols : nrows;
  if (nout == 0) return;
  const std::int64_t league = (nout + launch.rows_per_team - 1) / launch.rows_per_team;
  functor f{values,
            offsets,
            x,
            y,
            alpha,
            beta,
            beta == scalar_traits<S>::zero(),
            trans,
            mode == Mode::H,
            nrows,
            ncols,
            nout,
            std::int64_t(launch.rows_per_team),
            O(offsets.extent(0)),
            launch.threads_per_row};
  Kokkos::TeamPolicy<exec> policy(int(league), launch.team_size, launch.threads_per_row);
  require_team_size("spk::spmv", policy, f, launch.team_size, launch.threads_per_row);
  Kokkos::parallel_for("spk::dia_spmv", policy, f);
}

}  // namespace impl
}  // namespace spk
