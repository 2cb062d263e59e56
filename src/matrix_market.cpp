// src/matrix_market.cpp: the non-template Matrix Market parser and writer behind
// spk/io/matrix_market.hpp.
//
// The reader takes the file in large blocks, cuts lines with memchr and parses numbers with
// std::from_chars, so its cost is a few passes over the bytes; every entry is validated as it is
// parsed so that errors can name their line.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <spk/io/matrix_market.hpp>
#include <string_view>
#include <system_error>
#include <utility>

namespace spk {
namespace io {

const char* to_string(MatrixMarketHeader::Format f) {
  return f == MatrixMarketHeader::Format::coordinate ? "coordinate" : "array";
}

const char* to_string(MatrixMarketHeader::Field f) {
  switch (f) {
    case MatrixMarketHeader::Field::real:
      return "real";
    case MatrixMarketHeader::Field::integer:
      return "integer";
    case MatrixMarketHeader::Field::pattern:
      return "pattern";
    case MatrixMarketHeader::Field::complex:
      return "complex";
  }
  return "?";
}

const char* to_string(MatrixMarketHeader::Symmetry s) {
  switch (s) {
    case MatrixMarketHeader::Symmetry::general:
      return "general";
    case MatrixMarketHeader::Symmetry::symmetric:
      return "symmetric";
    case MatrixMarketHeader::Symmetry::skew_symmetric:
      return "skew-symmetric";
    case MatrixMarketHeader::Symmetry::hermitian:
      return "hermitian";
  }
  return "?";
}

}  // namespace io

namespace impl {
namespace {

using Header = io::MatrixMarketHeader;
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

/// Hands out the lines of a file, read in blocks of `block` bytes, without copying them.
class LineReader {
 public:
  LineReader(const std::string& path, const char* where, std::size_t block)
      : path_(path), where_(where), buf_(block) {
    file_ = std::fopen(path.c_str(), "rb");
    if (!file_) throw_runtime_error(where, "cannot open ", path, ": ", std::strerror(errno));
  }
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;
  ~LineReader() { std::fclose(file_); }

  /// Sets [b, e) to the next line without its '\n'; false at the end of the file.
  bool next(const char*& b, const char*& e) {
    for (;;) {
      const char* base = buf_.data();
      const void* nl = std::memchr(base + begin_, '\n', end_ - begin_);
      if (nl) {
        b = base + begin_;
        e = static_cast<const char*>(nl);
        begin_ = std::size_t(e - base) + 1;
        ++line_;
        return true;
      }
      if (eof_) {
        if (begin_ == end_) return false;
        b = base + begin_;
        e = base + end_;
        begin_ = end_;
        ++line_;
        return true;
      }
      refill();
    }
  }

  /// 1-based number of the line last returned (0 before the first).
  std::int64_t line() const { return line_; }

  /// Size of the file in bytes, or -1 when it cannot be determined (a pipe, for example).
  std::int64_t file_size() {
    const long pos = std::ftell(file_);
    if (pos < 0 || std::fseek(file_, 0, SEEK_END) != 0) return -1;
    const long size = std::ftell(file_);
    if (std::fseek(file_, pos, SEEK_SET) != 0)
      throw_runtime_error(where_, "cannot seek in ", path_, ": ", std::strerror(errno));
    return size;
  }

 private:
  void refill() {
    const std::size_t rest = end_ - begin_;
    if (begin_ > 0) std::memmove(buf_.data(), buf_.data() + begin_, rest);
    begin_ = 0;
    end_ = rest;
    // A line longer than the buffer: grow it so the whole line fits.
    if (end_ == buf_.size()) buf_.resize(2 * buf_.size());
    const std::size_t want = buf_.size() - end_;
    const std::size_t got = std::fread(buf_.data() + end_, 1, want, file_);
    end_ += got;
    if (got < want) {
      if (std::ferror(file_))
        throw_runtime_error(where_, "cannot read ", path_, ": ", std::strerror(errno));
      eof_ = true;
    }
  }

