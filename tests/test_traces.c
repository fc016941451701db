/*
 * test_traces.c - the model IR against the published formulas (Megatron's
 * parameter and FLOP counts, Korthikanti's activation bytes, the LLaMA
 * parameter totals), every kind of malformed trace with its message, the
 * byte-exact round trip of every preset, and allocation failure injection
 * over parsing, writing and generation.
 */
#include <stdlib.h>

#include "strata/strata.h"
#include "testlib.h"

static int is_gpt_preset(const char *name) {
  strata_gen_opts_t o;
  return strata_preset_opts(name, &o) == 0 && o.family == STRATA_FAMILY_GPT;
}

static strata_graph_t *preset(const char *name) {
  strata_graph_t *g = NULL;
  ASSERT_OK(strata_model_load(name, NULL, &g));
  return g;
}

static strata_graph_t *tiny(strata_family_t f, int flash, int dropout) {
  strata_gen_opts_t o;
  strata_graph_t *g = NULL;
  strata_gen_opts_init(&o, f);
  o.layers = 2, o.hidden = 8, o.heads = 2, o.seq = 4, o.vocab = 16;
  o.kv_heads = f == STRATA_FAMILY_LLAMA ? 1 : 0;
  o.flash_attention = flash, o.dropout = dropout;
  ASSERT_OK(strata_generate(&o, "tiny", &g));
  return g;
}

TEST(kind_and_dtype_names) {
  strata_op_kind_t k;
  strata_dtype_t d;
  for (int i = 0; i < STRATA_OP_COUNT; i++) {
    ASSERT_OK(
        strata_op_kind_parse(strata_op_kind_name((strata_op_kind_t)i), &k));
    ASSERT_EQ(k, i);
  }
  ASSERT_EQ(strata_op_kind_parse("conv2d", &k), STRATA_ENOTFOUND);
  ASSERT_OK(strata_dtype_parse("bf16", &d));
  ASSERT_EQ(strata_dtype_size(d), 2);
  ASSERT_EQ(strata_dtype_parse("bf17", &d), STRATA_ENOTFOUND);
}

/* P = 12*l*h^2*(1 + 13/(12h) + (V+s)/(12*l*h)), Narayanan et al. 2021. */
TEST(gpt_parameters_match_megatron_formula) {
  for (const char *const *n = strata_preset_names(); *n; n++) {
    if (!is_gpt_preset(*n)) continue;
    strata_graph_t *g = preset(*n);
    strata_graph_stats_t st;
    strata_graph_stats(g, &st);
    double l = g->hp.layers, h = g->hp.hidden, V = g->hp.vocab, s = g->seq_len;
    double P = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
    printf("  %-12s params %15lld  formula %15.0f  ratio %.6f\n", *n,
           (long long)st.parameters, P, st.parameters / P);
    ASSERT_NEAR(st.parameters, P, 1e-3, 0);
    ASSERT_EQ(st.layers, g->hp.layers);
    strata_graph_destroy(g);
  }
}

TEST(llama_parameters_match_published) {
  strata_graph_t *g = preset("llama2-70b");
  strata_graph_stats_t st;
  strata_graph_stats(g, &st);
  printf("  llama2-70b  params %lld\n", (long long)st.parameters);
  ASSERT_EQ(st.parameters, 68976648192LL); /* Llama 2 70B, exactly */
  strata_graph_destroy(g);
  g = preset("llama3-405b");
  strata_graph_stats(g, &st);
  printf("  llama3-405b params %lld\n", (long long)st.parameters);
  ASSERT_NEAR(st.parameters, 405.85e9, 1e-2, 0);
  strata_graph_destroy(g);
}

TEST(bert_large_parameters) {
  strata_graph_t *g = preset("bert-large");
  strata_graph_stats_t st;
  strata_graph_stats(g, &st);
  /* 24 encoder layers (12h^2 + 13h), word/position/type embeddings and
   * their norm, the MLM head (dense, norm, decoder bias); no pooler. */
  double h = 1024, V = 30522;
  double want = 24 * (12 * h * h + 13 * h) + (V + 512 + 2) * h + 2 * h +
                (h * h + h) + 2 * h + V;
  ASSERT_EQ(st.parameters, (long long)want);
  strata_graph_destroy(g);
}

/* 72*b*s*l*h^2*(1 + s/(12h) + V/(12*l*h)): matmuls only, fwd + 2x bwd,
 * causal attention at half. */
TEST(gpt_flops_match_megatron_formula) {
  for (const char *const *n = strata_preset_names(); *n; n++) {
    if (!is_gpt_preset(*n)) continue;
    strata_graph_t *g = preset(*n);
    strata_graph_stats_t st;
    strata_graph_stats(g, &st);
    double l = g->hp.layers, h = g->hp.hidden, V = g->hp.vocab, s = g->seq_len;
    double b = g->micro_batch;
    /* Megatron-LM's formula with causal attention at half (its later
     * num_floating_point_operations: "only half of the attention matrix
     * is non-zero"): s / (12 h), not s / (6 h) */
    double F = 72 * b * s * l * h * h * (1 + s / (12 * h) + V / (12 * l * h));
    printf("  %-12s flops %.6e  formula %.6e  ratio %.5f\n", *n,
           st.flops_per_microbatch, F, st.flops_per_microbatch / F);
    ASSERT_NEAR(st.flops_per_microbatch, F, 1e-2, 0);
    ASSERT(st.flops_per_microbatch >= F); /* elementwise ops add, never take */
    strata_graph_destroy(g);
  }
}

static int64_t layer_bytes(const strata_graph_t *g) {
  ASSERT_EQ(g->n_blocks, 1);
  return strata_graph_saved_bytes(g, g->blocks[0].first_op, g->blocks[0].n_ops);
}

/* Korthikanti et al. 2022: s*b*h*(34 + 5*a*s/h) bytes per GPT layer with
 * dropout, 2-byte activations, no flash attention. */
TEST(gpt_layer_activations_korthikanti) {
  int batches[] = {1, 4};
  for (int i = 0; i < 2; i++) {
    strata_gen_opts_t o;
    ASSERT_OK(strata_preset_opts("gpt-1.7b", &o));
    o.flash_attention = 0; /* the 2021 layer the paper counts */
    o.micro_batch = batches[i];
    strata_graph_t *g = NULL;
    ASSERT_OK(strata_generate(&o, "g", &g));
    int64_t s = o.seq, b = o.micro_batch, h = o.hidden, a = o.heads;
    ASSERT_EQ(layer_bytes(g), s * b * h * 34 + 5 * a * s * s * b);
    strata_graph_stats_t st;
    strata_graph_stats(g, &st);
    ASSERT(st.activation_bytes > o.layers * layer_bytes(g));
    strata_graph_destroy(g);
  }
}

