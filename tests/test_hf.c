/*
 * test_hf.c - Hugging Face configs against published parameter counts
 * (tests/data/hf holds the configs, written out by hand; docs/import.md
 * cites where each count comes from), the variants each model_type turns
 * on, the fields that must be refused, and every imported model through
 * re-batching and the stage ILP.
 */
#include <stdlib.h>

#include "strata/strata.h"
#include "testlib.h"

static const char *path_of(const char *file) {
  static char p[600];
  snprintf(p, sizeof p, "%s/tests/data/hf/%s", test_source_dir(), file);
  return p;
}

static strata_graph_t *import_mtp(const char *file, int layers, int seq,
                                  int mtp) {
  strata_gen_opts_t ov;
  strata_graph_t *g = NULL;
  strata_gen_opts_keep(&ov);
  ov.layers = layers;
  ov.seq = seq;
  ov.mtp_layers = mtp;
  ASSERT_OK(strata_hf_load(path_of(file), &ov, &g));
  return g;
}

static strata_graph_t *import(const char *file, int layers, int seq) {
  return import_mtp(file, layers, seq, -1);
}

static int64_t params(const strata_graph_t *g) {
  strata_graph_stats_t st;
  strata_graph_stats(g, &st);
  return st.parameters;
}

/* Published totals; "exact" ones (1) are given to the parameter, the
 * others within 0.5 % (0), 1 % (2) or 1.5 % (3).  DeepSeek-V3's
 * 671B is the model without its multi-token prediction module, which the
 * count leaves out (--mtp-layers 0; mtp_module_from_config checks it). */
static const struct {
  const char *file;
  double published;
  int exact;
} counts[] = {
    {"gpt2.json", 124e6, 0},
    {"gpt2-medium.json", 355e6, 0},
    {"gpt2-large.json", 774e6, 0},
    {"pythia-160m.json", 162322944, 1},
    {"pythia-1.4b.json", 1414647808, 1},
    {"gpt-neox-20b.json", 20554567680.0, 1},
    {"llama-13b.json", 13.0e9, 0},
    {"llama-65b.json", 65.2e9, 0},
    {"llama-3-8b.json", 8.03e9, 0},
    {"mistral-7b.json", 7.24e9, 0},
    {"qwen2.5-7b.json", 7.61e9, 0},
    {"qwen3-8b.json", 8.2e9, 0},
    {"gemma-7b.json", 8538074112.0, 0},
    {"gemma-2-9b.json", 9242164736.0, 0},
    /* Gemma 3 report, Table 1: 302M + 698M (27B: gemma3_configs) */
    {"gemma-3-1b.json", 1000e6, 0},
    /* the checkpoints' counts on the Hugging Face hub; OLMo 2's and Command
     * R+'s q/k norms are built per head (docs/import.md) */
    {"olmo-2-7b.json", 7.30e9, 0},
    {"command-r.json", 35e9, 0},
    {"command-r-plus.json", 104e9, 0},
    /* Cohere 2: the hub's 8.03B for Command R7B, the model card's 111B
     * for Command A */
    {"command-r7b.json", 8.03e9, 0},
    {"command-a.json", 111e9, 0},
    /* BLOOM paper (arXiv:2211.05100), Table 1: 559,214,592 and 176,247M */
    {"bloom-560m.json", 559214592, 1},
    {"bloom.json", 176247271424.0, 0},
    /* the OPT paper (arXiv:2205.01068), Table 1, and the Falcon paper
     * (arXiv:2311.16867): to the billion */
    {"opt-13b.json", 13e9, 3},
    {"opt-66b.json", 66e9, 3},
    {"falcon-7b.json", 7e9, 3},
    {"falcon-180b.json", 180e9, 2},
    {"phi-3-mini.json", 3.82e9, 0},
    {"bert-base-uncased.json", 110e6, 0},
    {"t5-base.json", 223e6, 0},
    {"flan-t5-base.json", 248e6, 0},
    /* mixtures of experts: the model cards' totals */
    {"mixtral-8x7b.json", 46.7e9, 0},
    {"deepseek-v3.json", 671e9, 0},
    {"qwen3-235b-a22b.json", 235e9, 0},
    {"qwen3-30b-a3b.json", 30.5e9, 0},
    {"gpt-oss-120b.json", 116.83e9, 0},
    {"qwen1.5-moe-a2.7b.json", 14.3e9, 0},
    /* GLM-4.5 technical report (arXiv:2508.06471), Table 1: 355B and
     * 106B, three digits; without the MTP layer 352.80B (-0.62 %) and
     * 106.85B, with it 356.79B (+0.50 %): the report does not say which,
     * so 1 % */
    {"glm-4.5.json", 355e9, 2},
    {"glm-4.5-air.json", 106e9, 2},
    /* Meta's Llama 4 announcement: 109B and 400B with the vision encoder
     * (about 0.8B: 34 layers of 1408), which the text model leaves out */
    {"llama-4-scout.json", 109e9, 3},
    {"llama-4-maverick.json", 400e9, 2},
};

TEST(published_parameter_counts) {
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    strata_graph_t *g = import_mtp(counts[i].file, 0, 64, 0);
    double p = (double)params(g), want = counts[i].published;
    printf("  %-24s %-9s %16.0f  published %16.0f  %+.3f %%\n", counts[i].file,
           g->hp.family, p, want, 100 * (p - want) / want);
    if (counts[i].exact == 1)
      ASSERT_EQ(params(g), (int64_t)want);
    else
      ASSERT_NEAR(p, want,
                  counts[i].exact == 3   ? 0.015
                  : counts[i].exact == 2 ? 0.01
                                         : 0.005,
                  0);
    strata_graph_destroy(g);
  }
}

/* DeepSeek-V3's num_nextn_predict_layers (1) builds one multi-token
 * prediction module, as the preset: its parameters are what the 685B
 * checkpoint adds to the 671B model less the two tables it stores again
 * (its embedding and head share the model's: 2 x 129280 x 7168), within
 * the rounding of "685B"; an override drops it. */
TEST(mtp_module_from_config) {
  strata_graph_t *g = import("deepseek-v3.json", 0, 64);
  strata_graph_t *n = import_mtp("deepseek-v3.json", 0, 64, 0);
  ASSERT_EQ(g->hp.mtp_layers, 1);
  ASSERT_EQ(n->hp.mtp_layers, 0);
  double mtp = (double)(params(g) - params(n)), tables = 2.0 * 129280 * 7168;
  printf("  MTP module %.3f B; with its stored tables %.2f B over the model "
         "(685B - 671B = 14B published)\n",
         mtp / 1e9, (mtp + tables) / 1e9);
  ASSERT_NEAR(params(g) + tables, 685e9, 0.005, 0);
  ASSERT(strata_graph_find_op(g, "mtp0.eh_proj") >= 0);
  ASSERT(strata_graph_find_op(n, "mtp0.eh_proj") < 0);
  strata_graph_destroy(g);
  strata_graph_destroy(n);
  /* a dense config's builder has no multi-token prediction */
  strata_gen_opts_t ov;
  strata_gen_opts_keep(&ov);
  ov.mtp_layers = 1;
  ASSERT_EQ(strata_hf_load(path_of("llama-3-8b.json"), &ov, &g), STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "multi-token prediction");
}

/* The Gemma papers count the embedding with 256128 rows; the released
 * configs have 256000: the non-embedding parts agree to the parameter. */
TEST(gemma_non_embedding_exact) {
  strata_graph_t *g = import("gemma-7b.json", 0, 64);
  ASSERT_EQ(params(g) - 256000LL * 3072, 7751248896LL);
  strata_graph_destroy(g);
  g = import("gemma-2-9b.json", 0, 64);
  ASSERT_EQ(params(g) - 256000LL * 3584, 8324201984LL);
  strata_graph_destroy(g);
}

static const strata_op_t *op_named(const strata_graph_t *g, const char *n) {
  int i = strata_graph_find_op(g, n);
  if (i < 0) test_fail(__FILE__, __LINE__, "no op '%s'", n);
  return &g->ops[i];
}

static const strata_tensor_t *tensor_named(const strata_graph_t *g,
                                           const char *n) {
  int i = strata_graph_find_tensor(g, n);
  if (i < 0) test_fail(__FILE__, __LINE__, "no tensor '%s'", n);
  return &g->tensors[i];
}

/* Phi-3-mini's 2047-token window: attention over the window only. */
TEST(sliding_window_flops) {
  strata_graph_t *g = import("phi-3-mini.json", 1, 4096);
  const strata_op_t *a = op_named(g, "attn");
  ASSERT_EQ(a->window, 2047);
  ASSERT_EQ(a->causal, 1);
  double full = 4.0 * 1 * 32 * 4096.0 * 96 * 4096;
  /* the pairs under the causal window: w(w + 1)/2 + w(s - w) */
  double pairs = 2047.0 * 2048 / 2 + 2047.0 * (4096 - 2047);
  ASSERT_NEAR(strata_op_flops_fwd(g, a), full * pairs / (4096.0 * 4096), 1e-12,
              0);
  strata_graph_destroy(g);
  /* at 2048 tokens or fewer the window covers everything */
  g = import("phi-3-mini.json", 1, 2047);
  ASSERT_EQ(op_named(g, "attn")->window, 0);
  strata_graph_destroy(g);
}

