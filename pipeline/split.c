/*
 * split.c - how to cut L layers into p pipeline stages.
 *
 * The dynamic program is Alpa's inter-operator pass (Zheng et al. 2022,
 * section 5.2) for a fixed number of stages: for each candidate t_max (the
 * distinct stage costs, ascending), G(s, k) is the least sum of stage
 * costs that puts layers k.. into stages s.. with every stage at most
 * t_max; the pipeline latency is G(0, 0) + (B - 1) * t_max.  Candidates
 * stop once (B - 1) * t_max alone reaches the best latency found.  Below
 * it: Megatron-LM's split, and the exact splits of a mixed cluster's
 * stages (linear costs for one kind of layer, prefix sums for several).
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
    for (int k = 0; k <= L; k++)
      G[s * W + k] = INFINITY;
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
      double t =
          n >= 1 && n <= L - p + 1 && n <= nmax ? cost(ctx, s, n) : INFINITY;
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
    if (isfinite(best_sum(L, p, nmax, cand[mid], c, G, choice)))
      hi = mid;
    else
      lo = mid + 1;
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

static void brute(int L, int p, int B, st__stage_cost_fn cost, void *ctx, int s,
                  int left, int *cur, double sum, double mx, double *best,
                  int *n_out) {
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
    for (int s = 0; s < p; s++)
      n_out[s] = L / p + (s >= p - L % p ? 1 : 0);
    return 0;
  }
  /* Megatron-LM allows the first and last stages to differ: middle stages
   * take ceil(L/p) layers, first and last share the rest. */
  int mid = (L + p - 1) / p, rest = L - (p - 2) * mid;
  if (rest < 2 || rest > 2 * mid) return -1;
  n_out[0] = rest / 2;
  n_out[p - 1] = rest - rest / 2;
  for (int s = 1; s < p - 1; s++)
    n_out[s] = mid;
  return 0;
}

/* ---- stages of linear cost: node groups of different speeds ----
 *
 * Stage s of n layers costs a[s] n + e[s] and holds at most u[s] layers
 * (its memory).  For a cap T on the bottleneck, each stage takes at most
 * cap_s(T) layers; the least sum under the cap puts every layer beyond
 * the first of each stage on the stages of least a[s] first (a box-
 * constrained linear program with one equality: the greedy fill is
 * optimal and integral).  The optimum's bottleneck M* is one of the
 * values a[s] n + e[s]; at T = M* the optimum is feasible, so the greedy
 * split at T has a sum no larger and a bottleneck no larger than M*:
 * enumerating T over those values finds the optimum of
 * sum + (B - 1) x bottleneck exactly. */

typedef struct {
  int P;
  const double *a, *e;
  const int *u;
  int *order; /* stages by a, ascending */
} lin_t;

static const double *lin_a;
static int cmp_by_a(const void *x, const void *y) {
  double p = lin_a[*(const int *)x], q = lin_a[*(const int *)y];
  return (p > q) - (p < q);
}

/* order (room for 2 P): the stages by a, least first, those of one a in
 * their order (as a stable sort gives them); the stages take a few values
 * of a (a kind of rank each), so by counting. */
static void order_by_a(const double *a, int P, int *order) {
  double v[8];
  int nv = 0;
  for (int s = 0; s < P && nv <= 8; s++) {
    int i = 0;
    if (s > 0 && a[s] == a[s - 1]) continue; /* a group's ranks: alike */
    while (i < nv && v[i] != a[s])
      i++;
    if (i < nv) continue;
    if (nv == 8 || a[s] != a[s]) { /* more kinds, or no order: a sort */
      nv = 9;
      break;
    }
    for (i = nv++; i > 0 && v[i - 1] > a[s]; i--)
      v[i] = v[i - 1];
    v[i] = a[s];
  }
  if (nv > 8) {
    for (int s = 0; s < P; s++)
      order[s] = s;
    lin_a = a;
    qsort(order, (size_t)P, sizeof(int), cmp_by_a);
    return;
  }
  /* by counting: each stage's value (the one before it's where alike),
   * then each value's stages in their order */
  int at[9] = {0}, *which = order + P; /* order's second half */
  for (int s = 0; s < P; s++) {
    int i = 0;
    if (s > 0 && a[s] == a[s - 1]) {
      which[s] = which[s - 1];
    } else {
      while (v[i] != a[s])
        i++;
      which[s] = i;
    }
    at[which[s] + 1]++;
  }
  for (int i = 0; i < nv; i++)
    at[i + 1] += at[i];
  for (int s = 0; s < P; s++)
    order[at[which[s]]++] = s;
}

