#include "dynqual/modelgen/GraphBuilder.h"

#include "dynqual/onnx/TensorProtoIO.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cmath>
#include <fstream>
#include <stdexcept>

namespace dynqual::modelgen {

uint64_t Random::next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double Random::symmetric() {
  return static_cast<double>(next() >> 40) * std::ldexp(1.0, -23) - 1.0;
}

int64_t Random::range(int64_t lo, int64_t hi) {
  if (hi <= lo)
    return lo;
  return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
}

bool Random::chance(double p) {
  return static_cast<double>(next() >> 40) < p * static_cast<double>(1ull << 24);
}

std::vector<std::string> GraphBuilder::nodeN(const std::string& op, const std::vector<std::string>& inputs, int outputs,
                                             const std::vector<onnx::AttributeProto>& attrs) {
  auto* n = g_.add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + std::to_string(count_++));
  for (const auto& i : inputs)
    n->add_input(i);
  std::vector<std::string> outs;
  for (int k = 0; k < outputs; ++k) {
    outs.push_back(n->name() + (outputs == 1 ? "_out" : "_out" + std::to_string(k)));
    n->add_output(outs.back());
  }
  for (const auto& a : attrs)
    *n->add_attribute() = a;
  return outs;
}

std::string GraphBuilder::node(const std::string& op, const std::vector<std::string>& inputs,
                               const std::vector<onnx::AttributeProto>& attrs) {
  return nodeN(op, inputs, 1, attrs)[0];
}

void GraphBuilder::nameLast(const std::string& name) {
  g_.mutable_node(g_.node_size() - 1)->set_output(0, name);
}

std::string GraphBuilder::initializer(const std::string& name, const Tensor& t) {
  *g_.add_initializer() = onnxio::tensorToProto(t, name);
  return name;
}

std::string GraphBuilder::ints(const std::string& name, std::vector<int64_t> values, bool scalar) {
  std::vector<int64_t> dims = scalar ? std::vector<int64_t>{} : std::vector<int64_t>{int64_t(values.size())};
  return initializer(name, Tensor::fromInts(DType::Int64, dims, values));
}

std::string GraphBuilder::floatScalar(const std::string& name, double v) {
  return initializer(name, Tensor::fromDoubles(DType::Float, {}, {v}));
}

onnx::AttributeProto intAttr(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}

onnx::AttributeProto floatAttr(const std::string& name, float v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}

onnx::AttributeProto intsAttr(const std::string& name, const std::vector<int64_t>& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v)
    a.add_ints(x);
  return a;
}

onnx::AttributeProto tensorAttr(const std::string& name, const Tensor& t) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::TENSOR);
  *a.mutable_t() = onnxio::tensorToProto(t, "");
  return a;
}

void declare(onnx::ValueInfoProto* vi, const std::string& name, int elemType, const std::vector<std::string>& dims,
             const std::vector<int64_t>& sizes) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elemType);
  auto* shape = tt->mutable_shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    auto* d = shape->add_dim();
    if (!dims[i].empty())
      d->set_dim_param(dims[i]);
    else if (sizes[i] >= 0)
      d->set_dim_value(sizes[i]);
  }
}

onnx::ModelProto newModel(const std::string& producer, int64_t opset) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name(producer);
  auto* op = model.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  return model;
}

std::string serializeDeterministic(const onnx::ModelProto& model) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    if (!model.SerializeToCodedStream(&coded))
      throw std::runtime_error("cannot serialize the model '" + model.graph().name() + "'");
  }
  return bytes;
}

void writeModel(const onnx::ModelProto& model, const std::filesystem::path& file) {
  std::string bytes;
  try {
    bytes = serializeDeterministic(model);
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  }
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out)
    throw std::runtime_error(file.string() + ": cannot write (check the folder is writable)");
}

} // namespace dynqual::modelgen
