/*
 * hetero.c - planning on a cluster of node groups of different shapes
 * (an H100 group and an A100 group; 8 and 4 GPUs per node).
 *
 * The plan keeps Megatron-LM's shape: every stage has the same tensor
 * and context parallelism, every data-parallel replica is the same
 * pipeline, and that pipeline is cut into contiguous segments, segment j
 * on one group: a group holds dp x tp x cp x pp_j GPUs of its own, so no
 * data-parallel group spans GPU types.  Only the layers per stage differ
 * by group, balanced to each group's speed and memory as heterogeneous
 * planners do (Metis: Um et al., USENIX ATC 2024).
 *
 * Each group is searched as a homogeneous cluster of its own
 * (st__search_prepare on its view): its families, probes and parts are
 * the ones `strata plan` uses on it alone.  A mixed configuration takes
 * one family per group with the same degrees (tp, cp, ep, etp, sequence
 * parallelism, recompute, ZeRO, precision, micro-batch), a dp and a pp_j
 * per group; its layer split is the exact optimum of the 1F1B model
 * (sum of stages + (m - 1) x the bottleneck) for stages of linear cost
 * under each stage's memory on its own GPU (split.c, st__split_linear),
 * and it is then costed by eval.c like any configuration, every rank on
 * its own group's search (memory budget, links, GPU), the p2p between
 * two groups over the link between them.  The linear stage cost holds
 * for a model of one repeated layer; for a model whose layers differ
 * (dense layers before MoE ones) a stage costs the prefix sums of its
 * layers' times on its group and holds what fits from where it starts,
 * and the split is the same optimum by a DP over (stage, first layer)
 * (st__split_prefix).  Interleaved (v virtual stages, every round of p
 * chunks with the same counts), a rank holds the same positions of each
 * round: the linear split runs in units of v layers, the prefix-sum one
 * on the prefix sums folded over the rounds (fold_prefix).
 *
 * The best plan on each group alone is a candidate too: when the slower
 * group does not help, the plan leaves it out (n_groups says so, the
 * device map names its nodes).  Group orders are tried in every
 * permutation up to three groups (the first stage holds the most
 * micro-batches in flight, so which GPU leads matters), spec order beyond.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/search.h"

#define MAX_GROUPS 8

typedef struct {
  int K;
  st__search_t S[MAX_GROUPS];
  int prepared[MAX_GROUPS];
  /* the best mixed configuration */
  st__cfg_t best;
  st__cost_t cost;
  int split[ST__MAX_PP];
  const st__family_t *fs[ST__MAX_PP];
  st__search_t *ss[ST__MAX_PP];
  int have;
  long tried;
  double deadline;      /* the search stops here (0: none) */
  double limit_end;     /* the plan's limit itself */
  int stopped;          /* the time limit was reached */
  double seed;          /* what a mixed configuration must beat to be kept:
                           the groups alone hold the best K below it */
  double bound;         /* stopped: no mixed configuration left beats it */
  double alone;         /* the best step of a group alone */
  unsigned long leaves; /* configurations the time limit was checked at */
  long floored;         /* configurations st__split_floor dropped */
  /* the layers a rank can hold (one kind of layer), by what its memory
   * depends on (most_slot) for the family, dp and v they were found for:
   * pipelines of one length over the groups share most of their ranks,
   * and 1F1B ranks of pipelines of any length most of their memory */
  struct most_memo {
    int fam, dp, u, v;
  } * memo;
  /* layers that differ: each rank's caps from every first layer, by
   * (group, first/middle/last, pp > 2, micro-batches in flight) for the
   * family and dp they were found for */
  struct most_memo *cap_tag;
  int *caps;      /* L a slot (a rank's caps from every first position) */
  double *cap_hi; /* each slot's widest window of group-0 work */
  /* interleaved (v > 1), by (group, pp, rank) for each v searched: where
   * each v's slots start */
  int cap_nv, cap_v[64];
  size_t cap_base[64];
  double *fold; /* the unit's folded prefix sums (trial_t's fold) */
  int fam;      /* the family of group 0 being searched */
} mixed_t;

/* Family of group z with f's degrees, or NULL. */
static const st__family_t *match(const mixed_t *M, int z,
                                 const st__family_t *f) {
  const st__search_t *A = &M->S[0], *B = &M->S[z];
  int b = A->graphs[f->graph]->micro_batch;
  for (int i = 0; i < B->n_fam; i++) {
    const st__family_t *x = &B->fam[i];
    if (x->ok && x->tp == f->tp && x->cp == f->cp && x->ep == f->ep &&
        x->etp == f->etp && x->sp == f->sp && x->rc == f->rc &&
        x->zero == f->zero && x->fp8 == f->fp8 && x->epo == f->epo &&
        x->tcp == f->tcp && x->ep_outer == f->ep_outer &&
        B->graphs[x->graph]->micro_batch == b)
      return x;
  }
  return NULL;
}

/* One layer's forward and backward on family f (all layers alike). */
static double layer_time(const st__search_t *S, const st__family_t *f) {
  st__part_t x;
  memset(&x, 0, sizeof x);
  st__layers_add(S, f, 0, 1, &x);
  return x.fwd + x.bwd;
}

/* The prefix sums of the layers' forward and backward on family f (pre[l]:
 * layers [0, l)). */
static void prefix_times(const st__search_t *S, const st__family_t *f,
                         double *pre) {
  pre[0] = 0;
  for (int l = 0; l < S->L; l++) {
    st__part_t x;
    memset(&x, 0, sizeof x);
    st__layers_add(S, f, l, 1, &x);
    pre[l + 1] = pre[l] + x.fwd + x.bwd;
  }
}

/* The most layers stage s (pipeline rank s of P) can hold on its group,
 * in units of cf->v layers (one a chunk): the largest n whose peak fits
 * the group's budget (it grows with n). */
