// Baselines of spk-assemble: the classic ways to assemble a finite-element matrix, timed beside
// spk::assemble in the same run (Zayer et al. 2017 compare against the same families).
//  - host_sort_assembly: sequential host assembly by sorting triplets (one B x B block per local
//    node pair of every element) by (row, column) and summing duplicates, MATLAB `sparse`'s
//    method (on blocks, which sorts B^2 times fewer keys than scalar triplets).
//  - device_triplets + spk::coo_to_csr: the same on the GPU, block triplets sorted by key with
//    spk's stable radix sort and reduced by key.
//  - thrust_sort_assembly (CUDA): block triplets' keys sorted with thrust::sort_by_key (CUB's
//    radix sort) carrying the triplet index, then reduced by key.
//  - KkSpgemmAssembly: the Galerkin form A = P (K_e) P^T with Kokkos Kernels SpGEMM, P the
//    DOF x (element, local DOF) incidence and K_e the block-diagonal of element matrices; the
//    symbolic phases are kept for numeric-only re-assembly.
// Every baseline builds the full element matrices from the same element type as spk.
#pragma once

#include <Kokkos_Core.hpp>
#include <KokkosKernels_Handle.hpp>
#include <KokkosSparse_spgemm.hpp>
#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include <spk/assembly/assemble.hpp>
#include <spk/convert.hpp>
#include <spk/coo_matrix.hpp>
#include <spk/csr_matrix.hpp>

#ifdef KOKKOS_ENABLE_CUDA
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>
#endif

