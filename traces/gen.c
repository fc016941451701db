/*
 * gen.c - the built-in model generator: strata_generate checks a
 * strata_gen_opts_t (a preset's, a family's with overrides, or what hf.c
 * reads from a mixture of experts' config) and states it as a transformer
 * description for the one builder (arch.c).  The families are rows of
 * that translation: GPT (Megatron-LM style: learned positions, pre-LN,
 * GELU MLP, tied head), BERT (word + position + token-type embeddings,
 * post-LN, MLM head) and LLaMA (RMSNorm, RoPE, grouped-query attention,
 * SwiGLU) with the variants of today's decoders (head size apart from
 * hidden / heads, q/k/v and output biases, per-head q/k norms, sliding
 * windows, partial rotary, multi-head latent attention, mixtures of
 * experts, multi-token prediction).
 *
 * Each model is a prologue (layer -1), its layers as blocks stored once
 * with their repeat (one block, or one per run of identical layers), and
 * an epilogue (layer -1).  The hyper-parameters the graph records are the
 * options as given, which the exporters read back.
 */
#include <stdio.h>
#include <string.h>

#include "traces/traces_int.h"

/* ---- options ---- */

static int default_ffn(strata_family_t f, int hidden) {
  if (f != STRATA_FAMILY_LLAMA) return 4 * hidden;
  int64_t n = (int64_t)8 * hidden / 3;
  return (int)((n + 255) / 256 * 256);
}

static int any_variant(const strata_gen_opts_t *o) {
  return o->head_dim > 0 || o->qkv_bias > 0 || o->out_bias > 0 ||
         o->qk_norm > 0 || o->window > 0 || o->experts > 0 || o->kv_lora > 0 ||
         o->mtp_layers > 0 || (o->rotary_percent > 0 && o->rotary_percent < 1);
}

static int check_moe(const strata_gen_opts_t *o) {
  if (o->experts <= 0) return 0;
  if (o->topk < 1 || o->topk > o->experts)
    return strata_error(STRATA_EBADINPUT,
                        "topk %d: each token goes to 1 to the %d experts",
                        o->topk, o->experts);
  if (o->moe_ffn < 0 || o->shared_ffn < 0 || o->first_dense < 0 ||
      o->first_dense >= o->layers)
    return strata_error(STRATA_EBADINPUT,
                        "moe_ffn and shared_ffn must be >= 0 and first_dense "
                        "%d below the %d layers",
                        o->first_dense, o->layers);
  if (!(o->capacity >= 0 && o->capacity <= 1000) || o->experts > (1 << 20))
    return strata_error(STRATA_EBADINPUT,
                        "capacity factor %g (0: dropless) or %d experts out "
                        "of range",
                        o->capacity, o->experts);
  return 0;
}

static int check_mla(const strata_gen_opts_t *o, int kv) {
  if (o->kv_lora <= 0) return 0;
  if (o->qk_nope < 1 || o->qk_rope < 1 || o->v_head < 1 || o->q_lora < 0)
    return strata_error(STRATA_EBADINPUT,
                        "latent attention (kv_lora %d) needs qk_nope, qk_rope "
                        "and v_head >= 1 (q_lora >= 0)",
                        o->kv_lora);
  if (kv != o->heads)
    return strata_error(STRATA_EBADINPUT,
                        "latent attention has one key and value per head: "
                        "kv_heads %d must be 0 or heads %d",
                        kv, o->heads);
  return 0;
}

