// spk-bench: SpMV benchmark of spk's formats and schedules against cuSPARSE and Kokkos Kernels.
//
// Every (matrix, format, variant) row reports median/min/max time over --repeat fenced runs
// after --warmup runs, GFLOP/s, effective GB/s under the minimum-bytes model below, the fraction
// of the device copy bandwidth measured in the same process, the max relative error against the
// sequential host reference and the memory of the format.
//
// Minimum-bytes model (the bytes any SpMV must move once): the matrix in CSR with 32-bit indices
// (nnz values + nnz column indices + nrows + 1 row offsets), x read once and y written once
// (beta = 0 in timed runs). The same model is used for every format, so GB/s compare formats.
#include <Kokkos_Core.hpp>
#include <KokkosSparse_spmv.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <spk/convert.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/formats/balanced_coo.hpp>
#include <spk/formats/compressed_coo.hpp>
#include <spk/formats/dia.hpp>
#include <spk/formats/ell.hpp>
#include <spk/formats/hdia.hpp>
#include <spk/formats/hisparse.hpp>
#include <spk/formats/hll.hpp>
#include <spk/formats/hyb.hpp>
#include <spk/generate.hpp>
#include <spk/io/matrix_market.hpp>
#include <spk/kokkos_kernels_interop.hpp>
#include <spk/matrix.hpp>
#include <spk/reference.hpp>
#include <spk/select_format.hpp>
#include <spk/spmv.hpp>

#include "bench_cases.hpp"
#include "bench_util.hpp"
#include "compound_bench.hpp"
#include "cusparse_baseline.hpp"

namespace {

using spk_bench::case_name;
using spk_bench::CaseSpec;
using spk_bench::load_case;
using spk_bench::parse_case;
using Device = Kokkos::DefaultExecutionSpace::device_type;

const char* const usage_text = R"(usage: spk-bench [options]
  --matrix FILE.mtx[*K]  Matrix Market file, optionally K copies on the diagonal (repeatable)
  --gen NAME:SIZE[:k=v]  generated matrix (repeatable); see the list below
  --cases FILE           list of cases, one per line: a .mtx path, FILE.mtx*K (K copies
                         on the diagonal) or a generator spec; '#' starts a comment and
                         ${VAR} is taken from the environment
  --format LIST|all      comma-separated formats of the registry below (default all)
  --scalar TYPE          float | double | complex64 | complex128 (default double);
                         quaternion32|64 and block{2,3,4,6}_{32,64} (and --format compound
                         with a complex TYPE) run the compound benchmark: see
                         spk-bench --scalar quaternion64 --help
  --mode N|T|H           op(A) (default N; H only for complex)
  --warmup N             untimed runs before timing (default 5)
  --repeat N             timed runs; the median is reported (default 50)
  --rounds N             split each configuration's timed runs into N blocks, each after
                         its own warm-up, taken in turn over all configurations of a
                         matrix (default 1: each configuration's runs back to back); the
                         blocks spread over the whole timing, so a slow spell of the
                         machine does not land on one configuration only
  --variants LIST        comma-separated substrings: time only the variants whose name
                         contains one of them (defaults, "auto:..." and baselines are
                         always timed); for sweeps of one kernel family
  --json FILE            write the results as JSON
  --memory-only          no timing, on the host: memory per format and row statistics
  --help                 this text
Exit status: 0 success, 1 error, 2 bad usage, 3 a result disagreed with the reference.
)";

/// The format registry: every format spk-bench can time, in table order. A new format adds
/// one entry here and its candidates in bench_case.
struct FormatInfo {
  const char* name;
  const char* description;
  bool available;
};

#ifdef SPK_HAVE_CUSPARSE
constexpr bool have_cusparse = true;
#else
constexpr bool have_cusparse = false;
#endif

const std::vector<FormatInfo>& format_registry() {
  static const std::vector<FormatInfo> formats = {
      {"csr", "spk CSR, every schedule (auto: = the default heuristic's choice)", true},
      {"ell", "spk ELLPACK-R (column-major on GPUs, 128-byte pitch; row lengths)", true},
      {"hll",
       "spk hacked ELLPACK (hacks of 32, auto sort, tail; unsorted/64/16/sorted/no-tail variants)",
       true},
      {"dia", "spk DIA (occupied diagonals padded to full length)", true},
      {"hdia", "spk hacked DIA (hacks of 32 rows, each with its own diagonals)", true},
      {"hyb", "spk HYB (ELL of the classic automatic width + COO overflow)", true},
      {"balanced-coo", "spk balanced COO (chunks of B*K entries; B, K and accumulation variants)",
       true},
      {"compressed-coo",
       "spk compressed COO (8/16/32-bit index offsets, 256-value table; K, B, raw variants)",
       true},
      {"hisparse",
       "spk HiSparse (tree of 128 x 128 dense/COO nodes, stream schedule (-each, -runs variants), band, fused, per-bin, traverse, d64/d256 variants; "
       "float/double)",
       true},
      {"auto",
       "spk::Matrix in the format spk::select_format chooses: features only (features:NAME), "
       "with a trial of the best-ranked (trial:NAME), and the chosen format called directly "
       "(concrete:NAME); select_ms = time to choose",
       true},
      {"kokkoskernels", "KokkosSparse::spmv on a zero-copy view of the CSR arrays", true},
      {"cusparse-csr-alg1", "cusparseSpMV, CSR, CUSPARSE_SPMV_CSR_ALG1", have_cusparse},
      {"cusparse-csr-alg2", "cusparseSpMV, CSR, CUSPARSE_SPMV_CSR_ALG2", have_cusparse},
      {"cusparse-coo", "cusparseSpMV, COO, CUSPARSE_SPMV_COO_ALG1", have_cusparse},
      {"cusparse-csr-alg1-shared",
       "cusparse-csr-alg1 under cudaFuncCachePreferShared (Kokkos 3.4's device-wide default)",
       have_cusparse},
      {"cusparse-coo-shared", "cusparse-coo under cudaFuncCachePreferShared", have_cusparse},
      {"cusparse-sell", "cusparseSpMV, sliced ELL (slices of 32), CUSPARSE_SPMV_SELL_ALG1 (op = N)",
       have_cusparse},
  };
  return formats;
}

std::string registry_help() {
  std::string out = "\nFormats:\n";
  std::size_t width = 0;  // the longest name, then two spaces
  for (const auto& f : format_registry()) width = std::max(width, std::string(f.name).size());
  for (const auto& f : format_registry())
    out += std::string("  ") + f.name + std::string(width + 2 - std::string(f.name).size(), ' ') +
           f.description + (f.available ? "" : " (not in this build)") + "\n";
  return out;
}

struct Options {
  std::vector<std::string> cases;
  std::vector<std::string> formats{"all"};
  std::string scalar = "double";
  spk::Mode mode = spk::Mode::N;
  int warmup = 5;
  int repeat = 50;
  int rounds = 1;
  std::string json;
  bool memory_only = false;
  std::vector<std::string> variants;  ///< --variants: substrings (empty: every variant)
  std::string command;
};

struct Result {
  std::string matrix, format, variant;
  long long rows = 0, cols = 0, nnz = 0;
  double median_ms = 0, min_ms = 0, max_ms = 0, gflops = 0, gbps = 0, copy_fraction = 0;
  double rel_error = 0;
  /// Fraction of the copy bandwidth on the bytes the format itself must move: its arrays
  /// (memory_bytes) read once plus x read and y written once. Peers' memory is their arrays.
  double own_copy_fraction = 0;
  bool correct = true;
  std::size_t memory_bytes = 0;
  double select_ms = -1;  ///< format "auto": time select_format took (median of 21 for features)
};

struct RunInfo {
  std::string gpu, date, commit, command, scalar, mode;
  double copy_gbps = 0;
};

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "spk-bench: " << msg << "\n(see spk-bench --help)\n";
  std::exit(2);
}

int to_int(const std::string& opt, const std::string& v) {
  try {
    std::size_t pos = 0;
    const int n = std::stoi(v, &pos);
    if (pos != v.size() || n < 0) throw std::invalid_argument(v);
    return n;
  } catch (const std::exception&) {
    usage_error(opt + " expects a non-negative integer, got '" + v + "'");
  }
}

