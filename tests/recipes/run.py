#!/usr/bin/env python3
"""run.py - NVIDIA's published Megatron-Bridge recipes as strata estimate
commands (tests/data/bridge/recipes.tsv: every H100, B200 and GB200
pre-training row of the performance summary, with its recipe settings).

Usage: run.py STRATA [--plan [--list-plans]] [--show] [--fit SYSTEM]

Each row becomes one `strata estimate` command that states its
parallelism, batch, sequence, precision and the recipe's settings
(pipeline layout, the embedding and loss counted in the split,
recompute and its modules, FSDP, overlaps, MoE run-time options).  A
stated row must be accepted: exit 0 (it fits) or 3 (it does not, and the
report names the memory over the device).  A setting strata cannot state
yet makes the row "not stated" with the setting named; those are listed,
and counted, not run.

With --plan, for each distinct (model, GPUs, global batch, sequence,
precision) of the stated rows, `strata plan` on the same cluster must
return a plan that fits and whose step, by strata's own model, is no
slower than the best of those rows' recipes that fit, hand-written
pipeline layouts included (the recipe's configuration is one the search
could choose, or one its generated layouts must match).  --show prints
every command; --list-plans prints the plans' arguments as NAME 'ARGS'
pairs (shared/tools/realclients' run.sh takes them) instead of running
them.  With --fit SYSTEM, every stated row of that system (H100, B200,
GB200) must be predicted to fit: the run was published, so it fitted; the rows of NO_FIT are the
exceptions, each with the reason it is not a memory over-count.

Ends with a summary; exits 1 if any stated row or plan check fails.
"""
import csv
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TSV = os.path.join(HERE, "..", "data", "bridge", "recipes.tsv")

MODELS = {
    "LLAMA3_8B": "llama3-8b",
    "LLAMA3_70B": "llama3-70b",
    "LLAMA3.1_405B": "llama3-405b",
    "DeepSeekV3": "deepseek-v3",
    "GPT OSS 120B": "gpt-oss-120b",
    "Qwen3_30B_a3B": "qwen3-30b-a3b",
    "Qwen3_235B_a22B": "qwen3-235b-a22b",
}
# (preset, GPUs per node)
SYSTEMS = {"H100": ("dgx-h100", 8), "B200": ("hgx-b200", 8),
           "GB200": ("gb200-nvl72", 72)}


class REFUSED(str):
    """A row that cannot run as published: Strata must refuse it, saying
    `expect` (the reason is the string)."""
    def __new__(cls, expect, reason):
        o = str.__new__(cls, reason)
        o.expect = expect
        return o


# Published rows whose table disagrees with the release's own config on
# what drives the memory: (release, system, model, variant, precision) ->
# why.  The release-era workload base configs (README.md, "Release-era
# config differences") set micro-batch 1 where the table says 4 or 2; at 1
# Strata predicts both fit (64.4 GiB of 80).
NO_FIT = {
    ("25.11", "H100", "GPT OSS 120B", "-", "BF16"):
        "table micro-batch 4, release config (GPT_OSS_120B_PRETRAIN_CONFIG_"
        "H100_BF16_BASE_CONFIG) 1",
    ("25.11", "H100", "Qwen3_30B_a3B", "-", "FP8-CS"):
        "table micro-batch 2, release config (QWEN3_30B_A3B_PRETRAIN_CONFIG_"
        "H100_FP8_CS_BASE_CONFIG) 1",
    ("25.09", "H100", "Qwen3_30B_a3B", "tokendrop", "FP8-CS"):
        "table micro-batch 2 as in 25.11's row of the same recipe, whose "
        "release config says 1",
    ("25.09", "GB200", "LLAMA3_70B", "-", "FP8-MX"):
        "table micro-batch 2, release config (scripts/performance/configs/"
        "llama3/llama3_70b_llm_pretrain.yaml at fa0315ae2, gb200 "
        "num_gpus_64 fp8_mx) 1: 144.0 GiB of 186 at 1",
}


