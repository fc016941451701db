/*
 * onnx.c - an ONNX model (a transformer as torch.onnx.export or Hugging
 * Face's exporters write it) as a Strata graph: strata_onnx_parse and
 * strata_onnx_load (docs/import.md).
 *
 * The file is decoded (onnx_read.c), its nodes become ops with the
 * file's shapes (onnx_map.c), and this file does the rest: the batch and
 * sequence the token input fixes (or, where the file names those dims,
 * the options' --micro-batch and --seq), the loss a training step adds
 * on the logits, and the layers.  Layers are found from the names the
 * exporter gives nodes, the module path ("/transformer/h.3/attn/MatMul"):
 * the outermost numbered module of the most numerous list ("h.0",
 * "h.1", ...) is one layer, its ops one block with the residual stream
 * as input and output, as the PyTorch tracer (python/strata_trace.py)
 * finds them; identical blocks then fold into one repeated block, so the
 * pipeline search sees L layers of one kind.  A graph without such
 * layers is refused: nothing here would know where a stage may end.
 */
#include <stdio.h>
#include <string.h>

#include "import/onnx_int.h"
#include "traces/traces_int.h"

#define MAX_BATCH (1 << 20) /* as a trace file allows */
#define MAX_SEQ (1 << 24)
#define MAX_SCOPES 16

static int check_overrides(const strata_gen_opts_t *ov, const char *where) {
  strata_gen_opts_t o, keep;
  if (!ov) return 0;
  o = *ov;
  o.seq = o.micro_batch = 0;
  o.dtype = STRATA_DTYPE_COUNT;
  o.family = 0;
  strata_gen_opts_keep(&keep);
  if (!memcmp(&o, &keep, sizeof o)) return 0;
  return strata_error(STRATA_EINVAL,
                      "%s: an ONNX model states its own sizes; it takes "
                      "--seq (where the file leaves the sequence open), "
                      "--micro-batch and --dtype, no other model option",
                      where);
}

/* One dim of the token input: its size, or the override for its name. */
static int input_dim(st__onnx_map_t *x, const st__onnx_value_t *in, int d,
                     int64_t want, const char *opt, int64_t *size,
                     const char **name) {
  if (in->shape[d] >= 0) {
    *size = in->shape[d];
    return 0;
  }
  if (!in->dim_param[d] || (!want && d == 1))
    return strata_error(STRATA_EBADINPUT,
                        "%s: dim %d of the input '%s' is %s%s: give %s, or "
                        "export with a fixed input shape",
                        x->where, d, in->name,
                        in->dim_param[d] ? "named " : "not given",
                        in->dim_param[d] ? in->dim_param[d] : "", opt);
  *name = in->dim_param[d];
  *size = want ? want : 1;
  return 0;
}

/* Batch and sequence from the token ids (the first 2-D integer graph
 * input, else the first input of 2 or more dims). */
static int batch_and_seq(st__onnx_map_t *x, const strata_gen_opts_t *ov) {
  const st__onnx_value_t *tok = NULL;
  for (int pass = 0; pass < 2 && !tok; pass++)
    for (int i = 0; i < x->m->n_values && !tok; i++) {
      const st__onnx_value_t *v = &x->m->values[i];
      if (v->graph_input && v->n_use && v->ndim >= 2 &&
          (pass || (v->ndim == 2 &&
                    (v->elem == ST__ONNX_INT64 || v->elem == ST__ONNX_INT32))))
        tok = v;
    }
  if (!tok)
    return strata_error(STRATA_EBADINPUT,
                        "%s: no graph input of 2 or more dims with a shape "
                        "(the token ids [batch, sequence]) is read",
                        x->where);
  int rc = input_dim(x, tok, 0, ov ? ov->micro_batch : 0, "--micro-batch",
                     &x->batch, &x->batch_name);
  if (!rc)
    rc = input_dim(x, tok, 1, ov ? ov->seq : 0, "--seq", &x->seq, &x->seq_name);
  if (rc) return rc;
  if (x->batch < 1 || x->batch > MAX_BATCH || x->seq < 1 || x->seq > MAX_SEQ)
    return strata_error(STRATA_EBADINPUT,
                        "%s: the input '%s' is [%lld, %lld]: a batch of 1 to "
                        "2^20 sequences of 1 to 2^24 tokens is what Strata "
                        "plans",
                        x->where, tok->name, (long long)x->batch,
                        (long long)x->seq);
  if (ov && ov->seq > 0 && !x->seq_name && ov->seq != x->seq)
    return strata_error(STRATA_EINVAL,
                        "%s: the file's shapes are made at sequence %lld, "
                        "not --seq %d: export it again with that input "
                        "shape (or with the sequence dim named)",
                        x->where, (long long)x->seq, ov->seq);
  return 0;
}

