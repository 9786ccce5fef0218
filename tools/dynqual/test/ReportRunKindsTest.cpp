// `dynqual report RUN` on every run kind with a known verdict. The A/B runs are recorded through
// the real recording code (diff::recordAbResult) from synthetic samples whose verdict is worked
// out by hand below; each report's Markdown, JSON and HTML headline and exit code must say that
// verdict. Runs the report cannot read (unknown kind, newer record, newer schema, recorded
// before outcomes were kept) must exit 2 and never say "pass"; `gate --reanalyze RUN` and
// `report RUN` must print the same timing table.
#include "dynqual/diff/AbStore.h"
#include "dynqual/diff/Analysis.h"
#include "dynqual/diff/Engine.h"
#include "dynqual/process/Process.h"
#include "dynqual/store/Store.h"

#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;
using namespace dynqual;

namespace {

const std::string kBin = DYNQUAL_BIN;

struct Outcome {
  int code = -1;
  std::string out, err;
};

Outcome runDynqual(std::vector<std::string> args) {
  args.insert(args.begin(), kBin);
  process::ProcessResult c = process::runChild(args, 120);
  return {c.exitCode, c.out, c.err};
}

/// The verdicts a test run is built to have.
enum class Planned { Regression, Inconclusive, AccuracyFailure, InfrastructureError, Pass };

const char* plannedName(Planned p) {
  switch (p) {
  case Planned::Regression:
    return "Regression";
  case Planned::Inconclusive:
    return "Inconclusive";
  case Planned::AccuracyFailure:
    return "AccuracyFailure";
  case Planned::InfrastructureError:
    return "InfrastructureError";
  case Planned::Pass:
    return "Pass";
  }
  return "?";
}

/// What the report must say, worked out by hand (see samplesFor).
struct Expected {
  const char* headline; ///< the first word of diff::verdictLine
  int exitCode;
  const char* modelVerdict; ///< verdict of the timed comparison, "" when nothing is timed
};

Expected expectedFor(Planned p) {
  switch (p) {
  case Planned::Regression:
    return {"FAIL", 1, "regression"};
  case Planned::Inconclusive:
    return {"INCONCLUSIVE", 3, "inconclusive"};
  case Planned::AccuracyFailure:
    return {"FAIL", 1, ""};
  case Planned::InfrastructureError:
    return {"ERROR", 4, ""};
  case Planned::Pass:
    return {"PASS", 0, "no-change"};
  }
  return {"?", -1, ""};
}

/// 12 ABBA rounds of model "m", one sample per position (process interleaving; round r runs
/// base, head, head, base when r is even, head, base, base, head when odd). Both positions of an
/// arm in a round hold the same value, so the round value (the minimum) is that value, and the
/// per-round ratio is head/base:
///  - Regression: ratio 1.10 + 0.001 r. All 12 log ratios are positive, so the exact two-sided
///    signed-rank p = 2 / 2^12 = 0.00049 < 0.05 (one look, one comparison: the whole alpha), and
///    every Walsh average, hence the Hodges-Lehmann interval, is >= ln 1.10 > ln 1.02: regression.
///  - Pass: ratio 1 +- 0.0005 (alternating): every Walsh average lies in [ln 0.9995, ln 1.0005],
///    so the interval is inside the band [0.98, 1.02]: no change.
///  - Inconclusive: ratio 0.8 in even rounds, 1.25 in odd ones: log ratios +-0.223, six each.
///    Of the 78 Walsh averages 21 are -0.223, 36 are 0 and 21 are +0.223; the 95% interval drops
///    fewer than 21 from each end (the signed-rank critical count for n = 12 is 14), so it is
///    [0.8, 1.25], beyond both sides of the band, and p = 1: inconclusive.
std::vector<diff::Sample> samplesFor(Planned p) {
  std::vector<diff::Sample> out;
  static const char* kEven[4] = {"base", "head", "head", "base"};
  static const char* kOdd[4] = {"head", "base", "base", "head"};
  for (int round = 0; round < 12; ++round) {
    double base = 10.0, ratio = 1.0;
    if (p == Planned::Regression)
      ratio = 1.10 + 0.001 * round;
    else if (p == Planned::Inconclusive)
      ratio = round % 2 == 0 ? 0.8 : 1.25;
    else
      ratio = round % 2 == 0 ? 1.0005 : 0.9995;
    const char* const* order = round % 2 == 0 ? kEven : kOdd;
    for (int pos = 0; pos < 4; ++pos) {
      bool head = std::string(order[pos]) == "head";
      out.push_back({"m", order[pos], round, pos, 0, head ? base * ratio : base, 1});
    }
  }
  return out;
}

diff::Policy testPolicy() {
  diff::Policy p;
  p.looks = {12};
  p.bootstrapResamples = 200;
  return p;
}

diff::ModelCheck check(const std::string& model, bool passed, const std::string& detail) {
  diff::ModelCheck c;
  c.model = model;
  c.passed = passed;
  c.detail = detail;
  c.baseArtifactBytes = 4096;
  c.headArtifactBytes = 4160;
  c.baseCounters = {{"kernel_launches", 7}, {"syncs", 2}};
  c.headCounters = {{"kernel_launches", 9}, {"syncs", 2}};
  diff::CaseCheck cc;
  cc.name = "test_data_set_0";
  cc.passed = passed;
  compare::OutputComparison o;
  o.name = "y";
  o.verdict = compare::Verdict::Pass;
  o.relL2 = 1e-7;
  cc.baseVsReference.outputs = {o};
  cc.baseVsReference.verdict = compare::Verdict::Pass;
  cc.baseVsReference.combinedRelL2 = 1e-7;
  cc.headVsReference = cc.baseVsReference;
  cc.headVsBase = cc.baseVsReference;
  if (!passed) {
    cc.headVsReference.verdict = compare::Verdict::Fail;
    cc.headVsReference.combinedRelL2 = 3.1e-2;
  }
  c.cases = {cc};
  return c;
}

/// The AbResult a run of `kind` with verdict `p` ends with, as the engine would build it.
diff::AbResult resultFor(Planned p) {
  diff::AbResult r;
  r.envStart.machine = "test cpu, 2 cores";
  r.envStart.loadAverage1 = 0.5;
  r.envEnd = r.envStart;
  r.envEnd.loadAverage1 = 0.75;
  r.binaryBytes["dynqual"] = {1000, 1100};
  if (p == Planned::AccuracyFailure) {
    r.checks = {check("m", false, "test_data_set_0: head vs reference: rel-L2 3.1e-02 > 1e-05")};
  } else if (p == Planned::InfrastructureError) {
    r.checks = {};
    r.infraErrors = {"head ext:missing: runner 'missing' is not in the runner config"};
  } else {
    r.checks = {check("m", true, "")};
    r.samples = samplesFor(p);
    auto a = diff::analyze(r.samples, {"m"}, testPolicy(), "latency_ms");
    r.comparisons = a.comparisons;
    r.looksDone = a.looksDone;
    r.rounds = 12;
  }
  r.counterChanges = diff::counterChanges(r.checks);
  return r;
}

struct TempDb {
  fs::path dir;
  TempDb() {
    dir = fs::temp_directory_path() / ("report-kinds-" + std::to_string(::getpid()) + "-" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~TempDb() { fs::remove_all(dir); }
  std::string db() const { return (dir / "r.db").string(); }
};

store::RunRecord header(const std::string& kind, const std::string& key) {
  store::RunRecord h;
  h.key = key;
  h.kind = kind;
  h.startedAt = "2026-01-01T00:00:00Z";
  h.machine.fingerprint = "test-machine";
  h.machine.cpuModel = "cpu";
  h.machine.os = "os";
  diff::Measurement m;
  h.params = diff::policyParams(testPolicy(), m);
  h.params["base"] = "dq:production@sim";
  h.params["head"] = kind == "calibrate" ? "dq:production@sim" : "dq:custom@sim";
  if (kind == "gate") {
    h.params["base_rev"] = "1111111";
    h.params["head_rev"] = "2222222";
  }
  return h;
}

/// Records a finished A/B run through diff::recordAbResult; returns its id.
int64_t recordAbRun(const std::string& db, const std::string& kind, const diff::AbResult& r, bool finish = true) {
  store::Store s(db);
  int64_t id = s.beginRun(header(kind, kind + "-" + std::to_string(std::rand())));
  diff::recordAbResult(s, id, r);
  if (finish)
    s.finishRun(id);
  return id;
}

std::string firstLines(const std::string& s, int n) {
  size_t p = 0;
  for (int i = 0; i < n && p != std::string::npos; ++i)
    p = s.find('\n', p + 1);
  return s.substr(0, p);
}

/// The "### Timing" section of a gate Markdown report, up to the next section.
std::string timingSection(const std::string& md) {
  size_t a = md.find("### Timing"), b = md.find("### Accuracy");
  return a == std::string::npos || b == std::string::npos ? "" : md.substr(a, b - a);
}

class ReportAbKinds : public ::testing::TestWithParam<std::tuple<std::string, Planned>> {};

} // namespace

TEST_P(ReportAbKinds, HeadlineAndExitCodeSayTheRecordedVerdict) {
  auto [kind, planned] = GetParam();
  Expected want = expectedFor(planned);
  TempDb t;
  diff::AbResult r = resultFor(planned);
  // The real analysis agrees with the hand calculation, else the samples do not test what they claim.
  ASSERT_EQ(diff::exitCodeFor(r), want.exitCode);
  if (*want.modelVerdict)
    ASSERT_EQ(stats::verdictName(r.comparisons.at(0).verdict), std::string(want.modelVerdict));
  int64_t id = recordAbRun(t.db(), kind, r);
  std::string run = std::to_string(id);

  Outcome md = runDynqual({"report", run, "--db", t.db()});
  EXPECT_EQ(md.code, want.exitCode) << md.err << md.out;
  std::string headline = "**dynqual " + kind + ": " + want.headline + ":";
  EXPECT_NE(firstLines(md.out, 2).find(headline), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("exit " + std::to_string(want.exitCode) + ":"), std::string::npos) << md.out;
  EXPECT_EQ(md.out.find("Result: pass"), std::string::npos) << md.out;
  if (*want.modelVerdict)
    EXPECT_NE(timingSection(md.out).find("| " + std::string(want.modelVerdict) + " |"), std::string::npos) << md.out;
  if (planned == Planned::InfrastructureError)
    EXPECT_NE(md.out.find("infrastructure error: head ext:missing"), std::string::npos) << md.out;
  if (planned == Planned::AccuracyFailure)
    EXPECT_NE(md.out.find("| m | 1 | 1.00e-07 | 3.10e-02 | equal within gate | FAIL: test\\_data\\_set\\_0"),
              std::string::npos)
        << md.out;
  // Stored with the outcome: the environment, the binary sizes and the counters that changed.
  EXPECT_NE(md.out.find("test cpu, 2 cores; load 0.50 -> 0.75"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("| (binary) | dynqual | 1100 | 1000 | +100 |"), std::string::npos) << md.out;

  Outcome js = runDynqual({"report", run, "--db", t.db(), "--format", "json"});
  EXPECT_EQ(js.code, want.exitCode) << js.err;
  json doc = json::parse(js.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << js.out;
  EXPECT_EQ(doc["format"], "dynqual-ab");
  EXPECT_EQ(doc["command"], kind);
  EXPECT_EQ(doc["run_id"], id);
  EXPECT_EQ(doc["exit_code"], want.exitCode);
  EXPECT_EQ(doc["verdict"].get<std::string>().rfind(std::string(want.headline) + ":", 0), 0u) << doc["verdict"];
  if (*want.modelVerdict)
    EXPECT_EQ(doc["comparisons"][0]["verdict"], want.modelVerdict);

  if (!fs::exists("/usr/share/javascript/chart.js/chart.min.js"))
    GTEST_SKIP() << "libjs-chart.js missing (scripts/setup installs it)";
  Outcome html = runDynqual({"report", run, "--db", t.db(), "--format", "html"});
  EXPECT_EQ(html.code, want.exitCode) << html.err;
  EXPECT_NE(html.out.find("id=\"verdict\"><b>" + std::string(want.headline) + ":"), std::string::npos)
      << firstLines(html.out.substr(html.out.find("<body>")), 8);
  if (*want.modelVerdict)
    EXPECT_NE(html.out.find("\"id\":\"rounds-m-latency_ms\""), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(EveryKindAndVerdict, ReportAbKinds,
                         ::testing::Combine(::testing::Values("ab", "gate", "calibrate", "bisect-step"),
                                            ::testing::Values(Planned::Regression, Planned::Inconclusive,
                                                              Planned::AccuracyFailure, Planned::InfrastructureError,
                                                              Planned::Pass)),
                         [](const auto& info) {
                           std::string kind = std::get<0>(info.param);
                           std::replace(kind.begin(), kind.end(), '-',
                                        '_'); // a test name takes letters, digits and '_'
                           return kind + plannedName(std::get<1>(info.param));
                         });

// The same run through `gate --reanalyze` and `report`: one timing table, one verdict line.
TEST(ReportAbRun, ReanalyzeAndReportPrintTheSameVerdictTable) {
  TempDb t;
  diff::AbResult r = resultFor(Planned::Regression);
  int64_t id = recordAbRun(t.db(), "gate", r);
  Outcome re = runDynqual({"gate", "--reanalyze", std::to_string(id), "--db", t.db()});
  Outcome rep = runDynqual({"report", std::to_string(id), "--db", t.db()});
  EXPECT_EQ(re.code, 1) << re.err;
  EXPECT_EQ(rep.code, 1) << rep.err;
  std::string table = timingSection(rep.out);
  ASSERT_NE(table.find("| m | latency\\_ms |"), std::string::npos) << rep.out;
  EXPECT_EQ(timingSection(re.out), table);
  auto verdict = [](const std::string& md) {
    size_t a = md.find(": FAIL:");
    return a == std::string::npos ? "" : md.substr(a, md.find('\n', a) - a);
  };
  EXPECT_FALSE(verdict(rep.out).empty()) << rep.out;
  EXPECT_EQ(verdict(re.out), verdict(rep.out));
}

// A qualify run with a failing case: "Result: FAIL" in all three formats, exit 1; without one, 0.
TEST(ReportCaseRun, QualifyExitCodeFollowsItsFailingCases) {
  TempDb t;
  int64_t failed = 0, passed = 0;
  {
    store::Store s(t.db());
    for (bool fail : {true, false}) {
      store::RunRecord h;
      h.key = fail ? "q-fail" : "q-pass";
      h.kind = "qualify";
      h.startedAt = fail ? "2026-01-01T00:00:00Z" : "2026-01-01T00:01:00Z";
      h.machine.fingerprint = "test-machine";
      h.machine.cpuModel = "cpu";
      h.machine.os = "os";
      int64_t id = s.beginRun(h);
      store::CaseRecord c;
      c.model = {"m", "hash-m"};
      c.status = fail ? "failed" : "passed";
      c.error = fail ? "compile: unsupported op Foo" : "";
      s.recordCases(id, {c});
      s.finishRun(id);
      (fail ? failed : passed) = id;
    }
  }
  Outcome md = runDynqual({"report", std::to_string(failed), "--db", t.db()});
  EXPECT_EQ(md.code, 1) << md.err;
  EXPECT_NE(md.out.find("**Result: FAIL, 1 failing case"), std::string::npos) << md.out;
  Outcome js = runDynqual({"report", std::to_string(failed), "--db", t.db(), "--format", "json"});
  EXPECT_EQ(js.code, 1);
  EXPECT_EQ(json::parse(js.out)["failures"], 1);
  Outcome ok = runDynqual({"report", std::to_string(passed), "--db", t.db()});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("**Result: pass, no failing cases.**"), std::string::npos) << ok.out;
  if (fs::exists("/usr/share/javascript/chart.js/chart.min.js")) {
    Outcome html = runDynqual({"report", std::to_string(failed), "--db", t.db(), "--format", "html"});
    EXPECT_EQ(html.code, 1);
    EXPECT_NE(html.out.find("<b>Result: FAIL, 1 failing case"), std::string::npos);
  }
}

// Runs whose headline cannot be computed from the store: exit 2, one line saying why, no "pass".
TEST(ReportAbRun, UnreadableRunsExit2AndNeverSayPass) {
  TempDb t;
  int64_t ab = recordAbRun(t.db(), "ab", resultFor(Planned::Pass));
  int64_t legacy = recordAbRun(t.db(), "gate", resultFor(Planned::Pass));
  int64_t unfinished = 0, newer = 0, other = 0;
  {
    store::Store s(t.db());
    unfinished = s.beginRun(header("gate", "never-finished"));
    store::RunRecord h = header("bisect", "a-kind-of-the-future");
    other = s.beginRun(h);
    s.finishRun(other);
  }
  newer = recordAbRun(t.db(), "ab", resultFor(Planned::Pass));
  {
    SQLite::Database db(t.db(), SQLite::OPEN_READWRITE);
    db.exec("DELETE FROM ab_outcomes WHERE run_id = " + std::to_string(legacy));
    db.exec("UPDATE ab_outcomes SET record_version = " + std::to_string(diff::kAbRecordVersion + 1) +
            " WHERE run_id = " + std::to_string(newer));
  }
  EXPECT_EQ(runDynqual({"report", std::to_string(ab), "--db", t.db()}).code, 0); // the control: readable, a pass
  auto refused = [&](int64_t id, const std::string& why) {
    for (const char* format : {"md", "json", "html"}) {
      Outcome o = runDynqual({"report", std::to_string(id), "--db", t.db(), "--format", format});
      EXPECT_EQ(o.code, 2) << id << " " << format << ": " << o.err << o.out;
      EXPECT_NE(o.err.find(why), std::string::npos) << o.err;
      EXPECT_EQ(o.out.find("PASS"), std::string::npos) << o.out;
      EXPECT_EQ(o.out.find("pass"), std::string::npos) << o.out;
    }
  };
  refused(other, "is a 'bisect' run, which this dynqual cannot report");
  refused(newer, "written by a newer dynqual");
  refused(legacy, "recorded before dynqual stored the outcome");

  Outcome u = runDynqual({"report", std::to_string(unfinished), "--db", t.db()});
  EXPECT_EQ(u.code, 2) << u.err;
  EXPECT_NE(u.out.find("UNFINISHED: run " + std::to_string(unfinished) + " (gate) never recorded a result"),
            std::string::npos)
      << u.out;
  Outcome uj = runDynqual({"report", std::to_string(unfinished), "--db", t.db(), "--format", "json"});
  EXPECT_EQ(json::parse(uj.out)["status"], "unfinished");

  {
    SQLite::Database db(t.db(), SQLite::OPEN_READWRITE);
    db.exec("PRAGMA user_version = 99");
  }
  Outcome schema = runDynqual({"report", std::to_string(ab), "--db", t.db()});
  EXPECT_EQ(schema.code, 2);
  EXPECT_NE(schema.err.find("schema version 99 is newer than this dynqual"), std::string::npos) << schema.err;
  EXPECT_TRUE(schema.out.empty()) << schema.out;
}
