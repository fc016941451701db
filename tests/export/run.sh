#!/usr/bin/env bash
# The exports run by what reads them, offline:
#
#   run.sh STRATA launch      Megatron-LM launch scripts run under bash with
#                             a stand-in torchrun: refused without their
#                             required variables, and with them the
#                             recorded arguments keep Megatron-LM's rules
#                             (restated in check_megatron_args.py) and its
#                             flag list
#   run.sh STRATA torch       the torch module imported and its plan objects
#                             built with Debian's python3-torch
#                             (check_torch.py)
#   run.sh STRATA torchtitan  the Python configuration parsed and its
#                             fields the plan's (tests/realclients runs it
#                             through torchtitan); the TOML (--toml)
#                             parsed by tomllib, every key one torchtitan
#                             defined, the batch the plan's
#   run.sh STRATA html        the page rendered by headless Chromium: the
#                             screenshot is not blank, the console silent;
#                             a plan with tp, dp and pp > 1 draws its
#                             communication heat map, whose cells are in
#                             the screenshot (kept beside the test's
#                             working directory, its path printed)
#
# A check whose tool is not installed (python3, python3-torch, chromium)
# exits 77, which ctest reports as skipped, with the package to install.
set -u
strata=$1
what=$2
here=$(cd "$(dirname "$0")" && pwd)
data=$here/../data
ref=$data/shared/reference
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

skip() {
    echo "skipped: $*"
    exit 77
}

# Small real plans (each well under a second): name and `strata plan` args.
PLANS=(
    gpt "--model gpt-1.7b --cluster dgx-a100:4"
    llama "--model llama2-70b --cluster dgx-a100:16"
    llama3 "--model llama3-405b --cluster dgx-h100:64 --global-batch 512"
    moe "--model mixtral-8x7b --cluster dgx-h100:8 --global-batch 256"
    bert "--model bert-large --cluster dgx-a100:1"
    smallllama "--model llama --layers 4 --cluster dgx-h100:2 --global-batch 16"
    interleaved "--model gpt --layers 8 --cluster dgx-h100:2 --tp 2 --pp 2 --vpp 2 --global-batch 16"
    free "--model gpt --layers 4 --hidden 512 --heads 8 --cluster dgx-h100:2 --free --global-batch 16"
    mixed "--model gpt-18.4b --cluster $here/../data/topo/mixed.json"
    mixedllama3 "--model llama --layers 32 --hidden 4096 --heads 32 --kv-heads 8 --ffn 14336 --vocab 128256 --seq 8192 --cluster $here/../data/topo/mixed.json --global-batch 256 --pp 4"
    qwen3 "--model $here/../data/hf/qwen3-8b.json --cluster dgx-h100:2 --pp 1 --global-batch 64"
    qwen3pp "--model $here/../data/hf/qwen3-8b.json --cluster dgx-h100:2 --pp 2 --global-batch 64"
    heatmap "--model gpt --layers 8 --cluster dgx-h100:2 --tp 2 --pp 2 --global-batch 16 --no-search-layouts"
    cp "--model llama --layers 8 --cluster dgx-h100:16 --tp 4 --cp 2 --pp 2 --seq 16384 --global-batch 32"
    # Llama 3 405B's FSDP with pp 16, as Meta trained it, planned for
    # torchtitan; and Megatron-FSDP's, which torchtitan's export refuses
    titanfsdp "--model llama3-405b --cluster dgx-h100:32 --global-batch 512 --tp 8 --pp 16 --zero 3 --recompute full --framework torchtitan"
    mgfsdp "--model llama3-405b --cluster dgx-h100:32 --global-batch 512 --tp 8 --pp 16 --zero 3 --recompute full"
    # Llama 3.1 (RoPE scaled): a pipeline whose last chunk holds only the
    # loss, and data parallelism alone; Llama 3 8B with cp; MXFP8
    llama31 "--model $here/../data/hf/llama-3.1-8b.json --cluster dgx-h100:2 --tp 2 --pp 2 --recompute full"
    llama31dp "--model $here/../data/hf/llama-3.1-8b.json --cluster dgx-h100:2 --pp 1 --global-batch 64"
    titan8bcp "--model llama3-8b --cluster dgx-h100:8 --global-batch 512"
    mxfp8 "--model llama3-8b --cluster hgx-b200:2 --precision fp8 --fp8-recipe mxfp8 --global-batch 64"
    # torchtitan's qwen3 MoE with ep 8 (experts over ep alone), async tp;
    # experts split over etp 2, which torchtitan's export refuses
    titanmoe "--model qwen3-30b-a3b --cluster dgx-h100:2 --framework torchtitan --ep 8 --pp 1 --global-batch 256"
    titanatp "--model llama3-8b --cluster dgx-h100:1 --tp 2 --tp-comm-overlap --global-batch 64 --framework torchtitan"
    mgetp "--model qwen3-30b-a3b --cluster dgx-h100:2 --tp 2 --etp 2 --ep 4 --pp 1 --zero 3 --global-batch 256"
)

