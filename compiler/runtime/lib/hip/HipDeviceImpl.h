// Internal to the `hip` device: the HipDevice class. Its members are defined by job: memory,
// transfers and synchronization (HipDevice.cpp), launch and the elementwise, data-movement and
// index kernels (HipLaunch.cpp), matmul (HipMatmul.cpp), the per-line kernels (softmax,
// reductions, layer norm, cumsum; HipLineKernelLaunch.cpp) and the data-dependent and
// shape-input kernels (HipDataDependentLaunch.cpp).
#pragma once

#include "HipOperands.h"
#include "HipProfile.h"

#include <map>
#include <memory>
#include <unordered_map>

namespace dq::rt::hipdev {

struct ElemInfo; ///< an elementwise kernel's name, op code and admitted types (HipLaunch.cpp)

class HipDevice final : public Device {
public:
  HipDevice();

  ~HipDevice() override;

  std::string name() const override { return "hip"; }

  BufferHandle allocate(MemSpace space, uint64_t bytes, AllocPurpose purpose) override;

  void free(BufferHandle buffer) override;

  void poison(BufferHandle buffer, uint64_t offset, uint64_t bytes) override;
  void discard(BufferHandle buffer, uint64_t offset, uint64_t bytes) override;
  uint64_t bufferBytes(BufferHandle buffer) const override { return live(buffer, "bufferBytes").size; }
  MemSpace bufferSpace(BufferHandle buffer) const override { return live(buffer, "bufferSpace").space; }

  void upload(BufferHandle dst, uint64_t dstOffset, const void *src, uint64_t bytes) override;

  void download(void *dst, BufferHandle src, uint64_t srcOffset, uint64_t bytes) override;

  void memcpy(BufferHandle dst, uint64_t dstOffset, BufferHandle src, uint64_t srcOffset, uint64_t bytes) override;

  void copy2D(BufferHandle dst, uint64_t dstOffset, uint64_t dstPitch, BufferHandle src, uint64_t srcOffset,
              uint64_t srcPitch, uint64_t rowBytes, uint64_t rows) override;

  void copyStrided(const BufferView &dst, const BufferView &src) override;

  void launch(const std::string &kernel, const std::vector<BufferView> &ins, const std::vector<BufferView> &outs,
              const KernelArgs &args) override;

  static std::string profileLabel(const std::string &kernel, const std::vector<Operand> &ins,
                                  const std::vector<Operand> &outs);

  void synchronize() override;

  void readback(void *dst, BufferHandle src, uint64_t offset, uint64_t bytes) override;

  void hostLoad(void *dst, BufferHandle src, uint64_t offset, uint64_t bytes) override;

  void hostStore(BufferHandle dst, uint64_t offset, const void *src, uint64_t bytes) override;

  Counters counters() const override { return counters_; }
  void resetCounters() override;

private:
  struct Allocation {
    MemSpace space = MemSpace::Device;
    uint64_t size = 0;      ///< bytes asked for; every check uses this
    uint64_t block = 0;     ///< bytes of the device block behind it (blockBytes(size)), Device only
    char *ptr = nullptr;    ///< host-side pointer for host spaces, device pointer for Device
    char *devPtr = nullptr; ///< what kernels use
  };

  /// The device block size for an allocation of `bytes`: multiples of 256 B up to 4 KiB, then 8
  /// size classes per power of two (at most 12.5 % unused) up to kRoundedBlockMax, exact above.
  /// A buffer that grows by one row per decode step (the KV cache, the attention scores) then
  /// takes the block the previous step freed instead of a new one from the driver.
  static uint64_t blockBytes(uint64_t bytes);
  static constexpr uint64_t kRoundedBlockMax = uint64_t{16} << 20;

  /// Takes a cached freed block of exactly `bytes` (see freeBlocks_), or returns false.
  bool reuseBlock(uint64_t bytes, char *&ptr);

  void dropFreeBlocks();

  void release(Allocation &a);

  const Allocation &live(BufferHandle buffer, const char *what) const {
    auto it = allocations_.find(buffer);
    if (it != allocations_.end()) return it->second;
    if (buffer > 0 && buffer < nextHandle_)
      throw RuntimeError(std::string("use after free: ") + what + " touches " + bufferName(buffer) +
                         ", which was freed");
    throw RuntimeError(std::string(what) + ": unknown " + bufferName(buffer));
  }

  void checkRange(const Allocation &a, BufferHandle buffer, uint64_t offset, uint64_t bytes, const char *what) const {
    kernel::checkByteRange(a.size, buffer, offset, bytes, what);
  }

  void checkDeviceVisible(BufferHandle buffer, const char *what) const {
    kernel::checkDeviceVisible(live(buffer, what).space, buffer, what);
  }

