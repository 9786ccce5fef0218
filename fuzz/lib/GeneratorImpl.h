// The generator's state and its op emitters, shared by the files that implement them:
// Generator.cpp (inputs, the step loop, outputs), GenReshapeOps.cpp, GenIndexingOps.cpp,
// GenBroadcastOps.cpp, GenDataDependentOps.cpp, GenShapeValueOps.cpp, GenViewChains.cpp,
// GenConcatOps.cpp, GenContribOps.cpp. Internal to fuzz/lib.
#pragma once

#include "dynqual/fuzz/Generator.h"
#include "dynqual/fuzz/SymbolicDim.h"
#include "dynqual/modelgen/GraphBuilder.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <optional>
#include <string>
#include <vector>

namespace dynqual::fuzz {

using modelgen::GraphBuilder;
using modelgen::intAttr;
using modelgen::intsAttr;
using modelgen::Random;

namespace gen_detail {

constexpr int kFloat = onnx::TensorProto::FLOAT;
constexpr int kInt64 = onnx::TensorProto::INT64;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

/// A float data value of the graph with its symbolic dims.
struct Val {
  std::string name;
  std::vector<Poly> dims;
  bool input = false;
  bool consumed = false;
};

/// An int64 or float value computed from shapes, kept for graph outputs only.
struct ShapeOut {
  std::string name;
  int elemType = kInt64;
  int64_t length = -1; ///< -1 = rank 0
};

/// Builds one random graph (docs/fuzz/generator.md); each op emitter returns false when it
/// cannot apply to the picked value, and the step loop tries another.
class Gen {
public:
  Gen(uint64_t seed, const GeneratorOptions& opt)
      : rng_(seed ^ 0x5eed5eed5eedull), opt_(opt), model_(modelgen::newModel("dynqual fuzz", 17)),
        g_(*model_.mutable_graph()) {
    model_.mutable_graph()->set_name("fuzz_" + std::to_string(seed));
  }

  onnx::ModelProto run();

private:
  // ---- constants, atoms, shape pieces -------------------------------------------------------
  std::string constInts(const std::vector<int64_t>& v, bool scalar = false);
  /// An opaque extent cut from something at most `bound` (for the element cap, see fits()).
  int newAtom(bool mayBeZero, const Poly& bound);
  bool mayBeZero(const Poly& p) const { return p.minValue(atoms_) == 0; }
  /// A value of these dims stays within kMaxValueElements on every binding whose symbols are at
  /// most kSymbolBound. The ops that multiply extents (Tile, Expand, Concat) check it, so chains
  /// of them cannot make values that the reference cannot hold.
  bool fits(const std::vector<Poly>& dims) const;
  Poly product(const std::vector<Poly>& dims, size_t from, size_t to) const;

  std::string shapeOf(const std::string& name);

  /// A [1] int64 tensor holding dim `axis` of `v`: Gather with a 1-D index, or the exporters'
  /// Gather with a scalar index followed by Unsqueeze.
  std::string gatherDim(const Val& v, size_t axis);

  std::string findDim(const Poly& p);

  /// A [1] int64 tensor holding `p` at run time, computed from Shape values (with Mul for
  /// products), or "" when no value of the graph carries its factors.
  std::string dimPiece(const Poly& p);
  /// `piece` (a 1-element int64 shape value equal to `p`) rewritten through a subtraction on the
  /// host that the compiler cannot fold away: (c + 1) * piece - c * piece.
  std::string subtractedPiece(const Poly& p, const std::string& piece);

  /// A 1-D shape operand describing `target`. With `inDims` (Reshape), a constant operand may use
  /// 0 ("copy input dim j", allowzero=0) and one -1 when `minusOne` allows; a computed operand sets
  /// `allowZero` when a dim can be 0 at run time, so a 0 is never read as "copy".
  std::string shapeOperand(const std::vector<Poly>& target, const std::vector<Poly>* inDims, bool minusOne,
                           bool& allowZero);

  // ---- pool ---------------------------------------------------------------------------------
  size_t pickIndex();
  Val& add(const std::string& name, std::vector<Poly> dims);
  void use(size_t i) { pool_[i].consumed = true; }
  /// A random axis of `x` whose extent is at least 1 on every binding; nullopt when there is none.
  std::optional<size_t> nonEmptyAxis(const Val& x);
  /// An Add, Sub or Mul node of `a` and `b`, in a random order; returns its output's name.
  std::string binaryNode(const std::string& a, const std::string& b);

  void makeInputs();

  // ---- data ops -----------------------------------------------------------------------------
  bool step();

  bool reshape(size_t i);

  template <class T> void shuffle(std::vector<T>& v) {
    if (v.size() < 2)
      return; // (size_t) v.size() - 1 would wrap
    for (size_t k = v.size() - 1; k > 0; --k)
      std::swap(v[k], v[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(k)))]);
  }

  /// A reshape to the same rank with the input's extents in another order (`x.view(b, a)` of an
  /// `[a, b]` tensor): same element count, and with the same types when the moved dims are all
  /// dynamic, although the runtime extents differ.
  bool reorderingReshape(size_t i);

  bool emitReshape(size_t i, const std::vector<Poly>& out);

  std::string boundInput();

  bool slice(size_t i);

  static bool broadcastable(const std::vector<Poly>& a, const std::vector<Poly>& b, std::vector<Poly>& out);

  bool binary(size_t i);

  bool transpose(size_t i);

  Poly randomDim();

  bool expand(size_t i);

  /// x (op) y or Expand(y, Shape(x)), where y = x sliced to e = (N == 1 ? 1 : d) on an axis of
  /// dynamic extent d, N an input symbol other than d (GenBroadcastOps.cpp): two different
  /// dynamic dims meet, and y's is 1 at run time on the bindings that set N alone to 1.
  bool runtimeOneBroadcast(size_t i);

