/*
 * onnx_shape.c - the shapes of values an ONNX file leaves without one.
 *
 * torch.onnx.export (1.13) writes the types of the graph's inputs and
 * outputs only, not value_info for what lies between, so the importer
 * works them out as ONNX's operator specifications define each output
 * (docs/Operators.md of the ONNX repository): elementwise ops keep or
 * broadcast (numpy's rule) their inputs' shapes, MatMul broadcasts its
 * batch dims, Gather, Transpose, Reshape, Flatten, (Un)Squeeze, Split,
 * Concat, Slice, TopK, Expand, Tile, Range, ConstantOfShape and the
 * Reduce ops as their attributes and constant inputs say.  The small
 * integer constants those inputs hold are worked out too (Shape, then
 * Gather, arithmetic, comparisons, Where, ConstantOfShape, Range,
 * Expand, Split of them), which is how torch.onnx writes grouped-query
 * attention's repeat_kv, rotary tables and causal masks.
 * A shape the file gives is replaced only where a dim of it is neither a
 * size nor the token input's batch or sequence.  What is not covered stays
 * unknown, and the mapper says so if an op needs it.  Shapes are
 * resolved on the way (a named batch or sequence dim becomes its size),
 * so every inferred shape is concrete.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "import/onnx_int.h"
#include "traces/traces_int.h"

#define MAX_CONST 64 /* the longest constant read as integers */

/* printf to buf + *at, as far as it fits; *at counts what would have
 * been written. */
static void put(char *buf, size_t size, size_t *at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = *at < size ? vsnprintf(buf + *at, size - *at, fmt, ap) : 0;
  va_end(ap);
  *at += k > 0 ? (size_t)k : 0;
}

/* Dim d of value a: its size, the batch or sequence its name stands
 * for, or -1. */
static int64_t dim_of(const st__onnx_map_t *x, const st__onnx_value_t *a,
                      int d) {
  const char *p = a->dim_param[d];
  if (a->shape[d] >= 0) return a->shape[d];
  if (p && x->batch_name && !strcmp(p, x->batch_name)) return x->batch;
  if (p && x->seq_name && !strcmp(p, x->seq_name)) return x->seq;
  return -1;
}

/* The shapes of node w's inputs, "[2, 4, 32, 16] and [2, 32, 32, 2]",
 * into buf, where w is an op whose rule onnx_shape.c applies in full
 * (MatMul of 2 or more dims, Gemm, the broadcasting ops) and every input
 * has a known shape, so that its output has none only because they
 * break the rule: 1, or 0. */
static int bad_inputs(const st__onnx_map_t *x, const st__onnx_node_t *w,
                      char *buf, size_t size) {
  static const char *const ops[] = {"MatMul", "Gemm", "Add",   "Sub",
                                    "Mul",    "Div",  "Where", NULL};
  size_t at = 0;
  int k = 0;
  while (ops[k] && strcmp(ops[k], w->op))
    k++;
  if (!ops[k] || w->domain[0] || w->n_in < 2) return 0;
  for (int i = 0; i < w->n_in; i++) {
    const st__onnx_value_t *a = w->in[i] >= 0 ? &x->m->values[w->in[i]] : NULL;
    if (!a || a->ndim == ST__ONNX_NO_SHAPE || a->wide || (!k && a->ndim < 2))
      return 0;
    put(buf, size, &at, "%s[", !i ? "" : i + 1 < w->n_in ? ", " : " and ");
    for (int d = 0; d < a->ndim; d++) {
      if (dim_of(x, a, d) < 0) return 0;
      put(buf, size, &at, "%s%lld", d ? ", " : "", (long long)dim_of(x, a, d));
    }
    put(buf, size, &at, "]");
  }
  return at < size;
}

/* Whether w's output shapes depend on the values it reads. */
static int data_shaped(const st__onnx_node_t *w) {
  return !w->domain[0] &&
         (!strcmp(w->op, "NonZero") || !strcmp(w->op, "Unique") ||
          !strcmp(w->op, "Compress") || !strcmp(w->op, "NonMaxSuppression"));
}

