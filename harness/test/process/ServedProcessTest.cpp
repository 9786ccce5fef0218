// process::ServedProcess: a line answered per line written, a child that dies or hangs mid-request
// is reported as such, the caller survives writing to a dead child, limits (memory, CPU) apply,
// and a child that outlives its grace after stdin closes is killed. Every child is /bin/sh with a
// known outcome.
#include "dynqual/process/ServedProcess.h"

#include <gtest/gtest.h>

#include <csignal>

using dynqual::process::LineRead;
using dynqual::process::ProcessResult;
using dynqual::process::ProcessSpec;
using dynqual::process::ServedProcess;
using dynqual::process::ServedReply;

TEST(ServedProcess, AnswersOneLinePerRequestAndExitsWhenStdinCloses) {
  ServedProcess c;
  std::string error;
  // Echoes each line with a prefix, so the answer is visibly the child's.
  ASSERT_TRUE(c.start({"/bin/sh", "-c", "while read x; do echo \"got $x\"; done"}, 0, error)) << error;
  for (const char* line : {"a", "b c"}) {
    ServedReply r = c.request(line, 10);
    ASSERT_TRUE(r.answered);
    EXPECT_EQ(r.line, std::string("got ") + line);
  }
  ProcessResult end = c.finish(1);
  EXPECT_TRUE(end.started);
  EXPECT_EQ(end.exitCode, 0);
  EXPECT_EQ(end.signal, 0);
  EXPECT_FALSE(c.killedAfterGrace());
  EXPECT_FALSE(c.running());
}

TEST(ServedProcess, AChildKilledMidRequestIsNotAnAnswer) {
  ServedProcess c;
  std::string error;
  ASSERT_TRUE(c.start({"/bin/sh", "-c", "read x; echo dying >&2; kill -SEGV $$"}, 0, error)) << error;
  ServedReply r = c.request("go", 10);
  EXPECT_FALSE(r.answered);
  EXPECT_FALSE(r.timedOut);
  ProcessResult end = c.finish(1);
  EXPECT_EQ(end.signal, SIGSEGV);
  EXPECT_NE(end.err.find("dying"), std::string::npos) << end.err;
  EXPECT_EQ(c.lastStderrLine(), "dying");
  EXPECT_NE(end.describeAbnormalEnd(10).find("killed by signal 11"), std::string::npos);
  // Writing to the dead child's pipe must not raise SIGPIPE in this process.
  ServedReply again = c.request("more", 1);
  EXPECT_FALSE(again.answered);
}

TEST(ServedProcess, AHangingChildTimesOutAndIsKilled) {
  ServedProcess c;
  std::string error;
  ASSERT_TRUE(c.start({"/bin/sh", "-c", "read x; sleep 30"}, 0, error)) << error;
  ServedReply r = c.request("go", 0.5);
  EXPECT_FALSE(r.answered);
  EXPECT_TRUE(r.timedOut);
  EXPECT_LT(r.wallMs, 10000);
  ProcessResult end = c.finish(0, true);
  EXPECT_TRUE(end.timedOut);
  EXPECT_NE(end.describeAbnormalEnd(0.5).find("timed out"), std::string::npos);
}

TEST(ServedProcess, AChildThatIgnoresItsClosedStdinIsKilledAfterTheGrace) {
  ServedProcess c;
  std::string error;
  ASSERT_TRUE(c.start({"/bin/sh", "-c", "read x; echo ok; exec sleep 30"}, 0, error)) << error;
  std::string line;
  ASSERT_TRUE(c.writeLine("go"));
  ASSERT_EQ(c.readLine(line, 10), LineRead::Line);
  EXPECT_EQ(line, "ok");
  ProcessResult end = c.finish(0.2);
  EXPECT_TRUE(c.killedAfterGrace());
  EXPECT_EQ(end.signal, SIGKILL);
  EXPECT_FALSE(end.timedOut);
  EXPECT_EQ(end.error, "killed after closing its output");
}

TEST(ServedProcess, AProgramThatCannotStartEndsEarlyAndSaysWhy) {
  ServedProcess c;
  std::string error;
  ASSERT_TRUE(c.start({"/no/such/program"}, 0, error)) << error;
  std::string line;
  EXPECT_EQ(c.readLine(line, 10), LineRead::Ended);
  ProcessResult end = c.finish(1);
  EXPECT_EQ(end.exitCode, 127);
  EXPECT_EQ(c.lastStderrLine(), "exec /no/such/program: No such file or directory");
  EXPECT_FALSE(c.start(std::vector<std::string>{}, 0, error));
  EXPECT_EQ(error, "empty command");
}

TEST(ServedProcess, MemoryLimitApplies) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "under ASan the limit is hard_rss_limit_mb, not RLIMIT_AS";
#endif
  ServedProcess c;
  std::string error;
  // The shell reports its own address-space limit in KiB (ulimit -v).
  ASSERT_TRUE(c.start({"/bin/sh", "-c", "read x; ulimit -v"}, uint64_t{512} << 20, error)) << error;
  ServedReply r = c.request("go", 10);
  ASSERT_TRUE(r.answered);
  EXPECT_EQ(r.line, std::to_string(512 * 1024));
  c.finish(1);
}

TEST(ServedProcess, PinsTheChildToOneCpu) {
  int cpu = dynqual::process::lastAllowedCpu();
  ASSERT_GE(cpu, 0);
  ServedProcess c;
  std::string error;
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "read x; grep ^Cpus_allowed_list: /proc/self/status"};
  spec.cpu = cpu;
  ASSERT_TRUE(c.start(spec, error)) << error;
  ServedReply r = c.request("go", 10);
  ASSERT_TRUE(r.answered);
  EXPECT_EQ(r.line, "Cpus_allowed_list:\t" + std::to_string(cpu));
  c.finish(1);
}
