// `dynqual corpus add` (promote a fuzz finding into corpus/) and `dynqual corpus check` (replay
// every corpus case) (docs/commands/corpus.md).
#include "Commands.h"

#include "dynqual/compare/Compare.h"
#include "dynqual/exec/Executor.h"
#include "dynqual/fuzz/Campaign.h"
#include "dynqual/fuzz/Oracle.h"
#include "dynqual/onnx/ModelLoader.h"
#include "dynqual/onnx/TensorProtoIO.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <iostream>

namespace fs = std::filesystem;

namespace dynqual::cli {

namespace {

#ifndef DYNQUAL_SOURCE_DIR
#define DYNQUAL_SOURCE_DIR "."
#endif

fs::path defaultCorpus() { return fs::path(DYNQUAL_SOURCE_DIR) / "corpus"; }

nlohmann::json readMeta(const fs::path& dir) {
  std::ifstream in(dir / "meta.json");
  if (!in)
    return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw UsageError((dir / "meta.json").string() + ": not a JSON object");
  return j;
}

std::vector<fs::path> sortedFiles(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0)
      files.push_back(e.path());
  std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) {
    auto num = [](const fs::path& p) {
      std::string s = p.stem().string();
      return std::stoi(s.substr(s.find_last_of('_') + 1));
    };
    return num(a) < num(b);
  });
  return files;
}

/// One replayed case: "pass", "detected", "fail" or "skip", with a reason.
struct Replay {
  std::string verdict, reason;
};

/// Runs `dir` on `variant` over its data sets (or generated bindings with reference outputs when
/// it has none) and says whether anything differed or failed.
Replay replay(const fs::path& dir, const std::string& variantText, bool bitExact, exec::Executor& executor,
              bool& detected, std::string& why) {
  detected = false;
  onnx::ModelProto model = onnxio::loadModel(dir / "model.onnx");
  std::vector<std::vector<fs::path>> inputs;
  std::vector<std::vector<Tensor>> expected;
  std::vector<std::string> names;
  for (const auto& o : model.graph().output())
    names.push_back(o.name());
  std::vector<fs::path> sets = sortedFiles(dir, "test_data_set_");
  fs::path generated = executor.config().workDir / "inputs" / dir.filename();
  if (!sets.empty()) {
    for (const auto& s : sets) {
      inputs.push_back(sortedFiles(s, "input_"));
      std::vector<Tensor> out;
      for (const auto& f : sortedFiles(s, "output_"))
        out.push_back(onnxio::readTensorFile(f));
      expected.push_back(std::move(out));
    }
  } else {
    fuzz::PreparedCase pc = fuzz::prepareCase(model, 4, 1, -1, /*check=*/false);
    auto specs = onnxio::describeInputs(model);
    for (size_t b = 0; b < pc.bindings.size(); ++b) {
      fs::path d = generated / std::to_string(b);
      fs::create_directories(d);
      std::vector<fs::path> files;
      for (size_t i = 0; i < pc.inputs[b].size(); ++i) {
        files.push_back(d / ("input_" + std::to_string(i) + ".pb"));
        onnxio::writeTensorFile(files.back(), pc.inputs[b][i], specs[i].name);
      }
      inputs.push_back(files);
    }
    expected = pc.expected;
  }
  exec::Arm arm;
  arm.label = "corpus";
  arm.variant = exec::parseVariant(variantText);
  arm.binDir = exec::selfBinDir();
  exec::PreparedModel pm;
  try {
    pm = executor.prepare(arm, dir);
  } catch (const exec::ExecError& e) {
    if (e.stage() == exec::Stage::Infra)
      throw;
    detected = true;
    why = e.what();
    return {};
  }
  compare::CompareOptions opts;
  opts.bitExact = bitExact;
  for (size_t b = 0; b < inputs.size(); ++b) {
    fs::path out = executor.config().workDir / "out" / dir.filename() / std::to_string(b);
    fs::create_directories(out);
    try {
      exec::ExecResult r = executor.execute(pm, inputs[b], {}, out);
      compare::Comparison c = compare::compareOutputs(names, r.outputs, expected[b], opts);
      if (c.verdict == compare::Verdict::Fail) {
        detected = true;
        why = "data set " + std::to_string(b) + ": " + c.reason;
        return {};
      }
    } catch (const exec::ExecError& e) {
      if (e.stage() == exec::Stage::Infra)
        throw;
      detected = true;
      why = "data set " + std::to_string(b) + ": " + e.what();
      return {};
    }
  }
  return {};
}

} // namespace

void addCorpusCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("corpus", "The tracked regression corpus (corpus/).");
  cmd->require_subcommand(1);

  auto* add = cmd->add_subcommand("add", "Promote a fuzz finding folder (from --corpus-out) into the corpus.");
  struct AddOpts {
    std::string finding, name, corpus;
  };
  auto ao = std::make_shared<AddOpts>();
  add->add_option("finding", ao->finding, "finding folder: model.onnx, test_data_set_0, meta.json")->required();
  add->add_option("--name", ao->name, "case name (default fuzz-SYMPTOM-HASH8)");
  add->add_option("--corpus", ao->corpus, "corpus folder (default: the source tree's corpus/)");
  add->callback([ao] {
    try {
      fs::path src = ao->finding;
      if (!fs::exists(src / "model.onnx") || !fs::exists(src / "meta.json"))
        throw UsageError(src.string() + " is not a finding folder (needs model.onnx and meta.json)");
      nlohmann::json meta = readMeta(src);
      if (meta.value("kind", std::string()) != "fuzz-finding")
        throw UsageError((src / "meta.json").string() + " is not a fuzz finding (kind != fuzz-finding)");
      std::string name = ao->name;
      if (name.empty())
        name = "fuzz-" + meta.value("symptom", std::string("finding")) + "-" +
               meta.value("signature_hash", std::string("00000000")).substr(0, 8);
      fs::path dst = (ao->corpus.empty() ? defaultCorpus() : fs::path(ao->corpus)) / name;
      if (fs::exists(dst))
        throw UsageError(dst.string() + " already exists (choose another --name)");
      fs::create_directories(dst.parent_path());
      fs::copy(src, dst, fs::copy_options::recursive);
      std::cout << "added " << dst.string() << " (" << meta.value("signature", std::string()) << ")\n";
      setExitCode(0);
    } catch (const UsageError& e) {
      std::cerr << "dynqual corpus add: " << e.what() << "\n";
      setExitCode(2);
    } catch (const std::exception& e) {
      std::cerr << "dynqual corpus add: " << e.what() << "\n";
      setExitCode(2);
    }
  });

  auto* check = cmd->add_subcommand(
      "check", "Replay every corpus case. Plain cases must pass on --variant; cases recorded with an inject\n"
               "knob are replayed with that knob and must still be detected. Exit: 0 all hold, 1 a case\n"
               "failed, 2 usage, 4 infrastructure; a knob the compiler rejects is reported as skipped.");
  struct CheckOpts {
    std::string corpus, variant = "dq:production@sim";
    double timeout = 120;
  };
  auto co = std::make_shared<CheckOpts>();
  check->add_option("corpus", co->corpus, "corpus folder (default: the source tree's corpus/)");
  check->add_option("--variant", co->variant, "variant for plain cases; knob cases use its pipeline with the knob")
      ->capture_default_str();
  check->add_option("--timeout", co->timeout, "seconds per compile and per run")->capture_default_str();
  check->callback([co] {
    try {
      fs::path root = co->corpus.empty() ? defaultCorpus() : fs::path(co->corpus);
      if (!fs::is_directory(root))
        throw UsageError(root.string() + " is not a folder");
      std::vector<fs::path> cases;
      for (const auto& e : fs::directory_iterator(root))
        if (fs::exists(e.path() / "model.onnx"))
          cases.push_back(e.path());
      std::sort(cases.begin(), cases.end());
      if (cases.empty())
        throw UsageError(root.string() + " holds no case (no */model.onnx)");
      fs::path work = makeTempWorkDir("corpus-check");
      exec::ExecConfig ec;
      ec.workDir = work;
      ec.compileTimeoutSeconds = co->timeout;
      ec.runTimeoutSeconds = co->timeout;
      exec::Executor executor(ec);
      int failed = 0, skipped = 0, held = 0;
      std::map<std::string, std::pair<bool, std::string>> probes;
      std::string probeWhy;
      auto knobAccepted = [&](const std::string& knob, std::string& why) {
        auto it = probes.find(knob);
        if (it == probes.end()) {
          std::string w;
          bool ok = fuzz::compilerAcceptsKnob(exec::selfBinDir(), knob, work / "probe", w);
          it = probes.emplace(knob, std::make_pair(ok, w)).first;
        }
        why = it->second.second;
        return it->second.first;
      };
      for (const auto& dir : cases) {
        nlohmann::json meta = readMeta(dir);
        std::string knob = meta.value("knob", std::string());
        bool fuzzCase = meta.value("kind", std::string()) == "fuzz-finding";
        std::string variant = fuzz::variantWithKnob(co->variant, knob);
        bool detected = false;
        std::string why;
        replay(dir, variant, fuzzCase, executor, detected, why);
        std::string name = dir.filename().string();
        if (knob.empty()) {
          if (detected) {
            ++failed;
            std::cout << fmt::format("FAIL    {} on {}: {}\n", name, variant, why);
          } else {
            ++held;
            std::cout << fmt::format("pass    {} on {}\n", name, variant);
          }
        } else if (detected && !knobAccepted(knob, probeWhy)) {
          ++skipped;
          std::cout << fmt::format("skip    {}: the compiler rejects inject={}: {}\n", name, knob, probeWhy);
        } else if (detected) {
          ++held;
          std::cout << fmt::format("detected {} with inject={}: {}\n", name, knob, why);
        } else {
          ++failed;
          std::cout << fmt::format("FAIL    {}: inject={} is no longer detected on {}\n", name, knob, variant);
        }
      }
      std::error_code rmErr;
      fs::remove_all(work, rmErr);
      std::cout << fmt::format("corpus check: {} cases, {} hold, {} failed, {} skipped\n", cases.size(), held, failed,
                               skipped);
      setExitCode(failed > 0 ? 1 : 0);
    } catch (const UsageError& e) {
      std::cerr << "dynqual corpus check: " << e.what() << "\n";
      setExitCode(2);
    } catch (const exec::ExecError& e) {
      std::cerr << "dynqual corpus check: " << e.what() << "\n";
      setExitCode(4);
    } catch (const std::exception& e) {
      std::cerr << "dynqual corpus check: " << e.what() << "\n";
      setExitCode(2);
    }
  });
}

} // namespace dynqual::cli
