#!/usr/bin/env bash
# A plan longer than a second shows its progress on standard error: on a
# pipe, lines of phase, work done out of total, best step and bound (or,
# before there is a best step, what the phase waits for); a
# plan the time limit cuts short ends with its gap to the bound, within
# the limit and a margin (1.5 x the limit + 1 s of CPU, as the issue
# that asked for it set).  --quiet silences all of it.  A mixed cluster
# of three GPU generations is the long plan (bench/data): DeepSeek-V3 on
# it, some 25 s of one core unlimited.
# Usage: progress.sh path/to/strata path/to/cluster.json
set -u
strata="$1"
spec="$2"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pass=0 fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else echo "FAIL: $1"; fail=$((fail + 1)); fi; }

# The limit: 3 s, or as many times 3 as a slow (sanitized) build needs to
# find a first plan; the search itself takes far longer, so every limit
# that finds one cuts it short.
limit=3
run() { # run NAME ARGS...: the plan, its CPU seconds in $dir/NAME.cpu
  local name=$1
  shift
  local t0 t1 code
  while :; do
    t0=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
    "$strata" plan --model deepseek-v3 --cluster "$spec" \
      --threads 1 --time-limit $limit "$@" >"$dir/$name.out" 2>"$dir/$name.err"
    code=$?
    t1=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
    [ $code -eq 5 ] && [ $limit -lt 27 ] &&
      grep -q "nothing fits within the time limit" "$dir/$name.err" || break
    limit=$((limit * 3))
  done
  echo $code >"$dir/$name.code"
  echo $(((t1 - t0) / $(getconf CLK_TCK))) >"$dir/$name.cpu"
}

run loud
check "exit 0 (got $(cat "$dir/loud.code"))" '[ "$(cat "$dir/loud.code")" -eq 0 ]'
check "a progress line with done/total, the best step and bound or what it waits for" \
  'grep -Eq "^strata: [a-z ]+( on (node group [0-9]+ \([A-Za-z0-9-]+\)|all node groups))? [0-9]+/[0-9]+, (best step [0-9.]+ s|no [a-z :]+)(, bound [0-9.]+ s)? \([0-9.]+ s\)$" "$dir/loud.err"'
check "a phase on a node group names it" \
  'grep -Eq "^strata: [a-z ]+ on node group [0-9]+ \((H100-SXM|A100-80GB|H200)\) " "$dir/loud.err"'
# the best step shown never rises, from one phase or group to the next
check "the best step never rises ($(grep -v "limit stopped" "$dir/loud.err" | grep -o "best step [0-9.]*" | tr '\n' ' '))" \
  'grep -v "limit stopped" "$dir/loud.err" | grep -o "best step [0-9.]*" | awk "NR > 1 && \$3 > last { bad = 1 } { last = \$3 } END { exit bad }"'
check "no placeholder for a figure not known yet" \
  '! grep -Eq "(step|bound) -" "$dir/loud.err"'
check "the gap to the bound at the end" \
  'grep -q "^strata: the time limit stopped the search after .*(gap [0-9.]* %)$" "$dir/loud.err"'
check "no carriage return on a pipe" '! grep -q $'"'"'\r'"'"' "$dir/loud.err"'
check "the summary says it was cut short" 'grep -q "time limit was reached" "$dir/loud.out"'
check "within 1.5 x $limit + 1 s of CPU (took $(cat "$dir/loud.cpu") s)" \
  '[ "$(cat "$dir/loud.cpu")" -le $((limit * 3 / 2 + 1)) ]'

# a tiny limit: a plan marked time-limited (exit 0), or none found in
# time (exit 5, its JSON marked so), never "cannot fit" (exit 3)
"$strata" plan --model llama3-405b --cluster "$spec" --time-limit 0.05 \
  --json >"$dir/tiny.out" 2>"$dir/tiny.err"
code=$?
check "a tiny limit: exit 0 or 5 (got $code: $(tail -c 300 "$dir/tiny.err"))" \
  '[ $code -eq 0 ] || [ $code -eq 5 ]'
check "a tiny limit: marked time-limited" \
  'grep -q "\"time_limited\":[[:space:]]*true" "$dir/tiny.out"'
# proven by the memory bound, a limit or not: exit 3, at once
"$strata" plan --model deepseek-v3 --cluster dgx-h100:16 --time-limit 5 \
  >/dev/null 2>"$dir/floor.err"
code=$?
check "cannot fit, proven, under a limit: exit 3 (got $code)" '[ $code -eq 3 ]'

run quiet --quiet
check "--quiet: exit 0" '[ "$(cat "$dir/quiet.code")" -eq 0 ]'
check "--quiet: nothing on stderr" '[ ! -s "$dir/quiet.err" ]'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