plan_all() {
    local i
    for ((i = 0; i < ${#PLANS[@]}; i += 2)); do
        # shellcheck disable=SC2086
        "$strata" plan ${PLANS[i + 1]} --quiet -o "$tmp/${PLANS[i]}.splan" >/dev/null ||
            { echo "cannot plan ${PLANS[i]}"; exit 1; }
        "$strata" show "$tmp/${PLANS[i]}.splan" --json >"$tmp/${PLANS[i]}.json"
    done
}

need_python() {
    PY=${PYTHON3:-/usr/bin/python3}
    [ -x "$PY" ] || PY=$(command -v python3) || skip "no python3 (apt-get install python3)"
}

# ---- Megatron-LM launch scripts
launch() {
    need_python
    # Llama 3.1's rope_scaling (llama3, factor 8) reaches the flags
    if "$strata" plan --model "$data/hf/llama-3.1-8b.json" --cluster dgx-h100:2 --quiet \
        -o "$tmp/llama31.splan" >/dev/null &&
        "$strata" export megatron "$tmp/llama31.splan" -o "$tmp/llama31.args"; then
        grep -q -- "--rotary-base 500000" "$tmp/llama31.args" &&
            grep -q -- "--use-rope-scaling" "$tmp/llama31.args" &&
            grep -q -- "--rope-scaling-factor 8" "$tmp/llama31.args" ||
            fail "llama 3.1: the rope scaling is not in the Megatron flags"
    else
        fail "llama 3.1: plan or export"
    fi
    mkdir -p "$tmp/bin"
    cat >"$tmp/bin/torchrun" <<'EOF'
#!/usr/bin/env bash
printf '%s\0' "$@" >"$LAUNCH_OUT.argv"
printf '%s\n' "${CUDA_DEVICE_MAX_CONNECTIONS-unset}" >"$LAUNCH_OUT.env"
printf '%s\n' "${ASCEND_MARK-unset}" >"$LAUNCH_OUT.ascend"
EOF
    chmod +x "$tmp/bin/torchrun"
    local name fam vars
    for name in gpt llama llama3 bert interleaved moe mixed cp; do
        spec=()
        case $name in mixed*) spec=(--cluster "$data/topo/mixed.json") ;; esac
        "$strata" export megatron --launch "$tmp/$name.splan" "${spec[@]}" -o "$tmp/$name.sh" ||
            { fail "$name: export --launch"; continue; }
        bash -n "$tmp/$name.sh" || fail "$name: the script is not valid bash"
        # without its variables the script stops before torchrun, saying which
        if env -i PATH="$tmp/bin:/usr/bin:/bin" LAUNCH_OUT="$tmp/$name.none" \
            bash "$tmp/$name.sh" >"$tmp/$name.none.out" 2>&1; then
            fail "$name: ran without NODE_RANK"
        fi
        grep -q "set NODE_RANK" "$tmp/$name.none.out" || fail "$name: no message for NODE_RANK"
        [ ! -e "$tmp/$name.none.argv" ] || fail "$name: torchrun started without the variables"
        fam=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["architecture"]["family"])' "$tmp/$name.json")
        vars=(NODE_RANK=0 MASTER_ADDR=10.0.0.1 TRAIN_ITERS=100 CHECKPOINT_PATH=/ckpt)
        case $fam in
            gpt) vars+=(DATA_PATH=MOCK VOCAB_FILE=MOCK) ;;
            llama) vars+=(DATA_PATH=/data/llama_text_document TOKENIZER_MODEL=/tok) ;;
            bert) vars+=(DATA_PATH=/data/bert_text_sentence VOCAB_FILE=/vocab.txt) ;;
        esac
        # one variable short: still refused
        if env -i PATH="$tmp/bin:/usr/bin:/bin" LAUNCH_OUT="$tmp/$name.short" \
            "${vars[@]:0:${#vars[@]}-1}" bash "$tmp/$name.sh" >/dev/null 2>&1; then
            fail "$name: ran without ${vars[${#vars[@]}-1]%%=*}"
        fi
        env -i PATH="$tmp/bin:/usr/bin:/bin" LAUNCH_OUT="$tmp/$name" "${vars[@]}" \
            bash "$tmp/$name.sh" >"$tmp/$name.out" 2>&1 || fail "$name: the script failed: $(tail -1 "$tmp/$name.out")"
        [ -s "$tmp/$name.argv" ] || { fail "$name: torchrun not reached"; continue; }
        "$PY" "$here/check_megatron_args.py" "$tmp/$name.argv" "$(cat "$tmp/$name.env")" \
            "$tmp/$name.json" "$ref/megatron_flags.txt" || fail "$name: Megatron-LM's rules"
    done
    # a pipeline rank holds tp x cp x dp ranks: 4 x 2 x 8 = 64, 8 nodes
    grep -q '^# Ranks: .* r\*64 \.\. r\*64+63 ' "$tmp/cp.sh" &&
        grep -q '^#   pipeline rank 1: nodes 8-15,' "$tmp/cp.sh" ||
        fail "cp: the rank table does not count context parallelism"
    grep -q '^# The plan: tp 4, cp 2, pp 2' "$tmp/cp.sh" || fail "cp: the header drops cp"
    grep -q '^# The plan: .*, ep [0-9]' "$tmp/moe.sh" || fail "moe: the header drops ep"
    # with the spec, the hosts of each node rank (mixed: node groups)
    grep -q '^# Hosts of cluster ' "$tmp/mixed.sh" || fail "mixed: no hosts with --cluster"
    # refused: a free-mode plan, with the reason
    if "$strata" export megatron --launch "$tmp/free.splan" -o "$tmp/free.sh" 2>"$tmp/free.err"; then
        fail "free-mode plan exported for Megatron-LM"
    fi
    grep -q "free-mode plan" "$tmp/free.err" || fail "no reason for the free-mode refusal"
    [ ! -e "$tmp/free.sh" ] || fail "a refused export left a file"
    mindspeed
}

