#!/usr/bin/env python3
"""One `strata export torchtitan` module against torchtitan's own code.

    check_titan.py EXPORT.py PLAN.json [--hf-config CONFIG.json] [--show-stubs]

(--hf-config: the model's Hugging Face config, whose rope_scaling the
plan's JSON does not state.)

torchtitan's source is TORCHTITAN_SRC (default
${XDG_CACHE_HOME:-$HOME/.cache}/strata-realclients/torchtitan, its commit
in .commit).  The export's strata_plan() is called as torchtitan's
ConfigManager calls a --config function; torchtitan's config dataclasses
(TrainingConfig, ParallelismConfig, CompileConfig) are built by the
export itself, their checks real, and ParallelDims.from_config builds the
mesh's degrees for the plan's world size (real _validate).  torchtitan
needs torch >= 2.x; what cannot be imported under an older torch is
stood in (printed with --show-stubs): every stand-in Config takes only
the field names the real class declares (read from its source), and a
model_registry stand-in takes only the flavors of the real registry.
The semantic fields are compared with the plan (strata show --json).

Exit 0: accepted, no mismatch; 1: a rejection or a mismatch; 77: no
torchtitan source (a skip, with the reason).
"""
import ast
import dataclasses
import json
import os
import sys
import types

PINNED = "b5bcd76c66d0acb1a08b176d9639425bc55e0b2a"
STUBS = []


def src_root():
    d = os.environ.get("TORCHTITAN_SRC") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
        "strata-realclients", "torchtitan")
    if not os.path.isfile(os.path.join(d, "torchtitan", "config", "configs.py")):
        print("skipped: no torchtitan source at %s (set TORCHTITAN_SRC; "
              "tests/realclients/README.md)" % d)
        sys.exit(77)
    return d


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def class_node(tree, dotted):
    """The ClassDef of a dotted name (Trainer.Config) in a module's AST."""
    body = tree.body
    node = None
    for part in dotted.split("."):
        node = next((n for n in body if isinstance(n, ast.ClassDef)
                     and n.name == part), None)
        if node is None:
            return None
        body = node.body
    return node


def fields_of(root, rel, dotted, bases=()):
    """Field names of a real dataclass: its annotated names, with those
    of the bases given as (file, dotted name)."""
    node = class_node(ast.parse(read(root, rel)), dotted)
    if node is None:
        raise SystemExit("%s: no class %s in torchtitan" % (rel, dotted))
    names = {n.target.id for n in node.body if isinstance(n, ast.AnnAssign)
             and isinstance(n.target, ast.Name)}
    for brel, bdotted in bases:
        names |= fields_of(root, brel, bdotted)
    return names


def registry_keys(root, rel, name):
    """The keys of a flavor registry (llama3_configs = {...})."""
    for n in ast.parse(read(root, rel)).body:
        if isinstance(n, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in n.targets):
            return {k.value: v.id for k, v in zip(n.value.keys, n.value.values)}
    raise SystemExit("%s: no %s" % (rel, name))


def flavor_consts(root, rel, fn):
    """A flavor function's sizes: its constant assignments (dim = 4096)
    and constant keywords (n_heads=32), the FFN size computed by the real
    compute_ffn_hidden_dim (models/common/feed_forward.py) where the
    flavor calls it."""
    ffn = real_function(root, "torchtitan/models/common/feed_forward.py",
                        "compute_ffn_hidden_dim", {})
    for n in ast.parse(read(root, rel)).body:
        if isinstance(n, ast.FunctionDef) and n.name == fn:
            out = {}
            for s in n.body:
                if (isinstance(s, ast.Assign) and len(s.targets) == 1 and
                        isinstance(s.targets[0], ast.Name) and
                        isinstance(s.value, ast.Constant)):
                    out[s.targets[0].id] = s.value.value
            for c in ast.walk(n):
                for k in getattr(c, "keywords", []) if isinstance(c, ast.Call) else []:
                    v = k.value
                    if isinstance(v, ast.Constant):
                        out.setdefault(k.arg, v.value)
                    elif (k.arg == "hidden_dim" and isinstance(v, ast.Call) and
                          getattr(v.func, "id", "") == "compute_ffn_hidden_dim"):
                        env = dict(out)
                        args = [eval(compile(ast.Expression(a), rel, "eval"), env)
                                for a in v.args]
                        kw = {x.arg: eval(compile(ast.Expression(x.value), rel,
                                                  "eval"), env)
                              for x in v.keywords}
                        out["hidden_dim"] = ffn(*args, **kw)
            return out
    raise SystemExit("%s: no %s" % (rel, fn))


