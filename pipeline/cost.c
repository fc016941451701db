/*
 * cost.c - what a plan costs to train a token budget (strata plan
 * --tokens N): its time, the price of the GPUs it holds for that time and
 * the energy they draw, and the objective a choice between plans
 * minimises (--objective time|cost|energy).  docs/cost-model.md, "Cost
 * and energy", states the formulas and cites the figures.
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline/search.h"

/* The board's idle floor, a share of its TDP (docs/cost-model.md). */
#define IDLE_SHARE 0.1

static const char *const objective_names[] = {"time", "cost", "energy"};

const char *strata_plan_objective_name(int v) {
  return v >= 0 && v < 3 ? objective_names[v] : "?";
}

int strata_plan_objective_parse(const char *s, int *out) {
  for (int i = 0; s && i < 3; i++)
    if (!strcmp(s, objective_names[i])) {
      *out = i;
      return 0;
    }
  return strata_error(STRATA_EINVAL,
                      "unknown objective '%s': time, cost or energy",
                      s ? s : "");
}

/* A price as --gpu-price gives it: a number of dollars an hour, > 0. */
static int price_value(const char *s, size_t n, double *v) {
  char buf[64], *end;
  if (n == 0 || n >= sizeof buf)
    return strata_error(STRATA_EINVAL,
                        "--gpu-price: '%.*s' is not a price in US dollars "
                        "per GPU-hour",
                        (int)n, s);
  memcpy(buf, s, n);
  buf[n] = 0;
  *v = strtod(buf, &end);
  if (*end || end == buf || !(*v > 0) || *v > 1e4)
    return strata_error(STRATA_EINVAL,
                        "--gpu-price: '%s' is not a price in US dollars per "
                        "GPU-hour (a number above 0 and at most 10000)",
                        buf);
  return 0;
}

/* One item of --gpu-price, "USD" or "MODEL=USD": *hit where it applies
 * to m (a bare price applies to every model). */
static int price_item(const char *s, size_t n, const strata_gpu_model_t *m,
                      double *v, int *hit) {
  const char *eq = memchr(s, '=', n);
  *hit = 0;
  if (!eq) {
    *hit = 1;
    return price_value(s, n, v);
  }
  char name[64];
  size_t k = (size_t)(eq - s);
  if (k == 0 || k >= sizeof name)
    return strata_error(STRATA_EINVAL,
                        "--gpu-price: '%.*s' names no GPU model before '='",
                        (int)n, s);
  memcpy(name, s, k);
  name[k] = 0;
  const strata_gpu_model_t *named = strata_gpu_model_find(name);
  if (!named)
    return strata_error(STRATA_EINVAL,
                        "--gpu-price: unknown GPU model '%s' (the GPU "
                        "table's names: docs/cluster-format.md)",
                        name);
  int rc = price_value(eq + 1, n - k - 1, v);
  *hit = !rc && m && m->name && !strcmp(named->name, m->name);
  return rc;
}

int strata_gpu_price_of(const char *text, const strata_gpu_model_t *m,
                        double *usd_per_hour) {
  double table = 0, v = 0;
  int given = 0;
  strata_gpu_model_power_price(m, NULL, &table);
  const char *s = text;
  while (s && *s) {
    size_t n = strcspn(s, ",");
    int hit = 0, rc = price_item(s, n, m, &v, &hit);
    if (rc) return rc;
    if (hit) { /* a named model's price wins over a bare one */
      if (!given || memchr(s, '=', n)) *usd_per_hour = v;
      given = 1;
    }
    s += n + (s[n] == ',');
  }
  if (!given) *usd_per_hour = table;
  return 0;
}

/* The plan's GPUs, each stage's t x dp on its group's model (one group
 * on a cluster of one shape): their price an hour and their total peak
 * FLOP/s and TDP, into the sums; *unpriced the first model with no price. */
static int sum_gpus(const strata_plan_t *p, const strata_cluster_t *c,
                    const strata_plan_opts_t *o, double *usd, double *peak,
                    double *tdp, const char **unpriced) {
  *usd = *peak = *tdp = 0;
  for (int r = 0; r < p->pp; r++) { /* stage r on rank r */
    const strata_plan_stage_t *st = &p->stages[r];
    const strata_cluster_t *g = strata_cluster_group_count(c) > 1
                                    ? strata_cluster_group(c, st->group)
                                    : c;
    const strata_gpu_model_t *m = strata_cluster_gpu_model(g);
    double d = (double)p->devices / p->pp, price = 0, w = 0;
    if (p->n_groups > 0) d = (double)st->nodes * st->gpus_per_node * p->dp;
    int rc = strata_gpu_price_of(o->gpu_price, m, &price);
    if (rc) return rc;
    strata_gpu_model_power_price(m, &w, NULL);
    if (!(price > 0) && !*unpriced) *unpriced = m ? m->name : "?";
    *usd += d * price;
    *peak +=
        d * strata_cluster_gpu_peak_flops_at(g, strata_lowp_peak_bits(p->fp8));
    *tdp = w > 0 && *tdp >= 0 ? *tdp + d * w : -1;
  }
  return 0;
}

