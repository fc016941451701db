/*
 * validate.c - everything a graph must satisfy before the planner may
 * trust it, checked in one pass per concern so each message can name the
 * op or tensor at fault:
 *
 *   1. references: every tensor index in range; activations written by
 *      exactly one op, inputs and params by none (fills producer);
 *   2. order: an op reads only what an earlier op produced (the stored
 *      order is topological; a read before the producer is a cycle or a
 *      misordering, both reported the same way);
 *   3. shapes: the rule of each kind (shapes.c);
 *   4. blocks: contiguous, in op order, no op between two blocks, input
 *      and output of the same shape, output produced inside (fills
 *      op.layer, op.block, block.layer0);
 *   5. visibility: a tensor made inside a repeated block is seen outside it
 *      only as the block's output, and a param belongs to one block or to
 *      none (fills tensor.block).
 */
#include <string.h>

#include "traces/traces_int.h"

static int check_refs(const strata_graph_t *g) {
  for (int i = 0; i < g->n_ops; i++) {
    const strata_op_t *op = &g->ops[i];
    if ((unsigned)op->kind >= STRATA_OP_COUNT || op->n_in < 0 ||
        op->n_in > STRATA_MAX_OP_INPUTS || op->n_out < 1 ||
        op->n_out > STRATA_MAX_OP_OUTPUTS)
      return strata_error(STRATA_EBADINPUT, "op '%s': bad kind or arity",
                          op->name);
    for (int k = 0; k < op->n_in + op->n_out; k++) {
      int t = k < op->n_in ? op->in[k] : op->out[k - op->n_in];
      if (t < 0 || t >= g->n_tensors)
        return strata_error(STRATA_EBADINPUT, "op '%s': no tensor %d", op->name,
                            t);
    }
  }
  return 0;
}

static int fill_producers(strata_graph_t *g) {
  for (int t = 0; t < g->n_tensors; t++)
    g->tensors[t].producer = -1;
  for (int i = 0; i < g->n_ops; i++) {
    const strata_op_t *op = &g->ops[i];
    for (int k = 0; k < op->n_out; k++) {
      strata_tensor_t *t = &g->tensors[op->out[k]];
      if (t->kind != STRATA_TENSOR_ACTIVATION)
        return strata_error(STRATA_EBADINPUT,
                            "op '%s' writes tensor '%s', which is %s; only "
                            "activations are produced by ops",
                            op->name, t->name,
                            t->kind == STRATA_TENSOR_PARAM ? "a param"
                                                           : "an input");
      if (t->producer >= 0)
        return strata_error(STRATA_EBADINPUT,
                            "tensor '%s' is written by two ops, '%s' and '%s'",
                            t->name, g->ops[t->producer].name, op->name);
      t->producer = i;
    }
  }
  for (int t = 0; t < g->n_tensors; t++)
    if (g->tensors[t].kind == STRATA_TENSOR_ACTIVATION &&
        g->tensors[t].producer < 0)
      return strata_error(STRATA_EBADINPUT,
                          "tensor '%s' is an activation that no op produces "
                          "(make it an input, or add the op that writes it)",
                          g->tensors[t].name);
  return 0;
}

static int check_order(const strata_graph_t *g) {
  for (int i = 0; i < g->n_ops; i++) {
    const strata_op_t *op = &g->ops[i];
    for (int k = 0; k < op->n_in; k++) {
      const strata_tensor_t *t = &g->tensors[op->in[k]];
      if (t->producer < i) continue;
      return strata_error(STRATA_EBADINPUT,
                          "op '%s' reads tensor '%s' before op '%s' produces "
                          "it (ops must be listed in topological order: is "
                          "there a cycle?)",
                          op->name, t->name, g->ops[t->producer].name);
    }
  }
  return 0;
}

