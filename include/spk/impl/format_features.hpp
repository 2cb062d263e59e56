// spk/impl/format_features.hpp: the one-pass feature kernel of spk::select_format.
//
// One pass over two kinds of work item computes every structural feature of a CSR matrix:
//   hack items (rows 32h .. 32h + 31): sums of row lengths squared, empty rows, the slots of an
//     unsorted 32-row sliced ELL (32 x the hack's longest row) and the longest row;
//   chunk items (16 consecutive entries on CPUs, 1-16 on GPUs, the row of the first found by
//     binary search): distinct
//     diagonals (a bitmap of offsets j - i, counted by the item that sets a bit), the largest
//     |j - i|, entries with |j - i| <= near_distance (x locality), entries whose column equals
//     the same position of the previous row when both rows have equal length (block structure),
//     a 64-bit structural fingerprint (four 16-bit sums, exact in double), and a sample of
//     values (the first entry of every stride-th chunk).
// On CPU backends (FeatureKernel) the items are one parallel_reduce whose sums come back as a
// double array; maxima go to device integers through atomics, tried only when a value exceeds
// what the integer holds already. On GPUs (FeatureTeamKernel, below) one launch reduces sums and
// maxima through per-team partials that the last team to finish adds up.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <type_traits>

#include <spk/impl/format_common.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/search.hpp>
#include <spk/impl/warp.hpp>

