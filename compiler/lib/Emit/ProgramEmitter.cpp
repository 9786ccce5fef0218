//===- ProgramEmitter.cpp - final memref + dq IR -> mlir::dq::rt::Program -------===//
//
// Walks the single block of @main in order. Index/integer SSA values get scalar registers,
// memref values buffer registers. Every memref value also has a view descriptor (offset, sizes,
// strides as scalar registers, offset in elements of the allocation) from which views of views
// are computed; the sizes of an expand_shape group come from its output_shape, never from a
// division of the source dim.
//
//===----------------------------------------------------------------------===//
#include "dq/Emit/ProgramEmitter.h"
#include "Emitter.h"

#include "dq/Dialect/DQDialect.h"
#include "dq/Transforms/TransformUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"

#include <map>

using namespace mlir;
using namespace mlir::dq::emit_detail;

namespace mlir::dq::emit_detail {

std::optional<rt::DType> toDType(Type t) {
  if (t.isF32()) return rt::DType::F32;
  if (t.isF16()) return rt::DType::F16;
  if (t.isBF16()) return rt::DType::BF16;
  if (t.isF64()) return rt::DType::F64;
  if (t.isInteger(1)) return rt::DType::Bool;
  if (t.isUnsignedInteger(8)) return rt::DType::U8;
  if (t.isInteger(8)) return rt::DType::I8;
  if (t.isInteger(32)) return rt::DType::I32;
  if (t.isInteger(64) || t.isIndex()) return rt::DType::I64;
  return std::nullopt;
}

void collectLocNames(Location loc, SmallVectorImpl<std::string> &names);

std::string locString(Location loc) {
  // A fused_elementwise kernel names every node it computes, so that an error inside it points at
  // the node whose operands were wrong: "Mul_1 (fused with Add_0)".
  if (auto fused = dyn_cast<FusedLoc>(loc); fused && fused.getMetadata() && isa<StringAttr>(fused.getMetadata()) &&
                                            cast<StringAttr>(fused.getMetadata()).getValue() == "fused_elementwise") {
    SmallVector<std::string> names;
    collectLocNames(loc, names);
    if (names.empty()) return "";
    std::string s = names.front();
    for (size_t i = 1; i < names.size(); ++i)
      s += (i == 1 ? " (fused with " : ", ") + names[i];
    return names.size() > 1 ? s + ")" : s;
  }
  if (auto n = dyn_cast<NameLoc>(loc)) return n.getName().str();
  if (auto f = dyn_cast<FileLineColLoc>(loc)) return (f.getFilename().strref() + ":" + Twine(f.getLine())).str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string s = locString(inner); !s.empty()) return s;
  return "";
}

void collectLocNames(Location loc, SmallVectorImpl<std::string> &names) {
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      collectLocNames(inner, names);
    return;
  }
  std::string s = locString(loc);
  if (!s.empty() && llvm::find(names, s) == names.end()) names.push_back(s);
}

