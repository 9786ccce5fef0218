// The generator: deterministic from the seed, valid for every binding, big and varied enough.
#include "dynqual/fuzz/Generator.h"
#include "dynqual/fuzz/Oracle.h"
#include "dynqual/fuzz/SymbolicDim.h"
#include "dynqual/modelgen/GraphBuilder.h"
#include "dynqual/onnx/ModelLoader.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/reference/Interpreter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace dynqual::fuzz {
namespace {

TEST(SymbolicDim, PolynomialsCompareByValueForEveryBinding) {
  std::vector<Atom> atoms = {{"N0", true, false}, {"N1", true, false}, {"s2", false, true}};
  Poly n0 = Poly::atom(0), n1 = Poly::atom(1), s = Poly::atom(2);
  EXPECT_EQ(n0 * n1 * Poly::constant(2), Poly::constant(2) * n1 * n0);
  EXPECT_NE(n0 * n1, n0 + n1);
  EXPECT_EQ((n0 + n1).evaluate({3, 5, 0}), 8);
  EXPECT_EQ((n0 * n1 * Poly::constant(2)).evaluate({3, 5, 0}), 30);
  // Input symbols are >= 1, an opaque extent that may be empty is >= 0.
  EXPECT_EQ((n0 * n1).minValue(atoms), 1);
  EXPECT_EQ((n0 * s).minValue(atoms), 0);
  EXPECT_EQ((n0 + s + Poly::constant(2)).minValue(atoms), 3);
  EXPECT_EQ((Poly::constant(2) * n0 * n1).text(atoms), "2*N0*N1");
}

TEST(SymbolicDim, MaxValueIsTheValueWithEveryAtomAtItsBound) {
  // N0, N1 <= 9; s2 cut from 2*N0 (<= 18).
  std::vector<Atom> atoms = {
      {"N0", true, false, kSymbolBound}, {"N1", true, false, kSymbolBound}, {"s2", false, true, 18}};
  Poly n0 = Poly::atom(0), n1 = Poly::atom(1), s = Poly::atom(2);
  EXPECT_EQ((n0 * n1).maxValue(atoms), 81);
  EXPECT_EQ((Poly::constant(3) * n0 + s + Poly::constant(2)).maxValue(atoms), 27 + 18 + 2);
  // Saturates instead of overflowing: 18^20 is far past 2^40.
  Poly big = Poly::constant(1);
  for (int k = 0; k < 20; ++k)
    big = big * s;
  EXPECT_EQ(big.maxValue(atoms), kMaxValueSaturation);
}

TEST(Generator, TileChainsStayWithinTheReferenceLimit) {
  // shapegen-2 made this seed a chain of Tiles whose output on N0 = N1 = 7 neither the compiled
  // run nor the reference could allocate (data/tile_chain_shapegen2.onnx, next test). With the
  // element cap (kMaxValueElements) the same seed is a graph the reference runs on every binding.
  GeneratedCase c = generate(11686076036525725629ull);
  try {
    PreparedCase pc = prepareCase(c.model, 4, c.seed);
    EXPECT_EQ(pc.bindings.size(), 4u);
  } catch (const InvalidCase& e) {
    ADD_FAILURE() << e.what();
  }
}

TEST(Oracle, ACaseOverTheReferenceLimitIsInvalidOnItsBinding) {
  // The shapegen-2 graph of that seed: on the "larger" binding (every symbol 7) the reference
  // holds more than kReferenceElementLimit elements, so the case is invalid there, not a
  // finding, and the message names the binding, the node and the limit.
  onnx::ModelProto m = onnxio::loadModel(DYNQUAL_FUZZ_TEST_DATA "/tile_chain_shapegen2.onnx");
  std::string error;
  try {
    prepareCase(m, 4, 11686076036525725629ull);
  } catch (const InvalidCase& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("reference on binding 'N0=7 N1=7'"), std::string::npos) << error;
  EXPECT_NE(error.find("(Tile)"), std::string::npos) << error;
  // Tile checks its output (282,374,416 elements) before allocating it, so this takes no memory.
  EXPECT_NE(error.find("an output of shape [282374416] would pass the element limit"), std::string::npos) << error;
  // The bindings before it (ones, asymmetric) run: a limit of their size would not reject them.
  PreparedCase first = prepareCase(m, 4, 11686076036525725629ull, 0);
  EXPECT_EQ(first.bindings.at(0).kind, "ones");
}

TEST(Generator, SameSeedSameBytesOtherSeedOtherGraph) {
  for (uint64_t seed : {1ull, 2ull, 77ull, 123456789ull}) {
    std::string a = modelgen::serializeDeterministic(generate(seed).model);
    std::string b = modelgen::serializeDeterministic(generate(seed).model);
    EXPECT_EQ(a, b) << "seed " << seed;
    EXPECT_NE(a, modelgen::serializeDeterministic(generate(seed + 1).model)) << "seed " << seed;
  }
  EXPECT_NE(caseSeed(1, 0), caseSeed(1, 1));
  EXPECT_NE(caseSeed(1, 0), caseSeed(2, 0));
  EXPECT_EQ(caseSeed(5, 9), caseSeed(5, 9));
}

TEST(Generator, AtLeast95PercentValidWithMedianOf8OpsAndEveryOpKind) {
  const int n = 300;
  int valid = 0;
  std::vector<int> sizes;
  std::map<std::string, int> ops;
  std::map<std::string, int> reasons;
  bool sawRank0Output = false, sawShapeOutput = false, sawZeroExtent = false;
  for (int k = 0; k < n; ++k) {
    GeneratedCase c = generate(caseSeed(42, static_cast<uint64_t>(k)));
    sizes.push_back(c.nodes);
    for (const auto& [op, m] : c.opCounts)
      ops[op] += m;
    try {
      PreparedCase pc = prepareCase(c.model, 4, c.seed);
      ++valid;
      for (size_t o = 0; o < pc.expected[0].size(); ++o) {
        sawRank0Output |= pc.expected[0][o].rank() == 0;
        sawShapeOutput |= pc.expected[0][o].dtype() == DType::Int64;
      }
      for (const auto& outs : pc.expected)
        for (const auto& t : outs)
          sawZeroExtent |= t.numel() == 0;
    } catch (const InvalidCase& e) {
      std::string why = e.what();
      ++reasons[why.substr(0, 120)];
    }
  }
  for (const auto& [why, m] : reasons)
    std::cout << "invalid x" << m << ": " << why << "\n";
  EXPECT_GE(valid * 100, 95 * n) << valid << " of " << n << " valid";
  std::sort(sizes.begin(), sizes.end());
  EXPECT_GE(sizes[sizes.size() / 2], 8) << "median graph size";
  for (const char* op : {"Reshape",
                         "Slice",
                         "Expand",
                         "Unsqueeze",
                         "Squeeze",
                         "Flatten",
                         "Concat",
                         "Transpose",
                         "Split",
                         "Gather",
                         "Shape",
                         "Add",
                         "Sub",
                         "Mul",
                         "Cast",
                         "NonZero",
                         "Compress",
                         "Tile",
                         "Pad",
                         "MatMulNBits",
                         "RotaryEmbedding",
                         "GroupQueryAttention"})
    EXPECT_GT(ops[op], 0) << op << " never generated";
  EXPECT_TRUE(sawRank0Output);
  EXPECT_TRUE(sawShapeOutput);
  EXPECT_TRUE(sawZeroExtent);
}

/// The producer of each value of `m` ("" for inputs and initializers).
std::map<std::string, const onnx::NodeProto*> producers(const onnx::ModelProto& m) {
  std::map<std::string, const onnx::NodeProto*> p;
  for (const auto& n : m.graph().node())
    for (const auto& o : n.output())
      p[o] = &n;
  return p;
}

std::string stringAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name)
      return a.s();
  return "";
}