/* With flash attention the 5as^2b term is gone; what remains is 34sbh plus
 * the log-sum-exp (4 bytes per batch, head and query).  The flash output
 * and proj's input (a merge_heads view of it) are one storage. */
TEST(gpt_layer_activations_flash) {
  strata_gen_opts_t o;
  ASSERT_OK(strata_preset_opts("gpt-7.5b", &o));
  o.flash_attention = 1;
  o.micro_batch = 2;
  strata_graph_t *g = NULL;
  ASSERT_OK(strata_generate(&o, "g", &g));
  int64_t s = o.seq, b = o.micro_batch, h = o.hidden, a = o.heads;
  ASSERT_EQ(layer_bytes(g), 34 * s * b * h + 4 * b * a * s);
  ASSERT(strata_graph_find_op(g, "attn") >= 0);
  ASSERT(strata_graph_find_op(g, "scores") < 0);
  strata_graph_destroy(g);
}

/* Without dropout the two sbh masks and the as^2b mask go, and the softmax
 * output that softmax and the context matmul both save counts once. */
TEST(gpt_layer_activations_no_dropout) {
  strata_gen_opts_t o;
  ASSERT_OK(strata_preset_opts("gpt-1.7b", &o));
  o.dropout = 0, o.flash_attention = 0;
  strata_graph_t *g = NULL;
  ASSERT_OK(strata_generate(&o, "g", &g));
  int64_t s = o.seq, b = 1, h = o.hidden, a = o.heads;
  ASSERT_EQ(layer_bytes(g), 32 * s * b * h + 2 * a * s * s * b);
  ASSERT(strata_graph_find_op(g, "mlp_dropout") < 0);
  strata_graph_destroy(g);
}

/* GPT's layer with unfused attention (--no-flash-attention); fused, the
 * default, "attn" stands for kT .. context */
TEST(gpt_block_structure) {
  static const char *const names[] = {
      "ln1",          "qkv",     "split", "kT",   "scores",       "softmax",
      "attn_dropout", "context", "merge", "proj", "proj_dropout", "residual1",
      "ln2",          "fc1",     "gelu",  "fc2",  "mlp_dropout",  "residual2"};
  strata_graph_t *d = preset("gpt-1.7b");
  ASSERT_EQ(d->blocks[0].n_ops, 14);
  ASSERT(strata_graph_find_op(d, "attn") >= 0); /* fused by default */
  ASSERT(strata_graph_find_op(d, "scores") < 0);
  strata_graph_destroy(d);
  strata_gen_opts_t o;
  strata_graph_t *g = NULL;
  ASSERT_OK(strata_preset_opts("gpt-1.7b", &o));
  o.flash_attention = 0;
  ASSERT_OK(strata_generate(&o, "gpt-1.7b", &g));
  const strata_block_t *bl = &g->blocks[0];
  ASSERT_EQ(bl->n_ops, 18);
  ASSERT_EQ(bl->repeat, 24);
  for (int i = 0; i < 18; i++) {
    ASSERT_STR_EQ(g->ops[bl->first_op + i].name, names[i]);
    ASSERT_EQ(g->ops[bl->first_op + i].layer, 0);
  }
  ASSERT_STR_EQ(g->ops[0].name, "embed");
  ASSERT_EQ(g->ops[0].layer, -1);
  ASSERT_STR_EQ(g->ops[g->n_ops - 1].name, "loss");
  /* tied head: the head's weight is the embedding table */
  const strata_op_t *head = &g->ops[strata_graph_find_op(g, "head")];
  ASSERT_EQ(head->in[1], strata_graph_find_tensor(g, "embed.weight"));
  ASSERT_EQ(strata_graph_layer_block(g, 23), 0);
  ASSERT_EQ(strata_graph_layer_block(g, 24), -1);
  strata_graph_destroy(g);
}

TEST(llama_block_structure) {
  strata_graph_t *g = preset("llama2-70b");
  int split = strata_graph_find_op(g, "split");
  ASSERT(split >= 0);
  const strata_tensor_t *k = &g->tensors[g->ops[split].out[1]];
  ASSERT_EQ(k->shape[1], 8); /* kv heads */
  ASSERT_EQ(g->ops[split].kv_heads, 8);
  ASSERT(strata_graph_find_op(g, "rope_q") >= 0);
  ASSERT(strata_graph_find_op(g, "attn") >= 0); /* flash by default */
  ASSERT(strata_graph_find_tensor(g, "head.weight") >= 0); /* untied */
  ASSERT(strata_graph_find_tensor(g, "qkv.bias") < 0);
  strata_graph_destroy(g);
  /* Without flash, the GQA matmul broadcasts k and v over the heads. */
  g = tiny(STRATA_FAMILY_LLAMA, 0, 0);
  ASSERT(strata_graph_find_op(g, "scores") >= 0);
  ASSERT_EQ(g->tensors[strata_graph_find_tensor(g, "kT.out")].shape[1], 1);
  strata_graph_destroy(g);
}

/* ---- round trip ---- */

static void roundtrip(const strata_graph_t *g) {
  char *a = NULL, *b = NULL;
  size_t na, nb;
  strata_graph_t *g2 = NULL;
  ASSERT_OK(strata_trace_write(g, &a, &na));
  ASSERT_OK(strata_trace_parse(a, na, g->name, &g2));
  ASSERT_OK(strata_trace_write(g2, &b, &nb));
  ASSERT_EQ(na, nb);
  ASSERT(memcmp(a, b, na) == 0);
  strata_graph_stats_t s1, s2;
  strata_graph_stats(g, &s1);
  strata_graph_stats(g2, &s2);
  ASSERT(memcmp(&s1, &s2, sizeof s1) == 0);
  strata_graph_destroy(g2);
  strata_free(a);
  strata_free(b);
}

TEST(roundtrip_every_preset) {
  for (const char *const *n = strata_preset_names(); *n; n++) {
    strata_graph_t *g = preset(*n);
    roundtrip(g);
    strata_graph_destroy(g);
  }
  for (int f = 0; f < 3; f++)
    for (int flash = 0; flash < 2; flash++) {
      strata_graph_t *g = tiny((strata_family_t)f, flash, !flash);
      roundtrip(g);
      strata_graph_destroy(g);
    }
}

/* ---- malformed traces ---- */

