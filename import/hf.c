/*
 * hf.c - a Hugging Face config.json as a model: its model_type says which
 * architecture it describes, its fields say the sizes and the variants
 * (docs/import.md has the table of what each field becomes).
 *
 * Each model_type has a reader that fills an st__arch_t, marking every
 * key it uses.  What is left must be a key known to change nothing that
 * Strata counts (token ids, initialisation, epsilons, rope bases, labels,
 * generation defaults, ...): any other key is an error that names it, so
 * a field this importer does not understand never passes as a silent
 * approximation.  Mixtures of experts (mixtral, qwen2_moe, qwen3_moe,
 * deepseek_v2/v3 with latent attention, gpt_oss, glm4_moe, llama4) are
 * read into the LLaMA generator's options, as their presets are written,
 * so that they pass the same checks; gen.c states those options as an
 * st__arch_t.  Dense or not, every config ends in the one builder,
 * st__arch_build (arch.c).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "core/text.h"
#include "traces/traces_int.h"

#define MAX_USED 96
#define DEFAULT_SEQ 4096

typedef struct {
  const cJSON *root;
  const cJSON *defaults; /* the config class's defaults, or NULL */
  const char *where;
  const char *type;
  const char *used[MAX_USED];
  int n_used;
  int rc;
  int positions; /* max_position_embeddings (or n_positions); 0: none */
  const char *positions_key;
  strata_rope_scaling_t rs; /* rope_scaling, read by rope_scaling() */
} cfg_t;

static void use(cfg_t *c, const char *key) {
  if (c->n_used < MAX_USED) c->used[c->n_used++] = key;
}

/* A key's value: the config's, else its class's default (a config
 * written by transformers leaves out what equals the default). */
static const cJSON *item(cfg_t *c, const char *key) {
  use(c, key);
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(c->root, key);
  if (!it && c->defaults)
    it = cJSON_GetObjectItemCaseSensitive(c->defaults, key);
  return it && !cJSON_IsNull(it) ? it : NULL;
}

static int bad_field(cfg_t *c, const char *key, const char *want) {
  if (!c->rc)
    c->rc =
        strata_error(STRATA_EBADINPUT, "%s: '%s' (model_type %s) must be %s",
                     c->where, key, c->type, want);
  return 0;
}

/* An integer field; def when absent or null (required: an error). */
static int num(cfg_t *c, const char *key, int required, int def) {
  const cJSON *it = item(c, key);
  if (!it) {
    if (required && !c->rc)
      c->rc = strata_error(STRATA_EBADINPUT,
                           "%s: '%s' is missing (model_type %s needs it)",
                           c->where, key, c->type);
    return def;
  }
  double v = it->valuedouble;
  if (!cJSON_IsNumber(it) || v < 0 || v > 1e9 || v != floor(v))
    return bad_field(c, key, "a non-negative integer");
  return (int)v;
}

static double real(cfg_t *c, const char *key, double def) {
  const cJSON *it = item(c, key);
  if (!it) return def;
  if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
    return bad_field(c, key, "a number");
  return it->valuedouble;
}

/* The RoPE base: positive and at most what a trace file holds (1e12). */
/* rope_theta; transformers 5 writes it inside rope_parameters, per layer
 * type where they differ (the full-attention layers' is the model's). */
static double rope_base(cfg_t *c) {
  double v = real(c, "rope_theta", 0);
  const cJSON *rp = item(c, "rope_parameters");
  if (rp && !cJSON_IsObject(rp)) bad_field(c, "rope_parameters", "an object");
  if (!cJSON_GetObjectItemCaseSensitive(c->root, "rope_theta") &&
      cJSON_IsObject(rp)) { /* the config's own, before a class default */
    const cJSON *full = cJSON_GetObjectItemCaseSensitive(rp, "full_attention");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(
        cJSON_IsObject(full) ? full : rp, "rope_theta");
    if (t && !cJSON_IsNumber(t))
      bad_field(c, "rope_parameters", "an object with a numeric rope_theta");
    else if (t)
      v = t->valuedouble;
  }
  if (v < 0 || v > 1e12) {
    bad_field(c, "rope_theta", "between 0 and 1e12");
    return 0;
  }
  return v;
}

static int flag(cfg_t *c, const char *key, int def) {
  const cJSON *it = item(c, key);
  if (!it) return def;
  if (!cJSON_IsBool(it)) return bad_field(c, key, "true or false");
  return cJSON_IsTrue(it);
}

static const char *str(cfg_t *c, const char *key, const char *def) {
  const cJSON *it = item(c, key);
  if (!it) return def;
  if (!cJSON_IsString(it)) return bad_field(c, key, "a string"), def;
  return it->valuestring;
}

/* partial_rotary_factor: the share of each head RoPE rotates, in (0, 1]
 * (1 when absent or refused). */
static double rotary_factor(cfg_t *c) {
  double prf = real(c, "partial_rotary_factor", 1.0);
  if (prf > 0 && prf <= 1) return prf;
  bad_field(c, "partial_rotary_factor", "in (0, 1]");
  return 1;
}

/* ---- rope_scaling ---- */

/* A number of a rope_scaling object: def when absent, refused (the
 * field named) when not a positive finite number. */
static double scaling_num(cfg_t *c, const cJSON *o, const char *key,
                          double def) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!it || cJSON_IsNull(it)) return def;
  if (cJSON_IsNumber(it) && isfinite(it->valuedouble) && it->valuedouble > 0 &&
      it->valuedouble <= 1e9)
    return it->valuedouble;
  char what[96];
  snprintf(what, sizeof what, "an object whose '%s' is a positive number", key);
  bad_field(c, "rope_scaling", what);
  return def;
}

/* The keys each type takes (transformers' rope_config_validation). */
static int scaling_key_known(int type, const char *key) {
  static const char *const common[] = {"rope_type", "type", "factor",
                                       "rope_theta", NULL};
  static const char *const llama3[] = {"low_freq_factor", "high_freq_factor",
                                       "original_max_position_embeddings",
                                       NULL};
  static const char *const yarn[] = {"original_max_position_embeddings",
                                     "beta_fast",
                                     "beta_slow",
                                     "mscale",
                                     "mscale_all_dim",
                                     "truncate",
                                     NULL};
  const char *const *lists[] = {common,
                                type == STRATA_ROPE_SCALING_LLAMA3 ? llama3
                                : type == STRATA_ROPE_SCALING_YARN ? yarn
                                                                   : NULL};
  for (int l = 0; l < 2; l++)
    for (int i = 0; lists[l] && lists[l][i]; i++)
      if (!strcmp(key, lists[l][i])) return 1;
  return 0;
}

static int scaling_type(cfg_t *c, const cJSON *o) {
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "rope_type");
  if (!t) t = cJSON_GetObjectItemCaseSensitive(o, "type");
  const char *v = cJSON_IsString(t) ? t->valuestring : NULL;
  if (v && !strcmp(v, "default")) return STRATA_ROPE_SCALING_NONE;
  for (int k = STRATA_ROPE_SCALING_LLAMA3; v && k < STRATA_ROPE_SCALING_COUNT;
       k++)
    if (!strcmp(v, strata_rope_scaling_name(k))) return k;
  bad_field(c, "rope_scaling",
            "an object whose rope_type is default, llama3, linear or yarn "
            "(the types this importer carries to the exports; dynamic, "
            "longrope and others are not)");
  return STRATA_ROPE_SCALING_NONE;
}

/* One rope_scaling object into c->rs. */
static void scaling_of(cfg_t *c, const cJSON *o) {
  strata_rope_scaling_t *rs = &c->rs;
  const cJSON *it;
  int type = scaling_type(c, o);
  if (c->rc || type == STRATA_ROPE_SCALING_NONE) return;
  cJSON_ArrayForEach(it, o) if (!scaling_key_known(type, it->string)) {
    char what[160], key[64];
    snprintf(what, sizeof what,
             "an object without '%s' (not a field of rope_type %s)",
             st__plain(it->string, key, sizeof key),
             strata_rope_scaling_name(type));
    bad_field(c, "rope_scaling", what);
    return;
  }
  rs->type = type;
  if (!cJSON_GetObjectItemCaseSensitive(o, "factor"))
    bad_field(c, "rope_scaling", "an object with its factor");
  rs->factor = scaling_num(c, o, "factor", 1);
  double orig = scaling_num(c, o, "original_max_position_embeddings", 0);
  rs->original = (int)orig;
  if (type == STRATA_ROPE_SCALING_LLAMA3) {
    rs->low = scaling_num(c, o, "low_freq_factor", 1);
    rs->high = scaling_num(c, o, "high_freq_factor", 4);
  } else if (type == STRATA_ROPE_SCALING_YARN) {
    rs->low = scaling_num(c, o, "beta_slow", 1);
    rs->high = scaling_num(c, o, "beta_fast", 32);
    rs->mscale = scaling_num(c, o, "mscale", 1);
    rs->mscale_all = scaling_num(c, o, "mscale_all_dim", 0);
    it = cJSON_GetObjectItemCaseSensitive(o, "truncate");
    if (it && !cJSON_IsBool(it))
      bad_field(c, "rope_scaling", "an object whose truncate is true or false");
    rs->unrounded = cJSON_IsFalse(it);
  }
  if (orig != floor(orig))
    bad_field(c, "rope_scaling",
              "an object whose original_max_position_embeddings is an "
              "integer");
}

