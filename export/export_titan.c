/*
 * export_titan.c - a Megatron-mode plan as a torchtitan configuration:
 * a Python module whose function strata_plan() returns torchtitan's
 * Trainer.Config, the form torchtitan reads since it dropped TOML job
 * configs on 2026-02-23 (train.py --module MODULE --config FUNCTION,
 * torchtitan/config/manager.py).  Written for torchtitan 0.2.2 at commit
 * b5bcd76c (2026-08-21); the TOML form for torchtitan before that
 * commit is export_torchtitan.c (`--toml`).
 *
 * What it sets, each from the plan (docs/exports.md, "torchtitan"):
 * the flavor of torchtitan's llama3 or qwen3 model registry with the
 * plan's RoPE written into the flavor's RoPE configs; the batch as token
 * counts (a micro-batch per data-parallel rank and forward, the tokens
 * of a step, so that the gradient accumulation or the pipeline's
 * micro-batches are the plan's); FSDP2 over dp (reshard after forward
 * for ZeRO 3, not for ZeRO 1 and 2, torchtitan's default under a
 * pipeline), DDP for ZeRO 0 without other dimensions; tp with sequence
 * parallelism, async tp (which torchtitan runs compiled); pp with its
 * schedule, micro-batches and each chunk's modules; cp; MXFP8 or NVFP4
 * converters; full or selective activation checkpointing.
 */
#include <stdio.h>
#include <string.h>

#include "core/text.h"
#include "merge/merge_int.h"

#define REFUSE(...)                                                            \
  strata_error(STRATA_EUNSUPPORTED, "torchtitan export: " __VA_ARGS__)

/* The dense flavors at b5bcd76c: torchtitan/models/llama3/__init__.py
 * (llama3_configs; 1B and 3B tie the head) and models/qwen3/__init__.py
 * (qwen3_configs, head size 128, tied up to 4B): layers, hidden, heads,
 * kv heads, FFN, head size (0: hidden / heads), tied head. */
static const struct {
  const char *model, *flavor;
  int layers, hidden, heads, kv, ffn, head_dim, tie;
} flavors[] = {
    {"llama3", "1B", 16, 2048, 32, 8, 8192, 0, 1},
    {"llama3", "3B", 28, 3072, 24, 8, 8192, 0, 1},
    {"llama3", "8B", 32, 4096, 32, 8, 14336, 0, 0},
    {"llama3", "70B", 80, 8192, 64, 8, 28672, 0, 0},
    {"llama3", "405B", 126, 16384, 128, 8, 53248, 0, 0},
    {"qwen3", "0.6B", 28, 1024, 16, 8, 3072, 128, 1},
    {"qwen3", "1.7B", 28, 2048, 16, 8, 6144, 128, 1},
    {"qwen3", "4B", 36, 2560, 32, 8, 9728, 128, 1},
    {"qwen3", "8B", 36, 4096, 32, 8, 12288, 128, 0},
    {"qwen3", "14B", 40, 5120, 40, 8, 17408, 128, 0},
    {"qwen3", "32B", 64, 5120, 64, 8, 25600, 128, 0},
};

/* The MoE flavors at b5bcd76c: models/qwen3/__init__.py, _30b_a3b and
 * _235b_a22b (_build_qwen3_moe_layers: experts on every layer, no shared
 * expert, untied head, head size 128): layers, hidden, heads, kv heads,
 * the experts' hidden size, experts, experts a token. */
static const struct {
  const char *flavor;
  int layers, hidden, heads, kv, moe_ffn, experts, topk;
} moe_flavors[] = {
    {"30B-A3B", 48, 2048, 32, 4, 768, 128, 8},
    {"235B-A22B", 94, 4096, 64, 4, 1536, 128, 8},
};

static int head_dim_of(const strata_plan_t *p) {
  return p->head_dim > 0 ? p->head_dim : p->heads ? p->hidden / p->heads : 0;
}

