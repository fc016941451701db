/*
 * rules.c - the rulebook: what each framework accepts, one rule a row.
 *
 * A row names the frameworks that state the rule, when it applies (to one
 * fixed configuration, to a plan's options whether searched or given, or
 * to a saved plan before it is exported), where the framework states it, and
 * one function that is the predicate and the message together: it returns
 * non-zero when the configuration breaks the rule, having written why.  The
 * table is read in order and the first broken rule is the answer, so the order
 * is part of the rulebook: a configuration that breaks two rules is told the
 * first, as strata estimate always told it.  Adding a rule is adding a row.
 *
 * Most rules are Megatron-LM's (megatron/training/arguments.py,
 * megatron/core/parallel_state.py, transformer_config.py), which
 * Megatron-DeepSpeed shares; Strata states them for both.  The DeepSpeed
 * rows say what its config cannot set up (export/export_deepspeed.c), the
 * DTensor and torchtitan rows what their exports cannot express.  The
 * exporters ask the plan rows and keep only the limits of their own
 * formats (a flavor, a name map, the plan file's own consistency).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include "pipeline/search.h"

typedef strata_rules_config_t cfg_t;

/* Every switch and choice of plan_fields.h as options or a plan set it. */
#define SWITCH_FROM(F, m, ...) c->m = F->m;
#define SWITCHES_FROM(src) STRATA_PLAN_SWITCHES(SWITCH_FROM, src)
#define CHOICE_FROM(F, kind, m, ...) c->m = F->m;
#define CHOICES_FROM(src) STRATA_PLAN_CHOICES(CHOICE_FROM, src)

#define MG STRATA_RULES_MEGATRON
#define DS STRATA_RULES_DEEPSPEED
#define CONFIG STRATA_RULES_CONFIG
#define OPTIONS STRATA_RULES_OPTIONS
#define PLAN STRATA_RULES_PLAN
#define TORCH STRATA_RULES_DTENSOR
#define TITAN STRATA_RULES_TORCHTITAN
/* the search's stages (search.h) */
#define AT_TP ST__AT_TP
#define AT_CP ST__AT_CP
#define AT_CP_COMM ST__AT_CP_COMM
#define AT_EP ST__AT_EP
#define AT_EP_LAYOUT ST__AT_EP_LAYOUT
#define AT_LAYER ST__AT_LAYER
#define AT_SP ST__AT_SP
#define AT_FAMILY ST__AT_FAMILY
#define AT_PIPE ST__AT_PIPE
#define AT_SPLIT ST__AT_SPLIT
#define AT_CFG ST__AT_CFG
#define AT_OPT_OFFLOAD ST__AT_OPT_OFFLOAD
#define AT_ACT_OFFLOAD ST__AT_ACT_OFFLOAD

/* Write the reason; the value is 1 (the rule is broken). */
/* A predicate-only ask (n 0: the search's) formats nothing. */
#define SAY(...) ((n) ? snprintf(why, n, __VA_ARGS__) : 0, 1)

typedef struct {
  const char *name;
  unsigned frameworks, when;
  const char *source;
  int (*broken)(const cfg_t *c, char *why, size_t n);
} rule_t;

/* ---- the defaults a rule reads ---- */

static int cp_of(const cfg_t *c) {
  return c->cp > 0 ? c->cp : 1;
}
static int mb_of(const cfg_t *c) {
  return c->micro_batch > 0 ? c->micro_batch : 1;
}
static int vpp_of(const cfg_t *c) {
  return c->vpp > 1 ? c->vpp : 1;
}
static int etp_of(const cfg_t *c) {
  return c->etp ? c->etp : c->tp;
}
static int dp_of(const cfg_t *c) {
  long d = (long)c->tp * cp_of(c) * c->pp;
  return c->dp ? c->dp : d > 0 ? (int)(c->world / d) : 0;
}
/* Micro-batches a step. */
static int micro_of(const cfg_t *c) {
  long d = (long)mb_of(c) * dp_of(c);
  return d > 0 ? (int)(c->global_batch / d) : 0;
}
static int deepspeed(const cfg_t *c) {
  return c->target == DS;
}

/* ---- the sizes ---- */

static int world(const cfg_t *c, char *why, size_t n) {
  int tp = c->tp, pp = c->pp, cp = cp_of(c);
  return !c->dp && c->world % (tp * cp * pp) &&
         SAY("world size %d is not divisible by tensor x context x pipeline "
             "parallel size %d x %d x %d",
             c->world, tp, cp, pp);
}
static int used(const cfg_t *c, char *why, size_t n) {
  long u = (long)dp_of(c) * c->tp * cp_of(c) * c->pp;
  return u > c->world &&
         SAY("tp x cp x pp x dp = %ld exceeds the %d GPUs of the cluster", u,
             c->world);
}
static int rule_heads(const cfg_t *c, char *why, size_t n) {
  return c->heads && c->heads % c->tp &&
         SAY("the number of attention heads (%d) must be divisible by the "
             "tensor-parallel size %d",
             c->heads, c->tp);
}
static int rule_groups(const cfg_t *c, char *why, size_t n) {
  return c->kv_heads && c->kv_heads % c->tp &&
         SAY("the number of query groups (%d) must be divisible by the "
             "tensor-parallel size %d",
             c->kv_heads, c->tp);
}
static int rule_cp_seq(const cfg_t *c, char *why, size_t n) {
  int cp = cp_of(c);
  return cp > 1 && c->seq_len % (2 * cp) &&
         SAY("seq-length (%d) should be a multiple of 2 * "
             "context-parallel-size (%d)",
             c->seq_len, cp);
}
/* Transformer Engine runs sliding-window attention with the keys and
 * values all-gathered (or all-to-all), never around the ring
 * (transformer_engine/pytorch/attention/dot_product_attention/
 * context_parallel.py asserts it); cp 0 (choose) may choose a ring. */
static int rule_cp_window(const cfg_t *c, char *why, size_t n) {
  return c->windowed && c->cp_comm == STRATA_CP_P2P && c->cp != 1 &&
         SAY("model '%s' has sliding-window attention, which Transformer "
             "Engine's context parallelism runs with the keys and values "
             "all-gathered, not around a ring: use --cp-comm allgather (the "
             "default for it), or --cp 1",
             c->model ? c->model : "?");
}
static int rule_cp_fused(const cfg_t *c, char *why, size_t n) {
  return cp_of(c) > 1 && !c->flash_attention &&
         SAY("context parallelism runs in Transformer Engine's fused "
             "attention, which model '%s' does not use (the gpt presets "
             "follow the 2021 runs): give --flash-attention",
             c->model ? c->model : "?");
}

/* ---- the mixture of experts (Megatron-Core, and the layouts Strata
 * models: docs/cost-model.md, "Expert parallelism") ---- */

static int ep_dense(const cfg_t *c, char *why, size_t n) {
  return !c->experts && (c->ep > 1 || (c->etp && c->etp != c->tp)) &&
         SAY("num_experts must be non None to use expert parallelism: the "
             "model has no experts");
}
/* Megatron-LM's conditions on the experts' all-to-all overlap, as two
 * rows of one name and one message: what a family decides (the search
 * asks it there), and what the pipeline and the batch decide. */
static int ep_overlap_say(char *why, size_t n) {
  return SAY("--overlap-moe-expert-parallel-comm needs expert parallelism "
             "(--ep > 1), --vpp > 1 with pipeline parallelism, no full "
             "recompute, one MTP module at most, Megatron mode and two "
             "micro-batches a step to pair (Megatron-LM's rules)");
}
static int rule_ep_overlap(const cfg_t *c, char *why, size_t n) {
  return c->overlap_ep_comm &&
         (!c->experts || c->ep <= 1 || c->recompute == STRATA_RECOMPUTE_FULL ||
          c->mtp_layers > 1 || !c->megatron) &&
         ep_overlap_say(why, n);
}
static int rule_ep_overlap_pipeline(const cfg_t *c, char *why, size_t n) {
  return c->overlap_ep_comm &&
         ((c->pp > 1 && c->vpp <= 1) ||
          c->global_batch < 2 * mb_of(c) * (dp_of(c) > 0 ? dp_of(c) : 1)) &&
         ep_overlap_say(why, n);
}
/* The rules below read a mixture of experts with ep given. */
static int moe(const cfg_t *c) {
  return c->experts && c->ep;
}
static int rule_ep_experts(const cfg_t *c, char *why, size_t n) {
  return moe(c) && c->experts % c->ep &&
         SAY("number of experts (%d) should be a multiple of expert model "
             "parallel_size (%d)",
             c->experts, c->ep);
}
static int ep_world(const cfg_t *c, char *why, size_t n) {
  int cp = cp_of(c), dp = dp_of(c), etp = etp_of(c);
  return moe(c) && (long)c->tp * cp * dp % ((long)etp * c->ep) &&
         SAY("tp x cp x dp = %d x %d x %d is not divisible by expert tensor "
             "x expert model parallel size %d x %d",
             c->tp, cp, dp, etp, c->ep);
}
static int etp_sizes(const cfg_t *c, char *why, size_t n) {
  int etp = etp_of(c);
  return moe(c) && etp != 1 && etp != c->tp &&
         SAY("expert tensor-parallel size %d: Strata models 1 and the "
             "tensor-parallel size %d",
             etp, c->tp);
}
static int rule_etp_ffn(const cfg_t *c, char *why, size_t n) {
  return moe(c) && c->moe_ffn % etp_of(c) &&
         SAY("the experts' hidden size %d is not divisible by the expert "
             "tensor-parallel size %d",
             c->moe_ffn, etp_of(c));
}
/* The expert-parallel group Strata lays out: whole tensor-parallel groups
 * (etp 1), then whole context-parallel groups, then data-parallel
 * replicas. */
static int ep_inner(const cfg_t *c) {
  return etp_of(c) == 1 ? c->tp : 1;
}
static int rule_ep_layout(const cfg_t *c, char *why, size_t n) {
  int ep = c->ep, cp = cp_of(c), in = ep_inner(c);
  return moe(c) && (ep % in || (cp > 1 && ep / in > 1 && (ep / in) % cp)) &&
         SAY("expert-parallel size %d: with etp %d it must be a multiple of "
             "%d, and what is left a multiple of cp %d (or 1): the "
             "expert-parallel group Strata lays out takes whole tensor- and "
             "context-parallel groups",
             ep, etp_of(c), in, cp);
}
static int ep_replicas(const cfg_t *c, char *why, size_t n) {
  int in = ep_inner(c), cp = cp_of(c), left = moe(c) ? c->ep / in : 1;
  int outer = left / (cp > 1 && left > 1 ? cp : 1);
  return moe(c) && dp_of(c) % outer &&
         SAY("expert-parallel size %d spans %d data-parallel replicas, which "
             "do not divide dp %d",
             c->ep, outer, dp_of(c));
}
static int rule_ep_sp(const cfg_t *c, char *why, size_t n) {
  return moe(c) && c->ep > 1 && c->tp > 1 && c->sequence_parallel == 0 &&
         SAY("when using expert parallelism and tensor parallelism, "
             "sequence parallelism must be used");
}

/* ---- the pipeline, the batch and the layouts ---- */

