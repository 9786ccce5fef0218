#!/usr/bin/env bash
# The generation benchmark on the GPU machine, in one call (docs/devices.md, "Generation
# benchmark"; docs/commands/bench-generate.md). Run from the repository root:
#
#   scripts/gpu-generate.sh CARRY_DIR [OUT_DIR]      (OUT_DIR defaults to $OUT)
#
# CARRY_DIR is what scripts/gpu-generate-prepare.sh wrote here. Steps, each logged to
# OUT_DIR/gpu-generate.log:
#   1. builds the MLIR-free runtime project (Release, nvcc, hip device) and dq-bench;
#   2. regenerates the weights of the decoders that carry a weight recipe
#      (scripts/decoder_weights.py, sha256 checked) and rebuilds their sidecars
#      (scripts/assemble_sidecar.py; the runtime's loader checks the sidecar's FNV-1a-64);
#   3. dq-bench probe (copy bandwidth, launch latency) -> probe.json;
#   4. dq-bench generate --device hip on every decoder -> generate.jsonl (one line each; the probes
#      run again inside each, so every decode figure has its limits from the same run);
#   5. the peers on the same ONNX models -> peers.jsonl: PyTorch eager on CUDA
#      (scripts/peers/torch_generate.py, make-model decoders) and onnxruntime CPU
#      (harness/runners/ort-python/ort_generate.py; not on the 0.85 B decoder, too slow on a CPU);
#   6. summary.md (scripts/generation_table.py).
# Bring OUT_DIR back and record it here: dynqual bench generate --import OUT/generate.jsonl
# OUT/peers.jsonl, then dynqual report. Settings: PROMPT_LEN, GEN_TOKENS, WARMUP, REPS (defaults
# 128 128 1 5), CUDA_ARCH (90). For a dry run without a GPU: DQ_DEVICE=sim and DQ_BENCH=a built
# dq-bench (no build; the peers then fail without torch/onnxruntime, which the log says).
set -uo pipefail
CARRY=${1:?usage: scripts/gpu-generate.sh CARRY_DIR [OUT_DIR]}
OUT=${2:-${OUT:?set OUT or pass OUT_DIR}}
PROMPT_LEN=${PROMPT_LEN:-128} GEN_TOKENS=${GEN_TOKENS:-128} WARMUP=${WARMUP:-1} REPS=${REPS:-5}
BUILD=${BUILD_DIR:-build-gpu-generate}
mkdir -p "$OUT"
LOG=$OUT/gpu-generate.log
: > "$LOG"
: > "$OUT/generate.jsonl"
: > "$OUT/peers.jsonl"
T0=$(date +%s)
say() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$LOG"; }
BENCH_ARGS=(--prompt-len "$PROMPT_LEN" --gen-tokens "$GEN_TOKENS" --warmup "$WARMUP" --reps "$REPS")

DEVICE=${DQ_DEVICE:-hip}
if [ -n "${DQ_BENCH:-}" ]; then
  BENCH=$DQ_BENCH
  say "using $BENCH, device $DEVICE (no build)"
else
say "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
say "build: $BUILD (Release, nvcc $(nvcc --version 2>/dev/null | tail -1))"
if ! { cmake -G Ninja -S compiler/runtime -B "$BUILD" -DDYNQUAL_WITH_HIP=ON -DCMAKE_BUILD_TYPE=Release \
         -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DBUILD_TESTING=OFF &&
       ninja -C "$BUILD" dq-bench; } > "$OUT/build.log" 2>&1; then
  say "build failed (build.log)"; tail -30 "$OUT/build.log" | tee -a "$LOG"; exit 1
fi
BENCH=$BUILD/dq-bench
say "built $BENCH"
fi

for dir in "$CARRY"/*/; do
  dir=${dir%/}
  if [ -f "$dir/model.dqp.bin.recipe.json" ] && [ ! -f "$dir/model.dqp.bin" ]; then
    say "$(basename "$dir"): regenerating weights and sidecar"
    python3 scripts/decoder_weights.py "$dir" >> "$LOG" 2>&1 || { say "weights of $dir failed"; continue; }
    python3 scripts/assemble_sidecar.py "$dir/model.dqp" "$dir" >> "$LOG" 2>&1 || say "sidecar of $dir failed"
  fi
done

say "probe"
"$BENCH" probe --device "$DEVICE" > "$OUT/probe.json" 2>> "$LOG" || say "probe failed"

for dir in "$CARRY"/*/; do
  dir=${dir%/}; name=$(basename "$dir")
  [ -f "$dir/model.dqp" ] || continue
  hash=$(sha256sum "$dir/model.onnx" | cut -d' ' -f1)
  say "dq-bench generate $name"
  if ! timeout 240 "$BENCH" generate "$dir/model.dqp" --device "$DEVICE" "${BENCH_ARGS[@]}" --name "$name" \
         --model-hash "$hash" >> "$OUT/generate.jsonl" 2>> "$LOG"; then
    say "dq-bench generate $name failed (exit $?)"
  fi
done

for dir in "$CARRY"/*/; do
  dir=${dir%/}; name=$(basename "$dir")
  [ -f "$dir/model.onnx" ] || continue
  size=$(du -sb "$dir" | cut -f1)
  big=0; [ "$size" -ge 200000000 ] && big=1
  # Refuses decoders that are not make-model's architecture (kv_decoder), saying so in the log.
  check=(--check-onnx); [ $big = 1 ] && check=()  # onnxruntime CPU on 1.7 GB of f16 weights is too slow
  say "torch eager $name"
  timeout 150 python3 scripts/peers/torch_generate.py "$dir" --device cuda "${BENCH_ARGS[@]}" --name "$name" \
    "${check[@]}" --output "$OUT/peers.jsonl" > /dev/null 2>> "$LOG" || say "torch peer $name: no result (log)"
  if [ $big = 0 ]; then
    say "onnxruntime $name"
    timeout 120 python3 harness/runners/ort-python/ort_generate.py "$dir" "${BENCH_ARGS[@]}" --name "$name" \
      --output "$OUT/peers.jsonl" > /dev/null 2>> "$LOG" || say "onnxruntime peer $name failed"
  else
    say "onnxruntime $name: left out (CPU provider on a 0.85 B f16 decoder does not fit the time budget)"
  fi
done

python3 scripts/generation_table.py "$OUT/generate.jsonl" "$OUT/peers.jsonl" > "$OUT/summary.md" 2>> "$LOG"
cat "$OUT/summary.md" | tee -a "$LOG"
say "done"
