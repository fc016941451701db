#!/usr/bin/env python3
"""bench_bridge.py - what `strata estimate` predicts for NVIDIA's published
Megatron-Bridge pre-training runs of 2025-2026 (tests/data/bridge/
recipes.tsv: every H100, B200 and GB200 row of the performance summaries),
next to the published tokens/s per GPU.

It pairs with bench_fidelity (Narayanan et al. 2021 on A100), but is a
script rather than C: each row becomes its `strata estimate` command
through tests/recipes/run.py's own mapping of the recipe's ~40 settings,
so that the recipe test and this table cannot disagree about what a row
says, and the figures are the command's, as a user would get them.

Printed, per GPU (H100, B200, GB200): every row with its release, model,
GPUs, precision, configuration, published and predicted tokens/s/GPU, the
error, the predicted peak memory against the device's budget and the
verdict (every published row ran, so "fits" is right and "OOM" wrong);
then the mean absolute and worst error per GPU, dense and MoE apart, and
the memory verdicts counted.  The errors are taken over the reference
rows: where several releases give the same `strata estimate` command
(the same configuration and recipe: CUDA graphs, dispatcher, FP8
recipe, recompute, offload, token drop), only the latest release's row
counts, as software moves between releases; the others are printed,
marked "superseded by" that release, and left out of the MAE.  Rows refused as published (run.py says why)
are listed, not costed.  Only the H100 rows may set parameters
(docs/fidelity.md); B200 and GB200 check the model.

With --runs FILE it writes the reference rows instead, as a runs file of
strata calibrate (docs/calibration.md) that bench_calibration.py uses.

Usage: bench_bridge.py STRATA [--csv] [--system H100|B200|GB200]
                       [--runs FILE]
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_PY = os.path.join(HERE, "..", "tests", "recipes", "run.py")
DENSE = ("LLAMA3_8B", "LLAMA3_70B", "LLAMA3.1_405B")
SYSTEMS = ("H100", "B200", "GB200")
GIB = float(1 << 30)


def load_run():
    spec = importlib.util.spec_from_file_location("recipes_run", RUN_PY)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def config_of(r):
    parts = ["tp%s pp%s" % (r["tp"], r["pp"])]
    for k in ("cp", "vp", "ep"):
        if r[k] not in ("-", "1"):
            parts.append("%s%s" % (k, r[k]))
    parts.append("mb%s gb%s" % (r["mbs"], r["gbs"]))
    if r["use_megatron_fsdp"] == "1":
        parts.append("fsdp")
    g = r["recompute_granularity"]
    if g == "full":
        parts.append("rc full")
    elif g == "selective":
        parts.append("rc sel")
    return " ".join(parts)


def cost(run, strata, r):
    """One row's result dict, or None with the reason."""
    args, why = run.command(r)
    if args is None or why:
        return None, "; ".join(str(w) for w in why) or "not stated"
    rc, out, err = run.estimate(strata, args)
    if rc not in (0, 3) or out is None:
        return None, "exit %d: %s" % (rc, err[:120])
    gpus = int(r["gpus"])
    res = {
        "pred": out["tokens_per_second"] / gpus,
        "peak": out["peak_memory_bytes"] / GIB,
        "budget": out["memory_budget_bytes"] / GIB,
        "fits": rc == 0,
        "mfu": out.get("mfu"),
    }
    pub = r["tokens_per_gpu"]
    res["pub"] = float(pub) if run.given(pub) else None
    if res["pub"]:
        res["err"] = 100.0 * (res["pred"] / res["pub"] - 1.0)
    return res, ""


def release_order(rel):
    """25.09 < 25.11 < 26.02 < 26.02.01: the numbers, compared in turn."""
    return tuple(int(x) for x in rel.split("."))


def superseded(run, rows):
    """Row index -> the release that supersedes it: a later release whose
    row states the same strata estimate command."""
    latest = {}
    for i, r in enumerate(rows):
        args, why = run.command(r)
        if args is None or why:
            continue
        k = run.timing_key(args)
        if k not in latest or (release_order(r["release"]) >
                               release_order(rows[latest[k]]["release"])):
            latest[k] = i
    out = {}
    for i, r in enumerate(rows):
        args, why = run.command(r)
        if args is None or why:
            continue
        j = latest[run.timing_key(args)]
        if j != i:
            out[i] = rows[j]["release"]
    return out


