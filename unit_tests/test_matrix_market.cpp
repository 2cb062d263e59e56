// Tests of spk/io/matrix_market.hpp: every shared matrix against an independent iostream reader,
// hand-written files of each field and symmetry, array files, writer round trips (bit-exact) and
// one test per kind of malformed input.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <spk/coo_matrix.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/io/matrix_market.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_common.hpp"

namespace {

namespace fs = std::filesystem;
using Header = spk::io::MatrixMarketHeader;
using Host = spk::impl::HostDevice;
using cdouble = Kokkos::complex<double>;

/// A fresh directory under the system temp directory, removed with everything in it at the end.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() /
            ("spk_test_mm_" + std::to_string(rd()) + "_" + std::to_string(rd()));
    fs::create_directories(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }
  /// Writes `text` byte for byte to a file of the directory and returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = path(name);
    std::ofstream out(p, std::ios::binary);
    out << text;
    REQUIRE(out.good());
    return p;
  }

 private:
  fs::path path_;
};

/// One entry of a matrix with 0-based indices and complex value (imaginary 0 for real types).
struct Entry {
  long long i, j;
  double re, im;
};

std::string to_text(const Entry& e) {
  std::ostringstream os;
  os << "(" << e.i << ", " << e.j << ") = (" << e.re << ", " << e.im << ")";
  return os.str();
}

template <class S, class O, class F>
std::vector<Entry> entries_of(const spk::CooMatrix<S, O, F, Host>& a) {
  using traits = spk::scalar_traits<S>;
  std::vector<Entry> v;
  for (std::size_t k = 0; k < std::size_t(a.nnz()); ++k)
    v.push_back({(long long)a.row_idx()(k), (long long)a.col_idx()(k), traits::real(a.values()(k)),
                 traits::imag(a.values()(k))});
  return v;
}

/// Checks that a read matrix has exactly the expected entries in the expected order.
template <class S, class O, class F>
void check_entries(const spk::CooMatrix<S, O, F, Host>& a, const std::vector<Entry>& expected) {
  const std::vector<Entry> got = entries_of(a);
  REQUIRE(got.size() == expected.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    INFO("entry " << k << ": got " << to_text(got[k]) << ", expected " << to_text(expected[k]));
    CHECK(got[k].i == expected[k].i);
    CHECK(got[k].j == expected[k].j);
    CHECK(got[k].re == expected[k].re);
    CHECK(got[k].im == expected[k].im);
  }
}

/// The expansion rule of the Matrix Market format, applied to stored entries in file order:
/// each off-diagonal entry is followed by its mirror.
std::vector<Entry> expand(const std::vector<Entry>& stored, const std::string& symmetry) {
  std::vector<Entry> out;
  for (const Entry& e : stored) {
    out.push_back(e);
    if (symmetry == "general" || e.i == e.j) continue;
    if (symmetry == "symmetric") out.push_back({e.j, e.i, e.re, e.im});
    if (symmetry == "skew-symmetric") out.push_back({e.j, e.i, -e.re, -e.im});
    if (symmetry == "hermitian") out.push_back({e.j, e.i, e.re, -e.im});
  }
  return out;
}

/// A second, deliberately simple reader (iostreams) of coordinate files, expanded with expand().
std::vector<Entry> reference_read(const std::string& path, long long& m, long long& n) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::string line, mm, object, format, field, symmetry;
  std::getline(in, line);
  std::istringstream banner(line);
  banner >> mm >> object >> format >> field >> symmetry;
  REQUIRE(format == "coordinate");
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos && line[0] != '%') break;
  long long nnz = 0;
  std::istringstream size(line);
  size >> m >> n >> nnz;
  std::vector<Entry> stored;
  for (long long k = 0; k < nnz && in.good(); ++k) {
    Entry e{0, 0, 1.0, 0.0};
    in >> e.i >> e.j;
    if (field != "pattern") in >> e.re;
    if (field == "complex") in >> e.im;
    --e.i;
    --e.j;
    stored.push_back(e);
  }
  REQUIRE(in.good());
  return expand(stored, symmetry);
}

/// Splits a tab-separated line.
std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t t = line.find('\t', pos);
    out.push_back(line.substr(pos, t == std::string::npos ? std::string::npos : t - pos));
    if (t == std::string::npos) return out;
    pos = t + 1;
  }
}

/// Checks that reading `path` as Scalar throws Exception whose message contains every piece.
template <class Exception, class Scalar = double, class Ordinal = int, class Offset = int>
void check_read_error(const std::string& path, const std::vector<std::string>& pieces) {
  std::string message;
  try {
    spk::io::read_matrix_market_coo<Scalar, Ordinal, Offset>(path);
  } catch (const Exception& e) {
    message = e.what();
  } catch (const std::exception& e) {
    FAIL_CHECK("wrong exception type for " << path << ": " << e.what());
    return;
  }
  INFO("message: " << message);
  REQUIRE_FALSE(message.empty());
  CHECK(message.find("spk::io::read_matrix_market") != std::string::npos);
  for (const std::string& p : pieces) {
    INFO("expected in the message: " << p);
    CHECK(message.find(p) != std::string::npos);
  }
}

