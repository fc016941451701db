/*
 * space.c - the search over configurations: the best distinct ones that
 * fit, by branch and bound on a lower bound no schedule can beat.
 *
 * The space (docs/cost-model.md, "The search space"): every family
 * (tensor-parallel size within a node, micro-batch, sequence parallelism,
 * recompute), every pipeline degree, every data parallelism that fits the
 * cluster and divides the global batch into micro-batches, interleaving
 * (virtual stages) where Megatron-LM allows it, and every layer split
 * Megatron-LM accepts: equal stages, or a first and a last stage of their
 * own sizes with equal middle stages (with interleaving, every rank's
 * layers a multiple of its virtual stages).  Free mode splits the layers
 * to balance the stages instead.
 *
 * Every configuration's step is at least its lower bound (eval.c): the
 * busiest rank's work plus the fill and drain before and after it, plus
 * the synchronisation and optimizer step, which are exact.  Groups of
 * configurations (a family, pp, dp, virtual stages) are visited in order
 * of a bound that holds for all their splits; a group whose bound reaches
 * the K-th best step found so far ends the search.  Inside a group the
 * first and last stages' sizes are scanned outward from where they
 * balance, and stop where the busier of the two alone reaches that step
 * (it only grows further out).  A configuration is costed exactly only
 * when its own bound is below the K-th best; so what is returned is the
 * exact best K of the whole space (tests/test_pipeline.c checks it
 * against enumeration).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/search.h"

typedef struct {
  st__cfg_t cf;
  st__cost_t cost;
  int split[ST__MAX_PP];
} slot_t;

typedef struct {
  st__search_t *S;
  int K, n;
  slot_t *slot; /* ascending by step */
  st__cfg_t lowest;
  st__cost_t lowest_cost;
  int have_lowest;
  int stopped;     /* the time limit was reached */
  int mem_prune;   /* skip the splits whose end or middle ranks cannot fit */
  int lowest_only; /* nothing fits: only the least memory is sought */
  int fit_end[2];  /* the group's most layers that fit on its first and
                      last rank (-1: not found yet) */
  int **splits;    /* free mode: the balanced split per (family, pp) */
  double *ell;     /* per family: its least layer's work (0: not taken) */
  int least[ST__MAX_PP]; /* the least chunks of the generated layouts */
  /* --pareto: the configurations no other found dominates, and the axes */
  slot_t *front;
  int n_front, cap_front, pareto;
  /* STRATA_PARETO_STEP_GPUS: the GPUs of the group visited and the least
   * step of the front on at most as many, which it must beat to join */
  double cur_gpus, gcut;
} top_t;

/* A group: a family, pp, dp and virtual stages (all their splits); kept
 * small, as a large cluster has hundreds of thousands of them. */
typedef struct {
  double lb;
  int fam, p, dp, v, b, m;
} group_t;

static double kth(const top_t *T) {
  return T->n < T->K ? INFINITY : T->slot[T->n - 1].cost.step;
}

/* The step at which the bounds prune: the K-th best's, or with --pareto
 * none (a slower configuration may need less memory); there a
 * configuration is dropped only when one found dominates it (visit). */
static double cut(const top_t *T) {
  if (T->pareto == STRATA_PARETO_STEP_GPUS) return T->gcut;
  return T->pareto ? INFINITY : kth(T);
}

/* One family but for the experts' all-to-all overlap: the same
 * configuration to the list of the best distinct ones. */
static int same_family(const st__family_t *x, const st__family_t *y) {
  return x == y ||
         (x->graph == y->graph && x->tp == y->tp && x->cp == y->cp &&
          x->ep == y->ep && x->etp == y->etp && x->nodes == y->nodes &&
          x->gpn == y->gpn && x->sp == y->sp && x->zero == y->zero &&
          x->fp8 == y->fp8 && x->rc == y->rc && x->ep_outer == y->ep_outer &&
          x->ep_axes == y->ep_axes);
}

static int same_tuple(const st__cfg_t *a, const st__cfg_t *b) {
  return same_family(a->f, b->f) && a->p == b->p && a->dp == b->dp &&
         a->v == b->v;
}

/* a before b: less step, then less memory, then the smaller degrees (so
 * that ties do not depend on the order of the search) */
static int before(const st__cost_t *ca, const st__cfg_t *a,
                  const st__cost_t *cb, const st__cfg_t *b) {
  if (ca->step != cb->step) return ca->step < cb->step;
  if (ca->peak != cb->peak) return ca->peak < cb->peak;
  const int x[] = {a->p,    a->dp,     a->v, a->first,
                   a->last, a->f->tcp, a->b, a->acct};
  const int y[] = {b->p,    b->dp,     b->v, b->first,
                   b->last, b->f->tcp, b->b, b->acct};
  for (int i = 0; i < 8; i++)
    if (x[i] != y[i]) return x[i] < y[i];
  return 0;
}

static void put(slot_t *s, const st__cfg_t *cf, const st__cost_t *c) {
  s->cf = *cf;
  s->cost = *c;
  if (cf->split) {
    memcpy(s->split, cf->split, sizeof(int) * (size_t)st__split_len(cf));
    s->cf.split = s->split;
  }
}

static void sort_slots(top_t *T) {
  for (int i = 1; i < T->n; i++)
    for (int j = i; j > 0 && before(&T->slot[j].cost, &T->slot[j].cf,
                                    &T->slot[j - 1].cost, &T->slot[j - 1].cf);
         j--) {
      slot_t tmp = T->slot[j];
      T->slot[j] = T->slot[j - 1];
      T->slot[j - 1] = tmp;
      if (T->slot[j].cf.split) T->slot[j].cf.split = T->slot[j].split;
      if (T->slot[j - 1].cf.split)
        T->slot[j - 1].cf.split = T->slot[j - 1].split;
    }
}

static void offer(top_t *T, const st__cfg_t *cf, const st__cost_t *c) {
  for (int i = 0; i < T->n; i++)
    if (same_tuple(&T->slot[i].cf, cf)) {
      if (before(c, cf, &T->slot[i].cost, &T->slot[i].cf)) {
        put(&T->slot[i], cf, c);
        sort_slots(T);
      }
      return;
    }
  if (T->n < T->K) {
    put(&T->slot[T->n++], cf, c);
  } else if (before(c, cf, &T->slot[T->n - 1].cost, &T->slot[T->n - 1].cf)) {
    put(&T->slot[T->n - 1], cf, c);
  } else {
    return;
  }
  sort_slots(T);
}

/* -1: interrupted; 1: the time limit is reached.  The search stops at
 * the deadline (90 % of the limit) with a configuration; with none yet it
 * goes on to the limit itself, then stops too (the caller says that
 * nothing fits within it). */
static int stop_now(top_t *T) {
  const st__search_t *S = T->S;
  if (S->o->cancel && *S->o->cancel) return -1;
  if (T->stopped) return 1;
  double end = S->deadline + (T->n > 0 ? 0 : S->o->time_limit / 9);
  if (S->deadline > 0 && strata_now() > end) {
    T->stopped = 1;
    return 1;
  }
  return 0;
}

/* The least bound of groups [from, n) (those past the sorted part are
 * not in order). */