static int same_shape(const strata_tensor_t *a, const strata_tensor_t *b) {
  if (a->ndim != b->ndim || a->dtype != b->dtype) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

static int check_block(strata_graph_t *g, int b, int expect_first, int layer0) {
  strata_block_t *bl = &g->blocks[b];
  if (bl->repeat < 1 || bl->repeat > STRATA_MAX_REPEAT)
    return strata_error(STRATA_EBADINPUT,
                        "block '%s': repeat %d (must be 1 to %d)", bl->name,
                        bl->repeat, STRATA_MAX_REPEAT);
  if (bl->n_ops < 1 || bl->first_op < 0 || bl->first_op > g->n_ops - bl->n_ops)
    return strata_error(STRATA_EBADINPUT, "block '%s': bad op range", bl->name);
  if (b > 0 && bl->first_op != expect_first)
    return strata_error(STRATA_EBADINPUT,
                        "block '%s' does not start right after block '%s' "
                        "(blocks are listed in op order with no op between "
                        "them: ops outside blocks come before the first or "
                        "after the last)",
                        bl->name, g->blocks[b - 1].name);
  if (bl->input < 0 || bl->input >= g->n_tensors || bl->output < 0 ||
      bl->output >= g->n_tensors)
    return strata_error(STRATA_EBADINPUT,
                        "block '%s': input or output is not a tensor",
                        bl->name);
  const strata_tensor_t *in = &g->tensors[bl->input];
  const strata_tensor_t *out = &g->tensors[bl->output];
  if (in->producer >= bl->first_op)
    return strata_error(STRATA_EBADINPUT,
                        "block '%s': input '%s' must come from before the "
                        "block",
                        bl->name, in->name);
  if (out->producer < bl->first_op || out->producer >= bl->first_op + bl->n_ops)
    return strata_error(STRATA_EBADINPUT,
                        "block '%s': output '%s' is not produced inside the "
                        "block",
                        bl->name, out->name);
  if (!same_shape(in, out)) {
    char a[96], c[96];
    return strata_error(STRATA_EBADINPUT,
                        "block '%s': input '%s' %s %s and output '%s' %s %s "
                        "differ (a repeated block feeds its output back as "
                        "its input)",
                        bl->name, in->name, st__shape_str(in, a, sizeof a),
                        strata_dtype_name(in->dtype), out->name,
                        st__shape_str(out, c, sizeof c),
                        strata_dtype_name(out->dtype));
  }
  bl->layer0 = layer0;
  for (int i = bl->first_op; i < bl->first_op + bl->n_ops; i++) {
    g->ops[i].block = b;
    g->ops[i].layer = layer0;
  }
  return 0;
}

static int check_blocks(strata_graph_t *g) {
  int next = 0, layer = 0, rc;
  for (int i = 0; i < g->n_ops; i++)
    g->ops[i].block = g->ops[i].layer = -1;
  for (int b = 0; b < g->n_blocks; b++) {
    if ((rc = check_block(g, b, next, layer))) return rc;
    next = g->blocks[b].first_op + g->blocks[b].n_ops;
    layer += g->blocks[b].repeat;
  }
  return 0;
}

/* Which block owns each tensor; reject reads that a repeat makes
 * ambiguous and params shared between a block and anything else. */
static int check_visibility(strata_graph_t *g) {
  for (int t = 0; t < g->n_tensors; t++) {
    strata_tensor_t *x = &g->tensors[t];
    x->block = x->producer >= 0 ? g->ops[x->producer].block : -2;
  }
  for (int i = 0; i < g->n_ops; i++) {
    const strata_op_t *op = &g->ops[i];
    for (int k = 0; k < op->n_in; k++) {
      strata_tensor_t *x = &g->tensors[op->in[k]];
      if (x->kind == STRATA_TENSOR_PARAM) {
        if (x->block == -2) x->block = op->block;
        if (x->block == op->block) continue;
        return strata_error(
            STRATA_EBADINPUT,
            "param '%s' is used by op '%s' in %s and by ops "
            "in %s; a repeated block needs its own weights",
            x->name, op->name,
            op->block >= 0 ? g->blocks[op->block].name : "no block",
            x->block >= 0 ? g->blocks[x->block].name : "no block");
      }
      if (x->block < 0 || x->block == op->block ||
          op->in[k] == g->blocks[x->block].output)
        continue;
      return strata_error(STRATA_EBADINPUT,
                          "op '%s' reads tensor '%s', which is internal to "
                          "block '%s' (only the block's output '%s' is "
                          "visible outside it)",
                          op->name, x->name, g->blocks[x->block].name,
                          g->tensors[g->blocks[x->block].output].name);
    }
  }
  for (int t = 0; t < g->n_tensors; t++)
    if (g->tensors[t].block == -2) g->tensors[t].block = -1;
  return 0;
}

int strata_graph_validate(strata_graph_t *g) {
  int rc;
  if (g->n_ops == 0)
    return strata_error(STRATA_EBADINPUT, "the graph has no operators");
  if (g->micro_batch < 1 || g->seq_len < 1)
    return strata_error(STRATA_EBADINPUT,
                        "micro_batch (%d) and seq_len (%d) must be >= 1",
                        g->micro_batch, g->seq_len);
  if ((rc = check_refs(g)) || (rc = fill_producers(g)) || (rc = check_order(g)))
    return rc;
  for (int i = 0; i < g->n_ops; i++)
    if ((rc = st__op_check(g, &g->ops[i]))) return rc;
  if ((rc = check_blocks(g)) || (rc = check_visibility(g))) return rc;
  return 0;
}
