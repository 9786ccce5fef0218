// The campaign report's input, Markdown and JSON (CampaignReport.h); the HTML page is in
// CampaignHtml.cpp.
#include "dynqual/reports/CampaignReport.h"

#include "CampaignTables.h"
#include "dynqual/reports/Report.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace dynqual::reports {

using nlohmann::json;

namespace detail {

CampaignNumbers campaignNumbers(const CampaignReportInput& in) {
  CampaignNumbers n;
  n.shards = static_cast<int64_t>(in.shards.size());
  for (const auto& s : in.shards) {
    n.unfinished += s.endedAt.empty();
    n.cases += s.cases;
    n.valid += s.valid;
    n.findings += s.findings;
    n.wallSeconds += s.wallSeconds;
    if (s.summary.contains("ms"))
      for (auto it = s.summary["ms"].begin(); it != s.summary["ms"].end(); ++it)
        if (it->is_number())
          n.ms[it.key()] += it->get<double>();
    if (s.summary.contains("op_counts"))
      for (auto it = s.summary["op_counts"].begin(); it != s.summary["op_counts"].end(); ++it)
        if (it->is_number())
          n.ops[it.key()] += it->get<int64_t>();
    if (s.summary.contains("features") && s.summary["features"].is_object()) {
      n.featureValid += s.valid;
      for (auto it = s.summary["features"].begin(); it != s.summary["features"].end(); ++it)
        if (it->is_number())
          n.features[it.key()] += it->get<int64_t>();
    }
    if (s.summary.contains("invalid"))
      for (auto it = s.summary["invalid"].begin(); it != s.summary["invalid"].end(); ++it)
        if (it->is_number())
          n.invalid[it.key()] += it->get<int64_t>();
  }
  for (const auto& b : in.buckets) {
    if (b.status == "new")
      ++n.newBuckets;
    else if (b.status == "known")
      ++n.knownBuckets;
    else
      ++n.fixedBuckets;
    n.bucketsTonight += b.hitsTonight > 0;
  }
  std::vector<int> sz = in.sizes;
  std::sort(sz.begin(), sz.end());
  auto q = [&](double p) {
    // Nearest rank (the value at index ceil(p * n) - 1 of the sorted sizes).
    if (sz.empty())
      return 0;
    size_t k = static_cast<size_t>(std::max(1.0, std::ceil(p * static_cast<double>(sz.size())))) - 1;
    return sz[std::min(k, sz.size() - 1)];
  };
  n.p10 = q(0.1);
  n.median = q(0.5);
  n.p90 = q(0.9);
  n.maxNodes = sz.empty() ? 0 : sz.back();
  return n;
}

std::vector<std::pair<std::string, int64_t>> sizeHistogram(const std::vector<int>& sizes) {
  // Bins of 4 nodes: 1-4, 5-8, ..., so a 40-node graph falls in the 10th bin.
  std::map<int, int64_t> bins;
  for (int s : sizes)
    ++bins[(std::max(s, 1) - 1) / 4];
  std::vector<std::pair<std::string, int64_t>> out;
  if (bins.empty())
    return out;
  for (int b = 0; b <= bins.rbegin()->first; ++b)
    out.push_back({std::to_string(b * 4 + 1) + "-" + std::to_string(b * 4 + 4), bins.count(b) ? bins[b] : 0});
  return out;
}

bool campaignFailed(const CampaignNumbers& n, const std::optional<NightQualify>& q) {
  return n.newBuckets > 0 || (q && q->failing());
}

std::string resultLine(const CampaignNumbers& n, const std::optional<NightQualify>& q) {
  std::string buckets =
      n.newBuckets > 0
          ? fmt::format("{} new bucket(s) ({} known, {} fixed)", n.newBuckets, n.knownBuckets, n.fixedBuckets)
          : fmt::format("no new bucket ({} known, {} fixed)", n.knownBuckets, n.fixedBuckets);
  std::string qualify;
  if (!q) {
    qualify = "no qualify run";
  } else if (q->failing()) {
    std::string names;
    for (const auto& f : q->failures)
      names += (names.empty() ? "" : ", ") + f.model + (f.status == "input-error" ? " (input error)" : "");
    int64_t bad = q->failed + q->inputErrors;
    qualify = fmt::format("qualify: {} of {} models failed", bad, q->models - q->skipped);
    if (!names.empty())
      qualify += " (" + names + ")";
    if (q->status != "finished")
      qualify += fmt::format("{}run {} unfinished", bad > 0 ? "; " : ": ", q->runId);
  } else {
    qualify = fmt::format("qualify: {} of {} models passed", q->passed, q->models - q->skipped);
  }
  return fmt::format("Result: {}, {}; {}.", campaignFailed(n, q) ? "FAIL" : "pass", buckets, qualify);
}

std::string qualifySummary(const std::optional<NightQualify>& q) {
  if (!q)
    return "No qualify run belongs to this night (`ci/nightly --no-qualify`, or the step did not start).";
  std::string s =
      fmt::format("Run {} ({}, started {}, commit {}): {} models, {} passed, {} failed, {} input "
                  "error(s), {} skipped.",
                  q->runId, q->status, q->startedAt, q->revision.empty() ? "unknown" : q->revision.substr(0, 12),
                  q->models, q->passed, q->failed, q->inputErrors, q->skipped);
  if (q->status != "finished")
    s += " The run is unfinished: the qualify process stopped before its end, so models after the last recorded one "
         "were never tried.";
  return s;
}

} // namespace detail

