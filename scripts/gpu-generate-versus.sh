#!/usr/bin/env bash
# dynqual against PyTorch eager on one decoder, interleaved, on the GPU machine (docs/devices.md,
# "dynqual against PyTorch eager"). Run from the repository root after scripts/gpu-generate.sh
# built dq-bench and regenerated the weights in the same call:
#
#   scripts/gpu-generate-versus.sh CARRY_DIR MODEL [OUT_DIR]     (OUT_DIR defaults to $OUT)
#
# Runs CYCLES (default 6) cycles; each runs `dq-bench generate` and scripts/peers/torch_generate.py
# on CARRY_DIR/MODEL back to back, dynqual first in even cycles and torch first in odd ones, with
# the settings of gpu-generate.sh (PROMPT_LEN, GEN_TOKENS, WARMUP, REPS). Writes
# OUT_DIR/versus.jsonl (one line per run, tagged with cycle and engine) and
# OUT_DIR/versus.md (scripts/generation_versus.py: per-cycle TPS ratios, their median with a
# bootstrap interval, and a one-sided signed-rank p-value). Exit: 0 written, 1 a run failed,
# 2 usage.
set -uo pipefail
CARRY=${1:?usage: scripts/gpu-generate-versus.sh CARRY_DIR MODEL [OUT_DIR]}
MODEL=${2:?usage: scripts/gpu-generate-versus.sh CARRY_DIR MODEL [OUT_DIR]}
OUT=${3:-${OUT:?set OUT or pass OUT_DIR}}
CYCLES=${CYCLES:-6}
PROMPT_LEN=${PROMPT_LEN:-128} GEN_TOKENS=${GEN_TOKENS:-128} WARMUP=${WARMUP:-1} REPS=${REPS:-5}
BENCH=${DQ_BENCH:-${BUILD_DIR:-build-gpu-generate}/dq-bench}
DIR=$CARRY/$MODEL
[ -f "$DIR/model.dqp" ] && [ -f "$DIR/model.onnx" ] || { echo "gpu-generate-versus.sh: $DIR lacks model.dqp or model.onnx" >&2; exit 2; }
[ -x "$BENCH" ] || { echo "gpu-generate-versus.sh: no dq-bench at $BENCH (run scripts/gpu-generate.sh first)" >&2; exit 2; }
mkdir -p "$OUT"
LOG=$OUT/versus.log
: > "$OUT/versus.jsonl"
ARGS=(--prompt-len "$PROMPT_LEN" --gen-tokens "$GEN_TOKENS" --warmup "$WARMUP" --reps "$REPS")
tag() { python3 -c 'import json,sys; d=json.loads(sys.stdin.readline()); d["cycle"]=int(sys.argv[1]); d["engine"]=sys.argv[2]; print(json.dumps(d))' "$1" "$2"; }
status=0
run_dynqual() {
  local line
  line=$(timeout 240 "$BENCH" generate "$DIR/model.dqp" --device hip "${ARGS[@]}" --name "$MODEL" 2>> "$LOG") &&
    echo "$line" | tag "$1" dynqual >> "$OUT/versus.jsonl" || { echo "cycle $1: dq-bench failed" | tee -a "$LOG"; status=1; }
}
run_torch() {
  local line
  line=$(timeout 240 python3 scripts/peers/torch_generate.py "$DIR" --device cuda "${ARGS[@]}" --name "$MODEL" 2>> "$LOG" | tail -1) &&
    [ -n "$line" ] && echo "$line" | tag "$1" torch >> "$OUT/versus.jsonl" || { echo "cycle $1: torch failed" | tee -a "$LOG"; status=1; }
}
for ((c = 0; c < CYCLES; c++)); do
  if ((c % 2 == 0)); then run_dynqual $c; run_torch $c; else run_torch $c; run_dynqual $c; fi
  echo "cycle $c done" | tee -a "$LOG"
done
python3 scripts/generation_versus.py "$OUT/versus.jsonl" | tee "$OUT/versus.md"
exit $status
