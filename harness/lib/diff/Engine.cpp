#include "dynqual/diff/Engine.h"

#include "dynqual/diff/Analysis.h"
#include "dynqual/diff/Correctness.h"
#include "dynqual/diff/EnvironmentCheck.h"
#include "dynqual/diff/Identical.h"
#include "dynqual/stats/Descriptive.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>

namespace fs = std::filesystem;

namespace dynqual::diff {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct TimedModel {
  std::string name;
  PreparedPair pair;
  /// Injected busy work per run (--inject-slowdown): the head's, and the base's (spread only).
  double headBusyUs = 0, baseBusyUs = 0;
  double headBusyFraction = 1;   ///< tail: the share of the head's runs that spin
  double headModelledFactor = 1; ///< shift: the head's modelled device time is multiplied by it
  bool headBusySpread = false;   ///< spread: the head draws each sample's spin from [0, 2 headBusyUs]
  size_t checkIndex = 0;
  bool closed = false; ///< every comparison of the model has a decisive verdict: it takes no more rounds
};

} // namespace

std::vector<CounterChange> counterChanges(const std::vector<ModelCheck>& checks) {
  std::vector<CounterChange> out;
  for (const auto& c : checks) {
    if (c.baseCounters.empty() || c.headCounters.empty())
      continue;
    std::set<std::string> names;
    for (const auto& [k, v] : c.baseCounters)
      names.insert(k);
    for (const auto& [k, v] : c.headCounters)
      names.insert(k);
    for (const auto& n : names) {
      auto b = c.baseCounters.count(n) ? c.baseCounters.at(n) : 0;
      auto h = c.headCounters.count(n) ? c.headCounters.at(n) : 0;
      if (b != h)
        out.push_back({c.model, n, static_cast<int64_t>(b), static_cast<int64_t>(h)});
    }
    if (c.baseArtifactBytes != c.headArtifactBytes)
      out.push_back({c.model, "artifact_bytes", static_cast<int64_t>(c.baseArtifactBytes),
                     static_cast<int64_t>(c.headArtifactBytes)});
  }
  return out;
}

