/*
 * presets.c - named models, family defaults, and strata_model_load, the
 * one entry point the CLI and the planner use to turn "gpt3-175b",
 * "llama" or "model.json" into a validated graph.
 *
 * The GPT presets are the ten models of Narayanan et al. 2021 ("Efficient
 * Large-Scale Language Model Training on GPU Clusters Using Megatron-LM"),
 * Table 1, with V = 51200 and s = 2048, plus GPT-3 175B (Brown et al.
 * 2020).  LLaMA presets use the published configurations (Llama 2 70B:
 * ffn 28672, 8 KV heads; Llama 3.1 405B: ffn 53248, 8 KV heads).
 *
 * The mixtures of experts follow their published configurations (each
 * model's config.json on Hugging Face and its paper or model card;
 * docs/trace-format.md lists them with the parameter counts they give),
 * trained at a sequence of 4096.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/json.h"
#include "traces/traces_int.h"

typedef struct {
  const char *name;
  strata_family_t family;
  int layers, hidden, heads, kv_heads, ffn, vocab, seq;
} preset_t;

#define GPT(n, h, l, a)                                                        \
  { n, STRATA_FAMILY_GPT, l, h, a, 0, 0, 51200, 2048 }
static const preset_t presets[] = {
    {"bert-large", STRATA_FAMILY_BERT, 24, 1024, 16, 0, 0, 30522, 512},
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
    {"gpt3-175b", STRATA_FAMILY_GPT, 96, 12288, 96, 0, 0, 50257, 2048},
    {"llama2-70b", STRATA_FAMILY_LLAMA, 80, 8192, 64, 8, 28672, 32000, 4096},
    {"llama3-405b", STRATA_FAMILY_LLAMA, 126, 16384, 128, 8, 53248, 128256,
     8192},
};
#undef GPT
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
} moe_preset_t;

static const moe_preset_t moe_presets[] = {
    /* Mixtral 8x7B (Jiang et al. 2024, "Mixtral of Experts") */
    {"mixtral-8x7b", 32, 4096, 32, 8, 14336, 32000, 0, 0, 0, 0, 0, 0, 1e6, 8, 2,
     14336,          0,  0,    0,  0, 0,     0,     0, 0, 0, 0},
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
     0},
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
     1},
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
     0},
    /* gpt-oss-120b (OpenAI 2025, model card): biases, 128-token windows on
     * every other layer, 128 experts top-4 */
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
     0},
};
#define N_MOE (int)(sizeof moe_presets / sizeof moe_presets[0])
#define N_ALL (N_PRESETS + N_MOE)

static const char *const family_names[] = {"gpt", "bert", "llama"};

const char *strata_family_name(strata_family_t f) {
  return (unsigned)f <= STRATA_FAMILY_LLAMA ? family_names[f] : "?";
}

int strata_family_parse(const char *name, strata_family_t *out) {
  for (int f = 0; f <= STRATA_FAMILY_LLAMA; f++)
    if (!strcmp(name, family_names[f])) {
      *out = (strata_family_t)f;
      return 0;
    }
  return STRATA_ENOTFOUND;
}

void strata_gen_opts_init(strata_gen_opts_t *o, strata_family_t family) {
  memset(o, 0, sizeof *o);
  o->family = family;
  o->layers = 12;
  o->hidden = 768;
  o->heads = 12;
  o->micro_batch = 1;
  o->dtype = STRATA_DTYPE_BF16;
  switch (family) {
  case STRATA_FAMILY_BERT:
    o->seq = 512, o->vocab = 30522;
    o->dropout = 1, o->tie_embeddings = 1;
    break;
  case STRATA_FAMILY_LLAMA:
    o->kv_heads = 4, o->seq = 2048, o->vocab = 32000;
    break;
  default:
    o->seq = 1024, o->vocab = 50257;
    o->dropout = 1, o->tie_embeddings = 1;
    break;
  }
  /* Fused attention: Megatron-LM's --attention-backend auto (Transformer
   * Engine's flash or cuDNN kernel), the default of its GPT and BERT
   * examples; --no-flash-attention gives the unfused one of 2021 */
  o->flash_attention = 1;
}