/* rope_scaling, or transformers 5's rope_parameters (of the full-attention
 * layers where the layer types differ: a scaling there alone is marked
 * full_only), into c->rs; refused on a model without rotary positions. */
static void rope_scaling(cfg_t *c, int rotary) {
  const cJSON *o = item(c, "rope_scaling");
  memset(&c->rs, 0, sizeof c->rs);
  if (!o) {
    const cJSON *rp =
        cJSON_GetObjectItemCaseSensitive(c->root, "rope_parameters");
    const cJSON *full = cJSON_GetObjectItemCaseSensitive(rp, "full_attention");
    o = cJSON_IsObject(full) ? full : rp;
    if (!cJSON_IsObject(o) ||
        !(cJSON_GetObjectItemCaseSensitive(o, "rope_type") ||
          cJSON_GetObjectItemCaseSensitive(o, "type")))
      return;
    if (o == full) c->rs.full_only = 1;
    use(c, "rope_parameters");
  }
  if (!cJSON_IsObject(o)) {
    bad_field(c, "rope_scaling", "an object");
    return;
  }
  if (!rotary) {
    bad_field(c, "rope_scaling",
              "absent (this model has no rotary positions to scale)");
    return;
  }
  int full_only = c->rs.full_only;
  scaling_of(c, o);
  c->rs.full_only = c->rs.type ? full_only : 0;
}

/* hidden_act and friends: the MLP's activation (gated set apart). */
static st__act_t activation(cfg_t *c, const char *key, const char *name) {
  static const struct {
    const char *name;
    st__act_t act;
  } acts[] = {
      {"gelu", ST__ACT_GELU},        {"gelu_new", ST__ACT_GELU},
      {"gelu_fast", ST__ACT_GELU},   {"gelu_pytorch_tanh", ST__ACT_GELU},
      {"gelu_python", ST__ACT_GELU}, {"relu", ST__ACT_RELU},
      {"silu", ST__ACT_SILU},        {"swish", ST__ACT_SILU}};
  for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
    if (!strcmp(name, acts[i].name)) return acts[i].act;
  bad_field(c, key,
            "an activation this importer knows (gelu, gelu_new, "
            "gelu_pytorch_tanh, relu, silu)");
  return ST__ACT_GELU;
}

/* Any dropout > 0 puts dropout layers in (their masks count). */
static void dropouts(cfg_t *c, st__arch_t *a, const char *const *keys) {
  for (; *keys; keys++)
    if (real(c, *keys, 0) > 0) a->dropout = 1;
}

/* The weights' dtype: torch_dtype, or dtype as transformers 4.56 and later
 * write it. */
static const char *dtype_name(cfg_t *c) {
  const char *t = str(c, "torch_dtype", NULL), *d = str(c, "dtype", NULL);
  if (t && d && strcmp(t, d)) bad_field(c, "dtype", "torch_dtype's value");
  return t ? t : d;
}

static void dtype(cfg_t *c, st__arch_t *a) {
  const char *t = dtype_name(c);
  if (!t) t = "bfloat16";
  if (!strcmp(t, "bfloat16"))
    a->dtype = STRATA_DTYPE_BF16;
  else if (!strcmp(t, "float16"))
    a->dtype = STRATA_DTYPE_F16;
  else if (!strcmp(t, "float32"))
    a->dtype = STRATA_DTYPE_F32;
  else
    bad_field(c, "torch_dtype", "bfloat16, float16 or float32");
}

/* The sequence a config is planned at unless told: its trained context
 * (recorded for the --seq warning) capped at 4096. */
static int seq_default(cfg_t *c, const char *key, int max_pos) {
  c->positions = max_pos;
  c->positions_key = key;
  return max_pos > 0 && max_pos < DEFAULT_SEQ ? max_pos : DEFAULT_SEQ;
}

/* The norms' epsilon: numerics, not counts, but the model trained
 * (Megatron-LM's --norm-epsilon); 0 when not given. */
static double norm_epsilon(cfg_t *c, const char *key) {
  double e = real(c, key, 0);
  if (e < 0 || e > 1) bad_field(c, key, "a number in [0, 1]");
  return e > 0 && e <= 1 ? e : 0;
}

/* initializer_range: the weights' initial standard deviation, the model
 * trained from scratch (Megatron-LM's --init-method-std); 0 when not
 * given. */
static double init_std(cfg_t *c) {
  double s = real(c, "initializer_range", 0);
  if (s < 0 || s > 1) bad_field(c, "initializer_range", "a number in [0, 1]");
  return s > 0 && s <= 1 ? s : 0;
}

/* ---- the LLaMA-like families ---- */

/* llama, mistral, qwen2, qwen3, gemma*, phi3, olmo2, cohere: rotary
 * positions, grouped-query attention, a gated MLP. */
static void llama_like(cfg_t *c, st__arch_t *a, int tie_default) {
  static const char *const drops[] = {"attention_dropout", "resid_pdrop",
                                      "embd_pdrop", NULL};
  a->hidden = num(c, "hidden_size", 1, 0);
  a->layers = num(c, "num_hidden_layers", 1, 0);
  a->heads = num(c, "num_attention_heads", 1, 0);
  a->kv_heads = num(c, "num_key_value_heads", 0, a->heads);
  a->head_dim = num(c, "head_dim", 0, 0);
  a->ffn = num(c, "intermediate_size", 1, 0);
  a->vocab = num(c, "vocab_size", 1, 0);
  a->seq = seq_default(c, "max_position_embeddings",
                       num(c, "max_position_embeddings", 0, 0));
  a->tie = flag(c, "tie_word_embeddings", tie_default);
  a->qkv_bias = a->out_bias = flag(c, "attention_bias", 0);
  a->mlp_bias = flag(c, "mlp_bias", 0);
  a->act = activation(c, "hidden_act", str(c, "hidden_act", "silu"));
  double prf = rotary_factor(c);
  int d = a->head_dim ? a->head_dim : a->heads ? a->hidden / a->heads : 0;
  if (prf < 1) a->rotary_dim = (int)(d * prf);
  a->rms = a->rope = a->gated = 1;
  a->rope_theta = rope_base(c);
  a->norm_eps = norm_epsilon(c, "rms_norm_eps");
  a->init_std = init_std(c);
  dropouts(c, a, drops);
}

/* A sliding window: on every layer (mistral, phi3), or only when
 * use_sliding_window is set and from max_window_layers on (qwen2/3). */
static void window(cfg_t *c, st__arch_t *a, int gated_by_flag) {
  int w = num(c, "sliding_window", 0, 0);
  if (gated_by_flag) {
    int on = flag(c, "use_sliding_window", 0);
    int from = num(c, "max_window_layers", 0, 0);
    if (!on) return;
    a->window_from = from;
  }
  a->window = w;
}

/* Which layers attend through the sliding window, as transformers
 * derives layer_types (one "sliding_attention" or "full_attention" per
 * layer; 4.53 on) from the older sliding_window_pattern k: full attention
 * on every k-th layer, (l + 1) % k == 0, the window elsewhere (Megatron-
 * LM's --window-attn-skip-freq k).  Returns k: 1 the window everywhere,
 * 0 nowhere. */
static int window_pattern(cfg_t *c, int layers, int k) {
  const cJSON *types = item(c, "layer_types"), *t;
  int n = 0, first_full = 0;
  if (item(c, "sliding_window_pattern")) { /* 1: every layer full */
    int given = num(c, "sliding_window_pattern", 0, k);
    if (given < 1) return bad_field(c, "sliding_window_pattern", "at least 1");
    k = given == 1 ? 0 : given;
  }
  if (!types) return k;
  if (!cJSON_IsArray(types)) return bad_field(c, "layer_types", "a list");
  cJSON_ArrayForEach(t, types) {
    const char *v = cJSON_IsString(t) ? t->valuestring : "";
    if (strcmp(v, "sliding_attention") && strcmp(v, "full_attention"))
      return bad_field(c, "layer_types",
                       "a list of sliding_attention and full_attention");
    if (!first_full && !strcmp(v, "full_attention")) first_full = n + 1;
    n++;
  }
  if (n != layers) return bad_field(c, "layer_types", "one per layer");
  if (!first_full) return 1;
  n = 0;
  cJSON_ArrayForEach(t, types) {
    if (!strcmp(t->valuestring, "sliding_attention") !=
        ((n + 1) % first_full != 0))
      return bad_field(c, "layer_types",
                       "sliding_attention with full_attention on every k-th "
                       "layer (as sliding_window_pattern k gives), or all "
                       "alike");
    n++;
  }
  return first_full == 1 ? 0 : first_full;
}