static int pp_layers(const cfg_t *c, char *why, size_t n) {
  return c->pp > c->layers &&
         SAY("pipeline size %d exceeds the %d layers", c->pp, c->layers);
}
static int batch(const cfg_t *c, char *why, size_t n) {
  int mb = mb_of(c), dp = dp_of(c);
  return c->global_batch % (mb * dp) &&
         SAY("global batch size (%d) is not divisible by micro batch size "
             "(%d) times data parallel size (%d)",
             c->global_batch, mb, dp);
}
static int rule_sp_tp(const cfg_t *c, char *why, size_t n) {
  return c->sequence_parallel > 0 && c->tp == 1 &&
         SAY("sequence parallelism needs a tensor-parallel size above 1");
}
/* ZeRO 2 and 3 with pipelining.  DeepSpeed's pipeline engine asserts
 * ZeRO stage 0 or 1 (deepspeed/runtime/pipe/engine.py).  Megatron-LM
 * runs Megatron-FSDP (--use-megatron-fsdp, version 1, its default) with
 * a pipeline: arguments.py asserts pp 1 only of --use-torch-fsdp2, and
 * the version 2 adapter, which refuses pp (mcore_fsdp_adapter.py), is
 * not what the export asks for.  torchtitan runs FSDP2 under PyTorch's
 * pipelining (torchtitan/models/llama3/infra/parallelize.py, apply_fsdp
 * with pp_enabled). */
static int rule_zero_pp(const cfg_t *c, char *why, size_t n) {
  return deepspeed(c) && c->zero_stage >= 2 && c->pp > 1 &&
         SAY("ZeRO stage %d shards gradients%s over the data-parallel ranks, "
             "which DeepSpeed runs without pipeline parallelism (its "
             "pipeline engine supports ZeRO stage 0 and 1): use --pp 1 or "
             "--zero 1, or plan for Megatron-FSDP (--framework megatron) or "
             "torchtitan's FSDP2 (--framework torchtitan)",
             c->zero_stage, c->zero_stage >= 3 ? " and parameters" : "");
}
static int tp_node(const cfg_t *c, char *why, size_t n) {
  int tp = c->tp, g = c->gpus_per_node;
  return (tp > g ? tp % g : g % tp) &&
         SAY("tensor-parallel size %d: a group within a node must divide its "
             "%d GPUs, one across nodes take whole nodes",
             tp, g);
}
static int rule_vpp_pp(const cfg_t *c, char *why, size_t n) {
  return c->vpp > 1 && c->pp < 2 &&
         SAY("interleaving (--vpp %d) needs a pipeline of 2 stages or more",
             c->vpp);
}
static int rule_vpp_micro(const cfg_t *c, char *why, size_t n) {
  int m = micro_of(c);
  return c->vpp > 1 && (m < c->pp || m % c->pp) &&
         SAY("interleaving needs the micro-batches per step (%d) to be a "
             "multiple of the pipeline size %d",
             m, c->pp);
}

/* ---- the layer split (megatron/core/transformer/transformer_config.py):
 * a first and a last rank of the sizes given, the rest split evenly over
 * the middle ranks, each rank's layers a multiple of the virtual stages;
 * with neither given, equal ranks ---- */

static int given(const cfg_t *c) {
  return c->first_layers || c->last_layers;
}
/* The embedding (1) and the loss (2) counted as layers of the split. */
static int acct_of(const cfg_t *c) {
  return (c->account_embedding > 0) | (c->account_loss > 0) << 1;
}
/* DeepSpeed's PipelineModule with a partition method given: its split
 * (ds_partition.c) */
static int ds_method(const cfg_t *c) {
  return deepspeed(c) && c->ds_partition > 0;
}
static int split_even(const cfg_t *c, char *why, size_t n) {
  int v = vpp_of(c);
  return c->pp >= 2 && !given(c) && !acct_of(c) && !c->pipeline_layout &&
         !deepspeed(c) && c->layers % (c->pp * v) &&
         SAY("%d layers do not split evenly over %d pipeline stages%s: count "
             "the embedding and the loss as layers (--account-for-embedding, "
             "--account-for-loss), give --first-stage-layers and/or "
             "--last-stage-layers (Megatron-LM's --decoder-first/last-"
             "pipeline-num-layers) or every stage's (--pipeline-layout)",
             c->layers, c->pp, v > 1 ? " of equal virtual stages" : "");
}
/* ---- the embedding and the loss as layers, an explicit layout
 * (rules/layouts.c) ---- */
static int account_uneven(const cfg_t *c, char *why, size_t n) {
  return acct_of(c) && (given(c) || c->pipeline_layout) &&
         SAY("--account-for-embedding/--account-for-loss split the layers "
             "evenly; Megatron-LM refuses them with %s",
             given(c) ? "--first-stage-layers/--last-stage-layers"
                      : "--pipeline-layout");
}
static int account_split(const cfg_t *c, char *why, size_t n) {
  int a = acct_of(c), v = vpp_of(c), k[ST__MAX_PP];
  int units = c->layers + (a & 1) + !!(a & 2);
  return a && c->pp >= 2 && !given(c) &&
         st__split_accounted(c->layers, c->pp, v, a, k) < 0 &&
         SAY("%d layers with the %s counted (%d units) do not split evenly "
             "over %d x %d virtual stages of two units or more where one is "
             "the %s",
             c->layers,
             a == 3   ? "embedding and the loss"
             : a == 1 ? "embedding"
                      : "loss",
             units, c->pp, v,
             a == 3   ? "embedding or the loss"
             : a == 1 ? "embedding"
                      : "loss");
}
static int account_pp(const cfg_t *c, char *why, size_t n) {
  /* with one stage Megatron-LM builds every layer there either way */
  return c->pipeline_layout && c->pp == 1 &&
         SAY("--pipeline-layout: a layer split needs a pipeline (--pp 2 or "
             "more)");
}
static int layout_form(const cfg_t *c, char *why, size_t n) {
  int k[ST__MAX_PP], K = 0;
  if (!c->pipeline_layout) return 0;
  if (!c->megatron)
    return SAY("--pipeline-layout is Megatron-LM's; free mode chooses its "
               "own splits (drop --free)");
  if (!c->pp)
    return SAY("--pipeline-layout needs --pp (its virtual stages are pp x "
               "vpp)");
  if (given(c))
    return SAY("--pipeline-layout says every stage's layers: drop "
               "--first-stage-layers/--last-stage-layers");
  if (st__layout_parse(c->pipeline_layout, c->layers, c->mtp_layers, k,
                       ST__MAX_PP, &K, why, n))
    return 1;
  if (K % c->pp || K / c->pp > 64)
    return SAY("--pipeline-layout has %d virtual stages: a multiple of --pp "
               "%d, at most 64 per rank",
               K, c->pp);
  return c->vpp > 0 && K / c->pp != vpp_of(c) &&
         SAY("--pipeline-layout has %d virtual stages per rank (%d over "
             "--pp %d), --vpp says %d",
             K / c->pp, K, c->pp, vpp_of(c));
}
static int rest_of(const cfg_t *c) {
  return c->layers - c->first_layers - c->last_layers;
}
static int middle_of(const cfg_t *c) {
  return c->pp - (c->first_layers > 0) - (c->last_layers > 0);
}
static int split_rest(const cfg_t *c, char *why, size_t n) {
  int rest = rest_of(c), mid = middle_of(c);
  return c->pp >= 2 && given(c) && (rest < 0 || (rest > 0) != (mid > 0)) &&
         SAY("%d layers left for %d middle pipeline stages (of %d layers, %d "
             "stages)",
             rest, mid, c->layers, c->pp);
}
static int split_middle(const cfg_t *c, char *why, size_t n) {
  int rest = rest_of(c), mid = middle_of(c);
  return c->pp >= 2 && given(c) && mid && rest % mid &&
         SAY("%d layers do not split evenly over the %d middle pipeline "
             "stages",
             rest, mid);
}
static int split_vpp(const cfg_t *c, char *why, size_t n) {
  int rest = rest_of(c), mid = middle_of(c), v = vpp_of(c);
  return c->pp >= 2 && given(c) && mid && (rest / mid) % v &&
         SAY("%d layers on each middle pipeline stage are not divisible by "
             "--vpp %d",
             rest / mid, v);
}

/* ---- selective recompute's modules (transformer_config.py,
 * recompute_modules) ---- */
static int modules_selective(const cfg_t *c, char *why, size_t n) {
  return c->recompute_modules && c->recompute >= 0 &&
         c->recompute != STRATA_RECOMPUTE_SELECTIVE &&
         SAY("--recompute-modules are selective recompute's; they cannot go "
             "with --recompute %s",
             strata_recompute_name(c->recompute));
}
/* Full recompute's unit (--recompute-num-layers, --recompute-method):
 * Megatron-LM's arguments of --recompute-granularity full alone
 * (transformer_config.py: "recompute_method ... only with full"). */
static int recompute_unit(const cfg_t *c, char *why, size_t n) {
  return (c->recompute_layers > 0 || c->recompute_method > 0) &&
         c->recompute >= 0 && c->recompute != STRATA_RECOMPUTE_FULL &&
         SAY("--recompute-num-layers and --recompute-method are full "
             "recompute's; they cannot go with --recompute %s",
             strata_recompute_name(c->recompute));
}
static int modules_fp8(const cfg_t *c, char *why, size_t n) {
  unsigned m =
      c->recompute_modules & (STRATA_RCM_LAYERNORM | STRATA_RCM_MOE_ACT);
  int both = m == (STRATA_RCM_LAYERNORM | STRATA_RCM_MOE_ACT);
  const char *which = both                        ? "layernorm and moe_act"
                      : m == STRATA_RCM_LAYERNORM ? "layernorm"
                                                  : "moe_act",
             *it = both ? "them" : "it";
  return c->lowp == STRATA_LOWP_DELAYED && m &&
         SAY("--recompute-modules %s: Megatron-LM refuses %s with FP8's "
             "delayed scaling (--fp8-recipe delayed, the default before "
             "Blackwell); give another --fp8-recipe, drop %s or plan in bf16",
             which, it, it);
}
static int modules_model(const cfg_t *c, char *why, size_t n) {
  unsigned m = c->recompute_modules;
  const char *what =
      (m & (STRATA_RCM_MOE | STRATA_RCM_MOE_ACT)) && !c->experts
          ? "moe and moe_act need a mixture of experts"
      : (m & STRATA_RCM_SHARED_EXPERTS) && !c->shared
          ? "shared_experts needs shared experts"
      : (m & STRATA_RCM_MLA_UP_PROJ) && !c->mla
          ? "mla_up_proj needs multi-head latent attention"
      : (m & STRATA_RCM_MLP) && c->layers && c->moe_layers >= c->layers
          ? "mlp needs a layer with a dense MLP (the experts' "
            "are moe)"
          : NULL;
  return what && SAY("--recompute-modules: %s, which %s does not have", what,
                     c->model ? c->model : "the model");
}

/* ---- the precision-aware optimizer (megatron/core/optimizer/
 * optimizer_config.py: main_grads_dtype and the moments' types only with
 * it; distrib_optimizer.py runs it) ---- */
