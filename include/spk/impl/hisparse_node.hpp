// spk/impl/hisparse_node.hpp: the node layout of HiSparse (Derler et al., ICS 2017), shared by
// the conversion, the scheduler, SpMV and addition.
//
// A HiSparse matrix is a tree of d x d nodes (d a power of two in [2, 256]) kept in one pool of
// 16-byte aligned nodes. A node stores either leaf values (the matrix entries) or, in an inner
// node, child references; both are "slots" of the same width (4 bytes for float, 8 for double,
// as in the paper's memory model). A child reference is the child's byte offset in the pool
// (a multiple of 16) with the child's node type in its low 4 bits; 0 is the null reference.
//
// Node layouts (offsets in bytes from the node's start; every node's size is a multiple of 16):
//   dense : d * d slots in row-major order (absent children are null references, absent leaf
//           entries are zeros). No header.
//   COO1  : u32 count (= 1) | u16 coordinate | 2 bytes padding | 1 slot at offset 8
//   COO2  : u32 count (= 2) | 2 x u16 coordinates | 2 slots at offset 8
//   COO4  : u32 count (>= 3) | 4 bytes padding | coordinates, count rounded up to 4, at offset 8
//           | slots at the next 16-byte boundary, count rounded up to 4
// A coordinate packs the local row in its low byte and the local column in its high byte.
// Entries of a sparse node are sorted row-major; the padding of COO4 (coordinates (0, 0), zero
// slots) lets a thread load four coordinates (8 bytes) and four slots at once, and readers stop
// at `count`, so padding never touches a vector. A node is dense when that is not larger.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <type_traits>

namespace spk {
namespace impl {
namespace hisparse {

/// Node type codes, kept in the low 4 bits of a child reference (0: no child).
enum NodeType : unsigned { null_node = 0, dense = 1, coo1 = 2, coo2 = 3, coo4 = 4 };
constexpr unsigned num_node_types = 5;
constexpr std::uint64_t type_mask = 15;

/// The width of a slot (value or child reference) for value type S: 4 or 8 bytes.
template <class S>
using ref_t = std::conditional_t<sizeof(S) == 8, std::uint64_t, std::uint32_t>;

KOKKOS_INLINE_FUNCTION unsigned ref_type(std::uint64_t ref) { return unsigned(ref & type_mask); }
KOKKOS_INLINE_FUNCTION std::uint64_t ref_offset(std::uint64_t ref) { return ref & ~type_mask; }
KOKKOS_INLINE_FUNCTION std::uint64_t make_ref(std::uint64_t offset, unsigned type) {
  return offset | std::uint64_t(type);
}

KOKKOS_INLINE_FUNCTION constexpr std::int64_t align16(std::int64_t b) { return (b + 15) & ~15; }

/// The sparse type that holds n >= 1 entries.
KOKKOS_INLINE_FUNCTION constexpr unsigned sparse_type(std::int64_t n) {
  return n == 1 ? coo1 : n == 2 ? coo2 : coo4;
}

/// Slots a sparse node of type t holds for n entries (n rounded to its vector width).
KOKKOS_INLINE_FUNCTION constexpr std::int64_t padded_count(unsigned t, std::int64_t n) {
  return t == coo1 ? 1 : t == coo2 ? 2 : (n + 3) / 4 * 4;
}

/// Byte offset of the coordinates in a sparse node of type t.
KOKKOS_INLINE_FUNCTION constexpr std::int64_t coords_offset(unsigned t) {
  return t == coo4 ? 8 : 4;
}

/// Byte offset of the slots in a node of type t with n entries.
KOKKOS_INLINE_FUNCTION constexpr std::int64_t slots_offset(unsigned t, std::int64_t n) {
  return t == dense ? 0 : t == coo4 ? align16(8 + 2 * padded_count(t, n)) : 8;
}

/// Bytes of a node of type t with n entries, slots of slot_bytes bytes, d x d.
KOKKOS_INLINE_FUNCTION constexpr std::int64_t node_bytes(unsigned t, std::int64_t n,
                                                         int slot_bytes, int d) {
  return t == dense ? align16(std::int64_t(d) * d * slot_bytes)
                    : align16(slots_offset(t, n) + padded_count(t, n) * slot_bytes);
}

/// The type of a node with n >= 1 entries: dense when that is not larger than sparse.
KOKKOS_INLINE_FUNCTION constexpr unsigned choose_type(std::int64_t n, int slot_bytes, int d) {
  return node_bytes(dense, n, slot_bytes, d) <= node_bytes(sparse_type(n), n, slot_bytes, d)
             ? dense
             : sparse_type(n);
}

/// Scheduling bins: nodes of one type and similar entry count, processed by groups of lanes of
/// one width (see hisparse_schedule.hpp): dense (a team per node), COO1 and COO2 (a thread per
/// node), COO4 with <= 8 entries (a thread), 9..64 (8 lanes), 65..512 (a warp), more (a team).
enum Bin : unsigned {
  bin_dense = 0,
  bin_coo1 = 1,
  bin_coo2 = 2,
  bin_small = 3,
  bin_medium = 4,
  bin_large = 5,
  bin_huge = 6
};
constexpr unsigned num_bins = 7;

/// The bin of a node of type t with n entries.
KOKKOS_INLINE_FUNCTION constexpr unsigned work_bin(unsigned t, std::int64_t n) {
  return t == dense  ? bin_dense
         : t == coo1 ? bin_coo1
         : t == coo2 ? bin_coo2
         : n <= 8    ? bin_small
         : n <= 64   ? bin_medium
         : n <= 512  ? bin_large
                     : bin_huge;
}

/// Packs a local coordinate (row, column < 256).
KOKKOS_INLINE_FUNCTION constexpr std::uint16_t pack(unsigned r, unsigned c) {
  return std::uint16_t(r | (c << 8));
}
KOKKOS_INLINE_FUNCTION constexpr unsigned coord_row(std::uint16_t p) { return p & 0xffu; }
KOKKOS_INLINE_FUNCTION constexpr unsigned coord_col(std::uint16_t p) { return p >> 8; }

/// Read access to a pool (base = the pool's first byte).
struct NodeView {
  const char* base;
  std::uint64_t ref;

