// parseRunnerResult: a good result.json and each kind of bad one.
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/runners/Runner.h"

#include "RunnersTestUtil.h"

#include <gtest/gtest.h>

using namespace dynqual;
using namespace dynqual::runners;
using testutil::ScratchDir;

namespace {

const char* kGood = R"({"protocol":1,"ok":true,"runner":"fake","version":"fake 1.0","samples_ms":[0.5,0.25,1],)"
                    R"("iterations_per_sample":4,"session_ms":12.5,"first_infer_ms":3,"counters":{"kernels":7}})";

class ResultTest : public ::testing::Test {
protected:
  void SetUp() override { writeOutput(0, "y"); }
  void writeOutput(int k, const std::string& name) {
    onnxio::writeTensorFile(dir / ("output_" + std::to_string(k) + ".pb"),
                            Tensor::fromDoubles(DType::Float, {2}, {1.5, -2 - k}), name);
  }
  void writeResult(const std::string& json) { testutil::writeText(dir / "result.json", json); }
  /// The failure parseRunnerResult throws; fails the test when it returns.
  RunnerFailure failure(int exitCode = 0, ResultExpectations expect = {}) {
    try {
      parseRunnerResult(dir.path(), exitCode, expect);
    } catch (const RunnerFailure& f) {
      return f;
    }
    ADD_FAILURE() << "parseRunnerResult accepted the result";
    return RunnerFailure(FailureKind::Exited, "", "none");
  }
  /// kGood with `from` replaced by `to`.
  static std::string good(const std::string& from, const std::string& to) {
    std::string s = kGood;
    auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  }
  ScratchDir dir;
};

#define EXPECT_FAILS(KIND, TEXT)                                                                                       \
  do {                                                                                                                 \
    RunnerFailure f_ = failure();                                                                                      \
    EXPECT_EQ(f_.kind(), KIND) << f_.what();                                                                           \
    EXPECT_NE(std::string(f_.what()).find(TEXT), std::string::npos) << f_.what();                                      \
  } while (0)

} // namespace

TEST_F(ResultTest, ReadsAGoodResult) {
  writeResult(kGood);
  RunnerResult r = parseRunnerResult(dir.path(), 0, {3, {"y"}});
  EXPECT_EQ(r.runner, "fake");
  EXPECT_EQ(r.version, "fake 1.0");
  EXPECT_EQ(r.samplesMs, (std::vector<double>{0.5, 0.25, 1}));
  EXPECT_EQ(r.iterationsPerSample, 4);
  EXPECT_EQ(r.sessionMs, 12.5);
  EXPECT_EQ(r.firstInferMs, 3);
  EXPECT_EQ(r.counters, (std::map<std::string, uint64_t>{{"kernels", 7}}));
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].name, "y");
  EXPECT_EQ(r.outputs[0].file, dir / "output_0.pb");
  EXPECT_EQ(r.outputs[0].tensor.toDoubles(), (std::vector<double>{1.5, -2}));
}

TEST_F(ResultTest, CountersAreOptionalAndOutputsAreOrdered) {
  writeResult(good(R"(,"counters":{"kernels":7})", ""));
  for (int k = 1; k <= 11; ++k)
    writeOutput(k, "o" + std::to_string(k));
  RunnerResult r = parseRunnerResult(dir.path(), 0);
  EXPECT_TRUE(r.counters.empty());
  ASSERT_EQ(r.outputs.size(), 12u);
  EXPECT_EQ(r.outputs[10].name, "o10");
  EXPECT_EQ(r.outputs[10].tensor.toDoubles()[1], -12);
}

TEST_F(ResultTest, MalformedJson) {
  writeResult("{\"protocol\":1,");
  EXPECT_FAILS(FailureKind::MalformedResult, "result.json: not valid JSON");
  writeResult("[1,2]");
  EXPECT_FAILS(FailureKind::MalformedResult, "result.json: not a JSON object");
  std::string what = failure().what();
  EXPECT_EQ(what.find('\n'), std::string::npos);
}

TEST_F(ResultTest, ProtocolMismatch) {
  writeResult(good(R"("protocol":1)", R"("protocol":2)"));
  EXPECT_FAILS(FailureKind::MalformedResult, "speaks protocol 2, expected 1");
  writeResult(good(R"("protocol":1,)", ""));
  EXPECT_FAILS(FailureKind::MalformedResult, "missing \"protocol\"");
  writeResult(good(R"("protocol":1)", R"("protocol":"1")"));
  EXPECT_FAILS(FailureKind::MalformedResult, "speaks protocol \"1\"");
}

TEST_F(ResultTest, ReportedErrorCarriesTheRunnersMessageOnOneLine) {
  writeResult(R"({"protocol":1,"ok":false,"error":"unsupported: dtype STRING in input_0.pb"})");
  for (int exitCode : {1, 0}) {
    RunnerFailure f = failure(exitCode);
    EXPECT_EQ(f.kind(), FailureKind::ReportedError);
    EXPECT_EQ(f.detail(), "unsupported: dtype STRING in input_0.pb");
    EXPECT_STREQ(f.what(), "reported an error: unsupported: dtype STRING in input_0.pb");
  }
  writeResult(R"({"protocol":1,"ok":false,"error":"line one\nline two"})");
  EXPECT_EQ(failure(1).detail(), "line one line two");
  writeResult(R"({"protocol":1,"ok":false})");
  EXPECT_NE(failure(1).detail().find("(no error message in "), std::string::npos);
}