bool hasAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name)
      return true;
  return false;
}

TEST(Generator, DataDependentTilingAndPaddingOpsInEveryForm) {
  std::map<std::string, int> forms;
  for (int k = 0; k < 300; ++k) {
    GeneratedCase c = generate(caseSeed(42, static_cast<uint64_t>(k)));
    auto made = producers(c.model);
    for (const auto& n : c.model.graph().node()) {
      // A shape operand computed by a node (Shape arithmetic) or a constant initializer.
      auto origin = [&](int input) { return made.count(n.input(input)) ? "computed" : "constant"; };
      if (n.op_type() == "Pad") {
        std::string mode = stringAttr(n, "mode");
        ++forms["Pad " + mode];
        ++forms[std::string("Pad ") + mode + " pads " + origin(1)];
        if (n.input_size() > 2)
          ++forms["Pad constant_value"];
      } else if (n.op_type() == "Tile") {
        ++forms[std::string("Tile repeats ") + origin(1)];
      } else if (n.op_type() == "Compress") {
        ++forms[hasAttr(n, "axis") ? "Compress axis" : "Compress flattened"];
        // The condition is data: a graph input or computed from a data value, never a constant.
        bool isInput = false;
        for (const auto& in : c.model.graph().input())
          isInput |= in.name() == n.input(1);
        EXPECT_TRUE(isInput || made.count(n.input(1))) << "seed " << c.seed << ": constant condition";
      } else if (n.op_type() == "NonZero") {
        ++forms["NonZero"];
      } else if (n.op_type() == "Slice") {
        // Bounds the host cannot resolve: computed from the `bound` data input.
        for (int b : {1, 2})
          if (made.count(n.input(b)))
            for (const auto& in : made.at(n.input(b))->input())
              forms["Slice bound from data arithmetic"] += in == "bound";
      }
    }
  }
  for (const char* form :
       {"Pad constant", "Pad reflect", "Pad edge", "Pad constant pads constant", "Pad constant pads computed",
        "Pad reflect pads constant", "Pad reflect pads computed", "Pad edge pads constant", "Pad edge pads computed",
        "Pad constant_value", "Tile repeats constant", "Tile repeats computed", "Compress axis", "Compress flattened",
        "NonZero", "Slice bound from data arithmetic"})
    EXPECT_GE(forms[form], 5) << form << " (300 cases)";
}

