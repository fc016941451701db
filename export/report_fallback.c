/*
 * report_fallback.c - what the summary and the JSON say about fallback
 * plans (`strata plan --fallbacks K`, report.c calls in here): a plan
 * that holds them lists each by its nodes lost, configuration and
 * figures against the plan's own; a fallback plan itself (show --fallback
 * N) says which it is.  Nothing is printed for a plan without them.
 */
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "merge/merge_int.h"

static void fallback_name(const strata_plan_t *f, char *buf, size_t n) {
  if (f->n_top > 0)
    strata_plan_config_name(&f->top[0], buf, n);
  else
    snprintf(buf, n, "tp %d, pp %d, dp %d", f->tp, f->pp, f->dp);
}

/* Whether two plans are one: the same configuration on as many devices,
 * the same layers on each stage and the same figures (a fallback whose
 * lost nodes the plan leaves idle, or two counts of lost nodes that
 * leave the same cluster to plan on). */
static int same_plan(const strata_plan_t *a, const strata_plan_t *b) {
  char na[200], nb[200];
  if (a->devices != b->devices || a->n_stages != b->n_stages ||
      a->step_seconds != b->step_seconds ||
      a->peak_memory_bytes != b->peak_memory_bytes)
    return 0;
  fallback_name(a, na, sizeof na);
  fallback_name(b, nb, sizeof nb);
  if (strcmp(na, nb)) return 0;
  for (int s = 0; s < a->n_stages; s++)
    if (a->stages[s].layer_begin != b->stages[s].layer_begin ||
        a->stages[s].layer_end != b->stages[s].layer_end ||
        a->stages[s].first_rank != b->stages[s].first_rank)
      return 0;
  return 1;
}

/* Which plan fallback i is the same as: 0 the plan itself, k fallback k
 * (the first of them), -1 none. */
static int same_as(const strata_plan_t *p, int i) {
  if (same_plan(p, p->fallbacks[i])) return 0;
  for (int k = 0; k < i; k++)
    if (same_plan(p->fallbacks[k], p->fallbacks[i]))
      return p->fallbacks[k]->nodes_lost;
  return -1;
}

/* The plan's checkpoint under fallback f, in f's framework's format. */
static int ckpt_of(const strata_plan_t *p, const strata_plan_t *f,
                   strata_ckpt_verdict_t *own) {
  strata_ckpt_verdict_t v[STRATA_CKPT_FORMATS];
  if (strata_checkpoint_compare(p, f, v)) return -1;
  *own = v[strata_ckpt_default_format(f)];
  return 0;
}

/* Where the fallback's checkpoint does not load as is: the fastest of its
 * listed configurations whose would (the plan with that configuration's
 * degrees), -1 none. */
static int ckpt_keeper(const strata_plan_t *p, const strata_plan_t *f) {
  strata_plan_t g = *f;
  strata_ckpt_verdict_t v;
  int best = -1;
  for (int k = 1; k < f->n_top; k++) {
    const strata_plan_config_t *c = &f->top[k];
    if (!c->fits || (best >= 0 && c->step_seconds >= f->top[best].step_seconds))
      continue;
    g.tp = c->tp, g.pp = c->pp, g.dp = c->dp, g.vpp = c->vpp;
    g.cp = c->cp, g.ep = c->ep, g.etp = c->etp, g.zero_stage = c->zero_stage;
    if (!ckpt_of(p, &g, &v) && v.loads_as_is) best = k;
  }
  return best;
}

static void sum_ckpt(strata_buf_t *b, const strata_plan_t *p,
                     const strata_plan_t *f) {
  strata_ckpt_verdict_t v;
  if (ckpt_of(p, f, &v)) return;
  if (v.loads_as_is) {
    strata_buf_printf(b, "    the plan's checkpoint loads as is (%s)\n",
                      strata_ckpt_format_name(v.format));
    return;
  }
  strata_buf_printf(b,
                    "    the plan's checkpoint does not load as is (%s: %s)\n",
                    strata_ckpt_format_name(v.format), v.why);
  int k = ckpt_keeper(p, f);
  if (k < 0) return;
  char name[200];
  strata_plan_config_name(&f->top[k], name, sizeof name);
  strata_buf_printf(b,
                    "    one that loads it as is: %s, %.3f ms (%+.2f %% "
                    "on this fallback)\n",
                    name, f->top[k].step_seconds * 1e3,
                    100 * (f->top[k].step_seconds / f->step_seconds - 1));
}

