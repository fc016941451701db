/*
 * arch.c - the one transformer builder: a graph from a description
 * (st__arch_t) of what the families differ in.  The built-in families and
 * their presets (gen.c fills the description from strata_gen_opts_t) and
 * every imported Hugging Face family (hf.c), dense or mixture of experts,
 * come through here; a family is a row of values, never a code path of
 * its own.  The description covers: head size apart from hidden / heads,
 * biases, tied or untied head, learned, rotary or relative positions,
 * partial rotary, gated MLPs, parallel attention and MLP, post-norm,
 * sandwich norms, q/k norms, sliding windows, encoder-decoder with
 * cross-attention, multi-head latent attention, mixtures of experts
 * (Megatron-Core's MoE layer: router, token dispatch, grouped expert
 * GEMMs, combine, a shared expert beside them) and multi-token prediction.
 *
 * Op names inside a block are part of the interface: the stage ILP and the
 * Megatron exporter find the attention and MLP linears by name (qkv, proj,
 * fc1, fc2, ...; docs/trace-format.md and docs/import.md list them).  A
 * tensor written by op X is "X.out"; a weight of op X is "X.weight", its
 * bias "X.bias"; split_heads writes q, k and v.
 *
 * Layers that differ (a sliding window or experts on some only) become
 * runs: each maximal run of identical layers is one block with its
 * repeat, its op names prefixed with "L<first layer>." when there are
 * several runs.  An encoder-decoder is the encoder's blocks, the encoder's
 * final norm as a block of its own (one op, one layer: the decoders read
 * its output), then the decoder's blocks; the decoder's embedding and both
 * relative position biases are computed in the prologue.
 *
 * Building goes through a small context whose first error sticks: every
 * helper is a no-op once an error happened, so the builder reads as the
 * model it describes and checks once at the end.
 */
#include <stdio.h>
#include <string.h>

#include "traces/traces_int.h"

#define NAME_MAX_ 160
#define PNAME_MAX (NAME_MAX_ + 40)

typedef struct {
  int ndim;
  int64_t d[STRATA_MAX_DIMS];
} shp_t;

#define SH0() ((shp_t){0, {0}})
#define SH1(a) ((shp_t){1, {(a)}})
#define SH2(a, b) ((shp_t){2, {(a), (b)}})
#define SH3(a, b, c) ((shp_t){3, {(a), (b), (c)}})
#define SH4(a, b, c, e) ((shp_t){4, {(a), (b), (c), (e)}})

typedef struct {
  strata_graph_t *g;
  const st__arch_t *a;
  int rc;
  int64_t b, s, h, nh, kv, d, f, V;
  strata_dtype_t dt;
  strata_op_t dummy; /* what last gives after an error */
  char pre[32];      /* op name prefix of the current block */
  int causal;        /* of the self-attention being built (encoders: no) */
} ab_t;

/* What sets one layer apart from another: runs are made of equal ones. */
typedef struct {
  int moe, window;
} kind_t;

void st__arch_init(st__arch_t *a) {
  memset(a, 0, sizeof *a);
  a->micro_batch = 1;
  a->dtype = STRATA_DTYPE_BF16;
  a->flash_attention = 1;
  a->causal = 1;
  a->window_every = 1;
  a->block = "decoder";
  a->norm1 = "ln1";
  a->norm2 = "ln2";
  a->act_op = "act";
}

static const char *pname(ab_t *A, const char *n, char *buf) {
  snprintf(buf, PNAME_MAX, "%s%s", A->pre, n);
  return buf;
}

/* A tensor named with the block's prefix. */
static int tensor(ab_t *A, const char *name, strata_tensor_kind_t kind,
                  strata_dtype_t dt, shp_t sh) {
  char b[PNAME_MAX];
  if (A->rc) return 0;
  int t =
      strata_graph_add_tensor(A->g, pname(A, name, b), sh.ndim, sh.d, dt, kind);
  if (t < 0) A->rc = t;
  return t < 0 ? 0 : t;
}

static int act_tensor(ab_t *A, const char *name, shp_t sh) {
  return tensor(A, name, STRATA_TENSOR_ACTIVATION, A->dt, sh);
}

static int param(ab_t *A, const char *op, const char *what, shp_t sh) {
  char n[NAME_MAX_];
  snprintf(n, sizeof n, "%s.%s", op, what);
  return tensor(A, n, STRATA_TENSOR_PARAM, A->dt, sh);
}

static shp_t shape_of(ab_t *A, int t) {
  shp_t sh = SH0();
  if (A->rc) return sh;
  sh.ndim = A->g->tensors[t].ndim;
  memcpy(sh.d, A->g->tensors[t].shape, sizeof sh.d);
  return sh;
}

static strata_op_t *last(ab_t *A) {
  return A->rc ? &A->dummy : &A->g->ops[A->g->n_ops - 1];
}

