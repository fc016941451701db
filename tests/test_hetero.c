/*
 * test_hetero.c - the mixed-cluster search (pipeline/hetero.c) against
 * every configuration of its space.
 *
 * The search visits its units least bound first and skips what its
 * bounds say cannot beat the step to beat; it remembers the layers a
 * rank holds across configurations.  Here the same space is walked in
 * full with none of that: every family of group 0 with its match on the
 * other groups, every dp, every group order, every pp per group (two
 * groups used at least), every number of virtual stages Megatron-LM
 * interleaves, each rank's layers found by a plain scan of its memory,
 * the split by split.c's exact optimum (checked against every split in
 * test_pipeline.c; where layers differ and interleave, on the prefix sums
 * summed over the rounds of chunks, here from the layers' own times) and
 * each configuration costed exactly by eval.c.  The plan's step must be the
 * least of that and of the groups alone: a bound that cut a better
 * configuration fails here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/search.h"
#include "strata/strata.h"
#include "testlib.h"

#define SPEC(f) STRATA_SOURCE_DIR "/tests/data/topo/" f
#define MAXG 3

typedef struct {
  int K, L, differ;
  st__search_t S[MAXG];
  const st__family_t *f[MAXG]; /* the family on each group, or NULL */
  int order[MAXG], pp[MAXG], dp, b, m;
  int v;        /* virtual stages: every rank's layers in v equal chunks */
  double best;  /* the least step of a configuration that fits */
  long configs; /* configurations costed */
  long floors;  /* configurations the floor was checked at */
} brute_t;

/* Family of group z with the degrees of f (group 0's), as a mixed
 * configuration pairs them: every degree and the micro-batch alike. */
static const st__family_t *match_of(const brute_t *B, int z,
                                    const st__family_t *f) {
  const st__search_t *A = &B->S[0], *Z = &B->S[z];
  for (int i = 0; i < Z->n_fam; i++) {
    const st__family_t *x = &Z->fam[i];
    if (x->ok && x->tp == f->tp && x->cp == f->cp && x->ep == f->ep &&
        x->etp == f->etp && x->sp == f->sp && x->rc == f->rc &&
        x->zero == f->zero && x->fp8 == f->fp8 && x->epo == f->epo &&
        x->tcp == f->tcp && x->ep_outer == f->ep_outer &&
        Z->graphs[x->graph]->micro_batch == A->graphs[f->graph]->micro_batch)
      return x;
  }
  return NULL;
}

/* The most layers rank s holds from layer k: a scan, one layer at a time
 * (interleaved: one layer in each of its chunks at a time, in those units,
 * at most L of them). */
static int holds(st__search_t *S, const st__cfg_t *one, int s, int k, int L) {
  int n = 0, v = one->v;
  while (k + n < L && st__rank_peak(S, one, s, k, (n + 1) * v) <= S->budget)
    n++;
  return n;
}

/* Megatron-LM interleaves v chunks a rank over P ranks and m micro-batches
 * (its rules as the rulebook states them) in rounds of equal counts. */
static int interleaved_ok(const brute_t *B, int P) {
  strata_rules_config_t c = B->S[0].rules;
  if (B->v == 1) return 1;
  c.pp = P, c.vpp = B->v, c.dp = B->dp, c.micro_batch = B->b;
  c.global_batch = B->S[0].o->global_batch;
  return !strata_rules_check(&c, ST__AT_PIPE, NULL) && B->L % B->v == 0 &&
         P * B->v <= B->L && !(B->S[0].o->overlap_p2p == 0 && P < 3);
}

/* The prefix sums pre (L + 1) folded over the v rounds of U positions:
 * F(i) = sum_k pre(i + k U) - pre(k U), i <= U, into F. */
static void fold(const double *pre, int L, int v, double *F) {
  int U = L / v;
  for (int i = 0; i <= U; i++) {
    F[i] = 0;
    for (int c = 0; c < v; c++)
      F[i] += pre[i + c * U] - pre[c * U];
  }
}

/* The floor the search drops configurations by (st__split_floor) must
 * let through a cut just above the exact step of every split it could
 * choose: here, the split of every configuration walked.  Layers alike:
 * in layers, at most u[s] a stage; layers that differ: in group-0
 * seconds, a layer's time on a stage at least kappa of that, a stage's
 * most its widest window in memory (interleaved: of a round's positions,
 * a rank waiting for at least rho of the work of each rank before it,
 * rho the least share of a position's group-0 work in the first round). */
