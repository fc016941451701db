/*
 * onnx_map.c - ONNX nodes as Strata ops, in the file's (topological)
 * order, each op with the shapes the file gives its values.
 *
 * A node maps on its own (MatMul of two activations -> matmul, Softmax ->
 * softmax, Transpose -> transpose or permute, Reshape -> reshape, ...) or
 * as the start of a pattern that PyTorch's exporter writes for one
 * module: MatMul with a weight (and the Add of its bias) -> linear, the
 * decomposed LayerNorm (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div,
 * Mul, Add) -> layernorm, x * (erf(x / sqrt 2) + 1) * 0.5 -> gelu.  The
 * pattern's op is made where its first node stands (its inputs are ready
 * there) and the other nodes are marked done.  Whatever the rules below
 * do not name, and any op whose shapes break its kind's rule, becomes a
 * generic op with its real inputs and outputs, so nothing is dropped.
 *
 * Values split into tensors and constants.  Constants are everything a
 * training step does not compute: initializers not read as weights,
 * Constant nodes, Shape (the shapes are fixed), and any node reading only
 * constants, which is folded away.  Which initializers are parameters is
 * the rule of docs/import.md: a float initializer that a node reads as a
 * weight (MatMul or Gemm, Gather's table, a norm's scale and bias, a 1-D
 * tensor added or multiplied along the last dim, an unknown op's input)
 * is one; an Identity of one is a parameter of its own (PyTorch writes
 * two parameters of equal value, such as fresh LayerNorms, as one
 * initializer and Identity nodes); masks, rotary tables and position ids
 * are not.
 */
#include <stdio.h>
#include <string.h>

#include "import/onnx_int.h"
#include "traces/traces_int.h"

static int is_float(int elem) {
  return elem == ST__ONNX_FLOAT || elem == ST__ONNX_FLOAT16 ||
         elem == ST__ONNX_DOUBLE || elem == ST__ONNX_BFLOAT16 ||
         (elem >= ST__ONNX_FLOAT8_FIRST && elem <= ST__ONNX_FLOAT8_LAST);
}

static int dtype_of(const st__onnx_map_t *x, int v, strata_dtype_t *dt) {
  int e = x->m->values[v].elem;
  if (is_float(e) && x->dtype != STRATA_DTYPE_COUNT)
    *dt = x->dtype;
  else if (e == ST__ONNX_FLOAT || e == ST__ONNX_DOUBLE)
    *dt = STRATA_DTYPE_F32;
  else if (e == ST__ONNX_FLOAT16)
    *dt = STRATA_DTYPE_F16;
  else if (e == ST__ONNX_BFLOAT16)
    *dt = STRATA_DTYPE_BF16;
  else if (is_float(e))
    *dt = STRATA_DTYPE_F8;
  else if (e == ST__ONNX_INT64 || e == ST__ONNX_UINT32 || e == ST__ONNX_UINT64)
    *dt = STRATA_DTYPE_I64;
  else if (e == ST__ONNX_INT32 || e == ST__ONNX_INT16 || e == ST__ONNX_UINT16)
    *dt = STRATA_DTYPE_I32;
  else if (e == ST__ONNX_INT8 || e == ST__ONNX_UINT8 || e == ST__ONNX_BOOL)
    *dt = STRATA_DTYPE_U8;
  else
    return strata_error(STRATA_EBADINPUT,
                        "%s: '%s' is of ONNX type %d (%s), which no Strata "
                        "tensor holds",
                        x->where, x->m->values[v].name, e,
                        e ? "a string or complex tensor" : "not given");
  return 0;
}

int st__onnx_tensor(st__onnx_map_t *x, int v, int like,
                    strata_tensor_kind_t kind) {
  st__onnx_value_t *val = &x->m->values[v];
  int64_t shape[STRATA_MAX_DIMS];
  int ndim = 0, rc;
  strata_dtype_t dt;
  if (x->tensor[v] >= 0) return x->tensor[v];
  if (like >= 0 && val->ndim == ST__ONNX_NO_SHAPE) {
    val->ndim = x->m->values[like].ndim;
    memcpy(val->shape, x->m->values[like].shape, sizeof val->shape);
    memcpy(val->dim_param, x->m->values[like].dim_param, sizeof val->dim_param);
  }
  if (like >= 0 && !val->elem) val->elem = x->m->values[like].elem;
  if ((rc = st__onnx_shape(x, v, &ndim, shape)) || (rc = dtype_of(x, v, &dt)))
    return rc;
  for (int d = 0; d < ndim; d++)
    if (shape[d] == 0)
      return strata_error(STRATA_EBADINPUT,
                          "%s: '%s' is empty (dim %d is 0); Strata's "
                          "tensors have sizes of at least 1",
                          x->where, val->name, d);
  rc = strata_graph_add_tensor(x->g, val->name, ndim, shape, dt, kind);
  if (rc < 0) strata_error_prefix("%s", x->where);
  return rc < 0 ? rc : (x->tensor[v] = rc);
}

/* ---- values ---- */

static const st__onnx_value_t *val(const st__onnx_map_t *x, int v) {
  return &x->m->values[v];
}

