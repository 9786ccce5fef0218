#include "dynqual/process/ServedProcess.h"
#include "Spawn.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace dynqual::process {

namespace {

constexpr size_t kStderrKeep = 64 * 1024;

using Clock = std::chrono::steady_clock;

void closeFd(int& fd) {
  if (fd >= 0)
    close(fd);
  fd = -1;
}

/// write() of the whole buffer with SIGPIPE blocked in this thread: a child that died must
/// show as a failed write, not kill the caller.
bool writeAll(int fd, const std::string& data) {
  sigset_t pipeSet, old;
  sigemptyset(&pipeSet);
  sigaddset(&pipeSet, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipeSet, &old);
  size_t done = 0;
  bool ok = true;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      ok = false;
      if (errno == EPIPE) {
        timespec zero{};
        sigtimedwait(&pipeSet, nullptr, &zero); // consume the pending SIGPIPE
      }
      break;
    }
    done += static_cast<size_t>(n);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return ok;
}

void keepTail(std::string& s) {
  if (s.size() > kStderrKeep)
    s.erase(0, s.size() - kStderrKeep);
}

} // namespace

ServedProcess::~ServedProcess() {
  if (running())
    finish(1); // closing stdin ends a well-behaved child; a hung one is killed after a second
}

bool ServedProcess::start(const std::vector<std::string>& argv, uint64_t memoryLimitBytes, std::string& error) {
  ProcessSpec spec;
  spec.argv = argv;
  spec.memoryLimitBytes = memoryLimitBytes;
  return start(spec, error);
}

bool ServedProcess::start(const ProcessSpec& spec, std::string& error) {
  if (running()) {
    error = "a child is already running";
    return false;
  }
  if (spec.argv.empty()) {
    error = "empty command";
    return false;
  }
  const detail::PreparedExec prepared(spec);
  int inPipe[2], outPipe[2], errPipe[2];
  if (pipe2(inPipe, O_CLOEXEC) != 0) {
    error = spec.argv[0] + ": pipe: " + std::strerror(errno);
    return false;
  }
  if (pipe2(outPipe, O_CLOEXEC) != 0 || pipe2(errPipe, O_CLOEXEC) != 0) {
    error = spec.argv[0] + ": pipe: " + std::strerror(errno);
    close(inPipe[0]);
    close(inPipe[1]);
    return false;
  }
  pid_t pid = fork();
  if (pid < 0) {
    error = spec.argv[0] + ": fork: " + std::strerror(errno);
    for (int fd : {inPipe[0], inPipe[1], outPipe[0], outPipe[1], errPipe[0], errPipe[1]})
      close(fd);
    return false;
  }
  if (pid == 0)
    detail::execChild(prepared, true, inPipe[0], outPipe[1], errPipe[1], -1);
  close(inPipe[0]);
  close(outPipe[1]);
  close(errPipe[1]);
  pid_ = pid;
  in_ = inPipe[1];
  out_ = outPipe[0];
  errFd_ = errPipe[0];
  outBuf_.clear();
  errSinceRequest_.clear();
  errAll_.clear();
  killedAfterGrace_ = false;
  return true;
}

void ServedProcess::appendErr(const char* data, size_t n) {
  errSinceRequest_.append(data, n);
  keepTail(errSinceRequest_);
  errAll_.append(data, n);
  keepTail(errAll_);
}

void ServedProcess::drain(int timeoutMs) {
  pollfd fds[2] = {{out_, POLLIN, 0}, {errFd_, POLLIN, 0}};
  int n = poll(fds, 2, timeoutMs); // poll ignores negative descriptors
  if (n <= 0)
    return;
  char buf[65536];
  for (int i = 0; i < 2; ++i) {
    int& fd = i == 0 ? out_ : errFd_;
    if (fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
      continue;
    ssize_t got = read(fd, buf, sizeof buf);
    if (got > 0) {
      if (i == 0)
        outBuf_.append(buf, static_cast<size_t>(got));
      else
        appendErr(buf, static_cast<size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      closeFd(fd);
    }
  }
}

bool ServedProcess::writeLine(const std::string& line) {
  return running() && in_ >= 0 && writeAll(in_, line + "\n");
}

LineRead ServedProcess::readLine(std::string& line, double timeoutSeconds) {
  line.clear();
  auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(std::ceil(timeoutSeconds * 1000)));
  while (true) {
    if (auto nl = outBuf_.find('\n'); nl != std::string::npos) {
      line = outBuf_.substr(0, nl);
      outBuf_.erase(0, nl + 1);
      return LineRead::Line;
    }
    if (out_ < 0)
      return LineRead::Ended; // stdout closed: the child ended
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0)
      return LineRead::TimedOut;
    drain(static_cast<int>(std::min<int64_t>(left, 1000)));
  }
}

