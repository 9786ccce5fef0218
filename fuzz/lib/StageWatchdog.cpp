#include "dynqual/fuzz/StageWatchdog.h"

#include <unistd.h>

namespace dynqual::fuzz {

StageWatchdog::StageWatchdog() : thread_([this] { watch(); }) {
}

StageWatchdog::~StageWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

// arm() and disarm() never wake the watching thread: a wake-up per stage costs a context switch
// each, and on a busy machine the worker then waits for the CPU again (thousands per second).
// The thread looks every kPoll instead, so a limit is enforced up to kPoll late.
void StageWatchdog::arm(double seconds, const std::string& what, int exitCode) {
  std::lock_guard<std::mutex> lock(mu_);
  exitCode_ = exitCode;
  armed_ = seconds > 0;
  seconds_ = seconds;
  what_ = what;
  deadline_ = std::chrono::steady_clock::now() + std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6));
}

void StageWatchdog::disarm() {
  std::lock_guard<std::mutex> lock(mu_);
  armed_ = false;
}

void StageWatchdog::watch() {
  constexpr auto kPoll = std::chrono::milliseconds(50);
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, kPoll, [this] { return stop_; })) {
    if (armed_ && std::chrono::steady_clock::now() >= deadline_) {
      std::string line =
          "dynqual fuzz-worker: " + what_ + " timed out after " + std::to_string(static_cast<int>(seconds_)) + " s\n";
      ssize_t ignored = write(2, line.data(), line.size());
      (void)ignored;
      _exit(exitCode_);
    }
  }
}

} // namespace dynqual::fuzz
