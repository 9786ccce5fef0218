#pragma once
// Builds git revisions of dynqual (or a working tree as it is) into a cache, for `dynqual gate`.
// How revisions are checked out, keyed, locked and logged: docs/gate-builds.md.
#include "dynqual/gate/Toolchain.h"

#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dynqual::gate {

namespace fs = std::filesystem;

/// The revision name that means "the repository's working tree as it is, uncommitted changes
/// included".
inline constexpr const char* kWorktree = "WORKTREE";

/// Any error of this library; what() is one line naming the revision or folder and what to do.
class GateError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A revision that does not name a commit, or a folder that is not a git repository.
class RevisionError : public GateError {
public:
  using GateError::GateError;
};

/// Configure or build exited unsuccessfully, or did not produce the binaries.
class BuildFailed : public GateError {
public:
  BuildFailed(const std::string& message, fs::path log, std::string logTail)
      : GateError(message), log_(std::move(log)), logTail_(std::move(logTail)) {}
  /// The build log (the failing step's output is at its end).
  const fs::path& log() const { return log_; }
  /// The last lines of the log (up to 30), newline-terminated.
  const std::string& logTail() const { return logTail_; }

private:
  fs::path log_;
  std::string logTail_;
};

/// The cache folder used when BuildRequest::cacheRoot is empty: $DYNQUAL_GATE_CACHE if set and
/// non-empty, else $XDG_CACHE_HOME/dynqual/gate, else $HOME/.cache/dynqual/gate. Throws
/// GateError when none of the three variables is set.
fs::path defaultCacheRoot();

/// The commit `rev` names in the repository at `repo` (any folder of any worktree of it), as 40
/// hex digits: `git rev-parse --verify REV^{commit}`. Throws RevisionError ("revision 'foo' does
/// not exist in /path (git: ...)") when it names no commit or `repo` is not a git repository.
std::string resolveRevision(const fs::path& repo, const std::string& rev);

/// The default configure argv template:
/// cmake -G Ninja -S {src} -B {build} -DCMAKE_BUILD_TYPE=RelWithDebInfo
std::vector<std::string> defaultConfigure();
/// The default build argv template: ninja -C {build} -j 2 dynqual dynqual-exec
std::vector<std::string> defaultBuild();

/// What to build and how.
struct BuildRequest {
  fs::path repo;      ///< the git repository (any folder of any worktree of it)
  std::string rev;    ///< a revision (HEAD~1, a branch, a sha) or kWorktree
  fs::path cacheRoot; ///< empty: defaultCacheRoot()
  /// Argv templates, run without a shell; "{src}" and "{build}" in any element are replaced by
  /// the absolute source and build folders.
  std::vector<std::string> configure = defaultConfigure();
  std::vector<std::string> build = defaultBuild();
  /// Executables that must exist after the build, all in one folder of the build tree (looked
  /// for in tools/dynqual/, harness/cli/ (older revisions), bin/, the build folder itself, then anywhere below it).
  std::vector<std::string> binaries = {"dynqual", "dynqual-exec"};
  /// The toolchain to key the cache with; empty: detectToolchain() with the build type found in
  /// `configure` (-DCMAKE_BUILD_TYPE=...).
  std::optional<Toolchain> toolchain;
  /// Limit for each of configure and build, in seconds; 0: none.
  double stepTimeoutSeconds = 0;
  /// Receives one human-readable line per step; may be empty.
  std::function<void(const std::string&)> progress;
};

