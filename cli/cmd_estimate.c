/*
 * cmd_estimate.c - `strata estimate`: memory and step time of one given
 * configuration, with the planner's own evaluation and defaults (it is
 * `strata plan` with the configuration fixed), then how it compares to
 * the best plan: slower by how much and why, or how far it is from
 * fitting and which memory item decides.
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "cli/planargs.h"
#include "core/json.h"
#include "core/stream.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* The item of b that exceeds a's most: its name and the difference. */
static const char *step_term(const strata_step_items_t *a,
                             const strata_step_items_t *b, double *diff) {
  const double x[] = {a->compute,      a->tp_comm,   a->bubble,   a->dp_sync,
                      a->param_gather, a->optimizer, a->overhead, a->ep_a2a,
                      a->host,         a->p2p,       a->cp_comm};
  const double y[] = {b->compute,      b->tp_comm,   b->bubble,   b->dp_sync,
                      b->param_gather, b->optimizer, b->overhead, b->ep_a2a,
                      b->host,         b->p2p,       b->cp_comm};
  static const char *name[] = {"compute",
                               "tensor-parallel communication",
                               "the pipeline bubble",
                               "data-parallel gradient synchronisation",
                               "the parameter gather",
                               "the optimizer step",
                               "the fixed overhead",
                               "the experts' all-to-all",
                               "the MoE layers' host-bound time",
                               "the blocking pipeline sends",
                               "ring attention's exchange"};
  int best = 0;
  for (int i = 1; i < (int)(sizeof x / sizeof x[0]); i++)
    if (y[i] - x[i] > y[best] - x[best]) best = i;
  *diff = y[best] - x[best];
  return name[best];
}

static const char *mem_term(const strata_mem_items_t *a,
                            const strata_mem_items_t *b, double *diff) {
  const double x[] = {a->weights,     a->gradients,    a->optimizer,
                      a->activations, a->transient,    a->nccl,
                      a->buckets,     a->fragmentation};
  const double y[] = {b->weights,     b->gradients,    b->optimizer,
                      b->activations, b->transient,    b->nccl,
                      b->buckets,     b->fragmentation};
  static const char *name[] = {"weights",
                               "gradients",
                               "optimizer states",
                               "activations",
                               "transient buffers",
                               "NCCL buffers",
                               "communication buckets",
                               "fragmentation"};
  int best = 0;
  for (int i = 1; i < 8; i++)
    if (y[i] - x[i] > y[best] - x[best]) best = i;
  *diff = y[best] - x[best];
  return name[best];
}

static const strata_mem_items_t *worst_rank(const strata_plan_t *p) {
  int w = 0;
  for (int r = 1; r < p->pp; r++)
    if (p->ranks[r].mem.total > p->ranks[w].mem.total) w = r;
  return &p->ranks[w].mem;
}

/* What a comparison is with: the best plan of the user's own options
 * with the degrees and the split free ("the best with recompute
 * selective, micro 2"), or, where the user stated no configuration
 * choice beyond the degrees, the planner's best. */
typedef struct {
  const strata_plan_t *best;
  char label[200];
  const char *json_key; /* comparison_with_best, ..._planner_best */
  const char *with;     /* the choices kept ("" for the planner's best) */
} cmp_t;

/* "slower by x % ..." or "does not fit by y GiB ...", into b. */
static void compare(strata_buf_t *b, const strata_plan_t *mine, const cmp_t *k,
                    double budget, int fits) {
  const strata_plan_t *best = k->best;
  double d;
  char name[200];
  strata_plan_config_name(&best->top[0], name, sizeof name);
  strata_buf_printf(b, "%s: %s: %.3f ms, %.2f GiB\n", k->label, name,
                    best->step_seconds * 1e3, best->peak_memory_bytes / GIB);
  if (!fits) {
    const char *t = mem_term(worst_rank(best), worst_rank(mine), &d);
    strata_buf_printf(b,
                      "this configuration does not fit by %.2f GiB; most of "
                      "the difference to that plan is %s (+%.2f GiB)\n",
                      (mine->peak_memory_bytes - budget) / GIB, t, d / GIB);
    return;
  }
  double rel = mine->step_seconds / best->step_seconds - 1;
  if (rel <= 1e-9) {
    strata_buf_puts(b, "this configuration is that plan's (or ties with it)\n");
    return;
  }
  const char *t = step_term(&best->step_items, &mine->step_items, &d);
  strata_buf_printf(b,
                    "this configuration is slower by %.2f %% (+%.3f ms); most "
                    "of the difference is %s (+%.3f ms)\n",
                    100 * rel, (mine->step_seconds - best->step_seconds) * 1e3,
                    t, d * 1e3);
}

