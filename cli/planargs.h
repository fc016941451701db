/*
 * planargs.h - the options `strata plan` and `strata estimate` share: the
 * model (a preset, family, trace file, with the model options of `trace
 * gen`), the cluster and its calibration, the batch, the memory and every
 * configuration choice (degrees, interleaving, recompute, ZeRO, overlaps,
 * framework).  One table; the defaults are the library's
 * (pipeline/defaults.c): what the user leaves out stays as
 * strata_plan_opts_init has it.  estimate is plan with the configuration
 * fixed (strata_plan_opts_fixed).
 */
#ifndef STRATA_CLI_PLANARGS_H
#define STRATA_CLI_PLANARGS_H

#include "cli/cli.h"

typedef struct {
  const char *model, *cluster, *output, *calibration;
  int json, timings, no_compare;
  strata_plan_opts_t po;
  const char *baseline;    /* plan: --baseline OLD.splan */
  double replan_threshold; /* percent (default 2) */
  int threshold_given;
  int fallbacks;     /* plan: --fallbacks K, the plans of 1..K nodes lost */
  int pareto_filter; /* plan: --pareto-filter, CLI_PARETO_* bits */
} cli_plan_args_t;

/* plan --pareto-filter: the front's points left out (docs/cli.md). */
enum {
  CLI_PARETO_IDLE = 1, /* fewer GPUs than the cluster's usable ones */
  CLI_PARETO_DEEP = 2  /* pp beyond half the layers */
};

/* Parse argv (estimate = 1 for `strata estimate`'s help and required
 * options).  Returns 0, -1 after --help, or an exit code. */
int cli_plan_parse(const char *cmd, int argc, char **argv, int estimate,
                   cli_plan_args_t *a);
/* A key of a runs file (strata calibrate, docs/calibration.md) taken as
 * strata estimate's option of that name ('_' for '-'), with its checks
 * and messages: a strata_run_key_fn (ud unused).  Options that say how
 * strata runs rather than what ran (--json, --calibration, --threads
 * ...) are refused. */
int cli_plan_run_key(const char *key, const char *value, strata_plan_opts_t *po,
                     void *ud);
/* Whether NAME (without "--"; "no-NAME" for a toggle's off) is an option
 * strata plan takes, by its own table; if not, *near (when not NULL) the
 * one it was meant to be, or NULL.  strata fleet reads a job's plan
 * options by it before cli_plan_parse. */
int cli_plan_option_known(const char *name, const char **near);
/* Load the model and the cluster (calibrated when asked). */
int cli_plan_load(const char *cmd, cli_plan_args_t *a, strata_graph_t **g,
                  strata_cluster_t **c);

/* plan --fallbacks: the plans of the cluster with 1 .. a->fallbacks nodes
 * of each node group lost, into p->fallbacks (fewer where one has nothing
 * that fits: a warning names it).  0, or the error's exit code. */
int cli_plan_fallbacks(const char *cmd, const cli_plan_args_t *a,
                       const strata_graph_t *g, strata_plan_t *p);

/* plan --pareto-filter: the points of p's front it names left out, the
 * plan's own (the first) kept whatever it is; says how many on stderr
 * unless quiet. */
void cli_pareto_filter(const char *cmd, const cli_plan_args_t *a,
                       const strata_cluster_t *c, strata_plan_t *p);

#endif
