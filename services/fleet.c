/*
 * fleet.c - several jobs share one cluster (strata fleet): each job's
 * throughput on n whole nodes of a node group, planned by the planner
 * itself, and the split of the nodes that maximises the operator's
 * objective, exactly: the weighted sum of the logs of the jobs'
 * tokens/s (proportional fairness, the default: as many jobs running as
 * can, then that sum), or the weighted sum of their tokens/s; within
 * each job's min and max nodes, and a job with a deadline on the fewest
 * nodes of a group that meet it.
 *
 * The split is a multiple-choice knapsack (docs/cost-model.md, "Sharing
 * a cluster among jobs"): job j picks at most one item (g, n) -- n nodes
 * of group g, worth its objective's term there -- or none, the items
 * picked may use at most each group's usable nodes, and the sum of their
 * worths is maximised (with the fair objective the number of jobs that
 * run first, then the sum).  A dynamic program over the jobs in order
 * and the nodes used of each group, f_j(u) = the best (count, worth) of
 * jobs 0 .. j-1 using exactly u (a vector, one count per group), solves
 * it: f_{j+1}(u) = max (f_j(u) if j may stay out, max over items (g, n)
 * of f_j(u - n e_g) + (1, v_j(g, n))).  Every split is a path through
 * it, so its best is the optimum; the first best found is kept (jobs out,
 * then fewer nodes, then lower groups), so the answer does not depend on
 * the platform.  An item worth no more than one of fewer nodes of its
 * group is never taken (nodes may idle), so only a curve's steps are.
 *
 * A curve is one search on the group's most nodes that keeps the best
 * configuration of every node count (STRATA_PARETO_STEP_GPUS): a plan
 * on n nodes searches exactly the configurations of at most n nodes'
 * GPUs, so its best is the fastest of that front on at most n nodes.
 * Where the plan may not take its search's best as it is (free splits,
 * searched offloads), the curve is made from its most nodes down, a plan
 * per step: a plan on n nodes whose best uses m nodes gives m .. n, the
 * next plan is on m - 1.  Each search is on a cluster of the group's
 * first n usable nodes (strata_cluster_subset) and solves its stage
 * ILPs on libuv's pool; jobs of one model and options share curves.
 * Once split, each job runs on its own run of consecutive usable nodes
 * of its group, jobs in JOBS.json order, and is planned again on exactly
 * those nodes with its own options: its plan names its own hosts, and
 * its figures are those of the leaves its nodes sit under.  A time limit
 * is the whole run's: the curves stop at 60 % of it (a curve cut short
 * has the points found), the plans on the jobs' nodes share the time to
 * 90 %, the rest kept for what is not a search (loading, writing).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/text.h"
#include "pipeline/search.h"

/* The program's table: jobs x the states of nodes used per group. */
#define MAX_STATES (1L << 24)
#define MAX_WORK 4e10

typedef struct {
  long states;
  long stride[STRATA_FLEET_MAX_GROUPS];
  int cols; /* max capacity + 1 */
} space_t;

static int make_space(const strata_fleet_problem_t *p, space_t *sp) {
  double work = 0, cap_sum = 0;
  sp->states = 1;
  sp->cols = p->max_nodes + 1;
  if (p->n_groups < 1 || p->n_groups > STRATA_FLEET_MAX_GROUPS || p->n_jobs < 1)
    return strata_error(STRATA_EINVAL, "fleet: %d jobs on %d node groups",
                        p->n_jobs, p->n_groups);
  for (int g = 0; g < p->n_groups; g++) {
    if (p->capacity[g] < 0 || p->capacity[g] > p->max_nodes)
      return strata_error(STRATA_EINVAL, "fleet: group %d holds %d nodes", g,
                          p->capacity[g]);
    sp->stride[g] = sp->states;
    cap_sum += p->capacity[g];
    if ((double)sp->states * (p->capacity[g] + 1) * p->n_jobs > MAX_STATES)
      return strata_error(STRATA_EUNSUPPORTED,
                          "fleet: %d jobs over node groups of these sizes "
                          "make more than %ld states to search; give fewer "
                          "jobs or split the cluster",
                          p->n_jobs, MAX_STATES);
    sp->states *= p->capacity[g] + 1;
  }
  work = (double)sp->states * p->n_jobs * (1 + cap_sum);
  if (work > MAX_WORK)
    return strata_error(STRATA_EUNSUPPORTED,
                        "fleet: %.3g steps to search; give fewer jobs or "
                        "fewer nodes",
                        work);
  return 0;
}

