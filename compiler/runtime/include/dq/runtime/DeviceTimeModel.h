// The modelled device time: a deterministic cost, in nanoseconds, of every device event a run
// makes (kernel launches, copies, transfers, synchronizations), computed from exact event sizes
// with a roofline model of one discrete GPU (docs/metrics/modelled-device-time.md). It depends
// only on what the program does, never on the speed or the code layout of the machine running
// the sim, so two runs of one program on one input give the same value.
#pragma once

#include "dq/runtime/Device.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dq::rt {

/// Element-type classes with their own peak arithmetic rate.
enum class FlopClass : uint8_t { F64 = 0, F32 = 1, Half = 2, Integer = 3 };

/// The class of `t`: f64, f32, f16/bf16 (Half), every integer type and bool (Integer).
FlopClass flopClassOf(DType t);

/// Constants of the modelled GPU. Defaults: an NVIDIA H200 SXM (141 GB HBM3e) on a PCIe Gen5 x16
/// host link. Each field says whether its default is a datasheet figure (NVIDIA H200 Tensor Core
/// GPU datasheet, 2024; PCI-SIG PCIe 5.0 specification) or an assumption; an assumption is a
/// placeholder to calibrate on the real machine (`dq-bench probe --device hip`: launch latency and
/// copy bandwidth), never a measurement. Units are in the field names: microseconds (Us), gigabytes
/// (1e9 bytes) per second (GBps), tera-operations (1e12) per second (Tflops).
struct DeviceTimeModel {
  /// Host-side cost of one kernel launch until the kernel starts. Assumption: 5 us (CUDA launch
  /// latency is commonly quoted as 2-10 us; dq-bench's launch-latency probe measures it).
  double kernelLaunchUs = 5.0;
  /// Device-memory bandwidth. Datasheet: 4.8 TB/s HBM3e (H200 SXM).
  double deviceMemoryGBps = 4800.0;
  /// Peak rate of elementwise and reduction arithmetic (CUDA cores), per FlopClass. Datasheet: FP64
  /// 34 TFLOPS, FP32 67 TFLOPS. Assumptions: Half at the FP32 rate (the hip kernels compute f16
  /// and bf16 in fp32), Integer at half the FP32 rate.
  double vectorTflops[4] = {34.0, 67.0, 67.0, 33.5};
  /// Peak rate of "matmul" per FlopClass. Datasheet (dense, i.e. the sparsity figures halved):
  /// FP64 Tensor Core 67 TFLOPS, FP16/BF16 Tensor Core 989.5 TFLOPS. Assumptions: f32 at the FP32
  /// CUDA-core rate 67 TFLOPS (no TF32: the hip matmul accumulates in fp32), integers at the
  /// Integer vector rate.
  double matmulTflops[4] = {67.0, 67.0, 989.5, 33.5};
  /// Host link bandwidth per direction from or to pinned (HostMapped) host memory. Datasheet:
  /// PCIe Gen5 x16, 128 GB/s both directions together, so 64 GB/s each way (H200 datasheet,
  /// "Interconnect"). A Grace Hopper NVLink-C2C host link (450 GB/s each way) is a calibration.
  double pinnedLinkGBps = 64.0;
  /// Per-transfer latency of a pinned host transfer. Assumption: 5 us.
  double pinnedLatencyUs = 5.0;
  /// Host link bandwidth for pageable (Host) memory and for process memory (upload, download,
  /// readback), which the driver stages through a pinned buffer. Assumption: 25 GB/s.
  double pageableLinkGBps = 25.0;
  /// Per-transfer latency of a pageable transfer. Assumption: 10 us.
  double pageableLatencyUs = 10.0;
  /// Bytes copied per second by a device-to-device memcpy/copy2D: every byte is read once and
  /// written once, so half the memory bandwidth. Derived from the datasheet: 4800 / 2 = 2400 GB/s.
  double d2dCopyGBps = 2400.0;
  /// Latency of a device-to-device memcpy/copy2D (an async copy enqueued like a kernel).
  /// Assumption: 5 us, as kernelLaunchUs.
  double d2dLatencyUs = 5.0;
  /// Cost of one synchronize() (the host waiting for an idle stream). Assumption: 5 us.
  double synchronizeUs = 5.0;

