// Runner protocol versions: probing --protocol-version, the {clock} placeholder, protocol 1 and 2
// results, and fake runners of each version run through runRunner.
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/runners/Runner.h"
#include "dynqual/runners/RunnerConfig.h"

#include "RunnersTestUtil.h"

#include <gtest/gtest.h>

using namespace dynqual;
using namespace dynqual::runners;
using testutil::ScratchDir;

namespace {

/// A fake runner: `--protocol-version` prints `version`; a run logs its argv, copies
/// expected.pb to output_0.pb and writes a result of protocol $protocol whose protocol 2 fields
/// are `v2Fields` (JSON members, may be empty).
std::string fakeBody(const std::string& version, const std::string& v2Fields) {
  return R"(if [ "$1" = "--protocol-version" ]; then echo )" + version + R"(; exit 0; fi
: > "$(dirname "$0")/argv.log"
for a in "$@"; do printf '%s\n' "$a" >> "$(dirname "$0")/argv.log"; done
out=""; proto=""; clock=wall
while [ $# -gt 0 ]; do
  case "$1" in --output-dir) out="$2"; shift;; --protocol) proto="$2"; shift;; --clock) clock="$2"; shift;; esac
  shift
done
cp "$(dirname "$0")/expected.pb" "$out/output_0.pb"
extra=""
[ "$proto" = 2 ] && extra=")" +
         v2Fields + R"("
printf '{"protocol":%s,"ok":true,"runner":"fake","version":"fake 0","samples_ms":[0.5],"iterations_per_sample":1,"session_ms":1,"first_infer_ms":2%s}' "$proto" "$extra" > "$out/result.json"
)";
}

class ProtocolTest : public ::testing::Test {
protected:
  void SetUp() override {
    onnxio::writeTensorFile(dir / "expected.pb", Tensor::fromDoubles(DType::Float, {1}, {1}), "y");
  }
  /// ext:NAME running the fake; `clock` adds "--clock {clock}", `probe` protocol_version_argv.
  RunnerSpec fake(const std::string& name, const std::string& version, const std::string& v2Fields, bool clock,
                  bool probe) {
    std::filesystem::path script = dir / (name + ".sh");
    testutil::writeScript(script, fakeBody(version, v2Fields));
    std::string json =
        R"({"runners":{")" + name + R"(":{"argv":[")" + script.string() + R"(","--protocol","{protocol}",)" +
        (clock ? R"("--clock","{clock}",)" : "") + R"("--model","{model}","--output-dir","{output_dir}","{inputs}"])" +
        (probe ? R"(,"protocol_version_argv":[")" + script.string() + R"(","--protocol-version"])" : "") + "}}}";
    return *RunnerConfig::parse(json, "fake.json").find(name);
  }
  RunnerRequest request(int protocol, RunnerClock clock) {
    RunnerRequest r;
    r.model = dir / "model.onnx";
    r.outputDir = dir / "out";
    r.protocol = protocol;
    r.clock = clock;
    return r;
  }
  std::string argvLog() { return testutil::readText(dir / "argv.log"); }
  ScratchDir dir;
};

} // namespace

TEST_F(ProtocolTest, ARunnerWithoutVersionCommandSpeaksProtocol1) {
  RunnerSpec spec = fake("old", "1", "", false, false);
  EXPECT_EQ(probeProtocol(spec), 1);
  RunnerResult r = runRunner(spec, request(1, RunnerClock::Wall), 30);
  EXPECT_EQ(r.protocol, 1);
  EXPECT_EQ(r.clock, RunnerClock::Wall);
  EXPECT_EQ(r.threads, "");
  EXPECT_EQ(argvLog().find("--clock"), std::string::npos) << argvLog();
  EXPECT_NE(argvLog().find("--protocol\n1\n"), std::string::npos) << argvLog();
}

TEST_F(ProtocolTest, ProbesTheVersionAndPassesTheClock) {
  RunnerSpec spec =
      fake("new", "2", R"(,\"clock\":\"$clock\",\"threads\":{\"intra_op\":1,\"inter_op\":1})", true, true);
  EXPECT_EQ(probeProtocol(spec), 2);
  RunnerResult r = runRunner(spec, request(2, RunnerClock::ProcessCpu), 30);
  EXPECT_EQ(r.protocol, 2);
  EXPECT_EQ(r.clock, RunnerClock::ProcessCpu);
  EXPECT_EQ(r.threads, R"({"inter_op":1,"intra_op":1})");
  EXPECT_NE(argvLog().find("--protocol\n2\n--clock\nprocess-cpu\n"), std::string::npos) << argvLog();
  r = runRunner(spec, request(2, RunnerClock::Wall), 30);
  EXPECT_EQ(r.clock, RunnerClock::Wall);
  EXPECT_NE(argvLog().find("--clock\nwall\n"), std::string::npos) << argvLog();
}

