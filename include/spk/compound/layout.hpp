// spk/compound/layout.hpp: the layouts of a matrix with compound entries (Mueller-Roemer, Stork,
// Fellner 2020, section 4.1) and the one place where their index arithmetic lives.
//
// Outer layout: where the entries of row i are: CSR (row-major, offsets), ELLPACK-R (padded,
// column-major with a pitch of a multiple of 32 rows, row lengths) or sliced ELLPACK (slices of
// 16 or 32 rows, each padded to its longest row and stored column-major, row lengths). Every
// outer layout reduces to "row i holds count(i) slots at first(i) + j * stride(i)".
//
// Inner layout (the components of the matrix entries) and vector layout (the components of x and
// y): AoS (an entry's components together), SoA (one array per component, coalesced) or AoSoA
// with an inner width W (blocks of W entries, each block holding W values of component 0, then
// W of component 1, ...). All three are strided views of one flat array of reals:
//   AoS:   element (k, c) at k * C + c
//   SoA:   element (k, c) at c * ld + k                (ld = entries rounded up to 32)
//   AoSoA: element (k, c) at (k / W) * C * W + c * W + k % W
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>

#include <spk/error.hpp>

namespace spk {

/// Where the entries of a row are stored (the outer layout).
enum class OuterLayout { csr, ell, sell };

/// How the components of an array of compound values are arranged (inner and vector layout).
enum class ComponentLayout { aos, soa, aosoa };

/// A complete layout choice of a compound matrix and its vectors. The default is the paper's
/// baseline CSR-AoS-AoS.
struct CompoundLayout {
  OuterLayout outer = OuterLayout::csr;
  int slice = 32;  ///< rows per slice of sliced ELLPACK: 16 or 32
  ComponentLayout inner = ComponentLayout::aos;
  int inner_width = 4;  ///< W of an AoSoA inner layout: a power of two in [2, 32]
  ComponentLayout vector = ComponentLayout::aos;
  int vector_width = 4;  ///< W of an AoSoA vector layout: a power of two in [2, 32]

