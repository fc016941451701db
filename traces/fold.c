/*
 * fold.c - recognise structurally identical layers stored separately and
 * fold them into one repeated block.
 *
 * An importer that writes every layer as its own block (names L0.qkv,
 * L1.qkv, ...) describes the same model as one block x L, but everything
 * downstream pays for the difference: the stage ILP's homogeneous mode and
 * the pipeline's memoisation work per block, so 500 separate layers meant
 * 500 times the variables.  Two consecutive blocks A, B are identical when
 * B reads A's output as its input (and nothing else reads A's output),
 * their ops agree one to one in kind, attributes and arity, and every
 * tensor agrees in shape and dtype and in where it comes from: the same
 * relative op and slot inside the block, the block's input, a parameter of
 * the block's own (the pairing of A's params with B's is one to one), or
 * the very same tensor outside both (an input, a prologue activation);
 * and both inputs are activations (or both not).
 * Names do not matter.  A run of identical blocks becomes the first block
 * with the summed repeat; ops reading the run's last output read the first
 * block's output instead, which by the format's rule means the last
 * instance's output.  Work is linear in the graph's size.
 */
#include <string.h>

#include "traces/traces_int.h"

typedef struct {
  strata_graph_t *g;
  int *pair;     /* tensor of A -> its counterpart in B, or -1 */
  int *rpair;    /* the reverse pairing of params */
  int *rd_block; /* tensor -> the block all its readers are in, -1 none,
                    -2 several or an op outside blocks */
} fold_t;

