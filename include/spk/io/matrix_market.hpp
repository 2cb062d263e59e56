// spk/io/matrix_market.hpp: reading and writing Matrix Market (.mtx) files.
//
// The parsing and formatting are plain host code compiled into libspk (src/matrix_market.cpp);
// this header only converts between that code's int64/double arrays and spk's containers.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <spk/coo_matrix.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/scalar.hpp>
#include <string>
#include <type_traits>
#include <vector>

namespace spk {
namespace io {

/// What the banner and size line of a Matrix Market file say.
struct MatrixMarketHeader {
  enum class Format { coordinate, array };
  enum class Field { real, integer, pattern, complex };
  enum class Symmetry { general, symmetric, skew_symmetric, hermitian };
  Format format = Format::coordinate;
  Field field = Field::real;
  Symmetry symmetry = Symmetry::general;
  std::int64_t nrows = 0;
  std::int64_t ncols = 0;
  /// Entries stored in the file (before symmetric expansion). For array files, the number of
  /// values listed: nrows * ncols, or the lower triangle for non-general symmetry.
  std::int64_t entries = 0;
};

/// The word the Matrix Market format uses: "coordinate", "array".
const char* to_string(MatrixMarketHeader::Format f);
/// "real", "integer", "pattern", "complex".
const char* to_string(MatrixMarketHeader::Field f);
/// "general", "symmetric", "skew-symmetric", "hermitian".
const char* to_string(MatrixMarketHeader::Symmetry s);

/// Reads the banner, comments and size line of a Matrix Market file (not the entries).
/// Throws std::runtime_error if the file cannot be opened or read and std::invalid_argument,
/// naming the file and line, if the header is malformed.
MatrixMarketHeader read_matrix_market_header(const std::string& path);

/// Options of write_matrix_market.
struct MatrixMarketWriteOptions {
  /// Write the field "pattern" (indices only) instead of real/complex values.
  bool pattern = false;
  /// Extra comment text written after spk's comment line; each line gets a leading '%'.
  std::string comment;
};

}  // namespace io

namespace impl {

/// What the destination types of a read can hold; the parser checks the file against it so that
/// errors can name the offending line.
struct MatrixMarketLimits {
  std::int64_t max_dimension = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_entries = std::numeric_limits<std::int64_t>::max();
  /// Finite values of this magnitude or more overflow the value type (+inf: none do).
  double overflow_threshold = std::numeric_limits<double>::infinity();
  bool complex_allowed = true;
  const char* value_type_name = "double";
  const char* ordinal_type_name = "int64_t";
  const char* offset_type_name = "int64_t";
};

/// The validated entries of a Matrix Market file as stored (one triangle for non-general
/// symmetry), with 0-based indices. `re` is empty for pattern files (every value is 1) and `im`
/// is empty unless the field is complex.
struct MatrixMarketEntries {
  io::MatrixMarketHeader header;
  std::vector<std::int64_t> rows;
  std::vector<std::int64_t> cols;
  std::vector<double> re;
  std::vector<double> im;
  /// Number of entries after symmetric expansion (stored entries plus mirrored off-diagonals).
  std::int64_t expanded_entries = 0;
};

/// Parses and validates a whole Matrix Market file in O(file size) time. `where` names the
/// public function in error messages.
MatrixMarketEntries read_matrix_market_entries(const std::string& path,
                                               const MatrixMarketLimits& limits, const char* where);

/// Buffered writer of a coordinate Matrix Market file: the constructor writes the header, one
/// entry() call per entry (0-based indices), finish() flushes and closes. Errors throw
/// std::runtime_error naming the path.
class MatrixMarketWriter {
 public:
  MatrixMarketWriter(const std::string& path, io::MatrixMarketHeader::Field field,
                     std::int64_t nrows, std::int64_t ncols, std::int64_t entries,
                     const std::string& comment);
  MatrixMarketWriter(const MatrixMarketWriter&) = delete;
  MatrixMarketWriter& operator=(const MatrixMarketWriter&) = delete;
  ~MatrixMarketWriter();

  void entry(std::int64_t i, std::int64_t j);
  void entry(std::int64_t i, std::int64_t j, float re);
  void entry(std::int64_t i, std::int64_t j, double re);
  void entry(std::int64_t i, std::int64_t j, float re, float im);
  void entry(std::int64_t i, std::int64_t j, double re, double im);
  void finish();

