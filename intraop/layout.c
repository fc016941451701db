/*
 * layout.c - parallel dimensions of each op kind, strategy enumeration and
 * tensor placements (see layout.h for the model).
 */
#include <stdio.h>
#include <string.h>

#include "intraop/layout.h"

static int add_pdim(st__opdims_t *d, const char *name, int64_t size,
                    int shardable) {
  int i = d->n_pdims++;
  d->size[i] = size;
  d->name[i] = name;
  d->shardable[i] = (unsigned char)shardable;
  return i;
}

static const strata_tensor_t *slot_t(const strata_graph_t *g,
                                     const st__opdims_t *d, int slot) {
  return &g->tensors[d->tensor[slot]];
}

int st__is_grouped(const strata_graph_t *g, int t) {
  for (int hops = 0; hops < 64; hops++) {
    int p = g->tensors[t].producer;
    if (p < 0) return 0;
    const strata_op_t *op = &g->ops[p];
    if (op->kind == STRATA_OP_MOE_DISPATCH) return 1;
    if (op->kind == STRATA_OP_MOE_COMBINE || op->n_in < 1) return 0;
    if (op->kind == STRATA_OP_GROUPED_LINEAR) return 1;
    t = op->in[0];
  }
  return 0;
}

/* Leading dims 0..n-1 of slot `from` become shardable pdims mapped in
 * every slot in `to` (same positions).  Token copies grouped by expert
 * name theirs e (experts), b (sequences) and c (copies). */
static void leading(const strata_graph_t *g, st__opdims_t *d, int n,
                    const int *slots, int n_slots) {
  static const char *n3[] = {"b", "s", "l2", "l3", "l4", "l5"};
  static const char *n4[] = {"b", "heads", "s", "l3", "l4", "l5"};
  static const char *ng[] = {"e", "b", "c", "l3", "l4", "l5"};
  const strata_tensor_t *t = slot_t(g, d, slots[0]);
  const char *const *names = d->grouped ? ng : t->ndim >= 4 ? n4 : n3;
  for (int i = 0; i < n && i < 6; i++) {
    int p = add_pdim(d, names[i], t->shape[i], 1);
    for (int k = 0; k < n_slots; k++)
      d->map[slots[k]][i] = (signed char)p;
  }
}

static void init_dims(const strata_graph_t *g, const strata_op_t *op,
                      st__opdims_t *d) {
  memset(d, 0, sizeof *d);
  memset(d->map, -1, sizeof d->map);
  d->n_in = op->n_in;
  d->n_slots = op->n_in + op->n_out;
  for (int i = 0; i < op->n_in; i++)
    d->tensor[i] = op->in[i];
  for (int i = 0; i < op->n_out; i++)
    d->tensor[op->n_in + i] = op->out[i];
  d->seq_dim = -1;
  d->pdim_n = -1;
  d->sp_pdim = -1;
  d->grouped = op->n_in > 0 && st__is_grouped(g, op->in[0]);
}

static void dims_linear(const strata_graph_t *g, const strata_op_t *op,
                        st__opdims_t *d) {
  const strata_tensor_t *x = &g->tensors[op->in[0]];
  int r = x->ndim, y = op->n_in;
  int slots[2] = {0, y};
  leading(g, d, r - 1, slots, 2);
  int64_t nout = g->tensors[op->in[1]].shape[0];
  int n =
      add_pdim(d, g->hp.vocab && nout == g->hp.vocab ? "vocab" : "n", nout, 1);
  int k = add_pdim(d, "k", x->shape[r - 1], 1);
  d->map[0][r - 1] = (signed char)k;
  d->map[1][0] = (signed char)n;
  d->map[1][1] = (signed char)k;
  if (op->n_in > 2) d->map[2][0] = (signed char)n;
  d->map[y][r - 1] = (signed char)n;
  d->heavy = 1;
  d->pdim_n = n;
  d->seq_dim = r >= 3 ? r - 2 : -1;
  d->name[0] = "dp";
  if (r >= 3) d->name[1] = "seq";
  if (d->seq_dim >= 0) {
    d->sp_pdim = n;
    d->sp_mask = 1u;
    d->sp_dim = d->seq_dim;
  }
}

