/*
 * graph.c - the graph IR: creation, the builders that generators and the
 * loader share, lookups, layers and whole-model totals.  Validation lives
 * in validate.c.
 *
 * The arrays grow by doubling without a capacity field: an array of n
 * items has room for max(8, the next power of two >= n), so a builder
 * reallocates exactly when n is 0 or a power of two >= 8.  That keeps the
 * public struct plain data.  A builder that fails leaves the graph as it
 * was.
 */
#include <string.h>

#include "traces/traces_int.h"

strata_graph_t *strata_graph_create(const char *name) {
  strata_graph_t *g = strata_calloc(1, sizeof *g);
  if (!g) goto oom;
  g->name = strata_strdup(name ? name : "");
  if (!g->name) goto oom;
  return g;
oom:
  strata_free(g);
  strata_error(STRATA_ENOMEM, "out of memory creating graph");
  return NULL;
}

void strata_graph_destroy(strata_graph_t *g) {
  if (!g) return;
  for (int i = 0; i < g->n_tensors; i++)
    strata_free(g->tensors[i].name);
  for (int i = 0; i < g->n_ops; i++)
    strata_free(g->ops[i].name);
  for (int i = 0; i < g->n_blocks; i++)
    strata_free(g->blocks[i].name);
  strata_free(g->tensors);
  strata_free(g->ops);
  strata_free(g->blocks);
  strata_free(g->name);
  st__name_index_free(g);
  strata_free(g);
}

/* Make room for item n (0-based) of an array of `size`-byte items. */
static int grow(void **arr, int n, size_t size) {
  if (n != 0 && (n < 8 || (n & (n - 1)))) return 0;
  if (n > (1 << 28)) return strata_error(STRATA_EBADINPUT, "graph too large");
  void *p = strata_realloc(*arr, (size_t)(n ? 2 * n : 8) * size);
  if (!p) return strata_error(STRATA_ENOMEM, "out of memory growing graph");
  *arr = p;
  return 0;
}

/* Sizes stay far from int64 overflow: 2^48 elements of 8 bytes, times a
 * repeat count, still fit. */
static int too_big(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] > ((int64_t)1 << 48) / n) return 1;
    n *= shape[i];
  }
  return 0;
}

static int check_name(const char *what, const char *name) {
  if (name && name[0]) return 0;
  return strata_error(STRATA_EBADINPUT, "a %s needs a non-empty name", what);
}

int strata_graph_add_tensor(strata_graph_t *g, const char *name, int ndim,
                            const int64_t *shape, strata_dtype_t dtype,
                            strata_tensor_kind_t kind) {
  int rc = check_name("tensor", name);
  if (rc) return rc;
  if (strata_graph_find_tensor(g, name) >= 0)
    return strata_error(STRATA_EBADINPUT, "duplicate tensor id '%s'", name);
  if (ndim < 0 || ndim > STRATA_MAX_DIMS)
    return strata_error(STRATA_EBADINPUT,
                        "tensor '%s': %d dims (at most %d are supported)", name,
                        ndim, STRATA_MAX_DIMS);
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 1)
      return strata_error(STRATA_EBADINPUT,
                          "tensor '%s': dim %d is %lld (must be >= 1)", name, i,
                          (long long)shape[i]);
  if (too_big(ndim, shape))
    return strata_error(STRATA_EBADINPUT,
                        "tensor '%s': more than 2^48 elements", name);
  if ((unsigned)dtype >= STRATA_DTYPE_COUNT ||
      (unsigned)kind > STRATA_TENSOR_ACTIVATION)
    return strata_error(STRATA_EBADINPUT, "tensor '%s': bad dtype or kind",
                        name);
  if ((rc = grow((void **)&g->tensors, g->n_tensors, sizeof *g->tensors)))
    return rc;
  strata_tensor_t *t = &g->tensors[g->n_tensors];
  memset(t, 0, sizeof *t);
  if (!(t->name = strata_strdup(name)))
    return strata_error(STRATA_ENOMEM, "out of memory adding tensor");
  if ((rc = st__name_add(g, ST__NAME_TENSOR, g->n_tensors))) {
    strata_free(t->name);
    return rc;
  }
  t->ndim = ndim;
  for (int i = 0; i < ndim; i++)
    t->shape[i] = shape[i];
  t->dtype = dtype;
  t->kind = kind;
  t->producer = -1;
  t->block = -1;
  return g->n_tensors++;
}