static char *tiny_text(void) {
  strata_graph_t *g = tiny(STRATA_FAMILY_GPT, 0, 1);
  char *t = NULL;
  size_t n;
  ASSERT_OK(strata_trace_write(g, &t, &n));
  strata_graph_destroy(g);
  return t;
}

/* text with the first `from` replaced by `to` (asserts it is there). */
static char *mutate(const char *text, const char *from, const char *to) {
  const char *p = strstr(text, from);
  if (!p) test_fail(__FILE__, __LINE__, "'%s' not in the trace", from);
  size_t n = strlen(text) + strlen(to) + 1;
  char *r = malloc(n);
  snprintf(r, n, "%.*s%s%s", (int)(p - text), text, to, p + strlen(from));
  return r;
}

/* Parse a mutated tiny trace; expect err and a message with both parts. */
static void expect_bad(const char *from, const char *to, int err,
                       const char *msg1, const char *msg2) {
  char *base = tiny_text();
  char *t = mutate(base, from, to);
  strata_free(base);
  strata_graph_t *g = (strata_graph_t *)1;
  int rc = strata_trace_parse(t, strlen(t), "t.json", &g);
  free(t);
  ASSERT(g == NULL);
  ASSERT_EQ(rc, err);
  ASSERT_CONTAINS(strata_last_error(), "t.json: ");
  ASSERT_CONTAINS(strata_last_error(), msg1);
  ASSERT_CONTAINS(strata_last_error(), msg2);
}

/* The model facts a plan file carries must be ones it can store: at most
 * 16 multi-token prediction modules; a rotary share of 1 is all dims. */
TEST(bad_model_facts) {
  expect_bad("\"dropout\": true}", "\"dropout\": true, \"mtp_layers\": 20}",
             STRATA_EBADINPUT, "mtp_layers", "at most 16");
  expect_bad("\"dropout\": true}",
             "\"dropout\": true, \"rotary_percent\": 1.5}", STRATA_EBADINPUT,
             "rotary_percent", "at most 1");
  char *base = tiny_text();
  char *t = mutate(base, "\"dropout\": true}",
                   "\"dropout\": true, \"rotary_percent\": 1}");
  strata_free(base);
  strata_graph_t *g = NULL;
  ASSERT_OK(strata_trace_parse(t, strlen(t), "t.json", &g));
  ASSERT_EQ(g->hp.rotary_percent, 0);
  free(t);
  strata_graph_destroy(g);
}

/* Names are what st__name_check takes (printable UTF-8, 1 to 1024
 * bytes): the trace's, and every tensor, op and block id. */
TEST(bad_names) {
  expect_bad("\"name\": \"tiny\"", "\"name\": \"ti\\u001b[2Jny\"",
             STRATA_EBADINPUT, "t.json: 'name' holds a control character",
             "U+001B");
  expect_bad("\"name\": \"tiny\"", "\"name\": \"\"", STRATA_EBADINPUT,
             "t.json: 'name' is empty", "");
  expect_bad("{\"id\": \"tokens\"", "{\"id\": \"tok\\nens\"", STRATA_EBADINPUT,
             "t.json: tensors[0]: 'id' holds a control character", "U+000A");
  expect_bad("\"id\": \"embed\", \"kind\"",
             "\"id\": \"em\\u0085bed\", \"kind\"", STRATA_EBADINPUT,
             "t.json: ops[0]: 'id' holds a control", "U+0085");
  expect_bad("\"id\": \"decoder\"", "\"id\": \"dec\\u2028oder\"",
             STRATA_EBADINPUT, "t.json: blocks[0]: 'id' holds a control",
             "U+2028");
  expect_bad("\"family\": \"gpt\"", "\"family\": \"g\\tpt\"", STRATA_EBADINPUT,
             "t.json: model: 'family' holds a control", "U+0009");
  /* a long string from the file is cut in the message */
  char big[3000], *base = tiny_text();
  snprintf(big, sizeof big, "\"format\": \"%02000d\"", 7);
  char *t = mutate(base, "\"format\": \"strata-trace\"", big);
  strata_free(base);
  strata_graph_t *g = NULL;
  ASSERT_EQ(strata_trace_parse(t, strlen(t), "t.json", &g), STRATA_EBADINPUT);
  free(t);
  ASSERT_CONTAINS(strata_last_error(), "t.json: 'format' is \"0000");
  ASSERT(strlen(strata_last_error()) < 200);
  /* a graph built in code passes the same check */
  g = strata_graph_create("x");
  int64_t sh[] = {1, 3};
  g->micro_batch = g->seq_len = 1;
  int a = strata_graph_add_tensor(g, "a\x1b[2J", 2, sh, STRATA_DTYPE_BF16,
                                  STRATA_TENSOR_INPUT);
  int b = strata_graph_add_tensor(g, "b", 2, sh, STRATA_DTYPE_BF16,
                                  STRATA_TENSOR_ACTIVATION);
  ASSERT(strata_graph_add_op(g, "g", STRATA_OP_GELU, 1, &a, 1, &b) >= 0);
  ASSERT_EQ(strata_graph_validate(g), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "tensor 0: its name holds a control");
  strata_graph_destroy(g);
}

/* micro_batch and seq_len stay within the planner's bounds (a plan file
 * stores them) and agree with the shapes: tokens/s is counted from them,
 * the costs from the shapes. */
TEST(bad_batch_and_sequence) {
  expect_bad("\"seq_len\": 4", "\"seq_len\": 16777217", STRATA_EBADINPUT,
             "'seq_len' is 16777217", "(must be 1 to 16777216)");
  expect_bad("\"micro_batch\": 1", "\"micro_batch\": 2147483647",
             STRATA_EBADINPUT, "'micro_batch' is 2147483647",
             "(must be 1 to 1048576)");
  expect_bad("\"seq_len\": 4", "\"seq_len\": 64", STRATA_EBADINPUT,
             "seq_len is 64, but no input or activation has it",
             "another sequence length");
  expect_bad("\"micro_batch\": 1", "\"micro_batch\": 3", STRATA_EBADINPUT,
             "micro_batch is 3, but no input or activation has 3 in dim 0",
             "another micro-batch");
  expect_bad("\"hidden\": 8", "\"hidden\": 2147483647", STRATA_EBADINPUT,
             "model: 'hidden' is 2147483647", "(must be 0 to 1073741824)");
  /* a key given twice: cJSON would keep the first, Python the last */
  expect_bad("\"micro_batch\": 1,", "\"micro_batch\": 1, \"micro_batch\": 9,",
             STRATA_EBADINPUT, "t.json: 'micro_batch' is given twice",
             "(line 5, column 21)");
}