  friend bool operator==(const CompoundLayout& a, const CompoundLayout& b) {
    return a.outer == b.outer && (a.outer != OuterLayout::sell || a.slice == b.slice) &&
           a.inner == b.inner &&
           (a.inner != ComponentLayout::aosoa || a.inner_width == b.inner_width) &&
           a.vector == b.vector &&
           (a.vector != ComponentLayout::aosoa || a.vector_width == b.vector_width);
  }
  friend bool operator!=(const CompoundLayout& a, const CompoundLayout& b) { return !(a == b); }
};

/// "aos", "soa" or "aosoa<W>".
inline std::string to_string(ComponentLayout l, int width) {
  return l == ComponentLayout::aos   ? std::string("aos")
         : l == ComponentLayout::soa ? std::string("soa")
                                     : "aosoa" + std::to_string(width);
}

/// "csr", "ell" or "sell<slice>".
inline std::string to_string(OuterLayout l, int slice) {
  return l == OuterLayout::csr ? std::string("csr")
         : l == OuterLayout::ell ? std::string("ell")
                                 : "sell" + std::to_string(slice);
}

/// "outer-inner-vector", e.g. "csr-aos-aos", "sell32-aosoa8-soa".
inline std::string to_string(const CompoundLayout& l) {
  return to_string(l.outer, l.slice) + "-" + to_string(l.inner, l.inner_width) + "-" +
         to_string(l.vector, l.vector_width);
}

namespace impl {
inline bool valid_width(int w) { return w >= 2 && w <= 32 && (w & (w - 1)) == 0; }

inline void parse_component_layout(const std::string& text, const std::string& part,
                                   ComponentLayout& l, int& width) {
  if (part == "aos") {
    l = ComponentLayout::aos;
  } else if (part == "soa") {
    l = ComponentLayout::soa;
  } else if (part.rfind("aosoa", 0) == 0 && part.size() > 5 &&
             part.find_first_not_of("0123456789", 5) == std::string::npos && part.size() < 8) {
    l = ComponentLayout::aosoa;
    width = std::stoi(part.substr(5));
    require(valid_width(width), "spk::parse_layout", "AoSoA width ", width, " in '", text,
            "' is not a power of two in [2, 32]");
  } else {
    throw_invalid_argument("spk::parse_layout", "unknown component layout '", part, "' in '",
                           text, "' (expected aos, soa or aosoa<W>)");
  }
}
}  // namespace impl

/// Throws std::invalid_argument naming the field unless every field of l is usable.
inline void validate(const CompoundLayout& l) {
  require(l.outer != OuterLayout::sell || l.slice == 16 || l.slice == 32, "spk::CompoundLayout",
          "slice ", l.slice, " of sliced ELLPACK must be 16 or 32");
  require(l.inner != ComponentLayout::aosoa || impl::valid_width(l.inner_width),
          "spk::CompoundLayout", "inner AoSoA width ", l.inner_width,
          " is not a power of two in [2, 32]");
  require(l.vector != ComponentLayout::aosoa || impl::valid_width(l.vector_width),
          "spk::CompoundLayout", "vector AoSoA width ", l.vector_width,
          " is not a power of two in [2, 32]");
}

/// Parses to_string's form ("csr-aos-aos", "ell-soa-aosoa4", "sell16-aosoa8-soa"); throws
/// std::invalid_argument naming the text otherwise.
inline CompoundLayout parse_layout(const std::string& text) {
  CompoundLayout l;
  const auto d1 = text.find('-');
  const auto d2 = d1 == std::string::npos ? d1 : text.find('-', d1 + 1);
  require(d2 != std::string::npos && text.find('-', d2 + 1) == std::string::npos,
          "spk::parse_layout", "layout '", text, "' is not of the form outer-inner-vector");
  const std::string outer = text.substr(0, d1);
  if (outer == "csr") {
    l.outer = OuterLayout::csr;
  } else if (outer == "ell") {
    l.outer = OuterLayout::ell;
  } else if (outer == "sell16" || outer == "sell32") {
    l.outer = OuterLayout::sell;
    l.slice = outer == "sell16" ? 16 : 32;
  } else {
    throw_invalid_argument("spk::parse_layout", "unknown outer layout '", outer, "' in '", text,
                           "' (expected csr, ell, sell16 or sell32)");
  }
  impl::parse_component_layout(text, text.substr(d1 + 1, d2 - d1 - 1), l.inner, l.inner_width);
  impl::parse_component_layout(text, text.substr(d2 + 1), l.vector, l.vector_width);
  validate(l);
  return l;
}

namespace impl {

/// Integer log2 of a power of two.
inline int log2_exact(int w) {
  int s = 0;
  while ((1 << s) < w) ++s;
  return s;
}

/// Geometry of a strided array of n compound values of C components each: the number of reals
/// it needs and the strides of element (k, c). The one place of the layouts' index arithmetic.
struct ComponentGeometry {
  ComponentLayout layout = ComponentLayout::aos;
  int components = 1;  ///< C
  int shift = 0;       ///< log2(W) of AoSoA
  std::size_t ld = 0;  ///< SoA: reals per component array

