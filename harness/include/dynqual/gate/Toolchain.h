#pragma once
// What a build of dynqual depends on besides its source: the tools that compile it.
#include <string>

namespace dynqual::gate {

/// The tools a revision is built with. Two builds of one commit with equal fingerprints are
/// interchangeable, so the fingerprint is part of the build cache key (docs/gate-builds.md).
struct Toolchain {
  /// The exact text that is hashed: one "name: value" line each, in this order:
  ///   c++: first line of `c++ --version`
  ///   cmake: first line of `cmake --version`
  ///   ninja: `ninja --version`
  ///   mlir: `/usr/lib/llvm-22/bin/llvm-config --version`, else the line of `mlir-opt --version`
  ///         that contains "version"
  ///   build-type: the CMAKE_BUILD_TYPE passed to configure ("" when none)
  ///   env CC, CXX, CFLAGS, CXXFLAGS, LDFLAGS: their values (one line each, "" when unset)
  /// A tool that cannot be run reads "not found".
  std::string description;
  /// SHA-256 of `description`, 64 lowercase hex digits.
  std::string fingerprint;
};

/// Runs the tools listed above (each as a child process, no shell, 30 s limit each) and returns
/// their description and fingerprint for a build of type `buildType`. Never throws for a missing
/// tool (it reads "not found"); throws std::runtime_error only when a process cannot be spawned
/// at all.
Toolchain detectToolchain(const std::string& buildType = "RelWithDebInfo");

/// A toolchain with the given description and its fingerprint (SHA-256 of it); for tests and
/// callers that describe the tools themselves.
Toolchain toolchainFromDescription(const std::string& description);

/// SHA-256 of `data` as 64 lowercase hex digits.
std::string sha256Hex(const std::string& data);

} // namespace dynqual::gate