static int state_types(const cfg_t *c, char *why, size_t n) {
  return c->state_dtypes && c->precision_aware_optimizer <= 0 &&
         SAY("--main-grads-dtype, --exp-avg-dtype and --exp-avg-sq-dtype "
             "other than fp32 need --precision-aware-optimizer");
}
static int pao_zero(const cfg_t *c, char *why, size_t n) {
  return c->precision_aware_optimizer > 0 && c->zero_stage == 0 &&
         SAY("--precision-aware-optimizer runs in Megatron-LM's distributed "
             "optimizer (--zero 1 or more), not with --zero 0");
}

/* ---- the optimizer offloaded to the host (arguments.py: "The optimizer
 * cpu offload must be used in conjunction with
 * --use-precision-aware-optimizer", and with --fp8-param-gather only
 * under the delayed recipe) ---- */
static int rule_optimizer_offload(const cfg_t *c, char *why, size_t n) {
  double f = c->optimizer_offload;
  if (f == 0) return 0;
  if (!(f > 0 && f <= 1))
    return SAY("--optimizer-offload-fraction %g is not in (0, 1]", f);
  if (c->precision_aware_optimizer <= 0)
    return SAY("--optimizer-offload-fraction needs "
               "--precision-aware-optimizer (Megatron-LM's hybrid device "
               "optimizer runs in its code path)");
  return c->fp8_param_gather > 0 && c->lowp != STRATA_LOWP_DELAYED &&
         SAY("--optimizer-offload-fraction with --fp8-param-gather needs "
             "--fp8-recipe delayed (Megatron-LM's arguments.py)");
}

/* ---- layers' activations offloaded to the host (transformer_config.py,
 * cpu_offloading) ---- */
static int rule_cpu_offloading(const cfg_t *c, char *why, size_t n) {
  int k = c->offload_layers;
  if (!k) return 0;
  if (c->layers && k >= c->layers)
    return SAY("--cpu-offloading-num-layers %d: Megatron-LM offloads fewer "
               "layers than the model's %d",
               k, c->layers);
  if (c->pp > 1)
    return SAY("--cpu-offloading-num-layers: Megatron-LM offloads without "
               "pipeline parallelism only (--pp 1)");
  if (c->recompute >= 0 && c->recompute != STRATA_RECOMPUTE_NONE)
    return SAY("--cpu-offloading-num-layers: Megatron-LM offloads with no "
               "recompute (--recompute none)");
  return c->cuda_graph_impl > 0 &&
         c->cuda_graph_impl != STRATA_CUDA_GRAPH_NONE &&
         c->cuda_graph_impl != STRATA_CUDA_GRAPH_FULL &&
         SAY("--cpu-offloading-num-layers: CUDA graphs only of the whole "
             "step (--cuda-graph-impl full_iteration) with offloading");
}

/* ---- fine-grained activation offloading (transformer_config.py
 * __post_init__: offload_modules; docs/user-guide/features/
 * fine_grained_activation_offloading.md) ---- */
static int fg_modules(const cfg_t *c, char *why, size_t n) {
  unsigned m = (unsigned)c->offload_modules;
  if ((m & STRATA_OFM_ATTN_PROJ) && !(m & STRATA_OFM_CORE_ATTN))
    return SAY("--offload-modules attn_proj needs core_attn too: the input "
               "of attn_proj is the output of core_attn, which "
               "core_attn's backward needs (Megatron-LM's "
               "transformer_config.py)");
  if ((m & (STRATA_OFM_EXPERT_FC1 | STRATA_OFM_MOE_ACT)) && !c->experts)
    return SAY("--offload-modules %s: model '%s' has no experts, so no such "
               "module to offload",
               m & STRATA_OFM_EXPERT_FC1 ? "expert_fc1" : "moe_act",
               c->model ? c->model : "?");
  if ((m & (STRATA_OFM_EXPERT_FC1 | STRATA_OFM_MOE_ACT)) &&
      (c->recompute_modules & STRATA_RCM_MOE))
    return SAY("--offload-modules expert_fc1/moe_act with --recompute-modules "
               "moe: the whole MoE layer is recomputed, so nothing inside it "
               "is kept to offload (Megatron-LM's transformer_config.py)");
  /* a module selective recompute reruns keeps nothing to offload */
  unsigned r = c->recompute == STRATA_RECOMPUTE_NONE ||
                       c->recompute == STRATA_RECOMPUTE_FULL
                   ? 0
                   : c->recompute_modules;
  const char *both =
      (m & STRATA_OFM_CORE_ATTN) && (r & STRATA_RCM_CORE_ATTN) ? "core_attn"
      : (m & (STRATA_OFM_ATTN_NORM | STRATA_OFM_MLP_NORM)) &&
              (r & STRATA_RCM_LAYERNORM)
          ? "attn_norm/mlp_norm (layernorm)"
      : (m & STRATA_OFM_MOE_ACT) && (r & STRATA_RCM_MOE_ACT) ? "moe_act"
                                                             : NULL;
  return both && SAY("--offload-modules %s is recomputed too "
                     "(--recompute-modules): a recomputed module keeps "
                     "nothing to offload; leave it out of one of them",
                     both);
}
static int rule_fg_offload(const cfg_t *c, char *why, size_t n) {
  unsigned m = (unsigned)c->offload_modules;
  int g = STRATA_CHOICE(c->cuda_graph_impl);
  if (!m) return 0;
  if (c->offload_layers > 0)
    return SAY("--offload-modules with --cpu-offloading-num-layers: "
               "Megatron-LM's fine-grained activation offloading cannot be "
               "enabled with cpu_offloading (transformer_config.py)");
  if (c->recompute == STRATA_RECOMPUTE_FULL || c->recompute_layers > 0)
    return SAY("--offload-modules with --recompute full: a recomputed "
               "layer keeps only its input for backward, so its modules "
               "have nothing to offload; use --recompute none or selective");
  if (fg_modules(c, why, n)) return 1;
  if (g == STRATA_CUDA_GRAPH_LOCAL || g == STRATA_CUDA_GRAPH_FULL)
    return SAY("--offload-modules with --cuda-graph-impl %s: Megatron-LM "
               "offloads under its own CUDA graphs only the experts' modules "
               "with partial scopes, or with a cap on the copies in flight "
               "(--fine-grained-offloading-max-inflight-offloads), which "
               "strata does not state; use --cuda-graph-impl "
               "transformer_engine or none",
               strata_cuda_graph_impl_name(c->cuda_graph_impl));
  return g == STRATA_CUDA_GRAPH_TE &&
         (m & (STRATA_OFM_ATTN_NORM | STRATA_OFM_MLP_NORM)) &&
         SAY("--offload-modules attn_norm/mlp_norm with CUDA graphs: the "
             "norms cross the graphs' boundaries and cannot be offloaded "
             "(Megatron-LM's fine-grained activation offloading guide)");
}

/* ---- what Megatron-LM's arguments allow of a plan's overlaps
 * (megatron/training/arguments.py) ---- */

static int tp_overlap(const cfg_t *c, char *why, size_t n) {
  return c->tp_comm_overlap && c->sequence_parallel <= 0 &&
         SAY("tensor-parallel communication overlap needs sequence "
             "parallelism");
}
static int p2p_overlap(const cfg_t *c, char *why, size_t n) {
  return c->overlap_p2p > 0 && c->vpp <= 1 &&
         SAY("Megatron-LM overlaps p2p only with virtual pipeline stages; "
             "re-plan without --overlap-p2p");
}
static int scatter(const cfg_t *c, char *why, size_t n) {
  int tp = c->tp, ds = c->framework == STRATA_FRAMEWORK_DEEPSPEED;
  return c->scatter_gather > 0 && c->sequence_parallel <= 0 && c->pp > 1 &&
         tp > 1 &&
         SAY("the plan sends 1/%d of each boundary tensor between stages "
             "(%s), which Megatron-LM no longer does; re-plan %s",
             tp,
             ds ? "as DeepSpeed's pipeline engine does"
                : "2021 Megatron-LM's scatter/gather",
             ds ? "with --framework megatron" : "without --scatter-gather");
}
static int param_gather(const cfg_t *c, char *why, size_t n) {
  return c->overlap_param_gather > 0 && !c->overlap_grad_reduce &&
         SAY("--overlap-param-gather needs --overlap-grad-reduce");
}

/* Megatron-LM's --overlap-param-gather-with-optimizer-step (arguments.py
 * at d98e8a64: "only supported with distributed optimizer", "Must use
 * --overlap-param-gather-with-optimizer-step with --overlap-param-gather",
 * "only supported with interleaved pipeline parallelism" and "not
 * supported with distributed checkpointing yet"): ZeRO 1, the distributed
 * optimizer whose checkpoint the export writes in the torch format (ZeRO
 * 2 and 3 run Megatron-FSDP, whose fsdp_dtensor checkpoint is a
 * distributed one), the parameter gather overlapped and vpp > 1.  Of a
 * configuration or a plan; STRATA_AUTO (estimate's, chosen) is not
 * broken. */
static int gather_step(const cfg_t *c, char *why, size_t n) {
  if (c->overlap_param_gather_step <= 0) return 0;
  if (c->zero_stage >= 0 && c->zero_stage != 1)
    return SAY("--overlap-param-gather-with-optimizer-step needs the "
               "distributed optimizer without FSDP (--zero 1), not ZeRO %d "
               "(Megatron-LM's arguments.py)",
               c->zero_stage);
  if (c->overlap_param_gather == 0)
    return SAY("--overlap-param-gather-with-optimizer-step needs "
               "--overlap-param-gather (dp > 1 and --overlap-grad-reduce)");
  return c->vpp <= 1 &&
         SAY("--overlap-param-gather-with-optimizer-step runs with "
             "interleaved pipeline parallelism only (--vpp > 1; Megatron-"
             "LM's arguments.py)");
}

/* Megatron-LM keeps the compute weights in FP8 only under an FP8 recipe,
 * and gathers them in FP8 only from the distributed optimizer (or FSDP);
 * asked of the options, so that every configuration searched is one. */
static int fp8_gather(const cfg_t *c, char *why, size_t n) {
  if (!c->fp8_param_gather) return 0;
  if (!st__narrow(c->precision))
    return SAY("--fp8-param-gather keeps the weights in FP8 (or FP4): give "
               "--precision fp8 or fp4");
  return c->zero_stage == 0 &&
         SAY("--fp8-param-gather needs the distributed optimizer "
             "(--zero 1 or more)");
}

/* ---- a switch given on that the configuration makes meaningless: the
 * plan could not record it as given, so it is refused (a switch given off
 * is what the plan runs; left out, STRATA_AUTO, it is the framework's
 * default where it means something).  Asked of the options: what the
 * search chooses keeps it where its configuration runs it, as the
 * experts' overlap always was. ---- */

