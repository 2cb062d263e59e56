// spk/compound/tuning.hpp: the autotuner of compound matrices (Mueller-Roemer, Stork, Fellner
// 2020, section 4.3) and its persisted results.
//
// tune() times candidate (layout, schedule) pairs on a set of matrices and chooses the one with
// the smallest geometric mean of time ratios to the default CSR-AoS-AoS layout with the default
// schedule among those not slower than the default on any tuned matrix. The choice is kept per
// (device name, entry type, matrix class) in a JSON tuning file (TuningFile); make_tuned() builds
// a matrix in the stored layout with the stored schedule, so spmv uses the tuning without
// re-tuning. A matrix class is any string; matrix_class() derives one from row statistics.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <spk/compound/compound_matrix.hpp>
#include <spk/compound/compound_vector.hpp>
#include <spk/compound/entry.hpp>
#include <spk/compound/layout.hpp>
#include <spk/compound/schedule.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/formats/padding_limit.hpp>
#include <spk/impl/compound_spmv.hpp>
#include <spk/impl/device_info.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/mode.hpp>

namespace spk {

// --- tuning records and the tuning file ------------------------------------------------------

/// The tuned choice for one (gpu, entry, matrix_class): a layout and a schedule, with the time of
/// the choice and of the default (CSR-AoS-AoS, default schedule), each summed over the tuned
/// matrices of the class, in milliseconds.
struct TuningRecord {
  std::string gpu;           ///< impl::device_name<execution_space>() of the tuned device
  std::string entry;         ///< entry_traits<E>::name, e.g. "quaternion64"
  std::string matrix_class;  ///< matrix_class() or a user's name
  CompoundLayout layout;
  CompoundSchedule schedule;
  double time_ms = 0, default_ms = 0;
};

/// The format select_format() chose by trial for one (gpu, scalar, matrix fingerprint): the name
/// of the chosen configuration (one of select_format's candidates) with its measured time and
/// that of spk's default CSR, in milliseconds.
struct FormatRecord {
  std::string gpu;          ///< impl::device_name<execution_space>() of the device
  std::string scalar;       ///< scalar_traits<S>::name, e.g. "double"
  std::string fingerprint;  ///< MatrixFeatures::fingerprint_string()
  std::string config;       ///< FormatConfig::name() of the chosen candidate
  double time_ms = 0, csr_ms = 0;
};

namespace impl {

/// JSON string literal of s (quotes, backslashes and control characters escaped).
inline std::string tuning_json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

/// JSON number that reads back to the same double (finite values only).
inline std::string tuning_json_number(double v) {
  if (!std::isfinite(v)) v = 0;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// Reader of exactly the tuning file's JSON: objects, arrays, strings with escapes, numbers,
/// true/false/null (only to skip unknown keys). Errors name the file, the line and what was
/// expected.
class TuningJsonReader {
 public:
  TuningJsonReader(const std::string& text, const std::string& file) : s_(text), file_(file) {}

  int line() const { return line_; }

  [[noreturn]] void fail(const std::string& expected) const {
    std::string found = pos_ < s_.size() ? std::string("'") + s_[pos_] + "'" : "end of file";
    throw_runtime_error("spk::TuningFile::load", file_, ":", line_, ": expected ", expected,
                        ", found ", found);
  }
  [[noreturn]] void fail_at(int line, const std::string& what) const {
    throw_runtime_error("spk::TuningFile::load", file_, ":", line, ": ", what);
  }

  void skip_ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      if (s_[pos_] == '\n') ++line_;
      ++pos_;
    }
  }
  /// The next non-blank character (0 at the end).
  char peek() {
    skip_ws();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  /// Consumes c if it is next.
  bool eat(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c, const std::string& what) {
    if (!eat(c)) fail(what);
  }
  bool at_end() {
    skip_ws();
    return pos_ >= s_.size();
  }

  std::string string(const std::string& what) {
    if (peek() != '"') fail(what);
    ++pos_;
    std::string out;
    for (;;) {
      if (pos_ >= s_.size()) fail("'\"' closing a string");
      const char c = s_[pos_++];
      if (c == '"') return out;
      if (c == '\n') fail("'\"' before the end of the line");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) fail("an escape after '\\'");
      const char e = s_[pos_++];
      if (e == 'u') {
        append_utf8(out, code_point());
        continue;
      }
      static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
      const char* hit = std::strchr(from, e);
      if (e == '\0' || !hit) {
        --pos_;
        fail("an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
      }
      out += to[hit - from];
    }
  }

  double number(const std::string& what) {
    const char c = peek();
    if (!(c == '-' || (c >= '0' && c <= '9'))) fail(what);
    std::size_t end = pos_;
    while (end < s_.size() && std::string("+-0123456789.eE").find(s_[end]) != std::string::npos)
      ++end;
    const std::string text = s_.substr(pos_, end - pos_);
    char* stop = nullptr;
    const double v = std::strtod(text.c_str(), &stop);
    if (stop != text.c_str() + text.size()) fail(what);
    pos_ = end;
    return v;
  }

  /// Skips any JSON value (of an unknown key).
  void skip_value(int depth = 0) {
    if (depth > 64) fail("a value nested less than 64 deep");
    const char c = peek();
    if (c == '"') {
      string("a string");
    } else if (c == '{') {
      ++pos_;
      if (eat('}')) return;
      do {
        string("a key string");
        expect(':', "':' after a key");
        skip_value(depth + 1);
      } while (eat(','));
      expect('}', "',' or '}' in an object");
    } else if (c == '[') {
      ++pos_;
      if (eat(']')) return;
      do skip_value(depth + 1);
      while (eat(','));
      expect(']', "',' or ']' in an array");
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      number("a number");
    } else {
      for (const char* word : {"true", "false", "null"})
        if (s_.compare(pos_, std::string(word).size(), word) == 0) {
          pos_ += std::string(word).size();
          return;
        }
      fail("a value");
    }
  }

 private:
  unsigned code_point() {
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      if (pos_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[pos_])))
        fail("four hex digits after \\u");
      const char h = s_[pos_++];
      v = v * 16 + unsigned(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
    }
    if (v >= 0xD800 && v < 0xDC00 && s_.compare(pos_, 2, "\\u") == 0) {
      pos_ += 2;
      const unsigned low = code_point();
      if (low < 0xDC00 || low >= 0xE000) fail("a low surrogate after a high surrogate");
      v = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00);
    }
    return v;
  }
  static void append_utf8(std::string& out, unsigned v) {
    if (v < 0x80) {
      out += char(v);
    } else if (v < 0x800) {
      out += char(0xC0 | (v >> 6));
      out += char(0x80 | (v & 0x3F));
    } else if (v < 0x10000) {
      out += char(0xE0 | (v >> 12));
      out += char(0x80 | ((v >> 6) & 0x3F));
      out += char(0x80 | (v & 0x3F));
    } else {
      out += char(0xF0 | (v >> 18));
      out += char(0x80 | ((v >> 12) & 0x3F));
      out += char(0x80 | ((v >> 6) & 0x3F));
      out += char(0x80 | (v & 0x3F));
    }
  }

  const std::string& s_;
  std::string file_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace impl

