// Compiled programs run on the sim device: the reviewer's expand_shape + ABI cast case and one
// copy of each kind, checked through values and device counters.
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
// The input files are already memref IR: only the memref passes run.
const char *kMemrefPasses = "builtin.module(func.func(dq-use-output-allocator, dq-materialize-host-scalars, "
                            "dq-optimize-memrefs, dq-promote-strided-operands, dq-pool-allocs, dq-lower-copies))";

dq::rt::Program compile(const std::string &file) {
  dq::CompileOptions options;
  options.pipeline = kMemrefPasses;
  dq::CompileResult r = dq::compileMlirFile(kInputs + "/" + file, options);
  EXPECT_TRUE(r.ok) << r.error;
  return r.program;
}

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(i);
  return v;
}

TEST(SimRun, ReviewerCaseProducesValuesWithAEqualsBEqualsFour) {
  dq::rt::Program program = compile("reviewer_case.mlir");
  ASSERT_EQ(program.outputs.size(), 1u);
  dq::rt::SimDevice device;
  HostTensor x = HostTensor::fromValues<float>(DType::F32, {4, 4}, iota(16));
  dq::rt::RunResult run = dq::rt::runProgram(program, device, {x});
  ASSERT_EQ(run.outputs.size(), 1u);
  EXPECT_EQ(run.outputs[0].dims, (std::vector<int64_t>{4, 4}));
  std::vector<float> y = run.outputs[0].values<float>();
  for (size_t i = 0; i < 16; ++i)
    EXPECT_EQ(y[i], 2.0f * static_cast<float>(i)) << i; // y = x + x
  // The output buffer is the program's own result: no runtime copy.
  EXPECT_EQ(run.counters.memcpyCopies + run.counters.copy2dCopies + run.counters.stridedCopies, 0u);
}

TEST(SimRun, ReviewerCaseStopsOnTheAbiCastWithTwoByEight) {
  dq::rt::Program program = compile("reviewer_case.mlir");
  dq::rt::SimDevice device;
  HostTensor x = HostTensor::fromValues<float>(DType::F32, {2, 8}, iota(16));
  try {
    dq::rt::runProgram(program, device, {x});
    FAIL() << "a 2x8 view was returned as 4x4";
  } catch (const dq::rt::RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("ABI cast check failed"), std::string::npos) << e.what();
  }
}

TEST(SimRun, EachCopyKindIsCountedOnce) {
  dq::rt::Program program = compile("copies.mlir");
  dq::rt::SimDevice device;
  HostTensor x = HostTensor::fromValues<float>(DType::F32, {3, 4}, iota(12));
  dq::rt::RunResult run = dq::rt::runProgram(program, device, {x});
  ASSERT_EQ(run.outputs.size(), 3u);
  EXPECT_EQ(run.outputs[0].values<float>(), iota(12));
  // x = [[0..3],[4..7],[8..11]]: first two columns, and every second column.
  EXPECT_EQ(run.outputs[1].values<float>(), (std::vector<float>{0, 1, 4, 5, 8, 9}));
  EXPECT_EQ(run.outputs[2].values<float>(), (std::vector<float>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(run.counters.memcpyCopies, 1u);
  EXPECT_EQ(run.counters.copy2dCopies, 1u);
  EXPECT_EQ(run.counters.stridedCopies, 1u);
  EXPECT_EQ(run.counters.scalarReadbacks, 0u);
}

} // namespace