static double worth(const strata_fleet_problem_t *p, const space_t *sp, int j,
                    int g, int n) {
  double v = p->value[((long)j * p->n_groups + g) * sp->cols + n];
  return v >= 0 ? v : -1; /* NaN too: no point */
}

/* Job j's items worth taking: (g, n) with a point worth more than every
 * point of fewer nodes of g (one worth no more on more nodes is never
 * better: the nodes it leaves may idle).  Their count. */
typedef struct {
  int g, n;
  double v;
} item_t;

static int items_of(const strata_fleet_problem_t *p, const space_t *sp, int j,
                    item_t *it) {
  int k = 0;
  for (int g = 0; g < p->n_groups; g++) {
    double best = -1;
    for (int n = 1; n <= p->capacity[g]; n++) {
      double v = worth(p, sp, j, g, n);
      if (v < 0 || !(v > best)) continue;
      it[k++] = (item_t){g, n, v};
      best = v;
    }
  }
  return k;
}

/* (c1, v1) better than (c2, v2): by count first where asked. */
static int better(int cf, int c1, double v1, int c2, double v2) {
  return cf ? c1 > c2 || (c1 == c2 && v1 > v2) : v1 > v2;
}

typedef struct {
  double *f, *t;
  int *fc, *tc; /* jobs running */
  int *choice;  /* [jobs][states]: the item taken, -1 none */
  item_t *it;   /* [jobs][1 + sum of capacities] */
  int *n_it, stride_it;
} dp_t;

/* One job's step of the program: from f (jobs before j) into t. */
static void step(const strata_fleet_problem_t *p, const space_t *sp, int j,
                 dp_t *d) {
  int cf = p->count_first, *choice = d->choice + (long)j * sp->states;
  const item_t *it = d->it + (long)j * d->stride_it;
  for (long s = 0; s < sp->states; s++) {
    d->t[s] = -DBL_MAX;
    d->tc[s] = -1;
    choice[s] = -1;
  }
  for (long s = 0; s < sp->states; s++) {
    if (d->f[s] == -DBL_MAX) continue;
    if (!p->required[j] && better(cf, d->fc[s], d->f[s], d->tc[s], d->t[s])) {
      d->t[s] = d->f[s];
      d->tc[s] = d->fc[s];
      choice[s] = -1;
    }
    for (int k = 0; k < d->n_it[j]; k++) {
      int g = it[k].g, n = it[k].n;
      int used = (int)(s / sp->stride[g] % (p->capacity[g] + 1));
      if (n > p->capacity[g] - used) continue;
      long to = s + n * sp->stride[g];
      double v = d->f[s] + it[k].v;
      if (!better(cf, d->fc[s] + 1, v, d->tc[to], d->t[to])) continue;
      d->t[to] = v;
      d->tc[to] = d->fc[s] + 1;
      choice[to] = k;
    }
  }
}

static void trace_back(const strata_fleet_problem_t *p, const space_t *sp,
                       const dp_t *d, long s, strata_fleet_choice_t *out) {
  for (int j = p->n_jobs - 1; j >= 0; j--) {
    int c = d->choice[(long)j * sp->states + s];
    const item_t *it = d->it + (long)j * d->stride_it + c;
    out[j].group = c < 0 ? 0 : it->g;
    out[j].nodes = c < 0 ? 0 : it->n;
    s -= (long)out[j].nodes * sp->stride[out[j].group];
  }
}

static int dp_alloc(const strata_fleet_problem_t *p, const space_t *sp,
                    dp_t *d) {
  size_t S = (size_t)sp->states, J = (size_t)p->n_jobs;
  d->stride_it = 1;
  for (int g = 0; g < p->n_groups; g++)
    d->stride_it += p->capacity[g];
  d->f = strata_malloc(S * sizeof *d->f);
  d->t = strata_malloc(S * sizeof *d->t);
  d->fc = strata_malloc(S * sizeof *d->fc);
  d->tc = strata_malloc(S * sizeof *d->tc);
  d->choice = strata_malloc(S * J * sizeof *d->choice);
  d->it = strata_malloc((size_t)d->stride_it * J * sizeof *d->it);
  d->n_it = strata_malloc(J * sizeof *d->n_it);
  if (!d->f || !d->t || !d->fc || !d->tc || !d->choice || !d->it || !d->n_it)
    return strata_error(STRATA_ENOMEM, "out of memory");
  for (int j = 0; j < p->n_jobs; j++)
    d->n_it[j] = items_of(p, sp, j, d->it + (long)j * d->stride_it);
  for (long s = 0; s < sp->states; s++) {
    d->f[s] = s ? -DBL_MAX : 0;
    d->fc[s] = 0;
  }
  return 0;
}

