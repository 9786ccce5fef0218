// dq-run end to end on the sim: a small program written as .dqp, inputs as .npy, outputs read back.
#include "DeviceTestUtil.h"
#include "TestPrograms.h"
#include "dq/runtime/Npy.h"
#include "dq/runtime/ProgramIO.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

using namespace dq::rt;

namespace {

struct Ran {
  int code = -1;
  std::string out;
};

Ran runTool(const std::string &args, const std::string &dir) {
  const std::string log = dir + "/stdout.txt";
  const std::string cmd = std::string(DQ_RUN_PATH) + " " + args + " > " + log + " 2>&1";
  int status = std::system(cmd.c_str());
  Ran r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream f(log);
  std::stringstream s;
  s << f.rdbuf();
  r.out = s.str();
  return r;
}

} // namespace

TEST(DqRun, RunsAProgramWithNpyFilesAndReportsJson) {
  const std::string dir = testing::TempDir() + "dq_run_test";
  std::system(("mkdir -p " + dir).c_str());
  // y = x + x for x: f32[?].
  test::Builder b;
  b.addInput("x", DType::F32, {-1});
  b.addOutput("y", DType::F32, {-1});
  int32_t x = b.input(0);
  int32_t n = b.newS();
  {
    Instr &i = b.emit(Opcode::Dim);
    i.s = {n};
    i.b = {x};
    i.imm = {0};
  }
  int32_t y = b.allocOutput(0, DType::F32, {n});
  b.kernel("add", {x, x}, {y});
  b.ret({y});
  writeProgram(b.program, dir + "/p.dqp");
  writeNpy(dir + "/x.npy", HostTensor::fromValues<float>(DType::F32, {3}, {1, 2, 3.5f}));

  Ran r = runTool(
      dir + "/p.dqp --device sim --input " + dir + "/x.npy --output-dir " + dir + "/out --reps 3 --warmup 1", dir);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(readNpy(dir + "/out/output_0.npy").values<float>(), (std::vector<float>{2, 4, 7}));
  EXPECT_NE(r.out.find("\"device\":\"sim\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"kernel_launches\":1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"reps\":3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"median\":"), std::string::npos) << r.out;
  for (const char *field : {"\"session_ms\":", "\"first_infer_ms\":", "\"first_execute_ms\":", "\"cpu_percent\":"})
    EXPECT_NE(r.out.find(field), std::string::npos) << field << " missing: " << r.out;
  // Three timed samples, one per rep.
  const size_t samples = r.out.find("\"samples\":[", r.out.find("\"total_ms\":"));
  ASSERT_NE(samples, std::string::npos) << r.out;
  const std::string list = r.out.substr(samples, r.out.find(']', samples) - samples);
  EXPECT_EQ(std::count(list.begin(), list.end(), ','), 2) << list;

  // A wrong input dtype is an input error (exit 2) naming the input.
  writeNpy(dir + "/bad.npy", HostTensor::fromValues<int32_t>(DType::I32, {3}, {1, 2, 3}));
  r = runTool(dir + "/p.dqp --input " + dir + "/bad.npy --output-dir " + dir + "/out", dir);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("input 0 'x'"), std::string::npos) << r.out;
  // Usage errors exit 2.
  EXPECT_EQ(runTool("--output-dir " + dir, dir).code, 2);
}
