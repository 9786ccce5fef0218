#include "dynqual/gate/RevisionBuild.h"

#include "dynqual/process/Process.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <fcntl.h>
#include <fstream>
#include <sys/file.h>
#include <unistd.h>

namespace dynqual::gate {

namespace {

using process::ProcessResult;
using process::ProcessSpec;
using process::runProcess;

constexpr const char* kBuildStamp = ".dynqual-build-ok";
constexpr const char* kConfigureStamp = ".dynqual-configure-ok";
constexpr int kTailLines = 30;

std::string trim(std::string s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::string firstLine(const std::string& s) {
  std::string t = trim(s);
  return t.substr(0, t.find('\n'));
}

std::string shortSha(const std::string& sha) {
  return sha.empty() ? "no commit" : sha.substr(0, 12);
}

std::string joinArgv(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty())
      out += ' ';
    out += a;
  }
  return out;
}

/// git -C dir args..., output captured, without the caller's GIT_DIR and friends (a gate run
/// from a git hook must still address `dir`).
ProcessResult git(const fs::path& dir, const std::vector<std::string>& args) {
  ProcessSpec spec;
  spec.argv = {"git", "-C", dir.string()};
  spec.searchPath = true;
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = {{"GIT_DIR", std::nullopt},    {"GIT_WORK_TREE", std::nullopt}, {"GIT_INDEX_FILE", std::nullopt},
              {"GIT_PREFIX", std::nullopt}, {"LC_ALL", std::string("C")},    {"GIT_TERMINAL_PROMPT", std::string("0")}};
  spec.timeoutSeconds = 600;
  return runProcess(spec);
}

std::string gitError(const ProcessResult& r) {
  if (!r.started)
    return "git " + r.describe(600);
  std::string msg = firstLine(r.err);
  return msg.empty() ? r.describe(600) : msg;
}

void say(const BuildRequest& req, const std::string& line) {
  if (req.progress)
    req.progress(line);
}

std::string nowText() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S %z", std::localtime(&t));
  return buf;
}

void appendText(const fs::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::app);
  out << text;
}

std::string tailOf(const fs::path& file, int lines) {
  std::ifstream in(file);
  std::deque<std::string> last;
  std::string line;
  while (std::getline(in, line)) {
    last.push_back(line);
    if (static_cast<int>(last.size()) > lines)
      last.pop_front();
  }
  std::string out;
  for (const auto& l : last)
    out += l + "\n";
  return out;
}

void writeFileAtomically(const fs::path& file, const std::string& text) {
  fs::path tmp = file;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out)
      throw GateError("cannot write " + tmp.string());
  }
  fs::rename(tmp, file);
}

void makeDirs(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw GateError("cannot create the gate cache folder " + dir.string() + ": " + ec.message() +
                    "; choose another with --cache-dir or DYNQUAL_GATE_CACHE");
}

bool isExecutableFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

bool holdsAll(const fs::path& dir, const std::vector<std::string>& binaries) {
  for (const auto& b : binaries)
    if (!isExecutableFile(dir / b))
      return false;
  return true;
}

/// The folder of the build tree holding every binary: tools/dynqual/ (harness/cli/ before the mains
/// moved there), bin/, the build folder, then
/// any folder below it (CMakeFiles skipped).
std::optional<fs::path> findBinDir(const fs::path& buildDir, const std::vector<std::string>& binaries) {
  for (const char* sub : {"tools/dynqual", "harness/cli", "bin", ""}) {
    fs::path d = *sub ? buildDir / sub : buildDir;
    if (holdsAll(d, binaries))
      return d;
  }
  if (binaries.empty())
    return buildDir;
  std::error_code ec;
  fs::recursive_directory_iterator it(buildDir, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && it->path().filename() == "CMakeFiles") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->path().filename() == binaries.front() && holdsAll(it->path().parent_path(), binaries))
      return it->path().parent_path();
  }
  return std::nullopt;
}

