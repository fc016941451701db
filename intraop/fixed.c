/*
 * fixed.c - the hand-written layouts the ILP is compared against, built by
 * propagation in operator order.
 *
 * Megatron-LM (Shoeybi et al. 2019; Korthikanti et al. 2022): on the
 * tensor-parallel axes a linear layer whose input is replicated splits its
 * output neurons (ColumnParallelLinear: "row" in the method's terms) and one
 * whose input is split on its last dim splits its input neurons
 * (RowParallelLinear: "col"); embedding and cross-entropy split the
 * vocabulary; attention follows the heads; norms, dropout and residual adds
 * are replicated, or sequence-sharded with sequence parallelism (then the
 * column-parallel linear gathers its input).  Data-parallel axes split the
 * batch.  Pure data parallelism splits the batch (or, for a micro-batch
 * too small, the sequence) everywhere.
 *
 * Megatron-Core's additions: a context-parallel axis (axis 0 when cp > 1)
 * splits the sequence of every op, attention passing keys and values
 * around the ring or gathering them; the MoE layer's router runs on each
 * rank's own tokens (replicated weights), and on an axis that is part of
 * the expert-parallel group the dispatch and combine exchange token copies
 * all-to-all and the grouped GEMMs split the experts, while on a tensor-
 * parallel axis outside it they split like a dense MLP (expert tensor
 * parallelism).
 */
#include <string.h>

#include "intraop/stage.h"

static int pdim_named(const st__opdims_t *d, const char *a, const char *b) {
  for (int p = 0; p < d->n_pdims; p++)
    if (!strcmp(d->name[p], a) || (b && !strcmp(d->name[p], b))) return p;
  return ST__REP;
}

/* Placement of tensor t on axis a as produced so far (R when its producer
 * is outside the stage: the boundary activation arrives as wanted). */
static void input_place(const st__stage_t *st, const int *choice_of_op, int t,
                        int a, int *kind, int *dim) {
  const strata_graph_t *g = st->g;
  int p = g->tensors[t].producer;
  *kind = ST__PL_R;
  *dim = -1;
  if (p < 0 || choice_of_op[p] < 0) return;
  /* choice_of_op[n_ops + p]: the info of op p (set with its choice) */
  const st__opinfo_t *in = &st->info[choice_of_op[g->n_ops + p]];
  st__place_t pl;
  int slot = -1;
  for (int k = 0; k < g->ops[p].n_out; k++)
    if (g->ops[p].out[k] == t) slot = g->ops[p].n_in + k;
  st__placement(&in->dims, &st->o.mesh, &in->strat[choice_of_op[p]], slot, &pl);
  *kind = pl.kind[a];
  *dim = pl.dim[a];
}

/* Follow an activation input sharded on this axis, if any. */
static int follow_input(const st__stage_t *st, const st__opinfo_t *in,
                        const int *choice_of_op, int a) {
  const strata_op_t *op = &st->g->ops[in->op];
  for (int s = 0; s < op->n_in; s++) {
    if (st->g->tensors[op->in[s]].kind != STRATA_TENSOR_ACTIVATION) continue;
    int kind, dim;
    input_place(st, choice_of_op, op->in[s], a, &kind, &dim);
    if (kind == ST__PL_S && dim >= 0 && in->dims.map[s][dim] >= 0 &&
        in->dims.shardable[(int)in->dims.map[s][dim]])
      return in->dims.map[s][dim];
  }
  return ST__REP;
}

static int ep_axis(const st__stage_t *st, int a) {
  return (st->o.ep_axes >> a) & 1u;
}

static int is_route(const strata_op_t *op) {
  return op->kind == STRATA_OP_MOE_DISPATCH ||
         op->kind == STRATA_OP_MOE_COMBINE;
}

/* The MoE layer's ops on an axis of the expert-parallel group or of the
 * tensor-parallel group; 1 when op is one of them. */
