// `hip` device: memory in three spaces on a GPU, one stream, counted transfers, kernel dispatch.
// Error messages and counters follow SimDevice (docs/devices.md).
#include "dq/runtime/hip/HipDevice.h"

#include "HipKernels.h"
#include "HipProfile.h"
#include "dq/runtime/Error.h"
#include "dq/runtime/HostTensor.h"
#include "dq/runtime/hip/HipCompat.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>
#include <memory>

namespace dq::rt {
namespace {

const char *spaceName(MemSpace s) {
  switch (s) {
  case MemSpace::Device: return "device";
  case MemSpace::Host: return "host";
  case MemSpace::HostMapped: return "host-mapped";
  }
  return "unknown";
}

std::string bufferName(BufferHandle b) { return "buffer #" + std::to_string(b); }

void check(hipError_t e, const std::string &what) {
  if (e != hipSuccess)
    throw RuntimeError("hip: " + what + " failed: " + hipGetErrorName(e) + ": " + hipGetErrorString(e));
}

bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16;
}

using TypeSet = uint32_t;
constexpr TypeSet bit(DType t) { return TypeSet{1} << static_cast<unsigned>(t); }
constexpr TypeSet kFloatTypes = bit(DType::F32) | bit(DType::F64) | bit(DType::F16) | bit(DType::BF16);
constexpr TypeSet kNumericTypes =
    kFloatTypes | bit(DType::I8) | bit(DType::U8) | bit(DType::I32) | bit(DType::I64);
constexpr TypeSet kSignedTypes = kFloatTypes | bit(DType::I8) | bit(DType::I32) | bit(DType::I64);
constexpr TypeSet kWideTypes = kFloatTypes | bit(DType::I32) | bit(DType::I64);
constexpr TypeSet kBoolTypes = bit(DType::Bool);
constexpr TypeSet kAllTypes = kNumericTypes | kBoolTypes;
constexpr TypeSet kIndexTypes = bit(DType::I32) | bit(DType::I64);
constexpr TypeSet kIntegerTypes = bit(DType::I8) | bit(DType::U8) | bit(DType::I32) | bit(DType::I64);

std::string typeSetNames(TypeSet set) {
  std::string s;
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8, DType::U8,
                  DType::I32, DType::I64, DType::Bool})
    if (set & bit(t)) s += (s.empty() ? "" : " ") + dtypeName(t);
  return s;
}

int64_t numel(const std::vector<int64_t> &s) {
  int64_t n = 1;
  for (int64_t x : s) n *= x;
  return n;
}

/// A checked kernel operand: a view resolved to a device-visible pointer.
struct Operand {
  std::string label;
  char *base = nullptr;
  DType dtype = DType::F32;
  int64_t offset = 0;
  std::vector<int64_t> sizes, strides;
};

[[noreturn]] void fail(const std::string &kernel, const std::string &problem) {
  throw RuntimeError("kernel '" + kernel + "': " + problem);
}

// ---- the checks of SimKernels.cpp, with its messages --------------------------------------------

void checkBroadcast(const std::string &k, const Operand &in, const Operand &out) {
  bool ok = in.sizes.size() <= out.sizes.size();
  for (size_t d = 0; ok && d < in.sizes.size(); ++d) {
    int64_t o = out.sizes[d + out.sizes.size() - in.sizes.size()];
    ok = in.sizes[d] == 1 || in.sizes[d] == o;
  }
  if (!ok)
    fail(k, in.label + " shape " + formatDims(in.sizes) + " does not broadcast to " + out.label +
                " shape " + formatDims(out.sizes));
}
void checkArity(const std::string &k, const std::vector<Operand> &ins, const std::vector<Operand> &outs,
                size_t n) {
  if (ins.size() != n || outs.size() != 1)
    fail(k, "expects " + std::to_string(n) + " inputs and 1 output, got " + std::to_string(ins.size()) +
                " and " + std::to_string(outs.size()));
}
void checkSameDType(const std::string &k, const Operand &a, const Operand &b) {
  if (a.dtype != b.dtype)
    fail(k, a.label + " is " + dtypeName(a.dtype) + " but " + b.label + " is " + dtypeName(b.dtype));
}
void checkDType(const std::string &k, const Operand &a, DType t) {
  if (a.dtype != t) fail(k, a.label + " is " + dtypeName(a.dtype) + ", expected " + dtypeName(t));
}
void checkAdmits(const std::string &k, const Operand &a, TypeSet set) {
  if (!(bit(a.dtype) & set))
    fail(k, "unsupported: " + a.label + " is " + dtypeName(a.dtype) + "; '" + k + "' admits " +
                typeSetNames(set));
}
void checkShape(const std::string &k, const Operand &o, const std::vector<int64_t> &shape) {
  if (o.sizes != shape) fail(k, o.label + " shape " + formatDims(o.sizes) + ", expected " + formatDims(shape));
}
size_t axisAttr(const std::string &k, const KernelArgs &args, size_t i, size_t rank, bool wraps) {
  if (args.attrs.size() <= i) fail(k, "missing axis attribute imm[" + std::to_string(i + 1) + "]");
  int64_t a = args.attrs[i];
  if (a < 0 && wraps) a += static_cast<int64_t>(rank);
  if (a < 0 || static_cast<size_t>(a) >= rank)
    fail(k, "axis " + std::to_string(args.attrs[i]) + " out of range for rank " + std::to_string(rank) +
                (wraps ? "" : " (must be non-negative)"));
  return static_cast<size_t>(a);
}
bool flagAttr(const std::string &k, const KernelArgs &args, size_t i, const char *what) {
  if (args.attrs.size() <= i || (args.attrs[i] != 0 && args.attrs[i] != 1))
    fail(k, std::string("imm[") + std::to_string(i + 1) + "] (" + what + ") must be 0 or 1");
  return args.attrs[i] == 1;
}
size_t normalizeAxis(const std::string &k, const KernelArgs &args, size_t rank) {
  if (args.attrs.empty()) fail(k, "missing axis attribute");
  int64_t a = args.attrs[0];
  if (a < 0) a += static_cast<int64_t>(rank);
  if (a < 0 || static_cast<size_t>(a) >= rank)
    fail(k, "axis " + std::to_string(args.attrs[0]) + " out of range for rank " + std::to_string(rank));
  return static_cast<size_t>(a);
}

// ---- operand -> kernel parameter ---------------------------------------------------------------

std::string gKernel;  // name of the kernel being dispatched, for the rank message

void checkRank(size_t r) {
  if (r > static_cast<size_t>(hipk::kMaxRank))
    throw RuntimeError("unsupported: kernel '" + gKernel + "' on hip: rank " + std::to_string(r) +
                       " exceeds " + std::to_string(hipk::kMaxRank));
}

hipk::Shape shapeOf(const std::vector<int64_t> &s) {
  checkRank(s.size());
  hipk::Shape sh;
  sh.rank = static_cast<int>(s.size());
  sh.count = 1;
  for (size_t d = 0; d < s.size(); ++d) {
    sh.sizes[d] = s[d];
    sh.count *= s[d];
  }
  return sh;
}

/// `o` aligned right to a loop of rank `rank` (numpy broadcasting: size-1 and missing dims get
/// stride 0).
hipk::Opd aligned(const Operand &o, size_t rank) {
  checkRank(rank);
  checkRank(o.sizes.size());
  hipk::Opd p;
  p.base = o.base;
  p.dtype = static_cast<int>(o.dtype);
  p.esize = static_cast<int>(dtypeSize(o.dtype));
  p.offset = o.offset;
  const size_t shift = rank - o.sizes.size();
  for (size_t d = 0; d < o.sizes.size(); ++d) p.strides[d + shift] = o.sizes[d] == 1 ? 0 : o.strides[d];
  return p;
}

/// `o` with its own strides (no alignment).
hipk::Opd own(const Operand &o) {
  checkRank(o.sizes.size());
  hipk::Opd p;
  p.base = o.base;
  p.dtype = static_cast<int>(o.dtype);
  p.esize = static_cast<int>(dtypeSize(o.dtype));
  p.offset = o.offset;
  for (size_t d = 0; d < o.sizes.size(); ++d) p.strides[d] = o.strides[d];
  return p;
}

struct ElemInfo {
  const char *name;
  hipk::ElemOp op;
  bool binary;
  bool hasInt;      ///< has an integer form (else integers go through double, truncated)
  bool boolResult;
  TypeSet types;
  TypeSet exponent;
};

const ElemInfo kElems[] = {
    {"add", hipk::kAdd, true, true, false, kAllTypes, 0},
    {"sub", hipk::kSub, true, true, false, kAllTypes, 0},
    {"mul", hipk::kMul, true, true, false, kAllTypes, 0},
    {"div", hipk::kDiv, true, true, false, kAllTypes, 0},
    {"equal", hipk::kEqual, true, true, true, kAllTypes, 0},
    {"pow", hipk::kPow, true, true, false, kWideTypes, kNumericTypes},
    {"max", hipk::kMax, true, true, false, kNumericTypes, 0},
    {"min", hipk::kMin, true, true, false, kNumericTypes, 0},
    {"and", hipk::kAnd, true, true, false, kBoolTypes, 0},
    {"or", hipk::kOr, true, true, false, kBoolTypes, 0},
    {"less", hipk::kLess, true, true, true, kNumericTypes, 0},
    {"less_equal", hipk::kLessEqual, true, true, true, kNumericTypes, 0},
    {"greater", hipk::kGreater, true, true, true, kNumericTypes, 0},
    {"greater_equal", hipk::kGreaterEqual, true, true, true, kNumericTypes, 0},
    {"neg", hipk::kNeg, false, true, false, kSignedTypes, 0},
    {"sqrt", hipk::kSqrt, false, false, false, kFloatTypes, 0},
    {"reciprocal", hipk::kReciprocal, false, false, false, kFloatTypes, 0},
    {"sigmoid", hipk::kSigmoid, false, false, false, kFloatTypes, 0},
    {"tanh", hipk::kTanh, false, false, false, kFloatTypes, 0},
    {"erf", hipk::kErf, false, false, false, kNumericTypes, 0},
    {"exp", hipk::kExp, false, false, false, kFloatTypes, 0},
    {"cos", hipk::kCos, false, false, false, kFloatTypes, 0},
    {"sin", hipk::kSin, false, false, false, kFloatTypes, 0},
    {"not", hipk::kNot, false, true, false, kBoolTypes, 0},
    {"isnan", hipk::kIsNan, false, false, true, kFloatTypes, 0},
    {"relu", hipk::kRelu, false, true, false, kSignedTypes, 0},
    {"abs", hipk::kAbs, false, true, false, kNumericTypes, 0},
    {"log", hipk::kLog, false, false, false, kFloatTypes, 0},
    {"floor", hipk::kFloor, false, false, false, kFloatTypes, 0},
    {"ceil", hipk::kCeil, false, false, false, kFloatTypes, 0},
    {"round", hipk::kRound, false, false, false, kFloatTypes, 0},
    {"sign", hipk::kSign, false, true, false, kNumericTypes, 0},
    {"xor", hipk::kXor, true, true, false, kBoolTypes, 0},
    {"mod", hipk::kMod, true, true, false, kIntegerTypes, 0},
    {"fmod", hipk::kFmod, true, true, false, kNumericTypes, 0},
};

