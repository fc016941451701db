/*
 * export_timeline.c - the plan's pipeline schedule (model/sched.c) as a
 * Chrome trace (the JSON "Trace Event Format" that Perfetto and
 * chrome://tracing open): one thread per pipeline rank with a complete
 * ("X") event for every forward and backward of every micro-batch of each
 * of its chunks and the gradient sync after its last backward, and two
 * threads per chunk boundary for the activations sent forward and the
 * gradients sent back, and one thread of the step's items end to end
 * (their durations sum to the step).  Times are microseconds from the start of
 * the step.  Written with printf rather than cJSON: a big plan has
 * hundreds of thousands of events and a DOM of them is wasted memory.
 *
 * A plan of real training has at most some 10^5 stage x micro-batch cells
 * (128 stages x 2048 micro-batches is 262,144); a plan file claiming more
 * is damaged or absurd, and its timeline (up to four events a cell, some
 * 150 bytes each) would be gigabytes: it is refused with the figures.
 */
#include <stdio.h>
#include <string.h>

#include "core/text.h"
#include "merge/merge_int.h"

#define MAX_CELLS 262144 /* stages x micro-batches */

/* A JSON string; JSON is UTF-8, so a name with invalid bytes is written
 * with U+FFFD in their place. */
static void jstr(strata_buf_t *b, const char *s0) {
  char *fixed = s0 && !st__utf8_valid(s0, strlen(s0)) ? st__utf8_fix(s0) : NULL;
  const char *s = fixed ? fixed : s0;
  strata_buf_puts(b, "\"");
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      strata_buf_printf(b, "\\%c", c);
    else if (c < 0x20)
      strata_buf_printf(b, "\\u%04x", c);
    else
      strata_buf_append(b, s, 1);
  }
  strata_buf_puts(b, "\"");
  strata_free(fixed);
}

static void meta(strata_buf_t *b, const char *what, int tid, const char *name) {
  strata_buf_printf(b,
                    "    {\"name\": \"%s\", \"ph\": \"M\", \"pid\": 0, "
                    "\"tid\": %d, \"args\": {\"name\": ",
                    what, tid);
  jstr(b, name);
  strata_buf_puts(b, "}},\n");
}

static void sort_index(strata_buf_t *b, int tid) {
  strata_buf_printf(b,
                    "    {\"name\": \"thread_sort_index\", \"ph\": \"M\", "
                    "\"pid\": 0, \"tid\": %d, \"args\": {\"sort_index\": "
                    "%d}},\n",
                    tid, tid);
}

static void event(strata_buf_t *b, const char *name, int m, const char *cat,
                  int tid, double t0, double dur) {
  strata_buf_printf(b,
                    "    {\"name\": \"%s%d\", \"cat\": \"%s\", \"ph\": "
                    "\"X\", \"pid\": 0, \"tid\": %d, \"ts\": %.3f, "
                    "\"dur\": %.3f, \"args\": {\"micro_batch\": %d}},\n",
                    name, m, cat, tid, t0 * 1e6, dur * 1e6, m);
}

static void threads(strata_buf_t *b, const strata_plan_t *p) {
  char nm[96];
  int K = p->n_stages;
  strata_buf_t pn;
  strata_buf_init(&pn);
  strata_buf_printf(&pn, "%s on %s", p->model ? p->model : "plan",
                    p->cluster ? p->cluster : "?");
  meta(b, "process_name", 0, pn.oom ? "plan" : pn.p);
  strata_buf_free(&pn);
  for (int r = 0; r < p->pp; r++) {
    snprintf(nm, sizeof nm, "rank %d", r);
    for (int k = r; k < K; k += p->pp) {
      size_t len = strlen(nm);
      if (p->stages[k].layer_end <= p->stages[k].layer_begin)
        snprintf(nm + len, sizeof nm - len, "%s no layer", k == r ? ":" : ",");
      else
        snprintf(nm + len, sizeof nm - len, "%s layers %d-%d",
                 k == r ? ":" : ",", p->stages[k].layer_begin,
                 p->stages[k].layer_end - 1);
    }
    meta(b, "thread_name", r, nm);
    sort_index(b, r);
  }
  for (int k = 0; k + 1 < K; k++) {
    snprintf(nm, sizeof nm, "p2p %d->%d activations", k, k + 1);
    meta(b, "thread_name", p->pp + 2 * k, nm);
    sort_index(b, p->pp + 2 * k);
    snprintf(nm, sizeof nm, "p2p %d->%d gradients", k + 1, k);
    meta(b, "thread_name", p->pp + 2 * k + 1, nm);
    sort_index(b, p->pp + 2 * k + 1);
  }
}

/* Every forward and backward of chunk k (rank k mod pp), the p2p after
 * them, and the rank's gradient sync after its last backward. */
