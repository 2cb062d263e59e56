// src/generator_spec.cpp: the non-template spec-string handling behind spk/generate.hpp.
//
// One table lists the generators, what their SIZE means and their keys with defaults; parsing,
// validation, defaults, the help text and the size estimates all read it, so adding a generator
// means adding one table row and one branch of from_spec().
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <spk/generate.hpp>
#include <sstream>
#include <system_error>

namespace spk {
namespace generate {
namespace {

enum class Kind { integer, real, seed, values };

struct ParamInfo {
  const char* key;
  Kind kind;
  const char* default_text;
  const char* help;
};

struct GeneratorInfo {
  const char* name;
  const char* size_help;
  const char* help;
  std::vector<ParamInfo> params;
};

const std::vector<ParamInfo>& common_params() {
  static const std::vector<ParamInfo> params = {
      {"seed", Kind::seed, "1", "seed of the pattern and of random values (uint64)"},
      {"values", Kind::values, "default",
       "'random' for random values in [-1, 1) instead of the coefficients / ones"}};
  return params;
}

const std::vector<GeneratorInfo>& generators() {
  static const std::vector<GeneratorInfo> table = {
      {"poisson2d5", "N = grid side, N^2 rows", "2D Poisson, 5-point stencil (4, -1)", {}},
      {"poisson3d7", "N = grid side, N^3 rows", "3D Poisson, 7-point stencil (6, -1)", {}},
      {"poisson3d27", "N = grid side, N^3 rows", "3D 27-point stencil (26, -1)", {}},
      {"pde",
       "N = grid side, N^3 rows",
       "PSBLAS pdeN: 3D convection-diffusion, 7-point centred differences, non-symmetric",
       {}},
      {"banded",
       "N = rows",
       "random banded: nnz_per_row random columns within +-hbw of the diagonal",
       {{"hbw", Kind::integer, "64", "half bandwidth"},
        {"nnz_per_row", Kind::integer, "16", "entries per row (diagonal included)"}}},
      {"rmat",
       "N = scale, 2^N rows",
       "R-MAT power-law graph, duplicates merged",
       {{"edge_factor", Kind::integer, "16", "generated edges per row"},
        {"a", Kind::real, "0.57", "probability of quadrant a (top left)"},
        {"b", Kind::real, "0.19", "probability of quadrant b (top right)"},
        {"c", Kind::real, "0.19", "probability of quadrant c (bottom left)"}}},
      {"circuit",
       "N = rows",
       "circuit-like: short random rows plus a few very long rows",
       {{"mean_row_len", Kind::integer, "5", "mean length of the short rows"},
        {"long_rows", Kind::integer, "min(4, N)", "number of long rows"},
        {"long_row_len", Kind::integer, "max(1, N / 10)", "entries of each long row"}}},
  };
  return table;
}

std::string joined_names() {
  std::string s;
  for (const auto& g : generators()) s += (s.empty() ? "" : ", ") + std::string(g.name);
  return s;
}

const GeneratorInfo* find_generator(const std::string& name) {
  for (const auto& g : generators())
    if (name == g.name) return &g;
  return nullptr;
}

const ParamInfo* find_param(const GeneratorInfo& g, const std::string& key) {
  for (const auto& p : common_params())
    if (key == p.key) return &p;
  for (const auto& p : g.params)
    if (key == p.key) return &p;
  return nullptr;
}

std::string joined_keys(const GeneratorInfo& g) {
  std::string s;
  for (const auto& p : common_params()) s += (s.empty() ? "" : ", ") + std::string(p.key);
  for (const auto& p : g.params) s += ", " + std::string(p.key);
  return s;
}

/// Non-negative decimal integer with an optional suffix k, M or G (10^3, 10^6, 10^9).
bool parse_count(const std::string& s, std::int64_t& out) {
  if (s.empty()) return false;
  std::int64_t scale = 1;
  std::size_t len = s.size();
  switch (s.back()) {
    case 'k':
    case 'K':
      scale = 1000;
      break;
    case 'M':
      scale = 1000000;
      break;
    case 'G':
      scale = 1000000000;
      break;
    default:
      break;
  }
  if (scale != 1) --len;
  if (len == 0 || s[0] == '-' || s[0] == '+') return false;
  std::int64_t v = 0;
  const auto res = std::from_chars(s.data(), s.data() + len, v);
  if (res.ec != std::errc() || res.ptr != s.data() + len) return false;
  out = impl::mul_or_overflow(v, scale);
  return out >= 0;
}

bool parse_real(const std::string& s, double& out) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtod(s.c_str(), &end);
  return errno == 0 && end == s.c_str() + s.size() && std::isfinite(out);
}

bool parse_seed(const std::string& s, std::uint64_t& out) {
  if (s.empty()) return false;
  const auto res = std::from_chars(s.data(), s.data() + s.size(), out);
  return res.ec == std::errc() && res.ptr == s.data() + s.size();
}

/// Checks one key=value pair; returns an empty string or the reason it is bad.
std::string check_param(const GeneratorInfo& g, const std::string& key, const std::string& value) {
  const ParamInfo* p = find_param(g, key);
  if (!p)
    return str_cat("unknown key '", key, "' for generator '", g.name,
                   "' (valid keys: ", joined_keys(g), ")");
  std::int64_t i = 0;
  double d = 0;
  std::uint64_t u = 0;
  switch (p->kind) {
    case Kind::integer:
      if (!parse_count(value, i))
        return str_cat("value '", value, "' of key '", key,
                       "' is not a non-negative integer (suffixes k, M, G allowed)");
      break;
    case Kind::real:
      if (!parse_real(value, d))
        return str_cat("value '", value, "' of key '", key, "' is not a finite real number");
      break;
    case Kind::seed:
      if (!parse_seed(value, u))
        return str_cat("value '", value, "' of key '", key, "' is not an unsigned 64-bit integer");
      break;
    case Kind::values:
      if (value != "random" && value != "default")
        return str_cat("value '", value, "' of key '", key, "' is not 'random' or 'default'");
      break;
  }
  return {};
}

[[noreturn]] void bad_spec(const char* who, const std::string& text, const std::string& reason) {
  throw_invalid_argument(
      who, "bad generator spec '", text, "': ", reason,
      " (syntax NAME:SIZE[:key=value[,key=value...]]; generators: ", joined_names(), ")");
}

const GeneratorInfo& checked_generator(const char* who, const GeneratorSpec& spec) {
  const GeneratorInfo* g = find_generator(spec.name);
  if (!g) bad_spec(who, to_string(spec), str_cat("unknown generator '", spec.name, "'"));
  return *g;
}

const std::string* find_value(const GeneratorSpec& spec, const std::string& key) {
  const auto it = spec.params.find(key);
  return it == spec.params.end() ? nullptr : &it->second;
}

[[noreturn]] void too_large(const char* who, const GeneratorSpec& spec, const char* what) {
  throw_invalid_argument(who, "generator spec '", to_string(spec), "' has more ", what,
                         " than int64 can count");
}

}  // namespace

std::vector<std::string> generator_names() {
  std::vector<std::string> names;
  for (const auto& g : generators()) names.emplace_back(g.name);
  return names;
}

std::string to_string(const GeneratorSpec& spec) {
  std::string s = str_cat(spec.name, ":", spec.size);
  bool first = true;
  for (const auto& kv : spec.params) {
    s += str_cat(first ? ":" : ",", kv.first, "=", kv.second);
    first = false;
  }
  return s;
}

GeneratorSpec parse_generator_spec(const std::string& text) {
  const char* who = "spk::generate::parse_generator_spec";
  GeneratorSpec spec;
  const std::size_t c1 = text.find(':');
  spec.name = text.substr(0, c1);
  if (spec.name.empty()) bad_spec(who, text, "missing generator name");
  const GeneratorInfo* g = find_generator(spec.name);
  if (!g) bad_spec(who, text, str_cat("unknown generator '", spec.name, "'"));
  if (c1 == std::string::npos) bad_spec(who, text, "missing ':SIZE'");
  const std::size_t c2 = text.find(':', c1 + 1);
  const std::string size_text = text.substr(c1 + 1, c2 == std::string::npos ? c2 : c2 - c1 - 1);
  if (!parse_count(size_text, spec.size))
    bad_spec(
        who, text,
        str_cat("SIZE '", size_text, "' is not a non-negative integer (suffixes k, M, G allowed)"));
  if (c2 == std::string::npos) return spec;
  const std::string list = text.substr(c2 + 1);
  if (list.empty()) bad_spec(who, text, "empty key=value list after the second ':'");
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, comma - start);
    const std::size_t eq = item.find('=');
    if (item.empty()) bad_spec(who, text, "empty key=value item");
    if (eq == std::string::npos || eq == 0)
      bad_spec(who, text, str_cat("item '", item, "' is not of the form key=value"));
    const std::string key = item.substr(0, eq);
    const std::string value = item.substr(eq + 1);
    const std::string reason = check_param(*g, key, value);
    if (!reason.empty()) bad_spec(who, text, reason);
    if (!spec.params.emplace(key, value).second)
      bad_spec(who, text, str_cat("key '", key, "' is given twice"));
    start = comma + 1;
  }
  return spec;
}

