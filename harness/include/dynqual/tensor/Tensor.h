#pragma once
// A dense, row-major, host tensor: dtype, dims and raw little-endian bytes.

#include "dynqual/tensor/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dynqual {

/// Dense row-major tensor owning its bytes. Rank 0 (a scalar, one element) and zero-size dims
/// (no elements) are legal. Element i of a float tensor is read and written as double, of an
/// integer or bool tensor as int64; both accessors work on every dtype with C++ conversion rules
/// documented on each method.
class Tensor {
public:
  /// An empty f32 scalar-less tensor (dims {0}); mainly so Tensor can live in containers.
  Tensor();

  /// Zero-filled tensor. Throws std::invalid_argument when a dim is negative or the byte size
  /// overflows size_t.
  Tensor(DType dtype, std::vector<int64_t> dims);

  /// Tensor over the given bytes. Throws std::invalid_argument when bytes.size() is not
  /// numel * dtypeSize(dtype).
  Tensor(DType dtype, std::vector<int64_t> dims, std::vector<uint8_t> bytes);

  /// f32/f16/bf16/f64 (or any dtype) tensor filled from doubles via setDouble.
  static Tensor fromDoubles(DType dtype, std::vector<int64_t> dims, const std::vector<double>& values);
  /// Integer/bool (or any dtype) tensor filled from int64 via setInt.
  static Tensor fromInts(DType dtype, std::vector<int64_t> dims, const std::vector<int64_t>& values);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  /// Product of dims (1 for rank 0, 0 when any dim is 0).
  int64_t numel() const { return numel_; }
  std::size_t elementSize() const { return dtypeSize(dtype_); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  std::vector<uint8_t>& bytes() { return bytes_; }
  const uint8_t* elementPtr(int64_t i) const { return bytes_.data() + i * elementSize(); }
  uint8_t* elementPtr(int64_t i) { return bytes_.data() + i * elementSize(); }

  /// Element i as double: exact for every float dtype and for integers below 2^53; bool is 0 or 1.
  /// Throws std::out_of_range when i is outside [0, numel).
  double getDouble(int64_t i) const;
  /// Element i as int64: floats are truncated toward zero (NaN -> 0, out-of-range saturates).
  /// Throws std::out_of_range when i is outside [0, numel).
  int64_t getInt(int64_t i) const;
  /// Stores v rounded to the dtype: floats round to nearest even; integers truncate toward zero,
  /// saturate to int64 (NaN -> 0), then wrap modulo 2^bits; bool stores v != 0 (NaN -> true).
  void setDouble(int64_t i, double v);
  /// Stores v: integers wrap modulo 2^bits; floats round to nearest even; bool stores v != 0.
  void setInt(int64_t i, int64_t v);

  /// All elements as double / int64 (see getDouble / getInt).
  std::vector<double> toDoubles() const;
  std::vector<int64_t> toInts() const;

  /// Same dtype, same dims, same bytes (so +0 != -0 and NaNs compare by payload).
  bool operator==(const Tensor& other) const;
  bool operator!=(const Tensor& other) const { return !(*this == other); }

  /// A copy with other dims and the same bytes. Throws std::invalid_argument when the element
  /// count differs.
  Tensor reshaped(std::vector<int64_t> dims) const;

private:
  void checkIndex(int64_t i) const;

  DType dtype_;
  std::vector<int64_t> dims_;
  int64_t numel_;
  std::vector<uint8_t> bytes_;
};

/// Element count of a shape. Throws std::invalid_argument when a dim is negative or the count
/// overflows int64.
int64_t shapeNumel(const std::vector<int64_t>& dims);

/// "[2, 0, 3]"-style rendering of a shape for error messages and reports.
std::string shapeToString(const std::vector<int64_t>& dims);

/// Row-major strides in elements (the last dim has stride 1).
std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& dims);

} // namespace dynqual
