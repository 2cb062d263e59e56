// spk-solve: time-to-solution of spk's Krylov solvers (CG, BiCGSTAB) per matrix format, and with
// cuSPARSE's CSR SpMV as a user operator when built with CUDA.
//
// Every (matrix, format) row solves A x = b with b = 1 and x0 = 0: one untimed warm-up solve
// (its true residual ||b - A x|| / ||b|| checked on the host with the sequential reference), then
// --repeat timed solves, each fenced before and after, reporting median/min/max milliseconds.
// Conversion to the format, the preconditioner and the work vectors are prepared before timing.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <spk/csr_matrix.hpp>
#include <spk/formats/balanced_coo.hpp>
#include <spk/formats/compressed_coo.hpp>
#include <spk/formats/dia.hpp>
#include <spk/formats/ell.hpp>
#include <spk/formats/hdia.hpp>
#include <spk/formats/hll.hpp>
#include <spk/formats/hyb.hpp>
#include <spk/reference.hpp>
#include <spk/solvers/bicgstab.hpp>
#include <spk/solvers/cg.hpp>
#include <spk/solvers/jacobi.hpp>
#include <spk/solvers/linear_operator.hpp>

#include "bench_cases.hpp"
#include "bench_util.hpp"
#include "cusparse_baseline.hpp"

namespace {

using S = double;
using Device = Kokkos::DefaultExecutionSpace::device_type;
using Csr = spk::CsrMatrix<S, int, int, Device>;
using Vec = Kokkos::View<S*, Device>;

const char* const usage_text = R"(usage: spk-solve [options]
  --matrix FILE.mtx[*K]  Matrix Market file, optionally K copies on the diagonal (repeatable)
  --gen NAME:SIZE[:k=v]  generated matrix (repeatable); see the list below
  --solver cg|bicgstab   Krylov method (default bicgstab)
  --precond none|jacobi  pointwise preconditioner (default none)
  --format LIST|all      comma-separated formats of the registry below (default all)
  --tol T                relative tolerance on ||r|| / ||b|| (default 1e-8)
  --maxit N              iterations at most (default 10000)
  --warmup N             untimed solves before timing (default 1, at least 1)
  --repeat N             timed solves; the median is reported (default 5)
  --baseline FORMAT      format the speed-ups are relative to (default cusparse-csr when
                         available, else csr)
  --json FILE            write the results as JSON
  --help                 this text
Solves A x = b with b = 1, x0 = 0, in double. Exit status: 0 success, 1 error, 2 bad usage,
3 a solve did not converge or its true residual exceeds 10 x --tol.
)";

struct Options {
  std::vector<std::string> cases;
  std::vector<std::string> formats{"all"};
  std::string solver = "bicgstab";
  std::string precond = "none";
  std::string baseline;
  double tol = 1e-8;
  int maxit = 10000;
  int warmup = 1;
  int repeat = 5;
  std::string json;
  std::string command;
};

/// solve(b, x): runs the solver from the x it is given.
using Solve = std::function<spk::SolverResult(const Vec&, const Vec&)>;

/// A solve ready to time: the operator in its format, the preconditioner and the work vectors
/// are built.
struct PreparedSolve {
  std::size_t memory_bytes = 0;  ///< of the matrix in its format
  Solve solve;
};

spk::SolverOptions solver_options(const Options& o) {
  spk::SolverOptions so;
  so.max_iterations = o.maxit;
  so.relative_tolerance = o.tol;
  return so;
}

/// The solve of --solver on operator `op` with preconditioner `m`, work vectors allocated here.
template <class Op, class Precond>
Solve make_solve(const std::shared_ptr<const Op>& op, const Precond& m, std::int64_t n,
                 const Options& o) {
  const spk::SolverOptions so = solver_options(o);
  if (o.solver == "cg") {
    auto ws = std::make_shared<spk::CgWorkspace<S, Device>>(n);
    return [op, m, ws, so](const Vec& b, const Vec& x) { return spk::cg(*op, b, x, so, m, *ws); };
  }
  auto ws = std::make_shared<spk::BicgstabWorkspace<S, Device>>(n, !Precond::is_identity);
  return
      [op, m, ws, so](const Vec& b, const Vec& x) { return spk::bicgstab(*op, b, x, so, m, *ws); };
}

