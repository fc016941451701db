/*
 * export_torch.c - a plan as a Python module for PyTorch's DTensor tensor
 * parallelism (`strata export torch`): the device mesh (pp, dp, tp), per
 * transformer block a parallelize_module plan made from the plan's own
 * per-operator layouts, the top-level modules' plan, the pipeline split
 * with its schedule, recompute and the FSDP wrapping.  Free-mode plans,
 * whose ILP gives every operator its own layout, can run this way where
 * Megatron-LM and DeepSpeed cannot.
 *
 * A layout becomes a style by the operator's output placement (the
 * plan's "[S(d)]", "[R]", "[P]" on the stage's one-axis mesh): partial
 * output is row-wise (the method's "column" split of W), an output sharded
 * on its last dimension column-wise, one sharded on the sequence (or
 * batch) dimension sequence-parallel over that dimension, a replicated one
 * keeps its parameters whole.  The input layout a style declares is the
 * placement of the operator before it in the plan's order, the output of
 * a row-wise one that of the operator after it, so DTensor performs the
 * plan's resharding on each edge.  Each block takes and returns local
 * tensors in the residual stream's placement (input/output preparation),
 * so pipeline stages exchange plain tensors.
 *
 * Module names come from a name map: the family's (nanoGPT's GPT, Hugging
 * Face's LLaMA and BERT) or the user's JSON ({"blocks": path, "modules":
 * {op: path or [paths]}}); paths of layer operators are relative to a
 * block.  Names are checked to be dotted Python identifiers, so nothing of
 * the map can escape into the generated code.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "core/text.h"
#include "merge/merge_int.h"

#define REFUSE(...)                                                            \
  strata_error(STRATA_EUNSUPPORTED, "torch export: " __VA_ARGS__)

static const struct {
  const char *family, *map;
} default_maps[] = {
    {"gpt",
     "{\"blocks\": \"transformer.h\", \"modules\": {"
     "\"embed\": \"transformer.wte\", \"ln1\": \"ln_1\", "
     "\"qkv\": \"attn.c_attn\", \"proj\": \"attn.c_proj\", "
     "\"ln2\": \"ln_2\", \"fc1\": \"mlp.c_fc\", \"fc2\": \"mlp.c_proj\", "
     "\"final_norm\": \"transformer.ln_f\", \"head\": \"lm_head\"}}"},
    {"llama",
     "{\"blocks\": \"model.layers\", \"modules\": {"
     "\"embed\": \"model.embed_tokens\", \"norm1\": \"input_layernorm\", "
     "\"qkv\": [\"self_attn.q_proj\", \"self_attn.k_proj\", "
     "\"self_attn.v_proj\"], \"proj\": \"self_attn.o_proj\", "
     "\"norm2\": \"post_attention_layernorm\", "
     "\"fc1\": [\"mlp.gate_proj\", \"mlp.up_proj\"], "
     "\"fc2\": \"mlp.down_proj\", \"final_norm\": \"model.norm\", "
     "\"head\": \"lm_head\"}}"},
    {"bert", "{\"blocks\": \"bert.encoder.layer\", \"modules\": {"
             "\"embed\": \"bert.embeddings.word_embeddings\", "
             "\"embed_norm\": \"bert.embeddings.LayerNorm\", "
             "\"qkv\": [\"attention.self.query\", \"attention.self.key\", "
             "\"attention.self.value\"], \"proj\": \"attention.output.dense\", "
             "\"ln1\": \"attention.output.LayerNorm\", "
             "\"fc1\": \"intermediate.dense\", \"fc2\": \"output.dense\", "
             "\"ln2\": \"output.LayerNorm\", "
             "\"mlm_dense\": \"cls.predictions.transform.dense\", "
             "\"mlm_norm\": \"cls.predictions.transform.LayerNorm\", "
             "\"head\": \"cls.predictions.decoder\"}}"},
};

static int valid_path(const char *s) {
  int start = 1;
  if (!s || !*s) return 0;
  for (; *s; s++) {
    if (*s == '.') {
      if (start) return 0;
      start = 1;
    } else if (isalpha((unsigned char)*s) || *s == '_' ||
               (!start && isdigit((unsigned char)*s))) {
      start = 0;
    } else if (isdigit((unsigned char)*s)) {
      start = 0; /* a ModuleList index: "layers.0" */
    } else {
      return 0;
    }
  }
  return !start;
}