/// An exclusive flock held for the object's lifetime.
class FileLock {
public:
  FileLock(const fs::path& file, const BuildRequest& req, const std::string& what) {
    fd_ = open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw GateError("cannot open the lock file " + file.string() + ": " + std::strerror(errno));
    if (flock(fd_, LOCK_EX | LOCK_NB) == 0)
      return;
    say(req, "waiting for another gate building " + what + " (lock: " + file.string() + ")");
    while (flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        int err = errno;
        close(fd_);
        throw GateError("cannot lock " + file.string() + ": " + std::strerror(err));
      }
    }
  }
  ~FileLock() {
    if (fd_ >= 0)
      close(fd_); // releases the flock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

private:
  int fd_ = -1;
};

std::string buildTypeOf(const std::vector<std::string>& configure) {
  const std::string prefix = "-DCMAKE_BUILD_TYPE=";
  std::string type;
  for (const auto& a : configure)
    if (a.rfind(prefix, 0) == 0)
      type = a.substr(prefix.size());
  return type;
}

/// First 12 hex digits of SHA-256 over the toolchain fingerprint and both argv templates.
std::string configId(const BuildRequest& req, const Toolchain& tc) {
  std::string material = "toolchain: " + tc.fingerprint + "\n";
  material += "configure:";
  for (const auto& a : req.configure)
    material += std::string(1, '\0') + a;
  material += "\nbuild:";
  for (const auto& a : req.build)
    material += std::string(1, '\0') + a;
  return sha256Hex(material).substr(0, 12);
}

std::vector<std::string> substitute(const std::vector<std::string>& argv, const fs::path& src, const fs::path& build) {
  std::vector<std::string> out;
  for (std::string a : argv) {
    for (const auto& [key, value] : {std::pair<std::string, std::string>{"{src}", src.string()},
                                     std::pair<std::string, std::string>{"{build}", build.string()}}) {
      for (size_t at = a.find(key); at != std::string::npos; at = a.find(key, at + value.size()))
        a.replace(at, key.size(), value);
    }
    out.push_back(std::move(a));
  }
  return out;
}

/// The build folders the gate puts inside a source folder (build-gate-<config12>).
constexpr const char* kBuildPrefix = "build-gate-";

/// `git status --porcelain` of `dir` without the gate's own build folders, which a repository
/// that does not ignore them would otherwise show as untracked.
ProcessResult statusOf(const fs::path& dir) {
  return git(dir, {"status", "--porcelain", "--", ".", std::string(":(exclude)") + kBuildPrefix + "*"});
}

/// Is `dir` a checkout of exactly `sha` (its own worktree root, HEAD at sha, nothing modified)?
bool isCleanCheckout(const fs::path& dir, const std::string& sha) {
  ProcessResult top = git(dir, {"rev-parse", "--show-toplevel"});
  std::error_code ec;
  if (!top.ok() || !fs::equivalent(fs::path(trim(top.out)), dir, ec))
    return false;
  ProcessResult head = git(dir, {"rev-parse", "HEAD"});
  if (!head.ok() || trim(head.out) != sha)
    return false;
  ProcessResult status = statusOf(dir);
  return status.ok() && trim(status.out).empty();
}

/// <cacheRoot>/src/<sha>, a clean detached worktree of `sha`: reused when it already is one,
/// else (re)created with `git worktree add --detach` after pruning stale registrations.
fs::path prepareCheckout(const BuildRequest& req, const fs::path& cacheRoot, const std::string& sha) {
  fs::path src = cacheRoot / "src" / sha;
  FileLock lock(cacheRoot / "locks" / ("src-" + sha + ".lock"), req, "the checkout of " + shortSha(sha));
  std::error_code ec;
  if (fs::exists(src, ec)) {
    if (isCleanCheckout(src, sha))
      return src;
    say(req, "checkout " + src.string() + " is modified or stale; recreating it");
    git(req.repo, {"worktree", "remove", "--force", src.string()});
    fs::remove_all(src, ec);
    if (ec)
      throw GateError("cannot remove the stale checkout " + src.string() + ": " + ec.message() +
                      "; remove it by hand and run 'git worktree prune'");
  }
  git(req.repo, {"worktree", "prune"});
  say(req, "checking out " + req.rev + " (" + shortSha(sha) + ") into " + src.string());
  ProcessResult add = git(req.repo, {"worktree", "add", "--detach", src.string(), sha});
  if (!add.ok())
    throw GateError("cannot check out " + req.rev + " (" + shortSha(sha) + ") into " + src.string() + " (git: " +
                    gitError(add) + "); remove that folder and run 'git worktree prune' in " + req.repo.string());
  return src;
}

