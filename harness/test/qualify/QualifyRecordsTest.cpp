// The typed path from a qualified model to store cases: the run cases plus the timing samples,
// params and counters, with the values put in or hand calculations written here.
#include "dynqual/qualify/QualifyRecords.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

using namespace dynqual;

TEST(QualifyRecords, TimedModelAddsSamplesParamsAndCounters) {
  qualify::ModelQualification q;
  q.result.name = "gone";
  q.result.dir = "/nonexistent/dq-run-records/gone";
  q.result.status = run::ModelStatus::Passed;
  q.result.compileMs = 4.25;
  q.passMs = {{"canonicalize", 1.23456}, {"dq-optimize-memrefs", 0.5}};
  q.peakHostBytes = 5 << 20;
  q.perf.measured = true;
  q.perf.timedCase = "test_data_set_0";
  q.perf.sessionMs = 40;
  q.perf.firstInferMs = 3.5;
  q.perf.latencyMs = {1, 2, 3};
  q.perf.cpuPercent = 97;
  q.perf.counters = {{"kernel_launches", 7}, {"peak_device_bytes", 4096}};
  qualify::QualifyConfig config;
  config.run.seed = 1;
  config.warmup = 2;
  config.reps = 3;

  auto cases = qualify::caseRecords(q, config);
  ASSERT_EQ(cases.size(), 1u);
  const store::CaseRecord& whole = cases[0];
  EXPECT_EQ(whole.status, "pass");
  EXPECT_EQ(whole.params, (std::map<std::string, std::string>{{"pass_ms.canonicalize", "1.235"},
                                                              {"pass_ms.dq-optimize-memrefs", "0.500"},
                                                              {"reps", "3"},
                                                              {"timed_case", "test_data_set_0"},
                                                              {"warmup", "2"}}));
  std::vector<std::tuple<std::string, std::string, std::vector<double>>> samples;
  for (const auto& s : whole.samples)
    samples.emplace_back(s.metric, s.unit, s.values);
  // qps = 1000 / mean latency (2 ms) = 500 per second; session_s = 40 ms / 1000.
  std::vector<std::tuple<std::string, std::string, std::vector<double>>> want = {
      {"compile_ms", "ms", {4.25}}, {"peak_host_bytes", "bytes", {5242880}}, {"qps", "1/s", {500}},
      {"session_s", "s", {0.04}},   {"first_infer_ms", "ms", {3.5}},         {"latency_ms", "ms", {1, 2, 3}},
      {"cpu_percent", "%", {97}}};
  EXPECT_EQ(samples, want);
  EXPECT_EQ(whole.counters, (std::map<std::string, int64_t>{{"kernel_launches", 7}, {"peak_device_bytes", 4096}}));

  // A mean latency of 0 gives qps = +inf: not recorded.
  q.perf.latencyMs = {0, 0};
  auto zero = qualify::caseRecords(q, config);
  ASSERT_FALSE(zero.empty());
  for (const auto& s : zero[0].samples)
    EXPECT_NE(s.metric, "qps");
}

TEST(QualifyRecords, UntimedModelKeepsTheReason) {
  qualify::ModelQualification q;
  q.result.name = "gone";
  q.result.dir = "/nonexistent/dq-run-records/gone";
  q.result.status = run::ModelStatus::Failed;
  q.result.detail = "compile: unsupported: op 'Foo'";
  q.peakHostBytes = 1024;
  q.perf.error = "the model failed before timing";
  auto whole = qualify::caseRecords(q, {})[0];
  q.peakHostBytes.reset(); // unknown: no sample
  EXPECT_EQ(qualify::caseRecords(q, {})[0].samples.size(), 1u);
  EXPECT_EQ(whole.status, "FAIL");
  EXPECT_EQ(whole.error, "compile: unsupported: op 'Foo'");
  EXPECT_EQ(whole.params, (std::map<std::string, std::string>{{"perf_error", "the model failed before timing"}}));
  ASSERT_EQ(whole.samples.size(), 2u);
  EXPECT_EQ(whole.samples[1].metric, "peak_host_bytes");
  EXPECT_EQ(whole.samples[1].values, std::vector<double>{1024});
  EXPECT_TRUE(whole.counters.empty());
}
