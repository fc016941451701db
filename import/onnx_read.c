/*
 * onnx_read.c - the ONNX reader's protobuf boundary: a file's bytes
 * decoded by protobuf-c (with the subset of the schema in onnx.proto)
 * into the plain arrays of onnx_int.h, checked as far as the format
 * itself goes.
 *
 * Only this file includes the generated code, so protobuf-c's
 * conventions (a NULL message for any decoding failure, its own
 * allocator) are turned into Strata's here: decoding allocates through
 * strata_malloc, so a failed allocation is STRATA_ENOMEM, and any other
 * failure is a file that is not a whole protobuf message.  What a
 * decoder accepts is looser than ONNX (an empty file is an empty
 * message), so the model must also have an ir_version and a graph.
 * Every value a node reads must be a graph input, an initializer or an
 * earlier node's output: ONNX keeps nodes in topological order, and the
 * mapper relies on it.  Names go into one open-addressing hash table
 * (XXH64, linear probing, at most half full), so reading is linear in the
 * graph.  Weight bytes are never looked at here; raw_data is only handed
 * on (the mapper compares a head with a transposed embedding table).
 */
#include <string.h>

#include "import/onnx.pb-c.h"
#include "import/onnx_int.h"
#include "traces/traces_int.h"

#define MAX_DIM ((int64_t)1 << 40) /* a dim beyond any model's */

typedef struct {
  st__onnx_model_t *m;
  int *slot; /* value index + 1, 0 empty */
  int cap;
} reader_t;

/* An absent optional string is NULL in protobuf-c's proto2 messages. */
static const char *str(const char *s) {
  return s ? s : "";
}

static void *pb_alloc(void *data, size_t size) {
  void *p = strata_malloc(size);
  if (!p) *(int *)data = 1;
  return p;
}

static void pb_free(void *data, void *p) {
  (void)data;
  strata_free(p);
}

static int find(const reader_t *r, const char *name) {
  uint64_t h = strata_hash64(name, strlen(name), 0);
  for (int k = (int)(h & (uint64_t)(r->cap - 1)); r->slot[k];
       k = (k + 1) & (r->cap - 1))
    if (!strcmp(r->m->values[r->slot[k] - 1].name, name)) return r->slot[k] - 1;
  return -1;
}

/* A new value named name (its index), or -1 if the name is taken. */
static int add_value(reader_t *r, const char *name) {
  st__onnx_model_t *m = r->m;
  if (find(r, name) >= 0) return -1;
  int i = m->n_values++;
  st__onnx_value_t *v = &m->values[i];
  memset(v, 0, sizeof *v);
  v->name = name;
  v->ndim = ST__ONNX_NO_SHAPE;
  v->init = v->producer = v->datum = -1;
  uint64_t h = strata_hash64(name, strlen(name), 0);
  int k = (int)(h & (uint64_t)(r->cap - 1));
  while (r->slot[k])
    k = (k + 1) & (r->cap - 1);
  r->slot[k] = i + 1;
  return i;
}

static int bad_dim(const st__onnx_model_t *m, const char *name, int d,
                   int64_t dim) {
  return strata_error(STRATA_EBADINPUT,
                      "%s: '%s' has dim %d of %lld, not a size (0 to 2^40)",
                      m->where, name, d, (long long)dim);
}

/* Dims of an initializer. */
static int set_dims(const st__onnx_model_t *m, st__onnx_value_t *v,
                    const int64_t *dims, size_t n) {
  v->wide = n > STRATA_MAX_DIMS;
  v->ndim = v->wide ? STRATA_MAX_DIMS : (int)n;
  for (size_t d = 0; d < n; d++)
    if (dims[d] < 0 || dims[d] > MAX_DIM)
      return bad_dim(m, v->name, (int)d, dims[d]);
  for (int d = 0; d < v->ndim; d++)
    v->shape[d] = dims[d];
  return 0;
}

/* The type of a value_info, graph input or output (kept only when it
 * is a tensor type). */
