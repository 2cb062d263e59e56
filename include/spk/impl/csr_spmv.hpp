// spk/impl/csr_spmv.hpp: CSR SpMV kernels.
//
// - CsrVectorSpmv: rows split into chunks of rows_per_team; a team of team_size vectors with
//   vector_length lanes each; lanes of a vector reduce one row (vector_length 1 is the
//   one-row-per-thread kernel). Static (team t takes chunk t) or dynamic (persistent teams take
//   chunks from an atomic counter) scheduling. The same functor scatters with atomics for
//   op = T / H.
// - CsrBalancedSpmv: the nonzeros are cut into equal windows of chunk_nnz entries, one team each
//   (row-block splitting). A team loads its window's products coalesced into team scratch, then
//   sums the rows that start in the window; a row that continues past the window leaves a
//   partial sum that a small fix-up kernel completes, so no atomics and no imbalance from long
//   rows.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>

#include <spk/csr_matrix.hpp>
#include <spk/csr_spmv_params.hpp>
#include <spk/error.hpp>
#include <spk/impl/csr_analysis.hpp>
#include <spk/impl/search.hpp>
#include <spk/impl/warp.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {
namespace impl {

/// y = beta * y (beta == 0 overwrites, so NaN in y does not propagate).
template <class ExecSpace, class S, class YView>
void scale_vector(const ExecSpace& space, S beta, const YView& y) {
  using traits = scalar_traits<S>;
  const bool zero = beta == traits::zero();
  Kokkos::parallel_for(
      "spk::scale_vector", Kokkos::RangePolicy<ExecSpace>(space, 0, y.extent(0)),
      KOKKOS_LAMBDA(const std::size_t i) { y(i) = zero ? traits::zero() : beta * y(i); });
}

/// atomic y += v, component-wise for complex values (two native atomics instead of a lock).
template <class S>
KOKKOS_INLINE_FUNCTION void atomic_add_value(S* dst, const S& v) {
  Kokkos::atomic_add(dst, v);
}
template <class Real>
KOKKOS_INLINE_FUNCTION void atomic_add_value(Kokkos::complex<Real>* dst,
                                             const Kokkos::complex<Real>& v) {
  Real* parts = reinterpret_cast<Real*>(dst);
  Kokkos::atomic_add(parts, v.real());
  Kokkos::atomic_add(parts + 1, v.imag());
}

/// x as a read-only, random-access view (the texture/__ldg path on CUDA).
template <class XView>
using random_access_t =
    Kokkos::View<const typename XView::non_const_value_type*, typename XView::array_layout,
                 typename XView::device_type, Kokkos::MemoryTraits<Kokkos::RandomAccess>>;

/// Throws std::invalid_argument when a team of team_size x vector_length cannot be launched.
template <class Policy, class Functor>
void check_team_size(const Policy& policy, const Functor& f, int team_size, int vector_length) {
  using exec = typename Policy::execution_space;
  const int max_team = policy.team_size_max(f, Kokkos::ParallelForTag());
  require(team_size <= max_team, "spk::spmv", "team size ", team_size, " (vector length ",
          vector_length, ") exceeds the maximum ", max_team, " of execution space ",
          exec::name());
}

template <class Matrix, class XView, class YView>
struct CsrVectorSpmv {
  using S = typename Matrix::value_type;
  using O = typename Matrix::ordinal_type;
  using F = typename Matrix::size_type;
  using exec = typename Matrix::execution_space;
  using member = typename Kokkos::TeamPolicy<exec>::member_type;
  using traits = scalar_traits<S>;

  typename Matrix::row_map_type::const_type row_map;
  typename Matrix::index_type::const_type col_idx;
  typename Matrix::values_type::const_type values;
  random_access_t<XView> x;
  YView y;
  S alpha, beta;
  bool beta_zero;
  Mode mode;
  O nrows;
  O rows_per_team;
  O nchunks;
  int vector_length;
  Kokkos::View<O*, typename Matrix::device_type> counter;  // dynamic schedule only
  int in_flight = 0;  // one row per thread: 4 or 8 = chunked_dot<in_flight>, else strided_dot

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    if (counter.extent(0) == 0) {
      chunk(team, O(team.league_rank()));
      return;
    }
    while (true) {
      O c = 0;
      Kokkos::single(
          Kokkos::PerTeam(team), [&](O& v) { v = atomic_fetch_add_int(&counter(0), O(1)); },
          c);
      if (c >= nchunks) break;
      chunk(team, c);
    }
  }

