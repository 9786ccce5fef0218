// Runs the dynqual binary under test (DYNQUAL_BIN) as a child process for the command tests and
// keeps its exit code, stdout (parsed as JSON when asked) and stderr.
#pragma once

#include "dynqual/process/Process.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace command_test {

struct Outcome {
  int code = -1;
  nlohmann::json doc; ///< stdout parsed; discarded when it is not JSON
  std::string err, out;
};

/// `dynqual ARGS...` with a 120 s limit.
inline Outcome run(std::vector<std::string> args, bool parseJson = true) {
  args.insert(args.begin(), DYNQUAL_BIN);
  dynqual::process::ProcessResult c = dynqual::process::runChild(args, 120);
  Outcome o;
  o.code = c.exitCode;
  o.err = c.err;
  o.out = c.out;
  if (parseJson)
    o.doc = nlohmann::json::parse(c.out, nullptr, false);
  return o;
}

/// a followed by b.
inline std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

} // namespace command_test
