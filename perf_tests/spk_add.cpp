// spk-add: sparse matrix addition C = op(A) + op(B) in HiSparse (spk::add on O(1) transposed
// states) against cuSPARSE CSR addition (csrgeam2; transposed operands by an explicit
// csr2csc, timed with the addition and without it), on pairs made as in Derler et al. (2017):
// A from the case, B = spk::generate::perturb_entries(A, radius, seed) (every entry of A moved
// randomly within +-radius, collisions summed).
//
// Every timed row reports median/min/max over --repeat fenced runs after --warmup runs. A run
// produces a new C: it includes the allocation of C (and of explicit transposes), not the
// release of the previous run's C (released untimed before each run). Results are checked
// against a sequential host CSR addition: max relative error and the number of entries.
//
// Minimum-bytes model (what any CSR addition must move once): A and B read and C written in
// CSR with 32-bit indices, (nnz(A) + nnz(B) + nnz(C)) (value + index) + 3 row-offset arrays;
// GB/s and the fraction of the copy bandwidth (measured in the same process) use it for every
// row. The "own" fraction uses the bytes a row itself moves: HiSparse's pools of A and B read
// and C's pool written; for cuSPARSE the CSR arrays, plus each explicit transpose read and
// written once more. GFLOP/s counts nnz(A) + nnz(B) additions.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <spk/convert.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/formats/hisparse.hpp>
#include <spk/generate.hpp>
#include <spk/io/matrix_market.hpp>
#include <spk/scalar.hpp>

#include "bench_cases.hpp"
#include "bench_util.hpp"
#include "cusparse_add_baseline.hpp"

namespace {

using spk_bench::case_name;
using spk_bench::load_case;
using spk_bench::parse_case;
using Device = Kokkos::DefaultExecutionSpace::device_type;

const char* const usage_text = R"(usage: spk-add [options] [CASE ...]
Sparse addition C = op(A) + op(B), HiSparse (spk::add) against cuSPARSE CSR (csrgeam2), with
B made from A by moving every entry randomly within +-radius (collisions summed).
  CASE / --matrix FILE.mtx[*K] / --gen NAME:SIZE[:k=v]
                         a case as in spk-bench (repeatable; positional cases too)
  --cases FILE           list of cases, one per line ('#' comments, ${VAR} from the environment)
  --scalar TYPE          float | double (default double)
  --ops LIST             comma-separated of NN,TN,NT,TT (default all): op(A) op(B), T = that
                         operand transposed; TN/NT need a square A and are skipped otherwise
  --radius R             perturbation radius of B (default 2)
  --seed S               perturbation seed (default 1)
  --node-size D          HiSparse node size, a power of two in [2, 256] (default 128)
  --warmup N             untimed runs before timing (default 5)
  --repeat N             timed runs; the median is reported (default 50)
  --convert-repeat N     timed HiSparse conversions of A and of B (default 10)
  --json FILE            write the results as JSON (spk-bench's shape; mode = the ops)
  --help                 this text
Rows: hisparse-convert (A, B), hisparse-add (op; op+ws: with a HiSparseAddWorkspace kept
between runs), cusparse-geam (NN), cusparse-geam+transpose
(TN, NT, TT: csr2csc of the transposed operands + geam, timed together; TT-sum: geam, then
csr2csc of the sum), cusparse-geam-pretransposed (geam alone on operands transposed before).
vs_cus = the fastest cuSPARSE way for that op (what a user pays) / HiSparse; vs_pre = cuSPARSE
on pretransposed operands / HiSparse.
Exit status: 0 success, 1 error, 2 bad usage, 3 a result disagreed with the reference.
)";

#ifdef SPK_HAVE_CUSPARSE
constexpr bool have_cusparse = true;
#else
constexpr bool have_cusparse = false;
#endif

struct Options {
  std::vector<std::string> cases;
  std::string scalar = "double";
  std::vector<std::string> ops{"NN", "TN", "NT", "TT"};
  int radius = 2;
  std::uint64_t seed = 1;
  int node_size = 128;
  int warmup = 5;
  int repeat = 50;
  int convert_repeat = 10;
  std::string json;
  std::string command;
};

struct Result {
  std::string matrix, mode, format, variant;
  long long rows = 0, cols = 0, nnz = 0, nnz_b = 0, nnz_c = 0;
  double median_ms = 0, min_ms = 0, max_ms = 0, gflops = 0, gbps = 0, copy_fraction = 0;
  double own_copy_fraction = 0, rel_error = 0;
  bool correct = true;
  std::size_t memory_bytes = 0;
};

struct RunInfo {
  std::string gpu, date, commit, command, scalar, cusparse;
  double copy_gbps = 0;
  int radius = 0, node_size = 0;
};

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "spk-add: " << msg << "\n(see spk-add --help)\n";
  std::exit(2);
}

