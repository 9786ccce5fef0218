#include "dynqual/modelgen/DecoderModel.h"

#include "dynqual/modelgen/GraphBuilder.h"
#include "dynqual/onnx/GraphSignature.h"
#include "dynqual/onnx/TensorProtoIO.h"
#include "dynqual/reference/Interpreter.h"
#include "dynqual/store/Fingerprint.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <stdexcept>

namespace fs = std::filesystem;

namespace dynqual::modelgen {

namespace {

/// Draws the weights in a fixed order from one stream, recording where each tensor starts
/// (decoderWeightRecipe).
struct WeightGen {
  Random rng;
  DType dtype;
  uint64_t draws = 0;
  nlohmann::json tensors = nlohmann::json::array();

  Tensor matrix(const std::string& name, int64_t rows, int64_t cols) {
    record(name, {rows, cols}, "matrix");
    std::vector<double> v(static_cast<size_t>(rows * cols));
    double scale = 1.0 / std::sqrt(static_cast<double>(rows));
    for (auto& x : v)
      x = rng.symmetric() * scale;
    draws += v.size();
    return Tensor::fromDoubles(dtype, {rows, cols}, v);
  }
  Tensor gain(const std::string& name, int64_t n) {
    record(name, {n}, "gain");
    std::vector<double> v(static_cast<size_t>(n));
    for (auto& x : v)
      x = 1.0 + 0.25 * rng.symmetric();
    draws += v.size();
    return Tensor::fromDoubles(dtype, {n}, v);
  }
  void record(const std::string& name, std::vector<int64_t> dims, const char* kind) {
    tensors.push_back({{"name", name}, {"draw", draws}, {"dims", dims}, {"kind", kind}});
  }
};

/// x * gain / sqrt(mean(x^2, last axis) + eps)
std::string rmsNorm(GraphBuilder& g, const std::string& x, const std::string& gain, const std::string& eps) {
  std::string sq = g.node("Mul", {x, x});
  std::string mean = g.node("ReduceMean", {sq}, {intsAttr("axes", {-1}), intAttr("keepdims", 1)});
  std::string root = g.node("Sqrt", {g.node("Add", {mean, eps})});
  return g.node("Mul", {g.node("Div", {x, root}), gain});
}

} // namespace

void validate(const DecoderSpec& s) {
  auto positive = [](int64_t v, const char* opt) {
    if (v < 1)
      throw std::invalid_argument(std::string(opt) + " must be at least 1 (got " + std::to_string(v) + ")");
  };
  positive(s.layers, "--layers");
  positive(s.hidden, "--hidden");
  positive(s.heads, "--heads");
  positive(s.kvHeads, "--kv-heads");
  positive(s.vocab, "--vocab");
  if (s.mlp < 0)
    throw std::invalid_argument("--mlp must be at least 1, or 0 for 2 * hidden (got " + std::to_string(s.mlp) + ")");
  if (s.hidden % s.heads)
    throw std::invalid_argument("--hidden " + std::to_string(s.hidden) + " must be a multiple of --heads " +
                                std::to_string(s.heads));
  if (s.heads % s.kvHeads)
    throw std::invalid_argument("--heads " + std::to_string(s.heads) + " must be a multiple of --kv-heads " +
                                std::to_string(s.kvHeads));
}

namespace {

// The decoder and the recipe of its weights.
onnx::ModelProto buildDecoder(const DecoderSpec& s, WeightGen& w) {
  validate(s);
  const int64_t D = s.hidden / s.heads, K = s.kvHeads, G = s.heads / s.kvHeads, H = s.hidden, F = s.mlpWidth();
  onnx::ModelProto model = newModel("dynqual make-model", 17);
  onnx::GraphProto& gp = *model.mutable_graph();
  gp.set_name("decoder_step");
  GraphBuilder g(gp);

  const DType ft = s.float16 ? DType::Float16 : DType::Float;
  const int kF = s.float16 ? onnx::TensorProto::FLOAT16 : onnx::TensorProto::FLOAT, kI = onnx::TensorProto::INT64;
  auto scalar = [&](const std::string& name, double v) {
    return g.initializer(name, Tensor::fromDoubles(ft, {}, {v}));
  };
  auto past = [](const char* kv, int64_t l) { return "past_" + std::string(kv) + "_" + std::to_string(l); };
  auto present = [](const char* kv, int64_t l) { return "present_" + std::string(kv) + "_" + std::to_string(l); };
  declare(gp.add_input(), "input_ids", kI, {"batch", "seq"}, {0, 0});
  declare(gp.add_output(), "logits", kF, {"batch", "seq", ""}, {0, 0, s.vocab});
  for (int64_t l = 0; l < s.layers; ++l)
    for (const char* kv : {"key", "value"}) {
      declare(gp.add_input(), past(kv, l), kF, {"batch", "", "past", ""}, {0, K, 0, D});
      declare(gp.add_output(), present(kv, l), kF, {"batch", "", "total", ""}, {0, K, 0, D});
    }

  // Shared constants and the causal mask: keep (i, j) iff j - i <= past (Trilu lower, k = past).
  std::string eps = scalar("rms_eps", 1e-5);
  std::string scale = scalar("attn_scale", 1.0 / std::sqrt(static_cast<double>(D)));
  std::string masked = scalar("mask_fill", s.float16 ? -65504.0 : -1e9);
  std::string zeroF = scalar("zero", 0.0);
  std::string idx1 = g.ints("index_1", {1}), idx2 = g.ints("index_2_scalar", {2}, true);
  std::string axis2 = g.ints("axis_2", {2});
  std::string seqLen = g.node("Gather", {g.node("Shape", {"input_ids"}), idx1}, {intAttr("axis", 0)});
  std::string pastShape = g.node("Shape", {past("key", 0)});
  std::string pastLen = g.node("Gather", {pastShape, idx2}, {intAttr("axis", 0)});
  std::string totalLen = g.node("Add", {seqLen, g.node("Unsqueeze", {pastLen, g.ints("axis_0", {0})})});
  std::string ones = g.node("ConstantOfShape", {g.node("Concat", {seqLen, totalLen}, {intAttr("axis", 0)})});
  *gp.mutable_node(gp.node_size() - 1)->add_attribute() = tensorAttr("value", Tensor::fromDoubles(ft, {1}, {1.0}));
  std::string lower = g.node("Trilu", {ones, pastLen}, {intAttr("upper", 0)});
  std::string hidden = g.node("Equal", {lower, zeroF}); // true where masked

  std::string x =
      g.node("Gather", {g.initializer("embed", w.matrix("embed", s.vocab, H)), "input_ids"}, {intAttr("axis", 0)});
  std::string qShape = g.ints("q_shape", {0, 0, K, G, D}), kvShape = g.ints("kv_shape", {0, 0, K, D});
  std::string outShape = g.ints("attn_shape", {0, 0, H});
  for (int64_t l = 0; l < s.layers; ++l) {
    std::string L = std::to_string(l);
    std::string h = rmsNorm(g, x, g.initializer("attn_norm_" + L, w.gain("attn_norm_" + L, H)), eps);
    std::string q = g.node("MatMul", {h, g.initializer("wq_" + L, w.matrix("wq_" + L, H, H))});
    std::string k = g.node("MatMul", {h, g.initializer("wk_" + L, w.matrix("wk_" + L, H, K * D))});
    std::string v = g.node("MatMul", {h, g.initializer("wv_" + L, w.matrix("wv_" + L, H, K * D))});
    // q: [b, s, K*G*D] -> [b, K, G, s, D]; k, v: [b, s, K*D] -> [b, K, s, D], appended to the cache.
    q = g.node("Transpose", {g.node("Reshape", {q, qShape})}, {intsAttr("perm", {0, 2, 3, 1, 4})});
    k = g.node("Transpose", {g.node("Reshape", {k, kvShape})}, {intsAttr("perm", {0, 2, 1, 3})});
    v = g.node("Transpose", {g.node("Reshape", {v, kvShape})}, {intsAttr("perm", {0, 2, 1, 3})});
    std::string pk = g.node("Concat", {past("key", l), k}, {intAttr("axis", 2)});
    g.nameLast(present("key", l));
    pk = present("key", l);
    std::string pv = g.node("Concat", {past("value", l), v}, {intAttr("axis", 2)});
    g.nameLast(present("value", l));
    pv = present("value", l);
    // Scores [b, K, G, s, total]; the K/V group axis broadcasts over the G query heads.
    std::string kT = g.node("Transpose", {g.node("Unsqueeze", {pk, axis2})}, {intsAttr("perm", {0, 1, 2, 4, 3})});
    std::string scores = g.node("Mul", {g.node("MatMul", {q, kT}), scale});
    scores = g.node("Where", {hidden, masked, scores});
    std::string probs = g.node("Softmax", {scores}, {intAttr("axis", -1)});
    std::string ctx = g.node("MatMul", {probs, g.node("Unsqueeze", {pv, axis2})});
    ctx = g.node("Reshape", {g.node("Transpose", {ctx}, {intsAttr("perm", {0, 3, 1, 2, 4})}), outShape});
    x = g.node("Add", {x, g.node("MatMul", {ctx, g.initializer("wo_" + L, w.matrix("wo_" + L, H, H))})});

    h = rmsNorm(g, x, g.initializer("mlp_norm_" + L, w.gain("mlp_norm_" + L, H)), eps);
    std::string gate = g.node("MatMul", {h, g.initializer("w_gate_" + L, w.matrix("w_gate_" + L, H, F))});
    std::string up = g.node("MatMul", {h, g.initializer("w_up_" + L, w.matrix("w_up_" + L, H, F))});
    std::string act = g.node("Mul", {g.node("Mul", {gate, g.node("Sigmoid", {gate})}), up});
    x = g.node("Add", {x, g.node("MatMul", {act, g.initializer("w_down_" + L, w.matrix("w_down_" + L, F, H))})});
  }
  std::string h = rmsNorm(g, x, g.initializer("final_norm", w.gain("final_norm", H)), eps);
  g.node("MatMul", {h, g.initializer("lm_head", w.matrix("lm_head", H, s.vocab))});
  g.nameLast("logits");
  return model;
}

WeightGen newGen(const DecoderSpec& s) {
  return WeightGen{Random(s.seed), s.float16 ? DType::Float16 : DType::Float};
}

nlohmann::json recipe(const DecoderSpec& s, const WeightGen& w) {
  return {{"generator", "splitmix64-symmetric-v1"},
          {"seed", s.seed},
          {"dtype", s.float16 ? "float16" : "float32"},
          {"tensors", w.tensors}};
}

} // namespace

onnx::ModelProto buildDecoder(const DecoderSpec& s) {
  WeightGen w = newGen(s);
  return buildDecoder(s, w);
}

std::string decoderWeightRecipe(const DecoderSpec& s) {
  WeightGen w = newGen(s);
  buildDecoder(s, w);
  return recipe(s, w).dump();
}

int64_t decoderParameterCount(const DecoderSpec& s) {
  validate(s);
  const int64_t H = s.hidden, KD = s.kvHeads * (s.hidden / s.heads), F = s.mlpWidth();
  return s.vocab * H + s.layers * (2 * H + 2 * H * H + 2 * H * KD + 3 * H * F) + H + H * s.vocab;
}

std::vector<Tensor> decoderInputs(const DecoderSpec& s, int64_t batch, int64_t seq, int64_t past, uint64_t seed) {
  validate(s);
  Random rng(seed);
  std::vector<int64_t> ids(static_cast<size_t>(batch * seq));
  for (auto& id : ids)
    id = static_cast<int64_t>(rng.next() % static_cast<uint64_t>(s.vocab));
  std::vector<Tensor> inputs = {Tensor::fromInts(DType::Int64, {batch, seq}, ids)};
  const int64_t D = s.hidden / s.heads;
  for (int64_t l = 0; l < 2 * s.layers; ++l) {
    std::vector<double> v(static_cast<size_t>(batch * s.kvHeads * past * D));
    for (auto& x : v)
      x = rng.symmetric();
    inputs.push_back(Tensor::fromDoubles(s.float16 ? DType::Float16 : DType::Float, {batch, s.kvHeads, past, D}, v));
  }
  return inputs;
}

std::vector<std::vector<int64_t>> decoderDataSetShapes() {
  return {{1, 4, 0}, {2, 1, 3}, {1, 3, 5}};
}

namespace {

// Moves every generated weight into DIR/model.onnx.data (draw order, 64-byte aligned offsets,
// zero padding), records the recipe and the file's sha256 in the model's metadata, and writes
// them with each tensor's offset and length to DIR/model.onnx.data.json.
void externalizeWeights(onnx::ModelProto& model, nlohmann::json rec, const fs::path& dir) {
  const fs::path dataFile = dir / "model.onnx.data";
  std::ofstream out(dataFile, std::ios::binary | std::ios::trunc);
  std::map<std::string, onnx::TensorProto*> byName;
  for (auto& t : *model.mutable_graph()->mutable_initializer())
    byName[t.name()] = &t;
  uint64_t offset = 0;
  for (auto& entry : rec.at("tensors")) {
    onnx::TensorProto* t = byName.at(entry.at("name").get<std::string>());
    const uint64_t pad = (64 - offset % 64) % 64;
    const std::string zeros(pad, '\0');
    out.write(zeros.data(), static_cast<std::streamsize>(pad));
    offset += pad;
    const std::string& raw = t->raw_data();
    const uint64_t length = raw.size();
    out.write(raw.data(), static_cast<std::streamsize>(length));
    t->clear_raw_data();
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char* k, const std::string& v) {
      auto* e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", "model.onnx.data");
    add("offset", std::to_string(offset));
    add("length", std::to_string(length));
    entry["offset"] = offset;
    entry["length"] = length;
    offset += length;
  }
  if (!out)
    throw std::runtime_error(dataFile.string() + ": cannot write (check the folder and free space)");
  out.close();
  auto meta = [&](const char* k, const std::string& v) {
    auto* p = model.add_metadata_props();
    p->set_key(k);
    p->set_value(v);
  };
  const std::string sha = store::sha256File(dataFile);
  meta("dynqual.weights.recipe", rec.dump());
  meta("dynqual.weights.sha256", sha);
  // The same facts beside the model for readers without an ONNX parser (decoder_weights.py).
  nlohmann::json manifest = {{"file", "model.onnx.data"}, {"bytes", offset}, {"sha256", sha}, {"recipe", rec}};
  std::ofstream m(dir / "model.onnx.data.json", std::ios::trunc);
  m << manifest.dump(1) << "\n";
  if (!m)
    throw std::runtime_error((dir / "model.onnx.data.json").string() + ": cannot write");
}

} // namespace

void writeDecoder(const DecoderSpec& spec, const fs::path& dir, const DecoderWriteOptions& options) {
  WeightGen w = newGen(spec);
  onnx::ModelProto model = buildDecoder(spec, w);
  fs::create_directories(dir);
  if (options.externalData && !options.dataSets) {
    externalizeWeights(model, recipe(spec, w), dir); // the in-memory weights are not needed again
    writeModel(model, dir / "model.onnx");
    return;
  }
  if (options.externalData) {
    onnx::ModelProto stored = model;
    externalizeWeights(stored, recipe(spec, w), dir);
    writeModel(stored, dir / "model.onnx");
  } else {
    writeModel(model, dir / "model.onnx");
  }
  if (!options.dataSets)
    return;

  auto inSpecs = onnxio::describeInputs(model);
  auto outSpecs = onnxio::describeOutputs(model);
  auto shapes = decoderDataSetShapes();
  for (size_t k = 0; k < shapes.size(); ++k) {
    fs::path set = dir / ("test_data_set_" + std::to_string(k));
    fs::create_directories(set);
    auto inputs = decoderInputs(spec, shapes[k][0], shapes[k][1], shapes[k][2], spec.seed + 1000 + k);
    std::vector<Tensor> outputs;
    try {
      outputs = reference::evaluate(model, inputs);
    } catch (const std::exception& e) {
      throw std::runtime_error(set.string() + ": the CPU reference rejected the generated model: " + e.what());
    }
    for (size_t i = 0; i < inputs.size(); ++i)
      onnxio::writeTensorFile(set / ("input_" + std::to_string(i) + ".pb"), inputs[i], inSpecs[i].name);
    for (size_t i = 0; i < outputs.size(); ++i)
      onnxio::writeTensorFile(set / ("output_" + std::to_string(i) + ".pb"), outputs[i], outSpecs[i].name);
  }
}

} // namespace dynqual::modelgen
