// `dynqual qualify --prepare` / `--import-device-results` end to end, with the device side played
// by device_check.py --manifest and dq-run on the sim, and the sim's element-type precision mode
// meeting real, non-zero L2 in a qualification.
#include "DeviceTestSupport.h"
#include "dq/runtime/Npy.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/process/Process.h"
#include "dynqual/store/Store.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace dynqual;
using nlohmann::json;
using testing_support::runDynqual;
using testing_support::tempDir;

namespace {

/// Plays the device machine: device_check.py --manifest with dq-run on the manifest's device.
process::ProcessResult deviceRun(const fs::path& plan, const fs::path& results) {
  return process::runChild({PYTHON3_PATH, DEVICE_CHECK_PY, "--manifest", (plan / "manifest.json").string(), "--dq-run",
                            DQ_RUN_PATH, "--results", results.string(), "--jobs", "2"},
                           600);
}

/// A suite of two corpus models: a dynamic float model with three stored data sets, and
/// a shape-only one.
fs::path smallSuite() {
  fs::path suite = tempDir("device-suite");
  for (const char* name : {"collapse3_dynamic", "shape_output"})
    fs::create_directory_symlink(fs::path(DYNQUAL_CORPUS_DIR) / name, suite / name);
  return suite;
}

std::vector<json> readLines(const fs::path& file) {
  std::ifstream in(file);
  std::vector<json> lines;
  for (std::string l; std::getline(in, l);)
    if (!l.empty())
      lines.push_back(json::parse(l));
  return lines;
}

void writeLines(const fs::path& file, const std::vector<json>& lines) {
  std::ofstream out(file);
  for (const auto& l : lines)
    out << l.dump() << "\n";
}

const json& modelNamed(const json& doc, const std::string& name) {
  for (const auto& m : doc["models"])
    if (m["model"]["name"] == name)
      return m;
  throw std::runtime_error("no model " + name);
}

class QualifyDevice : public testing::Test {
protected:
  static void SetUpTestSuite() {
    root = tempDir("device-qualify");
    suite = smallSuite();
    plan = root / "plan";
    results = root / "results";
    process::ProcessResult p = runDynqual({"qualify", suite.string(), "--device", "sim", "--prepare", plan.string(),
                                           "--reps", "3", "--warmup", "1", "--bindings", "1"});
    prepareOut = p.out + p.err;
    prepareCode = p.exitCode;
    process::ProcessResult d = deviceRun(plan, results);
    deviceOut = d.out + d.err;
    deviceCode = d.exitCode;
  }
  static void TearDownTestSuite() {
    fs::remove_all(root);
    fs::remove_all(suite);
  }

  /// A copy of the device results to damage.
  fs::path copyOfResults(const std::string& name) { return testing_support::copyFolder(results, root / name); }

  json importResults(const fs::path& dir, int& code, std::string& err, const fs::path& db = {}) {
    return testing_support::runDynqualJson({"qualify", "--import-device-results", dir.string()}, db, code, err);
  }

  static inline fs::path root, suite, plan, results;
  static inline std::string prepareOut, deviceOut;
  static inline int prepareCode = -1, deviceCode = -1;
};

} // namespace

TEST_F(QualifyDevice, PrepareWritesArtifactsNpyInputsAndAManifest) {
  ASSERT_EQ(prepareCode, 0) << prepareOut;
  std::ifstream in(plan / "manifest.json");
  json m = json::parse(in);
  EXPECT_EQ(m["format"], "dynqual-device-plan");
  EXPECT_EQ(m["device"], "sim");
  EXPECT_EQ(m["settings"]["reps"], 3);
  ASSERT_EQ(m["models"].size(), 2u);
  for (const auto& e : m["models"]) {
    SCOPED_TRACE(e["name"].get<std::string>());
    EXPECT_EQ(e["status"], "planned") << e["detail"];
    EXPECT_TRUE(fs::exists(plan / e["artifact"].get<std::string>()));
    // Three stored data sets, plus the one binding of a dynamic model.
    EXPECT_GE(e["cases"].size(), 3u);
    int timed = 0;
    for (const auto& c : e["cases"]) {
      timed += c["timed"].get<bool>() ? 1 : 0;
      ASSERT_EQ(c["inputs"].size(), c["inputs_sha256"].size());
      for (const auto& f : c["inputs"]) {
        fs::path npy = plan / f.get<std::string>();
        EXPECT_TRUE(fs::exists(npy)) << npy;
        EXPECT_FALSE(fs::exists(fs::path(npy).replace_extension(".pb"))) << "the .pb copy is not carried";
      }
    }
    EXPECT_EQ(timed, 1);
    EXPECT_EQ(e["timed_case"], "test_data_set_0");
  }
  // A second prepare into the same folder is refused rather than mixing two plans.
  process::ProcessResult again = runDynqual({"qualify", suite.string(), "--prepare", plan.string()});
  EXPECT_EQ(again.exitCode, 2) << again.out;
  EXPECT_NE(again.err.find("not empty"), std::string::npos) << again.err;
}

