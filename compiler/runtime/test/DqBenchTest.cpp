// dq-bench end to end on the sim: a hand-built "counting decoder" whose greedy next token is
// always (last token + 1) mod 5, so every generated id is known by hand; and the probe.
#include "TestPrograms.h"
#include "Generate.h"
#include "dq/runtime/ProgramIO.h"
#include "dq/runtime/SimDevice.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

using namespace dq::rt;

namespace {

constexpr int64_t V = 5;

// input_ids i64[1, s], past f32[1, 1, p, 1] -> logits f32[1, s, 5] (row id of a table whose row t
// is one-hot at (t + 1) mod 5), present f32[1, 1, p + s, 1] = concat(past, ids as f32).
Program countingDecoder() {
  test::Builder b;
  b.addInput("input_ids", DType::I64, {1, -1});
  b.addInput("past_key_0", DType::F32, {1, 1, -1, 1});
  b.addOutput("logits", DType::F32, {1, -1, V});
  b.addOutput("present_key_0", DType::F32, {1, 1, -1, 1});
  int32_t ids = b.input(0), past = b.input(1);
  int32_t s = b.newS(), p = b.newS(), t = b.newS();
  b.emit(Opcode::Dim).s = {s};
  b.program.code.back().b = {ids};
  b.program.code.back().imm = {1};
  b.emit(Opcode::Dim).s = {p};
  b.program.code.back().b = {past};
  b.program.code.back().imm = {2};
  Instr &add = b.emit(Opcode::ScalarBinary);
  add.s = {t, s, p};
  add.name = "add";
  int32_t table = b.newB();
  Instr &c = b.emit(Opcode::Constant);
  c.b = {table};
  c.imm = {0};
  int32_t one = b.index(1), five = b.index(V), zero = b.index(0);
  int32_t logits = b.allocOutput(0, DType::F32, {one, s, five});
  b.kernel("gather", {table, ids}, {logits}, {0});
  int32_t fresh = b.newB();
  Instr &al = b.emit(Opcode::Alloc);
  al.b = {fresh};
  al.s = {one, s};
  al.dtype = DType::F32;
  b.kernel("cast", {ids}, {fresh});
  int32_t freshKv = b.view(fresh, zero, {one, one, s, one}, {s, s, one, one});
  int32_t present = b.allocOutput(1, DType::F32, {one, one, t, one});
  b.kernel("concat", {past, freshKv}, {present}, {2});
  b.ret({logits, present});
  std::vector<float> rows(V * V, 0.0f);
  for (int64_t r = 0; r < V; ++r)
    rows[static_cast<size_t>(r * V + (r + 1) % V)] = 1.0f;
  b.program.constantData.resize(rows.size() * 4);
  std::memcpy(b.program.constantData.data(), rows.data(), rows.size() * 4);
  b.program.constants.push_back({DType::F32, {V, V}, 0, rows.size() * 4});
  return b.program;
}

std::string runTool(const std::string &args, const std::string &dir, int &code) {
  const std::string log = dir + "/bench.txt";
  int status = std::system((std::string(DQ_BENCH_PATH) + " " + args + " > " + log + " 2>&1").c_str());
  code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream f(log);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

} // namespace

TEST(DqBench, GenerateLoopKeepsKvOnTheDeviceAndFollowsTheArgmax) {
  Program prog = countingDecoder();
  SimDevice dev;
  ResidentProgram resident(prog, dev, "counting");
  dq::bench::DecoderLayout layout = dq::bench::decoderLayout(prog);
  EXPECT_EQ(layout.vocab, V);
  const std::vector<int64_t> prompt = {3, 0, 2};
  dq::bench::GenerationRun run = dq::bench::generate(resident, dev, layout, prompt, 6);
  // By hand: after 2 comes 3, 4, 0, 1, 2, 3.
  EXPECT_EQ(run.tokens, (std::vector<int64_t>{3, 4, 0, 1, 2, 3}));
  ASSERT_EQ(run.stepCounters.size(), 5u);
  for (const Counters &c : run.stepCounters) {
    EXPECT_EQ(c.h2dBytes, 0u); // ids and past already on the device, the table resident
    EXPECT_EQ(c.d2hBytes, 0u); // the step returns nothing to the host; the token is read after
    EXPECT_EQ(c.kernelLaunches, 3u);
  }
  EXPECT_EQ(run.prefillCounters.h2dBytes, static_cast<uint64_t>(V * V * 4)); // the table, once
  EXPECT_EQ(resident.constantBytes(), static_cast<uint64_t>(V * V * 4));
  EXPECT_EQ(dev.liveAllocations(), 1u); // only the resident table is left
}

TEST(DqBench, GenerateCommandPrintsTokensTimingsAndLimits) {
  const std::string dir = testing::TempDir() + "dq_bench_test";
  std::system(("mkdir -p " + dir).c_str());
  writeProgram(countingDecoder(), dir + "/c.dqp");
  int code = 0;
  std::string out = runTool("generate " + dir +
                                "/c.dqp --device sim --prompt-len 4 --gen-tokens 5 --warmup 1 "
                                "--reps 2 --seed 1 --copy-mib 1 --copy-reps 2 --launches 50 --name counting",
                            dir, code);
  ASSERT_EQ(code, 0) << out;
  const std::vector<int64_t> prompt = dq::bench::promptTokens(V, 4, 1);
  std::string expect = "\"tokens\":[";
  for (int k = 0; k < 5; ++k)
    expect += (k ? "," : "") + std::to_string((prompt.back() + 1 + k) % V);
  EXPECT_NE(out.find(expect + "]"), std::string::npos) << out;
  for (const char *key : {"\"model\":\"counting\"", "\"prompt_len\":4", "\"gen_tokens\":5", "\"reps\":2",
                          "\"tokens_same_every_rep\":true", "\"constant_bytes\":100", "\"weight_bytes_per_token\":100",
                          "\"launches_per_token\":4.000000", "\"h2d_bytes\":0.000000",
                          "\"binding\":", "\"fraction_of_binding\":", "\"peak_device_bytes\":", "\"peak_host_bytes\":"})
    EXPECT_NE(out.find(key), std::string::npos) << key << " in " << out;
  // TPS needs two tokens; a missing program is an input error.
  EXPECT_EQ(runTool("generate " + dir + "/c.dqp --gen-tokens 1", dir, code).size() > 0 && code == 2, true);
  runTool("generate " + dir + "/missing.dqp", dir, code);
  EXPECT_EQ(code, 2);
  out = runTool("probe --device sim --copy-mib 1 --copy-reps 2 --launches 20", dir, code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("\"launch_count\":20"), std::string::npos) << out;
  EXPECT_NE(out.find("\"copy_bytes\":1048576"), std::string::npos) << out;
}
