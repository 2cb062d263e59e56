// spk-bench for matrices with compound entries (complex, quaternion, b x b blocks): every
// outer x inner x vector layout of spk::CompoundMatrix with a schedule, against cuSPARSE in the
// same run (complex CSR; BSR for blocks; for quaternions the real 4x4-block BSR expansion and the
// Hamilton decomposition into real products). spk-bench hands over to compound_main when
// --scalar names a quaternion or block type, or --format asks for "compound".
//
// Minimum-bytes model: the matrix in CSR-AoS with 32-bit indices (nnz entries + nnz column
// indices + nrows + 1 offsets), x read once and y written once (beta = 0 in timed runs).
#include "compound_bench.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <spk/compound/compound_matrix.hpp>
#include <spk/compound/reference.hpp>
#include <spk/compound/tuning.hpp>
#include <spk/formats/padding_limit.hpp>

#include "bench_util.hpp"
#include "compound_cases.hpp"
#include "cusparse_baseline.hpp"
#include "cusparse_compound_baseline.hpp"

namespace spk_bench {
namespace {

const char* const compound_usage = R"(usage: spk-bench --scalar TYPE [options]   (compound entries)
  TYPE                   complex64 | complex128 | quaternion32 | quaternion64 |
                         block{2,3,4,6}_{32,64} (b x b blocks of float / double)
  --matrix FILE.mtx[*K]  complex Matrix Market file (complex TYPE; repeatable)
  --mesh PATH[:L]        quaternion: Dirac operator of a triangle mesh; block3: elasticity
                         of a tetrahedral mesh; refined L times (repeatable)
  --gen SPEC             stencil3d:N (any TYPE) or helmholtz:N (complex); repeatable
  --cases FILE           one case per line (FILE.mtx, mesh:PATH[:L], stencil3d:N, ...)
  --format LIST|all      compound, cusparse-csr (complex), cusparse-bsr (blocks),
                         cusparse-quat-bsr4, cusparse-quat-hamilton,
                         cusparse-quat-hamilton-spmv (quaternions); default all
  --layouts LIST|all     outer-inner-vector layouts, e.g. csr-aos-aos,sell32-soa-aosoa4
                         (default all 144: csr/ell/sell16/sell32 x aos/soa/aosoa2/4/8/32 x
                         aos/soa/aosoa2/4/8/32)
  --schedule SPEC        static|dynamic-t<n_t>-b<n_b>-r<rows> (0 = default), repeatable
  --tuning FILE          also time spk::make_tuned's matrix (layout and schedule of FILE's
                         record for this GPU, entry type and matrix class; format
                         "compound-tuned")
  --warmup N --repeat N  untimed / timed runs (default 5 / 50; the median is reported)
  --json FILE            write the results as JSON
  --memory-only          no timing, on the host: bytes of every layout
Exit status: 0 success, 1 error, 2 bad usage, 3 a result disagreed with the reference.
)";

struct Options {
  std::string scalar = "complex128";
  std::vector<std::string> cases;
  std::vector<std::string> formats;
  std::vector<spk::CompoundLayout> layouts;
  std::vector<spk::CompoundSchedule> schedules;
  int warmup = 5, repeat = 50;
  std::string json, command, tuning;
  bool memory_only = false;
};

struct Result {
  std::string matrix, format, variant;
  long long rows = 0, cols = 0, nnz = 0;
  double median_ms = 0, min_ms = 0, max_ms = 0, gflops = 0, gbps = 0, copy_fraction = 0;
  std::size_t memory_bytes = 0;
  double rel_error = 0;
  bool correct = true;
};

[[noreturn]] void usage_error(const std::string& what) {
  std::cerr << "spk-bench: " << what << "\n" << compound_usage;
  std::exit(2);
}