static void opn(ab_t *A, const char *name, strata_op_kind_t kind, int n_in,
                const int *in, int n_out, const int *out) {
  char b[PNAME_MAX];
  if (A->rc) return;
  int rc =
      strata_graph_add_op(A->g, pname(A, name, b), kind, n_in, in, n_out, out);
  if (rc < 0) A->rc = rc;
}

/* One op, one new output "<op>.out" of dtype dt. */
static int op1t(ab_t *A, const char *name, strata_op_kind_t kind, int n_in,
                const int *in, shp_t sh, strata_dtype_t dt) {
  char n[NAME_MAX_];
  snprintf(n, sizeof n, "%s.out", name);
  int y = tensor(A, n, STRATA_TENSOR_ACTIVATION, dt, sh);
  opn(A, name, kind, n_in, in, 1, &y);
  return y;
}

static int op1(ab_t *A, const char *name, strata_op_kind_t kind, int n_in,
               const int *in, shp_t sh) {
  return op1t(A, name, kind, n_in, in, sh, A->dt);
}

static int ew(ab_t *A, const char *name, strata_op_kind_t kind, int x) {
  return op1(A, name, kind, 1, &x, shape_of(A, x));
}

static int add(ab_t *A, const char *name, int x, int y) {
  return op1(A, name, STRATA_OP_ADD, 2, (int[]){x, y}, shape_of(A, x));
}

static int dropout(ab_t *A, const char *name, int x) {
  if (!A->a->dropout) return x;
  int y = ew(A, name, STRATA_OP_DROPOUT, x);
  last(A)->dropout_p = ST__DROPOUT_P;
  return y;
}

/* A norm over the last dim of x (of size n). */
static int norm(ab_t *A, const char *name, int x, int64_t n) {
  int gamma = param(A, name, "weight", SH1(n));
  if (A->a->rms)
    return op1(A, name, STRATA_OP_RMSNORM, 2, (int[]){x, gamma},
               shape_of(A, x));
  if (!A->a->norm_bias)
    return op1(A, name, STRATA_OP_LAYERNORM, 2, (int[]){x, gamma},
               shape_of(A, x));
  int beta = param(A, name, "bias", SH1(n));
  return op1(A, name, STRATA_OP_LAYERNORM, 3, (int[]){x, gamma, beta},
             shape_of(A, x));
}

/* x[...,k] -> [...,n] with weight w[n,k] and bias (or -1). */
static int linear_w(ab_t *A, const char *name, int x, int w, int bias) {
  shp_t sh = shape_of(A, x);
  if (!A->rc) sh.d[sh.ndim - 1] = A->g->tensors[w].shape[0];
  if (bias < 0) return op1(A, name, STRATA_OP_LINEAR, 2, (int[]){x, w}, sh);
  return op1(A, name, STRATA_OP_LINEAR, 3, (int[]){x, w, bias}, sh);
}

static int linear(ab_t *A, const char *name, int x, int64_t n, int bias) {
  shp_t sh = shape_of(A, x);
  int64_t k = sh.ndim ? sh.d[sh.ndim - 1] : 1;
  int w = param(A, name, "weight", SH2(n, k));
  return linear_w(A, name, x, w, bias ? param(A, name, "bias", SH1(n)) : -1);
}

/* ---- attention ---- */

/* Rotary positions on x [b,n,s,d]: all of each head, or the first
 * rotary_dim dims (split, rotate, concatenate back, as the partial rotary
 * of GPT-NeoX, Phi and GLM-4.5 is computed). */
static int rope(ab_t *A, const char *name, int x) {
  int64_t rd = A->a->rotary_dim;
  if (rd <= 0 || rd >= A->d) return ew(A, name, STRATA_OP_ROPE, x);
  char n[NAME_MAX_];
  shp_t sh = shape_of(A, x), r = sh, p = sh;
  r.d[3] = rd, p.d[3] = A->d - rd;
  snprintf(n, sizeof n, "%s_split.rot", name);
  int rot = act_tensor(A, n, r);
  snprintf(n, sizeof n, "%s_split.pass", name);
  int pass = act_tensor(A, n, p);
  snprintf(n, sizeof n, "%s_split", name);
  opn(A, n, STRATA_OP_SPLIT, 1, &x, 2, (int[]){rot, pass});
  last(A)->axis = 3;
  int y = ew(A, name, STRATA_OP_ROPE, rot);
  snprintf(n, sizeof n, "%s_cat", name);
  int c = op1(A, n, STRATA_OP_CONCAT, 2, (int[]){y, pass}, sh);
  last(A)->axis = 3;
  return c;
}

/* x [b,s,n*d] -> [b,n,s,d] (one-output split_heads). */
static int heads_of(ab_t *A, const char *name, int x, int64_t n) {
  int y = op1(A, name, STRATA_OP_SPLIT_HEADS, 1, &x, SH4(A->b, n, A->s, A->d));
  last(A)->heads = (int)n;
  return y;
}

