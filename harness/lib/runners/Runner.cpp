#include "dynqual/runners/Runner.h"

#include "ArgvTemplate.h"

#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/process/Process.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;

namespace dynqual::runners {

namespace {

/// Makes untrusted text one line of at most `limit` characters.
std::string oneLine(const std::string& text, std::size_t limit = 500) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t' || static_cast<unsigned char>(c) < 0x20) {
      space = !out.empty();
      continue;
    }
    if (space)
      out += ' ';
    space = false;
    out += c;
  }
  if (out.size() > limit)
    out = out.substr(0, limit) + "...";
  return out;
}

/// The last non-empty line of a child's stderr, or "".
std::string lastLine(const std::string& text) {
  std::size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos)
    return "";
  std::size_t start = text.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return oneLine(text.substr(start, end - start + 1), 300);
}

std::string formatNumber(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string formatSeconds(double s) {
  return formatNumber(std::round(s * 1000) / 1000) + " s";
}

[[noreturn]] void malformed(const fs::path& file, const std::string& what) {
  throw RunnerFailure(FailureKind::MalformedResult, "", file.string() + ": " + what);
}

double finiteNonNegative(const nlohmann::json& doc, const char* key, const fs::path& file) {
  auto it = doc.find(key);
  if (it == doc.end())
    malformed(file, std::string("missing \"") + key + "\"");
  if (!it->is_number())
    malformed(file, std::string("\"") + key + "\" is not a number");
  double v = it->get<double>();
  if (!std::isfinite(v) || v < 0)
    malformed(file, std::string("\"") + key + "\" is " + formatNumber(v) + ", expected a finite number >= 0");
  return v;
}

std::string requiredString(const nlohmann::json& doc, const char* key, const fs::path& file) {
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_string())
    malformed(file, std::string("\"") + key + "\" must be a string");
  return it->get<std::string>();
}

} // namespace

const char* failureKindName(FailureKind kind) {
  switch (kind) {
  case FailureKind::Crashed:
    return "crashed";
  case FailureKind::TimedOut:
    return "timed out";
  case FailureKind::Exited:
    return "exited";
  case FailureKind::ReportedError:
    return "reported an error";
  case FailureKind::MalformedResult:
    return "malformed result";
  case FailureKind::BadOutputs:
    return "bad outputs";
  }
  return "failed";
}

RunnerFailure::RunnerFailure(FailureKind kind, std::string runner, std::string detail)
    : std::runtime_error((runner.empty() ? std::string() : "runner " + runner + ": ") + failureKindName(kind) + ": " +
                         detail),
      kind_(kind), runner_(std::move(runner)), detail_(std::move(detail)) {
}

const char* runnerClockName(RunnerClock clock) {
  return clock == RunnerClock::Wall ? "wall" : "process-cpu";
}

