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
    addContribKernels(t);
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
  kernel::checkOutputsWriteOnce(name, outs);
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
  kernel::validateStridedCopy(dst, src);
  forEachIndex(dst.sizes, [&](const std::vector<int64_t> &idx) { copyElement(dst, at(dst, idx), src, at(src, idx)); });
}

} // namespace dq::rt::sim