static const char *flavor_of(const strata_plan_t *p, const char *model) {
  int kv = p->kv_heads ? p->kv_heads : p->heads;
  if (p->experts > 0) {
    for (size_t i = 0; i < sizeof moe_flavors / sizeof moe_flavors[0]; i++)
      if (!strcmp(model, "qwen3") && moe_flavors[i].layers == p->layers &&
          moe_flavors[i].hidden == p->hidden &&
          moe_flavors[i].heads == p->heads && moe_flavors[i].kv == kv &&
          head_dim_of(p) == 128 && moe_flavors[i].moe_ffn == p->moe_ffn &&
          moe_flavors[i].experts == p->experts &&
          moe_flavors[i].topk == p->topk && p->untie_embeddings)
        return moe_flavors[i].flavor;
    return NULL;
  }
  for (size_t i = 0; i < sizeof flavors / sizeof flavors[0]; i++) {
    int hd = flavors[i].head_dim ? flavors[i].head_dim
                                 : flavors[i].hidden / flavors[i].heads;
    if (!strcmp(flavors[i].model, model) && flavors[i].layers == p->layers &&
        flavors[i].hidden == p->hidden && flavors[i].heads == p->heads &&
        flavors[i].kv == kv && flavors[i].ffn == p->ffn &&
        hd == head_dim_of(p) && flavors[i].tie == !p->untie_embeddings)
      return flavors[i].flavor;
  }
  return NULL;
}

/* What torchtitan's layers lack of the plan's model; NULL: nothing. */
static const char *model_gap(const strata_plan_t *p, const char *model) {
  int qwen = !strcmp(model, "qwen3");
  const strata_rope_scaling_t *r = &p->rope_scaling;
  return p->experts > 0 && !qwen ? "experts"
         : p->experts > 0 && (p->shared_ffn > 0 || p->moe_layers < p->layers)
             ? "shared experts or dense layers among the experts' (its "
               "qwen3 MoE flavors have experts alone on every layer)"
         : p->kv_lora > 0                     ? "latent attention"
         : p->mtp_layers > 0                  ? "multi-token prediction modules"
         : p->qkv_bias > 0 || p->out_bias > 0 ? "attention biases"
         : p->mlp_bias > 0                    ? "MLP biases"
         : p->window > 0                      ? "sliding windows"
         : p->attn_sinks                      ? "attention sinks"
         : p->glu_limit > 0                   ? "gpt-oss's clamped GLU"
         : p->attn_chunk > 0 && p->seq_len > p->attn_chunk ? "chunked attention"
         : p->qk_norm != qwen    ? (qwen ? "no q/k norms" : "q/k norms")
         : p->rotary_percent > 0 ? "RoPE on part of each head"
         : p->nope_every > 0     ? "layers without RoPE"
         /* rope.py: ComplexRoPE (llama3) scales as Llama 3.1 does;
          * CosSinRoPE (qwen3) raises NotImplementedError for it */
         : r->type == STRATA_ROPE_SCALING_LLAMA3 && qwen
             ? "Llama 3.1's RoPE scaling (qwen3's CosSinRoPE has none)"
         : r->type != STRATA_ROPE_SCALING_NONE &&
                 r->type != STRATA_ROPE_SCALING_LLAMA3
             ? "RoPE scaling other than Llama 3.1's"
             : NULL;
}

/* Megatron-LM's techniques the configuration has no field for (in the
 * rulebook's words for the DTensor export, rules/rules.c); 0 or the
 * refusal. */
static int run_check(const strata_plan_t *p) {
  const char *keeps =
      p->optimizer_offload > 0 ? "the optimizer offloaded to the host "
                                 "(--optimizer-offload-fraction)"
      : p->precision_aware_optimizer > 0 ? "the precision-aware optimizer "
                                           "(--precision-aware-optimizer)"
      : p->offload_layers > 0            ? "activations offloaded to the host "
                                           "(--cpu-offloading-num-layers)"
      : p->offload_modules > 0 ? "modules' activations offloaded to the host "
                                 "(--offload-modules)"
                               : NULL;
  if (keeps)
    return REFUSE("the plan keeps %s, which this export does not say; "
                  "export it for Megatron-LM",
                  keeps);
  if (p->recompute == STRATA_RECOMPUTE_FULL &&
      (p->recompute_layers > 1 ||
       STRATA_CHOICE(p->recompute_method) != STRATA_RECOMPUTE_UNIFORM))
    return REFUSE("the plan recomputes units of layers (--recompute-num-layers "
                  "%d, --recompute-method %s), which this export does not "
                  "say; export it for Megatron-LM",
                  p->recompute_layers,
                  strata_recompute_method_name(p->recompute_method));
  if (p->recompute_modules)
    return REFUSE("the plan recomputes Megatron-LM's modules "
                  "(--recompute-modules), which this export does not say; "
                  "export it for Megatron-LM");
  if (STRATA_CHOICE(p->cuda_graph_impl) != STRATA_CUDA_GRAPH_NONE)
    return REFUSE("the plan captures CUDA graphs with Megatron-LM's "
                  "--cuda-graph-impl %s, which this export does not set up; "
                  "export it for Megatron-LM",
                  strata_cuda_graph_impl_name(p->cuda_graph_impl));
  return 0;
}

