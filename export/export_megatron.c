/*
 * export_megatron.c - the plan as Megatron-LM arguments, one flag per line
 * ending in a backslash, so the text pastes into a shell script after the
 * launcher line (export_launch.c writes the whole script around the same
 * flags).  Only flag names from reference/megatron_flags.txt are used.
 *
 * Megatron-LM runs one layout: the same tensor-parallel size in every
 * stage, layers split evenly (with optional first/last stage counts, also
 * with virtual stages, or any count per model chunk through
 * --pipeline-model-parallel-layout, which a plan over node groups of
 * different GPUs needs), the distributed
 * optimizer for ZeRO-1.  Before writing anything the plan is
 * checked against Megatron's own argument rules, the rulebook's
 * (rules/rules.c: heads and query groups divisible by tp, batch
 * divisibility, sequence parallelism only with tp > 1, ...), and against
 * what the flags can say (the stages' layout, the world size); a plan that
 * breaks one is refused with the reason, so what is exported is what was
 * planned and costed.
 *
 * The flags are built once into a list (st__mg_args_t) that both printers
 * read: this file's backslash lines and the launch script's bash arrays.
 * A new parallel dimension (context or expert parallelism, fp8) is one
 * more line in parallel_flags() and, where Megatron has a rule for it,
 * one more check.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge/merge_int.h"

#define REFUSE(...)                                                            \
  strata_error(STRATA_EUNSUPPORTED, "megatron export: " __VA_ARGS__)

/* ---- the model families Megatron-LM trains ---- */

static const st__mg_family_t families[] = {
    {"gpt", "pretrain_gpt.py", "GPT2BPETokenizer", 1},
    {"llama", "pretrain_gpt.py", "HuggingFaceTokenizer", 1},
    {"bert", "examples/bert/pretrain_bert.py", "BertWordPieceLowerCase", 0},
};

/* Imported configs keep their model_type as the family; those built as a
 * LLaMA (RMSNorm, SwiGLU, RoPE; their biases, q/k norms and windows are
 * the plan's variants, set by their own flags) or as a GPT train with the
 * same script and flags.  Gemma's GeGLU, Gemma 2's soft-capping, GPT-NeoX's
 * parallel residual and T5 have no Megatron-LM GPT flag: refused. */
static const struct {
  const char *type, *as;
} alias[] = {{"mistral", "llama"},
             {"qwen2", "llama"},
             {"qwen3", "llama"},
             {"phi3", "llama"},
             {"gpt2", "gpt"}};

const st__mg_family_t *st__mg_family(const char *family) {
  for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
    if (!strcmp(alias[i].type, family)) family = alias[i].as;
  for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
    if (!strcmp(families[i].family, family)) return &families[i];
  return NULL;
}

/* RoPE base of a LLaMA-family model: the model's when it gives one (the
 * presets of today's models do); else the tokenizer tells the
 * generations apart:
 * LLaMA 3's 128 256-token vocabulary came with base 500 000 (Dubey et al.
 * 2024, "The Llama 3 Herd of Models", Table 3), LLaMA 1 and 2's 32 000 with
 * 10 000 (Touvron et al. 2023), which is also Megatron-LM's default. */
int st__mg_rotary_base(const strata_plan_t *p) {
  if (p->rope_theta >= 1 && p->rope_theta <= 2e9) return (int)p->rope_theta;
  return p->vocab == 128256 ? 500000 : 10000;
}

/* ---- checks ---- */

static int check_mode(const strata_plan_t *p) {
  if (!p->megatron)
    return REFUSE("a free-mode plan gives each operator its own layout, which "
                  "Megatron-LM cannot express; use 'strata export torch' or "
                  "re-plan in Megatron mode");
  char fam[192];
  if (!st__mg_family(p->family))
    return REFUSE("Megatron-LM has no training script here for %s (gpt and "
                  "gpt2, llama and the LLaMA-like mistral, qwen2, qwen3 and "
                  "phi3, bert)",
                  st__family_said(p, fam, sizeof fam));
  return 0;
}

static int check_stages(const strata_plan_t *p) {
  int vpp = p->vpp > 1 ? p->vpp : 1;
  if (p->n_stages != p->pp * vpp)
    return REFUSE("the plan has %d stages but pp %d x vpp %d", p->n_stages,
                  p->pp, vpp);
  long long width = (long long)p->tp * (p->cp > 1 ? p->cp : 1);
  for (int s = 0; s < p->n_stages; s++)
    if (st__stage_devices(&p->stages[s]) != width)
      return REFUSE("stage %d runs on %d devices, not tp x cp = %d: "
                    "Megatron-LM needs the same tensor- and context-parallel "
                    "sizes in every stage",
                    s, st__stage_devices(&p->stages[s]), (int)width);
  return 0;
}