  std::string path_;
  const char* where_;
  std::FILE* file_ = nullptr;
  std::vector<char> buf_;
  std::size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  std::int64_t line_ = 0;
};

inline bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

inline const char* skip_blank(const char* p, const char* e) {
  while (p < e && is_blank(*p)) ++p;
  return p;
}

inline const char* token_end(const char* p, const char* e) {
  while (p < e && !is_blank(*p)) ++p;
  return p;
}

/// The token at p, quoted and shortened for an error message.
std::string quote_token(const char* p, const char* e) {
  const char* t = token_end(p, e);
  std::string s = "'";
  for (const char* q = p; q < t && q < p + 40; ++q)
    s += (static_cast<unsigned char>(*q) >= 32 && static_cast<unsigned char>(*q) < 127) ? *q : '?';
  if (t - p > 40) s += "...";
  return s + "'";
}

bool iequals(std::string_view a, const char* b) {
  const std::size_t n = std::strlen(b);
  if (a.size() != n) return false;
  for (std::size_t k = 0; k < n; ++k) {
    const char x = a[k] >= 'A' && a[k] <= 'Z' ? char(a[k] - 'A' + 'a') : a[k];
    if (x != b[k]) return false;
  }
  return true;
}

enum class NumStatus { ok, bad, range };

/// Parses an integer token starting at p (an optional '+' or '-', then digits). The token must
/// end at e or at a blank. Returns the end of what was parsed.
inline const char* parse_int(const char* p, const char* e, std::int64_t& v, NumStatus& st) {
  const char* q = (p < e && *p == '+' && p + 1 < e && p[1] != '-') ? p + 1 : p;
  const auto r = std::from_chars(q, e, v);
  if (r.ec == std::errc() && (r.ptr == e || is_blank(*r.ptr))) {
    st = NumStatus::ok;
    return r.ptr;
  }
  st = r.ec == std::errc::result_out_of_range ? NumStatus::range : NumStatus::bad;
  return p;
}

/// Parses a real token starting at p (decimal or exponent notation, inf, nan). A value whose
/// magnitude is below the smallest double becomes 0; one beyond the largest is out of range.
inline const char* parse_real(const char* p, const char* e, double& v, NumStatus& st) {
  const char* q = (p < e && *p == '+' && p + 1 < e && p[1] != '-') ? p + 1 : p;
  const auto r = std::from_chars(q, e, v, std::chars_format::general);
  if (r.ec == std::errc() && (r.ptr == e || is_blank(*r.ptr))) {
    st = NumStatus::ok;
    return r.ptr;
  }
  if (r.ec == std::errc::result_out_of_range && (r.ptr == e || is_blank(*r.ptr))) {
    // from_chars reports both overflow and underflow; the wider long double tells them apart.
    long double w = 0;
    const auto rw = std::from_chars(q, e, w, std::chars_format::general);
    if (rw.ec == std::errc() && rw.ptr == r.ptr && !std::isinf(double(w))) {
      v = double(w);
      st = NumStatus::ok;
      return r.ptr;
    }
    st = NumStatus::range;
    return p;
  }
  st = NumStatus::bad;
  return p;
}

/// State and error reporting of one read.
class Parser {
 public:
  Parser(const std::string& path, const char* where, const MatrixMarketLimits& limits,
         std::size_t block)
      : path_(path), where_(where), limits_(limits), reader_(path, where, block) {}

  /// The value of a banner word (case-insensitive) among `choices`; fails on line 1 naming the
  /// word, what it is and the expected words otherwise.
  template <class E, std::size_t N>
  E banner_word(std::string_view word, const char* what, const char* expected,
                const std::pair<const char*, E> (&choices)[N]) const {
    for (const auto& c : choices)
      if (iequals(word, c.first)) return c.second;
    fail(1, "unknown ", what, " '", word, "' (expected ", expected, ")");
  }

