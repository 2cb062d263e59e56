// spk/impl/hll_spmv.hpp: SpMV of hacked ELLPACK (HLL): the padded-row kernel of ell_spmv.hpp with
// HLL's row geometry (hack offsets, column-major hacks, the optional row permutation applied
// when y is written or x is read for op = T / H), HLL's launch parameters, and the kernel of the
// tail.
//
// Tail: a hack's width is capped (see HllMatrix), and the entries of its rows beyond the width
// are stored CSR-like in a tail cut into segments of at most HllOptions::tail_segment entries
// (position, offset). The padded-row kernel runs first and writes (op = N) or scales (op = T /
// H) y; then a vector of tail_lanes lanes per segment adds the segment's part: for op = N a sum
// reduced over the lanes and one atomic into y(row), for op = T / H one atomic per entry. A long
// row is thus spread over many segments instead of holding one thread for its whole length;
// this is the only mechanism for wide hacks (no separate split of the padded columns), so the
// padded-row kernel's work per hack is bounded by the width cap.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <string>

#include <spk/error.hpp>
#include <spk/impl/ell_spmv.hpp>
#include <spk/impl/format_common.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {

/// Launch parameters of HLL SpMV. Zero means "choose" (see impl::resolve_row_launch and
/// spk::resolve_params for HLL).
struct HllSpmvParams {
  int threads_per_row = 0;  ///< lanes per row: 1, 2, 4, 8, 16 or 32
  int team_size = 0;        ///< vectors (rows in flight) per team
  int rows_per_team = 0;    ///< consecutive row positions a team takes
  /// Lanes per tail segment: 1, 2, 4, 8, 16 or 32; resolved to 0 for a matrix without a tail.
  int tail_lanes = 0;
  int in_flight = 0;  ///< entries a lane loads before it multiplies, see EllSpmvParams
  /// op = N with rows sorted within windows: 1 = a team takes one window and writes y through
  /// team scratch in row order (rows_per_team = the window, impl::HllStagedSpmv), -1 = y
  /// written where each position's row lies (scattered over the window); 0 = choose (see
  /// spk::resolve_params for HLL). op = T / H resolve it to -1.
  int stage_y = 0;
};

/// A short name of HLL launch parameters, e.g. "tpr1-t128-r128" or, with a tail,
/// "tpr1-t128-r128-tl4".
inline std::string describe(const HllSpmvParams& p) {
  return "tpr" + std::to_string(p.threads_per_row) + "-t" + std::to_string(p.team_size) + "-r" +
         std::to_string(p.rows_per_team) +
         (p.tail_lanes > 0 ? "-tl" + std::to_string(p.tail_lanes) : std::string()) +
         impl::describe_in_flight(p.in_flight) + (p.stage_y == 1 ? "-sy" : "");
}

namespace impl {

/// log2(n) when n is a power of two, else -1.
inline int exact_log2(std::int64_t n) {
  if (n <= 0 || (n & (n - 1)) != 0) return -1;
  int s = 0;
  while ((std::int64_t(1) << s) < n) ++s;
  return s;
}

/// Row geometry of HLL: position p (the p-th stored row) lies in hack p / hack_size, whose
/// block starts at hack_offsets(hack) and is column-major with hack_size rows; the matrix row
/// is perm(p), or p when not permuted. hack_shift = log2(hack_size) when it is a power of two
/// (shift and mask instead of a division), else -1.
template <class O, class F, class D>
struct HllRowGeometry {
  Kokkos::View<const F*, D> hack_offsets;
  Kokkos::View<const O*, D> perm;
  O hack_size = 32;
  int hack_shift = 5;
  bool permuted = false;