static int check_variants(const strata_gen_opts_t *o, int kv) {
  if (!any_variant(o)) return 0;
  if (o->family != STRATA_FAMILY_LLAMA)
    return strata_error(STRATA_EBADINPUT,
                        "head size, biases, q/k norms, windows, experts, "
                        "latent attention and multi-token prediction are "
                        "available for the llama family only");
  if (o->head_dim < 0 || o->window < 0 || o->window_every < 0)
    return strata_error(STRATA_EBADINPUT,
                        "head_dim, window and window_every must be >= 0");
  if (o->moe_every < 0 || o->nope_every < 0 || o->qk_norm > 2)
    return strata_error(STRATA_EBADINPUT,
                        "moe_every and nope_every must be >= 0, qk_norm 0 to "
                        "2");
  if (o->router_groups < 0 || o->router_group_topk < 0 ||
      o->router_group_topk > o->router_groups ||
      (o->router_groups > 0 && (o->experts <= 0 || o->router_group_topk < 1 ||
                                o->experts % o->router_groups)) ||
      !(o->router_topk_scale >= 0 && o->router_topk_scale <= 1e6))
    return strata_error(STRATA_EBADINPUT,
                        "router groups %d (top %d) and scaling %g: the groups "
                        "must divide the %d experts, 1 to all of them taken, "
                        "the scaling 0 to 1e6",
                        o->router_groups, o->router_group_topk,
                        o->router_topk_scale, o->experts);
  if (!(o->router_aux_loss >= 0 && o->router_aux_loss <= 1e3) ||
      !(o->router_jitter >= 0 && o->router_jitter < 1) || o->max_positions < 0)
    return strata_error(STRATA_EBADINPUT,
                        "router auxiliary loss %g, jitter %g, positions %d: "
                        "the loss's coefficient must be 0 to 1000, the "
                        "jitter 0 to below 1, the positions >= 0",
                        o->router_aux_loss, o->router_jitter, o->max_positions);
  if (o->rotary_percent < 0 || o->rotary_percent > 1)
    return strata_error(STRATA_EBADINPUT,
                        "rotary share %g: must be in (0, 1] (0: all dims)",
                        o->rotary_percent);
  if (o->mtp_layers > 16)
    return strata_error(STRATA_EBADINPUT,
                        "%d multi-token prediction modules: at most 16",
                        o->mtp_layers);
  int rc = check_moe(o);
  return rc ? rc : check_mla(o, kv);
}

/* Sizes far enough from overflow; a refusal says which one. */
static int check_sizes(const strata_gen_opts_t *o) {
  const char *pre = "model sizes are out of range";
  double d = o->head_dim > 0 ? o->head_dim : 1.0;
  double big = (double)o->micro_batch * o->seq *
               ((double)o->seq * o->heads + o->vocab + 8.0 * o->hidden +
                (double)o->heads * d + 4.0 * o->topk * o->hidden);
  double moe = (double)o->experts * o->hidden * (o->moe_ffn + o->ffn + 1.0);
  static const char *const names[] = {"layers", "hidden",  "head_dim",
                                      "q_lora", "kv_lora", "qk_nope + qk_rope",
                                      "v_head", "moe_ffn", "shared_ffn"};
  const int v[] = {o->layers, o->hidden,  o->head_dim,
                   o->q_lora, o->kv_lora, o->qk_nope + o->qk_rope,
                   o->v_head, o->moe_ffn, o->shared_ffn};
  const int max[] = {1000000, 1 << 24, 1 << 16, 1 << 24, 1 << 24,
                     1 << 16, 1 << 16, 1 << 24, 1 << 24};
  if (big > 1e17)
    return strata_error(STRATA_EBADINPUT,
                        "%s: micro_batch x seq x (seq x heads + vocab + 8 x "
                        "hidden + heads x head_dim + 4 x topk x hidden) is "
                        "%.3g (at most 1e17)",
                        pre, big);
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    if (v[i] > max[i])
      return strata_error(STRATA_EBADINPUT, "%s: %s %d (at most %d)", pre,
                          names[i], v[i], max[i]);
  if (moe > 1e14)
    return strata_error(STRATA_EBADINPUT,
                        "%s: experts x hidden x (moe_ffn + ffn + 1) is %.3g "
                        "(at most 1e14)",
                        pre, moe);
  return 0;
}

static int check_opts(const strata_gen_opts_t *o, int kv) {
  if (o->layers < 1 || o->hidden < 1 || o->heads < 1 || o->seq < 1 ||
      o->vocab < 1 || o->micro_batch < 1 || o->ffn < 0 || o->kv_heads < 0)
    return strata_error(STRATA_EBADINPUT,
                        "layers, hidden, heads, seq, vocab and micro_batch "
                        "must be >= 1");
  if (o->hidden % o->heads && o->head_dim <= 0 && o->kv_lora <= 0)
    return strata_error(
        STRATA_EBADINPUT, "hidden %d is not a multiple of heads %d%s",
        o->hidden, o->heads,
        o->family == STRATA_FAMILY_LLAMA ? " (give the head size, --head-dim)"
                                         : "");
  if (o->heads % kv)
    return strata_error(STRATA_EBADINPUT,
                        "heads %d is not a multiple of kv_heads %d", o->heads,
                        kv);
  if (kv != o->heads && o->family != STRATA_FAMILY_LLAMA)
    return strata_error(STRATA_EBADINPUT,
                        "kv_heads %d differs from heads %d: grouped-query "
                        "attention is available for the llama family only",
                        kv, o->heads);
  if ((unsigned)o->dtype >= STRATA_DTYPE_COUNT ||
      o->dtype == STRATA_DTYPE_I64 || o->dtype == STRATA_DTYPE_I32 ||
      o->dtype == STRATA_DTYPE_U8)
    return strata_error(STRATA_EBADINPUT,
                        "activations need a float dtype (f32, bf16, f16, f8)");
  int rc = check_variants(o, kv);
  if (rc) return rc;
  return check_sizes(o);
}

