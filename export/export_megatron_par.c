/*
 * export_megatron_par.c - the Megatron-LM arguments of context and expert
 * parallelism, the mixture of experts, latent attention and the decoder
 * variants, FP8 and Megatron-FSDP (ZeRO-2/3), and what those flags can
 * say (the rules Megatron-LM checks for them are the rulebook's,
 * rules/rules.c).  export_megatron.c calls the check before writing
 * anything and appends the flags; every flag name is in
 * reference/megatron_flags.txt.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "merge/merge_int.h"

#define REFUSE(...)                                                            \
  strata_error(STRATA_EUNSUPPORTED, "megatron export: " __VA_ARGS__)

/* The framework's rules of the experts are the rulebook's (ep-dense,
 * ep-experts, ep-world, ep-sequence-parallel); the flags need these. */
static int moe_check(const strata_plan_t *p) {
  if (p->experts && (p->moe_ffn < 1 || p->topk < 1))
    return REFUSE("the plan's mixture of experts lacks its expert hidden size "
                  "or top-k (re-plan from the model)");
  return 0;
}

/* The RoPE scaling Megatron-LM can say: llama3's through --use-rope-scaling,
 * whose low and high frequency factors and original context are fixed
 * (1, 4, 8192: RotaryEmbedding._apply_scaling in megatron/core/models/
 * common/embeddings/rotary_pos_embedding.py), linear interpolation by an
 * integer through --rotary-seq-len-interpolation-factor, on every layer;
 * yarn only by latent attention's own flags. */
static int rope_scaling_check(const strata_plan_t *p) {
  const strata_rope_scaling_t *r = &p->rope_scaling;
  const char *name = strata_rope_scaling_name(r->type);
  if (r->type == STRATA_ROPE_SCALING_NONE) return 0;
  if (r->full_only && p->window > 0)
    return REFUSE("the model's rope_scaling (%s, factor %g) is on its "
                  "full-attention layers only, and Megatron-LM scales every "
                  "layer's positions",
                  name, r->factor);
  if (r->type == STRATA_ROPE_SCALING_LLAMA3 &&
      (r->low != 1 || r->high != 4 || r->original != 8192))
    return REFUSE("the model's rope_scaling (llama3: low_freq_factor %g, "
                  "high_freq_factor %g, original_max_position_embeddings %d) "
                  "is not what --use-rope-scaling applies (1, 4, 8192)",
                  r->low, r->high, r->original);
  if (r->type == STRATA_ROPE_SCALING_LINEAR && r->factor != (int)r->factor)
    return REFUSE("the model's rope_scaling (linear, factor %g) is not an "
                  "integer, which --rotary-seq-len-interpolation-factor takes",
                  r->factor);
  return 0;
}

/* Llama 4's chunked attention (each RoPE layer attends within chunks of
 * attention_chunk_size tokens) has no Megatron-LM flag; up to one chunk
 * it is the causal attention the flags build. */
static int chunk_check(const strata_plan_t *p) {
  if (p->attn_chunk > 0 && p->seq_len > p->attn_chunk)
    return REFUSE("the model attends in chunks of %d tokens (Llama 4's "
                  "attention_chunk_size) and the plan's sequence is %d: "
                  "Megatron-LM has no chunked attention (at --seq %d or "
                  "less it is the causal attention it builds)",
                  p->attn_chunk, p->seq_len, p->attn_chunk);
  return 0;
}

int st__megatron_par_check(const strata_plan_t *p) {
  int rc = moe_check(p);
  if (!rc) rc = rope_scaling_check(p);
  if (!rc) rc = chunk_check(p);
  return rc;
}