static int most_layers(st__search_t *S, const st__cfg_t *cf, int s, int most) {
  int lo = 0, hi = most, v = cf->v > 1 ? cf->v : 1;
  while (lo < hi) {
    int mid = lo + (hi - lo + 1) / 2;
    if (st__rank_peak(S, cf, s, 0, mid * v) <= S->budget)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

typedef struct {
  const st__family_t *f[MAX_GROUPS]; /* per group z, NULL: not usable */
  int order[MAX_GROUPS];             /* groups in pipeline order */
  int pp[MAX_GROUPS];                /* per position in order */
  double a[MAX_GROUPS];              /* per group z, one layer's time */
  const double *pre[MAX_GROUPS];     /* per group z, prefix sums of the layers'
                                        times (layers that differ), or NULL */
  double kappa[MAX_GROUPS]; /* the least ratio of a layer's time on group
                               z to its time on group 0 */
  double most[MAX_GROUPS];  /* per group z, the most work (layers, or
                               group-0 seconds when layers differ) a stage
                               of z holds at any place in any pipeline */
  int dp, b, m;
  int v; /* virtual stages: each rank's layers in v equal chunks, the
            ranks' counts the same in every round of p chunks */
  /* layers that differ: per group z, the prefix sums folded over the v
   * rounds of U = L / v positions (fold[i] = sum_k pre[i + k U] -
   * pre[k U], i in [0, U]; pre itself at v = 1): a rank on positions
   * [o, o + n) runs fold[o + n] - fold[o] a micro-batch */
  const double *fold[MAX_GROUPS];
  int U;
  double rho; /* the least share of a position's group-0 work (over its v
                 rounds) in the first round: a rank's first chunk holds at
                 least rho of its group-0 work (1 at v = 1) */
} trial_t;

/* The positions from k that rank s can hold on its group, for every k of
 * the U = L / v of a round (a position: one layer in each of the rank's v
 * chunks, cf->v of them; up to the round's end: the pipeline's length
 * limits them in the DP, so the caps depend on the rank's place only, as
 * their memo assumes): the window's end only moves forward as k does (a
 * range's memory grows with each layer it takes, and [k + 1, end) holds
 * a part of every chunk of [k, end)), so two pointers walk it. */
static void caps_from(st__search_t *S, const st__cfg_t *cf, int s, int U,
                      int *cap) {
  int end = 0, v = cf->v > 1 ? cf->v : 1;
  for (int k = 0; k < U; k++) {
    if (end < k) end = k;
    while (end < U &&
           st__rank_peak(S, cf, s, k, (end - k + 1) * v) <= S->budget)
      end++;
    cap[k] = end - k;
  }
}

/* The most group-0 work (prefix sums w, folded where interleaved) of the
 * positions a rank holds from any first one (caps cap, U of them). */
static double widest(const double *w, const int *cap, int U) {
  double hi = 0;
  for (int k = 0; k < U; k++)
    if (w[k + cap[k]] - w[k] > hi) hi = w[k + cap[k]] - w[k];
  return hi;
}

/* The memo slot of 1F1B rank s of P on group z.  A rank's memory depends
 * on its place (first, middle, last), its micro-batches in flight and
 * whether pp > 2 (its p2p communicators), not on pp and its position
 * otherwise. */
static size_t place_slot(const mixed_t *M, const trial_t *t, int z, int P,
                         int s) {
  int kind = s == 0 ? 0 : s == P - 1 ? 2 : 1, fly = P - s;
  if (fly > t->m) fly = t->m;
  return (((size_t)z * 3 + (size_t)kind) * 2 + (P > 2)) *
             ((size_t)M->S[0].L + 1) +
         (size_t)fly;
}

/* The caps' memo slot of rank s of P on group z at t's v (SIZE_MAX:
 * none): 1F1B place_slot's; interleaved, its micro-batches in flight grow
 * with pp (eval.c's in_flight), so the slot is the rank's own. */
static size_t cap_slot(const mixed_t *M, const trial_t *t, int z, int P,
                       int s) {
  if (!M->caps) return SIZE_MAX;
  if (t->v <= 1) return place_slot(M, t, z, P, s);
  for (int i = 0; i < M->cap_nv; i++)
    if (M->cap_v[i] == t->v && P <= t->U)
      return M->cap_base[i] +
             ((size_t)z * ((size_t)t->U + 1) + (size_t)P) * (size_t)t->U +
             (size_t)s;
  return SIZE_MAX;
}

/* Rank s of P on group z: the positions it holds from every first one,
 * into cap (t->U of them: layers at v = 1, a layer in each chunk
 * interleaved), from the memo where it has them; its memo slot (ranks of
 * one slot hold the same), SIZE_MAX without a memo. */
static size_t caps_at(mixed_t *M, const trial_t *t, int z, int P, int s,
                      int *cap) {
  size_t L = (size_t)M->S[0].L, U = (size_t)t->U, at = cap_slot(M, t, z, P, s);
  if (at != SIZE_MAX && M->cap_tag[at].fam == M->fam &&
      M->cap_tag[at].dp == t->dp) {
    memcpy(cap, M->caps + at * L, sizeof(int) * U);
    return at;
  }
  st__cfg_t one = {t->f[z], P,    t->dp, t->v, t->b, t->m, 0, 0, NULL,
                   NULL,    NULL, 0,     0,    0,    0,    0, 0};
  caps_from(&M->S[z], &one, s, (int)U, cap);
  if (at != SIZE_MAX) {
    memcpy(M->caps + at * L, cap, sizeof(int) * U);
    M->cap_hi[at] = widest(t->fold[0], cap, (int)U);
    M->cap_tag[at].fam = M->fam, M->cap_tag[at].dp = t->dp;
  }
  return at;
}

/* A split fixed by the options (first/last stage layers, the middle ones
 * equal, as Megatron-LM's flags give it): 1 and n filled, else 0. */
static int fixed_split(const strata_plan_opts_t *o, int L, int P, int *n) {
  int first = o->first_layers, last = o->last_layers, sum = 0;
  if (!first && !last) return 0;
  if (P == 2 && !first) first = L - last;
  if (P == 2 && !last) last = L - first;
  int given = !!first + !!last,
      mid = P > given ? (L - first - last) / (P - given) : 0;
  for (int s = 0; s < P; s++) {
    n[s] = s == 0 && first ? first : s == P - 1 && last ? last : mid;
    sum += n[s];
  }
  if (sum != L) n[0] = 0; /* not a split Megatron-LM takes */
  return 1;
}

static double cut(const mixed_t *M);

/* Whether Megatron-LM interleaves v virtual stages over P ranks with m
 * micro-batches (space.c's vpp_ok, on the rulebook's rows). */
static int interleaves(const mixed_t *M, int P, int v, int dp, int b) {
  const st__search_t *S = &M->S[0];
  strata_rules_config_t c = S->rules;
  c.pp = P, c.vpp = v, c.dp = dp, c.micro_batch = b;
  c.global_batch = S->o->global_batch;
  if (strata_rules_check(&c, ST__AT_PIPE, NULL)) return 0;
  if (v > 64 || P * v > ST__MAX_PP || S->L % v) return 0;
  return !(S->o->overlap_p2p == 0 && P < 3); /* Megatron-LM's rule */
}

/* What eval.c adds to every step beyond the ranks' work: the cluster's
 * fixed overhead (the optimizer and parameter gathers add more). */
static double fixed_of(const mixed_t *M) {
  return strata_cluster_calibration(M->S[0].c)->step_seconds;
}

/* Whether the layers reach the pipeline's end with every stage under T:
 * each stage takes all it can from where the one before it stopped (the
 * most a stage can leave to the next, as a stage's time and memory grow
 * with its layers; no stage needs one). */
static int reach_under(int L, int P, const double *const *pre, const double *e,
                       const int *cap, double T) {
  int k = 0;
  for (int s = 0; s < P && k < L; s++) {
    int n = 0, most = cap[(size_t)s * L + k];
    while (n < most && e[s] + pre[s][k + n + 1] - pre[s][k] <= T)
      n++;
    k += n;
  }
  return k == L;
}

/* Whether a split of the stages (layers that differ) might beat the cut:
 * 0 when the busiest stage cannot be under the cut's share (reach_under)
 * or when st__split_floor proves none does with each layer's time on a
 * stage at least kappa of its time on group 0 (work in group-0 seconds,
 * a stage's most that of its widest window in memory).  Interleaved, in
 * the positions of a round (the folded prefix sums, pre here): a rank
 * waits for the first chunk of each rank before it, at least rho of that
 * rank's group-0 work and so at least rho of its floor time (rho <= 1
 * scales its embedding too), so rank r's bound m t_r + rho sum_{s<r} t_s
 * < C is st__split_floor's with m / rho and C / rho. */
static int floor_differ(const mixed_t *M, const trial_t *t, int P,
                        st__search_t *const *ss, const double **pre,
                        const double *e, const int *cap, const size_t *slot) {
  int U = t->U;
  double C = cut(M) - fixed_of(M), T = C / t->m * (1 + 1e-9);
  if (STRATA_CHOICE(M->S[0].o->recompute_method) == STRATA_RECOMPUTE_BLOCK ||
      !isfinite(C) || !(t->rho > 0))
    return 1;
  if (!reach_under(U, P, pre, e, cap, T)) return 0;
  double *k0 = strata_malloc(sizeof(double) * 3 * (size_t)P), least = INFINITY;
  if (!k0) return 1; /* no floor: the split decides */
  double *lo = k0 + P, *hi = lo + P;
  const double *w = t->fold[0];
  for (int l = 0; l < U; l++)
    if (w[l + 1] - w[l] < least) least = w[l + 1] - w[l];
  for (int s = 0; s < P; s++) {
    k0[s] = t->kappa[ss[s] - M->S];
    lo[s] = least;
    hi[s] = slot[s] != SIZE_MAX ? M->cap_hi[slot[s]]
                                : widest(w, cap + (size_t)s * U, U);
  }
  int ok =
      st__split_floor(P, w[U], t->m / t->rho, k0, e, lo, hi, 0, C / t->rho);
  strata_free(k0);
  return ok;
}

/* The options' split (each rank's layers, a multiple of v) checked
 * against the caps (U positions a rank): 1 when it fits, 0 when not. */
static int fixed_fits(const trial_t *t, int L, int P, const int *cap,
                      const int *n) {
  for (int s = 0, k = 0; s < P; k += n[s], s++)
    if (n[s] < 1 || n[s] % t->v || k >= L ||
        n[s] / t->v > cap[(size_t)s * (size_t)t->U + (size_t)(k / t->v)])
      return 0;
  return 1;
}

/* The split of a model whose layers differ: each rank's caps from every
 * first position, then the prefix-sum DP (interleaved: on the folded
 * prefix sums, in positions of a round, with m v micro-batches as the
 * alike split's units), or the options' split checked against the caps.
 * 1 with n filled (each rank's layers), 0 when none fits, < 0 an error. */
static int prefix_split(mixed_t *M, const trial_t *t, int P,
                        st__search_t *const *ss, const double *e, int *n) {
  int L = M->S[0].L, U = t->U, rc = 1;
  int *cap = strata_malloc(sizeof(int) * (size_t)P * (size_t)U);
  const double **pre = strata_malloc(sizeof(double *) * (size_t)P);
  size_t *slot = strata_malloc(sizeof(size_t) * (size_t)P);
  if (!cap || !pre || !slot) {
    rc = strata_error(STRATA_ENOMEM, "out of memory");
    goto out;
  }
  for (int s = 0; s < P; s++) {
    pre[s] = t->fold[ss[s] - M->S];
    slot[s] = caps_at(M, t, (int)(ss[s] - M->S), P, s, cap + (size_t)s * U);
  }
  if (!floor_differ(M, t, P, ss, pre, e, cap, slot)) {
    M->floored++;
    rc = 0;
  } else if (fixed_split(M->S[0].o, L, P, n)) {
    rc = fixed_fits(t, L, P, cap, n);
  } else if (!isfinite(st__split_prefix(U, P, t->m * t->v, pre, e, cap, n))) {
    rc = 0;
  } else {
    for (int s = 0; s < P; s++)
      n[s] *= t->v;
  }
out:
  strata_free(cap);
  strata_free(pre);
  strata_free(slot);
  return rc;
}

/* Whether a split of the stages (one kind of layer: a[s] n + e[s], at
 * most u[s] layers) might beat the cut: 0 when st__split_floor proves
 * none does, before the split and its costing are paid for. */
static int floor_alike(const mixed_t *M, const trial_t *t, int P,
                       const double *a, const double *e, const int *u) {
  double lo[ST__MAX_PP], hi[ST__MAX_PP];
  /* block recompute: the layers past the first N run faster than a */
  if (STRATA_CHOICE(M->S[0].o->recompute_method) == STRATA_RECOMPUTE_BLOCK)
    return 1;
  for (int s = 0; s < P; s++)
    lo[s] = 1, hi[s] = u[s];
  /* interleaved (units of v layers, a the unit's): a rank waits for one
   * chunk of those before it, 1/v of their work: the floor of v times
   * the step with m v micro-batches */
  return st__split_floor(P, M->S[0].L / t->v, t->m * t->v, a, e, lo, hi, 1,
                         (cut(M) - fixed_of(M)) * t->v);
}

/* Whether split n (stage s on layers from k: a[s] n + e[s], or its prefix
 * sums when layers differ) might beat the cut: no 1F1B schedule ends
 * before its busiest rank has run the stages before it once (interleaved:
 * one chunk of each) and its own m times (the floor st__split_floor relaxes,
 * here on the split itself), so the costing is paid only when that does not
 * reach the cut. */
static int split_beats(const mixed_t *M, const trial_t *t, int P,
                       st__search_t *const *ss, const double *a,
                       const double *e, const int *n) {
  double before = 0, most = 0, C = cut(M) - fixed_of(M);
  /* interleaved, a rank waits for the first chunk of each rank before
   * it: 1/v of it when the layers are alike, its own layers of the first
   * round (positions [k, k + c)) when they differ */
  int share = t->pre[0] ? 1 : t->v;
  if (STRATA_CHOICE(M->S[0].o->recompute_method) == STRATA_RECOMPUTE_BLOCK)
    return 1;
  for (int s = 0, k = 0; s < P; k += n[s] / t->v, s++) {
    int z = (int)(ss[s] - M->S), c = n[s] / t->v;
    const double *pre = t->pre[0] ? t->pre[z] : NULL;
    double ts = e[s] + (pre ? t->fold[z][k + c] - t->fold[z][k] : a[s] * n[s]);
    if (before / share + t->m * ts > most) most = before / share + t->m * ts;
    before += pre ? e[s] + pre[k + c] - pre[k] : ts;
  }
  return most < C;
}

/* The memo slot of the most layers rank s of P on group z holds (one
 * kind of layer): 1F1B by its place, micro-batches in flight and pp > 2
 * as cap_slot, interleaved by (group, pp, rank) after those. */
static size_t most_slot(const mixed_t *M, const trial_t *t, int z, int P,
                        int s) {
  size_t L = (size_t)M->S[0].L, ones = (size_t)M->K * 3 * 2 * (L + 1);
  if (t->v <= 1) return place_slot(M, t, z, P, s);
  return ones + ((size_t)z * (L + 1) + (size_t)P) * L + (size_t)s;
}

/* The most units of v layers rank s of P on group S (family f) holds, any
 * other rank aside: from its memo slot w (NULL: none) where found for the
 * unit's family, dp and v, else found and kept. */
static int most_of(mixed_t *M, const trial_t *t, const st__family_t *f,
                   st__search_t *S, int P, int s, struct most_memo *w) {
  if (w && w->fam == M->fam && w->dp == t->dp && w->v == t->v) return w->u;
  st__cfg_t one = {f,    P,    t->dp, t->v, t->b, t->m, 0, 0, NULL,
                   NULL, NULL, 0,     0,    0,    0,    0, 0};
  int u = most_layers(S, &one, s, M->S[0].L / t->v);
  if (w) w->fam = M->fam, w->dp = t->dp, w->v = t->v, w->u = u;
  return u;
}

/* Each rank's most units (v layers, one a chunk) into u and what the
 * first and last add into e; 0 when a rank cannot hold one. */
static int rank_caps(mixed_t *M, const trial_t *t, int P,
                     const st__family_t *const *fs, st__search_t *const *ss,
                     double *e, int *u) {
  int most = M->S[0].L / t->v - P + 1;
  size_t last = SIZE_MAX; /* the slot of the rank before */
  for (int s = 0; s < P; s++) {
    e[s] = 0; /* what the first and last stages add */
    if (s == 0) e[s] += fs[s]->pro.fwd + fs[s]->pro.bwd;
    if (s == P - 1) e[s] += fs[s]->epi.fwd + fs[s]->epi.bwd;
    if (t->pre[0]) continue; /* layers that differ: caps by first layer */
    size_t at = M->memo ? most_slot(M, t, (int)(ss[s] - M->S), P, s) : 0;
    if (M->memo && at == last) { /* the middle ranks of a group: alike */
      u[s] = u[s - 1];
      continue;
    }
    last = at;
    struct most_memo *w = M->memo ? &M->memo[at] : NULL;
    /* the memo's hit here, the rest in most_of (tens of millions a plan) */
    u[s] = w && w->fam == M->fam && w->dp == t->dp && w->v == t->v
               ? w->u
               : most_of(M, t, fs[s], ss[s], P, s, w);
    if (u[s] > most) u[s] = most;
    if (u[s] < 1) return 0; /* this rank cannot hold a layer */
  }
  return 1;
}

/* The split of a model of one kind of layer into n (layers per rank, a
 * multiple of v): 1, or 0 when none fits. */
static int alike_split(const mixed_t *M, const trial_t *t, int P,
                       const double *au, const double *e, const int *u,
                       int *n) {
  int L = M->S[0].L, v = t->v;
  if (fixed_split(M->S[0].o, L, P, n)) { /* strata estimate's split */
    for (int s = 0; s < P; s++)
      if (n[s] < 1 || n[s] % v || n[s] / v > u[s]) return 0;
    return 1;
  }
  /* in units: the interleaved step is near 1/v of the 1F1B one of m v
   * micro-batches */
  if (!isfinite(st__split_linear(L / v, P, t->m * v, au, e, u, n))) return 0;
  for (int s = 0; s < P; s++)
    n[s] *= v;
  return 1;
}

/* Split and cost one mixed configuration; keep it when best. */
static int try_config(mixed_t *M, const trial_t *t) {
  int L = M->S[0].L, P = 0, u[ST__MAX_PP], n[ST__MAX_PP];
  double a[ST__MAX_PP], au[ST__MAX_PP], e[ST__MAX_PP];
  const st__family_t *fs[ST__MAX_PP];
  st__search_t *ss[ST__MAX_PP];
  for (int j = 0; j < M->K; j++)
    P += t->pp[j];
  if (P < 2 || P * t->v > L || P > ST__MAX_PP) return 0;
  if (t->v > 1 && !interleaves(M, P, t->v, t->dp, t->b)) return 0;
  P = 0;
  for (int j = 0; j < M->K; j++)
    for (int q = 0; q < t->pp[j]; q++, P++) {
      fs[P] = t->f[t->order[j]];
      ss[P] = &M->S[t->order[j]];
      a[P] = t->a[t->order[j]];
      au[P] = a[P] * t->v; /* a unit: one layer in each of v chunks */
    }
  if (M->S[0].o->pp && P != M->S[0].o->pp) return 0;
  if (!rank_caps(M, t, P, fs, ss, e, u)) return 0;
  if (!t->pre[0] && !floor_alike(M, t, P, au, e, u)) {
    M->floored++;
    return 0;
  }
  if (t->pre[0]) { /* layers that differ */
    int rc = prefix_split(M, t, P, ss, e, n);
    if (rc <= 0) return rc;
  } else if (!alike_split(M, t, P, au, e, u, n)) {
    return 0;
  }
  if (!split_beats(M, t, P, ss, a, e, n)) {
    M->floored++;
    return 0;
  }
  st__cfg_t cf = {fs[0], P,  t->dp, t->v, t->b, t->m, 0, 0, n,
                  fs,    ss, 0,     0,    0,    0,    0, 0};
  st__cost_t c;
  /* the bound first (no schedule run): most splits end there */
  int rc = st__cfg_cost_cut(&M->S[0], &cf, 0, cut(M), &c);
  if (rc || c.fits != 1) return rc;
  /* then exactly, the schedule stopped once it cannot beat the cut */
  rc = st__cfg_cost_cut(&M->S[0], &cf, 1, cut(M), &c);
  M->tried++;
  if (rc || !c.fits || !(c.step < cut(M))) return rc;
  M->have = 1;
  M->cost = c;
  M->best = cf;
  memcpy(M->split, n, sizeof(int) * (size_t)P);
  memcpy(M->fs, fs, sizeof fs[0] * (size_t)P);
  memcpy(M->ss, ss, sizeof ss[0] * (size_t)P);
  M->best.split = M->split;
  M->best.fs = M->fs;
  M->best.ss = M->ss;
  return 0;
}

/* The least step to beat: the best mixed configuration so far, or the
 * seed from the groups alone (what a mixed one must beat to be kept). */
static double cut(const mixed_t *M) {
  double best = M->have ? M->cost.step : INFINITY;
  return best < M->seed ? best : M->seed;
}

/* How fast group z runs the model: the layers (the group-0 work, when
 * layers differ) it gets through per second and stage, at most. */
static double speed(const trial_t *t, int z) {
  double a = t->pre[0] ? t->kappa[z] : t->a[z];
  return t->f[z] && a > 0 && isfinite(a) ? 1 / a : 0;
}

/* The most stages group z can hold in one pipeline at t's dp. */
static int most_stages(const mixed_t *M, const trial_t *t, int z) {
  const st__search_t *S = &M->S[z];
  int most = t->f[z] ? S->total / (t->f[z]->tcp * t->dp) : 0;
  if (most > S->L) most = S->L;
  if (S->o->max_pp > 0 && most > S->o->max_pp) most = S->o->max_pp;
  return most;
}

/* The pipeline's most stages (its layers over the v chunks a rank holds
 * one of each, or --pp). */
static int room_of(const mixed_t *M, int v) {
  const strata_plan_opts_t *o = M->S[0].o;
  int L = M->S[0].L / v, room = L < ST__MAX_PP ? L : ST__MAX_PP;
  return o->pp && o->pp < room ? o->pp : room;
}

/* The most speed the groups at positions j.. can add with at most room
 * stages: the fastest filled first (the fractional knapsack's greedy,
 * exact here: every stage weighs one). */
static double fill_rate(const mixed_t *M, const trial_t *t, int j, int room) {
  double v[MAX_GROUPS], rate = 0;
  int cap[MAX_GROUPS], n = 0;
  for (int i = j; i < M->K; i++) {
    v[n] = speed(t, t->order[i]);
    cap[n++] = most_stages(M, t, t->order[i]);
  }
  while (room > 0) {
    int k = -1;
    for (int i = 0; i < n; i++)
      if (cap[i] > 0 && (k < 0 || v[i] > v[k])) k = i;
    if (k < 0) break;
    int take = cap[k] < room ? cap[k] : room;
    rate += take * v[k];
    room -= take;
    cap[k] = 0;
  }
  return rate;
}

/* No split beats m x the work over the stages' summed speed: the busiest
 * stage holds at least its share of a perfectly balanced continuous
 * split (layers that differ: a layer takes at least kappa_z its group-0
 * time on group z, so the stages hold the group-0 work W in time T only
 * if W <= T x the sum of 1 / kappa over them). */
static double bound_of(const mixed_t *M, const trial_t *t, double rate) {
  double W = t->pre[0] ? t->pre[0][M->S[0].L] : M->S[0].L;
  return rate > 0 ? t->m * W / rate : INFINITY;
}

/* The limit: the search stops at the deadline with something to answer
 * (a mixed configuration or a group's plan), else at the limit itself. */
static int out_of_time(mixed_t *M) {
  /* the clock every 64 configurations: each costs well under a
   * millisecond, and reading the clock was a fifteenth of the search */
  if (M->deadline <= 0 || (M->leaves++ & 63)) return M->stopped;
  double now = strata_now();
  if (M->deadline > 0 && now > M->deadline &&
      (isfinite(cut(M)) || now > M->limit_end))
    M->stopped = 1;
  return M->stopped;
}

/* The places a rank's memory can differ by (caps_at): first, middle and
 * last with the fewest micro-batches in flight each takes, pp 2 and more;
 * a place of a longer pipeline holds no more than these (more in flight). */
static const int places[5][2] = {{2, 0}, {2, 1}, {3, 0}, {3, 1}, {3, 2}};

/* Each group's most work a stage holds anywhere (t->most), at t's family
 * and dp: the most of its places' layers (layers alike), or of their
 * widest windows of group-0 work (layers that differ; interleaved, where
 * a longer pipeline holds more micro-batches in flight and the places do
 * not bound it, all of it: floor_branch reads no cap there). */
static int most_work(mixed_t *M, trial_t *t) {
  int L = M->S[0].L, rc = 0;
  if (t->pre[0] && t->v > 1) {
    for (int z = 0; z < M->K; z++)
      t->most[z] = t->pre[0][L];
    return 0;
  }
  int *cap = t->pre[0] ? strata_malloc(sizeof(int) * (size_t)L) : NULL;
  if (t->pre[0] && !cap) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int z = 0; z < M->K; z++) {
    t->most[z] = 0;
    for (int q = 0; q < 5 && t->f[z]; q++) {
      int P = places[q][0], s = places[q][1];
      double w = 0;
      if (cap) {
        caps_at(M, t, z, P, s, cap);
        for (int k = 0; k < L; k++)
          if (t->pre[0][k + cap[k]] - t->pre[0][k] > w)
            w = t->pre[0][k + cap[k]] - t->pre[0][k];
      } else { /* 1F1B's: the memo's slots hold them at v 1 */
        trial_t one = *t;
        one.v = 1;
        w = most_of(M, &one, t->f[z], &M->S[z], P, s,
                    M->memo ? &M->memo[most_slot(M, &one, z, P, s)] : NULL);
      }
      if (w > t->most[z]) t->most[z] = w;
    }
  }
  strata_free(cap);
  return rc;
}

/* Whether a pipeline of the unit with the pp of positions before j might
 * beat the cut: st__split_floor over those stages (a layer's least work
 * each) and every stage the groups from j can hold after them (none
 * needed), each at its group's most work anywhere, with no embedding or
 * head.  A pipeline of the branch is such a one with stages taken out,
 * and a stage taken out (no work, no time) lowers no rank's floor. */
static int floor_branch(const mixed_t *M, const trial_t *t, int j) {
  static const double zero[ST__MAX_PP];
  double a[ST__MAX_PP], lo[ST__MAX_PP], hi[ST__MAX_PP], least = 1;
  int P = 0, differ = t->pre[0] != NULL, L = M->S[0].L;
  const double *w = t->fold[0]; /* layers that differ: a position's work */
  if (STRATA_CHOICE(M->S[0].o->recompute_method) == STRATA_RECOMPUTE_BLOCK ||
      (differ && !(t->rho > 0)))
    return 1;
  for (int l = 0; differ && l < t->U; l++)
    if (l == 0 || w[l + 1] - w[l] < least) least = w[l + 1] - w[l];
  for (int i = 0; i < M->K; i++) {
    int z = t->order[i], n = i < j ? t->pp[i] : most_stages(M, t, z);
    if (P + n > ST__MAX_PP) return 1;
    for (int q = 0; q < n; q++, P++) {
      a[P] = differ ? t->kappa[z] : t->a[z] * t->v;
      lo[P] = i < j ? least : 0;
      /* interleaved: in units of v layers (all the work when layers
       * differ), with no memory cap (the most work was found without
       * interleaving) */
      hi[P] = t->v > 1 ? (differ ? w[t->U] : L / t->v) : t->most[z];
    }
  }
  /* interleaved, layers that differ: m / rho and the cut / rho
   * (floor_differ) */
  if (differ)
    return st__split_floor(P, w[t->U], t->m / t->rho, a, zero, lo, hi, 0,
                           (cut(M) - fixed_of(M)) / t->rho);
  /* interleaved: v times the floor with m v micro-batches (floor_alike) */
  return st__split_floor(P, L / t->v, t->m * t->v, a, zero, lo, hi, 1,
                         (cut(M) - fixed_of(M)) * t->v);
}

/* Every pp_j from the most group order[j] holds down (the configurations
 * that use more GPUs come first and set a low cut early), a branch
 * skipped where even the fastest filling of the positions after j cannot
 * bring its bound under the cut; P stages so far, of summed speed rate. */
static int each_pp(mixed_t *M, trial_t *t, int j, int used, int P,
                   double rate) {
  if (j == M->K) {
    const strata_plan_opts_t *o = M->S[0].o;
    if (o->cancel && *o->cancel)
      return strata_error(STRATA_ECANCELED, "interrupted: nothing was written");
    if (used < 2 || out_of_time(M)) return 0;
    if (bound_of(M, t, rate) >= cut(M)) return 0;
    return try_config(M, t);
  }
  int z = t->order[j], rc = 0, room = room_of(M, t->v) - P;
  int hi = most_stages(M, t, z);
  if (hi > room) hi = room;
  if (j == 0 && !floor_branch(M, t, 0)) return 0; /* the whole unit */
  for (int p = hi; p >= 0 && !rc && !out_of_time(M); p--) {
    double r = rate + p * speed(t, z);
    if (bound_of(M, t, r + fill_rate(M, t, j + 1, room - p)) >= cut(M))
      continue; /* a smaller p may still let a faster group in */
    t->pp[j] = p;
    if (j + 1 < M->K && !floor_branch(M, t, j + 1)) continue;
    rc = each_pp(M, t, j + 1, used + (p > 0), P + p, r);
  }
  return rc;
}

static int next_perm(int *v, int n) {
  int i = n - 2, j = n - 1;
  while (i >= 0 && v[i] >= v[i + 1])
    i--;
  if (i < 0) return 0;
  while (v[j] <= v[i])
    j--;
  int x = v[i];
  v[i] = v[j];
  v[j] = x;
  for (int a = i + 1, b = n - 1; a < b; a++, b--)
    x = v[a], v[a] = v[b], v[b] = x;
  return 1;
}

/* One family's times on every group: its match there, one layer's time
 * (or the prefix sums, into pre, and the kappa ratios when layers
 * differ), its micro-batch. */
static void family_times(const mixed_t *M, int i, int differ, double *pre,
                         trial_t *t) {
  size_t L = (size_t)M->S[0].L;
  memset(t, 0, sizeof *t);
  t->f[0] = &M->S[0].fam[i];
  for (int z = 1; z < M->K; z++)
    t->f[z] = match(M, z, t->f[0]);
  for (int z = 0; z < M->K; z++) {
    if (!t->f[z]) continue;
    if (differ) { /* prefix sums, and kappa bounds below */
      double *own = pre + (size_t)z * (L + 1);
      prefix_times(&M->S[z], t->f[z], own);
      t->pre[z] = own;
    } else {
      t->a[z] = layer_time(&M->S[z], t->f[z]);
    }
  }
  for (int z = 0; z < M->K && differ; z++) {
    t->kappa[z] = INFINITY;
    for (int l = 0; t->f[z] && l < (int)L; l++) {
      double r =
          (t->pre[z][l + 1] - t->pre[z][l]) / (t->pre[0][l + 1] - t->pre[0][l]);
      if (r < t->kappa[z]) t->kappa[z] = r;
    }
  }
  t->b = M->S[0].graphs[t->f[0]->graph]->micro_batch;
  t->v = 1;
  t->U = (int)L;
  t->rho = 1;
  memcpy(t->fold, t->pre, sizeof t->fold);
  for (int j = 0; j < M->K; j++)
    t->order[j] = j;
}

/* Layers that differ, interleaved (t->v > 1): rank s's chunks hold
 * positions [o, o + n) of every round of U = L / v layers, so its work a
 * micro-batch is F(o + n) - F(o) with F(i) = sum_k P(i + k U) - P(k U),
 * P the prefix sums on its group: the prefix-sum split runs on F over the
 * U positions as it runs on P over the L layers.  F into fold (K x (L + 1)
 * at most), and rho: the least share of a position's group-0 work in the
 * first round. */
static void fold_prefix(const mixed_t *M, trial_t *t, double *fold) {
  int L = M->S[0].L, v = t->v, U = L / v;
  t->U = U;
  t->rho = 1;
  if (v <= 1) return;
  for (int z = 0; z < M->K; z++) {
    const double *P = t->pre[z];
    double *F = fold + (size_t)z * ((size_t)L + 1);
    t->fold[z] = P ? F : NULL;
    for (int i = 0; P && i <= U; i++) {
      F[i] = 0;
      for (int k = 0; k < v; k++)
        F[i] += P[i + k * U] - P[k * U];
    }
  }
  const double *P = t->pre[0], *F = t->fold[0];
  for (int i = 0; i < U; i++) {
    double r = (P[i + 1] - P[i]) / (F[i + 1] - F[i]);
    if (r < t->rho) t->rho = r;
  }
}

/* A unit of the search: a family, a dp and a group order, with the bound
 * of all their configurations (it depends on the order not at all). */
typedef struct {
  double lb;
  int fam, dp, perm, v;
} task_t;

static int cmp_task(const void *a, const void *b) {
  const task_t *x = a, *y = b;
  if (x->lb != y->lb) return x->lb < y->lb ? -1 : 1;
  if (x->fam != y->fam) return x->fam - y->fam;
  if (x->dp != y->dp) return x->dp - y->dp;
  if (x->v != y->v) return x->v - y->v;
  return x->perm - y->perm;
}

/* The virtual stages a mixed configuration may have: --vpp's, else 1 and
 * (Megatron-LM's schedule) every v up to 64 that divides the layers into
 * equal rounds (layers that differ: the prefix sums folded over them);
 * their count into vs. */
static int virtual_stages(const mixed_t *M, int *vs) {
  const strata_plan_opts_t *o = M->S[0].o;
  int n = 0;
  if (o->vpp > 0) {
    vs[n++] = o->vpp;
    return n;
  }
  vs[n++] = 1;
  for (int v = 2; v <= 64 && o->megatron; v++)
    if (M->S[0].L % v == 0 && 2 * v <= M->S[0].L) vs[n++] = v;
  return n;
}

/* The group orders searched: every permutation up to three groups (the
 * first stage holds the most micro-batches in flight, so which GPU leads
 * matters), the spec's order beyond.  Their count. */
static int orders(int K, int perm[][MAX_GROUPS]) {
  int v[MAX_GROUPS] = {0}, n = 0;
  for (int j = 0; j < K; j++)
    v[j] = j;
  do
    memcpy(perm[n++], v, sizeof v);
  while (K <= 3 && next_perm(v, K));
  return n;
}

/* Every (family, dp, order) with its bound, least first; tmpl[i] holds
 * family i's times (pre: its prefix sums, K x (L + 1) per family). */
static int make_tasks(mixed_t *M, trial_t *tmpl, double *pre, int differ,
                      int n_perm, task_t **out, int *n_out) {
  const st__search_t *S0 = &M->S[0];
  const strata_plan_opts_t *o = S0->o;
  size_t L = (size_t)S0->L, cap = 64;
  int n = 0, vs[64], nv = virtual_stages(M, vs);
  task_t *v = strata_malloc(cap * sizeof *v);
  if (!v) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int i = 0; i < S0->n_fam; i++) {
    if (!S0->fam[i].ok) continue;
    trial_t *t = &tmpl[i];
    /* pre is NULL when the layers are alike (no prefix sums kept) */
    family_times(M, i, differ, pre ? pre + (size_t)i * M->K * (L + 1) : NULL,
                 t);
    int micro = o->global_batch / t->b;
    if (o->global_batch % t->b) continue;
    for (int dp = 1; dp <= micro; dp++) {
      if (micro % dp || (o->dp && dp != o->dp)) continue;
      t->dp = dp, t->m = micro / dp;
      for (int q = 0; q < n_perm * nv; q++) {
        /* fewer stages with more chunks a rank: the bound by v */
        double lb =
            bound_of(M, t, fill_rate(M, t, 0, room_of(M, vs[q / n_perm])));
        if (!isfinite(lb)) continue;
        if ((size_t)n == cap) {
          task_t *w = strata_realloc(v, 2 * cap * sizeof *v);
          if (!w) {
            strata_free(v);
            return strata_error(STRATA_ENOMEM, "out of memory");
          }
          v = w, cap *= 2;
        }
        v[n++] = (task_t){lb, i, dp, q % n_perm, vs[q / n_perm]};
      }
    }
  }
  qsort(v, (size_t)n, sizeof *v, cmp_task);
  *out = v;
  *n_out = n;
  return 0;
}