std::vector<std::string> buildArgv(const RunnerSpec& spec, const RunnerRequest& request) {
  if (request.reps < 1)
    throw std::invalid_argument("runner request: reps must be >= 1, got " + std::to_string(request.reps));
  if (request.warmup < 0)
    throw std::invalid_argument("runner request: warmup must be >= 0, got " + std::to_string(request.warmup));
  if (!std::isfinite(request.minSampleMs) || request.minSampleMs < 0)
    throw std::invalid_argument("runner request: minSampleMs must be a finite number >= 0, got " +
                                formatNumber(request.minSampleMs));
  if (request.protocol < kOldestProtocolVersion || request.protocol > kProtocolVersion)
    throw std::invalid_argument("runner request: protocol " + std::to_string(request.protocol) +
                                ", this driver speaks " + std::to_string(kOldestProtocolVersion) + " to " +
                                std::to_string(kProtocolVersion));
  if (request.protocol < 2 && request.clock != RunnerClock::Wall)
    throw std::invalid_argument("runner request: the " + std::string(runnerClockName(request.clock)) +
                                " clock needs runner protocol 2, the runner speaks " +
                                std::to_string(request.protocol));
  validateArgvTemplate(spec.argv, spec.origin, spec.name);
  bool clockPassed = passesClock(spec);
  if (clockPassed && request.protocol < 2)
    throw RunnerConfigError(spec.origin + ": runner " + spec.name +
                            ": argv passes {clock}, but the runner speaks protocol " +
                            std::to_string(request.protocol));
  if (!clockPassed && request.clock != RunnerClock::Wall)
    throw RunnerConfigError(spec.origin + ": runner " + spec.name + ": argv never passes {clock}, so the " +
                            runnerClockName(request.clock) + " clock cannot be asked of it");
  if (request.serve && request.protocol < 3)
    throw RunnerConfigError(spec.origin + ": runner " + spec.name +
                            ": serve mode needs runner protocol 3, the runner speaks " +
                            std::to_string(request.protocol));
  if (request.serve && !passesServe(spec))
    throw RunnerConfigError(spec.origin + ": runner " + spec.name +
                            ": argv never passes {serve}, so it cannot serve samples");

  std::vector<std::string> argv;
  for (const std::string& element : spec.argv) {
    if (element == "{serve}") {
      if (request.serve)
        argv.push_back("--serve");
      continue;
    }
    if (element == "{inputs}") {
      for (const auto& input : request.inputs) {
        argv.push_back("--input");
        argv.push_back(input.string());
      }
      continue;
    }
    std::string out;
    for (const auto& piece : detail::splitTemplate(element)) {
      if (!piece.placeholder)
        out += piece.text;
      else if (piece.text == "protocol")
        out += std::to_string(request.protocol);
      else if (piece.text == "model")
        out += request.model.string();
      else if (piece.text == "output_dir")
        out += request.outputDir.string();
      else if (piece.text == "reps")
        out += std::to_string(request.reps);
      else if (piece.text == "warmup")
        out += std::to_string(request.warmup);
      else if (piece.text == "min_sample_ms")
        out += formatNumber(request.minSampleMs);
      else if (piece.text == "clock")
        out += runnerClockName(request.clock);
    }
    argv.push_back(std::move(out));
  }
  return argv;
}

