// The modelled device time (DeviceTimeModel.h): per-event costs and per-kernel operation counts.
#include "dq/runtime/DeviceTimeModel.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace dq::rt {
namespace {

/// ns from seconds, rounded to the nearest ns (never negative).
uint64_t toNs(double seconds) { return static_cast<uint64_t>(std::llround(std::max(0.0, seconds) * 1e9)); }

/// Seconds to move `bytes` at `gbps` GB/s.
double transferSeconds(double bytes, double gbps) { return bytes / (gbps * 1e9); }

double numElementsOf(const BufferView &v) { return static_cast<double>(v.numElements()); }

// Kernel families by operation count (Program.h's kernel list; kernelFlops documents them).
const std::set<std::string> &elementwiseKernels() {
  static const std::set<std::string> names = {
      "add",  "sub",   "mul",  "div",        "equal",   "where",         "pow",       "max",  "min",        "and",
      "or",   "xor",   "less", "less_equal", "greater", "greater_equal", "neg",       "sqrt", "reciprocal", "sigmoid",
      "tanh", "erf",   "exp",  "cos",        "sin",     "not",           "isnan",     "relu", "abs",        "sign",
      "log",  "floor", "ceil", "round",      "mod",     "fmod",          "leaky_relu"};
  return names;
}

const std::set<std::string> &reductionKernels() {
  static const std::set<std::string> names = {"reduce_sum",
                                              "reduce_mean",
                                              "reduce_max",
                                              "reduce_min",
                                              "reduce_prod",
                                              "reduce_l2",
                                              "reduce_sum_square",
                                              "reduce_log_sum_exp",
                                              "arg_max",
                                              "arg_min",
                                              "cumsum",
                                              "count_nonzero",
                                              "top_k"};
  return names;
}

} // namespace

FlopClass flopClassOf(DType t) {
  switch (t) {
  case DType::F64:
    return FlopClass::F64;
  case DType::F32:
    return FlopClass::F32;
  case DType::F16:
  case DType::BF16:
    return FlopClass::Half;
  default:
    return FlopClass::Integer;
  }
}

uint64_t distinctElements(const BufferView &v) {
  uint64_t n = 1;
  for (size_t d = 0; d < v.sizes.size(); ++d) {
    if (v.sizes[d] <= 0) return 0;
    if (d < v.strides.size() && v.strides[d] == 0) continue;
    n *= static_cast<uint64_t>(v.sizes[d]);
  }
  return n;
}

double kernelFlops(const std::string &kernel, const std::vector<BufferView> &ins, const std::vector<BufferView> &outs,
                   const KernelArgs &args) {
  const double outElements = outs.empty() ? 0.0 : numElementsOf(outs[0]);
  const double inElements = ins.empty() ? 0.0 : numElementsOf(ins[0]);
  if (kernel == "matmul") {
    if (ins.empty() || ins[0].sizes.empty()) return 0.0;
    return 2.0 * outElements * static_cast<double>(ins[0].sizes.back());
  }
  if (kernel == "fused_elementwise") return outElements * static_cast<double>(args.attrs.size() / 3);
  if (elementwiseKernels().count(kernel)) return outElements;
  if (reductionKernels().count(kernel)) return inElements;
  if (kernel == "softmax" || kernel == "log_softmax") return 5.0 * inElements;
  if (kernel == "layer_norm") return 8.0 * inElements;
  if (kernel == "simplified_layer_norm" || kernel == "skip_simplified_layer_norm") return 6.0 * inElements;
  if (kernel == "rotary_embedding") return 3.0 * inElements;
  if (kernel == "matmul_nbits") {
    // A multiply-add per weight and row, plus the decode of each weight once.
    if (ins.size() < 2 || ins[0].sizes.empty()) return 0.0;
    const double k = static_cast<double>(ins[0].sizes.back());
    return 2.0 * outElements * k + 2.0 * static_cast<double>(outs[0].sizes.back()) * k;
  }
  if (kernel == "group_query_attention") {
    // Q.K^T and P.V over the present length, 4 flops per query value and key position.
    if (ins.empty() || outs.size() < 2 || outs[1].sizes.size() != 4) return 0.0;
    return 4.0 * outElements * static_cast<double>(outs[1].sizes[2]);
  }
  return 0.0; // data movement
}

uint64_t DeviceTimeModel::launchNs(const std::string &kernel, const std::vector<BufferView> &ins,
                                   const std::vector<BufferView> &outs, const KernelArgs &args,
                                   const std::vector<bool> &hostMapped) const {
  double deviceBytes = 0, mappedBytes = 0;
  size_t i = 0;
  for (const auto *views : {&ins, &outs})
    for (const BufferView &v : *views) {
      double bytes = static_cast<double>(distinctElements(v)) * static_cast<double>(dtypeSize(v.dtype));
      (i < hostMapped.size() && hostMapped[i] ? mappedBytes : deviceBytes) += bytes;
      ++i;
    }
  const double memory = transferSeconds(deviceBytes, deviceMemoryGBps) + transferSeconds(mappedBytes, pinnedLinkGBps);
  const DType t = !ins.empty() ? ins[0].dtype : !outs.empty() ? outs[0].dtype : DType::F32;
  const double *rates = kernel == "matmul" ? matmulTflops : vectorTflops;
  const double compute = kernelFlops(kernel, ins, outs, args) / (rates[static_cast<int>(flopClassOf(t))] * 1e12);
  return toNs(kernelLaunchUs * 1e-6 + std::max(memory, compute));
}

uint64_t DeviceTimeModel::copyNs(MemSpace dst, MemSpace src, uint64_t bytes) const {
  const bool d = dst == MemSpace::Device, s = src == MemSpace::Device;
  const double b = static_cast<double>(bytes);
  if (d && s) return toNs(d2dLatencyUs * 1e-6 + transferSeconds(b, d2dCopyGBps));
  if (!d && !s) return 0;
  const bool pinned = (d ? src : dst) == MemSpace::HostMapped;
  return pinned ? toNs(pinnedLatencyUs * 1e-6 + transferSeconds(b, pinnedLinkGBps))
                : toNs(pageableLatencyUs * 1e-6 + transferSeconds(b, pageableLinkGBps));
}

uint64_t DeviceTimeModel::stridedCopyNs(MemSpace dst, MemSpace src, uint64_t bytes) const {
  auto side = [&](MemSpace m) {
    return transferSeconds(static_cast<double>(bytes), m == MemSpace::Device ? deviceMemoryGBps : pinnedLinkGBps);
  };
  return toNs(kernelLaunchUs * 1e-6 + side(dst) + side(src));
}

uint64_t DeviceTimeModel::hostTransferNs(MemSpace space, uint64_t bytes) const {
  if (space != MemSpace::Device) return 0;
  return toNs(pageableLatencyUs * 1e-6 + transferSeconds(static_cast<double>(bytes), pageableLinkGBps));
}

uint64_t DeviceTimeModel::synchronizeNs() const { return toNs(synchronizeUs * 1e-6); }

} // namespace dq::rt
