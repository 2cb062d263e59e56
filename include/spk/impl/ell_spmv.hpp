// spk/impl/ell_spmv.hpp: the SpMV kernel of the padded row formats (ELLPACK-R, and through their
// row geometry HLL and the ELL part of HYB), and the launch parameters of ELL.
//
// PaddedRowsSpmv: teams take chunks of rows; a vector of threads_per_row lanes computes one row,
// lane l taking entries l, l + threads_per_row, ... below the row's length (the padding is never
// read). Entry k of the row at position p lives at base(p) + k * stride(p) of the value and column
// arrays; the geometry (a small struct) says where, which row of y position p is (HLL's row
// permutation), and how many of the row's entries this kernel takes (head(len): all of them for
// ELL; HLL leaves the rest of its wide hacks to work items). The inner loop keeps four entries in
// flight: their columns, values and x loads are all issued before the first multiply-add.
// op = T / H scatters into y with atomics after y = beta y.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <string>

#include <spk/impl/format_common.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {

/// Launch parameters of ELL SpMV (and of the ELL part of HYB). Zero means "choose" (see
/// impl::resolve_row_launch): the resolved values are plain data, so tuners can enumerate them.
struct EllSpmvParams {
  int threads_per_row = 0;  ///< lanes per row: 1, 2, 4, 8, 16 or 32
  int team_size = 0;        ///< vectors (rows in flight) per team
  int rows_per_team = 0;    ///< consecutive rows a team takes
  /// Entries a lane loads before it multiplies: 4 or 8 (the last chunk of a row predicated);
  /// -4: four, the remainder one entry at a time; 0 = choose (impl::resolve_in_flight: 8 on
  /// GPUs, -4 on CPU backends).
  int in_flight = 0;
};

/// A short name of ELL launch parameters, e.g. "tpr2-t64-r64".
inline std::string describe(const EllSpmvParams& p) {
  return "tpr" + std::to_string(p.threads_per_row) + "-t" + std::to_string(p.team_size) + "-r" +
         std::to_string(p.rows_per_team) + impl::describe_in_flight(p.in_flight);
}

namespace impl {

/// Row geometry of ELL: entry (i, k) of a 2-D array with strides s0, s1 (LayoutLeft: s0 = 1,
/// s1 = pitch; LayoutRight: s0 = width, s1 = 1); positions are rows.
template <class O>
struct EllRowGeometry {
  std::size_t s0 = 0, s1 = 0;
  KOKKOS_INLINE_FUNCTION std::size_t base(O p) const { return std::size_t(p) * s0; }
  KOKKOS_INLINE_FUNCTION std::size_t stride(O) const { return s1; }
  KOKKOS_INLINE_FUNCTION O row(O p) const { return p; }
  KOKKOS_INLINE_FUNCTION O head(O len) const { return len; }
};

/// y = alpha op(A) x + beta y for a padded row format (see the file comment). `values` and
/// `col_idx` point into the format's arrays, which must outlive the launch; row_len is indexed by
/// position.
template <class S, class O, class Geometry, class Device, class XView, class YView>
struct PaddedRowsSpmv {
  using exec = typename Device::execution_space;
  using member = typename Kokkos::TeamPolicy<exec>::member_type;
  using traits = scalar_traits<S>;
  using scalar_type = S;
  using ordinal_type = O;

  const S* values;
  const O* col_idx;
  Geometry geom;
  Kokkos::View<const O*, Device> row_len;
  input_vector_t<XView> x;
  YView y;
  S alpha, beta;
  bool beta_zero;
  bool scatter;  // op = T / H
  bool conj;     // op = H
  O npos;
  O rows_per_team;
  int threads_per_row;
  int in_flight;  // 4 or 8: lane_dot<in_flight>; else lane_dot_serial_tail

  /// Lane `lane`'s part of the row at v / c: entries lane, lane + t, ... < len, four in flight,
  /// the last (up to three) one at a time (in_flight = -4, the loop before the predicated one).
  KOKKOS_INLINE_FUNCTION S lane_dot_serial_tail(const S* v, const O* c, const std::size_t stride,
                                                const O len, const O lane) const {
    const O t = O(threads_per_row);
    S s0 = traits::zero(), s1 = traits::zero();
    O k = lane;
    for (; k + 3 * t < len; k += 4 * t) {
      const std::size_t e0 = std::size_t(k) * stride, e1 = std::size_t(k + t) * stride,
                        e2 = std::size_t(k + 2 * t) * stride, e3 = std::size_t(k + 3 * t) * stride;
      const O c0 = c[e0], c1 = c[e1], c2 = c[e2], c3 = c[e3];
      const S v0 = v[e0], v1 = v[e1], v2 = v[e2], v3 = v[e3];
      const S x0 = x(c0), x1 = x(c1), x2 = x(c2), x3 = x(c3);
      s0 += v0 * x0;
      s1 += v1 * x1;
      s0 += v2 * x2;
      s1 += v3 * x3;
    }
    for (; k < len; k += t) {
      const std::size_t e = std::size_t(k) * stride;
      s0 += v[e] * x(c[e]);
    }
    return s0 + s1;
  }