AbResult runAb(const AbOptions& o, exec::Executor& ex, const std::function<void(const std::string&)>& onProgress) {
  auto t0 = Clock::now();
  auto progress = [&](const std::string& s) {
    if (onProgress)
      onProgress(s);
  };
  AbResult r;
  r.clock = o.measure.clock;
  r.metric = o.measure.metric;
  const bool modelledDecides = o.measure.metric == DecisionMetric::ModelledDeviceTime;
  r.roundValue = o.policy.roundValue;
  r.envStart = captureEnvironment();
  if (o.base.variant.kind == exec::Variant::Kind::Dq && o.head.variant.kind == exec::Variant::Kind::Dq)
    for (const char* bin : {"dynqual", "dynqual-exec"}) {
      std::error_code eb, eh;
      auto b = fs::file_size(o.base.binDir / bin, eb), h = fs::file_size(o.head.binDir / bin, eh);
      if (!eb && !eh)
        r.binaryBytes[bin] = {b, h};
    }
  r.runtimeSha256 = runtimeSha256(o);

  std::vector<TimedModel> timed;
  std::vector<std::string> identical;
  for (size_t i = 0; i < o.models.size(); ++i) {
    ModelCheck check;
    progress(fmt::format("checking {}/{} {} ({:.0f} s)", i + 1, o.models.size(), o.models[i].filename().string(),
                         secondsSince(t0)));
    PreparedPair pair;
    try {
      pair = checkModel(o.models[i], o, ex, check);
    } catch (const exec::ExecError& e) {
      r.infraErrors.push_back(e.what());
      r.wallSeconds = secondsSince(t0);
      return r;
    }
    hashPrograms(pair, check);
    // Identical artifacts need no timing; correctness above still ran on both arms.
    // An injected slowdown makes the head differ on purpose (the gate's self-test): it is timed.
    bool same = o.skipIdentical && check.passed && !o.measure.injectSlowdown.count(check.model) &&
                artifactsIdentical(check, r.runtimeSha256);
    if (same)
      identical.push_back(check.model);
    else if (check.passed && !pair.timedInputs.empty()) {
      timed.push_back({});
      timed.back().name = check.model;
      timed.back().pair = std::move(pair);
      timed.back().checkIndex = r.checks.size();
    }
    r.checks.push_back(std::move(check));
  }
  r.counterChanges = counterChanges(r.checks);

  r.warnings = reachabilityWarnings(o.policy, comparisonCount(static_cast<int>(timed.size()), o.policy, o.measure));
  // The modelled time goes beside a measured decision only when both arms report it; a failed
  // probe (a runner, hip, an old dynqual-exec) just leaves it out.
  const bool modelledSide =
      !modelledDecides && ex.modelledUnavailable(o.base).empty() && ex.modelledUnavailable(o.head).empty();

  // One position of one arm; `busySeed` seeds the draws of a tail or spread injection.
  auto timeOne = [&](TimedModel& t, bool isHead, const fs::path& out, uint64_t busySeed) {
    exec::TimingRequest req{o.measure.samplesPerPosition, o.measure.warmup, o.measure.minSampleMs,
                            isHead ? t.headBusyUs : t.baseBusyUs, o.measure.clock};
    if (isHead) {
      req.busyFraction = t.headBusyFraction;
      req.busySpread = t.headBusySpread;
    }
    req.busySeed = busySeed;
    return ex.execute(isHead ? *t.pair.head : *t.pair.base, t.pair.timedInputs, req, out);
  };
  // A model whose timed run fails stops being timed; its check records the failure.
  auto failTiming = [&](TimedModel& t, const std::string& why) {
    ModelCheck& c = r.checks[t.checkIndex];
    c.passed = false;
    c.detail = "timing: " + why;
    t.name.clear();
  };

  // Sample interleaving: both arms' processes start (the round's first arm first), then the ABBA
  // order is repeated samplesPerPosition times, one batch per step.
  auto sampleInterleaved = [&](TimedModel& t, const char* const* order, int round) {
    exec::TimingRequest req{1, o.measure.warmup, o.measure.minSampleMs, 0, o.measure.clock};
    std::map<std::string, std::unique_ptr<exec::TimingSession>> sessions;
    for (const char* arm : {order[0], order[1]}) {
      bool isHead = std::string(arm) == "head";
      sessions[arm] = ex.openSession(isHead ? *t.pair.head : *t.pair.base, t.pair.timedInputs, req,
                                     ex.config().workDir / "timing" / arm / t.name, o.measure.cpu);
    }
    std::vector<Sample> out;
    for (int rep = 0; rep < o.measure.samplesPerPosition; ++rep)
      for (int pos = 0; pos < 4; ++pos) {
        auto& s = *sessions.at(order[pos]);
        out.push_back({t.name, order[pos], round, pos, rep, s.sample(), s.iterationsPerSample()});
      }
    for (auto& [arm, s] : sessions)
      s->close();
    return out;
  };

  // Injected slowdowns are sized from a base measurement taken before round 0 (not analysed).
  for (auto& t : timed) {
    auto it = o.measure.injectSlowdown.find(t.name);
    if (it == o.measure.injectSlowdown.end())
      continue;
    try {
      auto res = timeOne(t, false, ex.config().workDir / "inject" / t.name, 0);
      double spreadMs = res.samplesMs.size() > 1 ? stats::scaledMad(res.samplesMs) : 0.0;
      double us = slowdownBusyUs(it->second, stats::median(res.samplesMs), spreadMs);
      t.headBusyUs = us;
      if (it->second.kind == SlowdownSpec::Kind::Shift)
        t.headModelledFactor = modelledSlowdownFactor(it->second);
      if (it->second.kind == SlowdownSpec::Kind::Tail)
        t.headBusyFraction = it->second.fraction;
      if (it->second.kind == SlowdownSpec::Kind::Spread) {
        t.baseBusyUs = us; // the same mean on both arms; only the head's varies
        t.headBusySpread = true;
      }
      r.slowdownUs[t.name] = us;
    } catch (const exec::ExecError& e) {
      failTiming(t, e.what());
    }
  }

  auto activeNames = [&] {
    std::vector<std::string> n;
    for (const auto& t : timed)
      if (!t.name.empty())
        n.push_back(t.name);
    return n;
  };
  auto anyOpen = [&] {
    return std::any_of(timed.begin(), timed.end(), [](const TimedModel& t) { return !t.name.empty() && !t.closed; });
  };
  const auto& looks = o.policy.looks;
  size_t look = 0;
  double roundSeconds = 0;
  for (int round = 0; anyOpen() && look < looks.size(); ++round) {
    auto roundStart = Clock::now();
    if (!o.baseLayouts.empty())
      for (auto& t : timed) {
        t.pair.base->arm.execPath = o.baseLayouts[round % o.baseLayouts.size()];
        t.pair.head->arm.execPath = o.headLayouts[round % o.headLayouts.size()];
      }
    for (auto& t : timed) {
      if (t.name.empty() || t.closed)
        continue;
      static const char* kEven[4] = {"base", "head", "head", "base"};
      static const char* kOdd[4] = {"head", "base", "base", "head"};
      const char* const* order = round % 2 == 0 ? kEven : kOdd;
      if (o.measure.interleave == Interleave::Sample) {
        double elapsed = secondsSince(t0);
        progress(fmt::format("round {}/{} {} {:.0f} s, budget left {:.0f} s", round + 1, looks[look], t.name, elapsed,
                             std::max(0.0, o.measure.budgetSeconds - elapsed)));
        try {
          for (const auto& s : sampleInterleaved(t, order, round))
            r.samples.push_back(s);
        } catch (const exec::ExecError& e) {
          failTiming(t, e.what());
        }
      }
      for (int pos = 0; pos < 4 && !t.name.empty() && o.measure.interleave == Interleave::Process; ++pos) {
        std::string arm = order[pos];
        bool isHead = arm == "head";
        double elapsed = secondsSince(t0);
        progress(fmt::format("round {}/{} {} {} {:.0f} s, budget left {:.0f} s", round + 1, looks[look], arm, t.name,
                             elapsed, std::max(0.0, o.measure.budgetSeconds - elapsed)));
        try {
          auto res = timeOne(t, isHead, ex.config().workDir / "timing" / arm / t.name,
                             o.policy.seed * 1000003u + static_cast<uint64_t>(round) * 4u + static_cast<uint64_t>(pos));
          if (modelledDecides && res.modelledSamplesMs.empty())
            throw exec::ExecError(exec::Stage::Infra,
                                  arm + " " + t.name +
                                      ": the run reported no modelled device time; use --metric measured");
          auto& measured = modelledDecides ? r.sideSamples : r.samples;
          auto& modelled = modelledDecides ? r.samples : r.sideSamples;
          for (size_t k = 0; k < res.samplesMs.size(); ++k)
            measured.push_back(
                {t.name, arm, round, pos, static_cast<int>(k), res.samplesMs[k], res.iterationsPerSample});
          // The side metric goes only where both arms report it (both dq on sim).
          const double factor = isHead ? t.headModelledFactor : 1.0;
          for (size_t k = 0; k < res.modelledSamplesMs.size() && (modelledDecides || modelledSide); ++k)
            modelled.push_back({t.name, arm, round, pos, static_cast<int>(k), res.modelledSamplesMs[k] * factor,
                                res.iterationsPerSample});
        } catch (const exec::ExecError& e) {
          failTiming(t, e.what());
        }
      }
      if (o.measure.compileTime && !t.name.empty()) {
        static const char* kCompileOrder[2][2] = {{"base", "head"}, {"head", "base"}};
        for (int pos = 0; pos < 2 && !t.name.empty(); ++pos) {
          std::string arm = kCompileOrder[round % 2][pos];
          progress(fmt::format("round {}/{} compile {} {}", round + 1, looks[look], arm, t.name));
          try {
            double ms =
                ex.timeCompile(arm == "head" ? *t.pair.head : *t.pair.base,
                               ex.config().workDir / "compile-timing" / arm / t.name / "model.dqp", o.measure.clock);
            r.compileSamples.push_back({t.name, arm, round, pos, 0, ms, 1});
          } catch (const exec::ExecError& e) {
            failTiming(t, e.what());
          }
        }
      }
    }
    r.rounds = round + 1;
    roundSeconds = std::max(roundSeconds, secondsSince(roundStart));
    if (r.rounds == looks[look]) {
      AnalysisOutcome a = analyze(r.samples, activeNames(), o.policy, decidingMetric(o.measure), r.compileSamples,
                                  compileMetric(o.measure.clock));
      r.comparisons = std::move(a.comparisons);
      r.looksDone = a.looksDone;
      ++look;
      if (a.allClosed)
        break;
      // A model whose every comparison is decided takes no more rounds (the looks it is no longer
      // timed at keep it in the Holm family with the rounds it has).
      std::set<std::string> open;
      for (const auto& c : r.comparisons)
        if (c.verdict == Verdict::Inconclusive)
          open.insert(c.model);
      for (auto& t : timed)
        t.closed = t.closed || (!t.name.empty() && r.looksDone > 0 && !open.count(t.name));
    }
    // The budget only cuts looks short: stop when the next look cannot be reached in time.
    if (look < looks.size() && secondsSince(t0) + roundSeconds * (looks[look] - r.rounds) > o.measure.budgetSeconds) {
      r.budgetExhausted = true;
      break;
    }
  }
  if (r.looksDone == 0 && r.rounds > 0) {
    // No look was reached: nothing is decided, every timed model stays inconclusive.
    r.comparisons = undecidedComparisons(r.samples, activeNames(), o.policy.roundValue, decidingMetric(o.measure));
    r.warnings.push_back(fmt::format("the budget ended after {} rounds, before the first look at {}: nothing was "
                                     "decided; raise --budget",
                                     r.rounds, looks.front()));
  }
  for (auto& c : sideComparisons(r.sideSamples, activeNames(), o.policy, sideMetric(o.measure)))
    r.comparisons.push_back(std::move(c));
  for (const auto& name : identical)
    r.comparisons.push_back(identicalComparison(name, decidingMetric(o.measure)));
  r.envEnd = captureEnvironment();
  r.envWarnings = compareEnvironments(r.envStart, r.envEnd, o.base, o.head);
  r.wallSeconds = secondsSince(t0);
  return r;
}

} // namespace dynqual::diff

