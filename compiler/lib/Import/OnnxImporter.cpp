//===- OnnxImporter.cpp - ONNX ModelProto -> onnx.* generic ops -----------===//
//
// The importer stays generic: every node becomes `onnx.<OpType>` whatever the op, so
// `--emit onnx` works for any model; op support is decided by dq-convert-onnx.
//
//===----------------------------------------------------------------------===//
#include "dq/Import/OnnxImporter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <unordered_map>
#include <unordered_set>

using namespace mlir;

namespace {

/// Thrown inside the importer and turned into the one-line `error` at the entry point.
struct ImportError {
  std::string message;
};

[[noreturn]] void fail(const std::string &message) { throw ImportError{message}; }

/// MLIR element type for an ONNX TensorProto.DataType code, or null when out of scope.
Type elementTypeFor(MLIRContext &ctx, int dtype) {
  switch (dtype) {
  case onnx::TensorProto::FLOAT:
    return Float32Type::get(&ctx);
  case onnx::TensorProto::FLOAT16:
    return Float16Type::get(&ctx);
  case onnx::TensorProto::BFLOAT16:
    return BFloat16Type::get(&ctx);
  case onnx::TensorProto::DOUBLE:
    return Float64Type::get(&ctx);
  case onnx::TensorProto::INT8:
    return IntegerType::get(&ctx, 8);
  case onnx::TensorProto::UINT8:
    return IntegerType::get(&ctx, 8, IntegerType::Unsigned);
  case onnx::TensorProto::INT32:
    return IntegerType::get(&ctx, 32);
  case onnx::TensorProto::INT64:
    return IntegerType::get(&ctx, 64);
  case onnx::TensorProto::BOOL:
    return IntegerType::get(&ctx, 1);
  default:
    return {};
  }
}

std::string dtypeName(int dtype) {
  if (onnx::TensorProto::DataType_IsValid(dtype))
    return onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(dtype));
  return "dtype " + std::to_string(dtype);
}

Type elementTypeOrFail(MLIRContext &ctx, int dtype, const std::string &what) {
  Type t = elementTypeFor(ctx, dtype);
  if (!t)
    fail("unsupported: " + what + " has element type " + dtypeName(dtype) +
         " (supported: FLOAT FLOAT16 BFLOAT16 DOUBLE INT8 UINT8 INT32 INT64 BOOL)");
  return t;
}

/// Ranked tensor type of a graph input/output/value_info; every dim_param or unknown dim is `?`.
Type tensorTypeFor(MLIRContext &ctx, const onnx::TypeProto &type, const std::string &what) {
  if (type.has_sequence_type()) fail("unsupported: " + what + " has a sequence type");
  if (type.has_optional_type()) fail("unsupported: " + what + " has an optional type");
  if (type.has_map_type()) fail("unsupported: " + what + " has a map type");
  if (!type.has_tensor_type()) fail("unsupported: " + what + " is not a dense tensor");
  const auto &tt = type.tensor_type();
  Type elem = elementTypeOrFail(ctx, tt.elem_type(), what);
  if (!tt.has_shape()) return UnrankedTensorType::get(elem);
  SmallVector<int64_t> dims;
  for (const auto &d : tt.shape().dim())
    dims.push_back(d.has_dim_value() && d.dim_value() >= 0 ? d.dim_value() : ShapedType::kDynamic);
  return RankedTensorType::get(dims, elem);
}

/// Appends `v` as `bytes` little-endian bytes (the host is little-endian, as is ONNX raw_data).
void appendLE(std::vector<char> &buf, uint64_t v, unsigned bytes) {
  for (unsigned i = 0; i < bytes; ++i)
    buf.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

/// Converts a TensorProto (raw_data or typed fields) to a DenseElementsAttr of its static shape.
DenseElementsAttr tensorToAttr(MLIRContext &ctx, const onnx::TensorProto &t, const std::string &what) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    fail(what + ": external data was not loaded (load the model together with its data file)");
  Type elem = elementTypeOrFail(ctx, t.data_type(), what);
  SmallVector<int64_t> dims(t.dims().begin(), t.dims().end());
  int64_t numel = 1;
  for (int64_t d : dims) {
    if (d < 0) fail(what + ": negative dim " + std::to_string(d));
    numel *= d;
  }
  auto type = RankedTensorType::get(dims, elem);
  const int dtype = t.data_type();
  const bool isBool = dtype == onnx::TensorProto::BOOL;
  const unsigned bytes = isBool ? 1 : (elem.getIntOrFloatBitWidth() + 7) / 8;

  std::vector<char> buf;
  if (t.has_raw_data()) {
    const std::string &raw = t.raw_data();
    if ((int64_t)raw.size() != numel * (int64_t)bytes)
      fail(what + ": raw_data holds " + std::to_string(raw.size()) + " bytes, expected " +
           std::to_string(numel * bytes));
    buf.assign(raw.begin(), raw.end());
  } else {
    auto checkCount = [&](int64_t n) {
      if (n != numel) fail(what + ": holds " + std::to_string(n) + " values, expected " + std::to_string(numel));
    };
    switch (dtype) {
    case onnx::TensorProto::FLOAT:
      checkCount(t.float_data_size());
      for (float f : t.float_data()) {
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        appendLE(buf, bits, 4);
      }
      break;
    case onnx::TensorProto::DOUBLE:
      checkCount(t.double_data_size());
      for (double f : t.double_data()) {
        uint64_t bits;
        std::memcpy(&bits, &f, 8);
        appendLE(buf, bits, 8);
      }
      break;
    case onnx::TensorProto::INT64:
      checkCount(t.int64_data_size());
      for (int64_t v : t.int64_data())
        appendLE(buf, static_cast<uint64_t>(v), 8);
      break;
    default: // int32, int8, uint8, bool, f16 and bf16 (as bit patterns) live in int32_data
      checkCount(t.int32_data_size());
      for (int32_t v : t.int32_data())
        appendLE(buf, static_cast<uint64_t>(static_cast<uint32_t>(v)), bytes);
      break;
    }
  }
  if (isBool) {
    SmallVector<bool> values;
    for (char c : buf)
      values.push_back(c != 0);
    return DenseElementsAttr::get(type, values);
  }
  bool splat = false;
  if (!DenseElementsAttr::isValidRawBuffer(type, buf, splat)) fail(what + ": data does not match its type");
  return DenseElementsAttr::getFromRawBuffer(type, buf);
}