/* Rotary dims of each head when only a share rotates (0: all of them;
 * latent attention rotates its own qk_rope part). */
static int rotary_dims(const strata_gen_opts_t *o, int64_t d) {
  double rp = o->rotary_percent;
  int64_t rd = rp > 0 && rp < 1 && o->kv_lora <= 0 ? (int64_t)(d * rp) : 0;
  return rd > 0 && rd < d ? (int)rd : 0;
}

/* GPT and BERT: learned positions, layernorms with biases, a GELU MLP,
 * biases on every linear; BERT's embeddings, post-LN layers and MLM head
 * besides. */
static void gpt_bert_row(const strata_gen_opts_t *o, st__arch_t *a) {
  a->max_pos = o->seq;
  a->norm_bias = 1;
  a->act = ST__ACT_GELU;
  a->act_op = "gelu";
  a->qkv_bias = a->out_bias = a->mlp_bias = 1;
  if (o->family != STRATA_FAMILY_BERT) return;
  a->type_vocab = 2;
  a->types_first = 1;
  a->embed_norm = a->post_norm = a->mlm_head = a->head_bias = 1;
  a->causal = 0;
  a->block = "encoder";
}

/* LLaMA: RMSNorm, RoPE, SwiGLU, and the variants as the options say. */
static void llama_row(const strata_gen_opts_t *o, st__arch_t *a) {
  a->rms = a->rope = a->gated = 1;
  a->act = ST__ACT_SILU;
  a->norm1 = "norm1";
  a->norm2 = "norm2";
  a->qkv_bias = o->qkv_bias > 0;
  a->out_bias = o->out_bias > 0;
  a->qk_norm = o->qk_norm > 0;
  a->window = o->window > 0 ? o->window : 0;
  a->window_every = o->window_every;
  a->experts = o->experts > 0 ? o->experts : 0;
  a->topk = o->topk;
  a->moe_ffn = o->moe_ffn ? o->moe_ffn : a->ffn;
  a->shared_ffn = o->shared_ffn;
  a->shared_gate = o->shared_gate;
  a->expert_bias = o->expert_bias;
  a->first_dense = o->first_dense;
  a->moe_every = o->moe_every;
  a->capacity = o->capacity;
  if (o->kv_lora > 0) {
    a->q_lora = o->q_lora, a->kv_lora = o->kv_lora;
    a->qk_nope = o->qk_nope, a->qk_rope = o->qk_rope, a->v_head = o->v_head;
  }
  a->mtp_layers = o->mtp_layers > 0 ? o->mtp_layers : 0;
}

/* The checked options o (kv: their key/value heads) as a description. */
static void to_arch(const strata_gen_opts_t *o, int kv, st__arch_t *a) {
  st__arch_init(a);
  snprintf(a->family, sizeof a->family, "%s", strata_family_name(o->family));
  a->layers = o->layers;
  a->hidden = o->hidden;
  a->heads = o->heads;
  a->kv_heads = o->kv_lora > 0 ? o->heads : kv;
  a->head_dim = o->head_dim > 0 ? o->head_dim : 0;
  a->ffn = o->ffn ? o->ffn : default_ffn(o->family, o->hidden);
  a->vocab = o->vocab;
  a->seq = o->seq;
  a->micro_batch = o->micro_batch;
  a->dtype = o->dtype;
  a->flash_attention = !!o->flash_attention;
  a->dropout = !!o->dropout;
  a->tie = !!o->tie_embeddings;
  a->rotary_dim =
      rotary_dims(o, a->head_dim ? a->head_dim : o->hidden / o->heads);
  a->long_window = a->run_prefix = 1;
  if (o->family == STRATA_FAMILY_LLAMA)
    llama_row(o, a);
  else
    gpt_bert_row(o, a);
}

