#!/usr/bin/env python3
"""Tests of the generation scripts' host-side parts (no numpy, torch or onnxruntime needed):
the prompt and TTFT/TPS definitions of scripts/peers/generate_common.py against hand-computed
values and dq-bench's SplitMix64 constant, a peer document in the dq-bench layout,
scripts/generation_table.py on the report fixture, and gpu-generate-versus.sh with a fake dq-bench."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts", "peers"))
import generate_common as gc  # noqa: E402

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: " + what, file=sys.stderr)


# SplitMix64 of seed 0 starts with 0xe220a8397b1dcdaf (Steele, Lea, Flood 2014), as dq-bench's test.
check(gc.prompt_tokens(1000, 1, 0) == [0xE220A8397B1DCDAF % 1000], "prompt token 0 of seed 0")
check(len(gc.prompt_tokens(7, 5, 9)) == 5 and all(0 <= t < 7 for t in gc.prompt_tokens(7, 5, 9)), "prompt range")
# TTFT = 107.5 - 100 = 7.5 ms; TPS = 4 tokens / 0.040 s = 100.
times = [107.5, 117.5, 127.5, 137.5, 147.5]
check(gc.ttft_ms(100.0, times) == 7.5, "ttft")
check(abs(gc.tokens_per_second(times) - 100.0) < 1e-9, "tps")
for bad in (lambda: gc.tokens_per_second([5.0]), lambda: gc.ttft_ms(0.0, []), lambda: gc.ttft_ms(9.0, [5.0])):
    try:
        bad()
        check(False, "an invalid timing is refused")
    except ValueError:
        pass

# A peer document: two repetitions, limit from a measured copy bandwidth.
runs = [(0.0, [10.0, 20.0, 30.0], [1, 2, 3]), (0.0, [12.0, 22.0, 42.0], [1, 2, 3])]
doc = gc.document("torch-eager generate", "torch test", "m", "", "m/model.onnx", "cuda", "GPU", {
    "prompt_len": 4, "gen_tokens": 3, "warmup": 0, "reps": 2, "seed": 1, "batch": 1}, 64, "float16", 2000,
    [1, 2, 3, 4], runs, peak_device_bytes=123, copy_gbps=0.004)
check(doc["ttft_ms"]["samples"] == [10.0, 12.0], "ttft samples")
check(doc["tps"]["samples"] == [100.0, 2 / 0.030], "tps samples: 2 / 0.020 s and 2 / 0.030 s")
check(abs(doc["limits"]["bandwidth_limit_tps"] - 2000.0) < 1e-9, "bandwidth limit = 4e6 B/s / 2000 B = 2000 tok/s")
check(doc["tokens_same_every_rep"] is True and doc["tokens"] == [1, 2, 3], "tokens")
json.dumps(doc, allow_nan=False)

# The quick-look table reads the report fixture.
fixture = os.path.join(ROOT, "reports", "test", "fixtures", "generation", "dq-bench-generate.jsonl")
out = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "generation_table.py"), fixture],
                     capture_output=True, text=True)
check(out.returncode == 0, "generation_table.py runs: " + out.stderr)
check("| tiny_decoder | dynqual | hip | 7 | 9 | 3 | 11.00 | 50.0 | 4000.0 | 104.17 | 48 | 1000.0 | 200.0 | launch | 25.0 |"
      in out.stdout, "generation_table.py row: " + out.stdout)

# gpu-generate-versus.sh only collects runs (the comparison is computed by `dynqual bench generate
# --import`, tested in harness/test/store/GenerationVersusTest.cpp and bench_generate_e2e.sh).
with tempfile.TemporaryDirectory() as tmp:
    # gpu-generate-versus.sh without a GPU: a fake dq-bench prints a TPS from its X setting and
    # fails when X=fail.
    carry = os.path.join(tmp, "carry", "M")
    os.makedirs(carry)
    for name in ("model.dqp", "model.onnx"):
        open(os.path.join(carry, name), "w").close()
    bench = os.path.join(tmp, "bench.sh")
    with open(bench, "w") as f:
        f.write('#!/bin/bash\n[ "${X:-}" = fail ] && exit 3\n'
                'echo "{\\"engine\\":\\"fake ${X:-100}\\",\\"tps\\":{\\"median\\":${X:-100}},'
                '\\"ttft_ms\\":{\\"median\\":1}}"\n')
    os.chmod(bench, 0o755)

    def run_versus(engines, cycles):
        env = dict(os.environ, DQ_BENCH=bench, ENGINES=engines, CYCLES=cycles)
        return subprocess.run(["bash", os.path.join(ROOT, "scripts", "gpu-generate-versus.sh"),
                               os.path.join(tmp, "carry"), "M", os.path.join(tmp, "out")],
                              cwd=ROOT, env=env, capture_output=True, text=True)

    r = run_versus("a b:X=120", "2")
    check(r.returncode == 0 and "Preview" in r.stdout and "| cycle | a | b |" in r.stdout and
          "| 1 | 100.0 | 120.0 |" in r.stdout and "bench generate --import" in r.stdout,
          f"versus.sh: two engines, runs and a labelled preview: exit {r.returncode} {r.stdout[-400:]} {r.stderr[-300:]}")
    with open(os.path.join(tmp, "out", "versus.jsonl")) as f:
        rows = [json.loads(x) for x in f]
    check(sorted(r["engine"] for r in rows) == ["fake 100", "fake 100", "fake 120", "fake 120"] and
          sorted(r["versus_engine"] for r in rows) == ["a", "a", "b", "b"] and
          sorted(r["versus_cycle"] for r in rows) == [0, 0, 1, 1],
          "versus.sh keeps each run's own engine field and adds versus_engine and versus_cycle: " + repr(rows)[:300])
    for engines, cycles, what in (("a", "2", "one engine"), ("a b", "abc", "CYCLES not a number"),
                                  ("a:X=1 a", "2", "two engines with one name")):
        r = run_versus(engines, cycles)
        check(r.returncode == 2, f"versus.sh: {what} is a usage error (exit 2), got {r.returncode}: {r.stderr[-200:]}")
    r = run_versus("a b:X=fail", "2")
    check(r.returncode == 1 and "cycle 0: b failed" in r.stdout,
          f"versus.sh: a failed run exits 1, got {r.returncode}: {r.stdout[-300:]} {r.stderr[-300:]}")

# The peers and helper scripts at least compile (their GPU parts run on the GPU machine).
for f in ("scripts/peers/torch_generate.py", "harness/runners/ort-python/ort_generate.py",
          "scripts/decoder_weights.py", "scripts/assemble_sidecar.py"):
    r = subprocess.run([sys.executable, "-m", "py_compile", os.path.join(ROOT, f)], capture_output=True, text=True)
    check(r.returncode == 0, f + " compiles: " + r.stderr)

# Write a peer line for the import test of bench_generate_e2e.sh when asked.
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        f.write(json.dumps(doc) + "\n")
sys.exit(1 if FAILS else 0)