  ComponentGeometry() = default;
  ComponentGeometry(ComponentLayout l, int width, int c, std::size_t n)
      : layout(l), components(c), shift(l == ComponentLayout::aosoa ? log2_exact(width) : 0) {
    ld = l == ComponentLayout::soa ? (n + 31) / 32 * 32 : 0;
  }
  /// Reals needed for n values (AoSoA rounds n up to a multiple of W).
  std::size_t size(std::size_t n) const {
    if (layout == ComponentLayout::aos) return n * std::size_t(components);
    if (layout == ComponentLayout::soa) return ld * std::size_t(components);
    const std::size_t w = std::size_t(1) << shift;
    return (n + w - 1) / w * w * std::size_t(components);
  }
  /// Offset of component c of value k.
  KOKKOS_INLINE_FUNCTION std::size_t index(std::size_t k, int c) const {
    if (layout == ComponentLayout::aos) return k * std::size_t(components) + std::size_t(c);
    if (layout == ComponentLayout::soa) return std::size_t(c) * ld + k;
    return (((k >> shift) * std::size_t(components) + std::size_t(c)) << shift) +
           (k & ((std::size_t(1) << shift) - 1));
  }
};

/// Compile-time tags of the component layouts: the kernels are instantiated per tag so that the
/// AoS case can load a whole value with the widest aligned loads and no layout test is left in
/// the inner loop.
template <ComponentLayout L>
struct ComponentTag {
  static constexpr ComponentLayout layout = L;
};

/// Loads the C components of value k from data laid out as g (L == g.layout).
template <ComponentLayout L, class Load, int C, class Real>
KOKKOS_INLINE_FUNCTION void load_components(const Real* data, const ComponentGeometry& g,
                                            std::size_t k, Real (&out)[C]) {
  if constexpr (L == ComponentLayout::aos) {
    Load::template load<C>(data + k * std::size_t(C), out);
  } else if constexpr (L == ComponentLayout::soa) {
    for (int c = 0; c < C; ++c) out[c] = data[std::size_t(c) * g.ld + k];
  } else {
    const std::size_t base = ((k >> g.shift) * std::size_t(C)) << g.shift;
    const std::size_t lane = k & ((std::size_t(1) << g.shift) - 1);
    for (int c = 0; c < C; ++c) out[c] = data[base + (std::size_t(c) << g.shift) + lane];
  }
}

/// Stores the C components of value k.
template <ComponentLayout L, int C, class Real>
KOKKOS_INLINE_FUNCTION void store_components(Real* data, const ComponentGeometry& g,
                                             std::size_t k, const Real (&in)[C]) {
  if constexpr (L == ComponentLayout::aos) {
    for (int c = 0; c < C; ++c) data[k * std::size_t(C) + std::size_t(c)] = in[c];
  } else if constexpr (L == ComponentLayout::soa) {
    for (int c = 0; c < C; ++c) data[std::size_t(c) * g.ld + k] = in[c];
  } else {
    const std::size_t base = ((k >> g.shift) * std::size_t(C)) << g.shift;
    const std::size_t lane = k & ((std::size_t(1) << g.shift) - 1);
    for (int c = 0; c < C; ++c) data[base + (std::size_t(c) << g.shift) + lane] = in[c];
  }
}

/// Rows of an outer layout: row i holds count(i) slots at first(i) + j * stride(i).
template <class Device>
struct OuterGeometry {
  OuterLayout layout = OuterLayout::csr;
  int slice_shift = 5;     ///< log2(slice) of sliced ELLPACK
  std::size_t pitch = 0;   ///< ELLPACK: slots per column
  Kokkos::View<const int*, Device> offsets;  ///< CSR: row offsets; SELL: slice offsets (slots)
  Kokkos::View<const int*, Device> row_len;           ///< ELL and SELL: row lengths

  KOKKOS_INLINE_FUNCTION std::size_t first(int i) const {
    if (layout == OuterLayout::csr) return std::size_t(offsets(i));
    if (layout == OuterLayout::ell) return std::size_t(i);
    return std::size_t(offsets(i >> slice_shift)) + std::size_t(i & ((1 << slice_shift) - 1));
  }
  KOKKOS_INLINE_FUNCTION std::size_t stride(int /*i*/) const {
    return layout == OuterLayout::csr   ? std::size_t(1)
           : layout == OuterLayout::ell ? pitch
                                        : std::size_t(1) << slice_shift;
  }
  KOKKOS_INLINE_FUNCTION int count(int i) const {
    return layout == OuterLayout::csr ? int(offsets(i + 1) - offsets(i)) : row_len(i);
  }
};

}  // namespace impl
}  // namespace spk
