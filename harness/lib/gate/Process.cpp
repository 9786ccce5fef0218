#include "Process.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace dynqual::gate::detail {

std::string ProcessResult::describe(double timeoutSeconds) const {
  if (!started)
    return "could not start: " + error;
  if (timedOut)
    return "timed out after " + std::to_string(static_cast<long>(timeoutSeconds)) + " s";
  if (signal != 0)
    return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exited with status " + std::to_string(exitCode);
}

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> mergedEnvironment(const ProcessSpec& spec) {
  std::map<std::string, std::string> vars;
  std::vector<std::string> order;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq == std::string::npos)
      continue;
    std::string k = kv.substr(0, eq);
    if (!vars.count(k))
      order.push_back(k);
    vars[k] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : spec.env) {
    if (!v) {
      vars.erase(k);
      continue;
    }
    if (!vars.count(k))
      order.push_back(k);
    vars[k] = *v;
  }
  std::vector<std::string> out;
  for (const auto& k : order)
    if (auto it = vars.find(k); it != vars.end())
      out.push_back(k + "=" + it->second);
  return out;
}

void finish(ProcessResult& r, int status) {
  if (WIFEXITED(status))
    r.exitCode = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    r.signal = WTERMSIG(status);
}

} // namespace

ProcessResult runProcess(const ProcessSpec& spec) {
  ProcessResult r;
  if (spec.argv.empty()) {
    r.error = "empty command";
    return r;
  }
  const bool capture = spec.appendTo.empty();
  int outPipe[2] = {-1, -1}, errPipe[2] = {-1, -1}, logFd = -1;
  auto closeAll = [&] {
    for (int* fd : {&outPipe[0], &outPipe[1], &errPipe[0], &errPipe[1], &logFd})
      if (*fd >= 0) {
        close(*fd);
        *fd = -1;
      }
  };
  if (capture) {
    if (pipe2(outPipe, O_CLOEXEC) != 0 || pipe2(errPipe, O_CLOEXEC) != 0) {
      r.error = std::string("pipe: ") + std::strerror(errno);
      closeAll();
      return r;
    }
  } else {
    logFd = open(spec.appendTo.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (logFd < 0) {
      r.error = "cannot open " + spec.appendTo.string() + ": " + std::strerror(errno);
      return r;
    }
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, capture ? outPipe[1] : logFd, 1);
  posix_spawn_file_actions_adddup2(&actions, capture ? errPipe[1] : logFd, 2);
  if (!spec.cwd.empty())
    posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
  // Only a limited child gets its own process group (so the whole tree can be killed); an
  // unlimited one stays in ours and receives the terminal's Ctrl-C with us.
  if (spec.timeoutSeconds > 0) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&attr, 0);
  }
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, flags);

  std::vector<char*> args;
  for (const auto& a : spec.argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> envStrings = mergedEnvironment(spec);
  std::vector<char*> envp;
  for (auto& e : envStrings)
    envp.push_back(e.data());
  envp.push_back(nullptr);

  auto start = Clock::now();
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    r.error = spec.argv[0] + ": " + std::strerror(rc);
    closeAll();
    return r;
  }
  r.started = true;
  if (outPipe[1] >= 0) {
    close(outPipe[1]);
    outPipe[1] = -1;
  }
  if (errPipe[1] >= 0) {
    close(errPipe[1]);
    errPipe[1] = -1;
  }
  if (logFd >= 0) {
    close(logFd);
    logFd = -1;
  }

  const bool limited = spec.timeoutSeconds > 0;
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
        ssize_t got = read(fds[i].fd, buf, sizeof buf);
        if (got > 0) {
          (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(got));
        } else if (got == 0 || errno != EINTR) {
          fds[i].fd = -1;
          --open;
        }
      }
    }
    closeAll();
  }

  int status = 0;
  if (limited && !r.timedOut) {
    while (true) {
      pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == pid)
        break;
      if (w < 0 && errno != EINTR)
        break;
      if (Clock::now() >= deadline) {
        killGroup();
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  if (!limited || r.timedOut) {
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  finish(r, status);
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

} // namespace dynqual::gate::detail