  template <class... Args>
  [[noreturn]] void fail(std::int64_t line, Args&&... what) const {
    throw_invalid_argument(where_, path_, ":", line, ": ", std::forward<Args>(what)...);
  }

  /// Reads the banner, comments and size line.
  Header read_header() {
    Header h;
    const char *b, *e;
    if (!reader_.next(b, e))
      fail(1,
           "empty file (expected the banner '%%MatrixMarket matrix <format> <field> "
           "<symmetry>')");
    std::vector<std::string_view> words;
    for (const char* p = skip_blank(b, e); p < e; p = skip_blank(p, e)) {
      const char* t = token_end(p, e);
      words.emplace_back(p, std::size_t(t - p));
      p = t;
    }
    if (words.empty() || !iequals(words[0], "%%matrixmarket"))
      fail(1, "missing banner: the first line must be '%%MatrixMarket matrix <format> <field> ",
           "<symmetry>', found ", words.empty() ? std::string("an empty line") : quote_token(b, e));
    if (words.size() < 5)
      fail(1, "incomplete banner: ", words.size(),
           " words, expected 5 ('%%MatrixMarket matrix <format> <field> <symmetry>')");
    if (words.size() > 5) fail(1, "unexpected '", words[5], "' after the symmetry in the banner");
    if (!iequals(words[1], "matrix"))
      fail(1, "unknown object '", words[1], "' (only 'matrix' is supported)");
    using Format = Header::Format;
    using Field = Header::Field;
    using Symmetry = Header::Symmetry;
    h.format = banner_word<Format>(words[2], "format", "coordinate or array",
                                   {{"coordinate", Format::coordinate}, {"array", Format::array}});
    h.field = banner_word<Field>(words[3], "field", "real, integer, pattern or complex",
                                 {{"real", Field::real},
                                  {"integer", Field::integer},
                                  {"pattern", Field::pattern},
                                  {"complex", Field::complex}});
    h.symmetry = banner_word<Symmetry>(words[4], "symmetry",
                                       "general, symmetric, skew-symmetric or hermitian",
                                       {{"general", Symmetry::general},
                                        {"symmetric", Symmetry::symmetric},
                                        {"skew-symmetric", Symmetry::skew_symmetric},
                                        {"hermitian", Symmetry::hermitian}});
    if (h.format == Header::Format::array && h.field == Header::Field::pattern)
      fail(1, "field 'pattern' is not allowed in array format (an array file lists values)");
    if (h.field == Header::Field::complex && !limits_.complex_allowed)
      fail(1, "complex file cannot be read into the real value type ", limits_.value_type_name,
           "; read it as Kokkos::complex<", limits_.value_type_name, ">");

    const char* p = nullptr;
    for (;;) {
      if (!reader_.next(b, e))
        fail(std::max<std::int64_t>(reader_.line(), 1), "file ends before the size line");
      p = skip_blank(b, e);
      if (p < e && *p != '%') break;
    }
    size_line_ = reader_.line();
    const bool coo = h.format == Header::Format::coordinate;
    const int expected = coo ? 3 : 2;
    const char* what[3] = {"rows", "columns", "entries"};
    std::int64_t size[3] = {0, 0, 0};
    int n = 0;
    for (; p < e; p = skip_blank(p, e), ++n) {
      if (n == expected)
        fail(size_line_, "size line has more than ", expected, " values (",
             coo ? "rows columns entries" : "rows columns", " for a ", io::to_string(h.format),
             " file)");
      NumStatus st;
      const char* t = parse_int(p, e, size[n], st);
      if (st != NumStatus::ok)
        fail(size_line_, "size line: number of ", what[n], " ", quote_token(p, e),
             " is not an integer", st == NumStatus::range ? " in the range of int64" : "");
      if (size[n] < 0) fail(size_line_, "size line: negative number of ", what[n], " ", size[n]);
      p = t;
    }
    if (n != expected)
      fail(size_line_, "size line has ", n, " value", n == 1 ? "" : "s", ", expected ", expected,
           " (", coo ? "rows columns entries" : "rows columns", ") for a ", io::to_string(h.format),
           " file");
    h.nrows = size[0];
    h.ncols = size[1];
    if (h.symmetry != Header::Symmetry::general && h.nrows != h.ncols)
      fail(size_line_, "a ", io::to_string(h.symmetry),
           " matrix must be square, the size line says ", h.nrows, " x ", h.ncols);
    if (coo) {
      h.entries = size[2];
    } else {
      const std::int64_t m = h.nrows, c = h.ncols;
      // Beyond 3037000499 rows, n * (n + 1) / 2 no longer fits in int64.
      const bool overflow = h.symmetry == Header::Symmetry::general ? m != 0 && c > kInt64Max / m
                                                                    : m > std::int64_t(3037000499);
      if (overflow)
        fail(size_line_, "array of ", m, " x ", c, " values is too large to address with int64");
      if (h.symmetry == Header::Symmetry::general)
        h.entries = m * c;
      else if (h.symmetry == Header::Symmetry::skew_symmetric)
        h.entries = m % 2 == 0 ? (m / 2) * (m - 1) : m * ((m - 1) / 2);
      else
        h.entries = m % 2 == 0 ? (m / 2) * (m + 1) : m * ((m + 1) / 2);
    }
    if (h.nrows > limits_.max_dimension || h.ncols > limits_.max_dimension)
      fail(size_line_, "matrix is ", h.nrows, " x ", h.ncols, ", too large for the ordinal type ",
           limits_.ordinal_type_name, " (at most ", limits_.max_dimension,
           "); read it with a 64-bit Ordinal");
    if (h.entries > limits_.max_entries)
      fail(size_line_, "the file has ", h.entries, " entries, more than the offset type ",
           limits_.offset_type_name, " can count (at most ", limits_.max_entries,
           "); read it with a 64-bit Offset");
    return h;
  }

