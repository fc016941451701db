/*
 * onnx_shape.c - the shapes of values an ONNX file leaves without one.
 *
 * torch.onnx.export (1.13) writes the types of the graph's inputs and
 * outputs only, not value_info for what lies between, so the importer
 * works them out as ONNX's operator specifications define each output
 * (docs/Operators.md of the ONNX repository): elementwise ops keep or
 * broadcast (numpy's rule) their inputs' shapes, MatMul broadcasts its
 * batch dims, Gather, Transpose, Reshape, Flatten, (Un)Squeeze, Split,
 * Concat and the Reduce ops as their attributes and constant inputs say.
 * A shape the file gives is never replaced.  What is not covered stays
 * unknown, and the mapper says so if an op needs it.  Shapes are
 * resolved on the way (a named batch or sequence dim becomes its size),
 * so every inferred shape is concrete.
 */
#include <string.h>

#include "traces/onnx_int.h"
#include "traces/traces_int.h"

#define MAX_CONST 64 /* the longest constant read as integers */

int st__onnx_shape(const st__onnx_map_t *x, int v, int *ndim, int64_t *shape) {
  const st__onnx_value_t *val = &x->m->values[v];
  const st__onnx_node_t *w =
      val->producer >= 0 ? &x->m->nodes[val->producer] : NULL;
  if (val->ndim == ST__ONNX_NO_SHAPE)
    return strata_error(STRATA_EBADINPUT,
                        "%s: '%s' (written by %s%s%s) has no shape: the file "
                        "gives none and the importer cannot work it out; "
                        "export with fixed input shapes (torch.onnx.export "
                        "without dynamic_axes), or run ONNX shape inference "
                        "on the model",
                        x->where, val->name, w ? w->op : "no node",
                        w ? " node " : "", w ? w->name : "");
  if (val->wide)
    return strata_error(STRATA_EBADINPUT, "%s: '%s' has more than %d dims",
                        x->where, val->name, STRATA_MAX_DIMS);
  *ndim = val->ndim;
  for (int d = 0; d < val->ndim; d++) {
    const char *p = val->dim_param[d];
    shape[d] = val->shape[d];
    if (shape[d] < 0 && p && x->batch_name && !strcmp(p, x->batch_name))
      shape[d] = x->batch;
    else if (shape[d] < 0 && p && x->seq_name && !strcmp(p, x->seq_name))
      shape[d] = x->seq;
    if (shape[d] < 0)
      return strata_error(STRATA_EBADINPUT,
                          "%s: dim %d of '%s' is %s%s%s, not a size the "
                          "inputs fix: export with fixed shapes",
                          x->where, d, val->name, p ? "named '" : "unknown",
                          p ? p : "", p ? "'" : "");
  }
  return 0;
}

/* The shape of v, or 0 when it has none (no message left). */
static int known(const st__onnx_map_t *x, int v, int *ndim, int64_t *shape) {
  if (v < 0 || v >= x->m->n_values) return 0;
  if (st__onnx_shape(x, v, ndim, shape)) {
    strata_error_clear();
    return 0;
  }
  return 1;
}

static void set(st__onnx_map_t *x, int v, int ndim, const int64_t *shape,
                int elem) {
  st__onnx_value_t *o = v >= 0 ? &x->m->values[v] : NULL;
  if (!o) return;
  if (!o->elem) o->elem = elem;
  if (o->ndim != ST__ONNX_NO_SHAPE || ndim < 0 || ndim > STRATA_MAX_DIMS)
    return;
  for (int d = 0; d < ndim; d++)
    if (shape[d] < 0 || shape[d] > ((int64_t)1 << 40)) return;
  o->ndim = ndim;
  memcpy(o->shape, shape, (size_t)ndim * sizeof *shape);
  memset(o->dim_param, 0, sizeof o->dim_param);
}

/* Up to MAX_CONST integers of constant v (an initializer or a Constant
 * node's tensor); their count, or -1. */
static int ints_of(const st__onnx_map_t *x, int v, int64_t *out) {
  const st__onnx_value_t *val = v >= 0 ? &x->m->values[v] : NULL;
  if (!val || val->datum < 0 || !x->cst[v]) return -1;
  const st__onnx_init_t *d = &x->m->inits[val->datum];
  size_t n = 0, es = val->elem == ST__ONNX_INT64   ? 8
                     : val->elem == ST__ONNX_INT32 ? 4
                                                   : 0;
  if (!es) return -1;
  if (d->raw) {
    n = d->raw_len / es;
    if (n > MAX_CONST || n * es != d->raw_len) return -1;
    for (size_t i = 0; i < n; i++) {
      int32_t a;
      if (es == 8)
        memcpy(&out[i], d->raw + 8 * i, 8);
      else
        memcpy(&a, d->raw + 4 * i, 4), out[i] = a;
    }
  } else {
    n = es == 8 ? d->n_i64 : d->n_i32;
    if (n > MAX_CONST) return -1;
    for (size_t i = 0; i < n; i++)
      out[i] = es == 8 ? d->i64[i] : d->i32[i];
  }
  return (int)n;
}

