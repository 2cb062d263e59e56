// Benchmark cases shared by spk's command-line tools: a generator spec, FILE.mtx, or FILE.mtx*K
// (K copies of the file on the diagonal); ${VAR} is taken from the environment.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <spk/convert.hpp>
#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/generate.hpp>
#include <spk/io/matrix_market.hpp>

namespace spk_bench {

/// Expands ${NAME} from the environment (case lists name the data directory portably).
inline std::string expand_env(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto close = text.find('}', i);
    if (text.compare(i, 2, "${") == 0 && close != std::string::npos) {
      const std::string name = text.substr(i + 2, close - i - 2);
      const char* v = std::getenv(name.c_str());
      if (!v) spk::throw_invalid_argument("spk-bench", "case '", text, "' uses ${", name,
                                          "}, which is not set");
      out += v;
      i = close;
    } else {
      out += text[i];
    }
  }
  return out;
}

/// The non-empty items of a `sep`-separated list ("a,b,,c" -> a, b, c).
inline std::vector<std::string> split_list(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

/// The cases of a --cases file: one per line, '#' starts a comment, blank lines skipped, items
/// trimmed. Throws std::runtime_error naming the file when it cannot be read.
inline std::vector<std::string> read_cases(const std::string& path) {
  std::ifstream in(path);
  if (!in) spk::throw_runtime_error("spk-bench", "cannot open case list '", path, "'");
  std::vector<std::string> cases;
  std::string line;
  while (std::getline(in, line)) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    const auto e = line.find_last_not_of(" \t\r");
    cases.push_back(line.substr(b, e - b + 1));
  }
  return cases;
}

/// K of FILE.mtx*K: a positive integer.
inline int parse_copies(const std::string& text, const std::string& k) {
  std::size_t pos = 0;
  int n = 0;
  try {
    n = std::stoi(k, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  if (pos != k.size() || n < 1)
    spk::throw_invalid_argument("spk_bench::parse_case", "case '", text,
                                "': K in FILE.mtx*K must be a positive integer, got '", k, "'");
  return n;
}

/// A case is a generator spec, FILE.mtx, or FILE.mtx*K (K diagonal copies of the file).
struct CaseSpec {
  std::string file;  // empty for a generator
  int copies = 1;
  std::string spec;
};

inline CaseSpec parse_case(const std::string& text) {
  CaseSpec c;
  const std::string t = expand_env(text);
  const auto star = t.rfind('*');
  const std::string base = star == std::string::npos ? t : t.substr(0, star);
  if (base.size() > 4 && base.compare(base.size() - 4, 4, ".mtx") == 0) {
    c.file = base;
    if (star != std::string::npos) c.copies = parse_copies(text, t.substr(star + 1));
  } else {
    c.spec = t;
  }
  return c;
}

inline std::string case_name(const std::string& text) {
  const CaseSpec c = parse_case(text);
  if (c.file.empty()) return c.spec;
  const auto slash = c.file.find_last_of('/');
  const std::string name = slash == std::string::npos ? c.file : c.file.substr(slash + 1);
  return c.copies > 1 ? name + "*" + std::to_string(c.copies) : name;
}

/// Loads a case as CSR on Dev.
template <class S, class Dev>
spk::CsrMatrix<S, int, int, Dev> load_case(const std::string& text) {
  const CaseSpec c = parse_case(text);
  if (!c.file.empty()) {
    const auto host = spk::io::read_matrix_market_coo<S, int, int>(c.file);
    auto a = spk::coo_to_csr(spk::copy_to<Dev>(host));
    if (c.copies > 1) a = spk::generate::block_diag_replicate(a, c.copies);
    return a;
  }
  return spk::generate::from_spec<S, int, int, Dev>(spk::generate::parse_generator_spec(c.spec));
}

}  // namespace spk_bench
