// src/mesh_io.cpp: the mesh readers behind spk/io/mesh_io.hpp.
//
// Each reader loads the whole file into memory and walks it with a cursor that cuts tokens at
// blanks (memchr for line ends, std::from_chars for numbers) and counts lines, so every error can
// name its line; inside binary data (PLY, Gmsh) errors name the byte offset instead.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <spk/error.hpp>
#include <spk/io/mesh_io.hpp>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

namespace spk {
namespace impl {
namespace {

using i64 = std::int64_t;
constexpr i64 kMaxIndex = std::numeric_limits<int>::max();

/// The whole file as bytes; std::runtime_error when it cannot be opened or read.
std::string read_whole_file(const std::string& path, const char* where) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw_runtime_error(where, "cannot open ", path, ": ", std::strerror(errno));
  std::string data;
  if (std::fseek(f, 0, SEEK_END) == 0) {
    const long size = std::ftell(f);
    if (size > 0) data.reserve(std::size_t(size));
    std::rewind(f);
  }
  char buf[1 << 16];
  for (;;) {
    const std::size_t got = std::fread(buf, 1, sizeof buf, f);
    data.append(buf, got);
    if (got < sizeof buf) {
      if (std::ferror(f)) {
        const int err = errno;
        std::fclose(f);
        throw_runtime_error(where, "cannot read ", path, ": ", std::strerror(err));
      }
      break;
    }
  }
  std::fclose(f);
  return data;
}

inline bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k) {
    const char x = a[k] >= 'A' && a[k] <= 'Z' ? char(a[k] - 'A' + 'a') : a[k];
    const char y = b[k] >= 'A' && b[k] <= 'Z' ? char(b[k] - 'A' + 'a') : b[k];
    if (x != y) return false;
  }
  return true;
}

/// A token quoted and shortened for an error message.
std::string quote(std::string_view t) {
  std::string s = "'";
  for (std::size_t k = 0; k < t.size() && k < 40; ++k) {
    const auto u = static_cast<unsigned char>(t[k]);
    s += (u >= 32 && u < 127) ? t[k] : '?';
  }
  if (t.size() > 40) s += "...";
  return s + "'";
}

/// Walks the bytes of a file: tokens separated by blanks, lines, comments, numbers; builds the
/// error messages ("where: path:line: what", or "where: path (byte N): what" once binary data
/// has made line numbers meaningless).
class Cursor {
 public:
  Cursor(const std::string& data, const std::string& path, const char* where, char comment)
      : d_(data.data()), n_(data.size()), path_(path), where_(where), comment_(comment) {}

  bool at_end() const { return p_ >= n_; }
  std::size_t pos() const { return p_; }
  /// Moves to byte p (after binary data); line numbers are no longer tracked.
  void jump_to(std::size_t p) {
    p_ = std::min(p, n_);
    lines_valid_ = false;
  }
  const char* data() const { return d_; }
  std::size_t size() const { return n_; }
  i64 line() const { return line_; }

  /// The next token on the current line; false (consuming nothing) at the end of the line, at
  /// a comment or at the end of the file.
  bool token_on_line(std::string_view& t) {
    while (p_ < n_ && is_blank(d_[p_])) ++p_;
    if (p_ >= n_ || d_[p_] == '\n' || (comment_ && d_[p_] == comment_)) return false;
    const std::size_t b = p_;
    while (p_ < n_ && !is_blank(d_[p_]) && d_[p_] != '\n') ++p_;
    t = std::string_view(d_ + b, p_ - b);
    tok_line_ = line_;
    tok_pos_ = b;
    return true;
  }

  /// The next token anywhere (across lines and comments); false at the end of the file.
  bool token(std::string_view& t) {
    for (;;) {
      if (token_on_line(t)) return true;
      if (p_ >= n_) return false;
      skip_line();
    }
  }

  /// Skips the rest of the current line and its '\n'.
  void skip_line() {
    const void* nl = std::memchr(d_ + p_, '\n', n_ - p_);
    if (!nl) {
      p_ = n_;
      return;
    }
    p_ = std::size_t(static_cast<const char*>(nl) - d_) + 1;
    ++line_;
  }

  /// Skips to just after the next occurrence of `text` (counting lines); false if none.
  bool skip_past(std::string_view text) {
    const std::string_view all(d_, n_);
    const std::size_t at = all.find(text, p_);
    if (at == std::string_view::npos) return false;
    if (lines_valid_) line_ += std::count(d_ + p_, d_ + at, '\n');
    p_ = at + text.size();
    return true;
  }

  /// "path:line" of the last token, or "path (byte N)" inside or after binary data.
  std::string here() const { return location(tok_line_, tok_pos_); }
  std::string location(i64 line, std::size_t byte) const {
    return lines_valid_ ? str_cat(path_, ":", line) : str_cat(path_, " (byte ", byte, ")");
  }

  /// Throws std::invalid_argument at the last token.
  template <class... Args>
  [[noreturn]] void fail(Args&&... what) const {
    throw_invalid_argument(where_, here(), ": ", std::forward<Args>(what)...);
  }
  /// Throws std::invalid_argument at a given line.
  template <class... Args>
  [[noreturn]] void fail_line(i64 line, Args&&... what) const {
    throw_invalid_argument(where_, path_, ":", line, ": ", std::forward<Args>(what)...);
  }
  /// Throws std::invalid_argument at a given byte offset.
  template <class... Args>
  [[noreturn]] void fail_byte(std::size_t byte, Args&&... what) const {
    throw_invalid_argument(where_, path_, " (byte ", byte, "): ", std::forward<Args>(what)...);
  }
  /// Throws std::invalid_argument at the end of the file.
  template <class... Args>
  [[noreturn]] void fail_end(Args&&... what) const {
    // the last line of the file, not the empty one after its final '\n'
    const i64 last = line_ - (p_ >= n_ && n_ > 0 && d_[n_ - 1] == '\n' ? 1 : 0);
    if (lines_valid_)
      throw_invalid_argument(where_, path_, ":", std::max<i64>(last, 1), ": file ends ",
                             std::forward<Args>(what)...);
    throw_invalid_argument(where_, path_, " (byte ", n_, "): file ends ",
                           std::forward<Args>(what)...);
  }

