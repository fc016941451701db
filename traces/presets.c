/*
 * presets.c - the named models: each one a row of options for the
 * generator (strata_preset_opts), starting from its family's defaults
 * (opts.c).  It builds nothing itself; strata_model_load (load.c) hands
 * the options to the generator.
 *
 * The GPT presets are the ten models of Narayanan et al. 2021 ("Efficient
 * Large-Scale Language Model Training on GPU Clusters Using Megatron-LM"),
 * Table 1, with V = 51200 and s = 2048, plus GPT-3 175B (Brown et al.
 * 2020).  LLaMA presets use the published configurations (Llama 2 70B:
 * ffn 28672, 8 KV heads; Llama 3.1 405B: ffn 53248, 8 KV heads; Llama 3
 * 8B and 70B: Meta-Llama-3-8B's and -70B's config.json on Hugging Face,
 * Grattafiori et al. 2024, "The Llama 3 Herd of Models", Table 3: ffn
 * 14336 and 28672, 8 KV heads, V 128256, RoPE base 500,000, s 8192).
 *
 * The mixtures of experts follow their published configurations (each
 * model's config.json on Hugging Face and its paper or model card;
 * docs/trace-format.md lists them with the parameter counts they give),
 * trained at a sequence of 4096.
 */
#include <string.h>

#include "traces/traces_int.h"

typedef struct {
  const char *name;
  strata_family_t family;
  int layers, hidden, heads, kv_heads, ffn, vocab, seq;
  double rope_theta; /* 0: none stated */
  int max_positions; /* max_position_embeddings (0: the sequence's) */
  strata_rope_scaling_t rope_scaling;
} preset_t;

/* Llama 3.1's RoPE scaling (Llama-3.1-405B's config.json: rope_type
 * llama3, factor 8, low_freq_factor 1, high_freq_factor 4,
 * original_max_position_embeddings 8192) */
#define LLAMA31_ROPE                                                           \
  {                                                                            \
    .type = STRATA_ROPE_SCALING_LLAMA3, .factor = 8, .low = 1, .high = 4,      \
    .original = 8192                                                           \
  }

#define GPT(n, h, l, a)                                                        \
  {                                                                            \
    n, STRATA_FAMILY_GPT, l, h, a, 0, 0, 51200, 2048, 0, 0, {                  \
      0                                                                        \
    }                                                                          \
  }
static const preset_t presets[] = {
    {"bert-large",
     STRATA_FAMILY_BERT,
     24,
     1024,
     16,
     0,
     0,
     30522,
     512,
     0,
     0,
     {0}},
    GPT("gpt-1.7b", 2304, 24, 24),
    GPT("gpt-3.6b", 3072, 30, 32),
    GPT("gpt-7.5b", 4096, 36, 32),
    GPT("gpt-18.4b", 6144, 40, 48),
    GPT("gpt-39.1b", 8192, 48, 64),
    GPT("gpt-76.1b", 10240, 60, 80),
    GPT("gpt-145.6b", 12288, 80, 96),
    GPT("gpt-310.1b", 16384, 96, 128),
    GPT("gpt-529.6b", 20480, 105, 128),
    GPT("gpt-1t", 25600, 128, 160),
    {"gpt3-175b",
     STRATA_FAMILY_GPT,
     96,
     12288,
     96,
     0,
     0,
     50257,
     2048,
     0,
     0,
     {0}},
    {"llama2-70b",
     STRATA_FAMILY_LLAMA,
     80,
     8192,
     64,
     8,
     28672,
     32000,
     4096,
     0,
     4096,
     {0}},
    {"llama3-8b",
     STRATA_FAMILY_LLAMA,
     32,
     4096,
     32,
     8,
     14336,
     128256,
     8192,
     500000,
     8192,
     {0}},
    {"llama3-70b",
     STRATA_FAMILY_LLAMA,
     80,
     8192,
     64,
     8,
     28672,
     128256,
     8192,
     500000,
     8192,
     {0}},
    {"llama3-405b", STRATA_FAMILY_LLAMA, 126, 16384, 128, 8, 53248, 128256,
     8192, 500000, 131072, LLAMA31_ROPE},
};
#undef GPT
#undef LLAMA31_ROPE
#define N_PRESETS (int)(sizeof presets / sizeof presets[0])

/* The mixtures of experts and their variants: the LLaMA family's decoder
 * with the fields of strata_gen_opts_t set. */
