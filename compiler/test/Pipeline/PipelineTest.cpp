// The pipeline as data: recorded specs reproduce artifacts with dynqual-opt, reordering changes
// the IR, stages stop where documented, IR printing and timing report per pass.
#include "dq/Pipeline/Compiler.h"
#include "dq/Pipeline/ProductionPipeline.h"
#include "dq/runtime/ProgramIO.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace {

const std::string kInputs = DQ_TEST_INPUTS;
const std::string kShapeGraph = kInputs + "/shape_graph.mlir";

std::vector<char> readBytes(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

size_t count(const std::string &text, const std::string &needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + needle.size()))
    ++n;
  return n;
}

std::filesystem::path scratchDir(const std::string &name) {
  auto dir = std::filesystem::temp_directory_path() / ("dq-pipeline-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(Pipeline, DynqualOptReproducesTheArtifactFromItsRecordedSpec) {
  dq::CompileResult compiled = dq::compileMlirFile(kShapeGraph, {});
  ASSERT_TRUE(compiled.ok) << compiled.error;
  EXPECT_EQ(compiled.program.pipelineSpec, compiled.pipelineSpec);
  EXPECT_EQ(compiled.program.compilerVersion, DYNQUAL_VERSION);
  auto dir = scratchDir("repro");
  dq::rt::writeProgram(compiled.program, (dir / "compiler.dqp").string());

  // The spec is read back from the artifact, not taken from the compiler's result.
  dq::rt::Program loaded = dq::rt::readProgram((dir / "compiler.dqp").string());
  ASSERT_EQ(loaded.pipelineSpec.find('\''), std::string::npos);
  std::string command = std::string(DQ_OPT_PATH) + " '" + kShapeGraph + "' --pass-pipeline='" + loaded.pipelineSpec +
                        "' --emit-dqp='" + (dir / "opt.dqp").string() + "' -o /dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;

  std::vector<char> a = readBytes(dir / "compiler.dqp"), b = readBytes(dir / "opt.dqp");
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_EQ(readBytes(dir / "compiler.dqp.bin"), readBytes(dir / "opt.dqp.bin"));
  std::filesystem::remove_all(dir);
}

TEST(Pipeline, NamedProductionPipelineMatchesTheCompiler) {
  dq::CompileOptions options;
  options.stopAfter = dq::Stage::Memref;
  dq::CompileResult compiled = dq::compileMlirFile(kShapeGraph, options);
  ASSERT_TRUE(compiled.ok) << compiled.error;
  auto dir = scratchDir("named");
  std::string command =
      std::string(DQ_OPT_PATH) + " '" + kShapeGraph + "' --dq-production -o '" + (dir / "out.mlir").string() + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::vector<char> opt = readBytes(dir / "out.mlir");
  // dynqual-opt ends its output with one extra newline.
  EXPECT_EQ(std::string(opt.begin(), opt.end()), compiled.ir + "\n");
  std::filesystem::remove_all(dir);
}

TEST(Pipeline, ReorderedSpecChangesTheIR) {
  dq::CompileOptions production;
  production.stopAfter = dq::Stage::Memref;
  dq::CompileResult base = dq::compileMlirFile(kShapeGraph, production);
  ASSERT_TRUE(base.ok) << base.error;

  // Copy lowering moved before host-scalar materialization: the staging copy that
  // materialization inserts is never lowered, so a memref.copy survives.
  std::string spec = dq::productionPipelineSpec();
  const std::string moved = ", dq-lower-copies";
  size_t at = spec.find(moved);
  ASSERT_NE(at, std::string::npos);
  spec.erase(at, moved.size());
  const std::string first = "func.func(dq-use-output-allocator";
  at = spec.find(first);
  ASSERT_NE(at, std::string::npos);
  spec.insert(at + first.size(), ", dq-lower-copies");
  dq::CompileOptions reordered = production;
  reordered.pipeline = spec;
  dq::CompileResult other = dq::compileMlirFile(kShapeGraph, reordered);
  ASSERT_TRUE(other.ok) << other.error;
  EXPECT_NE(base.ir, other.ir);
  EXPECT_NE(base.pipelineSpec, other.pipelineSpec);
  EXPECT_EQ(count(base.ir, "memref.copy"), 0u);
  EXPECT_EQ(count(other.ir, "memref.copy"), 1u);
  EXPECT_EQ(count(base.ir, "dq.copy \"memcpy\""), 1u);
}

TEST(Pipeline, StagesStopWhereDocumented) {
  dq::CompileOptions options;
  options.stopAfter = dq::Stage::Onnx;
  dq::CompileResult onnx = dq::compileMlirFile(kShapeGraph, options);
  ASSERT_TRUE(onnx.ok) << onnx.error;
  EXPECT_NE(onnx.ir.find("tensor.from_elements"), std::string::npos);

  options.stopAfter = dq::Stage::Dq;
  dq::CompileResult dqStage = dq::compileMlirFile(kShapeGraph, options);
  ASSERT_TRUE(dqStage.ok) << dqStage.error;
  EXPECT_NE(dqStage.ir.find("tensor<"), std::string::npos);
  EXPECT_EQ(dqStage.ir.find("memref<"), std::string::npos);

  options.stopAfter = dq::Stage::Memref;
  dq::CompileResult memref = dq::compileMlirFile(kShapeGraph, options);
  ASSERT_TRUE(memref.ok) << memref.error;
  EXPECT_NE(memref.ir.find("dq.get_pool"), std::string::npos);
  EXPECT_NE(memref.ir.find("dq.alloc_output"), std::string::npos);
  EXPECT_EQ(memref.ir.find("memref.copy"), std::string::npos);
  EXPECT_EQ(memref.ir.find("tensor<"), std::string::npos);

  EXPECT_EQ(dq::parseStage("memref"), dq::Stage::Memref);
  EXPECT_FALSE(dq::parseStage("llvm").has_value());
}

TEST(Pipeline, PrintIrAfterOnePassOrAll) {
  dq::CompileOptions options;
  options.printIrAfter = "dq-pool-allocs";
  dq::CompileResult one = dq::compileMlirFile(kShapeGraph, options);
  ASSERT_TRUE(one.ok) << one.error;
  EXPECT_EQ(count(one.printedIr, "IR Dump After"), 1u);
  EXPECT_NE(one.printedIr.find("dq-pool-allocs"), std::string::npos);
  EXPECT_NE(one.printedIr.find("dq.get_pool"), std::string::npos);

  options.printIrAfter = "all";
  dq::CompileResult all = dq::compileMlirFile(kShapeGraph, options);
  ASSERT_TRUE(all.ok) << all.error;
  // dq-convert-onnx, canonicalize, cse, dq-fuse-elementwise, one-shot-bufferize and the six
  // memref passes.
  EXPECT_EQ(count(all.printedIr, "IR Dump After"), 11u);
}

TEST(Pipeline, TimingListsEveryPass) {
  dq::CompileOptions options;
  options.timing = true;
  dq::CompileResult timed = dq::compileMlirFile(kShapeGraph, options);
  ASSERT_TRUE(timed.ok) << timed.error;
  std::vector<std::string> names;
  for (const dq::PassTime &t : timed.passTimes) {
    names.push_back(t.pass);
    EXPECT_GE(t.ms, 0.0) << t.pass;
  }
  std::vector<std::string> expected = {"dq-convert-onnx",
                                       "canonicalize",
                                       "cse",
                                       "dq-fuse-elementwise",
                                       "one-shot-bufferize",
                                       "dq-use-output-allocator",
                                       "dq-materialize-host-scalars",
                                       "dq-optimize-memrefs",
                                       "dq-promote-strided-operands",
                                       "dq-pool-allocs",
                                       "dq-lower-copies",
                                       "dq-emit-program"};
  EXPECT_EQ(names, expected);
}

TEST(Pipeline, ErrorsAreOneLine) {
  dq::CompileOptions options;
  options.pipeline = "builtin.module(no-such-pass)";
  dq::CompileResult bad = dq::compileMlirFile(kShapeGraph, options);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.error.rfind("pipeline spec: ", 0), 0u) << bad.error;
  EXPECT_EQ(bad.error.find('\n'), std::string::npos);

  // Without copy lowering the emitter meets a memref.copy it cannot run.
  options.pipeline = "builtin.module(func.func(dq-use-output-allocator))";
  dq::CompileResult unlowered = dq::compileMlirFile(kInputs + "/copies.mlir", options);
  EXPECT_FALSE(unlowered.ok);
  EXPECT_NE(unlowered.error.find("unsupported in program emission: memref.copy"), std::string::npos) << unlowered.error;

  dq::CompileResult missing = dq::compileMlirFile(kInputs + "/does-not-exist.mlir", {});
  EXPECT_FALSE(missing.ok);
  EXPECT_NE(missing.error.find("does-not-exist.mlir"), std::string::npos);
}