TEST(bad_unknown_kind) {
  expect_bad("\"kind\": \"gelu\"", "\"kind\": \"gelu2\"", STRATA_EBADINPUT,
             "op 'gelu': unknown kind 'gelu2'", "valid kinds: embedding, ");
}

TEST(bad_dangling_tensor) {
  expect_bad("\"inputs\": [\"gelu.out\"", "\"inputs\": [\"nope\"",
             STRATA_EBADINPUT, "op 'fc2'", "unknown tensor 'nope'");
}

TEST(bad_produced_by_nobody) {
  expect_bad("{\"id\": \"gelu.out\"",
             "{\"id\": \"orphan\", \"shape\": [1], "
             "\"dtype\": \"bf16\", \"kind\": \"activation\"},\n    "
             "{\"id\": \"gelu.out\"",
             STRATA_EBADINPUT, "tensor 'orphan'", "no op produces");
}

TEST(bad_cycle) {
  /* fc1 reads residual2's output, which comes later in the order. */
  expect_bad("\"inputs\": [\"ln2.out\", \"fc1.weight\"",
             "\"inputs\": [\"residual2.out\", \"fc1.weight\"", STRATA_EBADINPUT,
             "op 'fc1' reads tensor 'residual2.out' before op 'residual2'",
             "cycle");
}

TEST(bad_shape) {
  expect_bad("\"id\": \"qkv.weight\", \"shape\": [24, 8]",
             "\"id\": \"qkv.weight\", \"shape\": [24, 9]", STRATA_EBADINPUT,
             "op 'qkv' (linear)",
             "'ln1.out' [1,4,8] and weight 'qkv.weight' [24,9] do not fit");
  expect_bad("\"id\": \"kT.out\", \"shape\": [1, 2, 4, 4]",
             "\"id\": \"kT.out\", \"shape\": [1, 2, 4, 5]", STRATA_EBADINPUT,
             "op 'kT' (transpose)", "expected [1,2,4,4]");
}

TEST(bad_version) {
  expect_bad("\"version\": 1", "\"version\": 2", STRATA_EVERSION,
             "version 2 is newer than this strata reads (1)", "upgrade");
  expect_bad("\"format\": \"strata-trace\"", "\"format\": \"onnx\"",
             STRATA_EBADINPUT, "'format' is \"onnx\"", "strata-trace");
}

TEST(bad_json) {
  expect_bad("\"ops\": [", "\"ops\": [[,", STRATA_EBADINPUT, "not valid JSON",
             "line ");
}

TEST(bad_duplicate_id) {
  expect_bad("{\"id\": \"gelu\"", "{\"id\": \"fc1\"", STRATA_EBADINPUT,
             "duplicate op id 'fc1'", "t.json");
  expect_bad("{\"id\": \"gelu.out\"", "{\"id\": \"fc1.out\"", STRATA_EBADINPUT,
             "duplicate tensor id 'fc1.out'", "t.json");
}

TEST(bad_dtype) {
  expect_bad("\"dtype\": \"bf16\"", "\"dtype\": \"bf17\"", STRATA_EBADINPUT,
             "tensor 'embed.weight': dtype 'bf17'", "f32, bf16");
}

TEST(bad_two_writers) {
  expect_bad("\"outputs\": [\"gelu.out\"]", "\"outputs\": [\"fc1.out\"]",
             STRATA_EBADINPUT, "tensor 'fc1.out' is written by two ops",
             "'fc1' and 'gelu'");
}

TEST(bad_block) {
  expect_bad("\"repeat\": 2", "\"repeat\": 0", STRATA_EBADINPUT,
             "block 'decoder'", "repeat 0 (must be 1 to 1000000)");
  expect_bad("\"output\": \"residual2.out\"", "\"output\": \"fc1.out\"",
             STRATA_EBADINPUT, "block 'decoder': input 'embed_dropout.out'",
             "differ");
  expect_bad("\"ops\": [\"ln1\", \"residual2\"]",
             "\"ops\": [\"ln1\", \"qkv\", \"kT\"]", STRATA_EBADINPUT,
             "block 'decoder'", "op 'kT' does not follow op 'qkv'");
  /* the epilogue reads a tensor internal to the repeated block */
  expect_bad("\"inputs\": [\"residual2.out\", \"final_norm.weight\"",
             "\"inputs\": [\"residual1.out\", \"final_norm.weight\"",
             STRATA_EBADINPUT, "op 'final_norm' reads tensor 'residual1.out'",
             "internal to block 'decoder'");
  expect_bad("\"id\": \"ln1\", \"kind\": \"layernorm\", \"inputs\": "
             "[\"embed_dropout.out\", \"ln1.weight\", \"ln1.bias\"], "
             "\"outputs\": [\"ln1.out\"], \"layer\": 0",
             "\"id\": \"ln1\", \"kind\": \"layernorm\", \"inputs\": "
             "[\"embed_dropout.out\", \"ln1.weight\", \"ln1.bias\"], "
             "\"outputs\": [\"ln1.out\"], \"layer\": 3",
             STRATA_EBADINPUT, "op 'ln1': 'layer' must be 0", "decoder");
}

TEST(bad_arity) {
  expect_bad("\"inputs\": [\"residual1.out\", \"mlp_dropout.out\"]",
             "\"inputs\": [\"residual1.out\"]", STRATA_EBADINPUT,
             "op 'residual2' (add)", "takes 2 inputs, not 1");
}

TEST(validate_built_graph) {
  strata_graph_t *g = strata_graph_create("x");
  int64_t sh[] = {2, 3};
  g->micro_batch = g->seq_len = 1;
  int a = strata_graph_add_tensor(g, "a", 2, sh, STRATA_DTYPE_BF16,
                                  STRATA_TENSOR_INPUT);
  int b = strata_graph_add_tensor(g, "b", 2, sh, STRATA_DTYPE_BF16,
                                  STRATA_TENSOR_ACTIVATION);
  ASSERT_EQ(strata_graph_add_tensor(g, "a", 2, sh, STRATA_DTYPE_BF16,
                                    STRATA_TENSOR_INPUT),
            STRATA_EBADINPUT);
  ASSERT(strata_graph_add_op(g, "g", STRATA_OP_GELU, 1, &a, 1, &b) >= 0);
  ASSERT_OK(strata_graph_validate(g));
  ASSERT_EQ(g->tensors[b].producer, 0);
  /* the same op again writes b a second time */
  ASSERT(strata_graph_add_op(g, "g2", STRATA_OP_GELU, 1, &a, 1, &b) >= 0);
  ASSERT_EQ(strata_graph_validate(g), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "written by two ops, 'g' and 'g2'");
  ASSERT_EQ(strata_graph_add_block(g, "blk", 0, 1, 0, a, b), STRATA_EBADINPUT);
  strata_graph_destroy(g);
}

