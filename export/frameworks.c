/*
 * frameworks.c - which frameworks can run a plan, and why not: each
 * exporter's own refusal, so what `strata show` and `strata diff` say is
 * exactly what `strata export` would do.  The exporters' refusals of
 * framework rules come from the rulebook (rules/rules.c, through
 * refuse.c's st__rules_refuse); what is left in them is their formats'
 * own.
 */
#include <stdio.h>
#include <string.h>

#include "merge/merge_int.h"

static int mg(const strata_plan_t *p) {
  int first, last;
  return st__mg_check(p, &first, &last);
}
static int titan(const strata_plan_t *p) {
  const char *flavor, *model;
  return st__titan_py_check(p, &model, &flavor); /* torchtitan's head */
}

/* The reason without the exporter's "xyz export: " prefix. */
static void reason(char *why, size_t n) {
  const char *m = strata_last_error(), *c = strstr(m, "export: ");
  if (!c) c = strstr(m, "launch: ");
  snprintf(why, n, "%s", c ? c + 8 : m);
}

void st__frameworks(const strata_plan_t *p, st__fw_verdict_t *v) {
  static const struct {
    const char *name;
    int (*check)(const strata_plan_t *);
  } fw[ST__N_FRAMEWORKS] = {
      {"Megatron-LM", mg},
      {"DeepSpeed", st__ds_check},
      {"PyTorch DTensor", st__torch_check},
      {"torchtitan", titan},
  };
  for (int i = 0; i < ST__N_FRAMEWORKS; i++) {
    v[i].name = fw[i].name;
    if (i == 1 && p->pp > 1) v[i].name = "DeepSpeed pipeline engine";
    v[i].why[0] = 0;
    v[i].ok = fw[i].check(p) == 0;
    if (!v[i].ok) reason(v[i].why, sizeof v[i].why);
  }
}

int strata_plan_frameworks(const strata_plan_t *p, char **text) {
  st__fw_verdict_t v[ST__N_FRAMEWORKS];
  strata_buf_t b;
  if (!p || !text || p->n_stages < 1)
    return strata_error(STRATA_EINVAL, "frameworks: a plan with no stage");
  st__frameworks(p, v);
  strata_buf_init(&b);
  for (int i = 0; i < ST__N_FRAMEWORKS; i++)
    strata_buf_printf(&b, "%s: %s%s%s\n", v[i].name, v[i].ok ? "yes" : "no",
                      v[i].ok ? "" : " -- ", v[i].why);
  return strata_buf_finish(&b, text);
}