int64_t intAttrOr(const onnx::NodeProto& n, const std::string& name, int64_t dflt) {
  for (const auto& a : n.attribute())
    if (a.name() == name)
      return a.i();
  return dflt;
}

// The contrib ops (shapegen-7): every form at least 5 times in 2000 cases, their cases valid (the
// reference runs them on all K bindings), and their inputs' runtime dims vary across bindings.
// The values are the reference's: each node output becomes an extra graph output.
TEST(Generator, ContribOpsInEveryFormWithDynamicDims) {
  std::map<std::string, int> forms;
  int withContrib = 0, valid = 0;
  for (int k = 0; k < 2000; ++k) {
    GeneratedCase c = generate(caseSeed(42, static_cast<uint64_t>(k)));
    if (!c.opCounts.count("MatMulNBits") && !c.opCounts.count("RotaryEmbedding") &&
        !c.opCounts.count("GroupQueryAttention"))
      continue;
    ++withContrib;
    std::map<std::string, onnx::TensorProto> inits;
    for (const auto& t : c.model.graph().initializer())
      inits[t.name()] = t;
    for (const auto& n : c.model.graph().node()) {
      EXPECT_TRUE(n.op_type() != "MatMulNBits" && n.op_type() != "RotaryEmbedding" || n.domain() == "com.microsoft");
      if (n.op_type() == "MatMulNBits") {
        int64_t K = intAttrOr(n, "K", 0), block = intAttrOr(n, "block_size", 0), blocks = (K + block - 1) / block;
        EXPECT_NE(K % block, 0) << "seed " << c.seed << ": K " << K << " fills its last block";
        EXPECT_EQ(intAttrOr(n, "bits", 0), 4);
        if (n.input_size() < 4)
          ++forms["MatMulNBits no zero points"];
        else if (inits.at(n.input(3)).data_type() == onnx::TensorProto::UINT8)
          ++forms[blocks % 2 ? "MatMulNBits packed zero points, a row ending mid-byte"
                             : "MatMulNBits packed zero points"];
        else
          ++forms["MatMulNBits float zero points"];
      } else if (n.op_type() == "GroupQueryAttention") {
        ++forms[n.input(3).empty() ? "GroupQueryAttention prompt" : "GroupQueryAttention decode after a past"];
        ++forms[n.input(1).empty() ? "GroupQueryAttention packed QKV" : "GroupQueryAttention separate QKV"];
        if (intAttrOr(n, "kv_num_heads", 0) == 2)
          ++forms["GroupQueryAttention kv_num_heads 2"];
        if (intAttrOr(n, "do_rotary", 0))
          ++forms[intAttrOr(n, "rotary_interleaved", 0) ? "GroupQueryAttention rotary interleaved"
                                                        : "GroupQueryAttention rotary half-split"];
      } else if (n.op_type() == "RotaryEmbedding") {
        ++forms[intAttrOr(n, "interleaved", 0) ? "RotaryEmbedding interleaved" : "RotaryEmbedding half-split"];
        if (hasAttr(n, "rotary_embedding_dim"))
          ++forms["RotaryEmbedding partial rotary dim"];
        if (!hasAttr(n, "num_heads"))
          ++forms["RotaryEmbedding heads from the cache"];
      }
    }
    PreparedCase pc;
    try {
      pc = prepareCase(c.model, 4, c.seed);
    } catch (const InvalidCase& e) {
      std::cout << "seed " << c.seed << " invalid: " << e.what() << "\n";
      continue;
    }
    ++valid;
    onnx::ModelProto every = c.model;
    std::vector<std::string> names;
    for (const auto& o : c.model.graph().output())
      names.push_back(o.name());
    std::set<std::string> declared(names.begin(), names.end());
    for (const auto& n : c.model.graph().node())
      for (const auto& o : n.output())
        if (declared.insert(o).second) {
          every.mutable_graph()->add_output()->set_name(o);
          names.push_back(o);
        }
    // Dims of each contrib node's first input, per binding.
    std::map<std::string, std::set<std::vector<int64_t>>> seen;
    std::map<std::string, std::string> opOf;
    for (size_t b = 0; b < pc.inputs.size(); ++b) {
      std::vector<Tensor> all = reference::evaluate(every, pc.inputs[b]);
      std::map<std::string, const Tensor*> value;
      for (size_t v = 0; v < names.size(); ++v)
        value[names[v]] = &all[v];
      for (int i = 0; i < c.model.graph().input_size(); ++i)
        value[c.model.graph().input(i).name()] = &pc.inputs[b][static_cast<size_t>(i)];
      for (const auto& n : c.model.graph().node())
        if (n.domain() == "com.microsoft" && value.count(n.input(0))) {
          seen[n.output(0)].insert(value.at(n.input(0))->dims());
          opOf[n.output(0)] = n.op_type();
          const auto& d = value.at(n.input(0))->dims();
          if (n.op_type() == "RotaryEmbedding" && d.size() == 3 && d[1] >= 2)
            ++forms["RotaryEmbedding a binding with 2+ tokens (positions >= 1)"];
          if (n.op_type() == "GroupQueryAttention" && value.count(n.input(5)) && value.count(n.input(6))) {
            // A padded row: seqlens_k below total - 1 (the reference checked it is in [0, total)).
            const Tensor& sl = *value.at(n.input(5));
            const int64_t total = value.at(n.input(6))->getInt(0);
            for (int64_t r = 0; r < sl.numel(); ++r)
              if (sl.getInt(r) < total - 1) {
                ++forms["GroupQueryAttention a padded row"];
                break;
              }
            if (!n.input(3).empty() && value.count(n.input(3)) && value.at(n.input(3))->dims()[2] == 0)
              ++forms["GroupQueryAttention decode with past 0"];
            // The shared buffer: as long as total, so the valid tokens end before it does.
            if (!n.input(3).empty() && value.count(n.input(3)) && total >= 2 &&
                value.at(n.input(3))->dims()[2] == total)
              ++forms["GroupQueryAttention shared past/present buffer"];
          }
        }
    }
    for (const auto& [out, dims] : seen)
      if (dims.size() >= 2)
        ++forms[opOf.at(out) + " input dims differ across bindings"];
  }
  EXPECT_GE(valid * 100, 95 * withContrib) << valid << " of " << withContrib << " cases with a contrib op valid";
  for (const char* form : {"MatMulNBits no zero points",
                           "MatMulNBits packed zero points",
                           "MatMulNBits packed zero points, a row ending mid-byte",
                           "MatMulNBits float zero points",
                           "MatMulNBits input dims differ across bindings",
                           "RotaryEmbedding interleaved",
                           "RotaryEmbedding half-split",
                           "RotaryEmbedding partial rotary dim",
                           "RotaryEmbedding heads from the cache",
                           "RotaryEmbedding input dims differ across bindings",
                           "RotaryEmbedding a binding with 2+ tokens (positions >= 1)",
                           "GroupQueryAttention prompt",
                           "GroupQueryAttention decode after a past",
                           "GroupQueryAttention packed QKV",
                           "GroupQueryAttention separate QKV",
                           "GroupQueryAttention rotary interleaved",
                           "GroupQueryAttention rotary half-split",
                           "GroupQueryAttention a padded row",
                           "GroupQueryAttention decode with past 0",
                           "GroupQueryAttention kv_num_heads 2",
                           "GroupQueryAttention shared past/present buffer",
                           "GroupQueryAttention input dims differ across bindings"})
    EXPECT_GE(forms[form], 5) << form << " (2000 cases)";
  for (const auto& [form, m] : forms)
    std::cout << form << ": " << m << "\n";
}

