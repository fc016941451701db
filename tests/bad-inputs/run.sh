#!/usr/bin/env bash
# run.sh - the bad-inputs catalogue: malformed traces, cluster specs, hwloc
# XML, plan files and option combinations, each run through the `strata`
# command with its expected exit code and message.
#
# Usage: run.sh STRATA_BINARY [CASE...]
#
# cases.txt (and each cases-*.txt beside it, all read in name
# order, one file per kind of input) holds one block per case, separated by blank lines:
#   case NAME          the case's name (unique)
#   cmd ARGS           the arguments after `strata` (shell quoting allowed,
#                      no other shell syntax); it runs in a scratch copy of
#                      files/, so inputs are named relative to it
#   code N             the exit code
#   err LINE           standard error, exactly: each `err` line is one line
#   has TEXT           standard error contains TEXT (for messages that hold
#                      a version or a path that changes)
#   out LINE           standard output, exactly (each `out` line one line;
#                      an empty standard error is then expected unless
#                      err or has say otherwise)
#   absent PATH        PATH must not exist afterwards (relative to the
#                      scratch folder, or absolute)
#   noleftovers        the command created no file at all in the scratch
#                      folder (no output, no temporary *.XXXXXX)
# Lines starting with # are comments.  A case needs cmd, code and at least
# one of err, has or out: every message is checked.
#
# With STRATA_BADINPUT_SHOW=1 each case prints what it got (exit code and
# standard error as `err` lines) instead, for writing new cases.
#
# LeakSanitizer reads ../fuzz/lsan.supp (a leak inside hwloc itself).
# Prints one line per case and ends with "N passed, N failed".
set -u

if [ $# -lt 1 ]; then
  echo "usage: $0 STRATA_BINARY [CASE...]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shift
only=" $* "
show=${STRATA_BADINPUT_SHOW:-0}
export LSAN_OPTIONS="suppressions=$here/../fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
passed=0
failed=0
work=$(mktemp -d /tmp/strata-bad-XXXXXX)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

# The scratch copy of files/ is made once and kept while the cases leave
# it as it was: copying the 2 MB folder for each of 260 cases was nearly
# all of the run's time (0.6 s a case at a load of 8 on two cores, the
# command itself 16 ms).  A case after which any entry's name, size,
# mode, mtime or ctime differs (it created, wrote, removed or chmodded
# something) leaves a fresh copy for the next case.
scratch="$work/files"
state() { (cd "$scratch" && find . -printf '%p %s %m %T@ %C@\n' | sort); }
fresh_scratch() {
  chmod -R u+w "$scratch" 2>/dev/null
  rm -rf "$scratch"
  cp -R "$here/files" "$scratch"
  (cd "$scratch" && find . | sort >"$work/before")
  state >"$work/state"
}
fresh_scratch

# run_case: the fields of one block are in the globals below.
run_case() {
  local out="$work/$name.out" code ok=1 f
  if [ "$show" != 1 ] && { [ -z "$cmd" ] || [ -z "$code_want" ] ||
    { [ -z "$err" ] && [ ${#has[@]} -eq 0 ] && [ -z "$outw" ]; }; }; then
    echo "FAIL $name: needs cmd, code and err or has"
    return 1
  fi
  mkdir -p "$out"
  cp "$work/before" "$out/before"
  (
    cd "$scratch" || exit 99
    eval "set -- $cmd"
    exec "$bin" "$@" >"$out/stdout" 2>"$out/stderr" </dev/null
  )
  code=$?
  if [ "$show" = 1 ]; then
    echo "case $name"; echo "cmd $cmd"; echo "code $code"
    sed 's/^/err /' "$out/stderr"; echo
    return 0
  fi
  if [ "$code" != "$code_want" ]; then
    echo "  exit code $code, expected $code_want"
    ok=0
  fi
  if [ -n "$err" ] && [ "$(cat "$out/stderr")" != "$err" ]; then
    echo "  standard error differs (--- expected, +++ actual):"
    diff -u <(printf '%s\n' "$err") "$out/stderr" | sed 's/^/    /' | head -20
    ok=0
  fi
  if [ -n "$outw" ] && [ "$(cat "$out/stdout")" != "$outw" ]; then
    echo "  standard output differs (--- expected, +++ actual):"
    diff -u <(printf '%s\n' "$outw") "$out/stdout" | sed 's/^/    /' | head -20
    ok=0
  fi
  if [ -n "$outw" ] && [ -z "$err" ] && [ ${#has[@]} -eq 0 ] && [ -s "$out/stderr" ]; then
    echo "  standard error is not empty"
    ok=0
  fi
  for f in "${has[@]}"; do
    if ! grep -qF -- "$f" "$out/stderr"; then
      echo "  standard error lacks: $f"
      ok=0
    fi
  done
  for f in "${absent[@]}"; do
    case $f in /*) ;; *) f="$scratch/$f" ;; esac
    if [ -e "$f" ]; then
      echo "  $f exists"
      ok=0
    fi
  done
  if [ "$noleft" = 1 ]; then
    local made
    made=$(cd "$scratch" && find . | sort | comm -13 "$out/before" -)
    if [ -n "$made" ]; then
      echo "  the failed command left files behind: $made"
      ok=0
    fi
  fi
  if [ $ok = 0 ]; then
    echo "  stderr was:"
    sed 's/^/    /' "$out/stderr" | head -10
  fi
  state | cmp -s - "$work/state" || fresh_scratch
  rm -rf "$out"
  [ $ok = 1 ]
}

flush() {
  [ -z "$name" ] && return
  if [ "$only" = "  " ] || [[ "$only" == *" $name "* ]]; then
    if run_case; then
      passed=$((passed + 1))
      [ "$show" = 1 ] || echo "ok   $name"
    else
      failed=$((failed + 1))
      echo "FAIL $name"
    fi
  fi
  name=""
}

name=""
while IFS= read -r line || [ -n "$line" ]; do
  case $line in
    '#'*) continue ;;
    '') flush; continue ;;
  esac
  key=${line%% *}
  val=${line#* }
  [ "$val" = "$line" ] && val=""
  case $key in
    case) flush; name=$val; cmd=""; code_want=""; err=""; outw=""; has=(); absent=(); noleft=0 ;;
    cmd) cmd=$val ;;
    out) outw="${outw:+$outw
}$val" ;;
    code) code_want=$val ;;
    err) err="${err:+$err
}$val" ;;
    has) has+=("$val") ;;
    absent) absent+=("$val") ;;
    noleftovers) noleft=1 ;;
    *) echo "cases.txt: unknown line: $line" >&2; failed=$((failed + 1)) ;;
  esac
done < <(for f in "$here"/cases*.txt; do cat "$f"; echo; done)
flush
echo "$passed passed, $failed failed"
[ $failed = 0 ]
