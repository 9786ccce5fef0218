// dq-kernel-bench: Google Benchmark microbenchmarks of the device kernels through the Device
// interface (docs/devices.md, "Kernel microbenchmarks"). MLIR-free: links only the runtime.
//
//   dq-kernel-bench [--device=sim|sim-elem|hip] [--size=small|large] [Google Benchmark flags]
//
// Copies and elementwise kernels report GB/s = (bytes read + bytes written) / s and
// pct_of_copy_peak = 100 * GB/s / the copy peak measured first in the same process (hip: a
// plain 16-byte-per-thread copy kernel, HipCopyPeak.hip; sim: the sim's own memcpy). matmul
// reports TFLOP/s = 2 * M * N * K / s / 1e12 (cuBLAS/hipBLAS on hip with fp32 compute, TF32
// off); decode shapes (M = 1) report weight GB/s and take the GEMV kernel with DQ_HIP_GEMV=on.
// Every iteration is one operation followed by a synchronize, timed on the steady clock (manual
// time). After timing, each benchmark checks two elements of its output against a
// hand-computed value and fails with SkipWithError when they differ.
#include "dq/runtime/Device.h"
#include "dq/runtime/Float16.h"
#include "dq/runtime/HostTensor.h"
#ifdef DQ_WITH_HIP
#include "HipCopyPeak.h"
#endif

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace dq::rt;

std::unique_ptr<Device> gDevice;
std::string gDeviceName = "sim";
double gCopyPeakGBs = 0; // set by copy_peak, which runs first

/// A Device-space buffer of dtype[dims] filled with `value` (uploaded once).
struct Buf {
  BufferView view;
  Buf(DType t, const std::vector<int64_t> &dims, double value) {
    HostTensor h(t, dims);
    const int64_t n = h.numElements();
    for (int64_t i = 0; i < n; ++i) {
      uint8_t *p = h.bytes.data() + i * static_cast<int64_t>(dtypeSize(t));
      if (t == DType::F32) {
        const float v = static_cast<float>(value);
        std::memcpy(p, &v, 4);
      } else if (t == DType::F16) {
        const uint16_t v = floatToHalf(static_cast<float>(value));
        std::memcpy(p, &v, 2);
      }
    }
    BufferHandle b = gDevice->allocate(MemSpace::Device, h.bytes.size(), AllocPurpose::Buffer);
    gDevice->upload(b, 0, h.bytes.data(), h.bytes.size());
    view = contiguousView(b, t, dims);
  }
  ~Buf() { gDevice->free(view.buffer); }
  /// Element `e` of the buffer as a double (f32 or f16).
  double at(int64_t e) const {
    const size_t sz = dtypeSize(view.dtype);
    uint8_t raw[4] = {};
    gDevice->download(raw, view.buffer, static_cast<uint64_t>(e) * sz, sz);
    if (view.dtype == DType::F16) {
      uint16_t h;
      std::memcpy(&h, raw, 2);
      return halfToFloat(h);
    }
    float f;
    std::memcpy(&f, raw, 4);
    return f;
  }
};

/// Times `op` once per iteration (op + synchronize) and returns the total seconds.
template <typename Op> double timed(benchmark::State &state, Op &&op) {
  double total = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    op();
    gDevice->synchronize();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(s);
    total += s;
  }
  return total;
}

void reportBandwidth(benchmark::State &state, double bytesPerOp, double seconds) {
  const double gbs = bytesPerOp * static_cast<double>(state.iterations()) / seconds / 1e9;
  state.counters["GB/s"] = gbs;
  if (gCopyPeakGBs > 0) state.counters["pct_of_copy_peak"] = 100.0 * gbs / gCopyPeakGBs;
  state.SetBytesProcessed(static_cast<int64_t>(bytesPerOp) * state.iterations());
}

