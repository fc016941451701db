/*
 * onnx_int.h - an ONNX model as the importer's files share it: the
 * reader (onnx_read.c), the one file that knows protobuf-c, turns the
 * file into these plain arrays; the mapper (onnx_map.c, with the shapes
 * of onnx_shape.c) turns them into ops, and onnx.c into a graph with
 * layers.  Every string points into the decoded message, which lives as
 * long as the model (st__onnx_free).
 *
 * A value is every name the graph mentions: a graph input, an
 * initializer, a node's output.  Its shape comes from the file (the
 * graph's inputs and outputs, value_info, an initializer's dims); a dim
 * given by name ("batch") keeps the name for the mapper to resolve.
 */
#ifndef STRATA_TRACES_ONNX_INT_H
#define STRATA_TRACES_ONNX_INT_H

#include <stddef.h>
#include <stdint.h>

#include "strata/traces.h"

/* The largest file read whole: protobuf's own limit on one message
 * (2 GiB), which is why bigger ONNX models keep their weights in
 * external files.  Decoding copies the weights once more: at most twice
 * the file in memory. */
#define ST__ONNX_MAX_BYTES ((size_t)2 << 30)

/* ONNX DataType values (onnx.proto's TensorProto.DataType). */
enum {
  ST__ONNX_FLOAT = 1,
  ST__ONNX_UINT8 = 2,
  ST__ONNX_INT8 = 3,
  ST__ONNX_UINT16 = 4,
  ST__ONNX_INT16 = 5,
  ST__ONNX_INT32 = 6,
  ST__ONNX_INT64 = 7,
  ST__ONNX_STRING = 8,
  ST__ONNX_BOOL = 9,
  ST__ONNX_FLOAT16 = 10,
  ST__ONNX_DOUBLE = 11,
  ST__ONNX_UINT32 = 12,
  ST__ONNX_UINT64 = 13,
  ST__ONNX_BFLOAT16 = 16,
  ST__ONNX_FLOAT8_FIRST = 17, /* the float8 kinds: 17 to 20 */
  ST__ONNX_FLOAT8_LAST = 20
};

#define ST__ONNX_NO_SHAPE (-1)
#define ST__ONNX_MAX_INTS                                                      \
  8 /* the longest integer constant worked out */ /* ndim of a value the file  \
                                                     gives no shape */

typedef struct {
  const char *name;
  int elem; /* ONNX DataType, 0: not given */
  int ndim; /* ST__ONNX_NO_SHAPE, or 0 to STRATA_MAX_DIMS */
  int wide; /* the file gives more than STRATA_MAX_DIMS dims */
  int64_t shape[STRATA_MAX_DIMS]; /* -1 where a dim is named or unknown */
  const char *dim_param[STRATA_MAX_DIMS]; /* the dim's name, or NULL */
  int init;        /* index into inits (an initializer), or -1 */
  int datum;       /* index into inits of its bytes (an initializer or a
                      Constant node's tensor), or -1 */
  int producer;    /* the node writing it, or -1 */
  int graph_input; /* a graph input that is no initializer */
  int graph_output;
  int use0, n_use; /* its readers: use_node[use0 .. use0 + n_use) */
} st__onnx_value_t;

typedef struct {
  const char *name;
  int type; /* AttributeType: 1 FLOAT, 2 INT, 7 INTS, ... */
  int64_t i;
  double f;
  const int64_t *ints;
  size_t n_ints;
  /* a tensor attribute (ConstantOfShape's value): its DataType (0: none)
   * and, where it holds one integer (an integer or boolean type), that
   * integer (t_int set) */
  int t_elem, t_int;
  int64_t t_i;
} st__onnx_attr_t;

typedef struct {
  const char *name, *op, *domain;
  int n_in, n_out;
  int *in, *out; /* value indices; -1 for an omitted optional input */
  int n_attr;
  st__onnx_attr_t *attr;
} st__onnx_node_t;

/* A tensor's bytes as the file holds them: raw_data, or the typed
 * arrays (int64_data, int32_data), or elsewhere (external data). */
