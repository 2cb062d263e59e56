// spk/impl/compressed_coo_spmv.hpp: the chunk layout of the compressed COO format and its SpMV
// kernel.
//
// A chunk is B slots of K entries. In the slot layout (the default where values repeat) a slot
// holds K consecutive entries of one row (a row is padded with zero entries to whole slots, an
// empty row gets one slot of zeros), so a chunk covers at most B consecutive rows. In the packed
// layout (CooChunkCode::packed, where row padding would cost bytes: raw values of short rows) a
// slot holds the next K stored entries whatever their rows (an empty row stores one explicit
// zero, so consecutive entries lie in the same row or the next one). Per chunk: a 1-byte code
// (CooChunkCode), a baseline row (the chunk's first row) and column (its smallest column), and
// the byte offset of its blob. The blob holds, each part starting on a 16-byte boundary: the B
// slots' rows (absent when the chunk lies in one row): in the slot layout a byte per slot, the
// row's offset from the baseline row; in the packed layout a 32-bit word per slot, the offset of
// the slot's first row in its low 24 bits and in its high 8 bits a bit per entry j > 0 that
// starts the next row; then the B * K column offsets from the baseline column in 8, 16 or 32
// bits, and the B * K values, either raw or as 8-bit indices into the matrix's table of (at
// most) 256 values; a chunk whose column offsets leave out the gaps between up to three
// intervals of its columns (CooChunkCode::col_gaps, CooColumnGaps) ends with a 16-byte part
// of the gaps.
//
// SpMV: on CUDA a team of warps takes a few consecutive chunks, each warp a window of 32 * S
// consecutive slots of every chunk and each lane S consecutive slots (S = slots per lane: the K
// column offsets and the K values of a slot are one load each), taken in groups whose loads are
// issued together. While a lane multiplies one group it has already loaded the next group's row
// and column offsets and table indices (the next chunk's head too at a chunk's end), so each
// group waits on one round of loads (table look-ups or raw values, and x) instead of three. On
// CPU backends one thread takes a whole chunk. Rows are combined as described in coo_spmv.hpp
// (a chunk in one row skips the row keys).
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstring>