/* Axes from the attribute `axes` or constant input 1; their count or -1
 * (0 when neither is given). */
static int axes_of(const st__onnx_map_t *x, const st__onnx_node_t *n, int rank,
                   int64_t *axes) {
  const st__onnx_attr_t *a = st__onnx_attr(n, "axes");
  int k = 0;
  if (a && a->n_ints <= MAX_CONST) {
    k = (int)a->n_ints;
    if (k) memcpy(axes, a->ints, (size_t)k * sizeof *axes);
  } else if (n->n_in > 1 && (k = ints_of(x, n->in[1], axes)) < 0)
    return -1;
  for (int i = 0; i < k; i++) {
    if (axes[i] < 0) axes[i] += rank;
    if (axes[i] < 0 || axes[i] >= rank) return -1;
  }
  return k;
}

static int has_axis(const int64_t *axes, int k, int d) {
  for (int i = 0; i < k; i++)
    if (axes[i] == d) return 1;
  return 0;
}

/* numpy broadcasting of every input; 0 if they do not broadcast. */
static int broadcast(const st__onnx_map_t *x, const st__onnx_node_t *n, int *nd,
                     int64_t *out) {
  int64_t r[STRATA_MAX_DIMS]; /* r[i]: dim i from the right */
  *nd = 0;
  for (int j = 0; j < n->n_in; j++) {
    int k;
    int64_t s[STRATA_MAX_DIMS];
    if (!known(x, n->in[j], &k, s)) return 0;
    for (int i = 0; i < k; i++) {
      int64_t d = s[k - 1 - i], cur = i < *nd ? r[i] : 1;
      if (cur != 1 && d != 1 && cur != d) return 0;
      r[i] = cur == 1 ? d : cur;
    }
    if (k > *nd) *nd = k;
  }
  for (int i = 0; i < *nd; i++)
    out[*nd - 1 - i] = r[i];
  return 1;
}

static int gemm_shape(const st__onnx_map_t *x, const st__onnx_node_t *n,
                      int *nd, int64_t *out) {
  int ka, kb;
  int64_t a[STRATA_MAX_DIMS], b[STRATA_MAX_DIMS];
  const st__onnx_attr_t *ta = st__onnx_attr(n, "transA");
  const st__onnx_attr_t *tb = st__onnx_attr(n, "transB");
  if (n->n_in < 2 || !known(x, n->in[0], &ka, a) ||
      !known(x, n->in[1], &kb, b) || ka != 2 || kb != 2)
    return 0;
  out[0] = ta && ta->i ? a[1] : a[0];
  out[1] = tb && tb->i ? b[0] : b[1];
  *nd = 2;
  return 1;
}

static int matmul_shape(const st__onnx_map_t *x, const st__onnx_node_t *n,
                        int *nd, int64_t *out) {
  int ka, kb;
  int64_t a[STRATA_MAX_DIMS], b[STRATA_MAX_DIMS];
  if (n->n_in != 2 || !known(x, n->in[0], &ka, a) ||
      !known(x, n->in[1], &kb, b) || ka < 2 || kb < 1 ||
      a[ka - 1] != b[kb == 1 ? 0 : kb - 2])
    return 0;
  if (kb == 1) {
    *nd = ka - 1;
    memcpy(out, a, (size_t)*nd * sizeof *out);
    return 1;
  }
  *nd = ka > kb ? ka : kb;
  for (int d = 0; d < *nd - 2; d++) {
    int da = d - (*nd - ka), db = d - (*nd - kb);
    int64_t p = da >= 0 ? a[da] : 1, q = db >= 0 ? b[db] : 1;
    if (p != q && p != 1 && q != 1) return 0;
    out[d] = p == 1 ? q : p;
  }
  out[*nd - 2] = a[ka - 2];
  out[*nd - 1] = b[kb - 1];
  return 1;
}

static int reshape_shape(const st__onnx_map_t *x, const st__onnx_node_t *n,
                         int *nd, int64_t *out) {
  int ka, infer = -1;
  int64_t a[STRATA_MAX_DIMS], want[MAX_CONST], total = 1, rest = 1;
  const st__onnx_attr_t *az = st__onnx_attr(n, "allowzero");
  if (n->n_in != 2 || !known(x, n->in[0], &ka, a)) return 0;
  int k = ints_of(x, n->in[1], want);
  if (k < 0 || k > STRATA_MAX_DIMS) return 0;
  for (int d = 0; d < ka; d++)
    if (__builtin_mul_overflow(total, a[d], &total)) return 0;
  for (int d = 0; d < k; d++) {
    out[d] = want[d] == 0 && !(az && az->i) && d < ka ? a[d] : want[d];
    if (out[d] == -1 && infer < 0)
      infer = d;
    else if (out[d] < 1 || __builtin_mul_overflow(rest, out[d], &rest))
      return 0;
  }
  if (infer >= 0) out[infer] = total % rest ? -1 : total / rest;
  *nd = k;
  return 1;
}

