/*
 * test_traffic.c - the bytes of one step between devices (merge/traffic.c)
 * on small hand-built plans, against the closed forms of the ring,
 * all-to-all and pipeline algorithms: each kind's total, which pairs talk
 * (a ring's successor, an all-to-all's peers, the matching devices of
 * adjacent stages), symmetry where the algorithm is symmetric, and the
 * folding to nodes and pipeline ranks keeping every byte.
 */
#include <math.h>
#include <string.h>

#include "merge/merge_int.h"
#include "merge/traffic.h"
#include "strata/strata.h"
#include "testlib.h"

/* A Megatron-mode plan of pp ranks (vpp chunks each) of tp x cp GPUs on
 * one node each, dp replicas; `layers` layers per chunk; no embedding or
 * head unless `ends`.  Activation of a layer: 1 x 1024 x 256 x 2 bytes. */
static strata_plan_t *plan(int tp, int cp, int pp, int vpp, int dp, int layers,
                           int ends) {
  strata_plan_t *p = strata_calloc(1, sizeof *p);
  ASSERT(p);
  int K = pp * vpp, t = tp * cp;
  p->model = strata_strdup("t");
  p->cluster = strata_strdup("c");
  p->tp = tp, p->cp = cp, p->pp = pp, p->vpp = vpp, p->dp = dp;
  p->devices = t * pp * dp;
  p->micro_batch = 1, p->n_micro = 8, p->seq_len = 1024, p->hidden = 256;
  p->heads = 8, p->kv_heads = 8, p->layers = layers * K;
  p->zero_stage = 1, p->recipe = STRATA_RECIPE_MEGATRON;
  p->recompute = STRATA_RECOMPUTE_SELECTIVE;
  p->n_stages = K;
  p->stages = strata_calloc((size_t)K, sizeof *p->stages);
  p->ranks = strata_calloc((size_t)pp, sizeof *p->ranks);
  p->p2p_seconds = strata_calloc((size_t)K, sizeof(double));
  ASSERT(p->stages && p->ranks && p->p2p_seconds);
  for (int s = 0; s < K; s++) {
    strata_plan_stage_t *st = &p->stages[s];
    st->layer_begin = s * layers, st->layer_end = (s + 1) * layers;
    st->with_prologue = ends && s == 0, st->with_epilogue = ends && s == K - 1;
    st->nodes = 1, st->gpus_per_node = t, st->rank = s % pp;
    st->first_rank = st->rank * t * dp;
    strata_mesh_default(&st->mesh, t, 1);
  }
  for (int r = 0; r < pp; r++)
    p->ranks[r].mem.weights = 2e6 * (r + 1); /* 1e6 (r + 1) parameters */
  return p;
}

static void destroy(strata_plan_t *p) {
  strata_free(p->model);
  strata_free(p->cluster);
  strata_free(p->stages);
  strata_free(p->ranks);
  strata_free(p->p2p_seconds);
  strata_free(p);
}

#define ACT (1024.0 * 256 * 2)

static double cell(const st__traffic_t *t, int k, int i, int j) {
  return t->bytes[((size_t)k * t->n + i) * t->n + j];
}

static double kind_sum(const st__traffic_t *t, int k) {
  double s = 0;
  for (int i = 0; i < t->n; i++)
    for (int j = 0; j < t->n; j++)
      s += cell(t, k, i, j);
  return s;
}

static int symmetric(const st__traffic_t *t, int k) {
  for (int i = 0; i < t->n; i++)
    for (int j = 0; j < t->n; j++)
      if (fabs(cell(t, k, i, j) - cell(t, k, j, i)) >
          1e-9 * (1 + cell(t, k, i, j)))
        return 0;
  return 1;
}

/* tp 4 x dp 2: each GPU sends 8 (t-1)/t of a layer's activation per layer
 * and micro-batch to the next GPU of its tp group, and to no other. */
