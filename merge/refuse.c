/*
 * refuse.c - an exporter's refusal of a plan its framework does not run,
 * asked of the rulebook (pipeline/rules.c) with the rules of saved plans.
 * Every exporter calls down into here, and frameworks.c calls the
 * exporters: this file calls neither, so no file calls back up.
 */
#include "merge/merge_int.h"

int st__rules_refuse(const strata_plan_t *p, unsigned target, const char *who) {
  strata_rules_config_t c;
  strata_rules_verdict_t v;
  /* degrees a damaged file lacks: the exporter's own checks name them */
  if (p->tp < 1 || p->pp < 1 || p->dp < 1) return 0;
  strata_rules_config_of_plan(&c, p, target);
  if (!strata_rules_check(&c, STRATA_RULES_PLAN, &v)) return 0;
  return strata_error(STRATA_EUNSUPPORTED, "%s export: %s", who, v.why);
}
