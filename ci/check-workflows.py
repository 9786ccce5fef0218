#!/usr/bin/env python3
"""Structure check of the example CI files in ci/workflows (docs/ci.md).

Each workflow is loaded with PyYAML and checked against a small schema: the keys a team relies
on (triggers, permissions, concurrency, runner labels, the cache, the ci/gate calls, the
artifact hand-over of the fork split) must be there with the values that make them safe. The
Jenkinsfile is checked for its stages and calls as text. Prints one line per problem naming
the file and key path; exits 1 when there is any, 2 when a file cannot be read.

usage: check-workflows.py [DIR]   (default: the workflows folder beside this script)
"""
import os
import sys

import yaml


def get(doc, path):
    """The value at a dotted path ('jobs.*.runs-on' takes every job), as a list of values."""
    values = [doc]
    for part in path.split("."):
        nxt = []
        for v in values:
            if not isinstance(v, dict):
                continue
            if part == "*":
                nxt.extend(v.values())
            elif part == "on":
                # YAML 1.1 reads the key `on` as True; GitHub reads it as the trigger key.
                if "on" in v:
                    nxt.append(v["on"])
                elif True in v:
                    nxt.append(v[True])
            elif part in v:
                nxt.append(v[part])
        values = nxt
    return values


def steps(doc):
    out = []
    for job in get(doc, "jobs.*"):
        out.extend(job.get("steps", []) if isinstance(job, dict) else [])
    return out


def runs(doc):
    return "\n".join(str(s.get("run", "")) for s in steps(doc))


def uses(doc, action):
    return [s for s in steps(doc) if str(s.get("uses", "")).startswith(action)]


def labels(v):
    return v if isinstance(v, list) else [v]


# name -> list of (what, check(doc, text) -> bool)
SCHEMA = {
    "gate.yml": [
        ("on.pull_request", lambda d, t: get(d, "on.pull_request") != []),
        ("permissions.contents is read and nothing is write",
         lambda d, t: get(d, "permissions") == [{"contents": "read"}]),
        ("no secret in a workflow that runs pull-request code", lambda d, t: "secrets." not in t),
        ("concurrency.group names the pull request",
         lambda d, t: any("pull_request.number" in str(g) for g in get(d, "concurrency.group"))),
        ("concurrency.cancel-in-progress is true", lambda d, t: get(d, "concurrency.cancel-in-progress") == [True]),
        ("jobs.*.runs-on is a labelled self-hosted runner",
         lambda d, t: all("self-hosted" in labels(r) and len(labels(r)) >= 2 for r in get(d, "jobs.*.runs-on"))
         and get(d, "jobs.*.runs-on") != []),
        ("jobs.*.env.DYNQUAL_GATE_CACHE keeps the build cache", lambda d, t: get(d, "jobs.*.env.DYNQUAL_GATE_CACHE") != []),
        ("a step runs ci/gate --no-comment", lambda d, t: "ci/gate" in runs(d) and "--no-comment" in runs(d)),
        ("checkout keeps no credentials",
         lambda d, t: all(s.get("with", {}).get("persist-credentials") is False for s in uses(d, "actions/checkout"))
         and uses(d, "actions/checkout") != []),
        ("upload-artifact keeps the report even on failure",
         lambda d, t: any(s.get("if") == "always()" for s in uses(d, "actions/upload-artifact"))),
    ],
    "gate-comment.yml": [
        ("on.workflow_run.workflows names the gate",
         lambda d, t: any("dynqual gate" in ws for ws in get(d, "on.workflow_run.workflows"))),
        ("on.workflow_run.types is completed", lambda d, t: get(d, "on.workflow_run.types") == [["completed"]]),
        ("permissions.pull-requests is write", lambda d, t: get(d, "permissions.pull-requests") == ["write"]),
        ("checkout takes the default branch, never the pull request",
         lambda d, t: uses(d, "actions/checkout") != []
         and all("default_branch" in str(s.get("with", {}).get("ref", "")) for s in uses(d, "actions/checkout"))),
        ("a step downloads the gate's artifact of that run",
         lambda d, t: any("workflow_run.id" in str(s.get("with", {}).get("run-id", ""))
                          for s in uses(d, "actions/download-artifact"))),
        ("a step runs ci/gate --post-comment", lambda d, t: "ci/gate --post-comment" in runs(d)),
        ("DYNQUAL_EXPECT_HEAD_SHA pins the pull request to the gated commit",
         lambda d, t: "DYNQUAL_EXPECT_HEAD_SHA: ${{ github.event.workflow_run.head_sha }}" in t),
    ],
    "nightly.yml": [
        ("on.schedule has a cron", lambda d, t: any("cron" in s for v in get(d, "on.schedule") for s in v)),
        ("jobs.*.runs-on is a labelled self-hosted runner",
         lambda d, t: all("self-hosted" in labels(r) for r in get(d, "jobs.*.runs-on")) and get(d, "jobs.*.runs-on") != []),
        ("a step runs ci/nightly", lambda d, t: "ci/nightly" in runs(d)),
        ("permissions.contents is read", lambda d, t: get(d, "permissions.contents") == ["read"]),
    ],
}

JENKINS = [
    "stage('Gate')", "stage('Comment')", "stage('Verdict')", "ci/gate --base", "--no-comment",
    "--post-comment", "disableConcurrentBuilds(abortPrevious: true)", "DYNQUAL_GATE_CACHE", "changeRequest()",
]


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "workflows")
    problems = []
    for name, checks in SCHEMA.items():
        path = os.path.join(folder, name)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            doc = yaml.safe_load(text)
        except (OSError, yaml.YAMLError) as e:
            print(f"{path}: cannot read: {e}")
            return 2
        for what, check in checks:
            try:
                ok = check(doc, text)
            except (AttributeError, TypeError):
                ok = False
            if not ok:
                problems.append(f"{path}: {what}: missing or wrong")
    jenkins = os.path.join(folder, "Jenkinsfile")
    try:
        with open(jenkins, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        print(f"{jenkins}: cannot read: {e}")
        return 2
    problems += [f"{jenkins}: no {s}" for s in JENKINS if s not in text]
    for p in problems:
        print(p)
    print(f"check-workflows: {len(SCHEMA)} workflows and the Jenkinsfile, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
