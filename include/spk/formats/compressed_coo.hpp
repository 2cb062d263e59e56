// spk/formats/compressed_coo.hpp: compressed COO (Aliaga, Anzt, Quintana-Orti, Tomas, Tsai 2020):
// balanced COO whose chunks each pick the smallest encoding of their indices (8-bit row offsets,
// 8/16/32-bit column offsets from a per-chunk baseline, narrower where the gaps between up to
// three intervals of the chunk's columns are left out) and, when all their values are among the
// matrix's 256 most frequent ones, 1-byte indices into that value table instead of the values.
// Layout and kernel: impl/compressed_coo_spmv.hpp. Built from CSR on the device.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/impl/compressed_coo_spmv.hpp>
#include <spk/impl/coo_spmv.hpp>
#include <spk/impl/device_info.hpp>
#include <spk/impl/format_common.hpp>
#include <spk/impl/format_convert.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/radix_sort.hpp>
#include <spk/impl/search.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {

/// How the slots of a compressed COO matrix hold its entries (impl/compressed_coo_spmv.hpp).
enum class CompressedCooLayout {
  automatic,  ///< packed where values are mostly raw and the slot layout pads rows by >= 15%
  slots,      ///< a slot holds K entries of one row: rows padded to whole slots, a byte per slot
  packed      ///< a slot holds the next K entries of any rows: a 32-bit row word per slot
};

inline const char* to_string(CompressedCooLayout l) {
  return l == CompressedCooLayout::automatic ? "automatic"
         : l == CompressedCooLayout::slots   ? "slots"
                                             : "packed";
}

/// Options of the conversion CSR -> compressed COO.
struct CompressedCooOptions {
  /// B: slots (threads) per chunk, a multiple of 32 in [32, 256] (row offsets are 8 bits); 128
  /// measured a few percent faster than the paper's 256 on an H100 (docs/PERFORMANCE.md).
  int threads_per_chunk = 128;
  /// K: entries per slot, 1, 2, 4 or 8; 0 = choose: the largest not above twice the mean row
  /// length (8 from 4 entries per row on). Fewer, wider slots cost fewer instructions per
  /// entry, which decided the speed more than the padding on every large matrix measured, raw
  /// values included (docs/PERFORMANCE.md).
  int entries_per_thread = 0;
  /// Encode the values of a chunk as 1-byte indices when all of them are in the table of the
  /// matrix's 256 most frequent values (value types of at most 8 bytes; complex<double> is
  /// always stored raw).
  bool value_table = true;
  /// Slot layout or packed layout. The slot layout pads each row to whole slots (5-point rows of
  /// 5 entries take 8 with K = 8), which costs little when values are 1-byte table indices but
  /// 60% more value bytes when they are raw; the packed layout stores no padding for a 4-byte
  /// row word per slot, and its lanes split their slots at row starts.
  CompressedCooLayout layout = CompressedCooLayout::automatic;
  /// Leave out the gaps between up to three intervals of a chunk's columns where that narrows
  /// its column offsets (16 bits instead of 32 for 3D stencils and other matrices whose rows
  /// reach far on both sides, 8 instead of 16 for clustered columns); see CooColumnGaps in
  /// impl/compressed_coo_spmv.hpp. 16 bytes per such chunk.
  bool column_gaps = true;
};

/// Launch parameters of compressed COO SpMV (the chunk shape B x K is the matrix's).
struct CompressedCooSpmvParams {
  CooAccumulate accumulate = CooAccumulate::direct;
  /// Consecutive slots a lane takes on GPUs (1, 2 or 4, in groups of slots_per_load); 0 =
  /// choose: 2 (one at a time) in op = N for rows of several slots of about equal length with
  /// table-coded values, else 1 (see resolve_params). Lowered to the largest of 4, 2, 1 that divides
  /// B / 32. CPU backends take a chunk per thread.
  int slots_per_lane = 0;
  /// Consecutive chunks a team takes on GPUs, loading each chunk's head and row and column
  /// offsets while it multiplies the chunk before; 0 = choose (at most 4, with at least 32
  /// teams per multiprocessor). CPU backends take one chunk per thread.
  int chunks_per_team = 0;
  /// Of a lane's slots, how many have their loads issued together on GPUs (1, 2 or 4, dividing
  /// slots_per_lane; more at once keeps more bytes in flight but takes more registers, under a
  /// lower bound of teams per SM); a group loads the next group's offsets while its values and
  /// x arrive. 0 = all of them (slots_per_lane), or 1 where slots_per_lane is chosen as 2.
  /// Always 1 for a matrix in the packed layout or with column gaps, and for op = T / H.
  int slots_per_load = 0;
};

/// A short name of compressed COO launch parameters, e.g. "s2-direct".
inline std::string describe(const CompressedCooSpmvParams& p) {
  return "s" + std::to_string(p.slots_per_lane) +
         (p.slots_per_load > 0 && p.slots_per_load != p.slots_per_lane
              ? "l" + std::to_string(p.slots_per_load)
              : std::string()) +
         (p.chunks_per_team > 0 ? "-c" + std::to_string(p.chunks_per_team) : std::string()) +
         "-" + to_string(p.accumulate);
}

/// What the chunks of a compressed COO matrix use (counts of chunks).
struct CompressedCooStats {
  bool packed = false;  ///< the packed layout (else the slot layout)
  std::int64_t chunks = 0;
  std::int64_t col8 = 0, col16 = 0, col32 = 0;  ///< column offset widths
  std::int64_t col_gaps = 0;                    ///< column offsets with gaps left out
  std::int64_t table_values = 0;                ///< values as 1-byte table indices
  std::int64_t single_row = 0;                  ///< no row offsets stored
  std::int64_t stored_entries = 0;              ///< slots x K (fillers and padding included)
  int table_size = 0;                           ///< distinct values in the table
  double table_coverage = 0;                    ///< share of the entries whose value is in it
};

