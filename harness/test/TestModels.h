#pragma once
// Builders of tiny ONNX models for tests (graphs of a few nodes, written with libonnx).

#include "dynqual/tensor/Tensor.h"

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace dynqual::test {

/// A ValueInfoProto of a tensor; dims of -1 become a dim_param named "d<axis>".
inline onnx::ValueInfoProto tensorValue(const std::string& name, DType dtype, const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto v;
  v.set_name(name);
  auto* t = v.mutable_type()->mutable_tensor_type();
  t->set_elem_type(static_cast<int32_t>(dtype));
  auto* shape = t->mutable_shape();
  for (std::size_t i = 0; i < dims.size(); ++i) {
    auto* d = shape->add_dim();
    if (dims[i] < 0)
      d->set_dim_param("d" + std::to_string(i));
    else
      d->set_dim_value(dims[i]);
  }
  return v;
}

/// A model with the given opset whose graph has the given inputs and outputs (no nodes yet).
inline onnx::ModelProto emptyModel(int64_t opset, const std::vector<onnx::ValueInfoProto>& inputs,
                                   const std::vector<onnx::ValueInfoProto>& outputs) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("test");
  for (const auto& i : inputs)
    *g->add_input() = i;
  for (const auto& o : outputs)
    *g->add_output() = o;
  return m;
}

/// Appends a node to the model's graph and returns it, for adding attributes.
inline onnx::NodeProto* addNode(onnx::ModelProto& m, const std::string& opType, const std::vector<std::string>& inputs,
                                const std::vector<std::string>& outputs) {
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type(opType);
  n->set_name(opType + "_" + std::to_string(m.graph().node_size()));
  for (const auto& i : inputs)
    n->add_input(i);
  for (const auto& o : outputs)
    n->add_output(o);
  return n;
}

inline void setIntAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

inline void setFloatAttr(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

inline void setIntsAttr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v)
    a->add_ints(x);
}

/// A model of one node of `opType` over the given inputs (dtype and dims taken from the sample
/// tensors, declared static) with `outputCount` outputs named y0, y1, ... of undeclared shape.
inline onnx::ModelProto singleNodeModel(const std::string& opType, const std::vector<Tensor>& inputs, int64_t opset,
                                        int outputCount = 1, DType outputType = DType::Float) {
  std::vector<onnx::ValueInfoProto> ins, outs;
  std::vector<std::string> inNames, outNames;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    inNames.push_back("x" + std::to_string(i));
    ins.push_back(tensorValue(inNames.back(), inputs[i].dtype(), inputs[i].dims()));
  }
  for (int i = 0; i < outputCount; ++i) {
    outNames.push_back("y" + std::to_string(i));
    onnx::ValueInfoProto v;
    v.set_name(outNames.back());
    v.mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(outputType));
    outs.push_back(v);
  }
  onnx::ModelProto m = emptyModel(opset, ins, outs);
  addNode(m, opType, inNames, outNames);
  return m;
}

} // namespace dynqual::test
