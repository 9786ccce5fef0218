// `dynqual ab --prepare-device` / `--import-device` end to end, with the device machine played by
// device_ab.py and dq-run on the sim: the rounds it brings back go through the engine's statistics,
// an injected slowdown is found, a corrupted output fails correctness, and bad input is refused.
#include "DeviceTestSupport.h"
#include "dq/runtime/Npy.h"
#include "dynqual/process/Process.h"
#include "dynqual/store/Store.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace dynqual;
using nlohmann::json;
using testing_support::runDynqual;
using testing_support::tempDir;

namespace {

process::ProcessResult deviceAb(const fs::path& plan, const fs::path& out) {
  return process::runChild(
      {PYTHON3_PATH, DEVICE_AB_PY, "--plan", plan.string(), "--dq-run", DQ_RUN_PATH, "--out", out.string()}, 600);
}

const json& comparisonOf(const json& doc, const std::string& model) {
  for (const auto& c : doc["comparisons"])
    if (c["model"] == model)
      return c;
  throw std::runtime_error("no comparison for " + model);
}

const json& accuracyOf(const json& doc, const std::string& model) {
  for (const auto& a : doc["accuracy"])
    if (a["model"] == model)
      return a;
  throw std::runtime_error("no accuracy entry for " + model);
}

// Two corpus models; decoder_tiny's head arm spins 200 % of its base median after every run, so
// that a loaded test machine's scheduling noise cannot flip a round. Ten rounds at one look: the
// exact signed-rank test reaches p = 2/1024 there, and still p = 2*10/1024 = 0.0195 with one round of
// rank 5 or less against it (hand count of the sign patterns), below the Holm level
// 0.025 of two comparisons at alpha 0.05.
class AbDevice : public testing::Test {
protected:
  static void SetUpTestSuite() {
    root = tempDir("ab-device");
    fs::create_directories(root / "suite");
    for (const char* name : {"collapse3_dynamic", "decoder_tiny"})
      fs::create_directory_symlink(fs::path(DYNQUAL_CORPUS_DIR) / name, root / "suite" / name);
    plan = root / "plan";
    out = root / "out";
    process::ProcessResult p = runDynqual({"ab", (root / "suite").string(), "--a", "dq:production@sim", "--b",
                                           "dq:production@sim", "--looks", "10", "--samples", "3", "--warmup", "1",
                                           "--inject-slowdown", "decoder_tiny=200", "--prepare-device", plan.string()});
    prepareLog = p.out + p.err;
    prepareCode = p.exitCode;
    process::ProcessResult d = deviceAb(plan, out);
    deviceLog = d.out + d.err;
    deviceCode = d.exitCode;
  }
  static void TearDownTestSuite() { fs::remove_all(root); }

  static json import(const fs::path& dir, int& code, std::string& err, const fs::path& db = {}) {
    return testing_support::runDynqualJson({"ab", "--import-device", dir.string()}, db, code, err);
  }

  static fs::path copyOfOut(const std::string& name) { return testing_support::copyFolder(out, root / name); }

  static inline fs::path root, plan, out;
  static inline std::string prepareLog, deviceLog;
  static inline int prepareCode = -1, deviceCode = -1;
};

} // namespace