Options parse(int argc, char** argv) {
  Options o;
  o.command = spk_bench::command_line(argc, argv);
  if (argc == 1) {
    std::cout << usage_text << registry_help() << "\nGenerators:\n"
              << spk::generate::describe_generators();
    std::exit(0);
  }
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::cout << usage_text << registry_help() << "\nGenerators:\n"
                << spk::generate::describe_generators();
      std::exit(0);
    } else if (a == "--matrix" || a == "--gen") {
      o.cases.push_back(value());
    } else if (a == "--cases") {
      for (auto& c : spk_bench::read_cases(value())) o.cases.push_back(c);
    } else if (a == "--format") {
      o.formats = spk_bench::split_list(value(), ',');
    } else if (a == "--scalar") {
      o.scalar = value();
    } else if (a == "--mode") {
      try {
        o.mode = spk::parse_mode(value());
      } catch (const std::exception& e) {
        usage_error(e.what());
      }
    } else if (a == "--warmup") {
      o.warmup = to_int(a, value());
    } else if (a == "--repeat") {
      o.repeat = std::max(1, to_int(a, value()));
    } else if (a == "--rounds") {
      o.rounds = to_int(a, value());
      if (o.rounds < 1) usage_error("--rounds must be >= 1, got " + std::to_string(o.rounds));
    } else if (a == "--json") {
      o.json = value();
    } else if (a == "--variants") {
      o.variants = spk_bench::split_list(value(), ',');
      if (o.variants.empty()) usage_error("--variants needs at least one substring");
    } else if (a == "--memory-only") {
      o.memory_only = true;
    } else {
      usage_error("unknown option '" + a + "'");
    }
  }
  if (o.cases.empty()) usage_error("no matrix given (--matrix, --gen or --cases)");
  for (const auto& f : o.formats) {
    if (f == "all") continue;
    const FormatInfo* info = nullptr;
    for (const auto& r : format_registry())
      if (f == r.name) info = &r;
    if (!info) usage_error("unknown --format '" + f + "'" + registry_help());
    if (!info->available)
      std::cerr << "spk-bench: format '" << f << "' is not available in this build\n";
  }
  if (o.scalar != "float" && o.scalar != "double" && o.scalar != "complex64" &&
      o.scalar != "complex128")
    usage_error("unknown --scalar '" + o.scalar + "'");
  if (o.mode == spk::Mode::H && o.scalar.rfind("complex", 0) != 0)
    usage_error("--mode H needs a complex --scalar");
  return o;
}

/// --variants: a default ("default", "auto..."), a variant naming one of the substrings, or
/// every variant when none were given.
bool variant_wanted(const Options& o, const std::string& variant) {
  if (o.variants.empty() || variant == "default" || variant.rfind("auto", 0) == 0) return true;
  for (const auto& v : o.variants)
    if (variant.find(v) != std::string::npos) return true;
  return false;
}

bool wanted(const Options& o, const std::string& format) {
  for (const auto& f : o.formats)
    if (f == "all" || f == format) return true;
  return false;
}

/// spk's own formats, whose beta = 0 overwrites y (checked by poisoning y with NaN).
bool is_spk_format(const std::string& f) {
  return f == "auto" || f == "csr" || f == "ell" || f == "hll" || f == "dia" || f == "hdia" || f == "hyb" ||
         f == "balanced-coo" || f == "compressed-coo";
}

/// A timed candidate: its name, its memory and a call computing y = alpha op(A) x + beta y.
template <class S>
struct Candidate {
  std::string format, variant;
  std::size_t memory_bytes;
  std::function<void(S, S)> run;
  double select_ms = -1;
  /// format "auto", features only: one select_format call, returning its time in ms (timed in
  /// the rounds with the products; select_ms is then the median of those calls)
  std::function<double()> choose = {};
};

/// The CSR schedules measured: the default heuristic's choice first ("auto:..."), then the
/// variants it chooses among.
template <class Matrix>
std::vector<std::pair<std::string, spk::CsrSpmvParams>> csr_schedules(const Matrix& a,
                                                                      spk::Mode mode) {
  using V = spk::CsrSpmvVariant;
  constexpr bool gpu = spk::impl::is_gpu_space<typename Matrix::execution_space>();
  std::vector<std::pair<std::string, spk::CsrSpmvParams>> out;
  auto add = [&](spk::CsrSpmvParams p, const char* prefix = "") {
    const std::string name =
        spk::describe(spk::resolve_params(a, mode, p)) +
        (p.transpose == spk::TransposeMethod::explicit_ ? "-explicitT" : "");
    for (const auto& o : out)  // a schedule resolving to one already listed is measured once
      if (o.first == name) return;
    out.emplace_back(prefix + name, p);
  };
  add({}, "auto:");
  spk::CsrSpmvParams p;
  p.variant = V::thread;
  add(p);
  if (!gpu) {
    p.schedule = spk::SpmvSchedule::dynamic_chunks;
    add(p);
  }
  if (gpu) {
    for (int v : {4, 8, 16, 32}) {
      p = {};
      p.variant = V::vector;
      p.vector_length = v;
      add(p);
    }
    for (int v : {4, 8, 16, 32}) {  // team size and rows per vector around the default
      for (auto tr : {std::make_pair(512 / v, 1), std::make_pair(256 / v, 2),
                      std::make_pair(256 / v, 4), std::make_pair(128 / v, 4)}) {
        p = {};
        p.variant = V::vector;
        p.vector_length = v;
        p.team_size = tr.first;
        p.rows_per_thread = tr.second;
        add(p);
      }
    }
    p = {};
    p.variant = V::thread;
    p.rows_per_thread = 2;
    add(p);
    p.schedule = spk::SpmvSchedule::dynamic_chunks;
    add(p);
    // one row per thread loaded in chunks of 4 or 8 entries (the last one predicated), one and
    // two rows per thread
    for (int k : {4, 8}) {
      for (int r : {1, 2}) {
        p = {};
        p.variant = V::thread;
        p.entries_per_lane = k;
        p.rows_per_thread = r;
        add(p);
      }
    }
  }
  for (int c : gpu ? std::vector<int>{1024, 2048, 4096, 8192} : std::vector<int>{2048}) {
    for (int t : gpu ? std::vector<int>{256, 512} : std::vector<int>{1}) {
      p = {};
      p.variant = V::balanced;
      p.chunk_nnz = c;
      p.threads_per_team = t;
      add(p);
    }
  }
  for (int k : {4, 8}) {
    for (int t : gpu ? std::vector<int>{2, 4, 8} : std::vector<int>{1}) {
      p = {};
      p.variant = V::warp;
      p.entries_per_lane = k;
      p.team_size = t;
      add(p);
    }
  }
  // staged: entries and products staged (op = N), lanes per row by the default rule and
  // around it, chunks of 128 to 512 entries (op = T / H: the default only; entries staged,
  // scattered with atomics)
  const bool sweep = gpu && mode == spk::Mode::N;
  for (int sp : sweep ? std::vector<int>{-1, 1, 2} : std::vector<int>{0}) {
    for (int v : sweep ? std::vector<int>{0, 1, 2, 4, 8} : std::vector<int>{0}) {
      for (int k : sweep ? std::vector<int>{4, 8, 16} : std::vector<int>{8}) {
        p = {};
        p.variant = V::staged;
        p.vector_length = v;
        p.entries_per_lane = k;
        p.stage_products = sp;
        add(p);
      }
    }
    if (sweep) {
      for (int t : {2, 8}) {
        p = {};
        p.variant = V::staged;
        p.team_size = t;
        p.stage_products = sp;
        add(p);
      }
    }
  }
  if (mode != spk::Mode::N) {
    p = {};
    p.transpose = spk::TransposeMethod::explicit_;
    add(p);
  }
  return out;
}

/// Launch parameters to time for a padded format: the defaults first, then on GPUs the given
/// variants (CPU backends run one thread per team, so only the defaults).
template <class Params>
std::vector<Params> with_defaults(bool gpu, std::vector<Params> variants) {
  std::vector<Params> out{Params{}};
  if (gpu) out.insert(out.end(), variants.begin(), variants.end());
  return out;
}