static int set_type(const st__onnx_model_t *m, st__onnx_value_t *v,
                    const StOnnx__ValueInfoProto *vi) {
  const StOnnx__TypeProto__Tensor *tt = vi->type ? vi->type->tensor_type : NULL;
  if (!tt || v->init >= 0) return 0;
  if (tt->has_elem_type) v->elem = tt->elem_type;
  if (!tt->shape) return 0;
  size_t n = tt->shape->n_dim;
  v->wide = n > STRATA_MAX_DIMS;
  v->ndim = v->wide ? STRATA_MAX_DIMS : (int)n;
  for (size_t d = 0; d < n; d++) {
    const StOnnx__TensorShapeProto__Dimension *dm = tt->shape->dim[d];
    int64_t x = dm->has_dim_value ? dm->dim_value : -1;
    if (dm->has_dim_value && (x < 0 || x > MAX_DIM))
      return bad_dim(m, v->name, (int)d, x);
    if (d >= STRATA_MAX_DIMS) continue;
    v->shape[d] = x;
    v->dim_param[d] =
        !dm->has_dim_value && str(dm->dim_param)[0] ? dm->dim_param : NULL;
  }
  return 0;
}

static int taken(const st__onnx_model_t *m, const char *name,
                 const char *what) {
  if (!name[0])
    return strata_error(STRATA_EBADINPUT, "%s: %s without a name", m->where,
                        what);
  return strata_error(STRATA_EBADINPUT,
                      "%s: the name '%s' is given to two values (an ONNX "
                      "graph names each value once)",
                      m->where, name);
}

/* Value v's bytes, type and dims: those of tensor t. */
static int add_datum(st__onnx_model_t *m, int v, const StOnnx__TensorProto *t) {
  st__onnx_init_t *in = &m->inits[m->n_inits];
  m->values[v].datum = m->n_inits++;
  m->values[v].elem = t->has_data_type ? t->data_type : 0;
  in->value = v;
  in->raw = t->has_raw_data ? t->raw_data.data : NULL;
  in->raw_len = t->has_raw_data ? t->raw_data.len : 0;
  in->i64 = t->int64_data;
  in->n_i64 = t->n_int64_data;
  in->i32 = t->int32_data;
  in->n_i32 = t->n_int32_data;
  in->external = t->has_data_location && t->data_location == 1;
  return set_dims(m, &m->values[v], t->dims, t->n_dims);
}

/* Graph inputs and initializers (an input that is also an initializer,
 * as files before IR version 4 list them, is the initializer). */
static int read_sources(reader_t *r, const StOnnx__GraphProto *g) {
  st__onnx_model_t *m = r->m;
  int rc;
  for (size_t i = 0; i < g->n_initializer; i++) {
    const StOnnx__TensorProto *t = g->initializer[i];
    const char *name = str(t->name);
    int v = name[0] ? add_value(r, name) : -1;
    if (v < 0) return taken(m, name, "an initializer");
    m->values[v].init = m->n_inits;
    if ((rc = add_datum(m, v, t))) return rc;
  }
  for (size_t i = 0; i < g->n_input; i++) {
    const char *name = str(g->input[i]->name);
    int v = find(r, name);
    if (v >= 0 && m->values[v].init >= 0) continue;
    if (v >= 0 || !name[0] || (v = add_value(r, name)) < 0)
      return taken(m, name, "a graph input");
    m->values[v].graph_input = 1;
    if ((rc = set_type(m, &m->values[v], g->input[i]))) return rc;
  }
  return 0;
}

/* A tensor attribute's type, and its value where it is one integer
 * (ConstantOfShape's value: a one-element tensor). */
static void tensor_int(const StOnnx__TensorProto *t, st__onnx_attr_t *a) {
  int e = t->has_data_type ? t->data_type : 0;
  size_t es = e == ST__ONNX_INT64 ? 8 : e == ST__ONNX_INT32 ? 4 : 0;
  a->t_elem = e;
  if (e == ST__ONNX_BOOL || e == ST__ONNX_UINT8 || e == ST__ONNX_INT8) es = 1;
  if (es && t->has_raw_data && t->raw_data.len == es) {
    int64_t v8 = 0;
    int32_t v4 = 0;
    if (es == 8) memcpy(&v8, t->raw_data.data, 8);
    if (es == 4) memcpy(&v4, t->raw_data.data, 4), v8 = v4;
    if (es == 1)
      v8 = e == ST__ONNX_INT8 ? (int8_t)t->raw_data.data[0]
                              : t->raw_data.data[0];
    a->t_int = 1;
    a->t_i = v8;
  } else if (es == 8 && !t->has_raw_data && t->n_int64_data == 1) {
    a->t_int = 1;
    a->t_i = t->int64_data[0];
  } else if (es && es < 8 && !t->has_raw_data && t->n_int32_data == 1) {
    a->t_int = 1;
    a->t_i = t->int32_data[0];
  }
}