namespace impl {

/// The arrays of a compressed COO matrix (see CompressedCooMatrix).
template <class S, class O, class D>
struct CompressedCooArrays {
  Kokkos::View<std::uint8_t*, D> codes;
  Kokkos::View<O*, D> base_row;
  Kokkos::View<O*, D> base_col;
  Kokkos::View<std::uint64_t*, D> offsets;
  Kokkos::View<std::uint8_t*, D> blob;
  Kokkos::View<S*, D> table;
  int slots = 256;
  int k = 4;
  bool packed = false;
  double table_coverage = 0;
  double mean_row_slots = 0;        ///< slots per row (an empty row's one counted; the last
                                    ///< chunk's padding slots not)
  std::int64_t max_row_slots = 0;   ///< slots of the longest row
  std::int64_t table_chunks = 0;    ///< chunks whose values are table indices
  std::int64_t gapped_chunks = 0;   ///< chunks whose column offsets leave gaps out
};

/// The bit pattern of a value (at most 8 bytes), zero-extended: equal values by their bits.
template <class S>
KOKKOS_INLINE_FUNCTION std::uint64_t value_bits(const S& v) {
  static_assert(sizeof(S) <= 8, "value_bits: values of at most 8 bytes");
  std::uint64_t b = 0;
  memcpy(&b, &v, sizeof(S));
  return b;
}

/// The table of the (at most) 256 most frequent values of `values` (by bit pattern, ties by
/// the smaller pattern), always including zero (the filler value), as ascending bit patterns;
/// `coverage` receives the share of the entries whose value is in it. On the device: a radix
/// sort of the patterns, run lengths, a radix sort of the distinct patterns by decreasing
/// count; O(nnz) work per pass.
template <class ExecSpace, class S, class D>
std::vector<std::uint64_t> frequent_values(const Kokkos::View<const S*, D>& values,
                                           double& coverage) {
  const std::int64_t n = std::int64_t(values.extent(0));
  coverage = 0;
  const std::uint64_t zero_bits = value_bits(scalar_traits<S>::zero());
  if (n == 0) return {zero_bits};
  Kokkos::View<std::uint64_t*, D> keys(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::ccoo::keys"), std::size_t(n));
  Kokkos::parallel_for(
      "spk::ccoo::value_bits", Range64<ExecSpace>(0, n),
      KOKKOS_LAMBDA(const std::int64_t k) { keys(k) = value_bits(values(k)); });
  stable_radix_sort<ExecSpace>(keys, int(8 * sizeof(S)), RadixSortParams{});
  // distinct patterns: heads of runs, numbered by a scan
  Kokkos::View<std::int64_t*, D> head_pos("spk::ccoo::heads", std::size_t(n) + 1);
  Kokkos::parallel_for(
      "spk::ccoo::run_flags", Range64<ExecSpace>(0, n), KOKKOS_LAMBDA(const std::int64_t k) {
        head_pos(k + 1) = (k == 0 || keys(k - 1) != keys(k)) ? 1 : 0;
      });
  const std::int64_t distinct = row_lengths_to_offsets<ExecSpace>(head_pos);
  Kokkos::View<std::uint64_t*, D> uniq(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::ccoo::distinct"), std::size_t(distinct));
  Kokkos::View<std::int64_t*, D> start(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::ccoo::run_start"),
      std::size_t(distinct) + 1);
  Kokkos::parallel_for(
      "spk::ccoo::runs", Range64<ExecSpace>(0, n), KOKKOS_LAMBDA(const std::int64_t k) {
        if (head_pos(k + 1) != head_pos(k)) {
          uniq(head_pos(k)) = keys(k);
          start(head_pos(k)) = k;
        }
        if (k == n - 1) start(distinct) = n;
      });
  // counts, then the distinct patterns by decreasing count (stable: ties keep ascending bits)
  std::int64_t max_count = 0;
  Kokkos::parallel_reduce(
      "spk::ccoo::max_count", Range64<ExecSpace>(0, distinct),
      KOKKOS_LAMBDA(const std::int64_t u, std::int64_t& m) {
        const std::int64_t cnt = start(u + 1) - start(u);
        m = cnt > m ? cnt : m;
      },
      Kokkos::Max<std::int64_t>(max_count));
  Kokkos::View<std::int64_t*, D> order(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::ccoo::order"), std::size_t(distinct));
  Kokkos::parallel_for(
      "spk::ccoo::order_keys", Range64<ExecSpace>(0, distinct),
      KOKKOS_LAMBDA(const std::int64_t u) { order(u) = max_count - (start(u + 1) - start(u)); });
  Kokkos::View<std::int64_t*, D> count_of(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::ccoo::count_of"), std::size_t(distinct));
  Kokkos::parallel_for(
      "spk::ccoo::counts", Range64<ExecSpace>(0, distinct),
      KOKKOS_LAMBDA(const std::int64_t u) { count_of(u) = start(u + 1) - start(u); });
  stable_radix_sort<ExecSpace>(order, uniq, bit_width(std::uint64_t(max_count)), RadixSortParams{});
  const std::int64_t top = distinct < 256 ? distinct : 256;
  // counts of the top patterns: max_count - order key
  auto h_order = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), Kokkos::subview(order, std::make_pair(std::int64_t(0), top)));
  auto h_uniq = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), Kokkos::subview(uniq, std::make_pair(std::int64_t(0), top)));
  std::vector<std::uint64_t> table;
  std::int64_t covered = 0;
  bool has_zero = false;
  for (std::int64_t u = 0; u < top; ++u) {
    table.push_back(h_uniq(u));
    covered += max_count - h_order(u);
    has_zero = has_zero || h_uniq(u) == zero_bits;
  }
  if (!has_zero) {
    if (table.size() == 256) {
      covered -= max_count - h_order(255);
      table.pop_back();
    }
    table.push_back(zero_bits);
  }
  std::sort(table.begin(), table.end());
  coverage = double(covered) / double(n);
  return table;
}

/// Index of `bits` in the ascending table, or -1.
template <class TableView>
KOKKOS_INLINE_FUNCTION int table_index(const TableView& t, int size, std::uint64_t bits) {
  int lo = 0, hi = size;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (t(mid) < bits)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < size && t(lo) == bits ? lo : -1;
}

/// Value table of a matrix: patterns (for encoding) and values, on device D.
template <class S, class D, bool Enabled = (sizeof(S) <= 8)>
struct ValueTable {
  Kokkos::View<std::uint64_t*, D> bits;
  Kokkos::View<S*, D> values;
  double coverage = 0;

  template <class ExecSpace>
  static ValueTable build(const Kokkos::View<const S*, D>& v) {
    ValueTable t;
    const auto host = frequent_values<ExecSpace>(v, t.coverage);
    Kokkos::View<std::uint64_t*, Kokkos::HostSpace> hb("spk::ccoo::table_bits", host.size());
    Kokkos::View<S*, Kokkos::HostSpace> hv("spk::ccoo::table", host.size());
    for (std::size_t i = 0; i < host.size(); ++i) {
      hb(i) = host[i];
      std::memcpy(static_cast<void*>(&hv(i)), &host[i], sizeof(S));
    }
    t.bits = Kokkos::View<std::uint64_t*, D>("spk::ccoo::table_bits", host.size());
    t.values = Kokkos::View<S*, D>("spk::ccoo::table", host.size());
    Kokkos::deep_copy(t.bits, hb);
    Kokkos::deep_copy(t.values, hv);
    return t;
  }
  KOKKOS_INLINE_FUNCTION int find(const S& v) const {
    return table_index(bits, int(bits.extent(0)), value_bits(v));
  }
};
template <class S, class D>
struct ValueTable<S, D, false> {  // values wider than 8 bytes: no table
  Kokkos::View<std::uint64_t*, D> bits;
  Kokkos::View<S*, D> values;
  double coverage = 0;
  template <class ExecSpace>
  static ValueTable build(const Kokkos::View<const S*, D>&) {
    return {};
  }
  KOKKOS_INLINE_FUNCTION int find(const S&) const { return -1; }
};

/// Slot count of a row of len entries with K entries per slot (an empty row takes one).
KOKKOS_INLINE_FUNCTION std::int64_t slots_of(std::int64_t len, int k) {
  return len > 0 ? (len + k - 1) / k : 1;
}

/// Default K of a matrix with `nnz` entries in `nrows` rows (see
/// CompressedCooOptions::entries_per_thread).
inline int default_slot_entries(std::int64_t nnz, std::int64_t nrows) {
  const double mean = nrows > 0 ? double(nnz) / double(nrows) : 0.0;
  for (int k : {8, 4, 2})
    if (double(k) <= 2.0 * mean) return k;
  return 1;
}

/// slot_start(i) = the first slot of row i with k entries per slot (an empty row takes one);
/// returns the slots in all.
template <class ExecSpace, class RowMap, class D>
std::int64_t count_row_slots(const RowMap& row_map,
                             const Kokkos::View<std::int64_t*, D>& slot_start, const int k) {
  const std::int64_t nrows = std::int64_t(slot_start.extent(0)) - 1;
  Kokkos::parallel_for(
      "spk::ccoo::slots", Range64<ExecSpace>(0, nrows), KOKKOS_LAMBDA(const std::int64_t i) {
        slot_start(i + 1) = slots_of(std::int64_t(row_map(i + 1)) - std::int64_t(row_map(i)), k);
      });
  return row_lengths_to_offsets<ExecSpace>(slot_start);
}

/// The stored entries of the chunks of a compressed COO matrix being built (see the file comment
/// of impl/compressed_coo_spmv.hpp): `start(i)` is row i's first slot (slot layout) or first
/// stored entry (packed layout), `positions` the slots or stored entries in all.
template <class O, class RowMap, class D>
struct CooChunkEntries {
  RowMap row_map;
  Kokkos::View<std::int64_t*, D> start;
  Kokkos::View<O*, D> slot_row;  // slot layout: each slot's row (padding slots: the last row)
  std::int64_t nrows = 0;
  std::int64_t positions = 0;
  int B = 0, K = 0;
  bool packed = false;

