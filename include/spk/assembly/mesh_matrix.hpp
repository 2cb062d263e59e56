// spk/assembly/mesh_matrix.hpp: the mesh matrix E of Zayer, Steinberger and Seidel (HPEC 2017,
// sections III and V), nodes x elements with E(e_i(k), i) = k, stored as its pattern only.
//
// In compressed-column form E's column i holds the K nodes of element i; ordering each column's
// row indices by their values (the local indices 0..K-1) makes the values implied by position,
// and for one element type the column pointers are implied too (column i starts at K i). What
// remains is exactly the element table, K node indices per element, on the device: that is all
// spk::MeshMatrix stores. Its transpose (the node -> (element, local index) incidence, E in
// compressed-row form) is built by spk::assemble_symbolic.
#pragma once

#include <Kokkos_Core.hpp>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/impl/assembly_kernels.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <string>
#include <vector>

namespace spk {

namespace impl {
/// First element of `nodes` (k per element) with a node outside [0, n) or a repeated node; the
/// largest int when there is none. O(elements k^2) on the device.
template <class Device>
int first_bad_element(int n, int k, const Kokkos::View<int*, Device>& nodes) {
  using exec = typename Device::execution_space;
  int first_bad = 0;
  Kokkos::parallel_reduce(
      "spk::MeshMatrix::check", Kokkos::RangePolicy<exec>(0, int(nodes.extent(0)) / k),
      KOKKOS_LAMBDA(int e, int& bad) {
        bool ok = true;
        for (int a = 0; a < k; ++a) {
          const int v = nodes(std::size_t(e) * k + a);
          if (v < 0 || v >= n) ok = false;
          for (int b = 0; b < a; ++b)
            if (nodes(std::size_t(e) * k + b) == v) ok = false;
        }
        if (!ok && e < bad) bad = e;
      },
      Kokkos::Min<int>(first_bad));
  return first_bad;
}
}  // namespace impl

/// Mesh matrix E (n_nodes x n_elements, E(node k of element e, e) = k) of a mesh whose elements
/// all have K nodes, stored as the pattern only: nodes()(e * K + k) is node k of element e.
/// Copies share the view (shallow, like a View). Construction checks that every node index
/// lies in [0, n_nodes) and that no element repeats a node; the error names the element.
template <class Device = Kokkos::DefaultExecutionSpace>
class MeshMatrix {
 public:
  using device_type = impl::device_t<Device>;
  using execution_space = typename device_type::execution_space;
  using memory_space = typename device_type::memory_space;
  using nodes_type = Kokkos::View<int*, device_type>;

  MeshMatrix() = default;

  /// Wraps `nodes` (n_elements * nodes_per_element node indices, element-major) after checking
  /// it on the device. Throws std::invalid_argument for a bad size, K < 1, more entries than
  /// int holds, an index outside [0, n_nodes) or a node repeated within an element.
  MeshMatrix(int n_nodes, int nodes_per_element, nodes_type nodes)
      : n_nodes_(n_nodes), k_(nodes_per_element), nodes_(nodes) {
    const char* where = "spk::MeshMatrix";
    require(n_nodes >= 0, where, "negative number of nodes ", n_nodes);
    require(nodes_per_element >= 1, where, "nodes per element must be >= 1, not ",
            nodes_per_element);
    require(nodes.extent(0) % std::size_t(nodes_per_element) == 0, where, "node table of ",
            nodes.extent(0), " entries is not a multiple of ", nodes_per_element,
            " nodes per element");
    require(nodes.extent(0) <= std::size_t(std::numeric_limits<int>::max()), where,
            "node table of ", nodes.extent(0), " entries exceeds int indexing");
    n_elements_ = int(nodes.extent(0) / std::size_t(nodes_per_element));
    check();
    flag_ = Kokkos::View<int, device_type>("spk::MeshMatrix::flag");
  }