long long to_integer(const std::string& opt, const std::string& v, long long lo) {
  try {
    std::size_t pos = 0;
    const long long n = std::stoll(v, &pos);
    if (pos != v.size() || n < lo) throw std::invalid_argument(v);
    return n;
  } catch (const std::exception&) {
    usage_error(opt + " expects an integer >= " + std::to_string(lo) + ", got '" + v + "'");
  }
}

Options parse(int argc, char** argv) {
  Options o;
  o.command = spk_bench::command_line(argc, argv);
  if (argc == 1) {
    std::cout << usage_text << "\nGenerators:\n" << spk::generate::describe_generators();
    std::exit(0);
  }
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::cout << usage_text << "\nGenerators:\n" << spk::generate::describe_generators();
      std::exit(0);
    } else if (a == "--matrix" || a == "--gen") {
      o.cases.push_back(value());
    } else if (a == "--cases") {
      for (auto& c : spk_bench::read_cases(value())) o.cases.push_back(c);
    } else if (a == "--scalar") {
      o.scalar = value();
    } else if (a == "--ops") {
      o.ops = spk_bench::split_list(value(), ',');
    } else if (a == "--radius") {
      o.radius = int(to_integer(a, value(), 0));
    } else if (a == "--seed") {
      o.seed = std::uint64_t(to_integer(a, value(), 0));
    } else if (a == "--node-size") {
      o.node_size = int(to_integer(a, value(), 2));
    } else if (a == "--warmup") {
      o.warmup = int(to_integer(a, value(), 0));
    } else if (a == "--repeat") {
      o.repeat = int(to_integer(a, value(), 1));
    } else if (a == "--convert-repeat") {
      o.convert_repeat = int(to_integer(a, value(), 1));
    } else if (a == "--json") {
      o.json = value();
    } else if (a.size() > 1 && a[0] == '-') {
      usage_error("unknown option '" + a + "'");
    } else {
      o.cases.push_back(a);
    }
  }
  if (o.cases.empty()) usage_error("no matrix given (CASE, --matrix, --gen or --cases)");
  if (o.scalar != "float" && o.scalar != "double")
    usage_error("unknown --scalar '" + o.scalar + "' (HiSparse stores float or double)");
  if (o.ops.empty()) usage_error("--ops needs at least one of NN,TN,NT,TT");
  for (const auto& op : o.ops)
    if (op != "NN" && op != "TN" && op != "NT" && op != "TT")
      usage_error("unknown --ops entry '" + op + "' (expected NN, TN, NT or TT)");
  if (o.node_size > 256 || (o.node_size & (o.node_size - 1)) != 0)
    usage_error("--node-size must be a power of two in [2, 256], got " +
                std::to_string(o.node_size));
  return o;
}