/* The plan's GEMM recipe as a converter of torchtitan's
 * components/quantization (MXFP8LinearConverter: every Linear;
 * NVFP4LinearConverter: the layers' Linears, as its recipes); 0, or a
 * refusal. */
static int lowp_check(const strata_plan_t *p) {
  if (!p->fp8 || p->fp8 == STRATA_LOWP_MXFP8 || p->fp8 == STRATA_LOWP_NVFP4)
    return 0;
  if (p->fp8 == STRATA_LOWP_TENSORWISE)
    return REFUSE("the plan's FP8 scales per tensor, and torchtitan removed "
                  "Float8's tensorwise recipe on 2026-04-27 (#3127; its "
                  "Float8LinearConverter scales rowwise, which Strata does "
                  "not cost): re-plan with --fp8-recipe mxfp8 on Blackwell, "
                  "or export with --toml for an older torchtitan");
  return REFUSE("the plan's FP8 recipe (%s) is Transformer Engine's; "
                "torchtitan's converters are Float8 (rowwise), MXFP8 and "
                "NVFP4: re-plan with --fp8-recipe mxfp8 on Blackwell or "
                "export it for Megatron-LM",
                p->fp8 == STRATA_LOWP_DELAYED ? "delayed scaling" : "blocks");
}

/* Experts as torchtitan's qwen3 MoE runs them at b5bcd76c: sharded over
 * ep alone, ep borrowing ranks of dp_shard x cp x tp (ParallelDims;
 * configs.py, expert_parallel_degree: "efsdp = dp_shard * cp * tp / ep"),
 * dropless, the tokens sent by all-to-all (moe_comm_backend "standard");
 * 0 or the refusal. */
static int moe_check(const strata_plan_t *p) {
  int etp = p->etp > 0 ? p->etp : p->tp;
  if (p->experts <= 0) return 0;
  if (etp > 1)
    return REFUSE("the plan splits each expert over etp %d, and torchtitan "
                  "shards experts over ep alone (no expert tensor "
                  "parallelism: EP borrows ranks of FSDP and TP); re-plan "
                  "with --etp 1",
                  etp);
  if (p->ep > 1 && p->zero_stage == 0)
    return REFUSE("ZeRO 0 with ep %d: torchtitan's DDP runs on a 1-D mesh "
                  "and its expert parallelism borrows FSDP's ranks; re-plan "
                  "with --zero 1 to 3 (FSDP2)",
                  p->ep);
  if (p->capacity > 0)
    return REFUSE("the plan's experts drop tokens past capacity factor %g, "
                  "and torchtitan's are dropless; re-plan without "
                  "--capacity-factor",
                  p->capacity);
  if (p->moe_dispatcher && p->moe_dispatcher != STRATA_MOE_ALLTOALL)
    return REFUSE("the plan dispatches tokens with Megatron-LM's %s "
                  "dispatcher; torchtitan's standard backend is all-to-all: "
                  "re-plan with --moe-token-dispatcher alltoall",
                  strata_moe_token_dispatcher_name(p->moe_dispatcher));
  if (p->overlap_ep_comm)
    return REFUSE("the plan hides the experts' all-to-all under another "
                  "micro-batch's compute (--overlap-moe-expert-parallel-"
                  "comm), which torchtitan's 1F1B-style schedules do not; "
                  "re-plan without it");
  return 0;
}