static double least_left(const group_t *g, int from, int n) {
  double lb = INFINITY;
  for (int i = from; i < n; i++)
    if (g[i].lb < lb) lb = g[i].lb;
  return lb;
}

/* Progress: the groups are visited in order of their bound, so none left
 * beats the bound of the one just visited. */
static void note(const top_t *T, long done, long total, double lb) {
  double best = T->n ? T->slot[0].cost.step : INFINITY;
  st__progress_note(T->S->prog, "search", done, total, best,
                    lb < best ? lb : best);
}

/* ---- the Pareto front (--pareto) ---- */

/* The GPUs a configuration uses. */
static double gpus_of(const st__cfg_t *cf) {
  return (double)cf->f->tcp * cf->p * cf->dp;
}

/* The GPUs the front compares: STRATA_PARETO_STEP_GPUS counts whole
 * nodes' (a count of nodes is what its user asks of it), the others the
 * GPUs used. */
static double front_gpus(const top_t *T, const st__cfg_t *cf) {
  int G = T->S->G > 0 ? T->S->G : 1;
  if (T->pareto != STRATA_PARETO_STEP_GPUS) return gpus_of(cf);
  return ceil(gpus_of(cf) / G) * G;
}

/* x is at least as good as (step, peak, gpus) on every axis of the front. */
static int covers(const top_t *T, const slot_t *x, double step, double peak,
                  double gpus) {
  if (T->pareto == STRATA_PARETO_STEP_GPUS)
    return x->cost.step <= step && front_gpus(T, &x->cf) <= gpus;
  return x->cost.step <= step && x->cost.peak <= peak &&
         (T->pareto < STRATA_PARETO_GPUS || front_gpus(T, &x->cf) <= gpus);
}

/* Whether a configuration of step at least `step` (its bound) and this
 * memory may join the front: no configuration found covers it (the exact
 * step is at least the bound, so one that covers the bound covers it). */
static int front_open(const top_t *T, const st__cfg_t *cf,
                      const st__cost_t *c) {
  for (int i = 0; i < T->n_front; i++)
    if (covers(T, &T->front[i], c->step, c->peak, front_gpus(T, cf))) return 0;
  return 1;
}

/* Add a configuration costed exactly: dropped when one found covers it
 * (of two equal on every axis the one before in the order stays), else
 * in, and out go those it dominates. */
static int front_offer(top_t *T, const st__cfg_t *cf, const st__cost_t *c) {
  double g = front_gpus(T, cf);
  for (int i = 0; i < T->n_front; i++) {
    slot_t *x = &T->front[i];
    if (!covers(T, x, c->step, c->peak, g)) continue;
    int same =
        x->cost.step == c->step &&
        (x->cost.peak == c->peak || T->pareto == STRATA_PARETO_STEP_GPUS) &&
        (T->pareto < STRATA_PARETO_GPUS || front_gpus(T, &x->cf) == g);
    if (same && before(c, cf, &x->cost, &x->cf)) put(x, cf, c);
    return 0;
  }
  int k = 0;
  for (int i = 0; i < T->n_front; i++) {
    slot_t *x = &T->front[i];
    if (x->cost.step >= c->step &&
        (x->cost.peak >= c->peak || T->pareto == STRATA_PARETO_STEP_GPUS) &&
        (T->pareto < STRATA_PARETO_GPUS || front_gpus(T, &x->cf) >= g))
      continue;
    if (k != i) {
      T->front[k] = *x;
      if (x->cf.split) T->front[k].cf.split = T->front[k].split;
    }
    k++;
  }
  T->n_front = k;
  if (T->n_front == T->cap_front) {
    int cap = T->cap_front ? 2 * T->cap_front : 16;
    slot_t *v = strata_realloc(T->front, sizeof *v * (size_t)cap);
    if (!v) return strata_error(STRATA_ENOMEM, "out of memory");
    for (int i = 0; i < T->n_front; i++)
      if (v[i].cf.split) v[i].cf.split = v[i].split;
    T->front = v;
    T->cap_front = cap;
  }
  put(&T->front[T->n_front++], cf, c);
  if (g <= T->cur_gpus && c->step < T->gcut) T->gcut = c->step;
  return 0;
}

/* STRATA_PARETO_STEP_GPUS: the step a configuration of group x must beat
 * to join the front, the least of those found on at most its GPUs (one
 * no faster on as many or more is covered); the other modes' cut. */
static double group_cut(top_t *T, const st__search_t *S, const group_t *x) {
  if (T->pareto != STRATA_PARETO_STEP_GPUS) return cut(T);
  int G = S->G > 0 ? S->G : 1;
  T->cur_gpus = ceil((double)S->fam[x->fam].tcp * x->p * x->dp / G) * G;
  T->gcut = INFINITY;
  for (int i = 0; i < T->n_front; i++)
    if (front_gpus(T, &T->front[i].cf) <= T->cur_gpus &&
        T->front[i].cost.step < T->gcut)
      T->gcut = T->front[i].cost.step;
  return T->gcut;
}

/* The front, fastest first (by the order of before()), into S->front: at
 * most STRATA_PARETO_MAX of them. */
static const top_t *front_T;
static int cmp_front(const void *a, const void *b) {
  const slot_t *x = &front_T->front[*(const int *)a];
  const slot_t *y = &front_T->front[*(const int *)b];
  return before(&x->cost, &x->cf, &y->cost, &y->cf)   ? -1
         : before(&y->cost, &y->cf, &x->cost, &x->cf) ? 1
                                                      : 0;
}

static int front_keep(top_t *T) {
  st__search_t *S = T->S;
  int n = T->n_front < STRATA_PARETO_MAX ? T->n_front : STRATA_PARETO_MAX;
  if (T->n_front == 0) return 0;
  int *ix = strata_malloc(sizeof *ix * (size_t)T->n_front);
  S->front = strata_calloc((size_t)n, sizeof *S->front);
  S->front_cost = strata_calloc((size_t)n, sizeof *S->front_cost);
  int rc = ix && S->front && S->front_cost
               ? 0
               : strata_error(STRATA_ENOMEM, "out of memory");
  for (int i = 0; !rc && i < T->n_front; i++)
    ix[i] = i;
  front_T = T;
  if (!rc) qsort(ix, (size_t)T->n_front, sizeof *ix, cmp_front);
  for (int i = 0; !rc && i < n; i++) {
    const slot_t *x = &T->front[ix[i]];
    S->front[i] = x->cf;
    S->front_cost[i] = x->cost;
    S->front[i].split = NULL;
    S->n_front = i + 1;
    if (!x->cf.split) continue;
    size_t len = (size_t)st__split_len(&x->cf);
    int *keep = strata_malloc(sizeof(int) * len);
    if (!keep) rc = strata_error(STRATA_ENOMEM, "out of memory");
    if (keep) memcpy(keep, x->split, sizeof(int) * len);
    S->front[i].split = keep;
  }
  strata_free(ix);
  return rc;
}

/* A configuration that does not fit without offloads, with the least
 * that make it fit (--search-offload): offloads only add to the step, so
 * the bound it had without them holds for it (visit checked it). */