/* The memos of try_config, where they take little memory (else none). */
static void make_memos(mixed_t *M, int differ) {
  size_t L = (size_t)M->S[0].L,
         cells = (size_t)M->K * (L + 1) * L + (size_t)M->K * 3 * 2 * (L + 1);
  if (!differ && cells <= ((size_t)1 << 22)) {
    M->memo = strata_malloc(cells * sizeof *M->memo);
    for (size_t k = 0; M->memo && k < cells; k++)
      M->memo[k].fam = -1;
  }
  size_t slots = (size_t)M->K * 3 * 2 * (L + 1), one = slots;
  int vs[64], nv = virtual_stages(M, vs);
  M->cap_nv = 0;
  for (int i = 0; i < nv; i++) { /* interleaved: by (group, pp, rank) */
    size_t U = L / (size_t)vs[i];
    if (vs[i] <= 1) continue;
    M->cap_v[M->cap_nv] = vs[i];
    M->cap_base[M->cap_nv++] = slots;
    slots += (size_t)M->K * (U + 1) * U;
  }
  if (slots * L > ((size_t)1 << 24)) /* too many: 1F1B's alone */
    slots = one, M->cap_nv = 0;
  if (differ && slots * L <= ((size_t)1 << 24)) {
    M->caps = strata_malloc(slots * L * sizeof *M->caps);
    M->cap_tag = strata_malloc(slots * sizeof *M->cap_tag);
    M->cap_hi = strata_malloc(slots * sizeof *M->cap_hi);
    for (size_t k = 0; M->caps && M->cap_tag && k < slots; k++)
      M->cap_tag[k].fam = -1;
    if (!M->caps || !M->cap_tag || !M->cap_hi) {
      strata_free(M->caps), strata_free(M->cap_tag), strata_free(M->cap_hi);
      M->caps = NULL, M->cap_tag = NULL, M->cap_hi = NULL;
    }
  }
}

