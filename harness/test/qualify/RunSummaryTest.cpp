// The totals line of `dynqual run` and `dynqual qualify`: skips name the missing ops by model
// count, and bindings the model does not admit are counted.
#include "dynqual/qualify/Suite.h"
#include "dynqual/run/RunReport.h"
#include "dynqual/onnx/ShapeBindings.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace dynqual;

namespace {

/// A model folder x[2] -> ops in a chain -> y[2]; op types outside the supported set are made up,
/// so the test does not depend on which real ops the compiler supports.
fs::path writeChain(const fs::path& root, const std::string& name, const std::vector<std::string>& ops) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name(name);
  for (const char* io : {"x", "y"}) {
    auto* v = std::string(io) == "x" ? g->add_input() : g->add_output();
    v->set_name(io);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(2);
  }
  for (std::size_t i = 0; i < ops.size(); ++i) {
    auto* n = g->add_node();
    n->set_op_type(ops[i]);
    n->set_name(ops[i] + std::to_string(i));
    n->add_input(i == 0 ? "x" : "t" + std::to_string(i - 1));
    n->add_output(i + 1 == ops.size() ? "y" : "t" + std::to_string(i));
  }
  fs::path dir = root / name;
  fs::create_directories(dir);
  std::ofstream(dir / "model.onnx", std::ios::binary) << m.SerializeAsString();
  return dir;
}

std::vector<run::ModelResult> skippedModels(const fs::path& root) {
  run::RunConfig config;
  config.workDir = root / "work";
  // Skipped models never reach the compiler.
  run::CompileFn compile = [](const onnx::ModelProto&, const std::string&, const fs::path&) {
    throw std::runtime_error("compile called for a skipped model");
  };
  std::vector<run::ModelResult> rs;
  rs.push_back(run::runModel(writeChain(root, "m1", {"FooOp", "BarOp", "FooOp"}), config, compile));
  rs.push_back(run::runModel(writeChain(root, "m2", {"Neg", "FooOp"}), config, compile));
  rs.push_back(run::runModel(writeChain(root, "m3", {"BazOp", "FooOp"}), config, compile));
  return rs;
}

} // namespace

TEST(RunSummary, SkipsNameTheMissingOpsByModelCount) {
  fs::path root = fs::temp_directory_path() / ("dynqual-summary-" + std::to_string(getpid()));
  fs::remove_all(root);
  auto rs = skippedModels(root);
  ASSERT_EQ(rs.size(), 3u);
  for (const auto& r : rs)
    ASSERT_EQ(r.status, run::ModelStatus::Skipped) << r.name << ": " << r.detail;
  EXPECT_EQ(rs[0].missingOps, (std::vector<std::string>{"BarOp", "FooOp"})); // each op once, sorted
  EXPECT_EQ(rs[1].missingOps, (std::vector<std::string>{"FooOp"}));          // Neg is supported

  // FooOp is used by 3 models, BarOp and BazOp by 1 each (ties by name).
  const std::string expected = "3 models: 0 passed, 0 failed, 3 skipped "
                               "(op_outside_supported_set=3 (FooOp 3, BarOp 1, BazOp 1))";
  std::ostringstream text;
  run::renderText(text, rs, false);
  EXPECT_NE(text.str().find(expected), std::string::npos) << text.str();

  // The JSON keeps the per-model detail.
  nlohmann::json j = run::renderJson(rs);
  EXPECT_EQ(j["models"][0]["missing_ops"], (nlohmann::json{"BarOp", "FooOp"}));
  EXPECT_EQ(j["totals"]["models_missing_op"]["FooOp"], 3);

  // qualify prints the same line from the per-model JSON its child processes return.
  std::vector<nlohmann::json> entries;
  for (const auto& m : j["models"])
    entries.push_back({{"model", m}});
  std::ostringstream tables;
  qualify::renderTables(tables, entries);
  EXPECT_NE(tables.str().find(expected), std::string::npos) << tables.str();

  // A long list is cut after maxOps, the rest counted.
  EXPECT_EQ(run::skipSummary(run::totals(rs), 1), " (op_outside_supported_set=3 (FooOp 3, 2 more ops))");
  fs::remove_all(root);
}

TEST(RunSummary, BindingsNotAdmittedAreCounted) {
  run::ModelResult r;
  r.name = "m";
  r.status = run::ModelStatus::Passed;
  run::CaseResult stored, admitted, rejected;
  stored.kind = "stored";
  stored.passed = true;
  admitted.kind = "binding";
  admitted.passed = true;
  rejected.kind = "binding";
  rejected.skipped = true;
  r.cases = {stored, admitted, rejected, rejected};
  EXPECT_EQ(run::bindingsNotAdmitted(r), 2);
  std::ostringstream text;
  run::renderText(text, {r}, false);
  EXPECT_NE(text.str().find("1 models: 1 passed, 0 failed, 0 skipped; 2 bindings not admitted by the model"),
            std::string::npos)
      << text.str();
  EXPECT_EQ(run::renderJson({r})["totals"]["bindings_not_admitted"], 2);
  std::ostringstream tables;
  qualify::renderTables(tables, {{{"model", run::renderJson({r})["models"][0]},
                                  {"accuracy", nlohmann::json::object()},
                                  {"perf", {{"measured", false}}}}});
  EXPECT_NE(tables.str().find("; 2 bindings not admitted by the model"), std::string::npos) << tables.str();
}

TEST(DeclaredOutputContradiction, StaticDimsDecideRankAndExtent) {
  onnxio::ValueSpec y;
  y.name = "y";
  y.dims = {1, onnxio::kDynamicDim, 2};
  EXPECT_EQ(onnxio::declaredOutputContradiction({y}, {{1, 7, 2}}), "");
  EXPECT_EQ(onnxio::declaredOutputContradiction({y}, {{1, 0, 2}}), "");
  EXPECT_EQ(onnxio::declaredOutputContradiction({y}, {{1, 1, 1}}),
            "output 'y' is declared [1, ?, 2] but the reference computes [1, 1, 1] (axis 2)");
  EXPECT_EQ(onnxio::declaredOutputContradiction({y}, {{1, 2}}),
            "output 'y' is declared [1, ?, 2] but the reference computes [1, 2] (rank 2 for declared rank 3)");
  onnxio::ValueSpec z = y;
  z.name = "z";
  z.dims = {onnxio::kDynamicDim};
  EXPECT_EQ(onnxio::declaredOutputContradiction({z, y}, {{5}, {2, 3, 2}}),
            "output 'y' is declared [1, ?, 2] but the reference computes [2, 3, 2] (axis 0)");
}
