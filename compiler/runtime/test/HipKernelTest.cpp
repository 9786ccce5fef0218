// Every kernel of Program.h on the hip device against the sim (the reference for kernels), on
// random inputs laid out four ways: contiguous, every other element of the last dim, transposed
// storage (dims reversed in memory) and a reversed first dim (negative stride); the output uses
// the same layouts.
//
// Tolerance (docs/devices.md): integers and bool exact. Elementwise float kernels compute in double
// on both devices and must agree within 1 ulp of the output type (|d| <= 2^-22 |sim| for f32,
// 2^-9 f16, 2^-6 bf16, 1e-15 f64, plus a tiny absolute floor). Accumulating kernels (matmul,
// reductions, softmax, layer_norm, cumsum) accumulate in fp32 on hip against double on sim:
// |d| <= 1e-5 * (|sim| + 1) * sqrt(n) for f32 (n = accumulated terms), 2^-9/2^-6 relative for
// f16/bf16 (which round the result to their own width), 1e-12 for f64.
#include "DeviceTestUtil.h"
#include "dq/runtime/Float16.h"
#include "dq/runtime/Program.h"
#include "dq/runtime/SimDevice.h"
#include "dq/runtime/hip/HipDevice.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

using namespace dq::rt;
using dq::rt::test::errorOf;

namespace {

double elementAsDouble(const HostTensor &t, size_t i) {
  const uint8_t *p = t.bytes.data() + i * dtypeSize(t.dtype);
  auto rd = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t.dtype) {
  case DType::F32:
    return rd(float{});
  case DType::F64:
    return rd(double{});
  case DType::F16:
    return halfToFloat(rd(uint16_t{}));
  case DType::BF16:
    return bf16ToFloat(rd(uint16_t{}));
  case DType::I8:
    return rd(int8_t{});
  case DType::U8:
    return rd(uint8_t{});
  case DType::I32:
    return rd(int32_t{});
  case DType::I64:
    return static_cast<double>(rd(int64_t{}));
  case DType::Bool:
    return rd(uint8_t{});
  }
  return 0;
}

void setElement(HostTensor &t, size_t i, double v) {
  uint8_t *p = t.bytes.data() + i * dtypeSize(t.dtype);
  auto wr = [&](auto x) { std::memcpy(p, &x, sizeof x); };
  switch (t.dtype) {
  case DType::F32:
    wr(static_cast<float>(v));
    break;
  case DType::F64:
    wr(v);
    break;
  case DType::F16:
    wr(doubleToHalf(v));
    break;
  case DType::BF16:
    wr(doubleToBF16(v));
    break;
  case DType::I8:
    wr(static_cast<int8_t>(v));
    break;
  case DType::U8:
    wr(static_cast<uint8_t>(v));
    break;
  case DType::I32:
    wr(static_cast<int32_t>(v));
    break;
  case DType::I64:
    wr(static_cast<int64_t>(v));
    break;
  case DType::Bool:
    wr(static_cast<uint8_t>(v != 0));
    break;
  }
}

bool isFloatT(DType t) { return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16; }

/// How values are drawn for one input.
enum class Gen { Normal, Positive, NonZero, SmallNonNeg, Index };

struct In {
  DType dtype;
  std::vector<int64_t> dims;
  Gen gen = Gen::Normal;
  int64_t indexRange = 0; ///< Gen::Index: values in [-indexRange, indexRange)
};

/// A buffer holding `logical` under `layout`, filled entirely, and the view onto it.
struct Placed {
  HostTensor storage;
  BufferView view; // buffer filled in by place()
};

int64_t numel(const std::vector<int64_t> &d) {
  int64_t n = 1;
  for (int64_t x : d)
    n *= x;
  return n;
}

/// Lays out `logical` (row-major values) in a storage tensor under layout 0..3.
Placed layoutOf(const HostTensor &logical, int layout) {
  const std::vector<int64_t> &d = logical.dims;
  const size_t r = d.size();
  Placed p;
  p.view.dtype = logical.dtype;
  p.view.sizes = d;
  p.view.strides.assign(r, 1);
  if (r == 0 || numel(d) == 0) layout = 0;
  std::vector<int64_t> storageDims = d;
  if (layout == 1) storageDims[r - 1] = 2 * d[r - 1] + 1;
  if (layout == 2) storageDims.assign(d.rbegin(), d.rend());
  p.storage = HostTensor(logical.dtype, {numel(storageDims)});
  // Fill with a recognisable non-zero pattern, then place the values.
  for (size_t i = 0; i < static_cast<size_t>(numel(storageDims)); ++i)
    setElement(p.storage, i, 7);
  std::vector<int64_t> cstr(r, 1);
  for (size_t i = r; i-- > 1;)
    cstr[i - 1] = cstr[i] * storageDims[i];
  if (layout == 0 || layout == 3) p.view.strides = cstr;
  if (layout == 1) {
    p.view.strides = cstr;
    p.view.strides[r - 1] = 2;
    p.view.offset = 1;
  }
  if (layout == 2)
    for (size_t i = 0; i < r; ++i)
      p.view.strides[i] = cstr[r - 1 - i];
  if (layout == 3 && d[0] > 1) {
    p.view.offset = (d[0] - 1) * p.view.strides[0];
    p.view.strides[0] = -p.view.strides[0];
  }
  std::vector<int64_t> idx(r, 0);
  for (int64_t k = 0; k < numel(d); ++k) {
    int64_t e = p.view.offset;
    for (size_t i = 0; i < r; ++i)
      e += idx[i] * p.view.strides[i];
    std::memcpy(p.storage.bytes.data() + e * dtypeSize(logical.dtype),
                logical.bytes.data() + k * dtypeSize(logical.dtype), dtypeSize(logical.dtype));
    for (size_t i = r; i-- > 0;) {
      if (++idx[i] < d[i]) break;
      idx[i] = 0;
    }
  }
  return p;
}