static int same_tensor_shape(const strata_tensor_t *a,
                             const strata_tensor_t *b) {
  if (a->ndim != b->ndim || a->dtype != b->dtype || a->kind != b->kind)
    return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

static int same_attrs(const strata_op_t *a, const strata_op_t *b) {
  return a->kind == b->kind && a->n_in == b->n_in && a->n_out == b->n_out &&
         a->heads == b->heads && a->kv_heads == b->kv_heads &&
         a->dropout_p == b->dropout_p && a->causal == b->causal &&
         a->axis == b->axis && a->start == b->start && a->end == b->end &&
         !memcmp(a->perm, b->perm, sizeof a->perm) && a->window == b->window &&
         a->flops == b->flops && a->topk == b->topk &&
         a->capacity == b->capacity && a->v_dim == b->v_dim;
}

/* Input ta of an op of A against tb of the same slot in B. */
static int same_input(fold_t *F, int A, int B, int ta, int tb) {
  const strata_graph_t *g = F->g;
  const strata_tensor_t *xa = &g->tensors[ta], *xb = &g->tensors[tb];
  if (ta == g->blocks[A].input) return tb == g->blocks[B].input;
  if (xa->block != A) return ta == tb && tb != g->blocks[B].input;
  if (xb->block != B || !same_tensor_shape(xa, xb)) return 0;
  if (xa->kind != STRATA_TENSOR_PARAM) return F->pair[ta] == tb;
  if (F->pair[ta] < 0) { /* first use of the param: pair it */
    if (F->rpair[tb] >= 0) return 0;
    F->pair[ta] = tb;
    F->rpair[tb] = ta;
  }
  return F->pair[ta] == tb;
}

static void unpair(fold_t *F, int A) {
  const strata_block_t *a = &F->g->blocks[A];
  for (int i = a->first_op; i < a->first_op + a->n_ops; i++) {
    const strata_op_t *op = &F->g->ops[i];
    for (int k = 0; k < op->n_in; k++) {
      if (F->pair[op->in[k]] >= 0) F->rpair[F->pair[op->in[k]]] = -1;
      F->pair[op->in[k]] = -1;
    }
    for (int k = 0; k < op->n_out; k++)
      F->pair[op->out[k]] = -1;
  }
}

static int identical(fold_t *F, int A, int B) {
  const strata_graph_t *g = F->g;
  const strata_block_t *a = &g->blocks[A], *b = &g->blocks[B];
  /* a first layer fed by an input saves less than the next ones, which
   * are fed by an activation: not the same */
  int ok = a->n_ops == b->n_ops && b->input == a->output &&
           g->tensors[a->input].kind == g->tensors[b->input].kind &&
           (F->rd_block[a->output] == B || F->rd_block[a->output] == -1) &&
           (int64_t)a->repeat + b->repeat <= STRATA_MAX_REPEAT;
  for (int i = 0; ok && i < a->n_ops; i++) {
    const strata_op_t *oa = &g->ops[a->first_op + i];
    const strata_op_t *ob = &g->ops[b->first_op + i];
    ok = same_attrs(oa, ob);
    for (int k = 0; ok && k < oa->n_in; k++)
      ok = same_input(F, A, B, oa->in[k], ob->in[k]);
    for (int k = 0; ok && k < oa->n_out; k++) {
      ok = same_tensor_shape(&g->tensors[oa->out[k]], &g->tensors[ob->out[k]]);
      F->pair[oa->out[k]] = ob->out[k];
    }
  }
  ok = ok && F->pair[a->output] == b->output;
  unpair(F, A);
  return ok;
}

static void fill_readers(fold_t *F) {
  const strata_graph_t *g = F->g;
  for (int t = 0; t < g->n_tensors; t++)
    F->rd_block[t] = -1;
  for (int i = 0; i < g->n_ops; i++) {
    const strata_op_t *op = &g->ops[i];
    for (int k = 0; k < op->n_in; k++) {
      int *r = &F->rd_block[op->in[k]];
      if (op->block < 0)
        *r = -2;
      else if (*r == -1)
        *r = op->block;
      else if (*r != op->block)
        *r = -2;
    }
  }
}

/* Which blocks survive (keep[b]) and, for a folded block, the block it
 * joins (into[b]); repeats summed into the survivors. */
static int plan_folds(fold_t *F, int *into) {
  strata_graph_t *g = F->g;
  int n = 0, head = 0;
  for (int b = 0; b < g->n_blocks; b++) {
    into[b] = b;
    if (b > 0 && identical(F, b - 1, b) &&
        (int64_t)g->blocks[head].repeat + g->blocks[b].repeat <=
            STRATA_MAX_REPEAT) {
      into[b] = head;
      n++;
    } else {
      head = b;
    }
  }
  return n;
}

/* ---- compaction ---- */

/* Where a reference to tensor t goes: the surviving block's output for
 * the output of a folded block, then t's new index (-1: removed). */
static int remap(const int *red, const int *new_t, int t) {
  return new_t[red[t] >= 0 ? red[t] : t];
}

static void mark(strata_graph_t *g, const int *into, int *red, int *new_t,
                 int *new_o) {
  for (int t = 0; t < g->n_tensors; t++)
    red[t] = -1, new_t[t] = 0;
  for (int i = 0; i < g->n_ops; i++)
    new_o[i] = 0;
  for (int b = 0; b < g->n_blocks; b++) {
    const strata_block_t *bl = &g->blocks[b];
    if (into[b] == b) continue;
    red[bl->output] = g->blocks[into[b]].output;
    g->blocks[into[b]].repeat += bl->repeat;
    for (int i = bl->first_op; i < bl->first_op + bl->n_ops; i++)
      new_o[i] = -1;
  }
  for (int t = 0; t < g->n_tensors; t++) {
    int b = g->tensors[t].block;
    if (b >= 0 && into[b] != b) new_t[t] = -1;
  }
}

static void compact_tensors(strata_graph_t *g, int *new_t) {
  int n = 0;
  for (int t = 0; t < g->n_tensors; t++) {
    if (new_t[t] < 0) {
      strata_free(g->tensors[t].name);
      continue;
    }
    new_t[t] = n;
    g->tensors[n++] = g->tensors[t];
  }
  g->n_tensors = n;
}

static void compact_ops(strata_graph_t *g, int *new_o, const int *red,
                        const int *new_t) {
  int n = 0;
  for (int i = 0; i < g->n_ops; i++) {
    strata_op_t *op = &g->ops[i];
    if (new_o[i] < 0) {
      strata_free(op->name);
      continue;
    }
    for (int k = 0; k < op->n_in; k++)
      op->in[k] = remap(red, new_t, op->in[k]);
    for (int k = 0; k < op->n_out; k++)
      op->out[k] = new_t[op->out[k]];
    new_o[i] = n;
    g->ops[n++] = *op;
  }
  g->n_ops = n;
}

static void compact_blocks(strata_graph_t *g, const int *into, const int *new_o,
                           const int *red, const int *new_t) {
  int n = 0;
  for (int b = 0; b < g->n_blocks; b++) {
    strata_block_t *bl = &g->blocks[b];
    if (into[b] != b) {
      strata_free(bl->name);
      continue;
    }
    bl->first_op = new_o[bl->first_op];
    bl->input = remap(red, new_t, bl->input);
    bl->output = new_t[bl->output];
    g->blocks[n++] = *bl;
  }
  g->n_blocks = n;
}

int st__graph_fold(strata_graph_t *g, int *folded) {
  fold_t F = {g, NULL, NULL, NULL};
  size_t nt = (size_t)g->n_tensors + 1;
  int *into = strata_malloc(sizeof(int) * ((size_t)g->n_blocks + 1));
  int *new_o = strata_malloc(sizeof(int) * ((size_t)g->n_ops + 1));
  int *red = strata_malloc(sizeof(int) * nt);
  int *new_t = strata_malloc(sizeof(int) * nt);
  int rc = 0, n = 0;
  F.pair = strata_malloc(sizeof(int) * nt);
  F.rpair = strata_malloc(sizeof(int) * nt);
  F.rd_block = strata_malloc(sizeof(int) * nt);
  if (!into || !new_o || !red || !new_t || !F.pair || !F.rpair || !F.rd_block) {
    rc = strata_error(STRATA_ENOMEM, "out of memory folding layers");
    goto out;
  }
  for (size_t t = 0; t < nt; t++)
    F.pair[t] = F.rpair[t] = -1;
  fill_readers(&F);
  n = plan_folds(&F, into);
  if (n == 0) goto out;
  mark(g, into, red, new_t, new_o);
  compact_tensors(g, new_t);
  compact_ops(g, new_o, red, new_t);
  compact_blocks(g, into, new_o, red, new_t);
  if (!(rc = st__name_reindex(g))) rc = strata_graph_validate(g);
out:
  if (folded) *folded = rc ? 0 : n;
  strata_free(into);
  strata_free(new_o);
  strata_free(red);
  strata_free(new_t);
  strata_free(F.pair);
  strata_free(F.rpair);
  strata_free(F.rd_block);
  return rc;
}

int strata_graph_fold_repeats(strata_graph_t *g, int *folded) {
  return st__graph_fold(g, folded);
}