#include <spk/impl/coo_spmv.hpp>
#include <spk/impl/csr_spmv.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/warp.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {
namespace impl {

/// The bits of a compressed COO chunk's code.
struct CooChunkCode {
  static constexpr std::uint8_t col_width_mask = 3;  ///< log2 of the column offset bytes
  static constexpr std::uint8_t table = 4;           ///< values are indices into the table
  static constexpr std::uint8_t single_row = 8;      ///< one row: no row offsets stored
  static constexpr std::uint8_t first_continues = 16;  ///< first row began in the chunk before
  static constexpr std::uint8_t last_continues = 32;   ///< last row goes on in the next chunk
  static constexpr std::uint8_t packed = 64;  ///< packed layout: a 32-bit row word per slot
  static constexpr std::uint8_t col_gaps = 128;  ///< column offsets with gaps removed
};

/// A chunk's column gaps (CooChunkCode::col_gaps): the chunk's columns lie in up to three
/// intervals, and a column offset u counts columns with the gaps between the intervals left out,
/// so that 3D stencils (rows reaching a plane below and one above) fit 16-bit offsets instead
/// of 32 and other clustered columns 8-bit instead of 16. The column is baseline + u + shift
/// of u's interval: none in the first (u < bound 0), shift[0] in the second, shift[1] in the
/// third (u >= bound 1; with two intervals shift[1] = shift[0]). Stored as three words
/// (shift[0], shift[1], bound 0 | bound 1 << 16: gapped offsets have at most 16 bits) in a
/// 16-byte part after the values; the kernels hold them in three registers.
struct CooColumnGaps {
  unsigned shift[2] = {0, 0};
  unsigned bounds = 0xffffffffu;
  static constexpr int bytes = 16;
  /// The column offset from the baseline of compact offset u.
  KOKKOS_INLINE_FUNCTION unsigned apply(unsigned u) const {
    const unsigned s = u >= (bounds >> 16) ? shift[1] : shift[0];
    return u + (u >= (bounds & 0xffffu) ? s : 0u);
  }
  KOKKOS_INLINE_FUNCTION static CooColumnGaps from_words(const unsigned* w) {
    CooColumnGaps g;
    g.shift[0] = w[0];
    g.shift[1] = w[1];
    g.bounds = w[2];
    return g;
  }
};

/// The first row of a packed slot's row word, relative to the chunk's baseline row.
KOKKOS_INLINE_FUNCTION unsigned packed_first_row(unsigned word) { return word & 0xffffffu; }
/// The last row of a packed slot's row word, relative to the chunk's baseline row.
KOKKOS_INLINE_FUNCTION unsigned packed_last_row(unsigned word) {
  return (word & 0xffffffu) + unsigned(popcount32(word >> 24));
}

/// Bytes of a blob part of n bytes, rounded up to 16 (every part starts 16-byte aligned).
KOKKOS_INLINE_FUNCTION std::uint64_t blob_part(std::uint64_t n) { return (n + 15) / 16 * 16; }

/// Where a chunk's parts lie (CompressedCooData::head): read once per chunk, ahead of its
/// entries.
template <class O>
struct CooChunkHead {
  const std::uint8_t* blob = nullptr;  // the chunk's blob, whose first part is the row offsets
  O row0 = 0, col0 = 0;                // baselines
  std::uint8_t code = 0;
  KOKKOS_INLINE_FUNCTION bool single() const { return (code & CooChunkCode::single_row) != 0; }
  KOKKOS_INLINE_FUNCTION bool packed() const { return (code & CooChunkCode::packed) != 0; }
  KOKKOS_INLINE_FUNCTION int col_width() const {
    return 1 << (code & CooChunkCode::col_width_mask);
  }
  /// The column offsets (B slots), after RowBytes bytes of rows per slot (1 in the slot
  /// layout, 4 in the packed one: the kernels know it at compile time)
  template <int RowBytes>
  KOKKOS_INLINE_FUNCTION const std::uint8_t* cols_after(int slots) const {
    return blob + (single() ? 0 : blob_part(std::uint64_t(slots) * RowBytes));
  }
  /// The values or their table indices (B slots of K entries), after RowBytes as cols_after
  template <int RowBytes>
  KOKKOS_INLINE_FUNCTION const std::uint8_t* vals_after(int slots, int k) const {
    return cols_after<RowBytes>(slots) +
           blob_part(std::uint64_t(slots) * std::uint64_t(k * col_width()));
  }
  /// The column gaps' words (CooColumnGaps; chunks with CooChunkCode::col_gaps), after the
  /// values of `value_bytes` bytes each (1 for table indices), RowBytes as cols_after
  template <int RowBytes>
  KOKKOS_INLINE_FUNCTION const unsigned* gaps_after(int slots, int k, int value_bytes) const {
    return reinterpret_cast<const unsigned*>(
        vals_after<RowBytes>(slots, k) +
        blob_part(std::uint64_t(slots) * std::uint64_t(k) * std::uint64_t(value_bytes)));
  }
  KOKKOS_INLINE_FUNCTION bool gapped() const { return (code & CooChunkCode::col_gaps) != 0; }
  /// The column offsets, for either layout
  KOKKOS_INLINE_FUNCTION const std::uint8_t* cols(int slots) const {
    return packed() ? cols_after<4>(slots) : cols_after<1>(slots);
  }
  /// The column gaps' words, for either layout
  KOKKOS_INLINE_FUNCTION const unsigned* gaps(int slots, int k, int value_bytes) const {
    return packed() ? gaps_after<4>(slots, k, value_bytes) : gaps_after<1>(slots, k, value_bytes);
  }
  /// The values or their table indices, for either layout
  KOKKOS_INLINE_FUNCTION const std::uint8_t* vals(int slots, int k) const {
    return packed() ? vals_after<4>(slots, k) : vals_after<1>(slots, k);
  }
};

/// The arrays of a compressed COO matrix as the kernels read them.
template <class S, class O, class Device>
struct CompressedCooData {
  Kokkos::View<const std::uint8_t*, Device> codes;
  Kokkos::View<const O*, Device> base_row;
  Kokkos::View<const O*, Device> base_col;
  Kokkos::View<const std::uint64_t*, Device> offsets;  // n_chunks + 1
  Kokkos::View<const std::uint8_t*, Device> blob;
  Kokkos::View<const S*, Device, Kokkos::MemoryTraits<Kokkos::RandomAccess>> table;
  int slots = 256;  // B
  int k = 4;        // K
  std::int64_t n_chunks = 0;