/// Reads the logical row-major values of `view` out of downloaded `storage`.
HostTensor gatherLogical(const HostTensor &storage, const BufferView &view) {
  HostTensor t(view.dtype, view.sizes);
  const size_t r = view.sizes.size();
  std::vector<int64_t> idx(r, 0);
  for (int64_t k = 0; k < numel(view.sizes); ++k) {
    int64_t e = view.offset;
    for (size_t i = 0; i < r; ++i)
      e += idx[i] * view.strides[i];
    std::memcpy(t.bytes.data() + k * dtypeSize(view.dtype), storage.bytes.data() + e * dtypeSize(view.dtype),
                dtypeSize(view.dtype));
    for (size_t i = r; i-- > 0;) {
      if (++idx[i] < view.sizes[i]) break;
      idx[i] = 0;
    }
  }
  return t;
}

HostTensor random(const In &in, std::mt19937 &rng) {
  HostTensor t(in.dtype, in.dims);
  std::uniform_real_distribution<double> u(-2, 2), pos(0.1, 3);
  std::uniform_int_distribution<int> small(-5, 5), nonneg(0, 4), one(1, 5), coin(0, 1);
  for (size_t i = 0; i < static_cast<size_t>(t.numElements()); ++i) {
    double v = 0;
    const bool fl = isFloatT(in.dtype);
    switch (in.gen) {
    case Gen::Normal:
      v = in.dtype == DType::Bool ? coin(rng) : fl ? u(rng) : in.dtype == DType::U8 ? nonneg(rng) : small(rng);
      break;
    case Gen::Positive:
      v = fl ? pos(rng) : one(rng);
      break;
    case Gen::NonZero:
      v = (in.dtype == DType::U8 || coin(rng) ? 1 : -1) * (fl ? pos(rng) : one(rng));
      break;
    case Gen::SmallNonNeg:
      v = nonneg(rng);
      break;
    case Gen::Index:
      v = std::uniform_int_distribution<int64_t>(-in.indexRange, in.indexRange - 1)(rng);
      break;
    }
    setElement(t, i, v);
  }
  return t;
}

/// Uploads `p` to a new Device allocation on `d` and returns its view.
BufferView place(Device &d, const Placed &p) {
  BufferHandle h = d.allocate(MemSpace::Device, p.storage.bytes.size(), AllocPurpose::Buffer);
  d.upload(h, 0, p.storage.bytes.data(), p.storage.bytes.size());
  BufferView v = p.view;
  v.buffer = h;
  return v;
}

HostTensor runOn(Device &d, const std::string &kernel, const std::vector<Placed> &ins, const Placed &out,
                 const KernelArgs &args) {
  std::vector<BufferView> iv;
  for (const Placed &p : ins)
    iv.push_back(place(d, p));
  BufferView ov = place(d, out);
  d.launch(kernel, iv, {ov}, args);
  HostTensor storage(out.storage.dtype, out.storage.dims);
  d.download(storage.bytes.data(), ov.buffer, 0, storage.bytes.size());
  for (const BufferView &v : iv)
    d.free(v.buffer);
  d.free(ov.buffer);
  return gatherLogical(storage, out.view);
}

enum class Tol { Exact, Elementwise, Accumulate };

class HipKernels : public testing::Test {
protected:
  void SetUp() override { hip = createDevice("hip"); }

  /// Runs `kernel` on sim and hip for each layout and compares. `terms`: accumulated terms per
  /// output element (for the Accumulate tolerance).
  void compare(const std::string &kernel, const std::vector<In> &ins, DType outType, std::vector<int64_t> outDims,
               const KernelArgs &args, Tol tol, int64_t terms = 1) {
    std::mt19937 rng(1234);
    std::vector<HostTensor> values;
    for (const In &in : ins)
      values.push_back(random(in, rng));
    for (int layout = 0; layout < 4; ++layout) {
      SCOPED_TRACE(kernel + " layout " + std::to_string(layout));
      std::vector<Placed> placed;
      for (const HostTensor &v : values)
        placed.push_back(layoutOf(v, layout));
      Placed out = layoutOf(HostTensor(outType, outDims), (layout + 1) % 4);
      SimDevice sim;
      HostTensor want = runOn(sim, kernel, placed, out, args);
      HostTensor got = runOn(*hip, kernel, placed, out, args);
      ASSERT_EQ(got.dims, want.dims);
      int bad = 0;
      for (size_t i = 0; i < static_cast<size_t>(want.numElements()) && bad < 5; ++i) {
        const double w = elementAsDouble(want, i), g = elementAsDouble(got, i);
        if (std::isnan(w) || std::isnan(g)) {
          if (std::isnan(w) != std::isnan(g)) {
            ADD_FAILURE() << kernel << " element " << i << ": sim " << w << ", hip " << g;
            ++bad;
          }
          continue;
        }
        if (std::isinf(w) || std::isinf(g) || !isFloatT(outType) || tol == Tol::Exact) {
          if (w != g) {
            ADD_FAILURE() << kernel << " element " << i << ": sim " << w << ", hip " << g;
            ++bad;
          }
          continue;
        }
        const double ulp = outType == DType::F32    ? std::ldexp(1.0, -22)
                           : outType == DType::F16  ? std::ldexp(1.0, -9)
                           : outType == DType::BF16 ? std::ldexp(1.0, -6)
                                                    : 1e-15;
        double limit = ulp * std::fabs(w) + 1e-30;
        if (tol == Tol::Accumulate)
          limit = outType == DType::F32   ? 1e-5 * (std::fabs(w) + 1) * std::sqrt(static_cast<double>(terms))
                  : outType == DType::F64 ? 1e-12 * (std::fabs(w) + 1) * std::sqrt(static_cast<double>(terms))
                                          : 2 * ulp * (std::fabs(w) + 1);
        if (std::fabs(w - g) > limit) {
          ADD_FAILURE() << kernel << " element " << i << ": sim " << w << ", hip " << g << " (limit " << limit << ")";
          ++bad;
        }
      }
    }
  }

  std::unique_ptr<Device> hip;
};

