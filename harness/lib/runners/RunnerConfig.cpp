#include "dynqual/runners/RunnerConfig.h"

#include "ArgvTemplate.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

#ifndef DYNQUAL_SOURCE_DIR
#error "DYNQUAL_SOURCE_DIR must name the source tree (set by harness/lib/runners/CMakeLists.txt)"
#endif

namespace fs = std::filesystem;

namespace dynqual::runners {

namespace {

bool validRunnerName(std::string_view name) {
  if (name.empty())
    return false;
  for (char c : name) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok)
      return false;
  }
  return true;
}

bool isExecutableFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

} // namespace

void validateArgvTemplate(const std::vector<std::string>& argv, const std::string& origin, const std::string& name) {
  auto fail = [&](const std::string& what) { throw RunnerConfigError(origin + ": runner " + name + ": " + what); };
  if (argv.empty())
    fail("argv is empty");
  if (argv[0].empty())
    fail("argv[0] (the program) is empty");
  bool hasModel = false, hasOutputDir = false, hasInputs = false;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    std::vector<detail::Piece> pieces;
    try {
      pieces = detail::splitTemplate(argv[i]);
    } catch (const std::invalid_argument& e) {
      fail("argv[" + std::to_string(i) + "] \"" + argv[i] + "\": " + e.what());
    }
    for (const auto& p : pieces) {
      if (!p.placeholder)
        continue;
      if (!detail::isKnownPlaceholder(p.text))
        fail("argv[" + std::to_string(i) + "] \"" + argv[i] + "\": unknown placeholder {" + p.text +
             "} (known: " + detail::knownPlaceholderList() + ")");
      if (p.text == "inputs" && argv[i] != "{inputs}")
        fail("argv[" + std::to_string(i) + "] \"" + argv[i] +
             "\": {inputs} expands to several arguments and must be a whole argv element");
      if (p.text == "serve" && argv[i] != "{serve}")
        fail("argv[" + std::to_string(i) + "] \"" + argv[i] +
             "\": {serve} expands to --serve or to nothing and must be a whole argv element");
      if (i == 0)
        fail("argv[0] (the program) may not hold a placeholder");
      hasModel |= p.text == "model";
      hasOutputDir |= p.text == "output_dir";
      hasInputs |= p.text == "inputs";
    }
  }
  if (!hasModel)
    fail("argv never passes {model}");
  if (!hasOutputDir)
    fail("argv never passes {output_dir}");
  if (!hasInputs)
    fail("argv never passes {inputs}");
}

RunnerConfig RunnerConfig::load(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw RunnerConfigError(file.string() + ": cannot open runner config file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    throw RunnerConfigError(file.string() + ": cannot read runner config file");
  return parse(text.str(), file.string());
}

RunnerConfig RunnerConfig::parse(std::string_view text, const std::string& origin) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) { // parse_error, or out_of_range for 1e999
    throw RunnerConfigError(origin + ": malformed JSON: " + e.what());
  }
  if (!doc.is_object())
    throw RunnerConfigError(origin + ": expected a JSON object {\"runners\": {...}}");
  for (const auto& [key, value] : doc.items())
    if (key != "runners")
      throw RunnerConfigError(origin + ": unknown key \"" + key + "\" (expected \"runners\")");
  auto it = doc.find("runners");
  if (it == doc.end() || !it->is_object())
    throw RunnerConfigError(origin + ": \"runners\" must be an object of NAME: {\"argv\": [...]}");

  RunnerConfig config;
  for (const auto& [name, decl] : it->items()) {
    if (!validRunnerName(name))
      throw RunnerConfigError(origin + ": runner name \"" + name + "\" must be letters, digits, '_', '-' or '.'");
    auto fail = [&](const std::string& what) { throw RunnerConfigError(origin + ": runner " + name + ": " + what); };
    if (!decl.is_object())
      fail("declaration must be an object {\"argv\": [...]}");
    for (const auto& [key, value] : decl.items())
      if (key != "argv" && key != "protocol_version_argv")
        fail("unknown key \"" + key + "\" (expected \"argv\" or \"protocol_version_argv\")");
    auto argvIt = decl.find("argv");
    if (argvIt == decl.end() || !argvIt->is_array())
      fail("\"argv\" must be an array of strings");
    RunnerSpec spec;
    spec.name = "ext:" + name;
    spec.origin = origin;
    for (const auto& element : *argvIt) {
      if (!element.is_string())
        fail("\"argv\" must be an array of strings, found " + std::string(element.type_name()));
      spec.argv.push_back(element.get<std::string>());
    }
    validateArgvTemplate(spec.argv, origin, name);
    if (auto v = decl.find("protocol_version_argv"); v != decl.end()) {
      if (!v->is_array() || v->empty())
        fail("\"protocol_version_argv\" must be a non-empty array of strings");
      for (const auto& element : *v) {
        if (!element.is_string())
          fail("\"protocol_version_argv\" must be an array of strings, found " + std::string(element.type_name()));
        std::string text = element.get<std::string>();
        if (text.find('{') != std::string::npos || text.find('}') != std::string::npos)
          fail("\"protocol_version_argv\" element \"" + text + "\" holds a brace; it takes no placeholders");
        spec.versionArgv.push_back(std::move(text));
      }
    }
    // A runner that knows --clock speaks protocol 2, which the driver can only learn by asking it.
    if (passesClock(spec) && spec.versionArgv.empty())
      fail("argv passes {clock} (protocol 2) but no \"protocol_version_argv\" says which protocol the runner speaks");
    if (passesServe(spec) && spec.versionArgv.empty())
      fail("argv passes {serve} (protocol 3) but no \"protocol_version_argv\" says which protocol the runner speaks");
    config.runners_.emplace(name, std::move(spec));
  }
  return config;
}