void validate_generator_spec(const GeneratorSpec& spec) {
  const char* who = "spk::generate::validate_generator_spec";
  const GeneratorInfo& g = checked_generator(who, spec);
  if (spec.size < 0) bad_spec(who, to_string(spec), str_cat("SIZE ", spec.size, " is negative"));
  for (const auto& kv : spec.params) {
    const std::string reason = check_param(g, kv.first, kv.second);
    if (!reason.empty()) bad_spec(who, to_string(spec), reason);
  }
}

std::int64_t spec_int_param(const GeneratorSpec& spec, const std::string& key) {
  const char* who = "spk::generate::spec_int_param";
  const GeneratorInfo& g = checked_generator(who, spec);
  const ParamInfo* p = find_param(g, key);
  if (!p || p->kind != Kind::integer)
    throw_invalid_argument(who, "generator '", spec.name, "' has no integer key '", key,
                           "' (valid keys: ", joined_keys(g), ")");
  std::int64_t v = 0;
  if (const std::string* text = find_value(spec, key)) {
    if (!parse_count(*text, v)) bad_spec(who, to_string(spec), check_param(g, key, *text));
    return v;
  }
  // defaults that depend on the size
  if (spec.name == "circuit" && key == "long_rows") return std::min<std::int64_t>(4, spec.size);
  if (spec.name == "circuit" && key == "long_row_len")
    return std::max<std::int64_t>(1, spec.size / 10);
  parse_count(p->default_text, v);
  return v;
}

