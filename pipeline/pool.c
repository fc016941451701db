/*
 * pool.c - solve distinct stage subproblems concurrently on libuv's thread
 * pool.
 *
 * Each job owns its subproblem: it reads the (shared, read-only) graph and
 * writes only its own result, so workers need no lock.  Completions are
 * counted on the loop thread, which also reports progress (progress.c). Results
 * are indexed by subproblem, never by completion order, so the plan is the same
 * whatever the pool size.  libuv reads UV_THREADPOOL_SIZE when the pool first
 * starts: it is set before the first uv_queue_work.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <uv.h>

#include "intraop/solve.h"
#include "pipeline/sub.h"

/* seconds a stage solve gets past the plan's limit: a stage's ILP finds
 * a first layout in far less */
#define LATE_SOLVE 0.2

typedef struct {
  uv_work_t req;
  st__sub_t *sub, *twin; /* twin: the same stage at another count in
                            flight (NULL: none), solved with it */
  struct pool_state *ps;
  int order; /* queued in this order but for the ranks (by_rank_cmp) */
} job_t;

typedef struct pool_state {
  int total, done;
  st__progress_t *prog;
  double deadline;
  int late_ok; /* past the deadline a solve still runs, briefly */
  const volatile int *cancel;
} pool_state_t;

/* Whether sub may still run: 1, or 0 with its error set (interrupted,
 * or the plan's time limit reached); its ILP's time limit then the
 * plan's time left. */
static int may_run(const pool_state_t *ps, st__sub_t *s) {
  if (ps->cancel && *ps->cancel) {
    s->err = STRATA_ECANCELED;
    s->errmsg = strata_strdup("interrupted");
    return 0;
  }
  if (ps->deadline > 0 && !ps->late_ok && strata_now() > ps->deadline) {
    s->err = STRATA_ECANCELED;
    s->errmsg = strata_strdup("the plan's time limit was reached");
    return 0;
  }
  if (ps->deadline > 0) { /* no solve runs past the plan's limit */
    double left = ps->deadline - strata_now();
    /* the chosen plan's own stages: an ILP stopped short still gives a
     * layout (its best so far), one given no time may give none */
    double least = ps->late_ok ? LATE_SOLVE : 0.01;
    if (s->so.time_limit <= 0 || s->so.time_limit > left)
      s->so.time_limit = left > least ? left : least;
  }
  return 1;
}

static void work_cb(uv_work_t *req) {
  job_t *j = req->data;
  st__sub_t *s = j->sub, *t = j->twin;
  if (!may_run(j->ps, s)) return;
  if (!t || !may_run(j->ps, t)) {
    s->err = strata_stage_solve(s->g, &s->so, &s->res);
    if (s->err) s->errmsg = strata_strdup(strata_last_error());
    return;
  }
  const strata_stage_opts_t *o[2] = {&s->so, &t->so};
  strata_stage_result_t *out[2];
  int rc[2];
  char *why[2];
  st__stage_solve_flights(s->g, o, 2, out, rc, why);
  s->res = out[0], s->err = rc[0], s->errmsg = why[0];
  t->res = out[1], t->err = rc[1], t->errmsg = why[1];
}

static void after_cb(uv_work_t *req, int status) {
  job_t *j = req->data;
  (void)status;
  j->ps->done += j->twin ? 2 : 1;
  st__progress_note(j->ps->prog, "stage solves", j->ps->done, j->ps->total, NAN,
                    NAN);
}

/* libuv reads UV_THREADPOOL_SIZE when its pool first starts (in this
 * process, or again in a forked child): set it before the first job. */
static void set_pool_size(int threads) {
  char buf[16];
  if (threads <= 0) return;
  snprintf(buf, sizeof buf, "%d", threads > 1024 ? 1024 : threads);
  setenv("UV_THREADPOOL_SIZE", buf, 1);
}

static void from_cache(st__subset_t *s, st__cache_t *c, int *hits) {
  for (int i = 0; i < s->n && c; i++) {
    st__sub_t *sub = s->v[i];
    if (sub->err != 1) continue;
    if (st__cache_get(c, sub->key, &sub->res) == 0) {
      sub->err = 0;
      sub->from_cache = 1;
      (*hits)++;
    }
  }
}

/* A result that depends on how long its solve was allowed (a time limit
 * stopped it short of a proof) is not kept: a later run may do better. */
static int settled(const strata_stage_result_t *r) {
  return r->status == STRATA_STAGE_OPTIMAL ||
         r->status == STRATA_STAGE_INFEASIBLE;
}

/* New results go into the cache, written once at the end of the run
 * (st__search_release); a failure only costs a re-solve next time. */
