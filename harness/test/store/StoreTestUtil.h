#pragma once
// Shared helpers of the store tests: a temporary folder and a small synthetic run.
#include "dynqual/store/Records.h"

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

/// A fresh folder under the temp directory, removed with its contents on destruction.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string t = (std::filesystem::temp_directory_path() / "dq-store-XXXXXX").string();
    path = mkdtemp(t.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

/// A finished run on a fixed machine and build: case 0 is model "m1" as a whole (compile_ms),
/// case 1 its data set "test_data_set_0" with one accuracy row, the given latency samples and
/// three device counters.
inline dynqual::store::RunRecord sampleRun(const std::string& kind, const std::string& key,
                                           const std::string& startedAt, const std::vector<double>& latencies) {
  using namespace dynqual::store;
  RunRecord r;
  r.key = key;
  r.kind = kind;
  r.status = kRunFinished;
  r.startedAt = startedAt;
  r.endedAt = startedAt;
  r.commandLine = "dynqual " + kind;
  r.device = "sim";
  r.machine = {"", "Test CPU", 2, 24000000000, "Linux 6.1", "", ""};
  r.machine.fingerprint = machineFingerprint(r.machine);
  Build b{"", "0123456789abcdef0123456789abcdef01234567", false, "g++ 12", "0.1.0", {{"dynqual", "aa", 1500000}}};
  b.key = buildKey(b);
  r.build = b;
  r.pipeline = {"ph", "production"};
  r.params = {{"rel_l2_gate", "1e-05"}};
  CaseRecord whole;
  whole.model = {"m1", "mh"};
  whole.status = "passed";
  whole.samples = {{"compile_ms", "ms", {10.0}}};
  CaseRecord ds;
  ds.model = whole.model;
  ds.dataset = {"test_data_set_0", "stored", "", "dh"};
  ds.status = "passed";
  AccuracyRow a;
  a.comparison = "vs_expected";
  a.verdict = "pass";
  a.dtype = "float32";
  a.shape = {2, 3};
  a.elements = 6;
  a.l2 = 1e-7;
  a.relL2 = 2e-8;
  ds.accuracy = {a};
  ds.samples = {{"latency_ms", "ms", latencies}};
  ds.counters = {{"scalar_readbacks", 3}, {"syncs", 4}, {"kernel_launches", 7}};
  r.cases = {whole, ds};
  return r;
}