KernelArgs attrs(std::vector<int64_t> a, std::vector<double> f = {}, std::vector<int64_t> s = {}) {
  KernelArgs k;
  k.attrs = std::move(a);
  k.fattrs = std::move(f);
  k.scalars = std::move(s);
  return k;
}

HostTensor f32Values() { return HostTensor::fromValues<float>(DType::F32, {3}, {1, 2, 3}); }

const DType F32 = DType::F32, F64 = DType::F64, F16 = DType::F16, BF16 = DType::BF16, I8 = DType::I8, U8 = DType::U8,
            I32 = DType::I32, I64 = DType::I64, BOOL = DType::Bool;

} // namespace

TEST_F(HipKernels, BinaryArithmeticBroadcastsOverEveryDType) {
  for (const char *k : {"add", "sub", "mul", "max", "min"})
    for (DType t : {F32, F64, F16, BF16, I8, U8, I32, I64})
      compare(k, {{t, {3, 1, 5}}, {t, {4, 5}}}, t, {3, 4, 5}, {}, Tol::Elementwise);
  for (DType t : {F32, F16, I32, I64, U8})
    compare("div", {{t, {3, 1, 5}}, {t, {4, 5}, Gen::NonZero}}, t, {3, 4, 5}, {}, Tol::Elementwise);
  compare("add", {{BOOL, {4, 5}}, {BOOL, {5}}}, BOOL, {4, 5}, {}, Tol::Exact);
}

TEST_F(HipKernels, PowComparisonsAndLogic) {
  compare("pow", {{F32, {4, 6}, Gen::Positive}, {F32, {4, 6}}}, F32, {4, 6}, {}, Tol::Elementwise);
  compare("pow", {{F32, {4, 6}}, {I32, {6}, Gen::SmallNonNeg}}, F32, {4, 6}, {}, Tol::Elementwise);
  compare("pow", {{I64, {4, 6}}, {I64, {4, 6}, Gen::SmallNonNeg}}, I64, {4, 6}, {}, Tol::Exact);
  compare("pow", {{I32, {4, 6}}, {F32, {4, 6}, Gen::SmallNonNeg}}, I32, {4, 6}, {}, Tol::Exact);
  for (const char *k : {"equal", "less", "less_equal", "greater", "greater_equal"})
    for (DType t : {F32, I32, I64, U8})
      compare(k, {{t, {3, 1, 5}}, {t, {4, 5}}}, BOOL, {3, 4, 5}, {}, Tol::Exact);
  compare("equal", {{BOOL, {4, 5}}, {BOOL, {4, 5}}}, BOOL, {4, 5}, {}, Tol::Exact);
  for (const char *k : {"and", "or"})
    compare(k, {{BOOL, {3, 1}}, {BOOL, {3, 7}}}, BOOL, {3, 7}, {}, Tol::Exact);
}

TEST_F(HipKernels, UnaryKernels) {
  for (const char *k : {"neg", "sqrt", "reciprocal", "sigmoid", "tanh", "erf", "exp", "cos", "sin"})
    for (DType t : {F32, F64, F16, BF16})
      compare(k, {{t, {5, 7}, std::string(k) == "sqrt" ? Gen::Positive : Gen::Normal}}, t, {5, 7}, {},
              Tol::Elementwise);
  compare("sqrt", {{F32, {5, 7}}}, F32, {5, 7}, {}, Tol::Elementwise); // NaN for negatives
  for (DType t : {I8, I32, I64})
    compare("neg", {{t, {5, 7}}}, t, {5, 7}, {}, Tol::Exact);
  compare("erf", {{I32, {5, 7}}}, I32, {5, 7}, {}, Tol::Exact);
  compare("not", {{BOOL, {5, 7}}}, BOOL, {5, 7}, {}, Tol::Exact);
  compare("isnan", {{F32, {5, 7}}}, BOOL, {5, 7}, {}, Tol::Exact);
  compare("exp", {{F32, {5, 1}}}, F32, {5, 7}, {}, Tol::Elementwise); // broadcast in -> out
}

TEST_F(HipKernels, DataMovement) {
  compare("where", {{BOOL, {3, 1, 5}}, {F32, {4, 5}}, {F32, {3, 4, 1}}}, F32, {3, 4, 5}, {}, Tol::Exact);
  compare("where", {{BOOL, {4, 5}}, {I64, {4, 5}}, {I64, {5}}}, I64, {4, 5}, {}, Tol::Exact);
  compare("cast", {{F32, {4, 5}}}, I32, {4, 5}, {}, Tol::Exact);
  compare("cast", {{F32, {4, 5}}}, F16, {4, 5}, {}, Tol::Exact);
  compare("cast", {{F32, {4, 5}}}, BF16, {4, 5}, {}, Tol::Exact);
  compare("cast", {{F32, {4, 5}}}, BOOL, {4, 5}, {}, Tol::Exact);
  compare("cast", {{I64, {4, 5}}}, F32, {4, 5}, {}, Tol::Exact);
  compare("cast", {{I32, {4, 5}}}, I8, {4, 5}, {}, Tol::Exact);
  compare("cast", {{BF16, {4, 5}}}, F64, {4, 5}, {}, Tol::Exact);
  compare("cast", {{F64, {4, 5}}}, F16, {4, 5}, {}, Tol::Exact);
  compare("expand", {{F32, {3, 1}}}, F32, {2, 3, 4}, {}, Tol::Exact);
  compare("expand", {{F16, {3, 1}}}, F16, {2, 3, 4}, {}, Tol::Exact);
  compare("slice", {{F32, {6, 8}}}, F32, {3, 2}, attrs({}, {}, {1, 7, 2, -3}), Tol::Exact);
  compare("slice", {{I64, {5}}}, I64, {5}, attrs({}, {}, {4, -1}), Tol::Exact);
  compare("transpose", {{F32, {2, 3, 4}}}, F32, {4, 2, 3}, attrs({2, 0, 1}), Tol::Exact);
  compare("transpose", {{I8, {2, 3, 4}}}, I8, {3, 4, 2}, attrs({1, 2, 0}), Tol::Exact);
  compare("concat", {{F32, {2, 3}}, {F32, {2, 5}}}, F32, {2, 8}, attrs({1}), Tol::Exact);
  compare("concat", {{I64, {1, 3}}, {I64, {2, 3}}, {I64, {3, 3}}}, I64, {6, 3}, attrs({0}), Tol::Exact);
  compare("trilu", {{F32, {4, 5}}}, F32, {4, 5}, attrs({1}, {}, {1}), Tol::Exact);
  compare("trilu", {{I64, {2, 4, 5}}}, I64, {2, 4, 5}, attrs({0}, {}, {-1}), Tol::Exact);
  compare("fill", {}, F32, {3, 4}, attrs({}, {2.5}), Tol::Exact);
  compare("fill", {}, I64, {3, 4}, attrs({7}), Tol::Exact);
  compare("fill", {}, BF16, {3, 4}, attrs({}, {1.0 / 3}), Tol::Exact);
}