static int check_refs(const strata_graph_t *g, const char *name, int n,
                      const int *idx, const char *what) {
  for (int i = 0; i < n; i++)
    if (idx[i] < 0 || idx[i] >= g->n_tensors)
      return strata_error(STRATA_EBADINPUT,
                          "op '%s' %s %d: no tensor with index %d", name, what,
                          i, idx[i]);
  return 0;
}

int strata_graph_add_op(strata_graph_t *g, const char *name,
                        strata_op_kind_t kind, int n_in, const int *in,
                        int n_out, const int *out) {
  int rc = check_name("op", name);
  if (rc) return rc;
  if (strata_graph_find_op(g, name) >= 0)
    return strata_error(STRATA_EBADINPUT, "duplicate op id '%s'", name);
  if ((unsigned)kind >= STRATA_OP_COUNT)
    return strata_error(STRATA_EBADINPUT, "op '%s': bad kind %d", name,
                        (int)kind);
  if (n_in < 0 || n_in > STRATA_MAX_OP_INPUTS || n_out < 1 ||
      n_out > STRATA_MAX_OP_OUTPUTS)
    return strata_error(STRATA_EBADINPUT,
                        "op '%s': %d inputs and %d outputs (0-%d inputs and "
                        "1-%d outputs are supported)",
                        name, n_in, n_out, STRATA_MAX_OP_INPUTS,
                        STRATA_MAX_OP_OUTPUTS);
  if ((rc = check_refs(g, name, n_in, in, "input")) ||
      (rc = check_refs(g, name, n_out, out, "output")))
    return rc;
  if ((rc = grow((void **)&g->ops, g->n_ops, sizeof *g->ops))) return rc;
  strata_op_t *op = &g->ops[g->n_ops];
  memset(op, 0, sizeof *op);
  if (!(op->name = strata_strdup(name)))
    return strata_error(STRATA_ENOMEM, "out of memory adding op");
  if ((rc = st__name_add(g, ST__NAME_OP, g->n_ops))) {
    strata_free(op->name);
    return rc;
  }
  op->kind = kind;
  op->n_in = n_in;
  op->n_out = n_out;
  if (n_in) memcpy(op->in, in, (size_t)n_in * sizeof *in);
  memcpy(op->out, out, (size_t)n_out * sizeof *out);
  op->layer = op->block = -1;
  if (kind == STRATA_OP_GENERIC) op->flops = STRATA_FLOPS_UNSET;
  return g->n_ops++;
}

int strata_graph_add_block(strata_graph_t *g, const char *name, int first_op,
                           int n_ops, int repeat, int input, int output) {
  int rc = check_name("block", name);
  if (rc) return rc;
  if (st__name_find(g, ST__NAME_BLOCK, name) >= 0)
    return strata_error(STRATA_EBADINPUT, "duplicate block id '%s'", name);
  if (first_op < 0 || n_ops < 1 || first_op > g->n_ops - n_ops)
    return strata_error(STRATA_EBADINPUT,
                        "block '%s': ops [%d, %d) are not a non-empty range of "
                        "the %d ops",
                        name, first_op, first_op + n_ops, g->n_ops);
  if (repeat < 1 || repeat > STRATA_MAX_REPEAT)
    return strata_error(STRATA_EBADINPUT,
                        "block '%s': repeat %d (must be 1 to %d)", name, repeat,
                        STRATA_MAX_REPEAT);
  if (input < 0 || input >= g->n_tensors || output < 0 ||
      output >= g->n_tensors)
    return strata_error(STRATA_EBADINPUT,
                        "block '%s': input or output is not a tensor", name);
  if ((rc = grow((void **)&g->blocks, g->n_blocks, sizeof *g->blocks)))
    return rc;
  strata_block_t *b = &g->blocks[g->n_blocks];
  memset(b, 0, sizeof *b);
  if (!(b->name = strata_strdup(name)))
    return strata_error(STRATA_ENOMEM, "out of memory adding block");
  if ((rc = st__name_add(g, ST__NAME_BLOCK, g->n_blocks))) {
    strata_free(b->name);
    return rc;
  }
  b->first_op = first_op;
  b->n_ops = n_ops;
  b->repeat = repeat;
  b->input = input;
  b->output = output;
  return g->n_blocks++;
}