  /// Reads the entries after read_header().
  MatrixMarketEntries read_entries(const Header& h) {
    MatrixMarketEntries out;
    out.header = h;
    // Reserve from the header's count, but no more than the file can hold (a corrupt header
    // must not trigger a huge allocation): an entry line takes at least 2 bytes ("1\n").
    const std::int64_t size = reader_.file_size();
    const std::int64_t cap = size >= 0 ? size / 2 + 1 : std::int64_t(1) << 20;
    const std::size_t reserve = std::size_t(std::min(h.entries, cap));
    const bool complex = h.field == Header::Field::complex;
    out.rows.reserve(reserve);
    out.cols.reserve(reserve);
    if (h.field != Header::Field::pattern) out.re.reserve(reserve);
    if (complex) out.im.reserve(reserve);
    if (h.format == Header::Format::coordinate)
      read_coordinate(h, out);
    else
      read_array(h, out);
    if (out.expanded_entries > limits_.max_entries)
      fail(size_line_, "the matrix has ", out.expanded_entries,
           " entries after symmetric expansion, more than the offset type ",
           limits_.offset_type_name, " can count (at most ", limits_.max_entries,
           "); read it with a 64-bit Offset");
    return out;
  }

 private:
  /// Parses the value(s) of an entry at p into re (and im); returns the end of the last value.
  const char* parse_values(const Header& h, const char* p, const char* e, std::int64_t line,
                           double& re, double& im) {
    const char* names[2] = {"real part", "imaginary part"};
    const int count = h.field == Header::Field::complex ? 2 : 1;
    double* dst[2] = {&re, &im};
    for (int c = 0; c < count; ++c) {
      p = skip_blank(p, e);
      if (p == e)
        fail(line, "missing ", count == 2 ? names[c] : "value", " (a ", io::to_string(h.field),
             " entry is ", entry_layout(h), ")");
      NumStatus st;
      const char* t;
      if (h.field == Header::Field::integer) {
        std::int64_t x = 0;
        t = parse_int(p, e, x, st);
        if (st != NumStatus::ok)
          fail(line, "value ", quote_token(p, e), " is not an integer",
               st == NumStatus::range ? " in the range of int64" : "");
        *dst[c] = double(x);
      } else {
        t = parse_real(p, e, *dst[c], st);
        if (st == NumStatus::bad)
          fail(line, count == 2 ? names[c] : "value", " ", quote_token(p, e), " is not a number");
        if (st == NumStatus::range)
          fail(line, count == 2 ? names[c] : "value", " ", quote_token(p, e),
               " is beyond the range of double");
      }
      if (std::fabs(*dst[c]) >= limits_.overflow_threshold && std::isfinite(*dst[c]))
        fail(line, count == 2 ? names[c] : "value", " ", quote_token(p, e),
             " is beyond the range of the value type ", limits_.value_type_name);
      p = t;
    }
    return p;
  }

