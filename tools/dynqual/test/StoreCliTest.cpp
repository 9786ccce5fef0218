// The store commands as a user runs them: the binary, its exit code, stdout and stderr.
#include "StoreTestUtil.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

struct Result {
  int rc = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Runs `args` (a shell command line after the dynqual binary) in `dir`.
Result runDynqual(const fs::path& dir, const std::string& args, const std::string& env = "") {
  std::string cmd = "cd '" + dir.string() + "' && " + env + " '" DYNQUAL_BIN "' " + args + " >out.txt 2>err.txt";
  int st = std::system(cmd.c_str());
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp(dir / "out.txt"), slurp(dir / "err.txt")};
}

/// The command between the first pair of backticks of an error line.
std::string hintOf(const std::string& err) {
  size_t a = err.find('`'), b = err.find('`', a + 1);
  return a == std::string::npos || b == std::string::npos ? "" : err.substr(a + 1, b - a - 1);
}

} // namespace

// Every command an error hint prints is run exactly as printed (with "dynqual" as the binary) and
// must succeed.
TEST(StoreCli, HintsRunAsPrinted) {
  TempDir dir;
  for (const std::string name : {"lk.db", "my runs.db"}) {
    std::string quoted = "'" + name + "'";
    Result missing = runDynqual(dir.path, "report --db " + quoted);
    EXPECT_EQ(missing.rc, 2) << missing.err;
    std::string init = hintOf(missing.err);
    ASSERT_EQ(init.rfind("dynqual db init --db ", 0), 0u) << missing.err;
    Result r = runDynqual(dir.path, init.substr(8));
    EXPECT_EQ(r.rc, 0) << init << ": " << r.err;
    EXPECT_TRUE(fs::exists(dir.path / name)) << init;

    Result noRun = runDynqual(dir.path, "report --db " + quoted + " 999");
    EXPECT_EQ(noRun.rc, 2) << noRun.err;
    std::string info = hintOf(noRun.err);
    ASSERT_EQ(info.rfind("dynqual db info --db ", 0), 0u) << noRun.err;
    r = runDynqual(dir.path, info.substr(8));
    EXPECT_EQ(r.rc, 0) << info << ": " << r.err;
    EXPECT_NE(r.out.find("schema version"), std::string::npos) << r.out;
  }
}

// --db help shows the default that takes effect, and db info/query explain --format.
TEST(StoreCli, HelpShowsEffectiveDefault) {
  TempDir dir;
  for (const char* cmd : {"report --help", "run --help", "db --help"}) {
    Result r = runDynqual(dir.path, cmd, "DYNQUAL_DB=/tmp/from-env.db");
    EXPECT_NE(r.out.find("/tmp/from-env.db"), std::string::npos) << cmd << "\n" << r.out;
    r = runDynqual(dir.path, cmd, "env -u DYNQUAL_DB");
    EXPECT_NE(r.out.find("dynqual.db"), std::string::npos) << cmd << "\n" << r.out;
  }
  EXPECT_NE(runDynqual(dir.path, "db info --help").out.find("one line per run"), std::string::npos);
  EXPECT_NE(runDynqual(dir.path, "db query --help").out.find("tab-separated"), std::string::npos);
}

// The description names the flag that picks the stage (before: "stop after a stage", no flag).
TEST(CliHelp, CompileNamesEmitForTheStageToStopAfter) {
  TempDir dir;
  Result r = runDynqual(dir.path, "compile --help");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("stop after the stage --emit names"), std::string::npos) << r.out;
}

// A model that fails to load (truncated model.onnx) must appear in the report as a FAIL row with
// its error, not as "No accuracy results".
TEST(StoreCli, ReportListsFailedModel) {
  TempDir dir;
  fs::create_directories(dir.path / "suite" / "truncated");
  {
    std::ofstream(dir.path / "suite" / "truncated" / "model.onnx") << "\x08\x07\x12";
  }
  Result run = runDynqual(dir.path, "run suite --db r.db --exec '" DYNQUAL_EXEC_PATH "'");
  EXPECT_EQ(run.rc, 1) << run.out << run.err;
  Result md = runDynqual(dir.path, "report latest --db r.db");
  ASSERT_EQ(md.rc, 1) << md.err; // the run's verdict: a case failed
  EXPECT_EQ(md.out.find("No accuracy results"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("| truncated | - | - | - | - | - | **FAIL**: "), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("**Result: FAIL, 1 failing case"), std::string::npos) << md.out;
}

// The report's accuracy table carries the smallest per-output cosine beside L2; a model whose
// outputs equal the reference's has cosine 1 (sum ab / (|a| |b|) with a = b).
TEST(StoreCli, ReportPrintsTheCosineBesideL2) {
  const std::string add = "/usr/share/libonnx-testdata/data/node/test_add"; // with a stored data set
  if (!fs::exists(fs::path(add) / "test_data_set_0"))
    GTEST_SKIP() << add << " missing (Debian's libonnx-testdata)";
  TempDir dir;
  Result run = runDynqual(dir.path, "run '" + add + "' --db c.db --bindings 0 --exec '" DYNQUAL_EXEC_PATH "'");
  ASSERT_EQ(run.rc, 0) << run.out << run.err;
  Result md = runDynqual(dir.path, "report latest --db c.db");
  ASSERT_EQ(md.rc, 0) << md.err;
  EXPECT_NE(md.out.find("| Model | Combined L2 | Relative L2 | Cosine |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find(" | 1.000000 | "), std::string::npos) << md.out;
}

// A lock held past the busy timeout after the run began must not swallow the results: the table
// prints, the lock is reported on stderr, exit 2, and the run stays unfinished. The runtime is
// wrapped by a script that waits for the test to take the lock, so the order is fixed.
TEST(StoreCli, LockAfterRunStartKeepsResults) {
  TempDir dir;
  fs::path sync = dir.path / "sync";
  fs::create_directories(sync);
  fs::path wrapper = dir.path / "exec.sh";
  {
    std::ofstream(wrapper) << "#!/bin/sh\ntouch '" << (sync / "started").string() << "'\n"
                           << "while [ ! -f '" << (sync / "go").string() << "' ]; do sleep 0.05; done\n"
                           << "exec '" DYNQUAL_EXEC_PATH "' \"$@\"\n";
  }
  ASSERT_EQ(chmod(wrapper.c_str(), 0755), 0);
  ASSERT_EQ(runDynqual(dir.path, "db init --db lk.db").rc, 0);

  Result run;
  std::thread runner([&] {
    run = runDynqual(dir.path,
                     "run '" DYNQUAL_CORPUS_DIR "/expand_where_shape' --db lk.db --exec '" + wrapper.string() + "'");
  });
  for (int i = 0; i < 1200 && !fs::exists(sync / "started"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(fs::exists(sync / "started"));
  {
    SQLite::Database holder(dir.path / "lk.db", SQLite::OPEN_READWRITE);
    holder.exec("BEGIN EXCLUSIVE");
    std::ofstream(sync / "go") << "";
    runner.join(); // the run waits its 10 s busy timeout for every write, then gives up
    holder.exec("ROLLBACK");
  }
  EXPECT_EQ(run.rc, 2) << run.err;
  EXPECT_NE(run.out.find("expand_where_shape"), std::string::npos) << "stdout: " << run.out;
  EXPECT_NE(run.err.find("database is locked"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("stays unfinished"), std::string::npos) << run.err;
  SQLite::Database check(dir.path / "lk.db", SQLite::OPEN_READONLY);
  EXPECT_EQ(check.execAndGet("SELECT status FROM runs").getString(), "unfinished");
}