static int visit_offloaded(top_t *T, const st__cfg_t *cf) {
  st__cfg_t oc;
  st__cost_t c;
  int found = 0;
  int rc = st__offload_fit(T->S, cf, &oc, &c, &found);
  if (!rc && found && c.step < kth(T)) offer(T, &oc, &c);
  return rc;
}

/* The step a configuration must beat to change the best K: the K-th's,
 * or (when one of its tuple is among them, which it could only replace)
 * that one's if less; INFINITY with --pareto, where a slower one may
 * join the front.  Strictly: one as fast with less memory replaces it. */
static double tuple_cut(const top_t *T, const st__cfg_t *cf) {
  double c = cut(T);
  for (int i = 0; i < T->n && !T->pareto; i++)
    if (same_tuple(&T->slot[i].cf, cf) && T->slot[i].cost.step < c)
      c = T->slot[i].cost.step;
  return c;
}

/* Cost one configuration: its bound and memory, then exactly if it can
 * enter the best K or the front. */
static int visit(top_t *T, const st__cfg_t *cf) {
  st__search_t *S = T->S;
  st__cost_t c;
  int rc = st__cfg_cost_cut(S, cf, 0, cut(T), &c);
  if (rc || !isfinite(c.step) || c.fits < 0) return rc;
  if (!T->have_lowest || c.peak < T->lowest_cost.peak) {
    T->lowest = *cf;
    T->lowest.split = NULL;
    T->lowest.chunked = 0;
    T->lowest_cost = c;
    T->have_lowest = !cf->split;
  }
  if (!c.fits && !S->o->no_memory_check)
    return S->o->search_offload && c.step < kth(T) ? visit_offloaded(T, cf) : 0;
  int to_front = T->pareto && c.fits && front_open(T, cf, &c);
  if ((c.step >= kth(T) || c.step > tuple_cut(T, cf)) && !to_front) return 0;
  /* exactly, but only as far as it may still beat the step to beat */
  /* (a front of step and GPUs: none at or past its cut may join it) */
  double to_beat = T->pareto == STRATA_PARETO_STEP_GPUS ? cut(T)
                   : to_front                           ? INFINITY
                                                        : tuple_cut(T, cf);
  rc = st__cfg_cost_cut(S, cf, 1, to_beat, &c);
  if (!rc && isfinite(c.step)) offer(T, cf, &c);
  if (!rc && isfinite(c.step) && to_front && c.fits)
    rc = front_offer(T, cf, &c);
  return rc;
}

/* ---- work of stage shapes, for the scans ---- */

/* Work of layers [k, k + n): of a chunk that starts at k (chunk), else at
 * least (block recompute's full family: its sibling's, which recomputes
 * none of them). */
static double work_range(const st__search_t *S, const st__family_t *f, int k,
                         int n, int chunk) {
  st__part_t x;
  memset(&x, 0, sizeof x);
  if (chunk)
    st__chunk_add(S, f, k, n, &x);
  else
    st__layers_add(S, f->sib >= 0 ? &S->fam[f->sib] : f, k, n, &x);
  return x.fwd + x.bwd;
}

static double part_work(const st__part_t *x) {
  return x->fwd + x->bwd;
}

/* The layer where chunk c of the first (last) rank holding n layers
 * starts: with v virtual stages each rank holds n / v layers of each of
 * the v rounds of L / v layers, the first rank at a round's start, the
 * last at its end (without interleaving, one round). */
static int end_chunk_start(const st__search_t *S, const st__cfg_t *cf,
                           int last_rank, int c, int n) {
  int v = cf->v > 1 ? cf->v : 1, round = S->L / v;
  return last_rank ? (c + 1) * round - n / v : c * round;
}

/* m x the work of the first rank of `first` layers / the last of `last`:
 * lower bounds of the step, monotone in their sizes. */
static double end_lb(const st__search_t *S, const st__cfg_t *cf, int last_rank,
                     int n) {
  int v = cf->v > 1 ? cf->v : 1;
  double w = part_work(last_rank ? &cf->f->epi : &cf->f->pro);
  for (int c = 0; c < v; c++)
    w +=
        work_range(S, cf->f, end_chunk_start(S, cf, last_rank, c, n), n / v, 1);
  return cf->m * w;
}

static double first_lb(const st__search_t *S, const st__cfg_t *cf, int first) {
  return end_lb(S, cf, 0, first);
}

static double last_lb(const st__search_t *S, const st__cfg_t *cf, int last) {
  return end_lb(S, cf, 1, last);
}

/* The most layers (a multiple of v, at most `most`) rank r (0 or the
 * last) can hold and fit: its memory grows with them (0 when v do not
 * fit). */
static int most_that_fit(top_t *T, const st__cfg_t *cf, int r, int most) {
  st__search_t *S = T->S;
  int v = cf->v > 1 ? cf->v : 1, lo = 0, hi = most / v;
  while (lo < hi) {
    int u = lo + (hi - lo + 1) / 2, n = u * v;
    int k = end_chunk_start(S, cf, r != 0, 0, n);
    if (st__rank_peak(S, cf, r, k, n) <= S->budget)
      lo = u;
    else
      hi = u - 1;
  }
  return lo * v;
}

/* The peak of the first (r = 0) or last rank holding n layers. */
static double end_peak(top_t *T, const st__cfg_t *cf, int r, int n) {
  return st__rank_peak(T->S, cf, r, end_chunk_start(T->S, cf, r != 0, 0, n), n);
}

/* Nothing fits (the second pass): of the splits with these middle ranks,
 * the one of least memory.  The first rank's peak grows with its layers
 * and the last's with theirs, and the middle ranks' do not depend on how
 * the rest divides between the two (one kind of layer; else nearly): it
 * is where the two ends balance, found by bisection, O(log L) peaks in
 * place of the O(L) splits. */
static int least_memory_firsts(top_t *T, st__cfg_t *cf, int rest) {
  int v = cf->v > 1 ? cf->v : 1, U = rest / v, lo = 1, hi = U - 1, rc = 0;
  if (U < 2) return 0;
  while (lo < hi) { /* least first whose rank holds the more memory */
    int mid = lo + (hi - lo) / 2;
    if (end_peak(T, cf, 0, mid * v) >=
        end_peak(T, cf, cf->p - 1, rest - mid * v))
      hi = mid;
    else
      lo = mid + 1;
  }
  for (int u = lo; u >= lo - 1 && u >= 1 && !rc; u--) {
    cf->first = u * v;
    cf->last = rest - u * v;
    rc = visit(T, cf);
  }
  return rc;
}

/* most_that_fit of the group's first (e = 0) or last rank, up to `most`:
 * what fits there depends on the group alone (not on the middle ranks),
 * so it is found once per group and clamped. */
static int end_fit(top_t *T, const st__cfg_t *cf, int e, int most) {
  int v = cf->v > 1 ? cf->v : 1;
  if (T->fit_end[e] < 0)
    T->fit_end[e] = most_that_fit(T, cf, e ? cf->p - 1 : 0, T->S->L);
  return T->fit_end[e] < most / v * v ? T->fit_end[e] : most / v * v;
}

