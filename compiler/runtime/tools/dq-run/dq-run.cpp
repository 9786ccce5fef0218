// dq-run: runs one compiled program (.dqp) on a device with .npy inputs and outputs.
//
// The device-side tool: it links only the runtime (no MLIR, no protobuf, no JSON or CLI library),
// so it builds on a GPU machine that has a C++ compiler and nvcc or hipcc and nothing else.
//
//   dq-run PROGRAM.dqp [--device sim|hip] --input a.npy ... --output-dir DIR [--reps N] [--warmup W]
//          [--busy-us US [--busy-fraction F] [--busy-spread]] [--busy-seed N]
//          [--alternate OTHER.dqp [--alternate-busy-us US [--alternate-busy-fraction F]
//          [--alternate-busy-spread]] [--alternate-first]]
//   dq-run PROGRAM.dqp [--device sim|hip] --input a.npy ... --output-dir DIR [--warmup W] [--busy-us US ...] --serve
//
// Runs the program once (outputs written to DIR/output_K.npy, K = output index, and the counters
// of that run reported), then W untimed and N timed repetitions. Prints one JSON line on stdout:
//   {"program":..., "device":..., "gpu":..., "outputs":[{"name","dtype","dims","file"}...],
//    "counters":{...}, "session_ms":S, "first_infer_ms":F, "first_execute_ms":E, "warmup":W,
//    "reps":N, "execute_ms":{"median","min","max","samples":[...]}, "total_ms":{...},
//    "cpu_percent":C, "peak_host_bytes":P}
// Timings are wall-clock milliseconds (RunResult: executeMs = first instruction to Return plus the
// final synchronize; totalMs adds input upload and output download). session_ms: read the program
// and inputs and create the device (on a GPU this includes creating the context); first_infer_ms:
// the first runProgram call, first_execute_ms its executeMs; cpu_percent: 100 * (user + system
// CPU s) / wall s over the N timed runs (docs/metrics/cpu-percent.md; 0 without timed runs);
// peak_host_bytes: ru_maxrss of this process at the end, bytes (docs/metrics/peak-memory.md).
// --busy-us US spins US microseconds of wall time after each timed run and adds the spun time to
// that run's execute_ms and total_ms: the injected slowdown of the gate's self-test on a device
// machine (docs/commands/ab.md, "On a GPU machine"). --busy-fraction F spins only after a random
// share F of the timed runs, drawn per run (a tail); --busy-spread spins a random amount per run,
// uniform on [0, 2 US] (the same mean, a wider spread); --busy-seed N seeds both draws.
// --alternate-busy-fraction and --alternate-busy-spread do the same for OTHER's spin.
// --alternate OTHER.dqp loads a second program of the same inputs into the same process and
// device and times the two in alternation: timed pair i runs PROGRAM then OTHER when i is even and
// OTHER then PROGRAM when odd (--alternate-first swaps the two), W warm-up pairs first. Machine
// noise that comes and goes then hits both alike, and the process's own speed cancels out of their
// ratio (the device gate's sample interleaving, docs/commands/ab.md). OTHER's samples are in
// "alternate": {"program", "execute_ms", "total_ms"}; --alternate-busy-us spins after each of its
// timed runs as --busy-us does for PROGRAM.
// --serve keeps the process, its device and its program for line-per-request sampling: after the
// first run and W warm-up runs it prints {"ready":true,"program":...,"device":...,"counters":{...}},
// then answers each line "run" on stdin with one timed run, {"execute_ms":E,"total_ms":T} (the
// --busy-us spin included), until "quit" or the end of stdin. The device gate uses it when the two
// arms have different runtimes, so one process cannot hold both: two serving processes, one per
// runtime, bound to one CPU and sampled in alternation (docs/commands/ab.md, "On a GPU machine").
// Exit codes: 0 ran, 1 the run failed (message on stderr), 2 usage or input error.
#include "dq/runtime/Device.h"
#include "dq/runtime/Error.h"
#include "dq/runtime/Npy.h"
#include "dq/runtime/ProgramIO.h"
#include "dq/runtime/Runtime.h"
#include "../common/JsonText.h"
#ifdef DQ_WITH_HIP
#include "dq/runtime/hip/HipDevice.h"
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <chrono>
#include <sys/resource.h>
#include <sys/stat.h>
#include <vector>

namespace {

using namespace dq::rt;
using dq::tools::jsonNumber;
using dq::tools::jsonString;

constexpr int kRunFailed = 1, kUsage = 2;

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

/// User + system CPU seconds of this process so far.
double cpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto sec = [](const timeval &tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec * 1e-6; };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

/// ru_maxrss of this process in bytes (Linux reports KiB).
long long peakHostBytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<long long>(u.ru_maxrss) * 1024;
}

