#!/usr/bin/env bash
# run.sh - the nightly re-plan (scripts/nightly-replan.sh, docs/nightly.md)
# over a sequence of cluster changes on five hosts exported by hwloc:
#
#   night 1  all healthy                     first plan: configs written
#   night 2  node005 drained (unused)        same plan: configs untouched
#   night 3  node002 down too (used)         yesterday's needs 16 GPUs of
#                                            12: new plan, configs rewritten
#   night 4  all back, threshold 1000 %      yesterday's still fits and is
#                                            within it: kept, untouched
#   night 5  all back, threshold 2 %         beyond it: new plan, rewritten
#   night 6  the same again                  same plan: untouched
#   night 7  node001 drained (used)          same plan on other hosts:
#                                            untouched, the hosts logged
#   night 8  node001 back, node001:2 marked  kept in cluster.json; node001
#            by hand in cluster.json         left out of the hostfile
#   night 9  node003:1 in the drain list     marked too; node003 left out
#   night 10 FALLBACKS=2                     the plan carries the plans of 1
#                                            and 2 nodes lost, each exported
#                                            to configs/fallback-N/
#   night 11 the same, FALLBACKS not set     yesterday's 2 kept; the plan
#                                            unchanged, its fallbacks and
#                                            their exports refreshed
#
# A config counts as rewritten when its file is replaced (a new inode: the
# script moves new files in); the verdict the plan prints ("N % above the
# best plan's ... within/beyond the T % threshold") is checked against T,
# and the hostfile against the hosts in service.
#
# Usage: run.sh STRATA_BINARY (NIGHTLY_VERBOSE=1 prints each night's log)
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d /tmp/strata-nightly-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
failed=0
passed=0

# The script reads `strata diff`'s exit status as diff(1) does (0 same, 1
# changed) and passes --tolerance; a strata whose diff does not do so
# cannot run it.
if ! "$bin" diff --help 2>/dev/null | grep -q -- --tolerance; then
  echo "strata diff has no --tolerance and no diff(1) exit status: skipped"
  exit 77
fi

mkdir -p "$scratch/hosts"
for h in node001 node002 node003 node004 node005; do
  cp "$src/tests/data/topo/p100.xml" "$scratch/hosts/$h.xml"
done

export STRATA=$bin STATE=$scratch/state TOPO_DIR=$scratch/hosts NIC_GBITS=100
# a global batch that 16 and 12 GPUs both divide: night 3's plan spreads
# over the three hosts left
export PLAN_ARGS="--model gpt --layers 8 --hidden 1024 --heads 16 --seq 1024 --vocab 32000 --global-batch 48"
export LAUNCHER=deepspeed

check() { # check WHAT CONDITION...
  local what=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
  else
    echo "FAIL night $night: $what"
    sed 's/^/    /' "$scratch/log"
    failed=$((failed + 1))
  fi
}

inode() { stat -c %i "$STATE/configs/$1" 2>/dev/null || echo none; }

# night DRAIN_LINES THRESHOLD: run the script; sets before/after inodes
night=0
run_night() {
  night=$((night + 1))
  printf '%b' "$1" >"$scratch/drain.txt"
  before=$(inode megatron.args)
  DRAIN=$scratch/drain.txt THRESHOLD=$2 bash "$src/scripts/nightly-replan.sh" \
    >"$scratch/log" 2>&1
  code=$?
  after=$(inode megatron.args)
  [ -n "${NIGHTLY_VERBOSE:-}" ] && sed "s/^/[night $night] /" "$scratch/log"
  check "the script exits 0 (got $code)" test "$code" = 0
}

rewritten() { [ "$before" != "$after" ] && [ "$after" != none ]; }
untouched() { [ "$before" = "$after" ] && [ "$after" != none ]; }
logged() { grep -q -- "$1" "$scratch/log"; }
hosts_are() { [ "$(grep -v '^#' "$STATE/configs/hostfile" | cut -d' ' -f1 | tr '\n' ' ')" = "$1" ]; }

# The verdict's numbers agree with the threshold: kept iff "X % above"
# is at most T.
verdict_agrees() {
  local line pct thr word
  line=$(grep 'its step' "$scratch/log") || return 1
  pct=$(sed -n 's/.* is \([0-9.]*\) % above.*/\1/p' <<<"$line")
  thr=$(sed -n 's/.* the \([0-9.]*\) % threshold.*/\1/p' <<<"$line")
  word=$(sed -n 's/.*, \(within\|beyond\) the .*/\1/p' <<<"$line")
  [ -n "$pct" ] && [ -n "$thr" ] || return 1
  if awk -v p="$pct" -v t="$thr" 'BEGIN { exit !(p <= t) }'; then
    [ "$word" = within ] && grep -q '^nightly: baseline: kept' "$scratch/log"
  else
    [ "$word" = beyond ] && grep -q '^nightly: baseline: replaced' "$scratch/log"
  fi
}