TEST(bad_huge_shape) {
  expect_bad("\"id\": \"fc1.out\", \"shape\": [1, 4, 32]",
             "\"id\": \"fc1.out\", \"shape\": [100000000, 100000000, 32]",
             STRATA_EBADINPUT, "tensor 'fc1.out'", "more than 2^48 elements");
  expect_bad("\"layer\": 0, \"heads\": 2, \"kv_heads\": 2",
             "\"layer\": 0, \"heads\": 2147483647, \"kv_heads\": 2147483647",
             STRATA_EBADINPUT, "op 'split' (split_heads)", "heads 2147483647");
}

/* Random edits of a valid trace: every outcome is a clean error or a
 * graph that round-trips (SQLite's way; under ASan/UBSan this also finds
 * memory and overflow bugs). */
TEST(fuzz_mutations) {
  static const char alphabet[] = "0123456789-.,:[]{}\"e \\nabkx";
  char *base = tiny_text();
  size_t n = strlen(base);
  uint64_t r = 0x9e3779b97f4a7c15ULL;
  int parsed = 0;
  for (int it = 0; it < 3000; it++) {
    char *t = malloc(n + 1);
    memcpy(t, base, n + 1);
    size_t len = n;
    for (int m = 0; m < 1 + it % 3; m++) {
      r ^= r << 13, r ^= r >> 7, r ^= r << 17;
      size_t at = (size_t)(r % len);
      if (r >> 60 < 12) {
        t[at] = alphabet[(r >> 20) % (sizeof alphabet - 1)];
      } else { /* cut a span */
        size_t k = (size_t)((r >> 24) % 40);
        if (at + k > len) k = len - at;
        memmove(t + at, t + at + k, len - at - k + 1);
        len -= k;
      }
    }
    strata_graph_t *g = NULL;
    int rc = strata_trace_parse(t, len, "f.json", &g);
    free(t);
    if (rc) {
      ASSERT(rc == STRATA_EBADINPUT || rc == STRATA_EVERSION);
      ASSERT(g == NULL);
      ASSERT_CONTAINS(strata_last_error(), "f.json: ");
      continue;
    }
    parsed++;
    roundtrip(g);
    strata_graph_destroy(g);
  }
  printf("  %d of 3000 mutants parsed and round-tripped\n", parsed);
  strata_free(base);
}

/* ---- model specs ---- */

TEST(model_load_specs) {
  strata_graph_t *g = NULL;
  strata_gen_opts_t ov;
  ASSERT_EQ(strata_model_load("gpt-2t", NULL, &g), STRATA_ENOTFOUND);
  ASSERT_CONTAINS(strata_last_error(), "unknown model 'gpt-2t'");
  ASSERT_CONTAINS(strata_last_error(), "gpt-1.7b, gpt-3.6b");
  strata_gen_opts_keep(&ov);
  ov.layers = 3;
  ov.micro_batch = 2;
  ov.flash_attention = 1;
  ASSERT_OK(strata_model_load("gpt-1.7b", &ov, &g));
  ASSERT_EQ(strata_graph_layers(g), 3);
  ASSERT_EQ(g->micro_batch, 2);
  ASSERT_EQ(g->hp.hidden, 2304);
  ASSERT_EQ(g->hp.flash_attention, 1);
  ASSERT_EQ(g->hp.dropout, 1);
  strata_graph_destroy(g);
  ASSERT_OK(strata_model_load("bert", NULL, &g));
  ASSERT_STR_EQ(g->hp.family, "bert");
  strata_graph_destroy(g);
  ov.heads = 7;
  ASSERT_EQ(strata_model_load("gpt-1.7b", &ov, &g), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(),
                  "hidden 2304 is not a multiple of heads 7");
  ASSERT_EQ(strata_model_load("/nonexistent/m.json", &ov, &g),
            STRATA_ENOTFOUND);
  ASSERT_EQ(strata_model_load("/nonexistent/m.json", NULL, &g),
            STRATA_ENOTFOUND);
  ASSERT_CONTAINS(strata_last_error(), "/nonexistent/m.json");
}

TEST(model_load_file) {
  char path[512], *t = tiny_text();
  strata_graph_t *g = NULL;
  snprintf(path, sizeof path, "%s/tiny.json", test_scratch_dir());
  ASSERT_OK(strata_file_write_atomic(path, t, strlen(t)));
  strata_free(t);
  ASSERT_OK(strata_model_load(path, NULL, &g));
  ASSERT_EQ(strata_graph_layers(g), 2);
  ASSERT_STR_EQ(g->hp.family, "gpt");
  strata_graph_destroy(g);
  strata_gen_opts_t ov;
  strata_gen_opts_keep(&ov);
  ov.layers = 3; /* a trace file is what it is */
  ASSERT_EQ(strata_model_load(path, &ov, &g), STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "not to a trace file");
}

/* ---- allocation failure injection ---- */

TEST(alloc_failures_parse) {
  char *t = tiny_text();
  size_t n = strlen(t);
  int rc = -1;
  long i;
  for (i = 1; rc != 0 && i < 200000; i++) {
    strata_graph_t *g = NULL;
    strata_alloc_fail_at(i);
    rc = strata_trace_parse(t, n, "t.json", &g);
    strata_alloc_fail_at(0);
    if (rc) {
      ASSERT_EQ(rc, STRATA_ENOMEM);
      ASSERT(g == NULL);
    }
    strata_graph_destroy(g);
  }
  ASSERT_EQ(rc, 0);
  printf("  parse survived %ld injected failures\n", i - 2);
  strata_free(t);
}

TEST(alloc_failures_generate_and_write) {
  int rc = -1;
  long i;
  for (i = 1; rc != 0 && i < 100000; i++) {
    strata_graph_t *g = NULL;
    char *text = NULL;
    size_t n;
    strata_gen_opts_t o;
    strata_gen_opts_init(&o, STRATA_FAMILY_LLAMA);
    o.layers = 2, o.hidden = 8, o.heads = 2, o.kv_heads = 1, o.seq = 4;
    strata_alloc_fail_at(i);
    rc = strata_generate(&o, "t", &g);
    if (!rc) rc = strata_trace_write(g, &text, &n);
    strata_alloc_fail_at(0);
    if (rc) ASSERT_EQ(rc, STRATA_ENOMEM);
    strata_free(text);
    strata_graph_destroy(g);
  }
  ASSERT_EQ(rc, 0);
}

