/*
 * split.c - how to cut L layers into p pipeline stages.
 *
 * The dynamic program is Alpa's inter-operator pass (Zheng et al. 2022,
 * section 5.2) for a fixed number of stages: for each candidate t_max (the
 * distinct stage costs, ascending), G(s, k) is the least sum of stage
 * costs that puts layers k.. into stages s.. with every stage at most
 * t_max; the pipeline latency is G(0, 0) + (B - 1) * t_max.  Candidates
 * stop once (B - 1) * t_max alone reaches the best latency found.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/search.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* G table for one t_max; fills choice[s * (L+1) + k] = layers of stage s. */
static double best_sum(int L, int p, int nmax, double tmax, const double *c,
                       double *G, int *choice) {
  int W = L + 1;
  for (int s = p; s >= 0; s--)
    for (int k = 0; k <= L; k++) G[s * W + k] = INFINITY;
  G[p * W + L] = 0;
  for (int s = p - 1; s >= 0; s--) {
    int left = p - 1 - s; /* stages after s, each needs a layer */
    for (int k = s; k + 1 + left <= L; k++) {
      double best = INFINITY;
      int arg = -1;
      for (int n = 1; n <= nmax && k + n + left <= L; n++) {
        double t = c[s * W + n];
        if (!(t <= tmax)) continue;
        double v = t + G[(s + 1) * W + k + n];
        if (v < best) {
          best = v;
          arg = n;
        }
      }
      G[s * W + k] = best;
      choice[s * W + k] = arg;
    }
  }
  return G[0];
}

double st__split_dp(int L, int p, int B, int nmax, st__stage_cost_fn cost,
                    void *ctx, int *n_out) {
  int W = L + 1;
  if (nmax <= 0 || nmax > L) nmax = L;
  double best = INFINITY;
  if (p < 1 || p > L) return INFINITY;
  double *c = malloc(sizeof(double) * (size_t)(p * W));
  double *G = malloc(sizeof(double) * (size_t)((p + 1) * W));
  double *cand = malloc(sizeof(double) * (size_t)(p * W));
  int *choice = malloc(sizeof(int) * (size_t)((p + 1) * W));
  int nc = 0;
  if (!c || !G || !cand || !choice) goto out;
  for (int s = 0; s < p; s++)
    for (int n = 0; n <= L; n++) {
      double t = n >= 1 && n <= L - p + 1 && n <= nmax ? cost(ctx, s, n)
                                                       : INFINITY;
      c[s * W + n] = t;
      if (isfinite(t)) cand[nc++] = t;
    }
  qsort(cand, (size_t)nc, sizeof *cand, cmp_double);
  /* G never drops below its value with no cap: a candidate whose
   * (B - 1) * t_max alone would lift that floor past the best is useless,
   * and so are all larger ones */
  double floor_sum =
      nc ? best_sum(L, p, nmax, INFINITY, c, G, choice) : INFINITY;
  /* a cap too small for any split is infeasible, and so is every smaller
   * one: find the least feasible candidate by bisection, start there */
  int lo = 0, hi = nc - 1;
  while (isfinite(floor_sum) && lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (isfinite(best_sum(L, p, nmax, cand[mid], c, G, choice))) hi = mid;
    else lo = mid + 1;
  }
  for (int i = lo; i < nc && isfinite(floor_sum); i++) {
    if (i > lo && cand[i] == cand[i - 1]) continue;
    if (floor_sum + (B - 1) * cand[i] >= best) break;
    double sum = best_sum(L, p, nmax, cand[i], c, G, choice);
    if (!isfinite(sum) || sum + (B - 1) * cand[i] >= best) continue;
    best = sum + (B - 1) * cand[i];
    for (int s = 0, k = 0; s < p; s++) {
      n_out[s] = choice[s * W + k];
      k += n_out[s];
    }
  }
out:
  free(c);
  free(G);
  free(cand);
  free(choice);
  return best;
}

static void brute(int L, int p, int B, st__stage_cost_fn cost, void *ctx,
                  int s, int left, int *cur, double sum, double mx,
                  double *best, int *n_out) {
  if (s == p) {
    if (left == 0 && sum + (B - 1) * mx < *best) {
      *best = sum + (B - 1) * mx;
      memcpy(n_out, cur, sizeof(int) * (size_t)p);
    }
    return;
  }
  for (int n = 1; n <= left - (p - 1 - s); n++) {
    double t = cost(ctx, s, n);
    if (!isfinite(t)) continue;
    cur[s] = n;
    brute(L, p, B, cost, ctx, s + 1, left - n, cur, sum + t, t > mx ? t : mx,
          best, n_out);
  }
}

double st__split_brute(int L, int p, int B, st__stage_cost_fn cost, void *ctx,
                       int *n_out) {
  double best = INFINITY;
  int cur[64];
  if (p < 1 || p > L || p > 64) return INFINITY;
  brute(L, p, B, cost, ctx, 0, L, cur, 0, 0, &best, n_out);
  return best;
}

int st__split_megatron(int L, int p, int *n_out) {
  if (p < 1 || p > L) return -1;
  if (L % p == 0 || p <= 2) {
    for (int s = 0; s < p; s++) n_out[s] = L / p + (s >= p - L % p ? 1 : 0);
    return 0;
  }
  /* Megatron-LM allows the first and last stages to differ: middle stages
   * take ceil(L/p) layers, first and last share the rest. */
  int mid = (L + p - 1) / p, rest = L - (p - 2) * mid;
  if (rest < 2 || rest > 2 * mid) return -1;
  n_out[0] = rest / 2;
  n_out[p - 1] = rest - rest / 2;
  for (int s = 1; s < p - 1; s++) n_out[s] = mid;
  return 0;
}