/// Runs one step (configure or build) with its output appended to the log; throws BuildFailed.
double runStep(const BuildRequest& req, const std::string& step, const std::vector<std::string>& argvTemplate,
               const BuiltRevision& b, const fs::path& ccacheStatsLog = {}) {
  std::vector<std::string> argv = substitute(argvTemplate, b.srcDir, b.buildDir);
  appendText(b.log, "=== " + nowText() + " dynqual gate: " + step + " " + b.rev + " (" + shortSha(b.sha) +
                        ")\n=== " + joinArgv(argv) + "\n");
  say(req, step + " " + b.rev + " (" + shortSha(b.sha) + "): " + joinArgv(argv));
  ProcessSpec spec;
  spec.argv = argv;
  spec.searchPath = true;
  spec.cwd = b.buildDir;
  spec.appendTo = b.log;
  spec.timeoutSeconds = req.stepTimeoutSeconds;
  // Paths under the source folder hash relative to it, so every checkout shares ccache entries.
  spec.env = {{"CCACHE_BASEDIR", b.srcDir.string()}, {"CCACHE_NOHASHDIR", std::string("1")}};
  // This step's own counters: the cache and its global counters are shared with other builds.
  if (!ccacheStatsLog.empty())
    spec.env.push_back({"CCACHE_STATSLOG", ccacheStatsLog.string()});
  ProcessResult r = runProcess(spec);
  appendText(b.log, "=== " + step + " " + (r.ok() ? "finished" : r.describe(req.stepTimeoutSeconds)) + " after " +
                        std::to_string(r.wallMs / 1000) + " s\n");
  if (!r.ok())
    throw BuildFailed("build of " + b.rev + " (" + shortSha(b.sha) + ") failed: " + step + " " +
                          r.describe(req.stepTimeoutSeconds) + "; log: " + b.log.string(),
                      b.log, tailOf(b.log, kTailLines));
  return r.wallMs / 1000;
}

/// Configures (unless an earlier configure of this build folder succeeded), builds, finds the
/// binaries and writes the stamp.
void configureAndBuild(const BuildRequest& req, BuiltRevision& b) {
  fs::path configured = b.buildDir / kConfigureStamp;
  double seconds = 0;
  if (!fs::exists(configured)) {
    seconds += runStep(req, "configure", req.configure, b);
    writeFileAtomically(configured, nowText() + "\n");
  }
  fs::path statsLog = b.log;
  statsLog.replace_extension(".ccache-stats");
  std::error_code ec;
  fs::remove(statsLog, ec);
  seconds += runStep(req, "build", req.build, b, statsLog);
  b.buildSeconds = seconds;
  b.ccache = readCcacheStatsLog(statsLog);
  appendText(b.log, "=== " + b.ccache.summary() + "\n");
  auto bin = findBinDir(b.buildDir, req.binaries);
  if (!bin) {
    std::string missing;
    for (const auto& name : req.binaries)
      missing += (missing.empty() ? "" : ", ") + name;
    std::string msg = "build of " + b.rev + " (" + shortSha(b.sha) + ") failed: it finished but " + missing +
                      " are not all found as executables under " + b.buildDir.string() + "; log: " + b.log.string();
    appendText(b.log, "=== " + msg + "\n");
    throw BuildFailed(msg, b.log, tailOf(b.log, kTailLines));
  }
  b.binDir = *bin;
}

} // namespace

