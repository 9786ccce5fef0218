#pragma once
// Building blocks for generated ONNX graphs, shared by `dynqual make-model` and the shape fuzzer
// (fuzz/): a fixed-recurrence random stream, a node appender with unique output names,
// attribute and value-info helpers, and deterministic serialization.
#include "dynqual/tensor/Tensor.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace dynqual::modelgen {

/// SplitMix64 (Steele, Lea, Flood 2014): a fixed integer recurrence, so generated weights and
/// graphs do not depend on the standard library's distributions.
class Random {
public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next();
  /// Uniform in [-1, 1) on a 2^-23 grid (exact in float).
  double symmetric();
  /// Uniform integer in [lo, hi] (hi >= lo), by modulo (bias < 2^-40 for small ranges).
  int64_t range(int64_t lo, int64_t hi);
  /// True with probability `p` (0..1), on a 2^-24 grid.
  bool chance(double p);

private:
  uint64_t state_;
};

/// Appends nodes to a graph with generated, unique output names ("<Op>_<k>_out").
class GraphBuilder {
public:
  explicit GraphBuilder(onnx::GraphProto& g) : g_(g) {}

  /// Appends one node with one output; returns the output name.
  std::string node(const std::string& op, const std::vector<std::string>& inputs,
                   const std::vector<onnx::AttributeProto>& attrs = {});
  /// Appends one node with `outputs` outputs; returns their names.
  std::vector<std::string> nodeN(const std::string& op, const std::vector<std::string>& inputs, int outputs,
                                 const std::vector<onnx::AttributeProto>& attrs = {});
  /// Renames the output of the last node (graph outputs keep their declared names).
  void nameLast(const std::string& name);

  /// Adds an initializer; returns `name`.
  std::string initializer(const std::string& name, const Tensor& t);
  /// An int64 initializer: a vector of `values`, or a rank-0 tensor when `scalar` (one value).
  std::string ints(const std::string& name, std::vector<int64_t> values, bool scalar = false);
  /// A rank-0 float initializer.
  std::string floatScalar(const std::string& name, double v);

  onnx::GraphProto& graph() { return g_; }

private:
  onnx::GraphProto& g_;
  int count_ = 0;
};

/// An INT attribute.
onnx::AttributeProto intAttr(const std::string& name, int64_t v);
/// A FLOAT attribute.
onnx::AttributeProto floatAttr(const std::string& name, float v);
/// An INTS attribute.
onnx::AttributeProto intsAttr(const std::string& name, const std::vector<int64_t>& v);
/// A TENSOR attribute.
onnx::AttributeProto tensorAttr(const std::string& name, const Tensor& t);

/// Fills a tensor value info: `elemType` (TensorProto code); dims[i] non-empty = dim_param,
/// empty = sizes[i] as dim_value, or (sizes[i] < 0) a dim with neither (unknown).
void declare(onnx::ValueInfoProto* vi, const std::string& name, int elemType, const std::vector<std::string>& dims,
             const std::vector<int64_t>& sizes);

/// A ModelProto with IR version 8, one default-domain opset import of `opset`, and `producer`.
onnx::ModelProto newModel(const std::string& producer, int64_t opset);

/// The model's bytes with deterministic protobuf serialization (same model, same bytes).
/// Throws std::runtime_error when the model cannot be serialized.
std::string serializeDeterministic(const onnx::ModelProto& model);

/// Writes serializeDeterministic(model) to `file`. Throws std::runtime_error naming the file.
void writeModel(const onnx::ModelProto& model, const std::filesystem::path& file);

} // namespace dynqual::modelgen
