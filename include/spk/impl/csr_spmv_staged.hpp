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
// Products staged (op = N, CsrSpmvParams::stage_products = 1 or 2): the lanes multiply each
// loaded entry by x at once (x read in entry order, which on banded and stencil rows is a few
// lines per load) and stage only the products, one slot per entry; a row's lanes then add
// slots, with no index or x reads and less shared memory than staged entries (8 bytes a slot
// instead of 12 in double with 32-bit indices). Slot positions are unsigned and the swizzle is
// a compile-time choice so that the adding loop is a load and an add per slot (run F1's first
// version spent ~11 instructions per slot on signed divisions:
// docs/perf/2026-11-29-h200-ncu-products.txt). With one lane per row and an even mean length
// the product slots are swizzled within each 128-byte row of banks.
//
// Loading ahead (stage_products = 2, the default for rows of more than 16 entries, in chunks of
// 128): a warp issues the next chunk's index and value loads before this chunk's x reads,
// stores and adds, so its entry loads stay in flight through every phase (products without it
// are latency-bound: 46% occupancy, DRAM 70% busy on the full band; with it and chunks of 128,
// the same 64 registers and DRAM 76% busy). Chunks of 256 loaded ahead take 96 registers.
//
// Rows much longer than 32 * K / (32 / V) make a warp take several chunks with few lanes busy;
// the default heuristic uses the kernel for regular rows of up to 64 entries
// (csr_spmv_params.hpp).
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

