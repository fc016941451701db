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
 *      none (fills tensor.block);
 *   6. sizes: names as st__name_check takes them, micro_batch and seq_len
 *      within the planner's bounds and borne out by the shapes (a plan
 *      counts tokens as micro_batch x seq_len, the costs come from the
 *      shapes: the two must agree).
 */
#include <stdio.h>
#include <string.h>

#include "core/text.h"
#include "traces/traces_int.h"

/* The command line's bounds (--micro-batch, --seq): a graph that
 * validates gives a plan a plan file can hold. */
#define MAX_MICRO_BATCH (1 << 20)
#define MAX_SEQ (1 << 24)

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

static int check_names(const strata_graph_t *g) {
  char where[64];
  int rc = 0;
  if (g->name && g->name[0] &&
      (rc = st__name_check(g->name, "the model's name", "graph")))
    return rc;
  for (int i = 0; i < g->n_tensors && !rc; i++) {
    snprintf(where, sizeof where, "tensor %d", i);
    rc = st__name_check(g->tensors[i].name, "its name", where);
  }
  for (int i = 0; i < g->n_ops && !rc; i++) {
    snprintf(where, sizeof where, "op %d", i);
    rc = st__name_check(g->ops[i].name, "its name", where);
  }
  for (int i = 0; i < g->n_blocks && !rc; i++) {
    snprintf(where, sizeof where, "block %d", i);
    rc = st__name_check(g->blocks[i].name, "its name", where);
  }
  return rc;
}

/* micro_batch and seq_len as the shapes show them: the batch in dim 0 of
 * an input or activation, the sequence in a later dim of one of those
 * ([b, s, h], [b, heads, s, d]), or both as one flattened dim ([b*s, h]),
 * or the sequence in attention's [..., s, s].  A micro_batch or seq_len
 * of 1 is no claim (a graph without a batch or sequence dim). */
static int check_sizes(const strata_graph_t *g) {
  int b = g->micro_batch, s = g->seq_len, has_b = b == 1, has_s = s == 1;
  if (b > MAX_MICRO_BATCH || s > MAX_SEQ)
    return strata_error(STRATA_EBADINPUT,
                        "micro_batch %d and seq_len %d: at most %d and %d", b,
                        s, MAX_MICRO_BATCH, MAX_SEQ);
  int64_t bs = (int64_t)b * s;
  for (int i = 0; i < g->n_tensors && !(has_b && has_s); i++) {
    const strata_tensor_t *t = &g->tensors[i];
    const int64_t *d = t->shape;
    int n = t->ndim;
    if (t->kind == STRATA_TENSOR_PARAM || n < 1) continue;
    if (d[0] == bs) has_b = has_s = 1;
    if (d[0] != b) continue;
    has_b = 1;
    for (int k = 1; k < n; k++)
      if (d[k] == s) has_s = 1;
  }
  for (int i = 0; i < g->n_tensors && !has_s; i++) {
    const strata_tensor_t *t = &g->tensors[i];
    int n = t->ndim;
    if (n >= 2 && t->shape[n - 1] == s && t->shape[n - 2] == s) has_s = 1;
  }
  if (!has_b)
    return strata_error(STRATA_EBADINPUT,
                        "micro_batch is %d, but no input or activation has "
                        "%d in dim 0: the shapes were made at another "
                        "micro-batch",
                        b, b);
  if (!has_s)
    return strata_error(STRATA_EBADINPUT,
                        "seq_len is %d, but no input or activation has it "
                        "after the batch ([micro_batch, ..., seq_len, ...] or "
                        "[micro_batch x seq_len, ...]) nor as attention's "
                        "[..., seq_len, seq_len]: the shapes were made at "
                        "another sequence length",
                        s);
  return 0;
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
    /* every block's repeat is at most STRATA_MAX_REPEAT: the sum stays
     * far from overflow until it passes the same bound */
    if ((layer += g->blocks[b].repeat) > STRATA_MAX_REPEAT)
      return strata_error(STRATA_EBADINPUT,
                          "the blocks come to more than %d layers (at block "
                          "'%s')",
                          STRATA_MAX_REPEAT, g->blocks[b].name);
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
  if ((rc = check_names(g)) || (rc = check_sizes(g)) || (rc = check_refs(g)) ||
      (rc = fill_producers(g)) || (rc = check_order(g)))
    return rc;
  for (int i = 0; i < g->n_ops; i++)
    if ((rc = st__op_check(g, &g->ops[i]))) return rc;
  if ((rc = check_blocks(g)) || (rc = check_visibility(g))) return rc;
  return 0;
}
