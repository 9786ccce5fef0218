#include "dynqual/exec/RunnerArm.h"

#include "dynqual/runners/Runner.h"
#include "dynqual/runners/RunnerConfig.h"

#include <optional>

namespace dynqual::exec {

namespace {

runners::RunnerSpec resolve(const Arm& arm, const std::filesystem::path& configFile) {
  try {
    std::optional<runners::RunnerConfig> config;
    if (!configFile.empty())
      config = runners::RunnerConfig::load(configFile);
    return runners::resolveRunner(arm.variant.text(), config ? &*config : nullptr);
  } catch (const std::exception& e) {
    throw ExecError(Stage::Infra, arm.label + " " + arm.variant.text() + ": " + e.what());
  }
}

} // namespace

void checkRunnerAvailable(const Arm& arm, const std::filesystem::path& runnerConfig) { resolve(arm, runnerConfig); }

ExecResult executeRunner(const PreparedModel& m, const std::vector<std::filesystem::path>& inputFiles,
                         const TimingRequest& timing, const std::filesystem::path& outDir, const ExecConfig& config) {
  if (timing.busyWaitUs > 0)
    throw std::invalid_argument("slowdown injection works on dq arms only, not " + m.arm.variant.text());
  runners::RunnerSpec spec = resolve(m.arm, config.runnerConfig);
  runners::RunnerRequest req;
  req.model = m.modelFile;
  req.inputs = inputFiles;
  req.outputDir = outDir;
  req.reps = std::max(1, timing.reps);
  req.warmup = timing.reps > 0 ? timing.warmup : 0;
  req.minSampleMs = timing.reps > 0 ? timing.minSampleMs : 0;
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

} // namespace dynqual::exec
