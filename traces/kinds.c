/*
 * kinds.c - what each operator kind means: its name, the shapes it
 * accepts, what it saves for backward and how many FLOPs it costs.
 *
 * Everything about a kind lives here, in switches over the kind, so that
 * adding a kind is one place to edit.  The saved-for-backward rules follow
 * Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
 * Transformer Models"): summed over a GPT layer with dropout and without
 * flash attention they give exactly s*b*h*(34 + 5*a*s/h) bytes at 2 bytes
 * per element.  FLOP counts follow Megatron-LM's accounting (Narayanan et
 * al. 2021): 2 FLOPs per multiply-add, backward twice the forward; causal
 * attention counts only the query-key pairs under its mask (half of them),
 * as Megatron-Bridge's flop_utils, Megatron-LM's later
 * num_floating_point_operations and MLPerf count it; elementwise kinds cost
 * a few FLOPs per element
 * (the constants below), which the papers ignore and which stay well under
 * 1% of a transformer's total.
 *
 * Mixture of experts (Megatron-Core's MoE layer with the all-to-all token
 * dispatcher and grouped GEMMs): the router saves its input (for its
 * weight gradient) and its fp32 scores (the softmax or sigmoid and top-k
 * backward); dispatch saves only its int32 permutation map, one entry per
 * token copy; each grouped GEMM its input; combine only the scores:
 * Megatron-Core multiplies each copy by its score inside the experts'
 * activation (experts.py, activation_func_with_probs), whose saved input
 * gives the scores' gradient, so no output copy is kept for it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "traces/traces_int.h"

/* ---- names ---- */

static const char *const op_names[] = {
#define NAME_(e, n) n,
    STRATA_OP_MAP(NAME_)
#undef NAME_
};

static const struct {
  const char *name;
  int size;
} dtypes[] = {
#define DT_(e, n, b) {n, b},
    STRATA_DTYPE_MAP(DT_)
#undef DT_
};

const char *strata_op_kind_name(strata_op_kind_t k) {
  return (unsigned)k < STRATA_OP_COUNT ? op_names[k] : "?";
}

int strata_op_kind_parse(const char *name, strata_op_kind_t *out) {
  for (int k = 0; k < STRATA_OP_COUNT; k++)
    if (!strcmp(name, op_names[k])) {
      *out = (strata_op_kind_t)k;
      return 0;
    }
  return STRATA_ENOTFOUND;
}

const char *strata_dtype_name(strata_dtype_t d) {
  return (unsigned)d < STRATA_DTYPE_COUNT ? dtypes[d].name : "?";
}

int strata_dtype_parse(const char *name, strata_dtype_t *out) {
  for (int d = 0; d < STRATA_DTYPE_COUNT; d++)
    if (!strcmp(name, dtypes[d].name)) {
      *out = (strata_dtype_t)d;
      return 0;
    }
  return STRATA_ENOTFOUND;
}

int strata_dtype_size(strata_dtype_t d) {
  return (unsigned)d < STRATA_DTYPE_COUNT ? dtypes[d].size : 0;
}

/* ---- tensors ---- */

int64_t strata_tensor_numel(const strata_tensor_t *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++)
    n *= t->shape[i];
  return n;
}

int64_t strata_tensor_bytes(const strata_tensor_t *t) {
  return strata_tensor_numel(t) * strata_dtype_size(t->dtype);
}

const char *st__shape_str(const strata_tensor_t *t, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = '\0';
  n += (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < t->ndim && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? "," : "",
                          (long long)t->shape[i]);
  if (n < size) snprintf(buf + n, size - n, "]");
  return buf;
}

/* ---- saved for backward ---- */

