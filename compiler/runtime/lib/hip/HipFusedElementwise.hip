// "fused_elementwise" on the hip device (Program.h): one thread per output element evaluates the
// step program with the elementwise kernel's math (floatOp) and rounds every step to the element
// type exactly as a store and a load of that kernel's output would, so the result equals the
// unfused kernels on this device bit for bit.
#include "HipKernels.h"
#include "HipElements.h"

namespace dq::rt::hipk {
namespace {

// `v` stored as `dtype` and loaded back (storeF then loadF, without the memory).
__device__ inline double roundTo(int dtype, double v) {
  switch (dtype) {
  case kF32:
    return static_cast<double>(static_cast<float>(v));
  case kF16:
    return halfToFloat(floatToHalf(roundToOddFloat(v)));
  case kBF16:
    return bf16ToFloat(floatToBF16(roundToOddFloat(v)));
  default:
    return v;
  }
}

__global__ void kFusedElementwise(FusedProgram p, Opd out, Shape shape) {
  int64_t c[kMaxRank];
  double v[FusedProgram::kMaxIn + FusedProgram::kMaxSteps];
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < shape.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    coords(shape, i, c);
    for (int k = 0; k < p.nIn; ++k)
      v[k] = loadF(p.ins[k], offsetOf(p.ins[k], c, shape.rank));
    for (int j = 0; j < p.nSteps; ++j)
      v[p.nIn + j] = roundTo(p.dtype, floatOp(p.op[j], v[p.a[j]], p.b[j] >= 0 ? v[p.b[j]] : 0.0));
    storeF(out, offsetOf(out, c, shape.rank), v[p.nIn + p.nSteps - 1]);
  }
}

} // namespace

hipError_t fusedElementwise(hipStream_t s, const FusedProgram &p, Opd out, Shape shape) {
  if (shape.count == 0) return hipSuccess;
  hipLaunchKernelGGL(kFusedElementwise, dim3(blocksFor(shape.count)), dim3(kThreads), 0, s, p, out, shape);
  return hipGetLastError();
}

} // namespace dq::rt::hipk