/// The records of a tuning file, at most one per (gpu, entry, matrix_class). The file is JSON:
///   {"spk_tuning": 1, "records": [{"gpu": "...", "entry": "quaternion64", "class": "...",
///     "layout": "sell32-soa-aos", "schedule": "dynamic-t128-b8-r128", "time_ms": 1.5,
///     "default_ms": 2.0}, ...]}
/// Keys other than these are ignored when reading.
class TuningFile {
 public:
  /// Reads `path`. A missing file gives an empty TuningFile; a malformed one throws
  /// std::runtime_error naming the file, the line and what was expected there.
  static TuningFile load(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return TuningFile();
    std::ostringstream buf;
    buf << in.rdbuf();
    return parse(buf.str(), path);
  }

  /// Parses the text of a tuning file; `file` names it in error messages.
  static TuningFile parse(const std::string& text, const std::string& file) {
    TuningFile out;
    impl::TuningJsonReader r(text, file);
    r.expect('{', "'{' opening the tuning file");
    bool version = false, records = false;
    if (!r.eat('}')) {
      do {
        const int line = r.line();
        const std::string key = r.string("a key string");
        r.expect(':', "':' after \"" + key + "\"");
        if (key == "spk_tuning") {
          if (r.number("the format version 1") != 1.0)
            r.fail_at(line, "spk_tuning version is not 1");
          version = true;
        } else if (key == "records") {
          out.read_records(r);
          records = true;
        } else if (key == "formats") {
          out.read_formats(r);
        } else {
          r.skip_value();
        }
      } while (r.eat(','));
      r.expect('}', "',' or '}' after a top-level value");
    }
    if (!r.at_end()) r.fail("the end of the file after the top-level object");
    if (!version) r.fail_at(r.line(), "expected \"spk_tuning\": 1 in the top-level object");
    if (!records) r.fail_at(r.line(), "expected \"records\": [...] in the top-level object");
    return out;
  }

