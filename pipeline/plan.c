/*
 * plan.c - the whole-model planner: enumerate stage families (tensor-
 * parallel submesh, micro-batch, sequence parallelism, recompute), solve
 * their distinct stage subproblems concurrently, then pick the pipeline
 * degree, data parallelism and layer split with the least step time that
 * fits in memory, and re-solve the chosen stages exactly.
 *
 * Megatron-compatible mode (the default): one tensor-parallel size within
 * a node, equal stages, Megatron's layer split and Megatron's layouts.
 * Free mode: stage strategies from the min-memory ILP, submeshes of whole
 * nodes too, and the layer split from Alpa's dynamic program (split.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline/search.h"

#define MAX_FAM 4096
#define MAX_PP 1024
#define MAX_STAGE_NODES 8

typedef struct {
  int nodes, gpn, t; /* submesh */
  int graph;         /* micro-batch variant */
  int sp, zero;
  strata_recompute_t rc;
  st__sub_t *sub[ST__KINDS][3];
  st__kindcost_t kc[ST__KINDS];
} family_t;

typedef struct {
  const strata_graph_t *g;
  const strata_cluster_t *c;
  const strata_plan_opts_t *o;
  strata_graph_t *own[8];
  const strata_graph_t *graphs[8];
  uint64_t ghash[8];
  int n_graphs;
  int L, G, N, total;
  double budget;
  family_t *fam;
  int n_fam;
  st__subset_t subs;
  double deadline;
  int ilps, hits;
} search_t;

/* ---- configuration evaluation ---- */

typedef struct {
  const family_t *f;          /* every stage's family ... */
  const family_t *fs[MAX_PP]; /* ... unless set here (stages of different
                              sizes, free mode) */
  int p, dp, b, n_micro;
  int n[MAX_PP];
  double T, peak;
} config_t;

static const family_t *fam(const config_t *cf, int s) {
  return cf->fs[s] ? cf->fs[s] : cf->f;
}

static int kind_of(int s, int p) {
  if (p == 1) return ST__KIND_ONLY;
  return s == 0 ? ST__KIND_FIRST : s == p - 1 ? ST__KIND_LAST : ST__KIND_MID;
}

static int in_flight(int s, int p, int n_micro) {
  int f = p - s;
  return f < n_micro ? f : n_micro;
}

/* The gradient all-reduce across the dp replicas of a stage (ranks t
 * apart, Megatron's order: tensor, then data, then pipeline) is affine in
 * its bytes: its latency part and its cost per byte, asked of topo/ once
 * per configuration.  Gradients go in 25 MB buckets, each paying the
 * latency. */
typedef struct {
  double lat, per_byte;
} sync_model_t;

static sync_model_t outer_sync_model(const search_t *S, int t, int dp) {
  sync_model_t m = {0, 0};
  int ranks[1024], n = dp < 1024 ? dp : 1024;
  double one = 0, big = 0;
  if (dp <= 1) return m;
  for (int r = 0; r < n; r++)
    ranks[r] = r * t;
  if (strata_cluster_coll_time_ranks(S->c, STRATA_COLL_ALLREDUCE, 1, ranks, n,
                                     &one) ||
      strata_cluster_coll_time_ranks(S->c, STRATA_COLL_ALLREDUCE, 1e9, ranks, n,
                                     &big)) {
    m.lat = INFINITY;
    return m;
  }
  m.per_byte = (big - one) / (1e9 - 1);
  m.lat = one - m.per_byte;
  return m;
}

static double outer_sync(const sync_model_t *m, double grad_bytes) {
  if (grad_bytes <= 0 || (m->lat == 0 && m->per_byte == 0)) return 0;
  return ceil(grad_bytes / 25e6) * m->lat + grad_bytes * m->per_byte;
}