static void flag(st__mg_args_t *a, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void flag(st__mg_args_t *a, const char *name, const char *fmt, ...) {
  strata_buf_printf(&a->b, "%s%s", a->n++ ? a->sep : "", name);
  if (!fmt) return;
  char v[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(v, sizeof v, fmt, ap);
  va_end(ap);
  strata_buf_printf(&a->b, " %s", v);
}

/* Whether the planned layers scale the shared expert by a sigmoid gate
 * (Qwen2-MoE): the stages' layer templates hold its op. */
static int shared_gate(const strata_plan_t *p) {
  for (int s = 0; s < p->n_stages; s++) {
    const strata_stage_result_t *r = p->stages[s].result;
    for (int i = 0; r && i < r->n_ops; i++)
      if (r->ops[i].name && !strcmp(r->ops[i].name, "shared_gate")) return 1;
  }
  return 0;
}

/* How the model's router is trained (its config's; docs/exports.md):
 * Megatron-LM's auxiliary loss is off by default (--moe-aux-loss-coeff
 * 0), so the model's coefficient is said, per batch (aux_loss) or per
 * sequence (seq_aux_loss); DeepSeek-V3's balancing bias, updated outside
 * the gradient at Megatron-LM's default rate (1e-3, the paper's gamma),
 * needs sigmoid scores (transformer_config.py); the input's jitter. */
static void router_training_flags(st__mg_args_t *b, const strata_plan_t *p) {
  if (p->router_aux_loss > 0) {
    flag(b, "--moe-router-load-balancing-type", "%s",
         p->router_seq_aux ? "seq_aux_loss" : "aux_loss");
    flag(b, "--moe-aux-loss-coeff", "%g", p->router_aux_loss);
  }
  if (p->router_expert_bias && p->router_sigmoid)
    flag(b, "--moe-router-enable-expert-bias", NULL);
  if (p->router_jitter > 0)
    flag(b, "--moe-input-jitter-eps", "%g", p->router_jitter);
}

/* Megatron-Core's MoE layer as planned: grouped GEMMs (unless the plan
 * turns them off), the token dispatcher (all-to-all unless the plan names
 * another) and the router's dtype (fp32 unless fp64), the expert layers
 * after the dense ones, and the capacity (padded to it, as costed, with
 * the drop policy the plan names) or dropless routing. */
static void moe_flags(st__mg_args_t *b, const strata_plan_t *p) {
  if (!p->experts) return;
  flag(b, "--num-experts", "%d", p->experts);
  flag(b, "--moe-router-topk", "%d", p->topk);
  /* a softmax over all experts, the top-k's weights not renormalised:
   * a top-1 router (Switch) or norm_topk_prob false (Qwen2-MoE) */
  if (!p->router_sigmoid && (p->topk == 1 || p->router_pre_softmax))
    flag(b, "--moe-router-pre-softmax", NULL);
  flag(b, "--moe-ffn-hidden-size", "%d", p->moe_ffn);
  if (p->shared_ffn > 0)
    flag(b, "--moe-shared-expert-intermediate-size", "%d", p->shared_ffn);
  if (p->shared_ffn > 0 && shared_gate(p))
    flag(b, "--moe-shared-expert-gate", NULL);
  if (p->moe_every > 1) { /* Llama 4: experts on layers l >= the first
                              MoE one with (l + 1) % k == 0 */
    int k = p->moe_every, a = p->first_dense - (k - 1);
    if (a < 0) a = 0;
    flag(b, "--moe-layer-freq", "\"([0]*%d+([0]*%d+[1])*%d+[0]*%d)\"", a, k - 1,
         (p->layers - a) / k, (p->layers - a) % k);
  } else if (p->first_dense > 0)
    flag(b, "--moe-layer-freq", "\"([0]*%d+[1]*%d)\"", p->first_dense,
         p->layers - p->first_dense);
  if (p->router_sigmoid) flag(b, "--moe-router-score-function", "sigmoid");
  if (p->router_groups > 1) { /* group-limited routing */
    flag(b, "--moe-router-num-groups", "%d", p->router_groups);
    flag(b, "--moe-router-group-topk", "%d", p->router_group_topk);
  }
  if (p->router_topk_scale > 0)
    flag(b, "--moe-router-topk-scaling-factor", "%g", p->router_topk_scale);
  router_training_flags(b, p);
  if (p->moe_grouped_gemm) flag(b, "--moe-grouped-gemm", NULL);
  flag(b, "--moe-token-dispatcher-type", "%s",
       strata_moe_token_dispatcher_name(p->moe_dispatcher));
  if (STRATA_CHOICE(p->moe_dispatcher) == STRATA_MOE_FLEX)
    flag(b, "--moe-flex-dispatcher-backend", "%s",
         strata_moe_flex_backend_name(p->moe_flex_backend));
  flag(b, "--moe-router-dtype", "%s",
       strata_moe_router_dtype_name(p->moe_router_dtype));
  if (p->capacity > 0) {
    flag(b, "--moe-expert-capacity-factor", "%g", p->capacity);
    flag(b, "--moe-pad-expert-input-to-capacity", NULL);
    if (p->moe_drop_policy)
      flag(b, "--moe-token-drop-policy", "%s",
           strata_moe_token_drop_policy_name(p->moe_drop_policy));
  }
  if (p->moe_shared_overlap) flag(b, "--moe-shared-expert-overlap", NULL);
  flag(b, "--expert-model-parallel-size", "%d", p->ep > 0 ? p->ep : 1);
  flag(b, "--expert-tensor-parallel-size", "%d", p->etp > 0 ? p->etp : p->tp);
}

/* rope_scaling_check's cases.  Latent attention's yarn: MLATransformerConfig
 * (megatron/core/transformer/transformer_config.py) with its factor, the
 * original context and the correction's betas and mscales. */
static void rope_scaling_flags(st__mg_args_t *b, const strata_plan_t *p) {
  const strata_rope_scaling_t *r = &p->rope_scaling;
  if (r->type == STRATA_ROPE_SCALING_LLAMA3) {
    flag(b, "--use-rope-scaling", NULL);
    flag(b, "--rope-scaling-factor", "%g", r->factor);
  } else if (r->type == STRATA_ROPE_SCALING_LINEAR) {
    flag(b, "--rotary-seq-len-interpolation-factor", "%d", (int)r->factor);
  } else if (r->type == STRATA_ROPE_SCALING_YARN) {
    /* latent attention's own; other attention takes the same factors
     * with --position-embedding-type yarn (argument_utils.py,
     * _apply_yarn_config_from_args) */
    if (p->kv_lora > 0) flag(b, "--rope-type", "yarn");
    flag(b, "--rotary-scaling-factor", "%g", r->factor);
    if (r->original > 0)
      flag(b, "--yarn-original-max-position-embeddings", "%d", r->original);
    flag(b, "--yarn-beta-fast", "%g", r->high);
    flag(b, "--yarn-beta-slow", "%g", r->low);
    flag(b, "--mscale", "%g", r->mscale);
    flag(b, "--mscale-all-dim", "%g", r->mscale_all);
    if (r->unrounded) flag(b, "--no-yarn-correction-range-round-to-int", NULL);
  }
}

/* A window of w keys, the query's own among them (transformers'
 * sliding_window), is Megatron-LM's (w - 1, 0): the keys before the
 * query (Megatron-Bridge's mcore_to_hf_window_size adds the 1 back).
 * Full attention on every k-th layer (1-based), the window between, is
 * its integer --window-attn-skip-freq (is_layer_window_attention in
 * megatron/core/transformer/utils.py); full attention on the first
 * window_from layers needs its list form, 1 a windowed layer. */
static void window_flags(st__mg_args_t *b, const strata_plan_t *p) {
  int from = p->window_from, n = p->layers - from, k = p->window_every;
  flag(b, "--window-size", "\"(%d,0)\"", p->window > 1 ? p->window - 1 : 0);
  if (from <= 0 && k > 1)
    flag(b, "--window-attn-skip-freq", "%d", k);
  else if (from > 0 && k > 1)
    flag(b, "--window-attn-skip-freq", "\"[0]*%d+([1]*%d+[0])*%d+[1]*%d\"",
         from, k - 1, n / k, n % k);
  else if (from > 0)
    flag(b, "--window-attn-skip-freq", "\"[0]*%d+[1]*%d\"", from, n);
}

static void attention_flags(st__mg_args_t *b, const strata_plan_t *p) {
  if (p->kv_lora > 0) {
    flag(b, "--multi-latent-attention", NULL);
    if (p->q_lora > 0) flag(b, "--q-lora-rank", "%d", p->q_lora);
    flag(b, "--kv-lora-rank", "%d", p->kv_lora);
    flag(b, "--qk-head-dim", "%d", p->qk_nope);
    flag(b, "--qk-pos-emb-head-dim", "%d", p->qk_rope);
    flag(b, "--v-head-dim", "%d", p->v_head);
  }
  if (p->head_dim > 0) flag(b, "--kv-channels", "%d", p->head_dim);
  if (p->rotary_percent > 0 && p->rotary_percent < 1)
    flag(b, "--rotary-percent", "%g", p->rotary_percent);
  if (p->qkv_bias && !p->out_bias) flag(b, "--add-qkv-bias", NULL);
  if (p->qk_norm == 1) flag(b, "--qk-layernorm", NULL);
  if (p->qk_norm == 2) flag(b, "--qk-l2-norm", NULL);
  if (p->nope_every > 0) flag(b, "--no-rope-freq", "%d", p->nope_every);
  rope_scaling_flags(b, p);
  if (p->window > 0) window_flags(b, p);
  /* gpt-oss's sinks: a learned offset in each head's softmax
   * (transformer_config.py softmax_type) */
  if (p->attn_sinks) flag(b, "--softmax-type", "learnable");
}

static void parallel_flags(st__mg_args_t *b, const strata_plan_t *p) {
  if (p->cp > 1) {
    flag(b, "--context-parallel-size", "%d", p->cp);
    flag(b, "--cp-comm-type", "%s",
         p->cp_comm == STRATA_CP_ALLGATHER ? "allgather" : "p2p");
  }
  if (p->fp8 == STRATA_LOWP_NVFP4) { /* FP4: its own format and recipe */
    flag(b, "--fp4-format", "e2m1");
    flag(b, "--fp4-recipe", "nvfp4");
    if (p->fp8_param_gather) flag(b, "--fp4-param-gather", NULL);
  } else if (p->fp8) {
    flag(b, "--fp8-format", "hybrid");
    flag(b, "--fp8-recipe", "%s", strata_lowp_name(p->fp8));
    if (p->fp8_param_gather) flag(b, "--fp8-param-gather", NULL);
  }
  if (p->zero_stage >= 2) { /* Megatron-FSDP */
    flag(b, "--use-megatron-fsdp", NULL);
    /* its version 2 refuses a pipeline (mcore_fsdp_adapter.py) */
    if (p->pp > 1) flag(b, "--megatron-fsdp-version", "1");
    flag(b, "--use-distributed-optimizer", NULL);
    flag(b, "--data-parallel-sharding-strategy", "%s",
         p->zero_stage >= 3 ? "optim_grads_params" : "optim_grads");
    flag(b, "--ckpt-format", "fsdp_dtensor");
  }
}

/* Per-layer CUDA graphs: the implementation given, and what a layer's
 * graph captures (--cuda-graph-modules, which replaced --cuda-graph-scope
 * at the pinned Megatron-LM; nothing: the whole layer). */
static void cuda_graph_flags(st__mg_args_t *b, const strata_plan_t *p) {
  char v[160];
  size_t n = 0;
  if (!p->cuda_graph_impl) return;
  flag(b, "--cuda-graph-impl", "%s",
       strata_cuda_graph_impl_name(p->cuda_graph_impl));
  /* a whole-step graph cannot hold the host's NaN check (arguments.py) */
  if (p->cuda_graph_impl == STRATA_CUDA_GRAPH_FULL)
    flag(b, "--no-check-for-nan-in-loss-and-grad", NULL);
  for (int k = 0; strata_cuda_graph_scope_name(k) && n < sizeof v; k++)
    if (p->cuda_graph_scope & (1 << k))
      n += (size_t)snprintf(v + n, sizeof v - n, "%s%s", n ? " " : "",
                            strata_cuda_graph_scope_name(k));
  if (n) flag(b, "--cuda-graph-modules", "%s", v);
}

void st__megatron_par_flags(st__mg_args_t *b, const strata_plan_t *p) {
  parallel_flags(b, p);
  cuda_graph_flags(b, p);
  moe_flags(b, p);
  attention_flags(b, p);
  /* Megatron-LM builds them on the last pipeline stage, as planned */
  if (p->mtp_layers > 0) flag(b, "--mtp-num-layers", "%d", p->mtp_layers);
}