/* Gemma 2: local (even) and global (odd) layers differ past the window:
 * one block per layer; within the window all are one block. */
TEST(gemma2_alternating_layers) {
  strata_graph_t *g = import("gemma-2-9b.json", 0, 8192);
  ASSERT_EQ(g->n_blocks, 42);
  ASSERT_EQ(strata_graph_layers(g), 42);
  ASSERT_EQ(op_named(g, "L0.attn")->window, 4096);
  ASSERT_EQ(op_named(g, "L1.attn")->window, 0);
  ASSERT_EQ(op_named(g, "L2.attn")->window, 4096);
  ASSERT(strata_graph_find_op(g, "L0.post_attn_norm") >= 0);
  ASSERT_EQ(op_named(g, "softcap")->kind, STRATA_OP_GENERIC);
  strata_graph_destroy(g);
  g = import("gemma-2-9b.json", 0, 4096);
  ASSERT_EQ(g->n_blocks, 1);
  ASSERT_EQ(g->blocks[0].repeat, 42);
  ASSERT_EQ(strata_graph_find_tensor(g, "q_norm.weight"), -1);
  strata_graph_destroy(g);
}

/* Gemma 3 (google/gemma-3-1b-pt, a gemma3_text config, and -27b-pt, a
 * gemma3 config whose text_config leaves most keys to transformers'
 * defaults): the report's non-embedding counts (Gemma 3 Technical Report,
 * Table 1: 698M and 25,600M), q/k norms and sandwich norms, five windowed
 * layers to one global. */
TEST(gemma3_configs) {
  strata_graph_t *g = import("gemma-3-1b.json", 0, 4096);
  int64_t one = params(g) - 262144LL * 1152;
  ASSERT_EQ(g->hp.qk_norm, 1);
  ASSERT_EQ(g->hp.window, 512);
  ASSERT_EQ(g->hp.window_every, 6);
  ASSERT_EQ(op_named(g, "L0.attn")->window, 512);
  /* runs of five windowed layers and one global: 9 blocks for 26 */
  ASSERT_EQ(g->n_blocks, 9);
  ASSERT_EQ(g->blocks[0].repeat, 5);
  ASSERT_EQ(strata_graph_layers(g), 26);
  ASSERT_EQ(op_named(g, "L5.attn")->window, 0);
  ASSERT_EQ(op_named(g, "L6.attn")->window, 512);
  ASSERT_EQ(op_named(g, "L11.attn")->window, 0);
  ASSERT(strata_graph_find_op(g, "L0.post_attn_norm") >= 0);
  ASSERT(strata_graph_find_tensor(g, "L0.q_norm.weight") >= 0);
  ASSERT_EQ(strata_graph_find_op(g, "softcap"), -1);
  strata_graph_destroy(g);
  g = import("gemma-3-27b.json", 0, 4096);
  int64_t big = params(g) - 262208LL * 5376; /* the default vocab */
  printf("  non-embedding: 1B %.2f M (698M), 27B %.2f M (25,600M)\n", one / 1e6,
         big / 1e6);
  ASSERT_NEAR((double)one, 698e6, 0.0005, 0);
  ASSERT_NEAR((double)big, 25600e6, 0.0005, 0);
  ASSERT_EQ(g->hp.layers, 62);
  ASSERT_EQ(g->hp.kv_heads, 16);
  ASSERT_EQ(g->hp.head_dim, 128);
  ASSERT_EQ(g->hp.window, 1024);
  ASSERT_EQ(g->hp.window_every, 6);
  ASSERT_NEAR(g->hp.rope_theta, 1e6, 0, 0); /* the class default */
  ASSERT_EQ(tensor_named(g, "embed.weight")->dtype, STRATA_DTYPE_BF16);
  strata_graph_destroy(g);
  /* layer_types (transformers 4.53 on) and rope_parameters (5) */
#define G3(extra)                                                              \
  "{\"model_type\": \"gemma3_text\", \"hidden_size\": 64, "                    \
  "\"num_hidden_layers\": 4, \"num_attention_heads\": 2, "                     \
  "\"num_key_value_heads\": 1, \"head_dim\": 32, \"intermediate_size\": "      \
  "128, \"vocab_size\": 100, \"sliding_window\": 16" extra "}"
  static const char both[] =
      G3(", \"layer_types\": [\"sliding_attention\", \"full_attention\", "
         "\"sliding_attention\", \"full_attention\"], \"rope_parameters\": "
         "{\"sliding_attention\": {\"rope_type\": \"default\", "
         "\"rope_theta\": 10000}, \"full_attention\": {\"rope_type\": "
         "\"default\", \"rope_theta\": 500000}}");
  strata_gen_opts_t ov;
  strata_gen_opts_keep(&ov);
  ov.seq = 64;
  ASSERT_OK(strata_hf_parse(both, strlen(both), "g3.json", &ov, &g));
  ASSERT_EQ(g->hp.window_every, 2);
  ASSERT_EQ(op_named(g, "L0.attn")->window, 16);
  ASSERT_EQ(op_named(g, "L1.attn")->window, 0);
  ASSERT_NEAR(g->hp.rope_theta, 500000, 0, 0);
  strata_graph_destroy(g);
  static const char all_full[] =
      G3(", \"layer_types\": [\"full_attention\", \"full_attention\", "
         "\"full_attention\", \"full_attention\"]");
  ASSERT_OK(strata_hf_parse(all_full, strlen(all_full), "g3.json", &ov, &g));
  ASSERT_EQ(g->hp.window, 0);
  strata_graph_destroy(g);
  /* the text model takes the multimodal config's torch_dtype */
  static const char outer[] =
      "{\"model_type\": \"gemma3\", \"torch_dtype\": \"float32\", "
      "\"text_config\": " G3("") "}";
  ASSERT_OK(strata_hf_parse(outer, strlen(outer), "g3.json", &ov, &g));
  ASSERT_EQ(tensor_named(g, "embed.weight")->dtype, STRATA_DTYPE_F32);
  ASSERT_EQ(g->hp.window_every, 6);
  strata_graph_destroy(g);
  static const struct {
    const char *text, *why;
  } bad[] = {
      {G3(", \"layer_types\": [\"sliding_attention\", \"full_attention\", "
          "\"full_attention\", \"sliding_attention\"]"),
       "full_attention on every k-th layer"},
      {G3(", \"layer_types\": [\"sliding_attention\"]"), "one per layer"},
      {G3(", \"layer_types\": [\"local\", \"global\", \"local\", "
          "\"global\"]"),
       "sliding_attention and full_attention"},
      {G3(", \"use_bidirectional_attention\": true"), "bidirectional"},
      {"{\"model_type\": \"gemma3\", \"text_config\": {\"model_type\": "
       "\"gemma2\"}}",
       "not gemma3_text"},
      {"{\"model_type\": \"gemma3\"}", "needs its text_config"},
  };
#undef G3
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    strata_graph_t *x = NULL;
    ASSERT_EQ(
        strata_hf_parse(bad[i].text, strlen(bad[i].text), "g3.json", &ov, &x),
        STRATA_EBADINPUT);
    ASSERT_CONTAINS(strata_last_error(), bad[i].why);
    ASSERT(x == NULL);
  }
}

/* Cohere 2: Cohere's parallel layer without q/k norms, the window on
 * three layers of four (the fourth full); Cohere's own keys must agree
 * with the layer transformers builds. */