static double p2p_time(const search_t *S, const config_t *cf) {
  const strata_graph_t *g = S->graphs[cf->f->graph];
  if (cf->p <= 1 || g->n_blocks == 0) return 0;
  double bytes = (double)strata_tensor_bytes(&g->tensors[g->blocks[0].output]);
  bytes /= cf->f->t; /* Megatron's scatter-gather across tensor ranks */
  int ranks[2] = {0, cf->dp * cf->f->t};
  double sec = 0;
  if (ranks[1] >= S->total) ranks[1] = S->total - 1;
  if (strata_cluster_coll_time_ranks(S->c, STRATA_COLL_P2P, bytes, ranks, 2,
                                     &sec))
    return 0;
  return sec;
}

typedef struct {
  const search_t *S;
  config_t *cf;
  double budget;
  double p2p;
} costctx_t;

/* Time of stage s with n layers, INFINITY if it does not fit. */
static double stage_cost(void *vctx, int s, int n) {
  costctx_t *x = vctx;
  const config_t *cf = x->cf;
  const st__kindcost_t *k = &fam(cf, s)->kc[kind_of(s, cf->p)];
  if (!k->ok) return INFINITY;
  int f = in_flight(s, cf->p, cf->n_micro);
  if (st__kind_mem(k, n, f, cf->dp, cf->f->zero) > x->budget) return INFINITY;
  double t = st__kind_time(k, n);
  if (s < cf->p - 1) t += x->p2p;
  if (s > 0) t += x->p2p;
  return t;
}

/* Step time and peak memory of a configuration whose split is set. */
static void score(const search_t *S, config_t *cf, double budget) {
  costctx_t x = {S, cf, budget, p2p_time(S, cf)};
  sync_model_t sm = outer_sync_model(S, cf->f->t, cf->dp);
  double sum = 0, mx = 0, sync = 0, peak = 0;
  cf->T = INFINITY;
  for (int s = 0; s < cf->p; s++) {
    double t = stage_cost(&x, s, cf->n[s]);
    if (!isfinite(t)) return;
    const st__kindcost_t *k = &fam(cf, s)->kc[kind_of(s, cf->p)];
    int f = in_flight(s, cf->p, cf->n_micro);
    double m = st__kind_mem(k, cf->n[s], f, cf->dp, cf->f->zero);
    double g = k->grad1 + (cf->n[s] - 1) * k->dgrad;
    double sy = k->s1 + (cf->n[s] - 1) * k->ds + outer_sync(&sm, g);
    sum += t;
    if (t > mx) mx = t;
    if (sy > sync) sync = sy;
    if (m > peak) peak = m;
  }
  cf->T = sum + (cf->n_micro - 1) * mx + sync;
  cf->peak = peak;
}

/* Split the layers (Megatron's rule, or Alpa's DP), then score. */
static void evaluate(const search_t *S, config_t *cf, double budget) {
  costctx_t x = {S, cf, budget, p2p_time(S, cf)};
  cf->T = INFINITY;
  if (S->o->megatron) {
    if (st__split_megatron(S->L, cf->p, cf->n)) return;
  } else if (!isfinite(st__split_dp(S->L, cf->p, cf->n_micro,
                                    2 * ((S->L + cf->p - 1) / cf->p),
                                    stage_cost, &x, cf->n))) {
    return;
  }
  score(S, cf, budget);
}

static int better(const config_t *a, const config_t *b) {
  if (!isfinite(b->T)) return isfinite(a->T);
  if (a->T < b->T * (1 - 1e-9)) return 1;
  if (a->T > b->T * (1 + 1e-9)) return 0;
  return a->peak < b->peak;
}

/* ---- families and their subproblems ---- */

static void base_stage_opts(const search_t *S, const family_t *f,
                            strata_stage_opts_t *so) {
  const strata_plan_opts_t *o = S->o;
  strata_stage_opts_init(so);
  strata_cluster_stage_mesh(S->c, f->nodes, f->gpn, &so->mesh);
  so->alpha = o->alpha;
  so->objective = o->megatron ? STRATA_OBJ_MEGATRON : STRATA_OBJ_MIN_MEM;
  so->recipe = o->recipe;
  so->zero_stage = f->zero;
  so->recompute = f->rc;
  so->sequence_parallel = f->sp;
  so->megatron_tp_axes = so->mesh.ndim;
  so->peak_flops = strata_cluster_gpu_peak_flops(S->c);
  so->efficiency = o->efficiency;
  so->fastest_bandwidth = strata_cluster_fastest_bandwidth(S->c);
  so->time_limit = o->stage_time_limit;
  so->layer_begin = 0;
}