/* ---- folding separately stored identical layers ---- */

/* n layers x -> ln -> fc (ffn f_i) -> gelu -> fc2 -> add(x, .), each its
 * own block with its own names; layer `odd` gets a different ffn (0:
 * none); `peek` makes the epilogue also read layer 0's output. */
static strata_graph_t *separate_layers(int n, int odd, int peek) {
  strata_graph_t *g = strata_graph_create("sep");
  int64_t xs[3] = {2, 8, 16};
  char nm[64];
  g->micro_batch = 2, g->seq_len = 8;
  int x0 = strata_graph_add_tensor(g, "x", 3, xs, STRATA_DTYPE_BF16,
                                   STRATA_TENSOR_INPUT);
  int x = strata_graph_add_tensor(g, "pre.out", 3, xs, STRATA_DTYPE_BF16,
                                  STRATA_TENSOR_ACTIVATION);
  ASSERT(strata_graph_add_op(g, "pre", STRATA_OP_GELU, 1, &x0, 1, &x) >= 0);
  int first_out = -1;
  for (int l = 0; l < n; l++) {
    int64_t f = l == odd ? 48 : 32, w1[2] = {f, 16}, w2[2] = {16, f},
            hs[3] = {2, 8, f}, gs[1] = {16};
    int op0 = g->n_ops, t[8];
#define T_(i, what, nd, sh, kind)                                              \
  snprintf(nm, sizeof nm, "L%d.%s", l, what);                                  \
  t[i] = strata_graph_add_tensor(g, nm, nd, sh, STRATA_DTYPE_BF16, kind)
    T_(0, "ln.w", 1, gs, STRATA_TENSOR_PARAM);
    T_(1, "ln.out", 3, xs, STRATA_TENSOR_ACTIVATION);
    T_(2, "fc1.w", 2, w1, STRATA_TENSOR_PARAM);
    T_(3, "fc1.out", 3, hs, STRATA_TENSOR_ACTIVATION);
    T_(4, "gelu.out", 3, hs, STRATA_TENSOR_ACTIVATION);
    T_(5, "fc2.w", 2, w2, STRATA_TENSOR_PARAM);
    T_(6, "fc2.out", 3, xs, STRATA_TENSOR_ACTIVATION);
    T_(7, "res.out", 3, xs, STRATA_TENSOR_ACTIVATION);
#undef T_
#define O_(what, kind, n_in, ins, out)                                         \
  snprintf(nm, sizeof nm, "L%d.%s", l, what);                                  \
  ASSERT(strata_graph_add_op(g, nm, kind, n_in, ins, 1, &t[out]) >= 0)
    O_("ln", STRATA_OP_RMSNORM, 2, ((int[]){x, t[0]}), 1);
    O_("fc1", STRATA_OP_LINEAR, 2, ((int[]){t[1], t[2]}), 3);
    O_("gelu", STRATA_OP_GELU, 1, ((int[]){t[3]}), 4);
    O_("fc2", STRATA_OP_LINEAR, 2, ((int[]){t[4], t[5]}), 6);
    O_("res", STRATA_OP_ADD, 2, ((int[]){x, t[6]}), 7);
#undef O_
    snprintf(nm, sizeof nm, "layer%d", l);
    ASSERT(strata_graph_add_block(g, nm, op0, 5, 1, x, t[7]) >= 0);
    if (l == 0) first_out = t[7];
    x = t[7];
  }
  int64_t one[1] = {1};
  int y = strata_graph_add_tensor(g, "y", 1, one, STRATA_DTYPE_BF16,
                                  STRATA_TENSOR_ACTIVATION);
  int z = strata_graph_add_tensor(g, "z", 3, xs, STRATA_DTYPE_BF16,
                                  STRATA_TENSOR_ACTIVATION);
  ASSERT(strata_graph_add_op(g, "tail", STRATA_OP_ADD, 2,
                             (int[]){x, peek ? first_out : x}, 1, &z) >= 0);
  ASSERT(strata_graph_add_op(g, "sum", STRATA_OP_GENERIC, 1, &z, 1, &y) >= 0);
  ASSERT_OK(strata_graph_validate(g));
  return g;
}

static void check_fold(int n, int odd, int peek, int want_blocks) {
  strata_graph_t *g = separate_layers(n, odd, peek);
  strata_graph_stats_t a, b;
  char *t1 = NULL, *t2 = NULL;
  size_t l1, l2;
  int folded = -1;
  strata_graph_stats(g, &a);
  ASSERT_OK(strata_trace_write(g, &t1, &l1));
  ASSERT_OK(strata_graph_fold_repeats(g, &folded));
  strata_graph_stats(g, &b);
  printf("  %d layers, odd %d, peek %d: %d blocks, %d folded\n", n, odd, peek,
         g->n_blocks, folded);
  ASSERT_EQ(g->n_blocks, want_blocks);
  ASSERT_EQ(folded, n - want_blocks);
  ASSERT_EQ(b.layers, n);
  ASSERT_EQ(b.parameters, a.parameters);
  ASSERT_EQ(b.ops, a.ops);
  ASSERT_EQ(b.tensors, a.tensors);
  ASSERT_NEAR(b.flops_per_microbatch, a.flops_per_microbatch, 1e-12, 0);
  ASSERT_EQ(b.activation_bytes, a.activation_bytes);
  /* the loader folds too: parsing the unfolded text gives the same */
  strata_graph_t *h = NULL;
  ASSERT_OK(strata_trace_parse(t1, l1, "sep.json", &h));
  ASSERT_OK(strata_trace_write(g, &t2, &l2));
  char *t3 = NULL;
  size_t l3;
  ASSERT_OK(strata_trace_write(h, &t3, &l3));
  ASSERT_STR_EQ(t2, t3);
  strata_free(t1);
  strata_free(t2);
  strata_free(t3);
  strata_graph_destroy(h);
  strata_graph_destroy(g);
}

TEST(fold_identical_layers) {
  check_fold(6, -1, 0, 1);
  check_fold(1, -1, 0, 1);
  check_fold(6, 3, 0, 3);  /* 0-2, 3, 4-5 */
  check_fold(6, 0, 0, 2);  /* 0, 1-5 */
  check_fold(6, -1, 1, 2); /* layer 0's output read by the epilogue */
}