static void stage_events(strata_buf_t *b, const strata_plan_t *p,
                         const strata_sched_t *S, int k) {
  int n = S->n_micro, K = p->n_stages, tid = p->stages[k].rank;
  int th = p->pp, s = p->pp_schedule; /* p2p threads after the ranks */
  /* the V-shapes' second chunks run on ranks in reverse; the zero-bubble
   * schedules' backward is its input half (the W after it not drawn) */
  if ((s == STRATA_PPS_ZBV || s == STRATA_PPS_DUALPIPEV) && k >= p->pp)
    tid = 2 * p->pp - 1 - k;
  double bw = s >= STRATA_PPS_INTERLEAVED_ZB ? S->bwd[k] / 2 : S->bwd[k];
  for (int m = 0; m < n; m++) {
    double f0 = S->f_start[k * n + m], b0 = S->b_start[k * n + m];
    event(b, "F", m, "forward", tid, f0, S->fwd[k]);
    event(b, "B", m, "backward", tid, b0, bw);
    if (S->p2p && k + 1 < K)
      event(b, "send F", m, "p2p", th + 2 * k, f0 + S->fwd[k], S->p2p[k]);
    if (S->p2p && k > 0)
      event(b, "send B", m, "p2p", th + 2 * (k - 1) + 1, b0 + S->bwd[k],
            S->p2p[k - 1]);
  }
}

/* The step's items (docs/cost-model.md, "The step's items") on a thread
 * of their own, back to back from 0: together they span the step. */
static void item_events(strata_buf_t *b, const strata_plan_t *p) {
  st__step_item_t li[ST__STEP_ITEMS];
  int n = st__step_list(&p->step_items, li), tid = p->pp + 2 * p->n_stages;
  double t = 0;
  meta(b, "thread_name", tid, "step items (the busiest rank)");
  sort_index(b, tid);
  for (int i = 0; i < n; i++) {
    if (!(li[i].v > 0)) continue;
    strata_buf_printf(b, "    {\"name\": ");
    jstr(b, li[i].name);
    strata_buf_printf(b,
                      ", \"cat\": \"step item\", \"ph\": \"X\", \"pid\": 0, "
                      "\"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, \"args\": "
                      "{\"what\": ",
                      tid, t * 1e6, li[i].v * 1e6);
    jstr(b, li[i].what);
    strata_buf_printf(b, ", \"ms\": %.6f}},\n", li[i].v * 1e3);
    t += li[i].v;
  }
}

static void sync_events(strata_buf_t *b, const strata_plan_t *p) {
  for (int r = 0; r < p->pp; r++)
    if (p->ranks[r].sync_seconds > 0)
      strata_buf_printf(b,
                        "    {\"name\": \"gradient sync\", \"cat\": "
                        "\"sync\", \"ph\": \"X\", \"pid\": 0, \"tid\": "
                        "%d, \"ts\": %.3f, \"dur\": %.3f},\n",
                        r, p->ranks[r].end_seconds * 1e6,
                        p->ranks[r].sync_seconds * 1e6);
}

/* The schedule of the plan as the planner simulated it. */
int st__plan_schedule(const strata_plan_t *p, strata_sched_t *S,
                      double **scratch) {
  int K = p->n_stages;
  double *a = strata_calloc(2 * (size_t)K + 1, sizeof *a);
  memset(S, 0, sizeof *S);
  *scratch = a;
  if (!a) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int k = 0; k < K; k++) {
    a[k] = p->stages[k].fwd_seconds;
    a[K + k] = p->stages[k].bwd_seconds;
  }
  S->pp = p->pp;
  S->vpp = p->vpp > 1 ? p->vpp : 1;
  S->n_micro = p->n_micro > 0 ? p->n_micro : 1;
  S->fwd = a;
  S->bwd = a + K;
  S->p2p = K > 1 ? p->p2p_seconds : NULL;
  S->blocking_p2p = !p->overlap_p2p;
  S->schedule = p->pp_schedule; /* its W: half the backward (sched_ops.c) */
  return strata_sched_run(S);
}

int strata_export_timeline(const strata_plan_t *p, char **text) {
  strata_sched_t S;
  double *scratch = NULL;
  strata_buf_t b;
  int rc;
  if (!p || !text || p->n_stages < 1 || !p->ranks || p->pp < 1 ||
      p->n_stages != p->pp * (p->vpp > 1 ? p->vpp : 1))
    return strata_error(STRATA_EINVAL, "timeline: no plan");
  if ((long long)p->n_stages * (p->n_micro > 0 ? p->n_micro : 1) > MAX_CELLS)
    return strata_error(STRATA_EUNSUPPORTED,
                        "timeline: %d stages x %d micro-batches is more than "
                        "%d cells to draw; no viewer opens such a trace",
                        p->n_stages, p->n_micro, MAX_CELLS);
  strata_buf_init(&b);
  memset(&S, 0, sizeof S);
  rc = st__plan_schedule(p, &S, &scratch);
  if (rc) goto out;
  strata_buf_puts(&b,
                  "{\n  \"displayTimeUnit\": \"ms\",\n  \"traceEvents\": [\n");
  threads(&b, p);
  for (int k = 0; k < p->n_stages; k++)
    stage_events(&b, p, &S, k);
  sync_events(&b, p);
  item_events(&b, p);
  strata_buf_printf(&b,
                    "    {\"name\": \"step end\", \"ph\": \"i\", \"s\": "
                    "\"g\", \"pid\": 0, \"tid\": 0, \"ts\": %.3f}\n  ]\n}\n",
                    p->step_seconds * 1e6);
  if (b.oom) {
    rc = strata_error(STRATA_ENOMEM, "out of memory");
    goto out;
  }
  *text = strata_buf_steal(&b, NULL);
out:
  strata_sched_free(&S);
  strata_free(scratch);
  strata_buf_free(&b);
  return rc;
}
