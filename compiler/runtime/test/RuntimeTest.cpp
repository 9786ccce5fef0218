// The VM: ABI cast checks (the reviewer's 4x4 case), input validation, traps named by
// instruction, pool lifetimes, copy kinds through programs, scalar arithmetic.
#include "DeviceTestUtil.h"
#include "TestPrograms.h"
#include "dq/runtime/Runtime.h"
#include "dq/runtime/SimDevice.h"

using namespace dq::rt;
using dq::rt::test::Builder;
using dq::rt::test::errorOf;

namespace {

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

std::vector<float> iota16() {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i)
    v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

// The reviewer's case: x (16 f32, typed 1-D ?) is expand_shape'd into [%a, %b] (a, b read back
// from the `shape` input), cast to a static 4x4 and returned. With staticCast the output is
// requested as [4,4] and the cast is checked; without it the output type is [?, ?] = [a, b].
Program reviewerCase(bool staticCast) {
  Builder b;
  b.addInput("x", DType::F32, {-1});
  b.addInput("shape", DType::I64, {2});
  b.addOutput("y", DType::F32, staticCast ? std::vector<int64_t>{4, 4} : std::vector<int64_t>{-1, -1});
  int32_t x = b.input(0), shape = b.input(1);
  int32_t i0 = b.index(0), i1 = b.index(1), one = b.index(1);
  int32_t a = b.newS(), bb = b.newS();
  for (auto [reg, idx] : {std::pair{a, i0}, std::pair{bb, i1}}) {
    Instr &r = b.emit(Opcode::ReadbackScalar);
    r.s = {reg, idx};
    r.b = {shape};
  }
  int32_t expanded = b.view(x, i0, {a, bb}, {bb, one});
  int32_t y;
  if (staticCast) {
    y = b.allocOutput(0, DType::F32, {b.index(4), b.index(4)}, {4, 4});
    Instr &c = b.emit(Opcode::CheckShape);
    c.name = "memref.cast to memref<4x4xf32>";
    c.b = {expanded};
    c.imm = {4, 4};
  } else {
    y = b.allocOutput(0, DType::F32, {a, bb}, {-1, -1});
  }
  b.copy(y, expanded, CopyKind::Memcpy);
  b.ret({y});
  return b.program;
}

std::vector<HostTensor> reviewerInputs(int64_t a, int64_t b) {
  return {HostTensor::fromValues<float>(DType::F32, {16}, iota16()),
          HostTensor::fromValues<int64_t>(DType::I64, {2}, {a, b})};
}

RunOptions named() {
  RunOptions o;
  o.programName = "p.dqp";
  return o;
}

} // namespace

TEST(Runtime, ReviewerCaseRightValuesWhenShapesAgree) {
  SimDevice d;
  RunResult r = runProgram(reviewerCase(true), d, reviewerInputs(4, 4), named());
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{4, 4}));
  // y[i][j] = x[4i + j] = 4i + j: the row-major flattening is x itself.
  EXPECT_EQ(r.outputs[0].values<float>(), iota16());
  EXPECT_EQ(r.counters.scalarReadbacks, 2u);
  EXPECT_EQ(r.counters.memcpyCopies, 1u);
  EXPECT_EQ(d.liveAllocations(), 0u);
}

TEST(Runtime, ReviewerCaseStopsWithoutWritingWhenShapesDisagree) {
  SimDevice d;
  // The caller's output buffer is host-mapped and pre-filled with a sentinel so that any write
  // would be visible after the failed run.
  BufferHandle outBuf = 0;
  RunOptions o = named();
  o.outputAllocator = [&](Device &dev, const OutputRequest &req) {
    EXPECT_EQ(req.dims, (std::vector<int64_t>{4, 4})); // the precise external shape
    outBuf = dev.allocate(MemSpace::HostMapped, req.bytes, AllocPurpose::Buffer);
    std::vector<float> sentinel(16, -7.0f);
    dev.upload(outBuf, 0, sentinel.data(), 64);
    return outBuf;
  };
  std::string err = errorOf([&] { runProgram(reviewerCase(true), d, reviewerInputs(2, 8), o); });
  EXPECT_EQ(err, "p.dqp: instruction 11 (CheckShape 'memref.cast to memref<4x4xf32>') at test:11: "
                 "ABI cast check failed: memref.cast to memref<4x4xf32>: the view has shape [2,8] "
                 "but the cast demands [4,4]");
  ASSERT_NE(outBuf, 0u);
  std::vector<float> after(16);
  d.download(after.data(), outBuf, 0, 64);
  EXPECT_EQ(after, std::vector<float>(16, -7.0f));
  EXPECT_EQ(d.liveAllocations(), 1u); // only the caller's buffer; the run released its own
}