LogicalResult Emitter::emitSignature(func::FuncOp func) {
  current = func;
  FunctionType ft = func.getFunctionType();
  auto spec = [&](Type t, DictionaryAttr attrs, const std::string &fallback, rt::TensorSpec &out) -> LogicalResult {
    auto mt = dyn_cast<MemRefType>(t);
    if (!mt) {
      unsupported(func, "non-memref function argument or result of type ") << t;
      return failure();
    }
    if (failed(dtypeOf(mt, out.dtype))) return failure();
    out.name = fallback;
    if (attrs)
      if (auto n = attrs.getAs<StringAttr>("dq.name")) out.name = n.str();
    for (int64_t d : mt.getShape())
      out.dims.push_back(ShapedType::isDynamic(d) ? -1 : d);
    return success();
  };
  for (unsigned i = 0; i < ft.getNumInputs(); ++i) {
    rt::TensorSpec s;
    if (failed(spec(ft.getInput(i), func.getArgAttrDict(i), "input" + std::to_string(i), s))) return failure();
    program.inputs.push_back(s);
  }
  for (unsigned i = 0; i < ft.getNumResults(); ++i) {
    rt::TensorSpec s;
    if (failed(spec(ft.getResult(i), func.getResultAttrDict(i), "output" + std::to_string(i), s))) return failure();
    program.outputs.push_back(s);
  }
  for (BlockArgument arg : func.getArguments()) {
    int32_t r = newB();
    rt::Instr &in = emit(rt::Opcode::Input);
    in.b = {r};
    in.imm = {arg.getArgNumber()};
    auto mt = cast<MemRefType>(arg.getType());
    SmallVector<int32_t> sizes;
    bregs[arg] = r;
    for (int64_t i = 0; i < mt.getRank(); ++i) {
      if (!mt.isDynamicDim(i)) {
        sizes.push_back(constReg(mt.getDimSize(i)));
        continue;
      }
      int32_t s = newS();
      rt::Instr &dim = emit(rt::Opcode::Dim);
      dim.s = {s};
      dim.b = {r};
      dim.imm = {i};
      sizes.push_back(s);
    }
    bindBase(arg, r, sizes, constReg(0));
  }
  return success();
}

LogicalResult Emitter::run(func::FuncOp func) {
  program.sourceName = func.getSymName().str();
  if (!func.getBody().hasOneBlock()) return unsupported(func, "a function with more than one block");
  if (failed(emitSignature(func))) return failure();
  for (Operation &op : func.getBody().front()) {
    current = &op;
    if (failed(emitOp(&op))) return failure();
  }
  return success();
}

LogicalResult Emitter::emitArith(Operation *op) {
  static const llvm::StringMap<StringRef> binaries = {{"arith.addi", "add"},
                                                      {"arith.subi", "sub"},
                                                      {"arith.muli", "mul"},
                                                      {"arith.divsi", "divsi"},
                                                      {"arith.floordivsi", "floordiv"},
                                                      {"arith.ceildivsi", "ceildiv"},
                                                      {"arith.remsi", "remsi"},
                                                      {"arith.minsi", "min"},
                                                      {"arith.maxsi", "max"},
                                                      {"arith.andi", "and"},
                                                      {"arith.ori", "or"}};
  StringRef name = op->getName().getStringRef();
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    if (auto i = dyn_cast<IntegerAttr>(c.getValue())) {
      int64_t v = i.getType().isInteger(1) ? (i.getValue().isZero() ? 0 : 1) : i.getInt();
      sregs[c] = constReg(v);
    }
    return success(); // float scalars only fail when a register is asked for them
  }
  if (auto it = binaries.find(name); it != binaries.end()) {
    auto a = scalar(op->getOperand(0)), b = scalar(op->getOperand(1));
    if (failed(a) || failed(b)) return failure();
    sregs[op->getResult(0)] = binary(it->second, *a, *b);
    return success();
  }
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    StringRef pred;
    switch (cmp.getPredicate()) {
    case arith::CmpIPredicate::eq:
      pred = "eq";
      break;
    case arith::CmpIPredicate::ne:
      pred = "ne";
      break;
    case arith::CmpIPredicate::slt:
      pred = "lt";
      break;
    case arith::CmpIPredicate::sle:
      pred = "le";
      break;
    case arith::CmpIPredicate::sgt:
      pred = "gt";
      break;
    case arith::CmpIPredicate::sge:
      pred = "ge";
      break;
    default:
      return unsupported(op, "unsigned comparison ") << arith::stringifyCmpIPredicate(cmp.getPredicate());
    }
    auto a = scalar(cmp.getLhs()), b = scalar(cmp.getRhs());
    if (failed(a) || failed(b)) return failure();
    sregs[cmp] = binary(pred, *a, *b);
    return success();
  }
  if (auto sel = dyn_cast<arith::SelectOp>(op)) {
    if (!sel.getType().isIntOrIndex()) return unsupported(op, "arith.select of ") << sel.getType();
    auto c = scalar(sel.getCondition()), t = scalar(sel.getTrueValue()), f = scalar(sel.getFalseValue());
    if (failed(c) || failed(t) || failed(f)) return failure();
    int32_t r = newS();
    emit(rt::Opcode::Select).s = {r, *c, *t, *f};
    sregs[sel] = r;
    return success();
  }
  if (isa<arith::IndexCastOp, arith::ExtSIOp, arith::ExtUIOp>(op)) {
    // int64 registers: widening and index casts keep the value (extui only widens i1 here).
    if (isa<arith::ExtUIOp>(op) && !op->getOperand(0).getType().isInteger(1))
      return unsupported(op, "arith.extui of a non-i1 value");
    auto a = scalar(op->getOperand(0));
    if (failed(a)) return failure();
    sregs[op->getResult(0)] = *a;
    return success();
  }
  return unsupported(op, name);
}