# MindSpeed on Ascend NPUs (--mindspeed): the launch script sources CANN's
# set_env.sh (a stand-in that marks the environment), refuses a
# pretrain_gpt.py without MindSpeed's adaptor before torchrun, and with it
# runs torchrun with --transformer-impl local among Megatron-LM's flags;
# an FP8 plan is refused with the reason and leaves no file.
mindspeed() {
    local vars=(NODE_RANK=0 MASTER_ADDR=10.0.0.1 TRAIN_ITERS=100 CHECKPOINT_PATH=/ckpt
        DATA_PATH=/data/llama_text_document TOKENIZER_MODEL=/tok
        ASCEND_SET_ENV="$tmp/set_env.sh" MEGATRON_LM="$tmp/mlm")
    "$strata" plan --model llama3-8b --cluster atlas-800t-a2:2 --quiet -o "$tmp/npu.splan" >/dev/null &&
        "$strata" show "$tmp/npu.splan" --json >"$tmp/npu.json" &&
        "$strata" export megatron --launch --mindspeed "$tmp/npu.splan" -o "$tmp/npu.sh" ||
        { fail "mindspeed: plan or export"; return; }
    bash -n "$tmp/npu.sh" || fail "mindspeed: the script is not valid bash"
    echo 'export ASCEND_MARK=sourced' >"$tmp/set_env.sh"
    mkdir -p "$tmp/mlm"
    printf 'import torch\nfrom functools import partial\n' >"$tmp/mlm/pretrain_gpt.py"
    if env -i PATH="$tmp/bin:/usr/bin:/bin" LAUNCH_OUT="$tmp/npu.noadaptor" "${vars[@]}" \
        bash "$tmp/npu.sh" >"$tmp/npu.noadaptor.out" 2>&1; then
        fail "mindspeed: ran without the adaptor import"
    fi
    grep -q "does not import mindspeed.megatron_adaptor" "$tmp/npu.noadaptor.out" ||
        fail "mindspeed: no message for the missing adaptor"
    [ ! -e "$tmp/npu.noadaptor.argv" ] || fail "mindspeed: torchrun started without the adaptor"
    printf 'import torch\nimport mindspeed.megatron_adaptor\n' >"$tmp/mlm/pretrain_gpt.py"
    env -i PATH="$tmp/bin:/usr/bin:/bin" LAUNCH_OUT="$tmp/npu" "${vars[@]}" \
        bash "$tmp/npu.sh" >"$tmp/npu.out" 2>&1 || fail "mindspeed: the script failed: $(tail -1 "$tmp/npu.out")"
    [ "$(cat "$tmp/npu.ascend" 2>/dev/null)" = sourced ] || fail "mindspeed: set_env.sh not sourced"
    tr '\0' '\n' <"$tmp/npu.argv" | grep -qx -- "--transformer-impl" ||
        fail "mindspeed: no --transformer-impl local"
    "$PY" "$here/check_megatron_args.py" "$tmp/npu.argv" "$(cat "$tmp/npu.env")" \
        "$tmp/npu.json" "$ref/megatron_flags.txt" || fail "mindspeed: Megatron-LM's rules"
    if "$strata" plan --model gpt-1.7b --cluster dgx-h100:1 --precision fp8 --quiet -o "$tmp/fp8.splan" >/dev/null &&
        "$strata" export megatron --mindspeed "$tmp/fp8.splan" -o "$tmp/fp8.args" 2>"$tmp/fp8.err"; then
        fail "mindspeed: an FP8 plan exported"
    fi
    grep -q "BF16 and FP16" "$tmp/fp8.err" || fail "mindspeed: no reason for the FP8 refusal"
    [ ! -e "$tmp/fp8.args" ] || fail "mindspeed: a refused export left a file"
}

