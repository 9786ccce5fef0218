#pragma once
// The independent CPU reference interpreter: plain C++ evaluation of an ONNX graph.

#include "dynqual/reference/OpRegistry.h"
#include "dynqual/tensor/Tensor.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace dynqual::reference {

/// Thrown when the graph uses an op (or op domain) the reference does not implement. Its message
/// is "unsupported op 'X' (node 'name')".
class UnsupportedOpError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Evaluates the main graph of `model` (external data already resolved, see
/// onnxio::loadModel) on `inputs`, given in the order of the graph's real inputs (graph inputs
/// that are not initializers). Returns one tensor per graph output, in declaration order.
///
/// Floats are computed in double and rounded once to the output dtype; integers wrap modulo
/// 2^bits; integer Div truncates toward zero. Nodes run in file order (ONNX requires
/// topological order).
///
/// Throws UnsupportedOpError for an op outside OpRegistry::builtin() or a non-default domain,
/// and std::runtime_error (naming the input, node or output) when the input count, a dtype,
/// a rank or a static dim does not match the declaration, a node's input is undefined, an op
/// rejects its operands, or a graph output is never produced.
std::vector<Tensor> evaluate(const onnx::ModelProto& model, const std::vector<Tensor>& inputs);

/// Bounds on one evaluation, so that a caller can tell "the reference cannot run this" from an
/// answer. Both are checked after every node (a single node is not interrupted); the element
/// limit also before the ops whose output size comes from data allocate it
/// (OpContext::checkOutputSize), so that it holds before the memory is taken.
struct EvaluateLimits {
  /// Most elements the evaluation may hold: the graph inputs plus every node output computed so
  /// far, summed (the interpreter keeps every value to the end, so this bounds its memory:
  /// elements times at most 8 bytes). 0 = no limit.
  int64_t maxElements = 0;
  /// Most wall-clock seconds the evaluation may take. 0 = no limit.
  double maxSeconds = 0;
};

/// As evaluate(model, inputs), within `limits`: throws LimitExceeded (OpRegistry.h) past either
/// limit.
std::vector<Tensor> evaluate(const onnx::ModelProto& model, const std::vector<Tensor>& inputs,
                             const EvaluateLimits& limits);

} // namespace dynqual::reference
