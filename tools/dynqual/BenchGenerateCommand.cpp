// `dynqual bench generate`: the generation benchmark (prefill + greedy decode loop with TTFT, TPS
// and the physical limits) of decoder models, run by the MLIR-free `dq-bench generate` and
// recorded into the results store; or the import of dq-bench JSON produced on another machine
// (docs/commands/bench-generate.md).
#include "CompileBridge.h"
#include "Commands.h"

#include "dynqual/onnx/ModelLoader.h"
#include "dynqual/process/Process.h"
#include "dynqual/store/Fingerprint.h"
#include "dynqual/store/GenerationRecords.h"
#include "dynqual/store/GenerationVersus.h"
#include "dynqual/store/RunRecording.h"
#include "dynqual/store/Store.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace dynqual::cli {

namespace {

struct GenerateOpts {
  std::vector<std::string> models;
  std::vector<std::string> imports;
  std::string device = "sim", db, dqBench, workDir, pipeline = "production", base, versusJson;
  int promptLen = 128, genTokens = 128, warmup = 1, reps = 5;
  uint64_t seed = 1;
  int copyMib = -1;
  double timeout = 3600;
  bool noDb = false;
};

fs::path selfExe() {
  return fs::read_symlink("/proc/self/exe");
}

fs::path dqBenchPath(const GenerateOpts& o) {
  if (!o.dqBench.empty())
    return o.dqBench;
  fs::path beside = selfExe().parent_path() / "dq-bench";
  if (fs::exists(beside))
    return beside;
  return DYNQUAL_DQ_BENCH_PATH;
}

// Every JSON object in `file` with its line: one document, or one per line (as gpu-generate.sh
// collects them).
std::vector<std::pair<size_t, json>> readDocuments(const fs::path& file) {
  std::ifstream in(file);
  if (!in)
    throw UsageError(file.string() + ": cannot be read");
  std::vector<std::pair<size_t, json>> docs;
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    try {
      docs.emplace_back(n, json::parse(line));
    } catch (const json::exception& e) {
      throw UsageError(fmt::format("{}:{}: not a JSON object: {}", file.string(), n, e.what()));
    }
  }
  if (docs.empty())
    throw UsageError(file.string() + ": holds no dq-bench generate JSON");
  return docs;
}

json runOneModel(const GenerateOpts& o, const fs::path& modelDir, const fs::path& work) {
  const fs::path onnxFile = modelDir / "model.onnx";
  if (!fs::exists(onnxFile))
    throw UsageError(onnxFile.string() + ": missing (a model folder holds model.onnx)");
  const std::string name =
      modelDir.filename().empty() ? modelDir.parent_path().filename().string() : modelDir.filename().string();
  const fs::path artifact = work / (name + ".dqp");
  compileArtifact(onnxio::loadModel(onnxFile), o.pipeline, artifact);
  std::vector<std::string> argv = {dqBenchPath(o).string(),
                                   "generate",
                                   artifact.string(),
                                   "--device",
                                   o.device,
                                   "--prompt-len",
                                   std::to_string(o.promptLen),
                                   "--gen-tokens",
                                   std::to_string(o.genTokens),
                                   "--warmup",
                                   std::to_string(o.warmup),
                                   "--reps",
                                   std::to_string(o.reps),
                                   "--seed",
                                   std::to_string(o.seed),
                                   "--name",
                                   name,
                                   "--model-hash",
                                   store::sha256File(onnxFile)};
  if (o.copyMib > 0) {
    argv.push_back("--copy-mib");
    argv.push_back(std::to_string(o.copyMib));
  }
  process::ProcessResult r = process::runChild(argv, o.timeout);
  if (!r.started)
    throw std::runtime_error(argv[0] + ": could not be started: " + r.error);
  if (r.exitCode != 0) {
    std::string why = r.describeAbnormalEnd(o.timeout);
    throw std::runtime_error(fmt::format("{}: dq-bench generate failed{}: {}", name,
                                         why.empty() ? "" : " (" + why + ")", r.err.empty() ? r.out : r.err));
  }
  return json::parse(r.out);
}