  bool concat(size_t i);

  /// Concat of three or four data values along a dynamic axis (GenConcatOps.cpp): x, pool
  /// values that match it elsewhere with another extent there, and pieces of x (all but its
  /// first element, every other element), so the extents differ at run time.
  bool concatMany(size_t i);

  bool unsqueeze(size_t i);

  bool squeeze(size_t i);

  bool flatten(size_t i);

  bool split(size_t i);

  bool gather(size_t i);

  // ---- data-dependent extents, tiling, padding -----------------------------------------------

  /// NonZero of a value with zeros in it (Relu of data in [-1, 1), so about half the elements),
  /// cast back to float: [rank, count] with a count only the data decides.
  bool nonZero(size_t i);

  /// A bool condition of length `d` = x.dims[axis] from data: a bool graph input when `d` is an
  /// input symbol or a constant, else Greater/Less of x summed over every other axis.
  std::string condition(const Val& x, size_t axis);

  /// Compress along an axis (the condition as long as that axis) or, without axis, over the
  /// flattened input (the condition as long as the element count).
  bool compress(size_t i);

  /// Tile with repeats from a constant (2 or 3 on one axis, sometimes 2 on another) or from
  /// Shape arithmetic (one axis repeated by a dim of the graph).
  bool tile(size_t i);

  /// Pad in constant, reflect or edge mode. Constant pads are 0..2 per side; reflect pads stay
  /// below every runtime extent of their axis (at most its minimum - 1); edge pads need an
  /// extent >= 1. Pads from Shape arithmetic: a dim of the graph (constant and edge modes), or
  /// the axis' own extent - 1 on the leading side (reflect).
  bool pad(size_t i);

  /// A dim of the graph as a float scalar operand of an elementwise op (an exporter's scale by a
  /// runtime size): Cast(Gather(Shape(v), k)), rank 0 or [1], sometimes minus one first.
  bool shapeScalar(size_t i);

  /// Outputs computed from shapes: Shape itself, one dim as a rank-0 value, dim - 1, or a dim
  /// cast to float.
  bool shapeOutput(size_t i);

  // ---- view chains (GenViewChains.cpp) ------------------------------------------------------
  /// Slice of one element on an axis that is never empty (a unit dim, static 1), sometimes with a
  /// step-2 window on another axis: what the compiler lowers to a strided view.
  bool unitSlice(size_t i);
  /// unitSlice, then Transpose, Unsqueeze or Squeeze, and Reshape of the result (each link most
  /// of the time), ending in an op that needs a contiguous operand (Concat, Gather or Transpose).
  bool viewChain(size_t i);

  // ---- com.microsoft contrib ops (GenContribOps.cpp) ----------------------------------------
  /// A node of domain com.microsoft (its opset import, version 1, added once); returns its output.
  std::vector<std::string> contribNode(const std::string& op, const std::vector<std::string>& inputs,
                                       const std::vector<onnx::AttributeProto>& attrs, int outputs = 1);
  /// `n` values uniform in [-amplitude, amplitude).
  std::vector<double> randomFloats(int64_t n, double amplitude = 1.0);
  /// cos/sin cache initializers [positions, rotaryDim / 2] of the angles p * 10000^(-2k/rotaryDim).
  void rotaryCaches(int64_t positions, int64_t rotaryDim, std::string& cosName, std::string& sinName);
  /// A float initializer of `dims` holding `values`; returns its name.
  std::string floatInit(const std::vector<int64_t>& dims, const std::vector<double>& values);
  /// A float value of rank `rank` ending in the constant `width`, its other dims x's: x itself,
  /// or ReduceSum(x, [-1], keepdims) / Unsqueeze(x, [rank - 1]) times a constant [width];
  /// nullopt when x's rank allows neither or the result could pass the element cap.
  std::optional<Val> widened(const Val& x, int64_t width, size_t rank);
  /// MatMulNBits, int4, block 16 or 32, odd K (a padded last block), N 2..8, zero points none,
  /// packed uint8 or float; B, scales and zero points are initializers.
  bool matMulNBits(size_t i);
  /// RotaryEmbedding of a [batch, seq, heads * head] value, interleaved or half-split, with or
  /// without num_heads, sometimes a partial rotary dim; position_ids a constant [1].
  bool rotaryEmbedding(size_t i);
  /// GroupQueryAttention of a [B, a] value: prompt (S = total = a), decode (S = 1 after a past of
  /// length a) or a shared past/present buffer of length a (S = 1, total = a); kv_num_heads 1 or
  /// 2, packed or separate QKV, with or without rotary; total_sequence_length from Shape and
  /// seqlens_k from data (some rows padded), valid on every binding.
  bool groupQueryAttention(size_t i);

  void forceTranspose();

  void declareOutput(const std::string& name, int elemType, const std::vector<Poly>& dims);

  void finishOutputs();

  Random rng_;
  GeneratorOptions opt_;
  onnx::ModelProto model_;
  GraphBuilder g_;
  std::vector<Atom> atoms_;
  std::vector<Val> pool_;
  std::vector<ShapeOut> shapeOuts_;
  std::map<std::string, std::string> shapeCache_;
  /// The last shapeOperand() took a runtime entry through a subtraction after its -1.
  bool subtractedShape_ = false;
  std::string scalarInput_, bound_;
  int consts_ = 0;
  int conds_ = 0;
  int dataOps_ = 0;
  bool contribOpset_ = false;
};

} // namespace gen_detail
} // namespace dynqual::fuzz
