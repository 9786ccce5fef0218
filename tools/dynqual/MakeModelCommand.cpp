// `dynqual make-model decoder ...`: writes a generated model folder (model.onnx plus data sets
// whose outputs come from the CPU reference).
#include "Commands.h"

#include "dynqual/modelgen/ContribCases.h"
#include "dynqual/modelgen/DecoderModel.h"
#include "dynqual/modelgen/GenAiDecoder.h"
#include "dynqual/modelgen/ReferenceDataSets.h"
#include "dynqual/modelgen/ReferenceOutputs.h"

#include <filesystem>
#include <iostream>

namespace dynqual::cli {

void addMakeModelCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("make-model", "Write a generated ONNX model folder with reference data sets.");
  cmd->require_subcommand(1);
  auto* dec = cmd->add_subcommand(
      "decoder", "Decoder step model: explicit past/present KV, dynamic batch, sequence and past length,\n"
                 "random weights from --seed; test_data_set_0..2 with outputs from the CPU reference.");
  struct Opts {
    modelgen::DecoderSpec spec;
    modelgen::DecoderWriteOptions write;
    std::string dtype = "float32";
    bool noDataSets = false;
    std::string out;
  };
  auto o = std::make_shared<Opts>();
  dec->add_option("--layers", o->spec.layers, "decoder layers")->capture_default_str();
  dec->add_option("--hidden", o->spec.hidden, "hidden size (a multiple of --heads)")->capture_default_str();
  dec->add_option("--heads", o->spec.heads, "query heads (a multiple of --kv-heads)")->capture_default_str();
  dec->add_option("--kv-heads", o->spec.kvHeads, "key/value heads")->capture_default_str();
  dec->add_option("--vocab", o->spec.vocab, "vocabulary size")->capture_default_str();
  dec->add_option("--seed", o->spec.seed, "seed of the weights and data sets")->capture_default_str();
  dec->add_option("--mlp", o->spec.mlp, "MLP width (0 = 2 * hidden)")->capture_default_str();
  dec->add_option("--dtype", o->dtype, "element type of weights, KV cache and logits")
      ->check(CLI::IsMember({"float32", "float16", "fp32", "fp16"}))
      ->capture_default_str();
  dec->add_flag("--external-data", o->write.externalData,
                "weights in model.onnx.data (ONNX external data) with their recipe and sha256 in the model's "
                "metadata, so scripts/decoder_weights.py can regenerate them elsewhere");
  dec->add_flag("--no-data-sets", o->noDataSets, "write model.onnx only (no reference data sets)");
  dec->add_option("-o,--output", o->out, "model folder to write (created)")->required();
  dec->callback([o] {
    try {
      o->spec.float16 = o->dtype == "float16" || o->dtype == "fp16";
      o->write.dataSets = !o->noDataSets;
      modelgen::writeDecoder(o->spec, o->out, o->write);
      std::cout << "wrote " << o->out << ": " << modelgen::decoderParameterCount(o->spec) << " parameters ("
                << (o->spec.float16 ? "float16" : "float32") << ")\n";
      setExitCode(0);
    } catch (const std::bad_alloc&) {
      std::cerr << "dynqual make-model decoder: out of memory: the weights of this decoder do not fit; "
                   "use smaller --hidden/--vocab/--layers\n";
      setExitCode(2);
    } catch (const std::exception& e) {
      std::cerr << "dynqual make-model decoder: " << e.what() << "\n";
      setExitCode(2);
    }
  });

  auto* sets = cmd->add_subcommand(
      "data-sets", "Add test_data_set_K folders to an existing model folder: seeded inputs, outputs from\n"
                   "the CPU reference. One set per --dims binding, or --sets sets of a static model.");
  struct SetOpts {
    std::string dir;
    std::vector<std::string> dims;
    int count = 3;
    uint64_t seed = 1;
  };
  auto so = std::make_shared<SetOpts>();
  sets->add_option("DIR", so->dir, "model folder holding model.onnx")->required();
  sets->add_option("--dims", so->dims, "values of the dynamic dims of one set, e.g. a=2,b=3 (repeatable)");
  sets->add_option("--sets", so->count, "number of sets when no --dims is given")->capture_default_str();
  sets->add_option("--seed", so->seed, "seed of set 0; set K uses seed + K")->capture_default_str();
  sets->callback([so] {
    try {
      std::vector<modelgen::LabelBinding> bindings;
      for (const auto& d : so->dims)
        bindings.push_back(modelgen::parseLabelBinding(d));
      if (bindings.empty()) {
        if (so->count < 1)
          throw UsageError("--sets must be >= 1");
        bindings.resize(static_cast<std::size_t>(so->count));
      }
      int n = modelgen::writeReferenceDataSets(so->dir, bindings, so->seed);
      std::cout << "wrote " << n << " data sets into " << so->dir << "\n";
      setExitCode(0);
    } catch (const std::exception& e) {
      std::cerr << "dynqual make-model data-sets: " << e.what() << "\n";
      setExitCode(2);
    }
  });

  auto* exp = cmd->add_subcommand(
      "expected", "Write output_N.pb of every test_data_set_K of a model folder from the CPU reference\n"
                  "(model.onnx and the input_N.pb files must exist).");
  auto dir = std::make_shared<std::string>();
  exp->add_option("dir", *dir, "model folder")->required();
  exp->callback([dir] {
    try {
      int n = modelgen::writeReferenceOutputs(*dir);
      std::cout << "wrote the outputs of " << n << " data sets\n";
      setExitCode(0);
    } catch (const std::exception& e) {
      std::cerr << "dynqual make-model expected: " << e.what() << "\n";
      setExitCode(2);
    }
  });

