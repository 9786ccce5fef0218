//===- InjectKnobs.h - known-unsound behaviours the passes can restore -*- C++ -*-===//
//
// Each knob restores one behaviour that is known to be unsound, so the shape fuzzer can show it
// finds that bug class (docs/fuzz/knobs.md). Production compiles never set one. This header has no
// MLIR dependency so the harness and the fuzzer can name knobs without linking the compiler.
//
//===----------------------------------------------------------------------===//
#ifndef DQ_PIPELINE_INJECTKNOBS_H
#define DQ_PIPELINE_INJECTKNOBS_H

#include <array>
#include <optional>
#include <string_view>

namespace dq {

/// One known-unsound behaviour. The numbering is stable (it is stored with corpus cases).
enum class InjectKnob : int {
  ReshapeByTypeEquality = 1,        ///< a reshape is removed because two dynamic types look equal
  SliceUpperBound = 2,              ///< slice extents taken from an upper bound, no readback
  SingletonCopyHostPath = 3,        ///< copies of size-1 dims with a dynamic stride go through the host
  OutputRankCollapse = 4,           ///< an output allocated from the product of its dims (rank collapsed)
  EraseAllocBeforeViewAnalysis = 5, ///< the original allocation erased before view analysis completes
  HostScalarsAfterReuse = 6,        ///< host scalars materialized after buffer reuse
  PromoteBeforeReuse = 7,           ///< promote-strided-operands placed before reuse
  SplitDimSizeAlias = 8,            ///< one size value used for both dims of a split ([N,N] over N)
  ReadbackWithoutSync = 9,          ///< a scalar readback issued without a synchronization
  StridedViewBasePointer = 10,      ///< a strided view passed to a kernel as its base pointer
  GqaIgnoresSeqlens = 12,           ///< GroupQueryAttention treats every batch row as full length
  NBitsZeroPointPitch = 13,         ///< MatMulNBits packed zero points addressed with a floored row pitch
  RotaryLayoutSwap = 14,            ///< RotaryEmbedding interleaved and half-split swapped
};

/// Every knob with its option spelling (`inject=<name>`), in numbering order.
inline constexpr std::array<std::pair<InjectKnob, std::string_view>, 13> kInjectKnobs = {{
    {InjectKnob::ReshapeByTypeEquality, "reshape-by-type-equality"},
    {InjectKnob::SliceUpperBound, "slice-upper-bound"},
    {InjectKnob::SingletonCopyHostPath, "singleton-copy-host-path"},
    {InjectKnob::OutputRankCollapse, "output-rank-collapse"},
    {InjectKnob::EraseAllocBeforeViewAnalysis, "erase-alloc-before-view-analysis"},
    {InjectKnob::HostScalarsAfterReuse, "host-scalars-after-reuse"},
    {InjectKnob::PromoteBeforeReuse, "promote-before-reuse"},
    {InjectKnob::SplitDimSizeAlias, "split-dim-size-alias"},
    {InjectKnob::ReadbackWithoutSync, "readback-without-sync"},
    {InjectKnob::StridedViewBasePointer, "strided-view-base-pointer"},
    {InjectKnob::GqaIgnoresSeqlens, "gqa-ignores-seqlens"},
    {InjectKnob::NBitsZeroPointPitch, "nbits-zero-point-pitch"},
    {InjectKnob::RotaryLayoutSwap, "rotary-layout-swap"},
}};

/// The option spelling of `knob`.
inline std::string_view injectKnobName(InjectKnob knob) {
  for (const auto &[k, name] : kInjectKnobs)
    if (k == knob) return name;
  return "unknown";
}

/// The knob spelled `name`, or std::nullopt when no knob has that spelling.
inline std::optional<InjectKnob> parseInjectKnob(std::string_view name) {
  for (const auto &[k, n] : kInjectKnobs)
    if (n == name) return k;
  return std::nullopt;
}

} // namespace dq

#endif // DQ_PIPELINE_INJECTKNOBS_H
