// `hip` device: memory in three spaces on a GPU, one stream, counted transfers and
// synchronization. Error messages and counters follow SimDevice (docs/devices.md).
#include "dq/runtime/hip/HipDevice.h"

#include "HipDeviceImpl.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace dq::rt::hipdev {
HipDevice::HipDevice() {
  std::string why;
  if (!hipDeviceAvailable(&why)) throw RuntimeError("hip: " + why);
  check(hipSetDevice(0), "hipSetDevice");
  check(hipStreamCreateWithFlags(&stream_, hipStreamNonBlocking), "hipStreamCreateWithFlags");
  // Keep freed stream-ordered memory cached: repeated runs then allocate without the driver.
  hipMemPool_t pool;
  if (hipDeviceGetDefaultMemPool(&pool, 0) == hipSuccess) {
    uint64_t keep = ~uint64_t{0};
    (void)hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &keep);
  }
  check(hipHostMalloc(reinterpret_cast<void **>(&errHost_), sizeof(hipk::DevError), hipHostMallocMapped),
        "hipHostMalloc(error word)");
  std::memset(errHost_, 0, sizeof(hipk::DevError));
  check(hipHostGetDevicePointer(reinterpret_cast<void **>(&errDev_), errHost_, 0), "hipHostGetDevicePointer");
  if (hipblasCreate(&blas_) != HIPBLAS_STATUS_SUCCESS) throw RuntimeError("hip: hipblasCreate failed");
  hipblasSetStream(blas_, stream_);
  dqHipblasStrictFp32(blas_);
  if (HipProfile::requested()) profile_ = std::make_unique<HipProfile>(stream_);
  hipDeviceProp_t prop;
  if (hipGetDeviceProperties(&prop, 0) == hipSuccess) multiprocessors_ = prop.multiProcessorCount;
  const char *gemv = std::getenv("DQ_HIP_GEMV");
  gemvEnabled_ = gemv && std::string(gemv) == "on";
  const char *small = std::getenv("DQ_HIP_SMALL_MATMUL");
  smallMatmul_ = small && std::string(small) == "on";
}

HipDevice::~HipDevice() {
  profile_.reset();
  (void)hipStreamSynchronize(stream_);
  for (auto &[h, a] : allocations_)
    release(a);
  dropFreeBlocks();
  if (gemvPartials_) (void)hipFreeAsync(gemvPartials_, stream_);
  if (gemvCounters_) (void)hipFreeAsync(gemvCounters_, stream_);
  (void)hipStreamSynchronize(stream_);
  hipblasDestroy(blas_);
  (void)hipHostFree(errHost_);
  (void)hipStreamDestroy(stream_);
}

BufferHandle HipDevice::allocate(MemSpace space, uint64_t bytes, AllocPurpose purpose) {
  if (static_cast<uint8_t>(space) > 2)
    throw RuntimeError("allocate: unknown memory space " + std::to_string(static_cast<int>(space)));
  HipProfile::Scope timed(profile_.get(), "(allocate)", false);
  Allocation a;
  a.space = space;
  a.size = bytes;
  if (bytes > 0) {
    if (space == MemSpace::Device) {
      hipError_t e = hipSuccess;
      a.block = blockBytes(bytes);
      if (!reuseBlock(a.block, a.ptr)) {
        e = hipMallocAsync(reinterpret_cast<void **>(&a.ptr), a.block, stream_);
        if (e != hipSuccess && freeBlockBytes_ > 0) {
          (void)hipGetLastError();
          dropFreeBlocks();
          e = hipMallocAsync(reinterpret_cast<void **>(&a.ptr), a.block, stream_);
        }
      }
      if (e != hipSuccess)
        throw RuntimeError("allocate: " + std::to_string(bytes) + " bytes of device memory: " + hipGetErrorString(e));
      pending_ = true;
    } else if (space == MemSpace::Host) {
      a.ptr = static_cast<char *>(std::malloc(bytes));
      if (!a.ptr) throw RuntimeError("allocate: " + std::to_string(bytes) + " bytes of host memory failed");
    } else {
      check(hipHostMalloc(reinterpret_cast<void **>(&a.ptr), bytes, hipHostMallocMapped),
            "hipHostMalloc of " + std::to_string(bytes) + " bytes");
      check(hipHostGetDevicePointer(reinterpret_cast<void **>(&a.devPtr), a.ptr, 0), "hipHostGetDevicePointer");
    }
  }
  if (space != MemSpace::HostMapped) a.devPtr = a.ptr;
  BufferHandle h = nextHandle_++;
  allocations_[h] = a;
  kernel::countAllocation(counters_, liveDeviceBytes_, space, bytes, purpose);
  return h;
}