static int moe_axis(const st__stage_t *st, const st__opinfo_t *in, int a,
                    int sp, st__strat_t *s) {
  const strata_op_t *op = &st->g->ops[in->op];
  const st__opdims_t *d = &in->dims;
  if (op->kind == STRATA_OP_MOE_ROUTER) {
    s->axis[a] =
        (signed char)(sp && d->seq_dim >= 0 ? pdim_named(d, "seq", NULL)
                                            : d->pdim_n);
    return 1;
  }
  if (is_route(op)) {
    s->axis[a] = (signed char)pdim_named(d, "s", NULL);
    s->sp[a] = (unsigned char)ep_axis(st, a);
    return 1;
  }
  if (op->kind == STRATA_OP_GROUPED_LINEAR && ep_axis(st, a)) {
    s->axis[a] = (signed char)pdim_named(d, "e", NULL);
    return 1;
  }
  return 0;
}

/* Latent attention's down projections (named by the generator, gen.c):
 * Megatron-Core builds them "duplicated" -- whole on every tensor-parallel
 * rank, each computing its own tokens under sequence parallelism. */
static int duplicated(const strata_op_t *op) {
  static const char *names[] = {"q_down", "kv_down", "k_rope"};
  size_t n = strlen(op->name);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    size_t k = strlen(names[i]);
    if (n >= k && !strcmp(op->name + n - k, names[i]) &&
        (n == k || op->name[n - k - 1] == '.'))
      return 1;
  }
  return 0;
}

static void tp_axis(const st__stage_t *st, const st__opinfo_t *in,
                    const int *choice_of_op, int a, int sp, st__strat_t *s) {
  const strata_op_t *op = &st->g->ops[in->op];
  const st__opdims_t *d = &in->dims;
  if (moe_axis(st, in, a, sp, s)) return;
  if (op->kind == STRATA_OP_LINEAR && sp && d->seq_dim >= 0 && duplicated(op)) {
    s->axis[a] = (signed char)pdim_named(d, "seq", NULL);
    return;
  }
  if (op->kind == STRATA_OP_LINEAR || op->kind == STRATA_OP_GROUPED_LINEAR) {
    int kind, dim;
    input_place(st, choice_of_op, op->in[0], a, &kind, &dim);
    const strata_tensor_t *x = &st->g->tensors[op->in[0]];
    if (kind == ST__PL_S && dim == x->ndim - 1) {
      s->axis[a] = (signed char)pdim_named(d, "k", NULL);
    } else {
      s->axis[a] = (signed char)d->pdim_n;
      s->sp[a] = (unsigned char)(sp && d->seq_dim >= 0);
    }
    return;
  }
  if (op->kind == STRATA_OP_EMBEDDING || op->kind == STRATA_OP_CROSS_ENTROPY) {
    s->axis[a] = (signed char)pdim_named(d, "vocab", NULL);
    return;
  }
  int p = follow_input(st, in, choice_of_op, a);
  if (p == ST__REP && sp) p = pdim_named(d, "s", "seq");
  if (p == ST__REP && d->heavy) p = pdim_named(d, "heads", NULL);
  s->axis[a] = (signed char)p;
}

/* The context-parallel axis: every op splits the sequence (ring attention
 * with the modifier, or all-gathered keys and values without). */
static void cp_axis(const st__stage_t *st, const st__opinfo_t *in,
                    const int *choice_of_op, int a, st__strat_t *s) {
  const strata_op_t *op = &st->g->ops[in->op];
  const st__opdims_t *d = &in->dims;
  if (op->kind == STRATA_OP_FLASH_ATTENTION) {
    s->axis[a] = (signed char)pdim_named(d, "s", NULL);
    s->sp[a] = (unsigned char)(st->o.cp_comm == STRATA_CP_P2P);
    return;
  }
  if (op->kind == STRATA_OP_GROUPED_LINEAR) {
    s->axis[a] = (signed char)pdim_named(d, ep_axis(st, a) ? "e" : "c", NULL);
    return;
  }
  if (is_route(op)) {
    s->axis[a] = (signed char)pdim_named(d, "s", NULL);
    s->sp[a] = (unsigned char)ep_axis(st, a);
    return;
  }
  int p = op->kind == STRATA_OP_LINEAR || op->kind == STRATA_OP_MOE_ROUTER
              ? ST__REP
              : follow_input(st, in, choice_of_op, a);
  if (p == ST__REP) p = pdim_named(d, "s", "seq");
  s->axis[a] = (signed char)p;
}

