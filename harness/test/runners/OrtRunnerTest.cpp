// The shipped ort:cpu runner on real models, and the JS TensorProto codec against the C++ one.
// Skips (with the reason) when node or onnxruntime-node is not installed.
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/process/Process.h"
#include "dynqual/runners/Runner.h"

#include "RunnersTestUtil.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

using namespace dynqual;
using namespace dynqual::runners;
using testutil::ScratchDir;
namespace fs = std::filesystem;

namespace {

const fs::path kTestAdd = "/usr/share/libonnx-testdata/data/node/test_add";

/// The ort:cpu runner, or nullopt with the reason it is unavailable in `why`.
std::optional<RunnerSpec> ortCpu(std::string& why) {
  try {
    return ortCpuRunner();
  } catch (const RunnerUnavailable& e) {
    why = e.what();
    return std::nullopt;
  }
}

/// input_N.pb / output_N.pb of a data set folder, in N order.
std::vector<fs::path> dataFiles(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int k = 0; fs::exists(dir / (prefix + std::to_string(k) + ".pb")); ++k)
    files.push_back(dir / (prefix + std::to_string(k) + ".pb"));
  return files;
}

/// Largest |a - b| over all elements; +inf when dtype or dims differ.
double maxAbsDiff(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.dims() != b.dims())
    return INFINITY;
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.getDouble(i), y = b.getDouble(i);
    if (std::isnan(x) && std::isnan(y))
      continue;
    m = std::max(m, std::fabs(x - y));
  }
  return m;
}

/// Runs ort:cpu on data set `ds` of `modelDir` and checks every output against the stored one.
/// The shipped runner speaks protocol 2; `clock` is what its samples read.
void runAndCompare(const RunnerSpec& spec, const fs::path& modelDir, const fs::path& ds, double tolerance,
                   RunnerClock clock = RunnerClock::Wall) {
  ScratchDir out;
  RunnerRequest req;
  req.model = modelDir / "model.onnx";
  req.inputs = dataFiles(ds, "input_");
  req.outputDir = out.path();
  req.reps = 3;
  req.warmup = 6; // the fastest of 5 warm-ups sizes k, so one slow warm-up on a loaded machine cannot shrink the batch
  req.minSampleMs = 1;
  req.protocol = 2;
  req.clock = clock;
  std::vector<fs::path> expectedFiles = dataFiles(ds, "output_");
  ResultExpectations expect;
  std::vector<Tensor> expected;
  for (const auto& f : expectedFiles) {
    std::string name;
    expected.push_back(onnxio::readTensorFile(f, name));
    expect.outputNames.push_back(name);
  }
  RunnerResult r = runRunner(spec, req, 120, expect);
  EXPECT_EQ(r.runner, "ort-node");
  EXPECT_EQ(r.version, "onnxruntime-node 1.30.0");
  EXPECT_EQ(r.clock, clock);
  // One thread without spinning under process-cpu (docs/runners.md), unless the environment says
  // otherwise.
  if (clock == RunnerClock::ProcessCpu && !std::getenv("DYNQUAL_ORT_INTRA_OP_THREADS") &&
      !std::getenv("DYNQUAL_ORT_INTER_OP_THREADS"))
    EXPECT_EQ(r.threads, R"({"allow_spinning":false,"inter_op":1,"intra_op":1})");
  ASSERT_EQ(r.samplesMs.size(), 3u);
  for (double s : r.samplesMs)
    EXPECT_GT(s, 0);
  EXPECT_GE(r.iterationsPerSample, 1);
  // k was calibrated so one batch lasts about min-sample-ms (1 ms) or more.
  EXPECT_GT(r.samplesMs[0] * r.iterationsPerSample, 0.2);
  ASSERT_EQ(r.outputs.size(), expected.size());
  for (std::size_t k = 0; k < expected.size(); ++k) {
    double d = maxAbsDiff(r.outputs[k].tensor, expected[k]);
    EXPECT_LE(d, tolerance) << ds << " output " << k << " (" << r.outputs[k].name << ")";
    std::cout << "[ ort:cpu  ] " << modelDir.filename().string() << "/" << ds.filename().string() << " "
              << r.outputs[k].name << ": max abs diff " << d
              << (r.outputs[k].tensor == expected[k] ? " (bit-identical)" : "") << ", samples ms " << r.samplesMs[0]
              << " " << r.samplesMs[1] << " " << r.samplesMs[2] << " x" << r.iterationsPerSample << "\n";
  }
}

} // namespace

TEST(OrtCpuRunner, TestAddMatchesStoredOutput) {
  std::string why;
  auto spec = ortCpu(why);
  if (!spec)
    GTEST_SKIP() << why;
  if (!fs::exists(kTestAdd / "model.onnx"))
    GTEST_SKIP() << kTestAdd << " not installed (Debian package libonnx-testdata)";
  runAndCompare(*spec, kTestAdd, kTestAdd / "test_data_set_0", 1e-6);
  runAndCompare(*spec, kTestAdd, kTestAdd / "test_data_set_0", 1e-6, RunnerClock::ProcessCpu);
}

