/*
 * shapes.c - the shape rule of every operator kind (the table in
 * traces.h), checked once when a graph is validated so that everything
 * downstream (cost model, ILP, exporters) may trust shapes without
 * re-checking.
 *
 * Each failure names the op, its kind and the shapes involved, because the
 * person reading it is fixing a trace file by hand or a generator.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "traces/traces_int.h"

static int bad(const strata_op_t *op, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int bad(const strata_op_t *op, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return strata_error(STRATA_EBADINPUT, "op '%s' (%s): %s", op->name,
                      strata_op_kind_name(op->kind), msg);
}

#define SHAPE_BUF 96
typedef struct {
  char s[SHAPE_BUF];
} shape_str_t;

static shape_str_t shp(const strata_graph_t *g, int t) {
  shape_str_t r;
  st__shape_str(&g->tensors[t], r.s, sizeof r.s);
  return r;
}

static const strata_tensor_t *IN(const strata_graph_t *g, const strata_op_t *op,
                                 int i) {
  return &g->tensors[op->in[i]];
}
static const strata_tensor_t *OUT(const strata_graph_t *g,
                                  const strata_op_t *op, int i) {
  return &g->tensors[op->out[i]];
}

static int same_shape(const strata_tensor_t *a, const strata_tensor_t *b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

static int is_int(strata_dtype_t d) {
  return d == STRATA_DTYPE_I64 || d == STRATA_DTYPE_I32;
}

/* ---- arity ---- */

static void arity(strata_op_kind_t k, int *in_lo, int *in_hi, int *out_lo,
                  int *out_hi) {
  *in_lo = *in_hi = *out_lo = *out_hi = 1;
  switch (k) {
  case STRATA_OP_EMBEDDING:
  case STRATA_OP_LAYERNORM:
  case STRATA_OP_LINEAR:
  case STRATA_OP_MOE_ROUTER:
  case STRATA_OP_GROUPED_LINEAR:
    *in_lo = 2, *in_hi = 3;
    break;
  case STRATA_OP_MOE_DISPATCH:
  case STRATA_OP_MOE_COMBINE:
    *in_lo = *in_hi = 2;
    break;
  case STRATA_OP_MLA_KV:
    *in_lo = *in_hi = 2;
    *out_lo = *out_hi = 2;
    break;
  case STRATA_OP_RMSNORM:
  case STRATA_OP_MATMUL:
  case STRATA_OP_MUL:
  case STRATA_OP_ADD:
  case STRATA_OP_CROSS_ENTROPY:
  case STRATA_OP_GATHER:
    *in_lo = *in_hi = 2;
    break;
  case STRATA_OP_PATCH_EMBED:
    *in_lo = 2, *in_hi = 3;
    break;
  case STRATA_OP_FLASH_ATTENTION:
    *in_lo = 3, *in_hi = 4;
    break;
  case STRATA_OP_CROSS_ATTENTION:
    *in_lo = *in_hi = 3;
    break;
  case STRATA_OP_SPLIT_HEADS:
  case STRATA_OP_SPLIT:
    *out_hi = 3;
    break;
  case STRATA_OP_CONCAT:
    *in_hi = STRATA_MAX_OP_INPUTS;
    break;
  case STRATA_OP_GENERIC:
    *in_lo = 0, *in_hi = STRATA_MAX_OP_INPUTS, *out_hi = STRATA_MAX_OP_OUTPUTS;
    break;
  default:
    break;
  }
}

static int check_arity(const strata_op_t *op) {
  int il, ih, ol, oh;
  arity(op->kind, &il, &ih, &ol, &oh);
  if (op->n_in < il || op->n_in > ih) {
    if (il == ih)
      return bad(op, "takes %d input%s, not %d", il, il > 1 ? "s" : "",
                 op->n_in);
    return bad(op, "takes %d to %d inputs, not %d", il, ih, op->n_in);
  }
  if (op->kind == STRATA_OP_SPLIT_HEADS && op->n_out != 1 && op->n_out != 3)
    return bad(op, "has 1 output (heads) or 3 (q, k, v), not %d", op->n_out);
  if (op->n_out < ol || op->n_out > oh) {
    if (ol == oh) return bad(op, "has %d output, not %d", ol, op->n_out);
    return bad(op, "has %d to %d outputs, not %d", ol, oh, op->n_out);
  }
  return 0;
}

