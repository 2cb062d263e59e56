// spk/select_format.hpp: automatic choice of a storage format (and its SpMV schedule).
//
// compute_features() measures a CSR matrix on its device in one kernel (impl/format_features):
// row-length mean, deviation and maximum, empty rows, the padding of ELL and of 32-row sliced
// ELL, occupied diagonals, block structure (entries repeating the previous row's pattern),
// value repetition (distinct values in a sample), x-access locality (entries near the
// diagonal, bandwidth) and a structural fingerprint.
//
// select_format() ranks a fixed list of candidate configurations (format_candidates) by a cost
// model: the bytes each format moves for one product (its arrays, padding included, plus x and
// y) over the copy bandwidth divided by an efficiency per format, plus a launch latency per
// kernel it runs. With options.trial it then converts the best-ranked candidates (and spk's
// default CSR), times their products and takes the fastest; with a tuning file, the winner is
// stored per (GPU, scalar, fingerprint) and later calls take it from there without measuring.
// options.memory_budget_bytes excludes formats that would hold more bytes.
//
// make_matrix() returns the chosen Matrix.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <spk/compound/tuning.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/impl/device_info.hpp>
#include <spk/impl/format_features.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/matrix.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>

namespace spk {

/// Structural features of a matrix (compute_features).
struct MatrixFeatures {
  std::int64_t nrows = 0, ncols = 0, nnz = 0;
  double row_mean = 0;       ///< nnz / nrows
  double row_stddev = 0;     ///< standard deviation of the row lengths
  std::int64_t row_max = 0;  ///< longest row
  std::int64_t empty_rows = 0;
  /// Value slots per entry of ELL (nrows x longest row) and of an unsorted sliced ELL with
  /// 32-row hacks each padded to its longest row (1 = no padding).
  double ell_padding = 1, hack_padding = 1;
  std::int64_t diagonals = 0;  ///< distinct offsets j - i
  /// Value slots per entry of DIA (diagonals x nrows / nnz).
  double dia_padding = 1;
  /// Fraction of entries whose column equals the previous row's at the same position, with
  /// both rows of equal length: (b - 1) / b for rows in blocks of b rows with one pattern.
  double block_fraction = 0;
  /// Distinct values in a sample of entries (at most 1024), and the sample size.
  std::int64_t distinct_values = 0, value_sample = 0;
  /// Fraction of entries with |j - i| <= 4096, and the largest |j - i|.
  double near_fraction = 1;
  std::int64_t bandwidth = 0;
  std::uint64_t fingerprint = 0;  ///< hash of the dimensions and every (i, j)
  double seconds = 0;             ///< time compute_features took

  /// Coefficient of variation of the row lengths (0 for no entries).
  double row_cv() const { return row_mean > 0 ? row_stddev / row_mean : 0.0; }
  /// "fingerprint-NROWSxNCOLS-NNZ", the key of a tuning file's format records.
  std::string fingerprint_string() const {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%016llx-%lldx%lld-%lld", (unsigned long long)fingerprint,
                  (long long)nrows, (long long)ncols, (long long)nnz);
    return buf;
  }
};

namespace impl {

/// Where compute_features's kernel leaves its results: host-pinned memory on CUDA (the host
/// reads them after one fence, no copy), the device's memory elsewhere.
template <class Device>
struct feature_readback {
  using space = typename Device::memory_space;
};
#if defined(KOKKOS_ENABLE_CUDA)
template <class Memory>
struct feature_readback<Kokkos::Device<Kokkos::Cuda, Memory>> {
  using space = Kokkos::CudaHostPinnedSpace;
};
#endif

/// The device buffers compute_features reuses between calls on one memory space (guarded by
/// the mutex; released when Kokkos finalizes).
template <class Device>
struct FeatureScratch {
  std::mutex mutex;
  /// the finished-team counter (GPUs) and the two maxima (CPU backends); zero between calls
  Kokkos::View<int*, Device> state;
  /// the output (fs_count sums and fm_count maxima as doubles), then the value sample
  Kokkos::View<unsigned char*, typename feature_readback<Device>::space> io;
  Kokkos::View<double*, Device> partials;
  /// two diagonal bitmaps of `words` words each, used in turn: a call uses the clean one and
  /// zeroes the other (its first dirty[other] words), so no call fills a bitmap before its pass
  Kokkos::View<unsigned*, Device> bits;
  std::size_t words = 0;
  std::size_t dirty[2] = {0, 0};
  int next = 0;
};

template <class Device>
FeatureScratch<Device>& feature_scratch() {
  static FeatureScratch<Device>* s = [] {
    auto* p = new FeatureScratch<Device>();
    Kokkos::push_finalize_hook([p] {
      p->state = {};
      p->io = {};
      p->partials = {};
      p->bits = {};
      p->words = 0;
      p->dirty[0] = p->dirty[1] = 0;
    });
    return p;
  }();
  return *s;
}

/// Offset of the sample in FeatureScratch::io.
constexpr std::size_t feature_sample_at = ((fs_count + fm_count) * sizeof(double) + 15) / 16 * 16;

/// The number of distinct values among n values of `bytes` bytes each at `data`, compared bit
/// for bit (open addressing; O(n)).
inline std::int64_t count_distinct_values(const unsigned char* data, std::size_t n,
                                          std::size_t bytes) {
  std::size_t size = 16;
  while (size < 2 * n) size *= 2;
  std::vector<std::uint32_t> slot(size, 0);  // index + 1 of a value, 0 = empty
  std::int64_t distinct = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char* v = data + i * bytes;
    std::uint64_t h = 0;
    for (std::size_t b = 0; b < bytes; b += 8) {
      std::uint64_t w = 0;
      std::memcpy(&w, v + b, bytes - b < 8 ? bytes - b : 8);
      h = feature_mix(h ^ w);
    }
    for (std::size_t s = h & (size - 1);; s = (s + 1) & (size - 1)) {
      if (slot[s] == 0) {
        slot[s] = std::uint32_t(i + 1);
        ++distinct;
        break;
      }
      if (std::memcmp(data + (slot[s] - 1) * bytes, v, bytes) == 0) break;
    }
  }
  return distinct;
}

}  // namespace impl