static void rd_llama(cfg_t *c, st__arch_t *a) {
  llama_like(c, a, 0);
}

static void rd_mistral(cfg_t *c, st__arch_t *a) {
  llama_like(c, a, 0);
  window(c, a, 0);
}

/* Qwen2 always has q, k and v biases (the config does not say). */
static void rd_qwen2(cfg_t *c, st__arch_t *a) {
  llama_like(c, a, 0);
  a->qkv_bias = 1;
  flag(c, "use_mrope", 0); /* multimodal rotary positions: the same work */
  window(c, a, 1);
}

static void rd_qwen3(cfg_t *c, st__arch_t *a) {
  llama_like(c, a, 0);
  a->qk_norm = 1;
  window(c, a, 1);
}

/* Gemma: GeGLU (hidden_activation), tied, its own head size. */
static void rd_gemma(cfg_t *c, st__arch_t *a) {
  llama_like(c, a, 1);
  const char *act = str(c, "hidden_activation", NULL);
  if (act) a->act = activation(c, "hidden_activation", act);
  if (!item(c, "hidden_act") && !act) a->act = ST__ACT_GELU;
  if (!item(c, "head_dim")) a->head_dim = 256;
}

/* Gemma 2: sandwich norms, sliding window on every other layer (the
 * even ones), tanh capping of the logits.  The attention logits' capping
 * is part of the fused attention (its FLOPs, like the softmax's, are not
 * counted; docs/import.md). */
static void rd_gemma2(cfg_t *c, st__arch_t *a) {
  rd_gemma(c, a);
  a->sandwich = 1;
  a->window = num(c, "sliding_window", 0, 4096);
  num(c, "sliding_window_size", 0, 0); /* an older name of the same */
  int k = window_pattern(c, a->layers, 2);
  if (!k) a->window = 0;
  a->window_every = k > 1 ? k : 1;
  a->logit_softcap = real(c, "final_logit_softcapping", 0) > 0;
  real(c, "attn_logit_softcapping", 0);
  real(c, "query_pre_attn_scalar", 0);
}

/* Gemma 3's text model (gemma3_text; a gemma3 config's text_config): Gemma
 * 2's layer with RMSNorms of each head's q and k, five sliding-window
 * layers to one global (sliding_window_pattern 6), no logit capping by
 * default.  The local layers' own rotary base costs nothing. */
static void rd_gemma3(cfg_t *c, st__arch_t *a) {
  rd_gemma2(c, a);
  a->qk_norm = 1;
  real(c, "rope_local_base_freq", 0);
  if (flag(c, "use_bidirectional_attention", 0))
    bad_field(c, "use_bidirectional_attention",
              "false (an encoder's bidirectional attention is not built)");
}

/* OLMo 2 (allenai): norms on the attention's and the MLP's outputs only,
 * RMSNorms of q and k.  Its q/k norms span the whole projection (weights
 * of heads x head_dim); built per head, as Qwen 3's: the same FLOPs and
 * bytes, (heads + kv_heads - 2) x head_dim fewer weights a layer. */
static void rd_olmo2(cfg_t *c, st__arch_t *a) {
  llama_like(c, a, 0);
  a->sandwich = a->post_only = 1;
  a->qk_norm = 1;
}

/* Cohere (Command R, R+): attention and MLP side by side from one
 * LayerNorm without a bias, a tied head scaled by logit_scale (one
 * multiply of the logits, not built), LayerNorms of q and k with
 * use_qk_norm (their weights per head in the checkpoint: built shared by
 * the heads, as Qwen 3's, (heads + kv_heads - 2) x head_dim fewer weights
 * a layer). */
static void rd_cohere(cfg_t *c, st__arch_t *a) {
  llama_like(c, a, 1);
  a->rms = 0;
  a->parallel = 1;
  a->qk_norm = flag(c, "use_qk_norm", 0);
  real(c, "logit_scale", 0);
}

/* Cohere 2 (Command R7B, Command A): Cohere's layer without q/k norms
 * (transformers' Cohere2DecoderLayer is CohereDecoderLayer over its own
 * attention), the sliding window (4096 by default) on three layers of
 * four and full attention on every fourth (Cohere2Config's layer_types
 * from sliding_window_pattern, 4 by default).  The full layers use no
 * rotary positions: the same work but one elementwise kernel, counted as
 * the others. */
static void rd_cohere2(cfg_t *c, st__arch_t *a) {
  llama_like(c, a, 1);
  a->rms = 0;
  a->parallel = 1;
  real(c, "logit_scale", 0);
  a->window = num(c, "sliding_window", 0, 4096);
  int k = window_pattern(c, a->layers, 4);
  if (!k) a->window = 0;
  a->window_every = k > 1 ? k : 1;
  /* Cohere's own keys, which the published configs carry and transformers
   * ignores: read only to agree with the layer it builds */
  static const char *const mine[] = {"use_parallel_block",
                                     "use_gated_activation", NULL};
  for (int i = 0; mine[i]; i++)
    if (!flag(c, mine[i], 1))
      bad_field(c, mine[i], "true (transformers' Cohere2 layer has it)");
  if (flag(c, "use_embedding_sharing", a->tie) != a->tie)
    bad_field(c, "use_embedding_sharing", "as tie_word_embeddings");
  flag(c, "use_parallel_embedding", 0); /* a vocabulary-parallel table */
  if (real(c, "rotary_pct", 1.0) != 1.0)
    bad_field(c, "rotary_pct", "1 (transformers rotates whole heads)");
  str(c, "position_embedding_type", NULL); /* rope_gptj: same work */
  const char *order = str(c, "order_of_interleaved_layers", NULL);
  if (order && strcmp(order, "local_attn_first"))
    bad_field(c, "order_of_interleaved_layers",
              "local_attn_first (the window before the full layer)");
}

static void rd_phi3(cfg_t *c, st__arch_t *a) {
  llama_like(c, a, 0);
  window(c, a, 0);
  num(c, "original_max_position_embeddings", 0, 0);
}

/* ---- GPT-2, GPT-NeoX, BERT ---- */

/* The usual MLP width, 4 x hidden, saturated: a hidden size up to 10^9
 * passes num() and four of it is no int (found by fuzz_hf); the size
 * checks then refuse the model. */
static int four_times(int hidden) {
  return hidden > INT_MAX / 4 ? INT_MAX : 4 * hidden;
}

static void rd_gpt2(cfg_t *c, st__arch_t *a) {
  static const char *const drops[] = {"resid_pdrop", "embd_pdrop", "attn_pdrop",
                                      NULL};
  a->hidden = num(c, "n_embd", 1, 0);
  a->layers = num(c, "n_layer", 1, 0);
  a->heads = num(c, "n_head", 1, 0);
  a->ffn = num(c, "n_inner", 0, four_times(a->hidden));
  a->vocab = num(c, "vocab_size", 1, 0);
  a->max_pos = num(c, "n_positions", 1, 0);
  a->norm_eps = norm_epsilon(c, "layer_norm_epsilon");
  a->init_std = init_std(c);
  num(c, "n_ctx", 0, 0);
  a->seq = a->max_pos;
  a->tie = flag(c, "tie_word_embeddings", 1);
  a->act = activation(c, "activation_function",
                      str(c, "activation_function", "gelu_new"));
  a->norm_bias = a->qkv_bias = a->out_bias = a->mlp_bias = 1;
  dropouts(c, a, drops);
}

/* Pythia and GPT-NeoX: parallel attention and MLP (two norms), partial
 * rotary positions, untied head. */
static void rd_gpt_neox(cfg_t *c, st__arch_t *a) {
  static const char *const drops[] = {"hidden_dropout", "attention_dropout",
                                      NULL};
  a->hidden = num(c, "hidden_size", 1, 0);
  a->layers = num(c, "num_hidden_layers", 1, 0);
  a->heads = num(c, "num_attention_heads", 1, 0);
  a->ffn = num(c, "intermediate_size", 0, four_times(a->hidden));
  a->vocab = num(c, "vocab_size", 1, 0);
  a->seq = seq_default(c, "max_position_embeddings",
                       num(c, "max_position_embeddings", 0, 0));
  a->tie = flag(c, "tie_word_embeddings", 0);
  a->act = activation(c, "hidden_act", str(c, "hidden_act", "gelu"));
  a->parallel = flag(c, "use_parallel_residual", 1) ? 2 : 0;
  a->qkv_bias = a->out_bias = flag(c, "attention_bias", 1);
  a->norm_bias = a->mlp_bias = a->rope = 1;
  double pct = real(c, "rotary_pct", 1.0);
  if (pct <= 0 || pct > 1)
    bad_field(c, "rotary_pct", "in (0, 1]");
  else if (pct < 1 && a->heads)
    a->rotary_dim = (int)(a->hidden / a->heads * pct);
  dropouts(c, a, drops);
}