static void dp_free(dp_t *d) {
  strata_free(d->f);
  strata_free(d->t);
  strata_free(d->fc);
  strata_free(d->tc);
  strata_free(d->choice);
  strata_free(d->it);
  strata_free(d->n_it);
}

int strata_fleet_allocate(const strata_fleet_problem_t *p,
                          strata_fleet_choice_t *out, double *total) {
  space_t sp;
  dp_t d = {0};
  int rc = make_space(p, &sp);
  if (rc) return rc;
  if ((rc = dp_alloc(p, &sp, &d))) goto out;
  for (int j = 0; j < p->n_jobs; j++) {
    step(p, &sp, j, &d);
    double *x = d.f;
    int *xc = d.fc;
    d.f = d.t, d.fc = d.tc;
    d.t = x, d.tc = xc;
  }
  long best = 0;
  for (long s = 1; s < sp.states; s++)
    if (d.f[s] != -DBL_MAX &&
        better(p->count_first, d.fc[s], d.f[s], d.fc[best], d.f[best]))
      best = s;
  if (d.f[best] == -DBL_MAX) {
    rc = strata_error(STRATA_EINFEASIBLE,
                      "no split of the nodes gives every job that must run "
                      "a node count it fits on");
    goto out;
  }
  trace_back(p, &sp, &d, best, out);
  if (total) *total = d.f[best];
out:
  dp_free(&d);
  return rc;
}

/* ---- the curves and the plans ----------------------------------------- */

typedef struct {
  const strata_cluster_t *c;
  int n_jobs;
  const strata_graph_t *const *g;
  const strata_plan_opts_t *po;
  const strata_fleet_job_t *jobs;
  const strata_fleet_opts_t *fo;
  strata_fleet_result_t *res;
  int groups, max_nodes, objective;
  int cap[STRATA_FLEET_MAX_GROUPS];
  double *tps;   /* [job][group][n]: tokens/s on the curve, -1: none */
  double *value; /* the same as the objective's worth */
  int *required;
  double curves_end, end; /* the time limit's ends (0: none) */
} fleet_t;

static long cell(const fleet_t *F, int j, int g, int n) {
  return ((long)j * F->groups + g) * (F->max_nodes + 1) + n;
}

static int lo_nodes(const strata_fleet_job_t *j) {
  return j->min_nodes > 0 ? j->min_nodes : 1;
}
static int hi_nodes(const strata_fleet_job_t *j, int cap) {
  return j->max_nodes > 0 && j->max_nodes < cap ? j->max_nodes : cap;
}
static int has_deadline(const strata_fleet_job_t *j) {
  return j->tokens > 0 && j->seconds > 0;
}
static double need_of(const strata_fleet_job_t *j) {
  return has_deadline(j) ? j->tokens / j->seconds : 0;
}

static double tokens_per_second(const strata_graph_t *g,
                                const strata_plan_opts_t *po, double step) {
  int gb = po->global_batch ? po->global_batch /* 0: the library's */
                            : strata_default_global_batch(g->seq_len);
  return step > 0 ? (double)gb * g->seq_len / step : 0;
}

/* Plan job j on cluster s with options po: 0 and *p, or 0 and NULL when
 * it does not fit (the reason in why, if not NULL), or an error naming
 * the job and the node count. */
static int plan_on(const fleet_t *F, int j, const strata_cluster_t *s,
                   const strata_plan_opts_t *po, strata_plan_t **p, char *why) {
  strata_plan_opts_t o = *po;
  int rc = strata_pipeline_plan(F->g[j], s, &o, p);
  if (rc == STRATA_EINFEASIBLE || rc == STRATA_ETIMEDOUT) {
    if (why)
      snprintf(why, sizeof F->res[j].why, "on %d nodes: %s",
               strata_cluster_nodes(s), strata_last_error());
    strata_error_clear();
    return 0;
  }
  if (rc)
    strata_error_prefix("job '%s' on %d nodes", F->jobs[j].name,
                        strata_cluster_nodes(s));
  return rc;
}

/* The time left before `end` (0: no limit; below 0: none left). */
static double left_until(double end) {
  return end > 0 ? end - strata_now() : 0;
}

/* One plan of job j's curve on the first n nodes of group g (with at
 * most `share` seconds under a time limit; front: with the best step per
 * count of GPUs kept, STRATA_PARETO_STEP_GPUS): 0 and *out, or 0 and
 * *out NULL when nothing fits (*cut set when a time limit, not the
 * memory, said so). */