/* A floor of the peak of any split of `rest` layers between the first
 * and the last rank: one of them holds at least half (rounded up to v);
 * it grows with rest. */
static double ends_floor(top_t *T, const st__cfg_t *cf, int rest) {
  int v = cf->v > 1 ? cf->v : 1, n = (rest / v + 1) / 2 * v;
  double a = end_peak(T, cf, 0, n), b = end_peak(T, cf, cf->p - 1, n);
  return a < b ? a : b;
}

/* Scan `first` (in steps of v) outward from where the first and last
 * ranks balance (rest = first + last), while the busier of them is below
 * the K-th, and within the sizes whose first and last ranks fit. */
static int scan_firsts(top_t *T, st__cfg_t *cf, int rest) {
  const st__search_t *S = T->S;
  int v = cf->v > 1 ? cf->v : 1, U = rest / v; /* first = u v, u in [1, U) */
  int lo = 1, hi = U - 1, rc = 0, fa = 1, fb = U - 1;
  if (T->lowest_only) return least_memory_firsts(T, cf, rest);
  if (T->mem_prune) {
    fb = end_fit(T, cf, 0, rest - v) / v;
    int lmax = end_fit(T, cf, 1, rest - v) / v;
    if (U - lmax > fa) fa = U - lmax;
    if (fa > fb) return 0;
  }
  while (lo < hi) { /* least first where the first rank is the busier */
    int mid = lo + (hi - lo) / 2;
    if (first_lb(S, cf, mid * v) >= last_lb(S, cf, rest - mid * v))
      hi = mid;
    else
      lo = mid + 1;
  }
  for (int dir = 0; dir < 2 && !rc && !T->stopped; dir++)
    for (int u = dir ? (lo - 1 < fb ? lo - 1 : fb) : (lo > fa ? lo : fa);
         u >= fa && u <= fb && !rc && !T->stopped; u += dir ? -1 : 1) {
      int first = u * v;
      double a = first_lb(S, cf, first), b = last_lb(S, cf, rest - first);
      if ((a > b ? a : b) >= cut(T)) break;
      cf->first = first;
      cf->last = rest - first;
      rc = visit(T, cf);
      if (!rc) rc = stop_now(T) < 0 ? STRATA_ECANCELED : 0;
    }
  return rc;
}

/* The split DeepSpeed's PipelineModule gives with the partition method
 * asked (ds_partition.c; a hand split given is it, or the rulebook
 * refused it): the one split of the group, none where the method puts a
 * stage without a layer. */
static int visit_ds_partition(top_t *T, st__cfg_t cf) {
  st__search_t *S = T->S;
  int g = cf.f->graph;
  unsigned specs =
      (S->tied[g] ? ST__DS_TIED : 0) | (S->rules.experts > 0 ? ST__DS_MOE : 0);
  int K = st__ds_partition(S->graphs[g], S->L, specs, S->o->ds_partition, cf.p,
                           S->ds_n);
  if (K == -2) return strata_error(STRATA_ENOMEM, "out of memory");
  if (K < 0) return 0;
  cf.first = cf.last = 0;
  cf.split = S->ds_n;
  return visit(T, &cf);
}

/* Every split of a group Megatron-LM allows, pruned as above: a first
 * and a last rank of their own sizes and equal middle ranks, each a
 * multiple of the virtual stages (megatron/core/transformer/
 * transformer_config.py). */
static int visit_splits(top_t *T, st__cfg_t cf) {
  const st__search_t *S = T->S;
  int L = S->L, p = cf.p, v = cf.v > 1 ? cf.v : 1;
  T->fit_end[0] = T->fit_end[1] = -1;
  if (p == 1) {
    cf.first = cf.last = 0;
    return visit(T, &cf);
  }
  if (S->o->framework == STRATA_FRAMEWORK_DEEPSPEED && S->o->ds_partition > 0)
    return visit_ds_partition(T, cf);
  if (S->o->framework == STRATA_FRAMEWORK_DEEPSPEED && !S->o->first_layers &&
      !S->o->last_layers) {
    /* DeepSpeed's PipelineModule balances the count of transformer layers
     * (Megatron-DeepSpeed's partition_method 'type:transformer'): the
     * plan's split is the one it gives for certain, the even one */
    strata_rules_config_t c = S->rules; /* the rulebook's ds-even-split */
    c.pp = p, c.layers = L, c.first_layers = c.last_layers = 0;
    if (strata_rules_check(&c, ST__AT_SPLIT, NULL)) return 0;
    cf.first = cf.last = L / p;
    return visit(T, &cf);
  }
  if (S->o->first_layers || S->o->last_layers) {
    /* Megatron-LM: a rank not given shares the rest with the middle */
    int first = S->o->first_layers, last = S->o->last_layers;
    if (!first) {
      if ((L - last) % (p - 1)) return 0;
      first = (L - last) / (p - 1);
    } else if (!last) {
      if ((L - first) % (p - 1)) return 0;
      last = (L - first) / (p - 1);
    }
    cf.first = first;
    cf.last = last;
    return visit(T, &cf);
  }
  /* every rank a multiple of v: the model too (the groups of other v
   * are there for the accounted splits and the layouts) */
  if (L % v) return 0;
  if (p == 2) return scan_firsts(T, &cf, L);
  /* middle ranks of `mid` layers each: from the largest down; the middle
   * rank alone bounds the step from below as mid grows, the first and
   * last (at least half their sum) as it shrinks */
  double lmin = INFINITY;
  const strata_graph_t *g = S->graphs[cf.f->graph];
  for (int b = 0; b < g->n_blocks; b++)
    if (part_work(&cf.f->layer[b]) < lmin) lmin = part_work(&cf.f->layer[b]);
  int rc = 0;
  /* with one kind of layer the middle ranks' memory depends on mid
   * alone, the most on rank 1 (the most micro-batches in flight) */
  int uniform = T->mem_prune && g->n_blocks == 1;
  /* an end rank that cannot hold v layers: no split of the group fits */
  if (T->mem_prune && (end_fit(T, &cf, 0, L) < v || end_fit(T, &cf, 1, L) < v))
    return 0;
  for (int mid = (L - 2 * v) / (p - 2) / v * v; mid >= v && !rc; mid -= v) {
    int st = stop_now(T);
    if (st) return st < 0 ? STRATA_ECANCELED : 0;
    int rest = L - mid * (p - 2);
    double ends =
        cf.m * (part_work(&cf.f->pro) + part_work(&cf.f->epi) + rest * lmin) /
        2;
    if (ends >= cut(T)) break;
    if (cf.m * mid * lmin >= cut(T)) continue;
    if (uniform && st__rank_peak(T->S, &cf, 1, 1, mid) > S->budget) continue;
    if (T->lowest_only && T->have_lowest) { /* only less memory matters */
      double least = T->lowest_cost.peak;
      if (ends_floor(T, &cf, rest) >= least) break; /* and less mid: more */
      if (g->n_blocks == 1 && st__rank_peak(T->S, &cf, 1, 1, mid) >= least)
        continue;
    }
    rc = scan_firsts(T, &cf, rest);
  }
  return rc;
}