std::vector<spk::CompoundLayout> all_layouts() {
  using spk::ComponentLayout;
  std::vector<spk::CompoundLayout> out;
  const std::pair<ComponentLayout, int> comps[] = {
      {ComponentLayout::aos, 4},   {ComponentLayout::soa, 4},   {ComponentLayout::aosoa, 2},
      {ComponentLayout::aosoa, 4}, {ComponentLayout::aosoa, 8}, {ComponentLayout::aosoa, 32}};
  const std::pair<spk::OuterLayout, int> outers[] = {{spk::OuterLayout::csr, 32},
                                                     {spk::OuterLayout::ell, 32},
                                                     {spk::OuterLayout::sell, 16},
                                                     {spk::OuterLayout::sell, 32}};
  for (const auto& o : outers)
    for (const auto& i : comps)
      for (const auto& v : comps) {
        spk::CompoundLayout l;
        l.outer = o.first;
        l.slice = o.second;
        l.inner = i.first;
        l.inner_width = i.second;
        l.vector = v.first;
        l.vector_width = v.second;
        out.push_back(l);
      }
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  o.command = command_line(argc, argv);
  std::string layouts = "all";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error("missing value after " + a);
      return argv[++i];
    };
    auto count = [&](const std::string& v) {
      try {
        const int n = std::stoi(v);
        if (n >= 0) return n;
      } catch (const std::exception&) {
      }
      usage_error("bad count '" + v + "' after " + a);
    };
    if (a == "--help" || a == "-h") {
      std::cout << compound_usage;
      std::exit(0);
    } else if (a == "--scalar") {
      o.scalar = value();
    } else if (a == "--matrix" || a == "--gen") {
      o.cases.push_back(value());
    } else if (a == "--mesh") {
      o.cases.push_back("mesh:" + value());
    } else if (a == "--cases") {
      try {
        for (auto& c : read_cases(value())) o.cases.push_back(c);
      } catch (const std::exception& e) {
        usage_error(e.what());
      }
    } else if (a == "--format") {
      o.formats = split_list(value(), ',');
    } else if (a == "--layouts") {
      layouts = value();
    } else if (a == "--schedule") {
      try {
        o.schedules.push_back(spk::parse_schedule(value()));
      } catch (const std::exception& e) {
        usage_error(e.what());
      }
    } else if (a == "--warmup") {
      o.warmup = count(value());
    } else if (a == "--repeat") {
      o.repeat = std::max(1, count(value()));
    } else if (a == "--json") {
      o.json = value();
    } else if (a == "--tuning") {
      o.tuning = value();
    } else if (a == "--memory-only") {
      o.memory_only = true;
    } else {
      usage_error("unknown option '" + a + "'");
    }
  }
  if (!is_compound_scalar(o.scalar)) usage_error("unknown compound --scalar '" + o.scalar + "'");
  if (o.cases.empty()) usage_error("no case (--matrix, --mesh, --gen or --cases)");
  const std::vector<std::string> known = {"compound",           "cusparse-csr",
                                          "cusparse-bsr",       "cusparse-quat-bsr4",
                                          "cusparse-quat-hamilton", "cusparse-quat-hamilton-spmv"};
  if (o.formats.empty() || (o.formats.size() == 1 && o.formats[0] == "all")) o.formats = known;
  for (const auto& f : o.formats)
    if (std::find(known.begin(), known.end(), f) == known.end())
      usage_error("unknown --format '" + f + "'");
  if (layouts == "all") {
    o.layouts = all_layouts();
  } else {
    for (const auto& l : split_list(layouts, ',')) {
      try {
        o.layouts.push_back(spk::parse_layout(l));
      } catch (const std::exception& e) {
        usage_error(e.what());
      }
    }
  }
  if (o.schedules.empty()) o.schedules.push_back(spk::CompoundSchedule{});
  return o;
}

bool wants(const Options& o, const std::string& format) {
  return std::find(o.formats.begin(), o.formats.end(), format) != o.formats.end();
}