static int curve_plan(fleet_t *F, int j, int g, int n, double share, int front,
                      strata_plan_t **out, int *cut) {
  strata_fleet_result_t *r = &F->res[j];
  strata_plan_opts_t po = F->po[j];
  strata_cluster_t *s = NULL;
  po.top = 1; /* the best is all a point needs */
  po.pareto = front ? STRATA_PARETO_STEP_GPUS : 0;
  po.quiet = 1;
  if (F->curves_end > 0 && (!po.time_limit || po.time_limit > share))
    po.time_limit = share > 0.001 ? share : 0.001;
  double t0 = strata_now();
  int rc = strata_cluster_subset(F->c, g, 0, n, NULL, &s);
  *out = NULL;
  *cut = 0;
  if (!rc) rc = plan_on(F, j, s, &po, out, r->points ? NULL : r->why);
  r->planned++;
  /* nothing found by a time limit: not that nothing fits */
  if (!rc && !*out && po.time_limit > 0 &&
      strata_now() - t0 >= 0.8 * po.time_limit) {
    if (!r->points) r->why[0] = '\0';
    r->cut = 1;
    *cut = 1;
  }
  if (*out) r->cut |= (*out)->time_limited;
  strata_cluster_destroy(s);
  return rc;
}

/* The GPUs a configuration uses (the search's count: tp x cp x pp x dp). */
static double config_gpus(const strata_plan_config_t *x) {
  return (double)x->tp * (x->cp > 1 ? x->cp : 1) * x->pp * x->dp;
}

/* One plan of job j's curve on the first n nodes of group g: the nodes
 * its configuration uses (*m, its point holds from m to n nodes), or
 * *m = 0 when nothing fits (-1: cut by the time limit). */
static int curve_point(fleet_t *F, int j, int g, int n, double share, int *m,
                       double *t) {
  strata_plan_t *p = NULL;
  int cut = 0, rc = curve_plan(F, j, g, n, share, 0, &p, &cut);
  *m = cut ? -1 : 0;
  if (!rc && p) {
    int gpn = strata_cluster_gpus_per_node(strata_cluster_group(F->c, g));
    int used = p->devices > 0 ? p->devices : p->tp * p->pp * p->dp;
    *m = gpn > 0 ? (used + gpn - 1) / gpn : n;
    if (*m > n || *m < 1) *m = n;
    *t = tokens_per_second(F->g[j], &F->po[j], p->step_seconds);
  }
  strata_plan_destroy(p);
  return rc;
}

/* Whether one search with the front of step and GPUs gives job j's whole
 * curve exactly as a plan per node count would: the front holds the
 * best configuration of every count of GPUs, so the best on n nodes is
 * the fastest of it on at most n nodes' GPUs -- where the plan takes the
 * search's best as it is (Megatron-LM's splits: its stages' exact solves
 * are not given a memory budget that could refuse it) and no offload is
 * searched (an offloaded configuration is not on the front). */
static int front_exact(const strata_plan_opts_t *po) {
  return po->megatron && !po->search_offload && !po->no_memory_check &&
         !getenv("STRATA_FLEET_PER_COUNT");
}

/* Job j's whole curve on group g from one search on its most nodes
 * (*next): the point on n nodes is the least step of the front's
 * configurations on at most n nodes' GPUs (docs/cost-model.md, section
 * 23, "One search per curve"). */
static int curve_front(fleet_t *F, int j, int g, double share, int *next) {
  const strata_fleet_job_t *job = &F->jobs[j];
  int lo = lo_nodes(job), n = *next, cut = 0;
  int gpn = strata_cluster_gpus_per_node(strata_cluster_group(F->c, g));
  strata_plan_t *p = NULL;
  int rc = curve_plan(F, j, g, n, share, 1, &p, &cut);
  *next = 0;
  for (int k = lo; !rc && p && k <= n; k++) {
    double best = k == n ? p->step_seconds : INFINITY;
    for (int i = 0; i < p->n_pareto; i++)
      if (config_gpus(&p->pareto[i]) <= (double)k * gpn &&
          p->pareto[i].step_seconds < best)
        best = p->pareto[i].step_seconds;
    if (!isfinite(best)) continue;
    F->tps[cell(F, j, g, k)] = tokens_per_second(F->g[j], &F->po[j], best);
    F->res[j].points++;
  }
  strata_plan_destroy(p);
  return rc;
}