unsigned strata_op_saves(const strata_graph_t *g, const strata_op_t *op) {
  (void)g;
  switch (op->kind) {
  case STRATA_OP_LAYERNORM:
  case STRATA_OP_RMSNORM:
  case STRATA_OP_LINEAR:
  case STRATA_OP_GELU:
  case STRATA_OP_SILU:
  case STRATA_OP_RELU:
  case STRATA_OP_SWIGLU:
  case STRATA_OP_CROSS_ENTROPY:
  case STRATA_OP_GROUPED_LINEAR:
    return STRATA_SAVE_IN(0);
  case STRATA_OP_MOE_ROUTER:
    return STRATA_SAVE_IN(0) | STRATA_SAVE_OUT(0);
  case STRATA_OP_SIGMOID: /* its backward is y (1 - y) */
    return STRATA_SAVE_OUT(0);
  case STRATA_OP_MOE_COMBINE:
    /* the scores only: Megatron-Core weights each copy by its score in
     * the experts' activation (activation_func_with_probs, whose input
     * the SwiGLU keeps anyway), so the combine's backward is a scatter */
    return STRATA_SAVE_IN(1);
  case STRATA_OP_MATMUL:
  case STRATA_OP_MUL:
    return STRATA_SAVE_IN(0) | STRATA_SAVE_IN(1);
  /* a conv as a matmul: the image for the weight gradient; gather: the
   * indices for the scatter-add of its backward (nothing when they are an
   * input, which is resident anyway) */
  case STRATA_OP_PATCH_EMBED:
  case STRATA_OP_GATHER:
    return STRATA_SAVE_IN(0);
  /* what cannot be analysed keeps every input: the most it could need */
  case STRATA_OP_GENERIC:
    return STRATA_SAVE_IN(0) | STRATA_SAVE_IN(1) | STRATA_SAVE_IN(2) |
           STRATA_SAVE_IN(3);
  case STRATA_OP_SOFTMAX:
    return STRATA_SAVE_OUT(0);
  case STRATA_OP_DROPOUT:
    return STRATA_SAVE_MASK;
  /* the backward recomputes the scores from q, k (and the bias) */
  case STRATA_OP_FLASH_ATTENTION:
  case STRATA_OP_CROSS_ATTENTION:
    return STRATA_SAVE_IN(0) | STRATA_SAVE_IN(1) | STRATA_SAVE_IN(2) |
           STRATA_SAVE_IN(3) | STRATA_SAVE_OUT(0);
  /* The embedding's backward needs only the token ids, which are tiny
   * (8 bytes per token against 2h bytes for one activation) and are an
   * input that stays resident anyway: counted as nothing. */
  case STRATA_OP_EMBEDDING:
  case STRATA_OP_ADD:
  case STRATA_OP_ROPE:
  case STRATA_OP_SPLIT_HEADS:
  case STRATA_OP_MERGE_HEADS:
  case STRATA_OP_TRANSPOSE:
  case STRATA_OP_RESHAPE:
  case STRATA_OP_SPLIT:
  case STRATA_OP_SLICE:
  case STRATA_OP_CONCAT:
  case STRATA_OP_PERMUTE:
  case STRATA_OP_SCALE:
  case STRATA_OP_MOE_DISPATCH:
  case STRATA_OP_MLA_KV:
  case STRATA_OP_COUNT:
    break;
  }
  return 0;
}

/* Flash attention's log-sum-exp: one f32 per (batch, head, query); the
 * dispatcher's permutation map: one int32 per token copy. */
static int64_t extra_saved(const strata_graph_t *g, const strata_op_t *op) {
  if (op->kind == STRATA_OP_MOE_DISPATCH) {
    const strata_tensor_t *x = &g->tensors[op->in[0]];
    return 4 * (strata_tensor_numel(x) / x->shape[x->ndim - 1]) * op->topk;
  }
  if (op->kind != STRATA_OP_FLASH_ATTENTION &&
      op->kind != STRATA_OP_CROSS_ATTENTION)
    return 0;
  const strata_tensor_t *q = &g->tensors[op->in[0]];
  return q->ndim == 4 ? q->shape[0] * q->shape[1] * q->shape[2] * 4 : 0;
}

/* Bytes of one saved tensor: activations only; a parameter or an input is
 * resident anyway and is not an activation. */
static int64_t saved_tensor_bytes(const strata_graph_t *g, int t) {
  const strata_tensor_t *x = &g->tensors[t];
  return x->kind == STRATA_TENSOR_ACTIVATION ? strata_tensor_bytes(x) : 0;
}

/* The cross entropy keeps the softmax of its logits for backward in fp32:
 * Megatron-LM's VocabParallelCrossEntropy computes in logits.float() and
 * saves exp_logits (megatron/core/tensor_parallel/cross_entropy.py), so
 * bf16 logits are kept at twice their bytes. */
int strata_op_saved_scale(const strata_graph_t *g, const strata_op_t *op,
                          int slot) {
  if (op->kind != STRATA_OP_CROSS_ENTROPY || slot != 0) return 1;
  size_t e = strata_dtype_size(g->tensors[op->in[0]].dtype);
  return e > 0 && e < 4 ? (int)(4 / e) : 1;
}