  KOKKOS_INLINE_FUNCTION std::size_t base(O p) const {
    if (hack_shift >= 0)
      return std::size_t(hack_offsets(p >> hack_shift)) + std::size_t(p & (hack_size - 1));
    if (sizeof(O) <= 4) {  // 32-bit unsigned division, cheaper than a signed or 64-bit one
      const std::uint32_t q = std::uint32_t(p) / std::uint32_t(hack_size);
      return std::size_t(hack_offsets(q)) +
             std::size_t(std::uint32_t(p) - q * std::uint32_t(hack_size));
    }
    const O q = p / hack_size;
    return std::size_t(hack_offsets(q)) + std::size_t(p - q * hack_size);
  }
  KOKKOS_INLINE_FUNCTION std::size_t stride(O) const { return std::size_t(hack_size); }
  KOKKOS_INLINE_FUNCTION O row(O p) const { return permuted ? perm(p) : p; }
  /// Row lengths are those of the padded part already (the tail holds the rest).
  KOKKOS_INLINE_FUNCTION O head(O len) const { return len; }
};

/// The tail of an HLL matrix: segment s holds entries [offsets(s), offsets(s + 1)) of values /
/// col_idx, all of row position pos(s); a position's segments are consecutive, in order, and
/// continue its row after the padded part.
template <class S, class O, class F, class D>
struct HllTail {
  Kokkos::View<const S*, D> values;
  Kokkos::View<const O*, D> col_idx;
  Kokkos::View<const O*, D> pos;
  Kokkos::View<const F*, D> offsets;  // n_segments + 1 entries, or none without a tail
  KOKKOS_INLINE_FUNCTION std::int64_t n_segments() const { return std::int64_t(pos.extent(0)); }
};

/// y += alpha op(A_tail) x over the tail's segments (see the file comment): teams take
/// segments_per_team consecutive segments, one vector of `lanes` lanes per segment.
template <class S, class O, class F, class Device, class XView, class YView>
struct HllTailSpmv {
  using exec = typename Device::execution_space;
  using member = typename Kokkos::TeamPolicy<exec>::member_type;
  using traits = scalar_traits<S>;

  HllTail<S, O, F, Device> tail;
  HllRowGeometry<O, F, Device> geom;
  input_vector_t<XView> x;
  YView y;
  S alpha;
  bool scatter;  // op = T / H
  bool conj;     // op = H
  std::int64_t segments_per_team;
  int lanes;

  /// Lane `lane`'s part of entries [b, e): b + lane, b + lane + lanes, ..., four in flight.
  KOKKOS_INLINE_FUNCTION S lane_dot(const std::int64_t b, const std::int64_t e,
                                    const std::int64_t lane) const {
    const std::int64_t t = lanes;
    S s0 = traits::zero(), s1 = traits::zero();
    std::int64_t k = b + lane;
    for (; k + 3 * t < e; k += 4 * t) {
      const O c0 = tail.col_idx(k), c1 = tail.col_idx(k + t), c2 = tail.col_idx(k + 2 * t),
              c3 = tail.col_idx(k + 3 * t);
      const S v0 = tail.values(k), v1 = tail.values(k + t), v2 = tail.values(k + 2 * t),
              v3 = tail.values(k + 3 * t);
      const S x0 = x(c0), x1 = x(c1), x2 = x(c2), x3 = x(c3);
      s0 += v0 * x0;
      s1 += v1 * x1;
      s0 += v2 * x2;
      s1 += v3 * x3;
    }
    for (; k < e; k += t) s0 += tail.values(k) * x(tail.col_idx(k));
    return s0 + s1;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const std::int64_t n = tail.n_segments();
    const std::int64_t begin = std::int64_t(team.league_rank()) * segments_per_team;
    const std::int64_t end = begin + segments_per_team < n ? begin + segments_per_team : n;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](const std::int64_t s) {
      const O p = tail.pos(s);
      const std::int64_t b = std::int64_t(tail.offsets(s));
      const std::int64_t e = std::int64_t(tail.offsets(s + 1));
      if (!scatter) {
        S sum = traits::zero();
        if (lanes == 1) {
          sum = lane_dot(b, e, 0);
        } else {
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(team, lanes),
              [&](const int lane, S& acc) { acc += lane_dot(b, e, lane); }, sum);
        }
        Kokkos::single(Kokkos::PerThread(team),
                       [&]() { atomic_accumulate(&y(geom.row(p)), alpha * sum); });
      } else {
        const S xi = alpha * x(geom.row(p));
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, e - b), [&](const std::int64_t k) {
          const S v = conj ? traits::conj(tail.values(b + k)) : tail.values(b + k);
          atomic_accumulate(&y(tail.col_idx(b + k)), v * xi);
        });
      }
    });
  }
};

/// op = N for rows sorted within windows (HllSort::window), a team per window of rows_per_team
/// positions: the positions of a window hold the same rows in another order, so the team puts
/// its row sums into team scratch by row, waits at a barrier and writes y in row order (32
/// consecutive rows per warp: 8 sectors of doubles instead of ~32 scattered over the window).
/// The row sums are PaddedRowsSpmv's (`rows`); a separate kernel, so the default one keeps its
/// registers (with the staged branch inside it, two lanes per row on bcsstk38 x 64 ran 7-10%
/// slower, H200 runs D4/D5).
template <class Rows>
struct HllStagedSpmv {
  using exec = typename Rows::exec;
  using member = typename Rows::member;
  using S = typename Rows::scalar_type;
  using O = typename Rows::ordinal_type;
  using scratch_values =
      Kokkos::View<S*, typename exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;

