//===- Emitter.h - the program emitter's state (internal to lib/Emit) -----===//
//
// ProgramEmitter.cpp walks the function and emits kernels, allocations and scalars; EmitViews.cpp
// emits the memref view ops. Both share this class.
//
//===----------------------------------------------------------------------===//
#ifndef DQ_LIB_EMIT_EMITTER_H
#define DQ_LIB_EMIT_EMITTER_H

#include "dq/runtime/Program.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <map>
#include <optional>
#include <string>

namespace mlir::dq::emit_detail {

namespace rt = ::dq::rt;

struct ViewDesc {
  int32_t offset;
  SmallVector<int32_t> sizes;
  SmallVector<int32_t> strides;
};

/// The runtime dtype of an MLIR element type; nullopt when the runtime has none.
std::optional<rt::DType> toDType(Type t);
/// A node name for diagnostics and Instr::loc ("" when the location names none).
std::string locString(Location loc);

class Emitter {
public:
  Emitter(ModuleOp module) : module(module) {}

  LogicalResult run(func::FuncOp func);
  rt::Program program;

private:
  ModuleOp module;
  Operation *current = nullptr;
  llvm::DenseMap<Value, int32_t> sregs, bregs;
  llvm::DenseMap<Value, ViewDesc> views;
  std::map<int64_t, int32_t> constRegs;
  llvm::StringMap<int64_t> constantIndex;

  InFlightDiagnostic unsupported(Operation *op, const Twine &what) {
    return op->emitError("unsupported in program emission: ") << what;
  }
  rt::Instr &emit(rt::Opcode op) {
    rt::Instr in;
    in.op = op;
    if (current) in.loc = locString(current->getLoc());
    program.code.push_back(std::move(in));
    return program.code.back();
  }
  int32_t newS() { return program.numScalarRegs++; }
  int32_t newB() { return program.numBufferRegs++; }

  int32_t constReg(int64_t v) {
    auto it = constRegs.find(v);
    if (it != constRegs.end()) return it->second;
    int32_t r = newS();
    rt::Instr &in = emit(rt::Opcode::ConstIndex);
    in.s = {r};
    in.imm = {v};
    in.loc.clear();
    constRegs[v] = r;
    return r;
  }
  FailureOr<int32_t> scalar(Value v) {
    auto it = sregs.find(v);
    if (it != sregs.end()) return it->second;
    unsupported(current, "a scalar operand that is not an index or integer value (") << v.getType() << ")";
    return failure();
  }
  FailureOr<int32_t> scalar(OpFoldResult f) {
    if (auto a = dyn_cast<Attribute>(f)) return constReg(cast<IntegerAttr>(a).getInt());
    return scalar(cast<Value>(f));
  }
  FailureOr<int32_t> buffer(Value v) {
    auto it = bregs.find(v);
    if (it != bregs.end()) return it->second;
    unsupported(current, "a buffer operand without a known producer");
    return failure();
  }
  int32_t binary(StringRef name, int32_t a, int32_t b) {
    int32_t r = newS();
    rt::Instr &in = emit(rt::Opcode::ScalarBinary);
    in.name = name.str();
    in.s = {r, a, b};
    return r;
  }
  int32_t mul(int32_t a, int32_t b) {
    if (a == constReg(1)) return b;
    if (b == constReg(1)) return a;
    return binary("mul", a, b);
  }
  int32_t add(int32_t a, int32_t b) {
    if (a == constReg(0)) return b;
    if (b == constReg(0)) return a;
    return binary("add", a, b);
  }

  LogicalResult dtypeOf(Type memrefType, rt::DType &out) {
    auto t = toDType(cast<ShapedType>(memrefType).getElementType());
    if (!t) {
      unsupported(current, "element type ") << cast<ShapedType>(memrefType).getElementType();
      return failure();
    }
    out = *t;
    return success();
  }
  /// Sizes (static dims as constants, dynamic from `dyn` in order).
  FailureOr<SmallVector<int32_t>> dims(MemRefType t, ValueRange dyn) {
    SmallVector<int32_t> out;
    unsigned d = 0;
    for (int64_t s : t.getShape()) {
      if (!ShapedType::isDynamic(s)) {
        out.push_back(constReg(s));
        continue;
      }
      auto r = scalar(dyn[d++]);
      if (failed(r)) return failure();
      out.push_back(*r);
    }
    return out;
  }
  SmallVector<int32_t> rowMajor(ArrayRef<int32_t> sizes) {
    SmallVector<int32_t> strides(sizes.size());
    int32_t running = constReg(1);
    for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
      strides[i] = running;
      if (i > 0) running = mul(running, sizes[i]);
    }
    return strides;
  }
  /// Binds a new contiguous allocation (offset `offset`, row-major) to `v`.
  void bindBase(Value v, int32_t reg, SmallVector<int32_t> sizes, int32_t offset) {
    bregs[v] = reg;
    views[v] = ViewDesc{offset, sizes, rowMajor(sizes)};
  }
  /// Emits a View of `src` described by `d` and binds it to `result`.
  LogicalResult bindView(Value result, Value src, ViewDesc d) {
    auto type = cast<MemRefType>(result.getType());
    // A static size-1 dim takes its stride from the inner layout (its stride never moves).
    for (int64_t i = type.getRank() - 1; i >= 0; --i)
      if (type.getDimSize(i) == 1)
        d.strides[i] = i + 1 < type.getRank() ? mul(d.strides[i + 1], d.sizes[i + 1]) : constReg(1);
    auto srcReg = buffer(src);
    if (failed(srcReg)) return failure();
    int32_t r = newB();
    rt::Instr &in = emit(rt::Opcode::View);
    in.b = {r, *srcReg};
    in.imm = {type.getRank()};
    in.s.push_back(d.offset);
    in.s.insert(in.s.end(), d.sizes.begin(), d.sizes.end());
    in.s.insert(in.s.end(), d.strides.begin(), d.strides.end());
    bregs[result] = r;
    views[result] = std::move(d);
    return success();
  }

  LogicalResult emitOp(Operation *op);
  LogicalResult emitArith(Operation *op);
  LogicalResult emitKernel(Operation *op);
  LogicalResult emitConstant(memref::GetGlobalOp op);
  LogicalResult emitSignature(func::FuncOp func);
  /// memref.cast / subview / expand_shape / collapse_shape / reinterpret_cast / transpose
  /// (EmitViews.cpp);
  /// nullopt when `op` is none of these.
  std::optional<LogicalResult> emitViewOp(Operation *op);
};

} // namespace mlir::dq::emit_detail

#endif // DQ_LIB_EMIT_EMITTER_H