int usage(const std::string &problem) {
  std::cerr << "dq-run: " << problem << "\n"
            << "usage: dq-run PROGRAM.dqp [--device sim|hip] --input FILE.npy ... --output-dir DIR "
               "[--reps N] [--warmup W] [--busy-us US [--busy-fraction F] [--busy-spread]] [--busy-seed N] "
               "[--alternate OTHER.dqp [--alternate-busy-us US [--alternate-busy-fraction F] "
               "[--alternate-busy-spread]] [--alternate-first]] [--serve]\n";
  return kUsage;
}

bool parseCount(const std::string &s, int &out) {
  char *end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end || v < 0 || v > 1000000) return false;
  out = static_cast<int>(v);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::string programPath, device = "sim", outDir;
  std::vector<std::string> inputs;
  int reps = 0, warmup = 1, busyUs = 0, altBusyUs = 0, busySeed = 1;
  double busyFraction = 1, altBusyFraction = 1;
  bool busySpread = false, altBusySpread = false;
  std::string altPath;
  bool altFirst = false, serve = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string &dst) {
      if (i + 1 >= argc) return false;
      dst = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--device") {
      if (!value(device)) return usage("--device needs a value");
    } else if (a == "--input") {
      if (!value(v)) return usage("--input needs a file");
      inputs.push_back(v);
    } else if (a == "--output-dir") {
      if (!value(outDir)) return usage("--output-dir needs a folder");
    } else if (a == "--reps") {
      if (!value(v) || !parseCount(v, reps)) return usage("--reps needs a count >= 0");
    } else if (a == "--warmup") {
      if (!value(v) || !parseCount(v, warmup)) return usage("--warmup needs a count >= 0");
    } else if (a == "--busy-us") {
      if (!value(v) || !parseCount(v, busyUs)) return usage("--busy-us needs a count of microseconds >= 0");
    } else if (a == "--alternate") {
      if (!value(altPath)) return usage("--alternate needs a program");
    } else if (a == "--alternate-busy-us") {
      if (!value(v) || !parseCount(v, altBusyUs))
        return usage("--alternate-busy-us needs a count of microseconds >= 0");
    } else if (a == "--busy-fraction" || a == "--alternate-busy-fraction") {
      double &f = a == "--busy-fraction" ? busyFraction : altBusyFraction;
      char *end = nullptr;
      if (!value(v) || (f = std::strtod(v.c_str(), &end), *end) || !(f >= 0 && f <= 1))
        return usage(a + " needs a share in [0, 1]");
    } else if (a == "--busy-spread") {
      busySpread = true;
    } else if (a == "--alternate-busy-spread") {
      altBusySpread = true;
    } else if (a == "--busy-seed") {
      if (!value(v) || !parseCount(v, busySeed)) return usage("--busy-seed needs a count >= 0");
    } else if (a == "--alternate-first") {
      altFirst = true;
    } else if (a == "--serve") {
      serve = true;
    } else if (a == "-h" || a == "--help") {
      usage("runs a .dqp program on a device");
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      return usage("unknown option " + a);
    } else if (programPath.empty()) {
      programPath = a;
    } else {
      return usage("unexpected argument " + a);
    }
  }
  if (programPath.empty()) return usage("no program given");
  if (outDir.empty()) return usage("--output-dir is required");
  if (serve && (!altPath.empty() || reps > 0))
    return usage("--serve takes its timed runs from stdin: give no --alternate and no --reps");

  Program program, altProgram;
  std::vector<HostTensor> tensors;
  std::unique_ptr<Device> dev;
  const Clock::time_point session0 = Clock::now();
  try {
    program = readProgram(programPath);
    for (const std::string &f : inputs)
      tensors.push_back(readNpy(f));
    validateInputs(program, tensors);
    if (!altPath.empty()) {
      altProgram = readProgram(altPath);
      validateInputs(altProgram, tensors);
    }
    dev = createDevice(device);
  } catch (const std::exception &e) {
    std::cerr << "dq-run: " << e.what() << "\n";
    return kUsage;
  }
  const double sessionMs = msSince(session0);
  ::mkdir(outDir.c_str(), 0777);

  RunOptions opts, altOpts;
  opts.programName = programPath;
  altOpts.programName = altPath;
  std::vector<double> exec, total, altExec, altTotal;
  RunResult first;
  double firstInferMs = 0, cpuPercent = 0;
  try {
    const Clock::time_point first0 = Clock::now();
    first = runProgram(program, *dev, tensors, opts);
    firstInferMs = msSince(first0);
    for (size_t k = 0; k < first.outputs.size(); ++k)
      writeNpy(outDir + "/output_" + std::to_string(k) + ".npy", first.outputs[k]);
    const bool alternate = !altPath.empty();
    if (alternate) runProgram(altProgram, *dev, tensors, altOpts);
    for (int i = 0; i < warmup; ++i) {
      runProgram(program, *dev, tensors, opts);
      if (alternate) runProgram(altProgram, *dev, tensors, altOpts);
    }
    // One timed run, the injected spin included in its times.
    std::mt19937_64 spinRng(static_cast<uint64_t>(busySeed));
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    auto timedRun = [&](const Program &p, const RunOptions &o, int busy, double fraction, bool spread,
                        std::vector<double> &e, std::vector<double> &t) {
      RunResult r = runProgram(p, *dev, tensors, o);
      double spunMs = 0;
      double spinUs = busy;
      if (spinUs > 0 && fraction < 1 && unit(spinRng) >= fraction) spinUs = 0;
      if (spinUs > 0 && spread) spinUs = 2.0 * busy * unit(spinRng);
      if (spinUs > 0) {
        const Clock::time_point spin0 = Clock::now();
        while ((spunMs = msSince(spin0)) < spinUs / 1000.0) {
        }
      }
      e.push_back(r.executeMs + spunMs);
      t.push_back(r.totalMs + spunMs);
    };
    if (serve) {
      std::ostringstream ready;
      ready << "{\"ready\":true,\"program\":" << jsonString(programPath) << ",\"device\":" << jsonString(device)
            << ",\"counters\":{";
      bool firstItem = true;
      for (const auto &[name, value] : first.counters.items()) {
        ready << (firstItem ? "" : ",") << jsonString(name) << ":" << value;
        firstItem = false;
      }
      ready << "}}";
      std::cout << ready.str() << std::endl;
      std::string request;
      while (std::getline(std::cin, request) && request != "quit") {
        if (request != "run") {
          std::cerr << "dq-run --serve: unknown request '" << request << "' (expected run or quit)\n";
          return kUsage;
        }
        exec.clear();
        total.clear();
        timedRun(program, opts, busyUs, busyFraction, busySpread, exec, total);
        std::cout << "{\"execute_ms\":" << jsonNumber(exec.back()) << ",\"total_ms\":" << jsonNumber(total.back())
                  << "}" << std::endl;
      }
      return 0;
    }
    const double cpu0 = cpuSeconds();
    const Clock::time_point wall0 = Clock::now();
    for (int i = 0; i < reps; ++i) {
      const bool altNow = alternate && ((i % 2 == 1) != altFirst);
      if (altNow) timedRun(altProgram, altOpts, altBusyUs, altBusyFraction, altBusySpread, altExec, altTotal);
      timedRun(program, opts, busyUs, busyFraction, busySpread, exec, total);
      if (alternate && !altNow)
        timedRun(altProgram, altOpts, altBusyUs, altBusyFraction, altBusySpread, altExec, altTotal);
    }
    const double wallS = msSince(wall0) / 1000.0;
    if (reps > 0 && wallS > 0) cpuPercent = 100.0 * std::max(cpuSeconds() - cpu0, 0.0) / wallS;
  } catch (const std::exception &e) {
    std::cerr << "dq-run: " << e.what() << "\n";
    return kRunFailed;
  }

  std::string gpu;