/// The solve of --solver and --precond on `op` (Jacobi from the diagonal of the CSR input).
template <class Op>
Solve make_solve(const std::shared_ptr<const Op>& op, const Csr& a, const Options& o) {
  if (o.precond == "jacobi") return make_solve(op, spk::make_jacobi(a), a.nrows(), o);
  return make_solve(op, spk::IdentityPreconditioner{}, a.nrows(), o);
}

/// An spk format: converted from CSR with its default options (throws PaddingLimitExceeded when
/// it refuses the matrix), multiplied through its spmv overload.
template <class Matrix>
PreparedSolve prepare_format(const Csr& a, const Options& o) {
  const auto m = std::make_shared<const Matrix>(a);
  return {m->memory_bytes(), make_solve(m, a, o)};
}

#ifdef SPK_HAVE_CUSPARSE
constexpr bool have_cusparse = true;

/// cusparseSpMV (CSR, ALG1) as a user operator. cuSPARSE binds a product to its vectors, so one
/// prepared product is kept per (x, y) pair the solver uses (two or three, set up in the
/// warm-up solve).
class CusparseCsrOperator {
 public:
  explicit CusparseCsrOperator(const Csr& a) : a_(a) {}
  void apply(const Kokkos::View<const S*, Device>& x, const Vec& y) {
    auto& op = ops_[std::make_pair(static_cast<const void*>(x.data()),
                                   static_cast<const void*>(y.data()))];
    if (!op)
      op = std::make_shared<spk_bench::CusparseSpmv<S>>(
          spk_bench::CusparseSpmv<S>::Format::csr, CUSPARSE_SPMV_CSR_ALG1, spk::Mode::N, a_.nrows(),
          a_.ncols(), a_.nnz(), a_.row_map(), a_.col_idx(), a_.values(), x, y);
    op->run(1.0, 0.0);
  }

 private:
  Csr a_;
  std::map<std::pair<const void*, const void*>, std::shared_ptr<spk_bench::CusparseSpmv<S>>> ops_;
};

PreparedSolve prepare_cusparse_csr(const Csr& a, const Options& o) {
  const auto cus = std::make_shared<CusparseCsrOperator>(a);
  const auto op = spk::make_operator(a.nrows(), [cus](const Kokkos::View<const S*, Device>& x,
                                                      const Vec& y) { cus->apply(x, y); });
  return {a.memory_bytes(), make_solve(std::make_shared<const decltype(op)>(op), a, o)};
}
#else
constexpr bool have_cusparse = false;
#endif

/// The format registry: every format spk-solve can time, in table order. A new format is one
/// entry (prepare_format<ItsMatrixType> for an spk format with an spmv overload).
struct FormatEntry {
  const char* name;
  const char* description;
  bool available;
  std::function<PreparedSolve(const Csr&, const Options&)> prepare;
};

const std::vector<FormatEntry>& format_registry() {
  static const std::vector<FormatEntry> formats = {
      {"csr", "spk CSR, default schedule", true, prepare_format<Csr>},
      {"ell", "spk ELLPACK-R", true, prepare_format<spk::EllMatrix<S, int, int, Device>>},
      {"hll", "spk hacked ELLPACK (hacks of 32, automatic sort)", true,
       prepare_format<spk::HllMatrix<S, int, int, Device>>},
      {"dia", "spk DIA", true, prepare_format<spk::DiaMatrix<S, int, int, Device>>},
      {"hdia", "spk hacked DIA (hacks of 32 rows)", true,
       prepare_format<spk::HdiaMatrix<S, int, int, Device>>},
      {"hyb", "spk HYB (ELL + COO)", true, prepare_format<spk::HybMatrix<S, int, int, Device>>},
      {"balanced-coo", "spk balanced COO (chunks of equal entry counts)", true,
       prepare_format<spk::BalancedCooMatrix<S, int, int, Device>>},
      {"compressed-coo", "spk compressed COO (per-chunk index and value compression)", true,
       prepare_format<spk::CompressedCooMatrix<S, int, int, Device>>},
#ifdef SPK_HAVE_CUSPARSE
      {"cusparse-csr", "cusparseSpMV CSR ALG1 as a user operator (spk::make_operator)", true,
       prepare_cusparse_csr},
#else
      {"cusparse-csr", "cusparseSpMV CSR ALG1 as a user operator (spk::make_operator)", false,
       nullptr},
#endif
  };
  return formats;
}

