#include "dynqual/store/Records.h"

#include <cmath>
#include <stdexcept>

using nlohmann::json;

namespace dynqual::store {

namespace {

/// JSON has no inf/NaN: they travel as the strings "inf", "-inf" and "nan".
json number(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  return v;
}

/// Reads fields of one JSON object, naming the path of the first problem.
class Reader {
public:
  Reader(const json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object())
      fail("must be an object");
  }
  [[noreturn]] void fail(const std::string& what) const { throw std::runtime_error(path_ + ": " + what); }
  bool has(const char* k) const { return j_.contains(k) && !j_.at(k).is_null(); }
  const json& at(const char* k) const {
    if (!j_.contains(k))
      fail(std::string("missing '") + k + "'");
    return j_.at(k);
  }
  std::string str(const char* k, bool required = true) const {
    if (!required && !has(k))
      return "";
    const json& v = at(k);
    if (!v.is_string())
      fail(std::string("'") + k + "' must be a string");
    return v.get<std::string>();
  }
  int64_t integer(const char* k, bool required = true) const {
    if (!required && !has(k))
      return 0;
    const json& v = at(k);
    if (!v.is_number_integer())
      fail(std::string("'") + k + "' must be an integer");
    return v.get<int64_t>();
  }
  double real(const char* k, double dflt) const { return has(k) ? realOf(at(k), std::string("'") + k + "'") : dflt; }
  double realOf(const json& v, const std::string& what) const {
    if (v.is_number())
      return v.get<double>();
    if (v.is_string()) {
      const auto& s = v.get_ref<const std::string&>();
      if (s == "nan")
        return std::nan("");
      if (s == "inf" || s == "-inf")
        return s == "inf" ? INFINITY : -INFINITY;
    }
    fail(what + " must be a number, \"inf\", \"-inf\" or \"nan\"");
  }
  bool boolean(const char* k) const {
    if (!has(k))
      return false;
    if (!at(k).is_boolean())
      fail(std::string("'") + k + "' must be true or false");
    return at(k).get<bool>();
  }
  const json& array(const char* k) const {
    static const json empty = json::array();
    if (!has(k))
      return empty;
    if (!at(k).is_array())
      fail(std::string("'") + k + "' must be an array");
    return at(k);
  }
  std::map<std::string, std::string> strMap(const char* k) const {
    std::map<std::string, std::string> out;
    if (!has(k))
      return out;
    if (!at(k).is_object())
      fail(std::string("'") + k + "' must be an object of strings");
    for (const auto& [key, v] : at(k).items()) {
      if (!v.is_string())
        fail(std::string("'") + k + "." + key + "' must be a string");
      out[key] = v.get<std::string>();
    }
    return out;
  }
  std::string sub(const char* k) const { return path_ + "." + k; }

private:
  const json& j_;
  std::string path_;
};

json buildJson(const Build& b) {
  json arts = json::array();
  for (const auto& a : b.artifacts)
    arts.push_back({{"path", a.path}, {"sha256", a.sha256}, {"size_bytes", a.sizeBytes}});
  return {{"key", b.key},
          {"revision", b.revision},
          {"dirty", b.dirty},
          {"compiler_version", b.compilerVersion},
          {"dynqual_version", b.dynqualVersion},
          {"artifacts", arts}};
}

Build buildFrom(const json& j, const std::string& path) {
  Reader r(j, path);
  Build b;
  b.revision = r.str("revision");
  b.dirty = r.boolean("dirty");
  b.compilerVersion = r.str("compiler_version", false);
  b.dynqualVersion = r.str("dynqual_version", false);
  const json& arts = r.array("artifacts");
  for (size_t i = 0; i < arts.size(); ++i) {
    Reader a(arts[i], r.sub("artifacts") + "[" + std::to_string(i) + "]");
    b.artifacts.push_back({a.str("path"), a.str("sha256"), a.integer("size_bytes")});
  }
  b.key = r.has("key") ? r.str("key") : buildKey(b);
  return b;
}

} // namespace

