// dq-bench generate JSON -> store records (GenerationRecords.h).
#include "dynqual/store/GenerationRecords.h"

#include "dynqual/store/Fingerprint.h"

#include "dynqual/stats/Descriptive.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

using nlohmann::json;

namespace dynqual::store {

namespace {

const json& at(const json& j, const std::string& path) {
  const json* cur = &j;
  std::string rest = path;
  while (true) {
    const size_t dot = rest.find('.');
    const std::string key = rest.substr(0, dot);
    if (!cur->is_object() || !cur->contains(key))
      throw std::runtime_error("dq-bench generate JSON: missing '" + path + "'");
    cur = &cur->at(key);
    if (dot == std::string::npos)
      return *cur;
    rest = rest.substr(dot + 1);
  }
}

double number(const json& j, const std::string& path) {
  const json& v = at(j, path);
  if (v.is_null())
    return std::nan("");
  if (!v.is_number())
    throw std::runtime_error("dq-bench generate JSON: '" + path + "' must be a number or null");
  return v.get<double>();
}

std::string text(const json& v) {
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_number_integer())
    return std::to_string(v.get<int64_t>());
  if (v.is_boolean())
    return v.get<bool>() ? "true" : "false";
  return v.dump();
}

std::vector<double> samples(const json& j, const std::string& path) {
  const json& v = at(j, path);
  if (!v.is_array())
    throw std::runtime_error("dq-bench generate JSON: '" + path + "' must be an array of numbers");
  std::vector<double> out;
  for (const json& x : v) {
    if (!x.is_number() && !x.is_null())
      throw std::runtime_error("dq-bench generate JSON: '" + path + "' must be an array of numbers");
    out.push_back(x.is_null() ? std::nan("") : x.get<double>());
  }
  return out;
}

} // namespace

CaseRecord generationCase(const json& doc) {
  const std::string tool = doc.is_object() ? doc.value("tool", "") : "";
  if (tool != "dq-bench generate" && tool != "torch-eager generate" && tool != "onnxruntime generate")
    throw std::runtime_error("dq-bench generate JSON: 'tool' is not \"dq-bench generate\" (or a peer's "
                             "\"torch-eager generate\" / \"onnxruntime generate\")");
  if (doc.value("version", 0) != 1)
    throw std::runtime_error("unsupported: dq-bench generate JSON version " + text(doc.value("version", json())) +
                             "; this build reads 1");
  CaseRecord c;
  c.model.name = doc.value("model", "");
  if (c.model.name.empty())
    c.model.name = text(at(doc, "program"));
  c.model.hash = doc.value("model_hash", "");
  if (c.model.hash.empty())
    c.model.hash = sha256Hex("dq-bench-model:" + c.model.name);

  const json& p = at(doc, "params");
  const std::string promptLen = text(at(doc, "params.prompt_len")), gen = text(at(doc, "params.gen_tokens")),
                    seed = text(at(doc, "params.seed"));
  c.dataset.kind = "binding";
  c.dataset.name = "prompt_" + promptLen;
  const std::string engine = doc.value("engine", "dynqual");
  c.dataset.binding = "prompt_len=" + promptLen + " gen_tokens=" + gen + " seed=" + seed +
                      (engine == "dynqual" ? "" : " engine=" + engine);
  c.dataset.hash = sha256Hex(c.model.hash + "\n" + c.dataset.binding + "\n" + seed);
  c.status = "passed";

  for (const char* k :
       {"warmup", "reps", "prompt_len", "gen_tokens", "seed", "batch", "copy_mib", "copy_reps", "launches"})
    if (p.contains(k))
      c.params[k] = text(p.at(k));
  c.params["engine"] = engine;
  c.params["tool"] = tool;
  c.params["device"] = text(at(doc, "device"));
  c.params["gpu"] = doc.value("gpu", json("")).is_string() ? doc.value("gpu", "") : "";
  c.params["program"] = text(at(doc, "program"));
  c.params["binding"] = at(doc, "limits.binding").is_string() ? text(at(doc, "limits.binding")) : "";
  c.params["vocab"] = text(at(doc, "decoder.vocab"));
  c.params["kv_dtype"] = text(at(doc, "decoder.kv_dtype"));
  c.params["tokens_same_every_rep"] = text(at(doc, "tokens_same_every_rep"));
  std::ostringstream ids;
  const json& tokens = at(doc, "tokens");
  if (!tokens.is_array())
    throw std::runtime_error("dq-bench generate JSON: 'tokens' must be an array of ids");
  for (size_t i = 0; i < tokens.size(); ++i)
    ids << (i ? "," : "") << text(tokens[i]);
  c.params["tokens"] = ids.str();

  c.samples.push_back({"ttft_ms", "ms", samples(doc, "ttft_ms.samples")});
  c.samples.push_back({"tps", "tokens/s", samples(doc, "tps.samples")});
  if (const double host = number(doc, "peak_host_bytes"); !std::isnan(host))
    c.samples.push_back({"peak_host_bytes", "bytes", {host}});
  const std::vector<std::tuple<const char*, const char*, const char*>> single = {
      {"copy_gbps", "probes.copy_gbps", "GB/s"},
      {"memcpy_gbps", "probes.memcpy_gbps", "GB/s"},
      {"strided_copy_gbps", "probes.strided_copy_gbps", "GB/s"},
      {"launch_us", "probes.launch_us", "us"},
      {"launches_per_token", "limits.launches_per_token", "1"},
      {"weight_bytes_per_token", "limits.weight_bytes_per_token", "bytes"},
      {"bandwidth_limit_tps", "limits.bandwidth_limit_tps", "tokens/s"},
      {"launch_limit_tps", "limits.launch_limit_tps", "tokens/s"},
      {"binding_limit_tps", "limits.binding_limit_tps", "tokens/s"},
  };
  for (const auto& [metric, path, unit] : single) {
    const double v = number(doc, path);
    if (!std::isnan(v)) // not measured (a peer has no launch count): no sample, the table shows "-"
      c.samples.push_back({metric, unit, {v}});
  }
  // The ratio is computed here from the samples, not taken from the producer (a peer computes its
  // own in Python). Without a finite binding limit the document's value stands: dq-bench's 0 for
  // an unbounded limit, a peer's null (nothing measured).
  std::vector<double> tps = samples(doc, "tps.samples");
  tps.erase(std::remove_if(tps.begin(), tps.end(), [](double v) { return std::isnan(v); }), tps.end());
  const double limit = number(doc, "limits.binding_limit_tps");
  const double fraction = std::isfinite(limit) && limit > 0 ? (tps.empty() ? std::nan("") : stats::median(tps) / limit)
                                                            : number(doc, "limits.fraction_of_binding");
  if (!std::isnan(fraction))
    c.samples.push_back({"fraction_of_binding", "1", {fraction}});
  const double peak = number(doc, "peak_device_bytes");
  if (std::isfinite(peak))
    c.counters["peak_device_bytes"] = static_cast<int64_t>(peak);
  return c;
}

Machine generationMachine(const json& doc) {
  Machine m;
  const json host = doc.value("host", json::object());
  m.cpuModel = host.value("cpu_model", "unknown");
  m.cores = host.value("cores", int64_t{0});
  m.memoryBytes = host.value("memory_bytes", int64_t{0});
  m.os = host.value("os", "unknown");
  m.gpuName = doc.value("gpu", "");
  m.gpuDriver = "";
  m.fingerprint = machineFingerprint(m);
  return m;
}

} // namespace dynqual::store
