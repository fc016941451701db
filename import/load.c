/*
 * load.c - strata_model_load, the one entry point the CLI and the planner
 * use to turn "gpt3-175b", "llama" or "model.json" into a validated graph.
 *
 * It sits at the top of the model front ends and only calls downward: a
 * preset's or family's options (presets.c, opts.c) with the caller's
 * overrides applied go to the generator (gen.c); a file is parsed once and
 * told apart as a trace (trace_read.c) or a Hugging Face config (hf.c);
 * a path ending in .onnx is an ONNX model (onnx.c).
 * Nothing below it calls back up here.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/json.h"
#include "core/text.h"
#include "traces/traces_int.h"

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

/* A name that is no preset or family and no file: every kind of model
 * --model takes, and the preset or family it was meant to be when one is
 * near. */
static int unknown_model(const char *spec) {
  char list[768];
  size_t n = 0;
  const char *const *presets = strata_preset_names();
  const char *names[64 + 4], *near;
  int k = 0;
  list[0] = '\0';
  for (int i = 0; presets[i] && n < sizeof list; i++)
    n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "",
                          presets[i]);
  for (int i = 0; presets[i] && k < 64; i++)
    names[k++] = presets[i];
  for (int f = STRATA_FAMILY_GPT; f <= STRATA_FAMILY_LLAMA; f++)
    names[k++] = strata_family_name((strata_family_t)f);
  names[k] = NULL;
  near = st__did_you_mean(spec, names);
  return strata_error(STRATA_ENOTFOUND,
                      "unknown model '%s'%s%s%s: --model takes a preset (%s), "
                      "a family (gpt, bert, llama), a trace file (.json, from "
                      "strata trace gen), a Hugging Face config.json or an "
                      "ONNX model (.onnx); docs/import.md",
                      spec, near ? " (did you mean '" : "", near ? near : "",
                      near ? "'?)" : "", list);
}

static int is_onnx_path(const char *spec) {
  size_t n = strlen(spec);
  return n > 5 && !strcmp(spec + n - 5, ".onnx");
}

static int looks_like_path(const char *spec) {
  struct stat st;
  size_t n = strlen(spec);
  return strchr(spec, '/') || (n > 5 && !strcmp(spec + n - 5, ".json")) ||
         is_onnx_path(spec) || stat(spec, &st) == 0;
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
  if (is_onnx_path(spec)) return strata_onnx_load(spec, overrides, out);
  return model_file(spec, overrides, out);
}
