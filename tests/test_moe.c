/*
 * test_moe.c - mixtures of experts, expert, context and sharded data
 * parallelism, FP8 and the decoder variants, through the path `strata
 * estimate` and `strata plan` take:
 *
 *  - the presets' parameter counts against the published ones (total and
 *    active, each publisher's convention for the embedding);
 *  - the memory of every MoE preset on a middle pipeline rank against the
 *    closed form of docs/cost-model.md ("Mixture of experts"), exactly;
 *  - the new kinds' FLOPs and saved bytes, latent attention's parameters
 *    against Megatron-LM's formula, the variants' effect on counts, FLOPs
 *    and memory;
 *  - expert parallelism's all-to-all, context parallelism's ring and its
 *    memory, FP8, ZeRO-2/3 without a pipeline, and the plans the issue
 *    asks for on clusters of sensible size;
 *  - a hand-written mixture-of-experts trace plans and exports as one.
 */
#include <stdlib.h>
#include <string.h>

#include "merge/merge_int.h"
#include "strata/strata.h"
#include "testlib.h"

static strata_graph_t *model(const char *name, const strata_gen_opts_t *o) {
  strata_graph_t *g = NULL;
  ASSERT_OK(strata_model_load(name, o, &g));
  return g;
}

/* ---- parameter counts ---------------------------------------------------- */

typedef struct {
  const char *name;
  double total, active;  /* published */
  int embedding_counted; /* the publisher counts the input embedding */
  double tol_active, tol_total;
} published_t;

/* Mixtral: Mistral AI's announcement ("46.7B total, 12.9B active") and
 * Mixtral 8x22B's ("141B, 39B"); DeepSeek-V3: technical report, 671B /
 * 37B; Qwen3-235B-A22B: Qwen3 technical report, 235B / 22B;
 * gpt-oss-120b: OpenAI's model card, 116.83B total, 5.13B active
 * (embedding excluded, unembedding included); Qwen3-30B-A3B: its model
 * card, 30.5B / 3.3B; Kimi K2: its model card, 1T / 32B, to the trillion
 * and the billion (1,026.41B and 32.86B with the embedding: 2.6 % and
 * 2.7 % over).  DeepSeek-V3 gives 37B to
 * two digits: its active parameters without the embedding table, 36.63B,
 * are 1.01 % under it (with it, 37.55B, 1.49 % over). */
static const published_t pub[] = {
    {"mixtral-8x7b", 46.7e9, 12.9e9, 1, 0.01, 0.01},
    {"mixtral-8x22b", 141e9, 39e9, 1, 0.01, 0.01},
    {"deepseek-v3", 671e9, 37e9, 0, 0.0102, 0.01},
    {"qwen3-235b-a22b", 235e9, 22e9, 1, 0.01, 0.01},
    {"gpt-oss-120b", 116.83e9, 5.13e9, 0, 0.01, 0.01},
    {"qwen3-30b-a3b", 30.5e9, 3.3e9, 1, 0.02, 0.01},
    {"kimi-k2", 1e12, 32e9, 1, 0.03, 0.03},
};

/* The router's training settings of a model's config (format 17): off,
 * for the checks of the format another setting raises the file to. */
static void no_router_training(strata_plan_t *p) {
  p->router_aux_loss = p->router_jitter = 0;
  p->router_seq_aux = p->router_pre_softmax = p->router_expert_bias = 0;
}

TEST(parameters_match_published) {
  strata_gen_opts_t o; /* the published counts leave out DeepSeek-V3's MTP */
  strata_gen_opts_keep(&o);
  o.mtp_layers = 0;
  for (size_t i = 0; i < sizeof pub / sizeof pub[0]; i++) {
    strata_graph_t *g = model(pub[i].name, &o);
    strata_graph_stats_t st;
    strata_graph_stats(g, &st);
    double act = (double)st.active_parameters +
                 (pub[i].embedding_counted ? st.embedding_parameters : 0);
    printf("  %-16s total %8.3f B (published %7.2f, %+.2f %%), active %7.3f B "
           "(published %5.2f, %+.2f %%)\n",
           pub[i].name, st.parameters / 1e9, pub[i].total / 1e9,
           100 * (st.parameters / pub[i].total - 1), act / 1e9,
           pub[i].active / 1e9, 100 * (act / pub[i].active - 1));
    ASSERT_NEAR(st.parameters, pub[i].total, pub[i].tol_total, 0);
    ASSERT_NEAR(act, pub[i].active, pub[i].tol_active, 0);
    strata_graph_destroy(g);
  }
}

/* Active = all but the experts a token does not visit and the embedding
 * lookup: for Mixtral 8x7B by hand, 32 layers of attention (4096 x (4096 +
 * 2 x 1024) + 4096 x 4096), 2 of 8 experts (3 x 4096 x 14336 each), the
 * router (8 x 4096), two norms, the final norm and the head. */
TEST(active_parameters_by_hand) {
  strata_graph_t *g = model("mixtral-8x7b", NULL);
  strata_graph_stats_t st;
  strata_graph_stats(g, &st);
  double h = 4096, attn = h * (h + 2 * 1024) + h * h, expert = 3 * h * 14336;
  double layer = attn + 2 * expert + 8 * h + 2 * h;
  double want = 32 * layer + h + 32000 * h;
  ASSERT_EQ(st.active_parameters, want);
  ASSERT_EQ(st.embedding_parameters, 32000 * h);
  ASSERT_EQ(st.parameters,
            32 * (attn + 8 * expert + 8 * h + 2 * h) + h + 2 * 32000 * h);
  strata_graph_destroy(g);
}

/* Multi-head latent attention's parameters per layer: Megatron-LM's
 * theoretical_memory_usage.py (q through the rank-q_lora bottleneck with
 * its norm, the kv latent with its norm, the shared rotary key, the output
 * projection). */
TEST(mla_parameters_megatron_formula) {
  strata_gen_opts_t o;
  strata_gen_opts_keep(&o);
  o.layers = 4; /* 3 dense layers and 1 MoE layer */
  o.mtp_layers = 0;
  strata_graph_t *g = model("deepseek-v3", &o);
  double h = 7168, a = 128, ql = 1536, kvl = 512, dn = 128, dr = 64, dv = 128;
  double q_term = ql * (h + a * (dn + dr) + 1);
  double attn = q_term + kvl * (h + a * (dn + dv) + 1) + h * dr + a * dv * h;
  double mlp = 3 * h * 18432, norms = 2 * h;
  double moe = 256 * h + 256 * 3 * h * 2048 + 3 * h * 2048;
  strata_graph_stats_t st;
  strata_graph_stats(g, &st);
  double want =
      3 * (attn + mlp + norms) + (attn + moe + norms) + h + 2 * 129280 * h;
  printf("  MLA %.0f parameters per layer (Megatron-LM's formula)\n", attn);
  ASSERT_EQ(st.parameters, want);
  strata_graph_destroy(g);
}

/* One multi-token prediction module (DeepSeek-V3, arXiv:2412.19437 section
 * 2.2): the two RMSNorms of its inputs, the 2h -> h projection, one layer
 * like the model's last (MoE here), its final norm; the embedding table
 * and the head are the model's. */
TEST(mtp_module_parameters_and_flops) {
  strata_gen_opts_t o;
  strata_gen_opts_keep(&o);
  o.layers = 4;
  o.mtp_layers = 0;
  strata_graph_t *n = model("deepseek-v3", &o);
  o.mtp_layers = 1;
  strata_graph_t *g = model("deepseek-v3", &o);
  double h = 7168, a = 128, ql = 1536, kvl = 512, dn = 128, dr = 64, dv = 128;
  double attn = ql * (h + a * (dn + dr) + 1) + kvl * (h + a * (dn + dv) + 1) +
                h * dr + a * dv * h;
  double moe = 256 * h + 256 * 3 * h * 2048 + 3 * h * 2048;
  double layer = attn + moe + 2 * h;
  strata_graph_stats_t sn, sg;
  strata_graph_stats(n, &sn);
  strata_graph_stats(g, &sg);
  ASSERT_EQ(sg.parameters - sn.parameters, layer + 2 * h * h + 3 * h);
  ASSERT_EQ(g->hp.mtp_layers, 1);
  /* the main model's MoE layers only */
  strata_moe_info_t m;
  strata_graph_moe(g, &m);
  ASSERT_EQ(m.moe_layers, 1);
  /* FLOPs: one MoE layer (a fifth layer adds as much), the projection and
   * the head again (forward and backward: 3 x 2 x s x ...), within 1 % for
   * its norms, embedding lookup and loss */
  o.layers = 5;
  o.mtp_layers = 0;
  strata_graph_t *n5 = model("deepseek-v3", &o);
  strata_graph_stats_t s5;
  strata_graph_stats(n5, &s5);
  double s = 4096, V = 129280;
  double extra = sg.flops_per_microbatch - sn.flops_per_microbatch;
  double moe_layer = s5.flops_per_microbatch - sn.flops_per_microbatch;
  double proj_head = 3 * 2 * s * (2 * h * h + h * V);
  printf("  MTP: %.3f B parameters, %.2f TFLOP per micro-batch (a MoE layer "
         "%.2f, projection and head %.2f)\n",
         (sg.parameters - sn.parameters) / 1e9, extra / 1e12, moe_layer / 1e12,
         proj_head / 1e12);
  ASSERT_NEAR(extra, moe_layer + proj_head, 0.01, 0);
  strata_graph_destroy(n5);
  strata_graph_destroy(n);
  strata_graph_destroy(g);
}

/* ---- the kinds ----------------------------------------------------------- */

static const strata_op_t *find_op(const strata_graph_t *g, const char *name) {
  int i = strata_graph_find_op(g, name);
  ASSERT(i >= 0);
  return &g->ops[i];
}

TEST(moe_kinds_flops_and_saves) {
  strata_gen_opts_t o;
  strata_gen_opts_keep(&o);
  o.layers = 1, o.hidden = 256, o.heads = 4, o.kv_heads = 4, o.seq = 128;
  o.vocab = 1000, o.experts = 8, o.topk = 2, o.moe_ffn = 512;
  o.micro_batch = 2;
  strata_graph_t *g = model("llama", &o);
  double b = 2, s = 128, h = 256, E = 8, k = 2, f = 512, C = s * k / E;
  const strata_op_t *r = find_op(g, "router"), *d = find_op(g, "dispatch"),
                    *f1 = find_op(g, "expert_fc1"), *cb = find_op(g, "combine");
  ASSERT_EQ(g->tensors[d->out[0]].shape[2], C);
  ASSERT_EQ(strata_op_flops_fwd(g, r), 2 * b * s * h * E + 6 * b * s * E);
  ASSERT_EQ(strata_op_flops_fwd(g, f1), 2 * E * b * C * 2 * f * h);
  ASSERT_EQ(strata_op_flops_fwd(g, cb), 2 * E * b * C * h);
  ASSERT_EQ(strata_op_flops_fwd(g, d), 0);
  /* saved: the router's input (bf16) and fp32 scores; the dispatcher's
   * int32 map; each grouped GEMM its input; combine the scores alone
   * (Megatron-Core weights the copies in the experts' activation) */
  ASSERT_EQ(strata_op_saved_bytes(g, r), 2 * b * s * h + 4 * b * s * E);
  ASSERT_EQ(strata_op_saved_bytes(g, d), 4 * b * s * k);
  ASSERT_EQ(strata_op_saved_bytes(g, f1), 2 * E * b * C * h);
  ASSERT_EQ(strata_op_saved_bytes(g, cb), 4 * b * s * E);
  strata_moe_info_t m;
  strata_graph_moe(g, &m);
  ASSERT_EQ(m.experts, 8);
  ASSERT_EQ(m.topk, 2);
  ASSERT_EQ(m.moe_ffn, 512);
  ASSERT_EQ(m.glu, 1);
  ASSERT_EQ(m.moe_layers, 1);
  ASSERT_EQ(m.expert_parameters, E * 3 * h * f);
  strata_graph_destroy(g);
  /* a capacity factor pads each expert to it */
  o.capacity = 1.25;
  g = model("llama", &o);
  ASSERT_EQ(g->tensors[find_op(g, "dispatch")->out[0]].shape[2],
            (int64_t)(s * k * 1.25 / E + 0.999));
  strata_graph_destroy(g);
}

