// The sim device's kernel registry: each family file registers its kernels; runKernel checks the
// outputs and dispatches by name.
#include "SimKernelSupport.h"
#include "SimDataDependentKernels.h"

namespace dq::rt::sim {
namespace {

const KernelTable &kernels() {
  static const KernelTable table = [] {
    KernelTable t;
    addElementwiseKernels(t);
    addDataKernels(t);
    addMathKernels(t);
    addIndexKernels(t);
    addFusedKernels(t);
    for (const char *name :
         {"count_nonzero", "nonzero", "compress", "top_k", "tile", "pad", "scatter_nd", "scatter_elements"})
      t[name] = findDataDependentKernel(name);
    return t;
  }();
  return table;
}

thread_local SimPrecision tlsPrecision = SimPrecision::Exact;

/// Sets the running kernel's precision for its duration (restored on exit or throw).
struct PrecisionScope {
  SimPrecision saved;
  explicit PrecisionScope(SimPrecision p) : saved(tlsPrecision) { tlsPrecision = p; }
  ~PrecisionScope() { tlsPrecision = saved; }
};

} // namespace

SimPrecision currentPrecision() { return tlsPrecision; }

bool hasKernel(const std::string &name) { return kernels().count(name) != 0; }

void runKernel(const std::string &name, std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args,
               SimPrecision precision) {
  PrecisionScope scope(precision);
  for (const Operand &o : outs)
    for (size_t d = 0; d < o.sizes.size() && numElements(o.sizes) > 0; ++d)
      if (o.sizes[d] > 1 && o.strides[d] == 0)
        fail(name,
             o.label + " has stride 0 on dim " + std::to_string(d) + ": an output may not write an element twice");
  auto it = kernels().find(name);
  if (it == kernels().end()) fail(name, "unsupported: no sim implementation");
  try {
    it->second(ins, outs, args);
  } catch (const RuntimeError &e) {
    std::string msg = e.what();
    if (msg.rfind("kernel '", 0) == 0) throw;
    fail(name, msg);
  }
}

void stridedCopy(Operand &dst, const Operand &src) {
  if (dst.dtype != src.dtype || dst.sizes != src.sizes)
    throw RuntimeError("strided copy: " + src.label + " " + dtypeName(src.dtype) + formatDims(src.sizes) +
                       " does not match " + dst.label + " " + dtypeName(dst.dtype) + formatDims(dst.sizes));
  for (size_t d = 0; d < dst.sizes.size() && numElements(dst.sizes) > 0; ++d)
    if (dst.sizes[d] > 1 && dst.strides[d] == 0)
      throw RuntimeError("strided copy: " + dst.label + " has stride 0 on dim " + std::to_string(d) +
                         ": a destination may not write an element twice");
  forEachIndex(dst.sizes, [&](const std::vector<int64_t> &idx) { copyElement(dst, at(dst, idx), src, at(src, idx)); });
}

} // namespace dq::rt::sim
