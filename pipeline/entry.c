/*
 * entry.c - strata_pipeline_plan, the planner's one entry point: a
 * cluster of one shape is searched by plan.c, a cluster of node groups by
 * hetero.c (which searches each group and their splits with plan.c's
 * search); a configuration with every degree fixed is first asked of the
 * rulebook (rules.c), as strata estimate asks it; the options' defaults
 * are resolved (defaults.c) and the run's statistics filled here.  It
 * sits above both so that each calls only downward.
 */
#include "pipeline/search.h"

/* One cluster shape: plan.c's search and its statistics. */
static int plan_one(const strata_graph_t *g, const strata_cluster_t *c,
                    const strata_plan_opts_t *o, double t0,
                    strata_plan_t **out) {
  st__search_t S;
  int rc = st__search_prepare(&S, g, c, o);
  double deadline = S.deadline;
  if (!rc) rc = st__choose(&S, out);
  if (!rc && (rc = st__plan_cost(*out, g, c, o))) {
    strata_plan_destroy(*out);
    *out = NULL;
  }
  if (!rc) {
    (*out)->subproblems_distinct = S.subs.n;
    (*out)->subproblems_total = S.subs.requests;
    (*out)->ilps_solved = S.ilps;
    (*out)->cache_hits = S.hits;
    (*out)->configs_bounded = (int)S.bounded;
    (*out)->configs_evaluated = (int)S.evaluated;
    (*out)->time_limited =
        S.deadline < 0 || (deadline > 0 && strata_now() > deadline);
    (*out)->plan_seconds = strata_now() - t0;
    if ((*out)->time_limited) {
      st__progress_gap(S.prog, (*out)->step_seconds, S.bound_left);
      (*out)->bound_seconds =
          st__bound_kept((*out)->step_seconds, S.bound_left);
    }
  }
  st__search_release(&S);
  return rc;
}

/* Free mode: its space holds every Megatron-mode configuration, but its
 * per-operator search does not reach them all, so the Megatron-mode
 * plan of the same options is found first, under the same time limit,
 * and kept where its step is shorter: a free-mode plan is never slower
 * per step than the Megatron-mode one.  A Megatron-mode search that
 * finds nothing (an option it refuses, nothing fits its layouts) leaves
 * free mode's alone, and free mode's error stands when it finds none. */
static int plan_free(const strata_graph_t *g, const strata_cluster_t *c,
                     const strata_plan_opts_t *o, double t0,
                     strata_plan_t **out) {
  strata_plan_opts_t m = *o;
  strata_plan_t *meg = NULL;
  if (m.time_limit > 0 && !(m.time_start > 0)) m.time_start = t0;
  m.megatron = 1;
  /* the disk cache is free mode's search's alone: it is written when
   * that search ends, so a run interrupted after the Megatron-mode
   * search writes none */
  m.cache_dir = NULL;
  int rc = plan_one(g, c, &m, t0, &meg);
  if (rc == STRATA_ECANCELED || rc == STRATA_ENOMEM) return rc;
  m.megatron = 0;
  m.cache_dir = o->cache_dir;
  rc = plan_one(g, c, &m, t0, out);
  /* free mode's own errors stand (its options, an interruption) but for
   * finding nothing, where the Megatron-mode plan answers */
  int none = rc == STRATA_EINFEASIBLE || rc == STRATA_ETIMEDOUT;
  if (meg && (none || (!rc && meg->step_seconds < (*out)->step_seconds))) {
    meg->plan_seconds = strata_now() - t0;
    /* free mode's search cut short leaves the answer so too */
    if (rc == STRATA_ETIMEDOUT || (!rc && (*out)->time_limited))
      meg->time_limited = 1;
    strata_plan_destroy(*out);
    *out = meg, meg = NULL, rc = 0;
  }
  strata_plan_destroy(meg);
  return rc;
}

int strata_pipeline_plan(const strata_graph_t *g, const strata_cluster_t *c,
                         const strata_plan_opts_t *given, strata_plan_t **out) {
  double t0 = strata_now();
  strata_plan_opts_t resolved = *given;
  const strata_plan_opts_t *o = &resolved;
  *out = NULL;
  strata_plan_opts_resolve(&resolved, g); /* the library's defaults */
  int orc = st__objective_ready(c, o);
  if (orc) return orc;
  if (o->tp && o->pp) { /* a fixed configuration: the rulebook's */
    strata_plan_opts_t f = *o;
    int rc = strata_pipeline_fix(g, c, &f);
    if (rc) return rc;
  }
  if (strata_cluster_group_count(c) > 1 && o->pareto)
    return strata_error(STRATA_EINVAL,
                        "--pareto: cluster '%s' has %d node groups, and the "
                        "front is found on a cluster of one shape only; plan "
                        "a group alone (its nodes as a spec of their own)",
                        strata_cluster_name(c), strata_cluster_group_count(c));
  if (strata_cluster_group_count(c) > 1) {
    /* the node groups' split is searched from each group's memory caps,
     * which offloads the search has not costed would change */
    if (o->search_offload)
      return strata_error(STRATA_EINVAL,
                          "--search-offload: a cluster of node groups is "
                          "searched without offloads; state them "
                          "(--optimizer-offload-fraction, "
                          "--cpu-offloading-num-layers, --offload-modules) "
                          "or plan one group's nodes");
    return st__plan_mixed(g, c, o, out);
  }
  if (!o->megatron) return plan_free(g, c, o, t0, out);
  return plan_one(g, c, o, t0, out);
}