TEST_F(QualifyDevice, ImportComparesWithTheReferenceAndRecordsTheRun) {
  ASSERT_EQ(prepareCode, 0) << prepareOut;
  ASSERT_EQ(deviceCode, 0) << deviceOut;
  fs::path db = root / "import.db";
  int code = -1;
  std::string err;
  json doc = importResults(results, code, err, db);
  ASSERT_FALSE(doc.is_discarded()) << err;
  EXPECT_EQ(code, 0) << err;
  EXPECT_EQ(doc["device"], "sim");
  EXPECT_EQ(doc["settings"]["reps"], 3);
  EXPECT_EQ(doc["device_run"]["results"], fs::absolute(results).lexically_normal().string());
  ASSERT_EQ(doc["models"].size(), 2u);
  for (const auto& m : doc["models"]) {
    SCOPED_TRACE(m["model"]["name"].get<std::string>());
    EXPECT_EQ(m["model"]["status"], "pass") << m["model"]["detail"];
    // Every stored data set was compared against the CPU reference.
    int compared = 0;
    for (const auto& c : m["model"]["cases"])
      compared += c.contains("vs_reference") ? 1 : 0;
    EXPECT_EQ(compared, 3);
    const json& p = m["perf"];
    ASSERT_TRUE(p["measured"].get<bool>()) << p["error"];
    EXPECT_EQ(p["latency_ms"].size(), 3u);
    EXPECT_GT(p["session_ms"].get<double>(), 0);
    EXPECT_GT(p["first_infer_ms"].get<double>(), 0);
    EXPECT_TRUE(p["counters"].contains("kernel_launches"));
    EXPECT_GT(m["peak_host_bytes"].get<double>(), 0);
  }
  // The run is in the store, with the device results it came from.
  store::Store s(db);
  auto runs = s.listRuns();
  ASSERT_EQ(runs.size(), 1u);
  store::RunRecord run = s.loadRun(runs[0].id);
  EXPECT_EQ(run.kind, "qualify");
  EXPECT_EQ(run.status, "finished");
  EXPECT_EQ(run.device, "sim");
  EXPECT_EQ(run.params.at("device_results"), fs::absolute(results).lexically_normal().string());
  // Whole-model cases carry the device's latency samples (3 repetitions).
  int latencySeries = 0;
  for (const auto& c : run.cases)
    for (const auto& smp : c.samples)
      if (smp.metric == "latency_ms") {
        EXPECT_EQ(smp.values.size(), 3u);
        ++latencySeries;
      }
  EXPECT_EQ(latencySeries, 2);
}

