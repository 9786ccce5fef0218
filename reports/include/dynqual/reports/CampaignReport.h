#pragma once
// The report of a fuzz campaign night (docs/commands/report.md#campaigns): buckets first (new,
// known, fixed) with their reproducer and minimized graph, then cases, valid rate, cases/s, the
// graph-size distribution, op-kind coverage, the time split and a history of nights. Markdown,
// JSON, and one self-contained HTML page with Chart.js. Reads the store's fuzz tables
// (store/FuzzRecords.h) and the night's qualify run (the nightly's third step); the only
// arithmetic is sums, rates and quantiles of what they hold.
#include "dynqual/store/FuzzRecords.h"

#include <optional>

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <vector>

namespace dynqual::reports {

/// One model of the night's qualify run that did not pass: its status as recorded on the model's
/// whole case ("failed", "input-error") and the failure line.
struct QualifyFailure {
  std::string model, status, error;
};

/// The qualify run of a night: the newest `dynqual qualify` run of the store started at or after
/// the night's first shard and before the next night's first shard (ci/nightly runs it after the
/// campaign, into the same store). Counts are of models (a model's whole case, data set "").
struct NightQualify {
  int64_t runId = 0;
  std::string status; ///< "finished" or "unfinished" (the process stopped before the end)
  std::string startedAt, revision;
  int64_t models = 0, passed = 0, failed = 0, inputErrors = 0, skipped = 0;
  std::vector<QualifyFailure> failures; ///< every failed and input-error model, in run order
  /// True when the campaign report must fail: a failed or input-error model, or an unfinished run.
  bool failing() const { return failed > 0 || inputErrors > 0 || status != "finished"; }
};

/// What one campaign report shows.
struct CampaignReportInput {
  std::string night;                          ///< the night shown
  std::vector<store::FuzzShard> shards;       ///< its shards, oldest first
  std::vector<store::FuzzBucket> buckets;     ///< every bucket with its status for this night
  std::vector<int> sizes;                     ///< nodes of each valid case of the night
  std::vector<store::FuzzNightStats> history; ///< nights up to this one, oldest first
  std::optional<NightQualify> qualify;        ///< absent when no qualify run belongs to the night
  std::string dynqualVersion;
};

/// Loads the input for `night` ("" or "latest" = the newest night) from `store`. Throws
/// std::runtime_error naming the store when it holds no campaign, or not that night.
CampaignReportInput loadCampaignReport(store::Store& store, const std::string& night, int historyNights = 30);

/// The night's qualify run in `store` (see NightQualify), or nullopt when there is none.
/// `nextNightStart` is the first shard start of the next night ("" for the newest night).
std::optional<NightQualify> loadNightQualify(store::Store& store, const std::string& nightStart,
                                             const std::string& nextNightStart);

/// Markdown: result line (FAIL on a new bucket or a failing qualify run, naming its models), buckets (table, then per
/// new/known bucket its reproducer command, message and minimized graph in a code block), campaign numbers, time split,
/// op coverage.
std::string renderCampaignMarkdown(const CampaignReportInput& in);

/// The same as one JSON document {"format": "dynqual-campaign-report", "version": 1, ...}.
nlohmann::json renderCampaignJson(const CampaignReportInput& in);

/// One self-contained HTML page with the same sections plus charts (history of cases and buckets
/// per night, graph-size histogram, time split); Chart.js inlined from `chartJsPath`, fetches
/// forbidden by a Content-Security-Policy, chart data written to <pre id="chart-state"> after
/// drawing. Throws std::runtime_error when Chart.js cannot be read.
std::string renderCampaignHtml(const CampaignReportInput& in, const std::string& chartJsPath);

/// `dynqual report --campaign NIGHT` without the argument parsing.
struct CampaignReportRequest {
  std::string db;
  std::string night;         ///< "" or "latest": the newest night
  std::string format = "md"; ///< md, json or html
  std::string output = "-";
  std::string chartJs; ///< default: defaultChartJsPath()
  int historyNights = 30;
};

/// Renders the report; the output file is opened before the store is read. Throws
/// std::runtime_error (or store::StoreError) with one line naming the file and what to do.
void runCampaignReport(const CampaignReportRequest& req, std::ostream& stdoutStream);

/// True when `db` holds fuzz campaigns but no finished run: `dynqual report` with no run given
/// then renders the campaign instead of failing with "no finished run".
bool storeHasOnlyCampaigns(const std::string& db);

} // namespace dynqual::reports
