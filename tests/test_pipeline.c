/*
 * test_pipeline.c - the stage-split dynamic program against brute force,
 * Megatron's split, determinism of whole plans across thread counts, the
 * subproblem cache (cold, warm, damaged, cut short, of another layout,
 * foreign; merged writes from concurrent runs, round trip of every
 * field), and a cluster too small.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pipeline/search.h"
#include "pipeline/sub.h"
#include "strata/strata.h"
#include "testlib.h"

/* ---- the split DP ---- */

typedef struct {
  int L, p;
  double t[8][16]; /* [stage][n] */
} table_t;

static double table_cost(void *ctx, int s, int n) {
  table_t *t = ctx;
  return t->t[s][n];
}

static uint64_t rng = 88172645463325252ULL;
static double urand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}

TEST(split_dp_equals_brute_force) {
  int cases = 0, infeasible = 0;
  for (int it = 0; it < 400; it++) {
    table_t tb;
    tb.L = 1 + (int)(urand() * 12);
    tb.p = 1 + (int)(urand() * (tb.L < 6 ? tb.L : 6));
    int B = 1 + (int)(urand() * 16);
    int shape = it % 3; /* random, linear-ish, with holes (no fit) */
    for (int s = 0; s < tb.p; s++)
      for (int n = 0; n <= tb.L; n++) {
        double v = shape == 1 ? n * (1 + 0.1 * s) + urand() : 1 + urand() * 9;
        if (shape == 2 && urand() < 0.3) v = INFINITY;
        tb.t[s][n] = v;
      }
    int a[8], b[8];
    double dp = st__split_dp(tb.L, tb.p, B, 0, table_cost, &tb, a);
    double bf = st__split_brute(tb.L, tb.p, B, table_cost, &tb, b);
    if (!isfinite(bf)) {
      ASSERT(!isfinite(dp));
      infeasible++;
      continue;
    }
    ASSERT_NEAR(dp, bf, 1e-12, 1e-12);
    /* the split returned attains the optimum */
    double sum = 0, mx = 0;
    int total = 0;
    for (int s = 0; s < tb.p; s++) {
      ASSERT(a[s] >= 1);
      double t = tb.t[s][a[s]];
      sum += t;
      mx = t > mx ? t : mx;
      total += a[s];
    }
    ASSERT_EQ(total, tb.L);
    ASSERT_NEAR(sum + (B - 1) * mx, bf, 1e-12, 1e-12);
    cases++;
  }
  ASSERT(cases >= 200);
  ASSERT(infeasible > 0);
}

/* Stages of linear cost (node groups of different speeds, the first and
 * last holding the embedding and head, each with a memory cap): the
 * greedy split under each bottleneck against every split. */
typedef struct {
  double a[8], e[8];
  int u[8];
} lin_case_t;

static double lin_cost(void *ctx, int s, int n) {
  const lin_case_t *c = ctx;
  return n <= c->u[s] ? c->a[s] * n + c->e[s] : INFINITY;
}

TEST(split_linear_equals_brute_force) {
  static lin_case_t c;
  int cases = 0, infeasible = 0, uneven = 0;
  for (int it = 0; it < 400; it++) {
    int L = 2 + (int)(urand() * 10), P = 1 + (int)(urand() * 5);
    int B = 1 + (int)(urand() * 12);
    if (P > L) P = L;
    double fast = 0.5 + urand(), slow = fast * (1.5 + 2 * urand());
    int cut = (int)(urand() * (P + 1)); /* stages before it on the slow group */
    for (int s = 0; s < P; s++) {
      c.a[s] = s < cut ? slow : fast;
      c.e[s] = (s == 0 ? urand() : 0) + (s == P - 1 ? 2 * urand() : 0);
      c.u[s] = urand() < 0.3 ? 1 + (int)(urand() * L) : L;
    }
    int n1[8] = {0}, n2[8] = {0};
    double lin = st__split_linear(L, P, B, c.a, c.e, c.u, n1);
    double bf = st__split_brute(L, P, B, lin_cost, &c, n2);
    if (!isfinite(bf)) {
      ASSERT(!isfinite(lin));
      infeasible++;
      continue;
    }
    ASSERT_NEAR(lin, bf, 1e-12, 1e-12);
    /* the split it returns covers the layers, keeps the caps, attains it */
    int k = 0;
    double sum = 0, mx = 0;
    for (int s = 0; s < P; s++) {
      ASSERT(n1[s] >= 1 && n1[s] <= c.u[s]);
      double t = c.a[s] * n1[s] + c.e[s];
      sum += t;
      mx = t > mx ? t : mx;
      k += n1[s];
      if (s && n1[s] != n1[0]) uneven++;
    }
    ASSERT_EQ(k, L);
    ASSERT_NEAR(sum + (B - 1) * mx, lin, 1e-12, 1e-12);
    cases++;
  }
  printf("  %d cases equal to brute force, %d infeasible, %d uneven stages\n",
         cases, infeasible, uneven);
  ASSERT(cases > 200 && infeasible > 0 && uneven > 0);
}

/* Stages of layers that differ (a model's dense layers, then MoE ones, on
 * two groups of GPUs): the prefix-sum DP against every composition of the
 * layers, with caps that depend on where a stage starts. */
typedef struct {
  int L, P, B;
  double pre[8][14], e[8];
  int cap[8 * 13];
  double best;
} pcase_t;

static void prefix_brute(pcase_t *c, int s, int k, double sum, double mx) {
  if (s == c->P) {
    if (k == c->L && sum + (c->B - 1) * mx < c->best)
      c->best = sum + (c->B - 1) * mx;
    return;
  }
  for (int n = 1; k + n <= c->L - (c->P - s - 1); n++) {
    if (n > c->cap[s * c->L + k]) break;
    double t = c->e[s] + c->pre[s][k + n] - c->pre[s][k];
    prefix_brute(c, s + 1, k + n, sum + t, t > mx ? t : mx);
  }
}

TEST(split_prefix_equals_brute_force) {
  static pcase_t c;
  int cases = 0, infeasible = 0;
  for (int it = 0; it < 400; it++) {
    c.L = 2 + (int)(urand() * 11), c.P = 1 + (int)(urand() * 6);
    c.B = 1 + (int)(urand() * 12);
    if (c.P > c.L) c.P = c.L;
    int dense = (int)(urand() * 4); /* cheaper layers first */
    double fast = 0.5 + urand(), slow = fast * (1.5 + 2 * urand());
    int cut = (int)(urand() * (c.P + 1));
    for (int s = 0; s < c.P; s++) {
      double a = s < cut ? slow : fast;
      c.pre[s][0] = 0;
      for (int l = 0; l < c.L; l++)
        c.pre[s][l + 1] = c.pre[s][l] + a * (l < dense ? 0.4 : 1.0);
      c.e[s] = (s == 0 ? urand() : 0) + (s == c.P - 1 ? 2 * urand() : 0);
      for (int k = 0; k < c.L; k++) /* memory: fewer heavy layers fit */
        c.cap[s * c.L + k] = urand() < 0.3 ? 1 + (int)(urand() * c.L) : c.L - k;
    }
    const double *pre[8];
    for (int s = 0; s < c.P; s++)
      pre[s] = c.pre[s];
    int n[8] = {0};
    double dp = st__split_prefix(c.L, c.P, c.B, pre, c.e, c.cap, n);
    c.best = INFINITY;
    prefix_brute(&c, 0, 0, 0, 0);
    if (!isfinite(c.best)) {
      ASSERT(!isfinite(dp));
      infeasible++;
      continue;
    }
    ASSERT_NEAR(dp, c.best, 1e-12, 1e-12);
    int k = 0;
    double sum = 0, mx = 0;
    for (int s = 0; s < c.P; s++) {
      ASSERT(n[s] >= 1 && n[s] <= c.cap[s * c.L + k]);
      double t = c.e[s] + c.pre[s][k + n[s]] - c.pre[s][k];
      sum += t;
      mx = t > mx ? t : mx;
      k += n[s];
    }
    ASSERT_EQ(k, c.L);
    ASSERT_NEAR(sum + (c.B - 1) * mx, dp, 1e-12, 1e-12);
    cases++;
  }
  printf("  %d cases equal to brute force, %d infeasible\n", cases, infeasible);
  ASSERT(cases > 200 && infeasible > 0);
}

/* Interleaved: rank r's v chunks each hold its layers / v; chunk k runs
 * on rank k mod pp (126 layers, pp 16, 2 virtual stages, 6 on the first
 * rank and 8 on the last: chunks 3, 4 x 14, 4 | 3, 4 x 14, 4). */
TEST(split_interleaved_uneven) {
  st__search_t S;
  st__cfg_t cf;
  int n[ST__MAX_PP];
  memset(&S, 0, sizeof S);
  memset(&cf, 0, sizeof cf);
  S.L = 126;
  cf.p = 16, cf.v = 2, cf.first = 6, cf.last = 8;
  ASSERT_EQ(st__split_of(&S, &cf, n), 32);
  for (int k = 0; k < 32; k++)
    ASSERT_EQ(n[k], k % 16 == 0 ? 3 : 4);
  cf.first = 8, cf.last = 6; /* middle 112 / 14 = 8 */
  ASSERT_EQ(st__split_of(&S, &cf, n), 32);
  ASSERT_EQ(n[15], 3);
  ASSERT_EQ(n[31], 3);
  cf.first = 7, cf.last = 7; /* 7 is not a multiple of 2 */
  ASSERT_EQ(st__split_of(&S, &cf, n), -1);
  cf.v = 7; /* 7 + 7 and 8 per middle rank: 8 is not a multiple of 7 */
  ASSERT_EQ(st__split_of(&S, &cf, n), -1);
  cf.v = 2, cf.first = cf.last = 0; /* equal ranks: 126 / 16 is not whole */
  ASSERT_EQ(st__split_of(&S, &cf, n), -1);
  S.L = 128; /* equal: 4 per chunk */
  ASSERT_EQ(st__split_of(&S, &cf, n), 32);
  for (int k = 0; k < 32; k++)
    ASSERT_EQ(n[k], 4);
}

/* The schedule stopped at a cut (st__sched_cut, for the search's exact
 * costing) never stops one whose step ends under the cut, and then gives
 * the whole schedule's ends: random pipelines, interleaved or not, with
 * blocking or overlapped p2p, each rank adding its own time after its
 * end (the step: the latest end plus it); a cut just above the step runs
 * it whole, one far below stops it. */