/// Floating-point operations of one entry product-add.
template <class E>
double flops_per_entry() {
  using traits = spk::entry_traits<E>;
  if (is_complex_entry<E>()) return 8;
  if (is_quaternion_entry<E>::value) return 32;
  return 2.0 * traits::matrix_components;  // b x b block: b^2 multiply-adds
}

/// Compares a device result with the reference; returns the normwise relative error and sets
/// `correct` from the per-row bound (as the unit tests).
template <class E>
double compare(const std::vector<typename spk::entry_traits<E>::vector_type>& got,
               const std::vector<typename spk::entry_traits<E>::vector_type>& ref,
               const std::vector<double>& bound, bool& correct) {
  using traits = spk::entry_traits<E>;
  using real = typename traits::real_type;
  const double eps = std::is_same<real, float>::value ? 5.96e-8 : 1.11e-16;
  const double tol = 8.0 * traits::matrix_components * eps;
  double max_err = 0, max_ref = 0;
  correct = got.size() == ref.size();
  for (std::size_t i = 0; correct && i < ref.size(); ++i) {
    const real* g = reinterpret_cast<const real*>(&got[i]);
    const real* r = reinterpret_cast<const real*>(&ref[i]);
    for (int c = 0; c < traits::vector_components; ++c) {
      const double err = std::abs(double(g[c]) - double(r[c]));
      max_err = std::max(max_err, err);
      max_ref = std::max(max_ref, std::abs(double(r[c])));
      if (!(err <= tol * (1.0 + bound[i]))) correct = false;
    }
  }
  return max_ref > 0 ? max_err / max_ref : max_err;
}

template <class E>
void memory_case(const Options& o, const std::string& c, std::vector<Result>& results) {
  using host = Kokkos::Device<Kokkos::DefaultHostExecutionSpace, Kokkos::HostSpace>;
  const auto a = load_compound_case<E, host>(c);
  std::printf("%s: %d x %d, %lld entries (%s)\n", compound_case_name(c).c_str(), a.nrows(), a.ncols(),
              (long long)a.nnz(), spk::entry_traits<E>::name);
  std::printf("  %-24s %14s %10s %9s   (outer-inner; vector layouts add no matrix bytes)\n",
              "layout", "bytes", "bytes/nnz", "vs csr");
  const double csr = double(spk::CompoundMatrix<E, host>(a).memory_bytes());
  std::vector<std::string> done;  // outer-inner pairs printed (the vector layout adds no bytes)
  for (const auto& l : o.layouts) {
    const std::string matrix_layout = spk::to_string(l.outer, l.slice) + "-" +
                                      spk::to_string(l.inner, l.inner_width);
    if (std::find(done.begin(), done.end(), matrix_layout) != done.end()) continue;
    done.push_back(matrix_layout);
    Result r;
    r.matrix = compound_case_name(c);
    r.format = "compound";
    r.variant = matrix_layout;
    r.rows = a.nrows();
    r.cols = a.ncols();
    r.nnz = a.nnz();
    try {
      r.memory_bytes = spk::CompoundMatrix<E, host>(a, l).memory_bytes();
    } catch (const spk::PaddingLimitExceeded&) {
      std::printf("  %-24s %14s\n", r.variant.c_str(), "over the padding limit");
      continue;
    }
    std::printf("  %-24s %14zu %10.2f %9.3f\n", r.variant.c_str(), r.memory_bytes,
                double(r.memory_bytes) / double(std::max<long long>(1, r.nnz)),
                double(r.memory_bytes) / csr);
    results.push_back(r);
  }
}