TEST(tp_ring) {
  strata_plan_t *p = plan(4, 1, 1, 1, 2, 3, 0);
  st__traffic_t t;
  ASSERT_OK(st__traffic(p, 8, 64, &t));
  ASSERT_EQ(t.fold, ST__FOLD_DEVICES);
  ASSERT_EQ(t.n, 8);
  double per = 8 * 3 * 8 * 0.75 * ACT; /* micro-batches, layers, 8f */
  ASSERT_NEAR(t.kind_bytes[ST__TR_TP], 8 * per, 1e-12, 0);
  ASSERT_NEAR(kind_sum(&t, ST__TR_TP), 8 * per, 1e-12, 0);
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++) {
      int next = i / 4 * 4 + (i % 4 + 1) % 4;
      ASSERT_NEAR(cell(&t, ST__TR_TP, i, j), j == next ? per : 0, 1e-12, 0);
    }
  ASSERT(!symmetric(&t, ST__TR_TP)); /* a ring of 4 goes one way */
  ASSERT_EQ(t.kind_bytes[ST__TR_PP], 0);
  ASSERT_EQ(t.kind_bytes[ST__TR_CP], 0);
  /* seconds: the pair's bytes over the node's 150 GB/s */
  ASSERT_NEAR(t.seconds[1], per / 150e9, 1e-12, 0);
  st__traffic_free(&t);
  /* sequence parallelism: 10f; full recompute adds the forward's 4f */
  p->sequence_parallel = 1;
  ASSERT_OK(st__traffic(p, 8, 64, &t));
  ASSERT_NEAR(t.kind_bytes[ST__TR_TP], 8 * per * 10 / 8, 1e-12, 0);
  st__traffic_free(&t);
  p->sequence_parallel = 0, p->recompute = STRATA_RECOMPUTE_FULL;
  ASSERT_OK(st__traffic(p, 8, 64, &t));
  ASSERT_NEAR(t.kind_bytes[ST__TR_TP], 8 * per * 12 / 8, 1e-12, 0);
  st__traffic_free(&t);
  destroy(p);
}

/* pp 4: n_micro x 2 (activation and gradient) x the boundary's bytes x
 * boundaries x the devices of a rank, only between matching devices of
 * adjacent ranks, both ways alike; interleaved, 2 chunks a rank: 7
 * boundaries, the last rank's back to the first. */
TEST(pp_boundaries) {
  strata_plan_t *p = plan(2, 1, 4, 1, 2, 2, 1);
  p->sequence_parallel = 1; /* the boundary is 1/tp of the activation */
  st__traffic_t t;
  ASSERT_OK(st__traffic(p, 4, 64, &t));
  double b = ACT / 2;
  ASSERT_NEAR(t.kind_bytes[ST__TR_PP], 8 * 2 * b * 3 * 4, 1e-12, 0);
  ASSERT(symmetric(&t, ST__TR_PP));
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++) {
      int adj = j == i + 4 || j == i - 4;
      ASSERT_NEAR(cell(&t, ST__TR_PP, i, j), adj ? 8 * b : 0, 1e-12, 0);
    }
  st__traffic_free(&t);
  destroy(p);
  p = plan(2, 1, 4, 2, 2, 1, 1);
  ASSERT_OK(st__traffic(p, 4, 64, &t));
  ASSERT_NEAR(t.kind_bytes[ST__TR_PP], 8 * 2 * ACT * 7 * 4, 1e-12, 0);
  ASSERT(cell(&t, ST__TR_PP, 12, 0) > 0); /* rank 3's chunk to rank 0's */
  ASSERT(symmetric(&t, ST__TR_PP));
  st__traffic_free(&t);
  destroy(p);
}

/* dp 4 over the 8 GPUs of tp 2: ZeRO 0 all-reduces 4-byte gradients,
 * 2 (d-1)/d x 4 P to the next replica's GPU of the same tp rank; ZeRO 1
 * reduce-scatters them and gathers 2-byte weights; dp 2 is symmetric. */