static void check_floor(brute_t *B, int P, const double *a, const double *e,
                        const int *u, double *const *pre, const int *cap,
                        double step) {
  int L = B->L, U = L / B->v;
  double lo[64], hi[64], k[64], w[257], F[257], rho = 1;
  double C = (step - strata_cluster_calibration(B->S[0].c)->step_seconds) *
                 (1 + 1e-12) +
             1e-15;
  ASSERT(P <= 64 && L <= 256);
  B->floors++;
  if (!B->differ) { /* interleaved: units of v layers, v times the cut */
    double av[64];
    for (int s = 0; s < P; s++)
      lo[s] = 1, hi[s] = u[s], av[s] = a[s] * B->v;
    ASSERT(
        st__split_floor(P, L / B->v, B->m * B->v, av, e, lo, hi, 1, C * B->v));
    return;
  }
  w[0] = 0; /* group 0's prefix sums, the unit of work */
  for (int l = 0; l < L; l++) {
    st__part_t y = {0};
    st__layers_add(&B->S[0], B->f[0], l, 1, &y);
    w[l + 1] = w[l] + y.fwd + y.bwd;
  }
  fold(w, L, B->v, F);
  double least = INFINITY;
  for (int l = 0; l < U; l++) {
    if (F[l + 1] - F[l] < least) least = F[l + 1] - F[l];
    if ((w[l + 1] - w[l]) / (F[l + 1] - F[l]) < rho)
      rho = (w[l + 1] - w[l]) / (F[l + 1] - F[l]);
  }
  for (int s = 0; s < P; s++) {
    k[s] = INFINITY, lo[s] = least, hi[s] = 0;
    for (int l = 0; l < L; l++) {
      double r = (pre[s][l + 1] - pre[s][l]) / (w[l + 1] - w[l]);
      if (r < k[s]) k[s] = r;
    }
    for (int l = 0; l < U; l++) {
      int c = cap[s * U + l];
      if (F[l + c] - F[l] > hi[s]) hi[s] = F[l + c] - F[l];
    }
  }
  ASSERT(st__split_floor(P, F[U], B->m / rho, k, e, lo, hi, 0, C / rho));
}

/* The pipeline of the current order and pp, split and costed. */
static void cost_pipeline(brute_t *B) {
  int L = B->L, U = L / B->v, P = 0, u[64], n[64];
  const st__family_t *fs[64];
  st__search_t *ss[64];
  double a[64], e[64], *pre[64], *F[64];
  int *cap = calloc((size_t)64 * (size_t)L, sizeof *cap);
  ASSERT(cap);
  for (int j = 0; j < B->K; j++)
    for (int q = 0; q < B->pp[j]; q++, P++)
      fs[P] = B->f[B->order[j]], ss[P] = &B->S[B->order[j]];
  for (int s = 0; s < P; s++) {
    st__cfg_t one = {fs[s], P,    B->dp, B->v, B->b, B->m, 0, 0, NULL,
                     NULL,  NULL, 0,     0,    0,    0,    0, 0};
    st__part_t x = {0};
    st__layers_add(ss[s], fs[s], 0, 1, &x);
    a[s] = x.fwd + x.bwd;
    e[s] = (s == 0 ? fs[s]->pro.fwd + fs[s]->pro.bwd : 0) +
           (s == P - 1 ? fs[s]->epi.fwd + fs[s]->epi.bwd : 0);
    u[s] = holds(ss[s], &one, s, 0, L / B->v - P + 1);
    pre[s] = malloc(sizeof(double) * (size_t)(L + 1));
    F[s] = malloc(sizeof(double) * (size_t)(L + 1));
    ASSERT(pre[s] && F[s]);
    pre[s][0] = 0;
    for (int l = 0; l < L; l++) {
      st__part_t y = {0};
      st__layers_add(ss[s], fs[s], l, 1, &y);
      pre[s][l + 1] = pre[s][l] + y.fwd + y.bwd;
    }
    fold(pre[s], L, B->v, F[s]); /* a rank's work on a round's positions */
    /* the caps from every first position (layers that differ) */
    for (int l = 0; l < U && B->differ; l++)
      cap[s * U + l] = holds(ss[s], &one, s, l, U);
  }
  double av[64], v;
  for (int s = 0; s < P; s++)
    av[s] = a[s] * B->v; /* a unit: one layer in each chunk */
  if (B->differ)
    v = st__split_prefix(U, P, B->m * B->v, (const double *const *)F, e, cap,
                         n);
  else
    v = st__split_linear(U, P, B->m * B->v, av, e, u, n);
  if (isfinite(v)) {
    for (int s = 0; s < P; s++)
      n[s] *= B->v;
    st__cfg_t cf = {fs[0], P,  B->dp, B->v, B->b, B->m, 0, 0, n,
                    fs,    ss, 0,     0,    0,    0,    0, 0};
    st__cost_t c;
    ASSERT_OK(st__cfg_cost(&B->S[0], &cf, 1, &c));
    B->configs++;
    if (c.fits == 1 && c.step < B->best) B->best = c.step;
    check_floor(B, P, a, e, u, pre, cap, c.step);
  }
  for (int s = 0; s < P; s++)
    free(pre[s]), free(F[s]);
  free(cap);
}