namespace spk_bench {

/// A block CSR matrix on the host (B x B row-major blocks), rows sorted.
struct HostBlockCsr {
  int n = 0;
  int b = 1;
  std::vector<int> row_map, col_idx;
  std::vector<double> values;
};

/// Sequential host assembly by sorting block triplets (see the file comment).
template <class Element, std::size_t K>
HostBlockCsr host_sort_assembly(const Element& element,
                                const std::vector<std::array<double, 3>>& nodes,
                                const std::vector<std::array<int, K>>& elements) {
  constexpr int B = Element::dofs_per_node, BB = B * B;
  const std::size_t ne = elements.size(), nt = ne * K * K;
  std::vector<std::pair<std::int64_t, std::int64_t>> keys(nt);
  std::vector<double> vals(nt * BB);
  const std::int64_t n = std::int64_t(nodes.size());
  for (std::size_t e = 0; e < ne; ++e) {
    double x[Element::geometry_nodes][3];
    for (int g = 0; g < Element::geometry_nodes; ++g)
      for (int d = 0; d < 3; ++d) x[g][d] = nodes[std::size_t(elements[e][std::size_t(g)])][std::size_t(d)];
    double data[Element::data_size] = {};
    element.element_data(x, data);
    for (std::size_t a = 0; a < K; ++a)
      for (std::size_t b = 0; b < K; ++b) {
        const std::size_t t = (e * K + a) * K + b;
        keys[t] = {std::int64_t(elements[e][a]) * n + elements[e][b], std::int64_t(t)};
        element.entry(data, int(a), int(b), &vals[t * BB]);
      }
  }
  std::sort(keys.begin(), keys.end());
  HostBlockCsr r;
  r.n = int(n);
  r.b = B;
  r.row_map.assign(std::size_t(n) + 1, 0);
  for (std::size_t i = 0; i < nt;) {
    std::size_t j = i;
    const std::int64_t key = keys[i].first;
    r.col_idx.push_back(int(key % n));
    r.row_map[std::size_t(key / n) + 1]++;
    const std::size_t out = r.values.size();
    r.values.resize(out + BB, 0.0);
    for (; j < nt && keys[j].first == key; ++j)
      for (int q = 0; q < BB; ++q) r.values[out + std::size_t(q)] += vals[std::size_t(keys[j].second) * BB + std::size_t(q)];
    i = j;
  }
  for (std::size_t v = 0; v < std::size_t(n); ++v) r.row_map[v + 1] += r.row_map[v];
  return r;
}

/// Block triplets of every element on the device: triplet (e K + a) K + b is (node a, node b,
/// entry(a, b)) of element e, the element data computed in place (one thread per element).
template <class Element, class Device>
spk::CooMatrix<spk::assembled_entry_t<Element>, int, int, Device> device_triplets(
    const Element& element, const spk::MeshMatrix<Device>& mesh,
    const Kokkos::View<double* [3], Kokkos::LayoutRight, Device>& coords) {
  using entry = spk::assembled_entry_t<Element>;
  constexpr int K = Element::nodes_per_element, B = Element::dofs_per_node;
  using exec = typename spk::MeshMatrix<Device>::execution_space;
  const int nt = mesh.n_elements() * K * K;
  spk::CooMatrix<entry, int, int, Device> t(mesh.n_nodes(), mesh.n_nodes(), nt);
  const auto rows = t.row_idx();
  const auto cols = t.col_idx();
  double* values = reinterpret_cast<double*>(t.values().data());
  const auto nodes = mesh.nodes();
  Kokkos::parallel_for(
      "spk_bench::triplets", Kokkos::RangePolicy<exec>(0, mesh.n_elements()),
      KOKKOS_LAMBDA(int e) {
        double data[Element::data_size] = {};
        spk::impl::compute_element_data(element, nodes, coords, e, data);
        for (int a = 0; a < K; ++a)
          for (int b = 0; b < K; ++b) {
            const int p = (e * K + a) * K + b;
            rows(p) = nodes(e * K + a);
            cols(p) = nodes(e * K + b);
            element.entry(data, a, b, values + std::size_t(p) * B * B);
          }
      });
  return t;
}

/// GPU assembly by sorting block triplets by key with spk's radix sort and reducing by key.
template <class Element, class Device>
spk::CsrMatrix<spk::assembled_entry_t<Element>, int, int, Device> coo_sort_assembly(
    const Element& element, const spk::MeshMatrix<Device>& mesh,
    const Kokkos::View<double* [3], Kokkos::LayoutRight, Device>& coords) {
  const auto t = device_triplets(element, mesh, coords);
  return spk::impl::coo_to_csr_checked(t, spk::impl::RadixSortParams{});
}

#ifdef KOKKOS_ENABLE_CUDA
/// GPU assembly with thrust::sort_by_key on 64-bit (row, column) keys carrying the triplet
/// index, then a reduce by key over the blocks (head flags, scan, one thread per distinct key).
template <class Element, class Device>
spk::CsrMatrix<spk::assembled_entry_t<Element>, int, int, Device> thrust_sort_assembly(
    const Element& element, const spk::MeshMatrix<Device>& mesh,
    const Kokkos::View<double* [3], Kokkos::LayoutRight, Device>& coords) {
  using entry = spk::assembled_entry_t<Element>;
  using exec = typename spk::MeshMatrix<Device>::execution_space;
  constexpr int BB = Element::dofs_per_node * Element::dofs_per_node;
  const auto t = device_triplets(element, mesh, coords);
  const int nt = int(t.nnz());
  const std::int64_t n = mesh.n_nodes();
  Kokkos::View<std::int64_t*, Device> keys(Kokkos::view_alloc(Kokkos::WithoutInitializing, "keys"),
                                           std::size_t(nt));
  Kokkos::View<int*, Device> perm(Kokkos::view_alloc(Kokkos::WithoutInitializing, "perm"),
                                  std::size_t(nt));
  const auto rows = t.row_idx();
  const auto cols = t.col_idx();
  Kokkos::parallel_for(
      "spk_bench::thrust::keys", Kokkos::RangePolicy<exec>(0, nt), KOKKOS_LAMBDA(int p) {
        keys(p) = std::int64_t(rows(p)) * n + cols(p);
        perm(p) = p;
      });
  thrust::sort_by_key(thrust::device, keys.data(), keys.data() + nt, perm.data());
  Kokkos::View<int*, Device> pos(Kokkos::view_alloc(Kokkos::WithoutInitializing, "pos"),
                                 std::size_t(nt) + 1);
  int distinct = 0;
  Kokkos::parallel_scan(
      "spk_bench::thrust::heads", Kokkos::RangePolicy<exec>(0, nt),
      KOKKOS_LAMBDA(int p, int& sum, bool final) {
        const bool head = p == 0 || keys(p) != keys(p - 1);
        if (final && head) pos(sum) = p;
        sum += head ? 1 : 0;
      },
      distinct);
  Kokkos::deep_copy(Kokkos::subview(pos, distinct), nt);
  spk::CsrMatrix<entry, int, int, Device> a(int(n), int(n), distinct);
  const auto row_map = a.row_map();
  const auto col_idx = a.col_idx();
  double* out = reinterpret_cast<double*>(a.values().data());
  const double* in = reinterpret_cast<const double*>(t.values().data());
  Kokkos::parallel_for(
      "spk_bench::thrust::reduce", Kokkos::RangePolicy<exec>(0, distinct), KOKKOS_LAMBDA(int u) {
        const std::int64_t key = keys(pos(u));
        const int r = int(key / n);
        col_idx(u) = int(key - std::int64_t(r) * n);
        spk::impl::atomic_add_int(&row_map(r + 1), 1);
        for (int q = 0; q < BB; ++q) {
          double s = 0;
          for (int p = pos(u); p < pos(u + 1); ++p) s += in[std::size_t(perm(p)) * BB + q];
          out[std::size_t(u) * BB + q] = s;
        }
      });
  Kokkos::parallel_scan(
      "spk_bench::thrust::row_map", Kokkos::RangePolicy<exec>(0, int(n) + 1),
      KOKKOS_LAMBDA(int i, int& sum, bool final) {
        sum += row_map(i);
        if (final) row_map(i) = sum;
      });
  return a;
}
#endif

/// Assembly as the SpGEMM chain A = P (K_e P^T) with Kokkos Kernels (see the file comment), at
/// DOF level (scalar entries). full() runs everything; numeric() recomputes the element
/// matrices and both numeric products on the kept symbolic phases.
template <class Element, class Device>
class KkSpgemmAssembly {
 public:
  using exec = typename spk::MeshMatrix<Device>::execution_space;
  using mem = typename spk::MeshMatrix<Device>::memory_space;
  using handle_t = KokkosKernels::Experimental::KokkosKernelsHandle<int, int, double, exec, mem, mem>;
  using ints = Kokkos::View<int*, Device>;
  using reals = Kokkos::View<double*, Device>;
  static constexpr int K = Element::nodes_per_element, B = Element::dofs_per_node;

