// Artifact round trip, determinism and every loader rejection.
#include "TestPrograms.h"
#include "dq/runtime/Error.h"
#include "dq/runtime/ProgramIO.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

using namespace dq::rt;

namespace {

// y = x + c with c a 2-element f32 constant; uses every operand field (imm, fimm, loc, name).
Program sample() {
  test::Builder b;
  b.program.compilerVersion = "0.1.0";
  b.program.pipelineSpec = "builtin.module(dq-pool-allocs)";
  b.program.sourceName = "sample.onnx";
  b.addInput("x", DType::F32, {2});
  b.addOutput("y", DType::F32, {2});
  int32_t x = b.input(0);
  Instr &c = b.emit(Opcode::Constant);
  int32_t cb = b.newB();
  c.b = {cb};
  c.imm = {0};
  int32_t two = b.index(2);
  int32_t y = b.allocOutput(0, DType::F32, {two}, {2});
  b.kernel("add", {x, cb}, {y});
  b.program.code.back().loc = "LOCMARK";
  b.kernel("fill", {}, {y}, {0}, {-0.5});
  b.kernel("add", {x, cb}, {y});
  b.ret({y});
  float values[2] = {1.5f, -2.0f};
  b.program.constantData.resize(8);
  std::memcpy(b.program.constantData.data(), values, 8);
  b.program.constants.push_back({DType::F32, {2}, 0, 8});
  return b.program;
}

std::string tempPath(const std::string &name) { return testing::TempDir() + "/" + name; }

std::vector<uint8_t> slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void spit(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Recomputes the FNV-1a-64 trailer over bytes [16, size-8) after a deliberate patch, so the
// loader's structural checks (not its checksum) are what reject the file.
void rechecksum(std::vector<uint8_t> &bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 16; i < bytes.size() - 8; ++i) {
    h ^= bytes[i];
    h *= 0x100000001b3ull;
  }
  for (int k = 0; k < 8; ++k)
    bytes[bytes.size() - 8 + static_cast<size_t>(k)] = static_cast<uint8_t>(h >> (8 * k));
}

size_t find(const std::vector<uint8_t> &bytes, const std::string &needle) {
  auto it = std::search(bytes.begin(), bytes.end(), needle.begin(), needle.end());
  EXPECT_NE(it, bytes.end()) << needle;
  return static_cast<size_t>(it - bytes.begin());
}

template <typename F> std::string errorOf(F &&f) {
  try {
    f();
  } catch (const RuntimeError &e) {
    return e.what();
  }
  return "<no error>";
}

} // namespace

TEST(ProgramIO, RoundTripKeepsEveryField) {
  const Program p = sample();
  const std::string path = tempPath("roundtrip.dqp");
  writeProgram(p, path);
  const Program q = readProgram(path);
  EXPECT_EQ(q.compilerVersion, "0.1.0");
  EXPECT_EQ(q.pipelineSpec, p.pipelineSpec);
  EXPECT_EQ(q.sourceName, "sample.onnx");
  ASSERT_EQ(q.code.size(), p.code.size());
  for (size_t i = 0; i < p.code.size(); ++i) {
    EXPECT_EQ(q.code[i].op, p.code[i].op) << i;
    EXPECT_EQ(q.code[i].name, p.code[i].name) << i;
    EXPECT_EQ(q.code[i].s, p.code[i].s) << i;
    EXPECT_EQ(q.code[i].b, p.code[i].b) << i;
    EXPECT_EQ(q.code[i].imm, p.code[i].imm) << i;
    EXPECT_EQ(q.code[i].fimm, p.code[i].fimm) << i;
    EXPECT_EQ(q.code[i].loc, p.code[i].loc) << i;
  }
  EXPECT_EQ(q.constantData, p.constantData);
  EXPECT_EQ(q.inputs[0].name, "x");
  EXPECT_EQ(q.outputs[0].dims, std::vector<int64_t>{2});
  EXPECT_EQ(q.numScalarRegs, p.numScalarRegs);
  EXPECT_EQ(q.numBufferRegs, p.numBufferRegs);
}

TEST(ProgramIO, WritingIsDeterministic) {
  const std::string a = tempPath("det_a.dqp"), b = tempPath("det_b.dqp");
  writeProgram(sample(), a);
  writeProgram(sample(), b);
  EXPECT_EQ(slurp(a), slurp(b));
  EXPECT_EQ(slurp(a + ".bin"), slurp(b + ".bin"));
  // Re-serializing what was read gives the same bytes again.
  EXPECT_EQ(serializeProgram(readProgram(a)).program, slurp(a));
}

TEST(ProgramIO, RejectsEveryTruncation) {
  const ProgramBytes bytes = serializeProgram(sample());
  for (size_t n = 0; n < bytes.program.size(); ++n) {
    std::vector<uint8_t> cut(bytes.program.begin(), bytes.program.begin() + static_cast<long>(n));
    std::string err = errorOf([&] { deserializeProgram(cut, bytes.sidecar, "cut.dqp"); });
    EXPECT_EQ(err.rfind("cut.dqp: ", 0), 0u) << "length " << n << ": " << err;
  }
  const std::string path = tempPath("trunc.dqp");
  writeProgram(sample(), path);
  std::vector<uint8_t> all = slurp(path);
  all.resize(all.size() - 3);
  spit(path, all);
  EXPECT_NE(errorOf([&] { readProgram(path); }).find(path + ": truncated"), std::string::npos);
}