// Reflect pads must stay below the padded extent on every binding (the spec's rule; the CPU
// reference would mirror repeatedly). Each reflect Pad's input and pads become extra outputs, and
// the reference gives their runtime values on all K bindings.
TEST(Generator, ReflectPadsAreBelowTheExtentOnEveryBinding) {
  int checked = 0;
  for (int k = 0; k < 800 && checked < 40; ++k) {
    GeneratedCase c = generate(caseSeed(43, static_cast<uint64_t>(k)));
    onnx::ModelProto m = c.model;
    std::vector<std::pair<std::string, std::string>> pads; // (data, pads) of each reflect Pad
    for (const auto& n : m.graph().node())
      if (n.op_type() == "Pad" && stringAttr(n, "mode") == "reflect")
        pads.emplace_back(n.input(0), n.input(1));
    if (pads.empty())
      continue;
    std::set<std::string> outs;
    for (const auto& o : m.graph().output())
      outs.insert(o.name());
    std::map<std::string, onnx::TensorProto> inits;
    for (const auto& t : m.graph().initializer())
      inits[t.name()] = t;
    std::set<std::string> inputs;
    for (const auto& in : m.graph().input())
      inputs.insert(in.name());
    auto made = producers(m);
    for (const auto& [data, p] : pads) {
      // The pads vector holds 2 * rank entries: an initializer, or a Concat of [1] pieces.
      int64_t len = inits.count(p) ? inits.at(p).dims(0) : made.at(p)->input_size();
      for (const std::string& v : {data, p})
        if (!inits.count(v) && !inputs.count(v) && outs.insert(v).second) {
          std::vector<std::string> params(static_cast<size_t>(v == p ? 1 : len / 2), "");
          std::vector<int64_t> sizes(params.size(), -1);
          if (v == p)
            sizes[0] = len;
          modelgen::declare(m.mutable_graph()->add_output(), v,
                            v == p ? onnx::TensorProto::INT64 : onnx::TensorProto::FLOAT, params, sizes);
        }
    }
    PreparedCase pc;
    try {
      pc = prepareCase(m, 4, c.seed, -1, /*check=*/false);
    } catch (const InvalidCase& e) {
      ADD_FAILURE() << "seed " << c.seed << ": " << e.what();
      continue;
    }
    for (size_t b = 0; b < pc.bindings.size(); ++b) {
      auto value = [&](const std::string& name) -> Tensor {
        for (size_t o = 0; o < pc.outputNames.size(); ++o)
          if (pc.outputNames[o] == name)
            return pc.expected[b][o];
        for (int i = 0; i < m.graph().input_size(); ++i)
          if (m.graph().input(i).name() == name)
            return pc.inputs[b][static_cast<size_t>(i)];
        return onnxio::tensorFromProto(inits.at(name), name);
      };
      for (const auto& [data, p] : pads) {
        Tensor x = value(data), pv = value(p);
        for (int64_t a = 0; a < x.rank(); ++a)
          for (int64_t side : {a, a + x.rank()})
            EXPECT_LT(pv.getInt(side), std::max<int64_t>(x.dims()[static_cast<size_t>(a)], 1))
                << "seed " << c.seed << " binding " << pc.bindings[b].description << " axis " << a;
      }
    }
    ++checked;
  }
  EXPECT_GE(checked, 20) << "too few cases with a reflect Pad";
}

TEST(Generator, DeadNodeRemovalKeepsOnlyWhatReachesAnOutput) {
  onnx::ModelProto m = modelgen::newModel("test", 17);
  modelgen::GraphBuilder g(*m.mutable_graph());
  modelgen::declare(m.mutable_graph()->add_input(), "x", onnx::TensorProto::FLOAT, {"N"}, {0});
  std::string used = g.node("Neg", {"x"});
  g.node("Shape", {"x"}); // dead
  modelgen::declare(m.mutable_graph()->add_output(), used, onnx::TensorProto::FLOAT, {"N"}, {0});
  removeDeadNodes(m);
  ASSERT_EQ(m.graph().node_size(), 1);
  EXPECT_EQ(m.graph().node(0).op_type(), "Neg");
  EXPECT_EQ(m.graph().input_size(), 1);
}

} // namespace
} // namespace dynqual::fuzz
