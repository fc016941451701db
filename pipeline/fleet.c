/*
 * fleet.c - several jobs share one cluster (strata fleet): each job's
 * throughput on n whole nodes of a node group, planned by the planner
 * itself, and the split of the nodes that maximises the weighted sum of
 * the jobs' throughputs, exactly.
 *
 * The split is a multiple-choice knapsack (docs/cost-model.md, "Sharing
 * a cluster among jobs"): job j picks at most one item (g, n) -- n nodes
 * of group g, worth w_j x its tokens/s there -- or none, the items picked
 * may use at most each group's usable nodes, and the sum of their worths
 * is maximised.  A dynamic program over the jobs in order and the nodes
 * used of each group, f_j(u) = the best worth of jobs 0 .. j-1 using
 * exactly u (a vector, one count per group), solves it: f_{j+1}(u) = max
 * (f_j(u) if j may stay out, max over items (g, n) of f_j(u - n e_g) +
 * v_j(g, n)).  Every split is a path through it, so its best is the
 * optimum; the first best found is kept (jobs out, then fewer nodes, then
 * lower groups), so the answer does not depend on the platform.
 *
 * Each curve point is one strata_pipeline_plan on a cluster of the
 * group's first n usable nodes (strata_cluster_subset), built once for
 * every job that may get n nodes of that group; each plan solves its
 * stage ILPs on libuv's pool.  Once split, each job runs on its own run
 * of consecutive usable nodes of its group, jobs in JOBS.json order, and
 * is planned again on exactly those nodes: its plan names its own hosts,
 * and its figures are those of the leaves its nodes sit under.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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

/* One job's step of the program: from f (jobs before j) into t. */
static void step(const strata_fleet_problem_t *p, const space_t *sp, int j,
                 const double *f, double *t, int *choice) {
  for (long s = 0; s < sp->states; s++) {
    t[s] = -DBL_MAX;
    choice[s] = -1;
  }
  for (long s = 0; s < sp->states; s++) {
    if (f[s] == -DBL_MAX) continue;
    if (!p->required[j] && f[s] > t[s]) {
      t[s] = f[s];
      choice[s] = -1;
    }
    for (int g = 0; g < p->n_groups; g++) {
      int used = (int)(s / sp->stride[g] % (p->capacity[g] + 1));
      for (int n = 1; n <= p->capacity[g] - used; n++) {
        double v = worth(p, sp, j, g, n);
        long to = s + n * sp->stride[g];
        if (v < 0 || !(f[s] + v > t[to])) continue;
        t[to] = f[s] + v;
        choice[to] = g * sp->cols + n;
      }
    }
  }
}

static void trace_back(const strata_fleet_problem_t *p, const space_t *sp,
                       const int *choice, long s, strata_fleet_choice_t *out) {
  for (int j = p->n_jobs - 1; j >= 0; j--) {
    int c = choice[(long)j * sp->states + s];
    out[j].group = c < 0 ? 0 : c / sp->cols;
    out[j].nodes = c < 0 ? 0 : c % sp->cols;
    s -= (long)out[j].nodes * sp->stride[out[j].group];
  }
}

int strata_fleet_allocate(const strata_fleet_problem_t *p,
                          strata_fleet_choice_t *out, double *total) {
  space_t sp;
  int rc = make_space(p, &sp);
  if (rc) return rc;
  double *f = strata_malloc((size_t)sp.states * sizeof *f);
  double *t = strata_malloc((size_t)sp.states * sizeof *t);
  int *choice =
      strata_malloc((size_t)sp.states * (size_t)p->n_jobs * sizeof *choice);
  if (!f || !t || !choice) {
    rc = strata_error(STRATA_ENOMEM, "out of memory");
    goto out;
  }
  for (long s = 0; s < sp.states; s++)
    f[s] = s ? -DBL_MAX : 0;
  for (int j = 0; j < p->n_jobs; j++) {
    step(p, &sp, j, f, t, choice + (long)j * sp.states);
    double *x = f;
    f = t;
    t = x;
  }
  long best = 0;
  for (long s = 1; s < sp.states; s++)
    if (f[s] > f[best]) best = s;
  if (f[best] == -DBL_MAX) {
    rc = strata_error(STRATA_EINFEASIBLE,
                      "no split of the nodes gives every job that must run "
                      "a node count it fits on");
    goto out;
  }
  trace_back(p, &sp, choice, best, out);
  if (total) *total = f[best];
out:
  strata_free(f);
  strata_free(t);
  strata_free(choice);
  return rc;
}