/// The features of `a`, computed on its device (one pass over the row offsets and the column
/// indices; on GPUs one launch, whose results and sample of values the host reads after one
/// fence). O(nrows + nnz).
template <class S, class D>
MatrixFeatures compute_features(const CsrMatrix<S, int, int, D>& a) {
  using device = impl::device_t<D>;
  using exec = typename device::execution_space;
  using csr = CsrMatrix<S, int, int, D>;
  using io_space = typename impl::feature_readback<device>::space;
  constexpr bool gpu = impl::is_gpu_space<exec>();
  const auto t0 = std::chrono::steady_clock::now();
  MatrixFeatures f;
  f.nrows = a.nrows();
  f.ncols = a.ncols();
  f.nnz = a.nnz();
  const std::int64_t nhacks = (f.nrows + impl::feature_hack - 1) / impl::feature_hack;
  // the value sample: entries at multiples of stride x feature_chunk, at most max_sample
  const std::int64_t nchunks16 = (f.nnz + impl::feature_chunk - 1) / impl::feature_chunk;
  constexpr std::int64_t max_sample = impl::feature_max_sample;
  const std::int64_t stride = nchunks16 > 0 ? (nchunks16 + max_sample - 1) / max_sample : 0;
  const std::int64_t nsample = stride > 0 ? (nchunks16 + stride - 1) / stride : 0;
  const std::size_t nwords = std::size_t((f.nrows + f.ncols + 30) / 32 + 1);
  // chunk items: feature_chunk entries each on CPUs; on GPUs fewer while that leaves at most
  // 2^15 items (matrices under 512k entries: more lanes, shorter chains of dependent loads).
  // H100, 18 shared matrices of 4k-600k entries (docs/PERFORMANCE.md, run 9): with at most
  // 2^20 items a call took 1.7-7.4 products of CSR, with at most 2^15 1.2-4.2 (fewer teams,
  // each paying its row search, barriers and fence once)
  std::int64_t chunk_len = impl::feature_chunk;
  constexpr std::int64_t items_max = std::int64_t(1) << 15;
  if (gpu)
    while (chunk_len > 1 && (f.nnz + chunk_len / 2 - 1) / (chunk_len / 2) <= items_max)
      chunk_len /= 2;
  const std::int64_t nchunks = (f.nnz + chunk_len - 1) / chunk_len;
  // GPUs: teams of feature_warps warps, one item per lane
  constexpr int feature_warps = 8;
  constexpr int lanes = impl::Warp<exec>::size;
  const std::int64_t per_team = std::int64_t(feature_warps) * lanes;
  const std::int64_t nitems = nhacks + nchunks;
  const std::int64_t nteams = (nitems + per_team - 1) / per_team;
  const std::size_t io_bytes = impl::feature_sample_at + std::size_t(max_sample) * sizeof(S);

  auto& scratch = impl::feature_scratch<device>();
  std::lock_guard<std::mutex> lock(scratch.mutex);
  // allocations (zero-filled) happen only when a buffer grows: on small matrices one costs
  // more than the pass
  if (scratch.state.extent(0) == 0)
    scratch.state = Kokkos::View<int*, device>("spk::features::state", 1 + impl::fm_count);
  if (scratch.io.extent(0) < io_bytes)
    scratch.io = Kokkos::View<unsigned char*, io_space>("spk::features::io", io_bytes);
  if (gpu && scratch.partials.extent(0) < std::size_t(nteams) * impl::fp_count)
    scratch.partials = Kokkos::View<double*, device>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::features::partials"),
        std::size_t(nteams) * impl::fp_count * 5 / 4);
  if (scratch.words < nwords) {
    scratch.words = nwords + nwords / 4;
    scratch.bits = Kokkos::View<unsigned*, device>("spk::features::bits", 2 * scratch.words);
    scratch.dirty[0] = scratch.dirty[1] = 0;
  }
  const int cur = scratch.next, other = 1 - cur;
  const auto bitmap = [&](int which, std::size_t n) {
    const std::size_t at = std::size_t(which) * scratch.words;
    return Kokkos::subview(scratch.bits, std::make_pair(at, at + n));
  };
  const auto io = scratch.io;
  const auto state = scratch.state;
  Kokkos::View<int*, device, Kokkos::MemoryUnmanaged> maxes(state.data() + 1, impl::fm_count);
  Kokkos::View<double*, io_space, Kokkos::MemoryUnmanaged> out(
      reinterpret_cast<double*>(io.data()), impl::fp_count);
  Kokkos::View<S*, io_space, Kokkos::MemoryUnmanaged> sample(
      reinterpret_cast<S*>(io.data() + impl::feature_sample_at), std::size_t(nsample));
  const auto bits = bitmap(cur, nwords);
  using kernel_type =
      impl::FeatureKernel<typename csr::row_map_type, typename csr::index_type,
                          typename csr::values_type, decltype(sample), decltype(bits),
                          decltype(maxes)>;
  kernel_type k{impl::fs_count, a.row_map(), a.col_idx(), a.values(), sample, bits,   maxes,
                f.nrows,        f.ncols,     f.nnz,       nhacks,     stride, chunk_len};
  // results: fs_count sums and fm_count maxima (doubles), then the sample's bytes, as the host
  // reads them: the pinned buffer itself on CUDA, else a copy
  const std::size_t result_bytes = impl::feature_sample_at + std::size_t(nsample) * sizeof(S);
  std::vector<unsigned char> host;
  const unsigned char* result = nullptr;
  double sums[impl::fs_count] = {};
  int mx[impl::fm_count] = {};
  if (nitems > 0) {
    if constexpr (gpu) {
      Kokkos::View<double*, device, Kokkos::MemoryUnmanaged> partial(
          scratch.partials.data(), std::size_t(nteams) * impl::fp_count);
      kernel_type kg = k;
      kg.atomic_maxima = false;  // maxima reduced with the sums
      const auto clear = bitmap(other, scratch.dirty[other]);
      const std::int64_t max_rows = per_team * chunk_len + 4;
      using team_kernel = impl::FeatureTeamKernel<kernel_type, decltype(partial),
                                                  decltype(state), decltype(out), decltype(clear)>;
      team_kernel tk{kg, partial, state, out, clear, nitems, nteams, feature_warps, max_rows};
      // four teams of 256 per multiprocessor (64 registers; without the bound the kernel took
      // 76 and three teams fit: on H100 the large matrices' pass was 10-20% slower)
      static_assert(feature_warps * lanes == 256, "the launch bounds below");
      using policy = Kokkos::TeamPolicy<exec, Kokkos::LaunchBounds<256, 4>>;
      Kokkos::parallel_for(
          "spk::features",
          policy(int(nteams), feature_warps, lanes)
              .set_scratch_size(
                  0, Kokkos::PerTeam(team_kernel::scratch_bytes(feature_warps, max_rows))),
          tk);
      scratch.dirty[cur] = nwords;
      scratch.dirty[other] = 0;
      scratch.next = other;
      if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, io_space>::accessible) {
        exec().fence();
        result = io.data();
      } else {
        host.resize(result_bytes);
        Kokkos::deep_copy(
            Kokkos::View<unsigned char*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                host.data(), host.size()),
            Kokkos::subview(io, std::make_pair(std::size_t(0), host.size())));
        result = host.data();
      }
      std::memcpy(sums, result, sizeof sums);
      double m[impl::fm_count];
      std::memcpy(m, result + sizeof sums, sizeof m);
      for (int q = 0; q < impl::fm_count; ++q) mx[q] = int(m[q]);
    } else {
      Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> sums_view(
          sums, impl::fs_count);
      Kokkos::parallel_reduce("spk::features", impl::Range64<exec>(0, nitems), k, sums_view);
      exec().fence();
      // host memory: read the maxima and the sample, then leave the state and bitmap zero
      for (int q = 0; q < impl::fm_count; ++q) mx[q] = maxes(q);
      host.resize(result_bytes);
      std::memcpy(host.data() + impl::feature_sample_at, sample.data(),
                  std::size_t(nsample) * sizeof(S));
      result = host.data();
      Kokkos::deep_copy(state, 0);
      Kokkos::deep_copy(bits, 0u);
    }
  }
  // (nitems == 0: no entries, no sample)
  const unsigned char* hs = result ? result + impl::feature_sample_at : nullptr;

  const double n = double(f.nrows), nnz = double(f.nnz);
  f.row_max = mx[impl::fm_row_max];
  f.bandwidth = mx[impl::fm_offset_max];
  f.empty_rows = std::int64_t(sums[impl::fs_empty]);
  f.row_mean = f.nrows > 0 ? nnz / n : 0.0;
  const double var = f.nrows > 0 ? sums[impl::fs_len2] / n - f.row_mean * f.row_mean : 0.0;
  f.row_stddev = var > 0 ? std::sqrt(var) : 0.0;
  f.diagonals = std::int64_t(sums[impl::fs_diagonals]);
  if (f.nnz > 0) {
    f.ell_padding = double(f.row_max) * n / nnz;
    f.hack_padding = sums[impl::fs_hack_slots] / nnz;
    f.dia_padding = double(f.diagonals) * n / nnz;
    f.block_fraction = sums[impl::fs_same] / nnz;
    f.near_fraction = sums[impl::fs_near] / nnz;
  }
  std::uint64_t h = 0;
  for (int p = 0; p < 4; ++p) h += std::uint64_t(sums[impl::fs_hash0 + p]) << (16 * p);
  f.fingerprint = impl::feature_mix(h ^ impl::feature_mix(std::uint64_t(f.nrows) * 0x100000001ULL +
                                                          std::uint64_t(f.ncols)));
  // distinct values of the sample, compared bit for bit
  f.value_sample = nsample;
  f.distinct_values = impl::count_distinct_values(hs, std::size_t(nsample), sizeof(S));
  f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return f;
}