/* Grouped GEMMs x[E,b,C,k] w[E,n,k]: experts, sequences, copies, outputs,
 * inputs; the sequence-parallel variant gathers the copies (expert tensor
 * parallelism with sequence parallelism). */
static void dims_grouped(const strata_graph_t *g, const strata_op_t *op,
                         st__opdims_t *d) {
  const strata_tensor_t *x = &g->tensors[op->in[0]];
  const strata_tensor_t *w = &g->tensors[op->in[1]];
  int y = op->n_in;
  int e = add_pdim(d, "e", x->shape[0], 1);
  int b = add_pdim(d, "b", x->shape[1], 1);
  int c = add_pdim(d, "c", x->shape[2], 1);
  int n = add_pdim(d, "n", w->shape[1], 1);
  int k = add_pdim(d, "k", x->shape[3], 1);
  d->map[0][0] = d->map[1][0] = d->map[y][0] = (signed char)e;
  d->map[0][1] = d->map[y][1] = (signed char)b;
  d->map[0][2] = d->map[y][2] = (signed char)c;
  d->map[1][1] = d->map[y][3] = (signed char)n;
  d->map[0][3] = d->map[1][2] = (signed char)k;
  if (op->n_in > 2) {
    d->map[2][0] = (signed char)e;
    d->map[2][1] = (signed char)n;
  }
  d->heavy = 1;
  d->pdim_n = n;
  d->seq_dim = 2;
  d->sp_pdim = n;
  d->sp_mask = 1u;
  d->sp_dim = 2;
}

/* Dispatch x[b,s,h], scores[b,s,E] -> copies[E,b,C,h] and combine (the
 * reverse): an axis splitting tokens (b or s) splits the copies along b
 * or C, each rank grouping its own tokens; with the modifier an axis
 * splitting s splits the experts instead, the copies exchanged all-to-all
 * (expert parallelism). */
static void dims_route(const strata_graph_t *g, const strata_op_t *op,
                       st__opdims_t *d) {
  int dispatch = op->kind == STRATA_OP_MOE_DISPATCH;
  int tok = dispatch ? 0 : op->n_in, grp = dispatch ? op->n_in : 0, sc = 1;
  const strata_tensor_t *x = &g->tensors[dispatch ? op->in[0] : op->out[0]];
  int b = add_pdim(d, "b", x->shape[0], 1);
  int s = add_pdim(d, "s", x->shape[1], 1);
  int h = add_pdim(d, "h", x->shape[2], 1);
  d->map[tok][0] = d->map[sc][0] = d->map[grp][1] = (signed char)b;
  d->map[tok][1] = d->map[sc][1] = d->map[grp][2] = (signed char)s;
  d->map[tok][2] = d->map[grp][3] = (signed char)h;
  d->sp_pdim = s;
  d->sp_mask = 1u << grp;
  d->sp_dim = 0;
  d->grouped = 0;
}

/* Latent attention's keys and values: batch, sequence and heads; the
 * shared rotary key part has no heads, so an axis splitting heads keeps
 * it whole (its gradient summed over them). */
static void dims_mla_kv(const strata_graph_t *g, const strata_op_t *op,
                        st__opdims_t *d) {
  const strata_tensor_t *kv = &g->tensors[op->in[0]];
  int b = add_pdim(d, "b", kv->shape[0], 1);
  int s = add_pdim(d, "s", kv->shape[1], 1);
  int h = add_pdim(d, "heads", op->heads, 1);
  for (int i = 0; i < d->n_slots; i++)
    d->map[i][0] = (signed char)b;
  d->map[0][1] = d->map[1][1] = (signed char)s;
  d->map[2][2] = d->map[3][2] = (signed char)s;
  d->map[0][2] = d->map[2][1] = d->map[3][1] = (signed char)h;
}