/* A shape that breaks the capacity rule is refused naming it. */
TEST(moe_bad_capacity_refused) {
  strata_gen_opts_t o;
  strata_gen_opts_keep(&o);
  o.layers = 1, o.hidden = 256, o.heads = 4, o.seq = 128, o.vocab = 1000;
  o.experts = 8, o.topk = 2;
  strata_graph_t *g = model("llama", &o);
  char *text = NULL;
  size_t len = 0;
  ASSERT_OK(strata_trace_write(g, &text, &len));
  char *at = strstr(text, "\"dispatch.out\", \"shape\": [8, 1, 32, 256]");
  ASSERT(at);
  memcpy(strstr(at, "32,"), "31,", 3);
  strata_graph_t *bad = NULL;
  ASSERT_EQ(strata_trace_parse(text, len, "moe.json", &bad), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "holds 31 copies per expert");
  strata_free(text);
  strata_graph_destroy(g);
}

/* ---- the variants -------------------------------------------------------- */

TEST(variants_change_counts_flops_memory) {
  strata_gen_opts_t o;
  strata_graph_stats_t a, b;
  strata_gen_opts_keep(&o);
  o.layers = 2, o.hidden = 512, o.heads = 8, o.kv_heads = 4, o.seq = 1024;
  o.vocab = 1000, o.ffn = 1024;
  strata_graph_t *g = model("llama", &o);
  strata_graph_stats(g, &a);
  /* head size 128 instead of 64: q, k, v and the output projection grow */
  o.head_dim = 128;
  strata_graph_t *g2 = model("llama", &o);
  strata_graph_stats(g2, &b);
  ASSERT_EQ(b.parameters - a.parameters,
            2 * (512.0 * (8 + 8) * 64 + 8 * 64 * 512));
  ASSERT(b.flops_per_microbatch > a.flops_per_microbatch);
  ASSERT(b.activation_bytes > a.activation_bytes);
  strata_graph_destroy(g2);
  o.head_dim = 0;
  /* q, k, v biases: (8 + 2 x 4) x 64 per layer */
  o.qkv_bias = 1;
  g2 = model("llama", &o);
  strata_graph_stats(g2, &b);
  ASSERT_EQ(b.parameters - a.parameters, 2 * 16 * 64);
  strata_graph_destroy(g2);
  o.qkv_bias = -1;
  /* q/k norms: two per layer, of the head size; their inputs saved */
  o.qk_norm = 1;
  g2 = model("llama", &o);
  strata_graph_stats(g2, &b);
  ASSERT_EQ(b.parameters - a.parameters, 2 * 2 * 64);
  ASSERT_EQ(b.activation_bytes - a.activation_bytes,
            2 * 2.0 * 1024 * (8 + 4) * 64);
  strata_graph_destroy(g2);
  o.qk_norm = -1;
  /* tied embeddings: the head is the table, one V x h fewer */
  o.tie_embeddings = 1;
  g2 = model("llama", &o);
  strata_graph_stats(g2, &b);
  ASSERT_EQ(a.parameters - b.parameters, 1000.0 * 512);
  ASSERT(strata_graph_find_tensor(g2, "head.weight") < 0);
  strata_graph_destroy(g2);
  o.tie_embeddings = -1;
  /* a 128-token window on every other layer: attention FLOPs of those
   * layers fall from the causal half of 1024 x 1024 pairs to the
   * window's 128 (128 + 1)/2 + 128 (1024 - 128) */
  o.window = 128, o.window_every = 2;
  g2 = model("llama", &o);
  strata_graph_stats(g2, &b);
  double full = 2.0 * 8 * 1024 * (1024 / 2.0) * (64 + 64);
  double win = 2.0 * 8 * (128 * 129 / 2.0 + 128 * (1024 - 128)) * (64 + 64);
  ASSERT_NEAR(a.flops_per_microbatch - b.flops_per_microbatch, 3 * (full - win),
              1e-12, 0);
  ASSERT_EQ(g2->n_blocks, 2); /* windowed and full layers alternate */
  strata_graph_destroy(g2);
  strata_graph_destroy(g);
}

/* ---- memory of the MoE presets: the closed form ------------------------ */

typedef struct {
  const char *model, *cluster;
  int tp, ep, etp, pp, dp, first, last, rank;
  double imbalance;
} moe_cfg_t;

/* Parameters of one MoE layer held by one rank (docs/cost-model.md):
 * split over tp (attention projections, shared experts), whole on every
 * tensor-parallel rank (norms, the router, latent attention's down
 * projections, the output projection's bias), and the experts' over
 * ep x etp (their second GEMM's bias, replicated over etp, over ep). */
static void layer_params(const strata_gen_opts_t *o, const moe_cfg_t *c,
                         double *dense, double *expert) {
  double h = o->hidden, a = o->heads, kv = o->kv_heads ? o->kv_heads : a;
  double d = o->head_dim ? o->head_dim : h / a, E = o->experts;
  double fe = o->moe_ffn, fs = o->shared_ffn, tp_split = 0, rep = 2 * h;
  if (o->kv_lora > 0) {
    double dq = o->qk_nope + o->qk_rope;
    rep += h * o->q_lora + o->q_lora + h * o->kv_lora + o->kv_lora +
           h * o->qk_rope;
    tp_split += o->q_lora * a * dq + o->kv_lora * a * (o->qk_nope + o->v_head) +
                a * o->v_head * h;
  } else {
    tp_split += h * (a + 2 * kv) * d + a * d * h;
    if (o->qkv_bias > 0) tp_split += (a + 2 * kv) * d;
    if (o->out_bias > 0) rep += h;
    if (o->qk_norm > 0) rep += 2 * d;
  }
  rep += E * h + (o->expert_bias > 0 ? E : 0); /* router */
  tp_split += 3 * h * fs;                      /* shared expert */
  *dense = tp_split / c->tp + rep;
  *expert = E * 3 * h * fe / (c->ep * c->etp);
  if (o->expert_bias > 0)
    *expert += E * 2 * fe / (c->ep * c->etp) + E * h / c->ep;
}

/* Activations of one MoE layer for one micro-batch (b = 1, sequence
 * parallelism, fused attention, no recompute), bytes: everything is split
 * t ways; the token copies (K per token) count gamma times on the most
 * loaded rank. */
static double layer_act(const strata_gen_opts_t *o, const moe_cfg_t *c,
                        double K, double gamma) {
  double s = o->seq, h = o->hidden, a = o->heads, E = o->experts;
  double kv = o->kv_heads ? o->kv_heads : a,
         d = o->head_dim ? o->head_dim : h / a;
  double fe = o->moe_ffn, fs = o->shared_ffn, attn;
  if (o->kv_lora > 0) {
    double dq = o->qk_nope + o->qk_rope, dv = o->v_head;
    attn = 2 * h + 2 * h + 4 * o->q_lora + 4 * o->kv_lora +
           2 * a * (2 * dq + 2 * dv) + 4 * a;
  } else {
    attn = 2 * h + 2 * h + 2 * a * d + 4 * kv * d + 2 * a * d + 4 * a;
    if (o->qk_norm > 0) attn += 2 * a * d + 2 * kv * d;
  }
  double moe = 2 * h + 2 * h + 4 * E + 4 * o->topk +
               gamma * K * (2 * h + 6 * fe) + 6 * fs;
  return s / c->tp * (attn + moe);
}

static strata_plan_t *estimate_moe(const moe_cfg_t *c, strata_gen_opts_t *o) {
  strata_plan_opts_t po;
  strata_graph_t *g = NULL;
  strata_cluster_t *cl = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_init(&po);
  ASSERT_OK(strata_preset_opts(c->model, o));
  po.recompute = STRATA_RECOMPUTE_NONE;
  po.sequence_parallel = c->tp > 1;
  po.quiet = 1;
  po.gen.micro_batch = 1;
  g = model(c->model, &po.gen);
  ASSERT_OK(strata_cluster_load(c->cluster, &cl));
  po.tp = c->tp, po.pp = c->pp, po.dp = c->dp, po.cp = 1;
  po.ep = c->ep, po.etp = c->etp;
  po.first_layers = c->first, po.last_layers = c->last;
  po.micro_batch = 1, po.global_batch = 2 * c->pp * c->dp;
  po.zero_stage = 1, po.vpp = 1, po.no_memory_check = 1;
  po.moe_imbalance = c->imbalance;
  ASSERT_OK(strata_pipeline_plan(g, cl, &po, &p));
  ASSERT_OK(strata_merge_stitch(p, g, cl));
  ASSERT_EQ(p->ep, c->ep);
  ASSERT_EQ(p->etp, c->etp);
  strata_cluster_destroy(cl);
  strata_graph_destroy(g);
  return p;
}

static const moe_cfg_t moe_cfgs[] = {
    {"mixtral-8x7b", "dgx-h100:8", 2, 8, 1, 4, 8, 8, 8, 1, 1.0},
    {"mixtral-8x7b", "dgx-h100:8", 2, 8, 1, 4, 8, 8, 8, 2, 1.25},
    {"mixtral-8x22b", "dgx-h100:32", 4, 8, 4, 8, 8, 7, 7, 3, 1.0},
    {"deepseek-v3", "dgx-h100:256", 2, 32, 1, 16, 64, 4, 1, 5, 1.0},
    {"qwen3-235b-a22b", "dgx-h100:64", 4, 16, 1, 4, 32, 22, 22, 1, 1.0},
    {"gpt-oss-120b", "dgx-h100:16", 2, 16, 2, 4, 16, 9, 9, 2, 1.0},
};

TEST(moe_memory_closed_form) {
  for (size_t i = 0; i < sizeof moe_cfgs / sizeof moe_cfgs[0]; i++) {
    const moe_cfg_t *c = &moe_cfgs[i];
    strata_gen_opts_t o;
    strata_plan_t *p = estimate_moe(c, &o);
    int n = p->stages[c->rank].layer_end - p->stages[c->rank].layer_begin;
    int m = p->n_micro, fly = c->pp - c->rank < m ? c->pp - c->rank : m;
    double dense, expert, E = o.experts;
    double K =
        E * (double)((o.seq * o.topk + o.experts - 1) / o.experts) / o.seq;
    double edp = (double)c->tp * c->dp / (c->ep * c->etp);
    layer_params(&o, c, &dense, &expert);
    const strata_mem_items_t *it = &p->ranks[c->rank].mem;
    double w = 2 * n * (dense + expert), g = 4 * n * (dense + expert);
    double opt = 12 * n * (dense / c->dp + expert / edp);
    double act = fly * n * layer_act(&o, c, K, c->imbalance);
    printf("  %-16s tp %d ep %d etp %d pp %d dp %d rank %d (%d layers, %d in "
           "flight): weights %.4f, grads %.4f, optim %.4f, act %.4f GiB; "
           "experts %.4f\n",
           c->model, c->tp, c->ep, c->etp, c->pp, c->dp, c->rank, n, fly,
           it->weights / 1073741824.0, it->gradients / 1073741824.0,
           it->optimizer / 1073741824.0, it->activations / 1073741824.0,
           it->experts / 1073741824.0);
    ASSERT_NEAR(it->weights, w, 1e-12, 0);
    ASSERT_NEAR(it->gradients, g, 1e-12, 0);
    ASSERT_NEAR(it->optimizer, opt, 1e-12, 0);
    ASSERT_NEAR(it->activations, act, 1e-12, 0);
    ASSERT_NEAR(it->experts, n * expert * (2 + 4 + 12 / edp), 1e-12, 0);
    strata_plan_destroy(p);
  }
}

/* ---- expert parallelism's all-to-all ------------------------------------- */

/* One MoE layer on a 4-device mesh whose axis is part of the expert-
 * parallel group, and 4 replicas beyond it: the dispatch and combine each
 * exchange the device's copies all-to-all on the mesh axis (ring cost of
 * topo/) and over the replicas (ep_link's affine cost), forward and
 * backward. */