// "inject=A,B" gives each owning pass its knob; two knobs of one pass are refused, not half-applied.
TEST(Pipeline, TwoKnobsOfDifferentPassesCombine) {
  std::string spec, error;
  ASSERT_TRUE(dq::resolveProductionName("production{inject=slice-upper-bound,output-rank-collapse}", spec, error));
  EXPECT_EQ(error, "");
  EXPECT_NE(spec.find("dq-convert-onnx{inject=slice-upper-bound}"), std::string::npos) << spec;
  EXPECT_NE(spec.find("dq-use-output-allocator{inject=output-rank-collapse}"), std::string::npos) << spec;
  // Each knob alone gives the same pass text as in the pair.
  std::string one, why;
  dq::resolveProductionName("production{inject=slice-upper-bound}", one, why);
  EXPECT_NE(one.find("dq-convert-onnx{inject=slice-upper-bound}"), std::string::npos);
  EXPECT_EQ(one.find("dq-use-output-allocator{inject="), std::string::npos);

  ASSERT_TRUE(dq::resolveProductionName("production{inject=slice-upper-bound,split-dim-size-alias}", spec, error));
  EXPECT_TRUE(spec.empty());
  EXPECT_NE(error.find("unsupported: inject knobs 'slice-upper-bound' and 'split-dim-size-alias' both act on "
                       "dq-convert-onnx"),
            std::string::npos)
      << error;
  ASSERT_TRUE(dq::resolveProductionName("production{inject=slice-upper-bound,no-such-knob}", spec, error));
  EXPECT_NE(error.find("unknown inject knob 'no-such-knob'"), std::string::npos) << error;
}

} // namespace