ServedReply ServedProcess::request(const std::string& line, double timeoutSeconds) {
  ServedReply r;
  auto start = Clock::now();
  errSinceRequest_.clear();
  auto elapsedMs = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); };
  if (!writeLine(line)) {
    r.wallMs = elapsedMs();
    return r;
  }
  LineRead got = readLine(r.line, timeoutSeconds);
  r.answered = got == LineRead::Line;
  r.timedOut = got == LineRead::TimedOut;
  r.wallMs = elapsedMs();
  return r;
}

ProcessResult ServedProcess::finish(double graceSeconds, bool timedOut) {
  ProcessResult r;
  if (!running())
    return r;
  r.started = true;
  closeFd(in_);
  int status = 0;
  rusage usage{};
  pid_t w = wait4(pid_, &status, WNOHANG, &usage);
  if (w != pid_) {
    // Still running (hung, exiting after its stdin closed, or closed stdout without exiting):
    // give it the grace to end on its own when it was not a timeout, reading its stderr meanwhile,
    // then kill the whole group.
    if (!timedOut) {
      auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(std::ceil(graceSeconds * 1000)));
      while (w != pid_ && Clock::now() < deadline) {
        if (errFd_ >= 0) {
          pollfd p{errFd_, POLLIN, 0};
          if (poll(&p, 1, 2) > 0) {
            char buf[4096];
            ssize_t got = read(errFd_, buf, sizeof buf);
            if (got > 0)
              appendErr(buf, static_cast<size_t>(got));
            else if (got == 0 || errno != EINTR)
              closeFd(errFd_);
          }
        } else {
          usleep(2000);
        }
        w = wait4(pid_, &status, WNOHANG, &usage);
      }
    }
    if (w != pid_) {
      kill(-pid_, SIGKILL);
      while (wait4(pid_, &status, 0, &usage) < 0 && errno == EINTR) {
      }
      if (!timedOut && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
        r.error = "killed after closing its output";
        killedAfterGrace_ = true;
      }
    }
  }
  // What is still in the pipes belongs to the last request. Non-blocking reads: a descendant
  // that outlived the child could hold the write ends open.
  char buf[65536];
  for (int* fd : {&errFd_, &out_}) {
    if (*fd >= 0)
      fcntl(*fd, F_SETFL, fcntl(*fd, F_GETFL) | O_NONBLOCK);
    while (*fd >= 0) {
      ssize_t got = read(*fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0) {
        closeFd(*fd);
        break;
      }
      if (fd == &errFd_)
        appendErr(buf, static_cast<size_t>(got));
    }
  }
  r.err = errSinceRequest_;
  r.timedOut = timedOut;
  if (timedOut) {
    r.signal = SIGKILL;
  } else if (WIFEXITED(status)) {
    r.exitCode = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  auto ms = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) * 1e3 + tv.tv_usec * 1e-3; };
  r.cpuMs = ms(usage.ru_utime) + ms(usage.ru_stime);
  pid_ = -1;
  return r;
}

std::string ServedProcess::lastStderrLine() {
  if (running() && errFd_ >= 0) {
    pollfd p{errFd_, POLLIN, 0};
    char buf[4096];
    while (errFd_ >= 0 && poll(&p, 1, 0) > 0) {
      ssize_t got = read(errFd_, buf, sizeof buf);
      if (got > 0)
        appendErr(buf, static_cast<size_t>(got));
      else if (got == 0 || errno != EINTR)
        closeFd(errFd_);
      p.fd = errFd_;
    }
  }
  size_t end = errAll_.find_last_not_of("\n\r ");
  if (end == std::string::npos)
    return "";
  size_t start = errAll_.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return errAll_.substr(start, end - start + 1);
}

} // namespace dynqual::process
