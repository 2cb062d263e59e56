// spk/impl/staged_swizzle.hpp: the shared-memory slot map of the staged CSR kernel, chosen per
// row length by counting bank conflicts on the host.
//
// The staged kernel (csr_spmv_staged.hpp) stores chunk position q in slot
// q ^ ((q >> shift) & mask): a permutation within each block of 2^shift positions (mask 0: the
// identity). Lanes read their rows' entries at a stride of the row length, so some lengths put
// many lanes on one bank: rows of 16 with one lane each put all 32 lanes on two banks. Which
// map is best depends on the length and the lanes per row (counted below: x32 for most even
// lengths with one lane per row, x16 for 16 and 48, none for odd lengths), so the launch counts
// the wavefronts of every candidate for rows of the matrix's rounded mean length and takes the
// cheapest (cached per length, lanes per row and chunk size).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>

namespace spk {
namespace impl {

/// Slot map q -> q ^ ((q >> shift) & mask).
struct StagedSwizzle {
  int shift = 5;
  int mask = 0;  ///< 0: the identity
  friend bool operator==(const StagedSwizzle& a, const StagedSwizzle& b) {
    return a.shift == b.shift && a.mask == b.mask;
  }
};

/// Shared-memory wavefronts of the staged kernel's row reads for rows of `len` entries,
/// `vector` lanes per row (32 / vector rows per warp), chunks of `chunk` entries, under slot
/// map `s`, summed over the 32 alignments of a warp's first entry. Step u of lane j of a row
/// reads position start + j + u * vector while it lies in the row and the chunk; a request
/// costs its busiest bank, counted for 8-byte values (16 bank pairs) plus 4-byte column
/// indices (32 banks). O(32 * rows-per-warp-entries * 32).
inline long staged_bank_cost(int len, int vector, int chunk, StagedSwizzle s) {
  const int rows = 32 / vector;
  long total = 0;
  for (int a = 0; a < 32; ++a) {
    const long end = a + long(rows) * len;
    for (long cb = 0; cb < end; cb += chunk) {
      const long ce = std::min(cb + long(chunk), end);
      for (int u = 0; long(u) * vector < len; ++u) {
        std::array<int, 16> pairs{};
        std::array<int, 32> banks{};
        bool any = false;
        for (int l = 0; l < 32; ++l) {
          const long start = a + long(l / vector) * len;
          const long k = start + l % vector + long(u) * vector;
          if (k < cb || k >= ce || k >= start + len) continue;
          const int q0 = int(k - cb);
          const int q = q0 ^ ((q0 >> s.shift) & s.mask);
          ++pairs[q % 16];
          ++banks[q % 32];
          any = true;
        }
        if (any)
          total += *std::max_element(pairs.begin(), pairs.end()) +
                   *std::max_element(banks.begin(), banks.end());
      }
    }
  }
  return total;
}

/// The cheapest of the identity, x16 and x32 (in that order on ties) for rows of `len`
/// entries, by staged_bank_cost.
inline StagedSwizzle best_staged_swizzle(int len, int vector, int chunk) {
  const StagedSwizzle candidates[] = {{5, 0}, {5, 31}, {4, 15}};
  StagedSwizzle best = candidates[0];
  long best_cost = -1;
  for (const auto& c : candidates) {
    const long cost = staged_bank_cost(len, vector, chunk, c);
    if (best_cost < 0 || cost < best_cost) {
      best = c;
      best_cost = cost;
    }
  }
  return best;
}

/// best_staged_swizzle for the rounded mean row length (at least 1), cached for lengths up to
/// 64 (a few milliseconds once per length, lanes per row and chunk size); longer rows keep the
/// identity for odd lengths and x32 for even ones with one lane per row.
inline StagedSwizzle choose_staged_swizzle(double mean, int vector, int chunk) {
  const long len = std::max(1L, std::lround(mean));
  int vi = 0;
  while (vi < 5 && (1 << vi) < vector) ++vi;
  int ci = 0;
  while (ci < 3 && (128 << ci) < chunk) ++ci;
  const bool cacheable = len <= 64 && (1 << vi) == vector && (128 << ci) == chunk;
  if (!cacheable) return vector == 1 && len % 2 == 0 ? StagedSwizzle{5, 31} : StagedSwizzle{5, 0};
  // 0: not computed yet; else 1 + index of the candidate (a benign race: equal results)
  static std::array<std::atomic<int>, 65 * 6 * 4> cache{};
  std::atomic<int>& slot = cache[std::size_t((len * 6 + vi) * 4 + ci)];
  const int known = slot.load(std::memory_order_relaxed);
  if (known == 1) return {5, 0};
  if (known == 2) return {5, 31};
  if (known == 3) return {4, 15};
  const StagedSwizzle s = best_staged_swizzle(int(len), vector, chunk);
  slot.store(s.mask == 0 ? 1 : s.mask == 31 ? 2 : 3, std::memory_order_relaxed);
  return s;
}

}  // namespace impl
}  // namespace spk