static int layout_check(const strata_plan_t *p) {
  int first, last, rc;
  if (p->pp > 1 && p->zero_stage >= 2 &&
      p->framework != STRATA_FRAMEWORK_TORCHTITAN)
    return REFUSE("the plan's ZeRO %d with a pipeline was costed for %s, "
                  "which shards what torchtitan's FSDP2 under a pipeline "
                  "keeps whole through the step: re-plan with --framework "
                  "torchtitan",
                  p->zero_stage, strata_framework_name(p->framework));
  if (p->zero_stage == 0 && p->dp > 1 && (p->tp > 1 || p->pp > 1 || p->cp > 1))
    return REFUSE("ZeRO 0 is torchtitan's DDP, which runs on a 1-D mesh "
                  "only (apply_ddp: 'DDP has not supported > 1D "
                  "parallelism'); re-plan with --zero 1 to 3 (FSDP2)");
  if (!st__titan_schedule(p))
    return REFUSE("the plan's pipeline schedule %s is not one "
                  "torch.distributed.pipelining runs (GPipe, 1F1B, "
                  "Interleaved1F1B, LoopedBFS, InterleavedZeroBubble, "
                  "ZBVZeroBubble, DualPipeV): re-plan with --pp-schedule "
                  "auto",
                  strata_pp_schedule_name(p->pp_schedule));
  strata_plan_t q = *p; /* read only: Megatron-LM's layout rules, not its */
  q.rope_scaling.type = STRATA_ROPE_SCALING_NONE; /* RoPE flags' (ours) */
  q.pp_schedule = 0; /* its schedules (torchtitan's asked of the rulebook) */
  if ((rc = st__mg_check(&q, &first, &last))) {
    const char *m = strata_last_error(), *c = strstr(m, "export: ");
    char why[512];
    snprintf(why, sizeof why, "%s", c ? c + 8 : m);
    return strata_error(rc, "torchtitan export: %s", why);
  }
  if (p->global_batch % (p->dp * p->micro_batch))
    return REFUSE("global batch %d is not a multiple of dp %d times the "
                  "micro-batch %d",
                  p->global_batch, p->dp, p->micro_batch);
  return 0;
}

int st__titan_py_check(const strata_plan_t *p, const char **model,
                       const char **flavor) {
  const char *gap;
  int rc;
  if (!p || p->n_stages < 1 || !p->stages || p->dp < 1 || p->micro_batch < 1)
    return strata_error(STRATA_EINVAL, "torchtitan export: a plan with no "
                                       "stage");
  if (!p->megatron)
    return REFUSE("a free-mode plan lays out each operator as the ILP chose "
                  "and torchtitan's tensor parallelism is Megatron's layout; "
                  "use 'strata export torch'");
  /* Qwen3-MoE is built as a LLaMA with q/k norms (import/hf.c,
   * rd_qwen3_moe): torchtitan's qwen3 MoE flavors */
  int qwen_moe =
      p->experts > 0 && p->qk_norm == 1 && !strcmp(p->family, "llama");
  *model = qwen_moe                      ? "qwen3"
           : !strcmp(p->family, "llama") ? "llama3"
           : !strcmp(p->family, "qwen3") ? "qwen3"
                                         : NULL;
  char fam[192], name[96];
  if (!*model && p->family[0])
    return REFUSE("torchtitan has no %s model (its llama3 and qwen3 are the "
                  "Strata families it trains)",
                  st__plain(p->family, name, sizeof name));
  if (!*model)
    return REFUSE("torchtitan has no model for %s",
                  st__family_said(p, fam, sizeof fam));
  if (p->experts > 0 && strcmp(*model, "qwen3"))
    return REFUSE("the plan's model%s%s%s has experts (a mixture of "
                  "experts), and torchtitan's llama3 is dense; its MoE "
                  "models written here are qwen3's 30B-A3B and 235B-A22B "
                  "(deepseek_v3's latent attention is not): export it for "
                  "Megatron-LM",
                  p->model ? " (" : "",
                  p->model ? st__plain(p->model, name, sizeof name) : "",
                  p->model ? ")" : "");
  if ((gap = model_gap(p, *model)))
    return REFUSE("the plan's model%s%s%s has %s, which torchtitan's %s "
                  "does not",
                  p->model ? " (" : "",
                  p->model ? st__plain(p->model, name, sizeof name) : "",
                  p->model ? ")" : "", gap,
                  p->experts > 0 ? "qwen3 MoE" : *model);
  double eps = !strcmp(*model, "qwen3") ? 1e-6 : 1e-5; /* RMSNorm's */
  if (p->norm_eps > 0 && p->norm_eps != eps)
    return REFUSE("the plan's model normalises with epsilon %g and "
                  "torchtitan's %s with %g",
                  p->norm_eps, *model, eps);
  if ((rc = run_check(p)) || (rc = lowp_check(p)) || (rc = moe_check(p)) ||
      (rc = layout_check(p)))
    return rc;
  if (!(*flavor = flavor_of(p, *model)))
    return REFUSE("no %s flavor of torchtitan has %d layers, hidden %d, "
                  "%d heads, %d query groups, FFN %d, head size %d%s; add "
                  "one to torchtitan/models/%s/__init__.py",
                  *model, p->layers, p->hidden, p->heads, p->kv_heads, p->ffn,
                  head_dim_of(p),
                  !p->untie_embeddings      ? ", a tied head"
                  : strcmp(*model, "qwen3") ? ""
                                            : ", an untied head",
                  *model);
  return 0;
}

