// The GPU's measured copy bandwidth, from a plain copy kernel outside the Device interface
// (the peak the kernel microbenchmarks are reported against; docs/devices.md).
#pragma once

#include <cstddef>

namespace dq::rt::bench {

/// Copies `bytes` (a multiple of 16) between two hipMalloc buffers with a grid-stride kernel of
/// 16-byte loads and stores, `reps` times after one warm-up, timed with hip events. Returns
/// (bytes read + bytes written) / seconds per copy, in GB/s (1e9 bytes/s), and writes the time
/// of one copy in ms to `msPerCopy`. Throws std::runtime_error naming the failed HIP call.
double hipCopyPeakGBs(size_t bytes, int reps, double &msPerCopy);

/// Mean time of one empty kernel launch in microseconds, over `launches` back-to-back launches
/// on one stream and one final synchronization (the launch-rate limit). Throws as above.
double hipEmptyLaunchUs(int launches);

} // namespace dq::rt::bench