TEST_F(HipKernels, GatherFamily) {
  compare("gather", {{F32, {5, 4}}, {I64, {2, 3}, Gen::Index, 5}}, F32, {2, 3, 4}, attrs({0}), Tol::Exact);
  compare("gather", {{F32, {5, 4}}, {I32, {3}, Gen::Index, 4}}, F32, {5, 3}, attrs({1}), Tol::Exact);
  compare("gather", {{I64, {2, 5, 3}}, {I64, {2, 2}, Gen::Index, 5}}, I64, {2, 2, 2, 3}, attrs({-2}), Tol::Exact);
  compare("gather_elements", {{F32, {3, 4}}, {I64, {3, 2}, Gen::Index, 4}}, F32, {3, 2}, attrs({1}), Tol::Exact);
  compare("gather_elements", {{I32, {3, 4}}, {I32, {2, 4}, Gen::Index, 3}}, I32, {2, 4}, attrs({0}), Tol::Exact);
  compare("gather_nd", {{F32, {2, 3, 4}}, {I64, {2, 2}, Gen::Index, 2}}, F32, {2, 4}, attrs({0}), Tol::Exact);
  compare("gather_nd", {{F32, {2, 3, 4}}, {I64, {2, 1}, Gen::Index, 3}}, F32, {2, 4}, attrs({1}), Tol::Exact);
}

TEST_F(HipKernels, DataDependentAndShapeInputOps) {
  compare("count_nonzero", {{F32, {3, 4}, Gen::SmallNonNeg}}, I64, {}, {}, Tol::Exact);
  compare("tile", {{F32, {2, 3}}}, F32, {4, 9}, {}, Tol::Exact);
  compare("pad", {{F32, {3, 4}}, {F32, {}}}, F32, {6, 5}, attrs({0}, {}, {2, -1}), Tol::Exact);
  compare("pad", {{I64, {3, 4}}}, I64, {7, 9}, attrs({1}, {}, {2, 3}), Tol::Exact);
  compare("pad", {{F16, {3, 4}}}, F16, {4, 6}, attrs({2}, {}, {1, 1}), Tol::Exact);
  // add and mul with random (possibly repeated) indices: both devices apply them in row-major order.
  compare("scatter_elements", {{F32, {3, 4}}, {I64, {2, 4}, Gen::Index, 3}, {F32, {2, 4}}}, F32, {3, 4}, attrs({0, 1}),
          Tol::Exact);
  compare("scatter_nd", {{F32, {4, 3}}, {I64, {2, 1}, Gen::Index, 4}, {F32, {2, 3}}}, F32, {4, 3}, attrs({2}),
          Tol::Exact);
}

TEST_F(HipKernels, RangeAndRangeLength) {
  compare("range", {{F32, {}}, {F32, {}}}, F32, {7}, {}, Tol::Elementwise);
  compare("range", {{I64, {}}, {I64, {1}}}, I64, {7}, {}, Tol::Exact);
  compare("range_length", {{I64, {1}}, {I64, {1}}, {I64, {1}, Gen::NonZero}}, I64, {1}, {}, Tol::Exact);
  compare("range_length", {{F32, {}}, {F32, {}}, {F32, {}, Gen::NonZero}}, I64, {1}, {}, Tol::Exact);
}

