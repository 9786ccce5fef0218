// The generated decoder: its semantics through the CPU reference and the
// checked-in corpus copy, which must be exactly what `make-model` writes today.
#include "dynqual/modelgen/DecoderModel.h"
#include "dynqual/qualify/Suite.h"
#include "dynqual/reference/Interpreter.h"
#include "dynqual/store/Fingerprint.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace dynqual;

namespace {

modelgen::DecoderSpec tinySpec() {
  modelgen::DecoderSpec s;
  s.layers = 2;
  s.hidden = 8;
  s.heads = 4;
  s.kvHeads = 2;
  s.vocab = 11;
  s.seed = 5;
  return s;
}

std::vector<Tensor> prefix(const modelgen::DecoderSpec& spec, const std::vector<Tensor>& in, int64_t n) {
  // input_ids [1, s] -> [1, n]; caches unchanged.
  std::vector<Tensor> out = in;
  auto ids = in[0].toInts();
  out[0] = Tensor::fromInts(DType::Int64, {1, n}, std::vector<int64_t>(ids.begin(), ids.begin() + n));
  (void)spec;
  return out;
}

double maxDiff(const Tensor& a, const Tensor& b) {
  auto x = a.toDoubles(), y = b.toDoubles();
  EXPECT_EQ(x.size(), y.size());
  double m = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i)
    m = std::max(m, std::abs(x[i] - y[i]));
  return m;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

} // namespace

TEST(DecoderModel, ShapesFollowBatchSequenceAndPast) {
  auto spec = tinySpec();
  auto model = modelgen::buildDecoder(spec);
  auto out = reference::evaluate(model, modelgen::decoderInputs(spec, 2, 3, 4, 9));
  ASSERT_EQ(out.size(), 1u + 2 * 2);
  EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{2, 3, 11}));
  for (size_t i = 1; i < out.size(); ++i)
    EXPECT_EQ(out[i].dims(), (std::vector<int64_t>{2, 2, 7, 2})) << i; // [b, kv_heads, past+seq, hidden/heads]
}

TEST(DecoderModel, CausalAndCacheConsistent) {
  auto spec = tinySpec();
  auto model = modelgen::buildDecoder(spec);
  auto in = modelgen::decoderInputs(spec, 1, 3, 2, 17);
  auto full = reference::evaluate(model, in);
  // Causal: the first two positions do not see the third token.
  auto two = reference::evaluate(model, prefix(spec, in, 2));
  auto f = full[0].toDoubles(), p = two[0].toDoubles();
  for (size_t i = 0; i < p.size(); ++i)
    EXPECT_NEAR(f[i], p[i], 1e-6) << i;
  // Cache: two tokens, then the third on the present K/V, equals three tokens at once.
  std::vector<Tensor> step = {Tensor::fromInts(DType::Int64, {1, 1}, {in[0].toInts()[2]})};
  step.insert(step.end(), two.begin() + 1, two.end());
  auto last = reference::evaluate(model, step);
  auto l = last[0].toDoubles();
  for (size_t v = 0; v < l.size(); ++v)
    EXPECT_NEAR(f[2 * 11 + v], l[v], 1e-6) << v;
  for (size_t i = 1; i < full.size(); ++i)
    EXPECT_LT(maxDiff(full[i], last[i]), 1e-6) << "present " << i;
  // The mask matters: a different third token changes the third position's logits.
  auto other = in;
  auto ids = in[0].toInts();
  ids[2] = (ids[2] + 1) % 11;
  other[0] = Tensor::fromInts(DType::Int64, {1, 3}, ids);
  EXPECT_GT(maxDiff(reference::evaluate(model, other)[0], full[0]), 1e-4);
}

TEST(DecoderModel, SameSeedSameBytesOtherSeedOtherWeights) {
  auto a = modelgen::buildDecoder(tinySpec()).SerializeAsString();
  EXPECT_EQ(a, modelgen::buildDecoder(tinySpec()).SerializeAsString());
  auto spec = tinySpec();
  spec.seed = 6;
  EXPECT_NE(a, modelgen::buildDecoder(spec).SerializeAsString());
  spec.heads = 3;
  EXPECT_THROW(modelgen::buildDecoder(spec), std::invalid_argument); // hidden 8 % heads 3 != 0
}

