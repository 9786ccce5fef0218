#include "dynqual/fuzz/Campaign.h"
#include "dynqual/fuzz/Coverage.h"

#include "dynqual/fuzz/Bucket.h"
#include "dynqual/fuzz/FindingStore.h"
#include "dynqual/fuzz/PersistentWorker.h"
#include "dynqual/fuzz/StageWatchdog.h"
#include "dynqual/modelgen/GraphBuilder.h"
#include "dynqual/process/Process.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

namespace fs = std::filesystem;

namespace dynqual::fuzz {

namespace {

/// True when the worker ended because the CPU reference outlived its watchdog: the reference
/// cannot run the case, so it is invalid (docs/fuzz/oracles.md), not a finding.
bool referenceTimedOut(const process::ProcessResult& child) {
  return !child.timedOut && child.signal == 0 && child.exitCode == kReferenceTimeoutExit;
}

CaseReport invalidByReferenceTimeout(uint64_t seed, const process::ProcessResult& child) {
  CaseReport r;
  r.seed = seed;
  r.valid = false;
  std::string tail = child.err;
  size_t cut = tail.find_last_not_of("\n ");
  tail = cut == std::string::npos ? "" : tail.substr(0, cut + 1);
  if (auto nl = tail.rfind('\n'); nl != std::string::npos)
    tail = tail.substr(nl + 1);
  r.invalidReason = "reference timed out: " + tail;
  return r;
}

/// The bucket of a finding no worker minimized (the worker itself crashed or hung): no graph to
/// find an origin in, so the symptom and the normalized message.
void setUnminimizedBucket(FindingReport& f) {
  BucketKey key{f.finding.symptom, f.pass, "-", normalizeMessage(f.finding.detail)};
  f.origin = key.origin;
  f.minimizedDetail = f.finding.detail;
  f.bucket = key.text();
  f.bucketHash = key.hash();
}

/// A worker that did not return a report: its crash, hang or memory exhaustion is a finding.
CaseReport workerFailure(const CampaignOptions& o, uint64_t seed, const process::ProcessResult& child,
                         const std::vector<std::string>& argv) {
  CaseReport r;
  r.seed = seed;
  r.valid = true;
  FindingReport f;
  std::string abnormal = child.describeAbnormalEnd(o.caseTimeoutSeconds);
  bool oom = child.err.find("bad_alloc") != std::string::npos || child.err.find("out of memory") != std::string::npos;
  f.finding.symptom = child.timedOut ? "case-hang" : oom ? "case-oom" : "case-crash";
  size_t cut = child.err.find_last_not_of("\n ");
  std::string tail = cut == std::string::npos ? "" : child.err.substr(0, cut + 1);
  if (auto nl = tail.rfind('\n'); nl != std::string::npos)
    tail = tail.substr(nl + 1);
  f.finding.detail = "fuzz worker " + (abnormal.empty() ? "exited " + std::to_string(child.exitCode) : abnormal) +
                     (tail.empty() ? "" : ": " + tail);
  f.finding.variant = o.variants.empty() ? "" : o.variants[0];
  f.signature = f.finding.symptom + "||unattributed";
  f.signatureHash = fnv1aHex(f.signature);
  f.pass = "unattributed";
  setUnminimizedBucket(f);
  std::string line;
  for (size_t k = 0; k < argv.size(); ++k)
    if (argv[k] != "--json")
      line += (line.empty() ? "" : " ") + (k == 0 ? std::string("dynqual") : argv[k]);
  f.reproducer = line;
  r.findings.push_back(f);
  return r;
}

} // namespace

std::string variantWithKnob(const std::string& variant, const std::string& knob) {
  exec::Variant v = exec::parseVariant(variant);
  if (knob.empty())
    return v.text();
  if (v.kind != exec::Variant::Kind::Dq || v.pipeline != "production")
    throw std::invalid_argument("inject=" + knob + " applies to dq:production variants only, not " + v.text());
  v.pipeline = "production{inject=" + knob + "}";
  return v.text();
}

bool compilerAcceptsKnob(const fs::path& binDir, const std::string& knob, const fs::path& workDir, std::string& why) {
  fs::create_directories(workDir);
  modelgen::writeModel(generate(1).model, workDir / "probe.onnx");
  try {
    exec::compileInChild(binDir, workDir / "probe.onnx", "production{inject=" + knob + "}", workDir / "probe.dqp", 120,
                         "", "");
    return true;
  } catch (const exec::ExecError& e) {
    why = e.what();
    // A crash or hang means the option was taken and the compiler broke: that is the knob's
    // effect (a use-after-free inside the compiler), not a rejected option.
    return why.find("killed by signal") != std::string::npos || why.find("timed out") != std::string::npos;
  }
}

double parseDuration(const std::string& text) {
  if (text.empty())
    throw std::invalid_argument("duration '' is empty (forms: 60s, 10m, 1h, 90)");
  double scale = 1;
  std::string num = text;
  switch (text.back()) {
  case 's':
    num.pop_back();
    break;
  case 'm':
    scale = 60;
    num.pop_back();
    break;
  case 'h':
    scale = 3600;
    num.pop_back();
    break;
  default:
    break;
  }
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(num, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != num.size() || num.empty() || !(v > 0))
    throw std::invalid_argument("duration '" + text + "' is not a positive number with s, m or h (e.g. 60s, 10m)");
  return v * scale;
}

std::string campaignKey(const CampaignOptions& o) {
  std::string v;
  for (const auto& x : o.variants)
    v += (v.empty() ? "" : "+") + x;
  return std::string(kGeneratorVersion) + " seed=" + std::to_string(o.seed) + " shard=" + std::to_string(o.shardIndex) +
         "/" + std::to_string(o.shardCount) + " k=" + std::to_string(o.bindings) + " variants=" + v +
         (o.ortOracle ? " oracle=ort" : "") + (o.knob.empty() ? "" : " knob=" + o.knob);
}

namespace {

/// The case options both kinds of worker take.
void addCaseFlags(const CampaignOptions& o, std::vector<std::string>& argv) {
  argv.insert(argv.end(),
              {"--bindings", std::to_string(o.bindings), "--compile-timeout", std::to_string(o.compileTimeoutSeconds),
               "--run-timeout", std::to_string(o.runTimeoutSeconds)});
  if (o.referenceSeconds != kReferenceSecondsLimit)
    argv.insert(argv.end(), {"--reference-timeout", std::to_string(o.referenceSeconds)});
  if (o.referenceMaxElements != kReferenceElementLimit)
    argv.insert(argv.end(), {"--reference-max-elements", std::to_string(o.referenceMaxElements)});
  for (const auto& v : o.variants)
    argv.insert(argv.end(), {"--variant", v});
  if (!o.corpusOut.empty())
    argv.insert(argv.end(), {"--corpus-out", o.corpusOut.string()});
  if (!o.knob.empty())
    argv.insert(argv.end(), {"--knob", o.knob});
  if (o.ortOracle)
    argv.insert(argv.end(), {"--oracle", "ort"});
  if (!o.minimize)
    argv.push_back("--no-minimize");
}

} // namespace

std::vector<std::string> workerArgv(const CampaignOptions& o, uint64_t seed, const fs::path& work) {
  std::vector<std::string> argv = {(o.binDir / "dynqual").string(),
                                   "fuzz-case",
                                   "--seed",
                                   std::to_string(seed),
                                   "--json",
                                   "--work-dir",
                                   work.string(),
                                   "--memory-mb",
                                   std::to_string(o.memoryMb)};
  addCaseFlags(o, argv);
  return argv;
}

std::vector<std::string> persistentWorkerArgv(const CampaignOptions& o) {
  std::vector<std::string> argv = {(o.binDir / "dynqual").string(), "fuzz-worker", "--compiles-per-context",
                                   std::to_string(o.compilesPerContext)};
  addCaseFlags(o, argv);
  return argv;
}

namespace {

/// A case run by a one-shot worker: its report, or the infrastructure error that stops the shard.
struct OneShot {
  CaseReport report;
  std::string infra;
  double wallMs = 0;
};

OneShot runOneShot(const CampaignOptions& o, uint64_t seed, const fs::path& work) {
  OneShot one;
  auto argv = workerArgv(o, seed, work);
  process::ProcessResult child = process::runChild(argv, o.caseTimeoutSeconds);
  one.wallMs = child.wallMs;
  nlohmann::json j = nlohmann::json::parse(child.out, nullptr, false);
  if (!child.timedOut && child.signal == 0 && j.is_object() && j.contains("infra")) {
    one.infra = j.at("infra").get<std::string>();
    return one;
  }
  if (!child.timedOut && child.signal == 0 && j.is_object() && j.contains("seed")) {
    try {
      one.report = caseReportFromJson(j);
      return one;
    } catch (const std::exception&) {
    }
  }
  if (!child.started) {
    one.infra = "cannot start the fuzz worker " + argv[0] + ": " + child.error;
    return one;
  }
  if (referenceTimedOut(child)) {
    one.report = invalidByReferenceTimeout(seed, child);
    return one;
  }
  one.report = workerFailure(o, seed, child, argv);
  return one;
}

/// The persistent worker failed on a case that its one-shot rerun found nothing wrong with: a
/// crash or hang that needs the state of earlier cases in the same process (or a flaky limit).
/// Kept as a finding of its own kind, so that it is looked at rather than lost.
FindingReport unreproducedFailure(const CampaignOptions& o, const WorkerOutcome& w, int64_t caseIndex) {
  FindingReport f;
  f.finding.symptom = w.failure.timedOut || w.failure.exitCode == kStageTimeoutExit ? "worker-hang" : "worker-crash";
  std::string tail = w.failure.err;
  size_t cut = tail.find_last_not_of("\n ");
  tail = cut == std::string::npos ? "" : tail.substr(0, cut + 1);
  if (auto nl = tail.rfind('\n'); nl != std::string::npos)
    tail = tail.substr(nl + 1);
  f.finding.detail = w.why + (tail.empty() ? "" : ": " + tail) + " (the one-shot rerun of the case found nothing)";
  f.finding.variant = o.variants.empty() ? "" : o.variants[0];
  f.pass = "unattributed";
  f.signature = f.finding.symptom + "||unattributed";
  f.signatureHash = fnv1aHex(f.signature);
  setUnminimizedBucket(f);
  // The cases before it on the same worker are part of the cause: replay the shard up to it.
  std::string line = "dynqual fuzz --jobs 1 --seed " + std::to_string(o.seed) + " --shard " +
                     std::to_string(o.shardIndex) + "/" + std::to_string(o.shardCount) + " --cases " +
                     std::to_string(caseIndex + 1) + " --bindings " + std::to_string(o.bindings);
  for (const auto& v : o.variants)
    line += " --variant '" + v + "'";
  if (o.ortOracle)
    line += " --oracle ort";
  f.reproducer = line;
  return f;
}

} // namespace

namespace {

/// Valid cases per feature, every tracked feature included (0 where none exercised it), so the
/// campaign report shows a gap as a 0 rather than as a missing row.
nlohmann::json featureDelta(const CampaignSummary& s) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& r : coverageTable(s.features, s.valid))
    j[r.op + (r.feature.empty() ? "" : "|" + r.feature)] = r.cases;
  return j;
}

} // namespace