  /// Parses a finite real token.
  double to_real(std::string_view t, const char* what) const {
    const char* b = t.data();
    const char* e = b + t.size();
    if (b < e && *b == '+') ++b;
    double v = 0;
    const auto r = std::from_chars(b, e, v, std::chars_format::general);
    if (r.ec != std::errc() || r.ptr != e || !std::isfinite(v))
      fail(what, " ", quote(t), " is not a finite real number");
    return v;
  }
  /// Parses an integer token.
  i64 to_int(std::string_view t, const char* what) const {
    const char* b = t.data();
    const char* e = b + t.size();
    if (b < e && *b == '+') ++b;
    i64 v = 0;
    const auto r = std::from_chars(b, e, v);
    if (r.ec != std::errc() || r.ptr != e) fail(what, " ", quote(t), " is not an integer");
    return v;
  }
  /// Parses a count token: an integer in [0, max].
  i64 to_count(std::string_view t, const char* what, i64 max = kMaxIndex) const {
    const i64 v = to_int(t, what);
    if (v < 0) fail("negative ", what, " ", v);
    if (v > max) fail(what, " ", v, " exceeds the supported maximum ", max);
    return v;
  }

  /// The next token anywhere, or a failure naming what was expected.
  std::string_view need_token(const char* what) {
    std::string_view t;
    if (!token(t)) fail_end("before ", what);
    return t;
  }
  /// The next token on the current line, or a failure naming what was expected.
  std::string_view need_token_on_line(const char* what) {
    std::string_view t;
    if (!token_on_line(t)) {
      if (at_end()) fail_end("before ", what);
      fail_line(line_, "line ends before ", what);
    }
    return t;
  }
  double real(const char* what) { return to_real(need_token(what), what); }
  double real_on_line(const char* what) { return to_real(need_token_on_line(what), what); }
  i64 integer(const char* what) { return to_int(need_token(what), what); }
  i64 integer_on_line(const char* what) { return to_int(need_token_on_line(what), what); }
  i64 count(const char* what, i64 max = kMaxIndex) { return to_count(need_token(what), what, max); }

  i64 token_line() const { return tok_line_; }

 private:
  const char* d_;
  std::size_t n_;
  std::size_t p_ = 0;
  i64 line_ = 1;
  i64 tok_line_ = 1;
  std::size_t tok_pos_ = 0;
  bool lines_valid_ = true;
  std::string path_;
  const char* where_;
  char comment_;
};

/// Element indices waiting for the final range check, with where each element came from.
template <int N>
struct PendingElements {
  std::vector<std::array<int, N>> elements;
  std::vector<i64> origin;  // line, or byte offset when binary
  std::vector<char> binary;

  void add(const std::array<int, N>& e, i64 where, bool is_binary) {
    elements.push_back(e);
    origin.push_back(where);
    binary.push_back(is_binary ? 1 : 0);
  }

  /// Checks every index against [0, nv); reports it as written in the file (index + base).
  void check(const Cursor& c, i64 nv, i64 base) const {
    for (std::size_t k = 0; k < elements.size(); ++k)
      for (int v : elements[k])
        if (v < 0 || i64(v) >= nv) {
          if (binary[k])
            c.fail_byte(std::size_t(origin[k]), "vertex index ", i64(v) + base, " out of range [",
                        base, ", ", nv - 1 + base, "]");
          c.fail_line(origin[k], "vertex index ", i64(v) + base, " out of range [", base, ", ",
                      nv - 1 + base, "]");
        }
  }
};

/// Index from a file value with base `base`, checked against int.
int to_index(const Cursor& c, i64 k, i64 base) {
  const i64 v = k - base;
  if (v < 0 || v > kMaxIndex)
    c.fail("vertex index ", k, " out of range (indices start at ", base, ")");
  return int(v);
}

/// Appends the fan triangulation of a polygon (p0 p1 p2, p0 p2 p3, ...).
void fan(const std::vector<int>& poly, i64 origin, bool is_binary, PendingElements<3>& out) {
  for (std::size_t k = 1; k + 1 < poly.size(); ++k)
    out.add({poly[0], poly[k], poly[k + 1]}, origin, is_binary);
}

// --- OBJ -------------------------------------------------------------------------------------

TriangleMesh obj(const std::string& path) {
  const char* where = "spk::io::read_obj";
  const std::string data = read_whole_file(path, where);
  Cursor c(data, path, where, '#');
  TriangleMesh m;
  PendingElements<3> tris;
  std::vector<int> poly;
  std::string_view t;
  while (!c.at_end()) {
    if (c.token_on_line(t)) {
      if (t == "v") {
        std::array<double, 3> p;
        for (int k = 0; k < 3; ++k) p[k] = c.real_on_line("vertex coordinate");
        m.vertices.push_back(p);
        if (i64(m.vertices.size()) > kMaxIndex) c.fail("more than ", kMaxIndex, " vertices");
      } else if (t == "f") {
        poly.clear();
        const i64 line = c.token_line();
        const i64 nv = i64(m.vertices.size());
        while (c.token_on_line(t)) {
          const std::string_view idx = t.substr(0, t.find('/'));
          const i64 k = c.to_int(idx, "vertex index");
          if (k == 0) c.fail("vertex index 0 (OBJ indices start at 1)");
          if (k < 0 && nv + k < 0)
            c.fail("relative vertex index ", k, " goes before the first vertex (", nv,
                   " vertices so far)");
          if (k > kMaxIndex) c.fail("vertex index ", k, " out of range");
          poly.push_back(int(k > 0 ? k - 1 : nv + k));
        }
        if (poly.size() < 3) c.fail_line(line, "face with ", poly.size(), " vertices (at least 3)");
        fan(poly, line, false, tris);
      }
    }
    c.skip_line();
  }
  tris.check(c, i64(m.vertices.size()), 1);
  m.triangles = std::move(tris.elements);
  return m;
}

