#!/usr/bin/env python3
"""Check a `strata export torch` module against its plan.

    check_torch.py MODULE.py PLAN.json API.txt

Imports the module with the installed torch and builds what it defines:
the device mesh, every block's parallelize_module plan and the top-level
plan; each style must be the one the plan's layout asks for (restated here
from the operator's output placement: a pending sum is row-wise, a shard of
the last dimension column-wise, a shard of another dimension
sequence-parallel over it, a whole tensor replicated).

Where the installed torch lacks the DTensor API (Debian 12's torch 1.13),
the names of API.txt get stand-ins with exactly the signatures listed
there: every call the module makes is bound against them (a wrong keyword
fails as it would in torch) and recorded.  Then a model with the module
names the plan uses is built from torch.nn pieces, split per pipeline
chunk, parallelized and scheduled, and the recorded calls are checked:
three parallelize_module calls per block (input preparation, the block's
plan, output preparation) with the right plan, FSDP per block and the root
with the plan's ZeRO resharding, recompute wrappers, one PipelineStage per
chunk of the rank and the plan's schedule.  With a torch that has the API,
the mesh comes from a fake process group of the plan's world size.
"""

import importlib
import importlib.util
import inspect
import json
import sys
import types

CALLS = []


def fail(msg):
    print(f"check_torch: FAIL {msg}")
    sys.exit(1)


# ---------------------------------------------------------------- stand-ins

class FakeMesh:
    def __init__(self, shape, names):
        self.shape, self.names = tuple(shape), tuple(names or ())

    def __getitem__(self, name):
        i = self.names.index(name)
        return FakeMesh((self.shape[i],), (name,))

    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def get_local_rank(self):
        return 0

    def get_group(self):
        return ("group", self.names)


def _bind(name, sig, args, kwargs):
    try:
        return sig.bind(*args, **kwargs)
    except TypeError as e:
        fail(f"{name}{args, kwargs}: {e} (signature {sig})")


def _signature(params):
    ns = {}
    exec(f"def f({params}): pass", ns)
    return inspect.signature(ns["f"])


def stand_in(module, name, kind, params, attrs):
    sig = _signature(params)
    if kind == "function":
        def fn(*args, **kwargs):
            b = _bind(name, sig, args, kwargs)
            CALLS.append((name, dict(b.arguments)))
            if name == "init_device_mesh":
                return FakeMesh(b.arguments["mesh_shape"], b.arguments.get("mesh_dim_names"))
            if name in ("checkpoint_wrapper", "distribute_module"):
                return b.arguments["module"]
            return None
        fn.__name__ = name
        return fn

    def init(self, *args, **kwargs):
        self.args = dict(_bind(name, sig, args, kwargs).arguments)
        CALLS.append((name, self.args))

    def rep(self):
        return f"{name}({', '.join(f'{k}={v!r}' for k, v in self.args.items())})"

    def eq(self, other):
        return type(self) is type(other) and self.args == other.args

    cls = type(name, (), {"__init__": init, "__repr__": rep, "__eq__": eq,
                          "__hash__": lambda self: hash(name)})
    for a in attrs:
        setattr(cls, a, a)
    return cls


def _module(path):
    try:
        return importlib.import_module(path)
    except Exception:
        parent, _, leaf = path.rpartition(".")
        m = types.ModuleType(path)
        sys.modules[path] = m
        if parent:
            setattr(_module(parent), leaf, m)
        return m


def install_stand_ins(api):
    for line in open(api):
        if not line.strip() or line.startswith("#"):
            continue
        f = line.rstrip("\n").split("\t")
        mod, name, kind, params = f[:4]
        attrs = f[4].split() if len(f) > 4 else []
        setattr(_module(mod), name, stand_in(mod, name, kind, params, attrs))


def has_real_api():
    try:
        from torch.distributed.tensor.parallel import ColwiseParallel  # noqa: F401
        from torch.distributed.fsdp import fully_shard  # noqa: F401
        from torch.distributed.pipelining import PipelineStage  # noqa: F401
        return True
    except Exception:
        return False