/// Times `run` like spk_bench::time_ms, with `release` (dropping the previous run's result)
/// called untimed before every run, so a run pays for allocating its result but not for freeing
/// the last one.
std::vector<double> time_fresh_ms(const std::function<void()>& release,
                                  const std::function<void()>& run, int warmup, int repeat) {
  for (int i = 0; i < warmup; ++i) {
    release();
    run();
  }
  std::vector<double> t;
  t.reserve(std::size_t(repeat));
  for (int i = 0; i < repeat; ++i) {
    release();
    Kokkos::fence();
    const auto t0 = std::chrono::steady_clock::now();
    run();
    Kokkos::fence();
    const auto t1 = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  release();
  Kokkos::fence();
  return t;
}

template <class S>
using Csr = spk::CsrMatrix<S, int, int, Device>;
template <class S>
using HostCsr = typename Csr<S>::host_type;
template <class S>
using HiSparse = spk::HiSparseMatrix<S, int, Device>;

/// The host reference of C = X + Y (rows sorted, no duplicates in X and Y): every entry of the
/// union, its value in double and |x| + |y| (the scale of its rounding error).
struct Reference {
  long long nrows = 0, ncols = 0;
  std::vector<long long> row_ptr;
  std::vector<int> cols;
  std::vector<double> vals, scale;
  long long nonzeros = 0;  ///< entries whose value is not zero
  long long nnz() const { return (long long)cols.size(); }
};

template <class S>
Reference host_add(const HostCsr<S>& x, const HostCsr<S>& y) {
  spk::require(x.nrows() == y.nrows() && x.ncols() == y.ncols(), "spk-add host_add",
               "operands are ", x.nrows(), " x ", x.ncols(), " and ", y.nrows(), " x ", y.ncols());
  Reference r;
  r.nrows = x.nrows();
  r.ncols = x.ncols();
  r.row_ptr.assign(std::size_t(r.nrows) + 1, 0);
  r.cols.reserve(std::size_t(x.nnz() + y.nnz()));
  r.vals.reserve(std::size_t(x.nnz() + y.nnz()));
  r.scale.reserve(std::size_t(x.nnz() + y.nnz()));
  const auto &xr = x.row_map(), &xc = x.col_idx(), &yr = y.row_map(), &yc = y.col_idx();
  const auto &xv = x.values(), &yv = y.values();
  for (long long i = 0; i < r.nrows; ++i) {
    auto p = xr(i), q = yr(i);
    const auto pe = xr(i + 1), qe = yr(i + 1);
    while (p < pe || q < qe) {
      const int cx = p < pe ? xc(p) : std::numeric_limits<int>::max();
      const int cy = q < qe ? yc(q) : std::numeric_limits<int>::max();
      const int c = std::min(cx, cy);
      double v = 0, s = 0;
      if (cx == c) {
        v += double(xv(p));
        s += std::abs(double(xv(p)));
        ++p;
      }
      if (cy == c) {
        v += double(yv(q));
        s += std::abs(double(yv(q)));
        ++q;
      }
      r.cols.push_back(c);
      r.vals.push_back(double(S(v)));  // the sum rounded to S, as the device computes it
      r.scale.push_back(s);
      r.nonzeros += S(v) != S(0);
    }
    r.row_ptr[std::size_t(i) + 1] = (long long)r.cols.size();
  }
  return r;
}

struct Check {
  double rel_error = 0;
  long long nnz = 0, expected_nnz = 0;
  bool correct = true;
  std::string message;
};

/// Compares a result (rows sorted by column) with the reference entry by entry: an entry
/// missing on either side counts with its value. `zeros_dropped`: the result keeps no entries
/// whose value is zero (HiSparse's to_csr), so its nnz is compared with the reference's
/// nonzeros; otherwise (cuSPARSE) with the reference's structural union.
template <class S>
Check compare(const Reference& ref, const HostCsr<S>& got, bool zeros_dropped) {
  Check ck;
  ck.nnz = got.nnz();
  ck.expected_nnz = zeros_dropped ? ref.nonzeros : ref.nnz();
  if (got.nrows() != ref.nrows || got.ncols() != ref.ncols) {
    ck.correct = false;
    ck.rel_error = std::numeric_limits<double>::infinity();
    ck.message = "result is " + std::to_string(got.nrows()) + " x " + std::to_string(got.ncols()) +
                 ", expected " + std::to_string(ref.nrows) + " x " + std::to_string(ref.ncols);
    return ck;
  }
  const double tol = 4 * spk::unit_roundoff<S>();
  double max_err = 0, max_ref = 0;
  long long bad = 0, first_row = -1;
  int first_col = -1;
  double first_ref = 0, first_got = 0;
  const auto &gr = got.row_map(), &gc = got.col_idx();
  const auto& gv = got.values();
  for (long long i = 0; i < ref.nrows; ++i) {
    long long p = ref.row_ptr[std::size_t(i)];
    const long long pe = ref.row_ptr[std::size_t(i) + 1];
    long long q = gr(i);
    const long long qe = gr(i + 1);
    while (p < pe || q < qe) {
      const int cr = p < pe ? ref.cols[std::size_t(p)] : std::numeric_limits<int>::max();
      const int cg = q < qe ? gc(q) : std::numeric_limits<int>::max();
      const int c = std::min(cr, cg);
      double rv = 0, sc = 0, gval = 0;
      if (cr == c) {
        rv = ref.vals[std::size_t(p)];
        sc = ref.scale[std::size_t(p)];
        ++p;
      }
      if (cg == c) {
        gval = double(gv(q));
        ++q;
      }
      const double err = std::abs(gval - rv);
      max_ref = std::max(max_ref, std::abs(rv));
      max_err = std::max(max_err, err == err ? err : std::numeric_limits<double>::infinity());
      if (!(err <= tol * sc) && !(err == 0)) {
        if (bad++ == 0) {
          first_row = i;
          first_col = c;
          first_ref = rv;
          first_got = gval;
        }
      }
    }
  }
  ck.rel_error = max_ref > 0 ? max_err / max_ref : max_err;
  if (bad > 0) {
    ck.correct = false;
    char buf[160];
    std::snprintf(buf, sizeof buf, "the first at (%lld, %d): %.17g, expected %.17g", first_row,
                  first_col, first_got, first_ref);
    ck.message = std::to_string(bad) + " entries differ from the reference, " + buf;
  }
  if (ck.nnz != ck.expected_nnz) {
    ck.correct = false;
    ck.message += (ck.message.empty() ? "" : "; ") + std::string("nnz ") + std::to_string(ck.nnz) +
                  ", expected " + std::to_string(ck.expected_nnz);
  }
  return ck;
}

/// Bytes of a CSR matrix with 32-bit offsets and indices.
template <class S>
double csr_bytes(long long rows, long long nnz) {
  return double(nnz) * double(sizeof(S) + sizeof(int)) + double(rows + 1) * sizeof(int);
}

/// Everything one case needs: A and B on the device and the host, their HiSparse forms, and
/// the explicit transposes made on demand (for the pretransposed cuSPARSE rows and the host
/// references).
template <class S>
struct CaseData {
  std::string label;
  Csr<S> a, b;
  HostCsr<S> ha, hb;
  HiSparse<S> sa, sb;
  std::shared_ptr<HostCsr<S>> hat, hbt;  // host transposes, made on demand
};

template <class S>
const HostCsr<S>& host_operand(CaseData<S>& d, bool first, bool transposed) {
  if (!transposed) return first ? d.ha : d.hb;
  auto& slot = first ? d.hat : d.hbt;
  if (!slot) slot = std::make_shared<HostCsr<S>>(spk::transpose(first ? d.ha : d.hb));
  return *slot;
}

/// Fills the timing fields of `r` from per-run times, with `bytes_min` the model's bytes and
/// `bytes_own` the row's own bytes.
void set_timing(Result& r, const std::vector<double>& t, double flops, double bytes_min,
                double bytes_own, double copy_gbps) {
  const auto st = spk_bench::stats_of(t);
  r.median_ms = st.median;
  r.min_ms = st.min;
  r.max_ms = st.max;
  r.gflops = flops / (st.median * 1e6);
  r.gbps = bytes_min / (st.median * 1e6);
  r.copy_fraction = copy_gbps > 0 ? r.gbps / copy_gbps : 0;
  r.own_copy_fraction = copy_gbps > 0 ? bytes_own / (st.median * 1e6) / copy_gbps : 0;
}

/// The hisparse-convert rows: CSR -> HiSparse of A and of B, each checked by to_csr().
template <class S>
void convert_rows(const Options& o, const RunInfo& info, CaseData<S>& d,
                  std::vector<Result>& results, bool& all_correct) {
  for (int which = 0; which < 2; ++which) {
    const Csr<S>& m = which == 0 ? d.a : d.b;
    const HiSparse<S>& h = which == 0 ? d.sa : d.sb;
    Result r;
    r.matrix = d.label;
    r.mode = "-";
    r.format = "hisparse-convert";
    r.variant = which == 0 ? "A" : "B";
    r.rows = d.a.nrows();
    r.cols = d.a.ncols();
    r.nnz = d.a.nnz();
    r.nnz_b = d.b.nnz();
    r.memory_bytes = h.memory_bytes();
    // check: to_csr() gives back the nonzeros of the input
    const HostCsr<S> empty(m.nrows(), m.ncols(), 0);
    const Reference ref = host_add<S>(which == 0 ? d.ha : d.hb, empty);
    const auto ck = compare<S>(ref, spk::to_host(h.template to_csr<int>()), true);
    r.rel_error = ck.rel_error;
    r.correct = ck.correct;
    r.nnz_c = ck.nnz;
    if (!ck.correct)
      std::cerr << "spk-add: hisparse-convert " << r.variant << " on " << d.label << ": "
                << ck.message << "\n";
    HiSparse<S> out;
    const int node_size = o.node_size;
    const auto t =
        time_fresh_ms([&] { out = HiSparse<S>(); }, [&] { out = HiSparse<S>(m, node_size); },
                      std::min(o.warmup, 1), o.convert_repeat);
    const double bytes = double(m.memory_bytes()) + double(h.memory_bytes());
    set_timing(r, t, 0.0, bytes, bytes, info.copy_gbps);
    all_correct = all_correct && r.correct;
    results.push_back(r);
  }
}

/// The rows of one op: hisparse-add and the cuSPARSE ways of computing op(A) + op(B).
template <class S>
void op_rows(const Options& o, const RunInfo& info, CaseData<S>& d, const std::string& op,
             std::vector<Result>& results, bool& all_correct) {
  const bool ta = op[0] == 'T', tb = op[1] == 'T';
  const Reference ref = host_add<S>(host_operand(d, true, ta), host_operand(d, false, tb));
  const long long nnz_a = d.a.nnz(), nnz_b = d.b.nnz(), nnz_c = ref.nnz();
  const double flops = double(nnz_a + nnz_b);
  const double bytes_min = csr_bytes<S>(d.a.nrows(), nnz_a) + csr_bytes<S>(d.b.nrows(), nnz_b) +
                           csr_bytes<S>(ref.nrows, nnz_c);
  auto row = [&](const std::string& format, const std::string& variant) {
    Result r;
    r.matrix = d.label;
    r.mode = op;
    r.format = format;
    r.variant = variant;
    r.rows = d.a.nrows();
    r.cols = d.a.ncols();
    r.nnz = nnz_a;
    r.nnz_b = nnz_b;
    r.nnz_c = nnz_c;
    return r;
  };
  auto finish = [&](Result& r, const Check& ck) {
    r.rel_error = ck.rel_error;
    r.correct = ck.correct;
    if (!ck.correct)
      std::cerr << "spk-add: " << r.format << " " << r.variant << " on " << d.label << ": "
                << ck.message << "\n";
    all_correct = all_correct && r.correct;
    results.push_back(r);
  };

  {  // HiSparse: the operands' states, C = op(A) + op(B)
    const HiSparse<S> x = ta ? d.sa.transpose() : d.sa;
    const HiSparse<S> y = tb ? d.sb.transpose() : d.sb;
    Result r = row("hisparse-add", op);
    HiSparse<S> c = spk::add(x, y);
    r.memory_bytes = c.memory_bytes();
    const auto ck = compare<S>(ref, spk::to_host(c.template to_csr<int>()), true);
    c = HiSparse<S>();
    const auto t =
        time_fresh_ms([&] { c = HiSparse<S>(); }, [&] { c = spk::add(x, y); }, o.warmup, o.repeat);
    const double own = double(d.sa.memory_bytes() + d.sb.memory_bytes() + r.memory_bytes);
    set_timing(r, t, flops, bytes_min, own, info.copy_gbps);
    finish(r, ck);
  }
  {  // the same with a workspace kept between the runs (HiSparseAddWorkspace, like cuSPARSE's
     // buffer, which these runs also keep): no working pool or queue allocation per run
    const HiSparse<S> x = ta ? d.sa.transpose() : d.sa;
    const HiSparse<S> y = tb ? d.sb.transpose() : d.sb;
    Result r = row("hisparse-add", op + "+ws");
    spk::HiSparseAddWorkspace<Device> ws;
    HiSparse<S> c = spk::add(x, y, {}, ws);
    r.memory_bytes = c.memory_bytes();
    const auto ck = compare<S>(ref, spk::to_host(c.template to_csr<int>()), true);
    c = HiSparse<S>();
    const auto t = time_fresh_ms([&] { c = HiSparse<S>(); }, [&] { c = spk::add(x, y, {}, ws); },
                                 o.warmup, o.repeat);
    const double own = double(d.sa.memory_bytes() + d.sb.memory_bytes() + r.memory_bytes);
    set_timing(r, t, flops, bytes_min, own, info.copy_gbps);
    finish(r, ck);
  }
#ifdef SPK_HAVE_CUSPARSE
  spk_bench::CusparseAdd<S, Device> cus;
  const double a_bytes = csr_bytes<S>(d.a.nrows(), nnz_a);
  const double b_bytes = csr_bytes<S>(d.b.nrows(), nnz_b);
  const double c_bytes = csr_bytes<S>(ref.nrows, nnz_c);
  Csr<S> c, at, bt, sum;
  const auto release = [&] { c = at = bt = sum = Csr<S>(); };
  // one cuSPARSE row: checked once, then timed
  auto cusparse_row = [&](const std::string& format, const std::string& variant,
                          const std::function<void()>& run, double own) {
    Result r = row(format, variant);
    release();
    run();
    Kokkos::fence();
    r.memory_bytes = c.memory_bytes();
    const auto ck = compare<S>(ref, spk::to_host(c), false);
    const auto t = time_fresh_ms(release, run, o.warmup, o.repeat);
    set_timing(r, t, flops, bytes_min, own, info.copy_gbps);
    finish(r, ck);
  };
  if (op == "NN") {
    cus.prepare_add(d.a, d.b);
    cusparse_row(
        "cusparse-geam", op, [&] { c = cus.add(d.a, d.b); }, bytes_min);
    return;
  }
  // explicit transposes of the operands (made once, outside the timed rows) for the buffer
  // sizes and the pretransposed row
  const Csr<S> a_t = ta ? cus.transpose(d.a) : Csr<S>();
  const Csr<S> b_t = tb ? cus.transpose(d.b) : Csr<S>();
  const Csr<S>& x = ta ? a_t : d.a;
  const Csr<S>& y = tb ? b_t : d.b;
  if (ta) cus.prepare_transpose(d.a);
  if (tb) cus.prepare_transpose(d.b);
  cus.prepare_add(x, y);
  const double extra = (ta ? 2 * a_bytes : 0.0) + (tb ? 2 * b_bytes : 0.0);
  cusparse_row(
      "cusparse-geam+transpose", op,
      [&] {
        if (ta) at = cus.transpose(d.a);
        if (tb) bt = cus.transpose(d.b);
        c = cus.add(ta ? at : d.a, tb ? bt : d.b);
      },
      bytes_min + extra);
  if (op == "TT") {  // A^T + B^T = (A + B)^T: one transpose, of the sum
    cus.prepare_add(d.a, d.b);
    Csr<S> s0 = cus.add(d.a, d.b);
    cus.prepare_transpose(s0);
    s0 = Csr<S>();
    cusparse_row(
        "cusparse-geam+transpose", "TT-sum",
        [&] {
          sum = cus.add(d.a, d.b);
          c = cus.transpose(sum);
        },
        bytes_min + 2 * c_bytes);
  }
  cusparse_row(
      "cusparse-geam-pretransposed", op, [&] { c = cus.add(x, y); }, bytes_min);
#endif
}

template <class S>
void bench_case(const Options& o, const RunInfo& info, const std::string& c,
                std::vector<Result>& results, bool& all_correct, bool& all_ran) {
  CaseData<S> d;
  d.label = case_name(c);
  d.a = load_case<S, Device>(c);
  d.b = spk::generate::perturb_entries(d.a, o.radius, o.seed);
  d.ha = spk::to_host(d.a);
  d.hb = spk::to_host(d.b);
  d.sa = HiSparse<S>(d.a, o.node_size);
  d.sb = HiSparse<S>(d.b, o.node_size);
  const bool square = d.a.nrows() == d.a.ncols();
  std::fprintf(stderr,
               "spk-add: %s: %d x %d, nnz A %lld, nnz B %lld (radius %d), HiSparse A %zu B %zu "
               "bytes, %d levels\n",
               d.label.c_str(), d.a.nrows(), d.a.ncols(), (long long)d.a.nnz(),
               (long long)d.b.nnz(), o.radius, d.sa.memory_bytes(), d.sb.memory_bytes(),
               d.sa.levels());
  convert_rows(o, info, d, results, all_correct);
  for (const auto& op : o.ops) {
    if (!square && (op == "TN" || op == "NT")) {
      std::cerr << "spk-add: skipping " << op << " on " << d.label << ": op(A) and op(B) differ "
                << "in shape (" << d.a.nrows() << " x " << d.a.ncols() << " not square)\n";
      continue;
    }
    try {
      op_rows(o, info, d, op, results, all_correct);
    } catch (const std::exception& e) {
      std::cerr << "spk-add: error in " << op << " on " << d.label << ": " << e.what() << "\n";
      all_ran = false;
    }
  }
}

/// Median time of the fastest row of `formats` with the same matrix and mode, or 0.
double best_ms(const std::vector<Result>& rs, const Result& r,
               const std::vector<std::string>& formats) {
  double best = 0;
  for (const auto& q : rs)
    if (q.matrix == r.matrix && q.mode == r.mode && q.correct &&
        std::find(formats.begin(), formats.end(), q.format) != formats.end() &&
        (best == 0 || q.median_ms < best))
      best = q.median_ms;
  return best;
}

void print_table(const std::vector<Result>& rs) {
  std::printf("%-24s %-4s %-27s %-6s %10s %10s %10s %8s %8s %6s %6s %9s %9s %7s %7s\n", "matrix",
              "ops", "format", "var", "median_ms", "min_ms", "max_ms", "GFLOP/s", "GB/s", "%copy",
              "%own", "rel_err", "C_MB", "vs_cus", "vs_pre");
  for (const auto& r : rs) {
    char vs_cus[16] = "-", vs_pre[16] = "-";
    if (r.format == "hisparse-add") {
      const double user = best_ms(rs, r, {"cusparse-geam", "cusparse-geam+transpose"});
      const double pre = best_ms(rs, r, {"cusparse-geam", "cusparse-geam-pretransposed"});
      if (user > 0) std::snprintf(vs_cus, sizeof vs_cus, "%.2f", user / r.median_ms);
      if (pre > 0) std::snprintf(vs_pre, sizeof vs_pre, "%.2f", pre / r.median_ms);
    }
    std::printf(
        "%-24.24s %-4s %-27.27s %-6.6s %10.4f %10.4f %10.4f %8.2f %8.1f %5.1f%% %5.1f%% "
        "%9.2e %9.2f %7s %7s%s\n",
        r.matrix.c_str(), r.mode.c_str(), r.format.c_str(), r.variant.c_str(), r.median_ms,
        r.min_ms, r.max_ms, r.gflops, r.gbps, 100 * r.copy_fraction, 100 * r.own_copy_fraction,
        r.rel_error, double(r.memory_bytes) / 1e6, vs_cus, vs_pre, r.correct ? "" : "  WRONG");
  }
}

void write_json(const std::string& path, const RunInfo& info, const std::vector<Result>& rs) {
  using spk_bench::json_number;
  using spk_bench::json_string;
  std::ofstream out(path);
  if (!out) spk::throw_runtime_error("spk-add", "cannot write '", path, "'");
  out << "{\"gpu\": " << json_string(info.gpu) << ", \"date\": " << json_string(info.date)
      << ", \"commit\": " << json_string(info.commit)
      << ", \"command\": " << json_string(info.command)
      << ", \"copy_bandwidth_gbps\": " << json_number(info.copy_gbps)
      << ", \"cusparse\": " << json_string(info.cusparse) << ", \"radius\": " << info.radius
      << ", \"node_size\": " << info.node_size << ", \"results\": [";
  for (std::size_t i = 0; i < rs.size(); ++i) {
    const auto& r = rs[i];
    out << (i ? ",\n  " : "\n  ") << "{\"matrix\": " << json_string(r.matrix)
        << ", \"rows\": " << r.rows << ", \"cols\": " << r.cols << ", \"nnz\": " << r.nnz
        << ", \"nnz_b\": " << r.nnz_b << ", \"nnz_c\": " << r.nnz_c
        << ", \"scalar\": " << json_string(info.scalar) << ", \"mode\": " << json_string(r.mode)
        << ", \"format\": " << json_string(r.format) << ", \"variant\": " << json_string(r.variant)
        << ", \"median_ms\": " << json_number(r.median_ms)
        << ", \"min_ms\": " << json_number(r.min_ms) << ", \"max_ms\": " << json_number(r.max_ms)
        << ", \"gflops\": " << json_number(r.gflops) << ", \"gbps\": " << json_number(r.gbps)
        << ", \"copy_fraction\": " << json_number(r.copy_fraction)
        << ", \"own_copy_fraction\": " << json_number(r.own_copy_fraction)
        << ", \"memory_bytes\": " << r.memory_bytes
        << ", \"rel_error\": " << json_number(r.rel_error)
        << ", \"correct\": " << (r.correct ? "true" : "false") << "}";
  }
  out << "\n]}\n";
}

template <class S>
int run_all(const Options& o, const RunInfo& info) {
  std::vector<Result> results;
  bool all_correct = true, all_ran = true;
  for (const auto& c : o.cases) {
    std::cerr << "spk-add: " << c << "\n";
    try {
      const auto cs = parse_case(c);
      if (!cs.file.empty() && spk::io::read_matrix_market_header(cs.file).field ==
                                  spk::io::MatrixMarketHeader::Field::complex) {
        std::cerr << "spk-add: skipping " << c << ": complex values (HiSparse is real)\n";
        continue;
      }
      bench_case<S>(o, info, c, results, all_correct, all_ran);
    } catch (const std::exception& e) {
      std::cerr << "spk-add: error in case " << c << ": " << e.what() << "\n";
      all_ran = false;
    }
  }
  print_table(results);
  if (!o.json.empty()) write_json(o.json, info, results);
  if (!all_ran) return 1;
  if (!all_correct) {
    std::cerr << "spk-add: some results disagree with the host reference (marked WRONG)\n";
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
    RunInfo info;
    info.gpu = spk_bench::device_name();
    info.date = spk_bench::utc_now();
    info.commit = spk_bench::commit_id();
    info.command = o.command;
    info.scalar = o.scalar;
    info.radius = o.radius;
    info.node_size = o.node_size;
#ifdef SPK_HAVE_CUSPARSE
    info.cusparse = "csrgeam2 + csr2cscEx2, cuSPARSE " + spk_bench::cusparse_version();
#else
    info.cusparse = "not in this build";
#endif
    info.copy_gbps = spk_bench::copy_bandwidth_gbps();
    std::printf(
        "device: %s; copy bandwidth %.1f GB/s; scalar %s; ops %s; radius %d; node size "
        "%d; repeat %d; cuSPARSE: %s\n",
        info.gpu.c_str(), info.copy_gbps, o.scalar.c_str(),
        [&] {
          std::string s;
          for (const auto& op : o.ops) s += (s.empty() ? "" : ",") + op;
          return s;
        }()
            .c_str(),
        o.radius, o.node_size, o.repeat, info.cusparse.c_str());
    if (!have_cusparse) std::cerr << "spk-add: no cuSPARSE in this build: HiSparse rows only\n";
    if (o.scalar == "float") return run_all<float>(o, info);
    return run_all<double>(o, info);
  } catch (const std::exception& e) {
    std::cerr << "spk-add: error: " << e.what() << "\n";
    return 1;
  }
}
