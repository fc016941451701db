/*
 * refuse.c - an exporter's refusal of a plan its framework does not run,
 * asked of the rulebook (rules/rules.c) with the rules of saved plans.
 * Every exporter calls down into here, and frameworks.c calls the
 * exporters: this file calls neither, so no file calls back up.  The
 * family's words of every refusal that names it are here too.
 */
#include <stdio.h>

#include "core/text.h"
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

const char *st__family_said(const strata_plan_t *p, char *buf, size_t n) {
  char shown[64];
  if (p->family[0])
    snprintf(buf, n, "the model's family '%s'",
             st__plain(p->family, shown, sizeof shown));
  else
    snprintf(buf, n,
             "a model of no family (a trace file that names none: "
             "plan from a preset, a family or a Hugging Face "
             "config.json)");
  return buf;
}
