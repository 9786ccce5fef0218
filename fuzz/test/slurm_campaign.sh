#!/usr/bin/env bash
# A nightly campaign on a real Slurm: starts a one-node cluster on this machine (munged, slurmctld,
# slurmd, generated slurm.conf with this machine's CPUs and memory, private ports and folders),
# submits a 4-task campaign of a fixed number of cases with `dynqual campaign submit --slurm`,
# waits for the merge job and checks that every shard's cases are in the merged database exactly
# once, that merging again adds nothing, and that the buckets and the report exist. Then a task
# cancelled mid-run (scancel) and rerun with --resume must give the same merged result as an
# uninterrupted campaign of the same seeds. Stops the daemons it started (by their pids) on exit.
# Exits 77 (skipped) only when the daemons cannot start, printing why.
#   slurm_campaign.sh DYNQUAL_BINARY
set -uo pipefail
dq=$1
cases=${SLURM_TEST_CASES:-25}
t0=$(date +%s)
work=$(mktemp -d /tmp/dq-slurm-test-XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  [ -S "$work/munge.sock" ] && /usr/sbin/munged -s --socket="$work/munge.sock" >/dev/null 2>&1
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  if [ "${keep:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
skip() { echo "SKIP: $*"; for f in "$work"/log/*; do echo "--- $f"; tail -5 "$f"; done; exit 77; }
fail() { echo "FAIL: $*"; keep=1; for f in "$work"/log/* "$work"/night*/logs/*; do [ -f "$f" ] && { echo "--- $f"; tail -15 "$f"; }; done; exit 1; }

for b in /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd sbatch squeue scancel; do
  command -v "$b" >/dev/null || skip "$b is not installed (scripts/setup installs munge, slurmctld, slurmd, slurm-client)"
done
[ "$(id -u)" = 0 ] || skip "the one-node cluster runs its daemons as root (SlurmUser=root); run as root"

mkdir -p "$work/log" "$work/state" "$work/spool"
dd if=/dev/urandom of="$work/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$work/munge.key"
/usr/sbin/munged --force --socket="$work/munge.sock" --key-file="$work/munge.key" --log-file="$work/log/munged.log" \
  --pid-file="$work/munged.pid" --seed-file="$work/munged.seed" || skip "munged did not start"
pids+=("$(cat "$work/munged.pid")")

host=$(hostname -s)
cpus=$(nproc)
mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
# Private ports from the pid, so two clusters on one machine do not meet.
port=$(( 20000 + ($$ % 20000) ))
cat > "$work/slurm.conf" <<EOF
ClusterName=dqtest
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$work/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
KillWait=5
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=dqtest Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$work/slurm.conf"
/usr/sbin/slurmctld -D -f "$SLURM_CONF" >"$work/log/slurmctld.out" 2>&1 &
pids+=($!)
/usr/sbin/slurmd -D -f "$SLURM_CONF" >"$work/log/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 60); do
  sinfo -h -o %T 2>/dev/null | grep -qE '^idle' && break
  sleep 0.5
done
sinfo -h -o %T 2>/dev/null | grep -qE '^idle' || skip "the one-node cluster did not come up within 30 s"
echo "cluster up after $(( $(date +%s) - t0 )) s ($cpus CPUs)"

# Waits until FILE exists or the jobs are gone; fails after $2 seconds.
wait_for() {
  for _ in $(seq $(( $2 * 2 ))); do [ -e "$1" ] && return 0; sleep 0.5; done
  fail "no $1 after $2 s (squeue: $(squeue -h 2>&1 | head -5))"
}
q() { "$dq" db query --db "$1" "$2" | tail -n +2; }

# 1. A 4-task campaign with a knob, so that there are buckets to triage and report.
night="$work/night"
"$dq" campaign submit --slurm --tasks 4 --cases "$cases" --seed 11 --night test-night --inject output-rank-collapse \
  --time 10m --out "$night" >"$work/submit.out" || fail "campaign submit failed: $(cat "$work/submit.out")"
cat "$work/submit.out"
wait_for "$night/merge.done" 100
total=0
for i in 0 1 2 3; do
  n=$(q "$night/shard-$i/shard.db" "SELECT COUNT(*) FROM fuzz_campaign_cases")
  [ "$n" = "$cases" ] || fail "shard $i holds $n cases, not $cases"
  total=$((total + n))
done
merged=$(q "$night/night.db" "SELECT COUNT(*) FROM fuzz_campaign_cases")
distinct=$(q "$night/night.db" "SELECT COUNT(*) FROM (SELECT DISTINCT campaign, case_index FROM fuzz_campaign_cases)")
seeds=$(q "$night/night.db" "SELECT COUNT(DISTINCT seed) FROM fuzz_campaign_cases")
[ "$merged" = "$total" ] || fail "merged database holds $merged cases, the shards $total"
[ "$distinct" = "$total" ] || fail "merged database holds $distinct distinct cases of $total"
[ "$seeds" = "$total" ] || fail "$seeds distinct seeds over $total cases: shards overlap"
for i in 0 1 2 3; do
  "$dq" db query --db "$night/shard-$i/shard.db" --format json "SELECT campaign, case_index, seed FROM fuzz_campaign_cases" |
    python3 -c 'import json,sys; print("\n".join("%s|%s|%s" % (r["campaign"], r["case_index"], r["seed"]) for r in json.load(sys.stdin)))'
done | sort >"$work/shard-cases.txt"
# Every case of every shard is in the merged database once, with the same seed.
"$dq" db query --db "$night/night.db" --format json "SELECT campaign, case_index, seed FROM fuzz_campaign_cases" |
  python3 -c 'import json,sys; print("\n".join("%s|%s|%s" % (r["campaign"], r["case_index"], r["seed"]) for r in json.load(sys.stdin)))' |
  sort >"$work/merged-cases.txt"
cmp -s "$work/shard-cases.txt" "$work/merged-cases.txt" || fail "merged cases differ from the shards' cases"
unfinished=$(q "$night/night.db" "SELECT COUNT(*) FROM fuzz_campaigns WHERE ended_at IS NULL")
[ "$unfinished" = 0 ] || fail "$unfinished shard(s) unfinished after a complete campaign"
# Merging again adds nothing.
"$dq" db merge --db "$night/night.db" "$night"/shard-*/shard.db >"$work/remerge.out" || fail "second merge failed"
grep -q "fuzz: 0 new cases, 0 new findings" "$work/remerge.out" || fail "second merge added rows: $(cat "$work/remerge.out")"
[ "$(q "$night/night.db" "SELECT COUNT(*) FROM fuzz_campaign_cases")" = "$total" ] || fail "second merge changed the case count"
buckets=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["buckets"]))' "$night/triage.json")
[ "$buckets" -ge 1 ] || fail "no bucket in triage.json with inject=output-rank-collapse"
grep -q "^## Buckets" "$night/report.md" || fail "report.md has no Buckets section"
grep -q "<canvas\|chart-state" "$night/report.html" || fail "report.html has no charts"
echo "campaign: 4 shards x $cases cases merged exactly once ($total), $buckets bucket(s), report written"

# 2. scancel mid-run, rerun with --resume: the same result as an uninterrupted shard.
long=${SLURM_TEST_LONG_CASES:-3000}
kill_night="$work/night-cancel"
"$dq" campaign submit --slurm --tasks 1 --cases "$long" --seed 23 --night cancel-night --time 10m \
  --out "$kill_night" >"$work/submit2.out" || fail "second submit failed"
array=$(awk '/^array/ {print $2}' "$kill_night/jobs.txt")
for _ in $(seq 60); do
  [ "$(squeue -h -j "$array" -o %T 2>/dev/null | head -1)" = RUNNING ] && break
  sleep 0.5
done
# Cancel once some cases are committed, not after a fixed sleep: a fast machine finishes the
# whole shard within seconds. The task writes its database on local disk until it ends.
live="${TMPDIR:-/tmp}/dq-fuzz-$array-0/shard.db"
for _ in $(seq 300); do
  n=$("$dq" db query --db "$live" "SELECT COUNT(*) FROM fuzz_campaign_cases" 2>/dev/null | tail -n +2)
  [ "${n:-0}" -ge "${SLURM_TEST_CANCEL_AFTER_CASES:-100}" ] 2>/dev/null && break
  sleep 0.1
done
scancel "$array"
wait_for "$kill_night/merge.done" 60
done1=$(q "$kill_night/shard-0/shard.db" "SELECT COUNT(*) FROM fuzz_campaign_cases")
open1=$(q "$kill_night/shard-0/shard.db" "SELECT COUNT(*) FROM fuzz_campaigns WHERE ended_at IS NULL")
[ "$done1" -gt 0 ] && [ "$done1" -lt "$long" ] || fail "cancelled shard holds $done1 cases (wanted 0 < n < $long)"
[ "$open1" = 1 ] || fail "the cancelled shard is not marked unfinished"
grep -q "unfinished" "$kill_night/logs/merge.out" || fail "merge did not report the unfinished shard"
echo "cancelled: $done1 of $long cases committed, shard unfinished"
rm -f "$kill_night/merge.done"
rerun=$(sbatch --parsable --array=0 "$kill_night/campaign.sbatch") || fail "rerun sbatch failed"
sbatch --parsable --dependency=afterany:"$rerun" "$kill_night/merge.sbatch" >/dev/null || fail "merge sbatch failed"
wait_for "$kill_night/merge.done" 100
# The same shard without interruption, outside Slurm.
"$dq" fuzz --shard 0/1 --seed 23 --night ref --cases "$long" --db "$work/ref.db" --jobs 1 >/dev/null
[ $? -le 1 ] || fail "reference campaign failed"
cols="case_index, seed, valid, nodes, findings"
"$dq" db query --db "$kill_night/night.db" "SELECT $cols FROM fuzz_campaign_cases ORDER BY case_index" >"$work/resumed.txt"
"$dq" db query --db "$work/ref.db" "SELECT $cols FROM fuzz_campaign_cases ORDER BY case_index" >"$work/reference.txt"
[ "$(($(wc -l <"$work/resumed.txt") - 1))" = "$long" ] || fail "resumed shard holds $(($(wc -l <"$work/resumed.txt") - 1)) cases"
cmp -s "$work/resumed.txt" "$work/reference.txt" || fail "resumed campaign differs from the uninterrupted one"
fcols="case_index, signature, bucket"
"$dq" db query --db "$kill_night/night.db" "SELECT $fcols FROM fuzz_findings ORDER BY case_index, signature" >"$work/rf.txt"
"$dq" db query --db "$work/ref.db" "SELECT $fcols FROM fuzz_findings ORDER BY case_index, signature" >"$work/ff.txt"
cmp -s "$work/rf.txt" "$work/ff.txt" || fail "resumed findings differ from the uninterrupted campaign's"
[ "$(q "$kill_night/night.db" "SELECT COUNT(*) FROM fuzz_campaigns WHERE ended_at IS NULL")" = 0 ] ||
  fail "the resumed shard is still unfinished"
echo "resumed: $long cases, identical to the uninterrupted campaign"
echo "PASS in $(( $(date +%s) - t0 )) s"
