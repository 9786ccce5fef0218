#!/usr/bin/env bash
# Where the 0.85 B decoder's decode step spends its time on the GPU machine, and what the matmul
# policy changes (docs/devices.md, "Where a run's time goes" and "Decode GEMV"). From the
# repository root, with .dev/gpu-generate and .dev/gpu (googletest, benchmark) carried:
#
#   scripts/gpu-profile-decode.sh [OUT_DIR]      (OUT_DIR defaults to $OUT)
#
# 1. builds dq-bench, dq-kernel-bench and dq_runtime_hip_tests (Release, nvcc);
# 2. runs the HipKernels tests (the GEMV, the folded GQA matmuls, arg_max) and stops on a failure;
# 3. regenerates the 0.85 B weights;
# 4. dq-bench generate, profiled (DQ_HIP_PROFILE=1, 32 decode steps) and unprofiled
#    (--gen-tokens 128 --warmup 1 --reps 3), with DQ_HIP_GEMV=on (one-row matmuls through the
#    GEMV) and off (every matmul through the BLAS, the default);
# 5. dq-kernel-bench on the decode matmul shapes, both ways.
# Writes summary.txt and one file per run to OUT_DIR.
set -uo pipefail
OUT=${1:-${OUT:?set OUT or pass OUT_DIR}}
B=${BUILD_DIR:-build-gpu-profile}
mkdir -p "$OUT"
T0=$(date +%s)
say() { echo "[$(($(date +%s) - T0))s] $*" | tee -a "$OUT/summary.txt"; }

cmake -G Ninja -S compiler/runtime -B "$B" -DDYNQUAL_WITH_HIP=ON -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DDQ_GTEST_SOURCE_DIR="$PWD/.dev/gpu/googletest" \
  -DDQ_BENCHMARK_SOURCE_DIR="$PWD/.dev/gpu/benchmark" > "$OUT/build.log" 2>&1 &&
  ninja -C "$B" dq-bench dq-kernel-bench dq_runtime_hip_tests >> "$OUT/build.log" 2>&1 ||
  { say "build failed"; tail -30 "$OUT/build.log"; exit 1; }
say "built"

d=.dev/gpu-generate/decoder_0p85b
(python3 scripts/decoder_weights.py $d && python3 scripts/assemble_sidecar.py $d/model.dqp $d) > "$OUT/weights.log" 2>&1 &
W=$!

timeout 300 "$B/test/dq_runtime_hip_tests" --gtest_filter='HipKernels.*' > "$OUT/hiptests.txt" 2>&1
rc=$?
say "HipKernels tests rc=$rc: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/hiptests.txt" | tr '\n' ' ')"
if [ $rc -ne 0 ]; then grep -E "Failure|FAILED|sim .* hip" "$OUT/hiptests.txt" | head -20; exit 1; fi

wait $W || { say "weights failed"; tail "$OUT/weights.log"; exit 1; }
say "weights ready"

G=("$B/dq-bench" generate $d/model.dqp --device hip --prompt-len 128)
run() {  # name, env assignments...
  local name=$1
  shift
  env "$@" DQ_HIP_PROFILE=1 timeout 120 "${G[@]}" --gen-tokens 33 --warmup 0 --reps 1 > "$OUT/p-$name.json" 2> "$OUT/p-$name.txt"
  env "$@" timeout 120 "${G[@]}" --gen-tokens 128 --warmup 1 --reps 3 > "$OUT/n-$name.json" 2> "$OUT/n-$name.txt"
  python3 - "$OUT" "$name" <<'EOF' | tee -a "$OUT/summary.txt"
import json, sys
out, name = sys.argv[1:]
for kind in ("p", "n"):
    try:
        d = json.load(open(f"{out}/{kind}-{name}.json"))
        print(f"{kind}-{name}: ttft_ms {d['ttft_ms']['median']:.2f} tps {d['tps']['median']:.1f} "
              f"tokens {d.get('tokens', [])[:6]}")
    except Exception as e:
        print(f"{kind}-{name}: no result ({e})")
EOF
}
run gemv DQ_HIP_GEMV=on
run blas DQ_HIP_GEMV=off
say "generate runs done"
for name in gemv blas; do
  echo "== profile $name" >> "$OUT/summary.txt"
  grep "hip profile" "$OUT/p-$name.txt" | head -40 >> "$OUT/summary.txt"
done

KB=("$B/dq-kernel-bench" --device=hip --benchmark_filter='copy_peak|matmul_decode' --benchmark_min_time=0.2s)
DQ_HIP_GEMV=on timeout 120 "${KB[@]}" > "$OUT/kb-gemv.txt" 2>&1
DQ_HIP_GEMV=off timeout 120 "${KB[@]}" > "$OUT/kb-blas.txt" 2>&1
for f in kb-gemv kb-blas; do
  echo "== $f" >> "$OUT/summary.txt"
  grep -E "^(copy_peak|matmul_decode)" "$OUT/$f.txt" >> "$OUT/summary.txt"
done
say "done"
cat "$OUT/summary.txt"
