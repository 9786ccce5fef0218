// Memref-level ground truth for the knobs that need a non-contiguous view, which no ONNX graph
// lowers to today (docs/fuzz/knobs.md): the memref passes compile a hand-written view, the sim
// runs it, production gives the hand-computed values and the knob breaks them.
#include "dq/Pipeline/Compiler.h"
#include "dq/runtime/Error.h"
#include "dq/runtime/HostTensor.h"
#include "dq/runtime/Runtime.h"
#include "dq/runtime/SimDevice.h"

#include <gtest/gtest.h>

namespace {

using dq::rt::DType;
using dq::rt::HostTensor;

const std::string kInputs = DQ_TEST_INPUTS;

/// The memref passes in production order; `promote` and `copies` are the two passes' options.
std::string memrefPasses(const std::string &promote, const std::string &copies) {
  return "builtin.module(func.func(dq-use-output-allocator, dq-materialize-host-scalars, "
         "dq-optimize-memrefs, dq-promote-strided-operands" +
         promote +
         ", dq-pool-allocs, "
         "dq-lower-copies" +
         copies + "))";
}

/// Compiles `file` with `pipeline` and runs it on sim; returns the float output or the error.
std::pair<std::vector<float>, std::string> run(const std::string &file, const std::string &pipeline,
                                               const HostTensor &x) {
  dq::CompileOptions options;
  options.pipeline = pipeline;
  dq::CompileResult r = dq::compileMlirFile(kInputs + "/" + file, options);
  if (!r.ok) return {{}, "compile: " + r.error};
  try {
    dq::rt::SimDevice device;
    dq::rt::RunResult run = dq::rt::runProgram(r.program, device, {x});
    return {run.outputs.at(0).values<float>(), ""};
  } catch (const dq::rt::RuntimeError &e) {
    return {{}, e.what()};
  }
}

HostTensor iota(std::vector<int64_t> dims, size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(i);
  return HostTensor::fromValues<float>(DType::F32, std::move(dims), v);
}

TEST(InjectRun, StridedViewBasePointerReadsTheWrongElements) {
  // x = [[0,1,2,3],[4,5,6,7],[8,9,10,11]]; columns 1..2 transposed: [[1,5,9],[2,6,10]].
  HostTensor x = iota({3, 4}, 12);
  auto prod = run("strided_transpose.mlir", memrefPasses("", ""), x);
  ASSERT_EQ(prod.second, "");
  EXPECT_EQ(prod.first, (std::vector<float>{1, 5, 9, 2, 6, 10}));
  // The knob hands the kernel x's base as a contiguous 3x2 buffer: [[0,1],[2,3],[4,5]]^T.
  auto knob = run("strided_transpose.mlir", memrefPasses("{inject=strided-view-base-pointer}", ""), x);
  ASSERT_EQ(knob.second, "");
  EXPECT_EQ(knob.first, (std::vector<float>{0, 2, 4, 1, 3, 5}));
}

TEST(InjectRun, SingletonCopyHostPathTouchesDeviceMemory) {
  HostTensor x = iota({3, 4}, 12);
  auto prod = run("singleton_row_copy.mlir", memrefPasses("", ""), x);
  ASSERT_EQ(prod.second, "");
  EXPECT_EQ(prod.first, (std::vector<float>{4, 5, 6, 7}));
  auto knob = run("singleton_row_copy.mlir", memrefPasses("", "{inject=singleton-copy-host-path}"), x);
  EXPECT_NE(knob.second.find("host memcpy touches device memory"), std::string::npos) << knob.second;
}

TEST(InjectRun, PromoteBeforeReuseGivesTheSameValues) {
  // The order knob changes the IR (the temporary may share a buffer) but not the values: the
  // liveness the reuse pass uses already covers the temporaries (docs/fuzz/knobs.md).
  HostTensor x = iota({3, 4}, 12);
  const std::string reordered = "builtin.module(func.func(dq-use-output-allocator, dq-materialize-host-scalars, "
                                "dq-promote-strided-operands, dq-optimize-memrefs, dq-pool-allocs, dq-lower-copies))";
  auto knob = run("strided_transpose.mlir", reordered, x);
  ASSERT_EQ(knob.second, "");
  EXPECT_EQ(knob.first, (std::vector<float>{1, 5, 9, 2, 6, 10}));
}

} // namespace