  static const char* entry_layout(const Header& h) {
    const bool coo = h.format == Header::Format::coordinate;
    switch (h.field) {
      case Header::Field::pattern:
        return "'row column'";
      case Header::Field::complex:
        return coo ? "'row column real imaginary'" : "'real imaginary'";
      default:
        return coo ? "'row column value'" : "'value'";
    }
  }

  /// Fails unless only blanks follow p on the line.
  void expect_end(const Header& h, const char* p, const char* e, std::int64_t line) {
    p = skip_blank(p, e);
    if (p != e)
      fail(line, "unexpected ", quote_token(p, e), " after the entry (a ", io::to_string(h.field),
           " ", io::to_string(h.format), " entry is ", entry_layout(h), ")");
  }

  std::int64_t parse_index(const char* what, const char*& p, const char* e, std::int64_t line,
                           std::int64_t max, const Header& h) {
    p = skip_blank(p, e);
    if (p == e) fail(line, "missing ", what, " index (an entry is ", entry_layout(h), ")");
    NumStatus st;
    std::int64_t v = 0;
    const char* t = parse_int(p, e, v, st);
    if (st != NumStatus::ok) fail(line, what, " index ", quote_token(p, e), " is not an integer");
    if (v < 1 || v > max) fail(line, what, " index ", v, " out of range [1, ", max, "]");
    p = t;
    return v - 1;
  }

  void read_coordinate(const Header& h, MatrixMarketEntries& out) {
    const bool pattern = h.field == Header::Field::pattern;
    const bool complex = h.field == Header::Field::complex;
    const bool general = h.symmetry == Header::Symmetry::general;
    const bool skew = h.symmetry == Header::Symmetry::skew_symmetric;
    const bool hermitian = h.symmetry == Header::Symmetry::hermitian;
    // Which triangle the off-diagonal entries are in: 0 none yet, 1 lower, 2 upper.
    int triangle = 0;
    std::int64_t triangle_line = 0, off_diagonal = 0, count = 0;
    const char *b, *e;
    while (reader_.next(b, e)) {
      const char* p = skip_blank(b, e);
      if (p == e || *p == '%') continue;
      const std::int64_t line = reader_.line();
      if (count == h.entries)
        fail(line, "more entries than the ", h.entries, " announced in the size line (line ",
             size_line_, ")");
      const std::int64_t i = parse_index("row", p, e, line, h.nrows, h);
      const std::int64_t j = parse_index("column", p, e, line, h.ncols, h);
      double re = 1.0, im = 0.0;
      if (!pattern) p = parse_values(h, p, e, line, re, im);
      expect_end(h, p, e, line);
      if (!general) {
        if (i == j) {
          if (skew)
            fail(line, "diagonal entry (", i + 1, ", ", j + 1,
                 ") in a skew-symmetric file (its diagonal is zero and must not be stored)");
          if (hermitian && im != 0.0)
            fail(line, "diagonal entry (", i + 1, ", ", j + 1, ") has imaginary part ", im,
                 " in a hermitian file (its diagonal is real)");
        } else {
          const int t = i > j ? 1 : 2;
          if (triangle == 0) {
            triangle = t;
            triangle_line = line;
          } else if (t != triangle) {
            fail(line, "entry (", i + 1, ", ", j + 1, ") is ", t == 1 ? "below" : "above",
                 " the diagonal but the entry on line ", triangle_line, " is ",
                 t == 1 ? "above" : "below", "; a ", io::to_string(h.symmetry),
                 " file stores one triangle only (the lower one by the standard)");
          }
          ++off_diagonal;
        }
      }
      out.rows.push_back(i);
      out.cols.push_back(j);
      if (!pattern) out.re.push_back(re);
      if (complex) out.im.push_back(im);
      ++count;
    }
    if (count < h.entries)
      fail(std::max<std::int64_t>(reader_.line(), 1), "file ends after ", count, " of the ",
           h.entries, " entries announced in the size line (line ", size_line_, ")");
    out.expanded_entries = count + off_diagonal;
  }