  /// sum of values(k) * x(col_idx(k)) for k = k0, k0 + stride, ... < e, four entries in flight
  /// (independent loads before their use keep more memory requests outstanding). Plain loads:
  /// a thread walks its row's lines in L1, where streaming (evict-first) loads lost them (2-3x
  /// slower on the stencils, docs/PERFORMANCE.md).
  KOKKOS_INLINE_FUNCTION S strided_dot(F k, const F e, const F stride) const {
    S s0 = traits::zero(), s1 = traits::zero();
    for (; k + 3 * stride < e; k += 4 * stride) {
      const O c0 = col_idx(k), c1 = col_idx(k + stride), c2 = col_idx(k + 2 * stride),
              c3 = col_idx(k + 3 * stride);
      const S v0 = values(k), v1 = values(k + stride), v2 = values(k + 2 * stride),
              v3 = values(k + 3 * stride);
      s0 += v0 * x(c0);
      s1 += v1 * x(c1);
      s0 += v2 * x(c2);
      s1 += v3 * x(c3);
    }
    for (; k < e; k += stride) s0 += values(k) * x(col_idx(k));
    return s0 + s1;
  }

  /// sum of values(k) * x(col_idx(k)) for k in [b, e) in chunks of U entries, every load of a
  /// chunk issued before its first multiply-add, the last (partial) chunk too: entries past e
  /// load entry b of the chunk again and add nothing. A row of n entries costs ceil(n / U)
  /// dependent rounds of loads (strided_dot: one per entry after the last full four).
  template <int U>
  KOKKOS_INLINE_FUNCTION S chunked_dot(F k, const F e) const {
    S s0 = traits::zero(), s1 = traits::zero();
    for (; k + (U - 1) < e; k += U) {
      O cc[U];
      S vv[U];
      for (int j = 0; j < U; ++j) {
        cc[j] = col_idx(k + j);
        vv[j] = values(k + j);
      }
      for (int j = 0; j < U; j += 2) {
        s0 += vv[j] * x(cc[j]);
        s1 += vv[j + 1] * x(cc[j + 1]);
      }
    }
    if (k < e) {
      O cc[U - 1];
      S vv[U - 1];
      for (int j = 0; j < U - 1; ++j) {
        const F kj = k + F(j) < e ? k + F(j) : k;
        cc[j] = col_idx(kj);
        vv[j] = values(kj);
      }
      for (int j = 0; j < U - 1; ++j) {
        const S p = vv[j] * x(cc[j]);
        if (k + F(j) < e) (j % 2 == 0 ? s0 : s1) += p;
      }
    }
    return s0 + s1;
  }

  KOKKOS_INLINE_FUNCTION void chunk(const member& team, O c) const {
    const O begin = c * rows_per_team;
    const O end = begin + rows_per_team < nrows ? begin + rows_per_team : nrows;
    if (mode == Mode::N) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](const O i) {
        const F b = row_map(i), e = row_map(i + 1);
        S sum = traits::zero();
        if (vector_length == 1) {
          // one row per thread: four loads in flight, or chunks of in_flight
          sum = in_flight == 8   ? chunked_dot<8>(b, e)
                : in_flight == 4 ? chunked_dot<4>(b, e)
                                 : strided_dot(b, e, F(1));
        } else if (vector_length >= 16) {
          // a vector reads whole lines per step: streaming loads keep x in the caches (with 4
          // or 8 lanes the next step's entries are in the same lines, which they lost)
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(team, b, e),
              [&](const F k, S& s) {
                s += stream_load(values.data() + k) * x(stream_load(col_idx.data() + k));
              },
              sum);
        } else {
          Kokkos::parallel_reduce(
              Kokkos::ThreadVectorRange(team, b, e),
              [&](const F k, S& s) { s += values(k) * x(col_idx(k)); }, sum);
        }
        Kokkos::single(Kokkos::PerThread(team), [&]() {
          y(i) = beta_zero ? alpha * sum : alpha * sum + beta * y(i);
        });
      });
    } else {
      const bool conj = mode == Mode::H;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](const O i) {
        const S xi = alpha * x(i);
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, row_map(i), row_map(i + 1)),
                             [&](const F k) {
                               const S v = conj ? traits::conj(values(k)) : values(k);
                               atomic_add_value(&y(col_idx(k)), v * xi);
                             });
      });
    }
  }
};

