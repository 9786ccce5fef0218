#include "dynqual/fuzz/StageWatchdog.h"

#include <unistd.h>

namespace dynqual::fuzz {

StageWatchdog::StageWatchdog() : thread_([this] { watch(); }) {}

StageWatchdog::~StageWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void StageWatchdog::arm(double seconds, const std::string& what) {
  std::lock_guard<std::mutex> lock(mu_);
  armed_ = seconds > 0;
  seconds_ = seconds;
  what_ = what;
  deadline_ = std::chrono::steady_clock::now() +
              std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6));
  cv_.notify_all();
}

void StageWatchdog::disarm() {
  std::lock_guard<std::mutex> lock(mu_);
  armed_ = false;
}

void StageWatchdog::watch() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (!armed_) {
      cv_.wait(lock);
      continue;
    }
    if (cv_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_ && !stop_ &&
        std::chrono::steady_clock::now() >= deadline_) {
      std::string line = "dynqual fuzz-worker: " + what_ + " timed out after " +
                         std::to_string(static_cast<int>(seconds_)) + " s\n";
      ssize_t ignored = write(2, line.data(), line.size());
      (void)ignored;
      _exit(kStageTimeoutExit);
    }
  }
}

} // namespace dynqual::fuzz