int64_t strata_op_saved_bytes(const strata_graph_t *g, const strata_op_t *op) {
  unsigned s = strata_op_saves(g, op);
  int64_t n = 0;
  for (int i = 0; i < op->n_in; i++)
    if (s & STRATA_SAVE_IN(i))
      n += saved_tensor_bytes(g, op->in[i]) * strata_op_saved_scale(g, op, i);
  for (int i = 0; i < op->n_out; i++)
    if (s & STRATA_SAVE_OUT(i)) n += saved_tensor_bytes(g, op->out[i]);
  if ((s & STRATA_SAVE_MASK) && op->n_out > 0)
    n += strata_tensor_numel(&g->tensors[op->out[0]]);
  return n + extra_saved(g, op);
}

int64_t strata_op_extra_saved(const strata_graph_t *g, const strata_op_t *op) {
  int64_t n = extra_saved(g, op);
  if ((strata_op_saves(g, op) & STRATA_SAVE_MASK) && op->n_out > 0)
    n += strata_tensor_numel(&g->tensors[op->out[0]]);
  return n;
}

/* ---- FLOPs ---- */

/* Forward FLOPs per output element of the elementwise kinds. */
static double per_element(strata_op_kind_t k) {
  switch (k) {
  case STRATA_OP_LAYERNORM:
    return 8; /* mean, variance, normalise, scale, shift */
  case STRATA_OP_RMSNORM:
    return 6;
  case STRATA_OP_SOFTMAX:
    return 5; /* scale, max, exp, sum, divide */
  case STRATA_OP_GELU:
    return 8; /* tanh approximation */
  case STRATA_OP_SILU:
    return 5;
  case STRATA_OP_SIGMOID:
    return 4; /* negate, exp, add one, divide */
  case STRATA_OP_SWIGLU:
    return 6; /* silu of the gate, times the up half */
  case STRATA_OP_DROPOUT:
    return 2; /* compare with the random draw, scale */
  case STRATA_OP_ROPE:
    return 3; /* x*cos + rotate(x)*sin */
  case STRATA_OP_MUL:
  case STRATA_OP_ADD:
  case STRATA_OP_RELU:
  case STRATA_OP_SCALE:
    return 1;
  default:
    return 0;
  }
}

static double linear_fwd(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *x = &g->tensors[op->in[0]];
  const strata_tensor_t *w = &g->tensors[op->in[1]];
  double m = (double)strata_tensor_numel(x) / (double)x->shape[x->ndim - 1];
  double f = 2.0 * m * (double)w->shape[0] * (double)w->shape[1];
  return op->n_in > 2 ? f + m * (double)w->shape[0] : f; /* bias add */
}

static double matmul_fwd(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *a = &g->tensors[op->in[0]];
  const strata_tensor_t *b = &g->tensors[op->in[1]];
  /* numel(a) = batch*m*k; times n; times 2 */
  return 2.0 * (double)strata_tensor_numel(a) * (double)b->shape[b->ndim - 1];
}

/* Q.K^T and P.V: 2*b*h*s*t*(dq + dv) over the t keys each query sees
 * (all of them, or the window); dq = dv gives the familiar 4*b*h*s*t*d.
 * A causal mask leaves half the s x s pairs (Megatron-Bridge's
 * flop_utils.py: the core term at seq / 2; the kernel skips the rest);
 * under a causal window of w < s keys query i sees min(i + 1, w) of them,
 * w(w + 1)/2 + w(s - w) pairs in all, about 1 - (w - 1)/(2s) of the s x w
 * (flop_utils' calculate_swa_context).  An additive bias (T5's relative
 * positions) adds one FLOP per score. */
static double flash_fwd(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *q = &g->tensors[op->in[0]];
  const strata_tensor_t *v = &g->tensors[op->in[2]];
  double keys = (double)g->tensors[op->in[1]].shape[2], t = keys;
  int windowed = op->window > 0 && op->window < keys;
  if (windowed) t = op->window;
  if (op->kind == STRATA_OP_FLASH_ATTENTION && op->causal)
    t *= windowed ? 1 - (op->window - 1) / (2 * keys) : 0.5;
  double rows = (double)strata_tensor_numel(q) / (double)q->shape[3];
  double f = 2.0 * rows * t * (double)(q->shape[3] + v->shape[3]);
  if (op->n_in > 3) f += rows * t;
  return f;
}

/* A conv with stride = kernel is a matmul: (b*patches) x (c*p*q) by h. */
static double patch_fwd(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *y = &g->tensors[op->out[0]];
  const strata_tensor_t *w = &g->tensors[op->in[1]];
  double m = (double)y->shape[0] * (double)y->shape[1];
  double f = 2.0 * m * (double)strata_tensor_numel(w);
  return op->n_in > 2 ? f + m * (double)w->shape[0] : f;
}

