/*
 * export_timeline.c - the plan's 1F1B schedule (sched.c) as a Chrome trace
 * (the JSON "Trace Event Format" that Perfetto and chrome://tracing open):
 * one thread per stage with a complete ("X") event for every forward and
 * backward of every micro-batch and the gradient sync after its last
 * backward, and two threads per boundary for the activations sent forward
 * and the gradients sent back.  Times are microseconds from the start of
 * the step.  Written with printf rather than cJSON: a big plan has
 * hundreds of thousands of events and a DOM of them is wasted memory.
 */
#include <stdio.h>
#include <string.h>

#include "merge/merge_int.h"

static void jstr(strata_buf_t *b, const char *s) {
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
  int pp = p->n_stages;
  snprintf(nm, sizeof nm, "%s on %s", p->model ? p->model : "plan",
           p->cluster ? p->cluster : "?");
  meta(b, "process_name", 0, nm);
  for (int s = 0; s < pp; s++) {
    snprintf(nm, sizeof nm, "stage %d (layers %d-%d)", s,
             p->stages[s].layer_begin, p->stages[s].layer_end - 1);
    meta(b, "thread_name", s, nm);
    sort_index(b, s);
  }
  for (int s = 0; s + 1 < pp; s++) {
    snprintf(nm, sizeof nm, "p2p %d->%d activations", s, s + 1);
    meta(b, "thread_name", pp + 2 * s, nm);
    sort_index(b, pp + 2 * s);
    snprintf(nm, sizeof nm, "p2p %d->%d gradients", s + 1, s);
    meta(b, "thread_name", pp + 2 * s + 1, nm);
    sort_index(b, pp + 2 * s + 1);
  }
}

static void stage_events(strata_buf_t *b, const st__sched_t *S, int s) {
  int n = S->n_micro, pp = S->pp;
  for (int m = 0; m < n; m++) {
    double f0 = S->f_start[s * n + m], b0 = S->b_start[s * n + m];
    event(b, "F", m, "forward", s, f0, S->fwd[s]);
    event(b, "B", m, "backward", s, b0, S->bwd[s]);
    if (S->p2p && s + 1 < pp)
      event(b, "send F", m, "p2p", pp + 2 * s, f0 + S->fwd[s], S->p2p[s]);
    if (S->p2p && s > 0)
      event(b, "send B", m, "p2p", pp + 2 * (s - 1) + 1, b0 + S->bwd[s],
            S->p2p[s - 1]);
  }
  if (S->sync[s] > 0)
    strata_buf_printf(b,
                      "    {\"name\": \"gradient sync\", \"cat\": \"sync\", "
                      "\"ph\": \"X\", \"pid\": 0, \"tid\": %d, \"ts\": "
                      "%.3f, \"dur\": %.3f},\n",
                      s, S->stage_end[s] * 1e6, S->sync[s] * 1e6);
}

int strata_export_timeline(const strata_plan_t *p, char **text) {
  st__sched_t S;
  double *scratch = NULL;
  strata_buf_t b;
  int rc;
  if (!p || !text) return strata_error(STRATA_EINVAL, "timeline: no plan");
  strata_buf_init(&b);
  rc = st__sched_from_plan(p, &S, &scratch);
  if (!rc) rc = st__sched_run(&S);
  if (rc) goto out;
  strata_buf_puts(&b,
                  "{\n  \"displayTimeUnit\": \"ms\",\n  \"traceEvents\": [\n");
  threads(&b, p);
  for (int s = 0; s < S.pp; s++)
    stage_events(&b, &S, s);
  strata_buf_printf(&b,
                    "    {\"name\": \"step end\", \"ph\": \"i\", \"s\": "
                    "\"g\", \"pid\": 0, \"tid\": 0, \"ts\": %.3f}\n  ]\n}\n",
                    S.step * 1e6);
  if (b.oom) {
    rc = strata_error(STRATA_ENOMEM, "out of memory");
    goto out;
  }
  *text = strata_buf_steal(&b, NULL);
out:
  st__sched_free(&S);
  strata_free(scratch);
  strata_buf_free(&b);
  return rc;
}