/* dp is 1 whatever the search chooses: given, or tp x pp the cluster. */
static int dp_one(const cfg_t *c) {
  return c->dp == 1 || (!c->dp && c->tp > 0 && c->pp > 0 && dp_of(c) == 1);
}
static int grad_reduce(const cfg_t *c, char *why, size_t n) {
  if (c->overlap_grad_reduce <= 0) return 0;
  if (deepspeed(c) && c->zero_stage != 2 && c->zero_stage != 3)
    return SAY("--overlap-grad-reduce: DeepSpeed overlaps the gradient "
               "reduction (its overlap_comm) only from ZeRO 2: give --zero 2 "
               "or 3, or leave the option out");
  return dp_one(c) &&
         SAY("--overlap-grad-reduce: with dp 1 there is no data-parallel "
             "gradient reduction to overlap; leave the option out");
}
static int param_gather_on(const cfg_t *c, char *why, size_t n) {
  if (c->overlap_param_gather <= 0) return 0;
  if (deepspeed(c))
    return SAY("--overlap-param-gather: DeepSpeed's engine does not overlap "
               "the parameter gather after its step; leave the option out");
  if (c->zero_stage == 0)
    return SAY("--overlap-param-gather overlaps the distributed optimizer's "
               "parameter gather: it needs --zero 1 or more");
  return dp_one(c) && SAY("--overlap-param-gather: with dp 1 there is no "
                          "parameter gather to overlap; leave the option out");
}
/* the optimizer step's overlap: Megatron-LM's alone, given ZeRO 1, the
 * parameter gather and interleaving where the options fix them */
static int gather_step_on(const cfg_t *c, char *why, size_t n) {
  if (c->overlap_param_gather_step <= 0) return 0;
  if (deepspeed(c) || c->framework == STRATA_FRAMEWORK_TORCHTITAN)
    return SAY("--overlap-param-gather-with-optimizer-step is Megatron-LM's: "
               "plan with --framework megatron, or leave the option out");
  if ((c->zero_stage >= 0 && c->zero_stage != 1) ||
      c->overlap_param_gather == 0 || c->overlap_grad_reduce == 0)
    return SAY("--overlap-param-gather-with-optimizer-step needs --zero 1 "
               "and the parameter gather overlapped (--overlap-param-gather, "
               "--overlap-grad-reduce)");
  return (c->vpp == 1 || c->pp == 1 || !c->megatron) &&
         SAY("--overlap-param-gather-with-optimizer-step runs with "
             "interleaved pipeline parallelism only: --vpp > 1 and --pp 2 "
             "or more (or neither given), in Megatron mode");
}
static int tp_overlap_on(const cfg_t *c, char *why, size_t n) {
  if (c->tp_comm_overlap <= 0) return 0;
  if (!c->megatron)
    return SAY("--tp-comm-overlap needs sequence parallelism, which free "
               "mode (--free) does not plan");
  return c->tp == 1 && SAY("--tp-comm-overlap: with --tp 1 there is no "
                           "tensor-parallel communication to overlap");
}
static int ep_overlap_on(const cfg_t *c, char *why, size_t n) {
  if (c->overlap_ep_comm <= 0) return 0;
  if (!c->experts)
    return SAY("--overlap-moe-expert-parallel-comm: model '%s' has no "
               "experts, so no all-to-all to overlap",
               c->model ? c->model : "?");
  return (c->ep == 1 || (c->pp > 1 && c->vpp == 1) ||
          c->recompute == STRATA_RECOMPUTE_FULL || c->mtp_layers > 1 ||
          !c->megatron) &&
         SAY("--overlap-moe-expert-parallel-comm needs expert parallelism "
             "(--ep > 1), --vpp > 1 with pipeline parallelism, no full "
             "recompute, one MTP module at most and Megatron mode "
             "(Megatron-LM's rules), which the options given rule out");
}
static int p2p_on(const cfg_t *c, char *why, size_t n) {
  return c->overlap_p2p > 0 && c->megatron &&
         (c->vpp == 1 || c->pp == 1 || deepspeed(c)) &&
         SAY("--overlap-p2p: Megatron-LM overlaps p2p only with virtual "
             "pipeline stages (%s); leave the option out",
             deepspeed(c) ? "which DeepSpeed's engine does not run"
             : c->pp == 1 ? "and --pp 1 has no p2p"
                          : "--vpp 2 or more with --pp 2 or more");
}
static int scatter_on(const cfg_t *c, char *why, size_t n) {
  return c->scatter_gather > 0 &&
         (c->pp == 1 || c->tp == 1 || c->sequence_parallel > 0) &&
         SAY("--scatter-gather sends 1/tp of each boundary tensor between "
             "pipeline stages without sequence parallelism: %s has nothing "
             "to scatter; leave the option out",
             c->pp == 1   ? "--pp 1"
             : c->tp == 1 ? "--tp 1"
                          : "--sequence-parallel");
}

/* ---- Megatron-Core's MoE layer and CUDA graphs (plan_fields.h's
 * choices and the moe- switches; megatron/core/transformer/
 * transformer_config.py, megatron/training/arguments.py).  A choice is
 * given where it is not 0, a switch where it is not STRATA_AUTO (a saved
 * plan's default reads as not given). ---- */

typedef struct {
  const char *cli;
  int given, v, on_off;       /* on_off: a switch */
  const char *(*name)(int v); /* a choice's names (NULL: a set) */
} knob_t;

/* The first MoE option (plan_fields.h's rows named moe-...) given, as the
 * command line gives it ("moe-token-dispatcher flex",
 * "no-moe-grouped-gemm"), into buf; with a CUDA graph option too where
 * `graphs`.  NULL: none. */
#define KNOB_NAME_NAME(key) strata_##key##_name
#define KNOB_NAME_NAMES(key) NULL
static const char *knob_given(const cfg_t *c, int graphs, char *buf,
                              size_t size) {
#define KNOB_CHOICE(F, kind, m, key, what, slot, diff, cli, ...)               \
  {cli, c->m > 0, c->m, 0, KNOB_NAME_##kind(key)},
#define KNOB_SWITCH(F, m, key, what, codec, slot, diff, cli, def, ...)         \
  {cli, (def) == STRATA_AUTO && c->m >= 0, c->m, 1, NULL},
  const knob_t k[] = {STRATA_PLAN_MEGATRON_CHOICES(KNOB_CHOICE, _)
                          STRATA_PLAN_SWITCHES(KNOB_SWITCH, _)};
#undef KNOB_CHOICE
#undef KNOB_SWITCH
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    if (!k[i].given || (strncmp(k[i].cli, "moe-", 4) &&
                        (!graphs || strncmp(k[i].cli, "cuda-graph-", 11))))
      continue;
    snprintf(buf, size, "--%s%s%s%s", k[i].on_off && !k[i].v ? "no-" : "",
             k[i].cli, k[i].name ? " " : "",
             k[i].name ? k[i].name(k[i].v) : "");
    return buf;
  }
  return NULL;
}
static int moe_dense(const cfg_t *c, char *why, size_t n) {
  char b[96];
  const char *k = c->experts ? NULL : knob_given(c, 0, b, sizeof b);
  return k && SAY("%s: model '%s' has no experts, so no MoE layer to set "
                  "up; leave the option out",
                  k, c->model ? c->model : "?");
}
static int flex_backend(const cfg_t *c, char *why, size_t n) {
  return c->moe_flex_backend > 0 &&
         STRATA_CHOICE(c->moe_dispatcher) != STRATA_MOE_FLEX &&
         SAY("--moe-flex-backend %s is the flex dispatcher's backend: give "
             "--moe-token-dispatcher flex (Megatron-LM's "
             "--moe-flex-dispatcher-backend)",
             strata_moe_flex_backend_name(c->moe_flex_backend));
}
/* The export pads the experts' input to a capacity it is given
 * (--moe-pad-expert-input-to-capacity), which DeepEP does not do. */
static int flex_capacity(const cfg_t *c, char *why, size_t n) {
  return STRATA_CHOICE(c->moe_dispatcher) == STRATA_MOE_FLEX &&
         STRATA_CHOICE(c->moe_flex_backend) == STRATA_MOE_DEEPEP &&
         c->capacity > 0 &&
         SAY("the flex dispatcher with the deepep backend does not pad the "
             "experts' input to the capacity (capacity factor %g) that the "
             "plan runs: give --moe-flex-backend hybridep, or another "
             "dispatcher",
             c->capacity);
}
static int drop_policy(const cfg_t *c, char *why, size_t n) {
  return c->moe_drop_policy > 0 && !(c->capacity > 0) &&
         SAY("--moe-token-drop-policy %s says which tokens a capacity "
             "factor drops, and model '%s' routes without dropping: give "
             "--capacity-factor F, or leave the option out",
             strata_moe_token_drop_policy_name(c->moe_drop_policy),
             c->model ? c->model : "?");
}
static int shared_overlap(const cfg_t *c, char *why, size_t n) {
  if (c->moe_shared_overlap <= 0) return 0;
  if (c->shared_ffn <= 0)
    return SAY("--moe-shared-expert-overlap: model '%s' has no shared "
               "experts to overlap",
               c->model ? c->model : "?");
  return STRATA_CHOICE(c->moe_dispatcher) == STRATA_MOE_ALLGATHER &&
         SAY("--moe-shared-expert-overlap works with the alltoall or flex "
             "token dispatcher only: give --moe-token-dispatcher alltoall or "
             "flex");
}

/* A scope's captures as Megatron-Core allows them; cudagraph() below
 * names the implementation they need. */
static int graph_scope(const cfg_t *c, char *why, size_t n) {
  int s = c->cuda_graph_scope, moe = STRATA_CUDA_GRAPH_MOE;
  int router = STRATA_CUDA_GRAPH_MOE_ROUTER;
  int pre = STRATA_CUDA_GRAPH_MOE_PREPROCESS;
  if (!s) return 0;
  if (STRATA_CHOICE(c->cuda_graph_impl) == STRATA_CUDA_GRAPH_NONE ||
      c->cuda_graph_impl == STRATA_CUDA_GRAPH_FULL)
    return SAY("--cuda-graph-scope says what a layer's CUDA graph captures: "
               "give --cuda-graph-impl local or transformer_engine (the "
               "full_iteration graph takes none: arguments.py)");
  if (s & (moe | router | pre) && !c->experts)
    return SAY("--cuda-graph-scope: moe, moe_router and moe_preprocess "
               "capture MoE layers, and model '%s' has none",
               c->model ? c->model : "?");
  if (s & STRATA_CUDA_GRAPH_MLP && c->experts && !c->dense_layers)
    return SAY("--cuda-graph-scope: mlp captures a dense layer's MLP, and "
               "every layer of model '%s' has experts",
               c->model ? c->model : "?");
  if ((s & moe) && (s & router))
    return SAY("--cuda-graph-scope must not hold both moe and moe_router");
  if ((s & pre) && !(s & router) && c->cuda_graph_impl == STRATA_CUDA_GRAPH_TE)
    return SAY("--cuda-graph-scope: moe_preprocess is captured only with "
               "moe_router");
  if ((s & moe) && !(c->capacity > 0))
    return SAY("--cuda-graph-scope: moe captures a MoE layer whose experts' "
               "input is padded to a capacity: give --capacity-factor F");
  return (s & pre) && c->capacity > 0 &&
         STRATA_CHOICE(c->moe_dispatcher) == STRATA_MOE_ALLTOALL &&
         SAY("--cuda-graph-scope: moe_preprocess is not captured with the "
             "alltoall dispatcher and a capacity factor (its preprocess "
             "copies to the host)");
}
/* Per-layer graphs and recompute: full recompute only with the whole
 * iteration graphed; selective recompute (core_attn) not of an attention
 * with dropout that the graph holds. */
