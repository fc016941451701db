#!/usr/bin/env python3
"""Unroll the repeated blocks of a Strata trace: write every layer as its
own block (repeat 1) with its own tensor and op names, as an importer that
does not look for repetition would.  Used to measure loading and planning
of big graphs (docs/benchmarks.md).

Usage: unroll_trace.py IN.json OUT.json
"""
import json
import sys


def unroll(t):
    tensors = {x["id"]: x for x in t["tensors"]}
    ops, blocks, out_tensors = [], [], []
    op_index = {o["id"]: i for i, o in enumerate(t["ops"])}
    block_ops = set()
    for b in t["blocks"]:
        i0, i1 = op_index[b["ops"][0]], op_index[b["ops"][-1]]
        block_ops.update(range(i0, i1 + 1))
    first_block = min(block_ops) if block_ops else len(t["ops"])
    # prologue as is
    for o in t["ops"][:first_block]:
        ops.append(o)
    rename = {}
    layer = 0
    prev_out = None
    for b in t["blocks"]:
        i0, i1 = op_index[b["ops"][0]], op_index[b["ops"][-1]]
        body = t["ops"][i0:i1 + 1]
        inside = set()
        for o in body:
            inside.update(o["outputs"])
            for x in o["inputs"]:
                if tensors[x]["kind"] == "param":
                    inside.add(x)
        stream_in = b["input"]
        for r in range(b["repeat"]):
            names = {x: "L%d.%s" % (layer, x) for x in inside}
            names[stream_in] = rename.get(stream_in, stream_in) if r == 0 else prev_out
            for x in inside:
                nt = dict(tensors[x])
                nt["id"] = names[x]
                out_tensors.append(nt)
            for o in body:
                no = dict(o)
                no["id"] = "L%d.%s" % (layer, o["id"])
                no["inputs"] = [names.get(x, rename.get(x, x)) for x in o["inputs"]]
                no["outputs"] = [names[x] for x in o["outputs"]]
                no.pop("layer", None)
                ops.append(no)
            blocks.append({"id": "layer%d" % layer,
                           "ops": [no_id(body[0], layer), no_id(body[-1], layer)],
                           "repeat": 1, "input": names[stream_in],
                           "output": names[b["output"]]})
            prev_out = names[b["output"]]
            layer += 1
        rename[b["output"]] = prev_out
    for o in t["ops"][i1 + 1:] if t["blocks"] else []:
        no = dict(o)
        no["inputs"] = [rename.get(x, x) for x in o["inputs"]]
        no.pop("layer", None)
        ops.append(no)
    block_made = set()
    for b in t["blocks"]:
        i0, i1 = op_index[b["ops"][0]], op_index[b["ops"][-1]]
        for o in t["ops"][i0:i1 + 1]:
            block_made.update(o["outputs"])
            block_made.update(x for x in o["inputs"] if tensors[x]["kind"] == "param")
    base = [x for x in t["tensors"] if x["id"] not in block_made]
    u = dict(t)
    u["tensors"] = base + out_tensors
    u["ops"] = ops
    u["blocks"] = blocks
    return u


def no_id(o, layer):
    return "L%d.%s" % (layer, o["id"])


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        t = json.load(f)
    with open(sys.argv[2], "w") as f:
        json.dump(unroll(t), f, indent=0)