  /// The H200 defaults above.
  static DeviceTimeModel h200() { return {}; }

  /// Kernel `kernel` on `ins` and `outs`, ns: kernelLaunchUs * 1e3 + max(memory time, compute
  /// time), the roofline model (S. Williams, A. Waterman, D. Patterson, "Roofline: an insightful
  /// visual performance model for multicore architectures", CACM 52(4), 2009). Memory time =
  /// device bytes / deviceMemoryGBps + host-mapped bytes / pinnedLinkGBps, where the bytes of a
  /// view are its distinct elements (sizes of the dims whose stride is not 0) times the element
  /// size, `hostMapped[i]` telling whether view i (ins then outs) lies in host-mapped memory
  /// (empty: all device memory). Compute time = kernelFlops / the class rate of the first input's
  /// dtype (the output's without inputs). Rounded to the nearest ns.
  uint64_t launchNs(const std::string &kernel, const std::vector<BufferView> &ins, const std::vector<BufferView> &outs,
                    const KernelArgs &args, const std::vector<bool> &hostMapped = {}) const;
  /// A Copy2D or Memcpy of `bytes` bytes from `src` to `dst` space, ns: latency + bytes /
  /// bandwidth of the direction: d2d at d2dCopyGBps after d2dLatencyUs; host<->device at the
  /// pinned link when the host side is HostMapped, else at the pageable link; host-to-host 0
  /// (no device work). Rounded to the nearest ns.
  uint64_t copyNs(MemSpace dst, MemSpace src, uint64_t bytes) const;
  /// The strided copy kernel copying view bytes `bytes` from `src` to `dst` space, ns: a kernel
  /// launch plus the bytes read and written at their memories' rates (device memory at
  /// deviceMemoryGBps, host-mapped memory at pinnedLinkGBps).
  uint64_t stridedCopyNs(MemSpace dst, MemSpace src, uint64_t bytes) const;
  /// upload/download/readback of `bytes` between process memory and `space`, ns: a pageable
  /// transfer when `space` is Device, 0 otherwise (a host memcpy, no device work).
  uint64_t hostTransferNs(MemSpace space, uint64_t bytes) const;
  /// One synchronize(), ns.
  uint64_t synchronizeNs() const;
};

/// Floating-point or integer operations of kernel `kernel` (a name from Program.h), by family:
///   matmul: 2 * M * N * K per output matrix (2 * out elements * K, K the last dim of ins[0]);
///   fused_elementwise: out elements * steps (args.attrs.size() / 3, the postfix program);
///   elementwise (add ... sin, relu ... leaky_relu, comparisons, where, pow): out elements;
///   reductions, arg_max/min, cumsum, count_nonzero, top_k: elements of ins[0];
///   softmax and log_softmax: 5 * elements (max, subtract, exp, sum, divide or log);
///   layer_norm: 8 * elements (mean, subtract, square, sum, rsqrt, scale, shift, bias);
///   simplified_layer_norm, skip_simplified_layer_norm: 6 * elements of ins[0] (square, sum,
///   rsqrt, scale, gamma, the skip add);
///   rotary_embedding: 3 * elements of ins[0] (two multiplies and an add per value);
///   matmul_nbits: 2 * out elements * K plus 2 * N * K to decode each weight once;
///   group_query_attention: 4 * output elements * present length (Q.K^T and P.V);
///   data movement (cast, expand, slice, transpose, concat, gather*, scatter*, tile, pad, fill,
///   range, range_length, trilu, one_hot, nonzero, compress): 0.
/// A transcendental counts as one operation. Unknown names count 0 (the loader rejects them).
double kernelFlops(const std::string &kernel, const std::vector<BufferView> &ins, const std::vector<BufferView> &outs,
                   const KernelArgs &args);

/// Distinct elements of `v`: the product of its sizes over dims whose stride is not 0 (a
/// broadcast dim is read once); 0 when any size is 0.
uint64_t distinctElements(const BufferView &v);

} // namespace dq::rt