static int rule_cuda_graph_recompute(const cfg_t *c, char *why, size_t n) {
  int impl = STRATA_CHOICE(c->cuda_graph_impl);
  int attn =
      !c->cuda_graph_scope || (c->cuda_graph_scope & STRATA_CUDA_GRAPH_ATTN);
  if (impl == STRATA_CUDA_GRAPH_NONE || impl == STRATA_CUDA_GRAPH_FULL)
    return 0;
  if (c->recompute == STRATA_RECOMPUTE_FULL)
    return SAY("--cuda-graph-impl %s graphs each layer, and Megatron-LM "
               "recomputes whole layers only under a full-iteration graph: "
               "give --recompute none or selective",
               strata_cuda_graph_impl_name(impl));
  return c->recompute == STRATA_RECOMPUTE_SELECTIVE && c->dropout && attn &&
         SAY("--cuda-graph-impl %s with selective recompute: the graph holds "
             "the recomputed attention of model '%s', which has dropout; "
             "give --recompute none, or a --cuda-graph-scope without attn",
             strata_cuda_graph_impl_name(impl), c->model ? c->model : "?");
}

/* ---- what the DeepSpeed config sets up (export/export_deepspeed.c): one
 * row each, in the order the search has always named them ---- */

/* A saved plan's remedy is the other export; a plan's, the other mode.
 * For a saved plan, what Megatron-DeepSpeed's model code (not this config)
 * would set up is named so (model_code: its name there; NULL: none). */
static int ds_no_as(const cfg_t *c, const char *what, const char *model_code,
                    char *why, size_t n) {
  if (c->saved && model_code)
    return SAY("the plan uses %s, which this config does not set up "
               "(Megatron-DeepSpeed's model code would); export it for "
               "Megatron-LM instead",
               model_code);
  if (c->saved)
    return SAY("the plan uses %s, which the DeepSpeed config does not set "
               "up; export it for Megatron-LM instead",
               what);
  return SAY("--framework deepspeed: the DeepSpeed config sets up no %s; "
             "plan for Megatron-LM (--framework megatron) to use it",
             what);
}
static int ds_no(const cfg_t *c, const char *what, char *why, size_t n) {
  return ds_no_as(c, what, NULL, why, n);
}
static int ds_free(const cfg_t *c, char *why, size_t n) {
  return !c->megatron && ds_no(c, "free-mode layouts (--free)", why, n);
}
static int ds_cp(const cfg_t *c, char *why, size_t n) {
  return c->cp > 1 && ds_no_as(c, "context parallelism (--cp)",
                               "context parallelism", why, n);
}
static int ds_ep(const cfg_t *c, char *why, size_t n) {
  return c->ep > 1 &&
         ds_no_as(c, "expert parallelism (--ep)", "expert parallelism", why, n);
}
static int ds_vpp(const cfg_t *c, char *why, size_t n) {
  if (c->vpp > 1 && c->saved)
    return SAY("the plan interleaves %d virtual stages per rank, a schedule "
               "DeepSpeed's pipeline engine does not run; re-plan with "
               "--vpp 1",
               c->vpp);
  return c->vpp > 1 && ds_no(c, "interleaving (--vpp)", why, n);
}
static int ds_fp8(const cfg_t *c, char *why, size_t n) {
  int fp4 = c->precision == STRATA_PRECISION_FP4;
  return st__narrow(c->precision) &&
         ds_no_as(c, fp4 ? "FP4 (--precision)" : "FP8 (--precision)",
                  fp4 ? "FP4" : "FP8", why, n);
}
static int ds_ep_overlap(const cfg_t *c, char *why, size_t n) {
  return c->overlap_ep_comm && ds_no(c,
                                     "expert parallelism to overlap "
                                     "(--overlap-moe-expert-parallel-comm)",
                                     why, n);
}
static int ds_mtp(const cfg_t *c, char *why, size_t n) {
  return c->mtp_layers > 0 &&
         ds_no_as(c, "multi-token prediction (--mtp-layers 0 drops it)",
                  "multi-token prediction modules", why, n);
}
static int ds_layout(const cfg_t *c, char *why, size_t n) {
  return (c->pipeline_layout || acct_of(c)) &&
         ds_no(c,
               "a Megatron-LM layer split (--pipeline-layout, "
               "--account-for-embedding, --account-for-loss)",
               why, n);
}
static int ds_modules(const cfg_t *c, char *why, size_t n) {
  return c->recompute_modules &&
         ds_no(c, "recompute of Megatron-LM's modules (--recompute-modules)",
               why, n);
}
static int ds_recompute_unit(const cfg_t *c, char *why, size_t n) {
  return (c->recompute_layers > 1 ||
          STRATA_CHOICE(c->recompute_method) != STRATA_RECOMPUTE_UNIFORM) &&
         ds_no(c,
               "full recompute by units of layers (--recompute-num-layers, "
               "--recompute-method)",
               why, n);
}
static int ds_pao(const cfg_t *c, char *why, size_t n) {
  return c->precision_aware_optimizer > 0 &&
         ds_no(c,
               "precision-aware optimizer (Transformer Engine's FusedAdam, "
               "--precision-aware-optimizer)",
               why, n);
}
static int rule_ds_offload(const cfg_t *c, char *why, size_t n) {
  return c->offload_layers > 0 &&
         ds_no(c, "activation offloading (--cpu-offloading-num-layers)", why,
               n);
}
static int ds_fg_offload(const cfg_t *c, char *why, size_t n) {
  return c->offload_modules > 0 &&
         ds_no(c,
               "fine-grained activation offloading of Megatron-LM's modules "
               "(--offload-modules)",
               why, n);
}
static int ds_zero0(const cfg_t *c, char *why, size_t n) {
  return c->zero_stage == 0 &&
         ds_no(c,
               "fp32 master weights and gradients without ZeRO (--zero 0: "
               "its bf16 mode has none; --zero 1 keeps them)",
               why, n);
}
static int ds_megatron_moe(const cfg_t *c, char *why, size_t n) {
  char b[96], what[128];
  const char *k = knob_given(c, 1, b, sizeof b);
  if (!k) return 0;
  snprintf(what, sizeof what, "%s (Megatron-LM's)", k);
  return ds_no(c, what, why, n);
}
static int rule_ds_split(const cfg_t *c, char *why, size_t n) {
  return c->pp > 1 && c->layers % c->pp && !given(c) && !ds_method(c) &&
         SAY("--framework deepspeed: %d layers do not split evenly over %d "
             "pipeline stages, and without --ds-partition-method the plan "
             "takes the even split or the one given; give the "
             "partition_method the run uses (--ds-partition-method: "
             "type:transformer balances the layers unevenly, BLOOM's "
             "type:transformer|embedding counts the embedding and a tied "
             "head as layers too), a --pp that divides them, or the split "
             "(--first-stage-layers, --last-stage-layers)",
             c->layers, c->pp);
}
/* The split a partition method gives: one Strata runs (each stage a
 * transformer layer, the embedding and the head on the end stages), and a
 * hand split only if it is that one. */
static int ds_partition(const cfg_t *c, char *why, size_t n) {
  int k[ST__MAX_PP], pp = c->pp, m = c->ds_partition;
  if (ds_method(c) && pp == 1)
    return SAY("--ds-partition-method %s splits the layers over pipeline "
               "stages, and --pp 1 has one; leave the option out",
               strata_ds_partition_method_name(m));
  if (!ds_method(c) || pp < 2 || pp > c->layers) return 0;
  if (c->vpp > 1) return 0; /* ds-vpp's */
  unsigned specs =
      (c->tied ? ST__DS_TIED : 0) | (c->experts > 0 ? ST__DS_MOE : 0);
  int K = st__ds_partition(c->graph, c->layers, specs, m, pp, k);
  if (K == -2) return SAY("out of memory");
  if (K < 0)
    return SAY("--ds-partition-method %s splits the %d layers over %d "
               "stages with a stage of no transformer layer, or the "
               "embedding or the head off the end stages, which Strata "
               "does not run: give another method or --pp",
               strata_ds_partition_method_name(m), c->layers, pp);
  if (!given(c)) return 0;
  /* the hand split as Megatron-LM reads it: a rank not given shares the
   * rest with the middle ranks */
  int f = c->first_layers, l = c->last_layers;
  int others = pp - (f > 0) - (l > 0), rest = c->layers - f - l, ok = 1;
  for (int s = 0; s < pp && ok; s++) {
    int h = s == 0 && f ? f : s == pp - 1 && l ? l : 0;
    if (!h) h = others > 0 && rest % others == 0 ? rest / others : -1;
    ok = k[s] == h;
  }
  if (ok) return 0;
  char list[256];
  size_t w = 0;
  for (int s = 0; s < pp && w < sizeof list; s++)
    w += (size_t)snprintf(list + w, sizeof list - w, "%s%d", s ? ", " : "",
                          k[s]);
  return SAY("--ds-partition-method %s gives the layers per stage %s, not "
             "the split given (--first-stage-layers %d, --last-stage-layers "
             "%d): DeepSpeed's PipelineModule runs the method's; drop the "
             "split or the method",
             strata_ds_partition_method_name(m), list, c->first_layers,
             c->last_layers);
}
static int ds_partition_fw(const cfg_t *c, char *why, size_t n) {
  if (c->ds_partition <= 0 || deepspeed(c)) return 0;
  if (c->saved)
    return SAY("the plan's split is the one DeepSpeed's PipelineModule "
               "gives with partition_method '%s'; export it for DeepSpeed, "
               "or re-plan without --ds-partition-method",
               strata_ds_partition_method_name(c->ds_partition));
  return SAY("--ds-partition-method is DeepSpeed's PipelineModule's: plan "
             "with --framework deepspeed, or split with Megatron-LM's "
             "options (--first-stage-layers, --pipeline-layout)");
}

/* ---- the pipeline schedules each framework runs: Megatron-LM's 1F1B
 * and interleaved 1F1B (megatron/core/pipeline_parallel/schedules.py);
 * DeepSpeed's 1F1B (deepspeed/runtime/pipe/schedule.py, TrainSchedule);
 * torchtitan's, PyTorch's torch.distributed.pipelining
 * (torchtitan/distributed/pipeline_parallel.py, the schedule classes of
 * torch/distributed/pipelining/schedules.py).  ZB-H1 and DualPipe no
 * framework Strata exports runs: they are costed when asked, and their
 * plans refused by every export ---- */
static const int titan_scheds[] = {
    STRATA_PPS_1F1B,       STRATA_PPS_INTERLEAVED_1F1B, STRATA_PPS_GPIPE,
    STRATA_PPS_LOOPED_BFS, STRATA_PPS_INTERLEAVED_ZB,   STRATA_PPS_ZBV,
    STRATA_PPS_DUALPIPEV};
static const int megatron_scheds[] = {STRATA_PPS_1F1B,
                                      STRATA_PPS_INTERLEAVED_1F1B};

/* Does schedule s run v chunks a rank (sched_ops.c's check)? */
static int sched_fits(int s, int v) {
  switch (s) {
  case STRATA_PPS_1F1B:
  case STRATA_PPS_GPIPE:
  case STRATA_PPS_ZBH1:
  case STRATA_PPS_DUALPIPE:
    return v == 1;
  case STRATA_PPS_ZBV:
  case STRATA_PPS_DUALPIPEV:
    return v == 2;
  default:
    return v >= 2;
  }
}