/* One step of job j's curve on group g, from its most nodes down: the
 * plan on *next nodes.  A plan on n nodes searches every configuration
 * of at most n nodes' GPUs, so its best, using m nodes, is also the best
 * on m .. n nodes (each of those searches a subset that holds it): one
 * plan gives the whole run m .. n, the next is on m - 1 (*next), and
 * where nothing fits on n nothing fits on fewer (*next = 0).  A job with
 * a deadline stops below the rate it needs (fewer nodes are no faster). */
static int curve_step(fleet_t *F, int j, int g, double share, int *next) {
  const strata_fleet_job_t *job = &F->jobs[j];
  int lo = lo_nodes(job), n = *next, m;
  double t = 0;
  if (front_exact(&F->po[j])) return curve_front(F, j, g, share, next);
  int rc = curve_point(F, j, g, n, share, &m, &t);
  *next = 0;
  if (rc || m <= 0) return rc;
  if (m < lo) m = lo;
  for (int k = m; k <= n; k++)
    F->tps[cell(F, j, g, k)] = t;
  F->res[j].points += n - m + 1;
  if (!(has_deadline(job) && t < need_of(job))) *next = m - 1;
  if (*next < lo) *next = 0;
  return 0;
}

/* The earlier job whose curves job j's are (the same model, plan options
 * and node bounds, each curve from one search: the same searches), or
 * -1. */
static int same_curves(const fleet_t *F, int j) {
  const strata_fleet_job_t *a = &F->jobs[j];
  for (int k = 0; k < j; k++) {
    const strata_fleet_job_t *b = &F->jobs[k];
    int same = a->model && b->model && !strcmp(a->model, b->model) &&
               a->n_opts == b->n_opts && a->min_nodes == b->min_nodes &&
               a->max_nodes == b->max_nodes && front_exact(&F->po[j]) &&
               front_exact(&F->po[k]) &&
               F->po[j].global_batch == F->po[k].global_batch &&
               F->g[j]->seq_len == F->g[k]->seq_len;
    for (int i = 0; same && i < a->n_opts; i++)
      same =
          a->opt_word && b->opt_word && !strcmp(a->opt_word[i], b->opt_word[i]);
    if (same) return k;
  }
  return -1;
}

/* Job j's curves, those of job k. */
static void copy_curves(fleet_t *F, int j, int k) {
  long row = (long)F->groups * (F->max_nodes + 1);
  memcpy(F->tps + j * row, F->tps + k * row, sizeof *F->tps * (size_t)row);
  F->res[j].points = F->res[k].points;
  F->res[j].cut = F->res[k].cut;
  memcpy(F->res[j].why, F->res[k].why, sizeof F->res[j].why);
}

/* Every curve, a step of each in turn: under a time limit each curve has
 * its most nodes' point before any has a second, and each plan at most
 * an equal share of the time left; a curve not finished is cut. */
static int curves(fleet_t *F, int *next, const int *same) {
  int active = 1, left_in_round, rc = 0;
  for (int j = 0; j < F->n_jobs; j++)
    for (int g = 0; g < F->groups; g++) {
      int hi = hi_nodes(&F->jobs[j], F->cap[g]);
      next[j * F->groups + g] =
          hi >= lo_nodes(&F->jobs[j]) && same[j] < 0 ? hi : 0;
    }
  while (active && !rc) {
    active = 0;
    for (int i = 0; i < F->n_jobs * F->groups; i++)
      active += next[i] > 0;
    left_in_round = active;
    for (int i = 0; i < F->n_jobs * F->groups && !rc; i++) {
      double left = left_until(F->curves_end);
      if (!next[i]) continue;
      if (F->po[0].cancel && *F->po[0].cancel)
        return strata_error(STRATA_ECANCELED, "interrupted");
      if (F->curves_end > 0 && left <= 0) {
        F->res[i / F->groups].cut = 1;
        next[i] = 0;
        continue;
      }
      rc = curve_step(F, i / F->groups, i % F->groups, left / left_in_round,
                      &next[i]);
      left_in_round--;
    }
  }
  return rc;
}

/* What cannot be met whatever the split, said before any plan. */
static int check_sum(const fleet_t *F) {
  long need = 0, have = strata_cluster_nodes(F->c);
  for (int j = 0; j < F->n_jobs; j++)
    need += F->jobs[j].min_nodes;
  if (need > have)
    return strata_error(STRATA_EINFEASIBLE,
                        "the jobs' min_nodes add up to %ld nodes and the "
                        "cluster has %ld usable ones: lower a min_nodes or "
                        "leave a job out",
                        need, have);
  return 0;
}