template <class E>
void bench_case(const Options& o, double copy_gbps, const std::string& c,
                std::vector<Result>& results, bool& all_correct) {
  using Device = Kokkos::DefaultExecutionSpace::device_type;
  using traits = spk::entry_traits<E>;
  using V = typename traits::vector_type;
  using real = typename traits::real_type;
  const auto a = load_compound_case<E, Device>(c);
  const std::string name = compound_case_name(c);
  std::cerr << "spk-bench: " << name << ": " << a.nrows() << " x " << a.ncols() << ", "
            << a.nnz() << " entries (" << traits::name << ")\n";
  // x: deterministic values; reference y = A x
  std::vector<V> x(std::size_t(a.ncols())), ref(std::size_t(a.nrows()));
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (auto& v : x) {
    real* p = reinterpret_cast<real*>(&v);
    for (int k = 0; k < traits::vector_components; ++k) p[k] = real(u(rng));
  }
  std::vector<double> bound;
  const auto one = traits::scale_from(1.0), zero = traits::scale_from(0.0);
  spk::reference::compound_spmv(one, a, x, zero, ref, &bound);
  Kokkos::View<V*, Device> xd("spk_bench::x", x.size()), yd("spk_bench::y", ref.size());
  {
    auto h = Kokkos::create_mirror_view(xd);
    for (std::size_t i = 0; i < x.size(); ++i) h(i) = x[i];
    Kokkos::deep_copy(xd, h);
  }
  const double min_bytes =
      double(a.nnz()) * (sizeof(int) + sizeof(E)) + double(a.nrows() + 1) * sizeof(int) +
      double(a.ncols() + a.nrows()) * sizeof(V);
  const double flops = flops_per_entry<E>() * double(a.nnz());
  auto record = [&](const std::string& format, const std::string& variant, std::size_t bytes,
                    const std::function<void()>& run,
                    const std::function<std::vector<V>()>& result) {
    Result r;
    r.matrix = name;
    r.format = format;
    r.variant = variant;
    r.rows = a.nrows();
    r.cols = a.ncols();
    r.nnz = a.nnz();
    r.memory_bytes = bytes;
    const auto st = stats_of(time_ms(run, o.warmup, o.repeat));
    r.median_ms = st.median;
    r.min_ms = st.min;
    r.max_ms = st.max;
    r.gflops = flops / (st.median * 1e6);
    r.gbps = min_bytes / (st.median * 1e6);
    r.copy_fraction = copy_gbps > 0 ? r.gbps / copy_gbps : 0;
    r.rel_error = compare<E>(result(), ref, bound, r.correct);
    all_correct = all_correct && r.correct;
    results.push_back(r);
  };
  auto device_result = [&]() {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), yd);
    return std::vector<V>(h.data(), h.data() + h.extent(0));
  };
  static_cast<void>(device_result);  // used by the cuSPARSE rows only
  if (wants(o, "compound")) {
    for (const auto& l : o.layouts) {
      std::unique_ptr<spk::CompoundMatrix<E, Device>> m;
      try {
        m = std::make_unique<spk::CompoundMatrix<E, Device>>(a, l);
      } catch (const spk::PaddingLimitExceeded&) {
        std::cerr << "spk-bench: " << name << ": " << spk::to_string(l)
                  << " skipped (over the padding limit)\n";
        continue;
      }
      using vec = spk::CompoundVector<E, Device>;
      const vec xv = vec::from_view(xd, l.vector, l.vector_width);
      const vec yv(std::size_t(a.nrows()), l.vector, l.vector_width);
      for (const auto& s : o.schedules) {
        record(
            "compound", spk::to_string(l) + "/" + spk::to_string(s), m->memory_bytes(),
            [&] { spk::spmv(spk::Mode::N, one, *m, xv, zero, yv, s); },
            [&] {
              const auto v = yv.to_view();
              auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
              return std::vector<V>(h.data(), h.data() + h.extent(0));
            });
      }
    }
  }
  if (!o.tuning.empty()) {
    const spk::TuningFile file = spk::TuningFile::load(o.tuning);
    const spk::TuningRecord* rec = spk::tuned_record(a, file);
    const auto m = spk::make_tuned(a, file);  // no re-tuning: the file's record or the default
    using vec = spk::CompoundVector<E, Device>;
    const auto& l = m.layout();
    const vec xv = vec::from_view(xd, l.vector, l.vector_width);
    const vec yv(std::size_t(a.nrows()), l.vector, l.vector_width);
    record(
        "compound-tuned",
        spk::to_string(l) + "/" + spk::to_string(m.schedule()) +
            (rec ? " [" + rec->matrix_class + "]" : " [no record: default]"),
        m.memory_bytes(), [&] { spk::spmv(spk::Mode::N, one, m, xv, zero, yv); },
        [&] {
          const auto v = yv.to_view();
          auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
          return std::vector<V>(h.data(), h.data() + h.extent(0));
        });
  }