/* Parse and check a name map; *blocks points into it. */
static int load_map(const strata_plan_t *p, const char *text, cJSON **map,
                    const char **blocks) {
  const cJSON *mods, *x;
  const char *where = text ? "name map" : "the family's name map";
  if (!text)
    for (size_t i = 0; i < sizeof default_maps / sizeof default_maps[0]; i++)
      if (!strcmp(default_maps[i].family, p->family))
        text = default_maps[i].map;
  char fam[192];
  if (!text)
    return REFUSE("no module names for %s; give a name map (--name-map, "
                  "docs/exports.md)",
                  st__family_said(p, fam, sizeof fam));
  int rc = st__json_parse(text, strlen(text), where, map);
  if (!rc) rc = st__json_str(*map, "blocks", where, 1, blocks);
  if (!rc) rc = st__json_object(*map, "modules", where, 1, &mods);
  if (!rc && !valid_path(*blocks))
    rc = strata_error(STRATA_EBADINPUT,
                      "%s: blocks '%s' is not a dotted "
                      "module path",
                      where, *blocks);
  for (x = rc ? NULL : mods->child; x && !rc; x = x->next) {
    const cJSON *n = cJSON_IsArray(x) ? x->child : x;
    if (!n && cJSON_IsArray(x)) rc = -1;
    for (; n && !rc; n = cJSON_IsArray(x) ? n->next : NULL)
      if (!cJSON_IsString(n) || !valid_path(n->valuestring)) rc = -1;
    if (rc)
      rc = strata_error(STRATA_EBADINPUT,
                        "%s: modules.%s wants a dotted "
                        "module path or a list of them",
                        where, x->string);
  }
  if (rc) {
    cJSON_Delete(*map);
    *map = NULL;
  }
  return rc;
}

/* ---- checks ---- */

int st__torch_check(const strata_plan_t *p) {
  if (!p || p->n_stages < 1 || !p->stages)
    return strata_error(STRATA_EINVAL, "torch export: a plan with no stage");
  int d0 = st__stage_devices(&p->stages[0]);
  int vpp = p->vpp > 1 ? p->vpp : 1;
  if (p->n_stages != p->pp * vpp)
    return REFUSE("the plan has %d stages but pp %d x vpp %d", p->n_stages,
                  p->pp, vpp);
  for (int s = 0; s < p->n_stages; s++) {
    const strata_plan_stage_t *st = &p->stages[s];
    if (st__stage_devices(st) != d0)
      return REFUSE("stage %d runs on %d devices and stage 0 on %d: one "
                    "device mesh (pp, dp, tp) gives every stage the same "
                    "tensor-parallel size",
                    s, st__stage_devices(st), d0);
    if (st->nodes > 1)
      return REFUSE("stage %d spans %d nodes: its layouts use two mesh axes "
                    "and DTensor's parallel styles take one",
                    s, st->nodes);
    if (!st->result) return REFUSE("stage %d has no operator layouts", s);
  }
  if ((long long)d0 * p->pp > p->devices ||
      p->devices != (long long)d0 * p->pp * p->dp)
    return REFUSE("world size %d is not %d x pp %d x dp %d", p->devices, d0,
                  p->pp, p->dp);
  /* the rulebook's (rules/rules.c): what DTensor's parallel styles
   * express (no cp, experts, FP8, MTP), the batch */
  return st__rules_refuse(p, STRATA_RULES_DTENSOR, "torch");
}

/* ---- placements and styles ---- */

/* "[S(2)]" -> "Shard(2)"; "[R]" -> "Replicate()"; "[P]" -> "Partial()". */
static const char *py_placement(const char *pl, char *buf, size_t n) {
  int d;
  if (pl && sscanf(pl, "[S(%d)]", &d) == 1) {
    snprintf(buf, n, "Shard(%d)", d);
    return buf;
  }
  if (pl && !strncmp(pl, "[P", 2)) return "Partial()";
  return "Replicate()";
}