static void to_cache(st__subset_t *s, st__cache_t *c) {
  for (int i = 0; i < s->n && c; i++) {
    st__sub_t *sub = s->v[i];
    if (sub->err || sub->from_cache || !sub->res || sub->cached ||
        !settled(sub->res))
      continue;
    if (st__cache_put(c, sub->key, sub->res)) return;
    sub->cached = 1;
  }
}

/* The same stage at two counts of micro-batches in flight (the probes of
 * a layer with one and two: st__family_add asks for them one after the
 * other): every field of the question the same but that one. */
static int twins(const st__sub_t *a, const st__sub_t *b) {
  if (a->g != b->g || a->graph_hash != b->graph_hash ||
      a->so.in_flight == b->so.in_flight)
    return 0;
  strata_stage_opts_t x = a->so, y = b->so;
  x.in_flight = y.in_flight = 1;
  return st__sub_key(a->graph_hash, &x) == st__sub_key(b->graph_hash, &y);
}

/* Ranked jobs first, by rank, then in the order they came (the pool
 * runs them in the order queued). */
static int by_rank_cmp(const void *a, const void *b) {
  const job_t *x = a, *y = b;
  if (x->sub->prio != y->sub->prio) return x->sub->prio < y->sub->prio ? -1 : 1;
  return (x->order > y->order) - (x->order < y->order);
}

static int run_jobs(st__subset_t *s, job_t *jobs, pool_state_t *ps) {
  uv_loop_t loop;
  int rc = uv_loop_init(&loop), n = 0;
  if (rc) return strata_error(STRATA_EINTERNAL, "libuv: %s", uv_strerror(rc));
  for (int i = 0; i < s->n; i++) {
    if (s->v[i]->err != 1 || s->v[i]->paired) continue;
    job_t *j = &jobs[n];
    j->order = n++;
    j->sub = s->v[i];
    j->twin = NULL;
    /* a family's probes come a few apart (a layer's two, then the first
     * and last stages' in turn) */
    for (int k = i + 1; k < s->n && k <= i + 3 && !j->twin; k++)
      if (s->v[k]->err == 1 && !s->v[k]->paired && twins(s->v[i], s->v[k]))
        j->twin = s->v[k], s->v[k]->paired = 1;
    j->ps = ps;
  }
  if (ps->deadline > 0 && !ps->late_ok)
    qsort(jobs, (size_t)n, sizeof *jobs, by_rank_cmp);
  for (int i = 0; i < n; i++) {
    jobs[i].req.data = &jobs[i];
    rc = uv_queue_work(&loop, &jobs[i].req, work_cb, after_cb);
    if (rc) {
      jobs[i].sub->err = STRATA_EINTERNAL;
      break;
    }
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  if (rc) return strata_error(STRATA_EINTERNAL, "libuv: %s", uv_strerror(rc));
  return 0;
}

static int unsolved(const st__subset_t *s) {
  int n = 0;
  for (int i = 0; i < s->n; i++)
    n += s->v[i]->err == 1;
  return n;
}

static int solve_all(st__subset_t *s, int threads, st__cache_t *cache,
                     st__progress_t *prog, double deadline, int late_ok,
                     const volatile int *cancel, int *ilps, int *hits) {
  pool_state_t ps = {0, 0, prog, deadline, late_ok, cancel};
  int rc = 0;
  if (unsolved(s) == 0) return 0;
  from_cache(s, cache, hits);
  ps.total = unsolved(s);
  if (ps.total > 0) {
    job_t *jobs = strata_calloc((size_t)ps.total, sizeof *jobs);
    if (!jobs) rc = strata_error(STRATA_ENOMEM, "out of memory");
    if (!rc) set_pool_size(threads);
    if (!rc) rc = run_jobs(s, jobs, &ps);
    strata_free(jobs);
    to_cache(s, cache);
  }
  if (!rc && cancel && *cancel)
    rc = strata_error(STRATA_ECANCELED, "interrupted: nothing was written");
  for (int i = 0; i < s->n && !rc; i++) {
    st__sub_t *sub = s->v[i];
    if (sub->from_cache || sub->err || sub->counted) continue;
    sub->counted = 1;
    (*ilps)++;
  }
  return rc;
}

int st__solve_all(st__subset_t *s, int threads, st__cache_t *cache,
                  st__progress_t *prog, double deadline,
                  const volatile int *cancel, int *ilps, int *hits) {
  return solve_all(s, threads, cache, prog, deadline, 0, cancel, ilps, hits);
}

int st__solve_all_by(st__subset_t *s, int threads, st__cache_t *cache,
                     st__progress_t *prog, double end,
                     const volatile int *cancel, int *ilps, int *hits) {
  return solve_all(s, threads, cache, prog, end, 1, cancel, ilps, hits);
}
