// spk/formats/hll.hpp: hacked ELLPACK (HLL, Barbieri et al. 2015; sliced ELL): rows in groups
// ("hacks") of hack_size rows, each hack stored ELL-style (column-major) with its own width, so
// one long row pads only its own hack. A hack's width is capped: it is the length of the hack's
// K-th longest row (K = ceil(min_column_fill * hack_size)), at most a width cap, and the entries
// of the longer rows beyond it go to a CSR-like tail cut into segments of at most tail_segment
// entries, so a single long row neither pads its hack nor holds one thread for its whole length
// in SpMV. Rows may be sorted by length first (globally or within windows, or automatically when
// that pays for its permutation), with the permutation applied inside the kernel.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/formats/padding_limit.hpp>
#include <spk/impl/ell_spmv.hpp>
#include <spk/impl/format_common.hpp>
#include <spk/impl/format_convert.hpp>
#include <spk/impl/hll_spmv.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/radix_sort.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {

/// Order of the rows in an HLL matrix.
enum class HllSort {
  none,      ///< the matrix's order (no permutation stored)
  global,    ///< all rows by decreasing length (stable): long rows share hacks (JAD-like)
  window,    ///< by decreasing length within windows of sort_window rows (x locality kept)
  automatic  ///< window when sorting pays (see HllOptions::auto_sort_padding), else none
             ///< (regular matrices keep the unpermuted layout and store no permutation)
};

inline const char* to_string(HllSort s) {
  return s == HllSort::none     ? "none"
         : s == HllSort::global ? "global"
         : s == HllSort::window ? "window"
                                : "automatic";
}

/// Options of the conversion CSR -> HLL.
struct HllOptions {
  int hack_size = 32;  ///< rows per hack: 16 or a positive multiple of 32 (a warp)
  HllSort sort = HllSort::automatic;
  int sort_window = 0;  ///< HllSort::window / automatic: rows per window, a multiple of
                        ///< hack_size; 0 = 32 hacks
  /// HllSort::automatic considers sorting within windows when the unsorted layout holds more
  /// than this many value slots per stored entry in the matrix's rows (a tail entry counting as
  /// hack_size / K slots, the weight of the width rule, see min_column_fill; the last hack's
  /// missing rows, which sorting cannot remove, not counted), and sorts when the sorted layout's
  /// bytes, its permutation included and the tail's bytes weighted the same way, are fewer.
  double auto_sort_padding = 1.05;
  /// true: cap every hack's width (min_column_fill, max_hack_width) and store the rows' further
  /// entries in the tail. false: pad every hack to its longest row and store no tail (the layout
  /// before the tail existed, kept for comparison).
  bool tail = true;
  /// With a tail: column k of a hack (its rows' k-th entries) is stored in the hack when at
  /// least K = ceil(min_column_fill * rows) of the hack's rows have a k-th entry (rows =
  /// hack_size, fewer in a partial last hack), so the hack's width is the length of its K-th
  /// longest row. Padding column k costs hack_size slots, moving its entries to the tail costs
  /// their number of entries, each about as many bytes as a slot; the rule keeps a column while
  /// hack_size slots cost at most hack_size / K times its entries, that factor standing for the
  /// tail's extra SpMV work (segments, atomics). In (0, 1]; 1 / hack_size keeps every hack at
  /// its longest row, so only max_hack_width sends entries to the tail.
  double min_column_fill = 0.25;
  /// With a tail: no hack is wider than this (a bound on the padded-row kernel's work per row);
  /// 0 = choose: max(64, 4 * the mean width given by min_column_fill, rounded up).
  int max_hack_width = 0;
  /// With a tail: most entries per tail segment, the unit of work of SpMV's tail kernel (>= 1).
  int tail_segment = 256;
  /// With a tail: keep it only when it saves more than this fraction of the bytes of the
  /// layout without one (every hack padded to its longest row, same order); else store none
  /// (SpMV then runs one kernel less: on near-regular matrices a few short tails are not worth
  /// a launch). >= 0.
  double min_tail_saving = 0.01;
  /// With a tail: when the layout whose tail holds only the entries past the width cap (each
  /// hack as wide as its longest row, at most the cap: min_column_fill = 1 / hack_size) takes
  /// at most this factor of the bytes of the min_column_fill layout, it is used instead: a few
  /// percent of padding cost less than the tail kernel's segments and atomics (H200, double:
  /// bcsstk38 x 64 +2.0% bytes, 0.1071 ms against 0.1126; the circuit-like matrix +0.8%, 0.2991
  /// against 0.3104; R-MAT's capped layout is 4x larger and stays off). >= 1; 1 = never.
  double cap_only_padding = 1.05;
  PaddingLimit limit;  ///< the conversion throws PaddingLimitExceeded above it
};

