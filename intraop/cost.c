/*
 * cost.c - the cost model of one operator under one strategy
 * (docs/cost-model.md states every formula and its source).
 *
 * Memory is counted exactly: each tensor's bytes divided by the product of
 * the mesh axes that shard it; replicated and partial tensors whole.
 * Parameter states follow the precision recipe and ZeRO stage, sharded
 * over the axes that replicate the parameter while splitting the work (its
 * data-parallel axes) times the outer data parallelism.  Communication
 * uses topo/'s alpha-beta collectives per mesh axis, hierarchical (inner
 * axis first) when several axes are involved.
 */
#include <string.h>

#include "intraop/cost.h"

static double tensor_bytes(const strata_graph_t *g, int t) {
  return (double)strata_tensor_bytes(&g->tensors[t]);
}

/* Is t an attention matrix ([..., s, s]), the part selective recompute
 * drops (Korthikanti et al. 2022, section 4.2)? */
static int is_attention_matrix(const strata_graph_t *g, int t) {
  const strata_tensor_t *x = &g->tensors[t];
  return x->ndim >= 2 && x->shape[x->ndim - 1] == g->seq_len &&
         x->shape[x->ndim - 2] == g->seq_len && g->seq_len > 1;
}

/* Hierarchical collective over a list of groups (inner first): a
 * reduce-scatter / all-gather moves at level i the data left after the
 * levels inside it; an all-reduce is a reduce-scatter plus an all-gather. */
static double hier(strata_coll_t coll, double bytes, int n_levels,
                   const int *size, const strata_link_t *link) {
  double t = 0, s = bytes;
  for (int i = 0; i < n_levels; i++) {
    if (size[i] <= 1) continue;
    if (coll == STRATA_COLL_ALLREDUCE) {
      t += strata_coll_time(STRATA_COLL_REDUCESCATTER, s, size[i], &link[i]) +
           strata_coll_time(STRATA_COLL_ALLGATHER, s, size[i], &link[i]);
    } else {
      t += strata_coll_time(coll, s, size[i], &link[i]);
    }
    s /= size[i];
  }
  return t;
}

/* Does the op's output carry pdim p?  Then a parameter that p does not
 * index gets its gradient summed over p: partial on an axis split by p.
 * (A row-parallel bias is not: its gradient sums the replicated output
 * gradient over tokens, the same on every device.) */
static int in_output(const st__opdims_t *d, int p) {
  for (int i = d->n_in; i < d->n_slots; i++)
    for (int k = 0; k < STRATA_MAX_DIMS; k++)
      if (d->map[i][k] == p) return 1;
  return 0;
}

/* Data-parallel groups of a parameter under s: the mesh axes on which it
 * is replicated while its gradient is summed over the axis's split, inner
 * axis first, then the outer data parallelism.  Returns the level count;
 * *ways the product. */
static int dp_levels(const st__cost_ctx_t *c, const st__opdims_t *d,
                     const st__strat_t *s, const st__place_t *pp, int *size,
                     strata_link_t *link, int *ways) {
  int n = 0;
  *ways = 1;
  for (int a = c->m->ndim - 1; a >= 0; a--) {
    if (pp->kind[a] != ST__PL_R || s->axis[a] == ST__REP) continue;
    if (!in_output(d, s->axis[a])) continue;
    size[n] = c->m->shape[a];
    link[n++] = c->m->axis[a];
    *ways *= c->m->shape[a];
  }
  if (c->o->outer_dp > 1) {
    size[n] = c->o->outer_dp;
    link[n++] = c->o->outer_link;
    *ways *= c->o->outer_dp;
  }
  return n;
}

/* Over how many replicas ZeRO shards a parameter's states.  Megatron-LM's
 * distributed optimizer shards over its data-parallel group only: the
 * outer replicas and the axes that split the batch, not a tensor-parallel
 * axis that splits the sequence (whose layernorm gradients it all-reduces
 * but whose states it keeps whole); elsewhere every replica counts. */
static int zero_ways(const st__cost_ctx_t *c, const st__opdims_t *d,
                     const st__strat_t *s, const st__place_t *pp, int ways) {
  if (c->o->objective != STRATA_OBJ_MEGATRON) return ways;
  int z = c->o->outer_dp > 1 ? c->o->outer_dp : 1;
  for (int a = 0; a < c->m->ndim; a++) {
    int p = s->axis[a];
    if (pp->kind[a] != ST__PL_R || p == ST__REP) continue;
    if (!strcmp(d->name[p], "b") || !strcmp(d->name[p], "dp"))
      z *= c->m->shape[a];
  }
  return z;
}

