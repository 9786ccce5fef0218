// The run header of a recording command and the exchange form of one case.
#include "StoreTestUtil.h"

#include "dynqual/store/Fingerprint.h"
#include "dynqual/store/RunRecording.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace dynqual::store;
namespace fs = std::filesystem;

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

  nlohmann::json j = nlohmann::json::parse(caseToJson(c).dump()); // through text, as between processes
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
  EXPECT_EQ(back.samples[0].values, c.samples[0].values); // exact: JSON numbers round-trip doubles
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
  EXPECT_EQ(r.build->revision.size(), 40u); // the source tree is a git checkout
  EXPECT_NE(newRunHeader("run", "sim", "p", {}, {}).key, r.key);
}