namespace impl {

/// The arrays of an HLL matrix (see HllMatrix).
template <class S, class O, class F, class D>
struct HllArrays {
  Kokkos::View<S*, D> values;
  Kokkos::View<O*, D> col_idx;
  Kokkos::View<F*, D> hack_offsets;
  Kokkos::View<O*, D> row_len;  // by position, the padded part's length
  Kokkos::View<O*, D> perm;     // position -> row; empty when not sorted
  Kokkos::View<S*, D> tail_values;
  Kokkos::View<O*, D> tail_cols;
  Kokkos::View<O*, D> tail_pos;      // per segment: its row position
  Kokkos::View<F*, D> tail_offsets;  // per segment: its first entry; n_segments + 1 or empty
  int hack_size = 32;
  std::int64_t max_width = 0;
  std::int64_t width_cap = 0;    // 0 without a tail
  HllSort sort = HllSort::none;  // as applied: none, global or window
  std::int64_t sort_window = 0;  // rows per window when sort == window, else 0
};

/// Throws std::invalid_argument unless the options are valid; returns the window (rows) of
/// HllSort::window and automatic (0 otherwise).
inline std::int64_t check_hll_options(const HllOptions& o, const char* where) {
  require(o.hack_size == 16 || (o.hack_size > 0 && o.hack_size % 32 == 0), where,
          "hack_size = ", o.hack_size, " must be 16 or a positive multiple of 32");
  check_limit_options(where, o.limit);
  require(o.auto_sort_padding >= 1.0, where, "auto_sort_padding = ", o.auto_sort_padding,
          " must be >= 1");
  require(o.min_column_fill > 0.0 && o.min_column_fill <= 1.0, where,
          "min_column_fill = ", o.min_column_fill, " must be in (0, 1]");
  require(o.max_hack_width >= 0, where, "max_hack_width = ", o.max_hack_width,
          " must be >= 0 (0 = choose)");
  require(o.tail_segment > 0, where, "tail_segment = ", o.tail_segment, " must be > 0");
  require(o.min_tail_saving >= 0 && std::isfinite(o.min_tail_saving), where,
          "min_tail_saving = ", o.min_tail_saving, " must be >= 0 and finite");
  require(o.cap_only_padding >= 1.0 && std::isfinite(o.cap_only_padding), where,
          "cap_only_padding = ", o.cap_only_padding, " must be >= 1 and finite");
  if (o.sort != HllSort::window && o.sort != HllSort::automatic) return 0;
  require(o.sort_window >= 0 && o.sort_window % o.hack_size == 0, where,
          "sort_window = ", o.sort_window, " must be 0 (choose) or a positive multiple of ",
          "hack_size = ", o.hack_size);
  return o.sort_window > 0 ? o.sort_window : 32 * std::int64_t(o.hack_size);
}

/// K of HllOptions::min_column_fill for a hack of `rows` rows: ceil(min_column_fill * rows),
/// in [1, rows] (1 for no rows).
inline std::int64_t hll_fill_rows(const HllOptions& o, std::int64_t rows) {
  const double k = std::ceil(o.min_column_fill * double(rows) - 1e-9);
  return std::min<std::int64_t>(std::max<std::int64_t>(rows, 1),
                                std::max<std::int64_t>(1, std::int64_t(k)));
}

/// The shape of an HLL layout of given row lengths (by position): each hack's width and the
/// totals that its memory and the automatic sort depend on.
template <class D>
struct HllLayout {
  Kokkos::View<std::int64_t*, D> widths;  // per hack
  std::int64_t slots = 0;                 // padded entries: sum of width * hack_size
  std::int64_t row_slots = 0;  // the slots of the real rows (the last hack's missing rows not)
  std::int64_t tail = 0;       // tail entries
  std::int64_t segments = 0;   // tail segments
  std::int64_t max_width = 0;
  std::int64_t cap = 0;  // width cap; 0 without a tail
};

/// The layout of the row lengths `len` (by position) in hacks of hs rows under the options `o`:
/// without a tail each hack's width is its longest row; with a tail the length of its K-th
/// longest (K = hll_fill_rows(o, its rows)), found by a binary search over widths counting the
/// hack's longer rows, then capped. One thread per hack, then reductions over positions. O(nrows *
/// log(longest row)) work.
template <class ExecSpace, class O, class D>
HllLayout<D> hll_layout(const Kokkos::View<O*, D>& len, const std::int64_t hs,
                        const HllOptions& o) {
  HllLayout<D> l;
  const std::int64_t nrows = std::int64_t(len.extent(0));
  const std::int64_t n_hacks = (nrows + hs - 1) / hs;
  l.widths = Kokkos::View<std::int64_t*, D>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::widths"), std::size_t(n_hacks));
  if (n_hacks == 0) return l;
  const auto w = l.widths;
  const bool tail = o.tail;
  const std::int64_t k_full = hll_fill_rows(o, hs);
  const std::int64_t k_last = hll_fill_rows(o, nrows - (n_hacks - 1) * hs);
  Kokkos::parallel_for(
      "spk::hll::widths", Range64<ExecSpace>(0, n_hacks), KOKKOS_LAMBDA(const std::int64_t h) {
        const std::int64_t b = h * hs;
        const std::int64_t e = b + hs < nrows ? b + hs : nrows;
        std::int64_t hi = 0;
        for (std::int64_t p = b; p < e; ++p)
          hi = std::int64_t(len(p)) > hi ? std::int64_t(len(p)) : hi;
        if (tail) {  // the smallest width that fewer than k rows of the hack exceed
          const std::int64_t k = h == n_hacks - 1 ? k_last : k_full;
          std::int64_t lo = 0;
          while (lo < hi) {
            const std::int64_t mid = lo + (hi - lo) / 2;
            std::int64_t longer = 0;
            for (std::int64_t p = b; p < e; ++p) longer += std::int64_t(len(p)) > mid ? 1 : 0;
            if (longer < k)
              hi = mid;
            else
              lo = mid + 1;
          }
        }
        w(h) = hi;
      });
  if (tail) {
    const std::int64_t sum = sum_entries<ExecSpace>(w);
    l.cap = o.max_hack_width > 0 ? std::int64_t(o.max_hack_width)
                                 : std::max<std::int64_t>(64, 4 * ((sum + n_hacks - 1) / n_hacks));
    const std::int64_t cap = l.cap;
    Kokkos::parallel_for(
        "spk::hll::cap_widths", Range64<ExecSpace>(0, n_hacks),
        KOKKOS_LAMBDA(const std::int64_t h) { w(h) = w(h) < cap ? w(h) : cap; });
    const std::int64_t seg = o.tail_segment;
    Kokkos::parallel_reduce(
        "spk::hll::tail_entries", Range64<ExecSpace>(0, nrows),
        KOKKOS_LAMBDA(const std::int64_t p, std::int64_t& acc) {
          const std::int64_t t = std::int64_t(len(p)) - w(p / hs);
          acc += t > 0 ? t : 0;
        },
        l.tail);
    Kokkos::parallel_reduce(
        "spk::hll::tail_segments", Range64<ExecSpace>(0, nrows),
        KOKKOS_LAMBDA(const std::int64_t p, std::int64_t& acc) {
          const std::int64_t t = std::int64_t(len(p)) - w(p / hs);
          acc += t > 0 ? (t + seg - 1) / seg : 0;
        },
        l.segments);
  }
  l.slots = sum_entries<ExecSpace>(w) * hs;
  l.max_width = max_entry<ExecSpace>(w);
  std::int64_t last_width = 0;
  Kokkos::deep_copy(last_width, Kokkos::subview(w, n_hacks - 1));
  l.row_slots = l.slots - last_width * (n_hacks * hs - nrows);
  return l;
}

/// The permutation (position -> row) of a stable radix sort of the rows by decreasing length,
/// within windows of `window` rows (0 = all rows), and the lengths by position into `sorted`.
template <class ExecSpace, class O, class D>
Kokkos::View<O*, D> hll_sort_rows(const Kokkos::View<O*, D>& lens, const std::int64_t window,
                                  const std::int64_t max_len, Kokkos::View<O*, D>& sorted) {
  const std::int64_t nrows = std::int64_t(lens.extent(0));
  Kokkos::View<std::int64_t*, D> keys(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::keys"), std::size_t(nrows));
  Kokkos::View<O*, D> perm(Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::perm"),
                           std::size_t(nrows));
  const std::int64_t span = max_len + 1;
  Kokkos::parallel_for(
      "spk::hll::sort_keys", Range64<ExecSpace>(0, nrows), KOKKOS_LAMBDA(const std::int64_t i) {
        keys(i) = (window > 0 ? (i / window) * span : 0) + (max_len - std::int64_t(lens(i)));
        perm(i) = O(i);
      });
  const std::int64_t max_key =
      (window > 0 && nrows > 0 ? (nrows - 1) / window * span : 0) + max_len;
  stable_radix_sort<ExecSpace>(keys, perm, bit_width(std::uint64_t(max_key)), RadixSortParams{});
  sorted = Kokkos::View<O*, D>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::len"),
                               std::size_t(nrows));
  const auto out = sorted;
  Kokkos::parallel_for(
      "spk::hll::permute_lengths", Range64<ExecSpace>(0, nrows),
      KOKKOS_LAMBDA(const std::int64_t p) { out(p) = lens(perm(p)); });
  return perm;
}

/// The number of entries of position p's row beyond its hack's width (0 if none).
template <class O, class F, class D>
struct HllTailLength {
  Kokkos::View<const F*, D> row_map;
  Kokkos::View<const O*, D> perm;
  Kokkos::View<const std::int64_t*, D> widths;
  std::int64_t hack_size;
  bool permuted;

  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t p) const {
    const O i = permuted ? perm(p) : O(p);
    const std::int64_t t = std::int64_t(row_map(i + 1) - row_map(i)) - widths(p / hack_size);
    return t > 0 ? t : 0;
  }
};