TEST(schedule_cut_is_exact) {
  double fwd[64], bwd[64], p2p[64], after[16];
  st__sched_buf_t B;
  int stopped = 0, cases = 0;
  memset(&B, 0, sizeof B);
  for (int t = 0; t < 3000; t++) {
    strata_sched_t S;
    memset(&S, 0, sizeof S);
    S.pp = 1 + (int)(urand() * 8);
    S.vpp = S.pp > 1 && urand() < 0.5 ? 2 + (int)(urand() * 3) : 1;
    S.n_micro = S.pp * (1 + (int)(urand() * 4));
    S.blocking_p2p = urand() < 0.5;
    int K = S.pp * S.vpp;
    for (int k = 0; k < K; k++) {
      fwd[k] = 0.1 + urand(), bwd[k] = fwd[k] * (1 + 2 * urand());
      p2p[k] = urand() < 0.3 ? 0 : 0.3 * urand();
    }
    for (int r = 0; r < S.pp; r++)
      after[r] = urand() < 0.5 ? 0 : 2 * urand();
    S.fwd = fwd, S.bwd = bwd, S.p2p = K > 1 ? p2p : NULL;
    ASSERT_OK(strata_sched_run(&S));
    double step = 0, end[16];
    for (int r = 0; r < S.pp; r++) {
      end[r] = S.rank_end[r];
      if (end[r] + after[r] > step) step = end[r] + after[r];
    }
    strata_sched_free(&S);
    ASSERT_EQ(st__sched_cut(&S, &B, after, step * (1 + 1e-12)), 0);
    for (int r = 0; r < S.pp; r++)
      ASSERT(S.rank_end[r] == end[r]);
    int rc = st__sched_cut(&S, &B, after, step * 0.7);
    ASSERT(rc == 0 || rc == 1);
    stopped += rc == 1;
    cases++;
  }
  st__sched_buf_free(&B);
  printf("  %d schedules run whole under a cut above their step, %d stopped "
         "under one 30 %% below\n",
         cases, stopped);
  ASSERT(stopped > cases / 2);
}

/* The generated layouts' extras (layouts.c) are those the rule gives when
 * followed one layer at a time: each to the least loaded rank with a
 * middle chunk left (ties: the later rank), on its latest such chunk.
 * Walked here as a plain scan over every rank per layer, on every layer
 * count, rank count and virtual stages up to 40 chunks, with the
 * embedding's and the loss's weights whole (ties) and fractional. */
static int greedy_layout(int L, int p, int v, const double *w, int i, int *n) {
  int K = p * v, q = L / K, a = q - 1 + i / 3, b = q - 2 + i % 3;
  int R = L - a - b, next[64];
  double load[64];
  if (p < 2 || K < 3 || K > L || a < 0 || b < 0 || R < K - 2) return -1;
  for (int r = 0; r < p; r++)
    load[r] = 0, next[r] = (v - 1) * p + r;
  for (int k = 0; k < K; k++) {
    n[k] = k == 0 ? a : k == K - 1 ? b : R / (K - 2);
    load[k % p] += n[k];
  }
  load[0] += w[0];
  load[p - 1] += w[1];
  for (int x = 0; x < R % (K - 2); x++) {
    int best = -1;
    for (int r = 0; r < p; r++) {
      while (next[r] >= 0 && (next[r] == 0 || next[r] == K - 1))
        next[r] -= p;
      if (next[r] < 0) continue;
      if (best < 0 || load[r] < load[best] ||
          (load[r] == load[best] && r > best))
        best = r;
    }
    if (best < 0) return -1;
    n[next[best]]++;
    load[best] += 1;
    next[best] -= p;
  }
  for (int k = p; k < K; k++) /* the first/last form: not a layout */
    if (n[k] != n[k % p]) return K;
  for (int r = 2; r < p - 1; r++)
    if (n[r] != n[1]) return K;
  return -1;
}

TEST(layout_candidates_are_the_greedy) {
  const double ws[][2] = {{0, 0},     {1, 1},    {2, 0},     {0.37, 3.2},
                          {1.5, 0.5}, {3, 2.71}, {0.02, 0.9}};
  int n[64], m[64], cases = 0, layouts = 0;
  for (int L = 3; L <= 90; L++)
    for (int p = 2; p <= 12; p++)
      for (int v = 1; p * v <= 40 && p * v <= L; v++)
        for (int x = 0; x < (int)(sizeof ws / sizeof ws[0]); x++)
          for (int i = 0; i < ST__LAYOUTS; i++) {
            int K = st__layout_fill(L, p, v, ws[x], i, n);
            int G = greedy_layout(L, p, v, ws[x], i, m);
            ASSERT_EQ(K, G);
            for (int k = 0; k < K; k++)
              ASSERT_EQ(n[k], m[k]);
            cases++;
            layouts += K > 0;
          }
  printf("  %d candidates, %d layouts, each as the greedy gives it\n", cases,
         layouts);
  ASSERT(layouts > 10000);
}

/* DeepSpeed's PipelineModule's splits (ds_partition.c) over Megatron-
 * DeepSpeed's GPTModelPipe specs, against deepspeed/runtime/utils.py's
 * partition_balanced and partition_uniform run on the same specs: BLOOM's
 * 70 layers over 12 stages (its run: 'type:transformer|embedding', 5 on
 * each end stage), Llama 3 405B's 126 over 16. */
TEST(deepspeed_partition_methods) {
  int n[16];
  static const int tt[12] = {6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5, 5};
  static const int te[12] = {5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5};
  static const int un[12] = {5, 7, 7, 6, 6, 6, 6, 6, 6, 6, 6, 3};
  ASSERT_EQ(st__ds_partition(NULL, 70, ST__DS_TIED, STRATA_DS_TYPE_TRANSFORMER,
                             12, n),
            12);
  for (int s = 0; s < 12; s++)
    ASSERT_EQ(n[s], tt[s]);
  ASSERT_EQ(st__ds_partition(NULL, 70, ST__DS_TIED, 0, 12, n),
            12); /* the default */
  ASSERT_EQ(n[11], 5);
  ASSERT_EQ(st__ds_partition(NULL, 70, ST__DS_TIED,
                             STRATA_DS_TYPE_TRANSFORMER_EMBEDDING, 12, n),
            12);
  for (int s = 0; s < 12; s++)
    ASSERT_EQ(n[s], te[s]);
  ASSERT_EQ(st__ds_partition(NULL, 70, ST__DS_TIED, STRATA_DS_UNIFORM, 12, n),
            12);
  for (int s = 0; s < 12; s++)
    ASSERT_EQ(n[s], un[s]);
  /* two embedding specs over 12 stages: stages with no layer */
  ASSERT_EQ(
      st__ds_partition(NULL, 70, ST__DS_TIED, STRATA_DS_TYPE_EMBEDDING, 12, n),
      -1);
  /* an untied head (LMHeadPipe) matches no 'embedding': 71 weights, the
   * last stage's 5 layers the lightest */
  ASSERT_EQ(st__ds_partition(NULL, 70, 0, STRATA_DS_TYPE_TRANSFORMER_EMBEDDING,
                             12, n),
            12);
  for (int s = 0; s < 12; s++)
    ASSERT_EQ(n[s], te[s]);
  ASSERT_EQ(st__ds_partition(NULL, 126, 0, STRATA_DS_TYPE_TRANSFORMER, 16, n),
            16);
  for (int s = 0; s < 16; s++)
    ASSERT_EQ(n[s], s < 14 ? 8 : 7);
  ASSERT_EQ(
      st__ds_partition(NULL, 8, ST__DS_TIED, STRATA_DS_TYPE_TRANSFORMER, 9, n),
      -1);
  /* a mixture of experts adds _calculate_moe_loss after the layers: one
   * spec more for 'uniform' (76 over 12), none for 'type:' */
  static const int um[12] = {5, 7, 7, 7, 6, 6, 6, 6, 6, 6, 6, 2};
  ASSERT_EQ(st__ds_partition(NULL, 70, ST__DS_TIED | ST__DS_MOE,
                             STRATA_DS_UNIFORM, 12, n),
            12);
  for (int s = 0; s < 12; s++)
    ASSERT_EQ(n[s], um[s]);
  ASSERT_EQ(st__ds_partition(NULL, 32, ST__DS_TIED | ST__DS_MOE,
                             STRATA_DS_TYPE_TRANSFORMER, 4, n),
            4);
  for (int s = 0; s < 4; s++)
    ASSERT_EQ(n[s], 8);
  /* the head's spec on a stage of its own (type:embedding over 2) */
  ASSERT_EQ(
      st__ds_partition(NULL, 8, ST__DS_TIED, STRATA_DS_TYPE_EMBEDDING, 2, n),
      -1);
}

TEST(split_megatron_rule) {
  int n[128];
  ASSERT_OK(st__split_megatron(96, 16, n));
  for (int s = 0; s < 16; s++)
    ASSERT_EQ(n[s], 6);
  /* 126 layers on 16 stages: middle stages 8, first and last 7 */
  ASSERT_OK(st__split_megatron(126, 16, n));
  ASSERT_EQ(n[0], 7);
  ASSERT_EQ(n[15], 7);
  for (int s = 1; s < 15; s++)
    ASSERT_EQ(n[s], 8);
  ASSERT(st__split_megatron(4, 5, n) != 0);
}

/* ---- whole plans ---- */

static strata_graph_t *small_model(void) {
  strata_gen_opts_t o;
  strata_graph_t *g = NULL;
  strata_gen_opts_keep(&o);
  o.layers = 8;
  o.hidden = 512;
  o.heads = 8;
  o.seq = 256;
  o.vocab = 4096;
  if (strata_model_load("gpt", &o, &g)) return NULL;
  return g;
}

/* 'parameters' over the specs' parameter counts, read from the graph:
 * 8 layers of 12h^2 + 13h = 3,152,384 (h 512), the embedding 4096 x 512
 * plus 256 x 512 positions = 2,228,224 (the tied head, its EmbeddingPipe
 * built again, as much), the final norm 1,024.  partition_balanced on
 * those weights: [1, 2, 2, 2, 1] over 5 stages (type:transformer gives
 * [2, 2, 2, 1, 1]), [1, 2, 2, 1, 1, 1] over 6; a 16384 vocabulary
 * (8,519,680 each end) gives [1, 3, 3, 1] over 4 and, over 5, the end
 * stages no layer. */
