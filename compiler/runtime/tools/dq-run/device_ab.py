#!/usr/bin/env python3
"""The device half of `dynqual ab` / `dynqual calibrate` on a machine without the compiler.

    device_ab.py --plan DIR --dq-run BIN --out OUT [--device hip] [--budget S]
    device_ab.py --plan DIR --base-dq-run BIN --head-dq-run BIN --out OUT ...

DIR was written by `dynqual ab ... --prepare-device DIR` (docs/commands/ab.md, "On a GPU
machine"): ab.json and one `dynqual qualify --prepare` plan per arm (DIR/base, DIR/head). Steps:

1. correctness: every planned case of each arm once through device_check.py --manifest, into
   OUT/base and OUT/head (the device-results layout `dynqual qualify --import-device-results`
   reads); `dynqual ab --import-device OUT` compares them with the CPU reference there;
2. timing: ABBA rounds over the models whose timed case ran on both arms, every dq-run bound to
   one CPU (--pin-cpu; default the last this script may use). With the plan's interleave "sample"
   (the default) each round is one dq-run process holding both programs (dq-run --alternate): after
   `warmup` pairs it takes `samples` timed pairs, base first in even pairs of even rounds, so the
   samples run base, head, head, base, ... (head first in odd rounds); the process's own speed then
   cancels out of the ratio. With "process", round r runs base, head, head, base when r is even and
   head, base, base, head when odd, each position a fresh dq-run taking `samples` samples after
   `warmup` runs. An arm's NAME=VALUE settings (ab --a-env/--b-env) are in the environment of
   its correctness runs and of its processes (process interleaving only). With two runtimes
   (--base-dq-run and --head-dq-run of different bytes: a gate whose change is in the runtime, its
   kernels or its allocator) one process cannot hold both arms, so "sample" becomes two serving
   processes per round and model (dq-run --serve), one per runtime, both bound to the same CPU and
   asked for one run at a time in the same base, head, head, base order (--serving-pairs forces
   this path for one runtime too, to measure what it costs in noise). A sample is one run's execute_ms. Every sample goes to OUT/samples.jsonl with its
   model, arm, round, position (0..3 within an ABBA cycle) and rep. With
   inject_slowdown in ab.json the head arm of that model spins PCT % of the base median measured
   before round 0 after every timed run (dq-run --busy-us); with inject_slowdown_spec "tail:FRAC:PCT"
   only a random share FRAC of its runs spins (--busy-fraction), and with "spread:FACTOR" both arms
   spin W = S sqrt(3 (FACTOR^2 - 1)) on average (S the scaled MAD of the base's samples), the base
   exactly W, the head uniformly in [0, 2 W] per run (--busy-spread). The rounds stop at the last look, or
   when the next look cannot be reached within the budget (the rule of the engine); no statistics
   run here, so a comparison that would have closed early still takes every look's rounds;
3. OUT/device-ab.json: rounds, budget_exhausted, wall_s, slowdown_us, per-model errors, and the
   machine at the start and the end (CPU, load, GPU and its clocks from nvidia-smi).

Needs only the Python standard library. Exit code 0 when it ran (a model's failure is a result),
1 when no model could be timed, 2 on a bad plan or bad arguments.
"""
import argparse
import hashlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ORDER = (("base", "head", "head", "base"), ("head", "base", "base", "head"))


def environment():
    env = {"load_average_1": -1.0, "cpu": "", "gpu_clocks": "", "gpu": ""}
    try:
        with open("/proc/loadavg") as f:
            env["load_average_1"] = float(f.read().split()[0])
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        env["cpu"] = f"{names[0]} x{len(names)}" if names else ""
    except OSError:
        pass
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.mem",
                            "--format=csv,noheader"], capture_output=True, text=True, timeout=20)
        if q.returncode == 0:
            rows = [r.split(", ") for r in q.stdout.strip().splitlines()]
            env["gpu"] = "; ".join(f"{r[0]} (driver {r[1]})" for r in rows if len(r) >= 2)
            env["gpu_clocks"] = "; ".join(f"sm {r[2]}, mem {r[3]}" for r in rows if len(r) >= 4)
    except (OSError, subprocess.TimeoutExpired):
        pass
    return env


def timed_case(entry):
    for c in entry.get("cases", []):
        if c.get("timed") and not c.get("unsupported"):
            return c
    return None


def arm_env(ab, arm):
    """The process environment of an arm's runs: this one plus the plan's NAME=VALUE settings."""
    env = dict(os.environ)
    for setting in ab[arm].get("env", []):
        name, _, value = setting.partition("=")
        env[name] = value
    return env


