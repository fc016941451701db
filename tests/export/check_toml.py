#!/usr/bin/env python3
"""Check a torchtitan job config: it parses as TOML, every key is one
torchtitan defines (KEYS: sections and fields with their types, read from
torchtitan's job_config.py), every value has that type, and the degrees
are the plan's.

    check_toml.py CONFIG.toml PLAN.json KEYS.txt
"""
import json
import sys
import tomllib


def main():
    cfg = tomllib.load(open(sys.argv[1], "rb"))
    plan = json.load(open(sys.argv[2]))
    keys, sec = {}, None
    for line in open(sys.argv[3]):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            sec = line[1:-1]
            keys[sec] = {}
        else:
            k, t = line.split("\t")
            keys[sec][k] = t
    bad = []

    def walk(d, path):
        for k, v in d.items():
            p = f"{path}.{k}" if path else k
            if isinstance(v, dict):
                if p not in keys:
                    bad.append(f"[{p}] is no torchtitan section")
                walk(v, p)
            elif path not in keys or k not in keys[path]:
                bad.append(f"{p} is no torchtitan key")
            else:
                t = keys[path][k]
                ok = {"int": isinstance(v, int) and not isinstance(v, bool),
                      "bool": isinstance(v, bool), "str": isinstance(v, str),
                      "float": isinstance(v, (int, float))}
                base = t.split(" | ")[0]
                if base.startswith("Literal["):
                    ok_v = repr(v) in base
                elif base.startswith("list"):
                    ok_v = isinstance(v, list)
                else:
                    ok_v = ok.get(base, True)
                if not ok_v:
                    bad.append(f"{p} = {v!r} is not a {t}")

    walk(cfg, "")
    par = cfg.get("parallelism", {})
    cp = plan.get("options", {}).get("cp", 1)
    tp = plan["stages"][0]["devices"] // cp
    if (par.get("tensor_parallel_degree"), par.get("pipeline_parallel_degree"),
            par.get("data_parallel_shard_degree"),
            par.get("context_parallel_degree", 1)) != (tp, plan["pp"], plan["dp"], cp):
        bad.append("degrees differ from the plan")
    if cfg["training"]["global_batch_size"] != plan["global_batch"]:
        bad.append("global batch differs")
    # a rank's forward: one micro-batch (torchtitan accumulates
    # global / (local x dp) of them); with a pipeline the step's
    # micro-batches, pipeline_parallel_microbatch_size each
    local = cfg["training"]["local_batch_size"]
    if plan["pp"] > 1:
        if (local, par.get("pipeline_parallel_microbatch_size")) != (
                plan["global_batch"] // plan["dp"], plan["micro_batch"]):
            bad.append("the pipeline's batch is not the plan's")
    elif local != plan["micro_batch"]:
        bad.append(f"local_batch_size {local} runs as one forward; the plan's "
                   f"micro-batch is {plan['micro_batch']}")
    parts = par.get("module_fqns_per_model_part")
    if plan["pp"] > 1 and (not parts or len(parts) != len(plan["stages"])):
        bad.append("model parts do not match the plan's stages")
    for i, (part, st) in enumerate(zip(parts or [], plan["stages"])):
        want = [f"layers.{l}" for l in range(st["layer_begin"], st["layer_end"])]
        if [m for m in part if m.startswith("layers.")] != want:
            bad.append(f"model part {i} does not hold the layers of stage {i}")
    for b in bad:
        print(f"check_toml: {b}")
    if bad:
        sys.exit(1)
    print(f"check_toml: ok ({sum(len(v) for v in cfg.values() if isinstance(v, dict))} keys)")


if __name__ == "__main__":
    main()