/* ---- per kind ---- */

static int out_like(const strata_graph_t *g, const strata_op_t *op,
                    const strata_tensor_t *want) {
  if (same_shape(OUT(g, op, 0), want)) return 0;
  char w[SHAPE_BUF];
  st__shape_str(want, w, sizeof w);
  return bad(op, "output '%s' is %s, expected %s", OUT(g, op, 0)->name,
             shp(g, op->out[0]).s, w);
}

static int check_embedding(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *tok = IN(g, op, 0), *tab = IN(g, op, 1);
  if (tok->ndim != 2 || !is_int(tok->dtype))
    return bad(op, "token ids '%s' must be [b,s] integers, got %s %s",
               tok->name, shp(g, op->in[0]).s, strata_dtype_name(tok->dtype));
  if (tab->ndim != 2)
    return bad(op, "table '%s' must be [V,h], got %s", tab->name,
               shp(g, op->in[1]).s);
  if (op->n_in == 3) {
    const strata_tensor_t *pos = IN(g, op, 2);
    if (pos->ndim != 2 || pos->shape[1] != tab->shape[1] ||
        pos->shape[0] < tok->shape[1])
      return bad(op, "position table '%s' %s must be [S,%lld] with S >= %lld",
                 pos->name, shp(g, op->in[2]).s, (long long)tab->shape[1],
                 (long long)tok->shape[1]);
  }
  strata_tensor_t want = {
      .ndim = 3, .shape = {tok->shape[0], tok->shape[1], tab->shape[1]}};
  return out_like(g, op, &want);
}

static int check_norm(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *x = IN(g, op, 0);
  if (x->ndim < 1) return bad(op, "input '%s' is a scalar", x->name);
  for (int i = 1; i < op->n_in; i++) {
    const strata_tensor_t *p = IN(g, op, i);
    if (p->ndim != 1 || p->shape[0] != x->shape[x->ndim - 1])
      return bad(op, "'%s' is %s, expected [%lld] to match input '%s' %s",
                 p->name, shp(g, op->in[i]).s, (long long)x->shape[x->ndim - 1],
                 x->name, shp(g, op->in[0]).s);
  }
  return out_like(g, op, x);
}

static int check_linear(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *x = IN(g, op, 0), *w = IN(g, op, 1);
  if (x->ndim < 1 || w->ndim != 2 || w->shape[1] != x->shape[x->ndim - 1])
    return bad(op,
               "input '%s' %s and weight '%s' %s do not fit "
               "(x[...,k] needs w[n,k])",
               x->name, shp(g, op->in[0]).s, w->name, shp(g, op->in[1]).s);
  if (op->n_in == 3) {
    const strata_tensor_t *bias = IN(g, op, 2);
    if (bias->ndim != 1 || bias->shape[0] != w->shape[0])
      return bad(op, "bias '%s' is %s, expected [%lld]", bias->name,
                 shp(g, op->in[2]).s, (long long)w->shape[0]);
  }
  strata_tensor_t want = *x;
  want.shape[x->ndim - 1] = w->shape[0];
  return out_like(g, op, &want);
}

static int check_matmul(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *a = IN(g, op, 0), *b = IN(g, op, 1);
  int n = a->ndim, ok = n >= 2 && b->ndim == n;
  for (int i = 0; ok && i < n - 2; i++)
    ok = b->shape[i] > 0 && a->shape[i] % b->shape[i] == 0;
  if (ok) ok = a->shape[n - 1] == b->shape[n - 2];
  if (!ok)
    return bad(op,
               "'%s' %s and '%s' %s do not multiply (a[B...,m,k] needs "
               "b[B'...,k,n], each B' dim equal to or dividing B's)",
               a->name, shp(g, op->in[0]).s, b->name, shp(g, op->in[1]).s);
  strata_tensor_t want = *a;
  want.shape[n - 1] = b->shape[n - 1];
  return out_like(g, op, &want);
}

