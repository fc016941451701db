#!/usr/bin/env bash
# JSON output is deterministic: the same plan prints the same bytes,
# whatever the run's time or the solver's thread count (no timing unless
# --timings), so a nightly job can compare it with cmp(1) or strata diff.
# Usage: deterministic.sh path/to/strata
set -u
strata="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pass=0 fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else echo "FAIL: $1"; fail=$((fail + 1)); fi; }
model="--model gpt --layers 4 --hidden 512 --heads 8 --seq 256 --vocab 4096"

"$strata" plan $model --cluster dgx-h100:2 --quiet --json --threads 1 \
  -o "$dir/a.splan" >"$dir/a.json"
"$strata" plan $model --cluster dgx-h100:2 --quiet --json --threads 2 \
  -o "$dir/b.splan" >"$dir/b.json"
check "plan --json twice gives the same bytes" 'cmp -s "$dir/a.json" "$dir/b.json"'
check "no timing in plan --json" '! grep -q plan_seconds "$dir/a.json"'
check "the plan files are the same" 'cmp -s "$dir/a.splan" "$dir/b.splan"'
"$strata" show "$dir/a.splan" --json >"$dir/s1.json"
"$strata" show "$dir/b.splan" --json >"$dir/s2.json"
check "show --json twice gives the same bytes" 'cmp -s "$dir/s1.json" "$dir/s2.json"'
"$strata" plan $model --cluster dgx-h100:2 --quiet --json --timings >"$dir/t.json"
check "--timings adds plan_seconds" 'grep -q "\"plan_seconds\":" "$dir/t.json"'
"$strata" diff "$dir/a.splan" "$dir/b.splan" >/dev/null
code=$?
check "diff of the two plans exits 0 (got $code)" '[ "$code" -eq 0 ]'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