// --- OFF -------------------------------------------------------------------------------------

TriangleMesh off(const std::string& path) {
  const char* where = "spk::io::read_off";
  const std::string data = read_whole_file(path, where);
  Cursor c(data, path, where, '#');
  const std::string_view magic = c.need_token("the OFF header");
  const bool is_off = magic.size() >= 3 && magic.substr(magic.size() - 3) == "OFF" &&
                      magic.find_first_not_of("STCN") == magic.size() - 3;
  if (!is_off) {
    if (magic.size() >= 3 && magic.substr(magic.size() - 3) == "OFF")
      c.fail("unsupported OFF variant ", quote(magic), " (only 3D: OFF, COFF, NOFF, STOFF ...)");
    c.fail("not an OFF file: first word ", quote(magic), ", expected 'OFF'");
  }
  const i64 nv = c.count("number of vertices");
  const i64 nf = c.count("number of faces");
  std::string_view t;
  if (c.token_on_line(t)) c.to_int(t, "number of edges");
  c.skip_line();
  TriangleMesh m;
  m.vertices.resize(std::size_t(nv));
  for (i64 i = 0; i < nv; ++i) {
    if (!c.token(t)) c.fail_end("after ", i, " of ", nv, " vertices");
    auto& p = m.vertices[std::size_t(i)];
    p[0] = c.to_real(t, "vertex coordinate");
    p[1] = c.real_on_line("vertex coordinate");
    p[2] = c.real_on_line("vertex coordinate");
    c.skip_line();
  }
  PendingElements<3> tris;
  tris.elements.reserve(std::size_t(nf));
  std::vector<int> poly;
  for (i64 f = 0; f < nf; ++f) {
    if (!c.token(t)) c.fail_end("after ", f, " of ", nf, " faces");
    const i64 n = c.to_int(t, "face size");
    if (n < 3) c.fail("face ", f, " has ", n, " vertices (at least 3)");
    poly.clear();
    for (i64 k = 0; k < n; ++k) {
      const i64 v = c.integer_on_line("vertex index");
      if (v < 0 || v >= nv)
        c.fail("vertex index ", v, " of face ", f, " out of range [0, ", nv - 1, "]");
      poly.push_back(int(v));
    }
    fan(poly, c.token_line(), false, tris);
    c.skip_line();
  }
  m.triangles = std::move(tris.elements);
  return m;
}

// --- PLY -------------------------------------------------------------------------------------

enum class PlyType { int8, uint8, int16, uint16, int32, uint32, float32, float64 };

struct PlyProperty {
  bool list = false;
  PlyType count_type = PlyType::uint8;
  PlyType type = PlyType::float32;
  std::string name;
};

struct PlyElement {
  std::string name;
  i64 count = 0;
  i64 line = 0;
  std::vector<PlyProperty> props;
};

bool ply_type(std::string_view s, PlyType& t) {
  static const std::pair<const char*, PlyType> names[] = {
      {"char", PlyType::int8},      {"int8", PlyType::int8},       {"uchar", PlyType::uint8},
      {"uint8", PlyType::uint8},    {"short", PlyType::int16},     {"int16", PlyType::int16},
      {"ushort", PlyType::uint16},  {"uint16", PlyType::uint16},   {"int", PlyType::int32},
      {"int32", PlyType::int32},    {"uint", PlyType::uint32},     {"uint32", PlyType::uint32},
      {"float", PlyType::float32},  {"float32", PlyType::float32}, {"double", PlyType::float64},
      {"float64", PlyType::float64}};
  for (const auto& n : names)
    if (s == n.first) {
      t = n.second;
      return true;
    }
  return false;
}

std::size_t ply_size(PlyType t) {
  switch (t) {
    case PlyType::int8:
    case PlyType::uint8:
      return 1;
    case PlyType::int16:
    case PlyType::uint16:
      return 2;
    case PlyType::int32:
    case PlyType::uint32:
    case PlyType::float32:
      return 4;
    case PlyType::float64:
      return 8;
  }
  return 1;
}

/// Reads the values of a PLY body, ascii or binary, as doubles (exact for every PLY type).
class PlyBody {
 public:
  PlyBody(Cursor& c, bool ascii, bool swap) : c_(c), ascii_(ascii), swap_(swap), pos_(c.pos()) {}

  /// One value of type t of item `item` of element e.
  double value(PlyType t, const PlyElement& e, i64 item) {
    if (ascii_) {
      std::string_view tok;
      if (!c_.token(tok)) c_.fail_end("in element '", e.name, "' ", item, " of ", e.count);
      return c_.to_real(tok, "value");
    }
    const std::size_t size = ply_size(t);
    if (pos_ + size > c_.size())
      c_.fail_byte(c_.size(), "file ends in element '", e.name, "' ", item, " of ", e.count);
    unsigned char b[8];
    std::memcpy(b, c_.data() + pos_, size);
    pos_ += size;
    if (swap_) std::reverse(b, b + size);
    switch (t) {
      case PlyType::int8:
        return double(static_cast<signed char>(b[0]));
      case PlyType::uint8:
        return double(b[0]);
      case PlyType::int16: {
        std::int16_t v;
        std::memcpy(&v, b, 2);
        return double(v);
      }
      case PlyType::uint16: {
        std::uint16_t v;
        std::memcpy(&v, b, 2);
        return double(v);
      }
      case PlyType::int32: {
        std::int32_t v;
        std::memcpy(&v, b, 4);
        return double(v);
      }
      case PlyType::uint32: {
        std::uint32_t v;
        std::memcpy(&v, b, 4);
        return double(v);
      }
      case PlyType::float32: {
        float v;
        std::memcpy(&v, b, 4);
        return double(v);
      }
      case PlyType::float64: {
        double v;
        std::memcpy(&v, b, 8);
        return v;
      }
    }
    return 0;
  }

