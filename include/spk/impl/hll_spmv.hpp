// spk/impl/hll_spmv.hpp: SpMV of hacked ELLPACK (HLL): the padded-row kernel of ell_spmv.hpp with
// HLL's row geometry (hack offsets, column-major hacks, the optional row permutation applied
// when y is written or x is read for op = T / H), and HLL's launch parameters.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <string>

#include <spk/impl/ell_spmv.hpp>
#include <spk/impl/format_common.hpp>

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

/// Row geometry of HLL: position p (the p-th stored row) lies in hack p / hack_size, whose
/// block starts at hack_offsets(hack) and is column-major with hack_size rows; the matrix row
/// is perm(p), or p when perm is empty (no sorting).
template <class O, class F, class D>
struct HllRowGeometry {
  Kokkos::View<const F*, D> hack_offsets;
  Kokkos::View<const O*, D> perm;
  O hack_size = 32;
  bool permuted = false;

  KOKKOS_INLINE_FUNCTION std::size_t base(O p) const {
    return std::size_t(hack_offsets(p / hack_size)) + std::size_t(p % hack_size);
  }
  KOKKOS_INLINE_FUNCTION std::size_t stride(O) const { return std::size_t(hack_size); }
  KOKKOS_INLINE_FUNCTION O row(O p) const { return permuted ? perm(p) : p; }
};

}  // namespace impl
}  // namespace spk