/// Row-vector kernel (N, or T/H with atomics after y = beta y).
template <class Matrix, class XView, class YView>
void csr_spmv_vector(const CsrSpmvParams& p, Mode mode, typename Matrix::value_type alpha,
                     const Matrix& a, const XView& x, typename Matrix::value_type beta,
                     const YView& y) {
  using S = typename Matrix::value_type;
  using O = typename Matrix::ordinal_type;
  using exec = typename Matrix::execution_space;
  using functor = CsrVectorSpmv<Matrix, XView, YView>;
  if (mode != Mode::N) scale_vector(exec(), beta, y);
  if (a.nrows() == 0) return;
  const O rows_per_team = O(p.team_size) * O(p.rows_per_thread);
  const O nchunks = (a.nrows() + rows_per_team - 1) / rows_per_team;
  functor f{a.row_map(), a.col_idx(), a.values(), x, y, alpha, beta,
            beta == scalar_traits<S>::zero(), mode, a.nrows(), rows_per_team, nchunks,
            p.vector_length, {},
            p.variant == CsrSpmvVariant::thread ? p.entries_per_lane : 0};
  O league = nchunks;
  if (p.schedule == SpmvSchedule::dynamic_chunks) {
    f.counter = Kokkos::View<O*, typename Matrix::device_type>("spk::spmv_counter", 1);
    league = p.league_size > 0 ? O(p.league_size)
                               : O(exec().concurrency() / (p.team_size * p.vector_length)) * 2;
    if (league < 1) league = 1;
    if (league > nchunks) league = nchunks;
  }
  Kokkos::TeamPolicy<exec> policy(league, p.team_size, p.vector_length);
  check_team_size(policy, f, p.team_size, p.vector_length);
  Kokkos::parallel_for("spk::csr_spmv_vector", policy, f);
}

template <class Matrix, class XView, class YView>
struct CsrBalancedSpmv {
  using S = typename Matrix::value_type;
  using O = typename Matrix::ordinal_type;
  using F = typename Matrix::size_type;
  using exec = typename Matrix::execution_space;
  using member = typename Kokkos::TeamPolicy<exec>::member_type;
  using traits = scalar_traits<S>;
  using scratch_view =
      Kokkos::View<S*, typename exec::scratch_memory_space, Kokkos::MemoryUnmanaged>;

  typename Matrix::row_map_type::const_type row_map;
  typename Matrix::index_type::const_type col_idx;
  typename Matrix::values_type::const_type values;
  random_access_t<XView> x;
  YView y;
  S alpha, beta;
  bool beta_zero;
  O nrows;
  F nnz;
  F window;
  std::int64_t nwindows;
  Kokkos::View<S*, typename Matrix::device_type> carry;  // tail of a row begun earlier
  Kokkos::View<S*, typename Matrix::device_type> head;   // start of a row that goes on
  Kokkos::View<const O*, typename Matrix::device_type> window_rows;  // see CsrAnalysis
  int scratch_level = 0;