/* A job with a deadline: its best point, said when it falls short. */
static int deadline_unmet(const fleet_t *F, int j) {
  const strata_fleet_job_t *job = &F->jobs[j];
  double best = 0;
  int bg = 0, bn = 0;
  char a[64], b[64], c[64];
  for (int g = 0; g < F->groups; g++)
    for (int n = 1; n <= F->cap[g]; n++)
      if (F->tps[cell(F, j, g, n)] > best)
        best = F->tps[cell(F, j, g, n)], bg = g, bn = n;
  st__fmt_num(need_of(job), 0, a, sizeof a);
  st__fmt_num(job->tokens, 0, b, sizeof b);
  st__fmt_num(best, 0, c, sizeof c);
  if (!bn)
    return strata_error(STRATA_EINFEASIBLE,
                        "job '%s' cannot meet its deadline: it needs %s "
                        "tokens/s (%s tokens by %s) and fits on no node "
                        "count%s",
                        job->name, a, b, job->deadline,
                        F->res[j].cut ? " planned before the time limit" : "");
  return strata_error(STRATA_EINFEASIBLE,
                      "job '%s' cannot meet its deadline: it needs %s "
                      "tokens/s (%s tokens by %s) and makes at most %s on %d "
                      "nodes of group %d%s: move the deadline, train fewer "
                      "tokens or give it a larger cluster",
                      job->name, a, b, job->deadline, c, bn, bg,
                      F->res[j].cut ? " (its curve cut by the time limit)"
                                    : "");
}

/* ... and once the curves are known. */
static int check_points(const fleet_t *F) {
  for (int j = 0; j < F->n_jobs; j++) {
    int hi = 0;
    for (int g = 0; g < F->groups; g++)
      if (hi_nodes(&F->jobs[j], F->cap[g]) > hi)
        hi = hi_nodes(&F->jobs[j], F->cap[g]);
    if (has_deadline(&F->jobs[j])) {
      int met = 0;
      for (int g = 0; g < F->groups; g++)
        for (int n = 1; n <= F->cap[g]; n++)
          met |= F->tps[cell(F, j, g, n)] >= need_of(&F->jobs[j]);
      if (!met) return deadline_unmet(F, j);
    }
    if (F->required[j] && !F->res[j].points)
      return strata_error(STRATA_EINFEASIBLE,
                          "job '%s' fits on no count of nodes from %d to %d "
                          "of one node group; it has min_nodes, so it must "
                          "run%s%s",
                          F->jobs[j].name, lo_nodes(&F->jobs[j]), hi,
                          F->res[j].why[0] ? ": " : "", F->res[j].why);
  }
  return 0;
}

/* The worth of each point under the objective: w x tokens/s, or for the
 * fair objective C + w ln(tokens/s), C one constant for every job that
 * makes every worth positive (the same C for each job that runs: among
 * splits running as many jobs it changes no order).  A job with a
 * deadline: only the fewest nodes of each group that meet it. */
static void worths(fleet_t *F) {
  double lowest = 0;
  long cells = (long)F->n_jobs * F->groups * (F->max_nodes + 1);
  for (long i = 0; i < cells; i++)
    if (F->tps[i] > 0) {
      double w = F->jobs[i / (F->groups * (F->max_nodes + 1))].weight;
      double u = w * log(F->tps[i]);
      if (u < lowest) lowest = u;
    }
  for (int j = 0; j < F->n_jobs; j++)
    for (int g = 0; g < F->groups; g++) {
      int met = 0;
      for (int n = 1; n <= F->cap[g]; n++) {
        double t = F->tps[cell(F, j, g, n)], w = F->jobs[j].weight;
        double v = !(t > 0) ? -1
                   : F->objective == STRATA_FLEET_THROUGHPUT
                       ? w * t
                       : 1 - lowest + w * log(t);
        if (has_deadline(&F->jobs[j]))
          v = !met && t >= need_of(&F->jobs[j]) ? (met = 1, v) : -1;
        F->value[cell(F, j, g, n)] = v;
      }
    }
}