  /// Writes the file atomically: to `path`.tmp, then renamed over `path`. Throws
  /// std::runtime_error when either step fails.
  void save(const std::string& path) const {
    const std::string tmp = path + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) throw_runtime_error("spk::TuningFile::save", "cannot write '", tmp, "'");
      out << to_json();
      out.close();
      if (!out) {
        std::remove(tmp.c_str());
        throw_runtime_error("spk::TuningFile::save", "writing '", tmp, "' failed");
      }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      std::remove(tmp.c_str());
      throw_runtime_error("spk::TuningFile::save", "cannot rename '", tmp, "' to '", path, "'");
    }
  }

  /// The file's text (one record per line).
  std::string to_json() const {
    using impl::tuning_json_number;
    using impl::tuning_json_string;
    std::string out = "{\"spk_tuning\": 1, \"records\": [";
    for (std::size_t i = 0; i < records_.size(); ++i) {
      const TuningRecord& t = records_[i];
      out += (i ? ",\n  " : "\n  ");
      out += "{\"gpu\": " + tuning_json_string(t.gpu) +
             ", \"entry\": " + tuning_json_string(t.entry) +
             ", \"class\": " + tuning_json_string(t.matrix_class) +
             ", \"layout\": " + tuning_json_string(to_string(t.layout)) +
             ", \"schedule\": " + tuning_json_string(to_string(t.schedule)) +
             ", \"time_ms\": " + tuning_json_number(t.time_ms) +
             ", \"default_ms\": " + tuning_json_number(t.default_ms) + "}";
    }
    out += records_.empty() ? "]" : "\n]";
    if (!formats_.empty()) {
      out += ", \"formats\": [";
      for (std::size_t i = 0; i < formats_.size(); ++i) {
        const FormatRecord& t = formats_[i];
        out += (i ? ",\n  " : "\n  ");
        out += "{\"gpu\": " + tuning_json_string(t.gpu) +
               ", \"scalar\": " + tuning_json_string(t.scalar) +
               ", \"fingerprint\": " + tuning_json_string(t.fingerprint) +
               ", \"config\": " + tuning_json_string(t.config) +
               ", \"time_ms\": " + tuning_json_number(t.time_ms) +
               ", \"csr_ms\": " + tuning_json_number(t.csr_ms) + "}";
      }
      out += "\n]";
    }
    return out + "}\n";
  }

  /// The format record of (gpu, scalar, fingerprint), or nullptr (valid until the next change).
  const FormatRecord* find_format(const std::string& gpu, const std::string& scalar,
                                  const std::string& fingerprint) const {
    for (const auto& t : formats_)
      if (t.gpu == gpu && t.scalar == scalar && t.fingerprint == fingerprint) return &t;
    return nullptr;
  }

  /// Adds r, replacing the format record of the same (gpu, scalar, fingerprint) in place.
  void set_format(const FormatRecord& r) {
    for (auto& t : formats_)
      if (t.gpu == r.gpu && t.scalar == r.scalar && t.fingerprint == r.fingerprint) {
        t = r;
        return;
      }
    formats_.push_back(r);
  }

  const std::vector<FormatRecord>& format_records() const { return formats_; }

  /// The record of (gpu, entry, matrix_class), or nullptr. The pointer is valid until the next
  /// set() or merge().
  const TuningRecord* find(const std::string& gpu, const std::string& entry,
                           const std::string& matrix_class) const {
    for (const auto& t : records_)
      if (t.gpu == gpu && t.entry == entry && t.matrix_class == matrix_class) return &t;
    return nullptr;
  }

  /// Adds r, replacing the record of the same (gpu, entry, matrix_class) in place.
  void set(const TuningRecord& r) {
    for (auto& t : records_)
      if (t.gpu == r.gpu && t.entry == r.entry && t.matrix_class == r.matrix_class) {
        t = r;
        return;
      }
    records_.push_back(r);
  }

  /// set() for every record of other (other's records win).
  void merge(const TuningFile& other) {
    for (const auto& r : other.records_) set(r);
    for (const auto& r : other.formats_) set_format(r);
  }

  const std::vector<TuningRecord>& records() const { return records_; }

 private:
  void read_records(impl::TuningJsonReader& r) {
    r.expect('[', "'[' opening \"records\"");
    if (r.eat(']')) return;
    do read_record(r);
    while (r.eat(','));
    r.expect(']', "',' or ']' after a record");
  }

  void read_record(impl::TuningJsonReader& r) {
    const int start = r.line();
    r.expect('{', "'{' opening a record");
    TuningRecord t;
    bool gpu = false, entry = false, cls = false, layout = false, schedule = false;
    if (!r.eat('}')) {
      do {
        const std::string key = r.string("a key string in a record");
        r.expect(':', "':' after \"" + key + "\"");
        const int line = r.line();
        if (key == "gpu") {
          t.gpu = r.string("a string for \"gpu\"");
          gpu = true;
        } else if (key == "entry") {
          t.entry = r.string("a string for \"entry\"");
          entry = true;
        } else if (key == "class") {
          t.matrix_class = r.string("a string for \"class\"");
          cls = true;
        } else if (key == "layout") {
          const std::string text = r.string("a string for \"layout\"");
          try {
            t.layout = parse_layout(text);
          } catch (const std::invalid_argument& e) {
            r.fail_at(line, std::string("expected a layout (outer-inner-vector): ") + e.what());
          }
          layout = true;
        } else if (key == "schedule") {
          const std::string text = r.string("a string for \"schedule\"");
          try {
            t.schedule = parse_schedule(text);
          } catch (const std::invalid_argument& e) {
            r.fail_at(line, std::string("expected a schedule: ") + e.what());
          }
          schedule = true;
        } else if (key == "time_ms") {
          t.time_ms = r.number("a number for \"time_ms\"");
        } else if (key == "default_ms") {
          t.default_ms = r.number("a number for \"default_ms\"");
        } else {
          r.skip_value();
        }
      } while (r.eat(','));
      r.expect('}', "',' or '}' in a record");
    }
    const char* missing = !gpu        ? "gpu"
                          : !entry    ? "entry"
                          : !cls      ? "class"
                          : !layout   ? "layout"
                          : !schedule ? "schedule"
                                      : nullptr;
    if (missing)
      r.fail_at(start, std::string("expected \"") + missing + "\" in the record starting here");
    set(t);
  }

  void read_formats(impl::TuningJsonReader& r) {
    r.expect('[', "'[' opening \"formats\"");
    if (r.eat(']')) return;
    do read_format(r);
    while (r.eat(','));
    r.expect(']', "',' or ']' after a format record");
  }

  void read_format(impl::TuningJsonReader& r) {
    const int start = r.line();
    r.expect('{', "'{' opening a format record");
    FormatRecord t;
    bool gpu = false, scalar = false, fp = false, config = false;
    if (!r.eat('}')) {
      do {
        const std::string key = r.string("a key string in a format record");
        r.expect(':', "':' after \"" + key + "\"");
        if (key == "gpu") {
          t.gpu = r.string("a string for \"gpu\"");
          gpu = true;
        } else if (key == "scalar") {
          t.scalar = r.string("a string for \"scalar\"");
          scalar = true;
        } else if (key == "fingerprint") {
          t.fingerprint = r.string("a string for \"fingerprint\"");
          fp = true;
        } else if (key == "config") {
          t.config = r.string("a string for \"config\"");
          config = true;
        } else if (key == "time_ms") {
          t.time_ms = r.number("a number for \"time_ms\"");
        } else if (key == "csr_ms") {
          t.csr_ms = r.number("a number for \"csr_ms\"");
        } else {
          r.skip_value();
        }
      } while (r.eat(','));
      r.expect('}', "',' or '}' in a format record");
    }
    const char* missing = !gpu      ? "gpu"
                          : !scalar ? "scalar"
                          : !fp     ? "fingerprint"
                          : !config ? "config"
                                    : nullptr;
    if (missing)
      r.fail_at(start,
                std::string("expected \"") + missing + "\" in the format record starting here");
    set_format(t);
  }

  std::vector<TuningRecord> records_;
  std::vector<FormatRecord> formats_;
};

