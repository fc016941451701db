#!/usr/bin/env bash
# time_limit.sh - `strata plan --time-limit T` on mixed clusters beside
# busy loops (a loaded machine): per case the wall seconds from the
# command's start to its exit, the exit code (0 a plan, 5 none found in
# time, 3 proven not to fit), whether the plan is marked time-limited and
# its step.  Prints figures; never fails on a time (the suite's
# cli_progress checks the behaviour).
# Usage: bench/time_limit.sh path/to/strata [T [busy loops [runs]]]
#   (defaults: 5 s, 4 loops, 3 runs; clusters of 640 nodes of 2, 3 and 4
#   GPU generations are written to a scratch folder)
set -u
strata="$1"
T="${2:-5}"
busy="${3:-4}"
runs="${4:-3}"
dir=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT
gens=("H100-SXM h" "A100-80GB a" "H200 p" "B200 b")
for n in 2 3 4; do # 640 nodes, split as evenly as n groups go
  {
    printf '{"name": "gen%d-640", "node_groups": [' "$n"
    left=640
    for ((i = 0; i < n; i++)); do
      read -r model prefix <<<"${gens[$i]}"
      k=$((i < n - 1 ? 640 / n : left))
      left=$((left - k))
      [ "$i" -gt 0 ] && printf ', '
      printf '{"names": "%s[001-%03d]", "template": {"gpus": 8, "gpu_model": "%s"}}' \
        "$prefix" "$k" "$model"
    done
    printf '], "network": {"nic_gbits_per_s": 400, "leaf_size": 32, '
    printf '"spine_oversubscription": 1}}\n'
  } >"$dir/gen$n.json"
done
for ((i = 0; i < busy; i++)); do
  yes >/dev/null &
  pids+=($!)
done
echo "--time-limit $T beside $busy busy loops on $(nproc) cores" \
  "(load $(cut -d' ' -f1 /proc/loadavg))"
printf '%-12s %-5s %4s %8s %5s %8s %s\n' model gens run wall_s exit limited step_s
for model in llama3-405b deepseek-v3; do
  for n in 2 3 4; do
    for ((r = 1; r <= runs; r++)); do
      t0=$(date +%s.%N)
      "$strata" plan --model "$model" --cluster "$dir/gen$n.json" \
        --time-limit "$T" --json --quiet >"$dir/out.json" 2>/dev/null
      code=$?
      t1=$(date +%s.%N)
      limited=$(grep -c '"time_limited":[[:space:]]*true' "$dir/out.json")
      step=$(sed -n 's/^[[:space:]]*"step_seconds":[[:space:]]*\([0-9.e+-]*\).*/\1/p' \
        "$dir/out.json" | head -1)
      printf '%-12s %-5s %4d %8.2f %5d %8s %s\n' "$model" "$n" "$r" \
        "$(echo "$t1 - $t0" | bc)" "$code" "$limited" "${step:--}"
    done
  done
done