static void param_cost(const st__cost_ctx_t *c, const st__opdims_t *d,
                       const st__strat_t *s, int slot, st__op_cost_t *r) {
  const strata_stage_opts_t *o = c->o;
  const strata_tensor_t *t = &c->g->tensors[d->tensor[slot]];
  st__place_t pp;
  int size[STRATA_MESH_MAX_DIMS + 1], ways;
  strata_link_t link[STRATA_MESH_MAX_DIMS + 1];
  st__placement(d, c->m, s, slot, &pp);
  double numel = (double)strata_tensor_numel(t) / st__shards(c->m, &pp);
  double wb = strata_dtype_size(t->dtype);
  double gb = o->recipe == STRATA_RECIPE_MEGATRON ? 4.0 : 2.0;
  double ob = 12.0;
  int lv = dp_levels(c, d, s, &pp, size, link, &ways);
  int z = o->zero_stage, zw = zero_ways(c, d, s, &pp, ways);
  r->weights += wb * numel / (z >= 3 ? zw : 1);
  r->grads += gb * numel / (z >= 2 ? zw : 1);
  r->optimizer += ob * numel / (z >= 1 ? zw : 1);
  /* unique: every state once over the stage, the ZeRO-sharded ones also
   * spread over the outer replicas */
  double full = (double)strata_tensor_numel(t);
  int od = o->outer_dp > 1 ? o->outer_dp : 1;
  r->unique += wb * full / (z >= 3 ? od : 1) + gb * full / (z >= 2 ? od : 1) +
               ob * full / (z >= 1 ? od : 1);
  if (lv == 0) return;
  /* gradient synchronisation once per step; ZeRO-3 also gathers the
   * parameters before forward and backward of every micro-batch */
  /* frameworks synchronise gradients in buckets (PyTorch DDP: 25 MB), so
   * a small tensor pays only its share of a bucket's latency */
  strata_link_t bucket[STRATA_MESH_MAX_DIMS + 1];
  double share = gb * numel / 25e6 < 1 ? gb * numel / 25e6 : 1;
  for (int i = 0; i < lv; i++) {
    bucket[i] = link[i];
    bucket[i].latency *= share;
  }
  double sync = hier(STRATA_COLL_ALLREDUCE, gb * numel, lv, size, bucket);
  double gather = 0;
  if (z >= 3) {
    /* ZeRO-3 gathers each layer's parameters when it runs: no bucketing */
    double mb = o->micro_batches > 0 ? o->micro_batches : 1;
    sync = hier(STRATA_COLL_REDUCESCATTER, gb * numel, lv, size, bucket);
    gather = 2.0 * mb * hier(STRATA_COLL_ALLGATHER, wb * numel, lv, size, link);
    r->transient += wb * numel; /* the gathered weight while the op runs */
  }
  r->comm += sync + gather;
  r->sync += sync;
}

static double slot_bytes(const st__cost_ctx_t *c, const st__opdims_t *d,
                         const st__strat_t *s, int slot) {
  st__place_t p;
  st__placement(d, c->m, s, slot, &p);
  return tensor_bytes(c->g, d->tensor[slot]) / st__shards(c->m, &p);
}

static int saves_slot(const st__opdims_t *d, unsigned sv, int i) {
  unsigned bit = i < d->n_in ? STRATA_SAVE_IN(i) : STRATA_SAVE_OUT(i - d->n_in);
  return (sv & bit) != 0;
}

/* Saved activations of one micro-batch.  Slots in `skip` hold storage an
 * earlier op of the stage already saves (counted once, there). */
static void saved_cost(const st__cost_ctx_t *c, const strata_op_t *op,
                       const st__opdims_t *d, const st__strat_t *s,
                       unsigned skip, st__op_cost_t *r) {
  unsigned sv = strata_op_saves(c->g, op);
  int selective = c->o->recompute == STRATA_RECOMPUTE_SELECTIVE;
  for (int i = 0; i < d->n_slots; i++) {
    const strata_tensor_t *t = &c->g->tensors[d->tensor[i]];
    if (!saves_slot(d, sv, i) || (skip & (1u << i))) continue;
    if (t->kind != STRATA_TENSOR_ACTIVATION) continue;
    if (selective && is_attention_matrix(c->g, d->tensor[i])) continue;
    r->act += slot_bytes(c, d, s, i);
  }
  if (op->n_out < 1) return;
  int o0 = d->n_in;
  st__place_t p;
  st__placement(d, c->m, s, o0, &p);
  double extra = (double)strata_op_extra_saved(c->g, op);
  double mask = (sv & STRATA_SAVE_MASK)
                    ? (double)strata_tensor_numel(&c->g->tensors[d->tensor[o0]])
                    : 0;
  if (selective && is_attention_matrix(c->g, d->tensor[o0])) extra -= mask;
  /* the mask and flash attention's log-sum-exp split like the output */
  if (extra > 0) r->act += extra / st__shards(c->m, &p);
}

/* Collectives inside the op: the sequence-parallel linear gathers its
 * input (forward, and again in backward) and reduce-scatters the input
 * gradient; vocabulary-parallel cross-entropy all-reduces two numbers per
 * token (max and sum). */
