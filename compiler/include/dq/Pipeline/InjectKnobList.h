//===- InjectKnobList.h - several inject knobs at once ----------*- C++ -*-===//
//
// `inject=A,B`: which pass carries each knob, the list parser and the check that two knobs can be
// combined. No MLIR dependency, like InjectKnobs.h, so the harness and the fuzzer use it too.
//
//===----------------------------------------------------------------------===//
#ifndef DQ_PIPELINE_INJECTKNOBLIST_H
#define DQ_PIPELINE_INJECTKNOBLIST_H

#include "dq/Pipeline/InjectKnobs.h"

#include <string>
#include <string_view>
#include <vector>

namespace dq {

/// The pass whose `inject` option carries `knob`; the two order knobs name the pass they move
/// (a pass takes one knob at a time, so two knobs of one pass cannot be combined).
inline std::string_view injectKnobPass(InjectKnob knob) {
  switch (knob) {
  case InjectKnob::ReshapeByTypeEquality:
  case InjectKnob::SliceUpperBound:
  case InjectKnob::SplitDimSizeAlias:
  case InjectKnob::ReadbackWithoutSync:
  case InjectKnob::GqaIgnoresSeqlens:
  case InjectKnob::NBitsZeroPointPitch:
  case InjectKnob::RotaryLayoutSwap:
    return "dq-convert-onnx";
  case InjectKnob::OutputRankCollapse:
  case InjectKnob::EraseAllocBeforeViewAnalysis:
    return "dq-use-output-allocator";
  case InjectKnob::HostScalarsAfterReuse:
  case InjectKnob::PromoteBeforeReuse:
    return "dq-optimize-memrefs";
  case InjectKnob::StridedViewBasePointer:
    return "dq-promote-strided-operands";
  case InjectKnob::SingletonCopyHostPath:
    return "dq-lower-copies";
  }
  return "unknown";
}

/// Splits "A" or "A,B,..." into knobs, dropping duplicates. On an unknown spelling returns false
/// with `bad` set to it.
inline bool parseInjectKnobs(std::string_view list, std::vector<InjectKnob> &knobs, std::string &bad) {
  knobs.clear();
  size_t at = 0;
  while (true) {
    size_t comma = list.find(',', at);
    std::string_view name = list.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    std::optional<InjectKnob> k = parseInjectKnob(name);
    if (!k) {
      bad = std::string(name);
      return false;
    }
    bool seen = false;
    for (InjectKnob h : knobs)
      seen |= h == *k;
    if (!seen) knobs.push_back(*k);
    if (comma == std::string_view::npos) return true;
    at = comma + 1;
  }
}

/// "" when `knobs` can be injected together; otherwise one line saying why not: two knobs of one
/// pass (each pass takes one knob at a time) are unsupported.
inline std::string checkKnobCombination(const std::vector<InjectKnob> &knobs) {
  for (size_t i = 0; i < knobs.size(); ++i)
    for (size_t j = i + 1; j < knobs.size(); ++j)
      if (injectKnobPass(knobs[i]) == injectKnobPass(knobs[j]))
        return "unsupported: inject knobs '" + std::string(injectKnobName(knobs[i])) + "' and '" +
               std::string(injectKnobName(knobs[j])) + "' both act on " + std::string(injectKnobPass(knobs[i])) +
               ", which takes one knob at a time; combine knobs of different passes";
  return "";
}

} // namespace dq

#endif // DQ_PIPELINE_INJECTKNOBLIST_H