/// Element type of an SSA value produced by the importer (tensor or none).
Type elementTypeOf(Value v) {
  if (auto st = dyn_cast<ShapedType>(v.getType())) return st.getElementType();
  return {};
}

class Importer {
public:
  Importer(MLIRContext &ctx, const onnx::ModelProto &model) : ctx(ctx), model(model), b(&ctx) {}

  OwningOpRef<ModuleOp> run() {
    const onnx::GraphProto &graph = model.graph();
    auto module = ModuleOp::create(NameLoc::get(b.getStringAttr(graph.name())));
    OwningOpRef<ModuleOp> owned(module);
    module->setAttr("onnx.opset", b.getI64IntegerAttr(defaultOpset()));

    for (const auto &vi : graph.value_info())
      declared[vi.name()] = &vi.type();
    for (const auto &vi : graph.output())
      declared[vi.name()] = &vi.type();

    std::unordered_set<std::string> initNames;
    for (const auto &init : graph.initializer())
      initNames.insert(init.name());
    if (graph.sparse_initializer_size() > 0)
      fail("unsupported: sparse initializer '" + graph.sparse_initializer(0).values().name() + "'");

    // Graph inputs that carry an initializer are constants (their default value).
    SmallVector<Type> argTypes;
    std::vector<std::string> argNames;
    for (const auto &in : graph.input()) {
      if (initNames.count(in.name())) continue;
      argTypes.push_back(tensorTypeFor(ctx, in.type(), "input '" + in.name() + "'"));
      argNames.push_back(in.name());
    }

    b.setInsertionPointToEnd(module.getBody());
    auto func = func::FuncOp::create(b, module.getLoc(), "main", b.getFunctionType(argTypes, {}));
    Block *body = func.addEntryBlock();
    for (auto [i, name] : llvm::enumerate(argNames)) {
      values[name] = body->getArgument(i);
      func.setArgAttr(i, "dq.name", b.getStringAttr(name));
    }
    b.setInsertionPointToEnd(body);

    for (const auto &init : graph.initializer()) {
      Location loc = NameLoc::get(b.getStringAttr(init.name()));
      DenseElementsAttr value = tensorToAttr(ctx, init, "initializer '" + init.name() + "'");
      OperationState state(loc, "onnx.Constant");
      state.addAttribute("value", value);
      state.addAttribute("onnx.name", b.getStringAttr(init.name()));
      state.addTypes(value.getType());
      values[init.name()] = b.create(state)->getResult(0);
    }

    for (int i = 0; i < graph.node_size(); ++i)
      importNode(graph.node(i), i);

    SmallVector<Value> results;
    for (const auto &out : graph.output()) {
      auto it = values.find(out.name());
      if (it == values.end()) fail("graph output '" + out.name() + "' is not produced by any node");
      results.push_back(it->second);
    }
    func::ReturnOp::create(b, module.getLoc(), results);
    func.setFunctionType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));
    for (auto [i, out] : llvm::enumerate(graph.output()))
      func.setResultAttr(i, "dq.name", b.getStringAttr(out.name()));
    return owned;
  }