TEST(cohere2_layers) {
  strata_graph_t *g = import("command-r7b.json", 0, 8192);
  ASSERT_EQ(g->hp.window, 4096);
  ASSERT_EQ(g->hp.window_every, 4);
  for (int l = 0; l < 32; l++) { /* runs of three windowed, one full */
    const strata_block_t *b = &g->blocks[strata_graph_layer_block(g, l)];
    int w = -1;
    for (int i = b->first_op; i < b->first_op + b->n_ops; i++)
      if (g->ops[i].kind == STRATA_OP_FLASH_ATTENTION) w = g->ops[i].window;
    ASSERT_EQ(w, (l + 1) % 4 ? 4096 : 0);
  }
  ASSERT_EQ(op_named(g, "L0.ln1")->kind, STRATA_OP_LAYERNORM);
  ASSERT_EQ(strata_graph_find_op(g, "L0.ln2"), -1);
  ASSERT_EQ(op_named(g, "L0.fc1")->in[0], op_named(g, "L0.qkv")->in[0]);
  ASSERT_EQ(strata_graph_find_op(g, "L0.q_norm"), -1);
  ASSERT_EQ(strata_graph_find_tensor(g, "head.weight"), -1); /* tied */
  ASSERT_EQ(tensor_named(g, "L0.qkv.weight")->shape[0], (32 + 2 * 8) * 128);
  strata_graph_destroy(g);
  /* within the window every layer is one block */
  g = import("command-r7b.json", 0, 4096);
  ASSERT_EQ(g->n_blocks, 1);
  strata_graph_destroy(g);
  strata_gen_opts_t ov;
  strata_gen_opts_keep(&ov);
#define C2(extra)                                                              \
  "{\"model_type\": \"cohere2\", \"hidden_size\": 64, "                        \
  "\"num_hidden_layers\": 4, \"num_attention_heads\": 2, "                     \
  "\"num_key_value_heads\": 1, \"intermediate_size\": 128, \"vocab_size\": "   \
  "100, \"sliding_window\": 16" extra "}"
  static const char plain[] = C2("");
  ov.seq = 64;
  ASSERT_OK(strata_hf_parse(plain, strlen(plain), "c2.json", &ov, &g));
  ASSERT_EQ(g->hp.window_every, 4); /* Cohere2Config's default pattern */
  ASSERT_EQ(op_named(g, "L0.attn")->window, 16);
  ASSERT_EQ(op_named(g, "L3.attn")->window, 0);
  strata_graph_destroy(g);
  static const struct {
    const char *text, *why;
  } bad[] = {
      {C2(", \"use_parallel_block\": false"), "use_parallel_block"},
      {C2(", \"use_gated_activation\": false"), "use_gated_activation"},
      {C2(", \"use_embedding_sharing\": false"), "as tie_word_embeddings"},
      {C2(", \"rotary_pct\": 0.5"), "rotary_pct"},
      {C2(", \"order_of_interleaved_layers\": \"global_attn_first\""),
       "local_attn_first"},
  };
#undef C2
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    strata_graph_t *x = NULL;
    ASSERT_EQ(
        strata_hf_parse(bad[i].text, strlen(bad[i].text), "c2.json", &ov, &x),
        STRATA_EBADINPUT);
    ASSERT_CONTAINS(strata_last_error(), bad[i].why);
    ASSERT(x == NULL);
  }
}

/* BLOOM, OPT and Falcon: the layers their transformers classes build. */
TEST(bloom_opt_falcon_layers) {
  /* BLOOM: ALiBi (no position table, no rotary), a norm after the
   * embeddings, biases, tied head */
  strata_graph_t *g = import("bloom-560m.json", 2, 2048);
  ASSERT_EQ(op_named(g, "embed_norm")->kind, STRATA_OP_LAYERNORM);
  ASSERT_EQ(strata_graph_find_tensor(g, "embed.pos"), -1);
  ASSERT_EQ(strata_graph_find_op(g, "rope_q"), -1);
  ASSERT(strata_graph_find_tensor(g, "qkv.bias") >= 0);
  ASSERT(strata_graph_find_tensor(g, "fc2.bias") >= 0);
  ASSERT_EQ(strata_graph_find_tensor(g, "head.weight"), -1);
  ASSERT_EQ(op_named(g, "act")->kind, STRATA_OP_GELU);
  ASSERT_EQ(tensor_named(g, "fc1.weight")->shape[0], 4 * 1024);
  strata_graph_destroy(g);
  /* OPT: 2048 positions in 2050 rows, a ReLU MLP of ffn_dim */
  g = import("opt-13b.json", 2, 2048);
  ASSERT_EQ(tensor_named(g, "embed.pos")->shape[0], 2050);
  ASSERT_EQ(op_named(g, "act")->kind, STRATA_OP_RELU);
  ASSERT_EQ(tensor_named(g, "fc1.weight")->shape[0], 20480);
  ASSERT(strata_graph_find_tensor(g, "proj.bias") >= 0);
  ASSERT_EQ(strata_graph_find_op(g, "rope_q"), -1);
  strata_graph_destroy(g);
  /* Falcon 7B: one norm feeds attention and MLP, one key/value head, no
   * biases; 180B: two norms side by side, 8 key/value heads */
  g = import("falcon-7b.json", 2, 2048);
  ASSERT_EQ(strata_graph_find_op(g, "ln2"), -1);
  ASSERT_EQ(op_named(g, "fc1")->in[0], op_named(g, "qkv")->in[0]);
  ASSERT_EQ(tensor_named(g, "qkv.weight")->shape[0], (71 + 2) * 64);
  ASSERT_EQ(strata_graph_find_tensor(g, "qkv.bias"), -1);
  ASSERT(strata_graph_find_op(g, "rope_q") >= 0);
  strata_graph_destroy(g);
  g = import("falcon-180b.json", 2, 2048);
  ASSERT_EQ(op_named(g, "ln1")->in[0], g->blocks[0].input);
  ASSERT_EQ(op_named(g, "ln2")->in[0], g->blocks[0].input);
  ASSERT_EQ(op_named(g, "fc1")->in[0], op_named(g, "ln2")->out[0]);
  ASSERT_EQ(tensor_named(g, "qkv.weight")->shape[0], (232 + 2 * 8) * 64);
  strata_graph_destroy(g);
  strata_gen_opts_t ov;
  strata_gen_opts_keep(&ov);
  ov.seq = 64;
#define OPT(extra)                                                             \
  "{\"model_type\": \"opt\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "  \
  "\"num_attention_heads\": 2, \"ffn_dim\": 128, \"vocab_size\": 100, "        \
  "\"max_position_embeddings\": 64" extra "}"
#define FALCON(extra)                                                          \
  "{\"model_type\": \"falcon\", \"hidden_size\": 64, "                         \
  "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"vocab_size\": "     \
  "100" extra "}"
  static const char alibi[] = FALCON(", \"alibi\": true");
  ASSERT_OK(strata_hf_parse(alibi, strlen(alibi), "f.json", &ov, &g));
  ASSERT_EQ(strata_graph_find_op(g, "rope_q"), -1);
  ASSERT_EQ(g->hp.kv_heads, 1); /* multi_query by default */
  strata_graph_destroy(g);
  static const char serial[] =
      FALCON(", \"parallel_attn\": false, \"multi_query\": false");
  ASSERT_OK(strata_hf_parse(serial, strlen(serial), "f.json", &ov, &g));
  ASSERT_EQ(op_named(g, "fc1")->in[0], op_named(g, "ln2")->out[0]);
  ASSERT(op_named(g, "ln2")->in[0] != g->blocks[0].input);
  ASSERT_EQ(g->hp.kv_heads, 4);
  strata_graph_destroy(g);
  static const struct {
    const char *text, *why;
  } bad[] = {
      {OPT(", \"do_layer_norm_before\": false"), "post-LN"},
      {OPT(", \"word_embed_proj_dim\": 32"), "projected embeddings"},
      {OPT(", \"layerdrop\": 0.1"), "at random"},
      {OPT(", \"_remove_final_layer_norm\": true"), "false"},
      {FALCON(", \"num_ln_in_parallel_attn\": 3"), "1 or 2"},
      {FALCON(", \"apply_residual_connection_post_layernorm\": true"), "false"},
      {"{\"model_type\": \"bloom\", \"n_embed\": 64, \"hidden_size\": 32, "
       "\"n_layer\": 2, \"n_head\": 2, \"vocab_size\": 100}",
       "as its twin"},
      {"{\"model_type\": \"bloom\", \"hidden_size\": 64, \"n_layer\": 2, "
       "\"n_head\": 2, \"vocab_size\": 100, \"n_inner\": 512}",
       "4 x hidden"},
  };
#undef OPT
#undef FALCON
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    strata_graph_t *x = NULL;
    ASSERT_EQ(
        strata_hf_parse(bad[i].text, strlen(bad[i].text), "x.json", &ov, &x),
        STRATA_EBADINPUT);
    ASSERT_CONTAINS(strata_last_error(), bad[i].why);
    ASSERT(x == NULL);
  }
}

/* The window patterns transformers reads: sliding_window_pattern 1 is
 * full attention everywhere, 0 is refused; gpt-oss without layer_types
 * alternates (GptOssConfig's default); dtype is torch_dtype's newer name. */
TEST(window_patterns_and_dtype) {
  strata_gen_opts_t ov;
  strata_graph_t *g = NULL;
  strata_gen_opts_keep(&ov);
  ov.seq = 64;
#define G3(extra)                                                              \
  "{\"model_type\": \"gemma3_text\", \"hidden_size\": 64, "                    \
  "\"num_hidden_layers\": 4, \"num_attention_heads\": 2, "                     \
  "\"num_key_value_heads\": 1, \"head_dim\": 32, \"intermediate_size\": "      \
  "128, \"vocab_size\": 100, \"sliding_window\": 16" extra "}"
  static const char one[] = G3(", \"sliding_window_pattern\": 1");
  ASSERT_OK(strata_hf_parse(one, strlen(one), "g3.json", &ov, &g));
  ASSERT_EQ(g->hp.window, 0);
  ASSERT_EQ(g->n_blocks, 1); /* four alike layers */
  ASSERT_EQ(op_named(g, "attn")->window, 0);
  strata_graph_destroy(g);
  static const char zero[] = G3(", \"sliding_window_pattern\": 0");
  ASSERT_EQ(strata_hf_parse(zero, strlen(zero), "g3.json", &ov, &g),
            STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "at least 1");
  static const char f32[] = G3(", \"dtype\": \"float32\"");
  ASSERT_OK(strata_hf_parse(f32, strlen(f32), "g3.json", &ov, &g));
  ASSERT_EQ(tensor_named(g, "embed.weight")->dtype, STRATA_DTYPE_F32);
  strata_graph_destroy(g);
  static const char both[] =
      G3(", \"dtype\": \"float32\", \"torch_dtype\": \"bfloat16\"");
  ASSERT_EQ(strata_hf_parse(both, strlen(both), "g3.json", &ov, &g),
            STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "'dtype'");
#undef G3
  static const char oss[] =
      "{\"model_type\": \"gpt_oss\", \"hidden_size\": 64, "
      "\"num_hidden_layers\": 4, \"num_attention_heads\": 2, "
      "\"num_key_value_heads\": 1, \"head_dim\": 32, \"intermediate_size\": "
      "64, \"vocab_size\": 100, \"num_local_experts\": 4, "
      "\"num_experts_per_tok\": 2, \"sliding_window\": 8}";
  ASSERT_OK(strata_hf_parse(oss, strlen(oss), "oss.json", &ov, &g));
  ASSERT_EQ(g->hp.window, 8);
  ASSERT_EQ(g->hp.window_every, 2);
  ASSERT_EQ(op_named(g, "L0.attn")->window, 8);
  ASSERT_EQ(op_named(g, "L1.attn")->window, 0);
  strata_graph_destroy(g);
}

