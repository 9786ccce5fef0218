// dynqual-exec: runs one compiled program (.dqp) on a device, in its own process.
//
// This binary links only the MLIR-free runtime and the tensor file I/O: a crash, trap or hang here
// is reported by the parent as a failed row, never a crashed harness. With --reps it also takes
// the timing samples of the arm protocol (docs/commands/exec.md), so correctness and timing run
// the same program through the same code.
#include "dq/runtime/Device.h"
#include "dq/runtime/Error.h"
#include "dq/runtime/ProgramIO.h"
#include "dq/runtime/Runtime.h"
#include "dynqual/exec/FaultInjection.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/run/TensorBridge.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>

namespace {

/// Exit codes: 0 ran, 1 the run failed (trap, bad input, runtime error), 2 usage error.
constexpr int kRunFailed = 1;
/// Version of the arm protocol this binary speaks (flags and JSON fields; docs/commands/exec.md).
/// 2 added --clock; 3 added modelled_samples_ms.
constexpr int kArmProtocol = 3;

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

nlohmann::json countersJson(const dq::rt::Counters& c) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : c.items())
    j[name] = value;
  return j;
}

/// User + system CPU seconds of this process so far.
double cpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto sec = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec * 1e-6; };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

/// The clock timing samples are read from (docs/commands/exec.md).
enum class TimingClock { Wall, ThreadCpu };

/// Milliseconds on `clock`: steady_clock for wall time; CLOCK_THREAD_CPUTIME_ID (CPU time this
/// thread was scheduled, so time spent preempted by other processes is not counted) for
/// thread-cpu. The runtime is single-threaded on sim, so the thread's CPU time is all its work.
double nowMs(TimingClock clock) {
  if (clock == TimingClock::Wall)
    return std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch()).count();
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

/// Spins for `us` microseconds on `clock`: the injected slowdown of the gate's own tests. Spinning
/// on the timing clock makes the injected work the same share of every sample whichever clock is used.
void busyWait(double us, TimingClock clock) {
  if (us <= 0)
    return;
  double until = nowMs(clock) + us / 1000.0;
  while (nowMs(clock) < until) {
  }
}