TEST(dp_ring) {
  strata_plan_t *p = plan(2, 1, 1, 1, 4, 2, 0);
  st__traffic_t t;
  p->zero_stage = 0;
  ASSERT_OK(st__traffic(p, 8, 64, &t));
  double P = 1e6, per = 2 * 0.75 * 4 * P;
  ASSERT_NEAR(t.kind_bytes[ST__TR_DP], 8 * per, 1e-12, 0);
  ASSERT_NEAR(cell(&t, ST__TR_DP, 1, 3), per, 1e-12, 0);
  ASSERT_NEAR(cell(&t, ST__TR_DP, 7, 1), per, 1e-12, 0);
  ASSERT_EQ(cell(&t, ST__TR_DP, 1, 2), 0);
  st__traffic_free(&t);
  p->zero_stage = 1;
  ASSERT_OK(st__traffic(p, 8, 64, &t));
  ASSERT_NEAR(t.kind_bytes[ST__TR_DP], 8 * 0.75 * (4 + 2) * P, 1e-12, 0);
  st__traffic_free(&t);
  destroy(p);
  p = plan(2, 1, 2, 1, 2, 2, 0);
  ASSERT_OK(st__traffic(p, 8, 64, &t));
  ASSERT(symmetric(&t, ST__TR_DP));
  /* rank 1 holds twice rank 0's parameters */
  ASSERT_NEAR(cell(&t, ST__TR_DP, 4, 6), 2 * cell(&t, ST__TR_DP, 0, 2), 1e-12,
              0);
  st__traffic_free(&t);
  destroy(p);
}

/* ep 4 over dp 4 (tp 1): each GPU sends S/ep to each of its 3 peers,
 * four all-to-alls per MoE layer and micro-batch, S its tokens x top-k x
 * hidden x 2 bytes. */
TEST(ep_all_to_all) {
  strata_plan_t *p = plan(1, 1, 1, 1, 4, 2, 0);
  p->experts = 8, p->ep = 4, p->etp = 1, p->topk = 2;
  st__traffic_t t;
  ASSERT_OK(st__traffic(p, 8, 64, &t));
  double per = 8 * 2 * 4 * (1024.0 * 2 * 256 * 2) / 4;
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++)
      ASSERT_NEAR(cell(&t, ST__TR_EP, i, j), i == j ? 0 : per, 1e-12, 0);
  ASSERT_NEAR(t.kind_bytes[ST__TR_EP], 4 * 3 * per, 1e-12, 0);
  ASSERT(symmetric(&t, ST__TR_EP));
  st__traffic_free(&t);
  destroy(p);
}

/* cp 2 x tp 2: each GPU passes its keys and values (2 x 2 bytes x its
 * half of the sequence x the kv width / tp) 3 (cp-1) times per layer and
 * micro-batch to its cp partner; dp runs over cp x dp. */
TEST(cp_ring) {
  strata_plan_t *p = plan(2, 2, 1, 1, 1, 2, 0);
  st__traffic_t t;
  ASSERT_OK(st__traffic(p, 8, 64, &t));
  double kv = 2 * 2 * 512.0 * 256 / 2, per = 8 * 2 * 3 * kv;
  ASSERT_NEAR(cell(&t, ST__TR_CP, 0, 2), per, 1e-12, 0);
  ASSERT_NEAR(cell(&t, ST__TR_CP, 3, 1), per, 1e-12, 0);
  ASSERT_NEAR(t.kind_bytes[ST__TR_CP], 4 * per, 1e-12, 0);
  ASSERT(cell(&t, ST__TR_DP, 0, 2) > 0); /* the cp pair syncs gradients */
  st__traffic_free(&t);
  destroy(p);
}

/* 128 GPUs (tp 8 x pp 2 x dp 8, 8 a node): past 64 cells per node, past
 * 8 per pipeline rank, every byte kept; a node's tp ring on its own
 * diagonal, the pipeline between the ranks' nodes. */
