#!/usr/bin/env bash
# Builds the runtime with the hip device on a GPU machine and runs its tests (docs/devices.md,
# "dq-run and the device workflow"). Run from the repository root:
#   compiler/runtime/tools/dq-run/gpu-check.sh OUT_DIR [GTEST_SOURCE_DIR]
# OUT_DIR receives gpu.txt, build.log and ctest.log. Models are checked by the qualification's
# device half instead (scripts/gpu-qualify.sh there, `dynqual qualify --import-device-results`
# here), which compares their outputs with the CPU reference on the build machine.
set -u -o pipefail
if [ $# -eq 3 ]; then
  echo "gpu-check.sh: the model check (MODELS_DIR) moved to scripts/gpu-qualify.sh and" \
    "\`dynqual qualify --import-device-results\` (docs/commands/qualify.md); usage: gpu-check.sh OUT_DIR [GTEST_SOURCE_DIR]" >&2
  exit 2
fi
OUT=${1:?usage: gpu-check.sh OUT_DIR [GTEST_SOURCE_DIR]}
GTEST=${2:-}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee "$OUT/gpu.txt"
nvcc --version | tail -2 | tee -a "$OUT/gpu.txt"
cmake -G Ninja -S compiler/runtime -B build-gpu -DDYNQUAL_WITH_HIP=ON -DCMAKE_BUILD_TYPE=Release \
  -DDQ_GTEST_SOURCE_DIR="$GTEST" > "$OUT/build.log" 2>&1 &&
  ninja -C build-gpu -j"$(nproc)" >> "$OUT/build.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
  grep -B2 -A12 -m5 "error" "$OUT/build.log"
  exit $rc
fi
ctest --test-dir build-gpu --no-tests=error -j8 --output-on-failure > "$OUT/ctest.log" 2>&1
rc=$?
echo "ctest rc=$rc"
grep -E "tests passed|Not Run|Failed|\*\*\*" "$OUT/ctest.log" | head -40
exit $rc