/* y broadcasts to x: no more dims, each (right-aligned) equal or 1. */
static int broadcasts(const strata_tensor_t *x, const strata_tensor_t *y) {
  if (y->ndim > x->ndim) return 0;
  for (int i = 1; i <= y->ndim; i++)
    if (y->shape[y->ndim - i] != 1 &&
        y->shape[y->ndim - i] != x->shape[x->ndim - i])
      return 0;
  return 1;
}

static int check_same(const strata_graph_t *g, const strata_op_t *op) {
  if (op->n_in == 2 && !broadcasts(IN(g, op, 0), IN(g, op, 1)))
    return bad(op, "input '%s' %s does not broadcast to '%s' %s",
               IN(g, op, 1)->name, shp(g, op->in[1]).s, IN(g, op, 0)->name,
               shp(g, op->in[0]).s);
  if (op->kind == STRATA_OP_DROPOUT &&
      !(op->dropout_p >= 0 && op->dropout_p < 1))
    return bad(op, "dropout_p %g is not in [0, 1)", op->dropout_p);
  return out_like(g, op, IN(g, op, 0));
}

static int check_swiglu(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *x = IN(g, op, 0);
  if (x->ndim < 1 || x->shape[x->ndim - 1] % 2)
    return bad(op, "input '%s' %s must have an even last dim (gate, up)",
               x->name, shp(g, op->in[0]).s);
  strata_tensor_t want = *x;
  want.shape[x->ndim - 1] /= 2;
  return out_like(g, op, &want);
}

static int check_out4(const strata_graph_t *g, const strata_op_t *op, int o,
                      int64_t b, int64_t n, int64_t s, int64_t d) {
  strata_tensor_t want = {.ndim = 4, .shape = {b, n, s, d}};
  const strata_tensor_t *t = OUT(g, op, o);
  if (same_shape(t, &want)) return 0;
  return bad(op, "output '%s' is %s, expected [%lld,%lld,%lld,%lld]", t->name,
             shp(g, op->out[o]).s, (long long)b, (long long)n, (long long)s,
             (long long)d);
}

static int check_split(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *x = IN(g, op, 0);
  int64_t q = op->heads, kv = op->kv_heads ? op->kv_heads : op->heads;
  int64_t parts = op->n_out == 3 ? q + 2 * kv : q;
  if (q <= 0 || kv <= 0)
    return bad(op, "needs attribute heads (and kv_heads) > 0");
  if (x->ndim != 3 || x->shape[2] % parts)
    return bad(op,
               "input '%s' %s must be [b,s,%lld*d] for heads %lld, kv_heads "
               "%lld",
               x->name, shp(g, op->in[0]).s, (long long)parts, (long long)q,
               (long long)kv);
  int64_t b = x->shape[0], s = x->shape[1], d = x->shape[2] / parts;
  int rc = check_out4(g, op, 0, b, q, s, d);
  if (!rc && op->n_out == 3) rc = check_out4(g, op, 1, b, kv, s, d);
  if (!rc && op->n_out == 3) rc = check_out4(g, op, 2, b, kv, s, d);
  return rc;
}

static int check_merge(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *x = IN(g, op, 0);
  if (x->ndim != 4)
    return bad(op, "input '%s' %s must be [b,n,s,d]", x->name,
               shp(g, op->in[0]).s);
  strata_tensor_t want = {
      .ndim = 3,
      .shape = {x->shape[0], x->shape[2], x->shape[1] * x->shape[3]}};
  return out_like(g, op, &want);
}

static int check_transpose(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *x = IN(g, op, 0);
  if (x->ndim < 2)
    return bad(op, "input '%s' %s needs 2 dims or more", x->name,
               shp(g, op->in[0]).s);
  strata_tensor_t want = *x;
  want.shape[x->ndim - 1] = x->shape[x->ndim - 2];
  want.shape[x->ndim - 2] = x->shape[x->ndim - 1];
  return out_like(g, op, &want);
}