/* q, k, v in one linear, split into q [b,nh,s,d], k and v [b,kv,s,d];
 * then q/k norms and rotary positions as described. */
static void qkv_self(ab_t *A, int x, int *q, int *k, int *v) {
  int y = linear(A, "qkv", x, (A->nh + 2 * A->kv) * A->d, A->a->qkv_bias);
  *q = act_tensor(A, "q", SH4(A->b, A->nh, A->s, A->d));
  *k = act_tensor(A, "k", SH4(A->b, A->kv, A->s, A->d));
  *v = act_tensor(A, "v", SH4(A->b, A->kv, A->s, A->d));
  opn(A, "split", STRATA_OP_SPLIT_HEADS, 1, &y, 3, (int[]){*q, *k, *v});
  last(A)->heads = (int)A->nh;
  last(A)->kv_heads = (int)A->kv;
  if (A->a->qk_norm) {
    *q = norm(A, "q_norm", *q, A->d);
    *k = norm(A, "k_norm", *k, A->d);
  }
  if (A->a->rope) {
    *q = rope(A, "rope_q", *q);
    *k = rope(A, "rope_k", *k);
  }
}

/* Multi-head latent attention (DeepSeek-V2 section 2.1): the query through
 * a low-rank bottleneck, keys and values from a normed rank-kv_lora latent,
 * and one rotary key part of qk_rope dims shared by every head (Megatron-
 * Core's MLASelfAttention; its down projection of x to latent + rotary
 * key is written as two linears, the same weights and FLOPs). */
static void qkv_latent(ab_t *A, int x, int *q, int *k, int *v) {
  const st__arch_t *a = A->a;
  int64_t H = A->nh, dq = a->qk_nope + a->qk_rope;
  int y = x;
  if (a->q_lora > 0) {
    y = linear(A, "q_down", y, a->q_lora, 0);
    y = norm(A, "q_norm", y, a->q_lora);
    y = linear(A, "q_up", y, H * dq, 0);
  } else {
    y = linear(A, "q", y, H * dq, 0);
  }
  int qh = act_tensor(A, "q", SH4(A->b, H, A->s, dq));
  opn(A, "split_q", STRATA_OP_SPLIT_HEADS, 1, &y, 1, &qh);
  last(A)->heads = (int)H;
  *q = ew(A, "rope_q", STRATA_OP_ROPE, qh);
  int kv = linear(A, "kv_down", x, a->kv_lora, 0);
  kv = norm(A, "kv_norm", kv, a->kv_lora);
  kv = linear(A, "kv_up", kv, H * (a->qk_nope + a->v_head), 0);
  int kr =
      ew(A, "rope_k", STRATA_OP_ROPE, linear(A, "k_rope", x, a->qk_rope, 0));
  *k = act_tensor(A, "k", SH4(A->b, H, A->s, dq));
  *v = act_tensor(A, "v", SH4(A->b, H, A->s, a->v_head));
  opn(A, "mla_kv", STRATA_OP_MLA_KV, 2, (int[]){kv, kr}, 2, (int[]){*k, *v});
  last(A)->heads = (int)H;
  last(A)->v_dim = a->v_head;
}

/* Cross-attention: q from x, k and v from the encoder's output. */
static void qkv_cross(ab_t *A, int x, int enc, int *q, int *k, int *v) {
  *q = heads_of(A, "xq_heads", linear(A, "xq", x, A->nh * A->d, 0), A->nh);
  *k = heads_of(A, "xk_heads", linear(A, "xk", enc, A->kv * A->d, 0), A->kv);
  *v = heads_of(A, "xv_heads", linear(A, "xv", enc, A->kv * A->d, 0), A->kv);
}

/* softmax(q k^T + bias) v, fused or as its matmuls, to [b,nh,s,dv] (dv:
 * v's head size); window as given. */
static int core(ab_t *A, const char *pfx, int q, int k, int v, int bias,
                int causal, int window, int cross) {
  char n[NAME_MAX_];
  int64_t dq = shape_of(A, q).d[3], dv = shape_of(A, v).d[3],
          kv = shape_of(A, k).d[1];
#define N_(x) (snprintf(n, sizeof n, "%s%s", pfx, x), n)
  if (A->a->flash_attention) {
    int nin = bias >= 0 ? 4 : 3;
    int y = op1(A, N_("attn"),
                cross ? STRATA_OP_CROSS_ATTENTION : STRATA_OP_FLASH_ATTENTION,
                nin, (int[]){q, k, v, bias}, SH4(A->b, A->nh, A->s, dv));
    last(A)->heads = (int)A->nh;
    last(A)->kv_heads = (int)kv;
    last(A)->causal = causal;
    last(A)->window = window;
    return y;
  }
  int kT =
      op1(A, N_("kT"), STRATA_OP_TRANSPOSE, 1, &k, SH4(A->b, kv, dq, A->s));
  int sc = op1(A, N_("scores"), STRATA_OP_MATMUL, 2, (int[]){q, kT},
               SH4(A->b, A->nh, A->s, A->s));
  if (bias >= 0) sc = add(A, N_("pos_bias"), sc, bias);
  int p = dropout(A, N_("attn_dropout"),
                  ew(A, N_("softmax"), STRATA_OP_SOFTMAX, sc));
  return op1(A, N_("context"), STRATA_OP_MATMUL, 2, (int[]){p, v},
             SH4(A->b, A->nh, A->s, dv));
#undef N_
}