void expectValue(benchmark::State &state, const Buf &out, int64_t n, double want, double tol) {
  for (int64_t e : {int64_t{0}, n - 1})
    if (std::abs(out.at(e) - want) > tol) {
      state.SkipWithError(("wrong result at element " + std::to_string(e) + ": " + std::to_string(out.at(e)) +
                           ", expected " + std::to_string(want))
                              .c_str());
      return;
    }
}

// ---- copies --------------------------------------------------------------------------------------

void copyPeak(benchmark::State &state, int64_t bytes) {
#ifdef DQ_WITH_HIP
  if (gDeviceName == "hip") {
    for (auto _ : state) {
      double ms = 0;
      const double gbs = dq::rt::bench::hipCopyPeakGBs(static_cast<size_t>(bytes), 20, ms);
      state.SetIterationTime(ms * 1e-3);
      gCopyPeakGBs = std::max(gCopyPeakGBs, gbs);
    }
    state.counters["GB/s"] = gCopyPeakGBs;
    state.counters["launch_us"] = dq::rt::bench::hipEmptyLaunchUs(1000);
    return;
  }
#endif
  // Without a GPU the sim's memcpy is the reference point.
  Buf src(DType::F32, {bytes / 4}, 1.0), dst(DType::F32, {bytes / 4}, 0.0);
  const double s = timed(state, [&] { gDevice->memcpy(dst.view.buffer, 0, src.view.buffer, 0, bytes); });
  gCopyPeakGBs = 2.0 * static_cast<double>(bytes) * static_cast<double>(state.iterations()) / s / 1e9;
  state.counters["GB/s"] = gCopyPeakGBs;
}

void memcpyD2D(benchmark::State &state, int64_t bytes) {
  Buf src(DType::F32, {bytes / 4}, 3.0), dst(DType::F32, {bytes / 4}, 0.0);
  const double s = timed(state, [&] { gDevice->memcpy(dst.view.buffer, 0, src.view.buffer, 0, bytes); });
  reportBandwidth(state, 2.0 * static_cast<double>(bytes), s);
  expectValue(state, dst, bytes / 4, 3.0, 0);
}

/// out[C, R] = transpose(in[R, C]) through the strided copy kernel.
void copyTranspose(benchmark::State &state, int64_t rows, int64_t cols) {
  Buf src(DType::F32, {rows, cols}, 5.0), dst(DType::F32, {cols, rows}, 0.0);
  BufferView t = src.view;
  t.sizes = {cols, rows};
  t.strides = {1, cols};
  const double s = timed(state, [&] { gDevice->copyStrided(dst.view, t); });
  reportBandwidth(state, 2.0 * 4.0 * static_cast<double>(rows * cols), s);
  expectValue(state, dst, rows * cols, 5.0, 0);
}

// ---- elementwise ---------------------------------------------------------------------------------

/// out = a + b, with b broadcast over rows when `rowBroadcast` ([rows, cols] + [cols]).
void add(benchmark::State &state, DType t, int64_t rows, int64_t cols, bool rowBroadcast) {
  Buf a(t, {rows, cols}, 1.5), out(t, {rows, cols}, 0.0);
  Buf b(t, rowBroadcast ? std::vector<int64_t>{cols} : std::vector<int64_t>{rows, cols}, 0.25);
  const double s = timed(state, [&] { gDevice->launch("add", {a.view, b.view}, {out.view}, {}); });
  const double n = static_cast<double>(rows * cols);
  reportBandwidth(state, static_cast<double>(dtypeSize(t)) * (2 * n + (rowBroadcast ? cols : n)), s);
  expectValue(state, out, rows * cols, 1.75, 0); // 1.5 + 0.25, exact in f16 and f32
}

void expF32(benchmark::State &state, int64_t n) {
  Buf x(DType::F32, {n}, 1.0), out(DType::F32, {n}, 0.0);
  const double s = timed(state, [&] { gDevice->launch("exp", {x.view}, {out.view}, {}); });
  reportBandwidth(state, 2.0 * 4.0 * static_cast<double>(n), s);
  expectValue(state, out, n, 2.718281828459045, 1e-6);
}

