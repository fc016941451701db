/*
 * sched.c - the pipeline schedule of one training step, simulated op by
 * op rather than taken from a closed form, so that unequal stages, p2p
 * times and interleaving give the real makespan.
 *
 * Rank r holds model chunks r, r + pp, ... (K = pp * vpp chunks in model
 * order).  It runs Megatron-LM's order (megatron/core/pipeline_parallel/
 * schedules.py; Narayanan et al. 2021, sections 2.2.1-2.2.2): W_r warm-up
 * forwards, then one forward and one backward at a time, then the
 * remaining backwards, where W_r = min(pp - r - 1, m) without interleaving
 * and min((pp - r - 1) * 2 + (vpp - 1) * pp, m * vpp) with it.  The i-th
 * forward of a rank runs virtual chunk (i mod (pp vpp)) div pp on
 * micro-batch (i div (pp vpp)) pp + i mod pp; backwards walk the chunks
 * in reverse.  Forward m of chunk k needs forward m of chunk k - 1 plus
 * the p2p after it; backward m of chunk k needs backward m of chunk k + 1
 * plus that p2p (the last chunk's backward follows its own forward).  With
 * blocking p2p (Megatron-LM's non-interleaved send/recv) the sending rank
 * is busy for the transfer as well.  Every rank's order is fixed, so the
 * start times depend on nothing but the inputs: the result is the same
 * whatever order the ranks are visited in.
 */
#include <math.h>
#include <string.h>

#include "pipeline/search.h"

typedef struct {
  int chunk, mb, fwd;
} op_t;

static int warmup(const strata_sched_t *S, int r) {
  int p = S->pp, v = S->vpp, m = S->n_micro, w;
  if (v <= 1) {
    w = p - r - 1;
    return w < m ? w : m;
  }
  w = (p - r - 1) * 2 + (v - 1) * p;
  return w < m * v ? w : m * v;
}

/* A rank's i-th forward (or backward) as its group of p v ops, the chunk
 * c of its v within the group and the place j of the p micro-batches:
 * micro-batch (i div (p v)) p + i mod p, virtual chunk (i mod (p v)) div
 * p (walked in reverse by the backwards), kept by counting, not
 * dividing. */
typedef struct {
  int i, c, j, mb;
} cursor_t;

static void next_op(cursor_t *x, int p, int v) {
  x->i++, x->mb++;
  if (++x->j < p) return;
  x->j = 0, x->mb -= p; /* the same micro-batches, the next chunk */
  if (++x->c < v) return;
  x->c = 0, x->mb += p; /* the next group's */
}

static double p2p_at(const strata_sched_t *S, int k) {
  return S->p2p ? S->p2p[k] : 0;
}

/* When op o's input is there, or -1 if its producer has not run. */
static double ready_at(const strata_sched_t *S, op_t o) {
  int n = S->n_micro, K = S->pp * S->vpp;
  if (o.fwd) {
    if (o.chunk == 0) return 0;
    double s = S->f_start[(o.chunk - 1) * n + o.mb];
    return s < 0 ? -1 : s + S->fwd[o.chunk - 1] + p2p_at(S, o.chunk - 1);
  }
  if (o.chunk == K - 1) {
    double s = S->f_start[o.chunk * n + o.mb];
    return s < 0 ? -1 : s + S->fwd[o.chunk];
  }
  double s = S->b_start[(o.chunk + 1) * n + o.mb];
  return s < 0 ? -1 : s + S->bwd[o.chunk + 1] + p2p_at(S, o.chunk);
}

/* A rank's ints: its warm-up and its two cursors. */
#define RANK_INTS (1 + 2 * (int)(sizeof(cursor_t) / sizeof(int)))

/* The simulation's state: each rank's warm-up, its next forward and
 * backward, when it is free, and (for a cut) the compute its ops left
 * still take. */
typedef struct {
  int *warm;
  cursor_t *f, *b;
  double *free_at, *left;
  const double *after; /* added to a rank's end for the cut, or NULL */
  double *drain;       /* the backwards of the chunks before a rank's first
                          (and their p2p): the first rank ends after them */
  double lim;          /* stop once a rank must end past it */
} run_t;