/* Every pp of the groups from position j on (P stages so far, used of
 * them on a group of their own). */
static void each_pp(brute_t *B, int j, int P, int used) {
  if (j == B->K) {
    if (used >= 2 && P >= 2 && P <= B->L && interleaved_ok(B, P))
      cost_pipeline(B);
    return;
  }
  int z = B->order[j];
  int most = B->f[z] ? B->S[z].total / (B->f[z]->tcp * B->dp) : 0;
  for (int p = 0; p <= most && P + p <= B->L; p++) {
    B->pp[j] = p;
    each_pp(B, j + 1, P + p, used + (p > 0));
  }
}

/* Every order of the groups from position j on. */
static void each_order(brute_t *B, int j) {
  if (j == B->K) {
    each_pp(B, 0, 0, 0);
    return;
  }
  for (int i = j; i < B->K; i++) {
    int x = B->order[j];
    B->order[j] = B->order[i], B->order[i] = x;
    each_order(B, j + 1);
    x = B->order[j], B->order[j] = B->order[i], B->order[i] = x;
  }
}

/* The least step of a mixed configuration of model on spec, every one
 * of them costed; INFINITY when none fits. */
static double brute_force(const strata_graph_t *g, const strata_cluster_t *c,
                          const strata_plan_opts_t *o, long *configs) {
  brute_t *B = calloc(1, sizeof *B);
  ASSERT(B);
  B->K = strata_cluster_group_count(c);
  ASSERT(B->K >= 2 && B->K <= MAXG);
  B->best = INFINITY;
  for (int z = 0; z < B->K; z++) {
    /* a group holds some stages only: no whole-model memory floor */
    ASSERT_OK(st__search_prepare_in(&B->S[z], g, strata_cluster_group(c, z), o,
                                    NULL));
    ASSERT_OK(st__eval_scratch(&B->S[z]));
  }
  strata_link_t x = strata_cluster_group_link(c);
  B->S[0].xp2p[0] = x.latency, B->S[0].xp2p[1] = 1.0 / x.bandwidth;
  B->L = B->S[0].L;
  B->differ = B->S[0].graphs[0]->n_blocks != 1;
  for (int i = 0; i < B->S[0].n_fam; i++) {
    const st__family_t *f = &B->S[0].fam[i];
    if (!f->ok) continue;
    B->f[0] = f;
    for (int z = 1; z < B->K; z++)
      B->f[z] = match_of(B, z, f);
    B->b = B->S[0].graphs[f->graph]->micro_batch;
    if (o->global_batch % B->b) continue;
    int micro = o->global_batch / B->b;
    for (B->dp = 1; B->dp <= micro; B->dp++) {
      if (micro % B->dp) continue;
      B->m = micro / B->dp;
      /* 1, and every v that rounds the layers evenly */
      for (B->v = 1; B->v <= (!o->megatron ? 1 : 64); B->v++) {
        if (B->L % B->v || 2 * B->v > B->L) continue;
        if (o->vpp > 0 && B->v != o->vpp) continue;
        for (int z = 0; z < B->K; z++)
          B->order[z] = z;
        each_order(B, 0);
      }
    }
  }
  double best = B->best;
  ASSERT(B->floors == B->configs && B->configs > 0);
  *configs = B->configs;
  for (int z = B->K - 1; z >= 0; z--)
    st__search_release(&B->S[z]);
  free(B);
  return best;
}