/* Whether the split may count the embedding (acct & 1) and the loss
 * (acct & 2) as layers: each as asked, or either where left to choose;
 * Megatron-LM's pipelines only, of one shape, with no rank's size given. */
static int acct_allowed(const st__search_t *S, int acct) {
  const strata_plan_opts_t *o = S->o;
  int e = o->account_embedding, l = o->account_loss;
  /* torchtitan lists each stage's modules (module_fqns_per_model_part):
   * its default split counts the embedding and the output as layers
   * (pipeline_parallel_first/last_stage_less_layers = 1) */
  if (acct && (!o->megatron || o->framework == STRATA_FRAMEWORK_DEEPSPEED ||
               o->first_layers || o->last_layers))
    return 0;
  return (e < 0 || e == (acct & 1)) && (l < 0 || l == (acct >> 1 & 1));
}

/* The floor of layout n (K chunks): each rank waits for the work of the
 * chunks before its first (the forwards before it and the backwards
 * after) and does its own m times, its layers at the least they cost
 * (work_range): the bound's fill, busy and drain (step_of). */
static double layout_floor(const st__cfg_t *cf, const st__family_t *least,
                           const int *n, int K, double *rw) {
  int p = cf->p;
  double most = 0, before = 0, *cw = rw + p;
  for (int r = 0; r < p; r++)
    rw[r] = 0;
  for (int k = 0, l = 0; k < K; l += n[k], k++) {
    cw[k] = st__layers_work(least, l, n[k]) +
            (k == 0 ? part_work(&cf->f->pro) : 0) +
            (k == K - 1 ? part_work(&cf->f->epi) : 0);
    rw[k % p] += cw[k];
  }
  for (int r = 0; r < p; r++) {
    double x = cf->m * rw[r] + before;
    most = x > most ? x : most;
    before += cw[r];
  }
  return most;
}

/* A floor of layout_floor for every layout the search generates for cf
 * (layouts.c), before any is made: their chunks hold at least a (the
 * first, with the embedding), c (the middle) and b layers (the last, with
 * the loss), each layer at least ell, the least layer's work; W is all of
 * their work.  The busiest rank does no less than the mean over the ranks
 * (m W / p and their waits for the first chunks before them) nor than the
 * last rank (its own chunks m times after every first chunk but its
 * own).  INFINITY where none is generated. */
/* The least layers any generated layout of K chunks of L layers gives its
 * first chunk (a), a middle one (c) and its last (b): layouts.c's q - 1,
 * q - 2 and the middle share of the most the ends take. */
static void least_chunks(int L, int K, int *a, int *b, int *c) {
  int q = L / K;
  *a = q - 1 > 0 ? q - 1 : 0;
  *b = q - 2 > 0 ? q - 2 : 0;
  *c = (L - 2 * q - 1) / (K - 2);
  if (*c < 1) *c = 1; /* a candidate's middle chunks hold one or more */
}

static double layouts_floor(const top_t *T, const st__cfg_t *cf, double ell,
                            double W) {
  int L = T->S->L, p = cf->p, v = cf->v > 1 ? cf->v : 1, K = p * v, a, b, c;
  if (p < 2 || K < 3 || K > L || K > ST__MAX_PP) return INFINITY;
  least_chunks(L, K, &a, &b, &c);
  double first = part_work(&cf->f->pro) + a * ell, mid = c * ell;
  double mean = cf->m * W / p + (p - 1.0) / p * first +
                mid * (p - 2.0) * (p - 1.0) / (2.0 * p);
  double last = cf->m * (part_work(&cf->f->epi) + (b + (v - 1.0) * c) * ell) +
                first + (p - 2.0) * mid;
  return mean > last ? mean : last;
}

/* Whether the ends of some generated layout of cf might fit: the first
 * and the last rank with every chunk at the least any layout gives it
 * (layouts_floor's), where memory grows with each chunk's layers. */
static int layouts_fit(top_t *T, const st__cfg_t *cf) {
  int p = cf->p, v = cf->v > 1 ? cf->v : 1, K = p * v, a, b, c, *n = T->least;
  least_chunks(T->S->L, K, &a, &b, &c);
  for (int k = 0; k < K; k++)
    n[k] = k == 0 ? a : k == K - 1 ? b : c;
  st__cfg_t x = *cf;
  x.split = n;
  return st__rank_layout_peak(T->S, &x, n, 0) <= T->S->budget &&
         st__rank_layout_peak(T->S, &x, n, p - 1) <= T->S->budget;
}

/* Whether some generated layout of cf might beat the step to beat and
 * fit, by layouts_floor and layouts_fit, before any is made. */
static int layouts_may(top_t *T, const st__cfg_t *cf,
                       const st__family_t *least) {
  const st__search_t *S = T->S;
  if (!T->ell && !(T->ell = strata_calloc((size_t)S->n_fam, sizeof *T->ell)))
    return strata_error(STRATA_ENOMEM, "out of memory");
  double *ell = &T->ell[cf->f - S->fam];
  if (*ell == 0) { /* the family's least layer, once (-1: none above 0) */
    double x = INFINITY;
    for (int l = 0; l < S->L; l++) {
      double y = st__layers_work(least, l, 1);
      x = y < x ? y : x;
    }
    *ell = x > 0 ? x : -1;
  }
  double all = layouts_floor(T, cf, *ell > 0 ? *ell : 0,
                             part_work(&cf->f->pro) + part_work(&cf->f->epi) +
                                 st__layers_work(least, 0, S->L));
  if (all >= cut(T) || all > tuple_cut(T, cf)) return 0;
  return !T->mem_prune || !st__layers_alike(S, cf) || layouts_fit(T, cf);
}

/* The last rank's floors of a group's candidates where it depends on the
 * rank's layers alone (st__rank_floor_by_count): costed once a count. */
typedef struct {
  int n, count[ST__LAYOUTS];
  double floor[ST__LAYOUTS];
} by_count_t;

static double floor_by_count(top_t *T, const st__cfg_t *cf, by_count_t *b,
                             const int *split, int count) {
  for (int j = 0; j < b->n; j++)
    if (b->count[j] == count) return b->floor[j];
  st__cfg_t x = *cf;
  x.split = (int *)split;
  double f = st__rank_floor(T->S, &x, split, cf->p - 1, NULL);
  b->count[b->n] = count;
  b->floor[b->n++] = f;
  return f;
}

/* Megatron-LM layouts of chunks of their own sizes (layouts.c), each
 * bounded and costed as any split; those the first/last form gives are
 * visited by visit_splits. */
