#include "dynqual/fuzz/CaseRunner.h"
#include "dynqual/fuzz/Coverage.h"

#include "dynqual/fuzz/Bucket.h"
#include "dynqual/fuzz/Minimizer.h"
#include "dynqual/fuzz/OriginTrace.h"
#include "dynqual/fuzz/StageWatchdog.h"
#include "dynqual/modelgen/GraphBuilder.h"
#include "dynqual/onnx/GraphSignature.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/process/Process.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <set>

namespace fs = std::filesystem;

namespace dynqual::fuzz {

namespace {

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string shellQuote(const std::string& s) {
  bool plain =
      !s.empty() &&
      s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:/@=") == std::string::npos;
  if (plain)
    return s;
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// The variants a finding needs to be seen again: its own, plus the first one for a
/// disagreement between variants.
OracleConfig configFor(const Finding& f, const OracleConfig& base) {
  OracleConfig c = base;
  c.ortOracle = f.symptom == "oracle-disagreement";
  if (f.symptom == "variant-disagreement") {
    c.variants = {base.variants.at(0), exec::parseVariant(f.variant)};
  } else if (!c.ortOracle && f.variant != base.variants.at(0).text()) {
    // Keep the first variant as the control: a reduction must not drift to a failure that the
    // first variant shares (a bug of its own rather than of this variant).
    c.variants = {base.variants.at(0), exec::parseVariant(f.variant)};
  } else if (!c.ortOracle) {
    c.variants = {exec::parseVariant(f.variant)};
  } else {
    c.variants = {base.variants.at(0)};
  }
  return c;
}

/// Writes the minimized case: model.onnx, test_data_set_0 (the failing binding's inputs and the
/// reference's outputs) and meta.json.
void writeCase(const fs::path& dir, const PreparedCase& pc, const FindingReport& fr, const CaseRequest& req) {
  fs::create_directories(dir / "test_data_set_0");
  modelgen::writeModel(pc.model, dir / "model.onnx");
  auto ins = onnxio::describeInputs(pc.model);
  for (size_t i = 0; i < pc.inputs[0].size(); ++i)
    onnxio::writeTensorFile(dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb"), pc.inputs[0][i],
                            ins[i].name);
  for (size_t i = 0; i < pc.expected[0].size(); ++i)
    onnxio::writeTensorFile(dir / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb"), pc.expected[0][i],
                            pc.outputNames[i]);
  nlohmann::json meta = {
      {"kind", "fuzz-finding"},
      {"generator", kGeneratorVersion},
      {"seed", req.seed},
      {"signature", fr.signature},
      {"signature_hash", fr.signatureHash},
      {"symptom", fr.finding.symptom},
      {"ops", fr.ops},
      {"pass", fr.pass},
      {"detail", fr.finding.detail},
      {"variant", fr.finding.variant},
      {"knob", req.knob},
      {"binding", pc.bindings[0].description},
      {"binding_kind", pc.bindings[0].kind},
      {"nodes_before", fr.nodesBefore},
      {"nodes_after", fr.nodesAfter},
      {"elements_before", fr.elementsBefore},
      {"elements_after", fr.elementsAfter},
      {"reproducer", fr.reproducer},
      {"bucket", fr.bucket},
      {"bucket_hash", fr.bucketHash},
      {"origin", fr.origin},
      {"origin_trace", fr.originTrace},
  };
  std::ofstream(dir / "meta.json") << meta.dump(2) << "\n";
}

/// The pipeline spec a dq variant's pipeline stands for, from `dynqual compile --print-pipeline`;
/// "" when the compiler cannot say (an option it does not know).
std::string resolvedSpec(const fs::path& binDir, const std::string& pipeline) {
  process::ProcessResult c =
      process::runChild({(binDir / "dynqual").string(), "compile", "--print-pipeline", "--pipeline", pipeline}, 60);
  if (c.exitCode != 0)
    return "";
  std::string out = c.out;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
    out.pop_back();
  return out;
}

/// The first optional pass whose removal makes the finding go away while the case still compiles
/// and runs, or "unattributed".
std::string attributePass(const PreparedCase& one, const Finding& f, const CaseRequest& req, int& counter) {
  if (f.symptom == "variant-disagreement" || f.symptom == "oracle-disagreement")
    return "unattributed";
  exec::Variant v = exec::parseVariant(f.variant);
  if (v.kind != exec::Variant::Kind::Dq)
    return "unattributed";
  std::string spec = req.oracle.engine && req.oracle.env.empty() ? req.oracle.engine->pipelineSpec(v.pipeline)
                                                                 : resolvedSpec(req.oracle.binDir, v.pipeline);
  if (spec.empty())
    return "unattributed";
  for (const char* pass : kOptionalPasses) {
    std::string without = removePass(spec, pass);
    if (without.empty())
      continue;
    OracleConfig oc = req.oracle;
    oc.ortOracle = false;
    exec::Variant w = v;
    w.pipeline = without;
    oc.variants = {w};
    fs::path dir = req.workDir / ("attr_" + std::to_string(counter++));
    try {
      OracleResult r = runOracle(one, oc, dir);
      std::error_code ec;
      fs::remove_all(dir, ec);
      if (r.findings.empty())
        return pass;
    } catch (const std::exception&) {
    }
  }
  return "unattributed";
}

} // namespace

std::string removePass(const std::string& spec, const std::string& pass) {
  size_t at = 0;
  while ((at = spec.find(pass, at)) != std::string::npos) {
    size_t end = at + pass.size();
    bool startOk = at == 0 || spec[at - 1] == ' ' || spec[at - 1] == '(' || spec[at - 1] == ',';
    bool endOk = end == spec.size() || spec[end] == ',' || spec[end] == ')' || spec[end] == '{' || spec[end] == ' ';
    if (!startOk || !endOk) {
      at = end;
      continue;
    }
    if (end < spec.size() && spec[end] == '{') {
      int depth = 0;
      for (; end < spec.size(); ++end) {
        depth += spec[end] == '{' ? 1 : spec[end] == '}' ? -1 : 0;
        if (depth == 0) {
          ++end;
          break;
        }
      }
    }
    // Take the separator with it: ", " after, or else ", " before.
    size_t from = at, to = end;
    if (to < spec.size() && spec[to] == ',') {
      ++to;
      while (to < spec.size() && spec[to] == ' ')
        ++to;
    } else {
      while (from > 0 && spec[from - 1] == ' ')
        --from;
      if (from > 0 && spec[from - 1] == ',')
        --from;
    }
    return spec.substr(0, from) + spec.substr(to);
  }
  return "";
}

std::string fnv1aHex(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string reproducerLine(const CaseRequest& r) {
  std::string line = "dynqual fuzz-case --seed " + std::to_string(r.seed) + " --bindings " + std::to_string(r.bindings);
  for (const auto& v : r.oracle.variants)
    line += " --variant " + shellQuote(v.text());
  if (r.oracle.ortOracle)
    line += " --oracle ort";
  return line;
}

CaseReport runCase(const CaseRequest& req) {
  CaseReport rep;
  rep.seed = req.seed;
  auto t0 = std::chrono::steady_clock::now();
  GeneratedCase gc = generate(req.seed, req.generator);
  rep.generateMs = msSince(t0);
  rep.nodes = gc.nodes;
  rep.opCounts = gc.opCounts;
  PreparedCase pc;
  {
    std::optional<StageWatchdog> watchdog;
    if (req.referenceWatchdogSeconds > 0) {
      watchdog.emplace();
      watchdog->arm(req.referenceWatchdogSeconds, "reference of seed " + std::to_string(req.seed),
                    kReferenceTimeoutExit);
    }
    try {
      pc = prepareCase(gc.model, req.bindings, req.seed, -1, true, req.referenceLimits);
    } catch (const InvalidCase& e) {
      rep.invalidReason = e.what();
      return rep;
    }
  }
  rep.valid = true;
  rep.checkMs = pc.checkMs;
  rep.referenceMs = pc.referenceMs;
  OracleResult res = runOracle(pc, req.oracle, req.workDir / "main");
  rep.counters = res.counters;
  rep.compileMs = res.compileMs;
  rep.runMs = res.runMs;
  auto tc = std::chrono::steady_clock::now();
  rep.features = caseFeatures(pc, res.counters, req.referenceLimits);
  rep.coverageMs = msSince(tc);

  auto tm = std::chrono::steady_clock::now();
  int attemptNo = 0;
  for (const Finding& f : res.findings) {
    FindingReport fr;
    fr.finding = f;
    fr.nodesBefore = gc.nodes;
    fr.reproducer = reproducerLine(req);
    OracleConfig oc = configFor(f, req.oracle);
    int binding = f.binding;
    // The same symptom on the finding's variant, and not on the control.
    auto failsLike = [&](const PreparedCase& c) {
      fs::path w = req.workDir / ("min_" + std::to_string(attemptNo++));
      OracleResult r = runOracle(c, oc, w);
      std::error_code ec;
      fs::remove_all(w, ec);
      std::string control =
          oc.variants.size() > 1 && f.symptom != "variant-disagreement" ? oc.variants[0].text() : std::string();
      bool seen = false, inControl = false;
      for (const auto& g : r.findings) {
        seen |= g.symptom == f.symptom && g.variant == f.variant;
        inControl |= !control.empty() && g.symptom == f.symptom && g.variant == control;
      }
      return seen && !inControl;
    };
    auto stillFails = [&](const onnx::ModelProto& candidate) {
      try {
        return failsLike(prepareCase(candidate, req.bindings, req.seed, binding, true, req.referenceLimits));
      } catch (const InvalidCase&) {
      }
      return false;
    };
    onnx::ModelProto small = gc.model;
    if (req.minimize) {
      MinimizeStats st;
      small = minimize(gc.model, stillFails, req.minimizeTries, &st);
      fr.nodesAfter = st.nodesAfter;
    } else {
      fr.nodesAfter = gc.nodes;
    }
    // Then the dims and the binding: from the failing binding of the reduced graph.
    const int dataIndex = binding >= 0 ? binding : 0;
    std::optional<onnxio::DimBinding> dims;
    try {
      dims = prepareCase(small, req.bindings, req.seed, dataIndex, true, req.referenceLimits).bindings.at(0).binding;
    } catch (const InvalidCase&) {
    }
    if (dims) {
      fr.elementsBefore = fr.elementsAfter = inputElements(small, *dims);
      if (req.minimize && req.shrinkTries > 0) {
        ShrinkStats ss;
        small = shrinkDims(
            small, *dims,
            [&](const onnx::ModelProto& m, const onnxio::DimBinding& b) {
              try {
                return failsLike(prepareCaseOn(m, b, req.seed, dataIndex, true, req.referenceLimits));
              } catch (const InvalidCase&) {
              }
              return false;
            },
            req.shrinkTries, &ss);
        fr.elementsAfter = ss.elementsAfter;
      }
      fr.binding = describeBinding(*dims);
    }
    // The reduced case on its (shrunk) binding.
    auto reduced = [&]() {
      return dims ? prepareCaseOn(small, *dims, req.seed, dataIndex, true, req.referenceLimits)
                  : prepareCase(small, req.bindings, req.seed, dataIndex, true, req.referenceLimits);
    };
    std::set<std::string> ops;
    for (const auto& n : small.graph().node())
      ops.insert(n.op_type());
    fr.ops.assign(ops.begin(), ops.end());
    fr.pass = "unattributed";
    fr.minimizedDetail = f.detail;
    std::optional<PreparedCase> minimizedCase;
    try {
      minimizedCase = reduced();
      const PreparedCase& one = *minimizedCase;
      auto tb = std::chrono::steady_clock::now();
      // The bucket needs the failure as the minimized case shows it (which node, which message).
      fs::path w = req.workDir / ("min_" + std::to_string(attemptNo++));
      OracleResult again = runOracle(one, oc, w);
      std::error_code ec;
      fs::remove_all(w, ec);
      for (const auto& g : again.findings)
        if (g.symptom == f.symptom && g.variant == f.variant) {
          fr.minimizedDetail = g.detail;
          break;
        }
      rep.bucketMs += msSince(tb);
      fr.pass = attributePass(one, f, req, attemptNo);
    } catch (const InvalidCase&) {
    }
    std::string opList;
    for (const auto& o : fr.ops)
      opList += (opList.empty() ? "" : ",") + o;
    fr.signature = f.symptom + "|" + opList + "|" + fr.pass;
    fr.signatureHash = fnv1aHex(fr.signature);
    auto tk = std::chrono::steady_clock::now();
    BucketKey key = makeBucketKey(f.symptom, fr.pass, small, fr.minimizedDetail);
    // Key on the first node whose output differs, not on the later op that trapped on it. The
    // trace only picks the key: a trace that fails keeps the key above and says why.
    if (traceableSymptom(f.symptom)) {
      OriginTrace trace;
      if (minimizedCase)
        trace = traceOrigin(*minimizedCase, oc, f.variant, req.workDir / ("trace_" + std::to_string(attemptNo++)),
                            req.referenceLimits);
      else
        trace.detail = "the minimized case did not prepare";
      if (trace.result == OriginTrace::Result::Clean && f.symptom != "run-crash" && small.graph().node_size() > 0) {
        // No cut fails, the whole graph does (its declared outputs): it is the last cut.
        const auto& last = small.graph().node(small.graph().node_size() - 1);
        trace.result = f.symptom == "run-trap" ? OriginTrace::Result::Trap : OriginTrace::Result::Difference;
        trace.node = "the whole graph, last " + (last.name().empty() ? last.op_type() : last.name());
        trace.op = f.symptom == "run-trap" ? last.op_type() : key.origin;
        trace.kind = f.symptom;
        trace.detail = fr.minimizedDetail;
      }
      key = tracedBucketKey(key, trace);
      fr.originTrace = trace.note();
      fr.minimizedDetail += " [" + fr.originTrace + "]";
    }
    fr.origin = key.origin;
    fr.bucket = key.text();
    fr.bucketHash = key.hash();
    fr.graphText = graphText(small);
    rep.bucketMs += msSince(tk);
    if (!req.corpusOut.empty()) {
      try {
        PreparedCase one = reduced();
        fs::path dir = req.corpusOut / (fr.signatureHash + "-" + std::to_string(req.seed));
        writeCase(dir, one, fr, req);
        fr.caseDir = dir.string();
      } catch (const std::exception& e) {
        fr.caseDir = "";
        fr.finding.detail += " (case not written: " + std::string(e.what()) + ")";
      }
    }
    rep.findings.push_back(std::move(fr));
  }
  rep.minimizeMs = msSince(tm);
  return rep;
}

nlohmann::json toJson(const CaseReport& r) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : r.findings)
    findings.push_back({{"symptom", f.finding.symptom},
                        {"detail", f.finding.detail},
                        {"variant", f.finding.variant},
                        {"binding", f.finding.binding},
                        {"binding_text", f.finding.bindingText},
                        {"signature", f.signature},
                        {"signature_hash", f.signatureHash},
                        {"ops", f.ops},
                        {"pass", f.pass},
                        {"nodes_before", f.nodesBefore},
                        {"nodes_after", f.nodesAfter},
                        {"elements_before", f.elementsBefore},
                        {"elements_after", f.elementsAfter},
                        {"binding_shrunk", f.binding},
                        {"case_dir", f.caseDir},
                        {"reproducer", f.reproducer},
                        {"bucket", f.bucket},
                        {"bucket_hash", f.bucketHash},
                        {"origin", f.origin},
                        {"minimized_detail", f.minimizedDetail},
                        {"origin_trace", f.originTrace},
                        {"graph_text", f.graphText}});
  return {{"seed", r.seed},
          {"generator", kGeneratorVersion},
          {"valid", r.valid},
          {"invalid_reason", r.invalidReason},
          {"nodes", r.nodes},
          {"op_counts", r.opCounts},
          {"counters", r.counters},
          {"features", r.features},
          {"findings", findings},
          {"ms",
           {{"generate", r.generateMs},
            {"check", r.checkMs},
            {"reference", r.referenceMs},
            {"compile", r.compileMs},
            {"run", r.runMs},
            {"minimize", r.minimizeMs},
            {"bucket", r.bucketMs},
            {"coverage", r.coverageMs}}}};
}

CaseReport caseReportFromJson(const nlohmann::json& j) {
  CaseReport r;
  r.seed = j.at("seed").get<uint64_t>();
  r.valid = j.at("valid").get<bool>();
  r.invalidReason = j.value("invalid_reason", std::string());
  r.nodes = j.value("nodes", 0);
  r.opCounts = j.value("op_counts", std::map<std::string, int>{});
  r.counters = j.value("counters", std::map<std::string, uint64_t>{});
  r.features = j.value("features", std::set<std::string>{});
  for (const auto& f : j.at("findings")) {
    FindingReport fr;
    fr.finding = {f.at("symptom"), f.at("detail"), f.at("variant"), f.at("binding"), f.at("binding_text")};
    fr.signature = f.at("signature");
    fr.signatureHash = f.at("signature_hash");
    fr.ops = f.at("ops").get<std::vector<std::string>>();
    fr.pass = f.at("pass");
    fr.nodesBefore = f.at("nodes_before");
    fr.nodesAfter = f.at("nodes_after");
    fr.elementsBefore = f.value("elements_before", int64_t{0});
    fr.elementsAfter = f.value("elements_after", int64_t{0});
    fr.binding = f.value("binding_shrunk", std::string());
    fr.caseDir = f.at("case_dir");
    fr.reproducer = f.at("reproducer");
    fr.bucket = f.value("bucket", std::string());
    fr.bucketHash = f.value("bucket_hash", std::string());
    fr.origin = f.value("origin", std::string());
    fr.minimizedDetail = f.value("minimized_detail", std::string());
    fr.originTrace = f.value("origin_trace", std::string());
    fr.graphText = f.value("graph_text", std::string());
    r.findings.push_back(std::move(fr));
  }
  const auto& ms = j.at("ms");
  r.generateMs = ms.value("generate", 0.0);
  r.checkMs = ms.value("check", 0.0);
  r.referenceMs = ms.value("reference", 0.0);
  r.compileMs = ms.value("compile", 0.0);
  r.runMs = ms.value("run", 0.0);
  r.minimizeMs = ms.value("minimize", 0.0);
  r.bucketMs = ms.value("bucket", 0.0);
  r.coverageMs = ms.value("coverage", 0.0);
  return r;
}

} // namespace dynqual::fuzz
