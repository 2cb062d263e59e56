// Tests of spk::add for HiSparse (spk/formats/hisparse.hpp, impl/hisparse_add.hpp): C = op(A) +
// op(B) against a host reference built entry by entry (std::map) for node sizes 2..256, all four
// combinations of transposed operands and scales, on random matrices, the paper's perturbed
// pairs (spk::generate::perturb_entries), A + A, cancellation, empty operands, one row,
// non-square shapes made to match by transposition, dense blocks (dense/dense and dense/sparse
// node pairs), duplicates and deep trees. Every result is also checked by SpMV (which sizes its
// queues from the result's statistics), by its statistics and bytes against the direct
// conversion of its CSR form, and by a walk over its pool (types, alignment, row-major sorted
// coordinates, zero padding, no unreachable bytes). Scales are powers of two, so the products
// are exact and a fused multiply-add on a GPU gives the reference's rounding.
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <spk/formats/hisparse.hpp>
#include <spk/generate.hpp>

#include "format_checks.hpp"
#include "test_common.hpp"

namespace {

using spk_test::HostCsr;
using spk_test::RoundTrip;
namespace hs = spk::impl::hisparse;

/// One operand: a host matrix with the state it is added in.
template <class S>
struct Operand {
  HostCsr<S, int> a;
  bool trans = false;
  S scale = S(1);
};

/// op(A) + op(B) by a host loop: duplicates summed in storage order (as the conversion does),
/// then s_A a + s_B b per position, the A part first (as the kernels compute it).
template <class S>
HostCsr<S, int> expected_sum(const Operand<S>& x, const Operand<S>& y) {
  std::map<std::pair<int, int>, S> m;
  int nrows = 0, ncols = 0;
  auto put = [&](const Operand<S>& o, bool first) {
    HostCsr<S, int> c = spk_test::canonical_nonzeros(o.a);
    if (o.trans) c = spk::transpose(c);
    nrows = c.nrows();
    ncols = c.ncols();
    for (int i = 0; i < c.nrows(); ++i)
      for (int k = c.row_map()(i); k < c.row_map()(i + 1); ++k) {
        const S v = o.scale * c.values()(k);
        const auto key = std::make_pair(i, int(c.col_idx()(k)));
        auto it = m.find(key);
        if (first || it == m.end()) m.emplace(key, v);
        else it->second = it->second + v;
      }
  };
  put(x, true);
  put(y, false);
  std::vector<int> row_map(std::size_t(nrows) + 1, 0), cols;
  std::vector<S> vals;
  for (const auto& e : m) {
    row_map[std::size_t(e.first.first) + 1] += 1;
    cols.push_back(e.first.second);
    vals.push_back(e.second);
  }
  for (int i = 0; i < nrows; ++i) row_map[std::size_t(i) + 1] += row_map[std::size_t(i)];
  return spk::make_csr<S, int, int, spk::impl::HostDevice>(nrows, ncols, row_map, cols, vals);
}

/// Walks the pool of c on the host: node types and alignment, the conversion's type rule,
/// row-major sorted coordinates inside the node, zero padding, non-null children; every byte of
/// the pool belongs to exactly one reachable node.
template <class S, class Device>
void check_layout(const spk::HiSparseMatrix<S, int, Device>& c) {
  const auto& data = c.data();
  const auto pool = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), data.pool);
  const char* base = reinterpret_cast<const char*>(pool.data());
  const int d = data.d;
  const int sb = int(sizeof(S));
  using ref_type = hs::ref_t<S>;
  std::int64_t bytes = 0, bad = 0;
  std::function<void(std::uint64_t, int)> walk = [&](std::uint64_t ref, int level) {
    const hs::NodeView nd{base, ref};
    const unsigned t = nd.type();
    if (t < hs::dense || t > hs::coo4 || hs::ref_offset(ref) % 16 != 0 ||
        std::int64_t(hs::ref_offset(ref)) >= data.stats.pool_bytes) {
      ++bad;
      return;
    }
    const bool leaf = level == data.levels - 1;
    std::vector<std::pair<int, ref_type>> children;
    if (t == hs::dense) {
      bytes += hs::node_bytes(t, 0, sb, d);
      const ref_type* s = nd.slots<ref_type>(0);
      for (int i = 0; i < d * d; ++i)
        if (s[i] != 0) children.emplace_back(i, s[i]);
    } else {
      const std::int64_t n = nd.count(d);
      bytes += hs::node_bytes(t, n, sb, d);
      if (t != hs::add_node_type(n, sb, d)) ++bad;
      const std::uint16_t* co = nd.coords();
      const ref_type* s = nd.slots<ref_type>(n);
      // the padding: every byte but the count, the n coordinates and the n slots is zero
      const std::int64_t co0 = hs::coords_offset(t), so = hs::slots_offset(t, n);
      for (std::int64_t i = 4; i < hs::node_bytes(t, n, sb, d); ++i) {
        const bool used = (i >= co0 && i < co0 + 2 * n) || (i >= so && i < so + n * sb);
        if (!used && nd.start()[i] != 0) ++bad;
      }
      for (std::int64_t e = 0; e < n; ++e) {
        if (hs::coord_row(co[e]) >= unsigned(d) || hs::coord_col(co[e]) >= unsigned(d)) ++bad;
        if (e > 0 && hs::row_major_key(co[e]) <= hs::row_major_key(co[e - 1])) ++bad;
        if (!leaf && s[e] == 0) ++bad;
        children.emplace_back(int(e), s[e]);
      }
    }
    if (!leaf)
      for (const auto& ch : children) walk(std::uint64_t(ch.second), level + 1);
  };
  if (data.root != 0) walk(data.root, 0);
  CHECK(bad == 0);
  CHECK(bytes == data.stats.pool_bytes);
  CHECK(std::int64_t(data.pool.extent(0)) * 8 == data.stats.pool_bytes);
}