def file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def runtime_of(args, arm):
    return args.base_dq_run if arm == "base" else args.head_dq_run


def spin_flags(prefix, spin):
    """dq-run flags of an injected spin: a count of microseconds, or a dict {"us", "fraction",
    "spread", "seed"} for a tail (a random share of the runs spins) or a spread (each run spins
    uniformly in [0, 2 us])."""
    if not isinstance(spin, dict):
        spin = {"us": spin}
    if spin.get("us", 0) <= 0:
        return []
    flags = [prefix + "busy-us", str(int(spin["us"]))]
    if spin.get("fraction", 1.0) < 1.0:
        flags += [prefix + "busy-fraction", repr(spin["fraction"])]
    if spin.get("spread"):
        flags += [prefix + "busy-spread"]
    if "seed" in spin:
        flags += ["--busy-seed", str(spin["seed"])]
    return flags


def parse_spec(text):
    """An inject_slowdown_spec entry: ("tail", FRAC, PCT) or ("spread", FACTOR)."""
    f = text.split(":")
    if len(f) == 3 and f[0] == "tail":
        return ("tail", float(f[1]), float(f[2]))
    if len(f) == 2 and f[0] == "spread":
        return ("spread", float(f[1]))
    if len(f) == 2 and f[0] == "shift":
        return ("shift", float(f[1]))
    raise ValueError(f"inject_slowdown_spec '{text}': expected shift:PCT, tail:FRAC:PCT or spread:FACTOR")


def scaled_mad(values):
    """1.4826 * the median absolute deviation from the median (docs/metrics/noise.md)."""
    def med(v):
        v = sorted(v)
        n = len(v)
        return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    m = med(values)
    return 1.4826 * med([abs(x - m) for x in values])