TEST_F(HipKernels, Matmul) {
  compare("matmul", {{F32, {2, 3, 4}}, {F32, {4, 5}}}, F32, {2, 3, 5}, {}, Tol::Accumulate, 4);
  compare("matmul", {{F32, {1, 3, 4}}, {F32, {2, 4, 5}}}, F32, {2, 3, 5}, {}, Tol::Accumulate, 4);
  compare("matmul", {{F32, {2, 1, 3, 4}}, {F32, {3, 4, 5}}}, F32, {2, 3, 3, 5}, {}, Tol::Accumulate, 4);
  compare("matmul", {{F32, {64, 128}}, {F32, {128, 96}}}, F32, {64, 96}, {}, Tol::Accumulate, 128);
  compare("matmul", {{F32, {1, 7}}, {F32, {7, 1}}}, F32, {1, 1}, {}, Tol::Accumulate, 7);
  compare("matmul", {{F64, {3, 4}}, {F64, {4, 2}}}, F64, {3, 2}, {}, Tol::Accumulate, 4);
  compare("matmul", {{F16, {5, 6}}, {F16, {6, 3}}}, F16, {5, 3}, {}, Tol::Accumulate, 6);
  compare("matmul", {{BF16, {5, 6}}, {BF16, {6, 3}}}, BF16, {5, 3}, {}, Tol::Accumulate, 6);
  compare("matmul", {{I64, {3, 4}}, {I64, {4, 2}}}, I64, {3, 2}, {}, Tol::Exact);
  compare("matmul", {{I32, {2, 3, 4}}, {I32, {4, 2}}}, I32, {2, 3, 2}, {}, Tol::Exact);
  compare("matmul", {{F32, {3, 0}}, {F32, {0, 2}}}, F32, {3, 2}, {}, Tol::Exact);
  // Small batched products take the BLAS by default and the direct kernel with
  // DQ_HIP_SMALL_MATMUL=on. Through the BLAS, grouped-query attention (b broadcast over the
  // innermost batch dim) joins that dim to M when a's and out's rows run on across it (layout 0);
  // other layouts keep the batch. The last two are a decode step's attention at f16 (scores of one
  // query row per head against 200 cached keys, then the values).
  for (const char *small : {"off", "on"}) {
    SCOPED_TRACE(std::string("DQ_HIP_SMALL_MATMUL=") + small);
    setenv("DQ_HIP_SMALL_MATMUL", small, 1);
    hip = createDevice("hip");
    unsetenv("DQ_HIP_SMALL_MATMUL");
    compare("matmul", {{F32, {1, 4, 4, 1, 16}}, {F32, {1, 4, 1, 16, 9}}}, F32, {1, 4, 4, 1, 9}, {}, Tol::Accumulate,
            16);
    compare("matmul", {{F16, {2, 3, 2, 16}}, {F16, {2, 1, 16, 24}}}, F16, {2, 3, 2, 24}, {}, Tol::Accumulate, 16);
    compare("matmul", {{F32, {3, 2, 5, 7}}, {F32, {7, 4}}}, F32, {3, 2, 5, 4}, {}, Tol::Accumulate, 7);
    compare("matmul", {{F64, {2, 2, 3, 5}}, {F64, {2, 1, 5, 4}}}, F64, {2, 2, 3, 4}, {}, Tol::Accumulate, 5);
    compare("matmul", {{BF16, {3, 2, 6}}, {BF16, {3, 6, 5}}}, BF16, {3, 2, 5}, {}, Tol::Accumulate, 6);
    compare("matmul", {{F16, {1, 4, 4, 1, 64}}, {F16, {1, 4, 1, 64, 200}}}, F16, {1, 4, 4, 1, 200}, {}, Tol::Accumulate,
            64);
    compare("matmul", {{F16, {1, 4, 4, 1, 200}}, {F16, {1, 4, 1, 200, 64}}}, F16, {1, 4, 4, 1, 64}, {}, Tol::Accumulate,
            200);
  }
  hip = createDevice("hip");
  // One activation row times a [1, K, N] weight, through the BLAS here, then through the decode
  // GEMV (opt-in): in layout 3 every operand is contiguous and aligned, so it runs (split over K
  // when K is long); other layouts still take the BLAS.
  for (const char *gemv : {"off", "on"}) {
    SCOPED_TRACE(std::string("DQ_HIP_GEMV=") + gemv);
    setenv("DQ_HIP_GEMV", gemv, 1);
    hip = createDevice("hip");
    unsetenv("DQ_HIP_GEMV");
    compare("matmul", {{F16, {1, 1, 2048}}, {F16, {1, 2048, 512}}}, F16, {1, 1, 512}, {}, Tol::Accumulate, 2048);
    compare("matmul", {{F16, {1, 1, 64}}, {F16, {1, 64, 4096}}}, F16, {1, 1, 4096}, {}, Tol::Accumulate, 64);
    compare("matmul", {{BF16, {1, 1, 300}}, {BF16, {1, 300, 40}}}, BF16, {1, 1, 40}, {}, Tol::Accumulate, 300);
    compare("matmul", {{F32, {1, 1, 1000}}, {F32, {1, 1000, 132}}}, F32, {1, 1, 132}, {}, Tol::Accumulate, 1000);
    compare("matmul", {{F32, {1, 1, 5}}, {F32, {1, 5, 4}}}, F32, {1, 1, 4}, {}, Tol::Accumulate, 5);
    compare("matmul", {{F16, {1, 1, 9}}, {F16, {1, 9, 12}}}, F16, {1, 1, 12}, {}, Tol::Accumulate, 9);
  }
}

TEST_F(HipKernels, NormalizationsAndScans) {
  compare("softmax", {{F32, {3, 7}}}, F32, {3, 7}, attrs({1}), Tol::Accumulate, 7);
  compare("softmax", {{F32, {4, 5, 6}}}, F32, {4, 5, 6}, attrs({1}), Tol::Accumulate, 5);
  compare("softmax", {{F32, {2, 1000}}}, F32, {2, 1000}, attrs({1}), Tol::Accumulate, 1000);
  compare("softmax", {{F16, {3, 7}}}, F16, {3, 7}, attrs({0}), Tol::Accumulate, 3);
  compare("softmax", {{F64, {3, 7}}}, F64, {3, 7}, attrs({1}), Tol::Accumulate, 7);
  compare("layer_norm", {{F32, {2, 3, 8}}, {F32, {8}}, {F32, {8}}}, F32, {2, 3, 8}, attrs({2}, {1e-5}), Tol::Accumulate,
          8);
  compare("layer_norm", {{F32, {2, 3, 8}}, {F32, {3, 8}}}, F32, {2, 3, 8}, attrs({-2}, {1e-3}), Tol::Accumulate, 24);
  compare("layer_norm", {{F32, {4, 768}}, {F32, {768}}, {F32, {768}}}, F32, {4, 768}, attrs({1}, {1e-12}),
          Tol::Accumulate, 768);
  compare("layer_norm", {{BF16, {3, 16}}, {BF16, {16}}, {BF16, {16}}}, BF16, {3, 16}, attrs({1}, {1e-5}),
          Tol::Accumulate, 16);
  compare("cumsum", {{F32, {3, 6}}}, F32, {3, 6}, attrs({1, 0, 0}), Tol::Accumulate, 6);
  compare("cumsum", {{F32, {3, 6}}}, F32, {3, 6}, attrs({-1, 1, 1}), Tol::Accumulate, 6);
  compare("cumsum", {{I64, {3, 6}}}, I64, {3, 6}, attrs({0, 1, 0}, {}, {}), Tol::Exact);
  compare("cumsum", {{I32, {3, 6}}}, I32, {3, 6}, attrs({0, 0, 1}, {}, {1}), Tol::Exact);
}