/* The tasks least bound first, until the bound reaches the cut (no
 * configuration left can beat it) or the time is up. */
static int run_tasks(mixed_t *M, const trial_t *tmpl, const task_t *v, int n,
                     int perm[][MAX_GROUPS]) {
  int rc = 0, i = 0;
  for (; i < n && !rc && !M->stopped; i++) {
    if (v[i].lb >= cut(M)) break;
    trial_t t = tmpl[v[i].fam];
    M->fam = v[i].fam;
    t.dp = v[i].dp;
    t.v = v[i].v;
    t.m = M->S[0].o->global_batch / t.b / t.dp;
    if (t.pre[0]) fold_prefix(M, &t, M->fold);
    memcpy(t.order, perm[v[i].perm], sizeof t.order);
    rc = most_work(M, &t);
    if (!rc) rc = each_pp(M, &t, 0, 0, 0, 0);
    double best = M->have && M->cost.step < M->alone ? M->cost.step : M->alone;
    st__progress_note(M->S[0].prog, "mixed search", i + 1, n, best,
                      v[i].lb < best ? v[i].lb : best);
  }
  /* stopped inside task i - 1: nothing unvisited beats its bound */
  M->bound = M->stopped && i > 0 ? v[i - 1].lb : INFINITY;
  return rc;
}