def real_function(root, rel, name, env):
    """One function of a module that cannot be imported, exec'd from its
    source in env (its other names stood in there)."""
    src = read(root, rel)
    for n in ast.parse(src).body:
        if isinstance(n, ast.FunctionDef) and n.name == name:
            code = ast.get_source_segment(src, n)
            exec(compile("from __future__ import annotations\n" + code,
                         rel, "exec"), env)
            return env[name]
    raise SystemExit("%s: no function %s" % (rel, name))


class Recorder:
    """A stand-in Config: keyword arguments restricted to the real class's
    fields, kept as attributes (assigning another name raises, as the real
    slots dataclass does)."""
    real_fields = frozenset()
    kind = "?"

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)

    def __setattr__(self, k, v):
        if k not in self.real_fields:
            raise TypeError("%s has no field %r" % (self.kind, k))
        object.__setattr__(self, k, v)


def recorder(kind, names):
    return type(kind.replace(".", "_"), (Recorder,),
                {"real_fields": frozenset(names), "kind": kind})


def module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m


def stub(name, why, **attrs):
    STUBS.append("%s: %s" % (name, why))
    return module(name, **attrs)


def any_module(name, why):
    """A module whose every attribute is a placeholder."""
    m = stub(name, why)
    m.__getattr__ = lambda a: type(a, (), {})
    return m


def import_stubs(root):
    """What torchtitan's config and ParallelDims import and cannot here."""
    class Suppress:  # tyro.conf.Suppress: an Annotated marker
        pass
    reg = type("ConstructorRegistry", (), {
        "primitive_rule": lambda self, f: f})
    tyro = stub("tyro", "not installed (no PyPI): conf.Suppress, "
                "conf.subcommand (markers), constructors.ConstructorRegistry; "
                "tyro.cli (the CLI flags) is not run",
                conf=types.SimpleNamespace(Suppress=Suppress,
                                           subcommand=lambda *a, **k: None),
                constructors=types.SimpleNamespace(ConstructorRegistry=reg))
    sys.modules["tyro.conf"] = tyro.conf
    any_module("spmd_types", "not installed (torch >= 2.10 types); "
               "ParallelDims._validate does not use it")
    import torch
    import torch.distributed  # noqa: F401
    if "torch.distributed.device_mesh" not in sys.modules:
        try:
            import torch.distributed.device_mesh  # noqa: F401
        except ImportError:
            stub("torch.distributed.device_mesh", "torch %s has none; "
                 "no mesh is built" % torch.__version__,
                 DeviceMesh=type("DeviceMesh", (), {}),
                 init_device_mesh=lambda *a, **k: None)
    try:
        import torchtitan.tools.utils  # noqa: F401
    except Exception as e:
        sys.modules.pop("torchtitan.tools.utils", None)
        stub("torchtitan.tools.utils", "imports torch >= 2 (%s); "
             "device_type = 'cuda'" % type(e).__name__, device_type="cuda")


