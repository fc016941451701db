/*
 * export_megatron.c - the plan as Megatron-LM arguments (pretrain_gpt.py),
 * one flag per line ending in a backslash, so the text pastes into a shell
 * script after the launcher line.  Only flag names from
 * reference/megatron_flags.txt are used.
 *
 * Megatron-LM runs one layout: the same tensor-parallel size in every
 * stage, layers split evenly (with optional first/last stage counts), the
 * distributed optimizer for ZeRO-1.  Before writing anything the plan is
 * checked against Megatron's own argument rules (world size, heads and
 * query groups divisible by tp, batch divisibility, sequence parallelism
 * only with tp > 1); a plan that breaks one is refused with the reason, so
 * what is exported is what was planned and costed.
 */
#include <string.h>

#include "merge/merge_int.h"

#define REFUSE(...)                                                            \
  strata_error(STRATA_EUNSUPPORTED, "megatron export: " __VA_ARGS__)

static int check_mode(const strata_plan_t *p) {
  if (!p->megatron)
    return REFUSE("a free-mode plan gives each operator its own layout, which "
                  "Megatron-LM cannot express; re-plan in Megatron mode");
  if (p->zero_stage >= 2)
    return REFUSE("ZeRO stage %d shards gradients%s, which Megatron-LM's "
                  "distributed optimizer does not; use 'strata export "
                  "deepspeed' or re-plan with ZeRO stage 0 or 1",
                  p->zero_stage, p->zero_stage >= 3 ? " and parameters" : "");
  if (p->sequence_parallel > 0 && p->tp < 2)
    return REFUSE("sequence parallelism needs tensor parallelism (tp %d)",
                  p->tp);
  if (p->tp_comm_overlap && p->sequence_parallel <= 0)
    return REFUSE("tensor-parallel communication overlap needs sequence "
                  "parallelism");
  if (p->overlap_p2p && p->vpp <= 1)
    return REFUSE("Megatron-LM overlaps p2p only with virtual pipeline "
                  "stages; re-plan without --overlap-p2p");
  if (p->overlap_param_gather && !p->overlap_grad_reduce)
    return REFUSE("--overlap-param-gather needs --overlap-grad-reduce");
  int vpp = p->vpp > 1 ? p->vpp : 1;
  if (p->n_stages != p->pp * vpp)
    return REFUSE("the plan has %d stages but pp %d x vpp %d", p->n_stages,
                  p->pp, vpp);
  for (int s = 0; s < p->n_stages; s++)
    if (st__stage_devices(&p->stages[s]) != p->tp)
      return REFUSE("stage %d runs on %d devices, not tp = %d: Megatron-LM "
                    "needs the same tensor-parallel size in every stage",
                    s, st__stage_devices(&p->stages[s]), p->tp);
  return 0;
}

static int check_sizes(const strata_plan_t *p) {
  int tp = p->tp, pp = p->pp, kv = p->kv_heads ? p->kv_heads : p->heads;
  if (tp < 1 || pp < 1 || p->dp < 1)
    return REFUSE("tp %d, pp %d, dp %d", tp, pp, p->dp);
  if (p->devices % (tp * pp) != 0 || p->devices != tp * pp * p->dp)
    return REFUSE("world size %d is not tp %d x pp %d x dp %d", p->devices, tp,
                  pp, p->dp);
  if (p->heads < 1 || p->heads % tp != 0)
    return REFUSE("%d attention heads are not divisible by tp %d", p->heads,
                  tp);
  if (kv % tp != 0)
    return REFUSE("%d query groups are not divisible by tp %d", kv, tp);
  if (p->micro_batch < 1 || p->global_batch % (p->micro_batch * p->dp) != 0)
    return REFUSE("global batch %d is not divisible by micro-batch %d x dp %d",
                  p->global_batch, p->micro_batch, p->dp);
  if (p->hidden < 1 || p->layers < 1 || p->seq_len < 1)
    return REFUSE("the plan lacks the model's sizes (layers %d, hidden %d, "
                  "seq %d)",
                  p->layers, p->hidden, p->seq_len);
  return 0;
}

/* Layer counts per stage; *first / *last are 0 when they equal the rest. */
static int check_split(const strata_plan_t *p, int *first, int *last) {
  int pp = p->n_stages, next = 0, mid = -1; /* model chunks, in order */
  *first = *last = 0;
  for (int s = 0; s < pp; s++) {
    const strata_plan_stage_t *st = &p->stages[s];
    if (st->layer_begin != next || st->layer_end <= st->layer_begin)
      return REFUSE("stage %d holds layers [%d, %d), not a split of the model "
                    "in order",
                    s, st->layer_begin, st->layer_end);
    next = st->layer_end;
  }
  if (next != p->layers)
    return REFUSE("the stages hold %d layers, the model has %d", next,
                  p->layers);
  for (int s = 1; s + 1 < pp; s++) {
    int n = p->stages[s].layer_end - p->stages[s].layer_begin;
    if (mid >= 0 && n != mid)
      return REFUSE("middle stages hold different layer counts (%d and %d); "
                    "Megatron-LM splits them evenly",
                    mid, n);
    mid = n;
  }
  int f = p->stages[0].layer_end, l = p->layers - p->stages[pp - 1].layer_begin;
  if (pp == 1) return 0;
  if (mid < 0) mid = f == l ? f : -1; /* pp 2: both explicit if unequal */
  if (f != mid) *first = f;
  if (l != mid) *last = l;
  if ((*first || *last) && p->vpp > 1)
    return REFUSE("uneven first/last stages with virtual pipeline stages");
  return 0;
}