nlohmann::json phaseMillis(const CampaignSummary& s) {
  return {{"generate", s.generateMs}, {"check", s.checkMs},       {"reference", s.referenceMs},
          {"compile", s.compileMs},   {"run", s.runMs},           {"minimize", s.minimizeMs},
          {"bucket", s.bucketMs},     {"coverage", s.coverageMs}, {"worker", s.workerMs}};
}

CampaignSummary runCampaign(const CampaignOptions& o) {
  CampaignSummary s;
  s.campaign = campaignKey(o);
  s.persistentWorkers = !o.oneShot;
  std::optional<FindingStore> db;
  std::set<int64_t> done;
  if (!o.db.empty()) {
    db.emplace(o.db);
    if (o.resume)
      done = db->doneCases(s.campaign);
    db->beginShard(s.campaign, o.night, o.revision.empty() ? "unknown" : o.revision);
  }
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  std::atomic<int64_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  int64_t findingCount = 0;

  auto record = [&](int64_t index, const CaseReport& r, double workerMs) {
    std::lock_guard<std::mutex> lock(mu);
    ++s.cases;
    s.workerMs += workerMs;
    if (r.valid) {
      ++s.valid;
      s.sizes.push_back(r.nodes);
      for (const auto& [op, n] : r.opCounts)
        s.opCounts[op] += n;
      for (const auto& [k, v] : r.counters)
        s.counters[k] += v;
      for (const auto& feature : r.features)
        ++s.features[feature];
    } else {
      std::string why = r.invalidReason.substr(0, r.invalidReason.find(':'));
      ++s.invalidReasons[why];
    }
    s.generateMs += r.generateMs;
    s.checkMs += r.checkMs;
    s.referenceMs += r.referenceMs;
    s.compileMs += r.compileMs;
    s.runMs += r.runMs;
    s.minimizeMs += r.minimizeMs;
    s.bucketMs += r.bucketMs;
    s.coverageMs += r.coverageMs;
    double at = elapsed();
    std::vector<std::string> states;
    if (db) {
      try {
        states = db->recordCase(s.campaign, index, r, o.knob, at);
      } catch (const std::exception& e) {
        s.infraError = e.what();
        stop = true;
      }
    }
    for (size_t k = 0; k < r.findings.size(); ++k) {
      std::string state =
          k < states.size() ? states[k] : (s.signatures.count(r.findings[k].signature) ? "known" : "new");
      if (state == "new" && s.signatures.count(r.findings[k].signature))
        state = "known";
      s.findings.push_back(r.findings[k]);
      s.states.push_back(state);
      s.findingSeconds.push_back(at);
      s.findingMinimizeSeconds.push_back(r.minimizeMs / 1000.0);
      s.signatures.insert(r.findings[k].signature);
      if (!r.findings[k].bucketHash.empty())
        s.buckets.emplace(r.findings[k].bucketHash, r.findings[k].bucket);
      if (state == "new")
        ++s.newFindings;
      ++findingCount;
    }
    if (o.stopAtFirstFinding && !r.findings.empty()) {
      if (o.stopOnlyOnVariant.empty()) {
        stop = true;
      } else {
        size_t base = s.findings.size() - r.findings.size();
        for (size_t k = 0; k < r.findings.size() && s.firstOwnFinding < 0; ++k) {
          const auto& f = r.findings[k];
          if (f.finding.variant != o.stopOnlyOnVariant)
            continue;
          bool shared = false;
          for (const auto& g : r.findings)
            shared |= g.finding.variant != o.stopOnlyOnVariant && g.finding.symptom == f.finding.symptom;
          if (!shared) {
            s.firstOwnFinding = static_cast<int>(base + k);
            stop = true;
          }
        }
      }
    }
    if (o.progress) {
      double rate = s.cases / std::max(at, 1e-3);
      std::fprintf(stderr, "\r[fuzz] %lld cases  %.2f cases/s  valid %.1f%%  findings %lld  signatures %zu   ",
                   static_cast<long long>(s.cases), rate, 100.0 * s.valid / std::max<int64_t>(s.cases, 1),
                   static_cast<long long>(findingCount), s.signatures.size());
      std::fflush(stderr);
    }
  };

  auto worker = [&] {
    std::optional<PersistentWorker> persistent;
    if (!o.oneShot)
      persistent.emplace(persistentWorkerArgv(o), o.memoryMb << 20);
    while (!stop) {
      int64_t c = next++;
      if (o.cases >= 0 && c >= o.cases)
        break;
      if (o.cases < 0 && elapsed() >= o.seconds)
        break;
      if (done.count(c)) {
        std::lock_guard<std::mutex> lock(mu);
        ++s.skipped;
        continue;
      }
      uint64_t global =
          static_cast<uint64_t>(c) * static_cast<uint64_t>(o.shardCount) + static_cast<uint64_t>(o.shardIndex);
      uint64_t seed = caseSeed(o.seed, global);
      fs::path work = o.workDir / ("case-" + std::to_string(global));
      CaseReport r;
      double wallMs = 0;
      std::string infra;
      bool ran = false;
      if (persistent) {
        WorkerOutcome w = persistent->runCase(seed, work, o.caseTimeoutSeconds);
        wallMs = w.wallMs;
        if (w.kind == WorkerOutcome::Kind::Infra) {
          infra = w.reply.at("infra").get<std::string>();
        } else if (w.kind == WorkerOutcome::Kind::Report) {
          try {
            r = caseReportFromJson(w.reply);
            ran = true;
          } catch (const std::exception& e) {
            w.why = std::string("malformed case report from the persistent worker: ") + e.what();
          }
        }
        if (!ran && infra.empty()) {
          if (!w.failure.started && !w.failure.error.empty()) {
            infra = w.why;
          } else if (referenceTimedOut(w.failure)) {
            r = invalidByReferenceTimeout(seed, w.failure);
            ran = true;
          } else {
            // Confirm in isolation, with the one-shot worker's per-stage child processes: its
            // report is the finding, as a one-shot campaign would have recorded it.
            std::error_code ec;
            fs::remove_all(work, ec);
            OneShot one = runOneShot(o, seed, work);
            wallMs += one.wallMs;
            infra = one.infra;
            r = std::move(one.report);
            ran = infra.empty();
            // An invalid rerun means the reference cannot run the case: invalid, not a finding.
            if (ran && r.valid && r.findings.empty())
              r.findings.push_back(unreproducedFailure(o, w, c));
            std::lock_guard<std::mutex> lock(mu);
            ++s.workerFailures;
          }
        }
      } else {
        OneShot one = runOneShot(o, seed, work);
        wallMs = one.wallMs;
        infra = one.infra;
        r = std::move(one.report);
        ran = infra.empty();
      }
      std::error_code ec;
      fs::remove_all(work, ec);
      if (!infra.empty()) {
        std::lock_guard<std::mutex> lock(mu);
        s.infraError = infra;
        stop = true;
        break;
      }
      record(c, r, wallMs);
    }
    if (persistent) {
      std::lock_guard<std::mutex> lock(mu);
      s.workerStarts += persistent->starts();
    }
  };
  std::vector<std::thread> threads;
  for (int k = 0; k < std::max(1, o.jobs); ++k)
    threads.emplace_back(worker);
  for (auto& t : threads)
    t.join();
  if (o.progress)
    std::fprintf(stderr, "\n");
  s.wallSeconds = elapsed();
  if (db) {
    nlohmann::json delta = {{"ms", phaseMillis(s)},
                            {"features", featureDelta(s)},
                            {"op_counts", s.opCounts},
                            {"counters", s.counters},
                            {"invalid", s.invalidReasons},
                            {"worker_starts", s.workerStarts},
                            {"worker_failures", s.workerFailures}};
    // A shard stopped by an error (or by the selftest's first finding) did not run to its bound.
    bool completed = s.infraError.empty() && !(o.stopAtFirstFinding && s.firstOwnFinding >= 0);
    try {
      db->finishShard(s.campaign, delta, s.wallSeconds, completed);
    } catch (const std::exception& e) {
      if (s.infraError.empty())
        s.infraError = e.what();
    }
  }
  return s;
}

} // namespace dynqual::fuzz
