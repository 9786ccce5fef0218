// `dynqual history` end to end: a stored history with a known step (imported through `db import`),
// its change point in Markdown and JSON, and `--confirm` through the gate: a commit that cannot be
// built is unconfirmed (exit 0), a confirmed slowdown exits 1.
#include "dynqual/process/Process.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kBin = DYNQUAL_BIN;
const fs::path kCorpus = DYNQUAL_CORPUS_DIR;
const std::string kModel = "slice_negative_step";
const std::string kCommitA(40, 'a');
const std::string kCommitB(40, 'b');

struct Outcome {
  int code = -1;
  std::string out, err;
  json doc;
};

Outcome run(std::vector<std::string> args, double timeout = 120) {
  args.insert(args.begin(), kBin);
  dynqual::process::ProcessResult c = dynqual::process::runChild(args, timeout);
  Outcome o{c.exitCode, c.out, c.err, json::parse(c.out, nullptr, false)};
  return o;
}

/// A database holding `n` qualify runs of kModel: latency 1 ms * (1 + 0.5 % sin(2.4 i)), times
/// (1 + step) from run `at` on; commit A before `at`, commit B from it.
fs::path historyDb(const std::string& name, int n, int at, double step) {
  fs::path dir = fs::temp_directory_path() / ("history-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  json runs = json::array();
  for (int i = 0; i < n; ++i) {
    double ms = (i >= at ? 1 + step : 1.0) * (1 + 0.005 * std::sin(2.4 * i));
    char started[32];
    std::snprintf(started, sizeof started, "2026-01-01T00:%02d:%02dZ", i / 60, i % 60);
    const std::string& rev = i >= at ? kCommitB : kCommitA;
    runs.push_back(
        {{"key", name + std::to_string(i)},
         {"kind", "qualify"},
         {"status", "finished"},
         {"started_at", started},
         {"ended_at", started},
         {"command_line", "dynqual qualify"},
         {"device", "sim"},
         {"machine",
          {{"fingerprint", std::string(64, 'f')},
           {"cpu_model", "Test CPU"},
           {"cores", 2},
           {"memory_bytes", 1000},
           {"os", "Linux"},
           {"gpu_name", ""},
           {"gpu_driver", ""}}},
         {"build",
          {{"key", "build-" + rev},
           {"revision", rev},
           {"dirty", false},
           {"compiler_version", "g++"},
           {"dynqual_version", "0"},
           {"artifacts", json::array()}}},
         {"base_build", nullptr},
         {"pipeline", {{"hash", std::string(64, 'e')}, {"spec", "production"}}},
         {"params", json::object()},
         {"cases",
          {{{"model", {{"name", kModel}, {"hash", "h"}}},
            {"dataset", nullptr},
            {"status", "passed"},
            {"error", ""},
            {"params", json::object()},
            {"accuracy", json::array()},
            {"samples", {{{"metric", "latency_ms"}, {"unit", "ms"}, {"values", {ms, ms * 1.001, ms * 0.999}}}}},
            {"counters", json::object()}}}}});
  }
  fs::path file = dir / (name + ".json");
  std::ofstream(file) << json{{"format", "dynqual-store"}, {"version", 1}, {"runs", runs}}.dump();
  fs::path db = dir / (name + ".db");
  fs::remove(db);
  Outcome imp = run({"db", "--db", db.string(), "import", file.string()});
  EXPECT_EQ(imp.code, 0) << imp.err;
  return db;
}

} // namespace