void strata_gen_opts_keep(strata_gen_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->dtype = STRATA_DTYPE_COUNT;
  o->flash_attention = o->dropout = o->tie_embeddings = -1;
  o->qkv_bias = o->out_bias = o->qk_norm = o->expert_bias = -1;
  o->mtp_layers = -1;
  o->router_sigmoid = -1;
}

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
    return 0;
  }
  for (int i = 0; i < N_MOE; i++)
    if (!strcmp(preset, moe_presets[i].name)) {
      moe_preset_opts(&moe_presets[i], o);
      return 0;
    }
  return STRATA_ENOTFOUND;
}

/* ---- strata_model_load ---- */

static int any_variant_override(const strata_gen_opts_t *v) {
  return v->head_dim > 0 || v->qkv_bias >= 0 || v->out_bias >= 0 ||
         v->qk_norm >= 0 || v->window > 0 || v->window_every > 0 ||
         v->rope_theta > 0 || v->experts > 0 || v->topk > 0 || v->moe_ffn > 0 ||
         v->shared_ffn > 0 || v->first_dense > 0 || v->expert_bias >= 0 ||
         v->capacity > 0 || v->q_lora > 0 || v->kv_lora > 0 || v->qk_nope > 0 ||
         v->qk_rope > 0 || v->v_head > 0 || v->mtp_layers >= 0 ||
         v->rotary_percent > 0 || v->moe_every > 0 || v->nope_every > 0 ||
         v->router_sigmoid >= 0;
}

static int any_override(const strata_gen_opts_t *v) {
  return v->layers > 0 || v->hidden > 0 || v->heads > 0 || v->kv_heads > 0 ||
         v->ffn > 0 || v->seq > 0 || v->vocab > 0 || v->micro_batch > 0 ||
         v->dtype != STRATA_DTYPE_COUNT || v->flash_attention >= 0 ||
         v->dropout >= 0 || v->tie_embeddings >= 0 || any_variant_override(v);
}

static void apply_variants(strata_gen_opts_t *o, const strata_gen_opts_t *v) {
#define TAKE_(f)                                                               \
  if (v->f > 0) o->f = v->f
#define FLAG_(f)                                                               \
  if (v->f >= 0) o->f = !!v->f
  TAKE_(head_dim);
  TAKE_(window);
  TAKE_(window_every);
  TAKE_(rope_theta);
  TAKE_(experts);
  TAKE_(topk);
  TAKE_(moe_ffn);
  TAKE_(shared_ffn);
  TAKE_(first_dense);
  TAKE_(capacity);
  TAKE_(q_lora);
  TAKE_(kv_lora);
  TAKE_(qk_nope);
  TAKE_(qk_rope);
  TAKE_(v_head);
  TAKE_(rotary_percent);
  TAKE_(moe_every);
  TAKE_(nope_every);
  FLAG_(router_sigmoid);
  FLAG_(qkv_bias);
  FLAG_(out_bias);
  FLAG_(qk_norm);
  FLAG_(expert_bias);
  if (v->mtp_layers >= 0) o->mtp_layers = v->mtp_layers;
#undef TAKE_
#undef FLAG_
}

static void apply(strata_gen_opts_t *o, const strata_gen_opts_t *v) {
#define TAKE_(f)                                                               \
  if (v->f > 0) o->f = v->f
  TAKE_(layers);
  TAKE_(hidden);
  TAKE_(heads);
  TAKE_(kv_heads);
  TAKE_(ffn);
  TAKE_(seq);
  TAKE_(vocab);
  TAKE_(micro_batch);
#undef TAKE_
  if (v->dtype != STRATA_DTYPE_COUNT) o->dtype = v->dtype;
  if (v->flash_attention >= 0) o->flash_attention = !!v->flash_attention;
  if (v->dropout >= 0) o->dropout = !!v->dropout;
  if (v->tie_embeddings >= 0) o->tie_embeddings = !!v->tie_embeddings;
  apply_variants(o, v);
  st__keep_a_moe_layer(o);
}

/* Fewer layers than a mixture's dense ones (--layers 2 of deepseek-v3):
 * the last one keeps its experts, so the shorter model is still one. */
void st__keep_a_moe_layer(strata_gen_opts_t *o) {
  if (o->experts > 0 && o->first_dense >= o->layers && o->layers > 0)
    o->first_dense = o->layers - 1;
}

