// "fused_elementwise" on sim and sim-elem. The expected values come from the independent path:
// the unfused elementwise kernels launched one after another, each step into its own buffer of
// the broadcast shape of its operands; the fused output must equal them byte for byte. One small
// case is calculated by hand, and the loader's and the kernel's errors are checked.
#include "DeviceTestUtil.h"
#include "TestPrograms.h"
#include "dq/runtime/Float16.h"
#include "dq/runtime/ProgramCheck.h"
#include "dq/runtime/Runtime.h"
#include "dq/runtime/SimDevice.h"

#include <cstring>
#include <random>

using namespace dq::rt;
using dq::rt::test::blank;
using dq::rt::test::errorOf;
using dq::rt::test::in;

namespace {

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

int64_t count(const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// A leaf: its logical dims, and whether it is laid out strided (every other element of a
/// buffer twice as large, starting at element 1) instead of contiguous.
struct Leaf {
  std::vector<int64_t> dims;
  bool strided = false;
};

/// Uploads `values` (doubles, rounded to `t`) as a view of `leaf`'s layout.
BufferView place(Device &d, DType t, const Leaf &leaf, const std::vector<double> &values) {
  const int64_t n = count(leaf.dims);
  const int64_t storage = leaf.strided ? 2 * n + 1 : n;
  HostTensor host(t, {storage});
  for (int64_t i = 0; i < n; ++i) {
    const double v = values[static_cast<size_t>(i)];
    const int64_t at = leaf.strided ? 1 + 2 * i : i;
    uint8_t *p = host.bytes.data() + at * dtypeSize(t);
    if (t == DType::F32) {
      float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
    } else {
      uint16_t h = doubleToHalf(v);
      std::memcpy(p, &h, 2);
    }
  }
  BufferHandle h = d.allocate(MemSpace::Device, host.bytes.size(), AllocPurpose::Buffer);
  d.upload(h, 0, host.bytes.data(), host.bytes.size());
  BufferView v = contiguousView(h, t, leaf.dims);
  if (leaf.strided) {
    v.offset = 1;
    for (int64_t &s : v.strides)
      s *= 2;
  }
  return v;
}

/// numpy broadcast of two shapes (right-aligned).
std::vector<int64_t> broadcast(std::vector<int64_t> a, std::vector<int64_t> b) {
  if (a.size() < b.size()) std::swap(a, b);
  const size_t shift = a.size() - b.size();
  for (size_t i = 0; i < b.size(); ++i)
    if (a[i + shift] == 1) a[i + shift] = b[i];
  return a;
}

/// The bytes of a view's logical elements in row-major order (the view may be strided).
std::vector<uint8_t> bytesOf(Device &d, const BufferView &v) {
  const size_t es = dtypeSize(v.dtype);
  const auto range = v.elementRange();
  std::vector<uint8_t> all(static_cast<size_t>(range.second + 1) * es);
  d.download(all.data(), v.buffer, 0, all.size());
  std::vector<uint8_t> out;
  std::vector<int64_t> idx(v.sizes.size(), 0);
  for (int64_t k = 0; k < v.numElements(); ++k) {
    int64_t e = v.offset;
    for (size_t i = 0; i < idx.size(); ++i)
      e += idx[i] * v.strides[i];
    out.insert(out.end(), all.begin() + e * es, all.begin() + (e + 1) * es);
    for (size_t i = idx.size(); i-- > 0;) {
      if (++idx[i] < v.sizes[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

/// One step of a test program: kernel name and operand indices as in Program.h.
struct TestStep {
  const char *op;
  int64_t a, b;
};

/// Runs `steps` over `leaves` unfused (one kernel per step) and fused into a strided output on
/// a fresh device of `precision`; expects byte-identical outputs.
void expectFusedEqualsUnfused(SimPrecision precision, DType t, const std::vector<Leaf> &leaves,
                              const std::vector<TestStep> &steps, const std::vector<int64_t> &outDims, uint32_t seed,
                              const std::string &what) {
  SCOPED_TRACE(what + " " + dtypeName(t) + (precision == SimPrecision::Exact ? " sim" : " sim-elem"));
  SimDevice d(precision);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.05, 3.0);
  std::vector<BufferView> views;
  std::vector<std::vector<int64_t>> shapes;
  for (const Leaf &leaf : leaves) {
    std::vector<double> values(static_cast<size_t>(count(leaf.dims)));
    for (double &v : values)
      v = (rng() % 4 == 0 ? -1 : 1) * u(rng);
    views.push_back(place(d, t, leaf, values));
    shapes.push_back(leaf.dims);
  }
  const int64_t n = static_cast<int64_t>(leaves.size());
  std::vector<int64_t> imm;
  for (const TestStep &s : steps) {
    const int64_t code = fusedOpCode(s.op);
    ASSERT_GE(code, 0) << s.op;
    imm.insert(imm.end(), {code, s.a, s.b});
    const bool binary = fusedOpArity(code) == 2;
    std::vector<int64_t> shape = binary ? broadcast(shapes[s.a], shapes[s.b]) : shapes[s.a];
    BufferView out = blank(d, t, shape);
    std::vector<BufferView> ins = {views[s.a]};
    if (binary) ins.push_back(views[s.b]);
    d.launch(s.op, ins, {out}, {});
    views.push_back(out);
    shapes.push_back(shape);
  }
  ASSERT_EQ(shapes.back(), outDims);
  const std::vector<uint8_t> want = bytesOf(d, views.back());
  // The fused output is strided too: it must land at the right elements.
  const int64_t on = count(outDims);
  BufferHandle oh =
      d.allocate(MemSpace::Device, static_cast<uint64_t>(2 * on + 1) * dtypeSize(t), AllocPurpose::Buffer);
  const std::vector<uint8_t> zeros(static_cast<size_t>(2 * on + 1) * dtypeSize(t), 0);
  d.upload(oh, 0, zeros.data(), zeros.size()); // the gaps are read back with the view
  BufferView out = contiguousView(oh, t, outDims);
  out.offset = 1;
  for (int64_t &s : out.strides)
    s *= 2;
  std::vector<BufferView> ins(views.begin(), views.begin() + n);
  d.launch("fused_elementwise", ins, {out}, {imm, {}, {}});
  EXPECT_EQ(bytesOf(d, out), want);
}

const std::vector<TestStep> kRmsTail = {{"add", 0, 1}, {"sqrt", 4, -1}, {"div", 2, 5}, {"mul", 6, 3}};
const std::vector<TestStep> kSilu = {{"sigmoid", 0, -1}, {"mul", 0, 2}, {"mul", 3, 1}};

} // namespace

TEST(FusedElementwise, RmsNormTailEqualsTheUnfusedKernelsBitForBit) {
  // leaves mean [4, 1], eps [] (0-d), x [4, 6] strided, weight [6] strided.
  const std::vector<Leaf> leaves = {{{4, 1}, false}, {{}, false}, {{4, 6}, true}, {{6}, true}};
  for (DType t : {DType::F16, DType::F32})
    for (SimPrecision p : {SimPrecision::Exact, SimPrecision::ElementType})
      expectFusedEqualsUnfused(p, t, leaves, kRmsTail, {4, 6}, 7, "rms tail");
}

TEST(FusedElementwise, SiluEqualsTheUnfusedKernelsBitForBit) {
  // gate [2, 3, 5] strided, up [3, 5] broadcast along dim 0.
  const std::vector<Leaf> leaves = {{{2, 3, 5}, true}, {{3, 5}, false}};
  for (DType t : {DType::F16, DType::F32})
    for (SimPrecision p : {SimPrecision::Exact, SimPrecision::ElementType})
      expectFusedEqualsUnfused(p, t, leaves, kSilu, {2, 3, 5}, 11, "silu");
}

TEST(FusedElementwise, EveryOpCodeEqualsItsKernelBitForBit) {
  // Per op code: s0 = mul(x, b) with x [3, 5] strided and b [1, 5] broadcast (a rounded,
  // broadcast intermediate), abs(s0) first where the op needs a non-negative operand (sqrt, log,
  // pow), then the op on it (binary ops with leaf 2, [3, 5] strided).
  const std::vector<Leaf> leaves = {{{3, 5}, true}, {{1, 5}, false}, {{3, 5}, true}};
  int64_t codes = 0;
  for (int64_t code = 0; fusedOpName(code); ++code, ++codes) {
    const std::string op = fusedOpName(code);
    std::vector<TestStep> steps = {{"mul", 0, 1}};
    if (op == "sqrt" || op == "log" || op == "pow") steps.push_back({"abs", 3, -1});
    const int64_t last = 3 + static_cast<int64_t>(steps.size()) - 1;
    steps.push_back({fusedOpName(code), last, fusedOpArity(code) == 2 ? 2 : -1});
    for (DType t : {DType::F16, DType::F32})
      for (SimPrecision p : {SimPrecision::Exact, SimPrecision::ElementType})
        expectFusedEqualsUnfused(p, t, leaves, steps, {3, 5}, 13 + static_cast<uint32_t>(code), op);
  }
  EXPECT_EQ(codes, 23); // add .. min (7 binary), neg .. sign (16 unary)
}

TEST(FusedElementwise, RoundsEveryStepToTheElementType) {
  // f16 has a spacing of 2 in [2048, 4096). (2048 + 1) - 2048: 2049 is a tie between 2048 and
  // 2050 and rounds to the even 2048, so 0 (not 1, the value without the rounding between the
  // steps). (2050 + 1) - 2050: 2051 ties between 2050 and 2052 and rounds to the even 2052, so 2.
  // Steps: add(0, 1) = 2, sub(2, 0).
  for (SimPrecision p : {SimPrecision::Exact, SimPrecision::ElementType}) {
    SimDevice d(p);
    BufferView x = in<uint16_t>(d, DType::F16, {2}, {doubleToHalf(2048), doubleToHalf(2050)});
    BufferView one = in<uint16_t>(d, DType::F16, {1}, {doubleToHalf(1)});
    auto y =
        dq::rt::test::run<uint16_t>(d, "fused_elementwise", {x, one}, DType::F16, {2}, {{0, 0, 1, 1, 2, 0}, {}, {}});
    EXPECT_EQ(halfToFloat(y[0]), 0.0f) << d.name();
    EXPECT_EQ(halfToFloat(y[1]), 2.0f) << d.name();
  }
}

TEST(FusedElementwise, KernelRejectsBadOperandsAndPrograms) {
  SimDevice d;
  auto x = [&] { return in<float>(d, DType::F32, {2}, {1, 2}); };
  auto launch = [&](std::vector<BufferView> ins, DType outType, std::vector<int64_t> imm) {
    return errorOf([&] { dq::rt::test::run<float>(d, "fused_elementwise", ins, outType, {2}, {imm, {}, {}}); });
  };
  EXPECT_TRUE(
      contains(launch({x()}, DType::F32, {99, 0, -1}), "kernel 'fused_elementwise': step 0: unknown op code 99"));
  EXPECT_TRUE(contains(launch({x()}, DType::F32, {8, 1, -1}),
                       "step 0: operand a = 1 is not a leaf or an earlier step (1 leaves, step 0)"));
  EXPECT_TRUE(contains(launch({x()}, DType::F32, {8, 0, 0}), "unary 'sqrt' takes operand b = -1, has 0"));
  EXPECT_TRUE(contains(launch({x()}, DType::F32, {8, 0}), "3 immediates"));
  EXPECT_TRUE(contains(launch({x(), in<uint16_t>(d, DType::F16, {2}, {0, 0})}, DType::F32, {0, 0, 1}), "in 1"));
  EXPECT_TRUE(contains(launch({in<int32_t>(d, DType::I32, {2}, {1, 2})}, DType::I32, {7, 0, -1}), "unsupported: "));
  std::vector<BufferView> nine(9, x());
  EXPECT_TRUE(contains(launch(nine, DType::F32, {0, 0, 1}), "takes 1 to 8 inputs, has 9"));
  std::vector<int64_t> seventeen;
  for (int j = 0; j < 17; ++j)
    seventeen.insert(seventeen.end(), {7, j, -1});
  EXPECT_TRUE(contains(launch({x()}, DType::F32, seventeen), "has 17 steps, at most 16 allowed"));
}

TEST(FusedElementwise, LoaderNamesTheInstructionOfABadProgram) {
  test::Builder b;
  b.addInput("x", DType::F32, {2});
  b.addOutput("y", DType::F32, {2});
  int32_t x = b.input(0);
  int32_t y = b.allocOutput(0, DType::F32, {b.index(2)});
  b.kernel("fused_elementwise", {x}, {y}, {0, 0, 1}); // add(leaf 0, step 0): reads itself
  b.ret({y});
  std::string err = errorOf([&] { validateProgram(b.program, "prog.dqp"); });
  EXPECT_TRUE(contains(err, "prog.dqp: instruction ")) << err;
  EXPECT_TRUE(contains(err, "(Kernel 'fused_elementwise')")) << err;
  EXPECT_TRUE(contains(err, "step 0: operand b = 1 is not a leaf or an earlier step")) << err;
  // The same instruction with a valid program loads and computes x + x.
  b.program.code[b.program.code.size() - 2].imm = {1, 0, 0, 0};
  validateProgram(b.program, "prog.dqp");
  SimDevice d;
  RunResult r = runProgram(b.program, d, {HostTensor::fromValues<float>(DType::F32, {2}, {1.5f, -2})});
  EXPECT_EQ(r.outputs[0].values<float>(), (std::vector<float>{3, -4}));
}
