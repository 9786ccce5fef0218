#include "dynqual/runners/RunnerSession.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>

namespace fs = std::filesystem;

namespace dynqual::runners {

namespace {

std::string clip(const std::string& s, size_t limit = 200) {
  return s.size() <= limit ? s : s.substr(0, limit) + "...";
}

} // namespace

RunnerSession::RunnerSession(const RunnerSpec& spec, const RunnerRequest& request, double timeoutSeconds, int cpu)
    : spec_(spec), request_(request), timeoutSeconds_(timeoutSeconds) {
  if (!request.serve)
    throw std::invalid_argument("RunnerSession: the request does not ask for serve mode");
  std::vector<std::string> argv = prepareInvocation(spec, request);
  process::ProcessSpec child;
  child.argv = argv;
  child.cpu = cpu;
  std::string error;
  if (!child_.start(child, error))
    throw RunnerUnavailable("runner " + spec.name + ": could not start: " + error);
  std::string text = expectLine("ready", "start");
  auto doc = nlohmann::json::parse(text);
  auto k = doc.find("iterations_per_sample");
  if (k == doc.end() || !k->is_number_integer() || k->get<int64_t>() < 1)
    throw RunnerFailure(FailureKind::MalformedResult, spec_.name,
                        "serve: the ready line needs an integer iterations_per_sample >= 1: " + clip(text));
  k_ = k->get<int64_t>();
}

RunnerSession::~RunnerSession() = default;

std::string RunnerSession::endChild(double graceSeconds) {
  if (!child_.running())
    return end_;
  process::ProcessResult r = child_.finish(graceSeconds, graceSeconds <= 0);
  if (r.timedOut || child_.killedAfterGrace())
    end_ = "did not end within " + std::to_string(static_cast<int>(std::ceil(graceSeconds))) + " s (killed)";
  else if (r.signal != 0)
    end_ = "killed by signal " + std::to_string(r.signal) + " (" + strsignal(r.signal) + ")";
  else
    end_ = r.exitCode == 0 ? "" : "exited with status " + std::to_string(r.exitCode);
  return end_;
}

void RunnerSession::failEnded(const char* command) {
  ended_ = true;
  std::string end = endChild(5);
  std::string err = child_.lastStderrLine();
  std::string suffix = err.empty() ? "" : "; stderr: " + err;
  const std::string model = request_.model.filename().string();
  if (end.rfind("killed by signal", 0) == 0)
    throw RunnerFailure(FailureKind::Crashed, spec_.name,
                        "serve: " + end + " at '" + command + "' running " + model + suffix);
  throw RunnerFailure(FailureKind::Exited, spec_.name,
                      "serve: the runner " + (end.empty() ? std::string("exited with status 0") : end) + " at '" +
                          command + "' running " + model + suffix);
}

std::string RunnerSession::expectLine(const char* key, const char* command) {
  std::string line;
  process::LineRead got = child_.readLine(line, timeoutSeconds_);
  if (got != process::LineRead::Line) {
    if (got == process::LineRead::TimedOut) {
      ended_ = true;
      endChild(0);
      throw RunnerFailure(FailureKind::TimedOut, spec_.name,
                          "serve: no answer to '" + std::string(command) + "' within " +
                              std::to_string(static_cast<int>(std::ceil(timeoutSeconds_))) + " s running " +
                              request_.model.filename().string());
    }
    failEnded(command);
  }
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception&) {
    throw RunnerFailure(FailureKind::MalformedResult, spec_.name,
                        "serve: '" + std::string(command) + "' was answered by a line that is not JSON: " + clip(line));
  }
  if (!doc.is_object())
    throw RunnerFailure(FailureKind::MalformedResult, spec_.name,
                        "serve: '" + std::string(command) + "' was answered by a non-object: " + clip(line));
  if (auto e = doc.find("error"); e != doc.end())
    throw RunnerFailure(FailureKind::ReportedError, spec_.name,
                        e->is_string() ? e->get<std::string>() : clip(e->dump()));
  if (!doc.contains(key))
    throw RunnerFailure(FailureKind::MalformedResult, spec_.name,
                        "serve: '" + std::string(command) + "' needs a line with \"" + key + "\", got " + clip(line));
  return line;
}

double RunnerSession::sample() {
  if (ended_)
    throw RunnerFailure(FailureKind::Exited, spec_.name, "serve: sample asked of an ended session");
  if (!child_.writeLine("sample"))
    failEnded("sample");
  auto doc = nlohmann::json::parse(expectLine("sample_ms", "sample"));
  const auto& v = doc["sample_ms"];
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
    throw RunnerFailure(FailureKind::MalformedResult, spec_.name,
                        "serve: sample_ms must be a finite number >= 0, got " + clip(v.dump()));
  ++samples_;
  return v.get<double>();
}

RunnerResult RunnerSession::finish() {
  if (ended_)
    throw RunnerFailure(FailureKind::Exited, spec_.name, "serve: finish asked of an ended session");
  if (!child_.writeLine("finish"))
    failEnded("finish");
  expectLine("finished", "finish");
  ended_ = true;
  std::string end = endChild(timeoutSeconds_);
  if (!end.empty())
    throw RunnerFailure(FailureKind::Exited, spec_.name, "serve: after finish the runner " + end);
  ResultExpectations expect;
  expect.reps = std::max(1, samples_);
  expect.protocol = request_.protocol;
  expect.clock = request_.clock;
  try {
    return parseRunnerResult(request_.outputDir, 0, expect);
  } catch (const RunnerFailure& f) {
    throw RunnerFailure(f.kind(), spec_.name, f.detail());
  }
}

void RunnerSession::quit() {
  if (ended_)
    return;
  ended_ = true;
  child_.writeLine("quit");
  std::string end = endChild(timeoutSeconds_);
  if (!end.empty())
    throw RunnerFailure(end.rfind("killed by signal", 0) == 0 ? FailureKind::Crashed : FailureKind::Exited, spec_.name,
                        "serve: at quit the runner " + end);
}

} // namespace dynqual::runners
