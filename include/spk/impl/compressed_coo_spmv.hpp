// spk/impl/compressed_coo_spmv.hpp: the chunk layout of the compressed COO format and its SpMV
// kernel.
//
// A chunk is B slots of K entries; a slot holds K consecutive entries of one row (a row is padded
// with zero entries to whole slots, an empty row gets one slot of zeros), so a chunk covers at
// most B consecutive rows. Per chunk: a 1-byte code (CooChunkCode), a baseline row (the chunk's
// first row) and column (its smallest column), and the byte offset of its blob. The blob holds,
// each part starting on a 16-byte boundary: the B slots' row offsets from the baseline row (8 bits;
// absent when the chunk lies in one row), the B * K column offsets from the baseline column in 8,
// 16 or 32 bits, and the B * K values, either raw or as 8-bit indices into the matrix's table of
// (at most) 256 values.
//
// SpMV: on CUDA a team of warps takes a chunk, each warp a window of 32 * S consecutive slots
// and each lane S consecutive slots (S = slots per lane: the K column offsets and the K values of
// a slot are one load each, and a lane issues the loads of its S slots together); on CPU
// backends one thread takes a whole chunk. Rows are combined as described in coo_spmv.hpp (a
// chunk in one row skips the row keys).
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstring>

#include <spk/impl/coo_spmv.hpp>
#include <spk/impl/csr_spmv.hpp>
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
};

/// Bytes of a blob part of n bytes, rounded up to 16 (every part starts 16-byte aligned).
KOKKOS_INLINE_FUNCTION std::uint64_t blob_part(std::uint64_t n) { return (n + 15) / 16 * 16; }

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

  /// The row of slot s of chunk c.
  KOKKOS_INLINE_FUNCTION O slot_row(std::int64_t c, int s) const {
    if (codes(c) & CooChunkCode::single_row) return base_row(c);
    return O(base_row(c) + O(blob(offsets(c) + std::uint64_t(s))));
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
    info.last_row = slot_row(c, s1);
    info.first_continues = s0 > 0 ? slot_row(c, s0 - 1) == info.first_row
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

/// K column offsets of width T at p (aligned to K * sizeof(T) or 16) plus the baseline.
template <class Warp, int K, class T, class O>
KOKKOS_INLINE_FUNCTION void load_columns(const std::uint8_t* p, O base, O (&col)[K]) {
  T off[K];
  Warp::template load<K>(reinterpret_cast<const T*>(p), off);
  for (int j = 0; j < K; ++j) col[j] = O(base + O(off[j]));
}

/// SpMV over windows of `wslots` slots: on CUDA a warp's window is 32 * lane_slots slots, each
/// lane taking lane_slots consecutive ones, SL at a time (their loads issued together); on CPU
/// backends one thread takes a whole chunk (lane_slots = B, SL = 1).
template <class S, class O, class Device, class XView, class YView, int K, int SL, bool Trans,
          CooAccumulate Acc>
struct CompressedCooSpmv {
  using exec = typename Device::execution_space;
  using member = typename CooTeamPolicy<exec>::member_type;
  using warp = Warp<exec>;
  using traits = scalar_traits<S>;

  CompressedCooData<S, O, Device> a;
  random_access_t<XView> x;
  CooOutput<S, O, YView, Device, Acc> out;
  bool conj;  // op = H
  int wslots;
  int lane_slots;
  std::int64_t nwindows;

  KOKKOS_INLINE_FUNCTION void operator()(const member& team) const {
    const std::int64_t w = std::int64_t(team.league_rank()) * team.team_size() + team.team_rank();
    if (w >= nwindows) return;  // the same for every lane of a warp
    const int per_chunk = a.slots / wslots;
    const std::int64_t c = w / per_chunk;
    const std::uint8_t code = a.codes(c);
    const bool single = (code & CooChunkCode::single_row) != 0;
    const int cw = 1 << (code & CooChunkCode::col_width_mask);
    const std::uint8_t* blob = a.blob.data() + a.offsets(c);
    const std::uint8_t* row_off = blob;
    const std::uint8_t* cols = blob + (single ? 0 : blob_part(std::uint64_t(a.slots)));
    const std::uint8_t* vals = cols + blob_part(std::uint64_t(a.slots) * K * std::uint64_t(cw));
    const bool tabled = (code & CooChunkCode::table) != 0;
    const O row0 = a.base_row(c), col0 = a.base_col(c);
    const int lane = warp::lane();
    const int s0 = int(w - c * per_chunk) * wslots;
    const int first = s0 + lane * lane_slots;
    CooLaneRows<O, S> lane_rows;
    const auto complete = [&](O r, const S& s) { out.complete(r, s); };
    O lane_first = row0, lane_last = row0;
    for (int i0 = 0; i0 < lane_slots; i0 += SL) {
      O r[SL];
      O col[SL][K];
      S v[SL][K];
      for (int q = 0; q < SL; ++q) {
        const int s = first + i0 + q;
        r[q] = single ? row0 : O(row0 + O(row_off[s]));
        const std::uint8_t* cp = cols + std::size_t(s) * K * std::size_t(cw);
        if (cw == 1)
          load_columns<warp, K, std::uint8_t>(cp, col0, col[q]);
        else if (cw == 2)
          load_columns<warp, K, std::uint16_t>(cp, col0, col[q]);
        else
          load_columns<warp, K, std::uint32_t>(cp, col0, col[q]);
        if (tabled) {
          std::uint8_t idx[K];
          warp::template load<K>(vals + std::size_t(s) * K, idx);
          for (int j = 0; j < K; ++j) v[q][j] = a.table(idx[j]);
        } else {
          warp::template load<K>(reinterpret_cast<const S*>(vals) + std::size_t(s) * K, v[q]);
        }
      }
      if (i0 == 0) lane_first = r[0];
      lane_last = r[SL - 1];
      for (int q = 0; q < SL; ++q) {
        if (Trans) {
          const S xr = out.alpha * x(r[q]);
          for (int j = 0; j < K; ++j)
            atomic_add_value(&out.y(col[q][j]), (conj ? traits::conj(v[q][j]) : v[q][j]) * xr);
        } else {
          S sum = v[q][0] * x(col[q][0]);
          for (int j = 1; j < K; ++j) sum += v[q][j] * x(col[q][j]);
          lane_rows.push(r[q], sum, complete);
        }
      }
    }
    if (Trans) return;
    // the window's neighbours, from the lanes' rows and one byte on each side
    CooWindowInfo<O> info;
    const int last_lane = warp::size - 1;
    info.first_row = warp::shfl(lane_first, 0);
    info.last_row = warp::shfl(lane_last, last_lane);
    const bool before = s0 > 0, after = s0 + wslots < a.slots;
    if (single) {
      info.first_continues = before || (code & CooChunkCode::first_continues) != 0;
      info.last_continues = after || (code & CooChunkCode::last_continues) != 0;
    } else {
      int fc = 0, lc = 0;
      if (lane == 0)
        fc = before ? O(row0 + O(row_off[s0 - 1])) == lane_first
                    : (code & CooChunkCode::first_continues) != 0;
      if (lane == last_lane)
        lc = after ? O(row0 + O(row_off[s0 + wslots])) == lane_last
                   : (code & CooChunkCode::last_continues) != 0;
      info.first_continues = warp::shfl(fc, 0) != 0;
      info.last_continues = warp::shfl(lc, last_lane) != 0;
    }
    coo_close_window<warp>(lane_rows, info, w, single, out);
  }
};

}  // namespace impl
}  // namespace spk