/* One of two names of a field (a config class's attribute_map, or an
 * older key it still reads); both given must agree. */
static int num_either(cfg_t *c, const char *key, const char *alias,
                      int required, int def) {
  int has = item(c, key) != NULL, has_alias = item(c, alias) != NULL;
  int v = num(c, key, 0, def), w = num(c, alias, 0, def);
  if (has && has_alias && v != w) return bad_field(c, alias, "as its twin");
  if (!has && !has_alias && required) return num(c, key, 1, def);
  return has ? v : w;
}

/* BLOOM (BigScience): ALiBi (a bias the fused attention adds: no position
 * table, no rotary), a LayerNorm after the embeddings, pre-LN layers with
 * biases everywhere, a GELU MLP of 4 x hidden, tied head.  Nothing bounds
 * the sequence; its training length, 2048, unless seq_length says.
 * BloomConfig reads n_layer and n_head (or num_hidden_layers and
 * num_attention_heads, its attribute_map) and hidden_size (or n_embed). */
static void rd_bloom(cfg_t *c, st__arch_t *a) {
  static const char *const drops[] = {"hidden_dropout", "attention_dropout",
                                      NULL};
  a->hidden = num_either(c, "hidden_size", "n_embed", 1, 0);
  a->layers = num_either(c, "n_layer", "num_hidden_layers", 1, 0);
  a->heads = num_either(c, "n_head", "num_attention_heads", 1, 0);
  a->ffn = four_times(a->hidden);
  a->vocab = num(c, "vocab_size", 1, 0);
  a->seq = num(c, "seq_length", 0, 2048);
  a->tie = flag(c, "tie_word_embeddings", 1);
  a->act = ST__ACT_GELU;
  a->norm_bias = a->qkv_bias = a->out_bias = a->mlp_bias = 1;
  a->embed_norm = 1;
  /* the residual taken after the norm instead of before: the same ops */
  flag(c, "apply_residual_connection_post_layernorm", 0);
  static const char *const numerics[] = {"attention_softmax_in_fp32",
                                         "masked_softmax_fusion",
                                         "slow_but_exact",
                                         "bias_dropout_fusion",
                                         "skip_bias_add",
                                         "skip_bias_add_qkv",
                                         NULL};
  for (int i = 0; numerics[i]; i++)
    flag(c, numerics[i], 0);
  num(c, "offset_alibi", 0, 0);
  num(c, "unk_token_id", 0, 0);
  if (num(c, "n_inner", 0, 0) > 0)
    bad_field(c, "n_inner", "null (BLOOM's MLP is 4 x hidden)");
  dropouts(c, a, drops);
}

/* OPT (Meta): GPT-2's layer with a ReLU MLP of ffn_dim, learned positions
 * in a table of max_position_embeddings + 2 rows (OPTLearnedPositional-
 * Embedding's offset), biases (enable_bias), tied head.  OPT-350m's
 * post-LN layers and projected embeddings (do_layer_norm_before false,
 * word_embed_proj_dim below hidden_size) are not built. */
static void rd_opt(cfg_t *c, st__arch_t *a) {
  static const char *const drops[] = {"dropout", "attention_dropout",
                                      "activation_dropout", NULL};
  a->hidden = num(c, "hidden_size", 1, 0);
  a->layers = num(c, "num_hidden_layers", 1, 0);
  a->heads = num(c, "num_attention_heads", 1, 0);
  a->ffn = num(c, "ffn_dim", 1, 0);
  a->vocab = num(c, "vocab_size", 1, 0);
  int positions = num(c, "max_position_embeddings", 1, 0);
  a->max_pos = positions + 2;
  a->seq = seq_default(c, "max_position_embeddings", positions);
  a->tie = flag(c, "tie_word_embeddings", 1);
  a->act = activation(c, "activation_function",
                      str(c, "activation_function", "relu"));
  a->qkv_bias = a->out_bias = a->mlp_bias = flag(c, "enable_bias", 1);
  a->norm_bias = 1;
  if (!flag(c, "layer_norm_elementwise_affine", 1))
    bad_field(c, "layer_norm_elementwise_affine", "true");
  if (!flag(c, "do_layer_norm_before", 1))
    bad_field(c, "do_layer_norm_before",
              "true (OPT-350m's post-LN layers are not built)");
  if (num(c, "word_embed_proj_dim", 0, a->hidden) != a->hidden)
    bad_field(c, "word_embed_proj_dim",
              "hidden_size (OPT-350m's projected embeddings are not built)");
  if (flag(c, "_remove_final_layer_norm", 0))
    bad_field(c, "_remove_final_layer_norm", "false");
  if (real(c, "layerdrop", 0) > 0)
    bad_field(c, "layerdrop", "0 (layers skipped at random are not costed)");
  if (!flag(c, "output_projection", 1))
    bad_field(c, "output_projection", "true (the LM head)");
  real(c, "init_std", 0);
  dropouts(c, a, drops);
}

/* Falcon (TII): attention and MLP side by side, from two LayerNorms with
 * new_decoder_architecture (num_ln_in_parallel_attn, 2 by default) or
 * one, grouped keys and values (num_kv_heads) or one shared head
 * (multi_query), rotary positions or ALiBi (alibi), a GELU MLP of
 * ffn_hidden_size (4 x hidden), biases only if bias, tied head; with
 * parallel_attn false, two norms one after the other (FalconDecoderLayer). */
static void rd_falcon(cfg_t *c, st__arch_t *a) {
  static const char *const drops[] = {"hidden_dropout", "attention_dropout",
                                      NULL};
  a->hidden = num(c, "hidden_size", 1, 0);
  a->layers = num(c, "num_hidden_layers", 1, 0);
  a->heads = num(c, "num_attention_heads", 1, 0);
  int newer = flag(c, "new_decoder_architecture", 0);
  int mq = flag(c, "multi_query", 1);
  int kv = num(c, "num_kv_heads", 0, a->heads);
  a->kv_heads = newer || !mq ? kv : 1;
  a->ffn = num(c, "ffn_hidden_size", 0, four_times(a->hidden));
  a->vocab = num(c, "vocab_size", 1, 0);
  a->seq = seq_default(c, "max_position_embeddings",
                       num(c, "max_position_embeddings", 0, 2048));
  a->tie = flag(c, "tie_word_embeddings", 1);
  a->act = activation(c, "activation", str(c, "activation", "gelu"));
  a->qkv_bias = a->out_bias = a->mlp_bias = flag(c, "bias", 0);
  a->norm_bias = 1;
  a->rope = !flag(c, "alibi", 0);
  a->rope_theta = rope_base(c);
  int lns = num(c, "num_ln_in_parallel_attn", 0, newer ? 2 : 1);
  if (lns < 1 || lns > 2) bad_field(c, "num_ln_in_parallel_attn", "1 or 2");
  a->parallel = flag(c, "parallel_attn", 1) ? lns : 0;
  if (flag(c, "apply_residual_connection_post_layernorm", 0))
    bad_field(c, "apply_residual_connection_post_layernorm", "false");
  dropouts(c, a, drops);
}

static void rd_bert(cfg_t *c, st__arch_t *a) {
  static const char *const drops[] = {"hidden_dropout_prob",
                                      "attention_probs_dropout_prob", NULL};
  a->hidden = num(c, "hidden_size", 1, 0);
  a->layers = num(c, "num_hidden_layers", 1, 0);
  a->heads = num(c, "num_attention_heads", 1, 0);
  a->ffn = num(c, "intermediate_size", 1, 0);
  a->vocab = num(c, "vocab_size", 1, 0);
  a->max_pos = num(c, "max_position_embeddings", 1, 0);
  a->seq = a->max_pos;
  a->type_vocab = num(c, "type_vocab_size", 0, 2);
  a->tie = flag(c, "tie_word_embeddings", 1);
  a->act = activation(c, "hidden_act", str(c, "hidden_act", "gelu"));
  const char *pe = str(c, "position_embedding_type", "absolute");
  if (strcmp(pe, "absolute"))
    bad_field(c, "position_embedding_type", "\"absolute\"");
  if (flag(c, "add_cross_attention", 0) || flag(c, "is_decoder", 0))
    bad_field(c, "add_cross_attention", "false (BERT as an encoder)");
  a->norm_bias = a->qkv_bias = a->out_bias = a->mlp_bias = 1;
  a->post_norm = a->embed_norm = a->mlm_head = a->head_bias = 1;
  a->causal = 0;
  dropouts(c, a, drops);
}