// ---- matmul --------------------------------------------------------------------------------------

void matmul(benchmark::State &state, DType t, int64_t m, int64_t n, int64_t k) {
  Buf a(t, {m, k}, 0.5), b(t, {k, n}, 0.25), out(t, {m, n}, 0.0);
  const double s = timed(state, [&] { gDevice->launch("matmul", {a.view, b.view}, {out.view}, {}); });
  state.counters["TFLOP/s"] = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
                              static_cast<double>(state.iterations()) / s / 1e12;
  // Every output element is k * 0.5 * 0.25 = k / 8, exact for these sizes.
  expectValue(state, out, m * n, static_cast<double>(k) / 8, 0);
}

/// One decode-step matmul, x[1, K] . W[K, N]: GB/s counts the weight bytes (what the step is
/// bound by) and `issue_us` the host time inside launch() per call, before the synchronize.
void matmulDecode(benchmark::State &state, DType t, int64_t k, int64_t n) {
  Buf a(t, {1, 1, k}, 0.5), b(t, {1, k, n}, 0.25), out(t, {1, 1, n}, 0.0);
  double issue = 0, total = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    gDevice->launch("matmul", {a.view, b.view}, {out.view}, {});
    const auto t1 = std::chrono::steady_clock::now();
    gDevice->synchronize();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    issue += std::chrono::duration<double>(t1 - t0).count();
    state.SetIterationTime(s);
    total += s;
  }
  reportBandwidth(state, static_cast<double>(dtypeSize(t)) * static_cast<double>(k * n), total);
  state.counters["issue_us"] = 1e6 * issue / static_cast<double>(state.iterations());
  expectValue(state, out, n, static_cast<double>(k) / 8, 0);
}

/// `calls` decode matmuls issued back to back, then one synchronize: per-call µs is what a
/// decode step pays per matmul when the host issues ahead of the GPU.
void matmulDecodeStream(benchmark::State &state, DType t, int64_t k, int64_t n, int calls) {
  Buf a(t, {1, 1, k}, 0.5), b(t, {1, k, n}, 0.25), out(t, {1, 1, n}, 0.0);
  const double s = timed(state, [&] {
    for (int i = 0; i < calls; ++i)
      gDevice->launch("matmul", {a.view, b.view}, {out.view}, {});
  });
  state.counters["us_per_call"] = 1e6 * s / static_cast<double>(state.iterations()) / calls;
  expectValue(state, out, n, static_cast<double>(k) / 8, 0);
}

struct Sizes {
  int64_t copyBytes, rows, cols, mm32, mm16;
};

void registerAll(const Sizes &z) {
  auto reg = [](const std::string &name, auto fn) {
    benchmark::RegisterBenchmark(name.c_str(), fn)->UseManualTime()->Unit(benchmark::kMicrosecond);
  };
  const std::string mib = std::to_string(z.copyBytes >> 20) + "MiB";
  const std::string rc = std::to_string(z.rows) + "x" + std::to_string(z.cols);
  reg("copy_peak/" + mib, [=](benchmark::State &s) { copyPeak(s, z.copyBytes); });
  reg("memcpy_d2d/" + mib, [=](benchmark::State &s) { memcpyD2D(s, z.copyBytes); });
  reg("copy_transpose_f32/" + rc, [=](benchmark::State &s) { copyTranspose(s, z.rows, z.cols); });
  reg("add_f32/" + rc, [=](benchmark::State &s) { add(s, DType::F32, z.rows, z.cols, false); });
  reg("add_f16/" + rc, [=](benchmark::State &s) { add(s, DType::F16, z.rows, z.cols, false); });
  reg("add_row_broadcast_f32/" + rc, [=](benchmark::State &s) { add(s, DType::F32, z.rows, z.cols, true); });
  reg("exp_f32/" + std::to_string(z.rows * z.cols), [=](benchmark::State &s) { expF32(s, z.rows * z.cols); });
  const std::string m32 = std::to_string(z.mm32), m16 = std::to_string(z.mm16);
  reg("matmul_f32/" + m32 + "x" + m32 + "x" + m32,
      [=](benchmark::State &s) { matmul(s, DType::F32, z.mm32, z.mm32, z.mm32); });
  reg("matmul_f16/" + m16 + "x" + m16 + "x" + m16,
      [=](benchmark::State &s) { matmul(s, DType::F16, z.mm16, z.mm16, z.mm16); });
  // The 0.85 B decoder's step shapes (hidden 2048, 4 KV heads of 128, MLP 5632, vocab 32000).
  std::vector<std::pair<int64_t, int64_t>> decode = {
      {2048, 2048}, {2048, 512}, {2048, 5632}, {5632, 2048}, {2048, 32000}};
  if (z.mm16 < 1024) decode = {{256, 512}}; // small: the sim
  for (auto [k, n] : decode) {
    const std::string kn = "1x" + std::to_string(k) + "x" + std::to_string(n);
    reg("matmul_decode_f16/" + kn, [=](benchmark::State &s) { matmulDecode(s, DType::F16, k, n); });
    reg("matmul_decode_stream100_f16/" + kn,
        [=](benchmark::State &s) { matmulDecodeStream(s, DType::F16, k, n, 100); });
  }
}