static int family_subs(search_t *S, family_t *f) {
  static const int pts[3][2] = {{1, 1}, {2, 1}, {1, 2}}; /* (n, f) */
  for (int k = 0; k < ST__KINDS; k++)
    for (int i = 0; i < 3; i++) {
      strata_stage_opts_t so;
      int n = pts[i][0];
      f->sub[k][i] = NULL;
      if (n > S->L) continue;
      base_stage_opts(S, f, &so);
      so.layer_end = n;
      so.with_prologue = k == ST__KIND_ONLY || k == ST__KIND_FIRST;
      so.with_epilogue = k == ST__KIND_ONLY || k == ST__KIND_LAST;
      so.in_flight = pts[i][1];
      int rc = st__subset_get(&S->subs, S->graphs[f->graph], S->ghash[f->graph],
                              &so, &f->sub[k][i]);
      if (rc) return rc;
    }
  return 0;
}

static int divides_heads(const strata_graph_t *g, int t) {
  if (g->hp.heads && g->hp.heads % t) return 0;
  if (g->hp.kv_heads && g->hp.kv_heads % t) return 0;
  return 1;
}

static int add_family(search_t *S, int nodes, int gpn, int graph, int sp,
                      strata_recompute_t rc) {
  if (S->n_fam >= MAX_FAM) return 0;
  family_t *f = &S->fam[S->n_fam];
  memset(f, 0, sizeof *f);
  f->nodes = nodes;
  f->gpn = gpn;
  f->t = nodes * gpn;
  f->graph = graph;
  f->sp = sp;
  f->rc = rc;
  f->zero = S->o->zero_stage >= 0 ? S->o->zero_stage : 1;
  if (!divides_heads(S->graphs[graph], f->t)) return 0;
  S->n_fam++;
  return family_subs(S, f);
}

static int enumerate_families(search_t *S) {
  const strata_plan_opts_t *o = S->o;
  int rc = 0;
  for (int gi = 0; gi < S->n_graphs && !rc; gi++)
    for (int t = 1; t <= S->total && !rc; t *= 2) {
      if (o->fix_tp && t != o->fix_tp) continue;
      int nodes = t <= S->G ? 1 : t / S->G, gpn = t <= S->G ? t : S->G;
      /* free mode: stages of up to MAX_STAGE_NODES whole nodes (a larger
       * tensor/data-parallel stage only adds inter-node traffic that the
       * outer data parallelism carries more cheaply) */
      if (t > S->G &&
          (o->megatron || t % S->G || nodes > S->N || nodes > MAX_STAGE_NODES))
        continue;
      if (t <= S->G && S->G % t) continue;
      for (int r = 0; r < 3 && !rc; r++) {
        if (!o->recompute_auto && r != (int)o->recompute) continue;
        for (int sp = 0; sp <= 1 && !rc; sp++) {
          int want = o->sequence_parallel;
          if (sp && (t == 1 || !o->megatron)) continue;
          if (want >= 0 && sp != want && t > 1 && o->megatron) continue;
          rc = add_family(S, nodes, gpn, gi, sp, (strata_recompute_t)r);
        }
      }
    }
  return rc;
}