TEST(ep_all_to_all_cost) {
  strata_gen_opts_t o;
  strata_gen_opts_keep(&o);
  o.layers = 1, o.hidden = 1024, o.heads = 8, o.kv_heads = 8, o.seq = 1024;
  o.vocab = 1000, o.experts = 16, o.topk = 2, o.moe_ffn = 1024;
  strata_graph_t *g = model("llama", &o);
  strata_stage_opts_t so;
  strata_stage_opts_init(&so);
  strata_mesh_default(&so.mesh, 4, 1);
  so.objective = STRATA_OBJ_MEGATRON;
  so.sequence_parallel = 1;
  so.layer_begin = 0, so.layer_end = 1;
  so.with_prologue = so.with_epilogue = 0;
  so.ep_axes = 1u, so.ep_outer = 4, so.outer_dp = 4;
  so.ep_link.bandwidth = 40e9, so.ep_link.latency = 20e-6;
  so.moe_host = so.perf.moe_host_seconds; /* the layer eager */
  strata_stage_result_t *r = NULL;
  ASSERT_OK(strata_stage_solve(g, &so, &r));
  double copies = 2.0 * 16 * 1 * (1024 * 2 / 16) * 1024 / 4; /* bytes */
  double mesh =
      strata_coll_time(STRATA_COLL_ALLTOALL, copies, 4, &so.mesh.axis[0]);
  double outer = 20e-6 + copies / 40e9;
  for (int i = 0; i < r->n_ops; i++)
    if (!strcmp(r->ops[i].name, "dispatch") ||
        !strcmp(r->ops[i].name, "combine")) {
      ASSERT_STR_EQ(r->ops[i].strategy, "ep");
      ASSERT_NEAR(r->ops[i].comm_seconds, 2 * (mesh + outer), 1e-12, 0);
    } else if (!strcmp(r->ops[i].name, "expert_fc1")) {
      ASSERT_STR_EQ(r->ops[i].strategy, "e");
      ASSERT_STR_EQ(r->ops[i].placement, "[S(0)]");
    }
  /* the all-to-all apart from the other collectives: dispatch and
   * combine, on the mesh and beyond, each way */
  ASSERT_NEAR(r->fwd_a2a_seconds, 2 * (mesh + outer), 1e-12, 0);
  ASSERT_NEAR(r->bwd_a2a_seconds, 2 * (mesh + outer), 1e-12, 0);
  ASSERT(r->fwd_comm_seconds > r->fwd_a2a_seconds); /* and the SP gathers */
  /* the eager MoE layer's host-bound gaps: the perf table's per layer, a
   * third forward, two backward, apart from compute and collectives */
  double hm = so.moe_host;
  ASSERT(hm > 0);
  ASSERT_NEAR(r->fwd_host_seconds, hm / 3, 1e-12, 0);
  ASSERT_NEAR(r->bwd_host_seconds, hm - hm / 3, 1e-12, 0);
  /* the experts' states: a sixteenth of each expert GEMM per device */
  double per = 16.0 * 3 * 1024 * 1024 / 16;
  ASSERT_NEAR(r->mem.expert_weights, 2 * per, 1e-12, 0);
  /* overlapped with another micro-batch's compute (Megatron-LM's
   * --overlap-moe-expert-parallel-comm): of the all-to-all A, what the
   * pair's compute C does not cover stays, max(0, A - C) */
  strata_stage_result_t *o2 = NULL;
  so.ep_comm_overlap = 1;
  ASSERT_OK(strata_stage_solve(g, &so, &o2));
  double a = 4 * (mesh + outer); /* dispatch and combine, both ways */
  /* the host's gaps hide nothing: the device idles in them */
  double c = r->fwd_seconds - r->fwd_comm_seconds - r->fwd_host_seconds +
             r->bwd_seconds - r->bwd_comm_seconds - r->bwd_host_seconds;
  double hidden = a < c ? a : c;
  printf("  all-to-all %.3f ms, compute %.3f ms: %.3f ms hidden\n", a * 1e3,
         c * 1e3, hidden * 1e3);
  ASSERT(hidden > 0);
  ASSERT_NEAR(o2->fwd_seconds + o2->bwd_seconds,
              r->fwd_seconds + r->bwd_seconds - hidden, 1e-9, 0);
  ASSERT(o2->fwd_comm_seconds < r->fwd_comm_seconds);
  ASSERT(o2->bwd_comm_seconds < r->bwd_comm_seconds);
  /* what stays of the all-to-all is its own item still */
  ASSERT_NEAR(o2->fwd_a2a_seconds + o2->bwd_a2a_seconds, a - hidden, 1e-9, 0);
  strata_stage_result_destroy(o2);
  strata_stage_result_destroy(r);
  /* a slow link: the all-to-all outlasts the compute, A - C stays */
  so.ep_link.bandwidth = 1e9;
  so.ep_comm_overlap = 0;
  ASSERT_OK(strata_stage_solve(g, &so, &r));
  so.ep_comm_overlap = 1;
  ASSERT_OK(strata_stage_solve(g, &so, &o2));
  a = 0;
  for (int i = 0; i < r->n_ops; i++)
    if (!strcmp(r->ops[i].name, "dispatch") ||
        !strcmp(r->ops[i].name, "combine"))
      a += r->ops[i].comm_seconds;
  c = r->fwd_seconds - r->fwd_comm_seconds - r->fwd_host_seconds +
      r->bwd_seconds - r->bwd_comm_seconds - r->bwd_host_seconds;
  ASSERT(a > c);
  ASSERT_NEAR(o2->fwd_seconds + o2->bwd_seconds,
              r->fwd_seconds + r->bwd_seconds - c, 1e-9, 0);
  /* the layer in a CUDA graph: no host-bound gaps, the rest the same */
  strata_stage_result_destroy(o2);
  so.moe_host = 0;
  ASSERT_OK(strata_stage_solve(g, &so, &o2));
  ASSERT_NEAR(o2->fwd_host_seconds + o2->bwd_host_seconds, 0, 0, 0);
  ASSERT_NEAR(o2->fwd_seconds + o2->bwd_seconds,
              r->fwd_seconds + r->bwd_seconds - hm - c, 1e-9, 0);
  strata_stage_result_destroy(o2);
  strata_stage_result_destroy(r);
  strata_graph_destroy(g);
}

/* ---- context parallelism ------------------------------------------------- */

static strata_plan_t *plan_405b(int cp, const char *cluster, int fixed) {
  strata_plan_opts_t po;
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_init(&po);
  po.gen.seq = 131072;
  po.quiet = 1;
  po.model_spec = "llama3-405b";
  po.global_batch = 128; /* 16.8M tokens, Llama 3's batch at 128K */
  g = model("llama3-405b", &po.gen);
  ASSERT_OK(strata_cluster_load(cluster, &c));
  if (fixed) {
    po.tp = 8, po.pp = 16, po.cp = cp;
    po.dp = strata_cluster_gpus(c) / (8 * 16 * cp);
    po.global_batch = 16 * po.dp; /* 16 micro-batches: 1F1B fills */
    po.micro_batch = 1, po.vpp = 1, po.no_memory_check = 1;
    po.first_layers = 7, po.last_layers = 7; /* 126 = 7 + 14 x 8 + 7 */
    po.sequence_parallel = 1;
    po.recompute = STRATA_RECOMPUTE_FULL;
  }
  int rc = strata_pipeline_plan(g, c, &po, &p);
  if (rc == 0) ASSERT_OK(strata_merge_stitch(p, g, c));
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return rc ? NULL : p;
}

/* Llama 3 405B at 131,072 tokens on 16,384 H100s (Llama 3 trained its
 * long-context stage with CP 16): the plan splits the sequence; a stage's
 * activations and the boundary shrink cp ways; the ring's buffers are
 * four times a layer's local keys and values. */
TEST(cp_llama3_405b_long_context) {
  strata_plan_t *p = plan_405b(0, "dgx-h100:2048", 0);
  ASSERT(p);
  printf("  llama3-405b at 131072: tp %d cp %d pp %d dp %d, %.1f GiB, %.0f "
         "ms\n",
         p->tp, p->cp, p->pp, p->dp, p->peak_memory_bytes / 1073741824.0,
         p->step_seconds * 1e3);
  ASSERT(p->cp > 1);
  ASSERT_EQ(p->cp_comm, STRATA_CP_P2P); /* full attention: the ring */
  ASSERT(p->peak_memory_bytes <= 80 * 1073741824.0);
  strata_plan_destroy(p);
  strata_plan_t *a = plan_405b(8, "dgx-h100:2048", 1);
  strata_plan_t *b = plan_405b(16, "dgx-h100:2048", 1);
  double la = a->stages[3].result->activations_per_layer;
  double lb = b->stages[3].result->activations_per_layer;
  /* full recompute: the layer input, 2 s h / (tp x cp) */
  ASSERT_EQ(la, 2.0 * 131072 * 16384 / (8 * 8));
  ASSERT_EQ(lb, la / 2);
  ASSERT_NEAR(a->p2p_seconds[3] > b->p2p_seconds[3], 1, 0, 0);
  /* K and V of a layer: 2 x 8 groups x 128 x s x 2 bytes */
  double kv = 2.0 * 8 * 128 * 131072 * 2;
  ASSERT_NEAR(a->ranks[3].mem.cp_buffers, 4 * kv / (8 * 8), 1e-12, 0);
  ASSERT_NEAR(b->ranks[3].mem.cp_buffers, 4 * kv / (8 * 16), 1e-12, 0);
  /* without context parallelism the same configuration does not fit */
  strata_plan_t *c = plan_405b(1, "dgx-h100:2048", 1);
  ASSERT(c->peak_memory_bytes > 80e9);
  printf("  cp 1 / 8 / 16: %.1f / %.1f / %.1f GiB\n",
         c->peak_memory_bytes / 1073741824.0,
         a->peak_memory_bytes / 1073741824.0,
         b->peak_memory_bytes / 1073741824.0);
  strata_plan_destroy(a);
  strata_plan_destroy(b);
  strata_plan_destroy(c);
}

/* Sliding windows: Transformer Engine's context parallelism all-gathers
 * the keys and values for them (context_parallel.py asserts it), so a
 * windowed model at 32,768 tokens splits its sequence that way, and a
 * ring it asks for is refused. */
