// Tests of spk/formats/compressed_coo.hpp: the chunk encodings (8/16/32-bit column offsets,
// value table, single-row chunks, fillers), the round trip to_csr(), the value table itself, and
// SpMV (N direct and atomic, T / H) for every chunk shape against the host reference.
#include <string>
#include <vector>

#include <spk/formats/compressed_coo.hpp>

#include "format_checks.hpp"
#include "test_common.hpp"

namespace {

using spk_test::RoundTrip;

std::vector<spk::CompressedCooSpmvParams> ccoo_params() {
  std::vector<spk::CompressedCooSpmvParams> all{{}};
  for (int sl : {1, 2, 4}) {
    spk::CompressedCooSpmvParams p;
    p.slots_per_lane = sl;
    all.push_back(p);
  }
  spk::CompressedCooSpmvParams atomic;
  atomic.accumulate = spk::CooAccumulate::atomic;
  all.push_back(atomic);
  atomic.slots_per_lane = 4;
  all.push_back(atomic);
  spk::CompressedCooSpmvParams det;
  det.accumulate = spk::CooAccumulate::deterministic;
  all.push_back(det);
  det.slots_per_lane = 1;
  all.push_back(det);
  // several chunks per team (GPU only; CPU backends take one chunk per thread): the next
  // chunk's offsets loaded ahead, a last team with fewer chunks, one team for all chunks
  for (int m : {1, 3, 64}) {
    spk::CompressedCooSpmvParams c;
    c.slots_per_lane = m == 3 ? 2 : 1;
    c.chunks_per_team = m;
    all.push_back(c);
  }
  spk::CompressedCooSpmvParams det2;
  det2.accumulate = spk::CooAccumulate::deterministic;
  det2.chunks_per_team = 2;
  all.push_back(det2);
  spk::CompressedCooSpmvParams atomic5;
  atomic5.accumulate = spk::CooAccumulate::atomic;
  atomic5.chunks_per_team = 5;
  all.push_back(atomic5);
  spk::CompressedCooSpmvParams wide;  // four slots per lane (the (256, 2) launch bound)
  wide.slots_per_lane = 4;
  wide.chunks_per_team = 2;
  all.push_back(wide);
  det2.slots_per_lane = 2;
  det2.chunks_per_team = 3;
  all.push_back(det2);
  // a lane's slots taken in groups, each loading the next group's offsets (GPU only)
  for (int ld : {1, 2}) {
    spk::CompressedCooSpmvParams g;
    g.slots_per_lane = 4;
    g.slots_per_load = ld;
    g.chunks_per_team = ld == 1 ? 3 : 0;
    all.push_back(g);
  }
  spk::CompressedCooSpmvParams g21;
  g21.slots_per_lane = 2;
  g21.slots_per_load = 1;
  g21.accumulate = spk::CooAccumulate::deterministic;
  all.push_back(g21);
  return all;
}

/// Chunk shapes checked on every matrix: the default (B = 128, K chosen), small chunks (many
/// windows, rows crossing them) with every K in both layouts, with and without the value table,
/// and chunks of 96 and 160 slots (B / 32 odd: fewer slots per lane than asked).
std::vector<spk::CompressedCooOptions> ccoo_shapes() {
  std::vector<spk::CompressedCooOptions> all{{}};
  for (auto layout : {spk::CompressedCooLayout::slots, spk::CompressedCooLayout::packed})
    for (int k : {1, 2, 4, 8}) {
      if (layout == spk::CompressedCooLayout::packed && (k == 1 || k == 4)) continue;
      spk::CompressedCooOptions o;
      o.threads_per_chunk = 32;
      o.entries_per_thread = k;
      o.layout = layout;
      all.push_back(o);
    }
  spk::CompressedCooOptions packed;  // the packed layout's default K (8) and B
  packed.layout = spk::CompressedCooLayout::packed;
  all.push_back(packed);
  packed.value_table = false;
  packed.threads_per_chunk = 64;
  all.push_back(packed);
  spk::CompressedCooOptions raw;
  raw.threads_per_chunk = 64;
  raw.entries_per_thread = 2;
  raw.value_table = false;
  all.push_back(raw);
  for (int b : {96, 160}) {
    spk::CompressedCooOptions odd;
    odd.threads_per_chunk = b;
    odd.entries_per_thread = b == 96 ? 2 : 4;
    all.push_back(odd);
    odd.layout = spk::CompressedCooLayout::packed;
    all.push_back(odd);
  }
  return all;
}

/// The value types also checked with int64 ordinals.
template <class S>
constexpr bool wide_ordinals() {
  return std::is_same<typename spk::scalar_traits<S>::mag_type, double>::value;
}

template <class Device, class S, class O>
void check_ccoo(const spk_test::HostCsr<S, O>& a, std::uint64_t seed) {
  for (const auto& o : ccoo_shapes()) {
    INFO("B " << o.threads_per_chunk << ", K " << o.entries_per_thread << ", table "
              << o.value_table << ", layout " << spk::to_string(o.layout));
    spk_test::check_format<Device>(
        a,
        [&](const spk::CsrMatrix<S, O, int, Device>& d) {
          return spk::CompressedCooMatrix<S, O, int, Device>(d, o);
        },
        ccoo_params(), seed, RoundTrip::without_zeros);
  }
}

/// A random matrix whose values come from `distinct` values (the value table's case), with
/// explicit zeros among them.
template <class S>
spk_test::HostCsr<S, int> few_values(int nrows, int ncols, int mean, int distinct,
                                     std::uint64_t seed) {
  auto a = spk_test::random_csr<S, int>(nrows, ncols, mean, seed);
  std::mt19937_64 rng(seed + 1);
  std::vector<S> pool;
  for (int i = 0; i < distinct; ++i) pool.push_back(spk_test::random_value<S>(rng));
  pool.push_back(spk::scalar_traits<S>::zero());
  for (int k = 0; k < a.nnz(); ++k) a.values()(k) = pool[std::size_t(rng() % pool.size())];
  return a;
}

/// A random matrix whose rows come in blocks of 60: in every other block the values are drawn
/// from 3 values (table-coded chunks), elsewhere random (raw chunks).
template <class S>
spk_test::HostCsr<S, int> mixed_values(int nrows, int ncols, int mean, std::uint64_t seed) {
  auto a = spk_test::random_csr<S, int>(nrows, ncols, mean, seed);
  std::mt19937_64 rng(seed + 1);
  std::vector<S> pool;
  for (int i = 0; i < 3; ++i) pool.push_back(spk_test::random_value<S>(rng));
  for (int i = 0; i < nrows; ++i)
    if ((i / 60) % 2 == 0)
      for (int k = a.row_map()(i); k < a.row_map()(i + 1); ++k)
        a.values()(k) = pool[std::size_t(rng() % pool.size())];
  return a;
}

/// Rows whose columns lie in `groups` clusters `reach` apart, as in a 3D stencil: row i has
/// columns i + g * reach (g < groups) and, in the middle cluster, i +- 1 next to it; every
/// 97th row empty; random values. Chunks span about (groups - 1) * reach columns, but leaving
/// the gaps between the clusters out narrows their column offsets.
template <class S, class O = int>
spk_test::HostCsr<S, O> clustered_columns(int nrows, int groups, int reach, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int> row_map(1, 0);
  std::vector<O> cols;
  std::vector<S> vals;
  for (int i = 0; i < nrows; ++i) {
    if (i % 97 != 5)
      for (int g = 0; g < groups; ++g) {
        const bool mid = g == groups / 2;
        for (int d = mid ? -1 : 0; d <= (mid ? 1 : 0); ++d) {
          cols.push_back(O(1 + i + std::int64_t(g) * reach + d));
          vals.push_back(spk_test::random_value<S>(rng));
        }
      }
    row_map.push_back(int(cols.size()));
  }
  const int ncols = nrows + (groups - 1) * reach + 2;
  return spk::make_csr<S, O, int, spk::impl::HostDevice>(O(nrows), O(ncols), row_map, cols,
                                                         vals);
}

/// One row whose columns are every 1000th of [0, w0) and of [start, start + w1), with both ends
/// of each interval: a single chunk of B = 32, K = 8 (at most 256 entries).
spk_test::HostCsr<double, int> two_intervals(int w0, int start, int w1) {
  std::vector<int> cols;
  for (int c = 0; c < w0; c += 1000) cols.push_back(c);
  if (cols.back() != w0 - 1) cols.push_back(w0 - 1);
  for (int c = start; c < start + w1; c += 1000) cols.push_back(c);
  if (cols.back() != start + w1 - 1) cols.push_back(start + w1 - 1);
  std::vector<double> vals(cols.size(), 0.5);
  for (std::size_t k = 0; k < vals.size(); ++k) vals[k] += double(k);
  return spk::make_csr<double, int, int, spk::impl::HostDevice>(
      1, start + w1 + 5, std::vector<int>{0, int(cols.size())}, cols, vals);
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("compressed coo spmv matches the host reference", Device, ccoo_spmv) {
  spk_test::for_each_type<spk_test::all_scalars>([](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    // random, larger than a warp, with empty rows: 8-bit (200 columns), 16-bit (5000) and
    // 32-bit (100000) column offsets, non-square; int64 ordinals (with double values, real and
    // complex only: the ordinals' arithmetic does not depend on the value type, and every value
    // type x ordinal type compiles 56 more kernels for CUDA)
    check_ccoo<Device>(spk_test::random_csr<S, int>(300, 200, 6, 1), 3);
    check_ccoo<Device>(spk_test::random_csr<S, int>(300, 5000, 6, 2), 5);
    if constexpr (wide_ordinals<S>())
      check_ccoo<Device>(spk_test::random_csr<S, long long>(150, 100000, 3, 2), 7);
    // values from a small set (table encoding), with stored zeros
    check_ccoo<Device>(few_values<S>(400, 300, 5, 7, 3), 9);
    // blocks of rows with few values and with random values: table-coded chunks next to raw ones
    check_ccoo<Device>(mixed_values<S>(900, 700, 6, 10), 29);
    // one row (single-row chunks); one column; 0 nonzeros; 0 x 0; empty dimensions
    check_ccoo<Device>(spk_test::random_csr<S, int>(1, 900, 700, 3), 11);
    check_ccoo<Device>(spk_test::random_csr<S, int>(90, 1, 1, 4), 13);
    check_ccoo<Device>(spk_test::random_csr<S, int>(40, 30, 0, 5), 15);
    check_ccoo<Device>(spk_test::random_csr<S, int>(0, 0, 0, 6), 17);
    check_ccoo<Device>(spk_test::random_csr<S, int>(0, 5, 0, 6), 17);
    check_ccoo<Device>(spk_test::random_csr<S, int>(7, 0, 0, 6), 17);
    // one dense row among short ones
    check_ccoo<Device>(spk_test::random_csr<S, int>(150, 170, 3, 7, 40), 19);
    // duplicate entries, from CSR and from COO
    check_ccoo<Device>(spk_test::csr_with_duplicates<S, int>(8), 21);
    check_ccoo<Device>(spk_test::csr_from_coo_with_duplicates<S, int>(9), 23);
  });
}
TEST_CASE_TEMPLATE_APPLY(ccoo_spmv, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("compressed coo spmv with column gaps", Device, ccoo_gaps) {
  spk_test::for_each_type<spk_test::all_scalars>([](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    // columns in three clusters 100000 apart (column gaps: 8- or 16-bit instead of 32), in
    // five (more clusters than intervals: 32-bit) and in four 40000 apart (two share an
    // interval: 16-bit); int64 ordinals (double values)
    check_ccoo<Device>(clustered_columns<S>(700, 3, 100000, 31), 33);
    check_ccoo<Device>(clustered_columns<S>(300, 5, 70000, 32), 35);
    if constexpr (wide_ordinals<S>())
      check_ccoo<Device>(clustered_columns<S, long long>(200, 4, 40000, 33), 37);
  });
}
TEST_CASE_TEMPLATE_APPLY(ccoo_gaps, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("compressed coo on generated matrices", Device, ccoo_generated) {
  for (const auto& g : spk_test::generated_matrices<double>()) {
    INFO("matrix " << g.first);
    check_ccoo<Device>(g.second, 25);
  }
  // long rows crossing many chunks next to empty ones
  check_ccoo<Device>(spk_test::random_csr<double, int>(9, 3000, 600, 9), 27);
}
TEST_CASE_TEMPLATE_APPLY(ccoo_generated, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("compressed coo: row shape and the default launch", Device, ccoo_launch) {
  using exec = typename Device::execution_space;
  using M = spk::CompressedCooMatrix<double, int, int, Device>;
  const bool gpu = spk::impl::is_gpu_space<exec>();
  const auto launch = [](const M& m, const spk::CompressedCooSpmvParams& p = {}) {
    const auto r = spk::resolve_params(m, spk::Mode::N, p);
    return std::make_pair(r.slots_per_lane, r.slots_per_load);
  };
  // 27-point stencil, K = 8: interior rows of 27 entries take 4 slots, the corners' 8 entries 1
  const M s27(spk::generate::poisson3d_27pt<double, int, int, Device>(12));
  CHECK(s27.entries_per_slot() == 8);
  CHECK(s27.max_row_slots() == 4);
  CHECK(s27.mean_row_slots() > 3.0);
  CHECK(s27.mean_row_slots() < 4.0);
  CHECK(s27.table_chunks() == s27.n_chunks());
  CHECK(launch(s27) == (gpu ? std::make_pair(2, 1) : std::make_pair(1, 1)));
  {  // the choice is made for op = N only
    const auto rt = spk::resolve_params(s27, spk::Mode::T, {});
    CHECK(std::make_pair(rt.slots_per_lane, rt.slots_per_load) == std::make_pair(1, 1));
  }
  // given values are kept (within the chunk's windows), one slot per load with column gaps
  // (this small stencil's chunks of 32 rows take 8-bit offsets with them, 16-bit without)
  spk::CompressedCooOptions plain;
  plain.column_gaps = false;
  const M s27p(spk::generate::poisson3d_27pt<double, int, int, Device>(12), plain);
  CHECK(s27.gapped_chunks() > s27.n_chunks() / 2);
  CHECK(s27p.gapped_chunks() == 0);
  CHECK(s27.memory_bytes() < s27p.memory_bytes());
  spk::CompressedCooSpmvParams given;
  given.slots_per_lane = 4;
  CHECK(launch(s27p, given) == (gpu ? std::make_pair(4, 4) : std::make_pair(1, 1)));
  CHECK(launch(s27, given) == (gpu ? std::make_pair(4, 1) : std::make_pair(1, 1)));
  given.slots_per_load = 2;
  CHECK(launch(s27p, given) == (gpu ? std::make_pair(4, 2) : std::make_pair(1, 1)));
  {  // op = T / H: one slot per load
    const auto rt = spk::resolve_params(s27p, spk::Mode::T, given);
    CHECK(std::make_pair(rt.slots_per_lane, rt.slots_per_load) ==
          (gpu ? std::make_pair(4, 1) : std::make_pair(1, 1)));
  }
  // the same pattern with random values: raw values, one slot per lane
  spk::generate::GeneratorOptions rnd;
  rnd.random_values = true;
  const M r27(spk::generate::poisson3d_27pt<double, int, int, Device>(12, rnd));
  CHECK(r27.table_chunks() == 0);
  CHECK(launch(r27) == std::make_pair(1, 1));
  // 7-point stencil: rows of one slot
  const M s7(spk::generate::poisson3d_7pt<double, int, int, Device>(12));
  CHECK(s7.max_row_slots() == 1);
  CHECK(s7.mean_row_slots() == 1.0);
  CHECK(launch(s7) == std::make_pair(1, 1));
  // irregular rows (0 .. 20 entries and one full row of 400, K = 8): the longest row far above
  // the mean
  spk::CompressedCooOptions k8;
  k8.entries_per_thread = 8;
  auto irr_host = spk_test::random_csr<double, int>(400, 400, 10, 30, 5);
  for (int e = 0; e < irr_host.nnz(); ++e) irr_host.values()(e) = 2.0;  // table-coded
  const M irr(spk::copy_to<Device>(irr_host), k8);
  CHECK(irr.max_row_slots() == 50);
  CHECK(irr.table_chunks() == irr.n_chunks());
  CHECK(double(irr.max_row_slots()) > 2 * irr.mean_row_slots());
  CHECK(launch(irr) == std::make_pair(1, 1));
  // rows of 0, 3, 9 and 17 entries with K = 8: 1, 1, 2 and 3 slots
  std::vector<int> row_map{0, 0, 3, 12, 29}, cols;
  for (int len : {3, 9, 17})
    for (int j = 0; j < len; ++j) cols.push_back(j);
  const std::vector<double> vals(cols.size(), 2.0);
  const M t(spk::make_csr<double, int, int, Device>(4, 20, row_map, cols, vals), k8);
  CHECK(t.max_row_slots() == 3);
  CHECK(t.mean_row_slots() == 7.0 / 4.0);
  CHECK(launch(t) == (gpu ? std::make_pair(2, 1) : std::make_pair(1, 1)));  // 1.75, 3 <= 3.5
  const M empty(spk::CsrMatrix<double, int, int, Device>{});
  CHECK(empty.max_row_slots() == 0);
  CHECK(empty.mean_row_slots() == 0.0);
}
TEST_CASE_TEMPLATE_APPLY(ccoo_launch, spk_test::all_devices);

TEST_CASE_TEMPLATE_DEFINE("compressed coo on the shared real matrices", Device, ccoo_real) {
  spk_test::for_each_shared_matrix(
      "compressed-coo", [](const auto& host, const std::string&, bool complex) {
        using S = typename std::decay_t<decltype(host)>::value_type;
        const auto a = spk::copy_to<Device>(host);
        spk::CompressedCooOptions small;
        small.threads_per_chunk = 32;
        small.entries_per_thread = 2;
        spk::CompressedCooOptions packed;
        packed.threads_per_chunk = 32;
        packed.layout = spk::CompressedCooLayout::packed;
        for (const auto& o : {spk::CompressedCooOptions{}, small, packed}) {
          const spk::CompressedCooMatrix<S, int, int, Device> f(a, o);
          spk_test::check_round_trip(host, spk::to_host(f.to_csr()), RoundTrip::without_zeros);
          spk_test::check_real_spmv<Device>(f, host, complex, ccoo_params());
        }
        return true;
      });
}
TEST_CASE_TEMPLATE_APPLY(ccoo_real, spk_test::all_devices);

TEST_CASE("compressed coo: chunk encodings, value table and memory") {
  using D = spk::impl::HostDevice;
  // 2D 5-point Poisson: two distinct values (4, -1) and zero in the table; 900 rows of <= 5
  // entries with K = 1 and B = 32: 4380 slots, 137 chunks, column spans < 256 within a chunk
  const auto p = spk::generate::poisson2d_5pt<double, int, int, D>(30);
  spk::CompressedCooOptions o;
  o.threads_per_chunk = 32;
  o.entries_per_thread = 1;
  const spk::CompressedCooMatrix<double, int, int, D> c(p, o);
  const auto st = c.stats();
  CHECK(st.chunks == (p.nnz() + 31) / 32);
  CHECK(st.table_size == 3);
  CHECK(st.table_coverage == 1.0);
  CHECK(st.table_values == st.chunks);
  CHECK(st.col8 == st.chunks);
  CHECK(st.single_row == 0);
  // bytes: per chunk 32 row offsets, 32 column bytes, 32 table indices + code, 2 baselines, offset
  CHECK(c.memory_bytes() ==
        std::size_t(st.chunks) * (96 + 1 + 8) + std::size_t(st.chunks + 1) * 8 + 3 * 8);
  CHECK(double(c.memory_bytes()) < 0.4 * double(p.memory_bytes()));
  // random values: no table; scattered columns of a wide matrix: 32-bit offsets
  const spk::CompressedCooMatrix<double, int, int, D> w(
      spk_test::random_csr<double, int>(3000, 1000000, 1, 4), o);
  const auto sw = w.stats();
  CHECK(sw.table_values == 0);
  CHECK(sw.col32 == sw.chunks);
  // blocks of few-valued and random-valued rows: both encodings, next to each other
  const spk::CompressedCooMatrix<double, int, int, D> mixed(mixed_values<double>(900, 700, 6, 10),
                                                            o);
  const auto sm = mixed.stats();
  CHECK(sm.table_values > sm.chunks / 4);
  CHECK(sm.table_values < sm.chunks * 3 / 4);
  // one full row of 100000 entries: single-row chunks with 8-bit column offsets
  const spk::CompressedCooMatrix<double, int, int, D> d(
      spk_test::random_csr<double, int>(3, 100000, 20, 4, 1), o);
  const auto sd = d.stats();
  CHECK(sd.single_row >= 100000 / 32 - 2);
  CHECK(sd.col8 >= 100000 / 32 - 2);
  // K by the mean row length in the slot layout: 8 from 4 entries per row, smaller for very
  // short rows; 8 in the packed layout, which pads no row
  CHECK(spk::CompressedCooMatrix<double, int, int, D>(p).entries_per_slot() == 8);
  spk::CompressedCooOptions slot_layout;
  slot_layout.layout = spk::CompressedCooLayout::slots;
  const auto short_rows = spk_test::random_csr<double, int>(500, 500, 3, 3);  // 0..6, mean ~3
  CHECK(spk::CompressedCooMatrix<double, int, int, D>(short_rows, slot_layout)
            .entries_per_slot() == 4);
  const spk::CompressedCooMatrix<double, int, int, D> short_auto(short_rows);
  CHECK(short_auto.packed());  // random values, rows padded from ~3 to 4: packed
  CHECK(short_auto.entries_per_slot() == 8);
  CHECK(spk::impl::default_slot_entries(900, 1000) == 1);
  CHECK(spk::impl::default_slot_entries(1500, 1000) == 2);
  CHECK(spk::impl::default_slot_entries(4000, 1000) == 8);
  CHECK(spk::CompressedCooMatrix<double, int, int, D>(
            spk_test::random_csr<double, int>(500, 500, 0, 3))
            .entries_per_slot() == 1);
  // complex<double> is never tabled
  const spk::CompressedCooMatrix<Kokkos::complex<double>, int, int, D> z(
      spk::generate::poisson2d_5pt<Kokkos::complex<double>, int, int, D>(10));
  CHECK(z.stats().table_values == 0);
  CHECK(std::string(spk::CompressedCooMatrix<double>::name) == "compressed-coo");
}

TEST_CASE("compressed coo: column gaps") {
  using D = spk::impl::HostDevice;
  using M = spk::CompressedCooMatrix<double, int, int, D>;
  const auto stencil = clustered_columns<double>(3000, 3, 100000, 5);
  spk::CompressedCooOptions small;  // 32 rows a chunk: clusters of about 32 columns
  small.threads_per_chunk = 32;
  small.entries_per_thread = 8;
  small.layout = spk::CompressedCooLayout::slots;
  const M a(stencil, small);
  const auto st = a.stats();
  CHECK(a.gapped_chunks() == st.chunks);
  CHECK(st.col_gaps == st.chunks);
  CHECK(st.col8 == st.chunks);  // three intervals of about 32 + 34 + 32 columns
  spk::CompressedCooOptions plain = small;
  plain.column_gaps = false;
  const M b(stencil, plain);
  CHECK(b.stats().col32 == b.stats().chunks);
  CHECK(b.stats().col_gaps == 0);
  CHECK(b.gapped_chunks() == 0);
  // per chunk: 16 gap bytes instead of 3 * 256 more column bytes
  CHECK(b.memory_bytes() - a.memory_bytes() == std::size_t(st.chunks) * (3 * 256 - 16));
  // the default: packed (random values, rows of 5 padded to 8), chunks of about 205 rows:
  // 16-bit offsets
  const M d(stencil);
  CHECK(d.packed());
  CHECK(d.stats().col16 == d.stats().chunks);
  CHECK(d.gapped_chunks() == d.stats().chunks);
  // SpMV takes one slot per load where chunks have gaps
  spk::CompressedCooSpmvParams four;
  four.slots_per_lane = 4;
  four.slots_per_load = 4;
  CHECK(spk::resolve_params(a, spk::Mode::N, four).slots_per_load == 1);
  // five clusters, three intervals at most: clusters share them, 70000 columns wide or more
  const M five(clustered_columns<double>(3000, 5, 70000, 6), small);
  CHECK(five.stats().col32 == five.stats().chunks);
  CHECK(five.gapped_chunks() == 0);
  // four clusters 40000 apart: two share an interval, the offsets still fit 16 bits
  const M four_c(clustered_columns<double>(3000, 4, 40000, 7), small);
  CHECK(four_c.stats().col16 == four_c.stats().chunks);
  CHECK(four_c.gapped_chunks() == four_c.stats().chunks);
  spk_test::check_round_trip(clustered_columns<double>(3000, 4, 40000, 7), four_c.to_csr(),
                             RoundTrip::without_zeros);
  // the widths' limits: two intervals of 128 columns (largest compact offset 255) -> 8 bits,
  // 129 -> 16; of 32768 (65535) -> 16 bits, 32769 -> 32 without gaps
  const auto single = [&](int w0, int start, int w1) { return M(two_intervals(w0, start, w1), small); };
  const M i8 = single(128, 1000000, 128), i8b = single(128, 1000000, 129);
  const M i16 = single(32768, 1000000, 32768), i16b = single(32768, 1000000, 32769);
  CHECK(i8.stats().chunks == 1);
  CHECK(i8.stats().single_row == 1);
  CHECK((i8.stats().col8 == 1 && i8.gapped_chunks() == 1));
  CHECK((i8b.stats().col16 == 1 && i8b.gapped_chunks() == 1));
  CHECK((i16.stats().col16 == 1 && i16.gapped_chunks() == 1));
  CHECK((i16b.stats().col32 == 1 && i16b.gapped_chunks() == 0));
  for (const M* m : {&i8, &i8b, &i16, &i16b}) {
    const auto back = m->to_csr();
    CHECK(back.nnz() == m->nnz());
  }
  spk_test::check_round_trip(two_intervals(32768, 1000000, 32768), i16.to_csr(),
                             RoundTrip::without_zeros);
  spk_test::check_round_trip(two_intervals(128, 1000000, 129), i8b.to_csr(),
                             RoundTrip::without_zeros);
  spk_test::check_round_trip(stencil, a.to_csr(), RoundTrip::without_zeros);
  spk_test::check_round_trip(stencil, d.to_csr(), RoundTrip::without_zeros);
}

TEST_CASE_TEMPLATE_DEFINE("compressed coo: the packed layout", Device, ccoo_packed) {
  using M = spk::CompressedCooMatrix<double, int, int, Device>;
  spk::CompressedCooOptions packed;
  packed.layout = spk::CompressedCooLayout::packed;
  // rows of one entry and empty rows: a chunk of 128 slots of 8 entries spans up to 1024 rows
  // (row offsets past 8 bits), a slot up to 8 rows
  {
    auto host = spk_test::random_csr<double, int>(5000, 300, 1, 31);
    const M m(spk::copy_to<Device>(host), packed);
    CHECK(m.packed());
    CHECK(m.entries_per_slot() == 8);
    const auto st = m.stats();
    CHECK(st.packed);
    // every row stores its entries or one zero: no other padding than the last chunk's tail
    std::int64_t stored = 0;
    for (int i = 0; i < host.nrows(); ++i)
      stored += std::max(1, host.row_map()(i + 1) - host.row_map()(i));
    CHECK(st.chunks == (stored + 1023) / 1024);
    CHECK(st.stored_entries == st.chunks * 1024);
    spk_test::check_format<Device>(
        host, [&](const spk::CsrMatrix<double, int, int, Device>& d) { return M(d, packed); },
        ccoo_params(), 33, RoundTrip::without_zeros);
  }
  // 2D 5-point stencil with random values: the slot layout pads rows of 5 to 8 entries, the
  // packed layout does not; the automatic layout takes it, and also with the stencil's own
  // values (2 distinct: the table), whose rows of at most 5 entries the slots pad by > 50%;
  // table-coded rows padded less (27-point: 27 -> 32) or longer than a slot keep the slots
  spk::generate::GeneratorOptions rnd;
  rnd.random_values = true;
  const auto p5 = spk::generate::poisson2d_5pt<double, int, int, Device>(40, rnd);
  spk::CompressedCooOptions slots;
  slots.layout = spk::CompressedCooLayout::slots;
  const M ms(p5, slots), mp(p5, packed), ma(p5);
  CHECK(!ms.packed());
  CHECK(mp.packed());
  CHECK(ma.packed());
  CHECK(ms.stats().stored_entries >= 8 * 1600);
  CHECK(mp.stats().stored_entries < 5 * 1600 + 1024);
  CHECK(double(mp.memory_bytes()) < 0.75 * double(ms.memory_bytes()));
  CHECK(double(mp.memory_bytes()) < 0.9 * double(p5.memory_bytes()));
  CHECK(M(spk::generate::poisson2d_5pt<double, int, int, Device>(40)).packed());
  CHECK(!M(spk::generate::poisson3d_27pt<double, int, int, Device>(10)).packed());
  {
    // values 1 (the table), rows of 3 or 5 entries (K = 8: padded by 100%), and row 17 of
    // `long_row` entries: packed where that row fits a slot
    const auto ones = [](int long_row) {
      std::vector<int> rm{0}, cols;
      for (int i = 0; i < 300; ++i) {
        const int len = i == 17 ? long_row : 3 + 2 * (i % 2);
        for (int j = 0; j < len; ++j) cols.push_back((i * 7 + j * 3) % 250);
        rm.push_back(int(cols.size()));
      }
      return spk::copy_to<Device>(spk::make_csr<double, int, int, spk::impl::HostDevice>(
          300, 250, rm, cols, std::vector<double>(cols.size(), 1.0)));
    };
    CHECK(M(ones(8)).packed());
    CHECK(!M(ones(40)).packed());
  }
  // K = 1 pads nothing: the slot layout
  spk::CompressedCooOptions k1;
  k1.entries_per_thread = 1;
  CHECK(!M(p5, k1).packed());
  // the given K is kept
  packed.entries_per_thread = 2;
  CHECK(M(p5, packed).entries_per_slot() == 2);
  CHECK(std::string(spk::to_string(spk::CompressedCooLayout::packed)) == "packed");
}
TEST_CASE_TEMPLATE_APPLY(ccoo_packed, spk_test::all_devices);

TEST_CASE("compressed coo: the value table holds the most frequent values and zero") {
  using D = spk::impl::HostDevice;
  // 300 distinct values; value v_i appears i + 1 times: the table keeps the 255 most frequent
  // and zero, covering all but the 45 least frequent values' entries
  std::vector<double> vals;
  for (int i = 0; i < 300; ++i)
    for (int t = 0; t <= i; ++t) vals.push_back(1.0 + i);
  Kokkos::View<double*, D> v("v", vals.size());
  for (std::size_t k = 0; k < vals.size(); ++k) v(k) = vals[k];
  double coverage = 0;
  const auto table = spk::impl::frequent_values<Kokkos::DefaultHostExecutionSpace>(
      Kokkos::View<const double*, D>(v), coverage);
  REQUIRE(table.size() == 256);
  CHECK(table[0] == spk::impl::value_bits(0.0));
  double smallest = 1e9;
  for (std::size_t i = 1; i < table.size(); ++i) {
    double x;
    std::memcpy(&x, &table[i], sizeof(double));
    smallest = std::min(smallest, x);
  }
  CHECK(smallest == 46.0);  // values 46 .. 300 (counts 46 .. 300)
  const double n = 300.0 * 301.0 / 2;
  CHECK(coverage == doctest::Approx((n - 45.0 * 46.0 / 2) / n));
}

TEST_CASE("compressed coo: invalid options throw") {
  using D = spk::impl::HostDevice;
  const auto a = spk_test::random_csr<double, int>(5, 4, 2, 1);
  spk::CompressedCooOptions o;
  o.threads_per_chunk = 512;
  CHECK_THROWS_WITH_AS((spk::CompressedCooMatrix<double, int, int, D>(a, o)),
                       doctest::Contains("threads_per_chunk B = 512"), std::invalid_argument);
  o.threads_per_chunk = 64;
  o.entries_per_thread = 3;
  CHECK_THROWS_WITH_AS((spk::CompressedCooMatrix<double, int, int, D>(a, o)),
                       doctest::Contains("entries_per_thread K = 3"), std::invalid_argument);
  const spk::CompressedCooMatrix<double, int, int, D> c(a);
  Kokkos::View<double*, Kokkos::HostSpace> x("x", 5), y("y", 5);
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, c, x, 0.0, y),
                       doctest::Contains("x has 5 entries, op(A) has 4 columns"),
                       std::invalid_argument);
  Kokkos::View<double*, Kokkos::HostSpace> x4("x", 4);
  spk::CompressedCooSpmvParams p;
  p.slots_per_lane = 3;
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, c, x4, 0.0, y, p),
                       doctest::Contains("slots_per_lane = 3"), std::invalid_argument);
  p.slots_per_lane = 4;
  p.slots_per_load = 1;
  p.chunks_per_team = 3;
  CHECK(spk::describe(p) == "s4l1-c3-direct");
  p.chunks_per_team = 0;
  p.slots_per_load = 3;
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, c, x4, 0.0, y, p),
                       doctest::Contains("slots_per_load = 3"), std::invalid_argument);
  p.slots_per_load = 0;
  p.slots_per_lane = 0;
  p.chunks_per_team = -1;
  CHECK_THROWS_WITH_AS(spk::spmv(spk::Mode::N, 1.0, c, x4, 0.0, y, p),
                       doctest::Contains("chunks_per_team = -1"), std::invalid_argument);
}