TEST(Runtime, ReviewerCaseDynamicVariantRequestsAB) {
  SimDevice d;
  RunResult r = runProgram(reviewerCase(false), d, reviewerInputs(2, 8), named());
  EXPECT_EQ(r.outputs[0].dims, (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(r.outputs[0].values<float>(), iota16());
}

TEST(Runtime, AllocOutputChecksStaticDims) {
  Builder b;
  b.addOutput("y", DType::F32, {-1, -1});
  int32_t y = b.allocOutput(0, DType::F32, {b.index(2), b.index(8)}, {4, 4});
  b.kernel("fill", {}, {y}, {}, {0.0});
  b.ret({y});
  SimDevice d;
  std::string err = errorOf([&] { runProgram(b.program, d, {}, named()); });
  EXPECT_TRUE(contains(err, "p.dqp: instruction 2 (AllocOutput) at test:2: ABI cast check failed: output 0 'y' "
                            "would be allocated as [2,8] but its external type demands [4,4]"))
      << err;
}

TEST(Runtime, ValidatesInputs) {
  SimDevice d;
  const Program p = reviewerCase(true);
  auto f32 = [](std::vector<int64_t> dims) { return HostTensor(DType::F32, std::move(dims)); };
  auto i64 = [](std::vector<int64_t> dims) { return HostTensor(DType::I64, std::move(dims)); };
  EXPECT_EQ(errorOf([&] { runProgram(p, d, {f32({16})}, named()); }),
            "p.dqp: wrong input count: got 1, the program takes 2");
  EXPECT_EQ(errorOf([&] { runProgram(p, d, {f32({16}), f32({2})}, named()); }),
            "p.dqp: input 1 'shape': dtype f32, expected i64");
  EXPECT_EQ(errorOf([&] { runProgram(p, d, {f32({4, 4}), i64({2})}, named()); }),
            "p.dqp: input 0 'x': rank 2 [4,4], expected rank 1 [?]");
  EXPECT_EQ(errorOf([&] { runProgram(p, d, {f32({16}), i64({3})}, named()); }),
            "p.dqp: input 1 'shape': dim 0 is 3, expected 2 (shape [3] vs [2])");
}

TEST(Runtime, HostInstructionsOnDeviceMemoryTrapNamingTheInstruction) {
  Builder b;
  b.addInput("x", DType::I64, {1});
  b.addOutput("y", DType::I64, {1});
  int32_t x = b.input(0);
  int32_t zero = b.index(0);
  Instr &load = b.emit(Opcode::LoadScalar);
  int32_t v = b.newS();
  load.s = {v, zero};
  load.b = {x};
  load.loc = "Slice_3";
  b.ret({x});
  SimDevice d;
  std::vector<HostTensor> in = {HostTensor::fromValues<int64_t>(DType::I64, {1}, {5})};
  EXPECT_TRUE(contains(errorOf([&] { runProgram(b.program, d, in, named()); }),
                       "p.dqp: instruction 2 (LoadScalar) at Slice_3: host load touches device memory (buffer #1)"));

  b.program.code[2].op = Opcode::StoreScalar;
  b.program.code[2].s = {zero, zero}; // store 0 at index 0
  EXPECT_TRUE(contains(errorOf([&] { runProgram(b.program, d, in, named()); }),
                       "p.dqp: instruction 2 (StoreScalar) at Slice_3: host store touches device memory"));

  Builder c;
  c.addInput("x", DType::I64, {1});
  c.addOutput("y", DType::I64, {1});
  int32_t cx = c.input(0);
  int32_t scratch = c.alloc(DType::I64, {1}, MemSpace::Host);
  Instr &hc = c.emit(Opcode::HostCopy);
  hc.b = {scratch, cx};
  c.ret({cx});
  EXPECT_TRUE(contains(errorOf([&] { runProgram(c.program, d, in, named()); }),
                       "(HostCopy) at test:3: host memcpy touches device memory (buffer #"));
}

TEST(Runtime, HostScratchStagingIsLegal) {
  // Stores 42 into host scratch, copies it to the device output (an h2d memcpy), returns it.
  Builder b;
  b.addOutput("y", DType::I64, {1});
  int32_t one = b.index(1), zero = b.index(0), v = b.index(42);
  int32_t scratch = b.newB();
  Instr &g = b.emit(Opcode::GetHostScratch);
  g.b = {scratch};
  g.s = {one};
  g.dtype = DType::I64;
  Instr &st = b.emit(Opcode::StoreScalar);
  st.s = {v, zero};
  st.b = {scratch};
  int32_t y = b.allocOutput(0, DType::I64, {one});
  b.copy(y, scratch, CopyKind::Memcpy);
  b.ret({y});
  SimDevice d;
  RunResult r = runProgram(b.program, d, {}, named());
  EXPECT_EQ(r.outputs[0].values<int64_t>(), std::vector<int64_t>{42});
  EXPECT_EQ(r.counters.h2dTransfers, 1u); // the staging copy
  EXPECT_EQ(r.counters.d2hTransfers, 1u); // the output read back by the runtime
  EXPECT_EQ(r.counters.hostStores, 1u);
}

namespace {
// Pool of 64 bytes; region A = f32[4] at [0,16), filled with 1.5; optional Dealloc of A; then
// out = A + A. `secondRegion` adds a region B at [8,24) (overlapping A) before the Dealloc.
Program poolProgram(bool deallocFirst, bool secondRegion) {
  Builder b;
  b.addOutput("y", DType::F32, {4});
  int32_t size = b.index(64), zero = b.index(0), sixteen = b.index(16), four = b.index(4), eight = b.index(8);
  int32_t pool = b.newB();
  Instr &gp = b.emit(Opcode::GetPool);
  gp.b = {pool};
  gp.s = {size};
  auto region = [&](int32_t off) {
    int32_t r = b.newB();
    Instr &ps = b.emit(Opcode::PoolSubview);
    ps.b = {r, pool};
    ps.s = {off, sixteen, four};
    ps.dtype = DType::F32;
    return r;
  };
  int32_t a = region(zero);
  b.kernel("fill", {}, {a}, {}, {1.5});
  if (secondRegion) region(eight);
  if (deallocFirst) {
    Instr &da = b.emit(Opcode::Dealloc);
    da.b = {a};
  }
  int32_t y = b.allocOutput(0, DType::F32, {four});
  b.kernel("add", {a, a}, {y});
  b.ret({y});
  return b.program;
}
} // namespace

TEST(Runtime, PoolRegionsAreCheckedForLifetime) {
  SimDevice d;
  RunResult r = runProgram(poolProgram(false, false), d, {}, named());
  EXPECT_EQ(r.outputs[0].values<float>(), std::vector<float>(4, 3.0f)); // 1.5 + 1.5
  EXPECT_EQ(r.counters.poolBytes, 64u);
  std::string err = errorOf([&] { runProgram(poolProgram(true, false), d, {}, named()); });
  EXPECT_TRUE(contains(err, "(Kernel 'add') at test:10: kernel 'add': use after free: in ")) << err;
  err = errorOf([&] { runProgram(poolProgram(false, true), d, {}, named()); });
  EXPECT_TRUE(contains(err, "pool region [8, 24) overlaps the live region [0, 16) created by instruction 6")) << err;
  EXPECT_EQ(d.liveAllocations(), 0u);
}

TEST(Runtime, UninitializedAndOutOfBoundsViewsTrap) {
  Builder b;
  b.addOutput("y", DType::F32, {2});
  int32_t tmp = b.alloc(DType::F32, {2});
  int32_t y = b.allocOutput(0, DType::F32, {b.index(2)});
  b.kernel("add", {tmp, tmp}, {y});
  b.ret({y});
  SimDevice d;
  std::string err = errorOf([&] { runProgram(b.program, d, {}, named()); });
  EXPECT_TRUE(contains(err, "(Kernel 'add') at test:4: kernel 'add': read of never-written memory: in ")) << err;

  Builder v;
  v.addOutput("y", DType::F32, {3});
  int32_t src = v.alloc(DType::F32, {4});
  int32_t view = v.view(src, v.index(2), {v.index(3)}, {v.index(1)}); // elements 2..4 of 4
  v.ret({view});
  err = errorOf([&] { runProgram(v.program, d, {}, named()); });
  EXPECT_TRUE(contains(err, "(View) at test:5: out of bounds: view with offset 2, sizes [3], strides [1] "
                            "touches bytes [8, 20) outside its allocation [0, 16)"))
      << err;
}

TEST(Runtime, CopyKindsAreValidatedAndCounted) {
  // src = input f32[2,4]; (1) memcpy of the whole input; (2) copy2d of the [2,3] window at
  // column 1 (row pitch 4); (3) strided copy of its transpose [4,2] (strides [1,4]).
  auto program = [](CopyKind k1, CopyKind k2, CopyKind k3) {
    Builder b;
    b.addInput("x", DType::F32, {2, 4});
    b.addOutput("full", DType::F32, {2, 4});
    b.addOutput("window", DType::F32, {2, 3});
    b.addOutput("transposed", DType::F32, {4, 2});
    int32_t x = b.input(0);
    int32_t o1 = b.allocOutput(0, DType::F32, {b.index(2), b.index(4)});
    b.copy(o1, x, k1);
    int32_t win = b.view(x, b.index(1), {b.index(2), b.index(3)}, {b.index(4), b.index(1)});
    int32_t o2 = b.allocOutput(1, DType::F32, {b.index(2), b.index(3)});
    b.copy(o2, win, k2);
    int32_t tr = b.view(x, b.index(0), {b.index(4), b.index(2)}, {b.index(1), b.index(4)});
    int32_t o3 = b.allocOutput(2, DType::F32, {b.index(4), b.index(2)});
    b.copy(o3, tr, k3);
    b.ret({o1, o2, o3});
    return b.program;
  };
  std::vector<HostTensor> in = {HostTensor::fromValues<float>(DType::F32, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7})};
  SimDevice d;
  RunResult r = runProgram(program(CopyKind::Memcpy, CopyKind::Copy2D, CopyKind::Strided), d, in, named());
  EXPECT_EQ(r.outputs[0].values<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(r.outputs[1].values<float>(), (std::vector<float>{1, 2, 3, 5, 6, 7}));       // columns 1..3
  EXPECT_EQ(r.outputs[2].values<float>(), (std::vector<float>{0, 4, 1, 5, 2, 6, 3, 7})); // x^T
  EXPECT_EQ(r.counters.memcpyCopies, 1u);
  EXPECT_EQ(r.counters.copy2dCopies, 1u);
  EXPECT_EQ(r.counters.stridedCopies, 1u);
  EXPECT_EQ(r.counters.d2dTransfers, 3u);
  EXPECT_EQ(r.counters.h2dTransfers, 1u); // the input
  EXPECT_EQ(r.counters.d2hTransfers, 3u); // the three outputs
  // A kind the layout does not allow is refused.
  std::string err =
      errorOf([&] { runProgram(program(CopyKind::Memcpy, CopyKind::Memcpy, CopyKind::Strided), d, in, named()); });
  EXPECT_TRUE(contains(err, "(Copy) at test:14: copy kind memcpy needs both views contiguous")) << err;
  err = errorOf([&] { runProgram(program(CopyKind::Memcpy, CopyKind::Copy2D, CopyKind::Copy2D), d, in, named()); });
  EXPECT_TRUE(contains(err, "copy kind copy2d needs contiguous rows at a constant pitch; source strides [1,4]")) << err;
}

TEST(Runtime, Copy2DRowsSpanSeveralInnerDimsAndSkipUnitDims) {
  // x f32[3, 4, 2] = 0..23. The window x[0:3, 1:4, 0:2] with a unit dim appended, sizes
  // [3, 3, 2, 1] and strides [8, 2, 1, 1]: rows of 3 * 2 = 6 contiguous elements (dims 1..3, the
  // unit dim skipped) at pitch 8, as dq-lower-copies splits it. Row r starts at 8 r + 2, so the
  // copy holds 2..7, 10..15, 18..23. Then an empty copy (sizes [3, 0]) that moves nothing.
  Builder b;
  b.addInput("x", DType::F32, {3, 4, 2});
  b.addOutput("y", DType::F32, {3, 3, 2, 1});
  b.addOutput("e", DType::F32, {3, 0});
  int32_t x = b.input(0);
  int32_t win = b.view(x, b.index(2), {b.index(3), b.index(3), b.index(2), b.index(1)},
                       {b.index(8), b.index(2), b.index(1), b.index(1)});
  int32_t y = b.allocOutput(0, DType::F32, {b.index(3), b.index(3), b.index(2), b.index(1)});
  b.copy(y, win, CopyKind::Copy2D);
  int32_t empty = b.view(x, b.index(0), {b.index(3), b.index(0)}, {b.index(0), b.index(1)});
  int32_t e = b.allocOutput(1, DType::F32, {b.index(3), b.index(0)});
  b.copy(e, empty, CopyKind::Copy2D);
  b.ret({y, e});
  std::vector<float> values(24);
  for (int i = 0; i < 24; ++i)
    values[static_cast<size_t>(i)] = static_cast<float>(i);
  std::vector<HostTensor> in = {HostTensor::fromValues<float>(DType::F32, {3, 4, 2}, values)};
  SimDevice d;
  RunResult r = runProgram(b.program, d, in, named());
  EXPECT_EQ(r.outputs[0].values<float>(),
            (std::vector<float>{2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15, 18, 19, 20, 21, 22, 23}));
  EXPECT_TRUE(r.outputs[1].values<float>().empty());
  EXPECT_EQ(r.counters.copy2dCopies, 1u); // the empty copy issues no device work at all
}

TEST(Runtime, ReturningAViewCopiesIntoTheOutput) {
  // Returns the reversed view of the input: the runtime allocates the output and runs a strided
  // copy; the result is [3,2,1].
  Builder b;
  b.addInput("x", DType::I32, {3});
  b.addOutput("y", DType::I32, {3});
  int32_t x = b.input(0);
  int32_t rev = b.view(x, b.index(2), {b.index(3)}, {b.index(-1)});
  b.ret({rev});
  SimDevice d;
  RunResult r = runProgram(b.program, d, {HostTensor::fromValues<int32_t>(DType::I32, {3}, {1, 2, 3})}, named());
  EXPECT_EQ(r.outputs[0].values<int32_t>(), (std::vector<int32_t>{3, 2, 1}));
  EXPECT_EQ(r.counters.stridedCopies, 1u);
  EXPECT_EQ(r.counters.outputCopies, 1u); // never allocated through the allocator: copied, counted
}

// y = x + x written into an output allocated as `allocDims`, then returned as a view with
// `retDims` (strides `retStrides`) of that allocation.
Program allocatedThenReturnedAs(const std::vector<int64_t> &allocDims, const std::vector<int64_t> &retDims,
                                const std::vector<int64_t> &retStrides, int64_t offset = 0) {
  Builder b;
  b.addInput("x", DType::F32, {6});
  b.addOutput("y", DType::F32, std::vector<int64_t>(retDims.size(), -1));
  int32_t x = b.input(0);
  std::vector<int32_t> dims;
  for (int64_t d : allocDims)
    dims.push_back(b.index(d));
  int32_t out = b.allocOutput(0, DType::F32, dims);
  int32_t flat = b.view(out, b.index(0), {b.index(6)}, {b.index(1)});
  b.kernel("add", {x, x}, {flat});
  std::vector<int32_t> sizes, strides;
  for (int64_t d : retDims)
    sizes.push_back(b.index(d));
  for (int64_t s : retStrides)
    strides.push_back(b.index(s));
  b.ret({b.view(out, b.index(offset), sizes, strides)});
  return b.program;
}

TEST(Runtime, AnAllocatedOutputReturnedWithOtherDimsIsAnError) {
  // Enough bytes (6 elements either way), but the program asked the allocator for [6, 1] and
  // returns [2, 3]: a host framework would reject it, so the runtime must not copy it quietly.
  SimDevice d;
  std::vector<HostTensor> in = {HostTensor::fromValues<float>(DType::F32, {6}, {1, 2, 3, 4, 5, 6})};
  std::string err = errorOf([&] { runProgram(allocatedThenReturnedAs({6, 1}, {2, 3}, {3, 1}), d, in, named()); });
  EXPECT_TRUE(contains(err, "output 0 'y' was allocated through the output allocator as f32[6,1] but is "
                            "returned as f32[2,3]"))
      << err;
  // The same bytes returned with the requested dims are fine and not copied.
  RunResult r = runProgram(allocatedThenReturnedAs({2, 3}, {2, 3}, {3, 1}), d, in, named());
  EXPECT_EQ(r.outputs[0].values<float>(), (std::vector<float>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ(r.counters.outputCopies, 0u);
  EXPECT_EQ(r.counters.memcpyCopies + r.counters.stridedCopies, 0u);
}

TEST(Runtime, AnAllocatedOutputReturnedWithAnotherLayoutIsAnError) {
  // Same dims, transposed strides: another layout of the allocated buffer.
  SimDevice d;
  std::vector<HostTensor> in = {HostTensor::fromValues<float>(DType::F32, {6}, {1, 2, 3, 4, 5, 6})};
  std::string err = errorOf([&] { runProgram(allocatedThenReturnedAs({3, 2}, {3, 2}, {1, 3}), d, in, named()); });
  EXPECT_TRUE(contains(err, "output 0 'y' was allocated through the output allocator as f32[3,2] (contiguous, "
                            "offset 0) but is returned as a view with offset 0 and strides [1,3]"))
      << err;
}

TEST(Runtime, ScalarArithmetic) {
  // Each result is stored into a host-mapped i64 buffer that is copied to the output.
  // Hand values: divsi(-7,2) = -3 (truncates), floordiv(-7,2) = -4, ceildiv(-7,2) = -3,
  // ceildiv(7,2) = 4, remsi(-7,2) = -1, min(-7,2) = -7, le(-7,2) = 1, select(0 ? .. : 2) = 2.
  auto program = [](const std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> &ops) {
    Builder b;
    const int64_t n = static_cast<int64_t>(ops.size()) + 1;
    b.addOutput("y", DType::I64, {n});
    int32_t buf = b.alloc(DType::I64, {n}, MemSpace::HostMapped);
    int64_t k = 0;
    for (const auto &[name, args] : ops) {
      int32_t l = b.index(args.first), r = b.index(args.second), res = b.newS();
      Instr &i = b.emit(Opcode::ScalarBinary);
      i.name = name;
      i.s = {res, l, r};
      int32_t at = b.index(k++);
      Instr &st = b.emit(Opcode::StoreScalar);
      st.s = {res, at};
      st.b = {buf};
    }
    int32_t c = b.index(0), x = b.index(1), y = b.index(2), sel = b.newS();
    Instr &s = b.emit(Opcode::Select);
    s.s = {sel, c, x, y};
    int32_t at = b.index(k);
    Instr &st = b.emit(Opcode::StoreScalar);
    st.s = {sel, at};
    st.b = {buf};
    int32_t out = b.allocOutput(0, DType::I64, {b.index(n)});
    b.copy(out, buf, CopyKind::Memcpy);
    b.ret({out});
    return b.program;
  };
  SimDevice d;
  RunResult r = runProgram(program({{"divsi", {-7, 2}},
                                    {"floordiv", {-7, 2}},
                                    {"ceildiv", {-7, 2}},
                                    {"ceildiv", {7, 2}},
                                    {"remsi", {-7, 2}},
                                    {"min", {-7, 2}},
                                    {"le", {-7, 2}}}),
                           d, {}, named());
  EXPECT_EQ(r.outputs[0].values<int64_t>(), (std::vector<int64_t>{-3, -4, -3, 4, -1, -7, 1, 2}));
  EXPECT_TRUE(contains(errorOf([&] { runProgram(program({{"floordiv", {1, 0}}}), d, {}, named()); }),
                       "scalar floordiv(1, 0): division by zero"));
  EXPECT_TRUE(contains(errorOf([&] { runProgram(program({{"mul", {int64_t{1} << 62, 4}}}), d, {}, named()); }),
                       "overflows int64"));
}

TEST(Runtime, AssertAndUnsetRegistersFail) {
  Builder b;
  b.addOutput("y", DType::F32, {1});
  int32_t zero = b.index(0);
  Instr &a = b.emit(Opcode::Assert);
  a.s = {zero};
  a.name = "Reshape_2: -1 cannot be inferred";
  int32_t y = b.allocOutput(0, DType::F32, {b.index(1)});
  b.kernel("fill", {}, {y}, {}, {1.0});
  b.ret({y});
  SimDevice d;
  EXPECT_TRUE(contains(errorOf([&] { runProgram(b.program, d, {}, named()); }),
                       "instruction 1 (Assert 'Reshape_2: -1 cannot be inferred') at test:1: assertion failed"));
  b.program.code[1].s = {b.newS()}; // s2: never written
  EXPECT_TRUE(contains(errorOf([&] { runProgram(b.program, d, {}, named()); }),
                       "instruction 1 (Assert 'Reshape_2: -1 cannot be inferred') at test:1: scalar register s2 is "
                       "read before it is written"));
}

// A fuzz finding: dq-lower-copies picked memcpy for a copy that is empty at run time (sizes [0],
// source stride 2); a view of no element is contiguous, and the copy moves 0 bytes.
TEST(BufferViewTest, AViewOfNoElementIsContiguousWhateverItsStrides) {
  BufferView v;
  v.sizes = {0};
  v.strides = {2};
  EXPECT_TRUE(v.isContiguous());
  v.sizes = {3};
  EXPECT_FALSE(v.isContiguous()); // three elements two apart
  v.sizes = {1, 0};
  v.strides = {7, 5};
  EXPECT_TRUE(v.isContiguous());
}