typedef struct {
  const char *name;
  int layers, hidden, heads, kv_heads, ffn, vocab;
  int head_dim, qkv_bias, out_bias, qk_norm, window, window_every;
  double rope_theta;
  int experts, topk, moe_ffn, shared_ffn, first_dense, expert_bias;
  int q_lora, kv_lora, qk_nope, qk_rope, v_head;
  int mtp_layers;
  int router_sigmoid; /* the router's scores through a sigmoid */
  /* group-limited routing and the routed experts' scaling (0: none) */
  int router_groups, router_group_topk;
  double router_topk_scale;
  /* gpt-oss's attention sinks, clamped GLU and YaRN (0: none) */
  int attn_sinks;
  double glu_limit;
  strata_rope_scaling_t rope_scaling;
  /* the router's training (strata_gen_opts_t) and the trained context,
   * as each model's config.json states them */
  struct {
    double aux_loss;
    int seq_aux, expert_bias;
  } router;
  int max_positions;
} moe_preset_t;

static const moe_preset_t moe_presets[] = {
    /* Mixtral 8x7B (Jiang et al. 2024, "Mixtral of Experts") */
    {"mixtral-8x7b",
     32,
     4096,
     32,
     8,
     14336,
     32000,
     0,
     0,
     0,
     0,
     0,
     0,
     1e6,
     8,
     2,
     14336,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     {0},
     .router = {.aux_loss = 0.02},
     .max_positions = 32768},
    /* Mixtral 8x22B (Mistral AI, Mixtral-8x22B-v0.1 config.json) */
    {"mixtral-8x22b",
     56,
     6144,
     48,
     8,
     16384,
     32768,
     0,
     0,
     0,
     0,
     0,
     0,
     1e6,
     8,
     2,
     16384,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     {0},
     .router = {.aux_loss = 0.001},
     .max_positions = 65536},
    /* DeepSeek-V3 (DeepSeek-AI 2024, arXiv 2412.19437, section 4.2): MLA,
     * 3 dense layers, then 1 shared + 256 routed experts, top-8 by sigmoid
     * scores (section 2.1.2); trained with one multi-token prediction
     * module (section 4.2, D = 1) */
    {"deepseek-v3",
     61,
     7168,
     128,
     0,
     18432,
     129280,
     0,
     0,
     0,
     0,
     0,
     0,
     1e4,
     256,
     8,
     2048,
     2048,
     3,
     0,
     1536,
     512,
     128,
     64,
     128,
     1,
     1,
     8, /* DeepSeek-V3's config.json: n_group 8, topk_group 4, */
     4, /* routed_scaling_factor 2.5 */
     2.5,
     0,
     0,
     {0},
     .router = {.aux_loss = 0.001, .seq_aux = 1, .expert_bias = 1},
     .max_positions = 163840},
    /* Kimi K2 (Kimi Team 2025, "Kimi K2: Open Agentic Intelligence",
     * arXiv 2507.20534, and Kimi-K2-Instruct's config.json): DeepSeek-V3's
     * architecture with 64 heads, 1 dense layer, then 1 shared + 384
     * routed experts top-8 by sigmoid scores, one group (n_group 1: no
     * group-limited routing), routed_scaling_factor 2.827, RoPE base
     * 50,000, no multi-token prediction module (its model card: 1T
     * parameters, 32B activated) */
    {"kimi-k2",
     61,
     7168,
     64,
     0,
     18432,
     163840,
     0,
     0,
     0,
     0,
     0,
     0,
     5e4,
     384,
     8,
     2048,
     2048,
     1,
     0,
     1536,
     512,
     128,
     64,
     128,
     0,
     1,
     0,
     0,
     2.827,
     0,
     0,
     {0},
     .router = {.aux_loss = 0.001, .seq_aux = 1, .expert_bias = 1},
     .max_positions = 131072},
    /* Qwen3-235B-A22B (Qwen Team 2025, Qwen3 technical report, Table 2) */
    {"qwen3-235b-a22b",
     94,
     4096,
     64,
     4,
     12288,
     151936,
     128,
     0,
     0,
     1,
     0,
     0,
     1e6,
     128,
     8,
     1536,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     {0},
     .router = {.aux_loss = 0.001},
     .max_positions = 40960},
    /* Qwen3-30B-A3B (Qwen Team 2025, Qwen3 technical report, Table 2, and
     * its config.json): 128 experts top-8 of hidden 768 on all 48
     * layers, no shared expert, q/k norms, head 128 (its model card: 30.5B
     * parameters, 3.3B activated) */
    {"qwen3-30b-a3b",
     48,
     2048,
     32,
     4,
     6144,
     151936,
     128,
     0,
     0,
     1,
     0,
     0,
     1e6,
     128,
     8,
     768,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     {0},
     .router = {.aux_loss = 0.001},
     .max_positions = 40960},
    /* gpt-oss-120b (OpenAI 2025, model card; its config.json): biases,
     * 128-token windows on every other layer, 128 experts top-4, attention
     * sinks, the GLU clamped at 7, YaRN x32 from 4096 positions (beta_fast
     * 32, beta_slow 1, truncate false) */
    {"gpt-oss-120b",
     36,
     2880,
     64,
     8,
     2880,
     201088,
     64,
     1,
     1,
     0,
     128,
     2,
     150000,
     128,
     4,
     2880,
     0,
     0,
     1,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     .attn_sinks = 1,
     .glu_limit = 7,
     .rope_scaling = {.type = STRATA_ROPE_SCALING_YARN,
                      .factor = 32,
                      .low = 1,
                      .high = 32,
                      .mscale = 1,
                      .original = 4096,
                      .unrounded = 1},
     .router = {.aux_loss = 0.9},
     .max_positions = 131072},
};
#define N_MOE (int)(sizeof moe_presets / sizeof moe_presets[0])
#define N_ALL (N_PRESETS + N_MOE)