/// The tuning file spk uses unless told otherwise: $SPK_TUNING_FILE, else "spk-tuning.json"
/// (in the working directory).
inline std::string default_tuning_path() {
  const char* env = std::getenv("SPK_TUNING_FILE");
  return env && *env ? std::string(env) : std::string("spk-tuning.json");
}

// --- matrix classes --------------------------------------------------------------------------

/// The automatic class name of a matrix with `nrows` rows whose row lengths have mean `mean` and
/// coefficient of variation `cv` (standard deviation / mean, 0 for an empty matrix):
///   "r4^K"     4^K <= nrows < 4^(K+1) (K = 0 for nrows <= 3, including empty matrices);
///   "lenL"     L = the power of two with L <= mean < 2L ("len0" for a mean below 1);
///   "regular"  cv <= 0.5, else "irregular".
/// E.g. "r4^10-len8-regular": about 1-4 million rows of 8-15 entries of similar length.
inline std::string row_class(std::int64_t nrows, double mean, double cv) {
  int k = 0;
  while (nrows / 4 >= (std::int64_t(1) << (2 * k))) ++k;
  std::int64_t len = 0;
  if (mean >= 1) {
    len = 1;
    while (double(len) * 2 <= mean) len *= 2;
  }
  return "r4^" + std::to_string(k) + "-len" + std::to_string(len) +
         (cv <= 0.5 ? "-regular" : "-irregular");
}

/// The automatic class of a matrix (row_class() of its row count and row-length statistics).
/// Copies the row offsets to the host: O(nrows).
template <class E, class D>
std::string matrix_class(const CsrMatrix<E, int, int, D>& a) {
  const auto rows = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.row_map());
  const std::int64_t n = a.nrows();
  if (n == 0) return row_class(0, 0, 0);
  const double mean = double(rows(std::size_t(n)) - rows(0)) / double(n);
  double var = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double d = double(rows(std::size_t(i) + 1) - rows(std::size_t(i))) - mean;
    var += d * d;
  }
  const double cv = mean > 0 ? std::sqrt(var / double(n)) / mean : 0.0;
  return row_class(n, mean, cv);
}

// --- tuned matrices ----------------------------------------------------------------------------

/// The record f holds for a's device, entry type and class (matrix_class(a) when `cls` is
/// empty), or nullptr.
template <class E, class D>
const TuningRecord* tuned_record(const CsrMatrix<E, int, int, D>& a, const TuningFile& f,
                                 const std::string& cls = "") {
  using exec = typename CompoundMatrix<E, D>::execution_space;
  return f.find(impl::device_name<exec>(), entry_traits<E>::name,
                cls.empty() ? matrix_class(a) : cls);
}

/// a as a CompoundMatrix in the layout f records for its device, entry type and class
/// (tuned_record), with the recorded schedule set as the matrix's own (so plain spmv uses it).
/// Without a record, or when the recorded layout's padding exceeds `limit` for this matrix, the
/// default layout and schedule.
template <class E, class D>
CompoundMatrix<E, D> make_tuned(const CsrMatrix<E, int, int, D>& a, const TuningFile& f,
                                const std::string& matrix_class = "",
                                const PaddingLimit& limit = {}) {
  const TuningRecord* r = tuned_record(a, f, matrix_class);
  if (!r) return CompoundMatrix<E, D>(a);
  try {
    CompoundMatrix<E, D> m(a, r->layout, limit);
    m.set_schedule(r->schedule);
    return m;
  } catch (const PaddingLimitExceeded&) {
    return CompoundMatrix<E, D>(a);
  }
}

// --- the search --------------------------------------------------------------------------------