  void countTransfer(MemSpace dst, MemSpace src, uint64_t bytes);

  /// Records a device write of bytes [begin, end) of `buffer` when it is host-visible.
  void markDeviceWrite(BufferHandle buffer, const Allocation &a, uint64_t begin, uint64_t end);
  void markDeviceWrite(const BufferView &v);

  /// Waits for the stream without counting a sync (host access to memory the GPU may touch).
  void syncQuiet();
  void waitForHost() {
    if (pending_) syncQuiet();
  }

  void transfer(const Allocation &d, uint64_t doff, const Allocation &s, uint64_t soff, uint64_t bytes,
                const char *what);

  /// Resolves a view to a checked operand in `o` (reusing o's vectors): the buffer is live, the
  /// view lies inside it. Throws RuntimeError naming `role index (buffer #N)` otherwise.
  void makeOperand(const BufferView &v, const char *role, int index, Operand &o,
                   const std::string *kernel = nullptr) const;
  /// makeOperand for a kernel operand, which must also be device-visible.
  void resolveOperand(const BufferView &v, const char *role, int index, const std::string &kernel, Operand &o) const;

  void launched(hipError_t e) {
    pending_ = true;
    if (e != hipSuccess) throw RuntimeError("kernel '" + gKernel + "' on hip: launch failed: " + hipGetErrorString(e));
  }

  /// Synchronizes (uncounted) and turns an error a kernel reported into the sim's message.
  void checkDataError(const std::string &kernel);

  void copyView(const Operand &dst, const Operand &src);

  // ---- dispatch ----

  /// A kernel's host side: an elementwise op (elem) or a function that checks and launches.
  struct KernelEntry {
    const ElemInfo *elem = nullptr;
    void (*run)(HipDevice &, std::vector<Operand> &, std::vector<Operand> &, const KernelArgs &) = nullptr;
  };
  /// The entry for a Program.h kernel name, or nullptr when hip has no such kernel.
  static const KernelEntry *findKernel(const std::string &name);

  void runElem(const ElemInfo &op, std::vector<Operand> &ins, std::vector<Operand> &outs);

  void kWhere(std::vector<Operand> &ins, std::vector<Operand> &outs);

  /// "fused_elementwise": the step program of Program.h in one launch (HipFusedElementwise.hip).
  void kFusedElementwise(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args);

  void kCast(std::vector<Operand> &ins, std::vector<Operand> &outs);

  void kExpand(std::vector<Operand> &ins, std::vector<Operand> &outs);

  void kSlice(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args);

  void kTranspose(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args);

  void kConcat(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args);

  void kGather(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args);

  void kRange(std::vector<Operand> &ins, std::vector<Operand> &outs);

  void kRangeLength(std::vector<Operand> &ins, std::vector<Operand> &outs);

  void kFill(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args);

  /// A matrix operand for the BLAS: pointer to element 0 of batch 0, leading dimension, whether
  /// it is stored column-major (transposed), and the batch stride (elements).
  struct GemmOpd {
    char *ptr = nullptr;
    int64_t ld = 0;
    bool colMajor = false;
    int64_t batchStride = 0;
  };

  /// Describes x[..., R, C] (batch dims aligned to `batch`) for the BLAS, or returns false.
  static bool gemmView(const Operand &x, const std::vector<int64_t> &batch, bool writable, GemmOpd &g);

  /// A contiguous device temporary holding x broadcast to [batch..., R, C].
  Operand materialize(const Operand &x, const std::vector<int64_t> &batch, std::vector<void *> &temps);

  /// With DQ_HIP_GEMV=on, one activation row times a row-major weight (the decode step's matmuls)
  /// takes the project's GEMV kernel instead of the BLAS, whose per-call host cost exceeds the
  /// kernel's time at M = 1; end to end the gain is not established yet, so it is opt-in
  /// (docs/devices.md, "Decode GEMV"). False when off or the operands do not fit its preconditions.
  bool tryGemv(const Operand &a, const Operand &b, Operand &out, int64_t M, int64_t K, int64_t N,
               const std::vector<int64_t> &batch);

  /// True for the float products the direct kernel (hipk::matmulSmall) takes instead of the BLAS:
  /// a batch of more than one product with M <= 16 rows, K <= 8192 and at most 2^20 outputs, as
  /// decode-step attention (one query row per head against the cached keys, then the values).
  /// There the BLAS's host cost per call (about 20 µs of heuristics and argument setup) is several
  /// times the kernel's. Opt-in (DQ_HIP_SMALL_MATMUL=on): end to end it was not faster
  /// (docs/devices.md).
  static bool isSmallBatchedMatmul(const std::vector<int64_t> &batch, int64_t M, int64_t K, int64_t N);
  void kMatmul(std::vector<Operand> &ins, std::vector<Operand> &outs);