TEST_F(QualifyDevice, ACorruptedOutputIsAnAccuracyFailure) {
  ASSERT_EQ(deviceCode, 0) << deviceOut;
  fs::path bad = copyOfResults("corrupted");
  // Add 1 to every element of collapse3_dynamic's test_data_set_1 output.
  bool changed = false;
  for (const json& l : readLines(bad / "results.jsonl"))
    if (l["model"] == "collapse3_dynamic" && l["set"] == "test_data_set_1" && !l["timed"].get<bool>()) {
      fs::path f = bad / l["output_dir"].get<std::string>() / "output_0.npy";
      testing_support::shiftNpyValues(f, 1.0f);
      changed = true;
    }
  ASSERT_TRUE(changed);
  int code = -1;
  std::string err;
  json doc = importResults(bad, code, err);
  ASSERT_FALSE(doc.is_discarded()) << err;
  EXPECT_EQ(code, 1);
  const json& m = modelNamed(doc, "collapse3_dynamic");
  EXPECT_EQ(m["model"]["status"], "FAIL");
  EXPECT_NE(m["model"]["detail"].get<std::string>().find("test_data_set_1: output 'y': rel-L2"), std::string::npos)
      << m["model"]["detail"];
  EXPECT_GT(m["accuracy"]["relative_l2"].get<double>(), 1e-5);
  EXPECT_EQ(modelNamed(doc, "shape_output")["model"]["status"], "pass");
}

TEST_F(QualifyDevice, AMissingOrFailedDeviceRunFailsItsCase) {
  ASSERT_EQ(deviceCode, 0) << deviceOut;
  fs::path bad = copyOfResults("missing");
  std::vector<json> kept;
  for (json l : readLines(bad / "results.jsonl")) {
    if (l["model"] == "collapse3_dynamic" && l["set"] == "test_data_set_2")
      continue; // never reached
    if (l["model"] == "shape_output" && l["set"] == "test_data_set_1") {
      l["rc"] = 1;
      l["error"] = "dq-run: kernel 'x': injected";
    }
    kept.push_back(l);
  }
  writeLines(bad / "results.jsonl", kept);
  int code = -1;
  std::string err;
  json doc = importResults(bad, code, err);
  ASSERT_FALSE(doc.is_discarded()) << err;
  EXPECT_EQ(code, 1);
  EXPECT_NE(modelNamed(doc, "collapse3_dynamic")["model"]["detail"].get<std::string>().find(
                "no device result for case test_data_set_2"),
            std::string::npos);
  EXPECT_NE(modelNamed(doc, "shape_output")["model"]["detail"].get<std::string>().find("injected"), std::string::npos);
}

TEST_F(QualifyDevice, ResultsOfAnotherDeviceAreRefused) {
  ASSERT_EQ(deviceCode, 0) << deviceOut;
  fs::path bad = copyOfResults("other-device");
  std::vector<json> lines = readLines(bad / "results.jsonl");
  lines[0]["device"] = "hip";
  writeLines(bad / "results.jsonl", lines);
  int code = -1;
  std::string err;
  importResults(bad, code, err);
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("the results come from device 'hip' but the plan was prepared for 'sim'"), std::string::npos)
      << err;
}

/// Writes `values` (f32) over the .npy output `file`, keeping its shape.
static void setNpyValues(const fs::path& file, const std::vector<float>& values) {
  dq::rt::HostTensor t = dq::rt::readNpy(file.string());
  ASSERT_EQ(t.values<float>().size(), values.size()) << file;
  dq::rt::writeNpy(file.string(), dq::rt::HostTensor::fromValues<float>(t.dtype, t.dims, values));
}

