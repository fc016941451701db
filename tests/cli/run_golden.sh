#!/usr/bin/env bash
# run_golden.sh - golden tests of the `strata` command line.
#
# Usage: run_golden.sh STRATA_BINARY [CASES_DIR] [CASE...]
#
# Each case is a folder CASES_DIR/NAME/ holding:
#   cmd              one line: the arguments after `strata` (shell quoting
#                    allowed; no other shell syntax)
#   expected_code    the exit code
#   expected_stdout  optional: standard output, exactly
#   expected_stderr  optional: standard error, exactly
#   expected_files/  optional: files the command must leave in its working
#                    directory, each compared exactly
# plus any input files the command names, relative to the case folder.
# The command runs in a scratch copy of the case folder, so it may write
# files there without touching the source tree.
#
# With STRATA_GOLDEN_UPDATE=1 the actual results are written back into the
# case folders (expected_code always; expected_stdout, expected_stderr and
# expected_files/* where they already exist).  Review the diff, then commit.
#
# Prints one line per case and ends with "N passed, N failed"; exits 1 if
# any case failed.
set -u

if [ $# -lt 1 ]; then
  echo "usage: $0 STRATA_BINARY [CASES_DIR] [CASE...]" >&2
  exit 2
fi
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cases=${2:-$(cd "$(dirname "$0")" && pwd)/cases}
shift $(($# >= 2 ? 2 : 1))
update=${STRATA_GOLDEN_UPDATE:-0}
passed=0
failed=0

# compare EXPECTED ACTUAL LABEL: 0 if equal, else print a diff.
compare() {
  if [ "$update" = 1 ]; then
    cp "$2" "$1"
    return 0
  fi
  if cmp -s "$1" "$2"; then return 0; fi
  echo "  $3 differs (--- expected, +++ actual):"
  diff -u "$1" "$2" | sed 's/^/    /' | head -60
  return 1
}

run_case() {
  local dir=$1 name scratch out code ok=1
  name=$(basename "$dir")
  if [ ! -f "$dir/cmd" ] || [ ! -f "$dir/expected_code" ]; then
    echo "FAIL $name: needs cmd and expected_code"
    return 1
  fi
  scratch=$(mktemp -d /tmp/strata-golden-XXXXXX)
  out=$(mktemp -d /tmp/strata-golden-out-XXXXXX)
  cp -R "$dir"/. "$scratch"/
  rm -rf "$scratch/expected_files"
  local cmdline
  cmdline=$(head -n 1 "$dir/cmd")
  (
    cd "$scratch" || exit 99
    eval "set -- $cmdline"
    exec "$bin" "$@" >"$out/stdout" 2>"$out/stderr" </dev/null
  )
  code=$?
  printf '%s\n' "$code" >"$out/code"
  compare "$dir/expected_code" "$out/code" "exit code" || ok=0
  for f in stdout stderr; do
    if [ -f "$dir/expected_$f" ]; then
      compare "$dir/expected_$f" "$out/$f" "$f" || ok=0
    fi
  done
  if [ -d "$dir/expected_files" ]; then
    for f in "$dir/expected_files"/*; do
      local base
      base=$(basename "$f")
      if [ ! -f "$scratch/$base" ]; then
        echo "  file $base was not written"
        ok=0
      else
        compare "$f" "$scratch/$base" "file $base" || ok=0
      fi
    done
  fi
  if [ $ok = 0 ] && [ "$code" != "$(cat "$dir/expected_code")" ]; then
    echo "  stderr was:"
    sed 's/^/    /' "$out/stderr" | head -20
  fi
  rm -rf "$scratch" "$out"
  if [ $ok = 1 ]; then echo "ok   $name"; else echo "FAIL $name"; fi
  [ $ok = 1 ]
}

if [ $# -gt 0 ]; then
  dirs=()
  for n in "$@"; do dirs+=("$cases/$n/"); done
else
  dirs=("$cases"/*/)
fi
for dir in "${dirs[@]}"; do
  if run_case "${dir%/}"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ $failed = 0 ]