TEST(OrtCpuRunner, RunnerErrorsComeBackAsReportedErrors) {
  std::string why;
  auto spec = ortCpu(why);
  if (!spec)
    GTEST_SKIP() << why;
  if (!fs::exists(kTestAdd / "model.onnx"))
    GTEST_SKIP() << kTestAdd << " not installed (Debian package libonnx-testdata)";
  ScratchDir out;
  RunnerRequest req;
  req.model = kTestAdd / "model.onnx";
  req.inputs = {kTestAdd / "test_data_set_0" / "input_0.pb"};
  req.outputDir = out.path();
  req.protocol = 2;
  try {
    runRunner(*spec, req, 120);
    FAIL() << "one input for a two-input model";
  } catch (const RunnerFailure& f) {
    EXPECT_EQ(f.kind(), FailureKind::ReportedError);
    EXPECT_STREQ(f.what(), "runner ort:cpu: reported an error: model.onnx has 2 inputs (x, y), got 1 input files");
  }
}

TEST(OrtCpuRunner, SharedModelsMatchStoredOutputs) {
  std::string why;
  auto spec = ortCpu(why);
  if (!spec)
    GTEST_SKIP() << why;
  const fs::path root = DYNQUAL_SHARED_MODELS_DIR;
  int ran = 0;
  for (const char* model : {"tiny_bert", "kv_decoder", "shape_ops"}) {
    fs::path dir = root / model;
    if (!fs::exists(dir / "model.onnx"))
      continue;
    for (int d = 0; fs::exists(dir / ("test_data_set_" + std::to_string(d))); ++d, ++ran)
      runAndCompare(*spec, dir, dir / ("test_data_set_" + std::to_string(d)), 1e-5);
  }
  if (ran == 0)
    GTEST_SKIP() << "no shared models under " << root;
}

// ---- the JS codec (harness/runners/ort-node/tensorproto.js) against TensorProtoIO ----

namespace {

const char* kCodecScript = R"JS(
const fs = require('fs'), path = require('path');
const { decodeTensorProto, encodeTensorProto } = require(process.argv[2]);
const mode = process.argv[3], dir = process.argv[4];
if (mode === 'decode') {
  const out = {};
  for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.pb')).sort()) {
    try {
      const t = decodeTensorProto(fs.readFileSync(path.join(dir, f)), f);
      out[f] = { name: t.name, dataType: t.dataType, dims: t.dims,
                 hex: Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength).toString('hex') };
    } catch (e) { out[f] = { error: e.message }; }
  }
  process.stdout.write(JSON.stringify(out));
} else {
  const w = (f, t) => fs.writeFileSync(path.join(dir, f), encodeTensorProto(t));
  w('f32.pb', { name: 'a', dataType: 1, dims: [2, 2], data: Float32Array.of(1.5, -2, Infinity, -0) });
  w('u8.pb', { name: 'b', dataType: 2, dims: [3], data: Uint8Array.of(0, 200, 255) });
  w('i8.pb', { name: 'c', dataType: 3, dims: [3], data: Int8Array.of(-128, -1, 127) });
  w('i32.pb', { name: 'd', dataType: 6, dims: [2], data: Int32Array.of(-2147483648, 2147483647) });
  w('i64.pb', { name: 'e', dataType: 7, dims: [3], data: BigInt64Array.of(-(2n ** 63n), 5n, 2n ** 63n - 1n) });
  w('bool.pb', { name: 'f', dataType: 9, dims: [2], data: Uint8Array.of(1, 0) });
  w('f16.pb', { name: 'g', dataType: 10, dims: [2], data: Uint16Array.of(0x3c00, 0xc000) });
  w('f64.pb', { name: 'h', dataType: 11, dims: [], data: Float64Array.of(Math.PI) });
  w('empty.pb', { name: '', dataType: 1, dims: [0, 3], data: new Float32Array(0) });
}
)JS";

std::string hex(const std::vector<uint8_t>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes)
    s += {digits[b >> 4], digits[b & 15]};
  return s;
}

/// Runs the codec script and returns its stdout; nullopt with `why` set when node is missing.
std::optional<std::string> runCodec(const ScratchDir& tmp, const std::string& mode, const fs::path& dir,
                                    std::string& why) {
  fs::path node = findProgram("node");
  if (node.empty()) {
    why = "node is not on PATH (run scripts/setup)";
    return std::nullopt;
  }
  testutil::writeText(tmp / "codec.js", kCodecScript);
  process::ProcessResult r = process::runChild(
      {node.string(), (tmp / "codec.js").string(), (ortRunnerDir() / "tensorproto.js").string(), mode, dir.string()},
      60);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return r.out;
}

} // namespace

