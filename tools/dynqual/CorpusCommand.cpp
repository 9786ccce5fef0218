// `dynqual corpus add` (promote a fuzz finding into corpus/) and `dynqual corpus check` (replay
// every corpus case) (docs/commands/corpus.md).
#include "Commands.h"
#include "CorpusReplay.h"

#include "dynqual/compare/Compare.h"
#include "dynqual/exec/Executor.h"
#include "dynqual/fuzz/Campaign.h"
#include "dynqual/fuzz/Oracle.h"
#include "dynqual/onnx/ModelLoader.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/store/FuzzRecords.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <iostream>

namespace fs = std::filesystem;

namespace dynqual::cli {

void addCorpusCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("corpus", "The tracked regression corpus (corpus/).");
  cmd->require_subcommand(1);

  auto* add =
      cmd->add_subcommand("add", "Promote a fuzz finding folder (from --corpus-out), or the smallest reproducer\n"
                                 "of a bucket (--bucket ID --db FILE), into the corpus.");
  struct AddOpts {
    std::string finding, name, corpus, bucket, db = store::defaultDbPath().string();
  };
  auto ao = std::make_shared<AddOpts>();
  add->add_option("finding", ao->finding, "finding folder: model.onnx, test_data_set_0, meta.json");
  add->add_option("--bucket", ao->bucket, "a bucket id (or a prefix of 4+ hex digits) from `dynqual fuzz triage`");
  add->add_option("--db", ao->db, "with --bucket: the store the bucket is in")->default_str(ao->db);
  add->add_option("--name", ao->name, "case name (default fuzz-SYMPTOM-HASH8, or fuzz-SYMPTOM-BUCKET8 with --bucket)");
  add->add_option("--corpus", ao->corpus, "corpus folder (default: the source tree's corpus/)");
  add->callback([ao] {
    try {
      if (ao->finding.empty() == ao->bucket.empty())
        throw UsageError("give either a finding folder or --bucket ID (with --db)");
      fs::path src = ao->finding;
      std::string bucket;
      if (!ao->bucket.empty()) {
        store::OpenOptions ro;
        ro.mode = store::OpenOptions::Mode::Existing;
        store::Store st(ao->db, ro);
        store::FuzzBucket b = store::findBucket(st, ao->bucket);
        if (b.caseDir.empty() || !fs::exists(fs::path(b.caseDir) / "model.onnx"))
          throw UsageError("bucket " + b.bucket + ": its smallest reproducer has no case folder here ('" + b.caseDir +
                           "'); rerun `" + b.reproducer + " --corpus-out DIR` and add DIR");
        src = b.caseDir;
        bucket = b.bucket;
        if (ao->name.empty())
          ao->name = "fuzz-" + b.symptom + "-" + b.bucket.substr(0, 8);
      }
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
      if (!bucket.empty()) {
        store::Store st(ao->db);
        store::setBucketStatus(st, bucket, name, false, false, "");
      }
      std::cout << "added " << dst.string() << " ("
                << (bucket.empty() ? meta.value("signature", std::string()) : "bucket " + bucket) << ")\n";
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
