// The measurement choices ab, gate and calibrate resolve from their flags and arms: the clock,
// the interleaving, the CPU that sample interleaving pins both arms to, and the decision metric.
#include "AbMeasurementChoice.h"
#include "Commands.h"

#include "dynqual/process/Process.h"
#include "dynqual/stats/Sequential.h"

#include <charconv>
#include <iostream>
#include <sched.h>

namespace dynqual::cli {

exec::TimingClock resolveClock(const std::string& choice, const exec::Arm& base, const exec::Arm& head,
                               exec::Executor& executor) {
  using exec::TimingClock;
  if (choice == "wall")
    return TimingClock::Wall;
  auto cpuClockOf = [](const exec::Arm& a) {
    return a.variant.kind == exec::Variant::Kind::Dq ? TimingClock::ThreadCpu : TimingClock::ProcessCpu;
  };
  auto whyNot = [&](const exec::Arm& a, TimingClock c) -> std::string {
    // Other devices work outside the runtime's thread, so its CPU time would miss their work.
    if (c == TimingClock::ThreadCpu && (a.variant.kind != exec::Variant::Kind::Dq || a.variant.device != "sim"))
      return a.label + " arm '" + a.variant.text() + "' is not dq on sim";
    return executor.clockUnavailable(a, c); // an unusable arm is reported by the engine itself
  };
  if (choice == "auto") {
    TimingClock c = cpuClockOf(base);
    if (cpuClockOf(head) != c || !whyNot(base, c).empty() || !whyNot(head, c).empty())
      return TimingClock::Wall;
    return c;
  }
  TimingClock c = exec::parseTimingClock(choice);
  for (const exec::Arm* a : {&base, &head})
    if (std::string why = whyNot(*a, c); !why.empty())
      throw UsageError("--clock " + choice + ": " + why);
  return c;
}

diff::Interleave resolveInterleave(const std::string& choice, const exec::Arm& base, const exec::Arm& head,
                                   exec::Executor& executor) {
  if (choice == "process")
    return diff::Interleave::Process;
  auto whyNot = [&](const exec::Arm& a) -> std::string {
    try {
      return executor.canServe(a) ? ""
                                  : a.label + " arm '" + a.variant.text() +
                                        "' cannot serve samples (it needs a runner "
                                        "of runner protocol 3 passing {serve})";
    } catch (const exec::ExecError& e) {
      return e.what();
    }
  };
  std::string why = whyNot(base);
  if (why.empty())
    why = whyNot(head);
  if (choice == "auto")
    return why.empty() ? diff::Interleave::Sample : diff::Interleave::Process;
  if (!why.empty())
    throw UsageError("--interleave sample: " + why);
  return diff::Interleave::Sample;
}

int resolvePinCpu(const std::string& choice) {
  if (choice == "none")
    return -1;
  int last = process::lastAllowedCpu();
  if (choice == "auto")
    return last;
  int cpu = -1;
  auto [end, ec] = std::from_chars(choice.data(), choice.data() + choice.size(), cpu);
  if (ec != std::errc() || end != choice.data() + choice.size() || cpu < 0)
    throw UsageError("--pin-cpu '" + choice + "': expected auto, none or a CPU number");
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof set, &set) != 0 || !CPU_ISSET(cpu, &set))
    throw UsageError("--pin-cpu " + choice + ": this process may not run on CPU " + choice);
  return cpu;
}

namespace {

/// Why `auto` cannot decide on the modelled device time here ("" when it can), checked without
/// starting a process: both arms dq on sim, no device split, only shift injections.
std::string modelledRefused(const AbFlags& f, const diff::AbOptions& o) {
  for (const exec::Arm* arm : {&o.base, &o.head})
    if (arm->variant.kind != exec::Variant::Kind::Dq || arm->variant.device != "sim")
      return "the " + arm->label + " arm is not dq on sim";
  if (!f.prepareDevice.empty() || !f.importDevice.empty())
    return "a device run measures wall time";
  for (const auto& [model, spec] : o.measure.injectSlowdown) {
    try {
      diff::modelledSlowdownFactor(spec);
    } catch (const std::invalid_argument&) {
      return "--inject-slowdown " + model + "=" + diff::slowdownSpecText(spec) + " changes the measured time only";
    }
  }
  return "";
}

} // namespace

void applyDecisionMetric(const AbFlags& f, diff::AbOptions& o) {
  if (f.metric == "auto") {
    std::string why = modelledRefused(f, o);
    o.measure.metric = why.empty() ? diff::DecisionMetric::ModelledDeviceTime : diff::DecisionMetric::Measured;
    return;
  }
  o.measure.metric = diff::parseDecisionMetric(f.metric);
  if (o.measure.metric != diff::DecisionMetric::ModelledDeviceTime)
    return;
  for (const exec::Arm* arm : {&o.base, &o.head})
    if (arm->variant.kind != exec::Variant::Kind::Dq || arm->variant.device != "sim")
      throw UsageError("--metric modelled-device-time: the " + arm->label + " arm '" + arm->variant.text() +
                       "' is not dq on sim; only the sim models the device time (use --metric measured)");
  if (!f.prepareDevice.empty() || !f.importDevice.empty())
    throw UsageError("--metric modelled-device-time is a sim metric; a device run measures wall time");
  for (const auto& [model, spec] : o.measure.injectSlowdown) {
    try {
      diff::modelledSlowdownFactor(spec);
    } catch (const std::invalid_argument& e) {
      throw UsageError("--inject-slowdown " + model + "=" + diff::slowdownSpecText(spec) + ": " + e.what());
    }
  }
}

void resolveDecisionMetric(const AbFlags& f, exec::Executor& executor, diff::AbOptions& o) {
  if (o.measure.metric != diff::DecisionMetric::ModelledDeviceTime)
    return;
  for (const exec::Arm* arm : {&o.base, &o.head})
    if (std::string why = executor.modelledUnavailable(*arm); !why.empty()) {
      if (f.metric == "auto") { // e.g. a base revision older than the modelled time: measure
        std::cerr << "note: --metric auto decides on the measured time: " << why << "\n";
        o.measure.metric = diff::DecisionMetric::Measured;
        return;
      }
      throw UsageError("--metric modelled-device-time: " + why + "; use --metric measured");
    }
  if (f.looks.empty()) {
    o.policy.looks = {1};
    o.policy.looks.insert(o.policy.looks.end(), stats::kDefaultLookRounds.begin(), stats::kDefaultLookRounds.end());
  }
  if (f.tailValue == "auto")
    o.policy.tailValue.reset();
}

} // namespace dynqual::cli
