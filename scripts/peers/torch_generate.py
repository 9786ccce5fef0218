#!/usr/bin/env python3
"""PyTorch-eager generation peer for `dynqual make-model decoder` models.

Loads the ONNX initializers of MODEL_DIR/model.onnx (external data included) into a torch module
that computes what the generated graph computes (RMSNorm, grouped-query attention with an explicit
KV cache grown by concatenation, SiLU-gated MLP, LM head), then runs the same benchmark as
`dq-bench generate`: the same prompt (SplitMix64 of --seed modulo vocab), a prefill, a greedy
decode loop with arg_max on the device and one token id per step read by the host, TTFT from the
start of the prefill to the first id on the host, TPS = (n - 1) / (last - first token time). It
prints one JSON line in the dq-bench generate layout (tool "torch-eager generate"), also appended
to --output when given. A copy kernel (torch copy_ of --copy-mib MiB) measured in the same process
gives the bandwidth limit.

    scripts/peers/torch_generate.py MODEL_DIR [--device cuda] [--prompt-len 128] [--gen-tokens 128]
        [--warmup 1] [--reps 5] [--seed 1] [--name NAME] [--output FILE.jsonl] [--check-onnx]

--check-onnx first compares the module's logits with onnxruntime (CPU) on a short prompt.
The architecture is read from the initializers: q_shape = [0, 0, kv_heads, group, head_dim],
embed [vocab, hidden], wq_L per layer, w_gate_0 [hidden, mlp]. Other decoders (e.g. the exported
kv_decoder) are refused: their graphs are not this architecture.
"""
import argparse
import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate_common as gc  # noqa: E402


def load_weights(model_path):
    import onnx
    from onnx import numpy_helper
    model = onnx.load(model_path)  # resolves external data beside the model
    w = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    return model, w


def architecture(w):
    for k in ("q_shape", "embed", "wq_0", "w_gate_0", "lm_head", "final_norm"):
        if k not in w:
            raise RuntimeError(f"unsupported: not a make-model decoder (no initializer '{k}')")
    _, _, kv, group, head_dim = [int(x) for x in w["q_shape"]]
    layers = 0
    while f"wq_{layers}" in w:
        layers += 1
    vocab, hidden = w["embed"].shape
    return {"layers": layers, "kv_heads": kv, "group": group, "head_dim": head_dim, "hidden": int(hidden),
            "vocab": int(vocab), "mlp": int(w["w_gate_0"].shape[1]), "eps": float(w["rms_eps"]),
            "scale": float(w["attn_scale"]), "mask_fill": float(w["mask_fill"])}


def build(torch, w, arch, device):
    dtype = torch.float16 if w["embed"].dtype.name == "float16" else torch.float32
    t = {k: torch.from_numpy(v).to(device) for k, v in w.items() if v.dtype.name in ("float16", "float32")}
    L, K, G, D, H = arch["layers"], arch["kv_heads"], arch["group"], arch["head_dim"], arch["hidden"]
    eps = torch.tensor(arch["eps"], dtype=dtype, device=device)
    scale = torch.tensor(arch["scale"], dtype=dtype, device=device)
    fill = torch.tensor(arch["mask_fill"], dtype=dtype, device=device)

    def rms(x, g):
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * g

    def step(ids, past, last_only):
        """ids [b, s]; past: 2 * L tensors [b, K, p, D]. Returns logits and the presents."""
        b, s = ids.shape
        p = past[0].shape[2]
        x = t["embed"][ids]
        # keep (i, j) iff j <= p + i, as the graph's Trilu with k = past
        keep = torch.ones(s, p + s, dtype=torch.bool, device=device).tril(diagonal=p)
        present = []
        for l in range(L):
            h = rms(x, t[f"attn_norm_{l}"])
            q = (h @ t[f"wq_{l}"]).reshape(b, s, K, G, D).permute(0, 2, 3, 1, 4)
            k = (h @ t[f"wk_{l}"]).reshape(b, s, K, D).permute(0, 2, 1, 3)
            v = (h @ t[f"wv_{l}"]).reshape(b, s, K, D).permute(0, 2, 1, 3)
            pk = torch.cat([past[2 * l], k], dim=2)
            pv = torch.cat([past[2 * l + 1], v], dim=2)
            present += [pk, pv]
            scores = (q @ pk.unsqueeze(2).transpose(-1, -2)) * scale
            scores = torch.where(keep, scores, fill)
            ctx = torch.softmax(scores, dim=-1) @ pv.unsqueeze(2)
            x = x + ctx.permute(0, 3, 1, 2, 4).reshape(b, s, H) @ t[f"wo_{l}"]
            h = rms(x, t[f"mlp_norm_{l}"])
            gate = h @ t[f"w_gate_{l}"]
            x = x + (gate * torch.sigmoid(gate) * (h @ t[f"w_up_{l}"])) @ t[f"w_down_{l}"]
        if last_only:
            x = x[:, -1:, :]
        return rms(x, t["final_norm"]) @ t["lm_head"], present

    return step, dtype