/* "tp T, cp C, pp P (vpp V), dp D". */
static void degrees(strata_buf_t *b, const strata_plan_t *p) {
  strata_buf_printf(b, "tp %d, ", p->tp);
  if (p->cp > 1) strata_buf_printf(b, "cp %d, ", p->cp);
  strata_buf_printf(b, "pp %d, ", p->pp);
  if (p->vpp > 1) strata_buf_printf(b, "vpp %d, ", p->vpp);
  strata_buf_printf(b, "dp %d", p->dp);
}

static void docstring(strata_buf_t *b, const strata_plan_t *p) {
  strata_buf_puts(b, "\"\"\"torchtitan configuration of a Strata plan: ");
  st__put_pydoc(b, p->model ? p->model : "?");
  strata_buf_puts(b, " on ");
  st__put_pydoc(b, p->cluster ? p->cluster : "?");
  strata_buf_printf(b, ", %d GPUs; ", p->devices);
  degrees(b, p);
  strata_buf_printf(
      b,
      ".\n\n"
      "Written by `strata export torchtitan` for torchtitan 0.2.2 (commit\n"
      "b5bcd76c, 2026-08-21), which takes a run as --module/--config: a\n"
      "function returning Trainer.Config.  From torchtitan's repository "
      "root,\n"
      "this file's folder on PYTHONPATH, on each of the plan's %d GPUs:\n\n"
      "    NGPU=<GPUs of the node> MODULE=<this file's name> "
      "CONFIG=strata_plan \\\n"
      "        ./run_train.sh\n\n"
      "(torchrun ... -m torchtitan.train --module <name> --config "
      "strata_plan\n"
      "on a node of several).  Set hf_assets_path and the data below.\n",
      p->devices);
  if (p->n_groups > 1)
    strata_buf_puts(b, "\nThe stages run on node groups of different GPUs: "
                       "start the nodes in the\n"
                       "order of `strata export hostfile` (node rank 0 "
                       "first); torchtitan's mesh,\n"
                       "like Megatron-LM's, puts pp outermost and tp "
                       "innermost.\n");
  strata_buf_puts(b, "\"\"\"\n");
}

static void imports(strata_buf_t *b, const strata_plan_t *p,
                    const char *model) {
  strata_buf_puts(b,
                  "\nfrom torchtitan.components.data import (\n"
                  "    ConcatThenSplitPackingConfig,\n"
                  "    GrainDataLoader,\n"
                  ")\n"
                  "from torchtitan.components.loss import ChunkedLossWrapper, "
                  "CrossEntropyLoss\n");
  if (p->fp8)
    strata_buf_printf(b, "from torchtitan.components.quantization import %s\n",
                      p->fp8 == STRATA_LOWP_MXFP8 ? "MXFP8LinearConverter"
                                                  : "NVFP4LinearConverter");
  strata_buf_printf(
      b,
      "from torchtitan.config import CompileConfig, ParallelismConfig, "
      "TrainingConfig\n"
      "from torchtitan.distributed.activation_checkpoint import FullAC, "
      "SelectiveAC\n"
      "from torchtitan.hf_datasets.text_datasets import DATASETS\n"
      "from torchtitan.models.%s import model_registry\n"
      "from torchtitan.models.common.config_utils import "
      "decoder_vocab_size\n"
      "from torchtitan.models.common.rope import RoPE\n"
      "from torchtitan.trainer import Trainer\n",
      model);
}

/* Async tp is a compiler pass (CompileConfig: "Async TP requires 'model'
 * in --compile.components and --compile.enable"); otherwise uncompiled,
 * as the plan's kernel times are. */
static int compiled(const strata_plan_t *p) {
  return p->tp > 1 && p->tp_comm_overlap;
}

/* The model: the flavor, its converter, the plan's RoPE in each RoPE
 * config (rope.py's fields). */