static void fit_kinds(search_t *S) {
  for (int i = 0; i < S->n_fam; i++) {
    family_t *f = &S->fam[i];
    for (int k = 0; k < ST__KINDS; k++) {
      st__sub_t **s = f->sub[k];
      f->kc[k].ok = 0;
      if (!s[0] || !s[2] || s[0]->err || s[2]->err || !s[0]->res || !s[2]->res)
        continue;
      if (s[1] && (s[1]->err || !s[1]->res)) continue;
      if (s[0]->res->status > STRATA_STAGE_FEASIBLE ||
          s[2]->res->status > STRATA_STAGE_FEASIBLE)
        continue;
      st__kind_fit(&f->kc[k], s[0]->res, s[1] ? s[1]->res : NULL, s[2]->res);
    }
  }
}

/* ---- the search over pipeline and data parallelism ---- */

/* The data parallelism of p stages of t devices: the most replicas that
 * fit the cluster and divide the global batch into micro-batches of b
 * (after a node is drained the largest may not divide: take the next). */
static int pick_dp(const search_t *S, int t, int p, int b) {
  int per = S->total / t;
  if (p > S->L || p > per || p > MAX_PP) return 0;
  if (S->o->max_pp && p > S->o->max_pp) return 0;
  if (S->o->fix_dp)
    return S->o->fix_dp * p <= per &&
                   S->o->global_batch % (b * S->o->fix_dp) == 0
               ? S->o->fix_dp
               : 0;
  for (int dp = per / p; dp >= 1; dp--)
    if (S->o->global_batch % (b * dp) == 0) return dp;
  return 0;
}

static void search_family(const search_t *S, const family_t *f, config_t *best,
                          config_t *lowest) {
  int b = S->graphs[f->graph]->micro_batch;
  for (int p = 1; p <= S->L; p++) {
    if (S->o->fix_pp && p != S->o->fix_pp) continue;
    int dp = pick_dp(S, f->t, p, b);
    if (!dp) continue;
    config_t cf;
    memset(&cf, 0, sizeof cf);
    cf.f = f;
    cf.p = p;
    cf.dp = dp;
    cf.b = b;
    cf.n_micro = S->o->global_batch / (b * dp);
    evaluate(S, &cf, S->budget);
    if (better(&cf, best)) *best = cf;
    if (isfinite(cf.T)) continue;
    /* the least memory any configuration needs, for the message when
     * nothing fits */
    config_t m = cf;
    evaluate(S, &m, INFINITY);
    if (isfinite(m.T) && (!lowest->f || m.peak < lowest->peak)) *lowest = m;
  }
}

/* ---- free mode: stages of different sizes ---- */

#define HETERO_SHAPES 8
#define HETERO_GROUPS 32 /* layers are grouped beyond this many */
#define HETERO_UNITS 128 /* device units of a replica at most */

typedef struct {
  const search_t *S;
  const config_t *base;
  const family_t *shape[HETERO_SHAPES];
  int g; /* layers per group */
  double p2p;
} hctx_t;

static double hetero_cost(void *vctx, int z, int f, int k, int n) {
  const hctx_t *h = vctx;
  const search_t *S = h->S;
  int a = k * h->g, b = (k + n) * h->g < S->L ? (k + n) * h->g : S->L;
  if (a >= S->L || b <= a) return INFINITY;
  int kind = a == 0 && b == S->L ? ST__KIND_ONLY
             : a == 0            ? ST__KIND_FIRST
             : b == S->L         ? ST__KIND_LAST
                                 : ST__KIND_MID;
  const st__kindcost_t *kc = &h->shape[z]->kc[kind];
  int infl = f < h->base->n_micro ? f : h->base->n_micro;
  if (!kc->ok ||
      st__kind_mem(kc, b - a, infl, h->base->dp, h->shape[z]->zero) > S->budget)
    return INFINITY;
  double t = st__kind_time(kc, b - a);
  if (kind != ST__KIND_ONLY) t += kind == ST__KIND_MID ? 2 * h->p2p : h->p2p;
  return t;
}

/* The shapes a stage of this replica may take: the families of the best
 * configuration's micro-batch, recompute and ZeRO, no larger than the
 * replica, and no smaller than it / HETERO_UNITS. */
