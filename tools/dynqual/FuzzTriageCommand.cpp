// `dynqual fuzz triage`: the buckets of a store, new first, with their status (new / known /
// fixed) and smallest reproducers (docs/commands/fuzz-triage.md).
#include "Commands.h"
#include "NightlyCommands.h"
#include "CorpusReplay.h"

#include "dynqual/store/Fingerprint.h"
#include "dynqual/store/FuzzRecords.h"

#include <fmt/format.h>

#include <fstream>
#include <iostream>

namespace fs = std::filesystem;

namespace dynqual::cli {

#ifndef DYNQUAL_SOURCE_DIR
#define DYNQUAL_SOURCE_DIR "."
#endif

namespace {

struct TriageOpts {
  std::string db = store::defaultDbPath().string(), night, format = "md", output = "-", corpus;
  bool check = false, failOnNew = false;
  double timeout = 120;
};

/// Replays each bucket's case (its corpus case when it has one, else its smallest reproducer's
/// folder) with the bucket's variant on this build and records whether it passes: a bucket whose
/// case passes and that has no later finding is fixed.
void checkBuckets(store::Store& st, const std::vector<store::FuzzBucket>& buckets, const TriageOpts& o) {
  fs::path work = makeTempWorkDir("triage");
  exec::ExecConfig ec;
  ec.workDir = work;
  ec.compileTimeoutSeconds = o.timeout;
  ec.runTimeoutSeconds = o.timeout;
  exec::Executor executor(ec);
  std::string revision = store::probeBuild(DYNQUAL_SOURCE_DIR, "", {}).revision;
  fs::path corpus = o.corpus.empty() ? defaultCorpus() : fs::path(o.corpus);
  for (const auto& b : buckets) {
    fs::path dir = !b.corpusCase.empty() && fs::exists(corpus / b.corpusCase / "model.onnx") ? corpus / b.corpusCase
                                                                                             : fs::path(b.caseDir);
    if (b.caseDir.empty() && b.corpusCase.empty()) {
      std::cerr << "triage: bucket " << b.bucket.substr(0, 12) << " has no case folder; not checked\n";
      continue;
    }
    if (!fs::exists(dir / "model.onnx")) {
      std::cerr << "triage: bucket " << b.bucket.substr(0, 12) << ": " << dir.string()
                << " is gone; not checked (`dynqual corpus add --bucket` keeps a copy)\n";
      continue;
    }
    bool detected = false;
    std::string why;
    replay(dir, b.variant.empty() ? "dq:production@sim" : b.variant, true, executor, detected, why);
    std::cerr << fmt::format("triage: bucket {} on {}: {}\n", b.bucket.substr(0, 12), b.variant,
                             detected ? "still fails: " + why.substr(0, 200) : "passes");
    store::setBucketStatus(st, b.bucket, "", true, !detected, revision);
  }
  std::error_code rm;
  fs::remove_all(work, rm);
}

} // namespace

void addFuzzTriageCommand(CLI::App* fuzz) {
  auto* cmd = fuzz->add_subcommand(
      "triage",
      "List the buckets of a store (one per bug): new (first seen this night), known, fixed (its case\n"
      "passes on this build), each with hits, first and last sighting and its smallest reproducer.\n"
      "Exit: 0 listed (with --fail-on-new: 1 when a bucket is new), 2 usage or store error, 4 infrastructure.");
  auto o = std::make_shared<TriageOpts>();
  cmd->add_option("--db", o->db, "store (default: $DYNQUAL_DB, else ./dynqual.db)")->default_str(o->db);
  cmd->add_option("--night", o->night, "the night 'new' is relative to (default: the newest in the store)");
  cmd->add_option("--format", o->format, "md (a table, then one section per bucket) or json")
      ->check(CLI::IsMember({"md", "json"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", o->output, "output file, - for stdout")->capture_default_str();
  cmd->add_flag("--check", o->check,
                "replay each bucket's case on this build first and record whether it passes (fixed)");
  cmd->add_option("--corpus", o->corpus, "with --check: the corpus folder (default: the source tree's corpus/)");
  cmd->add_option("--timeout", o->timeout, "with --check: seconds per compile and per run")->capture_default_str();
  cmd->add_flag("--fail-on-new", o->failOnNew, "exit 1 when a bucket is new (the nightly job's check)");
  cmd->callback([o] {
    try {
      std::ofstream file;
      if (o->output != "-") {
        file.open(o->output);
        if (!file)
          throw UsageError(o->output + ": cannot write; check that the folder exists");
      }
      store::OpenOptions opts;
      opts.mode = o->check ? store::OpenOptions::Mode::Existing : store::OpenOptions::Mode::ReadOnly;
      if (!fs::exists(o->db))
        throw UsageError(o->db + ": no such database; record a campaign with `dynqual fuzz --db " + o->db + "`");
      store::Store st(o->db, opts);
      if (st.schemaVersion() < 7)
        throw UsageError(o->db + ": schema " + std::to_string(st.schemaVersion()) +
                         " has no buckets; `dynqual db init --db " + o->db +
                         "` upgrades it (older findings stay "
                         "without a bucket)");
      std::string night = o->night;
      if (night.empty()) {
        auto nights = store::fuzzNights(st);
        night = nights.empty() ? "" : nights.back();
      }
      if (o->check)
        checkBuckets(st, store::fuzzBuckets(st, night), *o);
      auto buckets = store::fuzzBuckets(st, night);
      store::writeTriage(buckets, night, o->format, o->output == "-" ? std::cout : file);
      int fresh = 0;
      for (const auto& b : buckets)
        fresh += b.status == "new";
      setExitCode(o->failOnNew && fresh > 0 ? 1 : 0);
    } catch (const UsageError& e) {
      std::cerr << "dynqual fuzz triage: " << e.what() << "\n";
      setExitCode(2);
    } catch (const exec::ExecError& e) {
      std::cerr << "dynqual fuzz triage: " << e.what() << "\n";
      setExitCode(4);
    } catch (const std::exception& e) {
      std::cerr << "dynqual fuzz triage: " << e.what() << "\n";
      setExitCode(2);
    }
  });
}

} // namespace dynqual::cli
