// dq-bench: device-side benchmarks that link only the runtime (no MLIR, no Debian library), so
// they build and run on a GPU machine with nvcc or hipcc and nothing else (docs/commands/bench-generate.md).
//
//   dq-bench generate PROGRAM.dqp [--device sim|hip] [--prompt-len 128] [--gen-tokens 128]
//            [--warmup 1] [--reps 5] [--seed 1] [--name NAME] [--copy-mib M] [--copy-reps 20]
//            [--launches 2000] [--model-hash HEX]
//   dq-bench probe [--device sim|hip] [--copy-mib M] [--copy-reps 20] [--launches 2000]
//
// generate: W untimed and N timed generations (prefill + decode loop, Generate.h), the copy and
// launch probes (Probes.h) in the same process, and one JSON object on stdout with every
// parameter, TTFT and TPS per repetition, peak device and host memory, per-step counters and the
// physical limits beside the decode figure. probe: the probes alone. Exit codes: 0 ran, 1 the
// run failed (message on stderr), 2 usage or input error.
#include "Generate.h"
#include "GenerateMetrics.h"
#include "Probes.h"
#include "../common/JsonText.h"

#include "dq/runtime/Device.h"
#include "dq/runtime/Error.h"
#include "dq/runtime/ProgramIO.h"
#include "dq/runtime/Resident.h"
#ifdef DQ_WITH_HIP
#include "dq/runtime/hip/HipDevice.h"
#endif

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

namespace {

using namespace dq::rt;
using namespace dq::bench;
using dq::tools::jsonNumber;
using dq::tools::jsonStats;
using dq::tools::jsonString;

constexpr int kRunFailed = 1, kUsage = 2;

int usage(const std::string &problem) {
  std::cerr << "dq-bench: " << problem << "\n"
            << "usage: dq-bench generate PROGRAM.dqp [--device sim|hip] [--prompt-len N] [--gen-tokens N]\n"
               "                [--warmup W] [--reps R] [--seed S] [--name NAME] [--copy-mib M]\n"
               "                [--copy-reps N] [--launches N] [--model-hash HEX]\n"
               "       dq-bench probe [--device sim|hip] [--copy-mib M] [--copy-reps N] [--launches N]\n";
  return kUsage;
}

bool parseCount(const std::string &s, long long lo, long long &out) {
  char *end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end || v < lo || v > 100000000) return false;
  out = v;
  return true;
}

std::string probesJson(const ProbeResult &p) {
  std::ostringstream o;
  o << "{\"copy_bytes\":" << p.copyBytes << ",\"copy_reps\":" << p.copyReps
    << ",\"memcpy_gbps\":" << jsonNumber(p.memcpyBytesPerSecond / 1e9)
    << ",\"strided_copy_gbps\":" << jsonNumber(p.stridedBytesPerSecond / 1e9)
    << ",\"copy_gbps\":" << jsonNumber(p.copyBytesPerSecond() / 1e9) << ",\"launch_count\":" << p.launchCount
    << ",\"launch_us\":" << jsonNumber(p.launchSeconds * 1e6) << "}";
  return o.str();
}

std::string countersJson(const Counters &c) {
  std::ostringstream o;
  o << "{";
  bool first = true;
  for (const auto &[name, value] : c.items()) {
    o << (first ? "" : ",") << jsonString(name) << ":" << value;
    first = false;
  }
  return o.str() + "}";
}

uint64_t peakHostBytes() {
  struct rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<uint64_t>(u.ru_maxrss) * 1024; // Linux reports KiB
}

// The host the benchmark ran on, so that an imported result names its own machine.
std::string hostJson() {
  std::string cpu;
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; cpu.empty() && std::getline(info, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) cpu = line.substr(line.find(':') + 2);
  uint64_t mem = 0;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string key; meminfo >> key;) {
    uint64_t kib = 0;
    std::string unit;
    meminfo >> kib >> unit;
    if (key == "MemTotal:") {
      mem = kib * 1024;
      break;
    }
  }
  struct utsname u{};
  uname(&u);
  std::ostringstream o;
  o << "{\"cpu_model\":" << jsonString(cpu) << ",\"cores\":" << sysconf(_SC_NPROCESSORS_ONLN)
    << ",\"memory_bytes\":" << mem << ",\"os\":" << jsonString(std::string(u.sysname) + " " + u.release) << "}";
  return o.str();
}