/// The candidate configurations select_format ranks, for value type S on a GPU (`gpu`) or a CPU
/// backend. Each has a fixed name (FormatConfig::label), the key of tuning-file records.
template <class S>
std::vector<FormatConfig> format_candidates(bool gpu) {
  std::vector<FormatConfig> c;
  c.push_back(FormatConfig::of(Format::csr, "csr"));
  if (gpu) {  // a warp per row, eight rows per team: the fastest CSR launch on most small matrices
    FormatConfig v32 = FormatConfig::of(Format::csr, "csr-v32");
    v32.csr.variant = CsrSpmvVariant::vector;
    v32.csr.vector_length = 32;
    v32.csr.team_size = 8;
    c.push_back(v32);
    for (int v : {16, 8}) {  // shorter rows
      FormatConfig vc = FormatConfig::of(Format::csr, "csr-v" + std::to_string(v));
      vc.csr.variant = CsrSpmvVariant::vector;
      vc.csr.vector_length = v;
      vc.csr.team_size = 256 / v;
      c.push_back(vc);
    }
  }
  FormatConfig balanced = FormatConfig::of(Format::csr, "csr-balanced");
  balanced.csr.variant = CsrSpmvVariant::balanced;
  c.push_back(balanced);
  if (gpu) {
    FormatConfig warp = FormatConfig::of(Format::csr, "csr-warp");
    warp.csr.variant = CsrSpmvVariant::warp;
    c.push_back(warp);
  }
  c.push_back(FormatConfig::of(Format::ell, "ell"));
  if (gpu) {  // eight threads per row: long rows
    FormatConfig ell8 = FormatConfig::of(Format::ell, "ell-t8");
    ell8.ell.threads_per_row = 8;
    c.push_back(ell8);
  }
  c.push_back(FormatConfig::of(Format::hll, "hll"));
  FormatConfig hll_global = FormatConfig::of(Format::hll, "hll-global");
  hll_global.hll_options.sort = HllSort::global;
  c.push_back(hll_global);
  if (gpu) {  // four threads per row: rows longer than a few dozen entries
    FormatConfig hll4 = FormatConfig::of(Format::hll, "hll-t4");
    hll4.hll.threads_per_row = 4;
    c.push_back(hll4);
  }
  c.push_back(FormatConfig::of(Format::dia, "dia"));
  c.push_back(FormatConfig::of(Format::hdia, "hdia"));
  c.push_back(FormatConfig::of(Format::hyb, "hyb"));
  c.push_back(FormatConfig::of(Format::balanced_coo, "balanced-coo"));
  c.push_back(FormatConfig::of(Format::compressed_coo, "compressed-coo"));
  if (format_supports<S>(Format::hisparse))
    c.push_back(FormatConfig::of(Format::hisparse, "hisparse"));
  return c;
}