static int gather_shape(const st__onnx_map_t *x, const st__onnx_node_t *n,
                        int *nd, int64_t *out) {
  int ka, ki;
  int64_t a[STRATA_MAX_DIMS], idx[STRATA_MAX_DIMS];
  const st__onnx_attr_t *ax = st__onnx_attr(n, "axis");
  if (n->n_in != 2 || !known(x, n->in[0], &ka, a) ||
      !known(x, n->in[1], &ki, idx))
    return 0;
  int64_t axis = ax ? ax->i : 0;
  if (axis < 0) axis += ka;
  if (axis < 0 || axis >= ka || ka - 1 + ki > STRATA_MAX_DIMS) return 0;
  *nd = 0;
  for (int d = 0; d < axis; d++)
    out[(*nd)++] = a[d];
  for (int d = 0; d < ki; d++)
    out[(*nd)++] = idx[d];
  for (int d = (int)axis + 1; d < ka; d++)
    out[(*nd)++] = a[d];
  return 1;
}

/* Transpose, Flatten, Unsqueeze, Squeeze and the Reduce ops: dims of
 * input 0 moved, merged, added or removed. */
static int layout_shape(const st__onnx_map_t *x, const st__onnx_node_t *n,
                        int *nd, int64_t *out) {
  int ka, k;
  int64_t a[STRATA_MAX_DIMS], axes[MAX_CONST];
  if (n->n_in < 1 || !known(x, n->in[0], &ka, a)) return 0;
  if (!strcmp(n->op, "Transpose")) {
    const st__onnx_attr_t *p = st__onnx_attr(n, "perm");
    if (p && (int)p->n_ints != ka) return 0;
    for (int d = 0; d < ka; d++) {
      int64_t s = p ? p->ints[d] : ka - 1 - d;
      if (s < 0 || s >= ka) return 0;
      out[d] = a[s];
    }
    *nd = ka;
    return 1;
  }
  if (!strcmp(n->op, "Flatten")) {
    const st__onnx_attr_t *ax = st__onnx_attr(n, "axis");
    int64_t axis = ax ? ax->i : 1;
    if (axis < 0) axis += ka;
    if (axis < 0 || axis > ka) return 0;
    out[0] = out[1] = 1;
    for (int d = 0; d < ka; d++)
      if (__builtin_mul_overflow(out[d >= axis], a[d], &out[d >= axis]))
        return 0;
    *nd = 2;
    return 1;
  }
  if (!strcmp(n->op, "Unsqueeze")) {
    int r = ka;
    const st__onnx_attr_t *a0 = st__onnx_attr(n, "axes");
    k = a0 ? (int)a0->n_ints : n->n_in > 1 ? ints_of(x, n->in[1], axes) : -1;
    if (k < 1 || ka + k > STRATA_MAX_DIMS) return 0;
    r = ka + k;
    if ((k = axes_of(x, n, r, axes)) < 1) return 0;
    for (int d = 0, i = 0; d < r; d++)
      out[d] = has_axis(axes, k, d) ? 1 : i < ka ? a[i++] : 1;
    *nd = r;
    return 1;
  }
  const st__onnx_attr_t *kd = st__onnx_attr(n, "keepdims");
  int squeeze = !strcmp(n->op, "Squeeze"), keep = !squeeze && (!kd || kd->i);
  if (!squeeze && strncmp(n->op, "Reduce", 6)) return 0;
  if ((k = axes_of(x, n, ka, axes)) < 0) return 0;
  *nd = 0;
  for (int d = 0; d < ka; d++) {
    int hit = k ? has_axis(axes, k, d) : !squeeze || a[d] == 1;
    if (!hit)
      out[(*nd)++] = a[d];
    else if (keep)
      out[(*nd)++] = 1;
  }
  return 1;
}

