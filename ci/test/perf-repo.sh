# Sourced by the ci tests and bench: a throwaway git repository whose revisions "build" in
# milliseconds. Each revision holds perf.txt ("MODEL MICROSECONDS" lines); its build
# (fake-build.sh, run by the gate's builder through --build-command) links the real dynqual of
# $DYNQUAL_REAL_BIN_DIR and wraps dynqual-exec so every timed run of MODEL spins that many more
# microseconds (dynqual-exec --busy-wait-us, on the timing clock). A revision holding BROKEN fails
# its build.

# The build flags every gate or bisect on such a repository takes.
perf_repo_build_flags=(--configure-command true --build-command "sh {src}/fake-build.sh {src} {build}")

# perf_repo_init DIR: a repository with fake-build.sh and an empty perf.txt, one commit "base".
perf_repo_init() {
  local dir=$1
  mkdir -p "$dir"
  git -C "$dir" init -q
  git -C "$dir" config user.name perf-repo
  git -C "$dir" config user.email perf-repo@example.com
  git -C "$dir" config commit.gpgsign false
  cat >"$dir/fake-build.sh" <<'BUILD'
#!/bin/sh
# fake-build.sh SRC BUILD: the real dynqual plus a dynqual-exec adding perf.txt's busy work.
set -e
src=$1 build=$2
if [ -e "$src/BROKEN" ]; then
  echo "fake-build: $src/BROKEN says this revision does not build" >&2
  exit 1
fi
: "${DYNQUAL_REAL_BIN_DIR:?set DYNQUAL_REAL_BIN_DIR to the folder of the real dynqual binaries}"
mkdir -p "$build/bin"
ln -sf "$DYNQUAL_REAL_BIN_DIR/dynqual" "$build/bin/dynqual"
cp "$src/perf.txt" "$build/bin/perf.txt"
cat >"$build/bin/dynqual-exec" <<WRAP
#!/bin/sh
us=0
while read -r model add || [ -n "\$model" ]; do
  case "\$1" in */\$model/*) us=\$add ;; esac
done <"$build/bin/perf.txt"
exec "$DYNQUAL_REAL_BIN_DIR/dynqual-exec" "\$@" --busy-wait-us "\$us"
WRAP
chmod +x "$build/bin/dynqual-exec"
BUILD
  : >"$dir/perf.txt"
  git -C "$dir" add fake-build.sh perf.txt
  git -C "$dir" commit -q -m base
}

# perf_repo_commit DIR MESSAGE [PERF_TEXT]: commits PERF_TEXT as perf.txt (unchanged when
# omitted; a file "note" changes instead, so the commit is not empty).
perf_repo_commit() {
  local dir=$1 msg=$2
  if [ $# -ge 3 ]; then
    printf '%s\n' "$3" >"$dir/perf.txt"
  else
    echo "$msg" >>"$dir/note"
  fi
  git -C "$dir" add -A
  git -C "$dir" commit -q -m "$msg"
}

# perf_repo_sha DIR REV: the commit's full sha.
perf_repo_sha() { git -C "$1" rev-parse "$2"; }
