// spk/impl/format_features.hpp: the one-pass feature kernel of spk::select_format.
//
// One parallel_reduce over two kinds of work item computes every structural feature of a CSR
// matrix:
//   hack items (rows 32h .. 32h + 31): sums of row lengths squared, empty rows, the slots of an
//     unsorted 32-row sliced ELL (32 x the hack's longest row) and the longest row;
//   chunk items (16 consecutive entries, the row of the first found by binary search): distinct
//     diagonals (a bitmap of offsets j - i, counted by the item that sets a bit), the largest
//     |j - i|, entries with |j - i| <= near_distance (x locality), entries whose column equals
//     the same position of the previous row when both rows have equal length (block structure),
//     a 64-bit structural fingerprint (four 16-bit sums, exact in double), and a sample of
//     values (the first entry of every stride-th chunk).
// Sums reduce into a double array brought to the host (on GPUs through per-team partials: a
// Kokkos 3.4 array reduction launches at most block-size blocks, too few threads for these
// latency-bound items); maxima go to device integers through atomics, tried only when a value
// exceeds what the integer holds already.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>

#include <spk/impl/format_common.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/search.hpp>

namespace spk {
namespace impl {

/// Entries per chunk item and rows per hack item of FeatureKernel.
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

KOKKOS_INLINE_FUNCTION std::uint64_t feature_mix(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

template <class RowMap, class ColIdx, class Values, class Sample, class Words, class Maxes>
struct FeatureKernel {
  using value_type = double[];
  unsigned value_count = fs_count;

  RowMap row_map;
  ColIdx col_idx;
  Values values;
  Sample sample;      ///< values of the sampled chunks
  Words diag_bits;    ///< (nrows + ncols + 30) / 32 words, zero on entry
  Maxes maxes;        ///< fm_count ints, zero on entry
  std::int64_t nrows, ncols, nnz, nhacks;
  std::int64_t sample_stride;

  KOKKOS_INLINE_FUNCTION void raise(int which, std::int64_t v) const {
    const int iv = int(v);
    if (iv > maxes(which)) (void)Kokkos::atomic_fetch_max(&maxes(which), iv);
  }

  // Each item sums into registers and adds to the reduction's array once (the array may live
  // in shared memory).
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t item, double* acc) const {
    if (item < nhacks) {
      const std::int64_t r0 = item * feature_hack;
      const std::int64_t r1 = r0 + feature_hack < nrows ? r0 + feature_hack : nrows;
      std::int64_t hmax = 0, empty = 0;
      double len2 = 0;
      std::int64_t prev = std::int64_t(row_map(r0));
      for (std::int64_t i = r0; i < r1; ++i) {
        const std::int64_t next = std::int64_t(row_map(i + 1));
        const std::int64_t len = next - prev;
        prev = next;
        len2 += double(len) * double(len);
        empty += len == 0 ? 1 : 0;
        if (len > hmax) hmax = len;
      }
      acc[fs_len2] += len2;
      acc[fs_empty] += double(empty);
      acc[fs_hack_slots] += double(hmax) * double(r1 - r0);
      raise(fm_row_max, hmax);
      return;
    }
    const std::int64_t c = item - nhacks;
    const std::int64_t e0 = c * feature_chunk;
    const std::int64_t e1 = e0 + feature_chunk < nnz ? e0 + feature_chunk : nnz;
    if (e0 >= e1) return;
    if (sample_stride > 0 && c % sample_stride == 0) sample(c / sample_stride) = values(e0);
    std::int64_t i = row_of_entry(row_map, nrows, e0);
    std::int64_t row_begin = std::int64_t(row_map(i)), row_end = std::int64_t(row_map(i + 1));
    std::int64_t prev_begin = i > 0 ? std::int64_t(row_map(i - 1)) : 0;
    std::int64_t off_max = 0;
    int new_diags = 0, near = 0, same = 0;
    std::uint64_t hash = 0;
    for (std::int64_t e = e0; e < e1; ++e) {
      while (e >= row_end) {
        prev_begin = row_begin;
        row_begin = row_end;
        ++i;
        row_end = std::int64_t(row_map(i + 1));
      }
      const std::int64_t j = std::int64_t(col_idx(e));
      const std::int64_t off = j - i;
      // the previous row's entry at the same position, when the rows have equal length
      const bool same_len = i > 0 && row_end - row_begin == row_begin - prev_begin;
      const std::int64_t pj = same_len ? std::int64_t(col_idx(prev_begin + (e - row_begin))) : -1;
      if (pj == j) ++same;
      // distinct diagonals: the item that sets an offset's bit counts it. An offset the previous
      // row has at the same position is marked through that row (or the first of the run of rows
      // sharing it), so banded and stencil rows touch the bitmap only where their pattern changes
      const std::int64_t bit = off + nrows - 1;
      if (!(same_len && pj - (i - 1) == off) && bit >= 0 && bit < nrows + ncols - 1) {
        auto* word = &diag_bits(bit >> 5);
        const unsigned mask = 1u << (bit & 31);
        // a volatile read sees other items' bits (a cached line would not, and every entry of a
        // stencil would then contend for the same few words with atomics)
        if ((*static_cast<volatile unsigned*>(word) & mask) == 0u) {
          const unsigned old = Kokkos::atomic_fetch_or(word, mask);
          if ((old & mask) == 0u) ++new_diags;
        }
      }
      const std::int64_t dist = off < 0 ? -off : off;
      if (dist > off_max) off_max = dist;
      near += dist <= near_distance ? 1 : 0;
      hash += feature_mix((std::uint64_t(i) << 32) ^ std::uint64_t(j));
    }
    raise(fm_offset_max, off_max);
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

/// Sums the per-team partials of the GPU path (fs_count doubles per team).
template <class Partials>
struct FeaturePartialSum {
  using value_type = double[];
  unsigned value_count = fs_count;
  Partials partial;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t team, double* acc) const {
    for (unsigned q = 0; q < fs_count; ++q) acc[q] += partial(team * fs_count + q);
  }
};

}  // namespace impl
}  // namespace spk