double spec_real_param(const GeneratorSpec& spec, const std::string& key) {
  const char* who = "spk::generate::spec_real_param";
  const GeneratorInfo& g = checked_generator(who, spec);
  const ParamInfo* p = find_param(g, key);
  if (!p || p->kind != Kind::real)
    throw_invalid_argument(who, "generator '", spec.name, "' has no real key '", key,
                           "' (valid keys: ", joined_keys(g), ")");
  const std::string* given = find_value(spec, key);
  const std::string text = given ? *given : std::string(p->default_text);
  double v = 0;
  if (!parse_real(text, v)) bad_spec(who, to_string(spec), check_param(g, key, text));
  return v;
}

GeneratorOptions spec_options(const GeneratorSpec& spec) {
  const char* who = "spk::generate::spec_options";
  const GeneratorInfo& g = checked_generator(who, spec);
  GeneratorOptions opt;
  if (const std::string* text = find_value(spec, "seed"))
    if (!parse_seed(*text, opt.seed)) bad_spec(who, to_string(spec), check_param(g, "seed", *text));
  if (const std::string* text = find_value(spec, "values")) {
    if (*text != "random" && *text != "default")
      bad_spec(who, to_string(spec), check_param(g, "values", *text));
    opt.random_values = *text == "random";
  }
  return opt;
}

