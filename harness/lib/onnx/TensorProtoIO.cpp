#include "dynqual/onnx/TensorProtoIO.h"

#include <bit>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace dynqual::onnxio {
namespace {

// raw_data is little-endian by the ONNX spec; Tensor bytes are host order.
static_assert(std::endian::native == std::endian::little, "big-endian hosts are unsupported");

[[noreturn]] void fail(const std::string& context, const std::string& what) {
  throw std::runtime_error(context + ": " + what);
}

template <typename Field>
void checkCount(const Field& field, int64_t numel, const char* fieldName, const std::string& context) {
  if (static_cast<int64_t>(field.size()) != numel)
    fail(context, std::string(fieldName) + " holds " + std::to_string(field.size()) + " values but dims need " +
                      std::to_string(numel));
}

/// memcpy of `n` bytes that allows an empty tensor: the buffers of a 0-element tensor and of an
/// empty repeated field may be null, and memcpy with a null pointer is undefined even for 0 bytes.
void copyBytes(void* dst, const void* src, std::size_t n) {
  if (n != 0)
    std::memcpy(dst, src, n);
}

} // namespace

Tensor tensorFromProto(const onnx::TensorProto& proto, const std::string& context) {
  if (proto.data_type() == onnx::TensorProto::STRING)
    fail(context, "unsupported: string tensors");
  DType dtype;
  try {
    dtype = dtypeFromOnnx(proto.data_type());
  } catch (const std::exception& e) {
    fail(context, e.what());
  }
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    fail(context, "external data was not resolved (load the model with loadModel)");
  if (proto.has_segment())
    fail(context, "unsupported: segmented tensors");
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  for (int64_t d : dims)
    if (d < 0)
      fail(context, "negative dim in " + shapeToString(dims));
  Tensor t(dtype, dims);
  const int64_t n = t.numel();

  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (raw.size() != t.bytes().size())
      fail(context, "raw_data holds " + std::to_string(raw.size()) + " bytes but " + std::string(dtypeName(dtype)) +
                        " " + shapeToString(dims) + " needs " + std::to_string(t.bytes().size()));
    copyBytes(t.bytes().data(), raw.data(), raw.size());
    return t;
  }

  switch (dtype) {
  case DType::Float:
    checkCount(proto.float_data(), n, "float_data", context);
    copyBytes(t.bytes().data(), proto.float_data().data(), n * sizeof(float));
    break;
  case DType::Double:
    checkCount(proto.double_data(), n, "double_data", context);
    copyBytes(t.bytes().data(), proto.double_data().data(), n * sizeof(double));
    break;
  case DType::Int64:
    checkCount(proto.int64_data(), n, "int64_data", context);
    copyBytes(t.bytes().data(), proto.int64_data().data(), n * sizeof(int64_t));
    break;
  case DType::Float16:
  case DType::BFloat16:
    checkCount(proto.int32_data(), n, "int32_data", context);
    for (int64_t i = 0; i < n; ++i) {
      const auto bits = static_cast<uint16_t>(proto.int32_data(i));
      std::memcpy(t.elementPtr(i), &bits, 2);
    }
    break;
  case DType::Int32:
  case DType::Int8:
  case DType::Uint8:
  case DType::Bool:
    checkCount(proto.int32_data(), n, "int32_data", context);
    for (int64_t i = 0; i < n; ++i)
      t.setInt(i, proto.int32_data(i));
    break;
  }
  return t;
}

onnx::TensorProto tensorToProto(const Tensor& tensor, const std::string& name) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(static_cast<int32_t>(tensor.dtype()));
  for (int64_t d : tensor.dims())
    proto.add_dims(d);
  proto.set_raw_data(std::string(reinterpret_cast<const char*>(tensor.bytes().data()), tensor.bytes().size()));
  return proto;
}

Tensor readTensorFile(const std::filesystem::path& file, std::string& nameOut) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw std::runtime_error(file.string() + ": cannot open tensor file");
  onnx::TensorProto proto;
  if (!proto.ParseFromIstream(&in))
    throw std::runtime_error(file.string() + ": not a serialized onnx TensorProto");
  nameOut = proto.name();
  return tensorFromProto(proto, file.string());
}

Tensor readTensorFile(const std::filesystem::path& file) {
  std::string ignored;
  return readTensorFile(file, ignored);
}

void writeTensorFile(const std::filesystem::path& file, const Tensor& tensor, const std::string& name) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out)
    throw std::runtime_error(file.string() + ": cannot open for writing");
  if (!tensorToProto(tensor, name).SerializeToOstream(&out) || !out.flush())
    throw std::runtime_error(file.string() + ": write failed");
}

} // namespace dynqual::onnxio
