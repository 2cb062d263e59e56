// spk/impl/csr_spmv_warp.hpp: the warp kernel of CSR SpMV (CsrSpmvVariant::warp).
//
// The nonzeros are cut into windows of 32 * K entries, one warp each; lane l of a warp loads the
// K consecutive entries l * K .. l * K + K - 1 of its window with 16-byte loads (a warp reads
// its window's column indices and values as one contiguous, aligned block) and multiplies them
// by x. The warp stages the row starts of its window in shared memory (one coalesced load; a
// window with too many empty rows reads the row map directly instead). Rows are then summed
// without barriers: a lane walks the rows its K entries touch (a binary search in the staged
// row starts, then the next starts), writes every row
// that begins and ends inside its K entries, and hands the row still open at its end to a
// segmented scan by warp shuffles (key = row), which adds it to the lanes that continue the same
// row. Rows crossing windows leave a partial sum per window that window_fixup completes, as in
// the balanced kernel; nothing is atomic for op = N. A row is owned by the lane holding the
// position of its first entry (empty rows included), so every row is written exactly once.
//
// For op = T / H a lane scatters its K products into y with atomics, using the same row walk.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>

#include <spk/csr_spmv_params.hpp>
#include <spk/error.hpp>
#include <spk/impl/csr_analysis.hpp>
#include <spk/impl/csr_spmv.hpp>
#include <spk/impl/search.hpp>
#include <spk/impl/warp.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {
namespace impl {

template <class Matrix, class XView, class YView, int K, bool Trans>
struct CsrWarpSpmv {
  using S = typename Matrix::value_type;
  using O = typename Matrix::ordinal_type;
  using F = typename Matrix::size_type;
  using exec = typename Matrix::execution_space;
  using member = typename Kokkos::TeamPolicy<exec>::member_type;
  using traits = scalar_traits<S>;
  using warp = Warp<exec>;
  static constexpr int lanes = warp::size;
  static constexpr int window = lanes * K;
  /// Row starts a warp stages: a window without empty rows has at most window + 1 rows.
  static constexpr int staged_rows = window + 2;
  using scratch_view =
      Kokkos::View<F*, typename exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;

  /// Row starts of rows r0 .. r0 + n - 1 from the warp's shared memory, or the row map.
  struct RowStarts {
    const F* stage;
    O r0;
    bool staged;
    typename Matrix::row_map_type::const_type row_map;
    KOKKOS_INLINE_FUNCTION F operator()(O r) const { return staged ? stage[r - r0] : row_map(r); }
  };

  static std::size_t scratch_bytes(int warps) {
    return scratch_view::shmem_size(std::size_t(warps) * staged_rows);
  }

  typename Matrix::row_map_type::const_type row_map;
  typename Matrix::index_type::const_type col_idx;
  typename Matrix::values_type::const_type values;
  random_access_t<XView> x;
  YView y;
  S alpha, beta;
  bool beta_zero;
  bool conj;     // op = H
  bool aligned;  // col_idx and values start on 16-byte boundaries: wide loads allowed
  O nrows;
  F nnz;
  std::int64_t nwindows;
  Kokkos::View<const O*, typename Matrix::device_type> window_rows;  // see compute_window_rows
  Kokkos::View<S*, typename Matrix::device_type> carry;  // tail of a row begun earlier
  Kokkos::View<S*, typename Matrix::device_type> head;   // start of a row that goes on

