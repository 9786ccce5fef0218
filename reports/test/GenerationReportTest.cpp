// dq-bench generate JSON recorded into the store and rendered as the "Generation Results" table:
// every cell comes from the stored parameters and samples of the fixture
// (fixtures/generation/dq-bench-generate.jsonl), whose numbers are chosen by hand.
#include "StoreTestUtil.h"

#include "dynqual/reports/Report.h"
#include "dynqual/store/GenerationRecords.h"
#include "dynqual/store/Store.h"

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>

#include <fstream>

using namespace dynqual;
namespace fs = std::filesystem;

namespace {

nlohmann::json fixture() {
  std::ifstream in(fs::path(DYNQUAL_REPORTS_FIXTURES) / "generation" / "dq-bench-generate.jsonl");
  std::string line;
  std::getline(in, line);
  return nlohmann::json::parse(line);
}

store::RunRecord headerFor(const nlohmann::json& doc) {
  store::RunRecord r;
  r.key = "generation-report-test";
  r.kind = "generate";
  r.startedAt = doc.at("started_at").get<std::string>();
  r.device = doc.at("device").get<std::string>();
  r.machine = store::generationMachine(doc);
  r.pipeline = {"p", "production"};
  return r;
}

} // namespace

TEST(GenerationReport, ImportedRunRendersTheGenerationResultsTable) {
  TempDir dir;
  const nlohmann::json doc = fixture();
  int64_t id = 0;
  {
    store::Store s(dir.path / "g.db");
    id = s.beginRun(headerFor(doc));
    s.recordCases(id, {store::generationCase(doc)});
    s.finishRun(id);
    // Typed samples: one REAL per repetition with its unit.
    SQLite::Statement q(s.db(), "SELECT value, unit FROM samples WHERE metric = 'tps' ORDER BY rep");
    std::vector<double> tps;
    while (q.executeStep()) {
      tps.push_back(q.getColumn(0).getDouble());
      EXPECT_EQ(q.getColumn(1).getString(), "tokens/s");
    }
    EXPECT_EQ(tps, (std::vector<double>{50.0, 40.0, 60.0}));
  }
  store::Store s(dir.path / "g.db");
  reports::ReportInput in;
  in.head = s.loadRun(id);
  in.dynqualVersion = "test";
  EXPECT_EQ(in.head.machine.gpuName, "NVIDIA H200 (cc 9.0, 132 SMs)");
  EXPECT_EQ(in.head.machine.cpuModel, "Test CPU");
  const std::string md = reports::renderMarkdown(in);
  // By hand: TTFT median of 12, 10, 11 = 11.00 ms; TPS median of 50, 40, 60 = 50.0; limits
  // 1000.0 and 200.0 tokens/s, launch binds, 0.25 of it = 25.0 %; peak host 2e9 bytes = 2.000
  // GB, device 3e8 bytes = 0.300 GB; every parameter from the document.
  EXPECT_NE(md.find("| tiny\\_decoder / prompt\\_7 | dynqual | hip | 1 | 3 | 7 | 9 | launch | 11.00 | 50.0 | 1000.0 | "
                    "200.0 | 25.0 | 2.000 | 0.300 |"),
            std::string::npos)
      << md;
  const store::CaseRecord& c = in.head.cases.at(0);
  EXPECT_EQ(c.params.at("tokens"), "5,9,9,2,0,31,7,7,1");
  EXPECT_EQ(c.dataset.binding, "prompt_len=7 gen_tokens=9 seed=4");
  EXPECT_EQ(c.counters.at("peak_device_bytes"), 300000000);
}

TEST(GenerationReport, ParametersComeFromTheRunNotFromDefaults) {
  TempDir dir;
  nlohmann::json doc = fixture();
  doc["params"]["prompt_len"] = 128;
  doc["params"]["gen_tokens"] = 64;
  doc["device"] = "sim";
  store::Store s(dir.path / "g.db");
  int64_t id = s.beginRun(headerFor(doc));
  s.recordCases(id, {store::generationCase(doc)});
  s.finishRun(id);
  reports::ReportInput in;
  in.head = s.loadRun(id);
  const std::string md = reports::renderMarkdown(in);
  EXPECT_NE(md.find("| tiny\\_decoder / prompt\\_128 | dynqual | sim | 1 | 3 | 128 | 64 | launch |"), std::string::npos)
      << md;
}

TEST(GenerationReport, RejectsOtherDocuments) {
  nlohmann::json doc = fixture();
  doc["version"] = 2;
  try {
    store::generationCase(doc);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported: dq-bench generate JSON version 2"), std::string::npos)
        << e.what();
  }
  doc = fixture();
  doc["limits"]["copy_gbps"] = "fast";
  doc["probes"]["copy_gbps"] = "fast";
  EXPECT_THROW(store::generationCase(doc), std::runtime_error);
  doc = fixture();
  doc.erase("tokens");
  try {
    store::generationCase(doc);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("missing 'tokens'"), std::string::npos) << e.what();
  }
}
