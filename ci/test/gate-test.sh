#!/usr/bin/env bash
# ci/gate end to end on a throwaway repository (perf-repo.sh) with a fake gh on PATH:
#   A/A posts one comment and exits 0; a second run edits that comment; a head whose dynqual-exec
#   spins 2.8 ms more per run of the model (about 14 times its run) exits 1 and says regression;
#   a head that does not build exits 4 naming its sha; a comment over the limit is cut with a
#   link; --no-comment then --post-comment posts the same comment. The footer gives the run's own
#   looks and margin; the store goes into the output folder, never the checkout.
# usage: gate-test.sh BIN_DIR MODEL_DIR   (BIN_DIR holds this build's dynqual and dynqual-exec)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$1" && pwd)
model=$(cd "$2" && pwd) # absolute: one run starts in the checkout
name=$(basename "$model")
source "$here/perf-repo.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ci-gate-test-XXXXXX")
trap 'code=$?; if [ $code -eq 0 ]; then rm -rf "$tmp"; else echo "kept $tmp for a look"; fi' EXIT
export DYNQUAL_REAL_BIN_DIR=$bin DYNQUAL_BIN=$bin/dynqual DYNQUAL_GATE_CACHE=$tmp/cache
export FAKE_GH_DIR=$tmp/gh PATH="$here/fake-bin:$PATH" GITHUB_REPOSITORY=acme/dq DYNQUAL_REPORT_URL=https://ci.example/run/1
export DYNQUAL_DB=$tmp/dynqual.db
unset GITHUB_STEP_SUMMARY GITHUB_REF DYNQUAL_COMMENT_CMD DYNQUAL_COMMENT_LIMIT || true
repo=$tmp/repo
perf_repo_init "$repo"
# The model spins 200 us a run on every revision, so its time is steady even on a loaded machine.
perf_repo_commit "$repo" "baseline" "$name 200"            # HEAD~3
perf_repo_commit "$repo" "docs only"                       # HEAD~2: A/A against HEAD~3
perf_repo_commit "$repo" "slow $name" "$name 3000"         # HEAD~1: +2.8 ms a run
touch "$repo/BROKEN" && git -C "$repo" add BROKEN && git -C "$repo" commit -q -m broken
aa_base=$(perf_repo_sha "$repo" HEAD~3) aa_head=$(perf_repo_sha "$repo" HEAD~2)
slow=$(perf_repo_sha "$repo" HEAD~1) broken=$(perf_repo_sha "$repo" HEAD)

# The fake revisions change the measured time only (busy waiting), which the sim's modelled device
# time, the gate's default on sim, does not see by design: decide on the measured time.
gate_args=(-- "$model" "${perf_repo_build_flags[@]}" --metric measured --looks 12,24 --samples 3 --warmup 1 --margin 0.05)
fail() { echo "FAIL: $*" >&2; exit 1; }
comments() { ls "$FAKE_GH_DIR/comments" | wc -l; }

# 1. A/A: one comment, exit 0, the step summary written.
export GITHUB_STEP_SUMMARY=$tmp/summary.md
set +e
"$here/../gate" --repo "$repo" --base "$aa_base" --head "$aa_head" --pr 7 --out "$tmp/aa" "${gate_args[@]}"
code=$?
set -e
[ "$code" -eq 0 ] || fail "A/A exited $code, expected 0 (see $tmp/aa/gate.log)"
[ "$(comments)" -eq 1 ] || fail "A/A left $(comments) comments, expected 1"
grep -q "^api --method POST repos/acme/dq/issues/7/comments" "$FAKE_GH_DIR/calls.log" || fail "no POST: $(cat "$FAKE_GH_DIR/calls.log")"
grep -q "dynqual gate: pass (exit 0)" "$FAKE_GH_DIR/comments/1001.md" || fail "comment: $(head -5 "$FAKE_GH_DIR/comments/1001.md")"
grep -q "dynqual gate: pass" "$GITHUB_STEP_SUMMARY" || fail "step summary not written"
unset GITHUB_STEP_SUMMARY

# The footer describes the measured test this run used (--looks 12,24 --margin 0.05), not a fixed file.
c=$FAKE_GH_DIR/comments/1001.md
grep -q "^### How this gate decided" "$c" || fail "comment lacks the footer: $(tail -5 "$c")"
grep -qF 'Decided on cpu\_time\_ms, the measured thread-cpu time per run' "$c" || fail "footer: $(tail -3 "$c")"
grep -qF 'looks after rounds 12, 24' "$c" || fail "footer does not give the run's looks: $(tail -3 "$c")"
grep -qF '±5 % margin' "$c" || fail "footer does not give the run's margin: $(tail -3 "$c")"
grep -q "How far to trust this gate" "$c" && fail "a fixed stats file in the comment without DYNQUAL_GATE_STATS"

# 2. A second run edits the same comment instead of adding one. Without DYNQUAL_DB and run from the
#    checkout, the store goes into the output folder, not the checkout, and the log says so.
set +e
(cd "$repo" && env -u DYNQUAL_DB "$here/../gate" --repo "$repo" --base "$aa_base" --head "$aa_head" --pr 7 \
  --out "$tmp/aa2" "${gate_args[@]}")