  KkSpgemmAssembly(const Element& element, const spk::MeshMatrix<Device>& mesh,
                   const Kokkos::View<double* [3], Kokkos::LayoutRight, Device>& coords,
                   KokkosSparse::SPGEMMAlgorithm algorithm = KokkosSparse::SPGEMM_KK)
      : element_(element), mesh_(mesh), coords_(coords), algorithm_(algorithm) {}

  /// Builds P^T, P (spk::transpose), K_e and both products from scratch.
  void full() {
    const int m = mesh_.n_elements() * K * B;  // (element, local node, component) slots
    const int ndof = mesh_.n_nodes() * B;
    const auto nodes = mesh_.nodes();
    // P^T: slot (e, a, c) -> dof node(e, a) B + c, value 1.
    pt_rm_ = ints(Kokkos::view_alloc(Kokkos::WithoutInitializing, "pt_rm"), std::size_t(m) + 1);
    pt_ci_ = ints(Kokkos::view_alloc(Kokkos::WithoutInitializing, "pt_ci"), std::size_t(m));
    pt_v_ = reals(Kokkos::view_alloc(Kokkos::WithoutInitializing, "pt_v"), std::size_t(m));
    const auto pt_rm = pt_rm_;
    const auto pt_ci = pt_ci_;
    const auto pt_v = pt_v_;
    Kokkos::parallel_for(
        "spk_bench::kk::pt", Kokkos::RangePolicy<exec>(0, m + 1), KOKKOS_LAMBDA(int s) {
          pt_rm(s) = s;
          if (s < m) {
            const int slot = s / B, c = s - slot * B;
            pt_ci(s) = nodes(slot) * B + c;
            pt_v(s) = 1.0;
          }
        });
    const spk::CsrMatrix<double, int, int, Device> pt(m, ndof, pt_rm_, pt_ci_, pt_v_);
    const auto p = spk::transpose(pt);
    p_rm_ = p.row_map();
    p_ci_ = p.col_idx();
    p_v_ = p.values();
    // K_e: row (e, a, c) holds (e, b, d) for all b, d.
    ke_rm_ = ints(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ke_rm"), std::size_t(m) + 1);
    ke_ci_ = ints(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ke_ci"),
                  std::size_t(m) * K * B);
    ke_v_ = reals(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ke_v"),
                  std::size_t(m) * K * B);
    const auto ke_rm = ke_rm_;
    const auto ke_ci = ke_ci_;
    Kokkos::parallel_for(
        "spk_bench::kk::ke_pattern", Kokkos::RangePolicy<exec>(0, m + 1), KOKKOS_LAMBDA(int r) {
          ke_rm(r) = r * K * B;
          if (r < m) {
            const int e = r / (K * B);
            for (int q = 0; q < K * B; ++q) ke_ci(r * K * B + q) = e * K * B + q;
          }
        });
    element_matrices();
    symbolic(kh1_, algorithm_, m, m, ndof, ke_rm_, ke_ci_, pt_rm_, pt_ci_, c1_rm_, c1_ci_, c1_v_);
    numeric(kh1_, m, m, ndof, ke_rm_, ke_ci_, ke_v_, pt_rm_, pt_ci_, pt_v_, c1_rm_, c1_ci_, c1_v_);
    symbolic(kh2_, algorithm_, ndof, m, ndof, p_rm_, p_ci_, c1_rm_, c1_ci_, a_rm_, a_ci_, a_v_);
    numeric(kh2_, ndof, m, ndof, p_rm_, p_ci_, p_v_, c1_rm_, c1_ci_, c1_v_, a_rm_, a_ci_, a_v_);
  }

  /// New element matrices and both numeric products (after full()).
  void numeric_only() {
    const int m = mesh_.n_elements() * K * B, ndof = mesh_.n_nodes() * B;
    element_matrices();
    numeric(kh1_, m, m, ndof, ke_rm_, ke_ci_, ke_v_, pt_rm_, pt_ci_, pt_v_, c1_rm_, c1_ci_, c1_v_);
    numeric(kh2_, ndof, m, ndof, p_rm_, p_ci_, p_v_, c1_rm_, c1_ci_, c1_v_, a_rm_, a_ci_, a_v_);
  }

  /// The assembled DOF-level matrix (rows not sorted).
  spk::CsrMatrix<double, int, int, Device> result() const {
    return spk::CsrMatrix<double, int, int, Device>(mesh_.n_nodes() * B, mesh_.n_nodes() * B,
                                                    a_rm_, a_ci_, a_v_);
  }

  /// K_e's values from the element data (public: CUDA lambdas need an accessible parent).
  void element_matrices() {
    const auto nodes = mesh_.nodes();
    const auto coords = coords_;
    const auto ke_v = ke_v_;
    const Element element = element_;
    Kokkos::parallel_for(
        "spk_bench::kk::ke_values", Kokkos::RangePolicy<exec>(0, mesh_.n_elements()),
        KOKKOS_LAMBDA(int e) {
          double data[Element::data_size] = {};
          spk::impl::compute_element_data(element, nodes, coords, e, data);
          for (int a = 0; a < K; ++a)
            for (int b = 0; b < K; ++b) {
              double blk[B * B];
              element.entry(data, a, b, blk);
              for (int c = 0; c < B; ++c)
                for (int d = 0; d < B; ++d)
                  ke_v((std::size_t(e) * K * B + a * B + c) * K * B + b * B + d) = blk[c * B + d];
            }
        });
  }

 private:
  static void symbolic(handle_t& kh, KokkosSparse::SPGEMMAlgorithm algorithm, int m, int n, int k, const ints& arm, const ints& aci,
                       const ints& brm, const ints& bci, ints& crm, ints& cci, reals& cv) {
    kh.destroy_spgemm_handle();
    kh.create_spgemm_handle(algorithm);
    crm = ints(Kokkos::view_alloc(Kokkos::WithoutInitializing, "crm"), std::size_t(m) + 1);
    KokkosSparse::Experimental::spgemm_symbolic(&kh, m, n, k, arm, aci, false, brm, bci, false,
                                                crm);
    const std::size_t nnz = kh.get_spgemm_handle()->get_c_nnz();
    cci = ints(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cci"), nnz);
    cv = reals(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cv"), nnz);
  }

  static void numeric(handle_t& kh, int m, int n, int k, const ints& arm, const ints& aci,
                      const reals& av, const ints& brm, const ints& bci, const reals& bv,
                      const ints& crm, const ints& cci, const reals& cv) {
    KokkosSparse::Experimental::spgemm_numeric(&kh, m, n, k, arm, aci, av, false, brm, bci, bv,
                                               false, crm, cci, cv);
  }

  Element element_;
  spk::MeshMatrix<Device> mesh_;
  Kokkos::View<double* [3], Kokkos::LayoutRight, Device> coords_;
  ints pt_rm_, pt_ci_, p_rm_, p_ci_, ke_rm_, ke_ci_, c1_rm_, c1_ci_, a_rm_, a_ci_;
  reals pt_v_, p_v_, ke_v_, c1_v_, a_v_;
  KokkosSparse::SPGEMMAlgorithm algorithm_;
  handle_t kh1_, kh2_;
};

}  // namespace spk_bench