  /// An integral value (a list count or an index), failing on fractions.
  i64 integer(PlyType t, const PlyElement& e, i64 item, const char* what) {
    const std::size_t at = pos_;
    const double v = value(t, e, item);
    if (v != std::floor(v) || std::abs(v) > 9.0e15) fail(at, what, " ", v, " is not an integer");
    return i64(v);
  }

  /// Where the current item started: its line (ascii) or byte offset (binary).
  i64 origin() const { return ascii_ ? c_.token_line() : i64(pos_); }
  bool binary() const { return !ascii_; }
  std::size_t pos() const { return pos_; }

  template <class... Args>
  [[noreturn]] void fail(std::size_t at, Args&&... what) const {
    if (ascii_) c_.fail(std::forward<Args>(what)...);
    c_.fail_byte(at, std::forward<Args>(what)...);
  }

 private:
  Cursor& c_;
  bool ascii_;
  bool swap_;
  std::size_t pos_;
};

TriangleMesh ply(const std::string& path) {
  const char* where = "spk::io::read_ply";
  const std::string data = read_whole_file(path, where);
  Cursor c(data, path, where, '\0');
  std::string_view t;
  if (!c.token_on_line(t) || t != "ply") c.fail_line(1, "not a PLY file: first line must be 'ply'");
  c.skip_line();
  bool ascii = true, swap = false, have_format = false;
  std::vector<PlyElement> elements;
  for (;;) {
    if (c.at_end()) c.fail_end("before 'end_header'");
    if (!c.token_on_line(t)) {
      c.skip_line();
      continue;
    }
    if (t == "end_header") {
      c.skip_line();
      break;
    }
    if (t == "comment" || t == "obj_info") {
      c.skip_line();
      continue;
    }
    if (t == "format") {
      const std::string_view f = c.need_token_on_line("the format");
      if (f == "ascii") {
        ascii = true;
      } else if (f == "binary_little_endian" || f == "binary_big_endian") {
        ascii = false;
        const std::uint16_t probe = 1;
        unsigned char first;
        std::memcpy(&first, &probe, 1);
        const bool host_little = first == 1;
        swap = (f == "binary_little_endian") != host_little;
      } else {
        c.fail("unsupported format ", quote(f),
               " (ascii, binary_little_endian or binary_big_endian)");
      }
      have_format = true;
    } else if (t == "element") {
      PlyElement e;
      e.name = std::string(c.need_token_on_line("the element name"));
      e.line = c.token_line();
      e.count = c.to_count(c.need_token_on_line("the element count"), "element count");
      elements.push_back(e);
    } else if (t == "property") {
      if (elements.empty()) c.fail("property before any element");
      PlyProperty p;
      std::string_view ty = c.need_token_on_line("the property type");
      if (ty == "list") {
        p.list = true;
        const std::string_view ct = c.need_token_on_line("the list count type");
        if (!ply_type(ct, p.count_type)) c.fail("unknown property type ", quote(ct));
        ty = c.need_token_on_line("the list value type");
      }
      if (!ply_type(ty, p.type)) c.fail("unknown property type ", quote(ty));
      p.name = std::string(c.need_token_on_line("the property name"));
      elements.back().props.push_back(p);
    } else {
      c.fail("unknown header keyword ", quote(t));
    }
    c.skip_line();
  }
  if (!have_format) c.fail_line(c.line(), "header has no 'format' line");

  TriangleMesh m;
  PendingElements<3> tris;
  bool have_vertices = false;
  PlyBody body(c, ascii, swap);
  std::vector<int> poly;
  for (const auto& e : elements) {
    const bool is_vertex = e.name == "vertex";
    const bool is_face = e.name == "face";
    const bool is_strip = e.name == "tristrips";
    int xyz[3] = {-1, -1, -1};
    int list_prop = -1;
    for (std::size_t k = 0; k < e.props.size(); ++k) {
      const auto& p = e.props[k];
      if (is_vertex && !p.list) {
        for (int d = 0; d < 3; ++d)
          if (p.name == std::string(1, char('x' + d))) xyz[d] = int(k);
      }
      if ((is_face || is_strip) && p.list &&
          (p.name == "vertex_indices" || (is_face && p.name == "vertex_index")))
        list_prop = int(k);
    }
    if (is_vertex) {
      for (int d = 0; d < 3; ++d)
        if (xyz[d] < 0)
          c.fail_line(e.line, "element 'vertex' has no scalar property '", char('x' + d), "'");
      if (have_vertices) c.fail_line(e.line, "second 'vertex' element");
      have_vertices = true;
      m.vertices.resize(std::size_t(e.count));
    }
    if ((is_face || is_strip) && list_prop < 0)
      c.fail_line(e.line, "element '", e.name, "' has no list property 'vertex_indices'");
    if ((is_face || is_strip) && (e.props[std::size_t(list_prop)].type == PlyType::float32 ||
                                  e.props[std::size_t(list_prop)].type == PlyType::float64))
      c.fail_line(e.line, "element '", e.name, "': unsupported index type float");
    for (i64 item = 0; item < e.count; ++item) {
      for (std::size_t k = 0; k < e.props.size(); ++k) {
        const auto& p = e.props[k];
        if (!p.list) {
          const double v = body.value(p.type, e, item);
          if (is_vertex)
            for (int d = 0; d < 3; ++d)
              if (xyz[d] == int(k)) m.vertices[std::size_t(item)][std::size_t(d)] = v;
          continue;
        }
        const std::size_t at = body.pos();
        const i64 n = body.integer(p.count_type, e, item, "list length");
        const i64 origin = body.origin();
        if (n < 0) body.fail(at, "negative list length ", n);
        if (int(k) != list_prop) {
          for (i64 j = 0; j < n; ++j) body.value(p.type, e, item);
          continue;
        }
        if (is_face && n < 3) body.fail(at, "face ", item, " has ", n, " vertices (at least 3)");
        poly.clear();
        for (i64 j = 0; j < n; ++j) {
          const std::size_t vat = body.pos();
          const i64 v = body.integer(p.type, e, item, "vertex index");
          if (is_strip && v == -1) {
            poly.push_back(-1);
            continue;
          }
          if (v < 0 || v > kMaxIndex)
            body.fail(vat, "vertex index ", v, " of ", e.name, " ", item, " out of range");
          poly.push_back(int(v));
        }
        if (is_face) {
          fan(poly, origin, body.binary(), tris);
          continue;
        }
        // A strip: triangle k of a run is (s_k, s_k+1, s_k+2), with its first two vertices
        // swapped for odd k so that all triangles share the strip's orientation.
        std::size_t run = 0;
        for (std::size_t j = 0; j < poly.size(); ++j) {
          if (poly[j] < 0) {
            run = 0;
            continue;
          }
          if (++run < 3) continue;
          const int a = poly[j - 2], b = poly[j - 1], d = poly[j];
          if (a == b || b == d || a == d) continue;
          if ((run - 3) % 2 == 0)
            tris.add({a, b, d}, origin, body.binary());
          else
            tris.add({b, a, d}, origin, body.binary());
        }
      }
    }
  }
  if (!have_vertices) c.fail_line(1, "no 'vertex' element");
  tris.check(c, i64(m.vertices.size()), 0);
  m.triangles = std::move(tris.elements);
  return m;
}

