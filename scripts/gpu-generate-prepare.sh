#!/usr/bin/env bash
# Prepares the folder gpu-generate.sh runs on the GPU machine (docs/devices.md, "Generation
# benchmark"). Run here, from the repository root, after building (needs build/tools/dynqual/dynqual):
#
#   scripts/gpu-generate-prepare.sh [CARRY_DIR]     (default .dev/gpu-generate, ignored by git)
#
# For each decoder it writes CARRY_DIR/NAME/ with model.onnx (+ model.onnx.data when small),
# model.dqp and either model.dqp.bin (small) or the sidecar recipe (model.dqp.bin.recipe.json and
# .inline) plus model.onnx.data.json, from which the GPU machine regenerates the weights
# (scripts/decoder_weights.py) and the sidecar (scripts/assemble_sidecar.py). Decoders:
#   decoder_tiny      corpus/decoder_tiny (f32)
#   kv_decoder        ../shared/models/kv_decoder (f32)
#   decoder_f16_small make-model decoder --layers 2 --hidden 256 --heads 4 --kv-heads 2 --vocab 1024
#                     --mlp 704 --dtype float16 --external-data (the big one's path, in seconds)
#   decoder_0p85b     make-model decoder --vocab 32000 --hidden 2048 --layers 16 --heads 16
#                     --kv-heads 4 --mlp 5632 --dtype float16 --external-data (0.85 B parameters;
#                     skipped with DQ_SKIP_BIG=1)
# The large files (model.onnx.data, model.dqp.bin of the big decoders) stay in a work folder here.
# VARIANTS="NAME=PIPELINE ..." also compiles each decoder with that pipeline into model.NAME.dqp
# (e.g. VARIANTS="noviews=production{views=false}"), for gpu-generate-versus.sh's DQP= setting;
# ONLY="decoder_tiny kv_decoder ..." limits the decoders prepared.
set -euo pipefail
CARRY=${1:-.dev/gpu-generate}
DYNQUAL=${DYNQUAL:-build/tools/dynqual/dynqual}
WORK=${DQ_PREPARE_WORK:-.dev/gpu-generate-work}
mkdir -p "$CARRY" "$WORK"

small() {  # NAME MODEL_DIR: carried whole
  local name=$1 src=$2 dst=$CARRY/$1
  mkdir -p "$dst"
  cp -f "$src/model.onnx" "$dst/"
  if [ -f "$src/model.onnx.data" ]; then cp -f "$src/model.onnx.data" "$dst/"; fi
  chmod u+w "$dst"/*
  "$DYNQUAL" compile "$src" -o "$dst/model.dqp"
  variants "$src" "$dst"
}

variants() {  # SRC DST [shared]: model.NAME.dqp for each NAME=PIPELINE of VARIANTS
  local v name
  for v in ${VARIANTS:-}; do
    name=model.${v%%=*}.dqp
    if [ "${3:-}" = shared ]; then
      # A generated decoder's sidecar is rebuilt on the GPU machine for model.dqp only; the
      # variant shares it, so its constants must be byte-identical.
      "$DYNQUAL" compile "$1" --pipeline "${v#*=}" -o "$1/$name"
      cmp -s "$1/model.dqp.bin" "$1/$name.bin" ||
        { echo "gpu-generate-prepare.sh: $name has other constants than model.dqp; it cannot share the sidecar" >&2; exit 1; }
      rm -f "$1/$name.bin"
      cp "$1/$name" "$2/"
    else
      "$DYNQUAL" compile "$1" --pipeline "${v#*=}" -o "$2/$name"
    fi
  done
}

wanted() { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]; }

generated() {  # NAME ARGS...: weights regenerated on the GPU machine
  local name=$1; shift
  local src=$WORK/$name dst=$CARRY/$name
  rm -rf "$src" && mkdir -p "$dst"
  "$DYNQUAL" make-model decoder "$@" --external-data --no-data-sets -o "$src"
  "$DYNQUAL" compile "$src" -o "$src/model.dqp"
  variants "$src" "$dst" shared
  "$DYNQUAL" bench sidecar-recipe "$src/model.dqp" "$src"
  cp "$src/model.onnx" "$src/model.onnx.data.json" "$src/model.dqp" "$src/model.dqp.bin.recipe.json" \
     "$src/model.dqp.bin.inline" "$dst/"
}

wanted decoder_tiny && small decoder_tiny corpus/decoder_tiny
wanted kv_decoder && small kv_decoder ../shared/models/kv_decoder
wanted decoder_f16_small && generated decoder_f16_small --layers 2 --hidden 256 --heads 4 --kv-heads 2 --vocab 1024 --mlp 704 \
  --dtype float16 --seed 5
if [ "${DQ_SKIP_BIG:-0}" != 1 ] && wanted decoder_0p85b; then
  generated decoder_0p85b --vocab 32000 --hidden 2048 --layers 16 --heads 16 --kv-heads 4 --mlp 5632 \
    --dtype float16 --seed 7
fi
du -sh "$CARRY"