/* The plan of model on spec against the brute force: its step the least
 * of the mixed configurations and the groups alone.  Returns the least
 * mixed step. */
static double check(const char *model, const char *spec, int layers, int batch,
                    int interleaved) {
  strata_cluster_t *c = NULL;
  strata_graph_t *g = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_t o;
  strata_gen_opts_t gen;
  strata_gen_opts_keep(&gen);
  gen.layers = layers;
  strata_plan_opts_init(&o);
  o.quiet = 1;
  o.threads = 1;
  o.top = 1; /* the step to beat is the best of the groups alone */
  o.model_spec = model;
  o.gen = gen;
  o.global_batch = batch;
  ASSERT_OK(strata_cluster_load(spec, &c));
  ASSERT_OK(strata_model_load(model, &gen, &g));
  long configs = 0;
  double mixed = brute_force(g, c, &o, &configs), alone = INFINITY;
  for (int z = 0; z < strata_cluster_group_count(c); z++) {
    strata_plan_t *a = NULL;
    int rc = strata_pipeline_plan(g, strata_cluster_group(c, z), &o, &a);
    ASSERT(rc == 0 || rc == STRATA_EINFEASIBLE);
    if (!rc && a->step_seconds < alone) alone = a->step_seconds;
    strata_plan_destroy(a);
    strata_error_clear();
  }
  ASSERT_OK(strata_pipeline_plan(g, c, &o, &p));
  printf("  %s, %d layers, %s: %ld configurations, the best over the groups "
         "%.6f s, alone %.6f s, planned %.6f s\n",
         model, layers, spec + sizeof STRATA_SOURCE_DIR + 16, configs, mixed,
         alone, p->step_seconds);
  ASSERT(!p->time_limited);
  ASSERT_NEAR(p->step_seconds, mixed < alone ? mixed : alone, 1e-12, 0);
  if (mixed < alone) ASSERT(p->stages[0].group != p->stages[p->pp - 1].group);
  /* interleaved over the groups where that is the best */
  if (interleaved) ASSERT(mixed < alone && p->vpp > 1);
  strata_plan_destroy(p);
  strata_graph_destroy(g);
  strata_cluster_destroy(c);
  return mixed < alone ? mixed : -1;
}

/* Layers alike (the linear split) on two and three groups. */
TEST(mixed_search_equals_brute_force) {
  ASSERT(check("gpt-1.7b", SPEC("mixed-three.json"), 8, 64, 0) > 0);
  ASSERT(check("gpt-7.5b", SPEC("mixed.json"), 12, 64, 1) > 0);
}

/* Layers that differ (dense, then MoE, then MTP; windowed attention on
 * every other layer: the prefix split, folded over the rounds of chunks
 * where interleaved).  DeepSeek-V3's 8 layers and gpt-oss-120b's 8 on
 * mixed.json come out interleaved over both groups. */
TEST(mixed_search_equals_brute_force_layers_differ) {
  ASSERT(check("deepseek-v3", SPEC("mixed.json"), 8, 64, 1) > 0);
  ASSERT(check("deepseek-v3", SPEC("mixed-three.json"), 6, 32, 0) > 0);
  ASSERT(check("gpt-oss-120b", SPEC("mixed.json"), 8, 128, 1) > 0);
}

/* The layers of a Megatron-LM layout ("Et*3|(t*2|)*3t*4L"), its runs
 * unrolled as its parser does, into n (at most max chunks): their count. */
