// Math kernels of the sim device: matmul, softmax and log_softmax, layer norm, reductions and
// cumsum. In the ElementType precision mode every float step of theirs is rounded to fp32 (step()).
#include "SimKernelSupport.h"

namespace dq::rt::sim {
namespace {

void kMatmul(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &) {
  const kernel::Matmul mm = kernel::validateMatmul(ins, outs);
  const Operand &a = ins[0], &b = ins[1];
  Operand &out = outs[0];
  const size_t ra = a.sizes.size(), rb = b.sizes.size(), ro = out.sizes.size();
  const int64_t M = mm.M, K = mm.K, N = mm.N;
  const std::vector<int64_t> &batch = mm.batch;
  // Offset of the [M, K] / [K, N] / [M, N] matrix of `x` for batch index bi (right-aligned).
  auto matrix = [](const Operand &x, const std::vector<int64_t> &bi) {
    int64_t off = x.offset;
    const size_t rx = x.sizes.size() - 2, shift = bi.size() - rx;
    for (size_t d = 0; d < rx; ++d)
      if (x.sizes[d] != 1) off += bi[d + shift] * x.strides[d];
    return off;
  };
  const bool fl = isFloat(out.dtype), f32 = fp32Steps(out.dtype);
  const int64_t am = a.strides[ra - 2], ak = a.strides[ra - 1], bk = b.strides[rb - 2], bn = b.strides[rb - 1],
                om = out.strides[ro - 2], on = out.strides[ro - 1];
  forEachIndex(batch, [&](const std::vector<int64_t> &bi) {
    const int64_t ea = matrix(a, bi), eb = matrix(b, bi), eo = matrix(out, bi);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double fs = 0;
        int64_t is = 0;
        for (int64_t k = 0; k < K; ++k) {
          const int64_t ia = ea + m * am + k * ak, ib = eb + k * bk + n * bn;
          // ElementType: a fused multiply-add into an fp32 accumulator (cuBLAS's fp32 compute).
          if (fl)
            fs = step(f32, fs + loadF(a, ia) * loadF(b, ib));
          else
            is = wrapAdd(is, wrapMul(loadI(a, ia), loadI(b, ib)));
        }
        if (fl)
          storeF(out, eo + m * om + n * on, fs);
        else
          storeI(out, eo + m * om + n * on, is);
      }
  });
}

// Softmax (exp(x - max) / sum) or, when `log`, LogSoftmax ((x - max) - log sum exp(x - max)).
void softmax(const char *kernel, bool log, std::vector<Operand> &ins, std::vector<Operand> &outs,
             const KernelArgs &args) {
  const size_t axis = kernel::validateSoftmax(kernel, ins, outs, args);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  const int64_t n = in.sizes[axis];
  const bool f32 = fp32Steps(in.dtype);
  std::vector<double> e(static_cast<size_t>(n));
  forEachLine(in.sizes, axis, [&](const std::vector<int64_t> &idx) {
    // Subtracting the max keeps exp() <= 1, so large inputs do not overflow.
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < n; ++j) {
      const double v = e[static_cast<size_t>(j)] = loadF(in, alongAxis(in, idx, axis, j));
      mx = fmaxNan(mx, v);
    }
    double sum = 0;
    for (double v : e)
      sum = step(f32, sum + step(f32, std::exp(step(f32, v - mx))));
    const double logSum = step(f32, std::log(sum));
    for (int64_t j = 0; j < n; ++j) {
      const double v = step(f32, e[static_cast<size_t>(j)] - mx);
      storeF(out, alongAxis(out, idx, axis, j), log ? v - logSum : step(f32, std::exp(v)) / sum);
    }
  });
}

void kSoftmax(std::vector<Operand> &i, std::vector<Operand> &o, const KernelArgs &a) {
  softmax("softmax", false, i, o, a);
}
void kLogSoftmax(std::vector<Operand> &i, std::vector<Operand> &o, const KernelArgs &a) {
  softmax("log_softmax", true, i, o, a);
}