static int build_curves(fleet_t *F) {
  long cells = (long)F->n_jobs * F->groups * (F->max_nodes + 1);
  F->tps = strata_malloc((size_t)cells * sizeof *F->tps);
  F->value = strata_malloc((size_t)cells * sizeof *F->value);
  F->required = strata_calloc((size_t)F->n_jobs, sizeof *F->required);
  if (!F->tps || !F->value || !F->required)
    return strata_error(STRATA_ENOMEM, "out of memory");
  for (long i = 0; i < cells; i++)
    F->tps[i] = -1;
  for (int j = 0; j < F->n_jobs; j++)
    F->required[j] = F->jobs[j].min_nodes > 0 || has_deadline(&F->jobs[j]);
  int *next = strata_calloc((size_t)F->n_jobs * F->groups, sizeof *next);
  int *same = strata_malloc(sizeof *same * (size_t)F->n_jobs);
  int rc = next && same ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
  for (int j = 0; !rc && j < F->n_jobs; j++)
    same[j] = same_curves(F, j);
  if (!rc) rc = curves(F, next, same);
  for (int j = 0; !rc && j < F->n_jobs; j++)
    if (same[j] >= 0) copy_curves(F, j, same[j]);
  strata_free(next);
  strata_free(same);
  if (!rc) worths(F);
  return rc;
}

/* Why job j was left out, said in its result. */
static void left_out(fleet_t *F, int j) {
  strata_fleet_result_t *r = &F->res[j];
  strata_buf_t b;
  int fewest = 0, fg = 0;
  if (!r->points) {
    strata_buf_init(&b);
    strata_buf_puts(&b, r->cut ? "the time limit came before a plan of it"
                               : "it fits on no node count of one group");
    if (r->why[0] && !r->cut) strata_buf_printf(&b, " (%s)", r->why);
    char *text = strata_buf_steal(&b, NULL);
    snprintf(r->why, sizeof r->why, "%s", text ? text : "it fits nowhere");
    strata_free(text);
    return;
  }
  for (int g = 0; g < F->groups; g++)
    for (int n = F->cap[g]; n >= 1; n--)
      if (F->tps[cell(F, j, g, n)] > 0 && (!fewest || n < fewest))
        fewest = n, fg = g;
  snprintf(r->why, sizeof r->why,
           F->objective == STRATA_FLEET_THROUGHPUT
               ? "under the throughput objective its nodes are worth more "
                 "to the other jobs (it fits on %d node%s of group %d and "
                 "up)"
               : "the jobs that run leave it too few nodes: it needs %d "
                 "node%s of group %d, and running it would leave out "
                 "another job",
           fewest, fewest == 1 ? "" : "s", fg);
}

/* The time each of the k plans left may take before the run's end. */
static void final_limit(const fleet_t *F, int k, strata_plan_opts_t *po) {
  double left = left_until(F->end);
  if (F->end <= 0) return;
  left = left / (k > 0 ? k : 1);
  if (!po->time_limit || po->time_limit > left)
    po->time_limit = left > 0.001 ? left : 0.001;
}

/* Job j on its own run of nodes, placed from next[its group]. */
static int place_one(fleet_t *F, int j, const strata_fleet_choice_t *ch,
                     int *next, int k) {
  strata_fleet_result_t *r = &F->res[j];
  strata_cluster_t *s = NULL;
  strata_plan_opts_t po = F->po[j];
  char name[512];
  r->group = ch[j].group;
  r->nodes = ch[j].nodes;
  r->need = need_of(&F->jobs[j]);
  if (!r->nodes) {
    left_out(F, j);
    return 0;
  }
  r->why[0] = '\0';
  r->first = next[r->group];
  next[r->group] += r->nodes;
  r->value = F->tps[cell(F, j, r->group, r->nodes)];
  snprintf(name, sizeof name, "%s on %s", F->jobs[j].name,
           strata_cluster_name(F->c));
  final_limit(F, k, &po);
  int rc = strata_cluster_subset(F->c, r->group, r->first, r->nodes, name, &s);
  if (!rc) rc = plan_on(F, j, s, &po, &r->plan, NULL);
  if (!rc && !r->plan)
    rc = strata_error(STRATA_EINFEASIBLE,
                      "job '%s' fits on %d nodes of group %d from its first "
                      "but not on its own ones (a time limit?)",
                      F->jobs[j].name, r->nodes, r->group);
  if (!rc) {
    r->step_seconds = r->plan->step_seconds;
    r->tokens_per_second = tokens_per_second(F->g[j], &po, r->step_seconds);
  }
  r->cluster = s;
  return rc;
}

/* Consecutive runs of usable nodes, jobs in order, and each job's plan
 * on its own run. */