/// The cost model's estimate for one configuration.
struct CostEstimate {
  double bytes = 0;             ///< bytes one product moves (arrays, padding, x and y)
  double memory_bytes = 0;      ///< bytes the format holds
  double microseconds = 0;      ///< predicted time of one product
  bool feasible = true;         ///< false where the conversion would be refused (padding limit)
};

/// Options of select_format.
struct SelectOptions {
  Mode mode = Mode::N;  ///< the product the choice is for
  /// Time the `trial_candidates` best-ranked candidates (and the default CSR; every candidate
  /// for a cache-resident matrix, see cache_bytes) and take the fastest; false: the cost
  /// model's first choice, nothing converted or timed.
  bool trial = false;
  int trial_candidates = 4;
  /// Untimed products per candidate; cache-resident candidates (timed in 4 rounds, see
  /// select_format) take at least 10 before each round.
  int trial_warmup = 3;
  int trial_repeat = 10;  ///< timed products per candidate, median (at least 40 when cached)
  /// Formats holding more bytes than this are excluded (0: no limit): the candidates are then
  /// converted in ranked order until one fits (feature-only) or before they are timed.
  std::size_t memory_budget_bytes = 0;
  /// Tuning file of trial results (empty: none). With trial, a record for this (GPU, scalar,
  /// fingerprint) is used without measuring; a new trial result is stored there.
  std::string tuning_file;
  /// Copy bandwidth (bytes per microsecond) and launch latency (microseconds) of the model;
  /// 0 = defaults for the backend.
  double bandwidth = 0, launch_us = 0;
  /// Matrices whose CSR arrays and vectors are smaller than this are modelled as cache-resident
  /// (launch-bound) and, with trial, every candidate is timed; 0 = default (32 MiB on GPUs, half
  /// an H100's L2; none on CPU backends).
  std::size_t cache_bytes = 0;
};

