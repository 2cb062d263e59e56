// spk/impl/csr_spmv_staged.hpp: the staged kernel of CSR SpMV (CsrSpmvVariant::staged).
//
// A warp takes 32 / V consecutive rows, V lanes per row. It stages the entries of its rows in
// its share of the team scratch (shared memory), a chunk of 32 * K entries at a time: lane l loads entries
// l, l + 32, ... of the chunk (fully coalesced streaming loads, K of each array in flight per
// lane, chunks aligned to 32 entries). After a __syncwarp each row's V lanes sum its entries
// in the chunk from shared memory (lane j of a row takes entries j, j + V, ...; eight x loads
// in flight) and a shuffle over the V lanes completes the row. No team barriers, no atomics for
// op = N, no partial sums across warps.
//
// Why: one row per thread reads x the way ELL does (lanes at the same position of consecutive
// rows read consecutive x on stencils), but reading the row's entries directly from CSR walks
// memory with a stride of the row length, which relies on L1 keeping the lines between steps.
// Staging gives the entry loads of the nnz-balanced kernels (coalesced, read once) with the
// x reads of one row per lane, and a warp waits only on itself.
//
// With one lane per row and rows of an even mean length the shared-memory slots are swizzled
// (slot q ^ (q / 32) within each block of 32) so that lanes reading rows of 16 entries (the
// same bank for every lane without it) spread over the banks. For op = T / H a row's lanes
// scatter their products into y with atomics.
//
// Rows much longer than 32 * K / (32 / V) make a warp take several chunks with few lanes busy;
// the default heuristic uses the kernel for regular, short rows only (csr_spmv_params.hpp).
#pragma once

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <limits>

#include <spk/csr_spmv_params.hpp>
#include <spk/error.hpp>
#include <spk/impl/csr_analysis.hpp>
#include <spk/impl/csr_spmv.hpp>
#include <spk/impl/warp.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {
namespace impl {

template <class Matrix, class XView, class YView, int K, bool Trans>
struct CsrStagedSpmv {
  using S = typename Matrix::value_type;
  using O = typename Matrix::ordinal_type;
  using F = typename Matrix::size_type;
  using exec = typename Matrix::execution_space;
  using member = typename Kokkos::TeamPolicy<exec>::member_type;
  using traits = scalar_traits<S>;
  using warp = Warp<exec>;
  static constexpr int lanes = warp::size;
  static constexpr int in_flight = 8;  // x loads a lane issues before using them
  static constexpr int chunk = lanes * K;  // entries a warp stages at a time
  using values_scratch =
      Kokkos::View<S*, typename exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  using index_scratch =
      Kokkos::View<O*, typename exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;

  typename Matrix::row_map_type::const_type row_map;
  typename Matrix::index_type::const_type col_idx;
  typename Matrix::values_type::const_type values;
  random_access_t<XView> x;
  YView y;
  S alpha, beta;
  bool beta_zero;
  bool conj;   // op = H
  O nrows;
  int vector;    // lanes per row V, a power of two <= lanes
  bool swizzle;  // permute the slots (rows of an even length, one lane each)

  static std::size_t scratch_bytes(int warps) {
    const std::size_t n = std::size_t(warps) * std::size_t(chunk);
    return values_scratch::shmem_size(n) + index_scratch::shmem_size(n);
  }