def dq_run(args, plan, entry, case, samples, warmup, busy_us, work, alternate=None, env=None, runtime=None):
    """One dq-run process (`runtime`, default the base arm's); returns its execute_ms samples, and
    with `alternate` = (plan, entry, busy_us, first) also the other program's."""
    cmd = [runtime or args.base_dq_run, os.path.join(plan, entry["artifact"]), "--device", args.device, "--output-dir", work,
           "--reps", str(samples), "--warmup", str(warmup)] + spin_flags("--", busy_us)
    if alternate:
        alt_plan, alt_entry, alt_busy, alt_first = alternate
        cmd += ["--alternate", os.path.join(alt_plan, alt_entry["artifact"])] + spin_flags("--alternate-", alt_busy)
        if alt_first:
            cmd += ["--alternate-first"]
    for p in case["inputs"]:
        cmd += ["--input", os.path.join(plan, p)]
    os.makedirs(work, exist_ok=True)
    pin = (lambda: os.sched_setaffinity(0, {args.pin_cpu})) if args.pin_cpu >= 0 else None
    try:
        # Its own process group, so a timeout ends everything it started.
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=pin,
                                start_new_session=True, env=env)
    except (OSError, subprocess.SubprocessError) as e:
        raise RuntimeError(f"dq-run could not start: {e}")
    try:
        stdout, stderr = proc.communicate(timeout=args.run_timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise RuntimeError(f"dq-run timed out after {args.run_timeout} s")
    if proc.returncode != 0:
        raise RuntimeError(f"dq-run exit {proc.returncode}: {stderr.strip()[-300:]}")
    try:
        line = json.loads(stdout.strip().splitlines()[-1])
        if alternate:
            return line["execute_ms"]["samples"], line["alternate"]["execute_ms"]["samples"]
        return line["execute_ms"]["samples"]
    except (ValueError, IndexError, KeyError) as e:
        raise RuntimeError(f"dq-run printed no timing line ({e})")


class Server:
    """One `dq-run --serve` process of an arm: its own runtime and program, bound to the pinned CPU,
    in its own process group so that a timeout ends everything it started."""

    def __init__(self, args, ab, arm, entry, case, warmup, busy_us, work):
        plan = os.path.join(args.plan, arm)
        cmd = [runtime_of(args, arm), os.path.join(plan, entry["artifact"]), "--device", args.device,
               "--output-dir", os.path.join(work, arm), "--warmup", str(warmup), "--serve"]
        cmd += spin_flags("--", busy_us)
        for p in case["inputs"]:
            cmd += ["--input", os.path.join(plan, p)]
        os.makedirs(os.path.join(work, arm), exist_ok=True)
        pin = (lambda: os.sched_setaffinity(0, {args.pin_cpu})) if args.pin_cpu >= 0 else None
        self.arm, self.timeout = arm, args.run_timeout
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         text=True, bufsize=1, preexec_fn=pin, start_new_session=True,
                                         env=arm_env(ab, arm))
        except (OSError, subprocess.SubprocessError) as e:
            raise RuntimeError(f"{arm} dq-run --serve could not start: {e}")
        self.read()  # the ready line

    def read(self):
        ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.close()
            err = self.proc.stderr.read().strip()[-300:] if not ready else ""
            raise RuntimeError(f"{self.arm} dq-run --serve " +
                               (f"gave no answer within {self.timeout} s" if not ready else f"ended: {err}"))
        try:
            return json.loads(line)
        except ValueError as e:
            raise RuntimeError(f"{self.arm} dq-run --serve printed '{line.strip()[:100]}' ({e})")

    def run(self):
        self.proc.stdin.write("run\n")
        self.proc.stdin.flush()
        reply = self.read()
        if "execute_ms" not in reply:
            raise RuntimeError(f"{self.arm} dq-run --serve answered without execute_ms: {reply}")
        return reply["execute_ms"]

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def serve_pairs(args, ab, m, samples, warmup, head_first, work):
    """One round of model `m` through two serving processes, one per arm, the head's started first
    when `head_first`: `samples` timed pairs, pair i run base then head when (i odd) == head_first,
    else head then base, as dq-run --alternate orders them. Returns [((arm, ms), (arm, ms)), ...]
    in the order they ran."""
    servers = {}
    try:
        # The process started second ran 1-2 % faster on the H200 (5-8 % on a 70 us model) in A/A
        # runs of one binary, so the start order alternates with the round, as the pair order does.
        for arm in (("head", "base") if head_first else ("base", "head")):
            entry, case = m[arm]
            servers[arm] = Server(args, ab, arm, entry, case, warmup,
                                 m["busy_us"] if arm == "head" else m["base_busy_us"], work)
        pairs = []
        for i in range(samples):
            order = ("head", "base") if (i % 2 == 1) != head_first else ("base", "head")
            pairs.append(tuple((arm, servers[arm].run()) for arm in order))
        return pairs
    finally:
        for s in servers.values():
            s.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plan", required=True, help="folder written by dynqual ab --prepare-device")
    ap.add_argument("--dq-run", help="the dq-run binary of both arms")
    ap.add_argument("--base-dq-run", help="the base arm's dq-run (default: --dq-run)")
    ap.add_argument("--head-dq-run", help="the head arm's dq-run (default: --dq-run)")
    ap.add_argument("--serving-pairs", action="store_true",
                    help="sample interleaving through two serving processes even when both arms share a runtime")
    ap.add_argument("--out", required=True, help="results folder (brought back for --import-device)")
    ap.add_argument("--device", help="device to run on (default: the plan's)")
    ap.add_argument("--budget", type=float, help="seconds of timed rounds (default: the plan's)")
    ap.add_argument("--run-timeout", type=float, default=120, help="seconds per dq-run process")
    ap.add_argument("--pin-cpu", default="auto",
                    help="CPU every dq-run is bound to: auto (the last this script may use), none, or a number")
    ap.add_argument("--skip-correctness", action="store_true",
                    help="time only (a look at the timing here; --import-device refuses such a folder)")
    args = ap.parse_args()
    usage = []
    args.base_dq_run = args.base_dq_run or args.dq_run
    args.head_dq_run = args.head_dq_run or args.dq_run
    if not args.base_dq_run or not args.head_dq_run:
        usage.append("give --dq-run, or both --base-dq-run and --head-dq-run")
    for flag, path in (("--base-dq-run", args.base_dq_run), ("--head-dq-run", args.head_dq_run)):
        if path and not (os.path.isfile(path) and os.access(path, os.X_OK)):
            usage.append(f"{flag} {path}: not an executable file")
    if os.path.abspath(args.out) == os.path.abspath(args.plan) or \
            os.path.abspath(args.out).startswith(os.path.abspath(args.plan) + os.sep):
        usage.append("--out must be outside the plan folder")
    if args.budget is not None and args.budget <= 0:
        usage.append("--budget must be a positive number of seconds")
    allowed = os.sched_getaffinity(0)
    if args.pin_cpu not in ("auto", "none") and (not args.pin_cpu.isdigit() or int(args.pin_cpu) not in allowed):
        usage.append(f"--pin-cpu {args.pin_cpu}: not one of the CPUs this process may use {sorted(allowed)}")
    if usage:
        for u in usage:
            print(f"device_ab.py: {u}", file=sys.stderr)
        return 2
    try:
        with open(os.path.join(args.plan, "ab.json")) as f:
            ab = json.load(f)
        if ab.get("format") != "dynqual-device-ab" or ab.get("version") != 1:
            raise ValueError("not a dynqual-device-ab version 1 plan")
        manifests = {}
        for arm in ("base", "head"):
            with open(os.path.join(args.plan, arm, "manifest.json")) as f:
                manifests[arm] = json.load(f)
    except (OSError, ValueError, KeyError) as e:
        print(f"device_ab.py: {args.plan}: {e}", file=sys.stderr)
        return 2
    args.device = args.device or ab["device"]
    if args.pin_cpu == "auto":
        args.pin_cpu = max(os.sched_getaffinity(0))
    elif args.pin_cpu == "none":
        args.pin_cpu = -1
    else:
        args.pin_cpu = int(args.pin_cpu)
    interleave = ab.get("interleave", "sample")
    if interleave == "sample" and ab["base"].get("env", []) != ab["head"].get("env", []):
        print("device_ab.py: the arms have different environments, but sample interleaving runs both in one "
              "process; prepare the plan with --interleave process", file=sys.stderr)
        return 2
    two_runtimes = file_sha256(args.base_dq_run) != file_sha256(args.head_dq_run)
    serving_pairs = interleave == "sample" and (two_runtimes or args.serving_pairs)
    if two_runtimes:
        print(f"two runtimes: base {args.base_dq_run}, head {args.head_dq_run}", flush=True)
    budget = args.budget if args.budget is not None else ab["budget_s"]
    looks = ab["looks"]
    os.makedirs(args.out, exist_ok=True)
    shutil.copyfile(os.path.join(args.plan, "ab.json"), os.path.join(args.out, "ab.json"))
    env_start = environment()

    if not args.skip_correctness:
        for arm in ("base", "head"):
            print(f"correctness: {arm}", flush=True)
            subprocess.run([sys.executable, os.path.join(HERE, "device_check.py"), "--manifest",
                            os.path.join(args.plan, arm, "manifest.json"), "--results", os.path.join(args.out, arm),
                            "--dq-run", runtime_of(args, arm), "--device", args.device], check=False,
                           env=arm_env(ab, arm))

    errors, models = {}, []
    for i, name in enumerate(ab["models"]):
        eb, eh = manifests["base"]["models"][i], manifests["head"]["models"][i]
        cb, ch = timed_case(eb), timed_case(eh)
        if eb.get("status") != "planned" or eh.get("status") != "planned" or not cb or not ch:
            errors[name] = "not timed: no planned timed case on both arms"
            continue
        # Sample interleaving feeds both programs the base arm's inputs: they must be the same.
        if cb.get("inputs_sha256") != ch.get("inputs_sha256"):
            errors[name] = "not timed: the arms' timed cases have different inputs (plans of different suites or seeds?)"
            continue
        models.append({"name": name, "base": (eb, cb), "head": (eh, ch), "busy_us": 0, "base_busy_us": 0})

    samples, warmup = ab["samples"], ab["warmup"]
    slowdown = {}
    work = os.path.join(args.out, "timing-outputs")
    for m in models:
        pct = ab.get("inject_slowdown", {}).get(m["name"])
        spec = ab.get("inject_slowdown_spec", {}).get(m["name"])
        if pct is None and spec is None:
            continue
        try:
            kind = parse_spec(spec) if spec is not None else ("shift", pct)
            s = sorted(dq_run(args, os.path.join(args.plan, "base"), *m["base"], max(samples, 2), warmup, 0, work,
                              env=arm_env(ab, "base"), runtime=args.base_dq_run))
            median = s[len(s) // 2] if len(s) % 2 else (s[len(s) // 2 - 1] + s[len(s) // 2]) / 2
            # Sized as the engine sizes it (diff::slowdownBusyUs): PCT % of the base median, or for a
            # spread W = S sqrt(3 (FACTOR^2 - 1)), S the scaled MAD of the base's samples.
            if kind[0] == "spread":
                us = int(round(scaled_mad(s) * (3 * (kind[1] ** 2 - 1)) ** 0.5 * 1000.0))
                m["base_busy_us"] = us
                m["busy_us"] = {"us": us, "spread": True, "seed": 1}
            elif kind[0] == "tail":
                us = int(round(kind[2] / 100.0 * median * 1000.0))
                m["busy_us"] = {"us": us, "fraction": kind[1], "seed": 1}
            else:
                us = int(round(kind[1] / 100.0 * median * 1000.0))
                m["busy_us"] = us
            slowdown[m["name"]] = us
        except (RuntimeError, ValueError) as e:
            errors[m["name"]] = f"slowdown sizing: {e}"
            m["dropped"] = True

    t0 = time.monotonic()
    rounds, look, round_seconds, exhausted = 0, 0, 0.0, False
    with open(os.path.join(args.out, "samples.jsonl"), "w") as out:
        while look < len(looks) and any(not m.get("dropped") for m in models):
            r0 = time.monotonic()
            for m in models:
                if serving_pairs and not m.get("dropped"):
                    try:
                        pairs = serve_pairs(args, ab, m, samples, warmup, rounds % 2 == 1, work)
                    except RuntimeError as e:
                        errors[m["name"]] = f"round {rounds}: {e}"
                        m["dropped"] = True
                        continue
                    for i, ((first_arm, fv), (second_arm, sv)) in enumerate(pairs):
                        for k, (arm, v) in enumerate(((first_arm, fv), (second_arm, sv))):
                            out.write(json.dumps({"model": m["name"], "arm": arm, "round": rounds,
                                                  "position": 2 * (i % 2) + k, "rep": i // 2, "value_ms": v,
                                                  "iterations": 1}) + "\n")
                    continue
                if interleave == "sample" and not m.get("dropped"):
                    head_first = rounds % 2 == 1
                    (eb, cb), (eh, _) = m["base"], m["head"]
                    try:
                        base_vals, head_vals = dq_run(args, os.path.join(args.plan, "base"), eb, cb, samples, warmup,
                                                      m["base_busy_us"], work,
                                                      (os.path.join(args.plan, "head"), eh, m["busy_us"], head_first),
                                                      env=arm_env(ab, "base"))
                    except RuntimeError as e:
                        errors[m["name"]] = f"round {rounds}: {e}"
                        m["dropped"] = True
                        continue
                    # Pair i ran head first when (i odd) != head_first: positions 0..3 per ABBA cycle.
                    for i, (bv, hv) in enumerate(zip(base_vals, head_vals)):
                        head_now = (i % 2 == 1) != head_first
                        first, second = (("head", hv), ("base", bv)) if head_now else (("base", bv), ("head", hv))
                        for k, (arm, v) in enumerate((first, second)):
                            out.write(json.dumps({"model": m["name"], "arm": arm, "round": rounds,
                                                  "position": 2 * (i % 2) + k, "rep": i // 2, "value_ms": v,
                                                  "iterations": 1}) + "\n")
                    continue
                for pos, arm in enumerate(ORDER[rounds % 2]):
                    if m.get("dropped"):
                        break
                    entry, case = m[arm]
                    try:
                        vals = dq_run(args, os.path.join(args.plan, arm), entry, case, samples, warmup,
                                      m["busy_us"] if arm == "head" else m["base_busy_us"], work,
                                      env=arm_env(ab, arm), runtime=runtime_of(args, arm))
                    except RuntimeError as e:
                        errors[m["name"]] = f"round {rounds} {arm}: {e}"
                        m["dropped"] = True
                        break
                    for rep, v in enumerate(vals):
                        out.write(json.dumps({"model": m["name"], "arm": arm, "round": rounds, "position": pos,
                                              "rep": rep, "value_ms": v, "iterations": 1}) + "\n")
            out.flush()
            rounds += 1
            round_seconds = max(round_seconds, time.monotonic() - r0)
            elapsed = time.monotonic() - t0
            print(f"round {rounds}/{looks[look]} {elapsed:.0f} s, budget left {max(0, budget - elapsed):.0f} s",
                  flush=True)
            if rounds == looks[look]:
                look += 1
            if look < len(looks) and elapsed + round_seconds * (looks[look] - rounds) > budget:
                exhausted = True
                break
    shutil.rmtree(work, ignore_errors=True)
    result = {"format": "dynqual-device-ab-results", "version": 1, "device": args.device, "rounds": rounds,
              "interleave": interleave, "cpu": args.pin_cpu,
              "runtimes": {"base": file_sha256(args.base_dq_run), "head": file_sha256(args.head_dq_run)},
              "serving_pairs": serving_pairs,
              "budget_s": budget, "budget_exhausted": exhausted, "wall_s": time.monotonic() - t0,
              "slowdown_us": slowdown, "errors": errors, "env_start": env_start, "env_end": environment()}
    with open(os.path.join(args.out, "device-ab.json"), "w") as f:
        json.dump(result, f, indent=1)
    print(f"{rounds} rounds in {result['wall_s']:.0f} s; {len(errors)} model(s) with errors")
    for k, v in errors.items():
        print(f"  {k}: {v}")
    if ab["models"] and len(errors) == len(ab["models"]):
        print("device_ab.py: no model was timed (every one has an error above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
