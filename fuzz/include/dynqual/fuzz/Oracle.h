#pragma once
// The multi-binding oracle: a generated case is valid when libonnx's checker and shape inference
// accept it and the CPU reference runs it on all K bindings; it is then compiled once per variant
// and run on every binding, through the executor (child processes with limits) or through an
// in-process engine (the persistent worker), and every difference is a finding
// (docs/fuzz/oracles.md).
#include "dynqual/exec/Executor.h"
#include "dynqual/fuzz/CaseEngine.h"
#include "dynqual/exec/Variant.h"
#include "dynqual/reference/Interpreter.h"
#include "dynqual/onnx/ShapeBindings.h"
#include "dynqual/tensor/Tensor.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dynqual::fuzz {

/// A case that is not valid (checker, shape inference or the reference rejected it). Not a
/// finding: it counts against the valid rate.
class InvalidCase : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Most elements the reference may hold on one binding (graph inputs plus every node output,
/// summed; at most 8 bytes each, so 256 MiB): a case past it is invalid, not a finding. Far
/// above what the generator's graphs need (docs/fuzz/generator.md caps each value at 2^20
/// elements), and low enough that the compiled run, the reference's outputs of all K bindings
/// and the worker fit in the worker's memory limit (4 GiB by default) together, so that the
/// compiled run running out of memory on a case within it is a finding of its own.
inline constexpr int64_t kReferenceElementLimit = int64_t{1} << 25;
/// Most seconds the reference may take on one binding (checked after each node): half the
/// default run timeout, so that a compiled run that hangs is told from a slow reference.
inline constexpr double kReferenceSecondsLimit = 10;

/// The limits prepareCase applies by default.
inline reference::EvaluateLimits defaultReferenceLimits() {
  return {kReferenceElementLimit, kReferenceSecondsLimit};
}

/// A case made ready to run: the model plus K bindings with their inputs and the reference's
/// expected outputs.
struct PreparedCase {
  onnx::ModelProto model;
  std::vector<onnxio::NamedBinding> bindings;
  std::vector<std::vector<Tensor>> inputs;   ///< per binding, graph input order
  std::vector<std::vector<Tensor>> expected; ///< per binding, graph output order (reference)
  std::vector<std::string> outputNames;
  double checkMs = 0;     ///< checker + shape inference, ms
  double referenceMs = 0; ///< reference over all bindings, ms
};

/// Throws InvalidCase naming the checker's or shape inference's complaint.
void checkModel(const onnx::ModelProto& model);

/// Checks the model and builds `k` bindings of its dim symbols with cases::fuzzPolicy (all
/// ones, asymmetric, larger than the traced size 3, then seeded random; the binding that puts a
/// symbol at 0 is left out because symbols are >= 1 by construction), inputs from
/// onnxio::generateInputs (seeded by `seed`), and reference outputs. A model without dynamic dims
/// gets one binding. `onlyBinding` >= 0 keeps only that binding (minimization). Throws
/// InvalidCase when any step rejects the model. `check` = false leaves the checker and shape
/// inference out (replaying hand-written corpus models). The reference runs within `limits`:
/// past one, or when it fails in any other way (an error, std::bad_alloc) on any binding, the
/// case is an InvalidCase, never a finding. With `check`, a binding on which an output's
/// computed shape contradicts a static dim the model declares (onnxio::declaredOutputContradiction)
/// is an InvalidCase too: the compiled program would trap at its boundary for that reason alone.
PreparedCase prepareCase(const onnx::ModelProto& model, int k, uint64_t seed, int onlyBinding = -1, bool check = true,
                         const reference::EvaluateLimits& limits = defaultReferenceLimits());

/// As prepareCase with exactly one given binding (a shrunk one), its inputs seeded as binding
/// `dataIndex` of prepareCase would be, so an unchanged binding keeps its input values. Dims
/// of `model` that `binding` leaves unbound are an InvalidCase.
PreparedCase prepareCaseOn(const onnx::ModelProto& model, const onnxio::DimBinding& binding, uint64_t seed,
                           int dataIndex, bool check = true,
                           const reference::EvaluateLimits& limits = defaultReferenceLimits());

/// "N0=2 N1=3" (labels, then unnamed dims as input<i>[<axis>]=v), or "static" when empty.
std::string describeBinding(const onnxio::DimBinding& binding);

/// Where the oracle runs and what it compares.
struct OracleConfig {
  std::vector<exec::Variant> variants = {exec::Variant{}}; ///< default dq:production@sim
  std::filesystem::path binDir;                            ///< folder with dynqual and dynqual-exec
  double compileTimeoutSeconds = 60;
  double runTimeoutSeconds = 20;
  bool ortOracle = false;       ///< also run ort:cpu; reference vs ORT differences are findings
  std::vector<std::string> env; ///< NAME=VALUE for the child processes
  /// Set: dq variants compile and run through this engine, in this process, and no case files
  /// are written unless an ort variant needs them. Unset: child processes (exec::Executor).
  std::shared_ptr<CaseEngine> engine;
};

/// One finding of one case.
struct Finding {
  /// compile-error, compile-crash, compile-hang, run-trap, run-crash, run-hang, wrong-shape,
  /// mismatch, variant-disagreement, oracle-disagreement.
  std::string symptom;
  std::string detail;  ///< one line
  std::string variant; ///< canonical variant text
  int binding = -1;    ///< index into PreparedCase::bindings, -1 for compile findings
  std::string bindingText;
};

/// What the oracle saw on one case.
struct OracleResult {
  std::vector<Finding> findings; ///< at most one per (variant, symptom)
  /// Device counters of the first dq variant, summed over its bindings (compiler paths).
  std::map<std::string, uint64_t> counters;
  double compileMs = 0; ///< compiles (children or in-process), wall ms
  double runMs = 0;     ///< runs (children or in-process), wall ms
};

/// Compiles `pc` once per variant under `workDir` and runs it on every binding. With
/// config.engine set and env empty, dq variants go through the engine. Throws
/// exec::ExecError with Stage::Infra when a variant cannot run here at all (binaries missing,
/// runner not installed); every other failure is a Finding.
OracleResult runOracle(const PreparedCase& pc, const OracleConfig& config, const std::filesystem::path& workDir);

/// True when the symptom is about the compile (no binding involved).
bool isCompileSymptom(const std::string& symptom);

} // namespace dynqual::fuzz
