#pragma once
// The measurement choices ab, gate and calibrate resolve from their flags and arms.
#include "AbFlags.h"

#include "dynqual/diff/AbTypes.h"
#include "dynqual/exec/Executor.h"

#include <string>

namespace dynqual::cli {

/// The clock `choice` (auto, wall, thread-cpu, process-cpu) names for these arms. A CPU clock
/// leaves out the time other processes take from a run, but each kind of arm reads its own scope:
/// dq on sim the runtime's thread (all of a sim run's work), a runner its whole process (run on
/// one onnxruntime thread). Those readings are not comparable with each other, so auto picks a
/// CPU clock only when both arms read the same one, and wall otherwise (dq against ort, hip,
/// protocol 1 binaries or runners). Throws UsageError when a forced CPU clock is asked of an arm
/// that cannot provide it.
exec::TimingClock resolveClock(const std::string& choice, const exec::Arm& base, const exec::Arm& head,
                               exec::Executor& executor);

/// The interleaving `choice` (auto, process, sample) names for these arms: sample needs both arms
/// to serve samples (Executor::canServe). Throws UsageError when sample is forced on an arm that
/// cannot.
diff::Interleave resolveInterleave(const std::string& choice, const exec::Arm& base, const exec::Arm& head,
                                   exec::Executor& executor);

/// --metric into o.measure.metric (the flags' injections already in o). For modelled-device-time
/// it checks what needs no process: both arms dq on sim, no device split, only shift injections
/// (a modelled time has no run-to-run spread to change). Throws UsageError naming the arm, flag or
/// injection otherwise.
/// `auto` (the gate's default) chooses modelled-device-time where it can be had (both arms dq on
/// sim, no device split, only shift injections) and measured otherwise, without throwing.
void applyDecisionMetric(const AbFlags& f, diff::AbOptions& o);

/// For modelled-device-time, once the arms can be probed: each must report the modelled device
/// time (Executor::modelledUnavailable; UsageError naming the arm otherwise), the looks default to
/// 1 then the usual 12..64 (a constant series is decided exactly at the first look), and
/// --tail-value auto is none (every round value of a constant arm is the same). Nothing for
/// measured. Under `auto`, an arm that cannot report it (an older dynqual-exec) turns the run to
/// measured with a note on stderr instead of an error.
void resolveDecisionMetric(const AbFlags& f, exec::Executor& executor, diff::AbOptions& o);

/// The CPU of --pin-cpu: auto = the last CPU this process may run on, none = -1, or a number that
/// must be one this process may run on. Throws UsageError for anything else.
int resolvePinCpu(const std::string& choice);

} // namespace dynqual::cli