TEST(DecoderModel, CorpusCopyIsWhatMakeModelWrites) {
  fs::path corpus = fs::path(DYNQUAL_CORPUS_DIR) / "decoder_tiny";
  fs::path fresh = fs::temp_directory_path() / ("dynqual-decoder-" + std::to_string(getpid()));
  modelgen::DecoderSpec spec; // the corpus arguments, also in corpus/decoder_tiny/meta.json
  spec.layers = 1, spec.hidden = 16, spec.heads = 4, spec.kvHeads = 2, spec.vocab = 32, spec.seed = 1;
  modelgen::writeDecoder(spec, fresh);
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(fresh)) {
    if (!e.is_regular_file())
      continue;
    ++files;
    fs::path rel = fs::relative(e.path(), fresh);
    ASSERT_TRUE(fs::exists(corpus / rel))
        << rel << " missing from the corpus; regenerate it (docs/commands/make-model.md)";
    EXPECT_EQ(slurp(e.path()), slurp(corpus / rel)) << rel << " differs; regenerate it (docs/commands/make-model.md)";
  }
  EXPECT_EQ(files, 1 + 3 * (3 + 3)); // model + 3 sets of (ids, 2 caches) inputs and (logits, 2 presents) outputs
  fs::remove_all(fresh);
}

// A model process that times out or crashes is recorded as a failed whole-model case carrying its
// error and verdict, so reports can show it (they list every failed case).
TEST(QualifyRecording, TimeoutAndCrashKeepVerdictAndError) {
  namespace q = dynqual::qualify;
  auto timedOut = q::qualifyInChild({"/bin/sleep", "5"}, "/nonexistent/slow_model", 0.3);
  EXPECT_EQ(timedOut.report["accuracy"]["verdict"], "timeout");
  const auto& cases = timedOut.cases;
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].model.name, "slow_model");
  EXPECT_EQ(cases[0].model.hash, store::sha256Hex("slow_model")); // no model.onnx to hash
  EXPECT_EQ(cases[0].status, "FAIL");
  EXPECT_EQ(cases[0].params.at("verdict"), "timeout");
  EXPECT_EQ(cases[0].params.at("perf_error"), cases[0].error);
  EXPECT_NE(cases[0].error.find("timed out"), std::string::npos) << cases[0].error;
  EXPECT_TRUE(cases[0].samples.empty()); // nothing was measured

  auto crashed = q::qualifyInChild({"/bin/sh", "-c", "kill -SEGV $$"}, "/nonexistent/crashy", 10);
  ASSERT_EQ(crashed.cases.size(), 1u);
  EXPECT_EQ(crashed.cases[0].status, "FAIL");
  EXPECT_EQ(crashed.cases[0].params.at("verdict"), "crash");
  EXPECT_FALSE(crashed.cases[0].error.empty());
}

// A finished child's records arrive as the store cases it built, non-finite values included, and
// leave the report; a malformed record makes the model a crash, not a wrong row.
TEST(QualifyRecording, ChildRecordsCrossTheProcessBoundary) {
  namespace q = dynqual::qualify;
  store::CaseRecord whole;
  whole.model = {"m", "abc"};
  whole.status = "pass";
  whole.params["timed_case"] = "test_data_set_0";
  whole.samples.push_back({"latency_ms", "ms", {0.5, 0.25}});
  store::CaseRecord set;
  set.model = whole.model;
  set.dataset = {"test_data_set_0", "stored", "", "def"};
  set.status = "passed";
  store::AccuracyRow row;
  row.comparison = "vs_reference";
  row.relL2 = std::numeric_limits<double>::infinity();
  row.cosine = std::nan("");
  row.shape = {2, 3};
  set.accuracy.push_back(row);
  set.counters["syncs"] = 3;
  nlohmann::json doc = {{"model", {{"name", "m"}, {"status", "pass"}}},
                        {"accuracy", {{"verdict", "pass"}}},
                        {"records", {store::caseToJson(whole), store::caseToJson(set)}}};
  auto entry = q::qualifyInChild({"/bin/echo", doc.dump()}, "/nonexistent/m", 10);
  EXPECT_FALSE(entry.report.contains("records"));
  EXPECT_EQ(entry.report["model"]["status"], "pass");
  ASSERT_EQ(entry.cases.size(), 2u);
  EXPECT_EQ(entry.cases[0].params, whole.params);
  EXPECT_EQ(entry.cases[0].samples.at(0).values, (std::vector<double>{0.5, 0.25}));
  EXPECT_EQ(entry.cases[1].dataset.hash, "def");
  EXPECT_EQ(entry.cases[1].counters, set.counters);
  ASSERT_EQ(entry.cases[1].accuracy.size(), 1u);
  EXPECT_EQ(entry.cases[1].accuracy[0].relL2, std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(entry.cases[1].accuracy[0].cosine));
  EXPECT_EQ(entry.cases[1].accuracy[0].shape, (std::vector<int64_t>{2, 3}));

  doc["records"][1].erase("status");
  auto bad = q::qualifyInChild({"/bin/echo", doc.dump()}, "/nonexistent/m", 10);
  EXPECT_EQ(bad.report["accuracy"]["verdict"], "crash");
  ASSERT_EQ(bad.cases.size(), 1u);
  EXPECT_NE(bad.cases[0].error.find("records[1]: missing 'status'"), std::string::npos) << bad.cases[0].error;
}
