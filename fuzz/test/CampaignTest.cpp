// Campaigns through the binary: a crashing compiler is a finding per case, never the end of the
// campaign; shards, the store and the corpus output.
#include "dynqual/fuzz/Campaign.h"
#include "dynqual/fuzz/Coverage.h"
#include "dynqual/store/Store.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ShellTestUtil.h"

#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sys/wait.h>

namespace fs = std::filesystem;

namespace {

using fuzztest::sh;
using fuzztest::Shell;

/// Scratch folder of one test.
struct TempDir : fuzztest::TempDir {
  TempDir() : fuzztest::TempDir("dynqual-fuzz-test") {}
};

TEST(FuzzCampaign, CompilerCrashOnEveryCaseIsAFindingAndTheCampaignGoesOn) {
  TempDir t;
  fs::path db = t.path / "f.db";
  Shell r = sh("DYNQUAL_TEST_FAULT=compile-abort " DYNQUAL_BIN " fuzz --cases 4 --jobs 2 --seed 3 --no-minimize --db " +
               db.string() + " --corpus-out " + (t.path / "cases").string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("cases 4 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("compile-crash|"), std::string::npos) << r.out;
  dynqual::store::Store s(db);
  SQLite::Statement q(s.db(), "SELECT count(*), sum(state = 'new') FROM fuzz_findings");
  ASSERT_TRUE(q.executeStep());
  EXPECT_GE(q.getColumn(0).getInt(), 3); // every valid case of the 4
  EXPECT_GE(q.getColumn(1).getInt(), 1);
  SQLite::Statement c(s.db(), "SELECT count(*) FROM fuzz_campaign_cases");
  ASSERT_TRUE(c.executeStep());
  EXPECT_EQ(c.getColumn(0).getInt(), 4);
  // Each finding case folder holds the model, one data set and meta.json.
  int written = 0;
  for (const auto& e : fs::directory_iterator(t.path / "cases")) {
    EXPECT_TRUE(fs::exists(e.path() / "model.onnx"));
    EXPECT_TRUE(fs::exists(e.path() / "meta.json"));
    EXPECT_TRUE(fs::exists(e.path() / "test_data_set_0" / "output_0.pb"));
    ++written;
  }
  EXPECT_GE(written, 3);

  // The same shard again: nothing new (every signature is known now), still recorded once.
  Shell again =
      sh("DYNQUAL_TEST_FAULT=compile-abort " DYNQUAL_BIN " fuzz --cases 4 --jobs 1 --seed 3 --no-minimize --db " +
         db.string());
  EXPECT_EQ(again.code, 0) << again.out;
  EXPECT_NE(again.out.find("(0 new)"), std::string::npos) << again.out;
  // --resume skips every finished case.
  Shell resumed = sh(DYNQUAL_BIN " fuzz --cases 4 --seed 3 --no-minimize --resume --db " + db.string());
  EXPECT_NE(resumed.out.find("4 skipped"), std::string::npos) << resumed.out;
}

TEST(FuzzCampaign, AHangingRuntimeIsARunHangFinding) {
  Shell r = sh("DYNQUAL_TEST_FAULT=run-hang " DYNQUAL_BIN " fuzz --cases 1 --seed 3 --bindings 1 --no-minimize "
               "--run-timeout 1");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("run-hang|"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("timed out after 1 s"), std::string::npos) << r.out;
}

// The oracle's rule (docs/fuzz/oracles.md): a case the CPU reference cannot run on a binding is
// invalid, whatever the compiled program does; a compiled run that fails on a case the reference
// runs is a finding. One test per side, each with a compiled run that fails.
TEST(FuzzCampaign, ACaseTheReferenceCannotRunIsInvalidNotAFinding) {
  // Every compiled run aborts, but a reference limit of one element rejects every case first.
  Shell r = sh("DYNQUAL_TEST_FAULT=run-abort " DYNQUAL_BIN " fuzz --cases 3 --seed 3 --bindings 1 --no-minimize "
               "--reference-max-elements 1");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("cases 3 (valid 0, 0.0%)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("x reference on binding"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("findings: 0 "), std::string::npos) << r.out;
}

TEST(FuzzCampaign, ACompiledRunOutOfMemoryOnACaseTheReferenceRunsIsAFinding) {
  // The reference runs the case within its limits; the compiled run allocates until it fails.
  Shell r = sh("DYNQUAL_TEST_FAULT=run-oom " DYNQUAL_BIN " fuzz --cases 1 --seed 3 --bindings 1 --no-minimize "
               "--memory-mb 2048");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("cases 1 (valid 1, 100.0%)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("run-crash|"), std::string::npos) << r.out;
}

TEST(FuzzCampaign, AReferenceStuckInANodeIsInvalidInEitherKindOfWorker) {
  // The reference's own time check runs between nodes; one stuck inside a node ends the worker
  // through the watchdog ((K + 1) * 1 s + 10 s here), which the campaign counts as invalid.
  for (const char* mode : {"", " --one-shot"}) {
    Shell r = sh(std::string("DYNQUAL_TEST_FAULT=reference-hang " DYNQUAL_BIN
                             " fuzz --cases 1 --seed 3 --bindings 1 --no-minimize --reference-timeout 1") +
                 mode);
    EXPECT_EQ(r.code, 0) << mode << "\n" << r.out;
    EXPECT_NE(r.out.find("cases 1 (valid 0, 0.0%)"), std::string::npos) << mode << "\n" << r.out;
    EXPECT_NE(r.out.find("x reference timed out"), std::string::npos) << mode << "\n" << r.out;
    EXPECT_NE(r.out.find("findings: 0 "), std::string::npos) << mode << "\n" << r.out;
  }
}

TEST(FuzzCampaign, UsageErrorsExitTwo) {
  EXPECT_EQ(sh(DYNQUAL_BIN " fuzz --cases 1 --inject no-such-knob").code, 2);
  EXPECT_EQ(sh(DYNQUAL_BIN " fuzz --cases 1 --shard 3/2").code, 2);
  EXPECT_EQ(sh(DYNQUAL_BIN " fuzz --time soon").code, 2);
  EXPECT_EQ(sh(DYNQUAL_BIN " fuzz --cases 1 --resume").code, 2);
}

TEST(FuzzCampaign, ShardsNeverShareASeed) {
  std::set<uint64_t> seeds;
  for (int shard = 0; shard < 4; ++shard)
    for (uint64_t c = 0; c < 250; ++c)
      EXPECT_TRUE(seeds.insert(dynqual::fuzz::caseSeed(1, c * 4 + static_cast<uint64_t>(shard))).second);
  EXPECT_EQ(dynqual::fuzz::parseDuration("90"), 90);
  EXPECT_EQ(dynqual::fuzz::parseDuration("10m"), 600);
  EXPECT_THROW(dynqual::fuzz::parseDuration("-1s"), std::invalid_argument);
}

TEST(FuzzCampaign, ReportsValidRateSizesOpsAndCompilerPaths) {
  Shell r = sh(DYNQUAL_BIN " fuzz --cases 4 --jobs 2 --seed 11 --no-minimize");
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.out;
  EXPECT_NE(r.out.find("cases 4 (valid "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("graph size (nodes per valid case): median"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("op kinds: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kernel_launches"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("feature coverage (valid cases that exercised each feature, of "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| op | feature | valid cases | % of valid |"), std::string::npos) << r.out;
  // The same campaign as JSON: every tracked feature has a row, none counts more cases than are valid.
  Shell j = sh("(" DYNQUAL_BIN " fuzz --cases 4 --jobs 1 --seed 11 --no-minimize --format json 2>/dev/null)");
  EXPECT_TRUE(j.code == 0 || j.code == 1) << j.out;
  auto doc = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << j.out;
  EXPECT_EQ(doc["cases"], 4);
  ASSERT_GE(doc["coverage"].size(), dynqual::fuzz::trackedFeatures().size());
  for (const auto& row : doc["coverage"])
    EXPECT_LE(row["valid_cases"].get<int64_t>(), doc["valid"].get<int64_t>()) << row.dump();
}

TEST(Corpus, AddedFindingReplaysAndCheckFailsWhenItBreaks) {
  TempDir t;
  Shell found =
      sh("DYNQUAL_TEST_FAULT=compile-exit " DYNQUAL_BIN " fuzz --cases 1 --seed 4 --no-minimize --corpus-out " +
         (t.path / "out").string());
  ASSERT_EQ(found.code, 1) << found.out;
  fs::path finding = fs::directory_iterator(t.path / "out")->path();
  Shell added = sh(DYNQUAL_BIN " corpus add " + finding.string() + " --corpus " + (t.path / "corpus").string() +
                   " --name crash_case");
  ASSERT_EQ(added.code, 0) << added.out;
  EXPECT_EQ(sh(DYNQUAL_BIN " corpus add " + finding.string() + " --corpus " + (t.path / "corpus").string() +
               " --name crash_case")
                .code,
            2);
  // Without the fault the production compiler handles the case: it holds.
  Shell ok = sh(DYNQUAL_BIN " corpus check " + (t.path / "corpus").string());
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_NE(ok.out.find("pass    crash_case"), std::string::npos) << ok.out;
  // With the compiler crashing again the check fails and says which case.
  Shell bad = sh("DYNQUAL_TEST_FAULT=compile-abort " DYNQUAL_BIN " corpus check " + (t.path / "corpus").string());
  EXPECT_EQ(bad.code, 1) << bad.out;
  EXPECT_NE(bad.out.find("FAIL    crash_case"), std::string::npos) << bad.out;
}

} // namespace
