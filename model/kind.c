/*
 * kind.c - a family's stage costs split into parts (search.h): one layer
 * of each block, what the prologue and epilogue add, the single stage of
 * all layers; and sums over layer ranges from prefix sums.
 *
 * The parts come from differences of probe results, so that a stage built
 * from them equals the stage solved as it is: in homogeneous mode every
 * op and edge of a middle stage of n layers counts n times (the first
 * layer's input edge comes from "a layer like itself"), the transient is
 * a maximum, and under full recompute the activations are one re-run
 * layer plus n x in-flight checkpoints.  tests/test_pipeline.c checks the
 * sums against exact solves.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "pipeline/search.h"

/* Prefix-summed fields of a layer part. */
enum {
  PF_W,
  PF_G,
  PF_O,
  PF_ACT,
  PF_FWD,
  PF_BWD,
  PF_CF,
  PF_CB,
  PF_SYNC,
  PF_EW,
  PF_EG,
  PF_EO,
  PF_AF,
  PF_AB,
  PF_HF,
  PF_HB,
  PF_QF,
  PF_QB,
  PRE_FIELDS
};

void st__part_add(st__part_t *a, const st__part_t *x) {
  a->w += x->w;
  a->g += x->g;
  a->o += x->o;
  a->ew += x->ew;
  a->eg += x->eg;
  a->eo += x->eo;
  a->act += x->act;
  a->fwd += x->fwd;
  a->bwd += x->bwd;
  a->comm_fwd += x->comm_fwd;
  a->comm_bwd += x->comm_bwd;
  a->sync += x->sync;
  a->a2a_fwd += x->a2a_fwd;
  a->a2a_bwd += x->a2a_bwd;
  a->host_fwd += x->host_fwd;
  a->host_bwd += x->host_bwd;
  a->cp_fwd += x->cp_fwd;
  a->cp_bwd += x->cp_bwd;
  a->fixed_act += x->fixed_act;
  if (x->transient > a->transient) a->transient = x->transient;
}

/* A probe's result as a part: activations(f) = fixed + f x per-f, from
 * the results with 1 and 2 micro-batches in flight. */
static void part_of(const strata_stage_result_t *r1,
                    const strata_stage_result_t *r2, st__part_t *p) {
  memset(p, 0, sizeof *p);
  p->w = r1->mem.weights;
  p->g = r1->mem.gradients;
  p->o = r1->mem.optimizer;
  p->ew = r1->mem.expert_weights;
  p->eg = r1->mem.expert_gradients;
  p->eo = r1->mem.expert_optimizer;
  p->act = r2->mem.activations - r1->mem.activations;
  p->fixed_act = r1->mem.activations - p->act;
  if (p->fixed_act < 0) p->fixed_act = 0;
  p->transient = r1->mem.transient;
  p->fwd = r1->fwd_seconds;
  p->bwd = r1->bwd_seconds;
  p->comm_fwd = r1->fwd_comm_seconds;
  p->comm_bwd = r1->bwd_comm_seconds;
  p->a2a_fwd = r1->fwd_a2a_seconds;
  p->a2a_bwd = r1->bwd_a2a_seconds;
  p->host_fwd = r1->fwd_host_seconds;
  p->host_bwd = r1->bwd_host_seconds;
  p->cp_fwd = r1->fwd_cp_seconds;
  p->cp_bwd = r1->bwd_cp_seconds;
  p->sync = r1->sync_seconds;
}

/* x - y field by field, keeping x's maxima (the probe that holds both). */
static void part_minus(const st__part_t *x, const st__part_t *y,
                       st__part_t *d) {
  d->w = x->w - y->w;
  d->g = x->g - y->g;
  d->o = x->o - y->o;
  d->ew = x->ew - y->ew;
  d->eg = x->eg - y->eg;
  d->eo = x->eo - y->eo;
  d->act = x->act - y->act;
  d->fwd = x->fwd - y->fwd;
  d->bwd = x->bwd - y->bwd;
  d->comm_fwd = x->comm_fwd - y->comm_fwd;
  d->comm_bwd = x->comm_bwd - y->comm_bwd;
  d->a2a_fwd = x->a2a_fwd - y->a2a_fwd;
  d->a2a_bwd = x->a2a_bwd - y->a2a_bwd;
  d->host_fwd = x->host_fwd - y->host_fwd;
  d->host_bwd = x->host_bwd - y->host_bwd;
  d->cp_fwd = x->cp_fwd - y->cp_fwd;
  d->cp_bwd = x->cp_bwd - y->cp_bwd;
  d->sync = x->sync - y->sync;
  d->fixed_act = 0;
  d->transient = x->transient;
}

