# Sourced: make_bisect_repo DIR N K SLOW_MODEL SLOW_US [J FAST_MODEL FAST_BASE_US FAST_US]
# A perf repository (perf-repo.sh) of N commits after "base" (so N+1 revisions, the endpoints
# included, when bisected from base to the last): commit K (1..N) adds SLOW_US microseconds a run
# to SLOW_MODEL; with J, FAST_MODEL spins FAST_BASE_US a run up to commit J-1 and FAST_US from
# commit J on (a speed-up when FAST_US < FAST_BASE_US). Other commits change a note only.
make_bisect_repo() {
  local dir=$1 n=$2 k=$3 slow=$4 slow_us=$5 j=${6:-0} fast=${7:-} fast_base=${8:-0} fast_us=${9:-0}
  perf_repo_init "$dir"
  perf_line() {
    local i=$1 text=""
    [ "$i" -ge "$k" ] && text="$slow $slow_us"
    if [ -n "$fast" ]; then
      local f=$fast_base
      [ "$j" -gt 0 ] && [ "$i" -ge "$j" ] && f=$fast_us
      text="${text:+$text
}$fast $f"
    fi
    printf '%s\n' "$text"
  }
  # "base" holds revision 0's perf.txt.
  perf_line 0 >"$dir/perf.txt"
  git -C "$dir" commit -q --amend -a -m base
  local i
  for i in $(seq 1 "$n"); do
    local msg="commit $i"
    [ "$i" -eq "$k" ] && msg="commit $i: $slow slower"
    [ -n "$fast" ] && [ "$i" -eq "$j" ] && msg="commit $i: $fast faster"
    perf_line "$i" >"$dir/perf.txt"
    echo "$i" >>"$dir/note"
    git -C "$dir" add -A
    git -C "$dir" commit -q -m "$msg"
  done
}
