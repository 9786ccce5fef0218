// Runner arms and clocks in the executor: a runner of protocol 1 is timed on the wall clock only,
// one of protocol 2 is asked for process-cpu through {clock}, and the clocks of the other kind of
// arm are refused. The runners are shell scripts declared in a runner config file.
#include "dynqual/exec/Executor.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using namespace dynqual::exec;

namespace {

const fs::path kModel = fs::path(DYNQUAL_CORPUS_DIR) / "decoder_tiny";

/// A runner script: prints `version` for --protocol-version; a run logs its argv and writes
/// decoder_tiny's stored output and a result in the protocol it was asked for, naming the clock.
const char* kScript = R"(#!/bin/sh
if [ "$1" = "--protocol-version" ]; then echo "$VERSION"; exit 0; fi
printf '%s\n' "$@" > "$(dirname "$0")/argv.log"
out=""; proto=""; clock=wall; reps=1
while [ $# -gt 0 ]; do
  case "$1" in --output-dir) out="$2"; shift;; --protocol) proto="$2"; shift;; --clock) clock="$2"; shift;;
               --reps) reps="$2"; shift;; esac
  shift
done
cp "$EXPECTED" "$out/output_0.pb"
samples=""; i=0
while [ $i -lt "$reps" ]; do samples="$samples${samples:+,}0.5"; i=$((i+1)); done
extra=""; [ "$proto" = 2 ] && extra=",\"clock\":\"$clock\""
printf '{"protocol":%s,"ok":true,"runner":"fake","version":"fake 0","samples_ms":[%s],"iterations_per_sample":1,"session_ms":1,"first_infer_ms":2%s}' "$proto" "$samples" "$extra" > "$out/result.json"
)";

class RunnerClockTest : public ::testing::Test {
protected:
  void SetUp() override {
    work = fs::temp_directory_path() / ("runner-clock-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(work);
    fs::create_directories(work);
    // v1: no version command, no {clock}; v2: both.
    std::ostringstream config;
    config << R"({"runners":{)";
    for (const char* v : {"1", "2"}) {
      fs::path script = work / ("runner" + std::string(v) + ".sh");
      std::string body = kScript;
      body.insert(body.find('\n') + 1, "VERSION=" + std::string(v) + "\nEXPECTED=\"" +
                                           (kModel / "test_data_set_0" / "output_0.pb").string() + "\"\n");
      std::ofstream(script) << body;
      fs::permissions(script, fs::perms::owner_all);
      bool v2 = std::string(v) == "2";
      config << (v2 ? "," : "") << "\"v" << v << R"(":{"argv":[")" << script.string()
             << R"(","--protocol","{protocol}",)" << (v2 ? R"("--clock","{clock}",)" : "")
             << R"("--model","{model}","--output-dir","{output_dir}","--reps","{reps}","{inputs}"])";
      if (v2)
        config << R"(,"protocol_version_argv":[")" << script.string() << R"(","--protocol-version"])";
      config << "}";
    }
    config << "}}";
    std::ofstream(work / "runners.json") << config.str();
    ExecConfig c;
    c.workDir = work / "w";
    c.runTimeoutSeconds = 20;
    c.runnerConfig = work / "runners.json";
    executor = std::make_unique<Executor>(c);
  }
  void TearDown() override { fs::remove_all(work); }
  Arm runnerArm(const std::string& name) {
    Arm a;
    a.label = "base";
    a.variant = parseVariant("ext:" + name);
    return a;
  }
  std::vector<fs::path> inputs() {
    std::vector<fs::path> in;
    for (int i = 0; fs::exists(kModel / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb")); ++i)
      in.push_back(kModel / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb"));
    return in;
  }
  std::string argvLog() {
    std::ifstream in(work / "argv.log");
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  fs::path work;
  std::unique_ptr<Executor> executor;
};

} // namespace

TEST_F(RunnerClockTest, Protocol1RunnerIsTimedOnTheWallClockOnly) {
  Arm v1 = runnerArm("v1");
  EXPECT_EQ(executor->runnerProtocol(v1), 1);
  EXPECT_EQ(executor->clockUnavailable(v1, TimingClock::Wall), "");
  EXPECT_NE(executor->clockUnavailable(v1, TimingClock::ProcessCpu).find("runner protocol 1"), std::string::npos);
  PreparedModel m = executor->prepare(v1, kModel);
  TimingRequest t;
  t.reps = 2;
  ExecResult r = executor->execute(m, inputs(), t, work / "o1");
  EXPECT_EQ(r.samplesMs.size(), 2u);
  EXPECT_NE(argvLog().find("--protocol\n1\n"), std::string::npos) << argvLog();
  EXPECT_EQ(argvLog().find("--clock"), std::string::npos) << argvLog();
  t.clock = TimingClock::ProcessCpu;
  try {
    executor->execute(m, inputs(), t, work / "o2");
    FAIL() << "a protocol 1 runner was asked for process-cpu";
  } catch (const ExecError& e) {
    EXPECT_EQ(e.stage(), Stage::Infra);
    EXPECT_NE(std::string(e.what()).find("the process-cpu clock"), std::string::npos) << e.what();
  }
}

TEST_F(RunnerClockTest, Protocol2RunnerIsAskedForProcessCpu) {
  Arm v2 = runnerArm("v2");
  EXPECT_EQ(executor->runnerProtocol(v2), 2);
  EXPECT_EQ(executor->clockUnavailable(v2, TimingClock::ProcessCpu), "");
  // A runner times a process, not the runtime's thread.
  EXPECT_NE(executor->clockUnavailable(v2, TimingClock::ThreadCpu), "");
  PreparedModel m = executor->prepare(v2, kModel);
  TimingRequest t;
  t.reps = 3;
  t.clock = TimingClock::ProcessCpu;
  ExecResult r = executor->execute(m, inputs(), t, work / "o");
  EXPECT_EQ(r.samplesMs, (std::vector<double>{0.5, 0.5, 0.5}));
  EXPECT_NE(argvLog().find("--protocol\n2\n--clock\nprocess-cpu\n"), std::string::npos) << argvLog();
  t.clock = TimingClock::Wall;
  executor->execute(m, inputs(), t, work / "o");
  EXPECT_NE(argvLog().find("--clock\nwall\n"), std::string::npos) << argvLog();
}

TEST_F(RunnerClockTest, ClockNamesRoundTrip) {
  for (TimingClock c : {TimingClock::Wall, TimingClock::ThreadCpu, TimingClock::ProcessCpu})
    EXPECT_EQ(parseTimingClock(timingClockName(c)), c);
  EXPECT_STREQ(timingClockName(TimingClock::ProcessCpu), "process-cpu");
  EXPECT_THROW(parseTimingClock("cpu"), std::invalid_argument);
}