nlohmann::json caseToJson(const CaseRecord& c) {
  json acc = json::array();
  for (const auto& a : c.accuracy)
    acc.push_back({{"comparison", a.comparison},
                   {"output", a.output},
                   {"verdict", a.verdict},
                   {"reason", a.reason},
                   {"dtype", a.dtype},
                   {"shape", a.shape},
                   {"elements", a.elements},
                   {"nan_inf_skipped", a.nanInfSkipped},
                   {"mismatches", a.mismatches},
                   {"l2", number(a.l2)},
                   {"rel_l2", number(a.relL2)},
                   {"max_abs", number(a.maxAbs)},
                   {"cosine", number(a.cosine)}});
  json samples = json::array();
  for (const auto& s : c.samples) {
    json vals = json::array();
    for (double v : s.values)
      vals.push_back(number(v));
    samples.push_back({{"metric", s.metric}, {"unit", s.unit}, {"values", vals}});
  }
  json ds = nullptr;
  if (!c.dataset.name.empty())
    ds = {{"name", c.dataset.name}, {"kind", c.dataset.kind}, {"binding", c.dataset.binding}, {"hash", c.dataset.hash}};
  return {{"model", {{"name", c.model.name}, {"hash", c.model.hash}}},
          {"dataset", ds},
          {"status", c.status},
          {"error", c.error},
          {"params", c.params},
          {"accuracy", acc},
          {"samples", samples},
          {"counters", c.counters}};
}

CaseRecord caseFromJson(const nlohmann::json& j, const std::string& path) {
  Reader r(j, path);
  CaseRecord c;
  Reader m(r.at("model"), r.sub("model"));
  c.model = {m.str("name"), m.str("hash")};
  if (r.has("dataset")) {
    Reader d(r.at("dataset"), r.sub("dataset"));
    c.dataset = {d.str("name"), d.str("kind", false), d.str("binding", false), d.str("hash")};
    if (c.dataset.name.empty())
      d.fail("'name' must not be empty (use null for the whole model)");
  }
  c.status = r.str("status");
  c.error = r.str("error", false);
  c.params = r.strMap("params");
  const json& acc = r.array("accuracy");
  for (size_t i = 0; i < acc.size(); ++i) {
    Reader a(acc[i], r.sub("accuracy") + "[" + std::to_string(i) + "]");
    AccuracyRow row;
    row.comparison = a.str("comparison");
    row.output = a.str("output");
    row.verdict = a.str("verdict");
    row.reason = a.str("reason", false);
    row.dtype = a.str("dtype", false);
    if (a.has("shape")) {
      const json& s = a.at("shape");
      if (!s.is_array())
        a.fail("'shape' must be an array of integers");
      for (const auto& d : s) {
        if (!d.is_number_integer())
          a.fail("'shape' must be an array of integers");
        row.shape.push_back(d.get<int64_t>());
      }
    }
    row.elements = a.integer("elements", false);
    row.nanInfSkipped = a.integer("nan_inf_skipped", false);
    row.mismatches = a.integer("mismatches", false);
    row.l2 = a.real("l2", 0);
    row.relL2 = a.real("rel_l2", 0);
    row.maxAbs = a.real("max_abs", 0);
    row.cosine = a.real("cosine", 1);
    c.accuracy.push_back(row);
  }
  const json& samples = r.array("samples");
  for (size_t i = 0; i < samples.size(); ++i) {
    std::string p = r.sub("samples") + "[" + std::to_string(i) + "]";
    Reader s(samples[i], p);
    SampleSeries ser{s.str("metric"), s.str("unit"), {}};
    const json& vals = s.array("values");
    for (const auto& v : vals)
      ser.values.push_back(s.realOf(v, "'values' element"));
    c.samples.push_back(ser);
  }
  if (r.has("counters")) {
    const json& cs = r.at("counters");
    if (!cs.is_object())
      r.fail("'counters' must be an object of integers");
    for (const auto& [k, v] : cs.items()) {
      if (!v.is_number_integer())
        r.fail("'counters." + k + "' must be an integer");
      c.counters[k] = v.get<int64_t>();
    }
  }
  return c;
}