static int check_reshape(const strata_graph_t *g, const strata_op_t *op) {
  if (strata_tensor_numel(IN(g, op, 0)) == strata_tensor_numel(OUT(g, op, 0)))
    return 0;
  return bad(op, "input '%s' %s and output '%s' %s differ in element count",
             IN(g, op, 0)->name, shp(g, op->in[0]).s, OUT(g, op, 0)->name,
             shp(g, op->out[0]).s);
}

/* flash_attention (self: keys as long as queries) and cross_attention
 * (keys of the encoder's length t); the values may have a head size of
 * their own (latent attention), the output has theirs. */
static int check_flash(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *q = IN(g, op, 0), *k = IN(g, op, 1), *v = IN(g, op, 2);
  int self = op->kind == STRATA_OP_FLASH_ATTENTION;
  int ok = q->ndim == 4 && k->ndim == 4 && v->ndim == 4 &&
           k->shape[0] == q->shape[0] &&
           (!self || k->shape[2] == q->shape[2]) &&
           k->shape[3] == q->shape[3] && k->shape[1] > 0 &&
           q->shape[1] % k->shape[1] == 0;
  for (int i = 0; ok && i < 3; i++)
    ok = v->shape[i] == k->shape[i];
  if (!ok)
    return bad(op,
               "q '%s' %s, k '%s' %s, v '%s' %s must be q[b,h,s,d], "
               "k [b,kv,%s,d] and v [b,kv,%s,dv] with kv dividing h",
               q->name, shp(g, op->in[0]).s, k->name, shp(g, op->in[1]).s,
               v->name, shp(g, op->in[2]).s, self ? "s" : "t",
               self ? "s" : "t");
  if (op->window < 0) return bad(op, "window %d is negative", op->window);
  if (op->n_in == 4) {
    const strata_tensor_t *bias = IN(g, op, 3);
    int n = bias->ndim, bok = n == 3 || n == 4;
    if (bok && n == 4)
      bok = bias->shape[0] == 1 || bias->shape[0] == q->shape[0];
    if (bok)
      bok = bias->shape[n - 3] == q->shape[1] &&
            bias->shape[n - 2] == q->shape[2] &&
            bias->shape[n - 1] == k->shape[2];
    if (!bok)
      return bad(op, "bias '%s' %s must be [h,s,s] or [b,h,s,s] for q %s",
                 bias->name, shp(g, op->in[3]).s, shp(g, op->in[0]).s);
  }
  strata_tensor_t want = *q;
  want.shape[3] = v->shape[3];
  return out_like(g, op, &want);
}

/* ---- mixture of experts and latent attention ---- */

static int check_topk(const strata_op_t *op, int64_t experts) {
  if (op->topk < 1 || op->topk > experts)
    return bad(op, "needs attribute topk from 1 to the %lld experts, not %d",
               (long long)experts, op->topk);
  if (!(op->capacity >= 0 && op->capacity <= 1e6))
    return bad(op, "capacity %g is not 0 (dropless) or a positive factor",
               op->capacity);
  return 0;
}

static int check_router(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *w = IN(g, op, 1);
  int rc = check_linear(g, op);
  return rc ? rc : check_topk(op, w->shape[0]);
}

/* Slots per expert and sequence: every token's topk copies spread over
 * the experts, times the capacity factor (dropless: the mean). */
static int64_t capacity_of(int64_t tokens, int topk, double cf, int64_t E) {
  double c = (double)tokens * topk * (cf > 0 ? cf : 1.0) / (double)E;
  int64_t n = (int64_t)c;
  return (double)n < c ? n + 1 : n;
}

/* Tokens x[b,s,h] and scores[b,s,E] against the grouped copies
 * e[E,b,C,h] (tensor indices). */