TEST_F(AbDevice, TheDeviceRoundsFindTheInjectedSlowdownAndAreRecorded) {
  ASSERT_EQ(prepareCode, 0) << prepareLog;
  ASSERT_EQ(deviceCode, 0) << deviceLog;
  // Sample interleaving: per model 10 rounds x 3 pairs x 2 arms, one process per round; in each
  // round the pairs run base,head / head,base / base,head (head first in odd rounds).
  std::ifstream in(out / "samples.jsonl");
  std::map<std::string, int> perModel;
  std::vector<std::string> round1;
  for (std::string l; std::getline(in, l);) {
    if (l.empty())
      continue;
    json j = json::parse(l);
    ++perModel[j["model"].get<std::string>()];
    if (j["model"] == "decoder_tiny" && j["round"] == 1)
      round1.push_back(j["arm"].get<std::string>() + std::to_string(j["position"].get<int>()));
  }
  EXPECT_EQ(perModel["decoder_tiny"], 60);
  EXPECT_EQ(perModel["collapse3_dynamic"], 60);
  EXPECT_EQ(round1, (std::vector<std::string>{"head0", "base1", "base2", "head3", "head0", "base1"}));

  fs::path db = root / "ab.db";
  int code = -1;
  std::string err;
  json doc = import(out, code, err, db);
  ASSERT_FALSE(doc.is_discarded()) << err;
  EXPECT_EQ(code, 1) << err; // a regression
  EXPECT_EQ(doc["rounds"], 10);
  const json& slow = comparisonOf(doc, "decoder_tiny");
  EXPECT_EQ(slow["verdict"], "regression") << slow.dump();
  EXPECT_EQ(slow["metric"], "latency_ms");
  EXPECT_GT(slow["ratio"].get<double>(), 1.2);
  EXPECT_GT(doc["slowdown_us"]["decoder_tiny"].get<double>(), 0);
  for (const char* m : {"collapse3_dynamic", "decoder_tiny"})
    EXPECT_TRUE(accuracyOf(doc, m)["passed"].get<bool>()) << m;

  store::Store s(db);
  auto runs = s.listRuns();
  ASSERT_EQ(runs.size(), 1u);
  store::RunRecord run = s.loadRun(runs[0].id);
  EXPECT_EQ(run.kind, "ab");
  EXPECT_EQ(run.status, "finished");
  EXPECT_EQ(run.params.at("device_results"), fs::absolute(out).lexically_normal().string());
}

TEST_F(AbDevice, AnAnalysisChangedAtImportIsExploratoryAndNeverFails) {
  ASSERT_EQ(prepareCode, 0) << prepareLog;
  ASSERT_EQ(deviceCode, 0) << deviceLog;
  // The plan fixed alpha 0.05, margin 2 % and the round value before the device ran. As planned,
  // decoder_tiny's +200 % is a regression (exit 1, see above); asked with another alpha and margin
  // after the data exists, the same regression is exploratory: labelled, and exit 3, not 1.
  std::ifstream planned(plan / "ab.json");
  json ab = json::parse(planned);
  EXPECT_EQ(ab["analysis"]["alpha"], 0.05);
  EXPECT_EQ(ab["analysis"]["margin"], 0.02);
  EXPECT_EQ(ab["analysis"]["round_value"], "lower-half-mean"); // sample interleaving
  int code = -1;
  std::string err;
  json doc = testing_support::runDynqualJson(
      {"ab", "--import-device", out.string(), "--alpha", "0.2", "--margin", "0.1"}, {}, code, err);
  ASSERT_FALSE(doc.is_discarded()) << err;
  EXPECT_EQ(code, 3) << err;
  EXPECT_EQ(comparisonOf(doc, "decoder_tiny")["verdict"], "regression");
  ASSERT_EQ(doc["exploratory"].size(), 2u) << doc["exploratory"].dump();
  EXPECT_NE(doc["exploratory"][0].get<std::string>().find("alpha 0.2 (planned 0.05)"), std::string::npos);
  EXPECT_EQ(doc["verdict"].get<std::string>().rfind("EXPLORATORY", 0), 0u) << doc["verdict"];
  // Asking for what the plan fixed is not a change.
  json same =
      testing_support::runDynqualJson({"ab", "--import-device", out.string(), "--alpha", "0.05"}, {}, code, err);
  ASSERT_FALSE(same.is_discarded()) << err;
  EXPECT_EQ(code, 1) << err;
  EXPECT_TRUE(same["exploratory"].empty());
}

