#pragma once
// Comparison of computed outputs against expected ones. Formulas: docs/metrics/*.md.

#include "dynqual/tensor/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dynqual::compare {

/// Gates and modes. The defaults are the project's qualification gates.
struct CompareOptions {
  /// Float outputs must match bit for bit (NaN payloads aside). Use for graphs that only move
  /// data (see isDataMovementOnly), where any difference is a bug, not rounding.
  bool bitExact = false;
  /// Pass when relL2 <= relL2Gate (docs/metrics/relative-l2.md).
  double relL2Gate = 1e-5;
  /// Gates of f16 and bf16 outputs; a negative value means relL2Gate applies (the default).
  double relL2GateF16 = -1;
  double relL2GateBF16 = -1;
  /// The relative-L2 gate of an output of dtype `t`.
  double relL2GateFor(DType t) const {
    if (t == DType::Float16 && relL2GateF16 >= 0)
      return relL2GateF16;
    if (t == DType::BFloat16 && relL2GateBF16 >= 0)
      return relL2GateBF16;
    return relL2Gate;
  }
  /// When ||expected|| = 0 the relative L2 is undefined; pass when l2 <= absL2GateZeroNorm.
  double absL2GateZeroNorm = 1e-6;
};

/// The gates of accuracy reports on `device` (docs/metrics/relative-l2.md, "Device gates"):
/// "sim" computes like the reference (double, rounded once) and keeps the defaults (1e-5 for
/// every float dtype); every other device ("hip", and "sim-elem", the sim's element-type
/// precision mode) computes in fp32 with fp32 accumulation: relL2 <= 1e-4 for f32 and f64,
/// 5e-3 for f16, 4e-2 for bf16.
CompareOptions gatesForDevice(const std::string& device);

enum class Verdict { Pass, Fail };

/// Result of comparing one output.
struct OutputComparison {
  std::string name;
  Verdict verdict = Verdict::Fail;
  /// Why it failed ("shape [2, 3] vs [3, 2]", "rel-L2 1.2e-3 > 1e-05", ...); for a pass, the
  /// mode that decided it ("exact", "bit-exact", "rel-L2", "abs-L2 (zero norm)", "empty").
  std::string reason;
  DType dtype = DType::Float;
  std::vector<int64_t> shape; ///< expected shape
  int64_t elements = 0;
  bool isFloat = false;
  /// Float metrics over elements finite on both sides (0 for non-float outputs):
  double l2 = 0;                 ///< sqrt(sum (a-b)^2)
  double expectedNorm = 0;       ///< ||b|| = sqrt(sum b^2)
  double relL2 = 0;              ///< l2 / expectedNorm, or 0 when both are 0, +inf when only l2 > 0
  double maxAbs = 0;             ///< max |a-b|
  double cosine = 1;             ///< sum ab / (||a|| ||b||); 1 when both norms are 0, 0 when one is
  int64_t nonFiniteSkipped = 0;  ///< elements where a or b is NaN or +-Inf
  int64_t mismatches = 0;        ///< integer/bool/bit-exact: differing elements; float: NaN/Inf pattern differences
  double sumSquaredDiff = 0;     ///< sum (a-b)^2, kept so outputs can be combined
  double sumSquaredExpected = 0; ///< sum b^2
};

/// Result of comparing all outputs of one run.
struct Comparison {
  std::vector<OutputComparison> outputs;
  Verdict verdict = Verdict::Fail; ///< Pass iff every output passes and the counts match
  std::string reason;              ///< first failure ("output 'y': ..."), or "" on pass
  /// Combined metrics over all float outputs that were compared numerically:
  /// combinedL2 = sqrt(sum over outputs of sum (a-b)^2), combinedRelL2 = combinedL2 / sqrt(sum b^2).
  double combinedL2 = 0;
  double combinedRelL2 = 0;
};

/// Compares `actual` (a) with `expected` (b):
///  - dtype and shape must be equal;
///  - integer and bool: every element equal;
///  - float with options.bitExact: equal bit patterns, except that any NaN equals any NaN;
///  - float otherwise: the NaN/+Inf/-Inf class of each element must be equal on both sides
///    (else fail); over elements finite on both sides, l2, maxAbs, cosine; pass iff
///    relL2 <= relL2Gate, or when ||b|| = 0, iff l2 <= absL2GateZeroNorm.
/// Never throws for mismatching inputs: every difference is a Fail with a reason.
OutputComparison compareOutput(const std::string& name, const Tensor& actual, const Tensor& expected,
                               const CompareOptions& options = {});

/// Compares outputs pairwise (names[i] names output i; may be shorter, then "output i").
/// A count mismatch is a Fail. Combined metrics as documented on Comparison.
Comparison compareOutputs(const std::vector<std::string>& names, const std::vector<Tensor>& actual,
                          const std::vector<Tensor>& expected, const CompareOptions& options = {});

/// "pass" or "fail".
const char* verdictName(Verdict v);

} // namespace dynqual::compare