std::string CcacheStats::summary() const {
  if (!used)
    return "ccache not used";
  if (compiles() == 0)
    return "no compile (everything was up to date)";
  char pct[32];
  std::snprintf(pct, sizeof pct, "%.1f", hitPercent());
  return "ccache " + std::to_string(hits) + "/" + std::to_string(compiles()) + " compiles hit (" + pct + " %)";
}

CcacheStats readCcacheStatsLog(const fs::path& file) {
  CcacheStats st;
  std::ifstream in(file);
  if (!in)
    return st;
  st.used = true;
  std::string source, line;
  bool open = false, hit = false, miss = false;
  auto close = [&] {
    if (!open)
      return;
    if (hit)
      ++st.hits;
    else if (miss) {
      ++st.misses;
      st.missed.push_back(source);
    } else
      ++st.other;
  };
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.rfind("# ", 0) == 0) {
      close();
      open = true;
      hit = miss = false;
      source = line.substr(2);
    } else if (line == "direct_cache_hit" || line == "preprocessed_cache_hit") {
      hit = true;
    } else if (line == "cache_miss") {
      miss = true;
    }
  }
  close();
  return st;
}

fs::path defaultCacheRoot() {
  if (const char* v = std::getenv("DYNQUAL_GATE_CACHE"); v && *v)
    return fs::absolute(v);
  if (const char* v = std::getenv("XDG_CACHE_HOME"); v && *v)
    return fs::absolute(fs::path(v) / "dynqual" / "gate");
  if (const char* v = std::getenv("HOME"); v && *v)
    return fs::path(v) / ".cache" / "dynqual" / "gate";
  throw GateError("no gate cache folder: set DYNQUAL_GATE_CACHE or HOME, or pass --cache-dir");
}

std::string resolveRevision(const fs::path& repo, const std::string& rev) {
  if (rev.empty() || rev.front() == '-')
    throw RevisionError("revision '" + rev + "' is not a valid revision name; give a branch, tag, sha or HEAD~N");
  ProcessResult r = git(repo, {"rev-parse", "--verify", rev + "^{commit}"});
  std::string sha = trim(r.out);
  if (!r.ok() || sha.size() != 40)
    throw RevisionError("revision '" + rev + "' does not exist in " + repo.string() + " (git: " + gitError(r) +
                        "); check the name, or fetch it into that repository");
  return sha;
}

std::vector<std::string> defaultConfigure() {
  return {"cmake", "-G", "Ninja", "-S", "{src}", "-B", "{build}", "-DCMAKE_BUILD_TYPE=RelWithDebInfo"};
}

std::vector<std::string> defaultBuild() {
  return {"ninja", "-C", "{build}", "-j", "2", "dynqual", "dynqual-exec"};
}

