#!/usr/bin/env python3
"""Rebuilds a compiled program's constants sidecar (X.dqp.bin) from its recipe.

    scripts/assemble_sidecar.py PROGRAM.dqp MODEL_DIR

`dynqual bench sidecar-recipe PROGRAM.dqp MODEL_DIR` writes PROGRAM.dqp.bin.recipe.json and
PROGRAM.dqp.bin.inline: each constant of the sidecar is either a whole tensor of
MODEL_DIR/model.onnx.data (regenerated with scripts/decoder_weights.py) or bytes of the inline
file; bytes between constants are zero. This writes PROGRAM.dqp.bin accordingly. The runtime's
loader then checks its size and FNV-1a-64 against what the program records (docs/artifact.md),
so a wrong weights file is refused when the program is read. Standard library only.
"""
import json
import os
import sys


def assemble(program, model_dir):
    with open(program + ".bin.recipe.json") as f:
        r = json.load(f)
    if r.get("format") != "dynqual-sidecar-recipe" or r.get("version") != 1:
        raise RuntimeError("%s.bin.recipe.json: not a version-1 sidecar recipe" % program)
    weights = os.path.join(model_dir, r["weights"]["file"])
    if os.path.getsize(weights) != r["weights"]["bytes"]:
        raise RuntimeError("%s: %d bytes, the recipe needs %d" % (weights, os.path.getsize(weights), r["weights"]["bytes"]))
    inline_path = os.path.join(os.path.dirname(program), r["inline"])
    with open(inline_path, "rb") as f:
        inline = f.read()
    tmp = program + ".bin.tmp"
    with open(weights, "rb") as w, open(tmp, "wb") as out:
        out.truncate(r["bytes"])  # zeros between constants
        for s in r["segments"]:
            out.seek(s["offset"])
            if "data_offset" in s:
                w.seek(s["data_offset"])
                left = s["length"]
                while left:
                    block = w.read(min(left, 1 << 24))
                    if not block:
                        raise RuntimeError("%s: ends before byte %d" % (weights, s["data_offset"] + s["length"]))
                    out.write(block)
                    left -= len(block)
            else:
                out.write(inline[s["inline_offset"]:s["inline_offset"] + s["length"]])
    os.replace(tmp, program + ".bin")
    return r["bytes"]


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().split("\n")[2].strip(), file=sys.stderr)
        return 2
    try:
        n = assemble(sys.argv[1], sys.argv[2])
    except (OSError, RuntimeError, KeyError, ValueError) as e:
        print("assemble_sidecar.py: %s" % e, file=sys.stderr)
        return 1
    print("%s.bin: %d bytes assembled" % (sys.argv[1], n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