// --- Medit .mesh -----------------------------------------------------------------------------

/// Vertices and the elements with N vertices (3: Triangles, 4: Tetrahedra) of a Medit file.
template <int N>
std::pair<std::vector<std::array<double, 3>>, std::vector<std::array<int, N>>> medit(
    const std::string& path, const char* where) {
  const char* wanted = N == 3 ? "Triangles" : "Tetrahedra";
  const std::string data = read_whole_file(path, where);
  Cursor c(data, path, where, '#');
  // Sections spk skips, with the numbers per entry; those whose elements would belong to the
  // requested mesh but cannot be represented are refused when not empty.
  struct Skip {
    const char* name;
    int per_entry;
    bool refuse_triangles;
    bool refuse_tets;
  };
  static const Skip skips[] = {{"Edges", 3, false, false},
                               {"Corners", 1, false, false},
                               {"Ridges", 1, false, false},
                               {"RequiredVertices", 1, false, false},
                               {"RequiredEdges", 1, false, false},
                               {"RequiredTriangles", 1, false, false},
                               {"Normals", 3, false, false},
                               {"Tangents", 3, false, false},
                               {"NormalAtVertices", 2, false, false},
                               {"NormalAtTriangleVertices", 3, false, false},
                               {"TangentAtVertices", 2, false, false},
                               {"TangentAtEdgeVertices", 3, false, false},
                               {"Triangles", 4, false, false},
                               {"Tetrahedra", 5, false, false},
                               {"Quadrilaterals", 5, true, false},
                               {"Hexahedra", 9, false, true},
                               {"Prisms", 7, false, true},
                               {"Pentahedra", 7, false, true},
                               {"Pyramids", 6, false, true}};
  std::vector<std::array<double, 3>> vertices;
  PendingElements<N> elems;
  bool have_vertices = false, have_elements = false;
  std::string_view t;
  while (c.token(t)) {
    if (iequals(t, "End")) break;
    if (iequals(t, "MeshVersionFormatted")) {
      c.integer("the mesh version");
    } else if (iequals(t, "Dimension")) {
      const i64 dim = c.integer("the dimension");
      if (dim != 3) c.fail("unsupported dimension ", dim, " (only 3)");
    } else if (iequals(t, "Vertices")) {
      if (have_vertices) c.fail("second Vertices section");
      have_vertices = true;
      const i64 n = c.count("the number of vertices");
      vertices.resize(std::size_t(n));
      for (i64 i = 0; i < n; ++i) {
        std::string_view x;
        if (!c.token(x)) c.fail_end("after ", i, " of ", n, " vertices");
        auto& p = vertices[std::size_t(i)];
        p[0] = c.to_real(x, "vertex coordinate");
        p[1] = c.real("vertex coordinate");
        p[2] = c.real("vertex coordinate");
        c.integer("vertex reference");
      }
    } else if (iequals(t, wanted)) {
      if (have_elements) c.fail("second ", wanted, " section");
      have_elements = true;
      const i64 n = c.count("the number of elements");
      elems.elements.reserve(std::size_t(n));
      for (i64 i = 0; i < n; ++i) {
        std::string_view x;
        if (!c.token(x)) c.fail_end("after ", i, " of ", n, " ", wanted);
        std::array<int, N> el;
        el[0] = to_index(c, c.to_int(x, "vertex index"), 1);
        for (int k = 1; k < N; ++k) el[std::size_t(k)] = to_index(c, c.integer("vertex index"), 1);
        elems.add(el, c.token_line(), false);
        c.integer("element reference");
      }
    } else {
      const Skip* s = nullptr;
      for (const auto& k : skips)
        if (iequals(t, k.name)) s = &k;
      if (!s) c.fail("unsupported section ", quote(t));
      const std::string section(t);
      const i64 section_line = c.token_line();
      const i64 n = c.count("the number of entries", std::numeric_limits<i64>::max() / 16);
      if (n > 0 && (N == 3 ? s->refuse_triangles : s->refuse_tets))
        c.fail_line(section_line, "unsupported element: section ", section, " with ", n,
                    " entries");
      for (i64 i = 0; i < n * s->per_entry; ++i)
        if (!c.token(t)) c.fail_end("inside section ", section);
    }
  }
  if (!have_vertices) c.fail_end("without a Vertices section");
  if (!have_elements) c.fail_end("without a ", wanted, " section");
  elems.check(c, i64(vertices.size()), 1);
  return {std::move(vertices), std::move(elems.elements)};
}