/* From the normed input to the output projection: self-attention (enc <
 * 0), or cross-attention over the encoder's output enc. */
static int attention(ab_t *A, int x, int bias, int window, int enc) {
  int q, k, v, cross = enc >= 0, latent = A->a->kv_lora > 0 && !cross;
  const char *pfx = cross ? "x" : "";
  char n[NAME_MAX_];
  if (cross)
    qkv_cross(A, x, enc, &q, &k, &v);
  else if (latent)
    qkv_latent(A, x, &q, &k, &v);
  else
    qkv_self(A, x, &q, &k, &v);
  int ctx = core(A, pfx, q, k, v, bias, cross ? 0 : A->causal, window, cross);
  int64_t dv = shape_of(A, ctx).d[3];
  snprintf(n, sizeof n, "%smerge", pfx);
  int m =
      op1(A, n, STRATA_OP_MERGE_HEADS, 1, &ctx, SH3(A->b, A->s, A->nh * dv));
  snprintf(n, sizeof n, "%sproj", pfx);
  return linear(A, n, m, A->h, latent ? 0 : A->a->out_bias);
}

/* ---- MLP and experts ---- */

static int mul(ab_t *A, const char *name, int x, int y) {
  return op1(A, name, STRATA_OP_MUL, 2, (int[]){x, y}, shape_of(A, x));
}

static strata_op_kind_t act_kind(st__act_t act) {
  return act == ST__ACT_RELU   ? STRATA_OP_RELU
         : act == ST__ACT_SILU ? STRATA_OP_SILU
                               : STRATA_OP_GELU;
}

/* A SwiGLU MLP of width f in three ops (gate and up fused in fc1). */
static int swiglu_mlp(ab_t *A, const char *pfx, int x, int64_t f, int bias) {
  char n1[NAME_MAX_], n2[NAME_MAX_], n3[NAME_MAX_];
  snprintf(n1, sizeof n1, "%sfc1", pfx);
  snprintf(n2, sizeof n2, "%sswiglu", pfx);
  snprintf(n3, sizeof n3, "%sfc2", pfx);
  int y = linear(A, n1, x, 2 * f, bias);
  y = op1(A, n2, STRATA_OP_SWIGLU, 1, &y, SH3(A->b, A->s, f));
  return linear(A, n3, y, A->h, bias);
}

static int mlp(ab_t *A, int x) {
  const st__arch_t *a = A->a;
  if (a->gated && a->act == ST__ACT_SILU)
    return swiglu_mlp(A, "", x, A->f, a->mlp_bias);
  if (a->gated) { /* GeGLU and the like: act(gate) * up */
    int gate = ew(A, a->act_op, act_kind(a->act),
                  linear(A, "fc1_gate", x, A->f, a->mlp_bias));
    int up = linear(A, "fc1_up", x, A->f, a->mlp_bias);
    return linear(A, "fc2", mul(A, "gate_mul", gate, up), A->h, a->mlp_bias);
  }
  int y = ew(A, a->act_op, act_kind(a->act),
             linear(A, "fc1", x, A->f, a->mlp_bias));
  return linear(A, "fc2", y, A->h, a->mlp_bias);
}

/* x[E,b,C,k] -> [E,b,C,n] through every expert's weight (and bias). */
static int grouped(ab_t *A, const char *name, int x, int64_t n) {
  shp_t sh = shape_of(A, x);
  int w = param(A, name, "weight", SH3(sh.d[0], n, sh.d[3]));
  sh.d[3] = n;
  if (A->a->expert_bias <= 0)
    return op1(A, name, STRATA_OP_GROUPED_LINEAR, 2, (int[]){x, w}, sh);
  int b = param(A, name, "bias", SH2(sh.d[0], n));
  return op1(A, name, STRATA_OP_GROUPED_LINEAR, 3, (int[]){x, w, b}, sh);
}

static int64_t expert_slots(const ab_t *A) {
  const st__arch_t *a = A->a;
  double c = (double)A->s * a->topk * (a->capacity > 0 ? a->capacity : 1.0) /
             a->experts;
  int64_t n = (int64_t)c;
  return (double)n < c ? n + 1 : n;
}