  /// Chunk c's code, baselines and blob.
  KOKKOS_INLINE_FUNCTION CooChunkHead<O> head(std::int64_t c) const {
    CooChunkHead<O> h;
    h.code = codes(c);
    h.row0 = base_row(c);
    h.col0 = base_col(c);
    h.blob = blob.data() + offsets(c);
    return h;
  }

  /// The (first) row of slot s of chunk c.
  KOKKOS_INLINE_FUNCTION O slot_row(std::int64_t c, int s) const {
    const std::uint8_t code = codes(c);
    if (code & CooChunkCode::single_row) return base_row(c);
    if (code & CooChunkCode::packed) return O(base_row(c) + O(packed_first_row(packed_word(c, s))));
    return O(base_row(c) + O(blob(offsets(c) + std::uint64_t(s))));
  }

  /// The last row of slot s of chunk c (its only row in the slot layout).
  KOKKOS_INLINE_FUNCTION O slot_last_row(std::int64_t c, int s) const {
    const std::uint8_t code = codes(c);
    if (code & CooChunkCode::single_row) return base_row(c);
    if (code & CooChunkCode::packed) return O(base_row(c) + O(packed_last_row(packed_word(c, s))));
    return O(base_row(c) + O(blob(offsets(c) + std::uint64_t(s))));
  }

  /// The row word of slot s of a packed chunk c that is not a single row.
  KOKKOS_INLINE_FUNCTION unsigned packed_word(std::int64_t c, int s) const {
    return reinterpret_cast<const unsigned*>(blob.data() + offsets(c))[s];
  }

  /// Window w of windows of `wslots` slots (B / wslots per chunk).
  KOKKOS_INLINE_FUNCTION CooWindowInfo<O> window_info(std::int64_t w, int wslots) const {
    const int per_chunk = slots / wslots;
    const std::int64_t c = w / per_chunk;
    const int s0 = int(w - c * per_chunk) * wslots;
    const int s1 = s0 + wslots - 1;
    const std::uint8_t code = codes(c);
    CooWindowInfo<O> info;
    info.first_row = slot_row(c, s0);
    info.last_row = slot_last_row(c, s1);
    info.first_continues = s0 > 0 ? slot_last_row(c, s0 - 1) == info.first_row
                                  : (code & CooChunkCode::first_continues) != 0;
    info.last_continues = s1 < slots - 1 ? slot_row(c, s1 + 1) == info.last_row
                                         : (code & CooChunkCode::last_continues) != 0;
    return info;
  }
};

/// Window information of compressed COO windows, for coo_window_fixup.
template <class S, class O, class Device>
struct CompressedCooWindows {
  CompressedCooData<S, O, Device> a;
  int wslots;
  KOKKOS_INLINE_FUNCTION CooWindowInfo<O> operator()(std::int64_t w) const {
    return a.window_info(w, wslots);
  }
};

/// The launch policy of the compressed COO kernel whose lanes load SL slots together
/// (slots_per_load): teams of at most 256 threads, registers bounded so that three such teams
/// fit an SM (85 per thread) for one slot at a time, two (128) for more. The kernel keeps the
/// next group's row and column offsets and table indices in registers; under the COO kernels'
/// bound of four teams (64 registers) it spills: 10-15% slower before the indices were loaded
/// ahead, 15-85% after (H100, docs/PERFORMANCE.md).
template <class ExecSpace, int SL>
using CompressedCooPolicy =
    Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<256, (SL == 1 ? 3 : 2)>>;

/// The still-encoded row offset (the packed layout's row word), K column offsets (K words hold the widest, 32-bit, offsets)
/// and, in a chunk of table-coded values, K table indices of a slot, as loaded: kept in
/// registers while the slots before it are multiplied.
/// With G, also the chunk's column gaps (CooColumnGaps' three words; loaded only in chunks that
/// have them, by kernels that take one slot at a time).
template <int K, bool G>
struct CooRawSlot {
  unsigned row = 0;
  unsigned words[K];
  unsigned idx[(K + 3) / 4] = {};
  unsigned gaps[G ? 3 : 1] = {};
};

/// Loads NB bytes at p (aligned to the widest load used) into words.
template <class Warp, int NB, int NW>
KOKKOS_INLINE_FUNCTION void load_bytes(const std::uint8_t* p, unsigned (&words)[NW]) {
  static_assert(NB <= 4 * NW, "spk: too many bytes for the words");
  if constexpr (NB % 4 == 0) {
    Warp::template stream<NB / 4>(reinterpret_cast<const unsigned*>(p),
                                *reinterpret_cast<unsigned(*)[NB / 4]>(&words[0]));
  } else if constexpr (NB == 2) {
    words[0] = *reinterpret_cast<const std::uint16_t*>(p);
  } else {
    words[0] = p[0];
  }
}

/// K column offsets of width T from the words, plus the baseline.
template <int K, class T, class O>
KOKKOS_INLINE_FUNCTION void decode_columns(const unsigned (&words)[K], O base, O (&col)[K]) {
  T off[K];
  std::memcpy(static_cast<void*>(off), static_cast<const void*>(words), sizeof(off));
  for (int j = 0; j < K; ++j) col[j] = O(base + O(off[j]));
}

/// As decode_columns, for offsets with the chunk's column gaps left out.
template <int K, class T, class O>
KOKKOS_INLINE_FUNCTION void decode_columns(const unsigned (&words)[K], O base,
                                           const CooColumnGaps& g, O (&col)[K]) {
  T off[K];
  std::memcpy(static_cast<void*>(off), static_cast<const void*>(words), sizeof(off));
  for (int j = 0; j < K; ++j) col[j] = O(base + O(g.apply(unsigned(off[j]))));
}

/// SpMV over windows of `wslots` slots: on CUDA a warp's window is 32 * lane_slots slots, each
/// lane taking lane_slots consecutive ones, SL at a time (their loads issued together); on CPU
/// backends one thread takes a whole chunk (lane_slots = B, SL = 1). A team takes
/// `chunks_per_team` consecutive chunks, one window of each per warp, and loads a chunk's
/// head and its lanes' first row and column offsets and table indices while it multiplies the
/// chunk before, so that a chunk waits on one round of loads (table look-ups or values, and x)
/// instead of three (head; offsets and indices; look-ups, x). Packed: the chunks use the packed
/// layout (a slot's entries may start new rows; see the file comment).
template <class S, class O, class Device, class XView, class YView, int K, int SL, bool Trans,
          CooAccumulate Acc, bool Packed>
struct CompressedCooSpmv {
  using exec = typename Device::execution_space;
  using member = typename CompressedCooPolicy<exec, SL>::member_type;
  using warp = Warp<exec>;
  using traits = scalar_traits<S>;
  static constexpr int row_bytes = Packed ? 4 : 1;  // bytes of rows per slot in the blob
  // chunks with column gaps are read by the kernels of one slot at a time (resolve_params)
  static constexpr bool gaps = SL == 1;
  using raw_slot = CooRawSlot<K, gaps>;

