#include "dynqual/diff/EnvironmentCheck.h"

#include "dynqual/process/Process.h"

#include <sched.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace dynqual::diff {

namespace {

std::string firstLine(const char* path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

std::string cpuModel() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0)
      return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

std::string affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    return "";
  std::string s;
  for (int i = 0; i < CPU_SETSIZE; ++i)
    if (CPU_ISSET(i, &set))
      s += (s.empty() ? "" : ",") + std::to_string(i);
  return s;
}

bool kernelVariable(const std::string& name) {
  for (const char* p : {"OMP_", "MKL_", "OPENBLAS_", "CUDA_", "HIP_", "ROCR_", "ORT_", "DYNQUAL_", "GOMP_"})
    if (name.rfind(p, 0) == 0)
      return true;
  return false;
}

/// SM and memory clocks of each GPU through nvidia-smi, when it exists; no shell involved.
std::string gpuClocks() {
  for (const char* smi : {"/usr/bin/nvidia-smi", "/usr/local/bin/nvidia-smi"})
    if (access(smi, X_OK) == 0) {
      auto r = process::runChild({smi, "--query-gpu=name,clocks.sm,clocks.mem", "--format=csv,noheader"}, 10);
      if (r.exitCode == 0) {
        std::string out = r.out;
        while (!out.empty() && out.back() == '\n')
          out.pop_back();
        return out;
      }
    }
  return "";
}

} // namespace

Environment captureEnvironment() {
  Environment e;
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  std::ostringstream m;
  m << cpuModel() << ", " << std::thread::hardware_concurrency() << " cores, "
    << (pages > 0 ? (pages * pageSize) >> 30 : 0) << " GiB";
  e.machine = m.str();
  std::string load = firstLine("/proc/loadavg");
  if (!load.empty())
    e.loadAverage1 = std::stod(load.substr(0, load.find(' ')));
  e.affinity = affinity();
  e.governor = firstLine("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  e.gpuClocks = gpuClocks();
  for (char** v = environ; v && *v; ++v) {
    std::string kv = *v;
    auto eq = kv.find('=');
    if (eq != std::string::npos && kernelVariable(kv.substr(0, eq)))
      e.kernelEnv[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return e;
}

std::vector<std::string> compareEnvironments(const Environment& start, const Environment& end, const exec::Arm& base,
                                             const exec::Arm& head) {
  std::vector<std::string> w;
  if (start.machine != end.machine)
    w.push_back("machine changed during the run: " + start.machine + " -> " + end.machine);
  if (start.affinity != end.affinity)
    w.push_back("CPU affinity changed: " + start.affinity + " -> " + end.affinity);
  if (start.governor != end.governor)
    w.push_back("frequency governor changed: " + start.governor + " -> " + end.governor);
  if (start.gpuClocks != end.gpuClocks)
    w.push_back("GPU clocks changed during the run: " + start.gpuClocks + " -> " + end.gpuClocks);
  if (start.kernelEnv != end.kernelEnv)
    w.push_back("kernel-affecting environment variables changed during the run");
  double cores = std::thread::hardware_concurrency();
  for (const auto* e : {&start, &end})
    if (cores > 0 && e->loadAverage1 > cores) {
      std::ostringstream s;
      s << "load average " << e->loadAverage1 << " above " << cores << " cores at the "
        << (e == &start ? "start" : "end") << ": other work shares this machine";
      w.push_back(s.str());
    }
  if (base.env != head.env) {
    std::string b, h;
    for (const auto& s : base.env)
      b += (b.empty() ? "" : " ") + s;
    for (const auto& s : head.env)
      h += (h.empty() ? "" : " ") + s;
    w.push_back("arms run with different environment settings: base {" + b + "} head {" + h + "}");
  }
  if (base.variant.device != head.variant.device)
    w.push_back("arms run on different devices: " + base.variant.text() + " vs " + head.variant.text());
  return w;
}

} // namespace dynqual::diff