void kLayerNorm(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const size_t axis = kernel::validateLayerNorm(ins, outs, args);
  const Operand &x = ins[0];
  Operand &out = outs[0];
  const double eps = args.fattrs[0];
  std::vector<int64_t> outer = x.sizes, inner(x.sizes.begin() + static_cast<long>(axis), x.sizes.end());
  std::fill(outer.begin() + static_cast<long>(axis), outer.end(), 1);
  const int64_t count = numElements(inner);
  const bool f32 = fp32Steps(x.dtype);
  std::vector<double> v(static_cast<size_t>(count));
  forEachIndex(outer, [&](const std::vector<int64_t> &o) {
    std::vector<int64_t> idx = o;
    auto full = [&](const std::vector<int64_t> &ii) {
      std::copy(ii.begin(), ii.end(), idx.begin() + static_cast<long>(axis));
      return idx;
    };
    size_t k = 0;
    double mean = 0, var = 0;
    forEachIndex(
        inner, [&](const std::vector<int64_t> &ii) { mean = step(f32, mean + (v[k++] = loadF(x, at(x, full(ii))))); });
    mean = step(f32, mean / static_cast<double>(count));
    for (double a : v) {
      const double d = step(f32, a - mean);
      var = step(f32, var + step(f32, d * d));
    }
    const double inv =
        step(f32, 1.0 / step(f32, std::sqrt(step(f32, step(f32, var / static_cast<double>(count)) + eps))));
    k = 0;
    forEachIndex(inner, [&](const std::vector<int64_t> &ii) {
      const std::vector<int64_t> &f = full(ii);
      double y = step(f32, step(f32, step(f32, v[k++] - mean) * inv) * loadF(ins[1], at(ins[1], f)));
      if (ins.size() == 3) y += loadF(ins[2], at(ins[2], f));
      storeF(out, at(out, f), y);
    });
  });
}

enum class Reduction { Sum, Mean, Max, Min, Prod, L2, SumSquare, LogSumExp };

void reduce(const char *kernel, Reduction kind, std::vector<Operand> &ins, std::vector<Operand> &outs,
            const KernelArgs &args) {
  const bool extremum = kind == Reduction::Max || kind == Reduction::Min;
  const std::vector<int64_t> extent = kernel::validateReduce(kernel, extremum, ins, outs, args).extent;
  const Operand &in = ins[0];
  Operand &out = outs[0];
  const size_t rank = in.sizes.size();
  const int64_t count = numElements(extent);
  // L2 and LogSumExp go through double for every dtype (an integer result truncates toward zero).
  const bool viaDouble = isFloat(in.dtype) || kind == Reduction::L2 || kind == Reduction::LogSumExp;
  const bool f32 = fp32Steps(in.dtype); // integers accumulate exactly in either mode
  forEachIndex(out.sizes, [&](const std::vector<int64_t> &o) {
    if (count == 0) {
      if (extremum) throw RuntimeError(std::string(kernel) + " over an empty extent " + formatDims(extent));
      if (!viaDouble || !isFloat(in.dtype)) {
        if (kind == Reduction::Mean || kind == Reduction::LogSumExp)
          throw RuntimeError(std::string("integer ") + kernel + " over an empty extent " + formatDims(extent));
      }
      const double empty = kind == Reduction::Prod        ? 1.0
                           : kind == Reduction::Mean      ? std::nan("")
                           : kind == Reduction::LogSumExp ? -std::numeric_limits<double>::infinity()
                                                          : 0.0;
      return storeD(out, at(out, o), empty);
    }
    std::vector<int64_t> idx(rank);
    const double inf = std::numeric_limits<double>::infinity();
    double facc = kind == Reduction::Max ? -inf : kind == Reduction::Min ? inf : kind == Reduction::Prod ? 1.0 : 0.0;
    int64_t iacc = kind == Reduction::Max    ? std::numeric_limits<int64_t>::min()
                   : kind == Reduction::Min  ? std::numeric_limits<int64_t>::max()
                   : kind == Reduction::Prod ? 1
                                             : 0;
    forEachIndex(extent, [&](const std::vector<int64_t> &r) {
      for (size_t d = 0; d < rank; ++d)
        idx[d] = o[d] + r[d];
      const int64_t e = at(in, idx);
      if (viaDouble) {
        const double v = loadD(in, e);
        switch (kind) {
        case Reduction::Max:
          facc = fmaxNan(facc, v);
          break;
        case Reduction::Min:
          facc = fminNan(facc, v);
          break;
        case Reduction::Prod:
          facc = step(f32, facc * v);
          break;
        case Reduction::L2:
        case Reduction::SumSquare:
          facc = step(f32, facc + step(f32, v * v));
          break;
        case Reduction::LogSumExp:
          facc = step(f32, facc + step(f32, std::exp(v)));
          break;
        default:
          facc = step(f32, facc + v);
          break;
        }
      } else {
        const int64_t v = loadI(in, e);
        switch (kind) {
        case Reduction::Max:
          iacc = std::max(iacc, v);
          break;
        case Reduction::Min:
          iacc = std::min(iacc, v);
          break;
        case Reduction::Prod:
          iacc = wrapMul(iacc, v);
          break;
        case Reduction::SumSquare:
          iacc = wrapAdd(iacc, wrapMul(v, v));
          break;
        default:
          iacc = wrapAdd(iacc, v);
          break;
        }
      }
    });
    if (kind == Reduction::Mean) {
      facc /= static_cast<double>(count);
      iacc /= count; // integer mean truncates toward zero
    }
    if (kind == Reduction::L2) facc = std::sqrt(facc);
    if (kind == Reduction::LogSumExp) facc = std::log(facc);
    if (viaDouble)
      storeD(out, at(out, o), facc);
    else
      storeI(out, at(out, o), iacc);
  });
}