std::string registry_help() {
  std::string out = "\nFormats:\n";
  for (const auto& f : format_registry())
    out += std::string("  ") + f.name +
           std::string(16 - std::min<std::size_t>(15, std::string(f.name).size()), ' ') +
           f.description + (f.available ? "" : " (not in this build)") + "\n";
  return out;
}

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "spk-solve: " << msg << "\n(see spk-solve --help)\n";
  std::exit(2);
}

int to_int(const std::string& opt, const std::string& v, int min) {
  try {
    std::size_t pos = 0;
    const int n = std::stoi(v, &pos);
    if (pos != v.size() || n < min) throw std::invalid_argument(v);
    return n;
  } catch (const std::exception&) {
    usage_error(opt + " expects an integer >= " + std::to_string(min) + ", got '" + v + "'");
  }
}

double to_double(const std::string& opt, const std::string& v) {
  try {
    std::size_t pos = 0;
    const double d = std::stod(v, &pos);
    if (pos != v.size() || !(d >= 0) || !std::isfinite(d)) throw std::invalid_argument(v);
    return d;
  } catch (const std::exception&) {
    usage_error(opt + " expects a finite number >= 0, got '" + v + "'");
  }
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

const FormatEntry* find_format(const std::string& name) {
  for (const auto& f : format_registry())
    if (name == f.name) return &f;
  return nullptr;
}

Options parse(int argc, char** argv) {
  Options o;
  o.command = spk_bench::command_line(argc, argv);
  const auto help = [] {
    std::cout << usage_text << registry_help() << "\nGenerators:\n"
              << spk::generate::describe_generators();
    std::exit(0);
  };
  if (argc == 1) help();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      help();
    } else if (a == "--matrix" || a == "--gen") {
      o.cases.push_back(value());
    } else if (a == "--solver") {
      o.solver = value();
      if (o.solver != "cg" && o.solver != "bicgstab")
        usage_error("unknown --solver '" + o.solver + "' (cg, bicgstab)");
    } else if (a == "--precond") {
      o.precond = value();
      if (o.precond != "none" && o.precond != "jacobi")
        usage_error("unknown --precond '" + o.precond + "' (none, jacobi)");
    } else if (a == "--format") {
      o.formats = split(value(), ',');
    } else if (a == "--tol") {
      o.tol = to_double(a, value());
    } else if (a == "--maxit") {
      o.maxit = to_int(a, value(), 0);
    } else if (a == "--warmup") {
      o.warmup = to_int(a, value(), 1);
    } else if (a == "--repeat") {
      o.repeat = to_int(a, value(), 1);
    } else if (a == "--baseline") {
      o.baseline = value();
    } else if (a == "--json") {
      o.json = value();
    } else {
      usage_error("unknown option '" + a + "'");
    }
  }
  if (o.cases.empty()) usage_error("no matrix given (--matrix or --gen)");
  for (const auto& f : o.formats) {
    if (f == "all") continue;
    const FormatEntry* e = find_format(f);
    if (!e) usage_error("unknown --format '" + f + "'" + registry_help());
    if (!e->available)
      std::cerr << "spk-solve: format '" << f << "' is not available in this build\n";
  }
  if (o.baseline.empty()) o.baseline = have_cusparse ? "cusparse-csr" : "csr";
  if (!find_format(o.baseline)) usage_error("unknown --baseline '" + o.baseline + "'");
  return o;
}