static int search_mixed(mixed_t *M) {
  const st__search_t *S0 = &M->S[0];
  int rc = 0, n = 0, differ = S0->graphs[0]->n_blocks != 1;
  int perm[24][MAX_GROUPS], n_perm = orders(M->K, perm);
  size_t L = (size_t)S0->L;
  trial_t *tmpl = NULL;
  task_t *v = NULL;
  double *pre = NULL;
  for (int k = 0; k < M->K && !rc; k++)
    rc = st__eval_scratch(&M->S[k]);
  if (!rc && (!(tmpl = strata_calloc((size_t)S0->n_fam + 1, sizeof *tmpl)) ||
              (differ &&
               !(pre = strata_malloc(sizeof(double) * ((size_t)S0->n_fam + 1) *
                                     (size_t)M->K * (L + 1))))))
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  if (!rc) rc = make_tasks(M, tmpl, pre, differ, n_perm, &v, &n);
  if (!rc && differ &&
      !(M->fold = strata_malloc(sizeof(double) * (size_t)M->K * (L + 1))))
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  if (!rc) make_memos(M, differ);
  if (!rc) rc = run_tasks(M, tmpl, v, n, perm);
  strata_free(M->memo);
  M->memo = NULL;
  strata_free(M->caps);
  strata_free(M->cap_tag);
  strata_free(M->cap_hi);
  M->caps = NULL, M->cap_tag = NULL, M->cap_hi = NULL;
  strata_free(M->fold);
  M->fold = NULL;
  strata_free(pre);
  strata_free(tmpl);
  strata_free(v);
  return rc;
}