/* Run rank r's next ops while their inputs are there, in its order (its
 * warm-up forwards, then a forward and a backward in turn, then the
 * backwards left); returns how many, or -1 once the step cannot end
 * before the cut: the rank's ops left run one after another from when it
 * is free, each at least its compute, and after its last (the backward of
 * its first chunk, last micro-batch) the ranks before it still run that
 * micro-batch's backwards of their chunks, down to the first rank. */
static int advance(strata_sched_t *S, int r, run_t *R) {
  int n = S->n_micro, p = S->pp, v = S->vpp, K = p * v, T = n * v, done = 0;
  int w = R->warm[r];
  cursor_t *F = &R->f[r], *B = &R->b[r];
  double *free_at = R->free_at;
  for (;;) {
    op_t o;
    o.fwd = F->i < T && (F->i < w || F->i - w == B->i);
    if (!o.fwd && B->i >= T) break;
    if (o.fwd)
      o.chunk = F->c * p + r, o.mb = F->mb;
    else
      o.chunk = (v - 1 - B->c) * p + r, o.mb = B->mb;
    double at = ready_at(S, o);
    if (at < 0) break;
    double start = at > free_at[r] ? at : free_at[r], end, work;
    if (o.fwd) {
      S->f_start[o.chunk * n + o.mb] = start;
      work = S->fwd[o.chunk];
      end = start + work;
      if (S->blocking_p2p && o.chunk < K - 1) end += p2p_at(S, o.chunk);
      next_op(F, p, v);
    } else {
      S->b_start[o.chunk * n + o.mb] = start;
      work = S->bwd[o.chunk];
      end = start + work;
      if (S->blocking_p2p && o.chunk > 0) end += p2p_at(S, o.chunk - 1);
      S->rank_end[r] = start + work;
      next_op(B, p, v);
    }
    free_at[r] = end;
    done++;
    if (R->after) {
      R->left[r] -= work;
      double tail = R->drain[r] + R->after[0];
      if (R->after[r] > tail) tail = R->after[r];
      /* its last op ends no sooner than its ops left after it is free;
       * once none is left, at its end (the blocking send after its last
       * backward is not the rank's: the drain has it) */
      double last = B->i < T ? free_at[r] + R->left[r] : S->rank_end[r];
      if (last + tail > R->lim) return -1;
    }
  }
  return done;
}

/* R's ints in one array of q ranks' (RANK_INTS each). */
static void ints_to(run_t *R, int *ints, int q) {
  R->warm = ints;
  R->f = (cursor_t *)(ints + q);
  R->b = R->f + q;
}

static int check(const strata_sched_t *S) {
  if (ST__SCHED_OWN(S->schedule) && S->pp >= 1 && S->vpp >= 1 &&
      S->n_micro >= 1)
    return st__sched_ops_check(S);
  if (S->pp < 1 || S->vpp < 1 || S->n_micro < 1)
    return strata_error(STRATA_EINVAL,
                        "schedule: %d stages, %d virtual, %d micro-batches",
                        S->pp, S->vpp, S->n_micro);
  if (S->vpp > 1 && (S->pp < 2 || S->n_micro % S->pp))
    return strata_error(STRATA_EINVAL,
                        "schedule: interleaving needs at least 2 stages and "
                        "micro-batches (%d) divisible by the stages (%d)",
                        S->n_micro, S->pp);
  return 0;
}

/* The schedule into S's arrays (f_start, b_start: K n_micro cells each;
 * rank_end: pp), with R's (pp each: RANK_INTS ints, free_at, and with a
 * cut left and drain).  1 when
 * R->after is given and a rank cannot end before R->lim (the rest is not run).
 */
static int run(strata_sched_t *S, run_t *R) {
  int p = S->pp, v = S->vpp, n = S->n_micro;
  size_t cells = (size_t)p * v * n;
  for (size_t i = 0; i < cells; i++)
    S->f_start[i] = S->b_start[i] = -1;
  for (int r = 0; r < p; r++) {
    memset(&R->f[r], 0, sizeof R->f[r]);
    memset(&R->b[r], 0, sizeof R->b[r]);
    R->warm[r] = warmup(S, r);
    R->free_at[r] = S->rank_end[r] = 0;
    if (!R->after) continue;
    double w = 0; /* rank r's compute: every chunk's, every micro-batch */
    for (int c = 0; c < v; c++)
      w += S->fwd[c * p + r] + S->bwd[c * p + r];
    R->left[r] = w * n;
    R->drain[r] =
        r == 0 ? 0 : R->drain[r - 1] + S->bwd[r - 1] + p2p_at(S, r - 1);
    if (R->left[r] + R->after[r] > R->lim) return 1;
  }
  S->makespan = 0;
  long left = 2L * (long)cells;
  while (left > 0) {
    int progress = 0;
    for (int r = p - 1; r >= 0; r--) {
      int d = advance(S, r, R);
      if (d < 0) return 1;
      progress += d;
    }
    if (!progress)
      return strata_error(STRATA_EINTERNAL, "schedule: pipeline deadlock");
    left -= progress;
  }
  for (int r = 0; r < p; r++)
    if (S->rank_end[r] > S->makespan) S->makespan = S->rank_end[r];
  return 0;
}