/// Statistics of the addition's result against those of the direct conversion of its CSR form.
void check_same_stats(const spk::HiSparseStats& got, const spk::HiSparseStats& want) {
  CHECK(got.node_size == want.node_size);
  CHECK(got.levels == want.levels);
  CHECK(got.stored_entries == want.stored_entries);
  CHECK(got.pool_bytes == want.pool_bytes);
  REQUIRE(got.level.size() == want.level.size());
  for (std::size_t l = 0; l < got.level.size(); ++l) {
    INFO("level " << l);
    const auto& g = got.level[l];
    const auto& w = want.level[l];
    CHECK(g.sparse_nodes == w.sparse_nodes);
    CHECK(g.dense_nodes == w.dense_nodes);
    CHECK(g.sparse_entries == w.sparse_entries);
    CHECK(g.dense_entries == w.dense_entries);
    CHECK(g.bytes == w.bytes);
    for (unsigned b = 0; b < hs::num_bins; ++b) {
      INFO("bin " << b);
      CHECK(g.bin_nodes[b] == w.bin_nodes[b]);
    }
  }
}

/// Adds op(x) + op(y) on Device with node size d and checks the result (see the file comment).
/// `exact_stats`: no sum cancels to zero, so the result equals the conversion of its CSR form.
template <class Device, class S>
spk::HiSparseMatrix<S, int, Device> check_add(const Operand<S>& x, const Operand<S>& y, int d,
                                              const spk::HiSparseAddParams& params = {},
                                              bool exact_stats = true) {
  using H = spk::HiSparseMatrix<S, int, Device>;
  INFO("node size " << d << ", A " << x.a.nrows() << " x " << x.a.ncols() << " (nnz "
                    << x.a.nnz() << (x.trans ? ", transposed" : "") << ", scale " << x.scale
                    << "), B " << y.a.nrows() << " x " << y.a.ncols() << " (nnz " << y.a.nnz()
                    << (y.trans ? ", transposed" : "") << ", scale " << y.scale << "), merge "
                    << params.merge << ", small " << params.small_entries << ", warp pairs "
                    << params.warp_pairs);
  H a(spk::copy_to<Device>(x.a), d), b(spk::copy_to<Device>(y.a), d);
  if (x.trans) a = a.transpose();
  if (y.trans) b = b.transpose();
  if (x.scale != S(1)) a = a.scaled(x.scale);
  if (y.scale != S(1)) b = b.scaled(y.scale);
  const H c = spk::add(a, b, params);
  const HostCsr<S, int> want = expected_sum(x, y);
  CHECK(c.nrows() == want.nrows());
  CHECK(c.ncols() == want.ncols());
  CHECK(!c.transposed());
  CHECK(c.scale() == S(1));
  CHECK(c.node_size() == d);
  const auto c_csr = c.to_csr();
  spk_test::check_round_trip(want, spk::to_host(c_csr), RoundTrip::nonzeros);
  check_layout(c);
  spk_test::check_format_spmv<Device>(c, want, spk::Mode::N, S(1.5), S(0.5), 41,
                                      spk::HiSparseSpmvParams{});
  spk_test::check_format_spmv<Device>(c, want, spk::Mode::T, S(1), S(0), 43,
                                      spk::HiSparseSpmvParams{});
  if (exact_stats) {
    const H direct(c_csr, d);
    check_same_stats(c.stats(), direct.stats());
    CHECK(c.memory_bytes() == direct.memory_bytes());
    CHECK(c.nnz() == direct.nnz());
  }
  return c;
}

