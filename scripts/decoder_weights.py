#!/usr/bin/env python3
"""Regenerates the weights of a `dynqual make-model decoder --external-data` model.

The large model.onnx.data never travels: make-model writes model.onnx (weights as ONNX external
data) and model.onnx.data.json (the generator recipe, every tensor's offset and length, and the
sha256 of the data file). This script rebuilds model.onnx.data from the recipe alone and checks
the sha256; a mismatch is an error and the file is removed.

    scripts/decoder_weights.py MODEL_DIR [--check-only]

Recipe "splitmix64-symmetric-v1": value k of the stream of seed S is
    z = SplitMix64 output k (state S + (k + 1) * 0x9E3779B97F4A7C15, then the two xor-shift-multiply
        rounds and a final xor-shift, all mod 2^64)
    u = (z >> 40) * 2^-23 - 1                        (exact in double)
    matrix [rows, cols]: u / sqrt(rows); gain: 1 + 0.25 * u
computed in double and rounded once to the dtype (float32, or float16 round to nearest even).
Tensor t takes the values draw .. draw + numel - 1 in row-major order. Uses numpy when present
(the GPU machine has it), else pure Python (fine for small models).
"""
import argparse
import hashlib
import json
import math
import os
import struct
import sys

GAMMA = 0x9E3779B97F4A7C15
MASK = (1 << 64) - 1


def _values_python(seed, draw, count, kind, rows):
    out = []
    scale = 1.0 / math.sqrt(float(rows)) if kind == "matrix" else None
    for k in range(draw, draw + count):
        z = (seed + (k + 1) * GAMMA) & MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        u = float(z >> 40) * 2.0 ** -23 - 1.0
        out.append(u * scale if kind == "matrix" else 1.0 + 0.25 * u)
    return out


def _bytes_python(values, dtype):
    fmt = "<%d%s" % (len(values), "e" if dtype == "float16" else "f")
    # struct's 'e' and 'f' round a double once to nearest even, as the generator does.
    return struct.pack(fmt, *values)


def _bytes_numpy(np, seed, draw, count, kind, rows, dtype, chunk=1 << 24):
    parts = []
    scale = 1.0 / np.sqrt(np.float64(rows)) if kind == "matrix" else None
    for start in range(draw, draw + count, chunk):
        n = min(chunk, draw + count - start)
        k = np.arange(start + 1, start + 1 + n, dtype=np.uint64)
        with np.errstate(over="ignore"):
            z = np.uint64(seed) + k * np.uint64(GAMMA)
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
        u = (z >> np.uint64(40)).astype(np.float64) * (2.0 ** -23) - 1.0
        v = u * scale if kind == "matrix" else 1.0 + 0.25 * u
        parts.append(v.astype(np.float16 if dtype == "float16" else np.float32).astype("<" + ("f2" if dtype == "float16" else "f4")).tobytes())
    return b"".join(parts)


def tensor_bytes(recipe, t):
    """The little-endian bytes of recipe tensor `t` (a dict with draw, dims, kind)."""
    count = 1
    for d in t["dims"]:
        count *= d
    rows = t["dims"][0]
    try:
        import numpy as np
    except ImportError:
        np = None
    if np is not None:
        return _bytes_numpy(np, recipe["seed"], t["draw"], count, t["kind"], rows, recipe["dtype"])
    return _bytes_python(_values_python(recipe["seed"], t["draw"], count, t["kind"], rows), recipe["dtype"])


def regenerate(model_dir, check_only=False):
    """Writes MODEL_DIR/model.onnx.data from model.onnx.data.json and checks its sha256.
    Returns the sha256; raises RuntimeError naming the file on a mismatch."""
    with open(os.path.join(model_dir, "model.onnx.data.json")) as f:
        manifest = json.load(f)
    recipe = manifest["recipe"]
    if recipe.get("generator") != "splitmix64-symmetric-v1":
        raise RuntimeError("unsupported: weight generator %r" % recipe.get("generator"))
    path = os.path.join(model_dir, manifest["file"])
    if not check_only:
        tmp = path + ".tmp"
        with open(tmp, "wb") as out:
            pos = 0
            for t in recipe["tensors"]:
                out.write(b"\0" * (t["offset"] - pos))
                data = tensor_bytes(recipe, t)
                if len(data) != t["length"]:
                    raise RuntimeError("%s: tensor %s has %d bytes, the recipe says %d" % (path, t["name"], len(data), t["length"]))
                out.write(data)
                pos = t["offset"] + t["length"]
        os.replace(tmp, path)
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 24), b""):
            h.update(block)
    if h.hexdigest() != manifest["sha256"]:
        if not check_only:
            os.remove(path)
        raise RuntimeError("%s: sha256 %s, the model records %s" % (path, h.hexdigest(), manifest["sha256"]))
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model_dir")
    ap.add_argument("--check-only", action="store_true", help="only check the sha256 of the existing file")
    a = ap.parse_args()
    try:
        sha = regenerate(a.model_dir, a.check_only)
    except (OSError, RuntimeError, KeyError, ValueError) as e:
        print("decoder_weights.py: %s" % e, file=sys.stderr)
        return 1
    print("%s/model.onnx.data: sha256 %s ok" % (a.model_dir, sha))
    return 0


if __name__ == "__main__":
    sys.exit(main())