const ElemInfo *findElem(const std::string &name) {
  for (const ElemInfo &e : kElems)
    if (name == e.name) return &e;
  return nullptr;
}

const char *const kSpecial[] = {"where", "cast", "expand", "slice", "transpose", "concat", "gather",
                                "range", "range_length", "fill", "matmul", "softmax", "layer_norm",
                                "reduce_sum", "reduce_mean", "reduce_max", "trilu", "cumsum",
                                "gather_elements", "gather_nd", "leaky_relu", "log_softmax",
                                "reduce_min", "reduce_prod", "reduce_l2", "reduce_sum_square",
                                "reduce_log_sum_exp", "arg_max", "arg_min", "one_hot", "count_nonzero",
                                "nonzero", "compress",
                                "top_k", "tile", "pad", "scatter_nd", "scatter_elements"};

bool hasKernel(const std::string &name) {
  if (findElem(name)) return true;
  for (const char *k : kSpecial)
    if (name == k) return true;
  return false;
}

/// Collapses a batch of (size, stride) pairs into one stride when element i of the flattened
/// batch sits at i * stride; false when it does not.
bool batchStride(const std::vector<int64_t> &sizes, const std::vector<int64_t> &strides, int64_t &out) {
  int64_t expected = -1;
  bool any = false;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] == 1) continue;
    if (!any) {
      any = true;
      out = strides[d];
      expected = strides[d] * sizes[d];
      continue;
    }
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  if (!any) out = 0;
  return true;
}

class HipDevice final : public Device {
public:
  HipDevice() {
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
  }

  ~HipDevice() override {
    profile_.reset();
    (void)hipStreamSynchronize(stream_);
    for (auto &[h, a] : allocations_)
      if (!a.freed) release(a);
    dropFreeBlocks();
    if (gemvPartials_) (void)hipFreeAsync(gemvPartials_, stream_);
    if (gemvCounters_) (void)hipFreeAsync(gemvCounters_, stream_);
    (void)hipStreamSynchronize(stream_);
    hipblasDestroy(blas_);
    (void)hipHostFree(errHost_);
    (void)hipStreamDestroy(stream_);
  }

  std::string name() const override { return "hip"; }