const char *const *strata_preset_names(void) {
  static const char *names[N_ALL + 1];
  for (int i = 0; i < N_PRESETS; i++)
    names[i] = presets[i].name;
  for (int i = 0; i < N_MOE; i++)
    names[N_PRESETS + i] = moe_presets[i].name;
  names[N_ALL] = NULL;
  return names;
}

static void moe_preset_opts(const moe_preset_t *p, strata_gen_opts_t *o) {
  strata_gen_opts_init(o, STRATA_FAMILY_LLAMA);
  o->layers = p->layers, o->hidden = p->hidden, o->heads = p->heads;
  o->kv_heads = p->kv_heads, o->ffn = p->ffn, o->vocab = p->vocab;
  o->seq = 4096;
  o->head_dim = p->head_dim, o->qkv_bias = p->qkv_bias;
  o->out_bias = p->out_bias, o->qk_norm = p->qk_norm;
  o->window = p->window, o->window_every = p->window_every;
  o->rope_theta = p->rope_theta;
  o->experts = p->experts, o->topk = p->topk, o->moe_ffn = p->moe_ffn;
  o->shared_ffn = p->shared_ffn, o->first_dense = p->first_dense;
  o->expert_bias = p->expert_bias;
  o->q_lora = p->q_lora, o->kv_lora = p->kv_lora, o->qk_nope = p->qk_nope;
  o->qk_rope = p->qk_rope, o->v_head = p->v_head;
  o->mtp_layers = p->mtp_layers;
  o->router_sigmoid = p->router_sigmoid;
  o->router_groups = p->router_groups;
  o->router_group_topk = p->router_group_topk;
  o->router_topk_scale = p->router_topk_scale;
  o->attn_sinks = p->attn_sinks;
  o->glu_limit = p->glu_limit;
  o->rope_scaling = p->rope_scaling;
  o->router_aux_loss = p->router.aux_loss;
  o->router_seq_aux = p->router.seq_aux;
  o->router_expert_bias = p->router.expert_bias;
  o->max_positions = p->max_positions;
}

int strata_preset_opts(const char *preset, strata_gen_opts_t *o) {
  for (int i = 0; i < N_PRESETS; i++) {
    const preset_t *p = &presets[i];
    if (strcmp(preset, p->name)) continue;
    strata_gen_opts_init(o, p->family);
    o->layers = p->layers;
    o->hidden = p->hidden;
    o->heads = p->heads;
    o->kv_heads = p->kv_heads;
    o->ffn = p->ffn;
    o->vocab = p->vocab;
    o->seq = p->seq;
    o->rope_theta = p->rope_theta;
    o->max_positions = p->max_positions;
    o->rope_scaling = p->rope_scaling;
    return 0;
  }
  for (int i = 0; i < N_MOE; i++)
    if (!strcmp(preset, moe_presets[i].name)) {
      moe_preset_opts(&moe_presets[i], o);
      return 0;
    }
  return STRATA_ENOTFOUND;
}