namespace spk {
namespace impl {

/// Entries per chunk item of FeatureKernel on CPU backends (and the most on GPUs, which take
/// fewer on small matrices: shorter dependent chains, more threads), the granularity of the
/// value sample, and rows per hack item.
constexpr int feature_chunk = 16;
constexpr int feature_hack = 32;
/// Most values sampled (the first entry of every stride-th chunk).
constexpr std::int64_t feature_max_sample = 1024;
/// |j - i| up to which an entry counts as near the diagonal (its x is likely cached).
constexpr std::int64_t near_distance = 4096;

/// Indices of FeatureKernel's sums.
enum FeatureSum : unsigned {
  fs_len2,          ///< sum of row length squared
  fs_empty,         ///< empty rows
  fs_hack_slots,    ///< slots of the unsorted 32-row sliced ELL
  fs_diagonals,     ///< distinct offsets j - i
  fs_near,          ///< entries with |j - i| <= near_distance
  fs_same,          ///< entries equal to the previous row's at the same position
  fs_hash0,         ///< four 16-bit parts of the fingerprint sum
  fs_hash1,
  fs_hash2,
  fs_hash3,
  fs_count
};

/// Indices of FeatureKernel's maxima (ints on the device).
enum FeatureMax : int { fm_row_max, fm_offset_max, fm_count };

/// Values per item of the GPU pass: the sums, then the maxima (as doubles, exact below 2^53).
constexpr unsigned fp_count = fs_count + fm_count;

/// The word at `p` as the device's last level of cache holds it (where atomics act): a hint
/// that may be stale, never a cached copy older than the L2's.
KOKKOS_INLINE_FUNCTION unsigned feature_peek(const unsigned* p) {
#if defined(__CUDA_ARCH__)
  return __ldcg(p);
#else
  return *static_cast<const volatile unsigned*>(p);
#endif
}

/// Orders this thread's earlier memory operations before its later ones for the whole device
/// (acquire and release; CUDA's __threadfence is sequentially consistent, a heavier fence that
/// each team of the feature pass paid once).
KOKKOS_INLINE_FUNCTION void feature_fence() {
#if defined(__CUDA_ARCH__)
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
#else
  Kokkos::memory_fence();
#endif
}

KOKKOS_INLINE_FUNCTION std::uint64_t feature_mix(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

template <class RowMap, class ColIdx, class Values, class Sample, class Words, class Maxes>
struct FeatureKernel {
  using value_type = double[];
  using row_map_value = typename RowMap::non_const_value_type;
  /// Entry and row indices of the per-entry loop: 32-bit with 32-bit row offsets (the column
  /// indices and the row count then fit too), else 64-bit.
  using index_type = std::conditional_t<(sizeof(row_map_value) <= 4 &&
                                         sizeof(typename ColIdx::non_const_value_type) <= 4),
                                        int, std::int64_t>;
  unsigned value_count = fs_count;

  RowMap row_map;
  ColIdx col_idx;
  Values values;
  Sample sample;      ///< values of the sampled chunks
  Words diag_bits;    ///< (nrows + ncols + 30) / 32 words, zero on entry
  Maxes maxes;        ///< fm_count ints, zero on entry (atomic_maxima only)
  std::int64_t nrows, ncols, nnz, nhacks;
  std::int64_t sample_stride;  ///< in chunks of feature_chunk entries
  std::int64_t chunk_len = feature_chunk;  ///< entries per chunk item
  /// true: maxima go to `maxes` by atomics (the CPU reduction, whose array holds the sums
  /// only); false: to acc[fs_count + fm] (the GPU pass reduces them with the sums: thousands
  /// of same-address atomics at the start of a small matrix's pass serialised it)
  bool atomic_maxima = true;

  KOKKOS_INLINE_FUNCTION void raise(double* acc, int which, std::int64_t v) const {
    if (!atomic_maxima) {
      if (double(v) > acc[fs_count + which]) acc[fs_count + which] = double(v);
      return;
    }
    const int iv = int(v);
    if (iv > maxes(which)) (void)Kokkos::atomic_fetch_max(&maxes(which), iv);
  }

  // Each item sums into registers and adds to the reduction's array once (the array may live
  // in shared memory).
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t item, double* acc) const {
    if (item < nhacks)
      hack_item(item, acc);
    else
      chunk_item(item - nhacks, row_map, std::int64_t(1), nrows, acc);
  }

  /// Rows 32h .. 32h + 31: row lengths squared, empty rows, sliced-ELL slots, longest row.
  KOKKOS_INLINE_FUNCTION void hack_item(const std::int64_t item, double* acc) const {
    const std::int64_t r0 = item * feature_hack;
    const std::int64_t r1 = r0 + feature_hack < nrows ? r0 + feature_hack : nrows;
    std::int64_t hmax = 0, empty = 0;
    double len2 = 0;
    std::int64_t prev = std::int64_t(row_map(r0));
    // eight independent loads at a time (one at a time, a lane waited 32 times for memory)
    constexpr int batch = 8;
    for (std::int64_t i0 = r0; i0 < r1; i0 += batch) {
      row_map_value next[batch];
      for (int b = 0; b < batch; ++b) next[b] = i0 + b < r1 ? row_map(i0 + b + 1) : 0;
      for (int b = 0; b < batch && i0 + b < r1; ++b) {
        const std::int64_t len = std::int64_t(next[b]) - prev;
        prev = std::int64_t(next[b]);
        len2 += double(len) * double(len);
        empty += len == 0 ? 1 : 0;
        if (len > hmax) hmax = len;
      }
    }
    acc[fs_len2] += len2;
    acc[fs_empty] += double(empty);
    acc[fs_hack_slots] += double(hmax) * double(r1 - r0);
    raise(acc, fm_row_max, hmax);
  }

  /// Entries chunk_len c .. chunk_len (c + 1) - 1, and the sample points among them. `rm` reads
  /// the row offsets (the row map itself, or a team's copy of the rows its entries lie in);
  /// the chunk's first row is searched among rows [search_lo - 1, search_hi), which must hold
  /// it.
  template <class Rows>
  KOKKOS_INLINE_FUNCTION void chunk_item(const std::int64_t c, const Rows& rm,
                                         const std::int64_t search_lo,
                                         const std::int64_t search_hi, double* acc) const {
    const std::int64_t e0 = c * chunk_len;
    const std::int64_t e1 = e0 + chunk_len < nnz ? e0 + chunk_len : nnz;
    if (e0 >= e1) return;
    take_samples(e0, e1);
    entries(e0, 1, chunk_len, rm, search_lo, search_hi, acc);
  }

  /// The sample: the entries at multiples of sample_stride * feature_chunk in [e0, e1).
  KOKKOS_INLINE_FUNCTION void take_samples(const std::int64_t e0, std::int64_t e1) const {
    if (e1 > nnz) e1 = nnz;
    if (sample_stride <= 0) return;
    const std::int64_t step = sample_stride * feature_chunk;
    for (std::int64_t p = (e0 + step - 1) / step * step; p < e1; p += step)
      sample(p / step) = values(p);
  }

  /// Entries e0, e0 + stride, ... (count of them, those below nnz): every per-entry feature.
  /// The rows are walked forward from the first entry's row (searched as chunk_item says).
  /// Indices are 32-bit when the row offsets are (half the instructions of 64-bit arithmetic).
  template <class Rows>
  KOKKOS_INLINE_FUNCTION void entries(const std::int64_t e0_, const std::int64_t stride_,
                                      const std::int64_t count, const Rows& rm,
                                      const std::int64_t search_lo,
                                      const std::int64_t search_hi, double* acc) const {
    using I = index_type;
    if (e0_ >= nnz) return;
    // entries of this call below nnz (counted in 64 bits: e0 + count x stride may overflow I)
    const std::int64_t here = (nnz - 1 - e0_) / stride_ + 1;
    const I n_here = I(here < count ? here : count);
    const I e0 = I(e0_), stride = I(stride_);
    I i = impl::upper_bound(rm, I(search_lo), I(search_hi), e0) - 1;
    I row_begin = I(rm(i)), row_end = I(rm(i + 1));
    I prev_begin = i > 0 ? I(rm(i - 1)) : 0;
    I off_max = 0;
    int new_diags = 0, near = 0, same = 0;
    std::uint64_t hash = 0;
    for (I m = 0; m < n_here; ++m) {
      const I e = e0 + m * stride;
      while (e >= row_end) {
        prev_begin = row_begin;
        row_begin = row_end;
        ++i;
        row_end = I(rm(i + 1));
      }
      const I j = I(col_idx(e));
      const I off = j - i;
      // the previous row's entry at the same position, when the rows have equal length
      const bool same_len = i > 0 && row_end - row_begin == row_begin - prev_begin;
      const I pj = same_len ? I(col_idx(prev_begin + (e - row_begin))) : I(-1);
      if (pj == j) ++same;
      // distinct diagonals: the item that sets an offset's bit counts it. An offset the previous
      // row has at the same position is marked through that row (or the first of the run of rows
      // sharing it), so banded and stencil rows touch the bitmap only where their pattern changes
      const std::int64_t bit = std::int64_t(off) + nrows - 1;
      if (!(same_len && pj - (i - 1) == off) && bit >= 0 && bit < nrows + ncols - 1) {
        auto* word = &diag_bits(bit >> 5);
        const unsigned mask = 1u << (bit & 31);
        // a read from the L2 cache sees other items' bits (a line cached in L1 would not, and
        // every entry of a stencil would then contend for the same few words with atomics)
        if ((feature_peek(word) & mask) == 0u) {
          const unsigned old = Kokkos::atomic_fetch_or(word, mask);
          if ((old & mask) == 0u) ++new_diags;
        }
      }
      const I dist = off < 0 ? -off : off;
      if (dist > off_max) off_max = dist;
      near += dist <= near_distance ? 1 : 0;
      hash += feature_mix((std::uint64_t(i) << 32) ^ std::uint64_t(j));
    }
    raise(acc, fm_offset_max, off_max);
    acc[fs_diagonals] += double(new_diags);
    acc[fs_near] += double(near);
    acc[fs_same] += double(same);
    // the fingerprint is the 64-bit wrap-around sum of the entries' hashes, summed across items
    // in 16-bit parts (each part's total stays below 2^53, so the double sums are exact and
    // independent of the reduction order)
    acc[fs_hash0] += double(hash & 0xFFFFu);
    acc[fs_hash1] += double((hash >> 16) & 0xFFFFu);
    acc[fs_hash2] += double((hash >> 32) & 0xFFFFu);
    acc[fs_hash3] += double((hash >> 48) & 0xFFFFu);
  }
};

/// Row offsets rows lo .. lo + n - 1 copied into team scratch memory, read by row number.
template <class T>
struct ScratchRows {
  const T* rows;
  std::int64_t lo;
  template <class I>
  KOKKOS_INLINE_FUNCTION T operator()(const I i) const {
    return rows[std::int64_t(i) - lo];
  }
};

/// The GPU form of the feature pass, one launch from the matrix to the final sums.
///
/// A team of `warps` warps (TeamPolicy(nteams, warps, Warp::size): each vector a warp) takes
/// warps x 32 consecutive items, one per lane. Its chunk items cover one range of entries; the
/// team finds the rows of its first and last entry (`team_rows`: each half of the team probes
/// evenly spaced rows, a few rounds instead of one lane's chain of dependent loads), copies
/// those rows' offsets into scratch memory when they fit (`max_rows`), and each lane searches its chunk's
/// first row there (one binary search per item in global memory was most of the pass on large
/// matrices). Sums reduce by warp shuffles, then across warps through scratch memory (one
/// barrier), into one row of `partial` per team; the last team to finish (an atomic counter,
/// with memory fences) adds the rows up into `out` (sums, then the maxima as doubles) and puts
/// the counter and the maxima back to zero for the next call. Every lane also zeroes its share
/// of `clear` (the other of two alternating diagonal bitmaps, dirtied by the previous call), so
/// no call needs a separate fill.
template <class Kernel, class Partials, class State, class Out, class Words>
struct FeatureTeamKernel {
  using exec = typename Partials::execution_space;
  using member = typename Kokkos::TeamPolicy<exec>::member_type;
  using warp = Warp<exec>;
  using offset_type = typename Kernel::row_map_value;
  using scratch_rows = Kokkos::View<offset_type*, typename exec::scratch_memory_space,
                                    Kokkos::MemoryUnmanaged>;
  using scratch_sums = Kokkos::View<double*, typename exec::scratch_memory_space,
                                    Kokkos::MemoryUnmanaged>;
  using scratch_probes = Kokkos::View<std::int64_t*, typename exec::scratch_memory_space,
                                    Kokkos::MemoryUnmanaged>;