#ifdef SPK_HAVE_CUSPARSE
  if constexpr (is_complex_entry<E>()) {
    if (wants(o, "cusparse-csr")) {
      CusparseSpmv<E> cs(CusparseSpmv<E>::Format::csr, CUSPARSE_SPMV_CSR_ALG1, spk::Mode::N,
                         a.nrows(), a.ncols(), a.nnz(), a.row_map(), a.col_idx(), a.values(), xd,
                         yd);
      record("cusparse-csr-alg1", "", a.memory_bytes(), [&] { cs.run(one, zero); },
             device_result);
    }
  } else if constexpr (is_quaternion_entry<E>::value) {
    if (wants(o, "cusparse-quat-bsr4")) {
      CusparseQuaternionBsrSpmv<real> b(a, xd, yd);
      record(b.name, b.api(), b.memory_bytes(), [&] { b.run(real(1), real(0)); }, device_result);
    }
    if (wants(o, "cusparse-quat-hamilton")) {
      CusparseQuaternionHamiltonSpmv<real> h(a, xd, yd);
      record(h.name, "", h.memory_bytes(), [&] { h.run(real(1), real(0)); }, device_result);
    }
    if (wants(o, "cusparse-quat-hamilton-spmv")) {
      CusparseQuaternionHamilton16Spmv<real> h(a, xd, yd);
      record(h.name, "", h.memory_bytes(), [&] { h.run(real(1), real(0)); }, device_result);
    }
  } else {
    if (wants(o, "cusparse-bsr")) {
      CusparseBsrSpmv<real, traits::vector_components> b(a, xd, yd);
      record(b.name, b.api(), b.memory_bytes(), [&] { b.run(real(1), real(0)); }, device_result);
    }
  }
#endif
}

/// The baseline a row is compared with: cuSPARSE CSR (complex), BSR (blocks), the 4x4 BSR
/// expansion (quaternions).
bool is_baseline(const std::string& f) {
  return f == "cusparse-csr-alg1" || f == "cusparse-bsr" || f == "cusparse-quat-bsr4";
}

void print_table(const std::vector<Result>& rs) {
  std::printf("%-22s %-27s %-34s %10s %9s %9s %7s %10s %9s %7s %7s\n", "matrix", "format",
              "variant", "median_ms", "GFLOP/s", "GB/s", "%copy", "rel_err", "mem_MB", "vs_cus",
              "vs_def");
  for (const auto& r : rs) {
    double base = 0, def = 0;
    for (const auto& q : rs) {
      if (q.matrix != r.matrix) continue;
      if (is_baseline(q.format)) base = q.median_ms;
      if (q.format == "compound" && def == 0 && q.variant.rfind("csr-aos-aos/", 0) == 0)
        def = q.median_ms;
    }
    char vb[16] = "-", vd[16] = "-";
    if (base > 0) std::snprintf(vb, sizeof vb, "%.2f", base / r.median_ms);
    if (def > 0) std::snprintf(vd, sizeof vd, "%.2f", def / r.median_ms);
    std::printf("%-22.22s %-27.27s %-34.34s %10.4f %9.2f %9.1f %6.1f%% %10.2e %9.2f %7s %7s%s\n",
                r.matrix.c_str(), r.format.c_str(), r.variant.c_str(), r.median_ms, r.gflops,
                r.gbps, 100 * r.copy_fraction, r.rel_error, double(r.memory_bytes) / 1e6, vb, vd,
                r.correct ? "" : "  WRONG");
  }
}

