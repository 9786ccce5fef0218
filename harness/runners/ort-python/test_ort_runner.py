#!/usr/bin/env python3
"""Tests of ort_runner.py. `cli`: protocol version, usage errors, and the failure reported when
python onnx/onnxruntime are missing (always runs). `run`: a real run of the ONNX test_add model,
compared bit for bit with its stored output; exits 77 (skipped) when onnx or onnxruntime is not
importable or the ONNX test data is not installed."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "ort_runner.py")
TEST_ADD = "/usr/share/libonnx-testdata/data/node/test_add"
SKIP = 77


def run(args):
    return subprocess.run([sys.executable, RUNNER] + args, capture_output=True, text=True)


def result(d):
    with open(os.path.join(d, "result.json")) as f:
        return json.load(f)


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}", file=sys.stderr)
        sys.exit(1)


def have_ort():
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
        return True
    except ImportError:
        return False


def test_cli():
    r = run(["--protocol-version"])
    check(r.returncode == 0 and r.stdout == "2\n", "--protocol-version prints 2")
    d = tempfile.mkdtemp()
    base = ["--model", "m.onnx", "--output-dir", d, "--reps", "1", "--warmup", "0", "--min-sample-ms", "0"]
    r = run(["--protocol", "3"] + base)
    check(r.returncode == 2, "protocol 3 is a usage error")
    check(result(d) == {"protocol": 2, "ok": False, "error": "usage: protocol 3 requested, this runner speaks 1 and 2"},
          "usage error in result.json")
    r = run(["--protocol", "1"] + base + ["--clock", "wall"])
    check(r.returncode == 2 and result(d) == {"protocol": 1, "ok": False,
                                              "error": "usage: --clock needs protocol 2 or later"},
          "--clock under protocol 1 is a usage error in protocol 1's format")
    r = run(["--protocol", "2"] + base + ["--clock", "thread-cpu"])
    check(r.returncode == 2 and result(d)["error"] == "usage: --clock must be wall or process-cpu, got 'thread-cpu'",
          "an unknown clock is a usage error")
    r = run(["--protocol", "1"] + base[:-1] + ["-3"])
    check(r.returncode == 2 and "min-sample-ms" in result(d)["error"], "negative --min-sample-ms rejected")
    if not have_ort():
        r = run(["--protocol", "1"] + base)
        check(r.returncode == 1, "missing onnxruntime fails with exit 1")
        check(result(d)["error"].startswith("python onnx and onnxruntime are needed"), "missing onnxruntime named")
    print("ort_runner.py cli: ok")


def test_run():
    if not have_ort():
        print("SKIP: python onnx or onnxruntime not importable (Debian has no python3-onnxruntime)")
        sys.exit(SKIP)
    if not os.path.isdir(TEST_ADD):
        print(f"SKIP: {TEST_ADD} not installed")
        sys.exit(SKIP)
    d = tempfile.mkdtemp()
    ds = os.path.join(TEST_ADD, "test_data_set_0")
    r = run(["--protocol", "1", "--model", os.path.join(TEST_ADD, "model.onnx"), "--output-dir", d, "--reps", "3",
             "--warmup", "2", "--min-sample-ms", "1", "--input", os.path.join(ds, "input_0.pb"),
             "--input", os.path.join(ds, "input_1.pb")])
    check(r.returncode == 0, f"real run: {r.stderr}")
    res = result(d)
    check(res["ok"] and len(res["samples_ms"]) == 3 and res["iterations_per_sample"] >= 1, "result.json")
    check(res["protocol"] == 1 and "clock" not in res and "threads" not in res, "protocol 1 result format")
    with open(os.path.join(d, "output_0.pb"), "rb") as a, open(os.path.join(ds, "output_0.pb"), "rb") as b:
        check(a.read() == b.read(), "output_0.pb matches the stored output")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DYNQUAL_ORT_")}
    for clock, threads in (("wall", {"intra_op": 0, "inter_op": 0, "allow_spinning": True}),
                           ("process-cpu", {"intra_op": 1, "inter_op": 1, "allow_spinning": False})):
        d = tempfile.mkdtemp()
        r = subprocess.run([sys.executable, RUNNER, "--protocol", "2", "--clock", clock, "--model",
                            os.path.join(TEST_ADD, "model.onnx"), "--output-dir", d, "--reps", "2", "--warmup", "1",
                            "--min-sample-ms", "0", "--input", os.path.join(ds, "input_0.pb"),
                            "--input", os.path.join(ds, "input_1.pb")], capture_output=True, text=True, env=env)
        check(r.returncode == 0, f"protocol 2 {clock} run: {r.stderr}")
        res = result(d)
        check(res["protocol"] == 2 and res["clock"] == clock and res["threads"] == threads,
              f"protocol 2 {clock}: clock and thread settings reported, got {res}")
    print("ort_runner.py run: ok")


if __name__ == "__main__":
    {"cli": test_cli, "run": test_run}[sys.argv[1]]()
