// The decode loop of dq-bench generate on the sim: the token ids it generates (arg_max on the
// device, present KV fed back on the device) equal those of a step-by-step greedy decode through
// the independent CPU reference (harness/lib/reference), which gets the whole past KV from the
// host each step and picks the next token on the host.
#include "../CompileBridge.h"

#include "Generate.h"
#include "dynqual/modelgen/DecoderModel.h"
#include "dynqual/reference/Interpreter.h"
#include "dq/runtime/ProgramIO.h"
#include "dq/runtime/SimDevice.h"

#include <gtest/gtest.h>

#include <unistd.h>

namespace fs = std::filesystem;
using namespace dynqual;

namespace {

fs::path compileToTemp(const onnx::ModelProto& model, const std::string& name,
                       const std::string& pipeline = "production") {
  fs::path dir = fs::temp_directory_path() / ("dynqual-generate-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::path artifact = dir / (name + ".dqp");
  cli::compileArtifact(model, pipeline, artifact);
  return artifact;
}

// Greedy decode through the reference: run the whole step, take the first maximum of the last
// position's logits on the host, feed the presents back as the pasts.
std::vector<int64_t> referenceTokens(const onnx::ModelProto& model, const modelgen::DecoderSpec& spec,
                                     const std::vector<int64_t>& prompt, int gen, DType kvType) {
  const int64_t D = spec.hidden / spec.heads;
  std::vector<Tensor> inputs{Tensor::fromInts(DType::Int64, {1, static_cast<int64_t>(prompt.size())}, prompt)};
  for (int64_t l = 0; l < 2 * spec.layers; ++l)
    inputs.push_back(Tensor::fromDoubles(kvType, {1, spec.kvHeads, 0, D}, {}));
  std::vector<int64_t> tokens;
  for (int step = 0; step < gen; ++step) {
    std::vector<Tensor> out = reference::evaluate(model, inputs);
    const std::vector<double> logits = out[0].toDoubles();
    const int64_t seq = out[0].dims()[1], V = spec.vocab;
    int64_t best = 0;
    for (int64_t v = 1; v < V; ++v)
      if (logits[static_cast<size_t>((seq - 1) * V + v)] > logits[static_cast<size_t>((seq - 1) * V + best)])
        best = v;
    tokens.push_back(best);
    inputs.assign(1, Tensor::fromInts(DType::Int64, {1, 1}, {best}));
    inputs.insert(inputs.end(), out.begin() + 1, out.end());
  }
  return tokens;
}

void expectSameTokensAsReference(const modelgen::DecoderSpec& spec, DType kvType, const std::string& name) {
  onnx::ModelProto model = modelgen::buildDecoder(spec);
  fs::path artifact = compileToTemp(model, name);
  dq::rt::Program program = dq::rt::readProgram(artifact.string());
  dq::bench::DecoderLayout layout = dq::bench::decoderLayout(program);
  ASSERT_EQ(layout.vocab, spec.vocab);
  ASSERT_EQ(layout.past.size(), static_cast<size_t>(2 * spec.layers));

  dq::rt::SimDevice dev;
  dq::rt::ResidentProgram resident(program, dev, artifact.string());
  const std::vector<int64_t> prompt = dq::bench::promptTokens(spec.vocab, 5, 7);
  const int gen = 6;
  dq::bench::GenerationRun run = dq::bench::generate(resident, dev, layout, prompt, gen);
  EXPECT_EQ(run.tokens, referenceTokens(model, spec, prompt, gen, kvType));
  ASSERT_EQ(run.stepCounters.size(), static_cast<size_t>(gen - 1));
  ASSERT_EQ(run.times.tokenOnHostMs.size(), static_cast<size_t>(gen));
  for (const auto& c : run.stepCounters) {
    // Constants stay resident and inputs are already on the device: a step uploads nothing.
    EXPECT_EQ(c.h2dBytes, 0u);
    EXPECT_EQ(c.h2dTransfers, 0u);
  }
  // The constants are uploaded once, during the first prefill (the prompt ids before it).
  EXPECT_EQ(run.prefillCounters.h2dBytes, resident.constantBytes());
  EXPECT_GT(resident.constantBytes(), 0u);
  // A second generation reuses the resident constants and gives the same tokens.
  dq::bench::GenerationRun again = dq::bench::generate(resident, dev, layout, prompt, gen);
  EXPECT_EQ(again.tokens, run.tokens);
  EXPECT_EQ(again.prefillCounters.h2dBytes, 0u); // the constants stayed resident
  // Everything a generation allocated is freed; only the resident constants stay.
  EXPECT_EQ(dev.liveAllocations(), resident.constantCount());
  EXPECT_GT(resident.constantCount(), 0u);
  fs::remove_all(artifact.parent_path());
}

/// Two layers, grouped-query attention (4 heads on 1 KV head), an MLP width of its own, fp16.
modelgen::DecoderSpec smallFloat16Decoder() {
  modelgen::DecoderSpec spec;
  spec.layers = 2;
  spec.hidden = 32;
  spec.heads = 4;
  spec.kvHeads = 1;
  spec.vocab = 40;
  spec.mlp = 24;
  spec.float16 = true;
  spec.seed = 11;
  return spec;
}

} // namespace

TEST(Generate, DecodeLoopOnSimMatchesStepwiseReferenceDecode) {
  modelgen::DecoderSpec spec;
  spec.layers = 2;
  spec.hidden = 16;
  spec.heads = 4;
  spec.kvHeads = 2;
  spec.vocab = 48;
  spec.seed = 3;
  expectSameTokensAsReference(spec, DType::Float, "decoder_f32");
}

TEST(Generate, Float16DecoderWithMlpWidthMatchesStepwiseReferenceDecode) {
  const modelgen::DecoderSpec spec = smallFloat16Decoder();
  expectSameTokensAsReference(spec, DType::Float16, "decoder_f16");
}

TEST(Generate, ElementwiseFusionLaunchesFewerKernelsPerStepWithTheSameTokens) {
  // The production pipeline against the same spec without dq-fuse-elementwise. Per layer two
  // RMSNorm tails (add eps, sqrt, div, mul weight: 4 kernels -> 1, 3 fewer each) and one SiLU
  // (sigmoid, mul, mul up: 3 -> 1, 2 fewer), plus the final norm's tail: 2 * (3 + 3 + 2) + 3 = 19
  // fewer launches per decode step; the fused steps round as the separate kernels do, so the
  // generated tokens are the same.
  const modelgen::DecoderSpec spec = smallFloat16Decoder();
  onnx::ModelProto model = modelgen::buildDecoder(spec);
  const std::string production = cli::pipelineSpecText("production");
  const std::string fusion = "dq-fuse-elementwise, ";
  const size_t at = production.find(fusion);
  ASSERT_NE(at, std::string::npos) << production;
  const std::string unfused = std::string(production).erase(at, fusion.size());
  std::vector<int64_t> tokens[2];
  uint64_t launches[2] = {0, 0};
  fs::path dir;
  for (int fused = 0; fused < 2; ++fused) {
    fs::path artifact =
        compileToTemp(model, fused ? "decoder_fused" : "decoder_unfused", fused ? "production" : unfused);
    dir = artifact.parent_path();
    dq::rt::Program program = dq::rt::readProgram(artifact.string());
    dq::bench::DecoderLayout layout = dq::bench::decoderLayout(program);
    dq::rt::SimDevice dev;
    dq::rt::ResidentProgram resident(program, dev, artifact.string());
    const std::vector<int64_t> prompt = dq::bench::promptTokens(spec.vocab, 5, 7);
    dq::bench::GenerationRun run = dq::bench::generate(resident, dev, layout, prompt, 4);
    ASSERT_FALSE(run.stepCounters.empty());
    tokens[fused] = run.tokens;
    launches[fused] = run.stepCounters[0].kernelLaunches;
  }
  EXPECT_EQ(launches[0] - launches[1], 19u) << launches[0] << " unfused, " << launches[1] << " fused";
  EXPECT_EQ(tokens[1], tokens[0]);
  fs::remove_all(dir);
}

TEST(Generate, RejectsAProgramThatIsNotADecoderStep) {
  dq::rt::Program p;
  p.inputs.push_back({"x", dq::rt::DType::F32, {-1}});
  p.outputs.push_back({"y", dq::rt::DType::F32, {-1}});
  try {
    dq::bench::decoderLayout(p);
    FAIL() << "expected an unsupported error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported: generate needs a decoder step program: input 0 'x'"),
              std::string::npos)
        << e.what();
  }
}

TEST(Generate, PromptTokensAreSplitMix64ModuloVocab) {
  // SplitMix64 of seed 0: the first output is 0xe220a8397b1dcdaf (Steele, Lea, Flood 2014).
  const uint64_t first = 0xe220a8397b1dcdafULL;
  EXPECT_EQ(dq::bench::promptTokens(1000, 1, 0), std::vector<int64_t>{static_cast<int64_t>(first % 1000)});
  EXPECT_EQ(dq::bench::promptTokens(7, 4, 9).size(), 4u);
}
