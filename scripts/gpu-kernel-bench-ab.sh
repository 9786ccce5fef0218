#!/usr/bin/env bash
# Kernel microbenchmarks before and after a change, on the GPU machine, in one call
# (docs/devices.md, "Kernel microbenchmarks"). From the root of the new checkout:
#   scripts/gpu-kernel-bench-ab.sh BASE_SRC DEPS OUT
# BASE_SRC  a checkout of the baseline (only its compiler/runtime is built)
# DEPS      googletest/ and benchmark/ sources (scripts/gpu-qualify-prepare.sh puts them in .dev/gpu)
# OUT       where everything is written
# It builds both runtimes (Release, hip device; in parallel), runs the new build's GPU tests
# (ctest -L gpu), then dq-kernel-bench of baseline and new interleaved, A B A B (KB_ROUNDS rounds,
# default 2), on the bandwidth kernels (KB_FILTER), and writes:
#   OUT/table.txt    GPU, clocks, and per kernel: GB/s and share of the copy peak, baseline and new
#                    (mean of the rounds; each round's own copy peak), plus each run's warnings
#   OUT/{base,new}-N.json / .txt, OUT/build-*.log, OUT/ctest.log
# Exit status: 1 when a build fails, 2 when a GPU test fails, else 0.
set -u -o pipefail
BASE_SRC=$(cd "${1:?usage: scripts/gpu-kernel-bench-ab.sh BASE_SRC DEPS OUT}" && pwd)
DEPS=$(cd "${2:?DEPS}" && pwd)
OUT=${3:?OUT}
NEW_SRC=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${KB_ROUNDS:-2}
FILTER=${KB_FILTER:-copy_peak|memcpy_d2d|copy_transpose|add_|exp_}
TEST_TIMEOUT=${KB_TEST_TIMEOUT_S:-240}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
start=$(date +%s)
el() { echo "$(($(date +%s) - start)) s"; }

build() { # src dir log
  cmake -G Ninja -S "$1/compiler/runtime" -B "$2" -DDYNQUAL_WITH_HIP=ON -DCMAKE_BUILD_TYPE=Release \
    -DDQ_GTEST_SOURCE_DIR="$DEPS/googletest" -DDQ_BENCHMARK_SOURCE_DIR="$DEPS/benchmark" > "$3" 2>&1 &&
    ninja -C "$2" -j8 dq-kernel-bench >> "$3" 2>&1
}
BB=$(mktemp -d)/base NB=$(mktemp -d)/new
build "$BASE_SRC" "$BB" "$OUT/build-base.log" &
pb=$!
build "$NEW_SRC" "$NB" "$OUT/build-new.log"
rn=$?
wait $pb
rb=$?
echo "build base rc=$rb new rc=$rn ($(el))"
if [ $rb -ne 0 ] || [ $rn -ne 0 ]; then
  grep -h -B2 -A12 -m5 "error" "$OUT"/build-*.log | head -60
  exit 1
fi

# The new build's GPU tests (device conformance, every kernel against the sim).
ninja -C "$NB" -j16 >> "$OUT/build-new.log" 2>&1 &&
  timeout "$TEST_TIMEOUT" ctest --test-dir "$NB" -L gpu --no-tests=error -j4 --output-on-failure > "$OUT/ctest.log" 2>&1
rt=$?
echo "gpu tests rc=$rt ($(el))"
grep -E "tests passed|tests failed|Failed|\*\*\*" "$OUT/ctest.log" | head -20

# A baseline without the min_time rewrite (KernelBench.cpp minTimeFlag) gets the bare number.
base_min=0.2s
grep -q minTimeFlag "$BASE_SRC/compiler/runtime/bench/KernelBench.cpp" || base_min=0.2
for i in $(seq 1 "$ROUNDS"); do
  for side in base new; do
    if [ $side = base ]; then bin=$BB/dq-kernel-bench mt=$base_min; else bin=$NB/dq-kernel-bench mt=0.2s; fi
    "$bin" --device=hip --benchmark_filter="$FILTER" --benchmark_min_time=$mt \
      --benchmark_out="$OUT/$side-$i.json" --benchmark_out_format=json > "$OUT/$side-$i.txt" 2>&1
    echo "$side round $i rc=$? ($(el))"
  done
done

{
  echo "## GPU"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.limit \
    --format=csv 2>&1
  nvcc --version 2>&1 | tail -2 | head -1
  echo
  python3 - "$OUT" "$ROUNDS" <<'EOF'
import json, sys, statistics
out, rounds = sys.argv[1], int(sys.argv[2])
runs = {s: [] for s in ("base", "new")}
for s in runs:
    for i in range(1, rounds + 1):
        try:
            runs[s].append(json.load(open(f"{out}/{s}-{i}.json"))["benchmarks"])
        except Exception as e:
            print(f"{s}-{i}: no results ({e})")
names = []
for s in runs:
    for r in runs[s]:
        for b in r:
            if b["name"] not in names:
                names.append(b["name"])
def vals(s, name, key):
    v = [b.get(key) for r in runs[s] for b in r if b["name"] == name and b.get(key) is not None]
    return v
def fmt(v, d=0):
    return f"{statistics.mean(v):.{d}f}" if v else "-"
print(f"| kernel | baseline GB/s | baseline % of copy peak | new GB/s | new % of copy peak |")
print("|---|---|---|---|---|")
for n in names:
    err = [b.get("error_message") for s in runs for r in runs[s] for b in r if b["name"] == n and b.get("error_occurred")]
    row = f"| {n} | {fmt(vals('base', n, 'GB/s'))} | {fmt(vals('base', n, 'pct_of_copy_peak'), 1)} | " \
          f"{fmt(vals('new', n, 'GB/s'))} | {fmt(vals('new', n, 'pct_of_copy_peak'), 1)} |"
    print(row + (f" ERROR: {err[0]}" if err else ""))
print(f"\nmean of {rounds} rounds each, interleaved base/new; per run:")
for n in names:
    print(f"  {n}: base " + " ".join(f"{v:.0f}" for v in vals('base', n, 'GB/s')) +
          " / new " + " ".join(f"{v:.0f}" for v in vals('new', n, 'GB/s')) + " GB/s")
EOF
  echo
  echo "## warnings printed by each run"
  for f in "$OUT"/base-*.txt "$OUT"/new-*.txt; do
    echo "$(basename "$f"): $(grep -ciE "warning|min_time" "$f") line(s) $(grep -iE "warning|min_time" "$f" | sort -u | head -3 | tr '\n' ' ')"
  done
  echo
  echo "gpu tests rc=$rt: $(grep -E "tests passed|tests failed" "$OUT/ctest.log" | head -1)"
  echo "total $(el)"
} > "$OUT/table.txt" 2>&1
cat "$OUT/table.txt"
[ $rt -eq 0 ] || exit 2