/* The gating GEMM x W^T (and its bias), then a few FLOPs per score
 * (softmax or sigmoid, top-k selection, normalisation). */
static double router_fwd(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *y = &g->tensors[op->out[0]];
  return linear_fwd(g, op) + 6.0 * (double)strata_tensor_numel(y);
}

/* E batched GEMMs [b*C,k] x [k,n] (and the bias). */
static double grouped_fwd(const strata_graph_t *g, const strata_op_t *op) {
  const strata_tensor_t *x = &g->tensors[op->in[0]];
  const strata_tensor_t *w = &g->tensors[op->in[1]];
  double rows = (double)strata_tensor_numel(x) / (double)x->shape[x->ndim - 1];
  double f = 2.0 * rows * (double)w->shape[1] * (double)w->shape[2];
  return op->n_in > 2 ? f + rows * (double)w->shape[1] : f;
}

double strata_op_flops_fwd(const strata_graph_t *g, const strata_op_t *op) {
  double out =
      op->n_out > 0 ? (double)strata_tensor_numel(&g->tensors[op->out[0]]) : 0;
  switch (op->kind) {
  case STRATA_OP_LINEAR:
    return linear_fwd(g, op);
  case STRATA_OP_MATMUL:
    return matmul_fwd(g, op);
  case STRATA_OP_FLASH_ATTENTION:
  case STRATA_OP_CROSS_ATTENTION:
    return flash_fwd(g, op);
  case STRATA_OP_PATCH_EMBED:
    return patch_fwd(g, op);
  case STRATA_OP_GENERIC:
    return op->flops >= 0 ? op->flops : out;
  case STRATA_OP_MOE_ROUTER:
    return router_fwd(g, op);
  case STRATA_OP_GROUPED_LINEAR:
    return grouped_fwd(g, op);
  case STRATA_OP_MOE_COMBINE: /* a multiply-add per element of each copy */
    return 2.0 * (double)strata_tensor_numel(&g->tensors[op->in[0]]);
  case STRATA_OP_EMBEDDING: /* a gather; one add per extra table */
    return out * (op->n_in - 2);
  case STRATA_OP_CROSS_ENTROPY:
    return 5.0 * (double)strata_tensor_numel(&g->tensors[op->in[0]]);
  default:
    return out * per_element(op->kind);
  }
}

/* Backward costs twice the forward for every kind: for a matmul, one
 * product for the input gradient and one for the weight gradient. */
double strata_op_flops(const strata_graph_t *g, const strata_op_t *op) {
  return 3.0 * strata_op_flops_fwd(g, op);
}

/* What the op's FLOPs (forward and backward) would be with every key of
 * its window or sequence counted, the causal mask ignored: the other
 * convention of MFU (PaLM's appendix B and LLM Foundry count the whole
 * s x s; Megatron-Bridge's flop_utils.py halves it). */
double strata_op_flops_unmasked(const strata_graph_t *g,
                                const strata_op_t *op) {
  double f = strata_op_flops(g, op);
  if (op->kind != STRATA_OP_FLASH_ATTENTION || !op->causal) return f;
  double keys = (double)g->tensors[op->in[1]].shape[2];
  int windowed = op->window > 0 && op->window < keys;
  double kept = windowed ? 1 - (op->window - 1) / (2 * keys) : 0.5;
  return kept > 0 ? f / kept : f;
}

int st__op_is_full_view(const strata_op_t *op) {
  switch (op->kind) {
  case STRATA_OP_TRANSPOSE:
  case STRATA_OP_RESHAPE:
  case STRATA_OP_MERGE_HEADS:
  case STRATA_OP_PERMUTE:
  case STRATA_OP_SPLIT_HEADS:
  case STRATA_OP_SPLIT: /* one part: all of it */
    return op->n_in == 1 && op->n_out == 1;
  default:
    return 0;
  }
}

int st__storage_root(const strata_graph_t *g, int t) {
  for (int hops = 0; hops < g->n_ops; hops++) {
    int p = g->tensors[t].producer;
    if (p < 0 || !st__op_is_full_view(&g->ops[p])) break;
    t = g->ops[p].in[0];
  }
  return t;
}

int strata_tensor_storage(const strata_graph_t *g, int t) {
  return st__storage_root(g, t);
}

const char *strata_rope_scaling_name(int type) {
  static const char *const names[] = {"none", "llama3", "linear", "yarn"};
  return type >= 0 && type < STRATA_ROPE_SCALING_COUNT ? names[type] : NULL;
}