def given(v):
    return v not in ("-", "", "?")


def flag(args, name, value=None):
    args.append(name)
    if value is not None:
        args.append(str(value))


def parallel_args(r, args, why):
    """Degrees, batch and sequence; the missing is appended to why."""
    gpus, tp, pp, cp = (int(r[k]) for k in ("gpus", "tp", "pp", "cp"))
    ep = int(r["ep"]) if given(r["ep"]) else 1
    vp = int(r["vp"]) if given(r["vp"]) else 1
    if gpus % (tp * cp * pp):
        why.append("GPUs %d not a multiple of tp x cp x pp" % gpus)
        return
    etp = int(r["etp"]) if given(r["etp"]) else tp
    if ep * etp > gpus // pp:
        # as published, Megatron-LM's parallel_state refuses them: so
        # must Strata
        why.append(REFUSED("is not divisible by expert tensor x expert "
                           "model parallel size",
                           "ep %d x etp %d over the %d GPUs of a pipeline "
                           "stage" % (ep, etp, gpus // pp)))
    preset, per = SYSTEMS[r["system"]]
    nodes = -(-gpus // per)
    flag(args, "--cluster", "%s:%d" % (preset, nodes))
    flag(args, "--tp", tp)
    flag(args, "--pp", pp)
    flag(args, "--cp", cp)
    flag(args, "--dp", gpus // (tp * cp * pp))
    if ep > 1 or r["model"] not in ("LLAMA3_8B", "LLAMA3_70B",
                                    "LLAMA3.1_405B"):
        flag(args, "--ep", ep)
        if given(r["etp"]):
            flag(args, "--etp", r["etp"])
    if vp > 1 and not given(r["layout"]):
        flag(args, "--vpp", vp)
    flag(args, "--global-batch", r["gbs"])
    flag(args, "--micro-batch", r["mbs"])
    flag(args, "--seq", r["seq"])


def precision_args(r, args, why):
    p = r["precision"]
    if p == "BF16":
        flag(args, "--precision", "bf16")
    elif p.startswith("FP8") or p == "MXFP8":
        flag(args, "--precision", "fp8")
        if given(r["fp8_recipe"]):
            flag(args, "--fp8-recipe", r["fp8_recipe"])
    elif p == "NVFP4":
        flag(args, "--precision", "fp4")
    else:
        why.append("precision %s" % p)
    if r["fp8_param_gather"] == "1":
        flag(args, "--fp8-param-gather")
    elif p == "NVFP4" and tuple(int(x) for x in r["release"].split(".")) >= \
            (26, 4, 1):
        # bf16_with_nvfp4_mixed's fp4_param_gather = True (Megatron-LM's
        # --fp4-param-gather: the parameters kept in FP4), from Megatron-
        # Bridge ecbd4ead5 (2026-04-21), first released in 26.04.01
        # (21d102f5e); strata states it as its low-precision param gather
        flag(args, "--fp8-param-gather")
    # Every performance recipe reduces its gradients in bf16: _benchmark_common
    # and _perf_precision set grad_reduce_in_fp32 = False
    # (perf_recipes/_common.py), Megatron-LM's --grad-reduce-in-bf16: the
    # 2 + 2 + 12 bytes a parameter of strata's zero recipe
    # (tests/data/bridge/README.md, "Gradients in bf16").
    flag(args, "--recipe", "zero")
    if r["precision_aware_optimizer"] == "1":
        flag(args, "--precision-aware-optimizer")
        for k, f in (("main_grads_dtype", "--main-grads-dtype"),
                     ("exp_avg_dtype", "--exp-avg-dtype"),
                     ("exp_avg_sq_dtype", "--exp-avg-sq-dtype")):
            if given(r[k]) and r[k] != "fp32":
                flag(args, f, r[k])


def layout_stages(layout):
    """Megatron-LM's expansion of a layout (pipeline_parallel_layer_layout.py,
    parse_str_to_list): its virtual stages' strings."""
    x = layout.replace(",", "")
    x = re.sub(r"\(([^)]+)\)\*(\d+)", lambda m: m.group(1) * int(m.group(2)), x)
    x = re.sub(r"(.)\*(\d+)", lambda m: m.group(1) * int(m.group(2)), x)
    return x.split("|")


def vpp_of(r):
    if given(r["layout"]):
        return len(layout_stages(r["layout"])) // int(r["pp"])
    return int(r["vp"]) if given(r["vp"]) else 1


def split_args(r, args, why):
    if r["layout"] == "?":
        # the release's recipe sets none for its (pp, vp), and its layers
        # split over no even chunks: Megatron-LM would refuse it as
        # published, and so must Strata
        why.append(REFUSED("do not split evenly",
                           "no layout in the recipe for pp %s x vp %s" %
                           (r["pp"], r["vp"])))
    elif given(r["layout"]):
        flag(args, "--pipeline-layout", r["layout"])
    if r["account_embedding"] == "1":
        flag(args, "--account-for-embedding")
    if r["account_loss"] == "1":
        flag(args, "--account-for-loss")
    for k, f in (("first_stage_layers", "--first-stage-layers"),
                 ("last_stage_layers", "--last-stage-layers")):
        if given(r[k]):
            flag(args, f, r[k])


LAYERS = {"LLAMA3_8B": 32, "LLAMA3_70B": 80, "LLAMA3.1_405B": 126,
          "DeepSeekV3": 61, "GPT OSS 120B": 36, "Qwen3_30B_a3B": 48,
          "Qwen3_235B_a22B": 94}


def units_per_chunk(r, acct, chunks):
    return (LAYERS.get(r["model"], 0) + acct) // chunks


def memory_args(r, args, why):
    g = r["recompute_granularity"]
    mods = r["recompute_modules"]
    if g == "selective" and mods == "":
        flag(args, "--recompute", "none")  # an empty list: nothing
    elif g == "selective" and given(mods):
        flag(args, "--recompute-modules", mods)
    elif g == "selective":
        flag(args, "--recompute", "selective")
    elif g == "full":
        flag(args, "--recompute", "full")
        if given(r["recompute_method"]):
            flag(args, "--recompute-method", r["recompute_method"])
        if given(r["recompute_num_layers"]):
            flag(args, "--recompute-num-layers", r["recompute_num_layers"])
    else:
        flag(args, "--recompute", "none")
    if given(r["cpu_offload_layers"]) and r["cpu_offload_layers"] != "0":
        flag(args, "--cpu-offloading-num-layers", r["cpu_offload_layers"])
    m = r["fine_grained_offload_modules"]
    if given(m) and m != "":
        # transformer_config.py offload_modules (a list): strata's comma list
        flag(args, "--offload-modules",
             ",".join(re.findall(r"[a-z0-9_]+", m)))
    if r["optimizer_cpu_offload"] == "1":
        # Megatron-LM's default fraction is 1.0 (arguments.py)
        f = r["optimizer_offload_fraction"]
        flag(args, "--optimizer-offload-fraction", f if given(f) else "1")
    if r["use_megatron_fsdp"] == "1":
        flag(args, "--zero", 3)


def overlap_args(r, args, why):
    if r["sequence_parallel"] == "1":
        flag(args, "--sequence-parallel")
    elif r["sequence_parallel"] == "0" and int(r["tp"]) > 1:
        flag(args, "--no-sequence-parallel")
    if r["tp_comm_overlap"] == "1":
        flag(args, "--tp-comm-overlap")
    if r["moe_a2a_overlap"] == "1":
        if int(r["pp"]) > 1 and vpp_of(r) <= 1:
            # the table's parallelism with the recipe's overlap at HEAD:
            # transformer_config.py refuses it (pp > 1 needs vpp) since
            # Megatron-LM d7bf5aa (2025-08-26), before the first release
            # here (25.09): the run cannot have had it, and is stated
            # without it
            return
        flag(args, "--overlap-moe-expert-parallel-comm")


def moe_args(r, args, why):
    """The MoE layer's and CUDA graphs' run-time choices."""
    if r["variant"] == "tokendrop":
        # Megatron-Bridge's token drop (training/utils/moe_token_drop.py,
        # apply_moe_token_drop, as scripts/performance --use_tokendrop
        # sets it): moe_expert_capacity_factor 1.0 with
        # moe_pad_expert_input_to_capacity, every expert padded to it;
        # its dropless runs set neither (and force the router's balance)
        flag(args, "--capacity-factor", "1.0")
        if r["moe_flex_backend"] == "deepep":
            # DeepEP does not pad to a capacity: Megatron-LM refuses the
            # row's recipe as it stands (transformer_config.py, "Flex
            # token dispatcher with deepep backend does not support
            # moe_pad_expert_input_to_capacity"), and so must Strata;
            # what the release ran instead is not known
            why.append(REFUSED("does not pad the experts' input",
                               "token drop with the flex dispatcher's "
                               "deepep backend"))
    if given(r["moe_dispatcher"]):
        flag(args, "--moe-token-dispatcher", r["moe_dispatcher"])
    if given(r["moe_flex_backend"]):
        flag(args, "--moe-flex-backend", r["moe_flex_backend"])
    if r["moe_grouped_gemm"] == "0":
        flag(args, "--no-moe-grouped-gemm")
    if given(r["moe_router_dtype"]):
        flag(args, "--moe-router-dtype", r["moe_router_dtype"])
    if r["moe_shared_expert_overlap"] == "1":
        flag(args, "--moe-shared-expert-overlap")
    impl, scope = r["cuda_graph_impl"], r["cuda_graph_scope"]
    if impl == "local" and scope == "full_iteration":
        impl, scope = "full_iteration", "-"  # Megatron-LM's current name
    if given(impl) and impl != "none":
        flag(args, "--cuda-graph-impl", impl)
        if given(scope):
            flag(args, "--cuda-graph-scope", scope)


def expandable_segments(r):
    """Whether the run's allocator had PYTORCH_CUDA_ALLOC_CONF=
    expandable_segments:True, as its release's launcher set it.  26.08:
    the flat recipe's env_vars (perf_recipes/*/*.py), every one but
    Llama 3 70B's Megatron-FSDP recipe on GB200.  26.04.01 and 26.06:
    scripts/performance/utils/executors.py's PERF_ENV_VARS, which
    perf_plugins.py removes for Llama under Megatron FSDP (21d102f5e,
    63b08b397; and for nccl_ub configs, none here).  25.09 to 26.04:
    perf_plugins.py (setup_experiment.py in 25.09) sets it for Llama 3.1
    405B in FP8 (current scaling or MX) on GB200, from 26.02 for
    DeepSeek-V3 on H100 and from 26.04 on GB200 too (fa0315ae2,
    97ad8cc6f, c0b9a0003, cfeddcd94, 74695a06d)."""
    rel = tuple(int(x) for x in r["release"].split("."))
    fsdp_llama = r["use_megatron_fsdp"] == "1" and r["model"] in (
        "LLAMA3_8B", "LLAMA3_70B", "LLAMA3.1_405B")
    if rel >= (26, 4, 1):
        return not fsdp_llama
    if r["model"] == "LLAMA3.1_405B" and r["system"] == "GB200":
        return r["precision"] not in ("BF16", "NVFP4")
    if r["model"] == "DeepSeekV3":
        return (rel >= (26, 2) and r["system"] == "H100" or
                rel >= (26, 4) and r["system"] == "GB200")
    return False


def timing_key(args):
    """The arguments that decide the step: a row's without the allocator
    (--stack alloc=, which changes memory alone), so that a release
    which set expandable segments and one which did not still state the
    same run for bench_bridge.py's reference rows."""
    out, i = [], 0
    while i < len(args):
        if args[i] == "--stack" and args[i + 1].startswith("alloc="):
            i += 2
            continue
        out.append(args[i])
        i += 1
    return tuple(out)


def command(r):
    """The estimate arguments of row r, and what it cannot state."""
    why = []
    model = MODELS.get(r["model"])
    if not model:
        return None, ["model %s" % r["model"]]
    args = ["--model", model]
    if r["model"] == "DeepSeekV3" and "w/o MTP" in r["variant"]:
        flag(args, "--mtp-layers", 0)
    parallel_args(r, args, why)
    precision_args(r, args, why)
    split_args(r, args, why)
    memory_args(r, args, why)
    overlap_args(r, args, why)
    moe_args(r, args, why)
    if expandable_segments(r):
        flag(args, "--stack", "alloc=expandable")
    return args, why


# What the framework runs rather than a degree or split: the plan is
# given the best recipe's (its overlaps, its optimizer, the modules its
# selective recompute would recompute), and searches the rest (degrees,
# split, micro-batch, recompute or not, sequence parallelism).
RUNTIME = {"--fp8-recipe": 1, "--tp-comm-overlap": 0, "--overlap-moe-expert-parallel-comm": 0,
           "--precision-aware-optimizer": 0, "--fp8-param-gather": 0,
           "--recipe": 1, "--recompute-modules": 1,
           "--main-grads-dtype": 1, "--exp-avg-dtype": 1,
           "--exp-avg-sq-dtype": 1, "--mtp-layers": 1,
           "--moe-token-dispatcher": 1, "--moe-flex-backend": 1,
           "--no-moe-grouped-gemm": 0, "--moe-router-dtype": 1,
           "--moe-shared-expert-overlap": 0, "--cuda-graph-impl": 1,
           "--cuda-graph-scope": 1, "--stack": 1}


def switches(args):
    out, i = [], 0
    while i < len(args):
        n = RUNTIME.get(args[i])
        if n is not None:
            out += args[i:i + 1 + n]
            i += n
        i += 1
    return out


def estimate(strata, args):
    p = subprocess.run([strata, "estimate"] + args + ["--json", "--no-compare"],
                       capture_output=True, text=True)
    out = None
    if p.returncode in (0, 3):
        try:
            out = json.loads(p.stdout)
        except ValueError:
            out = None
    return p.returncode, out, p.stderr.strip()


def plan_step(strata, args):
    p = subprocess.run([strata, "plan"] + args + ["--json", "--quiet"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()
    try:
        j = json.loads(p.stdout)
    except ValueError:
        return None, "not JSON"
    return j, ""


def fig(j, key):
    return j.get(key)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    strata, opts = sys.argv[1], sys.argv[2:]
    with open(TSV, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    fails, unstated, as_published, fit, nofit = [], [], [], 0, 0
    groups = {}
    for i, r in enumerate(rows):
        label = "%s %s %s %s x%s tp%s pp%s cp%s vp%s ep%s" % (
            r["release"], r["system"], r["model"], r["precision"], r["gpus"],
            r["tp"], r["pp"], r["cp"], r["vp"], r["ep"])
        args, why = command(r)
        refused = [w for w in why if isinstance(w, REFUSED)]
        if refused and args and len(refused) == len(why):
            rc, out, err = estimate(strata, args)
            if rc in (0, 3) or refused[0].expect not in err:
                fails.append("%s: as published (%s) it should be refused "
                             "saying '%s'; exit %d: %s" %
                             (label, refused[0], refused[0].expect, rc,
                              err[:300]))
            else:
                as_published.append("%s: %s" % (label, refused[0]))
            continue
        if why:
            unstated.append("%s: %s" % (label, "; ".join(why)))
            continue
        if "--show" in opts:
            print("strata estimate " + " ".join(args))
        rc, out, err = estimate(strata, args)
        if rc not in (0, 3) or out is None:
            fails.append("%s: exit %d: %s" % (label, rc, err[:300]))
            continue
        peak, have = fig(out, "peak_memory_bytes"), fig(out, "memory_budget_bytes")
        if rc == 3 and not (peak and have and peak > have):
            fails.append("%s: exit 3 without a peak over the device" % label)
            continue
        if rc == 0:
            fit += 1
        else:
            nofit += 1
            fit_sys = opts[opts.index("--fit") + 1] if "--fit" in opts else None
            k = (r["release"], r["system"], r["model"], r["variant"],
                 r["precision"])
            if r["system"] == fit_sys and k not in NO_FIT:
                fails.append("%s: ran, but predicted not to fit (%.1f of "
                             "%.1f GiB)" % (label, peak / 2**30,
                                            have / 2**30))
        key = tuple(args[args.index(k) + 1] for k in
                    ("--model", "--cluster", "--global-batch", "--seq",
                     "--precision"))
        key += (r["gpus"],)
        step = fig(out, "step_seconds")
        # [best in the search's space, its label, its run-time switches,
        #  best of all (a hand-written layout too), its label]
        g = groups.setdefault(key, [None, label, [], None, label, []])
        searched = "--pipeline-layout" not in args
        if rc == 0 and step and searched and (g[0] is None or step < g[0]):
            g[0], g[1], g[2] = step, label, switches(args)
        if rc == 0 and step and (g[3] is None or step < g[3]):
            g[3], g[4], g[5] = step, label, switches(args)
    plans_checked = 0
    if "--plan" in opts:
        for key, (best, label, sw, top, top_label, top_sw) in sorted(
                groups.items()):
            if top is None:
                continue  # no recipe of the group fits
            if best is None:  # only hand-written layouts fit: report
                best, label = float("inf"), "none in the search's space"
                sw = top_sw
            model, cluster, gbs, seq, prec, gpus = key
            args = ["--model", model, "--cluster", cluster, "--global-batch",
                    gbs, "--seq", seq, "--precision", prec] + sw
            if int(gpus) % SYSTEMS_PER(cluster):
                continue  # the recipe's GPUs are part of a node: no plan
            if "--list-plans" in opts:  # NAME ARGS pairs for realclients
                print("%s_%s_%s '%s'" % (model, cluster.replace(":", "x"),
                                         gbs, " ".join(args)))
                continue
            j, err = plan_step(strata, args)
            plans_checked += 1
            if j is None:
                fails.append("plan %s: %s" % (" ".join(args), err[:300]))
                continue
            step = fig(j, "step_seconds")
            if step > best * (1 + 1e-9):
                fails.append("plan %s: %.3f s, slower than the recipe %s "
                             "(%.3f s)" % (" ".join(args), step, label, best))
            else:
                print("plan %-40s %.3f s <= recipe %.3f s (%s)" %
                      (" ".join(args[1:4:2]), step, best, label))
            if top < best and step > top * (1 + 1e-9):
                # a hand-written --pipeline-layout the search's own
                # layouts do not reach
                fails.append("plan %s: %.3f s, slower than the recipe %s's "
                             "own layout (%.3f s)" % (" ".join(args), step,
                                                      top_label, top))
            elif top < best:
                print("  (and the recipe %s's own layout: %.3f s)" %
                      (top_label, top))
    for u in as_published:
        print("refused as published: " + u)
    for u in unstated:
        print("not stated: " + u)
    for x in fails:
        print("FAIL " + x)
    print("%d recipes: %d stated (%d fit, %d do not), %d refused as "
          "published, %d not stated; %d plans checked; %d failed" %
          (len(rows), fit + nofit + len([x for x in fails
                                          if not x.startswith("plan")]),
           fit, nofit, len(as_published), len(unstated), plans_checked,
           len(fails)))
    return 1 if fails else 0


def SYSTEMS_PER(cluster):
    preset = cluster.split(":")[0]
    for p, per in SYSTEMS.values():
        if p == preset:
            return per
    return 1


if __name__ == "__main__":
    sys.exit(main())
