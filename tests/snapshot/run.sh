#!/usr/bin/env bash
# run.sh - the outputs of a fixed set of plans, held byte for byte.
#
# Usage: run.sh STRATA_BINARY [--update | --keep DIR]
#
# For every `plan` line of plans.txt it saves the plan file and keeps its
# bytes, the summary `plan` prints, `show`, `show --json`, every export
# target (with its variants), and `diff --json` against the plan before it;
# for every `estimate` line, `estimate --json`.  Each output is kept with
# its standard error and exit code, so a refusal is held as exactly as a
# success.  expected.sha256 holds one SHA-256 per output: a change to the
# code that alters none of them altered no behaviour these outputs show.
#
# --update rewrites expected.sha256 (review `git diff` of it: every changed
# line is an output that changed); --keep DIR leaves the outputs in DIR,
# so two trees' outputs can be compared with diff -r.
# Ends with "N passed, N failed" (one per output); exits 1 if any differ.
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mode=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ "$mode" = --keep ] && { work=$3; mkdir -p "$work"; trap - EXIT; }
cd "$work" || exit 2

# keep NAME CMD...: run CMD, keep stdout, stderr and exit code under NAME.
keep() {
  local name=$1
  shift
  "$@" >"$name.out" 2>"$name.err"
  echo $? >"$name.rc"
}

prev=""
set -f # the words of plans.txt are not patterns (a layout's '*')
while read -r kind name args; do
  case $kind in \#* | "") continue ;; esac
  # shellcheck disable=SC2086  # the arguments are words of plans.txt
  if [ "$kind" = estimate ]; then
    keep "$name" "$bin" estimate $args --json
    continue
  fi
  set -- $kind $name $args # plan lines: NAME ARGS...
  name=$kind
  shift
  keep "$name.plan" "$bin" plan "$@" --quiet -o "$name.splan"
  [ -f "$name.splan" ] || continue
  keep "$name.show" "$bin" show "$name.splan"
  keep "$name.json" "$bin" show --json "$name.splan"
  for t in megatron deepspeed torch torchtitan timeline html hostfile; do
    keep "$name.$t" "$bin" export $t "$name.splan"
  done
  keep "$name.launch" "$bin" export megatron --launch "$name.splan"
  keep "$name.topology" "$bin" export deepspeed --topology "$name.splan"
  keep "$name.hostfile-mpi" "$bin" export hostfile --format mpi "$name.splan"
  [ -n "$prev" ] && keep "$name.diff" "$bin" diff --json "$prev.splan" "$name.splan"
  prev=$name
done <"$here/plans.txt"
set +f

sha256sum -- * | sort -k2 >"$work/.actual"
if [ "$mode" = --update ]; then
  cp "$work/.actual" "$here/expected.sha256"
  echo "expected.sha256: $(wc -l <"$work/.actual") outputs written"
  exit 0
fi
passed=0
failed=0
while read -r sum file; do
  got=$(grep -F "  $file" "$work/.actual" | awk -v f="$file" '$2 == f {print $1}')
  if [ "$got" = "$sum" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    if [ -n "$got" ]; then
      echo "differs: $file (sha256 $got, expected $sum)"
    else
      echo "missing: $file"
    fi
  fi
done <"$here/expected.sha256"
extra=$(awk '{print $2}' "$work/.actual" | grep -vxF -f <(awk '{print $2}' "$here/expected.sha256"))
for f in $extra; do
  failed=$((failed + 1))
  echo "new output not in expected.sha256: $f"
done
[ "$failed" -gt 0 ] && echo "(run.sh STRATA --keep DIR at both trees, then diff -r the two DIRs)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