  static std::size_t scratch_bytes(F window) { return scratch_view::shmem_size(window); }

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const std::int64_t w = team.league_rank();
    const F wbeg = F(w) * window;
    const F wend = wbeg + window < nnz ? wbeg + window : nnz;
    const O r0 = window_rows(w);
    const O r1 = window_rows(w + 1);
    const bool has_tail = r0 > 0 && row_map(r0) > wbeg;
    scratch_view prod(team.team_scratch(scratch_level), window);
    // coalesced: thread t takes entries t, t + T, ...; four loads in flight per thread
    const F n = wend - wbeg;
    const F nt = F(team.team_size());
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, team.team_size()), [&](const int t) {
      F k = F(t);
      for (; k + 3 * nt < n; k += 4 * nt) {
        // the entries are read once: streaming loads keep x in the caches
        const O* cp = col_idx.data() + wbeg + k;
        const S* vp = values.data() + wbeg + k;
        const O c0 = stream_load(cp), c1 = stream_load(cp + nt), c2 = stream_load(cp + 2 * nt),
                c3 = stream_load(cp + 3 * nt);
        const S v0 = stream_load(vp), v1 = stream_load(vp + nt), v2 = stream_load(vp + 2 * nt),
                v3 = stream_load(vp + 3 * nt);
        prod(k) = v0 * x(c0);
        prod(k + nt) = v1 * x(c1);
        prod(k + 2 * nt) = v2 * x(c2);
        prod(k + 3 * nt) = v3 * x(c3);
      }
      for (; k < n; k += nt)
        prod(k) = stream_load(values.data() + wbeg + k) * x(stream_load(col_idx.data() + wbeg + k));
    });
    team.team_barrier();
    // segment 0 may be the tail of row r0 - 1; the others are rows r0 .. r1 - 1
    const O nseg = (r1 - r0) + (has_tail ? 1 : 0);
    if (nseg <= few_segments) {
      // few long segments: the whole team reduces each one
      for (O s = 0; s < nseg; ++s) {
        F b, e;
        const O r = segment(s, r0, has_tail, wbeg, wend, b, e);
        S sum = traits::zero();
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, b, e), [&](const F k, S& acc) { acc += prod(k - wbeg); },
            sum);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { store(s, r, has_tail, w, wend, sum); });
        // the next team reduction reuses the buffer this one broadcast its result through
        // (a wrong sum under compute-sanitizer racecheck without this barrier)
        if (s + 1 < nseg) team.team_barrier();
      }
      return;
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, O(0), nseg), [&](const O s) {
      F b, e;
      const O r = segment(s, r0, has_tail, wbeg, wend, b, e);
      S sum = traits::zero();
      for (F k = b; k < e; ++k) sum += prod(k - wbeg);
      store(s, r, has_tail, w, wend, sum);
    });
  }

  static constexpr int few_segments = 4;

  /// Row of segment s and its entry range [b, e) clipped to the window.
  KOKKOS_INLINE_FUNCTION O segment(O s, O r0, bool has_tail, F wbeg, F wend, F& b, F& e) const {
    const bool tail = has_tail && s == 0;
    const O r = tail ? r0 - 1 : r0 + s - (has_tail ? 1 : 0);
    b = tail ? wbeg : row_map(r);
    e = row_map(r + 1) < wend ? row_map(r + 1) : wend;
    return r;
  }

  /// Writes a segment's sum: a row complete in the window goes to y, a tail to carry(w), the
  /// start of a row that goes on to head(w).
  KOKKOS_INLINE_FUNCTION void store(O s, O r, bool has_tail, std::int64_t w, F wend,
                                    const S& sum) const {
    if (has_tail && s == 0)
      carry(w) = sum;
    else if (row_map(r + 1) > wend)
      head(w) = sum;
    else
      y(r) = beta_zero ? alpha * sum : alpha * sum + beta * y(r);
  }
};