RunnerResult parseRunnerResult(const fs::path& outputDir, int childExitCode, const ResultExpectations& expect) {
  const fs::path file = outputDir / "result.json";
  const std::string exitText = "exited with code " + std::to_string(childExitCode);
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    if (childExitCode != 0)
      throw RunnerFailure(FailureKind::Exited, "", exitText + " and wrote no " + file.string());
    malformed(file, "not written");
  }
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in)
    malformed(file, "cannot be read");

  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) { // parse_error, or out_of_range for 1e999
    if (childExitCode != 0)
      throw RunnerFailure(FailureKind::Exited, "", exitText + "; " + file.string() + " is not valid JSON");
    malformed(file, std::string("not valid JSON: ") + e.what());
  }
  if (!doc.is_object())
    malformed(file, "not a JSON object");
  auto protocol = doc.find("protocol");
  if (protocol == doc.end())
    malformed(file, "missing \"protocol\"");
  if (!protocol->is_number_integer() || protocol->get<int64_t>() != expect.protocol)
    malformed(file,
              "speaks protocol " + oneLine(protocol->dump(), 40) + ", expected " + std::to_string(expect.protocol));
  auto ok = doc.find("ok");
  if (ok == doc.end() || !ok->is_boolean())
    malformed(file, "\"ok\" must be true or false");
  if (!ok->get<bool>()) {
    auto error = doc.find("error");
    std::string message = error != doc.end() && error->is_string() && !error->get<std::string>().empty()
                              ? oneLine(error->get<std::string>(), 1000)
                              : "(no error message in " + file.string() + ")";
    throw RunnerFailure(FailureKind::ReportedError, "", message);
  }
  if (childExitCode != 0)
    throw RunnerFailure(FailureKind::Exited, "", exitText + " although " + file.string() + " says ok");

  RunnerResult result;
  result.protocol = expect.protocol;
  result.runner = requiredString(doc, "runner", file);
  result.version = requiredString(doc, "version", file);
  if (expect.protocol >= 2) {
    // Samples of another clock than asked for would silently compare different things.
    std::string clock = requiredString(doc, "clock", file);
    if (clock != runnerClockName(expect.clock))
      malformed(file,
                "\"clock\" is \"" + oneLine(clock, 40) + "\", " + runnerClockName(expect.clock) + " was asked for");
    result.clock = expect.clock;
    if (auto threads = doc.find("threads"); threads != doc.end()) {
      if (!threads->is_object())
        malformed(file, "\"threads\" must be an object");
      result.threads = threads->dump();
    }
  }

  auto samples = doc.find("samples_ms");
  if (samples == doc.end() || !samples->is_array())
    malformed(file, "\"samples_ms\" must be an array of numbers");
  for (std::size_t i = 0; i < samples->size(); ++i) {
    const auto& s = (*samples)[i];
    if (!s.is_number())
      malformed(file, "samples_ms[" + std::to_string(i) + "] is " + oneLine(s.dump(), 40) + ", not a number");
    double v = s.get<double>();
    if (!std::isfinite(v) || v < 0)
      malformed(file,
                "samples_ms[" + std::to_string(i) + "] is " + formatNumber(v) + ", expected a finite number >= 0");
    result.samplesMs.push_back(v);
  }
  if (expect.reps >= 0 && result.samplesMs.size() != static_cast<std::size_t>(expect.reps))
    malformed(file, "has " + std::to_string(result.samplesMs.size()) + " samples, " + std::to_string(expect.reps) +
                        " were asked for");
  if (result.samplesMs.empty())
    malformed(file, "has no samples");

  auto iterations = doc.find("iterations_per_sample");
  if (iterations == doc.end() || !iterations->is_number_integer() || iterations->get<int64_t>() < 1)
    malformed(file, "\"iterations_per_sample\" must be an integer >= 1");
  result.iterationsPerSample = iterations->get<int64_t>();
  result.sessionMs = finiteNonNegative(doc, "session_ms", file);
  result.firstInferMs = finiteNonNegative(doc, "first_infer_ms", file);

  if (auto counters = doc.find("counters"); counters != doc.end()) {
    if (!counters->is_object())
      malformed(file, "\"counters\" must be an object of unsigned integers");
    for (const auto& [name, value] : counters->items()) {
      if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<int64_t>() >= 0))
        malformed(file, "counter \"" + name + "\" is " + oneLine(value.dump(), 40) + ", not an unsigned integer");
      result.counters[name] = value.get<uint64_t>();
    }
  }

  // Outputs: output_0.pb .. output_{K-1}.pb, nothing missing in between.
  static const std::regex outputName("output_(0|[1-9][0-9]{0,8})\\.pb");
  std::vector<bool> present;
  for (const auto& entry : fs::directory_iterator(outputDir, ec)) {
    std::smatch m;
    std::string name = entry.path().filename().string();
    if (!std::regex_match(name, m, outputName))
      continue;
    std::size_t k = std::stoul(m[1].str());
    if (k >= present.size())
      present.resize(k + 1, false);
    present[k] = true;
  }
  if (ec)
    throw RunnerFailure(FailureKind::BadOutputs, "", "cannot list " + outputDir.string() + ": " + ec.message());
  if (present.empty())
    throw RunnerFailure(FailureKind::BadOutputs, "", "no output_0.pb in " + outputDir.string());
  for (std::size_t k = 0; k < present.size(); ++k)
    if (!present[k])
      throw RunnerFailure(FailureKind::BadOutputs, "",
                          "output_" + std::to_string(present.size() - 1) + ".pb without output_" + std::to_string(k) +
                              ".pb in " + outputDir.string());
  if (!expect.outputNames.empty() && present.size() != expect.outputNames.size()) {
    std::string names;
    for (const auto& n : expect.outputNames)
      names += (names.empty() ? "" : ", ") + n;
    throw RunnerFailure(FailureKind::BadOutputs, "",
                        "wrote " + std::to_string(present.size()) + " outputs in " + outputDir.string() +
                            ", the model has " + std::to_string(expect.outputNames.size()) + " (" + names + ")");
  }
  for (std::size_t k = 0; k < present.size(); ++k) {
    RunnerOutput out;
    out.file = outputDir / ("output_" + std::to_string(k) + ".pb");
    try {
      out.tensor = onnxio::readTensorFile(out.file, out.name);
    } catch (const std::exception& e) {
      throw RunnerFailure(FailureKind::BadOutputs, "", oneLine(e.what()));
    }
    if (!expect.outputNames.empty() && out.name != expect.outputNames[k])
      throw RunnerFailure(FailureKind::BadOutputs, "",
                          out.file.string() + " is named '" + out.name + "', expected graph output '" +
                              expect.outputNames[k] + "'");
    result.outputs.push_back(std::move(out));
  }
  return result;
}