/* ---- the loss ---- */

/* cross_entropy on the first float graph output of 2 or more dims (the
 * logits), with labels of its leading dims. */
static int add_loss(st__onnx_map_t *x) {
  strata_graph_t *g = x->g;
  for (int i = 0; i < x->m->n_values; i++) {
    const st__onnx_value_t *v = &x->m->values[i];
    int t = x->tensor[i];
    if (!v->graph_output || x->cst[i] || t < 0) continue;
    const strata_tensor_t *lg = &g->tensors[t];
    int64_t shape[STRATA_MAX_DIMS]; /* adding a tensor moves g->tensors */
    int ndim = lg->ndim;
    if (ndim < 2 || lg->dtype >= STRATA_DTYPE_I64) continue;
    memcpy(shape, lg->shape, sizeof shape);
    char name[32] = "labels";
    for (int k = 1; strata_graph_find_tensor(g, name) >= 0 ||
                    strata_graph_find_op(g, name) >= 0;
         k++)
      snprintf(name, sizeof name, "labels_%d", k);
    int lab = strata_graph_add_tensor(g, name, ndim - 1, shape,
                                      STRATA_DTYPE_I64, STRATA_TENSOR_INPUT);
    int in[2] = {t, lab}, out;
    if (lab < 0) return lab;
    snprintf(name + strlen(name), sizeof name - strlen(name), ".loss");
    out = strata_graph_add_tensor(g, name, 0, NULL, STRATA_DTYPE_F32,
                                  STRATA_TENSOR_ACTIVATION);
    if (out >= 0)
      out =
          strata_graph_add_op(g, name, STRATA_OP_CROSS_ENTROPY, 2, in, 1, &out);
    return out < 0 ? out : 0;
  }
  return 0;
}

/* ---- layers ---- */

typedef struct {
  const char *name; /* the node name the container starts */
  size_t len;       /* "/transformer/h." */
  int max;          /* largest index seen */
} scope_t;

/* The outermost numbered module of a node name: "/transformer/h.3/attn/
 * MatMul" gives "/transformer/h." (its length) and 3; -1 if none.  The
 * number follows a dot (PyTorch's module path) or "_._" (Hugging Face's
 * TensorFlow models name their layers "h_._3", which tf2onnx keeps). */
static int scope_of(const char *name, size_t *len) {
  const char *s = name;
  for (;;) {
    const char *e = strchr(s, '/');
    if (!e) return -1; /* the last part names the node itself */
    const char *dig = e;
    while (dig > s && dig[-1] >= '0' && dig[-1] <= '9')
      dig--;
    if (dig < e && e - dig <= 6 &&
        (dig == s || dig[-1] == '.' ||
         (dig - s >= 3 && !strncmp(dig - 3, "_._", 3)))) {
      int idx = 0;
      for (const char *p = dig; p < e; p++)
        idx = 10 * idx + (*p - '0');
      *len = (size_t)(dig - name);
      return idx;
    }
    s = e + 1;
  }
}

/* The name of the node op was made from ("" for the loss). */
static const char *node_name(const st__onnx_map_t *x, int op) {
  return op < x->n_mapped ? x->m->nodes[x->op_node[op]].name : "";
}