  /// The row of slot or stored entry p (the last row past the end).
  KOKKOS_INLINE_FUNCTION std::int64_t row_of(std::int64_t p) const {
    if (!packed) return std::int64_t(slot_row(p));
    return p < positions ? std::int64_t(impl::upper_bound(start, std::int64_t(1), nrows, p)) - 1
                         : nrows - 1;
  }
  /// Whether slot or stored entry p (< positions) is the first of its row.
  KOKKOS_INLINE_FUNCTION bool begins_row(std::int64_t p) const { return start(row_of(p)) == p; }
  /// The first position of chunk c.
  KOKKOS_INLINE_FUNCTION std::int64_t first(std::int64_t c) const {
    return packed ? c * B * K : c * B;
  }

  /// Calls f(q, j, row, e) for entry j of slot q of chunk c, in order, with the entry's row and
  /// its CSR position e, or -1 for a filler (row padding, an empty row's zero, the last chunk's
  /// tail).
  template <class Fn>
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t c, const Fn& f) const {
    std::int64_t i = row_of(first(c));
    for (int q = 0; q < B; ++q) {
      const std::int64_t s = c * B + q;
      if (!packed) i = std::int64_t(slot_row(s));
      for (int j = 0; j < K; ++j) {
        // k: the entry's place in its row
        std::int64_t k;
        if (packed) {
          const std::int64_t t = s * K + j;
          while (i + 1 < nrows && start(i + 1) <= t) ++i;
          k = t - start(i);
        } else {
          k = (s - start(i)) * K + j;
        }
        const std::int64_t e = std::int64_t(row_map(i)) + k;
        f(q, j, i, e < std::int64_t(row_map(i + 1)) ? e : std::int64_t(-1));
      }
    }
  }
};

/// How a chunk's columns, spanning [lo, hi], split into up to three intervals (CooColumnGaps):
/// the columns mark which of 64 equal buckets of the span they fall in, and the (up to) two
/// longest runs of empty buckets become the gaps; each interval is then narrowed to its
/// smallest and largest column. One interval when no bucket is empty.
struct CooGapPlan {
  int n = 1;                       ///< intervals
  int gap_start[2] = {64, 64};     ///< first empty bucket of each gap, ascending
  std::int64_t lo0 = 0, span1 = 1; ///< the chunk's smallest column and span + 1
  std::int64_t lo[3] = {0, 0, 0};  ///< smallest and largest column of each interval
  std::int64_t hi[3] = {0, 0, 0};

  KOKKOS_INLINE_FUNCTION int bucket(std::int64_t col) const {
    return int(std::uint64_t(col - lo0) * 64u / std::uint64_t(span1));
  }
  KOKKOS_INLINE_FUNCTION int interval(std::int64_t col) const {
    const int b = bucket(col);
    return (b > gap_start[0] ? 1 : 0) + (b > gap_start[1] ? 1 : 0);
  }
  /// The first compact offset of interval i (the columns of the intervals before it).
  KOKKOS_INLINE_FUNCTION std::int64_t base(int i) const {
    std::int64_t b = 0;
    for (int k = 0; k < i; ++k) b += hi[k] - lo[k] + 1;
    return b;
  }
  /// The largest compact offset.
  KOKKOS_INLINE_FUNCTION std::int64_t compact_max() const { return base(n) - 1; }
  /// Compact offset of column col.
  KOKKOS_INLINE_FUNCTION std::uint32_t encode(std::int64_t col) const {
    const int i = interval(col);
    return std::uint32_t(col - lo[i] + base(i));
  }
  /// The gaps as the kernels read them (compact offsets of at most 16 bits).
  KOKKOS_INLINE_FUNCTION CooColumnGaps gaps() const {
    CooColumnGaps g;
    const int last = n - 1;  // 1 or 2
    g.shift[0] = unsigned(lo[1] - lo0 - base(1));
    g.shift[1] = unsigned(lo[last] - lo0 - base(last));
    g.bounds = unsigned(base(1)) | (unsigned(n == 3 ? base(2) : 0xffff) << 16);
    return g;
  }
};

/// Bytes a chunk of n entries with `code` saves by its column gaps against offsets of
/// `plain_width` (a col_width code): 0 without gaps.
KOKKOS_INLINE_FUNCTION std::int64_t gap_saving(std::uint8_t code, std::uint8_t plain_width,
                                               std::uint64_t n) {
  if (!(code & CooChunkCode::col_gaps)) return 0;
  const int w = code & CooChunkCode::col_width_mask;
  return std::int64_t(blob_part(n << plain_width)) - std::int64_t(blob_part(n << w)) -
         CooColumnGaps::bytes;
}