// --- Gmsh .msh 2.x ---------------------------------------------------------------------------

/// Nodes and dimension of the Gmsh element types 1..31 (0 nodes: unknown type).
struct GmshType {
  int nodes;
  int dim;
};
GmshType gmsh_type(i64 type) {
  static const GmshType table[32] = {{0, 0},  {2, 1},  {3, 2},  {4, 2},  {4, 3},  {8, 3},  {6, 3},
                                     {5, 3},  {3, 1},  {6, 2},  {9, 2},  {10, 3}, {27, 3}, {18, 3},
                                     {14, 3}, {1, 0},  {8, 2},  {20, 3}, {15, 3}, {13, 3}, {9, 2},
                                     {10, 2}, {12, 2}, {15, 2}, {15, 2}, {21, 2}, {4, 1},  {5, 1},
                                     {6, 1},  {20, 3}, {35, 3}, {56, 3}};
  if (type < 1 || type > 31) return {0, 0};
  return table[type];
}

template <int N>
std::pair<std::vector<std::array<double, 3>>, std::vector<std::array<int, N>>> gmsh(
    const std::string& path, const char* where) {
  constexpr int wanted_type = N == 3 ? 2 : 4;
  constexpr int wanted_dim = N == 3 ? 2 : 3;
  const std::string data = read_whole_file(path, where);
  Cursor c(data, path, where, '\0');
  std::string_view t = c.need_token("$MeshFormat");
  if (t != "$MeshFormat") c.fail("not a Gmsh file: expected '$MeshFormat', found ", quote(t));
  t = c.need_token("the version");
  const double version = c.to_real(t, "version");
  if (!(version >= 2.0 && version < 3.0))
    c.fail("unsupported Gmsh version ", quote(t), " (only 2.x)");
  const i64 file_type = c.integer_on_line("the file type");
  if (file_type != 0 && file_type != 1) c.fail("unknown file type ", file_type, " (0 or 1)");
  const i64 data_size = c.integer_on_line("the data size");
  if (data_size != 8) c.fail("unsupported data size ", data_size, " (only 8)");
  c.skip_line();
  const bool binary = file_type == 1;
  bool swap = false;
  auto read_i32 = [&](std::size_t& p, const char* what) {
    if (p + 4 > c.size()) c.fail_byte(c.size(), "file ends in ", what);
    unsigned char b[4];
    std::memcpy(b, c.data() + p, 4);
    if (swap) std::reverse(b, b + 4);
    std::int32_t v;
    std::memcpy(&v, b, 4);
    p += 4;
    return i64(v);
  };
  if (binary) {
    std::size_t p = c.pos();
    const i64 one = read_i32(p, "the endianness check");
    if (one != 1) {
      swap = true;
      p -= 4;
      if (read_i32(p, "the endianness check") != 1)
        c.fail_byte(p - 4, "binary endianness check is not the integer 1");
    }
    c.jump_to(p);
  }
  t = c.need_token("$EndMeshFormat");
  if (t != "$EndMeshFormat") c.fail("expected '$EndMeshFormat', found ", quote(t));

  std::vector<std::array<double, 3>> vertices;
  std::vector<i64> tags;
  bool have_nodes = false, have_elements = false;
  PendingElements<N> elems;
  // node tag -> index (dense table when the tags allow, hash map otherwise)
  std::vector<int> tag_table;
  std::unordered_map<i64, int> tag_map;
  auto node_index = [&](i64 tag, std::size_t byte, i64 elem_tag) -> int {
    if (!tag_table.empty() || tag_map.empty()) {
      if (tag >= 0 && std::size_t(tag) < tag_table.size() && tag_table[std::size_t(tag)] >= 0)
        return tag_table[std::size_t(tag)];
    } else {
      const auto it = tag_map.find(tag);
      if (it != tag_map.end()) return it->second;
    }
    if (binary) c.fail_byte(byte, "element ", elem_tag, " refers to node ", tag, ", not in $Nodes");
    c.fail("element ", elem_tag, " refers to node ", tag, ", not in $Nodes");
  };
  auto add_element = [&](i64 type, const i64* nodes, i64 elem_tag, i64 origin, std::size_t byte) {
    const GmshType gt = gmsh_type(type);
    if (gt.nodes == 0) {
      if (binary) c.fail_byte(byte, "unsupported element type ", type, " (element ", elem_tag, ")");
      c.fail("unsupported element type ", type, " (element ", elem_tag, ")");
    }
    if (type == wanted_type) {
      std::array<int, N> el;
      for (int k = 0; k < N; ++k) el[std::size_t(k)] = node_index(nodes[k], byte, elem_tag);
      elems.add(el, origin, binary);
    } else if (gt.dim == wanted_dim) {
      if (binary)
        c.fail_byte(byte, "unsupported element type ", type, " (element ", elem_tag, ", only ",
                    wanted_type, " in dimension ", wanted_dim, ")");
      c.fail("unsupported element type ", type, " (element ", elem_tag, ", only ", wanted_type,
             " in dimension ", wanted_dim, ")");
    }
  };

  while (c.token(t)) {
    if (t == "$Nodes") {
      if (have_nodes) c.fail("second $Nodes section");
      have_nodes = true;
      const i64 n = c.count("the number of nodes");
      vertices.resize(std::size_t(n));
      tags.resize(std::size_t(n));
      if (binary) {
        c.skip_line();
        std::size_t p = c.pos();
        if (p + std::size_t(n) * 28 > c.size())
          c.fail_byte(c.size(), "file ends in $Nodes (", n, " nodes of 28 bytes from byte ", p,
                      ")");
        for (i64 i = 0; i < n; ++i) {
          tags[std::size_t(i)] = read_i32(p, "$Nodes");
          for (int d = 0; d < 3; ++d) {
            unsigned char b[8];
            std::memcpy(b, c.data() + p, 8);
            if (swap) std::reverse(b, b + 8);
            std::memcpy(&vertices[std::size_t(i)][std::size_t(d)], b, 8);
            p += 8;
          }
        }
        c.jump_to(p);
      } else {
        for (i64 i = 0; i < n; ++i) {
          std::string_view x;
          if (!c.token(x)) c.fail_end("after ", i, " of ", n, " nodes");
          if (x == "$EndNodes") c.fail("$Nodes ends after ", i, " of ", n, " nodes");
          tags[std::size_t(i)] = c.to_int(x, "node tag");
          for (int d = 0; d < 3; ++d)
            vertices[std::size_t(i)][std::size_t(d)] = c.real_on_line("node coordinate");
        }
      }
      t = c.need_token("$EndNodes");
      if (t != "$EndNodes") c.fail("expected '$EndNodes', found ", quote(t));
      i64 max_tag = 0;
      for (i64 g : tags) {
        if (g < 1) c.fail("node tag ", g, " is not positive");
        max_tag = std::max(max_tag, g);
      }
      const bool dense = max_tag <= 4 * n + 1024;
      if (dense) tag_table.assign(std::size_t(max_tag) + 1, -1);
      for (i64 i = 0; i < n; ++i) {
        const i64 g = tags[std::size_t(i)];
        const bool seen = dense ? tag_table[std::size_t(g)] >= 0 : tag_map.count(g) > 0;
        if (seen) c.fail("duplicate node tag ", g, " in $Nodes");
        if (dense)
          tag_table[std::size_t(g)] = int(i);
        else
          tag_map.emplace(g, int(i));
      }
    } else if (t == "$Elements") {
      if (!have_nodes) c.fail("$Elements before $Nodes");
      if (have_elements) c.fail("second $Elements section");
      have_elements = true;
      const i64 m = c.count("the number of elements", std::numeric_limits<i64>::max() / 2);
      i64 nodes[64];
      if (binary) {
        c.skip_line();
        std::size_t p = c.pos();
        i64 done = 0;
        while (done < m) {
          const std::size_t block = p;
          const i64 type = read_i32(p, "an element block header");
          const i64 count = read_i32(p, "an element block header");
          const i64 ntags = read_i32(p, "an element block header");
          const GmshType gt = gmsh_type(type);
          if (gt.nodes == 0)
            c.fail_byte(block, "unsupported element type ", type, " (block of ", count,
                        " elements)");
          if (count < 1 || count > m - done || ntags < 0 || ntags > 1000)
            c.fail_byte(block, "bad element block header (type ", type, ", ", count, " elements, ",
                        ntags, " tags) with ", m - done, " elements left");
          for (i64 e = 0; e < count; ++e) {
            const std::size_t at = p;
            const i64 elem_tag = read_i32(p, "$Elements");
            p += std::size_t(ntags) * 4;
            for (int k = 0; k < gt.nodes; ++k) nodes[k] = read_i32(p, "$Elements");
            add_element(type, nodes, elem_tag, i64(at), at);
          }
          done += count;
        }
        c.jump_to(p);
      } else {
        for (i64 e = 0; e < m; ++e) {
          std::string_view x;
          if (!c.token(x)) c.fail_end("after ", e, " of ", m, " elements");
          if (x == "$EndElements") c.fail("$Elements ends after ", e, " of ", m, " elements");
          const i64 elem_tag = c.to_int(x, "element tag");
          const i64 type = c.integer_on_line("the element type");
          const GmshType gt = gmsh_type(type);
          if (gt.nodes == 0) c.fail("unsupported element type ", type, " (element ", elem_tag, ")");
          const i64 ntags = c.integer_on_line("the number of tags");
          if (ntags < 0) c.fail("negative number of tags ", ntags);
          for (i64 k = 0; k < ntags; ++k) c.integer_on_line("a tag");
          for (int k = 0; k < gt.nodes; ++k) nodes[k] = c.integer_on_line("a node tag");
          add_element(type, nodes, elem_tag, c.token_line(), 0);
        }
      }
      t = c.need_token("$EndElements");
      if (t != "$EndElements") c.fail("expected '$EndElements', found ", quote(t));
    } else if (t.size() > 1 && t[0] == '$' && t.substr(0, 4) != "$End") {
      const std::string end = "$End" + std::string(t.substr(1));
      if (!c.skip_past(end)) c.fail_end("inside section ", quote(t), " (no ", end, ")");
    } else {
      c.fail("unexpected ", quote(t), " (expected a section such as $Nodes)");
    }
  }
  if (!have_nodes) c.fail_end("without a $Nodes section");
  if (!have_elements) c.fail_end("without an $Elements section");
  return {std::move(vertices), std::move(elems.elements)};
}