TEST_F(AbDevice, ProcessInterleavingRunsAProcessPerPosition) {
  ASSERT_EQ(deviceCode, 0) << deviceLog;
  fs::path p = root / "plan-process", o = root / "out-process";
  process::ProcessResult prep =
      runDynqual({"ab", (root / "suite" / "decoder_tiny").string(), "--a", "dq:production@sim", "--b",
                  "dq:production@sim", "--interleave", "process", "--looks", "8", "--samples", "2", "--inject-slowdown",
                  "decoder_tiny=200", "--prepare-device", p.string()});
  ASSERT_EQ(prep.exitCode, 0) << prep.out << prep.err;
  process::ProcessResult dev = deviceAb(p, o);
  ASSERT_EQ(dev.exitCode, 0) << dev.out << dev.err;
  // 8 rounds x 4 positions x 2 samples, each position its own process.
  std::ifstream in(o / "samples.jsonl");
  int n = 0;
  for (std::string l; std::getline(in, l);)
    n += l.empty() ? 0 : 1;
  EXPECT_EQ(n, 64);
  int code = -1;
  std::string err;
  json doc = import(o, code, err);
  ASSERT_FALSE(doc.is_discarded()) << err;
  EXPECT_EQ(code, 1) << err;
  EXPECT_EQ(comparisonOf(doc, "decoder_tiny")["verdict"], "regression");
}

// An arm's environment reaches its dq-run processes: a dq-run wrapper that slows every run when
// DQ_TEST_SLOW=1 is set turns `--b-env DQ_TEST_SLOW=1` into a regression of the head arm.
TEST_F(AbDevice, AnArmsEnvironmentReachesItsRuns) {
  ASSERT_EQ(deviceCode, 0) << deviceLog;
  fs::path wrapper = root / "slow-dq-run.sh";
  std::ofstream(wrapper) << "#!/bin/sh\nif [ \"$DQ_TEST_SLOW\" = 1 ]; then exec " << DQ_RUN_PATH
                         << " \"$@\" --busy-us 1000; fi\nexec " << DQ_RUN_PATH << " \"$@\"\n";
  fs::permissions(wrapper, fs::perms::owner_all);
  fs::path p = root / "plan-env", o = root / "out-env";
  std::vector<std::string> prepare = {"ab",
                                      (root / "suite" / "decoder_tiny").string(),
                                      "--a",
                                      "dq:production@sim",
                                      "--b",
                                      "dq:production@sim",
                                      "--b-env",
                                      "DQ_TEST_SLOW=1",
                                      "--looks",
                                      "8",
                                      "--samples",
                                      "2",
                                      "--prepare-device",
                                      p.string()};
  // One process runs both arms under sample interleaving: refused.
  process::ProcessResult sample = runDynqual(prepare);
  EXPECT_EQ(sample.exitCode, 2);
  EXPECT_NE(sample.err.find("--interleave process"), std::string::npos) << sample.err;
  fs::remove_all(p);
  prepare.insert(prepare.end() - 2, {"--interleave", "process"});
  process::ProcessResult prep = runDynqual(prepare);
  ASSERT_EQ(prep.exitCode, 0) << prep.out << prep.err;
  process::ProcessResult dev = process::runChild(
      {PYTHON3_PATH, DEVICE_AB_PY, "--plan", p.string(), "--dq-run", wrapper.string(), "--out", o.string()}, 600);
  ASSERT_EQ(dev.exitCode, 0) << dev.out << dev.err;
  fs::path db = root / "env.db";
  int code = -1;
  std::string err;
  json doc = import(o, code, err, db);
  ASSERT_FALSE(doc.is_discarded()) << err;
  EXPECT_EQ(code, 1) << err;
  EXPECT_EQ(comparisonOf(doc, "decoder_tiny")["verdict"], "regression");
  store::Store s(db);
  store::RunRecord run = s.loadRun(s.listRuns().back().id);
  EXPECT_EQ(run.params.at("head_env"), "DQ_TEST_SLOW=1");
  EXPECT_EQ(run.params.count("base_env"), 0u);
}

