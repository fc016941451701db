/*
 * opts.c - the lowest layer of the model front ends: the families' names
 * and the generator's defaults (strata_gen_opts_init), which presets.c,
 * gen.c, hf.c and load.c all start from.  It calls nothing else in
 * traces/, so every other file may call it and none of them has to call
 * the others sideways to learn a default.
 */
#include <string.h>

#include "traces/traces_int.h"

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

/* Fewer layers than a mixture's dense ones (--layers 2 of deepseek-v3):
 * the last one keeps its experts, so the shorter model is still one. */
void st__keep_a_moe_layer(strata_gen_opts_t *o) {
  if (o->experts > 0 && o->first_dense >= o->layers && o->layers > 0)
    o->first_dense = o->layers - 1;
}