/* Megatron-LM's linear layers have biases all (add_bias_linear: q/k/v,
 * the attention output, both MLP linears, the experts'), none
 * (--disable-bias-linear), or on q/k/v alone (--add-qkv-bias); a LLaMA
 * variant's biases are one of those or not said at all.  The MLPs are
 * the dense layers' (mlp_bias) and the experts' (expert_bias). */
static int bias_check(const strata_plan_t *p) {
  if (strcmp(st__mg_family(p->family)->family, "llama")) return 0;
  int dense = p->experts <= 0 || p->moe_layers < p->layers;
  int mlp_on = (dense && p->mlp_bias) || (p->experts > 0 && p->expert_bias);
  int mlp_off = (dense && !p->mlp_bias) || (p->experts > 0 && !p->expert_bias);
  if (mlp_on && mlp_off)
    return REFUSE("the model's %s have biases and its %s none, and Megatron-"
                  "LM's --disable-bias-linear removes them from every linear "
                  "layer",
                  p->expert_bias ? "experts" : "dense MLPs",
                  p->expert_bias ? "dense MLPs" : "experts");
  if (mlp_on != p->out_bias || (p->out_bias && !p->qkv_bias))
    return REFUSE("the model has biases on %s but not on %s: Megatron-LM's "
                  "linear layers have them all, none (--disable-bias-linear) "
                  "or on q/k/v only (--add-qkv-bias)",
                  mlp_on ? "its MLPs" : "its attention output",
                  mlp_on ? "the attention output" : "its MLPs");
  return 0;
}

static int check_sizes(const strata_plan_t *p) {
  int tp = p->tp, pp = p->pp;
  if (tp < 1 || pp < 1 || p->dp < 1)
    return REFUSE("tp %d, pp %d, dp %d", tp, pp, p->dp);
  int cp = p->cp > 1 ? p->cp : 1;
  long long grid = (long long)tp * cp * pp; /* a damaged file's may be huge */
  if (grid > p->devices || p->devices % grid || p->devices / grid != p->dp) {
    if (cp > 1)
      return REFUSE("world size %d is not tp %d x cp %d x pp %d x dp %d",
                    p->devices, tp, cp, pp, p->dp);
    return REFUSE("world size %d is not tp %d x pp %d x dp %d", p->devices, tp,
                  pp, p->dp);
  }
  if (p->heads < 1 || p->micro_batch < 1)
    return REFUSE("the plan lacks the model's heads or its micro-batch "
                  "(heads %d, micro-batch %d)",
                  p->heads, p->micro_batch);
  if (p->hidden < 1 || p->layers < 1 || p->seq_len < 1)
    return REFUSE("the plan lacks the model's sizes (layers %d, hidden %d, "
                  "seq %d)",
                  p->layers, p->hidden, p->seq_len);
  return 0;
}

/* Layers of stage (model chunk) s. */
static int chunk_layers(const strata_plan_t *p, int s) {
  return p->stages[s].layer_end - p->stages[s].layer_begin;
}

/* The embedding and the loss counted as layers of an even split
 * (transformer_block.py, get_num_layers_to_build): every chunk holds the
 * same units, the first one layer fewer for the embedding, the last for
 * the loss; *first = *last = -2. */
static int account_split(const strata_plan_t *p, int *first, int *last) {
  int e = p->account_embedding > 0, l = p->account_loss > 0, K = p->n_stages;
  int units = p->layers + e + l;
  for (int s = 0; s < K; s++) {
    int want = units / K - (s == 0 ? e : 0) - (s == K - 1 ? l : 0);
    if (units % K || chunk_layers(p, s) != want)
      return REFUSE("stage %d holds %d layers, not the %d of the even split "
                    "that counts the %s as layers",
                    s, chunk_layers(p, s), units % K ? -1 : want,
                    e && l ? "embedding and the loss"
                    : e    ? "embedding"
                           : "loss");
  }
  *first = *last = -2;
  return 0;
}

/* The split as Megatron-LM takes it: *first / *last are the first and
 * last ranks' layers (all their virtual stages), 0 when they equal the
 * middle ranks'; both -1 when only an explicit layout says it (ranks or
 * a rank's chunks of different sizes). */