int st__onnx_shape(const st__onnx_map_t *x, int v, int *ndim, int64_t *shape) {
  const st__onnx_value_t *val = &x->m->values[v];
  const st__onnx_node_t *w =
      val->producer >= 0 ? &x->m->nodes[val->producer] : NULL;
  char ins[256];
  if (val->ndim == ST__ONNX_NO_SHAPE && w && bad_inputs(x, w, ins, sizeof ins))
    return strata_error(STRATA_EBADINPUT,
                        "%s: '%s' (written by %s node %s) has no shape: its "
                        "inputs are %s, which %s does not take by the ONNX "
                        "operator specification: the file is not a valid "
                        "ONNX model (a broken export)",
                        x->where, val->name, w->op, w->name, ins, w->op);
  if (val->ndim == ST__ONNX_NO_SHAPE && w && data_shaped(w))
    return strata_error(STRATA_EBADINPUT,
                        "%s: '%s' (written by %s node %s) has a shape that "
                        "depends on the values of its input (a MoE that "
                        "gathers each expert's tokens, as transformers' "
                        "Mixtral does, writes one), which a plan cannot "
                        "size: plan the model from its config.json, or "
                        "export experts that compute every token",
                        x->where, val->name, w->op, w->name);
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

/* Whether the file gives v a shape with a dim that is neither a size
 * nor the batch or sequence name (torch names the dims of an output
 * "MatMullogits_dim_0" where only the input's axes are dynamic), or
 * unknown: the rules may replace that one, rank for rank. */
static int open_dims(const st__onnx_map_t *x, const st__onnx_value_t *o) {
  int64_t s[STRATA_MAX_DIMS];
  int k;
  if (o->ndim == ST__ONNX_NO_SHAPE || o->wide) return 0;
  if (!st__onnx_shape(x, (int)(o - x->m->values), &k, s)) return 0;
  strata_error_clear();
  return 1;
}

static void set(st__onnx_map_t *x, int v, int ndim, const int64_t *shape,
                int elem) {
  st__onnx_value_t *o = v >= 0 ? &x->m->values[v] : NULL;
  if (!o) return;
  if (!o->elem) o->elem = elem;
  if (ndim < 0 || ndim > STRATA_MAX_DIMS ||
      (o->ndim != ST__ONNX_NO_SHAPE && (o->ndim != ndim || !open_dims(x, o))))
    return;
  for (int d = 0; d < ndim; d++)
    if (shape[d] < 0 || shape[d] > ((int64_t)1 << 40)) return;
  o->ndim = ndim;
  memcpy(o->shape, shape, (size_t)ndim * sizeof *shape);
  memset(o->dim_param, 0, sizeof o->dim_param);
}

int st__onnx_ints(const st__onnx_map_t *x, int v, int64_t *out) {
  const st__onnx_value_t *val = v >= 0 ? &x->m->values[v] : NULL;
  if (val && x->cst[v] && x->ival[v] >= 0) {
    const struct st__onnx_ints *iv = &x->ints[x->ival[v]];
    memcpy(out, iv->v, (size_t)iv->n * sizeof *out);
    return iv->n;
  }
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
  } else if (n->n_in > 1 && (k = st__onnx_ints(x, n->in[1], axes)) < 0)
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
  int k = st__onnx_ints(x, n->in[1], want);
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
    k = a0            ? (int)a0->n_ints
        : n->n_in > 1 ? st__onnx_ints(x, n->in[1], axes)
                      : -1;
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
    k = st__onnx_ints(x, n->in[1], parts);
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

/* Slice: starts, ends, axes and steps from constants (opset >= 10) or
 * attributes (before). */
static int slice_shape(const st__onnx_map_t *x, const st__onnx_node_t *n,
                       int *nd, int64_t *out) {
  int64_t st[MAX_CONST], en[MAX_CONST], ax[MAX_CONST], sp[MAX_CONST];
  int k, ke, ka = -1, ks = -1;
  if (!known(x, n->in[0], nd, out)) return 0;
  if (n->n_in >= 3) {
    k = st__onnx_ints(x, n->in[1], st);
    ke = st__onnx_ints(x, n->in[2], en);
    if (n->n_in > 3 && n->in[3] >= 0) ka = st__onnx_ints(x, n->in[3], ax);
    if (n->n_in > 4 && n->in[4] >= 0) ks = st__onnx_ints(x, n->in[4], sp);
  } else {
    const st__onnx_attr_t *a = st__onnx_attr(n, "starts");
    const st__onnx_attr_t *b = st__onnx_attr(n, "ends");
    const st__onnx_attr_t *c = st__onnx_attr(n, "axes");
    if (!a || !b || a->n_ints > MAX_CONST || b->n_ints > MAX_CONST ||
        (c && c->n_ints > MAX_CONST))
      return 0;
    k = (int)a->n_ints;
    ke = (int)b->n_ints;
    if (k) memcpy(st, a->ints, (size_t)k * sizeof *st);
    if (ke) memcpy(en, b->ints, (size_t)ke * sizeof *en);
    if (c && (ka = (int)c->n_ints))
      memcpy(ax, c->ints, (size_t)ka * sizeof *ax);
  }
  if (k < 0 || ke != k || (ka >= 0 && ka != k) || (ks >= 0 && ks != k))
    return 0;
  for (int i = 0; i < k; i++) {
    int64_t a = ka >= 0 ? ax[i] : i, step = ks >= 0 ? sp[i] : 1;
    if (a < 0) a += *nd;
    if (a < 0 || a >= *nd || step != 1) return 0;
    int64_t d = out[a], b = st[i], e = en[i];
    b = b < 0 ? (b < -d ? 0 : b + d) : (b > d ? d : b);
    e = e < 0 ? (e < -d ? 0 : e + d) : (e > d ? d : e);
    out[a] = e > b ? e - b : 0;
  }
  return 1;
}

/* Expand: numpy broadcasting of input 0 and the shape that input 1
 * holds; Tile: input 0's dims times input 1's repeats. */
static int expand_shape(const st__onnx_map_t *x, const st__onnx_node_t *n,
                        int *nd, int64_t *out) {
  int ka, k;
  int64_t a[STRATA_MAX_DIMS], w[MAX_CONST];
  if (n->n_in != 2 || !known(x, n->in[0], &ka, a)) return 0;
  if ((k = st__onnx_ints(x, n->in[1], w)) < 0 || k > STRATA_MAX_DIMS) return 0;
  if (!strcmp(n->op, "Tile")) {
    if (k != ka) return 0;
    for (int d = 0; d < ka; d++)
      if (w[d] < 0 || __builtin_mul_overflow(a[d], w[d], &out[d])) return 0;
    *nd = ka;
    return 1;
  }
  *nd = ka > k ? ka : k;
  for (int i = 0; i < *nd; i++) {
    int64_t p = i < ka ? a[ka - 1 - i] : 1, q = i < k ? w[k - 1 - i] : 1;
    if (q < 0 || (p != q && p != 1 && q != 1)) return 0;
    out[*nd - 1 - i] = p == 1 ? q : p;
  }
  return 1;
}

/* The length of Range(start, limit, delta): ceil((limit - start) /
 * delta), at least 0; -1 where it is not a number. */
static int64_t range_len(int64_t start, int64_t limit, int64_t delta) {
  int64_t span;
  if (!delta || delta == INT64_MIN ||
      __builtin_sub_overflow(limit, start, &span) || span == INT64_MIN)
    return -1;
  if (!span || (span > 0) != (delta > 0)) return 0;
  if (span < 0) span = -span, delta = -delta;
  return span / delta + (span % delta != 0);
}

/* TopK: input 0 with the k of input 1 along `axis`; the values, and the
 * indices (int64). */
static void topk_shapes(st__onnx_map_t *x, const st__onnx_node_t *n) {
  const st__onnx_attr_t *ax = st__onnx_attr(n, "axis");
  int64_t a[STRATA_MAX_DIMS], k[MAX_CONST];
  int ka;
  if (n->n_in != 2 || !known(x, n->in[0], &ka, a) ||
      st__onnx_ints(x, n->in[1], k) != 1)
    return;
  int64_t axis = ax ? ax->i : -1;
  if (axis < 0) axis += ka;
  if (axis < 0 || axis >= ka || k[0] < 1 || k[0] > a[axis]) return;
  a[axis] = k[0];
  set(x, n->out[0], ka, a, x->m->values[n->in[0]].elem);
  if (n->n_out > 1) set(x, n->out[1], ka, a, ST__ONNX_INT64);
}

/* OneHot: the indices' dims with `depth` (input 1) inserted at
 * `axis`. */
static int onehot_shape(const st__onnx_map_t *x, const st__onnx_node_t *n,
                        int *nd, int64_t *out) {
  const st__onnx_attr_t *ax = st__onnx_attr(n, "axis");
  int64_t a[STRATA_MAX_DIMS], depth[MAX_CONST];
  int ka;
  if (n->n_in != 3 || !known(x, n->in[0], &ka, a) ||
      st__onnx_ints(x, n->in[1], depth) != 1 || depth[0] < 1 ||
      ka + 1 > STRATA_MAX_DIMS)
    return 0;
  int64_t axis = ax ? ax->i : -1;
  if (axis < 0) axis += ka + 1;
  if (axis < 0 || axis > ka) return 0;
  *nd = ka + 1;
  for (int d = 0, i = 0; d < *nd; d++)
    out[d] = d == axis ? depth[0] : a[i++];
  return 1;
}

/* Range of scalar integer constants, and ConstantOfShape of a constant
 * shape. */
static int fill_shape(const st__onnx_map_t *x, const st__onnx_node_t *n,
                      int *nd, int64_t *out) {
  int64_t a[MAX_CONST], b[MAX_CONST], c[MAX_CONST];
  if (!strcmp(n->op, "ConstantOfShape")) {
    int k = st__onnx_ints(x, n->in[0], a);
    if (k < 0 || k > STRATA_MAX_DIMS) return 0;
    if (k) memcpy(out, a, (size_t)k * sizeof *out);
    *nd = k;
    return 1;
  }
  if (n->n_in != 3 || st__onnx_ints(x, n->in[0], a) != 1 ||
      st__onnx_ints(x, n->in[1], b) != 1 || st__onnx_ints(x, n->in[2], c) != 1)
    return 0;
  *nd = 1;
  return (out[0] = range_len(a[0], b[0], c[0])) >= 0;
}

static int is_any(const char *op, const char *const *list) {
  for (int i = 0; list[i]; i++)
    if (!strcmp(op, list[i])) return 1;
  return 0;
}

/* ---- integer constants from shapes ---- */

static int keep_ints(st__onnx_map_t *x, int v, const int64_t *vals, int n) {
  if (v < 0 || n < 0 || n > ST__ONNX_MAX_INTS) return 0;
  if (x->n_ints == x->cap_ints) {
    int cap = x->cap_ints ? 2 * x->cap_ints : 64;
    void *p = strata_realloc(x->ints, (size_t)cap * sizeof *x->ints);
    if (!p)
      return strata_error(STRATA_ENOMEM, "out of memory reading %s", x->where);
    x->ints = p;
    x->cap_ints = cap;
  }
  x->ints[x->n_ints].n = n;
  if (n) memcpy(x->ints[x->n_ints].v, vals, (size_t)n * sizeof *vals);
  x->ival[v] = x->n_ints++;
  return 0;
}

/* One elementwise integer op of p and q: 0, or 1 where it is none this
 * reads or it overflows. */
static int arith1(const char *op, int64_t p, int64_t q, int64_t *r) {
  static const char *const cmp[] = {
      "Equal",          "Less", "Greater", "LessOrEqual",
      "GreaterOrEqual", "And",  "Or",      NULL};
  if (!strcmp(op, "Add")) return __builtin_add_overflow(p, q, r);
  if (!strcmp(op, "Sub")) return __builtin_sub_overflow(p, q, r);
  if (!strcmp(op, "Mul")) return __builtin_mul_overflow(p, q, r);
  if (!strcmp(op, "Div")) {
    if (!q || (p == INT64_MIN && q == -1)) return 1;
    *r = p / q;
    return 0;
  }
  if (!strcmp(op, "Max") || !strcmp(op, "Min")) {
    *r = (p > q) == (op[1] == 'a') ? p : q;
    return 0;
  }
  int k = 0;
  while (cmp[k] && strcmp(op, cmp[k]))
    k++;
  int64_t v[] = {p == q, p<q, p> q, p <= q, p >= q, p && q, p || q};
  if (!cmp[k]) return 1;
  *r = v[k];
  return 0;
}

/* An elementwise integer op of a and b (one of them may be a scalar). */
static int arith(const char *op, const int64_t *a, int na, const int64_t *b,
                 int nb, int64_t *out) {
  int n = na > nb ? na : nb;
  if ((na != n && na != 1) || (nb != n && nb != 1)) return -1;
  for (int i = 0; i < n; i++)
    if (arith1(op, a[na == 1 ? 0 : i], b[nb == 1 ? 0 : i], &out[i])) return -1;
  return n;
}

/* Shape (of a known shape): its dims from `start` to `end`. */
static int eval_shape(st__onnx_map_t *x, const st__onnx_node_t *n) {
  const st__onnx_attr_t *s0 = st__onnx_attr(n, "start");
  const st__onnx_attr_t *s1 = st__onnx_attr(n, "end");
  int64_t a[MAX_CONST], out[MAX_CONST];
  int na, k = -1;
  if (!known(x, n->in[0], &na, a)) return 0;
  int64_t lo = s0 ? s0->i : 0, hi = s1 ? s1->i : na;
  lo = lo < 0 ? lo + na : lo;
  hi = hi < 0 ? hi + na : hi > na ? na : hi;
  for (int64_t d = lo < 0 ? 0 : lo; d < hi; d++)
    out[++k] = a[d];
  return keep_ints(x, n->out[0], out, k + 1);
}

/* ConstantOfShape of an integer value, Range, and Where(c, a, b) of
 * integer constants, where the result is small. */
static int eval_fill(st__onnx_map_t *x, const st__onnx_node_t *n) {
  int64_t a[MAX_CONST], b[MAX_CONST], c[MAX_CONST], out[MAX_CONST], k = 1;
  int na = st__onnx_ints(x, n->in[0], a), nb, nc;
  if (na < 0) return 0;
  if (!strcmp(n->op, "ConstantOfShape")) {
    const st__onnx_attr_t *v = st__onnx_attr(n, "value");
    for (int i = 0; i < na; i++)
      if (a[i] < 0 || __builtin_mul_overflow(k, a[i], &k)) return 0;
    if (!v || !v->t_int || k > ST__ONNX_MAX_INTS) return 0;
    for (int i = 0; i < k; i++)
      out[i] = v->t_i;
    return keep_ints(x, n->out[0], out, (int)k);
  }
  if (n->n_in != 3 || (nb = st__onnx_ints(x, n->in[1], b)) < 0 ||
      (nc = st__onnx_ints(x, n->in[2], c)) < 0)
    return 0;
  if (!strcmp(n->op, "Range")) {
    k = na == 1 && nb == 1 && nc == 1 ? range_len(a[0], b[0], c[0]) : -1;
    if (k < 0 || k > ST__ONNX_MAX_INTS) return 0;
    for (int i = 0; i < k; i++)
      out[i] = a[0] + i * c[0];
    return keep_ints(x, n->out[0], out, (int)k);
  }
  k = na > nb ? na : nb;
  k = k > nc ? k : nc;
  if ((na != k && na != 1) || (nb != k && nb != 1) || (nc != k && nc != 1))
    return 0;
  for (int i = 0; i < k; i++)
    out[i] = a[na == 1 ? 0 : i] ? b[nb == 1 ? 0 : i] : c[nc == 1 ? 0 : i];
  return keep_ints(x, n->out[0], out, (int)k);
}

/* Expand of a 1-D integer constant a to the shape b (the row broadcast
 * along b's last dim, then repeated), and Split of one along axis 0:
 * every output. */
static int eval_expand_split(st__onnx_map_t *x, const st__onnx_node_t *n,
                             const int64_t *a, int na) {
  int64_t b[MAX_CONST], out[MAX_CONST], rows = 1, at = 0;
  int nb = n->n_in > 1 && n->in[1] >= 0 ? st__onnx_ints(x, n->in[1], b) : -1;
  if (*n->op == 'E') {
    if (nb < 0) return 0;
    int64_t last = nb ? b[nb - 1] : 1, w = na == 1 ? last : na;
    for (int i = 0; i + 1 < nb; i++)
      if (b[i] < 0 || __builtin_mul_overflow(rows, b[i], &rows)) return 0;
    if ((last != 1 && last != w) || w < 0 || w > ST__ONNX_MAX_INTS ||
        rows > ST__ONNX_MAX_INTS || rows * w > ST__ONNX_MAX_INTS)
      return 0;
    for (int64_t i = 0; i < rows * w; i++)
      out[i] = a[na == 1 ? 0 : i % w];
    return keep_ints(x, n->out[0], out, (int)(rows * w));
  }
  const st__onnx_attr_t *sp = st__onnx_attr(n, "split");
  const st__onnx_attr_t *ax = st__onnx_attr(n, "axis");
  if (sp && sp->n_ints <= MAX_CONST)
    memcpy(b, sp->ints, (nb = (int)sp->n_ints) * sizeof *b);
  else if (nb < 0)
    for (nb = 0; nb < n->n_out && na % n->n_out == 0; nb++)
      b[nb] = na / n->n_out;
  if ((ax && ax->i != 0 && ax->i != -1) || nb != n->n_out) return 0;
  for (int i = 0; i < nb; i++) {
    if (b[i] < 0 || b[i] > na - at || n->out[i] < 0 || x->ival[n->out[i]] >= 0)
      return 0;
    int rc = keep_ints(x, n->out[i], a + at, (int)b[i]);
    if (rc) return rc;
    at += b[i];
  }
  return 0;
}

/* The integer value of a node of constants (Shape of a known shape
 * included), where it is small and the op simple. */
static int eval_ints(st__onnx_map_t *x, const st__onnx_node_t *n) {
  static const char *const pass[] = {
      "Identity", "Cast", "Unsqueeze", "Squeeze", "Reshape", "Flatten", NULL};
  static const char *const fill[] = {"ConstantOfShape", "Range", "Where", NULL};
  int64_t a[MAX_CONST], b[MAX_CONST], out[MAX_CONST];
  int na, nb, k = -1, out0 = n->out[0];
  if (!strcmp(n->op, "Shape")) return eval_shape(x, n);
  for (int i = 0; i < n->n_in; i++)
    if (n->in[i] >= 0 && !x->cst[n->in[i]]) return 0;
  if (is_any(n->op, fill)) return eval_fill(x, n);
  if ((na = st__onnx_ints(x, n->in[0], a)) < 0) return 0;
  if (is_any(n->op, pass)) return keep_ints(x, out0, a, na);
  if (!strcmp(n->op, "Expand") || !strcmp(n->op, "Split"))
    return eval_expand_split(x, n, a, na);
  if (!strcmp(n->op, "Not") || !strcmp(n->op, "Neg")) {
    for (int i = 0; i < na; i++) {
      if (a[i] == INT64_MIN) return 0;
      out[i] = n->op[1] == 'o' ? !a[i] : -a[i];
    }
    return keep_ints(x, out0, out, na);
  }
  if (!strcmp(n->op, "Concat")) {
    for (int i = 0, at = 0; i < n->n_in; i++, at += nb) {
      if ((nb = st__onnx_ints(x, n->in[i], b)) < 0 || at + nb > MAX_CONST)
        return 0;
      memcpy(out + at, b, (size_t)nb * sizeof *b);
      k = at + nb;
    }
    return keep_ints(x, out0, out, k);
  }
  if (n->n_in != 2 || (nb = st__onnx_ints(x, n->in[1], b)) < 0) return 0;
  if (!strcmp(n->op, "Gather")) {
    for (k = 0; k < nb; k++) {
      int64_t i = b[k] < 0 ? b[k] + na : b[k];
      if (i < 0 || i >= na) return 0;
      out[k] = a[i];
    }
    return keep_ints(x, out0, out, nb);
  }
  return keep_ints(x, out0, out, arith(n->op, a, na, b, nb, out));
}

/* The element type of node n's first output. */
static int out_elem(const st__onnx_map_t *x, const st__onnx_node_t *n) {
  static const char *const logical[] = {
      "Equal", "Less",        "Greater",        "And",   "Or",
      "Not",   "LessOrEqual", "GreaterOrEqual", "IsNaN", NULL};
  const st__onnx_attr_t *to = st__onnx_attr(n, "to");
  const st__onnx_attr_t *v = st__onnx_attr(n, "value");
  int in1 = n->n_in > 1 ? n->in[1] : -1;
  int elem = n->in[0] >= 0 ? x->m->values[n->in[0]].elem : 0;
  if (is_any(n->op, logical)) return ST__ONNX_BOOL;
  if (!strcmp(n->op, "Shape")) return ST__ONNX_INT64;
  if (!strcmp(n->op, "Cast")) return to ? (int)to->i : 0;
  if (!strcmp(n->op, "ConstantOfShape"))
    return v && v->t_elem ? v->t_elem : ST__ONNX_FLOAT;
  if ((!strcmp(n->op, "Where") || (!elem && !strcmp(n->op, "MatMul"))) &&
      in1 >= 0)
    return x->m->values[in1].elem;
  if (!strcmp(n->op, "OneHot") && n->n_in > 2 && n->in[2] >= 0)
    return x->m->values[n->in[2]].elem;
  return elem;
}

/* The shape of node n's first output (Split's and TopK's: every
 * output). */
static void shape_of_node(st__onnx_map_t *x, const st__onnx_node_t *n,
                          int out0) {
  static const char *const same[] = {"Softmax",
                                     "LogSoftmax",
                                     "Erf",
                                     "Sqrt",
                                     "Relu",
                                     "Sigmoid",
                                     "Tanh",
                                     "Gelu",
                                     "Cast",
                                     "Identity",
                                     "Dropout",
                                     "Neg",
                                     "Exp",
                                     "Log",
                                     "Reciprocal",
                                     "LayerNormalization",
                                     "Abs",
                                     "Not",
                                     "Softplus",
                                     "Elu",
                                     "LeakyRelu",
                                     "HardSigmoid",
                                     "CastLike",
                                     "IsNaN",
                                     "Sin",
                                     "Cos",
                                     "ScatterElements",
                                     "ScatterND",
                                     "Trilu",
                                     NULL};
  static const char *const bcast[] = {
      "Add", "Sub",   "Mul",         "Div",
      "Pow", "Where", "Max",         "Min",
      "Mod", "Equal", "Less",        "Greater",
      "And", "Or",    "LessOrEqual", "GreaterOrEqual",
      NULL};
  int nd = -1, in0 = n->in[0], elem = out_elem(x, n);
  int64_t s[STRATA_MAX_DIMS];
  if (!strcmp(n->op, "Split") || !strcmp(n->op, "Concat")) {
    axis_shapes(x, n);
    return;
  }
  if (!strcmp(n->op, "TopK")) {
    topk_shapes(x, n);
    return;
  }
  if (is_any(n->op, same)) {
    if (!known(x, in0, &nd, s)) return;
  } else if (is_any(n->op, bcast)) {
    if (!broadcast(x, n, &nd, s)) return;
  } else if (!strcmp(n->op, "MatMul")) {
    if (!matmul_shape(x, n, &nd, s)) return;
  } else if (!strcmp(n->op, "Gemm")) {
    if (!gemm_shape(x, n, &nd, s)) return;
  } else if (!strcmp(n->op, "Gather")) {
    if (!gather_shape(x, n, &nd, s)) return;
  } else if (!strcmp(n->op, "Slice")) {
    if (!slice_shape(x, n, &nd, s)) return;
  } else if (!strcmp(n->op, "Reshape")) {
    if (!reshape_shape(x, n, &nd, s)) return;
  } else if (!strcmp(n->op, "Expand") || !strcmp(n->op, "Tile")) {
    if (!expand_shape(x, n, &nd, s)) return;
  } else if (!strcmp(n->op, "OneHot")) {
    if (!onehot_shape(x, n, &nd, s)) return;
  } else if (!strcmp(n->op, "ConstantOfShape") || !strcmp(n->op, "Range")) {
    if (!fill_shape(x, n, &nd, s)) return;
  } else if (!strcmp(n->op, "Shape")) {
    int k;
    if (!known(x, in0, &k, s)) return;
    nd = 1;
    s[0] = k;
  } else if (!layout_shape(x, n, &nd, s)) {
    return;
  }
  set(x, out0, nd, s, elem);
}

int st__onnx_infer(st__onnx_map_t *x, int node) {
  const st__onnx_node_t *n = &x->m->nodes[node];
  int out0 = n->n_out > 0 ? n->out[0] : -1;
  if (out0 < 0 || n->n_in < 1 || n->in[0] < 0 ||
      (n->domain[0] && strcmp(n->domain, "ai.onnx")))
    return 0;
  shape_of_node(x, n, out0);
  return x->ival[out0] < 0 ? eval_ints(x, n) : 0;
}
