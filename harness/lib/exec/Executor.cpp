#include "dynqual/exec/Executor.h"

#include "dynqual/exec/RunnerArm.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/process/Process.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cmath>

namespace fs = std::filesystem;

namespace dynqual::exec {

namespace {

/// The arm protocol versions this driver speaks (dynqual-exec --protocol-version): 1, 2 which
/// added --clock, and 3 which added modelled_samples_ms. A newer driver keeps speaking older
/// versions so it can gate an older base.
constexpr int kOldestArmProtocol = 1;
constexpr int kNewestArmProtocol = 3;

std::string prefix(const PreparedModel& m) {
  return m.arm.label + " " + m.modelName + ": ";
}

/// argv with the arm's NAME=VALUE settings applied through env(1): no shell is involved.
std::vector<std::string> withEnv(const Arm& arm, std::vector<std::string> argv) {
  if (arm.env.empty())
    return argv;
  std::vector<std::string> full = {"/usr/bin/env"};
  full.insert(full.end(), arm.env.begin(), arm.env.end());
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

uint64_t fileBytes(const fs::path& p) {
  std::error_code ec;
  auto n = fs::file_size(p, ec);
  return ec ? 0 : n;
}

/// One line of a child's stderr for error messages: the headline of a sanitizer report when there
/// is one, else the last non-empty line. A sanitizer report ends in a stack trace or a memory map,
/// so its last line never says what went wrong; the headline does (`==PID==ERROR: AddressSanitizer:
/// heap-use-after-free ...`, `==PID==AddressSanitizer: hard rss limit exhausted ...`, or UBSan's
/// `FILE:LINE:COL: runtime error: ...`).
std::string lastLine(const std::string& text) {
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if ((line.rfind("==", 0) == 0 && line.find("Sanitizer: ") != std::string::npos) ||
        line.find(": runtime error: ") != std::string::npos)
      return line;
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  size_t end = text.find_last_not_of("\n ");
  if (end == std::string::npos)
    return "";
  size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1) + 1);
}

/// " (stderr: 'LAST LINE')" when the child wrote to stderr, e.g. why it aborted; else "".
std::string stderrTail(const process::ProcessResult& child) {
  std::string line = lastLine(child.err);
  return line.empty() ? "" : " (stderr: '" + line + "')";
}

/// True when `text` (a child's stderr or its error line) says an allocation failed: std::bad_alloc,
/// "out of memory", the runtime's "out of host memory", or AddressSanitizer's RSS limit (the limit under
/// ASan).
bool saysOutOfMemory(const std::string& text) {
  for (const char* sign : {"bad_alloc", "out of memory", "out of host memory", "hard rss limit exhausted"})
    if (text.find(sign) != std::string::npos)
      return true;
  return false;
}

/// A run failure of `m`; under a memory limit, an allocation failure reads "oom under the N MiB
/// memory limit: WHY" and is flagged as such.
[[noreturn]] void runFailure(const PreparedModel& m, const std::string& why, const std::string& evidence,
                             uint64_t memoryLimitBytes) {
  bool oom = memoryLimitBytes > 0 && saysOutOfMemory(evidence);
  std::string detail =
      oom ? "oom under the " + std::to_string(memoryLimitBytes >> 20) + " MiB memory limit: " + why : why;
  throw ExecError(Stage::Run, prefix(m) + "run: " + detail, detail, oom);
}

ExecResult parseDqResult(const PreparedModel& m, const process::ProcessResult& child, const TimingRequest& timing,
                         double limit, uint64_t memoryLimitBytes) {
  std::string abnormal = child.describeAbnormalEnd(limit);
  if (!abnormal.empty())
    runFailure(m, "runtime process " + abnormal + stderrTail(child), child.err, memoryLimitBytes);
  nlohmann::json j = nlohmann::json::parse(child.out, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    runFailure(m,
               "runtime process exited " + std::to_string(child.exitCode) + " without a JSON result (stderr: '" +
                   lastLine(child.err) + "')",
               child.err, memoryLimitBytes);
  if (!j.value("ok", false)) {
    std::string error = j.value("error", std::string("unknown runtime error"));
    runFailure(m, error, error, memoryLimitBytes);
  }
  ExecResult r;
  auto malformed = [&](const std::string& why) {
    std::string detail = "malformed result from the runtime process: " + why;
    return ExecError(Stage::Run, prefix(m) + "run: " + detail, detail);
  };
  try {
    for (const auto& f : j.at("outputs"))
      r.outputs.push_back(onnxio::readTensorFile(f.get<std::string>()));
    for (const auto& [k, v] : j.at("counters").items())
      r.counters.emplace_back(k, v.get<uint64_t>());
    r.sessionMs = j.value("session_ms", 0.0);
    r.firstInferMs = j.value("first_infer_ms", 0.0);
    r.executeMs = j.value("execute_ms", 0.0);
    r.version = j.value("version", std::string());
    if (timing.reps > 0) {
      r.samplesMs = j.at("samples_ms").get<std::vector<double>>();
      r.iterationsPerSample = j.at("iterations_per_sample").get<int>();
      r.cpuPercent = j.value("cpu_percent", 0.0);
      if (j.contains("modelled_samples_ms"))
        r.modelledSamplesMs = j.at("modelled_samples_ms").get<std::vector<double>>();
    }
  } catch (const std::exception& e) {
    throw malformed(e.what());
  }
  if (static_cast<int>(r.samplesMs.size()) != (timing.reps > 0 ? timing.reps : 0)) {
    std::string detail = std::to_string(r.samplesMs.size()) + " samples, asked for " + std::to_string(timing.reps);
    throw ExecError(Stage::Run, prefix(m) + "run: " + detail, detail);
  }
  if (!r.modelledSamplesMs.empty() && r.modelledSamplesMs.size() != r.samplesMs.size())
    throw malformed(std::to_string(r.modelledSamplesMs.size()) + " modelled samples for " +
                    std::to_string(r.samplesMs.size()) + " timing samples");
  for (double s : r.modelledSamplesMs)
    if (!std::isfinite(s) || s < 0)
      throw malformed("a modelled sample is negative or not finite");
  for (double s : r.samplesMs)
    if (!std::isfinite(s) || s < 0)
      throw ExecError(Stage::Run, prefix(m) + "run: a timing sample is negative or not finite",
                      "a timing sample is negative or not finite");
  return r;
}

} // namespace

const char* stageName(Stage s) {
  switch (s) {
  case Stage::Compile:
    return "compile";
  case Stage::Run:
    return "run";
  case Stage::Infra:
    return "infrastructure";
  }
  return "?";
}

fs::path selfBinDir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec)
    throw std::runtime_error("cannot read /proc/self/exe: " + ec.message());
  return exe.parent_path();
}