void write_json(const Options& o, const std::string& gpu, double copy_gbps,
                const std::vector<Result>& rs) {
  std::ofstream out(o.json);
  if (!out) spk::throw_runtime_error("spk-bench", "cannot write '", o.json, "'");
  out << "{\"gpu\": " << json_string(gpu) << ", \"date\": " << json_string(utc_now())
      << ", \"commit\": " << json_string(commit_id()) << ", \"command\": "
      << json_string(o.command) << ", \"copy_bandwidth_gbps\": " << json_number(copy_gbps)
      << ", \"results\": [";
  for (std::size_t i = 0; i < rs.size(); ++i) {
    const auto& r = rs[i];
    out << (i ? ",\n  " : "\n  ") << "{\"matrix\": " << json_string(r.matrix)
        << ", \"rows\": " << r.rows << ", \"cols\": " << r.cols << ", \"nnz\": " << r.nnz
        << ", \"scalar\": " << json_string(o.scalar) << ", \"mode\": \"N\""
        << ", \"format\": " << json_string(r.format) << ", \"variant\": " << json_string(r.variant)
        << ", \"median_ms\": " << json_number(r.median_ms)
        << ", \"min_ms\": " << json_number(r.min_ms) << ", \"max_ms\": " << json_number(r.max_ms)
        << ", \"gflops\": " << json_number(r.gflops) << ", \"gbps\": " << json_number(r.gbps)
        << ", \"copy_fraction\": " << json_number(r.copy_fraction)
        << ", \"memory_bytes\": " << r.memory_bytes
        << ", \"rel_error\": " << json_number(r.rel_error)
        << ", \"correct\": " << (r.correct ? "true" : "false") << "}";
  }
  out << "\n]}\n";
}

}  // namespace

bool wants_compound(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--scalar" && is_compound_scalar(v) && v.rfind("complex", 0) != 0) return true;
    if (a == "--format" && v.find("compound") != std::string::npos) return true;
  }
  return false;
}

void compound_memory_case(const std::string& scalar, const std::string& case_text) {
  Options o;
  o.scalar = scalar;
  o.layouts = all_layouts();
  std::vector<Result> results;
  std::printf("compound layouts (%s):\n", scalar.c_str());
  with_compound_scalar(scalar, [&](auto* p) {
    memory_case<std::remove_pointer_t<decltype(p)>>(o, case_text, results);
    return 0;
  });
}

int compound_main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  Kokkos::ScopeGuard guard(argc, argv);
  spk_bench::reset_device_cache_preference();
  try {
    const std::string gpu = device_name();
    double copy_gbps = 0;
    if (!o.memory_only) {
      copy_gbps = copy_bandwidth_gbps();
      std::printf("device: %s; copy bandwidth %.1f GB/s; scalar %s; repeat %d\n", gpu.c_str(),
                  copy_gbps, o.scalar.c_str(), o.repeat);
    }
    std::vector<Result> results;
    bool all_correct = true, all_ran = true;
    for (const auto& c : o.cases) {
      try {
        with_compound_scalar(o.scalar, [&](auto* p) {
          using E = std::remove_pointer_t<decltype(p)>;
          if (o.memory_only)
            memory_case<E>(o, c, results);
          else
            bench_case<E>(o, copy_gbps, c, results, all_correct);
          return 0;
        });
      } catch (const std::exception& e) {
        std::cerr << "spk-bench: error in case " << c << ": " << e.what() << "\n";
        all_ran = false;
      }
    }
    if (!o.memory_only) print_table(results);
    if (!o.json.empty()) write_json(o, gpu, copy_gbps, results);
    if (!all_ran) return 1;
    if (!all_correct) {
      std::cerr << "spk-bench: some results disagree with the host reference (marked WRONG)\n";
      return 3;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "spk-bench: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace spk_bench
