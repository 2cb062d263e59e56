// spk/formats/padding_limit.hpp: the memory limit of the padded formats (ELL, HLL, DIA, HDIA and
// the ELL part of HYB) and the exception they throw when a matrix would exceed it.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace spk {

/// How much a padded format may allocate. A conversion computes the size of its padded arrays
/// before allocating them and throws PaddingLimitExceeded when it is larger than
/// max(max_csr_ratio * bytes of the CSR input, min_limit_bytes): one long row (ELL), a few
/// scattered entries (DIA) or an arrowhead would otherwise exhaust device memory. The floor keeps
/// tiny matrices, whose 128-byte alignment or hack rounding dominates, convertible.
struct PaddingLimit {
  double max_csr_ratio = 20.0;          ///< allowed multiple of the CSR input's memory_bytes()
  std::size_t min_limit_bytes = 65536;  ///< the limit is never below this many bytes
};

/// Thrown when a padded format would exceed its PaddingLimit (a std::invalid_argument whose
/// message names the format, the padded shape, the bytes needed and the limit).
class PaddingLimitExceeded : public std::invalid_argument {
 public:
  explicit PaddingLimitExceeded(const std::string& what) : std::invalid_argument(what) {}
};

}  // namespace spk