/// First row starting in each window of `window` nonzeros (and nrows at the end), computed on
/// the device. O(nnz / window * log nrows).
template <class Matrix>
Kokkos::View<typename Matrix::ordinal_type*, typename Matrix::device_type> compute_window_rows(
    const Matrix& a, typename Matrix::size_type window) {
  using O = typename Matrix::ordinal_type;
  using F = typename Matrix::size_type;
  using exec = typename Matrix::execution_space;
  const std::int64_t nwindows = (std::int64_t(a.nnz()) + window - 1) / window;
  Kokkos::View<O*, typename Matrix::device_type> rows(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::spmv_window_rows"), nwindows + 1);
  const auto row_map = a.row_map();
  const O nrows = a.nrows();
  Kokkos::parallel_for(
      "spk::csr_window_rows", Kokkos::RangePolicy<exec>(0, nwindows + 1),
      KOKKOS_LAMBDA(const std::int64_t w) {
        if (w == nwindows) {
          rows(w) = nrows;
          return;
        }
        // first row r with row_map(r) >= w * window
        rows(w) = w == 0 ? O(0) : impl::lower_bound(row_map, O(0), nrows, F(w) * window);
      });
  return rows;
}

/// compute_window_rows, kept in a cache slot of the matrix's analysis (rows, window size) and
/// rebuilt when the window size changes.
template <class Matrix>
Kokkos::View<typename Matrix::ordinal_type*, typename Matrix::device_type> cached_window_rows(
    const Matrix& a, typename Matrix::size_type window,
    Kokkos::View<typename Matrix::ordinal_type*, typename Matrix::device_type>& rows,
    std::int64_t& rows_window) {
  if (rows_window != std::int64_t(window) || rows.extent(0) == 0) {
    rows = compute_window_rows(a, window);
    rows_window = window;
  }
  return rows;
}

/// The balanced kernel's window rows (its own cache slot).
template <class Matrix>
Kokkos::View<typename Matrix::ordinal_type*, typename Matrix::device_type> balanced_window_rows(
    const Matrix& a, typename Matrix::size_type window) {
  auto& an = csr_analysis(a);
  return cached_window_rows(a, window, an.window_rows, an.window_nnz);
}

/// The cached per-window partial sums (carry, head) of `a`, grown to at least n entries.
template <class Matrix>
void window_partials(const Matrix& a, std::int64_t n,
                     Kokkos::View<typename Matrix::value_type*, typename Matrix::device_type>& carry,
                     Kokkos::View<typename Matrix::value_type*, typename Matrix::device_type>& head) {
  using S = typename Matrix::value_type;
  using D = typename Matrix::device_type;
  auto& an = csr_analysis(a);
  if (std::int64_t(an.carry.extent(0)) < n) {
    an.carry = Kokkos::View<S*, D>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::spmv_carry"), n);
    an.head = Kokkos::View<S*, D>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::spmv_head"), n);
  }
  carry = an.carry;
  head = an.head;
}

/// Completes the rows that cross windows of `window` nonzeros: a row starting in window w and
/// going on past it gets head(w) plus carry(v) of every later window v it reaches.
/// `window_rows` is compute_window_rows(a, window): the row that crosses the end of window w
/// is the one before the first row starting at or after that end (no search; a binary search
/// per window took 12.7 us of R-MAT's 0.32 ms on an H200), and a long row's carries are read
/// eight at a time.
template <class Matrix, class YView>
void window_fixup(const Matrix& a, typename Matrix::size_type window, std::int64_t nwindows,
                  const Kokkos::View<const typename Matrix::ordinal_type*,
                                     typename Matrix::device_type>& window_rows,
                  const Kokkos::View<typename Matrix::value_type*, typename Matrix::device_type>& carry,
                  const Kokkos::View<typename Matrix::value_type*, typename Matrix::device_type>& head,
                  typename Matrix::value_type alpha, typename Matrix::value_type beta,
                  const YView& y) {
  using S = typename Matrix::value_type;
  using O = typename Matrix::ordinal_type;
  using F = typename Matrix::size_type;
  using exec = typename Matrix::execution_space;
  using traits = scalar_traits<S>;
  const auto row_map = a.row_map();
  const F nnz = a.nnz();
  const bool beta_zero = beta == traits::zero();
  Kokkos::parallel_for(
      "spk::csr_spmv_window_fixup", Kokkos::RangePolicy<exec>(0, nwindows),
      KOKKOS_LAMBDA(const std::int64_t w) {
        const F wend = F(w + 1) * window;
        if (wend >= nnz) return;
        // the last row starting before wend (it holds entry wend - 1): it crosses the end when
        // it starts in window w (at or after window_rows(w)) and ends past wend
        const O r = window_rows(w + 1) - 1;
        if (r < window_rows(w) || row_map(r + 1) <= wend) return;
        const std::int64_t last = (std::int64_t(row_map(r + 1)) - 1) / window;
        S part[8] = {head(w), traits::zero(), traits::zero(), traits::zero(),
                     traits::zero(), traits::zero(), traits::zero(), traits::zero()};
        std::int64_t v = w + 1;
        for (; v + 7 <= last; v += 8)
          for (int u = 0; u < 8; ++u) part[u] += carry(v + u);
        for (; v <= last; ++v) part[0] += carry(v);
        const S sum = ((part[0] + part[1]) + (part[2] + part[3])) +
                      ((part[4] + part[5]) + (part[6] + part[7]));
        y(r) = beta_zero ? alpha * sum : alpha * sum + beta * y(r);
      });
}

/// nnz-balanced kernel (op = N): windows of chunk_nnz nonzeros, then the fix-up of rows that
/// cross windows.
template <class Matrix, class XView, class YView>
void csr_spmv_balanced(const CsrSpmvParams& p, typename Matrix::value_type alpha,
                       const Matrix& a, const XView& x, typename Matrix::value_type beta,
                       const YView& y) {
  using S = typename Matrix::value_type;
  using F = typename Matrix::size_type;
  using exec = typename Matrix::execution_space;
  using functor = CsrBalancedSpmv<Matrix, XView, YView>;
  const F nnz = a.nnz();
  if (nnz == 0) {
    scale_vector(exec(), beta, y);
    return;
  }
  const F window = F(p.chunk_nnz);
  const std::int64_t nwindows = (std::int64_t(nnz) + window - 1) / window;
  Kokkos::View<S*, typename Matrix::device_type> carry, head;
  window_partials(a, nwindows, carry, head);
  const bool beta_zero = beta == scalar_traits<S>::zero();
  functor f{a.row_map(), a.col_idx(), a.values(), x,    y,    alpha,
            beta,        beta_zero,   a.nrows(),  nnz,  window, nwindows,
            carry,       head,        balanced_window_rows(a, window), 0};
  Kokkos::TeamPolicy<exec> policy(nwindows, p.threads_per_team, 1);
  check_team_size(policy, f, p.threads_per_team, 1);
  // the window's products live in team scratch: level 0 (fast) when they fit, else level 1
  const std::size_t bytes = functor::scratch_bytes(window);
  const int level = bytes <= std::size_t(policy.scratch_size_max(0)) ? 0 : 1;
  require(bytes <= std::size_t(policy.scratch_size_max(level)), "spk::spmv",
          "balanced window of ", window, " nonzeros needs ", bytes,
          " bytes of team scratch, more than the maximum ", policy.scratch_size_max(level));
  f.scratch_level = level;
  Kokkos::parallel_for("spk::csr_spmv_balanced",
                       policy.set_scratch_size(level, Kokkos::PerTeam(bytes)), f);
  window_fixup(a, window, nwindows, f.window_rows, carry, head, alpha, beta, y);
}

/// nnz-balanced transposed kernel (op = T or H): y = beta y, then every thread scatters an
/// equal run of `chunk` nonzeros with atomics, walking the rows its run touches (one binary
/// search per thread), so a very long row is spread over many threads.
template <class Matrix, class XView, class YView>
void csr_spmv_balanced_t(const CsrSpmvParams& p, Mode mode, typename Matrix::value_type alpha,
                         const Matrix& a, const XView& x_in, typename Matrix::value_type beta,
                         const YView& y) {
  using S = typename Matrix::value_type;
  using O = typename Matrix::ordinal_type;
  using F = typename Matrix::size_type;
  using exec = typename Matrix::execution_space;
  using traits = scalar_traits<S>;
  scale_vector(exec(), beta, y);
  const F nnz = a.nnz();
  if (nnz == 0) return;
  // per thread: the team window divided among its threads (at least one entry)
  const F run = F(p.chunk_nnz / p.threads_per_team > 0 ? p.chunk_nnz / p.threads_per_team : 1);
  const std::int64_t nthreads = (std::int64_t(nnz) + run - 1) / run;
  const auto row_map = a.row_map();
  const auto col_idx = a.col_idx();
  const auto values = a.values();
  const random_access_t<XView> x = x_in;
  const O nrows = a.nrows();
  const bool conj = mode == Mode::H;
  Kokkos::parallel_for(
      "spk::csr_spmv_balanced_t", Kokkos::RangePolicy<exec>(0, nthreads),
      KOKKOS_LAMBDA(const std::int64_t t) {
        const F k0 = F(t) * run;
        const F k1 = k0 + run < nnz ? k0 + run : nnz;
        // the row holding entry k0: last r with row_map(r) <= k0
        O r = impl::upper_bound(row_map, O(0), nrows, k0) - 1;
        F row_end = row_map(r + 1);
        S xr = alpha * x(r);
        for (F k = k0; k < k1; ++k) {
          while (k >= row_end) {  // next non-empty row
            ++r;
            row_end = row_map(r + 1);
            xr = alpha * x(r);
          }
          const S v = conj ? traits::conj(values(k)) : values(k);
          atomic_add_value(&y(col_idx(k)), v * xr);
        }
      });
}

}  // namespace impl
}  // namespace spk