TEST_F(HipKernels, Reductions) {
  compare("reduce_sum", {{F32, {3, 4, 5}}}, F32, {3, 1, 5}, attrs({1}), Tol::Accumulate, 4);
  compare("reduce_mean", {{F32, {3, 4, 5}}}, F32, {1, 4, 1}, attrs({0, 2}), Tol::Accumulate, 15);
  compare("reduce_sum", {{F32, {5000}}}, F32, {1}, attrs({0}), Tol::Accumulate, 5000);
  compare("reduce_sum", {{F16, {6, 40}}}, F16, {6, 1}, attrs({1}), Tol::Accumulate, 40);
  compare("reduce_sum", {{I64, {3, 4, 5}}}, I64, {3, 4, 1}, attrs({2}), Tol::Exact);
  compare("reduce_mean", {{I32, {3, 4, 5}}}, I32, {3, 1, 1}, attrs({1, 2}), Tol::Exact);
  compare("reduce_max", {{F32, {3, 4, 5}}}, F32, {3, 4, 1}, attrs({2}), Tol::Exact);
  compare("reduce_max", {{I8, {3, 4, 5}}}, I8, {1, 4, 5}, attrs({0}), Tol::Exact);
  compare("reduce_max", {{BOOL, {3, 4, 5}}}, BOOL, {3, 1, 5}, attrs({1}), Tol::Exact);
  compare("reduce_sum", {{F32, {3, 4, 5}}}, F32, {3, 1, 1}, attrs({}, {}, {0, 1, 1}), Tol::Accumulate, 20);
  compare("reduce_sum", {{F32, {3, 4}}}, F32, {3, 4}, attrs({}), Tol::Accumulate, 1);
  compare("reduce_sum", {{F32, {3, 0}}}, F32, {3, 1}, attrs({1}), Tol::Exact);
  compare("reduce_mean", {{F32, {3, 0}}}, F32, {3, 1}, attrs({1}), Tol::Exact);
}

TEST_F(HipKernels, ElementwiseAndReductionTail) {
  for (const char *k : {"relu", "abs", "sign", "floor", "ceil", "round"})
    for (DType t : {F32, F64, F16, BF16})
      compare(k, {{t, {5, 7}}}, t, {5, 7}, {}, Tol::Elementwise);
  for (const char *k : {"relu", "abs", "sign"})
    for (DType t : {I8, I32, I64})
      compare(k, {{t, {5, 7}}}, t, {5, 7}, {}, Tol::Exact);
  compare("abs", {{U8, {5, 7}}}, U8, {5, 7}, {}, Tol::Exact);
  compare("log", {{F32, {5, 7}, Gen::Positive}}, F32, {5, 7}, {}, Tol::Elementwise);
  compare("leaky_relu", {{F32, {5, 7}}}, F32, {5, 7}, attrs({}, {0.1}), Tol::Elementwise);
  compare("xor", {{BOOL, {3, 1}}, {BOOL, {3, 7}}}, BOOL, {3, 7}, {}, Tol::Exact);
  for (DType t : {I8, I32, I64}) {
    compare("mod", {{t, {3, 1, 5}}, {t, {4, 5}, Gen::NonZero}}, t, {3, 4, 5}, {}, Tol::Exact);
    compare("fmod", {{t, {3, 1, 5}}, {t, {4, 5}, Gen::NonZero}}, t, {3, 4, 5}, {}, Tol::Exact);
  }
  compare("fmod", {{F32, {4, 5}}, {F32, {5}, Gen::NonZero}}, F32, {4, 5}, {}, Tol::Elementwise);
  compare("log_softmax", {{F32, {3, 7}}}, F32, {3, 7}, attrs({1}), Tol::Accumulate, 7);
  compare("log_softmax", {{F64, {4, 5, 6}}}, F64, {4, 5, 6}, attrs({1}), Tol::Accumulate, 5);
  compare("reduce_min", {{F32, {3, 4, 5}}}, F32, {3, 4, 1}, attrs({2}), Tol::Exact);
  compare("reduce_min", {{I32, {3, 4, 5}}}, I32, {1, 4, 5}, attrs({0}), Tol::Exact);
  compare("reduce_prod", {{F32, {3, 4, 5}}}, F32, {3, 1, 5}, attrs({1}), Tol::Accumulate, 4);
  compare("reduce_prod", {{I64, {3, 4, 5}}}, I64, {3, 4, 1}, attrs({2}), Tol::Exact);
  compare("reduce_l2", {{F32, {3, 4, 5}}}, F32, {1, 4, 1}, attrs({0, 2}), Tol::Accumulate, 15);
  compare("reduce_l2", {{I32, {3, 4, 5}}}, I32, {3, 1, 1}, attrs({1, 2}), Tol::Exact);
  compare("reduce_sum_square", {{F16, {6, 40}}}, F16, {6, 1}, attrs({1}), Tol::Accumulate, 40);
  compare("reduce_sum_square", {{I64, {3, 4, 5}}}, I64, {3, 4, 1}, attrs({2}), Tol::Exact);
  compare("reduce_log_sum_exp", {{F32, {3, 4, 5}}}, F32, {3, 1, 5}, attrs({1}), Tol::Accumulate, 4);
  compare("reduce_prod", {{F32, {3, 0}}}, F32, {3, 1}, attrs({1}), Tol::Exact);
  compare("reduce_log_sum_exp", {{F32, {3, 0}}}, F32, {3, 1}, attrs({1}), Tol::Exact);
  for (const char *k : {"arg_max", "arg_min"})
    for (int64_t last : {0, 1}) {
      compare(k, {{F32, {3, 4, 5}}}, I64, {3, 1, 5}, attrs({1, last}), Tol::Exact);
      compare(k, {{I8, {3, 4, 5}}}, I64, {3, 4, 1}, attrs({2, last}), Tol::Exact);
      // Lines longer than a block, full of ties between threads' shares.
      compare(k, {{F32, {2, 1000}, Gen::SmallNonNeg}}, I64, {2, 1}, attrs({1, last}), Tol::Exact);
      compare(k, {{I8, {700, 3}}}, I64, {1, 3}, attrs({0, last}), Tol::Exact);
    }
  compare("one_hot", {{I64, {3, 4}, Gen::Index, 6}, {F32, {2}}}, F32, {3, 5, 4}, attrs({1}), Tol::Exact);
  compare("one_hot", {{I32, {4}, Gen::Index, 3}, {I64, {2}}}, I64, {4, 3}, attrs({1}), Tol::Exact);
}