TEST(family_variants) {
  strata_graph_t *g = import("qwen2.5-7b.json", 1, 64);
  ASSERT_EQ(tensor_named(g, "qkv.bias")->shape[0], (28 + 2 * 4) * 128);
  ASSERT_EQ(strata_graph_find_tensor(g, "proj.bias"), -1);
  strata_graph_destroy(g);
  g = import("qwen3-8b.json", 1, 64);
  ASSERT_EQ(tensor_named(g, "q_norm.weight")->shape[0], 128);
  ASSERT_EQ(tensor_named(g, "qkv.weight")->shape[0], (32 + 2 * 8) * 128);
  strata_graph_destroy(g);
  /* Gemma 7B: 16 heads of 256 over a hidden of 3072 */
  g = import("gemma-7b.json", 1, 64);
  ASSERT_EQ(tensor_named(g, "proj.weight")->shape[1], 4096);
  ASSERT_EQ(tensor_named(g, "proj.weight")->shape[0], 3072);
  ASSERT_EQ(op_named(g, "act")->kind, STRATA_OP_GELU);
  ASSERT_EQ(op_named(g, "gate_mul")->kind, STRATA_OP_MUL);
  strata_graph_destroy(g);
  /* Pythia: a quarter of each 64-dim head rotated; attention and MLP
   * side by side from two norms */
  g = import("pythia-160m.json", 1, 64);
  ASSERT_EQ(tensor_named(g, "rope_q_split.rot")->shape[3], 16);
  ASSERT_EQ(op_named(g, "rope_q_cat")->kind, STRATA_OP_CONCAT);
  ASSERT_EQ(op_named(g, "fc1")->in[0], op_named(g, "ln2")->out[0]);
  ASSERT_EQ(op_named(g, "ln2")->in[0], op_named(g, "ln1")->in[0]);
  ASSERT(strata_graph_find_tensor(g, "head.weight") >= 0); /* untied */
  strata_graph_destroy(g);
  /* BERT: bidirectional, post-norm, MLM head */
  g = import("bert-base-uncased.json", 1, 64);
  ASSERT_EQ(op_named(g, "attn")->causal, 0);
  ASSERT(strata_graph_find_op(g, "mlm_dense") >= 0);
  ASSERT_EQ(g->tensors[g->blocks[0].output].producer,
            strata_graph_find_op(g, "ln2"));
  strata_graph_destroy(g);
  /* OLMo 2: norms on the outputs only, q/k RMSNorms */
  g = import("olmo-2-7b.json", 1, 64);
  ASSERT_EQ(strata_graph_find_op(g, "ln1"), -1);
  ASSERT_EQ(strata_graph_find_op(g, "ln2"), -1);
  ASSERT_EQ(op_named(g, "post_attn_norm")->kind, STRATA_OP_RMSNORM);
  ASSERT_EQ(op_named(g, "post_mlp_norm")->kind, STRATA_OP_RMSNORM);
  ASSERT_EQ(op_named(g, "qkv")->in[0], g->blocks[0].input);
  ASSERT_EQ(op_named(g, "q_norm")->kind, STRATA_OP_RMSNORM);
  ASSERT(strata_graph_find_tensor(g, "head.weight") >= 0); /* untied */
  strata_graph_destroy(g);
  /* Cohere: attention and MLP from one bias-free LayerNorm, a tied head;
   * Command R+ with q/k LayerNorms */
  g = import("command-r.json", 1, 64);
  ASSERT_EQ(op_named(g, "ln1")->kind, STRATA_OP_LAYERNORM);
  ASSERT_EQ(strata_graph_find_op(g, "ln2"), -1);
  ASSERT_EQ(strata_graph_find_tensor(g, "ln1.bias"), -1);
  ASSERT_EQ(op_named(g, "fc1")->in[0], op_named(g, "qkv")->in[0]);
  ASSERT_EQ(strata_graph_find_tensor(g, "head.weight"), -1);
  ASSERT_EQ(strata_graph_find_op(g, "q_norm"), -1);
  strata_graph_destroy(g);
  g = import("command-r-plus.json", 1, 64);
  ASSERT_EQ(op_named(g, "q_norm")->kind, STRATA_OP_LAYERNORM);
  ASSERT_EQ(tensor_named(g, "qkv.weight")->shape[0], (96 + 2 * 8) * 128);
  strata_graph_destroy(g);
}

/* T5: encoder blocks, the encoder's norm as a block of its own, decoder
 * blocks with cross-attention over the encoder's output, relative
 * position biases made in the prologue. */
TEST(t5_encoder_decoder) {
  strata_graph_t *g = import("t5-base.json", 0, 64);
  ASSERT_EQ(g->n_blocks, 3);
  ASSERT_STR_EQ(g->blocks[0].name, "encoder");
  ASSERT_STR_EQ(g->blocks[1].name, "encoder_norm");
  ASSERT_STR_EQ(g->blocks[2].name, "decoder");
  ASSERT_EQ(strata_graph_layers(g), 25);
  const strata_op_t *x = op_named(g, "decoder.xattn");
  ASSERT_EQ(x->kind, STRATA_OP_CROSS_ATTENTION);
  ASSERT_EQ(op_named(g, "decoder.xk")->in[0], g->blocks[1].output);
  ASSERT_EQ(op_named(g, "encoder.attn")->n_in, 4); /* with the bias */
  ASSERT_EQ(op_named(g, "encoder.attn")->causal, 0);
  ASSERT_EQ(op_named(g, "decoder.attn")->causal, 1);
  ASSERT_EQ(op_named(g, "decoder.act")->kind, STRATA_OP_RELU);
  ASSERT_EQ(tensor_named(g, "enc_rel.weight")->shape[0], 32);
  strata_graph_destroy(g);
}

static void expect_error(const char *text, int err, const char *msg) {
  strata_graph_t *g = (strata_graph_t *)1;
  int rc = strata_hf_parse(text, strlen(text), "c.json", NULL, &g);
  ASSERT(g == NULL);
  ASSERT_EQ(rc, err);
  ASSERT_CONTAINS(strata_last_error(), "c.json");
  ASSERT_CONTAINS(strata_last_error(), msg);
}