/// Builds one matrix of a padded format with `make` and appends a candidate per launch
/// parameter set (named by its resolved parameters after `prefix`; the defaults are "auto:",
/// and sets resolving to one already listed are measured once). A matrix the format refuses by
/// its padding limit is reported as skipped on stderr.
template <class S, class Make, class Params, class Vec>
void add_format_candidates(std::vector<Candidate<S>>& cands, const char* format,
                           const std::string& prefix, const std::string& case_label,
                           const Make& make, const std::vector<Params>& params, spk::Mode mode,
                           const Vec& x, const Vec& y) {
  using Matrix = decltype(make());
  std::shared_ptr<const Matrix> m;
  try {
    m = std::make_shared<const Matrix>(make());
  } catch (const spk::PaddingLimitExceeded& e) {
    std::cerr << "spk-bench: skipping " << format << (prefix.empty() ? "" : " ")
              << prefix.substr(0, prefix.empty() ? 0 : prefix.size() - 1) << " on " << case_label
              << ": " << e.what() << "\n";
    return;
  }
  std::vector<std::string> names;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const Params p = params[i];
    std::string name;
    try {
      name = prefix + spk::describe(spk::resolve_params(*m, mode, p));
    } catch (const std::invalid_argument& e) {  // a variant this matrix cannot take
      if (i == 0) throw;
      std::cerr << "spk-bench: skipping a " << format << " variant on " << case_label << ": "
                << e.what() << "\n";
      continue;
    }
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    names.push_back(name);
    cands.push_back({format, (i == 0 ? "auto:" : "") + name, m->memory_bytes(),
                     [=](S al, S be) { spk::spmv(mode, al, *m, x, be, y, p); }});
  }
}

/// The candidates of spk's padded formats (ell, hll, dia, hdia, hyb) that --format selects.
template <class S, class Matrix, class Vec>
void padded_format_candidates(const Options& o, const Matrix& a, const std::string& case_label,
                              const Vec& x, const Vec& y, std::vector<Candidate<S>>& cands) {
  using D = typename Matrix::device_type;
  constexpr bool gpu = spk::impl::is_gpu_space<typename Matrix::execution_space>();
  const spk::Mode mode = o.mode;
  auto tpr = [](int t) {
    spk::EllSpmvParams p;
    p.threads_per_row = t;
    return p;
  };
  // f entries in flight per lane: 4 or 8, the last chunk predicated (8 is the GPU default); -4
  // four, the remainder one by one (the loop before the chunks)
  auto tpr_f = [](int t, int f) {
    spk::EllSpmvParams p;
    p.threads_per_row = t;
    p.in_flight = f;
    return p;
  };
  if (wanted(o, "ell")) {
    add_format_candidates<S>(
        cands, "ell", "", case_label, [&] { return spk::EllMatrix<S, int, int, D>(a); },
        with_defaults<spk::EllSpmvParams>(
            gpu, {tpr(1), tpr(2), tpr(4), tpr(8), tpr(16), tpr_f(1, 4), tpr_f(1, -4), tpr_f(4, 4),
                  tpr_f(4, -4)}),
        mode, x, y);
  }
  if (wanted(o, "hll")) {
    auto hll_tpr = [](int t) {
      spk::HllSpmvParams p;
      p.threads_per_row = t;
      return p;
    };
    // tail: 1 = the default width rule, 0 = no tail (the layout before it), 2 = tail only
    // past the width cap (min_column_fill = 1 / 32)
    auto hll = [&](const char* prefix, int hack, spk::HllSort sort,
                   const std::vector<spk::HllSpmvParams>& params, int tail = 1) {
      spk::HllOptions opt;
      opt.hack_size = hack;
      opt.sort = sort;
      opt.tail = tail != 0;
      if (tail == 2) opt.min_column_fill = 1.0 / 32;
      add_format_candidates<S>(
          cands, "hll", prefix, case_label, [&] { return spk::HllMatrix<S, int, int, D>(a, opt); },
          params, mode, x, y);
    };
    auto hll_tail_lanes = [](int t) {
      spk::HllSpmvParams p;
      p.tail_lanes = t;
      return p;
    };
    // y staged through team scratch (rows sorted within windows only; one window per team,
    // `team` threads or 256 for 0)
    auto hll_stage = [](int t, int team) {
      spk::HllSpmvParams p;
      p.threads_per_row = t;
      p.team_size = team / t;
      p.stage_y = 1;
      return p;
    };
    // y written where each position's row lies (the launch before staging became a default)
    auto hll_unstaged = [](int t) {
      spk::HllSpmvParams p;
      p.threads_per_row = t;
      p.stage_y = -1;
      return p;
    };
    // teams of 64 or 256 threads (one row per vector): rows a team takes = its vectors
    auto hll_team = [](int t, int team) {
      spk::HllSpmvParams p;
      p.threads_per_row = t;
      p.team_size = team / t;
      return p;
    };
    // entries in flight per lane (8, the GPU default, or 4: the last chunk predicated; -4: the
    // loop before the chunks) with 1, 2, 4 and 8 threads per row
    auto hll_f = [](int t, int f) {
      spk::HllSpmvParams p;
      p.threads_per_row = t;
      p.in_flight = f;
      return p;
    };
    hll("h32-", 32, spk::HllSort::automatic,
        with_defaults<spk::HllSpmvParams>(
            gpu, {hll_tpr(1), hll_tpr(2), hll_tpr(4), hll_tpr(8), hll_tpr(16), hll_tail_lanes(1),
                  hll_tail_lanes(4), hll_tail_lanes(8), hll_tail_lanes(32), hll_f(1, 4),
                  hll_f(1, -4), hll_f(2, 4), hll_f(2, -4), hll_f(4, 4), hll_f(4, -4), hll_f(8, 4),
                  hll_f(8, -4), hll_team(1, 64), hll_team(1, 256), hll_team(2, 256),
                  hll_stage(1, 0), hll_stage(2, 0), hll_stage(1, 128), hll_stage(1, 1024),
                  hll_stage(1, 512), hll_unstaged(1), hll_unstaged(2)}));
    hll("h32-none-", 32, spk::HllSort::none, {spk::HllSpmvParams{}});
    hll("h32-window-", 32, spk::HllSort::window, {spk::HllSpmvParams{}});
    hll("h32-notail-", 32, spk::HllSort::automatic, {spk::HllSpmvParams{}}, 0);
    if (gpu) {
      hll("h64-", 64, spk::HllSort::none, {spk::HllSpmvParams{}});
      hll("h16-", 16, spk::HllSort::none, {spk::HllSpmvParams{}});
      // sorting and the tail rule with one, two and four threads per row
      hll("h32-global-", 32, spk::HllSort::global,
          {spk::HllSpmvParams{}, hll_tpr(1), hll_tpr(2), hll_tpr(4)});
      hll("h32-captail-", 32, spk::HllSort::automatic,
          {spk::HllSpmvParams{}, hll_tpr(1), hll_tpr(2), hll_tpr(4)}, 2);
      hll("h32-global-captail-", 32, spk::HllSort::global,
          {spk::HllSpmvParams{}, hll_tpr(1), hll_tpr(2)}, 2);
    }
  }
  if (wanted(o, "dia")) {
    spk::DiaSpmvParams two;
    two.threads_per_row = 2;
    add_format_candidates<S>(
        cands, "dia", "", case_label, [&] { return spk::DiaMatrix<S, int, int, D>(a); },
        with_defaults<spk::DiaSpmvParams>(gpu, {spk::DiaSpmvParams{1, 0, 0}, two}), mode, x, y);
  }
  if (wanted(o, "hdia")) {
    std::vector<spk::HdiaSpmvParams> variants(8);
    variants[0].threads_per_row = 1;
    variants[1].threads_per_row = 2;
    variants[2].hacks_per_team = 2;
    variants[3].hacks_per_team = 8;
    variants[4].scratch_diags = 1;  // offsets from global memory (the scratch fallback)
    // diagonals in flight per thread: 4 (the loop before the chunks of 8) with the default 4
    // and with 2 hacks per team; chunks of 8 with one hack per team
    variants[5].in_flight = 4;
    variants[6].in_flight = 4;
    variants[6].hacks_per_team = 2;
    variants[7].hacks_per_team = 1;
    add_format_candidates<S>(
        cands, "hdia", "h32-", case_label, [&] { return spk::HdiaMatrix<S, int, int, D>(a); },
        with_defaults<spk::HdiaSpmvParams>(gpu, variants), mode, x, y);
    if (gpu) {
      spk::HdiaOptions h64;
      h64.hack_size = 64;
      add_format_candidates<S>(
          cands, "hdia", "h64-", case_label,
          [&] { return spk::HdiaMatrix<S, int, int, D>(a, h64); },
          std::vector<spk::HdiaSpmvParams>{{}}, mode, x, y);
    }
  }
  if (wanted(o, "hyb")) {
    spk::HybSpmvParams two, serial_tail;
    two.threads_per_row = 2;
    serial_tail.in_flight = -4;  // the ELL part's loop before the chunks of 8
    add_format_candidates<S>(
        cands, "hyb", "", case_label, [&] { return spk::HybMatrix<S, int, int, D>(a); },
        with_defaults<spk::HybSpmvParams>(gpu, {two, serial_tail}), mode, x, y);
  }
}

