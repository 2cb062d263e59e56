// spk/impl/mesh_edges.hpp: the unique edges of a mesh, numbered, for subdivision (one midpoint
// per edge) and for the sparsity patterns of mesh matrices (one pair of entries per edge).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace spk {
namespace impl {

/// The distinct undirected edges of a set of elements, grouped by their lower vertex: the edges
/// (a, b) with a < b are numbered start(a) .. start(a + 1) - 1 in increasing b, so the numbering
/// follows (a, b) lexicographically. Built by counting, one pass per element edge and a sort of
/// each vertex's short list: O(elements + vertices) time and memory.
class EdgeIndex {
 public:
  /// Edges of `elements` (arrays of vertex indices in [0, n_vertices), checked by the caller)
  /// along the local vertex pairs `pairs`.
  template <class Element, std::size_t NP>
  EdgeIndex(std::size_t n_vertices, const std::vector<Element>& elements,
            const std::array<std::array<int, 2>, NP>& pairs)
      : start_(n_vertices + 1, 0) {
    for (const auto& el : elements)
      for (const auto& p : pairs) {
        const int a = el[std::size_t(p[0])], b = el[std::size_t(p[1])];
        if (a != b) ++start_[std::size_t(std::min(a, b)) + 1];
      }
    for (std::size_t v = 0; v < n_vertices; ++v) start_[v + 1] += start_[v];
    upper_.resize(std::size_t(start_[n_vertices]));
    std::vector<std::int64_t> fill(start_.begin(), start_.end() - 1);
    for (const auto& el : elements)
      for (const auto& p : pairs) {
        const int a = el[std::size_t(p[0])], b = el[std::size_t(p[1])];
        if (a != b) upper_[std::size_t(fill[std::size_t(std::min(a, b))]++)] = std::max(a, b);
      }
    // sort and deduplicate each vertex's list, compacting in place
    std::int64_t out = 0;
    for (std::size_t v = 0; v < n_vertices; ++v) {
      const auto b = upper_.begin() + start_[v];
      const auto e = upper_.begin() + start_[v + 1];
      std::sort(b, e);
      const auto u = std::unique(b, e);
      start_[v] = out;
      out = std::int64_t(std::copy(b, u, upper_.begin() + out) - upper_.begin());
    }
    start_[n_vertices] = out;
    upper_.resize(std::size_t(out));
    upper_.shrink_to_fit();
  }

  std::size_t n_vertices() const { return start_.size() - 1; }
  std::size_t n_edges() const { return upper_.size(); }
  /// First edge whose lower vertex is v (v in [0, n_vertices]).
  std::int64_t start(std::size_t v) const { return start_[v]; }
  /// Upper vertex of edge e.
  int upper(std::size_t e) const { return upper_[e]; }

  /// Number of edge (a, b) (either order), or -1 when there is no such edge. O(log degree).
  std::int64_t find(int a, int b) const {
    if (a > b) std::swap(a, b);
    const auto first = upper_.begin() + start_[std::size_t(a)];
    const auto last = upper_.begin() + start_[std::size_t(a) + 1];
    const auto it = std::lower_bound(first, last, b);
    return it != last && *it == b ? std::int64_t(it - upper_.begin()) : -1;
  }

 private:
  std::vector<std::int64_t> start_;
  std::vector<int> upper_;
};

/// The local vertex pairs of a triangle's and a tetrahedron's edges.
constexpr std::array<std::array<int, 2>, 3> triangle_edges{{{0, 1}, {1, 2}, {2, 0}}};
constexpr std::array<std::array<int, 2>, 6> tetrahedron_edges{
    {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}};

}  // namespace impl
}  // namespace spk