/* The same comparison as fields a script can read (k->json_key in
 * --json; docs/cli.md): the verdict, and the figures behind it. */
static cJSON *compare_json(const strata_plan_t *mine, const cmp_t *k,
                           double budget, int fits) {
  const strata_plan_t *best = k->best;
  cJSON *o = cJSON_CreateObject();
  double d = 0, rel = mine->step_seconds / best->step_seconds - 1;
  char name[200];
  const char *t;
  strata_plan_config_name(&best->top[0], name, sizeof name);
  int bad =
      !o || st__json_add_str(o, "best_configuration", name) ||
      st__json_add_str(o, "best_with", k->with) ||
      st__json_add_num(o, "best_step_seconds", best->step_seconds) ||
      st__json_add_num(o, "best_peak_memory_bytes", best->peak_memory_bytes);
  if (!bad && !fits) {
    t = mem_term(worst_rank(best), worst_rank(mine), &d);
    bad = st__json_add_str(o, "verdict", "does_not_fit") ||
          st__json_add_num(o, "over_budget_bytes",
                           mine->peak_memory_bytes - budget) ||
          st__json_add_str(o, "main_term", t) ||
          st__json_add_num(o, "main_term_bytes", d);
  } else if (!bad && rel <= 1e-9) {
    bad = st__json_add_str(o, "verdict", "ties");
  } else if (!bad) {
    t = step_term(&best->step_items, &mine->step_items, &d);
    bad = st__json_add_str(o, "verdict", "slower") ||
          st__json_add_num(o, "slower_by", rel) ||
          st__json_add_num(o, "step_delta_seconds",
                           mine->step_seconds - best->step_seconds) ||
          st__json_add_str(o, "main_term", t) ||
          st__json_add_num(o, "main_term_seconds", d);
  }
  if (bad) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

static int json_out(strata_plan_t *p, int fits, double budget, const char *cmp,
                    cJSON **cmpj, int timings) {
  char *text = NULL;
  cJSON *root = NULL;
  /* the run's time only when asked for: the same plan, the same bytes */
  int rc =
      strata_plan_json_flags(p, timings ? STRATA_PLAN_JSON_TIMINGS : 0, &text);
  if (!rc) rc = st__json_parse(text, strlen(text), "estimate", &root);
  strata_free(text);
  text = NULL;
  if (!rc) rc = st__json_add_bool(root, "fits", fits);
  /* what fits is measured against: the device less the reserve */
  if (!rc) rc = st__json_add_num(root, "memory_budget_bytes", budget);
  if (!rc && cmp) rc = st__json_add_str(root, "comparison", cmp);
  for (int i = 0; !rc && i < 2; i++) {
    if (!cmpj[i]) continue;
    if (!cJSON_AddItemToObject(
            root, i ? "comparison_with_planner_best" : "comparison_with_best",
            cmpj[i]))
      rc = strata_error(STRATA_ENOMEM, "out of memory");
    else
      cmpj[i] = NULL; /* root owns it */
  }
  if (!rc && !(text = st__json_print(root)))
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  cJSON_Delete(root);
  if (rc) return cli_fail("estimate", rc);
  rc = cli_write_output("estimate", NULL, text, strlen(text));
  strata_free(text);
  return rc;
}

static int human_out(const strata_plan_t *p, int fits, double budget,
                     const char *cmp) {
  char *text = NULL;
  int rc = strata_plan_summary(p, &text);
  if (rc) return cli_fail("estimate", rc);
  fputs(text, st__stdout());
  strata_free(text);
  if (!fits)
    fprintf(st__stdout(),
            "\ndoes not fit: %.2f GiB per device needed, %.2f GiB available "
            "(the %s's %.2f GiB less the reserve)\n",
            p->peak_memory_bytes / GIB, budget / GIB, p->npu ? "NPU" : "GPU",
            p->gpu_memory_bytes / GIB);
  if (cmp) fprintf(st__stdout(), "\n%s", cmp);
  return 0;
}

/* One more choice onto the list in buf ("micro 2, recompute full"). */
__attribute__((format(printf, 3, 4))) static void
kept_add(char *buf, size_t n, const char *fmt, ...) {
  size_t k = strlen(buf);
  va_list ap;
  if (k && k + 2 < n) k += (size_t)snprintf(buf + k, n - k, ", ");
  if (k >= n) return;
  va_start(ap, fmt);
  vsnprintf(buf + k, n - k, fmt, ap);
  va_end(ap);
}

/* The configuration choices the user stated beyond the degrees, which
 * the best of the same options keeps: "micro 2, recompute selective";
 * "" when none. */
static void kept_choices(const strata_plan_opts_t *o, char *buf, size_t n) {
  buf[0] = '\0';
  if (o->micro_batch > 0) kept_add(buf, n, "micro %d", o->micro_batch);
  if (o->vpp > 0) kept_add(buf, n, "vpp %d", o->vpp);
  if (o->pipeline_layout) kept_add(buf, n, "its pipeline layout");
  if (o->sequence_parallel != STRATA_AUTO)
    kept_add(buf, n, "sequence parallelism %s",
             o->sequence_parallel > 0 ? "on" : "off");
  if (o->zero_stage == STRATA_AUTO)
    kept_add(buf, n, "ZeRO chosen");
  else if (o->zero_stage != 1)
    kept_add(buf, n, "ZeRO %d", o->zero_stage);
  if (o->recompute != STRATA_RECOMPUTE_AUTO)
    kept_add(buf, n, "recompute %s", strata_recompute_name(o->recompute));
}

/* The user's options with those choices free, as `strata plan` takes
 * them by default: what the planner's best is planned with. */
static void free_choices(strata_plan_opts_t *o) {
  strata_plan_opts_t d;
  strata_plan_opts_init(&d);
  o->micro_batch = d.micro_batch, o->vpp = d.vpp;
  o->pipeline_layout = NULL;
  o->sequence_parallel = d.sequence_parallel, o->zero_stage = d.zero_stage;
  o->recompute = d.recompute, o->recompute_modules = d.recompute_modules;
}

/* The best plan of options o (the degrees and split free) into k, or
 * NULL where none is found (the comparison is then left out). */
static int best_of(const strata_graph_t *g, const strata_cluster_t *c,
                   strata_plan_opts_t o, cmp_t *k) {
  strata_plan_t *best = NULL;
  o.tp = o.pp = o.dp = o.first_layers = o.last_layers = 0;
  o.cp = o.ep = o.etp = 0;
  o.no_memory_check = 0;
  o.top = 1;
  if (strata_pipeline_plan(g, c, &o, &best)) {
    strata_error_clear();
    strata_plan_destroy(best);
    return 0;
  }
  k->best = best;
  return 1;
}

/* Whether the two bests are one configuration at one step. */
static int same_best(const strata_plan_t *a, const strata_plan_t *b) {
  char na[200], nb[200];
  strata_plan_config_name(&a->top[0], na, sizeof na);
  strata_plan_config_name(&b->top[0], nb, sizeof nb);
  return !strcmp(na, nb) && a->step_seconds == b->step_seconds;
}

/* How this configuration compares with the best plan of the user's own
 * options (the degrees and split free), named by the choices it keeps,
 * and with the planner's best (those choices free too) where that is
 * another plan. */
static char *comparison(const cli_plan_args_t *user, const strata_plan_t *mine,
                        const strata_graph_t *g, const strata_cluster_t *c,
                        double budget, int fits, cJSON **js) {
  cmp_t k[2] = {
      {NULL, "", "comparison_with_best", ""},
      {NULL, "the planner's best", "comparison_with_planner_best", ""}};
  char with[160];
  strata_plan_opts_t o = user->po;
  strata_buf_t b;
  char *out = NULL;
  kept_choices(&o, with, sizeof with);
  k[0].with = with;
  if (with[0])
    snprintf(k[0].label, sizeof k[0].label, "the best with %s", with);
  else
    snprintf(k[0].label, sizeof k[0].label, "the planner's best");
  int n = best_of(g, c, o, &k[0]);
  if (n && with[0]) {
    free_choices(&o);
    n += best_of(g, c, o, &k[1]);
  }
  strata_buf_init(&b);
  for (int i = 0; i < n; i++) {
    if (i && same_best(k[0].best, k[1].best))
      strata_buf_printf(&b, "the planner's best is that plan too\n");
    else
      compare(&b, mine, &k[i], budget, fits);
    if (js) js[i] = compare_json(mine, &k[i], budget, fits);
  }
  out = n && !b.oom ? strata_buf_steal(&b, NULL) : NULL;
  strata_buf_free(&b);
  for (int i = 0; i < 2; i++)
    strata_plan_destroy((strata_plan_t *)k[i].best);
  return out;
}

int cli_cmd_estimate(int argc, char **argv) {
  cli_plan_args_t a, user;
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  char *cmp = NULL;
  cJSON *cmpj[2] = {NULL, NULL};
  int rc = cli_plan_parse("estimate", argc, argv, 1, &a), e;
  if (rc) return rc < 0 ? CLI_OK : rc;
  user = a;
  strata_plan_opts_fixed(&a.po); /* the library's defaults of one */
  if ((rc = cli_plan_load("estimate", &a, &g, &c))) goto out;
  strata_plan_opts_resolve(&a.po, g); /* read by the rulebook */
  /* the rulebook's (rules/rules.c): what the framework refuses is a
   * usage error, told with the rule */
  if (strata_pipeline_fix(g, c, &a.po)) {
    rc = cli_usage_error("estimate", "%s", strata_last_error());
    goto out;
  }
  a.po.no_memory_check = 1; /* report whether it fits, do not prune */
  a.po.top = 1;
  a.po.quiet = 1;
  if ((e = strata_pipeline_plan(g, c, &a.po, &p)) ||
      (e = strata_merge_stitch(p, g, c))) {
    rc = cli_fail("estimate", e);
    goto out;
  }
  double budget = strata_plan_memory_budget(&a.po, c);
  int fits = p->peak_memory_bytes <= budget;
  if (!a.no_compare) {
    user.po.quiet = 1;
    cmp = comparison(&user, p, g, c, budget, fits, a.json ? cmpj : NULL);
  }
  rc = a.json ? json_out(p, fits, budget, cmp, cmpj, a.timings)
              : human_out(p, fits, budget, cmp);
  /* what the offloads hold beyond the host's memory does not run either */
  int host_fits =
      !(p->host_capacity_gib > 0 && p->host_memory_gib > p->host_capacity_gib);
  if (!rc && !host_fits && !a.json)
    fprintf(st__stdout(),
            "\ndoes not fit in the host's memory: %.2f GiB a %s offloaded, "
            "%.2f GiB a %s in the reference system\n",
            p->host_memory_gib, p->npu ? "NPU" : "GPU", p->host_capacity_gib,
            p->npu ? "NPU" : "GPU");
  if (!rc && (!fits || !host_fits)) rc = CLI_INFEASIBLE;
out:
  strata_free(cmp);
  cJSON_Delete(cmpj[0]);
  cJSON_Delete(cmpj[1]);
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return rc;
}