static int visit_layouts(top_t *T, st__cfg_t cf) {
  const st__search_t *S = T->S;
  static _Thread_local int cand[ST__LAYOUTS][ST__MAX_PP];
  int rc = 0, p = cf.p, K = 0, order[ST__LAYOUTS], k = 0;
  double w[2], rw[2 * ST__MAX_PP], fl[ST__LAYOUTS];
  if (st__layout_weights(S, &cf, w)) return 0;
  /* block recompute's full family costs at least its sibling's layers */
  const st__family_t *least = cf.f->sib >= 0 ? &S->fam[cf.f->sib] : cf.f;
  if ((rc = layouts_may(T, &cf, least)) <= 0) return rc;
  rc = 0;
  cf.first = cf.last = 0;
  cf.chunked = 1;
  /* the candidates by their floors, least first: the best of the tuple
   * found early leaves the others less to beat (tuple_cut) */
  for (int i = 0; i < ST__LAYOUTS; i++) {
    if ((K = st__layout_candidate(S, &cf, w, i, cand[i])) < 1) continue;
    fl[i] = layout_floor(&cf, least, cand[i], K, rw);
    int j = k++;
    for (; j > 0 && fl[order[j - 1]] > fl[i]; j--)
      order[j] = order[j - 1];
    order[j] = i;
  }
  /* where the last rank's floor depends on its layers alone, the least
   * count's first: it grows with the count, so one at the cut there
   * drops them all */
  int alike = st__rank_floor_by_count(S, &cf, p - 1), low = -1;
  int count[ST__LAYOUTS];
  by_count_t bc = {0};
  for (int x = 0; x < k && alike; x++) {
    int i = order[x];
    count[i] = 0;
    for (int c = p - 1; c < K; c += p)
      count[i] += cand[i][c];
    if (fl[i] < cut(T) && (low < 0 || count[i] < count[low])) low = i;
  }
  if (low >= 0) {
    double f = floor_by_count(T, &cf, &bc, cand[low], count[low]);
    if (f >= cut(T) || f > tuple_cut(T, &cf)) return 0;
  }
  for (int x = 0; x < k && !rc && !T->stopped; x++) {
    double tc = tuple_cut(T, &cf);
    if (fl[order[x]] >= cut(T)) break; /* and every one after it */
    if (fl[order[x]] > tc) continue;
    int i = order[x], *n = cand[i];
    cf.split = n;
    /* the last rank's own (the loss's; it synchronises unhidden), and
     * that the ends fit: the first rank holds the most micro-batches */
    double peak = 0, *mem = T->mem_prune ? &peak : NULL;
    double rf = alike ? floor_by_count(T, &cf, &bc, n, count[i])
                      : st__rank_floor(T->S, &cf, n, p - 1, mem);
    if (rf >= cut(T) || rf > tc) continue;
    if (alike && mem) peak = st__rank_layout_peak(T->S, &cf, n, p - 1);
    if (mem && peak > S->budget) continue;
    if (mem && st__rank_layout_peak(T->S, &cf, n, 0) > S->budget) continue;
    rc = visit(T, &cf);
  }
  return rc;
}

/* A group's splits: an explicit layout's alone; else Megatron-LM's first
 * and last ranks (visit_splits) and the even splits that count the
 * embedding and the loss as layers (one each), as allowed. */
static int visit_group(top_t *T, st__cfg_t cf) {
  const st__search_t *S = T->S;
  int n[ST__MAX_PP], v = cf.v > 1 ? cf.v : 1;
  if (S->lay_K > 0) {
    cf.first = cf.last = 0;
    return cf.p * v == S->lay_K ? visit(T, &cf) : 0;
  }
  int rc = acct_allowed(S, 0) ? visit_splits(T, cf) : 0;
  for (int a = 1; a <= 3 && !rc && cf.p >= 2; a++) {
    if (!acct_allowed(S, a) || st__split_accounted(S->L, cf.p, v, a, n) < 0)
      continue;
    cf.first = cf.last = 0;
    cf.acct = a;
    rc = visit(T, &cf);
  }
  cf.acct = 0;
  if (!rc && cf.p >= 2 && st__layouts_allowed(S)) rc = visit_layouts(T, cf);
  return rc;
}

/* ---- groups ---- */

/* The least share of forward (or backward) in any part of the family:
 * every stage, a sum of parts, has at least this share of each. */
static double min_share(const st__search_t *S, const st__family_t *f) {
  const strata_graph_t *g = S->graphs[f->graph];
  double phi = 0.5;
  const st__part_t *x[2] = {&f->pro, &f->epi};
  for (int b = -2; b < g->n_blocks; b++) {
    const st__part_t *y = b < 0 ? x[b + 2] : &f->layer[b];
    double w = y->fwd + y->bwd;
    if (!(w > 0)) continue;
    double m = (y->fwd < y->bwd ? y->fwd : y->bwd) / w;
    if (m < phi) phi = m;
  }
  return phi > 0 ? phi : 0;
}

/* A bound of every split of the group: the busiest rank carries at least
 * its share W/p of the work W, m times; without interleaving it also waits
 * for the forwards of the stages before it and the backwards of those
 * after it, at least a share phi of the rest of the work:
 * step >= m w + phi (W - w) >= (m - phi) W/p + phi W.  W and phi are the
 * family's (lb_terms), once for all its groups. */
static void lb_terms(const st__search_t *S, const st__family_t *f, double *work,
                     double *phi) {
  *work =
      part_work(&f->pro) + part_work(&f->epi) + work_range(S, f, 0, S->L, 0);
  *phi = min_share(S, f);
}

static double group_lb(const st__cfg_t *cf, double work, double phi) {
  if (cf->p == 1) return cf->m * part_work(&cf->f->only_part);
  if (cf->v > 1) return cf->m * work / cf->p;
  return (cf->m - phi) * work / cf->p + phi * work;
}

/* Interleaving as Megatron-LM allows it: every rank's layers a multiple
 * of v (so the model's too, at least v per rank), the micro-batches a
 * multiple of pp (the rulebook's rows of the pipeline: megatron/core/
 * pipeline_parallel/schedules.py).  c: the search's rulebook
 * configuration, a copy the call may change. */
static int vpp_ok(const st__search_t *S, strata_rules_config_t *c,
                  const st__cfg_t *cf) {
  int p = cf->p, v = cf->v;
  if (v == 1) return 1;
  if (v > 64 || p * v > ST__MAX_PP) return 0;
  c->pp = p, c->vpp = v, c->dp = cf->dp, c->micro_batch = cf->b;
  if (strata_rules_check(c, ST__AT_PIPE, NULL)) return 0;
  if (S->lay_K > 0) return p * v == S->lay_K;
  /* a multiple of v on every rank, or the embedding and loss counted */
  int units_ok = 0;
  for (int a = 1; a <= 3; a++)
    units_ok |=
        acct_allowed(S, a) && (S->L + (a & 1) + (a >> 1)) % (p * v) == 0;
  /* or a layout of chunks of their own sizes (layouts.c) */
  units_ok |= st__layouts_allowed(S) && p >= 2 && p * v <= S->L;
  if ((S->L % v || S->L < p * v) && !units_ok) return 0;
  if (S->o->overlap_p2p == 0 && p < 3) return 0; /* Megatron-LM's rule */
  return 1;
}

static int add_group(const st__search_t *S, group_t **g, int *n, int *cap,
                     const st__cfg_t *cf, double lb) {
  if (*n == *cap) {
    int c = *cap ? 2 * *cap : 1024;
    group_t *v = strata_realloc(*g, sizeof *v * (size_t)c);
    if (!v) return strata_error(STRATA_ENOMEM, "out of memory");
    *g = v;
    *cap = c;
  }
  group_t *x = &(*g)[(*n)++];
  x->lb = lb;
  x->fam = (int)(cf->f - S->fam);
  x->p = cf->p, x->dp = cf->dp, x->v = cf->v, x->b = cf->b, x->m = cf->m;
  return 0;
}