static int check_groups(const strata_graph_t *g, const strata_op_t *op, int xi,
                        int si, int ei) {
  const strata_tensor_t *x = &g->tensors[xi], *sc = &g->tensors[si],
                        *e = &g->tensors[ei];
  int ok = x->ndim == 3 && sc->ndim == 3 && e->ndim == 4 &&
           sc->shape[0] == x->shape[0] && sc->shape[1] == x->shape[1] &&
           e->shape[0] == sc->shape[2] && e->shape[1] == x->shape[0] &&
           e->shape[3] == x->shape[2];
  if (!ok)
    return bad(op,
               "tokens '%s' %s, scores '%s' %s and expert copies '%s' %s "
               "must be [b,s,h], [b,s,E] and [E,b,C,h]",
               x->name, shp(g, xi).s, sc->name, shp(g, si).s, e->name,
               shp(g, ei).s);
  int rc = check_topk(op, sc->shape[2]);
  if (rc) return rc;
  int64_t c = capacity_of(x->shape[1], op->topk, op->capacity, sc->shape[2]);
  if (e->shape[2] != c)
    return bad(op,
               "'%s' holds %lld copies per expert and sequence; %lld tokens x "
               "topk %d x capacity %g over %lld experts make %lld",
               e->name, (long long)e->shape[2], (long long)x->shape[1],
               op->topk, op->capacity > 0 ? op->capacity : 1.0,
               (long long)sc->shape[2], (long long)c);
  return 0;
}

static int check_dispatch(const strata_graph_t *g, const strata_op_t *op) {
  return check_groups(g, op, op->in[0], op->in[1], op->out[0]);
}

static int check_combine(const strata_graph_t *g, const strata_op_t *op) {
  return check_groups(g, op, op->out[0], op->in[1], op->in[0]);
}

static int check_grouped(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *x = IN(g, op, 0), *w = IN(g, op, 1);
  if (x->ndim != 4 || w->ndim != 3 || w->shape[0] != x->shape[0] ||
      w->shape[2] != x->shape[3])
    return bad(op,
               "input '%s' %s and weight '%s' %s do not fit (x[E,b,C,k] "
               "needs w[E,n,k])",
               x->name, shp(g, op->in[0]).s, w->name, shp(g, op->in[1]).s);
  if (op->n_in == 3) {
    const strata_tensor_t *b = IN(g, op, 2);
    if (b->ndim != 2 || b->shape[0] != w->shape[0] ||
        b->shape[1] != w->shape[1])
      return bad(op, "bias '%s' is %s, expected [%lld,%lld]", b->name,
                 shp(g, op->in[2]).s, (long long)w->shape[0],
                 (long long)w->shape[1]);
  }
  strata_tensor_t want = *x;
  want.shape[3] = w->shape[1];
  return out_like(g, op, &want);
}

static int check_mla_kv(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *kv = IN(g, op, 0), *kr = IN(g, op, 1);
  int64_t H = op->heads, dv = op->v_dim;
  if (H < 1 || dv < 1) return bad(op, "needs attributes heads and v_dim >= 1");
  if (kv->ndim != 3 || kr->ndim != 3 || kr->shape[0] != kv->shape[0] ||
      kr->shape[1] != kv->shape[1] || kv->shape[2] % H ||
      kv->shape[2] / H <= dv)
    return bad(op,
               "'%s' %s and '%s' %s must be [b,s,heads*(dn+dv)] and "
               "[b,s,dr] with heads %lld, v_dim %lld",
               kv->name, shp(g, op->in[0]).s, kr->name, shp(g, op->in[1]).s,
               (long long)H, (long long)dv);
  int64_t b = kv->shape[0], s = kv->shape[1];
  int64_t dn = kv->shape[2] / H - dv;
  int rc = check_out4(g, op, 0, b, H, s, dn + kr->shape[2]);
  return rc ? rc : check_out4(g, op, 1, b, H, s, dv);
}

/* The other dims of a and b agree (axis excepted). */
static int same_but(const strata_tensor_t *a, const strata_tensor_t *b,
                    int axis) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (i != axis && a->shape[i] != b->shape[i]) return 0;
  return 1;
}

static int check_axis(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *x = IN(g, op, 0);
  if (op->axis >= 0 && op->axis < x->ndim) return 0;
  return bad(op, "axis %d is not a dim of '%s' %s", op->axis, x->name,
             shp(g, op->in[0]).s);
}

