// spk/matrix.hpp: spk::Matrix, one run-time type over every spk format.
//
// A Matrix holds one concrete matrix (CSR, ELL, HLL, DIA, HDIA, HYB, balanced COO, compressed
// COO or HiSparse) together with the FormatConfig it was built with: the conversion options and
// the SpMV launch parameters of that format. spk::spmv on a Matrix dispatches once on the host
// (a switch on the held alternative) to the concrete format's spmv with the stored parameters,
// so it costs what the concrete call costs. A Matrix converts to any other format on its device
// (through CSR) and is an operator of spk's Krylov solvers (spk::is_spmv_matrix).
//
// spk::select_format (spk/select_format.hpp) chooses a FormatConfig for a matrix.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <spk/csr_matrix.hpp>
#include <spk/error.hpp>
#include <spk/formats/balanced_coo.hpp>
#include <spk/formats/compressed_coo.hpp>
#include <spk/formats/dia.hpp>
#include <spk/formats/ell.hpp>
#include <spk/formats/hdia.hpp>
#include <spk/formats/hisparse.hpp>
#include <spk/formats/hll.hpp>
#include <spk/formats/hyb.hpp>
#include <spk/impl/kokkos_compat.hpp>
#include <spk/mode.hpp>
#include <spk/scalar.hpp>
#include <spk/spmv.hpp>

namespace spk {

/// The storage formats a Matrix can hold.
enum class Format { csr, ell, hll, dia, hdia, hyb, balanced_coo, compressed_coo, hisparse };

/// Every Format, in declaration order.
inline const std::vector<Format>& all_formats() {
  static const std::vector<Format> f = {Format::csr,          Format::ell,  Format::hll,
                                        Format::dia,          Format::hdia, Format::hyb,
                                        Format::balanced_coo, Format::compressed_coo,
                                        Format::hisparse};
  return f;
}

/// The name of a format as spk-bench spells it ("csr", "balanced-coo", ...).
inline const char* to_string(Format f) {
  switch (f) {
    case Format::csr: return "csr";
    case Format::ell: return "ell";
    case Format::hll: return "hll";
    case Format::dia: return "dia";
    case Format::hdia: return "hdia";
    case Format::hyb: return "hyb";
    case Format::balanced_coo: return "balanced-coo";
    case Format::compressed_coo: return "compressed-coo";
    case Format::hisparse: return "hisparse";
  }
  return "?";
}

/// The Format named `name` (to_string's spelling). Throws std::invalid_argument listing the
/// names for anything else.
inline Format parse_format(const std::string& name) {
  std::string known;
  for (Format f : all_formats()) {
    if (name == to_string(f)) return f;
    known += std::string(known.empty() ? "" : ", ") + to_string(f);
  }
  throw_invalid_argument("spk::parse_format", "unknown format '", name, "' (known: ", known, ")");
}

/// True when Matrix<S, ...> can hold format f (HiSparse stores float and double only).
template <class S>
constexpr bool format_supports(Format f) {
  return f != Format::hisparse || std::is_same<S, float>::value || std::is_same<S, double>::value;
}

/// A format with the options of the conversion into it and the launch parameters of its SpMV.
/// Only the members of `format` are used. `name` identifies the configuration (the candidates of
/// select_format have fixed names, which the tuning file stores); empty means "the format's
/// defaults" and name() then returns the format's name.
struct FormatConfig {
  Format format = Format::csr;
  std::string label;

  CsrSpmvParams csr;
  EllOptions ell_options;
  EllSpmvParams ell;
  HllOptions hll_options;
  HllSpmvParams hll;
  DiaOptions dia_options;
  DiaSpmvParams dia;
  HdiaOptions hdia_options;
  HdiaSpmvParams hdia;
  HybOptions hyb_options;
  HybSpmvParams hyb;
  BalancedCooSpmvParams balanced_coo;
  CompressedCooOptions compressed_coo_options;
  CompressedCooSpmvParams compressed_coo;
  int hisparse_node_size = 128;
  HiSparseSpmvParams hisparse;

  /// `label` when set, else the format's name.
  std::string name() const { return label.empty() ? std::string(to_string(format)) : label; }

