// Sidecar recipes (SidecarRecipe.h) and `dynqual bench sidecar-recipe`.
#include "SidecarRecipe.h"

#include "Commands.h"

#include "dq/runtime/ProgramIO.h"
#include "dynqual/store/Fingerprint.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

namespace fs = std::filesystem;
using nlohmann::json;

namespace dynqual::cli {

namespace {

std::string readAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in)
    throw std::runtime_error(p.string() + ": cannot be read");
  std::string s;
  in.seekg(0, std::ios::end);
  s.resize(static_cast<size_t>(in.tellg()));
  in.seekg(0);
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  if (!in)
    throw std::runtime_error(p.string() + ": cannot be read");
  return s;
}

uint64_t fnv1a64(const uint8_t* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

} // namespace

SidecarRecipeSummary writeSidecarRecipe(const fs::path& programPath, const fs::path& modelDir, uint64_t maxInline) {
  dq::rt::Program program = dq::rt::readProgram(programPath.string());
  const fs::path manifestPath = modelDir / "model.onnx.data.json";
  json manifest = json::parse(readAll(manifestPath));
  const fs::path dataPath = modelDir / manifest.at("file").get<std::string>();
  const std::string data = readAll(dataPath);
  if (data.size() != manifest.at("bytes").get<uint64_t>())
    throw std::runtime_error(dataPath.string() + ": " + std::to_string(data.size()) + " bytes, " +
                             manifestPath.string() + " records " + manifest.at("bytes").dump());
  // Weights tensors by (length, FNV of their bytes); a candidate is confirmed byte for byte.
  std::multimap<std::pair<uint64_t, uint64_t>, uint64_t> tensors;
  for (const auto& t : manifest.at("recipe").at("tensors")) {
    const uint64_t off = t.at("offset").get<uint64_t>(), len = t.at("length").get<uint64_t>();
    tensors.emplace(std::make_pair(len, fnv1a64(reinterpret_cast<const uint8_t*>(data.data()) + off, len)), off);
  }
  std::vector<size_t> order(program.constants.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return program.constants[a].offset < program.constants[b].offset; });

  SidecarRecipeSummary sum;
  sum.sidecarBytes = program.constantData.size();
  sum.constants = program.constants.size();
  std::string inlined;
  json segments = json::array();
  uint64_t covered = 0;
  for (size_t i : order) {
    const dq::rt::ConstantSpec& c = program.constants[i];
    if (c.offset < covered)
      continue; // shares bytes with the constant before it; those are already placed
    const uint8_t* bytes = program.constantData.data() + c.offset;
    auto [lo, hi] = tensors.equal_range({c.size, fnv1a64(bytes, c.size)});
    std::optional<uint64_t> from;
    for (auto it = lo; it != hi && !from; ++it)
      if (std::equal(bytes, bytes + c.size, reinterpret_cast<const uint8_t*>(data.data()) + it->second))
        from = it->second;
    if (from && c.size > 0) {
      segments.push_back({{"offset", c.offset}, {"length", c.size}, {"data_offset", *from}});
      sum.fromWeights += c.size;
    } else if (c.size > 0) {
      segments.push_back({{"offset", c.offset}, {"length", c.size}, {"inline_offset", inlined.size()}});
      inlined.append(reinterpret_cast<const char*>(bytes), c.size);
    }
    covered = c.offset + c.size;
  }
  sum.inlineBytes = inlined.size();
  if (sum.inlineBytes > maxInline)
    throw std::runtime_error(fmt::format("unsupported: {} bytes of {}'s constants are not whole tensors of {} "
                                         "(the compiler derived them from the weights); a recipe would carry them "
                                         "inline (limit {} bytes)",
                                         sum.inlineBytes, programPath.string(), dataPath.string(), maxInline));
  char fnv[17];
  std::snprintf(fnv, sizeof fnv, "%016llx",
                static_cast<unsigned long long>(fnv1a64(program.constantData.data(), program.constantData.size())));
  json recipe = {
      {"format", "dynqual-sidecar-recipe"},
      {"version", 1},
      {"sidecar", programPath.filename().string() + ".bin"},
      {"bytes", sum.sidecarBytes},
      {"fnv1a64", fnv},
      {"weights", {{"file", dataPath.filename().string()}, {"bytes", data.size()}, {"sha256", manifest.at("sha256")}}},
      {"inline", programPath.filename().string() + ".bin.inline"},
      {"segments", segments}};
  const fs::path base = programPath.string() + ".bin";
  std::ofstream(base.string() + ".inline", std::ios::binary | std::ios::trunc)
      .write(inlined.data(), static_cast<std::streamsize>(inlined.size()));
  std::ofstream out(base.string() + ".recipe.json", std::ios::trunc);
  out << recipe.dump(1) << "\n";
  if (!out)
    throw std::runtime_error(base.string() + ".recipe.json: cannot write");
  return sum;
}

void addSidecarRecipeCommand(CLI::App* bench) {
  auto* cmd = bench->add_subcommand(
      "sidecar-recipe", "Write PROGRAM.dqp.bin.recipe.json and .inline: how scripts/assemble_sidecar.py rebuilds the\n"
                        "constants sidecar from MODEL_DIR's regenerated weights (make-model --external-data), so the\n"
                        "sidecar never travels (docs/devices.md).");
  auto program = std::make_shared<std::string>();
  auto model = std::make_shared<std::string>();
  cmd->add_option("PROGRAM", *program, "compiled program (.dqp, with its .dqp.bin)")->required();
  cmd->add_option("MODEL_DIR", *model, "model folder with model.onnx.data and model.onnx.data.json")->required();
  cmd->callback([program, model] {
    try {
      SidecarRecipeSummary s = writeSidecarRecipe(*program, *model);
      std::cout << fmt::format("{}.bin: {} bytes, {} constants: {} bytes from the weights, {} inline\n", *program,
                               s.sidecarBytes, s.constants, s.fromWeights, s.inlineBytes);
      setExitCode(0);
    } catch (const std::exception& e) {
      std::cerr << "dynqual bench sidecar-recipe: " << e.what() << "\n";
      setExitCode(2);
    }
  });
}

} // namespace dynqual::cli