/* The container with the most layers, and each op's layer in it (-1:
 * none). */
static int pick_layers(const st__onnx_map_t *x, int *layer, scope_t *best) {
  scope_t sc[MAX_SCOPES];
  int n_sc = 0, pick = -1;
  for (int op = 0; op < x->g->n_ops; op++) {
    const char *nm = node_name(x, op);
    size_t len;
    int idx = scope_of(nm, &len), k;
    layer[op] = -1;
    if (idx < 0) continue;
    for (k = 0; k < n_sc; k++)
      if (sc[k].len == len && !strncmp(sc[k].name, nm, len)) break;
    if (k == n_sc && n_sc == MAX_SCOPES) continue;
    if (k == n_sc) sc[n_sc++] = (scope_t){nm, len, idx};
    if (idx > sc[k].max) sc[k].max = idx;
  }
  for (int k = 0; k < n_sc; k++)
    if (pick < 0 || sc[k].max > sc[pick].max) pick = k;
  if (pick < 0) return 0;
  *best = sc[pick];
  for (int op = 0; op < x->g->n_ops; op++) {
    const char *nm = node_name(x, op);
    size_t len;
    int idx = scope_of(nm, &len);
    if (idx >= 0 && len == best->len && !strncmp(nm, best->name, len))
      layer[op] = idx;
  }
  return best->max + 1;
}

/* Layer l's ops [first[l], first[l + 1]): the layers in order, each op
 * between the first and the last layer's in the layer before it.  0, or
 * 1 when the layers are not in order. */
static int spans(const st__onnx_map_t *x, int *layer, int n, int *first) {
  int f = -1, e = -1, cur = 0;
  for (int op = 0; op < x->g->n_ops; op++)
    if (layer[op] >= 0) {
      if (f < 0) f = op;
      e = op;
    }
  if (f < 0 || layer[f] != 0 || layer[e] != n - 1) return 1;
  first[0] = f;
  for (int op = f; op <= e; op++) {
    if (layer[op] < 0 || layer[op] == cur) continue;
    if (layer[op] != cur + 1) return 1;
    first[++cur] = op;
  }
  first[n] = e + 1;
  return 0;
}

static int no_layers(const st__onnx_map_t *x, const char *why) {
  return strata_error(STRATA_EBADINPUT,
                      "%s: no transformer layers found (%s): the importer "
                      "takes each numbered module of a list, as "
                      "torch.onnx.export names nodes (\"/h.0/attn/MatMul\", "
                      "\"/h.1/...\"), for a layer, in order, each reading "
                      "the residual stream the one before wrote "
                      "(docs/import.md)",
                      x->where, why);
}

/* The one tensor written in ops [f, e) that an op after them reads (its
 * last reader, last[t], is at e or later); -1 if none or several.
 * Linear in the span, so finding every layer's output is linear in the
 * graph. */
static int span_output(const strata_graph_t *g, const int *last, int f, int e) {
  int out = -1;
  for (int op = f; op < e; op++)
    for (int i = 0; i < g->ops[op].n_out; i++) {
      int t = g->ops[op].out[i];
      if (last[t] < e || t == out) continue;
      if (out >= 0) return -1;
      out = t;
    }
  return out;
}

/* Whether ops [f, e) read t; with other >= 0, whether they read an
 * activation written before f other than t (into *other). */
static int span_reads(const strata_graph_t *g, const int *prod, int f, int e,
                      int t, int *other) {
  int found = 0;
  for (int op = f; op < e; op++)
    for (int i = 0; i < g->ops[op].n_in; i++) {
      int u = g->ops[op].in[i];
      if (u == t)
        found = 1;
      else if (other && prod[u] >= 0 && prod[u] < f)
        *other = u;
    }
  return found;
}

/* The residual stream into layer 0: what it reads from before it (an
 * activation or a graph input) of the shape of its output, and what
 * layer 1 (if any) does not read. */
