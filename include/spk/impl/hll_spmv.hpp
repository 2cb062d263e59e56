// spk/impl/hll_spmv.hpp: SpMV of hacked ELLPACK (HLL): the padded-row kernel of ell_spmv.hpp with
// HLL's row geometry (hack offsets, column-major hacks, the optional row permutation applied
// when y is written or x is read for op = T / H), HLL's launch parameters, and the kernel of the
// wide hacks' work items.
//
// Wide hacks: a hack much wider than the others (one long row) would serialise its long rows on
// one thread each. The padded-row kernel therefore stops every row at head_width entries, and
// each wide hack's remaining columns are cut into work items of at most head_width columns (hack,
// first column); one thread per (item, row of the hack) adds its part to y with atomics (op = N)
// or scatters it (op = T / H). The items run after the padded-row kernel, which has already
// written (op = N) or scaled (op = T / H) y, so no pre-pass is needed.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <string>

#include <spk/impl/ell_spmv.hpp>
#include <spk/impl/format_common.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {

/// Launch parameters of HLL SpMV. Zero means "choose" (see impl::resolve_row_launch).
struct HllSpmvParams {
  int threads_per_row = 0;  ///< lanes per row: 1, 2, 4, 8, 16 or 32
  int team_size = 0;        ///< vectors (rows in flight) per team
  int rows_per_team = 0;    ///< consecutive row positions a team takes
};

/// A short name of HLL launch parameters, e.g. "tpr1-t128-r128".
inline std::string describe(const HllSpmvParams& p) {
  return "tpr" + std::to_string(p.threads_per_row) + "-t" + std::to_string(p.team_size) + "-r" +
         std::to_string(p.rows_per_team);
}

namespace impl {

/// log2(n) when n is a power of two, else -1.
inline int exact_log2(std::int64_t n) {
  if (n <= 0 || (n & (n - 1)) != 0) return -1;
  int s = 0;
  while ((std::int64_t(1) << s) < n) ++s;
  return s;
}

/// Row geometry of HLL: position p (the p-th stored row) lies in hack p / hack_size, whose
/// block starts at hack_offsets(hack) and is column-major with hack_size rows; the matrix row
/// is perm(p), or p when not permuted. The padded-row kernel takes the first head_width entries
/// of each row (the wide hacks' work items the rest). hack_shift = log2(hack_size) when it is a
/// power of two (shift and mask instead of a division), else -1.
template <class O, class F, class D>
struct HllRowGeometry {
  Kokkos::View<const F*, D> hack_offsets;
  Kokkos::View<const O*, D> perm;
  O hack_size = 32;
  int hack_shift = 5;
  bool permuted = false;
  O head_width = 0;

  KOKKOS_INLINE_FUNCTION std::size_t base(O p) const {
    if (hack_shift >= 0)
      return std::size_t(hack_offsets(p >> hack_shift)) + std::size_t(p & (hack_size - 1));
    if (sizeof(O) <= 4) {  // 32-bit unsigned division, cheaper than a signed or 64-bit one
      const std::uint32_t q = std::uint32_t(p) / std::uint32_t(hack_size);
      return std::size_t(hack_offsets(q)) +
             std::size_t(std::uint32_t(p) - q * std::uint32_t(hack_size));
    }
    const O q = p / hack_size;
    return std::size_t(hack_offsets(q)) + std::size_t(p - q * hack_size);
  }
  KOKKOS_INLINE_FUNCTION std::size_t stride(O) const { return std::size_t(hack_size); }
  KOKKOS_INLINE_FUNCTION O row(O p) const { return permuted ? perm(p) : p; }
  KOKKOS_INLINE_FUNCTION O head(O len) const { return len < head_width ? len : head_width; }
};

/// The wide hacks' work items (see the file comment): item j covers columns [item_col(j),
/// item_col(j) + head_width) of hack item_hack(j), clipped to each row's length. One thread per
/// (item, row of the hack): thread t takes item t / hack_size, row t % hack_size.
template <class S, class O, class F, class Device, class XView, class YView>
struct HllWideItemsSpmv {
  using traits = scalar_traits<S>;