static int is_act(const st__onnx_map_t *x, int v) {
  return v >= 0 && !x->cst[v] && x->tensor[v] >= 0;
}

static int is_weight(const st__onnx_map_t *x, int v) {
  return v >= 0 && x->cst[v] && x->wsrc[v] >= 0 && is_float(val(x, v)->elem);
}

/* A 1-D weight of n elements (a bias, a norm's scale). */
static int is_vec(const st__onnx_map_t *x, int v, int64_t n) {
  return is_weight(x, v) && val(x, v)->ndim == 1 && val(x, v)->shape[0] == n;
}

static int64_t last_dim(const st__onnx_map_t *x, int v) {
  const st__onnx_value_t *a = val(x, v);
  return a->ndim > 0 ? a->shape[a->ndim - 1] : -1;
}

/* The one node reading v (-1 if none or several, or v is a graph
 * output, which must stay a tensor). */
static int only_reader(const st__onnx_map_t *x, int v) {
  const st__onnx_value_t *a = v >= 0 ? val(x, v) : NULL;
  if (!a || a->n_use != 1 || a->graph_output) return -1;
  return x->m->use_node[a->use0];
}

static const st__onnx_node_t *node(const st__onnx_map_t *x, int n) {
  return n >= 0 ? &x->m->nodes[n] : NULL;
}

/* n is an op of the default domain with an input and an output. */
static int is_op(const st__onnx_node_t *n, const char *op) {
  return n && !strcmp(n->op, op) &&
         (!n->domain[0] || !strcmp(n->domain, "ai.onnx")) && n->n_in >= 1 &&
         n->n_out >= 1 && n->out[0] >= 0;
}

/* The input of binary node n that is not v (-1 if n does not read v). */
static int other_in(const st__onnx_node_t *n, int v) {
  if (n->n_in != 2) return -1;
  return n->in[0] == v ? n->in[1] : n->in[1] == v ? n->in[0] : -1;
}

/* The parameter tensor of weight value v, shaped ndim x shape (the
 * layout its op wants: a MatMul's [k, n] weight is a linear's [n, k]). */
static int param(st__onnx_map_t *x, int v, int ndim, const int64_t *shape) {
  int p = x->wsrc[v];
  strata_dtype_t dt;
  int rc;
  if (x->tensor[p] >= 0) {
    const strata_tensor_t *t = &x->g->tensors[x->tensor[p]];
    int same = t->ndim == ndim;
    for (int d = 0; same && d < ndim; d++)
      same = t->shape[d] == shape[d];
    if (!same)
      return strata_error(STRATA_EBADINPUT,
                          "%s: the weight '%s' is read in two layouts (as "
                          "%s and transposed)",
                          x->where, val(x, p)->name, t->name);
    return x->tensor[p];
  }
  if ((rc = dtype_of(x, p, &dt))) return rc;
  rc = strata_graph_add_tensor(x->g, val(x, p)->name, ndim, shape, dt,
                               STRATA_TENSOR_PARAM);
  if (rc < 0) strata_error_prefix("%s", x->where);
  return rc < 0 ? rc : (x->tensor[p] = rc);
}

static int param_as_is(st__onnx_map_t *x, int v) {
  const st__onnx_value_t *a = val(x, x->wsrc[v]);
  if (a->wide || a->ndim < 1)
    return strata_error(STRATA_EBADINPUT, "%s: the weight '%s' has %d dims",
                        x->where, a->name, a->wide ? 7 : a->ndim);
  return param(x, v, a->ndim, a->shape);
}

/* ---- ops ---- */

static int grow_op_node(st__onnx_map_t *x) {
  if (x->g->n_ops < x->op_cap) return 0;
  int cap = x->op_cap ? 2 * x->op_cap : 256;
  int *p = strata_realloc(x->op_node, (size_t)cap * sizeof *p);
  if (!p)
    return strata_error(STRATA_ENOMEM, "out of memory reading %s", x->where);
  x->op_node = p;
  x->op_cap = cap;
  return 0;
}

/* A unique op name: the node's, else its op type and index. */
static const char *op_name(const st__onnx_map_t *x, int n, char *buf,
                           size_t size) {
  const st__onnx_node_t *nd = node(x, n);
  if (nd->name[0] && strlen(nd->name) < size &&
      strata_graph_find_op(x->g, nd->name) < 0)
    return nd->name;
  snprintf(buf, size, "%.64s_%d", nd->op, n);
  return buf;
}

/* Op `kind` made from node n, reading tensors in[] and writing the
 * values out[] (their tensors made here; like: the value lending them
 * its shape where the file has none).  Shapes that break the kind's rule
 * make it generic.  Returns the op's index or a negative code. */