static int unknown_model(const char *spec) {
  char list[768];
  size_t n = 0;
  const char *const *names = strata_preset_names();
  list[0] = '\0';
  for (int i = 0; names[i] && n < sizeof list; i++)
    n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "",
                          names[i]);
  return strata_error(STRATA_ENOTFOUND,
                      "unknown model '%s': not a preset, a family (gpt, "
                      "bert, llama) or a trace file; presets: %s",
                      spec, list);
}

static int looks_like_path(const char *spec) {
  struct stat st;
  size_t n = strlen(spec);
  return strchr(spec, '/') || (n > 5 && !strcmp(spec + n - 5, ".json")) ||
         stat(spec, &st) == 0;
}

/* A key a Hugging Face config has and a trace has not: the object is a
 * config without its model_type (NULL: it looks like neither). */
static const char *hf_key_of(const cJSON *root) {
  static const char *const keys[] = {"architectures",
                                     "transformers_version",
                                     "hidden_size",
                                     "num_hidden_layers",
                                     "num_attention_heads",
                                     "vocab_size",
                                     "n_embd",
                                     "d_model",
                                     NULL};
  if (!cJSON_IsObject(root) ||
      cJSON_GetObjectItemCaseSensitive(root, "format") ||
      cJSON_GetObjectItemCaseSensitive(root, "ops"))
    return NULL;
  for (int i = 0; keys[i]; i++)
    if (cJSON_GetObjectItemCaseSensitive(root, keys[i])) return keys[i];
  return NULL;
}

/* A trace ("format") or a Hugging Face config ("model_type"), told
 * apart after one parse. */
static int model_file(const char *spec, const strata_gen_opts_t *overrides,
                      strata_graph_t **out) {
  char *text = NULL;
  size_t len = 0;
  cJSON *root = NULL;
  int rc = strata_file_read(spec, 0, &text, &len);
  if (!rc) rc = st__json_parse(text, len, spec, &root);
  if (rc) goto out;
  if (cJSON_IsObject(root) &&
      !cJSON_GetObjectItemCaseSensitive(root, "format") &&
      cJSON_GetObjectItemCaseSensitive(root, "model_type")) {
    rc = st__hf_from_json(root, spec, overrides, out);
  } else if (hf_key_of(root)) {
    rc = strata_error(STRATA_EBADINPUT,
                      "%s: a Hugging Face config (it has '%s') without its "
                      "'model_type', which says the architecture to build "
                      "(\"model_type\": \"llama\", ...; docs/import.md "
                      "lists the types); nor is it a trace (no 'format')",
                      spec, hf_key_of(root));
  } else {
    /* a trace takes a micro-batch (re-shaped along its batch), no other
     * model option */
    strata_gen_opts_t o;
    int mb = overrides ? overrides->micro_batch : 0;
    if (overrides) {
      o = *overrides;
      o.micro_batch = 0;
    }
    if (overrides && any_override(&o))
      rc = strata_error(STRATA_EINVAL,
                        "%s: model options (layers, hidden, ...) apply to "
                        "presets, families and Hugging Face configs, not to "
                        "a trace file (it takes --micro-batch)",
                        spec);
    else
      rc = st__trace_from_json(root, spec, out);
    if (!rc && mb > 0 && mb != (*out)->micro_batch) {
      strata_graph_t *g = NULL;
      rc = strata_graph_rebatch(*out, mb, &g);
      strata_graph_destroy(*out);
      *out = g;
      if (rc) strata_error_prefix("%s: micro-batch %d", spec, mb);
    }
  }
out:
  cJSON_Delete(root);
  strata_free(text);
  return rc;
}

int strata_model_load(const char *spec, const strata_gen_opts_t *overrides,
                      strata_graph_t **out) {
  strata_gen_opts_t o;
  strata_family_t f;
  int found = strata_preset_opts(spec, &o) == 0;
  *out = NULL;
  if (!found && strata_family_parse(spec, &f) == 0) {
    strata_gen_opts_init(&o, f);
    found = 1;
  }
  if (found) {
    if (overrides) apply(&o, overrides);
    int rc = strata_generate(&o, spec, out);
    if (rc && rc != STRATA_ENOMEM) strata_error_prefix("%s", spec);
    return rc;
  }
  if (!looks_like_path(spec)) return unknown_model(spec);
  return model_file(spec, overrides, out);
}