/* The placement a consumer gets: a pending sum is reduced to whole. */
static const char *py_input(const char *pl, char *buf, size_t n) {
  const char *s = py_placement(pl, buf, n);
  return strcmp(s, "Partial()") ? s : "Replicate()";
}

static void style(strata_buf_t *b, const strata_op_choice_t *ops, int n, int i,
                  int first_input) {
  char a[32], c[32];
  const char *pl = ops[i].placement ? ops[i].placement : "[R]";
  const char *in = first_input ? "Replicate()"
                   : i > 0     ? py_input(ops[i - 1].placement, a, sizeof a)
                               : "Replicate()";
  int d;
  if (!strncmp(pl, "[P", 2)) {
    const char *out =
        i + 1 < n ? py_input(ops[i + 1].placement, c, sizeof c) : "Replicate()";
    strata_buf_printf(b,
                      "RowwiseParallel(input_layouts=%s, output_layouts=%s, "
                      "use_local_output=False)",
                      first_input ? "Replicate()" : "Shard(-1)", out);
  } else if (sscanf(pl, "[S(%d)]", &d) == 1 && d >= 2) {
    strata_buf_printf(b,
                      "ColwiseParallel(input_layouts=%s, "
                      "output_layouts=Shard(-1), use_local_output=False)",
                      in);
  } else if (sscanf(pl, "[S(%d)]", &d) == 1) {
    strata_buf_printf(b, "SequenceParallel(sequence_dim=%d)", d);
  } else {
    strata_buf_puts(b, "Replicated()");
  }
}

/* One "path": style line per module the map gives op i. */
static void plan_entries(strata_buf_t *b, const cJSON *mods,
                         const strata_op_choice_t *ops, int n, int i,
                         int first_input, const char *strategy_note) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(mods, ops[i].name);
  const cJSON *m = x && cJSON_IsArray(x) ? x->child : x;
  (void)strategy_note;
  for (; m; m = cJSON_IsArray(x) ? m->next : NULL) {
    strata_buf_puts(b, "        ");
    st__put_py(b, m->valuestring);
    strata_buf_puts(b, ": ");
    style(b, ops, n, i, first_input);
    strata_buf_puts(b, ",  # ");
    st__put_plain(b, ops[i].name);
    strata_buf_puts(b, ": ");
    st__put_plain(b, ops[i].strategy ? ops[i].strategy : "?");
    strata_buf_puts(b, " ");
    st__put_plain(b, ops[i].placement ? ops[i].placement : "?");
    strata_buf_puts(b, "\n");
  }
}

/* The layer ops of a stage's template: [lo, hi). */
static void layer_range(const strata_stage_result_t *r, int *lo, int *hi) {
  *lo = st__first_layer_op(r);
  *hi = *lo < 0 ? *lo : st__last_layer_op(r) + 1;
}

/* The block plan of stage s, as the text of a dict, for deduplication. */
static int block_dict(const strata_plan_stage_t *st, const cJSON *mods,
                      strata_buf_t *b) {
  const strata_stage_result_t *r = st->result;
  int lo, hi;
  strata_buf_init(b);
  layer_range(r, &lo, &hi);
  strata_buf_puts(b, "    return {\n");
  for (int i = lo; i >= 0 && i < hi; i++)
    plan_entries(b, mods, r->ops + lo, hi - lo, i - lo, 0, NULL);
  strata_buf_puts(b, "    }\n");
  return b->oom ? strata_error(STRATA_ENOMEM, "out of memory") : 0;
}

/* The residual stream's placement between blocks of stage s. */
static const char *stream_layout(const strata_plan_stage_t *st, char *buf,
                                 size_t n) {
  int hi = st__last_layer_op(st->result);
  return py_input(hi >= 0 ? st->result->ops[hi].placement : "[R]", buf, n);
}

/* ---- the module ---- */