LogicalResult Emitter::emitConstant(memref::GetGlobalOp op) {
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(op, op.getNameAttr());
  auto type = op.getType();
  rt::DType dtype;
  if (failed(dtypeOf(type, dtype))) return failure();
  if (!global || !global.getInitialValue())
    return unsupported(op, "memref.get_global of a global without an initial value");
  auto dense = dyn_cast<DenseElementsAttr>(*global.getInitialValue());
  if (!dense || !type.hasStaticShape())
    return unsupported(op, "a constant that is not a dense elements attribute of static shape");
  auto [it, inserted] = constantIndex.try_emplace(global.getSymName(), program.constants.size());
  if (inserted) {
    rt::ConstantSpec spec;
    spec.dtype = dtype;
    spec.dims.assign(type.getShape().begin(), type.getShape().end());
    auto &data = program.constantData;
    data.resize((data.size() + 15) / 16 * 16, 0); // 16-byte aligned constants
    spec.offset = data.size();
    size_t esize = rt::dtypeSize(dtype);
    auto append = [&](const APInt &bits) {
      for (size_t byte = 0; byte < esize; ++byte)
        data.push_back(bits.getBitWidth() <= 1 ? (byte == 0 ? bits.getZExtValue() : 0)
                                               : bits.extractBitsAsZExtValue(8, byte * 8));
    };
    if (dense.getElementType().isIntOrIndex())
      for (APInt v : dense.getValues<APInt>())
        append(dense.getElementType().isIndex() ? v.sextOrTrunc(64) : v);
    else
      for (APFloat v : dense.getValues<APFloat>())
        append(v.bitcastToAPInt());
    spec.size = data.size() - spec.offset;
    program.constants.push_back(spec);
  }
  SmallVector<int32_t> sizes;
  for (int64_t d : type.getShape())
    sizes.push_back(constReg(d));
  int32_t r = newB();
  rt::Instr &in = emit(rt::Opcode::Constant);
  in.b = {r};
  in.imm = {it->second};
  in.s.assign(sizes.begin(), sizes.end());
  in.dtype = dtype;
  bindBase(op, r, sizes, constReg(0));
  return success();
}