# ---- the PyTorch module
torch_() {
    need_python
    "$PY" -c 'import torch' 2>/dev/null || skip "no torch for $PY (apt-get install python3-torch)"
    local name
    # llama31: its last chunk holds only the loss (the final norm and
    # head, which that chunk alone keeps)
    for name in free gpt smallllama interleaved bert llama31; do
        "$strata" export torch "$tmp/$name.splan" -o "$tmp/$name.torch.py" || { fail "$name: export torch"; continue; }
        "$PY" "$here/check_torch.py" "$tmp/$name.torch.py" "$tmp/$name.json" "$data/export/torch_api.txt" ||
            fail "$name: the module"
        # docstrings name the layers a chunk holds ("layers 32-31" is none)
        grep -E -q 'layers ([0-9]+)-([0-9]+)' "$tmp/$name.torch.py" &&
            grep -E -o 'layers [0-9]+-[0-9]+' "$tmp/$name.torch.py" |
            awk -F'[ -]' '$3 < $2 { bad = 1 } END { exit !bad }' &&
            fail "$name: a docstring names layers that run backwards"
    done
}

# ---- the torchtitan configuration (Python) and job config (TOML, --toml)
titan_has() { # NAME PATTERN WHAT: the export holds the line
    grep -q -E "$2" "$tmp/$1.py" || fail "$1: $3"
}
torchtitan() {
    need_python
    "$PY" -c 'import tomllib' 2>/dev/null || skip "$PY has no tomllib (Python >= 3.11)"
    local name
    # the Python form: every plan torchtitan trains, valid Python
    for name in llama llama3 mixedllama3 qwen3 qwen3pp titanfsdp llama31 llama31dp titan8bcp mxfp8 titanmoe titanatp; do
        "$strata" export torchtitan "$tmp/$name.splan" -o "$tmp/$name.py" || { fail "$name: export"; continue; }
        "$PY" -c 'import ast, sys; ast.parse(open(sys.argv[1]).read())' "$tmp/$name.py" ||
            fail "$name: not Python"
        titan_has "$name" '^def strata_plan\(\) -> Trainer.Config:$' "no config function"
        # the degrees, reshard after forward, ep and async tp as the plan's
        "$PY" "$here/check_titan_fields.py" "$tmp/$name.py" "$tmp/$name.json" ||
            fail "$name: the parallel fields are not the plan's"
    done
    # the MoE flavor, its ep; async tp compiled
    titan_has titanmoe 'model_registry\("30B-A3B"' "not qwen3's 30B-A3B flavor"
    titan_has titanmoe 'expert_parallel_degree=8,' "ep lost"
    titan_has titanatp 'enable_async_tensor_parallel=True,' "async tp lost"
    # the field check sees a wrong ep
    sed 's/expert_parallel_degree=8,/expert_parallel_degree=4,/' "$tmp/titanmoe.py" >"$tmp/spoiled.py"
    if "$PY" "$here/check_titan_fields.py" "$tmp/spoiled.py" "$tmp/titanmoe.json" >/dev/null; then
        fail "titanmoe: a wrong ep accepted by the field check"
    fi
    # a forward runs one micro-batch; the step the global batch
    titan_has titan8bcp 'num_tokens_per_microbatch_per_dp_rank=1 \* 8192,$' "a forward is not the micro-batch"
    titan_has titan8bcp 'num_tokens_per_train_step=512 \* 8192,$' "the step is not the global batch"
    titan_has titan8bcp 'context_parallel_degree=2,$' "no cp"
    # the plan's RoPE (Llama 3.1's scaling) and no scaling where it has none
    titan_has llama31 'rope.scaling = "llama"$' "Llama 3.1's RoPE scaling lost"
    titan_has llama31 'rope.scaling_factor = 8$' "Llama 3.1's factor lost"
    titan_has titan8bcp 'rope.scaling = "none"$' "Llama 3's RoPE scaled"
    # the last chunk holds only the loss: the norm and head are there
    titan_has llama31 '^ +\["norm", "lm_head"\],$' "the head is not on the loss's chunk"
    titan_has mxfp8 'MXFP8LinearConverter.Config\(' "no MXFP8"
    # FSDP2 under the pipeline: torchtitan's default, as costed
    titan_has titanfsdp 'fsdp_reshard_after_forward="default",' "not FSDP2's default under pp"
    titan_has titanfsdp 'pipeline_parallel_degree=16,$' "pp lost"
    titan_has titanfsdp 'data_parallel_shard_degree=2,$' "dp lost"
    # the TOML form for torchtitan before 2026-02-23: its flavors scale
    # RoPE as Llama 3.1, so Llama 3.1 (and qwen3) only
    for name in qwen3 llama31 llama31dp; do
        "$strata" export torchtitan --toml "$tmp/$name.splan" -o "$tmp/$name.toml" || { fail "$name: export --toml"; continue; }
        "$PY" "$here/check_toml.py" "$tmp/$name.toml" "$tmp/$name.json" "$data/export/torchtitan_keys.txt" ||
            fail "$name: the job config"
    done
    # Llama 3 8B has no RoPE scaling (llama3-405b is Llama 3.1's, scaled)
    if "$strata" export torchtitan --toml "$tmp/titan8bcp.splan" >/dev/null 2>"$tmp/llama3.err"; then
        fail "llama3-8b: Llama 3 (no RoPE scaling) exported to flavors that scale"
    fi
    grep -q "has no RoPE scaling" "$tmp/llama3.err" || fail "llama3-8b: no RoPE reason"
    "$strata" export torchtitan --toml "$tmp/llama3.splan" >/dev/null ||
        fail "llama3-405b: Llama 3.1's scaling, the TOML flavors' own, refused"
    # gpt, free: no torchtitan model or layout; mgfsdp: costed as
    # Megatron-FSDP; qwen3pp: the TOML torchtitan's qwen3 had no split
    for name in gpt free mgfsdp moe mgetp; do
        if "$strata" export torchtitan "$tmp/$name.splan" >/dev/null 2>"$tmp/$name.err"; then
            fail "$name: exported for torchtitan"
        fi
        grep -q "torchtitan export:" "$tmp/$name.err" || fail "$name: no reason given"
    done
    grep -q "over ep alone" "$tmp/mgetp.err" || fail "mgetp: not refused for its etp"
    # and planned for torchtitan, etp 2 is refused (rule titan-etp)
    if "$strata" plan --model qwen3-30b-a3b --cluster dgx-h100:2 --framework torchtitan \
        --tp 2 --etp 2 --quiet >/dev/null 2>"$tmp/etp.err"; then
        fail "--framework torchtitan --etp 2: planned"
    fi
    grep -q "over ep alone" "$tmp/etp.err" || fail "--etp 2: not refused by titan-etp"
    grep -q "has experts" "$tmp/moe.err" || fail "moe (Mixtral): not refused for its experts"
    if "$strata" export torchtitan --toml "$tmp/qwen3pp.splan" >/dev/null 2>&1; then
        fail "qwen3pp: exported as TOML"
    fi
}