int strata_sched_run(strata_sched_t *S) {
  int rc = check(S);
  run_t R;
  memset(&R, 0, sizeof R);
  S->f_start = S->b_start = S->rank_end = NULL;
  S->makespan = 0;
  if (rc) return rc;
  size_t cells = (size_t)S->pp * S->vpp * S->n_micro;
  S->f_start = strata_malloc(cells * sizeof *S->f_start);
  S->b_start = strata_malloc(cells * sizeof *S->b_start);
  S->rank_end = strata_calloc((size_t)S->pp, sizeof *S->rank_end);
  int *ints = strata_calloc((size_t)S->pp * RANK_INTS, sizeof *ints);
  R.free_at = strata_calloc((size_t)S->pp, sizeof *R.free_at);
  if (!S->f_start || !S->b_start || !S->rank_end || !ints || !R.free_at)
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  if (!rc && ST__SCHED_OWN(S->schedule)) {
    if ((rc = st__sched_ops_run(S)) > 0)
      rc = strata_error(STRATA_EINVAL,
                        "schedule %s: its rule leaves every rank waiting on "
                        "these stages (sched_ops.c)",
                        strata_pp_schedule_name(S->schedule));
  } else if (!rc) {
    ints_to(&R, ints, S->pp);
    rc = run(S, &R);
  }
  strata_free(ints);
  strata_free(R.free_at);
  if (rc) strata_sched_free(S);
  return rc;
}

int st__sched_cut(strata_sched_t *S, st__sched_buf_t *B, const double *after,
                  double cut) {
  int rc = check(S), p = S->pp;
  if (rc) return rc;
  size_t cells = (size_t)p * S->vpp * S->n_micro;
  if (B->cells < cells || B->pp < p) {
    size_t c = cells > B->cells ? cells : B->cells;
    int q = p > B->pp ? p : B->pp;
    double *d = strata_realloc(B->d, (2 * c + 4 * (size_t)q) * sizeof *d);
    int *ints =
        d ? strata_realloc(B->ints, (size_t)q * RANK_INTS * sizeof *ints)
          : NULL;
    if (d) B->d = d;
    if (ints) B->ints = ints;
    if (!d || !ints) return strata_error(STRATA_ENOMEM, "out of memory");
    B->cells = c, B->pp = q;
  }
  run_t R;
  S->f_start = B->d;
  S->b_start = B->d + B->cells;
  S->rank_end = B->d + 2 * B->cells;
  ints_to(&R, B->ints, B->pp);
  R.free_at = S->rank_end + B->pp;
  R.left = R.free_at + B->pp;
  R.drain = R.left + B->pp;
  R.after = isfinite(cut) ? after : NULL;
  /* a hair above the cut: the bound's sums round otherwise than the
   * schedule's own, and a step equal to the cut may still win on memory */
  R.lim = cut + 1e-9 * fabs(cut);
  if (ST__SCHED_OWN(S->schedule)) {
    rc = st__sched_ops_run(S);
    for (int r = 0; r < p && !rc && isfinite(cut); r++)
      if (S->rank_end[r] + after[r] > R.lim) rc = 1;
  } else
    rc = run(S, &R);
  S->f_start = S->b_start = NULL; /* B's */
  return rc;
}

void st__sched_buf_free(st__sched_buf_t *B) {
  strata_free(B->d);
  strata_free(B->ints);
  memset(B, 0, sizeof *B);
}

void strata_sched_free(strata_sched_t *S) {
  strata_free(S->f_start);
  strata_free(S->b_start);
  strata_free(S->rank_end);
  S->f_start = S->b_start = S->rank_end = NULL;
}