TEST_F(ProtocolTest, AVersionThisDriverDoesNotSpeakIsUnavailable) {
  for (const char* version : {"4", "0", "two"}) {
    RunnerSpec spec = fake(std::string("v") + (version[0] == 't' ? "x" : version), version, "", false, true);
    try {
      probeProtocol(spec);
      ADD_FAILURE() << "accepted version " << version;
    } catch (const RunnerUnavailable& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("printed '") + version + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("speaks runner protocol 1 to 3"), std::string::npos) << e.what();
    }
  }
}

TEST_F(ProtocolTest, AResultOfAnotherClockOrProtocolIsMalformed) {
  // Asked for process-cpu, the runner says wall: its samples would compare different things.
  RunnerSpec liar = fake("liar", "2", R"(,\"clock\":\"wall\")", true, true);
  try {
    runRunner(liar, request(2, RunnerClock::ProcessCpu), 30);
    FAIL() << "accepted samples of the wrong clock";
  } catch (const RunnerFailure& f) {
    EXPECT_EQ(f.kind(), FailureKind::MalformedResult);
    EXPECT_NE(std::string(f.what()).find("\"clock\" is \"wall\", process-cpu was asked for"), std::string::npos)
        << f.what();
  }
  // Protocol 2 without a clock in the result.
  RunnerSpec noClock = fake("noclock", "2", "", true, true);
  try {
    runRunner(noClock, request(2, RunnerClock::Wall), 30);
    FAIL() << "accepted a protocol 2 result without \"clock\"";
  } catch (const RunnerFailure& f) {
    EXPECT_NE(std::string(f.what()).find("\"clock\" must be a string"), std::string::npos) << f.what();
  }
  // A protocol 1 result where protocol 2 was asked for.
  ResultExpectations v2;
  v2.protocol = 2;
  runRunner(fake("v1", "1", "", false, false), request(1, RunnerClock::Wall), 30);
  try {
    parseRunnerResult(dir / "out", 0, v2);
    FAIL() << "accepted protocol 1 as 2";
  } catch (const RunnerFailure& f) {
    EXPECT_NE(std::string(f.what()).find("speaks protocol 1, expected 2"), std::string::npos) << f.what();
  }
}

TEST_F(ProtocolTest, TheClockPlaceholderNeedsProtocol2) {
  RunnerSpec withClock = fake("c", "2", "", true, true);
  RunnerSpec without = fake("n", "2", "", false, true);
  // {clock} for a runner that speaks protocol 1 would pass it a flag it does not know.
  EXPECT_THROW(buildArgv(withClock, request(1, RunnerClock::Wall)), RunnerConfigError);
  EXPECT_THROW(buildArgv(without, request(1, RunnerClock::ProcessCpu)), std::invalid_argument);
  try {
    buildArgv(without, request(2, RunnerClock::ProcessCpu));
    FAIL() << "asked a runner without {clock} for process-cpu";
  } catch (const RunnerConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("argv never passes {clock}"), std::string::npos) << e.what();
  }
  EXPECT_THROW(buildArgv(without, request(4, RunnerClock::Wall)), std::invalid_argument);
  EXPECT_TRUE(passesClock(withClock));
  EXPECT_FALSE(passesClock(without));
}

TEST_F(ProtocolTest, ConfigChecksTheVersionCommand) {
  auto error = [](const std::string& decl) {
    try {
      RunnerConfig::parse(R"({"runners":{"r":)" + decl + "}}", "cfg.json");
    } catch (const RunnerConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string argv = R"("argv":["r","{model}","{output_dir}","--clock={clock}","{inputs}"])";
  EXPECT_NE(error("{" + argv + "}").find("argv passes {clock} (protocol 2) but no \"protocol_version_argv\""),
            std::string::npos);
  EXPECT_NE(error("{" + argv + R"(,"protocol_version_argv":["r","{model}"]})").find("takes no placeholders"),
            std::string::npos);
  EXPECT_NE(error("{" + argv + R"(,"protocol_version_argv":[]})").find("non-empty array of strings"),
            std::string::npos);
  EXPECT_EQ(error("{" + argv + R"(,"protocol_version_argv":["r","--protocol-version"]})"), "");
}

TEST(OrtCpuTemplate, PassesTheClockFromProtocol2AndServeFrom3) {
  std::string why;
  try {
    RunnerSpec v3 = ortCpuRunner(3);
    RunnerSpec v2 = ortCpuRunner(2);
    RunnerSpec v1 = ortCpuRunner(1);
    EXPECT_TRUE(passesClock(v3));
    EXPECT_TRUE(passesServe(v3));
    EXPECT_TRUE(passesClock(v2));
    EXPECT_FALSE(passesServe(v2));
    EXPECT_FALSE(passesClock(v1));
    ASSERT_EQ(v2.versionArgv.size(), 3u);
    EXPECT_EQ(v2.versionArgv[2], "--protocol-version");
    // The shipped runner speaks protocol 3.
    EXPECT_EQ(probeProtocol(v2), 3);
  } catch (const RunnerUnavailable& e) {
    GTEST_SKIP() << e.what();
  }
}