double compileInChild(const fs::path& binDir, const fs::path& modelFile, const std::string& pipeline,
                      const fs::path& artifact, double timeoutSeconds, const std::string& label,
                      const std::string& model, const std::vector<std::string>& env, double* cpuMs,
                      uint64_t memoryLimitBytes) {
  std::string where = label.empty() ? "" : label + " " + model + ": compile: ";
  std::vector<std::string> argv = {
      (binDir / "dynqual").string(), "compile", modelFile.string(), "--pipeline", pipeline, "-o", artifact.string()};
  Arm envOnly;
  envOnly.env = env;
  process::ProcessResult child = process::runChild(withEnv(envOnly, argv), timeoutSeconds, memoryLimitBytes);
  std::string abnormal = child.describeAbnormalEnd(timeoutSeconds);
  if (!abnormal.empty())
    throw ExecError(Stage::Compile, where + "compiler process " + abnormal + stderrTail(child));
  if (child.exitCode != 0)
    throw ExecError(Stage::Compile, where + lastLine(child.err));
  if (cpuMs)
    *cpuMs = child.cpuMs;
  return child.wallMs;
}

Executor::Executor(ExecConfig config) : config_(std::move(config)) {
}

int Executor::armProtocol(const Arm& arm) {
  if (arm.variant.kind != Variant::Kind::Dq)
    return 0;
  std::string key = arm.binDir.string();
  if (auto it = protocolByBinDir_.find(key); it != protocolByBinDir_.end())
    return it->second;
  for (const char* bin : {"dynqual", "dynqual-exec"})
    if (access((arm.binDir / bin).c_str(), X_OK) != 0)
      throw ExecError(Stage::Infra, arm.label + ": " + (arm.binDir / bin).string() + " is missing or not executable");
  process::ProcessResult child = process::runChild({(arm.binDir / "dynqual-exec").string(), "--protocol-version"}, 30);
  std::string out = child.out.substr(0, child.out.find('\n'));
  int version = 0;
  try {
    size_t used = 0;
    version = std::stoi(out, &used);
    if (used != out.size())
      version = 0;
  } catch (const std::exception&) {
    version = 0;
  }
  if (child.exitCode != 0 || version < kOldestArmProtocol || version > kNewestArmProtocol)
    throw ExecError(Stage::Infra, arm.label + ": " + (arm.binDir / "dynqual-exec").string() + " speaks arm protocol '" +
                                      out + "', this driver speaks " + std::to_string(kOldestArmProtocol) + " to " +
                                      std::to_string(kNewestArmProtocol) +
                                      " (versions before 1 lack `dynqual-exec --protocol-version`)");
  protocolByBinDir_[key] = version;
  return version;
}

