#!/usr/bin/env python3
"""Summarises an interleaved TPS comparison of dynqual and PyTorch eager on one decoder.

    scripts/generation_versus.py VERSUS.jsonl [--base torch] [--json]

VERSUS.jsonl holds one line per run, written by scripts/gpu-generate-versus.sh: the dq-bench
generate or torch_generate.py JSON line of that run plus "versus_cycle" (0, 1, ...) and
"versus_engine" (a
name: "torch", "dynqual", "dynqual-gemv", ...). Each cycle ran every engine back to back on the
same GPU, the order rotated from cycle to cycle, so slow drifts of the machine hit all alike.
Every engine is compared with --base (default torch); when there are several others, each later
one is also compared with the first.

Per cycle i with both runs: r_i = TPS_engine,i / TPS_base,i, each TPS the median over that run's
repetitions (TPS = (generated tokens - 1) / (time from the first token to the last), tokens/s).
Reported:
  - the median of r_i, and a 95 % percentile bootstrap confidence interval of that median (10 000
    resamples of the cycles with replacement, seed 1; Efron & Tibshirani, An Introduction to the
    Bootstrap, 1993, ch. 13);
  - how many cycles the engine was ahead (r_i > 1);
  - the one-sided exact Wilcoxon signed-rank p-value of log r_i against the hypothesis "no
    difference", alternative "the engine is faster" (Wilcoxon 1945): W+ = the sum of the ranks of |log r_i|
    over the cycles with log r_i > 0; p = P(W+ >= observed) over all 2^n equally likely sign
    assignments (ties share their mean rank; counted exactly for any n).
Exit status: 0 when the summary was written; 2 when a line is malformed (a missing field, a TPS or
TTFT that is not a positive finite number, a second run of one engine in one cycle), when no engine
is named --base, or when no cycle ran two engines.
"""
import argparse
import json
import math
import random
import sys


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def signed_rank_p_greater(d):
    """One-sided exact Wilcoxon signed-rank p-value, P(W+ >= observed); zeros dropped.

    The null distribution of W+ is counted exactly by dynamic programming over the ranks (doubled,
    so that tied mean ranks stay integers): counts[w] = number of sign assignments with W+ = w.
    """
    d = [x for x in d if x != 0]
    n = len(d)
    if n == 0:
        return 1.0
    r2 = [int(round(2 * rk)) for rk in ranks([abs(x) for x in d])]
    observed = sum(rk for rk, x in zip(r2, d) if x > 0)
    counts = [1] + [0] * sum(r2)
    for rk in r2:
        for w in range(len(counts) - 1, rk - 1, -1):
            counts[w] += counts[w - rk]
    return sum(counts[observed:]) / 2 ** n


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def compare(cycles, engine, base):
    """Per-cycle TPS ratios engine/base over the cycles that ran both, and their summary."""
    rows = []
    for c in sorted(cycles):
        e = cycles[c]
        if engine in e and base in e:
            rows.append((c, e[engine]["tps"]["median"], e[base]["tps"]["median"],
                         e[engine]["ttft_ms"]["median"], e[base]["ttft_ms"]["median"]))
    if not rows:
        return None
    ratios = [d / t for _, d, t, _, _ in rows]
    rng = random.Random(1)
    boots = sorted(median([rng.choice(ratios) for _ in ratios]) for _ in range(10000))
    ci = (boots[249], boots[9749])
    return {"engine": engine, "base": base, "cycles": len(rows), "median_ratio": median(ratios),
            "ci95": list(ci), "ahead": sum(1 for x in ratios if x > 1),
            "p_one_sided": signed_rank_p_greater([math.log(x) for x in ratios]),
            "engine_tps_median": median([d for _, d, _, _, _ in rows]),
            "base_tps_median": median([t for _, _, t, _, _ in rows]),
            "engine_ttft_ms_median": median([x for _, _, _, x, _ in rows]),
            "base_ttft_ms_median": median([x for _, _, _, _, x in rows]),
            "per_cycle": [{"cycle": c, "engine_tps": d, "base_tps": t, "ratio": d / t} for c, d, t, _, _ in rows]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("versus")
    ap.add_argument("--base", default="torch", help="the engine every other engine is compared with")
    ap.add_argument("--json", action="store_true", help="print the summaries as one JSON object")
    a = ap.parse_args()
    cycles = {}
    engines = []
    with open(a.versus) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                row = json.loads(line)
                cycle, engine = row["versus_cycle"], row["versus_engine"]
                tps, ttft = row["tps"]["median"], row["ttft_ms"]["median"]
                if not isinstance(cycle, int) or cycle < 0 or not isinstance(engine, str) or not engine:
                    raise ValueError("cycle must be an integer >= 0 and engine a name")
                for what, v in (("tps.median", tps), ("ttft_ms.median", ttft)):
                    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                        raise ValueError(f"{what} must be a positive finite number, got {v!r}")
            except (ValueError, KeyError, TypeError) as e:
                print(f"{a.versus}:{n}: not a versus line: {e}", file=sys.stderr)
                return 2
            if engine in cycles.setdefault(cycle, {}):
                print(f"{a.versus}:{n}: cycle {cycle} has two runs of engine '{engine}'", file=sys.stderr)
                return 2
            cycles[cycle][engine] = row
            if engine not in engines:
                engines.append(engine)
    if a.base not in engines:
        print(f"{a.versus}: no engine named '{a.base}' (engines: {', '.join(engines) or 'none'})", file=sys.stderr)
        return 2
    pairs = [(e, a.base) for e in engines if e != a.base]
    others = [e for e in engines if e != a.base]
    pairs += [(others[i], others[0]) for i in range(1, len(others))]
    summaries = [s for s in (compare(cycles, e, b) for e, b in pairs) if s]
    if not summaries:
        print(f"{a.versus}: no cycle with both engines", file=sys.stderr)
        return 2
    if a.json:
        print(json.dumps(summaries[0] if len(summaries) == 1 else {"comparisons": summaries}))
        return 0
    for sm in summaries:
        e, b = sm["engine"], sm["base"]
        print(f"| cycle | {e} TPS | {b} TPS | ratio |")
        print("|---:|---:|---:|---:|")
        for r in sm["per_cycle"]:
            print(f"| {r['cycle']} | {r['engine_tps']:.1f} | {r['base_tps']:.1f} | {r['ratio']:.3f} |")
        print()
        print(f"{e} against {b}, {sm['cycles']} cycles: median TPS {sm['engine_tps_median']:.1f} against "
              f"{sm['base_tps_median']:.1f}; median ratio {sm['median_ratio']:.3f} [{sm['ci95'][0]:.3f}, "
              f"{sm['ci95'][1]:.3f}] (95 % bootstrap); {e} ahead in {sm['ahead']} of {sm['cycles']}; one-sided "
              f"exact Wilcoxon signed-rank p = {sm['p_one_sided']:.4g}. Median TTFT {sm['engine_ttft_ms_median']:.2f} "
              f"ms against {sm['base_ttft_ms_median']:.2f} ms.")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