static int check_split(const strata_plan_t *p, int *first, int *last) {
  int n = p->n_stages, next = 0, pp = p->pp, v = p->vpp > 1 ? p->vpp : 1;
  int empty = 0;
  *first = *last = 0;
  for (int s = 0; s < n; s++) { /* model chunks, in order */
    const strata_plan_stage_t *st = &p->stages[s];
    empty |= st->layer_end == st->layer_begin;
    if (st->layer_begin != next || st->layer_end < st->layer_begin)
      return REFUSE("stage %d holds layers [%d, %d), not a split of the model "
                    "in order",
                    s, st->layer_begin, st->layer_end);
    next = st->layer_end;
  }
  if (next != p->layers)
    return REFUSE("the stages hold %d layers, the model has %d", next,
                  p->layers);
  if (pp == 1) return 0;
  if (p->account_embedding > 0 || p->account_loss > 0)
    return account_split(p, first, last);
  if (empty) { /* a chunk of no layer: only a layout says it */
    *first = *last = -1;
    return 0;
  }
  /* Megatron-LM's first/last form: each rank's chunks alike (rank r holds
   * chunks r, r + pp, ...), the middle ranks alike */
  int form = 1;
  for (int s = pp; s < n; s++)
    form &= chunk_layers(p, s) == chunk_layers(p, s % pp);
  for (int r = 2; r + 1 < pp; r++)
    form &= chunk_layers(p, r) == chunk_layers(p, 1);
  if (!form) { /* a mixed cluster's groups: the explicit layout */
    *first = *last = -1;
    return 0;
  }
  int f = chunk_layers(p, 0) * v, l = chunk_layers(p, pp - 1) * v;
  int mid = pp > 2 ? chunk_layers(p, 1) * v : f == l ? f : -1;
  if (f != mid) *first = f;
  if (l != mid) *last = l;
  if (v > 1 && (*first || *last)) {
    /* interleaved: Megatron-LM's chunk offsets divide by the middle ranks
     * (transformer_layer.py), so pp 2 names the first rank only and the
     * last becomes the one middle rank; and older releases count a middle
     * rank from the first even when it is not given: name it always */
    *first = f;
    if (pp == 2) *last = 0;
  }
  return 0;
}

int st__mg_check(const strata_plan_t *p, int *first, int *last) {
  int rc;
  if (!p || p->n_stages < 1 || !p->stages)
    return strata_error(STRATA_EINVAL, "megatron export: a plan with no stage");
  if ((rc = check_mode(p)) ||
      (rc = st__rules_refuse(p, STRATA_RULES_MEGATRON, "megatron")) ||
      (rc = check_stages(p)) || (rc = check_sizes(p)) || (rc = bias_check(p)) ||
      (rc = st__megatron_par_check(p)))
    return rc;
  return check_split(p, first, last);
}

/* ---- the flags ---- */

