/*
 * rebatch.c - the same model at another micro-batch size.
 *
 * A trace is made at one micro-batch b; the planner searches over others.
 * Generated models are simply generated again, but a trace file must be
 * re-shaped.  The batch is found by following it through the graph rather
 * than by guessing from sizes: an input carries it in dim 0 when that dim
 * equals b; every op passes it to its outputs by its kind's rule (most
 * keep it in dim 0, permute and transpose move it, gather puts the index
 * dims first; a generic op whose dim 0 is b expands to the batch); a
 * parameter never has it.  Where the batch lives, it is
 * the outermost factor of its dim ([b,s,h] viewed as [b*s,h] too), so the
 * dim is scaled by b'/b.  What cannot be re-shaped consistently (a slice
 * or split of the batch, a batch that is not a whole factor of its dim) is
 * an error naming the op or tensor.  The copy is validated: every shape
 * rule is checked again at the new size.
 */
#include <string.h>

#include "traces/traces_int.h"

#define NO_BATCH (-1)

/* The batch dim of op's outputs from its inputs' (bd: per tensor). */
static int out_batch_dim(const strata_graph_t *g, const strata_op_t *op,
                         const int *bd) {
  int in0 = op->n_in > 0 ? bd[op->in[0]] : NO_BATCH, any = NO_BATCH;
  for (int k = 0; k < op->n_in; k++)
    if (bd[op->in[k]] != NO_BATCH && any == NO_BATCH) any = bd[op->in[k]];
  switch (op->kind) {
  case STRATA_OP_CROSS_ENTROPY:
    return NO_BATCH; /* the scalar loss */
  case STRATA_OP_PERMUTE:
    for (int j = 0; in0 != NO_BATCH && j < g->tensors[op->in[0]].ndim; j++)
      if (op->perm[j] == in0) return j;
    return NO_BATCH;
  case STRATA_OP_TRANSPOSE: {
    int r = g->tensors[op->in[0]].ndim;
    if (in0 == r - 1) return r - 2;
    if (in0 == r - 2) return r - 1;
    return in0;
  }
  case STRATA_OP_GATHER: {
    int ti = bd[op->in[1]], ni = g->tensors[op->in[0]].ndim;
    if (in0 != NO_BATCH) return in0;
    return ti > 0 ? ni + ti - 1 : ti == 0 ? -2 : NO_BATCH;
  }
  case STRATA_OP_SPLIT:
  case STRATA_OP_SLICE:
    return in0 != NO_BATCH && in0 == op->axis ? -2 : in0;
  case STRATA_OP_RESHAPE:
    return in0 == 0 || in0 == NO_BATCH ? in0 : -2;
  case STRATA_OP_MOE_DISPATCH: /* [b,s,h] -> [E,b,C,h]: C is per sequence */
    return in0 == 0 ? 1 : in0 == NO_BATCH ? NO_BATCH : -2;
  case STRATA_OP_MOE_COMBINE: /* [E,b,C,h] -> [b,s,h] */
    return in0 == 1 ? 0 : in0 == NO_BATCH ? NO_BATCH : -2;
  case STRATA_OP_GENERIC: /* an expand of unbatched inputs to the batch */
    if (any == NO_BATCH && g->tensors[op->out[0]].ndim > 0 &&
        g->tensors[op->out[0]].shape[0] == g->micro_batch)
      return 0;
    return any;
  default:
    return any == NO_BATCH ? NO_BATCH : any == 0 ? 0 : any;
  }
}

static int cannot(const strata_graph_t *g, const char *what, const char *name,
                  const char *why, int nb) {
  return strata_error(STRATA_EBADINPUT,
                      "cannot re-shape '%s' from micro-batch %d to %d: %s "
                      "'%s' %s",
                      g->name, g->micro_batch, nb, what, name, why);
}