static void dp_axis(const st__stage_t *st, const st__opinfo_t *in,
                    const int *choice_of_op, int a, int pure, st__strat_t *s) {
  const st__opdims_t *d = &in->dims;
  int p = pure ? follow_input(st, in, choice_of_op, a) : ST__REP;
  int b = pdim_named(d, "b", "dp");
  if (p == ST__REP && b != ST__REP && d->size[b] % st->o.mesh.shape[a] == 0)
    p = b;
  if (p == ST__REP && pure) p = pdim_named(d, "s", "seq");
  if (p == ST__REP && !pure) p = b;
  s->axis[a] = (signed char)p;
}

static int find_strategy(const st__opinfo_t *in, const st__strat_t *want,
                         int ndim) {
  for (int i = 0; i < in->n_strat; i++) {
    int same = 1;
    for (int a = 0; a < ndim; a++)
      if (in->strat[i].axis[a] != want->axis[a] ||
          in->strat[i].sp[a] != want->sp[a])
        same = 0;
    if (same) return i;
  }
  return -1;
}

static int fix_one(st__stage_t *st, st__opinfo_t *in, int *choice_of_op) {
  const strata_mesh_t *m = &st->o.mesh;
  int megatron = st->o.objective == STRATA_OBJ_MEGATRON;
  int tp_axes = st->o.megatron_tp_axes;
  if (tp_axes <= 0) {
    /* the inner axis, the outer ones data-parallel -- unless the
     * micro-batch cannot be split over them: then all tensor-parallel */
    int outer = 1;
    for (int a = 0; a < m->ndim - 1; a++)
      outer *= m->shape[a];
    tp_axes = st->g->micro_batch % outer == 0 ? 1 : m->ndim;
  }
  int cp = megatron && st->o.cp > 1, tp = 1;
  for (int a = m->ndim - tp_axes; a < m->ndim; a++)
    if (!(cp && a == 0)) tp *= m->shape[a];
  int sp = st->o.sequence_parallel > 0 && tp > 1;
  st__strat_t s;
  memset(&s, 0, sizeof s);
  for (int a = 0; a < STRATA_MESH_MAX_DIMS; a++)
    s.axis[a] = ST__REP;
  for (int a = 0; a < m->ndim; a++) {
    if (m->shape[a] <= 1) continue;
    if (cp && a == 0)
      cp_axis(st, in, choice_of_op, a, &s);
    else if (megatron && a >= m->ndim - tp_axes)
      tp_axis(st, in, choice_of_op, a, sp, &s);
    else
      dp_axis(st, in, choice_of_op, a, !megatron, &s);
  }
  int k = find_strategy(in, &s, m->ndim);
  if (k < 0) {
    const strata_op_t *op = &st->g->ops[in->op];
    return strata_error(STRATA_EINVAL,
                        "the %s layout cannot place op '%s' "
                        "(%s) on this mesh: a dimension it splits (heads, "
                        "batch, vocabulary...) does not divide by %d",
                        strata_objective_name(st->o.objective), op->name,
                        strata_op_kind_name(op->kind), strata_mesh_devices(m));
  }
  in->fixed = k;
  choice_of_op[in->op] = k;
  return 0;
}

int st__fixed_layouts(st__stage_t *st) {
  int *choice_of_op =
      strata_malloc(sizeof(int) * (size_t)(2 * st->g->n_ops + 1));
  int rc = 0;
  if (!choice_of_op) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int i = 0; i < st->g->n_ops; i++)
    choice_of_op[i] = -1;
  for (int i = 0; i < st->n_info && !rc; i++) {
    choice_of_op[st->g->n_ops + st->info[i].op] = i;
    rc = fix_one(st, &st->info[i], choice_of_op);
  }
  strata_free(choice_of_op);
  return rc;
}