typedef struct {
  int value; /* its value */
  const uint8_t *raw;
  size_t raw_len;
  const int64_t *i64;
  size_t n_i64;
  const int32_t *i32;
  size_t n_i32;
  int external; /* data_location EXTERNAL: the bytes are in another file */
} st__onnx_init_t;

typedef struct {
  const char *where; /* the file, for messages */
  int64_t ir_version, opset;
  const char *producer;
  int n_values, n_nodes, n_inits; /* inits: initializers, then the
                                     Constant nodes' tensors */
  st__onnx_value_t *values;
  st__onnx_node_t *nodes;
  st__onnx_init_t *inits;
  int *use_node; /* readers of each value, see use0 */
  void *msg;     /* the decoded message (private to onnx_read.c) */
} st__onnx_model_t;

/* Decode len bytes into *m.  0, or STRATA_EBADINPUT naming `where` and
 * what is wrong (not ONNX, truncated, no graph, a bad dim, a name given
 * twice, a node reading a value that nothing writes before it), or
 * STRATA_ENOMEM.  On failure *m holds nothing to free. */
int st__onnx_read(const void *data, size_t len, const char *where,
                  st__onnx_model_t *m);
void st__onnx_free(st__onnx_model_t *m);

/* The attribute `name` of node n, or NULL. */
const st__onnx_attr_t *st__onnx_attr(const st__onnx_node_t *n,
                                     const char *name);

/* ---- the mapper's state, shared by onnx_map.c (nodes to ops) and
 * onnx.c (inputs, layers, the loss) ---- */
typedef struct {
  st__onnx_model_t *m;
  strata_graph_t *g;
  const char *where;
  strata_dtype_t dtype; /* of every float tensor; STRATA_DTYPE_COUNT: the
                           file's */
  int64_t batch, seq;   /* what named dims resolve to */
  const char *batch_name, *seq_name; /* those names (NULL: none) */
  /* per value: its tensor (-1: none yet); the value whose parameter it
   * is (an initializer, or an Identity output of one: a parameter of its
   * own; -1: none) and whether it is that one transposed; the inits
   * entry holding its bytes (-1); constant: no tensor, folded */
  int *tensor, *wsrc, *data;
  unsigned char *wT, *cst;
  unsigned char *done; /* per node: mapped as part of another's op */
  int *op_node;        /* per op: the node it was made from */
  int op_cap;
  int n_mapped;            /* ops made from nodes (the loss comes after them) */
  int tables[4], n_tables; /* embedding tables (values), for a tied head */
  /* small integer constants worked out from the shapes (Shape, then
   * Gather, Add, Mul, Concat, ... of it), which a dynamic export's
   * Reshape and Slice read: value -> slot of ints (-1: none) */
  int *ival;
  struct st__onnx_ints {
    int n;
    int64_t v[ST__ONNX_MAX_INTS];
  } * ints;
  int n_ints, cap_ints;
} st__onnx_map_t;

/* The graph tensor of value v, created from the file's type and shape
 * (named dims resolved) if it has none yet; like (-1: none) lends its
 * shape and type where the file gives none.  kind: INPUT or ACTIVATION. */
int st__onnx_tensor(st__onnx_map_t *x, int v, int like,
                    strata_tensor_kind_t kind);
/* The shape of value v with its named dims resolved (onnx_shape.c); 0,
 * or STRATA_EBADINPUT saying what is missing. */
int st__onnx_shape(const st__onnx_map_t *x, int v, int *ndim, int64_t *shape);
/* Fill in the shapes of node's outputs that the file does not give,
 * where ONNX's operator rules and known inputs fix them, and the values
 * of small integer constants computed from shapes.  0, or STRATA_ENOMEM. */
int st__onnx_infer(st__onnx_map_t *x, int node);
/* Up to 64 integers of constant v (from the file or worked out); their
 * count, or -1. */
int st__onnx_ints(const st__onnx_map_t *x, int v, int64_t *out);
/* Map every node to ops (onnx_map.c), in order. */
int st__onnx_map_nodes(st__onnx_map_t *x);

#endif
