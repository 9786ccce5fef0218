#!/usr/bin/env bash
# Builds the runtime with the hip device on a GPU machine, runs its tests, and checks every
# compiled model there (docs/devices.md, "Device workflow"). Run from the repository root:
#   compiler/runtime/tools/dq-run/gpu-check.sh MODELS_DIR OUT_DIR [GTEST_SOURCE_DIR]
# MODELS_DIR holds one folder per model with model.dqp(.bin) and its test_data_set_* (.pb files);
# OUT_DIR receives build.log, ctest.log, device_check.jsonl and table.md.
set -u -o pipefail
MODELS=$1
OUT=$2
GTEST=${3:-}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee "$OUT/gpu.txt"
nvcc --version | tail -2 | tee -a "$OUT/gpu.txt"
cmake -G Ninja -S compiler/runtime -B build-gpu -DDYNQUAL_WITH_HIP=ON -DCMAKE_BUILD_TYPE=Release \
  -DDQ_GTEST_SOURCE_DIR="$GTEST" > "$OUT/build.log" 2>&1 &&
  ninja -C build-gpu -j"$(nproc)" dq-run >> "$OUT/build.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
  grep -B2 -A12 -m5 "error" "$OUT/build.log"
  exit $rc
fi
# The tests build second: a test that fails to compile does not stop the model check.
if ninja -C build-gpu -j"$(nproc)" >> "$OUT/build.log" 2>&1; then
  ctest --test-dir build-gpu --no-tests=error -j8 --output-on-failure > "$OUT/ctest.log" 2>&1
  echo "ctest rc=$?"
  grep -E "tests passed|Not Run|Failed|\*\*\*" "$OUT/ctest.log" | head -40
else
  echo "test build failed"; grep -B2 -A12 -m5 "error" "$OUT/build.log"
fi
python3 compiler/runtime/tools/dq-run/device_check.py --models "$MODELS" --dq-run build-gpu/dq-run \
  --json "$OUT/device_check.jsonl" | tee "$OUT/table.md"
echo "device_check rc=${PIPESTATUS[0]}"