TEST_F(ResultTest, ExitCodeAndResultMustAgree) {
  RunnerFailure f = failure(3);
  EXPECT_EQ(f.kind(), FailureKind::Exited);
  EXPECT_NE(std::string(f.what()).find("exited with code 3 and wrote no"), std::string::npos) << f.what();
  EXPECT_FAILS(FailureKind::MalformedResult, "result.json: not written");
  writeResult(kGood);
  f = failure(1);
  EXPECT_EQ(f.kind(), FailureKind::Exited);
  EXPECT_NE(std::string(f.what()).find("exited with code 1 although"), std::string::npos) << f.what();
  writeResult("garbage");
  EXPECT_EQ(failure(2).kind(), FailureKind::Exited);
}

TEST_F(ResultTest, BadSamples) {
  writeResult(good("[0.5,0.25,1]", "[0.5,-0.25,1]"));
  EXPECT_FAILS(FailureKind::MalformedResult, "samples_ms[1] is -0.25, expected a finite number >= 0");
  writeResult(good("[0.5,0.25,1]", "[0.5,0.25,null]")); // JSON.stringify writes NaN and Infinity as null
  EXPECT_FAILS(FailureKind::MalformedResult, "samples_ms[2] is null, not a number");
  writeResult(good("[0.5,0.25,1]", "[1e999]")); // out of double range: rejected by the JSON parser
  EXPECT_FAILS(FailureKind::MalformedResult, "result.json: not valid JSON: ");
  writeResult(good("[0.5,0.25,1]", R"(["0.5"])"));
  EXPECT_FAILS(FailureKind::MalformedResult, "samples_ms[0] is \"0.5\", not a number");
  writeResult(good("[0.5,0.25,1]", "[]"));
  EXPECT_FAILS(FailureKind::MalformedResult, "has no samples");
  writeResult(good("[0.5,0.25,1]", "3"));
  EXPECT_FAILS(FailureKind::MalformedResult, "\"samples_ms\" must be an array");
}

TEST_F(ResultTest, WrongSampleCount) {
  writeResult(kGood);
  RunnerFailure f = failure(0, {5, {}});
  EXPECT_EQ(f.kind(), FailureKind::MalformedResult);
  EXPECT_NE(std::string(f.what()).find("has 3 samples, 5 were asked for"), std::string::npos) << f.what();
}

TEST_F(ResultTest, BadScalarsAndCounters) {
  writeResult(good(R"("iterations_per_sample":4)", R"("iterations_per_sample":0)"));
  EXPECT_FAILS(FailureKind::MalformedResult, "\"iterations_per_sample\" must be an integer >= 1");
  writeResult(good(R"("iterations_per_sample":4)", R"("iterations_per_sample":1.5)"));
  EXPECT_FAILS(FailureKind::MalformedResult, "\"iterations_per_sample\" must be an integer >= 1");
  writeResult(good(R"("session_ms":12.5)", R"("session_ms":-1)"));
  EXPECT_FAILS(FailureKind::MalformedResult, "\"session_ms\" is -1");
  writeResult(good(R"("first_infer_ms":3,)", ""));
  EXPECT_FAILS(FailureKind::MalformedResult, "missing \"first_infer_ms\"");
  writeResult(good(R"("runner":"fake",)", ""));
  EXPECT_FAILS(FailureKind::MalformedResult, "\"runner\" must be a string");
  writeResult(good(R"("version":"fake 1.0")", R"("version":1)"));
  EXPECT_FAILS(FailureKind::MalformedResult, "\"version\" must be a string");
  writeResult(good(R"({"kernels":7})", R"({"kernels":-7})"));
  EXPECT_FAILS(FailureKind::MalformedResult, "counter \"kernels\" is -7, not an unsigned integer");
  writeResult(good(R"({"kernels":7})", R"({"kernels":7.5})"));
  EXPECT_FAILS(FailureKind::MalformedResult, "counter \"kernels\" is 7.5");
  writeResult(good(R"({"kernels":7})", R"({"big":18446744073709551615})"));
  EXPECT_EQ(parseRunnerResult(dir.path(), 0).counters.at("big"), 18446744073709551615ull);
  writeResult(good(R"("ok":true)", R"("ok":1)"));
  EXPECT_FAILS(FailureKind::MalformedResult, "\"ok\" must be true or false");
}

TEST_F(ResultTest, MissingOutputs) {
  writeResult(kGood);
  std::filesystem::remove(dir / "output_0.pb");
  EXPECT_FAILS(FailureKind::BadOutputs, "no output_0.pb in ");
  writeOutput(1, "b");
  EXPECT_FAILS(FailureKind::BadOutputs, "output_1.pb without output_0.pb");
  writeOutput(0, "a");
  writeOutput(3, "d");
  EXPECT_FAILS(FailureKind::BadOutputs, "output_3.pb without output_2.pb");
}

TEST_F(ResultTest, OutputsMustMatchTheModel) {
  writeResult(kGood);
  writeOutput(1, "z");
  RunnerFailure f = failure(0, {-1, {"y"}});
  EXPECT_EQ(f.kind(), FailureKind::BadOutputs);
  EXPECT_NE(std::string(f.what()).find("wrote 2 outputs in "), std::string::npos) << f.what();
  EXPECT_NE(std::string(f.what()).find("the model has 1 (y)"), std::string::npos) << f.what();
  f = failure(0, {-1, {"y", "w"}});
  EXPECT_NE(std::string(f.what()).find("output_1.pb is named 'z', expected graph output 'w'"), std::string::npos)
      << f.what();
}

TEST_F(ResultTest, UnreadableOutput) {
  writeResult(kGood);
  testutil::writeText(dir / "output_0.pb", "\xff\xff\xff garbage");
  RunnerFailure f = failure();
  EXPECT_EQ(f.kind(), FailureKind::BadOutputs);
  EXPECT_NE(std::string(f.what()).find("output_0.pb"), std::string::npos) << f.what();
}