  /// The defaults of format f.
  static FormatConfig of(Format f, std::string label = "") {
    FormatConfig c;
    c.format = f;
    c.label = std::move(label);
    return c;
  }
};

namespace impl {

/// Placeholder alternative where a format cannot hold the value type (HiSparse of complex).
struct NoFormat {};

template <class S, class D>
using hisparse_or_none_t =
    std::conditional_t<format_supports<S>(Format::hisparse), HiSparseMatrix<S, int, D>, NoFormat>;

}  // namespace impl

/// One matrix of value type Scalar on Device (int row and column indices), held in any spk
/// format; see the file comment. Copies are shallow (they share the concrete matrix).
template <class Scalar, class Device = Kokkos::DefaultExecutionSpace>
class Matrix {
 public:
  using value_type = Scalar;
  using ordinal_type = int;
  using device_type = impl::device_t<Device>;
  using execution_space = typename device_type::execution_space;
  using memory_space = typename device_type::memory_space;
  using csr_type = CsrMatrix<Scalar, int, int, Device>;
  using ell_type = EllMatrix<Scalar, int, int, Device>;
  using hll_type = HllMatrix<Scalar, int, int, Device>;
  using dia_type = DiaMatrix<Scalar, int, int, Device>;
  using hdia_type = HdiaMatrix<Scalar, int, int, Device>;
  using hyb_type = HybMatrix<Scalar, int, int, Device>;
  using balanced_coo_type = BalancedCooMatrix<Scalar, int, int, Device>;
  using compressed_coo_type = CompressedCooMatrix<Scalar, int, int, Device>;
  using hisparse_type = impl::hisparse_or_none_t<Scalar, Device>;
  /// The alternatives in Format order (index i holds Format(i)).
  using storage_type = std::variant<csr_type, ell_type, hll_type, dia_type, hdia_type, hyb_type,
                                    balanced_coo_type, compressed_coo_type, hisparse_type>;

  /// An empty 0 x 0 CSR matrix.
  Matrix() = default;

  /// a in CSR with the default CSR schedule (no copy).
  explicit Matrix(const csr_type& a) : m_(a) {}

  /// a converted on its device into config.format with config's options; SpMV then uses
  /// config's launch parameters. Throws std::invalid_argument for a format the value type does
  /// not support (HiSparse of complex values) and what the conversion throws (e.g.
  /// PaddingLimitExceeded for a padded format whose padding would exceed its limit).
  Matrix(const csr_type& a, const FormatConfig& config) : config_(config) {
    require(format_supports<Scalar>(config.format), "spk::Matrix", "format ",
            to_string(config.format), " does not hold values of type ",
            scalar_traits<Scalar>::name);
    switch (config.format) {
      case Format::csr: m_ = a; break;
      case Format::ell: m_ = ell_type(a, config.ell_options); break;
      case Format::hll: m_ = hll_type(a, config.hll_options); break;
      case Format::dia: m_ = dia_type(a, config.dia_options); break;
      case Format::hdia: m_ = hdia_type(a, config.hdia_options); break;
      case Format::hyb: m_ = hyb_type(a, config.hyb_options); break;
      case Format::balanced_coo: m_ = balanced_coo_type(a); break;
      case Format::compressed_coo:
        m_ = compressed_coo_type(a, config.compressed_coo_options);
        break;
      case Format::hisparse:
        if constexpr (!std::is_same<hisparse_type, impl::NoFormat>::value)
          m_ = hisparse_type(a, config.hisparse_node_size);
        break;
    }
  }

  /// Wraps a concrete matrix of one of the held types (no copy); SpMV uses `config`'s launch
  /// parameters for its format (config.format is set from the type).
  template <class M, class = std::enable_if_t<!std::is_same<std::decay_t<M>, csr_type>::value &&
                                              std::is_constructible<storage_type, M>::value>>
  explicit Matrix(M concrete, FormatConfig config = {}) : m_(std::move(concrete)) {
    config.format = Format(m_.index());
    config_ = std::move(config);
  }

  Format format() const { return Format(m_.index()); }
  const FormatConfig& config() const { return config_; }
  /// The configuration's name (FormatConfig::name()).
  std::string format_name() const { return config_.format == format() ? config_.name()
                                                                      : to_string(format()); }