  /// The slot of chunk position q: with swizzle, q with its low bits flipped by its block of
  /// 32 (a permutation within each block; the identity on CPU backends, where lanes == 1).
  KOKKOS_INLINE_FUNCTION int slot(int q) const {
    return swizzle ? q ^ ((q / lanes) & (lanes - 1)) : q;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const int lane = warp::lane();
    const int rows_per_warp = lanes / vector;
    const std::int64_t w =
        std::int64_t(team.league_rank()) * team.team_size() + team.team_rank();
    const std::int64_t first = w * rows_per_warp;
    if (first >= std::int64_t(nrows)) return;  // the same for every lane of the warp
    const O r0 = O(first);
    const O rend = r0 + O(rows_per_warp) < nrows ? O(r0 + rows_per_warp) : nrows;
    const O r = O(r0 + lane / vector);
    const int j = lane % vector;  // the lane's place among its row's lanes
    const bool owns = r < rend;
    const F eb = row_map(r0), ee = row_map(rend);
    // lanes without a row take an empty range at the end
    const F rb = owns ? row_map(r) : ee, re = owns ? row_map(r + 1) : ee;

    values_scratch all_v(team.team_scratch(0), std::size_t(team.team_size()) * chunk);
    index_scratch all_c(team.team_scratch(0), std::size_t(team.team_size()) * chunk);
    S* sv = all_v.data() + std::size_t(team.team_rank()) * chunk;
    O* sc = all_c.data() + std::size_t(team.team_rank()) * chunk;

    S acc0 = traits::zero(), acc1 = traits::zero();
    const S xr = Trans && owns ? alpha * x(r) : traits::zero();
    F next = rb + F(j);  // the lane's next entry
    for (F cb = eb - eb % F(lanes); cb < ee; cb += F(chunk)) {
      const F ce = cb + F(chunk) < ee ? cb + F(chunk) : ee;
      // every load of the chunk before the first store: K of each array in flight
      O lc[K];
      S lv[K];
      for (int i = 0; i < K; ++i) {
        const F k = cb + F(lane + i * lanes);
        const bool in = k >= eb && k < ce;
        lc[i] = in ? stream_load(col_idx.data() + k) : O(0);
        lv[i] = in ? stream_load(values.data() + k) : traits::zero();
      }
      for (int i = 0; i < K; ++i) {
        sc[slot(lane + i * lanes)] = lc[i];
        sv[slot(lane + i * lanes)] = lv[i];
      }
      warp::sync();
      const F lim = re < ce ? re : ce;
      const F start = next;
      while (next < lim) {
        O c[in_flight];
        S v[in_flight];
        for (int u = 0; u < in_flight; ++u) {
          const F k = next + F(u) * F(vector);
          const bool in = k < lim;
          const int q = slot(int(k - cb));
          c[u] = in ? sc[q] : O(0);
          v[u] = in ? sv[q] : traits::zero();
          if (!Trans) {
            const S p = in ? v[u] * x(c[u]) : traits::zero();
            if (u % 2 == 0)
              acc0 += p;
            else
              acc1 += p;
          }
        }
        if (Trans) {
          for (int u = 0; u < in_flight; ++u)
            if (next + F(u) * F(vector) < lim)
              atomic_add_value(&y(c[u]), (conj ? traits::conj(v[u]) : v[u]) * xr);
        }
        next += F(in_flight) * F(vector);
      }
      // the loop may have stepped past the chunk: back to this lane's first entry after it
      // (a lane whose row begins in a later chunk has not moved)
      if (next > start && next > ce) next = ce + (next - ce) % F(vector);
      warp::sync();  // the next chunk overwrites the slots
    }
    if (Trans) return;
    S sum = acc0 + acc1;
    for (int d = vector / 2; d > 0; d /= 2) sum += warp::shfl(sum, lane ^ d);
    if (owns && j == 0) y(r) = beta_zero ? alpha * sum : alpha * sum + beta * y(r);
  }
};

template <int K, bool Trans, class Matrix, class XView, class YView>
void csr_spmv_staged_launch(const CsrSpmvParams& p, Mode mode, typename Matrix::value_type alpha,
                            const Matrix& a, const XView& x, typename Matrix::value_type beta,
                            const YView& y) {
  using S = typename Matrix::value_type;
  using exec = typename Matrix::execution_space;
  using functor = CsrStagedSpmv<Matrix, XView, YView, K, Trans>;
  const int lanes = functor::lanes;
  const int vector = p.vector_length < lanes ? p.vector_length : lanes;
  const int warps = is_gpu_space<exec>() ? p.team_size : 1;
  // one lane per row reads slots a row length apart: an odd length spreads over the banks by
  // itself, an even one (16: every lane on two banks) needs the swizzle, which costs about 2x
  // in conflicts on odd lengths
  const double mean = row_stats(a).mean;
  const bool swizzle = vector == 1 && std::llround(mean) % 2 == 0;
  functor f{a.row_map(),
            a.col_idx(),
            a.values(),
            x,
            y,
            alpha,
            beta,
            beta == scalar_traits<S>::zero(),
            mode == Mode::H,
            a.nrows(),
            vector,
            swizzle};
  const std::int64_t rows_per_warp = lanes / vector;
  const std::int64_t nwarps = (std::int64_t(a.nrows()) + rows_per_warp - 1) / rows_per_warp;
  const std::int64_t league = (nwarps + warps - 1) / warps;
  Kokkos::TeamPolicy<exec> policy(league, warps, lanes);
  // the staged chunks live in shared memory (level-0 scratch; a runtime level would make every
  // slot access a generic one: 7-21% slower on the H100, run 13)
  const std::size_t bytes = functor::scratch_bytes(warps);
  require(bytes <= std::size_t(policy.scratch_size_max(0)), "spk::spmv", "staged kernel: ",
          warps, " warps of ", functor::chunk, " staged entries need ", bytes,
          " bytes of team scratch, more than the maximum ", policy.scratch_size_max(0),
          " (lower team_size or entries_per_lane)");
  check_team_size(policy, f, warps, lanes);
  // y = beta y only after every check, so that a refused call leaves y as it was
  if (Trans) scale_vector(exec(), beta, y);
  if (a.nrows() == 0) return;
  Kokkos::parallel_for(Trans ? "spk::csr_spmv_staged_t" : "spk::csr_spmv_staged",
                       policy.set_scratch_size(0, Kokkos::PerTeam(bytes)), f);
}

template <bool Trans, class Matrix, class XView, class YView>
void csr_spmv_staged_k(const CsrSpmvParams& p, Mode mode, typename Matrix::value_type alpha,
                       const Matrix& a, const XView& x, typename Matrix::value_type beta,
                       const YView& y) {
  switch (p.entries_per_lane) {
    case 4: csr_spmv_staged_launch<4, Trans>(p, mode, alpha, a, x, beta, y); break;
    case 16: csr_spmv_staged_launch<16, Trans>(p, mode, alpha, a, x, beta, y); break;
    case 32: csr_spmv_staged_launch<32, Trans>(p, mode, alpha, a, x, beta, y); break;
    default: csr_spmv_staged_launch<8, Trans>(p, mode, alpha, a, x, beta, y); break;
  }
}

/// Staged kernel: a warp stages its rows' entries in shared memory (see the file comment).
template <class Matrix, class XView, class YView>
void csr_spmv_staged(const CsrSpmvParams& p, Mode mode, typename Matrix::value_type alpha,
                     const Matrix& a, const XView& x, typename Matrix::value_type beta,
                     const YView& y) {
  using F = typename Matrix::size_type;
  using O = typename Matrix::ordinal_type;
  using exec = typename Matrix::execution_space;
  const bool trans = mode != Mode::N;
  // the kernel steps positions in F and rows in O up to a chunk (and 8 steps of a row) past
  // the end: a matrix that close to their largest value takes the balanced kernel instead
  const std::uint64_t margin = std::uint64_t(Warp<exec>::size) * (p.entries_per_lane + 16);
  if (std::uint64_t(a.nnz()) + margin > std::uint64_t(std::numeric_limits<F>::max()) ||
      std::uint64_t(a.nrows()) + margin > std::uint64_t(std::numeric_limits<O>::max())) {
    CsrSpmvParams b;
    b.variant = CsrSpmvVariant::balanced;
    b = choose_csr_spmv_params(row_stats(a), is_gpu_space<exec>(), b, mode);
    if (trans)
      csr_spmv_balanced_t(b, mode, alpha, a, x, beta, y);
    else
      csr_spmv_balanced(b, alpha, a, x, beta, y);
    return;
  }
  if (trans)
    csr_spmv_staged_k<true>(p, mode, alpha, a, x, beta, y);
  else
    csr_spmv_staged_k<false>(p, mode, alpha, a, x, beta, y);
}

}  // namespace impl
}  // namespace spk
