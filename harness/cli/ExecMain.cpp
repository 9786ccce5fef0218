// dynqual-exec: runs one compiled program (.dqp) on a device, in its own process.
//
// This binary links only the MLIR-free runtime and the tensor file I/O: a crash, trap or hang here
// is reported by the parent as a failed row, never a crashed harness.
#include "dq/runtime/Error.h"
#include "dq/runtime/ProgramIO.h"
#include "dq/runtime/Runtime.h"
#include "dq/runtime/SimDevice.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/run/TensorBridge.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>

namespace {

/// Exit codes: 0 ran, 1 the run failed (trap, bad input, runtime error), 2 usage error.
constexpr int kRunFailed = 1;

nlohmann::json countersJson(const dq::rt::Counters& c) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : c.items())
    j[name] = value;
  return j;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"dynqual-exec: run a compiled dynqual program (.dqp) on a device.\n"
               "Reads inputs from TensorProto .pb files, writes output_N.pb files and prints one\n"
               "JSON object (outputs, counters, timings) on stdout. Exit: 0 ran, 1 run failed, 2 usage."};
  std::string programPath, device = "sim", outputDir;
  std::vector<std::string> inputs;
  app.add_option("program", programPath, "program artifact (.dqp; sidecar .dqp.bin beside it)")->required();
  app.add_option("--input", inputs, "input_N.pb files in input order")->expected(0, -1);
  app.add_option("--output-dir", outputDir, "folder for output_N.pb files (created)")->required();
  app.add_option("--device", device, "device to run on")->check(CLI::IsMember({"sim"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // CLI11's own codes (105, 106, ...) are not ours
  }

  nlohmann::json result;
  try {
    dq::rt::Program program = dq::rt::readProgram(programPath);
    std::vector<dq::rt::HostTensor> hostInputs;
    for (const auto& in : inputs)
      hostInputs.push_back(dynqual::run::toHostTensor(dynqual::onnxio::readTensorFile(in)));
    dq::rt::SimDevice sim;
    dq::rt::RunOptions options;
    options.programName = programPath;
    dq::rt::RunResult run = dq::rt::runProgram(program, sim, hostInputs, options);
    std::filesystem::create_directories(outputDir);
    nlohmann::json outs = nlohmann::json::array();
    for (size_t i = 0; i < run.outputs.size(); ++i) {
      auto file = std::filesystem::path(outputDir) / ("output_" + std::to_string(i) + ".pb");
      std::string name = i < program.outputs.size() ? program.outputs[i].name : "";
      dynqual::onnxio::writeTensorFile(file, dynqual::run::fromHostTensor(run.outputs[i]), name);
      outs.push_back(file.string());
    }
    result = {{"ok", true}, {"outputs", outs}, {"counters", countersJson(run.counters)},
              {"execute_ms", run.executeMs}, {"total_ms", run.totalMs}};
    std::cout << result.dump() << "\n";
    return 0;
  } catch (const std::exception& e) {
    result = {{"ok", false}, {"error", e.what()}};
    std::cout << result.dump() << "\n";
    std::cerr << "dynqual-exec: " << e.what() << "\n";
    return kRunFailed;
  }
}
