#!/usr/bin/env python3
"""dynqual runner protocol v2 (and v1) over Python onnxruntime (docs/runners.md).

For machines with Python `onnx` and `onnxruntime` 1.30 but no node. Declare it as an external
runner, e.g. {"runners": {"ort-py": {"argv": ["python3", "/path/ort_runner.py", "--protocol",
"{protocol}", "--model", "{model}", "--output-dir", "{output_dir}", "--reps", "{reps}", "--warmup",
"{warmup}", "--min-sample-ms", "{min_sample_ms}", "--clock", "{clock}", "{inputs}"],
"protocol_version_argv": ["python3", "/path/ort_runner.py", "--protocol-version"]}}}. The execution
providers come from DYNQUAL_ORT_PROVIDERS (comma-separated, default CPUExecutionProvider).
--clock process-cpu times user+system CPU time of the whole process (time.process_time), and
therefore runs one intra-op and one inter-op thread without spinning unless
DYNQUAL_ORT_INTRA_OP_THREADS / DYNQUAL_ORT_INTER_OP_THREADS say otherwise.

Exit codes: 0 success, 1 failure (result.json has ok=false), 2 usage error.
"""
import argparse
import json
import math
import os
import re
import sys
import time

PROTOCOL = 2  # the newest spoken; --protocol 1 gets protocol 1 results
PROTOCOLS = ("1", "2")
CLOCKS = ("wall", "process-cpu")
MAX_ITERATIONS = 1000000


def one_line(text):
    return re.sub(r"\s*[\r\n]+\s*", " / ", str(text)).strip()


def write_json(out_dir, obj):
    tmp = os.path.join(out_dir, "result.json.tmp")
    with open(tmp, "w") as f:
        json.dump(obj, f)
        f.write("\n")
    os.replace(tmp, os.path.join(out_dir, "result.json"))


