#include "dynqual/diff/Identical.h"

#include "dq/runtime/ProgramIO.h"
#include "dynqual/store/Fingerprint.h"

#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>

namespace fs = std::filesystem;

namespace dynqual::diff {

namespace {

std::string readBytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + file.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

constexpr const char* kPrefix = "sha256.";
constexpr const char* kProgram = "program.";

} // namespace

std::string programSha256(const fs::path& dqp) {
  fs::path sidecar = dqp.string() + ".bin";
  std::string sidecarBytes = fs::exists(sidecar) ? readBytes(sidecar) : std::string();
  std::string programBytes;
  try {
    dq::rt::Program p = dq::rt::readProgram(dqp.string());
    p.compilerVersion.clear();
    auto bytes = dq::rt::serializeProgram(p, dqp.string());
    programBytes.assign(bytes.program.begin(), bytes.program.end());
  } catch (const std::exception&) {
    programBytes = readBytes(dqp); // another format version: its bytes as they are
  }
  // The length prefix keeps the two parts apart (no program/sidecar split hashes alike).
  return store::sha256Hex(std::to_string(programBytes.size()) + "\n" + programBytes + sidecarBytes);
}

std::vector<std::string> runtimeBinaries(const Measurement& m) {
  std::vector<std::string> names = {"dynqual-exec"};
  if (m.compileTime)
    names.push_back("dynqual");
  return names;
}

std::map<std::string, std::pair<std::string, std::string>> runtimeSha256(const AbOptions& o) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  if (o.base.variant.kind != exec::Variant::Kind::Dq || o.head.variant.kind != exec::Variant::Kind::Dq)
    return out;
  auto hash = [](const fs::path& f) {
    try {
      return store::sha256File(f);
    } catch (const std::exception&) {
      return std::string();
    }
  };
  for (const auto& name : runtimeBinaries(o.measure))
    out[name] = {hash(o.base.binDir / name), hash(o.head.binDir / name)};
  return out;
}

void hashPrograms(const PreparedPair& pair, ModelCheck& check) {
  auto hash = [](const std::optional<exec::PreparedModel>& pm) {
    if (!pm || pm->artifact.empty())
      return std::string();
    try {
      return programSha256(pm->artifact);
    } catch (const std::exception&) {
      return std::string();
    }
  };
  check.baseProgramSha256 = hash(pair.base);
  check.headProgramSha256 = hash(pair.head);
}

bool artifactsIdentical(const ModelCheck& check,
                        const std::map<std::string, std::pair<std::string, std::string>>& runtime) {
  if (runtime.empty() || check.baseProgramSha256.empty() || check.baseProgramSha256 != check.headProgramSha256)
    return false;
  for (const auto& [name, h] : runtime)
    if (h.first.empty() || h.first != h.second)
      return false;
  return true;
}

MetricComparison identicalComparison(const std::string& model, const std::string& metric) {
  MetricComparison c;
  c.model = model;
  c.metric = metric;
  c.unit = "ms";
  c.rounds = 0;
  c.baseMedian = c.headMedian = std::numeric_limits<double>::quiet_NaN();
  c.ratio = c.ciLow = c.ciHigh = c.eqLow = c.eqHigh = c.medianRatio = c.bootLow = c.bootHigh = 1;
  c.p = c.pAdjusted = 1;
  c.alphaUsed = 0;
  c.verdict = Verdict::Identical;
  return c;
}

std::map<std::string, std::string> hashParams(const AbResult& r) {
  std::map<std::string, std::string> out;
  for (const auto& [name, h] : r.runtimeSha256) {
    out[std::string(kPrefix) + "base." + name] = h.first;
    out[std::string(kPrefix) + "head." + name] = h.second;
  }
  for (const auto& c : r.checks) {
    if (!c.baseProgramSha256.empty())
      out[std::string(kPrefix) + "base." + kProgram + c.model] = c.baseProgramSha256;
    if (!c.headProgramSha256.empty())
      out[std::string(kPrefix) + "head." + kProgram + c.model] = c.headProgramSha256;
  }
  return out;
}

void hashesFromParams(const std::map<std::string, std::string>& params, AbResult& r) {
  for (const auto& [key, value] : params) {
    if (key.rfind(kPrefix, 0) != 0)
      continue;
    std::string rest = key.substr(std::string(kPrefix).size());
    bool base = rest.rfind("base.", 0) == 0;
    if (!base && rest.rfind("head.", 0) != 0)
      continue;
    std::string name = rest.substr(5);
    if (name.rfind(kProgram, 0) == 0) {
      std::string model = name.substr(std::string(kProgram).size());
      for (auto& c : r.checks)
        if (c.model == model)
          (base ? c.baseProgramSha256 : c.headProgramSha256) = value;
    } else {
      (base ? r.runtimeSha256[name].first : r.runtimeSha256[name].second) = value;
    }
  }
}

} // namespace dynqual::diff
