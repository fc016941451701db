/*
 * plan_free.c - strata_plan_destroy.  merge/ creates plans too (the plan
 * file decoder), so the destructor lives here, next to the one module
 * that sees every part of a plan; pipeline/ uses it as well.
 */
#include "strata/merge.h"

void strata_plan_destroy(strata_plan_t *p) {
  if (!p) return;
  strata_free(p->model);
  strata_free(p->cluster);
  for (int i = 0; p->stages && i < p->n_stages; i++)
    strata_stage_result_destroy(p->stages[i].result);
  strata_free(p->stages);
  strata_free(p->p2p_seconds);
  strata_free(p);
}
