#!/usr/bin/env bash
# nightly-replan.sh - re-plan a training run on the cluster as it is
# tonight, and rewrite the configs it runs from only when the plan changed
# (docs/nightly.md explains each step).
#
#   1. the cluster: `strata topo collect` over the hosts' hwloc exports,
#      with the hosts the scheduler has out of service as unhealthy, and
#      the GPUs last night's cluster.json marks unhealthy (by hand, or a
#      HOST:GPU line of the drain list) kept;
#   2. the plan: `strata plan --baseline` yesterday's plan, which keeps
#      yesterday's configuration while it fits and is within the threshold
#      of the best one;
#   3. `strata diff` yesterday's plan against tonight's, and the hosts
#      each runs on (exit 0 same, 1 changed, 2 trouble -- diff(1)'s
#      convention -- and 3 the same plan on other hosts);
#   4. only when it changed: the exports, then the plan, moved into place;
#      the hostfile is rewritten whenever the hosts it lists change;
#   5. with fallback plans (FALLBACKS, or yesterday's plan made with
#      `--fallbacks K`): tonight's plan carries them, planned on tonight's
#      cluster with 1 .. K nodes of each node group lost, and the plan and
#      each fallback's exports (configs/fallback-N/) are refreshed every
#      night, the plan in force unchanged or not.
#
# Settings (environment):
#   STATE       folder of the run's state and configs (required)
#   TOPO_DIR    folder of the hosts' HOST.xml exports (required)
#   PLAN_ARGS   the model and batch: "--model gpt3-175b --global-batch 1536"
#               (required; word-split)
#   NIC_GBITS   line rate of one NIC in Gb/s (required with > 1 host)
#   CLUSTER_NAME  the cluster's name in cluster.json (default "cluster")
#   DRAIN       a drain list file (sinfo -R or sinfo -N -h -o "%N %T"
#               output); default: `sinfo -N -h -o "%N %T"` when sinfo exists
#   THRESHOLD   percent slower than the best at which yesterday's
#               configuration is replaced (default 2)
#   TOLERANCE   percent a predicted figure may move and the plans still
#               count as the same (default 0.5)
#   EXPORTS     targets to write (default "megatron"; also deepspeed,
#               torchtitan)
#   LAUNCHER    hostfile format: torchrun (default), mpi or deepspeed
#   FALLBACKS   K: plan the fallbacks of 1 .. K nodes lost (default: as
#               many as yesterday's plan was made with; 0: none)
#   STRATA      the strata binary (default: the installed one beside this
#               script, PREFIX/bin/strata, else strata on PATH)
#
# Exit status: 0 done (changed or not), 2 trouble (nothing in STATE was
# changed by the failing step: every file is written aside and moved in).
set -euo pipefail

: "${STATE:?set STATE, the folder of the state of the run}"
: "${TOPO_DIR:?set TOPO_DIR, the folder of the hwloc exports of the hosts}"
: "${PLAN_ARGS:?set PLAN_ARGS, e.g. --model gpt3-175b --global-batch 1536}"
# installed as PREFIX/share/strata/nightly-replan.sh: PREFIX/bin/strata
here=$(cd "$(dirname "$0")" && pwd)
[ -z "${STRATA:-}" ] && [ -x "$here/../../bin/strata" ] && STRATA=$here/../../bin/strata
STRATA=${STRATA:-strata}
THRESHOLD=${THRESHOLD:-2}
TOLERANCE=${TOLERANCE:-0.5}
EXPORTS=${EXPORTS:-megatron}
LAUNCHER=${LAUNCHER:-torchrun}

log() { printf 'nightly: %s\n' "$*"; }
fail() { printf 'nightly: %s\n' "$*" >&2; exit 2; }

mkdir -p "$STATE/configs"
work=$(mktemp -d "$STATE/.nightly-XXXXXX")
trap 'rm -rf "$work"' EXIT

# 1. The cluster as it is tonight (last night's kept beside it, for the
# hosts the plan ran on).
[ -f "$STATE/cluster.json" ] && cp "$STATE/cluster.json" "$STATE/cluster.yesterday.json"
# (written in place, atomically: the XML paths in it are relative to it)
collect=("$TOPO_DIR" --name "${CLUSTER_NAME:-cluster}" -o "$STATE/cluster.json")
[ -n "${NIC_GBITS:-}" ] && collect+=(--nic-gbits "$NIC_GBITS")
# GPUs marked unhealthy by hand in last night's spec stay marked (the
# scheduler's drain list names hosts; a dead GPU on a node in service is
# known only there, or as a HOST:GPU line of DRAIN)
[ -f "$STATE/cluster.json" ] && collect+=(--keep-unhealthy-gpus "$STATE/cluster.json")
if [ -n "${DRAIN:-}" ]; then
  collect+=(--unhealthy "$DRAIN")
elif command -v sinfo >/dev/null 2>&1; then
  sinfo -N -h -o "%N %T" >"$work/drain.txt" || fail "sinfo failed"
  collect+=(--unhealthy "$work/drain.txt")
fi
"$STRATA" topo collect "${collect[@]}" || fail "strata topo collect failed"

# 2. Tonight's plan, yesterday's configuration while it pays.
plan=(--cluster "$STATE/cluster.json" --quiet -o "$work/plan.splan")
if [ -f "$STATE/plan.splan" ]; then
  plan+=(--baseline "$STATE/plan.splan" --replan-threshold "$THRESHOLD")