static int read_node(reader_t *r, const StOnnx__NodeProto *p,
                     st__onnx_node_t *n, int idx) {
  st__onnx_model_t *m = r->m;
  n->name = str(p->name);
  n->op = str(p->op_type);
  n->domain = str(p->domain);
  n->n_in = (int)p->n_input;
  n->n_out = (int)p->n_output;
  n->n_attr = (int)p->n_attribute;
  n->in = strata_calloc(p->n_input + p->n_output + 1, sizeof *n->in);
  n->attr = strata_calloc(p->n_attribute + 1, sizeof *n->attr);
  if (!n->in || !n->attr)
    return strata_error(STRATA_ENOMEM, "out of memory reading %s", m->where);
  n->out = n->in + p->n_input;
  for (size_t i = 0; i < p->n_input; i++) {
    n->in[i] = p->input[i][0] ? find(r, p->input[i]) : -1;
    if (p->input[i][0] && n->in[i] < 0)
      return strata_error(STRATA_EBADINPUT,
                          "%s: node '%s' (%s) reads '%s', which no graph "
                          "input, initializer or earlier node gives",
                          m->where, n->name, n->op, p->input[i]);
  }
  for (size_t i = 0; i < p->n_output; i++) {
    n->out[i] = -1;
    if (!p->output[i][0]) continue;
    if ((n->out[i] = add_value(r, p->output[i])) < 0)
      return taken(m, p->output[i], "a node output");
    m->values[n->out[i]].producer = idx;
  }
  if (!strcmp(n->op, "Constant") && p->n_output == 1 && n->out[0] >= 0)
    for (size_t i = 0; i < p->n_attribute; i++)
      if (!strcmp(str(p->attribute[i]->name), "value") && p->attribute[i]->t) {
        int rc = add_datum(m, n->out[0], p->attribute[i]->t);
        if (rc) return rc;
        break;
      }
  for (size_t i = 0; i < p->n_attribute; i++) {
    const StOnnx__AttributeProto *a = p->attribute[i];
    n->attr[i] = (st__onnx_attr_t){str(a->name),
                                   a->has_type ? a->type : 0,
                                   a->i,
                                   a->f,
                                   a->ints,
                                   a->n_ints,
                                   0,
                                   0,
                                   0};
    if (a->t) tensor_int(a->t, &n->attr[i]);
  }
  return 0;
}

/* Shapes of node outputs and graph outputs, and each value's readers. */
static int read_shapes_and_uses(reader_t *r, const StOnnx__GraphProto *g) {
  st__onnx_model_t *m = r->m;
  int rc, v, total = 0;
  for (size_t i = 0; i < g->n_value_info + g->n_output; i++) {
    const StOnnx__ValueInfoProto *vi =
        i < g->n_value_info ? g->value_info[i] : g->output[i - g->n_value_info];
    if ((v = find(r, str(vi->name))) < 0) continue;
    if (i >= g->n_value_info) m->values[v].graph_output = 1;
    if ((rc = set_type(m, &m->values[v], vi))) return rc;
  }
  for (int n = 0; n < m->n_nodes; n++)
    for (int i = 0; i < m->nodes[n].n_in; i++)
      if (m->nodes[n].in[i] >= 0) m->values[m->nodes[n].in[i]].n_use++, total++;
  m->use_node = strata_malloc(((size_t)total + 1) * sizeof *m->use_node);
  if (!m->use_node)
    return strata_error(STRATA_ENOMEM, "out of memory reading %s", m->where);
  for (int i = 0, at = 0; i < m->n_values; i++) {
    m->values[i].use0 = at;
    at += m->values[i].n_use;
    m->values[i].n_use = 0;
  }
  for (int n = 0; n < m->n_nodes; n++)
    for (int i = 0; i < m->nodes[n].n_in; i++) {
      st__onnx_value_t *x =
          m->nodes[n].in[i] >= 0 ? &m->values[m->nodes[n].in[i]] : NULL;
      if (x) m->use_node[x->use0 + x->n_use++] = n;
    }
  return 0;
}