def precision_class(p):
    """The tables' names of one recipe: 26.x's FP8 is 25.x's FP8-CS, MXFP8
    is FP8-MX."""
    return {"FP8": "FP8-CS", "MXFP8": "FP8-MX"}.get(p, p)


UNEXPLAINED = 0.25


def unexplained(rows, res, later):
    """Row index -> (release, published ratio, predicted ratio) for a row
    whose difference from the latest release's run of the same model on
    as many GPUs of the system, at the same precision, its recipe does not
    explain: the published throughputs' ratio and the predicted one differ
    by more than UNEXPLAINED (the issue's rule: where a recipe leaves a
    difference unexplained, the latest release is the reference; the
    tolerance is the one a row is held to).  Rows already superseded by
    the same command are left to that."""
    groups = {}
    for i, r in enumerate(rows):
        if res[i] is None or not res[i]["pub"]:
            continue
        k = (r["model"], r["gpus"], precision_class(r["precision"]))
        groups.setdefault(k, []).append(i)
    out = {}
    for idx in groups.values():
        newest = max(release_order(rows[i]["release"]) for i in idx)
        ref = [i for i in idx
               if release_order(rows[i]["release"]) == newest and
               i not in later]
        if not ref:
            continue
        j = ref[0]
        for i in idx:
            if i in later or release_order(rows[i]["release"]) == newest:
                continue
            pub = res[i]["pub"] / res[j]["pub"]
            pred = res[i]["pred"] / res[j]["pred"]
            if abs(pub / pred - 1) > UNEXPLAINED:
                out[i] = (rows[j]["release"], pub, pred)
    return out


def key_of(r):
    return (r["release"], r["system"], r["model"], r["variant"],
            r["precision"])


def name_of(r):
    v = "" if r["variant"] == "-" else " (%s)" % r["variant"]
    return r["model"] + v


def summary(label, errs):
    if not errs:
        return "%s: no rows" % label
    mae = sum(abs(e) for e in errs) / len(errs)
    worst = max(errs, key=abs)
    return ("%s: MAE %.1f %%, worst %+.1f %% over %d reference rows" %
            (label, mae, worst, len(errs)))