/* The most layers stage s takes under cap T (0: not even one). */
static int lin_cap(const lin_t *l, int s, double T, int most) {
  double q = l->a[s] > 0 ? floor((T - l->e[s]) / l->a[s]) + 1 : most;
  int c = q < most ? (q > 0 ? (int)q : 0) : most; /* q may be infinite */
  if (c > l->u[s]) c = l->u[s];
  while (c > 0 && l->a[s] * c + l->e[s] > T)
    c--;
  while (c < most && c < l->u[s] && l->a[s] * (c + 1) + l->e[s] <= T)
    c++;
  return c < 0 ? 0 : c;
}

/* Greedy split under cap T: its value, or INFINITY when none fits. */
static double lin_fill(const lin_t *l, int L, int B, double T, int *n) {
  int left = L - l->P, most = L - l->P + 1;
  double sum = 0, mx = 0;
  for (int s = 0; s < l->P; s++) {
    /* the ranks of one group lie side by side: a rank like the one
     * before it (same a, e and memory) takes as many */
    if (s > 0 && l->a[s] == l->a[s - 1] && l->e[s] == l->e[s - 1] &&
        l->u[s] == l->u[s - 1])
      n[s] = n[s - 1];
    else if ((n[s] = lin_cap(l, s, T, most)) < 1)
      return INFINITY;
  }
  for (int i = 0; i < l->P; i++) {
    int s = l->order[i], extra = n[s] - 1 < left ? n[s] - 1 : left;
    n[s] = 1 + extra;
    left -= extra;
  }
  if (left > 0) return INFINITY;
  for (int s = 0; s < l->P; s++) {
    double t = l->a[s] * n[s] + l->e[s];
    sum += t;
    mx = t > mx ? t : mx;
  }
  return sum + (B - 1) * mx;
}

/* The candidate caps in ascending order without sorting them: the values
 * a k + e of each kind of stage (same a and e: the ranks of one group,
 * its first and last apart) rise with k, so the next candidate is the
 * least head of the kinds' sequences, up to the kind's largest cap.  Once
 * a value is taken, each stage of its kind whose cap reaches k holds one
 * layer more under it (lin_cap's count): the caps under which the stages
 * cannot hold the L layers, one at least each, are passed by counting. */
typedef struct {
  int n;
  int *k;        /* the next k of each kind */
  int *start;    /* its stages' caps, ascending, in caps[start..start+len) */
  int *len, *at; /* at: the first of them not under k */
  int *caps, *kind;
  double *a, *e;
  long room;    /* the layers the stages hold under the last cap taken */
  int short_of; /* kinds that hold no layer yet */
} heads_t;