static void model_spec(strata_buf_t *b, const strata_plan_t *p,
                       const char *model, const char *flavor) {
  const strata_rope_scaling_t *r = &p->rope_scaling;
  strata_buf_printf(b, "    model_spec = model_registry(\"%s\"", flavor);
  if (p->fp8 == STRATA_LOWP_MXFP8)
    strata_buf_printf(b,
                      ", converters=[\n        MXFP8LinearConverter."
                      "Config(model_compile_enabled=%s),\n    ]",
                      compiled(p) ? "True" : "False");
  else if (p->fp8 == STRATA_LOWP_NVFP4) /* the head's vocab is no multiple
                                           of 128: the layers only */
    strata_buf_printf(b,
                      ", converters=[\n        NVFP4LinearConverter.Config(\n"
                      "            fqns=[\"layers\"], "
                      "model_compile_enabled=%s\n        ),\n    ]",
                      compiled(p) ? "True" : "False");
  strata_buf_puts(b, ")\n"
                     "    # the plan's RoPE, in every RoPE config of the "
                     "flavor\n"
                     "    for _fqn, rope, _parent, _attr in "
                     "model_spec.traverse(RoPE.Config):\n");
  if (p->rope_theta > 0)
    strata_buf_printf(b, "        rope.theta = %.17g\n", p->rope_theta);
  if (r->type == STRATA_ROPE_SCALING_LLAMA3)
    strata_buf_printf(b,
                      "        rope.scaling = \"llama\"\n"
                      "        rope.scaling_factor = %.17g\n"
                      "        rope.low_freq_factor = %.17g\n"
                      "        rope.high_freq_factor = %.17g\n"
                      "        rope.original_max_position_embeddings = %d\n",
                      r->factor, r->low, r->high,
                      r->original > 0 ? r->original : 8192);
  else
    strata_buf_puts(b, "        rope.scaling = \"none\"\n");
  (void)model;
}

/* module_fqns_per_model_part: each chunk's modules, the head and its
 * norm on the last chunk whatever layers it holds. */
static void model_parts(strata_buf_t *b, const strata_plan_t *p) {
  strata_buf_puts(b, "            module_fqns_per_model_part=[\n");
  for (int s = 0; s < p->n_stages; s++) {
    const strata_plan_stage_t *st = &p->stages[s];
    const char *sep = "";
    strata_buf_puts(b, "                [");
    if (s == 0) strata_buf_puts(b, "\"tok_embeddings\""), sep = ", ";
    for (int l = st->layer_begin; l < st->layer_end; l++, sep = ", ")
      strata_buf_printf(b, "%s\"layers.%d\"", sep, l);
    if (s == p->n_stages - 1)
      strata_buf_printf(b, "%s\"norm\", \"lm_head\"", sep);
    strata_buf_puts(b, "],\n");
  }
  strata_buf_puts(b, "            ],\n");
}

static const char *reshard(const strata_plan_t *p) {
  if (p->pp > 1) return "default"; /* not resharded under a pipeline */
  return p->zero_stage >= 3 ? "always" : "never";
}

static void parallelism(strata_buf_t *b, const strata_plan_t *p) {
  int ddp = p->zero_stage == 0; /* 1-D only (layout_check) */
  strata_buf_printf(b,
                    "        parallelism=ParallelismConfig(\n"
                    "            data_parallel_replicate_degree=%d,\n"
                    "            data_parallel_shard_degree=%d,\n"
                    "            fsdp_reshard_after_forward=\"%s\",  # ZeRO %d"
                    "%s\n"
                    "            tensor_parallel_degree=%d,\n"
                    "            enable_sequence_parallel=True,%s\n"
                    "            pipeline_parallel_degree=%d,\n",
                    ddp ? p->dp : 1, ddp ? 1 : p->dp, reshard(p), p->zero_stage,
                    p->pp > 1 ? " under a pipeline" : "", p->tp,
                    p->tp > 1 && p->sequence_parallel <= 0
                        ? "  # always, with tp (the plan: off)"
                        : "",
                    p->pp);
  if (p->pp > 1) {
    strata_buf_printf(b,
                      "            pipeline_parallel_schedule=\"%s\",\n"
                      "            num_pp_microbatches=%d,\n",
                      st__titan_schedule(p),
                      p->global_batch / (p->dp * p->micro_batch));
    model_parts(b, p);
  }
  strata_buf_printf(b, "            context_parallel_degree=%d,\n",
                    p->cp > 1 ? p->cp : 1);
  if (p->experts > 0) /* etp 1 (moe_check) */
    strata_buf_printf(b,
                      "            expert_parallel_degree=%d,  # experts over "
                      "ep alone\n",
                      p->ep > 1 ? p->ep : 1);
  strata_buf_puts(b, "        ),\n");
}