static st__cfg_t cfg_of(const st__search_t *S, const group_t *x) {
  st__cfg_t cf;
  memset(&cf, 0, sizeof cf);
  cf.f = &S->fam[x->fam];
  cf.p = x->p, cf.dp = x->dp, cf.v = x->v, cf.b = x->b, cf.m = x->m;
  return cf;
}

static int groups_of(const st__search_t *S, const st__family_t *f, group_t **g,
                     int *n, int *cap) {
  const strata_plan_opts_t *o = S->o;
  int b = S->graphs[f->graph]->micro_batch, rc = 0, nd = 0;
  if (o->global_batch % b) return 0;
  /* dp divides the micro-batches of a step: only its divisors */
  int micro = o->global_batch / b, *div = strata_malloc(sizeof *div * 2048);
  if (!div) return strata_error(STRATA_ENOMEM, "out of memory");
  strata_rules_config_t rules = S->rules; /* the rulebook's, of f */
  rules.tp = f->tp, rules.cp = f->cp, rules.ep = f->ep, rules.etp = f->etp;
  rules.global_batch = o->global_batch;
  double work, phi;
  lb_terms(S, f, &work, &phi);
  for (int d = 1; (long)d * d <= micro && nd < 2046; d++)
    if (micro % d == 0) {
      div[nd++] = d;
      if (d != micro / d) div[nd++] = micro / d;
    }
  for (int p = 1; p <= S->L && p <= ST__MAX_PP && !rc; p++) {
    if ((o->pp && p != o->pp) || (o->max_pp && p > o->max_pp)) continue;
    if (p >= 2 && S->L < 2) break;
    int per = S->total / (f->tcp * p);
    for (int di = 0; di < nd && !rc; di++) {
      int dp = div[di];
      if (dp > per) continue;
      if (o->dp && dp != o->dp) continue;
      int m = micro / dp;
      /* v > 1 needs at least v layers per rank (the embedding and the
       * loss counted: v units) */
      int vmax = p >= 2 ? (S->L + 2) / p : 1;
      for (int v = 1; v <= vmax && v <= 64 && !rc; v++) {
        if (o->vpp > 0 && v != o->vpp) continue;
        st__cfg_t cf;
        memset(&cf, 0, sizeof cf);
        cf.f = f;
        cf.p = p;
        cf.dp = dp;
        cf.v = v;
        cf.b = b;
        cf.m = m;
        if (!vpp_ok(S, &rules, &cf)) continue;
        if (v > 1 && o->vpp == 0 && !o->megatron) continue;
        rc = add_group(S, g, n, cap, &cf, group_lb(&cf, work, phi));
      }
    }
  }
  strata_free(div);
  return rc;
}

/* A total order: by bound, then by degrees and family (the order of equal
 * bounds must not depend on the sort). */
static const st__search_t *order_S;
static int cmp_group(const void *a, const void *b) {
  const group_t *x = a, *y = b;
  if (x->lb != y->lb) return x->lb < y->lb ? -1 : 1;
  const int u[] = {x->p, x->dp, x->v, order_S->fam[x->fam].tcp, x->b, x->fam};
  const int w[] = {y->p, y->dp, y->v, order_S->fam[y->fam].tcp, y->b, y->fam};
  for (int i = 0; i < 6; i++)
    if (u[i] != w[i]) return u[i] < w[i] ? -1 : 1;
  return 0;
}

/* STRATA_PARETO_STEP_GPUS: by the nodes' GPUs a group uses, fewest
 * first, then as cmp_group: every group then meets the front's final
 * best on fewer nodes, the tightest cut it can have. */
static int cmp_group_gpus(const void *a, const void *b) {
  const group_t *x = a, *y = b;
  int G = order_S->G > 0 ? order_S->G : 1;
  long u = ((long)order_S->fam[x->fam].tcp * x->p * x->dp + G - 1) / G;
  long w = ((long)order_S->fam[y->fam].tcp * y->p * y->dp + G - 1) / G;
  if (u != w) return u < w ? -1 : 1;
  return cmp_group(a, b);
}

/* Restore the max-heap g[0..k) below r. */
static void sift_down(group_t *g, int k, int r) {
  for (;;) {
    int c = 2 * r + 1;
    if (c >= k) return;
    if (c + 1 < k && cmp_group(&g[c + 1], &g[c]) > 0) c++;
    if (cmp_group(&g[c], &g[r]) <= 0) return;
    group_t t = g[r];
    g[r] = g[c];
    g[c] = t;
    r = c;
  }
}

/* Move the k least groups (in cmp_group's order) to the front, sorted, by
 * a max-heap of k over one pass: sorting every group of a large cluster
 * costs more than the search, which usually ends within the first few. */
static void least_first(group_t *g, int n, int k) {
  if (k >= n) {
    qsort(g, (size_t)n, sizeof *g, cmp_group);
    return;
  }
  /* g[0..k) becomes a max-heap */
  for (int i = k / 2 - 1; i >= 0; i--)
    sift_down(g, k, i);
  for (int i = k; i < n; i++) {
    if (cmp_group(&g[i], &g[0]) >= 0) continue;
    group_t t = g[0];
    g[0] = g[i];
    g[i] = t;
    sift_down(g, k, 0);
  }
  qsort(g, (size_t)k, sizeof *g, cmp_group);
}

/* ---- free mode: balance the stages ---- */

/* Cumulative work of the family's layers, c[k] = work of layers [0, k):
 * a stage's work is c[k + n] - c[k] (+ the prologue or epilogue). */
static int cum_work(const st__search_t *S, const st__cfg_t *cf, double *c) {
  c[0] = 0;
  for (int k = 0; k < S->L; k++)
    c[k + 1] = c[k] + work_range(S, cf->f, k, 1, 0);
  return 0;
}

/* Greedy under cap: each stage takes the most layers whose work stays
 * within it (at least one, leaving one for each stage after it), found by
 * bisection on the cumulative work; the last takes the rest.  Returns the
 * busiest stage's work. */
static double greedy_split(const st__cfg_t *cf, const double *c, int L,
                           double cap, int *n) {
  int p = cf->p, k = 0;
  double pro = part_work(&cf->f->pro), epi = part_work(&cf->f->epi);
  double worst = 0;
  for (int s = 0; s < p; s++) {
    double extra = (s == 0 ? pro : 0) + (s == p - 1 ? epi : 0);
    int most = L - k - (p - 1 - s), take = most;
    if (s < p - 1) {
      int lo = 1, hi = most;
      while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (c[k + mid] - c[k] + extra <= cap)
          lo = mid;
        else
          hi = mid - 1;
      }
      take = lo;
    }
    n[s] = take;
    double w = c[k + take] - c[k] + extra;
    if (w > worst) worst = w;
    k += take;
  }
  return worst;
}

/* The split whose busiest stage is least: bisection on the cap between
 * the even share of the work and the whole, O(p log L) per step. */