  Kernel k;
  Partials partial;  ///< fp_count doubles per team: sums, then maxima
  State state;       ///< ints: [0] the counter of finished teams
  Out out;           ///< fs_count sums, then fm_count maxima
  Words clear;       ///< words to zero
  std::int64_t nitems, nteams;
  int warps;              ///< warps (vectors) per team
  std::int64_t max_rows;  ///< row offsets a team may keep in scratch memory

  static std::size_t scratch_bytes(int warps, std::int64_t max_rows) {
    return scratch_sums::shmem_size(std::size_t(warps) * fp_count) +
           scratch_probes::shmem_size(2 * std::size_t(warps)) + scratch_rows::shmem_size(max_rows);
  }

  /// The rows of entries ea and eb (< nnz), found by the whole team (warps must be even): each
  /// half of it probes per_team / 2 evenly spaced rows of the range left for its entry, so a
  /// round narrows the range by that factor (2 rounds for 16k rows, 3 for 2M) where one lane's
  /// binary search waited for log2(nrows) dependent loads. `cand` is 2 x warps scratch values
  /// (double-buffered: one barrier per round).
  KOKKOS_INLINE_FUNCTION void team_rows(const member& t, const std::int64_t ea,
                                        const std::int64_t eb, std::int64_t* cand,
                                        std::int64_t& ra, std::int64_t& rb) const {
    const int lanes = warp::size;
    const int half = warps / 2;
    const std::int64_t probes = std::int64_t(half) * lanes;
    const int w = t.team_rank();
    const int h = w < half ? 0 : 1;
    const std::int64_t kk = std::int64_t(w - h * half) * lanes + warp::lane();
    const std::int64_t e = h == 0 ? ea : eb;
    // the row of e is the last r with row_map(r) <= e; it lies in [lo, hi), row_map(lo) <= e
    std::int64_t lo[2] = {0, 0}, hi[2] = {k.nrows, k.nrows};
    for (int buf = 0; hi[0] - lo[0] > 1 || hi[1] - lo[1] > 1; buf ^= 1) {
      const std::int64_t step = (hi[h] - lo[h] + probes - 1) / probes;
      const std::int64_t p = lo[h] + kk * step;
      const bool below = p < hi[h] && std::int64_t(k.row_map(p)) <= e;
      // row_map is sorted: the probes at or below e are a prefix, so the warp's last true lane
      // is its share of the answer
      const int last = warp::last_true(below);
      if (warp::lane() == 0)
        cand[buf * warps + w] =
            last < 0 ? -1 : lo[h] + (std::int64_t(w - h * half) * lanes + last) * step;
      t.team_barrier();
      for (int q = 0; q < 2; ++q) {
        if (hi[q] - lo[q] <= 1) continue;
        std::int64_t best = lo[q];
        for (int u = 0; u < half; ++u) {
          const std::int64_t c = cand[buf * warps + q * half + u];
          if (c > best) best = c;
        }
        const std::int64_t st = (hi[q] - lo[q] + probes - 1) / probes;
        lo[q] = best;
        if (best + st < hi[q]) hi[q] = best + st;
      }
    }
    ra = lo[0];
    rb = lo[1];
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& t) const {
    const int lanes = warp::size;
    const std::int64_t per_team = std::int64_t(warps) * lanes;
    const int tid = t.team_rank() * lanes + warp::lane();
    const std::int64_t first = std::int64_t(t.league_rank()) * per_team;
    const std::int64_t last = first + per_team < nitems ? first + per_team : nitems;
    const std::int64_t nthreads = nteams * per_team;
    for (std::int64_t w = first + tid; w < std::int64_t(clear.extent(0)); w += nthreads)
      clear(w) = 0u;
    scratch_sums sums(t.team_scratch(0), std::size_t(warps) * fp_count);
    scratch_probes probes(t.team_scratch(0), 2 * std::size_t(warps));
    scratch_rows rows(t.team_scratch(0), max_rows);
    // rows of the team's entries
    const std::int64_t c0 = (first > k.nhacks ? first : k.nhacks) - k.nhacks;
    const std::int64_t c1 = last > k.nhacks ? last - k.nhacks : 0;
    std::int64_t ra = 0, rb = -1;
    if (c1 > c0 && k.nnz > 0) {
      const std::int64_t e_first = c0 * k.chunk_len;
      std::int64_t e_last = c1 * k.chunk_len;
      e_last = (e_last < k.nnz ? e_last : k.nnz) - 1;
      team_rows(t, e_first, e_last, probes.data(), ra, rb);
    }
    const std::int64_t lo = ra > 0 ? ra - 1 : 0;
    const bool staged = rb >= ra && rb + 2 - lo <= max_rows;
    if (staged) {
      for (std::int64_t r = lo + tid; r <= rb + 1; r += per_team) rows(r - lo) = k.row_map(r);
      t.team_barrier();
    }
    double v[fp_count];
    for (unsigned q = 0; q < fp_count; ++q) v[q] = 0;
    const std::int64_t item = first + tid;
    // a warp of chunk items only takes its entries lane-strided (each load of the warp reads
    // consecutive entries); the warp holding the first chunk items, after hack items, takes a
    // chunk per lane
    const std::int64_t warp_first = item - warp::lane();
    if (warp_first >= k.nhacks && warp_first < last) {
      const std::int64_t w0 = (warp_first - k.nhacks) * k.chunk_len;
      if (warp::lane() == 0) k.take_samples(w0, w0 + lanes * k.chunk_len);
      if (staged)
        k.entries(w0 + warp::lane(), lanes, k.chunk_len, ScratchRows<offset_type>{rows.data(), lo},
                  ra + 1, rb + 1, v);
      else
        k.entries(w0 + warp::lane(), lanes, k.chunk_len, k.row_map, std::int64_t(1), k.nrows, v);
    } else if (item < last) {
      if (item < k.nhacks)
        k.hack_item(item, v);
      else if (staged)
        k.chunk_item(item - k.nhacks, ScratchRows<offset_type>{rows.data(), lo}, ra + 1, rb + 1,
                     v);
      else
        k.chunk_item(item - k.nhacks, k.row_map, std::int64_t(1), k.nrows, v);
    }
    // the warp's sums and maxima by shuffles (lane 0 ends with them), then across the warps
    warp_combine(v);
    if (warp::lane() == 0)
      for (unsigned q = 0; q < fp_count; ++q) sums(t.team_rank() * fp_count + q) = v[q];
    t.team_barrier();
    int is_last = 0;
    Kokkos::single(
        Kokkos::PerTeam(t),
        [&](int& l) {
          combine_rows(sums.data(), warps, v);
          for (unsigned q = 0; q < fp_count; ++q)
            partial(std::size_t(t.league_rank()) * fp_count + q) = v[q];
          feature_fence();  // the row above, before the count that says it is there
          l = Kokkos::atomic_fetch_add(&state(0), 1) == int(nteams - 1) ? 1 : 0;
        },
        is_last);
    if (!is_last) return;
    feature_fence();  // every team's row, after the count that says it is there
    // the last team: every other team's row is written; read them past the caches
    const volatile double* p = partial.data();
    for (unsigned q = 0; q < fp_count; ++q) v[q] = 0;
    for (std::int64_t r = tid; r < nteams; r += per_team) {
      double row[fp_count];
      for (unsigned q = 0; q < fp_count; ++q) row[q] = p[r * fp_count + q];
      combine(v, row);
    }
    warp_combine(v);
    t.team_barrier();  // the sums above are read
    if (warp::lane() == 0)
      for (unsigned q = 0; q < fp_count; ++q) sums(t.team_rank() * fp_count + q) = v[q];
    t.team_barrier();
    if (tid == 0) {
      combine_rows(sums.data(), warps, v);
      for (unsigned q = 0; q < fp_count; ++q) out(q) = v[q];
      state(0) = 0;
    }
  }