// The bandwidth paths of elementwise, cast and copy (HipKernels.hip): rows long enough for the row
// kernels, lengths that leave a partial 16-byte vector at the end, rows whose starts are not
// 16-byte aligned (f16 rows of 700 elements; layout 1 starts at element 1 with stride 2), row and
// column broadcasts, and transposes that take the shared-memory tiles (partial tiles, a batch
// dim). + and * are correctly rounded in double on both devices, so those agree exactly.
TEST_F(HipKernels, BandwidthPathsAgainstTheSim) {
  for (DType t : {F32, F16, BF16, F64}) {
    compare("add", {{t, {3, 1001}}, {t, {3, 1001}}}, t, {3, 1001}, {}, Tol::Exact);
    compare("add", {{t, {5, 700}}, {t, {700}}}, t, {5, 700}, {}, Tol::Exact);
    compare("mul", {{t, {6, 512}}, {t, {6, 1}}}, t, {6, 512}, {}, Tol::Exact);
    compare("mul", {{t, {4099}}, {t, {1}}}, t, {4099}, {}, Tol::Exact);
    compare("exp", {{t, {2, 3000}}}, t, {2, 3000}, {}, Tol::Elementwise);
  }
  compare("less", {{F32, {3, 1001}}, {F32, {1001}}}, BOOL, {3, 1001}, {}, Tol::Exact);
  compare("add", {{I32, {3, 1001}}, {I32, {3, 1001}}}, I32, {3, 1001}, {}, Tol::Exact);
  compare("cast", {{F32, {3, 1001}}}, F16, {3, 1001}, {}, Tol::Exact);
  compare("cast", {{F16, {2, 999}}}, F32, {2, 999}, {}, Tol::Exact);
  compare("cast", {{I64, {4099}}}, F32, {4099}, {}, Tol::Exact);
  for (DType t : {F32, F16, I8, I64}) {
    compare("transpose", {{t, {67, 45}}}, t, {45, 67}, attrs({1, 0}), Tol::Exact);
    compare("transpose", {{t, {3, 40, 33}}}, t, {3, 33, 40}, attrs({0, 2, 1}), Tol::Exact);
    compare("expand", {{t, {1, 1000}}}, t, {3, 1000}, {}, Tol::Exact);
  }
}

// fused_elementwise: RMSNorm's tail (add eps, sqrt, div, mul weight; leaves mean [4, 1], eps [1],
// x [4, 6], weight [6]) against the sim; +, sqrt, / and * are correctly rounded in double on both
// devices, so the chain agrees as one elementwise kernel does.
TEST_F(HipKernels, FusedElementwiseAgainstTheSim) {
  const std::vector<int64_t> rms = {0, 0, 1, 8, 4, -1, 3, 2, 5, 2, 6, 3};
  for (DType t : {F32, F16, BF16, F64})
    compare("fused_elementwise", {{t, {4, 1}, Gen::Positive}, {t, {1}, Gen::Positive}, {t, {4, 6}}, {t, {6}}}, t,
            {4, 6}, attrs(rms), Tol::Elementwise);
}

// fused_elementwise against the unfused elementwise kernels on hip itself: each step launched
// alone (its output read back and placed as the next step's input, which keeps its bits), then
// the fused kernel on strided leaves into a strided output; the bytes must be equal.
TEST_F(HipKernels, FusedElementwiseEqualsTheUnfusedKernelsBitForBit) {
  struct Step {
    const char *op;
    int64_t a, b;
  };
  struct Case {
    std::vector<In> leaves;
    std::vector<Step> steps;
  };
  for (DType t : {F32, F16}) {
    const std::vector<Case> cases = {
        {{{t, {4, 1}, Gen::Positive}, {t, {1}, Gen::Positive}, {t, {4, 6}}, {t, {6}}},
         {{"add", 0, 1}, {"sqrt", 4, -1}, {"div", 2, 5}, {"mul", 6, 3}}},
        {{{t, {2, 3, 5}}, {t, {3, 5}}}, {{"sigmoid", 0, -1}, {"mul", 0, 2}, {"mul", 3, 1}}},
        {{{t, {3, 5}}, {t, {1, 5}}}, {{"tanh", 0, -1}, {"exp", 2, -1}, {"erf", 1, -1}, {"pow", 3, 4}, {"max", 5, 0}}},
    };
    for (const Case &c : cases) {
      std::mt19937 rng(99);
      std::vector<HostTensor> vals;
      for (const In &in : c.leaves)
        vals.push_back(random(in, rng));
      std::vector<int64_t> imm;
      for (const Step &s : c.steps) {
        const bool binary = s.b >= 0;
        std::vector<int64_t> shape = vals[static_cast<size_t>(s.a)].dims;
        if (binary) {
          std::vector<int64_t> other = vals[static_cast<size_t>(s.b)].dims;
          if (other.size() > shape.size()) std::swap(shape, other);
          for (size_t i = 0; i < other.size(); ++i)
            if (shape[i + shape.size() - other.size()] == 1) shape[i + shape.size() - other.size()] = other[i];
        }
        std::vector<Placed> ins = {layoutOf(vals[static_cast<size_t>(s.a)], 0)};
        if (binary) ins.push_back(layoutOf(vals[static_cast<size_t>(s.b)], 0));
        vals.push_back(runOn(*hip, s.op, ins, layoutOf(HostTensor(t, shape), 0), {}));
        imm.insert(imm.end(), {fusedOpCode(s.op), s.a, s.b});
      }
      std::vector<Placed> leaves;
      for (size_t i = 0; i < c.leaves.size(); ++i)
        leaves.push_back(layoutOf(vals[i], 1));
      const HostTensor &want = vals.back();
      HostTensor got = runOn(*hip, "fused_elementwise", leaves, layoutOf(HostTensor(t, want.dims), 3), attrs(imm));
      EXPECT_EQ(got.bytes, want.bytes) << c.steps[0].op << " chain, " << dtypeName(t);
    }
  }
}

