/*
 * trace_write.c - serialise a graph as a trace file (format v1,
 * docs/trace-format.md).
 *
 * The text is written by hand rather than through cJSON_Print so that the
 * layout suits people and diffs: one tensor, op or block per line, two-space
 * indent, keys in a fixed order, optional attributes only when set.  The
 * output is a pure function of the graph and every number is printed so
 * that it reads back to the same value, which is what makes
 * write(parse(write(g))) == write(g) byte for byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traces/traces_int.h"

static void put_str(strata_buf_t *b, const char *s) {
  strata_buf_puts(b, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      strata_buf_printf(b, "\\%c", *p);
    else if (*p < 0x20)
      strata_buf_printf(b, "\\u%04x", *p);
    else
      strata_buf_append(b, p, 1);
  }
  strata_buf_puts(b, "\"");
}

/* The shortest %g form that reads back as exactly v. */
static void put_num(strata_buf_t *b, double v) {
  char s[40];
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(s, sizeof s, "%.*g", prec, v);
    if (strtod(s, NULL) == v) break;
  }
  strata_buf_puts(b, s);
}

/* The variants and mixture of experts: the fields that are set. */
static void put_variants(strata_buf_t *b, const strata_graph_t *g) {
  static const char *flags[] = {"qkv_bias",    "out_bias",   "qk_norm",
                                "expert_bias", "qk_l2_norm", "router_sigmoid",
                                "mlp_bias",    "attn_sinks"};
  const int fl[] = {g->hp.qkv_bias,    g->hp.out_bias,     g->hp.qk_norm == 1,
                    g->hp.expert_bias, g->hp.qk_norm == 2, g->hp.router_sigmoid,
                    g->hp.mlp_bias,    g->hp.attn_sinks};
#define PUT_INT_(f)                                                            \
  if (g->hp.f) strata_buf_printf(b, ", \"%s\": %d", #f, g->hp.f);
#define PUT_NUM_(f)                                                            \
  if (g->hp.f > 0) {                                                           \
    strata_buf_puts(b, ", \"" #f "\": ");                                      \
    put_num(b, g->hp.f);                                                       \
  }
  ST__HP_INTS(PUT_INT_)
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
    if (fl[i]) strata_buf_printf(b, ", \"%s\": true", flags[i]);
  ST__HP_NUMS(PUT_NUM_)
#undef PUT_INT_
#undef PUT_NUM_
}

/* "rope_scaling": {"type": "llama3", "factor": 8, ...}, when scaled. */
static void put_rope_scaling(strata_buf_t *b, const strata_graph_t *g) {
  const strata_rope_scaling_t *r = &g->hp.rope_scaling;
  const char *names[] = {"factor", "low", "high", "mscale", "mscale_all"};
  const double v[] = {r->factor, r->low, r->high, r->mscale, r->mscale_all};
  if (!strata_rope_scaling_name(r->type) || r->type == 0) return;
  strata_buf_printf(b, ", \"rope_scaling\": {\"type\": \"%s\"",
                    strata_rope_scaling_name(r->type));
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    if (v[i] > 0) {
      strata_buf_printf(b, ", \"%s\": ", names[i]);
      put_num(b, v[i]);
    }
  if (r->original > 0) strata_buf_printf(b, ", \"original\": %d", r->original);
  if (r->unrounded) strata_buf_puts(b, ", \"unrounded\": true");
  if (r->full_only) strata_buf_puts(b, ", \"full_only\": true");
  strata_buf_puts(b, "}");
}

static void put_model(strata_buf_t *b, const strata_graph_t *g) {
  strata_buf_puts(b, "  \"model\": {\"family\": ");
  put_str(b, g->hp.family);
  strata_buf_printf(b,
                    ", \"layers\": %d, \"hidden\": %d, \"heads\": %d, "
                    "\"kv_heads\": %d, \"ffn\": %d, \"vocab\": %d, "
                    "\"max_seq\": %d, \"flash_attention\": %s, "
                    "\"dropout\": %s",
                    g->hp.layers, g->hp.hidden, g->hp.heads, g->hp.kv_heads,
                    g->hp.ffn, g->hp.vocab, g->hp.max_seq,
                    g->hp.flash_attention ? "true" : "false",
                    g->hp.dropout ? "true" : "false");
  put_variants(b, g);
  put_rope_scaling(b, g);
  strata_buf_puts(b, "},\n");
}

static int has_model(const strata_graph_t *g) {
  return g->hp.family[0] || g->hp.layers || g->hp.hidden || g->hp.heads ||
         g->hp.vocab;
}

static const char *const tensor_kinds[] = {"input", "param", "activation"};

static void put_tensor(strata_buf_t *b, const strata_tensor_t *t) {
  strata_buf_puts(b, "    {\"id\": ");
  put_str(b, t->name);
  strata_buf_puts(b, ", \"shape\": [");
  for (int i = 0; i < t->ndim; i++)
    strata_buf_printf(b, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
  strata_buf_printf(
      b, "], \"dtype\": \"%s\", \"kind\": \"%s\"}", strata_dtype_name(t->dtype),
      (unsigned)t->kind <= STRATA_TENSOR_ACTIVATION ? tensor_kinds[t->kind]
                                                    : "?");
}

static void put_ids(strata_buf_t *b, const strata_graph_t *g, int n,
                    const int *idx) {
  strata_buf_puts(b, "[");
  for (int i = 0; i < n; i++) {
    if (i) strata_buf_puts(b, ", ");
    put_str(b, g->tensors[idx[i]].name);
  }
  strata_buf_puts(b, "]");
}

/* axis, start, end, perm, window and flops, where the kind uses them. */
static void put_shape_attrs(strata_buf_t *b, const strata_graph_t *g,
                            const strata_op_t *op) {
  strata_op_kind_t k = op->kind;
  if (k == STRATA_OP_SPLIT || k == STRATA_OP_SLICE || k == STRATA_OP_CONCAT ||
      op->axis)
    strata_buf_printf(b, ", \"axis\": %d", op->axis);
  if (k == STRATA_OP_SLICE || op->start || op->end)
    strata_buf_printf(b, ", \"start\": %lld, \"end\": %lld",
                      (long long)op->start, (long long)op->end);
  if (k == STRATA_OP_PERMUTE) {
    int n = op->n_in > 0 ? g->tensors[op->in[0]].ndim : 0;
    strata_buf_puts(b, ", \"perm\": [");
    for (int i = 0; i < n; i++)
      strata_buf_printf(b, "%s%d", i ? ", " : "", op->perm[i]);
    strata_buf_puts(b, "]");
  }
  if (op->window) strata_buf_printf(b, ", \"window\": %d", op->window);
  if (k == STRATA_OP_GENERIC && op->flops != STRATA_FLOPS_UNSET) {
    strata_buf_puts(b, ", \"flops\": ");
    put_num(b, op->flops);
  }
}

static void put_op(strata_buf_t *b, const strata_graph_t *g,
                   const strata_op_t *op) {
  strata_buf_puts(b, "    {\"id\": ");
  put_str(b, op->name);
  strata_buf_printf(
      b, ", \"kind\": \"%s\", \"inputs\": ", strata_op_kind_name(op->kind));
  put_ids(b, g, op->n_in, op->in);
  strata_buf_puts(b, ", \"outputs\": ");
  put_ids(b, g, op->n_out, op->out);
  if (op->layer >= 0)
    strata_buf_printf(b, ", \"layer\": %d", op->layer);
  else
    strata_buf_puts(b, ", \"layer\": null");
  if (op->heads) strata_buf_printf(b, ", \"heads\": %d", op->heads);
  if (op->kv_heads) strata_buf_printf(b, ", \"kv_heads\": %d", op->kv_heads);
  if (op->dropout_p != 0) {
    strata_buf_puts(b, ", \"dropout_p\": ");
    put_num(b, op->dropout_p);
  }
  if (op->causal) strata_buf_puts(b, ", \"causal\": true");
  put_shape_attrs(b, g, op);
  if (op->topk) strata_buf_printf(b, ", \"topk\": %d", op->topk);
  if (op->v_dim) strata_buf_printf(b, ", \"v_dim\": %d", op->v_dim);
  if (op->capacity > 0) {
    strata_buf_puts(b, ", \"capacity\": ");
    put_num(b, op->capacity);
  }
  strata_buf_puts(b, "}");
}

static void put_block(strata_buf_t *b, const strata_graph_t *g,
                      const strata_block_t *bl) {
  strata_buf_puts(b, "    {\"id\": ");
  put_str(b, bl->name);
  strata_buf_puts(b, ", \"ops\": [");
  put_str(b, g->ops[bl->first_op].name);
  strata_buf_puts(b, ", ");
  put_str(b, g->ops[bl->first_op + bl->n_ops - 1].name);
  strata_buf_printf(b, "], \"repeat\": %d, \"input\": ", bl->repeat);
  put_str(b, g->tensors[bl->input].name);
  strata_buf_puts(b, ", \"output\": ");
  put_str(b, g->tensors[bl->output].name);
  strata_buf_puts(b, "}");
}

/* Write "  \"key\": [\n" items ",\n"-separated "\n  ]". */
#define PUT_LIST(b, key, n, put_item, last)                                    \
  do {                                                                         \
    strata_buf_puts(b, "  \"" key "\": [");                                    \
    for (int i_ = 0; i_ < (n); i_++) {                                         \
      strata_buf_puts(b, i_ ? ",\n" : "\n");                                   \
      put_item;                                                                \
    }                                                                          \
    strata_buf_puts(b, (n) ? "\n  ]" : "]");                                   \
    strata_buf_puts(b, (last) ? "\n" : ",\n");                                 \
  } while (0)

int strata_trace_write(const strata_graph_t *g, char **text, size_t *len) {
  strata_buf_t b;
  strata_buf_init(&b);
  strata_buf_printf(&b,
                    "{\n  \"format\": \"strata-trace\",\n"
                    "  \"version\": %d,\n  \"name\": ",
                    STRATA_TRACE_VERSION);
  put_str(&b, g->name);
  strata_buf_printf(&b, ",\n  \"micro_batch\": %d,\n  \"seq_len\": %d,\n",
                    g->micro_batch, g->seq_len);
  if (has_model(g)) put_model(&b, g);
  PUT_LIST(&b, "tensors", g->n_tensors, put_tensor(&b, &g->tensors[i_]), 0);
  PUT_LIST(&b, "ops", g->n_ops, put_op(&b, g, &g->ops[i_]), 0);
  PUT_LIST(&b, "blocks", g->n_blocks, put_block(&b, g, &g->blocks[i_]), 1);
  strata_buf_puts(&b, "}\n");
  if (b.oom) {
    strata_buf_free(&b);
    return strata_error(STRATA_ENOMEM, "out of memory writing trace '%s'",
                        g->name);
  }
  *text = strata_buf_steal(&b, len);
  return 0;
}