static void sum_fallback(strata_buf_t *b, const strata_plan_t *p, int i) {
  const strata_plan_t *f = p->fallbacks[i];
  char name[200], mem[32];
  int k = same_as(p, i);
  strata_buf_printf(b, "  %d node%s lost: ", f->nodes_lost,
                    f->nodes_lost == 1 ? "" : "s");
  if (k == 0) {
    strata_buf_printf(b,
                      "the plan itself (its %d %ss are still there: it "
                      "does not use every node)\n",
                      f->devices, st__dev(f));
    return;
  }
  if (k > 0) {
    strata_buf_printf(b, "the same plan as for %d node%s lost\n", k,
                      k == 1 ? "" : "s");
    return;
  }
  fallback_name(f, name, sizeof name);
  strata_buf_printf(b, "%s: %.3f ms", name, f->step_seconds * 1e3);
  if (p->step_seconds > 0)
    strata_buf_printf(b, " (%+.2f %%)",
                      100 * (f->step_seconds / p->step_seconds - 1));
  strata_buf_printf(b, ", %s, %d %ss\n",
                    strata_fmt_bytes(f->peak_memory_bytes, mem, sizeof mem),
                    f->devices, st__dev(f));
  sum_ckpt(b, p, f);
}

void st__sum_fallbacks(strata_buf_t *b, const strata_plan_t *p) {
  if (p->nodes_lost > 0)
    strata_buf_printf(b,
                      "\nfallback: the plan of the cluster with %d node%s of "
                      "each node group lost (strata plan --fallbacks)\n",
                      p->nodes_lost, p->nodes_lost == 1 ? "" : "s");
  if (p->fallbacks_asked < 1) return;
  strata_buf_puts(b, "\nfallbacks (the plans of nodes lost in each node "
                     "group; strata show/export --fallback N):\n");
  for (int i = 0; i < p->n_fallbacks; i++)
    sum_fallback(b, p, i);
  if (p->n_fallbacks < p->fallbacks_asked)
    strata_buf_printf(b,
                      "  %d node%s lost: none stored (nothing fits, or no "
                      "node is left), nor beyond\n",
                      p->n_fallbacks + 1, p->n_fallbacks ? "s" : "");
}

int st__json_fallbacks(cJSON *root, const strata_plan_t *p) {
  if (p->fallbacks_asked < 1) return 0;
  if (st__json_add_num(root, "fallbacks_asked", p->fallbacks_asked)) return -1;
  cJSON *a = cJSON_AddArrayToObject(root, "fallbacks");
  if (!a) return -1;
  for (int i = 0; i < p->n_fallbacks; i++) {
    const strata_plan_t *f = p->fallbacks[i];
    char name[200];
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(a, o)) {
      cJSON_Delete(o);
      return -1;
    }
    fallback_name(f, name, sizeof name);
    if (st__json_add_num(o, "nodes_lost", f->nodes_lost) |
        st__json_add_str(o, "config", name) |
        st__json_add_num(o, "devices", f->devices) |
        st__json_add_num(o, "tp", f->tp) | st__json_add_num(o, "pp", f->pp) |
        st__json_add_num(o, "dp", f->dp) |
        st__json_add_num(o, "step_seconds", f->step_seconds) |
        st__json_add_num(o, "peak_memory_bytes", f->peak_memory_bytes))
      return -1;
    /* the same plan as the plan's own (0) or as fallback k's */
    int k = same_as(p, i);
    if (k >= 0 && st__json_add_num(o, "same_as_nodes_lost", k)) return -1;
    strata_ckpt_verdict_t v;
    cJSON *c =
        ckpt_of(p, f, &v) ? NULL : cJSON_AddObjectToObject(o, "checkpoint");
    if (!c || st__json_add_str(c, "format", strata_ckpt_format_name(v.format)) |
                  st__json_add_bool(c, "loads_as_is", v.loads_as_is) |
                  st__json_add_str(c, "conversion", v.conversion) |
                  st__json_add_num(c, "bytes", v.bytes) |
                  st__json_add_num(c, "seconds", v.seconds))
      return -1;
  }
  return 0;
}