std::optional<NightQualify> loadNightQualify(store::Store& st, const std::string& nightStart,
                                             const std::string& nextNightStart) {
  // ISO 8601 UTC times of one format compare as strings.
  std::optional<store::RunSummary> pick;
  for (const auto& r : st.listRuns())
    if (r.kind == "qualify" && r.startedAt >= nightStart && (nextNightStart.empty() || r.startedAt < nextNightStart) &&
        (!pick || r.startedAt >= pick->startedAt))
      pick = r;
  if (!pick)
    return std::nullopt;
  store::RunRecord run = st.loadRun(pick->id);
  NightQualify q;
  q.runId = run.id;
  q.status = run.status;
  q.startedAt = run.startedAt;
  q.revision = run.build ? run.build->revision : "";
  for (const auto& c : run.cases) {
    if (!c.dataset.name.empty())
      continue; // the model's whole case carries its status
    ++q.models;
    if (c.status == "pass" || c.status == "passed") {
      ++q.passed;
    } else if (c.status == "skip" || c.status == "skipped") {
      ++q.skipped;
    } else {
      ++(c.status == "input-error" ? q.inputErrors : q.failed);
      q.failures.push_back({c.model.name, c.status, c.error});
    }
  }
  return q;
}

CampaignReportInput loadCampaignReport(store::Store& st, const std::string& nightIn, int historyNights) {
  auto nights = store::fuzzNights(st);
  if (nights.empty())
    throw std::runtime_error(st.path().string() + ": no fuzz campaign recorded; run `dynqual fuzz --db " +
                             st.path().string() + "` (or merge shards with `dynqual db merge`)");
  CampaignReportInput in;
  in.night = nightIn.empty() || nightIn == "latest" ? nights.back() : nightIn;
  if (std::find(nights.begin(), nights.end(), in.night) == nights.end())
    throw std::runtime_error(st.path().string() + ": no campaign night '" + in.night + "'; `dynqual fuzz triage --db " +
                             st.path().string() + "` and the report's history list the nights");
  in.shards = store::fuzzShards(st, in.night);
  in.buckets = store::fuzzBuckets(st, in.night);
  in.sizes = store::fuzzCaseSizes(st, in.night);
  auto at = std::find(nights.begin(), nights.end(), in.night);
  std::string nextStart;
  if (at + 1 != nights.end())
    if (auto next = store::fuzzShards(st, *(at + 1)); !next.empty())
      nextStart = next.front().startedAt;
  if (!in.shards.empty())
    in.qualify = loadNightQualify(st, in.shards.front().startedAt, nextStart);
  auto all = store::fuzzNightStats(st, 100000);
  for (const auto& n : all) {
    in.history.push_back(n);
    if (n.night == in.night)
      break;
  }
  if (static_cast<int>(in.history.size()) > historyNights)
    in.history.erase(in.history.begin(), in.history.end() - historyNights);
  in.dynqualVersion = DYNQUAL_VERSION_STRING;
  return in;
}