static int stream_in(const strata_graph_t *g, const int *prod, const int *first,
                     int n, int out0) {
  int in = -1;
  for (int op = first[0]; op < first[1]; op++)
    for (int i = 0; i < g->ops[op].n_in; i++) {
      int u = g->ops[op].in[i];
      const strata_tensor_t *a = &g->tensors[u], *b = &g->tensors[out0];
      if (a->kind == STRATA_TENSOR_PARAM || prod[u] >= first[0] || u == in ||
          a->ndim != b->ndim || a->dtype != b->dtype ||
          memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof *a->shape) ||
          (n > 1 && span_reads(g, prod, first[1], first[2], u, NULL)))
        continue;
      if (in >= 0) return -1;
      in = u;
    }
  return in;
}

static int add_blocks(st__onnx_map_t *x, const scope_t *sc, int n,
                      const int *first, int *prod) {
  strata_graph_t *g = x->g;
  int rc = 0, prev = -1, *last = prod + g->n_tensors;
  for (int t = 0; t < g->n_tensors; t++)
    prod[t] = last[t] = -1;
  for (int op = 0; op < g->n_ops; op++) {
    for (int i = 0; i < g->ops[op].n_out; i++)
      prod[g->ops[op].out[i]] = op;
    for (int i = 0; i < g->ops[op].n_in; i++)
      last[g->ops[op].in[i]] = op;
  }
  for (int l = 0; l < n && !rc; l++) {
    int out = span_output(g, last, first[l], first[l + 1]);
    if (out < 0)
      return no_layers(x, "a layer's ops are read after it other "
                          "than through one output");
    int in = l ? prev : stream_in(g, prod, first, n, out);
    if (in < 0 || !span_reads(g, prod, first[l], first[l + 1], in, NULL))
      return no_layers(x, "a layer does not read one residual stream");
    char name[96];
    const char *base = sc->name[0] == '/' ? sc->name + 1 : sc->name;
    snprintf(name, sizeof name, "%.*s%d",
             (int)(sc->len - (size_t)(base - sc->name)), base, l);
    rc = strata_graph_add_block(g, name, first[l], first[l + 1] - first[l], 1,
                                in, out);
    rc = rc < 0 ? rc : 0;
    prev = out;
  }
  return rc;
}

static int find_layers(st__onnx_map_t *x) {
  int n_ops = x->g->n_ops, rc, n;
  int *layer = strata_malloc(((size_t)n_ops + 1) * sizeof *layer);
  int *first = strata_malloc(((size_t)n_ops + 2) * sizeof *first);
  int *prod = strata_malloc((2 * (size_t)x->g->n_tensors + 1) * sizeof *prod);
  scope_t sc;
  if (!layer || !first || !prod) {
    rc = strata_error(STRATA_ENOMEM, "out of memory reading %s", x->where);
    goto out;
  }
  if (!(n = pick_layers(x, layer, &sc)))
    rc = no_layers(x, "no node is named after a numbered module");
  else if (n > n_ops || spans(x, layer, n, first))
    rc = no_layers(x, "the numbered modules' nodes are not in order");
  else
    rc = add_blocks(x, &sc, n, first, prod);
out:
  strata_free(layer);
  strata_free(first);
  strata_free(prod);
  return rc;
}

/* ---- the whole ---- */

