// `dynqual oracle DIR...`: the compiler under test, the CPU reference and onnxruntime CPU on
// every data set, with the three pairwise comparisons (docs/commands/oracle.md).
#include "Commands.h"

#include "dynqual/qualify/OracleCheck.h"
#include "dynqual/run/ModelRun.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

namespace fs = std::filesystem;

namespace dynqual::cli {
namespace {

std::string pairText(const qualify::PairCheck& p) {
  if (!p.error.empty())
    return "error: " + p.error;
  std::ostringstream s;
  s << (p.ok ? "ok" : "FAIL") << " (max-abs " << std::setprecision(3) << p.maxAbs << ", cos " << std::setprecision(6)
    << p.minCosine;
  if (p.outside > 0)
    s << ", " << p.outside << "/" << p.elements << " outside in " << p.worstOutput;
  s << ")";
  return s.str();
}

nlohmann::json pairJson(const qualify::PairCheck& p) {
  return {{"ok", p.ok},          {"outside", p.outside},      {"elements", p.elements},
          {"max_abs", p.maxAbs}, {"min_cosine", p.minCosine}, {"worst_output", p.worstOutput},
          {"error", p.error}};
}

/// The op a case is named after: its one domain-qualified op (or its one op); "(models of several
/// ops)" for a model such as a decoder.
std::string mainOp(const qualify::OracleCase& c) {
  std::vector<std::string> qualified, all;
  std::stringstream in(c.ops);
  std::string op;
  while (std::getline(in, op, ',')) {
    all.push_back(op);
    if (op.find('.') != std::string::npos)
      qualified.push_back(op.substr(op.rfind('.') + 1));
  }
  if (qualified.size() == 1)
    return qualified[0];
  if (qualified.empty() && all.size() == 1)
    return all[0];
  return "(models of several ops)";
}

} // namespace

void addOracleCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "oracle", "Run every data set of each model on the compiler under test (dq) and on onnxruntime's CPU\n"
                "provider (ort:cpu), and compare dq with the stored reference outputs, the reference with\n"
                "ORT, and dq with ORT, under hip-ep's tolerances (allclose, cosine >= 0.999).\n"
                "A reference/ORT disagreement is reported as its own finding, oracle-disagreement.\n"
                "Exit: 0 every case passed, 1 a case failed or disagreed, 2 usage or input error.");
  struct Opts {
    std::vector<std::string> dirs;
    std::string device = "sim", pipeline = "production", format = "text", workDir;
    double timeout = 300;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("dirs", o->dirs, "model folders or folders of model folders (make-model contrib-cases)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--device", o->device, "device of the dq arm")->capture_default_str();
  cmd->add_option("--pipeline", o->pipeline, "pipeline of the dq arm")->capture_default_str();
  cmd->add_option("--format", o->format, "output format")
      ->check(CLI::IsMember({"text", "json", "markdown"}))
      ->capture_default_str();
  cmd->add_option("--timeout", o->timeout, "seconds allowed for each compile and run")->capture_default_str();
  cmd->add_option("--work-dir", o->workDir, "keep artifacts and outputs here (default: a temp folder, removed)");
  cmd->callback([o] {
    try {
      const std::vector<fs::path> models = run::expandModelDirs({o->dirs.begin(), o->dirs.end()});
      qualify::OracleConfig config;
      config.device = o->device;
      config.pipeline = o->pipeline;
      config.timeoutSeconds = o->timeout;
      std::error_code ec;
      const fs::path self = fs::read_symlink("/proc/self/exe", ec);
      config.binDir = ec ? fs::path(".") : self.parent_path();
      const bool keep = !o->workDir.empty();
      config.workDir = keep ? fs::path(o->workDir) : makeTempWorkDir("oracle");
      std::vector<qualify::OracleCase> cases;
      std::vector<std::string> inputErrors;
      for (std::size_t i = 0; i < models.size(); ++i) {
        try {
          for (auto& c : qualify::checkModelAgainstOracles(models[i], config))
            cases.push_back(std::move(c));
        } catch (const std::exception& e) {
          inputErrors.push_back(e.what());
        }
        if ((i + 1) % 25 == 0 || i + 1 == models.size())
          std::cerr << "oracle: " << i + 1 << " of " << models.size() << " models\n";
      }
      if (!keep)
        fs::remove_all(config.workDir, ec);

      // Per op: cases and how many of each comparison passed.
      struct Tally {
        int cases = 0, dqRef = 0, refOrt = 0, dqOrt = 0, pass = 0;
      };
      std::map<std::string, Tally> byOp;
      for (const auto& c : cases) {
        Tally& t = byOp[mainOp(c)];
        ++t.cases;
        t.dqRef += c.dqRef.ok;
        t.refOrt += c.refOrt.ok;
        t.dqOrt += c.dqOrt.ok;
        t.pass += c.verdict == "pass";
      }
      int failed = 0;
      for (const auto& c : cases)
        failed += c.verdict != "pass";

      if (o->format == "json") {
        nlohmann::json j;
        j["models"] = models.size();
        j["cases"] = nlohmann::json::array();
        for (const auto& c : cases)
          j["cases"].push_back({{"model", c.model},
                                {"data_set", c.dataSet},
                                {"ops", c.ops},
                                {"verdict", c.verdict},
                                {"notes", c.notes},
                                {"dq_vs_reference", pairJson(c.dqRef)},
                                {"reference_vs_ort", pairJson(c.refOrt)},
                                {"dq_vs_ort", pairJson(c.dqOrt)},
                                {"dq_error", c.dqError},
                                {"ort_error", c.ortError}});
        for (const auto& [op, t] : byOp)
          j["by_op"][op] = {{"cases", t.cases},
                            {"dq_vs_reference_ok", t.dqRef},
                            {"reference_vs_ort_ok", t.refOrt},
                            {"dq_vs_ort_ok", t.dqOrt},
                            {"passed", t.pass}};
        j["input_errors"] = inputErrors;
        std::cout << j.dump(2) << "\n";
      } else {
        const bool md = o->format == "markdown";
        std::cout << (md ? "| op | cases | dq vs reference | reference vs ORT | dq vs ORT | passed "
                           "|\n|---|---|---|---|---|---|\n"
                         : "op                                cases  dq-ref  ref-ort  dq-ort  passed\n");
        for (const auto& [op, t] : byOp) {
          if (md)
            std::cout << "| " << op << " | " << t.cases << " | " << t.dqRef << " | " << t.refOrt << " | " << t.dqOrt
                      << " | " << t.pass << " |\n";
          else
            std::cout << std::left << std::setw(34) << op << std::right << std::setw(5) << t.cases << std::setw(8)
                      << t.dqRef << std::setw(9) << t.refOrt << std::setw(8) << t.dqOrt << std::setw(8) << t.pass
                      << "\n";
        }
        if (failed > 0) {
          std::cout << "\nCases that did not pass\n";
          for (const auto& c : cases) {
            if (c.verdict == "pass")
              continue;
            std::cout << (md ? "- " : "  ") << c.model << "/" << c.dataSet << ": " << c.verdict << "\n";
            if (!c.dqError.empty())
              std::cout << "      dq: " << c.dqError << "\n";
            if (!c.ortError.empty())
              std::cout << "      ort: " << c.ortError << "\n";
            if (c.dqError.empty())
              std::cout << "      dq vs reference:  " << pairText(c.dqRef) << "\n";
            if (c.ortError.empty())
              std::cout << "      reference vs ORT: " << pairText(c.refOrt) << "\n";
            if (c.dqError.empty() && c.ortError.empty())
              std::cout << "      dq vs ORT:        " << pairText(c.dqOrt) << "\n";
            if (!c.notes.empty())
              std::cout << "      note: " << c.notes << "\n";
          }
        }
        for (const auto& e : inputErrors)
          std::cout << "input error: " << e << "\n";
        std::cout << "\n"
                  << models.size() << " models, " << cases.size() << " cases: " << cases.size() - failed << " passed, "
                  << failed << " did not\n";
      }
      setExitCode(failed > 0 ? 1 : (!inputErrors.empty() ? 2 : 0));
    } catch (const std::exception& e) {
      std::cerr << "dynqual oracle: " << e.what() << "\n";
      setExitCode(2);
    }
  });
}

} // namespace dynqual::cli