  CompressedCooData<S, O, Device> a;
  random_access_t<XView> x;
  CooOutput<S, O, YView, Device, Acc> out;
  bool conj;  // op = H
  int wslots;
  int lane_slots;
  int chunks_per_team;

  /// Issues the loads of slot s's row and column offsets and, in a chunk of table-coded values,
  /// its table indices (nothing waits on them here).
  KOKKOS_INLINE_FUNCTION void load_slot(const CooChunkHead<O>& h, int s,
                                        raw_slot& raw) const {
    if (!h.single())
      raw.row = Packed ? reinterpret_cast<const unsigned*>(h.blob)[s] : unsigned(h.blob[s]);
    if (h.code & CooChunkCode::table)
      load_bytes<warp, K>(h.template vals_after<row_bytes>(a.slots, K) + std::size_t(s) * K,
                          raw.idx);
    const int cw = h.col_width();
    const std::uint8_t* cp =
        h.template cols_after<row_bytes>(a.slots) + std::size_t(s) * K * std::size_t(cw);
    // the plain widths tested first, so that chunks without gaps branch as before
    const int key = h.code & (CooChunkCode::col_width_mask | CooChunkCode::col_gaps);
    if (key == 0)
      load_bytes<warp, K>(cp, raw.words);
    else if (key == 1)
      load_bytes<warp, 2 * K>(cp, raw.words);
    else if (!gaps || key == 2)
      load_bytes<warp, 4 * K>(cp, raw.words);
    else if constexpr (gaps) {  // 8- or 16-bit offsets (gaps are kept where they narrow them)
      if (key == CooChunkCode::col_gaps)
        load_bytes<warp, K>(cp, raw.words);
      else
        load_bytes<warp, 2 * K>(cp, raw.words);
      warp::template load<3>(
          h.template gaps_after<row_bytes>(a.slots, K,
                                           (h.code & CooChunkCode::table) ? 1 : int(sizeof(S))),
          raw.gaps);
    }
  }