static const char py_imports[] =
    "import copy\n"
    "\n"
    "import torch\n"
    "from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import "
    "checkpoint_wrapper\n"
    "from torch.distributed.device_mesh import init_device_mesh\n"
    "from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard\n"
    "from torch.distributed.pipelining import (PipelineStage, Schedule1F1B,\n"
    "                                          ScheduleInterleaved1F1B)\n"
    "from torch.distributed.tensor import (DTensor, Partial, Replicate, "
    "Shard,\n"
    "                                      distribute_module)\n"
    "from torch.distributed.tensor.parallel import (ColwiseParallel,\n"
    "                                               PrepareModuleInput,\n"
    "                                               PrepareModuleOutput,\n"
    "                                               RowwiseParallel,\n"
    "                                               SequenceParallel,\n"
    "                                               parallelize_module)\n"
    "from torch.distributed.tensor.parallel.style import ParallelStyle\n"
    "from torch.utils.checkpoint import (CheckpointPolicy,\n"
    "                                    "
    "create_selective_checkpoint_contexts)\n";

static const char py_helpers[] =
    "\n"
    "\n"
    "class Replicated(ParallelStyle):\n"
    "    \"\"\"Parameters whole on every tensor-parallel rank; inputs made "
    "whole.\"\"\"\n"
    "\n"
    "    def _apply(self, module, device_mesh):\n"
    "        def whole(mod, inputs, mesh):\n"
    "            return tuple(x.redistribute(mesh, [Replicate()])\n"
    "                         if isinstance(x, DTensor) else x for x in "
    "inputs)\n"
    "        return distribute_module(module, device_mesh, input_fn=whole)\n"
    "\n"
    "\n"
    "def build_mesh(device_type=\"cuda\"):\n"
    "    \"\"\"The world as (pp, dp, tp) with tp fastest: the plan's rank "
    "layout.\"\"\"\n"
    "    return init_device_mesh(device_type, (PP, DP, TP),\n"
    "                            mesh_dim_names=(\"pp\", \"dp\", \"tp\"))\n";