static const strata_stage_result_t *res(const st__sub_t *s) {
  if (!s || s->err || !s->res || s->res->status > STRATA_STAGE_FEASIBLE)
    return NULL;
  return s->res;
}

static int fill_prefix(const st__search_t *S, st__family_t *f) {
  const strata_graph_t *g = S->graphs[f->graph];
  f->pre = strata_calloc((size_t)(S->L + 1) * PRE_FIELDS, sizeof *f->pre);
  if (!f->pre) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int l = 0; l < S->L; l++) {
    const st__part_t *x = &f->layer[strata_graph_layer_block(g, l)];
    const double v[PRE_FIELDS] = {
        x->w,        x->g,        x->o,        x->act,     x->fwd,
        x->bwd,      x->comm_fwd, x->comm_bwd, x->sync,    x->ew,
        x->eg,       x->eo,       x->a2a_fwd,  x->a2a_bwd, x->host_fwd,
        x->host_bwd, x->cp_fwd,   x->cp_bwd};
    for (int k = 0; k < PRE_FIELDS; k++)
      f->pre[(l + 1) * PRE_FIELDS + k] = f->pre[l * PRE_FIELDS + k] + v[k];
  }
  return 0;
}

int st__family_fit(const st__search_t *S, st__family_t *f) {
  const strata_graph_t *g = S->graphs[f->graph];
  int B = g->n_blocks;
  f->ok = 0;
  if (B < 1) return 0;
  f->layer = strata_calloc((size_t)B, sizeof *f->layer);
  if (!f->layer) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int b = 0; b < B; b++) {
    const strata_stage_result_t *r1 = res(f->mid[2 * b + ST__P_M1]),
                                *r2 = res(f->mid[2 * b + ST__P_M2]);
    if (!r1 || !r2) return 0;
    part_of(r1, r2, &f->layer[b]);
  }
  const strata_stage_result_t *o = res(f->only);
  if (!o) return 0;
  part_of(o, o, &f->only_part);
  /* one stage: everything at its one micro-batch in flight (with the
   * experts' all-to-all overlapped, a layer more: eval.c,
   * st__paired_act) */
  f->only_part.act = 0;
  f->only_part.fixed_act = o->mem.activations;
  if (S->L >= 2) {
    const strata_stage_result_t *a1 = res(f->first[0]), *a2 = res(f->first[1]),
                                *z1 = res(f->last[0]), *z2 = res(f->last[1]);
    st__part_t fp, lp;
    if (!a1 || !a2 || !z1 || !z2) return 0;
    part_of(a1, a2, &fp);
    part_of(z1, z2, &lp);
    part_minus(&fp, &f->layer[0], &f->pro);
    part_minus(&lp, &f->layer[B - 1], &f->epi);
  }
  int rc = fill_prefix(S, f);
  if (!rc) f->ok = 1;
  return rc;
}

void st__family_free(st__family_t *f) {
  strata_free(f->mid);
  strata_free(f->layer);
  strata_free(f->pre);
  f->mid = NULL;
  f->layer = NULL;
  f->pre = NULL;
}

void st__chunk_add(const st__search_t *S, const st__family_t *f, int k, int n,
                   st__part_t *acc) {
  int N = S->o->recompute_layers,
      block = STRATA_CHOICE(S->o->recompute_method) == STRATA_RECOMPUTE_BLOCK;
  if (f->rc != STRATA_RECOMPUTE_FULL || n < 1 || (N <= 1 && !block)) {
    st__layers_add(S, f, k, n, acc);
    return;
  }
  if (N < 1) N = 1;
  if (block) { /* the chunk's first N layers recomputed, the rest not */
    int nf = N < n ? N : n;
    st__layers_add(S, f, k, nf, acc);
    if (n > nf)
      st__layers_add(S, f->sib >= 0 ? &S->fam[f->sib] : f, k + nf, n - nf, acc);
    return;
  }
  /* uniform: one checkpoint (a layer's input) every N layers, and a
   * unit's N layers re-run at once in its backward */
  st__part_t x;
  memset(&x, 0, sizeof x);
  st__layers_add(S, f, k, n, &x);
  x.act *= (double)((n + N - 1) / N) / n;
  x.fixed_act *= N < n ? N : n;
  st__part_add(acc, &x);
}

