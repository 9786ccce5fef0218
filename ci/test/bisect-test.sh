#!/usr/bin/env bash
# dynqual bisect end to end on generated perf repositories (perf-repo.sh, bisect-repo.sh):
#   16 revisions where commit K makes SLOW_MODEL PCT % slower and commit J makes FAST_MODEL PCT %
#   faster: bisect names K for the slowdown and J for the speed-up, exit 0, recorded in the store;
#   16 revisions with no change: exit 3, no culprit.
# PCT (env, default 15) is of each model's median per-run time on the thread-cpu clock (below).
# This test checks the search, so its change is well above the noise of a busy 2-core CI machine
# (a 5 % change measured +2.9 % [-3.4 %, +7.2 %] there); ci/test/bisect-bench.sh measures how
# often 5 % is located.
# usage: bisect-test.sh BIN_DIR SLOW_MODEL_DIR FAST_MODEL_DIR [K [J]]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$1" && pwd)
slow_dir=$2 fast_dir=$3 k=${4:-11} j=${5:-4} pct=${PCT:-15}
slow=$(basename "$slow_dir") fast=$(basename "$fast_dir")
source "$here/perf-repo.sh"
source "$here/bisect-repo.sh"
python=${PYTHON3:-python3}
fail() { echo "FAIL: $*" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ci-bisect-test-XXXXXX")
trap 'code=$?; if [ $code -eq 0 ]; then rm -rf "$tmp"; else echo "kept $tmp for a look"; fi' EXIT
export DYNQUAL_REAL_BIN_DIR=$bin DYNQUAL_GATE_CACHE=$tmp/cache

# SLOW_MODEL's PCT %: PCT % of its median run time on the thread-cpu clock (`ab --inject-slowdown`
# measures that median and reports the busy work). FAST_MODEL spins 300 us a run on top of its
# own time, then PCT % of that total less from commit J on: a steady PCT % speed-up.
"$bin/dynqual" ab "$slow_dir" "$fast_dir" --a dq --b dq --inject-slowdown "$slow=$pct" \
  --looks 12 --samples 3 --warmup 1 --no-db --format json >"$tmp/calibrate.json" || true
read -r slow_us fast_base fast_us < <("$python" -c '
import json, sys
d = json.load(open(sys.argv[1]))
fast_ms = [c["base_median"] for c in d["comparisons"] if c["model"] == sys.argv[3]][0]
frac = float(sys.argv[4]) / 100
base = max(300.0, 2 * frac * 1000 * fast_ms)  # enough spin to take PCT % of the total away
print(round(d["slowdown_us"][sys.argv[2]], 2), base, round(base - frac * (base + 1000 * fast_ms), 2))' \
  "$tmp/calibrate.json" "$slow" "$fast" "$pct")
echo "$pct % of $slow: $slow_us us a run; $fast spins $fast_base us, then $fast_us us (-$pct % of its total)"

bisect() {
  "$bin/dynqual" bisect --repo "$1" --good "$2" --bad "$3" "$slow_dir" "$fast_dir" "${perf_repo_build_flags[@]}" \
    --db "$tmp/dynqual.db" --format json --out "$4" --samples 3 --warmup 1 "${@:5}"
}

# 1. A slowdown at K and a speed-up at J.
make_bisect_repo "$tmp/r1" 15 "$k" "$slow" "$slow_us" "$j" "$fast" "$fast_base" "$fast_us"
set +e
bisect "$tmp/r1" "HEAD~15" HEAD "$tmp/out1" >"$tmp/r1.json"
code=$?
set -e
[ "$code" -eq 0 ] || fail "bisect exited $code, expected 0: $(cat "$tmp/out1/bisect.md" 2>/dev/null)"
want_k=$(git -C "$tmp/r1" rev-parse "HEAD~$((15 - k))") want_j=$(git -C "$tmp/r1" rev-parse "HEAD~$((15 - j))")
"$python" - "$tmp/r1.json" "$slow" "$want_k" "$fast" "$want_j" <<'PY' || fail "culprits: $(cat "$tmp/out1/bisect.md")"
import json, sys
d = json.load(open(sys.argv[1]))
tracks = {t["model"]: t for t in d["tracks"]}
slow, want_k, fast, want_j = sys.argv[2:6]
assert tracks[slow]["direction"] == "regression" and tracks[slow]["culprit_sha"] == want_k, tracks.get(slow)
assert tracks[slow]["confirmed"], tracks[slow]
assert tracks[fast]["direction"] == "improvement" and tracks[fast]["culprit_sha"] == want_j, tracks.get(fast)
print(f"located: {slow} at {want_k[:12]}, {fast} at {want_j[:12]}; {len(d['steps'])} comparisons, "
      f"{d['total_rounds']} rounds, {len(d['built'])} builds, {d['seconds']:.0f} s")
PY
runs=$("$bin/dynqual" db --db "$tmp/dynqual.db" query "SELECT count(*) FROM runs WHERE kind = 'bisect'" 2>/dev/null | tail -n 1 || true)
grep -q "1" <<<"$runs" || fail "the bisection is not in the store: $runs"

# 2. No change in the range: exit 3, no culprit.
make_bisect_repo "$tmp/r2" 15 99 "$slow" 0
set +e
bisect "$tmp/r2" "HEAD~15" HEAD "$tmp/out2" --model "$slow" >"$tmp/r2.json"
code=$?
set -e
[ "$code" -eq 3 ] || fail "a range without a change exited $code, expected 3: $(cat "$tmp/out2/bisect.md")"
"$python" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["tracks"] == [] and "no regression between the endpoints" in d["summary"], d["summary"]
print("no change:", d["summary"])' "$tmp/r2.json" || fail "no-change outcome"
echo "PASS: bisect located commit $k (slower) and $j (faster) of 16; a range without a change exits 3"
