// spk-assemble: finite-element matrix assembly through E E^T and action maps (spk::assemble,
// Zayer, Steinberger, Seidel 2017) against the classic methods, per mesh ordering.
//
// Rows per (mesh, ordering, element):
//   spk-full       element data + symbolic phase + numeric phase, a new matrix each run
//   spk-symbolic   the symbolic phase alone (E^T and the pattern of E E^T)
//   spk-numeric    numeric-only re-assembly: element data + placement into the kept matrix
//                  (spk::assemble_numeric from the coordinates: one wait, at the end)
//   spk-placement  the placement alone (element data given)
//   spk-numeric-columns, spk-placement-columns (method spk-columns): the same on a pattern
//                  without contribution slots (AssemblyParams::incidence_slots false: the
//                  staged placement in column order only)
//   spk-numeric-unmirrored, spk-placement-unmirrored (method spk-unmirrored): the same on a
//                  pattern without the mirror maps (AssemblyParams::mirror false, the default:
//                  every entry formed from its own contributions; with --mirror the spk rows
//                  use the maps, symmetric assembly where it pays)
//   coo-sort       GPU: block triplets, spk's radix sort by key, reduce by key (spk::coo_to_csr)
//   thrust-sort    GPU (CUDA builds): block triplets, thrust::sort_by_key, reduce by key
//   kk-spgemm      Kokkos Kernels SpGEMM A = P (K_e P^T), full and numeric-only (kk-spgemm-numeric)
//   host-sort      sequential host assembly by sorting block triplets (MATLAB sparse's method)
// Each result is checked against spk's: sorted outputs entry by entry, the SpGEMM one (unsorted
// rows) through A x for a random x; rel_error is the largest difference over the largest value.
// Device rows: median/min/max of --repeat fenced runs after --warmup; a run's previous result is
// released before the clock starts. host-sort: median of --host-repeat runs.
// Memory: spk counts the mesh matrix, the symbolic data, the compact element data and the
// matrix; the baselines their triplets (or element matrices) and the matrix.
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
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <spk/assembly/assemble.hpp>
#include <spk/error.hpp>
#include <spk/io/mesh_io.hpp>
#include <spk/mesh/generate_mesh.hpp>
#include <spk/mesh/quadratic_mesh.hpp>
#include <spk/mesh/reorder.hpp>
#include <spk/mesh/subdivide.hpp>

#include "assembly_baselines.hpp"
#include "bench_util.hpp"