#ifndef DQ_BENCHMARK_MIN_TIME_SUFFIX
#define DQ_BENCHMARK_MIN_TIME_SUFFIX 1
#endif

/// `--benchmark_min_time=V` in the form the linked Google Benchmark takes: from 1.8 on a unit
/// suffix ("0.2s"; a bare number is read as seconds with a warning on every run), before 1.8 a
/// bare number of seconds. "0.2s" and "0.2" both work either way; an iteration count ("100x")
/// needs 1.8 and is passed through.
std::string minTimeFlag(const std::string &value) {
  const bool hasUnit = !value.empty() && (value.back() == 's' || value.back() == 'x');
  if (DQ_BENCHMARK_MIN_TIME_SUFFIX) return "--benchmark_min_time=" + value + (hasUnit ? "" : "s");
  return "--benchmark_min_time=" + (value.back() == 's' ? value.substr(0, value.size() - 1) : value);
}

} // namespace

int main(int argc, char **argv) {
  std::string size;
  std::vector<char *> rest = {argv[0]};
  std::vector<std::string> rewritten; // owns the rewritten flags that `rest` points into
  rewritten.reserve(static_cast<size_t>(argc));
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--device=", 0) == 0) {
      gDeviceName = a.substr(9);
    } else if (a.rfind("--size=", 0) == 0) {
      size = a.substr(7);
    } else if (a.rfind("--benchmark_min_time=", 0) == 0 && a.size() > 21) {
      rewritten.push_back(minTimeFlag(a.substr(21)));
      rest.push_back(rewritten.back().data());
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (size.empty()) size = gDeviceName == "hip" ? "large" : "small";
  if (size != "small" && size != "large") {
    std::cerr << "dq-kernel-bench: --size must be small or large\n";
    return 2;
  }
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  if (benchmark::ReportUnrecognizedArguments(n, rest.data())) return 2;
  try {
    gDevice = createDevice(gDeviceName);
  } catch (const std::exception &e) {
    std::cerr << "dq-kernel-bench: " << e.what() << "\n";
    return 2;
  }
  // small: seconds on the sim; large: big enough that a launch and a sync are noise on a GPU
  // (1 GiB copies, 8192 x 8192 elementwise operands, 4096^3 and 8192^3 matmuls).
  const Sizes z =
      size == "large" ? Sizes{int64_t{1} << 30, 8192, 8192, 4096, 8192} : Sizes{int64_t{1} << 20, 256, 256, 64, 64};
  registerAll(z);
  benchmark::AddCustomContext("dq_device", gDeviceName);
  benchmark::AddCustomContext("dq_size", size);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  gDevice.reset();
  return 0;
}
