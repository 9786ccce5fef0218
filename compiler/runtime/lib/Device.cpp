// Device-independent helpers: view geometry, counter listing, the device factory.
#include "dq/runtime/Device.h"

#include "dq/runtime/Error.h"
#include "dq/runtime/NullDevice.h"
#include "dq/runtime/SimDevice.h"
#ifdef DQ_WITH_HIP
#include "dq/runtime/hip/HipDevice.h"
#endif

namespace dq::rt {

int64_t BufferView::numElements() const {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

bool BufferView::isContiguous() const {
  if (numElements() == 0) return true; // no element to be out of place: any strides will do (a memcpy of 0 bytes)
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

std::pair<int64_t, int64_t> BufferView::elementRange() const {
  int64_t lo = offset, hi = offset;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return {0, -1};
    int64_t span = (sizes[i] - 1) * strides[i];
    if (span < 0)
      lo += span;
    else
      hi += span;
  }
  return {lo, hi};
}

BufferView contiguousView(BufferHandle buffer, DType dtype, const std::vector<int64_t> &sizes) {
  BufferView v;
  v.buffer = buffer;
  v.dtype = dtype;
  v.sizes = sizes;
  v.strides.assign(sizes.size(), 1);
  for (size_t i = sizes.size(); i-- > 1;)
    v.strides[i - 1] = v.strides[i] * sizes[i];
  return v;
}

std::vector<std::pair<std::string, uint64_t>> Counters::items() const {
  return {{"syncs", syncs},
          {"scalar_readbacks", scalarReadbacks},
          {"kernel_launches", kernelLaunches},
          {"memcpy_copies", memcpyCopies},
          {"copy2d_copies", copy2dCopies},
          {"strided_copies", stridedCopies},
          {"h2d_transfers", h2dTransfers},
          {"d2h_transfers", d2hTransfers},
          {"d2d_transfers", d2dTransfers},
          {"h2h_transfers", h2hTransfers},
          {"h2d_bytes", h2dBytes},
          {"d2h_bytes", d2hBytes},
          {"d2d_bytes", d2dBytes},
          {"h2h_bytes", h2hBytes},
          {"allocations", allocations},
          {"bytes_allocated", bytesAllocated},
          {"host_bytes_allocated", hostBytesAllocated},
          {"peak_device_bytes", peakDeviceBytes},
          {"pool_bytes", poolBytes},
          {"host_loads", hostLoads},
          {"host_stores", hostStores},
          {"output_copies", outputCopies},
          {"modelled_device_ns", modelledDeviceNs}};
}

const std::vector<DeviceInfo> &deviceRegistry() {
#ifdef DQ_WITH_HIP
  constexpr bool kHip = true;
#else
  constexpr bool kHip = false;
#endif
  static const std::vector<DeviceInfo> registry = {
      {"sim", true, true}, {"sim-elem", true, false}, {"null", true, false}, {"hip", kHip, true}};
  return registry;
}

std::string deviceNames(bool variantsOnly) {
  std::string s;
  for (const auto &d : deviceRegistry())
    if (!variantsOnly || d.variant) s += (s.empty() ? "" : ", ") + std::string(d.name);
  return s;
}

std::vector<std::string> availableDevices() {
  std::vector<std::string> names;
  for (const auto &d : deviceRegistry())
    if (d.built) names.push_back(d.name);
  return names;
}

std::unique_ptr<Device> createDevice(const std::string &name) {
  if (name == "sim") return std::make_unique<SimDevice>();
  if (name == "sim-elem") return std::make_unique<SimDevice>(SimPrecision::ElementType);
  if (name == "null") return std::make_unique<NullDevice>();
#ifdef DQ_WITH_HIP
  if (name == "hip") return createHipDevice(); // throws "hip: no GPU: ..." without a GPU
  throw RuntimeError("unknown device '" + name + "'; available: " + deviceNames());
#else
  if (name == "hip")
    throw RuntimeError("unsupported: device 'hip' is not built into this runtime (configure with "
                       "-DDYNQUAL_WITH_HIP=ON); use --device sim");
  std::string built;
  for (const auto &d : availableDevices())
    built += (built.empty() ? "" : ", ") + d;
  throw RuntimeError("unknown device '" + name + "'; available: " + built);
#endif
}

void NullDevice::fail(const char *call) {
  throw RuntimeError(std::string("null device cannot execute: ") + call + " (it is a skeleton; use device 'sim')");
}

} // namespace dq::rt