/// The candidates of spk's COO formats (balanced-coo, compressed-coo) that --format selects.
template <class S, class Matrix, class Vec>
void coo_format_candidates(const Options& o, const Matrix& a, const std::string& case_label,
                           const Vec& x, const Vec& y, std::vector<Candidate<S>>& cands) {
  using D = typename Matrix::device_type;
  constexpr bool gpu = spk::impl::is_gpu_space<typename Matrix::execution_space>();
  const spk::Mode mode = o.mode;
  if (wanted(o, "balanced-coo")) {
    std::vector<spk::BalancedCooSpmvParams> variants;
    for (int k : {2, 4, 8})
      for (int b : {64, 128, 256}) variants.push_back({b, k, spk::CooAccumulate::direct});
    variants.push_back({256, 4, spk::CooAccumulate::atomic});
    variants.push_back({256, 8, spk::CooAccumulate::atomic});
    variants.push_back({256, 4, spk::CooAccumulate::deterministic});
    variants.push_back({256, 8, spk::CooAccumulate::deterministic});
    if (gpu) {
      // one window per warp (nothing loaded ahead: the kernel before 2026-11-26), and 2 per warp
      for (int k : {4, 8}) {
        variants.push_back({256, k, spk::CooAccumulate::direct, 1});
        variants.push_back({128, k, spk::CooAccumulate::direct, 1});
        variants.push_back({128, k, spk::CooAccumulate::direct, 2});
        // crossing rows pre-scaled and added by atomics even where windows could finish them
        variants.push_back({128, k, spk::CooAccumulate::direct, 1, false});
      }
    }
    add_format_candidates<S>(
        cands, "balanced-coo", "", case_label,
        [&] { return spk::BalancedCooMatrix<S, int, int, D>(a); },
        with_defaults<spk::BalancedCooSpmvParams>(gpu, variants), mode, x, y);
  }
  if (wanted(o, "compressed-coo")) {
    const auto ccoo = [&](const std::string& prefix, spk::CompressedCooOptions opt,
                          const std::vector<spk::CompressedCooSpmvParams>& params) {
      add_format_candidates<S>(
          cands, "compressed-coo", prefix, case_label,
          [&] { return spk::CompressedCooMatrix<S, int, int, D>(a, opt); }, params, mode, x, y);
    };
    std::vector<spk::CompressedCooSpmvParams> launches;
    for (int sl : {1, 2, 4}) launches.push_back({spk::CooAccumulate::direct, sl});
    // one chunk per team: no chunk loaded ahead (the kernel before 2026-11-25)
    launches.push_back({spk::CooAccumulate::direct, 1, 1});
    launches.push_back({spk::CooAccumulate::direct, 2, 8});
    // a lane's slots in groups of 1 or 2 (the next group's offsets loaded ahead)
    launches.push_back({spk::CooAccumulate::direct, 4, 0, 1});
    launches.push_back({spk::CooAccumulate::direct, 4, 0, 2});
    launches.push_back({spk::CooAccumulate::direct, 2, 0, 1});
    // more chunks per team (fewer first chunks waiting on their offsets)
    launches.push_back({spk::CooAccumulate::direct, 1, 8});
    launches.push_back({spk::CooAccumulate::direct, 1, 16});
    launches.push_back({spk::CooAccumulate::direct, 2, 8, 1});
    launches.push_back({spk::CooAccumulate::atomic, 0});
    launches.push_back({spk::CooAccumulate::deterministic, 0});
    ccoo("", {}, with_defaults<spk::CompressedCooSpmvParams>(gpu, launches));
    if (gpu) {
      for (int k : {2, 4, 8}) {
        spk::CompressedCooOptions opt;
        opt.entries_per_thread = k;
        ccoo("k" + std::to_string(k) + "-", opt, {spk::CompressedCooSpmvParams{}});
      }
      spk::CompressedCooOptions raw;
      raw.value_table = false;
      ccoo("raw-", raw, {spk::CompressedCooSpmvParams{}});
      spk::CompressedCooOptions nogaps;  // column offsets from the baseline only
      nogaps.column_gaps = false;
      ccoo("nogaps-", nogaps, {spk::CompressedCooSpmvParams{}});
      // both layouts, whichever the automatic choice is (packed: K = 8, and 4 where the slot
      // layout's K is smaller)
      spk::CompressedCooOptions slots, packed;
      slots.layout = spk::CompressedCooLayout::slots;
      packed.layout = spk::CompressedCooLayout::packed;
      ccoo("slots-", slots, {spk::CompressedCooSpmvParams{}});
      ccoo("packed-", packed,
           {spk::CompressedCooSpmvParams{}, {spk::CooAccumulate::direct, 2}});
      packed.entries_per_thread = 4;
      ccoo("packed-k4-", packed, {spk::CompressedCooSpmvParams{}});
      spk::CompressedCooOptions b256;
      b256.threads_per_chunk = 256;
      ccoo("b256-", b256, {{spk::CooAccumulate::direct, 1}, {spk::CooAccumulate::direct, 2}});
    }
  }
}

/// The candidates of HiSparse (float and double only) that --format selects: node size 128 with
/// the cached plan (default) and with the traversal in every product; on GPUs also d = 64, 256.
template <class S, class Matrix, class Vec>
void hisparse_candidates(const Options& o, const Matrix& a, const std::string& case_label,
                         const Vec& x, const Vec& y, std::vector<Candidate<S>>& cands) {
  if constexpr (std::is_floating_point<S>::value) {
    using D = typename Matrix::device_type;
    constexpr bool gpu = spk::impl::is_gpu_space<typename Matrix::execution_space>();
    if (!wanted(o, "hisparse")) return;
    spk::HiSparseSpmvParams traverse, per_bin, fused, band;
    traverse.traverse = true;
    per_bin.schedule = spk::HiSparseSchedule::per_bin;
    fused.schedule = spk::HiSparseSchedule::fused;
    band.schedule = spk::HiSparseSchedule::band;
    std::vector<spk::HiSparseSpmvParams> params{{}, band};
    for (int shape = 1; shape <= 2; ++shape) {
      spk::HiSparseSpmvParams p;
      p.schedule = spk::HiSparseSchedule::stream;
      p.stream_shape = shape;
      params.push_back(p);
    }
    params.insert(params.end(), {fused, per_bin, traverse});
    add_format_candidates<S>(
        cands, "hisparse", "", case_label, [&] { return spk::HiSparseMatrix<S, int, D>(a); },
        params, o.mode, x, y);
    if (gpu) {
      for (int d : {64, 256}) {
        add_format_candidates<S>(
            cands, "hisparse", "d" + std::to_string(d) + "-", case_label,
            [&] { return spk::HiSparseMatrix<S, int, D>(a, d); },
            std::vector<spk::HiSparseSpmvParams>{{}}, o.mode, x, y);
      }
    }
  } else {
    (void)o, (void)a, (void)case_label, (void)x, (void)y, (void)cands;
  }
}

