#!/usr/bin/env python3
"""Check the arguments a Megatron-LM launch script gives torchrun.

    check_megatron_args.py ARGV CUDA_DEVICE_MAX_CONNECTIONS PLAN.json FLAGS.txt

ARGV is torchrun's argument list (NUL-separated, as the stand-in torchrun
recorded it).  The rules are Megatron-LM's own (megatron/training/
arguments.py, validate_args, at d98e8a64), restated so the suite needs no
Megatron-LM checkout; tools that run the real code are described in
docs/exports.md.
"""
import json
import re
import sys


def main():
    argv_path, cdmc, plan_path, flags_path = sys.argv[1:5]
    argv = open(argv_path, "rb").read().decode().split("\0")[:-1]
    plan = json.load(open(plan_path))
    known = set(l.strip() for l in open(flags_path) if l.startswith("--"))
    bad = []

    i = next(k for k, a in enumerate(argv) if a.endswith(".py"))
    tr, script, args = argv[:i], argv[i], argv[i + 1:]
    trv = {tr[k]: tr[k + 1] for k in range(0, len(tr) - 1, 2)}
    opt = {}
    k = 0
    while k < len(args):
        a = args[k]
        if not a.startswith("--"):
            bad.append(f"stray argument {a!r}")
            k += 1
            continue
        vals = []
        while k + 1 < len(args) and not args[k + 1].startswith("--"):
            vals.append(args[k + 1])
            k += 1
        opt[a] = vals
        k += 1

    def has(f):
        return f in opt

    def val(f, cast=int):
        return cast(opt[f][0]) if opt.get(f) else None

    for f in opt:
        if f not in known:
            bad.append(f"{f} is not a Megatron-LM flag")
    # torchrun: the plan's world, one process per GPU
    world = int(trv.get("--nnodes", 0)) * int(trv.get("--nproc_per_node", 0))
    if world != plan["devices"]:
        bad.append(f"torchrun starts {world} processes, the plan has {plan['devices']} GPUs")
    for f in ("--node_rank", "--master_addr", "--master_port"):
        if f not in trv:
            bad.append(f"torchrun without {f}")
    fam = plan["architecture"]["family"]
    want = "examples/bert/pretrain_bert.py" if fam == "bert" else "pretrain_gpt.py"
    if not script.endswith("/" + want):
        bad.append(f"training script {script}, want {want}")
    # validate_args
    tp, pp = val("--tensor-model-parallel-size") or 1, val("--pipeline-model-parallel-size") or 1
    cp = val("--context-parallel-size") or 1
    if world % (tp * pp * cp):
        bad.append(f"world {world} not divisible by tp {tp} x pp {pp} x cp {cp}")
    dp = world // (tp * pp * cp)
    if (tp, pp, dp, cp) != (plan["tp"], plan["pp"], plan["dp"], plan.get("options", {}).get("cp", 1)):
        bad.append(f"tp, pp, dp, cp {tp, pp, dp, cp}, plan {plan['tp'], plan['pp'], plan['dp']}")
    if cp > 1 and val("--seq-length") % (2 * cp):
        bad.append(f"seq-length not a multiple of 2 x cp {cp}")
    # Megatron-Core's expert grid: etp x ep divides tp x cp x dp, the experts
    # divide over ep, and ep with tp needs sequence parallelism
    ep, etp = val("--expert-model-parallel-size") or 1, val("--expert-tensor-parallel-size") or tp
    if (tp * cp * dp) % (etp * ep):
        bad.append(f"tp x cp x dp {tp * cp * dp} not divisible by etp {etp} x ep {ep}")
    if ep > 1 and (val("--num-experts") or 0) % ep:
        bad.append(f"experts not divisible by ep {ep}")
    if ep > 1 and tp > 1 and not has("--sequence-parallel"):
        bad.append("expert and tensor parallelism without --sequence-parallel")
    if tp > 1 and cdmc != "1":
        bad.append(f"tp {tp} but CUDA_DEVICE_MAX_CONNECTIONS={cdmc} (validate_args asserts 1)")
    mb, gb = val("--micro-batch-size"), val("--global-batch-size")
    if not mb or not gb or gb % (mb * dp):
        bad.append(f"global batch {gb} not divisible by micro-batch {mb} x dp {dp}")
    heads, L = val("--num-attention-heads"), val("--num-layers")
    if heads % tp:
        bad.append(f"{heads} heads not divisible by tp {tp}")
    if has("--num-query-groups") and val("--num-query-groups") % tp:
        bad.append("query groups not divisible by tp")
    if has("--sequence-parallel") and tp == 1:
        bad.append("--sequence-parallel with tp 1")
    lpv = val("--num-layers-per-virtual-pipeline-stage")
    if lpv and (L % pp or (L // pp) % lpv):
        bad.append(f"{L} layers do not split into pp {pp} chunks of {lpv}")
    first, last = val("--decoder-first-pipeline-num-layers"), val("--decoder-last-pipeline-num-layers")
    if first or last:
        mid, rest = pp - bool(first) - bool(last), L - (first or 0) - (last or 0)
        if mid < 0 or (mid and rest % mid) or (not mid and rest):
            bad.append(f"uneven split {first}/{last} of {L} layers over {pp} stages")
    # --pipeline-model-parallel-layout (megatron/core/transformer/
    # pipeline_parallel_layer_layout.py): stages split by '|', "x*n" n of x,
    # E the embedding, t a layer, L the loss; a multiple of pp stages
    lay = val("--pipeline-model-parallel-layout", str)
    if lay is not None:
        s = lay.replace(",", "")
        s = re.sub(r"\(([^)]+)\)\*(\d+)", lambda m: m.group(1) * int(m.group(2)), s)
        s = re.sub(r"(.)\*(\d+)", lambda m: m.group(1) * int(m.group(2)), s)
        stages = s.split("|")
        if len(stages) % pp or set(s) - set("EtLm|"):
            bad.append(f"layout {lay!r}: {len(stages)} stages for pp {pp}")
        if s.count("t") != L or not stages[0].startswith("E") or not stages[-1].endswith("L"):
            bad.append(f"layout {lay!r} is not E, {L} layers, L")
        if first or last or lpv:
            bad.append("a layout beside first/last or virtual stage flags")
        sizes = [st.count("t") for st in stages]
        want = [x["layer_end"] - x["layer_begin"] for x in plan["stages"]]
        if sizes != want:
            bad.append(f"layout stages {sizes}, the plan's {want}")
    if has("--overlap-param-gather") and not (has("--use-distributed-optimizer") and has("--overlap-grad-reduce")):
        bad.append("--overlap-param-gather without the distributed optimizer and --overlap-grad-reduce")
    # what a run needs: the LR schedule (get_optimizer_param_scheduler),
    # iterations, tokenizer, data
    if not has("--lr"):
        bad.append("no --lr")
    if not (has("--train-iters") or has("--train-samples")):
        bad.append("no --train-iters or --train-samples")
    tok = val("--tokenizer-type", str)
    needs = {"NullTokenizer": ["--vocab-size"], "GPT2BPETokenizer": ["--vocab-file", "--merge-file"],
             "HuggingFaceTokenizer": ["--tokenizer-model"], "BertWordPieceLowerCase": ["--vocab-file"]}
    if tok not in needs:
        bad.append(f"tokenizer {tok}")
    else:
        bad += [f"{tok} without {f}" for f in needs[tok] if not opt.get(f)]
    if not (has("--mock-data") or opt.get("--data-path")):
        bad.append("no data")
    # the plan's model
    a = plan["architecture"]
    if (L, val("--hidden-size"), heads) != (a["layers"], a["hidden"], a["heads"]):
        bad.append("model sizes differ from the plan")
    base = a.get("rope_theta") or (500000 if a["vocab"] == 128256 else 10000)
    if fam == "llama" and val("--rotary-base") != base:
        bad.append(f"rotary base {val('--rotary-base')} for vocab {a['vocab']}")
    if not a["flash_attention"] and val("--attention-backend", str) != "unfused":
        bad.append("the plan holds the attention scores, the backend is not unfused")
    for b in bad:
        print(f"check_megatron_args: {b}")
    if bad:
        sys.exit(1)
    print(f"check_megatron_args: ok ({script.rsplit('/', 1)[-1]}, {len(opt)} flags, world {world})")


if __name__ == "__main__":
    main()