static int map_alloc(st__onnx_map_t *x) {
  size_t n = (size_t)x->m->n_values + 1;
  x->tensor = strata_malloc(4 * n * sizeof *x->tensor);
  x->wT = strata_calloc(2 * n + (size_t)x->m->n_nodes + 1, 1);
  if (!x->tensor || !x->wT)
    return strata_error(STRATA_ENOMEM, "out of memory reading %s", x->where);
  x->wsrc = x->tensor + n;
  x->data = x->wsrc + n;
  x->ival = x->data + n;
  x->cst = x->wT + n;
  x->done = x->cst + n;
  /* an initializer, or a Constant node's tensor (how exporters other
   * than torch, tf2onnx and onnx.helper graphs, often hold weights) */
  for (int v = 0; v < x->m->n_values; v++) {
    int init = x->m->values[v].init;
    x->tensor[v] = -1;
    x->wsrc[v] = init >= 0 || x->m->values[v].datum >= 0 ? v : -1;
    x->data[v] = x->m->values[v].datum;
    x->ival[v] = -1;
    x->cst[v] = init >= 0;
  }
  /* what reads nothing is a constant, marked before the patterns look
   * ahead at the nodes that read it */
  for (int k = 0; k < x->m->n_nodes; k++)
    for (int i = 0; !x->m->nodes[k].n_in && i < x->m->nodes[k].n_out; i++)
      if (x->m->nodes[k].out[i] >= 0) x->cst[x->m->nodes[k].out[i]] = 1;
  return 0;
}

static int build(st__onnx_map_t *x, const strata_gen_opts_t *ov) {
  int rc;
  if ((rc = map_alloc(x)) || (rc = batch_and_seq(x, ov))) return rc;
  for (int v = 0; v < x->m->n_values; v++)
    if (x->m->values[v].graph_input && x->m->values[v].n_use &&
        (rc = st__onnx_tensor(x, v, -1, STRATA_TENSOR_INPUT)) < 0)
      return rc;
  if ((rc = st__onnx_map_nodes(x))) return rc;
  x->n_mapped = x->g->n_ops;
  if (!x->g->n_ops)
    return strata_error(STRATA_EBADINPUT,
                        "%s: the graph computes nothing from its inputs",
                        x->where);
  if ((rc = add_loss(x)) || (rc = find_layers(x))) return rc;
  x->g->micro_batch = (int)x->batch;
  x->g->seq_len = (int)x->seq;
  if ((rc = strata_graph_validate(x->g))) {
    strata_error_prefix("%s", x->where);
    return rc;
  }
  return st__graph_fold(x->g, NULL);
}

static const char *base_name(const char *where) {
  const char *s = strrchr(where, '/');
  return s && s[1] ? s + 1 : where;
}

int strata_onnx_parse(const void *data, size_t len, const char *where,
                      const strata_gen_opts_t *overrides,
                      strata_graph_t **out) {
  st__onnx_model_t m;
  st__onnx_map_t x;
  int rc;
  *out = NULL;
  if (!where) where = "model.onnx";
  if ((rc = check_overrides(overrides, where))) return rc;
  if ((rc = st__onnx_read(data, len, where, &m))) return rc;
  memset(&x, 0, sizeof x);
  x.m = &m;
  x.where = where;
  x.dtype = overrides ? overrides->dtype : STRATA_DTYPE_COUNT;
  if (!(x.g = strata_graph_create(base_name(where))))
    rc = strata_error(STRATA_ENOMEM, "out of memory reading %s", where);
  else
    rc = build(&x, overrides);
  int mb = overrides ? overrides->micro_batch : 0;
  if (!rc && mb > 0 && !x.batch_name && mb != x.g->micro_batch) {
    strata_graph_t *g2 = NULL;
    rc = strata_graph_rebatch(x.g, mb, &g2);
    if (rc) strata_error_prefix("%s: micro-batch %d", where, mb);
    strata_graph_destroy(x.g);
    x.g = g2;
  }
  if (rc)
    strata_graph_destroy(x.g);
  else
    *out = x.g;
  strata_free(x.tensor);
  strata_free(x.wT);
  strata_free(x.op_node);
  strata_free(x.ints);
  st__onnx_free(&m);
  return rc;
}

int strata_onnx_load(const char *path, const strata_gen_opts_t *overrides,
                     strata_graph_t **out) {
  char *data = NULL;
  size_t len = 0;
  *out = NULL;
  int rc = strata_file_read(path, ST__ONNX_MAX_BYTES, &data, &len);
  if (rc) return rc;
  rc = strata_onnx_parse(data, len, path, overrides, out);
  strata_free(data);
  return rc;
}