/* Each stage's group and GPU model; the groups the plan counts. */
static void mark_groups(strata_plan_t *p, const strata_cluster_t *c,
                        const mixed_t *M, const st__cfg_t *cf, int alone) {
  p->n_groups = M->K;
  for (int k = 0; k < p->n_stages; k++) {
    int z = alone;
    if (cf)
      for (z = 0; z < M->K && cf->ss[k % cf->p] != &M->S[z]; z++)
        ;
    p->stages[k].group = z;
    snprintf(p->stages[k].gpu_model, sizeof p->stages[k].gpu_model, "%s",
             strata_cluster_gpu_model(strata_cluster_group(c, z))->name);
  }
}

/* A mixed plan's GPU figures: the peak FLOP/s its MFU divides by is the
 * mean of its devices' (each stage's t x dp on its group's GPU); the
 * memory it reports against is that of the GPU of its fullest rank. */
static void mixed_rates(strata_plan_t *p, const strata_cluster_t *c,
                        const strata_plan_opts_t *o) {
  double flops = 0, peak = -1;
  int n = 0;
  for (int r = 0; r < p->pp; r++) {
    const strata_plan_stage_t *st = &p->stages[r]; /* stage r on rank r */
    const strata_cluster_t *g = strata_cluster_group(c, st->group);
    int d = st->nodes * st->gpus_per_node * p->dp;
    flops +=
        d * strata_cluster_gpu_peak_flops_at(g, strata_lowp_peak_bits(p->fp8));
    n += d;
    if (p->ranks[r].mem.total > peak && !(o->memory_budget > 0)) {
      peak = p->ranks[r].mem.total;
      p->gpu_memory_bytes = (double)strata_cluster_gpu_memory(g);
    }
  }
  if (n > 0) p->gpu_peak_flops = flops / n;
}