fi
# the fallbacks yesterday's plan was made with (show --json's
# "fallbacks_asked"), unless FALLBACKS says
if [ -z "${FALLBACKS:-}" ] && [ -f "$STATE/plan.splan" ]; then
  FALLBACKS=$("$STRATA" show --json "$STATE/plan.splan" |
    sed -n 's/^[[:space:]]*"fallbacks_asked":[[:space:]]*\([0-9]*\),*$/\1/p' || true)
fi
FALLBACKS=${FALLBACKS:-0}
[ "$FALLBACKS" -gt 0 ] 2>/dev/null && plan+=(--fallbacks "$FALLBACKS")
# shellcheck disable=SC2086 # PLAN_ARGS is a list of words
"$STRATA" plan $PLAN_ARGS "${plan[@]}" >"$work/summary.txt" ||
  fail "strata plan failed"
grep '^baseline:' "$work/summary.txt" | sed 's/^/nightly: /' || true

# 3. Did the plan change?
changed=1
if [ -f "$STATE/plan.splan" ]; then
  rc=0
  hosts=()
  [ -f "$STATE/cluster.yesterday.json" ] &&
    hosts=(--old-cluster "$STATE/cluster.yesterday.json" --cluster "$STATE/cluster.json")
  "$STRATA" diff --tolerance "$TOLERANCE" "${hosts[@]}" "$STATE/plan.splan" \
    "$work/plan.splan" >"$work/diff.txt" || rc=$?
  case $rc in
  0) changed=0 ;;
  1)
    changed=1
    # whether yesterday's checkpoint loads under tonight's plan, in the
    # format of its framework, and the conversion where it does not
    awk '/^checkpoint:/ { on = 1; next }
         on && /the plan.s/ { sub(/^ +/, ""); print "checkpoint: " $0; own = 1; next }
         on && own && /^    / { sub(/^ +/, ""); print "checkpoint: " $0; next }
         { own = 0 }' "$work/diff.txt" | while IFS= read -r l; do log "$l"; done
    ;;
  3)
    changed=0
    log "plan unchanged, but it runs on other hosts: $(tail -n 1 "$work/diff.txt" | sed 's/^ *//')"
    ;;
  *) fail "strata diff failed (exit $rc)" ;;
  esac
fi

# export_all PLAN DIR [--fallback N]: every target of EXPORTS into DIR;
# prints the files written.
export_all() {
  local t out
  for t in $EXPORTS; do
    case $t in
    megatron) out=megatron.args ;;
    deepspeed) out=deepspeed.json ;;
    torchtitan) out=torchtitan.toml ;;
    *) fail "EXPORTS: unknown target '$t'" ;;
    esac
    "$STRATA" export "$t" "$1" "${@:3}" -o "$2/$out" ||
      fail "strata export $t${3:+ ${*:3}} failed"
    echo "$out"
  done
}

# 5. (first, into the work folder) Each fallback's exports, refreshed
# with tonight's plan: configs/fallback-N/ for N nodes lost.
fb_stored=0
if [ "$FALLBACKS" -gt 0 ] 2>/dev/null; then
  fb_stored=$("$STRATA" show --json "$work/plan.splan" | grep -c '"nodes_lost"' || true)
  for ((n = 1; n <= fb_stored; n++)); do
    mkdir -p "$work/fallback-$n"
    export_all "$work/plan.splan" "$work/fallback-$n" --fallback "$n" >/dev/null
  done
fi

# 4. The configs, only when the plan changed.
if [ $changed = 1 ]; then
  outs=()
  list=$(export_all "$work/plan.splan" "$work") || exit 2 # fail said why
  [ -z "$list" ] || mapfile -t outs <<<"$list"
  for out in "${outs[@]}"; do
    mv "$work/$out" "$STATE/configs/$out"
    log "rewrote configs/$out"
  done
  mv "$work/plan.splan" "$STATE/plan.splan"
  log "plan changed; configs rewritten"
elif [ "$FALLBACKS" -gt 0 ] 2>/dev/null; then
  mv "$work/plan.splan" "$STATE/plan.splan"
  log "plan unchanged; configs left as they are; the plan's fallbacks refreshed"
else
  log "plan unchanged; configs left as they are"
fi
if [ "$FALLBACKS" -gt 0 ] 2>/dev/null; then
  for ((n = 1; n <= fb_stored; n++)); do
    rm -rf "$STATE/configs/fallback-$n"
    mv "$work/fallback-$n" "$STATE/configs/fallback-$n"
  done
  # those of more nodes lost than tonight's plan holds are gone
  for d in "$STATE"/configs/fallback-*; do
    [ -d "$d" ] || continue
    n=${d##*/fallback-}
    [ "$n" -gt "$fb_stored" ] 2>/dev/null && rm -rf "$d"
  done
  log "fallbacks: $fb_stored of $FALLBACKS stored (configs/fallback-1 .. $fb_stored)"
fi

# The hosts of the plan in force, on the cluster as it is.
"$STRATA" export hostfile "$STATE/plan.splan" --cluster "$STATE/cluster.json" \
  --format "$LAUNCHER" -o "$work/hostfile" || fail "strata export hostfile failed"
if ! cmp -s "$work/hostfile" "$STATE/configs/hostfile"; then
  mv "$work/hostfile" "$STATE/configs/hostfile"
  log "rewrote configs/hostfile"
fi
