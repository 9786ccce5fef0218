#include "dynqual/gate/Toolchain.h"

#include "dynqual/process/Process.h"

#include <openssl/evp.h>

#include <cstdlib>
#include <stdexcept>

namespace dynqual::gate {

std::string sha256Hex(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  if (EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("sha256: OpenSSL digest failed");
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += digits[md[i] >> 4];
    out += digits[md[i] & 15];
  }
  return out;
}

Toolchain toolchainFromDescription(const std::string& description) {
  return Toolchain{description, sha256Hex(description)};
}

namespace {

std::string firstLine(const std::string& s) {
  auto end = s.find('\n');
  std::string line = s.substr(0, end);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
    line.pop_back();
  return line;
}

/// First line of `argv`'s stdout (the first line containing `marker` when given), or "" when it
/// cannot run or fails.
std::string versionOf(const std::vector<std::string>& argv, const std::string& marker = "") {
  process::ProcessSpec spec;
  spec.argv = argv;
  spec.searchPath = true;
  spec.timeoutSeconds = 30;
  spec.env = {{"LC_ALL", std::string("C")}};
  process::ProcessResult r = process::runProcess(spec);
  if (!r.ok())
    return "";
  if (!marker.empty()) {
    size_t at = r.out.find(marker);
    if (at == std::string::npos)
      return firstLine(r.out);
    size_t begin = r.out.rfind('\n', at);
    return firstLine(r.out.substr(begin == std::string::npos ? 0 : begin + 1));
  }
  return firstLine(r.out);
}

std::string orNotFound(std::string s) {
  return s.empty() ? "not found" : s;
}

} // namespace

Toolchain detectToolchain(const std::string& buildType) {
  std::string d;
  d += "c++: " + orNotFound(versionOf({"c++", "--version"})) + "\n";
  d += "cmake: " + orNotFound(versionOf({"cmake", "--version"})) + "\n";
  d += "ninja: " + orNotFound(versionOf({"ninja", "--version"})) + "\n";
  std::string mlir = versionOf({"/usr/lib/llvm-22/bin/llvm-config", "--version"});
  if (mlir.empty())
    mlir = versionOf({"mlir-opt", "--version"}, "version");
  d += "mlir: " + orNotFound(mlir) + "\n";
  d += "build-type: " + buildType + "\n";
  for (const char* var : {"CC", "CXX", "CFLAGS", "CXXFLAGS", "LDFLAGS"}) {
    const char* v = std::getenv(var);
    d += std::string("env ") + var + ": " + (v ? v : "") + "\n";
  }
  return toolchainFromDescription(d);
}

} // namespace dynqual::gate
