// The persistent worker against the one-shot worker, through the binary: the same seeded cases
// get the same verdicts and signatures either way, and a case that kills the persistent worker
// is a finding while the campaign goes on with a fresh worker.
#include "dynqual/store/Store.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>

#include "ShellTestUtil.h"

#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <regex>
#include <sys/wait.h>

namespace fs = std::filesystem;

namespace {

using fuzztest::sh;
using fuzztest::Shell;

/// Scratch folder of one test.
struct TempDir : fuzztest::TempDir {
  TempDir() : fuzztest::TempDir("dynqual-fuzz-worker-test") {}
};

/// Every row of `sql` as one line, columns joined with '|', with scratch paths masked (they
/// name each run's own temporary folder).
std::vector<std::string> rows(const fs::path& db, const std::string& sql) {
  dynqual::store::Store s(db);
  SQLite::Statement q(s.db(), sql);
  std::vector<std::string> out;
  std::regex scratch("/tmp/[^ ':]*");
  while (q.executeStep()) {
    std::string line;
    for (int k = 0; k < q.getColumnCount(); ++k)
      line += (k ? "|" : "") + q.getColumn(k).getString();
    out.push_back(std::regex_replace(line, scratch, "<scratch>"));
  }
  return out;
}

const char* kCases = "SELECT case_index, seed, valid, nodes, findings FROM fuzz_campaign_cases ORDER BY case_index";
const char* kFindings =
    "SELECT case_index, seed, signature, symptom, variant, binding, nodes_before, nodes_after, detail "
    "FROM fuzz_findings ORDER BY case_index, variant, signature";

TEST(FuzzPersistentWorker, SameVerdictsAndSignaturesAsOneShot) {
  TempDir t;
  // Production against a knob that breaks outputs: mismatches, wrong shapes and variant
  // disagreements, next to clean and invalid cases.
  std::string common = " fuzz --cases 8 --seed 1 --jobs 1 --bindings 3 --no-minimize --variant dq:production@sim "
                       "--variant 'dq:production{inject=output-rank-collapse}@sim' --db ";
  Shell persistent = sh(DYNQUAL_BIN + common + (t.path / "p.db").string());
  Shell oneShot = sh(DYNQUAL_BIN + common + (t.path / "o.db").string() + " --one-shot");
  ASSERT_TRUE(persistent.code == 0 || persistent.code == 1) << persistent.out;
  ASSERT_TRUE(oneShot.code == 0 || oneShot.code == 1) << oneShot.out;
  EXPECT_NE(persistent.out.find("persistent workers: 1 started, 0 case(s)"), std::string::npos) << persistent.out;
  EXPECT_NE(oneShot.out.find("workers: one-shot"), std::string::npos) << oneShot.out;
  auto pCases = rows(t.path / "p.db", kCases), oCases = rows(t.path / "o.db", kCases);
  EXPECT_EQ(pCases.size(), 8u);
  EXPECT_EQ(pCases, oCases);
  auto pFind = rows(t.path / "p.db", kFindings), oFind = rows(t.path / "o.db", kFindings);
  // The comparison means something only with findings in it.
  EXPECT_GE(pFind.size(), 1u) << persistent.out;
  EXPECT_EQ(pFind, oFind) << persistent.out << "\n----\n" << oneShot.out;
}

TEST(FuzzPersistentWorker, MinimizedFindingIsTheSameAsOneShot) {
  TempDir t;
  // One case with a finding under the knob, minimized and attributed in process and through
  // child processes.
  std::string common = " fuzz --cases 1 --seed 1 --jobs 1 --bindings 2 --inject output-rank-collapse --db ";
  Shell persistent = sh(DYNQUAL_BIN + common + (t.path / "p.db").string());
  Shell oneShot = sh(DYNQUAL_BIN + common + (t.path / "o.db").string() + " --one-shot");
  auto pFind = rows(t.path / "p.db", kFindings), oFind = rows(t.path / "o.db", kFindings);
  ASSERT_GE(pFind.size(), 1u) << persistent.out;
  EXPECT_EQ(pFind, oFind) << persistent.out << "\n----\n" << oneShot.out;
}

TEST(FuzzPersistentWorker, ACaseThatKillsTheWorkerIsAFindingAndLaterCasesStillRun) {
  TempDir t;
  fs::path db = t.path / "f.db";
  // The test fault injector aborts the compile of case 2 only (its scratch folder is case-2/):
  // in the persistent worker that is the whole worker process.
  Shell r = sh("DYNQUAL_TEST_FAULT=compile-abort:case-2/ " DYNQUAL_BIN
               " fuzz --cases 5 --seed 3 --jobs 1 --no-minimize --db " +
               db.string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("cases 5 "), std::string::npos) << r.out;
  // The one-shot rerun names the crash the way a one-shot campaign does.
  EXPECT_NE(r.out.find("compile-crash|"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("persistent workers: 2 started, 1 case(s)"), std::string::npos) << r.out;
  auto found = rows(db, "SELECT DISTINCT case_index, symptom FROM fuzz_findings");
  ASSERT_EQ(found.size(), 1u) << r.out;
  EXPECT_EQ(found[0], "2|compile-crash");
  // Cases after the crash ran on the fresh worker and were recorded.
  auto cases = rows(db, "SELECT case_index FROM fuzz_campaign_cases ORDER BY case_index");
  EXPECT_EQ(cases, (std::vector<std::string>{"0", "1", "2", "3", "4"}));
}

TEST(FuzzPersistentWorker, AHungCompileEndsTheWorkerAndIsACompileHang) {
  Shell r = sh("DYNQUAL_TEST_FAULT=compile-hang:case-0/ " DYNQUAL_BIN
               " fuzz --cases 2 --seed 3 --jobs 1 --bindings 1 --no-minimize --compile-timeout 1");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("compile-hang|"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cases 2 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("persistent workers: 2 started, 1 case(s)"), std::string::npos) << r.out;
}

} // namespace