static int emit_at(st__onnx_map_t *x, int n, strata_op_kind_t kind, int n_in,
                   const int *in, int n_out, const int *out, int like,
                   const strata_op_t *at) {
  int t_out[STRATA_MAX_OP_OUTPUTS], rc;
  char buf[96];
  for (int i = 0; i < n_out; i++)
    if ((t_out[i] =
             st__onnx_tensor(x, out[i], like, STRATA_TENSOR_ACTIVATION)) < 0)
      return t_out[i];
  if ((rc = grow_op_node(x))) return rc;
  int op = strata_graph_add_op(x->g, op_name(x, n, buf, sizeof buf), kind, n_in,
                               in, n_out, t_out);
  if (op < 0) {
    strata_error_prefix("%s", x->where);
    return op;
  }
  x->op_node[op] = n;
  strata_op_t *o = &x->g->ops[op];
  if (at) {
    o->axis = at->axis;
    o->start = at->start;
    o->end = at->end;
    memcpy(o->perm, at->perm, sizeof o->perm);
  }
  if (kind != STRATA_OP_GENERIC && st__op_check(x->g, o)) {
    strata_error_clear();
    o->kind = STRATA_OP_GENERIC;
    o->flops = STRATA_FLOPS_UNSET;
  }
  return op;
}

static int emit(st__onnx_map_t *x, int n, strata_op_kind_t kind, int n_in,
                const int *in, int n_out, const int *out, int like) {
  return emit_at(x, n, kind, n_in, in, n_out, out, like, NULL);
}

/* Whether weight v is read as a parameter by an op that is not one of
 * the patterns: an initializer (and Identity copies of one) is; a
 * Constant node's tensor (the zeros a scatter writes into, a table) is
 * not, as only a pattern says it is learned. */
static int generic_param(const st__onnx_map_t *x, int v) {
  if (!is_weight(x, v) || val(x, v)->ndim < 1) return 0;
  const st__onnx_value_t *src = val(x, x->wsrc[v]);
  return src->init >= 0 || src->producer < 0 ||
         strcmp(x->m->nodes[src->producer].op, "Constant");
}

/* Anything else: every tensor it reads (weights as they are stored) and
 * the outputs something reads (at least the first). */
static int emit_generic(st__onnx_map_t *x, int n) {
  const st__onnx_node_t *nd = node(x, n);
  int in[STRATA_MAX_OP_INPUTS], out[STRATA_MAX_OP_OUTPUTS], ni = 0, no = 0;
  for (int i = 0; i < nd->n_in; i++) {
    int v = nd->in[i], t;
    if (v < 0 || (!is_act(x, v) && !generic_param(x, v))) continue;
    if (ni == STRATA_MAX_OP_INPUTS)
      return strata_error(STRATA_EUNSUPPORTED,
                          "%s: node '%s' (%s) reads more than %d tensors, "
                          "more than a Strata op takes",
                          x->where, nd->name, nd->op, STRATA_MAX_OP_INPUTS);
    if ((t = is_act(x, v) ? x->tensor[v] : param_as_is(x, v)) < 0) return t;
    in[ni++] = t;
  }
  for (int i = 0; i < nd->n_out; i++) {
    int v = nd->out[i];
    if (v < 0 || (no && !val(x, v)->n_use && !val(x, v)->graph_output))
      continue;
    if (no == STRATA_MAX_OP_OUTPUTS)
      return strata_error(STRATA_EUNSUPPORTED,
                          "%s: node '%s' (%s) has more than %d outputs in "
                          "use, more than a Strata op writes",
                          x->where, nd->name, nd->op, STRATA_MAX_OP_OUTPUTS);
    out[no++] = v;
  }
  if (!no)
    return strata_error(STRATA_EBADINPUT, "%s: node '%s' (%s) writes nothing",
                        x->where, nd->name, nd->op);
  int rc = emit(x, n, STRATA_OP_GENERIC, ni, in, no, out, -1);
  return rc < 0 ? rc : 0;
}

static int emit1(st__onnx_map_t *x, int n, strata_op_kind_t kind, int n_in,
                 const int *in, int out, int like) {
  int rc = emit(x, n, kind, n_in, in, 1, &out, like);
  return rc < 0 ? rc : 0;
}

/* ---- patterns ---- */

/* A head weight b whose bytes are those of an embedding table read by
 * Gather, transposed: the exporter's constant folding wrote the table's
 * transpose for a tied head, and it is the same parameter.  b's bytes
 * are [k, n] (its initializer's layout), the table's [n, k]. */
static int tied_table(const st__onnx_map_t *x, int b) {
  const st__onnx_value_t *w = val(x, x->wsrc[b]);
  int di = x->data[b];
  if (di < 0 || w->ndim != 2 || !x->m->inits[di].raw) return -1;
  const st__onnx_init_t *bi = &x->m->inits[di];
  for (int i = 0; i < x->n_tables; i++) {
    int t = x->tables[i], ti = x->data[t];
    const st__onnx_value_t *tv = val(x, t);
    if (ti < 0 || tv->elem != w->elem || tv->ndim != 2) continue;
    const st__onnx_init_t *tb = &x->m->inits[ti];
    int64_t r = tv->shape[0], c = tv->shape[1], rc;
    if (!tb->raw || tb->raw_len != bi->raw_len || w->shape[0] != c ||
        w->shape[1] != r || __builtin_mul_overflow(r, c, &rc) || !rc ||
        tb->raw_len % (size_t)rc)
      continue;
    size_t es = tb->raw_len / (size_t)rc;
    int same = 1;
    for (int64_t a = 0; same && a < r; a++)
      for (int64_t k = 0; same && k < c; k++)
        same = !memcmp(tb->raw + (size_t)(a * c + k) * es,
                       bi->raw + (size_t)(k * r + a) * es, es);
    if (same) return t;
  }
  return -1;
}