static int64_t default_opset(const StOnnx__ModelProto *p) {
  for (size_t i = 0; i < p->n_opset_import; i++) {
    const StOnnx__OperatorSetIdProto *o = p->opset_import[i];
    if (!str(o->domain)[0] || !strcmp(o->domain, "ai.onnx")) return o->version;
  }
  return 0;
}

static int read_graph(reader_t *r, const StOnnx__GraphProto *g) {
  st__onnx_model_t *m = r->m;
  size_t n = g->n_initializer + g->n_input;
  int rc;
  for (size_t i = 0; i < g->n_node; i++)
    n += g->node[i]->n_output;
  if (n > (1u << 26) || g->n_node > (1u << 26))
    return strata_error(STRATA_EBADINPUT, "%s: %zu values, more than 2^26",
                        m->where, n);
  for (r->cap = 64; (size_t)r->cap < 2 * n + 2; r->cap *= 2) {
  }
  r->slot = strata_calloc((size_t)r->cap, sizeof *r->slot);
  m->values = strata_calloc(n + 1, sizeof *m->values);
  m->inits = strata_calloc(g->n_initializer + g->n_node + 1, sizeof *m->inits);
  m->nodes = strata_calloc(g->n_node + 1, sizeof *m->nodes);
  if (!r->slot || !m->values || !m->inits || !m->nodes)
    return strata_error(STRATA_ENOMEM, "out of memory reading %s", m->where);
  if ((rc = read_sources(r, g))) return rc;
  for (size_t i = 0; i < g->n_node; i++) {
    m->n_nodes = (int)i + 1;
    if ((rc = read_node(r, g->node[i], &m->nodes[i], (int)i))) return rc;
  }
  return read_shapes_and_uses(r, g);
}

static int decode(const void *data, size_t len, const char *where,
                  StOnnx__ModelProto **out) {
  int oom = 0;
  ProtobufCAllocator al = {pb_alloc, pb_free, &oom};
  if (len > ST__ONNX_MAX_BYTES)
    return strata_error(STRATA_EBADINPUT,
                        "%s: %zu bytes, more than an ONNX file holds (2 "
                        "GiB, protobuf's limit; a bigger model keeps its "
                        "weights in external data files)",
                        where, len);
  *out = st_onnx__model_proto__unpack(&al, len, data);
  if (*out) return 0;
  if (oom)
    return strata_error(STRATA_ENOMEM, "out of memory reading %s", where);
  return strata_error(STRATA_EBADINPUT,
                      "%s: not an ONNX model: the bytes are no protobuf "
                      "message (truncated, or another kind of file)",
                      where);
}

int st__onnx_read(const void *data, size_t len, const char *where,
                  st__onnx_model_t *m) {
  StOnnx__ModelProto *p = NULL;
  reader_t r = {m, NULL, 0};
  memset(m, 0, sizeof *m);
  m->where = where;
  int rc = decode(data, len, where, &p);
  if (rc) return rc;
  m->msg = p;
  if (!p->has_ir_version || !p->graph) {
    rc = strata_error(STRATA_EBADINPUT,
                      "%s: not an ONNX model: %s (a ModelProto has an "
                      "ir_version and a graph)",
                      where, !p->has_ir_version ? "no ir_version" : "no graph");
    goto out;
  }
  m->ir_version = p->ir_version;
  m->opset = default_opset(p);
  m->producer = str(p->producer_name);
  rc = read_graph(&r, p->graph);
out:
  strata_free(r.slot);
  if (rc) st__onnx_free(m);
  return rc;
}

void st__onnx_free(st__onnx_model_t *m) {
  int oom = 0;
  ProtobufCAllocator al = {pb_alloc, pb_free, &oom};
  for (int i = 0; m->nodes && i < m->n_nodes; i++) {
    strata_free(m->nodes[i].in);
    strata_free(m->nodes[i].attr);
  }
  strata_free(m->nodes);
  strata_free(m->values);
  strata_free(m->inits);
  strata_free(m->use_node);
  if (m->msg) st_onnx__model_proto__free_unpacked(m->msg, &al);
  memset(m, 0, sizeof *m);
}

const st__onnx_attr_t *st__onnx_attr(const st__onnx_node_t *n,
                                     const char *name) {
  for (int i = 0; i < n->n_attr; i++)
    if (!strcmp(n->attr[i].name, name)) return &n->attr[i];
  return NULL;
}