/// The gap plan of chunk c (entries as CooChunkEntries visits them) whose columns span [lo, hi].
template <class Entries, class Cols>
KOKKOS_INLINE_FUNCTION CooGapPlan chunk_gap_plan(const Entries& entries, const Cols& cols,
                                                 std::int64_t c, std::int64_t lo,
                                                 std::int64_t hi) {
  CooGapPlan p;
  p.lo0 = lo;
  p.span1 = hi - lo + 1;
  std::uint64_t mask = 0;
  entries(c, [&](int, int, std::int64_t, std::int64_t e) {
    if (e >= 0) mask |= std::uint64_t(1) << p.bucket(std::int64_t(cols(e)));
  });
  // the two longest runs of empty buckets between occupied ones (the first found wins a tie)
  int len[2] = {0, 0}, start[2] = {64, 64};
  for (int b = 0; b < 64;) {
    if ((mask >> b) & 1u) {
      ++b;
      continue;
    }
    int e = b;
    while (e < 64 && !((mask >> e) & 1u)) ++e;
    if (e < 64 && b > 0) {
      if (e - b > len[0]) {
        len[1] = len[0];
        start[1] = start[0];
        len[0] = e - b;
        start[0] = b;
      } else if (e - b > len[1]) {
        len[1] = e - b;
        start[1] = b;
      }
    }
    b = e;
  }
  for (int k = 0; k < 2; ++k)
    if (len[k] > 0) p.gap_start[p.n++ - 1] = start[k];
  if (p.n == 3 && p.gap_start[1] < p.gap_start[0]) {
    const int t = p.gap_start[0];
    p.gap_start[0] = p.gap_start[1];
    p.gap_start[1] = t;
  }
  for (int i = 0; i < p.n; ++i) {
    p.lo[i] = hi;
    p.hi[i] = lo;
  }
  entries(c, [&](int, int, std::int64_t, std::int64_t e) {
    if (e < 0) return;
    const std::int64_t col = std::int64_t(cols(e));
    const int i = p.interval(col);
    p.lo[i] = col < p.lo[i] ? col : p.lo[i];
    p.hi[i] = col > p.hi[i] ? col : p.hi[i];
  });
  return p;
}