static void moe_attrs(ab_t *A) {
  last(A)->topk = A->a->topk;
  last(A)->capacity = A->a->capacity;
}

/* Megatron-Core's MoE layer: router scores (fp32), the token copies
 * grouped by expert, the experts' SwiGLU MLPs as grouped GEMMs, the copies
 * combined back weighted by their scores; a shared expert beside them
 * (Qwen2-MoE: scaled by sigmoid(x w)). */
static int moe(ab_t *A, int y) {
  const st__arch_t *a = A->a;
  int64_t E = a->experts, fe = a->moe_ffn, C = expert_slots(A);
  int w = param(A, "router", "weight", SH2(E, A->h));
  int in[3] = {y, w,
               a->expert_bias > 0 ? param(A, "router", "bias", SH1(E)) : 0};
  int sc = op1t(A, "router", STRATA_OP_MOE_ROUTER, a->expert_bias > 0 ? 3 : 2,
                in, SH3(A->b, A->s, E), STRATA_DTYPE_F32);
  last(A)->topk = a->topk;
  int x = op1(A, "dispatch", STRATA_OP_MOE_DISPATCH, 2, (int[]){y, sc},
              SH4(E, A->b, C, A->h));
  moe_attrs(A);
  x = grouped(A, "expert_fc1", x, 2 * fe);
  x = op1(A, "expert_swiglu", STRATA_OP_SWIGLU, 1, &x, SH4(E, A->b, C, fe));
  x = grouped(A, "expert_fc2", x, A->h);
  x = op1(A, "combine", STRATA_OP_MOE_COMBINE, 2, (int[]){x, sc},
          SH3(A->b, A->s, A->h));
  moe_attrs(A);
  if (a->shared_ffn <= 0) return x;
  int z = swiglu_mlp(A, "shared_", y, a->shared_ffn, 0);
  if (a->shared_gate > 0) {
    int s = linear(A, "shared_gate", y, 1, 0);
    s = ew(A, "shared_gate_act", STRATA_OP_SIGMOID, s);
    z = mul(A, "shared_scale", z, s);
  }
  return add(A, "moe_sum", x, z);
}

static int ffn(ab_t *A, int x, kind_t k) {
  return k.moe ? moe(A, x) : mlp(A, x);
}

/* ---- layers ---- */

/* One layer from residual stream x: the decoder's with enc >= 0 (a
 * cross-attention after the self-attention). */
static int layer(ab_t *A, int x, int bias, kind_t k, int enc) {
  const st__arch_t *a = A->a;
  if (a->post_norm) { /* BERT */
    int y = dropout(A, "proj_dropout", attention(A, x, bias, k.window, -1));
    int n1 = norm(A, a->norm1, add(A, "residual1", x, y), A->h);
    y = dropout(A, "mlp_dropout", ffn(A, n1, k));
    return norm(A, a->norm2, add(A, "residual2", n1, y), A->h);
  }
  if (a->parallel) { /* GPT-NeoX (two norms), Phi-1/2 (one) */
    int n1 = norm(A, a->norm1, x, A->h);
    int n2 = a->parallel == 2 ? norm(A, a->norm2, x, A->h) : n1;
    int y = dropout(A, "proj_dropout", attention(A, n1, bias, k.window, -1));
    int m = dropout(A, "mlp_dropout", ffn(A, n2, k));
    return add(A, "residual2", add(A, "residual1", x, y), m);
  }
  int pre = !a->post_only;
  int y =
      attention(A, pre ? norm(A, a->norm1, x, A->h) : x, bias, k.window, -1);
  if (a->sandwich) y = norm(A, "post_attn_norm", y, A->h);
  x = add(A, "residual1", x, dropout(A, "proj_dropout", y));
  if (enc >= 0) {
    y = attention(A, norm(A, "xln", x, A->h), -1, 0, enc);
    x = add(A, "xresidual", x, dropout(A, "xproj_dropout", y));
  }
  y = ffn(A, pre ? norm(A, a->norm2, x, A->h) : x, k);
  if (a->sandwich) y = norm(A, "post_mlp_norm", y, A->h);
  return add(A, "residual2", x, dropout(A, "mlp_dropout", y));
}

/* Layer l's kind: experts or not, and the window it attends over (0: all
 * keys). */
static kind_t kind_of(const st__arch_t *a, int l) {
  kind_t k = {a->experts > 0 && l >= a->first_dense &&
                  (a->moe_every <= 1 || (l + 1) % a->moe_every == 0),
              0};
  if (a->window <= 0 || (a->window >= a->seq && !a->long_window) ||
      l < a->window_from)
    return k;
  if (a->window_every > 1 && (l - a->window_from + 1) % a->window_every == 0)
    return k; /* every window_every-th layer attends to all keys */
  k.window = a->window;
  return k;
}

