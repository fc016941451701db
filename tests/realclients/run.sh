#!/usr/bin/env bash
# `strata export torchtitan` against torchtitan's own config code
# (check_titan.py; README.md has the set-up):
#
#   run.sh STRATA [NAME 'PLAN ARGS']...   default: the plan set below
#
# Each plan is exported and its module checked; then exports spoiled on
# purpose (an old field name, a batch over dp, a flavor torchtitan lacks,
# a degree off the plan) must be rejected or mismatch, so that the check
# is seen to fail.  Exit 77 (skipped) without the torchtitan source or
# a python3 that imports torch.
set -u
strata=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
data=$here/../data
PY=${PYTHON3:-/usr/bin/python3}
"$PY" -c 'import torch' 2>/dev/null ||
    { echo "skipped: $PY cannot import torch (apt-get install python3-torch)"; exit 77; }
"$PY" "$here/check_titan.py" --probe 2>/dev/null
[ $? -eq 77 ] && { "$PY" "$here/check_titan.py" --probe; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ $# -eq 0 ]; then
    set -- \
        dense_pp "--model llama3-8b --cluster dgx-h100:2 --tp 2 --pp 2 --vpp 2 --global-batch 64" \
        fsdp "--model llama3-8b --cluster dgx-h100:1 --tp 1 --pp 1 --zero 3 --global-batch 64" \
        cp "--model llama3-8b --cluster dgx-h100:8 --global-batch 512" \
        float8 "--model llama3-8b --cluster hgx-b200:2 --precision fp8 --fp8-recipe mxfp8 --global-batch 64" \
        llama31_loss_chunk "--model $data/hf/llama-3.1-8b.json --cluster dgx-h100:2 --tp 2 --pp 2 --recompute full" \
        qwen3_pp "--model $data/hf/qwen3-8b.json --cluster dgx-h100:2 --pp 2 --global-batch 64" \
        titan_fsdp_pp "--model llama3-405b --cluster dgx-h100:32 --global-batch 512 --tp 8 --pp 16 --zero 3 --recompute full --framework torchtitan" \
        moe_ep "--model qwen3-30b-a3b --cluster dgx-h100:2 --framework torchtitan --ep 8 --pp 1 --global-batch 256" \
        async_tp "--model llama3-8b --cluster dgx-h100:1 --tp 2 --tp-comm-overlap --global-batch 64 --framework torchtitan" \
        zbv "--model llama3-8b --cluster dgx-h100:2 --tp 2 --pp 4 --vpp 2 --global-batch 64 --framework torchtitan --pp-schedule ZBVZeroBubble" \
        dualpipev "--model llama3-8b --cluster dgx-h100:2 --tp 2 --pp 4 --vpp 2 --global-batch 64 --framework torchtitan --pp-schedule DualPipeV"
fi
pass=0 fail=0 names=()
while [ $# -ge 2 ]; do
    name=$1 args=$2
    shift 2
    names+=("$name")
    # shellcheck disable=SC2086
    "$strata" plan $args --quiet -o "$work/$name.splan" >/dev/null &&
        "$strata" show "$work/$name.splan" --json >"$work/$name.json" &&
        "$strata" export torchtitan "$work/$name.splan" -o "$work/$name.py" ||
        { echo "$name: plan or export failed"; fail=$((fail + 1)); continue; }
    hf=()
    for a in $args; do
        case $a in */hf/*.json) hf=(--hf-config "$a") ;; esac
    done
    if "$PY" "$here/check_titan.py" "$work/$name.py" "$work/$name.json" "${hf[@]}" \
        >"$work/$name.log" 2>&1; then
        pass=$((pass + 1))
        echo "$name: $(tail -1 "$work/$name.log")"
    else
        fail=$((fail + 1))
        echo "$name: FAIL"
        cat "$work/$name.log"
    fi
done

# Spoiled exports: each must be rejected or mismatch.
spoil() {
    local what=$1 base=$2 expr=$3
    sed "$expr" "$work/$base.py" >"$work/spoiled.py"
    if cmp -s "$work/spoiled.py" "$work/$base.py"; then
        echo "spoiled ($what): the edit did not apply"; fail=$((fail + 1)); return
    fi
    if "$PY" "$here/check_titan.py" "$work/spoiled.py" "$work/$base.json" >"$work/spoiled.log" 2>&1; then
        echo "spoiled ($what): ACCEPTED"; fail=$((fail + 1))
    else
        echo "spoiled ($what): $(grep -m1 -E 'REJECTED|MISMATCH' "$work/spoiled.log")"
        pass=$((pass + 1))
    fi
}
if [ -f "$work/dense_pp.py" ] && [ -f "$work/cp.py" ] && [ -f "$work/moe_ep.py" ] &&
    [ -f "$work/async_tp.py" ]; then
    spoil "the TOML form's head name" dense_pp 's/"lm_head"/"output"/'
    spoil "the old batch: every micro-batch one forward" cp 's/num_tokens_per_microbatch_per_dp_rank=1 \* 8192/num_tokens_per_microbatch_per_dp_rank=16 * 8192/'
    spoil "a flavor torchtitan lacks" cp 's/model_registry("8B"/model_registry("7B"/'
    spoil "a field torchtitan lacks" cp 's/max_context_length=/seq_len=/'
    spoil "dp off the plan" dense_pp 's/data_parallel_shard_degree=4/data_parallel_shard_degree=2/'
    spoil "the schedule" dense_pp 's/"Interleaved1F1B"/"1F1B"/'
    spoil "ep off the plan" moe_ep 's/expert_parallel_degree=8,/expert_parallel_degree=4,/'
    spoil "async tp dropped" async_tp 's/enable_async_tensor_parallel=True/enable_async_tensor_parallel=False/'
    spoil "no Float8" float8 's/converters=\[/converters=[][:0] + [/; s/MXFP8LinearConverter.Config(model_compile_enabled=False),//'
fi
echo "realclients torchtitan: ${#names[@]} plans; $pass passed, $fail failed"
[ "$fail" -eq 0 ]