def model_stubs(root, model, notes):
    """The modules the export imports that build models or the trainer
    (torch >= 2): stand-ins keyed to the real source."""
    mrel = "torchtitan/models/%s/__init__.py" % model
    flavors = registry_keys(root, mrel, "%s_configs" % model)
    rope_rel = "torchtitan/models/common/rope.py"
    RopeConfig = recorder("RoPE.Config", fields_of(root, rope_rel, "RoPE.Config"))
    cfg_rel = "torchtitan/config/configurable.py"

    class Spec:
        def __init__(self, flavor, converters):
            self.name, self.flavor, self.converters = model, flavor, converters
            self.rope = RopeConfig()

        def traverse(self, cls, **kw):
            if cls is RopeConfig:  # one config stands for every layer's
                yield "model.layers.0.attention.rope", self.rope, None, "rope"

    def model_registry(flavor, **kw):
        params = real_params(root, mrel, "model_registry")
        bad = [k for k in kw if k not in params]
        if bad:
            raise TypeError("model_registry() got %s" % bad)
        if flavor not in flavors:
            raise KeyError("%s has no flavor %r (%s)" % (model, flavor,
                                                          sorted(flavors)))
        notes["flavor_fn"] = flavors[flavor]
        return Spec(flavor, kw.get("converters"))

    stub("torchtitan.models.%s" % model, "builds nn.Modules (torch >= 2): "
         "model_registry takes the real registry's flavors and parameters",
         model_registry=model_registry)
    stub("torchtitan.models.common.rope", "torch >= 2: RoPE.Config's real "
         "fields", RoPE=types.SimpleNamespace(Config=RopeConfig))
    stub("torchtitan.models.common.config_utils", "torch >= 2: "
         "decoder_vocab_size returns the flavor's vocab_size",
         decoder_vocab_size=lambda spec: notes.get("vocab"))
    qbase = [("torchtitan/components/quantization/__init__.py",
              "QuantizationConverter.Config"), (cfg_rel, "Configurable.Config")]
    q = {}
    for name, rel in (("Float8LinearConverter", "float8.py"),
                      ("MXFP8LinearConverter", "mx.py"),
                      ("NVFP4LinearConverter", "nvfp4.py")):
        q[name] = types.SimpleNamespace(Config=recorder(
            name + ".Config", fields_of(
                root, "torchtitan/components/quantization/" + rel,
                name + ".Config", qbase)))
    stub("torchtitan.components.quantization", "torchao, torch >= 2: the "
         "converters' Configs with their real fields", **q)
    ac_rel = "torchtitan/distributed/activation_checkpoint.py"
    acb = [(ac_rel, "ActivationCheckpointing.Config")]
    stub("torchtitan.distributed.activation_checkpoint", "torch._functorch "
         "(torch >= 2): FullAC/SelectiveAC Configs with their real fields",
         **{n: types.SimpleNamespace(Config=recorder(n + ".Config", fields_of(
             root, ac_rel, n + ".Config", acb))) for n in ("FullAC",
                                                           "SelectiveAC")})
    loss_rel = "torchtitan/components/loss.py"
    stub("torchtitan.components.loss", "torch >= 2: the Configs' real fields",
         **{n: types.SimpleNamespace(Config=recorder(n + ".Config", fields_of(
             root, loss_rel, n + ".Config", [(loss_rel, "BaseLoss.Config")])))
            for n in ("ChunkedLossWrapper", "CrossEntropyLoss")})
    data_rel = "torchtitan/components/data/__init__.py"
    stub("torchtitan.components.data", "grain, torch >= 2: stand-ins "
         "taking any field", GrainDataLoader=types.SimpleNamespace(
             Config=lambda **kw: kw),
         ConcatThenSplitPackingConfig=lambda **kw: kw)
    stub("torchtitan.hf_datasets.text_datasets", "datasets: DATASETS as "
         "names", DATASETS={"c4": "c4"})
    del data_rel
    tr_rel = "torchtitan/trainer.py"
    stub("torchtitan.trainer", "torch >= 2 (the whole trainer): "
         "Trainer.Config with the real fields; its __post_init__ restated "
         "(num_pp_microbatches > 0)",
         Trainer=types.SimpleNamespace(Config=recorder(
             "Trainer.Config", fields_of(root, tr_rel, "Trainer.Config"))))


def real_params(root, rel, fn):
    for n in ast.parse(read(root, rel)).body:
        if isinstance(n, ast.FunctionDef) and n.name == fn:
            a = n.args
            return {x.arg for x in a.args + a.kwonlyargs}
    raise SystemExit("%s: no %s" % (rel, fn))


def text_in(root, rel, *needles):
    """A restated rule's source text, or stop: the rule changed."""
    s = read(root, rel)
    for t in needles:
        if t not in s:
            raise SystemExit("%s no longer has %r: restate the check" % (rel, t))


def compare(name, got, want, out):
    ok = got == want
    out.append((name, got, want, ok))
    return ok