std::string utcNow() {
  char buf[32];
  std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string gpuDescription(const std::string &device) {
#ifdef DQ_WITH_HIP
  if (device == "hip") return hipDeviceDescription();
#endif
  (void)device;
  return "";
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) return usage("no subcommand (generate or probe)");
  const std::string sub = argv[1];
  if (sub == "-h" || sub == "--help") {
    usage("device-side benchmarks");
    return 0;
  }
  if (sub != "generate" && sub != "probe") return usage("unknown subcommand " + sub);
  std::string programPath, device = "sim", name, modelHash;
  std::map<std::string, long long> n = {{"--prompt-len", 128}, {"--gen-tokens", 128}, {"--warmup", 1},
                                        {"--reps", 5},         {"--seed", 1},         {"--copy-mib", -1},
                                        {"--copy-reps", 20},   {"--launches", 2000}};
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--device" || a == "--name" || a == "--model-hash") {
      if (i + 1 >= argc) return usage(a + " needs a value");
      (a == "--device" ? device : a == "--name" ? name : modelHash) = argv[++i];
    } else if (n.count(a)) {
      long long v;
      const long long lo = (a == "--prompt-len" || a == "--gen-tokens" || a == "--copy-mib") ? 1 : 0;
      if (i + 1 >= argc || !parseCount(argv[++i], lo, v))
        return usage(a + " needs a whole number >= " + std::to_string(lo));
      n[a] = v;
    } else if (!a.empty() && a[0] == '-') {
      return usage("unknown option " + a);
    } else if (sub == "generate" && programPath.empty()) {
      programPath = a;
    } else {
      return usage("unexpected argument " + a);
    }
  }
  if (sub == "generate" && programPath.empty()) return usage("generate needs a PROGRAM.dqp");
  if (sub == "generate" && n["--gen-tokens"] < 2 && n["--reps"] > 0)
    return usage("--gen-tokens must be at least 2 for TPS");
  // 256 MiB on a GPU is well above its caches; the sim copies on the CPU, so keep it small.
  if (n["--copy-mib"] < 0) n["--copy-mib"] = device == "sim" ? 4 : 256;

  Program program;
  std::unique_ptr<Device> dev;
  DecoderLayout layout;
  try {
    dev = createDevice(device);
    if (sub == "generate") {
      program = readProgram(programPath);
      layout = decoderLayout(program);
    }
  } catch (const std::exception &e) {
    std::cerr << "dq-bench: " << e.what() << "\n";
    return kUsage;
  }
  if (name.empty()) name = programPath;

  const std::string startedAt = utcNow();
  try {
    const ProbeResult probes = runProbes(*dev, static_cast<uint64_t>(n["--copy-mib"]) << 20,
                                         static_cast<int>(n["--copy-reps"]), static_cast<int>(n["--launches"]));
    if (sub == "probe") {
      std::cout << "{\"tool\":\"dq-bench probe\",\"started_at\":" << jsonString(startedAt) << ",\"host\":" << hostJson()
                << ",\"device\":" << jsonString(device) << ",\"gpu\":" << jsonString(gpuDescription(device))
                << ",\"probes\":" << probesJson(probes) << ",\"peak_host_bytes\":" << peakHostBytes() << "}"
                << std::endl;
      return 0;
    }
    const int promptLen = static_cast<int>(n["--prompt-len"]), gen = static_cast<int>(n["--gen-tokens"]);
    const std::vector<int64_t> prompt = promptTokens(layout.vocab, promptLen, static_cast<uint64_t>(n["--seed"]));
    ResidentProgram resident(program, *dev, programPath);
    for (long long w = 0; w < n["--warmup"]; ++w)
      generate(resident, *dev, layout, prompt, gen);
    std::vector<GenerationRun> runs;
    for (long long r = 0; r < n["--reps"]; ++r)
      runs.push_back(generate(resident, *dev, layout, prompt, gen));
    if (runs.empty()) runs.push_back(generate(resident, *dev, layout, prompt, gen)); // tokens only

    std::vector<double> ttft, tps;
    uint64_t peakDevice = 0;
    bool sameTokens = true;
    double launches = 0, kernels = 0, copies = 0, syncs = 0, readbacks = 0, h2d = 0, d2h = 0, steps = 0;
    for (const GenerationRun &r : runs) {
      ttft.push_back(ttftMs(r.times));
      if (r.tokens.size() >= 2) tps.push_back(tokensPerSecond(r.times));
      peakDevice = std::max(peakDevice, r.peakDeviceBytes);
      sameTokens = sameTokens && r.tokens == runs.front().tokens;
      for (const Counters &c : r.stepCounters) {
        const double cp = static_cast<double>(c.memcpyCopies + c.copy2dCopies + c.stridedCopies);
        kernels += static_cast<double>(c.kernelLaunches);
        copies += cp;
        launches += static_cast<double>(c.kernelLaunches) + cp + 1; // + the arg_max launch
        syncs += static_cast<double>(c.syncs);
        readbacks += static_cast<double>(c.scalarReadbacks);
        h2d += static_cast<double>(c.h2dBytes);
        d2h += static_cast<double>(c.d2hBytes);
        steps += 1;
      }
    }
    auto perStep = [&](double v) { return jsonNumber(steps > 0 ? v / steps : 0); };
    DecodeLimits lim;
    lim.weightBytesPerToken = static_cast<double>(resident.constantBytes());
    lim.copyBytesPerSecond = probes.copyBytesPerSecond();
    lim.launchesPerToken = steps > 0 ? launches / steps : 0;
    lim.launchSeconds = probes.launchSeconds;
    const double achieved = tps.empty() ? 0 : dq::tools::median(tps);

    std::ostringstream o;
    o << "{\"tool\":\"dq-bench generate\",\"version\":1,\"started_at\":" << jsonString(startedAt)
      << ",\"host\":" << hostJson() << ",\"program\":" << jsonString(programPath) << ",\"model\":" << jsonString(name)
      << ",\"model_hash\":" << jsonString(modelHash) << ",\"device\":" << jsonString(device)
      << ",\"gpu\":" << jsonString(gpuDescription(device)) << ",\"params\":{\"prompt_len\":" << promptLen
      << ",\"gen_tokens\":" << gen << ",\"warmup\":" << n["--warmup"] << ",\"reps\":" << n["--reps"]
      << ",\"seed\":" << n["--seed"] << ",\"batch\":1,\"copy_mib\":" << n["--copy-mib"]
      << ",\"copy_reps\":" << n["--copy-reps"] << ",\"launches\":" << n["--launches"] << "}"
      << ",\"decoder\":{\"vocab\":" << layout.vocab << ",\"logits_dtype\":" << jsonString(dtypeName(layout.logitsType))
      << ",\"kv_tensors\":" << layout.past.size()
      << ",\"kv_dtype\":" << jsonString(layout.past.empty() ? "" : dtypeName(layout.past[0].dtype))
      << ",\"constants\":" << program.constants.size() << ",\"constant_bytes\":" << resident.constantBytes() << "}"
      << ",\"prompt\":[";
    for (size_t k = 0; k < prompt.size(); ++k)
      o << (k ? "," : "") << prompt[k];
    o << "],\"tokens\":[";
    for (size_t k = 0; k < runs.front().tokens.size(); ++k)
      o << (k ? "," : "") << runs.front().tokens[k];
    o << "],\"tokens_same_every_rep\":" << (sameTokens ? "true" : "false")
      << ",\"ttft_ms\":" << jsonStats(n["--reps"] > 0 ? ttft : std::vector<double>{})
      << ",\"tps\":" << jsonStats(n["--reps"] > 0 ? tps : std::vector<double>{})
      << ",\"peak_device_bytes\":" << peakDevice << ",\"peak_host_bytes\":" << peakHostBytes()
      << ",\"per_step\":{\"launches\":" << perStep(launches) << ",\"kernel_launches\":" << perStep(kernels)
      << ",\"device_copies\":" << perStep(copies) << ",\"program_syncs\":" << perStep(syncs)
      << ",\"program_readbacks\":" << perStep(readbacks) << ",\"h2d_bytes\":" << perStep(h2d)
      << ",\"d2h_bytes\":" << perStep(d2h) << ",\"token_readback_bytes\":8}"
      << ",\"prefill_counters\":" << countersJson(runs.front().prefillCounters) << ",\"probes\":" << probesJson(probes)
      << ",\"limits\":{\"weight_bytes_per_token\":" << resident.constantBytes()
      << ",\"copy_gbps\":" << jsonNumber(lim.copyBytesPerSecond / 1e9)
      << ",\"launches_per_token\":" << jsonNumber(lim.launchesPerToken)
      << ",\"launch_us\":" << jsonNumber(lim.launchSeconds * 1e6)
      << ",\"bandwidth_limit_tps\":" << jsonNumber(lim.bandwidthLimitTps())
      << ",\"launch_limit_tps\":" << jsonNumber(lim.launchLimitTps()) << ",\"binding\":" << jsonString(lim.binding())
      << ",\"binding_limit_tps\":" << jsonNumber(lim.bindingLimitTps()) << ",\"achieved_tps\":" << jsonNumber(achieved)
      << ",\"fraction_of_binding\":" << jsonNumber(lim.fractionOfBinding(achieved)) << "}}";
    std::cout << o.str() << std::endl;
  } catch (const std::exception &e) {
    std::cerr << "dq-bench: " << e.what() << "\n";
    return kRunFailed;
  }
  return 0;
}
