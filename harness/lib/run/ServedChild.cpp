#include "dynqual/run/ServedChild.h"
#include "MemoryLimit.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace dynqual::run {

namespace {

constexpr size_t kStderrKeep = 64 * 1024;

void closeFd(int& fd) {
  if (fd >= 0)
    close(fd);
  fd = -1;
}

/// write() of the whole buffer with SIGPIPE blocked in this thread: a child that died must
/// show as a failed request, not kill the caller.
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
        sigtimedwait(&pipeSet, nullptr, &zero);  // consume the pending SIGPIPE
      }
      break;
    }
    done += static_cast<size_t>(n);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return ok;
}

} // namespace

ServedChild::~ServedChild() {
  if (running())
    finish(false);
}

bool ServedChild::start(const std::vector<std::string>& argv, uint64_t memoryLimitBytes, std::string& error) {
  if (running()) {
    error = "a child is already running";
    return false;
  }
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
  int inPipe[2], outPipe[2], errPipe[2];
  if (pipe2(inPipe, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  if (pipe2(outPipe, O_CLOEXEC) != 0 || pipe2(errPipe, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    close(inPipe[0]);
    close(inPipe[1]);
    return false;
  }
  pid_t pid = fork();
  if (pid < 0) {
    error = std::string("fork: ") + std::strerror(errno);
    for (int fd : {inPipe[0], inPipe[1], outPipe[0], outPipe[1], errPipe[0], errPipe[1]})
      close(fd);
    return false;
  }
  if (pid == 0) {
    setpgid(0, 0);
    if (memoryLimitBytes > 0 && !asanLimit) {
      rlimit lim{static_cast<rlim_t>(memoryLimitBytes), static_cast<rlim_t>(memoryLimitBytes)};
      setrlimit(RLIMIT_AS, &lim);
    }
    dup2(inPipe[0], 0);
    dup2(outPipe[1], 1);
    dup2(errPipe[1], 2);
    if (asanLimit)
      execve(args[0], args.data(), envp.data());
    else
      execv(args[0], args.data());
    dprintf(2, "exec %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  close(inPipe[0]);
  close(outPipe[1]);
  close(errPipe[1]);
  pid_ = pid;
  in_ = inPipe[1];
  out_ = outPipe[0];
  errFd_ = errPipe[0];
  outBuf_.clear();
  err_.clear();
  return true;
}

void ServedChild::drain(int timeoutMs) {
  pollfd fds[2] = {{out_, POLLIN, 0}, {errFd_, POLLIN, 0}};
  int n = poll(fds, 2, timeoutMs);
  if (n <= 0)
    return;
  char buf[65536];
  for (int i = 0; i < 2; ++i) {
    int& fd = i == 0 ? out_ : errFd_;
    if (fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
      continue;
    ssize_t got = read(fd, buf, sizeof buf);
    if (got > 0) {
      std::string& to = i == 0 ? outBuf_ : err_;
      to.append(buf, static_cast<size_t>(got));
      if (i == 1 && err_.size() > kStderrKeep)
        err_.erase(0, err_.size() - kStderrKeep);
    } else if (got == 0 || errno != EINTR) {
      closeFd(fd);
    }
  }
}

ServedReply ServedChild::request(const std::string& line, double timeoutSeconds) {
  ServedReply r;
  auto start = std::chrono::steady_clock::now();
  err_.clear();
  auto elapsedMs = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  if (!running() || !writeAll(in_, line + "\n")) {
    r.wallMs = elapsedMs();
    return r;
  }
  auto deadline = start + std::chrono::milliseconds(static_cast<int64_t>(timeoutSeconds * 1000));
  while (true) {
    if (auto nl = outBuf_.find('\n'); nl != std::string::npos) {
      r.line = outBuf_.substr(0, nl);
      outBuf_.erase(0, nl + 1);
      r.answered = true;
      break;
    }
    if (out_ < 0)
      break;  // stdout closed: the child ended
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      r.timedOut = true;
      break;
    }
    // errFd_ may close first (the child closed stderr); poll ignores negative descriptors.
    drain(static_cast<int>(std::min<int64_t>(left, 1000)));
  }
  r.wallMs = elapsedMs();
  return r;
}

ChildResult ServedChild::finish(bool timedOut) {
  ChildResult r;
  if (!running())
    return r;
  r.started = true;
  closeFd(in_);
  int status = 0;
  rusage usage{};
  pid_t w = wait4(pid_, &status, WNOHANG, &usage);
  if (w != pid_) {
    // Still running (hung, exiting after its stdin closed, or closed stdout without exiting):
    // give it a second to end on its own when it was not a timeout, then kill the whole group.
    if (!timedOut)
      for (int i = 0; i < 500 && w != pid_; ++i) {
        usleep(2000);
        w = wait4(pid_, &status, WNOHANG, &usage);
      }
    if (w != pid_) {
      kill(-pid_, SIGKILL);
      wait4(pid_, &status, 0, &usage);
      if (!timedOut && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        r.error = "killed after closing its output";
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
      if (fd == &errFd_) {
        err_.append(buf, static_cast<size_t>(got));
        if (err_.size() > kStderrKeep)
          err_.erase(0, err_.size() - kStderrKeep);
      }
    }
  }
  r.err = err_;
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

} // namespace dynqual::run