/// All four orientations with scales (1, 1) and (2, -0.5); x and y must be square or each
/// other's transposes where needed (the caller picks shapes that match).
template <class Device, class S>
void check_orientations(const HostCsr<S, int>& x, const HostCsr<S, int>& y, int d) {
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      const bool scaled = (ta + tb) % 2 == 1;
      check_add<Device>(Operand<S>{x, ta == 1, scaled ? S(2) : S(1)},
                        Operand<S>{y, tb == 1, scaled ? S(-0.5) : S(1)}, d);
    }
}


/// A copy of x with a dense rectangle [r0, r0 + h) x [c0, c0 + w) added (random values).
template <class S>
HostCsr<S, int> with_dense_block(const HostCsr<S, int>& x, int r0, int c0, int h, int w,
                                 std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::map<std::pair<int, int>, S> m;
  for (int i = 0; i < x.nrows(); ++i)
    for (int k = x.row_map()(i); k < x.row_map()(i + 1); ++k)
      m[{i, int(x.col_idx()(k))}] = x.values()(k);
  for (int i = r0; i < r0 + h; ++i)
    for (int j = c0; j < c0 + w; ++j) m[{i, j}] = spk_test::random_value<S>(rng);
  std::vector<int> row_map(std::size_t(x.nrows()) + 1, 0), cols;
  std::vector<S> vals;
  for (const auto& e : m) {
    row_map[std::size_t(e.first.first) + 1] += 1;
    cols.push_back(e.first.second);
    vals.push_back(e.second);
  }
  for (int i = 0; i < x.nrows(); ++i) row_map[std::size_t(i) + 1] += row_map[std::size_t(i)];
  return spk::make_csr<S, int, int, spk::impl::HostDevice>(x.nrows(), x.ncols(), row_map, cols,
                                                           vals);
}

template <class Device, class S>
HostCsr<S, int> perturbed(const HostCsr<S, int>& a, int radius, std::uint64_t seed) {
  return spk::to_host(spk::generate::perturb_entries(spk::copy_to<Device>(a), radius, seed));
}