static void dims_matmul(const strata_graph_t *g, const strata_op_t *op,
                        st__opdims_t *d) {
  const strata_tensor_t *a = &g->tensors[op->in[0]];
  int r = a->ndim, c = op->n_in;
  static const char *bn[] = {"b", "heads", "l2", "l3"};
  for (int i = 0; i < r - 2 && i < 4; i++) {
    int p = add_pdim(d, bn[i], a->shape[i], 1);
    d->map[0][i] = d->map[1][i] = d->map[c][i] = (signed char)p;
  }
  int m = add_pdim(d, "m", a->shape[r - 2], 1);
  int k = add_pdim(d, "k", a->shape[r - 1], 1);
  int n = add_pdim(d, "n", g->tensors[op->in[1]].shape[r - 1], 1);
  d->map[0][r - 2] = d->map[c][r - 2] = (signed char)m;
  d->map[0][r - 1] = d->map[1][r - 2] = (signed char)k;
  d->map[1][r - 1] = d->map[c][r - 1] = (signed char)n;
  d->heavy = 1;
}

static void dims_embedding(const strata_graph_t *g, const strata_op_t *op,
                           st__opdims_t *d) {
  int y = op->n_in;
  int b = add_pdim(d, "b", g->tensors[op->in[0]].shape[0], 1);
  int s = add_pdim(d, "s", g->tensors[op->in[0]].shape[1], 1);
  int v = add_pdim(d, "vocab", g->tensors[op->in[1]].shape[0], 1);
  int h = add_pdim(d, "h", g->tensors[op->in[1]].shape[1], 1);
  d->map[0][0] = d->map[y][0] = (signed char)b;
  d->map[0][1] = d->map[y][1] = (signed char)s;
  d->map[1][0] = (signed char)v;
  d->map[1][1] = d->map[y][2] = (signed char)h;
  if (op->n_in > 2) d->map[2][1] = (signed char)h;
}

/* Every dim of every slot lines up (elementwise; a broadcast operand's
 * dims right-aligned, those of size 1 not split); the last one may be
 * excluded (norms, softmax, rope reduce or rotate along it). */
static void dims_elementwise(const strata_graph_t *g, const strata_op_t *op,
                             st__opdims_t *d, int last_shardable) {
  static const char *n3[] = {"b", "s", "l2", "l3", "l4", "l5"};
  static const char *n4[] = {"b", "heads", "s", "l3", "l4", "l5"};
  static const char *ng[] = {"e", "b", "c", "l3", "l4", "l5"};
  const strata_tensor_t *x = &g->tensors[op->in[0]];
  const char *const *names = d->grouped ? ng : x->ndim >= 4 ? n4 : n3;
  int r = x->ndim, p[STRATA_MAX_DIMS];
  if (r < 1) return;
  for (int i = 0; i < r - 1; i++)
    p[i] = add_pdim(d, names[i], x->shape[i], 1);
  p[r - 1] = add_pdim(d, r >= 4 ? "t" : "h", x->shape[r - 1], last_shardable);
  for (int k = 0; k < d->n_slots; k++) {
    const strata_tensor_t *t = &g->tensors[d->tensor[k]];
    int off = r - t->ndim;
    for (int j = 0; off >= 0 && j < t->ndim; j++)
      if (t->shape[j] == x->shape[off + j])
        d->map[k][j] = (signed char)p[off + j];
  }
  /* swiglu halves the last dim: a split of [gate | up] is Megatron-LM's
   * interleaved fc1 shard, each rank's half of its own gate and up */
  if (op->kind == STRATA_OP_SWIGLU && op->n_out == 1 &&
      g->tensors[op->out[0]].ndim == r)
    d->map[op->n_in][r - 1] = (signed char)p[r - 1];
}

static void dims_heads(const strata_graph_t *g, const strata_op_t *op,
                       st__opdims_t *d) {
  if (op->kind == STRATA_OP_SPLIT_HEADS) {
    const strata_tensor_t *x = &g->tensors[op->in[0]];
    int b = add_pdim(d, "b", x->shape[0], 1);
    int s = add_pdim(d, "s", x->shape[1], 1);
    int h = add_pdim(d, "heads", g->tensors[op->out[0]].shape[1], 1);
    d->map[0][0] = (signed char)b;
    d->map[0][1] = (signed char)s;
    d->map[0][2] = (signed char)h;
    for (int i = 0; i < op->n_out; i++) {
      d->map[1 + i][0] = (signed char)b;
      d->map[1 + i][1] = (signed char)h;
      d->map[1 + i][2] = (signed char)s;
    }
  } else { /* merge_heads: [b,n,s,d] -> [b,s,n*d] */
    const strata_tensor_t *x = &g->tensors[op->in[0]];
    int b = add_pdim(d, "b", x->shape[0], 1);
    int h = add_pdim(d, "heads", x->shape[1], 1);
    int s = add_pdim(d, "s", x->shape[2], 1);
    d->map[0][0] = d->map[1][0] = (signed char)b;
    d->map[0][1] = d->map[1][2] = (signed char)h;
    d->map[0][2] = d->map[1][1] = (signed char)s;
  }
}

