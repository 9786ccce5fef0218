// `dynqual run` end to end: shared models (when present) and corpus cases pass every stored data
// set and every extra shape binding on the sim device.
#include "../CompileBridge.h"

#include "dynqual/run/ModelRun.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace fs = std::filesystem;
using namespace dynqual;

namespace {

fs::path modelsDir() {
  const char* env = std::getenv("DYNQUAL_MODELS_DIR");
  return env ? fs::path(env) : fs::path(DYNQUAL_DEFAULT_MODELS_DIR);
}

run::ModelResult runDir(const fs::path& dir, const std::string& pipeline = "production") {
  run::RunConfig config;
  config.execPath = DYNQUAL_EXEC_PATH;
  config.pipeline = pipeline;
  config.workDir = fs::temp_directory_path() / ("dynqual-modelrun-" + std::to_string(getpid()));
  run::CompileFn compile = cli::compileArtifact;
  run::ModelResult r = run::runModel(dir, config, compile);
  fs::remove_all(config.workDir);
  return r;
}

uint64_t counter(const run::CaseResult& c, const std::string& name) {
  for (const auto& [k, v] : c.counters)
    if (k == name)
      return v;
  ADD_FAILURE() << "counter " << name << " missing";
  return 0;
}

void expectAllPass(const run::ModelResult& r) {
  ASSERT_EQ(r.status, run::ModelStatus::Passed) << r.detail;
  for (const auto& c : r.cases)
    EXPECT_TRUE(c.passed || c.skipped) << c.name << ": " << c.error;
}

} // namespace

TEST(ModelRun, ShapeOpsPassesAllSetsAndBindingsWithoutReadbacks) {
  fs::path dir = modelsDir() / "shape_ops";
  if (!fs::exists(dir / "model.onnx"))
    GTEST_SKIP() << "shared models not present at " << modelsDir();
  run::ModelResult r = runDir(dir);
  expectAllPass(r);
  int stored = 0, bindings = 0;
  for (const auto& c : r.cases) {
    if (c.skipped)
      continue;
    (c.kind == "stored" ? stored : bindings)++;
    // Every slice and expand bound of shape_ops resolves on the host.
    EXPECT_EQ(counter(c, "scalar_readbacks"), 0u) << c.name;
  }
  EXPECT_EQ(stored, 3);
  EXPECT_GE(bindings, 3);
}

class CorpusCase : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusCase, PassesEveryBinding) {
  run::ModelResult r = runDir(fs::path(DYNQUAL_CORPUS_DIR) / GetParam());
  expectAllPass(r);
  int ran = 0;
  for (const auto& c : r.cases)
    ran += c.passed ? 1 : 0;
  EXPECT_GE(ran, 3) << "too few bindings were legal for this case";
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusCase,
                         ::testing::Values("reshape_split_dynamic", "slice_negative_step", "expand_where_shape"));

// Data-dependent corpus cases: every stored data set (one of them with a zero count) and every
// admitted binding passes on sim, and the counters show the readbacks the shapes need: one per
// NonZero / Compress (the count), none where shape arithmetic folds (TopK's k, Tile's repeats) or
// the index stays on the device (the KV-cache position). No copy runs at all, so no graph output
// was copied out of a capacity buffer or a view on return.
struct DataDependentCase {
  const char* name;
  uint64_t readbacks;
};

class DataDependentCorpus : public ::testing::TestWithParam<DataDependentCase> {};

TEST_P(DataDependentCorpus, PassesWithExpectedReadbacksAndNoCopies) {
  const DataDependentCase& p = GetParam();
  run::ModelResult r = runDir(fs::path(DYNQUAL_CORPUS_DIR) / p.name);
  expectAllPass(r);
  int stored = 0, bindings = 0;
  for (const auto& c : r.cases) {
    if (c.skipped)
      continue;
    (c.kind == "stored" ? stored : bindings)++;
    EXPECT_EQ(counter(c, "scalar_readbacks"), p.readbacks) << c.name;
    EXPECT_EQ(counter(c, "memcpy_copies") + counter(c, "copy2d_copies") + counter(c, "strided_copies"), 0u)
        << c.name;
  }
  EXPECT_EQ(stored, 3);
  EXPECT_GE(bindings, 1);
}

INSTANTIATE_TEST_SUITE_P(Corpus, DataDependentCorpus,
                         ::testing::Values(DataDependentCase{"nonzero_transpose_gathernd", 1},
                                           DataDependentCase{"compress_output", 1},
                                           DataDependentCase{"topk_shape_k", 0},
                                           DataDependentCase{"tile_shape_repeats", 0},
                                           DataDependentCase{"scatternd_kv_cache", 0}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ModelRun, MissingModelIsAClearFailure) {
  run::ModelResult r = runDir(fs::temp_directory_path() / "no-such-dynqual-model");
  EXPECT_EQ(r.status, run::ModelStatus::Failed);
  EXPECT_NE(r.detail.find("no-such-dynqual-model"), std::string::npos) << r.detail;
}