static int framework_runs(int fw, int s) {
  const int *l =
      fw == STRATA_FRAMEWORK_TORCHTITAN ? titan_scheds : megatron_scheds;
  int n = fw == STRATA_FRAMEWORK_TORCHTITAN  ? 7
          : fw == STRATA_FRAMEWORK_DEEPSPEED ? 1
                                             : 2;
  for (int i = 0; i < n; i++)
    if (l[i] == s) return 1;
  return 0;
}

int st__pp_schedules(int fw, int asked, int v, int *s) {
  int n = 0;
  if (asked > STRATA_PPS_AUTO) {
    if (sched_fits(asked, v)) s[n++] = asked;
    return n;
  }
  for (int k = STRATA_PPS_1F1B; k <= STRATA_PPS_DUALPIPE; k++)
    if (framework_runs(fw, k) && sched_fits(k, v)) s[n++] = k;
  return n;
}

/* A plan's schedule where its export's framework runs it. */
static int pp_schedule(const cfg_t *c, char *why, size_t n) {
  int s = c->pp_schedule;
  int fw = c->target & TITAN ? STRATA_FRAMEWORK_TORCHTITAN
           : c->target & DS  ? STRATA_FRAMEWORK_DEEPSPEED
                             : STRATA_FRAMEWORK_MEGATRON;
  if (s <= STRATA_PPS_AUTO || framework_runs(fw, s)) return 0;
  return SAY("the plan's pipeline schedule %s is not one %s runs (%s); "
             "plan with --pp-schedule %s to export it there",
             strata_pp_schedule_name(s),
             fw == STRATA_FRAMEWORK_TORCHTITAN  ? "torchtitan"
             : fw == STRATA_FRAMEWORK_DEEPSPEED ? "DeepSpeed"
                                                : "Megatron-LM",
             fw == STRATA_FRAMEWORK_TORCHTITAN
                 ? "GPipe, 1F1B, Interleaved1F1B, LoopedBFS, "
                   "InterleavedZeroBubble, ZBVZeroBubble, DualPipeV"
             : fw == STRATA_FRAMEWORK_DEEPSPEED ? "1F1B"
                                                : "1F1B, Interleaved1F1B",
             fw == STRATA_FRAMEWORK_DEEPSPEED ? "1F1B" : "auto");
}

/* Experts of torchtitan's qwen3 MoE (Qwen3-MoE, which Strata builds as a
 * LLaMA with q/k norms: import/hf.c, rd_qwen3_moe). */
static int titan_moe(const cfg_t *c) {
  return c->family &&
         (!strcmp(c->family, "qwen3") || !strcmp(c->family, "llama")) &&
         c->qk_norm == 1 && !c->shared && !c->mla && c->moe_layers == c->layers;
}

/* ---- planning for torchtitan (--framework torchtitan): what its job
 * config and its model definitions run (export/export_torchtitan.c) ---- */
static int titan_plan(const cfg_t *c, char *why, size_t n) {
  const char *what =
      !c->megatron ? "free-mode layouts (--free): its tensor parallelism is "
                     "Megatron's layout"
      : c->experts > 0 && !titan_moe(c)
          ? "experts of this model (its MoE flavors of Strata's families "
            "are qwen3's: q/k norms, experts alone on every layer, no shared "
            "expert)"
      : c->family && c->family[0] && strcmp(c->family, "llama") &&
              strcmp(c->family, "qwen3")
          ? "model of this family (its llama3 and qwen3 are the Strata "
            "families it trains)"
      : c->mla            ? "latent attention"
      : c->mtp_layers > 0 ? "multi-token prediction (--mtp-layers 0 drops it)"
      : c->precision == STRATA_PRECISION_FP8
          ? "Transformer Engine's FP8 recipe (--precision bf16)"
      : c->zero_stage == 0
          ? "--zero 0: its data parallelism over a mesh of more than one "
            "dimension is FSDP2 (apply_ddp raises 'DDP has not supported > "
            "1D parallelism'); --zero 1 to 3 are FSDP2"
      : c->recompute_modules ? "recompute of Megatron-LM's modules "
                               "(--recompute-modules)"
      : STRATA_CHOICE(c->cuda_graph_impl) != STRATA_CUDA_GRAPH_NONE
          ? "Megatron-LM's CUDA graphs (--cuda-graph-impl)"
      : c->offload_layers > 0  ? "activation offloading "
                                 "(--cpu-offloading-num-layers)"
      : c->offload_modules > 0 ? "fine-grained activation offloading "
                                 "(--offload-modules)"
      : c->precision_aware_optimizer > 0
          ? "Transformer Engine's precision-aware optimizer"
          : NULL;
  return what && SAY("--framework torchtitan: torchtitan runs no %s; plan "
                     "for Megatron-LM (--framework megatron) to use it",
                     what);
}

/* torchtitan's experts at b5bcd76c: over ep alone, ep borrowing ranks of
 * dp_shard x cp x tp (torchtitan/config/configs.py,
 * expert_parallel_degree; distributed/parallel_dims.py) */
static int titan_etp(const cfg_t *c, char *why, size_t n) {
  return c->experts > 0 && c->etp > 1 && /* 0: not given (then 1) */
         SAY("torchtitan shards experts over ep alone (no expert tensor "
             "parallelism: EP borrows ranks of FSDP and TP); --etp 1");
}

/* ---- what DTensor's parallel styles and torchtitan's job config express
 * (export/export_torch.c, export_torchtitan.c) ---- */

static int dtensor_styles(const cfg_t *c, char *why, size_t n) {
  int fp8 = st__narrow(c->precision);
  return (c->cp > 1 || c->experts > 0 || fp8 || c->mtp_layers > 0) &&
         SAY("the plan uses %s, which DTensor's parallel styles do not "
             "express; export it for Megatron-LM",
             c->cp > 1        ? "context parallelism"
             : c->experts > 0 ? "experts (token dispatch)"
             : fp8            ? "FP8 or FP4 GEMMs"
                              : "multi-token prediction modules");
}
/* qwen3's TrainSpec has no pipelining_fn at 238fa995 */
static int titan_qwen3_pp(const cfg_t *c, char *why, size_t n) {
  return c->pp > 1 && c->family && !strcmp(c->family, "qwen3") &&
         SAY("torchtitan's qwen3 has no pipeline split (its TrainSpec's "
             "pipelining_fn is None); re-plan with --pp 1");
}
/* Megatron-LM's memory techniques of the optimizer and the host, which
 * the PyTorch exports do not set up. */
static int torch_memory(const cfg_t *c, char *why, size_t n) {
  const char *what =
      c->optimizer_offload > 0 ? "the optimizer offloaded to the host "
                                 "(--optimizer-offload-fraction)"
      : c->precision_aware_optimizer > 0 ? "the precision-aware optimizer "
                                           "(--precision-aware-optimizer)"
      : c->offload_layers > 0            ? "activations offloaded to the host "
                                           "(--cpu-offloading-num-layers)"
      : c->offload_modules > 0 ? "modules' activations offloaded to the host "
                                 "(--offload-modules)"
                               : NULL;
  return what && SAY("the plan keeps %s, which this export does not say; "
                     "export it for Megatron-LM",
                     what);
}
static int torch_modules(const cfg_t *c, char *why, size_t n) {
  if ((c->recompute_layers > 1 ||
       STRATA_CHOICE(c->recompute_method) != STRATA_RECOMPUTE_UNIFORM) &&
      c->recompute == STRATA_RECOMPUTE_FULL)
    return SAY("the plan recomputes units of layers (--recompute-num-layers "
               "%d, --recompute-method %s), which this export does not say; "
               "export it for Megatron-LM",
               c->recompute_layers,
               strata_recompute_method_name(c->recompute_method));
  return c->recompute_modules &&
         SAY("the plan recomputes Megatron-LM's modules "
             "(--recompute-modules), which this export does not say; "
             "export it for Megatron-LM");
}
/* The CUDA graphs Megatron-LM captures; DTensor and torchtitan are told
 * nothing of them. */
static int torch_graphs(const cfg_t *c, char *why, size_t n) {
  return STRATA_CHOICE(c->cuda_graph_impl) != STRATA_CUDA_GRAPH_NONE &&
         SAY("the plan captures CUDA graphs with Megatron-LM's "
             "--cuda-graph-impl %s, which this export does not set up; "
             "export it for Megatron-LM",
             strata_cuda_graph_impl_name(c->cuda_graph_impl));
}
static int titan_fp8(const cfg_t *c, char *why, size_t n) {
  return st__narrow(c->precision) &&
         SAY("the plan runs its GEMMs in %s with Transformer Engine's "
             "recipe; re-plan with --precision bf16 or export it for "
             "Megatron-LM",
             c->precision == STRATA_PRECISION_FP4 ? "FP4" : "FP8");
}

/* Transformer Engine's recipes: --fp8-recipe is FP8's, and MXFP8 and
 * NVFP4 scale blocks on Blackwell's tensor cores only (transformer_
 * config.py: "'mxfp8' for Blackwell architecture only", NVFP4BlockScaling
 * "for Blackwell+ architecture"). */
static int fp8_recipe_rules(const cfg_t *c, char *why, size_t n) {
  if (c->fp8_recipe && (c->precision == STRATA_PRECISION_BF16 ||
                        c->precision == STRATA_PRECISION_FP4))
    return SAY("--fp8-recipe %s is an FP8 recipe: give --precision fp8 (or "
               "auto)%s",
               strata_lowp_name(c->fp8_recipe),
               c->precision == STRATA_PRECISION_FP4
                   ? "; FP4 runs NVFP4's recipe alone"
                   : "");
  if (c->fp8_recipe == STRATA_LOWP_NVFP4)
    return SAY("NVFP4 is FP4's recipe, not FP8's: give --precision fp4");
  const strata_lowp_t *r = strata_lowp(c->lowp);
  return r && r->blackwell && c->blackwell == 0 &&
         SAY("%s scales blocks on Blackwell's tensor cores only (Megatron-"
             "LM's transformer_config.py): use a B200 or GB200 cluster, or "
             "%s",
             r->fp4 ? "NVFP4 (--precision fp4)" : "--fp8-recipe mxfp8",
             r->fp4 ? "--precision fp8" : "another --fp8-recipe");
}

/* ---- the table ---- */

#define ARGS "megatron/training/arguments.py"
#define STATE "megatron/core/parallel_state.py"
#define TCONF "megatron/core/transformer/transformer_config.py"
#define MOE "megatron/core/transformer/moe, docs/cost-model.md"
#define DSX "export/export_deepspeed.c (what its config can say)"
#define DSXE ARGS "; deepspeed/runtime/engine.py"

