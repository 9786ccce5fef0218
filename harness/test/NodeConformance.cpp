#include "NodeConformance.h"

#include "dynqual/compare/Compare.h"
#include "dynqual/compare/MovementGraph.h"
#include "dynqual/onnx/GraphSignature.h"
#include "dynqual/onnx/ModelLoader.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/onnx/TestDataSets.h"
#include "dynqual/reference/Interpreter.h"
#include "dynqual/scope/DataQuirks.h"
#include "dynqual/scope/OpScope.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <optional>

namespace dynqual::test {
namespace fs = std::filesystem;
using Status = NodeTestOutcome::Status;

const std::set<std::string>& foundationOps() {
  return scope::supportedOps();
}

fs::path nodeTestRoot() {
  if (const char* env = std::getenv("DYNQUAL_ONNX_NODE_DIR"); env && *env)
    return env;
  return "/usr/share/libonnx-testdata/data/node";
}

namespace {

std::optional<onnx::ModelProto> parseModel(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  onnx::ModelProto m;
  if (!in || !m.ParseFromIstream(&in))
    return std::nullopt;
  return m;
}

} // namespace

std::vector<std::string> foldersUsingOnly(const fs::path& root, const std::set<std::string>& ops) {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    return names;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    auto model = parseModel(entry.path() / "model.onnx");
    if (!model || model->graph().node_size() == 0)
      continue;
    const bool all = std::all_of(model->graph().node().begin(), model->graph().node().end(), [&](const auto& n) {
      return (n.domain().empty() || n.domain() == "ai.onnx") && ops.count(n.op_type()) > 0;
    });
    if (all)
      names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

NodeTestOutcome runNodeTest(const fs::path& folder) {
  const std::string name = folder.filename().string();
  try {
    auto parsed = parseModel(folder / "model.onnx");
    if (!parsed)
      return {Status::Fail, "cannot parse " + (folder / "model.onnx").string(), ""};
    onnxio::nameUnnamedNodes(*parsed);
    std::string detail;
    if (auto reason = scope::classifyModel(*parsed, detail))
      return {Status::Skip, scope::skipReasonText(*reason), detail};
    const onnx::ModelProto model = onnxio::loadModel(folder / "model.onnx");
    compare::CompareOptions options;
    options.bitExact = compare::isDataMovementOnly(model);
    const auto sets = onnxio::discoverTestDataSets(folder);
    if (sets.empty())
      return {Status::Fail, "no test_data_set_* folder", ""};
    for (const auto& set : sets) {
      const scope::StoredDataSet data = scope::readStoredDataSet(model, set);
      if (scope::storedShapeContradictsDeclaration(model, data.inputs))
        if (auto quirk = scope::verifiedQuirk(name, model, data.inputs, data.expected))
          return {Status::Skip, kSkipQuirk, *quirk};
      const std::vector<Tensor> actual = reference::evaluate(model, data.inputs);
      std::vector<std::string> names;
      for (const auto& o : model.graph().output())
        names.push_back(o.name());
      const compare::Comparison c = compare::compareOutputs(names, actual, data.expected, options);
      if (c.verdict == compare::Verdict::Pass)
        continue;
      if (auto quirk = scope::verifiedQuirk(name, model, data.inputs, data.expected))
        return {Status::Skip, kSkipQuirk, *quirk};
      return {Status::Fail, set.dir.filename().string() + ": " + c.reason, ""};
    }
    return {Status::Pass, "", ""};
  } catch (const std::exception& e) {
    return {Status::Fail, e.what(), ""};
  }
}

} // namespace dynqual::test
