// spk/impl/hyb_spmv.hpp: SpMV of HYB (ELL + COO) and its launch parameters.
//
// The ELL part runs the padded-row kernel of ell_spmv.hpp (op = N writes y = alpha A_ell x +
// beta y; op = T / H sets y = beta y and scatters). The COO part (the entries beyond the ELL
// width, sorted by row) then adds its products: for op = N each thread takes a run of
// coo_entries_per_thread consecutive entries, sums them while the row stays the same and adds
// each row's sum to y with one atomic (so a long overflowing row costs few atomics); for op = T /
// H every entry scatters alpha * A(i, j) * x(i) into y(j) atomically.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <string>

#include <spk/error.hpp>
#include <spk/impl/format_common.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {

/// Launch parameters of HYB SpMV: the ELL part's (see EllSpmvParams) and the COO part's. Zero
/// means "choose".
struct HybSpmvParams {
  int threads_per_row = 0;         ///< ELL part: lanes per row, 1, 2, 4, 8, 16 or 32
  int team_size = 0;               ///< ELL part: vectors (rows in flight) per team
  int rows_per_team = 0;           ///< ELL part: consecutive rows a team takes
  int coo_entries_per_thread = 0;  ///< COO part (op = N): consecutive entries per thread
  int in_flight = 0;  ///< ELL part: entries a lane loads before it multiplies, see EllSpmvParams
};

/// A short name of HYB launch parameters, e.g. "tpr1-t128-r128-c8-f8".
inline std::string describe(const HybSpmvParams& p) {
  return "tpr" + std::to_string(p.threads_per_row) + "-t" + std::to_string(p.team_size) + "-r" +
         std::to_string(p.rows_per_team) + "-c" + std::to_string(p.coo_entries_per_thread) +
         impl::describe_in_flight(p.in_flight);
}

namespace impl {

/// Default COO run: 8 entries per thread on GPUs (few atomics, many threads); on CPU backends
/// about 8 runs per thread, at least 256 entries.
template <class ExecSpace>
int default_coo_run(std::int64_t coo_nnz) {
  if (is_gpu_space<ExecSpace>()) return 8;
  const std::int64_t parts = 8 * std::max<std::int64_t>(1, ExecSpace().concurrency());
  return int(
      std::min<std::int64_t>(std::max<std::int64_t>(256, (coo_nnz + parts - 1) / parts), 1 << 20));
}

/// y += alpha * op(A_coo) * x for COO entries sorted by row (see the file comment); y already
/// holds the ELL part's result.
template <class ExecSpace, class S, class RowView, class ColView, class ValView, class XView,
          class YView>
void hyb_coo_spmv(Mode mode, S alpha, const RowView& rows, const ColView& cols, const ValView& vals,
                  int run, const XView& x_in, const YView& y) {
  using traits = scalar_traits<S>;
  const std::int64_t n = std::int64_t(vals.extent(0));
  if (n == 0) return;
  const input_vector_t<XView> x = x_in;
  if (mode == Mode::N) {
    const std::int64_t r = run;
    Kokkos::parallel_for(
        "spk::hyb_coo_spmv", Range64<ExecSpace>(0, (n + r - 1) / r),
        KOKKOS_LAMBDA(const std::int64_t t) {
          const std::int64_t k0 = t * r;
          const std::int64_t k1 = k0 + r < n ? k0 + r : n;
          auto row = rows(k0);
          S sum = traits::zero();
          for (std::int64_t k = k0; k < k1; ++k) {
            if (rows(k) != row) {
              atomic_accumulate(&y(row), alpha * sum);
              row = rows(k);
              sum = traits::zero();
            }
            sum += vals(k) * x(cols(k));
          }
          atomic_accumulate(&y(row), alpha * sum);
        });
    return;
  }
  const bool conj = mode == Mode::H;
  Kokkos::parallel_for(
      "spk::hyb_coo_spmv_t", Range64<ExecSpace>(0, n), KOKKOS_LAMBDA(const std::int64_t k) {
        const S v = conj ? traits::conj(vals(k)) : vals(k);
        atomic_accumulate(&y(cols(k)), v * (alpha * x(rows(k))));
      });
}

}  // namespace impl
}  // namespace spk