/* To add a rule:
 *   1. Write its predicate above: static, (c, why, n), non-zero when c
 *      breaks it, the reason through SAY (which formats nothing when the
 *      search asks, n 0).  Read "not given" (0, STRATA_AUTO) as not
 *      broken where the row is asked of options.
 *   2. Add its row here, in the order its message should win: a short
 *      name, the frameworks that state it, when it applies (CONFIG: a
 *      fixed configuration; OPTIONS: the options; PLAN: a plan before its
 *      export) and, for the search, the AT_ stage at which the search
 *      knows every field it reads (search.h: degrees, then the family's
 *      layer choices, then the pipeline, then the whole configuration,
 *      AT_CFG, whose fields eval.c's st__cfg_rules fills); its source.
 *   3. A field it reads that the configuration lacks: a switch or choice
 *      of plan_fields.h is there already; anything else is a member of
 *      strata_rules_config_t filled by strata_rules_config_init and
 *      _of_plan (and st__cfg_rules where the search decides it).
 *      (At most STAGE_ROWS rows a stage: the filter compiled below.)
 *   4. A case in tests/test_rules.c; the export and the search need
 *      nothing more: both ask this table.
 */
static const rule_t rules[] = {
    {"world", MG | DS, CONFIG, STATE, world},
    {"gpus", MG | DS, CONFIG, STATE, used},
    {"heads", MG | DS, CONFIG | PLAN | AT_TP, ARGS, rule_heads},
    {"query-groups", MG | DS, CONFIG | PLAN | AT_TP, ARGS, rule_groups},
    {"cp-seq", MG | DS, CONFIG | PLAN | AT_CP, ARGS, rule_cp_seq},
    {"cp-window-ring", MG | DS, OPTIONS | AT_CP_COMM,
     "transformer_engine context_parallel.py", rule_cp_window},
    {"cp-fused-attention", MG | DS, CONFIG | AT_CP,
     "transformer_engine context_parallel.py", rule_cp_fused},
    {"ep-dense", MG | DS, CONFIG | PLAN, ARGS, ep_dense},
    {"ep-overlap", MG | DS, CONFIG | PLAN | AT_FAMILY | AT_CFG, TCONF,
     rule_ep_overlap},
    {"ep-overlap", MG | DS, CONFIG | PLAN | AT_CFG, TCONF,
     rule_ep_overlap_pipeline},
    {"ep-experts", MG | DS, CONFIG | PLAN | AT_EP, ARGS, rule_ep_experts},
    {"ep-world", MG | DS, CONFIG | PLAN, STATE, ep_world},
    {"etp-sizes", MG | DS, CONFIG, MOE, etp_sizes},
    {"etp-ffn", MG | DS, CONFIG | AT_EP_LAYOUT, MOE, rule_etp_ffn},
    {"ep-layout", MG | DS, CONFIG | AT_EP_LAYOUT, MOE, rule_ep_layout},
    {"ep-replicas", MG | DS, CONFIG, MOE, ep_replicas},
    {"ep-sequence-parallel", MG | DS, CONFIG | PLAN | AT_SP, ARGS, rule_ep_sp},
    {"pp-layers", MG | DS, CONFIG, TCONF, pp_layers},
    {"global-batch", MG | DS | TORCH, CONFIG | PLAN, ARGS, batch},
    {"sp-tp", MG | DS, CONFIG | PLAN | AT_SP, ARGS, rule_sp_tp},
    {"zero-pp", DS, CONFIG | PLAN | AT_CFG, "deepspeed/runtime/pipe/engine.py",
     rule_zero_pp},
    {"tp-node", MG | DS, CONFIG, "docs/cost-model.md (tensor-parallel groups)",
     tp_node},
    {"pp-schedule", MG | DS | TITAN, PLAN,
     "torch/distributed/pipelining/schedules.py; "
     "megatron/core/pipeline_parallel/schedules.py",
     pp_schedule},
    {"vpp-pp", MG | DS, CONFIG | AT_PIPE, ARGS, rule_vpp_pp},
    {"vpp-micro-batches", MG | DS, CONFIG | AT_PIPE,
     "megatron/core/pipeline_parallel/schedules.py", rule_vpp_micro},
    {"layout-form", MG | DS, CONFIG | OPTIONS,
     "megatron/core/transformer/pipeline_parallel_layer_layout.py",
     layout_form},
    {"account-pp", MG | DS, CONFIG | OPTIONS, TCONF, account_pp},
    {"account-uneven", MG | DS, CONFIG | OPTIONS,
     "megatron/core/transformer/transformer_block.py", account_uneven},
    {"account-split", MG | DS, CONFIG,
     "megatron/core/transformer/transformer_block.py", account_split},
    {"recompute-modules-selective", MG | DS, CONFIG | OPTIONS, TCONF,
     modules_selective},
    {"recompute-unit", MG | DS, CONFIG | OPTIONS, TCONF, recompute_unit},
    {"recompute-modules-model", MG | DS, CONFIG | OPTIONS, TCONF,
     modules_model},
    {"recompute-modules-fp8", MG, CONFIG | OPTIONS | PLAN, TCONF, modules_fp8},
    {"fp8-recipe", MG | DS, CONFIG | OPTIONS, TCONF, fp8_recipe_rules},
    {"cpu-offloading", MG | DS, CONFIG | OPTIONS | PLAN | AT_ACT_OFFLOAD, TCONF,
     rule_cpu_offloading},
    {"optimizer-offload", MG | DS, CONFIG | OPTIONS | PLAN | AT_OPT_OFFLOAD,
     ARGS, rule_optimizer_offload},
    {"ds-cpu-offloading", DS, OPTIONS | PLAN | AT_ACT_OFFLOAD, DSX,
     rule_ds_offload},
    {"fine-grained-offloading", MG | DS, CONFIG | OPTIONS | PLAN | AT_LAYER,
     TCONF, rule_fg_offload},
    {"ds-fine-grained-offloading", DS, OPTIONS | PLAN, DSX, ds_fg_offload},
    {"state-dtypes", MG | DS, CONFIG | OPTIONS,
     "megatron/core/optimizer/optimizer_config.py", state_types},
    {"precision-aware-zero", MG | DS, CONFIG | OPTIONS | PLAN,
     "megatron/core/optimizer/distrib_optimizer.py", pao_zero},
    {"split-even", MG | DS, CONFIG, TCONF, split_even},
    {"split-rest", MG | DS, CONFIG, TCONF, split_rest},
    {"split-middle", MG | DS, CONFIG, TCONF, split_middle},
    {"split-vpp", MG | DS, CONFIG, TCONF, split_vpp},
    {"tp-comm-overlap-sp", MG, PLAN, ARGS, tp_overlap},
    {"p2p-overlap-vpp", MG, PLAN, ARGS, p2p_overlap},
    {"scatter-gather", MG, PLAN,
     "megatron/core/pipeline_parallel/p2p_"
     "communication.py",
     scatter},
    {"param-gather-grad-reduce", MG, OPTIONS | PLAN, ARGS, param_gather},
    {"param-gather-optimizer-step", MG, CONFIG | PLAN | AT_CFG, ARGS,
     gather_step},
    {"fp8-param-gather", MG | DS, CONFIG | OPTIONS, ARGS, fp8_gather},
    {"grad-reduce-meaningless", MG | DS, OPTIONS, DSXE, grad_reduce},
    {"param-gather-meaningless", MG | DS, OPTIONS, DSXE, param_gather_on},
    {"param-gather-optimizer-step-given", MG | DS, OPTIONS, ARGS,
     gather_step_on},
    {"tp-comm-overlap-meaningless", MG | DS, OPTIONS, ARGS, tp_overlap_on},
    {"ep-overlap-meaningless", MG | DS, OPTIONS, TCONF, ep_overlap_on},
    {"p2p-overlap-meaningless", MG | DS, OPTIONS, ARGS, p2p_on},
    {"scatter-gather-meaningless", MG | DS, OPTIONS,
     "megatron/core/pipeline_parallel/p2p_communication.py", scatter_on},
    {"moe-dense", MG | DS, OPTIONS, TCONF, moe_dense},
    {"moe-flex-backend", MG | DS, OPTIONS | PLAN, TCONF, flex_backend},
    {"moe-flex-capacity", MG | DS, OPTIONS | PLAN, TCONF, flex_capacity},
    {"moe-token-drop-policy", MG | DS, OPTIONS | PLAN, TCONF, drop_policy},
    {"moe-shared-expert-overlap", MG | DS, OPTIONS | PLAN, TCONF,
     shared_overlap},
    {"cuda-graph-scope", MG | DS, OPTIONS | PLAN, TCONF, graph_scope},
    {"cuda-graph-recompute", MG | DS, CONFIG | OPTIONS | PLAN | AT_LAYER, TCONF,
     rule_cuda_graph_recompute},
    {"ds-megatron-moe", DS, OPTIONS | PLAN, DSX, ds_megatron_moe},
    {"ds-free", DS, OPTIONS, DSX, ds_free},
    {"ds-cp", DS, OPTIONS | PLAN, DSX, ds_cp},
    {"ds-ep", DS, OPTIONS | PLAN, DSX, ds_ep},
    {"ds-vpp", DS, OPTIONS | PLAN, DSX, ds_vpp},
    {"ds-fp8", DS, OPTIONS | PLAN, DSX, ds_fp8},
    {"ds-ep-overlap", DS, OPTIONS, DSX, ds_ep_overlap},
    {"ds-mtp", DS, OPTIONS | PLAN, DSX, ds_mtp},
    {"ds-layout", DS, OPTIONS | PLAN, DSX, ds_layout},
    {"ds-recompute-modules", DS, OPTIONS | PLAN, DSX, ds_modules},
    {"ds-recompute-unit", DS, OPTIONS | PLAN, DSX, ds_recompute_unit},
    {"ds-precision-aware-optimizer", DS, OPTIONS | PLAN, DSX, ds_pao},
    {"ds-zero0", DS, OPTIONS | PLAN,
     "deepspeed/runtime/engine.py "
     "(_do_optimizer_sanity_check)",
     ds_zero0},
    {"ds-even-split", DS, CONFIG | OPTIONS | AT_SPLIT,
     "Megatron-DeepSpeed partition_method type:transformer", rule_ds_split},
    {"ds-partition", DS, CONFIG | OPTIONS,
     "deepspeed/runtime/pipe/module.py (_partition_layers); "
     "deepspeed/runtime/utils.py (partition_balanced)",
     ds_partition},
    {"ds-partition-framework", MG | TITAN, OPTIONS | PLAN,
     "deepspeed/runtime/pipe/module.py", ds_partition_fw},
    {"titan-plan", TITAN, OPTIONS,
     "torchtitan/models/llama3/infra/parallelize.py; "
     "export/export_torchtitan.c",
     titan_plan},
    {"titan-etp", TITAN, CONFIG | OPTIONS | PLAN | AT_EP_LAYOUT,
     "torchtitan/distributed/parallel_dims.py", titan_etp},
    {"torch-recompute-modules", TORCH | TITAN, PLAN,
     "torchtitan activation_checkpoint; torch.utils.checkpoint", torch_modules},
    {"dtensor-styles", TORCH, PLAN, "torch/distributed/tensor/parallel",
     dtensor_styles},
    {"titan-qwen3-pp", TITAN, PLAN, "torchtitan/models/qwen3 (TrainSpec)",
     titan_qwen3_pp},
    {"titan-fp8", TITAN, PLAN, "torchtitan (no Transformer Engine recipe)",
     titan_fp8},
    {"torch-megatron-memory", TORCH | TITAN, PLAN,
     "export/export_torch.c, export_torchtitan.c", torch_memory},
    {"torch-cuda-graphs", TORCH | TITAN, PLAN,
     "export/export_torch.c, export_torchtitan.c", torch_graphs},
};

