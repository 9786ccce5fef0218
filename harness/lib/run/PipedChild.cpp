#include "dynqual/run/PipedChild.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace dynqual::run {

namespace {

constexpr size_t kStderrKeep = 64 * 1024;

using Clock = std::chrono::steady_clock;

int msLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left, 1000));
}

Clock::time_point deadlineAfter(double seconds) {
  return Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(std::ceil(seconds * 1000)));
}

} // namespace

PipedChild::PipedChild(const std::vector<std::string>& argv, int cpu) {
  if (argv.empty())
    throw std::runtime_error("PipedChild: empty argv");
  std::vector<char*> args;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int inPipe[2], outPipe[2], errPipe[2];
  if (pipe2(inPipe, O_CLOEXEC) != 0)
    throw std::runtime_error(argv[0] + ": pipe: " + std::strerror(errno));
  if (pipe2(outPipe, O_CLOEXEC) != 0 || pipe2(errPipe, O_CLOEXEC) != 0) {
    int e = errno;
    close(inPipe[0]);
    close(inPipe[1]);
    throw std::runtime_error(argv[0] + ": pipe: " + std::strerror(e));
  }
  // A child that ends early must not kill the driver with SIGPIPE when it writes a command.
  signal(SIGPIPE, SIG_IGN);
  pid_ = fork();
  if (pid_ < 0) {
    int e = errno;
    for (int fd : {inPipe[0], inPipe[1], outPipe[0], outPipe[1], errPipe[0], errPipe[1]})
      close(fd);
    throw std::runtime_error(argv[0] + ": fork: " + std::strerror(e));
  }
  if (pid_ == 0) {
    setpgid(0, 0);
    if (cpu >= 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
      if (sched_setaffinity(0, sizeof set, &set) != 0) {
        dprintf(errPipe[1], "cannot bind to CPU %d: %s\n", cpu, std::strerror(errno));
        _exit(126);
      }
    }
    dup2(inPipe[0], 0);
    dup2(outPipe[1], 1);
    dup2(errPipe[1], 2);
    signal(SIGPIPE, SIG_DFL);
    execv(args[0], args.data());
    dprintf(2, "exec %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  close(inPipe[0]);
  close(outPipe[1]);
  close(errPipe[1]);
  in_ = inPipe[1];
  out_ = outPipe[0];
  err_ = errPipe[0];
}

PipedChild::~PipedChild() {
  if (!reaped_ && pid_ > 0) {
    kill(-pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  for (int fd : {in_, out_, err_})
    if (fd >= 0)
      close(fd);
}

bool PipedChild::writeLine(const std::string& line) {
  if (in_ < 0)
    return false;
  std::string text = line + "\n";
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(in_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

void PipedChild::drainStderr(int waitMs) {
  if (err_ < 0)
    return;
  pollfd p{err_, POLLIN, 0};
  char buf[4096];
  while (poll(&p, 1, waitMs) > 0) {
    ssize_t n = read(err_, buf, sizeof buf);
    if (n <= 0) {
      close(err_);
      err_ = -1;
      return;
    }
    errBuf_.append(buf, static_cast<size_t>(n));
    if (errBuf_.size() > 2 * kStderrKeep)
      errBuf_.erase(0, errBuf_.size() - kStderrKeep);
    waitMs = 0;
  }
}

bool PipedChild::readLine(std::string& line, double timeoutSeconds, bool& timedOut) {
  line.clear();
  timedOut = false;
  auto deadline = deadlineAfter(timeoutSeconds);
  char buf[4096];
  for (;;) {
    size_t nl = outBuf_.find('\n');
    if (nl != std::string::npos) {
      line = outBuf_.substr(0, nl);
      outBuf_.erase(0, nl + 1);
      return true;
    }
    if (out_ < 0)
      return false;
    // stderr is read as well, so a child that writes much of it never blocks on a full pipe.
    pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
    int left = msLeft(deadline);
    if (left == 0) {
      timedOut = true;
      return false;
    }
    int n = poll(fds, err_ >= 0 ? 2 : 1, left);
    if (n < 0 && errno != EINTR)
      return false;
    if (n <= 0)
      continue;
    if (err_ >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)))
      drainStderr(0);
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t got = read(out_, buf, sizeof buf);
      if (got > 0) {
        outBuf_.append(buf, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        close(out_);
        out_ = -1;
      }
    }
  }
}

std::string PipedChild::wait(double timeoutSeconds) {
  if (reaped_)
    return end_;
  if (in_ >= 0) {
    close(in_);
    in_ = -1;
  }
  auto deadline = deadlineAfter(timeoutSeconds);
  int status = 0;
  for (;;) {
    pid_t got = waitpid(pid_, &status, WNOHANG);
    if (got == pid_)
      break;
    if (got < 0 && errno != EINTR) {
      end_ = std::string("cannot be waited for: ") + std::strerror(errno);
      reaped_ = true;
      return end_;
    }
    if (msLeft(deadline) == 0) {
      kill(-pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      drainStderr(0);
      end_ = "did not end within " + std::to_string(static_cast<int>(std::ceil(timeoutSeconds))) + " s (killed)";
      reaped_ = true;
      return end_;
    }
    drainStderr(10);
    if (err_ < 0)
      usleep(10000);
  }
  drainStderr(0);
  reaped_ = true;
  if (WIFEXITED(status))
    end_ = WEXITSTATUS(status) == 0 ? "" : "exited with status " + std::to_string(WEXITSTATUS(status));
  else if (WIFSIGNALED(status))
    end_ = "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  else
    end_ = "ended abnormally";
  return end_;
}

std::string PipedChild::lastStderrLine() {
  drainStderr(0);
  size_t end = errBuf_.find_last_not_of("\n\r ");
  if (end == std::string::npos)
    return "";
  size_t start = errBuf_.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return errBuf_.substr(start, end - start + 1);
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

} // namespace dynqual::run