/// Compressed COO arrays of `a`, built on its device (see the file comment of
/// impl/compressed_coo_spmv.hpp for the layouts): the value table, slots or stored entries per
/// row and their scan, then one thread per chunk measuring it (baseline column, column width,
/// table use, single row, neighbours) and, after a scan of the chunk sizes, filling its blob.
/// O(nnz + nrows) work plus the value table's sorts.
template <class S, class O, class F, class D>
CompressedCooArrays<S, O, typename CsrMatrix<S, O, F, D>::device_type> csr_to_compressed_coo(
    const CsrMatrix<S, O, F, D>& a, const CompressedCooOptions& opt) {
  using dev = typename CsrMatrix<S, O, F, D>::device_type;
  using exec = typename dev::execution_space;
  const char* where = "spk::CompressedCooMatrix";
  require(opt.threads_per_chunk >= 32 && opt.threads_per_chunk <= 256 &&
              opt.threads_per_chunk % 32 == 0,
          where, "threads_per_chunk B = ", opt.threads_per_chunk,
          " must be a multiple of 32 in [32, 256] (row offsets are 8 bits)");
  require(opt.entries_per_thread == 0 || opt.entries_per_thread == 1 ||
              opt.entries_per_thread == 2 || opt.entries_per_thread == 4 ||
              opt.entries_per_thread == 8,
          where, "entries_per_thread K = ", opt.entries_per_thread,
          " must be 0 (choose), 1, 2, 4 or 8");
  CompressedCooArrays<S, O, dev> r;
  const int B = opt.threads_per_chunk;
  r.slots = B;
  const std::int64_t nrows = a.nrows();
  const auto row_map = a.row_map();
  const auto in_cols = a.col_idx();
  const auto in_vals = a.values();
  using table_type = ValueTable<S, dev>;
  const table_type table = opt.value_table && a.nnz() > 0
                               ? table_type::template build<exec>(in_vals)
                               : table_type{};
  r.table = table.values;
  r.table_coverage = table.coverage;
  const bool use_table = table.bits.extent(0) > 0;
  // slots per row for K entries per slot, scanned into slot_start
  Kokkos::View<std::int64_t*, dev> slot_start("spk::ccoo::slot_start", std::size_t(nrows) + 1);
  const auto count_slots = [&](const int k) {
    return count_row_slots<exec>(row_map, slot_start, k);
  };
  int K = opt.entries_per_thread > 0 ? opt.entries_per_thread
                                     : default_slot_entries(std::int64_t(a.nnz()), nrows);
  // stored entries of the packed layout (a row's entries, or one zero for an empty row), and
  // the layout: the automatic choice compares them with the slot layout's entries at its K
  const std::int64_t n_stored = count_slots(1);
  bool packed = opt.layout == CompressedCooLayout::packed;
  if (opt.layout == CompressedCooLayout::automatic && n_stored > 0 && K > 1) {
    const double padded = double(count_slots(K)) * double(K) / double(n_stored);
    if (!(use_table && table.coverage >= 0.9)) {
      packed = padded >= 1.15;
    } else {
      // table-coded values: packed only where the slot layout pads by half or more and no row
      // is longer than a slot (rows then span at most two lanes; H100: the 2D 5-point stencil
      // 1.59-1.63x -> 1.69-1.74x cuSPARSE CSR, while R-MAT's long rows ran 6% slower packed)
      const std::int64_t longest = longest_segment<exec>(row_map);
      packed = padded >= 1.5 && longest <= K;
    }
  }
  if (packed && opt.entries_per_thread == 0) K = 8;
  r.k = K;
  r.packed = packed;
  const Kokkos::View<std::int64_t*, dev> stored_start =
      packed ? Kokkos::View<std::int64_t*, dev>("spk::ccoo::stored_start", std::size_t(nrows) + 1)
             : Kokkos::View<std::int64_t*, dev>();
  if (packed) {
    count_slots(1);
    Kokkos::deep_copy(stored_start, slot_start);
  }
  const std::int64_t n_slots = count_slots(K);
  const std::int64_t entries_per_chunk = std::int64_t(B) * K;
  const std::int64_t n_chunks = packed ? (n_stored + entries_per_chunk - 1) / entries_per_chunk
                                       : (n_slots + B - 1) / B;
  r.mean_row_slots = nrows > 0 ? double(n_slots) / double(nrows) : 0.0;
  Kokkos::parallel_reduce(
      "spk::ccoo::max_row_slots", Range64<exec>(0, nrows),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& m) {
        const std::int64_t n = slot_start(i + 1) - slot_start(i);
        if (n > m) m = n;
      },
      Kokkos::Max<std::int64_t>(r.max_row_slots));
  if (nrows == 0) r.max_row_slots = 0;
  Kokkos::View<O*, dev> slot_row;
  if (!packed) {
    slot_row = Kokkos::View<O*, dev>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::ccoo::slot_row"),
        std::size_t(n_chunks * B));
    Kokkos::parallel_for(
        "spk::ccoo::slot_rows", Range64<exec>(0, nrows), KOKKOS_LAMBDA(const std::int64_t i) {
          for (std::int64_t s = slot_start(i); s < slot_start(i + 1); ++s) slot_row(s) = O(i);
        });
    Kokkos::parallel_for(
        "spk::ccoo::pad_slots", Range64<exec>(n_slots, n_chunks * B),
        KOKKOS_LAMBDA(const std::int64_t s) { slot_row(s) = O(nrows - 1); });
  }
  const CooChunkEntries<O, decltype(row_map), dev> entries{
      row_map, packed ? stored_start : slot_start, slot_row, nrows, packed ? n_stored : n_slots,
      B,       K,                                  packed};
  // per chunk: code, baselines, bytes
  r.codes = Kokkos::View<std::uint8_t*, dev>("spk::ccoo::codes", std::size_t(n_chunks));
  r.base_row = Kokkos::View<O*, dev>("spk::ccoo::base_row", std::size_t(n_chunks));
  r.base_col = Kokkos::View<O*, dev>("spk::ccoo::base_col", std::size_t(n_chunks));
  r.offsets = Kokkos::View<std::uint64_t*, dev>("spk::ccoo::offsets", std::size_t(n_chunks) + 1);
  const auto codes = r.codes;
  const auto base_row = r.base_row;
  const auto base_col = r.base_col;
  const auto offsets = r.offsets;
  std::int64_t wide = 0;
  const bool try_gaps = opt.column_gaps;
  // each chunk's column offset width without gaps: the gaps are kept only where they save a
  // share of the matrix (below)
  Kokkos::View<std::uint8_t*, dev> plain_widths;
  if (try_gaps)
    plain_widths =
        Kokkos::View<std::uint8_t*, dev>("spk::ccoo::plain_widths", std::size_t(n_chunks));
  Kokkos::parallel_reduce(
      "spk::ccoo::measure", Range64<exec>(0, n_chunks),
      KOKKOS_LAMBDA(const std::int64_t c, std::int64_t& too_wide) {
        std::int64_t lo = -1, hi = -1, row_first = 0, row_last = 0;
        bool in_table = use_table;
        entries(c, [&](int q, int j, std::int64_t i, std::int64_t e) {
          if (q == 0 && j == 0) row_first = i;
          row_last = i;
          if (e < 0) return;
          const std::int64_t col = std::int64_t(in_cols(e));
          lo = lo < 0 || col < lo ? col : lo;
          hi = col > hi ? col : hi;
          if (in_table && table.find(in_vals(e)) < 0) in_table = false;
        });
        if (lo < 0) lo = hi = 0;  // only fillers
        const std::uint64_t span = std::uint64_t(hi - lo);
        std::uint8_t width = span < 256u ? 0 : span < 65536u ? 1 : 2;
        const std::uint8_t plain_width = width;
        if (span > 0xffffffffull) too_wide += 1;
        bool gapped = false;
        if (try_gaps && width > 0 && span <= 0xffffffffull) {
          const CooGapPlan plan = chunk_gap_plan(entries, in_cols, c, lo, hi);
          const std::int64_t m = plan.compact_max();
          const std::uint8_t narrow = m < 256 ? 0 : m < 65536 ? 1 : 2;
          if (plan.n > 1 && narrow < width && m < 65536) {
            width = narrow;
            gapped = true;
          }
        }
        const bool single = row_first == row_last;
        std::uint8_t code = width;
        if (gapped) code |= CooChunkCode::col_gaps;
        if (in_table) code |= CooChunkCode::table;
        if (single) code |= CooChunkCode::single_row;
        if (packed) code |= CooChunkCode::packed;
        if (c > 0 && !entries.begins_row(entries.first(c))) code |= CooChunkCode::first_continues;
        if (c + 1 < n_chunks && !entries.begins_row(entries.first(c + 1)))
          code |= CooChunkCode::last_continues;
        codes(c) = code;
        base_row(c) = O(row_first);
        base_col(c) = O(lo);
        const std::uint64_t n = std::uint64_t(entries_per_chunk);
        offsets(c + 1) = (single ? 0 : blob_part(std::uint64_t(B) * (packed ? 4 : 1))) +
                         blob_part(n << width) + blob_part(n * (in_table ? 1 : sizeof(S))) +
                         (gapped ? CooColumnGaps::bytes : 0);
        if (try_gaps) plain_widths(c) = plain_width;
      },
      wide);
  require(wide == 0, where, wide, " chunks span more than 2^32 columns");
  Kokkos::parallel_reduce(
      "spk::ccoo::table_chunks", Range64<exec>(0, n_chunks),
      KOKKOS_LAMBDA(const std::int64_t c, std::int64_t& n) {
        if (codes(c) & CooChunkCode::table) ++n;
      },
      r.table_chunks);
  if (try_gaps && n_chunks > 0) {
    // the gaps cost a few instructions per entry and a load per slot: kept where they shrink
    // the matrix by >= 5% (3D 7-point stencil: 39%, 4-8% faster on an H100), dropped where
    // they save little (R-MAT: 0.4% of the bytes, 4% slower with them)
    const std::uint64_t n = std::uint64_t(entries_per_chunk);
    std::int64_t saved = 0, bytes = 0;
    Kokkos::parallel_reduce(
        "spk::ccoo::gap_savings", Range64<exec>(0, n_chunks),
        KOKKOS_LAMBDA(const std::int64_t c, std::int64_t& sv) {
          sv += gap_saving(codes(c), plain_widths(c), n);
        },
        saved);
    Kokkos::parallel_reduce(
        "spk::ccoo::bytes", Range64<exec>(0, n_chunks),
        KOKKOS_LAMBDA(const std::int64_t c, std::int64_t& by) {
          by += std::int64_t(offsets(c + 1));
        },
        bytes);
    if (double(saved) < 0.05 * double(bytes + saved)) {
      Kokkos::parallel_for(
          "spk::ccoo::drop_gaps", Range64<exec>(0, n_chunks), KOKKOS_LAMBDA(const std::int64_t c) {
            if (!(codes(c) & CooChunkCode::col_gaps)) return;
            const std::int64_t sv = gap_saving(codes(c), plain_widths(c), n);
            codes(c) = std::uint8_t(
                (codes(c) & ~(CooChunkCode::col_gaps | CooChunkCode::col_width_mask)) |
                plain_widths(c));
            offsets(c + 1) = std::uint64_t(std::int64_t(offsets(c + 1)) + sv);
          });
    }
  }
  Kokkos::parallel_reduce(
      "spk::ccoo::gapped_chunks", Range64<exec>(0, n_chunks),
      KOKKOS_LAMBDA(const std::int64_t c, std::int64_t& n) {
        if (codes(c) & CooChunkCode::col_gaps) ++n;
      },
      r.gapped_chunks);
  std::uint64_t total = 0;  // offsets(c + 1) holds chunk c's bytes: scan them in place
  Kokkos::parallel_scan(
      "spk::ccoo::offsets", Range64<exec>(0, n_chunks),
      KOKKOS_LAMBDA(const std::int64_t c, std::uint64_t& sum, const bool final) {
        sum += offsets(c + 1);
        if (final) offsets(c + 1) = sum;
      },
      total);
  r.blob = Kokkos::View<std::uint8_t*, dev>("spk::ccoo::blob", std::size_t(total));
  const auto blob = r.blob;
  Kokkos::parallel_for(
      "spk::ccoo::fill", Range64<exec>(0, n_chunks), KOKKOS_LAMBDA(const std::int64_t c) {
        const CooChunkHead<O> h{blob.data() + offsets(c), base_row(c), base_col(c), codes(c)};
        const int width = h.code & CooChunkCode::col_width_mask;
        const bool tab = (h.code & CooChunkCode::table) != 0;
        std::uint8_t* rows = blob.data() + offsets(c);
        std::uint8_t* cols = rows + (h.cols(B) - h.blob);
        std::uint8_t* vals = rows + (h.vals(B, K) - h.blob);
        CooGapPlan plan;
        if (h.gapped()) {
          std::int64_t lo = std::int64_t(h.col0), hi = lo;
          entries(c, [&](int, int, std::int64_t, std::int64_t e) {
            if (e >= 0) hi = std::int64_t(in_cols(e)) > hi ? std::int64_t(in_cols(e)) : hi;
          });
          plan = chunk_gap_plan(entries, in_cols, c, lo, hi);
          const CooColumnGaps g = plan.gaps();
          const auto* at =
              reinterpret_cast<const std::uint8_t*>(h.gaps(B, K, tab ? 1 : int(sizeof(S))));
          unsigned* gw = reinterpret_cast<unsigned*>(rows + (at - h.blob));
          gw[0] = g.shift[0];
          gw[1] = g.shift[1];
          gw[2] = g.bounds;
        }
        const std::int64_t r0 = std::int64_t(h.row0);
        unsigned word = 0;  // the slot's row offset (and, packed, its row starts)
        std::int64_t prev = r0;
        entries(c, [&](int q, int j, std::int64_t i, std::int64_t e) {
          if (!h.single()) {
            if (j == 0)
              word = unsigned(i - r0);
            else if (i != prev)
              word |= 1u << (24 + j);
            if (j == K - 1) {
              if (packed)
                reinterpret_cast<unsigned*>(rows)[q] = word;
              else
                rows[q] = std::uint8_t(word);
            }
          }
          prev = i;
          const std::int64_t t = std::int64_t(q) * K + j;
          const std::uint32_t off =
              e < 0        ? 0u
              : h.gapped() ? plan.encode(std::int64_t(in_cols(e)))
                           : std::uint32_t(std::int64_t(in_cols(e)) - std::int64_t(h.col0));
          if (width == 0)
            cols[t] = std::uint8_t(off);
          else if (width == 1)
            reinterpret_cast<std::uint16_t*>(cols)[t] = std::uint16_t(off);
          else
            reinterpret_cast<std::uint32_t*>(cols)[t] = off;
          const S v = e < 0 ? scalar_traits<S>::zero() : in_vals(e);
          if (tab)
            vals[t] = std::uint8_t(table.find(v));
          else
            reinterpret_cast<S*>(vals)[t] = v;
        });
      });
  return r;
}

}  // namespace impl