  void read_array(const Header& h, MatrixMarketEntries& out) {
    const bool complex = h.field == Header::Field::complex;
    const bool general = h.symmetry == Header::Symmetry::general;
    const bool skew = h.symmetry == Header::Symmetry::skew_symmetric;
    const bool hermitian = h.symmetry == Header::Symmetry::hermitian;
    // Column-major; non-general files list the lower triangle (strictly lower when skew).
    const std::int64_t first_row_offset = general ? -1 : (skew ? 1 : 0);
    std::int64_t i = 0, j = 0, count = 0, off_diagonal = 0;
    if (!general) i = first_row_offset;
    const char *b, *e;
    while (reader_.next(b, e)) {
      const char* p = skip_blank(b, e);
      if (p == e || *p == '%') continue;
      const std::int64_t line = reader_.line();
      if (count == h.entries)
        fail(line, "more values than the ", h.entries, " an array of this size and symmetry has",
             " (size line ", size_line_, ")");
      double re = 0.0, im = 0.0;
      p = parse_values(h, p, e, line, re, im);
      expect_end(h, p, e, line);
      if (hermitian && i == j && im != 0.0)
        fail(line, "diagonal entry (", i + 1, ", ", j + 1, ") has imaginary part ", im,
             " in a hermitian file (its diagonal is real)");
      out.rows.push_back(i);
      out.cols.push_back(j);
      out.re.push_back(re);
      if (complex) out.im.push_back(im);
      if (!general && i != j) ++off_diagonal;
      ++count;
      if (++i == h.nrows) {
        ++j;
        i = general ? 0 : j + first_row_offset;
      }
    }
    if (count < h.entries)
      fail(std::max<std::int64_t>(reader_.line(), 1), "file ends after ", count, " of the ",
           h.entries, " values of the array (size line ", size_line_, ")");
    out.expanded_entries = count + off_diagonal;
  }

