// The VM's copy instructions: device transfers (Copy: memcpy, copy2d, strided) and the host
// element copy (HostCopy).
#include "Vm.h"

namespace dq::rt::vm {

// CopyKind::Copy2D as dq-lower-copies chooses it (LowerCopies.cpp): both sides split at the
// same dim k into one contiguous row (dims [k, r)) and one row index with one pitch per side
// (dims [0, k)), dims of size 1 skipped, since their stride never moves an address (a unit dim
// whose stride comes from the inner layout, or a trailing one, must not break the rows).
struct PitchedCopy {
  int64_t rows = 0, width = 0, dstPitch = 1, srcPitch = 1; // elements
};

// Dims [k, r) of `v` address one contiguous run.
static bool contiguousFrom(const BufferView &v, size_t k) {
  int64_t expect = 1;
  for (size_t i = v.sizes.size(); i-- > k;) {
    if (v.sizes[i] == 1) continue;
    if (v.strides[i] != expect) return false;
    expect *= v.sizes[i];
  }
  return true;
}

// The pitch of dims [0, k) of `v` collapsed into one row index (0 when they are all size 1), or
// nothing when they do not collapse.
static std::optional<int64_t> rowPitch(const BufferView &v, size_t k) {
  int64_t pitch = 0, expect = 0;
  for (size_t d = k; d-- > 0;) {
    if (v.sizes[d] == 1) continue;
    if (pitch == 0) {
      pitch = v.strides[d];
      expect = pitch * v.sizes[d];
    } else {
      if (v.strides[d] != expect) return std::nullopt;
      expect *= v.sizes[d];
    }
  }
  return pitch;
}

// The widest split (smallest k) that gives both sides rows at a constant positive pitch no
// shorter than the row, or nothing. An empty copy moves nothing and always qualifies.
static std::optional<PitchedCopy> pitchedCopy(const BufferView &dst, const BufferView &src) {
  const size_t r = dst.sizes.size();
  if (dst.numElements() == 0) return PitchedCopy{};
  for (size_t k = 0; k <= r; ++k) {
    if (!contiguousFrom(dst, k) || !contiguousFrom(src, k)) continue;
    std::optional<int64_t> dp = rowPitch(dst, k), sp = rowPitch(src, k);
    if (!dp || !sp) continue;
    int64_t width = 1, rows = 1;
    for (size_t i = 0; i < r; ++i)
      (i < k ? rows : width) *= dst.sizes[i];
    PitchedCopy c{rows, width, rows == 1 ? width : *dp, rows == 1 ? width : *sp};
    if (c.dstPitch >= width && c.srcPitch >= width && c.dstPitch > 0 && c.srcPitch > 0) return c;
  }
  return std::nullopt;
}

void Vm::copy(const Instr &in) {
  const BufferView dst = breg(in.b[0]).view, src = breg(in.b[1]).view;
  if (dst.dtype != src.dtype || dst.sizes != src.sizes)
    throw RuntimeError("copy from " + dtypeName(src.dtype) + formatDims(src.sizes) + " to " + dtypeName(dst.dtype) +
                       formatDims(dst.sizes) + ": sizes and dtype must match");
  // Nothing to move. An empty view's offset may lie past its buffer's end (an empty slice at the
  // end), which a device call would check as an access.
  if (dst.numElements() == 0) return;
  const uint64_t es = dtypeSize(dst.dtype);
  switch (static_cast<CopyKind>(in.imm[0])) {
  case CopyKind::Memcpy:
    if (!dst.isContiguous() || !src.isContiguous())
      throw RuntimeError("copy kind memcpy needs both views contiguous; source strides " + formatDims(src.strides) +
                         ", destination strides " + formatDims(dst.strides) + " for sizes " + formatDims(dst.sizes) +
                         " (use copy2d or strided)");
    dev_.memcpy(dst.buffer, static_cast<uint64_t>(dst.offset) * es, src.buffer, static_cast<uint64_t>(src.offset) * es,
                static_cast<uint64_t>(dst.numElements()) * es);
    return;
  case CopyKind::Copy2D: {
    std::optional<PitchedCopy> c = pitchedCopy(dst, src);
    if (!c) {
      // Name the side that has no row split on its own (the source when both have one, but none
      // in common).
      bool srcAlone = pitchedCopy(src, src).has_value(), dstAlone = pitchedCopy(dst, dst).has_value();
      bool blameSrc = !srcAlone || dstAlone;
      throw RuntimeError(std::string("copy kind copy2d needs contiguous rows at a constant pitch; ") +
                         (blameSrc ? "source" : "destination") + " strides " +
                         formatDims(blameSrc ? src.strides : dst.strides) + " for sizes " + formatDims(dst.sizes) +
                         " do not qualify (use strided)");
    }
    dev_.copy2D(dst.buffer, static_cast<uint64_t>(dst.offset) * es, static_cast<uint64_t>(c->dstPitch) * es, src.buffer,
                static_cast<uint64_t>(src.offset) * es, static_cast<uint64_t>(c->srcPitch) * es,
                static_cast<uint64_t>(c->width) * es, static_cast<uint64_t>(c->rows));
    return;
  }
  case CopyKind::Strided:
    dev_.copyStrided(dst, src);
    return;
  }
  throw RuntimeError("unknown copy kind " + std::to_string(in.imm[0]));
}

void Vm::hostCopy(const Instr &in) {
  const BufferView dst = breg(in.b[0]).view, src = breg(in.b[1]).view;
  if (dst.dtype != src.dtype || dst.sizes != src.sizes)
    throw RuntimeError("host copy from " + dtypeName(src.dtype) + formatDims(src.sizes) + " to " +
                       dtypeName(dst.dtype) + formatDims(dst.sizes) + ": sizes and dtype must match");
  if (dev_.bufferSpace(src.buffer) == MemSpace::Device || dev_.bufferSpace(dst.buffer) == MemSpace::Device)
    throw RuntimeError(std::string("host memcpy touches device memory (buffer #") +
                       std::to_string(dev_.bufferSpace(src.buffer) == MemSpace::Device ? src.buffer : dst.buffer) +
                       "); device data must move with a Copy transfer");
  const size_t es = dtypeSize(dst.dtype);
  std::vector<int64_t> idx(dst.sizes.size(), 0);
  uint8_t bytes[8];
  for (int64_t k = 0, n = dst.numElements(); k < n; ++k) {
    dev_.hostLoad(bytes, src.buffer, elementByteOffset(src, idx), es);
    dev_.hostStore(dst.buffer, elementByteOffset(dst, idx), bytes, es);
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < dst.sizes[d]) break;
      idx[d] = 0;
    }
  }
}

} // namespace dq::rt::vm