static int layout_chunks(const char *lay, int *n, int max) {
  int k = 0, at = 0;
  n[0] = 0;
  for (const char *c = lay; *c && k < max;) {
    if (*c == '(') { /* a run: (...|)*N */
      const char *close = strchr(c, ')');
      ASSERT(close && close[1] == '*');
      int first = k, reps = atoi(close + 2), len;
      char inner[256];
      len = (int)(close - c - 1);
      ASSERT(len > 0 && len < (int)sizeof inner);
      memcpy(inner, c + 1, (size_t)len);
      inner[len] = '\0';
      int got = layout_chunks(inner, n + k, max - k) - 1; /* its last: "" */
      for (int r = 1; r < reps && k + (r + 1) * got <= max; r++)
        memcpy(n + first + r * got, n + first, sizeof *n * (size_t)got);
      k += reps * got;
      at = k;
      n[k] = 0;
      for (c = close + 2; *c >= '0' && *c <= '9'; c++)
        ;
      continue;
    }
    if (*c == '|') {
      n[++k] = 0, at = k, c++;
      continue;
    }
    if (*c == 't') {
      n[at] += c[1] == '*' ? atoi(c + 2) : 1;
      for (c++; *c == '*' || (*c >= '0' && *c <= '9'); c++)
        ;
      continue;
    }
    c++; /* E, m, L */
  }
  return k + 1;
}

/* A mixed plan of a model whose layers differ, interleaved over both
 * groups with ranks of different layers (gpt-oss's windowed layers every
 * other one, --pp 4 --vpp 2): its chunks in rounds of the same counts,
 * chunk j of rank s from j L / v + the layers of the ranks before s over
 * v, and the Megatron-LM layout that the export writes for it holding the
 * model's layers in those chunks. */
TEST(mixed_interleaved_layers_differ_export) {
  strata_cluster_t *c = NULL;
  strata_graph_t *g = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_t o;
  strata_gen_opts_t gen;
  char *text = NULL;
  int n[64], L = 16;
  strata_gen_opts_keep(&gen);
  gen.layers = L;
  strata_plan_opts_init(&o);
  o.quiet = 1;
  o.threads = 1;
  o.model_spec = "gpt-oss-120b";
  o.gen = gen;
  o.global_batch = 64;
  o.pp = 4;
  o.vpp = 2;
  ASSERT_OK(strata_cluster_load(SPEC("mixed.json"), &c));
  ASSERT_OK(strata_model_load("gpt-oss-120b", &gen, &g));
  ASSERT_OK(strata_pipeline_plan(g, c, &o, &p));
  ASSERT_EQ(p->pp, 4);
  ASSERT_EQ(p->vpp, 2);
  ASSERT_EQ(p->n_stages, 8);
  ASSERT(p->stages[0].group != p->stages[3].group);
  int before = 0, U = L / 2;
  for (int s = 0; s < p->pp; s++) {
    int len = p->stages[s].layer_end - p->stages[s].layer_begin;
    for (int j = 0; j < p->vpp; j++) {
      const strata_plan_stage_t *st = &p->stages[j * p->pp + s];
      ASSERT_EQ(st->rank, s);
      ASSERT_EQ(st->layer_begin, j * U + before);
      ASSERT_EQ(st->layer_end - st->layer_begin, len);
    }
    before += len;
  }
  ASSERT_EQ(before, U);
  ASSERT(!strata_plan_rank_form(p)); /* the layout says it */
  ASSERT_OK(strata_export_megatron(p, &text));
  const char *lay = strstr(text, "--pipeline-model-parallel-layout '");
  ASSERT(lay != NULL);
  lay += 34;
  char buf[512];
  const char *end = strchr(lay, '\'');
  ASSERT(end && end - lay < (long)sizeof buf);
  memcpy(buf, lay, (size_t)(end - lay));
  buf[end - lay] = '\0';
  ASSERT_EQ(layout_chunks(buf, n, 64), 8);
  int sum = 0;
  for (int k = 0; k < 8; k++) {
    ASSERT_EQ(n[k], p->stages[k].layer_end - p->stages[k].layer_begin);
    sum += n[k];
  }
  ASSERT_EQ(sum, L);
  printf("  gpt-oss-120b, %d layers, mixed.json, pp 4, vpp 2: %s, %.6f s\n", L,
         buf, p->step_seconds);
  strata_free(text);
  strata_plan_destroy(p);
  strata_graph_destroy(g);
  strata_cluster_destroy(c);
}

static const test_entry_t tests[] = {
    TEST_ENTRY(mixed_search_equals_brute_force),
    TEST_ENTRY(mixed_search_equals_brute_force_layers_differ),
    TEST_ENTRY(mixed_interleaved_layers_differ_export),
};

TEST_MAIN(tests)