/// Writes `text` and checks that reading it throws std::invalid_argument naming the file, the
/// line and `what`.
template <class Scalar = double>
void check_bad_file(const TempDir& dir, const std::string& name, const std::string& text, int line,
                    const std::string& what) {
  const std::string path = dir.write(name, text);
  check_read_error<std::invalid_argument, Scalar>(path,
                                                  {path + ":" + std::to_string(line) + ":", what});
}

template <class S>
bool same_bits(const S& a, const S& b) {
  return std::memcmp(&a, &b, sizeof(S)) == 0;
}

/// Checks that a COO matrix read back holds the entries of a host CSR matrix, in row order, with
/// bit-identical values.
template <class S, class O, class F, class O2, class F2>
void check_same_as_csr(const spk::CooMatrix<S, O2, F2, Host>& b,
                       const spk::CsrMatrix<S, O, F, Host>& a) {
  REQUIRE(b.nrows() == O2(a.nrows()));
  REQUIRE(b.ncols() == O2(a.ncols()));
  REQUIRE(std::int64_t(b.nnz()) == std::int64_t(a.nnz()));
  std::size_t k = 0;
  bool ok = true;
  for (O i = 0; i < a.nrows() && ok; ++i) {
    for (F p = a.row_map()(i); p < a.row_map()(i + 1); ++p, ++k) {
      if (b.row_idx()(k) != O2(i) || b.col_idx()(k) != O2(a.col_idx()(p)) ||
          !same_bits(b.values()(k), a.values()(p))) {
        ok = false;
        INFO("first mismatch at entry " << k << " (row " << i << ")");
        CHECK(ok);
        break;
      }
    }
  }
  CHECK(ok);
}

}  // namespace

// --- 1. the shared matrices --------------------------------------------------------------------

TEST_CASE("matrix market: every shared matrix matches MANIFEST.tsv and an iostream reader") {
  const std::string dir = spk_test::data_dir() + "/matrices";
  std::ifstream manifest(dir + "/MANIFEST.tsv");
  INFO("data directory: " << dir);
  REQUIRE(manifest.good());
  std::string line;
  std::getline(manifest, line);
  const std::vector<std::string> columns = split_tabs(line);
  std::map<std::string, std::size_t> col;
  for (std::size_t c = 0; c < columns.size(); ++c) col[columns[c]] = c;
  for (const char* name : {"file", "rows", "cols", "nnz_stored", "nnz_full", "field", "symmetry"})
    REQUIRE(col.count(name) == 1);

  int listed = 0, checked = 0;
  while (std::getline(manifest, line)) {
    if (line.empty()) continue;
    ++listed;
    const std::vector<std::string> f = split_tabs(line);
    REQUIRE(f.size() == columns.size());
    const std::string path = dir + "/" + f[col["file"]];
    const long long rows = std::stoll(f[col["rows"]]), cols = std::stoll(f[col["cols"]]);
    const long long stored = std::stoll(f[col["nnz_stored"]]);
    const long long full = std::stoll(f[col["nnz_full"]]);
    const std::string field = f[col["field"]], symmetry = f[col["symmetry"]];
    INFO("matrix " << path);
    REQUIRE(fs::exists(path));

    const Header h = spk::io::read_matrix_market_header(path);
    CHECK(spk::io::to_string(h.format) == std::string("coordinate"));
    CHECK(spk::io::to_string(h.field) == field);
    CHECK(spk::io::to_string(h.symmetry) == symmetry);
    CHECK(h.nrows == rows);
    CHECK(h.ncols == cols);
    CHECK(h.entries == stored);

    std::vector<Entry> got;
    long long nrows = -1, ncols = -1;
    if (field == "complex") {
      const auto a = spk::io::read_matrix_market_coo<cdouble>(path);
      nrows = a.nrows();
      ncols = a.ncols();
      got = entries_of(a);
    } else {
      const auto a = spk::io::read_matrix_market_coo<double>(path);
      nrows = a.nrows();
      ncols = a.ncols();
      got = entries_of(a);
    }
    CHECK(nrows == rows);
    CHECK(ncols == cols);
    CHECK((long long)got.size() == full);

    long long ref_rows = 0, ref_cols = 0;
    const std::vector<Entry> ref = reference_read(path, ref_rows, ref_cols);
    REQUIRE(ref.size() == got.size());
    std::size_t bad = 0;
    for (std::size_t k = 0; k < ref.size(); ++k)
      if (got[k].i != ref[k].i || got[k].j != ref[k].j || got[k].re != ref[k].re ||
          got[k].im != ref[k].im) {
        if (bad++ == 0)
          FAIL_CHECK("entry " << k << ": got " << to_text(got[k]) << ", iostream reader "
                              << to_text(ref[k]));
      }
    CHECK(bad == 0);
    ++checked;
  }
  CHECK(listed == 51);
  CHECK(checked == 51);
}

TEST_CASE("matrix market: a complex file cannot be read into a real value type") {
  const std::string path = spk_test::data_dir() + "/matrices/w156.mtx";
  REQUIRE(fs::exists(path));
  check_read_error<std::invalid_argument, double>(path, {path + ":1:", "complex", "double"});
  check_read_error<std::invalid_argument, float>(path, {path + ":1:", "complex", "float"});
  CHECK(spk::io::read_matrix_market_coo<Kokkos::complex<float>>(path).nnz() == 362);
}