LogicalResult Emitter::emitKernel(Operation *op) {
  auto dps = cast<DestinationStyleOpInterface>(op);
  rt::Instr in;
  in.op = rt::Opcode::Kernel;
  in.loc = locString(op->getLoc());
  // Index operands (slice starts and steps) are DPS inputs too, but not buffers.
  int64_t bufferInputs = llvm::count_if(dps.getDpsInputs(), [](Value v) { return isa<MemRefType>(v.getType()); });
  in.imm = {bufferInputs};
  for (Value v : op->getOperands()) {
    if (!isa<MemRefType>(v.getType())) continue;
    auto b = buffer(v);
    if (failed(b)) return failure();
    in.b.push_back(*b);
  }
  if (failed(dtypeOf(dps.getDpsInits()[0].getType(), in.dtype))) return failure();
  LogicalResult result = success();
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](mlir::dq::ElementwiseOp e) { in.name = e.getKind().str(); })
      .Case([&](mlir::dq::ExpandOp) { in.name = "expand"; })
      .Case([&](mlir::dq::SliceOp s) {
        in.name = "slice";
        for (Value v : llvm::concat<Value>(s.getStarts(), s.getSteps())) {
          auto r = scalar(v);
          if (failed(r)) {
            result = failure();
            return;
          }
          in.s.push_back(*r);
        }
      })
      .Case([&](mlir::dq::TransposeOp t) {
        in.name = "transpose";
        in.imm.insert(in.imm.end(), t.getPermutation().begin(), t.getPermutation().end());
      })
      .Case([&](mlir::dq::ConcatOp c) {
        in.name = "concat";
        in.imm.push_back(c.getAxis());
      })
      .Case([&](mlir::dq::GatherOp g) {
        in.name = "gather";
        in.imm.push_back(g.getAxis());
      })
      .Case([&](mlir::dq::RangeOp) { in.name = "range"; })
      .Case([&](mlir::dq::KernelOp k) {
        in.name = k.getKernel().str();
        in.imm.insert(in.imm.end(), k.getImm().begin(), k.getImm().end());
        in.fimm.assign(k.getFimm().begin(), k.getFimm().end());
        for (Value v : k.getScalars()) {
          auto r = scalar(v);
          if (failed(r)) {
            result = failure();
            return;
          }
          in.s.push_back(*r);
        }
      })
      .Case([&](mlir::dq::FillOp f) {
        in.name = "fill";
        if (!f.getInputs().empty()) {
          result = unsupported(op, "dq.fill with a runtime value operand");
          return;
        }
        if (auto fa = dyn_cast<FloatAttr>(f.getValue()))
          in.fimm.push_back(fa.getValueAsDouble());
        else if (auto ia = dyn_cast<IntegerAttr>(f.getValue()))
          in.imm.push_back(ia.getType().isInteger(1) ? !ia.getValue().isZero() : ia.getInt());
        else
          result = unsupported(op, "dq.fill value ") << f.getValue();
      });
  if (failed(result)) return failure();
  program.code.push_back(std::move(in));
  return success();
}