static void flag(st__mg_args_t *a, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void flag(st__mg_args_t *a, const char *name, const char *fmt, ...) {
  strata_buf_printf(&a->b, "%s%s", a->n++ ? a->sep : "", name);
  if (fmt) {
    va_list ap;
    char v[2048]; /* a pipeline layout of many stages */
    va_start(ap, fmt);
    vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    strata_buf_printf(&a->b, " %s", v);
  }
}

static void model_flags(st__mg_args_t *a, const strata_plan_t *p) {
  int llama = !strcmp(st__mg_family(p->family)->family, "llama");
  flag(a, "--num-layers", "%d", p->layers);
  flag(a, "--hidden-size", "%d", p->hidden);
  flag(a, "--num-attention-heads", "%d", p->heads);
  if (p->ffn) flag(a, "--ffn-hidden-size", "%d", p->ffn);
  flag(a, "--seq-length", "%d", p->seq_len);
  flag(a, "--max-position-embeddings", "%d",
       p->max_position > 0 ? p->max_position : p->seq_len);
  if (p->kv_heads && p->kv_heads != p->heads) {
    flag(a, "--group-query-attention", NULL);
    flag(a, "--num-query-groups", "%d", p->kv_heads);
  }
  if (llama) {
    if (p->glu_limit > 0) { /* gpt-oss's (argument_utils.py: quick_gelu) */
      flag(a, "--quick-geglu", NULL);
      flag(a, "--glu-linear-offset", "1");
      flag(a, "--activation-func-clamp-value", "%g", p->glu_limit);
    } else {
      flag(a, "--swiglu", NULL);
    }
    flag(a, "--normalization", "RMSNorm");
    /* the biases Megatron-LM can say (st__megatron_par_check) */
    if (!p->out_bias) flag(a, "--disable-bias-linear", NULL);
    flag(a, "--position-embedding-type", "%s",
         p->rope_scaling.type == STRATA_ROPE_SCALING_YARN && p->kv_lora <= 0
             ? "yarn"
             : "rope");
    flag(a, "--rotary-base", "%d", st__mg_rotary_base(p));
  }
  if (p->norm_eps > 0) flag(a, "--norm-epsilon", "%g", p->norm_eps);
  if (p->init_std > 0) flag(a, "--init-method-std", "%g", p->init_std);
  if (!strcmp(p->family, "bert")) /* the plan's model has the MLM head only */
    flag(a, "--bert-no-binary-head", NULL);
  if (p->untie_embeddings)
    flag(a, "--untie-embeddings-and-output-weights", NULL);
  if (!p->dropout) {
    flag(a, "--attention-dropout", "0");
    flag(a, "--hidden-dropout", "0");
  }
  /* the plan's attention: Megatron-LM's default (flash or cuDNN fused
   * attention), or the unfused one that holds the scores */
  if (!p->flash_attention) flag(a, "--attention-backend", "unfused");
}

/* What the plan assumed the framework overlaps (docs/cost-model.md). */
static void overlap_flags(st__mg_args_t *a, const strata_plan_t *p) {
  if (p->overlap_grad_reduce) flag(a, "--overlap-grad-reduce", NULL);
  if (p->overlap_param_gather) flag(a, "--overlap-param-gather", NULL);
  if (p->overlap_param_gather_step) { /* not with a distributed checkpoint */
    flag(a, "--overlap-param-gather-with-optimizer-step", NULL);
    flag(a, "--ckpt-format", "torch");
  }
  if (p->tp_comm_overlap) flag(a, "--tp-comm-overlap", NULL);
  if (p->overlap_ep_comm) { /* the MoE README's pair */
    flag(a, "--overlap-moe-expert-parallel-comm", NULL);
    flag(a, "--delay-wgrad-compute", NULL);
  }
  if (p->vpp > 1 && !p->overlap_p2p)
    flag(a, "--no-overlap-p2p-communication", NULL);
}

/* Megatron-LM's --pipeline-model-parallel-layout (megatron/core/
 * transformer/pipeline_parallel_layer_layout.py): stages split by '|',
 * 't' a transformer layer ("t*N" N of them), 'E' the embedding on the
 * first stage, 'L' the loss on the last, 'm' a multi-token prediction
 * module before it, runs of equal stages as "(...|)*N", which its parser
 * unrolls (strata_plan_layout): "Et*10|t*26L", "Et*4|(t*4|)*14tmL".
 * Written whole, whatever its length (a layout of 1024 stages). */
static void layout_flag(st__mg_args_t *a, const strata_plan_t *p) {
  char *v = strata_plan_layout_dup(p);
  if (v)
    strata_buf_printf(&a->b, "%s--pipeline-model-parallel-layout '%s'",
                      a->n++ ? a->sep : "", v); /* '|' and '*' */
  else
    a->b.oom = 1; /* the caller reports it */
  strata_free(v);
}

static void parallel_flags(st__mg_args_t *a, const strata_plan_t *p, int first,
                           int last) {
  flag(a, "--tensor-model-parallel-size", "%d", p->tp);
  flag(a, "--pipeline-model-parallel-size", "%d", p->pp);
  if (first == -2) { /* the embedding and the loss as layers */
    if (p->account_embedding > 0)
      flag(a, "--account-for-embedding-in-pipeline-split", NULL);
    if (p->account_loss > 0)
      flag(a, "--account-for-loss-in-pipeline-split", NULL);
    if (p->vpp > 1)
      flag(a, "--num-virtual-stages-per-pipeline-rank", "%d", p->vpp);
  } else if (first < 0) /* the layout's stages count pp x vpp: no vpp flag */
    layout_flag(a, p);
  else if (first)
    flag(a, "--decoder-first-pipeline-num-layers", "%d", first);
  if (last > 0) flag(a, "--decoder-last-pipeline-num-layers", "%d", last);
  /* uneven ranks take the virtual stages per rank (arguments.py) */
  if (p->vpp > 1 && (first > 0 || last > 0))
    flag(a, "--num-virtual-stages-per-pipeline-rank", "%d", p->vpp);
  else if (p->vpp > 1 && first == 0)
    flag(a, "--num-layers-per-virtual-pipeline-stage", "%d",
         p->layers / (p->pp * p->vpp));
  if (p->sequence_parallel > 0) flag(a, "--sequence-parallel", NULL);
  flag(a, "--micro-batch-size", "%d", p->micro_batch);
  flag(a, "--global-batch-size", "%d", p->global_batch);
  flag(a, "--bf16", NULL);
  if (p->zero_stage == 1) {
    flag(a, "--use-distributed-optimizer", NULL);
    if (p->recipe == STRATA_RECIPE_ZERO) flag(a, "--grad-reduce-in-bf16", NULL);
  }
  if (p->offload_layers > 0) /* arguments.py sets cpu_offloading */
    flag(a, "--cpu-offloading-num-layers", "%d", p->offload_layers);
  if (p->offload_modules > 0) { /* transformer_config.py offload_modules */
    char m[160];
    size_t o = 0;
    m[0] = '\0';
    for (int i = 0; strata_offload_modules_name(i) && o < sizeof m; i++)
      if (p->offload_modules & (1 << i))
        o += (size_t)snprintf(m + o, sizeof m - o, "%s%s", o ? " " : "",
                              strata_offload_modules_name(i));
    flag(a, "--fine-grained-activation-offloading", NULL);
    flag(a, "--offload-modules", "%s", m);
  }
  if (p->precision_aware_optimizer > 0) { /* optimizer_config.py */
    flag(a, "--use-precision-aware-optimizer", NULL);
    if (p->optimizer_offload > 0) { /* HybridDeviceOptimizer */
      flag(a, "--optimizer-cpu-offload", NULL);
      char f[32]; /* the fewest digits that read back as the plan's */
      snprintf(f, sizeof f, "%.15g", p->optimizer_offload);
      if (strtod(f, NULL) != p->optimizer_offload)
        snprintf(f, sizeof f, "%.17g", p->optimizer_offload);
      flag(a, "--optimizer-offload-fraction", "%s", f);
      flag(a, "--overlap-cpu-optimizer-d2h-h2d", NULL);
    }
    if (p->main_grads_dtype)
      flag(a, "--main-grads-dtype", "%s",
           strata_state_dtype_name(p->main_grads_dtype));
    if (p->exp_avg_dtype)
      flag(a, "--exp-avg-dtype", "%s",
           strata_state_dtype_name(p->exp_avg_dtype));
    if (p->exp_avg_sq_dtype)
      flag(a, "--exp-avg-sq-dtype", "%s",
           strata_state_dtype_name(p->exp_avg_sq_dtype));
  }
  if (p->recompute == STRATA_RECOMPUTE_SELECTIVE)
    flag(a, "--recompute-granularity", "selective");
  if (p->recompute == STRATA_RECOMPUTE_SELECTIVE && p->recompute_modules > 0) {
    char m[160];
    strata_recompute_modules_format((unsigned)p->recompute_modules, " ", m,
                                    sizeof m);
    flag(a, "--recompute-modules", "%s", m);
  }
  if (p->recompute == STRATA_RECOMPUTE_FULL) {
    flag(a, "--recompute-granularity", "full");
    flag(a, "--recompute-method", "%s",
         strata_recompute_method_name(p->recompute_method));
    flag(a, "--recompute-num-layers", "%d",
         p->recompute_layers > 0 ? p->recompute_layers : 1);
  }
}

int st__mg_args(const strata_plan_t *p, int first, int last, const char *sep,
                st__mg_args_t *a) {
  strata_buf_init(&a->b);
  a->sep = sep;
  a->n = 0;
  parallel_flags(a, p, first, last);
  overlap_flags(a, p);
  model_flags(a, p);
  st__megatron_par_flags(a, p);
  if (!a->b.oom) return 0;
  strata_buf_free(&a->b);
  return strata_error(STRATA_ENOMEM, "out of memory");
}

int strata_export_megatron(const strata_plan_t *p, char **text) {
  int first, last, rc;
  st__mg_args_t a;
  if (!text) return strata_error(STRATA_EINVAL, "megatron export: no output");
  *text = NULL;
  if ((rc = st__mg_check(p, &first, &last)) ||
      (rc = st__mg_args(p, first, last, " \\\n", &a)))
    return rc;
  if (strata_buf_puts(&a.b, "\n")) {
    strata_buf_free(&a.b);
    return strata_error(STRATA_ENOMEM, "out of memory");
  }
  *text = strata_buf_steal(&a.b, NULL);
  return 0;
}