/// One ranked candidate of a choice.
struct RankedCandidate {
  FormatConfig config;
  CostEstimate estimate;
  double measured_ms = -1;  ///< median trial time (-1: not timed)
  std::string note;         ///< why it was not timed or could not be built, if so
};

/// What select_format chose and why.
struct FormatChoice {
  FormatConfig config;
  MatrixFeatures features;
  std::vector<RankedCandidate> ranked;  ///< every candidate, best predicted first
  bool trial = false;                   ///< chosen by measurement
  bool from_tuning_file = false;        ///< taken from a tuning-file record
  double seconds = 0;                   ///< total time of select_format (features included)
};

namespace impl {

/// Bandwidth efficiency and kernel launches of each candidate under the cost model, from the
/// suite measurements in docs/PERFORMANCE.md (fraction of the copy bandwidth a format's kernels
/// reach on its own bytes).
inline double format_efficiency(const FormatConfig& c, const MatrixFeatures& f) {
  // measured on an H100 over the large matrices of the GPU suite (docs/PERFORMANCE.md, issue 9):
  // bytes of the estimate over time and copy bandwidth, median per candidate
  const bool long_rows = f.row_mean > 32;  // one thread per row: few rows in flight
  const bool irregular_rows = f.row_cv() > 1.0 || f.row_max > 64 * (f.row_mean + 1);
  double e = 0.5;
  switch (c.format) {
    case Format::csr:
      if (c.csr.variant == CsrSpmvVariant::balanced) e = 0.57;
      else if (c.csr.variant == CsrSpmvVariant::warp) e = 0.55;
      else if (c.csr.variant == CsrSpmvVariant::vector)  // lanes idle on short rows; a long
        // row holds its team (arrow.mtx: 108x slower with 8 lanes per row than the best)
        e = (irregular_rows ? 0.05 : 0.61) *
            std::min(1.0, (f.row_mean + 4) / double(std::max(1, c.csr.vector_length)));
      else e = irregular_rows ? 0.5 : 0.61;
      break;
    case Format::ell:
      e = c.ell.threads_per_row >= 8 ? (long_rows ? 0.75 : 0.40) : (long_rows ? 0.55 : 0.80);
      break;
    case Format::hll:
      if (c.hll.threads_per_row >= 4) e = long_rows ? 0.70 : 0.47;
      else e = c.hll_options.sort == HllSort::global ? 0.68 : (long_rows ? 0.62 : 0.76);
      break;
    case Format::dia: e = 0.65; break;
    case Format::hdia: e = 0.62; break;
    case Format::hyb: e = long_rows ? 0.6 : 0.74; break;
    case Format::balanced_coo: e = 0.65; break;
    case Format::compressed_coo: e = 0.66; break;  // plus its decoding bound (estimate_cost)
    case Format::hisparse: e = 0.41; break;
  }
  // x gathered from far off the diagonal (power-law, circuit): every format slows down
  return f.near_fraction < 0.5 ? 0.45 * e : e;
}

inline double format_launches(const FormatConfig& c, const MatrixFeatures& f) {
  const bool irregular = f.row_cv() > 0.5;
  switch (c.format) {
    case Format::csr:
      return c.csr.variant == CsrSpmvVariant::automatic ? 1.0
             : c.csr.variant == CsrSpmvVariant::vector  ? 0.99
                                                         : 1.5;
    case Format::ell: return c.ell.threads_per_row >= 8 ? 1.15 : 1.1;
    case Format::hll: return irregular ? 2.0 : 1.2;
    case Format::dia: return 1.1;
    case Format::hdia: return 1.3;
    case Format::hyb: return irregular ? 2.0 : 1.2;
    case Format::balanced_coo: return 1.5;
    case Format::compressed_coo: return 1.3;
    case Format::hisparse: return 3.0;
  }
  return 2.0;
}

}  // namespace impl