LogicalResult Emitter::emitOp(Operation *op) {
  if (op->getNumRegions() != 0) return unsupported(op, op->getName().getStringRef()) << " (ops with regions)";
  if (op->getDialect() && op->getDialect()->getNamespace() == "arith") return emitArith(op);
  if (isa<mlir::dq::ElementwiseOp, mlir::dq::ExpandOp, mlir::dq::SliceOp, mlir::dq::TransposeOp, mlir::dq::ConcatOp,
          mlir::dq::GatherOp, mlir::dq::RangeOp, mlir::dq::FillOp, mlir::dq::KernelOp>(op)) {
    if (op->getNumResults() != 0)
      return unsupported(op, op->getName().getStringRef()) << " on tensors (bufferize first)";
    return emitKernel(op);
  }
  if (isa<mlir::dq::GetContextOp>(op)) return success();
  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    rt::Instr &in = emit(rt::Opcode::Return);
    for (Value v : ret.getOperands()) {
      auto b = buffer(v);
      if (failed(b)) return failure();
      program.code.back().b.push_back(*b);
    }
    (void)in;
    return success();
  }
  if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
    rt::DType dtype;
    auto sizes = dims(alloc.getType(), alloc.getDynamicSizes());
    if (failed(dtypeOf(alloc.getType(), dtype)) || failed(sizes)) return failure();
    if (!alloc.getType().getLayout().isIdentity()) return unsupported(op, "memref.alloc with a non-identity layout");
    int32_t r = newB();
    rt::Instr &in = emit(rt::Opcode::Alloc);
    in.b = {r};
    in.s.assign(sizes->begin(), sizes->end());
    in.dtype = dtype;
    in.space = rt::MemSpace::Device;
    bindBase(alloc, r, *sizes, constReg(0));
    return success();
  }
  if (auto out = dyn_cast<mlir::dq::AllocOutputOp>(op)) {
    rt::DType dtype;
    auto sizes = dims(out.getType(), out.getDynamicSizes());
    if (failed(dtypeOf(out.getType(), dtype)) || failed(sizes)) return failure();
    int32_t r = newB();
    rt::Instr &in = emit(rt::Opcode::AllocOutput);
    in.b = {r};
    in.s.assign(sizes->begin(), sizes->end());
    in.imm.push_back(out.getIndex());
    for (int64_t d : out.getType().getShape())
      in.imm.push_back(ShapedType::isDynamic(d) ? -1 : d);
    in.dtype = dtype;
    bindBase(out, r, *sizes, constReg(0));
    return success();
  }
  if (auto scratch = dyn_cast<mlir::dq::GetHostScratchOp>(op)) {
    rt::DType dtype;
    auto sizes = dims(scratch.getType(), scratch.getDynamicSizes());
    if (failed(dtypeOf(scratch.getType(), dtype)) || failed(sizes)) return failure();
    int32_t r = newB();
    rt::Instr &in = emit(rt::Opcode::GetHostScratch);
    in.b = {r};
    in.s.assign(sizes->begin(), sizes->end());
    in.dtype = dtype;
    in.space = rt::MemSpace::Host;
    bindBase(scratch, r, *sizes, constReg(0));
    return success();
  }
  if (auto pool = dyn_cast<mlir::dq::GetPoolOp>(op)) {
    auto bytes = scalar(pool.getBytes());
    if (failed(bytes)) return failure();
    int32_t r = newB();
    rt::Instr &in = emit(rt::Opcode::GetPool);
    in.b = {r};
    in.s = {*bytes};
    in.dtype = rt::DType::U8;
    bindBase(pool, r, {*bytes}, constReg(0));
    return success();
  }
  if (auto view = dyn_cast<memref::ViewOp>(op)) {
    if (!view.getSource().getDefiningOp<mlir::dq::GetPoolOp>())
      return unsupported(op, "memref.view of something other than dq.get_pool");
    rt::DType dtype;
    auto sizes = dims(view.getType(), view.getSizes());
    auto offset = scalar(view.getByteShift());
    auto pool = buffer(view.getSource());
    if (failed(dtypeOf(view.getType(), dtype)) || failed(sizes) || failed(offset) || failed(pool)) return failure();
    int32_t elemBytes = constReg(rt::dtypeSize(dtype));
    int32_t regionBytes = elemBytes;
    for (int32_t s : *sizes)
      regionBytes = mul(regionBytes, s);
    int32_t r = newB();
    rt::Instr &in = emit(rt::Opcode::PoolSubview);
    in.b = {r, *pool};
    in.s = {*offset, regionBytes};
    in.s.insert(in.s.end(), sizes->begin(), sizes->end());
    in.dtype = dtype;
    bindBase(view, r, *sizes, binary("divsi", *offset, elemBytes));
    return success();
  }
  if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
    auto b = buffer(dealloc.getMemref());
    if (failed(b)) return failure();
    emit(rt::Opcode::Dealloc).b = {*b};
    return success();
  }
  if (auto global = dyn_cast<memref::GetGlobalOp>(op)) return emitConstant(global);
  if (auto dim = dyn_cast<memref::DimOp>(op)) {
    std::optional<int64_t> axis = dim.getConstantIndex();
    auto b = buffer(dim.getSource());
    if (!axis) return unsupported(op, "memref.dim with a non-constant axis");
    if (failed(b)) return failure();
    // The descriptor already holds the size as a register.
    sregs[dim] = views[dim.getSource()].sizes[*axis];
    return success();
  }
  if (std::optional<LogicalResult> viewed = emitViewOp(op)) return *viewed;
  if (auto load = dyn_cast<memref::LoadOp>(op)) {
    if (!load.getType().isIntOrIndex()) return unsupported(op, "host load of a ") << load.getType() << " element";
    auto b = buffer(load.getMemref());
    if (failed(b)) return failure();
    int32_t r = newS();
    SmallVector<int32_t> idx;
    for (Value i : load.getIndices()) {
      auto s = scalar(i);
      if (failed(s)) return failure();
      idx.push_back(*s);
    }
    rt::Instr &in = emit(rt::Opcode::LoadScalar);
    in.s = {r};
    in.s.insert(in.s.end(), idx.begin(), idx.end());
    in.b = {*b};
    sregs[load] = r;
    return success();
  }
  if (auto store = dyn_cast<memref::StoreOp>(op)) {
    if (!store.getValueToStore().getType().isIntOrIndex())
      return unsupported(op, "host store of a ") << store.getValueToStore().getType() << " element";
    auto b = buffer(store.getMemref());
    auto v = scalar(store.getValueToStore());
    if (failed(b) || failed(v)) return failure();
    SmallVector<int32_t> s{*v};
    for (Value i : store.getIndices()) {
      auto r = scalar(i);
      if (failed(r)) return failure();
      s.push_back(*r);
    }
    rt::Instr &in = emit(rt::Opcode::StoreScalar);
    in.s.assign(s.begin(), s.end());
    in.b = {*b};
    return success();
  }
  if (auto rb = dyn_cast<mlir::dq::ReadbackScalarOp>(op)) {
    if (!isa<MemRefType>(rb.getSource().getType()))
      return unsupported(op, "dq.readback_scalar on a tensor (bufferize first)");
    auto b = buffer(rb.getSource());
    if (failed(b)) return failure();
    int32_t r = newS();
    SmallVector<int32_t> s{r};
    for (Value i : rb.getIndices()) {
      auto x = scalar(i);
      if (failed(x)) return failure();
      s.push_back(*x);
    }
    rt::Instr &in = emit(rt::Opcode::ReadbackScalar);
    in.s.assign(s.begin(), s.end());
    in.b = {*b};
    if (op->hasAttr("unsynchronized")) in.imm = {1};
    sregs[rb] = r;
    return success();
  }
  if (auto copy = dyn_cast<mlir::dq::CopyOp>(op)) {
    if (copy.getInputs().size() != 1 || copy.getOutputs().size() != 1 || copy.getNumResults() != 0)
      return unsupported(op, "dq.copy that is not one memref into one memref");
    auto dst = buffer(copy.getOutputs()[0]), src = buffer(copy.getInputs()[0]);
    if (failed(dst) || failed(src)) return failure();
    if (copy.getKind() == "host") {
      rt::Instr &in = emit(rt::Opcode::HostCopy);
      in.b = {*dst, *src};
      return success();
    }
    rt::CopyKind kind = copy.getKind() == "memcpy"   ? rt::CopyKind::Memcpy
                        : copy.getKind() == "copy2d" ? rt::CopyKind::Copy2D
                                                     : rt::CopyKind::Strided;
    rt::Instr &in = emit(rt::Opcode::Copy);
    in.b = {*dst, *src};
    in.imm = {static_cast<int64_t>(kind)};
    return success();
  }
  if (isa<memref::CopyOp>(op)) return unsupported(op, "memref.copy (run dq-lower-copies first)");
  return unsupported(op, op->getName().getStringRef());
}

} // namespace mlir::dq::emit_detail

FailureOr<rt::Program> mlir::dq::emitProgram(ModuleOp module, llvm::StringRef pipelineSpec) {
  func::FuncOp entry = module.lookupSymbol<func::FuncOp>("main");
  if (!entry) {
    for (auto f : module.getOps<func::FuncOp>())
      if (f.isPublic() && !f.isExternal()) {
        if (entry)
          return module.emitError("unsupported in program emission: several public functions "
                                  "and none named @main");
        entry = f;
      }
  }
  if (!entry) return module.emitError("program emission: no function @main to emit");
  Emitter emitter(module);
  emitter.program.compilerVersion = DYNQUAL_VERSION;
  emitter.program.pipelineSpec = pipelineSpec.str();
  if (failed(emitter.run(entry))) return failure();
  return std::move(emitter.program);
}