static int same_kind(kind_t x, kind_t y) {
  return x.moe == y.moe && x.window == y.window;
}

static void block(ab_t *A, const char *name, int first_op, int repeat, int in,
                  int out) {
  if (A->rc) return;
  int rc = strata_graph_add_block(A->g, name, first_op, A->g->n_ops - first_op,
                                  repeat, in, out);
  if (rc < 0) A->rc = rc;
}

/* The op prefix and the block's name of the run from layer l. */
static void run_names(ab_t *A, const char *kind, int l, int runs, int enc,
                      char *bname, size_t size) {
  const st__arch_t *a = A->a;
  if (runs > 1) {
    snprintf(A->pre, sizeof A->pre, "%s%d.", enc >= 0 ? "D" : "L", l);
    if (a->run_prefix)
      snprintf(bname, size, "%s%s", A->pre, kind);
    else
      snprintf(bname, size, "%s%d", kind, l);
  } else {
    snprintf(A->pre, sizeof A->pre, "%s", a->dec_layers ? kind : "");
    if (a->dec_layers) strcat(A->pre, ".");
    snprintf(bname, size, "%s", kind);
  }
}

/* Layers [0, n) as runs of identical layers; returns the stream out. */
static int stack(ab_t *A, const char *kind, int n, int x, int bias, int enc) {
  const st__arch_t *a = A->a;
  int runs = 0;
  A->causal = a->dec_layers && enc < 0 ? 0 : a->causal;
  for (int l = 0; l < n; l++)
    runs += l == 0 || !same_kind(kind_of(a, l), kind_of(a, l - 1));
  for (int l = 0; l < n;) {
    kind_t k = kind_of(a, l);
    int r = 1;
    while (l + r < n && same_kind(kind_of(a, l + r), k))
      r++;
    char bname[96];
    run_names(A, kind, l, runs, enc, bname, sizeof bname);
    int first = A->rc ? 0 : A->g->n_ops;
    int y = layer(A, x, bias, k, enc);
    block(A, bname, first, r, x, y);
    x = y;
    l += r;
  }
  A->pre[0] = '\0';
  return x;
}

/* ---- prologue and epilogue ---- */

static int input_ids(ab_t *A, const char *name, shp_t sh) {
  return tensor(A, name, STRATA_TENSOR_INPUT, STRATA_DTYPE_I64, sh);
}

/* The embedding of tokens (with its learned positions and token types);
 * types: their ids, or -1 to declare them here. */
static int embed(ab_t *A, const char *name, int tokens, int table, int types) {
  int pos = -1;
  if (A->a->max_pos) pos = param(A, name, "pos", SH2(A->a->max_pos, A->h));
  int x = op1(A, name, STRATA_OP_EMBEDDING, pos >= 0 ? 3 : 2,
              (int[]){tokens, table, pos}, SH3(A->b, A->s, A->h));
  if (A->a->type_vocab) {
    if (types < 0) types = input_ids(A, "token_types", SH2(A->b, A->s));
    int tw = param(A, "embed_type", "weight", SH2(A->a->type_vocab, A->h));
    int et = op1(A, "embed_type", STRATA_OP_EMBEDDING, 2, (int[]){types, tw},
                 SH3(A->b, A->s, A->h));
    x = add(A, "embed_sum", x, et);
  }
  if (A->a->embed_norm) x = norm(A, "embed_norm", x, A->h);
  return x;
}

/* T5's relative position bias: bucket ids [b,s,s] (an input) into a
 * [buckets, heads] table, as [b,heads,s,s]. */
static int rel_bias(ab_t *A, const char *name) {
  char n[NAME_MAX_];
  snprintf(n, sizeof n, "%s_buckets", name);
  int ids = input_ids(A, n, SH3(A->b, A->s, A->s));
  int tab = param(A, name, "weight", SH2(A->a->rel_buckets, A->nh));
  int g = op1(A, name, STRATA_OP_GATHER, 2, (int[]){ids, tab},
              SH4(A->b, A->s, A->s, A->nh));
  snprintf(n, sizeof n, "%s_heads", name);
  int y = op1(A, n, STRATA_OP_PERMUTE, 1, &g, SH4(A->b, A->nh, A->s, A->s));
  memcpy(last(A)->perm, (signed char[]){0, 3, 1, 2}, 4);
  return y;
}

static void loss(ab_t *A, int logits, int labels) {
  op1t(A, "loss", STRATA_OP_CROSS_ENTROPY, 2, (int[]){logits, labels}, SH0(),
       STRATA_DTYPE_F32);
}

/* The final norm (or BERT's MLM head), the head, the loss; returns the
 * head's weight. */
