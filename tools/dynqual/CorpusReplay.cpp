// Replaying one corpus case (CorpusReplay.h).
#include "CorpusReplay.h"
#include "Commands.h"

#include "dynqual/compare/Compare.h"
#include "dynqual/fuzz/Oracle.h"
#include "dynqual/onnx/ModelLoader.h"
#include "dynqual/onnx/TensorProtoIO.h"

#include <algorithm>
#include <fstream>

namespace fs = std::filesystem;

namespace dynqual::cli {

#ifndef DYNQUAL_SOURCE_DIR
#define DYNQUAL_SOURCE_DIR "."
#endif

fs::path defaultCorpus() {
  return fs::path(DYNQUAL_SOURCE_DIR) / "corpus";
}

nlohmann::json readMeta(const fs::path& dir) {
  std::ifstream in(dir / "meta.json");
  if (!in)
    return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw UsageError((dir / "meta.json").string() + ": not a JSON object");
  return j;
}

namespace {

std::vector<fs::path> sortedFiles(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0)
      files.push_back(e.path());
  std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) {
    auto num = [](const fs::path& p) {
      std::string s = p.stem().string();
      return std::stoi(s.substr(s.find_last_of('_') + 1));
    };
    return num(a) < num(b);
  });
  return files;
}

} // namespace

Replay replay(const fs::path& dir, const std::string& variantText, bool bitExact, exec::Executor& executor,
              bool& detected, std::string& why) {
  detected = false;
  onnx::ModelProto model = onnxio::loadModel(dir / "model.onnx");
  std::vector<std::vector<fs::path>> inputs;
  std::vector<std::vector<Tensor>> expected;
  std::vector<std::string> names;
  for (const auto& o : model.graph().output())
    names.push_back(o.name());
  std::vector<fs::path> sets = sortedFiles(dir, "test_data_set_");
  fs::path generated = executor.config().workDir / "inputs" / dir.filename();
  if (!sets.empty()) {
    for (const auto& s : sets) {
      inputs.push_back(sortedFiles(s, "input_"));
      std::vector<Tensor> out;
      for (const auto& f : sortedFiles(s, "output_"))
        out.push_back(onnxio::readTensorFile(f));
      expected.push_back(std::move(out));
    }
  } else {
    fuzz::PreparedCase pc = fuzz::prepareCase(model, 4, 1, -1, /*check=*/false);
    auto specs = onnxio::describeInputs(model);
    for (size_t b = 0; b < pc.bindings.size(); ++b) {
      fs::path d = generated / std::to_string(b);
      fs::create_directories(d);
      std::vector<fs::path> files;
      for (size_t i = 0; i < pc.inputs[b].size(); ++i) {
        files.push_back(d / ("input_" + std::to_string(i) + ".pb"));
        onnxio::writeTensorFile(files.back(), pc.inputs[b][i], specs[i].name);
      }
      inputs.push_back(files);
    }
    expected = pc.expected;
  }
  exec::Arm arm;
  arm.label = "corpus";
  arm.variant = exec::parseVariant(variantText);
  arm.binDir = exec::selfBinDir();
  exec::PreparedModel pm;
  try {
    pm = executor.prepare(arm, dir);
  } catch (const exec::ExecError& e) {
    if (e.stage() == exec::Stage::Infra)
      throw;
    detected = true;
    why = e.what();
    return {};
  }
  compare::CompareOptions opts;
  opts.bitExact = bitExact;
  for (size_t b = 0; b < inputs.size(); ++b) {
    fs::path out = executor.config().workDir / "out" / dir.filename() / std::to_string(b);
    fs::create_directories(out);
    try {
      exec::ExecResult r = executor.execute(pm, inputs[b], {}, out);
      compare::Comparison c = compare::compareOutputs(names, r.outputs, expected[b], opts);
      if (c.verdict == compare::Verdict::Fail) {
        detected = true;
        why = "data set " + std::to_string(b) + ": " + c.reason;
        return {};
      }
    } catch (const exec::ExecError& e) {
      if (e.stage() == exec::Stage::Infra)
        throw;
      detected = true;
      why = "data set " + std::to_string(b) + ": " + e.what();
      return {};
    }
  }
  return {};
}

} // namespace dynqual::cli
