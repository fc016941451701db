/*
 * fallbacks.c - `strata plan --fallbacks K` and `--fallback N` of show
 * and export: a plan that carries the plans of its cluster with 1 .. K
 * nodes of each node group lost, so that a restart after a failure runs
 * one of them without planning.  Each fallback is planned as the plan
 * itself is (the same options and calibration) on the cluster that
 * strata_cluster_load_lost gives: within a node group the nodes are
 * alike, so losing any n of them leaves the same cluster up to where the
 * leaf switches fall, and the last usable ones are taken.
 */
#include <string.h>

#include "cli/planargs.h"
#include "core/stream.h"

/* The cluster of n nodes lost, calibrated as the plan's is. */
static int lost_cluster(const cli_plan_args_t *a, int n, strata_cluster_t **c) {
  strata_calibration_t cal;
  int e = strata_cluster_load_lost(a->cluster, n, c);
  if (!e && a->calibration &&
      ((e = strata_calibration_load(a->calibration, &cal)) ||
       (e = strata_cluster_calibrate(*c, &cal)))) {
    strata_cluster_destroy(*c);
    *c = NULL;
  }
  return e;
}

/* The plan of n nodes lost into *out; STRATA_EINFEASIBLE when nothing
 * fits there (or no node is left). */
static int plan_lost(const cli_plan_args_t *a, const strata_graph_t *g, int n,
                     strata_plan_t **out) {
  strata_cluster_t *c = NULL;
  strata_plan_opts_t o = a->po;
  o.pareto = 0; /* the front is the plan's; a fallback is a plan to run */
  o.quiet = 1;
  int e = lost_cluster(a, n, &c);
  if (!e) e = strata_pipeline_plan(g, c, &o, out);
  if (!e) e = strata_merge_stitch(*out, g, c);
  if (!e) (*out)->nodes_lost = n;
  if (e) {
    strata_plan_destroy(*out);
    *out = NULL;
  }
  strata_cluster_destroy(c);
  return e;
}

int cli_plan_fallbacks(const char *cmd, const cli_plan_args_t *a,
                       const strata_graph_t *g, strata_plan_t *p) {
  int k = a->fallbacks, e = 0;
  if (k < 1) return 0;
  p->fallbacks_asked = k;
  p->fallbacks = strata_calloc((size_t)k, sizeof *p->fallbacks);
  if (!p->fallbacks)
    return cli_fail(cmd, strata_error(STRATA_ENOMEM, "out of memory"));
  for (int n = 1; n <= k && !e; n++) {
    e = plan_lost(a, g, n, &p->fallbacks[n - 1]);
    if (e == STRATA_EINFEASIBLE ||
        e == STRATA_ETIMEDOUT) { /* the fallbacks stop at the first */
      fprintf(st__stderr(),
              "strata %s: warning: no fallback for %d node%s lost, and none "
              "beyond (%d stored): %s\n",
              cmd, n, n == 1 ? "" : "s", n - 1, strata_last_error());
      strata_error_clear();
      return 0;
    }
    if (e) return cli_fail(cmd, e);
    p->n_fallbacks = n;
    if (!a->po.quiet)
      fprintf(st__stderr(),
              "strata %s: fallback for %d node%s lost: %d %ss, step %.3f "
              "ms\n",
              cmd, n, n == 1 ? "" : "s", p->fallbacks[n - 1]->devices,
              p->fallbacks[n - 1]->npu ? "NPU" : "GPU",
              p->fallbacks[n - 1]->step_seconds * 1e3);
  }
  return 0;
}

int cli_select_fallback(const char *path, int n, strata_plan_t **p) {
  strata_plan_t *q = *p;
  if (n == 0) return 0;
  if (n > q->n_fallbacks) {
    if (q->n_fallbacks == 0)
      return strata_error(STRATA_EINVAL,
                          "--fallback %d: %s holds no fallback plans (strata "
                          "plan --fallbacks K stores those of 1 .. K nodes "
                          "lost)",
                          n, path);
    return strata_error(STRATA_EINVAL,
                        "--fallback %d: %s holds fallback plans for 1 to %d "
                        "node%s lost%s",
                        n, path, q->n_fallbacks, q->n_fallbacks == 1 ? "" : "s",
                        q->fallbacks_asked > q->n_fallbacks
                            ? " (none beyond: nothing fits, or no node is left)"
                            : "");
  }
  *p = q->fallbacks[n - 1];
  q->fallbacks[n - 1] = NULL; /* the rest go with q */
  strata_plan_destroy(q);
  return 0;
}
