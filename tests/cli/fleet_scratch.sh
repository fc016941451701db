#!/usr/bin/env bash
# The scratch stage cache of `strata fleet` ($TMPDIR/strata-fleet-PID-XXXXXX)
# is removed when the run is stopped by SIGTERM or SIGINT (exit 143, 130:
# nothing written), and a run removes the folders that runs killed outright
# (kill -9) left: only a folder of a process that no longer exists and that
# has not been written for a minute; a live run's is kept, and so is a
# folder of a dead process written just now.
# Usage: fleet_scratch.sh path/to/strata
set -u
strata="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pass=0 fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else echo "FAIL: $1"; fail=$((fail + 1)); fi; }
export TMPDIR="$dir/tmp"
mkdir -p "$TMPDIR" "$dir/out"
# a fleet that runs for many seconds (about 10 s of one core: four large
# models on 128 nodes; the reproducer of fuzz-finds turn 4 now ends in
# half a second)
printf '{"jobs":[{"name":"a","model":"deepseek-v3"},{"name":"b","model":"llama3-405b"},{"name":"c","model":"qwen3-235b-a22b"},{"name":"d","model":"gpt3-175b"}]}' \
  >"$dir/big.json"
printf '{"jobs":[{"name":"a","model":"gpt-1.7b"},{"name":"b","model":"gpt-1.7b"}]}' \
  >"$dir/small.json"

# wait_for PID SECONDS: its exit code, or 124 (killed) if it runs longer
wait_for() {
  local i=0
  while kill -0 "$1" 2>/dev/null && [ $i -lt $(($2 * 10)) ]; do
    sleep 0.1
    i=$((i + 1))
  done
  if kill -0 "$1" 2>/dev/null; then
    kill -9 "$1"
    wait "$1"
    return 124
  fi
  wait "$1"
}

# stopped: SIG CODE -- a big fleet stopped once its scratch folder exists
stopped() {
  local i=0 code sig=$1 want=$2
  "$strata" fleet "$dir/big.json" --cluster dgx-h100:128 --threads 1 \
    -o "$dir/out" 2>"$dir/err.$1" >/dev/null &
  local pid=$!
  while [ -z "$(ls -A "$TMPDIR")" ] && [ $i -lt 100 ]; do
    sleep 0.1
    i=$((i + 1))
  done
  check "$1: a scratch folder while it runs" '[ -n "$(ls -A "$TMPDIR")" ]'
  sleep 1
  kill -"$1" "$pid"
  wait_for "$pid" 60
  code=$?
  check "$sig: exit code $want (got $code)" '[ "$code" -eq "$want" ]'
  check "$sig: says it was interrupted ($(cat "$dir/err.$sig"))" \
    'grep -q "interrupted" "$dir/err.$sig"'
  check "$1: no scratch left ($(ls -A "$TMPDIR"))" '[ -z "$(ls -A "$TMPDIR")" ]'
  check "$1: no plan or script written ($(ls -A "$dir/out"))" '[ -z "$(ls -A "$dir/out")" ]'
}
stopped TERM 143
stopped INT 130

# stale folders: a dead process's (a pid that has exited), unwritten for 5
# minutes, is removed; one of a live process (this shell), and one of the
# dead process written just now, are kept
sleep 0 &
dead=$!
wait "$dead"
mkdir "$TMPDIR/strata-fleet-$dead-aaaaaa" "$TMPDIR/strata-fleet-$$-bbbbbb" \
  "$TMPDIR/strata-fleet-$dead-cccccc" "$TMPDIR/strata-fleet-keep"
for d in "$dead-aaaaaa" "$$-bbbbbb" "$dead-cccccc"; do
  echo x >"$TMPDIR/strata-fleet-$d/stage.json"
done
touch -d '-5 minutes' "$TMPDIR/strata-fleet-$dead-aaaaaa" "$TMPDIR/strata-fleet-$$-bbbbbb" \
  "$TMPDIR/strata-fleet-keep"
"$strata" fleet "$dir/small.json" --cluster dgx-h100:4 --quiet -o "$dir/out" \
  >/dev/null 2>"$dir/err.run"
code=$?
check "full run: exit 0 (got $code: $(cat "$dir/err.run"))" '[ "$code" -eq 0 ]'
check "the dead run's stale folder removed" '[ ! -e "$TMPDIR/strata-fleet-$dead-aaaaaa" ]'
check "the live run's folder kept" '[ -e "$TMPDIR/strata-fleet-$$-bbbbbb/stage.json" ]'
check "a dead run's folder written just now kept" '[ -e "$TMPDIR/strata-fleet-$dead-cccccc/stage.json" ]'
check "a folder of another name kept" '[ -d "$TMPDIR/strata-fleet-keep" ]'
check "the run's own scratch removed ($(ls "$TMPDIR"))" \
  '[ "$(ls -A "$TMPDIR" | wc -l)" -eq 3 ]'
check "-o: each job's plan and Slurm script" \
  '[ -s "$dir/out/a.splan" ] && [ -s "$dir/out/a.slurm" ] && [ -s "$dir/out/b.slurm" ]'
check "-o: the Slurm script runs the plan's nodes" \
  'grep -qx "#SBATCH --nodes=2" "$dir/out/a.slurm" && grep -q "^#SBATCH --nodelist=" "$dir/out/b.slurm"'
check "-o: no temporary file left" '[ -z "$(ls -A "$dir/out" | grep "^\.")" ]'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