// arg_max over 1000 elements, 7 at every i % 9 == 8 and a NaN at 300 and 700: by the sequential
// scan's rule a NaN beats every number, so the answer is 300, or 700 with select_last_index.
TEST_F(HipKernels, ArgMaxLongLineKeepsTheScanOrder) {
  std::vector<float> v(1000);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(i % 9 == 8 ? 7 : i % 5);
  std::vector<Placed> noNaN{layoutOf(HostTensor::fromValues<float>(F32, {1000}, v), 0)};
  Placed out = layoutOf(HostTensor(I64, {1}), 0);
  EXPECT_EQ(runOn(*hip, "arg_max", noNaN, out, attrs({0, 0})).values<int64_t>()[0], 8);
  EXPECT_EQ(runOn(*hip, "arg_max", noNaN, out, attrs({0, 1})).values<int64_t>()[0], 998);
  v[300] = v[700] = std::nanf("");
  std::vector<Placed> withNaN{layoutOf(HostTensor::fromValues<float>(F32, {1000}, v), 0)};
  EXPECT_EQ(runOn(*hip, "arg_max", withNaN, out, attrs({0, 0})).values<int64_t>()[0], 300);
  EXPECT_EQ(runOn(*hip, "arg_max", withNaN, out, attrs({0, 1})).values<int64_t>()[0], 700);
  EXPECT_EQ(runOn(*hip, "arg_min", withNaN, out, attrs({0, 0})).values<int64_t>()[0], 300);
}

TEST_F(HipKernels, ErrorsMatchTheSim) {
  auto both = [&](const std::string &kernel, const std::vector<HostTensor> &ins, DType outType,
                  std::vector<int64_t> outDims, const KernelArgs &args) {
    std::string msgs[2];
    SimDevice sim;
    std::unique_ptr<Device> fresh = createDevice("hip"); // same buffer numbers as the fresh sim
    Device *devs[2] = {&sim, fresh.get()};
    for (int i = 0; i < 2; ++i) {
      std::vector<Placed> placed;
      for (const HostTensor &v : ins)
        placed.push_back(layoutOf(v, 0));
      Placed out = layoutOf(HostTensor(outType, outDims), 0);
      msgs[i] = errorOf([&] { runOn(*devs[i], kernel, placed, out, args); });
    }
    EXPECT_EQ(msgs[1], msgs[0]);
    EXPECT_NE(msgs[0], "<no error>");
  };
  auto i64 = [](std::vector<int64_t> d, std::vector<int64_t> v) { return HostTensor::fromValues<int64_t>(I64, d, v); };
  auto f32 = [](std::vector<int64_t> d, std::vector<float> v) { return HostTensor::fromValues<float>(F32, d, v); };
  both("gather", {f32({3}, {1, 2, 3}), i64({2}, {0, 3})}, F32, {2}, attrs({0}));
  both("gather_elements", {f32({3}, {1, 2, 3}), i64({2}, {-4, 0})}, F32, {2}, attrs({0}));
  both("gather_nd", {f32({3}, {1, 2, 3}), i64({1, 1}, {5})}, F32, {1}, attrs({0}));
  both("nonzero", {f32({3}, {1, 0, 3})}, I64, {1, 3}, {});
  both("compress", {f32({2}, {1, 2}), HostTensor::fromValues<uint8_t>(DType::Bool, {3}, {0, 0, 1})}, F32, {0},
       attrs({0}));
  both("pad", {f32({0}, {})}, F32, {2}, attrs({2}, {}, {1}));
  both("scatter_nd", {f32({3}, {1, 2, 3}), i64({2, 1}, {1, 1}), f32({2}, {0, 0})}, F32, {3}, attrs({0}));
  both("div", {i64({2}, {1, 2}), i64({2}, {1, 0})}, I64, {2}, {});
  both("pow", {i64({1}, {0}), i64({1}, {-2})}, I64, {1}, {});
  both("range_length", {i64({1}, {0}), i64({1}, {5}), i64({1}, {0})}, I64, {1}, {});
  both("sqrt", {HostTensor::fromValues<int32_t>(I32, {1}, {4})}, I32, {1}, {});
  both("reduce_max", {f32({2, 0}, {})}, F32, {2, 1}, attrs({1}));
  both("reduce_min", {f32({2, 0}, {})}, F32, {2, 1}, attrs({1}));
  both("mod", {i64({2}, {1, 2}), i64({2}, {1, 0})}, I64, {2}, {});
  both("arg_max", {f32({0, 2}, {})}, I64, {1, 2}, attrs({0, 0}));
  both("add", {f32({3}, {1, 2, 3}), f32({2}, {1, 2})}, F32, {3}, {});
  EXPECT_NE(errorOf([&] { hip->launch("conv", {}, {}, {}); }).find("unsupported: kernel 'conv' on hip"),
            std::string::npos);
}

TEST_F(HipKernels, HostMappedMemoryIsVisibleToKernelsAndPageableIsNot) {
  Device &d = *hip;
  BufferView a = dq::rt::test::put(d, f32Values(), MemSpace::HostMapped);
  BufferView out = dq::rt::test::blank(d, F32, {3}, MemSpace::HostMapped);
  d.launch("neg", {a}, {out}, {});
  float v[3];
  // A host read before the synchronization is refused (the device conformance suite's rule).
  EXPECT_NE(errorOf([&] { d.hostLoad(v, out.buffer, 0, 12); }).find("unsynchronized read"), std::string::npos);
  d.synchronize();
  d.hostLoad(v, out.buffer, 0, 12);
  EXPECT_EQ(v[0], -1.0f);
  EXPECT_EQ(v[2], -3.0f);
  BufferView pageable = dq::rt::test::put(d, f32Values(), MemSpace::Host);
  EXPECT_NE(errorOf([&] { d.launch("neg", {pageable}, {out}, {}); }).find("pageable host memory"), std::string::npos);
}