std::string renderCampaignMarkdown(const CampaignReportInput& in) {
  auto n = detail::campaignNumbers(in);
  std::ostringstream md;
  md << "# Fuzz campaign, night " << escapeMarkdown(in.night) << "\n\n";
  md << detail::resultLine(n, in.qualify) << "\n\n";
  if (n.unfinished > 0)
    md << "**Warning:** " << n.unfinished << " of " << n.shards
       << " shard(s) unfinished (killed or still running): their committed cases are counted; rerun them with "
          "`--resume`.\n\n";
  md << "## Qualify\n\n" << detail::qualifySummary(in.qualify) << "\n\n";
  if (in.qualify && !in.qualify->failures.empty()) {
    md << "| Model | Status | Failure |\n|---|---|---|\n";
    for (const auto& f : in.qualify->failures)
      md << "| `" << f.model << "` | " << escapeMarkdown(f.status) << " | " << escapeMarkdown(f.error) << " |\n";
    md << "\nThe rows of every model: `dynqual report " << in.qualify->runId << " --db DB`.\n\n";
  }
  md << "## Buckets\n\n";
  if (in.buckets.empty()) {
    md << "No bucket: no finding in the store.\n\n";
  } else {
    md << "| Status | Bucket | Symptom | Origin op | Pass | Hits tonight | Hits | Signatures | First seen | Smallest "
          "|\n";
    md << "|---|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& b : in.buckets)
      md << "| " << b.status << " | `" << b.bucket.substr(0, 12) << "` | " << escapeMarkdown(b.symptom) << " | "
         << escapeMarkdown(b.origin) << " | " << escapeMarkdown(b.pass) << " | " << b.hitsTonight << " | " << b.hits
         << " | " << b.signatures << " | " << escapeMarkdown(b.firstSeen) << " | " << b.nodes << " nodes |\n";
    md << "\n";
    for (const auto& b : in.buckets) {
      if (b.status == "fixed")
        continue;
      md << "### `" << b.bucket.substr(0, 12) << "` (" << b.status << "): " << escapeMarkdown(b.symptom) << " in "
         << escapeMarkdown(b.origin) << ", " << escapeMarkdown(b.pass) << "\n\n";
      md << "- Message: `" << b.message << "`\n";
      md << "- Reproduce: `" << b.reproducer << "`" << (b.knob.empty() ? "" : " (knob " + b.knob + ")") << "\n";
      md << "- First seen " << escapeMarkdown(b.firstSeen) << " (night " << escapeMarkdown(b.firstNight) << ", commit "
         << escapeMarkdown(b.firstRevision.substr(0, 12)) << "); last seen " << escapeMarkdown(b.lastSeen) << "\n";
      std::string seeds;
      for (auto s : b.exampleSeeds)
        seeds += (seeds.empty() ? "" : ", ") + std::to_string(s);
      md << "- Smallest: seed " << b.seed << ", " << b.nodes << " nodes, " << b.elements << " input elements on "
         << escapeMarkdown(b.binding.empty() ? "-" : b.binding) << (seeds.empty() ? "" : "; other seeds: " + seeds)
         << "\n";
      md << "- Keep it: `dynqual corpus add --bucket " << b.bucket.substr(0, 12) << " --db DB`"
         << (b.corpusCase.empty() ? "" : " (corpus case " + escapeMarkdown(b.corpusCase) + ")") << "\n\n";
      if (!b.graph.empty())
        md << "```text\n" << b.graph << "```\n\n";
    }
  }
  md << "## Campaign\n\n";
  md << "| Shards | Unfinished | Cases | Valid | Valid rate | Cases/s per shard | Shard wall (s) | Findings |\n";
  md << "|---|---|---|---|---|---|---|---|\n";
  md << fmt::format("| {} | {} | {} | {} | {:.2f} % | {:.2f} | {:.1f} | {} |\n\n", n.shards, n.unfinished, n.cases,
                    n.valid, n.cases ? 100.0 * n.valid / n.cases : 0.0,
                    n.wallSeconds > 0 ? n.cases / n.wallSeconds : 0.0, n.wallSeconds, n.findings);
  md << fmt::format("Graph size (nodes per valid case): median {}, p10 {}, p90 {}, max {}.\n\n", n.median, n.p10, n.p90,
                    n.maxNodes);
  for (const auto& [why, k] : n.invalid)
    md << "- invalid: " << k << " x " << escapeMarkdown(why) << "\n";
  if (!n.invalid.empty())
    md << "\n";
  md << "### Time split (ms summed over cases)\n\n| Phase | ms | Share |\n|---|---|---|\n";
  double total = 0;
  for (const char* k : detail::kPhases)
    total += n.ms.count(k) ? n.ms.at(k) : 0.0;
  for (const char* k : detail::kPhases) {
    double v = n.ms.count(k) ? n.ms.at(k) : 0.0;
    md << fmt::format("| {} | {:.0f} | {:.1f} % |\n", k, v, total > 0 ? 100.0 * v / total : 0.0);
  }
  if (n.ms.count("bucket"))
    md << fmt::format("\nOf minimize, {:.0f} ms went to bucket keys (the minimized case run again, and the key).\n",
                      n.ms.at("bucket"));
  md << "\n### Op-kind coverage (nodes in valid cases)\n\n| Op | Nodes |\n|---|---|\n";
  std::vector<std::pair<std::string, int64_t>> ops(n.ops.begin(), n.ops.end());
  std::sort(ops.begin(), ops.end(),
            [](auto& a, auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
  for (const auto& [op, k] : ops)
    md << "| " << escapeMarkdown(op) << " | " << k << " |\n";
  md << "\n### Feature coverage (valid cases that exercised each feature)\n\n";
  if (n.features.empty()) {
    md << "No shard recorded features (shards of dynqual before feature coverage).\n";
  } else {
    md << fmt::format("Of {} valid cases (the shards that recorded features).\n\n", n.featureValid);
    md << "| Op | Feature | Valid cases | % of valid |\n|---|---|---|---|\n";
    for (const auto& [key, k] : n.features) {
      auto bar = key.find('|');
      md << "| " << escapeMarkdown(key.substr(0, bar)) << " | "
         << escapeMarkdown(bar == std::string::npos ? "" : key.substr(bar + 1)) << " | " << k << " | "
         << fmt::format("{:.1f}", n.featureValid ? 100.0 * k / n.featureValid : 0.0) << " |\n";
    }
  }
  md << "\n### Shards\n\n| Shard | Cases | Valid | Findings | Wall (s) | Finished |\n|---|---|---|---|---|---|\n";
  for (const auto& s : in.shards)
    md << "| " << escapeMarkdown(s.campaign) << " | " << s.cases << " | " << s.valid << " | " << s.findings << " | "
       << fmt::format("{:.1f}", s.wallSeconds) << " | " << (s.endedAt.empty() ? "no" : escapeMarkdown(s.endedAt))
       << " |\n";
  md << "\n## History\n\n| Night | Shards | Cases | Valid | Buckets hit | New buckets |\n|---|---|---|---|---|---|\n";
  for (const auto& h : in.history)
    md << "| " << escapeMarkdown(h.night) << " | " << h.shards << " | " << h.cases << " | " << h.valid << " | "
       << h.buckets << " | " << h.newBuckets << " |\n";
  md << "\n" << kStickyMarker << "\n";
  md << "dynqual " << escapeMarkdown(in.dynqualVersion) << ", commit "
     << escapeMarkdown(in.shards.empty() ? "unknown" : in.shards.back().revision.substr(0, 12)) << "\n";
  return md.str();
}

namespace {

/// [{op, feature, valid_cases, percent}] of the features the shards recorded.
json coverageJson(const detail::CampaignNumbers& n) {
  json rows = json::array();
  for (const auto& [key, k] : n.features) {
    auto bar = key.find('|');
    rows.push_back({{"op", key.substr(0, bar)},
                    {"feature", bar == std::string::npos ? "" : key.substr(bar + 1)},
                    {"valid_cases", k},
                    {"percent", n.featureValid ? 100.0 * k / n.featureValid : 0.0}});
  }
  return rows;
}

/// {run_id, status, started_at, revision, models, passed, failed, input_errors, skipped,
/// failures: [{model, status, error}]}, or null without a qualify run.
json qualifyJson(const std::optional<NightQualify>& q) {
  if (!q)
    return nullptr;
  json failures = json::array();
  for (const auto& f : q->failures)
    failures.push_back({{"model", f.model}, {"status", f.status}, {"error", f.error}});
  return {{"run_id", q->runId},         {"status", q->status},
          {"started_at", q->startedAt}, {"revision", q->revision},
          {"models", q->models},        {"passed", q->passed},
          {"failed", q->failed},        {"input_errors", q->inputErrors},
          {"skipped", q->skipped},      {"failing", q->failing()},
          {"failures", failures}};
}

} // namespace

json renderCampaignJson(const CampaignReportInput& in) {
  auto n = detail::campaignNumbers(in);
  json buckets = json::array();
  for (const auto& b : in.buckets) {
    json j = store::toJson(b);
    j["graph"] = b.graph;
    buckets.push_back(j);
  }
  json shards = json::array();
  for (const auto& s : in.shards)
    shards.push_back({{"campaign", s.campaign},
                      {"cases", s.cases},
                      {"valid", s.valid},
                      {"findings", s.findings},
                      {"wall_seconds", s.wallSeconds},
                      {"started_at", s.startedAt},
                      {"ended_at", s.endedAt.empty() ? json(nullptr) : json(s.endedAt)},
                      {"revision", s.revision}});
  json history = json::array();
  for (const auto& h : in.history)
    history.push_back({{"night", h.night},
                       {"shards", h.shards},
                       {"cases", h.cases},
                       {"valid", h.valid},
                       {"buckets", h.buckets},
                       {"new_buckets", h.newBuckets}});
  return {{"format", "dynqual-campaign-report"},
          {"version", 1},
          {"night", in.night},
          {"result", detail::campaignFailed(n, in.qualify) ? "fail" : "pass"},
          {"qualify", qualifyJson(in.qualify)},
          {"buckets", buckets},
          {"campaign",
           {{"shards", n.shards},
            {"unfinished", n.unfinished},
            {"cases", n.cases},
            {"valid", n.valid},
            {"findings", n.findings},
            {"wall_seconds", n.wallSeconds},
            {"cases_per_second_per_shard", n.wallSeconds > 0 ? n.cases / n.wallSeconds : 0.0},
            {"size", {{"median", n.median}, {"p10", n.p10}, {"p90", n.p90}, {"max", n.maxNodes}}},
            {"ms", n.ms},
            {"op_counts", n.ops},
            {"coverage", coverageJson(n)},
            {"invalid", n.invalid}}},
          {"shards", shards},
          {"history", history},
          {"dynqual_version", in.dynqualVersion}};
}

void runCampaignReport(const CampaignReportRequest& req, std::ostream& stdoutStream) {
  if (req.format != "md" && req.format != "json" && req.format != "html")
    throw std::runtime_error("unsupported: report format '" + req.format + "'; use md, json or html");
  std::ofstream file;
  if (req.output != "-") {
    file.open(req.output, std::ios::binary | std::ios::trunc);
    if (!file)
      throw std::runtime_error(req.output + ": cannot write the report; check that the folder exists and is writable");
  }
  std::ostream& out = req.output == "-" ? stdoutStream : file;
  store::OpenOptions ro;
  ro.mode = store::OpenOptions::Mode::ReadOnly;
  store::Store st(req.db, ro);
  if (st.schemaVersion() < 6)
    throw std::runtime_error(req.db + ": schema " + std::to_string(st.schemaVersion()) +
                             " has no campaign shards; `dynqual db init --db " + req.db + "` upgrades it");
  CampaignReportInput in = loadCampaignReport(st, req.night, req.historyNights);
  if (req.format == "md")
    out << renderCampaignMarkdown(in);
  else if (req.format == "json")
    out << renderCampaignJson(in).dump(2) << "\n";
  else
    out << renderCampaignHtml(in, req.chartJs.empty() ? defaultChartJsPath() : req.chartJs);
  out.flush();
  if (!out)
    throw std::runtime_error((req.output == "-" ? std::string("stdout") : req.output) +
                             ": writing the report failed (disk full?)");
}

bool storeHasOnlyCampaigns(const std::string& db) {
  try {
    store::OpenOptions ro;
    ro.mode = store::OpenOptions::Mode::ReadOnly;
    store::Store st(db, ro);
    if (st.schemaVersion() < 6)
      return false;
    for (const auto& r : st.listRuns())
      if (r.status == "finished")
        return false;
    return !store::fuzzNights(st).empty();
  } catch (const std::exception&) {
    return false; // the run report then says what is wrong with the store
  }
}

} // namespace dynqual::reports