std::int64_t spec_nrows(const GeneratorSpec& spec) {
  const char* who = "spk::generate::spec_nrows";
  validate_generator_spec(spec);
  const std::string& g = spec.name;
  const std::int64_t n = spec.size;
  std::int64_t rows = n;
  if (g == "poisson2d5") rows = impl::mul_or_overflow(n, n);
  if (g == "poisson3d7" || g == "poisson3d27" || g == "pde")
    rows = impl::mul_or_overflow(impl::mul_or_overflow(n, n), n);
  if (g == "rmat") rows = n <= 62 ? std::int64_t(1) << n : -1;
  if (rows < 0) too_large(who, spec, "rows");
  return rows;
}

std::int64_t estimate_nnz(const GeneratorSpec& spec) {
  const char* who = "spk::generate::estimate_nnz";
  using impl::add_or_overflow;
  using impl::mul_or_overflow;
  const std::int64_t rows = spec_nrows(spec);
  const std::string& g = spec.name;
  const std::int64_t n = spec.size;
  std::int64_t nnz = -1;
  if (n == 0 && g != "rmat") return 0;
  if (g == "poisson2d5") {
    // 5 n^2 - 4 n: each of the 2 (n - 1) n grid edges gives two entries
    nnz = add_or_overflow(rows, mul_or_overflow(4, mul_or_overflow(n - 1, n)));
  } else if (g == "poisson3d7" || g == "pde") {
    // 7 n^3 - 6 n^2 = n^3 + 6 (n - 1) n^2
    nnz = add_or_overflow(rows, mul_or_overflow(6, mul_or_overflow(n - 1, mul_or_overflow(n, n))));
  } else if (g == "poisson3d27") {
    const std::int64_t m = mul_or_overflow(3, n) - 2;  // (3n - 2)^3
    nnz = mul_or_overflow(mul_or_overflow(m, m), m);
  } else if (g == "banded") {
    const std::int64_t hbw = spec_int_param(spec, "hbw");
    const std::int64_t width = hbw >= n ? n : std::min(n, 2 * hbw + 1);
    nnz = mul_or_overflow(n, std::min(spec_int_param(spec, "nnz_per_row"), width));
  } else if (g == "rmat") {
    nnz = mul_or_overflow(spec_int_param(spec, "edge_factor"), rows);
  } else if (g == "circuit") {
    const std::int64_t mean = spec_int_param(spec, "mean_row_len");
    const std::int64_t longs = std::min(spec_int_param(spec, "long_rows"), n);
    const std::int64_t short_len =
        mean >= n ? n : std::max<std::int64_t>(1, std::min(n, 2 * mean - 1));
    nnz =
        add_or_overflow(mul_or_overflow(n - longs, short_len),
                        mul_or_overflow(longs, std::min(spec_int_param(spec, "long_row_len"), n)));
  }
  if (nnz < 0) too_large(who, spec, "nonzeros");
  return nnz;
}

std::string describe_generators() {
  std::ostringstream os;
  os << "Matrix generators: --gen NAME:SIZE[:key=value[,key=value...]]\n"
     << "  SIZE and integer values are decimal, with an optional suffix k, M or G (10^3, 10^6, "
        "10^9).\n";
  for (const auto& g : generators()) {
    os << "  " << g.name << ":N  " << g.help << " (" << g.size_help << ")\n";
    for (const auto& p : g.params)
      os << "      " << p.key << "=  " << p.help << " (default " << p.default_text << ")\n";
  }
  os << "  Keys of every generator:\n";
  for (const auto& p : common_params())
    os << "      " << p.key << "=  " << p.help << " (default " << p.default_text << ")\n";
  os << "  Examples: poisson3d7:100 (1M rows), pde:100, banded:1M:hbw=50,nnz_per_row=9,\n"
     << "            rmat:20:edge_factor=8,seed=3, circuit:1M:long_rows=2,values=random\n";
  return os.str();
}

}  // namespace generate
}  // namespace spk