/// HLL arrays of `a`, built on its device: row lengths; the permutation (HllSort::global or
/// window, or for automatic when it pays, see HllOptions::auto_sort_padding); the layout (each
/// hack's width, see hll_layout; the tail past the width cap only when that costs little
/// padding, HllOptions::cap_only_padding; without the tail when it does not save
/// HllOptions::min_tail_saving) and the exclusive scan of width * hack_size into hack_offsets;
/// the fill of the hacks, one thread per position, padding with the row's last stored column
/// (column 0 for empty and padding rows) and zero values; then the tail: per position its
/// entries beyond its hack's width and their segments (scans over positions), copied one
/// thread per segment. Throws PaddingLimitExceeded before allocating the padded arrays.
/// O(nrows * (passes + log(longest row)) + padded entries + tail entries) work.
template <class S, class O, class F, class D>
HllArrays<S, O, F, typename CsrMatrix<S, O, F, D>::device_type> csr_to_hll(
    const CsrMatrix<S, O, F, D>& a, const HllOptions& opt) {
  using dev = typename CsrMatrix<S, O, F, D>::device_type;
  using exec = typename dev::execution_space;
  const char* where = "spk::HllMatrix";
  const std::int64_t window = check_hll_options(opt, where);
  HllArrays<S, O, F, dev> r;
  r.hack_size = opt.hack_size;
  const O nrows = a.nrows();
  const std::int64_t hs = opt.hack_size;
  const auto lens = row_lengths(a);
  const std::int64_t max_len = max_entry<exec>(lens);

  // Bytes of a layout, the tail's weighted by `weight` (the width rule's factor for choices
  // that trade padding for tail, see HllOptions; 1 for the memory).
  const double tail_weight = double(hs) / double(hll_fill_rows(opt, hs));
  const auto layout_bytes = [&](const HllLayout<dev>& l, bool permuted, double weight) {
    const std::int64_t n_hacks = std::int64_t(l.widths.extent(0));
    return double(l.slots) * double(sizeof(S) + sizeof(O)) +
           double(nrows) * double(sizeof(O)) * (permuted ? 2 : 1) +
           double(n_hacks + 1) * double(sizeof(F)) +
           weight * (double(l.tail) * double(sizeof(S) + sizeof(O)) +
                     (l.segments > 0
                          ? double(l.segments) * double(sizeof(O) + sizeof(F)) + double(sizeof(F))
                          : 0.0));
  };
  HllSort sort = nrows > 1 ? opt.sort : HllSort::none;
  Kokkos::View<O*, dev> slen = lens;  // row length by position
  HllLayout<dev> lay;
  if (sort == HllSort::automatic) {
    lay = hll_layout<exec>(lens, hs, opt);
    sort = HllSort::none;
    if (double(lay.row_slots) + tail_weight * double(lay.tail) >
        opt.auto_sort_padding * double(a.nnz())) {
      Kokkos::View<O*, dev> sorted_len;
      const auto perm = hll_sort_rows<exec>(lens, window, max_len, sorted_len);
      const auto sorted_lay = hll_layout<exec>(sorted_len, hs, opt);
      if (layout_bytes(sorted_lay, true, tail_weight) < layout_bytes(lay, false, tail_weight)) {
        sort = HllSort::window;
        r.perm = perm;
        slen = sorted_len;
        lay = sorted_lay;
      }
    }
  } else {
    if (sort != HllSort::none)
      r.perm = hll_sort_rows<exec>(lens, sort == HllSort::window ? window : 0, max_len, slen);
    lay = hll_layout<exec>(slen, hs, opt);
  }
  r.sort = sort;
  r.sort_window = sort == HllSort::window ? window : 0;
  const bool permuted = r.perm.extent(0) > 0;
  if (lay.tail > 0 && opt.cap_only_padding > 1.0 && hll_fill_rows(opt, hs) > 1) {
    // a tail of the entries past the width cap only, when its padding costs little
    HllOptions capped = opt;
    capped.min_column_fill = 1.0 / double(hs);
    const auto cap_lay = hll_layout<exec>(slen, hs, capped);
    if (layout_bytes(cap_lay, permuted, 1.0) <=
        opt.cap_only_padding * layout_bytes(lay, permuted, 1.0))
      lay = cap_lay;
  }
  if (lay.tail > 0) {  // keep the tail only when it saves enough (one SpMV launch less without)
    HllOptions padded = opt;
    padded.tail = false;
    const auto full = hll_layout<exec>(slen, hs, padded);
    if (layout_bytes(full, permuted, 1.0) <=
        (1 + opt.min_tail_saving) * layout_bytes(lay, permuted, 1.0))
      lay = full;
  }
  r.max_width = lay.max_width;
  r.width_cap = lay.cap;
  const auto widths = lay.widths;
  const std::int64_t n_hacks = std::int64_t(widths.extent(0));
  const std::int64_t total = lay.slots;
  const std::int64_t n_tail = lay.tail;
  const std::int64_t n_segs = lay.segments;

  const double bytes = layout_bytes(lay, permuted, 1.0);
  check_padding_limit(
      where,
      str_cat(n_hacks, " hacks of ", hs, " rows, widths up to ", r.max_width, " = ", total,
              " entries, tail ", n_tail, " entries in ", n_segs, " segments"),
      bytes, a.memory_bytes(), opt.limit);
  check_fits<F>(where, "padded entries", double(total));
  check_fits<F>(where, "tail entries", double(n_tail));

  r.hack_offsets = Kokkos::View<F*, dev>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::hack_offsets"),
      std::size_t(n_hacks) + 1);
  const auto hack_offsets = r.hack_offsets;
  Kokkos::parallel_scan(
      "spk::hll::hack_offsets", Range64<exec>(0, n_hacks + 1),
      KOKKOS_LAMBDA(const std::int64_t h, std::int64_t& sum, const bool final) {
        if (final) hack_offsets(h) = F(sum);
        if (h < n_hacks) sum += widths(h) * hs;
      });
  r.values = Kokkos::View<S*, dev>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::values"), std::size_t(total));
  r.col_idx = Kokkos::View<O*, dev>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::col_idx"), std::size_t(total));
  const auto values = r.values;
  const auto cols = r.col_idx;
  const auto perm = r.perm;
  const auto row_map = a.row_map();
  const auto in_cols = a.col_idx();
  const auto in_vals = a.values();
  // The padded part's lengths, in place of the full ones (slen is this conversion's own view;
  // the tail below takes the full lengths from row_map).
  const auto row_len = slen;
  r.row_len = slen;
  Kokkos::parallel_for(
      "spk::csr_to_hll", Range64<exec>(0, n_hacks * hs), KOKKOS_LAMBDA(const std::int64_t p) {
        const std::int64_t h = p / hs;
        const std::size_t base = std::size_t(hack_offsets(h)) + std::size_t(p % hs);
        const O w = O(widths(h));
        O len = 0;
        F b = 0;
        if (p < std::int64_t(nrows)) {
          const O i = permuted ? perm(p) : O(p);
          b = row_map(i);
          len = O(row_map(i + 1) - b) < w ? O(row_map(i + 1) - b) : w;
          row_len(p) = len;
        }
        const O pad_col = len > 0 ? in_cols(b + len - 1) : O(0);
        for (O k = 0; k < w; ++k) {
          const std::size_t e = base + std::size_t(k) * std::size_t(hs);
          const bool real = k < len;
          values(e) = real ? in_vals(b + k) : scalar_traits<S>::zero();
          cols(e) = real ? in_cols(b + k) : pad_col;
        }
      });
  if (n_segs == 0) return r;

  // The tail: position p holds its row's entries [widths(p / hs), length), from tail_start(p)
  // in segments [seg_start(p), seg_start(p + 1)) of seg entries each (the last one shorter).
  const std::int64_t seg = opt.tail_segment;
  Kokkos::View<std::int64_t*, dev> tail_start(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::tail_start"),
      std::size_t(nrows) + 1);
  Kokkos::View<std::int64_t*, dev> seg_start(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::seg_start"),
      std::size_t(nrows) + 1);
  const HllTailLength<O, F, dev> tail_len{row_map, perm, widths, hs, permuted};
  Kokkos::parallel_scan(
      "spk::hll::tail_start", Range64<exec>(0, std::int64_t(nrows) + 1),
      KOKKOS_LAMBDA(const std::int64_t p, std::int64_t& sum, const bool final) {
        if (final) tail_start(p) = sum;
        if (p < std::int64_t(nrows)) sum += tail_len(p);
      });
  Kokkos::parallel_scan(
      "spk::hll::seg_start", Range64<exec>(0, std::int64_t(nrows) + 1),
      KOKKOS_LAMBDA(const std::int64_t p, std::int64_t& sum, const bool final) {
        if (final) seg_start(p) = sum;
        if (p < std::int64_t(nrows)) sum += (tail_len(p) + seg - 1) / seg;
      });
  r.tail_values = Kokkos::View<S*, dev>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::tail_values"),
      std::size_t(n_tail));
  r.tail_cols = Kokkos::View<O*, dev>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::tail_cols"), std::size_t(n_tail));
  r.tail_pos = Kokkos::View<O*, dev>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::tail_pos"), std::size_t(n_segs));
  r.tail_offsets = Kokkos::View<F*, dev>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::hll::tail_offsets"),
      std::size_t(n_segs) + 1);
  const auto tail_pos = r.tail_pos;
  const auto tail_offsets = r.tail_offsets;
  Kokkos::parallel_for(
      "spk::hll::tail_segments", Range64<exec>(0, std::int64_t(nrows)),
      KOKKOS_LAMBDA(const std::int64_t p) {
        for (std::int64_t s = seg_start(p); s < seg_start(p + 1); ++s) {
          tail_pos(s) = O(p);
          tail_offsets(s) = F(tail_start(p) + (s - seg_start(p)) * seg);
        }
      });
  Kokkos::deep_copy(Kokkos::subview(tail_offsets, n_segs), F(n_tail));
  const auto tail_vals = r.tail_values;
  const auto tail_cols = r.tail_cols;
  Kokkos::parallel_for(
      "spk::hll::tail_fill", Range64<exec>(0, n_segs), KOKKOS_LAMBDA(const std::int64_t s) {
        const std::int64_t p = std::int64_t(tail_pos(s));
        const O i = permuted ? perm(p) : O(p);
        // entry e of the tail is entry widths(p / hs) + e - tail_start(p) of row i
        const std::int64_t src = std::int64_t(row_map(i)) + widths(p / hs) - tail_start(p);
        for (std::int64_t e = std::int64_t(tail_offsets(s)); e < std::int64_t(tail_offsets(s + 1));
             ++e) {
          tail_vals(e) = in_vals(src + e);
          tail_cols(e) = in_cols(src + e);
        }
      });
  return r;
}

