#include "dynqual/fuzz/Coverage.h"

#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/reference/Interpreter.h"

#include <onnx/shape_inference/implementation.h>

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace dynqual::fuzz {

namespace {

const char* kSubview = "Slice|view: subview (positive constant steps)";
const char* kNegative = "Slice|negative steps";
const char* kTransposeView = "Transpose|view: permuted strides (strided consumers only)";
const char* kChain =
    "view chain|Slice + 2 or more of Transpose/Unsqueeze/Squeeze/Reshape, into Concat/Gather/Transpose";
const char* kNary = "Concat|3+ data inputs on a dynamic axis, extents differ at run time";
const char* kRank0 = "any|rank-0 value";
const char* kShapeOut = "output|computed from Shape alone";
const char* kReshapeDimsInOrder =
    "Reshape|graph output, its shape shared with another Reshape, a -1 before an entry computed with Sub";

// The contrib ops (shapegen-7), by attributes and inputs alone.
const char* kNBitsPadded = "MatMulNBits|K not a multiple of block_size (padded last block)";
const char* kNBitsMidByte = "MatMulNBits|packed zero points, a row ending mid-byte";
const char* kRotaryInterleaved = "RotaryEmbedding|interleaved";
const char* kRotaryHalf = "RotaryEmbedding|half-split";
const char* kGqaDecode = "GroupQueryAttention|a past (decode)";
const char* kGqaPadded = "GroupQueryAttention|a padded row (seqlens_k below total - 1) on some binding";

int64_t intAttr(const onnx::NodeProto& n, const std::string& name, int64_t dflt) {
  for (const auto& a : n.attribute())
    if (a.name() == name)
      return a.i();
  return dflt;
}

} // namespace

const std::vector<FeatureKey>& trackedFeatures() {
  static const std::vector<FeatureKey> keys = {kSubview,
                                               kTransposeView,
                                               "Unsqueeze|view of a strided view",
                                               "Squeeze|view of a strided view",
                                               "Reshape|of a strided view",
                                               kChain,
                                               "copy|memcpy",
                                               "copy|copy2d",
                                               "copy|strided",
                                               "Add|broadcast of a runtime-1 dynamic dim",
                                               "Sub|broadcast of a runtime-1 dynamic dim",
                                               "Mul|broadcast of a runtime-1 dynamic dim",
                                               "Expand|broadcast of a runtime-1 dynamic dim",
                                               kNary,
                                               kRank0,
                                               kNegative,
                                               kShapeOut,
                                               kReshapeDimsInOrder,
                                               kNBitsPadded,
                                               kNBitsMidByte,
                                               kRotaryInterleaved,
                                               kRotaryHalf,
                                               kGqaDecode,
                                               kGqaPadded};
  return keys;
}

std::set<FeatureKey> caseFeatures(const PreparedCase& pc, const std::map<std::string, uint64_t>& counters,
                                  const reference::EvaluateLimits& limits) {
  std::set<FeatureKey> f;
  const auto& g = pc.model.graph();
  std::map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : g.initializer())
    inits[t.name()] = &t;
  std::set<std::string> outputs, inputs;
  for (const auto& o : g.output())
    outputs.insert(o.name());
  for (const auto& i : g.input())
    if (!inits.count(i.name()))
      inputs.insert(i.name());
  std::map<std::string, std::vector<const onnx::NodeProto*>> consumers;
  std::map<std::string, const onnx::NodeProto*> producer;
  for (const auto& n : g.node()) {
    for (const auto& in : n.input())
      consumers[in].push_back(&n);
    for (const auto& o : n.output())
      producer[o] = &n;
    f.insert(n.op_type() + "|present");
    if (n.op_type() == "MatMulNBits") {
      const int64_t K = intAttr(n, "K", 0), block = intAttr(n, "block_size", 0), bits = intAttr(n, "bits", 4);
      if (block > 0 && K % block != 0)
        f.insert(kNBitsPadded);
      const auto zp = n.input_size() > 3 ? std::find_if(g.initializer().begin(), g.initializer().end(),
                                                        [&](const auto& t) { return t.name() == n.input(3); })
                                         : g.initializer().end();
      if (block > 0 && zp != g.initializer().end() && zp->data_type() == onnx::TensorProto::UINT8 &&
          ((K + block - 1) / block * bits) % 8 != 0)
        f.insert(kNBitsMidByte);
    } else if (n.op_type() == "GroupQueryAttention") {
      if (n.input_size() > 3 && !n.input(3).empty())
        f.insert(kGqaDecode);
    } else if (n.op_type() == "RotaryEmbedding") {
      f.insert(intAttr(n, "interleaved", 0) ? kRotaryInterleaved : kRotaryHalf);
    }
  }
  auto constInts = [&](const onnx::NodeProto& n, int input, std::vector<int64_t>& out) {
    if (n.input_size() <= input || !inits.count(n.input(input)))
      return false;
    try {
      Tensor t = onnxio::tensorFromProto(*inits.at(n.input(input)), n.input(input));
      out.clear();
      for (int64_t k = 0; k < t.numel(); ++k)
        out.push_back(t.getInt(k));
      return true;
    } catch (const std::exception&) {
      return false;
    }
  };

  // ---- a returned Reshape whose dims the compiler defines one from the other -----------------
  // A -1 entry before an entry it cannot prove non-negative: that dim is select(e == -1, inferred,
  // e), defined right after the inferred one (corpus/reshape_output_dims_in_order).
  for (const auto& n : g.node()) {
    if (n.op_type() != "Reshape" || n.input_size() < 2 || !outputs.count(n.output(0)) || !producer.count(n.input(1)))
      continue;
    int reshapes = 0;
    for (const onnx::NodeProto* c : consumers[n.input(1)])
      reshapes += c->op_type() == "Reshape" ? 1 : 0;
    if (reshapes < 2)
      continue;
    const onnx::NodeProto& concat = *producer.at(n.input(1));
    if (concat.op_type() != "Concat")
      continue;
    bool minusOne = false;
    for (int k = 0; k < concat.input_size() && !f.count(kReshapeDimsInOrder); ++k) {
      std::vector<int64_t> v;
      if (constInts(concat, k, v) && v == std::vector<int64_t>{-1})
        minusOne = true;
      else if (minusOne && producer.count(concat.input(k)) && producer.at(concat.input(k))->op_type() == "Sub")
        f.insert(kReshapeDimsInOrder);
    }
  }

  // ---- views, by dq-convert-onnx's rule (docs/passes/convert-onnx.md#views) ------------------
  static const std::set<std::string> kNeedContiguous = {"Transpose", "Gather", "Concat", "Reshape", "Flatten"};
  std::set<std::string> views;      // values that are strided views
  std::map<std::string, int> chain; // Slice-view value -> view links after the Slice
  for (const auto& n : g.node()) {
    const std::string& op = n.op_type();
    const std::string in = n.input_size() ? n.input(0) : "";
    const std::string out = n.output_size() ? n.output(0) : "";
    if (op == "Slice") {
      std::vector<int64_t> steps;
      bool constSteps = n.input_size() < 5 || constInts(n, 4, steps);
      if (n.input_size() < 5)
        steps = {1};
      if (constSteps && std::all_of(steps.begin(), steps.end(), [](int64_t s) { return s > 0; })) {
        f.insert(kSubview);
        views.insert(out);
        chain[out] = 0;
      }
      if (constSteps && std::any_of(steps.begin(), steps.end(), [](int64_t s) { return s < 0; }))
        f.insert(kNegative);
    }
    bool link = op == "Transpose" || op == "Unsqueeze" || op == "Squeeze" || op == "Reshape";
    if ((op == "Concat" || op == "Gather" || op == "Transpose") && chain.count(in) && chain.at(in) >= 2)
      f.insert(kChain);
    if (op == "Concat")
      for (const auto& x : n.input())
        if (chain.count(x) && chain.at(x) >= 2)
          f.insert(kChain);
    if (link && chain.count(in))
      chain[out] = chain.at(in) + 1;
    if (op == "Transpose") {
      bool strided = !outputs.count(out);
      for (const auto* c : consumers[out])
        strided &= !kNeedContiguous.count(c->op_type());
      if (strided) {
        f.insert(kTransposeView);
        views.insert(out);
      }
    } else if ((op == "Unsqueeze" || op == "Squeeze") && views.count(in)) {
      f.insert(op + "|view of a strided view");
      views.insert(out);
    } else if (op == "Reshape" && views.count(in)) {
      f.insert("Reshape|of a strided view");
    }
  }

  // ---- copies that ran ----------------------------------------------------------------------
  for (const auto& [counter, kind] : std::vector<std::pair<std::string, std::string>>{
           {"memcpy_copies", "memcpy"}, {"copy2d_copies", "copy2d"}, {"strided_copies", "strided"}})
    if (auto it = counters.find(counter); it != counters.end() && it->second > 0)
      f.insert("copy|" + kind);

  // ---- outputs computed from Shape alone -----------------------------------------------------
  for (const auto& o : g.output()) {
    bool sawShape = false, data = false;
    std::set<std::string> seen;
    std::function<void(const std::string&)> walk = [&](const std::string& v) {
      if (!seen.insert(v).second || data)
        return;
      if (inputs.count(v)) {
        data = true;
        return;
      }
      auto p = producer.find(v);
      if (p == producer.end())
        return; // an initializer
      if (p->second->op_type() == "Shape") {
        sawShape = true;
        return;
      }
      for (const auto& in : p->second->input())
        if (!in.empty())
          walk(in);
    };
    walk(o.name());
    if (sawShape && !data)
      f.insert(kShapeOut);
  }

  // ---- runtime shapes: every value on every binding ------------------------------------------
  std::map<std::string, std::vector<int64_t>> declaredDims; // -1 = dynamic after ONNX inference
  {
    onnx::ModelProto copy = pc.model;
    try {
      onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/0, /*data_prop=*/false);
      onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception&) {
    }
    auto take = [&](const onnx::ValueInfoProto& v) {
      if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape())
        return;
      std::vector<int64_t> d;
      for (const auto& dim : v.type().tensor_type().shape().dim())
        d.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
      declaredDims[v.name()] = d;
    };
    for (const auto& v : copy.graph().value_info())
      take(v);
    for (const auto& v : copy.graph().input())
      take(v);
    for (const auto& v : copy.graph().output())
      take(v);
    for (const auto& t : g.initializer())
      declaredDims[t.name()] = std::vector<int64_t>(t.dims().begin(), t.dims().end());
  }
  auto dynamicAt = [&](const std::string& v, size_t axis) {
    auto it = declaredDims.find(v);
    return it == declaredDims.end() || axis >= it->second.size() || it->second[axis] < 0;
  };
  onnx::ModelProto every = pc.model;
  std::vector<std::string> names;
  for (const auto& o : g.output())
    names.push_back(o.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output())
      if (!o.empty() && !outputs.count(o)) {
        every.mutable_graph()->add_output()->set_name(o);
        names.push_back(o);
      }
  for (size_t b = 0; b < pc.inputs.size(); ++b) {
    std::map<std::string, const Tensor*> value;
    std::vector<Tensor> all;
    try {
      all = reference::evaluate(every, pc.inputs[b], limits);
    } catch (const std::exception&) {
      continue;
    }
    for (size_t k = 0; k < names.size() && k < all.size(); ++k)
      value[names[k]] = &all[k];
    size_t gi = 0;
    for (const auto& in : g.input())
      if (!inits.count(in.name()) && gi < pc.inputs[b].size())
        value[in.name()] = &pc.inputs[b][gi++];
    for (const auto& [name, t] : value)
      if (t->rank() == 0)
        f.insert(kRank0);
    for (const auto& n : g.node()) {
      const std::string& op = n.op_type();
      if (n.output_size() == 0 || !value.count(n.output(0)))
        continue;
      const auto& outDims = value.at(n.output(0))->dims();
      if (op == "Add" || op == "Sub" || op == "Mul" || op == "Expand") {
        int operands = op == "Expand" ? 1 : n.input_size();
        for (int i = 0; i < operands; ++i) {
          if (!value.count(n.input(i)))
            continue;
          const auto& d = value.at(n.input(i))->dims();
          size_t lead = outDims.size() - std::min(outDims.size(), d.size());
          for (size_t a = 0; a < d.size() && lead + a < outDims.size(); ++a)
            if (d[a] == 1 && outDims[lead + a] > 1 && dynamicAt(n.input(i), a))
              f.insert(op + "|broadcast of a runtime-1 dynamic dim");
        }
      }
      if (op == "Concat" && n.input_size() >= 3 && !outDims.empty()) {
        int64_t axis = intAttr(n, "axis", 0);
        if (axis < 0)
          axis += static_cast<int64_t>(outDims.size());
        bool floats = true;
        std::set<int64_t> extents;
        for (const auto& in : n.input()) {
          if (!value.count(in)) {
            floats = false;
            break;
          }
          const Tensor& t = *value.at(in);
          floats &= t.dtype() == DType::Float && static_cast<int64_t>(t.rank()) > axis;
          if (floats)
            extents.insert(t.dims()[static_cast<size_t>(axis)]);
        }
        if (floats && extents.size() >= 2 && dynamicAt(n.output(0), static_cast<size_t>(axis)))
          f.insert(kNary);
      }
      if (op == "GroupQueryAttention" && n.input_size() > 6 && value.count(n.input(5)) && value.count(n.input(6)) &&
          value.at(n.input(6))->numel() == 1) {
        const Tensor& seqlens = *value.at(n.input(5));
        const int64_t total = value.at(n.input(6))->getInt(0);
        for (int64_t r = 0; r < seqlens.numel(); ++r)
          if (seqlens.getInt(r) < total - 1)
            f.insert(kGqaPadded);
      }
      if (value.at(n.output(0))->rank() == 0)
        f.insert(op + "|rank-0 output");
    }
  }
  return f;
}

std::vector<CoverageRow> coverageTable(const std::map<std::string, int64_t>& counts, int64_t valid) {
  std::vector<CoverageRow> rows;
  auto row = [&](const std::string& key) {
    CoverageRow r;
    auto bar = key.find('|');
    r.op = key.substr(0, bar);
    r.feature = bar == std::string::npos ? "" : key.substr(bar + 1);
    auto it = counts.find(key);
    r.cases = it == counts.end() ? 0 : it->second;
    r.percent = valid > 0 ? 100.0 * static_cast<double>(r.cases) / static_cast<double>(valid) : 0;
    rows.push_back(r);
  };
  const auto& tracked = trackedFeatures();
  for (const auto& k : tracked)
    row(k);
  for (const auto& [k, n] : counts)
    if (std::find(tracked.begin(), tracked.end(), k) == tracked.end())
      row(k);
  return rows;
}

std::string coverageMarkdown(const std::vector<CoverageRow>& rows) {
  std::string md = "| op | feature | valid cases | % of valid |\n|---|---|---|---|\n";
  for (const auto& r : rows)
    md += fmt::format("| {} | {} | {} | {:.1f} |\n", r.op, r.feature, r.cases, r.percent);
  return md;
}

} // namespace dynqual::fuzz