  Rows rows;

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const O begin = O(team.league_rank()) * rows.rows_per_team;
    const O end = begin + rows.rows_per_team < rows.npos ? begin + rows.rows_per_team : rows.npos;
    // the row sum is written out as in PaddedRowsSpmv::operator() rather than shared through a
    // helper: calling one from the default kernel cost its two-lanes launch 10% (run D4)
    const scratch_values buf(team.team_scratch(0), std::size_t(rows.rows_per_team));
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](const O p) {
      const O len = rows.geom.head(rows.row_len(p));
      const std::size_t b = rows.geom.base(p);
      const std::size_t st = rows.geom.stride(p);
      S sum = Rows::traits::zero();
      if (rows.threads_per_row == 1) {
        sum = rows.row_dot(rows.values + b, rows.col_idx + b, st, len, O(0));
      } else {
        Kokkos::parallel_reduce(
            Kokkos::ThreadVectorRange(team, rows.threads_per_row),
            [&](const int lane, S& s) {
              s += rows.row_dot(rows.values + b, rows.col_idx + b, st, len, O(lane));
            },
            sum);
      }
      Kokkos::single(Kokkos::PerThread(team), [&]() { buf(rows.geom.row(p) - begin) = sum; });
    });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, begin, end), [&](const O i) {
      const S sum = buf(i - begin);  // the unstaged kernel's expression
      rows.y(i) = rows.beta_zero ? rows.alpha * sum : rows.alpha * sum + rows.beta * rows.y(i);
    });
  }
};

/// Team scratch (level 0) bytes HllStagedSpmv takes for windows of `rows` rows of S.
template <class S, class Exec>
std::size_t hll_staged_scratch_bytes(std::int64_t rows) {
  using scratch_values =
      Kokkos::View<S*, typename Exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  return scratch_values::shmem_size(std::size_t(rows > 0 ? rows : 0));
}

/// The most team scratch (level 0) a team of Exec can take.
template <class Exec>
std::size_t team_scratch_max() {
  const Kokkos::TeamPolicy<Exec> policy(1, 1);  // (an instance: static in some versions only)
  return std::size_t(policy.scratch_size_max(0));
}

/// Launches HllStagedSpmv (op = N) over npos positions sorted within windows of
/// launch.rows_per_team rows; throws when the window's sums do not fit in team scratch.
template <class Device, class S, class O, class F, class XView, class YView>
void hll_staged_spmv(const RowLaunch& launch, S alpha, const S* values, const O* col_idx,
                     const HllRowGeometry<O, F, Device>& geom,
                     const Kokkos::View<const O*, Device>& row_len, O npos, const XView& x,
                     S beta, const YView& y) {
  using exec = typename Device::execution_space;
  using rows_functor = PaddedRowsSpmv<S, O, HllRowGeometry<O, F, Device>, Device, XView, YView>;
  using functor = HllStagedSpmv<rows_functor>;
  if (npos == 0) return;
  const O rows_per_team = O(launch.rows_per_team);
  const std::int64_t league = (std::int64_t(npos) + rows_per_team - 1) / rows_per_team;
  functor f{rows_functor{values, col_idx, geom, row_len, x, y, alpha, beta,
                         beta == scalar_traits<S>::zero(), false, false, npos, rows_per_team,
                         launch.threads_per_row, launch.in_flight}};
  Kokkos::TeamPolicy<exec> policy(int(league), launch.team_size, launch.threads_per_row);
  require_team_size("spk::spmv", policy, f, launch.team_size, launch.threads_per_row);
  const std::size_t bytes = hll_staged_scratch_bytes<S, exec>(rows_per_team);
  const std::size_t most = team_scratch_max<exec>();
  require(bytes <= most, "spk::spmv (HLL)", "staging y needs ", bytes,
          " bytes of team scratch (rows_per_team = ", rows_per_team, "), more than the maximum ",
          most);
  Kokkos::parallel_for("spk::hll_spmv::staged", policy.set_scratch_size(0, Kokkos::PerTeam(bytes)),
                       f);
}

/// Staging y by default needs hll_staged_balance >= this (see spk::resolve_params for HLL):
/// between the circuit-like matrix of the GPU suite (0.85; rows of 1-12 entries, staged 0.91x
/// cuSPARSE against 0.87x, H200 runs D4/D5) and R-MAT (0.48; staged 4% slower).
constexpr double kHllStageBalance = 0.75;