/// The chosen configuration's concrete matrix and launch parameters, called without spk::Matrix
/// (the baseline of the wrapper's overhead).
template <class S, class Vec>
std::function<void(S, S)> concrete_run(const spk::Matrix<S, Device>& m, spk::Mode mode,
                                       const Vec& x, const Vec& y) {
  const auto& st = m.storage();
  const spk::FormatConfig& c = m.config();
  switch (st.index()) {
    case 0: return [=, a = std::get<0>(st), p = c.csr](S al, S be) { spk::spmv(mode, al, a, x, be, y, p); };
    case 1: return [=, a = std::get<1>(st), p = c.ell](S al, S be) { spk::spmv(mode, al, a, x, be, y, p); };
    case 2: return [=, a = std::get<2>(st), p = c.hll](S al, S be) { spk::spmv(mode, al, a, x, be, y, p); };
    case 3: return [=, a = std::get<3>(st), p = c.dia](S al, S be) { spk::spmv(mode, al, a, x, be, y, p); };
    case 4: return [=, a = std::get<4>(st), p = c.hdia](S al, S be) { spk::spmv(mode, al, a, x, be, y, p); };
    case 5: return [=, a = std::get<5>(st), p = c.hyb](S al, S be) { spk::spmv(mode, al, a, x, be, y, p); };
    case 6:
      return [=, a = std::get<6>(st), p = c.balanced_coo](S al, S be) {
        spk::spmv(mode, al, a, x, be, y, p);
      };
    case 7:
      return [=, a = std::get<7>(st), p = c.compressed_coo](S al, S be) {
        spk::spmv(mode, al, a, x, be, y, p);
      };
    default:
      if constexpr (std::is_floating_point<S>::value)
        return [=, a = std::get<8>(st), p = c.hisparse](S al, S be) {
          spk::spmv(mode, al, a, x, be, y, p);
        };
      else
        return [=](S al, S be) { spk::spmv(mode, al, m, x, be, y); };
  }
}

/// Format "auto": spk::select_format on features only (the median time of 21 selections, timed
/// in the rounds with the products, is the time to choose) and with a trial, each product through spk::Matrix, and the feature choice's
/// concrete matrix called directly. Prints the ranking with the model's estimates.
template <class S, class Csr, class Vec>
void auto_candidates(const Options& o, const Csr& a, const std::string& case_label, const Vec& x,
                     const Vec& y, std::vector<Candidate<S>>& cands) {
  if (!wanted(o, "auto")) return;
  const spk::Mode mode = o.mode;
  spk::SelectOptions so;
  so.mode = mode;
  const spk::FormatChoice choice = spk::select_format(a, so);
  auto m = std::make_shared<const spk::Matrix<S, Device>>(a, choice.config);
  cands.push_back({"auto", "features:" + choice.config.name(), m->memory_bytes(),
                   [=](S al, S be) { spk::spmv(mode, al, *m, x, be, y); }, choice.seconds * 1e3,
                   [a, so] { return spk::select_format(a, so).seconds * 1e3; }});
  cands.push_back({"auto", "concrete:" + choice.config.name(), m->memory_bytes(),
                   concrete_run<S>(*m, mode, x, y)});
  so.trial = true;
  auto mt = std::make_shared<spk::Matrix<S, Device>>();
  const spk::FormatChoice tc = spk::select_format(a, so, mt.get());
  cands.push_back({"auto", "trial:" + tc.config.name(), mt->memory_bytes(),
                   [=](S al, S be) { spk::spmv(mode, al, *mt, x, be, y); }, tc.seconds * 1e3});
  const auto& f = choice.features;
  std::fprintf(stderr,
               "spk-bench: auto on %s: features %.3f ms (rows mean %.2f cv %.2f max %lld, "
               "diagonals %lld, ell/hack/dia padding %.2f/%.2f/%.2f, block %.2f, distinct "
               "values %lld/%lld, near %.2f); features chose %s, trial chose %s in %.2f ms\n",
               case_label.c_str(), f.seconds * 1e3, f.row_mean, f.row_cv(), (long long)f.row_max,
               (long long)f.diagonals, f.ell_padding, f.hack_padding, f.dia_padding,
               f.block_fraction, (long long)f.distinct_values, (long long)f.value_sample,
               f.near_fraction, choice.config.name().c_str(), tc.config.name().c_str(),
               tc.seconds * 1e3);
  for (const auto& r : tc.ranked)
    std::fprintf(stderr, "  %-16s model %10.2f us  %12.0f bytes  trial %s%s%s\n",
                 r.config.name().c_str(), r.estimate.microseconds, r.estimate.memory_bytes,
                 r.measured_ms >= 0 ? std::to_string(r.measured_ms).c_str() : "-",
                 r.note.empty() ? "" : "  ", r.note.c_str());
}

template <class S>
double min_bytes(long long rows, long long cols, long long nnz, spk::Mode mode) {
  const long long nx = mode == spk::Mode::N ? cols : rows;
  const long long ny = mode == spk::Mode::N ? rows : cols;
  return double(nnz) * (sizeof(S) + 4) + double(rows + 1) * 4 + double(nx + ny) * sizeof(S);
}

template <class S>
void bench_case(const Options& o, const RunInfo& info, const std::string& c,
                std::vector<Result>& results, bool& all_correct) {
  using traits = spk::scalar_traits<S>;
  using Vec = Kokkos::View<S*, Device>;
  const auto a = load_case<S, Device>(c);
  const spk::Mode mode = o.mode;
  const bool trans = mode != spk::Mode::N;
  const std::size_t nx = trans ? a.nrows() : a.ncols();
  const std::size_t ny = trans ? a.ncols() : a.nrows();

  // x random in [-1, 1], reference on the host
  std::vector<S> xh(nx), yref(ny, traits::zero());
  std::uint64_t state = 12345;
  for (auto& v : xh) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const double re = double(state >> 11) / double(1ULL << 53) * 2 - 1;
    v = traits::make(re, traits::is_complex ? 0.5 * re : 0.0);
  }
  std::vector<double> bound;
  spk::reference::spmv(mode, traits::one(), a, xh, traits::zero(), yref, &bound);
  Vec x("spk_bench::x", nx), y("spk_bench::y", ny);
  {
    auto xm = Kokkos::create_mirror_view(x);
    for (std::size_t i = 0; i < nx; ++i) xm(i) = xh[i];
    Kokkos::deep_copy(x, xm);
  }

  std::vector<Candidate<S>> cands;
  if (wanted(o, "csr")) {
    for (const auto& v : csr_schedules(a, mode)) {
      const spk::CsrSpmvParams p = v.second;
      const std::size_t mem =
          a.memory_bytes() * (p.transpose == spk::TransposeMethod::explicit_ ? 2 : 1);
      cands.push_back(
          {"csr", v.first, mem, [=](S al, S be) { spk::spmv(mode, al, a, x, be, y, p); }});
    }
  }
  padded_format_candidates<S>(o, a, case_name(c), x, y, cands);
  coo_format_candidates<S>(o, a, case_name(c), x, y, cands);
  hisparse_candidates<S>(o, a, case_name(c), x, y, cands);
  auto_candidates<S>(o, a, case_name(c), x, y, cands);
  if (wanted(o, "kokkoskernels")) {
    const auto kk = spk::to_kokkos_kernels(a);
    const char* m = mode == spk::Mode::N ? "N" : mode == spk::Mode::T ? "T" : "C";
    cands.push_back({"kokkoskernels", "default", a.memory_bytes(),
                     [=](S al, S be) { KokkosSparse::spmv(m, al, kk, x, be, y); }});
  }
