#!/usr/bin/env python3
"""The parallel fields of a `strata export torchtitan` module against its
plan, without torchtitan: the module is parsed (ast), never run.

    check_titan_fields.py EXPORT.py PLAN.json

The keyword arguments of its ParallelismConfig(...) and CompileConfig(...)
calls are read as literals and compared with the plan (strata show
--json): the degrees (dp = replicate x shard, tp, pp, cp, ep), FSDP2's
reshard after forward (torchtitan/distributed/fsdp.py at b5bcd76c,
get_fsdp_reshard_after_forward_policy: "default" is `not pp_enabled`),
and async tp, which torchtitan's CompileConfig takes only compiled with
"model" among its components.  Exit 0: all agree; 1: the mismatches,
printed.
"""
import ast
import json
import sys


def calls(tree, name):
    """The literal keyword arguments of every call to `name`."""
    out = []
    for n in ast.walk(tree):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and
                n.func.id == name):
            kw = {}
            for k in n.keywords:
                try:
                    kw[k.arg] = ast.literal_eval(k.value)
                except ValueError:
                    kw[k.arg] = None  # not a literal (a computed field)
            out.append(kw)
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check_titan_fields.py EXPORT.py PLAN.json")
    with open(sys.argv[1]) as f:
        tree = ast.parse(f.read())
    with open(sys.argv[2]) as f:
        plan = json.load(f)
    par, comp = calls(tree, "ParallelismConfig"), calls(tree, "CompileConfig")
    if len(par) != 1 or len(comp) != 1:
        print("not one ParallelismConfig and one CompileConfig")
        return 1
    par, comp = par[0], comp[0]
    o, a = plan["options"], plan["architecture"]
    want_rs = ("default" if plan["pp"] > 1 else
               "always" if o["zero_stage"] >= 3 else "never")
    # "default" resolves to reshard (True) without pp, keep (False) with
    rs = par.get("fsdp_reshard_after_forward", "default")
    rs_on = rs == "always" or (rs == "default" and plan["pp"] == 1)
    want_on = want_rs == "always" or (want_rs == "default" and plan["pp"] == 1)
    asy = bool(o.get("tp_comm_overlap")) and plan["tp"] > 1
    checks = [
        ("dp (replicate x shard)", par.get("data_parallel_replicate_degree", 1)
         * par.get("data_parallel_shard_degree", -1), plan["dp"]),
        ("tp", par.get("tensor_parallel_degree", 1), plan["tp"]),
        ("pp", par.get("pipeline_parallel_degree", 1), plan["pp"]),
        ("cp", par.get("context_parallel_degree", 1), plan.get("cp", 1)),
        ("ep", par.get("expert_parallel_degree", 1),
         plan.get("ep", 1) if a.get("experts") else 1),
        ("reshard after forward", rs_on, want_on),
        ("async tp", bool(comp.get("enable_async_tensor_parallel")), asy),
    ]
    if asy:
        checks.append(("compiled for async tp", (comp.get("enable"), "model"
                                                 in comp.get("components", [])),
                       (True, True)))
    bad = 0
    for name, got, want in checks:
        if got != want:
            print("MISMATCH %s: %s (plan: %s)" % (name, got, want))
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