TEST_F(AbDevice, ACorruptedHeadOutputFailsCorrectness) {
  ASSERT_EQ(deviceCode, 0) << deviceLog;
  fs::path bad = copyOfOut("corrupted");
  bool changed = false;
  std::ifstream in(bad / "head" / "results.jsonl");
  for (std::string l; std::getline(in, l);) {
    json j = json::parse(l);
    if (j["model"] != "collapse3_dynamic" || j["set"] != "test_data_set_1" || j["timed"].get<bool>())
      continue;
    fs::path f = bad / "head" / j["output_dir"].get<std::string>() / "output_0.npy";
    testing_support::shiftNpyValues(f, 1.0f);
    changed = true;
  }
  ASSERT_TRUE(changed);
  int code = -1;
  std::string err;
  json doc = import(bad, code, err);
  ASSERT_FALSE(doc.is_discarded()) << err;
  EXPECT_EQ(code, 1);
  const json& a = accuracyOf(doc, "collapse3_dynamic");
  EXPECT_FALSE(a["passed"].get<bool>());
  EXPECT_EQ(a["detail"].get<std::string>().rfind("head: ", 0), 0u) << a["detail"];
  EXPECT_TRUE(accuracyOf(doc, "decoder_tiny")["passed"].get<bool>());
  // Only models that pass correctness are timed.
  for (const auto& c : doc["comparisons"])
    EXPECT_NE(c["model"], "collapse3_dynamic");
}

// A model whose rounds stopped on the device (device-ab.json names its error) is an infrastructure
// error and leaves the analysis; the other model's regression is still found, and wins the exit code.
TEST_F(AbDevice, AModelThatStoppedDoesNotHideAnotherModelsRegression) {
  ASSERT_EQ(deviceCode, 0) << deviceLog;
  fs::path cut = copyOfOut("stopped");
  std::vector<std::string> kept;
  {
    std::ifstream in(cut / "samples.jsonl");
    for (std::string l; std::getline(in, l);)
      if (!l.empty() && !(json::parse(l)["model"] == "collapse3_dynamic" && json::parse(l)["round"].get<int>() >= 5))
        kept.push_back(l);
  }
  std::ofstream(cut / "samples.jsonl") << [&] {
    std::string all;
    for (const auto& l : kept)
      all += l + "\n";
    return all;
  }();
  json d = json::parse(std::ifstream(cut / "device-ab.json"));
  d["errors"]["collapse3_dynamic"] = "round 5 head: dq-run exit -11";
  std::ofstream(cut / "device-ab.json") << d.dump();
  int code = -1;
  std::string err;
  json doc = import(cut, code, err);
  ASSERT_FALSE(doc.is_discarded()) << err;
  EXPECT_EQ(code, 1) << err;
  EXPECT_EQ(comparisonOf(doc, "decoder_tiny")["verdict"], "regression");
  ASSERT_EQ(doc["infrastructure_errors"].size(), 1u);
  EXPECT_NE(doc["infrastructure_errors"][0].get<std::string>().find("collapse3_dynamic: round 5"), std::string::npos);
}

