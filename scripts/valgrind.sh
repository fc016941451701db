#!/usr/bin/env bash
# valgrind.sh - run whole `strata` commands under valgrind memcheck: trace
# info, a stage, a plan on a small cluster, a fleet of two jobs, show and
# every export of the plan, topo show of a node XML and a failing load.
# Any invalid access, use of uninitialised memory or leak fails the run.
#
# Usage: scripts/valgrind.sh [STRATA_BINARY]
#   default binary: build/strata (built by scripts/setup.sh); use a build
#   without sanitizers (valgrind and ASan do not mix).
# Exits 0 with a message when valgrind is not installed.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/strata}
if ! command -v valgrind >/dev/null 2>&1; then
  echo "valgrind.sh: valgrind is not installed; skipped"
  exit 0
fi
if [ ! -x "$bin" ]; then
  echo "valgrind.sh: no binary $bin (run scripts/setup.sh first)" >&2
  exit 1
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
src=$PWD
work=$(mktemp -d /tmp/strata-valgrind-XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
# --track-origins (where an uninitialised value came from) doubles
# memcheck's time: a command is run without it, and again with it only
# where memcheck reported something, for the report.
vg=(valgrind --tool=memcheck --error-exitcode=99 --leak-check=full
    --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect
    --quiet)
failed=0
# run EXPECTED_CODE ARGS...: valgrind must find nothing (its exit code 99)
# and strata must exit with EXPECTED_CODE.
run() {
  local want=$1 code t0 t1
  shift
  t0=$(date +%s.%N)
  "${vg[@]}" --log-file="$work/vg.log" "$bin" "$@" >"$work/out" 2>"$work/err"
  code=$?
  t1=$(date +%s.%N)
  if [ $code = 99 ] || [ -s "$work/vg.log" ]; then
    "${vg[@]}" --track-origins=yes --log-file="$work/vg.log" "$bin" "$@" \
      >/dev/null 2>&1
    echo "FAIL strata $*: valgrind reports:"
    sed 's/^/    /' "$work/vg.log" | head -60
    failed=$((failed + 1))
  elif [ "$code" != "$want" ]; then
    echo "FAIL strata $*: exit $code, expected $want"
    sed 's/^/    /' "$work/err" | head -10
    failed=$((failed + 1))
  else
    awk -v a="$t0" -v b="$t1" -v c="$*" 'BEGIN { printf "ok   strata %s (%.1f s)\n", c, b - a }'
  fi
}

run 0 trace gen gpt --layers 2 --hidden 128 --heads 4 --seq 64 --vocab 512 -o tiny.json
run 0 trace info tiny.json
run 0 trace info gpt-1.7b --json
run 0 stage --model tiny.json --devices 4
run 0 plan --model tiny.json --cluster dgx-h100:2 --quiet --threads 2 -o tiny.splan
run 0 plan --model tiny.json --cluster dgx-h100:1 --quiet --free --memory-gib 0.6044283509254456 --memory-reserve-gib 0 -o free.splan
run 0 show tiny.splan
run 0 show tiny.splan --json
run 1 diff tiny.splan free.splan
run 0 export megatron tiny.splan -o args.txt
run 0 export deepspeed tiny.splan
run 0 export timeline tiny.splan -o timeline.json
run 0 estimate --help
run 0 topo show --node-xml "$src/tests/data/topo/p100.xml"
run 0 topo show --cluster "$src/tests/data/topo/cluster-p100.json"
run 2 topo show --node-xml "$src/tests/bad-inputs/files/hwloc-no-complete-cpuset.xml"
run 2 show "$src/tests/bad-inputs/files/plan-bad-crc.splan"
run 2 trace info "$src/tests/bad-inputs/files/trace-cycle.json"
# a model that fits nowhere: two layers of hidden 65536 take the search's
# whole refusal path (every degree, the memory floor, the advice) in a
# sixteenth of gpt-1t's time, which took 85 s of memcheck at a load of 8
run 0 trace gen gpt --layers 2 --hidden 65536 --heads 64 --seq 64 --vocab 512 -o wide.json
run 3 plan --model wide.json --cluster dgx-h100:1 --quiet
# strata fleet: two jobs split over three nodes, their plans written; a
# job that must run and fits nowhere; a name that cannot be a file
printf '{"jobs": [{"name": "a", "model": "tiny.json"}, {"name": "b", "model": "tiny.json", "min_nodes": 1, "weight": 2}]}\n' >jobs.json
printf '{"jobs": [{"name": "wide", "model": "wide.json", "min_nodes": 1}]}\n' >wide-jobs.json
mkdir -p fleet
run 0 fleet jobs.json --cluster dgx-h100:3 --quiet -o fleet
run 3 fleet wide-jobs.json --cluster dgx-h100:1 --quiet
run 2 fleet "$src/tests/bad-inputs/files/fleet-name-path.json" --cluster dgx-h100:1
echo "valgrind.sh: $failed failed"
[ $failed = 0 ]