# ---------------------------------------------------------------- checks

def expected_style(placement):
    if placement.startswith("[P"):
        return "RowwiseParallel"
    if placement.startswith("[S("):
        d = int(placement[3:placement.index(")")])
        return "ColwiseParallel" if d >= 2 else "SequenceParallel"
    return "Replicated"


def check_plans(mod, plan):
    """Each style of each block plan and of the top plan, from the plan's ops."""
    if len(mod.STAGES) != len(plan["stages"]):
        fail(f"{len(mod.STAGES)} STAGES, the plan has {len(plan['stages'])} stages")
    n = 0
    for k, (st, row) in enumerate(zip(plan["stages"], mod.STAGES)):
        lo, hi, rank, fn, _ = row
        if (lo, hi, rank) != (st["layer_begin"], st["layer_end"], st["rank"]):
            fail(f"STAGES[{k}] = {(lo, hi, rank)}, plan {st['layer_begin'], st['layer_end'], st['rank']}")
        styles = fn()
        want = {op["name"]: expected_style(op["placement"])
                for op in st["ops"] if op["layer"] >= 0}
        got_ops = {}
        src = inspect.getsource(fn)
        for line in src.splitlines():
            if "#" in line and '": ' in line:
                path = line.split('"')[1]
                opname = line.rsplit("# ", 1)[1].split(":")[0]
                got_ops[path] = opname
        for path, style in styles.items():
            cls = type(style).__name__
            op = got_ops.get(path)
            if op is None or want.get(op) != cls:
                fail(f"stage {k}: {path} ({op}) is {cls}, the plan asks {want.get(op)}")
            n += 1
    return n


def tiny_model(mod, torch):
    """A torch.nn model with the module names the generated plans use."""
    nn = torch.nn
    block_paths = set()
    for row in mod.STAGES:
        block_paths.update(row[3]().keys())
    top = set(mod.top_plan().keys()) | set(mod.PROLOGUE) | set(mod.EPILOGUE)

    def put(root, path, leaf):
        parts = path.split(".")
        m = root
        for p in parts[:-1]:
            if not hasattr(m, p):
                m.add_module(p, nn.Module())
            m = getattr(m, p)
        m.add_module(parts[-1], leaf)

    def block():
        b = nn.Module()
        for p in sorted(block_paths):
            put(b, p, nn.Linear(4, 4))
        return b

    root = nn.Module()
    put(root, mod.BLOCKS, nn.ModuleList([block() for _ in range(mod.LAYERS)]))
    for p in sorted(top):
        put(root, p, nn.Linear(4, 4))
    return root


def count(name):
    return sum(1 for c in CALLS if c[0] == name)


