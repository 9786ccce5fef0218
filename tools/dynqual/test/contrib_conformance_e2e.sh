#!/usr/bin/env bash
# The contrib-op conformance table end to end, through the real binaries: make-model
# contrib-cases, qualify on the sim against the reference's data sets, then oracle (dq, the
# reference and onnxruntime CPU pairwise); the builder-layout decoder through qualify, oracle and
# greedy generation against ORT. Usage: contrib_conformance_e2e.sh DYNQUAL DQ_BENCH SOURCE_DIR
set -euo pipefail
DYNQUAL=$1 DQ_BENCH=$2 SRC=$3
T=$(mktemp -d /tmp/dq-contrib-e2e-XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$DYNQUAL" make-model contrib-cases -o "$T/cases" > "$T/make.txt" 2> /dev/null
# The table by hand: MatMulNBits 3 bits x 4 blocks x 2 K x 3 zero points x 2 dtypes = 144, less
# the 16 of 8 bits with float zero points = 128 cases of 2 sets; GroupQueryAttention 3 x 2 x 3 x 4
# = 72 (18 each of prompt 2 sets, decode 3, shared buffer 2, continued prompt 2: 162 sets);
# RotaryEmbedding 3 x 2 x 2 x 2 x 2 = 48 less 8 = 40 of 2 sets; the two norms 16 each of 2 sets.
# Cases 128 + 72 + 40 + 32 = 272; sets 256 + 162 + 80 + 64 = 562.
grep -q "wrote 272 cases (562 data sets)" "$T/make.txt" || fail "case count: $(cat "$T/make.txt")"

"$DYNQUAL" qualify "$T/cases" --no-db --reps 1 --warmup 0 --bindings 0 > "$T/qualify.txt" 2>&1 ||
  { tail -40 "$T/qualify.txt"; fail "qualify on the sim"; }
grep -q "272 models: 272 passed, 0 failed" "$T/qualify.txt" || fail "qualify summary: $(tail -3 "$T/qualify.txt")"

"$DYNQUAL" oracle "$T/cases" --format json > "$T/oracle.json" 2> /dev/null ||
  { "$DYNQUAL" oracle "$T/cases" 2> /dev/null | tail -40; fail "oracle found a disagreement"; }
python3 - "$T/oracle.json" <<'PY' || fail "oracle JSON"
import json, sys
j = json.load(open(sys.argv[1]))
cases = j["cases"]
assert len(cases) == 562, len(cases)
for c in cases:
    assert c["verdict"] == "pass", (c["model"], c["data_set"], c["verdict"])
    for k in ("dq_vs_reference", "reference_vs_ort", "dq_vs_ort"):
        assert c[k]["ok"] and c[k]["elements"] > 0, (c["model"], k)
by = j["by_op"]
assert sorted(by) == ["GroupQueryAttention", "MatMulNBits", "RotaryEmbedding", "SimplifiedLayerNormalization",
                      "SkipSimplifiedLayerNormalization"], sorted(by)
# accuracy_level 4 is rewritten for ORT and said so on every MatMulNBits case.
assert all("accuracy_level" in c["notes"] for c in cases if c["model"].startswith("MatMulNBits"))
# The padded first prompts leave out exactly the padded query rows: set 1 has one padded token.
padded = [c for c in cases if "_prompt" in c["model"] and c["data_set"] == "test_data_set_1"]
assert len(padded) == 18 and all("padded query positions" in c["notes"] for c in padded)
PY

# The oracle can fail: a dq arm with a rotary knob disagrees with both oracles.
if "$DYNQUAL" oracle "$T/cases/RotaryEmbedding_bsh_half_pos1_f32" --pipeline 'production{inject=rotary-layout-swap}' \
  > "$T/bad.txt" 2> /dev/null; then
  fail "oracle passed a dq arm that mixes up the rotary layouts"
fi
grep -q "dq-mismatch" "$T/bad.txt" || fail "no dq-mismatch: $(cat "$T/bad.txt")"
# The builder-layout int4 decoder, fp32 symmetric and fp16 asymmetric: every data set (prompt,
# decode, padded batch) and binding passes on the sim, and against ORT.
"$DYNQUAL" make-model genai-decoder --preset tiny -o "$T/genai/fp32" > /dev/null
"$DYNQUAL" make-model genai-decoder --preset tiny --dtype float16 --asymmetric -o "$T/genai/fp16" > /dev/null
"$DYNQUAL" qualify "$T/genai" --no-db --reps 1 --warmup 0 > "$T/genai.txt" 2>&1 || { cat "$T/genai.txt"; fail "qualify genai-decoder"; }
grep -q "2 models: 2 passed, 0 failed" "$T/genai.txt" || fail "genai-decoder qualify: $(tail -3 "$T/genai.txt")"
"$DYNQUAL" oracle "$T/genai" > "$T/genai-oracle.txt" 2> /dev/null || { cat "$T/genai-oracle.txt"; fail "genai-decoder oracle"; }
grep -q "2 models, 6 cases: 6 passed, 0 did not" "$T/genai-oracle.txt" || fail "genai oracle: $(cat "$T/genai-oracle.txt")"
# Greedy generation on the sim (dq-bench: prefill on 8 prompt ids, 31 decode steps) against
# onnxruntime CPU on the same weights (the oracle's copy with accuracy_level 0). Where the tokens
# first differ, ORT's top two logits must be a near tie (gap <= 5e-2, MatMulNBits' tolerance).
"$DYNQUAL" oracle "$T/genai" --work-dir "$T/ow" > /dev/null 2>&1
for m in fp32 fp16; do
  "$DYNQUAL" compile "$T/genai/$m" -o "$T/$m.dqp" > /dev/null
  "$DQ_BENCH" generate "$T/$m.dqp" --prompt-len 8 --gen-tokens 32 --reps 1 --warmup 0 > "$T/$m.dq.json"
  prompt=$(python3 -c "import json,sys; print(','.join(map(str, json.load(open(sys.argv[1]))['prompt'])))" "$T/$m.dq.json")
  node "$SRC/harness/runners/ort-node/ort-generate.js" --model "$T/ow/$m/ort-model/model.onnx" --prompt "$prompt" \
    --gen-tokens 32 > "$T/$m.ort.json" || fail "ort-generate on $m"
  python3 - "$T/$m.dq.json" "$T/$m.ort.json" "$m" <<'PY' || fail "generation of $m differs from ORT's"
import json, sys
dq = json.load(open(sys.argv[1]))["tokens"]
ort = json.load(open(sys.argv[2]))
assert len(dq) == 32 and len(ort["tokens"]) == 32, (len(dq), len(ort["tokens"]))
for k, (a, b) in enumerate(zip(dq, ort["tokens"])):
    if a != b:
        assert ort["margins"][k] <= 5e-2, f"token {k}: dq {a}, ORT {b}, ORT's top-two gap {ort['margins'][k]}"
        print(f"{sys.argv[3]}: first difference at token {k}, a near tie (gap {ort['margins'][k]:.3g})")
        break
else:
    print(f"{sys.argv[3]}: 32 greedy tokens equal to ORT's")
PY
done
echo "contrib conformance: 272 cases, 562 data sets, all three comparisons within tolerance; genai-decoder tiny passes"