/* bd[t] for every tensor, in op order. */
static int find_batch(const strata_graph_t *g, int nb, int *bd) {
  for (int t = 0; t < g->n_tensors; t++) {
    const strata_tensor_t *x = &g->tensors[t];
    bd[t] = x->kind == STRATA_TENSOR_INPUT && x->ndim > 0 &&
                    x->shape[0] == g->micro_batch
                ? 0
                : NO_BATCH;
  }
  for (int i = 0; i < g->n_ops; i++) {
    const strata_op_t *op = &g->ops[i];
    int d = out_batch_dim(g, op, bd);
    if (d == -2)
      return cannot(g, "op", op->name,
                    "slices, splits or reshapes along the batch", nb);
    for (int k = 0; k < op->n_out; k++) {
      const strata_tensor_t *y = &g->tensors[op->out[k]];
      int dk = d < y->ndim ? d : NO_BATCH;
      if (dk != NO_BATCH && y->shape[dk] % g->micro_batch)
        return cannot(g, "tensor", y->name,
                      "has the batch in a dim it does not divide", nb);
      bd[op->out[k]] = dk;
    }
  }
  return 0;
}

static int copy_tensors(const strata_graph_t *g, int nb, const int *bd,
                        strata_graph_t *c) {
  for (int t = 0; t < g->n_tensors; t++) {
    const strata_tensor_t *x = &g->tensors[t];
    int64_t sh[STRATA_MAX_DIMS];
    memcpy(sh, x->shape, sizeof sh);
    if (bd[t] != NO_BATCH) sh[bd[t]] = sh[bd[t]] / g->micro_batch * nb;
    int rc =
        strata_graph_add_tensor(c, x->name, x->ndim, sh, x->dtype, x->kind);
    if (rc < 0) return rc;
  }
  return 0;
}

/* A generic op's FLOPs were given for the old batch: they scale with it
 * when its output carries the batch. */
static int copy_ops(const strata_graph_t *g, int nb, const int *bd,
                    strata_graph_t *c) {
  for (int i = 0; i < g->n_ops; i++) {
    const strata_op_t *op = &g->ops[i];
    int rc = strata_graph_add_op(c, op->name, op->kind, op->n_in, op->in,
                                 op->n_out, op->out);
    if (rc < 0) return rc;
    strata_op_t *o = &c->ops[rc];
    char *name = o->name;
    *o = *op; /* every attribute */
    o->name = name;
    if (op->kind == STRATA_OP_GENERIC && op->flops > 0 &&
        bd[op->out[0]] != NO_BATCH)
      o->flops = op->flops / g->micro_batch * nb;
  }
  for (int b = 0; b < g->n_blocks; b++) {
    const strata_block_t *bl = &g->blocks[b];
    int rc = strata_graph_add_block(c, bl->name, bl->first_op, bl->n_ops,
                                    bl->repeat, bl->input, bl->output);
    if (rc < 0) return rc;
  }
  return 0;
}

int strata_graph_rebatch(const strata_graph_t *g, int micro_batch,
                         strata_graph_t **out) {
  strata_graph_t *c = NULL;
  int *bd = NULL, rc;
  *out = NULL;
  if (micro_batch < 1)
    return strata_error(STRATA_EINVAL, "micro-batch %d: must be >= 1",
                        micro_batch);
  if (!(bd = strata_malloc(sizeof(int) * ((size_t)g->n_tensors + 1))))
    return strata_error(STRATA_ENOMEM, "out of memory re-shaping a model");
  if ((rc = find_batch(g, micro_batch, bd))) goto out;
  if (!(c = strata_graph_create(g->name))) {
    rc = STRATA_ENOMEM;
    goto out;
  }
  c->micro_batch = micro_batch;
  c->seq_len = g->seq_len;
  c->hp = g->hp;
  c->hp.family[sizeof c->hp.family - 1] = '\0';
  if ((rc = copy_tensors(g, micro_batch, bd, c)) ||
      (rc = copy_ops(g, micro_batch, bd, c)))
    goto out;
  if ((rc = strata_graph_validate(c)))
    strata_error_prefix("re-shaping '%s' to micro-batch %d", g->name,
                        micro_batch);
out:
  strata_free(bd);
  if (rc)
    strata_graph_destroy(c);
  else
    *out = c;
  return rc;
}