std::string Executor::modelledUnavailable(const Arm& arm) {
  const std::string who = arm.label + " arm '" + arm.variant.text() + "'";
  if (arm.variant.kind != Variant::Kind::Dq)
    return who + " is a runner; only dq arms on sim model the device time";
  if (arm.variant.device != "sim")
    return who + " runs on " + arm.variant.device + ", which does not model the device time (only sim does)";
  try {
    if (armProtocol(arm) < 3)
      return who + ": its dynqual-exec speaks arm protocol " + std::to_string(armProtocol(arm)) +
             "; the modelled device time needs arm protocol 3 (a build from before it existed)";
  } catch (const ExecError& e) {
    return e.what();
  }
  return "";
}

double Executor::timeCompile(const PreparedModel& m, const fs::path& artifact, TimingClock clock) {
  if (m.arm.variant.kind != Variant::Kind::Dq)
    throw std::invalid_argument("compile time is measured for dq arms only, not " + m.arm.variant.text());
  fs::create_directories(artifact.parent_path());
  double cpuMs = 0;
  double wallMs =
      compileInChild(m.arm.binDir, m.modelFile, m.arm.variant.pipeline, artifact, config_.compileTimeoutSeconds,
                     m.arm.label, m.modelName, m.arm.env, &cpuMs, config_.memoryLimitBytes);
  return clock == TimingClock::ThreadCpu ? cpuMs : wallMs;
}

const char* timingClockName(TimingClock c) {
  switch (c) {
  case TimingClock::Wall:
    return "wall";
  case TimingClock::ThreadCpu:
    return "thread-cpu";
  case TimingClock::ProcessCpu:
    return "process-cpu";
  }
  return "?";
}

TimingClock parseTimingClock(const std::string& name) {
  for (TimingClock c : {TimingClock::Wall, TimingClock::ThreadCpu, TimingClock::ProcessCpu})
    if (name == timingClockName(c))
      return c;
  throw std::invalid_argument("unknown clock '" + name + "' (expected wall, thread-cpu or process-cpu)");
}

int Executor::runnerProtocol(const Arm& arm) {
  if (arm.variant.kind == Variant::Kind::Dq)
    return 0;
  std::string key = arm.variant.text();
  if (auto it = protocolByRunner_.find(key); it != protocolByRunner_.end())
    return it->second.protocol;
  RunnerProtocol p = probeRunnerArm(arm, config_.runnerConfig);
  protocolByRunner_[key] = {p.version, p.passesClock, p.passesServe};
  return p.version;
}

bool Executor::canServe(const Arm& arm) {
  if (arm.variant.kind == Variant::Kind::Dq)
    return false;
  return runnerProtocol(arm) >= 3 && protocolByRunner_.at(arm.variant.text()).passesServe;
}

std::unique_ptr<TimingSession> Executor::openSession(const PreparedModel& m, const std::vector<fs::path>& inputFiles,
                                                     const TimingRequest& timing, const fs::path& outDir, int cpu) {
  if (!canServe(m.arm))
    throw std::invalid_argument(m.arm.label + " arm '" + m.arm.variant.text() + "' cannot serve samples");
  if (std::string why = clockUnavailable(m.arm, timing.clock); !why.empty())
    throw ExecError(Stage::Infra,
                    prefix(m) + "the " + timingClockName(timing.clock) + " clock: " + why + "; use the wall clock");
  return openRunnerSession(m, inputFiles, timing, outDir, config_, runnerProtocol(m.arm), cpu);
}