template <class Matrix, class XView, class YView, int K, bool Trans, bool Products = false,
          bool Prefetch = false>
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
  int vector_shift;  // log2(vector)

  static std::size_t scratch_bytes(int warps) {
    const std::size_t n = std::size_t(warps) * std::size_t(chunk);
    return Products ? values_scratch::shmem_size(n)
                    : values_scratch::shmem_size(n) + index_scratch::shmem_size(n);
  }

  /// Slots of one 128-byte row of shared-memory banks: the block the swizzle permutes within
  /// (1 on CPU backends, where lanes == 1: no banks, no permutation).
  static constexpr int bank_row =
      Products && lanes > 1 ? (sizeof(S) >= 128 ? 1 : int(128 / sizeof(S))) : lanes;

  /// The slot of chunk position q: with swizzle, q with its low bits flipped by its block of
  /// bank_row (a permutation within each block; the identity on CPU backends, where lanes == 1).
  KOKKOS_INLINE_FUNCTION int slot(int q) const {
    return swizzle ? q ^ ((q / bank_row) & (bank_row - 1)) : q;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    if constexpr (Products)
      run_products(team);
    else
      run_entries(team);
  }

  /// op = N, products staged: a warp loads a chunk of its rows' entries coalesced, multiplies
  /// them by x at once and stages the products only (one slot per entry); each row's lanes then
  /// add their products from shared memory (no x reads, no index reads in that phase).
  KOKKOS_INLINE_FUNCTION void run_products(const member& team) const {
    if (swizzle)
      run_products_impl<true>(team);
    else
      run_products_impl<false>(team);
  }

  /// The products' slot of chunk position q (Swizzle: q with its low bits flipped by its
  /// bank row; positions are unsigned so that the compiler shifts instead of dividing).
  template <bool Swizzle>
  KOKKOS_INLINE_FUNCTION static unsigned product_slot(unsigned q) {
    constexpr unsigned b = unsigned(bank_row);
    if (Swizzle && b > 1) return q ^ ((q / b) & (b - 1));
    return q;
  }

  /// run_products with the swizzle fixed. Prefetch (stage_products = 2) loads the next chunk's
  /// entries before this chunk's x reads and adds, so the warp's entry loads stay in flight
  /// while it multiplies and adds (a second set of K index and value registers per lane).
  template <bool Swizzle>
  KOKKOS_INLINE_FUNCTION void run_products_impl(const member& team) const {
    const int lane = warp::lane();
    const int rows_per_warp = lanes >> vector_shift;
    const std::int64_t w =
        std::int64_t(team.league_rank()) * team.team_size() + team.team_rank();
    const std::int64_t first = w * rows_per_warp;
    if (first >= std::int64_t(nrows)) return;  // the same for every lane of the warp
    const O r0 = O(first);
    const O rend = r0 + O(rows_per_warp) < nrows ? O(r0 + rows_per_warp) : nrows;
    const O r = O(r0 + (lane >> vector_shift));
    const unsigned j = unsigned(lane) & unsigned(vector - 1);
    const bool owns = r < rend;
    const F eb = row_map(r0), ee = row_map(rend);
    const F rb = owns ? row_map(r) : ee, re = owns ? row_map(r + 1) : ee;

    values_scratch all_p(team.team_scratch(0), std::size_t(team.team_size()) * chunk);
    S* const sp = all_p.data() + std::size_t(team.team_rank()) * chunk;

    S acc0 = traits::zero(), acc1 = traits::zero(), acc2 = traits::zero(),
      acc3 = traits::zero();
    const unsigned step = unsigned(vector);
    // chunks start at multiples of 32 entries; a lane's positions within a chunk are unsigned
    F cb = eb - (eb & F(lanes - 1));
    F next = rb + F(j);  // the lane's next entry
    O lc[K];  // this chunk's entries (Prefetch: loaded one iteration ahead)
    S lv[K];
    if constexpr (Prefetch) {  // the first chunk
      const unsigned lo = unsigned(eb - cb);
      const F rest = ee - cb;
      load_chunk(cb, lo, unsigned(rest < F(chunk) ? rest : F(chunk)) - lo, lane, lc, lv);
    }
    for (; cb < ee; cb += F(chunk)) {
      // position lane + i * lanes of the chunk holds an entry of this warp's rows when
      // (lane + i * lanes - lo) < span, unsigned
      const unsigned lo = unsigned(eb > cb ? eb - cb : F(0));
      const F rest = ee - cb;
      const unsigned span = unsigned(rest < F(chunk) ? rest : F(chunk)) - lo;
      [[maybe_unused]] O nc[K];  // Prefetch: the next chunk's entries
      [[maybe_unused]] S nv[K];
      if constexpr (Prefetch) {
        // the next chunk, in flight from here on (it starts past eb: positions 0 .. nspan - 1)
        const F nb = cb + F(chunk);
        const F nrest = ee > nb ? ee - nb : F(0);
        load_chunk(nb, 0u, unsigned(nrest < F(chunk) ? nrest : F(chunk)), lane, nc, nv);
      } else {
        load_chunk(cb, lo, span, lane, lc, lv);
      }
      for (int i = 0; i < K; ++i) {
        if (unsigned(lane + i * lanes) - lo < span) lv[i] *= x(lc[i]);
      }
      for (int i = 0; i < K; ++i) sp[product_slot<Swizzle>(unsigned(lane + i * lanes))] = lv[i];
      warp::sync();
      const F lim = re < ce_of(cb, ee) ? re : ce_of(cb, ee);
      if (next < lim) {
        unsigned q = unsigned(next - cb);
        const unsigned qe = unsigned(lim - cb);
        for (; q + 3 * step < qe; q += 4 * step) {
          acc0 += sp[product_slot<Swizzle>(q)];
          acc1 += sp[product_slot<Swizzle>(q + step)];
          acc2 += sp[product_slot<Swizzle>(q + 2 * step)];
          acc3 += sp[product_slot<Swizzle>(q + 3 * step)];
        }
        for (; q < qe; q += step) acc0 += sp[product_slot<Swizzle>(q)];
        next = cb + F(q);  // the first of the lane's positions at or past lim
      }
      warp::sync();  // the next chunk overwrites the slots
      if constexpr (Prefetch) {
        for (int i = 0; i < K; ++i) {
          lc[i] = nc[i];
          lv[i] = nv[i];
        }
      }
    }
    S sum = (acc0 + acc1) + (acc2 + acc3);
    for (int d = vector / 2; d > 0; d /= 2) sum += warp::shfl(sum, lane ^ d);
    if (owns && j == 0) y(r) = beta_zero ? alpha * sum : alpha * sum + beta * y(r);
  }

  /// Loads the chunk at cb: lane's positions lane + i * lanes (i < K) whose offset from lo is
  /// below span (unsigned) get their column and value, the others 0 (coalesced streaming
  /// loads, K of each array in flight).
  KOKKOS_FORCEINLINE_FUNCTION void load_chunk(F cb, unsigned lo, unsigned span, int lane,
                                              O (&c)[K], S (&v)[K]) const {
    const O* const cp = col_idx.data() + cb + lane;
    const S* const vp = values.data() + cb + lane;
    for (int i = 0; i < K; ++i) {
      const bool in = unsigned(lane + i * lanes) - lo < span;
      c[i] = in ? stream_load(cp + i * lanes) : O(0);
      v[i] = in ? stream_load(vp + i * lanes) : traits::zero();
    }
  }

  /// The end of the chunk that starts at cb.
  KOKKOS_INLINE_FUNCTION static F ce_of(F cb, F ee) {
    return cb + F(chunk) < ee ? cb + F(chunk) : ee;
  }

  KOKKOS_INLINE_FUNCTION void run_entries(const member& team) const {
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

template <int K, bool Trans, bool Products, bool Prefetch, class Matrix, class XView,
          class YView>
void csr_spmv_staged_launch(const CsrSpmvParams& p, Mode mode, typename Matrix::value_type alpha,
                            const Matrix& a, const XView& x, typename Matrix::value_type beta,
                            const YView& y) {
  using S = typename Matrix::value_type;
  using exec = typename Matrix::execution_space;
  using functor = CsrStagedSpmv<Matrix, XView, YView, K, Trans, Products, Prefetch>;
  const int lanes = functor::lanes;
  const int vector = p.vector_length < lanes ? p.vector_length : lanes;
  const int warps = is_gpu_space<exec>() ? p.team_size : 1;
  // one lane per row reads slots a row length apart: an odd length spreads over the banks by
  // itself, an even one (16: every lane on two banks) needs the swizzle, which costs about 2x
  // in conflicts on odd lengths
  const double mean = row_stats(a).mean;
  const bool swizzle = vector == 1 && std::llround(mean) % 2 == 0;
  int vector_shift = 0;
  while ((1 << vector_shift) < vector) ++vector_shift;
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
            swizzle,
            vector_shift};
  const std::int64_t rows_per_warp = lanes / vector;
  const std::int64_t nwarps = (std::int64_t(a.nrows()) + rows_per_warp - 1) / rows_per_warp;
  const std::int64_t league = (nwarps + warps - 1) / warps;
  Kokkos::TeamPolicy<exec> policy(league, warps, lanes);
  // the staged chunks live in shared memory (level-0 scratch; a runtime level would make every
  // slot access a generic one: 7-21% slower on the H100, run 13)
  const std::size_t bytes = functor::scratch_bytes(warps);
  require(bytes <= std::size_t(policy.scratch_size_max(0)), "spk::spmv", "staged kernel: ",
          warps, " warps of ", functor::chunk,
          Products ? " staged products need " : " staged entries need ", bytes,
          " bytes of team scratch, more than the maximum ", policy.scratch_size_max(0),
          " (lower team_size or entries_per_lane)");
  check_team_size(policy, f, warps, lanes);
  // y = beta y only after every check, so that a refused call leaves y as it was
  if (Trans) scale_vector(exec(), beta, y);
  if (a.nrows() == 0) return;
  Kokkos::parallel_for(Trans       ? "spk::csr_spmv_staged_t"
                       : Prefetch ? "spk::csr_spmv_staged_products_ahead"
                       : Products ? "spk::csr_spmv_staged_products"
                                  : "spk::csr_spmv_staged",
                       policy.set_scratch_size(0, Kokkos::PerTeam(bytes)), f);
}