/* The runners-up: the mixed best and each group's best, by step. */
static int merge_top(strata_plan_t *p, const strata_plan_config_t *x, int n,
                     int keep) {
  strata_plan_config_t *v =
      strata_calloc((size_t)(p->n_top + n) + 1, sizeof *v);
  int m = 0;
  if (!v) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int i = 0; i < p->n_top; i++)
    v[m++] = p->top[i];
  for (int i = 0; i < n; i++)
    v[m++] = x[i];
  for (int i = 1; i < m; i++) /* insertion sort: a handful */
    for (int j = i; j > 0 && v[j].step_seconds < v[j - 1].step_seconds; j--) {
      strata_plan_config_t y = v[j];
      v[j] = v[j - 1];
      v[j - 1] = y;
    }
  strata_free(p->top);
  p->top = v;
  p->n_top = m < keep ? m : keep;
  return 0;
}

/* The step a mixed configuration must beat to enter the plan's best keep:
 * the keep-th of the rows the groups alone give it (the best plan's list
 * and each other plan's first), just above so that a tie still enters;
 * INFINITY while they give fewer. */
static double seed_of(strata_plan_t *const *alone, int K, int keep) {
  double v[MAX_GROUPS * 64];
  int n = 0, b = -1;
  for (int z = 0; z < K; z++)
    if (alone[z] && (b < 0 || alone[z]->step_seconds < alone[b]->step_seconds))
      b = z;
  for (int z = 0; z < K; z++)
    for (int i = 0; alone[z] && i < alone[z]->n_top && n < MAX_GROUPS * 64; i++)
      if (z == b || i == 0) v[n++] = alone[z]->top[i].step_seconds;
  if (n < keep) return INFINITY;
  for (int i = 1; i < n; i++) /* insertion sort: a handful */
    for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
      double x = v[j];
      v[j] = v[j - 1];
      v[j - 1] = x;
    }
  return nextafter(v[keep - 1], INFINITY);
}

/* Whether a group before z has a plan of its own. */
static int have_alone(strata_plan_t *const *alone, int z) {
  for (int k = 0; k < z; k++)
    if (alone[k]) return 1;
  return 0;
}

/* Under a time limit, the search of group z (z = K: the mixed search)
 * stops at its share of what is left before the deadline (each search
 * left an equal part), so that the first group's does not take it all;
 * 0: the deadline is past and a plan is in hand, so it is not searched
 * (nothing of its space is proven: the plan keeps no bound). */
static int search_share(mixed_t *M, int z, int have) {
  if (M->deadline <= 0) return 1;
  double now = strata_now(), left = M->deadline - now;
  if (left <= 0 && have) {
    M->stopped = 1;
    M->bound = 0;
    return 0;
  }
  if (z < M->K && left > 0) M->S[z].deadline = now + left / (M->K - z + 1);
  return 1;
}

/* "node group Z (GPU)": what the progress says a phase works on. */
static void group_name(const strata_cluster_t *c, int z, char *buf, size_t n) {
  snprintf(buf, n, "node group %d (%s)", z,
           strata_cluster_gpu_model(strata_cluster_group(c, z))->name);
}

/* Each group alone, its plan into alone[z] (NULL where none fits, the
 * first such group's reason into why); *late where a time limit cut a
 * group's search short of any plan. */
static int plan_alone(mixed_t *M, const strata_cluster_t *c,
                      strata_plan_t **alone, char *why, size_t wn, int *late) {
  int rc = 0;
  for (int z = 0; z < M->K && !rc; z++) {
    char where[64];
    group_name(c, z, where, sizeof where);
    st__progress_where(M->S[0].prog, where);
    if (!search_share(M, z, have_alone(alone, z))) continue;
    rc = st__choose(&M->S[z], &alone[z]);
    *late |= rc == STRATA_ETIMEDOUT;
    if (rc == STRATA_EINFEASIBLE || rc == STRATA_ETIMEDOUT) {
      /* the others may still run it */
      if (!why[0])
        snprintf(why, wn, "on node group %d (%s) alone, %s", z,
                 strata_cluster_gpu_model(strata_cluster_group(c, z))->name,
                 strata_last_error());
      strata_error_clear();
      rc = 0;
      continue;
    }
    if (!rc) {
      mark_groups(alone[z], c, M, NULL, z);
      for (int i = 0; i < alone[z]->n_top; i++)
        alone[z]->top[i].group = z + 1;
    }
  }
  return rc;
}

/* The plan among each group alone and the spread one: the least by the
 * objective (--objective; time: the step), the faster of equals; a plan
 * chosen by cost or energy keeps the fastest's figures beside its own. */
static int by_objective(const mixed_t *M, const strata_cluster_t *c,
                        strata_plan_t *const *alone, strata_plan_t *mixed,
                        strata_plan_t **best) {
  const strata_plan_opts_t *o = M->S[0].o;
  strata_plan_t *v[MAX_GROUPS + 1], *fast = NULL;
  int n = 0, rc = 0;
  for (int z = 0; z < M->K; z++)
    if (alone[z]) v[n++] = alone[z];
  if (mixed) v[n++] = mixed;
  for (int i = 0; i < n && !rc; i++)
    rc = st__plan_cost(v[i], M->S[0].g, c, o);
  for (int i = 0; i < n && !rc; i++) {
    double a = st__objective_of(v[i], o->objective);
    double b = *best ? st__objective_of(*best, o->objective) : 0;
    if (!*best || a < b ||
        (a == b && v[i]->step_seconds < (*best)->step_seconds))
      *best = v[i];
    if (!fast || v[i]->step_seconds < fast->step_seconds) fast = v[i];
  }
  if (!rc && *best && fast != *best) {
    (*best)->time_best_seconds = fast->train_seconds;
    (*best)->time_best_cost = fast->cost_usd;
    (*best)->time_best_energy = fast->energy_kwh;
  }
  return rc;
}

