// sim device memory model: three spaces, per-byte state, counted transfers.
#include "dq/runtime/SimDevice.h"

#include "KernelContract.h"
#include "SimKernels.h"
#include "dq/runtime/Error.h"
#include "dq/runtime/HostTensor.h"

#include <algorithm>
#include <cstring>

namespace dq::rt {
namespace {

using kernel::bufferName;
using kernel::spaceName;

} // namespace

SimDevice::Allocation &SimDevice::live(BufferHandle buffer, const char *what) {
  return const_cast<Allocation &>(static_cast<const SimDevice *>(this)->live(buffer, what));
}

const SimDevice::Allocation &SimDevice::live(BufferHandle buffer, const char *what) const {
  auto it = allocations_.find(buffer);
  if (it == allocations_.end()) throw RuntimeError(std::string(what) + ": unknown " + bufferName(buffer));
  if (it->second.freed)
    throw RuntimeError(std::string("use after free: ") + what + " touches " + bufferName(buffer) + " (" +
                       spaceName(it->second.space) + ", " + std::to_string(it->second.size) +
                       " bytes), which was freed");
  return it->second;
}

void SimDevice::checkRange(const Allocation &a, BufferHandle buffer, uint64_t offset, uint64_t bytes,
                           const char *what) const {
  kernel::checkByteRange(a.size, buffer, offset, bytes, what);
}

void SimDevice::checkReadable(const Allocation &a, BufferHandle buffer, uint64_t offset, uint64_t bytes,
                              const char *what) const {
  for (uint64_t i = offset; i < offset + bytes; ++i) {
    if (a.state[i] == kWritten) continue;
    throw RuntimeError(std::string(a.state[i] == kDead ? "use after free: " : "read of never-written memory: ") + what +
                       " reads byte " + std::to_string(i) + " of " + bufferName(buffer) +
                       (a.state[i] == kDead ? ", which lies in a deallocated region" : ", which was never written"));
  }
}

void SimDevice::markWritten(Allocation &a, uint64_t offset, uint64_t bytes) {
  for (uint64_t i = offset; i < offset + bytes; ++i) {
    if (a.state[i] == kDead)
      throw RuntimeError("use after free: write to byte " + std::to_string(i) + " of a deallocated region");
  }
  std::fill(a.state.begin() + static_cast<long>(offset), a.state.begin() + static_cast<long>(offset + bytes), kWritten);
}

void SimDevice::countTransfer(MemSpace dst, MemSpace src, uint64_t bytes) {
  kernel::countTransfer(counters_, dst, src, bytes);
}

void SimDevice::checkDeviceVisible(BufferHandle buffer, const char *what) const {
  kernel::checkDeviceVisible(live(buffer, what).space, buffer, what);
}

void SimDevice::markDeviceWrite(BufferHandle buffer, Allocation &a, uint64_t begin, uint64_t end) {
  if (a.space == MemSpace::Device || begin >= end) return;
  if (a.pending.empty()) pendingBuffers_.push_back(buffer);
  a.pending.emplace_back(begin, end);
}

void SimDevice::markDeviceWrite(const BufferView &v) {
  uint64_t begin = 0, end = 0;
  if (kernel::viewByteRange(v, begin, end)) markDeviceWrite(v.buffer, live(v.buffer, "device write"), begin, end);
}

void SimDevice::synchronize() {
  ++counters_.syncs;
  counters_.modelledDeviceNs += timeModel_.synchronizeNs();
  for (BufferHandle h : pendingBuffers_) {
    auto it = allocations_.find(h);
    if (it != allocations_.end()) it->second.pending.clear();
  }
  pendingBuffers_.clear();
}

BufferHandle SimDevice::allocate(MemSpace space, uint64_t bytes, AllocPurpose purpose) {
  if (static_cast<uint8_t>(space) > 2)
    throw RuntimeError("allocate: unknown memory space " + std::to_string(static_cast<int>(space)));
  if (bytes > (uint64_t{1} << 40))
    throw RuntimeError("allocate: " + std::to_string(bytes) + " bytes exceeds the sim limit of 1 TiB");
  BufferHandle h = nextHandle_++;
  Allocation &a = allocations_[h];
  a.space = space;
  a.size = bytes;
  a.data.assign(bytes, 0xA5); // a recognisable pattern; reads are refused anyway
  a.state.assign(bytes, kUnwritten);
  kernel::countAllocation(counters_, liveDeviceBytes_, space, bytes, purpose);
  return h;
}

void SimDevice::free(BufferHandle buffer) {
  auto it = allocations_.find(buffer);
  if (it == allocations_.end()) throw RuntimeError("free: unknown " + bufferName(buffer));
  Allocation &a = it->second;
  if (a.freed) throw RuntimeError("double free of " + bufferName(buffer));
  a.freed = true;
  kernel::countFree(liveDeviceBytes_, a.space, a.size);
  a.data = {};
  a.state = {};
}

void SimDevice::poison(BufferHandle buffer, uint64_t offset, uint64_t bytes) {
  Allocation &a = live(buffer, "poison");
  checkRange(a, buffer, offset, bytes, "poison");
  std::fill(a.state.begin() + static_cast<long>(offset), a.state.begin() + static_cast<long>(offset + bytes), kDead);
}

void SimDevice::discard(BufferHandle buffer, uint64_t offset, uint64_t bytes) {
  Allocation &a = live(buffer, "discard");
  checkRange(a, buffer, offset, bytes, "discard");
  std::fill(a.state.begin() + static_cast<long>(offset), a.state.begin() + static_cast<long>(offset + bytes),
            kUnwritten);
}

uint64_t SimDevice::bufferBytes(BufferHandle buffer) const { return live(buffer, "bufferBytes").size; }
MemSpace SimDevice::bufferSpace(BufferHandle buffer) const { return live(buffer, "bufferSpace").space; }

void SimDevice::upload(BufferHandle dst, uint64_t dstOffset, const void *src, uint64_t bytes) {
  Allocation &a = live(dst, "upload");
  checkRange(a, dst, dstOffset, bytes, "upload");
  markWritten(a, dstOffset, bytes);
  if (bytes) std::memcpy(a.data.data() + dstOffset, src, bytes);
  countTransfer(a.space, MemSpace::Host, bytes);
  counters_.modelledDeviceNs += timeModel_.hostTransferNs(a.space, bytes);
}

void SimDevice::download(void *dst, BufferHandle src, uint64_t srcOffset, uint64_t bytes) {
  const Allocation &a = live(src, "download");
  checkRange(a, src, srcOffset, bytes, "download");
  checkReadable(a, src, srcOffset, bytes, "download");
  if (bytes) std::memcpy(dst, a.data.data() + srcOffset, bytes);
  countTransfer(MemSpace::Host, a.space, bytes);
  counters_.modelledDeviceNs += timeModel_.hostTransferNs(a.space, bytes);
}

void SimDevice::memcpy(BufferHandle dst, uint64_t dstOffset, BufferHandle src, uint64_t srcOffset, uint64_t bytes) {
  const Allocation &s = live(src, "memcpy source");
  Allocation &d = live(dst, "memcpy destination");
  checkRange(s, src, srcOffset, bytes, "memcpy source");
  checkRange(d, dst, dstOffset, bytes, "memcpy destination");
  checkReadable(s, src, srcOffset, bytes, "memcpy source");
  markWritten(d, dstOffset, bytes);
  if (bytes) std::memmove(d.data.data() + dstOffset, s.data.data() + srcOffset, bytes);
  markDeviceWrite(dst, d, dstOffset, dstOffset + bytes);
  ++counters_.memcpyCopies;
  countTransfer(d.space, s.space, bytes);
  counters_.modelledDeviceNs += timeModel_.copyNs(d.space, s.space, bytes);
}

void SimDevice::copy2D(BufferHandle dst, uint64_t dstOffset, uint64_t dstPitch, BufferHandle src, uint64_t srcOffset,
                       uint64_t srcPitch, uint64_t rowBytes, uint64_t rows) {
  if ((rows > 1 && (dstPitch < rowBytes || srcPitch < rowBytes)))
    throw RuntimeError("copy2d: pitches " + std::to_string(srcPitch) + " -> " + std::to_string(dstPitch) +
                       " are smaller than the " + std::to_string(rowBytes) + "-byte rows");
  const Allocation &s = live(src, "copy2d source");
  Allocation &d = live(dst, "copy2d destination");
  if (rows > 0) {
    checkRange(s, src, srcOffset, (rows - 1) * srcPitch + rowBytes, "copy2d source");
    checkRange(d, dst, dstOffset, (rows - 1) * dstPitch + rowBytes, "copy2d destination");
  }
  for (uint64_t r = 0; r < rows; ++r) {
    checkReadable(s, src, srcOffset + r * srcPitch, rowBytes, "copy2d source");
    markWritten(d, dstOffset + r * dstPitch, rowBytes);
    if (rowBytes)
      std::memmove(d.data.data() + dstOffset + r * dstPitch, s.data.data() + srcOffset + r * srcPitch, rowBytes);
  }
  if (rows > 0) markDeviceWrite(dst, d, dstOffset, dstOffset + (rows - 1) * dstPitch + rowBytes);
  ++counters_.copy2dCopies;
  countTransfer(d.space, s.space, rows * rowBytes);
  counters_.modelledDeviceNs += timeModel_.copyNs(d.space, s.space, rows * rowBytes);
}

namespace {

// Resolves a view to a checked kernel operand: the whole element range must lie inside the
// allocation.
sim::Operand makeOperand(SimDevice::Allocation &a, const BufferView &v, const std::string &label) {
  sim::Operand o;
  o.label = label + " (" + bufferName(v.buffer) + ")";
  if (dtypeSize(v.dtype) == 0) throw RuntimeError(o.label + ": unknown dtype");
  if (v.sizes.size() != v.strides.size())
    throw RuntimeError(o.label + ": " + std::to_string(v.sizes.size()) + " sizes but " +
                       std::to_string(v.strides.size()) + " strides");
  for (int64_t s : v.sizes)
    if (s < 0) throw RuntimeError(o.label + ": negative size in " + formatDims(v.sizes));
  o.data = a.data.data();
  o.state = a.state.data();
  o.dtype = v.dtype;
  o.elementSize = dtypeSize(v.dtype);
  o.offset = v.offset;
  o.sizes = v.sizes;
  o.strides = v.strides;
  auto [lo, hi] = v.elementRange();
  const int64_t capacity = static_cast<int64_t>(a.size / o.elementSize);
  if (lo <= hi && (lo < 0 || hi >= capacity))
    throw RuntimeError("out of bounds: " + o.label + " with offset " + std::to_string(v.offset) + ", sizes " +
                       formatDims(v.sizes) + ", strides " + formatDims(v.strides) + " touches elements [" +
                       std::to_string(lo) + ", " + std::to_string(hi) + "] of an allocation holding " +
                       std::to_string(capacity) + " " + dtypeName(v.dtype) + " elements");
  return o;
}

uint64_t viewBytes(const BufferView &v) {
  int64_t n = 1;
  for (int64_t s : v.sizes)
    n *= s;
  return static_cast<uint64_t>(n) * dtypeSize(v.dtype);
}

} // namespace

void SimDevice::copyStrided(const BufferView &dst, const BufferView &src) {
  checkDeviceVisible(src.buffer, "strided copy source");
  checkDeviceVisible(dst.buffer, "strided copy destination");
  Allocation &s = live(src.buffer, "strided copy source");
  Allocation &d = live(dst.buffer, "strided copy destination");
  sim::Operand so = makeOperand(s, src, "strided copy source");
  sim::Operand dO = makeOperand(d, dst, "strided copy destination");
  sim::stridedCopy(dO, so);
  markDeviceWrite(dst);
  ++counters_.stridedCopies;
  countTransfer(d.space, s.space, viewBytes(dst));
  counters_.modelledDeviceNs += timeModel_.stridedCopyNs(d.space, s.space, viewBytes(dst));
}

void SimDevice::launch(const std::string &kernel, const std::vector<BufferView> &ins,
                       const std::vector<BufferView> &outs, const KernelArgs &args) {
  if (!sim::hasKernel(kernel)) throw RuntimeError("unsupported: kernel '" + kernel + "' on sim");
  std::vector<sim::Operand> inOps, outOps;
  for (size_t i = 0; i < ins.size(); ++i) {
    std::string label = "in " + std::to_string(i);
    checkDeviceVisible(ins[i].buffer, ("kernel '" + kernel + "' " + label).c_str());
    inOps.push_back(makeOperand(live(ins[i].buffer, "kernel input"), ins[i], label));
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    std::string label = "out " + std::to_string(i);
    checkDeviceVisible(outs[i].buffer, ("kernel '" + kernel + "' " + label).c_str());
    outOps.push_back(makeOperand(live(outs[i].buffer, "kernel output"), outs[i], label));
  }
  ++counters_.kernelLaunches;
  sim::runKernel(kernel, inOps, outOps, args, precision_);
  for (const BufferView &o : outs)
    markDeviceWrite(o);
  std::vector<bool> mapped;
  for (const auto *views : {&ins, &outs})
    for (const BufferView &v : *views)
      mapped.push_back(live(v.buffer, "kernel").space == MemSpace::HostMapped);
  counters_.modelledDeviceNs += timeModel_.launchNs(kernel, ins, outs, args, mapped);
}

void SimDevice::readback(void *dst, BufferHandle src, uint64_t offset, uint64_t bytes) {
  synchronize();
  ++counters_.scalarReadbacks;
  const Allocation &a = live(src, "readback");
  checkRange(a, src, offset, bytes, "readback");
  checkReadable(a, src, offset, bytes, "readback");
  if (bytes) std::memcpy(dst, a.data.data() + offset, bytes);
  counters_.modelledDeviceNs += timeModel_.hostTransferNs(a.space, bytes);
}

void SimDevice::hostLoad(void *dst, BufferHandle src, uint64_t offset, uint64_t bytes) {
  const Allocation &a = live(src, "host load");
  kernel::checkHostAccess(a.space, src, false);
  checkRange(a, src, offset, bytes, "host load");
  checkReadable(a, src, offset, bytes, "host load");
  kernel::checkSynchronized(a.pending, src, a.space, offset, bytes);
  if (bytes) std::memcpy(dst, a.data.data() + offset, bytes);
  ++counters_.hostLoads;
}

void SimDevice::hostStore(BufferHandle dst, uint64_t offset, const void *src, uint64_t bytes) {
  Allocation &a = live(dst, "host store");
  kernel::checkHostAccess(a.space, dst, true);
  checkRange(a, dst, offset, bytes, "host store");
  markWritten(a, offset, bytes);
  if (bytes) std::memcpy(a.data.data() + offset, src, bytes);
  ++counters_.hostStores;
}

void SimDevice::resetCounters() {
  counters_ = Counters{};
  counters_.peakDeviceBytes = liveDeviceBytes_;
}

size_t SimDevice::liveAllocations() const {
  size_t n = 0;
  for (const auto &[h, a] : allocations_)
    n += a.freed ? 0 : 1;
  return n;
}

} // namespace dq::rt