static int check_split_parts(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *x = IN(g, op, 0);
  int rc = check_axis(g, op);
  int64_t sum = 0;
  if (rc) return rc;
  for (int i = 0; i < op->n_out; i++) {
    if (!same_but(x, OUT(g, op, i), op->axis))
      return bad(op, "part '%s' %s must match '%s' %s except along axis %d",
                 OUT(g, op, i)->name, shp(g, op->out[i]).s, x->name,
                 shp(g, op->in[0]).s, op->axis);
    sum += OUT(g, op, i)->shape[op->axis];
  }
  if (sum == x->shape[op->axis]) return 0;
  return bad(op, "parts add up to %lld along axis %d, input '%s' %s has %lld",
             (long long)sum, op->axis, x->name, shp(g, op->in[0]).s,
             (long long)x->shape[op->axis]);
}

static int check_slice(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *x = IN(g, op, 0);
  int rc = check_axis(g, op);
  if (rc) return rc;
  if (op->start < 0 || op->end <= op->start || op->end > x->shape[op->axis])
    return bad(op, "range [%lld, %lld) is not inside dim %d of '%s' %s",
               (long long)op->start, (long long)op->end, op->axis, x->name,
               shp(g, op->in[0]).s);
  strata_tensor_t want = *x;
  want.shape[op->axis] = op->end - op->start;
  return out_like(g, op, &want);
}

static int check_concat(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *x = IN(g, op, 0);
  int rc = check_axis(g, op);
  if (rc) return rc;
  strata_tensor_t want = *x;
  for (int i = 1; i < op->n_in; i++) {
    if (!same_but(x, IN(g, op, i), op->axis))
      return bad(op, "input '%s' %s must match '%s' %s except along axis %d",
                 IN(g, op, i)->name, shp(g, op->in[i]).s, x->name,
                 shp(g, op->in[0]).s, op->axis);
    want.shape[op->axis] += IN(g, op, i)->shape[op->axis];
  }
  return out_like(g, op, &want);
}

static int check_permute(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *x = IN(g, op, 0);
  unsigned seen = 0;
  strata_tensor_t want = *x;
  for (int i = 0; i < x->ndim; i++) {
    int p = op->perm[i];
    if (p < 0 || p >= x->ndim || (seen & (1u << p)))
      return bad(op, "perm is not a permutation of the %d dims of '%s' %s",
                 x->ndim, x->name, shp(g, op->in[0]).s);
    seen |= 1u << p;
    want.shape[i] = x->shape[p];
  }
  for (int i = x->ndim; i < STRATA_MAX_DIMS; i++)
    if (op->perm[i])
      return bad(op, "perm has more entries than the %d dims of '%s'", x->ndim,
                 x->name);
  return out_like(g, op, &want);
}

static int check_gather(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *idx = IN(g, op, 0), *tab = IN(g, op, 1);
  if (!is_int(idx->dtype) || tab->ndim < 1 || op->axis != 0 ||
      idx->ndim + tab->ndim - 1 > STRATA_MAX_DIMS)
    return bad(op,
               "needs integer indices (got '%s' %s %s) into dim 0 (axis %d) "
               "of a table '%s' %s, the result at most %d dims",
               idx->name, shp(g, op->in[0]).s, strata_dtype_name(idx->dtype),
               op->axis, tab->name, shp(g, op->in[1]).s, STRATA_MAX_DIMS);
  strata_tensor_t want = {.ndim = idx->ndim + tab->ndim - 1};
  for (int i = 0; i < idx->ndim; i++)
    want.shape[i] = idx->shape[i];
  for (int i = 1; i < tab->ndim; i++)
    want.shape[idx->ndim + i - 1] = tab->shape[i];
  return out_like(g, op, &want);
}