  KOKKOS_INLINE_FUNCTION void write(O r, const S& sum) const {
    y(r) = beta_zero ? alpha * sum : alpha * sum + beta * y(r);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const std::int64_t w =
        std::int64_t(team.league_rank()) * team.team_size() + team.team_rank();
    if (w >= nwindows) return;  // the same for every lane of the warp
    const int lane = warp::lane();
    // stage the starts of rows r0 .. hi_row (every row start the lanes read)
    const O lo_row = window_rows(w), hi_row = window_rows(w + 1);
    const O r0 = lo_row > 0 ? O(lo_row - 1) : O(0);
    const O count = O(hi_row - r0 + 1);
    scratch_view all(team.team_scratch(0), std::size_t(team.team_size()) * staged_rows);
    F* stage = all.data() + std::size_t(team.team_rank()) * staged_rows;
    const bool staged = count <= O(staged_rows);
    if (staged) {
      for (O i = O(lane); i < count; i += O(lanes)) stage[i] = row_map(r0 + i);
      warp::sync();
    }
    const RowStarts row_start{stage, r0, staged, row_map};
    const F wbeg = F(w) * F(window);
    const F wend = wbeg + F(window) < nnz ? wbeg + F(window) : nnz;
    const F a = wbeg + F(lane) * F(K);
    const F b = a + F(K) < wend ? a + F(K) : wend;  // b <= a: an idle lane of the last window

    O c[K];
    S v[K];
    if (aligned && a + F(K) <= wend) {
      warp::template stream<K>(&col_idx(a), c);
      warp::template stream<K>(&values(a), v);
    } else {
      for (int j = 0; j < K; ++j) {
        const bool in = a + F(j) < wend;
        c[j] = in ? col_idx(a + F(j)) : O(0);
        v[j] = in ? values(a + F(j)) : traits::zero();
      }
    }
    S prod[K];
    if (!Trans) {
      for (int j = 0; j < K; ++j) prod[j] = a + F(j) < wend ? v[j] * x(c[j]) : traits::zero();
    }

    // the row still open at the lane's end (key -1 - lane: none, unequal to every other key)
    std::int64_t key = -1 - lane;
    S tail = traits::zero();
    bool has_head = false;  // the lane ends a row that began before its first entry
    O head_row = 0;
    S head_sum = traits::zero();
    if (a < wend) {
      // the first row starting at or after a; if it starts after a, the lane begins inside
      // the row before it
      const O first = impl::lower_bound(row_start, lo_row, hi_row, a);
      const bool continuing = row_start(first) > a;
      O r = continuing ? O(first - 1) : first;
      F next = row_start(r + 1);
      S acc = traits::zero();
      S xr = Trans ? alpha * x(r) : traits::zero();
      for (int j = 0; j < K; ++j) {
        const F k = a + F(j);
        if (k >= b) break;
        while (k >= next) {  // row r ends before entry k (empty rows end where they begin)
          if (!Trans) {
            if (continuing && r + 1 == first) {
              has_head = true;
              head_row = r;
              head_sum = acc;
            } else {
              write(r, acc);
            }
          }
          ++r;
          next = row_start(r + 1);
          acc = traits::zero();
          if (Trans) xr = alpha * x(r);
        }
        if (Trans)
          atomic_add_value(&y(c[j]), (conj ? traits::conj(v[j]) : v[j]) * xr);
        else
          acc += prod[j];
      }
      if (Trans) return;
      if (next == b) {  // row r ends with the lane's last entry
        if (continuing && r + 1 == first) {
          has_head = true;
          head_row = r;
          head_sum = acc;
        } else {
          write(r, acc);
        }
        if (b == nnz)  // rows after the last entry are empty and belong to the last lane
          for (O q = r + 1; q < nrows; ++q) write(q, traits::zero());
      } else {
        key = std::int64_t(r);
        tail = acc;
      }
    }
    if (Trans) return;

    // inclusive segmented scan of the open rows over the lanes (keys are equal only on lanes
    // that lie inside one row): s = this lane's tail plus the tails of the lanes before it in
    // the same row
    S s = tail;
    for (int d = 1; d < lanes; d *= 2) {
      const S other = warp::shfl_up(s, d);
      const std::int64_t other_key = warp::shfl_up(key, d);
      if (lane >= d && other_key == key) s += other;
    }
    const S prev_s = warp::shfl_up(s, 1);
    const std::int64_t prev_key = warp::shfl_up(key, 1);
    if (has_head) {
      const S sum =
          head_sum + (lane > 0 && prev_key == std::int64_t(head_row) ? prev_s : traits::zero());
      if (row_start(head_row) >= wbeg)
        write(head_row, sum);
      else  // began in an earlier window: this window's part
        carry(w) = sum;
    }
    if (key >= 0 && b == wend) {  // the row open at the window's end
      if (row_start(O(key)) >= wbeg)
        head(w) = s;
      else  // began in an earlier window and spans this one
        carry(w) = s;
    }
  }
};

/// The warp kernel's window rows (its own cache slot, beside the balanced kernel's).
template <class Matrix>
Kokkos::View<typename Matrix::ordinal_type*, typename Matrix::device_type> warp_window_rows(
    const Matrix& a, typename Matrix::size_type window) {
  auto& an = csr_analysis(a);
  return cached_window_rows(a, window, an.warp_rows, an.warp_nnz);
}

template <int K, bool Trans, class Matrix, class XView, class YView>
void csr_spmv_warp_launch(const CsrSpmvParams& p, Mode mode, typename Matrix::value_type alpha,
                          const Matrix& a, const XView& x, typename Matrix::value_type beta,
                          const YView& y) {
  using S = typename Matrix::value_type;
  using F = typename Matrix::size_type;
  using exec = typename Matrix::execution_space;
  using functor = CsrWarpSpmv<Matrix, XView, YView, K, Trans>;
  const F window = F(functor::window);
  const std::int64_t nwindows = (std::int64_t(a.nnz()) + window - 1) / window;
  Kokkos::View<S*, typename Matrix::device_type> carry, head;
  if (!Trans) window_partials(a, nwindows, carry, head);
  const auto aligned16 = [](const void* ptr) {
    return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0;
  };
  functor f{a.row_map(),
            a.col_idx(),
            a.values(),
            x,
            y,
            alpha,
            beta,
            beta == scalar_traits<S>::zero(),
            mode == Mode::H,
            aligned16(a.col_idx().data()) && aligned16(a.values().data()),
            a.nrows(),
            a.nnz(),
            nwindows,
            warp_window_rows(a, window),
            carry,
            head};
  const int warps = is_gpu_space<exec>() ? p.team_size : 1;
  const std::int64_t league = (nwindows + warps - 1) / warps;
  Kokkos::TeamPolicy<exec> policy(league, warps, functor::lanes);
  check_team_size(policy, f, warps, functor::lanes);
  Kokkos::parallel_for(Trans ? "spk::csr_spmv_warp_t" : "spk::csr_spmv_warp",
                       policy.set_scratch_size(0, Kokkos::PerTeam(functor::scratch_bytes(warps))),
                       f);
  if (!Trans) window_fixup(a, window, nwindows, f.window_rows, carry, head, alpha, beta, y);
}

/// Warp kernel: windows of 32 * entries_per_lane nonzeros per warp (see the file comment).
template <class Matrix, class XView, class YView>
void csr_spmv_warp(const CsrSpmvParams& p, Mode mode, typename Matrix::value_type alpha,
                   const Matrix& a, const XView& x, typename Matrix::value_type beta,
                   const YView& y) {
  using exec = typename Matrix::execution_space;
  const bool trans = mode != Mode::N;
  if (trans || a.nnz() == 0) scale_vector(exec(), beta, y);
  if (a.nnz() == 0) return;
  if (p.entries_per_lane == 8) {
    if (trans)
      csr_spmv_warp_launch<8, true>(p, mode, alpha, a, x, beta, y);
    else
      csr_spmv_warp_launch<8, false>(p, mode, alpha, a, x, beta, y);
  } else {
    if (trans)
      csr_spmv_warp_launch<4, true>(p, mode, alpha, a, x, beta, y);
    else
      csr_spmv_warp_launch<4, false>(p, mode, alpha, a, x, beta, y);
  }
}

}  // namespace impl
}  // namespace spk