/* MatMul or Gemm of activation a by weight b (transposed: b is [n, k])
 * and the Add of a bias after it: linear. */
static int map_linear(st__onnx_map_t *x, int n, int a, int b, int transposed,
                      int bias) {
  const st__onnx_value_t *w = val(x, b);
  int out = node(x, n)->out[0], in[3], ni = 2;
  if (w->ndim != 2) return emit_generic(x, n);
  int64_t shape[2] = {transposed ? w->shape[0] : w->shape[1],
                      transposed ? w->shape[1] : w->shape[0]};
  int t = x->wT[b] == transposed ? tied_table(x, b) : -1;
  int rd = only_reader(x, out);
  const st__onnx_node_t *add = node(x, rd);
  if (bias < 0 && is_op(add, "Add") &&
      is_vec(x, other_in(add, out), shape[0])) {
    bias = other_in(add, out);
    x->done[rd] = 1;
    out = add->out[0];
  }
  st__onnx_value_t *ov = &x->m->values[out];
  if (ov->ndim == ST__ONNX_NO_SHAPE && val(x, a)->ndim >= 1) {
    int k;
    int64_t s[STRATA_MAX_DIMS];
    if (st__onnx_shape(x, a, &k, s)) return STRATA_EBADINPUT;
    s[k - 1] = shape[0];
    ov->ndim = k;
    memcpy(ov->shape, s, sizeof s);
    memset(ov->dim_param, 0, sizeof ov->dim_param);
  }
  if (!ov->elem) ov->elem = val(x, a)->elem;
  in[0] = x->tensor[a];
  in[1] = t >= 0 ? x->tensor[t] : param(x, b, 2, shape);
  if (in[1] < 0) return in[1];
  if (bias >= 0 && (in[ni++] = param_as_is(x, bias)) < 0) return in[2];
  return emit1(x, n, STRATA_OP_LINEAR, ni, in, out, -1);
}

static int map_gemm(st__onnx_map_t *x, int n) {
  const st__onnx_node_t *nd = node(x, n);
  const st__onnx_attr_t *ta = st__onnx_attr(nd, "transA");
  const st__onnx_attr_t *tb = st__onnx_attr(nd, "transB");
  int c = nd->n_in > 2 ? nd->in[2] : -1;
  if (nd->n_in < 2 || !is_act(x, nd->in[0]) || !is_weight(x, nd->in[1]) ||
      (ta && ta->i) || (c >= 0 && !is_vec(x, c, last_dim(x, nd->out[0]))))
    return emit_generic(x, n);
  return map_linear(x, n, nd->in[0], nd->in[1], tb && tb->i, c);
}

/* ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, then Mul by the scale
 * and Add of the bias: layernorm.  0 when it matched, 1 when not. */
static int match_layernorm(st__onnx_map_t *x, int n, int *nodes, int *scale,
                           int *bias) {
  const st__onnx_node_t *r0 = node(x, n), *sub, *pw, *r1, *eps, *sq, *dv, *mu;
  int xin = r0->in[0], k = 0;
  sub = node(x, only_reader(x, r0->out[0]));
  if (!is_op(sub, "Sub") || sub->n_in != 2 || sub->in[0] != xin ||
      sub->in[1] != r0->out[0])
    return 1;
  const st__onnx_value_t *d = val(x, sub->out[0]);
  if (d->n_use != 2 || d->graph_output) return 1;
  pw = node(x, x->m->use_node[d->use0]);
  dv = node(x, x->m->use_node[d->use0 + 1]);
  if (is_op(dv, "Pow")) {
    const st__onnx_node_t *s = pw;
    pw = dv;
    dv = s;
  }
  if (!is_op(pw, "Pow") || pw->in[0] != sub->out[0] || !is_op(dv, "Div") ||
      dv->n_in != 2 || dv->in[0] != sub->out[0])
    return 1;
  r1 = node(x, only_reader(x, pw->out[0]));
  eps = r1 && is_op(r1, "ReduceMean") ? node(x, only_reader(x, r1->out[0]))
                                      : NULL;
  sq = is_op(eps, "Add") ? node(x, only_reader(x, eps->out[0])) : NULL;
  if (!is_op(sq, "Sqrt") || only_reader(x, sq->out[0]) != dv - x->m->nodes ||
      dv->in[1] != sq->out[0])
    return 1;
  int64_t h = last_dim(x, xin);
  mu = node(x, only_reader(x, dv->out[0]));
  if (!is_op(mu, "Mul") || !is_vec(x, *scale = other_in(mu, dv->out[0]), h))
    return 1;
  const st__onnx_node_t *ad = node(x, only_reader(x, mu->out[0]));
  *bias = is_op(ad, "Add") && is_vec(x, other_in(ad, mu->out[0]), h)
              ? other_in(ad, mu->out[0])
              : -1;
  const st__onnx_node_t *all[] = {sub, pw, r1, eps,
                                  sq,  dv, mu, *bias >= 0 ? ad : NULL};
  for (size_t i = 0; i < sizeof all / sizeof *all && all[i]; i++)
    nodes[k++] = (int)(all[i] - x->m->nodes);
  nodes[k] = -1;
  return 0;
}