run_night "" 2
check "configs written" test "$after" != none
check "plan saved" test -f "$STATE/plan.splan"
check "hostfile has the 4 hosts of 16 GPUs" hosts_are "node001 node002 node003 node004 "

run_night "node005 drained\n" 2
check "the unused node drained: configs untouched" untouched
check "logged unchanged" logged "plan unchanged"
check "the verdict agrees with the threshold" verdict_agrees

run_night "node005 drained\nnode002 down*\n" 2
check "a used node down: configs rewritten" rewritten
check "yesterday's needs more GPUs" logged "it needs 16 GPUs and the cluster has 12 usable now"
check "hostfile leaves node002 out" hosts_are "node001 node003 node004 "
check "hostfile says why" grep -q "left out: node002: unhealthy" "$STATE/configs/hostfile"
check "the checkpoint's verdict logged" logged "checkpoint: megatron-dist (the plan's): "

run_night "" 1000
check "all back, within 1000 %: configs untouched" untouched
check "the verdict agrees with the threshold" verdict_agrees

run_night "" 2
check "all back, beyond 2 %: configs rewritten" rewritten
check "the verdict agrees with the threshold" verdict_agrees
check "hostfile has the 4 hosts again" hosts_are "node001 node002 node003 node004 "

run_night "" 2
check "nothing changed: configs untouched" untouched

# a used node drained, and the plan fits the others: the same plan on
# other hosts (diff exit 3), said as such
run_night "node001 drained\n" 2
check "the same plan on other hosts: configs untouched" untouched
check "the diff says the hosts changed" logged "runs on other hosts: node001 node002 node003 node004 -> node002 node003 node004 node005"

# a dead GPU marked by hand in cluster.json survives the night's collect
if grep -q '"unhealthy"' "$STATE/cluster.json"; then
  sed -i 's/"unhealthy":[[:space:]]*{/&"gpus": ["node001:2"], /' "$STATE/cluster.json"
else
  sed -i '$ s/^}$/,"unhealthy": {"gpus": ["node001:2"]}}/' "$STATE/cluster.json"
fi
run_night "" 2
check "the hand-marked GPU is still in cluster.json" grep -q '"node001:2"' "$STATE/cluster.json"
check "hostfile leaves node001 out" hosts_are "node002 node003 node004 node005 "
check "hostfile says why" grep -q "left out: node001: GPU 2 unhealthy" "$STATE/configs/hostfile"

# a drain list's HOST:GPU line marks that GPU (was ignored, exit 0)
run_night "node003:1\n" 2
check "the drain list's GPU is in cluster.json" grep -q '"node003:1"' "$STATE/cluster.json"
check "hostfile leaves node001 and node003 out" hosts_are "node002 node004 node005 "

# fallback plans: asked for once, then refreshed every night from the
# plan's own count, the plan in force unchanged or not
fb_inode() { stat -c %i "$STATE/configs/fallback-$1/megatron.args" 2>/dev/null || echo none; }
FALLBACKS=2 run_night "" 2
check "fallbacks asked: both stored" logged "fallbacks: 2 of 2 stored"
check "each fallback's export written" test -f "$STATE/configs/fallback-2/megatron.args"
lost_of() { "$bin" show "$STATE/plan.splan" --fallback "$1" --json | grep -q "\"nodes_lost\":.$1,"; }
check "the plan file holds them: fallback 2 is the plan of 2 nodes lost" lost_of 2
check "fallback 1's export is not empty" test -s "$STATE/configs/fallback-1/megatron.args"
fb_before=$(fb_inode 1)
run_night "node003:1\n" 2
check "yesterday's count kept without FALLBACKS" logged "fallbacks: 2 of 2 stored"
check "the plan unchanged, its fallbacks refreshed" logged "fallbacks refreshed"
check "fallback 1's export rewritten" test "$fb_before" != "$(fb_inode 1)"
check "the fallback of 2 nodes lost runs on fewer GPUs than the plan" \
  test "$("$bin" show "$STATE/plan.splan" --fallback 2 --json | sed -n 's/^\t"devices":\t\([0-9]*\),$/\1/p')" \
  -lt "$("$bin" show "$STATE/plan.splan" --json | sed -n 's/^\t"devices":\t\([0-9]*\),$/\1/p')"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
