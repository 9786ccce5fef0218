#!/usr/bin/env python3
"""Markdown table of generation benchmark documents (dq-bench generate and the peers'
torch_generate.py / ort_generate.py, one JSON object per line), e.g. for gpu-generate.sh's
summary.md. The recorded and rendered report is `dynqual bench generate --import` + `dynqual
report`; this is the quick look on the machine that ran them. Standard library only.

    scripts/generation_table.py FILE.jsonl... > summary.md
"""
import json
import sys


def num(v, fmt):
    return fmt % v if isinstance(v, (int, float)) else "-"


def rows(docs):
    out = []
    for d in docs:
        lim = d.get("limits", {})
        p = d.get("params", {})
        frac = lim.get("fraction_of_binding")
        out.append([
            d.get("model", ""), d.get("engine", "dynqual"), d.get("device", ""),
            str(p.get("prompt_len", "-")), str(p.get("gen_tokens", "-")), str(p.get("reps", "-")),
            num(d.get("ttft_ms", {}).get("median"), "%.2f"), num(d.get("tps", {}).get("median"), "%.1f"),
            num(lim.get("copy_gbps"), "%.1f"), num(lim.get("launch_us"), "%.2f"),
            num(lim.get("launches_per_token"), "%.0f"),
            num(lim.get("bandwidth_limit_tps"), "%.1f"), num(lim.get("launch_limit_tps"), "%.1f"),
            lim.get("binding") or "-", num(frac * 100 if isinstance(frac, (int, float)) else None, "%.1f"),
            num(d.get("peak_device_bytes") / 1e9 if isinstance(d.get("peak_device_bytes"), (int, float)) else None,
                "%.3f"),
            num(d.get("peak_host_bytes", 0) / 1e9, "%.3f"),
            "yes" if d.get("tokens_same_every_rep") else "no",
        ])
    return out


HEADER = ["Model", "Engine", "Device", "Prompt", "Gen", "Reps", "TTFT (ms)", "TPS", "Copy GB/s", "Launch us",
          "Launches/token", "BW limit (tok/s)", "Launch limit (tok/s)", "Binds", "Of limit (%)",
          "Device peak (GB)", "Host peak (GB)", "Same tokens"]


def table(docs):
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(r) + " |" for r in rows(docs)]
    return "\n".join(lines) + "\n"


def main(paths):
    docs = []
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    docs.append(json.loads(line))
    sys.stdout.write(table(docs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