/* Folding is linear: 4000 separate layers fold in well under a second
 * (a quadratic step would take minutes). */
TEST(fold_many_layers) {
  strata_graph_t *g = separate_layers(4000, -1, 0);
  ASSERT_OK(strata_graph_fold_repeats(g, NULL));
  ASSERT_EQ(g->n_blocks, 1);
  ASSERT_EQ(g->blocks[0].repeat, 4000);
  ASSERT_EQ(strata_graph_find_op(g, "L1.fc1"), -1);
  ASSERT(strata_graph_find_op(g, "L0.fc1") >= 0);
  ASSERT_EQ(strata_graph_find_tensor(g, "L3999.res.out"), -1);
  strata_graph_destroy(g);
}

/* ---- re-batching ---- */

static char *written(const strata_graph_t *g) {
  char *t = NULL;
  size_t n;
  ASSERT_OK(strata_trace_write(g, &t, &n));
  return t;
}

/* Re-shaping a generated model gives exactly what the generator makes at
 * the new size, for every family, with and without flash attention. */
TEST(rebatch_matches_generator) {
  for (int f = 0; f <= STRATA_FAMILY_LLAMA; f++)
    for (int flash = 0; flash <= 1; flash++) {
      strata_gen_opts_t o;
      strata_graph_t *g1 = NULL, *g4 = NULL, *r = NULL;
      strata_gen_opts_init(&o, (strata_family_t)f);
      o.layers = 2, o.hidden = 64, o.heads = 4, o.seq = 32, o.vocab = 128;
      o.flash_attention = flash;
      o.micro_batch = 2;
      ASSERT_OK(strata_generate(&o, "m", &g1));
      o.micro_batch = 6;
      ASSERT_OK(strata_generate(&o, "m", &g4));
      ASSERT_OK(strata_graph_rebatch(g1, 6, &r));
      char *a = written(r), *b = written(g4);
      ASSERT_STR_EQ(a, b);
      strata_free(a);
      strata_free(b);
      strata_graph_destroy(g1);
      strata_graph_destroy(g4);
      strata_graph_destroy(r);
    }
}

/* The batch followed through permute and reshape; a slice along it is
 * refused with the op's name, a slice along another dim is re-shaped. */
static int rebatch_views(int slice_axis, int64_t *s_shape, int64_t *r0) {
  char text[2048];
  int64_t sdim0 = slice_axis == 0 ? 1 : 4, sdim1 = slice_axis == 0 ? 2 : 1;
  snprintf(text, sizeof text,
           "{\"format\": \"strata-trace\", \"version\": 1, \"name\": \"v\", "
           "\"micro_batch\": 2, \"seq_len\": 4, \"tensors\": ["
           "{\"id\": \"x\", \"shape\": [2, 4, 8], \"dtype\": \"bf16\", "
           "\"kind\": \"input\"},"
           "{\"id\": \"p\", \"shape\": [4, 2, 8], \"dtype\": \"bf16\", "
           "\"kind\": \"activation\"},"
           "{\"id\": \"r\", \"shape\": [32, 2], \"dtype\": \"bf16\", "
           "\"kind\": \"activation\"},"
           "{\"id\": \"s\", \"shape\": [%lld, %lld, 8], \"dtype\": \"bf16\", "
           "\"kind\": \"activation\"}],"
           "\"ops\": ["
           "{\"id\": \"perm\", \"kind\": \"permute\", \"inputs\": [\"x\"], "
           "\"outputs\": [\"p\"], \"perm\": [1, 0, 2]},"
           "{\"id\": \"view\", \"kind\": \"reshape\", \"inputs\": [\"x\"], "
           "\"outputs\": [\"r\"]},"
           "{\"id\": \"first\", \"kind\": \"slice\", \"inputs\": [\"p\"], "
           "\"outputs\": [\"s\"], \"axis\": %d, \"start\": 0, \"end\": 1}]}",
           (long long)sdim0, (long long)sdim1, slice_axis);
  strata_graph_t *g = NULL, *r = NULL;
  ASSERT_OK(strata_trace_parse(text, strlen(text), "v.json", &g));
  int rc = strata_graph_rebatch(g, 3, &r);
  if (!rc) {
    ASSERT_EQ(r->micro_batch, 3);
    ASSERT_EQ(r->tensors[1].shape[0], 4);
    ASSERT_EQ(r->tensors[1].shape[1], 3);
    *r0 = r->tensors[2].shape[0];
    memcpy(s_shape, r->tensors[3].shape, 3 * sizeof *s_shape);
  } else {
    ASSERT(r == NULL);
  }
  strata_graph_destroy(r);
  strata_graph_destroy(g);
  return rc;
}

TEST(rebatch_follows_views) {
  int64_t s[3], r0 = 0;
  ASSERT_EQ(rebatch_views(1, s, &r0), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "op 'first'");
  ASSERT_CONTAINS(strata_last_error(), "micro-batch 2 to 3");
  ASSERT_OK(rebatch_views(0, s, &r0));
  ASSERT_EQ(r0, 48);
  ASSERT_EQ(s[0], 1);
  ASSERT_EQ(s[1], 3);
}

/* ---- the kinds importers need (tests/data/kinds-trace.json: a tiny ViT
 * with a patch embedding, a class token, gathered positions, q/k/v by
 * split, reshape and permute, self and cross attention, a slice of the
 * class token) ---- */

static char *kinds_text(void) {
  char path[600], *text = NULL;
  size_t n;
  snprintf(path, sizeof path, "%s/tests/data/kinds-trace.json",
           test_source_dir());
  ASSERT_OK(strata_file_read(path, 0, &text, &n));
  return text;
}

static double op_flops(const strata_graph_t *g, const char *name) {
  int i = strata_graph_find_op(g, name);
  ASSERT(i >= 0);
  return strata_op_flops_fwd(g, &g->ops[i]);
}

static int64_t op_saved(const strata_graph_t *g, const char *name) {
  int i = strata_graph_find_op(g, name);
  ASSERT(i >= 0);
  return strata_op_saved_bytes(g, &g->ops[i]);
}

