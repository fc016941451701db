#!/usr/bin/env bash
# SIGINT during `strata plan` stops the queued stage solves: the command
# exits with 130 (128 + SIGINT), says it was interrupted, and leaves no
# output file (nor a temporary one) behind.  And --time-limit: a plan
# search cut short still returns the best plan found, marked as such.
# Usage: signals.sh path/to/strata
set -u
strata="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pass=0 fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else echo "FAIL: $1"; fail=$((fail + 1)); fi; }

"$strata" plan --model gpt3-175b --cluster dgx-h100:128 --free --threads 1 \
  -o "$dir/p.splan" 2>"$dir/err" &
pid=$!
sleep 1
kill -INT "$pid"
wait "$pid"
code=$?
check "exit code 130 after SIGINT (got $code)" '[ "$code" -eq 130 ]'
check "message says interrupted" 'grep -q "interrupted" "$dir/err"'
check "no output or temporary file left" '[ -z "$(ls -A "$dir" | grep -v err)" ]'

"$strata" plan --model gpt3-175b --cluster dgx-h100:128 --free --threads 1 \
  --time-limit 1 --json -o "$dir/t.splan" >"$dir/out" 2>"$dir/err2"
code=$?
check "time-limited plan succeeds (got $code: $(cat "$dir/err2"))" '[ "$code" -eq 0 ]'
check "time-limited plan is marked" 'grep -q "\"time_limited\":[[:space:]]*true" "$dir/out"'
check "time-limited plan file written" '[ -s "$dir/t.splan" ]'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