static int free_split(const st__search_t *S, const st__cfg_t *cf, int *n) {
  int p = cf->p, L = S->L;
  double *c = strata_malloc(sizeof *c * (size_t)(L + 1));
  if (!c) return strata_error(STRATA_ENOMEM, "out of memory");
  cum_work(S, cf, c);
  double total = c[L] + part_work(&cf->f->pro) + part_work(&cf->f->epi);
  double lo = total / p, hi = greedy_split(cf, c, L, total, n);
  for (int it = 0; it < 100 && hi - lo > 1e-9 * hi; it++) {
    double cap = 0.5 * (lo + hi);
    double w = greedy_split(cf, c, L, cap, n);
    if (w <= cap)
      hi = w;
    else
      lo = cap;
  }
  greedy_split(cf, c, L, hi, n);
  strata_free(c);
  return isfinite(hi) ? 0 : -1;
}

/* The balanced split depends on the family and pp alone: computed once
 * for all the data parallelisms and batches that share them. */
static int visit_free(top_t *T, st__cfg_t cf) {
  st__search_t *S = T->S;
  if (cf.p == 1) return visit(T, &cf);
  if (!T->splits &&
      !(T->splits = strata_calloc((size_t)S->n_fam * (ST__MAX_PP + 1),
                                  sizeof *T->splits)))
    return strata_error(STRATA_ENOMEM, "out of memory");
  int **slot = &T->splits[(cf.f - S->fam) * (ST__MAX_PP + 1) + cf.p];
  if (!*slot) {
    int *n = strata_malloc(sizeof *n * (size_t)cf.p);
    if (!n) return strata_error(STRATA_ENOMEM, "out of memory");
    int rc = free_split(S, &cf, n);
    if (rc > 0 || rc < 0) {
      if (rc == STRATA_ENOMEM) {
        strata_free(n);
        return rc;
      }
      n[0] = -1; /* no split */
    }
    *slot = n;
  }
  if ((*slot)[0] < 0) return 0;
  cf.split = *slot;
  return visit(T, &cf);
}

/* The groups of every family the search runs (not a block recompute's
 * sibling of no recompute, costed through its full family). */
static int all_groups(st__search_t *S, group_t **g, int *ng, int *cap) {
  int rc = st__eval_scratch(S);
  for (int i = 0; i < S->n_fam && !rc; i++)
    if (S->fam[i].ok && !S->fam[i].aux)
      rc = groups_of(S, &S->fam[i], g, ng, cap);
  return rc;
}

/* The best K, the configuration of least memory, to the caller, with
 * copies of their explicit splits (T's go away). */
static int hand_over(top_t *T, st__cfg_t *best, st__cost_t *cost, int *n_out,
                     st__cfg_t *lowest, st__cost_t *lowest_cost) {
  for (int i = 0; i < T->n; i++) {
    best[i] = T->slot[i].cf;
    cost[i] = T->slot[i].cost;
  }
  *n_out = T->n;
  if (lowest) *lowest = T->lowest;
  if (lowest_cost) {
    *lowest_cost = T->lowest_cost;
    if (!T->have_lowest) lowest_cost->peak = INFINITY;
  }
  int rc = 0;
  for (int i = 0; i < T->n; i++)
    if (best[i].split) {
      size_t len = (size_t)st__split_len(&best[i]);
      int *keep = rc ? NULL : strata_malloc(sizeof(int) * len);
      if (!keep && !rc) rc = strata_error(STRATA_ENOMEM, "out of memory");
      if (keep) memcpy(keep, T->slot[i].split, sizeof(int) * len);
      best[i].split = keep; /* NULL past a failure: the caller frees them */
    }
  return rc;
}

int st__search(st__search_t *S, st__cfg_t *best, st__cost_t *cost, int top,
               int *n_out, st__cfg_t *lowest, st__cost_t *lowest_cost) {
  group_t *g = NULL;
  int ng = 0, cap = 0, rc = 0;
  top_t T;
  memset(&T, 0, sizeof T);
  T.S = S;
  T.K = top > 0 ? top : 1;
  T.pareto = S->o->pareto;
  T.gcut = INFINITY;
  T.slot = strata_calloc((size_t)T.K, sizeof *T.slot);
  if (!T.slot) return strata_error(STRATA_ENOMEM, "out of memory");
  rc = all_groups(S, &g, &ng, &cap);
  order_S = S;
  /* Groups in order of their bound: the least 4096 first; the rest only
   * if the search gets past them, and then only those still below the
   * K-th best (the others cannot hold a better configuration). */
  int sorted = ng < 4096 ? ng : 4096;
  if (!rc && ng && T.pareto == STRATA_PARETO_STEP_GPUS) {
    qsort(g, (size_t)ng, sizeof *g, cmp_group_gpus);
    sorted = ng;
  } else if (!rc && ng) /* g is NULL when no family fits (fuzz_pipeline) */
    least_first(g, ng, sorted);
  /* Splits that cannot fit are skipped; when nothing fits, the search runs
   * again without skipping, to name the configuration nearest to fitting. */
  T.mem_prune = !S->o->no_memory_check;
  for (int pass = 0; pass < 2 && !rc && !T.stopped; pass++) {
    int done = 0;
    for (int i = 0; i < ng && !rc && !done; i++) {
      if (i == sorted) { /* past the sorted part: keep what can still win */
        int k = sorted;
        for (int j = sorted; j < ng; j++)
          if (g[j].lb < group_cut(&T, S, &g[j])) g[k++] = g[j];
        ng = k;
        qsort(g + sorted, (size_t)(ng - sorted), sizeof *g, cmp_group);
        sorted = ng;
        if (i == ng) break;
      }
      if (g[i].lb >= group_cut(&T, S, &g[i])) {
        /* a front of step and GPUs: a group on more GPUs may still join */
        if (T.pareto == STRATA_PARETO_STEP_GPUS) continue;
        break;
      }
      st__cfg_t cf = cfg_of(S, &g[i]);
      rc = S->o->megatron ? visit_group(&T, cf) : visit_free(&T, cf);
      note(&T, i + 1, ng, g[i].lb);
      int st = rc ? 0 : stop_now(&T);
      if (st < 0)
        rc = strata_error(STRATA_ECANCELED, "interrupted: nothing was written");
      if (st > 0) done = 1;
      if (st > 0) S->bound_left = least_left(g, i + 1, ng);
    }
    if (T.n > 0 || !T.mem_prune || T.stopped) break;
    T.mem_prune = 0;
    T.lowest_only = 1;
  }
  strata_free(g);
  if (rc == STRATA_ECANCELED && !strata_last_error()[0])
    rc = strata_error(STRATA_ECANCELED, "interrupted: nothing was written");
  if (!rc) rc = hand_over(&T, best, cost, n_out, lowest, lowest_cost);
  if (!rc && T.pareto) rc = front_keep(&T);
  strata_free(T.front);
  if (T.stopped) S->deadline = -1; /* tells the caller */
  for (int i = 0; T.splits && i < S->n_fam * (ST__MAX_PP + 1); i++)
    strata_free(T.splits[i]);
  strata_free(T.splits);
  strata_free(T.ell);
  strata_free(T.slot);
  return rc;
}