  const S* values;
  const O* col_idx;
  HllRowGeometry<O, F, Device> geom;
  Kokkos::View<const O*, Device> row_len;
  Kokkos::View<const O*, Device> item_hack;
  Kokkos::View<const O*, Device> item_col;
  input_vector_t<XView> x;
  YView y;
  S alpha;
  bool scatter;  // op = T / H
  bool conj;     // op = H
  O npos;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t t) const {
    const std::int64_t hs = std::int64_t(geom.hack_size);
    const std::int64_t j = geom.hack_shift >= 0 ? t >> geom.hack_shift : t / hs;
    const std::int64_t lane = t - j * hs;
    const std::int64_t h = std::int64_t(item_hack(j));
    const std::int64_t p = h * hs + lane;
    if (p >= std::int64_t(npos)) return;
    const O len = row_len(p);
    const O c0 = item_col(j);
    const O c1 = len - c0 < geom.head_width ? len : c0 + geom.head_width;
    if (c0 >= c1) return;
    const std::size_t st = std::size_t(hs);
    const std::size_t b = std::size_t(geom.hack_offsets(h)) + std::size_t(lane);
    const S* v = values + b;
    const O* c = col_idx + b;
    if (!scatter) {
      S s0 = traits::zero(), s1 = traits::zero();
      O k = c0;
      for (; k + 3 < c1; k += 4) {
        const std::size_t e0 = std::size_t(k) * st, e1 = e0 + st, e2 = e1 + st, e3 = e2 + st;
        const O i0 = c[e0], i1 = c[e1], i2 = c[e2], i3 = c[e3];
        const S v0 = v[e0], v1 = v[e1], v2 = v[e2], v3 = v[e3];
        const S x0 = x(i0), x1 = x(i1), x2 = x(i2), x3 = x(i3);
        s0 += v0 * x0;
        s1 += v1 * x1;
        s0 += v2 * x2;
        s1 += v3 * x3;
      }
      for (; k < c1; ++k) s0 += v[std::size_t(k) * st] * x(c[std::size_t(k) * st]);
      atomic_accumulate(&y(geom.row(O(p))), alpha * (s0 + s1));
    } else {
      const S xi = alpha * x(geom.row(O(p)));
      for (O k = c0; k < c1; ++k) {
        const std::size_t e = std::size_t(k) * st;
        atomic_accumulate(&y(c[e]), (conj ? traits::conj(v[e]) : v[e]) * xi);
      }
    }
  }
};

/// Launches HllWideItemsSpmv over the items (nothing when there are none). Must run after the
/// padded-row kernel of the same product.
template <class Device, class S, class O, class F, class XView, class YView>
void hll_wide_items_spmv(Mode mode, S alpha, const S* values, const O* col_idx,
                         const HllRowGeometry<O, F, Device>& geom,
                         const Kokkos::View<const O*, Device>& row_len,
                         const Kokkos::View<const O*, Device>& item_hack,
                         const Kokkos::View<const O*, Device>& item_col, O npos, const XView& x,
                         const YView& y) {
  using exec = typename Device::execution_space;
  const std::int64_t n_items = std::int64_t(item_hack.extent(0));
  if (n_items == 0 || npos == 0) return;
  HllWideItemsSpmv<S, O, F, Device, XView, YView> f{
      values, col_idx, geom,  row_len,         item_hack,       item_col,
      x,      y,       alpha, mode != Mode::N, mode == Mode::H, npos};
  Kokkos::parallel_for("spk::hll_spmv::wide_items",
                       Range64<exec>(0, n_items * std::int64_t(geom.hack_size)), f);
}

}  // namespace impl
}  // namespace spk
