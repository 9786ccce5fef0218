// `dynqual ab` and `gate` deciding on the modelled device time (--metric modelled-device-time):
// an A/A is exactly "no change" with zero spread after one round, an injected 10 % shift is a
// regression of exactly 10 %, a pipeline that launches more kernels costs more, the measured time
// is reported beside it without deciding, the requests it cannot serve are usage errors, and a
// stored run reanalyses to the same verdicts and says which metric decided.
#include "CommandRun.h"
#include "dynqual/process/Process.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <set>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kBin = DYNQUAL_BIN;
const fs::path kCorpus = DYNQUAL_CORPUS_DIR;
const std::string kSlice = (kCorpus / "slice_negative_step").string();
const std::string kExpand = (kCorpus / "expand_where_shape").string();
const std::vector<std::string> kModelled = {
    "--metric", "modelled-device-time", "--samples", "1", "--warmup", "0", "--no-db", "--format", "json"};

using command_test::Outcome;
using command_test::run;
using command_test::with;

/// The comparison of `model` and `metric`, or nullptr.
const json* comparison(const json& doc, const std::string& model, const std::string& metric) {
  for (const auto& c : doc["comparisons"])
    if (c["model"] == model && c["metric"] == metric)
      return &c;
  return nullptr;
}

} // namespace

TEST(ModelledMetricCommand, AaIsExactlyNoChangeAfterOneRoundWithTheMeasuredTimeBeside) {
  Outcome o = run(with({"ab", kSlice, kExpand, "--a", "dq", "--b", "dq:production@sim"}, kModelled));
  ASSERT_FALSE(o.doc.is_discarded()) << o.err;
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.doc["rounds"], 1);
  EXPECT_EQ(o.doc["measurement"]["decision_metric"], "modelled-device-time");
  for (const char* model : {"slice_negative_step", "expand_where_shape"}) {
    const json* m = comparison(o.doc, model, "modelled_device_ms");
    ASSERT_TRUE(m) << o.doc["comparisons"].dump();
    EXPECT_EQ((*m)["verdict"], "no-change");
    EXPECT_TRUE((*m)["exact"].get<bool>());
    EXPECT_TRUE((*m)["deciding"].get<bool>());
    EXPECT_EQ((*m)["ratio"], 1.0); // zero spread: the interval is the point 1
    EXPECT_EQ((*m)["ci_low"], 1.0);
    EXPECT_EQ((*m)["ci_high"], 1.0);
    EXPECT_GT((*m)["base_median"].get<double>(), 0);
    const json* beside = comparison(o.doc, model, "cpu_time_ms");
    ASSERT_TRUE(beside) << o.doc["comparisons"].dump();
    EXPECT_FALSE((*beside)["deciding"].get<bool>());
  }
  // Every sample of the deciding metric is one value per model (2 positions per arm, 1 round).
  std::map<std::string, std::set<double>> values;
  for (const auto& s : o.doc["samples"])
    values[s[0].get<std::string>()].insert(s[5].get<double>());
  EXPECT_EQ(values["slice_negative_step"].size(), 1u);
  EXPECT_EQ(values["expand_where_shape"].size(), 1u);
  EXPECT_NE(o.err.find("2 comparisons (2 no change"), std::string::npos) << o.err;
}

TEST(ModelledMetricCommand, AnInjectedTenPercentShiftIsARegressionOfExactlyTenPercent) {
  Outcome o =
      run(with({"ab", kSlice, kExpand, "--a", "dq", "--b", "dq", "--inject-slowdown", "slice_negative_step=shift:10"},
               kModelled));
  ASSERT_FALSE(o.doc.is_discarded()) << o.err;
  EXPECT_EQ(o.code, 1) << o.err;
  const json* slow = comparison(o.doc, "slice_negative_step", "modelled_device_ms");
  const json* other = comparison(o.doc, "expand_where_shape", "modelled_device_ms");
  ASSERT_TRUE(slow && other);
  EXPECT_EQ((*slow)["verdict"], "regression");
  EXPECT_NEAR((*slow)["ratio"].get<double>(), 1.10, 1e-12); // head = base x (1 + 10/100)
  EXPECT_EQ((*other)["verdict"], "no-change");
  // A tail or spread has no modelled form.
  Outcome tail = run(
      with({"ab", kSlice, "--a", "dq", "--b", "dq", "--inject-slowdown", "slice_negative_step=tail:0.3:25"}, kModelled),
      false);
  EXPECT_EQ(tail.code, 2);
  EXPECT_NE(tail.err.find("--metric measured"), std::string::npos) << tail.err;
}

