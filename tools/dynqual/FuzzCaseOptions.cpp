#include "FuzzCaseOptions.h"
#include "Commands.h"

#include "dq/Pipeline/InjectKnobList.h"
#include "dynqual/exec/Executor.h"
#include "dynqual/fuzz/Campaign.h"

#include <sys/resource.h>

namespace dynqual::cli {

std::string fuzzVariantWithKnob(const std::string& variant, const std::string& knob) {
  try {
    return fuzz::variantWithKnob(variant, knob);
  } catch (const exec::VariantError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

void checkInjectKnob(const std::string& knob) {
  if (knob.empty())
    return;
  std::vector<dq::InjectKnob> knobs;
  std::string bad;
  if (dq::parseInjectKnobs(knob, knobs, bad)) {
    if (std::string why = dq::checkKnobCombination(knobs); !why.empty())
      throw UsageError("--inject " + knob + ": " + why);
    return;
  }
  std::string names;
  for (const auto& [k, n] : dq::kInjectKnobs)
    names += (names.empty() ? "" : ", ") + std::string(n);
  throw UsageError("unknown inject knob '" + bad + "' (knobs: " + names + "; several: A,B)");
}

void limitOwnMemory(uint64_t mb) {
#if defined(__SANITIZE_ADDRESS__)
  (void)mb;
#else
  if (mb == 0)
    return;
  rlimit r{};
  r.rlim_cur = r.rlim_max = static_cast<rlim_t>(mb) * 1024 * 1024;
  setrlimit(RLIMIT_AS, &r);
#endif
}

void addReferenceLimitOptions(CLI::App* cmd, double& seconds, int64_t& elements) {
  cmd->add_option("--reference-timeout", seconds,
                  "seconds the CPU reference may take per binding (past it: an invalid case)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--reference-max-elements", elements,
                  "elements the CPU reference may hold per binding (past it: an invalid case)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

void addFuzzCaseOptions(CLI::App* cmd, FuzzCaseOpts& o) {
  cmd->add_option("--bindings", o.bindings, "shape bindings (K)")->capture_default_str();
  cmd->add_option("--variant", o.variants, "variant, repeatable (default dq:production@sim)");
  cmd->add_option("--inject", o.inject, "apply inject=KNOB to the dq:production variants");
  cmd->add_option("--oracle", o.oracle, "'ort' adds onnxruntime as a second opinion")->check(CLI::IsMember({"ort"}));
  cmd->add_option("--corpus-out", o.corpusOut, "write minimized findings here");
  cmd->add_option("--knob", o.knob, "knob recorded in meta.json (the variants carry it already)");
  cmd->add_option("--memory-mb", o.memoryMb, "address-space limit, MiB (0 = none)");
  cmd->add_option("--compile-timeout", o.compileTimeout, "seconds per compile")->capture_default_str();
  cmd->add_option("--run-timeout", o.runTimeout, "seconds per run of one binding")->capture_default_str();
  addReferenceLimitOptions(cmd, o.referenceTimeout, o.referenceMaxElements);
  cmd->add_flag("--no-minimize", o.noMinimize, "report findings as generated");
}

fuzz::CaseRequest fuzzCaseRequest(const FuzzCaseOpts& o) {
  checkInjectKnob(o.inject);
  fuzz::CaseRequest req;
  req.bindings = o.bindings;
  req.minimize = !o.noMinimize;
  req.knob = o.knob.empty() ? o.inject : o.knob;
  std::vector<std::string> variants = o.variants.empty() ? std::vector<std::string>{"dq:production@sim"} : o.variants;
  req.oracle.variants.clear();
  for (const auto& v : variants)
    req.oracle.variants.push_back(exec::parseVariant(fuzzVariantWithKnob(v, o.inject)));
  req.oracle.ortOracle = o.oracle == "ort";
  req.oracle.binDir = exec::selfBinDir();
  req.oracle.compileTimeoutSeconds = o.compileTimeout;
  req.oracle.runTimeoutSeconds = o.runTimeout;
  req.corpusOut = o.corpusOut;
  req.referenceLimits = {o.referenceMaxElements, o.referenceTimeout};
  // Each binding may take up to the reference's own limit, then one node more.
  req.referenceWatchdogSeconds = (o.bindings + 1) * o.referenceTimeout + 10;
  return req;
}

} // namespace dynqual::cli