// --- 2. every field x symmetry, value by value ---------------------------------------------------

TEST_CASE("matrix market: hand-written coordinate files, each field and symmetry") {
  TempDir dir;
  const char* fields[] = {"real", "integer", "pattern", "complex"};
  const char* symmetries[] = {"general", "symmetric", "skew-symmetric", "hermitian"};
  // 1-based stored entries; non-general ones are in the lower triangle.
  const std::vector<std::pair<int, int>> general_idx = {{1, 1}, {3, 1}, {1, 4}, {2, 2}, {2, 2}};
  const std::vector<std::pair<int, int>> lower_idx = {{1, 1}, {2, 1}, {3, 1}, {3, 3}, {3, 2}};
  const std::vector<std::pair<int, int>> skew_idx = {{2, 1}, {3, 1}, {3, 2}};
  const double re[] = {1.5, -2.25, 3e-3, 4.0, 5.125};
  const int ints[] = {7, -3, 12, 0, 9};
  const double im[] = {0.5, -1.0, 2.75, -0.125, 6.0};
  for (const char* field : fields) {
    for (const char* sym : symmetries) {
      const std::string fs_ = field, ss = sym;
      const auto& idx = ss == "general"          ? general_idx
                        : ss == "skew-symmetric" ? skew_idx
                                                 : lower_idx;
      const int ncols = ss == "general" ? 4 : 3;
      std::ostringstream text;
      text << "%%MatrixMarket matrix coordinate " << field << " " << sym << "\n% a comment\n"
           << "3 " << ncols << " " << idx.size() << "\n";
      std::vector<Entry> stored;
      for (std::size_t k = 0; k < idx.size(); ++k) {
        Entry e{idx[k].first - 1, idx[k].second - 1, 1.0, 0.0};
        text << idx[k].first << " " << idx[k].second;
        if (fs_ == "real" || fs_ == "complex") {
          e.re = re[k];
          text << " " << re[k];
        }
        if (fs_ == "integer") {
          e.re = ints[k];
          text << " " << ints[k];
        }
        // a hermitian diagonal is real
        if (fs_ == "complex") {
          e.im = (ss == "hermitian" && e.i == e.j) ? 0.0 : im[k];
          text << " " << e.im;
        }
        text << "\n";
        stored.push_back(e);
      }
      INFO(field << " " << sym << " file:\n" << text.str());
      const std::string path = dir.write(fs_ + "_" + ss + ".mtx", text.str());
      const std::vector<Entry> expected = expand(stored, ss);
      const Header h = spk::io::read_matrix_market_header(path);
      CHECK(spk::io::to_string(h.field) == fs_);
      CHECK(spk::io::to_string(h.symmetry) == ss);
      CHECK(h.entries == (long long)idx.size());
      const auto a = spk::io::read_matrix_market_coo<cdouble>(path);
      CHECK(a.nrows() == 3);
      CHECK(a.ncols() == ncols);
      check_entries(a, expected);
      if (fs_ != "complex") {
        check_entries(spk::io::read_matrix_market_coo<double, long long, long long>(path),
                      expected);
      }
    }
  }
}