static void dims_transpose(const strata_graph_t *g, const strata_op_t *op,
                           st__opdims_t *d) {
  const strata_tensor_t *x = &g->tensors[op->in[0]];
  int r = x->ndim;
  int slots[2] = {0, 1};
  leading(g, d, r - 2, slots, 2);
  int m = add_pdim(d, "m", x->shape[r - 2], 1);
  int n = add_pdim(d, "n", x->shape[r - 1], 1);
  d->map[0][r - 2] = d->map[1][r - 1] = (signed char)m;
  d->map[0][r - 1] = d->map[1][r - 2] = (signed char)n;
}

/* The dims both sides share in front line up; then, where one side's next
 * dim is an outer factor of the other's ([b,s,h] -> [b,s,heads,d] and
 * back), splitting that outer factor splits both the same way. */
static void dims_reshape(const strata_graph_t *g, const strata_op_t *op,
                         st__opdims_t *d) {
  const strata_tensor_t *x = &g->tensors[op->in[0]];
  const strata_tensor_t *y = &g->tensors[op->out[0]];
  int n = 0;
  while (n < x->ndim && n < y->ndim && x->shape[n] == y->shape[n])
    n++;
  if (n == x->ndim || n == y->ndim) n--; /* keep the reshaped tail whole */
  int slots[2] = {0, 1};
  if (n > 0) leading(g, d, n, slots, 2);
  if (n < 0 || n >= x->ndim || n >= y->ndim) return;
  int64_t a = x->shape[n], c = y->shape[n];
  int64_t outer = a < c ? a : c, inner = a < c ? c : a;
  if (outer < 2 || outer == inner || inner % outer) return;
  int p = add_pdim(d, "outer", outer, 1);
  d->map[0][n] = d->map[1][n] = (signed char)p;
}

static void dims_flash(const strata_graph_t *g, const strata_op_t *op,
                       st__opdims_t *d) {
  const strata_tensor_t *q = &g->tensors[op->in[0]];
  int o = op->n_in;
  int b = add_pdim(d, "b", q->shape[0], 1);
  int h = add_pdim(d, "heads", q->shape[1], 1);
  int s = add_pdim(d, "s", q->shape[2], 1);
  for (int i = 0; i < 3; i++) {
    d->map[i][0] = (signed char)b;
    d->map[i][1] = (signed char)h;
  }
  d->map[o][0] = (signed char)b;
  d->map[o][1] = (signed char)h;
  d->map[0][2] = d->map[o][2] = (signed char)s; /* query split, K/V whole */
  if (op->n_in > 3) { /* bias [h,s,t] or [1|b,h,s,t] */
    const strata_tensor_t *bias = &g->tensors[op->in[3]];
    int n = bias->ndim;
    if (n == 4 && bias->shape[0] == q->shape[0] && q->shape[0] > 1)
      d->map[3][0] = (signed char)b;
    d->map[3][n - 3] = (signed char)h;
    d->map[3][n - 2] = (signed char)s;
  }
  d->heavy = 1;
  /* the modifier: K/V split too, passed around the ring (context
   * parallelism's p2p variant) */
  d->sp_pdim = s;
  d->sp_mask = (1u << 1) | (1u << 2);
  d->sp_dim = 2;
}

/* split, slice, concat: every dim lines up in every slot and may be
 * split.  A slice keeps its axis whole; split and concat may split it too,
 * each part on its own (as split_heads splits the heads of a fused QKV:
 * the producer lays the parts out shard by shard, as Megatron-LM's fused
 * QKV weight does). */
