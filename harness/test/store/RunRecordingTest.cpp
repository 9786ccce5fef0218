// `dynqual run` JSON (one element of "models") into store cases, the run header and the
// exchange form of one case.
#include "StoreTestUtil.h"

#include "dynqual/store/Fingerprint.h"
#include "dynqual/store/RunRecording.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>

using namespace dynqual::store;
namespace fs = std::filesystem;

TEST(RunRecording, CasesFromRunModel) {
  TempDir dir;
  std::ofstream(dir.path / "model.onnx") << "model-bytes";
  fs::create_directories(dir.path / "test_data_set_0");
  std::ofstream(dir.path / "test_data_set_0" / "input_0.pb") << "in0";
  // Shape of run::renderJson (harness/lib/run/RunReport.cpp); inf/NaN arrive as null.
  auto model = nlohmann::json::parse(R"({
    "name": "m", "path": ")" + dir.path.string() + R"(", "status": "passed", "detail": "",
    "bit_exact": false, "compile_ms": 12.5,
    "cases": [{"name": "test_data_set_0", "kind": "stored", "binding": "", "passed": true, "skipped": false,
               "error": "", "input_shapes": [[2]], "execute_ms": 0.75,
               "counters": {"syncs": 2, "scalar_readbacks": 1},
               "vs_expected": {"verdict": "pass", "reason": "", "combined_l2": 3.0, "combined_rel_l2": null,
                 "outputs": [{"name": "y", "verdict": "pass", "reason": "rel-L2", "dtype": "float32", "shape": [2],
                   "elements": 2, "l2": 3.0, "rel_l2": 0.5, "max_abs": 2.0, "cosine": 1.0,
                   "nan_inf_skipped": 1, "mismatches": 0},
                  {"name": "z", "verdict": "pass", "reason": "exact", "dtype": "int64", "shape": [3],
                   "elements": 3, "l2": 0, "rel_l2": 0, "max_abs": 0, "cosine": 1,
                   "nan_inf_skipped": 0, "mismatches": 0}]}},
              {"name": "binding ones", "kind": "binding", "binding": "b=1", "passed": false, "skipped": true,
               "error": "reference rejects", "input_shapes": [], "execute_ms": 0, "counters": {}}]})");
  auto cases = casesFromRunModel(model, 7);
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0].model.hash, sha256Hex("model-bytes"));
  EXPECT_TRUE(cases[0].dataset.name.empty());
  EXPECT_EQ(cases[0].samples.at(0).metric, "compile_ms");
  EXPECT_EQ(cases[0].samples.at(0).values, std::vector<double>{12.5});
  const CaseRecord& ds = cases[1];
  EXPECT_EQ(ds.status, "passed");
  // sha256 over "input_0.pb <sha256 of in0>\n".
  EXPECT_EQ(ds.dataset.hash, sha256Hex("input_0.pb " + sha256Hex("in0") + "\n"));
  ASSERT_EQ(ds.accuracy.size(), 3u);  // combined + y + z
  EXPECT_EQ(ds.accuracy[0].output, "");
  EXPECT_EQ(ds.accuracy[0].l2, 3.0);
  EXPECT_TRUE(std::isnan(ds.accuracy[0].relL2));  // null in the document
  EXPECT_EQ(ds.accuracy[0].elements, 5);           // 2 + 3
  EXPECT_EQ(ds.accuracy[0].nanInfSkipped, 1);
  EXPECT_EQ(ds.accuracy[0].maxAbs, 2.0);           // max(2, 0)
  EXPECT_EQ(ds.counters.at("syncs"), 2);
  EXPECT_EQ(ds.samples.at(0).values, std::vector<double>{0.75});
  EXPECT_EQ(cases[2].status, "skipped");
  EXPECT_EQ(cases[2].dataset.hash, sha256Hex(sha256Hex("model-bytes") + "\nb=1\n7"));
  EXPECT_THROW(casesFromRunModel(nlohmann::json::object(), 1), std::runtime_error);
}

// One case through the exchange format, as qualify's model processes hand their records over:
// every field comes back, non-finite numbers included.
TEST(RunRecording, CaseCodecKeepsEveryValue) {
  const double inf = std::numeric_limits<double>::infinity();
  CaseRecord c;
  c.model = {"m", "abc"};
  c.dataset = {"binding ones", "binding", "b=1", "def"};
  c.status = "failed";
  c.error = "output 'y': rel-L2 inf > 1e-05";
  c.params = {{"timed_case", "binding ones"}};
  AccuracyRow a;
  a.comparison = "vs_expected";
  a.output = "y";
  a.verdict = "fail";
  a.reason = "rel-L2";
  a.dtype = "f32";
  a.shape = {2, 0};
  a.elements = 5;
  a.nanInfSkipped = 2;
  a.mismatches = 1;
  a.l2 = 0.1;
  a.relL2 = inf;
  a.maxAbs = -inf;
  a.cosine = std::nan("");
  c.accuracy = {a};
  c.samples = {{"latency_ms", "ms", {0.1, 1e-300, 12345.678}}};
  c.counters = {{"syncs", 3}, {"peak_device_bytes", int64_t{1} << 40}};

  nlohmann::json j = nlohmann::json::parse(caseToJson(c).dump());  // through text, as between processes
  CaseRecord back = caseFromJson(j, "records[0]");
  EXPECT_EQ(back.model.hash, "abc");
  EXPECT_EQ(back.dataset.name, "binding ones");
  EXPECT_EQ(back.dataset.kind, "binding");
  EXPECT_EQ(back.dataset.binding, "b=1");
  EXPECT_EQ(back.dataset.hash, "def");
  EXPECT_EQ(back.status, "failed");
  EXPECT_EQ(back.error, c.error);
  EXPECT_EQ(back.params, c.params);
  ASSERT_EQ(back.accuracy.size(), 1u);
  const AccuracyRow& b = back.accuracy[0];
  EXPECT_EQ(b.output, "y");
  EXPECT_EQ(b.reason, "rel-L2");
  EXPECT_EQ(b.dtype, "f32");
  EXPECT_EQ(b.shape, a.shape);
  EXPECT_EQ(b.elements, 5);
  EXPECT_EQ(b.nanInfSkipped, 2);
  EXPECT_EQ(b.mismatches, 1);
  EXPECT_EQ(b.l2, 0.1);
  EXPECT_EQ(b.relL2, inf);
  EXPECT_EQ(b.maxAbs, -inf);
  EXPECT_TRUE(std::isnan(b.cosine));
  ASSERT_EQ(back.samples.size(), 1u);
  EXPECT_EQ(back.samples[0].values, c.samples[0].values);  // exact: JSON numbers round-trip doubles
  EXPECT_EQ(back.counters, c.counters);

  j.erase("status");
  EXPECT_THROW(
      {
        try {
          caseFromJson(j, "records[0]");
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "records[0]: missing 'status'");
          throw;
        }
      },
      std::runtime_error);
}

TEST(RunRecording, HeaderDescribesThisProcess) {
  RunRecord r = newRunHeader("run", "sim", "production", {}, {{"seed", "1"}});
  EXPECT_EQ(r.key.size(), 32u);
  EXPECT_EQ(r.status, kRunUnfinished);
  EXPECT_EQ(r.pipeline.hash, sha256Hex("production"));
  EXPECT_NE(r.commandLine.find("dynqual_store_test"), std::string::npos) << r.commandLine;
  ASSERT_TRUE(r.build);
  EXPECT_EQ(r.build->revision.size(), 40u);  // the source tree is a git checkout
  EXPECT_NE(newRunHeader("run", "sim", "p", {}, {}).key, r.key);
}
