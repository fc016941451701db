/*
 * baseline.h - `strata plan --baseline OLD.splan [--replan-threshold PCT]`
 * (cli/baseline.c): keep yesterday's configuration while it pays.
 */
#ifndef STRATA_CLI_BASELINE_H
#define STRATA_CLI_BASELINE_H

#include "cli/planargs.h"

/* The verdict, with the numbers it rests on. */
typedef struct {
  const char *file;
  int kept;   /* 1: the plan is OLD's configuration, costed today */
  int costed; /* OLD's configuration could be costed on the cluster */
  int fits;
  double base_step, best_step; /* seconds, both on today's cluster */
  double slower;               /* base_step / best_step - 1 */
  double threshold;            /* fraction (0.02 for 2 %) */
  double base_peak, budget;    /* bytes per device */
  char base_cfg[160], best_cfg[160];
  char reason[1024];
} cli_baseline_t;

/* Cost OLD's configuration on cluster c and keep it instead of *plan (the
 * best plan, replaced and destroyed) when it fits and its step is within
 * the threshold.  Errors: OLD unreadable or of another run. */
int cli_baseline_apply(const cli_plan_args_t *a, const strata_graph_t *g,
                       const strata_cluster_t *c, strata_plan_t **plan,
                       cli_baseline_t *v);
/* The verdict appended to a summary, or added to a plan's JSON text as
 * "baseline" (*text replaced). */
int cli_baseline_text(const cli_baseline_t *v, strata_buf_t *b);
int cli_baseline_json(const cli_baseline_t *v, char **text);

#endif