#ifdef SPK_HAVE_CUSPARSE
  using spk_bench::CusparseSpmv;
  // "-shared": the same call with cudaFuncCachePreferShared set device-wide around it (what
  // Kokkos 3.4 imposed on every non-Kokkos kernel), then the CUDA default again
  auto add_cusparse = [&](const char* name, typename CusparseSpmv<S>::Format f,
                          cusparseSpMVAlg_t alg, bool shared = false) {
    if (!wanted(o, name)) return;
    std::shared_ptr<CusparseSpmv<S>> op;
    std::shared_ptr<const void> keep;  // the COO arrays, alive with the operation
    std::size_t mem = a.memory_bytes();
    if (f == CusparseSpmv<S>::Format::csr) {
      op = std::make_shared<CusparseSpmv<S>>(f, alg, mode, a.nrows(), a.ncols(), a.nnz(),
                                             a.row_map(), a.col_idx(), a.values(), x, y);
    } else {
      const auto coo = spk::csr_to_coo(a);
      mem = coo.memory_bytes();
      op = std::make_shared<CusparseSpmv<S>>(f, alg, mode, a.nrows(), a.ncols(), a.nnz(),
                                             coo.row_idx(), coo.col_idx(), coo.values(), x, y);
      keep = std::make_shared<decltype(coo)>(coo);
    }
    cands.push_back({name, "default", mem + op->buffer_bytes(), [op, keep, shared](S al, S be) {
                       if (shared) cudaDeviceSetCacheConfig(cudaFuncCachePreferShared);
                       op->run(al, be);
                       if (shared) cudaDeviceSetCacheConfig(cudaFuncCachePreferNone);
                     }});
  };
  add_cusparse("cusparse-csr-alg1", CusparseSpmv<S>::Format::csr, CUSPARSE_SPMV_CSR_ALG1);
  add_cusparse("cusparse-csr-alg2", CusparseSpmv<S>::Format::csr, CUSPARSE_SPMV_CSR_ALG2);
  add_cusparse("cusparse-coo", CusparseSpmv<S>::Format::coo, CUSPARSE_SPMV_COO_ALG1);
  add_cusparse("cusparse-csr-alg1-shared", CusparseSpmv<S>::Format::csr, CUSPARSE_SPMV_CSR_ALG1,
               true);
  add_cusparse("cusparse-coo-shared", CusparseSpmv<S>::Format::coo, CUSPARSE_SPMV_COO_ALG1, true);
  if (wanted(o, "cusparse-sell") && mode == spk::Mode::N) {
    // skipped (stderr) when the padded slices would not fit 32-bit offsets
    try {
      auto sell = std::make_shared<spk_bench::SellArrays<S>>(spk_bench::make_sell(a, 32));
      auto op = std::make_shared<CusparseSpmv<S>>(*sell, CUSPARSE_SPMV_SELL_ALG1, mode, x, y);
      cands.push_back({"cusparse-sell", "slice32", sell->memory_bytes() + op->buffer_bytes(),
                       [op, sell](S al, S be) { op->run(al, be); }});
    } catch (const std::exception& e) {
      std::cerr << "spk-bench: cusparse-sell skipped for " << case_name(c) << ": " << e.what()
                << "\n";
    }
  }
#endif

  // --variants: spk's variants by name; baselines (cusparse*, kokkoskernels) are always timed
  cands.erase(std::remove_if(cands.begin(), cands.end(),
                             [&](const Candidate<S>& cand) {
                               const bool baseline = cand.format.rfind("cusparse", 0) == 0 ||
                                                     cand.format == "kokkoskernels";
                               return !baseline && !variant_wanted(o, cand.variant);
                             }),
              cands.end());
  const double flops = (traits::is_complex ? 8.0 : 2.0) * double(a.nnz());
  const double bytes = min_bytes<S>(a.nrows(), a.ncols(), a.nnz(), mode);
  const S nan_value = traits::make(std::numeric_limits<double>::quiet_NaN(), 0.0);
  for (auto& cand : cands) {
    Result r;
    r.matrix = case_name(c);
    r.format = cand.format;
    r.variant = cand.variant;
    r.rows = a.nrows();
    r.cols = a.ncols();
    r.nnz = a.nnz();
    r.memory_bytes = cand.memory_bytes;
    r.select_ms = cand.select_ms;
    // correctness first: y poisoned with NaN, beta = 0 must overwrite every entry (peers whose
    // beta = 0 scales y instead, like Kokkos Kernels' transposed product, start from zeros)
    Kokkos::deep_copy(y, is_spk_format(cand.format) ? nan_value : traits::zero());
    cand.run(traits::one(), traits::zero());
    Kokkos::fence();
    auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    double max_err = 0, max_ref = 0;
    for (std::size_t i = 0; i < ny; ++i) {
      const double err = traits::abs(yh(i) - yref[i]);
      max_ref = std::max(max_ref, double(traits::abs(yref[i])));
      if (!(err <= 16 * spk::unit_roundoff<S>() * (bound[i] + 1e-300))) {
        if (!(err <= 1e-300)) r.correct = false;
      }
      max_err = std::max(max_err, err == err ? err : std::numeric_limits<double>::infinity());
    }
    r.rel_error = max_ref > 0 ? max_err / max_ref : max_err;
    all_correct = all_correct && r.correct;
    results.push_back(r);
  }
  // timing, after every candidate's check: each candidate's repetitions in `rounds` blocks,
  // each block back to back after its own warm-up (timed round-robin product by product, small
  // matrices' products depended on what the previous format left in the caches: H100 run 6 of
  // the selection suite), the blocks taken in turn over the candidates
  // (and the 21 selections of format "auto", features only, spread over the rounds the same way)
  std::vector<std::vector<double>> times(cands.size()), choose_ms(cands.size());
  const int rounds = std::min(o.rounds, o.repeat);
  constexpr int selections = 21;
  for (int round = 0; round < rounds; ++round)
    for (std::size_t i = 0; i < cands.size(); ++i) {
      const int n = o.repeat / rounds + (round < o.repeat % rounds ? 1 : 0);
      const auto t = spk_bench::time_ms([&] { cands[i].run(traits::one(), traits::zero()); },
                                        o.warmup, n);
      times[i].insert(times[i].end(), t.begin(), t.end());
      if (cands[i].choose) {
        cands[i].choose();  // warm-up
        const int k = selections / rounds + (round < selections % rounds ? 1 : 0);
        for (int q = 0; q < k; ++q) choose_ms[i].push_back(cands[i].choose());
      }
    }
  for (std::size_t i = 0; i < cands.size(); ++i) {
    Result& r = results[results.size() - cands.size() + i];
    const auto st = spk_bench::stats_of(times[i]);
    r.median_ms = st.median;
    r.min_ms = st.min;
    r.max_ms = st.max;
    r.gflops = flops / (st.median * 1e6);
    r.gbps = bytes / (st.median * 1e6);
    r.copy_fraction = info.copy_gbps > 0 ? r.gbps / info.copy_gbps : 0;
    const double own = double(cands[i].memory_bytes) + double(nx + ny) * sizeof(S);
    r.own_copy_fraction = info.copy_gbps > 0 ? own / (st.median * 1e6) / info.copy_gbps : 0;
    if (!choose_ms[i].empty()) r.select_ms = spk_bench::stats_of(choose_ms[i]).median;
  }
}

void print_table(const std::vector<Result>& rs) {
  std::printf("%-24s %-18s %-30s %10s %10s %10s %9s %9s %7s %10s %9s %7s\n", "matrix", "format",
              "variant", "median_ms", "min_ms", "max_ms", "GFLOP/s", "GB/s", "%copy", "rel_err",
              "mem_MB", "vs_cus");
  for (const auto& r : rs) {
    double ref = 0;
    for (const auto& q : rs)
      if (q.matrix == r.matrix && q.format == "cusparse-csr-alg1") ref = q.median_ms;
    char ratio[16] = "-";
    if (ref > 0) std::snprintf(ratio, sizeof ratio, "%.2f", ref / r.median_ms);
    std::printf("%-24.24s %-18.18s %-30.30s %10.4f %10.4f %10.4f %9.2f %9.1f %6.1f%% %10.2e %9.2f %7s%s\n",
                r.matrix.c_str(), r.format.c_str(), r.variant.c_str(), r.median_ms, r.min_ms,
                r.max_ms, r.gflops, r.gbps, 100 * r.copy_fraction, r.rel_error,
                double(r.memory_bytes) / 1e6, ratio, r.correct ? "" : "  WRONG");
  }
}

/// Per matrix with format "auto" rows: each choice, its time to choose (also in products of
/// the chosen format), and the fastest spk row measured beside it.
void print_auto_summary(const std::vector<Result>& rs) {
  for (const auto& r : rs) {
    if (r.format != "auto" || r.variant.rfind("concrete:", 0) == 0) continue;
    const Result* best = nullptr;
    for (const auto& q : rs)
      if (q.matrix == r.matrix && q.format != "auto" && is_spk_format(q.format) && q.correct &&
          (!best || q.median_ms < best->median_ms))
        best = &q;
    std::printf("auto %-24.24s %-28.28s %9.4f ms, chosen in %9.3f ms (%7.1f products)", r.matrix.c_str(),
                r.variant.c_str(), r.median_ms, r.select_ms,
                r.median_ms > 0 ? r.select_ms / r.median_ms : 0.0);
    if (best)
      std::printf("; best measured spk %s %s %.4f ms (auto / best time %.3f)", best->format.c_str(),
                  best->variant.c_str(), best->median_ms, r.median_ms / best->median_ms);
    std::printf("\n");
  }
}

