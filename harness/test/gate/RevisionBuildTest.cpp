// Revision builds on a throwaway two-commit repository whose "build" is a small shell script that
// writes fake dynqual binaries and counts how often it really ran.
#include "dynqual/gate/RevisionBuild.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;
using namespace dynqual::gate;

namespace {

// build.sh MODE SRC BUILD COUNTER FAILFLAG [SLEEP]: MODE configure|build. The build fails when
// FAILFLAG exists, and otherwise writes dynqual and dynqual-exec that print content.txt. Like
// ccache, it appends to $CCACHE_STATSLOG when set: one hit (a.cpp) and one miss (b.cpp).
const char* kBuildScript = R"(#!/bin/sh
set -e
mode=$1; src=$2; build=$3; counter=$4; failflag=$5
echo "$mode in $src CCACHE_BASEDIR=$CCACHE_BASEDIR CCACHE_NOHASHDIR=$CCACHE_NOHASHDIR"
if [ "$mode" = configure ]; then exit 0; fi
echo build >> "$counter"
if [ -n "$CCACHE_STATSLOG" ]; then
  printf '# a.cpp\ndirect_cache_hit\nlocal_storage_hit\n# b.cpp\ncache_miss\ndirect_cache_miss\n' >> "$CCACHE_STATSLOG"
fi
if [ -n "$6" ]; then sleep "$6"; fi
if [ -e "$failflag" ]; then echo "deliberate failure" >&2; exit 3; fi
content=$(cat "$src/content.txt")
for b in dynqual dynqual-exec; do
  printf '#!/bin/sh\necho "%s %s"\n' "$b" "$content" > "$build/$b"
  chmod +x "$build/$b"
done
)";

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::trunc);
  out << text;
}

std::string capture(const std::string& cmd) {
  std::string out;
  FILE* f = popen(cmd.c_str(), "r");
  if (!f)
    return out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), f)) > 0)
    out.append(buf.data(), n);
  pclose(f);
  while (!out.empty() && out.back() == '\n')
    out.pop_back();
  return out;
}

class RevisionBuildTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "dynqual-gate-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    repo_ = root_ / "repo";
    fs::create_directories(repo_);
    sh("git init -q && git config user.name gate-test && git config user.email gate-test@example.com && "
       "git config commit.gpgsign false");
    write(repo_ / "build.sh", kBuildScript);
    write(repo_ / "content.txt", "one\n");
    sh("git add build.sh content.txt && git commit -q -m one");
    write(repo_ / "content.txt", "two\n");
    sh("git commit -q -m two content.txt");
  }
  void TearDown() override {
    std::error_code ec;
    sh("git worktree prune");
    fs::remove_all(root_, ec);
  }

  void sh(const std::string& cmd) {
    std::string full = "cd '" + repo_.string() + "' && " + cmd;
    ASSERT_EQ(std::system(full.c_str()), 0) << full;
  }

  BuildRequest request(const std::string& rev) {
    BuildRequest r;
    r.repo = repo_;
    r.rev = rev;
    r.cacheRoot = root_ / "cache";
    std::string counter = (root_ / "counter").string(), fail = (root_ / "fail").string();
    r.configure = {"/bin/sh", "{src}/build.sh", "configure", "{src}", "{build}", counter, fail};
    r.build = {"/bin/sh", "{src}/build.sh", "build", "{src}", "{build}", counter, fail};
    r.toolchain = toolchainFromDescription("test toolchain\n");
    return r;
  }

  int builds() {
    std::ifstream in(root_ / "counter");
    int n = 0;
    std::string line;
    while (std::getline(in, line))
      ++n;
    return n;
  }

  static std::string runBinary(const BuiltRevision& b, const std::string& name = "dynqual") {
    return capture("'" + (b.binDir / name).string() + "'");
  }

  fs::path root_, repo_;
};