int strata_graph_find_tensor(const strata_graph_t *g, const char *name) {
  return st__name_find(g, ST__NAME_TENSOR, name);
}

int strata_graph_find_op(const strata_graph_t *g, const char *name) {
  return st__name_find(g, ST__NAME_OP, name);
}

int strata_graph_layers(const strata_graph_t *g) {
  int n = 0;
  for (int b = 0; b < g->n_blocks; b++)
    n += g->blocks[b].repeat;
  return n;
}

int strata_graph_layer_block(const strata_graph_t *g, int layer) {
  for (int b = 0, l = 0; b < g->n_blocks; l += g->blocks[b++].repeat)
    if (layer >= l && layer < l + g->blocks[b].repeat) return b;
  return -1;
}

/* ---- saved activations ---- */

/* Totals saturate at INT64_MAX rather than overflow: a hostile trace gets
 * absurd figures, never undefined behaviour. */
static int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

static int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

/* Has an op in [first, op_i] (slots before `slot` of op_i itself) already
 * saved a tensor with storage root `root`? */
static int saved_before(const strata_graph_t *g, int first, int op_i, int slot,
                        int root) {
  for (int j = first; j <= op_i; j++) {
    const strata_op_t *op = &g->ops[j];
    unsigned s = strata_op_saves(g, op);
    for (int k = 0; k < op->n_in + op->n_out; k++) {
      if (j == op_i && k >= slot) return 0;
      int is_in = k < op->n_in;
      unsigned bit = is_in ? STRATA_SAVE_IN(k) : STRATA_SAVE_OUT(k - op->n_in);
      int t = is_in ? op->in[k] : op->out[k - op->n_in];
      if ((s & bit) && st__storage_root(g, t) == root) return 1;
    }
  }
  return 0;
}

int64_t strata_graph_saved_bytes(const strata_graph_t *g, int first_op,
                                 int n_ops) {
  int64_t n = 0;
  for (int i = first_op; i < first_op + n_ops && i < g->n_ops; i++) {
    const strata_op_t *op = &g->ops[i];
    unsigned s = strata_op_saves(g, op);
    for (int k = 0; k < op->n_in + op->n_out; k++) {
      int is_in = k < op->n_in;
      unsigned bit = is_in ? STRATA_SAVE_IN(k) : STRATA_SAVE_OUT(k - op->n_in);
      int t = is_in ? op->in[k] : op->out[k - op->n_in];
      if (!(s & bit) || g->tensors[t].kind != STRATA_TENSOR_ACTIVATION)
        continue;
      if (!saved_before(g, first_op, i, k, st__storage_root(g, t)))
        n = sat_add(n, sat_mul(strata_tensor_bytes(&g->tensors[t]),
                               is_in ? strata_op_saved_scale(g, op, k) : 1));
    }
    n = sat_add(n, strata_op_extra_saved(g, op));
  }
  return n;
}

/* ---- totals ---- */

static int64_t tensor_copies(const strata_graph_t *g,
                             const strata_tensor_t *t) {
  return t->block >= 0 ? g->blocks[t->block].repeat : 1;
}

/* Who reads each parameter: bit 0 an embedding, bit 1 a grouped_linear,
 * bit 2 any other op. */
static unsigned char *param_users(const strata_graph_t *g) {
  unsigned char *u = strata_calloc((size_t)g->n_tensors + 1, 1);
  for (int i = 0; u && i < g->n_ops; i++) {
    const strata_op_t *op = &g->ops[i];
    for (int k = 0; k < op->n_in; k++)
      u[op->in[k]] |= op->kind == STRATA_OP_EMBEDDING        ? 1
                      : op->kind == STRATA_OP_GROUPED_LINEAR ? 2
                                                             : 4;
  }
  return u;
}