static int hetero_shapes(const search_t *S, const config_t *best, int D,
                         hctx_t *h, int *units, int *unit) {
  int n = 0;
  *unit = 0;
  for (int i = 0; i < S->n_fam && n < HETERO_SHAPES; i++) {
    const family_t *f = &S->fam[i];
    if (f->graph != best->f->graph || f->rc != best->f->rc ||
        f->zero != best->f->zero || f->sp || f->t > D ||
        (long)f->t * HETERO_UNITS < D)
      continue;
    h->shape[n++] = f;
    if (!*unit || f->t < *unit) *unit = f->t;
  }
  for (int z = 0; z < n; z++) {
    if (h->shape[z]->t % *unit) return 0;
    units[z] = h->shape[z]->t / *unit;
  }
  return D % (*unit ? *unit : 1) == 0 ? n : 0;
}

/* Alpa's DP over stages of different sizes for the best configuration's
 * replica (same devices, data parallelism and micro-batch); replaces it
 * when it is faster.  Layers go in groups of ceil(L / HETERO_GROUPS). */
static void refine_hetero(const search_t *S, config_t *best) {
  hctx_t h;
  int units[HETERO_SHAPES], unit, p = 0, gn[HETERO_GROUPS + 1],
                                  gz[HETERO_GROUPS + 1];
  int D = best->f->t * best->p;
  memset(&h, 0, sizeof h);
  h.S = S;
  h.base = best;
  h.g = (S->L + HETERO_GROUPS - 1) / HETERO_GROUPS;
  h.p2p = p2p_time(S, best);
  int Z = hetero_shapes(S, best, D, &h, units, &unit);
  if (Z < 2) return; /* nothing to mix */
  int groups = (S->L + h.g - 1) / h.g;
  double T = st__split_hetero(groups, D / unit, best->n_micro, groups, Z, units,
                              hetero_cost, &h, &p, gn, gz);
  if (!isfinite(T) || p < 1) return;
  config_t *cf = strata_calloc(1, sizeof *cf);
  if (!cf) return; /* a refinement: the uniform plan stands */
  cf->f = best->f;
  cf->p = p;
  cf->dp = best->dp;
  cf->b = best->b;
  cf->n_micro = best->n_micro;
  for (int s = 0, k = 0; s < p; k += gn[s], s++) {
    int end = (k + gn[s]) * h.g < S->L ? (k + gn[s]) * h.g : S->L;
    cf->n[s] = end - k * h.g;
    cf->fs[s] = h.shape[gz[s]];
  }
  score(S, cf, S->budget);
  if (better(cf, best)) *best = *cf;
  strata_free(cf);
}

static int no_fit_error(const search_t *S, const config_t *lowest) {
  char need[32], have[32];
  strata_fmt_bytes(S->budget, have, sizeof have);
  if (!lowest->f)
    return strata_error(STRATA_EINFEASIBLE,
                        "no configuration of %d GPUs can "
                        "run this model (global batch %d): check that the "
                        "batch divides by micro-batch x data parallelism",
                        S->total, S->o->global_batch);
  strata_fmt_bytes(lowest->peak, need, sizeof need);
  double ratio = lowest->peak / S->budget;
  int more = (int)ceil(S->total * ratio / S->G) * S->G;
  return strata_error(STRATA_EINFEASIBLE,
                      "the model does not fit: the least memory any plan "
                      "needs is %s per device (tp %d, pp %d, dp %d, "
                      "micro-batch %d, recompute %s) but %s is available. "
                      "What would help: about %d GPUs or more, GPUs with more "
                      "memory, %s%sor a smaller global batch",
                      need, lowest->f->t, lowest->p, lowest->dp, lowest->b,
                      strata_recompute_name(lowest->f->rc), have, more,
                      S->o->zero_stage < 3 ? "ZeRO stage 3 (--free --zero 3, "
                                             "DeepSpeed), "
                                           : "",
                      lowest->f->rc != STRATA_RECOMPUTE_FULL
                          ? "full activation recompute (--recompute full), "
                          : "");
}

