#!/usr/bin/env bash
# How often `dynqual bisect` names the right commit, and what it spends (docs/commands/bisect.md):
# RUNS bisections of generated 16-revision repositories (bisect-repo.sh), each with a 5 %
# slowdown of SLOW_MODEL at a random commit K; every second run also has a 5 % speed-up of
# FAST_MODEL at another random commit J. Prints one line per run and the medians.
# BISECT_ARGS adds flags to every bisect (e.g. "--samples 3"). Run by hand (minutes per bisection):
#   ci/test/bisect-bench.sh build/tools/dynqual corpus/decoder_tiny corpus/expand_where_shape 10 1
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$1" && pwd)
slow_dir=$2 fast_dir=$3 runs=${4:-10} seed=${5:-1}
slow=$(basename "$slow_dir") fast=$(basename "$fast_dir")
source "$here/perf-repo.sh"
source "$here/bisect-repo.sh"
python=${PYTHON3:-python3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bisect-bench-XXXXXX")
[ -n "${KEEP:-}" ] && echo "keeping $tmp" >&2 || trap 'rm -rf "$tmp"' EXIT
export DYNQUAL_REAL_BIN_DIR=$bin DYNQUAL_GATE_CACHE=$tmp/cache
RANDOM=$seed

# SLOW_MODEL's 5 %: 5 % of its median run time on the thread-cpu clock (`ab --inject-slowdown`
# measures that median and reports the busy work). FAST_MODEL spins 300 us a run on top of its
# own time, then 5 % of that total less from commit J on: a steady 5 % speed-up.
"$bin/dynqual" ab "$slow_dir" "$fast_dir" --a dq --b dq --inject-slowdown "$slow=5" \
  --looks 12 --samples 3 --warmup 1 --no-db --format json >"$tmp/calibrate.json" || true
read -r slow_us fast_base fast_us < <("$python" -c '
import json, sys
d = json.load(open(sys.argv[1]))
fast_ms = [c["base_median"] for c in d["comparisons"] if c["model"] == sys.argv[3]][0]
base = 300.0
print(round(d["slowdown_us"][sys.argv[2]], 2), base, round(base - 0.05 * (base + 1000 * fast_ms), 2))' \
  "$tmp/calibrate.json" "$slow" "$fast")
echo "5 % of $slow: $slow_us us a run; $fast: $fast_base us, then $fast_us us; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "run K J found-K found-J exit comparisons rounds process-runs builds seconds"
for r in $(seq 1 "$runs"); do
  k=$((RANDOM % 15 + 1)) j=0
  if [ $((r % 2)) -eq 0 ]; then
    j=$((RANDOM % 15 + 1))
    while [ "$j" -eq "$k" ]; do j=$((RANDOM % 15 + 1)); done
  fi
  repo=$tmp/r$r
  if [ "$j" -gt 0 ]; then
    make_bisect_repo "$repo" 15 "$k" "$slow" "$slow_us" "$j" "$fast" "$fast_base" "$fast_us"
  else
    make_bisect_repo "$repo" 15 "$k" "$slow" "$slow_us" 0 "$fast" "$fast_base" "$fast_base"
  fi
  set +e
  "$bin/dynqual" bisect --repo "$repo" --good HEAD~15 --bad HEAD "$slow_dir" "$fast_dir" "${perf_repo_build_flags[@]}" \
    --db "$tmp/bench.db" --format json ${BISECT_ARGS:-} >"$tmp/r$r.json" 2>"$tmp/r$r.log"
  code=$?
  set -e
  "$python" - "$tmp/r$r.json" "$repo" "$r" "$k" "$j" "$code" "$slow" "$fast" <<'PY' | tee -a "$tmp/lines"
import json, subprocess, sys
path, repo, r, k, j, code, slow, fast = sys.argv[1:9]
d = json.load(open(path))
def sha(i):
    return subprocess.run(["git", "-C", repo, "rev-parse", f"HEAD~{15 - int(i)}"], capture_output=True, text=True).stdout.strip()
t = {x["model"]: x for x in d["tracks"]}
fk = slow in t and t[slow]["culprit_sha"] == sha(k) and not t[slow]["skipped_inside"]
fj = "-" if int(j) == 0 else str(fast in t and t[fast]["culprit_sha"] == sha(j))
print(r, k, j, fk, fj, code, len(d["steps"]), d["total_rounds"], d["total_process_runs"], len(d["built"]), round(d["seconds"]))
PY
done
"$python" - "$tmp/lines" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
found = sum(r[3] == "True" for r in rows)
fj = [r[4] for r in rows if r[4] != "-"]
med = lambda i: statistics.median(float(r[i]) for r in rows)
print(f"found K in {found} of {len(rows)}; found J in {sum(x == 'True' for x in fj)} of {len(fj)}")
print(f"median per bisection: {med(6):g} comparisons, {med(7):g} ABBA rounds, {med(8):g} timed process runs, "
      f"{med(9):g} builds, {med(10):g} s")
PY
