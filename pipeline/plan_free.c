/*
 * plan_free.c - strata_plan_destroy.  pipeline/ creates plans and merge/
 * decodes them from plan files; both free them here, in the lower of the
 * two modules.
 */
#include "strata/pipeline.h"

void strata_plan_destroy(strata_plan_t *p) {
  if (!p) return;
  strata_free(p->model);
  strata_free(p->cluster);
  for (int i = 0; p->stages && i < p->n_stages; i++)
    strata_stage_result_destroy(p->stages[i].result);
  strata_free(p->stages);
  strata_free(p->ranks);
  strata_free(p->top);
  strata_free(p->pareto);
  for (int i = 0; p->fallbacks && i < p->n_fallbacks; i++)
    strata_plan_destroy(p->fallbacks[i]);
  strata_free(p->fallbacks);
  strata_free(p->p2p_seconds);
  strata_free(p);
}