struct Timing {
  int reps = 0;
  int warmup = 1;
  double minSampleMs = 1.0;
  double busyWaitUs = 0;
  /// Injection modes (docs/commands/ab.md, --inject-slowdown): each timed run spins with
  /// probability busyFraction (tail), or each sample draws its spin uniformly from [0, 2 busyWaitUs]
  /// (spread: the same mean, a wider spread); busySeed seeds both draws.
  double busyFraction = 1.0;
  bool busySpread = false;
  uint64_t busySeed = 1;
  TimingClock clock = TimingClock::Wall;
};

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"dynqual-exec: run a compiled dynqual program (.dqp) on a device.\n"
               "Reads inputs from TensorProto .pb files, writes output_N.pb files and prints one\n"
               "JSON object (outputs, counters, timings) on stdout. With --reps N it then takes N\n"
               "timing samples, each the mean of k back-to-back runs lasting at least\n"
               "--min-sample-ms. Exit: 0 ran, 1 run failed, 2 usage."};
  std::string programPath, device = "sim", outputDir;
  std::vector<std::string> inputs;
  Timing timing;
  bool printProtocol = false;
  app.add_flag("--protocol-version", printProtocol, "print the arm protocol version and exit");
  app.add_option("program", programPath, "program artifact (.dqp; sidecar .dqp.bin beside it)");
  app.add_option("--input", inputs, "input_N.pb files in input order")->expected(0, -1);
  app.add_option("--output-dir", outputDir, "folder for output_N.pb files (created)");
  app.add_option("--device", device, "device to run on")->check(CLI::IsMember(dq::rt::availableDevices()));
  app.add_option("--reps", timing.reps, "timing samples to take after the checked run (0 = none)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--warmup", timing.warmup, "discarded runs before the samples")->check(CLI::NonNegativeNumber);
  app.add_option("--min-sample-ms", timing.minSampleMs, "shortest batch of runs one sample may time, ms")
      ->check(CLI::PositiveNumber);
  app.add_option("--busy-wait-us", timing.busyWaitUs,
                 "add this many microseconds of busy work to every timed run (slowdown injection)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--busy-fraction", timing.busyFraction,
                 "spin --busy-wait-us after a timed run only with this probability, drawn per run (tail injection)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_flag("--busy-spread", timing.busySpread,
               "draw each sample's spin per run uniformly from [0, 2 x --busy-wait-us] (spread injection: same mean)");
  app.add_option("--busy-seed", timing.busySeed, "seed of the --busy-fraction and --busy-spread draws");
  app.add_option("--clock", timing.clock,
                 "clock of the timing samples: wall (steady clock) or thread-cpu (CPU time of the running "
                 "thread; excludes time preempted by other processes)")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, TimingClock>{{"wall", TimingClock::Wall}, {"thread-cpu", TimingClock::ThreadCpu}}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2; // CLI11's own codes (105, 106, ...) are not ours
  }
  if (printProtocol) {
    std::cout << kArmProtocol << "\n";
    return 0;
  }
  if (programPath.empty() || outputDir.empty()) {
    std::cerr << "dynqual-exec: a program and --output-dir are required (see --help)\n";
    return 2;
  }
  dynqual::exec::applyFault(dynqual::exec::FaultStage::Run, programPath);

  nlohmann::json result;
  try {
    auto session0 = Clock::now();
    dq::rt::Program program = dq::rt::readProgram(programPath);
    std::unique_ptr<dq::rt::Device> dev = dq::rt::createDevice(device);
    std::vector<dq::rt::HostTensor> hostInputs;
    for (const auto& in : inputs)
      hostInputs.push_back(dynqual::run::toHostTensor(dynqual::onnxio::readTensorFile(in)));
    double sessionMs = msSince(session0);
    dq::rt::RunOptions options;
    options.programName = programPath;
    auto first0 = Clock::now();
    dq::rt::RunResult run = dq::rt::runProgram(program, *dev, hostInputs, options);
    double firstInferMs = msSince(first0);
    std::filesystem::create_directories(outputDir);
    nlohmann::json outs = nlohmann::json::array();
    for (size_t i = 0; i < run.outputs.size(); ++i) {
      auto file = std::filesystem::path(outputDir) / ("output_" + std::to_string(i) + ".pb");
      std::string name = i < program.outputs.size() ? program.outputs[i].name : "";
      dynqual::onnxio::writeTensorFile(file, dynqual::run::fromHostTensor(run.outputs[i]), name);
      outs.push_back(file.string());
    }
    result = {{"protocol", kArmProtocol},
              {"ok", true},
              {"runner", "dynqual-exec"},
              {"version", program.compilerVersion},
              {"device", dev->name()},
              {"outputs", outs},
              {"counters", countersJson(run.counters)},
              {"execute_ms", run.executeMs},
              {"total_ms", run.totalMs},
              {"session_ms", sessionMs},
              {"first_infer_ms", firstInferMs}};

    if (timing.reps > 0) {
      std::mt19937_64 busyRng(timing.busySeed);
      std::uniform_real_distribution<double> unit(0.0, 1.0);
      double spinUs = timing.busyWaitUs; // this sample's spin per run (redrawn per sample under --busy-spread)
      bool timed = false;                // warm-up runs spin the plain amount
      uint64_t modelledNs = 0;           // the modelled device time of this sample's runs
      auto once = [&] {
        modelledNs += dq::rt::runProgram(program, *dev, hostInputs, options).counters.modelledDeviceNs;
        if (!timed || timing.busyFraction >= 1.0 || unit(busyRng) < timing.busyFraction)
          busyWait(spinUs, timing.clock);
      };
      double fastestMs = firstInferMs;
      for (int i = 0; i < timing.warmup; ++i) {
        double t = nowMs(timing.clock);
        once();
        fastestMs = std::min(fastestMs, nowMs(timing.clock) - t);
      }
      // Batch enough runs that one sample lasts minSampleMs, so clock resolution never dominates;
      // sized on the fastest run seen, so that a batch of faster runs still lasts that long.
      int k = fastestMs > 0 ? std::max(1, static_cast<int>(std::ceil(timing.minSampleMs / fastestMs))) : 1000;
      nlohmann::json samples = nlohmann::json::array(), modelled = nlohmann::json::array();
      double cpu0 = cpuSeconds();
      auto wall0 = Clock::now();
      timed = true;
      for (int r = 0; r < timing.reps; ++r) {
        if (timing.busySpread)
          spinUs = 2 * timing.busyWaitUs * unit(busyRng);
        double t = nowMs(timing.clock);
        modelledNs = 0;
        for (int i = 0; i < k; ++i)
          once();
        samples.push_back((nowMs(timing.clock) - t) / k);
        // Not scaled by the busy work: the driver applies an injected shift to the modelled time.
        modelled.push_back(static_cast<double>(modelledNs) / k / 1e6);
      }
      double wallS = msSince(wall0) / 1000.0;
      // docs/metrics/cpu-percent.md; a run shorter than the rusage resolution reads as 0 %.
      result["cpu_percent"] = wallS > 0 ? 100.0 * std::max(cpuSeconds() - cpu0, 0.0) / wallS : 0.0;
      result["samples_ms"] = samples;
      result["modelled_samples_ms"] = modelled;
      result["iterations_per_sample"] = k;
      result["warmup"] = timing.warmup;
      result["clock"] = timing.clock == TimingClock::Wall ? "wall" : "thread-cpu";
      result["busy_wait_us"] = timing.busyWaitUs;
      if (timing.busyFraction < 1.0)
        result["busy_fraction"] = timing.busyFraction;
      if (timing.busySpread)
        result["busy_spread"] = true;
    }
    std::cout << result.dump() << "\n";
    return 0;
  } catch (const std::exception& e) {
    result = {{"protocol", kArmProtocol}, {"ok", false}, {"error", e.what()}};
    std::cout << result.dump() << "\n";
    std::cerr << "dynqual-exec: " << e.what() << "\n";
    return kRunFailed;
  }
}
