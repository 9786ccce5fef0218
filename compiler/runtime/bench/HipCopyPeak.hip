// A plain copy kernel and an empty kernel for the microbenchmarks' reference points (HIP kernel
// language; nvcc compiles it as CUDA through HipCompat.h).
#include "HipCopyPeak.h"

#include "dq/runtime/hip/HipCompat.h"

#include <stdexcept>
#include <string>

namespace dq::rt::bench {
namespace {

void check(hipError_t e, const char *what) {
  if (e != hipSuccess) throw std::runtime_error(std::string(what) + ": " + hipGetErrorString(e));
}

__global__ void copy16(const uint4 *__restrict__ src, uint4 *__restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

__global__ void empty() {}

} // namespace

double hipCopyPeakGBs(size_t bytes, int reps, double &msPerCopy) {
  void *src = nullptr, *dst = nullptr;
  check(hipMalloc(&src, bytes), "hipMalloc");
  check(hipMalloc(&dst, bytes), "hipMalloc");
  hipStream_t stream = nullptr;
  check(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking), "hipStreamCreateWithFlags");
  check(hipMemsetAsync(src, 1, bytes, stream), "hipMemsetAsync");
  hipEvent_t start, stop;
  check(hipEventCreateWithFlags(&start, hipEventDefault), "hipEventCreateWithFlags");
  check(hipEventCreateWithFlags(&stop, hipEventDefault), "hipEventCreateWithFlags");
  const size_t n = bytes / 16;
  hipDeviceProp_t prop;
  check(hipGetDeviceProperties(&prop, 0), "hipGetDeviceProperties");
  const unsigned blocks = static_cast<unsigned>(prop.multiProcessorCount) * 8, threads = 256;
  auto launch = [&] {
    hipLaunchKernelGGL(copy16, dim3(blocks), dim3(threads), 0, stream, static_cast<const uint4 *>(src),
                       static_cast<uint4 *>(dst), n);
  };
  launch(); // warm-up
  check(hipEventRecord(start, stream), "hipEventRecord");
  for (int r = 0; r < reps; ++r)
    launch();
  check(hipEventRecord(stop, stream), "hipEventRecord");
  check(hipEventSynchronize(stop), "hipEventSynchronize");
  check(hipGetLastError(), "copy kernel");
  float ms = 0;
  check(hipEventElapsedTime(&ms, start, stop), "hipEventElapsedTime");
  msPerCopy = ms / reps;
  hipEventDestroy(start);
  hipEventDestroy(stop);
  hipStreamDestroy(stream);
  hipFree(src);
  hipFree(dst);
  return 2.0 * static_cast<double>(bytes) / (msPerCopy * 1e-3) / 1e9;
}

double hipEmptyLaunchUs(int launches) {
  hipStream_t stream = nullptr;
  check(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking), "hipStreamCreateWithFlags");
  hipLaunchKernelGGL(empty, dim3(1), dim3(1), 0, stream);
  check(hipStreamSynchronize(stream), "hipStreamSynchronize");
  hipEvent_t start, stop;
  check(hipEventCreateWithFlags(&start, hipEventDefault), "hipEventCreateWithFlags");
  check(hipEventCreateWithFlags(&stop, hipEventDefault), "hipEventCreateWithFlags");
  check(hipEventRecord(start, stream), "hipEventRecord");
  for (int i = 0; i < launches; ++i)
    hipLaunchKernelGGL(empty, dim3(1), dim3(1), 0, stream);
  check(hipEventRecord(stop, stream), "hipEventRecord");
  check(hipEventSynchronize(stop), "hipEventSynchronize");
  check(hipGetLastError(), "empty kernel");
  float ms = 0;
  check(hipEventElapsedTime(&ms, start, stop), "hipEventElapsedTime");
  hipEventDestroy(start);
  hipEventDestroy(stop);
  hipStreamDestroy(stream);
  return 1e3 * ms / launches;
}

} // namespace dq::rt::bench