/// The cost model's estimate of one product with configuration c on a matrix with features f
/// and values of `value_bytes` bytes (see the file comment). bandwidth in bytes per microsecond;
/// cache_bytes: a cache that holds matrices smaller than it (0: none).
inline CostEstimate estimate_cost(const FormatConfig& c, const MatrixFeatures& f,
                                  std::size_t value_bytes, double bandwidth, double launch_us,
                                  std::size_t cache_bytes = 0) {
  const double sb = double(value_bytes), ib = 4.0;
  const double n = double(f.nrows), m = double(f.ncols), nnz = double(f.nnz);
  const double csr_bytes = nnz * (sb + ib) + (n + 1) * ib;
  const double vectors = (m + n) * sb;
  const double limit = std::max(20.0 * csr_bytes, 65536.0);  // PaddingLimit's default
  CostEstimate e;
  switch (c.format) {
    case Format::csr: e.memory_bytes = csr_bytes; break;
    case Format::ell: e.memory_bytes = f.ell_padding * nnz * (sb + ib) + n * ib; break;
    case Format::hll:
      // the sliced layout before sorting and tail; both only reduce it (at most to about the
      // entries plus a permutation)
      e.memory_bytes = std::max(1.0, std::min(f.hack_padding, 2.0)) * nnz * (sb + ib) +
                       n * ib * (c.hll_options.sort == HllSort::none ? 1.0 : 2.0);
      break;
    case Format::dia:
      e.memory_bytes = f.dia_padding * nnz * sb + double(f.diagonals) * ib;
      break;
    case Format::hdia:  // each 32-row hack stores its own diagonals: between the entries and DIA
      e.memory_bytes = std::max(1.0, 0.8 * f.dia_padding) * nnz * sb + n / 32 * 8 * ib;
      break;
    case Format::hyb:
      e.memory_bytes = (f.row_cv() > 0.5 ? 1.3 : std::min(f.ell_padding, 1.3)) * nnz * (sb + ib) +
                       n * ib;
      break;
    case Format::balanced_coo: e.memory_bytes = nnz * (sb + 2 * ib); break;
    case Format::compressed_coo: {
      // 8- or 16-bit column offsets, 8-bit row offsets; 1-byte values when a table of 256
      // values covers them
      const double idx = f.near_fraction > 0.9 ? 2.5 : 3.5;
      const bool table =
          value_bytes <= 8 && f.value_sample > 0 && f.distinct_values <= 64 &&
          double(f.distinct_values) < 0.05 * double(f.value_sample);
      e.memory_bytes = nnz * (idx + (table ? 1.0 : sb)) + nnz / 512 * 16;
      break;
    }
    case Format::hisparse: e.memory_bytes = nnz * (sb + 2.5) + nnz / 64 * 16; break;
  }
  if ((c.format == Format::ell || c.format == Format::dia) && e.memory_bytes > limit)
    e.feasible = false;
  if (c.format == Format::dia && f.diagonals > 4096) e.feasible = false;
  e.bytes = e.memory_bytes + vectors;
  double moved = e.bytes / impl::format_efficiency(c, f);
  // compressed COO decodes each entry: measured at about the time of moving 14 bytes per entry
  // at the copy bandwidth (13-16 on the large stencils and the replicated FEM matrix with the
  // next chunk loaded ahead; regular x; slower with scattered x like every format)
  if (c.format == Format::compressed_coo)
    moved = std::max(moved, nnz * 14.0 / (f.near_fraction < 0.5 ? 0.45 : 1.0));
  // a matrix whose arrays fit the GPU's L2 cache (cache_bytes) is bound by launches: its bytes
  // are read at several times the copy bandwidth
  if (cache_bytes > 0 && csr_bytes + vectors < double(cache_bytes)) moved /= 8;
  e.microseconds = impl::format_launches(c, f) * launch_us + moved / bandwidth;
  return e;
}