void write_json(const std::string& path, const RunInfo& info, const std::vector<Result>& rs) {
  using spk_bench::json_number;
  using spk_bench::json_string;
  std::ofstream out(path);
  if (!out) spk::throw_runtime_error("spk-bench", "cannot write '", path, "'");
  out << "{\"gpu\": " << json_string(info.gpu) << ", \"date\": " << json_string(info.date)
      << ", \"commit\": " << json_string(info.commit)
      << ", \"command\": " << json_string(info.command)
      << ", \"copy_bandwidth_gbps\": " << json_number(info.copy_gbps) << ", \"results\": [";
  for (std::size_t i = 0; i < rs.size(); ++i) {
    const auto& r = rs[i];
    out << (i ? ",\n  " : "\n  ") << "{\"matrix\": " << json_string(r.matrix)
        << ", \"rows\": " << r.rows << ", \"cols\": " << r.cols << ", \"nnz\": " << r.nnz
        << ", \"scalar\": " << json_string(info.scalar) << ", \"mode\": " << json_string(info.mode)
        << ", \"format\": " << json_string(r.format) << ", \"variant\": " << json_string(r.variant)
        << ", \"median_ms\": " << json_number(r.median_ms)
        << ", \"min_ms\": " << json_number(r.min_ms) << ", \"max_ms\": " << json_number(r.max_ms)
        << ", \"gflops\": " << json_number(r.gflops) << ", \"gbps\": " << json_number(r.gbps)
        << ", \"copy_fraction\": " << json_number(r.copy_fraction)
        << ", \"own_copy_fraction\": " << json_number(r.own_copy_fraction)
        << ", \"memory_bytes\": " << r.memory_bytes
        << ", \"rel_error\": " << json_number(r.rel_error);
    if (r.select_ms >= 0) out << ", \"select_ms\": " << json_number(r.select_ms);
    out << ", \"correct\": " << (r.correct ? "true" : "false") << "}";
  }
  out << "\n]}\n";
}

/// One --memory-only row: bytes, bytes per nonzero, ratio to CSR and the shape statistics.
void print_memory_row(const std::string& format, std::size_t bytes, long long nnz,
                      std::size_t csr_bytes, const std::string& shape) {
  std::printf("  %-16s %14zu bytes  %6.2f bytes/nnz  %5.3f x csr%s%s\n", format.c_str(), bytes,
              nnz ? double(bytes) / double(nnz) : 0.0, double(bytes) / double(csr_bytes),
              shape.empty() ? "" : "  ", shape.c_str());
}

/// Converts `a` with `make` on the host and reports its memory and `shape(matrix)`, or that the
/// format refuses it by its padding limit (the reason on stderr). `label` is the format, then
/// optionally a space and the variant (e.g. "hll h16").
template <class Make, class Shape, class Csr>
void memory_of_format(const std::string& label, const std::string& case_label, const Csr& a,
                      const Make& make, const Shape& shape, std::vector<Result>& results) {
  Result r;
  r.matrix = case_label;
  r.format = label.substr(0, label.find(' '));
  r.rows = a.nrows();
  r.cols = a.ncols();
  r.nnz = a.nnz();
  try {
    const auto m = make();
    const std::string sh = shape(m);
    const auto space = label.find(' ');
    r.variant = (space == std::string::npos ? "" : label.substr(space + 1) + ": ") + sh;
    r.memory_bytes = m.memory_bytes();
    print_memory_row(label, r.memory_bytes, r.nnz, a.memory_bytes(), sh);
    results.push_back(r);
  } catch (const spk::PaddingLimitExceeded& e) {
    std::printf("  %-16s skipped: above the padding limit (see stderr)\n", label.c_str());
    std::cerr << "spk-bench: skipping " << label << " on " << case_label << ": " << e.what()
              << "\n";
  }
}