/// What ccache did during one build step, read from the stats log the step wrote
/// (CCACHE_STATSLOG, one entry per ccache call), so other builds sharing the cache on the machine
/// do not count. A compile is a call that looked the cache up: a hit (direct or preprocessed) or
/// a miss; other calls (links, uncacheable options) are counted apart.
struct CcacheStats {
  bool used = false;               ///< the stats log was written (ccache ran at least once)
  int hits = 0, misses = 0;        ///< compiles served from the cache / compiled and stored
  int other = 0;                   ///< calls that were not cacheable compiles
  std::vector<std::string> missed; ///< the source files of the misses, as ccache names them
  /// Number of compiles (hits + misses).
  int compiles() const { return hits + misses; }
  /// 100 * hits / compiles, in percent; 0 when nothing was compiled.
  double hitPercent() const { return compiles() ? 100.0 * hits / compiles() : 0.0; }
  /// "ccache 298/300 compiles hit (99.3 %)", "no compile (everything was up to date)" or
  /// "ccache not used".
  std::string summary() const;
};

/// Reads a ccache stats log (ccache >= 4.2 writes it when CCACHE_STATSLOG names a file): blocks
/// that start with "# <source file>" followed by one counter name per line. A block holding
/// direct_cache_hit or preprocessed_cache_hit is a hit, one holding cache_miss a miss, any other
/// block is `other`. A missing file gives used = false.
CcacheStats readCcacheStatsLog(const fs::path& file);

/// A folder holding built binaries, and how it came to be.
struct BuiltRevision {
  std::string rev;         ///< as requested (or the folder, for useBinDir)
  std::string sha;         ///< the commit (for kWorktree: HEAD of the working tree, "" if none)
  bool worktree = false;   ///< built from the working tree as it is
  bool dirty = false;      ///< kWorktree only: the working tree had uncommitted changes
  bool fromCache = false;  ///< reused a finished build; nothing was run
  double buildSeconds = 0; ///< wall seconds spent in configure and build by this call
  fs::path srcDir;         ///< source folder the build used (keep it: binaries may refer to it)
  fs::path buildDir;       ///< the build tree
  fs::path binDir;         ///< the folder holding every requested binary
  fs::path log;            ///< configure and build output, appended per attempt
  std::string cacheKey;    ///< <sha>-<config12> or worktree-<path12>-<config12>
  CcacheStats ccache;      ///< what ccache did in this call's build step (used = false when cached)
};

/// Builds `request.rev` of `request.repo`, or reuses the cached build with the same key.
///
/// A commit is checked out with `git worktree add --detach` into <cacheRoot>/src/<sha> (kept and
/// reused while its tracked files are unmodified) and built inside that checkout, in
/// <cacheRoot>/src/<sha>/build-gate-<config12>; when that folder holds a `.dynqual-build-ok`
/// stamp and the binaries, nothing runs and fromCache is true. kWorktree builds the working
/// tree's own folder incrementally into <worktree>/build-gate-<config12> (never fromCache).
/// config12 is the first 12 hex digits of SHA-256 over the toolchain fingerprint and the two argv
/// templates. Because the build folder lies inside the source folder at the same place for every
/// revision, and configure and build run with CCACHE_BASEDIR={src} and CCACHE_NOHASHDIR=1, every
/// path ccache hashes is relative and the same for every revision: a revision one commit away
/// recompiles only what changed. The build step writes its own ccache stats log
/// (<cacheRoot>/logs/<key>.ccache-stats, CCACHE_STATSLOG), read into BuiltRevision::ccache.
/// Output is appended to <cacheRoot>/logs/<key>.log; one flock per key serialises concurrent
/// builders.
///
/// Throws RevisionError for a revision that names no commit, BuildFailed ("build of <rev>
/// (<sha12>) failed: <step> exited with status N; log: <path>", with logTail()) when configure
/// or build fails or a binary is missing, GateError when the checkout or the cache folders
/// cannot be prepared.
BuiltRevision buildRevision(const BuildRequest& request);

/// Describes prebuilt binaries in `dir` (--base-bin / --head-bin): checks that each of
/// `binaries` is there and executable. Throws GateError naming the first missing or
/// non-executable one.
BuiltRevision useBinDir(const fs::path& dir, const std::vector<std::string>& binaries = {"dynqual", "dynqual-exec"});

} // namespace dynqual::gate
