/*
 * diff.c - strata_plan_diff: what changed between two plans, in the order
 * a reader asks: the parallel degrees and options, the stage boundaries,
 * the operator strategies per run of layers (a layer's strategies are
 * those of the stage holding it, matched by op name, so moving a boundary
 * shows as the layers that changed hands), then the figures (step time,
 * tokens/s, MFU, memory) with their deltas.
 *
 * Changes are collected into one list first and then printed as text or
 * JSON, so both forms always say the same thing.
 *
 * Figures are predictions: a re-plan after an unrelated change can move
 * them by a few parts in 10^4 (another order of floating-point sums, a
 * time-limited solve), which is not a different plan.  A figure counts as
 * changed only when it moves by more than the tolerance, relative to the
 * larger of the two; everything else (degrees, stages, strategies)
 * compares exactly.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "merge/merge_int.h"

enum { SEC_DEGREES, SEC_STAGES, SEC_STRATEGIES, SEC_FIGURES, SEC_COUNT };
static const char *const sec_name[] = {"degrees", "stages", "strategies",
                                       "figures"};

typedef struct {
  int sec, numeric;
  char what[96];
  char *old_s, *new_s;
  double old_v, new_v;
} change_t;

typedef struct {
  change_t *v;
  int n, cap, oom;
  double tol;    /* relative, on figures */
  int tolerated; /* figures that moved within tol */
} changes_t;

static change_t *push(changes_t *c, int sec, const char *what) {
  if (c->oom) return NULL;
  if (c->n == c->cap) {
    int cap = c->cap ? 2 * c->cap : 16;
    change_t *v = strata_realloc(c->v, (size_t)cap * sizeof *v);
    if (!v) {
      c->oom = 1;
      return NULL;
    }
    c->v = v;
    c->cap = cap;
  }
  change_t *x = &c->v[c->n++];
  memset(x, 0, sizeof *x);
  x->sec = sec;
  snprintf(x->what, sizeof x->what, "%s", what);
  return x;
}

static void add_str(changes_t *c, int sec, const char *what, const char *a,
                    const char *b) {
  if (strcmp(a, b) == 0) return;
  change_t *x = push(c, sec, what);
  if (!x) return;
  x->old_s = strata_strdup(a);
  x->new_s = strata_strdup(b);
  if (!x->old_s || !x->new_s) c->oom = 1;
}

static void add_num(changes_t *c, int sec, const char *what, double a,
                    double b) {
  if (a == b || (isnan(a) && isnan(b))) return; /* NaN: a damaged file */
  change_t *x = push(c, sec, what);
  if (!x) return;
  x->numeric = 1;
  x->old_v = a;
  x->new_v = b;
}

/* A figure: a change only beyond the tolerance (NaN or infinity never
 * compares within it). */
static void add_fig(changes_t *c, const char *what, double a, double b) {
  double big = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
  if (a != b && isfinite(big) && fabs(a - b) <= c->tol * big) {
    c->tolerated++;
    return;
  }
  add_num(c, SEC_FIGURES, what, a, b);
}

static void changes_free(changes_t *c) {
  for (int i = 0; i < c->n; i++) {
    strata_free(c->v[i].old_s);
    strata_free(c->v[i].new_s);
  }
  strata_free(c->v);
}

/* ---- what changed ---- */

/* Which frameworks run each plan: "yes" or "no -- reason". */
static void diff_frameworks(changes_t *c, const strata_plan_t *a,
                            const strata_plan_t *b) {
  st__fw_verdict_t va[ST__N_FRAMEWORKS], vb[ST__N_FRAMEWORKS];
  char sa[sizeof va[0].why + 8], sb[sizeof vb[0].why + 8];
  st__frameworks(a, va);
  st__frameworks(b, vb);
  for (int i = 0; i < ST__N_FRAMEWORKS; i++) {
    snprintf(sa, sizeof sa, "%s%s%s", va[i].ok ? "yes" : "no",
             va[i].ok ? "" : " -- ", va[i].why);
    snprintf(sb, sizeof sb, "%s%s%s", vb[i].ok ? "yes" : "no",
             vb[i].ok ? "" : " -- ", vb[i].why);
    add_str(c, SEC_DEGREES, va[i].ok == vb[i].ok ? va[i].name : vb[i].name, sa,
            sb);
  }
}