# ---- the HTML page
html() {
    local chrome
    chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome) ||
        skip "no chromium (apt-get install chromium; it could not be installed here)"
    need_python
    local name size
    for name in free interleaved heatmap; do
        "$strata" export html "$tmp/$name.splan" -o "$tmp/$name.html" || { fail "$name: export html"; continue; }
        if grep -Eiq '<script|<link|<img|<iframe|@import|url\(' "$tmp/$name.html"; then
            fail "$name: the page loads or runs something"
        fi
        if grep -Eo 'https?://[^"]*' "$tmp/$name.html" | grep -v '^http://www.w3.org/2000/svg$' | grep -q .; then
            fail "$name: the page names an address"
        fi
        size=1200,1400
        [ "$name" = heatmap ] && size=1200,2600 # down to the heat map
        timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars \
            --no-first-run --disable-extensions --enable-logging=stderr --v=0 \
            --user-data-dir="$tmp/chrome" --window-size=$size \
            --screenshot="$tmp/$name.png" "file://$tmp/$name.html" >"$tmp/$name.log" 2>&1
        [ -s "$tmp/$name.png" ] || { fail "$name: no screenshot ($(tail -2 "$tmp/$name.log"))"; continue; }
        if grep -E 'CONSOLE|Uncaught|Failed to load' "$tmp/$name.log"; then
            fail "$name: console messages"
        fi
        "$PY" "$here/check_png.py" "$tmp/$name.png" || fail "$name: blank screenshot"
    done
    heatmap_page
}

