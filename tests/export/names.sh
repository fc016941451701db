#!/usr/bin/env bash
# names.sh - the property test of names in exports: plans of the kinds each
# exporter takes, then emit_names (hostile model, cluster, source and op
# names through every export, hostile node names through the hostfile)
# and check_names.py (each export parsed back by what reads it and
# compared with the benign one).  Skipped (77) without python3 >= 3.11.
#
# Usage: names.sh STRATA EMIT_NAMES [N]
set -u
strata=$1
emit=$2
n=${3:-60}
here=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
python3 -c 'import tomllib' 2>/dev/null ||
  { echo "skipped: python3 has no tomllib (3.11+)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/out"
plans=(
  gpt "--model gpt --layers 4 --hidden 256 --heads 4 --seq 128 --vocab 1000 --cluster dgx-h100:1 --global-batch 16"
  qwen3 "--model $here/../data/hf/qwen3-8b.json --cluster dgx-h100:2 --pp 1 --global-batch 64"
  deepspeed "--model gpt --layers 4 --hidden 256 --heads 4 --seq 128 --vocab 1000 --cluster dgx-h100:2 --framework deepspeed --pp 2 --global-batch 16"
)
files=()
for ((i = 0; i < ${#plans[@]}; i += 2)); do
  # shellcheck disable=SC2086
  "$strata" plan ${plans[i + 1]} --quiet -o "$tmp/${plans[i]}.splan" >/dev/null ||
    { echo "FAIL: strata plan ${plans[i + 1]}"; exit 1; }
  files+=("$tmp/${plans[i]}.splan")
done
"$emit" "$tmp/out" "$n" 20261201 "${files[@]}" || { echo "FAIL: emit_names"; exit 1; }
for x in launch torch topology torchtitan timeline html megatron deepspeed; do
  ls "$tmp/out" | grep -q "\.$x\.1\." || { echo "FAIL: no $x export was written"; exit 1; }
done
python3 "$here/check_names.py" "$tmp/out"