static const char py_functions[] =
    "\n"
    "\n"
    "def _get(module, path):\n"
    "    for name in path.split(\".\"):\n"
    "        module = getattr(module, name, None) if module is not None else "
    "None\n"
    "    return module\n"
    "\n"
    "\n"
    "def _set(module, path, value):\n"
    "    parent, _, name = path.rpartition(\".\")\n"
    "    parent = _get(module, parent) if parent else module\n"
    "    if parent is not None and hasattr(parent, name):\n"
    "        setattr(parent, name, value)\n"
    "\n"
    "\n"
    "def parallelize(model, mesh):\n"
    "    \"\"\"The plan's tensor parallelism, recompute and data parallelism "
    "on `model`\n"
    "    (the whole model, or a chunk from split_model).\"\"\"\n"
    "    first, end = getattr(model, \"strata_layers\", (0, LAYERS))\n"
    "    blocks = _get(model, BLOCKS)\n"
    "    if TP > 1:\n"
    "        tp = mesh[\"tp\"]\n"
    "        top = {k: v for k, v in top_plan().items() if _get(model, k) is "
    "not None}\n"
    "        if top:\n"
    "            parallelize_module(model, tp, top)\n"
    "        for lo, hi, _, plan, stream in STAGES:\n"
    "            for layer in range(max(lo, first), min(hi, end)):\n"
    "                block = blocks[layer - first]\n"
    "                parallelize_module(block, tp, PrepareModuleInput(\n"
    "                    input_layouts=(stream,), "
    "desired_input_layouts=(stream,)))\n"
    "                parallelize_module(block, tp, plan())\n"
    "                parallelize_module(block, tp, PrepareModuleOutput(\n"
    "                    output_layouts=(stream,), "
    "desired_output_layouts=(stream,),\n"
    "                    use_local_output=True))\n"
    "    apply_recompute(blocks)\n"
    "    apply_data_parallel(model, blocks, mesh)\n"
    "    return model\n"
    "\n"
    "\n"
    "def _keep_matmuls():\n"
    "    def policy(ctx, op, *args, **kwargs):\n"
    "        if op in (torch.ops.aten.mm.default, "
    "torch.ops.aten.addmm.default):\n"
    "            return CheckpointPolicy.MUST_SAVE\n"
    "        return CheckpointPolicy.PREFER_RECOMPUTE\n"
    "    return create_selective_checkpoint_contexts(policy)\n"
    "\n"
    "\n"
    "def apply_recompute(blocks):\n"
    "    \"\"\"Full: each block recomputed in its backward.  Selective: all "
    "but the\n"
    "    matmuls (the attention core with them), per-op checkpointing.\"\"\"\n"
    "    if RECOMPUTE == \"none\" or blocks is None:\n"
    "        return\n"
    "    for i, block in enumerate(blocks):\n"
    "        if RECOMPUTE == \"full\":\n"
    "            blocks[i] = checkpoint_wrapper(block)\n"
    "        else:\n"
    "            blocks[i] = checkpoint_wrapper(block, "
    "context_fn=_keep_matmuls)\n"
    "\n"
    "\n"
    "def apply_data_parallel(model, blocks, mesh):\n"
    "    \"\"\"Data parallelism as FSDP over the dp mesh: ZeRO-3 reshards the\n"
    "    parameters after each forward; ZeRO 0 to 2 keep them, which moves "
    "the\n"
    "    bytes of a distributed optimizer and holds no more memory.\"\"\"\n"
    "    if DP == 1:\n"
    "        return\n"
    "    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16,\n"
    "                                  reduce_dtype=torch.float32)\n"
    "    for block in (blocks if blocks is not None else []):\n"
    "        fully_shard(block, mesh=mesh[\"dp\"], "
    "reshard_after_forward=ZERO_STAGE >= 3,\n"
    "                    mp_policy=policy)\n"
    "    fully_shard(model, mesh=mesh[\"dp\"], "
    "reshard_after_forward=ZERO_STAGE >= 3,\n"
    "                mp_policy=policy)\n"
    "\n"
    "\n"
    "def stages_of(pp_rank):\n"
    "    \"\"\"The model chunks (indices into STAGES) on pipeline rank "
    "pp_rank.\"\"\"\n"
    "    return [k for k, s in enumerate(STAGES) if s[2] == pp_rank]\n"
    "\n"
    "\n"
    "def split_model(model, k):\n"
    "    \"\"\"Chunk k: its blocks only, the modules before the blocks in "
    "chunk 0 and\n"
    "    those after them in the last (None elsewhere: the model's forward "
    "must\n"
    "    skip a None module).  Split on the meta device, before "
    "materialising.\"\"\"\n"
    "    lo, hi = STAGES[k][0], STAGES[k][1]\n"
    "    chunk = copy.deepcopy(model)\n"
    "    _set(chunk, BLOCKS, torch.nn.ModuleList(list(_get(chunk, "
    "BLOCKS))[lo:hi]))\n"
    "    for path in (PROLOGUE if k > 0 else ()) + (EPILOGUE if k + 1 < "
    "len(STAGES) else ()):\n"
    "        _set(chunk, path, None)\n"
    "    chunk.strata_layers = (lo, hi)\n"
    "    return chunk\n"
    "\n"
    "\n"
    "def pipeline_schedule(model, mesh, device, loss_fn):\n"
    "    \"\"\"This rank's pipeline stages, parallelized, and the plan's "
    "schedule.\"\"\"\n"
    "    pp_rank = mesh[\"pp\"].get_local_rank()\n"
    "    stages = []\n"
    "    for k in stages_of(pp_rank):\n"
    "        chunk = parallelize(split_model(model, k), mesh)\n"
    "        stages.append(PipelineStage(chunk, k, len(STAGES), device,\n"
    "                                    group=mesh[\"pp\"].get_group()))\n"
    "    if VPP > 1:\n"
    "        return ScheduleInterleaved1F1B(stages, "
    "n_microbatches=MICRO_BATCHES,\n"
    "                                       loss_fn=loss_fn)\n"
    "    return Schedule1F1B(stages[0], n_microbatches=MICRO_BATCHES, "
    "loss_fn=loss_fn)\n";

