// Device probes measured in the same run as a generation benchmark: copy bandwidth and
// empty-kernel launch latency (docs/metrics/decode-limits.md).
#pragma once

#include "dq/runtime/Device.h"

#include <cstdint>

namespace dq::bench {

/// What the probes measured. Bandwidths count bytes read plus bytes written per second.
struct ProbeResult {
  uint64_t copyBytes = 0;           ///< size of one copy
  int copyReps = 0;                 ///< timed copies of each kind
  double memcpyBytesPerSecond = 0;  ///< Device::memcpy, device to device (hipMemcpyAsync on hip)
  double stridedBytesPerSecond = 0; ///< Device::copyStrided on contiguous f32 views (the copy kernel)
  int launchCount = 0;              ///< timed launches
  double launchSeconds = 0;         ///< seconds per launch of `fill` on one element, back to back
  /// The larger of the two copy bandwidths: the tighter (more demanding) bandwidth limit.
  double copyBytesPerSecond() const {
    return memcpyBytesPerSecond > stridedBytesPerSecond ? memcpyBytesPerSecond : stridedBytesPerSecond;
  }
};

/// Copies: one untimed copy of each kind, then `copyReps` timed ones between two synchronizes:
/// bandwidth = 2 * copyBytes * copyReps / seconds. Launches: 10 untimed, then `launchCount`
/// launches of `fill` (one f32 element) between two synchronizes: seconds / launchCount.
/// copyBytes is rounded down to a multiple of 4 (at least 4). Buffers are freed before it
/// returns. Throws RuntimeError from the device (e.g. out of memory for copyBytes).
ProbeResult runProbes(rt::Device &device, uint64_t copyBytes, int copyReps, int launchCount);

} // namespace dq::bench