/* ---- the curves and the plans ----------------------------------------- */

typedef struct {
  const strata_cluster_t *c;
  int n_jobs;
  const strata_graph_t *const *g;
  const strata_plan_opts_t *po;
  const strata_fleet_job_t *jobs;
  strata_fleet_result_t *res;
  int groups, max_nodes;
  int cap[STRATA_FLEET_MAX_GROUPS];
  double *value;
  int *required;
} fleet_t;

static int lo_nodes(const strata_fleet_job_t *j) {
  return j->min_nodes > 0 ? j->min_nodes : 1;
}
static int hi_nodes(const strata_fleet_job_t *j, int cap) {
  return j->max_nodes > 0 && j->max_nodes < cap ? j->max_nodes : cap;
}

static double tokens_per_second(const strata_graph_t *g,
                                const strata_plan_opts_t *po, double step) {
  return step > 0 ? (double)po->global_batch * g->seq_len / step : 0;
}

/* Plan job j on cluster s: 0 and *p, or 0 and NULL when it does not fit,
 * or an error naming the job and the node count. */
static int plan_on(const fleet_t *F, int j, const strata_cluster_t *s,
                   strata_plan_t **p) {
  strata_plan_opts_t po = F->po[j];
  int rc = strata_pipeline_plan(F->g[j], s, &po, p);
  if (rc == STRATA_EINFEASIBLE || rc == STRATA_ETIMEDOUT) {
    strata_error_clear();
    return 0;
  }
  if (rc)
    strata_error_prefix("job '%s' on %d nodes", F->jobs[j].name,
                        strata_cluster_nodes(s));
  return rc;
}