static int map_norm(st__onnx_map_t *x, int n, int xin, int scale, int bias,
                    int out) {
  int in[3] = {x->tensor[xin], -1, -1}, ni = 2;
  if ((in[1] = param_as_is(x, scale)) < 0) return in[1];
  if (bias >= 0 && (in[ni++] = param_as_is(x, bias)) < 0) return in[2];
  return emit1(x, n, STRATA_OP_LAYERNORM, ni, in, out, xin);
}

static int map_reducemean(st__onnx_map_t *x, int n) {
  int nodes[10], scale, bias;
  const st__onnx_node_t *nd = node(x, n);
  if (!is_act(x, nd->in[0]) || match_layernorm(x, n, nodes, &scale, &bias))
    return emit_generic(x, n);
  int last = nodes[0];
  for (int i = 0; nodes[i] >= 0; i++)
    x->done[last = nodes[i]] = 1;
  return map_norm(x, n, nd->in[0], scale, bias, node(x, last)->out[0]);
}

static int map_layernormalization(st__onnx_map_t *x, int n) {
  const st__onnx_node_t *nd = node(x, n);
  const st__onnx_attr_t *ax = st__onnx_attr(nd, "axis");
  int64_t h = nd->n_in > 0 && nd->in[0] >= 0 ? last_dim(x, nd->in[0]) : -1;
  int bias = nd->n_in > 2 ? nd->in[2] : -1;
  int ok = nd->n_in >= 2 && is_act(x, nd->in[0]) && is_vec(x, nd->in[1], h) &&
           (bias < 0 || is_vec(x, bias, h)) &&
           (!ax || ax->i == -1 || ax->i == val(x, nd->in[0])->ndim - 1);
  for (int i = 1; ok && i < nd->n_out; i++)
    ok = nd->out[i] < 0 || !val(x, nd->out[i])->n_use;
  if (!ok) return emit_generic(x, n);
  return map_norm(x, n, nd->in[0], nd->in[1], bias, nd->out[0]);
}

/* Div(x, sqrt 2) or Mul(x, 1/sqrt 2), Erf, Add 1, Mul by x (, Mul 0.5):
 * gelu of x.  The node index of its last node, or -1. */
static int match_gelu(const st__onnx_map_t *x, int n) {
  const st__onnx_node_t *d = node(x, n);
  int xin = d->in[0];
  const st__onnx_node_t *e = node(x, only_reader(x, d->out[0]));
  if (!is_op(e, "Erf")) return -1;
  const st__onnx_node_t *a = node(x, only_reader(x, e->out[0]));
  int one = a && is_op(a, "Add") ? other_in(a, e->out[0]) : -1;
  if (one < 0 || !x->cst[one]) return -1;
  int mi = only_reader(x, a->out[0]);
  const st__onnx_node_t *m = node(x, mi);
  if (!is_op(m, "Mul") || other_in(m, a->out[0]) != xin) return -1;
  int hi = only_reader(x, m->out[0]);
  const st__onnx_node_t *h = node(x, hi);
  int c = h && is_op(h, "Mul") ? other_in(h, m->out[0]) : -1;
  return c >= 0 && x->cst[c] ? hi : mi;
}

/* A float weight of 2 or more dims, [.., s, h], added to the output of an
 * embedding's Gather: a learned position table.  An nn.Embedding read at
 * arange(s) (or an nn.Parameter sliced to s) is folded by the exporter's
 * constant folding into such an initializer; masks and rotary tables are
 * added to attention scores or multiplied, never added to the token
 * embedding. */
static int is_position_table(const st__onnx_map_t *x, int a, int b) {
  const st__onnx_value_t *w = is_weight(x, b) ? val(x, x->wsrc[b]) : NULL;
  int prod = val(x, a)->producer;
  const st__onnx_node_t *g = node(x, prod);
  if (!w || w->wide || w->ndim < 2 || w->ndim > val(x, a)->ndim ||
      w->shape[w->ndim - 1] != last_dim(x, a) || !is_op(g, "Gather") ||
      g->n_in != 2)
    return 0;
  for (int t = 0; t < x->n_tables; t++)
    if (x->tables[t] == x->wsrc[g->in[0]]) return 1;
  return 0;
}

/* Add and Mul: of two activations (the smaller broadcast to the
 * larger), by a 1-D weight along the last dim (a bias, a scale), or by a
 * constant (scale). */