static int head(ab_t *A, int x, int wte, int labels) {
  const st__arch_t *a = A->a;
  if (a->mlm_head) {
    x = ew(A, "mlm_gelu", STRATA_OP_GELU, linear(A, "mlm_dense", x, A->h, 1));
    x = norm(A, "mlm_norm", x, A->h);
  } else {
    x = norm(A, "final_norm", x, A->h);
  }
  int w = a->tie ? wte : param(A, "head", "weight", SH2(A->V, A->h));
  int y = linear_w(A, "head", x, w,
                   a->head_bias ? param(A, "head", "bias", SH1(A->V)) : -1);
  if (a->logit_softcap) { /* logits/cap, tanh, *cap: 3 FLOPs an element */
    double n = A->rc ? 0 : (double)strata_tensor_numel(&A->g->tensors[y]);
    y = ew(A, "softcap", STRATA_OP_GENERIC, y);
    last(A)->flops = 3 * n;
  }
  loss(A, y, labels);
  return w;
}

/* DeepSeek-V3's multi-token prediction (arXiv:2412.19437, section 2.2;
 * Megatron-LM's multi_token_prediction.py): module k normalises the
 * previous depth's hidden state (the model's last layer output for the
 * first) and the embedding of the tokens one further ahead (the shared
 * table), concatenates them, projects 2h to h and runs one layer like the
 * model's last, then its own final norm, the shared head and a loss.  The
 * targets shift with k; their shapes do not, so the tokens and labels
 * stand for the shifted ones.  After the model's head: the last pipeline
 * stage holds them, as Megatron-LM places them. */
static void mtp(ab_t *A, int x, int tokens, int labels, int wte, int w) {
  const st__arch_t *a = A->a;
  for (int k = 0; k < a->mtp_layers && !A->rc; k++) {
    snprintf(A->pre, sizeof A->pre, "mtp%d.", k);
    int e = op1(A, "embed", STRATA_OP_EMBEDDING, 2, (int[]){tokens, wte},
                SH3(A->b, A->s, A->h));
    int en = norm(A, "enorm", e, A->h);
    int hn = norm(A, "hnorm", x, A->h);
    int cat = op1(A, "concat", STRATA_OP_CONCAT, 2, (int[]){en, hn},
                  SH3(A->b, A->s, 2 * A->h));
    last(A)->axis = 2;
    int y = linear(A, "eh_proj", cat, A->h, 0);
    x = layer(A, y, -1, kind_of(a, a->layers - 1), -1);
    y = norm(A, "final_norm", x, A->h);
    loss(A, linear_w(A, "head", y, w, -1), labels);
  }
  A->pre[0] = '\0';
}

static void build(ab_t *A) {
  const st__arch_t *a = A->a;
  int tokens = input_ids(A, "tokens", SH2(A->b, A->s));
  int labels = input_ids(A, "labels", SH2(A->b, A->s));
  int types = a->types_first && a->type_vocab
                  ? input_ids(A, "token_types", SH2(A->b, A->s))
                  : -1;
  int wte = param(A, "embed", "weight", SH2(A->V, A->h));
  int x = dropout(A, "embed_dropout", embed(A, "embed", tokens, wte, types));
  if (!a->dec_layers) {
    x = stack(A, a->block, a->layers, x, -1, -1);
    mtp(A, x, tokens, labels, wte, head(A, x, wte, labels));
    return;
  }
  int dtok = input_ids(A, "dec_tokens", SH2(A->b, A->s));
  int dx =
      dropout(A, "dec_embed_dropout", embed(A, "dec_embed", dtok, wte, -1));
  int eb = a->rel_buckets ? rel_bias(A, "enc_rel") : -1;
  int db = a->rel_buckets ? rel_bias(A, "dec_rel") : -1;
  int e = stack(A, "encoder", a->layers, x, eb, -1);
  int first = A->rc ? 0 : A->g->n_ops;
  int en = norm(A, "encoder_norm", e, A->h);
  block(A, "encoder_norm", first, 1, e, en);
  head(A, stack(A, "decoder", a->dec_layers, dx, db, en), wte, labels);
}

/* ---- checks, hyper-parameters and the graph ---- */

/* Sizes far enough from overflow; a refusal says which one. */
static int check_arch_sizes(const st__arch_t *a) {
  double big = (double)a->micro_batch * a->seq *
               ((double)a->seq * a->heads + a->vocab + 8.0 * a->hidden);
  /* the attention width heads x head size, bounded like hidden (found by
   * fuzz_hf: 351,643 heads of 1,280,512 overflowed an int) */
  double width = (double)a->heads * (a->head_dim ? a->head_dim : 1);
  const char *pre = "model sizes are out of range";
  if (big > 1e17)
    return strata_error(STRATA_EBADINPUT,
                        "%s: micro_batch x seq x (seq x heads + vocab + 8 x "
                        "hidden) is %.3g (at most 1e17)",
                        pre, big);
  if (a->layers > 100000)
    return strata_error(STRATA_EBADINPUT, "%s: layers %d (at most 100000)", pre,
                        a->layers);
  if (a->hidden > (1 << 24))
    return strata_error(STRATA_EBADINPUT, "%s: hidden %d (at most %d)", pre,
                        a->hidden, 1 << 24);
  if (a->ffn > (1 << 26))
    return strata_error(STRATA_EBADINPUT, "%s: ffn %d (at most %d)", pre,
                        a->ffn, 1 << 26);
  if (a->head_dim < 0 || width > (1 << 24))
    return strata_error(STRATA_EBADINPUT,
                        "%s: heads %d x head size %d is %.0f (at most %d)", pre,
                        a->heads, a->head_dim, width, 1 << 24);
  return 0;
}