 private:
  char* reserve_line();
  void commit_line(char* end);
  void flush();

  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<char> buf_;
  std::size_t used_ = 0;
  std::int64_t remaining_ = 0;
};

/// The largest value of an integer type that also fits in int64_t.
template <class T>
constexpr std::int64_t int64_capped_max() {
  return std::uint64_t(std::numeric_limits<T>::max()) >
                 std::uint64_t(std::numeric_limits<std::int64_t>::max())
             ? std::numeric_limits<std::int64_t>::max()
             : std::int64_t(std::numeric_limits<T>::max());
}

/// The smallest magnitude that rounds to infinity in Real: its largest value plus half an ulp
/// (+inf for double, where every finite value fits).
template <class Real>
double overflow_threshold() {
  if (std::is_same<Real, double>::value) return std::numeric_limits<double>::infinity();
  const Real max = std::numeric_limits<Real>::max();
  return double(max) + 0.5 * (double(max) - double(std::nextafter(max, Real(0))));
}

/// True for the matrix types write_matrix_market accepts.
template <class M>
struct is_mm_writable : std::false_type {};
template <class S, class O, class F, class D>
struct is_mm_writable<CsrMatrix<S, O, F, D>> : std::true_type {};
template <class S, class O, class F, class D>
struct is_mm_writable<CooMatrix<S, O, F, D>> : std::true_type {};

/// Writes one value through the writer, choosing the overload from the value type.
template <class Scalar>
void write_mm_entry(MatrixMarketWriter& w, std::int64_t i, std::int64_t j, const Scalar& v,
                    bool pattern) {
  using traits = scalar_traits<Scalar>;
  using mag = typename traits::mag_type;
  if (pattern)
    w.entry(i, j);
  else if (traits::is_complex)
    w.entry(i, j, mag(traits::real(v)), mag(traits::imag(v)));
  else
    w.entry(i, j, mag(traits::real(v)));
}

template <class S, class O, class F, class D>
void write_mm_matrix(const std::string& path, const CsrMatrix<S, O, F, D>& a,
                     const io::MatrixMarketWriteOptions& opt, io::MatrixMarketHeader::Field field) {
  const auto h = to_host(a);
  const std::int64_t nnz = std::int64_t(h.nnz());
  for (O i = 0; i < h.nrows(); ++i) {
    const std::int64_t b = std::int64_t(h.row_map()(i)), e = std::int64_t(h.row_map()(i + 1));
    if (b < 0 || b > e || e > nnz)
      throw_invalid_argument("spk::io::write_matrix_market", "CSR row ", i, " has row_map [", b,
                             ", ", e, ") outside [0, nnz = ", nnz, "]");
  }
  const std::int64_t count = std::int64_t(h.row_map()(h.nrows())) - std::int64_t(h.row_map()(0));
  MatrixMarketWriter w(path, field, h.nrows(), h.ncols(), count, opt.comment);
  for (O i = 0; i < h.nrows(); ++i) {
    for (F k = h.row_map()(i); k < h.row_map()(i + 1); ++k) {
      const O j = h.col_idx()(k);
      if (j < 0 || j >= h.ncols())
        throw_invalid_argument("spk::io::write_matrix_market", "CSR entry ", k, " of row ", i,
                               " has column ", j, " outside [0, ", h.ncols(), ")");
      write_mm_entry(w, i, j, h.values()(k), opt.pattern);
    }
  }
  w.finish();
}

template <class S, class O, class F, class D>
void write_mm_matrix(const std::string& path, const CooMatrix<S, O, F, D>& a,
                     const io::MatrixMarketWriteOptions& opt, io::MatrixMarketHeader::Field field) {
  const auto h = to_host(a);
  for (std::int64_t k = 0; k < std::int64_t(h.nnz()); ++k) {
    const O i = h.row_idx()(k), j = h.col_idx()(k);
    if (i < 0 || i >= h.nrows() || j < 0 || j >= h.ncols())
      throw_invalid_argument("spk::io::write_matrix_market", "COO entry ", k, " is (", i, ", ", j,
                             "), outside a ", h.nrows(), " x ", h.ncols(), " matrix");
  }
  MatrixMarketWriter w(path, field, h.nrows(), h.ncols(), std::int64_t(h.nnz()), opt.comment);
  for (std::int64_t k = 0; k < std::int64_t(h.nnz()); ++k)
    write_mm_entry(w, h.row_idx()(k), h.col_idx()(k), h.values()(k), opt.pattern);
  w.finish();
}

}  // namespace impl

namespace io {

/// Reads a Matrix Market file into a host COO matrix with 0-based indices, in O(file size).
///
/// Supported: coordinate files of field real, integer, pattern (every value 1) or complex, and
/// array files (dense, column-major) of field real, integer or complex; each with symmetry
/// general, symmetric, skew-symmetric or hermitian. Non-general storage is expanded: each stored
/// off-diagonal a_ij is followed by its mirror a_ji = a_ij, -a_ij or conj(a_ij); the diagonal is
/// not doubled. Coordinate files of non-general symmetry must store one triangle: the lower (the
/// standard) or, as some tools write, the upper; a file mixing both is rejected. Entries keep the
/// file's order and duplicates are kept (a conversion to CSR sums them); array files keep every
/// listed value, zeros included.
///
/// Throws std::runtime_error when the file cannot be opened or read, std::invalid_argument
/// naming the file and line for malformed content, for a complex file read into a real Scalar,
/// for dimensions that do not fit Ordinal, an entry count that does not fit Offset, or values
/// beyond the range of Scalar.
template <class Scalar, class Ordinal = int, class Offset = int>
CooMatrix<Scalar, Ordinal, Offset, spk::impl::HostDevice> read_matrix_market_coo(
    const std::string& path) {
  static_assert(is_scalar<Scalar>::value,
                "spk::io::read_matrix_market_coo: Scalar must be float, double, "
                "Kokkos::complex<float> or Kokkos::complex<double>");
  using traits = scalar_traits<Scalar>;
  using Header = MatrixMarketHeader;
  impl::MatrixMarketLimits limits;
  limits.max_dimension = impl::int64_capped_max<Ordinal>();
  limits.max_entries = impl::int64_capped_max<Offset>();
  limits.overflow_threshold = impl::overflow_threshold<typename traits::mag_type>();
  limits.complex_allowed = traits::is_complex;
  limits.value_type_name = traits::name;
  limits.ordinal_type_name = impl::integer_type_name<Ordinal>();
  limits.offset_type_name = impl::integer_type_name<Offset>();
  const impl::MatrixMarketEntries in =
      impl::read_matrix_market_entries(path, limits, "spk::io::read_matrix_market");

  const Header::Symmetry sym = in.header.symmetry;
  const bool pattern = in.header.field == Header::Field::pattern;
  const bool complex = in.header.field == Header::Field::complex;
  CooMatrix<Scalar, Ordinal, Offset, spk::impl::HostDevice> a(
      Ordinal(in.header.nrows), Ordinal(in.header.ncols), Offset(in.expanded_entries));
  const auto& rows = a.row_idx();
  const auto& cols = a.col_idx();
  const auto& vals = a.values();
  std::size_t out = 0;
  for (std::size_t k = 0; k < in.rows.size(); ++k) {
    const Ordinal i = Ordinal(in.rows[k]), j = Ordinal(in.cols[k]);
    const Scalar v = pattern ? traits::one() : traits::make(in.re[k], complex ? in.im[k] : 0.0);
    rows(out) = i;
    cols(out) = j;
    vals(out) = v;
    ++out;
    if (sym != Header::Symmetry::general && i != j) {
      rows(out) = j;
      cols(out) = i;
      vals(out) = sym == Header::Symmetry::symmetric        ? v
                  : sym == Header::Symmetry::skew_symmetric ? -v
                                                            : traits::conj(v);
      ++out;
    }
  }
  return a;
}

/// Writes a CsrMatrix or CooMatrix on any device (copied to the host) as a coordinate general
/// Matrix Market file: field real or complex from the value type (or pattern, see the options),
/// 1-based indices, entries in stored order, values with max_digits10 significant digits so that
/// reading them back gives the same bits. O(nnz). Throws std::runtime_error naming the path if
/// the file cannot be written, std::invalid_argument if the matrix has out-of-range indices.
template <class Matrix>
void write_matrix_market(const std::string& path, const Matrix& a,
                         const MatrixMarketWriteOptions& opt = {}) {
  static_assert(impl::is_mm_writable<Matrix>::value,
                "spk::io::write_matrix_market: Matrix must be an spk::CsrMatrix or spk::CooMatrix");
  using traits = scalar_traits<typename Matrix::value_type>;
  const MatrixMarketHeader::Field field =
      opt.pattern ? MatrixMarketHeader::Field::pattern
                  : (traits::is_complex ? MatrixMarketHeader::Field::complex
                                        : MatrixMarketHeader::Field::real);
  impl::write_mm_matrix(path, a, opt, field);
}

}  // namespace io
}  // namespace spk
