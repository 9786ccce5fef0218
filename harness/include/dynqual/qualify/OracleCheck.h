#pragma once
// `dynqual oracle`: every data set of a model run three ways, the compiler under test (dq), the
// stored CPU-reference outputs and onnxruntime's CPU provider (ort:cpu), with the three pairwise
// comparisons under hip-ep's tolerances. A reference/ORT disagreement is its own finding kind
// ("oracle-disagreement"), never averaged away.
#include "dynqual/exec/Executor.h"
#include "dynqual/tensor/Tensor.h"

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>
#include <vector>

namespace dynqual::qualify {

/// allclose(a, b): |a - b| <= atol + rtol * |b| for every element (numpy.allclose), plus the
/// cosine of the flattened outputs >= minCosine. hip-ep's contrib-op tests use atol = rtol =
/// 1e-3 for GroupQueryAttention and 5e-2 for MatMulNBits with cosine >= 0.999.
struct OracleTolerance {
  double atol = 1e-3;
  double rtol = 1e-3;
  double minCosine = 0.999;
};

/// The tolerance of a model: the loosest of its ops' (MatMulNBits 5e-2, else 1e-3).
OracleTolerance toleranceFor(const onnx::ModelProto& model);

/// One pairwise comparison over all outputs of a data set. `expected` is the second side.
struct PairCheck {
  bool ok = false;
  int64_t outside = 0;     ///< elements outside allclose (a NaN/Inf mismatch counts as outside)
  int64_t elements = 0;    ///< elements compared
  double maxAbs = 0;       ///< max |a - b| over finite pairs
  double minCosine = 1;    ///< the smallest per-output cosine
  std::string worstOutput; ///< the output with the most elements outside (empty when ok)
  std::string error;       ///< set when the sides cannot be compared (count, shape or dtype)
};

/// Elements left out of a comparison, per output (empty = none): values one side leaves undefined.
using ElementMask = std::vector<std::vector<bool>>;

/// Compares two output lists under `tol`, skipping the elements `skip` marks; never throws.
PairCheck checkPair(const std::vector<std::string>& names, const std::vector<Tensor>& actual,
                    const std::vector<Tensor>& expected, const OracleTolerance& tol, const ElementMask& skip = {});

/// The outputs onnxruntime leaves undefined for these inputs: a one-node GroupQueryAttention first
/// prompt (S == total_sequence_length) whose row b holds seqlens_k[b] + 1 < S tokens. ORT scores
/// only the row's first seqlens_k[b] + 1 keys, so the output of query positions past them reads
/// scores it never wrote. Empty when nothing is undefined.
ElementMask ortUndefinedOutputs(const onnx::ModelProto& model, const std::vector<Tensor>& inputs,
                                const std::vector<Tensor>& outputs);

/// One data set of one model.
struct OracleCase {
  std::string model;   ///< model folder name
  std::string dataSet; ///< test_data_set_K
  std::string ops;     ///< the model's op types, comma separated (domain-qualified outside the default)
  std::string notes;   ///< e.g. "ORT ran a copy with accuracy_level rewritten to 0"
  PairCheck dqRef, refOrt, dqOrt;
  int64_t skippedForOrt = 0;     ///< elements ORT leaves undefined, left out of the ORT comparisons
  std::string dqError, ortError; ///< an arm that failed to compile or run (its message)
  /// "pass", "dq-mismatch" (dq against the reference), "oracle-disagreement" (reference against
  /// ORT), "dq-error" or "ort-error".
  std::string verdict;
};

/// Where the arms run.
struct OracleConfig {
  std::filesystem::path workDir; ///< artifacts, the ORT model copies and outputs go under here
  std::filesystem::path binDir;  ///< folder holding dynqual and dynqual-exec
  std::string device = "sim";    ///< the dq arm's device
  std::string pipeline = "production";
  double timeoutSeconds = 300;
};

/// Runs every test_data_set_K of `modelDir` on dq and ort:cpu and compares both with the stored
/// outputs (the reference's) and with each other. A model with a MatMulNBits of accuracy_level
/// other than 0 runs on ORT as a rewritten copy (level 0), said in notes: at level 4 ORT quantizes
/// A to int8, a different computation. Arm failures become per-case verdicts; throws only
/// std::runtime_error naming the folder when model.onnx cannot be read or it has no data set.
std::vector<OracleCase> checkModelAgainstOracles(const std::filesystem::path& modelDir, const OracleConfig& config);

} // namespace dynqual::qualify