/* Every job's point on n nodes of group g (one cluster for all). */
static int curve_points(fleet_t *F, int g, int n) {
  strata_cluster_t *s = NULL;
  int rc = 0, any = 0;
  for (int j = 0; j < F->n_jobs; j++)
    any |= n >= lo_nodes(&F->jobs[j]) && n <= hi_nodes(&F->jobs[j], F->cap[g]);
  if (!any) return 0;
  if ((rc = strata_cluster_subset(F->c, g, 0, n, NULL, &s))) return rc;
  for (int j = 0; j < F->n_jobs && !rc; j++) {
    const strata_fleet_job_t *job = &F->jobs[j];
    strata_plan_t *p = NULL;
    if (n < lo_nodes(job) || n > hi_nodes(job, F->cap[g])) continue;
    if (F->po[j].cancel && *F->po[j].cancel) {
      rc = strata_error(STRATA_ECANCELED, "interrupted");
      break;
    }
    rc = plan_on(F, j, s, &p);
    F->res[j].planned++;
    if (!rc && p) {
      double tps = tokens_per_second(F->g[j], &F->po[j], p->step_seconds);
      F->value[((long)j * F->groups + g) * (F->max_nodes + 1) + n] =
          job->weight * tps;
      F->res[j].points++;
    }
    strata_plan_destroy(p);
  }
  strata_cluster_destroy(s);
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

/* ... and once the curves are known. */
static int check_points(const fleet_t *F) {
  for (int j = 0; j < F->n_jobs; j++) {
    int hi = 0;
    for (int g = 0; g < F->groups; g++)
      if (hi_nodes(&F->jobs[j], F->cap[g]) > hi)
        hi = hi_nodes(&F->jobs[j], F->cap[g]);
    if (F->required[j] && !F->res[j].points)
      return strata_error(STRATA_EINFEASIBLE,
                          "job '%s' fits on no count of nodes from %d to %d "
                          "of one node group; it has min_nodes, so it must "
                          "run",
                          F->jobs[j].name, lo_nodes(&F->jobs[j]), hi);
  }
  return 0;
}

static int build_curves(fleet_t *F) {
  long cells = (long)F->n_jobs * F->groups * (F->max_nodes + 1);
  F->value = strata_malloc((size_t)cells * sizeof *F->value);
  F->required = strata_calloc((size_t)F->n_jobs, sizeof *F->required);
  if (!F->value || !F->required)
    return strata_error(STRATA_ENOMEM, "out of memory");
  for (long i = 0; i < cells; i++)
    F->value[i] = -1;
  for (int j = 0; j < F->n_jobs; j++)
    F->required[j] = F->jobs[j].min_nodes > 0;
  int rc = 0;
  for (int g = 0; g < F->groups && !rc; g++)
    for (int n = 1; n <= F->cap[g] && !rc; n++)
      rc = curve_points(F, g, n);
  return rc;
}

/* Consecutive runs of usable nodes, jobs in order, and each job's plan
 * on its own run. */
static int place_and_plan(fleet_t *F, const strata_fleet_choice_t *ch) {
  int next[STRATA_FLEET_MAX_GROUPS] = {0}, rc = 0;
  char name[512];
  for (int j = 0; j < F->n_jobs && !rc; j++) {
    strata_fleet_result_t *r = &F->res[j];
    strata_cluster_t *s = NULL;
    r->group = ch[j].group;
    r->nodes = ch[j].nodes;
    if (!r->nodes) continue;
    r->first = next[r->group];
    next[r->group] += r->nodes;
    r->value = F->value[((long)j * F->groups + r->group) * (F->max_nodes + 1) +
                        r->nodes];
    snprintf(name, sizeof name, "%s on %s", F->jobs[j].name,
             strata_cluster_name(F->c));
    rc = strata_cluster_subset(F->c, r->group, r->first, r->nodes, name, &s);
    if (!rc) rc = plan_on(F, j, s, &r->plan);
    if (!rc && !r->plan)
      rc = strata_error(STRATA_EINFEASIBLE,
                        "job '%s' fits on %d nodes of group %d from its first "
                        "but not on its own ones (a time limit?)",
                        F->jobs[j].name, r->nodes, r->group);
    if (!rc) {
      r->step_seconds = r->plan->step_seconds;
      r->tokens_per_second =
          tokens_per_second(F->g[j], &F->po[j], r->step_seconds);
    }
    r->cluster = s;
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

int strata_fleet_plan(const strata_cluster_t *c, int n_jobs,
                      const strata_graph_t *const *g,
                      const strata_plan_opts_t *po,
                      const strata_fleet_job_t *jobs,
                      strata_fleet_result_t *res, double *total) {
  fleet_t F = {c, n_jobs, g, po, jobs, res, 0, 0, {0}, NULL, NULL};
  strata_fleet_choice_t *ch = strata_calloc((size_t)n_jobs, sizeof *ch);
  int rc = ch ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
  memset(res, 0, (size_t)n_jobs * sizeof *res);
  F.groups = strata_cluster_group_count(c);
  if (!rc && F.groups > STRATA_FLEET_MAX_GROUPS)
    rc = strata_error(STRATA_EUNSUPPORTED, "fleet: more than %d node groups",
                      STRATA_FLEET_MAX_GROUPS);
  for (int k = 0; !rc && k < F.groups; k++) {
    F.cap[k] = strata_cluster_nodes(strata_cluster_group(c, k));
    if (F.cap[k] > F.max_nodes) F.max_nodes = F.cap[k];
  }
  if (!rc) rc = check_sum(&F);
  if (!rc) rc = build_curves(&F);
  if (!rc) rc = check_points(&F);
  strata_fleet_problem_t P = {n_jobs,      F.groups, F.cap,
                              F.max_nodes, F.value,  F.required};
  if (!rc) rc = strata_fleet_allocate(&P, ch, total);
  int runs = 0;
  for (int j = 0; !rc && j < n_jobs; j++)
    runs += ch[j].nodes > 0;
  if (!rc && !runs)
    rc = strata_error(STRATA_EINFEASIBLE,
                      "no job fits on any node count this cluster offers");
  if (!rc) rc = place_and_plan(&F, ch);
  strata_free(ch);
  strata_free(F.value);
  strata_free(F.required);
  if (rc) strata_fleet_results_free(res, n_jobs);
  return rc;
}
