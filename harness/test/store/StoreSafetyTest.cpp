// The store under failure: a killed writer, a held lock, a full disk, a read-only file, a
// missing folder. Each must give one clear line and lose nothing already committed.
#include "StoreTestUtil.h"

#include "dynqual/store/DbTool.h"
#include "dynqual/store/Store.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <csignal>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace dynqual::store;
namespace fs = std::filesystem;

namespace {

std::string integrity(const fs::path& db) {
  SQLite::Database raw(db, SQLite::OPEN_READONLY);
  return raw.execAndGet("PRAGMA integrity_check").getString();
}

/// "wal" when the file header's read/write format versions (bytes 18 and 19) are 2, read from
/// the file so no connection creates -wal or -shm files.
std::string journalMode(const fs::path& db) {
  std::ifstream in(db, std::ios::binary);
  char h[20] = {};
  in.read(h, sizeof h);
  return h[18] == 2 && h[19] == 2 ? "wal" : "rollback";
}

int64_t count(Store& s, const std::string& sql) {
  return s.db().execAndGet(sql).getInt64();
}

std::string errorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const StoreError& e) {
    return e.what();
  }
  return "<no error>";
}

} // namespace

TEST(StoreSafety, KilledRunIsUnfinishedAndEarlierRunsIntact) {
  TempDir dir;
  fs::path db = dir.path / "kill.db";
  RunRecord earlier = sampleRun("qualify", "earlier", "2026-01-01T00:00:00Z", {1.0, 2.0, 3.0});
  {
    Store s(db);
    s.importRuns({earlier});
  }
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The writer: one transaction per model, as `dynqual run` does, forever until killed.
    close(ready[0]);
    try {
      Store s(db);
      RunRecord header = sampleRun("qualify", "killed", "2026-01-02T00:00:00Z", {});
      int64_t id = s.beginRun(header);
      std::vector<double> many(2000, 1.25);
      for (int i = 0;; ++i) {
        CaseRecord c = header.cases[1];
        c.dataset.name = "set_" + std::to_string(i);
        c.samples[0].values = many;
        s.recordCases(id, {c});
        if (i == 3 && write(ready[1], "x", 1) != 1)
          _exit(3);
      }
    } catch (...) {
      _exit(2);
    }
  }
  close(ready[1]);
  char b;
  ASSERT_EQ(read(ready[0], &b, 1), 1) << "the writer died before committing 4 cases";
  usleep(20000); // let it get into the middle of further transactions
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "writer exited on its own: " << status;

  EXPECT_EQ(integrity(db), "ok");
  Store s(db);
  EXPECT_EQ(integrity(db), "ok");
  RunRecord got = s.loadRun(s.resolveRun("earlier"));
  EXPECT_EQ(got.status, "finished");
  ASSERT_EQ(got.cases.size(), earlier.cases.size());
  EXPECT_EQ(got.cases[1].samples[0].values, earlier.cases[1].samples[0].values);
  RunRecord killed = s.loadRun(s.resolveRun("killed"));
  EXPECT_EQ(killed.status, "unfinished");
  EXPECT_EQ(killed.endedAt, "");
  EXPECT_GE(killed.cases.size(), 4u);
  // Every committed case is whole: 2000 samples each, never a partial one.
  for (const auto& c : killed.cases)
    EXPECT_EQ(c.samples.at(0).values.size(), 2000u) << c.dataset.name;
  EXPECT_EQ(s.resolveRun("latest"), got.id); // an unfinished run is never "latest"
}

TEST(StoreSafety, LockedDatabaseGivesClearError) {
  TempDir dir;
  fs::path db = dir.path / "locked.db";
  {
    Store init(db);
  }
  SQLite::Database other(db, SQLite::OPEN_READWRITE);
  other.exec("BEGIN IMMEDIATE");
  OpenOptions o;
  o.busyTimeoutMs = 200;
  Store s(db, o);
  std::string err = errorOf([&] { s.beginRun(sampleRun("run", "k", "2026-01-01T00:00:00Z", {})); });
  EXPECT_NE(err.find(db.string() + ": recording the start of run k"), std::string::npos) << err;
  EXPECT_NE(err.find("locked by another process (waited 200 ms)"), std::string::npos) << err;
  other.exec("ROLLBACK");
  EXPECT_GT(s.beginRun(sampleRun("run", "k", "2026-01-01T00:00:00Z", {})), 0);
}