/// Options of tune().
struct TuneOptions {
  /// Layouts to try; empty = all_compound_layouts(). The default CSR-AoS-AoS is always tried.
  std::vector<CompoundLayout> layouts;
  /// How schedules are searched: `joint` every layout with every schedule; `separate` every
  /// layout with the default schedule, then every schedule for the best 3 layouts; `product` as
  /// separate with one n_t per value of n_t * n_b; `none` only the default schedule.
  enum class Schedules { joint, separate, product, none } schedules = Schedules::separate;
  int warmup = 3;   ///< untimed products per candidate and matrix
  int repeat = 20;  ///< timed products; the median counts
  /// Called after every timed (candidate, matrix) pair and at the start: pairs done, pairs in
  /// all (may grow once the separate search knows its second phase), what was timed.
  std::function<void(std::size_t done, std::size_t total, const std::string& what)> progress;
};

/// Every layout the tuner knows: outer csr, ell, sell16, sell32 x inner aos, soa, aosoa2/4/8/32
/// x vector aos, soa, aosoa2/4/8 (120), CSR-AoS-AoS first.
inline std::vector<CompoundLayout> all_compound_layouts() {
  std::vector<CompoundLayout> out;
  const std::pair<OuterLayout, int> outers[] = {{OuterLayout::csr, 32},
                                                {OuterLayout::ell, 32},
                                                {OuterLayout::sell, 16},
                                                {OuterLayout::sell, 32}};
  const std::pair<ComponentLayout, int> inners[] = {
      {ComponentLayout::aos, 4},   {ComponentLayout::soa, 4},   {ComponentLayout::aosoa, 2},
      {ComponentLayout::aosoa, 4}, {ComponentLayout::aosoa, 8}, {ComponentLayout::aosoa, 32}};
  const std::pair<ComponentLayout, int> vectors[] = {{ComponentLayout::aos, 4},
                                                     {ComponentLayout::soa, 4},
                                                     {ComponentLayout::aosoa, 2},
                                                     {ComponentLayout::aosoa, 4},
                                                     {ComponentLayout::aosoa, 8}};
  for (const auto& o : outers)
    for (const auto& i : inners)
      for (const auto& v : vectors) {
        CompoundLayout l;
        l.outer = o.first;
        l.slice = o.second;
        l.inner = i.first;
        l.inner_width = i.second;
        l.vector = v.first;
        l.vector_width = v.second;
        out.push_back(l);
      }
  return out;
}

/// Parses a comma-separated list of layouts ("csr-aos-aos,sell32-soa-aos") or "all"; throws
/// std::invalid_argument naming a bad entry.
inline std::vector<CompoundLayout> parse_layout_list(const std::string& text) {
  if (text == "all") return all_compound_layouts();
  std::vector<CompoundLayout> out;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t end = text.find(',', begin);
    const std::string item = text.substr(begin, end == std::string::npos ? end : end - begin);
    if (!item.empty()) out.push_back(parse_layout(item));
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  require(!out.empty(), "spk::parse_layout_list", "no layout in '", text, "'");
  return out;
}

/// The device limits that bound the schedule search.
struct ScheduleLimits {
  bool gpu = false;              ///< false: host space (n_t = 1, n_b in {1, 2, 4, 8})
  int max_threads_per_team = 1;  ///< of the compound kernel of the layout
  int max_threads_per_sm = 1;    ///< resident threads per multiprocessor (2048 on sm_90)
  int max_teams_per_sm = 1;      ///< resident teams (blocks) per multiprocessor (32 on sm_90)
};

/// The schedules of the search under `lim` (rows_per_chunk left 0 = the default): both kinds x
/// on a GPU n_t in {32 * 2^i, 96 * 2^i} <= max_threads_per_team and n_b in {2^i, 3 * 2^i} <=
/// max_teams_per_sm with n_t * n_b <= max_threads_per_sm (the paper's grid); on a host n_t = 1,
/// n_b in {1, 2, 4, 8}. With product_only one n_t per value of n_t * n_b: the one nearest 128
/// (the default) in ratio, the larger on a tie. Ordered by kind, n_t, n_b.
inline std::vector<CompoundSchedule> schedule_grid(const ScheduleLimits& lim, bool product_only) {
  std::vector<std::pair<int, int>> pairs;  // (n_t, n_b)
  if (!lim.gpu) {
    for (int b : {1, 2, 4, 8}) pairs.emplace_back(1, b);
  } else {
    std::vector<int> ts, bs;
    for (int base : {32, 96})
      for (int t = base; t <= lim.max_threads_per_team; t *= 2) ts.push_back(t);
    for (int base : {1, 3})
      for (int b = base; b <= lim.max_teams_per_sm; b *= 2) bs.push_back(b);
    std::sort(ts.begin(), ts.end());
    std::sort(bs.begin(), bs.end());
    for (int t : ts)
      for (int b : bs)
        if (std::int64_t(t) * b <= lim.max_threads_per_sm) pairs.emplace_back(t, b);
  }
  if (product_only) {
    const auto score = [](int t) { return std::abs(std::log2(double(t) / 128.0)); };
    std::map<std::int64_t, std::pair<int, int>> by_product;
    for (const auto& p : pairs) {
      const auto it = by_product.find(std::int64_t(p.first) * p.second);
      if (it == by_product.end()) {
        by_product.emplace(std::int64_t(p.first) * p.second, p);
      } else {
        const double sp = score(p.first), sq = score(it->second.first);
        if (sp < sq - 1e-12 || (std::abs(sp - sq) <= 1e-12 && p.first > it->second.first))
          it->second = p;
      }
    }
    pairs.clear();
    for (const auto& kv : by_product) pairs.push_back(kv.second);
    std::sort(pairs.begin(), pairs.end());
  }
  std::vector<CompoundSchedule> out;
  for (ScheduleKind kind : {ScheduleKind::static_chunks, ScheduleKind::dynamic_chunks})
    for (const auto& p : pairs) {
      CompoundSchedule s;
      s.kind = kind;
      s.threads_per_team = p.first;
      s.teams_per_sm = p.second;
      out.push_back(s);
    }
  return out;
}

