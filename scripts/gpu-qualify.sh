#!/usr/bin/env bash
# The device-machine half of `dynqual qualify --device hip` (docs/commands/qualify.md, "Devices on
# another machine"). Run from the repository root on the GPU machine:
#   scripts/gpu-qualify.sh [GPU_DIR] OUT_DIR
# GPU_DIR (default .dev/gpu, made here by scripts/gpu-qualify-prepare.sh) holds plan/ (from
# `dynqual qualify --prepare`), googletest/ and benchmark/ (sources; the GPU machine has neither).
# It builds the MLIR-free runtime (Release, hip device, dq-run, dq-kernel-bench), runs every
# planned case with dq-run (device_check.py --manifest), then the kernel microbenchmarks, then the
# GPU tests while time is left, and writes into OUT_DIR:
#   hipq-results.tar.gz  the results folder for `dynqual qualify --import-device-results`
#                        (manifest.json, results.jsonl, outputs/, gpu.txt, kernel_bench.json, logs);
#                        split into hipq-results.tar.gz.part-* when over 15 MiB (cat them back)
#   summary.txt          GPU, device-run totals, microbenchmarks, GPU tests
# Stays within about 8 minutes: each stage gets what is left of a 470 s budget.
set -u -o pipefail
if [ $# -eq 1 ]; then GPU=.dev/gpu; OUT=$1; else GPU=${1:-.dev/gpu}; OUT=${2:?usage: scripts/gpu-qualify.sh [GPU_DIR] OUT_DIR}; fi
BUDGET=${GPU_QUALIFY_BUDGET_S:-470}
start=$(date +%s)
left() { echo $((BUDGET - ($(date +%s) - start))); }
RES=$(mktemp -d)/hipq-results
mkdir -p "$OUT" "$RES"
SUMMARY=$OUT/summary.txt
: > "$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }

{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.limit \
    --format=csv 2>&1
  nvcc --version 2>&1 | tail -2 | head -1
} > "$RES/gpu.txt"
cat "$RES/gpu.txt" >> "$SUMMARY"

finish() {
  tar czf "$OUT/hipq-results.tar.gz" -C "$(dirname "$RES")" hipq-results
  size=$(stat -c %s "$OUT/hipq-results.tar.gz")
  if [ "$size" -gt $((15 * 1024 * 1024)) ]; then
    split -b 15M -d "$OUT/hipq-results.tar.gz" "$OUT/hipq-results.tar.gz.part-"
    rm "$OUT/hipq-results.tar.gz"
    note "results split into $(ls "$OUT" | grep -c part-) parts: cat hipq-results.tar.gz.part-* > hipq-results.tar.gz"
  fi
  note "total $(($(date +%s) - start)) s"
}
trap finish EXIT

if [ ! -f "$GPU/plan/manifest.json" ]; then
  note "no $GPU/plan/manifest.json: run scripts/gpu-qualify-prepare.sh on the build machine first"
  exit 2
fi

# 1. Build what the runs need first; the tests build last, while time is left.
timeout $(left) cmake -G Ninja -S compiler/runtime -B build-gpu -DDYNQUAL_WITH_HIP=ON -DCMAKE_BUILD_TYPE=Release \
  -DDQ_GTEST_SOURCE_DIR="$PWD/$GPU/googletest" -DDQ_BENCHMARK_SOURCE_DIR="$PWD/$GPU/benchmark" > "$RES/build.log" 2>&1 &&
  timeout $(left) ninja -C build-gpu -j"$(nproc)" dq-run dq-kernel-bench >> "$RES/build.log" 2>&1
rc=$?
note "build rc=$rc ($(($(date +%s) - start)) s)"
if [ $rc -ne 0 ]; then
  grep -B2 -A12 -m5 "error" "$RES/build.log" | tee -a "$SUMMARY"
  exit 1
fi

# 2. Every planned case once, then each model's timed case (outputs compared at import).
timeout $(left) python3 compiler/runtime/tools/dq-run/device_check.py --manifest "$GPU/plan/manifest.json" \
  --dq-run build-gpu/dq-run --results "$RES" --jobs 4 > "$RES/device_run.log" 2>&1
note "device runs rc=$? ($(($(date +%s) - start)) s)"
head -25 "$RES/device_run.log" >> "$SUMMARY"

# 3. Kernel microbenchmarks (GB/s against the copy peak, matmul TFLOP/s).
if [ "$(left)" -gt 60 ]; then
  timeout $(($(left) - 30)) build-gpu/dq-kernel-bench --device=hip --benchmark_min_time=0.2s \
    --benchmark_out="$RES/kernel_bench.json" --benchmark_out_format=json > "$RES/kernel_bench.txt" 2>&1
  note "kernel bench rc=$? ($(($(date +%s) - start)) s)"
  cat "$RES/kernel_bench.txt" >> "$SUMMARY"
fi

# 4. The GPU tests (device conformance, every kernel against the sim) while time is left.
if [ "$(left)" -gt 120 ]; then
  timeout $(($(left) - 40)) ninja -C build-gpu -j"$(nproc)" >> "$RES/build.log" 2>&1 &&
    timeout $(($(left) - 10)) ctest --test-dir build-gpu -L gpu --no-tests=error -j4 --output-on-failure \
      > "$RES/ctest.log" 2>&1
  note "gpu tests rc=$? ($(($(date +%s) - start)) s)"
  grep -E "tests passed|Failed|\*\*\*" "$RES/ctest.log" | head -20 >> "$SUMMARY"
else
  note "gpu tests not run: $(left) s left"
fi