// --- TetGen ----------------------------------------------------------------------------------

bool ends_with_ci(const std::string& s, const char* suffix) {
  const std::size_t n = std::strlen(suffix);
  return s.size() >= n && iequals(std::string_view(s).substr(s.size() - n), suffix);
}

TetMesh tetgen(const std::string& path) {
  const char* where = "spk::io::read_tetgen";
  std::string base = path;
  if (ends_with_ci(path, ".ele"))
    base = path.substr(0, path.size() - 4);
  else if (ends_with_ci(path, ".node"))
    base = path.substr(0, path.size() - 5);
  const std::string node_path = base + ".node";
  const std::string ele_path = base + ".ele";
  TetMesh m;
  i64 first = 0;
  {
    const std::string data = read_whole_file(node_path, where);
    Cursor c(data, node_path, where, '#');
    const i64 n = c.count("the number of nodes");
    const i64 dim = c.integer_on_line("the dimension");
    if (dim != 3) c.fail("unsupported dimension ", dim, " (only 3)");
    c.skip_line();
    m.vertices.resize(std::size_t(n));
    for (i64 i = 0; i < n; ++i) {
      std::string_view t;
      if (!c.token(t)) c.fail_end("after ", i, " of ", n, " nodes");
      const i64 index = c.to_int(t, "node index");
      if (i == 0) {
        if (index != 0 && index != 1) c.fail("first node index ", index, " (expected 0 or 1)");
        first = index;
      } else if (index != first + i) {
        c.fail("node index ", index, " out of sequence (expected ", first + i, ")");
      }
      for (int d = 0; d < 3; ++d)
        m.vertices[std::size_t(i)][std::size_t(d)] = c.real_on_line("node coordinate");
      c.skip_line();
    }
  }
  const std::string data = read_whole_file(ele_path, where);
  Cursor c(data, ele_path, where, '#');
  const i64 n = c.count("the number of tetrahedra");
  const i64 per = c.integer_on_line("the nodes per tetrahedron");
  if (per != 4 && per != 10) c.fail("unsupported element with ", per, " nodes (4 or 10)");
  c.skip_line();
  const i64 nv = i64(m.vertices.size());
  m.tetrahedra.resize(std::size_t(n));
  for (i64 i = 0; i < n; ++i) {
    std::string_view t;
    if (!c.token(t)) c.fail_end("after ", i, " of ", n, " tetrahedra");
    c.to_int(t, "tetrahedron index");
    for (i64 k = 0; k < per; ++k) {
      const i64 v = c.integer_on_line("node index");
      if (v < first || v >= first + nv)
        c.fail("node index ", v, " of tetrahedron ", i, " out of range [", first, ", ",
               first + nv - 1, "]");
      if (k < 4) m.tetrahedra[std::size_t(i)][std::size_t(k)] = int(v - first);
    }
    c.skip_line();
  }
  return m;
}