/* T5: encoder-decoder, relative position bias, RMS norms without bias,
 * ReLU (v1.0) or gated GELU (v1.1, flan) MLPs, no linear biases. */
static void rd_t5(cfg_t *c, st__arch_t *a) {
  static const char *const drops[] = {"dropout_rate", NULL};
  a->hidden = num(c, "d_model", 1, 0);
  a->head_dim = num(c, "d_kv", 1, 0);
  a->heads = num(c, "num_heads", 1, 0);
  a->ffn = num(c, "d_ff", 1, 0);
  a->layers = num(c, "num_layers", 1, 0);
  a->dec_layers = num(c, "num_decoder_layers", 0, a->layers);
  a->vocab = num(c, "vocab_size", 1, 0);
  a->rel_buckets = num(c, "relative_attention_num_buckets", 0, 32);
  num(c, "relative_attention_max_distance", 0, 0);
  a->seq = num(c, "n_positions", 0, 512);
  a->tie = flag(c, "tie_word_embeddings", 1);
  if (!flag(c, "is_encoder_decoder", 1))
    bad_field(c, "is_encoder_decoder", "true (T5 is an encoder-decoder)");
  const char *ff = str(c, "feed_forward_proj", "relu");
  if (!strncmp(ff, "gated-", 6)) {
    a->gated = 1;
    ff += 6;
  }
  a->act = activation(c, "feed_forward_proj", ff);
  str(c, "dense_act_fn", NULL); /* derived from feed_forward_proj */
  if (flag(c, "is_gated_act", a->gated) != a->gated)
    bad_field(c, "is_gated_act", "what feed_forward_proj says");
  a->rms = 1;
  dropouts(c, a, drops);
}

/* ---- mixtures of experts: the LLaMA generator's MoE layers ---- */

/* Mixtral, Qwen3-MoE, DeepSeek-V2/V3 and gpt-oss are read into the same
 * generator options as their presets (gen.c), which the one builder turns
 * into router, token dispatch, grouped expert GEMMs, combine and latent
 * attention (arch.c), so a config and its preset give the same graph.
 * What the router does beyond top-k of its scores (groups, scaling, the
 * auxiliary loss, jitter, the load-balancing bias that is not trained by
 * gradient) changes no parameter, FLOP or byte counted. */
/* How the router is trained, which Megatron-LM is told (strata_gen_opts_t):
 * the load-balancing loss's coefficient (router_aux_loss_coef, or
 * DeepSeek's aux_loss_alpha), per sequence (seq_aux), the auxiliary-loss-
 * free balancing bias (topk_method noaux_tc) and the input's jitter
 * (router_jitter_noise).  norm_topk_prob is each reader's: the softmax
 * routers that leave the top-k weights as they are (Qwen2-MoE). */
static void router_training(cfg_t *c, strata_gen_opts_t *o) {
  const char *coef = item(c, "router_aux_loss_coef") ? "router_aux_loss_coef"
                                                     : "aux_loss_alpha";
  o->router_aux_loss = real(c, coef, 0);
  if (!(o->router_aux_loss >= 0 && o->router_aux_loss <= 1e3))
    bad_field(c, coef, "a coefficient from 0 to 1000");
  o->router_seq_aux = flag(c, "seq_aux", 0);
  o->router_expert_bias = !strcmp(str(c, "topk_method", ""), "noaux_tc");
  o->router_jitter = real(c, "router_jitter_noise", 0);
  if (!(o->router_jitter >= 0 && o->router_jitter < 1))
    bad_field(c, "router_jitter_noise", "a jitter from 0 to below 1");
}

static void moe_common(cfg_t *c, strata_gen_opts_t *o) {
  static const char *const routing[] = {"router_aux_loss_coef",
                                        "output_router_logits",
                                        "router_jitter_noise",
                                        "norm_topk_prob",
                                        "aux_loss_alpha",
                                        "seq_aux",
                                        "n_group",
                                        "topk_group",
                                        "topk_method",
                                        "routed_scaling_factor",
                                        "scoring_func",
                                        "ep_size"};
  st__arch_t a;
  st__arch_init(&a);
  dtype(c, &a);
  strata_gen_opts_init(o, STRATA_FAMILY_LLAMA);
  o->dtype = a.dtype;
  o->hidden = num(c, "hidden_size", 1, 0);
  o->layers = num(c, "num_hidden_layers", 1, 0);
  o->heads = num(c, "num_attention_heads", 1, 0);
  o->kv_heads = num(c, "num_key_value_heads", 0, o->heads);
  o->head_dim = num(c, "head_dim", 0, 0);
  o->vocab = num(c, "vocab_size", 1, 0);
  o->seq = seq_default(c, "max_position_embeddings",
                       num(c, "max_position_embeddings", 0, 0));
  o->norm_eps = norm_epsilon(c, "rms_norm_eps");
  o->init_std = init_std(c);
  o->tie_embeddings = flag(c, "tie_word_embeddings", 0);
  o->rope_theta = rope_base(c);
  o->dropout = real(c, "attention_dropout", 0) > 0;
  o->topk = num(c, "num_experts_per_tok", 1, 0);
  if (activation(c, "hidden_act", str(c, "hidden_act", "silu")) != ST__ACT_SILU)
    bad_field(c, "hidden_act", "silu (the experts are SwiGLU MLPs)");
  for (size_t i = 0; i < sizeof routing / sizeof routing[0]; i++)
    use(c, routing[i]);
  use(c, "quantization_config"); /* the checkpoint's inference format */
  /* ... except what Megatron-LM is told: group-limited routing (of more
   * than one group) and the routed experts' scaling (other than 1) */
  int groups = num(c, "n_group", 0, 0);
  if (groups > 1) {
    o->router_groups = groups;
    o->router_group_topk = num(c, "topk_group", 0, groups);
  }
  double scale = real(c, "routed_scaling_factor", 1);
  if (scale != 1 && scale > 0) o->router_topk_scale = scale;
  router_training(c, o);
}

static void rd_mixtral(cfg_t *c, strata_gen_opts_t *o) {
  moe_common(c, o);
  o->experts = num(c, "num_local_experts", 1, 0);
  o->ffn = o->moe_ffn = num(c, "intermediate_size", 1, 0);
  o->window = num(c, "sliding_window", 0, 0); /* every layer */
}

/* The experts of Qwen2-MoE and Qwen3-MoE: in every layer, no window. */
static void qwen_experts(cfg_t *c, strata_gen_opts_t *o) {
  moe_common(c, o);
  o->experts = num(c, "num_experts", 1, 0);
  o->moe_ffn = num(c, "moe_intermediate_size", 1, 0);
  o->ffn = num(c, "intermediate_size", 0, o->moe_ffn);
  if (num(c, "decoder_sparse_step", 0, 1) != 1)
    bad_field(c, "decoder_sparse_step", "1 (experts in every layer)");
  const cJSON *only = item(c, "mlp_only_layers");
  if (only && (!cJSON_IsArray(only) || cJSON_GetArraySize(only) > 0))
    bad_field(c, "mlp_only_layers", "empty (experts in every layer)");
  if (flag(c, "use_sliding_window", 0))
    bad_field(c, "use_sliding_window",
              "false (a window from max_window_layers on is not built with "
              "experts)");
  use(c, "sliding_window");
  use(c, "max_window_layers");
}

static void rd_qwen3_moe(cfg_t *c, strata_gen_opts_t *o) {
  qwen_experts(c, o);
  /* Qwen3MoeConfig's default is false: the softmax's weights as they are */
  o->router_pre_softmax = !flag(c, "norm_topk_prob", 0);
  o->qk_norm = 1;
  o->qkv_bias = o->out_bias = flag(c, "attention_bias", 0);
}

/* Qwen2-MoE (Qwen1.5-MoE, Qwen2-57B-A14B): Qwen2's attention (q, k, v
 * biases) with experts in every layer and a shared expert scaled by a
 * sigmoid gate (shared_expert_gate, a linear to one value per token). */
static void rd_qwen2_moe(cfg_t *c, strata_gen_opts_t *o) {
  qwen_experts(c, o);
  o->router_pre_softmax = !flag(c, "norm_topk_prob", 0);
  o->qkv_bias = 1;
  o->shared_ffn = num(c, "shared_expert_intermediate_size", 0, 0);
  o->shared_gate = o->shared_ffn > 0;
}

/* DeepSeek-V2 and V3: latent attention, first_k_dense_replace dense
 * layers, then n_shared_experts always-used experts and n_routed_experts
 * routed ones, and num_nextn_predict_layers multi-token prediction
 * modules (V3: 1, trained with; DeepSeek's 671B counts the model without
 * it, the 685B checkpoint with it). */
