#include "Tables.h"

#include "dynqual/stats/Descriptive.h"

#include "dynqual/store/Store.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

namespace dynqual::reports::detail {

using store::CaseRecord;
using store::RunRecord;

namespace {

const store::SampleSeries* series(const CaseRecord& c, const std::string& metric) {
  for (const auto& s : c.samples)
    if (s.metric == metric)
      return &s;
  return nullptr;
}

std::optional<double> metricValue(const CaseRecord* c, const MetricColumn& col) {
  if (!c)
    return std::nullopt;
  const auto* s = series(*c, col.metric);
  if (!s || s->values.empty())
    return std::nullopt;
  return stats::median(s->values) * col.scale;
}

std::optional<double> counterValue(const CaseRecord* c, const std::string& name) {
  if (!c)
    return std::nullopt;
  auto it = c->counters.find(name);
  if (it == c->counters.end())
    return std::nullopt;
  return static_cast<double>(it->second);
}

const CaseRecord* match(const std::optional<RunRecord>& base, const CaseRecord& c) {
  if (!base)
    return nullptr;
  for (const auto& b : base->cases)
    if (b.model.name == c.model.name && b.dataset.name == c.dataset.name)
      return &b;
  return nullptr;
}

const store::AccuracyRow* combined(const CaseRecord& c) {
  // "EP vs CPU": the reference comparison when the case has one, else the expected outputs
  // (which are the reference's for generated bindings).
  for (const char* cmp : {"vs_reference", "vs_expected"})
    for (const auto& a : c.accuracy)
      if (a.comparison == cmp && a.output.empty())
        return &a;
  return nullptr;
}

/// Passed and skipped cases (either spelling: the run document's "pass"/"skip" for a whole
/// model, the store's "passed"/"skipped" for a data set) are the only non-failures.
bool caseFailed(const CaseRecord& c) {
  return c.status != "passed" && c.status != "pass" && c.status != "skipped" && c.status != "skip";
}

/// A whole model's failure that only summarizes failed data sets adds nothing to their rows.
bool hasFailedDataset(const RunRecord& r, const CaseRecord& whole) {
  for (const auto& c : r.cases)
    if (!c.dataset.name.empty() && c.model.name == whole.model.name && c.model.hash == whole.model.hash &&
        caseFailed(c))
      return true;
  return false;
}

std::string shortHash(const std::string& h) {
  return h.substr(0, 12);
}

std::string buildText(const std::optional<store::Build>& b) {
  if (!b)
    return "-";
  return shortHash(b->revision) + (b->dirty ? " (dirty)" : "");
}

} // namespace

const std::vector<MetricColumn>& perfColumns() {
  static const std::vector<MetricColumn> cols = {
      {"QPS", "qps", 1, 1},
      {"Session (s)", "session_s", 1, 3},
      {"1st Infer (ms)", "first_infer_ms", 1, 2},
      {"Median (ms)", "latency_ms", 1, 3},
      {"CPU%", "cpu_percent", 1, 1},
      {"Mem (MB)", "peak_host_bytes", 1e-6, 1},
  };
  return cols;
}

const std::vector<MetricColumn>& counterColumns() {
  static const std::vector<MetricColumn> cols = {
      {"Readbacks", "scalar_readbacks", 1, 0},   {"Syncs", "syncs", 1, 0},
      {"Memcpy", "memcpy_copies", 1, 0},         {"Copy2D", "copy2d_copies", 1, 0},
      {"Strided", "strided_copies", 1, 0},       {"Launches", "kernel_launches", 1, 0},
      {"Peak bytes", "peak_device_bytes", 1, 0},
  };
  return cols;
}

const std::vector<std::pair<const char*, const char*>>& genParams() {
  static const std::vector<std::pair<const char*, const char*>> p = {
      {"Engine", "engine"},         {"Device", "device"},         {"Warmup", "warmup"}, {"Reps", "reps"},
      {"Prompt Len", "prompt_len"}, {"Gen Tokens", "gen_tokens"}, {"Binds", "binding"}};
  return p;
}

const std::vector<MetricColumn>& genColumns() {
  static const std::vector<MetricColumn> cols = {
      {"TTFT (ms)", "ttft_ms", 1, 2},
      {"TPS", "tps", 1, 1},
      {"BW limit (tok/s)", "bandwidth_limit_tps", 1, 1},
      {"Launch limit (tok/s)", "launch_limit_tps", 1, 1},
      {"Of limit (%)", "fraction_of_binding", 100, 1},
      {"Peak Mem (GB)", "peak_host_bytes", 1e-9, 3},
      {"Device Mem (GB)", "peak_device_bytes", 1e-9, 3},
  };
  return cols;
}

std::string fixed(std::optional<double> v, int precision) {
  if (!v || std::isnan(*v))
    return "-";
  return fmt::format("{:.{}f}", *v, precision);
}

std::string changePercent(const Pair& p) {
  if (!p.head || !p.base || *p.base == 0 || std::isnan(*p.base) || std::isnan(*p.head))
    return "n/a";
  return fmt::format("{:+.1f}%", (*p.head - *p.base) / *p.base * 100);
}

std::string failureVerdict(const CaseRecord& c) {
  auto v = c.params.find("verdict");
  if (v != c.params.end() && !v->second.empty())
    return "FAIL (" + v->second + ")";
  if (c.error.rfind("compile", 0) == 0)
    return "FAIL (compile)";
  return "FAIL";
}

std::string verdictText(const AccuracyLine& a) {
  return a.error.empty() ? a.verdict : a.verdict + ": " + a.error;
}

std::string resultLine(const Tables& t) {
  if (t.failures == 0 && t.unfinished)
    return "Result: unfinished, no failing case so far (no verdict).";
  if (t.failures == 0)
    return "Result: pass, no failing cases.";
  return "Result: FAIL, " + std::to_string(t.failures) + (t.failures == 1 ? " failing case" : " failing cases") +
         " (see the accuracy table).";
}

std::string caseLabel(const CaseRecord& c) {
  return c.dataset.name.empty() ? c.model.name : c.model.name + " / " + c.dataset.name;
}

Tables buildTables(const ReportInput& in) {
  const RunRecord& h = in.head;
  Tables t;
  t.hasBase = in.base.has_value();
  t.title = "dynqual " + h.kind + " report: run " + std::to_string(h.id) + " (" + shortHash(h.key) + ")";
  t.unfinished = h.status != store::kRunFinished;
  if (t.unfinished)
    t.warning = "Run " + std::to_string(h.id) +
                " is unfinished: the process stopped before the end (or is still running); results are partial.";
  if (in.base)
    t.baseNote = "Compared with base run " + std::to_string(in.base->id) + " (" + shortHash(in.base->key) +
                 ", commit " + buildText(in.base->build) + ").";
  auto gate = h.params.find("rel_l2_gate");
  t.threshold = "Threshold: an output passes when relative L2 = ‖a − b‖₂ / ‖b‖₂ ≤ " +
                (gate == h.params.end() ? std::string("(not recorded)") : gate->second) +
                " (a: compiled output, b: CPU reference, over elements finite on both sides; when ‖b‖₂ = 0 it passes "
                "when ‖a − b‖₂ ≤ 1e-6). Bit-exact models must match bit for bit.";

  for (const auto& c : h.cases) {
    bool failed = caseFailed(c);
    if (const auto* a = combined(c)) {
      AccuracyLine line{caseLabel(c), a->comparison, a->verdict, a->l2, a->relL2, a->elements, a->nanInfSkipped};
      // The combined row has no cosine: the smallest of the per-output rows (hip-ep's L2 tables).
      for (const auto& o : c.accuracy)
        if (o.comparison == a->comparison && !o.output.empty() && !std::isnan(o.cosine))
          line.cosine = std::isnan(line.cosine) ? o.cosine : std::min(line.cosine, o.cosine);
      // A failed case whose combined row passed failed elsewhere (another comparison, a runtime error).
      if (failed && a->verdict == "pass")
        line.verdict = failureVerdict(c);
      line.failed = failed || a->verdict != "pass";
      if (failed)
        line.error = c.error;
      t.accuracy.push_back(line);
    } else if (failed && (!c.dataset.name.empty() || !hasFailedDataset(h, c))) {
      AccuracyLine line{caseLabel(c), "", failureVerdict(c), std::nan(""), std::nan(""), 0, 0};
      line.error = c.error;
      line.measured = false;
      line.failed = true;
      t.accuracy.push_back(line);
    }
    const CaseRecord* b = match(in.base, c);
    PerfLine perf{caseLabel(c), {}};
    bool anyPerf = false;
    for (const auto& col : perfColumns()) {
      Pair p{metricValue(&c, col), metricValue(b, col)};
      anyPerf |= p.head.has_value();
      perf.cells.push_back(p);
    }
    if (anyPerf)
      t.performance.push_back(perf);
    if (!c.counters.empty()) {
      CounterLine cl{caseLabel(c), {}};
      for (const auto& col : counterColumns())
        cl.cells.push_back({counterValue(&c, col.metric), counterValue(b, col.metric)});
      t.counters.push_back(cl);
    }
    if (series(c, "ttft_ms") || series(c, "tps")) {
      GenLine g{caseLabel(c), {}, {}};
      for (const auto& [header, key] : genParams()) {
        auto it = c.params.find(key);
        g.params.push_back(it == c.params.end() ? "-" : it->second);
      }
      for (const auto& col : genColumns()) {
        auto v = metricValue(&c, col);
        if (!v && c.counters.count(col.metric))
          v = *counterValue(&c, col.metric) * col.scale;
        g.cells.push_back(v);
      }
      t.generation.push_back(g);
    }
  }

  for (const auto& a : t.accuracy)
    t.failures += a.failed ? 1 : 0;

  const store::Build* baseBuild = in.base && in.base->build ? &*in.base->build : h.baseBuild ? &*h.baseBuild : nullptr;
  std::set<std::string> files;
  if (h.build)
    for (const auto& a : h.build->artifacts)
      files.insert(a.path);
  if (baseBuild)
    for (const auto& a : baseBuild->artifacts)
      files.insert(a.path);
  for (const auto& f : files) {
    SizeLine s{f, std::nullopt, std::nullopt};
    if (h.build)
      for (const auto& a : h.build->artifacts)
        if (a.path == f)
          s.thisMB = a.sizeBytes / 1e6;
    if (baseBuild)
      for (const auto& a : baseBuild->artifacts)
        if (a.path == f)
          s.baseMB = a.sizeBytes / 1e6;
    t.sizes.push_back(s);
  }

  const store::Machine& m = h.machine;
  std::string machine = m.cpuModel + ", " + std::to_string(m.cores) + " cores, " +
                        fmt::format("{:.1f}", m.memoryBytes / 1e9) + " GB, " + m.os;
  if (!m.gpuName.empty())
    machine += ", GPU " + m.gpuName + " (driver " + m.gpuDriver + ")";
  t.footer.push_back({"Machine", machine + " (fingerprint " + shortHash(m.fingerprint) + ")"});
  std::string commits = "head " + buildText(h.build);
  if (in.base)
    commits += ", base " + buildText(in.base->build);
  else if (h.baseBuild)
    commits += ", base " + buildText(h.baseBuild);
  t.footer.push_back({"Commits", commits});
  std::string pipes = h.pipeline.spec.empty() ? "-" : h.pipeline.spec + " (" + shortHash(h.pipeline.hash) + ")";
  if (in.base && in.base->pipeline.hash != h.pipeline.hash)
    pipes += "; base " + in.base->pipeline.spec + " (" + shortHash(in.base->pipeline.hash) + ")";
  t.footer.push_back({"Pipeline", pipes});
  t.footer.push_back({"Run", h.kind + " on " + (h.device.empty() ? "-" : h.device) + ", started " + h.startedAt +
                                 (h.endedAt.empty() ? "" : ", ended " + h.endedAt)});
  t.footer.push_back({"dynqual", in.dynqualVersion});
  return t;
}

} // namespace dynqual::reports::detail