BuiltRevision buildRevision(const BuildRequest& req) {
  if (req.configure.empty() || req.build.empty())
    throw GateError("building " + req.rev + ": the configure and build commands must not be empty");
  fs::path cacheRoot = fs::absolute(req.cacheRoot.empty() ? defaultCacheRoot() : req.cacheRoot).lexically_normal();
  for (const char* sub : {"src", "logs", "locks"})
    makeDirs(cacheRoot / sub);

  BuiltRevision b;
  b.rev = req.rev;
  b.worktree = req.rev == kWorktree;
  if (b.worktree) {
    ProcessResult top = git(req.repo, {"rev-parse", "--show-toplevel"});
    if (!top.ok() || trim(top.out).empty())
      throw RevisionError(std::string(kWorktree) + ": " + req.repo.string() + " is not a git working tree (git: " +
                          gitError(top) + "); run the gate inside the repository or pass its folder");
    b.srcDir = fs::canonical(trim(top.out));
    ProcessResult head = git(b.srcDir, {"rev-parse", "--verify", "--quiet", "HEAD^{commit}"});
    b.sha = head.ok() ? trim(head.out) : "";
    ProcessResult status = statusOf(b.srcDir);
    b.dirty = !status.ok() || !trim(status.out).empty();
  } else {
    b.sha = resolveRevision(req.repo, req.rev);
  }

  say(req, "resolving " + req.rev + ": " + (b.worktree ? "working tree " + b.srcDir.string() + ", HEAD " : "") +
               shortSha(b.sha) + (b.dirty ? " with uncommitted changes" : ""));
  Toolchain tc = req.toolchain ? *req.toolchain : detectToolchain(buildTypeOf(req.configure));
  std::string config = configId(req, tc);
  b.cacheKey =
      b.worktree ? "worktree-" + sha256Hex(b.srcDir.string()).substr(0, 12) + "-" + config : b.sha + "-" + config;
  // Inside the source folder, at the same place for every revision: ccache then sees only
  // relative paths (CCACHE_BASEDIR={src}), including those of generated headers.
  if (b.worktree)
    b.buildDir = b.srcDir / (kBuildPrefix + config);
  else
    b.buildDir = cacheRoot / "src" / b.sha / (kBuildPrefix + config);
  b.log = cacheRoot / "logs" / (b.cacheKey + ".log");

  FileLock lock(cacheRoot / "locks" / (b.cacheKey + ".lock"), req, req.rev + " (" + b.cacheKey + ")");
  fs::path stamp = b.buildDir / kBuildStamp;

  if (b.worktree) {
    makeDirs(b.buildDir);
    configureAndBuild(req, b);
    writeFileAtomically(stamp, "worktree " + b.srcDir.string() + " at " + b.sha + "\n" + tc.description);
    say(req, "built " + req.rev + " in " + std::to_string(static_cast<long>(b.buildSeconds + 0.5)) + " s, " +
                 b.ccache.summary() + ": " + b.binDir.string());
    return b;
  }

  // The build lives inside the checkout: a checkout recreated here (modified or stale) takes its
  // builds with it, and the binaries may refer to their source folder (corpus, data).
  b.srcDir = prepareCheckout(req, cacheRoot, b.sha);
  if (fs::exists(stamp)) {
    if (auto bin = findBinDir(b.buildDir, req.binaries)) {
      b.binDir = *bin;
      b.fromCache = true;
      appendText(b.log, "=== " + nowText() + " dynqual gate: reused this build for " + req.rev + "\n");
      say(req, "reusing the cached build of " + req.rev + " (" + shortSha(b.sha) + "): " + b.binDir.string());
      return b;
    }
    say(req, "cached build " + b.buildDir.string() + " lacks its binaries; rebuilding");
  }
  makeDirs(b.buildDir);
  fs::remove(stamp);
  configureAndBuild(req, b);
  writeFileAtomically(stamp, b.sha + "\n" + tc.description);
  say(req, "built " + req.rev + " (" + shortSha(b.sha) + ") in " +
               std::to_string(static_cast<long>(b.buildSeconds + 0.5)) + " s, " + b.ccache.summary() + ": " +
               b.binDir.string());
  return b;
}

BuiltRevision useBinDir(const fs::path& dir, const std::vector<std::string>& binaries) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw GateError("binary folder " + dir.string() + " does not exist; pass the folder holding " +
                    (binaries.empty() ? std::string("the binaries") : binaries.front()));
  for (const auto& name : binaries) {
    fs::path p = dir / name;
    if (!fs::exists(p, ec))
      throw GateError("binary folder " + dir.string() + " has no " + name + "; build it there or pass another folder");
    if (!isExecutableFile(p))
      throw GateError(p.string() + " is not an executable file; check the folder passed or its permissions");
  }
  BuiltRevision b;
  b.rev = dir.string();
  b.binDir = fs::absolute(dir).lexically_normal();
  b.buildDir = b.binDir;
  return b;
}

} // namespace dynqual::gate
