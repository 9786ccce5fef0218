"""Shared by the generation peers (torch_generate.py, harness/runners/ort-python/ort_generate.py):
the prompt of `dq-bench generate`, the TTFT/TPS definitions, and a result document in the
dq-bench generate JSON layout (version 1), so `dynqual bench generate --import` records peers
beside dq-bench in one table. Standard library only."""
import json
import os
import resource
import statistics
import sys
import time

GAMMA = 0x9E3779B97F4A7C15
MASK = (1 << 64) - 1


def prompt_tokens(vocab, length, seed):
    """Token k = SplitMix64 output k of `seed` modulo vocab (as dq-bench's promptTokens)."""
    ids, state = [], seed
    for _ in range(length):
        state = (state + GAMMA) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        ids.append(z % vocab)
    return ids


def ttft_ms(prefill_start_ms, token_ms):
    """Time to first token: first token id on the host minus the start of the prefill (ms)."""
    if not token_ms:
        raise ValueError("TTFT needs at least one generated token")
    if token_ms[0] < prefill_start_ms:
        raise ValueError("the first token arrives before the prefill starts")
    return token_ms[0] - prefill_start_ms


def tokens_per_second(token_ms):
    """(n - 1) / (last token time - first token time), times in ms, n = generated tokens."""
    if len(token_ms) < 2:
        raise ValueError("TPS needs at least two generated tokens")
    span = token_ms[-1] - token_ms[0]
    if span <= 0:
        raise ValueError("the first and last token arrive at the same time")
    return (len(token_ms) - 1) / (span / 1000.0)


def now_ms():
    return time.perf_counter() * 1000.0


def stats(values):
    if not values:
        return {"samples": []}
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "samples": list(values)}


def host_info():
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = 0
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem = int(line.split()[1]) * 1024
    except OSError:
        pass
    u = os.uname()
    return {"cpu_model": cpu, "cores": os.cpu_count() or 0, "memory_bytes": mem, "os": f"{u.sysname} {u.release}"}


def peak_host_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def document(tool, engine, model, model_hash, program, device, gpu, params, vocab, kv_dtype, weight_bytes,
             prompt, runs, peak_device_bytes=None, copy_gbps=None):
    """The dq-bench generate layout for a peer. `runs`: one (prefill_start_ms, [token_ms...],
    [token ids]) per timed repetition. Limits: the bandwidth limit when a copy bandwidth was
    measured (copy_gbps, read + write GB/s); a peer has no launch count, so no launch limit."""
    ttft = [ttft_ms(s, t) for s, t, _ in runs]
    tps = [tokens_per_second(t) for _, t, _ in runs if len(t) >= 2]
    # median, achieved_tps and fraction_of_binding fill the dq-bench layout for a quick look;
    # `dynqual bench generate --import` records the samples and computes the fraction itself.
    achieved = statistics.median(tps) if tps else None
    bw_limit = copy_gbps * 1e9 / weight_bytes if copy_gbps and weight_bytes else None
    return {
        "tool": tool, "version": 1, "engine": engine,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": host_info(), "program": program, "model": model, "model_hash": model_hash or "",
        "device": device, "gpu": gpu or "", "params": params,
        "decoder": {"vocab": vocab, "kv_dtype": kv_dtype, "constant_bytes": weight_bytes},
        "prompt": list(prompt), "tokens": list(runs[0][2]) if runs else [],
        "tokens_same_every_rep": all(r[2] == runs[0][2] for r in runs),
        "ttft_ms": stats(ttft), "tps": stats(tps),
        "peak_device_bytes": peak_device_bytes, "peak_host_bytes": peak_host_bytes(),
        "probes": {"copy_gbps": copy_gbps, "memcpy_gbps": None, "strided_copy_gbps": None, "launch_us": None},
        "limits": {"weight_bytes_per_token": weight_bytes, "copy_gbps": copy_gbps, "launches_per_token": None,
                   "launch_us": None, "bandwidth_limit_tps": bw_limit, "launch_limit_tps": None,
                   "binding": "bandwidth" if bw_limit else "", "binding_limit_tps": bw_limit,
                   "achieved_tps": achieved,
                   "fraction_of_binding": achieved / bw_limit if achieved and bw_limit else None},
    }


def emit(doc, out_path=None):
    line = json.dumps(doc, allow_nan=False, default=lambda o: None)
    if out_path:
        with open(out_path, "a") as f:
            f.write(line + "\n")
    print(line)
    sys.stdout.flush()