static int map_binary(st__onnx_map_t *x, int n, strata_op_kind_t kind) {
  const st__onnx_node_t *nd = node(x, n);
  if (nd->n_in != 2) return emit_generic(x, n);
  int a = nd->in[0], b = nd->in[1], in[2];
  if (!is_act(x, a) || (is_act(x, b) && val(x, b)->ndim > val(x, a)->ndim)) {
    a = nd->in[1];
    b = nd->in[0];
  }
  if (!is_act(x, a)) return emit_generic(x, n);
  in[0] = x->tensor[a];
  if (is_act(x, b)) {
    in[1] = x->tensor[b];
    return emit1(x, n, kind, 2, in, nd->out[0], a);
  }
  if (is_vec(x, b, last_dim(x, a)) ||
      (kind == STRATA_OP_ADD && is_position_table(x, a, b))) {
    if ((in[1] = param_as_is(x, b)) < 0) return in[1];
    return emit1(x, n, kind, 2, in, nd->out[0], a);
  }
  return emit1(x, n, STRATA_OP_SCALE, 1, in, nd->out[0], a);
}

/* Div or Mul by a constant that starts the erf form of gelu, else a
 * scale (a constant divisor) or generic. */
static int map_divmul(st__onnx_map_t *x, int n, int is_mul) {
  const st__onnx_node_t *nd = node(x, n);
  int last = nd->n_in == 2 && is_act(x, nd->in[0]) && nd->in[1] >= 0 &&
                     x->cst[nd->in[1]]
                 ? match_gelu(x, n)
                 : -1;
  if (last >= 0) {
    const st__onnx_node_t *e = node(x, only_reader(x, nd->out[0]));
    int mid = only_reader(x, e->out[0]);
    x->done[e - x->m->nodes] = x->done[mid] = 1;
    x->done[only_reader(x, node(x, mid)->out[0])] = x->done[last] = 1;
    int in = x->tensor[nd->in[0]];
    return emit1(x, n, STRATA_OP_GELU, 1, &in, node(x, last)->out[0],
                 nd->in[0]);
  }
  if (is_mul) return map_binary(x, n, STRATA_OP_MUL);
  if (nd->n_in == 2 && is_act(x, nd->in[0]) && nd->in[1] >= 0 &&
      x->cst[nd->in[1]]) {
    int in = x->tensor[nd->in[0]];
    return emit1(x, n, STRATA_OP_SCALE, 1, &in, nd->out[0], nd->in[0]);
  }
  return emit_generic(x, n);
}

/* ---- single nodes ---- */

static int map_matmul(st__onnx_map_t *x, int n) {
  const st__onnx_node_t *nd = node(x, n);
  if (nd->n_in != 2 || !is_act(x, nd->in[0]) || nd->in[1] < 0)
    return emit_generic(x, n);
  if (is_weight(x, nd->in[1]))
    return map_linear(x, n, nd->in[0], nd->in[1], 0, -1);
  if (!is_act(x, nd->in[1])) return emit_generic(x, n);
  int in[2] = {x->tensor[nd->in[0]], x->tensor[nd->in[1]]};
  return emit1(x, n, STRATA_OP_MATMUL, 2, in, nd->out[0], -1);
}

/* Gather of a weight table by the token ids (a graph input [b, s]):
 * embedding; by constant ids (position ids): gather, the ids an input. */
static int map_gather(st__onnx_map_t *x, int n) {
  const st__onnx_node_t *nd = node(x, n);
  const st__onnx_attr_t *ax = st__onnx_attr(nd, "axis");
  int ids = nd->n_in == 2 ? nd->in[1] : -1, in[2], kind = STRATA_OP_GATHER;
  int e = ids >= 0 ? val(x, ids)->elem : 0;
  if (ids < 0 || (ax && ax->i) || !is_weight(x, nd->in[0]) ||
      val(x, nd->in[0])->ndim != 2 ||
      (e != ST__ONNX_INT64 && e != ST__ONNX_INT32) ||
      (!is_act(x, ids) && val(x, ids)->ndim == ST__ONNX_NO_SHAPE))
    return emit_generic(x, n);
  if (is_act(x, ids) && val(x, ids)->graph_input && val(x, ids)->ndim == 2)
    kind = STRATA_OP_EMBEDDING;
  if ((in[0] = is_act(x, ids)
                   ? x->tensor[ids]
                   : st__onnx_tensor(x, ids, -1, STRATA_TENSOR_INPUT)) < 0)
    return in[0];
  if ((in[1] = param_as_is(x, nd->in[0])) < 0) return in[1];
  if (x->n_tables < (int)(sizeof x->tables / sizeof *x->tables))
    x->tables[x->n_tables++] = x->wsrc[nd->in[0]];
  return emit1(x, n, (strata_op_kind_t)kind, 2, in, nd->out[0], -1);
}

static int map_transpose(st__onnx_map_t *x, int n) {
  const st__onnx_node_t *nd = node(x, n);
  const st__onnx_attr_t *p = st__onnx_attr(nd, "perm");
  int a = nd->in[0];
  if (!is_act(x, a)) return emit_generic(x, n);
  int nd_ = val(x, a)->ndim, swap = nd_ >= 2, in = x->tensor[a];
  if (!p || (int)p->n_ints != nd_ || nd_ > STRATA_MAX_DIMS)
    return emit_generic(x, n);
  for (int d = 0; d < nd_; d++)
    swap = swap && p->ints[d] == (d < nd_ - 2    ? d
                                  : d == nd_ - 2 ? nd_ - 1
                                                 : nd_ - 2);
  if (swap) return emit1(x, n, STRATA_OP_TRANSPOSE, 1, &in, nd->out[0], -1);
  strata_op_t at;
  memset(&at, 0, sizeof at);
  for (int d = 0; d < nd_; d++)
    at.perm[d] =
        (signed char)(p->ints[d] < 0 || p->ints[d] >= nd_ ? 0 : p->ints[d]);
  int op = emit_at(x, n, STRATA_OP_PERMUTE, 1, &in, 1, &nd->out[0], -1, &at);
  return op < 0 ? op : 0;
}