/* Split and Concat along `axis`. */
static int axis_shapes(st__onnx_map_t *x, const st__onnx_node_t *n) {
  int ka, k;
  int64_t a[STRATA_MAX_DIMS], parts[MAX_CONST];
  const st__onnx_attr_t *ax = st__onnx_attr(n, "axis");
  int elem = n->in[0] >= 0 ? x->m->values[n->in[0]].elem : 0;
  if (n->n_in < 1 || !known(x, n->in[0], &ka, a)) return 0;
  int64_t axis = ax ? ax->i : 0;
  if (axis < 0) axis += ka;
  if (axis < 0 || axis >= ka) return 0;
  if (!strcmp(n->op, "Concat")) {
    int kb;
    int64_t b[STRATA_MAX_DIMS], sum = 0;
    for (int i = 0; i < n->n_in; i++) {
      if (!known(x, n->in[i], &kb, b) || kb != ka ||
          __builtin_add_overflow(sum, b[axis], &sum))
        return 0;
    }
    a[axis] = sum;
    set(x, n->out[0], ka, a, elem);
    return 1;
  }
  const st__onnx_attr_t *sp = st__onnx_attr(n, "split");
  if (sp && sp->n_ints <= MAX_CONST) {
    k = (int)sp->n_ints;
    if (k) memcpy(parts, sp->ints, (size_t)k * sizeof *parts);
  } else if (n->n_in > 1 && n->in[1] >= 0) {
    k = ints_of(x, n->in[1], parts);
  } else {
    k = n->n_out;
    if (k > MAX_CONST) return 0;
    for (int i = 0; i < k; i++)
      parts[i] = a[axis] % k ? -1 : a[axis] / k;
  }
  if (k != n->n_out) return 0;
  int64_t whole = a[axis];
  for (int i = 0; i < k; i++) {
    a[axis] = parts[i];
    if (parts[i] > 0 && parts[i] <= whole) set(x, n->out[i], ka, a, elem);
  }
  return 1;
}

static int is_any(const char *op, const char *const *list) {
  for (int i = 0; list[i]; i++)
    if (!strcmp(op, list[i])) return 1;
  return 0;
}

void st__onnx_infer(st__onnx_map_t *x, int node) {
  static const char *const same[] = {
      "Softmax",   "LogSoftmax",  "Erf",        "Sqrt",
      "Relu",      "Sigmoid",     "Tanh",       "Gelu",
      "Cast",      "Identity",    "Dropout",    "Neg",
      "Exp",       "Log",         "Reciprocal", "LayerNormalization",
      "Abs",       "Not",         "Softplus",   "Elu",
      "LeakyRelu", "HardSigmoid", "CastLike",   "IsNaN",
      "Sin",       "Cos",         NULL};
  static const char *const bcast[] = {
      "Add", "Sub",   "Mul",         "Div",
      "Pow", "Where", "Max",         "Min",
      "Mod", "Equal", "Less",        "Greater",
      "And", "Or",    "LessOrEqual", "GreaterOrEqual",
      NULL};
  static const char *const logical[] = {
      "Equal", "Less",        "Greater",        "And",   "Or",
      "Not",   "LessOrEqual", "GreaterOrEqual", "IsNaN", NULL};
  const st__onnx_node_t *n = &x->m->nodes[node];
  int nd = -1, out0 = n->n_out > 0 ? n->out[0] : -1;
  int64_t s[STRATA_MAX_DIMS];
  if (out0 < 0 || n->n_in < 1 || (n->domain[0] && strcmp(n->domain, "ai.onnx")))
    return;
  int in0 = n->in[0], in1 = n->n_in > 1 ? n->in[1] : -1;
  int elem = in0 >= 0 ? x->m->values[in0].elem : 0;
  if (!strcmp(n->op, "Where") && n->n_in > 1 && n->in[1] >= 0)
    elem = x->m->values[n->in[1]].elem;
  if (is_any(n->op, logical)) elem = ST__ONNX_BOOL;
  if (!strcmp(n->op, "Cast")) {
    const st__onnx_attr_t *to = st__onnx_attr(n, "to");
    elem = to ? (int)to->i : 0;
  }
  if (!strcmp(n->op, "Split") || !strcmp(n->op, "Concat")) {
    axis_shapes(x, n);
    return;
  }
  if (is_any(n->op, same)) {
    if (!known(x, in0, &nd, s)) return;
  } else if (is_any(n->op, bcast)) {
    if (!broadcast(x, n, &nd, s)) return;
  } else if (!strcmp(n->op, "MatMul")) {
    if (!matmul_shape(x, n, &nd, s)) return;
    elem = elem ? elem : in1 >= 0 ? x->m->values[in1].elem : 0;
  } else if (!strcmp(n->op, "Gemm")) {
    if (!gemm_shape(x, n, &nd, s)) return;
  } else if (!strcmp(n->op, "Gather")) {
    if (!gather_shape(x, n, &nd, s)) return;
  } else if (!strcmp(n->op, "Reshape")) {
    if (!reshape_shape(x, n, &nd, s)) return;
  } else if (!strcmp(n->op, "Shape")) {
    int k;
    if (!known(x, in0, &k, s)) return;
    nd = 1;
    s[0] = k;
    elem = ST__ONNX_INT64;
  } else if (!layout_shape(x, n, &nd, s)) {
    return;
  }
  set(x, out0, nd, s, elem);
}
