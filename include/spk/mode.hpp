// spk/mode.hpp: which operator a product applies: A, its transpose or its conjugate transpose.
#pragma once

#include <string>

#include <spk/error.hpp>

namespace spk {

/// op(A) in y = alpha * op(A) * x + beta * y.
enum class Mode {
  N,  ///< A
  T,  ///< A^T
  H   ///< A^H (conjugate transpose; equal to T for real values)
};

/// "N", "T" or "H".
inline const char* to_string(Mode m) { return m == Mode::N ? "N" : m == Mode::T ? "T" : "H"; }

/// Parses "N"/"T"/"H" (also lower case); throws std::invalid_argument naming the text otherwise.
inline Mode parse_mode(const std::string& s) {
  if (s == "N" || s == "n") return Mode::N;
  if (s == "T" || s == "t") return Mode::T;
  if (s == "H" || s == "h" || s == "C" || s == "c") return Mode::H;
  throw_invalid_argument("spk::parse_mode", "unknown mode '", s, "' (expected N, T or H)");
}

}  // namespace spk