  int n_nodes() const { return n_nodes_; }
  int n_elements() const { return n_elements_; }
  int nodes_per_element() const { return k_; }
  /// Nonzeros of E: K per element.
  std::int64_t nnz() const { return std::int64_t(nodes_.extent(0)); }
  /// The row indices of E in column order, i.e. the element table on the device.
  const nodes_type& nodes() const { return nodes_; }
  /// Bytes held (the node table; no values, no column pointers).
  std::size_t memory_bytes() const { return nodes_.extent(0) * sizeof(int); }
  /// One int on the device that spk::element_data (and spk::assemble_numeric from coordinates)
  /// reports the first degenerate element in, so that repeated calls allocate nothing (an
  /// allocation and its free cost more than the kernel's tail on GPUs). Shared by copies, like
  /// the node table: one such call at a time per mesh.
  /// Empty for a default-constructed mesh matrix.
  const Kokkos::View<int, device_type>& flag() const { return flag_; }

  /// E as an explicit nodes x elements CSR matrix with the local indices as values (the form
  /// the paper starts from; for inspection and for general SpGEMM codes). O(nnz) on the device.
  CsrMatrix<int, int, int, Device> to_csr() const;

 private:
  void check() const {
    const int first_bad = impl::first_bad_element<device_type>(n_nodes_, k_, nodes_);
    if (first_bad >= n_elements_) return;  // Min of nothing is the largest int
    const int k = k_;
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(),
                                                         Kokkos::subview(nodes_, std::make_pair(
                                                             std::size_t(first_bad) * k,
                                                             std::size_t(first_bad + 1) * k)));
    std::string list;
    for (int a = 0; a < k; ++a) list += (a ? ", " : "") + std::to_string(host(a));
    throw_invalid_argument("spk::MeshMatrix", "element ", first_bad, " (nodes ", list,
                           ") has a node outside [0, ", n_nodes_, ") or a repeated node");
  }

  int n_nodes_ = 0;
  int n_elements_ = 0;
  int k_ = 1;
  nodes_type nodes_;
  Kokkos::View<int, device_type> flag_;
};

/// The mesh matrix of host elements (K nodes each, indices in [0, n_nodes)), copied to Device.
/// Throws as MeshMatrix's constructor does.
template <class Device = Kokkos::DefaultExecutionSpace, std::size_t K>
MeshMatrix<Device> mesh_matrix(int n_nodes, const std::vector<std::array<int, K>>& elements) {
  static_assert(K >= 1, "spk::mesh_matrix: elements need at least one node");
  require(elements.size() <= std::size_t(std::numeric_limits<int>::max()) / K,
          "spk::mesh_matrix", elements.size(), " elements of ", K,
          " nodes exceed int indexing");
  typename MeshMatrix<Device>::nodes_type nodes(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::mesh_matrix::nodes"),
      elements.size() * K);
  const auto host = Kokkos::create_mirror_view(nodes);
  for (std::size_t e = 0; e < elements.size(); ++e)
    for (std::size_t k = 0; k < K; ++k) host(e * K + k) = elements[e][k];
  Kokkos::deep_copy(nodes, host);
  return MeshMatrix<Device>(n_nodes, int(K), nodes);
}

template <class Device>
CsrMatrix<int, int, int, Device> MeshMatrix<Device>::to_csr() const {
  const impl::NodeIncidence<device_type> inc = impl::node_incidence(n_nodes_, nodes_);
  impl::sort_incidence(n_nodes_, inc);
  CsrMatrix<int, int, int, Device> e(n_nodes_, n_elements_, inc.map, inc.entries,
                                     Kokkos::View<int*, device_type>(
                                         Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                                            "spk::MeshMatrix::to_csr::values"),
                                         inc.entries.extent(0)));
  const auto col_idx = e.col_idx();
  const auto values = e.values();
  const int k = k_;
  Kokkos::parallel_for(
      "spk::MeshMatrix::to_csr::unpack", Kokkos::RangePolicy<execution_space>(0, int(nnz())),
      KOKKOS_LAMBDA(int s) {
        const int p = col_idx(s);
        col_idx(s) = p / k;
        values(s) = p % k;
      });
  return e;
}

}  // namespace spk