namespace {

using Device = Kokkos::DefaultExecutionSpace::device_type;
using Vec3 = std::array<double, 3>;

const char* const usage_text = R"(usage: spk-assemble [options] CASE [CASE ...]
Finite-element assembly, spk (E E^T with action maps) against sort-by-key (host and GPU) and
Kokkos Kernels SpGEMM, per mesh ordering.
  CASE                   plate:NX[xNY]  structured triangles of the unit square (2 NX NY)
                         cube:N[xNYxNZ] structured tetrahedra of the unit cube (6 N NY NZ)
                         mesh:FILE[:LEVELS] a mesh file (.obj .off .ply: triangles; .mesh
                         .msh .node/.ele: tetrahedra if it has any), refined LEVELS times
  --element LIST         comma-separated of p1-triangle-laplacian, p2-triangle-elasticity,
                         p1-tet-laplacian, p1-tet-elasticity, p2-tet-elasticity, or all
                         (default all: those of the case's element kind)
  --ordering LIST        natural, random, rcm, morton, spectral, or all (default natural,rcm)
  --method LIST          spk, spk-columns, spk-unmirrored, coo-sort, thrust-sort, kk-spgemm,
                         host-sort, or all (default all; spk-columns: numeric-only without
                         contribution slots; spk-unmirrored: without symmetric assembly)
  --warmup N             untimed device runs (default 3)
  --repeat N             timed device runs, median reported (default 20)
  --host-repeat N        timed host-sort runs (default 1)
  --kk-algorithm NAME    Kokkos Kernels SpGEMM variant: kk-memory (default), kk-lp, kk, kk-dense
                         (kk and kk-dense gave wrong products with Kokkos Kernels 3.4 on an H100)
  --symbolic-lanes N, --numeric-lanes N, --rows-per-team N
                         spk's launch parameters (spk::AssemblyParams; default 0: automatic)
  --numeric-stage N      contributions a row of the numeric kernels stages per pass (0:
                         automatic, -1: none, each lane sums its own entries)
  --mirror               spk's symbolic phase keeps the maps of symmetric assembly
                         (AssemblyParams::mirror; spk-unmirrored still goes without)
  --json FILE            write the results as JSON
  --help                 this text
Exit status: 0 success, 1 error, 2 bad usage, 3 a baseline disagreed with spk.
)";

struct Options {
  std::vector<std::string> cases, elements{"all"}, orderings{"natural", "rcm"}, methods{"all"};
  int warmup = 3, repeat = 20, host_repeat = 1;
  // SPGEMM_KK and SPGEMM_KK_DENSE of Kokkos Kernels 3.4 gave wrong products on an H100 for
  // these chains (0.1-0.9 relative error, varying between runs); KK_MEMORY and KK_LP agreed.
  spk::AssemblyParams params;
  KokkosSparse::SPGEMMAlgorithm kk_algorithm = KokkosSparse::SPGEMM_KK_MEMORY;
  std::string json;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

bool has(const std::vector<std::string>& list, const std::string& x) {
  return std::find(list.begin(), list.end(), x) != list.end() ||
         std::find(list.begin(), list.end(), "all") != list.end();
}

struct Row {
  std::string mesh, ordering, element, method;
  std::int64_t nodes = 0, elements = 0, nnz = 0, bandwidth = 0;
  int dofs = 1;
  spk_bench::Stats t;
  std::size_t memory = 0;
  double rel_error = 0;
};

struct Report {
  std::vector<Row> rows;
  bool mismatch = false;
};

/// Times `run` on the device: `reset` (untimed) before each run.
spk_bench::Stats time_device(const std::function<void()>& run, const std::function<void()>& reset,
                             int warmup, int repeat) {
  std::vector<double> t;
  for (int i = 0; i < warmup + repeat; ++i) {
    reset();
    Kokkos::fence();
    const auto t0 = std::chrono::steady_clock::now();
    run();
    Kokkos::fence();
    const auto t1 = std::chrono::steady_clock::now();
    if (i >= warmup) t.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return spk_bench::stats_of(t);
}

/// A block CSR matrix copied to the host.
template <class Matrix>
spk_bench::HostBlockCsr to_host(const Matrix& a, int b) {
  spk_bench::HostBlockCsr h;
  h.n = a.nrows();
  h.b = b;
  const auto rm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.row_map());
  const auto ci = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.col_idx());
  const auto va = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.values());
  h.row_map.assign(rm.data(), rm.data() + rm.extent(0));
  h.col_idx.assign(ci.data(), ci.data() + ci.extent(0));
  const double* v = reinterpret_cast<const double*>(va.data());
  h.values.assign(v, v + std::size_t(ci.extent(0)) * std::size_t(b * b));
  return h;
}

