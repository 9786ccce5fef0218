#pragma once
// Content hashes and descriptions of the machine and build a run executes on.
#include "dynqual/store/Records.h"

#include <filesystem>
#include <string>
#include <vector>

namespace dynqual::store {

/// SHA-256 (FIPS 180-4) of `data`, as 64 lowercase hex digits.
std::string sha256Hex(const std::string& data);

/// SHA-256 hex of a file's bytes. Throws std::runtime_error naming the file when it cannot be
/// read.
std::string sha256File(const std::filesystem::path& file);

/// Describes this machine: CPU model and logical cores (/proc/cpuinfo), MemTotal (/proc/meminfo,
/// bytes), kernel and distribution (uname, /etc/os-release), and an NVIDIA GPU name and driver
/// when /proc/driver/nvidia reports one. Fields it cannot read are "unknown" (or 0), never an
/// error. Fills `fingerprint`.
Machine probeMachine();

/// Describes the running build: git revision and dirty flag of `sourceDir` ("unknown" when git
/// or the folder is missing), the C++ compiler that built it, the dynqual version, and the
/// sha256 and size of each existing file in `artifacts`. Fills `key`.
Build probeBuild(const std::filesystem::path& sourceDir, const std::string& dynqualVersion,
                 const std::vector<std::filesystem::path>& artifacts);

/// Current UTC time as ISO 8601 with seconds ("2026-01-02T03:04:05Z").
std::string utcNow();

/// A fresh run key: sha256 hex (first 32 digits) of host name, pid, wall-clock nanoseconds and
/// 64 random bits, so runs recorded in parallel on many machines never collide.
std::string newRunKey();

} // namespace dynqual::store