int st__arch_check(const st__arch_t *a) {
  int kv = a->kv_heads ? a->kv_heads : a->heads;
  if (a->layers < 1 || a->hidden < 1 || a->heads < 1 || a->ffn < 1 ||
      a->vocab < 1 || a->seq < 1 || a->micro_batch < 1 || kv < 1 ||
      a->dec_layers < 0)
    return strata_error(STRATA_EBADINPUT,
                        "layers, hidden, heads, ffn, vocab, seq and "
                        "micro_batch must be >= 1");
  if (!a->head_dim && a->hidden % a->heads)
    return strata_error(STRATA_EBADINPUT,
                        "hidden %d is not a multiple of heads %d (give the "
                        "head size)",
                        a->hidden, a->heads);
  if (a->heads % kv)
    return strata_error(STRATA_EBADINPUT,
                        "heads %d is not a multiple of kv_heads %d", a->heads,
                        kv);
  if (a->max_pos && a->max_pos < a->seq)
    return strata_error(STRATA_EBADINPUT,
                        "sequence %d is longer than the %d learned positions",
                        a->seq, a->max_pos);
  return check_arch_sizes(a);
}

void st__arch_hp(st__arch_t *a) {
  struct strata_graph_hp *hp = &a->hp;
  memset(hp, 0, sizeof *hp);
  snprintf(hp->family, sizeof hp->family, "%s", a->family);
  hp->layers = a->layers + a->dec_layers;
  hp->hidden = a->hidden;
  hp->heads = a->heads;
  hp->kv_heads = a->kv_heads ? a->kv_heads : a->heads;
  hp->ffn = a->ffn;
  hp->vocab = a->vocab;
  hp->max_seq = a->max_pos ? a->max_pos : a->seq;
  hp->flash_attention = !!a->flash_attention;
  hp->dropout = !!a->dropout;
  /* the variants an exporter states (export/export_megatron_par.c) */
  if (a->head_dim > 0 && a->heads > 0 &&
      (int64_t)a->head_dim * a->heads != a->hidden)
    hp->head_dim = a->head_dim;
  hp->qkv_bias = !!a->qkv_bias;
  hp->out_bias = !!a->out_bias;
  hp->qk_norm = !!a->qk_norm;
  hp->rope_theta = a->rope_theta > 0 ? a->rope_theta : 0;
  int64_t d = a->head_dim > 0 ? a->head_dim
              : a->heads      ? a->hidden / a->heads
                              : 0;
  if (a->rotary_dim > 0 && a->rotary_dim < d)
    hp->rotary_percent = (double)a->rotary_dim / (double)d;
  if (a->window > 0 && a->window < a->seq && a->window_from < a->layers) {
    hp->window = a->window;
    hp->window_every = a->window_every > 1 ? a->window_every : 0;
    hp->window_from = a->window_from > 0 ? a->window_from : 0;
  }
  hp->norm_eps = a->norm_eps > 0 ? a->norm_eps : 0;
  hp->init_std = a->init_std > 0 ? a->init_std : 0;
  /* a gated MLP's biases are a variant; the GELU families have theirs */
  hp->mlp_bias = a->gated && a->mlp_bias;
}

int st__arch_build(const st__arch_t *a, const char *name,
                   strata_graph_t **out) {
  ab_t A;
  int rc;
  *out = NULL;
  memset(&A, 0, sizeof A);
  A.a = a;
  A.b = a->micro_batch, A.s = a->seq, A.h = a->hidden, A.nh = a->heads;
  A.kv = a->kv_heads ? a->kv_heads : a->heads;
  A.d = a->head_dim ? a->head_dim : a->hidden / a->heads;
  A.f = a->ffn, A.V = a->vocab, A.dt = a->dtype;
  if (!(A.g = strata_graph_create(name))) return STRATA_ENOMEM;
  A.g->hp = a->hp;
  A.g->micro_batch = a->micro_batch;
  A.g->seq_len = a->seq;
  build(&A);
  rc = A.rc ? A.rc : strata_graph_validate(A.g);
  if (rc)
    strata_graph_destroy(A.g);
  else
    *out = A.g;
  return rc;
}