namespace impl {

/// Appends to t the times in milliseconds of `repeat` fenced runs of f after `warmup` runs.
template <class ExecSpace, class F>
void time_runs(const F& f, int warmup, int repeat, std::vector<double>& t) {
  for (int i = 0; i < warmup; ++i) f();
  ExecSpace().fence();
  for (int i = 0; i < std::max(1, repeat); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    ExecSpace().fence();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count());
  }
}

/// The median of t (not empty; reorders it).
inline double median_of(std::vector<double>& t) {
  std::nth_element(t.begin(), t.begin() + std::ptrdiff_t(t.size() / 2), t.end());
  return t[t.size() / 2];
}

/// Median time in milliseconds of `repeat` fenced runs of f after `warmup` runs.
template <class ExecSpace, class F>
double median_ms(const F& f, int warmup, int repeat) {
  std::vector<double> t;
  time_runs<ExecSpace>(f, warmup, repeat, t);
  return median_of(t);
}

/// Trial rounds of cache-resident candidates (see select_format).
constexpr int trial_rounds = 4;

}  // namespace impl

/// Chooses a format for `a` (see the file comment); with `chosen`, also converts `a` into it
/// (the best-ranked candidate that accepts `a`, when the model's first choice refuses it by a
/// padding limit). Throws std::invalid_argument when nothing fits the memory budget and
/// std::runtime_error when a tuning file cannot be read or written.
template <class S, class D>
FormatChoice select_format(const CsrMatrix<S, int, int, D>& a, const SelectOptions& options = {},
                           Matrix<S, D>* chosen = nullptr) {
  using exec = typename impl::device_t<D>::execution_space;
  constexpr bool gpu = impl::is_gpu_space<exec>();
  const auto t0 = std::chrono::steady_clock::now();
  require(options.trial_candidates >= 1 && options.trial_repeat >= 1 && options.trial_warmup >= 0,
          "spk::select_format", "trial_candidates = ", options.trial_candidates,
          " and trial_repeat = ", options.trial_repeat, " must be >= 1, trial_warmup = ",
          options.trial_warmup, " >= 0");
  FormatChoice out;
  out.features = compute_features(a);
  const MatrixFeatures& f = out.features;
  const double bw = options.bandwidth > 0 ? options.bandwidth : (gpu ? 3.0e6 : 3.0e4);
  const double launch = options.launch_us > 0 ? options.launch_us : (gpu ? 4.0 : 2.0);
  const std::size_t cache =
      options.cache_bytes > 0 ? options.cache_bytes : (gpu ? std::size_t(32) << 20 : 0);
  const bool cached = cache > 0 && double(f.nnz) * double(sizeof(S) + 4) +
                                       double(f.nrows + f.ncols) * double(sizeof(S)) <
                                   double(cache);
  // the fixed list, built once per value type (a small matrix's selection is tens of
  // microseconds, and building the list's named configurations took a few of them)
  static const std::vector<FormatConfig> candidates = format_candidates<S>(gpu);
  out.ranked.reserve(candidates.size());
  for (const auto& c : candidates) {
    RankedCandidate r;
    r.config = c;
    r.estimate = estimate_cost(c, f, sizeof(S), bw, launch, cache);
    if (!r.estimate.feasible) r.note = "refused by the padding limit";
    out.ranked.push_back(r);
  }
  // feasible candidates first, then by predicted time (stable: ties keep the list order, CSR
  // first)
  std::stable_sort(out.ranked.begin(), out.ranked.end(),
                   [](const RankedCandidate& x, const RankedCandidate& y) {
                     if (x.note.empty() != y.note.empty()) return x.note.empty();
                     return x.estimate.microseconds < y.estimate.microseconds;
                   });
  out.config = out.ranked.front().config;

  const auto finish = [&](Matrix<S, D>* m) {
    if (chosen) *chosen = m ? *m : Matrix<S, D>(a, out.config);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
  };
  // builds r's matrix into m; false (with r.note saying why) when the format refuses the matrix
  // or holds more than the memory budget
  const auto build = [&](RankedCandidate& r, Matrix<S, D>& m) {
    try {
      m = Matrix<S, D>(a, r.config);
    } catch (const std::invalid_argument& e) {  // PaddingLimitExceeded and refused options
      r.note = e.what();
      return false;
    }
    if (options.memory_budget_bytes > 0 && m.memory_bytes() > options.memory_budget_bytes) {
      r.note = "over the memory budget (" + std::to_string(m.memory_bytes()) + " bytes)";
      m = Matrix<S, D>();
      return false;
    }
    return true;
  };
  if (!options.trial) {
    if (!chosen && options.memory_budget_bytes == 0) return finish(nullptr);
    // the best-ranked candidate that accepts the matrix (a padding limit the model did not
    // foresee) and whose actual bytes fit the budget
    for (auto& r : out.ranked) {
      Matrix<S, D> m;
      if (!r.note.empty() || !build(r, m)) continue;
      out.config = r.config;
      return finish(&m);
    }
    throw_invalid_argument("spk::select_format", "no format accepts the matrix within the memory "
                           "budget of ", options.memory_budget_bytes, " bytes");
  }

  const std::string gpu_name = impl::device_name<exec>();
  TuningFile file;
  if (!options.tuning_file.empty()) {
    file = TuningFile::load(options.tuning_file);
    if (const FormatRecord* rec =
            file.find_format(gpu_name, scalar_traits<S>::name, f.fingerprint_string())) {
      for (const auto& r : out.ranked)
        if (r.config.name() == rec->config && r.note.empty()) {
          out.config = r.config;
          out.trial = true;
          out.from_tuning_file = true;
          return finish(nullptr);
        }
    }
  }

  // time the best-ranked candidates and the default CSR
  const std::size_t nx = options.mode == Mode::N ? std::size_t(a.ncols()) : std::size_t(a.nrows());
  const std::size_t ny = options.mode == Mode::N ? std::size_t(a.nrows()) : std::size_t(a.ncols());
  Kokkos::View<S*, impl::device_t<D>> x("spk::select_format::x", nx), y("spk::select_format::y", ny);
  Kokkos::deep_copy(x, scalar_traits<S>::one());
  const S one = scalar_traits<S>::one(), zero = scalar_traits<S>::zero();
  double best = -1, csr_ms = -1;
  Matrix<S, D> best_matrix;
  int timed = 0;
  const auto take = [&](RankedCandidate& r, const Matrix<S, D>& m) {
    if (r.config.name() == "csr") csr_ms = r.measured_ms;
    if (best < 0 || r.measured_ms < best) {
      best = r.measured_ms;
      out.config = r.config;
      best_matrix = m;
    }
  };
  const auto product = [&](const Matrix<S, D>& m) { spmv(options.mode, one, m, x, zero, y); };
  // cache-resident candidates, all kept: a product takes microseconds and a slow spell of the
  // machine (milliseconds) would favour whichever candidates it missed, so each candidate's
  // repetitions are timed in trial_rounds blocks (each after its own warm-up: the product
  // before a block was another format's), the blocks taken in turn over the candidates
  std::vector<std::pair<RankedCandidate*, Matrix<S, D>>> resident;
  for (auto& r : out.ranked) {
    const bool is_default_csr = r.config.name() == "csr";
    // cache-resident matrices: every candidate (each product takes microseconds)
    if (!r.note.empty() || (!cached && timed >= options.trial_candidates && !is_default_csr))
      continue;
    Matrix<S, D> m;
    if (!build(r, m)) continue;
    ++timed;
    if (cached) {
      resident.emplace_back(&r, std::move(m));
      continue;
    }
    r.measured_ms = impl::median_ms<exec>([&] { product(m); }, options.trial_warmup,
                                          options.trial_repeat);
    take(r, m);
  }
  if (!resident.empty()) {
    // more warm-up and repetitions than for large matrices separate candidates whose medians
    // differ by a microsecond. (Timing them round-robin product by product was tried on the
    // H100, run 6: each product then depended on what the one before left in the caches.)
    const int warmup = std::max(options.trial_warmup, 10);
    const int repeat = std::max(options.trial_repeat, 40);
    std::vector<std::vector<double>> t(resident.size());
    for (int round = 0; round < impl::trial_rounds; ++round)
      for (std::size_t c = 0; c < resident.size(); ++c)
        impl::time_runs<exec>([&] { product(resident[c].second); }, warmup,
                              (repeat + impl::trial_rounds - 1) / impl::trial_rounds, t[c]);
    for (std::size_t c = 0; c < resident.size(); ++c) {
      resident[c].first->measured_ms = impl::median_of(t[c]);
      take(*resident[c].first, resident[c].second);
    }
  }
  require(best >= 0, "spk::select_format", "no format fits the memory budget of ",
          options.memory_budget_bytes, " bytes");
  out.trial = true;
  if (!options.tuning_file.empty()) {
    file.set_format({gpu_name, scalar_traits<S>::name, f.fingerprint_string(), out.config.name(),
                     best, csr_ms});
    file.save(options.tuning_file);
  }
  return finish(&best_matrix);
}

/// `a` in the format select_format chooses with `options`.
template <class S, class D>
Matrix<S, D> make_matrix(const CsrMatrix<S, int, int, D>& a, const SelectOptions& options = {},
                         FormatChoice* choice = nullptr) {
  Matrix<S, D> m;
  FormatChoice c = select_format(a, options, &m);
  if (choice) *choice = std::move(c);
  return m;
}

}  // namespace spk
