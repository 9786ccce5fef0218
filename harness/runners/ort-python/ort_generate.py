#!/usr/bin/env python3
"""onnxruntime generation peer: the benchmark of `dq-bench generate` on the same ONNX decoder.

    ort_generate.py MODEL_DIR [--prompt-len 128] [--gen-tokens 128] [--warmup 1] [--reps 5]
        [--seed 1] [--name NAME] [--output FILE.jsonl]

The decoder convention is dq-bench's (docs/commands/bench-generate.md): input 0 token ids
[batch, seq], then past K/V tensors with two dynamic dims (batch, then past length) or one (past length);
output 0 logits [batch, seq, vocab], then the presents in the order of the pasts. Same prompt
(scripts/peers/generate_common.py), a prefill, then a greedy decode loop feeding each present back
as the next past; the next token is the first maximum of the last position's logits. Session
settings as in ort_runner.py (providers from DYNQUAL_ORT_PROVIDERS, default CPU). With the CPU
provider every tensor lives on the host, so arg_max runs there too. Prints one JSON line in the
dq-bench generate layout (tool "onnxruntime generate"), also appended to --output when given.
Exit codes: 0 ran, 1 failed, 2 usage error.
"""
import argparse
import hashlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "scripts", "peers"))
import generate_common as gc  # noqa: E402
from ort_runner import thread_settings  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description="onnxruntime generation peer")
    ap.add_argument("model_dir")
    ap.add_argument("--prompt-len", type=int, default=128)
    ap.add_argument("--gen-tokens", type=int, default=128)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--name", default="")
    ap.add_argument("--output", default="")
    a = ap.parse_args()
    if a.gen_tokens < 2 or a.prompt_len < 1 or a.reps < 1:
        ap.error("--gen-tokens >= 2, --prompt-len >= 1 and --reps >= 1")
    try:
        import numpy as np
        import onnxruntime as ort
    except ImportError as e:
        print(f"ort_generate.py: python numpy and onnxruntime are needed: {e}", file=sys.stderr)
        return 1
    model_path = os.path.join(a.model_dir, "model.onnx")
    providers = os.environ.get("DYNQUAL_ORT_PROVIDERS", "CPUExecutionProvider").split(",")
    threads = thread_settings("wall")
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads["intra_op"]
    options.inter_op_num_threads = threads["inter_op"]
    session = ort.InferenceSession(model_path, sess_options=options, providers=providers)
    ins, outs = session.get_inputs(), session.get_outputs()
    out_names = [o.name for o in outs]
    vocab = outs[0].shape[-1]
    if not isinstance(vocab, int) or len(ins) != len(outs):
        print(f"ort_generate.py: unsupported: {model_path} is not a decoder step model (static vocab, "
              f"one present per past)", file=sys.stderr)
        return 1
    types = {"tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(double)": np.float64}
    empty = []
    for i in ins[1:]:
        dyn = [d for d, v in enumerate(i.shape) if not isinstance(v, int)]
        if len(dyn) not in (1, 2) or i.type not in types:
            print(f"ort_generate.py: unsupported: past input '{i.name}' {i.type}{i.shape} needs one or two "
                  f"dynamic dims ([batch,] past)", file=sys.stderr)
            return 1
        shape = list(i.shape)
        if len(dyn) == 2:
            shape[dyn[0]] = 1
        shape[dyn[-1]] = 0
        empty.append((i.name, np.zeros(shape, dtype=types[i.type])))
    prompt = gc.prompt_tokens(vocab, a.prompt_len, a.seed)

    def generate():
        start = gc.now_ms()
        feeds = {ins[0].name: np.array([prompt], dtype=np.int64)}
        feeds.update({n: z for n, z in empty})
        times, tokens = [], []
        for _ in range(a.gen_tokens):
            res = session.run(out_names, feeds)
            nxt = int(np.argmax(res[0][0, -1, :]))
            tokens.append(nxt)
            times.append(gc.now_ms())
            feeds = {ins[0].name: np.array([[nxt]], dtype=np.int64)}
            feeds.update({i.name: r for i, r in zip(ins[1:], res[1:])})
        return start, times, tokens

    for _ in range(a.warmup):
        generate()
    runs = [generate() for _ in range(a.reps)]
    import onnx
    from onnx import numpy_helper
    weight_bytes = sum(int(numpy_helper.to_array(t, a.model_dir).nbytes) for t in onnx.load(
        model_path, load_external_data=False).graph.initializer)
    with open(model_path, "rb") as f:
        model_hash = hashlib.sha256(f.read()).hexdigest()
    params = {"prompt_len": a.prompt_len, "gen_tokens": a.gen_tokens, "warmup": a.warmup, "reps": a.reps,
              "seed": a.seed, "batch": 1}
    kv = str(empty[0][1].dtype) if empty else ""
    doc = gc.document("onnxruntime generate", f"onnxruntime {ort.__version__} {','.join(providers)}",
                      a.name or os.path.basename(os.path.normpath(a.model_dir)), model_hash, model_path, "cpu",
                      "", params, vocab, kv, weight_bytes, prompt, runs)
    gc.emit(doc, a.output or None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