std::vector<std::string> prepareInvocation(const RunnerSpec& spec, const RunnerRequest& request) {
  std::vector<std::string> argv = buildArgv(spec, request);
  fs::path program = findProgram(argv[0]);
  if (program.empty())
    throw RunnerUnavailable(
        "runner " + spec.name + ": program '" + argv[0] + "' " +
        (argv[0].find('/') != std::string::npos ? "does not exist or is not executable" : "is not on PATH") +
        " (declared in " + spec.origin + ")");
  argv[0] = program.string();

  std::error_code ec;
  fs::create_directories(request.outputDir, ec);
  if (ec)
    throw RunnerUnavailable("runner " + spec.name + ": cannot create output folder " + request.outputDir.string() +
                            ": " + ec.message());
  static const std::regex stale("output_[0-9]+\\.pb|result\\.json(\\.tmp)?");
  for (const auto& entry : fs::directory_iterator(request.outputDir, ec)) {
    if (std::regex_match(entry.path().filename().string(), stale))
      fs::remove(entry.path(), ec);
  }
  return argv;
}

RunnerResult runRunner(const RunnerSpec& spec, const RunnerRequest& request, double timeoutSeconds,
                       const ResultExpectations& expect) {
  std::vector<std::string> argv = prepareInvocation(spec, request);
  const std::string model = request.model.filename().string();
  process::ProcessResult child = process::runChild(argv, timeoutSeconds);
  if (!child.started)
    throw RunnerUnavailable("runner " + spec.name + ": could not start " + argv[0] + ": " + child.error);
  std::string stderrLine = lastLine(child.err);
  std::string stderrSuffix = stderrLine.empty() ? "" : "; stderr: " + stderrLine;
  if (child.timedOut)
    throw RunnerFailure(FailureKind::TimedOut, spec.name,
                        "killed after " + formatSeconds(timeoutSeconds) + " running " + model);
  if (child.signal != 0)
    throw RunnerFailure(FailureKind::Crashed, spec.name,
                        "killed by signal " + std::to_string(child.signal) + " (" + strsignal(child.signal) +
                            ") running " + model + stderrSuffix);

  ResultExpectations withReps = expect;
  withReps.reps = request.reps;
  withReps.protocol = request.protocol;
  withReps.clock = request.clock;
  try {
    RunnerResult result = parseRunnerResult(request.outputDir, child.exitCode, withReps);
    result.childWallMs = child.wallMs;
    return result;
  } catch (const RunnerFailure& f) {
    std::string detail = f.detail();
    if (f.kind() == FailureKind::Exited)
      detail += " running " + model + stderrSuffix;
    throw RunnerFailure(f.kind(), spec.name, detail);
  }
}

int probeProtocol(const RunnerSpec& spec, double timeoutSeconds) {
  if (spec.versionArgv.empty())
    return 1;
  std::vector<std::string> argv = spec.versionArgv;
  fs::path program = findProgram(argv[0]);
  const std::string what = "runner " + spec.name + " (declared in " + spec.origin + ")";
  if (program.empty())
    throw RunnerUnavailable(what + ": program '" + argv[0] + "' of protocol_version_argv not found");
  argv[0] = program.string();
  process::ProcessResult child = process::runChild(argv, timeoutSeconds);
  if (!child.started)
    throw RunnerUnavailable(what + ": could not start " + argv[0] + ": " + child.error);
  std::string out = child.out.substr(0, child.out.find('\n'));
  int version = 0;
  auto [end, ec] = std::from_chars(out.data(), out.data() + out.size(), version);
  bool parsed = ec == std::errc() && end == out.data() + out.size();
  if (child.timedOut || child.signal != 0 || child.exitCode != 0 || !parsed || version < kOldestProtocolVersion ||
      version > kProtocolVersion) {
    std::string stderrLine = lastLine(child.err);
    throw RunnerUnavailable(what + ": `" + oneLine(spec.versionArgv.back(), 80) + "` printed '" + oneLine(out, 40) +
                            "'" + (child.exitCode != 0 ? " and exited " + std::to_string(child.exitCode) : "") +
                            (child.timedOut ? " (timed out)" : "") +
                            (stderrLine.empty() ? "" : "; stderr: " + stderrLine) +
                            "; this driver speaks runner protocol " + std::to_string(kOldestProtocolVersion) + " to " +
                            std::to_string(kProtocolVersion));
  }
  return version;
}

} // namespace dynqual::runners