TEST_CASE("matrix market: expansion rules checked by hand") {
  TempDir dir;
  // hermitian: mirror is the conjugate; diagonal once
  check_entries(spk::io::read_matrix_market_coo<cdouble>(
                    dir.write("herm.mtx",
                              "%%MatrixMarket matrix coordinate complex hermitian\n3 3 3\n"
                              "1 1 2.0 0.0\n2 1 1.0 -3.0\n3 2 0.5 4.0\n")),
                {{0, 0, 2, 0}, {1, 0, 1, -3}, {0, 1, 1, 3}, {2, 1, 0.5, 4}, {1, 2, 0.5, -4}});
  // complex symmetric: mirror is the same value (no conjugate)
  check_entries(spk::io::read_matrix_market_coo<cdouble>(
                    dir.write("csym.mtx",
                              "%%MatrixMarket matrix coordinate complex symmetric\n2 2 2\n"
                              "2 1 1 -3\n2 2 5 7\n")),
                {{1, 0, 1, -3}, {0, 1, 1, -3}, {1, 1, 5, 7}});
  // skew-symmetric: mirror is negated
  check_entries(spk::io::read_matrix_market_coo<double>(
                    dir.write("skew.mtx",
                              "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n"
                              "2 1 4.5\n3 1 -1\n")),
                {{1, 0, 4.5, 0}, {0, 1, -4.5, 0}, {2, 0, -1, 0}, {0, 2, 1, 0}});
  // pattern: every value 1; a symmetric file holding only the upper triangle is mirrored too
  check_entries(spk::io::read_matrix_market_coo<float>(
                    dir.write("pat.mtx",
                              "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n"
                              "1 1\n1 2\n1 3\n")),
                {{0, 0, 1, 0}, {0, 1, 1, 0}, {1, 0, 1, 0}, {0, 2, 1, 0}, {2, 0, 1, 0}});
  // integer general with duplicates kept, and the lexical variants a reader must accept:
  // upper-case words, CRLF line ends, tabs, '+' signs, blank and comment lines among entries
  check_entries(spk::io::read_matrix_market_coo<double>(dir.write(
                    "int.mtx",
                    "%%MatrixMarket Matrix Coordinate INTEGER General\r\n%\r\n\r\n 2\t3  4 \r\n"
                    "1 3 +5\r\n% between\r\n\r\n2\t1\t-6\r\n1 3 2\r\n+2 +2 0\r\n\r\n")),
                {{0, 2, 5, 0}, {1, 0, -6, 0}, {0, 2, 2, 0}, {1, 1, 0, 0}});
  // real values in every notation; an underflowing value becomes 0; no final newline
  check_entries(spk::io::read_matrix_market_coo<double>(
                    dir.write("real.mtx",
                              "%%MatrixMarket matrix coordinate real general\n1 1 6\n"
                              "1 1 1e3\n1 1 -.5\n1 1 2.\n1 1 1.25E-2\n1 1 1e-400\n1 1 7")),
                {{0, 0, 1e3, 0},
                 {0, 0, -0.5, 0},
                 {0, 0, 2, 0},
                 {0, 0, 1.25e-2, 0},
                 {0, 0, 0, 0},
                 {0, 0, 7, 0}});
  // empty matrices
  const auto empty = spk::io::read_matrix_market_coo<double>(
      dir.write("empty.mtx", "%%MatrixMarket matrix coordinate real general\n0 0 0\n"));
  CHECK(empty.nrows() == 0);
  CHECK(empty.ncols() == 0);
  CHECK(empty.nnz() == 0);
  const auto no_entries = spk::io::read_matrix_market_coo<double>(
      dir.write("none.mtx", "%%MatrixMarket matrix coordinate real symmetric\n5 5 0\n"));
  CHECK(no_entries.nrows() == 5);
  CHECK(no_entries.nnz() == 0);
}

TEST_CASE("matrix market: a comment line longer than the read block") {
  TempDir dir;
  const std::string path =
      dir.write("long.mtx", "%%MatrixMarket matrix coordinate real general\n%" +
                                std::string(300000, 'x') + "\n2 2 1\n2 1 3.5\n");
  const Header h = spk::io::read_matrix_market_header(path);
  CHECK(h.nrows == 2);
  CHECK(h.entries == 1);
  check_entries(spk::io::read_matrix_market_coo<double>(path), {{1, 0, 3.5, 0}});
}

// --- 3. array format -------------------------------------------------------------------------

TEST_CASE("matrix market: array files") {
  TempDir dir;
  // general 2 x 3, column-major, zeros kept
  const std::string general =
      dir.write("ag.mtx", "%%MatrixMarket matrix array real general\n% c\n2 3\n1\n2\n0\n4\n5\n6\n");
  CHECK(spk::io::read_matrix_market_header(general).entries == 6);
  check_entries(
      spk::io::read_matrix_market_coo<double>(general),
      {{0, 0, 1, 0}, {1, 0, 2, 0}, {0, 1, 0, 0}, {1, 1, 4, 0}, {0, 2, 5, 0}, {1, 2, 6, 0}});
  // symmetric 3 x 3: lower triangle by columns
  const std::string sym =
      dir.write("as.mtx", "%%MatrixMarket matrix array integer symmetric\n3 3\n1\n2\n3\n4\n5\n6\n");
  CHECK(spk::io::read_matrix_market_header(sym).entries == 6);
  check_entries(spk::io::read_matrix_market_coo<double>(sym), {{0, 0, 1, 0},
                                                               {1, 0, 2, 0},
                                                               {0, 1, 2, 0},
                                                               {2, 0, 3, 0},
                                                               {0, 2, 3, 0},
                                                               {1, 1, 4, 0},
                                                               {2, 1, 5, 0},
                                                               {1, 2, 5, 0},
                                                               {2, 2, 6, 0}});
  // skew-symmetric 3 x 3: strictly lower triangle
  const std::string skew =
      dir.write("ak.mtx", "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n");
  CHECK(spk::io::read_matrix_market_header(skew).entries == 3);
  check_entries(
      spk::io::read_matrix_market_coo<double>(skew),
      {{1, 0, 1, 0}, {0, 1, -1, 0}, {2, 0, 2, 0}, {0, 2, -2, 0}, {2, 1, 3, 0}, {1, 2, -3, 0}});
  // hermitian 2 x 2
  const std::string herm =
      dir.write("ah.mtx", "%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n2 3\n4 0\n");
  check_entries(spk::io::read_matrix_market_coo<cdouble>(herm),
                {{0, 0, 1, 0}, {1, 0, 2, 3}, {0, 1, 2, -3}, {1, 1, 4, 0}});
  // complex general 1 x 2 and an empty array
  check_entries(spk::io::read_matrix_market_coo<cdouble>(dir.write(
                    "ac.mtx", "%%MatrixMarket matrix array complex general\n1 2\n1 -1\n0 2.5\n")),
                {{0, 0, 1, -1}, {0, 1, 0, 2.5}});
  const auto empty = spk::io::read_matrix_market_coo<double>(
      dir.write("a0.mtx", "%%MatrixMarket matrix array real general\n0 4\n"));
  CHECK(empty.ncols() == 4);
  CHECK(empty.nnz() == 0);
}

