#!/usr/bin/env bash
# dynqual against PyTorch eager on one decoder, interleaved, on the GPU machine (docs/devices.md,
# "dynqual against PyTorch eager"). Run from the repository root after scripts/gpu-generate.sh
# built dq-bench and regenerated the weights in the same call:
#
#   scripts/gpu-generate-versus.sh CARRY_DIR MODEL [OUT_DIR]     (OUT_DIR defaults to $OUT)
#
# ENGINES (default "dynqual torch") lists what each cycle runs: "torch" is
# scripts/peers/torch_generate.py; any other word is `dq-bench generate --device hip`, and
# NAME:VAR=VALUE[,VAR=VALUE] runs it with those settings (e.g. dynqual-gemv:DQ_HIP_GEMV=on). The
# setting DQP=FILE runs the program CARRY_DIR/MODEL/FILE instead of model.dqp (another pipeline's
# compile of the same model, e.g. noviews:DQP=model.noviews.dqp from gpu-generate-prepare.sh's
# VARIANTS); when FILE.bin is missing it shares model.dqp.bin, which the runtime's loader accepts
# only if the constants are byte-identical (the sidecar's size and FNV-1a-64 are in the program).
# CYCLES (default 6) cycles run every engine back to back on CARRY_DIR/MODEL, the order rotated
# by one each cycle, with the settings of gpu-generate.sh (PROMPT_LEN, GEN_TOKENS, WARMUP, REPS).
# DQ_DEVICE=sim runs the dynqual engines on the sim instead (a dry run without a GPU).
# Writes OUT_DIR/versus.jsonl: one line per run, its own JSON document (with every TPS and TTFT
# sample) plus versus_cycle and versus_engine. Nothing is compared here: on the build machine,
# `dynqual bench generate --import OUT_DIR/versus.jsonl` records the runs and computes the
# comparison (per-cycle TPS ratios against torch, or against the first engine when torch is not
# one of them, their median with a bootstrap interval, the Hodges-Lehmann ratio, a one-sided
# signed-rank p-value; docs/commands/bench-generate.md). OUT_DIR/versus-preview.md lists each
# run's own median TPS for the person at the GPU machine, labelled as a preview.
# Exit: 0 every run succeeded; 1 a run failed; 2 usage (CYCLES not a whole number >= 1, fewer
# than two engines, two engines with one name, a missing model or dq-bench).
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
# Added keys only: a run's own "engine" (a peer's name and version) must reach the store unchanged.
tag() { python3 -c 'import json,sys; d=json.loads(sys.stdin.readline()); d["versus_cycle"]=int(sys.argv[1]); d["versus_engine"]=sys.argv[2]; print(json.dumps(d))' "$1" "$2"; }
ENGINES=${ENGINES:-dynqual torch}
read -r -a engines <<< "$ENGINES"
usage() { echo "gpu-generate-versus.sh: $*" >&2; exit 2; }
[[ "$CYCLES" =~ ^[1-9][0-9]*$ ]] || usage "CYCLES must be a whole number >= 1, got '$CYCLES'"
[ ${#engines[@]} -ge 2 ] || usage "ENGINES must name at least two engines, got '$ENGINES'"
names=()
for spec in "${engines[@]}"; do
  name=${spec%%:*}
  [[ "$name" =~ ^[A-Za-z0-9_.-]+$ ]] || usage "engine name '$name' (from '$spec') must be letters, digits, '_', '.' or '-'"
  for seen in "${names[@]}"; do [ "$seen" != "$name" ] || usage "two engines are named '$name'; give each its own name"; done
  names+=("$name")
done
base=${names[0]}
for name in "${names[@]}"; do [ "$name" != torch ] || base=torch; done
status=0
run_engine() {  # cycle, engine spec
  local c=$1 spec=$2 name=${2%%:*} line envs=()
  if [ "$name" = torch ]; then
    line=$(timeout 240 python3 scripts/peers/torch_generate.py "$DIR" --device cuda "${ARGS[@]}" --name "$MODEL" 2>> "$LOG" | tail -1)
  else
    [ "$spec" != "$name" ] && IFS=, read -r -a envs <<< "${spec#*:}"
    local dqp=model.dqp kept=() e
    for e in "${envs[@]}"; do if [[ "$e" == DQP=* ]]; then dqp=${e#DQP=}; else kept+=("$e"); fi; done
    if [ ! -e "$DIR/$dqp.bin" ] && [ -e "$DIR/model.dqp.bin" ]; then ln -s model.dqp.bin "$DIR/$dqp.bin"; fi
    line=$(env "${kept[@]}" timeout 240 "$BENCH" generate "$DIR/$dqp" --device "${DQ_DEVICE:-hip}" "${ARGS[@]}" --name "$MODEL" 2>> "$LOG")
  fi
  if [ -n "$line" ] && echo "$line" | tag "$c" "$name" >> "$OUT/versus.jsonl"; then :; else
    echo "cycle $c: $name failed" | tee -a "$LOG"; status=1
  fi
}
n=${#engines[@]}
for ((c = 0; c < CYCLES; c++)); do
  for ((k = 0; k < n; k++)); do run_engine $c "${engines[$(((c + k) % n))]}"; done
  echo "cycle $c done" | tee -a "$LOG"
done
# A preview only: each run's median TPS as the run itself reported it, no ratio and no test.
python3 - "$OUT/versus.jsonl" "$base" > "$OUT/versus-preview.md" <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
engines = list(dict.fromkeys(r["versus_engine"] for r in runs))
tps = {(r["versus_cycle"], r["versus_engine"]): r.get("tps", {}).get("median") for r in runs}
print("Preview: each run's own median TPS. The comparison (ratios, intervals, signed-rank test) is")
print(f"computed by `dynqual bench generate --import versus.jsonl --base {sys.argv[2]}` on the build machine.")
print()
print("| cycle | " + " | ".join(engines) + " |")
print("|---:|" + "---:|" * len(engines))
for c in sorted({r["versus_cycle"] for r in runs}):
    cells = [tps.get((c, e)) for e in engines]
    print(f"| {c} | " + " | ".join("-" if v is None else f"{v:.1f}" for v in cells) + " |")
PY
cat "$OUT/versus-preview.md"
echo "runs in $OUT/versus.jsonl: bring it back and run \`dynqual bench generate --import versus.jsonl --base $base\`"
exit $status