/// Compressed COO matrix (see the file comment and impl/compressed_coo_spmv.hpp). The values
/// are those of the CSR input in stored order, with zeros as fillers (rows padded to whole slots
/// in the slot layout, an empty row's one entry, the last chunk's tail), so to_csr() returns the
/// input without its zero-valued entries. Template parameters as spk::CsrMatrix. Copies are
/// shallow.
template <class Scalar, class Ordinal = int, class Offset = int,
          class Device = Kokkos::DefaultExecutionSpace>
class CompressedCooMatrix {
 public:
  using value_type = Scalar;
  using ordinal_type = Ordinal;
  using size_type = Offset;
  using device_type = impl::device_t<Device>;
  using execution_space = typename device_type::execution_space;
  using memory_space = typename device_type::memory_space;
  using csr_type = CsrMatrix<Scalar, Ordinal, Offset, Device>;
  static constexpr const char* name = "compressed-coo";

  /// An empty 0 x 0 matrix.
  CompressedCooMatrix() = default;

  /// Converts a CSR matrix on its device. Throws std::invalid_argument on invalid options.
  explicit CompressedCooMatrix(const csr_type& a, const CompressedCooOptions& options = {})
      : nrows_(a.nrows()), ncols_(a.ncols()), nnz_(std::int64_t(a.nnz())) {
    const auto arr = impl::csr_to_compressed_coo(a, options);
    codes_ = arr.codes;
    base_row_ = arr.base_row;
    base_col_ = arr.base_col;
    offsets_ = arr.offsets;
    blob_ = arr.blob;
    table_ = arr.table;
    slots_ = arr.slots;
    k_ = arr.k;
    packed_ = arr.packed;
    table_coverage_ = arr.table_coverage;
    mean_row_slots_ = arr.mean_row_slots;
    max_row_slots_ = arr.max_row_slots;
    table_chunks_ = arr.table_chunks;
    gapped_chunks_ = arr.gapped_chunks;
  }

  ordinal_type nrows() const { return nrows_; }
  ordinal_type ncols() const { return ncols_; }
  /// Entries of the CSR input (duplicates counted).
  std::int64_t nnz() const { return nnz_; }
  /// B: slots per chunk.
  int slots_per_chunk() const { return slots_; }
  /// K: entries per slot.
  int entries_per_slot() const { return k_; }
  /// The packed layout (a slot's entries may lie in several rows), else the slot layout.
  bool packed() const { return packed_; }
  std::int64_t n_chunks() const { return std::int64_t(codes_.extent(0)); }
  /// Mean slots per row (K entries each; an empty row takes one).
  double mean_row_slots() const { return mean_row_slots_; }
  /// Slots of the longest row.
  std::int64_t max_row_slots() const { return max_row_slots_; }
  /// Chunks whose values are 1-byte table indices.
  std::int64_t table_chunks() const { return table_chunks_; }
  /// Chunks whose column offsets leave gaps out (CompressedCooOptions::column_gaps).
  std::int64_t gapped_chunks() const { return gapped_chunks_; }

  /// Bytes held by the arrays: blob, per-chunk code, baselines and offset, value table.
  std::size_t memory_bytes() const {
    return blob_.extent(0) + codes_.extent(0) * (1 + 2 * sizeof(ordinal_type)) +
           offsets_.extent(0) * sizeof(std::uint64_t) + table_.extent(0) * sizeof(value_type);
  }

  /// Counts of the chunk encodings (reads the codes on the host).
  CompressedCooStats stats() const {
    CompressedCooStats st;
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), codes_);
    st.packed = packed_;
    st.chunks = std::int64_t(h.extent(0));
    for (std::size_t c = 0; c < h.extent(0); ++c) {
      const int w = h(c) & impl::CooChunkCode::col_width_mask;
      (w == 0 ? st.col8 : w == 1 ? st.col16 : st.col32) += 1;
      if (h(c) & impl::CooChunkCode::table) ++st.table_values;
      if (h(c) & impl::CooChunkCode::single_row) ++st.single_row;
      if (h(c) & impl::CooChunkCode::col_gaps) ++st.col_gaps;
    }
    st.stored_entries = st.chunks * slots_ * k_;
    st.table_size = int(table_.extent(0));
    st.table_coverage = table_coverage_;
    return st;
  }

  /// The input in CSR on the same device, zero-valued entries dropped (fillers cannot be told
  /// from stored zeros); order and duplicates as given. O(stored entries).
  csr_type to_csr() const;

  /// The arrays as the kernels read them.
  impl::CompressedCooData<value_type, ordinal_type, device_type> data() const {
    return {codes_, base_row_, base_col_, offsets_, blob_, table_, slots_, k_, n_chunks()};
  }

  impl::CooPartials<value_type, device_type>& partials() const { return *partials_; }

 private:
  ordinal_type nrows_ = 0;
  ordinal_type ncols_ = 0;
  std::int64_t nnz_ = 0;
  Kokkos::View<std::uint8_t*, device_type> codes_;
  Kokkos::View<ordinal_type*, device_type> base_row_;
  Kokkos::View<ordinal_type*, device_type> base_col_;
  Kokkos::View<std::uint64_t*, device_type> offsets_;
  Kokkos::View<std::uint8_t*, device_type> blob_;
  Kokkos::View<value_type*, device_type> table_;
  int slots_ = 256;
  int k_ = 4;
  bool packed_ = false;
  double table_coverage_ = 0;
  double mean_row_slots_ = 0;
  std::int64_t max_row_slots_ = 0;
  std::int64_t table_chunks_ = 0;
  std::int64_t gapped_chunks_ = 0;
  std::shared_ptr<impl::CooPartials<value_type, device_type>> partials_ =
      std::make_shared<impl::CooPartials<value_type, device_type>>();
};