std::string Executor::clockUnavailable(const Arm& arm, TimingClock clock) {
  const std::string who = arm.label + " arm '" + arm.variant.text() + "'";
  bool dq = arm.variant.kind == Variant::Kind::Dq;
  try {
    switch (clock) {
    case TimingClock::Wall:
      return "";
    case TimingClock::ThreadCpu:
      if (!dq)
        return who + " is a runner; it reads process-cpu, not thread-cpu";
      if (armProtocol(arm) < 2)
        return who + ": its dynqual-exec speaks arm protocol 1; --clock needs arm protocol 2";
      return "";
    case TimingClock::ProcessCpu:
      if (dq)
        return who + " is dq; it reads thread-cpu, not process-cpu";
      if (runnerProtocol(arm) < 2)
        return who + ": its runner speaks runner protocol 1; --clock needs runner protocol 2";
      if (!protocolByRunner_.at(arm.variant.text()).passesClock)
        return who + ": its argv never passes {clock}";
      return "";
    }
  } catch (const ExecError& e) {
    return e.what();
  }
  return "unknown clock";
}

PreparedModel Executor::prepare(const Arm& arm, const fs::path& modelDir) {
  PreparedModel m;
  m.arm = arm;
  m.modelName = modelDir.filename().string();
  m.modelFile = modelDir / "model.onnx";
  if (!fs::exists(m.modelFile))
    throw ExecError(Stage::Compile, prefix(m) + "compile: " + m.modelFile.string() + " does not exist");
  if (arm.variant.kind != Variant::Kind::Dq) {
    checkRunnerAvailable(arm, config_.runnerConfig);
    return m;
  }
  armProtocol(arm);
  fs::path dir = config_.workDir / arm.label / m.modelName;
  fs::create_directories(dir);
  m.artifact = dir / "model.dqp";
  m.compileMs = compileInChild(arm.binDir, m.modelFile, arm.variant.pipeline, m.artifact, config_.compileTimeoutSeconds,
                               arm.label, m.modelName, arm.env, nullptr, config_.memoryLimitBytes);
  m.artifactBytes = fileBytes(m.artifact) + fileBytes(m.artifact.string() + ".bin");
  return m;
}

ExecResult Executor::execute(const PreparedModel& m, const std::string& caseId, const std::vector<fs::path>& inputFiles,
                             const TimingRequest& timing, const fs::path& outDir) {
  if (config_.replay)
    return config_.replay(caseId, inputFiles);
  return execute(m, inputFiles, timing, outDir);
}

ExecResult Executor::execute(const PreparedModel& m, const std::vector<fs::path>& inputFiles,
                             const TimingRequest& timing, const fs::path& outDir) {
  if (timing.clock != TimingClock::Wall)
    if (std::string why = clockUnavailable(m.arm, timing.clock); !why.empty())
      throw ExecError(Stage::Infra,
                      prefix(m) + "the " + timingClockName(timing.clock) + " clock: " + why + "; use the wall clock");
  if (m.arm.variant.kind != Variant::Kind::Dq)
    return executeRunner(m, inputFiles, timing, outDir, config_, runnerProtocol(m.arm));
  fs::path exec = m.arm.execPath.empty() ? m.arm.binDir / "dynqual-exec" : m.arm.execPath;
  std::vector<std::string> argv = {exec.string(),        m.artifact.string(), "--device",
                                   m.arm.variant.device, "--output-dir",      outDir.string()};
  for (const auto& f : inputFiles) {
    argv.push_back("--input");
    argv.push_back(f.string());
  }
  if (timing.reps > 0) {
    argv.insert(argv.end(), {"--reps", std::to_string(timing.reps), "--warmup", std::to_string(timing.warmup),
                             "--min-sample-ms", std::to_string(timing.minSampleMs)});
    if (timing.busyWaitUs > 0)
      argv.insert(argv.end(), {"--busy-wait-us", std::to_string(timing.busyWaitUs)});
    if (timing.busyWaitUs > 0 && timing.busyFraction < 1.0)
      argv.insert(argv.end(), {"--busy-fraction", std::to_string(timing.busyFraction)});
    if (timing.busyWaitUs > 0 && timing.busySpread)
      argv.push_back("--busy-spread");
    if (timing.busyWaitUs > 0 && (timing.busySpread || timing.busyFraction < 1.0))
      argv.insert(argv.end(), {"--busy-seed", std::to_string(timing.busySeed)});
    if (timing.clock != TimingClock::Wall) // protocol 1 arms know no --clock and time wall
      argv.insert(argv.end(), {"--clock", timingClockName(timing.clock)});
  }
  process::ProcessResult child =
      process::runChild(withEnv(m.arm, argv), config_.runTimeoutSeconds, config_.memoryLimitBytes);
  return parseDqResult(m, child, timing, config_.runTimeoutSeconds, config_.memoryLimitBytes);
}

} // namespace dynqual::exec