static void training(strata_buf_t *b, const strata_plan_t *p) {
  strata_buf_printf(
      b,
      "        training=TrainingConfig(\n"
      "            # a forward of micro-batch %d x %d tokens on each "
      "data-parallel rank\n"
      "            num_tokens_per_microbatch_per_dp_rank=%d * %d,\n"
      "            # global batch %d: %s\n"
      "            num_tokens_per_train_step=%d * %d,\n"
      "            max_context_length=%d,\n"
      "            mixed_precision_param=\"bfloat16\",\n"
      "            mixed_precision_reduce=\"float32\",\n"
      "        ),\n",
      p->micro_batch, p->seq_len, p->micro_batch, p->seq_len, p->global_batch,
      p->pp > 1 ? "the pipeline's micro-batches, no accumulation"
                : "gradient accumulation over the micro-batches",
      p->global_batch, p->seq_len, p->seq_len);
}

/* hf_assets_path: the model name's last path component, so that no name
 * points the trainer elsewhere. */
static void assets_path(strata_buf_t *b, const strata_plan_t *p) {
  const char *m = p->model && *p->model ? p->model : "model";
  const char *slash = strrchr(m, '/');
  strata_buf_t d;
  if (slash && slash[1]) m = slash + 1;
  if (!strcmp(m, ".") || !strcmp(m, "..")) m = "model";
  strata_buf_init(&d);
  strata_buf_printf(&d, "./assets/hf/%s", m);
  st__put_py(b, d.oom ? "./assets/hf/model" : d.p);
  strata_buf_free(&d);
}

static void config(strata_buf_t *b, const strata_plan_t *p) {
  strata_buf_puts(b, "    return Trainer.Config(\n"
                     "        hf_assets_path=");
  assets_path(b, p);
  strata_buf_puts(
      b, ",  # the model's tokenizer folder\n"
         "        model_spec=model_spec,\n"
         "        loss=ChunkedLossWrapper.Config(\n"
         "            loss_fn=CrossEntropyLoss.Config(\n"
         "                global_vocab_size=decoder_vocab_size(model_spec),\n"
         "            ),\n"
         "        ),\n"
         "        dataloader=GrainDataLoader.Config(  # your data\n"
         "            dataset=ConcatThenSplitPackingConfig(dataset=DATASETS"
         "[\"c4\"]),\n"
         "        ),\n");
  training(b, p);
  parallelism(b, p);
  strata_buf_printf(b, "        activation_checkpoint=%s,\n",
                    p->recompute == STRATA_RECOMPUTE_FULL ? "FullAC.Config()"
                    : p->recompute == STRATA_RECOMPUTE_SELECTIVE
                        ? "SelectiveAC.Config()"
                        : "None");
  if (compiled(p))
    strata_buf_puts(b, "        compile=CompileConfig(  # async tp is a "
                       "compiler pass\n"
                       "            enable=True,\n"
                       "            components=[\"model\", \"loss\"],\n"
                       "            enable_async_tensor_parallel=True,\n"
                       "        ),\n");
  else
    strata_buf_puts(b, "        compile=CompileConfig(enable=False),  # the "
                       "plan's kernel times are uncompiled\n");
  strata_buf_puts(b, "    )\n");
}

int strata_export_titan(const strata_plan_t *p, char **text) {
  const char *model = NULL, *flavor = NULL;
  int rc;
  strata_buf_t b;
  if (!text) return strata_error(STRATA_EINVAL, "torchtitan export: no output");
  *text = NULL;
  if ((rc = st__titan_py_check(p, &model, &flavor))) return rc;
  strata_buf_init(&b);
  docstring(&b, p);
  imports(&b, p, model);
  strata_buf_printf(&b,
                    "\nSTRATA_MODEL = \"%s\"\n"
                    "STRATA_FLAVOR = \"%s\"\n"
                    "\n\ndef strata_plan() -> Trainer.Config:\n",
                    model, flavor);
  model_spec(&b, p, model, flavor);
  config(&b, p);
  return strata_buf_finish(&b, text);
}
