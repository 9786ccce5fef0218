// run::ServedChild: a line answered per line written, a child that dies or hangs mid-request is
// reported as such, and the caller survives writing to a dead child.
#include "dynqual/run/ServedChild.h"

#include <gtest/gtest.h>

#include <csignal>

using dynqual::run::ChildResult;
using dynqual::run::ServedChild;
using dynqual::run::ServedReply;

TEST(ServedChild, AnswersOneLinePerRequestAndExitsWhenStdinCloses) {
  ServedChild c;
  std::string error;
  // Echoes each line with a prefix, so the answer is visibly the child's.
  ASSERT_TRUE(c.start({"/bin/sh", "-c", "while read x; do echo \"got $x\"; done"}, 0, error)) << error;
  for (const char* line : {"a", "b c"}) {
    ServedReply r = c.request(line, 10);
    ASSERT_TRUE(r.answered);
    EXPECT_EQ(r.line, std::string("got ") + line);
  }
  ChildResult end = c.finish(false);
  EXPECT_TRUE(end.started);
  EXPECT_EQ(end.exitCode, 0);
  EXPECT_EQ(end.signal, 0);
  EXPECT_FALSE(c.running());
}

TEST(ServedChild, AChildKilledMidRequestIsNotAnAnswer) {
  ServedChild c;
  std::string error;
  ASSERT_TRUE(c.start({"/bin/sh", "-c", "read x; echo dying >&2; kill -SEGV $$"}, 0, error)) << error;
  ServedReply r = c.request("go", 10);
  EXPECT_FALSE(r.answered);
  EXPECT_FALSE(r.timedOut);
  ChildResult end = c.finish(false);
  EXPECT_EQ(end.signal, SIGSEGV);
  EXPECT_NE(end.err.find("dying"), std::string::npos) << end.err;
  EXPECT_NE(end.describeAbnormalEnd(10).find("killed by signal 11"), std::string::npos);
  // Writing to the dead child's pipe must not raise SIGPIPE in this process.
  ServedReply again = c.request("more", 1);
  EXPECT_FALSE(again.answered);
}

TEST(ServedChild, AHangingChildTimesOutAndIsKilled) {
  ServedChild c;
  std::string error;
  ASSERT_TRUE(c.start({"/bin/sh", "-c", "read x; sleep 30"}, 0, error)) << error;
  ServedReply r = c.request("go", 0.5);
  EXPECT_FALSE(r.answered);
  EXPECT_TRUE(r.timedOut);
  EXPECT_LT(r.wallMs, 10000);
  ChildResult end = c.finish(true);
  EXPECT_TRUE(end.timedOut);
  EXPECT_NE(end.describeAbnormalEnd(0.5).find("timed out"), std::string::npos);
}

TEST(ServedChild, MemoryLimitApplies) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "under ASan the limit is hard_rss_limit_mb, not RLIMIT_AS";
#endif
  ServedChild c;
  std::string error;
  // The shell reports its own address-space limit in KiB (ulimit -v).
  ASSERT_TRUE(c.start({"/bin/sh", "-c", "read x; ulimit -v"}, uint64_t{512} << 20, error)) << error;
  ServedReply r = c.request("go", 10);
  ASSERT_TRUE(r.answered);
  EXPECT_EQ(r.line, std::to_string(512 * 1024));
  c.finish(false);
}