static void flag(strata_buf_t *b, const char *name, const char *fmt, int v) {
  strata_buf_printf(b, "%s%s", b->len ? " \\\n" : "", name);
  if (fmt) strata_buf_printf(b, fmt, v);
}

static void model_flags(strata_buf_t *b, const strata_plan_t *p) {
  int llama = strcmp(p->family, "llama") == 0;
  flag(b, "--num-layers", " %d", p->layers);
  flag(b, "--hidden-size", " %d", p->hidden);
  flag(b, "--num-attention-heads", " %d", p->heads);
  if (p->ffn) flag(b, "--ffn-hidden-size", " %d", p->ffn);
  flag(b, "--seq-length", " %d", p->seq_len);
  flag(b, "--max-position-embeddings", " %d",
       p->max_position > 0 ? p->max_position : p->seq_len);
  if (p->kv_heads && p->kv_heads != p->heads) {
    flag(b, "--group-query-attention", NULL, 0);
    flag(b, "--num-query-groups", " %d", p->kv_heads);
  }
  if (llama) {
    flag(b, "--swiglu", NULL, 0);
    flag(b, "--normalization", " RMSNorm", 0);
    flag(b, "--disable-bias-linear", NULL, 0);
    flag(b, "--position-embedding-type", " rope", 0);
  }
  if (p->untie_embeddings)
    flag(b, "--untie-embeddings-and-output-weights", NULL, 0);
  if (!p->dropout) {
    flag(b, "--attention-dropout", " 0", 0);
    flag(b, "--hidden-dropout", " 0", 0);
  }
  /* the plan's attention: Megatron-LM's default (flash or cuDNN fused
   * attention), or the unfused one that holds the scores */
  if (!p->flash_attention) flag(b, "--attention-backend", " unfused", 0);
}

/* What the plan assumed the framework overlaps (docs/cost-model.md). */
static void overlap_flags(strata_buf_t *b, const strata_plan_t *p) {
  if (p->overlap_grad_reduce) flag(b, "--overlap-grad-reduce", NULL, 0);
  if (p->overlap_param_gather) flag(b, "--overlap-param-gather", NULL, 0);
  if (p->tp_comm_overlap) flag(b, "--tp-comm-overlap", NULL, 0);
  if (p->vpp > 1 && !p->overlap_p2p)
    flag(b, "--no-overlap-p2p-communication", NULL, 0);
}

static void parallel_flags(strata_buf_t *b, const strata_plan_t *p, int first,
                           int last) {
  flag(b, "--tensor-model-parallel-size", " %d", p->tp);
  flag(b, "--pipeline-model-parallel-size", " %d", p->pp);
  if (first) flag(b, "--decoder-first-pipeline-num-layers", " %d", first);
  if (last) flag(b, "--decoder-last-pipeline-num-layers", " %d", last);
  if (p->vpp > 1)
    flag(b, "--num-layers-per-virtual-pipeline-stage", " %d",
         p->layers / (p->pp * p->vpp));
  if (p->sequence_parallel > 0) flag(b, "--sequence-parallel", NULL, 0);
  flag(b, "--micro-batch-size", " %d", p->micro_batch);
  flag(b, "--global-batch-size", " %d", p->global_batch);
  flag(b, "--bf16", NULL, 0);
  if (p->zero_stage == 1) {
    flag(b, "--use-distributed-optimizer", NULL, 0);
    if (p->recipe == STRATA_RECIPE_ZERO)
      flag(b, "--grad-reduce-in-bf16", NULL, 0);
  }
  if (p->recompute == STRATA_RECOMPUTE_SELECTIVE)
    flag(b, "--recompute-granularity", " selective", 0);
  if (p->recompute == STRATA_RECOMPUTE_FULL) {
    flag(b, "--recompute-granularity", " full", 0);
    flag(b, "--recompute-method", " uniform", 0);
    flag(b, "--recompute-num-layers", " 1", 0);
  }
}

int strata_export_megatron(const strata_plan_t *p, char **text) {
  int first, last, rc;
  strata_buf_t b;
  if (!p || !text || p->n_stages < 1)
    return strata_error(STRATA_EINVAL, "megatron export: a plan with no stage");
  if ((rc = check_mode(p)) || (rc = check_sizes(p)) ||
      (rc = check_split(p, &first, &last)))
    return rc;
  if (p->vpp > 1 && p->layers % (p->pp * p->vpp) != 0)
    return REFUSE("%d layers do not split into pp %d x vpp %d chunks",
                  p->layers, p->pp, p->vpp);
  strata_buf_init(&b);
  parallel_flags(&b, p, first, last);
  overlap_flags(&b, p);
  model_flags(&b, p);
  strata_buf_puts(&b, "\n");
  if (b.oom) {
    strata_buf_free(&b);
    return strata_error(STRATA_ENOMEM, "out of memory");
  }
  *text = strata_buf_steal(&b, NULL);
  return 0;
}
