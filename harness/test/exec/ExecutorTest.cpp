// The executor on real binaries: a compile and a run in child processes, and each fault the
// test-only injector can cause becomes an ExecError naming its stage.
#include "dynqual/exec/Executor.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace dynqual::exec;

namespace {

const fs::path kModel = fs::path(DYNQUAL_CORPUS_DIR) / "decoder_tiny";

class ExecutorTest : public ::testing::Test {
protected:
  void SetUp() override {
    work = fs::temp_directory_path() / ("exec-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(work);
    ExecConfig c;
    c.workDir = work;
    c.runTimeoutSeconds = 20;
    c.compileTimeoutSeconds = 60;
    executor = std::make_unique<Executor>(c);
    arm.label = "base";
    arm.variant = parseVariant("dq");
    arm.binDir = DYNQUAL_BIN_DIR;
  }
  void TearDown() override {
    unsetenv("DYNQUAL_TEST_FAULT");
    fs::remove_all(work);
  }
  std::vector<fs::path> inputs() {
    std::vector<fs::path> in;
    for (int i = 0; fs::exists(kModel / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb")); ++i)
      in.push_back(kModel / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb"));
    return in;
  }
  Stage stageOf(const std::function<void()>& f, std::string& message) {
    try {
      f();
    } catch (const ExecError& e) {
      message = e.what();
      return e.stage();
    }
    ADD_FAILURE() << "no ExecError";
    return Stage::Infra;
  }
  fs::path work;
  std::unique_ptr<Executor> executor;
  Arm arm;
};

} // namespace

// Batch length for the timing test: decoder_tiny runs in under 1 ms in the plain build. The
// sanitized runtime (docs/sanitizers.md) runs it in more than 2 ms, so its batches are longer.
#if defined(__SANITIZE_ADDRESS__)
constexpr double kBatchMs = 50;
#else
constexpr double kBatchMs = 2;
#endif

TEST_F(ExecutorTest, CompilesAndRunsWithTimingSamples) {
  PreparedModel m = executor->prepare(arm, kModel);
  EXPECT_TRUE(fs::exists(m.artifact));
  EXPECT_GT(m.artifactBytes, 0u);
  TimingRequest t;
  t.reps = 4;
  t.minSampleMs = kBatchMs;
  ExecResult r = executor->execute(m, inputs(), t, work / "out");
  EXPECT_FALSE(r.outputs.empty());
  ASSERT_EQ(r.samplesMs.size(), 4u);
  // decoder_tiny runs in well under kBatchMs / 2 here, so batches of kBatchMs need k >= 2 runs. k
  // is sized on the fastest warm-up run, so a batch lasts about kBatchMs; half of it bounds timer
  // and scheduling noise.
  EXPECT_GE(r.iterationsPerSample, 2) << "one run took " << (r.samplesMs.empty() ? 0 : r.samplesMs[0]) << " ms";
  for (double s : r.samplesMs)
    EXPECT_GE(s * r.iterationsPerSample, kBatchMs / 2);
  EXPECT_FALSE(r.counters.empty());
  // The modelled device time of every sample is the checked run's counter: one value, in ms.
  uint64_t checkedNs = 0;
  for (const auto& [name, value] : r.counters)
    if (name == "modelled_device_ns")
      checkedNs = value;
  ASSERT_GT(checkedNs, 0u);
  ASSERT_EQ(r.modelledSamplesMs.size(), 4u);
  for (double s : r.modelledSamplesMs)
    EXPECT_EQ(s, static_cast<double>(checkedNs) / 1e6);
}

TEST_F(ExecutorTest, BusyWorkLeavesTheModelledDeviceTimeAlone) {
  PreparedModel m = executor->prepare(arm, kModel);
  TimingRequest t;
  t.reps = 2;
  ExecResult plain = executor->execute(m, inputs(), t, work / "plain");
  t.busyWaitUs = 2000;
  ExecResult busy = executor->execute(m, inputs(), t, work / "busy");
  ASSERT_EQ(plain.modelledSamplesMs.size(), 2u);
  EXPECT_EQ(busy.modelledSamplesMs, plain.modelledSamplesMs); // the driver scales an injected shift itself
}

TEST_F(ExecutorTest, BusyWaitSlowsEveryTimedRun) {
  PreparedModel m = executor->prepare(arm, kModel);
  TimingRequest t;
  t.reps = 3;
  t.busyWaitUs = 5000; // 5 ms of busy work per run, so every sample is at least 5 ms
  ExecResult r = executor->execute(m, inputs(), t, work / "out");
  for (double s : r.samplesMs)
    EXPECT_GE(s, 5.0);
}

TEST_F(ExecutorTest, CompilerCrashIsACompileFailure) {
  setenv("DYNQUAL_TEST_FAULT", "compile-abort", 1);
  std::string msg;
  EXPECT_EQ(stageOf([&] { executor->prepare(arm, kModel); }, msg), Stage::Compile);
  EXPECT_NE(msg.find("compile"), std::string::npos) << msg;
  EXPECT_NE(msg.find("signal 6"), std::string::npos) << msg;
  EXPECT_NE(msg.find("decoder_tiny"), std::string::npos) << msg;
}

TEST_F(ExecutorTest, RuntimeCrashAndHangAreRunFailures) {
  PreparedModel m = executor->prepare(arm, kModel);
  std::string msg;
  setenv("DYNQUAL_TEST_FAULT", "run-abort", 1);
  EXPECT_EQ(stageOf([&] { executor->execute(m, inputs(), {}, work / "o1"); }, msg), Stage::Run);
  EXPECT_NE(msg.find("signal 6"), std::string::npos) << msg;

  ExecConfig quick = executor->config();
  quick.runTimeoutSeconds = 1;
  Executor fast(quick);
  setenv("DYNQUAL_TEST_FAULT", "run-hang", 1);
  EXPECT_EQ(stageOf([&] { fast.execute(m, inputs(), {}, work / "o2"); }, msg), Stage::Run);
  EXPECT_NE(msg.find("timed out"), std::string::npos) << msg;
}

TEST_F(ExecutorTest, FaultFilterSparesOtherModels) {
  setenv("DYNQUAL_TEST_FAULT", "compile-abort:some_other_model", 1);
  EXPECT_NO_THROW(executor->prepare(arm, kModel));
}

TEST_F(ExecutorTest, MissingBinariesAreInfrastructure) {
  arm.binDir = work / "nowhere";
  std::string msg;
  EXPECT_EQ(stageOf([&] { executor->prepare(arm, kModel); }, msg), Stage::Infra);
  EXPECT_NE(msg.find("nowhere"), std::string::npos) << msg;
}

TEST_F(ExecutorTest, WrongInputShapeIsARunFailureNamingTheInput) {
  PreparedModel m = executor->prepare(arm, kModel);
  auto in = inputs();
  ASSERT_GE(in.size(), 2u);
  std::swap(in[0], in[1]);
  std::string msg;
  EXPECT_EQ(stageOf([&] { executor->execute(m, in, {}, work / "o3"); }, msg), Stage::Run);
  EXPECT_NE(msg.find("input"), std::string::npos) << msg;
}

TEST_F(ExecutorTest, ThreadCpuClockTimesTheRuntimeThread) {
  PreparedModel m = executor->prepare(arm, kModel);
  TimingRequest t;
  t.reps = 3;
  t.clock = TimingClock::ThreadCpu;
  t.busyWaitUs = 5000; // the busy work spins on the timing clock: 5 ms of this thread's CPU per run
  ExecResult r = executor->execute(m, inputs(), t, work / "out");
  ASSERT_EQ(r.samplesMs.size(), 3u);
  for (double s : r.samplesMs)
    EXPECT_GE(s, 5.0);
}

TEST_F(ExecutorTest, ArmProtocolsOneToThreeAreSpokenOthersRefused) {
  EXPECT_EQ(executor->armProtocol(arm), 3);
  EXPECT_EQ(executor->modelledUnavailable(arm), "");
  auto fakeArm = [&](const std::string& version) {
    fs::path dir = work / ("protocol-" + version);
    fs::create_directories(dir);
    for (const char* bin : {"dynqual", "dynqual-exec"}) {
      std::ofstream(dir / bin) << "#!/bin/sh\necho " << version << "\n";
      fs::permissions(dir / bin, fs::perms::owner_all);
    }
    Arm a = arm;
    a.binDir = dir;
    return a;
  };
  Arm old = fakeArm("1");
  EXPECT_EQ(executor->armProtocol(old), 1);
  // An arm of protocol 1 has no --clock: asking it for thread CPU time is an infrastructure error.
  PreparedModel m;
  m.arm = old;
  m.modelName = "decoder_tiny";
  TimingRequest t;
  t.reps = 1;
  t.clock = TimingClock::ThreadCpu;
  std::string msg;
  EXPECT_EQ(stageOf([&] { executor->execute(m, inputs(), t, work / "o"); }, msg), Stage::Infra);
  EXPECT_NE(msg.find("protocol 2"), std::string::npos) << msg;

  // Protocol 2 times on any clock but reports no modelled device time.
  Arm two = fakeArm("2");
  EXPECT_EQ(executor->armProtocol(two), 2);
  EXPECT_NE(executor->modelledUnavailable(two).find("needs arm protocol 3"), std::string::npos)
      << executor->modelledUnavailable(two);

  Arm future = fakeArm("4");
  EXPECT_EQ(stageOf([&] { executor->armProtocol(future); }, msg), Stage::Infra);
  EXPECT_NE(msg.find("'4'"), std::string::npos) << msg;
}

// A sanitizer report ends in a stack trace or memory map; the error quotes its headline instead.
TEST_F(ExecutorTest, RuntimeSanitizerReportIsQuotedByItsHeadline) {
  PreparedModel m = executor->prepare(arm, kModel);
  fs::path dir = work / "sanitized-arm";
  fs::create_directories(dir);
  std::ofstream(dir / "dynqual-exec")
      << "#!/bin/sh\n"
         "if [ \"$1\" = --protocol-version ]; then echo 2; exit 0; fi\n"
         "echo '==7==ERROR: AddressSanitizer: heap-use-after-free on address 0x10' >&2\n"
         "echo '    #0 0x10 in f x.cpp:1' >&2\n"
         "echo '==7==ABORTING' >&2\n"
         "exit 1\n";
  fs::permissions(dir / "dynqual-exec", fs::perms::owner_all);
  m.arm.binDir = dir;
  std::string msg;
  EXPECT_EQ(stageOf([&] { executor->execute(m, inputs(), {}, work / "o"); }, msg), Stage::Run);
  EXPECT_NE(msg.find("==7==ERROR: AddressSanitizer: heap-use-after-free on address 0x10"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("ABORTING"), std::string::npos) << msg;
}

TEST_F(ExecutorTest, RunOutOfMemoryIsARunFailureUnderTheChildLimit) {
  PreparedModel m = executor->prepare(arm, kModel);
  ExecConfig small = executor->config();
  small.memoryLimitBytes = uint64_t{512} << 20;
  Executor limited(small);
  setenv("DYNQUAL_TEST_FAULT", "run-oom", 1);
  std::string msg;
  EXPECT_EQ(stageOf([&] { limited.execute(m, inputs(), {}, work / "o"); }, msg), Stage::Run);
  // The allocation fails inside the child (it would exit 3 if the limit did not hold). Under ASan
  // the limit is its hard_rss_limit_mb, and ASan's operator new reports and exits instead of
  // throwing; the error names the report's headline, not the memory map that ends it.
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_NE(msg.find("hard rss limit exhausted"), std::string::npos) << msg;
#else
  EXPECT_NE(msg.find("bad_alloc"), std::string::npos) << msg;
#endif
}