  /// Slot's (first) row r, its columns and, packed, the bits of the entries that start a row.
  KOKKOS_INLINE_FUNCTION void decode_slot(const CooChunkHead<O>& h, const raw_slot& raw,
                                          O& r, unsigned& starts, O (&col)[K]) const {
    starts = 0;
    if (h.single())
      r = h.row0;
    else if (Packed) {
      r = O(h.row0 + O(packed_first_row(raw.row)));
      starts = raw.row >> 24;
    } else
      r = O(h.row0 + O(raw.row));
    const int key = h.code & (CooChunkCode::col_width_mask | CooChunkCode::col_gaps);
    if (key == 0)
      decode_columns<K, std::uint8_t>(raw.words, h.col0, col);
    else if (key == 1)
      decode_columns<K, std::uint16_t>(raw.words, h.col0, col);
    else if (!gaps || key == 2)
      decode_columns<K, std::uint32_t>(raw.words, h.col0, col);
    else if constexpr (gaps) {
      const CooColumnGaps g = CooColumnGaps::from_words(raw.gaps);
      if (key == CooChunkCode::col_gaps)
        decode_columns<K, std::uint8_t>(raw.words, h.col0, g, col);
      else
        decode_columns<K, std::uint16_t>(raw.words, h.col0, g, col);
    }
  }

