// Opt-in per-kernel profile of the hip device (DQ_HIP_PROFILE=1): where a run's time goes.
#pragma once

#include "dq/runtime/hip/HipCompat.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace dq::rt {

/// Accumulates, per kernel name (and for the allocator calls), the count, the host time spent
/// inside the device call (µs, steady clock: argument checks, dispatch, the launch API) and the
/// GPU time between two events recorded on the stream around the launch (µs, hipEventElapsedTime).
/// Prints one table to stderr when destroyed. Events are read only at a synchronization the run
/// makes anyway (or at the end), so the profile adds no waits of its own; it does add two event
/// records per launch, about 1–2 µs of host time each, so profiled runs are slower than unprofiled.
class HipProfile {
public:
  explicit HipProfile(hipStream_t stream) : stream_(stream) {}
  HipProfile(const HipProfile &) = delete;
  HipProfile &operator=(const HipProfile &) = delete;
  ~HipProfile() {
    (void)hipStreamSynchronize(stream_);
    resolve();
    print();
    for (auto &[a, b] : free_) {
      (void)hipEventDestroy(a);
      (void)hipEventDestroy(b);
    }
  }

  /// True when DQ_HIP_PROFILE is set to a value other than 0.
  static bool requested() {
    const char *v = std::getenv("DQ_HIP_PROFILE");
    return v && *v && std::string(v) != "0";
  }

  struct Scope {
    HipProfile *p;
    std::string name;
    std::chrono::steady_clock::time_point t0;
    hipEvent_t a = nullptr, b = nullptr;
    bool gpu;
    Scope(HipProfile *prof, std::string n, bool withGpu) : p(prof), name(std::move(n)), gpu(withGpu && prof) {
      if (!p) return;
      t0 = std::chrono::steady_clock::now();
      if (gpu) {
        p->takeEvents(a, b);
        (void)hipEventRecord(a, p->stream_);
      }
    }
    ~Scope() {
      if (!p) return;
      if (gpu) (void)hipEventRecord(b, p->stream_);
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      Row &r = p->rows_[name];
      ++r.count;
      r.hostUs += us;
      if (gpu) p->pending_.push_back({name, a, b});
    }
  };

  /// Reads the events of launches that have completed; call right after a stream synchronize.
  void resolve() {
    for (const Pending &q : pending_) {
      float ms = 0;
      if (hipEventElapsedTime(&ms, q.a, q.b) == hipSuccess) rows_[q.name].gpuUs += 1000.0 * ms;
      free_.push_back({q.a, q.b});
    }
    pending_.clear();
  }

  /// Too many events in flight: the device then synchronizes (counted in '(synchronize)').
  bool full() const { return pending_.size() >= 8192; }

private:
  struct Row {
    long count = 0;
    double hostUs = 0, gpuUs = 0;
  };
  struct Pending {
    std::string name;
    hipEvent_t a, b;
  };

  void takeEvents(hipEvent_t &a, hipEvent_t &b) {
    if (free_.empty()) {
      (void)hipEventCreateWithFlags(&a, hipEventDefault);
      (void)hipEventCreateWithFlags(&b, hipEventDefault);
      return;
    }
    a = free_.back().first;
    b = free_.back().second;
    free_.pop_back();
  }

  void print() const {
    std::vector<std::pair<std::string, Row>> v(rows_.begin(), rows_.end());
    std::sort(v.begin(), v.end(), [](const auto &x, const auto &y) {
      return x.second.hostUs + x.second.gpuUs > y.second.hostUs + y.second.gpuUs;
    });
    double host = 0, gpu = 0;
    for (const auto &[n, r] : v) {
      host += r.hostUs;
      gpu += r.gpuUs;
    }
    std::fprintf(stderr, "hip profile (DQ_HIP_PROFILE): %-22s %9s %12s %10s %12s %10s\n", "call", "count", "host us",
                 "host/call", "gpu us", "gpu/call");
    for (const auto &[n, r] : v)
      std::fprintf(stderr, "hip profile (DQ_HIP_PROFILE): %-22s %9ld %12.0f %10.2f %12.0f %10.2f\n", n.c_str(), r.count,
                   r.hostUs, r.hostUs / std::max(1L, r.count), r.gpuUs, r.gpuUs / std::max(1L, r.count));
    std::fprintf(stderr, "hip profile (DQ_HIP_PROFILE): %-22s %9s %12.0f %10s %12.0f\n", "total", "", host, "", gpu);
  }

  hipStream_t stream_;
  std::map<std::string, Row> rows_;
  std::vector<Pending> pending_;
  std::vector<std::pair<hipEvent_t, hipEvent_t>> free_;
};

} // namespace dq::rt
