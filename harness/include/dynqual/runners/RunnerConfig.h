#pragma once
// Runner declarations: the built-in `ort:cpu` runner and external `ext:NAME` runners declared in a
// JSON config file. The protocol a runner speaks is specified in docs/runners.md.

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dynqual::runners {

/// The newest runner protocol version this code speaks (docs/runners.md): 2 added --clock
/// (`{clock}`) and the result's "clock"; 3 added serve mode (`{serve}`, samples taken one at a
/// time on request). A driver keeps speaking every version from kOldestProtocolVersion, so
/// runners written for protocol 1 keep working (wall clock only).
inline constexpr int kProtocolVersion = 3;
inline constexpr int kOldestProtocolVersion = 1;

/// The runner cannot be used on this machine (node, the runner script or onnxruntime-node is
/// missing, the program is not on PATH): an infrastructure problem, not a result of the model.
/// The message is one line saying what is missing and how to install it.
class RunnerUnavailable : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A runner config file is unreadable or invalid, or a variant names no declared runner.
/// The message is one line naming the file and, where it applies, the runner.
class RunnerConfigError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// One runner: how to invoke it. argv elements may hold placeholders (see buildArgv in
/// Runner.h): {protocol} {model} {output_dir} {reps} {warmup} {min_sample_ms} {clock} inside any
/// element, {inputs} and {serve} as whole elements; "{{" and "}}" are literal braces.
struct RunnerSpec {
  std::string name;              ///< variant name: "ort:cpu" or "ext:NAME"
  std::vector<std::string> argv; ///< argument template; argv[0] is a path or a name looked up on PATH
  std::string origin;            ///< where it was declared: the config file path, or "built-in"
  /// A command (no placeholders) that prints the protocol version the runner speaks, i.e. the
  /// runner's `--protocol-version`. Empty: the runner is taken to speak protocol 1.
  std::vector<std::string> versionArgv;
};

/// True when spec.argv passes {clock}: only then can a run of it be asked for another clock than
/// wall.
bool passesClock(const RunnerSpec& spec);

/// True when spec.argv passes {serve}: only then can the runner be driven in serve mode
/// (runner protocol 3, docs/runners.md "Serve mode").
bool passesServe(const RunnerSpec& spec);

/// External runners declared in a JSON file:
///   {"runners": {"NAME": {"argv": ["python3", "/path/r.py", "--protocol", "{protocol}", ...],
///                         "protocol_version_argv": ["python3", "/path/r.py", "--protocol-version"]}}}
/// NAME is [A-Za-z0-9_.-]+ and is used as the variant `ext:NAME`. Every argv must be a non-empty
/// array of strings whose placeholders are known, with {inputs} as a whole element, and must
/// use {model}, {output_dir} and {inputs} (the per-case arguments). protocol_version_argv is
/// optional (without it the runner speaks protocol 1), holds no placeholders, and is required
/// when argv passes {clock} or {serve}. Unknown keys are errors.
class RunnerConfig {
public:
  RunnerConfig() = default;

  /// Reads and validates `file`. Throws RunnerConfigError naming the file (and the runner) on an
  /// unreadable file, malformed JSON or an invalid declaration.
  static RunnerConfig load(const std::filesystem::path& file);

  /// Validates JSON text; `origin` names it in errors (normally the file path).
  static RunnerConfig parse(std::string_view json, const std::string& origin);

  /// The runner declared as NAME (without "ext:"), or nullptr.
  const RunnerSpec* find(std::string_view name) const;

  /// Declared names (without "ext:"), sorted.
  std::vector<std::string> names() const;

private:
  std::map<std::string, RunnerSpec, std::less<>> runners_;
};

/// Checks an argv template: non-empty, argv[0] not empty, every "{...}" a known placeholder,
/// {inputs} only as a whole element, {model}, {output_dir} and {inputs} present. Throws
/// RunnerConfigError "<origin>: runner <name>: ..." on the first problem.
void validateArgvTemplate(const std::vector<std::string>& argv, const std::string& origin, const std::string& name);

/// Folder of the ort-node runner (holds ort-runner.js and node_modules/): $DYNQUAL_ORT_RUNNER when
/// set (a folder, or the path of ort-runner.js whose folder is taken), else
/// <DYNQUAL_SOURCE_DIR>/harness/runners/ort-node.
std::filesystem::path ortRunnerDir();

/// The built-in `ort:cpu` runner: node (found on PATH) running ort-runner.js, invoked for protocol
/// version `protocol` (2 passes --clock {clock}; 1 does not, for an older ort-runner.js named by
/// DYNQUAL_ORT_RUNNER); versionArgv is `node ort-runner.js --protocol-version`. Throws
/// RunnerUnavailable when node, ort-runner.js or node_modules/onnxruntime-node is missing, with
/// the install hint (scripts/setup).
RunnerSpec ortCpuRunner(int protocol = kProtocolVersion);

/// Resolves a variant: "ort:cpu" -> ortCpuRunner(ortProtocol); "ext:NAME" -> the declaration in
/// `config`. Throws RunnerConfigError for "ext:NAME" without a config or a NAME the config lacks,
/// and for a variant that is neither; RunnerUnavailable as ortCpuRunner.
RunnerSpec resolveRunner(std::string_view variant, const RunnerConfig* config, int ortProtocol = kProtocolVersion);

/// The protocol version `spec`'s runner speaks: 1 when spec.versionArgv is empty, else what that
/// command prints on its first line (it is run without a shell, limited to `timeoutSeconds`).
/// Throws RunnerUnavailable naming the runner when the command cannot be started, fails, or prints
/// a version outside kOldestProtocolVersion..kProtocolVersion. (A template passing {clock} for a
/// runner that says 1 is refused by buildArgv.)
int probeProtocol(const RunnerSpec& spec, double timeoutSeconds = 30);

/// `program` when it holds a '/', else the first executable PATH entry named `program`; "" when
/// none is found.
std::filesystem::path findProgram(const std::string& program);

} // namespace dynqual::runners
