#!/usr/bin/env bash
# The example workflows pass yamllint and the structure check, and the check fails on copies
# with a superseded run no longer cancelled, a secret in the pull-request workflow, and the
# commenter checking out the pull request.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON3:-python3}
fail() { echo "FAIL: $*" >&2; exit 1; }
if command -v yamllint >/dev/null; then
  yamllint -s -c "$here/workflows/.yamllint" "$here"/workflows/*.yml || fail "yamllint"
else
  echo "SKIP: yamllint not found (scripts/setup installs it)"; exit 77
fi
"$python" "$here/check-workflows.py" "$here/workflows" || fail "the shipped workflows fail the structure check"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cp "$here"/workflows/*.yml "$here"/workflows/Jenkinsfile "$tmp"/
sed -i 's/cancel-in-progress: true/cancel-in-progress: false/' "$tmp/gate.yml"
sed -i 's/--no-comment/--no-comment --token ${{ secrets.GITHUB_TOKEN }}/' "$tmp/gate.yml"
sed -i 's/ref: ${{ github.event.repository.default_branch }}/ref: ${{ github.event.workflow_run.head_sha }}/' "$tmp/gate-comment.yml"
sed -i 's/abortPrevious: true/abortPrevious: false/' "$tmp/Jenkinsfile"
set +e
out=$("$python" "$here/check-workflows.py" "$tmp")
code=$?
set -e
[ "$code" -eq 1 ] || fail "the broken copies exit $code, expected 1: $out"
for want in "gate.yml: concurrency.cancel-in-progress is true" "gate.yml: no secret in a workflow that runs pull-request code" \
  "gate-comment.yml: checkout takes the default branch" "Jenkinsfile: no disableConcurrentBuilds(abortPrevious: true)" \
  "4 problems"; do
  grep -qF "$want" <<<"$out" || fail "the check did not say '$want': $out"
done
echo "PASS: yamllint clean, structure check 0 problems; 4 planted problems found"