/* 0, or -1 when out of memory (h holds nothing then). */
static int heads_init(heads_t *h, const lin_t *l, int most) {
  int P = l->P;
  memset(h, 0, sizeof *h);
  h->k = strata_malloc(sizeof(int) * 6 * (size_t)P);
  h->a = strata_malloc(sizeof(double) * 2 * (size_t)P);
  if (!h->k || !h->a) {
    strata_free(h->k), strata_free(h->a);
    return -1;
  }
  h->start = h->k + P, h->len = h->start + P, h->at = h->len + P;
  h->caps = h->at + P, h->kind = h->caps + P, h->e = h->a + P;
  for (int s = 0; s < P; s++) {
    int j = 0;
    if (s > 0 && l->a[s] == l->a[s - 1] && l->e[s] == l->e[s - 1]) {
      h->kind[s] = h->kind[s - 1]; /* a group's middle ranks: one kind */
      h->len[h->kind[s]]++;
      continue;
    }
    while (j < h->n && !(h->a[j] == l->a[s] && h->e[j] == l->e[s]))
      j++;
    if (j == h->n) h->a[j] = l->a[s], h->e[j] = l->e[s], h->len[h->n++] = 0;
    h->kind[s] = j;
    h->len[j]++;
  }
  for (int j = 0, at = 0; j < h->n; j++) {
    h->start[j] = h->at[j] = at, h->k[j] = 1;
    at += h->len[j];
    h->len[j] = 0; /* counted again as the caps go in */
  }
  for (int s = 0; s < P; s++) {
    int j = h->kind[s];
    h->caps[h->start[j] + h->len[j]++] = l->u[s] < most ? l->u[s] : most;
  }
  for (int j = 0; j < h->n; j++) { /* a kind's ranks are few: by insertion */
    int *c = h->caps + h->start[j];
    for (int i = 1; i < h->len[j]; i++)
      for (int x = c[i], k = i; k > 0 && c[k - 1] > x; k--)
        c[k] = c[k - 1], c[k - 1] = x;
  }
  h->short_of = h->n;
  return 0;
}

static void heads_free(heads_t *h) {
  strata_free(h->k);
  strata_free(h->a);
}

/* The least value left (INFINITY when none is), its kind in arg. */
static double heads_peek(const heads_t *h, int *arg) {
  double v = INFINITY;
  *arg = -1;
  for (int j = 0; j < h->n; j++) {
    if (h->k[j] > h->caps[h->start[j] + h->len[j] - 1]) continue;
    double x = h->a[j] * h->k[j] + h->e[j];
    if (x < v) v = x, *arg = j;
  }
  return v;
}

/* The next distinct cap, every value equal to it taken (INFINITY when
 * none is left). */
static double heads_next(heads_t *h) {
  int j;
  double c = heads_peek(h, &j);
  while (j >= 0 && heads_peek(h, &j) == c) {
    int end = h->start[j] + h->len[j];
    while (h->caps[h->at[j]] < h->k[j])
      h->at[j]++; /* its stages that hold no more */
    h->room += end - h->at[j];
    if (h->k[j]++ == 1) h->short_of--;
  }
  return c;
}

double st__split_linear(int L, int P, int B, const double *a, const double *e,
                        const int *u, int *n_out) {
  lin_t l = {P, a, e, u, NULL};
  double best = INFINITY;
  int *n = NULL, most = L - P + 1;
  heads_t h;
  if (P < 1 || P > L) return INFINITY;
  l.order = strata_malloc(sizeof(int) * 2 * (size_t)P); /* order_by_a's */
  n = strata_malloc(sizeof(int) * (size_t)P);
  if (!l.order || !n) goto out;
  order_by_a(a, P, l.order);
  if (heads_init(&h, &l, most)) goto out;
  /* the least sum with no cap bounds every value from below */
  double floor_sum = lin_fill(&l, L, 1, INFINITY, n);
  for (double c = heads_next(&h); isfinite(c) && isfinite(floor_sum);
       c = heads_next(&h)) {
    if (h.short_of || h.room < L) continue; /* no split under c */
    if (floor_sum + (B - 1) * c >= best) break;
    double v = lin_fill(&l, L, B, c, n);
    if (v < best) {
      best = v;
      memcpy(n_out, n, sizeof(int) * (size_t)P);
    }
  }
  heads_free(&h);
out:
  strata_free(l.order);
  strata_free(n);
  return best;
}

/* ---- stages of layers that differ: prefix sums ----
 *
 * Stage s on layers [k, k + n) costs e[s] + pre[s][k + n] - pre[s][k]
 * (pre: the prefix sums of the layers' times on the stage's GPUs) and may
 * hold at most cap[s * L + k] layers from k.  For a bound T on every
 * stage, the least sum is a DP over (stage, first layer); the optimum of
 * sum + (B - 1) x the largest is the least, over the stage costs T at or
 * above the least feasible bound, of that sum + (B - 1) T (the optimal
 * split is feasible at T = its own largest stage), and no T whose
 * floor + (B - 1) T reaches the best can improve it. */