  KOKKOS_INLINE_FUNCTION unsigned type() const { return ref_type(ref); }
  KOKKOS_INLINE_FUNCTION const char* start() const { return base + ref_offset(ref); }
  /// Entries of a sparse node (count); d * d for a dense node given d.
  KOKKOS_INLINE_FUNCTION std::int64_t count(int d) const {
    return type() == dense ? std::int64_t(d) * d
                           : std::int64_t(*reinterpret_cast<const std::uint32_t*>(start()));
  }
  KOKKOS_INLINE_FUNCTION const std::uint16_t* coords() const {
    return reinterpret_cast<const std::uint16_t*>(start() + coords_offset(type()));
  }
  template <class Slot>
  KOKKOS_INLINE_FUNCTION const Slot* slots(std::int64_t n) const {
    return reinterpret_cast<const Slot*>(start() + slots_offset(type(), n));
  }
};

/// The hierarchical sort key of entry (row, col) for node size 2^log2d and `levels` levels:
/// the base-d digits of row and column interleaved from the root down, so keys order entries
/// by root child, then by child of that child, ..., then row-major inside the leaf; key >>
/// (2 * log2d * k) identifies the node of level levels - k containing the entry.
KOKKOS_INLINE_FUNCTION std::uint64_t entry_key(std::int64_t row, std::int64_t col, int log2d,
                                               int levels) {
  const std::uint64_t mask = (std::uint64_t(1) << log2d) - 1;
  std::uint64_t key = 0;
  for (int l = levels - 1; l >= 0; --l) {
    const int shift = log2d * l;
    // the top level's digits take whatever is left of row and column
    const std::uint64_t r = l == levels - 1 ? std::uint64_t(row) >> shift
                                            : (std::uint64_t(row) >> shift) & mask;
    const std::uint64_t c = l == levels - 1 ? std::uint64_t(col) >> shift
                                            : (std::uint64_t(col) >> shift) & mask;
    key = (key << (2 * log2d)) | (r << log2d) | c;
  }
  return key;
}

}  // namespace hisparse
}  // namespace impl
}  // namespace spk