namespace impl {

/// Calls f(row, col, value) for every stored entry of chunk c with a nonzero value, in order.
template <class S, class O, class D, class Fn>
KOKKOS_INLINE_FUNCTION void for_each_chunk_entry(const CompressedCooData<S, O, D>& a,
                                                 std::int64_t c, const Fn& f) {
  const CooChunkHead<O> h = a.head(c);
  const std::uint8_t code = h.code;
  const int width = code & CooChunkCode::col_width_mask;
  const std::uint8_t* cols = h.cols(a.slots);
  const std::uint8_t* vals = h.vals(a.slots, a.k);
  const CooColumnGaps gaps =
      h.gapped() ? CooColumnGaps::from_words(h.gaps(
                       a.slots, a.k, (code & CooChunkCode::table) ? 1 : int(sizeof(S))))
                 : CooColumnGaps{};
  for (int q = 0; q < a.slots; ++q) {
    O r = h.single() ? h.row0 : O(h.row0 + O(h.blob[q]));
    unsigned starts = 0;  // packed: the entries that start the next row
    if (h.packed() && !h.single()) {
      const unsigned word = reinterpret_cast<const unsigned*>(h.blob)[q];
      r = O(h.row0 + O(packed_first_row(word)));
      starts = word >> 24;
    }
    for (int j = 0; j < a.k; ++j) {
      if ((starts >> j) & 1u) ++r;
      const std::int64_t t = std::int64_t(q) * a.k + j;
      const std::uint32_t off = gaps.apply(
          width == 0   ? cols[t]
          : width == 1 ? reinterpret_cast<const std::uint16_t*>(cols)[t]
                       : reinterpret_cast<const std::uint32_t*>(cols)[t]);
      const S v = (code & CooChunkCode::table) ? a.table(vals[t])
                                               : reinterpret_cast<const S*>(vals)[t];
      if (!(v == scalar_traits<S>::zero())) f(r, O(h.col0 + O(off)), v);
    }
  }
}

}  // namespace impl

template <class S, class O, class F, class D>
typename CompressedCooMatrix<S, O, F, D>::csr_type CompressedCooMatrix<S, O, F, D>::to_csr()
    const {
  using exec = execution_space;
  const auto d = data();
  const std::int64_t nrows = nrows_;
  Kokkos::View<F*, device_type> row_map("spk::to_csr::row_map", std::size_t(nrows) + 1);
  // a row's entries may lie in several chunks: count with atomics, then place each chunk's
  // entries after those of the chunks before it (chunks are in row order)
  Kokkos::parallel_for(
      "spk::ccoo_to_csr::count", impl::Range64<exec>(0, d.n_chunks),
      KOKKOS_LAMBDA(const std::int64_t c) {
        impl::for_each_chunk_entry(d, c, [&](O r, O, const S&) {
          impl::atomic_add_int(&row_map(r + 1), F(1));
        });
      });
  const std::int64_t nnz = impl::row_lengths_to_offsets<exec>(row_map);
  csr_type b(nrows_, ncols_, typename csr_type::row_map_type(row_map),
             typename csr_type::index_type(
                 Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::csr::col_idx"),
                 std::size_t(nnz)),
             typename csr_type::values_type(
                 Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::csr::values"),
                 std::size_t(nnz)));
  const auto out_cols = b.col_idx();
  const auto out_vals = b.values();
  // sequential over chunks within a row: one pass per chunk in order is correct but serial, so
  // each chunk first counts what earlier chunks put in its first row (they are contiguous)
  Kokkos::View<F*, device_type> first_fill("spk::ccoo_to_csr::first_fill",
                                           std::size_t(d.n_chunks) + 1);
  Kokkos::parallel_for(
      "spk::ccoo_to_csr::first_counts", impl::Range64<exec>(0, d.n_chunks),
      KOKKOS_LAMBDA(const std::int64_t c) {
        // entries of this chunk in the last row of the chunk, to pass on
        const O last = d.slot_last_row(c, d.slots - 1);
        F n = 0;
        impl::for_each_chunk_entry(d, c, [&](O r, O, const S&) { n += r == last ? 1 : 0; });
        first_fill(c + 1) = n;
      });
  Kokkos::parallel_for(
      "spk::ccoo_to_csr::fill", impl::Range64<exec>(0, d.n_chunks),
      KOKKOS_LAMBDA(const std::int64_t c) {
        const O first = d.base_row(c);
        // entries of `first` placed by earlier chunks: walk back while they end in that row
        F before = 0;
        for (std::int64_t q = c - 1; q >= 0 && d.slot_last_row(q, d.slots - 1) == first; --q) {
          before += first_fill(q + 1);
          if (!(d.codes(q) & impl::CooChunkCode::single_row)) break;
        }
        O cur = first;
        F pos = row_map(first) + before;
        impl::for_each_chunk_entry(d, c, [&](O r, O col, const S& v) {
          if (r != cur) {
            cur = r;
            pos = row_map(r);
          }
          out_cols(pos) = col;
          out_vals(pos) = v;
          ++pos;
        });
      });
  return b;
}