int st__plan_cost(strata_plan_t *p, const strata_graph_t *g,
                  const strata_cluster_t *c, const strata_plan_opts_t *o) {
  double usd, peak, tdp;
  const char *unpriced = NULL;
  p->objective = o->objective;
  p->tokens = o->tokens;
  p->train_seconds = p->cost_usd = p->energy_kwh = 0;
  p->price_usd_per_hour = p->power_kw = 0;
  if (!(o->tokens > 0) || !(p->step_seconds > 0) || p->pp < 1) return 0;
  int rc = sum_gpus(p, c, o, &usd, &peak, &tdp, &unpriced);
  if (rc) return rc;
  int seq = p->seq_len > 0 ? p->seq_len : g->seq_len;
  p->train_seconds =
      o->tokens * p->step_seconds / ((double)p->global_batch * seq);
  if (!unpriced) {
    p->price_usd_per_hour = usd;
    p->cost_usd = usd * p->train_seconds / 3600;
  }
  if (tdp > 0) { /* P = TDP (f + (1 - f) u), u the plan's MFU */
    strata_graph_stats_t gs;
    double mb = g->micro_batch > 0 ? g->micro_batch : 1;
    strata_graph_stats(g, &gs);
    double flops = gs.flops_per_microbatch * p->global_batch / mb;
    double u = flops / (p->step_seconds * peak);
    u = u > 1 ? 1 : u < 0 ? 0 : u;
    p->power_kw = tdp * (IDLE_SHARE + (1 - IDLE_SHARE) * u) / 1e3;
    p->energy_kwh = p->power_kw * p->train_seconds / 3600;
  }
  return 0;
}

double st__objective_of(const strata_plan_t *p, int objective) {
  if (objective == STRATA_OBJECTIVE_COST && p->cost_usd > 0) return p->cost_usd;
  if (objective == STRATA_OBJECTIVE_ENERGY && p->energy_kwh > 0)
    return p->energy_kwh;
  return p->step_seconds;
}

int st__objective_ready(const strata_cluster_t *c,
                        const strata_plan_opts_t *o) {
  if (o->objective == STRATA_OBJECTIVE_TIME) {
    int K = strata_cluster_group_count(c);
    for (int z = 0; z < (K > 1 ? K : 1); z++) { /* check the text early */
      double v;
      int rc = strata_gpu_price_of(
          o->gpu_price,
          strata_cluster_gpu_model(K > 1 ? strata_cluster_group(c, z) : c), &v);
      if (rc) return rc;
    }
    return 0;
  }
  if (!(o->tokens > 0))
    return strata_error(STRATA_EINVAL,
                        "--objective %s needs --tokens N (the token budget "
                        "its %s is for)",
                        strata_plan_objective_name(o->objective),
                        strata_plan_objective_name(o->objective));
  int K = strata_cluster_group_count(c);
  for (int z = 0; z < (K > 1 ? K : 1); z++) {
    const strata_cluster_t *g = K > 1 ? strata_cluster_group(c, z) : c;
    const strata_gpu_model_t *m = strata_cluster_gpu_model(g);
    double v = 0, w = 0;
    int rc = strata_gpu_price_of(o->gpu_price, m, &v);
    if (rc) return rc;
    strata_gpu_model_power_price(m, &w, NULL);
    if (o->objective == STRATA_OBJECTIVE_COST && !(v > 0))
      return strata_error(STRATA_EINVAL,
                          "--objective cost: no price is known for the %s "
                          "(node group %d); give one with --gpu-price "
                          "%s=USD_PER_HOUR",
                          m ? m->name : "cluster's GPU", z,
                          m ? m->name : "MODEL");
    if (o->objective == STRATA_OBJECTIVE_ENERGY && !(w > 0))
      return strata_error(STRATA_EINVAL,
                          "--objective energy: the GPU table holds no TDP "
                          "for the %s (node group %d)",
                          m ? m->name : "cluster's GPU", z);
  }
  return 0;
}
