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
    o->flash_attention = 1;
    break;
  default:
    o->seq = 1024, o->vocab = 50257;
    o->dropout = 1, o->tie_embeddings = 1;
    break;
  }
}

void strata_gen_opts_keep(strata_gen_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->dtype = STRATA_DTYPE_COUNT;
  o->flash_attention = o->dropout = o->tie_embeddings = -1;
}

const char *const *strata_preset_names(void) {
  static const char *names[N_PRESETS + 1];
  for (int i = 0; i < N_PRESETS; i++)
    names[i] = presets[i].name;
  names[N_PRESETS] = NULL;
  return names;
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
  return STRATA_ENOTFOUND;
}

/* ---- strata_model_load ---- */

static int any_override(const strata_gen_opts_t *v) {
  return v->layers > 0 || v->hidden > 0 || v->heads > 0 || v->kv_heads > 0 ||
         v->ffn > 0 || v->seq > 0 || v->vocab > 0 || v->micro_batch > 0 ||
         v->dtype != STRATA_DTYPE_COUNT || v->flash_attention >= 0 ||
         v->dropout >= 0 || v->tie_embeddings >= 0;
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
}

static int unknown_model(const char *spec) {
  char list[512];
  size_t n = 0;
  list[0] = '\0';
  for (int i = 0; i < N_PRESETS && n < sizeof list; i++)
    n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "",
                          presets[i].name);
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