TEST(HistoryCommand, StepIsOneChangePointBetweenItsCommits) {
  fs::path db = historyDb("step", 30, 15, 0.10);
  Outcome j = run({"history", "--db", db.string(), "--format", "json"});
  ASSERT_EQ(j.code, 0) << j.err;
  ASSERT_FALSE(j.doc.is_discarded()) << j.out;
  EXPECT_EQ(j.doc["format"], "dynqual-history");
  EXPECT_EQ(j.doc["method"], "pelt");
  ASSERT_EQ(j.doc["series"].size(), 1u);
  const json& s = j.doc["series"][0];
  EXPECT_EQ(s["model"], kModel);
  EXPECT_EQ(s["points"].size(), 30u);
  ASSERT_EQ(s["change_points"].size(), 1u) << s.dump();
  const json& c = s["change_points"][0];
  EXPECT_EQ(c["index"], 15);
  EXPECT_EQ(c["commit_before"], kCommitA);
  EXPECT_EQ(c["commit_after"], kCommitB);
  EXPECT_NEAR(c["change_percent"].get<double>(), 10.0, 0.5); // the step, within the 0.5 % wobble
  EXPECT_EQ(c["direction"], "worse");
  EXPECT_LT(c["p"].get<double>(), 0.001);

  Outcome md = run({"history", "--db", db.string(), "--model", kModel});
  ASSERT_EQ(md.code, 0) << md.err;
  EXPECT_NE(md.out.find("| 15 | aaaaaaaa → bbbbbbbb | 15 → 16 |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("change point +"), std::string::npos) << md.out;

  // Another model, machine or metric: nothing.
  Outcome none = run({"history", "--db", db.string(), "--model", "other", "--format", "json"});
  EXPECT_EQ(none.code, 0);
  EXPECT_TRUE(none.doc["series"].empty());
}

TEST(HistoryCommand, FlatHistoryHasNoChangePoint) {
  fs::path db = historyDb("flat", 30, 30, 0);
  Outcome j = run({"history", "--db", db.string(), "--format", "json"});
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_TRUE(j.doc["series"][0]["change_points"].empty()) << j.out;
}

TEST(HistoryCommand, UnbuildableCommitIsUnconfirmedNotARegression) {
  fs::path db = historyDb("unbuilt", 30, 15, 0.10);
  // The commits do not exist in this repository: the gate cannot build them.
  Outcome j = run({"history", "--db", db.string(), "--format", "json", "--confirm", "--repo",
                   kCorpus.parent_path().string(), "--cache-dir", (db.parent_path() / "cache").string()});
  ASSERT_EQ(j.code, 0) << j.err;
  const json& conf = j.doc["series"][0]["change_points"][0]["confirmation"];
  EXPECT_EQ(conf["status"], "unconfirmed");
  EXPECT_NE(conf["detail"].get<std::string>().find("cannot build aaaaaaaaaaaa"), std::string::npos) << conf.dump();
  EXPECT_EQ(j.doc["confirmed_regressions"], 0);
}

TEST(HistoryCommand, ConfirmedSlowdownExitsOne) {
  fs::path db = historyDb("confirm", 30, 15, 0.10);
  std::string bin = fs::path(kBin).parent_path().string();
  // Both commits map to this build; the injected slowdown makes the later one slower.
  Outcome j = run({"history",           "--db",        db.string(), "--format",    "json",     "--confirm",
                   "--bin-for",         "aaaa=" + bin, "--bin-for", "bbbb=" + bin, "--suite",  kCorpus.string(),
                   "--looks",           "12",          "--samples", "1",           "--warmup", "0",
                   "--inject-slowdown", kModel + "=50"},
                  300);
  ASSERT_FALSE(j.doc.is_discarded()) << j.out << j.err;
  const json& conf = j.doc["series"][0]["change_points"][0]["confirmation"];
  EXPECT_EQ(conf["status"], "regression") << conf.dump() << j.err;
  EXPECT_GT(conf["gate_run"].get<int64_t>(), 0);
  EXPECT_GT(conf["ratio"].get<double>(), 1.2);
  EXPECT_EQ(j.doc["confirmed_regressions"], 1);
  EXPECT_EQ(j.code, 1) << j.err;
  // The confirmation is a gate run in the same store, with both commits.
  Outcome g = run({"gate", "--reanalyze", std::to_string(conf["gate_run"].get<int64_t>()), "--db", db.string(),
                   "--format", "json"});
  EXPECT_NE(g.err.find("identical to the stored verdicts"), std::string::npos) << g.err;
}

TEST(HistoryCommand, UsageErrorsExitTwo) {
  EXPECT_EQ(run({"history", "--db", "/nonexistent/x.db"}).code, 2);
  fs::path db = historyDb("usage", 12, 12, 0);
  EXPECT_EQ(run({"history", "--db", db.string(), "--format", "xml"}).code, 2);
  EXPECT_EQ(run({"history", "--db", db.string(), "--bin-for", "nodir"}).code, 2);
  EXPECT_EQ(run({"history", "--db", db.string(), "--window", "8"}).code, 2); // fewer than two segments of 5
  // Too few runs for two segments is said in the output, not an error.
  Outcome few = run({"history", "--db", db.string(), "--min-segment", "10", "--format", "json"});
  EXPECT_EQ(few.code, 0) << few.err;
  EXPECT_NE(few.doc["series"][0]["skipped"].get<std::string>().find("need at least 20"), std::string::npos) << few.out;
}