namespace dynqual::diff {

const char* interleaveName(Interleave i) {
  return i == Interleave::Sample ? "sample" : "process";
}

const char* timingMetric(exec::TimingClock clock) {
  return exec::isCpuClock(clock) ? "cpu_time_ms" : "latency_ms";
}

const char* decisionMetricName(DecisionMetric m) {
  return m == DecisionMetric::ModelledDeviceTime ? "modelled-device-time" : "measured";
}

DecisionMetric parseDecisionMetric(const std::string& text) {
  for (DecisionMetric m : {DecisionMetric::Measured, DecisionMetric::ModelledDeviceTime})
    if (text == decisionMetricName(m))
      return m;
  throw std::invalid_argument("metric '" + text + "' is not one of measured, modelled-device-time");
}

bool isDeterministicMetric(const std::string& metric) {
  const std::string base = kModelledDeviceMetric;
  return metric == base || metric.rfind(base + ".", 0) == 0;
}

std::string decidingMetric(const Measurement& m) {
  return m.metric == DecisionMetric::ModelledDeviceTime ? kModelledDeviceMetric : timingMetric(m.clock);
}

std::string sideMetric(const Measurement& m) {
  return m.metric == DecisionMetric::ModelledDeviceTime ? timingMetric(m.clock) : kModelledDeviceMetric;
}

const char* compileMetric(exec::TimingClock clock) {
  return clock == exec::TimingClock::ThreadCpu ? "compile_cpu_ms" : "compile_ms";
}

} // namespace dynqual::diff