std::string lower_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& ch : ext)
    if (ch >= 'A' && ch <= 'Z') ch = char(ch - 'A' + 'a');
  return ext;
}

}  // namespace
}  // namespace impl

namespace io {

TriangleMesh read_obj(const std::string& path) { return impl::obj(path); }
TriangleMesh read_off(const std::string& path) { return impl::off(path); }
TriangleMesh read_ply(const std::string& path) { return impl::ply(path); }

TriangleMesh read_medit_triangles(const std::string& path) {
  auto r = impl::medit<3>(path, "spk::io::read_medit_triangles");
  TriangleMesh m;
  m.vertices = std::move(r.first);
  m.triangles = std::move(r.second);
  return m;
}

TetMesh read_medit_tetrahedra(const std::string& path) {
  auto r = impl::medit<4>(path, "spk::io::read_medit_tetrahedra");
  TetMesh m;
  m.vertices = std::move(r.first);
  m.tetrahedra = std::move(r.second);
  return m;
}

TriangleMesh read_gmsh_triangles(const std::string& path) {
  auto r = impl::gmsh<3>(path, "spk::io::read_gmsh_triangles");
  TriangleMesh m;
  m.vertices = std::move(r.first);
  m.triangles = std::move(r.second);
  return m;
}

TetMesh read_gmsh_tetrahedra(const std::string& path) {
  auto r = impl::gmsh<4>(path, "spk::io::read_gmsh_tetrahedra");
  TetMesh m;
  m.vertices = std::move(r.first);
  m.tetrahedra = std::move(r.second);
  return m;
}

TetMesh read_tetgen(const std::string& path) { return impl::tetgen(path); }

}  // namespace io

TriangleMesh read_triangle_mesh(const std::string& path) {
  const std::string ext = impl::lower_extension(path);
  if (ext == ".obj") return io::read_obj(path);
  if (ext == ".off") return io::read_off(path);
  if (ext == ".ply") return io::read_ply(path);
  if (ext == ".mesh") return io::read_medit_triangles(path);
  if (ext == ".msh") return io::read_gmsh_triangles(path);
  if (ext == ".ele" || ext == ".node")
    throw_invalid_argument("spk::read_triangle_mesh", path,
                           ": TetGen files hold tetrahedra (use spk::read_tet_mesh)");
  throw_invalid_argument("spk::read_triangle_mesh", path, ": unsupported extension '", ext,
                         "' (.obj, .off, .ply, .mesh, .msh)");
}

TetMesh read_tet_mesh(const std::string& path) {
  const std::string ext = impl::lower_extension(path);
  if (ext == ".mesh") return io::read_medit_tetrahedra(path);
  if (ext == ".msh") return io::read_gmsh_tetrahedra(path);
  if (ext == ".ele" || ext == ".node") return io::read_tetgen(path);
  std::error_code ec;
  if (std::filesystem::exists(path + ".ele", ec)) return io::read_tetgen(path);
  throw_invalid_argument("spk::read_tet_mesh", path, ": unsupported extension '", ext,
                         "' (.mesh, .msh, .ele, .node, or a TetGen base name with a .ele file)");
}

}  // namespace spk
