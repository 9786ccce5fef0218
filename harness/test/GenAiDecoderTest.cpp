// The builder-layout decoder of make-model genai-decoder: its names and opsets, and outputs the
// reference computes for it.
#include "dynqual/modelgen/GenAiDecoder.h"
#include "dynqual/onnx/GraphSignature.h"
#include "dynqual/reference/Interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

using namespace dynqual;

namespace {

std::map<std::string, int> opCounts(const onnx::ModelProto& m) {
  std::map<std::string, int> n;
  for (const auto& node : m.graph().node())
    ++n[(node.domain().empty() ? "" : node.domain() + ".") + node.op_type()];
  return n;
}

} // namespace

TEST(GenAiDecoder, FollowsTheBuildersLayout) {
  modelgen::GenAiDecoderSpec s = modelgen::genAiDecoderPreset("tiny");
  const onnx::ModelProto m = modelgen::buildGenAiDecoder(s);
  std::map<std::string, int64_t> opsets;
  for (const auto& o : m.opset_import())
    opsets[o.domain()] = o.version();
  EXPECT_EQ(opsets, (std::map<std::string, int64_t>{{"", 21}, {"com.microsoft", 1}}));
  std::vector<std::string> ins, outs;
  for (const auto& v : m.graph().input())
    ins.push_back(v.name());
  for (const auto& v : m.graph().output())
    outs.push_back(v.name());
  EXPECT_EQ(ins,
            (std::vector<std::string>{"input_ids", "attention_mask", "past_key_values.0.key", "past_key_values.0.value",
                                      "past_key_values.1.key", "past_key_values.1.value"}));
  EXPECT_EQ(outs, (std::vector<std::string>{"logits", "present.0.key", "present.0.value", "present.1.key",
                                            "present.1.value"}));
  // Per layer: packed QKV, o, gate, up, down (5 MatMulNBits), one GQA, the input norm (Simplified
  // on layer 0, Skip after) and the post-attention Skip; then the final Skip norm and the lm_head.
  const auto n = opCounts(m);
  EXPECT_EQ(n.at("com.microsoft.MatMulNBits"), 2 * 5 + 1);
  EXPECT_EQ(n.at("com.microsoft.GroupQueryAttention"), 2);
  EXPECT_EQ(n.at("SimplifiedLayerNormalization"), 1);
  EXPECT_EQ(n.at("com.microsoft.SkipSimplifiedLayerNormalization"), 2 + 1 + 1);
  // The attention-mask subgraph: seqlens_k and total_sequence_length come from attention_mask.
  EXPECT_EQ(n.at("ReduceSum"), 1);
  EXPECT_EQ(n.at("Shape"), 1);
  std::set<std::string> names, values;
  for (const auto& node : m.graph().node()) {
    names.insert(node.name());
    for (const auto& o : node.output())
      values.insert(o);
  }
  // The value names other tools look up: seqlens_k, total_sequence_length, the residual stream.
  for (const char* value : {"/model/attn_mask_reformat/attn_mask_subgraph/Sub/Cast/output_0",
                            "/model/attn_mask_reformat/attn_mask_subgraph/Gather/Cast/output_0",
                            "/model/layers.1/post_attention_layernorm/output_3"})
    EXPECT_TRUE(values.count(value)) << value;
  for (const char* name : {"/model/embed_tokens/Gather", "/model/layers.0/input_layernorm/LayerNorm",
                           "/model/layers.1/input_layernorm/SkipLayerNorm", "/model/layers.0/attn/qkv_proj/MatMul",
                           "/model/layers.0/attn/GroupQueryAttention", "/model/layers.1/mlp/down_proj/MatMul",
                           "/model/attn_mask_reformat/attn_mask_subgraph/ReduceSum",
                           "/model/layers.2/final_norm_layernorm/SkipLayerNorm", "/lm_head/MatMul"})
    EXPECT_TRUE(names.count(name)) << name;
}

// A decode step after 4 cached tokens and the same step with the mask's last position 0 (one
// token fewer in the row): the logits must change, or seqlens_k would not reach the attention.
TEST(GenAiDecoder, TheMaskDecidesWhatAttentionReads) {
  modelgen::GenAiDecoderSpec s = modelgen::genAiDecoderPreset("tiny");
  const onnx::ModelProto m = modelgen::buildGenAiDecoder(s);
  std::vector<Tensor> full = modelgen::genAiDecoderInputs(s, 1, 1, 4, {}, 7);
  std::vector<Tensor> shorter = modelgen::genAiDecoderInputs(s, 1, 1, 4, {4}, 7);
  EXPECT_EQ(full[1].toInts(), (std::vector<int64_t>{1, 1, 1, 1, 1}));
  EXPECT_EQ(shorter[1].toInts(), (std::vector<int64_t>{1, 1, 1, 1, 0}));
  const auto a = reference::evaluate(m, full), b = reference::evaluate(m, shorter);
  ASSERT_EQ(a[0].dims(), (std::vector<int64_t>{1, 1, 96}));
  double diff = 0;
  for (int64_t i = 0; i < a[0].numel(); ++i) {
    ASSERT_TRUE(std::isfinite(a[0].getDouble(i)));
    diff = std::max(diff, std::fabs(a[0].getDouble(i) - b[0].getDouble(i)));
  }
  EXPECT_GT(diff, 1e-3);
  // present holds total_sequence_length = 5 rows either way.
  EXPECT_EQ(a[1].dims(), (std::vector<int64_t>{1, 2, 5, 16}));
}

TEST(GenAiDecoder, UnknownPresetIsNamed) {
  try {
    modelgen::genAiDecoderPreset("huge");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown genai-decoder preset 'huge'"), std::string::npos);
  }
}