static void dims_along_axis(const strata_graph_t *g, const strata_op_t *op,
                            st__opdims_t *d) {
  static const char *n3[] = {"b", "s", "h", "l3", "l4", "l5"};
  static const char *n4[] = {"b", "heads", "s", "t", "l4", "l5"};
  const strata_tensor_t *x = &g->tensors[op->in[0]];
  const char *const *names = x->ndim >= 4 ? n4 : n3;
  for (int i = 0; i < x->ndim; i++) {
    if (i == op->axis && op->kind == STRATA_OP_SLICE) continue;
    int p = add_pdim(d, i == op->axis ? "parts" : names[i], x->shape[i], 1);
    for (int k = 0; k < d->n_slots; k++)
      d->map[k][i] = (signed char)p;
  }
}

/* Input dim i is output dim j where perm[j] == i. */
static void dims_permute(const strata_graph_t *g, const strata_op_t *op,
                         st__opdims_t *d) {
  static const char *names[] = {"d0", "d1", "d2", "d3", "d4", "d5"};
  const strata_tensor_t *x = &g->tensors[op->in[0]];
  for (int i = 0; i < x->ndim; i++) {
    int p = add_pdim(d, i == 0 ? "b" : names[i], x->shape[i], 1);
    d->map[0][i] = (signed char)p;
    for (int j = 0; j < x->ndim; j++)
      if (op->perm[j] == i) d->map[1][j] = (signed char)p;
  }
}

/* Index dims carry over to the output; the table's rows are a
 * contraction (a split vocabulary gives partial sums, as embedding's). */
static void dims_gather(const strata_graph_t *g, const strata_op_t *op,
                        st__opdims_t *d) {
  static const char *ni[] = {"b", "s", "i2", "i3", "i4", "i5"};
  static const char *nt[] = {"vocab", "h", "t2", "t3", "t4", "t5"};
  const strata_tensor_t *idx = &g->tensors[op->in[0]];
  const strata_tensor_t *tab = &g->tensors[op->in[1]];
  for (int i = 0; i < idx->ndim; i++) {
    int p = add_pdim(d, ni[i], idx->shape[i], 1);
    d->map[0][i] = d->map[2][i] = (signed char)p;
  }
  int v = add_pdim(d, nt[0], tab->shape[0], 1);
  d->map[1][0] = (signed char)v;
  for (int i = 1; i < tab->ndim; i++) {
    int p = add_pdim(d, nt[i], tab->shape[i], 1);
    d->map[1][i] = d->map[2][idx->ndim + i - 1] = (signed char)p;
  }
}

/* A conv as a matmul: batch, output channels (n) and input channels
 * (contracted: k); the patches stay whole. */
static void dims_patch(const strata_graph_t *g, const strata_op_t *op,
                       st__opdims_t *d) {
  const strata_tensor_t *x = &g->tensors[op->in[0]];
  const strata_tensor_t *w = &g->tensors[op->in[1]];
  int y = op->n_in;
  int b = add_pdim(d, "b", x->shape[0], 1);
  int n = add_pdim(d, "n", w->shape[0], 1);
  int k = add_pdim(d, "k", x->shape[1], 1);
  d->map[0][0] = d->map[y][0] = (signed char)b;
  d->map[1][0] = d->map[y][2] = (signed char)n;
  d->map[0][1] = d->map[1][1] = (signed char)k;
  if (op->n_in > 2) d->map[2][0] = (signed char)n;
}

/* What is not understood is split only along a first dim that every
 * activation and input shares (the batch of the ops importers leave
 * generic: elementwise and per-token work), else not at all. */
static void dims_generic(const strata_graph_t *g, const strata_op_t *op,
                         st__opdims_t *d) {
  const strata_tensor_t *y = &g->tensors[op->out[0]];
  if (y->ndim < 2) return;
  for (int i = 0; i < d->n_slots; i++) {
    const strata_tensor_t *t = &g->tensors[d->tensor[i]];
    if (t->kind == STRATA_TENSOR_PARAM) continue;
    if (t->ndim < 2 || t->shape[0] != y->shape[0]) return;
  }
  int b = add_pdim(d, "b", y->shape[0], 1);
  for (int i = 0; i < d->n_slots; i++)
    if (g->tensors[d->tensor[i]].kind != STRATA_TENSOR_PARAM)
      d->map[i][0] = (signed char)b;
}