TEST_F(AbDevice, BadInputIsRefusedWithTheFileNamed) {
  ASSERT_EQ(deviceCode, 0) << deviceLog;
  fs::path noSamples = copyOfOut("no-samples");
  fs::remove(noSamples / "samples.jsonl");
  int code = -1;
  std::string err;
  import(noSamples, code, err);
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("samples.jsonl"), std::string::npos) << err;

  // An empty file: a model that passed has no sample and no error to explain it.
  std::ofstream(noSamples / "samples.jsonl").close();
  import(noSamples, code, err);
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("no sample of model"), std::string::npos) << err;

  fs::path badArm = copyOfOut("bad-arm");
  std::ofstream(badArm / "samples.jsonl", std::ios::app)
      << R"({"model": "decoder_tiny", "arm": "middle", "round": 0, "position": 0, "rep": 9, "value_ms": 1.0})" << "\n";
  import(badArm, code, err);
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("samples.jsonl:"), std::string::npos) << err;
  EXPECT_NE(err.find("arm 'middle'"), std::string::npos) << err;

  process::ProcessResult cal =
      runDynqual({"calibrate", "--import-device", out.string(), "--db", (root / "cal.db").string()});
  EXPECT_EQ(cal.exitCode, 2);
  EXPECT_NE(cal.err.find("import it with dynqual ab"), std::string::npos) << cal.err;

  // Arms whose timed case has other inputs are not timed against each other.
  fs::path otherInputs = testing_support::copyFolder(plan, root / "plan-other-inputs");
  json manifest = json::parse(std::ifstream(otherInputs / "head" / "manifest.json"));
  for (auto& m : manifest["models"])
    if (m["name"] == "decoder_tiny")
      for (auto& c : m["cases"])
        if (c["timed"].get<bool>())
          c["inputs_sha256"][0] = "0000";
  std::ofstream(otherInputs / "head" / "manifest.json") << manifest.dump();
  process::ProcessResult odd = deviceAb(otherInputs, root / "out-other-inputs");
  EXPECT_EQ(odd.exitCode, 0) << odd.out << odd.err;
  json oddRun = json::parse(std::ifstream(root / "out-other-inputs" / "device-ab.json"));
  EXPECT_NE(oddRun["errors"].value("decoder_tiny", "").find("different inputs"), std::string::npos) << oddRun.dump();
  EXPECT_FALSE(oddRun["errors"].contains("collapse3_dynamic"));

  process::ProcessResult dev =
      process::runChild({PYTHON3_PATH, DEVICE_AB_PY, "--plan", plan.string(), "--dq-run",
                         (root / "no-such-dq-run").string(), "--out", (root / "out-bad").string()},
                        60);
  EXPECT_EQ(dev.exitCode, 2);
  EXPECT_NE(dev.err.find("not an executable file"), std::string::npos) << dev.err;

  process::ProcessResult r = runDynqual({"ab", (root / "suite").string(), "--a", "ort:cpu", "--b", "dq:production@sim",
                                         "--prepare-device", (root / "plan-ort").string()});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("not a dq variant"), std::string::npos) << r.err;

  r = runDynqual({"ab", "--import-device", out.string(), "--a", "dq:production@hip", "--no-db"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("differs from the plan"), std::string::npos) << r.err;
}

