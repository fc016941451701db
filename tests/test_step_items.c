/*
 * test_step_items.c - where a step's time goes (docs/cost-model.md, "The
 * step's items"), computed by hand from the plan's own figures and held
 * to what strata reports:
 *
 *  - each rank's work: micro-batches x its chunks' forward and backward
 *    (their stage results split them into compute, collectives, ring
 *    attention's exchange, the experts' all-to-all and the MoE host
 *    time), its blocking sends but
 *    the one after its last backward, and its exposed gradient sync;
 *  - the items are the busiest rank's, and the bubble the time it idles
 *    before the last rank ends with its exposed sync (the least any rank
 *    idles); they add up to the step within 1e-9 relative;
 *  - one case of each kind: dense, MoE with ep across nodes, cp and vpp,
 *    and deepseek-v3's 16-stage pipeline, whose bubble is its fill and
 *    drain (the first chunks' forwards and backwards, sends included).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "strata/strata.h"
#include "testlib.h"

typedef struct {
  const char *model, *cluster;
  int tp, pp, dp, cp, ep, vpp, micro, global, first, last, seq;
} case_t;

static strata_plan_t *estimate(const case_t *k) {
  strata_plan_opts_t po;
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_init(&po);
  po.quiet = 1;
  po.model_spec = k->model;
  if (k->seq) po.gen.seq = k->seq;
  po.tp = k->tp, po.pp = k->pp, po.dp = k->dp;
  po.cp = k->cp, po.ep = k->ep, po.etp = k->ep ? 1 : 0;
  po.vpp = k->vpp, po.first_layers = k->first, po.last_layers = k->last;
  po.micro_batch = po.gen.micro_batch = k->micro;
  po.global_batch = k->global;
  po.sequence_parallel = k->tp > 1;
  po.no_memory_check = 1;
  ASSERT_OK(strata_model_load(k->model, &po.gen, &g));
  ASSERT_OK(strata_cluster_load(k->cluster, &c));
  ASSERT_OK(strata_pipeline_plan(g, c, &po, &p));
  ASSERT_OK(strata_merge_stitch(p, g, c));
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return p;
}

/* One rank's work by hand: its items and their sum (busy before its end
 * plus its exposed sync). */
static double rank_work(const strata_plan_t *p, int r, strata_step_items_t *w) {
  int K = p->n_stages, m = p->n_micro, blocking = !p->overlap_p2p;
  double sends = 0;
  memset(w, 0, sizeof *w);
  for (int k = r; k < K; k += p->pp) {
    const strata_plan_stage_t *s = &p->stages[k];
    const strata_stage_result_t *x = s->result;
    ASSERT(x != NULL);
    double comm = x->fwd_comm_seconds + x->bwd_comm_seconds;
    double a2a = x->fwd_a2a_seconds + x->bwd_a2a_seconds;
    double host = x->fwd_host_seconds + x->bwd_host_seconds;
    double ring = x->fwd_cp_seconds + x->bwd_cp_seconds;
    /* the stage's times are its result's */
    ASSERT_NEAR(s->fwd_seconds + s->bwd_seconds,
                x->fwd_seconds + x->bwd_seconds, 1e-12, 0);
    w->compute += m * (s->fwd_seconds + s->bwd_seconds - comm - host);
    w->tp_comm += m * (comm - a2a - ring);
    w->cp_comm += m * ring;
    w->ep_a2a += m * a2a;
    w->host += m * host;
    if (blocking && k + 1 < K) sends += m * p->p2p_seconds[k];
    if (blocking && k > 0) sends += m * p->p2p_seconds[k - 1];
  }
  /* the send after its last backward (chunk r's, to chunk r - 1) is
   * after its end */
  w->p2p = sends - (blocking && r > 0 ? p->p2p_seconds[r - 1] : 0);
  w->dp_sync = p->ranks[r].exposed_sync;
  return w->compute + w->tp_comm + w->cp_comm + w->ep_a2a + w->host + w->p2p +
         w->dp_sync;
}

static double items_sum(const strata_step_items_t *it) {
  return it->compute + it->tp_comm + it->cp_comm + it->ep_a2a + it->host +
         it->p2p + it->bubble + it->dp_sync + it->param_gather + it->optimizer +
         it->overhead;
}