def check_run(mod, plan, torch):
    """Split, parallelize and schedule with the stand-ins; check the calls."""
    if not mod.EPILOGUE:
        fail("EPILOGUE is empty: every chunk would keep the final norm and head")
    mesh = mod.build_mesh("cpu")
    model = tiny_model(mod, torch)
    nblocks, ncalls = 0, 0
    for k, row in enumerate(mod.STAGES):
        chunk = mod.split_model(model, k)
        blocks = mod._get(chunk, mod.BLOCKS)
        if len(blocks) != row[1] - row[0]:
            fail(f"chunk {k} holds {len(blocks)} blocks, not {row[1] - row[0]}")
        for p in mod.PROLOGUE:
            if (mod._get(chunk, p) is None) != (k > 0):
                fail(f"chunk {k}: {p} kept/dropped wrongly")
        # the final norm and head: on the last chunk only, whatever it holds
        for p in mod.EPILOGUE:
            if (mod._get(chunk, p) is None) != (k + 1 < len(mod.STAGES)):
                fail(f"chunk {k}: {p} kept/dropped wrongly")
        del CALLS[:]
        mod.parallelize(chunk, mesh)
        tp = plan["stages"][0]["devices"]
        n = row[1] - row[0]
        if tp > 1:
            plans = [c for c in CALLS if c[0] == "parallelize_module"]
            per_block = [c for c in plans if isinstance(c[1]["parallelize_plan"], dict)
                         and c[1]["module"] is not chunk]
            if len(per_block) != n:
                fail(f"chunk {k}: {len(per_block)} block plans applied, {n} blocks")
            if count("PrepareModuleInput") != n or count("PrepareModuleOutput") != n:
                fail(f"chunk {k}: input/output preparation not once per block")
            for c in per_block:
                if c[1]["parallelize_plan"] != row[3]():
                    fail(f"chunk {k}: a block got another plan")
        rec = plan["options"]["recompute"]
        if count("checkpoint_wrapper") != (0 if rec == "none" else n):
            fail(f"chunk {k}: {count('checkpoint_wrapper')} recompute wrappers, recompute {rec}")
        fs = [c for c in CALLS if c[0] == "fully_shard"]
        if plan["dp"] > 1:
            if len(fs) != n + 1:
                fail(f"chunk {k}: fully_shard {len(fs)} times, want {n + 1}")
            z3 = plan["options"]["zero_stage"] >= 3
            if any(bool(c[1]["reshard_after_forward"]) != z3 for c in fs):
                fail(f"chunk {k}: reshard_after_forward is not ZeRO-3's ({z3})")
        elif fs:
            fail("fully_shard without data parallelism")
        nblocks += n
        ncalls += len(CALLS)
    if nblocks != plan["architecture"]["layers"]:
        fail(f"chunks hold {nblocks} layers, the model {plan['architecture']['layers']}")
    if plan["pp"] > 1:
        del CALLS[:]
        sched = mod.pipeline_schedule(model, mesh, "cpu", loss_fn=None)
        vpp = plan["options"]["vpp"] or 1
        if count("PipelineStage") != vpp:
            fail(f"{count('PipelineStage')} pipeline stages on rank 0, want {vpp}")
        want = "ScheduleInterleaved1F1B" if vpp > 1 else "Schedule1F1B"
        if type(sched).__name__ != want or sched.args["n_microbatches"] != plan["n_micro"]:
            fail(f"schedule {sched!r}, want {want} over {plan['n_micro']} micro-batches")
    return ncalls


def main():
    path, plan_json, api = sys.argv[1:4]
    plan = json.load(open(plan_json))
    import torch
    real = has_real_api()
    if not real:
        install_stand_ins(api)
    else:
        import torch.distributed as dist
        from torch.testing._internal.distributed.fake_pg import FakeStore
        dist.init_process_group("fake", store=FakeStore(), rank=0,
                                world_size=plan["devices"])
    spec = importlib.util.spec_from_file_location("strata_plan", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    tp = plan["stages"][0]["devices"]
    if (mod.PP, mod.DP, mod.TP) != (plan["pp"], plan["dp"], tp):
        fail(f"mesh degrees {(mod.PP, mod.DP, mod.TP)}, plan {(plan['pp'], plan['dp'], tp)}")
    if not mod.EPILOGUE:
        fail("EPILOGUE is empty: every chunk would keep the final norm and head")
    mesh = mod.build_mesh("cpu")
    shape = tuple(mesh.shape) if hasattr(mesh, "shape") else tuple(mesh.mesh.shape)
    if shape != (plan["pp"], plan["dp"], tp):
        fail(f"mesh {shape}")
    n = check_plans(mod, plan)
    top = mod.top_plan()
    msg = f"torch {torch.__version__} ({'its DTensor API' if real else 'stand-ins from ' + api})"
    if not real:
        calls = check_run(mod, plan, torch)
        msg += f", {calls} calls bound and checked"
    print(f"check_torch: OK {path}: mesh {shape}, {n} block styles, {len(top)} top-level, {msg}")


if __name__ == "__main__":
    main()