  BufferHandle allocate(MemSpace space, uint64_t bytes, AllocPurpose purpose) override {
    if (static_cast<uint8_t>(space) > 2)
      throw RuntimeError("allocate: unknown memory space " + std::to_string(static_cast<int>(space)));
    HipProfile::Scope timed(profile_.get(), "(allocate)", false);
    Allocation a;
    a.space = space;
    a.size = bytes;
    if (bytes > 0) {
      if (space == MemSpace::Device) {
        hipError_t e = hipSuccess;
        if (!reuseBlock(bytes, a.ptr)) {
          e = hipMallocAsync(reinterpret_cast<void **>(&a.ptr), bytes, stream_);
          if (e != hipSuccess && freeBlockBytes_ > 0) {
            (void)hipGetLastError();
            dropFreeBlocks();
            e = hipMallocAsync(reinterpret_cast<void **>(&a.ptr), bytes, stream_);
          }
        }
        if (e != hipSuccess)
          throw RuntimeError("allocate: " + std::to_string(bytes) + " bytes of device memory: " +
                             hipGetErrorString(e));
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
    ++counters_.allocations;
    if (space == MemSpace::Device) {
      counters_.bytesAllocated += bytes;
      liveDeviceBytes_ += bytes;
      counters_.peakDeviceBytes = std::max(counters_.peakDeviceBytes, liveDeviceBytes_);
      if (purpose == AllocPurpose::Pool) counters_.poolBytes += bytes;
    } else {
      counters_.hostBytesAllocated += bytes;
    }
    return h;
  }

  void free(BufferHandle buffer) override {
    HipProfile::Scope timed(profile_.get(), "(free)", false);
    auto it = allocations_.find(buffer);
    if (it == allocations_.end()) throw RuntimeError("free: unknown " + bufferName(buffer));
    Allocation &a = it->second;
    if (a.freed) throw RuntimeError("double free of " + bufferName(buffer));
    a.freed = true;
    if (a.space == MemSpace::Device) liveDeviceBytes_ -= a.size;
    release(a);
  }

  void poison(BufferHandle buffer, uint64_t offset, uint64_t bytes) override {
    checkRange(live(buffer, "poison"), buffer, offset, bytes, "poison");
  }
  void discard(BufferHandle buffer, uint64_t offset, uint64_t bytes) override {
    checkRange(live(buffer, "discard"), buffer, offset, bytes, "discard");
  }
  uint64_t bufferBytes(BufferHandle buffer) const override { return live(buffer, "bufferBytes").size; }
  MemSpace bufferSpace(BufferHandle buffer) const override { return live(buffer, "bufferSpace").space; }

  void upload(BufferHandle dst, uint64_t dstOffset, const void *src, uint64_t bytes) override {
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

  void download(void *dst, BufferHandle src, uint64_t srcOffset, uint64_t bytes) override {
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

  void memcpy(BufferHandle dst, uint64_t dstOffset, BufferHandle src, uint64_t srcOffset,
              uint64_t bytes) override {
    const Allocation &s = live(src, "memcpy source");
    const Allocation &d = live(dst, "memcpy destination");
    checkRange(s, src, srcOffset, bytes, "memcpy source");
    checkRange(d, dst, dstOffset, bytes, "memcpy destination");
    if (bytes) transfer(d, dstOffset, s, srcOffset, bytes, "memcpy");
    markDeviceWrite(dst, d, dstOffset, dstOffset + bytes);
    ++counters_.memcpyCopies;
    countTransfer(d.space, s.space, bytes);
  }

  void copy2D(BufferHandle dst, uint64_t dstOffset, uint64_t dstPitch, BufferHandle src,
              uint64_t srcOffset, uint64_t srcPitch, uint64_t rowBytes, uint64_t rows) override {
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
        check(hipMemcpy2DAsync(d.ptr + dstOffset, dp, s.ptr + srcOffset, sp, rowBytes, rows,
                               hipMemcpyDefault, stream_),
              "copy2d");
        pending_ = true;
        if (s.space == MemSpace::Host || d.space == MemSpace::Host) syncQuiet();
      }
    }
    if (rows > 0) markDeviceWrite(dst, d, dstOffset, dstOffset + (rows - 1) * dstPitch + rowBytes);
    ++counters_.copy2dCopies;
    countTransfer(d.space, s.space, rows * rowBytes);
  }

  void copyStrided(const BufferView &dst, const BufferView &src) override {
    checkDeviceVisible(src.buffer, "strided copy source");
    checkDeviceVisible(dst.buffer, "strided copy destination");
    Operand so = makeOperand(src, "strided copy source");
    Operand dO = makeOperand(dst, "strided copy destination");
    if (dO.dtype != so.dtype || dO.sizes != so.sizes)
      throw RuntimeError("strided copy: " + so.label + " " + dtypeName(so.dtype) + formatDims(so.sizes) +
                         " does not match " + dO.label + " " + dtypeName(dO.dtype) + formatDims(dO.sizes));
    for (size_t d = 0; d < dO.sizes.size() && numel(dO.sizes) > 0; ++d)
      if (dO.sizes[d] > 1 && dO.strides[d] == 0)
        throw RuntimeError("strided copy: " + dO.label + " has stride 0 on dim " + std::to_string(d) +
                           ": a destination may not write an element twice");
    gKernel = "strided copy";
    copyView(dO, so);
    markDeviceWrite(dst);
    ++counters_.stridedCopies;
    countTransfer(live(dst.buffer, "strided copy").space, live(src.buffer, "strided copy").space,
                  static_cast<uint64_t>(numel(dst.sizes)) * dtypeSize(dst.dtype));
  }

  void launch(const std::string &kernel, const std::vector<BufferView> &ins,
              const std::vector<BufferView> &outs, const KernelArgs &args) override {
    if (!hasKernel(kernel)) throw RuntimeError("unsupported: kernel '" + kernel + "' on hip");
    std::vector<Operand> inOps, outOps;
    for (size_t i = 0; i < ins.size(); ++i) {
      std::string label = "in " + std::to_string(i);
      checkDeviceVisible(ins[i].buffer, ("kernel '" + kernel + "' " + label).c_str());
      inOps.push_back(makeOperand(ins[i], label));
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      std::string label = "out " + std::to_string(i);
      checkDeviceVisible(outs[i].buffer, ("kernel '" + kernel + "' " + label).c_str());
      outOps.push_back(makeOperand(outs[i], label));
    }
    ++counters_.kernelLaunches;
    for (const Operand &o : outOps)
      for (size_t d = 0; d < o.sizes.size() && numel(o.sizes) > 0; ++d)
        if (o.sizes[d] > 1 && o.strides[d] == 0)
          fail(kernel, o.label + " has stride 0 on dim " + std::to_string(d) +
                           ": an output may not write an element twice");
    gKernel = kernel;
    {
      HipProfile::Scope timed(profile_.get(), profile_ ? profileLabel(kernel, inOps, outOps) : std::string(), true);
      dispatch(kernel, inOps, outOps, args);
    }
    if (profile_ && profile_->full()) syncQuiet();
    for (const BufferView &o : outs) markDeviceWrite(o);
  }

  static std::string profileLabel(const std::string &kernel, const std::vector<Operand> &ins,
                                  const std::vector<Operand> &outs) {
    if (kernel != "matmul" || ins.size() != 2 || outs.size() != 1 || outs[0].sizes.size() < 2) return kernel;
    const std::vector<int64_t> &o = outs[0].sizes;
    int64_t batch = 1;
    for (size_t d = 0; d + 2 < o.size(); ++d) batch *= o[d];
    if (batch > 1) return "matmul " + dtypeName(ins[0].dtype) + " batched";
    return "matmul " + dtypeName(ins[0].dtype) + " M" + std::to_string(o[o.size() - 2]) + " K" +
           std::to_string(ins[0].sizes.back()) + " N" + std::to_string(o.back());
  }

  void synchronize() override {
    ++counters_.syncs;
    syncQuiet();
    pendingWrites_.clear();
  }

  void readback(void *dst, BufferHandle src, uint64_t offset, uint64_t bytes) override {
    synchronize();
    ++counters_.scalarReadbacks;
    const Allocation &a = live(src, "readback");
    checkRange(a, src, offset, bytes, "readback");
    if (!bytes) return;
    if (a.space == MemSpace::Device) check(hipMemcpy(dst, a.ptr + offset, bytes, hipMemcpyDeviceToHost), "readback");
    else std::memcpy(dst, a.ptr + offset, bytes);
  }

  void hostLoad(void *dst, BufferHandle src, uint64_t offset, uint64_t bytes) override {
    const Allocation &a = live(src, "host load");
    if (a.space == MemSpace::Device)
      throw RuntimeError("host load touches device memory (" + bufferName(src) +
                         "); the host may only access host or host-mapped memory: read it back or "
                         "copy it to the host first");
    checkRange(a, src, offset, bytes, "host load");
    // The conformance rule: device writes reach the host only at a synchronization point. The
    // quiet wait below keeps the process safe; the check makes the missing sync an error.
    if (auto it = pendingWrites_.find(src); it != pendingWrites_.end())
      for (const auto &[b, e] : it->second)
        if (offset < e && b < offset + bytes)
          throw RuntimeError("unsynchronized read: host load of bytes [" + std::to_string(offset) + ", " +
                             std::to_string(offset + bytes) + ") of " + bufferName(src) + " (" +
                             spaceName(a.space) + "), which device work wrote after the last "
                             "synchronization; synchronize (or read back) first");
    waitForHost();
    if (bytes) std::memcpy(dst, a.ptr + offset, bytes);
    ++counters_.hostLoads;
  }

  void hostStore(BufferHandle dst, uint64_t offset, const void *src, uint64_t bytes) override {
    const Allocation &a = live(dst, "host store");
    if (a.space == MemSpace::Device)
      throw RuntimeError("host store touches device memory (" + bufferName(dst) +
                         "); the host may only write host or host-mapped memory: stage the value "
                         "in host scratch and copy it");
    checkRange(a, dst, offset, bytes, "host store");
    waitForHost();
    if (bytes) std::memcpy(a.ptr + offset, src, bytes);
    ++counters_.hostStores;
  }

  Counters counters() const override { return counters_; }
  void resetCounters() override {
    counters_ = Counters{};
    counters_.peakDeviceBytes = liveDeviceBytes_;
  }

private:
  struct Allocation {
    MemSpace space = MemSpace::Device;
    uint64_t size = 0;
    bool freed = false;
    char *ptr = nullptr;     ///< host-side pointer for host spaces, device pointer for Device
    char *devPtr = nullptr;  ///< what kernels use
  };

  /// Takes a cached freed block of exactly `bytes` (see freeBlocks_), or returns false.
  bool reuseBlock(uint64_t bytes, char *&ptr) {
    auto it = freeBlocks_.find(bytes);
    if (it == freeBlocks_.end() || it->second.empty()) return false;
    ptr = it->second.back();
    it->second.pop_back();
    freeBlockBytes_ -= bytes;
    return true;
  }

  void dropFreeBlocks() {
    for (auto &[bytes, blocks] : freeBlocks_)
      for (char *p : blocks) (void)hipFreeAsync(p, stream_);
    freeBlocks_.clear();
    freeBlockBytes_ = 0;
  }

  void release(Allocation &a) {
    if (!a.ptr) return;
    if (a.space == MemSpace::Device) {
      if (freeBlockBytes_ + a.size <= kFreeBlockCap) {
        freeBlocks_[a.size].push_back(a.ptr);
        freeBlockBytes_ += a.size;
      } else {
        (void)hipFreeAsync(a.ptr, stream_);
      }
    } else {
      syncQuiet();
      if (a.space == MemSpace::Host) std::free(a.ptr);
      else (void)hipHostFree(a.ptr);
    }
    a.ptr = a.devPtr = nullptr;
  }

  const Allocation &live(BufferHandle buffer, const char *what) const {
    auto it = allocations_.find(buffer);
    if (it == allocations_.end()) throw RuntimeError(std::string(what) + ": unknown " + bufferName(buffer));
    if (it->second.freed)
      throw RuntimeError(std::string("use after free: ") + what + " touches " + bufferName(buffer) + " (" +
                         spaceName(it->second.space) + ", " + std::to_string(it->second.size) +
                         " bytes), which was freed");
    return it->second;
  }

  void checkRange(const Allocation &a, BufferHandle buffer, uint64_t offset, uint64_t bytes,
                  const char *what) const {
    if (offset > a.size || bytes > a.size - offset)
      throw RuntimeError(std::string("out of bounds: ") + what + " bytes [" + std::to_string(offset) + ", " +
                         std::to_string(offset + bytes) + ") of " + bufferName(buffer) + " which holds " +
                         std::to_string(a.size) + " bytes");
  }

  void checkDeviceVisible(BufferHandle buffer, const char *what) const {
    if (live(buffer, what).space == MemSpace::Host)
      throw RuntimeError(std::string(what) + " touches " + bufferName(buffer) +
                         ", pageable host memory that device code cannot access; use host-mapped "
                         "memory or a memcpy/copy2d transfer");
  }

  void countTransfer(MemSpace dst, MemSpace src, uint64_t bytes) {
    const bool d = dst == MemSpace::Device, s = src == MemSpace::Device;
    if (s && d) { ++counters_.d2dTransfers; counters_.d2dBytes += bytes; }
    else if (d) { ++counters_.h2dTransfers; counters_.h2dBytes += bytes; }
    else if (s) { ++counters_.d2hTransfers; counters_.d2hBytes += bytes; }
    else { ++counters_.h2hTransfers; counters_.h2hBytes += bytes; }
  }

  /// Records a device write of bytes [begin, end) of `buffer` when it is host-visible.
  void markDeviceWrite(BufferHandle buffer, const Allocation &a, uint64_t begin, uint64_t end) {
    if (a.space != MemSpace::Device && begin < end) pendingWrites_[buffer].emplace_back(begin, end);
  }
  void markDeviceWrite(const BufferView &v) {
    auto [lo, hi] = v.elementRange();
    if (lo > hi) return;
    const uint64_t es = dtypeSize(v.dtype);
    markDeviceWrite(v.buffer, live(v.buffer, "device write"), static_cast<uint64_t>(lo) * es,
                    static_cast<uint64_t>(hi + 1) * es);
  }

  /// Waits for the stream without counting a sync (host access to memory the GPU may touch).
  void syncQuiet() {
    {
      HipProfile::Scope timed(profile_.get(), "(synchronize)", false);
      check(hipStreamSynchronize(stream_), "hipStreamSynchronize");
    }
    pending_ = false;
    if (profile_) profile_->resolve();
  }
  void waitForHost() {
    if (pending_) syncQuiet();
  }

  void transfer(const Allocation &d, uint64_t doff, const Allocation &s, uint64_t soff, uint64_t bytes,
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

  Operand makeOperand(const BufferView &v, const std::string &label) const {
    Operand o;
    o.label = label + " (" + bufferName(v.buffer) + ")";
    const Allocation &a = live(v.buffer, label.c_str());
    if (dtypeSize(v.dtype) == 0) throw RuntimeError(o.label + ": unknown dtype");
    if (v.sizes.size() != v.strides.size())
      throw RuntimeError(o.label + ": " + std::to_string(v.sizes.size()) + " sizes but " +
                         std::to_string(v.strides.size()) + " strides");
    for (int64_t s : v.sizes)
      if (s < 0) throw RuntimeError(o.label + ": negative size in " + formatDims(v.sizes));
    o.base = a.devPtr;
    o.dtype = v.dtype;
    o.offset = v.offset;
    o.sizes = v.sizes;
    o.strides = v.strides;
    auto [lo, hi] = v.elementRange();
    const int64_t capacity = static_cast<int64_t>(a.size / dtypeSize(v.dtype));
    if (lo <= hi && (lo < 0 || hi >= capacity))
      throw RuntimeError("out of bounds: " + o.label + " with offset " + std::to_string(v.offset) + ", sizes " +
                         formatDims(v.sizes) + ", strides " + formatDims(v.strides) + " touches elements [" +
                         std::to_string(lo) + ", " + std::to_string(hi) + "] of an allocation holding " +
                         std::to_string(capacity) + " " + dtypeName(v.dtype) + " elements");
    return o;
  }

  void launched(hipError_t e) {
    pending_ = true;
    if (e != hipSuccess)
      throw RuntimeError("kernel '" + gKernel + "' on hip: launch failed: " + hipGetErrorString(e));
  }

  /// Synchronizes (uncounted) and turns an error a kernel reported into the sim's message.
  void checkDataError(const std::string &kernel) {
    syncQuiet();
    hipk::DevError e = *errHost_;
    if (e.code == hipk::kErrNone) return;
    std::memset(errHost_, 0, sizeof(hipk::DevError));
    switch (e.code) {
    case hipk::kErrIntDivZero: fail(kernel, "integer division by zero");
    case hipk::kErrIntPowNeg: fail(kernel, "integer 0 raised to the negative power " + std::to_string(e.a));
    case hipk::kErrIndex:
      fail(kernel, "index " + std::to_string(e.a) + " out of range for axis " + std::to_string(e.b) +
                       " of size " + std::to_string(e.c));
    case hipk::kErrRangeDeltaZero: fail(kernel, "delta is 0");
    case hipk::kErrRangeNaN: fail(kernel, "the element count is NaN");
    case hipk::kErrRangeBig: fail(kernel, "the element count does not fit in int64");
    case hipk::kErrIntModZero: fail(kernel, "integer modulo by zero");
    case hipk::kErrCountMismatch:
      fail(kernel, std::to_string(e.a) + " nonzero elements, the output holds " + std::to_string(e.b));
    case hipk::kErrBeyondExtent:
      fail(kernel, "condition is true at " + std::to_string(e.a) + ", beyond the extent " + std::to_string(e.b) +
                       " of axis " + std::to_string(e.c));
    case hipk::kErrPadEmpty:
      fail(kernel, std::string("mode '") + (e.b == 1 ? "reflect" : "edge") + "' cannot pad an axis of extent 0");
    case hipk::kErrDuplicate:
      fail(kernel, "two updates write output element " + std::to_string(e.a) +
                       " with reduction 'none' (undefined in ONNX)");
    default: fail(kernel, "device error code " + std::to_string(e.code));
    }
  }

  void copyView(const Operand &dst, const Operand &src) {
    const hipk::Shape sh = shapeOf(dst.sizes);
    launched(hipk::copy(stream_, hipk::kCopyPlain, aligned(dst, dst.sizes.size()),
                        aligned(src, dst.sizes.size()), {}, {}, sh, 0));
  }

  // ---- dispatch ----

  void dispatch(const std::string &k, std::vector<Operand> &ins, std::vector<Operand> &outs,
                const KernelArgs &args) {
    if (const ElemInfo *e = findElem(k)) return runElem(*e, ins, outs);
    if (k == "where") return kWhere(ins, outs);
    if (k == "cast") return kCast(ins, outs);
    if (k == "expand") return kExpand(ins, outs);
    if (k == "slice") return kSlice(ins, outs, args);
    if (k == "transpose") return kTranspose(ins, outs, args);
    if (k == "concat") return kConcat(ins, outs, args);
    if (k == "gather") return kGather(ins, outs, args);
    if (k == "range") return kRange(ins, outs);
    if (k == "range_length") return kRangeLength(ins, outs);
    if (k == "fill") return kFill(ins, outs, args);
    if (k == "matmul") return kMatmul(ins, outs);
    if (k == "softmax") return kSoftmax(ins, outs, args);
    if (k == "layer_norm") return kLayerNorm(ins, outs, args);
    if (k == "reduce_sum") return kReduce("reduce_sum", 0, ins, outs, args);
    if (k == "reduce_mean") return kReduce("reduce_mean", 1, ins, outs, args);
    if (k == "reduce_max") return kReduce("reduce_max", 2, ins, outs, args);
    if (k == "trilu") return kTrilu(ins, outs, args);
    if (k == "cumsum") return kCumsum(ins, outs, args);
    if (k == "gather_elements") return kGatherElements(ins, outs, args);
    if (k == "gather_nd") return kGatherND(ins, outs, args);
    if (k == "leaky_relu") return kLeakyRelu(ins, outs, args);
    if (k == "log_softmax") return kSoftmax(ins, outs, args, true);
    if (k == "reduce_min") return kReduce("reduce_min", 3, ins, outs, args);
    if (k == "reduce_prod") return kReduce("reduce_prod", 4, ins, outs, args);
    if (k == "reduce_l2") return kReduce("reduce_l2", 5, ins, outs, args);
    if (k == "reduce_sum_square") return kReduce("reduce_sum_square", 6, ins, outs, args);
    if (k == "reduce_log_sum_exp") return kReduce("reduce_log_sum_exp", 7, ins, outs, args);
    if (k == "arg_max") return kArgExtreme("arg_max", true, ins, outs, args);
    if (k == "arg_min") return kArgExtreme("arg_min", false, ins, outs, args);
    if (k == "one_hot") return kOneHot(ins, outs, args);
    if (k == "count_nonzero") return kCountNonzero(ins, outs);
    if (k == "nonzero") return kNonzero(ins, outs);
    if (k == "compress") return kCompress(ins, outs, args);
    if (k == "top_k") return kTopK(ins, outs, args);
    if (k == "tile") return kTile(ins, outs);
    if (k == "pad") return kPad(ins, outs, args);
    if (k == "scatter_nd") return kScatterND(ins, outs, args);
    if (k == "scatter_elements") return kScatterElements(ins, outs, args);
    throw RuntimeError("unsupported: kernel '" + k + "' on hip");
  }

  void runElem(const ElemInfo &op, std::vector<Operand> &ins, std::vector<Operand> &outs) {
    const std::string k = op.name;
    checkArity(k, ins, outs, op.binary ? 2 : 1);
    Operand &out = outs[0];
    checkAdmits(k, ins[0], op.types);
    if (op.binary) {
      if (op.exponent) checkAdmits(k, ins[1], op.exponent);
      else checkSameDType(k, ins[0], ins[1]);
    }
    if (op.boolResult) checkDType(k, out, DType::Bool);
    else checkSameDType(k, ins[0], out);
    checkBroadcast(k, ins[0], out);
    if (op.binary) checkBroadcast(k, ins[1], out);
    const size_t r = out.sizes.size();
    const bool fl = op.binary ? (isFloat(ins[0].dtype) || isFloat(ins[1].dtype))
                              : (isFloat(ins[0].dtype) || !op.hasInt);
    const hipk::Opd a = aligned(ins[0], r), b = op.binary ? aligned(ins[1], r) : hipk::Opd{};
    launched(hipk::elementwise(stream_, op.op, op.binary ? 2 : 1, a, b, aligned(out, r), shapeOf(out.sizes),
                               fl, errDev_));
    if (!fl && (op.op == hipk::kDiv || op.op == hipk::kPow || op.op == hipk::kMod || op.op == hipk::kFmod))
      checkDataError(k);
  }

  void kWhere(std::vector<Operand> &ins, std::vector<Operand> &outs) {
    checkArity("where", ins, outs, 3);
    Operand &out = outs[0];
    checkDType("where", ins[0], DType::Bool);
    checkSameDType("where", ins[1], out);
    checkSameDType("where", ins[2], out);
    for (const Operand &in : ins) checkBroadcast("where", in, out);
    const size_t r = out.sizes.size();
    launched(hipk::copy(stream_, hipk::kCopyWhere, aligned(out, r), aligned(ins[1], r), aligned(ins[2], r),
                        aligned(ins[0], r), shapeOf(out.sizes), 0));
  }

  void kCast(std::vector<Operand> &ins, std::vector<Operand> &outs) {
    checkArity("cast", ins, outs, 1);
    checkBroadcast("cast", ins[0], outs[0]);
    const size_t r = outs[0].sizes.size();
    launched(hipk::cast(stream_, aligned(outs[0], r), aligned(ins[0], r), shapeOf(outs[0].sizes)));
  }

  void kExpand(std::vector<Operand> &ins, std::vector<Operand> &outs) {
    checkArity("expand", ins, outs, 1);
    checkSameDType("expand", ins[0], outs[0]);
    checkBroadcast("expand", ins[0], outs[0]);
    copyView(outs[0], ins[0]);
  }

  void kSlice(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
    checkArity("slice", ins, outs, 1);
    const Operand &in = ins[0];
    Operand &out = outs[0];
    checkSameDType("slice", in, out);
    const size_t r = out.sizes.size();
    if (in.sizes.size() != r || args.scalars.size() != 2 * r)
      fail("slice", "expects equal ranks and " + std::to_string(2 * r) + " scalars (starts, steps)");
    for (size_t d = 0; d < r; ++d) {
      if (out.sizes[d] == 0) return;
      int64_t first = args.scalars[d], step = args.scalars[r + d];
      int64_t last = first + (out.sizes[d] - 1) * step;
      if (first < 0 || first >= in.sizes[d] || last < 0 || last >= in.sizes[d])
        fail("slice", "axis " + std::to_string(d) + " reads indices " + std::to_string(first) + ".." +
                          std::to_string(last) + " of a dim of size " + std::to_string(in.sizes[d]));
    }
    Operand v = in;
    v.sizes = out.sizes;
    for (size_t d = 0; d < r; ++d) {
      v.offset += args.scalars[d] * in.strides[d];
      v.strides[d] = args.scalars[r + d] * in.strides[d];
    }
    copyView(out, v);
  }

  void kTranspose(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
    checkArity("transpose", ins, outs, 1);
    const Operand &in = ins[0];
    Operand &out = outs[0];
    checkSameDType("transpose", in, out);
    const size_t r = in.sizes.size();
    std::vector<bool> seen(r, false);
    bool ok = args.attrs.size() == r && out.sizes.size() == r;
    for (size_t j = 0; ok && j < r; ++j) {
      int64_t p = args.attrs[j];
      ok = p >= 0 && static_cast<size_t>(p) < r && !seen[static_cast<size_t>(p)] &&
           out.sizes[j] == in.sizes[static_cast<size_t>(p)];
      if (ok) seen[static_cast<size_t>(p)] = true;
    }
    if (!ok)
      fail("transpose", "perm " + formatDims(args.attrs) + " does not map " + formatDims(in.sizes) + " to " +
                            formatDims(out.sizes));
    Operand v = in;
    v.sizes = out.sizes;
    for (size_t j = 0; j < r; ++j) v.strides[j] = in.strides[static_cast<size_t>(args.attrs[j])];
    copyView(out, v);
  }

  void kConcat(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
    if (ins.empty() || outs.size() != 1) fail("concat", "expects at least 1 input and 1 output");
    Operand &out = outs[0];
    const size_t axis = normalizeAxis("concat", args, out.sizes.size());
    int64_t total = 0;
    for (const Operand &in : ins) {
      checkSameDType("concat", in, out);
      bool ok = in.sizes.size() == out.sizes.size();
      for (size_t d = 0; ok && d < in.sizes.size(); ++d) ok = d == axis || in.sizes[d] == out.sizes[d];
      if (!ok)
        fail("concat", in.label + " shape " + formatDims(in.sizes) + " does not fit " + formatDims(out.sizes) +
                           " along axis " + std::to_string(axis));
      total += in.sizes[axis];
    }
    if (total != out.sizes[axis])
      fail("concat", "inputs sum to " + std::to_string(total) + " along axis " + std::to_string(axis) +
                         ", output has " + std::to_string(out.sizes[axis]));
    int64_t base = 0;
    for (const Operand &in : ins) {
      Operand part = out;
      part.sizes = in.sizes;
      part.offset += base * out.strides[axis];
      if (numel(in.sizes) > 0) copyView(part, in);
      base += in.sizes[axis];
    }
  }

  void kGather(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
    checkArity("gather", ins, outs, 2);
    const Operand &data = ins[0], &indices = ins[1];
    Operand &out = outs[0];
    checkSameDType("gather", data, out);
    if (indices.dtype != DType::I32 && indices.dtype != DType::I64)
      fail("gather", "indices must be i32 or i64, got " + dtypeName(indices.dtype));
    const size_t axis = normalizeAxis("gather", args, data.sizes.size());
    std::vector<int64_t> expect(data.sizes.begin(), data.sizes.begin() + static_cast<long>(axis));
    expect.insert(expect.end(), indices.sizes.begin(), indices.sizes.end());
    expect.insert(expect.end(), data.sizes.begin() + static_cast<long>(axis) + 1, data.sizes.end());
    if (expect != out.sizes)
      fail("gather", "output shape " + formatDims(out.sizes) + ", expected " + formatDims(expect));
    launched(hipk::gather(stream_, aligned(out, out.sizes.size()), shapeOf(out.sizes), own(data),
                          static_cast<int>(data.sizes.size()), data.sizes.data(), own(indices),
                          static_cast<int>(indices.sizes.size()), static_cast<int>(axis), errDev_));
    checkDataError("gather");
  }

  void kRange(std::vector<Operand> &ins, std::vector<Operand> &outs) {
    checkArity("range", ins, outs, 2);
    Operand &out = outs[0];
    checkSameDType("range", ins[0], out);
    checkSameDType("range", ins[1], out);
    if (numel(ins[0].sizes) != 1 || numel(ins[1].sizes) != 1 || out.sizes.size() != 1)
      fail("range", "expects one-element start and delta and a 1-D output");
    launched(hipk::range(stream_, own(out), shapeOf(out.sizes), own(ins[0]), own(ins[1])));
  }

  void kRangeLength(std::vector<Operand> &ins, std::vector<Operand> &outs) {
    checkArity("range_length", ins, outs, 3);
    Operand &out = outs[0];
    checkAdmits("range_length", ins[0], kNumericTypes);
    checkSameDType("range_length", ins[0], ins[1]);
    checkSameDType("range_length", ins[0], ins[2]);
    if (out.dtype != DType::I64 || numel(out.sizes) != 1) fail("range_length", "expects a one-element i64 output");
    for (const Operand &x : ins)
      if (numel(x.sizes) != 1) fail("range_length", "expects one-element start, limit and delta");
    launched(hipk::rangeLength(stream_, own(out), own(ins[0]), own(ins[1]), own(ins[2]), errDev_));
    checkDataError("range_length");
  }

  void kFill(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
    checkArity("fill", ins, outs, 0);
    Operand &out = outs[0];
    const bool fl = isFloat(out.dtype);
    if (fl ? args.fattrs.empty() : args.attrs.empty())
      fail("fill", std::string("missing value (") + (fl ? "fimm[0]" : "imm[1]") + ")");
    launched(hipk::fill(stream_, aligned(out, out.sizes.size()), shapeOf(out.sizes),
                        fl ? args.fattrs[0] : 0.0, fl ? 0 : args.attrs[0]));
  }

  /// A matrix operand for the BLAS: pointer to element 0 of batch 0, leading dimension, whether
  /// it is stored column-major (transposed), and the batch stride (elements).
  struct GemmOpd {
    char *ptr = nullptr;
    int64_t ld = 0;
    bool colMajor = false;
    int64_t batchStride = 0;
  };

  /// Describes x[..., R, C] (batch dims aligned to `batch`) for the BLAS, or returns false.
  static bool gemmView(const Operand &x, const std::vector<int64_t> &batch, bool writable, GemmOpd &g) {
    const size_t rx = x.sizes.size();
    const int64_t R = x.sizes[rx - 2], C = x.sizes[rx - 1], sr = x.strides[rx - 2], sc = x.strides[rx - 1];
    // Batch dims x lacks or has as 1 are broadcast: stride 0 over the full batch extent.
    std::vector<int64_t> bs = batch, bst(batch.size(), 0);
    for (size_t d = 0; d + 2 < rx; ++d) {
      const size_t o = d + batch.size() - (rx - 2);
      bst[o] = x.sizes[d] == 1 ? 0 : x.strides[d];
    }
    int64_t bstride = 0;
    if (!batchStride(bs, bst, bstride)) return false;
    if (writable && numel(batch) > 1 && bstride == 0) return false;
    if (bstride < 0) return false;
    const size_t es = dtypeSize(x.dtype);
    if ((sc == 1 || C == 1) && (R == 1 || sr >= C)) {
      g.colMajor = false;
      g.ld = R == 1 ? std::max<int64_t>(C, 1) : sr;
    } else if (!writable && (sr == 1 || R == 1) && (C == 1 || sc >= R)) {
      g.colMajor = true;
      g.ld = C == 1 ? std::max<int64_t>(R, 1) : sc;
    } else {
      return false;
    }
    if (g.ld <= 0 || g.ld > INT32_MAX) return false;
    g.ptr = x.base + x.offset * static_cast<int64_t>(es);
    g.batchStride = bstride;
    return true;
  }

  /// A contiguous device temporary holding x broadcast to [batch..., R, C].
  Operand materialize(const Operand &x, const std::vector<int64_t> &batch, std::vector<void *> &temps) {
    const size_t rx = x.sizes.size();
    std::vector<int64_t> shape = batch;
    shape.push_back(x.sizes[rx - 2]);
    shape.push_back(x.sizes[rx - 1]);
    Operand t;
    t.label = x.label;
    t.dtype = x.dtype;
    t.sizes = shape;
    t.strides.assign(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) t.strides[i - 1] = t.strides[i] * shape[i];
    void *p = nullptr;
    check(hipMallocAsync(&p, std::max<uint64_t>(1, static_cast<uint64_t>(numel(shape)) * dtypeSize(x.dtype)), stream_),
          "matmul temporary");
    temps.push_back(p);
    t.base = static_cast<char *>(p);
    return t;
  }

  /// With DQ_HIP_GEMV=on, one activation row times a row-major weight (the decode step's matmuls)
  /// takes the project's GEMV kernel instead of the BLAS, whose per-call host cost exceeds the
  /// kernel's time at M = 1; end to end the gain is not established yet, so it is opt-in
  /// (docs/devices.md, "Decode GEMV"). False when off or the operands do not fit its preconditions.
  bool tryGemv(const Operand &a, const Operand &b, Operand &out, int64_t M, int64_t K, int64_t N,
               const std::vector<int64_t> &batch) {
    if (!gemvEnabled_ || M != 1 || numel(batch) != 1) return false;
    if (a.dtype != DType::F32 && a.dtype != DType::F16 && a.dtype != DType::BF16) return false;
    const int t = static_cast<int>(a.dtype);
    const int64_t vec = hipk::gemvVectorWidth(t);
    const size_t rb = b.sizes.size(), ro = out.sizes.size(), ra = a.sizes.size();
    const int64_t ldw = K == 1 ? N : b.strides[rb - 2];
    const size_t es = dtypeSize(a.dtype);
    const char *w = b.base + b.offset * static_cast<int64_t>(es);
    if (N % vec != 0 || b.strides[rb - 1] != 1 || ldw < N || ldw % vec != 0 || out.strides[ro - 1] != 1 ||
        reinterpret_cast<uintptr_t>(w) % 16 != 0 || K > INT32_MAX || N > INT32_MAX)
      return false;
    const hipk::GemvPlan plan = hipk::gemvPlan(t, K, N, multiprocessors_);
    if (plan.partialFloats > gemvPartialCap_) {
      if (gemvPartials_) check(hipFreeAsync(gemvPartials_, stream_), "GEMV workspace");
      gemvPartials_ = nullptr;
      check(hipMallocAsync(reinterpret_cast<void **>(&gemvPartials_), plan.partialFloats * sizeof(float), stream_),
            "GEMV workspace");
      gemvPartialCap_ = plan.partialFloats;
    }
    if (plan.chunks > 1 && plan.tiles > gemvCounterCap_) {
      if (gemvCounters_) check(hipFreeAsync(gemvCounters_, stream_), "GEMV counters");
      gemvCounters_ = nullptr;
      check(hipMallocAsync(reinterpret_cast<void **>(&gemvCounters_), plan.tiles * sizeof(unsigned), stream_),
            "GEMV counters");
      check(hipMemsetAsync(gemvCounters_, 0, plan.tiles * sizeof(unsigned), stream_), "GEMV counters");
      gemvCounterCap_ = plan.tiles;
    }
    launched(hipk::gemv(stream_, t, a.base + a.offset * static_cast<int64_t>(es), a.strides[ra - 1], w, ldw,
                        out.base + out.offset * static_cast<int64_t>(es), K, N, plan, gemvPartials_, gemvCounters_));
    return true;
  }

  void kMatmul(std::vector<Operand> &ins, std::vector<Operand> &outs) {
    checkArity("matmul", ins, outs, 2);
    const Operand &a = ins[0], &b = ins[1];
    Operand &out = outs[0];
    checkAdmits("matmul", a, kWideTypes);
    checkSameDType("matmul", a, b);
    checkSameDType("matmul", a, out);
    const size_t ra = a.sizes.size(), rb = b.sizes.size(), ro = out.sizes.size();
    if (ra < 2 || rb < 2 || ro != std::max(ra, rb))
      fail("matmul", "expects ins of rank >= 2 and an output of the larger rank, got " + formatDims(a.sizes) +
                         " x " + formatDims(b.sizes) + " -> " + formatDims(out.sizes));
    const int64_t M = a.sizes[ra - 2], K = a.sizes[ra - 1], N = b.sizes[rb - 1];
    const std::vector<int64_t> batch(out.sizes.begin(), out.sizes.end() - 2);
    bool ok = b.sizes[rb - 2] == K && out.sizes[ro - 2] == M && out.sizes[ro - 1] == N;
    for (const Operand *x : {&a, &b})
      for (size_t d = 0, rx = x->sizes.size() - 2; ok && d < rx; ++d)
        ok = x->sizes[d] == 1 || x->sizes[d] == batch[d + batch.size() - rx];
    if (!ok)
      fail("matmul", formatDims(a.sizes) + " x " + formatDims(b.sizes) + " does not give " +
                         formatDims(out.sizes) + " (a[..., M, K] x b[..., K, N], batch dims broadcast)");
    checkRank(ro);
    if (numel(out.sizes) == 0) return;
    if (!isFloat(a.dtype)) {
      // Integers: a direct kernel (wrap-around, as the sim).
      hipk::Shape bsh = shapeOf(batch);
      auto batchOpd = [&](const Operand &x) {
        Operand v = x;
        v.sizes.resize(x.sizes.size() - 2);
        v.strides.resize(x.strides.size() - 2);
        return aligned(v, batch.size());
      };
      launched(hipk::matmulInt(stream_, batchOpd(out), batchOpd(a), batchOpd(b), bsh, M, K, N,
                               a.strides[ra - 2], a.strides[ra - 1], b.strides[rb - 2], b.strides[rb - 1],
                               out.strides[ro - 2], out.strides[ro - 1]));
      return;
    }
    if (K == 0) {
      launched(hipk::fill(stream_, aligned(out, ro), shapeOf(out.sizes), 0.0, 0));
      return;
    }
    if (tryGemv(a, b, out, M, K, N, batch)) return;
    Operand fa = a, fb = b, fo = out;
    std::vector<int64_t> fbatch = batch;
    int64_t fM = M;
    foldBroadcastBatch(fa, fb, fo, fbatch, fM);
    blasMatmul(fa, fb, fo, fbatch, fM, K, N);
  }

  /// a[..., G, M, K] x b[..., 1, K, N] is a[..., G*M, K] x b[..., K, N] when the rows of a and of
  /// out run on across G. Grouped-query attention has this shape (b, the K/V group, broadcast over
  /// the G query heads of the group); folding G into the rows spares the BLAS a broadcast copy of b
  /// per call and gives it one taller GEMM per group. Folds innermost batch dims while that holds.
  static void foldBroadcastBatch(Operand &a, Operand &b, Operand &out, std::vector<int64_t> &batch, int64_t &M) {
    while (!batch.empty() && batch.back() > 1) {
      const size_t ra = a.sizes.size(), rb = b.sizes.size(), ro = out.sizes.size();
      const int64_t G = batch.back();
      if (ra != ro || ra < 3 || a.sizes[ra - 3] != G || (rb >= 3 && b.sizes[rb - 3] != 1)) return;
      auto rowStride = [&](const Operand &x, size_t r, int64_t &stride) {
        stride = M == 1 ? x.strides[r - 3] : x.strides[r - 2];
        return M == 1 || x.strides[r - 3] == M * x.strides[r - 2];
      };
      int64_t sa = 0, so = 0;
      if (!rowStride(a, ra, sa) || !rowStride(out, ro, so)) return;
      auto fold = [&](Operand &x, size_t r, int64_t stride) {
        x.sizes[r - 3] = G * M;
        x.strides[r - 3] = stride;
        x.sizes.erase(x.sizes.begin() + static_cast<std::ptrdiff_t>(r - 2));
        x.strides.erase(x.strides.begin() + static_cast<std::ptrdiff_t>(r - 2));
      };
      fold(a, ra, sa);
      fold(out, ro, so);
      if (rb >= 3) {
        b.sizes.erase(b.sizes.begin() + static_cast<std::ptrdiff_t>(rb - 3));
        b.strides.erase(b.strides.begin() + static_cast<std::ptrdiff_t>(rb - 3));
      }
      batch.pop_back();
      M *= G;
    }
  }

  /// Float matmul through the vendor BLAS: strided-batched GEMM on views it can read, device
  /// copies of operands it cannot.
  void blasMatmul(const Operand &a, const Operand &b, Operand &out, const std::vector<int64_t> &batch, int64_t M,
                  int64_t K, int64_t N) {
    if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX || numel(batch) > INT32_MAX)
      throw RuntimeError("unsupported: kernel 'matmul' on hip: dims beyond the BLAS int range");
    std::vector<void *> temps;
    GemmOpd ga, gb, gc;
    Operand am = a, bm = b;
    if (!gemmView(a, batch, false, ga)) {
      am = materialize(a, batch, temps);
      copyView(am, a);
      gemmView(am, batch, false, ga);
    }
    if (!gemmView(b, batch, false, gb)) {
      bm = materialize(b, batch, temps);
      copyView(bm, b);
      gemmView(bm, batch, false, gb);
    }
    Operand om = out;
    const bool direct = gemmView(out, batch, true, gc);
    if (!direct) {
      om = materialize(out, batch, temps);
      gemmView(om, batch, true, gc);
    }
    // Row-major C[M,N] = A[M,K] B[K,N] is column-major C^T[N,M] = B^T[N,K] A^T[K,M].
    hipblasDatatype_t t;
    hipblasComputeType_t ct = HIPBLAS_COMPUTE_32F;
    const float one = 1.0f, zero = 0.0f;
    const double oned = 1.0, zerod = 0.0;
    const void *alpha = &one, *beta = &zero;
    switch (a.dtype) {
    case DType::F32: t = HIPBLAS_R_32F; break;
    case DType::F16: t = HIPBLAS_R_16F; break;
    case DType::BF16: t = HIPBLAS_R_16B; break;
    default: t = HIPBLAS_R_64F; ct = HIPBLAS_COMPUTE_64F; alpha = &oned; beta = &zerod; break;
    }
    const int64_t batchCount = std::max<int64_t>(1, numel(batch));
    hipblasStatus_t st = hipblasGemmStridedBatchedEx(
        blas_, gb.colMajor ? HIPBLAS_OP_T : HIPBLAS_OP_N, ga.colMajor ? HIPBLAS_OP_T : HIPBLAS_OP_N,
        static_cast<int>(N), static_cast<int>(M), static_cast<int>(K), alpha, gb.ptr, t,
        static_cast<int>(gb.ld), gb.batchStride, ga.ptr, t, static_cast<int>(ga.ld), ga.batchStride, beta,
        gc.ptr, t, static_cast<int>(gc.ld), gc.batchStride, static_cast<int>(batchCount), ct,
        HIPBLAS_GEMM_DEFAULT);
    pending_ = true;
    if (st != HIPBLAS_STATUS_SUCCESS) {
      for (void *p : temps) (void)hipFreeAsync(p, stream_);
      throw RuntimeError(std::string("kernel 'matmul' on hip: BLAS gemm failed: ") + hipblasStatusToString(st));
    }
    if (!direct) copyView(out, om);
    for (void *p : temps) (void)hipFreeAsync(p, stream_);
  }

  void kSoftmax(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args,
                bool logOut = false) {
    const char *kernel = logOut ? "log_softmax" : "softmax";
    checkArity(kernel, ins, outs, 1);
    const Operand &in = ins[0];
    Operand &out = outs[0];
    checkAdmits(kernel, in, kFloatTypes);
    checkSameDType(kernel, in, out);
    checkShape(kernel, out, in.sizes);
    const size_t axis = axisAttr(kernel, args, 0, in.sizes.size(), false);
    lineKernel(in, out, axis, [&](hipk::Opd o, hipk::Opd i, hipk::Shape lines, int64_t n, int64_t si, int64_t so) {
      return hipk::softmax(stream_, o, i, lines, n, si, so, logOut);
    });
  }

  void kLeakyRelu(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
    checkArity("leaky_relu", ins, outs, 1);
    const Operand &in = ins[0];
    Operand &out = outs[0];
    checkAdmits("leaky_relu", in, kFloatTypes);
    checkSameDType("leaky_relu", in, out);
    checkShape("leaky_relu", out, in.sizes);
    if (args.fattrs.size() != 1) fail("leaky_relu", "expects alpha as fimm[0]");
    const size_t r = out.sizes.size();
    launched(hipk::leakyRelu(stream_, aligned(out, r), aligned(in, r), shapeOf(out.sizes), args.fattrs[0]));
  }

  void kArgExtreme(const char *kernel, bool isMax, std::vector<Operand> &ins, std::vector<Operand> &outs,
                   const KernelArgs &args) {
    checkArity(kernel, ins, outs, 1);
    const Operand &in = ins[0];
    Operand &out = outs[0];
    checkAdmits(kernel, in, kNumericTypes);
    checkDType(kernel, out, DType::I64);
    const size_t axis = axisAttr(kernel, args, 0, in.sizes.size(), false);
    const bool last = flagAttr(kernel, args, 1, "select_last_index");
    std::vector<int64_t> expect = in.sizes;
    expect[axis] = 1;
    checkShape(kernel, out, expect);
    if (in.sizes[axis] == 0 && numel(expect) > 0) fail(kernel, "the reduced axis has extent 0");
    lineKernel(in, out, axis, [&](hipk::Opd o, hipk::Opd i, hipk::Shape lines, int64_t n, int64_t si, int64_t) {
      return hipk::argExtreme(stream_, o, i, lines, n, si, isMax, last);
    });
  }

  void kOneHot(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
    checkArity("one_hot", ins, outs, 2);
    const Operand &indices = ins[0], &values = ins[1];
    Operand &out = outs[0];
    checkAdmits("one_hot", indices, kNumericTypes);
    checkSameDType("one_hot", values, out);
    if (values.sizes.size() != 1 || values.sizes[0] != 2)
      fail("one_hot", values.label + " shape " + formatDims(values.sizes) + ", expected [2] (off, on)");
    const size_t r = out.sizes.size();
    const size_t axis = axisAttr("one_hot", args, 0, r, false);
    std::vector<int64_t> expect = indices.sizes;
    expect.insert(expect.begin() + static_cast<long>(axis), out.sizes[axis]);
    checkShape("one_hot", out, expect);
    // Indices aligned to out: their dims skip the depth axis, which gets stride 0.
    checkRank(r);
    hipk::Opd idx = own(indices);
    size_t k = 0;
    for (size_t d = 0; d < r; ++d) {
      if (d == axis) {
        idx.strides[d] = 0;
      } else {
        idx.strides[d] = indices.sizes[k] == 1 ? 0 : indices.strides[k];
        ++k;
      }
    }
    launched(hipk::oneHot(stream_, aligned(out, r), shapeOf(out.sizes), idx, own(values), values.offset,
                          values.offset + values.strides[0], static_cast<int>(axis)));
  }

  template <typename F> void lineKernel(const Operand &in, const Operand &out, size_t axis, F &&f) {
    std::vector<int64_t> lines = in.sizes;
    const int64_t n = lines[axis];
    lines[axis] = 1;
    const size_t r = in.sizes.size();
    const int64_t si = n == 1 ? 0 : in.strides[axis], so = n == 1 ? 0 : out.strides[axis];
    launched(f(aligned(out, r), aligned(in, r), shapeOf(lines), n, si, so));
  }

  void kLayerNorm(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
    if ((ins.size() != 2 && ins.size() != 3) || outs.size() != 1)
      fail("layer_norm", "expects 2 or 3 inputs (X, scale[, bias]) and 1 output, got " +
                             std::to_string(ins.size()) + " and " + std::to_string(outs.size()));
    const Operand &x = ins[0];
    Operand &out = outs[0];
    checkAdmits("layer_norm", x, kFloatTypes);
    for (size_t i = 1; i < ins.size(); ++i) {
      checkSameDType("layer_norm", ins[i], x);
      checkBroadcast("layer_norm", ins[i], out);
    }
    checkSameDType("layer_norm", x, out);
    checkShape("layer_norm", out, x.sizes);
    const size_t rank = x.sizes.size();
    const size_t axis = axisAttr("layer_norm", args, 0, rank, true);
    if (args.fattrs.empty()) fail("layer_norm", "missing epsilon (fimm[0])");
    std::vector<int64_t> rows = x.sizes, inner = x.sizes;
    for (size_t d = 0; d < rank; ++d) (d < axis ? inner : rows)[d] = 1;
    const bool hasBias = ins.size() == 3;
    launched(hipk::layerNorm(stream_, aligned(out, rank), aligned(x, rank), aligned(ins[1], rank),
                             hasBias ? aligned(ins[2], rank) : hipk::Opd{}, hasBias, shapeOf(rows),
                             shapeOf(inner), args.fattrs[0]));
  }

  void kReduce(const char *kernel, int kind, std::vector<Operand> &ins, std::vector<Operand> &outs,
               const KernelArgs &args) {
    checkArity(kernel, ins, outs, 1);
    const Operand &in = ins[0];
    Operand &out = outs[0];
    checkAdmits(kernel, in, kind == 2 || kind == 3 ? kAllTypes : kWideTypes);
    checkSameDType(kernel, in, out);
    const size_t rank = in.sizes.size();
    std::vector<int64_t> extent(rank, 1), expect = in.sizes;
    std::vector<int64_t> axes = args.attrs;
    if (!args.scalars.empty()) {
      if (!args.attrs.empty() || args.scalars.size() != rank)
        fail(kernel, "expects either axes in imm or one 0/1 flag scalar per input axis (" + std::to_string(rank) +
                         "), not both");
      axes.clear();
      for (size_t d = 0; d < rank; ++d) {
        if (args.scalars[d] != 0 && args.scalars[d] != 1)
          fail(kernel, "axis flag s[" + std::to_string(d) + "] must be 0 or 1");
        if (args.scalars[d] == 1) axes.push_back(static_cast<int64_t>(d));
      }
    }
    for (size_t k = 0; k < axes.size(); ++k) {
      const int64_t a = axes[k];
      if (a < 0 || static_cast<size_t>(a) >= rank || (k > 0 && a <= axes[k - 1]))
        fail(kernel, "axes " + formatDims(axes) + " must be strictly increasing in [0, " + std::to_string(rank) + ")");
      extent[static_cast<size_t>(a)] = in.sizes[static_cast<size_t>(a)];
      expect[static_cast<size_t>(a)] = 1;
    }
    checkShape(kernel, out, expect);
    const int64_t count = numel(extent);
    if (count == 0 && numel(out.sizes) > 0) {
      try {
        if (kind == 2 || kind == 3)
          throw RuntimeError(std::string(kernel) + " over an empty extent " + formatDims(extent));
        if ((kind == 1 || kind == 7) && !isFloat(in.dtype))
          throw RuntimeError(std::string("integer ") + kernel + " over an empty extent " + formatDims(extent));
      } catch (const RuntimeError &e) {
        fail(kernel, e.what());
      }
    }
    launched(hipk::reduce(stream_, kind, aligned(out, rank), own(in), shapeOf(expect), shapeOf(extent)));
  }

  void kTrilu(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
    checkArity("trilu", ins, outs, 1);
    const Operand &in = ins[0];
    Operand &out = outs[0];
    checkSameDType("trilu", in, out);
    checkShape("trilu", out, in.sizes);
    const size_t r = in.sizes.size();
    if (r < 2) fail("trilu", "expects rank >= 2, got " + formatDims(in.sizes));
    const bool upper = flagAttr("trilu", args, 0, "upper");
    if (args.scalars.size() != 1) fail("trilu", "expects one scalar operand (k)");
    launched(hipk::copy(stream_, upper ? hipk::kCopyTriluUpper : hipk::kCopyTriluLower, aligned(out, r),
                        aligned(in, r), {}, {}, shapeOf(out.sizes), args.scalars[0]));
  }

  void kCumsum(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
    checkArity("cumsum", ins, outs, 1);
    const Operand &in = ins[0];
    Operand &out = outs[0];
    checkAdmits("cumsum", in, kWideTypes);
    checkSameDType("cumsum", in, out);
    checkShape("cumsum", out, in.sizes);
    size_t axis = 0;
    if (args.scalars.empty()) {
      axis = axisAttr("cumsum", args, 0, in.sizes.size(), true);
    } else {
      const int64_t r = static_cast<int64_t>(in.sizes.size()), a = args.scalars[0];
      if (args.scalars.size() != 1 || a < -r || a >= r)
        fail("cumsum", "axis s[0] = " + std::to_string(a) + " out of range for rank " + std::to_string(r));
      axis = static_cast<size_t>(a < 0 ? a + r : a);
    }
    const bool exclusive = flagAttr("cumsum", args, 1, "exclusive");
    const bool reverse = flagAttr("cumsum", args, 2, "reverse");
    lineKernel(in, out, axis, [&](hipk::Opd o, hipk::Opd i, hipk::Shape lines, int64_t n, int64_t si, int64_t so) {
      return hipk::cumsum(stream_, o, i, lines, n, si, so, exclusive, reverse);
    });
  }

  void kGatherElements(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
    checkArity("gather_elements", ins, outs, 2);
    const Operand &data = ins[0], &indices = ins[1];
    Operand &out = outs[0];
    checkSameDType("gather_elements", data, out);
    checkAdmits("gather_elements", indices, kIndexTypes);
    checkShape("gather_elements", out, indices.sizes);
    const size_t r = data.sizes.size();
    const size_t axis = axisAttr("gather_elements", args, 0, r, true);
    bool ok = indices.sizes.size() == r;
    for (size_t d = 0; ok && d < r; ++d) ok = d == axis || indices.sizes[d] <= data.sizes[d];
    if (!ok)
      fail("gather_elements", "indices shape " + formatDims(indices.sizes) + " does not fit data " +
                                  formatDims(data.sizes) + " (same rank, no larger off axis " +
                                  std::to_string(axis) + ")");
    launched(hipk::gatherElements(stream_, aligned(out, r), shapeOf(out.sizes), own(data), data.sizes.data(),
                                  aligned(indices, r), static_cast<int>(axis), errDev_));
    checkDataError("gather_elements");
  }

  void kGatherND(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
    checkArity("gather_nd", ins, outs, 2);
    const Operand &data = ins[0], &indices = ins[1];
    Operand &out = outs[0];
    checkSameDType("gather_nd", data, out);
    checkAdmits("gather_nd", indices, kIndexTypes);
    const size_t r = data.sizes.size(), q = indices.sizes.size();
    if (args.attrs.empty() || args.attrs[0] < 0 || static_cast<size_t>(args.attrs[0]) >= std::min(q, r))
      fail("gather_nd", "batch_dims (imm[1]) must be in [0, min(data rank, indices rank)) = [0, " +
                            std::to_string(std::min(q, r)) + ")");
    const size_t b = static_cast<size_t>(args.attrs[0]);
    const int64_t m = indices.sizes[q - 1];
    if (m < 1 || static_cast<size_t>(m) > r - b)
      fail("gather_nd", "the last indices dim is " + std::to_string(m) + ", must be in [1, " +
                            std::to_string(r - b) + "] (data rank - batch_dims)");
    for (size_t d = 0; d < b; ++d)
      if (data.sizes[d] != indices.sizes[d])
        fail("gather_nd", "batch dim " + std::to_string(d) + " differs: data " + formatDims(data.sizes) +
                              ", indices " + formatDims(indices.sizes));
    std::vector<int64_t> expect(indices.sizes.begin(), indices.sizes.end() - 1);
    expect.insert(expect.end(), data.sizes.begin() + static_cast<long>(b) + m, data.sizes.end());
    checkShape("gather_nd", out, expect);
    launched(hipk::gatherND(stream_, aligned(out, out.sizes.size()), shapeOf(out.sizes), own(data),
                            static_cast<int>(r), data.sizes.data(), own(indices), static_cast<int>(q),
                            static_cast<int>(b), static_cast<int>(m), errDev_));
    checkDataError("gather_nd");
  }

  // ---- data-dependent and shape-input ops (kernels in HipDataDependentKernels.hip) ----

  void checkCounts(const std::string &k, const std::vector<Operand> &ins, const std::vector<Operand> &outs,
                   size_t minIns, size_t maxIns, size_t nOuts) {
    if (ins.size() < minIns || ins.size() > maxIns || outs.size() != nOuts)
      fail(k, "expects " + std::to_string(minIns) + (maxIns != minIns ? "-" + std::to_string(maxIns) : "") +
                  " inputs and " + std::to_string(nOuts) + " outputs, got " + std::to_string(ins.size()) +
                  " and " + std::to_string(outs.size()));
  }

  int64_t immAt(const std::string &k, const KernelArgs &args, size_t i, const char *what) {
    if (args.attrs.size() <= i) fail(k, std::string("missing imm[") + std::to_string(i + 1) + "] (" + what + ")");
    return args.attrs[i];
  }

  void kCountNonzero(std::vector<Operand> &ins, std::vector<Operand> &outs) {
    checkCounts("count_nonzero", ins, outs, 1, 1, 1);
    checkDType("count_nonzero", outs[0], DType::I64);
    if (numel(outs[0].sizes) != 1) fail("count_nonzero", "the output must hold one element");
    launched(hipk::countNonzero(stream_, own(outs[0]), own(ins[0]), shapeOf(ins[0].sizes)));
  }

  void kNonzero(std::vector<Operand> &ins, std::vector<Operand> &outs) {
    checkCounts("nonzero", ins, outs, 1, 1, 1);
    const Operand &x = ins[0];
    Operand &out = outs[0];
    checkDType("nonzero", out, DType::I64);
    const int64_t r = static_cast<int64_t>(x.sizes.size());
    if (out.sizes.size() != 2 || out.sizes[0] != r)
      fail("nonzero", out.label + " shape " + formatDims(out.sizes) + ", expected [" + std::to_string(r) + ", n]");
    launched(hipk::nonzero(stream_, own(out), own(x), shapeOf(x.sizes), out.sizes[1], errDev_));
    checkDataError("nonzero");
  }

  void kCompress(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
    checkCounts("compress", ins, outs, 2, 2, 1);
    const Operand &data = ins[0], &cond = ins[1];
    Operand &out = outs[0];
    if (cond.sizes.size() != 1) fail("compress", "the condition must have rank 1");
    checkSameDType("compress", data, out);
    const int64_t axis = immAt("compress", args, 0, "axis");
    if (axis < 0 || axis >= static_cast<int64_t>(data.sizes.size()))
      fail("compress", "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(data.sizes.size()));
    if (out.sizes.size() != data.sizes.size())
      fail("compress", out.label + " shape " + formatDims(out.sizes) + " does not match data " + formatDims(data.sizes));
    for (size_t d = 0; d < data.sizes.size(); ++d)
      if (static_cast<int64_t>(d) != axis && out.sizes[d] != data.sizes[d])
        fail("compress", out.label + " shape " + formatDims(out.sizes) + " does not match data " + formatDims(data.sizes));
    // The out extent is the read-back count; the kernel trusts it, as the count kernel produced it.
    launched(hipk::compress(stream_, own(out), shapeOf(out.sizes), own(data), own(cond), cond.sizes[0],
                            static_cast<int>(axis), data.sizes[static_cast<size_t>(axis)], errDev_));
    checkDataError("compress");
  }

  void kTopK(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
    checkCounts("top_k", ins, outs, 1, 1, 2);
    const Operand &x = ins[0];
    Operand &values = outs[0], &indices = outs[1];
    checkAdmits("top_k", x, kNumericTypes);
    checkSameDType("top_k", x, values);
    checkDType("top_k", indices, DType::I64);
    const int64_t axis = immAt("top_k", args, 0, "axis");
    const bool largest = immAt("top_k", args, 1, "largest") != 0;
    if (axis < 0 || axis >= static_cast<int64_t>(x.sizes.size()))
      fail("top_k", "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(x.sizes.size()));
    const size_t a = static_cast<size_t>(axis);
    const int64_t n = x.sizes[a], k = values.sizes.size() == x.sizes.size() ? values.sizes[a] : -1;
    if (k < 0 || k > n) fail("top_k", "k = " + std::to_string(k) + " is outside [0, " + std::to_string(n) + "]");
    std::vector<int64_t> expect = x.sizes, lines = x.sizes;
    expect[a] = k;
    lines[a] = 1;
    checkShape("top_k", values, expect);
    checkShape("top_k", indices, expect);
    launched(hipk::topK(stream_, own(values), own(indices), own(x), shapeOf(lines), static_cast<int>(a), n, k,
                        largest));
  }

  void kTile(std::vector<Operand> &ins, std::vector<Operand> &outs) {
    checkCounts("tile", ins, outs, 1, 1, 1);
    const Operand &x = ins[0];
    Operand &out = outs[0];
    checkSameDType("tile", x, out);
    bool ok = out.sizes.size() == x.sizes.size();
    for (size_t d = 0; ok && d < x.sizes.size(); ++d)
      ok = x.sizes[d] == 0 ? out.sizes[d] == 0 : out.sizes[d] % x.sizes[d] == 0;
    if (!ok) fail("tile", out.label + " shape " + formatDims(out.sizes) + " is not a multiple of " + formatDims(x.sizes));
    launched(hipk::tile(stream_, own(out), shapeOf(out.sizes), own(x), x.sizes.data()));
  }

  void kPad(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
    checkCounts("pad", ins, outs, 1, 2, 1);
    const Operand &x = ins[0];
    Operand &out = outs[0];
    checkSameDType("pad", x, out);
    const int64_t mode = immAt("pad", args, 0, "mode");
    if (mode < 0 || mode > 2) fail("pad", "mode " + std::to_string(mode) + " is not 0 (constant), 1 (reflect) or 2 (edge)");
    const size_t r = x.sizes.size();
    if (out.sizes.size() != r || args.scalars.size() != r)
      fail("pad", "expects an output of rank " + std::to_string(r) + " and one begin pad per axis");
    hipk::Opd value;
    if (ins.size() == 2) {
      checkSameDType("pad", x, ins[1]);
      if (numel(ins[1].sizes) != 1) fail("pad", "the constant value must hold one element");
      value = own(ins[1]);
    }
    launched(hipk::pad(stream_, own(out), shapeOf(out.sizes), own(x), x.sizes.data(), args.scalars.data(),
                       static_cast<int>(mode), value, ins.size() == 2, errDev_));
    checkDataError("pad");
  }

  int reductionOf(const std::string &k, const KernelArgs &args, size_t i) {
    const int64_t red = immAt(k, args, i, "reduction");
    if (red < 0 || red > 4) fail(k, "reduction " + std::to_string(red) + " is not in [0, 4]");
    return static_cast<int>(red);
  }

  void kScatterND(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
    const std::string k = "scatter_nd";
    checkCounts(k, ins, outs, 3, 3, 1);
    const Operand &data = ins[0], &indices = ins[1], &updates = ins[2];
    Operand &out = outs[0];
    checkAdmits(k, indices, kIndexTypes);
    checkSameDType(k, data, updates);
    checkSameDType(k, data, out);
    checkShape(k, out, data.sizes);
    const int red = reductionOf(k, args, 0);
    const size_t r = data.sizes.size(), q = indices.sizes.size();
    if (r < 1 || q < 1) fail(k, "data and indices must have rank >= 1");
    const int64_t m = indices.sizes[q - 1];
    if (m < 1 || static_cast<size_t>(m) > r)
      fail(k, "the last indices dim is " + std::to_string(m) + ", must be in [1, " + std::to_string(r) + "]");
    std::vector<int64_t> tuples(indices.sizes.begin(), indices.sizes.end() - 1);
    std::vector<int64_t> slice(data.sizes.begin() + m, data.sizes.end());
    std::vector<int64_t> expect = tuples;
    expect.insert(expect.end(), slice.begin(), slice.end());
    checkShape(k, updates, expect);
    copyView(out, data);
    launched(hipk::scatterND(stream_, own(out), data.sizes.data(), static_cast<int>(r), own(indices), shapeOf(tuples),
                             static_cast<int>(m), own(updates), shapeOf(slice), red, errDev_));
    checkDataError(k);
  }

  void kScatterElements(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
    const std::string k = "scatter_elements";
    checkCounts(k, ins, outs, 3, 3, 1);
    const Operand &data = ins[0], &indices = ins[1], &updates = ins[2];
    Operand &out = outs[0];
    checkAdmits(k, indices, kIndexTypes);
    checkSameDType(k, data, updates);
    checkSameDType(k, data, out);
    checkShape(k, out, data.sizes);
    const size_t r = data.sizes.size();
    const int64_t axis = immAt(k, args, 0, "axis");
    const int red = reductionOf(k, args, 1);
    if (axis < 0 || axis >= static_cast<int64_t>(r))
      fail(k, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(r));
    bool ok = indices.sizes.size() == r && updates.sizes == indices.sizes;
    for (size_t d = 0; ok && d < r; ++d) ok = static_cast<int64_t>(d) == axis || indices.sizes[d] <= data.sizes[d];
    if (!ok)
      fail(k, "indices " + formatDims(indices.sizes) + " and updates " + formatDims(updates.sizes) +
                  " must have one shape that fits data " + formatDims(data.sizes));
    copyView(out, data);
    launched(hipk::scatterElements(stream_, own(out), data.sizes.data(), own(indices), own(updates),
                                   shapeOf(indices.sizes), static_cast<int>(axis), red, errDev_));
    checkDataError(k);
  }

  // Freed device blocks by exact size, handed to the next allocation of that size. A decode step
  // allocates the same sizes layer after layer and step after step, and even the driver's
  // stream-ordered pool costs microseconds per call. One stream orders all work, so a block's
  // new owner runs after everything its old owner enqueued.
  static constexpr uint64_t kFreeBlockCap = uint64_t{512} << 20;
  std::unordered_map<uint64_t, std::vector<char *>> freeBlocks_;
  uint64_t freeBlockBytes_ = 0;
  std::map<BufferHandle, Allocation> allocations_;
  BufferHandle nextHandle_ = 1;
  uint64_t liveDeviceBytes_ = 0;
  Counters counters_;
  hipStream_t stream_ = nullptr;
  std::unique_ptr<HipProfile> profile_;  ///< DQ_HIP_PROFILE=1 only
  hipblasHandle_t blas_ = nullptr;
  int multiprocessors_ = 1;
  bool gemvEnabled_ = false;  ///< DQ_HIP_GEMV=on: M = 1 matmuls take the GEMV, not the BLAS
  float *gemvPartials_ = nullptr;  ///< GEMV split-K workspace, grown on demand (fp32 elements)
  int64_t gemvPartialCap_ = 0;
  unsigned *gemvCounters_ = nullptr;  ///< one per column tile, zero between launches
  int64_t gemvCounterCap_ = 0;
  hipk::DevError *errHost_ = nullptr, *errDev_ = nullptr;
  bool pending_ = false;  ///< work was enqueued since the last stream synchronization
  /// Host-visible byte ranges written by device work since the last synchronize(), per buffer.
  std::map<BufferHandle, std::vector<std::pair<uint64_t, uint64_t>>> pendingWrites_;
};

}  // namespace

bool hipDeviceAvailable(std::string *reason) {
  int n = 0;
  hipError_t e = hipGetDeviceCount(&n);
  if (e != hipSuccess || n == 0) {
    if (reason)
      *reason = std::string("no GPU: hipGetDeviceCount: ") +
                (e != hipSuccess ? hipGetErrorString(e) : "0 devices");
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

std::unique_ptr<Device> createHipDevice() { return std::make_unique<HipDevice>(); }

}  // namespace dq::rt
