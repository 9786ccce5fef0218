// process::runProcess, the one helper for a child that runs to its end: capture, exit status and signal, the wall limit
// on the whole process group, start failures, PATH lookup, working folder, environment, log file,
// CPU time, the address-space limit and CPU pinning. Every child is a POSIX tool with a known outcome.
#include "dynqual/process/Process.h"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sched.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace dynqual::process;

namespace {

ProcessResult sh(const std::string& script, double timeoutSeconds = 30) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.timeoutSeconds = timeoutSeconds;
  return runProcess(spec);
}

struct TempFolder {
  fs::path path = fs::temp_directory_path() / ("dq-process-" + std::to_string(getpid()));
  TempFolder() { fs::create_directories(path); }
  ~TempFolder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

} // namespace

TEST(Process, CapturesBothStreamsAndTheExitStatus) {
  ProcessResult r = sh("echo out; echo err >&2; read x; echo \"stdin:$x.\"; exit 3");
  ASSERT_TRUE(r.started) << r.error;
  EXPECT_EQ(r.out, "out\nstdin:.\n"); // stdin is /dev/null: read gets nothing
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(r.exitCode, 3);
  EXPECT_EQ(r.signal, 0);
  EXPECT_FALSE(r.timedOut);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.describeAbnormalEnd(30), "");
  EXPECT_EQ(r.describe(30), "exited with status 3");
  EXPECT_TRUE(sh("exit 0").ok());
}

TEST(Process, LargeOutputOnBothStreamsDoesNotBlock) {
  // 1 MB on each stream, more than a pipe holds: both must be drained while the child runs.
  ProcessResult r = sh("head -c 1000000 /dev/zero; head -c 1000000 /dev/zero >&2");
  ASSERT_TRUE(r.ok()) << r.describe(30);
  EXPECT_EQ(r.out.size(), 1000000u);
  EXPECT_EQ(r.err.size(), 1000000u);
}

TEST(Process, SignalIsReported) {
  ProcessResult r = sh("kill -SEGV $$");
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(r.exitCode, -1);
  EXPECT_EQ(r.describeAbnormalEnd(30), std::string("killed by signal 11 (") + strsignal(SIGSEGV) + ")");
}

TEST(Process, TimeoutKillsTheWholeGroup) {
  TempFolder dir;
  fs::path marker = dir.path / "grandchild-survived";
  // The grandchild would write the marker after 2 s unless the group was killed at 0.3 s.
  ProcessResult r = sh("(sleep 2; touch '" + marker.string() + "') & sleep 30", 0.3);
  EXPECT_TRUE(r.timedOut);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_EQ(r.exitCode, -1);
  EXPECT_LT(r.wallMs, 10000);
  EXPECT_EQ(r.describeAbnormalEnd(0.3), "timed out after 0 s");
  sleep(3);
  EXPECT_FALSE(fs::exists(marker));
}

TEST(Process, TimeoutHoldsAfterTheChildClosesItsOutput) {
  ProcessResult r = sh("exec >&- 2>&-; sleep 30", 0.3);
  EXPECT_TRUE(r.timedOut);
  EXPECT_LT(r.wallMs, 10000);
}

TEST(Process, StartFailuresNameTheCause) {
  ProcessSpec spec;
  spec.argv = {"/nonexistent/dq-tool"};
  ProcessResult r = runProcess(spec);
  EXPECT_FALSE(r.started);
  EXPECT_EQ(r.error, "/nonexistent/dq-tool: No such file or directory");
  EXPECT_EQ(r.describeAbnormalEnd(1), "could not start: /nonexistent/dq-tool: No such file or directory");

  spec.argv = {"sh", "-c", "exit 0"}; // a bare name is a path unless searchPath is set
  EXPECT_FALSE(runProcess(spec).started);
  spec.searchPath = true;
  EXPECT_TRUE(runProcess(spec).ok());

  spec.cwd = "/nonexistent/dq-folder";
  r = runProcess(spec);
  EXPECT_FALSE(r.started);
  EXPECT_EQ(r.error, "cannot change to /nonexistent/dq-folder: No such file or directory");

  EXPECT_FALSE(runProcess(ProcessSpec{}).started);
}