/// How well a team per sorting window keeps its warps busy (HllStagedSpmv): per window of
/// `window` positions, groups of 32 consecutive positions (a warp's rows with one lane per row)
/// cost their longest row and go round-robin to the 8 warps of a 256-thread team, which waits
/// for its busiest warp; the result is sum(costs) / sum(8 * busiest warp) over all windows, in
/// (0, 1] (1 = every warp equally busy), or 0 for window = 0 or no rows. Rows sorted by
/// decreasing length give the first warp each round's longest group: near 1 when the lengths
/// within a window are similar (the circuit-like matrix), low for a power law (R-MAT).
template <class ExecSpace, class O, class D>
double hll_staged_balance(const Kokkos::View<O*, D>& row_len, std::int64_t window) {
  const std::int64_t n = std::int64_t(row_len.extent(0));
  if (window <= 0 || n == 0) return 0.0;
  constexpr int warps = 8, group = 32;
  const std::int64_t n_windows = (n + window - 1) / window;
  // one pass: the sum of costs in the real part, 8 x the busiest warp in the imaginary part
  Kokkos::complex<double> cost(0.0, 0.0);
  Kokkos::parallel_reduce(
      "spk::hll_staged_balance", Range64<ExecSpace>(0, n_windows),
      KOKKOS_LAMBDA(const std::int64_t w, Kokkos::complex<double>& acc) {
        double per_warp[warps] = {};
        const std::int64_t b = w * window;
        const std::int64_t e = b + window < n ? b + window : n;
        std::int64_t g = 0;
        for (std::int64_t p0 = b; p0 < e; p0 += group, ++g) {
          O longest = 0;
          for (std::int64_t p = p0; p < p0 + group && p < e; ++p)
            longest = row_len(p) > longest ? row_len(p) : longest;
          per_warp[g % warps] += double(longest);
        }
        double total = 0.0, most = 0.0;
        for (int q = 0; q < warps; ++q) {
          total += per_warp[q];
          most = per_warp[q] > most ? per_warp[q] : most;
        }
        acc += Kokkos::complex<double>(total, warps * most);
      },
      cost);
  return cost.imag() > 0.0 ? cost.real() / cost.imag() : 1.0;
}

/// Default lanes per tail segment: on GPUs about 8 entries per lane of the longest segment
/// (the smallest power of two >= longest / 8, at most 32); one on CPU backends. The tail kernel
/// lasts as long as its longest segment: from the mean segment length instead, a FEM matrix
/// whose few rows run far past their hacks' width (bcsstk38 x 64: segments of 8 entries on
/// average, the longest 256) walked 256 entries with one lane (H100: the tail kernel 55 us of
/// the product's 230 us, at 3% occupancy; with 32 lanes the product took 0.167 ms with four
/// threads per row, 0.187 with 4 lanes, 0.205 with 1). The same rule on the circuit matrix
/// (8 -> 32 lanes) 0.754 -> 0.725 ms, on R-MAT (16 -> 32) 0.558 -> 0.581.
inline int default_tail_lanes(double longest_segment, bool gpu) {
  if (!gpu) return 1;
  int lanes = 1;
  while (lanes < 32 && 8.0 * lanes < longest_segment) lanes *= 2;
  return lanes;
}

/// Launches HllTailSpmv over the tail's segments (nothing when there are none). Must run after
/// the padded-row kernel of the same product; `lanes` is resolved (1-32), teams as the row
/// kernels' (impl::resolve_row_launch with `lanes` lanes per vector).
template <class Device, class S, class O, class F, class XView, class YView>
void hll_tail_spmv(Mode mode, S alpha, const HllTail<S, O, F, Device>& tail,
                   const HllRowGeometry<O, F, Device>& geom, int lanes, const XView& x,
                   const YView& y) {
  using exec = typename Device::execution_space;
  using functor = HllTailSpmv<S, O, F, Device, XView, YView>;
  const std::int64_t n = tail.n_segments();
  if (n == 0) return;
  const RowLaunch launch =
      resolve_row_launch("spk::spmv (HLL tail)", lanes, 0, 0, 0.0, is_gpu_space<exec>());
  const std::int64_t per_team = launch.rows_per_team;
  functor f{
      tail, geom, x, y, alpha, mode != Mode::N, mode == Mode::H, per_team, launch.threads_per_row};
  Kokkos::TeamPolicy<exec> policy(int((n + per_team - 1) / per_team), launch.team_size,
                                  launch.threads_per_row);
  require_team_size("spk::spmv", policy, f, launch.team_size, launch.threads_per_row);
  Kokkos::parallel_for("spk::hll_spmv::tail", policy, f);
}

}  // namespace impl
}  // namespace spk