static void py_head(strata_buf_t *b, const strata_plan_t *p,
                    const strata_export_opts_t *o, const char *blocks) {
  /* The names go through st__put_pydoc: none can close the docstring. */
  strata_buf_puts(b, "\"\"\"PyTorch (DTensor) parallelization of ");
  st__put_pydoc(b, o && o->source ? o->source : "a plan");
  strata_buf_puts(b, ": ");
  st__put_pydoc(b, p->model ? p->model : "?");
  strata_buf_puts(b, " on ");
  st__put_pydoc(b, p->cluster ? p->cluster : "?");
  strata_buf_printf(
      b,
      ", %d GPUs.\n"
      "\n"
      "Written by `strata export torch`.  tp %d, pp %d%s, dp %d; %s mode "
      "(%s);\n"
      "micro-batch %d, %d micro-batches, global batch %d; ZeRO %d; recompute "
      "%s.\n"
      "\n"
      "Use (torch >= 2.6, one process per GPU under torchrun):\n"
      "    mesh = build_mesh()\n"
      "    model = parallelize(model, mesh)                # pp 1\n"
      "    schedule = pipeline_schedule(model, mesh, device, loss_fn)  # pp > "
      "1\n"
      "The model's blocks are the module list `",
      p->devices, p->tp, p->pp, p->vpp > 1 ? " (interleaved)" : "", p->dp,
      p->megatron ? "Megatron" : "free",
      p->megatron ? "Megatron-LM's layouts"
                  : "every operator's layout from the ILP",
      p->micro_batch, p->n_micro, p->global_batch, p->zero_stage,
      strata_recompute_name(p->recompute));
  st__put_pydoc(b, blocks);
  strata_buf_puts(b, "`; its attention must take its\n"
                     "head count from the local q/k/v sizes (heads / tp).  A "
                     "head whose output\n"
                     "stays sharded over the vocabulary wants its loss under\n"
                     "torch.distributed.tensor.parallel.loss_parallel().\n"
                     "\"\"\"\n");
  strata_buf_puts(b, py_imports);
  strata_buf_printf(b,
                    "\nTP, PP, DP, VPP = %d, %d, %d, %d\n"
                    "WORLD_SIZE = %d\n"
                    "MICRO_BATCH, MICRO_BATCHES, GLOBAL_BATCH = %d, %d, %d\n"
                    "ZERO_STAGE = %d\n"
                    "RECOMPUTE = \"%s\"\n"
                    "LAYERS = %d\n"
                    "BLOCKS = ",
                    st__stage_devices(&p->stages[0]), p->pp, p->dp,
                    p->vpp > 1 ? p->vpp : 1, p->devices, p->micro_batch,
                    p->n_micro, p->global_batch, p->zero_stage,
                    strata_recompute_name(p->recompute), p->layers);
  st__put_py(b, blocks);
  strata_buf_puts(b, "\n");
}

/* Block plans, one function per distinct plan; fn[s] = stage s's. */
static int py_block_plans(strata_buf_t *b, const strata_plan_t *p,
                          const cJSON *mods, int *fn) {
  strata_buf_t *d = strata_calloc((size_t)p->n_stages, sizeof *d);
  int n = 0, rc = d ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
  for (int s = 0; !rc && s < p->n_stages; s++) {
    const strata_plan_stage_t *st = &p->stages[s];
    if ((rc = block_dict(st, mods, &d[s]))) break;
    fn[s] = -1;
    for (int t = 0; t < s && fn[s] < 0; t++)
      if (!strcmp(d[t].p, d[s].p)) fn[s] = fn[t];
    if (fn[s] >= 0) continue;
    fn[s] = n++;
    strata_buf_printf(
        b, "\n\ndef block_plan_%d():\n    \"\"\"A block of stage %d ", fn[s],
        s);
    if (st->layer_end - st->layer_begin > 1)
      strata_buf_printf(b, "(layers %d-%d)", st->layer_begin,
                        st->layer_end - 1);
    else if (st->layer_end > st->layer_begin)
      strata_buf_printf(b, "(layer %d)", st->layer_begin);
    else /* a chunk of the embedding or the loss alone: never called */
      strata_buf_puts(b, "(which holds no layer)");
    strata_buf_printf(b, ", as the plan lays it out.\"\"\"\n%s", d[s].p);
  }
  for (int s = 0; d && s < p->n_stages; s++)
    strata_buf_free(&d[s]);
  strata_free(d);
  return rc;
}

/* The modules outside the blocks: the first stage's prologue and the last
 * stage's epilogue; also their paths (PROLOGUE, EPILOGUE). */
