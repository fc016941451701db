/*
 * solve.h - stage solves the planner runs together (internal).
 */
#ifndef STRATA_INTRAOP_SOLVE_H
#define STRATA_INTRAOP_SOLVE_H

#include "strata/intraop.h"

/* The stage of o[0] solved at each o[i]'s micro-batches in flight and time
 * limit (every other field is o[0]'s): its operators, strategies and costs
 * built once (none of them depends on the count: it multiplies the
 * activations' memory alone), then an ILP each.  For each i, rc[i] is
 * strata_stage_solve's code, out[i] its result and why[i] the error's text
 * (strata_strdup, NULL without an error). */
void st__stage_solve_flights(const strata_graph_t *g,
                             const strata_stage_opts_t *const *o, int n,
                             strata_stage_result_t **out, int *rc, char **why);

#endif