  /// Lane `lane`'s part of the row at v / c: entries lane, lane + t, ... < len in chunks of U,
  /// every load of a chunk issued before its first multiply-add; the last, partial chunk too
  /// (entries past len load the chunk's first entry again and add nothing), so a row costs
  /// ceil(entries / U) dependent rounds of loads instead of one round per leftover entry.
  template <int U>
  KOKKOS_INLINE_FUNCTION S lane_dot(const S* v, const O* c, const std::size_t stride,
                                    const O len, const O lane) const {
    const O t = O(threads_per_row);
    const std::size_t step = std::size_t(t) * stride;
    S s0 = traits::zero(), s1 = traits::zero();
    O k = lane;
    const S* vp = v + std::size_t(k) * stride;
    const O* cp = c + std::size_t(k) * stride;
    for (; k + (U - 1) * t < len; k += U * t, vp += U * step, cp += U * step) {
      O cc[U];
      S vv[U];
      for (int j = 0; j < U; ++j) {
        cc[j] = cp[j * step];
        vv[j] = vp[j * step];
      }
      for (int j = 0; j < U; j += 2) {
        s0 += vv[j] * x(cc[j]);
        s1 += vv[j + 1] * x(cc[j + 1]);
      }
    }
    if (k < len) {
      O cc[U - 1];
      S vv[U - 1];
      for (int j = 0; j < U - 1; ++j) {
        const std::size_t off = k + O(j) * t < len ? std::size_t(j) * step : 0;
        cc[j] = cp[off];
        vv[j] = vp[off];
      }
      for (int j = 0; j < U - 1; ++j) {
        const S p = vv[j] * x(cc[j]);
        if (k + O(j) * t < len) (j % 2 == 0 ? s0 : s1) += p;
      }
    }
    return s0 + s1;
  }

  KOKKOS_INLINE_FUNCTION S row_dot(const S* v, const O* c, const std::size_t stride, const O len,
                                   const O lane) const {
    if (in_flight == 8) return lane_dot<8>(v, c, stride, len, lane);
    if (in_flight == 4) return lane_dot<4>(v, c, stride, len, lane);
    return lane_dot_serial_tail(v, c, stride, len, lane);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const O begin = O(team.league_rank()) * rows_per_team;
    const O end = begin + rows_per_team < npos ? begin + rows_per_team : npos;
    if (!scatter) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](const O p) {
        const O len = geom.head(row_len(p));
        const std::size_t b = geom.base(p);
        const std::size_t st = geom.stride(p);
        S sum = traits::zero();
        if (threads_per_row == 1) {
          sum = row_dot(values + b, col_idx + b, st, len, O(0));
        } else {
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(team, threads_per_row),
              [&](const int lane, S& s) {
                s += row_dot(values + b, col_idx + b, st, len, O(lane));
              },
              sum);
        }
        Kokkos::single(Kokkos::PerThread(team), [&]() {
          const O i = geom.row(p);
          y(i) = beta_zero ? alpha * sum : alpha * sum + beta * y(i);
        });
      });
    } else {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](const O p) {
        const O len = geom.head(row_len(p));
        const std::size_t b = geom.base(p);
        const std::size_t st = geom.stride(p);
        const S xi = alpha * x(geom.row(p));
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, len), [&](const O k) {
          const std::size_t e = b + std::size_t(k) * st;
          const S v = conj ? traits::conj(values[e]) : values[e];
          atomic_accumulate(&y(col_idx[e]), v * xi);
        });
      });
    }
  }
};

/// Launches PaddedRowsSpmv over npos row positions: op = N writes every row of y (beta == 0
/// overwrites), op = T / H first sets y = beta y, then scatters.
template <class Device, class S, class O, class Geometry, class XView, class YView>
void padded_rows_spmv(const char* label, const RowLaunch& launch, Mode mode, S alpha,
                      const S* values, const O* col_idx, const Geometry& geom,
                      const Kokkos::View<const O*, Device>& row_len, O npos, const XView& x, S beta,
                      const YView& y) {
  using exec = typename Device::execution_space;
  using functor = PaddedRowsSpmv<S, O, Geometry, Device, XView, YView>;
  if (mode != Mode::N) scale_output<exec>(beta, y);
  if (npos == 0) return;
  const O rows_per_team = O(launch.rows_per_team);
  const std::int64_t league = (std::int64_t(npos) + rows_per_team - 1) / rows_per_team;
  functor f{values,
            col_idx,
            geom,
            row_len,
            x,
            y,
            alpha,
            beta,
            beta == scalar_traits<S>::zero(),
            mode != Mode::N,
            mode == Mode::H,
            npos,
            rows_per_team,
            launch.threads_per_row,
            launch.in_flight};
  Kokkos::TeamPolicy<exec> policy(int(league), launch.team_size, launch.threads_per_row);
  require_team_size("spk::spmv", policy, f, launch.team_size, launch.threads_per_row);
  Kokkos::parallel_for(label, policy, f);
}

}  // namespace impl
}  // namespace spk