const RunnerSpec* RunnerConfig::find(std::string_view name) const {
  auto it = runners_.find(name);
  return it == runners_.end() ? nullptr : &it->second;
}

std::vector<std::string> RunnerConfig::names() const {
  std::vector<std::string> out;
  for (const auto& [name, spec] : runners_)
    out.push_back(name);
  return out;
}

fs::path findProgram(const std::string& program) {
  if (program.empty())
    return {};
  if (program.find('/') != std::string::npos)
    return isExecutableFile(program) ? fs::path(program) : fs::path();
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos)
      end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    if (isExecutableFile(candidate))
      return candidate;
    start = end + 1;
  }
  return {};
}

fs::path ortRunnerDir() {
  if (const char* env = std::getenv("DYNQUAL_ORT_RUNNER"); env && *env) {
    fs::path p(env);
    std::error_code ec;
    if (fs::is_regular_file(p, ec))
      return p.parent_path();
    return p;
  }
  return fs::path(DYNQUAL_SOURCE_DIR) / "harness" / "runners" / "ort-node";
}

namespace {

bool passesPlaceholder(const RunnerSpec& spec, const std::string& name) {
  for (const auto& element : spec.argv) {
    std::vector<detail::Piece> pieces;
    try {
      pieces = detail::splitTemplate(element);
    } catch (const std::invalid_argument&) {
      continue; // validateArgvTemplate reports it
    }
    for (const auto& p : pieces)
      if (p.placeholder && p.text == name)
        return true;
  }
  return false;
}

} // namespace

bool passesClock(const RunnerSpec& spec) {
  return passesPlaceholder(spec, "clock");
}

bool passesServe(const RunnerSpec& spec) {
  return passesPlaceholder(spec, "serve");
}

RunnerSpec ortCpuRunner(int protocol) {
  fs::path dir = ortRunnerDir();
  fs::path script = dir / "ort-runner.js";
  std::error_code ec;
  if (!fs::is_regular_file(script, ec))
    throw RunnerUnavailable("ort:cpu: runner script " + script.string() +
                            " not found (set DYNQUAL_ORT_RUNNER to the ort-node runner folder)");
  fs::path node = findProgram("node");
  if (node.empty())
    node = findProgram("nodejs");
  if (node.empty())
    throw RunnerUnavailable("ort:cpu: node is not on PATH; install it with scripts/setup "
                            "(Debian packages nodejs and npm)");
  if (!fs::is_regular_file(dir / "node_modules" / "onnxruntime-node" / "package.json", ec))
    throw RunnerUnavailable("ort:cpu: onnxruntime-node is not installed in " + (dir / "node_modules").string() +
                            "; run scripts/setup (it runs npm ci --ignore-scripts in " + dir.string() + ")");
  RunnerSpec spec;
  spec.name = "ort:cpu";
  spec.origin = "built-in";
  spec.argv = {node.string(), script.string(), "--protocol",      "{protocol}",      "--model",
               "{model}",     "--output-dir",  "{output_dir}",    "--reps",          "{reps}",
               "--warmup",    "{warmup}",      "--min-sample-ms", "{min_sample_ms}", "{inputs}"};
  if (protocol >= 2)
    spec.argv.insert(spec.argv.end() - 1, {"--clock", "{clock}"});
  if (protocol >= 3)
    spec.argv.insert(spec.argv.end() - 1, "{serve}");
  spec.versionArgv = {node.string(), script.string(), "--protocol-version"};
  return spec;
}

RunnerSpec resolveRunner(std::string_view variant, const RunnerConfig* config, int ortProtocol) {
  if (variant == "ort:cpu")
    return ortCpuRunner(ortProtocol);
  if (variant.substr(0, 4) == "ext:") {
    std::string_view name = variant.substr(4);
    if (!config)
      throw RunnerConfigError("variant " + std::string(variant) + " needs a runner config file declaring \"" +
                              std::string(name) + "\"");
    const RunnerSpec* spec = config->find(name);
    if (!spec) {
      std::string known;
      for (const auto& n : config->names())
        known += (known.empty() ? "" : ", ") + n;
      throw RunnerConfigError("variant " + std::string(variant) + ": no runner \"" + std::string(name) +
                              "\" in the runner config (declared: " + (known.empty() ? "none" : known) + ")");
    }
    return *spec;
  }
  throw RunnerConfigError("unknown runner variant \"" + std::string(variant) + "\" (expected ort:cpu or ext:NAME)");
}

} // namespace dynqual::runners