TEST(deepspeed_partition_parameters) {
  static const int p5[] = {1, 2, 2, 2, 1}, p6[] = {1, 2, 2, 1, 1, 1};
  static const int v4[] = {1, 3, 3, 1};
  strata_gen_opts_t o;
  strata_graph_t *g = small_model(), *big = NULL;
  int n[8];
  ASSERT(g != NULL);
  ASSERT_EQ(st__ds_partition(g, 8, ST__DS_TIED, STRATA_DS_PARAMETERS, 5, n), 5);
  for (int s = 0; s < 5; s++)
    ASSERT_EQ(n[s], p5[s]);
  ASSERT_EQ(st__ds_partition(g, 8, ST__DS_TIED, STRATA_DS_PARAMETERS, 6, n), 6);
  for (int s = 0; s < 6; s++)
    ASSERT_EQ(n[s], p6[s]);
  ASSERT_EQ(
      st__ds_partition(g, 8, ST__DS_TIED, STRATA_DS_TYPE_TRANSFORMER, 5, n), 5);
  ASSERT_EQ(n[0], 2);
  ASSERT_EQ(n[4], 1);
  strata_gen_opts_keep(&o);
  o.layers = 8, o.hidden = 512, o.heads = 8, o.seq = 256, o.vocab = 16384;
  ASSERT_OK(strata_model_load("gpt", &o, &big));
  ASSERT_EQ(st__ds_partition(big, 8, ST__DS_TIED, STRATA_DS_PARAMETERS, 4, n),
            4);
  for (int s = 0; s < 4; s++)
    ASSERT_EQ(n[s], v4[s]);
  ASSERT_EQ(st__ds_partition(big, 8, ST__DS_TIED, STRATA_DS_PARAMETERS, 5, n),
            -1);
  strata_graph_destroy(big);
  strata_graph_destroy(g);
}

static void plan_opts(strata_plan_opts_t *o, int threads, const char *cache) {
  strata_plan_opts_init(o);
  o->global_batch = 64;
  o->threads = threads;
  o->cache_dir = cache;
  o->quiet = 1;
}

static int plan_bytes(const strata_graph_t *g, const strata_cluster_t *c,
                      const strata_plan_opts_t *o, unsigned char **data,
                      size_t *len, strata_plan_t **keep) {
  strata_plan_t *p = NULL;
  int rc = strata_pipeline_plan(g, c, o, &p);
  if (!rc) rc = strata_merge_stitch(p, g, c);
  if (!rc) {
    rc = strata_plan_encode(p, data, len);
  }
  if (keep && !rc)
    *keep = p;
  else
    strata_plan_destroy(p);
  return rc;
}

TEST(plan_identical_across_threads) {
  strata_graph_t *g = small_model();
  strata_cluster_t *c = NULL;
  ASSERT(g != NULL);
  ASSERT_OK(strata_cluster_load("dgx-h100:4", &c));
  for (int mode = 0; mode < 2; mode++) {
    unsigned char *ref = NULL;
    size_t ref_len = 0;
    int threads[] = {1, 2, 8};
    for (int i = 0; i < 3; i++) {
      strata_plan_opts_t o;
      unsigned char *d = NULL;
      size_t n = 0;
      plan_opts(&o, threads[i], NULL);
      o.megatron = mode == 0;
      ASSERT_OK(plan_bytes(g, c, &o, &d, &n, NULL));
      if (!ref) {
        ref = d;
        ref_len = n;
      } else {
        ASSERT_EQ(n, ref_len);
        ASSERT(memcmp(d, ref, n) == 0);
        strata_free(d);
      }
    }
    strata_free(ref);
  }
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

static int count_files(const char *dir, const char *suffix) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  while (d && (e = readdir(d))) {
    size_t l = strlen(e->d_name), k = strlen(suffix);
    n += l > k && !strcmp(e->d_name + l - k, suffix);
  }
  if (d) closedir(d);
  return n;
}

static void flip_byte(const char *path, long at) {
  FILE *f = fopen(path, "r+b");
  ASSERT(f != NULL);
  fseek(f, at, SEEK_SET);
  int ch = fgetc(f);
  fseek(f, at, SEEK_SET);
  fputc(ch ^ 0x5a, f);
  fclose(f);
}