private:
  int64_t defaultOpset() {
    for (const auto &op : model.opset_import())
      if (op.domain().empty() || op.domain() == "ai.onnx") return op.version();
    fail("model has no opset_import for the default ONNX domain");
  }

  /// The single `none` value that stands for an omitted optional input ("" in ONNX).
  Value noneValue() {
    if (!none) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(b.getInsertionBlock());
      OperationState state(b.getUnknownLoc(), "onnx.None");
      state.addTypes(b.getNoneType());
      none = b.create(state)->getResult(0);
    }
    return none;
  }

  Attribute convertAttribute(const onnx::AttributeProto &a, const std::string &what) {
    switch (a.type()) {
    case onnx::AttributeProto::FLOAT:
      return b.getF32FloatAttr(a.f());
    case onnx::AttributeProto::INT:
      return b.getI64IntegerAttr(a.i());
    case onnx::AttributeProto::STRING:
      return b.getStringAttr(a.s());
    case onnx::AttributeProto::TENSOR:
      return tensorToAttr(ctx, a.t(), what);
    case onnx::AttributeProto::FLOATS:
      return b.getDenseF32ArrayAttr(SmallVector<float>(a.floats().begin(), a.floats().end()));
    case onnx::AttributeProto::INTS:
      return b.getDenseI64ArrayAttr(SmallVector<int64_t>(a.ints().begin(), a.ints().end()));
    case onnx::AttributeProto::STRINGS: {
      SmallVector<Attribute> strs;
      for (const auto &s : a.strings())
        strs.push_back(b.getStringAttr(s));
      return b.getArrayAttr(strs);
    }
    default:
      fail("unsupported: " + what + " has attribute type " + onnx::AttributeProto::AttributeType_Name(a.type()));
    }
  }

  /// Element type of a node result when no declared type is known: the few ops whose result type
  /// differs from their first data input, else that input's type.
  Type inferElementType(const onnx::NodeProto &node, ArrayRef<Value> operands, ArrayRef<NamedAttribute> attrs) {
    const std::string &op = node.op_type();
    auto attr = [&](StringRef name) -> Attribute {
      for (const auto &na : attrs)
        if (na.getName() == name) return na.getValue();
      return {};
    };
    if (op == "Shape" || op == "Size" || op == "NonZero" || op == "ArgMax" || op == "ArgMin") return b.getI64Type();
    if (op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual" ||
        op == "Not" || op == "And" || op == "Or" || op == "Xor" || op == "IsNaN" || op == "IsInf")
      return b.getI1Type();
    if (op == "Cast")
      if (auto to = dyn_cast_or_null<IntegerAttr>(attr("to")))
        if (Type t = elementTypeFor(ctx, (int)to.getInt())) return t;
    if (op == "Constant" || op == "ConstantOfShape") {
      if (auto v = dyn_cast_or_null<DenseElementsAttr>(attr("value"))) return v.getElementType();
      if (attr("value_int") || attr("value_ints")) return b.getI64Type();
      return b.getF32Type();
    }
    if (op == "Where" && operands.size() > 1)
      if (Type t = elementTypeOf(operands[1])) return t;
    for (Value v : operands)
      if (Type t = elementTypeOf(v)) return t;
    return b.getF32Type();
  }

  void importNode(const onnx::NodeProto &node, int index) {
    std::string name = node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name();
    std::string what = "node '" + name + "' (" + node.op_type() + ")";
    SmallVector<Value> operands;
    for (const auto &in : node.input()) {
      if (in.empty()) {
        operands.push_back(noneValue());
        continue;
      }
      auto it = values.find(in);
      if (it == values.end())
        fail(what + ": input '" + in +
             "' is not defined before the node (the graph must be "
             "topologically sorted)");
      operands.push_back(it->second);
    }
    SmallVector<NamedAttribute> attrs;
    for (const auto &a : node.attribute())
      attrs.emplace_back(b.getStringAttr(a.name()), convertAttribute(a, what + " attribute '" + a.name() + "'"));
    attrs.emplace_back(b.getStringAttr("onnx.name"), b.getStringAttr(name));
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      attrs.emplace_back(b.getStringAttr("onnx.domain"), b.getStringAttr(node.domain()));

    SmallVector<Type> resultTypes;
    Type fallback;
    for (const auto &out : node.output()) {
      auto it = declared.find(out);
      if (it != declared.end()) {
        resultTypes.push_back(tensorTypeFor(ctx, *it->second, what + " output '" + out + "'"));
        continue;
      }
      if (!fallback) fallback = UnrankedTensorType::get(inferElementType(node, operands, attrs));
      resultTypes.push_back(fallback);
    }

    OperationState state(NameLoc::get(b.getStringAttr(name)), "onnx." + node.op_type());
    state.addOperands(operands);
    state.addAttributes(attrs);
    state.addTypes(resultTypes);
    Operation *op = b.create(state);
    for (auto [i, out] : llvm::enumerate(node.output()))
      if (!out.empty()) values[out] = op->getResult(i);
  }

  MLIRContext &ctx;
  const onnx::ModelProto &model;
  OpBuilder b;
  std::unordered_map<std::string, Value> values;
  std::unordered_map<std::string, const onnx::TypeProto *> declared;
  Value none;
};

} // namespace

OwningOpRef<ModuleOp> mlir::dq::importOnnxModel(MLIRContext &context, const onnx::ModelProto &model,
                                                std::string &error) {
  context.allowUnregisteredDialects(true);
  context.loadDialect<func::FuncDialect, arith::ArithDialect, tensor::TensorDialect>();
  try {
    return Importer(context, model).run();
  } catch (const ImportError &e) {
    error = "onnx import: " + e.message;
    return {};
  }
}