const int node_sizes[] = {2, 4, 16, 128, 256};

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("hisparse add: random and perturbed pairs in every orientation", Device,
                          hs_add_random) {
  spk_test::for_each_type<std::tuple<float, double>>([](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    const auto a = spk_test::random_csr<S, int>(150, 150, 5, 1);
    const auto b = spk_test::random_csr<S, int>(150, 150, 7, 2);
    const auto p1 = perturbed<Device>(a, 1, 3);
    const auto p3 = perturbed<Device>(a, 3, 4);
    for (int d : node_sizes) {
      check_orientations<Device>(a, b, d);
      check_orientations<Device>(a, p1, d);
      check_orientations<Device>(a, p3, d);
    }
  });
}
TEST_CASE_TEMPLATE_APPLY(hs_add_random, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("hisparse add: edge cases", Device, hs_add_edges) {
  spk_test::for_each_type<std::tuple<float, double>>([](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    using H = spk::HiSparseMatrix<S, int, Device>;
    const auto a = spk_test::random_csr<S, int>(130, 70, 4, 5);
    const auto bt = spk_test::random_csr<S, int>(70, 130, 4, 6);  // added transposed
    const auto empty = spk_test::random_csr<S, int>(130, 70, 0, 7);
    const auto row = spk_test::random_csr<S, int>(1, 700, 300, 8);
    const auto col = spk_test::random_csr<S, int>(700, 1, 1, 9);
    for (int d : node_sizes) {
      // A + A; A + empty; empty + A; empty + empty; 0 x 0
      check_add<Device>(Operand<S>{a}, Operand<S>{a}, d);
      check_add<Device>(Operand<S>{a, false, S(-2)}, Operand<S>{a, false, S(0.25)}, d);
      check_add<Device>(Operand<S>{a}, Operand<S>{empty, false, S(2)}, d);
      check_add<Device>(Operand<S>{empty}, Operand<S>{bt, true, S(-1)}, d);
      const auto e = check_add<Device>(Operand<S>{empty}, Operand<S>{empty}, d);
      CHECK(e.nnz() == 0);
      CHECK(e.memory_bytes() == 0);
      const auto z = spk::add(H(), H());
      CHECK(z.nrows() == 0);
      CHECK(z.memory_bytes() == 0);
      // non-square: A (130 x 70) + B^T with B 70 x 130, and A^T + B
      check_add<Device>(Operand<S>{a}, Operand<S>{bt, true}, d);
      check_add<Device>(Operand<S>{a, true, S(0.5)}, Operand<S>{bt}, d);
      // one row: 1 x 700 with its perturbation and with a 700 x 1 column transposed
      check_add<Device>(Operand<S>{row}, Operand<S>{perturbed<Device>(row, 3, 10)}, d);
      check_add<Device>(Operand<S>{row, false, S(2)}, Operand<S>{col, true}, d);
      check_add<Device>(Operand<S>{col}, Operand<S>{row, true}, d);
      // duplicates in the inputs (summed in storage order before adding)
      const auto dup = spk_test::csr_with_duplicates<S, int>(8);
      const auto dup2 = spk_test::csr_with_duplicates<S, int>(9);
      check_add<Device>(Operand<S>{dup}, Operand<S>{dup2, false, S(-0.5)}, d);
      check_add<Device>(Operand<S>{dup, true}, Operand<S>{dup2, true}, d);
      // cancellation: A + (-1) A keeps every entry in sparse nodes with value 0 (to_csr drops
      // them); the dense slots read as absent
      const H h(spk::copy_to<Device>(a), d);
      const H zero = spk::add(h, h.scaled(S(-1)));
      CHECK(zero.to_csr().nnz() == 0);
      CHECK(zero.nnz() <= h.nnz());
      check_layout(zero);
      spk_test::check_format_spmv<Device>(zero, empty, spk::Mode::N, S(1), S(0), 47,
                                          spk::HiSparseSpmvParams{});
      // and adding that result to A again gives A
      spk_test::check_round_trip(a, spk::to_host(spk::add(zero, h).to_csr()), RoundTrip::nonzeros);
    }
  });
}
TEST_CASE_TEMPLATE_APPLY(hs_add_edges, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("hisparse add: dense nodes, deep trees, chained sums", Device,
                          hs_add_dense) {
  spk_test::for_each_type<std::tuple<float, double>>([](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    const auto full = spk_test::dense_csr<S>(45, 45, 11);
    const auto full2 = spk_test::dense_csr<S>(45, 45, 12);
    const auto sparse = spk_test::random_csr<S, int>(45, 45, 3, 13);
    // a sparse matrix with a dense block in one corner and another block elsewhere
    const auto block = with_dense_block(spk_test::random_csr<S, int>(300, 300, 3, 14), 0, 0, 40,
                                        40, 15);
    const auto block2 = with_dense_block(spk_test::random_csr<S, int>(300, 300, 2, 16), 20, 10,
                                         70, 30, 17);
    for (int d : node_sizes) {
      check_orientations<Device>(full, full2, d);   // dense / dense
      check_orientations<Device>(full, sparse, d);  // dense / sparse
      check_orientations<Device>(sparse, full, d);  // sparse / dense
      check_orientations<Device>(block, block2, d);
    }
    // deep trees: 300 x 300 with d = 2 (9 levels) and d = 4 (5 levels)
    const auto big = spk_test::random_csr<S, int>(300, 300, 8, 18);
    for (int d : {2, 4}) {
      check_orientations<Device>(big, perturbed<Device>(big, 1, 19), d);
      // chained: (A + B) + C reads the first result's nodes (row-major, padded) as an operand
      using H = spk::HiSparseMatrix<S, int, Device>;
      const auto b = perturbed<Device>(big, 3, 20);
      const H ab = spk::add(H(spk::copy_to<Device>(big), d), H(spk::copy_to<Device>(b), d));
      const H abc = spk::add(ab.transpose(), H(spk::copy_to<Device>(block), d).scaled(S(2)));
      const auto ab_host = expected_sum(Operand<S>{big}, Operand<S>{b});
      spk_test::check_round_trip(
          expected_sum(Operand<S>{ab_host, true}, Operand<S>{block, false, S(2)}),
          spk::to_host(abc.to_csr()), RoundTrip::nonzeros);
      check_layout(abc);
    }
  });
}
TEST_CASE_TEMPLATE_APPLY(hs_add_dense, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("hisparse add: every pair path gives the same result", Device,
                          hs_add_paths) {
  using S = double;
  // large leaves at d = 128 / 256 (pairs of > 512 entries: the team merge), a dense row, and a
  // perturbed copy; each run forces other paths: no serial small pairs, no merge (bitmaps for
  // untransposed pairs too), teams of 2 threads on the host (barriers and team scans); on GPUs
  // the default sends sparse pairs to the warp bin at d = 32..128 (also every pair but dense
  // ones in variant 5), variants 1-4 to the team paths; variants 6 and 7 bound the teams per
  // launch (one team, or three of four small pairs each) so that every team loops over many
  // pairs, reusing its scratch and counters; variant 8 asks for teams of 1024
  const auto a = spk_test::random_csr<S, int>(256, 256, 40, 21, 17);
  const auto b = perturbed<Device>(a, 2, 22);
  std::vector<spk::HiSparseAddParams> variants(9);
  variants[1].small_entries = 0;
  variants[2].merge = false;
  variants[3].small_entries = 4;
  variants[3].merge = false;
  variants[4].small_pairs_per_team = 2;
  variants[4].merge_team_size = 2;
  variants[4].team_size = 2;
  for (int v = 1; v <= 4; ++v) variants[std::size_t(v)].warp_pairs = false;
  variants[5].small_entries = 0;
  variants[6].max_teams = 1;
  variants[7].max_teams = 3;
  variants[7].small_pairs_per_team = 4;
  variants[7].warp_pairs = false;
  // team bins of up to 1024 threads (on Cuda the scratch-bounded maximum is not a power of two:
  // the launch rounds it down for Kokkos's team scans)
  variants[8].team_size = 1024;
  variants[8].warp_pairs = false;
  for (int d : {4, 16, 32, 64, 128, 256})
    for (std::size_t v = 0; v < variants.size(); ++v) {
      // teams of 2 host threads spin in their barriers: only where pairs are few
      if ((v == 4 || v == 7 || v == 8) && d < 128) continue;
      check_add<Device>(Operand<S>{a}, Operand<S>{b, false, S(-0.5)}, d, variants[v]);
      check_add<Device>(Operand<S>{a, true}, Operand<S>{b}, d, variants[v]);
    }
  // the team merge of pairs up to 512 entries (d = 16: leaves of ~100 entries) with teams of 2
  const auto small_a = spk_test::random_csr<S, int>(64, 64, 10, 23);
  const auto small_b = perturbed<Device>(small_a, 1, 24);
  for (int d : {4, 16}) {
    check_add<Device>(Operand<S>{small_a}, Operand<S>{small_b}, d, variants[4]);
    check_add<Device>(Operand<S>{small_a}, Operand<S>{small_b, true, S(2)}, d, variants[4]);
    check_add<Device>(Operand<S>{small_a}, Operand<S>{small_b}, d, variants[7]);
  }
}
TEST_CASE_TEMPLATE_APPLY(hs_add_paths, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("hisparse add: the shared real matrices and their perturbed copies",
                          Device, hs_add_real) {
  // A + B with B = perturb_entries(A, 2) (the paper's pairs) at d = 128 (and at d = 64 with at
  // most 64 teams per launch), and A^T + B at d = 32
  // (the warp bin on GPUs) for square A; complex files are left to the SpMV tests (the
  // addition is instantiated for float and double). Sums may cancel, so no exact statistics.
  spk_test::for_each_shared_matrix("hisparse add", [](const auto& host, const std::string&,
                                                      bool complex) {
    using S = typename std::decay_t<decltype(host)>::value_type;
    if constexpr (std::is_same<S, double>::value) {
      const auto b = perturbed<Device>(host, 2, 51);
      check_add<Device>(Operand<S>{host}, Operand<S>{b}, 128, {}, false);
      spk::HiSparseAddParams few;  // teams loop over many pairs each
      few.max_teams = 64;
      check_add<Device>(Operand<S>{host}, Operand<S>{b, false, S(2)}, 64, few, false);
      if (host.nrows() == host.ncols())
        check_add<Device>(Operand<S>{host, true}, Operand<S>{b, false, S(-0.5)}, 32, {}, false);
      return true;
    } else {
      (void)complex;
      return false;
    }
  });
}
TEST_CASE_TEMPLATE_APPLY(hs_add_real, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("hisparse add: a workspace kept between additions changes nothing",
                          Device, hs_add_workspace) {
  using S = double;
  using H = spk::HiSparseMatrix<S, int, Device>;
  // a small addition, a larger one (the workspace grows), the small one again (it reuses the
  // larger buffers: counters and queue tails must start from zero), each against spk::add
  // without a workspace, entry for entry
  const auto a1 = spk_test::random_csr<S, int>(300, 300, 6, 31);
  const auto b1 = perturbed<Device>(a1, 2, 32);
  const auto a2 = spk_test::random_csr<S, int>(1500, 1500, 20, 33, 700);
  const auto b2 = perturbed<Device>(a2, 3, 34);
  spk::HiSparseAddWorkspace<Device> ws;
  std::size_t grown = 0;
  for (int round = 0; round < 3; ++round)
    for (const bool trans : {false, true}) {
      const bool big = round == 1;
      const H x(spk::copy_to<Device>(big ? a2 : a1), 32), y(spk::copy_to<Device>(big ? b2 : b1), 32);
      const H xo = trans ? x.transpose() : x;
      const H want = spk::add(xo, y.scaled(S(-2)));
      const H got = spk::add(xo, y.scaled(S(-2)), {}, ws);
      INFO("round " << round << ", transposed " << trans);
      spk_test::check_round_trip(spk::to_host(want.to_csr()), spk::to_host(got.to_csr()),
                                 RoundTrip::exact);
      // counters restarted from zero, padding cleared in a reused (dirty) pool
      check_same_stats(got.stats(), want.stats());
      CHECK(got.memory_bytes() == want.memory_bytes());
      check_layout(got);
      if (round == 1) grown = std::max(grown, ws.bytes());
    }
  CHECK(ws.bytes() > 0);
  CHECK(ws.bytes() == grown);  // the small additions after the large one allocated nothing
}
TEST_CASE_TEMPLATE_APPLY(hs_add_workspace, spk_test::all_devices);

TEST_CASE("hisparse add: errors name the shapes and node sizes") {
  using D = spk::impl::HostDevice;
  using H = spk::HiSparseMatrix<double, int, D>;
  const auto a = spk::copy_to<D>(spk_test::random_csr<double, int>(5, 4, 2, 1));
  const auto b = spk::copy_to<D>(spk_test::random_csr<double, int>(4, 5, 2, 2));
  const H ha(a, 16), hb(b, 16);
  CHECK_THROWS_WITH_AS(spk::add(ha, hb),
                       doctest::Contains("op(A) is 5 x 4, op(B) is 4 x 5: the shapes must match"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      spk::add(ha.transpose(), ha),
      doctest::Contains("op(A) is 4 x 5 (transposed), op(B) is 5 x 4: the shapes must match"),
      std::invalid_argument);
  CHECK_NOTHROW(spk::add(ha, hb.transpose()));
  CHECK_THROWS_WITH_AS(spk::add(ha, H(a, 32)),
                       doctest::Contains("A has node size d = 16, B has d = 32"),
                       std::invalid_argument);
  spk::HiSparseAddParams p;
  p.small_entries = 17;
  CHECK_THROWS_WITH_AS(spk::add(ha, ha, p),
                       doctest::Contains("small_entries = 17 must be in [0, 16]"),
                       std::invalid_argument);
  spk::HiSparseAddParams q;
  q.max_teams = -1;
  CHECK_THROWS_WITH_AS(spk::add(ha, ha, q), doctest::Contains("max_teams must be >= 0"),
                       std::invalid_argument);
}