void HipDevice::free(BufferHandle buffer) {
  HipProfile::Scope timed(profile_.get(), "(free)", false);
  auto it = allocations_.find(buffer);
  if (it == allocations_.end()) {
    if (buffer > 0 && buffer < nextHandle_) throw RuntimeError("double free of " + bufferName(buffer));
    throw RuntimeError("free: unknown " + bufferName(buffer));
  }
  Allocation &a = it->second;
  kernel::countFree(liveDeviceBytes_, a.space, a.size);
  release(a);
  allocations_.erase(it);
}

void HipDevice::poison(BufferHandle buffer, uint64_t offset, uint64_t bytes) {
  checkRange(live(buffer, "poison"), buffer, offset, bytes, "poison");
}

void HipDevice::discard(BufferHandle buffer, uint64_t offset, uint64_t bytes) {
  checkRange(live(buffer, "discard"), buffer, offset, bytes, "discard");
}

void HipDevice::upload(BufferHandle dst, uint64_t dstOffset, const void *src, uint64_t bytes) {
  const Allocation &a = live(dst, "upload");
  checkRange(a, dst, dstOffset, bytes, "upload");
  if (bytes) {
    if (a.space == MemSpace::Device) {
      check(hipMemcpyAsync(a.ptr + dstOffset, src, bytes, hipMemcpyHostToDevice, stream_), "upload");
      pending_ = true;
    } else {
      waitForHost();
      std::memcpy(a.ptr + dstOffset, src, bytes);
    }
  }
  countTransfer(a.space, MemSpace::Host, bytes);
}

void HipDevice::download(void *dst, BufferHandle src, uint64_t srcOffset, uint64_t bytes) {
  const Allocation &a = live(src, "download");
  checkRange(a, src, srcOffset, bytes, "download");
  if (bytes) {
    if (a.space == MemSpace::Device) {
      check(hipMemcpyAsync(dst, a.ptr + srcOffset, bytes, hipMemcpyDeviceToHost, stream_), "download");
      check(hipStreamSynchronize(stream_), "download");
      pending_ = false;
    } else {
      waitForHost();
      std::memcpy(dst, a.ptr + srcOffset, bytes);
    }
  }
  countTransfer(MemSpace::Host, a.space, bytes);
}

void HipDevice::memcpy(BufferHandle dst, uint64_t dstOffset, BufferHandle src, uint64_t srcOffset, uint64_t bytes) {
  const Allocation &s = live(src, "memcpy source");
  const Allocation &d = live(dst, "memcpy destination");
  checkRange(s, src, srcOffset, bytes, "memcpy source");
  checkRange(d, dst, dstOffset, bytes, "memcpy destination");
  if (bytes) transfer(d, dstOffset, s, srcOffset, bytes, "memcpy");
  markDeviceWrite(dst, d, dstOffset, dstOffset + bytes);
  ++counters_.memcpyCopies;
  countTransfer(d.space, s.space, bytes);
}

