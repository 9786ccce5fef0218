// The generation document's records: the fraction of the binding limit is computed from the samples
// (GenerationRecords.h).
#include "dynqual/store/GenerationRecords.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace dynqual::store;
using nlohmann::json;

TEST(GenerationRecords, FractionOfTheBindingLimitIsComputedFromTheSamples) {
  // A peer's document whose own fraction is wrong: TPS samples 100 and 200 have the median 150
  // (stats::median), the binding limit is 2000 tokens/s, so the fraction is 150 / 2000 = 0.075.
  json doc = {
      {"tool", "torch-eager generate"},
      {"version", 1},
      {"engine", "torch test"},
      {"model", "m"},
      {"program", "m/model.onnx"},
      {"device", "cuda"},
      {"params", {{"prompt_len", 4}, {"gen_tokens", 3}, {"seed", 1}, {"reps", 2}}},
      {"decoder", {{"vocab", 64}, {"kv_dtype", "float16"}}},
      {"tokens", {1, 2}},
      {"tokens_same_every_rep", true},
      {"ttft_ms", {{"samples", {10.0, 12.0}}}},
      {"tps", {{"median", 999.0}, {"samples", {100.0, 200.0}}}},
      {"peak_device_bytes", nullptr},
      {"peak_host_bytes", 5},
      {"probes",
       {{"copy_gbps", 0.004}, {"memcpy_gbps", nullptr}, {"strided_copy_gbps", nullptr}, {"launch_us", nullptr}}},
      {"limits",
       {{"weight_bytes_per_token", 2000},
        {"launches_per_token", nullptr},
        {"bandwidth_limit_tps", 2000.0},
        {"launch_limit_tps", nullptr},
        {"binding", "bandwidth"},
        {"binding_limit_tps", 2000.0},
        {"fraction_of_binding", 0.9}}}};
  auto fraction = [](const CaseRecord& c) {
    for (const auto& s : c.samples)
      if (s.metric == "fraction_of_binding")
        return s.values.at(0);
    return std::nan("");
  };
  EXPECT_DOUBLE_EQ(fraction(generationCase(doc)), 0.075);
  // Without a binding limit the peer measured nothing: no sample.
  doc["limits"]["binding_limit_tps"] = nullptr;
  doc["limits"]["fraction_of_binding"] = nullptr;
  EXPECT_TRUE(std::isnan(fraction(generationCase(doc))));
}