/* ---- the chosen plan, solved exactly ---- */

static strata_link_t dp_link(const search_t *S, int t, int dp) {
  strata_link_t l = {25e9, 10e-6};
  int extent = t * dp;
  for (int i = 0; i < strata_cluster_level_count(S->c); i++) {
    const strata_level_t *lv = strata_cluster_level(S->c, i);
    l = lv->link;
    if (lv->span >= extent) break;
  }
  return l;
}

static int final_subs(search_t *S, const config_t *cf, st__sub_t **out) {
  int begin = 0;
  for (int s = 0; s < cf->p; s++) {
    strata_stage_opts_t so;
    base_stage_opts(S, fam(cf, s), &so);
    so.layer_begin = begin;
    so.layer_end = begin + cf->n[s];
    so.with_prologue = s == 0;
    so.with_epilogue = s == cf->p - 1;
    so.in_flight = in_flight(s, cf->p, cf->n_micro);
    so.outer_dp = cf->dp;
    so.outer_link = dp_link(S, fam(cf, s)->t, cf->dp);
    so.memory_budget = S->budget;
    int rc = st__subset_get(&S->subs, S->graphs[cf->f->graph],
                            S->ghash[cf->f->graph], &so, &out[s]);
    if (rc) return rc;
    begin += cf->n[s];
  }
  return 0;
}

static int fill_stage(search_t *S, const config_t *cf, int s, st__sub_t *sub,
                      strata_plan_stage_t *ps, int begin, int rank) {
  if (sub->err)
    return strata_error(sub->err, "stage %d: %s", s,
                        sub->errmsg ? sub->errmsg : "not solved");
  strata_stage_result_t *r = sub->res;
  if (r->status > STRATA_STAGE_FEASIBLE)
    return strata_error(STRATA_EINFEASIBLE,
                        "stage %d (layers %d-%d) does not "
                        "fit when solved exactly: %s",
                        s, begin, begin + cf->n[s] - 1, r->hint ? r->hint : "");
  ps->layer_begin = begin;
  ps->layer_end = begin + cf->n[s];
  ps->with_prologue = s == 0;
  ps->with_epilogue = s == cf->p - 1;
  ps->nodes = fam(cf, s)->nodes;
  ps->gpus_per_node = fam(cf, s)->gpn;
  ps->first_rank = rank; /* stage after stage, each with its dp replicas */
  ps->mesh = sub->so.mesh;
  ps->in_flight = sub->so.in_flight;
  double t = r->compute_seconds + r->comm_seconds - r->sync_seconds;
  double rec = cf->f->rc == STRATA_RECOMPUTE_FULL ? 1.0 : 0.0;
  ps->fwd_seconds = t / (3.0 + rec);
  ps->bwd_seconds = t - ps->fwd_seconds;
  ps->sync_seconds = r->sync_seconds;
  ps->result = r;
  sub->res = NULL; /* the plan owns it now */
  (void)S;
  return 0;
}

static int set_str(char **dst, const char *src) {
  *dst = strata_strdup(src ? src : "");
  return *dst ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
}

