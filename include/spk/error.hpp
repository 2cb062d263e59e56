// spk/error.hpp: the one place spk builds its exceptions.
//
// Host-side input errors throw std::invalid_argument (bad arguments, malformed matrices) or
// std::runtime_error (I/O and environment failures), with a message that names the function and
// the offending values. Device-side checks use KOKKOS_ASSERT only.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace spk {

namespace impl {
/// "int32_t", "int64_t", ... for error messages about index types.
template <class T>
constexpr const char* integer_type_name() {
  return sizeof(T) == 1   ? (std::is_signed<T>::value ? "int8_t" : "uint8_t")
         : sizeof(T) == 2 ? (std::is_signed<T>::value ? "int16_t" : "uint16_t")
         : sizeof(T) == 4 ? (std::is_signed<T>::value ? "int32_t" : "uint32_t")
                          : (std::is_signed<T>::value ? "int64_t" : "uint64_t");
}

inline void append_all(std::ostringstream&) {}
template <class T, class... Rest>
void append_all(std::ostringstream& os, T&& first, Rest&&... rest) {
  os << std::forward<T>(first);
  append_all(os, std::forward<Rest>(rest)...);
}
}  // namespace impl

/// Concatenates its arguments (anything with operator<<) into a string.
template <class... Args>
std::string str_cat(Args&&... args) {
  std::ostringstream os;
  impl::append_all(os, std::forward<Args>(args)...);
  return os.str();
}

/// Throws std::invalid_argument with "where: what" built from the arguments.
template <class... Args>
[[noreturn]] void throw_invalid_argument(const char* where, Args&&... what) {
  throw std::invalid_argument(str_cat(where, ": ", std::forward<Args>(what)...));
}

/// Throws std::runtime_error with "where: what" built from the arguments.
template <class... Args>
[[noreturn]] void throw_runtime_error(const char* where, Args&&... what) {
  throw std::runtime_error(str_cat(where, ": ", std::forward<Args>(what)...));
}

/// Throws std::invalid_argument unless `cond` holds.
template <class... Args>
void require(bool cond, const char* where, Args&&... what) {
  if (!cond) throw_invalid_argument(where, std::forward<Args>(what)...);
}

}  // namespace spk