TEST(refused_configs) {
  expect_error("{\"model_type\": \"mixtral\", \"num_local_experts\": 8}",
               STRATA_EBADINPUT, "'hidden_size' is missing");
  expect_error("{\"model_type\": \"deepseek_v3\", \"hidden_size\": 64, "
               "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
               "\"vocab_size\": 100, \"num_experts_per_tok\": 2, "
               "\"n_routed_experts\": 4, \"moe_intermediate_size\": 32, "
               "\"intermediate_size\": 128, \"qk_nope_head_dim\": 16, "
               "\"qk_rope_head_dim\": 8, \"v_head_dim\": 16}",
               STRATA_EBADINPUT, "'kv_lora_rank' is missing");
  expect_error("{\"model_type\": \"qwen2_moe\", \"hidden_size\": 64, "
               "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
               "\"vocab_size\": 100, \"num_experts_per_tok\": 2, "
               "\"num_experts\": 4, \"moe_intermediate_size\": 32, "
               "\"decoder_sparse_step\": 2}",
               STRATA_EBADINPUT,
               "'decoder_sparse_step' (model_type qwen2_moe)");
  expect_error("{\"model_type\": \"qwen3_moe\", \"hidden_size\": 64, "
               "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
               "\"vocab_size\": 100, \"num_experts_per_tok\": 2, "
               "\"num_experts\": 4, \"moe_intermediate_size\": 32, "
               "\"mlp_only_layers\": [1]}",
               STRATA_EBADINPUT, "'mlp_only_layers' (model_type qwen3_moe)");
  expect_error("{\"model_type\": \"gpt_oss\", \"hidden_size\": 64, "
               "\"num_hidden_layers\": 3, \"num_attention_heads\": 4, "
               "\"vocab_size\": 100, \"num_experts_per_tok\": 2, "
               "\"num_local_experts\": 4, \"intermediate_size\": 32, "
               "\"sliding_window\": 8, \"layer_types\": "
               "[\"full_attention\", \"sliding_attention\", "
               "\"sliding_attention\"]}",
               STRATA_EBADINPUT, "'layer_types' (model_type gpt_oss)");
  expect_error("{\"model_type\": \"mixtral\", \"hidden_size\": 64, "
               "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
               "\"vocab_size\": 100, \"num_experts_per_tok\": 2, "
               "\"num_local_experts\": 4, \"intermediate_size\": 32, "
               "\"shared_expert_intermediate_size\": 32}",
               STRATA_EBADINPUT, "'shared_expert_intermediate_size'");
  expect_error("{\"model_type\": \"rwkv\"}", STRATA_EUNSUPPORTED,
               "model_type 'rwkv' is not one this importer reads");
  expect_error("{\"model_type\": \"llama\", \"hidden_size\": 64, "
               "\"num_attention_heads\": 4, \"intermediate_size\": 128, "
               "\"vocab_size\": 100}",
               STRATA_EBADINPUT, "'num_hidden_layers' is missing");
  expect_error("{\"model_type\": \"llama\", \"hidden_size\": \"64\"}",
               STRATA_EBADINPUT, "'hidden_size' (model_type llama) must be");
  expect_error("{\"model_type\": \"llama\", \"hidden_size\": 64, "
               "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
               "\"intermediate_size\": 128, \"vocab_size\": 100, "
               "\"num_experts\": 4}",
               STRATA_EBADINPUT, "'num_experts' (model_type llama) is not");
  expect_error("{\"model_type\": \"bert\", \"hidden_size\": 64, "
               "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
               "\"intermediate_size\": 128, \"vocab_size\": 100, "
               "\"max_position_embeddings\": 64, "
               "\"position_embedding_type\": \"relative_key\"}",
               STRATA_EBADINPUT, "'position_embedding_type'");
  expect_error("{\"model_type\": \"gpt2\", \"n_embd\": 64, \"n_layer\": 2, "
               "\"n_head\": 4, \"vocab_size\": 100, \"n_positions\": 64, "
               "\"activation_function\": \"mish\"}",
               STRATA_EBADINPUT, "'activation_function'");
  expect_error("[1, 2]", STRATA_EBADINPUT, "a config is a JSON object");
}

/* The model's name, from _name_or_path or the file's path, is a name as
 * st__name_check takes it; strings from the config are cut in messages;
 * a key given twice is refused (transformers keeps the last value). */
TEST(names_and_messages) {
  const char *llama = "{\"model_type\": \"llama\", \"hidden_size\": 64, "
                      "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                      "\"intermediate_size\": 128, \"vocab_size\": 100%s}";
  char text[12000];
  snprintf(text, sizeof text, llama,
           ", \"_name_or_path\": \"x\\\"\\\"\\\"\\nimport os\"");
  expect_error(text, STRATA_EBADINPUT,
               "c.json: '_name_or_path' holds a control character (U+000A");
  strata_graph_t *g = NULL;
  snprintf(text, sizeof text, llama, ", \"_name_or_path\": \"meta/llama\"");
  ASSERT_OK(strata_hf_parse(text, strlen(text), "c.json", NULL, &g));
  ASSERT_STR_EQ(g->name, "meta/llama");
  strata_graph_destroy(g);
  snprintf(text, sizeof text, llama, "");
  ASSERT_EQ(
      strata_hf_parse(text, strlen(text), "m\x1b[2J/config.json", NULL, &g),
      STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(),
                  "the model's name (the folder's name) holds a control");
  ASSERT_OK(strata_hf_parse(text, strlen(text), "hub/tiny-llama/config.json",
                            NULL, &g));
  ASSERT_STR_EQ(g->name, "tiny-llama");
  strata_graph_destroy(g);
  /* a 10 KB model_type is not echoed in full */
  char type[10001];
  memset(type, 'q', sizeof type - 1);
  type[sizeof type - 1] = '\0';
  snprintf(text, sizeof text, "{\"model_type\": \"%s\"}", type);
  expect_error(text, STRATA_EUNSUPPORTED, "model_type 'qqqq");
  ASSERT(strlen(strata_last_error()) < 1000);
  snprintf(text, sizeof text, llama, ", \"hidden_size\": 128");
  expect_error(text, STRATA_EBADINPUT,
               "c.json: 'hidden_size' is given twice (line 1, column");
  /* which size is out of range */
  snprintf(text, sizeof text, llama, ", \"head_dim\": 8388608");
  expect_error(text, STRATA_EBADINPUT,
               "model sizes are out of range: heads 4 x head size 8388608");
}

/* The variants an exporter states reach the model's facts: Gemma's head
 * size, Qwen3's q/k norms and rotary base, Phi-3's window. */
TEST(config_variants_in_the_model_facts) {
  strata_graph_t *g = import("gemma-7b.json", 1, 64);
  ASSERT_EQ(g->hp.head_dim, 256);
  strata_graph_destroy(g);
  g = import("qwen3-8b.json", 1, 64);
  ASSERT_EQ(g->hp.qk_norm, 1);
  ASSERT(g->hp.rope_theta == 1e6);
  ASSERT_EQ(g->hp.head_dim, 0); /* 128 = 4096 / 32 */
  strata_graph_destroy(g);
  g = import("phi-3-mini.json", 1, 4096);
  ASSERT_EQ(g->hp.window, 2047);
  ASSERT_EQ(g->hp.window_every, 0);
  strata_graph_destroy(g);
}

/* A mixture of experts' config builds the same graph as its preset (the
 * generator's MoE layers): parameters, FLOPs and saved bytes alike. */
TEST(moe_configs_are_their_presets) {
  static const char *pairs[][2] = {{"mixtral-8x7b.json", "mixtral-8x7b"},
                                   {"deepseek-v3.json", "deepseek-v3"},
                                   {"qwen3-235b-a22b.json", "qwen3-235b-a22b"},
                                   {"qwen3-30b-a3b.json", "qwen3-30b-a3b"},
                                   {"gpt-oss-120b.json", "gpt-oss-120b"}};
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
    strata_graph_t *g = import(pairs[i][0], 0, 0), *p = NULL;
    strata_gen_opts_t o;
    ASSERT_OK(strata_preset_opts(pairs[i][1], &o));
    ASSERT_OK(strata_generate(&o, pairs[i][1], &p));
    strata_graph_stats_t a, b;
    strata_graph_stats(g, &a);
    strata_graph_stats(p, &b);
    printf("  %-24s %.3f B total, %.3f B active, as %s\n", pairs[i][0],
           a.parameters / 1e9, a.active_parameters / 1e9, pairs[i][1]);
    ASSERT_EQ(a.parameters, b.parameters);
    ASSERT_EQ(a.active_parameters, b.active_parameters);
    ASSERT_NEAR(a.flops_per_microbatch, b.flops_per_microbatch, 1e-15, 0);
    ASSERT_NEAR(a.activation_bytes, b.activation_bytes, 1e-15, 0);
    ASSERT_EQ(g->n_ops, p->n_ops);
    ASSERT_EQ(g->hp.experts, p->hp.experts);
    ASSERT_EQ(g->hp.kv_lora, p->hp.kv_lora);
    ASSERT(g->hp.rope_theta == p->hp.rope_theta);
    ASSERT_EQ(g->hp.router_groups, p->hp.router_groups);
    ASSERT_EQ(g->hp.router_group_topk, p->hp.router_group_topk);
    ASSERT(g->hp.router_topk_scale == p->hp.router_topk_scale);
    /* the router's training and the trained context, as exported */
    ASSERT(g->hp.router_aux_loss == p->hp.router_aux_loss);
    ASSERT(g->hp.router_aux_loss > 0);
    ASSERT_EQ(g->hp.router_seq_aux, p->hp.router_seq_aux);
    ASSERT_EQ(g->hp.router_pre_softmax, p->hp.router_pre_softmax);
    ASSERT_EQ(g->hp.router_expert_bias, p->hp.router_expert_bias);
    ASSERT_EQ(g->hp.max_positions, p->hp.max_positions);
    ASSERT(g->hp.max_positions > p->seq_len);
    strata_graph_destroy(p);
    strata_graph_destroy(g);
  }
}

/* The Llama 3 presets are Meta's configs: Meta-Llama-3-8B's config.json
 * at its 8192 tokens builds the same graph as llama3-8b (parameters,
 * FLOPs, saved bytes and the RoPE base). */
TEST(llama3_preset_is_its_config) {
  strata_graph_t *g = import("llama-3-8b.json", 0, 8192), *p = NULL;
  strata_gen_opts_t o;
  ASSERT_OK(strata_preset_opts("llama3-8b", &o));
  ASSERT_OK(strata_generate(&o, "llama3-8b", &p));
  strata_graph_stats_t a, b;
  strata_graph_stats(g, &a);
  strata_graph_stats(p, &b);
  ASSERT_EQ(a.parameters, b.parameters);
  ASSERT_NEAR(a.flops_per_microbatch, b.flops_per_microbatch, 1e-15, 0);
  ASSERT_NEAR(a.activation_bytes, b.activation_bytes, 1e-15, 0);
  ASSERT_EQ(g->seq_len, p->seq_len);
  ASSERT(g->hp.rope_theta == 500000 && p->hp.rope_theta == 500000);
  ASSERT_EQ(g->hp.max_positions, 8192);
  ASSERT_EQ(p->hp.max_positions, 8192);
  strata_graph_destroy(p);
  strata_graph_destroy(g);
}