/* Split and Concat along an axis. */
static int map_axis(st__onnx_map_t *x, int n, strata_op_kind_t kind) {
  const st__onnx_node_t *nd = node(x, n);
  const st__onnx_attr_t *ax = st__onnx_attr(nd, "axis");
  int in[STRATA_MAX_OP_INPUTS], ni = kind == STRATA_OP_SPLIT ? 1 : nd->n_in;
  int nout = kind == STRATA_OP_SPLIT ? nd->n_out : 1;
  if (!is_act(x, nd->in[0])) return emit_generic(x, n);
  int rank = val(x, nd->in[0])->ndim;
  int64_t axis = ax ? ax->i : 0;
  if (ni > STRATA_MAX_OP_INPUTS || nout > STRATA_MAX_OP_OUTPUTS ||
      axis < -rank || axis >= rank)
    return emit_generic(x, n);
  for (int i = 0; i < ni; i++) {
    if (!is_act(x, nd->in[i])) return emit_generic(x, n);
    in[i] = x->tensor[nd->in[i]];
  }
  for (int i = 0; i < nout; i++)
    if (nd->out[i] < 0) return emit_generic(x, n);
  strata_op_t at;
  memset(&at, 0, sizeof at);
  at.axis = (int)(axis < 0 ? axis + rank : axis);
  int op = emit_at(x, n, kind, ni, in, nout, nd->out, -1, &at);
  return op < 0 ? op : 0;
}

/* Slice of an activation along one axis, step 1: slice. */
static int map_slice(st__onnx_map_t *x, int n) {
  const st__onnx_node_t *nd = node(x, n);
  int64_t st[64], en[64], ax[64], sp[64];
  int a = nd->in[0], k, rank, in;
  if (nd->n_in < 3 || !is_act(x, a)) return emit_generic(x, n);
  const strata_tensor_t *t = &x->g->tensors[x->tensor[a]];
  rank = t->ndim;
  k = st__onnx_ints(x, nd->in[1], st);
  int ok = k == 1 && st__onnx_ints(x, nd->in[2], en) == 1;
  ax[0] = 0;
  sp[0] = 1;
  if (ok && nd->n_in > 3 && nd->in[3] >= 0)
    ok = st__onnx_ints(x, nd->in[3], ax) == 1;
  if (ok && nd->n_in > 4 && nd->in[4] >= 0)
    ok = st__onnx_ints(x, nd->in[4], sp) == 1 && sp[0] == 1;
  if (ax[0] < 0) ax[0] += rank;
  if (!ok || ax[0] < 0 || ax[0] >= rank) return emit_generic(x, n);
  int64_t d = t->shape[ax[0]], b = st[0], e = en[0];
  b = b < 0 ? (b < -d ? 0 : b + d) : (b > d ? d : b);
  e = e < 0 ? (e < -d ? 0 : e + d) : (e > d ? d : e);
  strata_op_t at;
  memset(&at, 0, sizeof at);
  at.axis = (int)ax[0];
  at.start = b;
  at.end = e;
  in = x->tensor[a];
  int op = emit_at(x, n, STRATA_OP_SLICE, 1, &in, 1, &nd->out[0], -1, &at);
  return op < 0 ? op : 0;
}

/* A unary op on its first input: the kind, or generic. */
static int map_unary(st__onnx_map_t *x, int n, strata_op_kind_t kind) {
  const st__onnx_node_t *nd = node(x, n);
  int a = nd->in[0], in;
  if (!is_act(x, a)) return emit_generic(x, n);
  if (kind == STRATA_OP_SOFTMAX) {
    const st__onnx_attr_t *ax = st__onnx_attr(nd, "axis");
    int64_t axis = ax ? ax->i : x->m->opset >= 13 ? -1 : 1;
    if (axis != -1 && axis != val(x, a)->ndim - 1) return emit_generic(x, n);
  }
  in = x->tensor[a];
  return emit1(x, n, kind, 1, &in, nd->out[0],
               kind == STRATA_OP_RESHAPE ? -1 : a);
}

/* Where(mask, a, b) with one activation and constants: a fixed mask. */
static int map_where(st__onnx_map_t *x, int n) {
  const st__onnx_node_t *nd = node(x, n);
  int act = -1, k = 0;
  for (int i = 0; i < nd->n_in; i++)
    if (nd->in[i] >= 0 && !x->cst[nd->in[i]]) act = nd->in[i], k++;
  if (k != 1 || !is_act(x, act)) return emit_generic(x, n);
  int in = x->tensor[act];
  return emit1(x, n, STRATA_OP_SCALE, 1, &in, nd->out[0], act);
}