static int build_plan(search_t *S, const config_t *cf, strata_plan_t **out) {
  st__sub_t *subs[MAX_PP];
  const strata_graph_t *g = S->graphs[cf->f->graph];
  strata_plan_t *p = strata_calloc(1, sizeof *p);
  int rc = p ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
  if (!rc) rc = final_subs(S, cf, subs);
  if (!rc)
    rc = st__solve_all(&S->subs, S->o->threads, S->o->cache_dir,
                       !S->o->quiet && isatty(2), 0, S->o->cancel, &S->ilps,
                       &S->hits);
  if (!rc) {
    p->stages = strata_calloc((size_t)cf->p, sizeof *p->stages);
    if (!p->stages) rc = strata_error(STRATA_ENOMEM, "out of memory");
  }
  int devices = 0;
  for (int s = 0, begin = 0; s < cf->p && !rc; begin += cf->n[s], s++) {
    rc = fill_stage(S, cf, s, subs[s], &p->stages[s], begin, devices);
    devices += fam(cf, s)->t * cf->dp;
    if (!rc) p->n_stages++;
  }
  if (!rc) rc = set_str(&p->model, S->g->name);
  if (!rc) rc = set_str(&p->cluster, strata_cluster_name(S->c));
  if (rc) {
    strata_plan_destroy(p);
    return rc;
  }
  p->devices = devices;
  p->tp = 0; /* the devices of a stage (the largest, if they differ) */
  for (int s = 0; s < cf->p; s++)
    p->tp = fam(cf, s)->t > p->tp ? fam(cf, s)->t : p->tp;
  p->pp = cf->p;
  p->dp = cf->dp;
  p->micro_batch = cf->b;
  p->global_batch = S->o->global_batch;
  p->n_micro = cf->n_micro;
  p->zero_stage = cf->f->zero;
  p->sequence_parallel = cf->f->sp;
  p->megatron = S->o->megatron;
  p->recipe = S->o->recipe;
  p->recompute = cf->f->rc;
  p->alpha = S->o->alpha;
  p->seq_len = g->seq_len;
  p->layers = S->L;
  p->hidden = g->hp.hidden;
  p->heads = g->hp.heads;
  p->kv_heads = g->hp.kv_heads;
  p->ffn = g->hp.ffn;
  p->vocab = g->hp.vocab;
  snprintf(p->family, sizeof p->family, "%s", g->hp.family);
  p->step_seconds = cf->T;
  p->gpu_memory_bytes = (double)strata_cluster_gpu_memory(S->c);
  p->gpu_peak_flops = strata_cluster_gpu_peak_flops(S->c);
  strata_graph_stats_t st;
  strata_graph_stats(g, &st);
  p->model_flops_per_step = st.flops_per_microbatch * cf->n_micro * cf->dp;
  for (int s = 0; s < p->n_stages; s++)
    if (p->stages[s].result->peak_memory_bytes > p->peak_memory_bytes)
      p->peak_memory_bytes = p->stages[s].result->peak_memory_bytes;
  *out = p;
  return 0;
}

/* ---- entry points ---- */

void strata_plan_opts_init(strata_plan_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->global_batch = 1024;
  o->alpha = 1.0;
  o->memory_reserve = 2.0 * 1024 * 1024 * 1024;
  o->zero_stage = -1;
  o->recipe = STRATA_RECIPE_MEGATRON;
  o->recompute = STRATA_RECOMPUTE_SELECTIVE;
  o->recompute_auto = 1;
  o->sequence_parallel = -1;
  o->megatron = 1;
  o->stage_time_limit = 60;
  o->efficiency = 0.5;
  strata_gen_opts_keep(&o->gen);
}

static int load_graphs(search_t *S) {
  const strata_plan_opts_t *o = S->o;
  static const int bs[] = {1, 2, 4};
  struct stat sb;
  int regen = o->model_spec && stat(o->model_spec, &sb) != 0;
  S->graphs[0] = S->g;
  S->n_graphs = 1;
  if (regen && o->micro_batch <= 0) {
    S->n_graphs = 0;
    for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++) {
      strata_gen_opts_t gen = o->gen;
      gen.micro_batch = bs[i];
      int rc = strata_model_load(o->model_spec, &gen, &S->own[S->n_graphs]);
      if (rc) return rc;
      S->graphs[S->n_graphs] = S->own[S->n_graphs];
      S->n_graphs++;
    }
  } else if (regen && o->micro_batch != S->g->micro_batch) {
    strata_gen_opts_t gen = o->gen;
    gen.micro_batch = o->micro_batch;
    int rc = strata_model_load(o->model_spec, &gen, &S->own[0]);
    if (rc) return rc;
    S->graphs[0] = S->own[0];
  }
  for (int i = 0; i < S->n_graphs; i++)
    S->ghash[i] = st__graph_hash(S->graphs[i]);
  return 0;
}

