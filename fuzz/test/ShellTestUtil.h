#pragma once
// Helpers of the fuzz tests that drive the dynqual binary: a shell command with its exit code and
// merged output, and a scratch folder removed at the end of the test.
#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <stdlib.h>
#include <sys/wait.h>

namespace fuzztest {

struct Shell {
  int code = -1;
  std::string out; ///< stdout and stderr together
};

/// Runs `cmd` through /bin/sh with stderr merged into stdout.
inline Shell sh(const std::string& cmd) {
  Shell r;
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen((cmd + " 2>&1").c_str(), "r"), pclose);
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p.get())) > 0)
    r.out.append(buf.data(), n);
  int status = pclose(p.release());
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

/// A fresh folder /tmp/PREFIX-XXXXXX, removed with everything in it on destruction.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& prefix) {
    std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

} // namespace fuzztest
