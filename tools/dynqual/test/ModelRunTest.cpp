// `dynqual run` end to end: shared models (when present) and corpus cases pass every stored data
// set and every extra shape binding on the sim device.
#include "../CompileBridge.h"

#include "dynqual/modelgen/ReferenceDataSets.h"
#include "dynqual/run/ModelRun.h"
#include "dynqual/run/RunReport.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

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
                         ::testing::Values("reshape_split_dynamic", "slice_negative_step", "expand_where_shape",
                                           "collapse4_dynamic", "collapse4_static", "collapse3_dynamic",
                                           "collapse3_static", "slice_declared_static", "shape_output",
                                           "shape_gather_scalar", "shape_concat", "reshape_empty_dynamic",
                                           "gather_squeeze_readback", "reshape_scalar_ones", "slice_extreme_bounds",
                                           "squeeze_empty_view", "reshape_output_dims_in_order"));

// A returned output that collapses 3 or 4 dims gets its size from dq-use-output-allocator, which
// once read a destroyed temporary there (docs/sanitizers.md); every stored set and binding ran.
TEST(ModelRun, CollapsedGraphOutputsRunEverySetAndBinding) {
  for (const char* name : {"collapse4_dynamic", "collapse3_dynamic"}) {
    SCOPED_TRACE(name);
    run::ModelResult r = runDir(fs::path(DYNQUAL_CORPUS_DIR) / name);
    expectAllPass(r);
    int stored = 0, bindings = 0;
    for (const auto& c : r.cases) {
      EXPECT_FALSE(c.skipped) << c.name << ": " << c.error;
      (c.kind == "stored" ? stored : bindings) += c.passed ? 1 : 0;
    }
    EXPECT_EQ(stored, 3);
    EXPECT_EQ(bindings, 4);
  }
}

// slice_declared_static declares y[a, 2] for x[a, n]; the "ones" binding (n = 1) computes
// [1, 1], so the reference does not admit it; the stored sets all run.
TEST(ModelRun, BindingContradictingADeclaredStaticDimIsNotAdmitted) {
  run::ModelResult r = runDir(fs::path(DYNQUAL_CORPUS_DIR) / "slice_declared_static");
  expectAllPass(r);
  int notAdmitted = 0;
  for (const auto& c : r.cases) {
    if (c.kind == "stored") {
      EXPECT_TRUE(c.passed) << c.name << ": " << c.error;
      continue;
    }
    if (c.name == "binding ones") {
      EXPECT_TRUE(c.skipped);
      EXPECT_EQ(c.error, "not admitted by the model: output 'y' is declared [?, 2] but the reference computes "
                         "[1, 1] (axis 1)");
      EXPECT_TRUE(c.counters.empty()) << "the compiled program ran for a binding that was not admitted";
    }
    if (c.skipped) {
      ++notAdmitted;
      EXPECT_NE(c.error.find("but the reference computes [1, 1]"), std::string::npos) << c.name << ": " << c.error;
    }
  }
  EXPECT_GE(notAdmitted, 1);
  EXPECT_EQ(run::bindingsNotAdmitted(r), notAdmitted);
}