/// CSR matrix of an HLL matrix's padded part (row_len(p) entries of position p, see
/// HllRowGeometry) and tail (its segments continue their rows), rows in the original order.
/// Row lengths, then the scan, then one thread per position and one per segment, which finds
/// its row's first segment by a binary search. On the device, O(nrows + nnz) work.
template <class Csr, class S, class O, class F, class D>
Csr hll_to_csr(O nrows, O ncols, const S* values, const O* col_idx,
               const HllRowGeometry<O, F, D>& geom, const Kokkos::View<const O*, D>& row_len,
               const HllTail<S, O, F, D>& tail) {
  using exec = typename Csr::execution_space;
  Kokkos::View<F*, typename Csr::device_type> row_map("spk::to_csr::row_map",
                                                      std::size_t(nrows) + 1);
  const std::int64_t n_segs = tail.n_segments();
  Kokkos::parallel_for(
      "spk::hll::to_csr::lengths", Range64<exec>(0, std::int64_t(nrows)),
      KOKKOS_LAMBDA(const std::int64_t p) { row_map(geom.row(O(p)) + 1) = F(row_len(p)); });
  Kokkos::parallel_for(
      "spk::hll::to_csr::tail_lengths", Range64<exec>(0, n_segs),
      KOKKOS_LAMBDA(const std::int64_t s) {
        impl::atomic_add_int(&row_map(geom.row(tail.pos(s)) + 1),
                             F(tail.offsets(s + 1) - tail.offsets(s)));
      });
  const std::int64_t nnz = row_lengths_to_offsets<exec>(row_map);
  Csr b(nrows, ncols, typename Csr::row_map_type(row_map),
        typename Csr::index_type(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::csr::col_idx"), std::size_t(nnz)),
        typename Csr::values_type(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::csr::values"), std::size_t(nnz)));
  const auto out_cols = b.col_idx();
  const auto out_vals = b.values();
  Kokkos::parallel_for(
      "spk::hll::to_csr::fill", Range64<exec>(0, std::int64_t(nrows)),
      KOKKOS_LAMBDA(const std::int64_t p) {
        const F dst = row_map(geom.row(O(p)));
        const std::size_t base = geom.base(O(p));
        for (O k = 0; k < row_len(p); ++k) {
          out_cols(dst + k) = col_idx[base + std::size_t(k) * std::size_t(geom.hack_size)];
          out_vals(dst + k) = values[base + std::size_t(k) * std::size_t(geom.hack_size)];
        }
      });
  Kokkos::parallel_for(
      "spk::hll::to_csr::tail_fill", Range64<exec>(0, n_segs), KOKKOS_LAMBDA(const std::int64_t s) {
        const O p = tail.pos(s);
        std::int64_t lo = 0, hi = s;  // the first segment of position p (positions ascend)
        while (lo < hi) {
          const std::int64_t mid = lo + (hi - lo) / 2;
          if (tail.pos(mid) < p)
            lo = mid + 1;
          else
            hi = mid;
        }
        const std::int64_t dst = std::int64_t(row_map(geom.row(p))) + std::int64_t(row_len(p)) -
                                 std::int64_t(tail.offsets(lo));
        for (std::int64_t e = std::int64_t(tail.offsets(s)); e < std::int64_t(tail.offsets(s + 1));
             ++e) {
          out_cols(dst + e) = tail.col_idx(e);
          out_vals(dst + e) = tail.values(e);
        }
      });
  return b;
}

}  // namespace impl

/// Hacked ELLPACK matrix with a tail. The rows, in stored order ("positions"; the matrix order,
/// or sorted by length, see HllSort), are cut into hacks of hack_size() rows. Hack h holds
/// width_h columns of hack_size entries, column-major, at values / col_idx [hack_offsets(h),
/// hack_offsets(h + 1)); so entry k < row_lengths()(p) of position p is at hack_offsets(p /
/// hack_size) + k * hack_size + p % hack_size. width_h is the length of the hack's K-th
/// longest row, at most width_cap() (see HllOptions::min_column_fill, max_hack_width), and
/// row_lengths()(p) = min(length, width_h); or, without a tail (HllOptions::tail = false, or
/// when it would not save HllOptions::min_tail_saving), the hack's longest row. A row's further
/// entries are in the tail: tail_values() / tail_col_idx(), in segments of at most
/// HllOptions::tail_segment entries; segment s holds entries [tail_offsets()(s), tail_offsets()(s +
/// 1)) of position tail_positions()(s), a position's segments consecutive and in row order.
/// permutation() maps positions to rows (empty when unsorted). Entries keep the order of the CSR
/// input; padding repeats a valid column index with a zero value. With hack_size a multiple of 32,
/// every hack starts on a 32-entry boundary. Template parameters as spk::CsrMatrix; Offset also
/// types hack_offsets and tail_offsets. Copies are shallow.
template <class Scalar, class Ordinal = int, class Offset = int,
          class Device = Kokkos::DefaultExecutionSpace>
class HllMatrix {
 public:
  using value_type = Scalar;
  using ordinal_type = Ordinal;
  using size_type = Offset;
  using device_type = impl::device_t<Device>;
  using execution_space = typename device_type::execution_space;
  using memory_space = typename device_type::memory_space;
  using values_type = Kokkos::View<value_type*, device_type>;
  using index_type = Kokkos::View<ordinal_type*, device_type>;
  using offsets_type = Kokkos::View<size_type*, device_type>;
  using csr_type = CsrMatrix<Scalar, Ordinal, Offset, Device>;
  static constexpr const char* name = "hll";

  /// An empty 0 x 0 matrix.
  HllMatrix() = default;

  /// Converts a CSR matrix on its device (see HllOptions). Throws std::invalid_argument for
  /// invalid options and PaddingLimitExceeded when the layout would exceed options.limit.
  explicit HllMatrix(const csr_type& a, const HllOptions& options = {})
      : HllMatrix(a.nrows(), a.ncols(), impl::csr_to_hll(a, options)) {}

  ordinal_type nrows() const { return nrows_; }
  ordinal_type ncols() const { return ncols_; }
  /// Stored entries (padding excluded, tail included).
  std::int64_t nnz() const { return nnz_; }
  int hack_size() const { return hack_size_; }
  /// Number of hacks, ceil(nrows / hack_size).
  std::int64_t n_hacks() const {
    return hack_offsets_.extent(0) > 0 ? std::int64_t(hack_offsets_.extent(0)) - 1 : 0;
  }
  /// Width of the widest hack.
  std::int64_t max_width() const { return max_width_; }
  /// Mean hack width (padded entries / (n_hacks * hack_size)).
  double mean_width() const {
    return n_hacks() > 0 ? double(values_.extent(0)) / double(n_hacks() * hack_size_) : 0.0;
  }
  /// Allocated value slots (padded part and tail) per stored entry (1 = no padding; 1 for an
  /// empty matrix).
  double padding_ratio() const {
    return nnz_ > 0 ? double(values_.extent(0) + tail_values_.extent(0)) / double(nnz_) : 1.0;
  }
  double mean_row_length() const { return nrows_ > 0 ? double(nnz_) / double(nrows_) : 0.0; }
  /// The order applied: none, global or window (HllSort::automatic resolves to none or window).
  HllSort sort() const { return sort_; }
  /// Rows per sorting window when sort() is HllSort::window (the permutation maps each window
  /// of positions onto the same rows), else 0.
  std::int64_t sort_window() const { return sort_window_; }
  /// For rows sorted within windows: how evenly a team per window keeps its warps busy when y
  /// is staged (impl::hll_staged_balance, in (0, 1]); 0 when not sorted within windows.
  double staged_balance() const { return staged_balance_; }
  /// The cap on hack widths (see HllOptions::max_hack_width); 0 when the matrix was built
  /// without a tail (HllOptions::tail = false, or the tail did not save min_tail_saving).
  std::int64_t width_cap() const { return width_cap_; }
  /// Entries in the tail.
  std::int64_t tail_nnz() const { return std::int64_t(tail_values_.extent(0)); }
  /// Segments of the tail.
  std::int64_t n_tail_segments() const { return std::int64_t(tail_pos_.extent(0)); }
  /// Entries of the tail's longest segment (0 without a tail).
  std::int64_t tail_max_segment() const { return tail_max_segment_; }

  const values_type& values() const { return values_; }
  const index_type& col_idx() const { return col_idx_; }
  const offsets_type& hack_offsets() const { return hack_offsets_; }
  /// Length of the padded part of each position's row.
  const index_type& row_lengths() const { return row_len_; }
  const index_type& permutation() const { return perm_; }
  const values_type& tail_values() const { return tail_values_; }
  const index_type& tail_col_idx() const { return tail_cols_; }
  /// Per tail segment: its row position.
  const index_type& tail_positions() const { return tail_pos_; }
  /// Per tail segment: its first entry in the tail; n_tail_segments() + 1 entries (none
  /// without a tail).
  const offsets_type& tail_offsets() const { return tail_offsets_; }

  /// Bytes held by the arrays (padding, hack offsets, row lengths, permutation and the tail
  /// included).
  std::size_t memory_bytes() const {
    return (values_.extent(0) + tail_values_.extent(0)) * sizeof(value_type) +
           (hack_offsets_.extent(0) + tail_offsets_.extent(0)) * sizeof(size_type) +
           (col_idx_.extent(0) + row_len_.extent(0) + perm_.extent(0) + tail_cols_.extent(0) +
            tail_pos_.extent(0)) *
               sizeof(ordinal_type);
  }

  /// The matrix in CSR on the same device: rows in the original order, entries in stored
  /// order (the padded part, then the tail). O(nrows + nnz) work.
  csr_type to_csr() const {
    return impl::hll_to_csr<csr_type>(nrows_, ncols_, values_.data(), col_idx_.data(), geometry(),
                                      Kokkos::View<const ordinal_type*, device_type>(row_len_),
                                      tail());
  }

  /// Where entry k of position p lives, and which row p is (for the kernels).
  impl::HllRowGeometry<ordinal_type, size_type, device_type> geometry() const {
    impl::HllRowGeometry<ordinal_type, size_type, device_type> g;
    g.hack_offsets = hack_offsets_;
    g.perm = perm_;
    g.hack_size = ordinal_type(hack_size_);
    g.hack_shift = impl::exact_log2(hack_size_);
    g.permuted = perm_.extent(0) > 0;
    return g;
  }

  /// The tail's views (for the kernels).
  impl::HllTail<value_type, ordinal_type, size_type, device_type> tail() const {
    return {tail_values_, tail_cols_, tail_pos_, tail_offsets_};
  }

 private:
  HllMatrix(ordinal_type nrows, ordinal_type ncols,
            const impl::HllArrays<value_type, ordinal_type, size_type, device_type>& arr)
      : nrows_(nrows),
        ncols_(ncols),
        values_(arr.values),
        col_idx_(arr.col_idx),
        hack_offsets_(arr.hack_offsets),
        row_len_(arr.row_len),
        perm_(arr.perm),
        tail_values_(arr.tail_values),
        tail_cols_(arr.tail_cols),
        tail_pos_(arr.tail_pos),
        tail_offsets_(arr.tail_offsets),
        hack_size_(arr.hack_size),
        max_width_(arr.max_width),
        width_cap_(arr.width_cap),
        sort_(arr.sort),
        sort_window_(arr.sort_window) {
    nnz_ = impl::sum_entries<execution_space>(row_len_) + tail_nnz();
    tail_max_segment_ = impl::longest_segment<execution_space>(tail_offsets_);
    staged_balance_ = impl::hll_staged_balance<execution_space>(row_len_, sort_window_);
  }

  ordinal_type nrows_ = 0;
  ordinal_type ncols_ = 0;
  values_type values_;
  index_type col_idx_;
  offsets_type hack_offsets_;
  index_type row_len_;
  index_type perm_;
  values_type tail_values_;
  index_type tail_cols_;
  index_type tail_pos_;
  offsets_type tail_offsets_;
  int hack_size_ = 32;
  std::int64_t max_width_ = 0;
  std::int64_t width_cap_ = 0;
  HllSort sort_ = HllSort::none;
  std::int64_t sort_window_ = 0;
  std::int64_t nnz_ = 0;
  std::int64_t tail_max_segment_ = 0;
  double staged_balance_ = 0.0;
};

/// The launch spmv would use for `a` (zero fields chosen from the execution space and the
/// matrix). Padded part: below a mean of 32 entries per row (padded part) a GPU takes one row
/// per thread, 128 threads per team: consecutive threads then read consecutive entries of the
/// column-major hacks, and long rows are cut by the width cap anyway; from 32 to 128 two
/// threads per row (unless a team size is given), above as impl::default_threads_per_row;
/// entries in flight per lane from impl::resolve_in_flight (chunks of 8 on GPUs).
/// Staging y (op = N, rows sorted within windows, see impl::HllStagedSpmv): stage_y = 0 stages
/// on GPUs when neither rows_per_team nor team_size is given, the rows take one lane each, a
/// window's sums fit in team scratch and the matrix's staged_balance() is at least
/// impl::kHllStageBalance; a team then takes one window with 256 threads. stage_y = 1 stages
/// any window-sorted matrix (throws for an unsorted one, another rows_per_team or a window
/// too large for team scratch). op = T / H never stage (resolved to -1, nothing checked).
/// Tail: lanes per segment from the longest segment (impl::default_tail_lanes); 0 when there is
/// no tail.
template <class S, class O, class F, class D>
HllSpmvParams resolve_params(const HllMatrix<S, O, F, D>& a, Mode mode,
                             const HllSpmvParams& params = {}) {
  using exec = typename HllMatrix<S, O, F, D>::execution_space;
  const char* where = "spk::spmv (HLL)";
  const bool gpu = impl::is_gpu_space<exec>();
  const double main_mean = a.nrows() > 0 ? double(a.nnz() - a.tail_nnz()) / double(a.nrows()) : 0.0;
  // 2 threads per row from a mean of 32, with chunks of 8 entries in flight (H200, bcsstk38 x
  // 64, mean 44: 0.1118 ms with one, 0.1110 with two, 0.1213 with four; with the -4 loop
  // before the chunks 0.1168 / 0.1280 / 0.1388); the 27-point stencil is fastest with one
  int tpr = params.threads_per_row;
  if (tpr == 0 && params.team_size == 0 && gpu && main_mean >= 32 && main_mean < 128) tpr = 2;
  const int sy = params.stage_y;
  require(sy >= -1 && sy <= 1, where, "stage_y = ", sy, " must be 0 (choose), 1 or -1");
  const std::int64_t window = a.sort_window();
  const std::size_t scratch = impl::hll_staged_scratch_bytes<S, exec>(window);
  const std::size_t scratch_max = window > 0 ? impl::team_scratch_max<exec>() : 0;
  if (sy == 1 && mode == Mode::N) {
    require(window > 0, where,
            "stage_y = 1 needs rows sorted within windows (HllSort::window), the matrix's sort is ",
            to_string(a.sort()));
    require(params.rows_per_team == 0 || params.rows_per_team == window, where,
            "stage_y = 1 takes one sorting window per team: rows_per_team = ",
            params.rows_per_team, " must be 0 or the window, ", window);
    require(scratch <= scratch_max, where, "stage_y = 1: a window of ", window, " rows needs ",
            scratch, " bytes of team scratch, more than the maximum ", scratch_max);
  }
  const impl::RowLaunch unstaged = impl::resolve_row_launch(
      where, tpr, params.team_size, params.rows_per_team, main_mean < 128 ? 0.0 : main_mean, gpu);
  // the default stages only the launch staged_balance models: one lane per row, 256 threads
  const bool stage =
      mode == Mode::N &&
      (sy == 1 || (sy == 0 && gpu && window > 0 && params.rows_per_team == 0 &&
                   params.team_size == 0 && unstaged.threads_per_row == 1 &&
                   scratch <= scratch_max && a.staged_balance() >= impl::kHllStageBalance));
  impl::RowLaunch r =
      stage ? impl::resolve_row_launch(where, tpr, params.team_size, int(window),
                                       main_mean < 128 ? 0.0 : main_mean, gpu)
            : unstaged;
  // staging: one window per team, 256 threads (GPUs) unless a team size is given
  if (stage && params.team_size == 0 && gpu) r.team_size = std::max(1, 256 / r.threads_per_row);
  const int tl = params.tail_lanes;
  require(tl >= 0 && tl <= 32 && (tl & (tl - 1)) == 0, where, "tail_lanes = ", tl,
          " must be 0 (choose) or a power of two <= 32");
  int tail_lanes = tl;
  if (a.n_tail_segments() == 0)
    tail_lanes = 0;
  else if (tl == 0)
    tail_lanes = impl::default_tail_lanes(double(a.tail_max_segment()), gpu);
  return HllSpmvParams{r.threads_per_row, r.team_size, r.rows_per_team, tail_lanes,
                       impl::resolve_in_flight(where, params.in_flight, gpu), stage ? 1 : -1};
}

/// y = alpha * op(A) * x + beta * y with A in HLL; op = N, T or H (T and H scatter with atomics
/// after y = beta y). The padded part: one vector per row position, y written directly (op =
/// N); then the tail: one vector per segment, adding with atomics (see impl/hll_spmv.hpp). With
/// sorted rows, position p's result goes to y(permutation(p)) (op = N) or reads
/// x(permutation(p)) (T, H). Vectors, beta == 0 and errors as the ELL overload; a bad
/// tail_lanes throws std::invalid_argument. O(nnz + nrows) work; the padding is not read.
template <class S, class O, class F, class D, class XView, class YView>
void spmv(Mode mode, typename HllMatrix<S, O, F, D>::value_type alpha,
          const HllMatrix<S, O, F, D>& a, const XView& x,
          typename HllMatrix<S, O, F, D>::value_type beta, const YView& y,
          const HllSpmvParams& params = {}) {
  using Matrix = HllMatrix<S, O, F, D>;
  using dev = typename Matrix::device_type;
  static_assert(impl::check_vector_types<S, typename Matrix::execution_space, XView, YView>(),
                "spk::spmv: invalid vector types");
  impl::check_vector_sizes("spk::spmv", mode != Mode::N, a.nrows(), a.ncols(), x, y,
                           to_string(mode));
  const HllSpmvParams p = resolve_params(a, mode, params);
  const auto geom = a.geometry();
  const impl::RowLaunch launch{p.threads_per_row, p.team_size, p.rows_per_team, p.in_flight};
  const Kokkos::View<const O*, dev> row_len(a.row_lengths());
  if (p.stage_y == 1)
    impl::hll_staged_spmv<dev>(launch, alpha, a.values().data(), a.col_idx().data(), geom, row_len,
                               a.nrows(), x, beta, y);
  else
    impl::padded_rows_spmv<dev>("spk::hll_spmv", launch, mode, alpha, a.values().data(),
                                a.col_idx().data(), geom, row_len, a.nrows(), x, beta, y);
  impl::hll_tail_spmv<dev>(mode, alpha, a.tail(), geom, p.tail_lanes, x, y);
}

}  // namespace spk