typedef struct {
  int L, P;
  const double *const *pre;
  const double *e;
  const int *cap;
  double *g; /* [(P + 1) * (L + 1)] */
  int *par;  /* the layers of the stage that ends there */
} pdp_t;

static double pdp_cost(const pdp_t *d, int s, int k, int n) {
  return d->e[s] + d->pre[s][k + n] - d->pre[s][k];
}

static int pdp_most(const pdp_t *d, int s, int k) {
  int most = d->L - k - (d->P - s - 1), c = d->cap[(size_t)s * d->L + k];
  return c < most ? c : most;
}

/* The least sum with every stage at most T (INFINITY: none), its split in
 * n (when n is not NULL); with bottleneck set, the least largest stage
 * instead (T unused). */
static double pdp_run(pdp_t *d, double T, int bottleneck, int *n) {
  int L = d->L, P = d->P;
  size_t W = (size_t)L + 1;
  for (size_t i = 0; i < (size_t)(P + 1) * W; i++)
    d->g[i] = INFINITY;
  d->g[0] = 0;
  for (int s = 0; s < P; s++)
    for (int k = s; k <= L - (P - s); k++) {
      double base = d->g[(size_t)s * W + k];
      if (!isfinite(base)) continue;
      for (int m = 1, most = pdp_most(d, s, k); m <= most; m++) {
        double c = pdp_cost(d, s, k, m), v;
        if (bottleneck) {
          v = c > base ? c : base;
        } else {
          if (c > T) break; /* costs grow with the layers */
          v = base + c;
        }
        size_t at = (size_t)(s + 1) * W + (size_t)(k + m);
        if (v < d->g[at]) d->g[at] = v, d->par[at] = m;
      }
    }
  double r = d->g[(size_t)P * W + L];
  if (isfinite(r) && n)
    for (int s = P, k = L; s > 0; s--) {
      n[s - 1] = d->par[(size_t)s * W + k];
      k -= n[s - 1];
    }
  return r;
}

double st__split_prefix(int L, int P, int B, const double *const *pre,
                        const double *e, const int *cap, int *n_out) {
  pdp_t d = {L, P, pre, e, cap, NULL, NULL};
  double best = INFINITY, *cand = NULL;
  int *n = NULL;
  size_t nc = 0, W = (size_t)L + 1;
  if (P < 1 || P > L) return INFINITY;
  d.g = strata_malloc(sizeof(double) * (size_t)(P + 1) * W);
  d.par = strata_malloc(sizeof(int) * (size_t)(P + 1) * W);
  n = strata_malloc(sizeof(int) * (size_t)P);
  if (!d.g || !d.par || !n) goto out;
  /* the least sum with no bound: the answer alone when B is 1 */
  double floor_sum = pdp_run(&d, INFINITY, 0, n_out);
  double tmin = pdp_run(&d, 0, 1, NULL);
  if (!isfinite(floor_sum) || !isfinite(tmin)) goto out;
  if (B <= 1) {
    best = floor_sum;
    goto out;
  }
  best = pdp_run(&d, tmin, 0, n_out) + (B - 1) * tmin;
  /* the stage costs in (tmin, hi): the only bounds that can do better */
  double hi = (best - floor_sum) / (B - 1);
  for (int pass = 0; pass < 2; pass++) {
    for (int s = 0; s < P; s++)
      for (int k = s; k <= L - (P - s); k++)
        for (int m = 1, most = pdp_most(&d, s, k); m <= most; m++) {
          double c = pdp_cost(&d, s, k, m);
          if (c >= hi) break;
          if (c <= tmin) continue;
          if (pass) cand[nc] = c;
          nc++;
        }
    if (pass) break;
    cand = strata_malloc(sizeof(double) * (nc ? nc : 1));
    if (!cand) {
      best = INFINITY;
      goto out;
    }
    nc = 0;
  }
  qsort(cand, nc, sizeof(double), cmp_double);
  for (size_t i = 0; i < nc; i++) {
    if (i > 0 && cand[i] == cand[i - 1]) continue;
    if (floor_sum + (B - 1) * cand[i] >= best) break;
    double v = pdp_run(&d, cand[i], 0, n) + (B - 1) * cand[i];
    if (v < best) {
      best = v;
      memcpy(n_out, n, sizeof(int) * (size_t)P);
    }
  }
out:
  strata_free(d.g);
  strata_free(d.par);
  strata_free(n);
  strata_free(cand);
  return best;
}