static int check_opts(const search_t *S) {
  const strata_plan_opts_t *o = S->o;
  if (o->global_batch < 1)
    return strata_error(STRATA_EINVAL, "the global batch must be >= 1");
  if (S->L < 1)
    return strata_error(STRATA_EBADINPUT,
                        "model '%s' has no layers to "
                        "pipeline",
                        S->g->name);
  if (o->zero_stage > 3)
    return strata_error(STRATA_EINVAL, "ZeRO stage %d: must be 0 to 3",
                        o->zero_stage);
  if (o->megatron && o->zero_stage >= 2)
    return strata_error(STRATA_EINVAL,
                        "ZeRO stage %d is not available in "
                        "Megatron-compatible mode (Megatron-LM's distributed "
                        "optimizer is stage 1); use --free",
                        o->zero_stage);
  return 0;
}

static int setup(search_t *S, const strata_graph_t *g,
                 const strata_cluster_t *c, const strata_plan_opts_t *o) {
  memset(S, 0, sizeof *S);
  S->g = g;
  S->c = c;
  S->o = o;
  S->L = strata_graph_layers(g);
  S->G = strata_cluster_gpus_per_node(c);
  S->N = strata_cluster_nodes(c);
  S->total = strata_cluster_gpus(c);
  S->budget = o->memory_budget > 0
                  ? o->memory_budget
                  : (double)strata_cluster_gpu_memory(c) - o->memory_reserve;
  S->deadline = o->time_limit > 0 ? strata_now() + o->time_limit : 0;
  st__subset_init(&S->subs);
  int rc = check_opts(S);
  if (!rc) rc = load_graphs(S);
  if (!rc) {
    S->fam = strata_calloc(MAX_FAM, sizeof *S->fam);
    if (!S->fam) rc = strata_error(STRATA_ENOMEM, "out of memory");
  }
  return rc;
}

static void teardown(search_t *S) {
  st__subset_free(&S->subs);
  for (int i = 0; i < 8; i++)
    strata_graph_destroy(S->own[i]);
  strata_free(S->fam);
}

static int prepare_cache(const char *dir) {
  if (!dir) return 0;
  if (mkdir(dir, 0755) != 0) {
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
      return strata_error(STRATA_EIO, "cannot use cache folder '%s'", dir);
  }
  return 0;
}

int strata_pipeline_plan(const strata_graph_t *g, const strata_cluster_t *c,
                         const strata_plan_opts_t *o, strata_plan_t **out) {
  search_t S;
  config_t best, lowest;
  double t0 = strata_now();
  *out = NULL;
  int rc = setup(&S, g, c, o);
  if (!rc) rc = prepare_cache(o->cache_dir);
  if (!rc) rc = enumerate_families(&S);
  if (!rc)
    rc =
        st__solve_all(&S.subs, o->threads, o->cache_dir, !o->quiet && isatty(2),
                      S.deadline, o->cancel, &S.ilps, &S.hits);
  if (rc) goto out;
  fit_kinds(&S);
  memset(&best, 0, sizeof best);
  memset(&lowest, 0, sizeof lowest);
  best.T = INFINITY;
  lowest.peak = INFINITY;
  for (int i = 0; i < S.n_fam; i++)
    search_family(&S, &S.fam[i], &best, &lowest);
  if (best.f && !o->megatron && !o->fix_tp && !o->fix_pp)
    refine_hetero(&S, &best);
  if (!best.f) {
    rc = no_fit_error(&S, &lowest);
    goto out;
  }
  rc = build_plan(&S, &best, out);
  if (rc) goto out;
  (*out)->subproblems_distinct = S.subs.n;
  (*out)->subproblems_total = S.subs.requests;
  (*out)->ilps_solved = S.ilps;
  (*out)->cache_hits = S.hits;
  (*out)->time_limited = S.deadline > 0 && strata_now() > S.deadline;
  (*out)->plan_seconds = strata_now() - t0;
out:
  teardown(&S);
  return rc;
}