TEST_F(RevisionBuildTest, ResolvesHeadAndParentAndNamesAMissingRevision) {
  std::string head = resolveRevision(repo_, "HEAD");
  std::string parent = resolveRevision(repo_, "HEAD~1");
  EXPECT_EQ(head, capture("git -C '" + repo_.string() + "' rev-parse HEAD"));
  EXPECT_EQ(head.size(), 40u);
  EXPECT_EQ(parent.size(), 40u);
  EXPECT_NE(head, parent);
  try {
    resolveRevision(repo_, "no-such-rev");
    FAIL() << "expected RevisionError";
  } catch (const RevisionError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("'no-such-rev' does not exist in " + repo_.string()), std::string::npos) << what;
    EXPECT_NE(what.find("(git: "), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  EXPECT_THROW(resolveRevision(repo_, "--all"), RevisionError);
  EXPECT_THROW(resolveRevision(root_ / "not-a-repo", "HEAD"), RevisionError);
  EXPECT_THROW(buildRevision(request("no-such-rev")), RevisionError);
}

TEST_F(RevisionBuildTest, SecondBuildOfARevisionReusesTheCache) {
  std::vector<std::string> lines;
  BuildRequest req = request("HEAD");
  req.progress = [&](const std::string& l) { lines.push_back(l); };
  BuiltRevision first = buildRevision(req);
  EXPECT_FALSE(first.fromCache);
  EXPECT_FALSE(first.worktree);
  EXPECT_EQ(builds(), 1);
  EXPECT_EQ(first.sha, resolveRevision(repo_, "HEAD"));
  EXPECT_EQ(first.cacheKey.substr(0, 41), first.sha + "-");
  EXPECT_EQ(first.cacheKey.size(), 41u + 12u);
  EXPECT_EQ(first.srcDir, root_ / "cache" / "src" / first.sha);
  // Inside the checkout, at the same place for every revision (ccache sees relative paths).
  EXPECT_EQ(first.buildDir, first.srcDir / ("build-gate-" + first.cacheKey.substr(41)));
  EXPECT_EQ(first.log, root_ / "cache" / "logs" / (first.cacheKey + ".log"));
  EXPECT_TRUE(fs::exists(first.buildDir / ".dynqual-build-ok"));
  EXPECT_EQ(runBinary(first), "dynqual two");
  EXPECT_EQ(runBinary(first, "dynqual-exec"), "dynqual-exec two");
  EXPECT_FALSE(lines.empty());
  // The build ran in the checkout with ccache told to hash paths relative to it.
  std::string log = slurp(first.log);
  EXPECT_NE(log.find("CCACHE_BASEDIR=" + first.srcDir.string() + " CCACHE_NOHASHDIR=1"), std::string::npos) << log;
  // The checkout is a registered worktree of the repository.
  EXPECT_NE(capture("git -C '" + repo_.string() + "' worktree list").find(first.srcDir.string()), std::string::npos);

  BuiltRevision second = buildRevision(request("HEAD"));
  EXPECT_TRUE(second.fromCache);
  EXPECT_EQ(second.buildSeconds, 0.0);
  EXPECT_EQ(builds(), 1);
  EXPECT_EQ(second.cacheKey, first.cacheKey);
  EXPECT_EQ(second.binDir, first.binDir);
  EXPECT_EQ(runBinary(second), "dynqual two");
  // The counters of the build step come from its own stats log (the script's one hit, one miss);
  // a reused build ran nothing.
  EXPECT_TRUE(first.ccache.used);
  EXPECT_EQ(first.ccache.hits, 1);
  EXPECT_EQ(first.ccache.misses, 1);
  EXPECT_EQ(first.ccache.missed, std::vector<std::string>{"b.cpp"});
  EXPECT_NE(log.find("ccache 1/2 compiles hit (50.0 %)"), std::string::npos) << log;
  EXPECT_FALSE(second.ccache.used);
}

TEST_F(RevisionBuildTest, TwoCommitsGetDifferentKeysAndBinaries) {
  BuiltRevision base = buildRevision(request("HEAD~1"));
  BuiltRevision head = buildRevision(request("HEAD"));
  EXPECT_EQ(builds(), 2);
  EXPECT_NE(base.cacheKey, head.cacheKey);
  EXPECT_NE(base.binDir, head.binDir);
  // Same toolchain and commands: the keys differ only in the sha.
  EXPECT_EQ(base.cacheKey.substr(41), head.cacheKey.substr(41));
  EXPECT_EQ(runBinary(base), "dynqual one");
  EXPECT_EQ(runBinary(head), "dynqual two");
}

TEST_F(RevisionBuildTest, FailedBuildNamesRevisionAndLogAndLeavesNoStamp) {
  write(root_ / "fail", "");
  std::string sha = resolveRevision(repo_, "HEAD~1");
  try {
    buildRevision(request("HEAD~1"));
    FAIL() << "expected BuildFailed";
  } catch (const BuildFailed& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("build of HEAD~1 (" + sha.substr(0, 12) + ") failed"), std::string::npos) << what;
    EXPECT_NE(what.find("exited with status 3"), std::string::npos) << what;
    EXPECT_NE(what.find("log: " + e.log().string()), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_NE(e.logTail().find("deliberate failure"), std::string::npos) << e.logTail();
    EXPECT_TRUE(fs::exists(e.log()));
  }
  EXPECT_EQ(builds(), 1);
  fs::path checkout = root_ / "cache" / "src" / sha;
  for (const auto& d : fs::directory_iterator(checkout))
    EXPECT_FALSE(fs::exists(d.path() / ".dynqual-build-ok")) << d.path();

  fs::remove(root_ / "fail");
  BuiltRevision retry = buildRevision(request("HEAD~1"));
  EXPECT_FALSE(retry.fromCache);
  EXPECT_EQ(builds(), 2);
  EXPECT_EQ(runBinary(retry), "dynqual one");
}

TEST_F(RevisionBuildTest, MissingBinaryAfterBuildIsAFailure) {
  BuildRequest req = request("HEAD");
  req.binaries = {"dynqual", "dynqual-not-built"};
  try {
    buildRevision(req);
    FAIL() << "expected BuildFailed";
  } catch (const BuildFailed& e) {
    EXPECT_NE(std::string(e.what()).find("dynqual-not-built"), std::string::npos) << e.what();
  }
}

TEST_F(RevisionBuildTest, WorktreeBuildsUncommittedChangesIncrementally) {
  write(repo_ / "content.txt", "uncommitted\n");
  BuiltRevision b = buildRevision(request(kWorktree));
  EXPECT_TRUE(b.worktree);
  EXPECT_TRUE(b.dirty);
  EXPECT_FALSE(b.fromCache);
  EXPECT_EQ(b.sha, resolveRevision(repo_, "HEAD"));
  EXPECT_EQ(b.srcDir, fs::canonical(repo_));
  EXPECT_EQ(b.cacheKey.rfind("worktree-", 0), 0u) << b.cacheKey;
  EXPECT_EQ(b.buildDir.parent_path(), b.srcDir);
  EXPECT_EQ(runBinary(b), "dynqual uncommitted");

  write(repo_ / "content.txt", "changed again\n");
  BuiltRevision again = buildRevision(request(kWorktree));
  EXPECT_FALSE(again.fromCache);
  EXPECT_EQ(again.cacheKey, b.cacheKey);
  EXPECT_EQ(runBinary(again), "dynqual changed again");
  EXPECT_EQ(builds(), 2);
  // Configure ran once; the second build is incremental in the same folder.
  std::string log = slurp(b.log);
  size_t configures = 0;
  for (size_t at = log.find("dynqual gate: configure"); at != std::string::npos;
       at = log.find("dynqual gate: configure", at + 1))
    ++configures;
  EXPECT_EQ(configures, 1u) << log;

  // From a subfolder too; a clean tree is not dirty.
  sh("git checkout -q -- content.txt");
  fs::create_directories(repo_ / "sub");
  BuildRequest fromSub = request(kWorktree);
  fromSub.repo = repo_ / "sub";
  BuiltRevision clean = buildRevision(fromSub);
  EXPECT_FALSE(clean.dirty);
  EXPECT_EQ(runBinary(clean), "dynqual two");
}

TEST_F(RevisionBuildTest, ToolchainOrCommandsChangeTheKey) {
  BuildRequest a = request("HEAD");
  BuildRequest b = request("HEAD");
  b.toolchain = toolchainFromDescription("another compiler\n");
  BuiltRevision ba = buildRevision(a), bb = buildRevision(b);
  EXPECT_NE(ba.cacheKey, bb.cacheKey);
  EXPECT_EQ(ba.cacheKey.substr(0, 40), bb.cacheKey.substr(0, 40));
  EXPECT_FALSE(bb.fromCache);
  EXPECT_EQ(builds(), 2);
  EXPECT_EQ(ba.srcDir, bb.srcDir); // one checkout per commit

  BuildRequest c = request("HEAD");
  c.build.push_back(""); // an extra (empty) argument: different build command
  BuiltRevision bc = buildRevision(c);
  EXPECT_NE(bc.cacheKey, ba.cacheKey);
  EXPECT_EQ(builds(), 3);
}

TEST_F(RevisionBuildTest, StaleOrModifiedCheckoutIsRecreated) {
  BuiltRevision first = buildRevision(request("HEAD"));
  // A deleted checkout (still registered with git) and build folder: pruned and checked out again.
  fs::remove_all(first.srcDir);
  fs::remove_all(first.buildDir);
  BuiltRevision second = buildRevision(request("HEAD"));
  EXPECT_FALSE(second.fromCache);
  EXPECT_EQ(runBinary(second), "dynqual two");
  // A modified checkout is replaced by a clean one before building.
  write(second.srcDir / "content.txt", "tampered\n");
  fs::remove(second.buildDir / ".dynqual-build-ok");
  BuiltRevision third = buildRevision(request("HEAD"));
  EXPECT_FALSE(third.fromCache);
  EXPECT_EQ(runBinary(third), "dynqual two");
  EXPECT_EQ(builds(), 3);
}

TEST_F(RevisionBuildTest, ConcurrentGatesBuildAKeyOnce) {
  BuildRequest slow = request("HEAD");
  slow.build.push_back("0.3"); // sleep inside the build
  BuiltRevision r1, r2;
  std::thread t1([&] { r1 = buildRevision(slow); });
  std::thread t2([&] { r2 = buildRevision(slow); });
  t1.join();
  t2.join();
  EXPECT_EQ(builds(), 1);
  EXPECT_NE(r1.fromCache, r2.fromCache);
  EXPECT_EQ(r1.binDir, r2.binDir);
}

TEST_F(RevisionBuildTest, UseBinDirChecksTheBinaries) {
  fs::path dir = root_ / "bin";
  fs::create_directories(dir);
  write(dir / "dynqual", "#!/bin/sh\n");
  fs::permissions(dir / "dynqual", fs::perms::owner_all);
  try {
    useBinDir(dir);
    FAIL() << "expected GateError";
  } catch (const GateError& e) {
    EXPECT_NE(std::string(e.what()).find("has no dynqual-exec"), std::string::npos) << e.what();
  }
  write(dir / "dynqual-exec", "#!/bin/sh\n");
  fs::permissions(dir / "dynqual-exec", fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_THROW(useBinDir(dir), GateError);
  fs::permissions(dir / "dynqual-exec", fs::perms::owner_all);
  BuiltRevision b = useBinDir(dir);
  EXPECT_EQ(b.binDir, dir);
  EXPECT_FALSE(b.fromCache);
  EXPECT_THROW(useBinDir(root_ / "missing"), GateError);
}

// The real ccache on two commits that differ only in content.txt: a source that includes a header
// generated into the build folder compiles once and hits in the other revision's build, because
// the build folder sits inside the checkout (with it outside, the -I path would differ).
TEST_F(RevisionBuildTest, RealCcacheHitsAcrossRevisionsWithAGeneratedHeader) {
  if (std::system("command -v ccache >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "ccache is not installed";
  write(repo_ / "a.c", "#include \"v.h\"\nint a(void) { return V; }\n");
  sh("git add a.c && git commit -q -m three");
  write(repo_ / "content.txt", "four\n");
  sh("git commit -q -m four content.txt");
  write(root_ / "cc.sh", R"(set -e
mode=$1; src=$2; build=$3
if [ "$mode" = configure ]; then exit 0; fi
mkdir -p "$build/gen"
echo '#define V 7' > "$build/gen/v.h"
cd "$build"
ccache cc -O2 -I"$build/gen" -c "$src/a.c" -o a.o
for b in dynqual dynqual-exec; do printf '#!/bin/sh\n' > $b; chmod +x $b; done
)");
  // A cache of its own, so that the counts do not depend on other builds on the machine.
  const char* saved = std::getenv("CCACHE_DIR");
  std::string keep = saved ? saved : "";
  setenv("CCACHE_DIR", (root_ / "ccache").c_str(), 1);
  auto req = [&](const std::string& rev) {
    BuildRequest r = request(rev);
    r.configure = {"/bin/sh", (root_ / "cc.sh").string(), "configure", "{src}", "{build}"};
    r.build = {"/bin/sh", (root_ / "cc.sh").string(), "build", "{src}", "{build}"};
    return r;
  };
  BuiltRevision base = buildRevision(req("HEAD~1"));
  BuiltRevision head = buildRevision(req("HEAD"));
  if (saved)
    setenv("CCACHE_DIR", keep.c_str(), 1);
  else
    unsetenv("CCACHE_DIR");
  EXPECT_NE(base.srcDir, head.srcDir);
  EXPECT_TRUE(base.ccache.used) << slurp(base.log);
  EXPECT_EQ(base.ccache.misses, 1) << slurp(base.log);
  EXPECT_EQ(base.ccache.hits, 0);
  EXPECT_EQ(head.ccache.hits, 1) << slurp(head.log);
  EXPECT_EQ(head.ccache.misses, 0) << slurp(head.log);
  EXPECT_EQ(head.ccache.summary(), "ccache 1/1 compiles hit (100.0 %)");
}

TEST(GateCcache, CountsTheCompilesOfAStatsLog) {
  std::string tmpl = (fs::temp_directory_path() / "dynqual-ccache-log-XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  fs::path log = fs::path(tmpl) / "stats.log";
  EXPECT_FALSE(readCcacheStatsLog(log).used);
  EXPECT_EQ(readCcacheStatsLog(log).summary(), "ccache not used");
  // By hand: x.cpp and y.cpp hit (direct, preprocessed), z.cpp missed, the link is neither.
  write(log, "# x.cpp\ndirect_cache_hit\nlocal_storage_hit\n"
             "# y.cpp\ndirect_cache_miss\npreprocessed_cache_hit\n"
             "# z.cpp\ncache_miss\ndirect_cache_miss\npreprocessed_cache_miss\n"
             "# libx.so\ncalled_for_link\n");
  CcacheStats st = readCcacheStatsLog(log);
  EXPECT_TRUE(st.used);
  EXPECT_EQ(st.hits, 2);
  EXPECT_EQ(st.misses, 1);
  EXPECT_EQ(st.other, 1);
  EXPECT_EQ(st.compiles(), 3);
  EXPECT_EQ(st.missed, std::vector<std::string>{"z.cpp"});
  EXPECT_NEAR(st.hitPercent(), 200.0 / 3, 1e-9);
  EXPECT_EQ(st.summary(), "ccache 2/3 compiles hit (66.7 %)");
  write(log, "");
  EXPECT_EQ(readCcacheStatsLog(log).summary(), "no compile (everything was up to date)");
  fs::remove_all(tmpl);
}

TEST(GateToolchain, DescribesTheToolsAndHashesThem) {
  Toolchain tc = detectToolchain("RelWithDebInfo");
  EXPECT_EQ(tc.fingerprint.size(), 64u);
  EXPECT_EQ(tc.fingerprint, sha256Hex(tc.description));
  for (const char* field : {"c++: ", "cmake: ", "ninja: ", "mlir: ", "build-type: RelWithDebInfo\n", "env CXX: "})
    EXPECT_NE(tc.description.find(field), std::string::npos) << field << " in\n" << tc.description;
  EXPECT_NE(detectToolchain("Debug").fingerprint, tc.fingerprint);
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(GateCacheRoot, FollowsTheEnvironment) {
  const char* saved = std::getenv("DYNQUAL_GATE_CACHE");
  std::string keep = saved ? saved : "";
  setenv("DYNQUAL_GATE_CACHE", "/tmp/some-gate-cache", 1);
  EXPECT_EQ(defaultCacheRoot(), fs::path("/tmp/some-gate-cache"));
  unsetenv("DYNQUAL_GATE_CACHE");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  std::string keepXdg = xdg ? xdg : "";
  setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(defaultCacheRoot(), fs::path("/tmp/xdg/dynqual/gate"));
  if (xdg)
    setenv("XDG_CACHE_HOME", keepXdg.c_str(), 1);
  else
    unsetenv("XDG_CACHE_HOME");
  if (saved)
    setenv("DYNQUAL_GATE_CACHE", keep.c_str(), 1);
}

// Builds this project's HEAD~1 and HEAD for real, then again from the cache; only with
// DYNQUAL_GATE_REAL=1 (minutes to hours on a small machine). DYNQUAL_GATE_REAL_REVS overrides the
// revisions (space-separated); they are resolved once, before building, so commits made meanwhile
// do not change what is built. Cache: DYNQUAL_GATE_CACHE or the default.
TEST(GateRealBuild, BuildsThisProjectsHeadAndParent) {
  const char* on = std::getenv("DYNQUAL_GATE_REAL");
  if (!on || std::string(on) != "1")
    GTEST_SKIP() << "set DYNQUAL_GATE_REAL=1 to build this project's HEAD~1 and HEAD";
  const char* revsVar = std::getenv("DYNQUAL_GATE_REAL_REVS");
  std::istringstream revList(revsVar && *revsVar ? revsVar : "HEAD~1 HEAD");
  std::vector<std::string> shas;
  for (std::string rev; revList >> rev;)
    shas.push_back(resolveRevision(DYNQUAL_SOURCE_DIR, rev));
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& sha : shas) {
      BuildRequest req;
      req.repo = DYNQUAL_SOURCE_DIR;
      req.rev = sha;
      req.progress = [](const std::string& l) { std::fprintf(stderr, "gate: %s\n", l.c_str()); };
      auto start = std::chrono::steady_clock::now();
      BuiltRevision b;
      try {
        b = buildRevision(req);
      } catch (const BuildFailed& e) {
        FAIL() << e.what() << "\n" << e.logTail();
      }
      double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::fprintf(stderr, "gate: %s fromCache=%d buildSeconds=%.1f wall=%.1f s bin=%s\n", sha.substr(0, 12).c_str(),
                   b.fromCache, b.buildSeconds, wall, b.binDir.c_str());
      EXPECT_TRUE(fs::exists(b.binDir / "dynqual"));
      if (pass == 1)
        EXPECT_TRUE(b.fromCache);
    }
  }
}

} // namespace
