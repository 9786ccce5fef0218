// runRunner with fake runners (shell scripts) that succeed, crash, hang, print malformed JSON,
// report errors and write the wrong outputs.
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/runners/Runner.h"

#include "RunnersTestUtil.h"

#include <gtest/gtest.h>

using namespace dynqual;
using namespace dynqual::runners;
using testutil::ScratchDir;

namespace {

// Every fake starts by reading the protocol arguments it needs and logging its argv.
const char* kPrelude = R"(out=""; reps=1
for a in "$@"; do printf '%s\n' "$a" >> "$(dirname "$0")/argv.log"; done
while [ $# -gt 0 ]; do
  case "$1" in --output-dir) out="$2"; shift;; --reps) reps="$2"; shift;; esac
  shift
done
samples=""; i=0
while [ $i -lt "$reps" ]; do samples="$samples${samples:+,}0.5"; i=$((i+1)); done
ok() { printf '{"protocol":1,"ok":true,"runner":"fake","version":"fake 0","samples_ms":[%s],"iterations_per_sample":2,"session_ms":1,"first_infer_ms":2,"counters":{"n":3}}' "$samples" > "$out/result.json"; }
)";

class FakeRunnerTest : public ::testing::Test {
protected:
  /// A runner ext:NAME whose body (after the prelude) is `body`.
  RunnerSpec fake(const std::string& name, const std::string& body) {
    std::filesystem::path script = dir / (name + ".sh");
    testutil::writeScript(script, std::string(kPrelude) + body);
    RunnerConfig config = RunnerConfig::parse(
        R"({"runners":{")" + name + R"(":{"argv":[")" + script.string() +
            R"(","--protocol","{protocol}","--model","{model}","--output-dir","{output_dir}",)"
            R"("--reps","{reps}","--warmup","{warmup}","--min-sample-ms","{min_sample_ms}","{inputs}"]}}})",
        "fake.json");
    return *config.find(name);
  }
  RunnerRequest request() {
    RunnerRequest r;
    r.model = dir / "model.onnx";
    r.inputs = {dir / "input_0.pb"};
    r.outputDir = dir / "out";
    r.reps = 3;
    r.warmup = 1;
    r.minSampleMs = 2;
    return r;
  }
  RunnerFailure failure(const RunnerSpec& spec, double timeout = 30, ResultExpectations expect = {}) {
    try {
      runRunner(spec, request(), timeout, expect);
    } catch (const RunnerFailure& f) {
      return f;
    }
    ADD_FAILURE() << spec.name << " succeeded";
    return RunnerFailure(FailureKind::Exited, "", "none");
  }
  void SetUp() override {
    onnxio::writeTensorFile(dir / "expected.pb", Tensor::fromDoubles(DType::Float, {3}, {1, 2, 3}), "y");
  }
  ScratchDir dir;
  std::string copyOutput() { return "cp \"" + (dir / "expected.pb").string() + "\" \"$out/output_0.pb\"\n"; }
};

} // namespace

TEST_F(FakeRunnerTest, GoodRunnerGetsTheProtocolArgumentsAndIsRead) {
  RunnerSpec spec = fake("good", copyOutput() + "ok\n");
  // A stale result from an earlier run in the same folder is not read back.
  std::filesystem::create_directories(dir / "out");
  testutil::writeText(dir / "out" / "output_1.pb", "stale");
  RunnerResult r = runRunner(spec, request(), 30, {-1, {"y"}});
  EXPECT_EQ(r.samplesMs, (std::vector<double>{0.5, 0.5, 0.5}));
  EXPECT_EQ(r.iterationsPerSample, 2);
  EXPECT_EQ(r.counters.at("n"), 3u);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].tensor.toDoubles(), (std::vector<double>{1, 2, 3}));
  EXPECT_GT(r.childWallMs, 0);
  EXPECT_EQ(testutil::readText(dir / "argv.log"),
            "--protocol\n1\n--model\n" + (dir / "model.onnx").string() + "\n--output-dir\n" + (dir / "out").string() +
                "\n--reps\n3\n--warmup\n1\n--min-sample-ms\n2\n--input\n" + (dir / "input_0.pb").string() + "\n");
}

