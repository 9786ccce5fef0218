// NumPy .npy files: a protobuf-free tensor format for moving inputs and outputs to and from a
// machine that runs programs (dq-run). The subset read and written is documented in
// docs/devices.md ("The npy subset").
#pragma once

#include "dq/runtime/HostTensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dq::rt {

/// Parses .npy bytes: format version 1.0, 2.0 or 3.0; C order (fortran_order False); little-endian
/// or byte-order-free descr of f4 f8 f2 i1 u1 i4 i8 b1 (the runtime dtypes except bf16, which
/// NumPy has no type for). Throws RuntimeError starting with `name` on anything else, on a
/// truncated file or on trailing bytes.
HostTensor parseNpy(const std::vector<uint8_t> &bytes, const std::string &name);
/// Reads and parses the file at `path` (errors start with the path).
HostTensor readNpy(const std::string &path);
/// Encodes `t` as a version 1.0 .npy file (header padded to 64 bytes). Throws RuntimeError for
/// bf16.
std::vector<uint8_t> serializeNpy(const HostTensor &t);
/// Writes `t` to `path` through `path.tmp` and a rename (no partial files).
void writeNpy(const std::string &path, const HostTensor &t);

} // namespace dq::rt
