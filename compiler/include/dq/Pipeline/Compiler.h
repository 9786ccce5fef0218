//===- Compiler.h - compile an ONNX model or MLIR file to a program -*- C++ -*-===//
//
// Plain C++ (no MLIR header): command-line tools call this to run the pipeline given as data.
//
//===----------------------------------------------------------------------===//
#ifndef DQ_PIPELINE_COMPILER_H
#define DQ_PIPELINE_COMPILER_H

#include "dq/runtime/Program.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace dq {

/// Where compilation stops. Onnx: the imported module (no pass run). Dq: after every pipeline
/// element before the first bufferization element (production: conversion, canonicalize, cse).
/// Memref: after the whole pipeline (production: the last memref pass). Dqp: the emitted
/// program.
enum class Stage { Onnx, Dq, Memref, Dqp };

/// "onnx" | "dq" | "memref" | "dqp" -> Stage; nullopt for anything else.
std::optional<Stage> parseStage(std::string_view name);
/// Inverse of parseStage.
const char *stageName(Stage stage);

/// What to compile and what to report.
struct CompileOptions {
  /// "production", "production{inject=KNOB}" (docs/fuzz/knobs.md) or a textual spec in MLIR pass-pipeline syntax
  /// anchored on builtin.module, e.g. "builtin.module(dq-convert-onnx, cse, one-shot-bufferize{...}, func.func(...))".
  std::string pipeline = "production";
  Stage stopAfter = Stage::Dqp;
  /// "" (off), "all", or a pass's command-line name ("dq-pool-allocs", "cse"): the module is
  /// printed after each matching pass into CompileResult::printedIr.
  std::string printIrAfter;
  /// Collect wall-clock time per pass into CompileResult::passTimes.
  bool timing = false;
  /// Recorded as Program::sourceName when not empty (default: the function name).
  std::string sourceName;
};

/// Wall-clock time spent in one pass, summed over every function it ran on, in milliseconds
/// (std::chrono::steady_clock around the pass's run).
struct PassTime {
  std::string pass; ///< command-line name, or the pass name when it has none
  double ms = 0;
};

/// Outcome of one compilation. On failure `ok` is false and `error` is one line naming the op
/// (with its location) or the pipeline element and the problem; the other fields hold what was
/// produced before the failure.
struct CompileResult {
  bool ok = false;
  std::string error;
  /// The pipeline as MLIR prints it after parsing (every option spelled out); this exact text is
  /// recorded in the program and reproduces it with dynqual-opt (docs/pipeline.md).
  std::string pipelineSpec;
  /// The module printed at `stopAfter` (Onnx, Dq, Memref); empty for Dqp.
  std::string ir;
  /// IR dumps requested by printIrAfter, each headed by "// -----// IR Dump After <pass> //----- //".
  std::string printedIr;
  /// The program (stopAfter == Dqp and ok only).
  rt::Program program;
  /// Per-pass times in first-run order (timing only).
  std::vector<PassTime> passTimes;
};

/// The spec "production" or "production{inject=KNOB}" stands for (productionPipelineSpec()),
/// or `pipeline` itself. An unknown knob sets `*error` (one line listing the valid knobs) and
/// returns "".
std::string resolvePipelineSpec(const std::string &pipeline, std::string *error = nullptr);

/// Imports `model` (external data already resolved) and compiles it. Never throws; errors are
/// reported in the result.
CompileResult compileOnnxModel(const onnx::ModelProto &model, const CompileOptions &options);

/// Parses the MLIR file at `path` (any stage's IR; "-" is stdin) and compiles it. Never throws.
CompileResult compileMlirFile(const std::string &path, const CompileOptions &options);

} // namespace dq

#endif // DQ_PIPELINE_COMPILER_H