static void dims_xent(const strata_graph_t *g, const strata_op_t *op,
                      st__opdims_t *d) {
  const strata_tensor_t *l = &g->tensors[op->in[0]];
  int b = add_pdim(d, "b", l->shape[0], 1);
  int s = add_pdim(d, "s", l->shape[1], 1);
  int v = add_pdim(d, "vocab", l->shape[2], 1);
  d->map[0][0] = d->map[1][0] = (signed char)b;
  d->map[0][1] = d->map[1][1] = (signed char)s;
  d->map[0][2] = (signed char)v;
}

static void dims_elementwise_0(const strata_graph_t *g, const strata_op_t *op,
                               st__opdims_t *d) {
  dims_elementwise(g, op, d, 0);
}
static void dims_elementwise_1(const strata_graph_t *g, const strata_op_t *op,
                               st__opdims_t *d) {
  dims_elementwise(g, op, d, 1);
}

typedef void (*dims_fn_t)(const strata_graph_t *, const strata_op_t *,
                          st__opdims_t *);

/* Each kind's dimensions (a kind without a row has no cost model). */
static const dims_fn_t dims_of[STRATA_OP_COUNT] = {
    [STRATA_OP_LINEAR] = dims_linear,
    [STRATA_OP_MOE_ROUTER] = dims_linear,
    [STRATA_OP_GROUPED_LINEAR] = dims_grouped,
    [STRATA_OP_MOE_DISPATCH] = dims_route,
    [STRATA_OP_MOE_COMBINE] = dims_route,
    [STRATA_OP_MLA_KV] = dims_mla_kv,
    [STRATA_OP_MATMUL] = dims_matmul,
    [STRATA_OP_EMBEDDING] = dims_embedding,
    [STRATA_OP_LAYERNORM] = dims_elementwise_0,
    [STRATA_OP_RMSNORM] = dims_elementwise_0,
    [STRATA_OP_SOFTMAX] = dims_elementwise_0,
    [STRATA_OP_ROPE] = dims_elementwise_0,
    [STRATA_OP_GELU] = dims_elementwise_1,
    [STRATA_OP_SILU] = dims_elementwise_1,
    [STRATA_OP_SIGMOID] = dims_elementwise_1,
    [STRATA_OP_RELU] = dims_elementwise_1,
    [STRATA_OP_SCALE] = dims_elementwise_1,
    [STRATA_OP_SWIGLU] = dims_elementwise_1,
    [STRATA_OP_MUL] = dims_elementwise_1,
    [STRATA_OP_DROPOUT] = dims_elementwise_1,
    [STRATA_OP_ADD] = dims_elementwise_1,
    [STRATA_OP_SPLIT_HEADS] = dims_heads,
    [STRATA_OP_MERGE_HEADS] = dims_heads,
    [STRATA_OP_TRANSPOSE] = dims_transpose,
    [STRATA_OP_RESHAPE] = dims_reshape,
    [STRATA_OP_FLASH_ATTENTION] = dims_flash,
    [STRATA_OP_CROSS_ATTENTION] = dims_flash,
    [STRATA_OP_CROSS_ENTROPY] = dims_xent,
    [STRATA_OP_SPLIT] = dims_along_axis,
    [STRATA_OP_SLICE] = dims_along_axis,
    [STRATA_OP_CONCAT] = dims_along_axis,
    [STRATA_OP_PERMUTE] = dims_permute,
    [STRATA_OP_GATHER] = dims_gather,
    [STRATA_OP_PATCH_EMBED] = dims_patch,
    [STRATA_OP_GENERIC] = dims_generic,
};

int st__opdims(const strata_graph_t *g, const strata_op_t *op,
               st__opdims_t *d) {
  init_dims(g, op, d);
  if ((unsigned)op->kind >= STRATA_OP_COUNT || !dims_of[op->kind])
    return strata_error(STRATA_EBADINPUT,
                        "op '%s': kind '%s' has no cost "
                        "model",
                        op->name, strata_op_kind_name(op->kind));
  dims_of[op->kind](g, op, d);
  return 0;
}

/* Can pdim p be split `ways` ways in every tensor it indexes? */
static int divisible(const strata_graph_t *g, const st__opdims_t *d, int p,
                     int ways) {
  (void)g;
  return d->size[p] % ways == 0;
}