/* The rows of each of the search's stages (ST__AT_*), in the table's
 * order: the search asks a stage hundreds of thousands of times (every
 * pipeline it enumerates), so each stage's rows are listed once, a
 * filter compiled from the table, rather than found by walking it. */
#define N_RULES (sizeof rules / sizeof rules[0])
#define N_STAGES 16
#define STAGE_ROWS 8
static unsigned char stage_row[N_STAGES][STAGE_ROWS];
static int stage_n[N_STAGES];
static uv_once_t stage_once = UV_ONCE_INIT;
static atomic_int stage_listed; /* the lists are there: no uv_once */

static void list_stages(void) {
  for (size_t i = 0; i < N_RULES; i++)
    for (int s = 0; s < N_STAGES; s++)
      if ((rules[i].when >> 8 >> s & 1) && stage_n[s] < STAGE_ROWS)
        stage_row[s][stage_n[s]++] = (unsigned char)i;
  atomic_store_explicit(&stage_listed, 1, memory_order_release);
}

/* Row r broken by c: 1 with v filled (if not NULL). */
static int row_broken(const rule_t *r, const cfg_t *c,
                      strata_rules_verdict_t *v) {
  char why[sizeof v->why];
  size_t n = v ? sizeof why : 0; /* no message asked: none formatted */
  if (!(r->frameworks & c->target) || !r->broken(c, n ? why : NULL, n))
    return 0;
  if (v) {
    v->rule = r->name;
    v->source = r->source;
    memcpy(v->why, why, sizeof why);
  }
  return 1;
}

int strata_rules_check(const strata_rules_config_t *c, unsigned when,
                       strata_rules_verdict_t *v) {
  unsigned at = when >> 8;
  if (at && !(when & 0xffu) && !(at & (at - 1))) { /* one search stage */
    int s = __builtin_ctz(at), n;
    if (!atomic_load_explicit(&stage_listed, memory_order_acquire))
      uv_once(&stage_once, list_stages);
    n = stage_n[s];
    for (int j = 0; j < n; j++) {
      const rule_t *r = &rules[stage_row[s][j]];
      if (v ? row_broken(r, c, v)
            : (r->frameworks & c->target) && r->broken(c, NULL, 0))
        return 1;
    }
    return 0;
  }
  for (size_t i = 0; i < N_RULES; i++)
    if ((rules[i].when & when) && row_broken(&rules[i], c, v)) return 1;
  return 0;
}

void strata_rules_config_init(strata_rules_config_t *c, const strata_graph_t *g,
                              const strata_cluster_t *cl,
                              const strata_plan_opts_t *o) {
  strata_moe_info_t m;
  memset(c, 0, sizeof *c);
  /* torchtitan's tensor parallelism and splits are Megatron-LM's layouts:
   * Megatron-LM's rules and torchtitan's own */
  c->target = o->framework == STRATA_FRAMEWORK_DEEPSPEED    ? DS
              : o->framework == STRATA_FRAMEWORK_TORCHTITAN ? MG | TITAN
                                                            : MG;
  c->megatron = o->megatron;
  c->world = strata_cluster_gpus(cl);
  c->gpus_per_node = strata_cluster_gpus_per_node(cl);
  c->tp = o->tp, c->pp = o->pp, c->dp = o->dp;
  c->cp = o->cp, c->ep = o->ep, c->etp = o->etp;
  c->vpp = o->vpp, c->micro_batch = o->micro_batch;
  c->global_batch = o->global_batch;
  c->first_layers = o->first_layers, c->last_layers = o->last_layers;
  c->pipeline_layout = o->pipeline_layout;
  c->zero_stage = o->zero_stage;
  c->sequence_parallel = o->sequence_parallel;
  c->recompute = o->recompute;
  c->recompute_modules = o->recompute_modules;
  c->offload_layers = o->offload_layers;
  c->recompute_layers = o->recompute_layers;
  c->optimizer_offload = o->optimizer_offload;
  c->blackwell = st__blackwell(cl);
  c->fp8_recipe = o->fp8_recipe;
  c->lowp = o->precision == STRATA_PRECISION_BF16 ? 0 : st__lowp_of(o, cl);
  c->state_dtypes =
      o->main_grads_dtype || o->exp_avg_dtype || o->exp_avg_sq_dtype;
  SWITCHES_FROM(o);
  CHOICES_FROM(o);
  c->precision = o->precision;
  c->framework = o->framework;
  c->cp_comm = o->cp_comm;
  c->model = g->name, c->family = g->hp.family;
  for (int i = 0; i < g->n_ops && !c->windowed; i++)
    c->windowed = g->ops[i].window > 0;
  c->layers = strata_graph_layers(g);
  c->heads = g->hp.heads, c->kv_heads = g->hp.kv_heads;
  c->seq_len = g->seq_len;
  c->flash_attention = g->hp.flash_attention;
  c->mtp_layers = g->hp.mtp_layers;
  strata_graph_moe(g, &m);
  c->experts = m.experts, c->moe_ffn = m.moe_ffn;
  c->shared = g->hp.shared_ffn > 0, c->mla = g->hp.kv_lora > 0;
  c->moe_layers = m.experts ? m.moe_layers : 0;
  c->shared_ffn = g->hp.shared_ffn, c->capacity = m.capacity;
  c->dense_layers = m.experts ? c->layers - m.moe_layers : c->layers;
  c->dropout = g->hp.dropout;
  c->qk_norm = g->hp.qk_norm;
  c->graph = g;
  c->tied = strata_graph_find_tensor(g, "head.weight") < 0;
}

/* A plan's ep of 0 is 1 with experts (older files); its etp counts only
 * with experts, 0 meaning tp. */
void strata_rules_config_of_plan(strata_rules_config_t *c,
                                 const strata_plan_t *p, unsigned target) {
  memset(c, 0, sizeof *c);
  c->target = target;
  c->saved = 1;
  c->megatron = p->megatron;
  c->world = p->devices;
  c->gpus_per_node = p->n_stages > 0 ? p->stages[0].gpus_per_node : 0;
  c->tp = p->tp, c->pp = p->pp, c->dp = p->dp, c->cp = p->cp;
  c->ep = p->experts > 0 && p->ep < 1 ? 1 : p->ep;
  c->etp = p->experts > 0 && p->etp > 0 ? p->etp : 0;
  c->vpp = p->vpp, c->micro_batch = p->micro_batch;
  c->global_batch = p->global_batch;
  c->zero_stage = p->zero_stage;
  c->sequence_parallel = p->sequence_parallel;
  c->recompute = p->recompute;
  c->recompute_modules = (unsigned)p->recompute_modules;
  c->offload_layers = p->offload_layers;
  c->recompute_layers = p->recompute_layers;
  c->optimizer_offload = p->optimizer_offload;
  c->lowp = p->fp8;
  c->blackwell = -1; /* a plan's GPU is its cluster's: not asked again */
  SWITCHES_FROM(p);
  CHOICES_FROM(p);
  /* the moe- switches a plan always holds: their defaults, and anything
   * of a model without experts, are not given */
  c->moe_grouped_gemm = p->moe_grouped_gemm || !p->experts ? STRATA_AUTO : 0;
  c->moe_shared_overlap = p->moe_shared_overlap && p->experts ? 1 : STRATA_AUTO;
  c->precision = p->fp8 == STRATA_LOWP_NVFP4 ? STRATA_PRECISION_FP4
                 : p->fp8                    ? STRATA_PRECISION_FP8
                                             : STRATA_PRECISION_BF16;
  c->framework = p->framework;
  c->cp_comm = p->cp_comm, c->windowed = p->window > 0;
  c->model = p->model, c->family = p->family;
  c->layers = p->layers, c->heads = p->heads, c->kv_heads = p->kv_heads;
  c->seq_len = p->seq_len, c->flash_attention = p->flash_attention;
  c->experts = p->experts, c->moe_ffn = p->moe_ffn;
  c->shared = p->shared_ffn > 0, c->mla = p->kv_lora > 0;
  c->moe_layers = p->experts ? p->moe_layers : 0;
  c->mtp_layers = p->mtp_layers;
  c->shared_ffn = p->shared_ffn, c->capacity = p->capacity;
  c->dense_layers = p->experts ? p->layers - p->moe_layers : p->layers;
  c->dropout = p->dropout;
  c->qk_norm = p->qk_norm;
  c->tied = !p->untie_embeddings;
}

/* A fixed configuration's split: the virtual stages a layout gives, and
 * the embedding and the loss counted where they are left to choose only
 * when the even split needs them (both, else the embedding, else the
 * loss: the first that splits). */
static void fix_split(cfg_t *c) {
  int k[ST__MAX_PP], K = 0, v = vpp_of(c);
  if (c->pipeline_layout && c->pp > 0 &&
      !st__layout_parse(c->pipeline_layout, c->layers, c->mtp_layers, k,
                        ST__MAX_PP, &K, NULL, 0) &&
      K % c->pp == 0 && !c->vpp)
    c->vpp = K / c->pp;
  int free_e = c->account_embedding < 0, free_l = c->account_loss < 0;
  if (c->account_embedding < 0) c->account_embedding = 0;
  if (c->account_loss < 0) c->account_loss = 0;
  if (c->pp < 2) c->account_embedding = c->account_loss = 0; /* no split */
  if (c->pp < 2 || given(c) || c->pipeline_layout || deepspeed(c) ||
      (c->layers % (c->pp * v) == 0 && !acct_of(c)))
    return; /* DeepSpeed's split counts neither (ds-even-split) */
  if (acct_of(c) && st__split_accounted(c->layers, c->pp, v, acct_of(c), k) > 0)
    return; /* as given */
  static const int order[] = {3, 1, 2};
  for (int i = 0; i < 3; i++) {
    int a = order[i] | acct_of(c);
    if (((a & 1) && !c->account_embedding && !free_e) ||
        ((a & 2) && !c->account_loss && !free_l))
      continue;
    if (st__split_accounted(c->layers, c->pp, v, a, k) < 0) continue;
    c->account_embedding = a & 1, c->account_loss = a >> 1;
    return;
  }
}

int strata_pipeline_fix(const strata_graph_t *g, const strata_cluster_t *c,
                        strata_plan_opts_t *o) {
  strata_rules_config_t rc;
  strata_rules_verdict_t v;
  if (!g || !c || !o || o->tp < 1 || o->pp < 1)
    return strata_error(STRATA_EINVAL, "a fixed configuration needs its "
                                       "tensor- and pipeline-parallel sizes");
  strata_rules_config_init(&rc, g, c, o);
  fix_split(&rc);
  if (strata_rules_check(&rc, STRATA_RULES_CONFIG, &v))
    return strata_error(STRATA_EINVAL, "%s", v.why);
  if (!o->dp) o->dp = dp_of(&rc);
  o->vpp = rc.vpp;
  o->account_embedding = rc.account_embedding;
  o->account_loss = rc.account_loss;
  if (o->pp >= 2 && !o->first_layers && !o->last_layers && !acct_of(&rc) &&
      !o->pipeline_layout && !ds_method(&rc))
    o->first_layers = o->last_layers = rc.layers / o->pp; /* Megatron-LM's */
  return 0;
}
