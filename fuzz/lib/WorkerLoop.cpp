#include "dynqual/fuzz/WorkerLoop.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <iostream>
#include <new>

namespace fs = std::filesystem;

namespace dynqual::fuzz {

std::string workerRequestLine(uint64_t seed, const fs::path& workDir) {
  return nlohmann::json{{"seed", seed}, {"work_dir", workDir.string()}}.dump();
}

int64_t serveCases(std::istream& in, std::ostream& out, const CaseRequest& base) {
  int64_t served = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty())
      continue;
    ++served;
    nlohmann::json answer;
    std::string seedText;
    try {
      nlohmann::json req = nlohmann::json::parse(line);
      CaseRequest r = base;
      r.seed = req.at("seed").get<uint64_t>();
      r.workDir = req.at("work_dir").get<std::string>();
      seedText = "seed " + std::to_string(r.seed) + ": ";
      answer = toJson(runCase(r));
    } catch (const std::bad_alloc&) {
      std::cerr << "dynqual fuzz-worker: " << seedText << "out of memory (std::bad_alloc)" << std::endl;
      _exit(kWorkerOutOfMemoryExit);
    } catch (const exec::ExecError& e) {
      // runCase lets only Stage::Infra out; `dynqual fuzz-case` reports any as infrastructure.
      answer = {{"infra", e.what()}};
    } catch (const std::exception& e) {
      answer = {{"case_error", seedText + e.what()}};
    }
    out << answer.dump() << "\n" << std::flush;
  }
  return served;
}

} // namespace dynqual::fuzz