void kReduceSum(std::vector<Operand> &i, std::vector<Operand> &o, const KernelArgs &a) {
  reduce("reduce_sum", Reduction::Sum, i, o, a);
}
void kReduceMean(std::vector<Operand> &i, std::vector<Operand> &o, const KernelArgs &a) {
  reduce("reduce_mean", Reduction::Mean, i, o, a);
}
void kReduceMax(std::vector<Operand> &i, std::vector<Operand> &o, const KernelArgs &a) {
  reduce("reduce_max", Reduction::Max, i, o, a);
}
void kReduceMin(std::vector<Operand> &i, std::vector<Operand> &o, const KernelArgs &a) {
  reduce("reduce_min", Reduction::Min, i, o, a);
}
void kReduceProd(std::vector<Operand> &i, std::vector<Operand> &o, const KernelArgs &a) {
  reduce("reduce_prod", Reduction::Prod, i, o, a);
}
void kReduceL2(std::vector<Operand> &i, std::vector<Operand> &o, const KernelArgs &a) {
  reduce("reduce_l2", Reduction::L2, i, o, a);
}
void kReduceSumSquare(std::vector<Operand> &i, std::vector<Operand> &o, const KernelArgs &a) {
  reduce("reduce_sum_square", Reduction::SumSquare, i, o, a);
}
void kReduceLogSumExp(std::vector<Operand> &i, std::vector<Operand> &o, const KernelArgs &a) {
  reduce("reduce_log_sum_exp", Reduction::LogSumExp, i, o, a);
}

void kCumsum(std::vector<Operand> &ins, std::vector<Operand> &outs, const KernelArgs &args) {
  const kernel::Cumsum c = kernel::validateCumsum(ins, outs, args);
  const Operand &in = ins[0];
  Operand &out = outs[0];
  const size_t axis = c.axis;
  const bool exclusive = c.exclusive, reverse = c.reverse;
  const int64_t n = in.sizes[axis];
  const bool fl = isFloat(in.dtype), f32 = fp32Steps(in.dtype);
  forEachLine(in.sizes, axis, [&](const std::vector<int64_t> &idx) {
    double facc = 0;
    int64_t iacc = 0;
    for (int64_t t = 0; t < n; ++t) {
      const int64_t j = reverse ? n - 1 - t : t;
      const int64_t ei = alongAxis(in, idx, axis, j), eo = alongAxis(out, idx, axis, j);
      if (fl) {
        const double v = loadF(in, ei);
        if (!exclusive) facc = step(f32, facc + v);
        storeF(out, eo, facc);
        if (exclusive) facc = step(f32, facc + v);
      } else {
        const int64_t v = loadI(in, ei);
        if (!exclusive) iacc = wrapAdd(iacc, v);
        storeI(out, eo, iacc);
        if (exclusive) iacc = wrapAdd(iacc, v);
      }
    }
  });
}

} // namespace

void addMathKernels(KernelTable &table) {
  table["matmul"] = kMatmul;
  table["softmax"] = kSoftmax;
  table["layer_norm"] = kLayerNorm;
  table["reduce_sum"] = kReduceSum;
  table["reduce_mean"] = kReduceMean;
  table["reduce_max"] = kReduceMax;
  table["reduce_min"] = kReduceMin;
  table["reduce_prod"] = kReduceProd;
  table["reduce_l2"] = kReduceL2;
  table["reduce_sum_square"] = kReduceSumSquare;
  table["reduce_log_sum_exp"] = kReduceLogSumExp;
  table["log_softmax"] = kLogSoftmax;
  table["cumsum"] = kCumsum;
}

} // namespace dq::rt::sim
