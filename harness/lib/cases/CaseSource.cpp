#include "dynqual/cases/CaseSource.h"

#include "dynqual/reference/Interpreter.h"

namespace dynqual::cases {

BindingPolicy runPolicy(int extraBindings) {
  return {extraBindings, true, -1, std::nullopt};
}

BindingPolicy abPolicy() {
  return {3, false, 2, onnxio::NamedBinding{"static", "static shapes", {}}};
}

BindingPolicy fuzzPolicy(int k) {
  return {k + 1, false, k, onnxio::NamedBinding{"static", "static", {}}, 3};
}

std::vector<onnxio::NamedBinding> chooseBindings(const std::vector<onnxio::ValueSpec>& specs,
                                                 const std::vector<std::vector<int64_t>>& traced, uint64_t seed,
                                                 const BindingPolicy& policy) {
  std::vector<onnxio::NamedBinding> chosen;
  for (auto& b : onnxio::makeBindings(specs, traced, policy.count, seed)) {
    if (b.kind == "zero" && !policy.keepZero)
      continue;
    if (policy.keep >= 0 && static_cast<int>(chosen.size()) >= policy.keep)
      break;
    chosen.push_back(std::move(b));
  }
  if (policy.soloOneFrom >= 0 && static_cast<int>(chosen.size()) > policy.soloOneFrom) {
    auto solo = onnxio::soloOneBindings(specs, traced);
    for (size_t s = 0; s < solo.size() && policy.soloOneFrom + s < chosen.size(); ++s)
      chosen[static_cast<size_t>(policy.soloOneFrom) + s] = solo[(seed + s) % solo.size()];
  }
  if (chosen.empty() && policy.whenStatic)
    chosen.push_back(*policy.whenStatic);
  return chosen;
}

Admission admitBinding(const onnx::ModelProto& model, const std::vector<onnxio::NamedBinding>& candidates,
                       const std::vector<onnxio::ValueSpec>& inSpecs, const std::vector<onnxio::ValueSpec>& outSpecs,
                       const InputMaker& makeInputs) {
  Admission a;
  for (const auto& cand : candidates) {
    a.binding = cand;
    std::vector<std::vector<int64_t>> computed;
    try {
      a.inputShapes = onnxio::bindShapes(inSpecs, cand.binding);
      a.inputs = makeInputs(a.inputShapes);
      a.expected = reference::evaluate(model, a.inputs);
    } catch (const std::exception& e) {
      a.rejected = std::string("the reference rejects it: ") + e.what();
      continue;
    }
    for (const auto& t : a.expected)
      computed.push_back(t.dims());
    a.rejected = onnxio::declaredOutputContradiction(outSpecs, computed);
    if (a.rejected.empty()) {
      a.admitted = true;
      break;
    }
  }
  return a;
}

} // namespace dynqual::cases
