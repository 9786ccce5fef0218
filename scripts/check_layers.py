#!/usr/bin/env python3
"""Fails when a lower layer of the tree includes a higher one (docs/architecture.md#layers).

Floors, lowest first: compiler/ (the compiler and the MLIR-free runtime) < harness/lib (with
harness/include) < fuzz/ and reports/ < the mains (tools/) and ci. A file may include
its own floor or a lower one. Inside harness/lib the folders (exec, run, process, ...) must not
include each other in a loop. Tests (a test/ folder anywhere) sit above everything and are not
checked.

Each `#include "X"` is resolved the way the compiler would: beside the including file first, then
in the project's include folders. System and library headers (<...>, or quoted ones that are not
in the tree) do not count.

Usage: check_layers.py [ROOT]   (default: the repository this script is in)
Exit codes: 0 no violation, 1 violations (one line each: file:line, what it includes, the rule),
2 usage error (ROOT is not a folder).
"""
import os
import re
import sys

INCLUDE_ROOTS = [
    "harness/include",
    "fuzz/include",
    "reports/include",
    "compiler/include",
    "compiler/runtime/include",
]
SOURCE_EXT = (".h", ".hpp", ".cpp", ".cc", ".c", ".hip", ".cu", ".inc")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')

# Floor of each top folder (by path prefix, longest first); tests are left out.
FLOORS = [
    ("tools/", 3, "tools"),
    ("ci/", 3, "ci"),
    (".ci/", 3, "ci"),
    ("fuzz/", 2, "fuzz"),
    ("reports/", 2, "reports"),
    ("harness/lib/", 1, "harness/lib"),
    ("harness/include/", 1, "harness/lib"),
    ("compiler/", 0, "compiler"),
]


def floor_of(path):
    for prefix, level, name in FLOORS:
        if path.startswith(prefix):
            return level, name
    return None, None


def harness_unit(path):
    """The harness/lib folder a file belongs to ("exec", "run", ...), or None."""
    for prefix in ("harness/lib/", "harness/include/dynqual/"):
        if path.startswith(prefix):
            rest = path[len(prefix):]
            return rest.split("/", 1)[0] if "/" in rest else None
    return None


def is_test(path):
    return "/test/" in "/" + path or "/tests/" in "/" + path


def sources(root):
    for top in ("compiler", "harness", "fuzz", "reports", "tools", "ci", ".ci"):
        base = os.path.join(root, top)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if d not in ("node_modules",) and not d.startswith("build")]
            for f in filenames:
                if f.endswith(SOURCE_EXT):
                    yield os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/")


def resolve(root, including, target):
    candidates = [os.path.join(os.path.dirname(including), target)]
    candidates += [os.path.join(r, target) for r in INCLUDE_ROOTS]
    for c in candidates:
        norm = os.path.normpath(c).replace(os.sep, "/")
        if os.path.isfile(os.path.join(root, norm)):
            return norm
    return None


def find_loops(edges):
    """Strongly connected components with more than one folder (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def check(root):
    violations = []
    unit_edges = {}  # folder -> {folder: first "file:line -> header" that makes the edge}
    for path in sorted(sources(root)):
        if is_test(path):
            continue
        level, name = floor_of(path)
        if level is None:
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        for no, text in enumerate(lines, 1):
            m = INCLUDE_RE.match(text)
            if not m:
                continue
            target = resolve(root, path, m.group(1))
            if target is None or is_test(target):
                continue
            tlevel, tname = floor_of(target)
            if tlevel is not None and tlevel > level:
                violations.append(f"{path}:{no}: includes {target} ({tname}) but {name} is below {tname}")
            su, tu = harness_unit(path), harness_unit(target)
            if su and tu and su != tu:
                unit_edges.setdefault(su, {}).setdefault(tu, f"{path}:{no} -> {target}")
    for loop in find_loops({k: set(v) for k, v in unit_edges.items()}):
        detail = "; ".join(unit_edges[a][b] for a in loop for b in loop if b in unit_edges.get(a, {}))
        violations.append(f"harness/lib folders include each other in a loop: {' <-> '.join(loop)} ({detail})")
    return violations


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    if len(argv) > 2 or argv[1:2] in (["-h"], ["--help"]):
        print(__doc__)
        return 0 if argv[1:2] in (["-h"], ["--help"]) else 2
    if not os.path.isdir(root):
        print(f"check_layers: {root} is not a folder", file=sys.stderr)
        return 2
    violations = check(root)
    for v in violations:
        print(v)
    if violations:
        print(f"{len(violations)} layering violation(s): a lower layer must not include a higher one "
              "(docs/architecture.md#layers); move the code down or the include up")
        return 1
    print("layers ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
