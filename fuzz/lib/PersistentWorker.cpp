#include "dynqual/fuzz/PersistentWorker.h"

#include "dynqual/fuzz/WorkerLoop.h"

namespace fs = std::filesystem;

namespace dynqual::fuzz {

PersistentWorker::PersistentWorker(std::vector<std::string> argv, uint64_t memoryLimitBytes)
    : argv_(std::move(argv)), memoryLimitBytes_(memoryLimitBytes) {
}

WorkerOutcome PersistentWorker::runCase(uint64_t seed, const fs::path& workDir, double timeoutSeconds) {
  WorkerOutcome o;
  if (!child_.running()) {
    std::string error;
    if (!child_.start(argv_, memoryLimitBytes_, error)) {
      o.failure.error = error;
      o.why = "cannot start the fuzz worker " + argv_.at(0) + ": " + error;
      return o;
    }
    ++starts_;
  }
  process::ServedReply r = child_.request(workerRequestLine(seed, workDir), timeoutSeconds);
  o.wallMs = r.wallMs;
  if (r.answered) {
    nlohmann::json j = nlohmann::json::parse(r.line, nullptr, false);
    if (j.is_object() && j.contains("infra")) {
      o.kind = WorkerOutcome::Kind::Infra;
      o.reply = std::move(j);
      return o;
    }
    if (j.is_object() && j.contains("seed") && j.contains("findings")) {
      o.kind = WorkerOutcome::Kind::Report;
      o.reply = std::move(j);
      return o;
    }
    o.why = j.is_object() && j.contains("case_error") && j.at("case_error").is_string()
                ? "worker: " + j.at("case_error").get<std::string>()
                : "worker answered something that is not a case report: " + r.line.substr(0, 200);
  }
  o.failure = child_.finish(1, r.timedOut);
  if (o.why.empty()) {
    std::string abnormal = o.failure.describeAbnormalEnd(timeoutSeconds);
    o.why = "persistent fuzz worker " +
            (abnormal.empty() ? "exited " + std::to_string(o.failure.exitCode) + " without answering" : abnormal);
  }
  return o;
}

} // namespace dynqual::fuzz

namespace dynqual::fuzz {

process::ProcessResult PersistentWorker::finish() {
  return child_.finish(1);
}

} // namespace dynqual::fuzz