static int slot_divisible(const strata_graph_t *g, const st__opdims_t *d, int p,
                          int ways) {
  /* Megatron-LM pads the vocabulary to a multiple of 128 x tp
   * (--make-vocab-size-divisible-by): a split vocabulary need not divide */
  if (!strcmp(d->name[p], "vocab")) return d->size[p] >= ways;
  for (int i = 0; i < d->n_slots; i++) {
    const strata_tensor_t *t = &g->tensors[d->tensor[i]];
    for (int k = 0; k < t->ndim; k++)
      if (d->map[i][k] == p && t->shape[k] % ways != 0) return 0;
  }
  return divisible(g, d, p, ways);
}

/* The modifier on axis a: for its pdim only, and every slot it shards
 * must divide by the axes sharding that dim (this one and any other axis
 * whose pdim already maps it). */
static int sp_divisible(const strata_graph_t *g, const st__opdims_t *d,
                        const strata_mesh_t *m, const st__strat_t *s, int a) {
  if (s->axis[a] != d->sp_pdim || d->sp_pdim < 0) return 0;
  for (int i = 0; i < d->n_slots; i++) {
    if (!(d->sp_mask & (1u << i))) continue;
    const strata_tensor_t *t = &g->tensors[d->tensor[i]];
    if (d->sp_dim >= t->ndim) return 0;
    int ways = 1;
    for (int b = 0; b < m->ndim; b++) {
      int q = s->axis[b];
      if (q != ST__REP && (s->sp[b] || d->map[i][d->sp_dim] == q))
        ways *= m->shape[b];
    }
    if (t->shape[d->sp_dim] % ways != 0) return 0;
  }
  return 1;
}

/* The graph is needed for slot shapes; kept in a file-scope pointer only
 * for the duration of one enumeration call on this thread. */
static _Thread_local const strata_graph_t *enum_graph;

static int valid(const st__opdims_t *d, const strata_mesh_t *m,
                 const st__strat_t *s) {
  for (int a = 0; a < m->ndim; a++) {
    int p = s->axis[a];
    if (m->shape[a] <= 1 && (p != ST__REP || s->sp[a])) return 0;
    if (p == ST__REP) {
      if (s->sp[a] || (d->heavy && m->shape[a] > 1)) return 0;
      continue;
    }
    if (!d->shardable[p]) return 0;
    int ways = 1;
    for (int b = 0; b < m->ndim; b++)
      if (s->axis[b] == p) ways *= m->shape[b];
    if (!slot_divisible(enum_graph, d, p, ways)) return 0;
    if (s->sp[a] && !sp_divisible(enum_graph, d, m, s, a)) return 0;
  }
  return 1;
}

int st__strategies_g(const strata_graph_t *g, const st__opdims_t *d,
                     const strata_mesh_t *m, st__strat_t **out, int *n) {
  int choices = d->n_pdims + 2; /* REP, each pdim, n+sp */
  int total = 1;
  for (int a = 0; a < m->ndim; a++)
    total *= choices;
  st__strat_t *v = strata_calloc((size_t)total, sizeof *v);
  if (!v) return strata_error(STRATA_ENOMEM, "out of memory");
  enum_graph = g;
  int k = 0;
  for (int code = 0; code < total; code++) {
    st__strat_t s;
    memset(&s, 0, sizeof s);
    for (int a = 0, c = code; a < STRATA_MESH_MAX_DIMS; a++) {
      int ch = a < m->ndim ? c % choices : 0;
      c /= choices;
      s.axis[a] = (signed char)(ch == 0            ? ST__REP
                                : ch <= d->n_pdims ? ch - 1
                                                   : d->sp_pdim);
      s.sp[a] = (unsigned char)(ch == d->n_pdims + 1);
      if (s.sp[a] && d->sp_pdim < 0) s.axis[a] = 127; /* invalid marker */
    }
    int bad = 0;
    for (int a = 0; a < m->ndim; a++)
      if (s.axis[a] == 127) bad = 1;
    if (!bad && valid(d, m, &s)) v[k++] = s;
  }
  enum_graph = NULL;
  *out = v;
  *n = k;
  return 0;
}