TEST(StoreSafety, FullDiskGivesClearErrorAndLosesNothing) {
  TempDir dir;
  fs::path db = dir.path / "full.db";
  Store s(db);
  RunRecord first = sampleRun("qualify", "first", "2026-01-01T00:00:00Z", {1.0, 2.0});
  s.importRuns({first});
  int64_t id = s.beginRun(sampleRun("qualify", "second", "2026-01-02T00:00:00Z", {}));
  int64_t casesBefore = count(s, "SELECT count(*) FROM cases");
  // SQLite's page limit reports SQLITE_FULL exactly as a full disk does.
  int64_t pages = count(s, "PRAGMA page_count");
  s.db().exec("PRAGMA max_page_count = " + std::to_string(pages + 2));
  CaseRecord big = first.cases[1];
  big.samples[0].values.assign(50000, 3.5);
  std::string err = errorOf([&] { s.recordCases(id, {big}); });
  EXPECT_NE(err.find(db.string() + ": recording results of run"), std::string::npos) << err;
  EXPECT_NE(err.find("the disk is full"), std::string::npos) << err;
  EXPECT_NE(err.find("earlier results are intact"), std::string::npos) << err;
  s.db().exec("PRAGMA max_page_count = 1073741823");
  EXPECT_EQ(count(s, "SELECT count(*) FROM cases"), casesBefore);
  EXPECT_EQ(s.loadRun(s.resolveRun("first")).cases[1].samples[0].values, (std::vector<double>{1.0, 2.0}));
  EXPECT_EQ(integrity(db), "ok");
  s.recordCases(id, {first.cases[1]}); // the store still works once space is back
  s.finishRun(id);
  EXPECT_EQ(s.loadRun(id).status, "finished");
}

TEST(StoreSafety, ReadOnlyDatabaseGivesClearError) {
  TempDir dir;
  fs::path db = dir.path / "ro.db";
  {
    Store s(db);
    s.importRuns({sampleRun("qualify", "kept", "2026-01-01T00:00:00Z", {1.0})});
  }
  OpenOptions ro;
  ro.mode = OpenOptions::Mode::ReadOnly;
  Store r(db, ro);
  std::string err = errorOf([&] { r.beginRun(sampleRun("run", "new", "2026-01-02T00:00:00Z", {})); });
  EXPECT_NE(err.find("read-only"), std::string::npos) << err;
  EXPECT_EQ(r.listRuns().size(), 1u);
  if (geteuid() != 0) {
    // A file without write permission (root ignores permissions, so only checked as a user).
    ASSERT_EQ(chmod(db.c_str(), 0444), 0);
    std::string openErr = errorOf([&] { Store w(db); });
    EXPECT_NE(openErr.find("read-only"), std::string::npos) << openErr;
  }
}

TEST(StoreSafety, MissingFolderAndNotADatabase) {
  TempDir dir;
  std::string err = errorOf([&] { Store s(dir.path / "no" / "such" / "x.db"); });
  EXPECT_NE(err.find("check that its folder exists"), std::string::npos) << err;
  fs::path junk = dir.path / "junk.db";
  {
    std::ofstream(junk) << std::string(4096, 'z');
  }
  err = errorOf([&] { Store s(junk); });
  EXPECT_NE(err.find("not a dynqual database"), std::string::npos) << err;
  OpenOptions ro;
  ro.mode = OpenOptions::Mode::ReadOnly;
  err = errorOf([&] { Store s(dir.path / "absent.db", ro); });
  EXPECT_NE(err.find("no such database; create it with `dynqual db init"), std::string::npos) << err;
}

// Read-only commands must work on a database whose folder this process cannot write: a WAL
// database cannot get its -shm file there. Root writes anywhere, so as root the reader runs in a
// child that drops to uid 65534 (nobody); the child first proves it cannot create a file there.
TEST(StoreSafety, ReadOnlyFolderCanBeRead) {
  TempDir dir;
  fs::path folder = dir.path / "rodir";
  fs::create_directory(folder);
  fs::path db = folder / "x.db";
  {
    Store s(db);
    s.importRuns({sampleRun("qualify", "kept", "2026-01-01T00:00:00Z", {1.0})});
  }
  ASSERT_EQ(journalMode(db), "wal");
  ASSERT_FALSE(fs::exists(db.string() + "-shm")); // removed by the last writer's close
  ASSERT_EQ(chmod(dir.path.c_str(), 0755), 0);
  ASSERT_EQ(chmod(db.c_str(), 0644), 0);
  ASSERT_EQ(chmod(folder.c_str(), 0555), 0);
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(report[0]);
    auto fail = [&](const std::string& why) {
      (void)!write(report[1], why.data(), why.size());
      _exit(1);
    };
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
      fail("cannot drop to uid 65534");
    if (int fd = open((folder / "probe").c_str(), O_CREAT | O_WRONLY, 0644); fd >= 0)
      fail("the folder is writable; the test proves nothing");
    try {
      std::ostringstream info, query, exp;
      dbInfo(db, "text", info);
      dbQuery(db, "SELECT key FROM runs", "text", query);
      dbExport(db, {}, exp);
      if (info.str().find("kept") == std::string::npos)
        fail("info: " + info.str());
      if (query.str() != "key\nkept\n")
        fail("query: " + query.str());
      if (exp.str().find("\"kept\"") == std::string::npos)
        fail("export: " + exp.str());
    } catch (const std::exception& e) {
      fail(e.what());
    }
    _exit(0);
  }
  close(report[1]);
  std::string why;
  char buf[512];
  for (ssize_t n; (n = read(report[0], buf, sizeof buf)) > 0;)
    why.append(buf, n);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  chmod(folder.c_str(), 0755);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << why;
  EXPECT_FALSE(fs::exists(db.string() + "-shm")); // the reader left nothing behind
}