# The heat map of the tp 2 x pp 2 x dp 4 plan: a grid per kind it uses
# (TP, DP, PP), CP and EP absent, the GPUs' cells, and in the screenshot
# the cells' colours beyond what the legend's swatches hold.
heatmap_page() {
    local page=$tmp/heatmap.html kind
    [ -s "$tmp/heatmap.png" ] || return
    grep -q '<svg class=heatmap' "$page" || fail "heatmap: no heat map"
    for kind in TP DP PP; do
        grep -q "font-weight:bold\">$kind: " "$page" || fail "heatmap: no $kind grid"
    done
    for kind in CP 'EP all-to-all'; do
        if grep -q "font-weight:bold\">$kind: " "$page"; then fail "heatmap: a $kind grid"; fi
    done
    # 16 GPUs: TP pairs 0>1, 1>0, ...; DP rings of 4 at stride 2; the PP
    # pairs i <> i + 8, both ways
    grep -q '<title>TP: GPU 0 (node 0) to GPU 1 (node 0): ' "$page" || fail "heatmap: no TP pair 0 to 1"
    grep -q '<title>DP: GPU 6 (node 0) to GPU 0 (node 0): ' "$page" || fail "heatmap: no DP pair 6 to 0"
    grep -q '<title>PP: GPU 9 (node 1) to GPU 1 (node 0): ' "$page" || fail "heatmap: no PP pair 9 to 1"
    [ "$(grep -c '<title>PP: ' "$page")" -eq 16 ] || fail "heatmap: not 16 PP pairs"
    "$PY" "$here/check_png.py" --heatmap "$tmp/heatmap.png" || fail "heatmap: the heat map's cells are not in the screenshot"
    local keep=${STRATA_SHOT_DIR:-$PWD}
    if cp "$tmp/heatmap.png" "$keep/export_html_heatmap.png" 2>/dev/null; then
        echo "screenshot: $keep/export_html_heatmap.png"
    fi
}

plan_all
case $what in
    launch) launch ;;
    torch) torch_ ;;
    torchtitan) torchtitan ;;
    html) html ;;
    *) echo "run.sh: unknown check '$what'"; exit 2 ;;
esac
if [ "$fails" -gt 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "export $what: ok"