template <bool Trans, bool Products, bool Prefetch, class Matrix, class XView, class YView>
void csr_spmv_staged_k(const CsrSpmvParams& p, Mode mode, typename Matrix::value_type alpha,
                       const Matrix& a, const XView& x, typename Matrix::value_type beta,
                       const YView& y) {
  switch (p.entries_per_lane) {
    case 4:
      csr_spmv_staged_launch<4, Trans, Products, Prefetch>(p, mode, alpha, a, x, beta, y);
      break;
    case 16:
      csr_spmv_staged_launch<16, Trans, Products, Prefetch>(p, mode, alpha, a, x, beta, y);
      break;
    case 32:
      csr_spmv_staged_launch<32, Trans, Products, Prefetch>(p, mode, alpha, a, x, beta, y);
      break;
    default:
      csr_spmv_staged_launch<8, Trans, Products, Prefetch>(p, mode, alpha, a, x, beta, y);
      break;
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
    csr_spmv_staged_k<true, false, false>(p, mode, alpha, a, x, beta, y);
  else if (p.stage_products == 2)
    csr_spmv_staged_k<false, true, true>(p, mode, alpha, a, x, beta, y);
  else if (p.stage_products == 1)
    csr_spmv_staged_k<false, true, false>(p, mode, alpha, a, x, beta, y);
  else
    csr_spmv_staged_k<false, false, false>(p, mode, alpha, a, x, beta, y);
}

}  // namespace impl
}  // namespace spk