void st__placement(const st__opdims_t *d, const strata_mesh_t *m,
                   const st__strat_t *s, int slot, st__place_t *p) {
  memset(p, 0, sizeof *p);
  for (int a = 0; a < m->ndim; a++) {
    int pd = s->axis[a];
    p->kind[a] = ST__PL_R;
    if (pd == ST__REP) continue;
    if (s->sp[a] && (d->sp_mask & (1u << slot))) {
      p->kind[a] = ST__PL_S;
      p->dim[a] = (signed char)d->sp_dim;
      continue;
    }
    int found = -1;
    for (int k = 0; k < STRATA_MAX_DIMS; k++)
      if (d->map[slot][k] == pd) found = k;
    if (found >= 0) {
      p->kind[a] = ST__PL_S;
      p->dim[a] = (signed char)found;
    } else if (slot >= d->n_in) {
      p->kind[a] = ST__PL_P;
    }
  }
}

void st__grad_placement(const st__opdims_t *d, const strata_mesh_t *m,
                        const st__strat_t *s, int slot, st__place_t *p) {
  st__placement(d, m, s, slot, p);
  for (int a = 0; a < m->ndim; a++)
    if (p->kind[a] == ST__PL_R && s->axis[a] != ST__REP)
      p->kind[a] = ST__PL_P; /* each device holds part of the gradient sum */
}

int st__shards(const strata_mesh_t *m, const st__place_t *p) {
  int n = 1;
  for (int a = 0; a < m->ndim; a++)
    if (p->kind[a] == ST__PL_S) n *= m->shape[a];
  return n;
}

int st__work_split(const strata_mesh_t *m, const st__strat_t *s) {
  int n = 1;
  for (int a = 0; a < m->ndim; a++)
    if (s->axis[a] != ST__REP) n *= m->shape[a];
  return n;
}

static const char *axis_role(const st__opdims_t *d, const strata_op_t *op,
                             const st__strat_t *s, int a) {
  int p = s->axis[a];
  if (p == ST__REP) return "rep";
  if (op->kind == STRATA_OP_LINEAR || op->kind == STRATA_OP_GROUPED_LINEAR ||
      op->kind == STRATA_OP_MOE_ROUTER) {
    if (p == d->pdim_n) return s->sp[a] ? "row+sp" : "row";
    if (!strcmp(d->name[p], "k")) return "col";
  }
  if (s->sp[a] && op->kind == STRATA_OP_FLASH_ATTENTION) return "ring";
  if (s->sp[a]) return "ep";
  return d->name[p];
}

/* Append t to buf (size bytes, *off of them taken) as snprintf would:
 * what fits and a NUL, *off counting all of t.  Every result of every
 * probe is named: no format string to parse for each. */
static void put(char *buf, size_t size, size_t *off, const char *t) {
  size_t n = strlen(t);
  if (*off < size) {
    size_t k = size - *off - 1 < n ? size - *off - 1 : n;
    memcpy(buf + *off, t, k);
    buf[*off + k] = '\0';
  }
  *off += n;
}

void st__strat_name(const st__opdims_t *d, const strata_op_t *op,
                    const strata_mesh_t *m, const st__strat_t *s, char *buf,
                    size_t size) {
  size_t off = 0;
  buf[0] = '\0';
  for (int a = 0; a < m->ndim && off < size; a++) {
    if (a) put(buf, size, &off, " x ");
    put(buf, size, &off, axis_role(d, op, s, a));
  }
}

void st__place_name(const strata_mesh_t *m, const st__place_t *p, char *buf,
                    size_t size) {
  size_t off = 0;
  put(buf, size, &off, "[");
  for (int a = 0; a < m->ndim && off < size; a++) {
    if (a) put(buf, size, &off, ", ");
    if (p->kind[a] == ST__PL_S) {
      char t[24], *e = t + sizeof t - 1;
      unsigned x =
          p->dim[a] < 0 ? 0u - (unsigned)p->dim[a] : (unsigned)p->dim[a];
      *e = '\0';
      *--e = ')';
      do
        *--e = (char)('0' + x % 10);
      while (x /= 10);
      if (p->dim[a] < 0) *--e = '-';
      *--e = '(';
      *--e = 'S';
      put(buf, size, &off, e);
    } else {
      put(buf, size, &off, p->kind[a] == ST__PL_P ? "P" : "R");
    }
  }
  if (off < size) put(buf, size, &off, "]");
}