static int plan_groups(mixed_t *M, const strata_cluster_t *c,
                       strata_plan_t **out) {
  const strata_plan_opts_t *o = M->S[0].o;
  strata_plan_t *alone[MAX_GROUPS] = {0}, *mixed = NULL, *best = NULL;
  strata_plan_config_t extra[MAX_GROUPS + 1];
  int nx = 0, keep = o->top > 0 ? o->top : 1, late = 0;
  char why[512] = "";
  int rc = plan_alone(M, c, alone, why, sizeof why, &late);
  /* DeepSpeed's PipelineModule gives no stage a layer count of its own
   * (export_deepspeed.c): for it, each group alone */
  if (!rc) M->seed = seed_of(alone, M->K, keep);
  for (int z = 0; z < M->K; z++)
    if (alone[z] && alone[z]->step_seconds < M->alone)
      M->alone = alone[z]->step_seconds;
  st__progress_where(M->S[0].prog, "all node groups");
  if (!rc && o->framework != STRATA_FRAMEWORK_DEEPSPEED &&
      search_share(M, M->K, have_alone(alone, M->K)))
    rc = search_mixed(M);
  if (!rc && M->have) {
    rc = st__build_plan(&M->S[0], &M->best, &M->cost, &mixed);
    if (rc == 1) { /* a stage does not fit once solved: not this one */
      rc = 0;
      mixed = NULL;
    }
    if (mixed) {
      mark_groups(mixed, c, M, &M->best, 0);
      mixed_rates(mixed, c, M->S[0].o);
    }
  }
  if (!rc) rc = by_objective(M, c, alone, mixed, &best);
  /* nothing found, but the limit cut a search short: not proven */
  late |= M->stopped || (M->deadline > 0 && strata_now() > M->deadline);
  if (!rc && !best)
    rc = strata_error(late ? STRATA_ETIMEDOUT : STRATA_EINFEASIBLE,
                      "no configuration fits on any node group of cluster "
                      "'%s'%s%s; %s",
                      strata_cluster_name(c),
                      o->framework == STRATA_FRAMEWORK_DEEPSPEED
                          ? " (DeepSpeed's pipeline runs on one group)"
                          : " or across them",
                      late ? " within the time limit" : "", why);
  if (!rc) { /* an alone plan's own list holds its row already */
    if (mixed) st__plan_config(&M->best, &M->cost, &M->S[0], &extra[nx++]);
    for (int z = 0; z < M->K; z++)
      if (alone[z] && alone[z] != best && alone[z]->n_top > 0)
        extra[nx++] = alone[z]->top[0];
    rc = merge_top(best, extra, nx, keep);
  }
  for (int z = 0; z < M->K; z++)
    if (alone[z] != best) strata_plan_destroy(alone[z]);
  if (mixed != best) strata_plan_destroy(mixed);
  if (rc) {
    if (best) strata_plan_destroy(best);
    best = NULL;
  }
  *out = best;
  return rc;
}

/* The mixed plan's statistics: every group's search together. */
static void stats(mixed_t *M, strata_plan_t *p, double t0) {
  p->subproblems_distinct = p->subproblems_total = 0;
  p->ilps_solved = p->cache_hits = 0;
  p->configs_bounded = p->configs_evaluated = 0;
  for (int z = 0; z < M->K; z++) {
    const st__search_t *S = &M->S[z];
    p->subproblems_distinct += S->subs.n;
    p->subproblems_total += S->subs.requests;
    p->ilps_solved += S->ilps;
    p->cache_hits += S->hits;
    p->configs_bounded += (int)S->bounded;
    p->configs_evaluated += (int)S->evaluated;
  }
  p->configs_evaluated += (int)M->tried;
  p->plan_seconds = strata_now() - t0;
  p->time_limited = M->stopped;
  double bound = M->bound; /* the mixed search's, its groups' */
  for (int z = 0; z < M->K; z++) {
    p->time_limited |= M->S[z].deadline < 0; /* a group's search stopped */
    if (M->S[z].bound_left < bound) bound = M->S[z].bound_left;
  }
  if (p->time_limited) {
    st__progress_gap(M->S[0].prog, p->step_seconds, bound);
    p->bound_seconds = st__bound_kept(p->step_seconds, bound);
  }
}

/* Group z's share of the time left to the deadline for its stage solves:
 * of the 70 % of the whole limit the solves get, what is left after the
 * groups before it, over the groups left. */
static double share_of(const mixed_t *M, int z) {
  const st__search_t *S0 = &M->S[0];
  double T = S0->o->time_limit, now = strata_now();
  double begin = S0->deadline - 0.9 * T, solves_end = begin + 0.7 * 0.9 * T;
  double left = S0->deadline - now;
  if (!(T > 0) || !(left > 0)) return 1;
  double mine = (solves_end - now) / (M->K - z);
  return mine > 0 ? mine / left : 0.01;
}

int st__plan_mixed(const strata_graph_t *g, const strata_cluster_t *c,
                   const strata_plan_opts_t *o, strata_plan_t **out) {
  mixed_t *M = strata_calloc(1, sizeof *M);
  double t0 = strata_now();
  int rc = 0;
  *out = NULL;
  if (!M) return strata_error(STRATA_ENOMEM, "out of memory");
  M->K = strata_cluster_group_count(c);
  if (M->K > MAX_GROUPS)
    rc = strata_error(STRATA_EUNSUPPORTED,
                      "cluster '%s' has %d node groups of different shapes; "
                      "the planner takes up to %d: give groups of one shape "
                      "one entry",
                      strata_cluster_name(c), M->K, MAX_GROUPS);
  /* one FP8 recipe for every group (Megatron-LM runs one): MXFP8 where
   * all are Blackwells, else delayed scaling, unless one is given */
  strata_plan_opts_t mo = *o;
  if (!mo.fp8_recipe && !rc &&
      (mo.precision == STRATA_PRECISION_FP8 ||
       mo.precision == STRATA_PRECISION_AUTO)) {
    int all = 1;
    for (int z = 0; z < M->K; z++)
      all &= st__blackwell(strata_cluster_group(c, z)) == 1;
    mo.fp8_recipe = all ? STRATA_LOWP_MXFP8 : STRATA_LOWP_DELAYED;
  }
  for (int z = 0; z < M->K && !rc; z++) {
    /* under a time limit, the groups' stage solves share 70 % of it
     * (group z its 1/(K - z) of what is left then), the rest for the
     * searches: no group's solves starve the others' */
    char where[64];
    group_name(c, z, where, sizeof where);
    rc = st__search_prepare_share(&M->S[z], g, strata_cluster_group(c, z), &mo,
                                  z ? &M->S[0] : NULL,
                                  z ? share_of(M, z) : 0.7 / M->K, where);
    M->prepared[z] = 1;
    if (rc)
      strata_error_prefix(
          "node group %d (%s)", z,
          strata_cluster_gpu_model(strata_cluster_group(c, z))->name);
    if (rc && st__narrow(o->precision) &&
        !(strata_cluster_perf(strata_cluster_group(c, z))->peak_fp8_flops >
          0)) { /* what a mixed cluster can do instead */
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", strata_last_error());
      rc = strata_error(rc,
                        "%s; --precision auto weighs FP8 on the node groups "
                        "that have it against BF16 on all of them",
                        msg);
    }
  }
  M->deadline = rc ? 0 : M->S[0].deadline;
  M->limit_end = rc ? 0 : M->S[0].limit_end;
  M->seed = M->bound = M->alone = INFINITY;
  if (!rc) { /* p2p between groups, as eval.c's affine model */
    strata_link_t x = strata_cluster_group_link(c);
    M->S[0].xp2p[0] = x.latency;
    M->S[0].xp2p[1] = 1.0 / x.bandwidth;
  }
  if (!rc) rc = plan_groups(M, c, out);
  if (!rc) stats(M, *out, t0);
  /* the first group's search holds the cache: released last */
  for (int z = (M->K < MAX_GROUPS ? M->K : MAX_GROUPS) - 1; z >= 0; z--)
    if (M->prepared[z]) st__search_release(&M->S[z]);
  strata_free(M);
  return rc;
}
