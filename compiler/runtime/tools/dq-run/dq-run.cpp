// dq-run: runs one compiled program (.dqp) on a device with .npy inputs and outputs.
//
// The device-side tool: it links only the runtime (no MLIR, no protobuf, no JSON or CLI library),
// so it builds on a GPU machine that has a C++ compiler and nvcc or hipcc and nothing else.
//
//   dq-run PROGRAM.dqp [--device sim|hip] --input a.npy ... --output-dir DIR [--reps N] [--warmup W]
//
// Runs the program once (outputs written to DIR/output_K.npy, K = output index, and the counters
// of that run reported), then W untimed and N timed repetitions. Prints one JSON line on stdout:
//   {"program":..., "device":..., "gpu":..., "outputs":[{"name","dtype","dims","file"}...],
//    "counters":{...}, "warmup":W, "reps":N,
//    "execute_ms":{"median","min","max","samples":[...]}, "total_ms":{...}}
// Timings are wall-clock milliseconds (RunResult: executeMs = first instruction to Return plus the
// final synchronize; totalMs adds input upload and output download). Exit codes: 0 ran, 1 the run
// failed (message on stderr), 2 usage or input error.
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
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace {

using namespace dq::rt;
using dq::tools::jsonString;

constexpr int kRunFailed = 1, kUsage = 2;

int usage(const std::string &problem) {
  std::cerr << "dq-run: " << problem << "\n"
            << "usage: dq-run PROGRAM.dqp [--device sim|hip] --input FILE.npy ... --output-dir DIR "
               "[--reps N] [--warmup W]\n";
  return kUsage;
}

bool parseCount(const std::string &s, int &out) {
  char *end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end || v < 0 || v > 1000000) return false;
  out = static_cast<int>(v);
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  std::string programPath, device = "sim", outDir;
  std::vector<std::string> inputs;
  int reps = 0, warmup = 1;
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

  Program program;
  std::vector<HostTensor> tensors;
  std::unique_ptr<Device> dev;
  try {
    program = readProgram(programPath);
    for (const std::string &f : inputs) tensors.push_back(readNpy(f));
    validateInputs(program, tensors);
    dev = createDevice(device);
  } catch (const std::exception &e) {
    std::cerr << "dq-run: " << e.what() << "\n";
    return kUsage;
  }
  ::mkdir(outDir.c_str(), 0777);

  RunOptions opts;
  opts.programName = programPath;
  std::vector<double> exec, total;
  RunResult first;
  try {
    first = runProgram(program, *dev, tensors, opts);
    for (size_t k = 0; k < first.outputs.size(); ++k)
      writeNpy(outDir + "/output_" + std::to_string(k) + ".npy", first.outputs[k]);
    for (int i = 0; i < warmup; ++i) runProgram(program, *dev, tensors, opts);
    for (int i = 0; i < reps; ++i) {
      RunResult r = runProgram(program, *dev, tensors, opts);
      exec.push_back(r.executeMs);
      total.push_back(r.totalMs);
    }
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
    for (size_t d = 0; d < t.dims.size(); ++d) o << (d ? "," : "") << t.dims[d];
    o << "],\"file\":" << jsonString("output_" + std::to_string(k) + ".npy") << "}";
  }
  o << "],\"counters\":{";
  bool firstItem = true;
  for (const auto &[name, value] : first.counters.items()) {
    o << (firstItem ? "" : ",") << jsonString(name) << ":" << value;
    firstItem = false;
  }
  o << "},\"warmup\":" << warmup << ",\"reps\":" << reps << ",\"execute_ms\":" << dq::tools::jsonStats(exec)
    << ",\"total_ms\":" << dq::tools::jsonStats(total) << "}";
  std::cout << o.str() << std::endl;
  return 0;
}