/// The launch spmv uses for `a` (slots per lane chosen when 0; 1 on CPU backends, where one
/// thread takes a chunk). Throws std::invalid_argument for invalid values.
template <class S, class O, class F, class D>
CompressedCooSpmvParams resolve_params(const CompressedCooMatrix<S, O, F, D>& a, Mode mode,
                                       const CompressedCooSpmvParams& params = {}) {
  using exec = typename CompressedCooMatrix<S, O, F, D>::execution_space;
  const int sl = params.slots_per_lane;
  require(sl == 0 || sl == 1 || sl == 2 || sl == 4, "spk::spmv (compressed COO)",
          "slots_per_lane = ", sl, " must be 0 (choose), 1, 2 or 4");
  const int ld = params.slots_per_load;
  require(ld == 0 || ld == 1 || ld == 2 || ld == 4, "spk::spmv (compressed COO)",
          "slots_per_load = ", ld, " must be 0 (all of a lane's slots), 1, 2 or 4");
  require(params.chunks_per_team >= 0, "spk::spmv (compressed COO)",
          "chunks_per_team = ", params.chunks_per_team, " must be 0 (choose) or positive");
  CompressedCooSpmvParams p = params;
  const bool gpu = impl::is_gpu_space<exec>();
  if (!gpu) {
    p.slots_per_lane = 1;
  } else if (sl == 0) {
    // Rows of several slots and about equal length, with values from the table (stencils of
    // more than K entries): two slots per lane, one at a time, so a row spans half the lanes
    // and the lane loads stay light (H100, 27-point stencil with K = 8: 1.27x -> 1.58x
    // cuSPARSE CSR). Elsewhere one slot per lane: rows of one slot lost 0-25% with two, raw
    // values 25-30%, irregular rows 10-25% (docs/PERFORMANCE.md). Measured for op = N only.
    const bool regular_multi = mode == Mode::N && !a.packed() && a.mean_row_slots() >= 1.5 &&
                               double(a.max_row_slots()) <= 2 * a.mean_row_slots() &&
                               a.table_chunks() >= 0.9 * double(a.n_chunks());
    p.slots_per_lane = regular_multi ? 2 : 1;
    if (regular_multi && ld == 0) p.slots_per_load = 1;
  }
  // a warp's window (32 x slots per lane) must divide the chunk: B = 96 or 160 takes 1 slot
  // per lane, B = 192 at most 2
  const int warps_at_one = std::max(1, a.slots_per_chunk() / 32);
  while (p.slots_per_lane > 1 && warps_at_one % p.slots_per_lane != 0) p.slots_per_lane /= 2;
  // slots whose loads go together: a power of two, so it divides slots_per_lane once capped
  p.slots_per_load = p.slots_per_load == 0 ? p.slots_per_lane
                                            : std::min(p.slots_per_load, p.slots_per_lane);
  // the packed layout's lanes load one slot at a time (one kernel per K instead of three), and
  // so do those of a matrix with column gaps (the gaps' six words per slot in registers) and
  // those of op = T / H (their atomics, not their loads, bound them; two kernels fewer per K)
  if (a.packed() || a.gapped_chunks() > 0 || mode != Mode::N) p.slots_per_load = 1;
  if (!gpu) {
    p.chunks_per_team = 1;
  } else if (p.chunks_per_team == 0) {
    const std::int64_t teams = 32 * std::int64_t(impl::multiprocessor_count<exec>());
    p.chunks_per_team = int(std::clamp<std::int64_t>(a.data().n_chunks / teams, 1, 4));
  }
  return p;
}

namespace impl {

template <int K, int SL, bool Trans, CooAccumulate Acc, bool Packed, class S, class O, class F,
          class D, class XView, class YView>
void compressed_coo_launch(const CompressedCooSpmvParams& p, Mode mode, S alpha,
                           const CompressedCooMatrix<S, O, F, D>& a, const XView& x, S beta,
                           const YView& y) {
  using Matrix = CompressedCooMatrix<S, O, F, D>;
  using dev = typename Matrix::device_type;
  using exec = typename Matrix::execution_space;
  using functor = CompressedCooSpmv<S, O, dev, XView, YView, K, SL, Trans, Acc, Packed>;
  const bool gpu = is_gpu_space<exec>();
  const int lanes = Warp<exec>::size;
  const int B = a.slots_per_chunk();
  const int wslots = gpu ? lanes * p.slots_per_lane : B;
  const int warps = B / wslots;
  const auto data = a.data();
  const std::int64_t nwindows = data.n_chunks * warps;
  const int per_team = gpu ? p.chunks_per_team : 1;
  auto& part = a.partials();
  if (!Trans && Acc == CooAccumulate::deterministic) part.reserve(nwindows);
  if (!Trans && Acc == CooAccumulate::direct)
    coo_prescale_crossing_rows<exec>(nwindows,
                                     CompressedCooWindows<S, O, dev>{data, wslots}, beta, y);
  functor f{data,
            x,
            CooOutput<S, O, YView, dev, Acc>{y, alpha, beta, beta == scalar_traits<S>::zero(),
                                                part.carry, part.head},
            mode == Mode::H,
            wslots,
            wslots / lanes,
            per_team};
  CompressedCooPolicy<exec, SL> policy((data.n_chunks + per_team - 1) / per_team, warps, lanes);
  check_team_size(policy, f, warps, lanes);
  Kokkos::parallel_for(Trans ? "spk::compressed_coo_spmv_t" : "spk::compressed_coo_spmv", policy,
                       f);
  if (!Trans && Acc == CooAccumulate::deterministic)
    coo_window_fixup<exec>(nwindows, CompressedCooWindows<S, O, dev>{data, wslots},
                           part.carry, part.head, alpha, beta, y);
}

}  // namespace impl

/// y = alpha * op(A) * x + beta * y with A in compressed COO; op = N, T or H as for balanced COO.
/// beta == 0 overwrites y. Throws std::invalid_argument on size mismatch.
/// O(stored entries) work, balanced over the teams.
template <class S, class O, class F, class D, class XView, class YView>
void spmv(Mode mode, typename CompressedCooMatrix<S, O, F, D>::value_type alpha,
          const CompressedCooMatrix<S, O, F, D>& a, const XView& x,
          typename CompressedCooMatrix<S, O, F, D>::value_type beta, const YView& y,
          const CompressedCooSpmvParams& params = {}) {
  using Matrix = CompressedCooMatrix<S, O, F, D>;
  using exec = typename Matrix::execution_space;
  static_assert(impl::check_vector_types<S, exec, XView, YView>(),
                "spk::spmv: invalid vector types");
  impl::check_vector_sizes("spk::spmv", mode != Mode::N, a.nrows(), a.ncols(), x, y,
                           to_string(mode));
  const CompressedCooSpmvParams p = resolve_params(a, mode, params);
  impl::coo_dispatch<exec>(
      mode, p.accumulate, a.entries_per_slot(), a.nrows() == 0 || a.ncols() == 0, beta, y,
      [&](auto k, auto trans, auto acc) {
        constexpr int K = decltype(k)::value;
        constexpr bool T = decltype(trans)::value;
        constexpr CooAccumulate A = decltype(acc)::value;
        const auto with_layout = [&](auto packed) {
          constexpr bool P = decltype(packed)::value;
          // CPU backends take a chunk per thread (resolve_params gives one slot per lane), the
          // packed layout and op = T / H one slot per load
          if constexpr (!impl::is_gpu_space<exec>() || P || T)
            impl::compressed_coo_launch<K, 1, T, A, P>(p, mode, alpha, a, x, beta, y);
          else if (p.slots_per_load == 1)
            impl::compressed_coo_launch<K, 1, T, A, P>(p, mode, alpha, a, x, beta, y);
          else if (p.slots_per_load == 2)
            impl::compressed_coo_launch<K, 2, T, A, P>(p, mode, alpha, a, x, beta, y);
          else
            impl::compressed_coo_launch<K, 4, T, A, P>(p, mode, alpha, a, x, beta, y);
        };
        if (a.packed())
          with_layout(std::true_type{});
        else
          with_layout(std::false_type{});
      });
}

}  // namespace spk