void HipDevice::copy2D(BufferHandle dst, uint64_t dstOffset, uint64_t dstPitch, BufferHandle src, uint64_t srcOffset,
                       uint64_t srcPitch, uint64_t rowBytes, uint64_t rows) {
  if (rows > 1 && (dstPitch < rowBytes || srcPitch < rowBytes))
    throw RuntimeError("copy2d: pitches " + std::to_string(srcPitch) + " -> " + std::to_string(dstPitch) +
                       " are smaller than the " + std::to_string(rowBytes) + "-byte rows");
  const Allocation &s = live(src, "copy2d source");
  const Allocation &d = live(dst, "copy2d destination");
  if (rows > 0) {
    checkRange(s, src, srcOffset, (rows - 1) * srcPitch + rowBytes, "copy2d source");
    checkRange(d, dst, dstOffset, (rows - 1) * dstPitch + rowBytes, "copy2d destination");
  }
  if (rows > 0 && rowBytes > 0) {
    if (s.space != MemSpace::Device && d.space != MemSpace::Device) {
      waitForHost();
      for (uint64_t r = 0; r < rows; ++r)
        std::memmove(d.ptr + dstOffset + r * dstPitch, s.ptr + srcOffset + r * srcPitch, rowBytes);
    } else {
      // One row: pitches are irrelevant (and may be smaller than the row).
      const uint64_t dp = rows == 1 ? rowBytes : dstPitch, sp = rows == 1 ? rowBytes : srcPitch;
      check(hipMemcpy2DAsync(d.ptr + dstOffset, dp, s.ptr + srcOffset, sp, rowBytes, rows, hipMemcpyDefault, stream_),
            "copy2d");
      pending_ = true;
      if (s.space == MemSpace::Host || d.space == MemSpace::Host) syncQuiet();
    }
  }
  if (rows > 0) markDeviceWrite(dst, d, dstOffset, dstOffset + (rows - 1) * dstPitch + rowBytes);
  ++counters_.copy2dCopies;
  countTransfer(d.space, s.space, rows * rowBytes);
}

void HipDevice::copyStrided(const BufferView &dst, const BufferView &src) {
  checkDeviceVisible(src.buffer, "strided copy source");
  checkDeviceVisible(dst.buffer, "strided copy destination");
  Operand so, dO;
  makeOperand(src, "strided copy source", -1, so);
  makeOperand(dst, "strided copy destination", -1, dO);
  kernel::validateStridedCopy(dO, so);
  gKernel = "strided copy";
  copyView(dO, so);
  markDeviceWrite(dst);
  ++counters_.stridedCopies;
  countTransfer(live(dst.buffer, "strided copy").space, live(src.buffer, "strided copy").space,
                static_cast<uint64_t>(numel(dst.sizes)) * dtypeSize(dst.dtype));
}

void HipDevice::synchronize() {
  ++counters_.syncs;
  syncQuiet();
  pendingWrites_.clear();
}

void HipDevice::readback(void *dst, BufferHandle src, uint64_t offset, uint64_t bytes) {
  synchronize();
  ++counters_.scalarReadbacks;
  const Allocation &a = live(src, "readback");
  checkRange(a, src, offset, bytes, "readback");
  if (!bytes) return;
  if (a.space == MemSpace::Device)
    check(hipMemcpy(dst, a.ptr + offset, bytes, hipMemcpyDeviceToHost), "readback");
  else
    std::memcpy(dst, a.ptr + offset, bytes);
}

void HipDevice::hostLoad(void *dst, BufferHandle src, uint64_t offset, uint64_t bytes) {
  const Allocation &a = live(src, "host load");
  kernel::checkHostAccess(a.space, src, false);
  checkRange(a, src, offset, bytes, "host load");
  // The conformance rule: device writes reach the host only at a synchronization point. The
  // quiet wait below keeps the process safe; the check makes the missing sync an error.
  if (auto it = pendingWrites_.find(src); it != pendingWrites_.end())
    kernel::checkSynchronized(it->second, src, a.space, offset, bytes);
  waitForHost();
  if (bytes) std::memcpy(dst, a.ptr + offset, bytes);
  ++counters_.hostLoads;
}

void HipDevice::hostStore(BufferHandle dst, uint64_t offset, const void *src, uint64_t bytes) {
  const Allocation &a = live(dst, "host store");
  kernel::checkHostAccess(a.space, dst, true);
  checkRange(a, dst, offset, bytes, "host store");
  waitForHost();
  if (bytes) std::memcpy(a.ptr + offset, src, bytes);
  ++counters_.hostStores;
}

void HipDevice::resetCounters() {
  counters_ = Counters{};
  counters_.peakDeviceBytes = liveDeviceBytes_;
}

