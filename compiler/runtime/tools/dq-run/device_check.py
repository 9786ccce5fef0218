#!/usr/bin/env python3
"""The device side of `dynqual qualify --prepare`: runs every planned case through dq-run.

    device_check.py --manifest PLAN/manifest.json --dq-run BIN --results RES [--device D] [--jobs 4]

PLAN is a folder prepared by `dynqual qualify --prepare DIR` (docs/commands/qualify.md). It runs
every planned case once (--reps 0; --jobs at a time), then each model's timed case alone with the
manifest's reps and warm-ups, and writes into RES one JSON line per dq-run call to results.jsonl
(dq-run's own fields plus "model", "index" (the model's manifest index), "set", "device",
"timed", "rc", "error" and "output_dir" (relative to RES)), the outputs under
outputs/INDEX/CASE[_timed]/ as .npy, and a copy of manifest.json.

It compares nothing and computes no statistic: `dynqual qualify --import-device-results RES`
compares the saved outputs with the CPU reference and computes every metric (relative L2 with
its zero-norm rule, latency statistics) with harness/lib/stats. Needs only the Python standard library. Exit code 0 when it ran
(failed cases are results), 2 on a bad manifest or bad arguments.
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys


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
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--manifest", help="manifest.json of a `dynqual qualify --prepare` folder")
    ap.add_argument("--results", help="folder for results.jsonl and the outputs")
    ap.add_argument("--device", help="device to run on (default: the manifest's)")
    ap.add_argument("--jobs", type=int, default=4, help="untimed runs at a time")
    ap.add_argument("--dq-run", required=True)
    ap.add_argument("--models", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.models:
        # The former stand-alone check compared outputs here; comparisons are made at import now.
        ap.error("--models is gone: prepare with `dynqual qualify SUITE --device hip --prepare DIR`, run "
                 "--manifest DIR/manifest.json here (scripts/gpu-qualify.sh), and import the results with "
                 "`dynqual qualify --import-device-results` (docs/commands/qualify.md)")
    if not args.manifest or not args.results:
        ap.error("--manifest and --results are required")
    return run_manifest(args)


if __name__ == "__main__":
    sys.exit(main())