def check_against_onnxruntime(torch, step, model_path, prompt, kv_shape, dtype, dev, arch):
    """Relative L2 of the module's logits against onnxruntime (CPU) on the first 8 prompt ids;
    None, with the reason on stderr, when onnxruntime cannot run the model (e.g. no f16 kernel)."""
    try:
        import numpy as np
        import onnxruntime as ort
        sess = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
        ids = np.array([prompt[:8]], dtype=np.int64)
        np_dtype = np.float16 if dtype == torch.float16 else np.float32
        feeds = {"input_ids": ids}
        for i in sess.get_inputs()[1:]:
            feeds[i.name] = np.zeros(kv_shape(), dtype=np_dtype)
        ref = sess.run(None, feeds)[0].astype(np.float32)
    except Exception as e:  # the check is optional; the benchmark still runs
        print(f"torch_generate.py: onnxruntime check skipped: {e}", file=sys.stderr)
        return None
    with torch.inference_mode():
        past = [torch.zeros(kv_shape(), dtype=dtype, device=dev) for _ in range(2 * arch["layers"])]
        got, _ = step(torch.tensor(ids, device=dev), past, False)
    got = got.float().cpu().numpy()
    rel = float(np.linalg.norm(got - ref) / max(float(np.linalg.norm(ref)), 1e-30))
    print(f"torch_generate.py: logits vs onnxruntime: relative L2 {rel:.3e}", file=sys.stderr)
    return rel


def main():
    ap = argparse.ArgumentParser(description="PyTorch-eager generation peer")
    ap.add_argument("model_dir")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--prompt-len", type=int, default=128)
    ap.add_argument("--gen-tokens", type=int, default=128)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--copy-mib", type=int, default=256)
    ap.add_argument("--name", default="")
    ap.add_argument("--output", default="")
    ap.add_argument("--check-onnx", action="store_true")
    a = ap.parse_args()
    if a.gen_tokens < 2 or a.prompt_len < 1 or a.reps < 1:
        ap.error("--gen-tokens >= 2, --prompt-len >= 1 and --reps >= 1")
    import torch

    model_path = os.path.join(a.model_dir, "model.onnx")
    _, w = load_weights(model_path)
    arch = architecture(w)
    dev = torch.device(a.device)
    step, dtype = build(torch, w, arch, dev)
    weight_bytes = sum(int(v.nbytes) for v in w.values())
    kv_shape = lambda: (1, arch["kv_heads"], 0, arch["head_dim"])  # noqa: E731
    prompt = gc.prompt_tokens(arch["vocab"], a.prompt_len, a.seed)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)

    if a.check_onnx:
        rel = check_against_onnxruntime(torch, step, model_path, prompt, kv_shape, dtype, dev, arch)
        if rel is not None and rel > (1e-2 if dtype == torch.float16 else 1e-4):
            print("torch_generate.py: the torch module does not match the ONNX graph", file=sys.stderr)
            return 1

    def generate():
        with torch.inference_mode():
            start = gc.now_ms()
            ids = torch.tensor([prompt], dtype=torch.int64, device=dev)
            past = [torch.zeros(kv_shape(), dtype=dtype, device=dev) for _ in range(2 * arch["layers"])]
            times, tokens = [], []
            for i in range(a.gen_tokens):
                logits, past = step(ids, past, True)
                nxt = torch.argmax(logits[:, -1, :], dim=-1, keepdim=True)  # on the device
                tokens.append(int(nxt.item()))  # the one host round trip per step
                times.append(gc.now_ms())
                ids = nxt
            return start, times, tokens

    copy_gbps = None
    if dev.type == "cuda":
        n = (a.copy_mib << 20) // 4
        src = torch.zeros(n, dtype=torch.float32, device=dev)
        dst = torch.empty_like(src)
        dst.copy_(src)
        sync()
        reps = 20
        # The best of three batches: one batch read 599 GB/s right after the 0.85 B decoder's
        # weights were loaded, against 4100+ GB/s on every other model.
        for _ in range(3):
            t0 = gc.now_ms()
            for _ in range(reps):
                dst.copy_(src)
            sync()
            gbps = 2.0 * n * 4 * reps / ((gc.now_ms() - t0) / 1000.0) / 1e9
            copy_gbps = gbps if copy_gbps is None else max(copy_gbps, gbps)
        del src, dst
        torch.cuda.reset_peak_memory_stats()

    for _ in range(a.warmup):
        generate()
    runs = [generate() for _ in range(a.reps)]
    peak_dev = int(torch.cuda.max_memory_allocated()) if dev.type == "cuda" else None
    gpu = torch.cuda.get_device_name(dev) if dev.type == "cuda" else ""
    with open(model_path, "rb") as f:
        model_hash = hashlib.sha256(f.read()).hexdigest()
    params = {"prompt_len": a.prompt_len, "gen_tokens": a.gen_tokens, "warmup": a.warmup, "reps": a.reps,
              "seed": a.seed, "batch": 1, "copy_mib": a.copy_mib}
    doc = gc.document("torch-eager generate", f"torch {torch.__version__} eager", a.name or os.path.basename(
        os.path.normpath(a.model_dir)), model_hash, model_path, a.device, gpu, params, arch["vocab"],
        "float16" if dtype == torch.float16 else "float32", weight_bytes, prompt, runs, peak_dev, copy_gbps)
    gc.emit(doc, a.output or None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