// --- 4. writer round trips -----------------------------------------------------------------------

TEST_CASE("matrix market: random matrices round trip bit for bit") {
  TempDir dir;
  int file = 0;
  spk_test::for_each_type<spk_test::all_scalars>([&](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    INFO("value type " << spk::scalar_traits<S>::name);
    const auto a32 = spk_test::random_csr<S, int, int>(57, 43, 5, 11, 7);
    const auto a64 = spk_test::random_csr<S, long long, long long>(40, 90, 8, 12, 3);
    const std::string p32 = dir.path("rt" + std::to_string(file++) + ".mtx");
    const std::string p64 = dir.path("rt" + std::to_string(file++) + ".mtx");
    spk::io::write_matrix_market(p32, a32);
    spk::io::write_matrix_market(p64, a64);
    const Header h = spk::io::read_matrix_market_header(p32);
    CHECK(h.format == Header::Format::coordinate);
    CHECK(h.field ==
          (spk::scalar_traits<S>::is_complex ? Header::Field::complex : Header::Field::real));
    CHECK(h.symmetry == Header::Symmetry::general);
    CHECK(h.entries == a32.nnz());
    check_same_as_csr(spk::io::read_matrix_market_coo<S, int, int>(p32), a32);
    check_same_as_csr(spk::io::read_matrix_market_coo<S, long long, long long>(p64), a64);
    check_same_as_csr(spk::io::read_matrix_market_coo<S, long long, int>(p32), a32);

    // 0 nonzeros, and 0 x 0
    const std::string pz = dir.path("rt" + std::to_string(file++) + ".mtx");
    const spk::CsrMatrix<S, int, int, Host> zero(5, 7, 0);
    spk::io::write_matrix_market(pz, zero);
    check_same_as_csr(spk::io::read_matrix_market_coo<S>(pz), zero);
    const spk::CsrMatrix<S, long long, long long, Host> none;
    spk::io::write_matrix_market(pz, none);
    check_same_as_csr(spk::io::read_matrix_market_coo<S, long long, long long>(pz), none);
  });
}

TEST_CASE("matrix market: extreme values round trip bit for bit") {
  TempDir dir;
  const double d[] = {0.1,
                      1.0 / 3.0,
                      -0.0,
                      std::numeric_limits<double>::max(),
                      -std::numeric_limits<double>::min(),
                      std::numeric_limits<double>::denorm_min(),
                      std::numeric_limits<double>::epsilon(),
                      1e22,
                      -123456789.123456789,
                      std::numeric_limits<double>::infinity()};
  const float f[] = {0.1f,
                     1.0f / 3.0f,
                     -0.0f,
                     std::numeric_limits<float>::max(),
                     -std::numeric_limits<float>::min(),
                     std::numeric_limits<float>::denorm_min(),
                     std::numeric_limits<float>::epsilon(),
                     16777217.0f,
                     -3.4e-39f,
                     -std::numeric_limits<float>::infinity()};
  const int n = 10;
  std::vector<int> rm(2), cols(n);
  rm[1] = n;
  for (int k = 0; k < n; ++k) cols[k] = k;
  const auto ad = spk::make_csr<double, int, int, Host>(1, n, rm, cols, {d, d + n});
  const auto af = spk::make_csr<float, int, int, Host>(1, n, rm, cols, {f, f + n});
  std::vector<cdouble> zd;
  for (int k = 0; k < n; ++k) zd.push_back(cdouble(d[k], d[n - 1 - k]));
  const auto az = spk::make_csr<cdouble, int, int, Host>(1, n, rm, cols, zd);
  spk::io::write_matrix_market(dir.path("d.mtx"), ad);
  spk::io::write_matrix_market(dir.path("f.mtx"), af);
  spk::io::write_matrix_market(dir.path("z.mtx"), az);
  check_same_as_csr(spk::io::read_matrix_market_coo<double>(dir.path("d.mtx")), ad);
  check_same_as_csr(spk::io::read_matrix_market_coo<float>(dir.path("f.mtx")), af);
  check_same_as_csr(spk::io::read_matrix_market_coo<cdouble>(dir.path("z.mtx")), az);
}