namespace impl {

/// Resident threads and teams per multiprocessor of the current CUDA device (1 and 1 on hosts).
template <class ExecSpace>
std::pair<int, int> resident_limits() {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    int dev = 0, threads = 0, blocks = 0;
    require(cudaGetDevice(&dev) == cudaSuccess &&
                cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, dev) ==
                    cudaSuccess &&
                cudaDeviceGetAttribute(&blocks, cudaDevAttrMaxBlocksPerMultiprocessor, dev) ==
                    cudaSuccess,
            "spk::schedule_limits", "the CUDA device's resident-thread limits are unavailable");
    return {threads, blocks};
  }
#endif
  return {1, 1};
}

/// Largest team the compound kernel of (Inner, Vec) for E can launch with on Device.
template <class E, class Device, ComponentLayout Inner, ComponentLayout Vec>
int compound_team_size_max() {
  using exec = typename Device::execution_space;
  CompoundSpmvFunctor<E, Device, Inner, Vec> f;
  return Kokkos::TeamPolicy<exec>(1, 1).team_size_max(f, Kokkos::ParallelForTag());
}

template <class E, class Device, ComponentLayout Inner>
int compound_team_size_max(ComponentLayout vec) {
  using L = ComponentLayout;
  return vec == L::aos   ? compound_team_size_max<E, Device, Inner, L::aos>()
         : vec == L::soa ? compound_team_size_max<E, Device, Inner, L::soa>()
                         : compound_team_size_max<E, Device, Inner, L::aosoa>();
}

}  // namespace impl

/// The limits of the schedule search for the compound kernel of layout l and entry type E on
/// D's device: the kernel's largest team (as spmv checks it) and the device's resident threads
/// and teams per multiprocessor. Host spaces: ScheduleLimits{} (n_t = 1).
template <class E, class D>
ScheduleLimits schedule_limits(const CompoundLayout& l) {
  using device = typename CompoundMatrix<E, D>::device_type;
  using exec = typename device::execution_space;
  ScheduleLimits lim;
  if constexpr (impl::is_gpu_space<exec>()) {
    using L = ComponentLayout;
    lim.gpu = true;
    lim.max_threads_per_team =
        l.inner == L::aos   ? impl::compound_team_size_max<E, device, L::aos>(l.vector)
        : l.inner == L::soa ? impl::compound_team_size_max<E, device, L::soa>(l.vector)
                            : impl::compound_team_size_max<E, device, L::aosoa>(l.vector);
    const auto resident = impl::resident_limits<exec>();
    lim.max_threads_per_sm = resident.first;
    lim.max_teams_per_sm = resident.second;
  } else {
    static_cast<void>(l);
  }
  return lim;
}

/// The resolved schedules tune() tries for layout l (no duplicates): schedule_grid() of
/// schedule_limits(), the default schedule first; only the default with Schedules::none.
template <class E, class D>
std::vector<CompoundSchedule> schedule_candidates(const CompoundLayout& l,
                                                  TuneOptions::Schedules mode) {
  using exec = typename CompoundMatrix<E, D>::execution_space;
  std::vector<CompoundSchedule> out{resolve_schedule<exec>(CompoundSchedule{})};
  if (mode == TuneOptions::Schedules::none) return out;
  for (const auto& s :
       schedule_grid(schedule_limits<E, D>(l), mode == TuneOptions::Schedules::product)) {
    const CompoundSchedule r = resolve_schedule<exec>(s);
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  }
  return out;
}

/// The candidate with the smallest geometric mean of time ratios to the default among those not
/// slower than the default on any matrix (times[candidate][matrix], e.g. milliseconds; +inf or
/// NaN marks a candidate that could not run on a matrix). The default is always admissible, so
/// the choice is never slower than it on these matrices; on a tie the default, then the lowest
/// index, wins. Throws std::invalid_argument for an empty table, rows of different lengths or a
/// default_index out of range. O(candidates x matrices).
inline std::size_t select_candidate(const std::vector<std::vector<double>>& times,
                                    std::size_t default_index) {
  require(default_index < times.size(), "spk::select_candidate", "default index ", default_index,
          " for ", times.size(), " candidates");
  const auto& base = times[default_index];
  for (std::size_t c = 0; c < times.size(); ++c)
    require(times[c].size() == base.size(), "spk::select_candidate", "candidate ", c, " has ",
            times[c].size(), " times, the default ", base.size());
  std::size_t best = default_index;
  double best_score = 0;  // the default's mean log ratio
  for (std::size_t c = 0; c < times.size(); ++c) {
    if (c == default_index) continue;
    double sum = 0;
    bool admissible = true;
    for (std::size_t m = 0; m < base.size() && admissible; ++m) {
      const double t = times[c][m], d = base[m];
      if (!(t <= d)) {  // slower, or not run (inf, NaN)
        admissible = false;
      } else if (d > 0) {
        sum += t > 0 ? std::log(t / d) : std::log(std::numeric_limits<double>::min());
      }
    }
    if (!admissible) continue;
    const double score = base.empty() ? 0.0 : sum / double(base.size());
    if (score < best_score) {
      best_score = score;
      best = c;
    }
  }
  return best;
}