/* A node reading only constants is a constant; an Identity of a weight
 * is a parameter of its own, a Transpose of one its transposed view. */
static void fold_constant(st__onnx_map_t *x, const st__onnx_node_t *nd) {
  int src = nd->n_in > 0 ? nd->in[0] : -1;
  for (int i = 0; i < nd->n_out; i++)
    if (nd->out[i] >= 0) x->cst[nd->out[i]] = 1;
  if (src < 0 || x->wsrc[src] < 0 || nd->n_out < 1 || nd->out[0] < 0) return;
  int o = nd->out[0];
  st__onnx_value_t *ov = &x->m->values[o];
  const st__onnx_value_t *sv = val(x, src);
  if (is_op(nd, "Identity") && x->wsrc[src] == src) {
    x->wsrc[o] = o;
    x->data[o] = x->data[src];
    ov->elem = sv->elem;
    ov->ndim = sv->ndim;
    ov->wide = sv->wide;
    memcpy(ov->shape, sv->shape, sizeof ov->shape);
  } else if (is_op(nd, "Transpose") && sv->ndim == 2) {
    x->wsrc[o] = x->wsrc[src];
    x->wT[o] = !x->wT[src];
    x->data[o] = x->data[src];
    ov->elem = sv->elem;
    ov->ndim = 2;
    ov->shape[0] = sv->shape[1];
    ov->shape[1] = sv->shape[0];
  }
}

/* The constant-only and pass-through nodes; 1 when n is none of them. */
static int map_trivial(st__onnx_map_t *x, int n) {
  const st__onnx_node_t *nd = node(x, n);
  int all_cst = 1;
  for (int i = 0; i < nd->n_in; i++)
    if (nd->in[i] >= 0 && !x->cst[nd->in[i]]) all_cst = 0;
  if (is_op(nd, "Gather") && nd->n_in == 2 && is_weight(x, nd->in[0]))
    all_cst = 0; /* a table looked up by constant ids: a parameter read */
  if (all_cst || is_op(nd, "Shape") || is_op(nd, "Size")) {
    fold_constant(x, nd);
    return 0;
  }
  if ((is_op(nd, "Identity") || is_op(nd, "Dropout")) && nd->n_out >= 1 &&
      nd->out[0] >= 0 && is_act(x, nd->in[0])) {
    for (int i = 1; i < nd->n_out; i++)
      if (nd->out[i] >= 0) x->cst[nd->out[i]] = 1; /* a dropout's mask */
    x->tensor[nd->out[0]] = x->tensor[nd->in[0]];
    return 0;
  }
  return 1;
}

static int map_node(st__onnx_map_t *x, int n) {
  const st__onnx_node_t *nd = node(x, n);
  static const struct {
    const char *op;
    strata_op_kind_t kind;
  } unary[] = {
      {"Softmax", STRATA_OP_SOFTMAX}, {"Relu", STRATA_OP_RELU},
      {"Sigmoid", STRATA_OP_SIGMOID}, {"Gelu", STRATA_OP_GELU},
      {"Reshape", STRATA_OP_RESHAPE}, {"Flatten", STRATA_OP_RESHAPE},
      {"Squeeze", STRATA_OP_RESHAPE}, {"Unsqueeze", STRATA_OP_RESHAPE}};
  int rc;
  if (x->done[n]) return 0;
  if ((rc = st__onnx_infer(x, n))) return rc;
  if (!map_trivial(x, n)) return 0;
  if (nd->n_out < 1 || nd->out[0] < 0) return emit_generic(x, n);
  for (size_t i = 0; i < sizeof unary / sizeof *unary; i++)
    if (is_op(nd, unary[i].op)) return map_unary(x, n, unary[i].kind);
  if (is_op(nd, "MatMul")) return map_matmul(x, n);
  if (is_op(nd, "Gemm")) return map_gemm(x, n);
  if (is_op(nd, "Gather")) return map_gather(x, n);
  if (is_op(nd, "LayerNormalization")) return map_layernormalization(x, n);
  if (is_op(nd, "ReduceMean")) return map_reducemean(x, n);
  if (is_op(nd, "Add")) return map_binary(x, n, STRATA_OP_ADD);
  if (is_op(nd, "Mul")) return map_divmul(x, n, 1);
  if (is_op(nd, "Div") || is_op(nd, "Sub")) return map_divmul(x, n, 0);
  if (is_op(nd, "Where")) return map_where(x, n);
  if (is_op(nd, "Transpose")) return map_transpose(x, n);
  if (is_op(nd, "Split")) return map_axis(x, n, STRATA_OP_SPLIT);
  if (is_op(nd, "Concat")) return map_axis(x, n, STRATA_OP_CONCAT);
  if (is_op(nd, "Slice")) return map_slice(x, n);
  return emit_generic(x, n);
}

int st__onnx_map_nodes(st__onnx_map_t *x) {
  for (int n = 0; n < x->m->n_nodes; n++) {
    int rc = map_node(x, n);
    if (rc) return rc;
  }
  return 0;
}
