// The commits between --good and --bad, from git.
#include "dynqual/bisect/Bisection.h"
#include "dynqual/process/Process.h"

#include <sstream>
#include <stdexcept>

namespace dynqual::bisect {

namespace {

/// git -C repo args..., without the caller's GIT_DIR and friends (as the gate's builder runs it).
process::ProcessResult git(const std::string& repo, const std::vector<std::string>& args) {
  process::ProcessSpec spec;
  spec.argv = {"git", "-C", repo};
  spec.searchPath = true;
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = {{"GIT_DIR", std::nullopt},    {"GIT_WORK_TREE", std::nullopt}, {"GIT_INDEX_FILE", std::nullopt},
              {"GIT_PREFIX", std::nullopt}, {"LC_ALL", std::string("C")},    {"GIT_TERMINAL_PROMPT", std::string("0")}};
  spec.timeoutSeconds = 120;
  return process::runProcess(spec);
}

std::string firstLine(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

Revision resolve(const std::string& repo, const std::string& rev, const char* flag) {
  process::ProcessResult r = git(repo, {"log", "-1", "--format=%H%x09%s", rev + "^{commit}", "--"});
  if (!r.ok())
    throw std::runtime_error(std::string(flag) + " " + rev + ": names no commit in " + repo +
                             " (git: " + firstLine(r.err.empty() ? r.describe(120) : r.err) + ")");
  std::string line = firstLine(r.out);
  auto tab = line.find('\t');
  return {line.substr(0, tab), tab == std::string::npos ? "" : line.substr(tab + 1)};
}

} // namespace

std::vector<Revision> revisionRange(const std::string& repo, const std::string& good, const std::string& bad) {
  Revision g = resolve(repo, good, "--good");
  Revision b = resolve(repo, bad, "--bad");
  if (g.sha == b.sha)
    throw std::runtime_error("no revision between --good " + good + " and --bad " + bad + ": both are " +
                             g.sha.substr(0, 12));
  if (!git(repo, {"merge-base", "--is-ancestor", g.sha, b.sha}).ok())
    throw std::runtime_error("--good " + good + " is not an ancestor of --bad " + bad +
                             "; bisect walks one line of history from good to bad");
  process::ProcessResult list =
      git(repo, {"log", "--reverse", "--first-parent", "--format=%H%x09%s", g.sha + ".." + b.sha});
  if (!list.ok())
    throw std::runtime_error("git log " + g.sha.substr(0, 12) + ".." + b.sha.substr(0, 12) +
                             " failed: " + firstLine(list.err));
  std::vector<Revision> out{g};
  std::istringstream in(list.out);
  for (std::string line; std::getline(in, line);) {
    if (line.empty())
      continue;
    auto tab = line.find('\t');
    out.push_back({line.substr(0, tab), tab == std::string::npos ? "" : line.substr(tab + 1)});
  }
  if (out.back().sha != b.sha)
    throw std::runtime_error("--bad " + bad + " is not on the first-parent line from --good " + good);
  return out;
}

} // namespace dynqual::bisect