/* The items by hand against strata's; the busiest rank into *busiest. */
static void check_items(const strata_plan_t *p, const char *what,
                        int *busiest) {
  strata_step_items_t w, best = {0};
  double most = -1, to = 0;
  int b = 0;
  ASSERT(p->zero_stage < 2); /* no collectives inside the backward */
  for (int r = 0; r < p->pp; r++) {
    double x = rank_work(p, r, &w);
    if (x > most * (1 + 1e-12)) most = x, b = r, best = w;
    double e = p->ranks[r].end_seconds + p->ranks[r].exposed_sync;
    if (e > to) to = e;
  }
  const strata_step_items_t *it = &p->step_items;
  best.bubble = to - most;
  /* no rank idles less than the busiest */
  for (int r = 0; r < p->pp; r++)
    ASSERT(to - rank_work(p, r, &w) >= best.bubble - 1e-12);
  printf("  %s: rank %d of %d; compute %.3f + tp comm %.3f + cp comm %.3f + "
         "ep a2a %.3f + "
         "moe host %.3f + pp p2p %.3f + bubble %.3f + dp sync %.3f + rest "
         "%.3f = %.3f ms\n",
         what, b, p->pp, it->compute * 1e3, it->tp_comm * 1e3,
         it->cp_comm * 1e3, it->ep_a2a * 1e3, it->host * 1e3, it->p2p * 1e3,
         it->bubble * 1e3, it->dp_sync * 1e3,
         (it->param_gather + it->optimizer + it->overhead) * 1e3,
         p->step_seconds * 1e3);
  ASSERT_NEAR(it->compute, best.compute, 1e-9, 0);
  ASSERT_NEAR(it->tp_comm, best.tp_comm, 1e-9, 1e-15);
  ASSERT_NEAR(it->cp_comm, best.cp_comm, 1e-9, 0);
  ASSERT_NEAR(it->ep_a2a, best.ep_a2a, 1e-9, 0);
  ASSERT_NEAR(it->host, best.host, 1e-9, 0);
  ASSERT_NEAR(it->p2p, best.p2p, 1e-9, 1e-15);
  ASSERT_NEAR(it->dp_sync, best.dp_sync, 1e-9, 0);
  ASSERT_NEAR(it->bubble, best.bubble, 1e-9, 1e-12);
  /* after the pipeline: the gather, the optimizer and the overhead */
  ASSERT_NEAR(p->step_seconds,
              to + it->param_gather + it->optimizer + it->overhead, 1e-12, 0);
  ASSERT_NEAR(items_sum(it), p->step_seconds, 1e-9, 0);
  *busiest = b;
}

/* llama3-8b, tp 2, pp 4 on one node, 8 micro-batches, 1F1B with
 * Megatron-LM's blocking sends: their time is an item, not bubble. */
TEST(dense_items_by_hand) {
  case_t k = {"llama3-8b", "dgx-h100:1", 2, 4, 1, 0, 0, 1, 1, 8, 0, 0, 0};
  strata_plan_t *p = estimate(&k);
  int b;
  check_items(p, "llama3-8b tp 2 pp 4", &b);
  ASSERT(p->step_items.p2p > 0);
  ASSERT_NEAR(p->step_items.ep_a2a, 0, 0, 0);
  ASSERT(p->step_items.bubble > 0);
  strata_plan_destroy(p);
}

/* qwen3-30b-a3b on four nodes, pp 2, dp 16, ep 16: each stage's experts
 * spread over two nodes, their all-to-all an item of its own. */
TEST(moe_ep_across_nodes_items_by_hand) {
  case_t k = {
      "qwen3-30b-a3b", "dgx-h100:4", 1, 2, 16, 0, 16, 1, 1, 128, 0, 0, 0};
  strata_plan_t *p = estimate(&k);
  int b;
  check_items(p, "qwen3-30b-a3b pp 2 ep 16 over 2 nodes", &b);
  ASSERT(p->step_items.ep_a2a > 0);
  ASSERT(p->step_items.host > 0);
  strata_plan_destroy(p);
}

