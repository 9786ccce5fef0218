#pragma once
// Symbolic dims of the shape fuzzer: polynomials with non-negative integer coefficients over
// atoms. An atom is a dim the generator cannot reduce further: an input symbol (N0, N1, ...) or
// an opaque extent (a clamped slice, a data-dependent bound). Two dims are equal for every
// binding when their polynomials are equal, which is what the generator checks before it emits
// a broadcast, a concat or a reshape (docs/fuzz/generator.md).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dynqual::fuzz {

/// An atom of a symbolic dim.
struct Atom {
  std::string name;       ///< "N0" for an input symbol, "s3" for an opaque extent
  bool input = false;     ///< bound by the runtime binding (a dim_param)
  bool mayBeZero = false; ///< an opaque extent that can be 0 for some binding; input symbols are >= 1
  /// An upper bound of its value when every input symbol is at most kSymbolBound: for an opaque
  /// extent, the bound of what it is cut from (a sliced dim, the elements NonZero scans).
  int64_t maxValue = 0;
};

/// The largest value the generator expects an input symbol to take: onnxio::makeBindings gives
/// symbols traced at 3 at most 2*3+3 = 9. Only used to keep outputs small (maxValue), never for
/// validity, which holds for every binding.
inline constexpr int64_t kSymbolBound = 9;

/// Where maxValue saturates, far above any cap that is compared with it.
inline constexpr int64_t kMaxValueSaturation = int64_t{1} << 40;

/// A polynomial sum of coef * prod(atoms), coefficients > 0. The empty polynomial is 0.
class Poly {
public:
  Poly() = default;
  static Poly constant(int64_t c);
  static Poly atom(int id);

  Poly operator*(const Poly& o) const;
  Poly operator+(const Poly& o) const;
  bool operator==(const Poly& o) const { return terms_ == o.terms_; }
  bool operator!=(const Poly& o) const { return !(*this == o); }
  bool operator<(const Poly& o) const { return terms_ < o.terms_; }

  bool isConstant() const;
  /// The constant value; only meaningful when isConstant().
  int64_t constantValue() const;
  /// One term (c * atoms); constants count as monomials.
  bool isMonomial() const { return terms_.size() <= 1; }
  /// For a monomial: its coefficient (0 for the zero polynomial) and its atoms (sorted ids).
  int64_t coefficient() const;
  std::vector<int> atoms() const;
  /// The smallest value over every binding: atoms at 0 (mayBeZero) or 1. Exact because every
  /// coefficient is positive.
  int64_t minValue(const std::vector<Atom>& table) const;
  /// An upper bound over the bindings whose symbols are at most kSymbolBound: every atom at its
  /// maxValue (exact bound because every coefficient is positive), saturating at
  /// kMaxValueSaturation.
  int64_t maxValue(const std::vector<Atom>& table) const;
  /// The value when each atom takes `values[id]`.
  int64_t evaluate(const std::vector<int64_t>& values) const;
  /// "2*N0*N1 + s3".
  std::string text(const std::vector<Atom>& table) const;

private:
  std::map<std::vector<int>, int64_t> terms_;
};

} // namespace dynqual::fuzz