/* DeepSeek's layout of experts, which GLM-4.5 shares: first_k_dense_replace
 * dense layers of intermediate_size, then n_routed_experts routed and
 * n_shared_experts always-used experts of moe_intermediate_size, and
 * num_nextn_predict_layers multi-token prediction modules. */
static void deepseek_experts(cfg_t *c, strata_gen_opts_t *o) {
  moe_common(c, o);
  o->experts = num(c, "n_routed_experts", 1, 0);
  o->moe_ffn = num(c, "moe_intermediate_size", 1, 0);
  o->shared_ffn = num(c, "n_shared_experts", 0, 0) * o->moe_ffn;
  o->ffn = num(c, "intermediate_size", 1, 0);
  o->first_dense = num(c, "first_k_dense_replace", 0, 0);
  o->mtp_layers = num(c, "num_nextn_predict_layers", 0, 0);
}

static void rd_deepseek(cfg_t *c, strata_gen_opts_t *o) {
  deepseek_experts(c, o);
  if (num(c, "moe_layer_freq", 0, 1) != 1)
    bad_field(c, "moe_layer_freq",
              "1 (experts in every layer after the "
              "dense ones)");
  o->q_lora = num(c, "q_lora_rank", 0, 0);
  o->kv_lora = num(c, "kv_lora_rank", 1, 0);
  o->qk_nope = num(c, "qk_nope_head_dim", 1, 0);
  o->qk_rope = num(c, "qk_rope_head_dim", 1, 0);
  o->v_head = num(c, "v_head_dim", 1, 0);
  o->kv_heads = 0;
  if (flag(c, "attention_bias", 0))
    bad_field(c, "attention_bias", "false (latent attention without biases)");
  o->router_sigmoid = !strcmp(str(c, "scoring_func", "softmax"), "sigmoid");
  /* DeepSeek-V2's softmax router leaves the top-k weights as they are
   * (norm_topk_prob false); a sigmoid router's are renormalised */
  if (!o->router_sigmoid) o->router_pre_softmax = !flag(c, "norm_topk_prob", 0);
}

/* gpt-oss: biases everywhere (attention, router, experts), a sliding
 * window on the layers layer_types says, the attention sinks (one scalar
 * per head and layer: recorded, not built) and the clamped GLU
 * (GptOssExperts: swiglu_limit, 7 by default; costed as SwiGLU). */
static void rd_gpt_oss(cfg_t *c, strata_gen_opts_t *o) {
  moe_common(c, o);
  o->experts = num(c, "num_local_experts", 1, 0);
  if (num(c, "experts_per_token", 0, o->topk) != o->topk)
    bad_field(c, "experts_per_token", "num_experts_per_tok");
  o->ffn = o->moe_ffn = num(c, "intermediate_size", 1, 0);
  o->qkv_bias = o->out_bias = flag(c, "attention_bias", 1);
  o->expert_bias = 1;
  int w = num(c, "sliding_window", 0, 0);
  /* without layer_types, GptOssConfig alternates (the even layers) */
  int k = window_pattern(c, o->layers, 2);
  o->window = k ? w : 0;
  o->window_every = k > 1 ? k : 0;
  o->attn_sinks = 1;
  o->glu_limit = real(c, "swiglu_limit", 7.0);
  if (!(o->glu_limit > 0 && o->glu_limit <= 1e6))
    bad_field(c, "swiglu_limit", "a positive number");
  use(c, "initial_context_length"); /* before rope scaling */
}

/* GLM-4.5 and GLM-4.5-Air (Zhipu AI, zai-org; Megatron-LM runs them as
 * GPT with --add-qkv-bias, --rotary-percent and DeepSeek-style experts):
 * first_k_dense_replace dense layers, then n_routed_experts routed and
 * n_shared_experts always-used experts of moe_intermediate_size; grouped-
 * query attention of head_dim with q, k and v biases (attention_bias; the
 * output projection has none), q/k RMSNorms when use_qk_norm, RoPE on
 * partial_rotary_factor of each head, and num_nextn_predict_layers
 * multi-token prediction modules. */
static void rd_glm4_moe(cfg_t *c, strata_gen_opts_t *o) {
  deepseek_experts(c, o);
  o->qkv_bias = flag(c, "attention_bias", 0);
  o->qk_norm = flag(c, "use_qk_norm", 0);
  double prf = rotary_factor(c);
  if (prf < 1) o->rotary_percent = prf;
  o->router_sigmoid = 1; /* Glm4MoeTopkRouter: sigmoid scores, and its
                            e_score_correction_bias balances the load */
  o->router_expert_bias = 1;
}

/* Llama 4's text model (llama4_text; a llama4 config's text_config):
 * experts on every interleave_moe_layer_step-th layer (moe_layers must
 * say the same), each of intermediate_size with a shared expert as wide,
 * top num_experts_per_tok by sigmoid scores; the dense layers' MLPs of
 * intermediate_size_mlp; grouped-query attention of head_dim with q/k L2
 * norms (use_qk_norm; built as RMSNorms: their 2 x head_dim weights per
 * layer are the only difference) and no RoPE every no_rope_layer_interval-
 * th layer (no_rope_layers must say the same; the RoPE is still counted).
 * Chunked attention (attention_chunk_size) is recorded (the exports say
 * it or refuse it) and costed as full causal attention: the same up to
 * one chunk, more above it. */
static int every_kth(cfg_t *c, const char *key, int n, int k, int one) {
  const cJSON *list = item(c, key), *it;
  int l = 0;
  if (!list) return 1;
  if (!cJSON_IsArray(list)) return bad_field(c, key, "a list");
  cJSON_ArrayForEach(it, list) {
    int v = cJSON_IsNumber(it) ? it->valueint : -1;
    int kth = k > 0 && (l + 1) % k == 0; /* k 0: none */
    if (v != (kth == one)) return 0;
    l++;
  }
  return l == n;
}

static void rd_llama4(cfg_t *c, strata_gen_opts_t *o) {
  moe_common(c, o);
  o->experts = num(c, "num_local_experts", 1, 0);
  o->shared_ffn = o->moe_ffn = num(c, "intermediate_size", 1, 0);
  o->ffn = num(c, "intermediate_size_mlp", 0, o->moe_ffn);
  o->router_sigmoid = 1;
  int step = num(c, "interleave_moe_layer_step", 0, 1);
  o->moe_every = step > 1 ? step : 0;
  /* moe_layers: the layer numbers; as flags they are every step-th */
  const cJSON *ml = item(c, "moe_layers"), *it;
  int l = 0, ok = 1;
  if (ml && !cJSON_IsArray(ml)) bad_field(c, "moe_layers", "a list");
  cJSON_ArrayForEach(it, ml) {
    ok &= cJSON_IsNumber(it) &&
          it->valueint == (l + 1) * (step > 1 ? step : 1) - 1;
    l++;
  }
  if (ml && (!ok || l != o->layers / (step > 1 ? step : 1)))
    bad_field(c, "moe_layers", "every interleave_moe_layer_step-th layer");
  int k = num(c, "no_rope_layer_interval", 0, 4);
  const cJSON *nr = item(c, "no_rope_layers");
  if (nr && cJSON_IsArray(nr) && cJSON_GetArraySize(nr) == 0) nr = NULL;
  if (nr && !every_kth(c, "no_rope_layers", o->layers, k, 0))
    bad_field(c, "no_rope_layers",
              "0 on every no_rope_layer_interval-th layer, 1 elsewhere");
  o->nope_every = k > 0 ? k : 0;
  o->qk_norm = flag(c, "use_qk_norm", 0) ? 2 : 0;
  if (flag(c, "attention_bias", 0)) bad_field(c, "attention_bias", "false");
  o->attn_chunk = num(c, "attention_chunk_size", 0, 0);
  static const char *const scaling[] = {"attn_scale", "attn_temperature_tuning",
                                        "floor_scale", "for_llm_compressor",
                                        "cache_implementation"};
  for (size_t i = 0; i < sizeof scaling / sizeof scaling[0]; i++)
    use(c, scaling[i]);
}

typedef void (*moe_reader_fn)(cfg_t *, strata_gen_opts_t *);
static const struct {
  const char *type;
  moe_reader_fn fn;
} moe_readers[] = {
    {"mixtral", rd_mixtral},      {"qwen3_moe", rd_qwen3_moe},
    {"qwen2_moe", rd_qwen2_moe},  {"deepseek_v2", rd_deepseek},
    {"deepseek_v3", rd_deepseek}, {"gpt_oss", rd_gpt_oss},
    {"glm4_moe", rd_glm4_moe},    {"llama4_text", rd_llama4},
};
#define N_MOE_READERS (int)(sizeof moe_readers / sizeof moe_readers[0])

