#pragma once
// The persistent worker's time limit per stage: a compile or a run that outlives its limit ends
// the worker process, which its coordinator then treats as a hang of that case.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace dynqual::fuzz {

/// Exit status of a worker whose stage outlived its limit (as timeout(1) uses).
inline constexpr int kStageTimeoutExit = 124;
/// Exit status of a worker whose CPU reference outlived its limit: the case is invalid (the
/// reference cannot run it), not a hang of the compiled program.
inline constexpr int kReferenceTimeoutExit = 125;

/// A thread that watches one stage at a time. arm() starts the clock for a stage; if disarm()
/// does not come within the limit (checked every 50 ms), the process writes "dynqual fuzz-worker: WHAT timed out
/// after N s" to stderr and ends with _exit(kStageTimeoutExit): a hung compile cannot be
/// interrupted any other way, and nothing the stage held may be trusted afterwards.
class StageWatchdog {
public:
  StageWatchdog();
  ~StageWatchdog();
  StageWatchdog(const StageWatchdog&) = delete;
  StageWatchdog& operator=(const StageWatchdog&) = delete;

  /// Starts watching `what` (one line) for `seconds` (> 0; <= 0 watches nothing); past it the
  /// process ends with `exitCode`.
  void arm(double seconds, const std::string& what, int exitCode = kStageTimeoutExit);
  /// The stage ended in time.
  void disarm();

private:
  void watch();
  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false, stop_ = false;
  std::chrono::steady_clock::time_point deadline_;
  double seconds_ = 0;
  int exitCode_ = kStageTimeoutExit;
  std::string what_;
  std::thread thread_;
};

} // namespace dynqual::fuzz