TEST(TensorProtoCodec, FilesWrittenByCppDecodeInJs) {
  ScratchDir tmp;
  fs::create_directories(tmp / "pb");
  std::vector<std::pair<std::string, Tensor>> tensors = {
      {"f32", Tensor::fromDoubles(DType::Float, {2, 3}, {0, -1.5, 3.25, INFINITY, -0.0, 1e-30})},
      {"f64", Tensor::fromDoubles(DType::Double, {}, {M_PI})},
      {"f16", Tensor::fromDoubles(DType::Float16, {3}, {1, -2, 65504})},
      {"i8", Tensor::fromInts(DType::Int8, {3}, {-128, 0, 127})},
      {"u8", Tensor::fromInts(DType::Uint8, {2}, {0, 255})},
      {"i32", Tensor::fromInts(DType::Int32, {2}, {INT32_MIN, INT32_MAX})},
      {"i64", Tensor::fromInts(DType::Int64, {1, 3}, {INT64_MIN, -1, INT64_MAX})},
      {"bool", Tensor::fromInts(DType::Bool, {2}, {1, 0})},
      {"empty", Tensor(DType::Float, {0, 4})},
  };
  for (const auto& [name, t] : tensors)
    onnxio::writeTensorFile(tmp / "pb" / (name + ".pb"), t, "t_" + name);
  onnxio::writeTensorFile(tmp / "pb" / "bf16.pb", Tensor::fromDoubles(DType::BFloat16, {1}, {1}), "t_bf16");

  std::string why;
  auto out = runCodec(tmp, "decode", tmp / "pb", why);
  if (!out)
    GTEST_SKIP() << why;
  nlohmann::json decoded = nlohmann::json::parse(*out);
  for (const auto& [name, t] : tensors) {
    const auto& d = decoded.at(name + ".pb");
    ASSERT_FALSE(d.contains("error")) << name << ": " << d.dump();
    EXPECT_EQ(d.at("name"), "t_" + name);
    EXPECT_EQ(d.at("dataType"), static_cast<int>(t.dtype())) << name;
    EXPECT_EQ(d.at("dims").get<std::vector<int64_t>>(), t.dims()) << name;
    EXPECT_EQ(d.at("hex"), hex(t.bytes())) << name;
  }
  EXPECT_EQ(decoded.at("bf16.pb").at("error"), "unsupported: dtype BFLOAT16 (code 16) in bf16.pb");
}

TEST(TensorProtoCodec, FilesWrittenByJsReadInCpp) {
  ScratchDir tmp;
  fs::create_directories(tmp / "pb");
  std::string why;
  if (!runCodec(tmp, "encode", tmp / "pb", why))
    GTEST_SKIP() << why;
  auto read = [&](const std::string& file, std::string& name) {
    return onnxio::readTensorFile(tmp / "pb" / file, name);
  };
  std::string name;
  Tensor f32 = read("f32.pb", name);
  EXPECT_EQ(name, "a");
  EXPECT_EQ(f32.dtype(), DType::Float);
  EXPECT_EQ(f32.dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(f32.toDoubles()[0], 1.5);
  EXPECT_EQ(f32.toDoubles()[1], -2);
  EXPECT_TRUE(std::isinf(f32.toDoubles()[2]));
  EXPECT_TRUE(std::signbit(f32.toDoubles()[3]));
  EXPECT_EQ(read("u8.pb", name).toInts(), (std::vector<int64_t>{0, 200, 255}));
  EXPECT_EQ(read("i8.pb", name).toInts(), (std::vector<int64_t>{-128, -1, 127}));
  EXPECT_EQ(read("i32.pb", name).toInts(), (std::vector<int64_t>{INT32_MIN, INT32_MAX}));
  EXPECT_EQ(read("i64.pb", name).toInts(), (std::vector<int64_t>{INT64_MIN, 5, INT64_MAX}));
  Tensor b = read("bool.pb", name);
  EXPECT_EQ(b.dtype(), DType::Bool);
  EXPECT_EQ(b.toInts(), (std::vector<int64_t>{1, 0}));
  Tensor h = read("f16.pb", name);
  EXPECT_EQ(h.dtype(), DType::Float16);
  EXPECT_EQ(h.toDoubles(), (std::vector<double>{1, -2}));
  Tensor d = read("f64.pb", name);
  EXPECT_EQ(d.rank(), 0);
  EXPECT_EQ(d.toDoubles(), (std::vector<double>{M_PI}));
  Tensor e = read("empty.pb", name);
  EXPECT_EQ(name, "");
  EXPECT_EQ(e.dims(), (std::vector<int64_t>{0, 3}));
  // And the bytes are what C++ itself writes for the same tensor.
  onnxio::writeTensorFile(tmp / "cpp_f32.pb", f32, "a");
  EXPECT_EQ(testutil::readText(tmp / "cpp_f32.pb"), testutil::readText(tmp / "pb" / "f32.pb"));
}
