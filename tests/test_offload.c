/*
 * test_offload.c - offloads in the search (strata plan --search-offload,
 * model/offload.c): where nothing fits without them the search finds a
 * configuration that fits with the least optimizer share and layers'
 * activations on the host, its step the one the model gives that
 * configuration with those offloads stated; a hundredth less of the
 * optimizer's share does not fit; where the best plan fits without
 * offloads they are not chosen; and the optimizer's share is chosen only
 * with the precision-aware optimizer Megatron-LM needs for it.  And
 * fine-grained activation offloading (--offload-modules,
 * model/fgoffload.c): the modules' saved bytes leave the GPU for the
 * host, their copies exposed only beyond the compute.
 */
#include <string.h>

#include "strata/strata.h"
#include "testlib.h"

#define GIB 1073741824.0

/* llama3-8b on one DGX H100 at a global batch of 64, each GPU's memory
 * held to `gib` GiB. */
static void opts_of(strata_plan_opts_t *po, double gib, int pao) {
  strata_plan_opts_init(po);
  po->quiet = 1;
  po->global_batch = 64;
  po->memory_budget = gib * GIB;
  po->precision_aware_optimizer = pao;
}

static int plan(const strata_plan_opts_t *po, strata_plan_t **p) {
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  ASSERT_OK(strata_model_load("llama3-8b", &po->gen, &g));
  ASSERT_OK(strata_cluster_load("dgx-h100:1", &c));
  *p = NULL;
  int rc = strata_pipeline_plan(g, c, po, p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return rc;
}

/* The plan's configuration fixed in po, its offloads stated. */
static void fix_config(strata_plan_opts_t *po, const strata_plan_t *p) {
  po->tp = p->tp, po->pp = p->pp, po->dp = p->dp;
  po->cp = p->cp > 1 ? p->cp : 1;
  po->micro_batch = p->micro_batch;
  po->vpp = p->vpp;
  po->recompute = p->recompute;
  po->sequence_parallel = p->sequence_parallel;
  po->zero_stage = p->zero_stage;
  po->account_embedding = p->account_embedding;
  po->account_loss = p->account_loss;
  if (p->pp > 1) {
    int first = 0, last = 0;
    for (int s = 0; s < p->n_stages; s++) {
      int n = p->stages[s].layer_end - p->stages[s].layer_begin;
      if (p->stages[s].rank == 0) first += n;
      if (p->stages[s].rank == p->pp - 1) last += n;
    }
    po->first_layers = first, po->last_layers = last;
  }
  static char lay[8192]; /* chunks of their own sizes: the layout */
  if (p->pp > 1 && !strata_plan_rank_form(p) &&
      !strata_plan_layout(p, lay, sizeof lay)) {
    po->first_layers = po->last_layers = 0;
    po->pipeline_layout = lay;
  }
  po->offload_layers = p->offload_layers;
  po->optimizer_offload = p->optimizer_offload;
  po->offload_modules = p->offload_modules;
}

/* 16 GiB a GPU: no configuration fits without offloads (the least needs
 * about 18.5 GiB); with --search-offload one does, and it is the model's
 * figure for that configuration with its offloads given. */
TEST(search_finds_what_fits) {
  strata_plan_opts_t po;
  strata_plan_t *p = NULL, *q = NULL;
  opts_of(&po, 16, 1);
  ASSERT_EQ(plan(&po, &p), STRATA_EINFEASIBLE);
  ASSERT_CONTAINS(strata_last_error(), "--search-offload");
  po.search_offload = 1;
  ASSERT_OK(plan(&po, &p));
  ASSERT(p->optimizer_offload > 0 || p->offload_layers > 0);
  ASSERT(p->optimizer_offload <= 1);
  ASSERT(p->peak_memory_bytes <= 16 * GIB - po.memory_reserve);
  printf("  tp %d pp %d dp %d: optimizer %.2f on the host, %d layers' "
         "activations, %.3f s a step, %.2f GiB\n",
         p->tp, p->pp, p->dp, p->optimizer_offload, p->offload_layers,
         p->step_seconds, p->peak_memory_bytes / GIB);
  /* the same configuration with its offloads given */
  opts_of(&po, 16, 1);
  fix_config(&po, p);
  ASSERT_OK(plan(&po, &q));
  ASSERT_NEAR(q->step_seconds, p->step_seconds, 1e-12, 0);
  ASSERT_NEAR(q->peak_memory_bytes, p->peak_memory_bytes, 1e-12, 0);
  strata_plan_destroy(q);
  /* the least share, to a hundredth: one less does not fit */
  if (p->optimizer_offload > 0.015) {
    po.optimizer_offload = p->optimizer_offload - 0.01;
    ASSERT_EQ(plan(&po, &q), STRATA_EINFEASIBLE);
  }
  strata_plan_destroy(p);
}

/* A model that fits as it is: the plan is the one without the search's
 * offloads, to the byte of its figures. */
TEST(offload_not_chosen_when_not_needed) {
  strata_plan_opts_t po;
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *a = NULL, *b = NULL;
  strata_plan_opts_init(&po);
  po.quiet = 1, po.global_batch = 64, po.precision_aware_optimizer = 1;
  po.gen.layers = 4, po.gen.hidden = 512, po.gen.heads = 8;
  po.gen.seq = 256, po.gen.vocab = 4096;
  ASSERT_OK(strata_model_load("gpt", &po.gen, &g));
  ASSERT_OK(strata_cluster_load("dgx-h100:1", &c));
  ASSERT_OK(strata_pipeline_plan(g, c, &po, &a));
  ASSERT_EQ(a->layers, 4);
  po.search_offload = 1;
  ASSERT_OK(strata_pipeline_plan(g, c, &po, &b));
  ASSERT_EQ(b->optimizer_offload > 0, 0);
  ASSERT_EQ(b->offload_layers, 0);
  ASSERT_EQ(b->tp, a->tp);
  ASSERT_EQ(b->pp, a->pp);
  ASSERT_EQ(b->dp, a->dp);
  ASSERT_EQ(b->micro_batch, a->micro_batch);
  ASSERT_NEAR(b->step_seconds, a->step_seconds, 0, 0);
  ASSERT_NEAR(b->peak_memory_bytes, a->peak_memory_bytes, 0, 0);
  strata_plan_destroy(a);
  strata_plan_destroy(b);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

/* Without the precision-aware optimizer Megatron-LM cannot offload the
 * optimizer: the search offloads activations only (one stage, nothing
 * recomputed, fewer layers than the model's). */
TEST(optimizer_share_needs_pao) {
  strata_plan_opts_t po;
  strata_plan_t *p = NULL;
  opts_of(&po, 30, 0);
  po.search_offload = 1;
  ASSERT_OK(plan(&po, &p));
  ASSERT_NEAR(p->optimizer_offload, 0, 0, 0);
  if (p->offload_layers > 0) {
    ASSERT_EQ(p->pp, 1);
    ASSERT_EQ(p->recompute, STRATA_RECOMPUTE_NONE);
    ASSERT(p->offload_layers < p->layers);
  }
  strata_plan_destroy(p);
}

/* llama3-70b on 64 H100s: with a pipeline, where Megatron-LM offloads no
 * whole layers, the search offloads modules' activations (fine-grained),
 * never slower than the plan without offloads (its space holds that one),
 * and its step is the model's for the configuration with them given. */
TEST(search_offloads_modules_with_a_pipeline) {
  strata_plan_opts_t po;
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *a = NULL, *b = NULL, *q = NULL;
  opts_of(&po, 80, 0);
  po.memory_budget = 0, po.global_batch = 512;
  ASSERT_OK(strata_model_load("llama3-70b", &po.gen, &g));
  ASSERT_OK(strata_cluster_load("dgx-h100:8", &c));
  ASSERT_OK(strata_pipeline_plan(g, c, &po, &a));
  po.search_offload = 1;
  ASSERT_OK(strata_pipeline_plan(g, c, &po, &b));
  printf("  without offloads tp %d cp %d pp %d dp %d: %.3f s; with: tp %d cp "
         "%d pp %d dp %d, modules 0x%x, %.3f s\n",
         a->tp, a->cp, a->pp, a->dp, a->step_seconds, b->tp, b->cp, b->pp,
         b->dp, (unsigned)b->offload_modules, b->step_seconds);
  ASSERT(b->step_seconds <= a->step_seconds);
  ASSERT(b->pp > 1);
  ASSERT(b->offload_modules > 0);
  ASSERT_EQ(b->offload_layers, 0);
  ASSERT(b->peak_memory_bytes <= b->gpu_memory_bytes);
  opts_of(&po, 80, 0);
  po.memory_budget = 0, po.global_batch = 512;
  fix_config(&po, b);
  ASSERT_OK(strata_pipeline_plan(g, c, &po, &q));
  ASSERT_NEAR(q->step_seconds, b->step_seconds, 1e-12, 0);
  ASSERT_NEAR(q->peak_memory_bytes, b->peak_memory_bytes, 1e-12, 0);
  strata_plan_destroy(a);
  strata_plan_destroy(b);
  strata_plan_destroy(q);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

/* An offload given is kept and the others searched; the layers' and the
 * modules' activation offloads exclude each other (transformer_config.py),
 * so with modules given no layers are offloaded. */
TEST(given_offloads_kept) {
  strata_plan_opts_t po;
  strata_plan_t *p = NULL;
  const int mods = STRATA_OFM_CORE_ATTN | STRATA_OFM_ATTN_PROJ;
  opts_of(&po, 16, 1);
  po.search_offload = 1, po.offload_modules = mods;
  ASSERT_OK(plan(&po, &p));
  ASSERT_EQ(p->offload_modules, mods);
  ASSERT_EQ(p->offload_layers, 0);
  ASSERT(p->optimizer_offload > 0);
  ASSERT(p->peak_memory_bytes <= 16 * GIB - po.memory_reserve);
  strata_plan_destroy(p);
  opts_of(&po, 16, 1);
  po.search_offload = 1, po.optimizer_offload = 1;
  ASSERT_OK(plan(&po, &p));
  ASSERT_NEAR(p->optimizer_offload, 1, 0, 0);
  ASSERT(p->offload_layers > 0 || p->offload_modules > 0);
  strata_plan_destroy(p);
}

/* Nothing left to search (both offloads given, or neither possible) or
 * a framework without them: refused, saying why. */
TEST(nothing_to_search_refused) {
  strata_plan_opts_t po;
  strata_plan_t *p = NULL;
  opts_of(&po, 80, 1);
  po.search_offload = 1;
  po.optimizer_offload = 0.5, po.offload_layers = 4;
  po.pp = 1, po.recompute = STRATA_RECOMPUTE_NONE;
  ASSERT_EQ(plan(&po, &p), STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "nothing to search");
  /* full recompute and no precision-aware optimizer: no offload can be
   * had */
  opts_of(&po, 80, 0);
  po.search_offload = 1, po.pp = 2, po.recompute = STRATA_RECOMPUTE_FULL;
  ASSERT_EQ(plan(&po, &p), STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "without full recompute");
  /* with it, the optimizer's share is searched there */
  po.precision_aware_optimizer = 1;
  ASSERT_OK(plan(&po, &p));
  strata_plan_destroy(p);
  /* DeepSpeed runs neither of Megatron-LM's offloads */
  opts_of(&po, 80, 0);
  po.search_offload = 1, po.framework = STRATA_FRAMEWORK_DEEPSPEED;
  ASSERT_EQ(plan(&po, &p), STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "--framework deepspeed");
}

/* The core attention's saved bytes of one layer of g on one of t ranks
 * sharing it, read from the trace (each op's module, intraop/modules.c). */
static double core_attn_bytes(const strata_graph_t *g, int t) {
  double s = 0;
  for (int i = 0; i < g->n_ops; i++)
    if (g->ops[i].block >= 0 &&
        (strata_op_modules(g, i) & STRATA_RCM_CORE_ATTN))
      s += (double)strata_op_saved_bytes(g, &g->ops[i]) *
           g->blocks[g->ops[i].block].repeat;
  return s / strata_graph_layers(g) / t;
}

/* --offload-modules core_attn (Megatron-LM's fine-grained activation
 * offloading) on one stage of llama3-8b at tp 2: the GPU keeps every
 * layer's core attention on the host but one layer's (the manager's
 * margin), the host holds it, and the copies of the layers' groups over
 * the host link show in the stage's forward only beyond its compute. */
TEST(fine_grained_offloading) {
  strata_plan_opts_t po;
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *a = NULL, *b = NULL;
  opts_of(&po, 80, 0);
  po.tp = 2, po.pp = 1, po.dp = 4, po.cp = 1;
  po.micro_batch = 1, po.vpp = 1, po.sequence_parallel = 1;
  po.recompute = STRATA_RECOMPUTE_NONE;
  ASSERT_OK(strata_model_load("llama3-8b", &po.gen, &g));
  ASSERT_OK(strata_cluster_load("dgx-h100:1", &c));
  ASSERT_OK(strata_pipeline_plan(g, c, &po, &a));
  po.offload_modules = STRATA_OFM_CORE_ATTN;
  ASSERT_OK(strata_pipeline_plan(g, c, &po, &b));
  ASSERT_EQ(b->offload_modules, STRATA_OFM_CORE_ATTN);
  int L = strata_graph_layers(g);
  double B = core_attn_bytes(g, 2), held = B * (L - 1);
  ASSERT(B > 0);
  const strata_mem_items_t *x = &a->ranks[0].mem, *y = &b->ranks[0].mem;
  ASSERT_NEAR(x->activations - y->activations, held, 1e-9, 1);
  ASSERT_NEAR(b->host_memory_gib * GIB, held, 1e-9, 1);
  ASSERT_NEAR(y->weights, x->weights, 0, 0);
  /* the copies: a layer's groups over the GPU's host link (PCIe here) at
   * the PCIe copies' efficiency, beside the forward */
  const strata_gpu_model_t *m = strata_cluster_gpu_model(c);
  double eff = strata_cluster_perf(c)->link_eff[STRATA_LEVEL_PCIE];
  double bw = (m->host_bandwidth > 0 ? m->host_bandwidth : m->pcie_bandwidth) *
              (eff > 0 && eff <= 1 ? eff : 1);
  double copy = B * L / bw, fa = a->stages[0].fwd_seconds;
  printf("  %.1f MiB a layer offloaded, %.2f GiB held on the host; copies "
         "%.1f ms beside a %.1f ms forward\n",
         B / 1048576, held / GIB, copy * 1e3, fa * 1e3);
  ASSERT_NEAR(b->stages[0].fwd_seconds, fa + (copy > fa ? copy - fa : 0), 1e-12,
              0);
  ASSERT(b->step_seconds >= a->step_seconds);
  strata_plan_destroy(a);
  strata_plan_destroy(b);
  /* tp 8 without sequence parallelism: the norms' and qkv_linear's inputs
   * are whole on every rank while the compute is an eighth, so the
   * copies (their bytes from what the host holds) outlast it */
  po.tp = 8, po.dp = 1, po.global_batch = 8;
  po.sequence_parallel = 0, po.offload_modules = 0;
  ASSERT_OK(strata_pipeline_plan(g, c, &po, &a));
  po.offload_modules = STRATA_OFM_ATTN_NORM | STRATA_OFM_QKV_LINEAR |
                       STRATA_OFM_CORE_ATTN | STRATA_OFM_ATTN_PROJ |
                       STRATA_OFM_MLP_NORM;
  ASSERT_OK(strata_pipeline_plan(g, c, &po, &b));
  copy = b->host_memory_gib * GIB / (L - 1) * L / bw;
  fa = a->stages[0].fwd_seconds;
  double ba = a->stages[0].bwd_seconds;
  printf("  tp 8, no sequence parallelism: copies %.1f ms beside a %.1f ms "
         "forward and %.1f ms backward\n",
         copy * 1e3, fa * 1e3, ba * 1e3);
  ASSERT(copy > fa);
  ASSERT_NEAR(b->stages[0].fwd_seconds, copy, 1e-9, 0);
  ASSERT_NEAR(b->stages[0].bwd_seconds, copy > ba ? copy : ba, 1e-9, 0);
  ASSERT(b->step_seconds > a->step_seconds);
  strata_plan_destroy(a);
  strata_plan_destroy(b);
  /* attn_proj alone: refused with Megatron-LM's reason */
  po.offload_modules = STRATA_OFM_ATTN_PROJ;
  ASSERT_EQ(strata_pipeline_plan(g, c, &po, &b), STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "needs core_attn too");
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

static const test_entry_t tests[] = {
    TEST_ENTRY(fine_grained_offloading),
    TEST_ENTRY(search_finds_what_fits),
    TEST_ENTRY(offload_not_chosen_when_not_needed),
    TEST_ENTRY(optimizer_share_needs_pao),
    TEST_ENTRY(search_offloads_modules_with_a_pipeline),
    TEST_ENTRY(given_offloads_kept),
    TEST_ENTRY(nothing_to_search_refused),
};

TEST_MAIN(tests)