  int nrows() const {
    return visit([](const auto& m) { return int(m.nrows()); });
  }
  int ncols() const {
    return visit([](const auto& m) { return int(m.ncols()); });
  }
  /// Stored entries of the held format (its own count: DIA and HDIA count nonzeros, HiSparse
  /// distinct coordinates, compressed COO the entries it stores).
  std::int64_t nnz() const {
    return visit([](const auto& m) { return std::int64_t(m.nnz()); });
  }
  /// Bytes of the held format's arrays.
  std::size_t memory_bytes() const {
    return visit([](const auto& m) { return std::size_t(m.memory_bytes()); });
  }

  /// The held matrix of type M, or nullptr when another format is held.
  template <class M>
  const M* get_if() const {
    return std::get_if<M>(&m_);
  }
  const storage_type& storage() const { return m_; }

  /// The matrix in CSR on the same device (the held CSR itself when CSR is held).
  csr_type to_csr() const {
    return visit([](const auto& m) -> csr_type {
      if constexpr (std::is_same<std::decay_t<decltype(m)>, csr_type>::value)
        return m;
      else
        return m.to_csr();
    });
  }

  /// This matrix converted on its device into `config` (through CSR). Formats that drop
  /// explicit zeros or sum duplicates on conversion (DIA, HDIA, compressed COO, HiSparse) hold
  /// the same operator with fewer stored entries.
  Matrix converted(const FormatConfig& config) const {
    if (format() == Format::csr && config.format == Format::csr) {
      Matrix out(std::get<csr_type>(m_));
      out.config_ = config;
      return out;
    }
    return Matrix(to_csr(), config);
  }

  /// y = alpha op(A) x + beta y with the configuration's launch parameters (see spk::spmv).
  template <class XView, class YView>
  void apply(Mode mode, Scalar alpha, const XView& x, Scalar beta, const YView& y) const {
    switch (m_.index()) {
      case 0: spk::spmv(mode, alpha, *std::get_if<0>(&m_), x, beta, y, config_.csr); break;
      case 1: spk::spmv(mode, alpha, *std::get_if<1>(&m_), x, beta, y, config_.ell); break;
      case 2: spk::spmv(mode, alpha, *std::get_if<2>(&m_), x, beta, y, config_.hll); break;
      case 3: spk::spmv(mode, alpha, *std::get_if<3>(&m_), x, beta, y, config_.dia); break;
      case 4: spk::spmv(mode, alpha, *std::get_if<4>(&m_), x, beta, y, config_.hdia); break;
      case 5: spk::spmv(mode, alpha, *std::get_if<5>(&m_), x, beta, y, config_.hyb); break;
      case 6: spk::spmv(mode, alpha, *std::get_if<6>(&m_), x, beta, y, config_.balanced_coo); break;
      case 7:
        spk::spmv(mode, alpha, *std::get_if<7>(&m_), x, beta, y, config_.compressed_coo);
        break;
      case 8:
        if constexpr (!std::is_same<hisparse_type, impl::NoFormat>::value)
          spk::spmv(mode, alpha, *std::get_if<8>(&m_), x, beta, y, config_.hisparse);
        break;
    }
  }

 private:
  template <class F>
  auto visit(const F& f) const {
    return std::visit(
        [&](const auto& m) {
          if constexpr (std::is_same<std::decay_t<decltype(m)>, impl::NoFormat>::value) {
            using R = decltype(f(std::declval<const csr_type&>()));
            throw_invalid_argument("spk::Matrix", "no matrix held");
            return R();
          } else {
            return f(m);
          }
        },
        m_);
  }

  storage_type m_;
  FormatConfig config_;
};

/// y = alpha op(A) x + beta y for a Matrix in any format (Matrix::apply).
template <class S, class D, class XView, class YView>
void spmv(Mode mode, typename Matrix<S, D>::value_type alpha, const Matrix<S, D>& a,
          const XView& x, typename Matrix<S, D>::value_type beta, const YView& y) {
  a.apply(mode, alpha, x, beta, y);
}

}  // namespace spk