static int check_patch(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *x = IN(g, op, 0), *w = IN(g, op, 1);
  if (x->ndim != 4 || w->ndim != 4 || w->shape[1] != x->shape[1] ||
      x->shape[2] % w->shape[2] || x->shape[3] % w->shape[3])
    return bad(op,
               "image '%s' %s and weight '%s' %s must be [b,c,H,W] and "
               "[h,c,p,q] with p dividing H and q dividing W",
               x->name, shp(g, op->in[0]).s, w->name, shp(g, op->in[1]).s);
  if (op->n_in == 3) {
    const strata_tensor_t *bias = IN(g, op, 2);
    if (bias->ndim != 1 || bias->shape[0] != w->shape[0])
      return bad(op, "bias '%s' is %s, expected [%lld]", bias->name,
                 shp(g, op->in[2]).s, (long long)w->shape[0]);
  }
  strata_tensor_t want = {
      .ndim = 3,
      .shape = {x->shape[0],
                (x->shape[2] / w->shape[2]) * (x->shape[3] / w->shape[3]),
                w->shape[0]}};
  return out_like(g, op, &want);
}

static int check_generic(const strata_graph_t *g, const strata_op_t *op) {
  (void)g;
  if (op->flops >= 0 || op->flops == STRATA_FLOPS_UNSET) return 0;
  return bad(op, "flops %g is negative", op->flops);
}

static int check_xent(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *x = IN(g, op, 0), *y = IN(g, op, 1);
  int ok = x->ndim >= 2 && y->ndim == x->ndim - 1 && is_int(y->dtype);
  for (int i = 0; ok && i < y->ndim; i++)
    ok = y->shape[i] == x->shape[i];
  if (!ok)
    return bad(op,
               "logits '%s' %s and labels '%s' %s %s must be [...,V] "
               "and [...] integers",
               x->name, shp(g, op->in[0]).s, y->name, shp(g, op->in[1]).s,
               strata_dtype_name(y->dtype));
  if (OUT(g, op, 0)->ndim != 0)
    return bad(op, "output '%s' %s must be a scalar []", OUT(g, op, 0)->name,
               shp(g, op->out[0]).s);
  return 0;
}

int st__op_check(const strata_graph_t *g, const strata_op_t *op) {
  int rc = check_arity(op);
  if (rc) return rc;
  switch (op->kind) {
  case STRATA_OP_EMBEDDING:
    return check_embedding(g, op);
  case STRATA_OP_LAYERNORM:
  case STRATA_OP_RMSNORM:
    return check_norm(g, op);
  case STRATA_OP_LINEAR:
    return check_linear(g, op);
  case STRATA_OP_MATMUL:
    return check_matmul(g, op);
  case STRATA_OP_SWIGLU:
    return check_swiglu(g, op);
  case STRATA_OP_SPLIT_HEADS:
    return check_split(g, op);
  case STRATA_OP_MERGE_HEADS:
    return check_merge(g, op);
  case STRATA_OP_TRANSPOSE:
    return check_transpose(g, op);
  case STRATA_OP_RESHAPE:
    return check_reshape(g, op);
  case STRATA_OP_FLASH_ATTENTION:
  case STRATA_OP_CROSS_ATTENTION:
    return check_flash(g, op);
  case STRATA_OP_CROSS_ENTROPY:
    return check_xent(g, op);
  case STRATA_OP_SPLIT:
    return check_split_parts(g, op);
  case STRATA_OP_SLICE:
    return check_slice(g, op);
  case STRATA_OP_CONCAT:
    return check_concat(g, op);
  case STRATA_OP_PERMUTE:
    return check_permute(g, op);
  case STRATA_OP_GATHER:
    return check_gather(g, op);
  case STRATA_OP_PATCH_EMBED:
    return check_patch(g, op);
  case STRATA_OP_GENERIC:
    return check_generic(g, op);
  case STRATA_OP_MOE_ROUTER:
    return check_router(g, op);
  case STRATA_OP_MOE_DISPATCH:
    return check_dispatch(g, op);
  case STRATA_OP_GROUPED_LINEAR:
    return check_grouped(g, op);
  case STRATA_OP_MOE_COMBINE:
    return check_combine(g, op);
  case STRATA_OP_MLA_KV:
    return check_mla_kv(g, op);
  case STRATA_OP_COUNT:
    return bad(op, "unknown kind");
  default: /* softmax gelu silu dropout rope mul add */
    return check_same(g, op);
  }
}