TEST_CASE("matrix market: writer options, COO input, a file larger than the read block") {
  TempDir dir;
  const auto a = spk_test::random_csr<double>(30, 20, 4, 5);
  // pattern: indices only, read back as ones
  spk::io::MatrixMarketWriteOptions opt;
  opt.pattern = true;
  opt.comment = "first line\nsecond line";
  const std::string pp = dir.path("p.mtx");
  spk::io::write_matrix_market(pp, a, opt);
  CHECK(spk::io::read_matrix_market_header(pp).field == Header::Field::pattern);
  std::ifstream in(pp);
  std::string l1, l2, l3, l4;
  std::getline(in, l1);
  std::getline(in, l2);
  std::getline(in, l3);
  std::getline(in, l4);
  CHECK(l1 == "%%MatrixMarket matrix coordinate pattern general");
  CHECK(l2.find("spk") != std::string::npos);
  CHECK(l2[0] == '%');
  CHECK(l3 == "% first line");
  CHECK(l4 == "% second line");
  const auto p = spk::io::read_matrix_market_coo<double>(pp);
  REQUIRE(p.nnz() == a.nnz());
  for (int k = 0; k < a.nnz(); ++k) {
    CHECK(p.col_idx()(k) == a.col_idx()(k));
    CHECK(p.values()(k) == 1.0);
  }

  // COO with duplicates and unsorted entries keeps its order
  spk::CooBuilder<Kokkos::complex<float>, long long> builder(3, 4);
  builder.add(2, 3, {1.5f, -2.0f});
  builder.add(0, 0, {0.1f, 0.2f});
  builder.add(2, 3, {-7.0f, 1e-30f});
  const auto coo = builder.build<Host>();
  spk::io::write_matrix_market(dir.path("coo.mtx"), coo);
  const auto c =
      spk::io::read_matrix_market_coo<Kokkos::complex<float>, long long>(dir.path("coo.mtx"));
  REQUIRE(c.nnz() == 3);
  for (int k = 0; k < 3; ++k) {
    CHECK(c.row_idx()(k) == coo.row_idx()(k));
    CHECK(c.col_idx()(k) == coo.col_idx()(k));
    CHECK(same_bits(c.values()(k), coo.values()(k)));
  }

  // about 12 MB: entries cross the reader's 8 MiB block boundary
  const auto big = spk_test::random_csr<double>(20000, 20000, 20, 99);
  spk::io::write_matrix_market(dir.path("big.mtx"), big);
  CHECK(fs::file_size(dir.path("big.mtx")) > (std::uintmax_t(9) << 20));
  check_same_as_csr(spk::io::read_matrix_market_coo<double>(dir.path("big.mtx")), big);
}

TEST_CASE("matrix market: writer errors") {
  TempDir dir;
  const auto a = spk_test::random_csr<double>(4, 4, 2, 1);
  const std::string bad_dir = dir.path("no_such_dir") + "/a.mtx";
  CHECK_THROWS_WITH_AS(spk::io::write_matrix_market(bad_dir, a),
                       doctest::Contains(("cannot open " + bad_dir).c_str()), std::runtime_error);
  // an out-of-range column is refused and leaves no file behind
  const auto bad = spk::make_csr<double, int, int, Host>(2, 3, {0, 1, 2}, {0, 3}, {1.0, 2.0});
  const std::string p = dir.path("bad.mtx");
  CHECK_THROWS_WITH_AS(spk::io::write_matrix_market(p, bad),
                       doctest::Contains("has column 3 outside [0, 3)"), std::invalid_argument);
  CHECK_FALSE(fs::exists(p));
  spk::CooMatrix<double, int, int, Host> bad_coo(2, 2, 1);
  bad_coo.row_idx()(0) = -1;
  bad_coo.col_idx()(0) = 0;
  bad_coo.values()(0) = 1.0;
  CHECK_THROWS_WITH_AS(spk::io::write_matrix_market(p, bad_coo),
                       doctest::Contains("COO entry 0 is (-1, 0)"), std::invalid_argument);
  CHECK_FALSE(fs::exists(p));
}

TEST_CASE_TEMPLATE_DEFINE("matrix market: writing matrices that live on a device", Device,
                          mm_device) {
  TempDir dir;
  spk_test::for_each_type<spk_test::all_scalars>([&](auto* tag) {
    using S = std::remove_pointer_t<decltype(tag)>;
    INFO("value type " << spk::scalar_traits<S>::name);
    const auto h = spk_test::random_csr<S, long long, int>(70, 65, 6, 21, 4);
    const auto d = spk::copy_to<Device>(h);
    spk::io::write_matrix_market(dir.path("csr.mtx"), d);
    check_same_as_csr(spk::io::read_matrix_market_coo<S, long long, int>(dir.path("csr.mtx")), h);

    spk::CooBuilder<S> builder(3, 2);
    builder.add(1, 1, spk::scalar_traits<S>::make(0.25, -1.5));
    builder.add(2, 0, spk::scalar_traits<S>::make(-3.0, 0.1));
    builder.add(1, 1, spk::scalar_traits<S>::make(1e-3, 7.0));
    const auto coo = builder.template build<Device>();
    spk::io::write_matrix_market(dir.path("coo.mtx"), coo);
    const auto back = spk::io::read_matrix_market_coo<S>(dir.path("coo.mtx"));
    const auto ref = spk::to_host(coo);
    REQUIRE(back.nnz() == 3);
    for (int k = 0; k < 3; ++k) {
      CHECK(back.row_idx()(k) == ref.row_idx()(k));
      CHECK(back.col_idx()(k) == ref.col_idx()(k));
      CHECK(same_bits(back.values()(k), ref.values()(k)));
    }
  });
}
TEST_CASE_TEMPLATE_APPLY(mm_device, spk_test::all_devices);

// --- 5. malformed input --------------------------------------------------------------------------