/* llama3-8b at 8K tokens on four nodes, tp 8, cp 2 (the ring across two
 * nodes), pp 2: ring attention's exposed exchange is an item of its own,
 * the attention ops' own collectives (docs/cost-model.md §17: (cp - 1)
 * max(0, p2p(K + V) - fwd / cp) forward, with 2 (K + V) backward), every
 * layer of the busiest rank's stage, every micro-batch. */
TEST(cp_items_by_hand) {
  case_t k = {"llama3-8b", "dgx-h100:4", 8, 2, 1, 2, 0, 1, 1, 8, 0, 0, 8192};
  strata_plan_t *p = estimate(&k);
  int b;
  ASSERT_EQ(p->cp, 2);
  check_items(p, "llama3-8b tp 8 cp 2 pp 2", &b);
  double ring = 0; /* the ops' comm_seconds: repeat x one micro-batch's */
  const strata_stage_result_t *x = p->stages[b].result;
  for (int i = 0; i < x->n_ops; i++)
    if (strstr(x->ops[i].strategy, "ring")) ring += x->ops[i].comm_seconds;
  printf("  the ring ops' exchange %.3f ms a micro-batch\n", ring * 1e3);
  ASSERT(ring > 0);
  ASSERT_NEAR(p->step_items.cp_comm, p->n_micro * ring, 1e-9, 0);
  ASSERT(p->step_items.tp_comm > 0);
  strata_plan_destroy(p);
}

/* llama3-8b, tp 2, pp 4, vpp 2: the interleaved schedule overlaps its
 * sends (no item), its bubble the simulation's. */
TEST(vpp_items_by_hand) {
  case_t k = {"llama3-8b", "dgx-h100:1", 2, 4, 1, 0, 0, 2, 1, 8, 0, 0, 0};
  strata_plan_t *p = estimate(&k);
  int b;
  ASSERT_EQ(p->vpp, 2);
  check_items(p, "llama3-8b tp 2 pp 4 vpp 2", &b);
  ASSERT_NEAR(p->step_items.p2p, 0, 0, 0);
  strata_plan_destroy(p);
}

/* deepseek-v3's 16-stage pipeline of 64 micro-batches (docs/cost-model.md
 * "The step's items"): the last stage is the busiest, and its bubble is
 * the first micro-batch's way to it (the forwards and sends of the 15
 * stages before) and the last one's way back (their backwards and sends),
 * with the exposed syncs of the first rank and of it. */
TEST(deepseek_v3_bubble_is_fill_and_drain) {
  case_t k = {
      "deepseek-v3", "dgx-h100:128", 2, 16, 32, 0, 64, 1, 1, 2048, 3, 2, 0};
  strata_plan_t *p = estimate(&k);
  int b, P = p->pp;
  check_items(p, "deepseek-v3 pp 16 ep 64", &b);
  ASSERT_EQ(b, P - 1);
  double fill = 0, drain = 0;
  for (int s = 0; s < P - 1; s++) {
    fill += p->stages[s].fwd_seconds + p->p2p_seconds[s];
    drain += p->stages[s].bwd_seconds + p->p2p_seconds[s];
  }
  /* the busiest rank's last backward ends the fill and its work after
   * it; its send back starts the drain */
  double want =
      fill + drain + p->ranks[0].exposed_sync - p->ranks[P - 1].exposed_sync;
  printf("  fill %.1f ms, drain %.1f ms: bubble %.1f ms (%.1f %% of the "
         "step)\n",
         fill * 1e3, drain * 1e3, p->step_items.bubble * 1e3,
         100 * p->step_items.bubble / p->step_seconds);
  ASSERT_NEAR(p->step_items.bubble, want, 1e-9, 0);
  ASSERT(p->step_items.ep_a2a > 0);
  strata_plan_destroy(p);
}

static const test_entry_t tests[] = {
    TEST_ENTRY(dense_items_by_hand),
    TEST_ENTRY(moe_ep_across_nodes_items_by_hand),
    TEST_ENTRY(cp_items_by_hand),
    TEST_ENTRY(vpp_items_by_hand),
    TEST_ENTRY(deepseek_v3_bubble_is_fill_and_drain),
};

TEST_MAIN(tests)
