#include "dynqual/exec/Process.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace dynqual::exec {

std::string ProcessResult::describeAbnormalEnd(double timeoutSeconds) const {
  if (!started)
    return "could not start: " + error;
  if (timedOut)
    return "timed out after " + std::to_string(static_cast<long>(timeoutSeconds)) + " s";
  if (signal != 0)
    return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "";
}

std::string ProcessResult::describe(double timeoutSeconds) const {
  std::string abnormal = describeAbnormalEnd(timeoutSeconds);
  return abnormal.empty() ? "exited with status " + std::to_string(exitCode) : abnormal;
}

namespace {

using Clock = std::chrono::steady_clock;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

/// The child's environment: ours with the spec's changes, and under an ASan memory limit
/// hard_rss_limit_mb added to ASAN_OPTIONS. Built before fork, so the child only calls execve.
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

void closeFd(int& fd) {
  if (fd >= 0)
    close(fd);
  fd = -1;
}

/// What the child reports through the exec-status pipe when it cannot become the program.
struct StartFailure {
  int stage;  ///< 0 chdir, 1 exec
  int error;  ///< errno
};

} // namespace

ProcessResult runProcess(const ProcessSpec& spec) {
  ProcessResult r;
  if (spec.argv.empty()) {
    r.error = "empty command";
    return r;
  }
  const bool capture = spec.appendTo.empty();
  const bool limited = spec.timeoutSeconds > 0;
  const bool asanLimit = spec.memoryLimitBytes > 0 && kAddressSanitizer;
  int outPipe[2] = {-1, -1}, errPipe[2] = {-1, -1}, statusPipe[2] = {-1, -1}, logFd = -1;
  auto closeAll = [&] {
    for (int* fd : {&outPipe[0], &outPipe[1], &errPipe[0], &errPipe[1], &statusPipe[0], &statusPipe[1], &logFd})
      closeFd(*fd);
  };
  if (capture && (pipe2(outPipe, O_CLOEXEC) != 0 || pipe2(errPipe, O_CLOEXEC) != 0)) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    closeAll();
    return r;
  }
  if (!capture) {
    logFd = open(spec.appendTo.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (logFd < 0) {
      r.error = "cannot open " + spec.appendTo.string() + ": " + std::strerror(errno);
      return r;
    }
  }
  // Closed by a successful exec; otherwise it carries why the child could not start.
  if (pipe2(statusPipe, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    closeAll();
    return r;
  }

  std::vector<char*> args;
  for (const auto& a : spec.argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> envStrings = childEnvironment(spec, asanLimit);
  std::vector<char*> envp;
  for (auto& e : envStrings)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  const bool search = spec.searchPath && spec.argv[0].find('/') == std::string::npos;
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();
  sigset_t none;
  sigemptyset(&none);

  auto start = Clock::now();
  pid_t pid = fork();
  if (pid < 0) {
    r.error = std::string("fork: ") + std::strerror(errno);
    closeAll();
    return r;
  }
  if (pid == 0) {
    // Only async-signal-safe calls from here on: the parent may have other threads.
    if (limited)
      setpgid(0, 0);
    if (spec.memoryLimitBytes > 0 && !asanLimit) {
      rlimit lim{static_cast<rlim_t>(spec.memoryLimitBytes), static_cast<rlim_t>(spec.memoryLimitBytes)};
      setrlimit(RLIMIT_AS, &lim);
    }
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; ++s)
      sigaction(s, &dfl, nullptr);  // fails harmlessly for SIGKILL, SIGSTOP and unused numbers
    sigprocmask(SIG_SETMASK, &none, nullptr);
    StartFailure failure{0, 0};
    if (cwd && chdir(cwd) != 0) {
      failure = {0, errno};
    } else {
      int devnull = open("/dev/null", O_RDONLY);
      dup2(devnull, 0);
      dup2(capture ? outPipe[1] : logFd, 1);
      dup2(capture ? errPipe[1] : logFd, 2);
      if (search)
        execvpe(args[0], args.data(), envp.data());
      else
        execve(args[0], args.data(), envp.data());
      failure = {1, errno};
    }
    ssize_t ignored = write(statusPipe[1], &failure, sizeof failure);
    (void)ignored;
    _exit(127);
  }
  closeFd(outPipe[1]);
  closeFd(errPipe[1]);
  closeFd(statusPipe[1]);
  closeFd(logFd);

  auto reap = [&](int flags, int& status, rusage& usage) {
    pid_t w;
    do
      w = wait4(pid, &status, flags, &usage);
    while (w < 0 && errno == EINTR);
    return w;
  };
  int status = 0;
  rusage usage{};
  StartFailure failure{};
  ssize_t got;
  do
    got = read(statusPipe[0], &failure, sizeof failure);
  while (got < 0 && errno == EINTR);
  closeFd(statusPipe[0]);
  if (got == static_cast<ssize_t>(sizeof failure)) {
    reap(0, status, usage);
    r.error = (failure.stage == 0 ? "cannot change to " + spec.cwd.string() : spec.argv[0]) + ": " +
              std::strerror(failure.error);
    closeAll();
    return r;
  }
  r.started = true;

  auto deadline = start + std::chrono::milliseconds(static_cast<long long>(spec.timeoutSeconds * 1000));
  auto killGroup = [&] {
    kill(-pid, SIGKILL);
    r.timedOut = true;
  };
  if (capture) {
    pollfd fds[2] = {{outPipe[0], POLLIN, 0}, {errPipe[0], POLLIN, 0}};
    int open = 2;
    char buf[65536];
    while (open > 0) {
      int waitMs = 1000;
      if (limited) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) {
          killGroup();
          break;
        }
        waitMs = static_cast<int>(std::min<long long>(left, 1000));
      }
      int n = poll(fds, 2, waitMs);
      if (n < 0 && errno != EINTR)
        break;
      for (int i = 0; i < 2; ++i) {
        if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
          continue;
        ssize_t len = read(fds[i].fd, buf, sizeof buf);
        if (len > 0) {
          (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(len));
        } else if (len == 0 || errno != EINTR) {
          fds[i].fd = -1;
          --open;
        }
      }
    }
    closeAll();
  }

  // Output closed (or not captured); the child may still be running: enforce the limit.
  bool reaped = false;
  if (limited && !r.timedOut) {
    while (true) {
      pid_t w = reap(WNOHANG, status, usage);
      if (w == pid) {
        reaped = true;
        break;
      }
      if (w < 0)
        break;
      if (Clock::now() >= deadline) {
        killGroup();
        break;
      }
      usleep(2000);
    }
  }
  if (!reaped)
    reap(0, status, usage);
  r.wallMs = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  auto ms = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) * 1e3 + tv.tv_usec * 1e-3; };
  r.cpuMs = ms(usage.ru_utime) + ms(usage.ru_stime);
  if (r.timedOut) {
    r.signal = SIGKILL;
  } else if (WIFEXITED(status)) {
    r.exitCode = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  return r;
}

} // namespace dynqual::exec