/* ---- a floor under every split of a mixed cluster's stages ---- */

/* The least sum of cost over units placed in the buckets (cost per unit
 * c[i], at most cap[i] units each), cheapest first; INFINITY when they
 * hold less than R (less its rounding: the caps may sum to R exactly). */
static double fill_cheapest(int n, const double *c, const double *cap,
                            double R) {
  int used[ST__MAX_PP + 1]; /* only the n in use cleared: it runs often */
  double sum = 0, slack = R * 1e-12; /* the caps' sum rounded, as room's */
  for (int i = 0; i < n; i++)
    used[i] = 0;
  while (R > 0) {
    int k = -1;
    for (int i = 0; i < n; i++)
      if (!used[i] && cap[i] > 0 && (k < 0 || c[i] < c[k])) k = i;
    if (k < 0) return R <= slack ? sum : INFINITY;
    double take = cap[k] < R ? cap[k] : R;
    sum += take * c[k];
    R -= take;
    used[k] = 1;
  }
  return sum;
}

/* A stage's most work under a time cap T: its memory's hi, and what its
 * time a x + e leaves (whole layers when integral). */
static double work_under(double a, double e, double hi, double T,
                         int integral) {
  double x = (T - e) / a;
  if (integral) x = floor(x * (1 + 1e-12) + 1e-9); /* rounding keeps x */
  return x < hi ? x : hi;
}

int st__split_floor(int P, double W, double m, const double *a, const double *e,
                    const double *lo, const double *hi, int integral,
                    double C) {
  double h[ST__MAX_PP], after[ST__MAX_PP + 1], base = 0, need = W, room = 0;
  double bc[ST__MAX_PP + 1], bcap[ST__MAX_PP + 1];
  int nb = 0;
  if (P < 1 || P > ST__MAX_PP || !(m >= 1) || !isfinite(m) || !isfinite(C))
    return 1;
  for (int s = 0; s < P; s++) {
    if (!(a[s] > 0) || !isfinite(a[s])) return 1; /* nothing to bound by */
    if (s > 0 && a[s] == a[s - 1] && e[s] == e[s - 1] && hi[s] == hi[s - 1])
      h[s] = h[s - 1]; /* a rank like the one before */
    else
      h[s] = work_under(a[s], e[s], hi[s], C / m, integral);
    if (h[s] < lo[s]) return 0; /* its least work takes C / m already */
    need -= lo[s];
    room += h[s] - lo[s];
  }
  if (need > room * (1 + 1e-12)) return 0; /* no room for the work */
  after[P] = 0;
  for (int s = P - 1; s >= 0; s--)
    after[s] = after[s + 1] + (h[s] - lo[s]);
  for (int r = 0; r < P; r++) {
    /* rank r's fill, work and drain: the stages before it once each, its
     * own m times, those after it free up to their caps.  Along ranks
     * alike (same a, e, lo and cap) it only grows (the next adds its
     * e + a lo, and a demand of h - lo met with as much more room at a
     * costs no less), so the last of them stands for them all. */
    int alike = r + 1 < P && a[r + 1] == a[r] && e[r + 1] == e[r] &&
                lo[r + 1] == lo[r] && h[r + 1] == h[r];
    double own = m * (e[r] + a[r] * lo[r]), R = need - after[r + 1];
    bc[nb] = m * a[r], bcap[nb] = h[r] - lo[r];
    double v =
        alike ? 0
              : base + own + (R > 0 ? fill_cheapest(nb + 1, bc, bcap, R) : 0);
    if (v > C * (1 + 1e-9)) return 0;
    /* stage r joins those before the next rank: its bucket by cost */
    int i = 0;
    while (i < nb && bc[i] != a[r])
      i++;
    if (i == nb) bc[nb] = a[r], bcap[nb++] = 0;
    bcap[i] += h[r] - lo[r];
    base += e[r] + a[r] * lo[r];
  }
  return 1;
}