bool wanted(const Options& o, const std::string& format) {
  for (const auto& f : o.formats)
    if (f == "all" || f == format) return true;
  return false;
}

struct Result {
  std::string matrix, format;
  long long rows = 0, nnz = 0;
  int iterations = 0;
  bool converged = false;
  std::string reason;
  double rel_residual = 0, true_rel_residual = 0;
  double median_ms = 0, min_ms = 0, max_ms = 0, ms_per_iteration = 0;
  std::size_t memory_bytes = 0;
  double speedup = 0;  // baseline median / this median; 0 when the baseline did not run
  bool ok = true;
};

/// ||b - A x|| / ||b|| on the host with the sequential reference SpMV.
double true_relative_residual(const Csr::host_type& a, const std::vector<S>& b, const Vec& x) {
  auto xh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  const std::vector<S> xv(xh.data(), xh.data() + xh.extent(0));
  std::vector<S> r = b;
  spk::reference::spmv(spk::Mode::N, -1.0, a, xv, 1.0, r);
  double rr = 0, bb = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    rr += r[i] * r[i];
    bb += b[i] * b[i];
  }
  return bb > 0 ? std::sqrt(rr / bb) : std::sqrt(rr);
}

void solve_case(const Options& o, const std::string& c, std::vector<Result>& results) {
  const Csr a = spk_bench::load_case<S, Device>(c);
  const auto host_a = spk::to_host(a);
  spk::require(a.nrows() == a.ncols(), "spk-solve", "case ", c, " is ", a.nrows(), " x ", a.ncols(),
               "; the solvers need a square matrix");
  const std::vector<S> bh(std::size_t(a.nrows()), 1.0);
  Vec b("spk_solve::b", std::size_t(a.nrows())), x("spk_solve::x", std::size_t(a.nrows()));
  Kokkos::deep_copy(b, 1.0);
  std::vector<Result> rows;
  for (const auto& f : format_registry()) {
    if (!wanted(o, f.name) || !f.available) continue;
    PreparedSolve prep;
    try {
      prep = f.prepare(a, o);
    } catch (const spk::PaddingLimitExceeded& e) {
      std::cerr << "spk-solve: skipping " << f.name << " on " << spk_bench::case_name(c) << ": "
                << e.what() << "\n";
      continue;
    }
    Result r;
    r.matrix = spk_bench::case_name(c);
    r.format = f.name;
    r.rows = a.nrows();
    r.nnz = a.nnz();
    spk::SolverResult sr;
    for (int w = 0; w < o.warmup; ++w) {
      Kokkos::deep_copy(x, 0.0);
      sr = prep.solve(b, x);
      Kokkos::fence();
    }
    r.true_rel_residual = true_relative_residual(host_a, bh, x);
    std::vector<double> t;
    for (int k = 0; k < o.repeat; ++k) {
      Kokkos::deep_copy(x, 0.0);
      Kokkos::fence();
      const auto t0 = std::chrono::steady_clock::now();
      sr = prep.solve(b, x);
      Kokkos::fence();
      const auto t1 = std::chrono::steady_clock::now();
      t.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    const auto st = spk_bench::stats_of(t);
    r.iterations = sr.iterations;
    r.converged = sr.converged;
    r.reason = spk::to_string(sr.reason);
    r.rel_residual = sr.relative_residual;
    r.median_ms = st.median;
    r.min_ms = st.min;
    r.max_ms = st.max;
    r.ms_per_iteration = sr.iterations > 0 ? st.median / sr.iterations : 0;
    r.memory_bytes = prep.memory_bytes;
    r.ok = sr.converged && r.true_rel_residual <= 10 * o.tol;
    if (!sr.converged)
      std::cerr << "spk-solve: " << f.name << " on " << r.matrix << ": " << sr.message << "\n";
    rows.push_back(r);
  }
  double base = 0;
  for (const auto& r : rows)
    if (r.format == o.baseline) base = r.median_ms;
  for (auto& r : rows) {
    r.speedup = base > 0 && r.median_ms > 0 ? base / r.median_ms : 0;
    results.push_back(r);
  }
}

void print_table(const Options& o, const std::vector<Result>& rs) {
  std::printf("%-22s %-13s %6s %5s %10s %10s %10s %10s %10s %9s %8s\n", "matrix", "format", "iters",
              "conv", "rel_res", "true_res", "median_ms", "min_ms", "max_ms", "ms/iter",
              ("vs_" + o.baseline).substr(0, 8).c_str());
  for (const auto& r : rs) {
    char ratio[16] = "-";
    if (r.speedup > 0) std::snprintf(ratio, sizeof ratio, "%.2f", r.speedup);
    std::printf("%-22.22s %-13.13s %6d %5s %10.2e %10.2e %10.3f %10.3f %10.3f %9.4f %8s%s\n",
                r.matrix.c_str(), r.format.c_str(), r.iterations, r.converged ? "yes" : "no",
                r.rel_residual, r.true_rel_residual, r.median_ms, r.min_ms, r.max_ms,
                r.ms_per_iteration, ratio, r.ok ? "" : "  FAILED");
  }
}

void write_json(const Options& o, const std::string& gpu, const std::vector<Result>& rs) {
  using spk_bench::json_number;
  using spk_bench::json_string;
  std::ofstream out(o.json);
  if (!out) spk::throw_runtime_error("spk-solve", "cannot write '", o.json, "'");
  out << "{\"gpu\": " << json_string(gpu) << ", \"date\": " << json_string(spk_bench::utc_now())
      << ", \"commit\": " << json_string(spk_bench::commit_id())
      << ", \"command\": " << json_string(o.command) << ", \"results\": [";
  for (std::size_t i = 0; i < rs.size(); ++i) {
    const auto& r = rs[i];
    out << (i ? ",\n  " : "\n  ") << "{\"matrix\": " << json_string(r.matrix)
        << ", \"rows\": " << r.rows << ", \"nnz\": " << r.nnz
        << ", \"format\": " << json_string(r.format) << ", \"solver\": " << json_string(o.solver)
        << ", \"precond\": " << json_string(o.precond) << ", \"tol\": " << json_number(o.tol)
        << ", \"iterations\": " << r.iterations
        << ", \"converged\": " << (r.converged ? "true" : "false")
        << ", \"reason\": " << json_string(r.reason)
        << ", \"rel_residual\": " << json_number(r.rel_residual)
        << ", \"true_rel_residual\": " << json_number(r.true_rel_residual)
        << ", \"median_ms\": " << json_number(r.median_ms)
        << ", \"min_ms\": " << json_number(r.min_ms) << ", \"max_ms\": " << json_number(r.max_ms)
        << ", \"ms_per_iteration\": " << json_number(r.ms_per_iteration)
        << ", \"memory_bytes\": " << r.memory_bytes << ", \"speedup_vs\": {";
    if (r.speedup > 0) out << json_string(o.baseline) << ": " << json_number(r.speedup);
    out << "}}";
  }
  out << "\n]}\n";
}

int run(const Options& o) {
  const std::string gpu = spk_bench::device_name();
  std::printf("device: %s; solver %s; precond %s; tol %g; repeat %d\n", gpu.c_str(),
              o.solver.c_str(), o.precond.c_str(), o.tol, o.repeat);
  std::vector<Result> results;
  bool all_ran = true;
  for (const auto& c : o.cases) {
    std::cerr << "spk-solve: " << c << "\n";
    try {
      solve_case(o, c, results);
    } catch (const std::exception& e) {
      std::cerr << "spk-solve: error in case " << c << ": " << e.what() << "\n";
      all_ran = false;
    }
  }
  print_table(o, results);
  if (!o.json.empty()) write_json(o, gpu, results);
  if (!all_ran) return 1;
  for (const auto& r : results)
    if (!r.ok) {
      std::cerr << "spk-solve: some solves did not converge or missed the tolerance (FAILED)\n";
      return 3;
    }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  Kokkos::ScopeGuard guard(argc, argv);
  spk_bench::reset_device_cache_preference();
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "spk-solve: error: " << e.what() << "\n";
    return 1;
  }
}
