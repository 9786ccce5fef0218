#!/usr/bin/env python3
"""Relinks one executable of a ninja build K ways that differ only in code layout.

    scripts/layout-variants.py BUILD_DIR TARGET K OUT_DIR [--seed-base N]

Writes OUT_DIR/L<k>/<name> for k = 1..K (docs/gate-layouts.md). Variant k links the same object
files as TARGET's own link command, with two changes that move code and nothing else:
  - the objects, including the members of BUILD_DIR's static archives that the link pulls in
    (read from the linker's trace, -t -t), are passed in an order shuffled with seed (seed-base + k);
    system libraries keep their place;
  - a padding object of 64 * ((seed-base + k) mod 61) + 16 * ((seed-base + k) mod 4) bytes of
    text (never executed) is linked first, so every function moves by that many bytes.
These are the two layout changes of Mytkowicz et al., "Producing wrong data without doing anything
obviously wrong" (ASPLOS 2009): link order, and an offset that changes every function's alignment.
No source is compiled again; the variants run the same instructions.

Prints one line per variant: "L<k> <path> <sha256>". Exit 0 on success, 2 on bad arguments or a
build folder without TARGET, 1 when a link fails (its command and output are printed).
"""
import argparse
import hashlib
import os
import random
import shlex
import subprocess
import sys
import tempfile


def fail(code, message):
    print(f"layout-variants: {message}", file=sys.stderr)
    sys.exit(code)


def link_command(build_dir, target):
    """The last command ninja runs for TARGET (its link), as argv; TARGET's output path."""
    try:
        out = subprocess.run(["ninja", "-C", build_dir, "-t", "commands", target], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        fail(2, f"ninja cannot list the commands of '{target}' in {build_dir}: {e}")
    line = out.strip().splitlines()[-1]
    # CMake wraps a link as ": && CMD && :" (and sometimes "cd DIR && CMD").
    parts = [p.strip() for p in line.split("&&")]
    cmd = [p for p in parts if p and p != ":" and not p.startswith("cd ")]
    if not cmd:
        fail(2, f"no link command for '{target}' in: {line}")
    argv = shlex.split(cmd[-1])
    if "-o" not in argv:
        fail(2, f"the last command of '{target}' is not a link (no -o): {cmd[-1]}")
    return argv, argv[argv.index("-o") + 1]


def used_members(argv, build_dir, work):
    """{archive argument: [member, ...]} for the archive members the original link pulls in, in
    the linker's order (from the linker's trace)."""
    cmd = list(argv)
    cmd[cmd.index("-o") + 1] = os.path.join(work, "trace.out")
    # -t twice: GNU ld then names archive members too, as "(lib.a)member.o"; lld as "lib.a(member.o)".
    r = subprocess.run(cmd + ["-Wl,-t,-t"], cwd=build_dir, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout + r.stderr, file=sys.stderr)
        fail(1, "the original link fails")
    used = {}
    for line in (r.stdout + r.stderr).splitlines():
        line = line.strip()
        if line.endswith(")") and ".a(" in line:
            archive, member = line[:-1].split(".a(", 1)
        elif line.startswith("(") and ".a)" in line:
            archive, member = line[1:].split(".a)", 1)
        else:
            continue
        used.setdefault(os.path.realpath(os.path.join(build_dir, archive + ".a")), []).append(member)
    return used


def expand_archives(argv, build_dir, work):
    """argv with each static archive of BUILD_DIR replaced by the member objects the link used
    (extracted into WORK), and the positions of the objects that may be shuffled."""
    used = used_members(argv, build_dir, work)
    out, movable = [], []
    for i, a in enumerate(argv):
        path = os.path.realpath(os.path.join(build_dir, a))
        if a.endswith(".a") and path.startswith(os.path.realpath(build_dir)):
            members = subprocess.run(["ar", "t", path], check=True, capture_output=True, text=True).stdout.split()
            dest = os.path.join(work, f"ar{i}")
            os.makedirs(dest)
            # An archive none of whose members the link pulls in contributes nothing. Had the trace
            # not been read, the link below would fail on undefined symbols, not go wrong silently.
            for m in used.get(path, []):
                if members.count(m) != 1:
                    fail(2, f"{a} has {members.count(m)} members named {m}; cannot take it apart")
                with open(os.path.join(dest, m), "wb") as f:
                    f.write(subprocess.run(["ar", "p", path, m], check=True, capture_output=True).stdout)
                movable.append(len(out))
                out.append(os.path.join(dest, m))
        else:
            if a.endswith(".o"):
                movable.append(len(out))
            out.append(a)
    return out, movable


def padding_object(work, compiler, bytes_):
    src = os.path.join(work, "layout_pad.S")
    obj = os.path.join(work, "layout_pad.o")
    with open(src, "w") as f:
        f.write(f".text\n.globl dq_layout_pad\ndq_layout_pad:\n.skip {bytes_}, 0xcc\n"
                ".section .note.GNU-stack,\"\",@progbits\n")
    subprocess.run([compiler, "-c", src, "-o", obj], check=True)
    return obj


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir")
    ap.add_argument("target", help="ninja target, e.g. dynqual-exec or dq-run")
    ap.add_argument("k", type=int)
    ap.add_argument("out_dir")
    ap.add_argument("--seed-base", type=int, default=0)
    a = ap.parse_args()
    if a.k < 1:
        fail(2, "K must be at least 1")
    argv, output = link_command(a.build_dir, a.target)
    name = os.path.basename(output)
    with tempfile.TemporaryDirectory(prefix="dq-layout-") as work:
        expanded, movable = expand_archives(argv, a.build_dir, work)
        for k in range(1, a.k + 1):
            seed = a.seed_base + k
            objs = [expanded[i] for i in movable]
            random.Random(seed).shuffle(objs)
            cmd = list(expanded)
            for i, o in zip(movable, objs):
                cmd[i] = o
            pad = padding_object(work, argv[0], 64 * (seed % 61) + 16 * (seed % 4))
            first = movable[0] if movable else cmd.index("-o") + 2
            cmd.insert(first, pad)
            dest = os.path.abspath(os.path.join(a.out_dir, f"L{k}", name))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            cmd[cmd.index("-o") + 1] = dest
            r = subprocess.run(cmd, cwd=a.build_dir, capture_output=True, text=True)
            if r.returncode != 0:
                print(" ".join(shlex.quote(c) for c in cmd), file=sys.stderr)
                print(r.stdout + r.stderr, file=sys.stderr)
                fail(1, f"the link of layout L{k} failed")
            with open(dest, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            print(f"L{k} {dest} {digest}")


if __name__ == "__main__":
    main()