/* llama3-405b is Llama 3.1 405B: the RoPE base, scaling and context of
 * Llama 3.1's config.json (the 8B's here: the family's, 131,072
 * positions, llama3 scaling x8 from 8192), where it had none. */
TEST(llama31_preset_has_its_rope) {
  strata_graph_t *g = import("llama-3.1-8b.json", 0, 8192), *p = NULL;
  strata_gen_opts_t o;
  ASSERT_OK(strata_preset_opts("llama3-405b", &o));
  o.layers = 2; /* the settings, not the size */
  ASSERT_OK(strata_generate(&o, "llama3-405b", &p));
  const strata_rope_scaling_t *a = &g->hp.rope_scaling,
                              *b = &p->hp.rope_scaling;
  ASSERT_EQ(b->type, STRATA_ROPE_SCALING_LLAMA3);
  ASSERT_EQ(a->type, b->type);
  ASSERT(a->factor == b->factor && a->low == b->low && a->high == b->high);
  ASSERT_EQ(a->original, b->original);
  ASSERT(g->hp.rope_theta == p->hp.rope_theta);
  ASSERT_EQ(p->hp.max_positions, 131072);
  ASSERT_EQ(g->hp.max_positions, p->hp.max_positions);
  strata_graph_destroy(p);
  strata_graph_destroy(g);
}

/* Every imported model re-batches (FLOPs scale with the batch) and has
 * strategies on 8 devices; a small slice of each keeps this fast. */
TEST(every_config_rebatches_and_solves) {
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    strata_graph_t *g = import(counts[i].file, 1, 128), *r = NULL;
    strata_graph_stats_t a, b;
    ASSERT_OK(strata_graph_rebatch(g, 4, &r));
    strata_graph_stats(g, &a);
    strata_graph_stats(r, &b);
    ASSERT_EQ(b.parameters, a.parameters);
    ASSERT_NEAR(b.flops_per_microbatch, 4 * a.flops_per_microbatch, 1e-9, 0);
    strata_stage_opts_t o;
    strata_stage_result_t *res = NULL;
    strata_stage_opts_init(&o);
    strata_mesh_default(&o.mesh, 8, 1);
    ASSERT_OK(strata_stage_solve(r, &o, &res));
    printf("  %-24s b=4 on 8 devices: %s, peak %.2f GiB\n", counts[i].file,
           strata_stage_status_name(res->status),
           res->peak_memory_bytes / 1073741824.0);
    ASSERT(res->status == STRATA_STAGE_OPTIMAL ||
           res->status == STRATA_STAGE_FEASIBLE);
    strata_stage_result_destroy(res);
    strata_graph_destroy(r);
    strata_graph_destroy(g);
  }
}

/* Model g planned on one DGX H100, the plan written and read back (format
 * 11 keeps the model facts compared), exported for Megatron-LM or
 * torchtitan (torchtitan 1); g is destroyed. */
static char *planned_export(strata_graph_t *g, int torchtitan, int *rc) {
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL, *back = NULL;
  strata_plan_opts_t o;
  char *t = NULL;
  unsigned char *bytes = NULL;
  size_t n = 0;
  strata_plan_opts_init(&o);
  o.quiet = 1;
  o.global_batch = 64;
  ASSERT_OK(strata_cluster_load("dgx-h100:1", &c));
  ASSERT_OK(strata_pipeline_plan(g, c, &o, &p));
  ASSERT_OK(strata_merge_stitch(p, g, c));
  ASSERT_OK(strata_plan_encode(p, &bytes, &n));
  ASSERT_OK(strata_plan_decode(bytes, n, "p.splan", &back));
  ASSERT_EQ(back->mlp_bias, p->mlp_bias);
  ASSERT_EQ(back->window_from, p->window_from);
  ASSERT_EQ(back->attn_chunk, p->attn_chunk);
  ASSERT_EQ(back->attn_sinks, p->attn_sinks);
  ASSERT(back->glu_limit == p->glu_limit);
  ASSERT(back->norm_eps == p->norm_eps);
  ASSERT(back->init_std == p->init_std);
  *rc = torchtitan ? strata_export_titan(back, &t)
                   : strata_export_megatron(back, &t);
  strata_free(bytes);
  strata_plan_destroy(back);
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return t;
}

/* Configs built as a LLaMA export to Megatron-LM's GPT script with the
 * LLaMA flags and their own variants; what Megatron-LM has no flag for is
 * refused, naming the family. */
static char *export_layers(const char *file, int layers, int *rc) {
  return planned_export(import(file, layers, 1024), 0, rc);
}

static char *export_of(const char *file, int *rc) {
  return export_layers(file, 4, rc);
}