static void py_top(strata_buf_t *b, const strata_plan_t *p, const cJSON *mods) {
  const strata_stage_result_t *r0 = p->stages[0].result;
  const strata_stage_result_t *rl = p->stages[p->n_stages - 1].result;
  int lo0 = st__first_layer_op(r0), hil = st__last_layer_op(rl) + 1;
  /* a last chunk of no layer (the loss's alone) is all epilogue: the
   * final norm, the head, the loss; unless it is the first as well */
  if (hil == 0) hil = rl == r0 && lo0 < 0 ? rl->n_ops : 0;
  strata_buf_puts(b, "\n\ndef top_plan():\n"
                     "    \"\"\"The modules outside the blocks.\"\"\"\n"
                     "    return {\n");
  for (int i = 0; i < (lo0 < 0 ? r0->n_ops : lo0); i++)
    plan_entries(b, mods, r0->ops, lo0 < 0 ? r0->n_ops : lo0, i, i == 0, NULL);
  for (int i = hil; i < rl->n_ops; i++)
    plan_entries(b, mods, rl->ops, rl->n_ops, i, 0, NULL);
  strata_buf_puts(b, "    }\n");
  for (int part = 0; part < 2; part++) {
    const strata_stage_result_t *r = part ? rl : r0;
    int a = part ? hil : 0, z = part ? r->n_ops : (lo0 < 0 ? r0->n_ops : lo0);
    strata_buf_printf(b, "\n\n%s = (", part ? "EPILOGUE" : "PROLOGUE");
    for (int i = a; i < z; i++) {
      const cJSON *x = cJSON_GetObjectItemCaseSensitive(mods, r->ops[i].name);
      for (const cJSON *m = x && cJSON_IsArray(x) ? x->child : x; m;
           m = cJSON_IsArray(x) ? m->next : NULL) {
        st__put_py(b, m->valuestring);
        strata_buf_puts(b, ", ");
      }
    }
    strata_buf_puts(b, ")\n");
  }
}

static void py_stages(strata_buf_t *b, const strata_plan_t *p, const int *fn) {
  char buf[32];
  strata_buf_puts(b, "\n# (first layer, end layer, pipeline rank, block plan, "
                     "the residual stream's\n"
                     "# layout between blocks), one per model chunk in "
                     "model order\n"
                     "STAGES = [\n");
  for (int s = 0; s < p->n_stages; s++) {
    const strata_plan_stage_t *st = &p->stages[s];
    strata_buf_printf(b, "    (%d, %d, %d, block_plan_%d, %s),\n",
                      st->layer_begin, st->layer_end, st->rank, fn[s],
                      stream_layout(st, buf, sizeof buf));
  }
  strata_buf_puts(b, "]\n");
}

int strata_export_torch(const strata_plan_t *p, const strata_export_opts_t *o,
                        char **text) {
  cJSON *map = NULL;
  const char *blocks = NULL;
  int rc, *fn = NULL;
  strata_buf_t b;
  if (!text) return strata_error(STRATA_EINVAL, "torch export: no output");
  *text = NULL;
  if ((rc = st__torch_check(p)) ||
      (rc = load_map(p, o ? o->name_map : NULL, &map, &blocks)))
    return rc;
  const cJSON *mods = cJSON_GetObjectItemCaseSensitive(map, "modules");
  strata_buf_init(&b);
  if (!(fn = strata_calloc((size_t)p->n_stages, sizeof *fn))) {
    rc = strata_error(STRATA_ENOMEM, "out of memory");
    goto out;
  }
  py_head(&b, p, o, blocks);
  strata_buf_puts(&b, py_helpers);
  if ((rc = py_block_plans(&b, p, mods, fn))) goto out;
  py_top(&b, p, mods);
  py_stages(&b, p, fn);
  strata_buf_puts(&b, py_functions);
  if (b.oom) rc = strata_error(STRATA_ENOMEM, "out of memory");
out:
  if (!rc) *text = strata_buf_steal(&b, NULL);
  strata_buf_free(&b);
  strata_free(fn);
  cJSON_Delete(map);
  return rc;
}
