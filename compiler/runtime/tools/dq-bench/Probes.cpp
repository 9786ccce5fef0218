// Copy-bandwidth and launch-latency probes (Probes.h).
#include "Probes.h"

#include <chrono>
#include <vector>

namespace dq::bench {

namespace {
using Clock = std::chrono::steady_clock;
double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }
} // namespace

ProbeResult runProbes(rt::Device &dev, uint64_t copyBytes, int copyReps, int launchCount) {
  ProbeResult r;
  copyBytes = copyBytes < 4 ? 4 : copyBytes / 4 * 4;
  r.copyBytes = copyBytes;
  r.copyReps = copyReps;
  r.launchCount = launchCount;
  rt::BufferHandle src = dev.allocate(rt::MemSpace::Device, copyBytes, rt::AllocPurpose::Buffer);
  rt::BufferHandle dst = dev.allocate(rt::MemSpace::Device, copyBytes, rt::AllocPurpose::Buffer);
  rt::BufferHandle one = dev.allocate(rt::MemSpace::Device, 4, rt::AllocPurpose::Buffer);
  try {
    {
      std::vector<uint8_t> zeros(copyBytes, 0);
      dev.upload(src, 0, zeros.data(), copyBytes);
    }
    const int64_t n = static_cast<int64_t>(copyBytes / 4);
    const rt::BufferView vs = rt::contiguousView(src, rt::DType::F32, {n});
    const rt::BufferView vd = rt::contiguousView(dst, rt::DType::F32, {n});
    const double moved = 2.0 * static_cast<double>(copyBytes) * copyReps;

    dev.memcpy(dst, 0, src, 0, copyBytes);
    dev.synchronize();
    auto t0 = Clock::now();
    for (int i = 0; i < copyReps; ++i)
      dev.memcpy(dst, 0, src, 0, copyBytes);
    dev.synchronize();
    auto t1 = Clock::now();
    if (copyReps > 0) r.memcpyBytesPerSecond = moved / seconds(t0, t1);

    dev.copyStrided(vd, vs);
    dev.synchronize();
    t0 = Clock::now();
    for (int i = 0; i < copyReps; ++i)
      dev.copyStrided(vd, vs);
    dev.synchronize();
    t1 = Clock::now();
    if (copyReps > 0) r.stridedBytesPerSecond = moved / seconds(t0, t1);

    rt::KernelArgs fill;
    fill.fattrs = {0.0};
    const rt::BufferView v1 = rt::contiguousView(one, rt::DType::F32, {1});
    for (int i = 0; i < 10; ++i)
      dev.launch("fill", {}, {v1}, fill);
    dev.synchronize();
    t0 = Clock::now();
    for (int i = 0; i < launchCount; ++i)
      dev.launch("fill", {}, {v1}, fill);
    dev.synchronize();
    t1 = Clock::now();
    if (launchCount > 0) r.launchSeconds = seconds(t0, t1) / launchCount;
  } catch (...) {
    dev.free(src);
    dev.free(dst);
    dev.free(one);
    throw;
  }
  dev.free(src);
  dev.free(dst);
  dev.free(one);
  return r;
}

} // namespace dq::bench
