/*
 * sched.c - the 1F1B pipeline schedule (Narayanan et al. 2021, "PipeDream-
 * Flush"), simulated event by event rather than taken from a closed form,
 * so that unequal stages and p2p times give the real makespan.
 *
 * Stage s runs, in this fixed order: min(pp - s - 1, m) warm-up forwards,
 * then alternately one forward and one backward until every forward is
 * done, then the remaining backwards.  An operation starts when its stage
 * is free and its input is there: forward m on stage s needs forward m on
 * s - 1 plus the boundary's p2p time; backward m on s needs backward m on
 * s + 1 plus the p2p time (the last stage's backward follows its own
 * forward, which its order already puts first).  Because every stage's
 * order is fixed, the start times depend on nothing but the inputs: the
 * simulation is deterministic whatever order it visits the stages in.
 */
#include <string.h>

#include "merge/merge_int.h"

/* The k-th operation of stage s: sets *fwd and returns its micro-batch. */
static int op_at(int pp, int n, int s, int k, int *fwd) {
  int w = pp - s - 1 < n ? pp - s - 1 : n;
  if (k < w) {
    *fwd = 1;
    return k;
  }
  k -= w;
  if (k < 2 * (n - w)) {
    *fwd = (k % 2) == 0;
    return *fwd ? w + k / 2 : k / 2;
  }
  *fwd = 0;
  return n - w + (k - 2 * (n - w));
}

/* When the input of an op is ready, or -1 if its producer has not run. */
static double ready_at(const st__sched_t *S, int s, int m, int fwd) {
  int n = S->n_micro;
  if (fwd) {
    if (s == 0) return 0;
    double e = S->f_start[(s - 1) * n + m];
    if (e < 0) return -1;
    return e + S->fwd[s - 1] + (S->p2p ? S->p2p[s - 1] : 0);
  }
  if (s == S->pp - 1) return S->f_start[s * n + m] + S->fwd[s];
  double e = S->b_start[(s + 1) * n + m];
  if (e < 0) return -1;
  return e + S->bwd[s + 1] + (S->p2p ? S->p2p[s] : 0);
}

/* Run as many of stage s's next ops as are ready; returns how many. */
static int advance(st__sched_t *S, int s, int *pos, double *free_at) {
  int n = S->n_micro, done = 0;
  while (pos[s] < 2 * n) {
    int fwd, m = op_at(S->pp, n, s, pos[s], &fwd);
    double r = ready_at(S, s, m, fwd);
    if (r < 0) break;
    double start = r > free_at[s] ? r : free_at[s];
    if (fwd) {
      S->f_start[s * n + m] = start;
      free_at[s] = start + S->fwd[s];
    } else {
      S->b_start[s * n + m] = start;
      free_at[s] = start + S->bwd[s];
    }
    pos[s]++;
    done++;
  }
  return done;
}

static int alloc_out(st__sched_t *S) {
  size_t cells = (size_t)S->pp * (size_t)S->n_micro;
  S->f_start = strata_malloc(cells * sizeof *S->f_start);
  S->b_start = strata_malloc(cells * sizeof *S->b_start);
  S->stage_end = strata_calloc((size_t)S->pp, sizeof *S->stage_end);
  if (!S->f_start || !S->b_start || !S->stage_end)
    return strata_error(STRATA_ENOMEM, "out of memory");
  for (size_t i = 0; i < cells; i++)
    S->f_start[i] = S->b_start[i] = -1;
  return 0;
}

static void finish(st__sched_t *S, const double *free_at) {
  S->makespan = S->step = 0;
  for (int s = 0; s < S->pp; s++) {
    double sync = S->sync ? S->sync[s] : 0;
    S->stage_end[s] = free_at[s];
    if (free_at[s] > S->makespan) S->makespan = free_at[s];
    if (free_at[s] + sync > S->step) S->step = free_at[s] + sync;
  }
}

int st__sched_run(st__sched_t *S) {
  int rc, *pos = NULL, left;
  double *free_at = NULL;
  S->f_start = S->b_start = S->stage_end = NULL;
  if (S->pp < 1 || S->n_micro < 1)
    return strata_error(STRATA_EINVAL, "schedule: %d stages, %d micro-batches",
                        S->pp, S->n_micro);
  rc = alloc_out(S);
  pos = strata_calloc((size_t)S->pp, sizeof *pos);
  free_at = strata_calloc((size_t)S->pp, sizeof *free_at);
  if (!rc && (!pos || !free_at))
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  left = 2 * S->pp * S->n_micro;
  while (!rc && left > 0) {
    int progress = 0;
    for (int s = S->pp - 1; s >= 0; s--)
      progress += advance(S, s, pos, free_at);
    if (!progress)
      rc = strata_error(STRATA_EINTERNAL, "schedule: 1F1B deadlock");
    left -= progress;
  }
  if (!rc) finish(S, free_at);
  strata_free(pos);
  strata_free(free_at);
  if (rc) st__sched_free(S);
  return rc;
}

void st__sched_free(st__sched_t *S) {
  strata_free(S->f_start);
  strata_free(S->b_start);
  strata_free(S->stage_end);
  S->f_start = S->b_start = S->stage_end = NULL;
}

/* scratch receives one array of 3 * pp doubles (fwd, bwd, sync) that the
 * caller frees; the p2p times are the plan's own. */
int st__sched_from_plan(const strata_plan_t *p, st__sched_t *S,
                        double **scratch) {
  int pp = p->n_stages;
  double *a;
  memset(S, 0, sizeof *S);
  *scratch = NULL;
  if (pp < 1) return strata_error(STRATA_EINVAL, "the plan has no stage");
  a = strata_calloc(3 * (size_t)pp, sizeof *a);
  if (!a) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int s = 0; s < pp; s++) {
    a[s] = p->stages[s].fwd_seconds;
    a[pp + s] = p->stages[s].bwd_seconds;
    a[2 * pp + s] = p->stages[s].sync_seconds;
  }
  S->pp = pp;
  S->n_micro = p->n_micro > 0 ? p->n_micro : 1;
  S->fwd = a;
  S->bwd = a + pp;
  S->sync = a + 2 * pp;
  S->p2p = pp > 1 ? p->p2p_seconds : NULL;
  *scratch = a;
  return 0;
}
