#include "dynqual/process/Process.h"
#include "Spawn.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace dynqual::process {

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
using detail::StartFailure;

void closeFd(int& fd) {
  if (fd >= 0)
    close(fd);
  fd = -1;
}

} // namespace

ProcessResult runProcess(const ProcessSpec& spec) {
  ProcessResult r;
  if (spec.argv.empty()) {
    r.error = "empty command";
    return r;
  }
  const bool capture = spec.appendTo.empty();
  const bool limited = spec.timeoutSeconds > 0;
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

  const detail::PreparedExec prepared(spec);

  auto start = Clock::now();
  pid_t pid = fork();
  if (pid < 0) {
    r.error = std::string("fork: ") + std::strerror(errno);
    closeAll();
    return r;
  }
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDONLY);
    detail::execChild(prepared, limited, devnull, capture ? outPipe[1] : logFd, capture ? errPipe[1] : logFd,
                      statusPipe[1]);
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
    r.error = detail::describeStartFailure(spec, failure);
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

} // namespace dynqual::process

namespace dynqual::process {

ProcessResult runChild(const std::vector<std::string>& argv, double timeoutSeconds, uint64_t memoryLimitBytes) {
  ProcessSpec spec;
  spec.argv = argv;
  spec.timeoutSeconds = timeoutSeconds;
  spec.memoryLimitBytes = memoryLimitBytes;
  return runProcess(spec);
}

int lastAllowedCpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0)
    return -1;
  for (int cpu = CPU_SETSIZE - 1; cpu >= 0; --cpu)
    if (CPU_ISSET(cpu, &set))
      return cpu;
  return -1;
}

} // namespace dynqual::process