static void own_comm(const st__cost_ctx_t *c, const strata_op_t *op,
                     const st__opdims_t *d, const st__strat_t *s,
                     st__op_cost_t *r) {
  double mb = c->o->micro_batches > 0 ? c->o->micro_batches : 1;
  for (int a = 0; a < c->m->ndim; a++) {
    int n = c->m->shape[a];
    const strata_link_t *l = &c->m->axis[a];
    if (s->sp[a]) {
      double full = slot_bytes(c, d, s, 0) * n;
      r->comm += mb * (2 * strata_coll_time(STRATA_COLL_ALLGATHER, full, n, l) +
                       strata_coll_time(STRATA_COLL_REDUCESCATTER, full, n, l));
      r->transient += full;
    }
    if (op->kind == STRATA_OP_CROSS_ENTROPY && s->axis[a] != ST__REP &&
        d->map[0][2] == s->axis[a]) {
      const strata_tensor_t *lg = &c->g->tensors[op->in[0]];
      double tokens = (double)(lg->shape[0] * lg->shape[1]);
      r->comm +=
          mb * 2 * strata_coll_time(STRATA_COLL_ALLREDUCE, 4 * tokens, n, l);
    }
  }
}

void st__op_cost(const st__cost_ctx_t *c, const strata_op_t *op,
                 const st__opdims_t *d, const st__strat_t *s,
                 unsigned owns_param, unsigned skip_saved, int is_ckpt,
                 int in_recompute, st__op_cost_t *r) {
  const strata_stage_opts_t *o = c->o;
  double mb = o->micro_batches > 0 ? o->micro_batches : 1;
  memset(r, 0, sizeof *r);
  for (int i = 0; i < d->n_in; i++)
    if (owns_param & (1u << i)) param_cost(c, d, s, i, r);
  saved_cost(c, op, d, s, skip_saved, r);
  /* the saved set unsharded: what the stage must hold at least */
  st__strat_t rep;
  st__op_cost_t u;
  memset(&rep, 0, sizeof rep);
  memset(&u, 0, sizeof u);
  for (int a = 0; a < STRATA_MESH_MAX_DIMS; a++)
    rep.axis[a] = ST__REP;
  saved_cost(c, op, d, &rep, skip_saved, &u);
  r->unique_act = u.act;
  if (is_ckpt) r->ckpt = slot_bytes(c, d, s, d->n_in);
  own_comm(c, op, d, s, r);
  for (int i = d->n_in; i < d->n_slots; i++)
    r->transient += slot_bytes(c, d, s, i);
  double flops = strata_op_flops(c->g, op);
  if (in_recompute) flops += strata_op_flops_fwd(c->g, op);
  double rate = o->peak_flops * o->efficiency * st__work_split(c->m, s);
  r->compute = rate > 0 ? mb * flops / rate : 0;
}

static void grad_expected(const strata_mesh_t *m, const st__place_t *out,
                          st__place_t *g) {
  *g = *out;
  for (int a = 0; a < m->ndim; a++)
    if (g->kind[a] == ST__PL_P) g->kind[a] = ST__PL_R;
}

double st__reshard_time(const strata_mesh_t *m, double bytes,
                        const st__place_t *from, const st__place_t *to) {
  double t = 0;
  for (int a = 0; a < m->ndim; a++) {
    int f = from->kind[a], k = to->kind[a], n = m->shape[a];
    if (n <= 1) continue;
    /* data on this axis's group: what the other axes leave of it */
    double sz = bytes;
    for (int b = 0; b < m->ndim; b++)
      if (b != a && from->kind[b] == ST__PL_S) sz /= m->shape[b];
    strata_coll_t coll = STRATA_COLL_COUNT;
    if (f == ST__PL_S && k == ST__PL_R)
      coll = STRATA_COLL_ALLGATHER;
    else if (f == ST__PL_S && k == ST__PL_S && from->dim[a] != to->dim[a])
      coll = STRATA_COLL_ALLTOALL;
    else if (f == ST__PL_P && k == ST__PL_R)
      coll = STRATA_COLL_ALLREDUCE;
    else if (f == ST__PL_P && k == ST__PL_S)
      coll = STRATA_COLL_REDUCESCATTER;
    if (coll != STRATA_COLL_COUNT)
      t += strata_coll_time(coll, sz, n, &m->axis[a]);
  }
  return t;
}

double st__edge_cost(const st__cost_ctx_t *c, int tensor,
                     const st__opdims_t *du, const st__strat_t *su, int uslot,
                     const st__opdims_t *dw, const st__strat_t *sw, int wslot) {
  st__place_t pu, pw, gu, gw;
  double bytes = tensor_bytes(c->g, tensor);
  double mb = c->o->micro_batches > 0 ? c->o->micro_batches : 1;
  st__placement(du, c->m, su, uslot, &pu);
  st__placement(dw, c->m, sw, wslot, &pw);
  st__grad_placement(dw, c->m, sw, wslot, &gw);
  grad_expected(c->m, &pu, &gu);
  return mb * (st__reshard_time(c->m, bytes, &pu, &pw) +
               st__reshard_time(c->m, bytes, &gw, &gu));
}