  std::string path_;
  const char* where_;
  MatrixMarketLimits limits_;
  LineReader reader_;
  std::int64_t size_line_ = 0;
};

}  // namespace

MatrixMarketEntries read_matrix_market_entries(const std::string& path,
                                               const MatrixMarketLimits& limits,
                                               const char* where) {
  Parser parser(path, where, limits, std::size_t(8) << 20);
  const Header h = parser.read_header();
  return parser.read_entries(h);
}

// --- writer ----------------------------------------------------------------------------------

namespace {
constexpr const char* kWriteWhere = "spk::io::write_matrix_market";
// Longest entry line: two int64 indices and two 17-digit values in exponent notation.
constexpr std::size_t kMaxLine = 128;

inline char* put_index(char* p, std::int64_t v) { return std::to_chars(p, p + 24, v + 1).ptr; }
template <class T>
inline char* put_value(char* p, T v) {
  *p++ = ' ';
  return std::to_chars(p, p + 40, v, std::chars_format::general,
                       std::numeric_limits<T>::max_digits10)
      .ptr;
}
}  // namespace

MatrixMarketWriter::MatrixMarketWriter(const std::string& path, io::MatrixMarketHeader::Field field,
                                       std::int64_t nrows, std::int64_t ncols, std::int64_t entries,
                                       const std::string& comment)
    : path_(path), buf_(std::size_t(1) << 20), remaining_(entries) {
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_)
    throw_runtime_error(kWriteWhere, "cannot open ", path, " for writing: ", std::strerror(errno));
  std::string head = str_cat("%%MatrixMarket matrix coordinate ", io::to_string(field),
                             " general\n% written by spk (sparse portable kernels)\n");
  std::size_t pos = 0;
  while (pos < comment.size()) {
    const std::size_t nl = std::min(comment.find('\n', pos), comment.size());
    head += "% " + comment.substr(pos, nl - pos) + "\n";
    pos = nl + 1;
  }
  head += str_cat(nrows, " ", ncols, " ", entries, "\n");
  if (head.size() > buf_.size()) buf_.resize(head.size());
  std::memcpy(buf_.data(), head.data(), head.size());
  used_ = head.size();
}

MatrixMarketWriter::~MatrixMarketWriter() {
  // Not finished: an error interrupted the write, so no partial file is left behind.
  if (file_) {
    std::fclose(file_);
    std::remove(path_.c_str());
  }
}

char* MatrixMarketWriter::reserve_line() {
  if (remaining_ <= 0)
    throw_runtime_error(kWriteWhere, path_, ": more entries written than announced");
  if (buf_.size() - used_ < kMaxLine) flush();
  return buf_.data() + used_;
}

void MatrixMarketWriter::commit_line(char* end) {
  *end++ = '\n';
  used_ = std::size_t(end - buf_.data());
  --remaining_;
}

void MatrixMarketWriter::entry(std::int64_t i, std::int64_t j) {
  char* p = reserve_line();
  p = put_index(p, i);
  *p++ = ' ';
  commit_line(put_index(p, j));
}

void MatrixMarketWriter::entry(std::int64_t i, std::int64_t j, float re) {
  char* p = reserve_line();
  p = put_index(p, i);
  *p++ = ' ';
  commit_line(put_value(put_index(p, j), re));
}

void MatrixMarketWriter::entry(std::int64_t i, std::int64_t j, double re) {
  char* p = reserve_line();
  p = put_index(p, i);
  *p++ = ' ';
  commit_line(put_value(put_index(p, j), re));
}

void MatrixMarketWriter::entry(std::int64_t i, std::int64_t j, float re, float im) {
  char* p = reserve_line();
  p = put_index(p, i);
  *p++ = ' ';
  commit_line(put_value(put_value(put_index(p, j), re), im));
}

void MatrixMarketWriter::entry(std::int64_t i, std::int64_t j, double re, double im) {
  char* p = reserve_line();
  p = put_index(p, i);
  *p++ = ' ';
  commit_line(put_value(put_value(put_index(p, j), re), im));
}

void MatrixMarketWriter::flush() {
  if (used_ > 0 && std::fwrite(buf_.data(), 1, used_, file_) != used_)
    throw_runtime_error(kWriteWhere, "cannot write ", path_, ": ", std::strerror(errno));
  used_ = 0;
}

void MatrixMarketWriter::finish() {
  if (remaining_ != 0)
    throw_runtime_error(kWriteWhere, path_, ": ", remaining_,
                        " fewer entries written than announced");
  flush();
  std::FILE* f = file_;
  file_ = nullptr;
  if (std::fclose(f) != 0) {
    const int err = errno;
    std::remove(path_.c_str());
    throw_runtime_error(kWriteWhere, "cannot write ", path_, ": ", std::strerror(err));
  }
}

}  // namespace impl

namespace io {

MatrixMarketHeader read_matrix_market_header(const std::string& path) {
  impl::Parser parser(path, "spk::io::read_matrix_market_header", impl::MatrixMarketLimits{},
                      std::size_t(64) << 10);
  return parser.read_header();
}

}  // namespace io
}  // namespace spk