  auto* contrib = cmd->add_subcommand(
      "contrib-cases", "Write the onnxruntime contrib-op conformance table (docs/contrib-ops.md): one folder per\n"
                       "case (a one-node model with dynamic dims), data sets with outputs from the CPU reference.");
  struct ContribOpts {
    std::string out, op;
    uint64_t seed = 1;
  };
  auto co = std::make_shared<ContribOpts>();
  contrib->add_option("-o,--output", co->out, "suite folder to write (one subfolder per case)")->required();
  contrib->add_option("--op", co->op, "only this op's cases (e.g. MatMulNBits)");
  contrib->add_option("--seed", co->seed, "seed of the weights and inputs")->capture_default_str();
  contrib->callback([co] {
    try {
      const auto cases = modelgen::contribConformanceCases(co->seed, co->op);
      std::size_t sets = 0;
      for (std::size_t i = 0; i < cases.size(); ++i) {
        modelgen::writeContribCase(cases[i], std::filesystem::path(co->out) / cases[i].name);
        sets += cases[i].inputSets.size();
        if ((i + 1) % 50 == 0)
          std::cerr << "make-model contrib-cases: " << i + 1 << " of " << cases.size() << " cases written\n";
      }
      std::cout << "wrote " << cases.size() << " cases (" << sets << " data sets) into " << co->out << "\n";
      setExitCode(0);
    } catch (const std::exception& e) {
      std::cerr << "dynqual make-model contrib-cases: " << e.what() << "\n";
      setExitCode(2);
    }
  });

  auto* l2 = cmd->add_subcommand(
      "hipep-l2", "Write hip-ep's single-op L2 models at Llama-3-8B layer shapes (fp16):\n"
                  "GroupQueryAttention_seq256 and MatMulNBits_o_seq128, one folder each, with a reference data set.");
  struct L2Opts {
    std::string out;
    std::vector<std::string> names;
    uint64_t seed = 1;
  };
  auto lo = std::make_shared<L2Opts>();
  l2->add_option("-o,--output", lo->out, "suite folder to write (one subfolder per model)")->required();
  l2->add_option("--name", lo->names, "only these models (repeatable; default: both)")
      ->check(CLI::IsMember(modelgen::hipEpL2Names()));
  l2->add_option("--seed", lo->seed, "seed of the weights and inputs")->capture_default_str();
  l2->callback([lo] {
    try {
      const auto names = lo->names.empty() ? modelgen::hipEpL2Names() : lo->names;
      for (const auto& name : names) {
        std::cerr << "make-model hipep-l2: " << name << " (the reference computes its outputs)\n";
        modelgen::writeContribCase(modelgen::hipEpL2Case(name, lo->seed), std::filesystem::path(lo->out) / name);
      }
      std::cout << "wrote " << names.size() << " models into " << lo->out << "\n";
      setExitCode(0);
    } catch (const std::exception& e) {
      std::cerr << "dynqual make-model hipep-l2: " << e.what() << "\n";
      setExitCode(2);
    }
  });

  auto* genai = cmd->add_subcommand(
      "genai-decoder", "An int4 decoder laid out as onnxruntime GenAI's model builder writes one (MatMulNBits,\n"
                       "GroupQueryAttention with rotary, the simplified layer norms, the attention-mask subgraph),\n"
                       "random weights quantized blockwise; a prompt, a decode and a padded-batch data set.");
  struct GenAiOpts {
    std::string preset = "tiny", dtype = "float32", out;
    bool asymmetric = false;
    uint64_t seed = 1;
  };
  auto go = std::make_shared<GenAiOpts>();
  genai->add_option("--preset", go->preset, "size: tiny (2 layers, hidden 64, vocab 96)")
      ->check(CLI::IsMember({"tiny"}))
      ->capture_default_str();
  genai->add_option("--dtype", go->dtype, "float32 I/O (the builder's CPU flavour) or float16 (its GPU flavour)")
      ->check(CLI::IsMember({"float32", "float16", "fp32", "fp16"}))
      ->capture_default_str();
  genai->add_flag("--asymmetric", go->asymmetric, "per-block zero points (packed uint8); default symmetric (zero 8)");
  genai->add_option("--seed", go->seed, "seed of the weights and data sets")->capture_default_str();
  genai->add_option("-o,--output", go->out, "model folder to write (created)")->required();
  genai->callback([go] {
    try {
      modelgen::GenAiDecoderSpec spec = modelgen::genAiDecoderPreset(go->preset);
      spec.float16 = go->dtype == "float16" || go->dtype == "fp16";
      spec.asymmetric = go->asymmetric;
      spec.seed = go->seed;
      modelgen::writeGenAiDecoder(spec, go->out);
      std::cout << "wrote " << go->out << ": genai-decoder " << go->preset << " ("
                << (spec.float16 ? "float16" : "float32") << ", int4 block " << spec.blockSize << ", "
                << (spec.asymmetric ? "asymmetric" : "symmetric") << ")\n";
      setExitCode(0);
    } catch (const std::exception& e) {
      std::cerr << "dynqual make-model genai-decoder: " << e.what() << "\n";
      setExitCode(2);
    }
  });
}

} // namespace dynqual::cli
