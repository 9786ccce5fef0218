#!/usr/bin/env bash
# The device half of `dynqual ab` / `dynqual calibrate` / `dynqual gate` on a GPU machine without
# the compiler (docs/commands/ab.md, "On a GPU machine"). From the repository root, with the plan
# carried:
#
#   scripts/gpu-ab.sh PLAN_DIR OUT_DIR [device_ab.py flags, e.g. --budget 200]
#
# PLAN_DIR was written here by `dynqual ab|calibrate|gate ... --prepare-device PLAN_DIR`. Builds
# dq-run (Release, hip) and runs device_ab.py: each arm's cases once for correctness, then the ABBA
# rounds. A gate plan carries each revision's runtime sources (ab.json "runtime_src"): each arm
# then gets its own dq-run, built from its own sources into build-gpu-ab-<sha12> (kept, so a
# revision is built once), and a change to the runtime or its kernels is what the rounds measure.
# An arm without sources runs the dq-run of this checkout (BUILD_DIR, default build-gpu-ab).
# Bring OUT_DIR back and run here: dynqual ab|calibrate|gate --import-device OUT_DIR
set -uo pipefail
PLAN=${1:?usage: scripts/gpu-ab.sh PLAN_DIR OUT_DIR [device_ab.py flags]}
OUT=${2:?usage: scripts/gpu-ab.sh PLAN_DIR OUT_DIR [device_ab.py flags]}
shift 2
B=${BUILD_DIR:-build-gpu-ab}
mkdir -p "$OUT"

# build_dq_run SOURCE_DIR BUILD_DIR: configures and builds dq-run once (the binary is kept).
build_dq_run() {
  if [ ! -x "$2/dq-run" ]; then
    echo "building dq-run from $1 into $2" >&2
    cmake -G Ninja -S "$1" -B "$2" -DDYNQUAL_WITH_HIP=ON -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" >> "$OUT/build.log" 2>&1 &&
      ninja -C "$2" dq-run >> "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; return 1; }
  fi
}

# arm_runtime ARM: prints the dq-run of ARM, building it from the plan's sources when it has them.
arm_runtime() {
  local src sha
  read -r src sha < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1])).get("runtime_src", {}).get(sys.argv[2])
print(r["dir"], r["sha256"][:12]) if r else print("- -")' "$PLAN/ab.json" "$1") || return 1
  if [ "$src" = "-" ]; then
    build_dq_run compiler/runtime "$B" || return 1
    echo "$B/dq-run"
  else
    build_dq_run "$PLAN/$src" "build-gpu-ab-$sha" || return 1
    echo "build-gpu-ab-$sha/dq-run"
  fi
}

base_run=$(arm_runtime base) || exit 1
head_run=$(arm_runtime head) || exit 1
python3 compiler/runtime/tools/dq-run/device_ab.py --plan "$PLAN" --base-dq-run "$base_run" \
  --head-dq-run "$head_run" --out "$OUT" "$@" > "$OUT/device_ab.log" 2>&1
rc=$?
tail -5 "$OUT/device_ab.log"
exit $rc