def load_export(path):
    """The export as ConfigManager._load_config loads a --module: imported,
    then its --config function called."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("strata_export", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, mod.strata_plan()


def trainer_batch(root, cfg, pd):
    """Trainer.__init__'s batch arithmetic (trainer.py, restated: the
    trainer builds the model first): gradient accumulation, the
    sequence/context divisibility, num_pp_microbatches > 0."""
    text_in(root, "torchtitan/trainer.py",
            "config.parallelism.num_pp_microbatches if parallel_dims.pp_enabled else 1",
            "num_tokens_per_train_step = num_tokens_per_dp_rank * dp_degree",
            "self.gradient_accumulation_steps = num_tokens_per_train_step // (",
            "parallel_dims.tp if config.parallelism.enable_sequence_parallel else 1",
            ") * (2 * parallel_dims.cp if parallel_dims.cp > 1 else 1)")
    t, par = cfg.training, cfg.parallelism
    if par.num_pp_microbatches <= 0:
        raise ValueError("parallelism.num_pp_microbatches must be greater than 0.")
    div = (pd.tp if par.enable_sequence_parallel else 1) * (
        2 * pd.cp if pd.cp > 1 else 1)
    if t.num_tokens_per_microbatch_per_dp_rank % div:
        raise ValueError("tokens per pipeline microbatch not divisible by %d" % div)
    nmb = par.num_pp_microbatches if pd.pp_enabled else 1
    per_rank = t.num_tokens_per_microbatch_per_dp_rank * nmb
    dp = pd.dp_replicate * pd.dp_shard if pd.dp_enabled else 1
    step = t.num_tokens_per_train_step
    if step < 0:
        step = per_rank * dp
    if step % (per_rank * dp):
        raise ValueError("num_tokens_per_train_step not divisible")
    return nmb, step // (per_rank * dp), dp


def pipeline_ranks(root, par, pp):
    """Each model part's pp rank by pipeline_parallel.py's own
    _get_pp_rank_to_stage_indices_mapping (exec'd from its source; the
    schedule classes are torch's, named here)."""
    text_in(root, "torchtitan/distributed/pipeline_parallel.py",
            "schedule_class = get_schedule_class(parallelism.pipeline_parallel_schedule)",
            "is_single_stage_schedule = issubclass(schedule_class, PipelineScheduleSingle)")
    single = type("PipelineScheduleSingle", (), {})
    multi = type("PipelineScheduleMulti", (), {})
    names = {"1F1B": single, "GPipe": single, "Interleaved1F1B": multi,
             "LoopedBFS": multi, "InterleavedZeroBubble": multi,
             "ZBVZeroBubble": type("ScheduleZBVZeroBubble", (multi,), {}),
             "DualPipeV": type("ScheduleDualPipeV", (multi,), {})}
    STUBS.append("torch.distributed.pipelining.get_schedule_class: torch "
                 ">= 2.4; torch's schedule names (1F1B, GPipe single-stage; "
                 "Interleaved1F1B, LoopedBFS, InterleavedZeroBubble, "
                 "ZBVZeroBubble, DualPipeV multi-stage)")
    env = {"get_schedule_class": lambda n: names[n],
           "ScheduleZBVZeroBubble": names["ZBVZeroBubble"],
           "ScheduleDualPipeV": names["DualPipeV"]}
    f = real_function(root, "torchtitan/distributed/pipeline_parallel.py",
                      "_get_pp_rank_to_stage_indices_mapping", env)
    parts = par.module_fqns_per_model_part
    n = len(parts)
    per = n // pp
    cls = names[par.pipeline_parallel_schedule]
    if issubclass(cls, single) and per != 1 or not issubclass(
            cls, single) and per < 2:
        raise ValueError("%s with %d stages per rank" % (
            par.pipeline_parallel_schedule, per))
    owner = {}
    for r in range(pp):
        for s in f(r, pp, par.pipeline_parallel_schedule, n):
            owner[s] = r
    return owner


def check(root, export, plan, hf=None):
    notes = {"vocab": plan["architecture"]["vocab"]}
    if hf:
        with open(hf) as f:
            notes["hf_rope"] = json.load(f).get("rope_scaling")
    import_stubs(root)
    # Qwen3-MoE is built as a LLaMA with q/k norms (import/hf.c): a plan
    # with experts is torchtitan's qwen3 MoE (its flavor's sizes compared)
    family = "qwen3" if plan["architecture"].get("experts") else {
        "llama": "llama3", "qwen3": "qwen3"}[plan["architecture"]["family"]]
    model_stubs(root, family, notes)
    from torchtitan.config import configs
    from torchtitan.distributed.parallel_dims import ParallelDims
    mod, cfg = load_export(export)
    for k, cls in (("training", configs.TrainingConfig),
                   ("parallelism", configs.ParallelismConfig),
                   ("compile", configs.CompileConfig)):
        if not isinstance(getattr(cfg, k), cls):
            raise TypeError("%s is not torchtitan's %s" % (k, cls.__name__))
    pd = ParallelDims.from_config(cfg.parallelism, plan["devices"])
    nmb, accum, dp = trainer_batch(root, cfg, pd)
    par, t, o, a = cfg.parallelism, cfg.training, plan["options"], plan["architecture"]
    out = []
    compare("world", pd.dp_replicate * pd.dp_shard * pd.cp * pd.tp * pd.pp,
            plan["devices"], out)
    compare("dp (replicate x shard)", dp, plan["dp"], out)
    compare("fsdp", pd.dp_shard > 1, o["zero_stage"] > 0 and plan["dp"] > 1, out)
    want_rs = ("default" if plan["pp"] > 1 else
               "always" if o["zero_stage"] >= 3 else "never")
    compare("fsdp_reshard_after_forward", par.fsdp_reshard_after_forward,
            want_rs, out)
    compare("tp", pd.tp, plan["tp"], out)
    compare("async tp", cfg.compile.enable_async_tensor_parallel,
            bool(o["tp_comm_overlap"]) and plan["tp"] > 1, out)
    compare("pp", pd.pp, plan["pp"], out)
    compare("cp", pd.cp, o.get("cp", 1), out)
    moe = bool(a.get("experts"))
    compare("ep", pd.ep, plan.get("ep", 1) if moe else 1, out)
    if moe:
        # ParallelDims.build_mesh's expert FSDP degree (restated: it builds
        # the mesh), against the plan's expert data parallel size
        text_in(root, "torchtitan/distributed/parallel_dims.py",
                "efsdp = fsdp * self.tp // self.ep")
        edp = 1 + max((r.get("edp", 0) for r in
                       plan.get("device_map", {}).get("ranks", [])), default=0)
        compare("expert FSDP (efsdp)", pd.dp_shard * pd.cp * pd.tp // pd.ep,
                edp, out)
        compare("expert tensor parallel (none in torchtitan)", 1,
                plan.get("etp", 1), out)
    mb = t.num_tokens_per_microbatch_per_dp_rank // a["seq_len"]
    compare("micro-batch (sequences a forward)", mb, plan["micro_batch"], out)
    compare("context length", t.max_context_length, a["seq_len"], out)
    compare("global batch", mb * nmb * accum * dp, plan["global_batch"], out)
    compare("micro-batches a step", nmb * accum, plan["n_micro"], out)
    if plan["pp"] > 1:
        compare("schedule", par.pipeline_parallel_schedule,
                o.get("pp_schedule") or
                ("Interleaved1F1B" if o["vpp"] > 1 else "1F1B"), out)
        owner = pipeline_ranks(root, par, pd.pp)
        got = []
        for s, names in enumerate(par.module_fqns_per_model_part):
            ls = [int(n.split(".")[1]) for n in names if n.startswith("layers.")]
            got.append((owner[s], min(ls) if ls else None,
                        max(ls) + 1 if ls else None,
                        "tok_embeddings" in names, "lm_head" in names and
                        "norm" in names))
        st = plan["stages"]
        want = [(x["rank"], x["layer_begin"] if x["layer_end"] > x["layer_begin"]
                 else None, x["layer_end"] if x["layer_end"] > x["layer_begin"]
                 else None, i == 0, i == len(st) - 1) for i, x in enumerate(st)]
        compare("model parts (rank, layers, embedding, norm+head)", got, want, out)
        gen = real_function(root, "torchtitan/distributed/pipeline_parallel.py",
                            "_generate_llm_fqn_per_model_part", {})
        known = {n for part in gen(1, a["layers"]) for n in part}
        compare("module names torchtitan's model has",
                sorted({n for p in par.module_fqns_per_model_part for n in p} - known),
                [], out)
    spec = cfg.model_spec
    fl = flavor_consts(root, "torchtitan/models/%s/__init__.py" % family,
                       notes["flavor_fn"])
    if moe:
        compare("flavor %s %s (layers, hidden, heads, kv heads, head size, "
                "experts, top-k, expert FFN, vocab)" % (spec.name, spec.flavor),
                [fl.get("n_layers"), fl.get("dim"), fl.get("n_heads"),
                 fl.get("n_kv_heads"), fl.get("head_dim"),
                 fl.get("num_experts"), fl.get("top_k"),
                 fl.get("moe_hidden_dim"), fl.get("vocab_size")],
                [a["layers"], a["hidden"], a["heads"], a["kv_heads"],
                 a.get("head_dim"), a["experts"], a["topk"], a["moe_ffn"],
                 a["vocab"]], out)
        compare("shared experts, dense layers (none in the flavor)",
                [a.get("shared_ffn", 0), a["layers"] - a.get("moe_layers", 0)],
                [0, 0], out)
    else:
        compare("flavor %s %s (layers, hidden, heads, kv heads, FFN, vocab)" % (
            spec.name, spec.flavor),
            [fl.get("n_layers"), fl.get("dim"), fl.get("n_heads"),
             fl.get("n_kv_heads", fl.get("n_heads")), fl.get("hidden_dim"),
             fl.get("vocab_size")],
            [a["layers"], a["hidden"], a["heads"], a["kv_heads"], a["ffn"],
             a["vocab"]], out)
    conv = [type(c).__name__.replace("_Config", "") for c in spec.converters or []]
    want_conv = {"mxfp8": ["MXFP8LinearConverter"],
                 "nvfp4": ["NVFP4LinearConverter"]}.get(o.get("gemm_recipe"), [])
    compare("low precision (converters)", conv, want_conv, out)
    ac = type(cfg.activation_checkpoint).__name__.replace("_Config", "") \
        if cfg.activation_checkpoint is not None else "none"
    compare("activation checkpointing", ac, {"full": "FullAC", "selective":
                                            "SelectiveAC"}.get(o["recompute"], "none"), out)
    rope = spec.rope
    if "rope_theta" in a:
        compare("RoPE base", getattr(rope, "theta", None), a["rope_theta"], out)
    known = "rope_scaling" in a or "hf_rope" in notes  # null: none
    rs = a["rope_scaling"] if "rope_scaling" in a else notes.get("hf_rope")
    if not known:
        print("info RoPE scaling: %s (neither the plan's JSON nor "
              "--hf-config states it)" % getattr(rope, "scaling", None))
    else:
        kind = rs and (rs.get("rope_type") or rs.get("type"))
        compare("RoPE scaling", getattr(rope, "scaling", None),
                "llama" if kind == "llama3" else kind or "none", out)
        if kind == "llama3":
            # the plan's JSON (show --json's architecture) names them
            # factor, low, high, original; a Hugging Face config as below
            for f, hf, mine in (("scaling_factor", "factor", "factor"),
                                ("low_freq_factor", "low_freq_factor", "low"),
                                ("high_freq_factor", "high_freq_factor",
                                 "high"),
                                ("original_max_position_embeddings",
                                 "original_max_position_embeddings",
                                 "original")):
                compare("RoPE " + f, getattr(rope, f, None),
                        rs.get(mine, rs.get(hf)), out)
    return out


def main():
    argv = sys.argv[1:]
    if argv == ["--probe"]:  # run.sh: is the source there?
        src_root()
        return 0
    hf = None
    if "--hf-config" in argv:
        i = argv.index("--hf-config")
        hf = argv[i + 1]
        del argv[i:i + 2]
    args = [x for x in argv if not x.startswith("--")]
    if len(args) != 2:
        sys.exit("usage: check_titan.py EXPORT.py PLAN.json [--hf-config F] [--show-stubs]")
    root = src_root()
    sys.path.insert(0, root)
    commit = ""
    if os.path.exists(os.path.join(root, ".commit")):
        commit = read(root, ".commit").strip()
    if commit != PINNED:
        print("note: torchtitan at %s, checked at %s" % (commit[:12] or "?",
                                                         PINNED[:12]))
    with open(args[1]) as f:
        plan = json.load(f)
    try:
        out = check(root, args[0], plan, hf)
    except Exception as e:  # torchtitan's rejection
        print("REJECTED: %s: %s" % (type(e).__name__, e))
        if "--show-stubs" in sys.argv:
            print("\n".join("stub " + s for s in STUBS))
        return 1
    bad = 0
    for name, got, want, ok in out:
        print("%s %s: %s%s" % ("ok  " if ok else "MISMATCH", name, got,
                               "" if ok else " (plan: %s)" % (want,)))
        bad += not ok
    if "--show-stubs" in sys.argv:
        print("\n".join("stub " + s for s in STUBS))
    print("accepted by torchtitan %s; %d semantic fields, %d mismatches" % (
        commit[:8] or "?", len(out), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
