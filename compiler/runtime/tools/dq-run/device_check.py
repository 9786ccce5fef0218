#!/usr/bin/env python3
"""Accuracy and latency of compiled models on a device machine, through dq-run.

Runs where numpy and onnx are installed (the GPU machine; onnxruntime optional). For every model
folder under --models holding model.dqp (compiled elsewhere with `dynqual compile DIR -o
DIR/model.dqp`, its .dqp.bin beside it):
  - each test_data_set_*: input_K.pb / output_K.pb (ONNX TensorProto) are converted to .npy;
  - a folder without data sets gets one generated set: random inputs for model.onnx's inputs
    (dynamic dims set to 3) and expected outputs from onnxruntime's CPU provider;
then dq-run runs every set on each --devices entry, and the outputs are compared with the stored
(or onnxruntime) outputs and with the first device (the reference, normally sim):
  rel_l2 = ||got - want||_2 / ||want||_2 (||got - want||_2 when want is all zeros), computed in fp64;
  max_abs = max |got - want|.
Writes one JSON line per (model, set, device) to --json and a Markdown table to stdout.
Exit code 1 when any fp32 output exceeds --tol (rel_l2) or any integer/bool output differs.

With --manifest (a folder prepared by `dynqual qualify --prepare DIR`, docs/commands/qualify.md)
it only runs, and compares nothing: every planned case once (--reps 0; --jobs at a time), then
each model's timed case alone with the manifest's reps and warm-ups. It writes into --results
one JSON line per dq-run call to results.jsonl -- the lines above without the comparisons, plus
"index" (the model's manifest index), "timed", "output_dir" (relative to --results) and dq-run's
own fields -- the outputs under outputs/INDEX/CASE[_timed]/, and a copy of manifest.json;
`dynqual qualify --import-device-results` compares them with the CPU reference. Needs only the
Python standard library. Exit code 0 when it ran (failed cases are results), 2 on a bad manifest.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import shutil
import subprocess
import sys


def tensor_from_pb(path):
    import numpy as np
    import onnx
    from onnx import numpy_helper
    # np.array, not np.ascontiguousarray: the latter turns a rank-0 tensor into shape (1,).
    return np.array(numpy_helper.to_array(onnx.load_tensor(path)), order="C")


def generated_set(model_dir, work):
    """Random inputs and onnxruntime outputs for a model without stored data sets."""
    import numpy as np
    import onnx
    import onnxruntime as ort
    model = onnx.load(os.path.join(model_dir, "model.onnx"))
    inits = {i.name for i in model.graph.initializer}
    rng = np.random.default_rng(0)
    feeds = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        t = vi.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else 3 for d in t.shape.dim]
        dt = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)
        if dt == np.bool_:
            a = rng.integers(0, 2, dims).astype(np.bool_)
        elif np.issubdtype(dt, np.integer):
            a = rng.integers(0, 3, dims).astype(dt)
        else:
            a = rng.standard_normal(dims).astype(dt)
        feeds[vi.name] = a
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    outs = sess.run(None, feeds)
    d = os.path.join(work, "generated")
    os.makedirs(d, exist_ok=True)
    ins = []
    for k, a in enumerate(feeds.values()):
        p = os.path.join(d, f"input_{k}.npy")
        np.save(p, a)
        ins.append(p)
    return ("generated(ort)", ins, [np.asarray(o) for o in outs])


def stored_sets(model_dir, work):
    import numpy as np
    sets = []
    for ds in sorted(glob.glob(os.path.join(model_dir, "test_data_set_*"))):
        name = os.path.basename(ds)
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        ins = []
        for k in range(len(glob.glob(os.path.join(ds, "input_*.pb")))):
            p = os.path.join(d, f"input_{k}.npy")
            np.save(p, tensor_from_pb(os.path.join(ds, f"input_{k}.pb")))
            ins.append(p)
        outs = [tensor_from_pb(os.path.join(ds, f"output_{k}.pb"))
                for k in range(len(glob.glob(os.path.join(ds, "output_*.pb"))))]
        sets.append((name, ins, outs))
    return sets


def compare(got, want):
    import numpy as np
    g = np.asarray(got, dtype=np.float64).ravel()
    w = np.asarray(want, dtype=np.float64).ravel()
    if g.shape != w.shape:
        return {"shape_mismatch": [list(np.shape(got)), list(np.shape(want))]}
    if g.size == 0:
        return {"rel_l2": 0.0, "max_abs": 0.0, "exact": True}
    diff = g - w
    finite = np.isfinite(g) & np.isfinite(w)
    same_nonfinite = np.array_equal(np.isnan(g), np.isnan(w)) and np.array_equal(g[~finite & ~np.isnan(g)], w[~finite & ~np.isnan(w)])
    nw = np.linalg.norm(w[finite])
    nd = np.linalg.norm(diff[finite])
    return {"rel_l2": float(nd / nw if nw > 0 else nd),
            "max_abs": float(np.max(np.abs(diff[finite])) if finite.any() else 0.0),
            "exact": bool(np.array_equal(g[finite], w[finite]) and same_nonfinite),
            "nonfinite_match": bool(same_nonfinite)}


def run_dq(dq_run, plan_dir, artifact, inputs, device, out_dir, reps, warmup, timeout):
    """One dq-run call; returns (rc, parsed JSON line or None, stderr tail)."""
    cmd = [dq_run, os.path.join(plan_dir, artifact), "--device", device, "--output-dir", out_dir,
           "--reps", str(reps), "--warmup", str(warmup)]
    for p in inputs:
        cmd += ["--input", os.path.join(plan_dir, p)]
    os.makedirs(out_dir, exist_ok=True)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, None, f"dq-run timed out after {timeout} s"
    info = None
    if r.returncode == 0:
        try:
            info = json.loads(r.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return 1, None, "dq-run printed no JSON line: " + r.stdout[-200:]
    return r.returncode, info, r.stderr.strip()[-400:]


def run_manifest(args):
    """The device side of `dynqual qualify --prepare`: runs every planned case, compares nothing."""
    plan_dir = os.path.dirname(os.path.abspath(args.manifest))
    with open(args.manifest) as f:
        manifest = json.load(f)
    if manifest.get("format") != "dynqual-device-plan" or manifest.get("version") != 1:
        print(f"{args.manifest}: not a dynqual-device-plan version 1 manifest", file=sys.stderr)
        return 2
    device = args.device or manifest["device"]
    settings = manifest["settings"]
    os.makedirs(args.results, exist_ok=True)
    shutil.copyfile(args.manifest, os.path.join(args.results, "manifest.json"))
    jobs, timed = [], []
    for m in manifest["models"]:
        if m["status"] != "planned":
            continue
        for c in m["cases"]:
            if c.get("unsupported"):
                continue
            jobs.append((m, c, False))
            if c.get("timed"):
                timed.append((m, c, True))

    def one(job):
        m, c, is_timed = job
        rel = os.path.join("outputs", str(m["index"]), c["id"] + ("_timed" if is_timed else ""))
        reps, warmup = (settings["reps"], settings["warmup"]) if is_timed else (0, 0)
        rc, info, err = run_dq(args.dq_run, plan_dir, m["artifact"], c["inputs"], device,
                               os.path.join(args.results, rel), reps, warmup,
                               settings.get("exec_timeout_s", 120))
        rec = {"model": m["name"], "index": m["index"], "set": c["id"], "device": device,
               "timed": is_timed, "rc": rc, "output_dir": rel}
        if info is None:
            rec["error"] = err
        else:
            rec.update({k: v for k, v in info.items() if k not in rec})
        return rec

    lines = []
    # Lines are written as they come, so a run stopped early still leaves its results.
    with open(os.path.join(args.results, "results.jsonl"), "w") as f:
        def keep(rec):
            lines.append(rec)
            f.write(json.dumps(rec) + "\n")
            f.flush()
        # Accuracy runs may share the device; timed runs go one at a time after them.
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for rec in pool.map(one, jobs):
                keep(rec)
        for j in timed:
            keep(one(j))
    failed = [r for r in lines if r["rc"] != 0]
    print(f"{len(lines)} dq-run calls on {device} ({len(timed)} timed): {len(lines) - len(failed)} ran, "
          f"{len(failed)} failed")
    for r in failed[:20]:
        print(f"  {r['model']} {r['set']}: {r.get('error', '')[:200]}")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", help="manifest.json of a `dynqual qualify --prepare` folder")
    ap.add_argument("--results", help="with --manifest: folder for results.jsonl and the outputs")
    ap.add_argument("--device", help="with --manifest: device to run on (default: the manifest's)")
    ap.add_argument("--jobs", type=int, default=4, help="with --manifest: untimed runs at a time")
    ap.add_argument("--models")
    ap.add_argument("--dq-run", required=True)
    ap.add_argument("--devices", default="sim,hip")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--sim-reps", type=int, default=5)
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--json", default="device_check.jsonl")
    args = ap.parse_args()
    if args.manifest:
        if not args.results:
            ap.error("--manifest needs --results")
        return run_manifest(args)
    if not args.models:
        ap.error("--models (or --manifest) is required")
    import numpy as np
    devices = args.devices.split(",")
    rows, ok = [], True
    jl = open(args.json, "w")
    for model_dir in sorted(glob.glob(os.path.join(args.models, "*"))):
        dqp = os.path.join(model_dir, "model.dqp")
        if not os.path.exists(dqp):
            continue
        model = os.path.basename(model_dir)
        work = os.path.join(model_dir, "npy")
        try:
            sets = stored_sets(model_dir, work) or [generated_set(model_dir, work)]
        except Exception as e:  # a model whose inputs cannot be prepared is reported, not fatal
            rows.append(f"| {model} | - | - | prepare failed: {str(e)[:120]} | | | | |")
            ok = False
            continue
        for set_name, ins, want in sets:
            ref_outs, lat = None, {}
            for dev in devices:
                out_dir = os.path.join(work, set_name + "_" + dev)
                reps = args.sim_reps if dev == "sim" else args.reps
                cmd = [args.dq_run, dqp, "--device", dev, "--output-dir", out_dir,
                       "--reps", str(reps), "--warmup", str(args.warmup if dev != "sim" else 1)]
                for p in ins:
                    cmd += ["--input", p]
                r = subprocess.run(cmd, capture_output=True, text=True)
                rec = {"model": model, "set": set_name, "device": dev, "rc": r.returncode}
                if r.returncode != 0:
                    rec["error"] = r.stderr.strip()[-400:]
                    rows.append(f"| {model} | {set_name} | {dev} | FAILED: {rec['error'][:150]} | | | | |")
                    jl.write(json.dumps(rec) + "\n")
                    ok = False
                    continue
                info = json.loads(r.stdout.strip().splitlines()[-1])
                got = [np.load(os.path.join(out_dir, o["file"])) for o in info["outputs"]]
                cmp_stored = [compare(g, w) for g, w in zip(got, want)]
                cmp_ref = [compare(g, w) for g, w in zip(got, ref_outs)] if ref_outs is not None else None
                if ref_outs is None:
                    ref_outs = got
                rec.update({"outputs": info["outputs"], "vs_stored": cmp_stored, "vs_ref": cmp_ref,
                            "counters": info["counters"], "execute_ms": info["execute_ms"],
                            "total_ms": info["total_ms"], "gpu": info.get("gpu", "")})
                jl.write(json.dumps(rec) + "\n")
                for g, w, c in zip(got, want, cmp_stored):
                    if "shape_mismatch" in c:
                        ok = False
                    elif np.issubdtype(np.asarray(w).dtype, np.floating):
                        ok &= c["rel_l2"] <= args.tol and c.get("nonfinite_match", True)
                    else:
                        ok &= c["exact"]
                worst = max((c.get("rel_l2", float("inf")) for c in cmp_stored), default=0.0)
                maxabs = max((c.get("max_abs", float("inf")) for c in cmp_stored), default=0.0)
                vs_ref = ("-" if cmp_ref is None else
                          "%.2e" % max((c.get("rel_l2", float("inf")) for c in cmp_ref), default=0.0))
                med = info["execute_ms"].get("median")
                tot = info["total_ms"].get("median")
                rows.append(f"| {model} | {set_name} | {dev} | {worst:.2e} | {maxabs:.2e} | {vs_ref} | "
                            f"{'-' if med is None else '%.3f' % med} | {'-' if tot is None else '%.3f' % tot} |")
    print("| model | data set | device | rel-L2 vs stored (worst output) | max abs diff | rel-L2 vs "
          f"{devices[0]} | median execute ms | median total ms |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
