#include "Spawn.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

extern char** environ;

namespace dynqual::process::detail {

bool underAddressSanitizer() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

namespace {

std::vector<std::string> childEnvironment(const ProcessSpec& spec, bool asanLimit) {
  std::map<std::string, std::string> vars;
  std::vector<std::string> order;
  auto set = [&](const std::string& k, const std::string& v) {
    if (!vars.count(k))
      order.push_back(k);
    vars[k] = v;
  };
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos)
      set(kv.substr(0, eq), kv.substr(eq + 1));
  }
  for (const auto& [k, v] : spec.env) {
    if (v)
      set(k, *v);
    else
      vars.erase(k);
  }
  if (asanLimit) {
    std::string limit = "hard_rss_limit_mb=" + std::to_string(std::max<uint64_t>(1, spec.memoryLimitBytes >> 20));
    auto it = vars.find("ASAN_OPTIONS");
    set("ASAN_OPTIONS", it == vars.end() || it->second.empty() ? limit : it->second + ":" + limit);
  }
  std::vector<std::string> out;
  for (const auto& k : order)
    if (auto it = vars.find(k); it != vars.end())
      out.push_back(k + "=" + it->second);
  return out;
}

} // namespace

PreparedExec::PreparedExec(const ProcessSpec& s)
    : spec(s), asanLimit(s.memoryLimitBytes > 0 && underAddressSanitizer()),
      search(s.searchPath && !s.argv.empty() && s.argv[0].find('/') == std::string::npos),
      envStrings(childEnvironment(s, asanLimit)) {
  for (const auto& a : spec.argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (auto& e : envStrings)
    envp.push_back(e.data());
  envp.push_back(nullptr);
}

std::string describeStartFailure(const ProcessSpec& spec, const StartFailure& failure) {
  switch (failure.stage) {
  case 0:
    return "cannot change to " + spec.cwd.string() + ": " + std::strerror(failure.error);
  case 2:
    return "cannot bind to CPU " + std::to_string(spec.cpu) + ": " + std::strerror(failure.error);
  default:
    return spec.argv[0] + ": " + std::strerror(failure.error);
  }
}

void execChild(const PreparedExec& p, bool ownGroup, int in, int out, int err, int statusFd) {
  // Only async-signal-safe calls from here on: the parent may have other threads.
  const ProcessSpec& spec = p.spec;
  if (ownGroup)
    setpgid(0, 0);
  if (spec.memoryLimitBytes > 0 && !p.asanLimit) {
    rlimit lim{static_cast<rlim_t>(spec.memoryLimitBytes), static_cast<rlim_t>(spec.memoryLimitBytes)};
    setrlimit(RLIMIT_AS, &lim);
  }
  StartFailure failure{1, 0};
  if (spec.cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(spec.cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
      failure = {2, errno};
  }
  if (failure.stage != 2) {
    struct sigaction dfl{};
    dfl.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; ++s)
      sigaction(s, &dfl, nullptr); // fails harmlessly for SIGKILL, SIGSTOP and unused numbers
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (!spec.cwd.empty() && chdir(spec.cwd.c_str()) != 0) {
      failure = {0, errno};
    } else {
      dup2(in, 0);
      dup2(out, 1);
      dup2(err, 2);
      if (p.search)
        execvpe(p.args[0], p.args.data(), p.envp.data());
      else
        execve(p.args[0], p.args.data(), p.envp.data());
      failure = {1, errno};
    }
  }
  if (statusFd >= 0) {
    ssize_t ignored = write(statusFd, &failure, sizeof failure);
    (void)ignored;
  } else if (failure.stage == 2) {
    dprintf(err, "cannot bind to CPU %d: %s\n", spec.cpu, std::strerror(failure.error));
  } else if (failure.stage == 0) {
    dprintf(2, "cannot change to %s: %s\n", spec.cwd.c_str(), std::strerror(failure.error));
  } else {
    dprintf(2, "exec %s: %s\n", p.args[0], std::strerror(failure.error));
  }
  _exit(failure.stage == 2 ? 126 : 127);
}

} // namespace dynqual::process::detail
