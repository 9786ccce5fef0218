// Buckets through the binary: one bug stays one bucket however many signatures its findings
// have, two bugs give two buckets; triage, corpus add --bucket, the campaign report and
// campaign submit --dry-run on what a campaign recorded.
#include "dynqual/store/FuzzRecords.h"
#include "dynqual/store/Store.h"

#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ShellTestUtil.h"

#include <filesystem>
#include <fstream>
#include <set>

namespace fs = std::filesystem;

namespace {

using fuzztest::sh;
using fuzztest::Shell;

// Chosen from measured campaigns (docs/fuzz/buckets.md): a knob whose findings have several
// signatures within these cases, and two knobs of different passes.
const std::string kKnobOne = "output-rank-collapse";
const std::string kKnobCases = "20";
const std::string kKnobA = "output-rank-collapse", kKnobB = "readback-without-sync";
const std::string kTwoCases = "20";

struct TempDir : fuzztest::TempDir {
  TempDir() : fuzztest::TempDir("dynqual-bucket-test") {}
};

std::vector<dynqual::store::FuzzBucket> buckets(const fs::path& db, const std::string& night = "") {
  dynqual::store::Store s(db);
  return dynqual::store::fuzzBuckets(s, night);
}

int64_t distinctSignatures(const fs::path& db) {
  dynqual::store::Store s(db);
  int64_t n = 0;
  for (const auto& b : dynqual::store::fuzzBuckets(s))
    n += b.signatures;
  return n;
}

// One knob, a fixed set of cases: its findings spread over several signatures (the minimizer
// ends on different op sets), but all of them are one bucket.
TEST(Buckets, OneKnobIsOneBucketAcrossSignatures) {
  TempDir t;
  fs::path db = t.path / "k.db";
  Shell r = sh(DYNQUAL_BIN " fuzz --cases " + kKnobCases + " --jobs 1 --seed 1 --inject " + kKnobOne + " --db " +
               db.string() + " --corpus-out " + (t.path / "cases").string());
  ASSERT_EQ(r.code, 1) << r.out;
  auto b = buckets(db);
  ASSERT_GE(distinctSignatures(db), 2) << "the test needs a knob whose findings have several signatures\n" << r.out;
  EXPECT_EQ(b.size(), 1u) << r.out;
}

// Two knobs of different passes at once: two bugs, so at least two buckets, and each bucket's
// smallest reproducer fails with its own knob alone.
TEST(Buckets, TwoKnobsGiveTwoBuckets) {
  TempDir t;
  fs::path db = t.path / "kk.db";
  Shell r = sh(DYNQUAL_BIN " fuzz --cases " + kTwoCases + " --jobs 1 --seed 1 --inject " + kKnobA + "," + kKnobB +
               " --db " + db.string() + " --corpus-out " + (t.path / "cases").string());
  ASSERT_EQ(r.code, 1) << r.out;
  auto b = buckets(db);
  ASSERT_GE(b.size(), 2u) << r.out;
  std::set<std::string> origins;
  for (const auto& x : b)
    origins.insert(x.symptom + " " + x.origin);
  EXPECT_GE(origins.size(), 2u);
  // Knobs of one pass cannot be combined: an unsupported error, not a half-applied pipeline.
  Shell same = sh(DYNQUAL_BIN " fuzz --cases 1 --inject slice-upper-bound,split-dim-size-alias");
  EXPECT_EQ(same.code, 2) << same.out;
  EXPECT_NE(same.out.find("unsupported"), std::string::npos) << same.out;
}

// Triage, corpus add --bucket, --check (fixed when the case passes), and the report of the store.
TEST(Buckets, TriageCorpusAddCheckAndReport) {
  TempDir t;
  fs::path db = t.path / "k.db";
  Shell r = sh(DYNQUAL_BIN " fuzz --cases 4 --jobs 1 --seed 1 --night n1 --inject " + kKnobOne + " --db " +
               db.string() + " --corpus-out " + (t.path / "cases").string());
  ASSERT_EQ(r.code, 1) << r.out;
  Shell tri = sh(DYNQUAL_BIN " fuzz triage --db " + db.string() + " --format json --fail-on-new");
  EXPECT_EQ(tri.code, 1) << tri.out; // the bucket is new in n1
  auto j = nlohmann::json::parse(tri.out.substr(tri.out.find('{')));
  ASSERT_GE(j["buckets"].size(), 1u);
  std::string id = j["buckets"][0]["bucket"];
  EXPECT_EQ(j["buckets"][0]["status"], "new");
  Shell add = sh(DYNQUAL_BIN " corpus add --bucket " + id.substr(0, 8) + " --db " + db.string() + " --corpus " +
                 (t.path / "corpus").string());
  ASSERT_EQ(add.code, 0) << add.out;
  fs::path added =
      t.path / "corpus" / ("fuzz-" + j["buckets"][0]["symptom"].get<std::string>() + "-" + id.substr(0, 8));
  EXPECT_TRUE(fs::exists(added / "model.onnx")) << add.out;
  EXPECT_EQ(buckets(db)[0].corpusCase, added.filename().string());
  // With its knob the case still fails: --check leaves it known, not fixed.
  Shell check =
      sh(DYNQUAL_BIN " fuzz triage --db " + db.string() + " --check --corpus " + (t.path / "corpus").string());
  EXPECT_EQ(check.code, 0) << check.out;
  EXPECT_NE(check.out.find("still fails"), std::string::npos) << check.out;
  EXPECT_NE(buckets(db)[0].status, "fixed");
  // Production does not have the bug: recorded on the production variant, the case passes, so
  // the bucket is fixed.
  {
    dynqual::store::Store s(db);
    s.db().exec("UPDATE fuzz_findings SET variant = 'dq:production@sim'");
  }
  Shell fixed = sh(DYNQUAL_BIN " fuzz triage --db " + db.string() + " --check --night later --corpus " +
                   (t.path / "corpus").string());
  EXPECT_NE(fixed.out.find("passes"), std::string::npos) << fixed.out;
  // Relative to a later night (on n1 itself it is new, which comes first).
  EXPECT_EQ(buckets(db, "later")[0].status, "fixed");
  // The store has a campaign and no run: report renders the campaign.
  Shell md = sh(DYNQUAL_BIN " report --db " + db.string());
  EXPECT_EQ(md.code, 0) << md.out;
  EXPECT_NE(md.out.find("# Fuzz campaign, night n1"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("## Buckets"), std::string::npos) << md.out;
}

TEST(Buckets, CampaignSubmitDryRunWritesTheArrayAndTheMergeJob) {
  TempDir t;
  Shell r = sh(DYNQUAL_BIN " campaign submit --slurm --tasks 8 --max-parallel 3 --time 2h --partition gpu "
                           "--gpus-per-task 1 --night n7 --seed 5 --dry-run --out " +
               (t.path / "night").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("#SBATCH --array=0-7%3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("#SBATCH --time=02:00:00"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("#SBATCH --partition=gpu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("#SBATCH --gpus-per-task=1"), std::string::npos) << r.out;
  // 2 h less 10 minutes of fuzzing: 6600 s.
  EXPECT_NE(r.out.find("fuzz --shard \"$i/8\" --seed 5 --night 'n7' --jobs 1 --time '6600s'"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("--resume"), std::string::npos);
  EXPECT_NE(r.out.find("db merge --db \"$db\""), std::string::npos);
  EXPECT_NE(r.out.find("afterany"), std::string::npos);
  EXPECT_TRUE(fs::exists(t.path / "night" / "campaign.sbatch"));
  EXPECT_TRUE(fs::exists(t.path / "night" / "merge.sbatch"));
  EXPECT_EQ(
      sh(DYNQUAL_BIN " campaign submit --slurm --tasks 2 --time soon --dry-run --out " + (t.path / "x").string()).code,
      2);
}

} // namespace