TEST(ModelledMetricCommand, APipelineThatLaunchesMoreKernelsCostsMore) {
  // Production without dq-fuse-elementwise: decoder_tiny's elementwise chains become one kernel
  // per op again, so the head launches more kernels and moves more bytes.
  std::string unfused =
      "dq:builtin.module(dq-convert-onnx,canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries=true "
      "function-boundary-type-conversion=identity-layout-map},func.func(dq-use-output-allocator,"
      "dq-materialize-host-scalars,dq-optimize-memrefs,dq-promote-strided-operands,dq-pool-allocs,dq-lower-copies))";
  Outcome o = run(with({"ab", (kCorpus / "decoder_tiny").string(), "--a", "dq", "--b", unfused}, kModelled));
  ASSERT_FALSE(o.doc.is_discarded()) << o.err;
  ASSERT_TRUE(o.doc["accuracy"][0]["passed"].get<bool>()) << o.doc["accuracy"][0].dump();
  const json* m = comparison(o.doc, "decoder_tiny", "modelled_device_ms");
  ASSERT_TRUE(m) << o.doc["comparisons"].dump();
  EXPECT_GT((*m)["ratio"].get<double>(), 1.0) << m->dump();
  bool moreLaunches = false;
  for (const auto& c : o.doc["counter_changes"])
    if (c["name"] == "kernel_launches")
      moreLaunches = c["head"].get<int64_t>() > c["base"].get<int64_t>();
  EXPECT_TRUE(moreLaunches) << o.doc["counter_changes"].dump();
}

TEST(ModelledMetricCommand, OnlyDqOnSimArmsCanDecideOnIt) {
  Outcome hip = run(with({"ab", kSlice, "--a", "dq", "--b", "dq@hip"}, kModelled), false);
  EXPECT_EQ(hip.code, 2);
  EXPECT_NE(hip.err.find("not dq on sim"), std::string::npos) << hip.err;
  Outcome cal = run({"calibrate", kSlice, "--metric", "modelled-device-time", "--samples", "1"}, false);
  EXPECT_EQ(cal.code, 2);
  EXPECT_NE(cal.err.find("has none"), std::string::npos) << cal.err;
}

TEST(ModelledMetricCommand, AStoredGateReanalysesAndSaysWhichMetricDecided) {
  fs::path db = fs::temp_directory_path() / ("gate-modelled-" + std::to_string(getpid()) + ".db");
  fs::remove(db);
  std::string bin = fs::path(kBin).parent_path().string();
  Outcome g = run({"gate", "--base-bin", bin, "--head-bin", bin, kSlice, "--metric", "modelled-device-time",
                   "--force-timing", "--samples", "1", "--warmup", "0", "--db", db.string(), "--format", "json"});
  ASSERT_FALSE(g.doc.is_discarded()) << g.err;
  EXPECT_EQ(g.code, 0) << g.err;
  const std::string dbAbs = fs::absolute(db).lexically_normal().string();
  EXPECT_NE(g.err.find("dynqual gate: recorded run 1 into " + dbAbs), std::string::npos) << g.err;
  Outcome r = run({"gate", "--reanalyze", "latest", "--db", db.string()}, false); // Markdown: _ escaped
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("identical to the stored verdicts"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("Decided on modelled\\_device\\_ms (--metric modelled-device-time)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("no-change (exact)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(beside, not deciding)"), std::string::npos) << r.out;
  // The footer: the modelled time decided exactly after the first look's one round, by the margin.
  EXPECT_NE(r.out.find("### How this gate decided"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Decided on modelled\\_device\\_ms, the sim's modelled device time per run: an exact metric"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("1 of 1 timed comparison had one value per arm in every sample of the first look's 1 round"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("docs/metrics/modelled-device-time.md"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("### Beside, not deciding: cpu\\_time\\_ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Stored as run 1 in `" + dbAbs + "`."), std::string::npos) << r.out;
  Outcome rep = run({"report", "latest", "--db", db.string()}, false);
  EXPECT_NE(rep.out.find("Decided on modelled\\_device\\_ms"), std::string::npos) << rep.out << rep.err;
  fs::remove(db);
}