TEST(importer_kinds) {
  char *text = kinds_text(), *again = NULL;
  size_t n;
  strata_graph_t *g = NULL;
  ASSERT_OK(strata_trace_parse(text, strlen(text), "kinds.json", &g));
  ASSERT_OK(strata_trace_write(g, &again, &n));
  ASSERT_STR_EQ(again, text); /* byte-exact round trip of every attribute */
  /* patch_embed: (2 images x 4 patches) x (3*4*4) x 16, plus the bias */
  ASSERT_NEAR(op_flops(g, "pe"), 2.0 * 8 * 48 * 16 + 8 * 16, 1e-12, 0);
  /* self attention over 5 tokens, cross attention over 3 */
  ASSERT_NEAR(op_flops(g, "attn"), 4.0 * (2 * 4 * 5 * 4) * 5, 1e-12, 0);
  ASSERT_NEAR(op_flops(g, "xattn"), 4.0 * (2 * 4 * 5 * 4) * 3, 1e-12, 0);
  ASSERT_NEAR(op_flops(g, "cls_expand"), 0, 0, 0);
  ASSERT_NEAR(op_flops(g, "split") + op_flops(g, "heads_q") +
                  op_flops(g, "cat") + op_flops(g, "cls_tok") +
                  op_flops(g, "pos"),
              0, 0, 0);
  /* views and copies save nothing; the image is an input (resident);
   * cross attention keeps q (attn.out, 2 bytes x 160), its output and
   * the log-sum-exp (4 bytes x 2*4*5); mem is an input */
  ASSERT_EQ(op_saved(g, "split") + op_saved(g, "cat") + op_saved(g, "pe"), 0);
  ASSERT_EQ(op_saved(g, "xattn"), 2 * 160 + 2 * 160 + 4 * 40);
  /* a generic op keeps its activation inputs */
  ASSERT_EQ(op_saved(g, "cls_expand"), 0); /* its input is a param */
  /* permute and reshape are views: qh is stored as q */
  ASSERT_EQ(strata_tensor_storage(g, strata_graph_find_tensor(g, "qh")),
            strata_graph_find_tensor(g, "q"));
  strata_graph_t *r = NULL;
  ASSERT_OK(strata_graph_rebatch(g, 4, &r));
  ASSERT_NEAR(strata_op_flops_fwd(r, &r->ops[strata_graph_find_op(r, "pe")]),
              2 * op_flops(g, "pe"), 1e-12, 0);
  strata_graph_destroy(r);
  strata_free(again);
  strata_graph_destroy(g);
  strata_free(text);
}

static void kinds_bad(const char *from, const char *to, const char *msg) {
  char *base = kinds_text();
  char *t = mutate(base, from, to);
  strata_free(base);
  strata_graph_t *g = (strata_graph_t *)1;
  int rc = strata_trace_parse(t, strlen(t), "k.json", &g);
  free(t);
  ASSERT(g == NULL);
  ASSERT_EQ(rc, STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), msg);
}

TEST(importer_kinds_bad_shapes) {
  kinds_bad("\"perm\": [0, 2, 1, 3]}", "\"perm\": [0, 2, 2, 3]}",
            "op 'heads_q' (permute): perm is not a permutation");
  kinds_bad("\"start\": 0, \"end\": 1", "\"start\": 0, \"end\": 9",
            "op 'cls_tok' (slice): range [0, 9) is not inside dim 1");
  kinds_bad("\"outputs\": [\"q\", \"k\", \"v\"], \"layer\": 0, \"axis\": 2",
            "\"outputs\": [\"q\", \"k\", \"v\"], \"layer\": 0, \"axis\": 1",
            "op 'split' (split): part 'q' [2,5,16] must match");
  kinds_bad("\"id\": \"pe.w\", \"shape\": [16, 3, 4, 4]",
            "\"id\": \"pe.w\", \"shape\": [16, 3, 3, 4]",
            "op 'pe' (patch_embed): image 'img' [2,3,8,8] and weight");
  kinds_bad("\"id\": \"cat.out\", \"shape\": [2, 5, 16]",
            "\"id\": \"cat.out\", \"shape\": [2, 6, 16]",
            "op 'cat' (concat): output 'cat.out' is [2,6,16], expected "
            "[2,5,16]");
  kinds_bad("\"id\": \"mem\", \"shape\": [2, 4, 3, 4]",
            "\"id\": \"mem\", \"shape\": [2, 4, 3, 2]",
            "op 'xattn' (cross_attention)");
  kinds_bad("\"id\": \"pos_ids\", \"shape\": [2, 5], \"dtype\": \"i64\"",
            "\"id\": \"pos_ids\", \"shape\": [2, 5], \"dtype\": \"bf16\"",
            "op 'pos' (gather): needs integer indices");
  kinds_bad("\"flops\": 0}", "\"flops\": -5}", "flops -5 is negative");
}

static const test_entry_t tests[] = {
    TEST_ENTRY(kind_and_dtype_names),
    TEST_ENTRY(gpt_parameters_match_megatron_formula),
    TEST_ENTRY(llama_parameters_match_published),
    TEST_ENTRY(bert_large_parameters),
    TEST_ENTRY(gpt_flops_match_megatron_formula),
    TEST_ENTRY(gpt_layer_activations_korthikanti),
    TEST_ENTRY(gpt_layer_activations_flash),
    TEST_ENTRY(gpt_layer_activations_no_dropout),
    TEST_ENTRY(gpt_block_structure),
    TEST_ENTRY(llama_block_structure),
    TEST_ENTRY(roundtrip_every_preset),
    TEST_ENTRY(bad_model_facts),
    TEST_ENTRY(bad_unknown_kind),
    TEST_ENTRY(bad_dangling_tensor),
    TEST_ENTRY(bad_produced_by_nobody),
    TEST_ENTRY(bad_cycle),
    TEST_ENTRY(bad_shape),
    TEST_ENTRY(bad_version),
    TEST_ENTRY(bad_json),
    TEST_ENTRY(bad_duplicate_id),
    TEST_ENTRY(bad_dtype),
    TEST_ENTRY(bad_two_writers),
    TEST_ENTRY(bad_block),
    TEST_ENTRY(bad_arity),
    TEST_ENTRY(bad_huge_shape),
    TEST_ENTRY(fuzz_mutations),
    TEST_ENTRY(validate_built_graph),
    TEST_ENTRY(model_load_specs),
    TEST_ENTRY(model_load_file),
    TEST_ENTRY(alloc_failures_parse),
    TEST_ENTRY(alloc_failures_generate_and_write),
    TEST_ENTRY(fold_identical_layers),
    TEST_ENTRY(fold_many_layers),
    TEST_ENTRY(rebatch_matches_generator),
    TEST_ENTRY(rebatch_follows_views),
    TEST_ENTRY(importer_kinds),
    TEST_ENTRY(importer_kinds_bad_shapes),
    TEST_ENTRY(bad_names),
    TEST_ENTRY(bad_batch_and_sequence),
};
TEST_MAIN(tests)