def clean_output_dir(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for f in os.listdir(out_dir):
        if f in ("result.json", "result.json.tmp") or re.fullmatch(r"output_[0-9]+\.pb", f):
            os.remove(os.path.join(out_dir, f))


def thread_settings(clock):
    """The thread settings for `clock`: 0 = onnxruntime's default count. The process-cpu clock sums
    every thread, and idle pool threads spin on the CPU, so it gets one thread of each kind and no
    spinning; DYNQUAL_ORT_INTRA_OP_THREADS / DYNQUAL_ORT_INTER_OP_THREADS still win."""
    cpu = clock == "process-cpu"
    threads = {"intra_op": 1 if cpu else 0, "inter_op": 1 if cpu else 0, "allow_spinning": not cpu}
    for env, key in (("DYNQUAL_ORT_INTRA_OP_THREADS", "intra_op"), ("DYNQUAL_ORT_INTER_OP_THREADS", "inter_op")):
        v = os.environ.get(env, "")
        if v != "":
            if not re.fullmatch(r"[0-9]+", v.strip()):
                raise RuntimeError(f"{env}='{v}' is not a thread count")
            threads[key] = int(v)
    return threads


def run(a):
    try:
        import onnx
        import onnx.numpy_helper
        import onnxruntime as ort
    except ImportError as e:
        raise RuntimeError(f"python onnx and onnxruntime are needed: {e}")
    feeds_in = []
    for path in a.input:
        t = onnx.TensorProto()
        try:
            with open(path, "rb") as f:
                t.ParseFromString(f.read())
        except Exception as e:
            raise RuntimeError(f"cannot read input {path}: {one_line(e)}")
        if t.data_location == onnx.TensorProto.EXTERNAL or len(t.external_data) > 0:
            raise RuntimeError(f"unsupported: external data in {os.path.basename(path)}")
        feeds_in.append((t.name, onnx.numpy_helper.to_array(t)))
    if not os.path.exists(a.model):
        raise RuntimeError(f"model {a.model} does not exist")
    providers = os.environ.get("DYNQUAL_ORT_PROVIDERS", "CPUExecutionProvider").split(",")
    threads = thread_settings(a.clock)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads["intra_op"]
    options.inter_op_num_threads = threads["inter_op"]
    if not threads["allow_spinning"]:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    clock = time.process_time if a.clock == "process-cpu" else time.perf_counter
    t0 = time.perf_counter()
    try:
        session = ort.InferenceSession(a.model, sess_options=options, providers=providers)
    except Exception as e:
        raise RuntimeError(f"session creation failed for {a.model}: {one_line(e)}")
    session_ms = (time.perf_counter() - t0) * 1e3
    names = [i.name for i in session.get_inputs()]
    if len(feeds_in) != len(names):
        raise RuntimeError(f"{os.path.basename(a.model)} has {len(names)} inputs ({', '.join(names)}), "
                           f"got {len(feeds_in)} input files")
    by_name = all(n in names for n, _ in feeds_in) and len({n for n, _ in feeds_in}) == len(feeds_in)
    feeds = {(n if by_name else names[i]): v for i, (n, v) in enumerate(feeds_in)}
    out_names = [o.name for o in session.get_outputs()]

    def infer():
        try:
            return session.run(out_names, feeds)
        except Exception as e:
            raise RuntimeError(f"inference failed for {os.path.basename(a.model)}: {one_line(e)}")

    # Same calibration as the ort-node runner: the first inference is timed alone and is the first
    # warm-up; the fastest later warm-up (or the first) estimates one inference on the sample clock
    # (a CPU reading of 0, below the clock's resolution, falls back to the wall time).
    t, c = time.perf_counter(), clock()
    last = infer()
    first_ms = (time.perf_counter() - t) * 1e3
    estimate = (clock() - c) * 1e3 or first_ms
    for i in range(1, a.warmup):
        t, c = time.perf_counter(), clock()
        last = infer()
        d = (clock() - c) * 1e3 or (time.perf_counter() - t) * 1e3
        estimate = d if i == 1 else min(estimate, d)
    k = 1
    if a.min_sample_ms > 0:
        k = min(MAX_ITERATIONS, max(1, math.ceil(a.min_sample_ms / max(estimate, 1e-6))))
    samples = []
    for _ in range(a.reps):
        t = clock()
        for _ in range(k):
            last = infer()
        samples.append((clock() - t) * 1e3 / k)
    for i, (name, value) in enumerate(zip(out_names, last)):
        with open(os.path.join(a.output_dir, f"output_{i}.pb"), "wb") as f:
            f.write(onnx.numpy_helper.from_array(value, name).SerializeToString())
    result = {"protocol": a.protocol, "ok": True, "runner": "ort-python",
              "version": f"onnxruntime {ort.__version__}", "samples_ms": samples,
              "iterations_per_sample": k, "session_ms": session_ms, "first_infer_ms": first_ms,
              "counters": {}}
    if a.protocol >= 2:
        result["clock"] = a.clock
        result["threads"] = threads
    return result


def asked_protocol(argv):
    """The protocol a failed command line asked for when this runner speaks it, else the newest."""
    if "--protocol" in argv:
        i = argv.index("--protocol")
        if i + 1 < len(argv) and argv[i + 1] in PROTOCOLS:
            return int(argv[i + 1])
    return PROTOCOL


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise ValueError(message)


def main(argv):
    if argv == ["--protocol-version"]:
        print(PROTOCOL)
        return 0
    p = Parser(add_help=False)
    p.add_argument("--protocol", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--output-dir", required=True)
    p.add_argument("--reps", type=int, required=True)
    p.add_argument("--warmup", type=int, required=True)
    p.add_argument("--min-sample-ms", type=float, required=True)
    p.add_argument("--clock")
    p.add_argument("--input", action="append", default=[])
    try:
        a = p.parse_args(argv)
        if a.protocol not in PROTOCOLS:
            raise ValueError(f"protocol {a.protocol} requested, this runner speaks {' and '.join(PROTOCOLS)}")
        a.protocol = int(a.protocol)
        if a.clock is not None and a.protocol < 2:
            raise ValueError("--clock needs protocol 2 or later")
        a.clock = a.clock or "wall"
        if a.clock not in CLOCKS:
            raise ValueError(f"--clock must be {' or '.join(CLOCKS)}, got '{a.clock}'")
        if a.reps < 1 or a.warmup < 0 or not math.isfinite(a.min_sample_ms) or a.min_sample_ms < 0:
            raise ValueError("--reps must be >= 1, --warmup >= 0, --min-sample-ms a number >= 0")
    except ValueError as e:
        print(f"ort_runner.py: usage error: {one_line(e)}", file=sys.stderr)
        if "--output-dir" in argv and argv.index("--output-dir") + 1 < len(argv):
            try:
                out = argv[argv.index("--output-dir") + 1]
                clean_output_dir(out)
                write_json(out, {"protocol": asked_protocol(argv), "ok": False, "error": f"usage: {one_line(e)}"})
            except OSError:
                pass
        return 2
    try:
        clean_output_dir(a.output_dir)
    except OSError as e:
        print(f"ort_runner.py: error: cannot prepare output folder {a.output_dir}: {one_line(e)}", file=sys.stderr)
        return 1
    try:
        write_json(a.output_dir, run(a))
        return 0
    except Exception as e:  # every failure becomes one line in result.json
        msg = one_line(e)
        print(f"ort_runner.py: error: {msg}", file=sys.stderr)
        try:
            clean_output_dir(a.output_dir)
            write_json(a.output_dir, {"protocol": a.protocol, "ok": False, "error": msg})
        except OSError:
            pass
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