typedef void (*reader_fn)(cfg_t *, st__arch_t *);
static const struct {
  const char *type;
  reader_fn fn;
} readers[] = {
    {"llama", rd_llama}, {"mistral", rd_mistral}, {"qwen2", rd_qwen2},
    {"qwen3", rd_qwen3}, {"gemma", rd_gemma},     {"gemma2", rd_gemma2},
    {"phi3", rd_phi3},   {"gpt2", rd_gpt2},       {"gpt_neox", rd_gpt_neox},
    {"bert", rd_bert},   {"t5", rd_t5},           {"gemma3_text", rd_gemma3},
    {"olmo2", rd_olmo2}, {"cohere", rd_cohere},   {"cohere2", rd_cohere2},
    {"bloom", rd_bloom}, {"opt", rd_opt},         {"falcon", rd_falcon},
};
#define N_READERS (int)(sizeof readers / sizeof readers[0])

/* Keys that change nothing Strata counts: ids, initialisation, numerics
 * (epsilons, rope bases and scaling, attention scales), labels, generation
 * and library settings. */
static const char *const harmless[] = {
    "_name_or_path",
    "architectures",
    "model_type",
    "transformers_version",
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    "sep_token_id",
    "decoder_start_token_id",
    "use_cache",
    "initializer_range",
    "initializer_factor",
    "rms_norm_eps",
    "layer_norm_eps",
    "layer_norm_epsilon",
    "rope_theta",
    "rotary_emb_base",
    "pretraining_tp",
    "output_attentions",
    "output_hidden_states",
    "return_dict",
    "id2label",
    "label2id",
    "task_specific_params",
    "tokenizer_class",
    "prefix",
    "problem_type",
    "attn_implementation",
    "_attn_implementation",
    "gradient_checkpointing",
    "classifier_dropout",
    "summary_activation",
    "summary_first_dropout",
    "summary_proj_to_labels",
    "summary_type",
    "summary_use_proj",
    "scale_attn_weights",
    "scale_attn_by_inverse_layer_idx",
    "reorder_and_upcast_attn",
    "use_bfloat16",
    "torchscript",
    "tie_encoder_decoder",
    "chunk_size_feed_forward",
    "max_length",
    "min_length",
    "num_beams",
    "do_sample",
    "early_stopping",
    "length_penalty",
    "no_repeat_ngram_size",
    "num_return_sequences",
    "temperature",
    "top_k",
    "top_p",
    "output_past",
    "keys_to_ignore_at_inference",
    "cache_implementation",
    "use_return_dict",
    "finetuning_task",
    "n_special",
    "predict_special_tokens",
    "rope_type",
    "bad_words_ids",
    "forced_eos_token_id",
    "forced_bos_token_id",
    "repetition_penalty",
    "diversity_penalty",
    "num_beam_groups",
    "auto_map",
};

static int is_harmless(const char *key) {
  for (size_t i = 0; i < sizeof harmless / sizeof harmless[0]; i++)
    if (!strcmp(key, harmless[i])) return 1;
  return 0;
}

/* Every key is used or harmless; pruned heads must be none. */
static int check_leftovers(cfg_t *c) {
  const cJSON *it;
  cJSON_ArrayForEach(it, c->root) {
    int used = is_harmless(it->string);
    for (int i = 0; i < c->n_used && !used; i++)
      used = !strcmp(c->used[i], it->string);
    if (!strcmp(it->string, "pruned_heads") && cJSON_GetArraySize(it) == 0)
      used = 1;
    if (used) continue;
    char key[96];
    return strata_error(STRATA_EBADINPUT,
                        "%s: '%s' (model_type %s) is not understood by this "
                        "importer and may change the model's structure; "
                        "docs/import.md lists the fields each model_type "
                        "takes",
                        c->where, st__plain(it->string, key, sizeof key),
                        c->type);
  }
  return 0;
}

static int unknown_type(const char *where, const char *type) {
  char list[512], plain[96];
  size_t n = 0;
  list[0] = '\0';
  for (int i = 0; i < N_READERS && n < sizeof list; i++)
    n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "",
                          readers[i].type);
  for (int i = 0; i < N_MOE_READERS && n < sizeof list; i++)
    n += (size_t)snprintf(
        list + n, sizeof list - n, "%s%s",
        i ? ", " : "; mixtures of experts: ", moe_readers[i].type);
  if (n < sizeof list)
    snprintf(list + n, sizeof list - n,
             "; multimodal, their text model: gemma3, llama4");
  return strata_error(STRATA_EUNSUPPORTED,
                      "%s: model_type '%s' is not one this importer reads "
                      "(dense types: %s)",
                      where, st__plain(type, plain, sizeof plain), list);
}

static int read_arch(cfg_t *c, st__arch_t *a) {
  for (int i = 0; i < N_READERS; i++) {
    if (strcmp(c->type, readers[i].type)) continue;
    snprintf(a->family, sizeof a->family, "%s", c->type);
    dtype(c, a);
    readers[i].fn(c, a);
    rope_scaling(c, a->rope);
    /* Gemma 3's local layers rotate by their own base, unscaled */
    if (!strcmp(c->type, "gemma3_text") && c->rs.type && a->window)
      c->rs.full_only = 1;
    if (c->rc) return c->rc;
    return check_leftovers(c);
  }
  return unknown_type(c->where, c->type);
}

/* Overrides may change the run's shape (seq, micro-batch, dtype,
 * attention kernel, dropout) and the number of layers; the architecture is
 * the config's, dense or mixture of experts. */
static int refuse_fixed(const strata_gen_opts_t *v, const char *where) {
  if (v && (v->hidden > 0 || v->heads > 0 || v->kv_heads > 0 || v->ffn > 0 ||
            v->vocab > 0 || v->tie_embeddings >= 0))
    return strata_error(STRATA_EINVAL,
                        "%s: a Hugging Face config fixes hidden, heads, "
                        "kv_heads, ffn, vocab and the tied head; only "
                        "layers, seq, micro-batch, dtype, flash attention "
                        "and dropout may be changed",
                        where);
  return 0;
}

static int apply_overrides(const strata_gen_opts_t *v, st__arch_t *a,
                           const char *where) {
  int rc = refuse_fixed(v, where);
  if (!v || rc) return rc;
  if (v->mtp_layers > 0)
    return strata_error(STRATA_EINVAL,
                        "%s: multi-token prediction modules are built for "
                        "the mixture-of-experts model types only (DeepSeek's "
                        "num_nextn_predict_layers)",
                        where);
  if (v->layers > 0) {
    a->layers = v->layers;
    if (a->dec_layers) a->dec_layers = v->layers;
  }
  if (v->seq > 0) a->seq = v->seq;
  if (v->micro_batch > 0) a->micro_batch = v->micro_batch;
  if (v->dtype != STRATA_DTYPE_COUNT) a->dtype = v->dtype;
  if (v->flash_attention >= 0) a->flash_attention = v->flash_attention;
  if (v->dropout >= 0) a->dropout = v->dropout;
  return 0;
}

/* The model's name: _name_or_path when the config has one, else the
 * file's name without ".json" (the folder's for a config.json); a name
 * as st__name_check takes it.  *out is strata_free'd by the caller. */
static int model_name(const cJSON *root, const char *where, char **out) {
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(root, "_name_or_path");
  const char *from = where, *what = "the model's name (the file's name)";
  size_t len;
  if (cJSON_IsString(n) && n->valuestring[0]) {
    from = n->valuestring;
    len = strlen(from);
    what = "'_name_or_path'";
  } else {
    const char *base = strrchr(where, '/');
    from = base = base ? base + 1 : where;
    len = strlen(base);
    if (!strcmp(base, "config.json") && base > where) {
      const char *end = base - 1, *dir = end;
      while (dir > where && dir[-1] != '/')
        dir--;
      if (end > dir) {
        from = dir;
        len = (size_t)(end - dir);
        what = "the model's name (the folder's name)";
      }
    }
    if (from == base && len > 5 && !strcmp(base + len - 5, ".json")) len -= 5;
  }
  if (!(*out = strata_malloc(len + 1)))
    return strata_error(STRATA_ENOMEM, "out of memory");
  memcpy(*out, from, len);
  (*out)[len] = '\0';
  int rc = st__name_check(*out, what, where);
  if (rc) {
    strata_free(*out);
    *out = NULL;
  }
  return rc;
}

/* What the graph keeps of the config beyond its ops (the rope scaling,
 * the trained context), and a warning when the sequence asked for is
 * longer than that context. */
static void finish(const cfg_t *c, const strata_gen_opts_t *v,
                   strata_graph_t *g) {
  g->hp.rope_scaling = c->rs;
  g->hp.max_positions = c->positions;
  if (v && v->seq > 0 && c->positions > 0 && v->seq > c->positions)
    strata_log(STRATA_LOG_WARN,
               "%s: the sequence length %d exceeds the model's %s %d "
               "(model_type %s): positions past %d were not trained",
               c->where, v->seq, c->positions_key, c->positions, c->type,
               c->positions);
}