static void set_variant_hp(const strata_gen_opts_t *o, st__arch_t *a) {
  struct strata_graph_hp *hp = &a->hp;
  hp->head_dim = o->head_dim > 0 ? o->head_dim : 0;
  hp->qkv_bias = o->qkv_bias > 0;
  hp->out_bias = o->out_bias > 0;
  hp->window = o->window > 0 ? o->window : 0;
  hp->window_every = o->window > 0 ? o->window_every : 0;
  hp->rope_theta = o->rope_theta > 0 ? o->rope_theta : 0;
  if (o->experts > 0) {
    hp->experts = o->experts;
    hp->topk = o->topk;
    hp->moe_ffn = o->moe_ffn ? o->moe_ffn : a->ffn;
    hp->shared_ffn = o->shared_ffn;
    hp->first_dense = o->first_dense;
    hp->expert_bias = o->expert_bias > 0;
    hp->capacity = o->capacity;
    hp->moe_every = o->moe_every > 1 ? o->moe_every : 0;
    hp->router_sigmoid = o->router_sigmoid > 0;
    hp->router_groups = o->router_groups;
    hp->router_group_topk = o->router_group_topk;
    hp->router_topk_scale = o->router_topk_scale;
    hp->router_aux_loss = o->router_aux_loss > 0 ? o->router_aux_loss : 0;
    hp->router_jitter = o->router_jitter > 0 ? o->router_jitter : 0;
    hp->router_seq_aux = o->router_seq_aux > 0;
    hp->router_pre_softmax = o->router_pre_softmax > 0;
    hp->router_expert_bias = o->router_expert_bias > 0;
  }
  hp->max_positions = o->max_positions > 0 ? o->max_positions : 0;
  hp->mtp_layers = o->mtp_layers > 0 ? o->mtp_layers : 0;
  hp->qk_norm = o->qk_norm > 0 ? o->qk_norm : 0; /* 2: L2 */
  hp->nope_every = o->nope_every > 0 ? o->nope_every : 0;
  /* the share the graph rotates: none recorded when it rounds to all */
  if (a->rotary_dim) hp->rotary_percent = o->rotary_percent;
  hp->rope_scaling = o->rope_scaling;
  hp->attn_chunk = o->attn_chunk > 0 ? o->attn_chunk : 0;
  hp->attn_sinks = o->attn_sinks > 0;
  hp->glu_limit = o->glu_limit > 0 ? o->glu_limit : 0;
  hp->norm_eps = o->norm_eps > 0 ? o->norm_eps : 0;
  hp->init_std = o->init_std > 0 ? o->init_std : 0;
  if (o->kv_lora > 0) {
    hp->q_lora = o->q_lora;
    hp->kv_lora = o->kv_lora;
    hp->qk_nope = o->qk_nope;
    hp->qk_rope = o->qk_rope;
    hp->v_head = o->v_head;
  }
}

/* What the graph records: the options as given. */
static void set_hp(const strata_gen_opts_t *o, st__arch_t *a) {
  struct strata_graph_hp *hp = &a->hp;
  memset(hp, 0, sizeof *hp);
  snprintf(hp->family, sizeof hp->family, "%s", a->family);
  hp->layers = o->layers;
  hp->hidden = o->hidden;
  hp->heads = o->heads;
  hp->kv_heads = a->kv_heads;
  hp->ffn = a->ffn;
  hp->vocab = o->vocab;
  hp->max_seq = o->seq;
  hp->flash_attention = !!o->flash_attention;
  hp->dropout = !!o->dropout;
  set_variant_hp(o, a);
}

int strata_generate(const strata_gen_opts_t *o, const char *name,
                    strata_graph_t **out) {
  st__arch_t a;
  int kv = o->kv_heads ? o->kv_heads : o->heads;
  int rc = check_opts(o, kv > 0 ? kv : 1);
  *out = NULL;
  if (rc) return rc;
  to_arch(o, kv, &a);
  set_hp(o, &a);
  return st__arch_build(&a, name ? name : strata_family_name(o->family), out);
}