TEST_CASE("matrix market: malformed files throw with file, line and problem") {
  TempDir dir;
  const std::string banner = "%%MatrixMarket matrix coordinate real general\n";

  SUBCASE("banner") {
    check_bad_file(dir, "nobanner.mtx", "3 3 1\n1 1 1\n", 1, "missing banner");
    check_bad_file(dir, "typo.mtx", "%%MatrixMarkt matrix coordinate real general\n1 1 0\n", 1,
                   "missing banner");
    check_bad_file(dir, "short.mtx", "%%MatrixMarket matrix coordinate real\n1 1 0\n", 1,
                   "incomplete banner");
    check_bad_file(dir, "long.mtx", "%%MatrixMarket matrix coordinate real general x\n1 1 0\n", 1,
                   "unexpected 'x'");
    check_bad_file(dir, "object.mtx", "%%MatrixMarket vector coordinate real general\n1 1 0\n", 1,
                   "unknown object 'vector'");
    check_bad_file(dir, "format.mtx", "%%MatrixMarket matrix coord real general\n1 1 0\n", 1,
                   "unknown format 'coord'");
    check_bad_file(dir, "field.mtx", "%%MatrixMarket matrix coordinate double general\n1 1 0\n", 1,
                   "unknown field 'double'");
    check_bad_file(dir, "sym.mtx", "%%MatrixMarket matrix coordinate real symm\n1 1 0\n", 1,
                   "unknown symmetry 'symm'");
    check_bad_file(dir, "arraypattern.mtx", "%%MatrixMarket matrix array pattern general\n1 1\n", 1,
                   "field 'pattern' is not allowed in array format");
  }
  SUBCASE("size line") {
    check_bad_file(dir, "two.mtx", banner + "% c\n3 3\n1 1 1\n", 3,
                   "size line has 2 values, expected 3");
    check_bad_file(dir, "four.mtx", banner + "3 3 1 1\n1 1 1\n", 2,
                   "size line has more than 3 values");
    check_bad_file(dir, "arraythree.mtx", "%%MatrixMarket matrix array real general\n2 2 4\n", 2,
                   "size line has more than 2 values");
    check_bad_file(dir, "neg.mtx", banner + "-3 3 1\n1 1 1\n", 2, "negative number of rows -3");
    check_bad_file(dir, "negnnz.mtx", banner + "3 3 -1\n", 2, "negative number of entries -1");
    check_bad_file(dir, "alpha.mtx", banner + "3 x 1\n1 1 1\n", 2,
                   "number of columns 'x' is not an integer");
    check_bad_file(dir, "frac.mtx", banner + "3 3.5 1\n1 1 1\n", 2,
                   "number of columns '3.5' is not an integer");
    check_bad_file(dir, "huge.mtx", banner + "99999999999999999999 1 0\n", 2,
                   "not an integer in the range of int64");
    check_bad_file(dir, "nosize.mtx", banner + "% only comments\n", 2,
                   "file ends before the size line");
    check_bad_file(dir, "square.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 4 0\n", 2,
                   "must be square");
  }
  SUBCASE("indices") {
    check_bad_file(dir, "row0.mtx", banner + "3 4 2\n1 1 1\n0 2 1\n", 4,
                   "row index 0 out of range [1, 3]");
    check_bad_file(dir, "rowbig.mtx", banner + "3 4 2\n1 1 1\n4 2 1\n", 4,
                   "row index 4 out of range [1, 3]");
    check_bad_file(dir, "col0.mtx", banner + "3 4 1\n1 0 1\n", 3,
                   "column index 0 out of range [1, 4]");
    check_bad_file(dir, "colbig.mtx", banner + "3 4 1\n1 5 1\n", 3,
                   "column index 5 out of range [1, 4]");
    check_bad_file(dir, "rowtext.mtx", banner + "3 4 1\nfoo 1 1\n", 3,
                   "row index 'foo' is not an integer");
    check_bad_file(dir, "colfrac.mtx", banner + "3 4 1\n1 2.0 1\n", 3,
                   "column index '2.0' is not an integer");
    check_bad_file(dir, "nocol.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 4 1\n2\n",
                   3, "missing column index");
  }
  SUBCASE("values") {
    check_bad_file(dir, "valtext.mtx", banner + "3 3 2\n1 1 1\n2 2 abc\n", 4,
                   "value 'abc' is not a number");
    check_bad_file(dir, "fortran.mtx", banner + "3 3 1\n2 2 1.0D+00\n", 3,
                   "value '1.0D+00' is not a number");
    check_bad_file(dir, "noval.mtx", banner + "3 3 2\n1 1 1\n2 2\n", 4, "missing value");
    check_bad_file<cdouble>(dir, "noimag.mtx",
                            "%%MatrixMarket matrix coordinate complex general\n3 3 1\n2 2 1.0\n", 3,
                            "missing imaginary part");
    check_bad_file<cdouble>(dir, "imagtext.mtx",
                            "%%MatrixMarket matrix coordinate complex general\n3 3 1\n2 2 1.0 i\n",
                            3, "imaginary part 'i' is not a number");
    check_bad_file(dir, "extra.mtx", banner + "3 3 1\n2 2 1.0 2.0\n", 3, "unexpected '2.0'");
    check_bad_file(dir, "patval.mtx",
                   "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n2 2 1.0\n", 3,
                   "unexpected '1.0'");
    check_bad_file(dir, "intfrac.mtx",
                   "%%MatrixMarket matrix coordinate integer general\n3 3 1\n2 2 1.5\n", 3,
                   "value '1.5' is not an integer");
    check_bad_file(dir, "overflow.mtx", banner + "3 3 1\n2 2 1e400\n", 3,
                   "value '1e400' is beyond the range of double");
    const std::string big_float = dir.write("bigfloat.mtx", banner + "3 3 1\n2 2 1e300\n");
    check_read_error<std::invalid_argument, float>(
        big_float, {big_float + ":3:", "'1e300' is beyond the range of the value type float"});
    CHECK(spk::io::read_matrix_market_coo<double>(big_float).values()(0) == 1e300);
  }
  SUBCASE("entry counts") {
    check_bad_file(dir, "truncated.mtx", banner + "3 3 3\n1 1 1\n2 2 2\n", 4,
                   "file ends after 2 of the 3 entries");
    check_bad_file(dir, "cut.mtx", banner + "3 3 2\n1 1 1\n2 2", 4, "missing value");
    check_bad_file(dir, "toomany.mtx", banner + "3 3 2\n1 1 1\n2 2 2\n% c\n3 3 3\n", 6,
                   "more entries than the 2 announced");
    check_bad_file(dir, "arrayshort.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n",
                   4, "file ends after 2 of the 4 values");
    check_bad_file(dir, "arraylong.mtx",
                   "%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n4\n", 6,
                   "more values than the 3");
    check_bad_file(dir, "arraytwo.mtx", "%%MatrixMarket matrix array real general\n2 1\n1 2\n", 3,
                   "unexpected '2'");
  }
  SUBCASE("empty and missing files") {
    check_bad_file(dir, "empty.mtx", "", 1, "empty file");
    check_bad_file(dir, "banneronly.mtx", banner, 1, "file ends before the size line");
    const std::string missing = dir.path("does_not_exist.mtx");
    check_read_error<std::runtime_error>(missing, {"cannot open " + missing});
    CHECK_THROWS_WITH_AS(spk::io::read_matrix_market_header(missing),
                         doctest::Contains(("cannot open " + missing).c_str()), std::runtime_error);
    const std::string directory = dir.path("");
    check_read_error<std::runtime_error>(directory, {directory});
  }
  SUBCASE("symmetry violations") {
    check_bad_file(dir, "skewdiag.mtx",
                   "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 1\n", 4,
                   "diagonal entry (2, 2) in a skew-symmetric file");
    check_bad_file(dir, "symupper.mtx",
                   "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 1\n2 1 1\n1 3 1\n",
                   5, "entry (1, 3) is above the diagonal but the entry on line 4 is below");
    check_bad_file(dir, "symlower.mtx",
                   "%%MatrixMarket matrix coordinate pattern hermitian\n3 3 2\n1 2\n3 2\n", 4,
                   "entry (3, 2) is below the diagonal but the entry on line 3 is above");
    check_bad_file<cdouble>(
        dir, "hermdiag.mtx",
        "%%MatrixMarket matrix coordinate complex hermitian\n2 2 1\n2 2 1 0.5\n", 3,
        "has imaginary part 0.5 in a hermitian file");
  }
  SUBCASE("header errors through read_matrix_market_header") {
    const std::string p = dir.write("h.mtx", "%%MatrixMarket matrix coordinate real general\n3\n");
    CHECK_THROWS_WITH_AS(spk::io::read_matrix_market_header(p),
                         doctest::Contains((p + ":2: size line has 1 value, expected 3").c_str()),
                         std::invalid_argument);
  }
  SUBCASE("index types too small") {
    const std::string wide = dir.write("wide.mtx", banner + "40000 3000000000 1\n1 2999999999 1\n");
    check_read_error<std::invalid_argument, double, int>(
        wide, {wide + ":2:", "too large for the ordinal type int32_t"});
    check_read_error<std::invalid_argument, double, std::int16_t>(
        wide, {wide + ":2:", "too large for the ordinal type int16_t"});
    const auto w = spk::io::read_matrix_market_coo<double, long long>(wide);
    CHECK(w.ncols() == 3000000000LL);
    CHECK(w.col_idx()(0) == 2999999998LL);

    std::string many = banner + "20 20 200\n";
    for (int k = 0; k < 200; ++k) many += std::to_string(k % 20 + 1) + " 1 1\n";
    const std::string pm = dir.write("many.mtx", many);
    check_read_error<std::invalid_argument, double, int, std::int8_t>(
        pm, {pm + ":2:", "200 entries, more than the offset type int8_t"});
    // 100 stored entries fit in int8_t, the 200 after expansion do not
    std::string sym = "%%MatrixMarket matrix coordinate pattern symmetric\n20 20 100\n";
    for (int k = 0; k < 100; ++k) sym += std::to_string(k % 19 + 2) + " 1\n";
    const std::string ps = dir.write("sym.mtx", sym);
    check_read_error<std::invalid_argument, double, int, std::int8_t>(
        ps, {ps + ":2:", "200 entries after symmetric expansion"});
    CHECK(spk::io::read_matrix_market_coo<double, int, std::int16_t>(ps).nnz() == 200);
  }
}