TEST(cp_sliding_window_all_gathers) {
  strata_plan_opts_t po;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_init(&po);
  po.quiet = 1;
  po.gen.layers = 8, po.gen.hidden = 1024, po.gen.heads = 8;
  po.gen.window = 1024;
  po.gen.seq = 32768;
  po.global_batch = 1;
  po.model_spec = "llama";
  strata_graph_t *g = model("llama", &po.gen);
  ASSERT_OK(strata_cluster_load("dgx-h100:1", &c));
  ASSERT_OK(strata_pipeline_plan(g, c, &po, &p));
  printf("  windowed llama at 32768: tp %d cp %d pp %d dp %d\n", p->tp, p->cp,
         p->pp, p->dp);
  ASSERT(p->cp > 1);
  ASSERT_EQ(p->cp_comm, STRATA_CP_ALLGATHER);
  strata_plan_destroy(p);
  po.cp = 2, po.cp_comm = STRATA_CP_P2P;
  ASSERT_EQ(strata_pipeline_plan(g, c, &po, &p), STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "--cp-comm allgather");
  po.cp = 1; /* no context parallelism: nothing to exchange */
  ASSERT_OK(strata_pipeline_plan(g, c, &po, &p));
  strata_plan_destroy(p);
  strata_graph_destroy(g);
  /* without the window: the ring */
  po.gen.window = 0;
  po.cp = 0, po.cp_comm = -1;
  g = model("llama", &po.gen);
  ASSERT_OK(strata_pipeline_plan(g, c, &po, &p));
  ASSERT(p->cp > 1);
  ASSERT_EQ(p->cp_comm, STRATA_CP_P2P);
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

/* The ring on one axis of a stage: the keys and values stay split like
 * the queries, the op passes them n - 1 times; the all-gather variant
 * keeps them whole on the op (and its edges gather them). */
TEST(cp_ring_and_allgather_layouts) {
  strata_gen_opts_t o;
  strata_gen_opts_keep(&o);
  o.layers = 1, o.hidden = 1024, o.heads = 8, o.kv_heads = 8, o.seq = 8192;
  o.vocab = 1000;
  strata_graph_t *g = model("llama", &o);
  for (int comm = 0; comm < 2; comm++) {
    strata_stage_opts_t so;
    strata_stage_opts_init(&so);
    strata_mesh_default(&so.mesh, 2, 1);
    so.objective = STRATA_OBJ_MEGATRON;
    so.cp = 2, so.cp_comm = comm;
    so.layer_begin = 0, so.layer_end = 1;
    so.with_prologue = so.with_epilogue = 0;
    strata_stage_result_t *r = NULL;
    ASSERT_OK(strata_stage_solve(g, &so, &r));
    for (int i = 0; i < r->n_ops; i++)
      if (!strcmp(r->ops[i].name, "attn"))
        ASSERT_STR_EQ(r->ops[i].strategy, comm ? "s" : "ring");
    /* everything split along the sequence: the layer's saved bytes half
     * of one device's, but for K and V under all-gather */
    ASSERT(r->activations_per_layer > 0);
    strata_stage_result_destroy(r);
  }
  strata_graph_destroy(g);
}

/* A causal sliding window: the FLOPs count w keys per query, the kernel
 * computes the pairs inside the band, w(w + 1)/2 + w(s - w) of them; the
 * layer's forward differs from the full causal one by exactly the two
 * attention kernels' times. */
TEST(sliding_window_kernel_time) {
  strata_gen_opts_t o;
  strata_gen_opts_keep(&o);
  o.layers = 1, o.hidden = 1024, o.heads = 8, o.kv_heads = 8, o.seq = 4096;
  o.vocab = 1000;
  double fwd[2], s = 4096, w = 1000, F = 4.0 * 8 * 4096 * 128; /* x keys */
  strata_stage_opts_t so;
  for (int win = 0; win < 2; win++) {
    o.window = win ? (int)w : 0;
    strata_graph_t *g = model("llama", &o);
    strata_stage_result_t *r = NULL;
    strata_stage_opts_init(&so);
    so.objective = STRATA_OBJ_MEGATRON;
    so.layer_begin = 0, so.layer_end = 1;
    so.with_prologue = so.with_epilogue = 0;
    ASSERT_OK(strata_stage_solve(g, &so, &r));
    fwd[win] = r->fwd_seconds;
    strata_stage_result_destroy(r);
    strata_graph_destroy(g);
  }
  double pairs = w * (w + 1) / 2 + w * (s - w);
  ASSERT_NEAR(pairs / (s * w), 1 - (w - 1) / (2 * s), 1e-12, 0);
  double full = strata_perf_attention(&so.perf, F * s * 0.5, s, 0, 0);
  double band = strata_perf_attention(&so.perf, F * pairs / s, w, 0, 0);
  ASSERT_NEAR(fwd[0] - fwd[1], full - band, 1e-9, 0);
}

/* swiglu halves its input's last dim; a tensor-parallel split of that dim
 * splits its output too, so Megatron-LM's layout keeps fc2 row-parallel
 * (its input split along k, partial sums out) -- dense and expert MLPs. */
TEST(swiglu_keeps_fc2_row_parallel) {
  strata_gen_opts_t o;
  strata_gen_opts_keep(&o);
  o.layers = 1, o.hidden = 1024, o.heads = 8, o.kv_heads = 8, o.seq = 1024;
  o.vocab = 1000, o.ffn = 2048;
  strata_graph_t *g = model("llama", &o);
  strata_stage_opts_t so;
  strata_stage_opts_init(&so);
  strata_mesh_default(&so.mesh, 2, 1);
  so.objective = STRATA_OBJ_MEGATRON;
  so.layer_begin = 0, so.layer_end = 1;
  so.with_prologue = so.with_epilogue = 0;
  strata_stage_result_t *r = NULL;
  ASSERT_OK(strata_stage_solve(g, &so, &r));
  int seen = 0;
  for (int i = 0; i < r->n_ops; i++) {
    const char *n = r->ops[i].name;
    if (!strcmp(n, "swiglu")) {
      seen++;
      ASSERT_STR_EQ(r->ops[i].placement, "[S(2)]");
    }
    if (!strcmp(n, "fc2") || !strcmp(n, "proj")) {
      seen++;
      ASSERT_STR_EQ(r->ops[i].placement, "[P]");
    }
  }
  ASSERT_EQ(seen, 3);
  strata_stage_result_destroy(r);
  strata_graph_destroy(g);
}

/* ---- FP8 ----------------------------------------------------------------- */

TEST(fp8_gemms_saved_inputs_and_weights) {
  strata_gen_opts_t o;
  strata_gen_opts_keep(&o);
  o.layers = 1, o.hidden = 4096, o.heads = 32, o.kv_heads = 8, o.seq = 4096;
  o.vocab = 1000, o.ffn = 14336;
  strata_graph_t *g = model("llama", &o);
  strata_stage_result_t *r[2];
  for (int f = 0; f < 2; f++) {
    strata_stage_opts_t so;
    strata_stage_opts_init(&so);
    so.objective = STRATA_OBJ_MEGATRON;
    so.layer_begin = 0, so.layer_end = 1;
    so.with_prologue = so.with_epilogue = 0;
    so.fp8 = f;
    ASSERT_OK(strata_stage_solve(g, &so, &r[f]));
  }
  /* the four linears' inputs saved at a byte: h (qkv), h (proj: the
   * attention output, already saved by attention), h (fc1), ffn (fc2) */
  double s = 4096, h = 4096, ffn = 14336;
  ASSERT_NEAR(r[0]->activations_per_layer - r[1]->activations_per_layer,
              s * (h + h + ffn), 1e-12, 0);
  /* each linear weight keeps two FP8 copies: 2 bytes per parameter */
  double lin = h * (32 + 16) * 128 + h * h + 3 * h * ffn;
  ASSERT_NEAR(r[1]->mem.weights - r[0]->mem.weights, 2 * lin, 1e-12, 0);
  /* the GEMMs at the FP8 peak: the layer's forward is faster */
  printf("  a layer's forward: %.3f ms bf16, %.3f ms fp8\n",
         r[0]->fwd_seconds * 1e3, r[1]->fwd_seconds * 1e3);
  ASSERT(r[1]->fwd_seconds < 0.8 * r[0]->fwd_seconds);
  strata_stage_result_destroy(r[0]);
  strata_stage_result_destroy(r[1]);
  strata_graph_destroy(g);
}

/* ---- ZeRO-2 and -3 in Megatron mode -------------------------------------- */

TEST(zero23_without_pipeline) {
  strata_plan_opts_t po;
  strata_graph_t *g = model("gpt-1.7b", NULL);
  strata_cluster_t *c = NULL;
  ASSERT_OK(strata_cluster_load("dgx-a100:8", &c));
  double P = 0;
  strata_graph_stats_t st;
  strata_graph_stats(g, &st);
  P = (double)st.parameters;
  for (int z = 2; z <= 3; z++) {
    strata_plan_t *p = NULL;
    strata_plan_opts_init(&po);
    po.quiet = 1;
    po.tp = 1, po.pp = 1, po.dp = 64, po.cp = 1;
    po.micro_batch = 1, po.global_batch = 64, po.vpp = 1;
    po.zero_stage = z, po.no_memory_check = 1;
    po.recompute = STRATA_RECOMPUTE_NONE;
    ASSERT_OK(strata_pipeline_plan(g, c, &po, &p));
    const strata_mem_items_t *m = &p->ranks[0].mem;
    double states = m->weights + m->gradients + m->optimizer;
    /* Megatron's recipe 2 + 4 + 12: ZeRO-2 2 + 16/N, ZeRO-3 18/N */
    double want = z == 2 ? 2 * P + 16 * P / 64 : 18 * P / 64;
    printf("  ZeRO-%d, 64 ranks: %.4f GB of states (2 + 4 + 12 sharded: "
           "%.4f)\n",
           z, states / 1e9, want / 1e9);
    ASSERT_NEAR(states, want, 1e-12, 0);
    ASSERT(p->step_items.dp_sync > 0); /* reduce-scatter every micro-batch */
    strata_plan_destroy(p);
    /* with a pipeline: Megatron-FSDP runs it (a plan), DeepSpeed does
     * not, refused by the rulebook as strata estimate refuses it */
    strata_plan_opts_init(&po);
    po.quiet = 1;
    po.tp = 1, po.pp = 2, po.dp = 32, po.cp = 1;
    po.micro_batch = 1, po.global_batch = 64, po.vpp = 1;
    po.first_layers = po.last_layers = 12;
    po.zero_stage = z, po.no_memory_check = 1;
    ASSERT_OK(strata_pipeline_plan(g, c, &po, &p));
    ASSERT_EQ(p->pp, 2);
    strata_plan_destroy(p);
    p = NULL;
    po.framework = STRATA_FRAMEWORK_DEEPSPEED;
    ASSERT_EQ(strata_pipeline_plan(g, c, &po, &p), STRATA_EINVAL);
    ASSERT_CONTAINS(strata_last_error(), "runs without pipeline parallelism");
    ASSERT(p == NULL);
    strata_error_clear();
  }
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

/* ---- the presets plan ---------------------------------------------------- */

TEST(presets_plan_on_their_clusters) {
  static const char *cases[][2] = {{"mixtral-8x7b", "dgx-h100:8"},
                                   {"mixtral-8x22b", "dgx-h100:32"},
                                   {"deepseek-v3", "dgx-h100:256"},
                                   {"qwen3-235b-a22b", "dgx-h100:64"},
                                   {"gpt-oss-120b", "dgx-h100:16"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    strata_plan_opts_t po;
    strata_cluster_t *c = NULL;
    strata_plan_t *p = NULL;
    strata_plan_opts_init(&po);
    po.quiet = 1;
    po.model_spec = cases[i][0];
    strata_graph_t *g = model(cases[i][0], NULL);
    ASSERT_OK(strata_cluster_load(cases[i][1], &c));
    double t0 = strata_now();
    ASSERT_OK(strata_pipeline_plan(g, c, &po, &p));
    ASSERT_OK(strata_merge_stitch(p, g, c));
    printf("  %-16s on %-13s tp %d ep %d etp %d pp %d dp %d: %.0f ms, %.1f "
           "GiB (%.2f s)\n",
           cases[i][0], cases[i][1], p->tp, p->ep, p->etp, p->pp, p->dp,
           p->step_seconds * 1e3, p->peak_memory_bytes / 1073741824.0,
           strata_now() - t0);
    ASSERT(p->experts > 0);
    ASSERT(p->peak_memory_bytes <= 80 * 1073741824.0 - 0.5 * 1073741824.0);
    char *t = NULL;
    ASSERT_OK(strata_export_megatron(p, &t));
    ASSERT_CONTAINS(t, "--num-experts");
    ASSERT_CONTAINS(t, "--expert-model-parallel-size");
    strata_free(t);
    strata_plan_destroy(p);
    strata_cluster_destroy(c);
    strata_graph_destroy(g);
  }
}

/* Planning for DeepSpeed searches only what its config can state: the
 * same Mixtral run that Megatron-LM would give context, expert and
 * interleaved pipeline parallelism plans without them, and exports;
 * asking for one of them is refused with the reason. */
static int plan_for(const char *name, const char *cluster,
                    strata_framework_t fw, strata_plan_opts_t *po,
                    strata_plan_t **p) {
  strata_cluster_t *c = NULL;
  po->quiet = 1;
  po->model_spec = name;
  po->framework = fw;
  strata_graph_t *g = model(name, &po->gen);
  ASSERT_OK(strata_cluster_load(cluster, &c));
  int rc = strata_pipeline_plan(g, c, po, p);
  if (!rc) ASSERT_OK(strata_merge_stitch(*p, g, c));
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return rc;
}

/* The flex dispatcher (DeepEP, HybridEP) sends a token once to each other
 * node holding one of its experts, Megatron's alltoall every copy: on
 * qwen3-30b-a3b (128 experts, top 8) at ep 16 over two nodes, a token's
 * 4 copies bound for the other node cross it as one (the share below),
 * so of each all-to-all only the inter-node part shrinks, by that share;
 * on one node the two cost the same. */
/* qwen3-30b-a3b at tp 1, pp 1, ep = dp, micro-batch 1, m micro-batches,
 * memory not checked: the options, for the caller to add to. */
static void qwen_opts(strata_plan_opts_t *po, int ep, int m) {
  strata_plan_opts_init(po);
  po->tp = 1, po->pp = 1, po->ep = ep, po->dp = ep;
  po->vpp = 1;
  po->micro_batch = po->gen.micro_batch = 1;
  po->global_batch = m * ep;
  po->no_memory_check = 1;
}

static strata_plan_t *qwen_ep(const char *cluster, int ep, int flex) {
  strata_plan_opts_t po;
  strata_plan_t *p = NULL;
  qwen_opts(&po, ep, 4);
  po.moe_dispatcher = flex ? STRATA_MOE_FLEX : STRATA_MOE_ALLTOALL;
  if (flex) po.moe_flex_backend = STRATA_MOE_HYBRIDEP;
  if (plan_for("qwen3-30b-a3b", cluster, STRATA_FRAMEWORK_MEGATRON, &po, &p))
    return NULL;
  return p;
}

/* The eager MoE layer's host-bound time (topo/perf.c, moe_host_seconds):
 * qwen3-30b-a3b at pp 1 holds its 48 MoE layers on every rank, so the
 * step's host item is micro-batches x 48 x the perf table's per layer, and
 * the step shrinks by exactly that under Megatron-LM's full-iteration CUDA
 * graph (nothing else of the plan changes: no pipeline, no overlap); a
 * layer's graph of attention and router leaves it (the experts stay
 * eager), a dense model has none, and a plan file keeps it (format 16). */
/* qwen3-30b-a3b on 8 H100s, ep 8, 8 micro-batches, under CUDA graphs
 * impl of scope (and a capacity factor: 0, dropless). */
static strata_plan_t *qwen_graphed(int impl, unsigned scope, double capacity) {
  strata_plan_opts_t po;
  strata_plan_t *p = NULL;
  qwen_opts(&po, 8, 8);
  po.cuda_graph_impl = impl, po.cuda_graph_scope = (int)scope;
  po.gen.capacity = capacity;
  ASSERT_OK(plan_for("qwen3-30b-a3b", "dgx-h100:1", STRATA_FRAMEWORK_MEGATRON,
                     &po, &p));
  return p;
}

TEST(moe_host_time_and_cuda_graphs) {
  strata_plan_opts_t po;
  strata_plan_t *p[3] = {
      qwen_graphed(0, 0, 0), qwen_graphed(STRATA_CUDA_GRAPH_FULL, 0, 0),
      qwen_graphed(STRATA_CUDA_GRAPH_TE,
                   STRATA_CUDA_GRAPH_ATTN | STRATA_CUDA_GRAPH_MOE_ROUTER, 0)};
  strata_cluster_t *c = NULL;
  ASSERT_OK(strata_cluster_load("dgx-h100:1", &c));
  double per = strata_cluster_perf(c)->moe_host_seconds;
  strata_cluster_destroy(c);
  ASSERT(per > 0);
  printf("  qwen3-30b-a3b ep 8, 8 micro-batches: moe host %.1f ms of %.1f "
         "ms; full-iteration graph %.1f ms; attn and router graphed %.1f ms\n",
         p[0]->step_items.host * 1e3, p[0]->step_seconds * 1e3,
         p[1]->step_seconds * 1e3, p[2]->step_seconds * 1e3);
  ASSERT_EQ(p[0]->n_micro, 8);
  ASSERT_NEAR(p[0]->step_items.host, 8 * 48 * per, 1e-9, 0);
  ASSERT_NEAR(p[1]->step_items.host, 0, 0, 0);
  ASSERT_NEAR(p[1]->step_seconds, p[0]->step_seconds - 8 * 48 * per, 1e-9, 0);
  ASSERT_NEAR(p[2]->step_items.host, p[0]->step_items.host, 1e-12, 0);
  /* the items still sum to the step */
  const strata_step_items_t *it = &p[0]->step_items;
  ASSERT_NEAR(it->compute + it->tp_comm + it->ep_a2a + it->host + it->bubble +
                  it->dp_sync + it->param_gather + it->optimizer + it->overhead,
              p[0]->step_seconds, 1e-9, 0);
  /* the file keeps it */
  unsigned char *data = NULL;
  size_t len = 0;
  strata_plan_t *q = NULL;
  no_router_training(p[0]);
  ASSERT_OK(strata_plan_encode(p[0], &data, &len));
  ASSERT_EQ(data[4] | data[5] << 8, STRATA_PLAN_FORMAT_VERSION);
  ASSERT_EQ(st__legacy_format(p[0]), 16); /* the format it needed before 18 */
  ASSERT_OK(strata_plan_decode(data, len, "q", &q));
  ASSERT_NEAR(q->step_items.host, it->host, 0, 0);
  char *t = NULL;
  ASSERT_OK(strata_plan_summary(q, &t));
  ASSERT_CONTAINS(t, "+ moe host ");
  strata_free(t);
  strata_free(data);
  strata_plan_destroy(q);
  /* a layer's graph of no scope holds the whole layer: a token-drop MoE
   * layer (padded to a capacity) is captured, a dropless one is not */
  for (int cap = 0; cap <= 1; cap++) {
    strata_plan_t *x = qwen_graphed(STRATA_CUDA_GRAPH_LOCAL, 0, cap ? 1.0 : 0);
    if (cap)
      ASSERT_NEAR(x->step_items.host, 0, 0, 0);
    else
      ASSERT_NEAR(x->step_items.host, 8 * 48 * per, 1e-9, 0);
    strata_plan_destroy(x);
  }
  /* a dense model: none */
  strata_plan_t *d = NULL;
  strata_plan_opts_init(&po);
  po.tp = 1, po.pp = 1, po.dp = 8, po.global_batch = 64;
  po.no_memory_check = 1;
  ASSERT_OK(
      plan_for("llama3-8b", "dgx-h100:1", STRATA_FRAMEWORK_MEGATRON, &po, &d));
  ASSERT_NEAR(d->step_items.host, 0, 0, 0);
  strata_plan_destroy(d);
  for (int i = 0; i < 3; i++)
    strata_plan_destroy(p[i]);
}

TEST(flex_dispatcher_sends_once_per_node) {
  strata_plan_t *a = qwen_ep("dgx-h100:2", 16, 0),
                *f = qwen_ep("dgx-h100:2", 16, 1);
  strata_plan_t *a1 = qwen_ep("dgx-h100:1", 8, 0),
                *f1 = qwen_ep("dgx-h100:1", 8, 1);
  ASSERT(a && f && a1 && f1);
  ASSERT_NEAR(f1->step_items.ep_a2a, a1->step_items.ep_a2a, 1e-12, 0);
  double miss = 1;
  for (int i = 0; i < 8; i++)
    miss *= (64.0 - i) / (128.0 - i);
  double share = 2 * (1 - miss) / 8; /* about a quarter */
  ASSERT(share > 0.24 && share < 0.25);
  /* one all-to-all of a device's copies: 4096 tokens x 8 x 2048 x 2 bytes */
  strata_cluster_t *c = NULL;
  ASSERT_OK(strata_cluster_load("dgx-h100:2", &c));
  double S = 4096.0 * 8 * 2048 * 2, all = 0, across = 0;
  ASSERT_OK(strata_cluster_coll_time(c, STRATA_COLL_ALLTOALL, S, 2, 8, &all));
  ASSERT_OK(
      strata_cluster_coll_time(c, STRATA_COLL_ALLTOALL, S, 2, 1, &across));
  strata_cluster_destroy(c);
  double want = (all - (1 - share) * across) / all;
  double got = f->step_items.ep_a2a / a->step_items.ep_a2a;
  printf("  qwen3-30b-a3b ep 16 on 16 H100s: all-to-all %.1f ms (alltoall), "
         "%.1f ms (flex), %.3f of it; expected %.3f\n",
         a->step_items.ep_a2a * 1e3, f->step_items.ep_a2a * 1e3, got, want);
  ASSERT(want < 0.8);
  ASSERT_NEAR(got, want, 0, 0.02);
  ASSERT(f->step_seconds < a->step_seconds);
  strata_plan_destroy(a);
  strata_plan_destroy(f);
  strata_plan_destroy(a1);
  strata_plan_destroy(f1);
}

TEST(deepspeed_plans_export) {
  strata_plan_opts_t po;
  strata_plan_t *m = NULL, *d = NULL;
  char *t = NULL;
  strata_plan_opts_init(&po);
  po.gen.seq = 32768;
  po.global_batch = 64;
  po.precision = STRATA_PRECISION_AUTO;
  ASSERT_OK(plan_for("mixtral-8x7b", "dgx-h100:8", STRATA_FRAMEWORK_MEGATRON,
                     &po, &m));
  ASSERT_OK(plan_for("mixtral-8x7b", "dgx-h100:8", STRATA_FRAMEWORK_DEEPSPEED,
                     &po, &d));
  printf("  megatron: tp %d cp %d ep %d pp %d vpp %d dp %d fp8 %d, %.0f ms; "
         "deepspeed: tp %d pp %d dp %d, %.0f ms\n",
         m->tp, m->cp, m->ep, m->pp, m->vpp, m->dp, m->fp8,
         m->step_seconds * 1e3, d->tp, d->pp, d->dp, d->step_seconds * 1e3);
  ASSERT(m->cp > 1 || m->ep > 1 || m->vpp > 1 || m->fp8);
  ASSERT_EQ(strata_export_deepspeed(m, &t), STRATA_EUNSUPPORTED);
  ASSERT_EQ(d->cp, 1);
  ASSERT_EQ(d->ep, 1);
  ASSERT_EQ(d->vpp, 1);
  ASSERT_EQ(d->fp8, 0);
  ASSERT(d->step_seconds >= m->step_seconds);
  ASSERT_EQ(m->scatter_gather, 0); /* Megatron-LM sends the boundary whole */
  ASSERT_EQ(d->scatter_gather, 1); /* DeepSpeed's pipe_partitioned */
  ASSERT_OK(strata_export_deepspeed(d, &t));
  strata_free(t);
  strata_plan_destroy(m);
  strata_plan_destroy(d);
  /* 126 layers: Megatron-LM's plan has ranks of their own sizes; DeepSpeed's
   * partition gives the even split only */
  strata_plan_opts_init(&po);
  ASSERT_OK(plan_for("llama3-405b", "dgx-h100:64", STRATA_FRAMEWORK_MEGATRON,
                     &po, &m));
  strata_plan_opts_init(&po);
  ASSERT_OK(plan_for("llama3-405b", "dgx-h100:64", STRATA_FRAMEWORK_DEEPSPEED,
                     &po, &d));
  int uneven = 0;
  for (int s = 1; s < m->n_stages; s++)
    uneven |= m->stages[s].layer_end - m->stages[s].layer_begin !=
              m->stages[0].layer_end - m->stages[0].layer_begin;
  printf("  llama3-405b: megatron pp %d vpp %d%s, deepspeed pp %d\n", m->pp,
         m->vpp, uneven ? " uneven" : "", d->pp);
  ASSERT(uneven);
  ASSERT_EQ(126 % d->pp, 0);
  for (int s = 0; s < d->n_stages; s++)
    ASSERT_EQ(d->stages[s].layer_end - d->stages[s].layer_begin, 126 / d->pp);
  strata_plan_destroy(m);
  strata_plan_destroy(d);
  static const struct {
    int cp, ep, vpp, fp8, free, zero0;
    const char *model, *why;
  } bad[] = {
      {2, 0, 0, 0, 0, 0, "mixtral-8x7b", "context parallelism"},
      {0, 2, 0, 0, 0, 0, "mixtral-8x7b", "expert parallelism"},
      {0, 0, 2, 0, 0, 0, "mixtral-8x7b", "interleaving"},
      {0, 0, 0, 1, 0, 0, "mixtral-8x7b", "FP8"},
      {0, 0, 0, 0, 1, 0, "gpt-1.7b", "free-mode"},
      /* DeepSpeed's bf16 has no fp32 master weights without ZeRO */
      {0, 0, 0, 0, 0, 1, "gpt-1.7b", "--zero 0"},
      {0, 0, 0, 0, 0, 0, "deepseek-v3", "multi-token prediction"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    strata_plan_opts_init(&po);
    po.cp = bad[i].cp, po.ep = bad[i].ep, po.vpp = bad[i].vpp;
    if (bad[i].fp8) po.precision = STRATA_PRECISION_FP8;
    if (bad[i].free) po.megatron = 0;
    if (bad[i].zero0) po.zero_stage = 0;
    strata_plan_t *x = NULL;
    ASSERT_EQ(plan_for(bad[i].model, "dgx-h100:8", STRATA_FRAMEWORK_DEEPSPEED,
                       &po, &x),
              STRATA_EINVAL);
    ASSERT_CONTAINS(strata_last_error(), "--framework deepspeed");
    ASSERT_CONTAINS(strata_last_error(), bad[i].why);
    ASSERT(x == NULL);
  }
  /* a pipeline its partition cannot split evenly: 24 layers over 5 */
  strata_plan_opts_init(&po);
  po.pp = 5;
  strata_plan_t *x = NULL;
  ASSERT_EQ(
      plan_for("gpt-1.7b", "dgx-h100:5", STRATA_FRAMEWORK_DEEPSPEED, &po, &x),
      STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "do not split evenly over 5");
  /* a DeepSpeed plan with tp and pp, without sequence parallelism, sends
   * the boundary partitioned: Megatron-LM does not, and says to re-plan */
  strata_plan_opts_init(&po);
  po.tp = 2, po.pp = 2, po.sequence_parallel = 0;
  ASSERT_OK(
      plan_for("gpt-1.7b", "dgx-h100:1", STRATA_FRAMEWORK_DEEPSPEED, &po, &x));
  ASSERT_EQ(x->scatter_gather, 1);
  ASSERT_EQ(strata_export_megatron(x, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "re-plan with --framework megatron");
  ASSERT_OK(strata_export_deepspeed(x, &t));
  ASSERT_CONTAINS(t, "\"pipe_partitioned\":\ttrue");
  strata_free(t);
  strata_plan_destroy(x);
}

/* DeepSpeed with ZeRO 1 reduces after the backward, an all-reduce of the
 * fp32 gradients (BF16_Optimizer), and gathers the weights inside its
 * step: nothing overlapped, recorded so, and exported so.  The same
 * collective as Megatron-LM's ZeRO 0 without the overlap. */
TEST(deepspeed_reduces_after_backward) {
  strata_plan_opts_t po;
  strata_plan_t *d = NULL, *m = NULL, *a = NULL;
  char *t = NULL;
  strata_plan_opts_init(&po);
  po.tp = 4, po.pp = 4, po.dp = 4, po.micro_batch = 1;
  po.recompute = STRATA_RECOMPUTE_FULL;
  po.global_batch = 64;
  ASSERT_OK(plan_for("llama2-70b", "dgx-h100:8", STRATA_FRAMEWORK_DEEPSPEED,
                     &po, &d));
  strata_plan_opts_init(&po);
  po.tp = 4, po.pp = 4, po.dp = 4, po.micro_batch = 1;
  po.recompute = STRATA_RECOMPUTE_FULL;
  po.global_batch = 64;
  ASSERT_OK(
      plan_for("llama2-70b", "dgx-h100:8", STRATA_FRAMEWORK_MEGATRON, &po, &m));
  po.zero_stage = 0, po.overlap_grad_reduce = 0;
  ASSERT_OK(
      plan_for("llama2-70b", "dgx-h100:8", STRATA_FRAMEWORK_MEGATRON, &po, &a));
  const strata_step_items_t *D = &d->step_items, *M = &m->step_items,
                            *A = &a->step_items;
  printf("  llama2-70b tp 4 pp 4 dp 4: exposed dp sync + gather, deepspeed "
         "%.1f + %.1f ms, megatron %.1f + %.1f ms (ZeRO 0 unoverlapped "
         "%.1f)\n",
         D->dp_sync * 1e3, D->param_gather * 1e3, M->dp_sync * 1e3,
         M->param_gather * 1e3, A->dp_sync * 1e3);
  ASSERT_EQ(d->zero_stage, 1);
  ASSERT_EQ(d->overlap_grad_reduce, 0);
  ASSERT_EQ(d->overlap_param_gather, 0);
  ASSERT_EQ(m->overlap_grad_reduce, 1);
  ASSERT_EQ(m->overlap_param_gather, 1);
  ASSERT(D->dp_sync > M->dp_sync);
  ASSERT(fabs(D->dp_sync - A->dp_sync) <= 1e-9 + 1e-6 * A->dp_sync);
  /* the gather: Megatron-LM's ZeRO 1 without its overlap */
  strata_plan_destroy(a);
  a = NULL;
  po.zero_stage = 1, po.overlap_param_gather = 0; /* one bucket, as DeepSpeed */
  ASSERT_OK(
      plan_for("llama2-70b", "dgx-h100:8", STRATA_FRAMEWORK_MEGATRON, &po, &a));
  ASSERT(D->param_gather > 0);
  ASSERT(fabs(D->param_gather - a->step_items.param_gather) <=
         1e-9 + 1e-6 * D->param_gather);
  ASSERT_OK(strata_export_deepspeed(d, &t));
  ASSERT_CONTAINS(t, "\"overlap_comm\":\tfalse");
  ASSERT_CONTAINS(t, "\"grad_accum_dtype\":\t\"fp32\"");
  strata_free(t);
  strata_plan_destroy(d);
  strata_plan_destroy(m);
  strata_plan_destroy(a);
}

/* The experts' all-to-all overlapped where asked: the plan keeps it where
 * Megatron-LM runs it (ep > 1; pp 1 or interleaved; no full recompute),
 * is no slower than without, records it (format 6) and exports the flags
 * and the environment the MoE README names. */
static void check_flags(const char *args);

/* The plan format the rest of a plan needs: its exposed all-to-all, a
 * step item of format 12, set aside (restored before it returns). */
/* The format a plan's configuration needs, without the step items that
 * raise it: the experts' all-to-all (12), the MoE layers' host-bound
 * time (16), the blocking pipeline sends (17); nor the router's training
 * settings or the best configurations' layouts (17). */
static int format_without_a2a(strata_plan_t *p) {
  unsigned char *data = NULL;
  size_t len = 0;
  double a2a = p->step_items.ep_a2a, host = p->step_items.host,
         p2p = p->step_items.p2p;
  strata_plan_t kept = *p; /* the router's settings, put back after */
  char lay[8][STRATA_CONFIG_LAYOUT_MAX]; /* the layouts' format 17 too */
  ASSERT(p->n_top <= 8);
  for (int i = 0; i < p->n_top; i++) {
    memcpy(lay[i], p->top[i].layout, sizeof lay[i]);
    p->top[i].layout[0] = '\0';
  }
  p->step_items.ep_a2a = 0, p->step_items.host = 0, p->step_items.p2p = 0;
  no_router_training(p);
  ASSERT_OK(strata_plan_encode(p, &data, &len));
  int v = st__legacy_format(p); /* the format the plan needed before 18 */
  p->step_items.ep_a2a = a2a, p->step_items.host = host,
  p->step_items.p2p = p2p;
  p->router_aux_loss = kept.router_aux_loss,
  p->router_jitter = kept.router_jitter;
  p->router_seq_aux = kept.router_seq_aux;
  p->router_pre_softmax = kept.router_pre_softmax;
  p->router_expert_bias = kept.router_expert_bias;
  ASSERT_EQ(data[4] | data[5] << 8, STRATA_PLAN_FORMAT_VERSION);
  for (int i = 0; i < p->n_top; i++)
    memcpy(p->top[i].layout, lay[i], sizeof lay[i]);
  strata_free(data);
  return v;
}

/* A best configuration that states its layout (plan format 17). */
static int any_layout(const strata_plan_t *p) {
  for (int i = 0; i < p->n_top; i++)
    if (p->top[i].layout[0]) return 1;
  return 0;
}

TEST(ep_overlap_plans_and_exports) {
  strata_plan_opts_t po;
  strata_plan_t *a = NULL, *b = NULL, *q = NULL;
  strata_plan_opts_init(&po);
  ASSERT_OK(plan_for("mixtral-8x7b", "dgx-h100:8", STRATA_FRAMEWORK_MEGATRON,
                     &po, &a));
  ASSERT_EQ(a->overlap_ep_comm, 0);
  strata_plan_opts_init(&po);
  po.overlap_ep_comm = 1;
  ASSERT_OK(plan_for("mixtral-8x7b", "dgx-h100:8", STRATA_FRAMEWORK_MEGATRON,
                     &po, &b));
  printf("  mixtral-8x7b on 64 H100s: %.1f ms; with the overlap asked: tp %d "
         "ep %d pp %d vpp %d, overlap %d, %.1f ms\n",
         a->step_seconds * 1e3, b->tp, b->ep, b->pp, b->vpp, b->overlap_ep_comm,
         b->step_seconds * 1e3);
  ASSERT(b->step_seconds <= a->step_seconds);
  ASSERT_EQ(b->overlap_ep_comm, 1);
  ASSERT(b->ep > 1);
  ASSERT(b->pp == 1 || b->vpp > 1);
  ASSERT(b->recompute != STRATA_RECOMPUTE_FULL);
  unsigned char *data = NULL;
  size_t len = 0;
  no_router_training(b);
  ASSERT_OK(strata_plan_encode(b, &data, &len));
  ASSERT_EQ(data[4], STRATA_PLAN_FORMAT_VERSION);
  ASSERT_EQ(st__legacy_format(b), b->step_items.p2p > 0 || any_layout(b) ? 17
                                  : b->step_items.host > 0               ? 16
                                  : b->step_items.ep_a2a > 0             ? 12
                                                                         : 6);
  ASSERT_OK(strata_plan_decode(data, len, "b", &q));
  ASSERT_EQ(q->overlap_ep_comm, 1);
  strata_free(data);
  ASSERT(format_without_a2a(a) < 6);
  no_router_training(a);
  ASSERT_OK(strata_plan_encode(a, &data, &len));
  ASSERT_EQ(data[4], STRATA_PLAN_FORMAT_VERSION);
  int legacy = st__legacy_format(a);
  ASSERT_EQ(legacy, a->step_items.p2p > 0 || any_layout(a) ? 17
                    : a->step_items.host > 0               ? 16
                    : a->step_items.ep_a2a > 0             ? 12
                                                           : legacy);
  strata_free(data);
  char *t = NULL;
  ASSERT_OK(strata_export_megatron(q, &t));
  ASSERT_CONTAINS(t, "--overlap-moe-expert-parallel-comm");
  ASSERT_CONTAINS(t, "--delay-wgrad-compute");
  check_flags(t);
  strata_free(t);
  strata_export_opts_t eo;
  strata_export_opts_init(&eo);
  eo.gpus_per_node = 8;
  ASSERT_OK(strata_export_megatron_launch(q, &eo, &t));
  ASSERT_CONTAINS(t, "CUDA_DEVICE_MAX_CONNECTIONS=32");
  strata_free(t);
  /* a plan that cannot run it is refused by the export */
  q->vpp = 1, q->pp = 2, q->overlap_p2p = 0;
  ASSERT_EQ(strata_export_megatron(q, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "--vpp > 1 with pipeline parallelism");
  strata_plan_destroy(q);
  strata_plan_destroy(a);
  strata_plan_destroy(b);
  /* the best distinct configurations: one entry per configuration, with
   * or without the overlap */
  strata_plan_opts_init(&po);
  po.overlap_ep_comm = 1;
  po.top = 6;
  ASSERT_OK(plan_for("mixtral-8x7b", "dgx-h100:8", STRATA_FRAMEWORK_MEGATRON,
                     &po, &b));
  ASSERT(b->n_top >= 2);
  for (int i = 0; i < b->n_top; i++)
    for (int j = i + 1; j < b->n_top; j++) {
      const strata_plan_config_t *x = &b->top[i], *y = &b->top[j];
      const int u[] = {x->tp,          x->pp,           x->dp,
                       x->micro_batch, x->vpp,          x->sequence_parallel,
                       x->zero_stage,  x->first_layers, x->last_layers,
                       x->recompute,   x->cp,           x->ep,
                       x->etp,         x->fp8};
      const int w[] = {y->tp,          y->pp,           y->dp,
                       y->micro_batch, y->vpp,          y->sequence_parallel,
                       y->zero_stage,  y->first_layers, y->last_layers,
                       y->recompute,   y->cp,           y->ep,
                       y->etp,         y->fp8};
      if (!memcmp(u, w, sizeof u))
        test_fail(__FILE__, __LINE__, "entries %d and %d are one configuration",
                  i, j);
    }
  strata_plan_destroy(b);
  /* one configuration fixed: with the overlap the next forward runs with
   * a backward layer by layer (Megatron-LM's combined 1F1B), so the same
   * micro-batches are in flight and one layer's activations more are held
   * (of mixtral-8x7b's 32 alike layers: a 32nd of the micro-batch's
   * activations, less the embedding's and the loss's share); one
   * micro-batch a step has none to pair with */
  strata_plan_t *x1 = NULL, *x2 = NULL;
  for (int on = 0; on <= 1; on++) {
    strata_plan_opts_init(&po);
    po.tp = 1, po.pp = 1, po.ep = 8, po.dp = 64, po.vpp = 1;
    po.micro_batch = po.gen.micro_batch = 1;
    po.global_batch = 256;
    po.no_memory_check = 1;
    po.overlap_ep_comm = on;
    ASSERT_OK(plan_for("mixtral-8x7b", "dgx-h100:8", STRATA_FRAMEWORK_MEGATRON,
                       &po, on ? &x2 : &x1));
  }
  ASSERT_EQ(x2->overlap_ep_comm, 1);
  ASSERT_EQ(x1->stages[0].in_flight, 1);
  ASSERT_EQ(x2->stages[0].in_flight, 1);
  {
    double a1 = x1->ranks[0].mem.activations, a2 = x2->ranks[0].mem.activations;
    printf("  activations: %.3f GiB alone, %.3f GiB paired (+%.2f %%)\n",
           a1 / 1073741824.0, a2 / 1073741824.0, (a2 / a1 - 1) * 100);
    ASSERT(a2 > a1 + 0.8 * a1 / 32);
    ASSERT(a2 <= a1 + a1 / 32);
  }
  ASSERT(x2->step_seconds < x1->step_seconds);
  /* the all-to-all is the step's own item, not tp comm's: the items sum
   * to the step, the overlap shrinks it, and a plan file keeps it (format
   * 12, which a plan needs only where it is not 0) */
  for (int on = 0; on <= 1; on++) {
    const strata_plan_t *x = on ? x2 : x1;
    const strata_step_items_t *it = &x->step_items;
    double sum = it->compute + it->tp_comm + it->ep_a2a + it->host +
                 it->bubble + it->dp_sync + it->param_gather + it->optimizer +
                 it->overhead;
    ASSERT_NEAR(sum, x->step_seconds, 1e-9, 0);
    /* the eager MoE layers' host-bound time, its own item: the perf
     * table's per layer and micro-batch on the rank that ends last */
    ASSERT(it->host > 0);
    ASSERT(on || it->ep_a2a > 0); /* overlapped, it may all be hidden */
    unsigned char *bytes = NULL;
    size_t n = 0;
    strata_plan_t *back = NULL;
    ASSERT_OK(strata_plan_encode(x, &bytes, &n));
    ASSERT_EQ(bytes[4] | bytes[5] << 8, STRATA_PLAN_FORMAT_VERSION);
    int v = st__legacy_format(x); /* the format it needed before 18 */
    /* Mixtral's router loss (its config's 0.02) is format 17's */
    ASSERT(x->router_aux_loss > 0 ? v == 17
           : it->host > 0         ? v == 16
           : it->ep_a2a > 0       ? v == 12
                                  : v < 12);
    ASSERT_OK(strata_plan_decode(bytes, n, "x", &back));
    ASSERT_NEAR(back->step_items.ep_a2a, it->ep_a2a, 0, 0);
    strata_free(bytes);
    strata_plan_destroy(back);
  }
  ASSERT(x2->step_items.ep_a2a < x1->step_items.ep_a2a);
  ASSERT_OK(strata_plan_diff(x1, x2, 0, &t, &(int){0}));
  ASSERT_CONTAINS(t, "overlap_moe_expert_parallel_comm");
  strata_free(t);
  /* pp 2 vpp 2 with two micro-batches: rank 0's four forwards are all
   * warm-up ones (2 + 2 + the extra one), so it pairs none and holds what
   * it holds without the overlap; rank 1 (warm-up 3 of 4) pairs one */
  {
    strata_plan_t *y[2];
    for (int on = 0; on <= 1; on++) {
      strata_plan_opts_init(&po);
      po.tp = 1, po.pp = 2, po.vpp = 2, po.ep = 8, po.dp = 32;
      po.micro_batch = po.gen.micro_batch = 1;
      po.global_batch = 64;
      po.no_memory_check = 1;
      po.overlap_ep_comm = on;
      y[on] = NULL;
      ASSERT_OK(plan_for("mixtral-8x7b", "dgx-h100:8",
                         STRATA_FRAMEWORK_MEGATRON, &po, &y[on]));
    }
    ASSERT_EQ(y[1]->overlap_ep_comm, 1);
    ASSERT_EQ(y[1]->n_micro, 2);
    ASSERT_NEAR(y[1]->ranks[0].mem.activations, y[0]->ranks[0].mem.activations,
                1e-9, 0);
    ASSERT(y[1]->ranks[1].mem.activations > y[0]->ranks[1].mem.activations + 1);
    strata_plan_destroy(y[0]);
    strata_plan_destroy(y[1]);
  }
  /* given on, the overlap is not dropped where it runs because it does
   * not fit: with room for the configuration without it only, no plan */
  for (int on = 0; on <= 1; on++) {
    strata_plan_t *y = NULL;
    strata_plan_opts_init(&po);
    po.tp = 1, po.pp = 1, po.ep = 8, po.dp = 64, po.vpp = 1;
    po.micro_batch = po.gen.micro_batch = 1;
    po.global_batch = 256;
    po.memory_reserve = 0;
    po.memory_budget = (x1->peak_memory_bytes + x2->peak_memory_bytes) / 2;
    po.recompute = x1->recompute; /* (another recompute could fit) */
    po.zero_stage = x1->zero_stage, po.sequence_parallel = 0;
    po.overlap_ep_comm = on;
    int rc = plan_for("mixtral-8x7b", "dgx-h100:8", STRATA_FRAMEWORK_MEGATRON,
                      &po, &y);
    if (rc != (on ? STRATA_EINFEASIBLE : 0))
      printf("  on %d: rc %d: %s (x1 %.3f GiB, x2 %.3f)\n", on, rc,
             strata_last_error(), x1->peak_memory_bytes / 1073741824.0,
             x2->peak_memory_bytes / 1073741824.0);
    ASSERT_EQ(rc, on ? STRATA_EINFEASIBLE : 0);
    if (!on) ASSERT_EQ(y->overlap_ep_comm, 0);
    strata_plan_destroy(y);
    strata_error_clear();
  }
  strata_plan_destroy(x1);
  strata_plan_destroy(x2);
  strata_plan_opts_init(&po);
  po.tp = 1, po.pp = 1, po.ep = 8, po.dp = 64, po.vpp = 1;
  po.micro_batch = po.gen.micro_batch = 1;
  po.global_batch = 64; /* one micro-batch a step: none to pair with */
  po.no_memory_check = 1;
  po.overlap_ep_comm = 1;
  x1 = NULL;
  ASSERT_EQ(plan_for("mixtral-8x7b", "dgx-h100:8", STRATA_FRAMEWORK_MEGATRON,
                     &po, &x1),
            STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "two micro-batches a step to pair");
  ASSERT(x1 == NULL);
  strata_error_clear();
  /* with tp searched (not one fixed configuration) the search plans it
   * without the overlap */
  po.tp = 0;
  ASSERT_OK(plan_for("mixtral-8x7b", "dgx-h100:8", STRATA_FRAMEWORK_MEGATRON,
                     &po, &x1));
  ASSERT_EQ(x1->n_micro, 1);
  ASSERT_EQ(x1->overlap_ep_comm, 0);
  strata_plan_destroy(x1);
  /* DeepSpeed runs no expert parallelism: asking is refused */
  strata_plan_opts_init(&po);
  po.overlap_ep_comm = 1;
  ASSERT_EQ(plan_for("mixtral-8x7b", "dgx-h100:8", STRATA_FRAMEWORK_DEEPSPEED,
                     &po, &a),
            STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "--overlap-moe-expert-parallel-comm");
}

/* ---- a hand-written trace ------------------------------------------------ */

/* A Mixtral trace whose "model" section says nothing of experts (as a
 * tool that knows only dense models would write it): its ops say it is a
 * mixture of experts, and the plan, the plan file and the export say so
 * too. */
TEST(moe_trace_plans_and_exports_as_moe) {
  strata_gen_opts_t o;
  strata_gen_opts_keep(&o);
  o.layers = 4;
  strata_graph_t *g = model("mixtral-8x7b", &o);
  char *text = NULL, *t = NULL;
  size_t len = 0;
  ASSERT_OK(strata_trace_write(g, &text, &len));
  const char *moe = ", \"experts\": 8, \"topk\": 2, \"moe_ffn\": 14336";
  char *m = strstr(text, moe);
  ASSERT(m);
  memmove(m, m + strlen(moe), strlen(m + strlen(moe)) + 1);
  strata_graph_t *h = NULL;
  ASSERT_OK(strata_trace_parse(text, strlen(text), "mixtral.json", &h));
  ASSERT_EQ(h->hp.experts, 0);
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_t po;
  strata_plan_opts_init(&po);
  po.quiet = 1;
  po.global_batch = 64;
  ASSERT_OK(strata_cluster_load("dgx-h100:2", &c));
  ASSERT_OK(strata_pipeline_plan(h, c, &po, &p));
  ASSERT_OK(strata_merge_stitch(p, h, c));
  ASSERT_EQ(p->experts, 8);
  ASSERT_EQ(p->topk, 2);
  ASSERT_EQ(p->moe_ffn, 14336);
  ASSERT_EQ(p->moe_layers, 4);
  /* the plan file keeps it */
  unsigned char *bytes = NULL;
  size_t n = 0;
  strata_plan_t *q = NULL;
  ASSERT_OK(strata_plan_encode(p, &bytes, &n));
  ASSERT_OK(strata_plan_decode(bytes, n, "p.splan", &q));
  ASSERT_EQ(q->experts, 8);
  ASSERT_EQ(q->ep, p->ep);
  /* re-shaped to micro-batch 2 (the batch follows the copies [E,b,C,h]
   * through dispatch, the experts' GEMMs and combine): the model generated
   * at that micro-batch */
  strata_graph_t *h2 = NULL, *g2 = NULL;
  strata_graph_stats_t s1, s2;
  ASSERT_OK(strata_graph_rebatch(h, 2, &h2));
  o.micro_batch = 2;
  g2 = model("mixtral-8x7b", &o);
  strata_graph_stats(h2, &s1);
  strata_graph_stats(g2, &s2);
  ASSERT_NEAR(s1.flops_per_microbatch, s2.flops_per_microbatch, 1e-12, 0);
  ASSERT_NEAR(s1.activation_bytes, s2.activation_bytes, 1e-12, 0);
  ASSERT_NEAR(s1.parameters, s2.parameters, 1e-12, 0);
  strata_graph_destroy(h2);
  strata_graph_destroy(g2);
  /* the exporter, from the decoded plan */
  ASSERT_OK(strata_export_megatron(q, &t));
  ASSERT_CONTAINS(t, "--num-experts 8");
  ASSERT_CONTAINS(t, "--moe-router-topk 2");
  ASSERT_CONTAINS(t, "--moe-ffn-hidden-size 14336");
  strata_free(t);
  strata_free(bytes);
  strata_plan_destroy(q);
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(h);
  strata_graph_destroy(g);
  strata_free(text);
}

/* ---- the exports --------------------------------------------------------- */

static char *reference(void) {
  char path[512], *text = NULL;
  size_t len;
  snprintf(path, sizeof path, "%s/reference/megatron_flags.txt",
           test_shared_dir());
  ASSERT_OK(strata_file_read(path, 0, &text, &len));
  return text;
}

static int in_reference(const char *ref, const char *flag) {
  size_t n = strlen(flag);
  for (const char *q = ref; (q = strstr(q, flag)); q += n)
    if ((q == ref || q[-1] == '\n') && (q[n] == '\n' || q[n] == 0)) return 1;
  return 0;
}

static void check_flags(const char *args) {
  char *ref = reference(), flag[128];
  for (const char *q = args; (q = strstr(q, "--")); q += 2) {
    size_t k = strcspn(q, " \\\n");
    ASSERT(k < sizeof flag);
    memcpy(flag, q, k);
    flag[k] = 0;
    if (!in_reference(ref, flag))
      test_fail(__FILE__, __LINE__, "flag %s is not in the reference", flag);
  }
  strata_free(ref);
}

/* DeepSeek-V3 with expert, context parallelism and FP8; Megatron-FSDP for
 * ZeRO-3; gpt-oss's windows and biases.  Every flag is Megatron-LM's. */
/* Qwen2-MoE's shared expert is scaled by a sigmoid gate: the config builds
 * its ops and the Megatron export sets --moe-shared-expert-gate. */
TEST(qwen2_moe_shared_expert_gate) {
  char path[600], *t = NULL;
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_t o;
  snprintf(path, sizeof path, "%s/tests/data/hf/qwen1.5-moe-a2.7b.json",
           test_source_dir());
  strata_plan_opts_init(&o);
  o.quiet = 1;
  o.model_spec = path;
  ASSERT_OK(strata_model_load(path, NULL, &g));
  ASSERT(strata_graph_find_tensor(g, "shared_gate.weight") >= 0);
  ASSERT_OK(strata_cluster_load("dgx-h100:8", &c));
  ASSERT_OK(strata_pipeline_plan(g, c, &o, &p));
  ASSERT_OK(strata_merge_stitch(p, g, c));
  ASSERT_OK(strata_export_megatron(p, &t));
  check_flags(t);
  ASSERT_CONTAINS(t, "--moe-shared-expert-intermediate-size 5632");
  ASSERT_CONTAINS(t, "--moe-shared-expert-gate");
  ASSERT_CONTAINS(t, "--add-qkv-bias");
  strata_free(t);
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

/* The MoE layer's and the CUDA graphs' choices of a plan: Kimi K2 cut to
 * 4 layers on one DGX H100 with each given away from its default, and
 * full recompute, which per-layer graphs do not take, left to the search.
 * The plan file (format 9) keeps them, the figures do not move (they are
 * not costed), the Megatron-LM export writes each flag (all in the
 * reference list), and the DeepSpeed export refuses them. */
static strata_plan_t *plan_kimi(const strata_plan_opts_t *given) {
  strata_plan_opts_t po = *given;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  po.gen.layers = 4;
  po.model_spec = "kimi-k2";
  po.quiet = 1;
  po.global_batch = 64;
  po.ep = 8, po.tp = 1, po.pp = 1;
  po.no_memory_check = 1;
  strata_graph_t *g = model("kimi-k2", &po.gen);
  ASSERT_OK(strata_cluster_load("dgx-h100:1", &c));
  ASSERT_OK(strata_pipeline_plan(g, c, &po, &p));
  ASSERT_OK(strata_merge_stitch(p, g, c));
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return p;
}

TEST(moe_choices_recorded_and_exported) {
  strata_plan_opts_t po;
  strata_plan_opts_init(&po);
  strata_plan_t *a = plan_kimi(&po);
  po.moe_dispatcher = STRATA_MOE_FLEX, po.moe_flex_backend = 2;
  po.moe_router_dtype = STRATA_MOE_FP64, po.moe_grouped_gemm = 0;
  po.moe_shared_overlap = 1;
  po.cuda_graph_impl = STRATA_CUDA_GRAPH_TE;
  po.cuda_graph_scope = STRATA_CUDA_GRAPH_ATTN | STRATA_CUDA_GRAPH_MOE_ROUTER;
  strata_plan_t *b = plan_kimi(&po), *q = NULL;
  ASSERT_NEAR(b->step_seconds, a->step_seconds, 0, 0);
  ASSERT(b->recompute != STRATA_RECOMPUTE_FULL);
  unsigned char *data = NULL;
  size_t len = 0;
  ASSERT(format_without_a2a(a) < 9);
  ASSERT_EQ(format_without_a2a(b), 9);
  no_router_training(b);
  ASSERT_OK(strata_plan_encode(b, &data, &len));
  ASSERT_EQ(data[4], STRATA_PLAN_FORMAT_VERSION);
  ASSERT_EQ(st__legacy_format(b), b->step_items.p2p > 0 || any_layout(b) ? 17
                                  : b->step_items.host > 0               ? 16
                                  : b->step_items.ep_a2a > 0             ? 12
                                                                         : 9);
  ASSERT_OK(strata_plan_decode(data, len, "b", &q));
  strata_free(data);
  ASSERT_EQ(q->moe_dispatcher, STRATA_MOE_FLEX);
  ASSERT_EQ(q->moe_flex_backend, STRATA_MOE_HYBRIDEP);
  ASSERT_EQ(q->moe_router_dtype, STRATA_MOE_FP64);
  ASSERT_EQ(q->moe_grouped_gemm, 0);
  ASSERT_EQ(q->moe_shared_overlap, 1);
  ASSERT_EQ(q->cuda_graph_impl, STRATA_CUDA_GRAPH_TE);
  ASSERT_EQ(q->cuda_graph_scope, b->cuda_graph_scope);
  char *t = NULL;
  ASSERT_OK(strata_export_megatron(a, &t));
  ASSERT_CONTAINS(t, "--moe-grouped-gemm");
  ASSERT_CONTAINS(t, "--moe-token-dispatcher-type alltoall");
  ASSERT_CONTAINS(t, "--moe-router-dtype fp32");
  ASSERT(!strstr(t, "--cuda-graph") && !strstr(t, "--moe-flex"));
  strata_free(t);
  ASSERT_OK(strata_export_megatron(q, &t));
  check_flags(t);
  ASSERT(!strstr(t, "--moe-grouped-gemm"));
  ASSERT_CONTAINS(t, "--moe-token-dispatcher-type flex");
  ASSERT_CONTAINS(t, "--moe-flex-dispatcher-backend hybridep");
  ASSERT_CONTAINS(t, "--moe-router-dtype fp64");
  ASSERT_CONTAINS(t, "--moe-shared-expert-overlap");
  ASSERT_CONTAINS(t, "--cuda-graph-impl transformer_engine");
  ASSERT_CONTAINS(t, "--cuda-graph-modules attn moe_router");
  strata_free(t);
  ASSERT_OK(strata_plan_summary(q, &t));
  ASSERT_CONTAINS(t, "flex dispatcher (hybridep), router fp64, sequential "
                     "GEMMs, shared experts under the dispatch");
  ASSERT_CONTAINS(t, "transformer_engine, capturing attn, moe_router");
  strata_free(t);
  /* the whole step graphed: no modules, and no host NaN check in it */
  q->cuda_graph_impl = STRATA_CUDA_GRAPH_FULL, q->cuda_graph_scope = 0;
  ASSERT_OK(strata_export_megatron(q, &t));
  ASSERT_CONTAINS(t, "--cuda-graph-impl full_iteration");
  ASSERT_CONTAINS(t, "--no-check-for-nan-in-loss-and-grad");
  ASSERT(!strstr(t, "--cuda-graph-modules"));
  strata_free(t);
  q->cuda_graph_impl = STRATA_CUDA_GRAPH_TE;
  q->cuda_graph_scope = b->cuda_graph_scope;
  ASSERT_EQ(strata_export_deepspeed(q, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "--moe-token-dispatcher");
  strata_error_clear();
  /* the drop policy goes with a capacity factor */
  strata_plan_opts_init(&po);
  po.gen.capacity = 1.25, po.moe_drop_policy = STRATA_MOE_DROP_POSITION;
  strata_plan_t *d = plan_kimi(&po);
  ASSERT_OK(strata_export_megatron(d, &t));
  ASSERT_CONTAINS(t, "--moe-expert-capacity-factor 1.25");
  ASSERT_CONTAINS(t, "--moe-token-drop-policy position");
  strata_free(t);
  strata_plan_destroy(d);
  strata_plan_destroy(q);
  strata_plan_destroy(b);
  strata_plan_destroy(a);
}

/* A 16-layer DeepSeek-V3 on 64 H100s (tp 2, ep 8, pp 4, dp 8): with one
 * multi-token prediction module the last rank holds it (the embedding
 * table's copy and eh_proj at least, split over tp), the middle ranks are
 * unchanged, the step is longer, and the planner's own split gives the
 * last stage no more layers than without it. */
static strata_plan_t *plan_mtp(int mtp, int fixed) {
  strata_plan_opts_t po;
  strata_graph_t *g = NULL;
  strata_cluster_t *cl = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_init(&po);
  po.gen.layers = 16, po.gen.mtp_layers = mtp;
  po.model_spec = "deepseek-v3";
  po.quiet = 1;
  g = model("deepseek-v3", &po.gen);
  ASSERT_OK(strata_cluster_load("dgx-h100:8", &cl));
  po.tp = 2, po.pp = 4, po.dp = 8, po.cp = 1;
  po.ep = 8, po.etp = 1, po.sequence_parallel = 1;
  if (fixed) po.first_layers = po.last_layers = 4;
  po.micro_batch = 1, po.gen.micro_batch = 1, po.global_batch = 64;
  po.recompute = STRATA_RECOMPUTE_NONE;
  po.zero_stage = 1, po.vpp = 1, po.no_memory_check = 1;
  ASSERT_OK(strata_pipeline_plan(g, cl, &po, &p));
  strata_cluster_destroy(cl);
  strata_graph_destroy(g);
  return p;
}

TEST(mtp_on_the_last_stage) {
  strata_plan_t *a = plan_mtp(0, 1), *b = plan_mtp(1, 1);
  double h = 7168, V = 129280;
  double grew = b->ranks[3].mem.weights - a->ranks[3].mem.weights;
  printf("  last rank's weights +%.2f GiB, step %.1f -> %.1f ms\n",
         grew / 1073741824.0, a->step_seconds * 1e3, b->step_seconds * 1e3);
  ASSERT(grew >= 2.0 * (V * h + 2 * h * h) / 2);
  for (int r = 1; r <= 2; r++)
    ASSERT_EQ(b->ranks[r].mem.total, a->ranks[r].mem.total);
  ASSERT(b->step_seconds > a->step_seconds);
  ASSERT_EQ(b->mtp_layers, 1);
  strata_plan_destroy(a);
  strata_plan_destroy(b);
  a = plan_mtp(0, 0), b = plan_mtp(1, 0);
  int la = strata_plan_rank_layers(a, 3), lb = strata_plan_rank_layers(b, 3);
  printf("  the planner's last stage: %d layers without, %d with\n", la, lb);
  ASSERT(lb <= la);
  strata_plan_destroy(a);
  strata_plan_destroy(b);
}

TEST(megatron_flags_of_the_new_degrees) {
  moe_cfg_t c = {"deepseek-v3", "dgx-h100:256", 2, 32, 1, 16, 64, 4, 1, 5, 1};
  strata_gen_opts_t o;
  strata_plan_t *p = estimate_moe(&c, &o);
  char *t = NULL;
  p->fp8 = 1;
  ASSERT_OK(strata_export_megatron(p, &t));
  check_flags(t);
  ASSERT_CONTAINS(t, "--num-experts 256 \\\n--moe-router-topk 8");
  ASSERT_CONTAINS(t, "--moe-shared-expert-intermediate-size 2048");
  ASSERT_CONTAINS(t, "--moe-layer-freq \"([0]*3+[1]*58)\"");
  ASSERT_CONTAINS(t, "--expert-model-parallel-size 32");
  ASSERT_CONTAINS(t, "--expert-tensor-parallel-size 1");
  ASSERT_CONTAINS(t, "--multi-latent-attention");
  ASSERT_CONTAINS(t, "--q-lora-rank 1536 \\\n--kv-lora-rank 512");
  ASSERT_CONTAINS(t, "--qk-head-dim 128 \\\n--qk-pos-emb-head-dim 64");
  ASSERT_CONTAINS(t, "--fp8-format hybrid \\\n--fp8-recipe delayed");
  ASSERT(!strstr(t, "--moe-shared-expert-gate")); /* DeepSeek's is ungated */
  strata_free(t);
  /* Megatron's rules: ep x tp needs sequence parallelism */
  p->sequence_parallel = 0;
  ASSERT_EQ(strata_export_megatron(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "sequence parallelism must be used");
  p->sequence_parallel = 1, p->ep = 24;
  ASSERT_EQ(strata_export_megatron(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "multiple of expert model parallel");
  p->ep = 32, p->cp = 4, p->devices *= 4;
  for (int s = 0; s < p->n_stages; s++)
    p->stages[s].gpus_per_node *= 4;
  p->seq_len = 4100;
  ASSERT_EQ(strata_export_megatron(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "multiple of 2 * context-parallel");
  strata_plan_destroy(p);
  /* gpt-oss: biases kept, alternating windows of 128 keys (the query's
   * own and 127 before it), a rotary base with YaRN, the clamped GLU and
   * the attention sinks */
  moe_cfg_t d = {"gpt-oss-120b", "dgx-h100:16", 2, 16, 2, 4, 16, 9, 9, 2, 1};
  p = estimate_moe(&d, &o);
  ASSERT_OK(strata_export_megatron(p, &t));
  check_flags(t);
  ASSERT(!strstr(t, "--disable-bias-linear"));
  ASSERT_CONTAINS(t, "--window-size \"(127,0)\"");
  /* full attention on every 2nd layer, 1-based: layers 1, 3, ... */
  ASSERT_CONTAINS(t, "--window-attn-skip-freq 2 \\\n");
  ASSERT_CONTAINS(t, "--kv-channels 64");
  ASSERT_CONTAINS(t, "--rotary-base 150000");
  ASSERT(!strstr(t, "--swiglu"));
  ASSERT_CONTAINS(t, "--quick-geglu \\\n--glu-linear-offset 1 \\\n"
                     "--activation-func-clamp-value 7 \\\n");
  ASSERT_CONTAINS(t, "--position-embedding-type yarn");
  ASSERT_CONTAINS(t, "--rotary-scaling-factor 32");
  ASSERT(!strstr(t, "--rope-type")); /* latent attention's */
  ASSERT_CONTAINS(t, "--softmax-type learnable");
  strata_free(t);
  strata_plan_destroy(p);
}

static const test_entry_t tests[] = {
    TEST_ENTRY(parameters_match_published),
    TEST_ENTRY(active_parameters_by_hand),
    TEST_ENTRY(mla_parameters_megatron_formula),
    TEST_ENTRY(mtp_module_parameters_and_flops),
    TEST_ENTRY(moe_kinds_flops_and_saves),
    TEST_ENTRY(moe_bad_capacity_refused),
    TEST_ENTRY(variants_change_counts_flops_memory),
    TEST_ENTRY(moe_memory_closed_form),
    TEST_ENTRY(ep_all_to_all_cost),
    TEST_ENTRY(flex_dispatcher_sends_once_per_node),
    TEST_ENTRY(cp_llama3_405b_long_context),
    TEST_ENTRY(cp_sliding_window_all_gathers),
    TEST_ENTRY(cp_ring_and_allgather_layouts),
    TEST_ENTRY(sliding_window_kernel_time),
    TEST_ENTRY(swiglu_keeps_fc2_row_parallel),
    TEST_ENTRY(fp8_gemms_saved_inputs_and_weights),
    TEST_ENTRY(zero23_without_pipeline),
    TEST_ENTRY(presets_plan_on_their_clusters),
    TEST_ENTRY(deepspeed_plans_export),
    TEST_ENTRY(deepspeed_reduces_after_backward),
    TEST_ENTRY(ep_overlap_plans_and_exports),
    TEST_ENTRY(moe_trace_plans_and_exports_as_moe),
    TEST_ENTRY(mtp_on_the_last_stage),
    TEST_ENTRY(megatron_flags_of_the_new_degrees),
    TEST_ENTRY(qwen2_moe_shared_expert_gate),
    TEST_ENTRY(moe_choices_recorded_and_exported),
    TEST_ENTRY(moe_host_time_and_cuda_graphs),
};

TEST_MAIN(tests)