/// One (layout, schedule) pair tune() timed.
struct TuneCandidate {
  CompoundLayout layout;
  CompoundSchedule schedule;
};

/// What tune() measured: per candidate and matrix the median, minimum and maximum time of one
/// product (ms; +inf when the candidate could not run, with the reason in `skipped`), per
/// layout and matrix the matrix's memory_bytes() (0 when its conversion was refused), the
/// default candidate (index 0: CSR-AoS-AoS, default schedule) and the chosen one
/// (select_candidate).
struct TuneResult {
  std::string gpu;    ///< impl::device_name of the tuned device
  std::string entry;  ///< entry_traits<E>::name
  std::vector<TuneCandidate> candidates;
  std::vector<std::vector<double>> times_ms, min_ms, max_ms;  ///< [candidate][matrix]
  std::vector<std::vector<std::string>> skipped;       ///< [candidate][matrix]; empty when it ran
  std::vector<CompoundLayout> layouts;                 ///< every layout tried, the default first
  std::vector<std::vector<std::size_t>> memory_bytes;  ///< [layout][matrix]
  std::size_t default_index = 0, chosen = 0;

  /// Index of layout l in `layouts` (layouts.size() when absent).
  std::size_t layout_index(const CompoundLayout& l) const {
    return std::size_t(std::find(layouts.begin(), layouts.end(), l) - layouts.begin());
  }
  /// The record of the choice for a class: times summed over the matrices.
  TuningRecord record(const std::string& matrix_class) const {
    TuningRecord r;
    r.gpu = gpu;
    r.entry = entry;
    r.matrix_class = matrix_class;
    r.layout = candidates[chosen].layout;
    r.schedule = candidates[chosen].schedule;
    for (std::size_t m = 0; m < times_ms[chosen].size(); ++m) {
      r.time_ms += times_ms[chosen][m];
      r.default_ms += times_ms[default_index][m];
    }
    return r;
  }
};

