// spk/csr_spmv_params.hpp: the schedule of a CSR SpMV (kernel variant and launch parameters),
// row-length statistics, and the default heuristic that maps the second to the first.
#pragma once

#include <cstdint>
#include <string>

#include <spk/error.hpp>
#include <spk/mode.hpp>

namespace spk {

/// Kernel variant of CSR SpMV.
enum class CsrSpmvVariant {
  automatic,  ///< chosen from the row-length statistics (choose_csr_spmv_params)
  thread,     ///< one row per thread
  vector,     ///< a vector of vector_length lanes per row, several rows per team
  balanced,   ///< nnz-balanced: equal windows of nonzeros per team (row-block splitting); for
              ///< op = T / H equal runs of nonzeros per thread, scattered with atomics
  warp,       ///< nnz-balanced per warp: windows of 32 * entries_per_lane nonzeros, rows summed
              ///< by a segmented warp-shuffle scan (no shared memory, no barriers)
  staged      ///< a warp takes 32 / vector_length consecutive rows, stages their entries (or,
              ///< for op = N, their products with x: stage_products) in shared memory
              ///< (32 * entries_per_lane at a time, coalesced), then vector_length lanes sum
              ///< each row from there (regular rows)
};

/// How teams take their work.
enum class SpmvSchedule {
  static_chunks,  ///< team t takes chunk t (one launch-wide assignment)
  dynamic_chunks  ///< a fixed set of teams takes chunks from an atomic counter
};

/// How op(A) = A^T / A^H is applied.
enum class TransposeMethod {
  atomic,   ///< scatter into y with atomic adds, no transpose stored
  explicit_ ///< build A^T once (cached with the matrix, doubling its memory), then run N
};

/// Launch parameters of CSR SpMV. Zero means "choose": spk fills zeros from the row statistics
/// and the execution space. All fields are plain data so tuners can enumerate them.
struct CsrSpmvParams {
  CsrSpmvVariant variant = CsrSpmvVariant::automatic;
  int team_size = 0;        ///< vectors (rows in flight) per team; vector, thread variants
  int vector_length = 0;    ///< lanes per row, a power of two in [1, 32]; vector variant
  int rows_per_thread = 0;  ///< consecutive rows per vector; vector, thread variants
  SpmvSchedule schedule = SpmvSchedule::static_chunks;
  int league_size = 0;      ///< dynamic schedule: number of persistent teams
  int chunk_nnz = 0;        ///< balanced variant: nonzeros per team window
  int threads_per_team = 0; ///< balanced variant: threads of a team
  int entries_per_lane = 0; ///< warp variant: consecutive nonzeros per lane (4 or 8); staged
                            ///< variant: a warp stages 32 * entries_per_lane (4 to 32) at a
                            ///< time. Both variants' team_size is the number of warps per team.
                            ///< thread variant: 4 or 8 loads a row in chunks of that many
                            ///< entries, the last one predicated; 0 = four in flight, the
                            ///< remainder one at a time
  TransposeMethod transpose = TransposeMethod::atomic;
  int stage_products = 0;   ///< staged variant: 1 stages the products values * x (op = N; a
                            ///< warp multiplies as it loads, rows then add one slot per entry),
                            ///< -1 the entries (column and value; rows multiply as they add);
                            ///< 2 stages products and loads the next chunk's entries before
                            ///< this chunk's x reads and adds (a second set of registers;
                            ///< entries_per_lane 0 then means 4); 0 chooses: 2 for op = N
                            ///< with rows of more than 16 entries on average, else -1.
                            ///< op = T / H always stage entries.
};

/// Row-length statistics of a CSR matrix (computed on the device, once per matrix).
struct CsrRowStats {
  std::int64_t nrows = 0;
  std::int64_t nnz = 0;
  std::int64_t max_row = 0;     ///< longest row
  std::int64_t empty_rows = 0;  ///< rows with no entries
  double mean = 0;              ///< nnz / nrows
  double stddev = 0;            ///< standard deviation of the row lengths
};

inline const char* to_string(CsrSpmvVariant v) {
  switch (v) {
    case CsrSpmvVariant::thread: return "thread";
    case CsrSpmvVariant::vector: return "vector";
    case CsrSpmvVariant::balanced: return "balanced";
    case CsrSpmvVariant::warp: return "warp";
    case CsrSpmvVariant::staged: return "staged";
    default: return "automatic";
  }
}

inline const char* to_string(SpmvSchedule s) {
  return s == SpmvSchedule::static_chunks ? "static" : "dynamic";
}

/// A short name of a schedule, e.g. "vector-v8-t32-r1-static", for tables and tuning files.
inline std::string describe(const CsrSpmvParams& p) {
  std::string s = to_string(p.variant);
  if (p.variant == CsrSpmvVariant::balanced)
    return s + "-c" + std::to_string(p.chunk_nnz) + "-t" + std::to_string(p.threads_per_team);
  if (p.variant == CsrSpmvVariant::warp)
    return s + "-k" + std::to_string(p.entries_per_lane) + "-t" + std::to_string(p.team_size);
  if (p.variant == CsrSpmvVariant::staged)
    return s + "-v" + std::to_string(p.vector_length) + "-k" + std::to_string(p.entries_per_lane) +
           "-t" + std::to_string(p.team_size) +
           (p.stage_products == 1 ? "-p" : p.stage_products == 2 ? "-pf" : "");
  if (p.variant == CsrSpmvVariant::vector) s += "-v" + std::to_string(p.vector_length);
  s += "-t" + std::to_string(p.team_size) + "-r" + std::to_string(p.rows_per_thread) + "-" +
       to_string(p.schedule);
  if (p.variant == CsrSpmvVariant::thread && p.entries_per_lane > 0)
    s += "-k" + std::to_string(p.entries_per_lane);
  return s;
}

/// True for a matrix whose rows are too uneven for row-parallel kernels: a few rows far longer
/// than the mean (circuit, power-law, arrowhead) would leave most threads idle.
inline bool is_irregular(const CsrRowStats& s) {
  return s.nnz > 0 && ((s.max_row > 128 && double(s.max_row) > 16.0 * s.mean + 32.0) ||
                       s.stddev > 2.0 * s.mean + 8.0);
}

/// Matrices with at least this many nonzeros stream from device memory; below it they are
/// cache-resident on current GPUs and short of parallel work for equal-nnz windows.
constexpr std::int64_t large_nnz = 4 << 20;
/// Above this many nonzeros, windows of 4096 nonzeros beat one row per thread on short rows.
constexpr std::int64_t huge_nnz = 64 << 20;

/// Completes `p` (fills every zero / automatic field) for a matrix with statistics `s`, the
/// product op(A) = `mode`, on an execution space that is a GPU (`gpu`) or a CPU backend.
/// GPU rules (from the H100 and H200 suites in docs/PERFORMANCE.md): irregular rows use
/// nnz-balanced windows (op = N) or runs (op = T / H; warps over windows of 256 nonzeros for
/// large matrices). Regular op = N: large matrices (streamed from memory) use one row per
/// thread (two rows each, loads in chunks of 4) for short even rows (mean <= 8, standard
/// deviation <= mean / 4 + 1), the staged kernel for other rows of mean length <= 64 (entries
/// staged, one lane per row, up to 16; products staged above, chunks of 128 with the next one
/// loaded ahead: one lane per row up to 32, then the fewest lanes whose warp's rows take at
/// most 384 entries), warps over windows of 256
/// nonzeros above 64; small (cache-resident) ones use vectors of 32 lanes. Regular op = T / H:
/// large matrices with rows of 3-64 entries use the staged kernel with entries staged (lanes
/// per row: the fewest whose warp's rows fit a chunk of 256 entries), others scatter with
/// vectors of about the mean length (rounded down).
/// CPU backends use one row per thread in chunks of rows, dynamically scheduled for irregular
/// rows.
/// Throws std::invalid_argument for out-of-range explicit values. O(1).
inline CsrSpmvParams choose_csr_spmv_params(const CsrRowStats& s, bool gpu,
                                            CsrSpmvParams p = {}, Mode mode = Mode::N) {
  const bool irregular = is_irregular(s);
  bool full_warp = false;  // vector length 32 whatever the row length
  if (p.variant == CsrSpmvVariant::automatic) {
    if (irregular && gpu && mode != Mode::N && s.nnz >= large_nnz) {
      // op = T / H, large irregular: warps over windows of 256 nonzeros, loads in chunks of 4
      // (H200 run E1, against cuSPARSE's transposed CSR ALG1: circuit-like 0.951x, R-MAT
      // 0.774x, where nnz-balanced runs gave 0.848x / 0.732x)
      p.variant = CsrSpmvVariant::warp;
      if (p.entries_per_lane == 0) p.entries_per_lane = 4;
      if (p.team_size == 0) p.team_size = 4;
    } else if (irregular)
      p.variant = CsrSpmvVariant::balanced;
    else if (gpu && mode == Mode::N && s.nnz >= large_nnz) {
      // streaming from memory (H100 and H200 suites, docs/PERFORMANCE.md): short even rows
      // one per thread; rows of up to 64 entries staged by warps (entries staged, one lane per
      // row, up to 16; products above); longer rows by nnz windows
      if (s.mean <= 8.0 && s.stddev <= 0.25 * s.mean + 1.0) {
        // short, even rows (2D / 3D stencils, pdeN): one row per thread, two rows each, loads
        // in chunks of 4 (H200: 2D 5-point 0.1348 ms against 0.1441 staged, 3D 7-point 0.5818
        // against 0.6332, pde 0.1262 against 0.1318)
        p.variant = CsrSpmvVariant::thread;
        if (p.rows_per_thread == 0) p.rows_per_thread = 2;
        if (p.entries_per_lane == 0) p.entries_per_lane = 4;
      } else if (s.mean <= 64.0) {
        // the staged kernel: up to 16 entries per row one lane per row with the entries
        // staged; longer rows (measured 17, 27, 45) with the products staged and the next
        // chunk loaded ahead (H200 run J1 against cuSPARSE CSR ALG1: full band of 17 per row
        // 1.20x, 27-point 1.22x, bcsstk38 x 64 1.16x, where warps over windows of 256 nonzeros
        // gave 0.99 / 0.94 / 1.02x in runs F2 / F3 and entries staged 0.90 / 1.10 / 0.87x)
        p.variant = CsrSpmvVariant::staged;
        if (p.vector_length == 0 && s.mean <= 16.0) p.vector_length = 1;
      } else {
        // rows of 64+ entries: warps over windows of 256 nonzeros (chosen on bcsstk38 x 64, 45
        // per row, before the products were staged: H100 0.115 ms against 0.129 in windows of
        // 2048 per team; no regular matrix of 46-64 or 64+ entries per row has been measured
        // since, so the cut at 64 is an extrapolation)
        p.variant = CsrSpmvVariant::warp;
        if (p.entries_per_lane == 0) p.entries_per_lane = 8;
        if (p.team_size == 0) p.team_size = 4;
      }
    } else if (gpu && mode == Mode::N) {
      p.variant = CsrSpmvVariant::vector;
      full_warp = true;
    } else if (gpu && s.nnz >= large_nnz && s.mean >= 3.0 && s.mean <= 64.0) {
      // op = T / H, large regular rows of 3-64 entries (measured: 5-44): the staged kernel,
      // lanes per row from its own rule below (H200 run
      // E1, against cuSPARSE's transposed CSR ALG1: 2D 5-point 1.003x, 3D 7-point 1.115x,
      // 27-point 1.276x, pde 1.152x, random band 1.172x, full band 0.910x, bcsstk38 x 64
      // 0.930x, where vectors of about the mean length gave 0.767 / 0.951 / 0.927 / 0.994 /
      // 0.872 / 0.691 / 0.779x)
      p.variant = CsrSpmvVariant::staged;
    } else if (gpu && s.mean >= 3.0)
      p.variant = CsrSpmvVariant::vector;
    else
      p.variant = CsrSpmvVariant::thread;
  }
  const auto check = [](bool ok, const char* field, int v) {
    require(ok, "spk::choose_csr_spmv_params", field, " = ", v, " is out of range");
  };
  check(p.team_size >= 0 && p.team_size <= 1024, "team_size", p.team_size);
  check(p.vector_length >= 0 && p.vector_length <= 32 &&
            (p.vector_length & (p.vector_length - 1)) == 0,
        "vector_length (a power of two <= 32)", p.vector_length);
  check(p.rows_per_thread >= 0, "rows_per_thread", p.rows_per_thread);
  check(p.chunk_nnz >= 0, "chunk_nnz", p.chunk_nnz);
  check(p.threads_per_team >= 0 && p.threads_per_team <= 1024, "threads_per_team",
        p.threads_per_team);
  check(p.league_size >= 0, "league_size", p.league_size);
  check(p.stage_products >= -1 && p.stage_products <= 2,
        "stage_products (-1 entries, 0 choose, 1 products, 2 products with the next chunk "
        "loaded ahead)",
        p.stage_products);
  if (p.variant == CsrSpmvVariant::thread)
    check(p.entries_per_lane == 0 || p.entries_per_lane == 4 || p.entries_per_lane == 8,
          "entries_per_lane (thread variant: 0, 4 or 8)", p.entries_per_lane);
  if (p.variant == CsrSpmvVariant::staged)
    check(p.entries_per_lane == 0 || p.entries_per_lane == 4 || p.entries_per_lane == 8 ||
              p.entries_per_lane == 16 || p.entries_per_lane == 32,
          "entries_per_lane (4, 8, 16 or 32)", p.entries_per_lane);
  else
    check(p.entries_per_lane == 0 || p.entries_per_lane == 4 || p.entries_per_lane == 8,
          "entries_per_lane (4 or 8)", p.entries_per_lane);

  if (p.variant == CsrSpmvVariant::warp) {
    if (p.entries_per_lane == 0) p.entries_per_lane = 4;
    if (p.team_size == 0) p.team_size = gpu ? 8 : 1;  // warps per team
    check(!gpu || p.team_size <= 32, "team_size (warps per team, <= 32)", p.team_size);
    return p;
  }

  if (p.variant == CsrSpmvVariant::staged) {
    // products for op = N on rows of more than 16 entries (one lane per row staging entries
    // won up to 16: the random band of 16 per row 1.31x against 1.14x with products, F2),
    // with the next chunk loaded ahead in chunks of 128 (H200 run J1 against cuSPARSE CSR
    // ALG1: full band 1.20x, 27-point 1.22x, bcsstk38 x 64 1.16x, where chunks of 256 without
    // loading ahead gave 1.11 / 1.20 / 1.07x; chunks of 256 loaded ahead take 96 registers
    // and lost: 0.93 / 1.00x); op = T / H scatter each entry times its row's x, so they stage
    // entries
    if (mode != Mode::N)
      p.stage_products = -1;
    else if (p.stage_products == 0)
      p.stage_products = s.mean > 16.0 ? 2 : -1;
    if (p.entries_per_lane == 0) p.entries_per_lane = p.stage_products == 2 ? 4 : 8;
    if (p.vector_length == 0) {
      int v = 1;
      if (p.stage_products >= 1) {
        // products: one lane per row up to 32 entries (27-point: 1.20x against 1.19x with two
        // lanes, 1.16x with four), above that the fewest lanes whose warp's rows take at most
        // 384 entries (bcsstk38 x 64, 45 per row: four lanes 1.06-1.09x, two 1.03-1.08x)
        if (s.mean > 32.0)
          while (v < 32 && (32.0 / v) * s.mean > 384.0) v *= 2;
      } else {
        // entries: the fewest lanes per row whose warp's rows fit one chunk of 256 entries
        // with the room its alignment to 32 entries takes
        while (v < 32 && (32.0 / v) * s.mean > 224.0) v *= 2;
      }
      p.vector_length = gpu ? v : 1;
    }
    if (p.team_size == 0) p.team_size = gpu ? 4 : 1;  // warps per team
    check(!gpu || p.team_size <= 32, "team_size (warps per team, <= 32)", p.team_size);
    return p;
  }

  if (p.variant == CsrSpmvVariant::balanced) {
    // transposed runs: 4 nonzeros per thread, 512 threads per team (H200 suite)
    if (p.threads_per_team == 0) p.threads_per_team = gpu ? (mode == Mode::N ? 256 : 512) : 1;
    if (p.chunk_nnz == 0) {
      // 4096 nonzeros per window for very large matrices, else 2048, fewer when that leaves
      // under ~1024 windows to spread. (Large matrices with short rows took 4096 until the L1
      // carveout of spk's Kokkos build: the circuit-like matrix then ran 0.39 ms with 2048
      // against 0.62 ms with 4096 on an H100, docs/PERFORMANCE.md.)
      const bool big = s.nnz >= huge_nnz / 2;
      std::int64_t c = big ? 4096 : 2048;
      while (gpu && c > 128 && s.nnz / c < 1024) c /= 2;
      p.chunk_nnz = int(c);
    }
    return p;
  }
  if (p.variant == CsrSpmvVariant::thread) p.vector_length = 1;
  if (p.vector_length == 0) {
    // a power of two near the mean row length, at most a warp
    int v = 1;  // the largest power of two not above the mean, at most a warp
    while (v < 32 && 2.0 * v <= s.mean) v *= 2;
    if (full_warp) v = 32;
    p.vector_length = gpu ? v : 1;
  }
  if (p.team_size == 0) p.team_size = gpu ? 256 / p.vector_length : 1;
  if (p.rows_per_thread == 0) {
    if (gpu)
      p.rows_per_thread = s.mean < 4.0 && p.vector_length == 1 ? 2 : 1;
    else  // CPU: a team is one thread; give it enough rows to amortise the scheduling
      p.rows_per_thread = 256;
  }
  if (!gpu && p.variant != CsrSpmvVariant::balanced && is_irregular(s))
    p.schedule = SpmvSchedule::dynamic_chunks;
  return p;
}

}  // namespace spk