TEST(ProgramIO, RejectsBadMagicAndVersion) {
  ProgramBytes bytes = serializeProgram(sample());
  std::vector<uint8_t> magic = bytes.program;
  magic[0] = 'X';
  EXPECT_NE(
      errorOf([&] { deserializeProgram(magic, bytes.sidecar, "m.dqp"); }).find("m.dqp: not a dqp program (bad magic)"),
      std::string::npos);
  std::vector<uint8_t> version = bytes.program;
  version[4] = 3; // little-endian u32 version 2 -> 3
  EXPECT_NE(errorOf([&] {
              deserializeProgram(version, bytes.sidecar, "v.dqp");
            }).find("v.dqp: format version 3, this runtime reads version 2"),
            std::string::npos);
}

TEST(ProgramIO, RejectsCorruptionAndTrailingBytes) {
  ProgramBytes bytes = serializeProgram(sample());
  std::vector<uint8_t> flipped = bytes.program;
  flipped[find(flipped, "sample.onnx")] ^= 1;
  EXPECT_NE(errorOf([&] { deserializeProgram(flipped, bytes.sidecar, "c.dqp"); }).find("checksum mismatch"),
            std::string::npos);
  std::vector<uint8_t> longer = bytes.program;
  longer.push_back(0);
  EXPECT_NE(errorOf([&] { deserializeProgram(longer, bytes.sidecar, "t.dqp"); }).find("trailing bytes"),
            std::string::npos);
}

TEST(ProgramIO, RejectsBadSidecar) {
  const std::string path = tempPath("side.dqp");
  writeProgram(sample(), path);
  std::vector<uint8_t> side = slurp(path + ".bin");
  ASSERT_EQ(side.size(), 8u);
  spit(path + ".bin", std::vector<uint8_t>(side.begin(), side.begin() + 6));
  std::string err = errorOf([&] { readProgram(path); });
  EXPECT_NE(err.find(path + ".bin: sidecar has 6 bytes but constant 0 needs bytes [0, 8)"), std::string::npos) << err;
  side[0] ^= 0xFF; // same size, other content
  spit(path + ".bin", side);
  err = errorOf([&] { readProgram(path); });
  EXPECT_NE(err.find(path + ".bin: sidecar checksum differs"), std::string::npos) << err;
  std::remove((path + ".bin").c_str());
  err = errorOf([&] { readProgram(path); });
  EXPECT_EQ(err, path + ".bin: missing; the program needs its constants sidecar next to it");
}

TEST(ProgramIO, RejectsOutOfRangeRegister) {
  Program p = sample();
  p.numBufferRegs = 0x13572468; // a marker to find in the bytes
  ProgramBytes bytes = serializeProgram(p);
  uint8_t marker[4] = {0x68, 0x24, 0x57, 0x13};
  size_t at = find(bytes.program, std::string(reinterpret_cast<char *>(marker), 4));
  bytes.program[at] = 2; // numBufferRegs = 2, but the program uses b2
  std::memset(&bytes.program[at + 1], 0, 3);
  rechecksum(bytes.program);
  std::string err = errorOf([&] { deserializeProgram(bytes.program, bytes.sidecar, "r.dqp"); });
  EXPECT_NE(err.find("r.dqp: instruction 3 (AllocOutput) at test:3: buffer register b2 out of range (program has 2)"),
            std::string::npos)
      << err;
  // The writer refuses the same program.
  Program bad = sample();
  bad.numScalarRegs = 0;
  EXPECT_NE(errorOf([&] { serializeProgram(bad, "w.dqp"); }).find("scalar register s0 out of range"),
            std::string::npos);
}

TEST(ProgramIO, RejectsUnknownOpcodeAndKernel) {
  ProgramBytes bytes = serializeProgram(sample());
  std::vector<uint8_t> op = bytes.program;
  // Instruction layout: u16 opcode, u8 dtype, u8 space, name (u32 length + "add"), loc (u32
  // length + "LOCMARK"). The marked instruction is the first "add" kernel.
  size_t loc = find(op, "LOCMARK");
  size_t opcodeAt = loc - 4 /*loc len*/ - 3 /*"add"*/ - 4 /*name len*/ - 2 /*dtype, space*/ - 2;
  ASSERT_EQ(op[opcodeAt], static_cast<uint8_t>(Opcode::Kernel));
  op[opcodeAt] = 0xE7; // 999
  op[opcodeAt + 1] = 0x03;
  rechecksum(op);
  std::string err = errorOf([&] { deserializeProgram(op, bytes.sidecar, "o.dqp"); });
  EXPECT_NE(err.find("o.dqp: instruction 4: unknown opcode 999"), std::string::npos) << err;

  std::vector<uint8_t> kernel = bytes.program;
  kernel[loc - 4 - 1] = 'x'; // "add" -> "adx"
  rechecksum(kernel);
  err = errorOf([&] { deserializeProgram(kernel, bytes.sidecar, "k.dqp"); });
  EXPECT_NE(err.find("k.dqp: instruction 4 (Kernel 'adx') at LOCMARK: unknown kernel name 'adx'"), std::string::npos)
      << err;
}

TEST(ProgramIO, ReportsMissingFile) {
  std::string err = errorOf([] { readProgram("/nonexistent/x.dqp"); });
  EXPECT_EQ(err.rfind("/nonexistent/x.dqp: cannot open", 0), 0u) << err;
}