namespace impl {

/// Median, minimum and maximum milliseconds of `repeat` fenced calls after `warmup` untimed ones.
template <class F>
void time_compound(const F& run, int warmup, int repeat, double& median, double& lo, double& hi) {
  for (int i = 0; i < warmup; ++i) run();
  Kokkos::fence();
  std::vector<double> t;
  for (int i = 0; i < repeat; ++i) {
    Kokkos::fence();
    const auto t0 = std::chrono::steady_clock::now();
    run();
    Kokkos::fence();
    t.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  const std::size_t n = t.size();
  median = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  lo = t.front();
  hi = t.back();
}

/// Geometric mean of the ratios of row c to row d (+inf when c did not run on some matrix).
inline double geomean_ratio(const std::vector<double>& c, const std::vector<double>& d) {
  double sum = 0;
  for (std::size_t m = 0; m < c.size(); ++m) {
    if (!std::isfinite(c[m])) return std::numeric_limits<double>::infinity();
    if (d[m] > 0 && c[m] > 0) sum += std::log(c[m] / d[m]);
  }
  return c.empty() ? 1.0 : std::exp(sum / double(c.size()));
}

}  // namespace impl

/// Times candidate layouts and schedules of the compound SpMV (y = A x, beta = 0, x all ones)
/// on every matrix and chooses one with select_candidate (see TuneOptions for the search). A
/// layout whose conversion throws PaddingLimitExceeded on a matrix, or a schedule the kernel
/// cannot launch, is recorded as skipped there (and so cannot be chosen). Throws
/// std::invalid_argument for no matrices, warmup < 0, repeat < 1 or an invalid layout.
/// Cost: (candidates x matrices) x (warmup + repeat) products plus one conversion per layout
/// and matrix.
template <class E, class D>
TuneResult tune(const std::vector<CsrMatrix<E, int, int, D>>& matrices, const TuneOptions& o) {
  using matrix_t = CompoundMatrix<E, D>;
  using device = typename matrix_t::device_type;
  using exec = typename device::execution_space;
  using vector_t = CompoundVector<E, device>;
  using real = typename entry_traits<E>::real_type;
  using Schedules = TuneOptions::Schedules;
  require(!matrices.empty(), "spk::tune", "no matrices to tune on");
  require(o.warmup >= 0 && o.repeat >= 1, "spk::tune", "warmup ", o.warmup, " and repeat ",
          o.repeat, " (need warmup >= 0, repeat >= 1)");
  const std::size_t nm = matrices.size();

  TuneResult r;
  r.gpu = impl::device_name<exec>();
  r.entry = entry_traits<E>::name;
  r.layouts.push_back(CompoundLayout{});
  for (const auto& l : o.layouts.empty() ? all_compound_layouts() : o.layouts) {
    validate(l);
    if (std::find(r.layouts.begin(), r.layouts.end(), l) == r.layouts.end()) r.layouts.push_back(l);
  }
  r.memory_bytes.assign(r.layouts.size(), std::vector<std::size_t>(nm, 0));
  const CompoundSchedule default_schedule = resolve_schedule<exec>(CompoundSchedule{});

  // plan: (layout index, schedules); candidates are appended as they are planned
  using Plan = std::vector<std::pair<std::size_t, std::vector<CompoundSchedule>>>;
  std::size_t done = 0, total = 0;
  const auto add = [&](const Plan& plan) {
    for (const auto& p : plan)
      for (const auto& s : p.second) {
        r.candidates.push_back({r.layouts[p.first], s});
        r.times_ms.emplace_back(nm, std::numeric_limits<double>::infinity());
        r.min_ms.emplace_back(nm, std::numeric_limits<double>::infinity());
        r.max_ms.emplace_back(nm, std::numeric_limits<double>::infinity());
        r.skipped.emplace_back(nm);
      }
  };
  const auto report = [&](const std::string& what) {
    if (o.progress) o.progress(done, total, what);
  };
  const auto run = [&](const Plan& plan, std::size_t first) {
    std::size_t c0 = first;
    for (const auto& p : plan) {
      const CompoundLayout& l = r.layouts[p.first];
      for (std::size_t m = 0; m < nm; ++m) {
        const auto& a = matrices[m];
        matrix_t cm;
        std::string refused;
        try {
          cm = matrix_t(a, l);
        } catch (const PaddingLimitExceeded& e) {
          refused = std::string("padding limit: ") + e.what();
        }
        if (!refused.empty()) {
          for (std::size_t k = 0; k < p.second.size(); ++k) r.skipped[c0 + k][m] = refused;
          done += p.second.size();
          report(to_string(l) + " skipped on matrix " + std::to_string(m + 1));
          continue;
        }
        r.memory_bytes[p.first][m] = cm.memory_bytes();
        vector_t x(std::size_t(a.ncols()), l.vector, l.vector_width);
        vector_t y(std::size_t(a.nrows()), l.vector, l.vector_width);
        Kokkos::deep_copy(x.data(), real(1));
        const auto alpha = entry_traits<E>::scale_from(1.0);
        const auto beta = entry_traits<E>::scale_from(0.0);
        for (std::size_t k = 0; k < p.second.size(); ++k) {
          const CompoundSchedule& s = p.second[k];
          const std::size_t c = c0 + k;
          try {
            impl::time_compound([&] { spmv(Mode::N, alpha, cm, x, beta, y, s); }, o.warmup,
                                o.repeat, r.times_ms[c][m], r.min_ms[c][m], r.max_ms[c][m]);
          } catch (const std::invalid_argument& e) {
            r.skipped[c][m] = e.what();
            r.times_ms[c][m] = r.min_ms[c][m] = r.max_ms[c][m] =
                std::numeric_limits<double>::infinity();
          }
          ++done;
          report(to_string(l) + " / " + to_string(s) + " on matrix " + std::to_string(m + 1));
        }
      }
      c0 += p.second.size();
    }
  };

  Plan first;
  const bool staged = o.schedules == Schedules::separate || o.schedules == Schedules::product;
  for (std::size_t li = 0; li < r.layouts.size(); ++li) {
    if (o.schedules == Schedules::joint) {
      first.emplace_back(li, schedule_candidates<E, D>(r.layouts[li], o.schedules));
    } else {
      first.emplace_back(li, std::vector<CompoundSchedule>{default_schedule});
    }
  }
  for (const auto& p : first) total += p.second.size() * nm;
  if (staged)  // an estimate until the best layouts are known
    total += std::min<std::size_t>(3, r.layouts.size()) *
             (schedule_candidates<E, D>(CompoundLayout{}, o.schedules).size() - 1) * nm;
  report("start");
  add(first);
  run(first, 0);

  if (staged) {
    // the best 3 layouts with the default schedule, by geometric mean ratio to the default
    std::vector<std::pair<double, std::size_t>> rank;
    for (std::size_t li = 0; li < r.layouts.size(); ++li)
      rank.emplace_back(impl::geomean_ratio(r.times_ms[li], r.times_ms[0]), li);
    std::stable_sort(rank.begin(), rank.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    Plan second;
    for (std::size_t k = 0; k < rank.size() && second.size() < 3; ++k) {
      if (!std::isfinite(rank[k].first)) break;
      auto scheds = schedule_candidates<E, D>(r.layouts[rank[k].second], o.schedules);
      scheds.erase(std::remove(scheds.begin(), scheds.end(), default_schedule), scheds.end());
      second.emplace_back(rank[k].second, scheds);
    }
    total = done;
    for (const auto& p : second) total += p.second.size() * nm;
    const std::size_t c0 = r.candidates.size();
    add(second);
    run(second, c0);
  }
  r.default_index = 0;
  r.chosen = select_candidate(r.times_ms, r.default_index);
  report("done");
  return r;
}

}  // namespace spk
