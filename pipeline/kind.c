/*
 * kind.c - the linear model of a kind of stage (see search.h): memory and
 * time of n layers with f micro-batches in flight, from three solves.
 */
#include <math.h>

#include "pipeline/search.h"

static double tstep(const strata_stage_result_t *r) {
  return r->compute_seconds + r->comm_seconds - r->sync_seconds;
}

/* r11: 1 layer, 1 in flight; r21: 2 layers; r12: 2 in flight.  r21 may be
 * NULL when the model has one layer. */
void st__kind_fit(st__kindcost_t *k, const strata_stage_result_t *r11,
                  const strata_stage_result_t *r21,
                  const strata_stage_result_t *r12) {
  double A = r11->peak_memory_bytes, C = r12->peak_memory_bytes;
  double B = r21 ? r21->peak_memory_bytes : A + (C - A);
  k->a = C - A;
  k->w = B - A - k->a;
  k->base = A - k->w - k->a;
  const strata_stage_result_t *r2 = r21 ? r21 : r11;
  double n2 = r21 ? 1.0 : 0.0;
  k->sw = (r2->mem.weights - r11->mem.weights) * n2;
  k->sg = (r2->mem.gradients - r11->mem.gradients) * n2;
  k->so = (r2->mem.optimizer - r11->mem.optimizer) * n2;
  k->sbase_w = r11->mem.weights - k->sw;
  k->sbase_g = r11->mem.gradients - k->sg;
  k->sbase_o = r11->mem.optimizer - k->so;
  k->t1 = tstep(r11);
  k->dt = r21 ? tstep(r21) - k->t1 : 0;
  k->s1 = r11->sync_seconds;
  k->ds = r21 ? r21->sync_seconds - k->s1 : 0;
  k->grad1 = r11->mem.gradients;
  k->dgrad = r21 ? r21->mem.gradients - k->grad1 : 0;
  k->ok = 1;
}

double st__kind_mem(const st__kindcost_t *k, int n, int f, int dp, int z) {
  double m = k->base + n * k->w + (double)n * f * k->a;
  double w = k->sbase_w + n * k->sw, g = k->sbase_g + n * k->sg,
         o = k->sbase_o + n * k->so;
  /* the ZeRO-sharded states divide over the outer replicas too */
  if (dp > 1) {
    if (z >= 1) m -= o - o / dp;
    if (z >= 2) m -= g - g / dp;
    if (z >= 3) m -= w - w / dp;
  }
  return m;
}

double st__kind_time(const st__kindcost_t *k, int n) {
  return k->t1 + (n - 1) * k->dt;
}