code=$?
set -e
[ "$code" -eq 0 ] || fail "second A/A exited $code (see $tmp/aa2/gate.log)"
[ "$(comments)" -eq 1 ] || fail "second run left $(comments) comments, expected 1"
grep -q "^api --method PATCH repos/acme/dq/issues/comments/1001" "$FAKE_GH_DIR/calls.log" || fail "no PATCH of 1001"
[ ! -e "$repo/dynqual.db" ] || fail "ci/gate wrote dynqual.db into the checkout"
[ -s "$tmp/aa2/dynqual.db" ] || fail "no store in the output folder $tmp/aa2"
grep -q "^dynqual gate: recorded run [0-9]* into $tmp/aa2/dynqual.db$" "$tmp/aa2/gate.log" ||
  fail "the log does not name the store: $(tail -3 "$tmp/aa2/gate.log")"

# 2b. Decided on the modelled time: the footer says so, and the runner's rates for the measured
#     test (DYNQUAL_GATE_STATS) are left out.
set +e
DYNQUAL_COMMENT_CMD=none DYNQUAL_GATE_STATS=$here/../gate-stats.md "$here/../gate" --repo "$repo" --base "$aa_base" \
  --head "$aa_head" --out "$tmp/modelled" -- "$model" "${perf_repo_build_flags[@]}" --metric modelled-device-time
code=$?
set -e
[ "$code" -eq 0 ] || fail "modelled A/A exited $code (see $tmp/modelled/gate.log)"
grep -qF 'Decided on modelled\_device\_ms' "$tmp/modelled/comment.md" || fail "modelled footer: $(tail -5 "$tmp/modelled/comment.md")"
grep -q "How far to trust this gate" "$tmp/modelled/comment.md" && fail "measured-test rates under a modelled decision"

# 3. Injected slowdown: exit 1, the comment says regression; a measured decision appends the
#    runner's rates from DYNQUAL_GATE_STATS.
set +e
DYNQUAL_GATE_STATS=$here/../gate-stats.md "$here/../gate" --repo "$repo" --base "$aa_head" --head "$slow" --pr 7 \
  --out "$tmp/slow" "${gate_args[@]}"
code=$?
set -e
[ "$code" -eq 1 ] || fail "slow head exited $code, expected 1 (see $tmp/slow/gate.log)"
[ "$(comments)" -eq 1 ] || fail "slow run left $(comments) comments"
grep -q "dynqual gate: regression (exit 1)" "$FAKE_GH_DIR/comments/1001.md" || fail "comment lacks regression"
grep -qF "${name//_/\\_}" "$FAKE_GH_DIR/comments/1001.md" || fail "comment does not name $name (Markdown-escaped)"
grep -q "How far to trust this gate" "$FAKE_GH_DIR/comments/1001.md" || fail "DYNQUAL_GATE_STATS not appended"

# 4. A head that does not build: exit 4, the comment names the revision; cut to a small limit.
set +e
DYNQUAL_COMMENT_LIMIT=1500 "$here/../gate" --repo "$repo" --base "$slow" --head "$broken" --pr 7 \
  --out "$tmp/broken" "${gate_args[@]}"
code=$?
set -e
[ "$code" -eq 4 ] || fail "broken head exited $code, expected 4"
c=$FAKE_GH_DIR/comments/1001.md
grep -q "infrastructure error (exit 4)" "$c" || fail "comment lacks the infrastructure error"
grep -q "build of $broken (${broken:0:12}) failed" "$c" || fail "comment does not name the broken revision: $(cat "$c")"
[ "$(wc -c <"$c")" -le 1500 ] || fail "comment of $(wc -c <"$c") bytes over the 1500 limit"
grep -q "cut at GitHub's limit; the full report is in the run's artifact: https://ci.example/run/1" "$c" ||
  fail "cut comment lacks the note and link"

# 5. The fork split: --no-comment posts nothing, --post-comment posts what it left.
calls=$(wc -l <"$FAKE_GH_DIR/calls.log")
set +e
"$here/../gate" --repo "$repo" --base "$slow" --head "$broken" --pr 7 --no-comment --out "$tmp/fork" "${gate_args[@]}"
code=$?
set -e
[ "$code" -eq 4 ] || fail "--no-comment run exited $code"
[ "$(wc -l <"$FAKE_GH_DIR/calls.log")" -eq "$calls" ] || fail "--no-comment called gh"
[ "$(cat "$tmp/fork/pr-number")" = 7 ] || fail "no pr-number left for the commenter"
echo 1111111111111111111111111111111111111111 >"$FAKE_GH_DIR/head-sha"
if DYNQUAL_EXPECT_HEAD_SHA=$broken "$here/../gate" --post-comment "$tmp/fork" 2>"$tmp/refused.log"; then
  fail "--post-comment posted to a pull request whose head is not the gated commit"
fi
grep -q "not the gated $broken; not posting" "$tmp/refused.log" || fail "refusal: $(cat "$tmp/refused.log")"
echo "$broken" >"$FAKE_GH_DIR/head-sha"
DYNQUAL_EXPECT_HEAD_SHA=$broken "$here/../gate" --post-comment "$tmp/fork"
[ "$(comments)" -eq 1 ] || fail "--post-comment added a comment instead of editing"
tail -n 1 "$FAKE_GH_DIR/calls.log" | grep -q "^api --method PATCH repos/acme/dq/issues/comments/1001" || fail "--post-comment did not edit"
cmp -s "$tmp/fork/comment.md" "$FAKE_GH_DIR/comments/1001.md" || fail "--post-comment posted other text"
echo "PASS: ci/gate A/A 0 + one comment, footer from the run's policy, store in DIR, edit in place, regression 1, build failure 4 naming ${broken:0:12}, cut at limit, fork split"