#ifdef DQ_WITH_HIP
  if (device == "hip") gpu = hipDeviceDescription();
#endif
  std::ostringstream o;
  o << "{\"program\":" << jsonString(programPath) << ",\"device\":" << jsonString(device)
    << ",\"gpu\":" << jsonString(gpu) << ",\"outputs\":[";
  for (size_t k = 0; k < first.outputs.size(); ++k) {
    const HostTensor &t = first.outputs[k];
    o << (k ? "," : "") << "{\"name\":" << jsonString(k < program.outputs.size() ? program.outputs[k].name : "")
      << ",\"dtype\":" << jsonString(dtypeName(t.dtype)) << ",\"dims\":[";
    for (size_t d = 0; d < t.dims.size(); ++d)
      o << (d ? "," : "") << t.dims[d];
    o << "],\"file\":" << jsonString("output_" + std::to_string(k) + ".npy") << "}";
  }
  o << "],\"counters\":{";
  bool firstItem = true;
  for (const auto &[name, value] : first.counters.items()) {
    o << (firstItem ? "" : ",") << jsonString(name) << ":" << value;
    firstItem = false;
  }
  o << "},\"session_ms\":" << jsonNumber(sessionMs) << ",\"first_infer_ms\":" << jsonNumber(firstInferMs)
    << ",\"first_execute_ms\":" << jsonNumber(first.executeMs) << ",\"warmup\":" << warmup << ",\"reps\":" << reps
    << ",\"execute_ms\":" << dq::tools::jsonStats(exec) << ",\"total_ms\":" << dq::tools::jsonStats(total)
    << ",\"cpu_percent\":" << jsonNumber(cpuPercent) << ",\"peak_host_bytes\":" << peakHostBytes();
  if (!altPath.empty())
    o << ",\"alternate\":{\"program\":" << jsonString(altPath) << ",\"first\":" << (altFirst ? "true" : "false")
      << ",\"execute_ms\":" << dq::tools::jsonStats(altExec) << ",\"total_ms\":" << dq::tools::jsonStats(altTotal)
      << "}";
  o << "}";
  std::cout << o.str() << std::endl;
  return 0;
}