void printSummary(const json& d) {
  const json& l = d.at("limits");
  auto num = [](const json& v) { return v.is_number() ? v.get<double>() : std::nan(""); };
  // A peer without a limit (no launch count, or no copy probe on a CPU) prints none.
  auto limit = [&](const char* what, const json& v) {
    return v.is_number() ? fmt::format("; {} limit {:.1f} tok/s", what, v.get<double>()) : std::string();
  };
  std::string binds = l.value("binding", "").empty() || !l["fraction_of_binding"].is_number()
                          ? ""
                          : fmt::format(", {} binds: {:.1f}% of it", l.value("binding", ""),
                                        l["fraction_of_binding"].get<double>() * 100);
  std::cout << fmt::format("{} on {}: TTFT {:.3f} ms, TPS {:.1f} (median of {}){}{}{}\n", d.value("model", ""),
                           d.value("device", ""), num(d["ttft_ms"].value("median", json())),
                           num(d["tps"].value("median", json())), d["params"].value("reps", 0),
                           limit("bandwidth", l["bandwidth_limit_tps"]), limit("launch", l["launch_limit_tps"]), binds);
}

void benchGenerate(const GenerateOpts& o) {
  if (o.models.empty() == o.imports.empty())
    throw UsageError("give either MODEL_DIR... (run here) or --import FILE.json... (record device results)");
  if (o.imports.empty() && !(o.base.empty() && o.versusJson.empty()))
    throw UsageError("--base and --versus-json belong to --import of an interleaved comparison (versus.jsonl)");
  std::vector<json> docs;
  // Per imported file holding versus runs: its comparisons, computed before anything is written.
  std::vector<std::pair<std::string, std::vector<store::VersusComparison>>> versus;
  if (!o.imports.empty()) {
    for (const auto& f : o.imports) {
      std::vector<store::VersusRun> runs;
      for (auto& [line, d] : readDocuments(f)) {
        store::generationCase(d); // checks the whole document before anything is written
        try {
          if (auto r = store::versusRun(d, fmt::format("{}:{}", f, line)))
            runs.push_back(std::move(*r));
        } catch (const std::runtime_error& e) {
          throw UsageError(e.what());
        }
        docs.push_back(std::move(d));
      }
      if (runs.empty())
        continue;
      try {
        versus.emplace_back(f, store::compareVersus(runs, o.base.empty() ? store::defaultVersusBase(runs) : o.base));
      } catch (const std::runtime_error& e) {
        const std::string m = e.what(); // a message about one run names its line already
        throw UsageError(m.rfind(f + ":", 0) == 0 ? m : f + ": " + m);
      }
    }
    if (versus.empty() && !(o.base.empty() && o.versusJson.empty()))
      throw UsageError("--base/--versus-json: no imported line has versus_cycle and versus_engine "
                       "(scripts/gpu-generate-versus.sh writes them)");
  } else {
    bool temp = o.workDir.empty();
    fs::path work = temp ? makeTempWorkDir("generate") : fs::path(o.workDir);
    fs::create_directories(work);
    for (const auto& m : o.models) {
      docs.push_back(runOneModel(o, m, work));
      printSummary(docs.back());
    }
    if (temp)
      fs::remove_all(work);
  }
  if (!versus.empty()) {
    json all = json::array();
    for (const auto& [file, comparisons] : versus) {
      std::cout << fmt::format("\n## Interleaved comparison: {}\n\n{}", file, store::versusMarkdown(comparisons));
      json part = store::versusJson(comparisons);
      for (json& c : part["comparisons"]) {
        c["source"] = file;
        all.push_back(std::move(c));
      }
    }
    if (!o.versusJson.empty()) {
      json doc = store::versusJson({});
      doc["comparisons"] = all;
      std::ofstream out(o.versusJson);
      if (!(out << doc.dump(2) << "\n"))
        throw std::runtime_error(o.versusJson + ": cannot be written");
    }
  }
  if (o.noDb)
    return;
  store::Store db(o.db.empty() ? store::defaultDbPath() : fs::path(o.db));
  // One run per machine: a file from the GPU machine records that machine, and dynqual's rows and
  // its peers' (each case names its own engine and device) share the run, so one report shows
  // them in one table. The host is the key, since peers name the same GPU in their own words (or
  // not at all, on the CPU); the run's device and machine are dq-bench's.
  std::map<std::string, std::vector<const json*>> groups;
  for (const json& d : docs)
    groups[d.value("host", json::object()).dump()].push_back(&d);
  for (const auto& [key, members] : groups) {
    auto dqBench = std::find_if(members.begin(), members.end(),
                                [](const json* d) { return d->value("tool", "") == "dq-bench generate"; });
    const json& first = dqBench == members.end() ? *members.front() : **dqBench;
    std::map<std::string, std::string> params = {{"source", o.imports.empty() ? "dq-bench" : "import"}};
    store::RunRecord header =
        store::newRunHeader("generate", first.value("device", ""), o.pipeline, {selfExe(), dqBenchPath(o)}, params);
    if (!o.imports.empty()) {
      header.machine = store::generationMachine(first);
      header.startedAt = first.value("started_at", header.startedAt);
    }
    int64_t runId = db.beginRun(header);
    std::vector<store::CaseRecord> cases;
    for (const json* d : members) {
      cases.push_back(store::generationCase(*d));
      if (!o.imports.empty())
        printSummary(*d);
    }
    db.recordCases(runId, cases); // one transaction
    db.finishRun(runId);
    std::cout << fmt::format("recorded run {} ({} {}) into {}\n", runId, cases.size(),
                             cases.size() == 1 ? "model" : "models", db.path().string());
  }
}

} // namespace

