#include "dynqual/exec/RunnerArm.h"

#include "dynqual/runners/Runner.h"
#include "dynqual/runners/RunnerConfig.h"
#include "dynqual/runners/RunnerSession.h"

#include <optional>

namespace dynqual::exec {

namespace {

runners::RunnerSpec resolve(const Arm& arm, const std::filesystem::path& configFile,
                            int ortProtocol = runners::kProtocolVersion) {
  try {
    std::optional<runners::RunnerConfig> config;
    if (!configFile.empty())
      config = runners::RunnerConfig::load(configFile);
    return runners::resolveRunner(arm.variant.text(), config ? &*config : nullptr, ortProtocol);
  } catch (const std::exception& e) {
    throw ExecError(Stage::Infra, arm.label + " " + arm.variant.text() + ": " + e.what());
  }
}

} // namespace

void checkRunnerAvailable(const Arm& arm, const std::filesystem::path& runnerConfig) {
  resolve(arm, runnerConfig);
}

RunnerProtocol probeRunnerArm(const Arm& arm, const std::filesystem::path& runnerConfig) {
  runners::RunnerSpec spec = resolve(arm, runnerConfig);
  RunnerProtocol p;
  try {
    p.version = runners::probeProtocol(spec);
  } catch (const std::exception& e) {
    throw ExecError(Stage::Infra, arm.label + " " + arm.variant.text() + ": " + e.what());
  }
  // The built-in template is built for the version found; a declared one is as written.
  runners::RunnerSpec forVersion = resolve(arm, runnerConfig, p.version);
  p.passesClock = runners::passesClock(forVersion);
  p.passesServe = runners::passesServe(forVersion);
  return p;
}

ExecResult executeRunner(const PreparedModel& m, const std::vector<std::filesystem::path>& inputFiles,
                         const TimingRequest& timing, const std::filesystem::path& outDir, const ExecConfig& config,
                         int protocol) {
  if (timing.busyWaitUs > 0)
    throw std::invalid_argument("slowdown injection works on dq arms only, not " + m.arm.variant.text());
  if (timing.clock == TimingClock::ThreadCpu)
    throw ExecError(Stage::Infra, m.arm.label + " " + m.modelName + ": a runner cannot read the thread-cpu clock");
  runners::RunnerSpec spec = resolve(m.arm, config.runnerConfig, protocol);
  runners::RunnerRequest req;
  req.model = m.modelFile;
  req.inputs = inputFiles;
  req.outputDir = outDir;
  req.reps = std::max(1, timing.reps);
  req.warmup = timing.reps > 0 ? timing.warmup : 0;
  req.minSampleMs = timing.reps > 0 ? timing.minSampleMs : 0;
  req.protocol = protocol;
  req.clock = timing.clock == TimingClock::ProcessCpu ? runners::RunnerClock::ProcessCpu : runners::RunnerClock::Wall;
  try {
    runners::RunnerResult rr = runners::runRunner(spec, req, config.runTimeoutSeconds);
    ExecResult r;
    for (auto& o : rr.outputs)
      r.outputs.push_back(std::move(o.tensor));
    r.counters.assign(rr.counters.begin(), rr.counters.end());
    if (timing.reps > 0) {
      r.samplesMs = rr.samplesMs;
      r.iterationsPerSample = static_cast<int>(rr.iterationsPerSample);
    }
    r.sessionMs = rr.sessionMs;
    r.firstInferMs = rr.firstInferMs;
    r.version = rr.version;
    return r;
  } catch (const runners::RunnerUnavailable& e) {
    throw ExecError(Stage::Infra, m.arm.label + " " + m.modelName + ": " + e.what());
  } catch (const std::exception& e) {
    throw ExecError(Stage::Run, m.arm.label + " " + m.modelName + ": run: " + e.what());
  }
}

namespace {

class RunnerTimingSession : public TimingSession {
public:
  RunnerTimingSession(std::string who, std::unique_ptr<runners::RunnerSession> s)
      : who_(std::move(who)), session_(std::move(s)) {}
  int iterationsPerSample() const override { return static_cast<int>(session_->iterationsPerSample()); }
  double sample() override {
    try {
      return session_->sample();
    } catch (const std::exception& e) {
      throw ExecError(Stage::Run, who_ + "run: " + e.what());
    }
  }
  void close() override {
    try {
      session_->quit();
    } catch (const std::exception& e) {
      throw ExecError(Stage::Run, who_ + "run: " + e.what());
    }
  }

private:
  std::string who_;
  std::unique_ptr<runners::RunnerSession> session_;
};

} // namespace

std::unique_ptr<TimingSession> openRunnerSession(const PreparedModel& m,
                                                 const std::vector<std::filesystem::path>& inputFiles,
                                                 const TimingRequest& timing, const std::filesystem::path& outDir,
                                                 const ExecConfig& config, int protocol, int cpu) {
  if (timing.busyWaitUs > 0)
    throw std::invalid_argument("slowdown injection works on dq arms only, not " + m.arm.variant.text());
  if (timing.clock == TimingClock::ThreadCpu)
    throw std::invalid_argument(m.arm.label + " " + m.modelName + ": a runner cannot read the thread-cpu clock");
  runners::RunnerSpec spec = resolve(m.arm, config.runnerConfig, protocol);
  runners::RunnerRequest req;
  req.model = m.modelFile;
  req.inputs = inputFiles;
  req.outputDir = outDir;
  req.reps = 1;
  req.warmup = timing.warmup;
  req.minSampleMs = timing.minSampleMs;
  req.protocol = protocol;
  req.clock = timing.clock == TimingClock::ProcessCpu ? runners::RunnerClock::ProcessCpu : runners::RunnerClock::Wall;
  req.serve = true;
  std::string who = m.arm.label + " " + m.modelName + ": ";
  try {
    return std::make_unique<RunnerTimingSession>(
        who, std::make_unique<runners::RunnerSession>(spec, req, config.runTimeoutSeconds, cpu));
  } catch (const runners::RunnerUnavailable& e) {
    throw ExecError(Stage::Infra, who + e.what());
  } catch (const std::exception& e) {
    throw ExecError(Stage::Run, who + "run: " + e.what());
  }
}

} // namespace dynqual::exec