// A stored set is the model's own test data: at n = 1 it contradicts y[a, 2] like the "ones"
// binding does, yet it runs, and the compiled program's trap on the declared type is a failure.
TEST(ModelRun, StoredSetIsNeverSkippedAsNotAdmitted) {
  fs::path dir = fs::temp_directory_path() / ("dynqual-stored-n1-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(fs::path(DYNQUAL_CORPUS_DIR) / "slice_declared_static" / "model.onnx", dir / "model.onnx");
  modelgen::writeReferenceDataSets(dir, {modelgen::parseLabelBinding("a=2,n=1")}, 1);
  run::ModelResult r = runDir(dir);
  ASSERT_FALSE(r.cases.empty()) << r.detail;
  const run::CaseResult& stored = r.cases.front();
  EXPECT_EQ(stored.kind, "stored");
  EXPECT_FALSE(stored.skipped);
  EXPECT_FALSE(stored.passed);
  EXPECT_NE(stored.error.find("the view has shape [2,1] but the cast demands [?,2]"), std::string::npos)
      << stored.error;
  EXPECT_EQ(r.status, run::ModelStatus::Failed);
  fs::remove_all(dir);
}

// Admission is decided before the run: with every runtime process aborting, the admitted sets and
// bindings fail (a crash is never excused) and only the binding the model rejects stays skipped.
TEST(ModelRun, CrashOnAnAdmittedBindingIsAFailure) {
  ::setenv("DYNQUAL_TEST_FAULT", "run-abort:slice_declared_static", 1);
  run::ModelResult r = runDir(fs::path(DYNQUAL_CORPUS_DIR) / "slice_declared_static");
  ::unsetenv("DYNQUAL_TEST_FAULT");
  EXPECT_EQ(r.status, run::ModelStatus::Failed);
  int failed = 0, skipped = 0, stored = 0;
  for (const auto& c : r.cases) {
    if (c.skipped) {
      ++skipped;
      EXPECT_EQ(c.kind, "binding") << c.name;
      EXPECT_NE(c.error.find("not admitted by the model"), std::string::npos) << c.name << ": " << c.error;
      continue;
    }
    EXPECT_FALSE(c.passed) << c.name;
    EXPECT_NE(c.error.find("killed by signal"), std::string::npos) << c.name << ": " << c.error;
    ++failed;
    stored += c.kind == "stored" ? 1 : 0;
  }
  EXPECT_GE(skipped, 1);
  EXPECT_EQ(stored, 3);
  EXPECT_GE(failed, 3 + 2);
}

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
    EXPECT_EQ(counter(c, "memcpy_copies") + counter(c, "copy2d_copies") + counter(c, "strided_copies"), 0u) << c.name;
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

// Every case runs through the executor and so under its memory limit. Here one stored set's
// runtime process allocates until an allocation fails (DYNQUAL_TEST_FAULT=run-oom, set by a
// wrapper for that set only) under a 512 MiB limit: that case fails as an oom naming the limit,
// and every other set and binding still runs and passes.
TEST(ModelRun, ACaseOverTheMemoryLimitIsAnOomAndTheOthersRun) {
  fs::path work = fs::temp_directory_path() / ("dynqual-modelrun-oom-" + std::to_string(getpid()));
  fs::create_directories(work);
  fs::path wrapper = work / "exec-oom-on-set-1";
  {
    std::ofstream w(wrapper);
    w << "#!/bin/sh\ncase \"$*\" in *test_data_set_1/*) export DYNQUAL_TEST_FAULT=run-oom ;; esac\nexec "
      << DYNQUAL_EXEC_PATH << " \"$@\"\n";
  }
  fs::permissions(wrapper, fs::perms::owner_all);
  run::RunConfig config;
  config.execPath = wrapper;
  config.workDir = work / "run";
  config.memoryLimitBytes = uint64_t{512} << 20;
  run::ModelResult r = run::runModel(fs::path(DYNQUAL_CORPUS_DIR) / "collapse4_dynamic", config, cli::compileArtifact);
  fs::remove_all(work);
  EXPECT_EQ(r.status, run::ModelStatus::Failed);
  int passed = 0, oom = 0;
  for (const auto& c : r.cases) {
    if (c.name == "test_data_set_1") {
      EXPECT_FALSE(c.passed);
      EXPECT_EQ(c.error.rfind("oom under the 512 MiB memory limit: runtime process ", 0), 0u) << c.error;
#if !defined(__SANITIZE_ADDRESS__)
      EXPECT_NE(c.error.find("bad_alloc"), std::string::npos) << c.error;
#endif
      ++oom;
      continue;
    }
    EXPECT_TRUE(c.passed || c.skipped) << c.name << ": " << c.error;
    passed += c.passed ? 1 : 0;
  }
  EXPECT_EQ(oom, 1);
  // collapse4_dynamic has 3 stored sets and admits 4 bindings, all passing without the fault
  // (CollapsedGraphOutputsRunEverySetAndBinding): 2 sets + 4 bindings still ran.
  EXPECT_EQ(passed, 2 + 4) << "the other stored sets and the bindings did not all run";
  EXPECT_EQ(r.detail.rfind("test_data_set_1: oom under the 512 MiB memory limit", 0), 0u) << r.detail;
}
