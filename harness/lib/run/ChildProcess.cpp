#include "dynqual/run/ChildProcess.h"
#include "MemoryLimit.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace dynqual::run {

std::string ChildResult::describeAbnormalEnd(double timeoutSeconds) const {
  if (!started)
    return "could not start: " + error;
  if (timedOut)
    return "timed out after " + std::to_string(static_cast<int>(timeoutSeconds)) + " s";
  if (signal != 0)
    return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "";
}

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

std::vector<std::string> asanLimitedEnvironment(uint64_t bytes) {
  std::vector<std::string> env;
  std::string options = "hard_rss_limit_mb=" + std::to_string(std::max<uint64_t>(1, bytes >> 20));
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (kv.rfind("ASAN_OPTIONS=", 0) == 0)
      options = kv.substr(13) + ":" + options;
    else
      env.push_back(kv);
  }
  env.push_back("ASAN_OPTIONS=" + options);
  return env;
}

ChildResult runChild(const std::vector<std::string>& argv, double timeoutSeconds, uint64_t memoryLimitBytes) {
  std::vector<std::string> env;
  std::vector<char*> envp;
  bool asanLimit = memoryLimitBytes > 0 && underAddressSanitizer();
  if (asanLimit) {
    env = asanLimitedEnvironment(memoryLimitBytes);
    for (auto& kv : env)
      envp.push_back(kv.data());
    envp.push_back(nullptr);
  }
  std::vector<char*> args;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ChildResult r;
  int outPipe[2], errPipe[2];
  if (pipe2(outPipe, O_CLOEXEC) != 0 || pipe2(errPipe, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid < 0) {
    r.error = std::string("fork: ") + std::strerror(errno);
    return r;
  }
  if (pid == 0) {
    setpgid(0, 0);
    if (memoryLimitBytes > 0 && !asanLimit) {
      rlimit lim{static_cast<rlim_t>(memoryLimitBytes), static_cast<rlim_t>(memoryLimitBytes)};
      setrlimit(RLIMIT_AS, &lim);
    }
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    dup2(outPipe[1], 1);
    dup2(errPipe[1], 2);
    if (asanLimit)
      execve(args[0], args.data(), envp.data());
    else
      execv(args[0], args.data());
    dprintf(2, "exec %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  r.started = true;
  close(outPipe[1]);
  close(errPipe[1]);
  pollfd fds[2] = {{outPipe[0], POLLIN, 0}, {errPipe[0], POLLIN, 0}};
  int open = 2;
  auto deadline = start + std::chrono::milliseconds(static_cast<int64_t>(timeoutSeconds * 1000));
  char buf[65536];
  while (open > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      kill(-pid, SIGKILL);
      r.timedOut = true;
      break;
    }
    int n = poll(fds, 2, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (n < 0 && errno != EINTR)
      break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(got));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0)
      close(f.fd);
  int status = 0;
  rusage usage{};
  if (r.timedOut) {
    wait4(pid, &status, 0, &usage);
  } else {
    // Output closed; the child may still be running (it closed its pipes): enforce the limit.
    while (true) {
      pid_t w = wait4(pid, &status, WNOHANG, &usage);
      if (w == pid)
        break;
      if (std::chrono::steady_clock::now() >= deadline) {
        kill(-pid, SIGKILL);
        wait4(pid, &status, 0, &usage);
        r.timedOut = true;
        break;
      }
      usleep(2000);
    }
  }
  r.wallMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  auto ms = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) * 1e3 + tv.tv_usec * 1e-3; };
  r.cpuMs = ms(usage.ru_utime) + ms(usage.ru_stime);
  if (!r.timedOut) {
    if (WIFEXITED(status))
      r.exitCode = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
      r.signal = WTERMSIG(status);
  } else {
    r.signal = SIGKILL;
  }
  return r;
}

} // namespace dynqual::run