  /// a[..., G, M, K] x b[..., 1, K, N] is a[..., G*M, K] x b[..., K, N] when the rows of a and of
  /// out run on across G. Grouped-query attention has this shape (b, the K/V group, broadcast over
  /// the G query heads of the group); folding G into the rows spares the BLAS a broadcast copy of b
  /// per call and gives it one taller GEMM per group. Folds innermost batch dims while that holds.
  static void foldBroadcastBatch(Operand &a, Operand &b, Operand &out, std::vector<int64_t> &batch, int64_t &M);

  /// Float matmul through the vendor BLAS: strided-batched GEMM on views it can read, device
  /// copies of operands it cannot.
  void blasMatmul(const Operand &a, const Operand &b, Operand &out, const std::vector<int64_t> &batch, int64_t M,
                  int64_t K, int64_t N);

  void kSoftmax(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args, bool logOut = false);

  void kLeakyRelu(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args);

  void kArgExtreme(const char *kernel, bool isMax, std::vector<Operand> &ins, std::vector<Operand> &outs,
                   const KernelArgs &args);

  void kOneHot(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args);

  template <typename F> void lineKernel(const Operand &in, const Operand &out, size_t axis, F &&f) {
    std::vector<int64_t> lines = in.sizes;
    const int64_t n = lines[axis];
    lines[axis] = 1;
    const size_t r = in.sizes.size();
    const int64_t si = n == 1 ? 0 : in.strides[axis], so = n == 1 ? 0 : out.strides[axis];
    launched(f(aligned(out, r), aligned(in, r), shapeOf(lines), n, si, so));
  }

  void kLayerNorm(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args);

  void kReduce(const char *kernel, int kind, std::vector<Operand> &ins, std::vector<Operand> &outs,
               const KernelArgs &args);

  void kTrilu(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args);

  void kCumsum(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args);

  void kGatherElements(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args);

  void kGatherND(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args);

  // ---- data-dependent and shape-input ops (kernels in HipDataDependentKernels.hip) ----

  void kCountNonzero(std::vector<Operand> &ins, std::vector<Operand> &outs);

  void kNonzero(std::vector<Operand> &ins, std::vector<Operand> &outs);

  void kCompress(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args);

  void kTopK(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args);

  void kTile(std::vector<Operand> &ins, std::vector<Operand> &outs);

  void kPad(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args);

  void kScatterND(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args);

  void kScatterElements(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args);

  // Freed device blocks by exact size, handed to the next allocation of that size. A decode step
  // allocates the same sizes layer after layer and step after step, and even the driver's
  // stream-ordered pool costs microseconds per call. One stream orders all work, so a block's
  // new owner runs after everything its old owner enqueued.
  static constexpr uint64_t kFreeBlockCap = uint64_t{512} << 20;
  std::unordered_map<uint64_t, std::vector<char *>> freeBlocks_;
  uint64_t freeBlockBytes_ = 0;
  /// Live allocations only: a freed handle is erased, so lookups stay O(1) however many
  /// allocations a long run makes. Handles are never reused, so a handle below nextHandle_ that
  /// is not here was freed.
  std::unordered_map<BufferHandle, Allocation> allocations_;
  BufferHandle nextHandle_ = 1;
  std::vector<Operand> inOps_, outOps_; ///< a launch's resolved operands, reused
  uint64_t liveDeviceBytes_ = 0;
  Counters counters_;
  hipStream_t stream_ = nullptr;
  std::unique_ptr<HipProfile> profile_; ///< DQ_HIP_PROFILE=1 only
  hipblasHandle_t blas_ = nullptr;
  int multiprocessors_ = 1;
  bool smallMatmul_ = false;      ///< DQ_HIP_SMALL_MATMUL=on: small batched float products skip the BLAS
  bool gemvEnabled_ = false;      ///< DQ_HIP_GEMV=on: M = 1 matmuls take the GEMV, not the BLAS
  float *gemvPartials_ = nullptr; ///< GEMV split-K workspace, grown on demand (fp32 elements)
  int64_t gemvPartialCap_ = 0;
  unsigned *gemvCounters_ = nullptr; ///< one per column tile, zero between launches
  int64_t gemvCounterCap_ = 0;
  hipk::DevError *errHost_ = nullptr, *errDev_ = nullptr;
  bool pending_ = false; ///< work was enqueued since the last stream synchronization
  /// Host-visible byte ranges written by device work since the last synchronize(), per buffer.
  std::map<BufferHandle, std::vector<std::pair<uint64_t, uint64_t>>> pendingWrites_;
};

} // namespace dq::rt::hipdev