// A gate whose head changes the runtime: each arm's plan carries its own runtime sources, and on
// the device each arm runs its own dq-run. Here the head "runtime" is a dq-run wrapper that spins
// 300 us after every run, so the two serving processes (one per runtime, sampled in alternation)
// must find a regression, in the same base/head order as one process holding both programs.
TEST_F(AbDevice, AGateWithTwoRuntimesSamplesTwoServingProcessesAndFindsTheSlowerOne) {
  ASSERT_EQ(deviceCode, 0) << deviceLog;
  fs::path binDir = fs::path(DYNQUAL_BIN).parent_path();
  fs::path headSrc = root / "head-src";
  fs::create_directories(headSrc / "compiler");
  fs::copy(fs::path(DYNQUAL_SOURCE_DIR) / "compiler" / "runtime", headSrc / "compiler" / "runtime",
           fs::copy_options::recursive);
  std::ofstream(headSrc / "compiler" / "runtime" / "lib" / "Runtime.cpp", std::ios::app) << "// head\n";
  fs::path p = root / "plan-gate", o = root / "out-gate";
  process::ProcessResult prep =
      runDynqual({"gate", (root / "suite" / "decoder_tiny").string(), "--base-bin", binDir.string(), "--base-src",
                  DYNQUAL_SOURCE_DIR, "--head-bin", binDir.string(), "--head-src", headSrc.string(), "--looks", "8",
                  "--samples", "3", "--warmup", "1", "--prepare-device", p.string()});
  ASSERT_EQ(prep.exitCode, 0) << prep.out << prep.err;
  json ab = json::parse(std::ifstream(p / "ab.json"));
  EXPECT_EQ(ab["kind"], "gate");
  ASSERT_TRUE(ab["runtime_src"].contains("base") && ab["runtime_src"].contains("head")) << ab.dump();
  EXPECT_NE(ab["runtime_src"]["base"]["sha256"], ab["runtime_src"]["head"]["sha256"]);
  EXPECT_TRUE(fs::exists(p / ab["runtime_src"]["head"]["dir"].get<std::string>() / "CMakeLists.txt"));
  std::ifstream copied(p / "head" / "runtime-src" / "lib" / "Runtime.cpp");
  std::string text((std::istreambuf_iterator<char>(copied)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("// head\n"), std::string::npos);

  fs::path slow = root / "slow-runtime.sh";
  std::ofstream(slow) << "#!/bin/sh\nexec " << DQ_RUN_PATH << " \"$@\" --busy-us 1000\n";
  fs::permissions(slow, fs::perms::owner_all);
  process::ProcessResult dev = process::runChild({PYTHON3_PATH, DEVICE_AB_PY, "--plan", p.string(), "--base-dq-run",
                                                  DQ_RUN_PATH, "--head-dq-run", slow.string(), "--out", o.string()},
                                                 600);
  ASSERT_EQ(dev.exitCode, 0) << dev.out << dev.err;
  json result = json::parse(std::ifstream(o / "device-ab.json"));
  EXPECT_TRUE(result["serving_pairs"].get<bool>());
  EXPECT_NE(result["runtimes"]["base"], result["runtimes"]["head"]);
  std::vector<std::string> round1;
  int n = 0;
  std::ifstream in(o / "samples.jsonl");
  for (std::string l; std::getline(in, l);) {
    if (l.empty())
      continue;
    json j = json::parse(l);
    ++n;
    if (j["round"] == 1)
      round1.push_back(j["arm"].get<std::string>() + std::to_string(j["position"].get<int>()));
  }
  EXPECT_EQ(n, 8 * 3 * 2); // 8 rounds x 3 pairs x 2 arms
  EXPECT_EQ(round1, (std::vector<std::string>{"head0", "base1", "base2", "head3", "head0", "base1"}));
  int code = -1;
  std::string err;
  json doc = testing_support::runDynqualJson({"gate", "--import-device", o.string()}, root / "gate.db", code, err);
  ASSERT_FALSE(doc.is_discarded()) << err;
  EXPECT_EQ(code, 1) << err;
  EXPECT_EQ(comparisonOf(doc, "decoder_tiny")["verdict"], "regression");
}

// dq-run --serve answers one timed run per request line and refuses what it cannot serve.
TEST_F(AbDevice, DqRunServesOneTimedRunPerRequest) {
  ASSERT_EQ(prepareCode, 0) << prepareLog;
  json manifest = json::parse(std::ifstream(plan / "base" / "manifest.json"));
  json entry = manifest["models"][0];
  json timedCase;
  for (const auto& c : entry["cases"])
    if (c.value("timed", false))
      timedCase = c;
  ASSERT_FALSE(timedCase.is_null()) << entry.dump();
  std::string cmd = std::string("printf 'run\\nrun\\nquit\\n' | ") + DQ_RUN_PATH + " " +
                    (plan / "base" / entry["artifact"].get<std::string>()).string() + " --device sim --output-dir " +
                    (root / "serve-out").string() + " --warmup 0 --serve";
  for (const auto& i : timedCase["inputs"])
    cmd += " --input " + (plan / "base" / i.get<std::string>()).string();
  process::ProcessResult r = process::runChild({"/bin/sh", "-c", cmd}, 120);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::vector<json> lines;
  std::istringstream ss(r.out);
  for (std::string l; std::getline(ss, l);)
    if (!l.empty())
      lines.push_back(json::parse(l));
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_TRUE(lines[0]["ready"].get<bool>());
  for (int k : {1, 2})
    EXPECT_GT(lines[k]["execute_ms"].get<double>(), 0) << lines[k].dump();
  process::ProcessResult refused =
      process::runChild({DQ_RUN_PATH, "x.dqp", "--output-dir", "o", "--reps", "3", "--serve"}, 60);
  EXPECT_EQ(refused.exitCode, 2);
  EXPECT_NE(refused.err.find("--serve"), std::string::npos) << refused.err;
}
