// The typed path from run results to store cases: every field of a constructed result must arrive
// in its CaseRecord unchanged. Expected values are the ones put in, or hand sums and hashes
// written here.
#include "dynqual/run/RunRecords.h"
#include "dynqual/store/Fingerprint.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace dynqual;

namespace {

struct TempFolder {
  fs::path path = fs::temp_directory_path() / ("dq-run-records-" + std::to_string(getpid()));
  TempFolder() { fs::create_directories(path); }
  ~TempFolder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

compare::OutputComparison output(const std::string& name, DType dtype, std::vector<int64_t> shape, int64_t elements,
                                 double l2, double relL2, double maxAbs, double cosine, int64_t nonFinite,
                                 int64_t mismatches, compare::Verdict v, const std::string& reason) {
  compare::OutputComparison o;
  o.name = name;
  o.dtype = dtype;
  o.shape = std::move(shape);
  o.elements = elements;
  o.l2 = l2;
  o.relL2 = relL2;
  o.maxAbs = maxAbs;
  o.cosine = cosine;
  o.nonFiniteSkipped = nonFinite;
  o.mismatches = mismatches;
  o.verdict = v;
  o.reason = reason;
  return o;
}

compare::Comparison comparison(std::vector<compare::OutputComparison> outs, compare::Verdict v,
                               const std::string& reason, double l2, double relL2) {
  compare::Comparison c;
  c.outputs = std::move(outs);
  c.verdict = v;
  c.reason = reason;
  c.combinedL2 = l2;
  c.combinedRelL2 = relL2;
  return c;
}

void expectRow(const store::AccuracyRow& a, const std::string& cmp, const std::string& out, const std::string& verdict,
               const std::string& reason, const std::string& dtype, std::vector<int64_t> shape, int64_t elements,
               int64_t nanInf, int64_t mismatches, double l2, double relL2, double maxAbs, double cosine) {
  SCOPED_TRACE(cmp + " / '" + out + "'");
  EXPECT_EQ(a.comparison, cmp);
  EXPECT_EQ(a.output, out);
  EXPECT_EQ(a.verdict, verdict);
  EXPECT_EQ(a.reason, reason);
  EXPECT_EQ(a.dtype, dtype);
  EXPECT_EQ(a.shape, shape);
  EXPECT_EQ(a.elements, elements);
  EXPECT_EQ(a.nanInfSkipped, nanInf);
  EXPECT_EQ(a.mismatches, mismatches);
  auto same = [](double got, double want) { return std::isnan(want) ? std::isnan(got) : got == want; };
  EXPECT_PRED2(same, a.l2, l2);
  EXPECT_PRED2(same, a.relL2, relL2);
  EXPECT_PRED2(same, a.maxAbs, maxAbs);
  EXPECT_PRED2(same, a.cosine, cosine);
}

/// Model "m" with a stored set (passed, all three comparisons), a binding the reference rejected
/// (skipped) and a binding that failed.
run::ModelResult constructedRun(const fs::path& dir) {
  using compare::Verdict;
  const double nan = std::nan("");
  const double inf = std::numeric_limits<double>::infinity();
  run::ModelResult r;
  r.name = "m";
  r.dir = dir;
  r.status = run::ModelStatus::Failed;
  r.detail = "binding random 0: output 'y': rel-L2 0.25 > 1e-05";
  r.bitExact = true;
  r.compileMs = 12.5;

  run::CaseResult stored;
  stored.name = "test_data_set_0";
  stored.kind = "stored";
  stored.passed = true;
  stored.executeMs = 0.75;
  stored.counters = {{"syncs", 2}, {"scalar_readbacks", 1}};
  stored.vsExpected =
      comparison({output("y", DType::Float, {2}, 2, 3.0, 0.5, 2.0, 0.875, 1, 0, Verdict::Pass, "rel-L2"),
                  output("z", DType::Int64, {3}, 3, 0, 0, 0, 1, 0, 0, Verdict::Pass, "exact")},
                 Verdict::Pass, "", 3.0, nan);
  stored.vsReference = comparison(
      {output("y", DType::Float, {2}, 2, 0.125, inf, 0.0625, 0.5, 0, 0, Verdict::Pass, "abs-L2 (zero norm)")},
      Verdict::Pass, "", 0.125, inf);
  stored.referenceVsStored = comparison(
      {output("y", DType::Float, {2}, 2, 0, 0, 0, 1, 0, 0, Verdict::Pass, "bit-exact")}, Verdict::Pass, "", 0, 0);
  r.cases.push_back(stored);

  run::CaseResult rejected;
  rejected.name = "binding ones";
  rejected.kind = "binding";
  rejected.binding = "b=1";
  rejected.skipped = true;
  rejected.error = "reference rejects the binding";
  r.cases.push_back(rejected);

  run::CaseResult failed;
  failed.name = "binding random 0";
  failed.kind = "binding";
  failed.binding = "b=3";
  failed.error = "output 'y': rel-L2 0.25 > 1e-05";
  failed.executeMs = 1.5;
  failed.counters = {{"kernel_launches", 9}};
  failed.vsExpected = comparison(
      {output("y", DType::Float, {3, 2}, 6, 1.0, 0.25, 0.5, 0.75, 2, 1, Verdict::Fail, "rel-L2 0.25 > 1e-05"),
       output("k", DType::Bool, {4}, 4, 0, 0, 7.0, 1, 0, 3, Verdict::Fail, "3 mismatches")},
      Verdict::Fail, "output 'y': rel-L2 0.25 > 1e-05", 1.0, 0.25);
  r.cases.push_back(failed);
  return r;
}

} // namespace

TEST(RunRecords, EveryFieldOfAConstructedRun) {
  TempFolder dir;
  std::ofstream(dir.path / "model.onnx") << "model-bytes";
  fs::create_directories(dir.path / "test_data_set_0");
  std::ofstream(dir.path / "test_data_set_0" / "input_1.pb") << "in1";
  std::ofstream(dir.path / "test_data_set_0" / "input_0.pb") << "in0";
  std::ofstream(dir.path / "test_data_set_0" / "output_0.pb") << "out0"; // not an input: not hashed

  auto cases = run::caseRecords(constructedRun(dir.path), 7);
  ASSERT_EQ(cases.size(), 4u);
  const std::string model = store::sha256Hex("model-bytes");
  for (const auto& c : cases) {
    EXPECT_EQ(c.model.name, "m");
    EXPECT_EQ(c.model.hash, model);
  }

  const store::CaseRecord& whole = cases[0];
  EXPECT_TRUE(whole.dataset.name.empty());
  EXPECT_TRUE(whole.dataset.hash.empty());
  EXPECT_EQ(whole.status, "FAIL");
  EXPECT_EQ(whole.error, "binding random 0: output 'y': rel-L2 0.25 > 1e-05");
  EXPECT_EQ(whole.params, (std::map<std::string, std::string>{{"compare_mode", "bit-exact"}}));
  ASSERT_EQ(whole.samples.size(), 1u);
  EXPECT_EQ(whole.samples[0].metric, "compile_ms");
  EXPECT_EQ(whole.samples[0].unit, "ms");
  EXPECT_EQ(whole.samples[0].values, std::vector<double>{12.5});
  EXPECT_TRUE(whole.accuracy.empty());
  EXPECT_TRUE(whole.counters.empty());

  const store::CaseRecord& stored = cases[1];
  EXPECT_EQ(stored.dataset.name, "test_data_set_0");
  EXPECT_EQ(stored.dataset.kind, "stored");
  EXPECT_EQ(stored.dataset.binding, "");
  // Input files in name order, each as "name sha256\n".
  EXPECT_EQ(stored.dataset.hash, store::sha256Hex("input_0.pb " + store::sha256Hex("in0") + "\ninput_1.pb " +
                                                  store::sha256Hex("in1") + "\n"));
  EXPECT_EQ(stored.status, "passed");
  EXPECT_EQ(stored.error, "");
  EXPECT_TRUE(stored.params.empty());
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  ASSERT_EQ(stored.accuracy.size(), 3u + 2u + 2u); // (combined + y + z), (combined + y) twice
  // Combined: elements 2 + 3, NaN/Inf 1 + 0, max-abs max(2, 0), cosine undefined.
  expectRow(stored.accuracy[0], "vs_expected", "", "pass", "", "", {}, 5, 1, 0, 3.0, nan, 2.0, nan);
  expectRow(stored.accuracy[1], "vs_expected", "y", "pass", "rel-L2", "f32", {2}, 2, 1, 0, 3.0, 0.5, 2.0, 0.875);
  expectRow(stored.accuracy[2], "vs_expected", "z", "pass", "exact", "i64", {3}, 3, 0, 0, 0, 0, 0, 1);
  expectRow(stored.accuracy[3], "vs_reference", "", "pass", "", "", {}, 2, 0, 0, 0.125, inf, 0.0625, nan);
  expectRow(stored.accuracy[4], "vs_reference", "y", "pass", "abs-L2 (zero norm)", "f32", {2}, 2, 0, 0, 0.125, inf,
            0.0625, 0.5);
  expectRow(stored.accuracy[5], "reference_vs_stored", "", "pass", "", "", {}, 2, 0, 0, 0, 0, 0, nan);
  expectRow(stored.accuracy[6], "reference_vs_stored", "y", "pass", "bit-exact", "f32", {2}, 2, 0, 0, 0, 0, 0, 1);
  ASSERT_EQ(stored.samples.size(), 1u);
  EXPECT_EQ(stored.samples[0].metric, "execute_ms");
  EXPECT_EQ(stored.samples[0].unit, "ms");
  EXPECT_EQ(stored.samples[0].values, std::vector<double>{0.75});
  EXPECT_EQ(stored.counters, (std::map<std::string, int64_t>{{"scalar_readbacks", 1}, {"syncs", 2}}));

  const store::CaseRecord& rejected = cases[2];
  EXPECT_EQ(rejected.dataset.name, "binding ones");
  EXPECT_EQ(rejected.dataset.kind, "binding");
  EXPECT_EQ(rejected.dataset.binding, "b=1");
  EXPECT_EQ(rejected.dataset.hash, store::sha256Hex(model + "\nb=1\n7"));
  EXPECT_EQ(rejected.status, "skipped");
  EXPECT_EQ(rejected.error, "reference rejects the binding");
  EXPECT_TRUE(rejected.accuracy.empty());
  EXPECT_EQ(rejected.samples.at(0).values, std::vector<double>{0});
  EXPECT_TRUE(rejected.counters.empty());

  const store::CaseRecord& failed = cases[3];
  EXPECT_EQ(failed.dataset.hash, store::sha256Hex(model + "\nb=3\n7"));
  EXPECT_EQ(failed.status, "failed");
  EXPECT_EQ(failed.error, "output 'y': rel-L2 0.25 > 1e-05");
  ASSERT_EQ(failed.accuracy.size(), 3u);
  // Combined: elements 6 + 4, NaN/Inf 2 + 0, mismatches 1 + 3, max-abs max(0.5, 7).
  expectRow(failed.accuracy[0], "vs_expected", "", "fail", "output 'y': rel-L2 0.25 > 1e-05", "", {}, 10, 2, 4, 1.0,
            0.25, 7.0, nan);
  expectRow(failed.accuracy[1], "vs_expected", "y", "fail", "rel-L2 0.25 > 1e-05", "f32", {3, 2}, 6, 2, 1, 1.0, 0.25,
            0.5, 0.75);
  expectRow(failed.accuracy[2], "vs_expected", "k", "fail", "3 mismatches", "bool", {4}, 4, 0, 3, 0, 0, 7.0, 1);
  EXPECT_EQ(failed.samples.at(0).values, std::vector<double>{1.5});
  EXPECT_EQ(failed.counters, (std::map<std::string, int64_t>{{"kernel_launches", 9}}));

  // The seed is part of a binding's key, not of a stored set's.
  auto other = run::caseRecords(constructedRun(dir.path), 8);
  EXPECT_EQ(other[1].dataset.hash, stored.dataset.hash);
  EXPECT_NE(other[2].dataset.hash, rejected.dataset.hash);
}

TEST(RunRecords, SkippedModelAndVanishedFolder) {
  run::ModelResult r;
  r.name = "gone";
  r.dir = "/nonexistent/dq-run-records/gone";
  r.status = run::ModelStatus::Skipped;
  r.skipReason = scope::SkipReason::OpOutsideSupportedSet;
  r.detail = "Conv, MaxPool";
  auto cases = run::caseRecords(r, 1);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].model.hash, store::sha256Hex("gone"));
  EXPECT_EQ(cases[0].status, "skip");
  EXPECT_EQ(cases[0].error, "op_outside_supported_set: Conv, MaxPool");
  EXPECT_TRUE(cases[0].params.empty()); // not bit-exact
  EXPECT_EQ(cases[0].samples.at(0).values, std::vector<double>{0});

  r.detail.clear();
  EXPECT_EQ(run::caseRecords(r, 1)[0].error, "op_outside_supported_set");

  // A stored set whose folder is gone is keyed like a binding (no inputs to hash).
  r.status = run::ModelStatus::Passed;
  r.skipReason.reset();
  run::CaseResult c;
  c.name = "test_data_set_0";
  c.kind = "stored";
  c.passed = true;
  r.cases.push_back(c);
  EXPECT_EQ(run::caseRecords(r, 3)[1].dataset.hash, store::sha256Hex(store::sha256Hex("gone") + "\n\n3"));
}