static void active_params(const strata_graph_t *g, strata_graph_stats_t *st) {
  strata_moe_info_t m;
  unsigned char *u = param_users(g);
  if (!u) return; /* out of memory: the active figures stay 0 */
  strata_graph_moe(g, &m);
  for (int i = 0; i < g->n_tensors; i++) {
    const strata_tensor_t *t = &g->tensors[i];
    if (t->kind != STRATA_TENSOR_PARAM) continue;
    int64_t n = sat_mul(tensor_copies(g, t), strata_tensor_numel(t));
    if (u[i] == 1) {
      st->embedding_parameters = sat_add(st->embedding_parameters, n);
    } else if (u[i] == 2 && m.experts > 0) {
      st->active_parameters =
          sat_add(st->active_parameters,
                  (int64_t)((double)n * m.topk / m.experts + 0.5));
    } else {
      st->active_parameters = sat_add(st->active_parameters, n);
    }
  }
  strata_free(u);
}

void strata_graph_moe(const strata_graph_t *g, strata_moe_info_t *m) {
  int grouped = 0;
  memset(m, 0, sizeof *m);
  m->first_moe = -1;
  for (int i = 0; i < g->n_ops; i++) {
    const strata_op_t *op = &g->ops[i];
    int64_t c = op->block >= 0 ? g->blocks[op->block].repeat : 1;
    if (op->kind == STRATA_OP_MOE_ROUTER) {
      if (!m->experts) {
        m->experts = (int)g->tensors[op->in[1]].shape[0];
        m->topk = op->topk;
        m->first_moe = op->layer;
      }
      if (op->layer >= 0) m->moe_layers += (int)c; /* not an MTP module's */
    } else if (op->kind == STRATA_OP_MOE_DISPATCH && !m->capacity) {
      m->capacity = op->capacity;
    } else if (op->kind == STRATA_OP_GROUPED_LINEAR) {
      const strata_tensor_t *w = &g->tensors[op->in[1]];
      if (grouped == 0) m->glu = (int)w->shape[1]; /* fc1's width, for now */
      if (grouped == 1) {
        m->moe_ffn = (int)w->shape[2];
        m->glu = m->glu == 2 * m->moe_ffn;
      }
      grouped++;
      for (int k = 1; k < op->n_in; k++)
        m->expert_parameters =
            sat_add(m->expert_parameters,
                    sat_mul(c, strata_tensor_numel(&g->tensors[op->in[k]])));
    }
  }
  if (grouped < 2) m->glu = 0;
}

void strata_graph_stats(const strata_graph_t *g, strata_graph_stats_t *st) {
  memset(st, 0, sizeof *st);
  active_params(g, st);
  st->layers = strata_graph_layers(g);
  for (int i = 0; i < g->n_tensors; i++) {
    const strata_tensor_t *t = &g->tensors[i];
    int64_t c = tensor_copies(g, t);
    st->tensors += c;
    if (t->kind != STRATA_TENSOR_PARAM) continue;
    st->parameters =
        sat_add(st->parameters, sat_mul(c, strata_tensor_numel(t)));
    st->weight_bytes =
        sat_add(st->weight_bytes, sat_mul(c, strata_tensor_bytes(t)));
  }
  for (int i = 0; i < g->n_ops; i++) {
    const strata_op_t *op = &g->ops[i];
    int64_t c = op->block >= 0 ? g->blocks[op->block].repeat : 1;
    st->ops += c;
    st->flops_per_microbatch += (double)c * strata_op_flops(g, op);
    st->flops_unmasked_per_microbatch +=
        (double)c * strata_op_flops_unmasked(g, op);
  }
  int first = g->n_blocks ? g->blocks[0].first_op : g->n_ops;
  int end = first;
  for (int b = 0; b < g->n_blocks; b++) {
    const strata_block_t *bl = &g->blocks[b];
    st->activation_bytes =
        sat_add(st->activation_bytes,
                sat_mul(bl->repeat,
                        strata_graph_saved_bytes(g, bl->first_op, bl->n_ops)));
    end = bl->first_op + bl->n_ops;
  }
  st->activation_bytes =
      sat_add(st->activation_bytes, strata_graph_saved_bytes(g, 0, first));
  st->activation_bytes = sat_add(
      st->activation_bytes, strata_graph_saved_bytes(g, end, g->n_ops - end));
}