/* A mixture of experts: read, the same overrides as apply_overrides, then
 * the generator. */
static int moe_from_json(cfg_t *c, moe_reader_fn fn, const cJSON *root,
                         const char *where, const strata_gen_opts_t *v,
                         strata_graph_t **out) {
  strata_gen_opts_t o;
  int rc;
  fn(c, &o);
  rope_scaling(c, 1);
  if (c->rc) return c->rc;
  if ((rc = check_leftovers(c))) return rc;
  if ((rc = refuse_fixed(v, where))) return rc;
  if (v && v->layers > 0) o.layers = v->layers;
  st__keep_a_moe_layer(&o);
  if (v && v->seq > 0) o.seq = v->seq;
  if (v && v->micro_batch > 0) o.micro_batch = v->micro_batch;
  if (v && v->dtype != STRATA_DTYPE_COUNT) o.dtype = v->dtype;
  if (v && v->flash_attention >= 0) o.flash_attention = v->flash_attention;
  if (v && v->dropout >= 0) o.dropout = v->dropout;
  if (v && v->mtp_layers >= 0) o.mtp_layers = v->mtp_layers;
  char *name;
  if ((rc = model_name(root, where, &name))) return rc;
  if ((rc = strata_generate(&o, name, out)) && rc != STRATA_ENOMEM)
    strata_error_prefix("%s (model_type %s)", where, c->type);
  if (!rc) finish(c, v, *out);
  strata_free(name);
  return rc;
}

/* What transformers' config classes default to, for the model types
 * whose published configs rely on them (a config it writes leaves out
 * what equals the default): Gemma3TextConfig's. */
static const struct {
  const char *type, *json;
} class_defaults[] = {
    {"gemma3_text",
     "{\"vocab_size\": 262208, \"hidden_size\": 2304, "
     "\"intermediate_size\": 9216, \"num_hidden_layers\": 26, "
     "\"num_attention_heads\": 8, \"num_key_value_heads\": 4, "
     "\"head_dim\": 256, \"hidden_activation\": \"gelu_pytorch_tanh\", "
     "\"max_position_embeddings\": 131072, \"tie_word_embeddings\": true, "
     "\"rope_theta\": 1000000.0, \"sliding_window\": 4096, "
     "\"sliding_window_pattern\": 6, \"query_pre_attn_scalar\": 256}"},
};

/* c's class defaults (NULL when it has none), owned by the caller; a
 * multimodal config's torch_dtype joins its text_config's. */
static cJSON *class_defaults_of(cfg_t *c, const char *outer_dtype) {
  cJSON *d = NULL;
  for (size_t i = 0; i < sizeof class_defaults / sizeof class_defaults[0]; i++)
    if (!strcmp(c->type, class_defaults[i].type))
      d = cJSON_Parse(class_defaults[i].json);
  if (outer_dtype && !d) d = cJSON_CreateObject();
  if (outer_dtype && d) cJSON_AddStringToObject(d, "torch_dtype", outer_dtype);
  c->defaults = d;
  return d;
}

/* A dense model: read, overrides, the architecture's builder. */
static int dense_from_json(cfg_t *c, const cJSON *root, const char *where,
                           const strata_gen_opts_t *overrides,
                           strata_graph_t **out) {
  st__arch_t a;
  int rc;
  st__arch_init(&a);
  if ((rc = read_arch(c, &a)) || (rc = apply_overrides(overrides, &a, where)))
    return rc;
  char *name;
  if ((rc = model_name(root, where, &name))) return rc;
  st__arch_hp(&a);
  if (!(rc = st__arch_check(&a))) rc = st__arch_build(&a, name, out);
  if (rc && rc != STRATA_ENOMEM)
    strata_error_prefix("%s (model_type %s)", where, c->type);
  if (!rc) finish(c, overrides, *out);
  strata_free(name);
  return rc;
}

/* A multimodal config (llama4, gemma3) whose text_config of model_type
 * `inner` is the model planned: its vision encoder and image tokens (the
 * keys `vision`) are not built, the language model being what pretraining
 * at scale trains (the encoders are 0.2 to 1.5 % of these models). */
static int text_config_of(cfg_t *c, const char *inner,
                          const char *const *vision, cfg_t *t, char *where,
                          size_t size) {
  const cJSON *text = item(c, "text_config");
  if (!text || !cJSON_IsObject(text))
    return strata_error(STRATA_EBADINPUT,
                        "%s: a %s config needs its text_config object",
                        c->where, c->type);
  for (; *vision; vision++)
    use(c, *vision);
  int rc = c->rc ? c->rc : check_leftovers(c);
  if (rc) return rc;
  memset(t, 0, sizeof *t);
  snprintf(where, size, "%s: text_config", c->where);
  t->root = text;
  t->where = where;
  t->type = inner;
  const char *type = NULL;
  char plain[96];
  if (!st__json_str(text, "model_type", where, 0, &type) && type &&
      strcmp(type, inner))
    return strata_error(STRATA_EBADINPUT, "%s: model_type '%s', not %s", where,
                        st__plain(type, plain, sizeof plain), inner);
  use(t, "model_type");
  return 0;
}

/* Llama4ForConditionalGeneration: the text model is a mixture of experts
 * whose head is its own. */
static int llama4_outer(cfg_t *c, const cJSON *root,
                        const strata_gen_opts_t *overrides,
                        strata_graph_t **out) {
  static const char *const vision[] = {"vision_config",
                                       "boi_token_index",
                                       "eoi_token_index",
                                       "image_token_index",
                                       "torch_dtype",
                                       "dtype",
                                       NULL}; /* text's */
  char where[512];
  cfg_t t;
  if (flag(c, "tie_word_embeddings", 0))
    bad_field(c, "tie_word_embeddings", "false (Llama 4's head is its own)");
  int rc = text_config_of(c, "llama4_text", vision, &t, where, sizeof where);
  return rc ? rc : moe_from_json(&t, rd_llama4, root, c->where, overrides, out);
}

/* Gemma3ForConditionalGeneration: the SigLIP encoder (417M parameters in
 * every size, Gemma 3 report, Table 1) is not built; the text model takes
 * the config's torch_dtype. */
static int gemma3_outer(cfg_t *c, const cJSON *root,
                        const strata_gen_opts_t *overrides,
                        strata_graph_t **out) {
  static const char *const vision[] = {
      "vision_config",   "mm_tokens_per_image", "boi_token_index",
      "eoi_token_index", "image_token_index",   "torch_dtype",
      "dtype",           "initializer_range",   NULL};
  char where[512];
  cfg_t t;
  const char *outer_dtype = dtype_name(c);
  int rc = text_config_of(c, "gemma3_text", vision, &t, where, sizeof where);
  if (rc) return rc;
  cJSON *d = class_defaults_of(&t, outer_dtype);
  rc = dense_from_json(&t, root, c->where, overrides, out);
  cJSON_Delete(d);
  return rc;
}

int st__hf_from_json(const struct cJSON *root, const char *where,
                     const strata_gen_opts_t *overrides, strata_graph_t **out) {
  cfg_t c;
  int rc;
  *out = NULL;
  memset(&c, 0, sizeof c);
  c.root = root;
  c.where = where;
  if ((rc = st__json_str(root, "model_type", where, 1, &c.type))) return rc;
  use(&c, "model_type");
  if (!strcmp(c.type, "llama4")) return llama4_outer(&c, root, overrides, out);
  if (!strcmp(c.type, "gemma3")) return gemma3_outer(&c, root, overrides, out);
  for (int i = 0; i < N_MOE_READERS; i++)
    if (!strcmp(c.type, moe_readers[i].type))
      return moe_from_json(&c, moe_readers[i].fn, root, where, overrides, out);
  cJSON *d = class_defaults_of(&c, NULL);
  rc = dense_from_json(&c, root, where, overrides, out);
  cJSON_Delete(d);
  return rc;
}

int strata_hf_parse(const char *text, size_t len, const char *where,
                    const strata_gen_opts_t *overrides, strata_graph_t **out) {
  cJSON *root = NULL;
  int rc;
  *out = NULL;
  if (!where) where = "config.json";
  if ((rc = st__json_parse(text, len, where, &root))) return rc;
  if (!cJSON_IsObject(root))
    rc = strata_error(STRATA_EBADINPUT, "%s: a config is a JSON object", where);
  else
    rc = st__hf_from_json(root, where, overrides, out);
  cJSON_Delete(root);
  return rc;
}

int strata_hf_load(const char *path, const strata_gen_opts_t *overrides,
                   strata_graph_t **out) {
  char *text = NULL;
  size_t len = 0;
  *out = NULL;
  int rc = strata_file_read(path, 0, &text, &len);
  if (rc) return rc;
  rc = strata_hf_parse(text, len, path, overrides, out);
  strata_free(text);
  return rc;
}