std::string fixed(double v, int digits = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

/// --memory-only rows of spk's padded formats (as laid out for a GPU: ELL and HYB column-major
/// with the 128-byte pitch), with their shape statistics.
template <class Csr>
void padded_format_memory(const Options& o, const Csr& a, const std::string& case_label,
                          std::vector<Result>& results) {
  using S = typename Csr::value_type;
  using D = typename Csr::device_type;
  using Left = Kokkos::LayoutLeft;
  if (wanted(o, "ell"))
    memory_of_format(
        "ell", case_label, a, [&] { return spk::EllMatrix<S, int, int, D, Left>(a); },
        [](const auto& m) {
          return "width " + std::to_string(m.width()) + ", pitch " + std::to_string(m.pitch()) +
                 ", padding " + fixed(m.padding_ratio());
        },
        results);
  if (wanted(o, "hll")) {
    const auto hll_shape = [](const auto& m) {
      return "hacks " + std::to_string(m.n_hacks()) + " x " + std::to_string(m.hack_size()) +
             ", width max " + std::to_string(m.max_width()) + " mean " + fixed(m.mean_width()) +
             " cap " + std::to_string(m.width_cap()) + ", padding " + fixed(m.padding_ratio()) +
             ", sort " + spk::to_string(m.sort()) +
             (m.sort_window() > 0 ? " (staged balance " + fixed(m.staged_balance()) + ")"
                                  : std::string()) +
             ", tail " + std::to_string(m.tail_nnz()) +
             " entries in " + std::to_string(m.n_tail_segments()) + " segments";
    };
    struct Variant {
      int hack;
      spk::HllSort sort;
      bool tail;
    };
    for (const Variant v :
         {Variant{32, spk::HllSort::automatic, true}, Variant{32, spk::HllSort::none, true},
          Variant{16, spk::HllSort::none, true}, Variant{32, spk::HllSort::window, true},
          Variant{32, spk::HllSort::global, true}, Variant{32, spk::HllSort::automatic, false}}) {
      spk::HllOptions opt;
      opt.hack_size = v.hack;
      opt.sort = v.sort;
      opt.tail = v.tail;
      const std::string sort =
          v.sort == spk::HllSort::automatic ? "" : " " + std::string(spk::to_string(v.sort));
      const std::string label = "hll h" + std::to_string(v.hack) + sort + (v.tail ? "" : " notail");
      memory_of_format(
          label, case_label, a, [&] { return spk::HllMatrix<S, int, int, D>(a, opt); }, hll_shape,
          results);
    }
  }
  if (wanted(o, "dia"))
    memory_of_format(
        "dia", case_label, a, [&] { return spk::DiaMatrix<S, int, int, D>(a); },
        [](const auto& m) {
          return "diagonals " + std::to_string(m.n_diags()) + ", pitch " +
                 std::to_string(m.pitch()) + ", padding " + fixed(m.padding_ratio());
        },
        results);
  if (wanted(o, "hdia"))
    memory_of_format(
        "hdia", case_label, a, [&] { return spk::HdiaMatrix<S, int, int, D>(a); },
        [](const auto& m) {
          return "hacks " + std::to_string(m.n_hacks()) + " x " + std::to_string(m.hack_size()) +
                 ", diagonals " + std::to_string(m.n_diags()) + " (per hack max " +
                 std::to_string(m.max_hack_diags()) + " mean " + fixed(m.mean_hack_diags()) +
                 "), padding " + fixed(m.padding_ratio());
        },
        results);
  if (wanted(o, "hyb"))
    memory_of_format(
        "hyb", case_label, a, [&] { return spk::HybMatrix<S, int, int, D, Left>(a); },
        [](const auto& m) {
          return "ell width " + std::to_string(m.ell_width()) + ", coo entries " +
                 std::to_string(m.coo_nnz()) + ", padding " + fixed(m.padding_ratio());
        },
        results);
}

/// --memory-only rows of spk's COO formats; compressed COO with the share of its chunks using
/// each encoding.
template <class Csr>
void coo_format_memory(const Options& o, const Csr& a, const std::string& case_label,
                       std::vector<Result>& results) {
  using S = typename Csr::value_type;
  using D = typename Csr::device_type;
  if (wanted(o, "balanced-coo"))
    memory_of_format(
        "balanced-coo", case_label, a, [&] { return spk::BalancedCooMatrix<S, int, int, D>(a); },
        [](const auto& m) {
          return "stored entries " + std::to_string(m.stored_entries()) + " (" +
                 std::to_string(m.empty_rows().extent(0)) + " empty-row fillers)";
        },
        results);
  if (!wanted(o, "compressed-coo")) return;
  const auto shape = [](const auto& m) {
    const spk::CompressedCooStats st = m.stats();
    const double n = st.chunks > 0 ? double(st.chunks) : 1.0;
    const auto pct = [&](std::int64_t v) { return fixed(100.0 * double(v) / n, 1) + "%"; };
    return std::string(st.packed ? "packed" : "slot") + " layout, B " +
           std::to_string(m.slots_per_chunk()) + " K " + std::to_string(m.entries_per_slot()) +
           ", chunks " + std::to_string(st.chunks) +
           ", columns 8/16/32-bit " + pct(st.col8) + "/" + pct(st.col16) + "/" + pct(st.col32) +
           " (gaps left out " + pct(st.col_gaps) + ")" + ", table values " + pct(st.table_values) + " (table " +
           std::to_string(st.table_size) + ", covers " +
           fixed(100.0 * st.table_coverage, 1) + "% of entries), single-row " +
           pct(st.single_row) + ", stored entries " + std::to_string(st.stored_entries);
  };
  memory_of_format(
      "compressed-coo", case_label, a,
      [&] { return spk::CompressedCooMatrix<S, int, int, D>(a); }, shape, results);
  spk::CompressedCooOptions raw;
  raw.value_table = false;
  memory_of_format(
      "compressed-coo raw", case_label, a,
      [&] { return spk::CompressedCooMatrix<S, int, int, D>(a, raw); }, shape, results);
  spk::CompressedCooOptions nogaps;
  nogaps.column_gaps = false;
  memory_of_format(
      "compressed-coo no gaps", case_label, a,
      [&] { return spk::CompressedCooMatrix<S, int, int, D>(a, nogaps); }, shape, results);
  for (auto layout : {spk::CompressedCooLayout::slots, spk::CompressedCooLayout::packed}) {
    spk::CompressedCooOptions lo;
    lo.layout = layout;
    memory_of_format(
        std::string("compressed-coo ") + spk::to_string(layout), case_label, a,
        [&] { return spk::CompressedCooMatrix<S, int, int, D>(a, lo); }, shape, results);
  }
}

/// --memory-only row of HiSparse (float and double): bytes against COO, then per level the
/// sparse and dense nodes, and for the leaves their counts and mean entries.
template <class Csr>
void hisparse_memory(const Options& o, const Csr& a, const std::string& case_label,
                     std::vector<Result>& results) {
  using S = typename Csr::value_type;
  using D = typename Csr::device_type;
  if constexpr (std::is_floating_point<S>::value) {
    if (!wanted(o, "hisparse")) return;
    const double coo_bytes = double(a.nnz()) * (2 * sizeof(int) + sizeof(S));
    memory_of_format(
        "hisparse", case_label, a, [&] { return spk::HiSparseMatrix<S, int, D>(a); },
        [&](const auto& m) {
          const spk::HiSparseStats& st = m.stats();
          std::string out = fixed(double(m.memory_bytes()) / (coo_bytes > 0 ? coo_bytes : 1.0), 3) +
                            " x coo, d " + std::to_string(st.node_size) + ", levels " +
                            std::to_string(st.levels) + ", nodes per level (sparse/dense)";
          for (const auto& l : st.level)
            out += " " + std::to_string(l.sparse_nodes) + "/" + std::to_string(l.dense_nodes);
          if (!st.level.empty()) {
            const auto& leaf = st.level.back();
            const auto mean = [](std::int64_t e, std::int64_t n) {
              return n > 0 ? fixed(double(e) / double(n), 1) : std::string("-");
            };
            out += ", leaves: sparse " + std::to_string(leaf.sparse_nodes) + " (mean " +
                   mean(leaf.sparse_entries, leaf.sparse_nodes) + " entries), dense " +
                   std::to_string(leaf.dense_nodes) + " (mean " +
                   mean(leaf.dense_entries, leaf.dense_nodes) + ")";
          }
          return out;
        },
        results);
  } else {
    (void)o, (void)a, (void)case_label, (void)results;
  }
}

/// --memory-only: memory per format and row statistics, on the host, no timing.
template <class S>
void memory_case(const Options& o, const std::string& c, std::vector<Result>& results) {
  using Host = Kokkos::DefaultHostExecutionSpace::device_type;
  const auto a = load_case<S, Host>(c);
  long long max_len = 0, empty = 0;
  double sum = 0, sum2 = 0;
  for (int i = 0; i < a.nrows(); ++i) {
    const long long len = a.row_map()(i + 1) - a.row_map()(i);
    max_len = std::max(max_len, len);
    empty += len == 0;
    sum += double(len);
    sum2 += double(len) * double(len);
  }
  const double mean = a.nrows() ? sum / a.nrows() : 0;
  const double var = a.nrows() ? std::max(0.0, sum2 / a.nrows() - mean * mean) : 0;
  std::printf("%s: %d x %d, nnz %lld, row length mean %.2f, stddev %.2f, max %lld, empty rows %lld\n",
              case_name(c).c_str(), a.nrows(), a.ncols(), (long long)a.nnz(), mean,
              std::sqrt(var), max_len, empty);
  const std::size_t coo_bytes = std::size_t(a.nnz()) * (2 * sizeof(int) + sizeof(S));
  for (auto fm : {std::make_pair(std::string("csr"), a.memory_bytes()),
                  std::make_pair(std::string("coo"), coo_bytes)}) {
    Result r;
    r.matrix = case_name(c);
    r.format = fm.first;
    r.variant = "-";
    r.rows = a.nrows();
    r.cols = a.ncols();
    r.nnz = a.nnz();
    r.memory_bytes = fm.second;
    print_memory_row(fm.first, fm.second, r.nnz, a.memory_bytes(), "");
    results.push_back(r);
  }
  padded_format_memory(o, a, case_name(c), results);
  coo_format_memory(o, a, case_name(c), results);
  hisparse_memory(o, a, case_name(c), results);
}

template <class S>
int run_all(const Options& o, RunInfo& info) {
  std::vector<Result> results;
  bool all_correct = true;
  bool all_ran = true;
  for (const auto& c : o.cases) {
    std::cerr << "spk-bench: " << c << "\n";
    try {
      const CaseSpec cs = parse_case(c);
      if (!cs.file.empty() && !spk::scalar_traits<S>::is_complex &&
          spk::io::read_matrix_market_header(cs.file).field ==
              spk::io::MatrixMarketHeader::Field::complex) {
        std::cerr << "spk-bench: skipping " << c << ": complex values need --scalar complex128\n";
        continue;
      }
      if (o.memory_only) {
        memory_case<S>(o, c, results);
        // complex matrices: also the bytes of every compound layout (spk/compound/)
        if (spk::scalar_traits<S>::is_complex) spk_bench::compound_memory_case(o.scalar, c);
      } else {
        bench_case<S>(o, info, c, results, all_correct);
      }
    } catch (const std::exception& e) {
      std::cerr << "spk-bench: error in case " << c << ": " << e.what() << "\n";
      all_ran = false;
    }
  }
  if (!o.memory_only) {
    print_table(results);
    print_auto_summary(results);
  }
  if (!o.json.empty()) write_json(o.json, info, results);
  if (!all_ran) return 1;
  if (!all_correct) {
    std::cerr << "spk-bench: some results disagree with the host reference (marked WRONG)\n";
    return 3;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (spk_bench::wants_compound(argc, argv)) return spk_bench::compound_main(argc, argv);
  const Options o = parse(argc, argv);
  Kokkos::ScopeGuard guard(argc, argv);
  spk_bench::reset_device_cache_preference();
  try {
    RunInfo info;
    info.gpu = spk_bench::device_name();
    info.date = spk_bench::utc_now();
    info.commit = spk_bench::commit_id();
    info.command = o.command;
    info.scalar = o.scalar;
    info.mode = spk::to_string(o.mode);
    if (!o.memory_only) {
      info.copy_gbps = spk_bench::copy_bandwidth_gbps();
      std::printf("device: %s; copy bandwidth %.1f GB/s; scalar %s; mode %s; repeat %d in %d rounds\n",
                  info.gpu.c_str(), info.copy_gbps, o.scalar.c_str(), info.mode.c_str(),
                  o.repeat, o.rounds);
    }
    if (o.scalar == "float") return run_all<float>(o, info);
    if (o.scalar == "double") return run_all<double>(o, info);
    if (o.scalar == "complex64") return run_all<Kokkos::complex<float>>(o, info);
    return run_all<Kokkos::complex<double>>(o, info);
  } catch (const std::exception& e) {
    std::cerr << "spk-bench: error: " << e.what() << "\n";
    return 1;
  }
}
