// The bisection as Markdown (for people and PR comments) and JSON (for machines).
#include "dynqual/bisect/Bisection.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace dynqual::bisect {

namespace {

std::string pct(double ratio) {
  return fmt::format("{:+.1f}%", (ratio - 1) * 100);
}

std::string rev(const Outcome& o, size_t i) {
  return fmt::format("`{}` ({})", o.revisions[i].sha.substr(0, 12), i);
}

nlohmann::json changeJson(const ModelChange& c) {
  return {{"model", c.model}, {"metric", c.metric}, {"verdict", stats::verdictName(c.verdict)},
          {"ratio", c.ratio}, {"ci_low", c.ciLow},  {"ci_high", c.ciHigh},
          {"p", c.p},         {"rounds", c.rounds}, {"decided_at_rounds", c.decidedAtRounds}};
}

} // namespace

std::string renderMarkdown(const Outcome& o, const std::vector<std::string>& context) {
  std::string md = "## dynqual bisect\n\n";
  for (const auto& c : context)
    md += c + "  \n";
  if (!context.empty())
    md += "\n";
  const char* status = o.exitCode == kLocated        ? "located"
                       : o.exitCode == kInconclusive ? "inconclusive"
                       : o.exitCode == kInfra        ? "infrastructure error"
                                                     : "usage error";
  md += fmt::format("**{}**: {}\n\n", status, o.summary);
  if (!o.tracks.empty()) {
    md += "| model | change | culprit | subject | its own change [interval] | verdict |\n";
    md += "|---|---|---|---|---|---|\n";
    for (const auto& t : o.tracks) {
      std::string culprit =
          t.skippedInside.empty() ? rev(o, t.bad) : fmt::format("one of {}..{}", rev(o, t.good + 1), rev(o, t.bad));
      std::string own = t.verified ? fmt::format("{} [{}, {}] ({} rounds)", pct(t.verified->ratio),
                                                 pct(t.verified->ciLow), pct(t.verified->ciHigh), t.verified->rounds)
                                   : "not verified";
      md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", t.model,
                        t.direction == stats::Verdict::Regression ? "slower" : "faster", culprit,
                        o.revisions[t.bad].subject, own, t.verified ? stats::verdictName(t.verified->verdict) : "-");
    }
    md += "\n";
  }
  md += "| step | kind | base | head | rounds | verdicts |\n|---|---|---|---|---|---|\n";
  int n = 0;
  for (const auto& s : o.steps) {
    std::string verdicts;
    for (const auto& c : s.measured.changes)
      verdicts += fmt::format("{}{} {} {} [{}, {}]", verdicts.empty() ? "" : "; ", c.model,
                              stats::verdictName(c.verdict), pct(c.ratio), pct(c.ciLow), pct(c.ciHigh));
    if (s.kind == Step::Kind::Skip || verdicts.empty())
      verdicts = s.note;
    else if (s.kind == Step::Kind::Probe)
      verdicts += " → " + s.note;
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", ++n, stepKindName(s.kind), rev(o, s.base), rev(o, s.head),
                      s.measured.rounds, verdicts);
  }
  md += fmt::format("\nRevisions in the range: {} ({} between the endpoints). Built: {}. Skipped: {}.  \n",
                    o.revisions.size(), o.revisions.size() - 2, o.built.size(), o.skipped.size());
  md += fmt::format("Spent: {} comparisons, {} ABBA rounds, {} timed process runs, {:.0f} s.\n", o.steps.size(),
                    o.totalRounds, o.totalProcessRuns, o.seconds);
  return md;
}

std::string renderJson(const Outcome& o, const std::vector<std::pair<std::string, std::string>>& context) {
  nlohmann::json j;
  j["format"] = "dynqual-bisect";
  j["version"] = 1;
  for (const auto& [k, v] : context)
    j["context"][k] = v;
  j["exit_code"] = o.exitCode;
  j["summary"] = o.summary;
  j["revisions"] = nlohmann::json::array();
  for (const auto& r : o.revisions)
    j["revisions"].push_back({{"sha", r.sha}, {"subject", r.subject}});
  j["tracks"] = nlohmann::json::array();
  for (const auto& t : o.tracks) {
    nlohmann::json tj = {{"model", t.model},
                         {"metric", t.metric},
                         {"direction", stats::verdictName(t.direction)},
                         {"endpoint_ratio", t.endpointRatio},
                         {"good", t.good},
                         {"culprit", t.bad},
                         {"culprit_sha", o.revisions[t.bad].sha},
                         {"skipped_inside", t.skippedInside},
                         {"by_estimate", t.byEstimate},
                         {"confirmed", t.confirmed},
                         {"notes", t.notes}};
    tj["verified"] = t.verified ? changeJson(*t.verified) : nlohmann::json();
    j["tracks"].push_back(tj);
  }
  j["endpoint_changes"] = nlohmann::json::array();
  for (const auto& c : o.endpointChanges)
    j["endpoint_changes"].push_back(changeJson(c));
  j["steps"] = nlohmann::json::array();
  for (const auto& s : o.steps) {
    nlohmann::json sj = {{"kind", stepKindName(s.kind)},
                         {"base", s.base},
                         {"head", s.head},
                         {"models", s.models},
                         {"rounds", s.measured.rounds},
                         {"process_runs", s.measured.processRuns},
                         {"seconds", s.measured.seconds},
                         {"run_id", s.measured.runId},
                         {"note", s.note},
                         {"error", s.measured.error}};
    sj["changes"] = nlohmann::json::array();
    for (const auto& c : s.measured.changes)
      sj["changes"].push_back(changeJson(c));
    j["steps"].push_back(sj);
  }
  j["skipped"] = o.skipped;
  j["built"] = o.built;
  j["total_rounds"] = o.totalRounds;
  j["total_process_runs"] = o.totalProcessRuns;
  j["seconds"] = o.seconds;
  return j.dump(2) + "\n";
}

} // namespace dynqual::bisect
