#pragma once
// What the device-on-another-machine tests share: scratch folders, the dynqual binary as a child,
// and damaging a device output on purpose.
#include "dq/runtime/Npy.h"
#include "dynqual/process/Process.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

namespace dynqual::testing_support {

/// An empty folder under the temp directory, named after `what` and this process.
inline std::filesystem::path tempDir(const std::string& what) {
  std::filesystem::path p =
      std::filesystem::temp_directory_path() / ("dynqual-" + what + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

/// `dynqual ARGS...` as a child process (limit 600 s).
inline process::ProcessResult runDynqual(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {DYNQUAL_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return process::runChild(argv, 600);
}

/// `dynqual ARGS... --format json`, recording into `db` (--no-db when empty): the parsed stdout
/// (discarded when it is not JSON), with the exit code and stderr in `code` and `err`.
inline nlohmann::json runDynqualJson(std::vector<std::string> args, const std::filesystem::path& db, int& code,
                                     std::string& err) {
  args.insert(args.end(), {"--format", "json"});
  if (db.empty())
    args.push_back("--no-db");
  else
    args.insert(args.end(), {"--db", db.string()});
  process::ProcessResult c = runDynqual(args);
  code = c.exitCode;
  err = c.err;
  return nlohmann::json::parse(c.out, nullptr, false);
}

/// A fresh copy of the folder `from` at `to` (to damage it).
inline std::filesystem::path copyFolder(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::filesystem::remove_all(to);
  std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
  return to;
}

/// Adds `delta` to every element of the f32 .npy file `file` (a corrupted device output).
inline void shiftNpyValues(const std::filesystem::path& file, float delta) {
  dq::rt::HostTensor t = dq::rt::readNpy(file.string());
  std::vector<float> v = t.values<float>();
  for (float& x : v)
    x += delta;
  dq::rt::writeNpy(file.string(), dq::rt::HostTensor::fromValues<float>(t.dtype, t.dims, v));
}

} // namespace dynqual::testing_support
