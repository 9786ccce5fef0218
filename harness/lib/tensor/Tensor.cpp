#include "dynqual/tensor/Tensor.h"

#include "dynqual/tensor/HalfFloat.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace dynqual {
namespace {

template <typename T> T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T> void store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// Truncate toward zero into int64, saturating; NaN maps to 0.
int64_t truncToInt64(double v) {
  if (std::isnan(v))
    return 0;
  if (v >= 9223372036854775808.0)
    return std::numeric_limits<int64_t>::max();
  if (v < -9223372036854775808.0)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

} // namespace

int64_t shapeNumel(const std::vector<int64_t>& dims) {
  for (int64_t d : dims)
    if (d < 0)
      throw std::invalid_argument("negative dim in shape " + shapeToString(dims));
  for (int64_t d : dims)
    if (d == 0)
      return 0;
  int64_t n = 1;
  for (int64_t d : dims) {
    if (n > std::numeric_limits<int64_t>::max() / d)
      throw std::invalid_argument("element count of shape " + shapeToString(dims) + " overflows int64");
    n *= d;
  }
  return n;
}

std::string shapeToString(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return strides;
}

Tensor::Tensor() : Tensor(DType::Float, {0}) {
}

Tensor::Tensor(DType dtype, std::vector<int64_t> dims)
    : dtype_(dtype), dims_(std::move(dims)), numel_(shapeNumel(dims_)) {
  const auto esize = static_cast<int64_t>(dtypeSize(dtype_));
  if (numel_ > std::numeric_limits<int64_t>::max() / esize)
    throw std::invalid_argument("byte size of shape " + shapeToString(dims_) + " overflows");
  bytes_.assign(static_cast<std::size_t>(numel_ * esize), 0);
}

Tensor::Tensor(DType dtype, std::vector<int64_t> dims, std::vector<uint8_t> bytes)
    : dtype_(dtype), dims_(std::move(dims)), numel_(shapeNumel(dims_)), bytes_(std::move(bytes)) {
  const auto expected = static_cast<uint64_t>(numel_) * dtypeSize(dtype_);
  if (bytes_.size() != expected)
    throw std::invalid_argument(std::string("tensor of ") + dtypeName(dtype_) + " " + shapeToString(dims_) + " needs " +
                                std::to_string(expected) + " bytes, got " + std::to_string(bytes_.size()));
}

Tensor Tensor::fromDoubles(DType dtype, std::vector<int64_t> dims, const std::vector<double>& values) {
  Tensor t(dtype, std::move(dims));
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw std::invalid_argument("fromDoubles: " + std::to_string(values.size()) + " values for shape " +
                                shapeToString(t.dims()));
  for (int64_t i = 0; i < t.numel(); ++i)
    t.setDouble(i, values[i]);
  return t;
}

Tensor Tensor::fromInts(DType dtype, std::vector<int64_t> dims, const std::vector<int64_t>& values) {
  Tensor t(dtype, std::move(dims));
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw std::invalid_argument("fromInts: " + std::to_string(values.size()) + " values for shape " +
                                shapeToString(t.dims()));
  for (int64_t i = 0; i < t.numel(); ++i)
    t.setInt(i, values[i]);
  return t;
}

void Tensor::checkIndex(int64_t i) const {
  if (i < 0 || i >= numel_)
    throw std::out_of_range("element " + std::to_string(i) + " outside tensor of shape " + shapeToString(dims_));
}

double Tensor::getDouble(int64_t i) const {
  checkIndex(i);
  const uint8_t* p = elementPtr(i);
  switch (dtype_) {
  case DType::Float:
    return load<float>(p);
  case DType::Double:
    return load<double>(p);
  case DType::Float16:
    return halfBitsToDouble(load<uint16_t>(p));
  case DType::BFloat16:
    return bfloat16BitsToDouble(load<uint16_t>(p));
  case DType::Uint8:
    return load<uint8_t>(p);
  case DType::Int8:
    return load<int8_t>(p);
  case DType::Int32:
    return load<int32_t>(p);
  case DType::Int64:
    return static_cast<double>(load<int64_t>(p));
  case DType::Bool:
    return load<uint8_t>(p) ? 1.0 : 0.0;
  }
  throw std::logic_error("getDouble: invalid dtype");
}

int64_t Tensor::getInt(int64_t i) const {
  checkIndex(i);
  const uint8_t* p = elementPtr(i);
  switch (dtype_) {
  case DType::Uint8:
    return load<uint8_t>(p);
  case DType::Int8:
    return load<int8_t>(p);
  case DType::Int32:
    return load<int32_t>(p);
  case DType::Int64:
    return load<int64_t>(p);
  case DType::Bool:
    return load<uint8_t>(p) ? 1 : 0;
  default:
    return truncToInt64(getDouble(i));
  }
}

void Tensor::setDouble(int64_t i, double v) {
  checkIndex(i);
  uint8_t* p = elementPtr(i);
  switch (dtype_) {
  case DType::Float:
    store<float>(p, static_cast<float>(v));
    return;
  case DType::Double:
    store<double>(p, v);
    return;
  case DType::Float16:
    store<uint16_t>(p, doubleToHalfBits(v));
    return;
  case DType::BFloat16:
    store<uint16_t>(p, doubleToBFloat16Bits(v));
    return;
  case DType::Bool:
    store<uint8_t>(p, v != 0.0 ? 1 : 0);
    return; // NaN != 0 is true
  default:
    setInt(i, truncToInt64(v));
    return;
  }
}

void Tensor::setInt(int64_t i, int64_t v) {
  checkIndex(i);
  uint8_t* p = elementPtr(i);
  switch (dtype_) {
  // Conversion of an out-of-range value to an unsigned type wraps modulo 2^bits; to a signed
  // type it does the same since C++20.
  case DType::Uint8:
    store<uint8_t>(p, static_cast<uint8_t>(v));
    return;
  case DType::Int8:
    store<int8_t>(p, static_cast<int8_t>(v));
    return;
  case DType::Int32:
    store<int32_t>(p, static_cast<int32_t>(v));
    return;
  case DType::Int64:
    store<int64_t>(p, v);
    return;
  case DType::Bool:
    store<uint8_t>(p, v != 0 ? 1 : 0);
    return;
  case DType::Float:
    store<float>(p, static_cast<float>(v));
    return; // one rounding from int64
  default:
    setDouble(i, static_cast<double>(v));
    return;
  }
}

std::vector<double> Tensor::toDoubles() const {
  std::vector<double> out(static_cast<std::size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i)
    out[i] = getDouble(i);
  return out;
}

std::vector<int64_t> Tensor::toInts() const {
  std::vector<int64_t> out(static_cast<std::size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i)
    out[i] = getInt(i);
  return out;
}

bool Tensor::operator==(const Tensor& other) const {
  return dtype_ == other.dtype_ && dims_ == other.dims_ && bytes_ == other.bytes_;
}

Tensor Tensor::reshaped(std::vector<int64_t> dims) const {
  if (shapeNumel(dims) != numel_)
    throw std::invalid_argument("cannot reshape " + shapeToString(dims_) + " to " + shapeToString(dims));
  return Tensor(dtype_, std::move(dims), bytes_);
}

} // namespace dynqual