def print_system(run, strata, sysname, rows, csv_out):
    print("## %s\n" % sysname)
    if not csv_out:
        print("| release | model | GPUs | precision | configuration | "
              "published tok/s/GPU | predicted | error | peak GiB | "
              "budget GiB | verdict | reference |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    errs = {"all": [], "dense": [], "moe": [], "dense+": [], "moe+": []}
    fit = oom = 0
    skipped = []
    later = superseded(run, rows)
    costed = [cost(run, strata, r) for r in rows]
    odd = unexplained(rows, [c[0] for c in costed], later)
    for i, r in enumerate(rows):
        res, why = costed[i]
        if res is None:
            skipped.append("%s %s %s x%s: %s" % (r["release"], name_of(r),
                                                 r["precision"], r["gpus"],
                                                 why))
            continue
        kind = "dense" if r["model"] in DENSE else "moe"
        if res["pub"] and i not in later and i not in odd:
            errs["all"].append(res["err"])
            errs[kind].append(res["err"])
        if res["pub"] and i not in later:
            errs[kind + "+"].append(res["err"])
        fit += res["fits"]
        oom += not res["fits"]
        cells = [r["release"], name_of(r), r["gpus"], r["precision"],
                 config_of(r),
                 "%.0f" % res["pub"] if res["pub"] else "-",
                 "%.0f" % res["pred"],
                 "%+.1f%%" % res["err"] if res["pub"] else "-",
                 "%.1f" % res["peak"], "%.1f" % res["budget"],
                 "fits" if res["fits"] else
                 "OOM*" if key_of(r) in run.NO_FIT else "OOM",
                 "superseded by " + later[i] if i in later else
                 "unexplained against %s (published x%.2f, predicted x%.2f)"
                 % odd[i] if i in odd else "yes"]
        if csv_out:
            print(",".join([sysname] + ['"%s"' % c if "," in c else c
                                        for c in cells]))
        else:
            print("| " + " | ".join(cells) + " |")
    print()
    for label in ("all", "dense", "moe"):
        print(summary("%s %s" % (sysname, label), errs[label]))
    print("%s: errors over the reference rows; %d superseded rows (the "
          "same command in a later release) and %d unexplained ones (the "
          "published change from the latest release's run of the model on "
          "as many GPUs at that precision differs from the predicted one by "
          "more than %d %%) printed, not counted" %
          (sysname, len(later), len(odd), UNEXPLAINED * 100))
    for label in ("dense", "moe"):
        print(summary("%s %s, the unexplained rows counted too" %
                      (sysname, label), errs[label + "+"]))
    known = sum(1 for r in rows if key_of(r) in run.NO_FIT)
    print("%s memory: %d of %d predicted to fit, %d predicted not to "
          "(every row ran)%s" % (sysname, fit, fit + oom, oom,
                                 "; OOM*: %d whose table disagrees with its "
                                 "release's config (tests/recipes/run.py, "
                                 "NO_FIT)" % known if known else ""))
    for s in skipped:
        print("not costed: " + s)
    print()


def number(v):
    """A value's JSON form: a number where it reads as one."""
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v


def run_of(args, out, label, step):
    """A strata calibrate run (docs/calibration.md) of an estimate command:
    each option a key (--fp8-recipe X: fp8_recipe), a flag true, --no-X
    false; the recompute and sequence parallelism estimate chose pinned,
    as a run says what ran (their defaults there are off)."""
    run = {"label": label}
    i = 0
    while i < len(args):
        name = args[i][2:]
        has_value = i + 1 < len(args) and not args[i + 1].startswith("--")
        if has_value:
            run[name.replace("-", "_")] = number(args[i + 1])
            i += 2
            continue
        if name.startswith("no-"):
            run[name[3:].replace("-", "_")] = False
        else:
            run[name.replace("-", "_")] = True
        i += 1
    opts = out.get("options", {})
    if "recompute" not in run and "recompute_modules" not in run:
        run["recompute"] = opts.get("recompute", "none")
    if "sequence_parallel" not in run:
        run["sequence_parallel"] = bool(opts.get("sequence_parallel"))
    run["step_seconds"] = step
    return run


def write_runs(run, strata, rows, path):
    """The reference rows of every system (as print_system counts them) as
    a runs file, labelled "Bridge SYSTEM|release model precision xGPUs"."""
    import json
    runs = []
    for sysname in SYSTEMS:
        srows = [r for r in rows if r["system"] == sysname]
        later = superseded(run, srows)
        costed = [cost(run, strata, r) for r in srows]
        odd = unexplained(srows, [c[0] for c in costed], later)
        for i, r in enumerate(srows):
            res = costed[i][0]
            if res is None or not res["pub"] or i in later or i in odd:
                continue
            args, _ = run.command(r)
            _, out, _ = run.estimate(strata, args)
            gpus = int(r["gpus"])
            step = int(r["gbs"]) * int(r["seq"]) / (res["pub"] * gpus)
            label = "Bridge %s|%s %s %s x%d" % (sysname, r["release"],
                                                name_of(r), r["precision"],
                                                gpus)
            runs.append(run_of(args, out, label, step))
    with open(path, "w") as f:
        json.dump({"format": "strata-measurements", "version": 1,
                   "runs": runs}, f, indent=1)
    return 0


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    strata, opts = sys.argv[1], sys.argv[2:]
    only = None
    if "--system" in opts:
        only = opts[opts.index("--system") + 1]
    run = load_run()
    import csv
    with open(run.TSV, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if "--runs" in opts:
        return write_runs(run, strata, rows, opts[opts.index("--runs") + 1])
    print("Megatron-Bridge performance summaries against strata estimate\n")
    for s in SYSTEMS:
        if only and s != only:
            continue
        print_system(run, strata, s, [r for r in rows if r["system"] == s],
                     "--csv" in opts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
