// spk/compound/compound_vector.hpp: a vector of compound values (complex numbers, quaternions,
// b-vectors) stored in AoS, SoA or AoSoA layout (the vector layout of spk/compound/layout.hpp).
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <string>

#include <spk/compound/entry.hpp>
#include <spk/compound/layout.hpp>
#include <spk/error.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/impl/radix_sort.hpp>

namespace spk {

/// n vector entries of entry type E (each entry_traits<E>::vector_components reals) in one flat
/// array of reals laid out per `layout`. Copies are shallow (like Kokkos::View).
template <class E, class Device = Kokkos::DefaultExecutionSpace>
class CompoundVector {
 public:
  using traits = entry_traits<E>;
  using real_type = typename traits::real_type;
  using value_type = typename traits::vector_type;  ///< one vector entry (AoS form)
  using device_type = impl::device_t<Device>;
  using execution_space = typename device_type::execution_space;
  using data_type = Kokkos::View<real_type*, device_type>;
  using typed_view = Kokkos::View<value_type*, device_type>;
  static constexpr int components = traits::vector_components;
  static_assert(sizeof(value_type) == components * sizeof(real_type),
                "spk::CompoundVector: a vector entry must be exactly its components");

  CompoundVector() = default;

  /// n zero entries in the given layout (width: W of AoSoA).
  explicit CompoundVector(std::size_t n, ComponentLayout layout = ComponentLayout::aos,
                          int width = 4, const std::string& label = "spk::compound_vector")
      : n_(n), width_(check_width(layout, width)), geom_(layout, width_, components, n) {
    data_ = data_type(label, geom_.size(n));
  }

  /// The entries of v (AoS, one value_type each) copied into the given layout, on the device.
  static CompoundVector from_view(const Kokkos::View<const value_type*, device_type>& v,
                                  ComponentLayout layout = ComponentLayout::aos, int width = 4) {
    CompoundVector out(v.extent(0), layout, width);
    const auto data = out.data_;
    const auto g = out.geom_;
    Kokkos::parallel_for(
        "spk::compound_vector::from_view", impl::Range64<execution_space>(0, v.extent(0)),
        KOKKOS_LAMBDA(const std::int64_t k) {
          const real_type* src = reinterpret_cast<const real_type*>(&v(k));
          for (int c = 0; c < components; ++c) data(g.index(std::size_t(k), c)) = src[c];
        });
    return out;
  }

  /// An AoS vector that aliases the entries of v (no copy; v must outlive the result).
  static CompoundVector alias(const Kokkos::View<value_type*, device_type>& v) {
    CompoundVector out;
    out.n_ = v.extent(0);
    out.geom_ = impl::ComponentGeometry(ComponentLayout::aos, 4, components, v.extent(0));
    out.data_ = data_type(reinterpret_cast<real_type*>(v.data()), v.extent(0) * components);
    return out;
  }

  /// The entries in AoS form (a new view), on the device.
  typed_view to_view() const {
    typed_view v(Kokkos::view_alloc(Kokkos::WithoutInitializing, "spk::compound_vector::to_view"),
                 n_);
    const auto data = data_;
    const auto g = geom_;
    Kokkos::parallel_for(
        "spk::compound_vector::to_view", impl::Range64<execution_space>(0, n_),
        KOKKOS_LAMBDA(const std::int64_t k) {
          real_type* dst = reinterpret_cast<real_type*>(&v(k));
          for (int c = 0; c < components; ++c) dst[c] = data(g.index(std::size_t(k), c));
        });
    return v;
  }

  std::size_t size() const { return n_; }
  ComponentLayout layout() const { return geom_.layout; }
  int width() const { return width_; }
  const data_type& data() const { return data_; }
  const impl::ComponentGeometry& geometry() const { return geom_; }
  /// Bytes of the flat array (including AoSoA / SoA padding).
  std::size_t memory_bytes() const { return data_.extent(0) * sizeof(real_type); }

 private:
  static int check_width(ComponentLayout layout, int width) {
    require(layout != ComponentLayout::aosoa || impl::valid_width(width), "spk::CompoundVector",
            "AoSoA width ", width, " is not a power of two in [2, 32]");
    return width;
  }

  std::size_t n_ = 0;
  int width_ = 4;
  impl::ComponentGeometry geom_{ComponentLayout::aos, 4, components, 0};
  data_type data_;
};

}  // namespace spk