static long file_size(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

static void put_le(unsigned char *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

/* Plan again and check what the cache gave: ilps solved, same plan. */
static void replan(const strata_graph_t *g, const strata_cluster_t *c,
                   const strata_plan_opts_t *o, const unsigned char *ref,
                   size_t ref_len, int want_solved) {
  strata_plan_t *p = NULL;
  unsigned char *d = NULL;
  size_t n = 0;
  ASSERT_OK(plan_bytes(g, c, o, &d, &n, &p));
  if (want_solved >= 0) ASSERT_EQ(p->ilps_solved, want_solved);
  if (want_solved == -1) /* some, not all */
    ASSERT(p->ilps_solved > 0 && p->ilps_solved < p->subproblems_distinct);
  ASSERT_EQ(p->ilps_solved + p->cache_hits, p->subproblems_distinct);
  strata_plan_destroy(p);
  ASSERT(n == ref_len && memcmp(d, ref, n) == 0);
  strata_free(d);
}

TEST(cache_cold_warm_corrupt) {
  char dir[512], file[600];
  strata_graph_t *g = small_model();
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  unsigned char *d0 = NULL, *d1 = NULL;
  size_t n0, n1;
  strata_plan_opts_t o;
  snprintf(dir, sizeof dir, "%s/cache", test_scratch_dir());
  snprintf(file, sizeof file, "%s/stages.scache", dir);
  ASSERT(g != NULL);
  ASSERT_OK(strata_cluster_load("dgx-h100:2", &c));
  plan_opts(&o, 2, dir);
  /* cold: everything solved, stored in one file */
  ASSERT_OK(plan_bytes(g, c, &o, &d0, &n0, &p));
  ASSERT_EQ(p->cache_hits, 0);
  ASSERT(p->ilps_solved > 0);
  int all = p->subproblems_distinct;
  ASSERT_EQ(count_files(dir, ".scache"), 1);
  strata_plan_destroy(p);
  /* warm: nothing solved, the same plan */
  ASSERT_OK(plan_bytes(g, c, &o, &d1, &n1, &p));
  ASSERT_EQ(p->ilps_solved, 0);
  ASSERT_EQ(p->cache_hits, all);
  strata_plan_destroy(p);
  ASSERT(n1 == n0 && memcmp(d0, d1, n0) == 0);
  /* a damaged entry (payload byte of the last one flipped) is solved
   * again, not trusted; the file is then repaired */
  flip_byte(file, file_size(file) - 10);
  replan(g, c, &o, d0, n0, 1);
  replan(g, c, &o, d0, n0, 0);
  /* a damaged header: the whole file is ignored, then rewritten */
  flip_byte(file, 4);
  replan(g, c, &o, d0, n0, all);
  replan(g, c, &o, d0, n0, 0);
  /* a file cut short keeps the entries before the cut */
  ASSERT_EQ(truncate(file, file_size(file) / 2), 0);
  replan(g, c, &o, d0, n0, -1);
  replan(g, c, &o, d0, n0, 0);
  /* a cache of another layout (tag changed, header checksum valid) is
   * ignored, never misread */
  FILE *f = fopen(file, "r+b");
  unsigned char h[24];
  ASSERT(f && fread(h, 1, 24, f) == 24);
  put_le(h + 8, 0x0123456789abcdefull, 8);
  put_le(h + 20, strata_crc32(h, 20), 4);
  ASSERT(fseek(f, 0, SEEK_SET) == 0 && fwrite(h, 1, 24, f) == 24);
  fclose(f);
  replan(g, c, &o, d0, n0, all);
  /* something else entirely under that name: ignored, not fatal */
  f = fopen(file, "wb");
  ASSERT(f && fputs("not a cache\n", f) >= 0);
  fclose(f);
  replan(g, c, &o, d0, n0, all);
  replan(g, c, &o, d0, n0, 0);
  strata_free(d0);
  strata_free(d1);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

/* A stage result with every field set, ops and hint included. */
static strata_stage_result_t *sample_result(int seed) {
  strata_stage_result_t *r = strata_calloc(1, sizeof *r);
  ASSERT(r != NULL);
  r->status = STRATA_STAGE_OPTIMAL; /* the cache keeps settled results */
  r->devices = 8 + seed;
  r->objective = 1.5e9 + seed;
  r->gap = 0.25;
  r->objective_bound = 1.2e9;
  r->mem.total = 3.25e9;
  r->solve_seconds = 0.125;
  r->rows_before = 77;
  r->hint = seed % 2 ? strata_strdup("raise the limit") : NULL;
  r->n_ops = 2;
  r->ops = strata_calloc(2, sizeof *r->ops);
  ASSERT(r->ops != NULL);
  for (int i = 0; i < 2; i++) {
    r->ops[i].name = strata_strdup(i ? "fc1" : "qkv");
    r->ops[i].strategy = strata_strdup("row");
    r->ops[i].placement = strata_strdup(i ? "[R]" : "[S(1)]");
    r->ops[i].layer = i + seed;
    r->ops[i].repeat = 3;
    r->ops[i].mem_bytes = 4096.5 * (i + 1);
  }
  return r;
}

static void same_result(const strata_stage_result_t *a,
                        const strata_stage_result_t *b) {
  ASSERT_EQ(a->status, b->status);
  ASSERT_EQ(a->devices, b->devices);
  ASSERT(a->objective == b->objective && a->gap == b->gap);
  ASSERT(a->objective_bound == b->objective_bound);
  ASSERT(a->mem.total == b->mem.total && a->solve_seconds == b->solve_seconds);
  ASSERT_EQ(a->rows_before, b->rows_before);
  ASSERT((a->hint == NULL) == (b->hint == NULL));
  if (a->hint) ASSERT(strcmp(a->hint, b->hint) == 0);
  ASSERT_EQ(a->n_ops, b->n_ops);
  for (int i = 0; i < a->n_ops; i++) {
    ASSERT(strcmp(a->ops[i].name, b->ops[i].name) == 0);
    ASSERT(strcmp(a->ops[i].placement, b->ops[i].placement) == 0);
    ASSERT_EQ(a->ops[i].layer, b->ops[i].layer);
    ASSERT(a->ops[i].mem_bytes == b->ops[i].mem_bytes);
  }
}

/* Writers that ran side by side: each flush merges what the other wrote
 * (under the lock), so nothing is lost; entries round-trip whole. */
TEST(cache_merge_and_round_trip) {
  char dir[512];
  st__cache_t *a = NULL, *b = NULL, *r = NULL;
  strata_stage_result_t *x = sample_result(1), *y = sample_result(2), *got;
  snprintf(dir, sizeof dir, "%s/cache2", test_scratch_dir());
  ASSERT_EQ(mkdir(dir, 0755), 0);
  ASSERT_OK(st__cache_open(dir, &a));
  ASSERT_OK(st__cache_open(dir, &b));
  ASSERT_EQ(st__cache_get(a, 11, &got), STRATA_ENOTFOUND);
  ASSERT_OK(st__cache_put(a, 11, x));
  ASSERT_OK(st__cache_put(b, 22, y));
  ASSERT_OK(st__cache_flush(a));
  ASSERT_OK(st__cache_flush(b));
  ASSERT_OK(st__cache_open(dir, &r));
  ASSERT_OK(st__cache_get(r, 11, &got));
  same_result(x, got);
  strata_stage_result_destroy(got);
  ASSERT_OK(st__cache_get(r, 22, &got));
  same_result(y, got);
  strata_stage_result_destroy(got);
  st__cache_close(a);
  st__cache_close(b);
  st__cache_close(r);
  strata_stage_result_destroy(x);
  strata_stage_result_destroy(y);
}

/* One open, put, flush, reopen and get, failing allocation n. */
static int cache_cycle(const char *dir, const strata_stage_result_t *x) {
  st__cache_t *c = NULL, *r = NULL;
  strata_stage_result_t *got = NULL;
  int rc = st__cache_open(dir, &c);
  if (!rc) rc = st__cache_put(c, 7, x);
  if (!rc) rc = st__cache_flush(c);
  if (!rc) rc = st__cache_open(dir, &r);
  if (!rc) rc = st__cache_get(r, 7, &got);
  if (!rc) same_result(x, got);
  strata_stage_result_destroy(got);
  st__cache_close(c);
  st__cache_close(r);
  return rc;
}

/* Allocation failure anywhere in the cache: a clean STRATA_ENOMEM, no
 * leak (the ASan build), and a cache that still works afterwards. */
TEST(cache_alloc_failures) {
  char dir[512];
  strata_stage_result_t *x = sample_result(3);
  snprintf(dir, sizeof dir, "%s/cache4", test_scratch_dir());
  ASSERT_EQ(mkdir(dir, 0755), 0);
  int ok = 0;
  for (long n = 1; n < 500 && !ok; n++) {
    strata_alloc_fail_at(n);
    int rc = cache_cycle(dir, x);
    int failed = strata_alloc_failed();
    strata_alloc_fail_at(0);
    if (rc == 0)
      ok = !failed;
    else
      ASSERT(rc == STRATA_ENOMEM && failed);
  }
  ASSERT(ok);
  ASSERT_OK(cache_cycle(dir, x));
  strata_stage_result_destroy(x);
}

/* Processes writing at the same time: with the lock no entry is lost. */
TEST(cache_concurrent_processes) {
  char dir[512];
  enum { PROCS = 4, PER = 25 };
  snprintf(dir, sizeof dir, "%s/cache3", test_scratch_dir());
  ASSERT_EQ(mkdir(dir, 0755), 0);
  pid_t pid[PROCS];
  for (int k = 0; k < PROCS; k++) {
    pid[k] = fork();
    ASSERT(pid[k] >= 0);
    if (pid[k] == 0) {
      strata_stage_result_t *x = sample_result(k);
      int bad = 0;
      for (int i = 0; i < PER; i++) { /* one flush per entry: many races */
        st__cache_t *c = NULL;
        bad |= st__cache_open(dir, &c) != 0;
        bad |= st__cache_put(c, (uint64_t)(1000 * k + i), x) != 0;
        bad |= st__cache_flush(c) != 0;
        st__cache_close(c);
      }
      strata_stage_result_destroy(x);
      _exit(bad);
    }
  }
  for (int k = 0; k < PROCS; k++) {
    int st = 0;
    ASSERT_EQ(waitpid(pid[k], &st, 0), pid[k]);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  st__cache_t *c = NULL;
  ASSERT_OK(st__cache_open(dir, &c));
  for (int k = 0; k < PROCS; k++)
    for (int i = 0; i < PER; i++) {
      strata_stage_result_t *got = NULL;
      ASSERT_OK(st__cache_get(c, (uint64_t)(1000 * k + i), &got));
      ASSERT_EQ(got->devices, 8 + k);
      strata_stage_result_destroy(got);
    }
  st__cache_close(c);
}

/* An entry whose contents fail the checks (a NaN time, a missing op
 * name) is not used, and the next write leaves it out; a dead run's
 * temporary file goes with that write; a FIFO in place of the file turns
 * caching off without blocking, and is left as it is. */
TEST(cache_checks_entries_and_files) {
  char dir[512], path[600], tmp[600];
  st__cache_t *c = NULL;
  strata_stage_result_t *x = sample_result(4), *got = NULL;
  struct stat sb;
  snprintf(dir, sizeof dir, "%s/cache5", test_scratch_dir());
  ASSERT_EQ(mkdir(dir, 0755), 0);
  snprintf(tmp, sizeof tmp, "%s/stages.scache.Zz0123", dir);
  FILE *f = fopen(tmp, "w");
  ASSERT(f && fputs("half a cache", f) >= 0);
  fclose(f);
  ASSERT_OK(st__cache_open(dir, &c));
  ASSERT_OK(st__cache_put(c, 1, x));
  x->fwd_seconds = NAN;
  ASSERT_OK(st__cache_put(c, 2, x));
  x->fwd_seconds = 0.5;
  char *name = x->ops[1].name;
  x->ops[1].name = NULL;
  ASSERT_OK(st__cache_put(c, 3, x));
  x->ops[1].name = name;
  ASSERT_OK(st__cache_flush(c));
  st__cache_close(c);
  ASSERT(stat(tmp, &sb) != 0); /* removed under the lock */
  ASSERT_OK(st__cache_open(dir, &c));
  ASSERT_OK(st__cache_get(c, 1, &got));
  strata_stage_result_destroy(got);
  ASSERT_EQ(st__cache_get(c, 2, &got), STRATA_ECORRUPT);
  ASSERT_EQ(st__cache_get(c, 2, &got), STRATA_ENOTFOUND); /* said once */
  ASSERT_EQ(st__cache_get(c, 3, &got), STRATA_ECORRUPT);
  ASSERT_OK(st__cache_flush(c)); /* dropped: written without them */
  st__cache_close(c);
  ASSERT_OK(st__cache_open(dir, &c));
  ASSERT_OK(st__cache_get(c, 1, &got));
  strata_stage_result_destroy(got);
  ASSERT_EQ(st__cache_get(c, 2, &got), STRATA_ENOTFOUND);
  ASSERT_EQ(st__cache_get(c, 3, &got), STRATA_ENOTFOUND);
  st__cache_close(c);
  /* a FIFO: no read blocks, nothing is written */
  snprintf(path, sizeof path, "%s/stages.scache", dir);
  ASSERT_EQ(unlink(path), 0);
  ASSERT_EQ(mkfifo(path, 0644), 0);
  ASSERT_OK(st__cache_open(dir, &c));
  ASSERT_EQ(st__cache_get(c, 1, &got), STRATA_ENOTFOUND);
  ASSERT_OK(st__cache_put(c, 1, x));
  ASSERT_OK(st__cache_flush(c));
  st__cache_close(c);
  ASSERT(stat(path, &sb) == 0 && S_ISFIFO(sb.st_mode));
  strata_stage_result_destroy(x);
}

TEST(cluster_too_small) {
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_t o;
  ASSERT_OK(strata_model_load("gpt-39.1b", NULL, &g));
  ASSERT_OK(strata_cluster_load("dgx-a100:1", &c));
  plan_opts(&o, 2, NULL);
  int rc = strata_pipeline_plan(g, c, &o, &p);
  ASSERT_EQ(rc, STRATA_EINFEASIBLE);
  ASSERT(p == NULL);
  ASSERT_CONTAINS(strata_last_error(), "does not fit");
  ASSERT_CONTAINS(strata_last_error(), "GPUs");
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

TEST(plan_megatron_constraints) {
  strata_graph_t *g = small_model();
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_t o;
  ASSERT(g != NULL);
  ASSERT_OK(strata_cluster_load("dgx-h100:4", &c));
  plan_opts(&o, 2, NULL);
  ASSERT_OK(strata_pipeline_plan(g, c, &o, &p));
  ASSERT_EQ(p->tp * p->pp * p->dp, p->devices);
  ASSERT(p->devices <= 32);
  ASSERT_EQ(p->global_batch % (p->micro_batch * p->dp), 0);
  ASSERT_EQ(p->n_micro, p->global_batch / (p->micro_batch * p->dp));
  int layers = 0;
  for (int s = 0; s < p->n_stages; s++) {
    const strata_plan_stage_t *st = &p->stages[s];
    ASSERT_EQ(st->nodes * st->gpus_per_node, p->tp); /* one tp everywhere */
    ASSERT_EQ(st->layer_begin, layers);
    layers = st->layer_end;
    ASSERT(st->result->peak_memory_bytes <= p->gpu_memory_bytes);
  }
  ASSERT_EQ(layers, 8);
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

/* A search for DeepSpeed with a partition method: each plan's stages
 * hold the layers the method gives for its pp (8 layers over 3:
 * type:transformer [3, 3, 2]; uniform over 13 specs [3, 4, 1]). */
TEST(plan_deepspeed_partition) {
  static const int tt[3] = {3, 3, 2}, un[3] = {3, 4, 1};
  strata_graph_t *g = small_model();
  strata_cluster_t *c = NULL;
  ASSERT(g != NULL);
  ASSERT_OK(strata_cluster_load("dgx-h100:3", &c));
  for (int m = 0; m < 2; m++) {
    strata_plan_t *p = NULL;
    strata_plan_opts_t o;
    plan_opts(&o, 2, NULL);
    o.framework = STRATA_FRAMEWORK_DEEPSPEED;
    o.pp = 3;
    o.global_batch = 48;
    o.ds_partition = m ? STRATA_DS_UNIFORM : STRATA_DS_TYPE_TRANSFORMER;
    ASSERT_OK(strata_pipeline_plan(g, c, &o, &p));
    ASSERT_EQ(p->pp, 3);
    ASSERT_EQ(p->ds_partition, o.ds_partition);
    ASSERT_EQ(p->n_stages, 3);
    for (int s = 0; s < 3; s++)
      ASSERT_EQ(p->stages[s].layer_end - p->stages[s].layer_begin,
                m ? un[s] : tt[s]);
    strata_plan_destroy(p);
  }
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

/* Free mode: stages may differ in size; they still tile the layers and,
 * with their data-parallel replicas, the devices the plan says it uses. */
TEST(plan_free_stages_tile) {
  strata_graph_t *g = small_model();
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_t o;
  ASSERT(g != NULL);
  ASSERT_OK(strata_cluster_load("dgx-h100:4", &c));
  plan_opts(&o, 2, NULL);
  o.megatron = 0;
  ASSERT_OK(strata_pipeline_plan(g, c, &o, &p));
  ASSERT_OK(strata_merge_stitch(p, g, c));
  int layers = 0, devices = 0, largest = 0;
  for (int s = 0; s < p->n_stages; s++) {
    const strata_plan_stage_t *st = &p->stages[s];
    int d = st->nodes * st->gpus_per_node;
    ASSERT_EQ(st->layer_begin, layers);
    ASSERT(st->layer_end > st->layer_begin);
    ASSERT_EQ(st->first_rank, devices);
    ASSERT(st->result->peak_memory_bytes <= p->gpu_memory_bytes);
    layers = st->layer_end;
    devices += d * p->dp;
    largest = d > largest ? d : largest;
  }
  ASSERT_EQ(layers, 8);
  ASSERT_EQ(devices, p->devices);
  ASSERT(devices <= 32);
  ASSERT_EQ(p->tp, largest);
  ASSERT(p->step_seconds > 0);
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

/* Free mode's space holds Megatron mode's configurations, so its plan is
 * never slower per step than the Megatron-mode plan of the same options
 * (entry.c costs that plan too and keeps the faster). */
TEST(plan_free_never_slower_than_megatron) {
  static const struct {
    const char *model, *cluster;
    int batch;
  } k[] = {{"gpt", "dgx-h100:4", 64},
           {"gpt", "dgx-a100:2", 32},
           /* free mode's own search finds 3.374 s here, Megatron mode
            * 3.193 s */
           {"llama3-8b", "dgx-h100:2", 64}};
  int kept = 0; /* plans where the Megatron-mode one was the faster */
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    strata_gen_opts_t go;
    strata_graph_t *g = NULL;
    strata_cluster_t *c = NULL;
    strata_plan_t *meg = NULL, *fr = NULL;
    strata_plan_opts_t o;
    strata_gen_opts_keep(&go);
    go.layers = 8, go.hidden = 512, go.heads = 8, go.seq = 512;
    go.vocab = 8192;
    ASSERT_OK(strata_model_load(k[i].model,
                                strcmp(k[i].model, "gpt") ? NULL : &go, &g));
    ASSERT_OK(strata_cluster_load(k[i].cluster, &c));
    plan_opts(&o, 1, NULL);
    o.global_batch = k[i].batch;
    ASSERT_OK(strata_pipeline_plan(g, c, &o, &meg));
    o.megatron = 0;
    ASSERT_OK(strata_pipeline_plan(g, c, &o, &fr));
    ASSERT(fr->step_seconds <= meg->step_seconds);
    /* the Megatron-mode plan kept is that plan itself */
    if (fr->megatron) ASSERT(fr->step_seconds == meg->step_seconds);
    kept += fr->megatron;
    strata_plan_destroy(meg);
    strata_plan_destroy(fr);
    strata_cluster_destroy(c);
    strata_graph_destroy(g);
  }
  ASSERT(kept >= 1); /* llama3-8b's */
}

/* ---- the search is exact ----
 *
 * On random small cases (models from the families, clusters from presets
 * and specs with drained nodes and a leaf boundary, several global batches
 * and memory budgets) every configuration the space holds is costed with
 * the evaluation `strata estimate` prints; the plan's step is the least of
 * those that fit, to 1e-9. */

typedef struct {
  double step, peak;
  st__cfg_t cf;
  long n, fit;
  int lay[ST__MAX_PP]; /* a generated layout's chunks (cf.chunked) */
} enum_best_t;

/* A generated layout as Megatron-LM's layout string (no MTP modules). */
static void layout_string(const int *n, int K, char *s, size_t cap) {
  size_t o = 0;
  s[o++] = 'E';
  for (int k = 0; k < K; k++) {
    for (int t = 0; t < n[k] && o + 3 < cap; t++)
      s[o++] = 't';
    if (k + 1 < K && o + 3 < cap) s[o++] = '|';
  }
  s[o++] = 'L';
  s[o] = '\0';
}

static void consider(st__search_t *S, st__cfg_t *cf, enum_best_t *b) {
  st__cost_t c;
  ASSERT_OK(st__cfg_cost(S, cf, 1, &c));
  if (!isfinite(c.step)) return;
  b->n++;
  if (!c.fits) return;
  b->fit++;
  if (c.step < b->step || (c.step == b->step && c.peak < b->peak)) {
    b->step = c.step;
    b->peak = c.peak;
    b->cf = *cf;
    if (cf->chunked) {
      memcpy(b->lay, cf->split, sizeof(int) * (size_t)st__split_len(cf));
      b->cf.split = b->lay;
    }
  }
}

typedef void consider_fn(st__search_t *S, st__cfg_t *cf, void *ctx);

static void consider_best(st__search_t *S, st__cfg_t *cf, void *ctx) {
  consider(S, cf, ctx);
}

/* Every configuration: family, pp, dp, virtual stages, layer split (the
 * pp and the virtual stages the options fix, if they do), each to fn. */
static void enumerate_each(st__search_t *S, consider_fn *fn, void *b) {
  int L = S->L;
  for (int i = 0; i < S->n_fam; i++) {
    const st__family_t *f = &S->fam[i];
    if (!f->ok) continue;
    int mb = S->graphs[f->graph]->micro_batch;
    for (int p = 1; p <= L; p++)
      for (int dp = 1; f->tcp * p * dp <= S->total; dp++) {
        if (S->o->pp && p != S->o->pp) continue;
        if (S->o->global_batch % (mb * dp)) continue;
        st__cfg_t cf;
        memset(&cf, 0, sizeof cf);
        cf.f = f, cf.p = p, cf.dp = dp, cf.b = mb;
        cf.m = S->o->global_batch / (mb * dp);
        if (p == 1) {
          if (S->o->vpp > 1) continue;
          cf.v = 1;
          fn(S, &cf, b);
          continue;
        }
        /* every first and last rank, with and without virtual stages
         * (counting the embedding and the loss, up to two chunks more
         * than layers: the embedding's and the loss's alone) */
        for (int v = 1; p * v <= L + 2; v++) {
          if (v > 1 && (cf.m % p || cf.m < p)) continue;
          if (S->o->vpp > 0 && v != S->o->vpp) continue;
          cf.v = v;
          for (int first = 1; first < L; first++)
            for (int last = 1; first + last <= L; last++) {
              cf.first = first, cf.last = last;
              int n[ST__MAX_PP];
              if (st__split_of(S, &cf, n) == p * v) fn(S, &cf, b);
            }
          /* and the even splits that count the embedding and the loss
           * as layers (Megatron-LM's --account-for-*-in-pipeline-split) */
          cf.first = cf.last = 0;
          for (int a = 1; a <= 3 && S->o->account_embedding != 0; a++) {
            int n[ST__MAX_PP];
            cf.acct = a;
            if (st__split_of(S, &cf, n) == p * v) fn(S, &cf, b);
          }
          cf.acct = 0;
          /* and the layouts of chunks of their own sizes the search
           * generates (layouts.c) */
          double w[2];
          for (int x = 0; x < ST__LAYOUTS && st__layouts_allowed(S) &&
                          !st__layout_weights(S, &cf, w);
               x++) {
            int n[ST__MAX_PP];
            cf.chunked = 1, cf.split = n;
            if (st__layout_candidate(S, &cf, w, x, n) == p * v) fn(S, &cf, b);
          }
          cf.chunked = 0, cf.split = NULL;
        }
      }
  }
}

static void enumerate_all(st__search_t *S, enum_best_t *b) {
  enumerate_each(S, consider_best, b);
}

/* Models from the families, and LLaMA-family mixtures of experts (some
 * with a dense first layer) and long sequences, where the search has
 * expert, expert tensor and context parallelism to choose. */
static strata_graph_t *random_model(strata_gen_opts_t *o, int more_layers) {
  static const char *fam[] = {"gpt", "llama", "bert", "llama", "llama"};
  strata_graph_t *g = NULL;
  strata_gen_opts_keep(o);
  int f = (int)(urand() * 5);
  o->layers = more_layers ? 4 + (int)(urand() * 9) : 2 + (int)(urand() * 5);
  o->hidden = urand() < 0.5 ? 256 : 512;
  o->heads = urand() < 0.5 ? 4 : 8;
  if (f == 1 || f == 3) o->kv_heads = o->heads / 2, o->ffn = 2 * o->hidden;
  o->seq = urand() < 0.5 ? 128 : 256;
  o->vocab = 1000 + (int)(urand() * 3000);
  o->flash_attention = urand() < 0.5;
  if (f == 3) { /* a mixture of experts */
    o->experts = urand() < 0.5 ? 4 : 8;
    o->topk = 2;
    o->moe_ffn = o->hidden;
    o->first_dense = urand() < 0.3;
    o->shared_ffn = urand() < 0.3 ? o->hidden / 2 : 0;
  }
  if (f == 4) { /* long enough for context parallelism */
    o->seq = 8192 * (urand() < 0.5 ? 1 : 2);
    o->flash_attention = 1;
    o->layers = 2 + (int)(urand() * 3);
  }
  ASSERT_OK(strata_model_load(fam[f], o, &g));
  return g;
}

static char *data_path(const char *name) {
  static char path[1024];
  snprintf(path, sizeof path, "%s/tests/data/topo/%s", test_source_dir(), name);
  return path;
}

/* iters random cases; with interleave, models of 4 to 12 layers and
 * every other case with 2 to 4 virtual stages asked for. */
static void best_of_enumeration(int iters, int interleave) {
  /* presets, an odd node count, a spec of P100 nodes, and one of five
   * nodes of which one is drained and one has a failed GPU (both dropped) */
  static const char *clusters[] = {"dgx-a100:1", "dgx-h100:2", "h100-pcie:1",
                                   "mi300x:1",   "dgx-a100:3", NULL,
                                   "drained"};
  static const int batches[] = {8, 12, 16, 24, 32};
  int cases = 0, bound = 0, uneven_vpp = 0, accounted = 0, layouts = 0;
  if (interleave) rng = 0x9E3779B97F4A7C15ULL; /* the same cases alone */
  for (int it = 0; it < iters; it++) {
    strata_gen_opts_t gen;
    strata_graph_t *g = random_model(&gen, interleave);
    strata_cluster_t *c = NULL;
    const char *spec = clusters[it % 7];
    ASSERT_OK(strata_cluster_load(!spec ? data_path("cluster-p100.json")
                                  : !strcmp(spec, "drained")
                                      ? data_path("cluster-drained.json")
                                      : spec,
                                  &c));
    strata_plan_opts_t o;
    strata_plan_opts_init(&o);
    o.quiet = 1;
    o.global_batch = batches[it % 5];
    o.model_spec = g->hp.family; /* micro-batches 1, 2, 4, 8 */
    o.gen = gen;
    /* sometimes the ZeRO stage and the precision are chosen too */
    if (it % 4 == 1) o.zero_stage = STRATA_AUTO;
    if (it % 4 == 3) o.precision = STRATA_PRECISION_AUTO;
    if (interleave && it % 2 == 0) o.vpp = 2 + it % 3;
    /* and a schedule of its own order: ZB-H1, InterleavedZeroBubble */
    if (it % 5 == 4)
      o.pp_schedule = interleave ? STRATA_PPS_INTERLEAVED_ZB : STRATA_PPS_ZBH1;
    /* sometimes a budget that binds: a little above the least memory */
    if (it % 3 == 2) o.memory_budget = 2.5e9 + urand() * 1e9;
    st__search_t S;
    static enum_best_t b;
    memset(&b, 0, sizeof b);
    b.step = b.peak = INFINITY;
    char lay[4 * ST__MAX_PP];
    ASSERT_OK(st__search_prepare(&S, g, c, &o));
    enumerate_all(&S, &b);
    if (b.fit && b.cf.chunked)
      layout_string(b.lay, st__split_len(&b.cf), lay, sizeof lay);
    int bt = b.fit ? b.cf.f->tp : 0, bsp = b.fit ? b.cf.f->sp : 0;
    st__family_t bf;
    memset(&bf, 0, sizeof bf);
    if (b.fit) bf = *b.cf.f;
    strata_recompute_t brc = b.fit ? b.cf.f->rc : STRATA_RECOMPUTE_NONE;
    st__search_release(&S);
    strata_plan_t *p = NULL;
    int rc = strata_pipeline_plan(g, c, &o, &p);
    if (b.fit == 0) {
      ASSERT_EQ(rc, STRATA_EINFEASIBLE);
    } else {
      ASSERT_OK(rc);
      if (fabs(p->step_seconds - b.step) > 1e-9 * b.step)
        printf("  plan tp %d pp %d dp %d mb %d vpp %d first %d last %d rc %d "
               "sp %d: %.9g; best tp %d pp %d dp %d mb %d v %d first %d last "
               "%d rc %d sp %d: %.9g\n",
               p->tp, p->pp, p->dp, p->micro_batch, p->vpp,
               p->stages[0].layer_end,
               p->layers - p->stages[p->n_stages - 1].layer_begin, p->recompute,
               p->sequence_parallel, p->step_seconds, bt, b.cf.p, b.cf.dp,
               b.cf.b, b.cf.v, b.cf.first, b.cf.last, brc, bsp, b.step);
      ASSERT_NEAR(p->step_seconds, b.step, 1e-9, 0);
      bound += p->configs_bounded;
      /* and `strata estimate` of the best configuration says the same */
      strata_plan_opts_t e = o;
      strata_plan_t *q = NULL;
      e.tp = bt, e.pp = b.cf.p, e.dp = b.cf.dp;
      e.micro_batch = b.cf.b, e.gen.micro_batch = b.cf.b;
      e.vpp = b.cf.v > 1 ? b.cf.v : 1;
      e.first_layers = b.cf.first;
      e.last_layers = b.cf.last;
      e.account_embedding = b.cf.acct & 1;
      e.account_loss = b.cf.acct >> 1;
      if (b.cf.chunked) e.pipeline_layout = lay;
      e.recompute = brc;
      e.sequence_parallel = bsp;
      e.cp = bf.cp, e.ep = bf.ep, e.etp = bf.etp;
      e.zero_stage = bf.zero;
      e.precision = bf.fp8 ? STRATA_PRECISION_FP8 : STRATA_PRECISION_BF16;
      e.no_memory_check = 1;
      ASSERT_OK(strata_pipeline_plan(g, c, &e, &q));
      ASSERT_NEAR(q->step_seconds, b.step, 1e-12, 0);
      strata_plan_destroy(q);
      cases++;
    }
    printf("  case %2d: %s, %s%s, %d layers, s %d, batch %d: %ld "
           "configurations, %ld fit%s\n",
           it, spec ? spec : "cluster-p100.json", g->hp.family,
           gen.experts ? " MoE" : "", strata_graph_layers(g), g->seq_len,
           o.global_batch, b.n, b.fit, b.fit ? "" : " (none: infeasible)");
    if (b.fit && b.cf.v > 1 && !b.cf.chunked)
      printf("           best interleaves %d virtual stages, first rank %d "
             "layers, last %d\n",
             b.cf.v, b.cf.first, b.cf.last);
    if (b.fit && b.cf.chunked)
      printf("           best is the layout %s (pp %d, %d virtual stages)\n",
             lay, b.cf.p, b.cf.v > 1 ? b.cf.v : 1);
    uneven_vpp += b.fit && b.cf.v > 1 && b.cf.first != b.cf.last;
    accounted += b.fit && b.cf.acct;
    layouts += b.fit && b.cf.chunked;
    if (b.fit && (bf.cp > 1 || bf.ep > 1 || bf.zero >= 2 || bf.fp8))
      printf("           best has cp %d, ep %d, etp %d, ZeRO %d, fp8 %d\n",
             bf.cp, bf.ep, bf.etp, bf.zero, bf.fp8);
    strata_plan_destroy(p);
    strata_cluster_destroy(c);
    strata_graph_destroy(g);
  }
  printf("  %d cases planned, all at the enumerated optimum (%d bounds); "
         "%d interleaved with uneven first and last ranks, %d counting the "
         "embedding or the loss as layers, %d generated layouts\n",
         cases, bound, uneven_vpp, accounted, layouts);
  ASSERT(cases >= iters * 3 / 5);
  /* the accounted splits and the generated layouts are somewhere the best
   * (interleaved_uneven_exact has the first/last form's) */
  if (interleave) ASSERT(layouts >= 1 && accounted >= 1);
}

TEST(plan_is_best_of_enumeration) {
  best_of_enumeration(40, 0);
}

/* The same with interleaving asked for: the first and last ranks' chunks
 * sit at every round of the model, their bounds with them. */
TEST(plan_is_best_of_enumeration_interleaved) {
  best_of_enumeration(40, 1);
}

/* ---- the memory floor is a lower bound ----
 *
 * On random small cases (models, clusters, ZeRO stages, optimizer state
 * types, offloads, the framework) the floor plan.c refuses by never
 * exceeds the least peak memory of every configuration the space holds
 * (a budget nothing exceeds, so none is left out); and deepseek-v3 on 16
 * DGX H100 nodes is refused by it, before any probe. */

static void least_peak(st__search_t *S, st__cfg_t *cf, void *ctx) {
  st__cost_t c;
  ASSERT_OK(st__cfg_cost(S, cf, 1, &c));
  double *least = ctx;
  if (!isfinite(c.step)) return; /* not costed (as consider's) */
  ASSERT(c.fits);                /* nothing exceeds the budget */
  if (c.peak < *least) *least = c.peak;
}

TEST(memory_floor_is_a_lower_bound) {
  static const char *clusters[] = {"dgx-a100:1", "dgx-h100:2", "h100-pcie:1",
                                   "mi300x:1", "dgx-a100:3"};
  int costed = 0;
  double tightest = 0;
  rng = 0x2545F4914F6CDD1DULL;
  for (int it = 0; it < 30; it++) {
    strata_gen_opts_t gen;
    strata_graph_t *g = random_model(&gen, it % 2);
    if (it >= 24) { /* wide and short: the states outweigh the rest */
      strata_graph_destroy(g);
      strata_gen_opts_keep(&gen);
      gen.layers = 2, gen.hidden = 4096, gen.heads = 32, gen.seq = 128;
      gen.vocab = 32000, gen.flash_attention = 1;
      gen.experts = 0, gen.kv_heads = 0, gen.ffn = 0;
      ASSERT_OK(strata_model_load("gpt", &gen, &g));
    }
    strata_cluster_t *c = NULL;
    ASSERT_OK(strata_cluster_load(clusters[it % 5], &c));
    strata_plan_opts_t o;
    strata_plan_opts_init(&o);
    o.quiet = 1;
    o.global_batch = 16;
    o.model_spec = g->hp.family;
    o.gen = gen;
    o.memory_budget = 1e15;
    o.zero_stage = it % 4;
    if (it % 3 == 1) {
      o.precision_aware_optimizer = 1;
      if (o.zero_stage < 1) o.zero_stage = 1;
      o.main_grads_dtype =
          urand() < 0.5 ? STRATA_STATE_BF16 : STRATA_STATE_FP32;
      o.exp_avg_dtype = STRATA_STATE_BF16;
      o.exp_avg_sq_dtype =
          urand() < 0.5 ? STRATA_STATE_BF16 : STRATA_STATE_FP32;
    }
    if (it % 6 == 4) o.optimizer_offload = 0.5;
    if (it % 7 == 3 && it % 3 != 1) {
      o.framework = STRATA_FRAMEWORK_DEEPSPEED;
      if (o.zero_stage < 1) o.zero_stage = 1;
    }
    st__search_t S;
    ASSERT_OK(st__search_prepare(&S, g, c, &o));
    double states, params, floor = st__memory_floor(&S, &states, &params);
    double least = INFINITY;
    enumerate_each(&S, least_peak, &least);
    st__search_release(&S);
    ASSERT(params > 0 && states > 0);
    if (isfinite(least)) {
      costed++;
      if (!(floor <= least * (1 + 1e-12)))
        printf("  case %d on %s: floor %.6g over the least peak %.6g\n", it,
               clusters[it % 5], floor, least);
      ASSERT(floor <= least * (1 + 1e-12));
      if (floor / least > tightest) tightest = floor / least;
    }
    strata_cluster_destroy(c);
    strata_graph_destroy(g);
  }
  ASSERT(costed >= 25);
  /* and it bounds something: under ZeRO 3 the wide model's least peak is
   * within a factor 1.5 of it (2.78 GB against 1.84) */
  ASSERT(tightest > 0.6);
  /* the reproducer: refused by the floor, in well under a second */
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  ASSERT_OK(strata_model_load("deepseek-v3", NULL, &g));
  ASSERT_OK(strata_cluster_load("dgx-h100:16", &c));
  strata_plan_opts_t o;
  strata_plan_opts_init(&o);
  o.quiet = 1;
  double t0 = strata_now();
  strata_plan_t *p = NULL;
  ASSERT_EQ(strata_pipeline_plan(g, c, &o, &p), STRATA_EINFEASIBLE);
  ASSERT(strata_now() - t0 < 1.0);
  ASSERT(strstr(strata_last_error(), "every plan needs at least"));
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

/* ---- the Pareto front is exact ----
 *
 * The same random cases, planned with --pareto (and --pareto gpus): the
 * plan's front is the set of points (step, peak memory[, GPUs]) of the
 * enumerated configurations that fit which no other fitting one matches
 * or beats on every axis, point for point. */

typedef struct {
  double step, peak, gpus;
} pt_t;

typedef struct {
  pt_t *v;
  int n, cap;
} pts_t;

static void collect_fit(st__search_t *S, st__cfg_t *cf, void *ctx) {
  pts_t *a = ctx;
  st__cost_t c;
  ASSERT_OK(st__cfg_cost(S, cf, 1, &c));
  if (!isfinite(c.step) || !c.fits) return;
  if (a->n == a->cap) {
    a->cap = a->cap ? 2 * a->cap : 256;
    a->v = realloc(a->v, sizeof *a->v * (size_t)a->cap);
    ASSERT(a->v != NULL);
  }
  a->v[a->n++] = (pt_t){c.step, c.peak, (double)cf->f->tcp * cf->p * cf->dp};
}

static int cmp_pt(const void *x, const void *y) {
  const pt_t *a = x, *b = y;
  if (a->step != b->step) return a->step < b->step ? -1 : 1;
  if (a->peak != b->peak) return a->peak < b->peak ? -1 : 1;
  return (a->gpus > b->gpus) - (a->gpus < b->gpus);
}

/* The front of a by brute force (every pair), equal points once, sorted. */
static int brute_front(const pts_t *a, int axes, pt_t *out) {
  int n = 0;
  for (int i = 0; i < a->n; i++) {
    const pt_t *x = &a->v[i];
    int out_of = 0;
    for (int j = 0; j < a->n && !out_of; j++) {
      const pt_t *y = &a->v[j];
      int le = y->step <= x->step && y->peak <= x->peak &&
               (axes < 2 || y->gpus <= x->gpus);
      int eq = y->step == x->step && y->peak == x->peak &&
               (axes < 2 || y->gpus == x->gpus);
      out_of = le && (!eq || j < i); /* beaten, or the same point before */
    }
    if (!out_of) out[n++] = *x;
  }
  qsort(out, (size_t)n, sizeof *out, cmp_pt);
  return n;
}

static void pareto_of_enumeration(int iters) {
  static const char *clusters[] = {"dgx-a100:1", "dgx-h100:2", "h100-pcie:1",
                                   "mi300x:1", "dgx-a100:3"};
  static const int batches[] = {8, 12, 16, 24, 32};
  int cases = 0, points = 0, most = 0, dominated = 0;
  rng = 0x2545F4914F6CDD1DULL;
  for (int it = 0; it < iters; it++) {
    strata_gen_opts_t gen;
    strata_graph_t *g = random_model(&gen, it % 2);
    if (it >= 24) { /* wide and short: the states outweigh the rest */
      strata_graph_destroy(g);
      strata_gen_opts_keep(&gen);
      gen.layers = 2, gen.hidden = 4096, gen.heads = 32, gen.seq = 128;
      gen.vocab = 32000, gen.flash_attention = 1;
      gen.experts = 0, gen.kv_heads = 0, gen.ffn = 0;
      ASSERT_OK(strata_model_load("gpt", &gen, &g));
    }
    strata_cluster_t *c = NULL;
    ASSERT_OK(strata_cluster_load(clusters[it % 5], &c));
    strata_plan_opts_t o;
    strata_plan_opts_init(&o);
    o.quiet = 1;
    o.global_batch = batches[it % 5];
    o.model_spec = g->hp.family;
    o.gen = gen;
    if (it % 4 == 1) o.zero_stage = STRATA_AUTO;
    if (it % 3 == 2) o.memory_budget = 2.5e9 + urand() * 1e9;
    o.pareto = it % 2 ? STRATA_PARETO_GPUS : STRATA_PARETO_MEMORY;
    st__search_t S;
    pts_t all = {NULL, 0, 0};
    ASSERT_OK(st__search_prepare(&S, g, c, &o));
    enumerate_each(&S, collect_fit, &all);
    st__search_release(&S);
    pt_t *want = malloc(sizeof *want * (size_t)(all.n ? all.n : 1));
    ASSERT(want != NULL);
    int nw = brute_front(&all, o.pareto, want);
    strata_plan_t *p = NULL;
    int rc = strata_pipeline_plan(g, c, &o, &p);
    if (nw == 0) {
      ASSERT_EQ(rc, STRATA_EINFEASIBLE);
    } else {
      ASSERT_OK(rc);
      ASSERT_EQ(p->pareto_axes, o.pareto);
      ASSERT_EQ(p->n_pareto, nw);
      pt_t *got = malloc(sizeof *got * (size_t)nw);
      ASSERT(got != NULL);
      for (int i = 0; i < nw; i++) {
        const strata_plan_config_t *x = &p->pareto[i];
        got[i] =
            (pt_t){x->step_seconds, x->peak_memory_bytes,
                   (double)x->tp * (x->cp > 1 ? x->cp : 1) * x->pp * x->dp};
        /* fastest first, and the first is the plan's own best */
        if (i > 0) ASSERT(got[i].step >= got[i - 1].step);
      }
      ASSERT_NEAR(got[0].step, p->top[0].step_seconds, 1e-12, 0);
      qsort(got, (size_t)nw, sizeof *got, cmp_pt);
      for (int i = 0; i < nw; i++) {
        ASSERT_NEAR(got[i].step, want[i].step, 1e-12, 0);
        ASSERT_NEAR(got[i].peak, want[i].peak, 1e-12, 0);
        ASSERT_EQ(got[i].gpus, want[i].gpus);
      }
      /* the same plan and best configurations as without --pareto */
      strata_plan_opts_t q = o;
      strata_plan_t *r = NULL;
      q.pareto = 0;
      ASSERT_OK(strata_pipeline_plan(g, c, &q, &r));
      ASSERT_EQ(r->n_pareto, 0);
      ASSERT_EQ(r->n_top, p->n_top);
      for (int i = 0; i < r->n_top; i++)
        ASSERT_NEAR(r->top[i].step_seconds, p->top[i].step_seconds, 1e-15, 0);
      strata_plan_destroy(r);
      free(got);
      cases++;
      points += nw;
      dominated += all.n - nw;
      most = nw > most ? nw : most;
    }
    strata_plan_destroy(p);
    free(want);
    free(all.v);
    strata_cluster_destroy(c);
    strata_graph_destroy(g);
  }
  printf("  %d cases: fronts of %d points in all (at most %d), %d "
         "configurations that fit dominated\n",
         cases, points, most, dominated);
  ASSERT(cases >= iters / 2);
  ASSERT(most >= 3); /* fronts of more than one point were checked */
}

TEST(pareto_is_front_of_enumeration) {
  pareto_of_enumeration(24);
}

/* A trace file plans at any micro-batch: re-shaped along its batch, it is
 * costed as the model generated at that micro-batch (the planner's search
 * and a fixed --micro-batch alike). */
static strata_plan_t *plan_spec(const char *spec, const strata_gen_opts_t *gen,
                                int mb) {
  strata_plan_opts_t o;
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_init(&o);
  o.gen = *gen;
  o.gen.micro_batch = mb;
  o.micro_batch = mb;
  o.global_batch = 32;
  o.model_spec = spec;
  o.quiet = 1;
  ASSERT_OK(strata_model_load(spec, &o.gen, &g));
  ASSERT_OK(strata_cluster_load("dgx-a100:1", &c));
  ASSERT_OK(strata_pipeline_plan(g, c, &o, &p));
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return p;
}

/* The progress line says what it waits for before it has a best step
 * (it printed "best step -, bound -" through the stage solves), and the
 * bound only where one is known. */
TEST(progress_line_says_what_it_waits_for) {
  char b[256];
  st__progress_line(b, sizeof b, "stage solves", 3, 40, NAN, NAN, 1.31);
  ASSERT_STR_EQ(b, "strata: stage solves 3/40, no step yet: the "
                   "configurations are costed once their stages are solved "
                   "(1.3 s)");
  st__progress_line(b, sizeof b, "search", 10, 400, INFINITY, 0.5, 2);
  ASSERT_STR_EQ(b, "strata: search 10/400, no configuration fits yet, bound "
                   "0.500 s (2.0 s)");
  st__progress_line(b, sizeof b, "mixed search", 2808, 9522, 26.5084, 20.8651,
                    6);
  ASSERT_STR_EQ(b, "strata: mixed search 2808/9522, best step 26.508 s, "
                   "bound 20.865 s (6.0 s)");
  ASSERT(!strstr(b, " -"));
  st__progress_line(b, 24, "search", 1, 2, 1, 1, 1); /* cut, ended */
  ASSERT_EQ(strlen(b), 23);
}

/* The best step the progress shows never rises: a later phase or node
 * group reports its own best, which may be worse than one already found
 * (a mixed cluster's group after a faster one); a bound above it is
 * shown as the best itself. */
TEST(progress_best_never_rises) {
  st__progress_t p;
  st__progress_init(&p, 0);
  ASSERT(isinf(st__progress_best(&p, NAN)));
  ASSERT(st__progress_best(&p, 5.0) == 5.0);
  ASSERT(st__progress_best(&p, 7.0) == 5.0); /* another group's worse best */
  ASSERT(st__progress_best(&p, INFINITY) == 5.0); /* a phase with none */
  ASSERT(st__progress_best(&p, 3.0) == 3.0);
  st__progress_note(&p, "search", 1, 2, 9.0, 8.0);
  ASSERT(p.best == 3.0);
  st__progress_where(&p, "node group 1 (A100-80GB)");
  ASSERT_STR_EQ(p.where, "node group 1 (A100-80GB)");
  st__progress_where(&p, NULL);
  ASSERT_STR_EQ(p.where, "");
}

/* The plan keeps the model's trained context (max_position_embeddings)
 * for the exports, not the sequence it is trained at; never less than
 * that sequence (Megatron-LM asserts it). */
TEST(plan_keeps_trained_context) {
  for (int k = 0; k < 2; k++) {
    strata_gen_opts_t gen;
    strata_plan_opts_t o;
    strata_graph_t *g = NULL;
    strata_cluster_t *c = NULL;
    strata_plan_t *p = NULL;
    strata_gen_opts_init(&gen, STRATA_FAMILY_LLAMA);
    gen.layers = 2, gen.hidden = 256, gen.heads = 4, gen.kv_heads = 4;
    gen.ffn = 512, gen.seq = 512, gen.vocab = 1000, gen.micro_batch = 1;
    gen.max_positions = k ? 256 : 40960;
    ASSERT_OK(strata_generate(&gen, "llama", &g));
    strata_plan_opts_init(&o);
    o.global_batch = 8;
    o.model_spec = "llama";
    o.quiet = 1;
    ASSERT_OK(strata_cluster_load("dgx-a100:1", &c));
    ASSERT_OK(strata_pipeline_plan(g, c, &o, &p));
    ASSERT_OK(strata_merge_stitch(p, g, c));
    ASSERT_EQ(p->seq_len, 512);
    ASSERT_EQ(p->max_position, (k ? 512 : 40960));
    strata_plan_destroy(p);
    strata_cluster_destroy(c);
    strata_graph_destroy(g);
  }
}

TEST(trace_file_any_micro_batch) {
  strata_gen_opts_t gen;
  strata_graph_t *g = NULL;
  char path[600], *text = NULL;
  size_t len;
  strata_gen_opts_init(&gen, STRATA_FAMILY_GPT);
  gen.layers = 4, gen.hidden = 512, gen.heads = 8, gen.seq = 512;
  gen.vocab = 1000, gen.micro_batch = 2;
  ASSERT_OK(strata_generate(&gen, "gpt", &g));
  ASSERT_OK(strata_trace_write(g, &text, &len));
  snprintf(path, sizeof path, "%s/rebatch-trace.json", test_scratch_dir());
  ASSERT_OK(strata_file_write_atomic(path, text, len));
  strata_free(text);
  strata_graph_destroy(g);
  strata_gen_opts_t none;
  strata_gen_opts_keep(&none);
  for (int mb = 0; mb <= 8; mb = mb ? 2 * mb : 1) {
    strata_gen_opts_t fam = gen;
    fam.micro_batch = 0;
    strata_plan_t *a = plan_spec(path, &none, mb);
    strata_plan_t *b = plan_spec("gpt", &fam, mb);
    printf("  micro-batch %d: trace file mb %d step %.6f s, family mb %d "
           "step %.6f s\n",
           mb, a->micro_batch, a->step_seconds, b->micro_batch,
           b->step_seconds);
    ASSERT_EQ(a->micro_batch, b->micro_batch);
    if (mb) ASSERT_EQ(a->micro_batch, mb);
    ASSERT_NEAR(a->step_seconds, b->step_seconds, 1e-9, 0);
    ASSERT_NEAR(a->peak_memory_bytes, b->peak_memory_bytes, 1e-9, 0);
    strata_plan_destroy(a);
    strata_plan_destroy(b);
  }
}

/* Layers that differ (a trace stored one layer per block, the last three
 * with three times the FFN): the plan is the enumerated optimum, with the
 * memory unbound and with a limit just below what the unbound optimum
 * needs, on clusters of one and of two nodes. */
TEST(heterogeneous_layers_exact) {
  static const char *clusters[] = {"dgx-a100:1", "dgx-h100:2"};
  strata_graph_t *g = NULL;
  char trace[1024];
  snprintf(trace, sizeof trace, "%s/tests/data/het-layers-trace.json",
           test_source_dir());
  ASSERT_OK(strata_trace_load(trace, &g));
  ASSERT(g->n_blocks >= 2);
  for (int k = 0; k < 2; k++)
    for (int bind = 0; bind < 2; bind++) {
      strata_cluster_t *c = NULL;
      ASSERT_OK(strata_cluster_load(clusters[k], &c));
      strata_plan_opts_t o;
      strata_plan_opts_init(&o);
      o.quiet = 1;
      o.global_batch = 16;
      o.model_spec = trace;
      static double unbound;
      if (bind) o.memory_budget = unbound * 0.999 + o.memory_reserve;
      st__search_t S;
      static enum_best_t b;
      memset(&b, 0, sizeof b);
      b.step = b.peak = INFINITY;
      ASSERT_OK(st__search_prepare(&S, g, c, &o));
      enumerate_all(&S, &b);
      st__search_release(&S);
      if (!bind) unbound = b.peak;
      strata_plan_t *p = NULL;
      int rc = strata_pipeline_plan(g, c, &o, &p);
      printf("  %s, %s: %ld configurations, %ld fit, best %.9g s", clusters[k],
             bind ? "binding limit" : "unbound", b.n, b.fit, b.step);
      if (b.fit == 0) {
        printf("\n");
        ASSERT_EQ(rc, STRATA_EINFEASIBLE);
      } else {
        ASSERT_OK(rc);
        printf(", plan %.9g s (tp %d pp %d dp %d mb %d)\n", p->step_seconds,
               p->tp, p->pp, p->dp, p->micro_batch);
        ASSERT_NEAR(p->step_seconds, b.step, 1e-9, 0);
        if (bind) ASSERT(p->peak_memory_bytes <= unbound * 0.999);
      }
      strata_plan_destroy(p);
      strata_cluster_destroy(c);
    }
  strata_graph_destroy(g);
}

/* Interleaving with a first and a last rank of their own sizes (each a
 * multiple of the virtual stages, as Megatron-LM takes them): the plan is
 * the enumerated optimum where the chunks of the ends sit at different
 * places in the model (layers that differ), with the memory unbound and
 * binding, and where only an uneven split exists (10 layers, pp 4, 2
 * virtual stages: 4 + 2 + 2 + 2 or 2 + 2 + 2 + 4). */
TEST(interleaved_uneven_exact) {
  char trace[1024];
  snprintf(trace, sizeof trace, "%s/tests/data/het-layers-trace.json",
           test_source_dir());
  for (int k = 0; k < 3; k++) {
    strata_graph_t *g = NULL;
    strata_cluster_t *c = NULL;
    strata_plan_opts_t o;
    strata_plan_opts_init(&o);
    o.quiet = 1;
    o.global_batch = 16;
    o.vpp = 2;
    /* the first/last form alone (the embedding and the loss are layers of
     * no split here) */
    o.account_embedding = o.account_loss = 0;
    o.no_search_layouts = 1;
    if (k < 2) {
      ASSERT_OK(strata_trace_load(trace, &g));
      o.model_spec = trace;
    } else {
      strata_gen_opts_keep(&o.gen);
      o.gen.layers = 10, o.gen.hidden = 512, o.gen.heads = 8;
      o.gen.seq = 256, o.gen.vocab = 4096;
      o.model_spec = "gpt";
      o.pp = 4;
      ASSERT_OK(strata_model_load("gpt", &o.gen, &g));
    }
    ASSERT_OK(strata_cluster_load("dgx-a100:1", &c));
    static double unbound;
    if (k == 1) o.memory_budget = unbound * 0.999 + o.memory_reserve;
    st__search_t S;
    static enum_best_t b;
    memset(&b, 0, sizeof b);
    b.step = b.peak = INFINITY;
    char lay[4 * ST__MAX_PP];
    ASSERT_OK(st__search_prepare(&S, g, c, &o));
    enumerate_all(&S, &b);
    if (b.fit && b.cf.chunked)
      layout_string(b.lay, st__split_len(&b.cf), lay, sizeof lay);
    st__search_release(&S);
    if (k == 0) unbound = b.peak;
    strata_plan_t *p = NULL;
    ASSERT(b.fit > 0);
    ASSERT_OK(strata_pipeline_plan(g, c, &o, &p));
    int first = strata_plan_rank_layers(p, 0);
    int last = strata_plan_rank_layers(p, p->pp - 1);
    printf("  case %d: %ld configurations, %ld fit, best %.9g s (pp %d, "
           "first %d, last %d); plan %.9g s (pp %d vpp %d, first %d, last "
           "%d)\n",
           k, b.n, b.fit, b.step, b.cf.p, b.cf.first, b.cf.last,
           p->step_seconds, p->pp, p->vpp, first, last);
    ASSERT_NEAR(p->step_seconds, b.step, 1e-9, 0);
    ASSERT_EQ(p->vpp, 2);
    ASSERT_EQ(p->n_stages, 2 * p->pp);
    ASSERT_EQ(first % 2, 0);
    ASSERT_EQ(last % 2, 0);
    if (k == 1) ASSERT(p->peak_memory_bytes <= unbound * 0.999);
    if (k == 2) { /* the model chunk of each rank, as Megatron-LM lays it */
      ASSERT(first != last);
      for (int s = 0; s < p->n_stages; s++) {
        int r = s % 4, n = p->stages[s].layer_end - p->stages[s].layer_begin;
        ASSERT_EQ(p->stages[s].rank, r);
        ASSERT_EQ(n, (r == 0 ? first : r == 3 ? last : 2) / 2);
      }
    }
    strata_plan_destroy(p);
    strata_cluster_destroy(c);
    strata_graph_destroy(g);
  }
}

static const test_entry_t tests[] = {
    TEST_ENTRY(split_dp_equals_brute_force),
    TEST_ENTRY(deepspeed_partition_methods),
    TEST_ENTRY(deepspeed_partition_parameters),
    TEST_ENTRY(plan_deepspeed_partition),
    TEST_ENTRY(split_linear_equals_brute_force),
    TEST_ENTRY(split_prefix_equals_brute_force),
    TEST_ENTRY(split_megatron_rule),
    TEST_ENTRY(split_interleaved_uneven),
    TEST_ENTRY(layout_candidates_are_the_greedy),
    TEST_ENTRY(schedule_cut_is_exact),
    TEST_ENTRY(plan_identical_across_threads),
    TEST_ENTRY(cache_cold_warm_corrupt),
    TEST_ENTRY(cache_merge_and_round_trip),
    TEST_ENTRY(cache_concurrent_processes),
    TEST_ENTRY(cache_alloc_failures),
    TEST_ENTRY(cache_checks_entries_and_files),
    TEST_ENTRY(cluster_too_small),
    TEST_ENTRY(plan_megatron_constraints),
    TEST_ENTRY(plan_free_stages_tile),
    TEST_ENTRY(plan_free_never_slower_than_megatron),
    TEST_ENTRY(plan_is_best_of_enumeration),
    TEST_ENTRY(plan_is_best_of_enumeration_interleaved),
    TEST_ENTRY(memory_floor_is_a_lower_bound),
    TEST_ENTRY(pareto_is_front_of_enumeration),
    TEST_ENTRY(interleaved_uneven_exact),
    TEST_ENTRY(progress_line_says_what_it_waits_for),
    TEST_ENTRY(progress_best_never_rises),
    TEST_ENTRY(plan_keeps_trained_context),
    TEST_ENTRY(trace_file_any_micro_batch),
    TEST_ENTRY(heterogeneous_layers_exact),
};
TEST_MAIN(tests)