void addBenchGenerateCommand(CLI::App* bench) {
  auto* cmd = bench->add_subcommand(
      "generate", "Generation benchmark of decoder models: prefill, then a greedy decode loop with arg_max on the\n"
                  "device and the KV cache kept there; TTFT, TPS, peak memory and the copy-bandwidth and launch\n"
                  "limits, measured by the MLIR-free dq-bench and recorded into the results store. With --import,\n"
                  "records dq-bench generate JSON from another machine, and for the runs of an interleaved\n"
                  "comparison (versus.jsonl) computes the TPS ratios, their intervals and the signed-rank test\n"
                  "(docs/commands/bench-generate.md).");
  auto o = std::make_shared<GenerateOpts>();
  cmd->add_option("MODEL_DIR", o->models, "decoder model folders (model.onnx); compiled, then run by dq-bench");
  cmd->add_option("--import", o->imports, "dq-bench generate JSON files (one object per line) to record instead");
  cmd->add_option("--base", o->base,
                  "with --import of versus lines: the engine the others are compared with (default: torch when it "
                  "ran, else the first engine)");
  cmd->add_option("--versus-json", o->versusJson,
                  "with --import of versus lines: also write the comparisons as JSON to this file");
  cmd->add_option("--device", o->device, "device dq-bench runs on")->capture_default_str();
  cmd->add_option("--prompt-len", o->promptLen, "prompt tokens")->check(CLI::Range(1, 1000000))->capture_default_str();
  cmd->add_option("--gen-tokens", o->genTokens, "generated tokens (>= 2)")
      ->check(CLI::Range(2, 1000000))
      ->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "untimed generations")->check(CLI::Range(0, 1000))->capture_default_str();
  cmd->add_option("--reps", o->reps, "timed generations")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_option("--seed", o->seed, "seed of the prompt token ids")->capture_default_str();
  cmd->add_option("--copy-mib", o->copyMib, "size of the copy-bandwidth probe (default: dq-bench's)");
  cmd->add_option("--pipeline", o->pipeline, "compiler pipeline")->capture_default_str();
  cmd->add_option("--dq-bench", o->dqBench, "dq-bench binary (default: beside dynqual, else the build tree's)");
  cmd->add_option("--work-dir", o->workDir, "keep the compiled programs here (default: a temp folder, removed)");
  cmd->add_option("--timeout", o->timeout, "seconds per model for dq-bench")->capture_default_str();
  cmd->add_option("--db", o->db, "results database (default: $DYNQUAL_DB, else ./dynqual.db)");
  cmd->add_flag("--no-db", o->noDb, "print the results only");
  cmd->callback([o] {
    try {
      benchGenerate(*o);
      setExitCode(0);
    } catch (const UsageError& e) {
      std::cerr << "dynqual bench generate: " << e.what() << "\n";
      setExitCode(2);
    } catch (const std::exception& e) {
      std::cerr << "dynqual bench generate: " << e.what() << "\n";
      setExitCode(1);
    }
  });
}

} // namespace dynqual::cli