TEST(Process, WorkingFolderEnvironmentAndLog) {
  TempFolder dir;
  setenv("DQ_PROCESS_TEST_REMOVED", "present", 1);
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c",
               "pwd; echo \"set=$DQ_PROCESS_TEST_SET removed=${DQ_PROCESS_TEST_REMOVED-unset}\"; echo e >&2"};
  spec.cwd = dir.path;
  spec.env = {{"DQ_PROCESS_TEST_SET", std::string("v1")}, {"DQ_PROCESS_TEST_REMOVED", std::nullopt}};
  ProcessResult r = runProcess(spec);
  ASSERT_TRUE(r.ok()) << r.describe(0);
  EXPECT_EQ(r.out, fs::canonical(dir.path).string() + "\nset=v1 removed=unset\n");
  unsetenv("DQ_PROCESS_TEST_REMOVED");

  fs::path log = dir.path / "steps.log";
  std::ofstream(log) << "before\n";
  spec.appendTo = log;
  r = runProcess(spec);
  ASSERT_TRUE(r.ok()) << r.describe(0);
  EXPECT_TRUE(r.out.empty());
  std::stringstream text;
  text << std::ifstream(log).rdbuf();
  EXPECT_EQ(text.str(), "before\n" + fs::canonical(dir.path).string() + "\nset=v1 removed=unset\ne\n");
}

TEST(Process, CpuTimeOfTheChild) {
  ProcessResult r = sh("i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done");
  ASSERT_TRUE(r.ok()) << r.describe(30);
  EXPECT_GT(r.cpuMs, 1.0); // 300000 shell iterations take far more than 1 ms of CPU
}

TEST(Process, AddressSpaceLimitFailsTheAllocationInTheChild) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "under AddressSanitizer the limit is ASan's hard_rss_limit_mb";
#endif
  if (!fs::exists("/usr/bin/python3"))
    GTEST_SKIP() << "/usr/bin/python3 not found";
  ProcessSpec spec;
  spec.argv = {"/usr/bin/python3", "-c", "b = bytearray(2 << 30)"};
  spec.timeoutSeconds = 60;
  spec.memoryLimitBytes = uint64_t{512} << 20;
  ProcessResult r = runProcess(spec);
  ASSERT_TRUE(r.started) << r.error;
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("MemoryError"), std::string::npos) << r.err;
  spec.memoryLimitBytes = 0;
  spec.argv = {"/usr/bin/python3", "-c", "b = bytearray(16 << 20)"}; // well under: fine without a limit
  EXPECT_TRUE(runProcess(spec).ok());
}

TEST(Process, PinsTheChildToOneCpu) {
  int cpu = lastAllowedCpu();
  ASSERT_GE(cpu, 0);
  ProcessSpec spec;
  // /proc/self/status of the child (grep itself) lists the CPUs it may run on.
  spec.argv = {"/bin/grep", "^Cpus_allowed_list:", "/proc/self/status"};
  spec.cpu = cpu;
  ProcessResult r = runProcess(spec);
  ASSERT_TRUE(r.ok()) << r.describe(0) << r.err;
  EXPECT_EQ(r.out, "Cpus_allowed_list:\t" + std::to_string(cpu) + "\n");
  // A CPU this process may not use is a start failure that names it.
  spec.cpu = CPU_SETSIZE - 1;
  if (cpu != spec.cpu) {
    r = runProcess(spec);
    EXPECT_FALSE(r.started);
    EXPECT_NE(r.error.find("cannot bind to CPU " + std::to_string(CPU_SETSIZE - 1)), std::string::npos) << r.error;
  }
}

TEST(Process, RunChildIsTheShortForm) {
  ProcessResult r = runChild({"/bin/sh", "-c", "echo $0; sleep 5", "x"}, 0.5);
  EXPECT_TRUE(r.timedOut);
  EXPECT_EQ(r.out, "x\n");
  EXPECT_NE(r.describeAbnormalEnd(0.5).find("timed out"), std::string::npos);
}