uint64_t HipDevice::blockBytes(uint64_t bytes) {
  if (bytes <= 4096) return (bytes + 255) & ~uint64_t{255};
  if (bytes > kRoundedBlockMax) return bytes;
  const int top = 63 - __builtin_clzll(bytes); // floor(log2(bytes)) >= 12
  const uint64_t step = uint64_t{1} << (top - 3);
  return (bytes + step - 1) & ~(step - 1);
}

bool HipDevice::reuseBlock(uint64_t bytes, char *&ptr) {
  auto it = freeBlocks_.find(bytes);
  if (it == freeBlocks_.end() || it->second.empty()) return false;
  ptr = it->second.back();
  it->second.pop_back();
  freeBlockBytes_ -= bytes;
  return true;
}

void HipDevice::dropFreeBlocks() {
  for (auto &[bytes, blocks] : freeBlocks_)
    for (char *p : blocks)
      (void)hipFreeAsync(p, stream_);
  freeBlocks_.clear();
  freeBlockBytes_ = 0;
}

void HipDevice::release(Allocation &a) {
  if (!a.ptr) return;
  if (a.space == MemSpace::Device) {
    if (freeBlockBytes_ + a.block <= kFreeBlockCap) {
      freeBlocks_[a.block].push_back(a.ptr);
      freeBlockBytes_ += a.block;
    } else {
      (void)hipFreeAsync(a.ptr, stream_);
    }
  } else {
    syncQuiet();
    if (a.space == MemSpace::Host)
      std::free(a.ptr);
    else
      (void)hipHostFree(a.ptr);
  }
  a.ptr = a.devPtr = nullptr;
}

void HipDevice::countTransfer(MemSpace dst, MemSpace src, uint64_t bytes) {
  kernel::countTransfer(counters_, dst, src, bytes);
}

void HipDevice::markDeviceWrite(BufferHandle buffer, const Allocation &a, uint64_t begin, uint64_t end) {
  if (a.space != MemSpace::Device && begin < end) pendingWrites_[buffer].emplace_back(begin, end);
}

void HipDevice::markDeviceWrite(const BufferView &v) {
  uint64_t begin = 0, end = 0;
  if (kernel::viewByteRange(v, begin, end)) markDeviceWrite(v.buffer, live(v.buffer, "device write"), begin, end);
}

void HipDevice::syncQuiet() {
  {
    HipProfile::Scope timed(profile_.get(), "(synchronize)", false);
    check(hipStreamSynchronize(stream_), "hipStreamSynchronize");
  }
  pending_ = false;
  if (profile_) profile_->resolve();
}

void HipDevice::transfer(const Allocation &d, uint64_t doff, const Allocation &s, uint64_t soff, uint64_t bytes,
                         const char *what) {
  if (s.space != MemSpace::Device && d.space != MemSpace::Device) {
    waitForHost();
    std::memmove(d.ptr + doff, s.ptr + soff, bytes);
    return;
  }
  check(hipMemcpyAsync(d.ptr + doff, s.ptr + soff, bytes, hipMemcpyDefault, stream_), what);
  pending_ = true;
  if (s.space == MemSpace::Host || d.space == MemSpace::Host) syncQuiet();
}

} // namespace dq::rt::hipdev

namespace dq::rt {
bool hipDeviceAvailable(std::string *reason) {
  int n = 0;
  hipError_t e = hipGetDeviceCount(&n);
  if (e != hipSuccess || n == 0) {
    if (reason)
      *reason = std::string("no GPU: hipGetDeviceCount: ") + (e != hipSuccess ? hipGetErrorString(e) : "0 devices");
    return false;
  }
  return true;
}

std::string hipDeviceDescription() {
  if (!hipDeviceAvailable(nullptr)) return "";
  hipDeviceProp_t p;
  if (hipGetDeviceProperties(&p, 0) != hipSuccess) return "";
  return std::string(p.name) + ", cc " + std::to_string(p.major) + "." + std::to_string(p.minor) + ", " +
         std::to_string(p.multiProcessorCount) + " SMs";
}

std::unique_ptr<Device> createHipDevice() { return std::make_unique<hipdev::HipDevice>(); }

} // namespace dq::rt
