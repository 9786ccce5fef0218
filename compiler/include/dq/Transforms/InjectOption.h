//===- InjectOption.h - the `inject=` option of a pass ---------*- C++ -*-===//
//
// Every pass that owns an inject knob (docs/fuzz/knobs.md) has a string option `inject`; this
// checks it against the knobs that pass owns.
//
//===----------------------------------------------------------------------===//
#ifndef DQ_TRANSFORMS_INJECTOPTION_H
#define DQ_TRANSFORMS_INJECTOPTION_H

#include "dq/Pipeline/InjectKnobs.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::dq {

/// Parses the `inject` option `value` of pass `pass`: "" is no knob; a knob in `owned` is
/// returned. Anything else (an unknown spelling, or a knob another pass owns) emits one error on
/// `op` naming the pass and listing the knobs it owns, and fails.
inline FailureOr<std::optional<::dq::InjectKnob>> parseInjectOption(Operation *op, StringRef pass, StringRef value,
                                                                    ArrayRef<::dq::InjectKnob> owned) {
  if (value.empty()) return std::optional<::dq::InjectKnob>();
  std::optional<::dq::InjectKnob> knob = ::dq::parseInjectKnob(std::string_view(value.data(), value.size()));
  if (knob && llvm::is_contained(owned, *knob)) return knob;
  std::string list;
  for (::dq::InjectKnob k : owned)
    list += (list.empty() ? "" : ", ") + std::string(::dq::injectKnobName(k));
  op->emitError() << pass << ": " << (knob ? "inject knob '" : "unknown inject knob '") << value
                  << (knob ? "' is not owned by this pass" : "'") << " (this pass owns: " << list
                  << "; every knob: docs/fuzz/knobs.md)";
  return failure();
}

} // namespace mlir::dq

#endif // DQ_TRANSFORMS_INJECTOPTION_H