TEST(QualifyDeviceZeroNorm, ImportComputesRelativeL2FromTheSavedOutputsWithTheZeroNormRule) {
  // collapse3_dynamic (y = reshape(x + x, [a, -1])) on an all-zero x of [1, 2, 2, 3]: the
  // reference output is 12 zeros, so ||b|| = 0. The device run saves its outputs; the import
  // compares them here. Two damaged copies of the saved output (every other element 0):
  //  - 3e-7 and 4e-7: ||a - b|| = sqrt(9e-14 + 16e-14) = 5e-7. stats::relativeL2 gives +inf (the
  //    difference is not 0), so the absolute gate decides: 5e-7 <= 1e-6, pass ("abs-L2 (zero norm)");
  //  - 3e-6 and 4e-6: ||a - b|| = 5e-6 > 1e-6, FAIL. (The former device-side script reported
  //    ||a - b|| itself as the relative L2 when ||b|| = 0, 5e-6 <= its 1e-4, and passed it.)
  fs::path root = tempDir("device-zero-norm");
  fs::path model = root / "suite" / "zero_output";
  fs::create_directories(model / "test_data_set_0");
  fs::copy_file(fs::path(DYNQUAL_CORPUS_DIR) / "collapse3_dynamic" / "model.onnx", model / "model.onnx");
  onnxio::writeTensorFile(model / "test_data_set_0" / "input_0.pb", Tensor(DType::Float, {1, 2, 2, 3}), "x");
  onnxio::writeTensorFile(model / "test_data_set_0" / "output_0.pb", Tensor(DType::Float, {1, 12}), "y");
  fs::path plan = root / "plan", results = root / "results";
  process::ProcessResult p = runDynqual({"qualify", (root / "suite").string(), "--device", "sim", "--prepare",
                                         plan.string(), "--reps", "1", "--warmup", "0", "--bindings", "0"});
  ASSERT_EQ(p.exitCode, 0) << p.out << p.err;
  process::ProcessResult d = deviceRun(plan, results);
  ASSERT_EQ(d.exitCode, 0) << d.out << d.err;

  struct Damage {
    float first, second;
    double l2;
    bool pass;
  };
  for (const Damage& dmg : {Damage{3e-7f, 4e-7f, 5e-7, true}, Damage{3e-6f, 4e-6f, 5e-6, false}}) {
    SCOPED_TRACE(dmg.l2);
    fs::path bad = testing_support::copyFolder(results, root / "damaged");
    for (const json& l : readLines(bad / "results.jsonl"))
      if (!l["timed"].get<bool>()) {
        std::vector<float> v(12, 0.0f);
        v[0] = dmg.first;
        v[5] = dmg.second;
        setNpyValues(bad / l["output_dir"].get<std::string>() / "output_0.npy", v);
      }
    int code = -1;
    std::string err;
    json doc = testing_support::runDynqualJson({"qualify", "--import-device-results", bad.string()}, {}, code, err);
    ASSERT_FALSE(doc.is_discarded()) << err;
    EXPECT_EQ(code, dmg.pass ? 0 : 1) << err;
    const json& m = doc["models"][0];
    EXPECT_EQ(m["model"]["status"], dmg.pass ? "pass" : "FAIL") << m["model"]["detail"];
    ASSERT_EQ(m["model"]["cases"].size(), 1u);
    const json& out = m["model"]["cases"][0]["vs_reference"]["outputs"][0];
    EXPECT_NEAR(out["l2"].get<double>(), dmg.l2, dmg.l2 * 1e-6);
    EXPECT_TRUE(out["rel_l2"].is_null()) << "+inf (JSON null), not the absolute L2: " << out["rel_l2"];
    if (dmg.pass)
      EXPECT_EQ(out["reason"], "abs-L2 (zero norm)");
    else
      EXPECT_NE(out["reason"].get<std::string>().find("expected norm is 0 and abs-L2"), std::string::npos)
          << out["reason"];
  }
  fs::remove_all(root);
}

TEST(QualifyPrecision, ElementTypeModeMeetsNonZeroL2WithinTheDeviceGate) {
  // decoder_tiny (matmuls, softmax, layer norm): the exact sim matches the reference to the last
  // bit, fp32 accumulation does not, and stays within the device gate of 1e-4.
  fs::path suite = fs::path(DYNQUAL_CORPUS_DIR) / "decoder_tiny";
  double rel[2] = {-1, -1};
  int i = 0;
  for (const char* device : {"sim", "sim-elem"}) {
    process::ProcessResult c = runDynqual({"qualify", suite.string(), "--device", device, "--reps", "1", "--bindings",
                                           "0", "--format", "json", "--no-db"});
    json doc = json::parse(c.out, nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << c.err;
    EXPECT_EQ(c.exitCode, 0) << c.err;
    const json& m = doc["models"][0];
    EXPECT_EQ(m["model"]["status"], "pass") << m["model"]["detail"];
    rel[i++] = m["accuracy"]["relative_l2"].get<double>();
    EXPECT_EQ(doc["gates"]["f32"].get<double>(), std::string(device) == "sim" ? 1e-5 : 1e-4);
  }
  EXPECT_EQ(rel[0], 0.0);
  EXPECT_GT(rel[1], 0.0);
  EXPECT_LE(rel[1], 1e-4);
}