void st__unit_only(const st__search_t *S, const st__family_t *f,
                   st__part_t *only) {
  st__part_t all, unit;
  if (f->rc != STRATA_RECOMPUTE_FULL ||
      (S->o->recompute_layers <= 1 &&
       STRATA_CHOICE(S->o->recompute_method) != STRATA_RECOMPUTE_BLOCK))
    return;
  memset(&all, 0, sizeof all);
  memset(&unit, 0, sizeof unit);
  st__layers_add(S, f, 0, S->L, &all);
  st__chunk_add(S, f, 0, S->L, &unit);
  double *a = &only->w, *x = &all.w, *u = &unit.w;
  /* the additive fields before transient (w to fixed_act, st__part_t's
   * order), then the times */
  for (size_t i = 0; i < offsetof(st__part_t, transient) / sizeof(double); i++)
    a[i] += u[i] - x[i];
  only->fwd += unit.fwd - all.fwd;
  only->bwd += unit.bwd - all.bwd;
  only->comm_fwd += unit.comm_fwd - all.comm_fwd;
  only->comm_bwd += unit.comm_bwd - all.comm_bwd;
  only->a2a_fwd += unit.a2a_fwd - all.a2a_fwd;
  only->a2a_bwd += unit.a2a_bwd - all.a2a_bwd;
  only->host_fwd += unit.host_fwd - all.host_fwd;
  only->host_bwd += unit.host_bwd - all.host_bwd;
  only->cp_fwd += unit.cp_fwd - all.cp_fwd;
  only->cp_bwd += unit.cp_bwd - all.cp_bwd;
  only->sync += unit.sync - all.sync;
}

double st__layers_work(const st__family_t *f, int k, int n) {
  const double *a = &f->pre[k * PRE_FIELDS], *b = &f->pre[(k + n) * PRE_FIELDS];
  return b[PF_FWD] - a[PF_FWD] + b[PF_BWD] - a[PF_BWD];
}

void st__layers_add(const st__search_t *S, const st__family_t *f, int k, int n,
                    st__part_t *acc) {
  const double *a = &f->pre[k * PRE_FIELDS], *b = &f->pre[(k + n) * PRE_FIELDS];
  acc->w += b[PF_W] - a[PF_W];
  acc->ew += b[PF_EW] - a[PF_EW];
  acc->eg += b[PF_EG] - a[PF_EG];
  acc->eo += b[PF_EO] - a[PF_EO];
  acc->g += b[PF_G] - a[PF_G];
  acc->o += b[PF_O] - a[PF_O];
  acc->act += b[PF_ACT] - a[PF_ACT];
  acc->fwd += b[PF_FWD] - a[PF_FWD];
  acc->bwd += b[PF_BWD] - a[PF_BWD];
  acc->comm_fwd += b[PF_CF] - a[PF_CF];
  acc->comm_bwd += b[PF_CB] - a[PF_CB];
  acc->a2a_fwd += b[PF_AF] - a[PF_AF];
  acc->a2a_bwd += b[PF_AB] - a[PF_AB];
  acc->host_fwd += b[PF_HF] - a[PF_HF];
  acc->host_bwd += b[PF_HB] - a[PF_HB];
  acc->cp_fwd += b[PF_QF] - a[PF_QF];
  acc->cp_bwd += b[PF_QB] - a[PF_QB];
  acc->sync += b[PF_SYNC] - a[PF_SYNC];
  /* per block the range touches: the largest transient, and full
   * recompute's re-run layer (the stage ILP holds one per block) */
  const strata_graph_t *g = S->graphs[f->graph];
  for (int bl = 0; bl < g->n_blocks; bl++) {
    const strata_block_t *x = &g->blocks[bl];
    if (x->layer0 >= k + n || x->layer0 + x->repeat <= k) continue;
    if (f->layer[bl].transient > acc->transient)
      acc->transient = f->layer[bl].transient;
    acc->fixed_act += f->layer[bl].fixed_act;
  }
}