nlohmann::json toJson(const std::vector<RunRecord>& runs) {
  json out = json::array();
  for (const auto& r : runs) {
    const Machine& m = r.machine;
    json cases = json::array();
    for (const auto& c : r.cases)
      cases.push_back(caseToJson(c));
    out.push_back({{"key", r.key},
                   {"kind", r.kind},
                   {"status", r.status},
                   {"started_at", r.startedAt},
                   {"ended_at", r.endedAt.empty() ? json(nullptr) : json(r.endedAt)},
                   {"command_line", r.commandLine},
                   {"device", r.device},
                   {"machine",
                    {{"fingerprint", m.fingerprint},
                     {"cpu_model", m.cpuModel},
                     {"cores", m.cores},
                     {"memory_bytes", m.memoryBytes},
                     {"os", m.os},
                     {"gpu_name", m.gpuName},
                     {"gpu_driver", m.gpuDriver}}},
                   {"build", r.build ? buildJson(*r.build) : json(nullptr)},
                   {"base_build", r.baseBuild ? buildJson(*r.baseBuild) : json(nullptr)},
                   {"pipeline", {{"hash", r.pipeline.hash}, {"spec", r.pipeline.spec}}},
                   {"params", r.params},
                   {"cases", cases}});
  }
  return {{"format", "dynqual-store"}, {"version", kExchangeFormatVersion}, {"runs", out}};
}

std::vector<RunRecord> runsFromJson(const nlohmann::json& doc) {
  Reader top(doc, "document");
  if (top.str("format") != "dynqual-store")
    top.fail("unsupported: format '" + top.str("format") + "'; expected 'dynqual-store'");
  int64_t version = top.integer("version");
  if (version != kExchangeFormatVersion)
    top.fail("unsupported: dynqual-store version " + std::to_string(version) + "; this build reads " +
             std::to_string(kExchangeFormatVersion));
  std::vector<RunRecord> runs;
  const json& arr = top.array("runs");
  for (size_t i = 0; i < arr.size(); ++i) {
    std::string p = "runs[" + std::to_string(i) + "]";
    Reader r(arr[i], p);
    RunRecord run;
    run.key = r.str("key");
    if (run.key.empty())
      r.fail("'key' must not be empty");
    run.kind = r.str("kind");
    run.status = r.str("status");
    if (run.status != kRunFinished && run.status != kRunUnfinished)
      r.fail("'status' must be \"finished\" or \"unfinished\"");
    run.startedAt = r.str("started_at");
    run.endedAt = r.str("ended_at", false);
    run.commandLine = r.str("command_line", false);
    run.device = r.str("device", false);
    Reader m(r.at("machine"), r.sub("machine"));
    run.machine = {"",          m.str("cpu_model"),       m.integer("cores"),        m.integer("memory_bytes"),
                   m.str("os"), m.str("gpu_name", false), m.str("gpu_driver", false)};
    run.machine.fingerprint = m.has("fingerprint") ? m.str("fingerprint") : machineFingerprint(run.machine);
    if (r.has("build"))
      run.build = buildFrom(r.at("build"), r.sub("build"));
    if (r.has("base_build"))
      run.baseBuild = buildFrom(r.at("base_build"), r.sub("base_build"));
    if (r.has("pipeline")) {
      Reader pl(r.at("pipeline"), r.sub("pipeline"));
      run.pipeline = {pl.str("hash"), pl.str("spec")};
    }
    run.params = r.strMap("params");
    const json& cases = r.array("cases");
    for (size_t k = 0; k < cases.size(); ++k)
      run.cases.push_back(caseFromJson(cases[k], r.sub("cases") + "[" + std::to_string(k) + "]"));
    runs.push_back(std::move(run));
  }
  return runs;
}

} // namespace dynqual::store
