#!/usr/bin/env bash
# The device half of `dynqual ab` / `dynqual calibrate` on a GPU machine without the compiler
# (docs/commands/ab.md, "On a GPU machine"). From the repository root, with the plan carried:
#
#   scripts/gpu-ab.sh PLAN_DIR OUT_DIR [device_ab.py flags, e.g. --budget 200]
#
# PLAN_DIR was written here by `dynqual ab ... --prepare-device PLAN_DIR` (or calibrate). Builds
# dq-run (Release, hip; BUILD_DIR, default build-gpu-ab), then runs device_ab.py: each arm's cases
# once for correctness, then the ABBA rounds. Bring OUT_DIR back and run here:
#   dynqual ab --import-device OUT_DIR        (or dynqual calibrate --import-device OUT_DIR)
set -uo pipefail
PLAN=${1:?usage: scripts/gpu-ab.sh PLAN_DIR OUT_DIR [device_ab.py flags]}
OUT=${2:?usage: scripts/gpu-ab.sh PLAN_DIR OUT_DIR [device_ab.py flags]}
shift 2
B=${BUILD_DIR:-build-gpu-ab}
mkdir -p "$OUT"
if [ ! -x "$B/dq-run" ]; then
  cmake -G Ninja -S compiler/runtime -B "$B" -DDYNQUAL_WITH_HIP=ON -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" > "$OUT/build.log" 2>&1 &&
    ninja -C "$B" dq-run >> "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
fi
python3 compiler/runtime/tools/dq-run/device_ab.py --plan "$PLAN" --dq-run "$B/dq-run" --out "$OUT" "$@" \
  > "$OUT/device_ab.log" 2>&1
rc=$?
tail -5 "$OUT/device_ab.log"
exit $rc