/// Largest entry difference over the largest entry; infinity when the patterns differ.
double compare(const spk_bench::HostBlockCsr& ref, const spk_bench::HostBlockCsr& got) {
  if (ref.row_map != got.row_map || ref.col_idx != got.col_idx)
    return std::numeric_limits<double>::infinity();
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < ref.values.size(); ++i) {
    diff = std::max(diff, std::abs(ref.values[i] - got.values[i]));
    scale = std::max(scale, std::abs(ref.values[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

/// y = A x at DOF level of a block CSR matrix (blocks b x b), or of a scalar one (b = 1).
std::vector<double> dof_matvec(const spk_bench::HostBlockCsr& a, const std::vector<double>& x) {
  const int b = a.b;
  std::vector<double> y(std::size_t(a.n) * std::size_t(b), 0.0);
  for (int i = 0; i < a.n; ++i)
    for (int s = a.row_map[std::size_t(i)]; s < a.row_map[std::size_t(i) + 1]; ++s)
      for (int r = 0; r < b; ++r)
        for (int c = 0; c < b; ++c)
          y[std::size_t(i) * b + r] += a.values[(std::size_t(s) * b + r) * b + c] *
                                       x[std::size_t(a.col_idx[std::size_t(s)]) * b + c];
  return y;
}

double vector_difference(const std::vector<double>& ref, const std::vector<double>& got) {
  if (ref.size() != got.size()) return std::numeric_limits<double>::infinity();
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    diff = std::max(diff, std::abs(ref[i] - got[i]));
    scale = std::max(scale, std::abs(ref[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

/// Runs every method for one element type on one ordered mesh.
template <class Element, std::size_t K>
void run_element(const Element& element, const std::string& mesh_name,
                 const std::string& ordering, const std::vector<Vec3>& nodes,
                 const std::vector<std::array<int, K>>& elements, const Options& opt,
                 Report& report) {
  constexpr int B = Element::dofs_per_node;
  Row base;
  base.mesh = mesh_name;
  base.ordering = ordering;
  base.element = Element::name;
  base.nodes = std::int64_t(nodes.size());
  base.elements = std::int64_t(elements.size());
  base.bandwidth = spk::impl::bandwidth(elements);
  base.dofs = B;
  const auto mesh = spk::mesh_matrix<Device>(int(nodes.size()), elements);
  const auto coords = spk::node_coordinates<Device>(nodes);
  std::fprintf(stderr, "[spk-assemble] %s %s %s: %zu nodes, %zu elements, bandwidth %lld\n",
               mesh_name.c_str(), ordering.c_str(), Element::name, nodes.size(), elements.size(),
               (long long)base.bandwidth);

  // spk, and the reference matrix every baseline is compared with.
  using matrix_t = spk::CsrMatrix<spk::assembled_entry_t<Element>, int, int, Device>;
  matrix_t a = spk::assemble(element, mesh, coords, opt.params);
  const spk_bench::HostBlockCsr ref = to_host(a, B);
  base.nnz = std::int64_t(ref.col_idx.size());
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x(std::size_t(ref.n) * B);
  for (auto& v : x) v = u(rng);
  const std::vector<double> ref_y = dof_matvec(ref, x);
  auto add = [&](const std::string& method, const spk_bench::Stats& t, std::size_t memory,
                 double err) {
    Row r = base;
    r.method = method;
    r.t = t;
    r.memory = memory;
    r.rel_error = err;
    if (!(err <= 1e-10)) {
      report.mismatch = true;
      std::fprintf(stderr, "[spk-assemble] MISMATCH: %s on %s %s %s: rel_error %g\n",
                   method.c_str(), mesh_name.c_str(), ordering.c_str(), Element::name, err);
    }
    report.rows.push_back(r);
  };
  // spk-numeric and spk-placement (+ suffix) on `pattern`: element data and placement, then
  // placement alone; `first(memory, error)` adds the rows that go before them
  auto numeric_rows = [&](const spk::AssemblyPattern<Device>& pattern, const std::string& suffix,
                          const auto& first) {
    const auto kept = spk::assembled_matrix<Element>(pattern);
    Kokkos::View<double*, Device> data(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "data"),
        std::size_t(mesh.n_elements()) * Element::data_size);
    const auto num = time_device(
        [&] { spk::assemble_numeric(pattern, element, coords, data, kept); },
        [] {}, opt.warmup, opt.repeat);
    const double err_num = compare(ref, to_host(kept, B));
    const auto place = time_device([&] { spk::assemble_numeric(pattern, element, data, kept); },
                                   [] {}, opt.warmup, opt.repeat);
    const std::size_t mem = mesh.memory_bytes() + pattern.memory_bytes() +
                            data.extent(0) * sizeof(double) + kept.values().extent(0) * B * B * 8;
    first(mem, err_num);
    add("spk-numeric" + suffix, num, mem, err_num);
    add("spk-placement" + suffix, place, mem, compare(ref, to_host(kept, B)));
  };
  if (has(opt.methods, "spk")) {
    matrix_t held;
    spk::AssemblyPattern<Device> pattern;
    const auto full = time_device([&] { held = spk::assemble(element, mesh, coords, opt.params); },
                                  [&] { held = matrix_t(); }, opt.warmup, opt.repeat);
    const auto sym = time_device([&] { pattern = spk::assemble_symbolic(mesh, opt.params); },
                                 [&] { pattern = spk::AssemblyPattern<Device>(); }, opt.warmup,
                                 opt.repeat);
    std::fprintf(stderr, "[spk-assemble] mirror distance %.0f entries: symmetric numeric %s\n",
                 pattern.mirror_distance,
                 opt.params.numeric_stage >= 0 && spk::impl::symmetric_numeric<Element>(pattern)
                     ? "on (where rows are staged)"
                     : "off");
    numeric_rows(pattern, "", [&](std::size_t mem, double err_num) {
      add("spk-full", full, mem, compare(ref, to_host(held, B)));
      // the timed symbolic phase's pattern is the one spk-numeric fills and checks
      add("spk-symbolic", sym, mesh.memory_bytes() + pattern.memory_bytes(), err_num);
    });
  }
  if (has(opt.methods, "spk-columns")) {
    spk::AssemblyParams params = opt.params;
    params.incidence_slots = false;
    numeric_rows(spk::assemble_symbolic(mesh, params), "-columns", [](std::size_t, double) {});
  }
  if (has(opt.methods, "spk-unmirrored")) {
    spk::AssemblyParams params = opt.params;
    params.mirror = false;
    numeric_rows(spk::assemble_symbolic(mesh, params), "-unmirrored",
                 [](std::size_t, double) {});
  }
  const std::size_t triplet_bytes =
      std::size_t(elements.size()) * K * K * (2 * sizeof(int) + B * B * sizeof(double)) +
      ref.values.size() * sizeof(double) + ref.col_idx.size() * sizeof(int);
  if (has(opt.methods, "coo-sort")) {
    matrix_t held;
    const auto t = time_device(
        [&] { held = spk_bench::coo_sort_assembly(element, mesh, coords); },
        [&] { held = matrix_t(); }, opt.warmup, opt.repeat);
    add("coo-sort", t, triplet_bytes, compare(ref, to_host(held, B)));
  }
#ifdef KOKKOS_ENABLE_CUDA
  if (has(opt.methods, "thrust-sort")) {
    matrix_t held;
    const auto t = time_device(
        [&] { held = spk_bench::thrust_sort_assembly(element, mesh, coords); },
        [&] { held = matrix_t(); }, opt.warmup, opt.repeat);
    add("thrust-sort", t, triplet_bytes + elements.size() * K * K * 12,
        compare(ref, to_host(held, B)));
  }
#endif
  if (has(opt.methods, "kk-spgemm")) {
    using kk_t = spk_bench::KkSpgemmAssembly<Element, Device>;
    std::unique_ptr<kk_t> kk;
    const auto full = time_device([&] { kk->full(); },
                                  [&] { kk = std::make_unique<kk_t>(element, mesh, coords, opt.kk_algorithm); },
                                  opt.warmup, opt.repeat);
    const double err_full = vector_difference(ref_y, dof_matvec(to_host(kk->result(), 1), x));
    const auto num = time_device([&] { kk->numeric_only(); }, [] {}, opt.warmup, opt.repeat);
    const spk_bench::HostBlockCsr got = to_host(kk->result(), 1);
    const double err = vector_difference(ref_y, dof_matvec(got, x));
    const std::size_t mem = std::size_t(elements.size()) * K * K * B * B * 12 * 2 +
                            got.values.size() * 12;
    add("kk-spgemm", full, mem, err_full);
    add("kk-spgemm-numeric", num, mem, err);
  }
  if (has(opt.methods, "host-sort")) {
    std::vector<double> t;
    spk_bench::HostBlockCsr h;
    for (int i = 0; i < opt.host_repeat; ++i) {
      h = spk_bench::HostBlockCsr();
      const auto t0 = std::chrono::steady_clock::now();
      h = spk_bench::host_sort_assembly(element, nodes, elements);
      const auto t1 = std::chrono::steady_clock::now();
      t.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    add("host-sort", spk_bench::stats_of(t), triplet_bytes, compare(ref, h));
  }
}

/// A quadratic mesh numbered for the ordering `name` of its linear mesh: midpoint nodes come
/// after all vertices in quadratic_mesh, far from their neighbours, so for every ordering but
/// natural and random the nodes are renumbered by first reference in the (ordered) element
/// order; random permutes all nodes. Elements keep their order.
template <class Quadratic>
Quadratic ordered_quadratic(Quadratic q, const std::string& name) {
  std::vector<int> idx;
  if (name == "natural") return q;
  if (name == "random")
    idx = spk::random_numbering(q.nodes.size(), 2);
  else
    idx = spk::impl::first_reference_numbering(q.nodes.size(), q.elements);
  std::vector<Vec3> nodes(q.nodes.size());
  for (std::size_t v = 0; v < nodes.size(); ++v) nodes[std::size_t(idx[v])] = q.nodes[v];
  q.nodes = nodes;
  for (auto& e : q.elements)
    for (auto& v : e) v = idx[std::size_t(v)];
  return q;
}

/// The orderings of a mesh: the renumbered mesh per requested ordering.
template <class Mesh>
std::vector<std::pair<std::string, Mesh>> orderings(const Mesh& m, const Options& opt) {
  std::vector<std::pair<std::string, Mesh>> out;
  const std::size_t nv = m.vertices.size();
  for (const std::string o : {"natural", "random", "rcm", "morton", "spectral"}) {
    if (!has(opt.orderings, o)) continue;
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<int> idx;
    if (o == "natural") {
      out.emplace_back(o, m);
      continue;
    } else if (o == "random") {
      idx = spk::random_numbering(nv, 1);
    } else if (o == "rcm") {
      idx = spk::rcm_numbering(m);
    } else if (o == "morton") {
      idx = spk::morton_numbering(m);
    } else {
      idx = spk::spectral_numbering(m);
    }
    out.emplace_back(o, spk::renumbered(m, idx));
    const auto t1 = std::chrono::steady_clock::now();
    std::fprintf(stderr, "[spk-assemble] ordering %s: %.1f ms\n", o.c_str(),
                 std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return out;
}

void run_case(const std::string& spec, const Options& opt, Report& report) {
  const auto colon = spec.find(':');
  spk::require(colon != std::string::npos, "spk-assemble", "case '", spec,
               "' is not plate:..., cube:... or mesh:...");
  const std::string kind = spec.substr(0, colon), arg = spec.substr(colon + 1);
  spk::TriangleMesh tri;
  spk::TetMesh tet;
  bool is_tet = false;
  if (kind == "plate") {
    int nx = 0, ny = 0;
    const auto x = arg.find('x');
    nx = std::stoi(arg.substr(0, x));
    ny = x == std::string::npos ? nx : std::stoi(arg.substr(x + 1));
    tri = spk::plate_mesh(nx, ny);
  } else if (kind == "cube") {
    std::vector<int> n;
    std::stringstream ss(arg);
    for (std::string item; std::getline(ss, item, 'x');) n.push_back(std::stoi(item));
    spk::require(n.size() == 1 || n.size() == 3, "spk-assemble", "cube:", arg,
                 " is not cube:N or cube:NXxNYxNZ");
    if (n.size() == 1) n = {n[0], n[0], n[0]};
    tet = spk::cube_mesh(n[0], n[1], n[2]);
    is_tet = true;
  } else if (kind == "mesh") {
    std::string file = arg;
    int levels = 0;
    const auto c = arg.rfind(':');
    if (c != std::string::npos && arg.find_first_not_of("0123456789", c + 1) == std::string::npos &&
        c + 1 < arg.size()) {
      file = arg.substr(0, c);
      levels = std::stoi(arg.substr(c + 1));
    }
    const std::string ext = file.substr(file.rfind('.') + 1);
    if (ext != "obj" && ext != "off" && ext != "ply") {
      try {
        tet = spk::read_tet_mesh(file);
        is_tet = !tet.tetrahedra.empty();
      } catch (const std::invalid_argument&) {
        is_tet = false;
      }
    }
    if (is_tet)
      tet = spk::subdivide(tet, levels);
    else
      tri = spk::subdivide(spk::read_triangle_mesh(file), levels);
  } else {
    spk::throw_invalid_argument("spk-assemble", "unknown case kind '", kind, "' in '", spec, "'");
  }
  const spk::ElasticMaterial mat{1.0, 0.3};
  if (!is_tet) {
    for (const auto& [name, m] : orderings(tri, opt)) {
      if (has(opt.elements, "p1-triangle-laplacian"))
        run_element(spk::P1TriangleLaplacian{}, spec, name, m.vertices, m.triangles, opt, report);
      if (has(opt.elements, "p2-triangle-elasticity")) {
        const auto q = ordered_quadratic(spk::quadratic_mesh(m), name);
        run_element(spk::P2TriangleElasticity(mat), spec, name, q.nodes, q.elements, opt, report);
      }
    }
  } else {
    for (const auto& [name, m] : orderings(tet, opt)) {
      if (has(opt.elements, "p1-tet-laplacian"))
        run_element(spk::P1TetLaplacian{}, spec, name, m.vertices, m.tetrahedra, opt, report);
      if (has(opt.elements, "p1-tet-elasticity"))
        run_element(spk::P1TetElasticity(mat), spec, name, m.vertices, m.tetrahedra, opt, report);
      if (has(opt.elements, "p2-tet-elasticity")) {
        const auto q = ordered_quadratic(spk::quadratic_mesh(m), name);
        run_element(spk::P2TetElasticity(mat), spec, name, q.nodes, q.elements, opt, report);
      }
    }
  }
}

void print_table(const Report& report) {
  std::printf("%-22s %-8s %-22s %-24s %9s %10s %10s %10s %9s %9s\n", "mesh", "ordering",
              "element", "method", "nodes", "nnz", "bandwidth", "median_ms", "vs_spk", "rel_err");
  for (const Row& r : report.rows) {
    double spk_full = 0;
    for (const Row& s : report.rows)
      if (s.mesh == r.mesh && s.ordering == r.ordering && s.element == r.element &&
          s.method == "spk-full")
        spk_full = s.t.median;
    std::printf("%-22s %-8s %-22s %-24s %9lld %10lld %10lld %10.4f %9.2f %9.1e\n", r.mesh.c_str(),
                r.ordering.c_str(), r.element.c_str(), r.method.c_str(), (long long)r.nodes,
                (long long)r.nnz, (long long)r.bandwidth, r.t.median,
                spk_full > 0 ? r.t.median / spk_full : 0.0, r.rel_error);
  }
  std::printf("vs_spk = this row's median / spk-full's median (above 1: spk-full is faster)\n");
}

void write_json(const Report& report, const Options& opt, const std::string& command,
                double copy_gbps) {
  std::ofstream f(opt.json);
  spk::require(bool(f), "spk-assemble", "cannot write ", opt.json);
  f << "{\"gpu\": " << spk_bench::json_string(spk_bench::device_name())
    << ", \"date\": " << spk_bench::json_string(spk_bench::utc_now())
    << ", \"commit\": " << spk_bench::json_string(spk_bench::commit_id())
    << ", \"command\": " << spk_bench::json_string(command)
    << ", \"copy_bandwidth_gbps\": " << spk_bench::json_number(copy_gbps) << ", \"results\": [";
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    const Row& r = report.rows[i];
    f << (i ? ",\n" : "\n") << "{\"matrix\": " << spk_bench::json_string(r.mesh)
      << ", \"ordering\": " << spk_bench::json_string(r.ordering)
      << ", \"element\": " << spk_bench::json_string(r.element)
      << ", \"format\": " << spk_bench::json_string(r.method) << ", \"rows\": " << r.nodes
      << ", \"elements\": " << r.elements << ", \"nnz\": " << r.nnz
      << ", \"dofs_per_node\": " << r.dofs << ", \"bandwidth\": " << r.bandwidth
      << ", \"scalar\": \"double\", \"mode\": \"assembly\""
      << ", \"median_ms\": " << spk_bench::json_number(r.t.median)
      << ", \"min_ms\": " << spk_bench::json_number(r.t.min)
      << ", \"max_ms\": " << spk_bench::json_number(r.t.max)
      << ", \"memory_bytes\": " << r.memory
      << ", \"rel_error\": " << spk_bench::json_number(r.rel_error) << "}";
  }
  f << "\n]}\n";
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "spk-assemble: %s needs a value\n%s", a.c_str(), usage_text);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::printf("%s", usage_text);
      return 0;
    } else if (a == "--element") {
      opt.elements = split(value());
    } else if (a == "--ordering") {
      opt.orderings = split(value());
    } else if (a == "--method") {
      opt.methods = split(value());
    } else if (a == "--warmup") {
      opt.warmup = std::stoi(value());
    } else if (a == "--repeat") {
      opt.repeat = std::stoi(value());
    } else if (a == "--host-repeat") {
      opt.host_repeat = std::stoi(value());
    } else if (a == "--kk-algorithm") {
      const std::string name = value();
      if (name == "kk") {
        opt.kk_algorithm = KokkosSparse::SPGEMM_KK;
      } else if (name == "kk-memory") {
        opt.kk_algorithm = KokkosSparse::SPGEMM_KK_MEMORY;
      } else if (name == "kk-dense") {
        opt.kk_algorithm = KokkosSparse::SPGEMM_KK_DENSE;
      } else if (name == "kk-lp") {
        opt.kk_algorithm = KokkosSparse::SPGEMM_KK_LP;
      } else {
        std::fprintf(stderr, "spk-assemble: unknown --kk-algorithm '%s'\n", name.c_str());
        return 2;
      }
    } else if (a == "--symbolic-lanes") {
      opt.params.symbolic_lanes = std::stoi(value());
    } else if (a == "--numeric-lanes") {
      opt.params.numeric_lanes = std::stoi(value());
    } else if (a == "--numeric-stage") {
      opt.params.numeric_stage = std::stoi(value());
    } else if (a == "--mirror") {
      opt.params.mirror = true;
    } else if (a == "--rows-per-team") {
      opt.params.rows_per_team = std::stoi(value());
    } else if (a == "--json") {
      opt.json = value();
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "spk-assemble: unknown option '%s'\n%s", a.c_str(), usage_text);
      return 2;
    } else {
      opt.cases.push_back(a);
    }
  }
  if (opt.cases.empty()) {
    std::printf("%s", usage_text);
    return 2;
  }
  const std::vector<std::string> known_elements = {
      "all", "p1-triangle-laplacian", "p2-triangle-elasticity", "p1-tet-laplacian",
      "p1-tet-elasticity", "p2-tet-elasticity"};
  const std::vector<std::string> known_orderings = {"all", "natural", "random", "rcm", "morton",
                                                    "spectral"};
  const std::vector<std::string> known_methods = {
      "all",      "spk",         "spk-columns", "spk-unmirrored",
      "coo-sort", "thrust-sort", "kk-spgemm",   "host-sort"};
  for (const auto& [list, known, what] :
       {std::make_tuple(&opt.elements, &known_elements, "--element"),
        std::make_tuple(&opt.orderings, &known_orderings, "--ordering"),
        std::make_tuple(&opt.methods, &known_methods, "--method")})
    for (const auto& x : *list)
      if (std::find(known->begin(), known->end(), x) == known->end()) {
        std::fprintf(stderr, "spk-assemble: unknown %s entry '%s'\n", what, x.c_str());
        return 2;
      }
  Kokkos::initialize(argc, argv);
  spk_bench::reset_device_cache_preference();
  int status = 0;
  {
    try {
      Report report;
      const double copy_gbps = spk_bench::copy_bandwidth_gbps();
      std::fprintf(stderr, "[spk-assemble] %s, copy bandwidth %.0f GB/s\n",
                   spk_bench::device_name().c_str(), copy_gbps);
      for (const auto& c : opt.cases) run_case(c, opt, report);
      print_table(report);
      if (!opt.json.empty())
        write_json(report, opt, spk_bench::command_line(argc, argv), copy_gbps);
      status = report.mismatch ? 3 : 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "spk-assemble: %s\n", e.what());
      status = 1;
    }
  }
  Kokkos::finalize();
  return status;
}