TEST(llama_like_configs_export_to_megatron) {
  static const struct {
    const char *file, *flags[3];
  } cases[] = {
      {"mistral-7b.json", {"--swiglu", "--num-query-groups 8", NULL}},
      {"qwen2.5-7b.json", {"--swiglu", "--add-qkv-bias", NULL}},
      {"qwen3-8b.json", {"--swiglu", "--qk-layernorm", "--num-query-groups 8"}},
      {"phi-3-mini.json", {"--swiglu", "--normalization RMSNorm", NULL}},
      {"glm-4.5-air.json",
       {"--rotary-percent 0.5", "--add-qkv-bias", "--mtp-num-layers 1"}},
      {"llama-4-maverick.json",
       {"--moe-layer-freq \"([0]*0+([0]*1+[1])*2+[0]*0)\"",
        "--moe-router-score-function sigmoid", "--no-rope-freq 4"}},
      {"llama-4-scout.json", {"--qk-l2-norm", "--moe-router-topk 1", NULL}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int rc;
    char *t = export_of(cases[i].file, &rc);
    ASSERT_OK(rc);
    ASSERT_CONTAINS(t, "--position-embedding-type rope");
    for (int k = 0; k < 3 && cases[i].flags[k]; k++)
      ASSERT_CONTAINS(t, cases[i].flags[k]);
    strata_free(t);
  }
  int rc;
  char *t = export_of("gemma-7b.json", &rc);
  ASSERT_EQ(rc, STRATA_EUNSUPPORTED);
  ASSERT(t == NULL);
  ASSERT_CONTAINS(strata_last_error(), "family 'gemma'");
  strata_error_clear();
}

/* What the router does beyond top-k reaches Megatron-LM: DeepSeek-V3's
 * groups (8, a token's experts from its 4 best) and scaling (2.5); one
 * group (GLM-4.5) is no limit, a scaling of 1 (GLM-4.5-Air) none. */
TEST(router_groups_and_scaling) {
  static const struct {
    const char *file;
    int groups, top;
    double scale;
  } cases[] = {{"deepseek-v3.json", 8, 4, 2.5},
               {"glm-4.5.json", 0, 0, 2.5},
               {"glm-4.5-air.json", 0, 0, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    strata_graph_t *g = import(cases[i].file, 1, 64);
    ASSERT_EQ(g->hp.router_groups, cases[i].groups);
    ASSERT_EQ(g->hp.router_group_topk, cases[i].top);
    ASSERT(g->hp.router_topk_scale == cases[i].scale);
    strata_graph_destroy(g);
  }
  int rc;
  char *t = export_of("deepseek-v3.json", &rc);
  ASSERT_OK(rc);
  ASSERT_CONTAINS(t, "--moe-router-num-groups 8");
  ASSERT_CONTAINS(t, "--moe-router-group-topk 4");
  ASSERT_CONTAINS(t, "--moe-router-topk-scaling-factor 2.5");
  strata_free(t);
  t = export_of("glm-4.5-air.json", &rc);
  ASSERT_OK(rc);
  ASSERT(!strstr(t, "--moe-router-num-groups"));
  ASSERT(!strstr(t, "--moe-router-topk-scaling-factor"));
  strata_free(t);
}

/* rope_scaling reaches the model as the config gives it, of each type
 * (Llama 3.1's llama3, Gemma 3's linear on its full layers, DeepSeek-V3's
 * and gpt-oss's yarn), and a trace written of it reads it back. */
TEST(rope_scaling_in_the_model) {
  strata_graph_t *g = import("llama-3.1-8b.json", 2, 1024);
  const strata_rope_scaling_t *r = &g->hp.rope_scaling;
  ASSERT_EQ(r->type, STRATA_ROPE_SCALING_LLAMA3);
  ASSERT(r->factor == 8 && r->low == 1 && r->high == 4);
  ASSERT_EQ(r->original, 8192);
  ASSERT_EQ(g->hp.max_positions, 131072);
  char *text = NULL;
  size_t len = 0;
  strata_graph_t *back = NULL;
  ASSERT_OK(strata_trace_write(g, &text, &len));
  ASSERT_OK(strata_trace_parse(text, len, "t.json", &back));
  ASSERT(!memcmp(&back->hp.rope_scaling, r, sizeof *r));
  strata_free(text);
  strata_graph_destroy(back);
  strata_graph_destroy(g);
  g = import("gemma-3-27b.json", 6, 1024);
  ASSERT_EQ(g->hp.rope_scaling.type, STRATA_ROPE_SCALING_LINEAR);
  ASSERT(g->hp.rope_scaling.factor == 8 && g->hp.rope_scaling.full_only);
  strata_graph_destroy(g);
  g = import("deepseek-v3.json", 4, 1024);
  r = &g->hp.rope_scaling;
  ASSERT_EQ(r->type, STRATA_ROPE_SCALING_YARN);
  ASSERT(r->factor == 40 && r->low == 1 && r->high == 32 && r->mscale == 1 &&
         r->mscale_all == 1 && !r->unrounded);
  ASSERT_EQ(r->original, 4096);
  strata_graph_destroy(g);
  g = import("gpt-oss-120b.json", 2, 1024);
  ASSERT(g->hp.rope_scaling.type == STRATA_ROPE_SCALING_YARN &&
         g->hp.rope_scaling.unrounded);
  strata_graph_destroy(g);
  g = import("llama-3-8b.json", 2, 1024); /* "rope_scaling": null */
  ASSERT_EQ(g->hp.rope_scaling.type, STRATA_ROPE_SCALING_NONE);
  strata_graph_destroy(g);
}

/* The exports of each scaling, as planned (pipeline/plan.c copies the
 * graph's into the plan): Megatron-LM's flags, or its refusal with the
 * reason. */
static char *scaled_export(const char *file, int layers, int *rc) {
  return export_layers(file, layers, rc);
}

TEST(rope_scaling_exports_or_is_refused) {
  int rc;
  char *t = scaled_export("llama-3.1-8b.json", 2, &rc);
  ASSERT_OK(rc);
  ASSERT_CONTAINS(t, "--rotary-base 500000");
  ASSERT_CONTAINS(t, "--use-rope-scaling");
  ASSERT_CONTAINS(t, "--rope-scaling-factor 8");
  strata_free(t);
  t = scaled_export("deepseek-v3.json", 4, &rc);
  ASSERT_OK(rc);
  ASSERT_CONTAINS(t, "--rope-type yarn \\\n--rotary-scaling-factor 40");
  ASSERT_CONTAINS(t, "--yarn-original-max-position-embeddings 4096");
  ASSERT_CONTAINS(t, "--mscale 1 \\\n--mscale-all-dim 1");
  strata_free(t);
  /* YaRN on attention that is not latent: --position-embedding-type yarn
   * with the same factors (argument_utils.py) */
  t = scaled_export("gpt-oss-120b.json", 2, &rc);
  ASSERT_OK(rc);
  ASSERT_CONTAINS(t, "--position-embedding-type yarn");
  ASSERT_CONTAINS(t, "--rotary-scaling-factor 32");
  ASSERT_CONTAINS(t, "--no-yarn-correction-range-round-to-int");
  ASSERT(!strstr(t, "--rope-type"));
  strata_free(t);
  t = scaled_export("llama-4-scout.json", 4, &rc);
  ASSERT_OK(rc);
  ASSERT_CONTAINS(t, "--use-rope-scaling");
  strata_free(t);
  strata_error_clear();
}

/* GLM-4.5's config: q, k, v biases but none on the output projection,
 * RoPE on half of each 128-dim head (split, rotate, concatenate back), one
 * shared expert next to the routed ones, q/k norms only in GLM-4.5 (not
 * Air), one multi-token prediction module. */
TEST(glm4_moe_config) {
  strata_graph_t *g = import("glm-4.5-air.json", 2, 256);
  ASSERT(strata_graph_find_tensor(g, "L1.qkv.bias") >= 0);
  ASSERT(strata_graph_find_tensor(g, "L1.proj.bias") < 0);
  int s = strata_graph_find_op(g, "L1.rope_q_split");
  ASSERT(s >= 0);
  ASSERT_EQ(g->tensors[g->ops[s].out[0]].shape[3], 64);
  ASSERT_EQ(g->tensors[g->ops[s].out[1]].shape[3], 64);
  ASSERT(strata_graph_find_op(g, "L1.rope_q_cat") >= 0);
  ASSERT(strata_graph_find_op(g, "L1.q_norm") < 0);
  ASSERT_NEAR(g->hp.rotary_percent, 0.5, 1e-12, 0);
  ASSERT_EQ(g->hp.mtp_layers, 1);
  ASSERT_EQ(g->hp.shared_ffn, 1408);
  ASSERT_EQ(g->hp.first_dense, 1);
  strata_graph_destroy(g);
  g = import("glm-4.5.json", 4, 256);
  ASSERT(strata_graph_find_op(g, "L3.q_norm") >= 0);
  ASSERT_EQ(g->hp.first_dense, 3);
  strata_graph_destroy(g);
}

/* Llama 4: Maverick's experts on every other layer (the first at layer
 * 1), Scout's on every layer with q/k L2 norms; both without RoPE every
 * fourth layer, sigmoid router scores, the vision encoder not built; a
 * moe_layers or no_rope_layers list that disagrees with its interval, a
 * missing text_config, a tied head are refused. */
TEST(llama4_configs) {
  strata_graph_t *g = import("llama-4-maverick.json", 0, 256);
  strata_moe_info_t m;
  strata_graph_moe(g, &m);
  ASSERT_EQ(m.moe_layers, 24);
  ASSERT_EQ(m.first_moe, 1);
  ASSERT_EQ(m.experts, 128);
  ASSERT_EQ(m.topk, 1);
  ASSERT_EQ(g->hp.moe_every, 2);
  ASSERT_EQ(g->hp.nope_every, 4);
  ASSERT_EQ(g->hp.router_sigmoid, 1);
  ASSERT_EQ(g->hp.qk_norm, 0);
  ASSERT_EQ(g->hp.ffn, 16384); /* the dense layers' MLP */
  ASSERT_EQ(g->hp.moe_ffn, 8192);
  ASSERT_EQ(g->hp.shared_ffn, 8192);
  strata_graph_destroy(g);
  g = import("llama-4-scout.json", 0, 256);
  strata_graph_moe(g, &m);
  ASSERT_EQ(m.moe_layers, 48);
  ASSERT_EQ(g->hp.qk_norm, 2);
  ASSERT_EQ(g->n_blocks, 1);
  strata_graph_destroy(g);
  static const struct {
    const char *text, *why;
  } bad[] = {
      {"{\"model_type\": \"llama4\"}", "needs its text_config"},
      {"{\"model_type\": \"llama4\", \"tie_word_embeddings\": true, "
       "\"text_config\": {}}",
       "tie_word_embeddings"},
      {"{\"model_type\": \"llama4\", \"text_config\": {\"model_type\": "
       "\"llama4_text\", \"hidden_size\": 64, \"num_hidden_layers\": 4, "
       "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
       "\"vocab_size\": 100, \"num_local_experts\": 4, "
       "\"num_experts_per_tok\": 1, \"intermediate_size\": 32, "
       "\"interleave_moe_layer_step\": 2, \"moe_layers\": [0, 2]}}",
       "moe_layers"},
      {"{\"model_type\": \"llama4\", \"text_config\": {\"model_type\": "
       "\"llama4_text\", \"hidden_size\": 64, \"num_hidden_layers\": 4, "
       "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
       "\"vocab_size\": 100, \"num_local_experts\": 4, "
       "\"num_experts_per_tok\": 1, \"intermediate_size\": 32, "
       "\"no_rope_layers\": [1, 0, 1, 0]}}",
       "no_rope_layers"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    strata_graph_t *x = NULL;
    ASSERT_EQ(
        strata_hf_parse(bad[i].text, strlen(bad[i].text), "l4.json", NULL, &x),
        STRATA_EBADINPUT);
    ASSERT_CONTAINS(strata_last_error(), bad[i].why);
  }
  /* an interval of 0 (no NoPE layer) with its list: read, not divided by */
  const char *none =
      "{\"model_type\": \"llama4\", \"text_config\": {\"model_type\": "
      "\"llama4_text\", \"hidden_size\": 64, \"num_hidden_layers\": 4, "
      "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
      "\"vocab_size\": 100, \"num_local_experts\": 4, "
      "\"num_experts_per_tok\": 1, \"intermediate_size\": 32, "
      "\"no_rope_layer_interval\": 0, \"no_rope_layers\": [1, 1, 1, 1]}}";
  strata_graph_t *x = NULL;
  ASSERT_OK(strata_hf_parse(none, strlen(none), "l4.json", NULL, &x));
  ASSERT_EQ(x->hp.nope_every, 0);
  strata_graph_destroy(x);
}

/* A config's text at seq tokens, as planned_export plans and exports it. */
static char *export_text(const char *json, int seq, int torchtitan, int *rc) {
  strata_gen_opts_t ov;
  strata_graph_t *g = NULL;
  strata_gen_opts_keep(&ov);
  ov.seq = seq;
  ASSERT_OK(strata_hf_parse(json, strlen(json), "c.json", &ov, &g));
  return planned_export(g, torchtitan, rc);
}

#define SMALL_LLAMA(extra)                                                     \
  "{\"model_type\": \"llama\", \"hidden_size\": 256, "                         \
  "\"num_hidden_layers\": 8, \"num_attention_heads\": 4, "                     \
  "\"num_key_value_heads\": 2, \"intermediate_size\": 512, "                   \
  "\"vocab_size\": 1000, \"max_position_embeddings\": 4096" extra "}"

/* Each field of a config that changes the model reaches the export that
 * can say it, or the export is refused with the reason: the MLP's
 * biases (Megatron-LM's are all, none or q/k/v's), Qwen2's window from
 * max_window_layers on, Llama 4's chunked attention, gpt-oss's sinks and
 * clamped GLU. */
TEST(model_fields_reach_the_exports_or_are_refused) {
  int rc;
  char *t = export_text(SMALL_LLAMA(", \"mlp_bias\": true"), 1024, 0, &rc);
  ASSERT_EQ(rc, STRATA_EUNSUPPORTED);
  ASSERT(t == NULL);
  ASSERT_CONTAINS(strata_last_error(),
                  "biases on its MLPs but not on the attention output");
  t = export_text(SMALL_LLAMA(", \"attention_bias\": true"), 1024, 0, &rc);
  ASSERT_EQ(rc, STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(),
                  "biases on its attention output but not on its MLPs");
  t = export_text(SMALL_LLAMA(", \"attention_bias\": true, \"mlp_bias\": true"),
                  1024, 0, &rc);
  ASSERT_OK(rc);
  ASSERT(!strstr(t, "--disable-bias-linear")); /* every linear's */
  strata_free(t);
  t = export_text(SMALL_LLAMA(""), 1024, 0, &rc);
  ASSERT_OK(rc);
  ASSERT_CONTAINS(t, "--disable-bias-linear");
  ASSERT(!strstr(t, "--norm-epsilon")); /* not given: Megatron-LM's 1e-5 */
  strata_free(t);
  /* the norms' epsilon: Megatron-LM's --norm-epsilon; torchtitan's llama3
   * normalises with 1e-5 alone */
  t = export_text(SMALL_LLAMA(", \"rms_norm_eps\": 1e-06"), 1024, 0, &rc);
  ASSERT_OK(rc);
  ASSERT_CONTAINS(t, "--norm-epsilon 1e-06");
  ASSERT(!strstr(t, "--init-method-std")); /* not given */
  strata_free(t);
  /* initializer_range (Megatron-LM's default 0.02) */
  t = export_text(SMALL_LLAMA(", \"initializer_range\": 0.006"), 1024, 0, &rc);
  ASSERT_OK(rc);
  ASSERT_CONTAINS(t, "--init-method-std 0.006");
  strata_free(t);
  t = export_text(SMALL_LLAMA(", \"rms_norm_eps\": 1e-06"), 1024, 1, &rc);
  ASSERT_EQ(rc, STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "epsilon 1e-06");
  t = export_text(SMALL_LLAMA(", \"rms_norm_eps\": 1e-05"), 1024, 1, &rc);
  ASSERT(!strstr(strata_last_error(), "epsilon")); /* its flavor's */
  strata_free(t);
  t = export_text(SMALL_LLAMA(", \"mlp_bias\": true"), 1024, 1, &rc);
  ASSERT_EQ(rc, STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "MLP biases");

  /* Qwen2: full attention on layers 0-2, the window of 256 from 3 on */
  static const char qwen2[] =
      "{\"model_type\": \"qwen2\", \"hidden_size\": 256, "
      "\"num_hidden_layers\": 8, \"num_attention_heads\": 4, "
      "\"num_key_value_heads\": 2, \"intermediate_size\": 512, "
      "\"vocab_size\": 1000, \"max_position_embeddings\": 4096, "
      "\"use_sliding_window\": true, \"sliding_window\": 256, "
      "\"max_window_layers\": 3}";
  t = export_text(qwen2, 1024, 0, &rc);
  ASSERT_OK(rc);
  ASSERT_CONTAINS(t, "--window-size \"(255,0)\" \\\n"
                     "--window-attn-skip-freq \"[0]*3+[1]*5\"");
  strata_free(t);
  /* Qwen 3 reads the window the same way; torchtitan's qwen3 has none */
  char qwen3[sizeof qwen2 + 1];
  snprintf(qwen3, sizeof qwen3, "{\"model_type\": \"qwen3\"%s",
           strchr(qwen2, ','));
  t = export_text(qwen3, 1024, 1, &rc);
  ASSERT_EQ(rc, STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "sliding windows");
  strata_graph_t *g = NULL;
  ASSERT_OK(strata_hf_parse(qwen2, strlen(qwen2), "q.json", NULL, &g));
  ASSERT_EQ(g->hp.window, 256);
  ASSERT_EQ(g->hp.window_from, 3);
  char *text = NULL;
  size_t len = 0;
  strata_graph_t *back = NULL;
  ASSERT_OK(strata_trace_write(g, &text, &len));
  ASSERT_OK(strata_trace_parse(text, len, "t.json", &back));
  ASSERT_EQ(back->hp.window_from, 3);
  strata_free(text);
  strata_graph_destroy(back);
  strata_graph_destroy(g);

  /* Llama 4's chunks of 8192: causal attention up to one chunk */
  g = import("llama-4-scout.json", 4, 1024);
  ASSERT_EQ(g->hp.attn_chunk, 8192);
  strata_graph_destroy(g);
  t = export_layers("llama-4-scout.json", 4, &rc);
  ASSERT_OK(rc);
  strata_free(t);

  /* gpt-oss: the sinks and the clamped GLU, from its config */
  g = import("gpt-oss-120b.json", 2, 1024);
  ASSERT_EQ(g->hp.attn_sinks, 1);
  ASSERT(g->hp.glu_limit == 7);
  ASSERT_OK(strata_trace_write(g, &text, &len));
  ASSERT_OK(strata_trace_parse(text, len, "t.json", &back));
  ASSERT(back->hp.attn_sinks == 1 && back->hp.glu_limit == 7);
  strata_free(text);
  strata_graph_destroy(back);
  strata_graph_destroy(g);
  t = export_layers("gpt-oss-120b.json", 2, &rc);
  ASSERT_OK(rc);
  ASSERT_CONTAINS(t, "--softmax-type learnable");
  ASSERT_CONTAINS(t, "--quick-geglu");
  ASSERT_CONTAINS(t, "--activation-func-clamp-value 7");
  ASSERT(!strstr(t, "--swiglu"));
  strata_free(t);
  strata_error_clear();
}

/* Above one chunk, Llama 4's attention is not Megatron-LM's. */
TEST(chunked_attention_refused_above_a_chunk) {
  strata_gen_opts_t ov;
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_t o;
  char *t = NULL;
  strata_gen_opts_keep(&ov);
  ov.layers = 2;
  ov.seq = 16384;
  ASSERT_OK(strata_hf_load(path_of("llama-4-scout.json"), &ov, &g));
  strata_plan_opts_init(&o);
  o.quiet = 1;
  o.global_batch = 64;
  ASSERT_OK(strata_cluster_load("dgx-h100:1", &c));
  ASSERT_OK(strata_pipeline_plan(g, c, &o, &p));
  ASSERT_OK(strata_merge_stitch(p, g, c));
  ASSERT_EQ(strata_export_megatron(p, &t), STRATA_EUNSUPPORTED);
  ASSERT(t == NULL);
  ASSERT_CONTAINS(strata_last_error(), "chunks of 8192 tokens");
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  strata_error_clear();
}

static const test_entry_t tests[] = {
    TEST_ENTRY(published_parameter_counts),
    TEST_ENTRY(mtp_module_from_config),
    TEST_ENTRY(llama_like_configs_export_to_megatron),
    TEST_ENTRY(gemma_non_embedding_exact),
    TEST_ENTRY(sliding_window_flops),
    TEST_ENTRY(gemma2_alternating_layers),
    TEST_ENTRY(gemma3_configs),
    TEST_ENTRY(cohere2_layers),
    TEST_ENTRY(bloom_opt_falcon_layers),
    TEST_ENTRY(window_patterns_and_dtype),
    TEST_ENTRY(family_variants),
    TEST_ENTRY(t5_encoder_decoder),
    TEST_ENTRY(refused_configs),
    TEST_ENTRY(moe_configs_are_their_presets),
    TEST_ENTRY(llama3_preset_is_its_config),
    TEST_ENTRY(llama31_preset_has_its_rope),
    TEST_ENTRY(router_groups_and_scaling),
    TEST_ENTRY(rope_scaling_in_the_model),
    TEST_ENTRY(rope_scaling_exports_or_is_refused),
    TEST_ENTRY(glm4_moe_config),
    TEST_ENTRY(llama4_configs),
    TEST_ENTRY(names_and_messages),
    TEST_ENTRY(config_variants_in_the_model_facts),
    TEST_ENTRY(every_config_rebatches_and_solves),
    TEST_ENTRY(model_fields_reach_the_exports_or_are_refused),
    TEST_ENTRY(chunked_attention_refused_above_a_chunk),
};
TEST_MAIN(tests)
