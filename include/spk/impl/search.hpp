// spk/impl/search.hpp: binary searches over sorted rank-1 views (row maps, sorted keys), callable
// in kernels and on the host.
#pragma once

#include <Kokkos_Core.hpp>

namespace spk {
namespace impl {

/// The first index i in [lo, hi) with v(i) >= value (that is, !(v(i) < value)), or hi if there
/// is none; v(lo .. hi - 1) must be non-decreasing. v is a rank-1 view (or anything indexable as
/// v(i)); Index is the type of lo, hi and the result. O(log(hi - lo)) reads of v.
template <class View, class Index, class T>
KOKKOS_INLINE_FUNCTION Index lower_bound(const View& v, Index lo, Index hi, const T& value) {
  while (lo < hi) {
    const Index mid = lo + (hi - lo) / 2;
    if (v(mid) < value)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/// The first index i in [lo, hi) with v(i) > value (that is, value < v(i)), or hi if there is
/// none; v(lo .. hi - 1) must be non-decreasing. Same types and cost as lower_bound.
template <class View, class Index, class T>
KOKKOS_INLINE_FUNCTION Index upper_bound(const View& v, Index lo, Index hi, const T& value) {
  while (lo < hi) {
    const Index mid = lo + (hi - lo) / 2;
    if (value < v(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/// The row i in [0, nrows) with row_map(i) <= k < row_map(i + 1) (the row holding entry k; empty
/// rows are skipped), by binary search. Requires a non-decreasing row_map with row_map(0) <= k <
/// row_map(nrows). O(log nrows).
template <class RowMap, class O, class F>
KOKKOS_INLINE_FUNCTION O row_of_entry(const RowMap& row_map, O nrows, F k) {
  // row_map(0) <= k, so the search may start at row 1
  return O(impl::upper_bound(row_map, O(1), nrows, k) - 1);
}

}  // namespace impl
}  // namespace spk