static int place_and_plan(fleet_t *F, const strata_fleet_choice_t *ch) {
  int next[STRATA_FLEET_MAX_GROUPS] = {0}, rc = 0, k = 0;
  for (int j = 0; j < F->n_jobs; j++)
    k += ch[j].nodes > 0;
  for (int j = 0; j < F->n_jobs && !rc; j++) {
    rc = place_one(F, j, ch, next, k);
    k -= ch[j].nodes > 0;
  }
  return rc;
}

void strata_fleet_results_free(strata_fleet_result_t *res, int n) {
  for (int j = 0; res && j < n; j++) {
    strata_plan_destroy(res[j].plan);
    strata_cluster_destroy(res[j].cluster);
    res[j].plan = NULL;
    res[j].cluster = NULL;
  }
}

void strata_fleet_opts_init(strata_fleet_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->objective = STRATA_FLEET_FAIR;
}

/* The groups, their capacities, the objective and the time limit's ends
 * (docs/cli.md, --time-limit). */
static int setup(fleet_t *F) {
  const strata_fleet_opts_t *fo = F->fo;
  double start = fo->start > 0 ? fo->start : strata_now();
  F->objective = fo->objective ? fo->objective : STRATA_FLEET_FAIR;
  F->groups = strata_cluster_group_count(F->c);
  if (F->groups > STRATA_FLEET_MAX_GROUPS)
    return strata_error(STRATA_EUNSUPPORTED, "fleet: more than %d node groups",
                        STRATA_FLEET_MAX_GROUPS);
  for (int k = 0; k < F->groups; k++) {
    F->cap[k] = strata_cluster_nodes(strata_cluster_group(F->c, k));
    if (F->cap[k] > F->max_nodes) F->max_nodes = F->cap[k];
  }
  if (fo->time_limit > 0) { /* a tenth kept for what is not a search */
    F->end = start + 0.9 * fo->time_limit;
    F->curves_end = start + 0.6 * fo->time_limit;
  }
  return check_sum(F);
}

/* The optimum as the objective counts it (without the fair form's C). */
static double objective_total(const fleet_t *F,
                              const strata_fleet_choice_t *ch) {
  double sum = 0;
  for (int j = 0; j < F->n_jobs; j++) {
    if (!ch[j].nodes) continue;
    double t = F->tps[cell(F, j, ch[j].group, ch[j].nodes)];
    double w = F->jobs[j].weight;
    sum += F->objective == STRATA_FLEET_THROUGHPUT ? w * t : w * log(t);
  }
  return sum;
}

int strata_fleet_plan(const strata_cluster_t *c, int n_jobs,
                      const strata_graph_t *const *g,
                      const strata_plan_opts_t *po,
                      const strata_fleet_job_t *jobs,
                      const strata_fleet_opts_t *fo, strata_fleet_result_t *res,
                      double *total) {
  strata_fleet_opts_t dflt;
  if (!fo) strata_fleet_opts_init(&dflt), fo = &dflt;
  fleet_t F = {.c = c,
               .n_jobs = n_jobs,
               .g = g,
               .po = po,
               .jobs = jobs,
               .fo = fo,
               .res = res};
  strata_fleet_choice_t *ch = strata_calloc((size_t)n_jobs, sizeof *ch);
  int rc = ch ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
  memset(res, 0, (size_t)n_jobs * sizeof *res);
  if (!rc) rc = setup(&F);
  if (!rc) rc = build_curves(&F);
  if (!rc) rc = check_points(&F);
  strata_fleet_problem_t P = {n_jobs,
                              F.groups,
                              F.cap,
                              F.max_nodes,
                              F.value,
                              F.required,
                              F.objective == STRATA_FLEET_FAIR};
  if (!rc) rc = strata_fleet_allocate(&P, ch, NULL);
  int runs = 0;
  for (int j = 0; !rc && j < n_jobs; j++)
    runs += ch[j].nodes > 0;
  int cut = 0;
  for (int j = 0; j < n_jobs; j++)
    cut |= F.res[j].cut;
  if (!rc && !runs && cut) /* out of time, not proven not to fit */
    rc = strata_error(STRATA_ETIMEDOUT,
                      "no job has a plan within the time limit (%g s): a "
                      "longer --time-limit plans further",
                      F.fo->time_limit);
  else if (!rc && !runs)
    rc = strata_error(STRATA_EINFEASIBLE,
                      "no job fits on any node count this cluster offers");
  if (!rc && total) *total = objective_total(&F, ch);
  if (!rc) rc = place_and_plan(&F, ch);
  strata_free(ch);
  strata_free(F.tps);
  strata_free(F.value);
  strata_free(F.required);
  if (rc) strata_fleet_results_free(res, n_jobs);
  return rc;
}