/* The configuration lines: plan_fields.h's fields in their diff order,
 * enums by name, the frameworks' verdicts at their place. */
#define DIFF_PUT_NAME(key, x, y)                                               \
  add_str(c, SEC_DEGREES, #key, strata_##key##_name(x), strata_##key##_name(y))
#define DIFF_PUT_NUM(key, x, y) add_num(c, SEC_DEGREES, #key, x, y)
#define DIFF_PUT_NAMES(key, x, y)                                              \
  add_str(c, SEC_DEGREES, #key,                                                \
          set_names(strata_##key##_name, x, sx, sizeof sx),                    \
          set_names(strata_##key##_name, y, sy, sizeof sy))
#define DIFF_PUT_BOOL DIFF_PUT_NUM
#define DIFF_PUT_POS DIFF_PUT_NUM
#define DIFF_PUT_PREC(key, x, y)                                               \
  add_str(c, SEC_DEGREES, "gemm_recipe", strata_lowp_name(x),                  \
          strata_lowp_name(y))
#define DIFF_PUT_CPCOMM DIFF_PUT_NUM
#define DIFF_PUT_SIGMOID DIFF_PUT_NUM
#define DIFF_PUT_TIMING DIFF_PUT_NUM
#define DIFF_PUT_MODULES DIFF_PUT_NUM
#define DIFF_PUT_DTYPE DIFF_PUT_NUM
#define DIFF_ROW(part, t, m, key, what, lo, hi, codec, slot, jsec, jkind,      \
                 when, diff)                                                   \
  if (diff == pos) DIFF_PUT_##jkind(key, a->m, b->m);
#define DIFF_FRAMEWORKS 16
#define DIFF_LAST 64
#define DIFF_BOUND(part, t, m, key, what, lo, hi, codec, slot, jsec, jkind,    \
                   when, diff)                                                 \
  _Static_assert((diff) <= DIFF_LAST, #key "'s diff place is past DIFF_LAST");
STRATA_PLAN_FIELDS(DIFF_BOUND)

/* A set's names joined by commas ("none" for none). */
static const char *set_names(const char *(*name)(int), int v, char *buf,
                             size_t size) {
  size_t n = 0;
  snprintf(buf, size, "none");
  for (int k = 0; name(k) && n < size; k++)
    if (v & (1 << k))
      n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? "," : "", name(k));
  return buf;
}

static void diff_field(changes_t *c, const strata_plan_t *a,
                       const strata_plan_t *b, int pos) {
  char sx[160], sy[160];
  STRATA_PLAN_FIELDS(DIFF_ROW)
}

static void diff_degrees(changes_t *c, const strata_plan_t *a,
                         const strata_plan_t *b) {
  add_str(c, SEC_DEGREES, "model", a->model ? a->model : "",
          b->model ? b->model : "");
  add_str(c, SEC_DEGREES, "cluster", a->cluster ? a->cluster : "",
          b->cluster ? b->cluster : "");
  for (int pos = 1; pos <= DIFF_LAST; pos++)
    if (pos == DIFF_FRAMEWORKS)
      diff_frameworks(c, a, b);
    else
      diff_field(c, a, b, pos);
}

static void stage_desc(const strata_plan_t *p, int s, char *buf, size_t n) {
  if (s >= p->n_stages) {
    snprintf(buf, n, "-");
    return;
  }
  const strata_plan_stage_t *st = &p->stages[s];
  if (st->layer_end <= st->layer_begin) /* a layout's chunk of none */
    snprintf(buf, n, "no layer on %dx%d", st->nodes, st->gpus_per_node);
  else if (st->layer_end - st->layer_begin == 1)
    snprintf(buf, n, "layer %d on %dx%d", st->layer_begin, st->nodes,
             st->gpus_per_node);
  else
    snprintf(buf, n, "layers %d-%d on %dx%d", st->layer_begin,
             st->layer_end - 1, st->nodes, st->gpus_per_node);
}

static void diff_stages(changes_t *c, const strata_plan_t *a,
                        const strata_plan_t *b) {
  int n = a->n_stages > b->n_stages ? a->n_stages : b->n_stages;
  char da[64], db[64], what[32];
  add_num(c, SEC_STAGES, "stages", a->n_stages, b->n_stages);
  for (int s = 0; s < n; s++) {
    stage_desc(a, s, da, sizeof da);
    stage_desc(b, s, db, sizeof db);
    snprintf(what, sizeof what, "stage %d", s);
    add_str(c, SEC_STAGES, what, da, db);
  }
}

/* The stage of plan p holding layer l, or -1. */
static int stage_of(const strata_plan_t *p, int l) {
  for (int s = 0; s < p->n_stages; s++)
    if (l >= p->stages[s].layer_begin && l < p->stages[s].layer_end) return s;
  return -1;
}

/* The strategies of the ops called name in r with (layer >= 0) == inside,
 * joined with '/' ("" when there is none). */
static void strat_of(const strata_stage_result_t *r, const char *name,
                     int inside, strata_buf_t *out) {
  out->len = 0;
  if (out->p) out->p[0] = 0;
  for (int i = 0; r && i < r->n_ops; i++) {
    const strata_op_choice_t *o = &r->ops[i];
    if ((o->layer >= 0) != inside || !o->name || strcmp(o->name, name))
      continue;
    if (out->len) strata_buf_puts(out, "/");
    strata_buf_puts(out, o->strategy ? o->strategy : "?");
  }
}

/* 1 if an op before i in r has the same name and side. */
static int seen_before(const strata_stage_result_t *r, int i, int inside) {
  for (int j = 0; j < i; j++)
    if ((r->ops[j].layer >= 0) == inside && r->ops[j].name &&
        strcmp(r->ops[j].name, r->ops[i].name) == 0)
      return 1;
  return 0;
}

/* Append "name: old -> new; " to sig for each op of ra or rb whose
 * strategy differs (ops of ra first, then those only in rb). */
static void op_changes(const strata_stage_result_t *ra,
                       const strata_stage_result_t *rb, int inside,
                       strata_buf_t *sig) {
  strata_buf_t x, y;
  strata_buf_init(&x);
  strata_buf_init(&y);
  for (int pass = 0; pass < 2; pass++) {
    const strata_stage_result_t *r = pass ? rb : ra;
    for (int i = 0; r && i < r->n_ops; i++) {
      const char *nm = r->ops[i].name;
      if ((r->ops[i].layer >= 0) != inside || !nm || seen_before(r, i, inside))
        continue;
      strat_of(ra, nm, inside, &x);
      if (pass && x.len) continue; /* already seen in ra */
      strat_of(rb, nm, inside, &y);
      if (strcmp(x.p ? x.p : "", y.p ? y.p : "") == 0) continue;
      strata_buf_printf(sig, "%s%s: %s -> %s", sig->len ? "; " : "", nm,
                        x.len ? x.p : "-", y.len ? y.p : "-");
    }
  }
  if (x.oom || y.oom) sig->oom = 1;
  strata_buf_free(&x);
  strata_buf_free(&y);
}

static const strata_stage_result_t *res(const strata_plan_t *p, int s) {
  return s >= 0 ? p->stages[s].result : NULL;
}

static int n_layers(const strata_plan_t *p) {
  int n = p->layers;
  for (int s = 0; s < p->n_stages; s++)
    if (p->stages[s].layer_end > n) n = p->stages[s].layer_end;
  return n;
}

static void flush_run(changes_t *c, int l0, int l1, const strata_buf_t *sig) {
  char what[64];
  if (!sig->len) return;
  if (l0 == l1)
    snprintf(what, sizeof what, "layer %d", l0);
  else
    snprintf(what, sizeof what, "layers %d-%d", l0, l1);
  change_t *x = push(c, SEC_STRATEGIES, what);
  if (x && !(x->new_s = strata_strdup(sig->p))) c->oom = 1;
}

/* The first stage boundary of p after layer l, or L. */
static int next_boundary(const strata_plan_t *p, int l, int L) {
  int nb = L;
  for (int s = 0; s < p->n_stages; s++) {
    const strata_plan_stage_t *st = &p->stages[s];
    if (st->layer_begin > l && st->layer_begin < nb) nb = st->layer_begin;
    if (st->layer_end > l && st->layer_end < nb) nb = st->layer_end;
  }
  return nb;
}

/* A layer's strategies are its stage's, so they can differ only where a
 * stage of either plan begins or ends: compare once per interval between
 * boundaries, not once per layer (a damaged plan file may claim 10^9
 * layers; found by fuzz_plan), and join intervals that say the same. */
static void diff_layers(changes_t *c, const strata_plan_t *a,
                        const strata_plan_t *b) {
  int L = n_layers(a) > n_layers(b) ? n_layers(a) : n_layers(b), l0 = 0;
  strata_buf_t run, cur;
  strata_buf_init(&run);
  strata_buf_init(&cur);
  for (int l = 0, e; l < L; l = e) {
    e = next_boundary(a, l, L);
    if (next_boundary(b, l, L) < e) e = next_boundary(b, l, L);
    cur.len = 0;
    if (cur.p) cur.p[0] = 0;
    op_changes(res(a, stage_of(a, l)), res(b, stage_of(b, l)), 1, &cur);
    if (l > 0 && strcmp(cur.p ? cur.p : "", run.p ? run.p : "") == 0) continue;
    if (l > 0) flush_run(c, l0, l - 1, &run);
    run.len = 0;
    strata_buf_append(&run, cur.p ? cur.p : "", cur.len);
    l0 = l;
  }
  if (L > 0) flush_run(c, l0, L - 1, &run);
  if (run.oom || cur.oom) c->oom = 1;
  strata_buf_free(&run);
  strata_buf_free(&cur);
}

/* Ops outside the layers (embedding, head, loss), wherever they sit. */
static void diff_outside(changes_t *c, const strata_plan_t *a,
                         const strata_plan_t *b) {
  strata_buf_t sig;
  strata_buf_init(&sig);
  for (int end = 0; end < 2; end++) {
    int sa = end ? a->n_stages - 1 : 0, sb = end ? b->n_stages - 1 : 0;
    sig.len = 0;
    if (sig.p) sig.p[0] = 0;
    op_changes(res(a, sa), res(b, sb), 0, &sig);
    if (sig.len) {
      change_t *x = push(c, SEC_STRATEGIES, end ? "epilogue" : "prologue");
      if (x && !(x->new_s = strata_strdup(sig.p))) c->oom = 1;
    }
  }
  if (sig.oom) c->oom = 1;
  strata_buf_free(&sig);
}

static void diff_figures(changes_t *c, const strata_plan_t *a,
                         const strata_plan_t *b) {
  char what[64];
  add_fig(c, "step_seconds", a->step_seconds, b->step_seconds);
  add_fig(c, "tokens_per_second", a->tokens_per_second, b->tokens_per_second);
  add_fig(c, "mfu", a->mfu, b->mfu);
  add_fig(c, "peak_memory_bytes", a->peak_memory_bytes, b->peak_memory_bytes);
  if (a->n_stages != b->n_stages) return;
  for (int s = 0; s < a->n_stages; s++) {
    const strata_plan_stage_t *x = &a->stages[s], *y = &b->stages[s];
    double ma = x->result ? x->result->mem.total : 0;
    double mb = y->result ? y->result->mem.total : 0;
    snprintf(what, sizeof what, "stage %d memory_bytes", s);
    add_fig(c, what, ma, mb);
    snprintf(what, sizeof what, "stage %d fwd_seconds", s);
    add_fig(c, what, x->fwd_seconds, y->fwd_seconds);
    snprintf(what, sizeof what, "stage %d bwd_seconds", s);
    add_fig(c, what, x->bwd_seconds, y->bwd_seconds);
  }
}

/* ---- printing ---- */

/* A figure in the summary's units: "step time: 313.614 ms -> ...",
 * "peak memory: 21.19 GiB -> ..."; the JSON keeps seconds and bytes. */
static void fig_text(strata_buf_t *o, const change_t *x) {
  static const struct {
    const char *suffix, *unit;
    double scale;
    int prec;
  } u[] = {{"step_seconds", "ms", 1e3, 3},
           {"_seconds", "ms", 1e3, 3},
           {"_bytes", "GiB", 1.0 / (1024.0 * 1024.0 * 1024.0), 2}};
  size_t n = strlen(x->what);
  for (size_t i = 0; i < sizeof u / sizeof u[0]; i++) {
    size_t k = strlen(u[i].suffix);
    if (n < k || strcmp(x->what + n - k, u[i].suffix)) continue;
    double a = x->old_v * u[i].scale, b = x->new_v * u[i].scale;
    char label[sizeof x->what];
    snprintf(label, sizeof label, "%.*s", (int)(n - k), x->what);
    for (char *c = label; *c; c++)
      if (*c == '_') *c = ' ';
    strata_buf_printf(o, "  %s%s: %.*f %s -> %.*f %s (%+.*f %s", label,
                      i == 0 ? "step time" : "", u[i].prec, a, u[i].unit,
                      u[i].prec, b, u[i].unit, u[i].prec, b - a, u[i].unit);
    return;
  }
  strata_buf_printf(o, "  %s: %.6g -> %.6g (%+.6g", x->what, x->old_v, x->new_v,
                    x->new_v - x->old_v);
}

static void text_one(strata_buf_t *o, const change_t *x) {
  if (x->sec == SEC_STRATEGIES) {
    strata_buf_printf(o, "  %s: %s\n", x->what, x->new_s);
  } else if (!x->numeric) {
    strata_buf_printf(o, "  %s: %s -> %s\n", x->what, x->old_s, x->new_s);
  } else if (x->sec == SEC_FIGURES) {
    fig_text(o, x);
    double pct = x->old_v != 0 ? 100 * (x->new_v - x->old_v) / x->old_v : 0;
    if (x->old_v != 0) /* a drift of 0.03 % shows as such, not as 0.0 % */
      strata_buf_printf(o, fabs(pct) < 0.1 ? ", %+.2g%%" : ", %+.1f%%", pct);
    strata_buf_puts(o, ")\n");
  } else {
    strata_buf_printf(o, "  %s: %.0f -> %.0f\n", x->what, x->old_v, x->new_v);
  }
}

static void to_text(const changes_t *c, strata_buf_t *o) {
  const char *s = c->tolerated == 1 ? "" : "s";
  if (!c->n && !c->tolerated) strata_buf_puts(o, "plans are identical\n");
  if (!c->n && c->tolerated)
    strata_buf_printf(o,
                      "plans are identical (%d figure%s moved by at most "
                      "%g%%)\n",
                      c->tolerated, s, 100 * c->tol);
  if (!c->n) return;
  for (int sec = 0; sec < SEC_COUNT; sec++) {
    int head = 0;
    for (int i = 0; i < c->n; i++) {
      if (c->v[i].sec != sec) continue;
      if (!head++) strata_buf_printf(o, "%s:\n", sec_name[sec]);
      text_one(o, &c->v[i]);
    }
  }
  if (c->tolerated)
    strata_buf_printf(o, "(%d more figure%s moved by at most %g%%)\n",
                      c->tolerated, s, 100 * c->tol);
}

static int json_one(cJSON *arr, const change_t *x) {
  cJSON *o = st__json_push_object(arr);
  if (!o) return -1;
  int bad = st__json_add_str(o, "section", sec_name[x->sec]) |
            st__json_add_str(o, "what", x->what);
  if (x->sec == SEC_STRATEGIES)
    return bad | st__json_add_str(o, "changes", x->new_s);
  if (!x->numeric)
    return bad | st__json_add_str(o, "old", x->old_s) |
           st__json_add_str(o, "new", x->new_s);
  return bad | st__json_add_num(o, "old", x->old_v) |
         st__json_add_num(o, "new", x->new_v) |
         st__json_add_num(o, "delta", x->new_v - x->old_v);
}

static char *to_json(const changes_t *c, const strata_plan_t *a,
                     const strata_plan_t *b) {
  cJSON *root = cJSON_CreateObject(), *arr;
  char *s = NULL;
  int bad =
      !root ||
      st__json_add_num(root, "schema_version", STRATA_JSON_SCHEMA_VERSION) ||
      st__json_add_bool(root, "identical", c->n == 0) ||
      st__json_add_num(root, "tolerance", c->tol) ||
      st__json_add_num(root, "figures_within_tolerance", c->tolerated);
  arr = bad ? NULL : cJSON_AddArrayToObject(root, "changes");
  bad |= !arr;
  for (int i = 0; !bad && i < c->n; i++)
    bad |= json_one(arr, &c->v[i]);
  bad = bad || st__checkpoint_json(a, b, root);
  if (!bad) s = st__json_print(root);
  cJSON_Delete(root);
  return s;
}

void strata_diff_opts_init(strata_diff_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->tolerance = STRATA_DIFF_TOLERANCE;
}

int strata_plan_diff_opts(const strata_plan_t *a, const strata_plan_t *b,
                          const strata_diff_opts_t *o, char **text,
                          int *differs) {
  changes_t c = {0};
  strata_buf_t out;
  int rc = 0;
  if (!a || !b || !text || !o || a->n_stages < 1 || b->n_stages < 1)
    return strata_error(STRATA_EINVAL, "diff: a plan with no stage");
  if (!(o->tolerance >= 0 && o->tolerance < 1))
    return strata_error(STRATA_EINVAL,
                        "diff: the tolerance is a fraction from 0 to 1, not "
                        "%g",
                        o->tolerance);
  c.tol = o->tolerance;
  strata_buf_init(&out);
  diff_degrees(&c, a, b);
  diff_stages(&c, a, b);
  diff_layers(&c, a, b);
  diff_outside(&c, a, b);
  diff_figures(&c, a, b);
  if (!c.oom) {
    if (o->json) {
      *text = to_json(&c, a, b);
    } else {
      to_text(&c, &out);
      if (c.n && st__checkpoint_text(a, b, &out)) c.oom = 1;
      *text = out.oom ? NULL : strata_buf_steal(&out, NULL);
    }
  }
  if (c.oom || !*text)
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  else if (differs)
    *differs = c.n > 0;
  changes_free(&c);
  strata_buf_free(&out);
  return rc;
}

int strata_plan_diff(const strata_plan_t *a, const strata_plan_t *b, int json,
                     char **text, int *differs) {
  strata_diff_opts_t o;
  strata_diff_opts_init(&o);
  o.json = json;
  o.tolerance = 0; /* exact, as it always was */
  return strata_plan_diff_opts(a, b, &o, text, differs);
}
