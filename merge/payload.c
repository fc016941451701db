/*
 * payload.c - the plan payload: every field of a strata_plan_t that show,
 * diff and the exporters read, in a fixed order, in the binary encoding of
 * codec.h (docs/plan-format.md lists the order).
 *
 * Binary rather than JSON because it round-trips doubles bit for bit and
 * has exactly one encoding of a plan, which is what "decode then encode
 * gives the same bytes" needs; zlib then squeezes the repeated strings.
 * A stage's op list that equals an earlier stage's (the usual case: every
 * middle stage runs the same layer template) is written as a reference to
 * that stage, so a 96-layer, 64-stage plan stores its template once.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/text.h"
#include "merge/payload.h"
#include "merge/plan_legacy.h"

#define BIG (1 << 30)

/* plan_fields.h's rows in their form: a kept row's tag below
 * STRATA_PLAN_TAG_NEXT, a row not kept at tag 0, and a row in the old
 * form (codec TI/TD, slot: a format) says what to do
 * (payload_tags.c keeps the rows under their tags). */
#define OLD_MUST(key, tag)                                                     \
  _Static_assert((tag) > 0 && (tag) < STRATA_PLAN_TAG_NEXT,                    \
                 #key "'s tag is not below STRATA_PLAN_TAG_NEXT");
#define OLD_OPT OLD_MUST
#define OLD_NONE(key, tag)                                                     \
  _Static_assert((tag) == 0, #key " is not kept: its tag is 0");
#define OLD_TI(key, tag)                                                       \
  _Static_assert(0, #key ": codec TI/TD is the old form: write MUST (or "      \
                         "OPT) and a new tag, plan_fields.h's recipe");
#define OLD_TD OLD_TI
#define OLD_TN OLD_TI
#define OLD(part, t, m, key, what, lo, hi, codec, tag, ...)                    \
  OLD_##codec(key, tag)
STRATA_PLAN_FIELDS(OLD)

int st__ops_equal(const strata_op_choice_t *a, int na,
                  const strata_op_choice_t *b, int nb) {
  if (na != nb) return 0;
  for (int i = 0; i < na; i++) {
    const strata_op_choice_t *x = &a[i], *y = &b[i];
    if (x->layer != y->layer || x->repeat != y->repeat ||
        memcmp(&x->mem_bytes, &y->mem_bytes, sizeof x->mem_bytes) ||
        memcmp(&x->comm_seconds, &y->comm_seconds, sizeof x->comm_seconds))
      return 0;
    if ((!x->name) != (!y->name) || (!x->strategy) != (!y->strategy) ||
        (!x->placement) != (!y->placement))
      return 0;
    if ((x->name && strcmp(x->name, y->name)) ||
        (x->strategy && strcmp(x->strategy, y->strategy)) ||
        (x->placement && strcmp(x->placement, y->placement)))
      return 0;
  }
  return 1;
}

/* ---- encoding ----
 *
 * A plan file holds the plan, not how it was found: the planning time,
 * ILP solve times and cache statistics of a run are written as 0, so the
 * same inputs give the same bytes whatever the machine, load or cache. */

/* The header: model, cluster, family, then the header's ints and
 * doubles, each field at its slot of plan_fields.h. */
#define ENC_HI(m, slot) ints[slot] = (int)p->m;
#define ENC_HE ENC_HI
#define ENC_HZ(m, slot) ints[slot] = 0;
#define ENC_HD(m, slot) dbl[slot] = p->m;
#define ENC_HZD(m, slot) dbl[slot] = 0.0;
#define ENC_TI(m, slot)
#define ENC_TN ENC_TI
#define ENC_TD(m, slot)
#define ENC(part, t, m, key, what, lo, hi, codec, slot) ENC_##codec(m, slot)

static void put_header(st__wr_t *w, const strata_plan_t *p) {
  int ints[ST__LEGACY_INTS] = {0};
  double dbl[ST__LEGACY_DOUBLES] = {0};
  ST__PLAN_LEGACY(ENC)
  st__wr_s(w, p->model);
  st__wr_s(w, p->cluster);
  st__wr_s(w, p->family);
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
    st__wr_i(w, ints[i]);
  for (size_t i = 0; i < sizeof dbl / sizeof dbl[0]; i++)
    st__wr_f(w, dbl[i]);
}

static void put_mesh(st__wr_t *w, const strata_mesh_t *m) {
  st__wr_i(w, m->ndim);
  for (int a = 0; a < STRATA_MESH_MAX_DIMS; a++) {
    st__wr_i(w, m->shape[a]);
    st__wr_f(w, m->axis[a].bandwidth);
    st__wr_f(w, m->axis[a].latency);
  }
}

static void put_result(st__wr_t *w, const strata_stage_result_t *r) {
  const double dbl[] = {r->alpha,
                        r->objective,
                        r->memory_redundancy_bytes,
                        r->comm_bytes,
                        r->comm_seconds,
                        r->compute_seconds,
                        r->fwd_seconds,
                        r->bwd_seconds,
                        r->fwd_comm_seconds,
                        r->bwd_comm_seconds,
                        r->sync_seconds,
                        r->peak_memory_bytes,
                        r->zero_redundancy_bytes,
                        r->mem.weights,
                        r->mem.gradients,
                        r->mem.optimizer,
                        r->mem.activations,
                        r->mem.transient,
                        r->mem.total,
                        r->activations_per_layer,
                        r->min_memory_bytes,
                        0.0 /* solve_seconds */};
  const int ints[] = {(int)r->status,     r->devices,          r->homogeneous,
                      r->int_vars,        r->cont_vars,        r->rows,
                      r->int_vars_before, r->cont_vars_before, r->rows_before};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
    st__wr_i(w, ints[i]);
  for (size_t i = 0; i < sizeof dbl / sizeof dbl[0]; i++)
    st__wr_f(w, dbl[i]);
  st__wr_s(w, r->hint);
}

static void put_ops(st__wr_t *w, const strata_stage_result_t *r) {
  st__wr_u(w, (uint64_t)r->n_ops);
  for (int i = 0; i < r->n_ops; i++) {
    const strata_op_choice_t *o = &r->ops[i];
    st__wr_s(w, o->name);
    st__wr_i(w, o->layer);
    st__wr_i(w, o->repeat);
    st__wr_s(w, o->strategy);
    st__wr_s(w, o->placement);
    st__wr_f(w, o->mem_bytes);
    st__wr_f(w, o->comm_seconds);
  }
}

/* 0: the ops follow; k: the same list as stage k - 1. */
static int op_ref(const strata_plan_t *p, int s) {
  const strata_stage_result_t *r = p->stages[s].result;
  for (int t = 0; t < s; t++) {
    const strata_stage_result_t *q = p->stages[t].result;
    if (q && st__ops_equal(q->ops, q->n_ops, r->ops, r->n_ops)) return t + 1;
  }
  return 0;
}

static void put_stage(st__wr_t *w, const strata_plan_t *p, int s) {
  const strata_plan_stage_t *st = &p->stages[s];
  const int ints[] = {st->layer_begin,   st->layer_end, st->with_prologue,
                      st->with_epilogue, st->nodes,     st->gpus_per_node,
                      st->first_rank,    st->in_flight, st->rank};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
    st__wr_i(w, ints[i]);
  put_mesh(w, &st->mesh);
  st__wr_f(w, st->fwd_seconds);
  st__wr_f(w, st->bwd_seconds);
  st__wr_f(w, st->sync_seconds);
  st__wr_i(w, st->result ? 1 : 0);
  if (!st->result) return;
  put_result(w, st->result);
  int ref = op_ref(p, s);
  st__wr_i(w, ref);
  if (!ref) put_ops(w, st->result);
}

/* A rank's memory items and times, in this order. */
#define RANK_FIELDS 20
static void rank_fields(strata_plan_rank_t *k, double **f) {
  double *v[RANK_FIELDS] = {
      &k->mem.weights,       &k->mem.gradients,     &k->mem.optimizer,
      &k->mem.activations,   &k->mem.transient,     &k->mem.context,
      &k->mem.workspace,     &k->mem.nccl,          &k->mem.buckets,
      &k->mem.fragmentation, &k->mem.calibration,   &k->mem.total,
      &k->busy_seconds,      &k->end_seconds,       &k->sync_seconds,
      &k->exposed_sync,      &k->optimizer_seconds, &k->mem.ep_buffers,
      &k->mem.cp_buffers,    &k->mem.experts};
  memcpy(f, v, sizeof v);
}

static void put_rank(st__wr_t *w, const strata_plan_rank_t *k) {
  strata_plan_rank_t zero;
  double *f[RANK_FIELDS];
  memset(&zero, 0, sizeof zero);
  rank_fields(k ? (strata_plan_rank_t *)k : &zero, f);
  for (int i = 0; i < RANK_FIELDS; i++)
    st__wr_f(w, *f[i]);
}

static void put_config(st__wr_t *w, const strata_plan_config_t *c) {
  const int ints[] = {c->tp,          c->pp,
                      c->dp,          c->micro_batch,
                      c->vpp,         c->sequence_parallel,
                      c->zero_stage,  c->first_layers,
                      c->last_layers, (int)c->recompute,
                      c->fits,        c->cp,
                      c->ep,          c->etp,
                      c->fp8};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
    st__wr_i(w, ints[i]);
  st__wr_f(w, c->step_seconds);
  st__wr_f(w, c->peak_memory_bytes);
}

/* Format 14: the fallback plans, each as its format, its payload's
 * length and its payload (a fallback holds none of its own). */
static int put_fallbacks(st__wr_t *w, const strata_plan_t *p) {
  st__wr_u(w, (uint64_t)p->n_fallbacks);
  for (int i = 0; i < p->n_fallbacks; i++) {
    strata_buf_t sub;
    int rc = st__payload_encode_legacy(p->fallbacks[i], &sub);
    if (rc) return rc;
    st__wr_u(w, (uint64_t)st__legacy_format(p->fallbacks[i]));
    st__wr_u(w, (uint64_t)sub.len);
    strata_buf_append(&w->b, sub.p, sub.len);
    strata_buf_free(&sub);
  }
  return 0;
}

/* The fields kept after the stages (codec TI and TD): each from the
 * format of its slot on, in the order of the list. */
#define TAIL_TI(m, slot)                                                       \
  if (f == slot) st__wr_i(w, p->m);
#define TAIL_TN TAIL_TI
#define TAIL_TD(m, slot)                                                       \
  if (f == slot) st__wr_f(w, p->m);
#define TAIL_HI(m, slot)
#define TAIL_HE TAIL_HI
#define TAIL_HZ TAIL_HI
#define TAIL_HD TAIL_HI
#define TAIL_HZD TAIL_HI
#define TAIL(part, t, m, key, what, lo, hi, codec, slot) TAIL_##codec(m, slot)

#define TAIL_BOUND(part, t, m, key, what, lo, hi, codec, slot)                 \
  _Static_assert(ST__TI_##codec(slot) <= ST__LEGACY_NEWEST,                    \
                 #key "'s format is newer than the legacy formats");
#define ST__TI_TI(slot) (slot)
#define ST__TI_TN(slot) (slot)
#define ST__TI_TD(slot) (slot)
#define ST__TI_HI(slot) 0
#define ST__TI_HE(slot) 0
#define ST__TI_HZ(slot) 0
#define ST__TI_HD(slot) 0
#define ST__TI_HZD(slot) 0
ST__PLAN_LEGACY(TAIL_BOUND)

static void put_tail_fields(st__wr_t *w, const strata_plan_t *p, int f) {
  ST__PLAN_LEGACY(TAIL)
}

/* The format a tail field needs: its slot, where it is not 0 (not 1 for
 * a TN switch). */
#define NEED_TI(m, slot)                                                       \
  if (p->m != 0 && v < slot) v = slot;
#define NEED_TN(m, slot)                                                       \
  if (p->m != 1 && v < slot) v = slot;
#define NEED_TD NEED_TI
#define NEED_HI(m, slot)
#define NEED_HE NEED_HI
#define NEED_HZ NEED_HI
#define NEED_HD NEED_HI
#define NEED_HZD NEED_HI
#define NEED(part, t, m, key, what, lo, hi, codec, slot) NEED_##codec(m, slot)

int st__legacy_format(const strata_plan_t *p) {
  int v = p->n_groups > 1 ? 4 : 3;
  if (p->qk_norm > 1 && v < 5) v = 5; /* an L2 norm: format 5's */
  ST__PLAN_LEGACY(NEED)
  if (p->rope_scaling.type != STRATA_ROPE_SCALING_NONE && v < 7) v = 7;
  if (p->n_pareto > 0 && v < 13) v = 13;
  if (p->n_fallbacks > 0 && v < 14) v = 14;
  if (st__has_layouts(p) && v < 17) v = 17;
  return v;
}

/* Whether a listed configuration states its layout (format 17's). */
int st__has_layouts(const strata_plan_t *p) {
  for (int i = 0; i < p->n_top; i++)
    if (p->top[i].layout[0]) return 1;
  for (int i = 0; i < p->n_pareto; i++)
    if (p->pareto[i].layout[0]) return 1;
  return 0;
}

/* Format 17: each listed configuration's layout ("" where its first and
 * last rank tell it), the best ones' then the front's. */
void st__put_layouts(st__wr_t *w, const strata_plan_t *p) {
  for (int i = 0; i < p->n_top; i++)
    st__wr_s(w, p->top[i].layout);
  for (int i = 0; i < p->n_pareto; i++)
    st__wr_s(w, p->pareto[i].layout);
}

void st__get_layouts(st__rd_t *r, strata_plan_t *p) {
  for (int i = 0; i < p->n_top && !r->bad; i++)
    st__rd_sbuf(r, "configuration layout", p->top[i].layout,
                sizeof p->top[i].layout);
  for (int i = 0; i < p->n_pareto && !r->bad; i++)
    st__rd_sbuf(r, "configuration layout", p->pareto[i].layout,
                sizeof p->pareto[i].layout);
}

/* Format 7: the RoPE scaling after format 6's overlap. */
void st__put_rope(st__wr_t *w, const strata_rope_scaling_t *r) {
  const int ints[] = {r->type, r->original, r->unrounded, r->full_only};
  const double dbl[] = {r->factor, r->low, r->high, r->mscale, r->mscale_all};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
    st__wr_i(w, ints[i]);
  for (size_t i = 0; i < sizeof dbl / sizeof dbl[0]; i++)
    st__wr_f(w, dbl[i]);
}

/* Format 7 is written for a RoPE scaling; later formats hold one, or none
 * (type 0), whatever made them later. */
void st__get_rope(st__rd_t *r, strata_rope_scaling_t *s, unsigned version) {
  s->type = st__rd_int(r, "rope scaling type",
                       version > 7 ? STRATA_ROPE_SCALING_NONE
                                   : STRATA_ROPE_SCALING_LLAMA3,
                       STRATA_ROPE_SCALING_COUNT - 1);
  s->original = st__rd_int(r, "rope scaling's original context", 0, BIG);
  s->unrounded = st__rd_int(r, "rope scaling's rounding", 0, 1);
  s->full_only = st__rd_int(r, "rope scaling's layers", 0, 1);
  double *dbl[] = {&s->factor, &s->low, &s->high, &s->mscale, &s->mscale_all};
  for (size_t i = 0; i < sizeof dbl / sizeof dbl[0]; i++) {
    *dbl[i] = st__rd_f(r, "rope scaling figures");
    if (!r->bad && !(*dbl[i] >= 0 && *dbl[i] <= 1e9)) {
      r->bad = "rope scaling figures";
      r->why = "are not in [0, 1e9]";
    }
  }
}

/* The stage count, the stages, the p2p times between them. */
void st__put_stages(st__wr_t *w, const strata_plan_t *p) {
  st__wr_u(w, (uint64_t)p->n_stages);
  for (int s = 0; s < p->n_stages; s++)
    put_stage(w, p, s);
  for (int s = 0; s + 1 < p->n_stages; s++)
    st__wr_f(w, p->p2p_seconds ? p->p2p_seconds[s] : 0);
}

/* Each pipeline rank's figures (pp of them). */
void st__put_ranks(st__wr_t *w, const strata_plan_t *p) {
  for (int k = 0; k < p->pp; k++)
    put_rank(w, p->ranks ? &p->ranks[k] : NULL);
}

/* A list of configurations: its count, then each. */
void st__put_configs(st__wr_t *w, const strata_plan_config_t *v, int n) {
  st__wr_u(w, (uint64_t)n);
  for (int i = 0; i < n; i++)
    put_config(w, &v[i]);
}

/* A mixed cluster's node groups: their count, each stage's group and GPU
 * model, where each kept configuration runs. */
void st__put_groups(st__wr_t *w, const strata_plan_t *p) {
  st__wr_u(w, (uint64_t)p->n_groups);
  for (int s = 0; s < p->n_stages; s++) {
    st__wr_i(w, p->stages[s].group);
    st__wr_s(w, p->stages[s].gpu_model);
  }
  for (int i = 0; i < p->n_top; i++)
    st__wr_i(w, p->top[i].group);
}

/* A plan in the format of 3 to 17 that holds it (plan_legacy.h), as the
 * strata of those formats wrote it: the tests' proof that such files
 * still read, field for field. */
int st__payload_encode_legacy(const strata_plan_t *p, strata_buf_t *out) {
  st__wr_t w;
  int v = st__legacy_format(p), rc = 0;
  strata_buf_init(&w.b);
  put_header(&w, p);
  st__put_stages(&w, p);
  st__put_ranks(&w, p);
  st__put_configs(&w, p->top, p->n_top);
  if (p->n_groups > 1) st__put_groups(&w, p); /* format 4 */
  /* format 5 on: the groups' count even when 1, then each format's fields
   * (format 7's RoPE scaling is a struct of its own) */
  if (v >= 5 && p->n_groups <= 1) st__wr_u(&w, 1);
  for (int f = 5; f <= v; f++) {
    put_tail_fields(&w, p, f);
    if (f == 7) st__put_rope(&w, &p->rope_scaling);
    if (f == 13) st__put_configs(&w, p->pareto, p->n_pareto);
    if (f == 14 && !rc) rc = put_fallbacks(&w, p);
    if (f == 17) st__put_layouts(&w, p);
  }
  if (rc) {
    strata_buf_free(&w.b);
    return rc;
  }
  if (w.b.oom) {
    strata_buf_free(&w.b);
    return strata_error(STRATA_ENOMEM, "out of memory");
  }
  *out = w.b;
  return 0;
}

/* ---- decoding ---- */

/* How each header int is read: an enum in its range under its own name,
 * any other within [-1, BIG]. */
#define SLOT_HI(key, lo, hi, slot) [slot] = {"plan scalars", -1, BIG},
#define SLOT_HZ SLOT_HI
#define SLOT_HE(key, lo, hi, slot) [slot] = {#key, lo, hi},
#define SLOT_HD(key, lo, hi, slot)
#define SLOT_HZD SLOT_HD
#define SLOT_TI SLOT_HD
#define SLOT_TN SLOT_HD
#define SLOT_TD SLOT_HD
#define SLOT(part, t, m, key, what, lo, hi, codec, slot)                       \
  SLOT_##codec(key, lo, hi, slot)

static const struct {
  const char *label;
  int lo, hi;
} int_slot[ST__LEGACY_INTS] = {ST__PLAN_LEGACY(SLOT)};

#define DEC_HI(t, m, slot) p->m = (t)ints[slot];
#define DEC_HE DEC_HI
#define DEC_HZ DEC_HI
#define DEC_HD(t, m, slot) p->m = dbl[slot];
#define DEC_HZD DEC_HD
#define DEC_TI(t, m, slot)
#define DEC_TN DEC_TI
#define DEC_TD DEC_TI
#define DEC(part, t, m, key, what, lo, hi, codec, slot) DEC_##codec(t, m, slot)

/* Run statistics are never stored (written as 0): a file holding them
 * would not re-encode to itself. */
#define STAT_HZ(slot) bad |= ints[slot] != 0;
#define STAT_HZD(slot) bad |= memcmp(&dbl[slot], &(double){0}, sizeof(double));
#define STAT_HI(slot)
#define STAT_HE STAT_HI
#define STAT_HD STAT_HI
#define STAT_TI STAT_HI
#define STAT_TN STAT_HI
#define STAT_TD STAT_HI
#define STAT(part, t, m, key, what, lo, hi, codec, slot) STAT_##codec(slot)

static void get_header(st__rd_t *r, strata_plan_t *p, int *oom) {
  int ints[ST__LEGACY_INTS], bad = 0;
  double dbl[ST__LEGACY_DOUBLES];
  p->model = st__rd_s(r, "model", oom);
  p->cluster = st__rd_s(r, "cluster", oom);
  st__rd_sbuf(r, "family", p->family, sizeof p->family);
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
    ints[i] = st__rd_int(r, int_slot[i].label, int_slot[i].lo, int_slot[i].hi);
  for (size_t i = 0; i < sizeof dbl / sizeof dbl[0]; i++)
    dbl[i] = st__rd_f(r, "plan figures");
  if (r->bad) return;
  ST__PLAN_LEGACY(DEC)
  ST__PLAN_LEGACY(STAT)
  if (bad) {
    r->bad = "plan statistics";
    r->why = "are not 0 (a plan file never stores them)";
  }
  st__check_batch(r, p);
}

/* Every exporter divides by these (found by fuzz_plan: micro-batch x dp
 * overflowed to 0); a plan's step is n_micro micro-batches per replica. */
void st__check_batch(st__rd_t *r, const strata_plan_t *p) {
  if (!r->bad &&
      (p->tp < 1 || p->dp < 1 || p->micro_batch < 1 || p->n_micro < 1 ||
       (long long)p->micro_batch * p->dp * p->n_micro != p->global_batch)) {
    r->bad = "batch";
    r->why = "is not micro-batch x dp x micro-batches per step, each at "
             "least 1";
  }
}

/* Every header slot is some field's (a test calls this). */
int st__plan_fields_complete(void) {
  for (int i = 0; i < ST__LEGACY_INTS; i++)
    if (!int_slot[i].label) return 0;
  return 1;
}

static void get_mesh(st__rd_t *r, strata_mesh_t *m) {
  m->ndim = st__rd_int(r, "mesh dimensions", 1, STRATA_MESH_MAX_DIMS);
  for (int a = 0; a < STRATA_MESH_MAX_DIMS; a++) {
    m->shape[a] = st__rd_int(r, "mesh shape", 0, BIG);
    m->axis[a].bandwidth = st__rd_f(r, "mesh bandwidth");
    m->axis[a].latency = st__rd_f(r, "mesh latency");
  }
}

static void get_result(st__rd_t *r, strata_stage_result_t *x, int *oom) {
  int *ints[] = {
      NULL,           &x->devices, &x->homogeneous,     &x->int_vars,
      &x->cont_vars,  &x->rows,    &x->int_vars_before, &x->cont_vars_before,
      &x->rows_before};
  double *dbl[] = {&x->alpha,
                   &x->objective,
                   &x->memory_redundancy_bytes,
                   &x->comm_bytes,
                   &x->comm_seconds,
                   &x->compute_seconds,
                   &x->fwd_seconds,
                   &x->bwd_seconds,
                   &x->fwd_comm_seconds,
                   &x->bwd_comm_seconds,
                   &x->sync_seconds,
                   &x->peak_memory_bytes,
                   &x->zero_redundancy_bytes,
                   &x->mem.weights,
                   &x->mem.gradients,
                   &x->mem.optimizer,
                   &x->mem.activations,
                   &x->mem.transient,
                   &x->mem.total,
                   &x->activations_per_layer,
                   &x->min_memory_bytes,
                   &x->solve_seconds};
  x->status = (strata_stage_status_t)st__rd_int(r, "stage status", 0, 3);
  for (size_t i = 1; i < sizeof ints / sizeof ints[0]; i++)
    *ints[i] = st__rd_int(r, "stage result scalars", -1, BIG);
  for (size_t i = 0; i < sizeof dbl / sizeof dbl[0]; i++)
    *dbl[i] = st__rd_f(r, "stage result figures");
  if (!r->bad && memcmp(&x->solve_seconds, &(double){0}, sizeof(double))) {
    r->bad = "stage solve time";
    r->why = "is not 0 (a plan file never stores it)";
  }
  x->hint = st__rd_s(r, "stage hint", oom);
}

static int get_ops(st__rd_t *r, strata_stage_result_t *x, int *oom) {
  uint64_t n = st__rd_u(r, "op count");
  if (r->bad) return 0;
  if (n > r->len - r->pos) { /* each op takes well over a byte */
    r->bad = "op count";
    r->why = "is larger than the payload";
    return 0;
  }
  x->ops = strata_calloc(n ? (size_t)n : 1, sizeof *x->ops);
  if (!x->ops) return strata_error(STRATA_ENOMEM, "out of memory");
  x->n_ops = (int)n;
  for (int i = 0; i < x->n_ops && !r->bad && !*oom; i++) {
    strata_op_choice_t *o = &x->ops[i];
    o->name = st__rd_s(r, "op name", oom);
    o->layer = st__rd_int(r, "op layer", -1, BIG);
    o->repeat = st__rd_int(r, "op repeat", 0, BIG);
    o->strategy = st__rd_s(r, "op strategy", oom);
    o->placement = st__rd_s(r, "op placement", oom);
    o->mem_bytes = st__rd_f(r, "op memory");
    o->comm_seconds = st__rd_f(r, "op communication");
  }
  return *oom ? strata_error(STRATA_ENOMEM, "out of memory") : 0;
}

static int copy_ops(const strata_stage_result_t *from,
                    strata_stage_result_t *x) {
  x->ops = strata_calloc(from->n_ops ? (size_t)from->n_ops : 1, sizeof *x->ops);
  if (!x->ops) return strata_error(STRATA_ENOMEM, "out of memory");
  x->n_ops = from->n_ops;
  for (int i = 0; i < x->n_ops; i++) {
    const strata_op_choice_t *a = &from->ops[i];
    strata_op_choice_t *o = &x->ops[i];
    *o = *a;
    o->name = a->name ? strata_strdup(a->name) : NULL;
    o->strategy = a->strategy ? strata_strdup(a->strategy) : NULL;
    o->placement = a->placement ? strata_strdup(a->placement) : NULL;
    if ((a->name && !o->name) || (a->strategy && !o->strategy) ||
        (a->placement && !o->placement))
      return strata_error(STRATA_ENOMEM, "out of memory");
  }
  return 0;
}

static int get_stage_ops(st__rd_t *r, strata_plan_t *p, int s, int *oom) {
  strata_stage_result_t *x = p->stages[s].result;
  int ref = st__rd_int(r, "op list reference", 0, s);
  if (r->bad) return 0;
  if (ref && !p->stages[ref - 1].result) {
    r->bad = "op list reference";
    r->why = "names a stage without a result";
    return 0;
  }
  int rc = ref ? copy_ops(p->stages[ref - 1].result, x) : get_ops(r, x, oom);
  /* The encoder always refers to the first equal list: any other choice
   * would re-encode to different bytes. */
  if (!rc && !r->bad && op_ref(p, s) != ref) {
    r->bad = "op list reference";
    r->why = "is not the first stage with the same operators";
  }
  return rc;
}

static int get_stage(st__rd_t *r, strata_plan_t *p, int s, int *oom) {
  strata_plan_stage_t *st = &p->stages[s];
  int *ints[] = {&st->layer_begin,   &st->layer_end, &st->with_prologue,
                 &st->with_epilogue, &st->nodes,     &st->gpus_per_node,
                 &st->first_rank,    &st->in_flight, &st->rank};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
    *ints[i] = st__rd_int(r, "stage scalars", -1, BIG);
  /* its replicas run on the plan's devices: every product of a stage's
   * width and dp that readers form then fits (found by fuzz_plan) */
  if (!r->bad &&
      (st->nodes < 1 || st->gpus_per_node < 1 ||
       (long long)st->nodes * st->gpus_per_node * p->dp > p->devices)) {
    r->bad = "stage devices";
    r->why = "times dp are not within the plan's devices";
  }
  get_mesh(r, &st->mesh);
  st->fwd_seconds = st__rd_f(r, "stage forward time");
  st->bwd_seconds = st__rd_f(r, "stage backward time");
  st->sync_seconds = st__rd_f(r, "stage sync time");
  int has = st__rd_int(r, "stage result flag", 0, 1);
  if (r->bad || !has) return 0;
  st->result = strata_calloc(1, sizeof *st->result);
  if (!st->result) return strata_error(STRATA_ENOMEM, "out of memory");
  get_result(r, st->result, oom);
  if (*oom) return strata_error(STRATA_ENOMEM, "out of memory");
  return get_stage_ops(r, p, s, oom);
}

static int get_body(st__rd_t *r, strata_plan_t *p, int *oom) {
  get_header(r, p, oom);
  if (*oom) return strata_error(STRATA_ENOMEM, "out of memory");
  return st__get_stages(r, p, oom);
}

/* The stages and the p2p times between them (st__put_stages), after the
 * degrees they are checked against. */
int st__get_stages(st__rd_t *r, strata_plan_t *p, int *oom) {
  int rc = 0;
  uint64_t n = st__rd_u(r, "stage count");
  if (!r->bad && (n < 1 || n > r->len - r->pos)) {
    r->bad = "stage count";
    r->why = "is out of range";
  }
  if (!r->bad && (p->pp < 1 || (uint64_t)p->pp > n)) { /* n = pp x vpp */
    r->bad = "pipeline size";
    r->why = "is not between 1 and the stage count";
  }
  if (r->bad) return 0;
  p->stages = strata_calloc((size_t)n, sizeof *p->stages);
  if (!p->stages) return strata_error(STRATA_ENOMEM, "out of memory");
  p->n_stages = (int)n;
  for (int s = 0; s < p->n_stages && !rc && !r->bad; s++)
    rc = get_stage(r, p, s, oom);
  if (rc || r->bad || n < 2) return rc;
  p->p2p_seconds = strata_calloc((size_t)n - 1, sizeof *p->p2p_seconds);
  if (!p->p2p_seconds) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int s = 0; s + 1 < p->n_stages; s++)
    p->p2p_seconds[s] = st__rd_f(r, "p2p times");
  return 0;
}

static void get_config(st__rd_t *r, strata_plan_config_t *c) {
  int *ints[] = {&c->tp,          &c->pp,
                 &c->dp,          &c->micro_batch,
                 &c->vpp,         &c->sequence_parallel,
                 &c->zero_stage,  &c->first_layers,
                 &c->last_layers, NULL,
                 &c->fits,        &c->cp,
                 &c->ep,          &c->etp,
                 &c->fp8};
  for (size_t j = 0; j < sizeof ints / sizeof ints[0]; j++) {
    if (j == 9)
      c->recompute = (strata_recompute_t)st__rd_int(r, "recompute", 0, 2);
    else
      *ints[j] = st__rd_int(r, "configuration", 0, BIG);
  }
  c->step_seconds = st__rd_f(r, "configuration step");
  c->peak_memory_bytes = st__rd_f(r, "configuration memory");
}

static int get_tail(st__rd_t *r, strata_plan_t *p) {
  int rc = st__get_ranks(r, p);
  return rc ? rc : st__get_configs(r, p);
}

/* Each pipeline rank's figures (st__put_ranks). */
int st__get_ranks(st__rd_t *r, strata_plan_t *p) {
  if (r->bad) return 0;
  if (p->pp < 1 || p->pp > p->n_stages || p->n_stages % p->pp) {
    r->bad = "pipeline size";
    r->why = "does not match the stages";
    return 0;
  }
  p->ranks = strata_calloc((size_t)p->pp, sizeof *p->ranks);
  if (!p->ranks) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int k = 0; k < p->pp && !r->bad; k++) {
    double *f[RANK_FIELDS];
    rank_fields(&p->ranks[k], f);
    for (int i = 0; i < RANK_FIELDS; i++)
      *f[i] = st__rd_f(r, "rank figures");
  }
  return 0;
}

/* The kept configurations (st__put_configs). */
int st__get_configs(st__rd_t *r, strata_plan_t *p) {
  uint64_t n = st__rd_u(r, "configuration count");
  if (!r->bad && n > 100) {
    r->bad = "configuration count";
    r->why = "is above 100";
  }
  if (r->bad) return 0;
  p->top = strata_calloc(n ? (size_t)n : 1, sizeof *p->top);
  if (!p->top) return strata_error(STRATA_ENOMEM, "out of memory");
  p->n_top = (int)n;
  for (int i = 0; i < p->n_top && !r->bad; i++)
    get_config(r, &p->top[i]);
  return 0;
}

/* Format 13: the Pareto front (put_pareto). */
int st__get_pareto(st__rd_t *r, strata_plan_t *p) {
  uint64_t n = st__rd_u(r, "Pareto front's count");
  if (!r->bad && n > STRATA_PARETO_MAX) {
    r->bad = "Pareto front's count";
    r->why = "is above 4096";
  }
  if (!r->bad && (n > 0) != (p->pareto_axes > 0)) {
    r->bad = "Pareto front's count";
    r->why = "does not match its axes (a front with axes, none without)";
  }
  if (r->bad || n == 0) return 0;
  p->pareto = strata_calloc((size_t)n, sizeof *p->pareto);
  if (!p->pareto) return strata_error(STRATA_ENOMEM, "out of memory");
  p->n_pareto = (int)n;
  for (int i = 0; i < p->n_pareto && !r->bad; i++)
    get_config(r, &p->pareto[i]);
  return 0;
}

/* Format 14: the fallback plans (put_fallbacks), each decoded as a plan
 * of its own format; a fallback that holds fallbacks, or one of another
 * count of nodes lost than its place, is corrupt. */
static int payload_decode(const unsigned char *data, size_t len,
                          const char *where, unsigned version, int nested,
                          strata_plan_t **out);

static int get_fallbacks(st__rd_t *r, strata_plan_t *p, const char *where,
                         int nested) {
  uint64_t n = st__rd_u(r, "fallback count");
  if (!r->bad && n > STRATA_FALLBACKS_MAX) {
    r->bad = "fallback count";
    r->why = "is above 16";
  }
  if (!r->bad && n > 0 && nested) { /* read before it nests any deeper */
    r->bad = "fallback count";
    r->why = "is not 0 in a fallback plan (a fallback holds none)";
  }
  if (r->bad || n == 0) return 0;
  p->fallbacks = strata_calloc((size_t)n, sizeof *p->fallbacks);
  if (!p->fallbacks) return strata_error(STRATA_ENOMEM, "out of memory");
  for (uint64_t i = 0; i < n && !r->bad; i++) {
    uint64_t v = st__rd_u(r, "fallback's format");
    if (!r->bad && (v < 14 || v > ST__LEGACY_NEWEST)) {
      r->bad = "fallback's format";
      r->why = "is not 14 to 17";
    }
    uint64_t len = st__rd_u(r, "fallback's length");
    if (!r->bad && len > r->len - r->pos) {
      r->bad = "fallback's length";
      r->why = "runs past the payload";
    }
    if (r->bad) return 0;
    char w[300];
    snprintf(w, sizeof w, "%s (fallback %d)", where, (int)i + 1);
    int rc = payload_decode(r->p + r->pos, (size_t)len, w, (unsigned)v, 1,
                            &p->fallbacks[i]);
    if (rc) return rc;
    p->n_fallbacks = (int)i + 1;
    r->pos += (size_t)len;
  }
  return 0;
}

/* Format 4: the node groups of a mixed cluster and each stage's (format 5
 * writes the count even when it is 1, with nothing after it). */
void st__get_groups(st__rd_t *r, strata_plan_t *p, int one_ok) {
  uint64_t n = st__rd_u(r, "node group count");
  if (!r->bad && one_ok && n == 1) return;
  if (!r->bad && (n < 2 || n > 64)) {
    r->bad = "node group count";
    r->why = one_ok ? "is not 1 to 64" : "is not 2 to 64";
    return;
  }
  p->n_groups = (int)n;
  for (int s = 0; s < p->n_stages && !r->bad; s++) {
    p->stages[s].group = st__rd_int(r, "stage group", 0, p->n_groups - 1);
    st__rd_sbuf(r, "stage GPU model", p->stages[s].gpu_model,
                sizeof p->stages[s].gpu_model);
  }
  for (int i = 0; i < p->n_top && !r->bad; i++)
    p->top[i].group = st__rd_int(r, "configuration group", 0, p->n_groups);
}

/* ---- the plan's own consistency ----
 *
 * Each field read above is in its own range; these checks hold the fields
 * against each other, as the planner writes them, so that every reader
 * (show, diff, the exporters, the device map) can divide by, multiply and
 * index with them: devices = the sum over pipeline ranks of each rank's
 * stage width x dp (tp x cp in Megatron mode and on a mixed cluster), stage
 * s on pipeline rank s mod pp, the stages' layers one after another, every
 * product that a reader forms within an int, every time and size a finite
 * number that is not negative, every name printable text (core/text.h).
 * The encoder runs the same checks (strata_plan_encode), so strata never
 * writes a plan it would call corrupt. */

#define MAX_STAGES 1024 /* pp x vpp, model/eval.c's ST__MAX_PP */
#define MAX_VPP 64
#define MAX_GPN 1024 /* GPUs per node, docs/cluster-format.md */

typedef struct {
  const char *where, *kind, *whose; /* "FILE", "corrupt", "the plan's" */
  int code, rc;
} ck_t;

__attribute__((format(printf, 2, 3))) static void ck_bad(ck_t *k,
                                                         const char *fmt, ...) {
  char msg[256];
  va_list ap;
  if (k->rc) return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  k->rc =
      strata_error(k->code, "%s: %s: %s %s", k->where, k->kind, k->whose, msg);
}

static void ck_int(ck_t *k, const char *what, long long v, long long lo,
                   long long hi) {
  if (!k->rc && (v < lo || v > hi))
    ck_bad(k, "%s is %lld, not %lld to %lld", what, v, lo, hi);
}

static void ck_fig(ck_t *k, const char *what, double v) {
  if (!k->rc && !(isfinite(v) && v >= 0))
    ck_bad(k, "%s is %g, not a finite number of at least 0", what, v);
}

/* A name: NULL (missing) where null_ok, else printable text. */
static void ck_name(ck_t *k, const char *what, const char *s, int null_ok) {
  char w[96];
  strata_buf_t b;
  if (k->rc || (!s && null_ok)) return;
  snprintf(w, sizeof w, "%s %s", k->whose, what);
  strata_buf_init(&b);
  strata_buf_printf(&b, "%s: %s", k->where, k->kind);
  if (b.oom)
    k->rc = strata_error(STRATA_ENOMEM, "out of memory");
  else if (st__name_check(s, w, b.p))
    k->rc = k->code;
  strata_buf_free(&b);
}

/* The sizes as the readers take them (merge/devices.c, show --json): cp
 * and ep 0 or 1 are 1, etp 0 is tp. */
int st__plan_cp(const strata_plan_t *p) {
  return p->cp > 1 ? p->cp : 1;
}
int st__plan_ep(const strata_plan_t *p) {
  return p->experts > 0 && p->ep > 1 ? p->ep : 1;
}
int st__plan_etp(const strata_plan_t *p) {
  return p->experts > 0 && p->etp > 0 ? p->etp : p->tp;
}

/* A double with a name in the list: a figure in [0, 1e9]. */
static void ck_range_f(ck_t *k, const char *what, double v, long long lo,
                       long long hi) {
  (void)lo, (void)hi;
  if (!k->rc && !(v >= 0 && v <= 1e9))
    ck_bad(k, "%s is %g, not in [0, 1e9]", what, v);
}

static void ck_range_i(ck_t *k, const char *what, long long v, long long lo,
                       long long hi) {
  ck_int(k, what, v, lo, hi);
}

/* Each field with a name in its range (plan_fields.h), in the order of the
 * list. */
#define CK(part, t, m, key, what, lo, hi, ...)                                 \
  if (what)                                                                    \
    _Generic(p->m, double                                                      \
             : ck_range_f, default                                             \
             : ck_range_i)(k, what, p->m, lo, hi);

static void ck_header_ints(ck_t *k, const strata_plan_t *p) {
  STRATA_PLAN_FIELDS(CK)
  ck_int(k, "node group count", p->n_groups, 0, 64);
}

/* The degrees against each other. */
static void ck_degrees(ck_t *k, const strata_plan_t *p) {
  ck_header_ints(k, p);
  if (k->rc) return;
  if (p->dp < 1 || p->micro_batch < 1 || p->n_micro < 1 ||
      (long long)p->micro_batch * p->dp * p->n_micro != p->global_batch)
    return ck_bad(k,
                  "batch %d is not micro-batch %d x dp %d x %d "
                  "micro-batches per step, each at least 1",
                  p->global_batch, p->micro_batch, p->dp, p->n_micro);
  if (!(p->rotary_percent >= 0 && p->rotary_percent < 1))
    return ck_bad(k, "rotary share is %g, not in [0, 1)", p->rotary_percent);
  ck_int(k, "tensor x context-parallel size", (long long)p->tp * st__plan_cp(p),
         1, BIG);
  if (p->cp > 1 && p->seq_len % (2LL * p->cp))
    ck_bad(k,
           "context-parallel size %d does not split its sequence of %d "
           "into 2 x cp chunks",
           p->cp, p->seq_len);
  if (p->experts > 0) {
    ck_int(k, "expert tensor x expert-parallel size",
           (long long)st__plan_etp(p) * st__plan_ep(p), 1, BIG);
    if (!k->rc && p->experts % st__plan_ep(p))
      ck_bad(k, "expert-parallel size %d does not divide its %d experts", p->ep,
             p->experts);
  } else if (p->ep > 1) {
    ck_bad(k, "expert-parallel size is %d in a model without experts", p->ep);
  }
  if (!k->rc && p->n_stages != p->pp * p->vpp)
    ck_bad(k, "stage count %d is not pp %d x virtual stages %d", p->n_stages,
           p->pp, p->vpp);
  /* a chunk may hold no layer (the embedding's or the loss's alone, or one
   * a layout leaves empty), so the count is bounded by the planner's
   * most chunks (pipeline/search.h), not by the layers */
  if (!k->rc && p->n_stages > 1024)
    ck_bad(k, "stage count %d is above the 1024 model chunks a plan holds",
           p->n_stages);
}

static void ck_result(ck_t *k, const strata_plan_t *p, int s,
                      const strata_stage_result_t *x) {
  const double f[] = {x->alpha,
                      x->objective,
                      x->memory_redundancy_bytes,
                      x->comm_bytes,
                      x->comm_seconds,
                      x->compute_seconds,
                      x->fwd_seconds,
                      x->bwd_seconds,
                      x->fwd_comm_seconds,
                      x->bwd_comm_seconds,
                      x->sync_seconds,
                      x->peak_memory_bytes,
                      x->zero_redundancy_bytes,
                      x->mem.weights,
                      x->mem.gradients,
                      x->mem.optimizer,
                      x->mem.activations,
                      x->mem.transient,
                      x->mem.total,
                      x->activations_per_layer,
                      x->min_memory_bytes};
  const int n[] = {x->devices,          x->homogeneous, x->int_vars,
                   x->cont_vars,        x->rows,        x->int_vars_before,
                   x->cont_vars_before, x->rows_before};
  char w[64];
  snprintf(w, sizeof w, "stage %d result", s);
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
    ck_fig(k, w, f[i]);
  for (size_t i = 0; i < sizeof n / sizeof n[0]; i++)
    ck_int(k, w, n[i], 0, BIG);
  ck_name(k, "stage hint", x->hint, 1);
  for (int i = 0; i < x->n_ops && !k->rc; i++) {
    const strata_op_choice_t *o = &x->ops[i];
    snprintf(w, sizeof w, "stage %d op %d", s, i);
    ck_int(k, w, o->layer, -1, p->layers - 1);
    ck_int(k, w, o->repeat, 0, BIG);
    ck_fig(k, w, o->mem_bytes);
    ck_fig(k, w, o->comm_seconds);
    ck_name(k, "op name", o->name, 1);
    ck_name(k, "op strategy", o->strategy, 1);
    ck_name(k, "op placement", o->placement, 1);
  }
}

static void ck_stage_figs(ck_t *k, int s, const strata_plan_stage_t *st) {
  char w[64];
  snprintf(w, sizeof w, "stage %d forward time", s);
  ck_fig(k, w, st->fwd_seconds);
  snprintf(w, sizeof w, "stage %d backward time", s);
  ck_fig(k, w, st->bwd_seconds);
  snprintf(w, sizeof w, "stage %d sync time", s);
  ck_fig(k, w, st->sync_seconds);
  snprintf(w, sizeof w, "stage %d mesh", s);
  for (int a = 0; a < STRATA_MESH_MAX_DIMS; a++) {
    ck_fig(k, w, st->mesh.axis[a].bandwidth);
    ck_fig(k, w, st->mesh.axis[a].latency);
  }
}

/* Stage s's pipeline rank: s mod pp, or the V's of ZBVZeroBubble and
 * DualPipeV (rank r runs stages r and 2 pp - 1 - r). */
static int stage_rank(const strata_plan_t *p, int s) {
  int v_shaped = p->pp_schedule == STRATA_PPS_ZBV ||
                 p->pp_schedule == STRATA_PPS_DUALPIPEV;
  if (v_shaped && p->n_stages == 2 * p->pp && s >= p->pp)
    return 2 * p->pp - 1 - s;
  return s % p->pp;
}

/* Stage s's devices: its rank's, the same for each of its chunks. */
static void ck_stage(ck_t *k, const strata_plan_t *p, int s, long long *sum) {
  int rk = stage_rank(p, s);
  const strata_plan_stage_t *st = &p->stages[s], *r0 = &p->stages[rk];
  long long w = (long long)st->nodes * st->gpus_per_node;
  int uniform = p->megatron || p->n_groups > 1;
  if (st->rank != rk && rk != s % p->pp)
    return ck_bad(k,
                  "stage %d rank is %d, not %d (stage s of a V schedule "
                  "runs on pipeline rank s for s < pp %d, else 2 pp - 1 - s)",
                  s, st->rank, rk, p->pp);
  if (st->rank != rk)
    return ck_bad(k,
                  "stage %d rank is %d, not %d (stage s runs on pipeline "
                  "rank s mod pp %d)",
                  s, st->rank, rk, p->pp);
  ck_int(k, "stage nodes", st->nodes, 1, BIG);
  ck_int(k, "stage GPUs per node", st->gpus_per_node, 1, MAX_GPN);
  ck_int(k, "stage devices", w, 1, BIG);
  ck_int(k, "stage node group", st->group, 0,
         p->n_groups > 1 ? p->n_groups - 1 : 0);
  ck_int(k, "stage micro-batches in flight", st->in_flight, 0, BIG);
  ck_int(k, "stage mesh dimensions", st->mesh.ndim, 1, STRATA_MESH_MAX_DIMS);
  for (int a = 0; a < STRATA_MESH_MAX_DIMS; a++)
    ck_int(k, "stage mesh shape", st->mesh.shape[a], 0, BIG);
  if (!k->rc && w != (long long)r0->nodes * r0->gpus_per_node)
    ck_bad(k, "stage %d has %lld devices, not the %d of stage %d on its rank",
           s, w, st__stage_devices(r0), rk);
  if (!k->rc && st->group != r0->group)
    ck_bad(k, "stage %d node group %d is not that of stage %d on its rank", s,
           st->group, rk);
  if (!k->rc && (uniform ? w != (long long)p->tp * st__plan_cp(p) : w > p->tp))
    ck_bad(k, "stage %d has %lld devices, %s tp %d x cp %d", s, w,
           uniform ? "not" : "more than", p->tp, st__plan_cp(p));
  if (!k->rc && w % st__plan_cp(p))
    ck_bad(k, "stage %d has %lld devices, not a multiple of cp %d", s, w,
           st__plan_cp(p));
  if (!k->rc && p->experts > 0 &&
      (w * p->dp) % ((long long)st__plan_etp(p) * st__plan_ep(p)))
    ck_bad(k,
           "stage %d devices %lld x dp %d are not a multiple of expert tp "
           "%d x ep %d",
           s, w, p->dp, st__plan_etp(p), st__plan_ep(p));
  /* (older strata counted a rank's first device without dp) */
  if (!k->rc && (st->first_rank < 0 ||
                 st->first_rank + w * p->dp > (long long)p->devices))
    ck_bad(k,
           "stage %d first rank %d and its %lld devices x dp %d are not "
           "within its %d devices",
           s, st->first_rank, w, p->dp, p->devices);
  if (!k->rc && s < p->pp) *sum += w * p->dp;
}

static void ck_layers(ck_t *k, const strata_plan_t *p, int s) {
  const strata_plan_stage_t *st = &p->stages[s];
  int begin = s ? p->stages[s - 1].layer_end : 0, last = s == p->n_stages - 1;
  if (st->layer_begin != begin || st->layer_end < begin ||
      st->layer_end > p->layers || (last && st->layer_end != p->layers))
    return ck_bad(k,
                  "stage %d layers %d to %d do not follow on from layer %d "
                  "(of %d)",
                  s, st->layer_begin, st->layer_end, begin, p->layers);
  if (st->with_prologue != (s == 0) || st->with_epilogue != last)
    ck_bad(k, "stage %d prologue or epilogue flag is not its place", s);
}

static void ck_stages(ck_t *k, const strata_plan_t *p) {
  long long sum = 0;
  for (int s = 0; s < p->n_stages && !k->rc; s++) {
    ck_stage(k, p, s, &sum);
    ck_layers(k, p, s);
    ck_stage_figs(k, s, &p->stages[s]);
    if (p->n_groups > 1)
      ck_name(k, "stage GPU model", p->stages[s].gpu_model, 0);
    if (p->stages[s].result) ck_result(k, p, s, p->stages[s].result);
    if (!k->rc && s + 1 < p->n_stages && p->p2p_seconds)
      ck_fig(k, "p2p time", p->p2p_seconds[s]);
  }
  if (!k->rc && sum != p->devices)
    ck_bad(k,
           "devices are %d, not the %lld its pipeline ranks use (each "
           "rank's stage devices x dp %d)",
           p->devices, sum, p->dp);
}

static void ck_figures(ck_t *k, const strata_plan_t *p) {
  const struct {
    const char *what;
    double v;
  } f[] = {{"alpha", p->alpha},
           {"step time", p->step_seconds},
           {"tokens/s", p->tokens_per_second},
           {"MFU", p->mfu},
           {"peak memory", p->peak_memory_bytes},
           {"GPU memory", p->gpu_memory_bytes},
           {"GPU peak FLOP/s of its precision", p->gpu_peak_flops},
           {"model FLOPs per step", p->model_flops_per_step},
           {"planning time", p->plan_seconds},
           {"MoE imbalance", p->moe_imbalance},
           {"capacity factor", p->capacity},
           {"RoPE base", p->rope_theta}};
  const double items[] = {p->step_items.compute,      p->step_items.tp_comm,
                          p->step_items.bubble,       p->step_items.dp_sync,
                          p->step_items.param_gather, p->step_items.optimizer,
                          p->step_items.overhead,     p->step_items.ep_a2a,
                          p->step_items.host,         p->step_items.p2p,
                          p->step_items.cp_comm};
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
    ck_fig(k, f[i].what, f[i].v);
  /* the step's items are differences that rounding may leave a hair
   * below 0 (model/eval.c) */
  for (size_t i = 0; i < sizeof items / sizeof items[0] && !k->rc; i++)
    if (!(isfinite(items[i]) && items[i] >= -1e-9))
      ck_bad(k, "step items hold %g, not a finite time of at least 0",
             items[i]);
  for (int r = 0; r < p->pp && p->ranks && !k->rc; r++) {
    double *v[RANK_FIELDS];
    char w[48];
    snprintf(w, sizeof w, "pipeline rank %d figures", r);
    rank_fields((strata_plan_rank_t *)&p->ranks[r], v);
    for (int i = 0; i < RANK_FIELDS; i++)
      ck_fig(k, w, *v[i]);
  }
}

/* The configurations of a list (the best ones, or the Pareto front:
 * `what` names it in the message). */
static void ck_configs(ck_t *k, const strata_plan_t *p,
                       const strata_plan_config_t *v, int n, const char *what) {
  for (int i = 0; i < n && !k->rc; i++) {
    const strata_plan_config_t *c = &v[i];
    const struct {
      const char *what;
      long long v, lo, hi;
    } t[] = {
        {"tp", c->tp, 1, BIG},
        {"pp", c->pp, 1, MAX_STAGES},
        {"dp", c->dp, 1, BIG},
        {"micro-batch", c->micro_batch, 0, BIG},
        {"vpp", c->vpp, 0, MAX_VPP},
        {"sequence parallelism", c->sequence_parallel, 0, 1},
        {"ZeRO stage", c->zero_stage, 0, 3},
        {"fits", c->fits, 0, 1},
        {"cp", c->cp, 0, BIG},
        {"ep", c->ep, 0, BIG},
        {"etp", c->etp, 0, BIG},
        {"GEMM recipe", c->fp8, 0, STRATA_LOWP_COUNT - 1},
        {"first stage layers", c->first_layers, 0, BIG},
        {"last stage layers", c->last_layers, 0, BIG},
        {"recompute", (int)c->recompute, 0, 2},
        {"node group", c->group, 0, p->n_groups > 1 ? p->n_groups : 0},
        {"devices (tp x cp x pp x dp)",
         (long long)c->tp * (c->cp > 1 ? c->cp : 1) * c->pp * c->dp, 1, BIG},
    };
    char w[96];
    for (size_t j = 0; j < sizeof t / sizeof t[0] && !k->rc; j++) {
      snprintf(w, sizeof w, "%s %d %s", what, i + 1, t[j].what);
      ck_int(k, w, t[j].v, t[j].lo, t[j].hi);
    }
    snprintf(w, sizeof w, "%s %d figures", what, i + 1);
    ck_fig(k, w, c->step_seconds);
    ck_fig(k, w, c->peak_memory_bytes);
    snprintf(w, sizeof w, "%s %d layout", what, i + 1);
    if (c->layout[0]) ck_name(k, w, c->layout, 0);
  }
}

/* Fallback n holds the plan of n nodes lost, and none of its own. */
static void ck_fallbacks(ck_t *k, const strata_plan_t *p) {
  if (!k->rc && p->n_fallbacks > STRATA_FALLBACKS_MAX)
    ck_bad(k, "fallback count is %d, above %d", p->n_fallbacks,
           STRATA_FALLBACKS_MAX);
  for (int i = 0; i < p->n_fallbacks && !k->rc; i++) {
    const strata_plan_t *f = p->fallbacks[i];
    if (!f || f->nodes_lost != i + 1 || f->n_fallbacks > 0 || p->nodes_lost > 0)
      ck_bad(k,
             "fallback %d is not the plan of %d node%s lost (its nodes "
             "lost %d, holding %d fallbacks of its own)",
             i + 1, i + 1, i ? "s" : "", f ? f->nodes_lost : -1,
             f ? f->n_fallbacks : 0);
    else
      k->rc = st__plan_check(f, k->code, k->where, k->kind);
  }
}

static void ck_top(ck_t *k, const strata_plan_t *p) {
  ck_configs(k, p, p->top, p->n_top, "configuration");
  if (!k->rc && (p->n_pareto > 0) != (p->pareto_axes > 0))
    ck_bad(k, "Pareto front holds %d configurations with axes %d", p->n_pareto,
           p->pareto_axes);
  ck_configs(k, p, p->pareto, p->n_pareto, "Pareto configuration");
  for (int i = 1; i < p->n_pareto && !k->rc; i++)
    if (p->pareto[i].step_seconds < p->pareto[i - 1].step_seconds)
      ck_bad(k, "Pareto configuration %d is faster than the one before it",
             i + 1);
}

int st__plan_check(const strata_plan_t *p, int code, const char *where,
                   const char *kind) {
  ck_t k = {where, kind, "the plan's", code, 0};
  ck_name(&k, "model name", p->model, 1);
  ck_name(&k, "cluster name", p->cluster, 1);
  if (p->family[0]) ck_name(&k, "model family", p->family, 0);
  if (!k.rc && (!p->stages || p->n_stages < 1 || !p->ranks))
    ck_bad(&k, "stages are missing");
  ck_degrees(&k, p);
  ck_stages(&k, p);
  ck_figures(&k, p);
  ck_top(&k, p);
  ck_fallbacks(&k, p);
  return k.rc;
}

/* Format f's fields after the stages (put_tail_fields). */
#define GET_TI(m, what, lo, hi, slot)                                          \
  if (f == slot) p->m = st__rd_int(r, what, lo_of(f, version, lo), hi);
#define GET_TN GET_TI
#define GET_TD(m, what, lo, hi, slot)                                          \
  if (f == slot) p->m = tail_figure(r, what);
#define GET_HI(m, what, lo, hi, slot)
#define GET_HE GET_HI
#define GET_HZ GET_HI
#define GET_HD GET_HI
#define GET_HZD GET_HI
#define GET(part, t, m, key, what, lo, hi, codec, slot)                        \
  GET_##codec(m, what, lo, hi, slot)

/* A figure after the stages: finite, in [0, 1e9]. */
static double tail_figure(st__rd_t *r, const char *what) {
  double v = st__rd_f(r, what);
  if (!r->bad && !(v >= 0 && v <= 1e9)) {
    r->bad = what;
    r->why = "is not in [0, 1e9]";
  }
  return v;
}

/* A file of format 6 has format 6 for its one field: it is set (format 7
 * and later hold it either way). */
static int lo_of(int f, unsigned version, int lo) {
  return f == 6 && version == 6 ? 1 : lo;
}

/* A TN switch is on in a file too old to hold it. */
#define ON_TN(m) p->m = 1;
#define ON_TI(m)
#define ON_TD ON_TI
#define ON_HI ON_TI
#define ON_HE ON_TI
#define ON_HZ ON_TI
#define ON_HD ON_TI
#define ON_HZD ON_TI
#define ON(part, t, m, key, what, lo, hi, codec, slot) ON_##codec(m)

static void tail_defaults(strata_plan_t *p) {
  ST__PLAN_LEGACY(ON)
}

static void get_tail_fields(st__rd_t *r, strata_plan_t *p, int f,
                            unsigned version) {
  ST__PLAN_LEGACY(GET)
  if (f == 5 && !r->bad && !(p->rotary_percent >= 0 && p->rotary_percent < 1)) {
    r->bad = "rotary share";
    r->why = "is not in [0, 1)";
  }
}

int st__payload_decode_legacy(const unsigned char *data, size_t len,
                              const char *where, unsigned version,
                              strata_plan_t **out) {
  return payload_decode(data, len, where, version, 0, out);
}

static int payload_decode(const unsigned char *data, size_t len,
                          const char *where, unsigned version, int nested,
                          strata_plan_t **out) {
  st__rd_t r = {data, len, 0, NULL, NULL};
  int oom = 0, rc;
  strata_plan_t *p = strata_calloc(1, sizeof *p);
  if (!p) return strata_error(STRATA_ENOMEM, "out of memory");
  rc = get_body(&r, p, &oom);
  if (!rc) rc = get_tail(&r, p);
  /* q/k norms: 1 a norm, 2 an L2 norm (format 5's, as its other facts) */
  if (!rc && !r.bad &&
      (p->qk_norm < 0 || p->qk_norm > (version >= 5 ? 2 : 1))) {
    r.bad = "q/k norm";
    r.why = version >= 5 ? "is not 0, 1 or 2" : "is not 0 or 1";
  }
  if (!rc && !r.bad && version >= 4) st__get_groups(&r, p, version >= 5);
  tail_defaults(p);
  for (unsigned f = 5; !rc && !r.bad && f <= version; f++) {
    get_tail_fields(&r, p, (int)f, version);
    if (f == 7) st__get_rope(&r, &p->rope_scaling, version);
    if (f == 13 && !r.bad) rc = st__get_pareto(&r, p);
    if (f == 14 && !r.bad && !rc) rc = get_fallbacks(&r, p, where, nested);
    if (f == 17 && !r.bad && !rc) st__get_layouts(&r, p);
  }
  if (!rc && !r.bad && r.pos != r.len) {
    r.bad = "payload";
    r.why = "has bytes after the last field";
  }
  if (!rc && r.bad)
    rc = strata_error(STRATA_ECORRUPT, "%s: corrupt: the plan's %s %s", where,
                      r.bad, r.why);
  if (!rc) rc = st__plan_check(p, STRATA_ECORRUPT, where, "corrupt");
  if (rc) {
    strata_plan_destroy(p);
    return rc;
  }
  *out = p;
  return 0;
}