TEST(folding) {
  strata_plan_t *p = plan(8, 1, 2, 1, 8, 2, 1);
  st__traffic_t d, n, s;
  ASSERT_OK(st__traffic(p, 8, 1000, &d));
  ASSERT_OK(st__traffic(p, 8, 64, &n));
  ASSERT_OK(st__traffic(p, 8, 8, &s));
  ASSERT_EQ(d.fold, ST__FOLD_DEVICES);
  ASSERT_EQ(d.n, 128);
  ASSERT_EQ(n.fold, ST__FOLD_NODES);
  ASSERT_EQ(n.n, 16);
  ASSERT_EQ(s.fold, ST__FOLD_STAGES);
  ASSERT_EQ(s.n, 2);
  for (int k = 0; k < ST__TR_KINDS; k++) {
    ASSERT_NEAR(kind_sum(&n, k), kind_sum(&d, k), 1e-12, 0);
    ASSERT_NEAR(kind_sum(&s, k), kind_sum(&d, k), 1e-12, 0);
  }
  ASSERT(kind_sum(&d, ST__TR_TP) > 0 && kind_sum(&d, ST__TR_PP) > 0);
  /* node 3's tp ring: the sum of its devices' cells */
  double ring = 0;
  for (int i = 24; i < 32; i++)
    for (int j = 24; j < 32; j++)
      ring += cell(&d, ST__TR_TP, i, j);
  ASSERT_NEAR(cell(&n, ST__TR_TP, 3, 3), ring, 1e-12, 0);
  ASSERT(ring > 0);
  ASSERT_NEAR(cell(&n, ST__TR_PP, 3, 11), cell(&n, ST__TR_PP, 11, 3), 1e-12, 0);
  ASSERT(cell(&n, ST__TR_PP, 3, 11) > 0);
  ASSERT_EQ(cell(&n, ST__TR_PP, 3, 12), 0);
  ASSERT_EQ(cell(&s, ST__TR_PP, 0, 0), 0);
  ASSERT_NEAR(cell(&s, ST__TR_TP, 0, 0) + cell(&s, ST__TR_TP, 1, 1),
              kind_sum(&d, ST__TR_TP), 1e-12, 0);
  st__traffic_free(&d);
  st__traffic_free(&n);
  st__traffic_free(&s);
  destroy(p);
}

/* The links' bandwidths: tp 2 x cp 2 on one node (a 2-D mesh of
 * NVLink-class axes) and pp 2 over two nodes: inside a node the mesh's
 * links, across nodes what the p2p took (a layer's activation over the
 * plan's p2p time), not the mesh's outer axis, which is the node's too. */
TEST(link_bandwidths) {
  strata_plan_t *p = plan(2, 2, 2, 1, 1, 2, 0);
  st__traffic_t t;
  for (int s = 0; s < 2; s++) /* 150 GB/s axes */
    strata_mesh_default(&p->stages[s].mesh, 2, 2);
  p->p2p_seconds[0] = ACT / 2 / 25e9;   /* cp's half over 25 GB/s */
  ASSERT_OK(st__traffic(p, 4, 64, &t)); /* 4 GPUs a node: a rank each */
  ASSERT_NEAR(t.intra_bw, 150e9, 1e-12, 0);
  ASSERT_NEAR(t.inter_bw, 25e9, 1e-9, 0);
  st__traffic_free(&t);
  destroy(p);
}

TEST(bad_plans) {
  st__traffic_t t;
  strata_plan_t *p = plan(1, 1, 1, 1, 1, 1, 0);
  ASSERT_EQ(st__traffic(NULL, 8, 64, &t), STRATA_EINVAL);
  p->n_stages = 0;
  ASSERT_EQ(st__traffic(p, 8, 64, &t), STRATA_EINVAL);
  ASSERT(!t.bytes);
  p->n_stages = 1;
  ASSERT_OK(st__traffic(p, 8, 64, &t)); /* one GPU: nothing sent */
  for (int k = 0; k < ST__TR_KINDS; k++)
    ASSERT_EQ(t.kind_bytes[k], 0);
  st__traffic_free(&t);
  st__traffic_free(NULL);
  destroy(p);
}

static const test_entry_t tests[] = {
    TEST_ENTRY(tp_ring),       TEST_ENTRY(pp_boundaries),   TEST_ENTRY(dp_ring),
    TEST_ENTRY(ep_all_to_all), TEST_ENTRY(cp_ring),         TEST_ENTRY(folding),
    TEST_ENTRY(bad_plans),     TEST_ENTRY(link_bandwidths),
};
TEST_MAIN(tests)