TEST_F(FakeRunnerTest, Crash) {
  RunnerFailure f = failure(fake("crash", "echo 'about to crash' >&2\nkill -SEGV $$\n"));
  EXPECT_EQ(f.kind(), FailureKind::Crashed);
  EXPECT_EQ(f.runner(), "ext:crash");
  EXPECT_NE(std::string(f.what()).find("runner ext:crash: crashed: killed by signal 11"), std::string::npos)
      << f.what();
  EXPECT_NE(std::string(f.what()).find("running model.onnx; stderr: about to crash"), std::string::npos) << f.what();
}

TEST_F(FakeRunnerTest, Hang) {
  RunnerFailure f = failure(fake("hang", "sleep 30\n"), 0.5);
  EXPECT_EQ(f.kind(), FailureKind::TimedOut);
  EXPECT_STREQ(f.what(), "runner ext:hang: timed out: killed after 0.5 s running model.onnx");
}

TEST_F(FakeRunnerTest, MalformedJson) {
  RunnerFailure f =
      failure(fake("garbled", copyOutput() + "echo '{\"protocol\":1,\"ok\":tru' > \"$out/result.json\"\n"));
  EXPECT_EQ(f.kind(), FailureKind::MalformedResult);
  EXPECT_NE(std::string(f.what()).find("runner ext:garbled: malformed result: "), std::string::npos) << f.what();
  EXPECT_NE(std::string(f.what()).find("result.json: not valid JSON"), std::string::npos) << f.what();
}

TEST_F(FakeRunnerTest, WrongNumberOfOutputs) {
  RunnerSpec none = fake("none", "ok\n");
  EXPECT_EQ(failure(none).kind(), FailureKind::BadOutputs);
  RunnerSpec two = fake("two", copyOutput() + "cp \"$out/output_0.pb\" \"$out/output_1.pb\"\nok\n");
  RunnerFailure f = failure(two, 30, {-1, {"y"}});
  EXPECT_EQ(f.kind(), FailureKind::BadOutputs);
  EXPECT_NE(std::string(f.what()).find("runner ext:two: bad outputs: wrote 2 outputs"), std::string::npos) << f.what();
}

TEST_F(FakeRunnerTest, WrongNumberOfSamples) {
  RunnerFailure f = failure(fake("fewer", copyOutput() + "reps=1; samples=0.5; ok\n"));
  EXPECT_EQ(f.kind(), FailureKind::MalformedResult);
  EXPECT_NE(std::string(f.what()).find("has 1 samples, 3 were asked for"), std::string::npos) << f.what();
}

TEST_F(FakeRunnerTest, ExitWithoutResultNamesStderr) {
  RunnerFailure f = failure(fake("exit3", "echo 'Traceback...' >&2\necho 'ImportError: no module onnx' >&2\nexit 3\n"));
  EXPECT_EQ(f.kind(), FailureKind::Exited);
  EXPECT_NE(std::string(f.what()).find("runner ext:exit3: exited: exited with code 3 and wrote no"), std::string::npos)
      << f.what();
  EXPECT_NE(std::string(f.what()).find("stderr: ImportError: no module onnx"), std::string::npos) << f.what();
}

TEST_F(FakeRunnerTest, ReportedError) {
  RunnerFailure f = failure(fake("fails", "echo '{\"protocol\":1,\"ok\":false,\"error\":\"model.onnx: op Foo "
                                          "unsupported\"}' > \"$out/result.json\"\nexit 1\n"));
  EXPECT_EQ(f.kind(), FailureKind::ReportedError);
  EXPECT_STREQ(f.what(), "runner ext:fails: reported an error: model.onnx: op Foo unsupported");
}

TEST_F(FakeRunnerTest, MissingProgramIsUnavailable) {
  RunnerSpec spec =
      *RunnerConfig::parse(
           R"({"runners":{"gone":{"argv":["dynqual-no-such-runner","{model}","{output_dir}","{inputs}"]}}})",
           "gone.json")
           .find("gone");
  try {
    runRunner(spec, request(), 10);
    FAIL() << "ran a missing program";
  } catch (const RunnerUnavailable& e) {
    EXPECT_STREQ(e.what(), "runner ext:gone: program 'dynqual-no-such-runner' is not on PATH (declared in gone.json)");
  }
}