  /// Slot s's values: looked up in the table (indices loaded with the offsets) or loaded.
  KOKKOS_INLINE_FUNCTION void load_values(const CooChunkHead<O>& h, const raw_slot& raw,
                                          int s, S (&v)[K]) const {
    if (h.code & CooChunkCode::table) {
      std::uint8_t idx[K];
      std::memcpy(static_cast<void*>(idx), static_cast<const void*>(raw.idx), sizeof(idx));
      for (int j = 0; j < K; ++j) v[j] = a.table(idx[j]);
    } else {
      warp::template stream<K>(
          reinterpret_cast<const S*>(h.template vals_after<row_bytes>(a.slots, K)) +
              std::size_t(s) * K,
          v);
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const int per_chunk = a.slots / wslots;
    const int wr = team.team_rank();  // the window of each chunk
    const std::int64_t c0 = std::int64_t(team.league_rank()) * chunks_per_team;
    const std::int64_t c1 =
        c0 + chunks_per_team < a.n_chunks ? c0 + chunks_per_team : a.n_chunks;
    const int lane = warp::lane();
    const int s0 = wr * wslots;
    const int first = s0 + lane * lane_slots;
    CooChunkHead<O> h = a.head(c0);
    raw_slot pre[SL];  // the lane's first SL slots of chunk c
    for (int q = 0; q < SL; ++q) load_slot(h, first + q, pre[q]);
    for (std::int64_t c = c0; c < c1; ++c) {
      const CooChunkHead<O> cur = h;
      const bool more = c + 1 < c1;
      if (more) h = a.head(c + 1);
      chunk(cur, c * per_chunk + wr, s0, first, pre, more, h);
    }
  }

  /// Window w (slots s0 ... s0 + wslots - 1) of the chunk with head h. The lane takes its
  /// lane_slots slots SL at a time; `raw` holds the offsets of the first SL, and each group
  /// loads the next group's (or, at the end, the next chunk's first when `more`) while its
  /// values and x are on their way.
  KOKKOS_INLINE_FUNCTION void chunk(const CooChunkHead<O>& h, std::int64_t w, int s0, int first,
                                    raw_slot (&raw)[SL], bool more,
                                    const CooChunkHead<O>& next) const {
    const bool single = h.single();
    const int lane = warp::lane();
    const int last_lane = warp::size - 1;
    const bool before = s0 > 0, after = s0 + wslots < a.slots;
    // the neighbouring slots' row offsets, for the window's ends (loaded early)
    unsigned off_before = 0, off_after = 0;
    if (!Trans && !single) {
      if (Packed) {
        const unsigned* words = reinterpret_cast<const unsigned*>(h.blob);
        if (lane == 0 && before) off_before = packed_last_row(words[s0 - 1]);
        if (lane == last_lane && after) off_after = packed_first_row(words[s0 + wslots]);
      } else {
        if (lane == 0 && before) off_before = h.blob[s0 - 1];
        if (lane == last_lane && after) off_after = h.blob[s0 + wslots];
      }
    }
    CooLaneRows<O, S> lane_rows;
    const auto complete = [&](O r, const S& s) { out.complete(r, s); };
    O lane_first = h.row0, lane_last = h.row0;
    for (int i0 = 0; i0 < lane_slots; i0 += SL) {
      O r[SL];
      unsigned starts[SL];
      O col[SL][K];
      S v[SL][K];
      for (int q = 0; q < SL; ++q) {
        load_values(h, raw[q], first + i0 + q, v[q]);
        decode_slot(h, raw[q], r[q], starts[q], col[q]);
      }
      S xv[SL][K];
      for (int q = 0; q < SL; ++q)
        for (int j = 0; j < K; ++j) xv[q][j] = Trans ? traits::zero() : S(x(col[q][j]));
      // the next group's offsets, while this group's values and x arrive: this chunk's next
      // SL slots, or the next chunk's first
      if (i0 + SL < lane_slots)
        for (int q = 0; q < SL; ++q) load_slot(h, first + i0 + SL + q, raw[q]);
      else if (more)
        for (int q = 0; q < SL; ++q) load_slot(next, first + q, raw[q]);
      if (i0 == 0) lane_first = r[0];
      lane_last = Packed ? O(r[SL - 1] + O(popcount32(starts[SL - 1]))) : r[SL - 1];
      for (int q = 0; q < SL; ++q) {
        if (Trans) {
          O row = r[q];
          S xr = out.alpha * x(row);
          for (int j = 0; j < K; ++j) {
            if (Packed && ((starts[q] >> j) & 1u)) xr = out.alpha * x(++row);
            atomic_add_value(&out.y(col[q][j]), (conj ? traits::conj(v[q][j]) : v[q][j]) * xr);
          }
        } else if (Packed) {
          // the slot's first row (entries before the first start), the rows inside it (rare:
          // a row shorter than the slot) and its last row (from the last start on), summed
          // by predicates on compile-time masks rather than by a branch per entry, which
          // diverged since lanes start rows at different entries (2-6% slower on the H100,
          // docs/PERFORMANCE.md)
          const unsigned st = starts[q];
          S first_sum = traits::zero(), last_sum = traits::zero();
          for (int j = 0; j < K; ++j) {
            const S p = v[q][j] * xv[q][j];
            if ((st & ((2u << j) - 1u)) == 0u) first_sum += p;  // no start up to j
            if ((st >> (j + 1)) == 0u) last_sum += p;           // no start after j
          }
          lane_rows.push(r[q], first_sum, complete);
          if (st != 0u) {
            O row = r[q];
            for (unsigned rest = st; (rest & (rest - 1u)) != 0u; rest &= rest - 1u) {
              const unsigned later = rest & (rest - 1u);
              const unsigned from = rest & (0u - rest), to = later & (0u - later);  // lowest bits
              S s = traits::zero();
              for (int j = 0; j < K; ++j)
                if ((1u << j) >= from && (1u << j) < to) s += v[q][j] * xv[q][j];
              lane_rows.push(++row, s, complete);
            }
            lane_rows.push(O(row + 1), last_sum, complete);
          }
        } else {
          S sum = v[q][0] * xv[q][0];
          for (int j = 1; j < K; ++j) sum += v[q][j] * xv[q][j];
          lane_rows.push(r[q], sum, complete);
        }
      }
    }
    if (Trans) return;
    // the window's neighbours, from the lanes' rows and one byte on each side
    CooWindowInfo<O> info;
    info.first_row = warp::shfl(lane_first, 0);
    info.last_row = warp::shfl(lane_last, last_lane);
    if (single) {
      info.first_continues = before || (h.code & CooChunkCode::first_continues) != 0;
      info.last_continues = after || (h.code & CooChunkCode::last_continues) != 0;
    } else {
      int f = 0, l = 0;
      if (lane == 0)
        f = before ? O(h.row0 + O(off_before)) == lane_first
                   : (h.code & CooChunkCode::first_continues) != 0;
      if (lane == last_lane)
        l = after ? O(h.row0 + O(off_after)) == lane_last
                  : (h.code & CooChunkCode::last_continues) != 0;
      info.first_continues = warp::shfl(f, 0) != 0;
      info.last_continues = warp::shfl(l, last_lane) != 0;
    }
    coo_close_window<warp, Packed>(lane_rows, info, w, single, out);
  }
};

}  // namespace impl
}  // namespace spk