  /// v += w for the sums, v = max(v, w) for the maxima.
  KOKKOS_INLINE_FUNCTION static void combine(double* v, const double* w) {
    for (unsigned q = 0; q < fs_count; ++q) v[q] += w[q];
    for (unsigned q = fs_count; q < fp_count; ++q) v[q] = w[q] > v[q] ? w[q] : v[q];
  }
  /// v = the combination of `n` rows of fp_count values at `rows`.
  KOKKOS_INLINE_FUNCTION static void combine_rows(const double* rows, int n, double* v) {
    for (unsigned q = 0; q < fp_count; ++q) v[q] = q < fs_count ? 0.0 : rows[q];
    for (int w = 0; w < n; ++w) combine(v, rows + std::size_t(w) * fp_count);
  }
  /// Lane 0 of each warp ends with the warp's combination (butterfly shuffles).
  /// One value at a time: a copy of all of them took registers the entries' loop needs.
  KOKKOS_INLINE_FUNCTION static void warp_combine(double* v) {
    for (unsigned q = 0; q < fp_count; ++q)
      for (int m = warp::size / 2; m > 0; m /= 2) {
        const double w = warp::shfl(v[q], warp::lane() ^ m);
        v[q] = q < fs_count ? v[q] + w : (w > v[q] ? w : v[q]);
      }
  }
};

}  // namespace impl
}  // namespace spk
