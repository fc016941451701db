/*
 * gen.c - built-in model generators: GPT (Megatron-LM style), BERT and
 * LLaMA, each as a prologue (layer -1), one block stored once with repeat
 * = layers, and an epilogue (layer -1).
 *
 * Op names inside a block are part of the interface: the stage ILP and the
 * Megatron exporter find the attention and MLP linears by name (qkv, proj,
 * fc1, fc2, ...), so they are fixed here and listed in
 * docs/trace-format.md.  A tensor written by op X is "X.out"; a weight of
 * op X is "X.weight", its bias "X.bias"; split_heads writes q, k and v.
 *
 * Building goes through a small context whose first error sticks: every
 * helper is a no-op once an error happened, so a builder reads as the
 * model it describes and checks once at the end.
 *
 * The LLaMA family also builds the variants of today's decoders: head size
 * apart from hidden / heads, q/k/v and output biases, per-head q/k norms
 * (Qwen3), sliding-window attention on some layers (gpt-oss), multi-head
 * latent attention (DeepSeek) and mixtures of experts (Megatron-Core's
 * MoE layer: router, token dispatch, grouped expert GEMMs, combine, and a
 * shared expert beside them).  Layers that differ (DeepSeek's first dense
 * layers, gpt-oss's alternating windows) become runs: each maximal run of
 * identical layers is one block, its names prefixed with "L<first
 * layer>." when there are several.
 */
#include <stdio.h>
#include <string.h>

#include "traces/traces_int.h"

#define DROPOUT_P 0.1

typedef struct {
  int ndim;
  int64_t d[STRATA_MAX_DIMS];
} shape_t;

#define S0() ((shape_t){0, {0}})
#define S1(a) ((shape_t){1, {(a)}})
#define S2(a, b) ((shape_t){2, {(a), (b)}})
#define S3(a, b, c) ((shape_t){3, {(a), (b), (c)}})
#define S4(a, b, c, e) ((shape_t){4, {(a), (b), (c), (e)}})

typedef struct {
  strata_graph_t *g;
  const strata_gen_opts_t *o;
  int rc;
  int64_t b, s, h, a, kv, d, f, V;
  strata_dtype_t dt;
  strata_op_t dummy; /* what last_op gives after an error */
  char pre[24];      /* name prefix of the block being built ("" or "L3.") */
} gen_t;

/* name with the block's prefix, into buf (NAME_LEN bytes) */
#define NAME_LEN 160
static const char *pname(const gen_t *G, const char *name, char *buf) {
  snprintf(buf, NAME_LEN, "%s%s", G->pre, name);
  return buf;
}

static int tensor(gen_t *G, const char *name, strata_tensor_kind_t kind,
                  strata_dtype_t dt, shape_t sh) {
  char buf[NAME_LEN];
  if (G->rc) return 0;
  int t = strata_graph_add_tensor(G->g, pname(G, name, buf), sh.ndim, sh.d, dt,
                                  kind);
  if (t < 0) G->rc = t;
  return t < 0 ? 0 : t;
}

static int param(gen_t *G, const char *op, const char *what, shape_t sh) {
  char name[128];
  snprintf(name, sizeof name, "%s.%s", op, what);
  return tensor(G, name, STRATA_TENSOR_PARAM, G->dt, sh);
}

static shape_t shape_of(gen_t *G, int t) {
  shape_t sh = S0();
  if (G->rc) return sh;
  sh.ndim = G->g->tensors[t].ndim;
  memcpy(sh.d, G->g->tensors[t].shape, sizeof sh.d);
  return sh;
}

static strata_op_t *last_op(gen_t *G) {
  return G->rc ? &G->dummy : &G->g->ops[G->g->n_ops - 1];
}

static void op(gen_t *G, const char *name, strata_op_kind_t kind, int n_in,
               const int *in, int n_out, const int *out) {
  char buf[NAME_LEN];
  if (G->rc) return;
  int rc = strata_graph_add_op(G->g, pname(G, name, buf), kind, n_in, in, n_out,
                               out);
  if (rc < 0) G->rc = rc;
}

/* One op with one new output "<name>.out" of shape sh and dtype dt. */
static int op1t(gen_t *G, const char *name, strata_op_kind_t kind, int n_in,
                const int *in, shape_t sh, strata_dtype_t dt) {
  char oname[128];
  snprintf(oname, sizeof oname, "%s.out", name);
  int y = tensor(G, oname, STRATA_TENSOR_ACTIVATION, dt, sh);
  op(G, name, kind, n_in, in, 1, &y);
  return y;
}

static int op1(gen_t *G, const char *name, strata_op_kind_t kind, int n_in,
               const int *in, shape_t sh) {
  return op1t(G, name, kind, n_in, in, sh, G->dt);
}

/* Elementwise: output shaped like x. */
static int ew(gen_t *G, const char *name, strata_op_kind_t kind, int x) {
  return op1(G, name, kind, 1, &x, shape_of(G, x));
}

static int add(gen_t *G, const char *name, int x, int y) {
  return op1(G, name, STRATA_OP_ADD, 2, (int[]){x, y}, shape_of(G, x));
}

static int dropout(gen_t *G, const char *name, int x) {
  if (!G->o->dropout) return x;
  int y = ew(G, name, STRATA_OP_DROPOUT, x);
  last_op(G)->dropout_p = DROPOUT_P;
  return y;
}

static int norm(gen_t *G, const char *name, strata_op_kind_t kind, int x) {
  shape_t sx = shape_of(G, x);
  int gamma = param(G, name, "weight", S1(sx.ndim ? sx.d[sx.ndim - 1] : 1));
  if (kind == STRATA_OP_RMSNORM)
    return op1(G, name, kind, 2, (int[]){x, gamma}, shape_of(G, x));
  int beta = param(G, name, "bias", S1(G->h));
  return op1(G, name, kind, 3, (int[]){x, gamma, beta}, shape_of(G, x));
}

/* x[...,k] -> [...,n] with weight w[n,k] and bias (or -1). */
static int linear_w(gen_t *G, const char *name, int x, int w, int bias) {
  shape_t sh = shape_of(G, x);
  if (!G->rc) sh.d[sh.ndim - 1] = G->g->tensors[w].shape[0];
  if (bias < 0) return op1(G, name, STRATA_OP_LINEAR, 2, (int[]){x, w}, sh);
  return op1(G, name, STRATA_OP_LINEAR, 3, (int[]){x, w, bias}, sh);
}

static int linear(gen_t *G, const char *name, int x, int64_t n, int bias) {
  shape_t sh = shape_of(G, x);
  int64_t k = sh.ndim ? sh.d[sh.ndim - 1] : 1;
  int w = param(G, name, "weight", S2(n, k));
  return linear_w(G, name, x, w, bias ? param(G, name, "bias", S1(n)) : -1);
}

/* split_heads into q[b,a,s,d], k and v [b,kv,s,d]. */
static void split(gen_t *G, int qkv, int *q, int *k, int *v) {
  *q = tensor(G, "q", STRATA_TENSOR_ACTIVATION, G->dt,
              S4(G->b, G->a, G->s, G->d));
  *k = tensor(G, "k", STRATA_TENSOR_ACTIVATION, G->dt,
              S4(G->b, G->kv, G->s, G->d));
  *v = tensor(G, "v", STRATA_TENSOR_ACTIVATION, G->dt,
              S4(G->b, G->kv, G->s, G->d));
  op(G, "split", STRATA_OP_SPLIT_HEADS, 1, &qkv, 3, (int[]){*q, *k, *v});
  last_op(G)->heads = (int)G->a;
  last_op(G)->kv_heads = (int)G->kv;
}

/* Attention core from q, k, v to the merged context [b,s,a*dv] (dv: v's
 * head size); a sliding window of `window` keys when > 0. */
static int attention_w(gen_t *G, int q, int k, int v, int causal, int window) {
  int ctx;
  int64_t dq = shape_of(G, q).d[3], dv = shape_of(G, v).d[3],
          kv = shape_of(G, k).d[1];
  if (G->o->flash_attention) {
    ctx = op1(G, "attn", STRATA_OP_FLASH_ATTENTION, 3, (int[]){q, k, v},
              S4(G->b, G->a, G->s, dv));
    last_op(G)->heads = (int)G->a;
    last_op(G)->kv_heads = (int)kv;
    last_op(G)->causal = causal;
    last_op(G)->window = window;
  } else {
    int kT = op1(G, "kT", STRATA_OP_TRANSPOSE, 1, &k, S4(G->b, kv, dq, G->s));
    int sc = op1(G, "scores", STRATA_OP_MATMUL, 2, (int[]){q, kT},
                 S4(G->b, G->a, G->s, G->s));
    int p = dropout(G, "attn_dropout", ew(G, "softmax", STRATA_OP_SOFTMAX, sc));
    ctx = op1(G, "context", STRATA_OP_MATMUL, 2, (int[]){p, v},
              S4(G->b, G->a, G->s, dv));
  }
  return op1(G, "merge", STRATA_OP_MERGE_HEADS, 1, &ctx,
             S3(G->b, G->s, G->a * dv));
}

static int attention(gen_t *G, int q, int k, int v, int causal) {
  return attention_w(G, q, k, v, causal, 0);
}

/* Token ids and labels, [b,s] i64 inputs. */
static void inputs(gen_t *G, int *tokens, int *labels) {
  *tokens = tensor(G, "tokens", STRATA_TENSOR_INPUT, STRATA_DTYPE_I64,
                   S2(G->b, G->s));
  *labels = tensor(G, "labels", STRATA_TENSOR_INPUT, STRATA_DTYPE_I64,
                   S2(G->b, G->s));
}

static void block_n(gen_t *G, const char *name, int first_op, int in, int out,
                    int repeat) {
  char buf[NAME_LEN];
  if (G->rc) return;
  int rc = strata_graph_add_block(G->g, pname(G, name, buf), first_op,
                                  G->g->n_ops - first_op, repeat, in, out);
  if (rc < 0) G->rc = rc;
}

static void block(gen_t *G, const char *name, int first_op, int in, int out) {
  block_n(G, name, first_op, in, out, G->o->layers);
}

static void loss(gen_t *G, int logits, int labels) {
  op1t(G, "loss", STRATA_OP_CROSS_ENTROPY, 2, (int[]){logits, labels}, S0(),
       STRATA_DTYPE_F32);
}

/* ---- GPT: learned positions, pre-LN, GELU MLP, tied head ---- */

static void gpt(gen_t *G) {
  int tokens, labels, q, k, v;
  inputs(G, &tokens, &labels);
  int wte = param(G, "embed", "weight", S2(G->V, G->h));
  int wpe = param(G, "embed", "pos", S2(G->s, G->h));
  int x = op1(G, "embed", STRATA_OP_EMBEDDING, 3, (int[]){tokens, wte, wpe},
              S3(G->b, G->s, G->h));
  x = dropout(G, "embed_dropout", x);

  int first = G->g->n_ops;
  int y = linear(G, "qkv", norm(G, "ln1", STRATA_OP_LAYERNORM, x), 3 * G->h, 1);
  split(G, y, &q, &k, &v);
  y = linear(G, "proj", attention(G, q, k, v, 1), G->h, 1);
  int r1 = add(G, "residual1", x, dropout(G, "proj_dropout", y));
  y = linear(G, "fc1", norm(G, "ln2", STRATA_OP_LAYERNORM, r1), G->f, 1);
  y = linear(G, "fc2", ew(G, "gelu", STRATA_OP_GELU, y), G->h, 1);
  int r2 = add(G, "residual2", r1, dropout(G, "mlp_dropout", y));
  block(G, "decoder", first, x, r2);

  y = norm(G, "final_norm", STRATA_OP_LAYERNORM, r2);
  int w =
      G->o->tie_embeddings ? wte : param(G, "head", "weight", S2(G->V, G->h));
  loss(G, linear_w(G, "head", y, w, -1), labels);
}

/* ---- BERT: word + position + token-type embeddings, post-LN, MLM head ---- */

static void bert(gen_t *G) {
  int tokens, labels, q, k, v;
  inputs(G, &tokens, &labels);
  int types = tensor(G, "token_types", STRATA_TENSOR_INPUT, STRATA_DTYPE_I64,
                     S2(G->b, G->s));
  int word = param(G, "embed", "weight", S2(G->V, G->h));
  int pos = param(G, "embed", "pos", S2(G->s, G->h));
  int e = op1(G, "embed", STRATA_OP_EMBEDDING, 3, (int[]){tokens, word, pos},
              S3(G->b, G->s, G->h));
  int tw = param(G, "embed_type", "weight", S2(2, G->h));
  int et = op1(G, "embed_type", STRATA_OP_EMBEDDING, 2, (int[]){types, tw},
               S3(G->b, G->s, G->h));
  int x =
      norm(G, "embed_norm", STRATA_OP_LAYERNORM, add(G, "embed_sum", e, et));
  x = dropout(G, "embed_dropout", x);

  int first = G->g->n_ops;
  split(G, linear(G, "qkv", x, 3 * G->h, 1), &q, &k, &v);
  int y = linear(G, "proj", attention(G, q, k, v, 0), G->h, 1);
  y = add(G, "residual1", x, dropout(G, "proj_dropout", y));
  int n1 = norm(G, "ln1", STRATA_OP_LAYERNORM, y);
  y = linear(G, "fc1", n1, G->f, 1);
  y = linear(G, "fc2", ew(G, "gelu", STRATA_OP_GELU, y), G->h, 1);
  y = add(G, "residual2", n1, dropout(G, "mlp_dropout", y));
  int out = norm(G, "ln2", STRATA_OP_LAYERNORM, y);
  block(G, "encoder", first, x, out);

  y = ew(G, "mlm_gelu", STRATA_OP_GELU, linear(G, "mlm_dense", out, G->h, 1));
  y = norm(G, "mlm_norm", STRATA_OP_LAYERNORM, y);
  int w =
      G->o->tie_embeddings ? word : param(G, "head", "weight", S2(G->V, G->h));
  loss(G, linear_w(G, "head", y, w, param(G, "head", "bias", S1(G->V))),
       labels);
}

/* ---- LLaMA: RMSNorm, RoPE, grouped-query attention, SwiGLU ---- */

/* Grouped-query attention from the normed input to the output projection:
 * q, k, v in one linear (biased for qkv_bias), per-head q/k norms, RoPE,
 * the core (windowed when asked). */
/* Rotary positions on x [b,n,s,d]: all of each head, or the first
 * rotary_percent of its dims (split, rotate, concatenate back, as GLM-4.5's
 * partial rotary is computed). */
static int64_t rotary_dims(const gen_t *G) { /* 0: all of them */
  double rp = G->o->rotary_percent;
  int64_t rd =
      rp > 0 && rp < 1 && G->o->kv_lora <= 0 ? (int64_t)(G->d * rp) : 0;
  return rd > 0 && rd < G->d ? rd : 0;
}

static int rope(gen_t *G, const char *name, int x) {
  int64_t rd = rotary_dims(G);
  if (!rd) return ew(G, name, STRATA_OP_ROPE, x);
  char n1[64], n2[64];
  shape_t sh = shape_of(G, x), r = sh, p = sh;
  r.d[3] = rd, p.d[3] = G->d - rd;
  snprintf(n1, sizeof n1, "%s_split.rot", name);
  snprintf(n2, sizeof n2, "%s_split.pass", name);
  int rot = tensor(G, n1, STRATA_TENSOR_ACTIVATION, G->dt, r);
  int pass = tensor(G, n2, STRATA_TENSOR_ACTIVATION, G->dt, p);
  snprintf(n1, sizeof n1, "%s_split", name);
  op(G, n1, STRATA_OP_SPLIT, 1, &x, 2, (int[]){rot, pass});
  if (!G->rc) last_op(G)->axis = 3;
  int y = ew(G, name, STRATA_OP_ROPE, rot);
  snprintf(n1, sizeof n1, "%s_cat", name);
  int c = op1(G, n1, STRATA_OP_CONCAT, 2, (int[]){y, pass}, sh);
  if (!G->rc) last_op(G)->axis = 3;
  return c;
}

static int gqa(gen_t *G, int y, int window) {
  const strata_gen_opts_t *o = G->o;
  int q, k, v;
  split(G, linear(G, "qkv", y, (G->a + 2 * G->kv) * G->d, o->qkv_bias > 0), &q,
        &k, &v);
  if (o->qk_norm > 0) {
    q = norm(G, "q_norm", STRATA_OP_RMSNORM, q);
    k = norm(G, "k_norm", STRATA_OP_RMSNORM, k);
  }
  q = rope(G, "rope_q", q);
  k = rope(G, "rope_k", k);
  return linear(G, "proj", attention_w(G, q, k, v, 1, window), G->h,
                o->out_bias > 0);
}

/* Multi-head latent attention (DeepSeek-V2 section 2.1): the query through
 * a low-rank bottleneck, keys and values from a normed rank-kv_lora latent,
 * and one rotary key part of qk_rope dims shared by every head (Megatron-
 * Core's MLASelfAttention; its down projection of x to latent + rotary
 * key is written as two linears, the same weights and FLOPs). */
static int mla(gen_t *G, int y, int window) {
  const strata_gen_opts_t *o = G->o;
  int64_t H = G->a, dq = o->qk_nope + o->qk_rope;
  int q = y, k, v;
  if (o->q_lora > 0) {
    q = linear(G, "q_down", q, o->q_lora, 0);
    q = norm(G, "q_norm", STRATA_OP_RMSNORM, q);
    q = linear(G, "q_up", q, H * dq, 0);
  } else {
    q = linear(G, "q", q, H * dq, 0);
  }
  int qh =
      tensor(G, "q", STRATA_TENSOR_ACTIVATION, G->dt, S4(G->b, H, G->s, dq));
  op(G, "split_q", STRATA_OP_SPLIT_HEADS, 1, &q, 1, &qh);
  last_op(G)->heads = (int)H;
  q = ew(G, "rope_q", STRATA_OP_ROPE, qh);
  int kv = linear(G, "kv_down", y, o->kv_lora, 0);
  kv = norm(G, "kv_norm", STRATA_OP_RMSNORM, kv);
  kv = linear(G, "kv_up", kv, H * (o->qk_nope + o->v_head), 0);
  int kr =
      ew(G, "rope_k", STRATA_OP_ROPE, linear(G, "k_rope", y, o->qk_rope, 0));
  k = tensor(G, "k", STRATA_TENSOR_ACTIVATION, G->dt, S4(G->b, H, G->s, dq));
  v = tensor(G, "v", STRATA_TENSOR_ACTIVATION, G->dt,
             S4(G->b, H, G->s, o->v_head));
  op(G, "mla_kv", STRATA_OP_MLA_KV, 2, (int[]){kv, kr}, 2, (int[]){k, v});
  last_op(G)->heads = (int)H;
  last_op(G)->v_dim = o->v_head;
  return linear(G, "proj", attention_w(G, q, k, v, 1, window), G->h, 0);
}

/* x[E,b,C,k] -> [E,b,C,n] through every expert's weight (and bias). */
static int grouped(gen_t *G, const char *name, int x, int64_t n) {
  shape_t sh = shape_of(G, x);
  int w = param(G, name, "weight", S3(sh.d[0], n, sh.d[3]));
  sh.d[3] = n;
  if (G->o->expert_bias <= 0)
    return op1(G, name, STRATA_OP_GROUPED_LINEAR, 2, (int[]){x, w}, sh);
  int b = param(G, name, "bias", S2(sh.d[0], n));
  return op1(G, name, STRATA_OP_GROUPED_LINEAR, 3, (int[]){x, w, b}, sh);
}

static int64_t expert_slots(const gen_t *G) {
  const strata_gen_opts_t *o = G->o;
  double c = (double)G->s * o->topk * (o->capacity > 0 ? o->capacity : 1.0) /
             o->experts;
  int64_t n = (int64_t)c;
  return (double)n < c ? n + 1 : n;
}

static void moe_attrs(gen_t *G) {
  last_op(G)->topk = G->o->topk;
  last_op(G)->capacity = G->o->capacity;
}

/* Megatron-Core's MoE layer: router scores (fp32), the token copies
 * grouped by expert, the experts' SwiGLU MLPs as grouped GEMMs, the copies
 * combined back weighted by their scores; a shared expert beside them. */
static int moe(gen_t *G, int y) {
  const strata_gen_opts_t *o = G->o;
  int64_t E = o->experts, fe = o->moe_ffn ? o->moe_ffn : G->f, C;
  int w = param(G, "router", "weight", S2(E, G->h));
  int in[3] = {y, w,
               o->expert_bias > 0 ? param(G, "router", "bias", S1(E)) : 0};
  int sc = op1t(G, "router", STRATA_OP_MOE_ROUTER, o->expert_bias > 0 ? 3 : 2,
                in, S3(G->b, G->s, E), STRATA_DTYPE_F32);
  last_op(G)->topk = o->topk;
  C = expert_slots(G);
  int x = op1(G, "dispatch", STRATA_OP_MOE_DISPATCH, 2, (int[]){y, sc},
              S4(E, G->b, C, G->h));
  moe_attrs(G);
  x = grouped(G, "expert_fc1", x, 2 * fe);
  x = op1(G, "expert_swiglu", STRATA_OP_SWIGLU, 1, &x, S4(E, G->b, C, fe));
  x = grouped(G, "expert_fc2", x, G->h);
  x = op1(G, "combine", STRATA_OP_MOE_COMBINE, 2, (int[]){x, sc},
          S3(G->b, G->s, G->h));
  moe_attrs(G);
  if (o->shared_ffn <= 0) return x;
  int z = linear(G, "shared_fc1", y, 2 * (int64_t)o->shared_ffn, 0);
  z = op1(G, "shared_swiglu", STRATA_OP_SWIGLU, 1, &z,
          S3(G->b, G->s, o->shared_ffn));
  z = linear(G, "shared_fc2", z, G->h, 0);
  if (o->shared_gate > 0) { /* Qwen2-MoE: sigmoid(x w) scales it */
    int s = linear(G, "shared_gate", y, 1, 0);
    s = ew(G, "shared_gate_act", STRATA_OP_SIGMOID, s);
    z = op1(G, "shared_scale", STRATA_OP_MUL, 2, (int[]){z, s}, shape_of(G, z));
  }
  return add(G, "moe_sum", x, z);
}

typedef struct {
  int moe, window;
} layer_kind_t;

static layer_kind_t kind_of(const strata_gen_opts_t *o, int l) {
  layer_kind_t k = {o->experts > 0 && l >= o->first_dense &&
                        (o->moe_every <= 1 || (l + 1) % o->moe_every == 0),
                    0};
  if (o->window > 0 && (o->window_every <= 1 || (l + 1) % o->window_every))
    k.window = o->window;
  return k;
}

static int same_kind(layer_kind_t a, layer_kind_t b) {
  return a.moe == b.moe && a.window == b.window;
}

/* One layer of a run: the residual stream x in, the next one out. */
static int llama_layer(gen_t *G, int x, layer_kind_t k) {
  int y = norm(G, "norm1", STRATA_OP_RMSNORM, x);
  y = G->o->kv_lora > 0 ? mla(G, y, k.window) : gqa(G, y, k.window);
  int r1 = add(G, "residual1", x, dropout(G, "proj_dropout", y));
  y = norm(G, "norm2", STRATA_OP_RMSNORM, r1);
  if (k.moe) {
    y = moe(G, y);
  } else {
    y = linear(G, "fc1", y, 2 * G->f, 0);
    y = op1(G, "swiglu", STRATA_OP_SWIGLU, 1, &y, S3(G->b, G->s, G->f));
    y = linear(G, "fc2", y, G->h, 0);
  }
  return add(G, "residual2", r1, dropout(G, "mlp_dropout", y));
}

static void mtp(gen_t *G, int x, int tokens, int labels, int wte, int head);

static void llama(gen_t *G) {
  const strata_gen_opts_t *o = G->o;
  int tokens, labels;
  inputs(G, &tokens, &labels);
  int wte = param(G, "embed", "weight", S2(G->V, G->h));
  int x = op1(G, "embed", STRATA_OP_EMBEDDING, 2, (int[]){tokens, wte},
              S3(G->b, G->s, G->h));
  x = dropout(G, "embed_dropout", x);

  int runs = 0;
  for (int l = 0; l < o->layers; l++)
    runs += !l || !same_kind(kind_of(o, l), kind_of(o, l - 1));
  for (int l = 0; l < o->layers && !G->rc;) {
    layer_kind_t k = kind_of(o, l);
    int n = 1;
    while (l + n < o->layers && same_kind(kind_of(o, l + n), k))
      n++;
    if (runs > 1) snprintf(G->pre, sizeof G->pre, "L%d.", l);
    int first = G->g->n_ops, out = llama_layer(G, x, k);
    block_n(G, "decoder", first, x, out, n);
    G->pre[0] = '\0';
    x = out;
    l += n;
  }

  int y = norm(G, "final_norm", STRATA_OP_RMSNORM, x);
  int w =
      G->o->tie_embeddings ? wte : param(G, "head", "weight", S2(G->V, G->h));
  loss(G, linear_w(G, "head", y, w, -1), labels);
  mtp(G, x, tokens, labels, wte, w);
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
static void mtp(gen_t *G, int x, int tokens, int labels, int wte, int head) {
  const strata_gen_opts_t *o = G->o;
  for (int k = 0; k < o->mtp_layers && !G->rc; k++) {
    snprintf(G->pre, sizeof G->pre, "mtp%d.", k);
    int e = op1(G, "embed", STRATA_OP_EMBEDDING, 2, (int[]){tokens, wte},
                S3(G->b, G->s, G->h));
    int en = norm(G, "enorm", STRATA_OP_RMSNORM, e);
    int hn = norm(G, "hnorm", STRATA_OP_RMSNORM, x);
    int cat = op1(G, "concat", STRATA_OP_CONCAT, 2, (int[]){en, hn},
                  S3(G->b, G->s, 2 * G->h));
    if (!G->rc) last_op(G)->axis = 2;
    int y = linear(G, "eh_proj", cat, G->h, 0);
    x = llama_layer(G, y, kind_of(o, o->layers - 1));
    y = norm(G, "final_norm", STRATA_OP_RMSNORM, x);
    loss(G, linear_w(G, "head", y, head, -1), labels);
  }
  G->pre[0] = '\0';
}

/* ---- options ---- */

static int default_ffn(strata_family_t f, int hidden) {
  if (f != STRATA_FAMILY_LLAMA) return 4 * hidden;
  int64_t n = (int64_t)8 * hidden / 3;
  return (int)((n + 255) / 256 * 256);
}

static int any_variant(const strata_gen_opts_t *o) {
  return o->head_dim > 0 || o->qkv_bias > 0 || o->out_bias > 0 ||
         o->qk_norm > 0 || o->window > 0 || o->experts > 0 || o->kv_lora > 0 ||
         o->mtp_layers > 0 || (o->rotary_percent > 0 && o->rotary_percent < 1);
}

static int check_moe(const strata_gen_opts_t *o) {
  if (o->experts <= 0) return 0;
  if (o->topk < 1 || o->topk > o->experts)
    return strata_error(STRATA_EBADINPUT,
                        "topk %d: each token goes to 1 to the %d experts",
                        o->topk, o->experts);
  if (o->moe_ffn < 0 || o->shared_ffn < 0 || o->first_dense < 0 ||
      o->first_dense >= o->layers)
    return strata_error(STRATA_EBADINPUT,
                        "moe_ffn and shared_ffn must be >= 0 and first_dense "
                        "%d below the %d layers",
                        o->first_dense, o->layers);
  if (!(o->capacity >= 0 && o->capacity <= 1000) || o->experts > (1 << 20))
    return strata_error(STRATA_EBADINPUT,
                        "capacity factor %g (0: dropless) or %d experts out "
                        "of range",
                        o->capacity, o->experts);
  return 0;
}

static int check_mla(const strata_gen_opts_t *o, int kv) {
  if (o->kv_lora <= 0) return 0;
  if (o->qk_nope < 1 || o->qk_rope < 1 || o->v_head < 1 || o->q_lora < 0)
    return strata_error(STRATA_EBADINPUT,
                        "latent attention (kv_lora %d) needs qk_nope, qk_rope "
                        "and v_head >= 1 (q_lora >= 0)",
                        o->kv_lora);
  if (kv != o->heads)
    return strata_error(STRATA_EBADINPUT,
                        "latent attention has one key and value per head: "
                        "kv_heads %d must be 0 or heads %d",
                        kv, o->heads);
  return 0;
}

static int check_variants(const strata_gen_opts_t *o, int kv) {
  if (!any_variant(o)) return 0;
  if (o->family != STRATA_FAMILY_LLAMA)
    return strata_error(STRATA_EBADINPUT,
                        "head size, biases, q/k norms, windows, experts, "
                        "latent attention and multi-token prediction are "
                        "available for the llama family only");
  if (o->head_dim < 0 || o->window < 0 || o->window_every < 0)
    return strata_error(STRATA_EBADINPUT,
                        "head_dim, window and window_every must be >= 0");
  if (o->moe_every < 0 || o->nope_every < 0 || o->qk_norm > 2)
    return strata_error(STRATA_EBADINPUT,
                        "moe_every and nope_every must be >= 0, qk_norm 0 to "
                        "2");
  if (o->rotary_percent < 0 || o->rotary_percent > 1)
    return strata_error(STRATA_EBADINPUT,
                        "rotary share %g: must be in (0, 1] (0: all dims)",
                        o->rotary_percent);
  if (o->mtp_layers > 16)
    return strata_error(STRATA_EBADINPUT,
                        "%d multi-token prediction modules: at most 16",
                        o->mtp_layers);
  int rc = check_moe(o);
  return rc ? rc : check_mla(o, kv);
}

/* Sizes far enough from overflow; a refusal says which one. */
static int check_sizes(const strata_gen_opts_t *o) {
  const char *pre = "model sizes are out of range";
  double d = o->head_dim > 0 ? o->head_dim : 1.0;
  double big = (double)o->micro_batch * o->seq *
               ((double)o->seq * o->heads + o->vocab + 8.0 * o->hidden +
                (double)o->heads * d + 4.0 * o->topk * o->hidden);
  double moe = (double)o->experts * o->hidden * (o->moe_ffn + o->ffn + 1.0);
  static const char *const names[] = {"layers", "hidden",  "head_dim",
                                      "q_lora", "kv_lora", "qk_nope + qk_rope",
                                      "v_head", "moe_ffn", "shared_ffn"};
  const int v[] = {o->layers, o->hidden,  o->head_dim,
                   o->q_lora, o->kv_lora, o->qk_nope + o->qk_rope,
                   o->v_head, o->moe_ffn, o->shared_ffn};
  const int max[] = {1000000, 1 << 24, 1 << 16, 1 << 24, 1 << 24,
                     1 << 16, 1 << 16, 1 << 24, 1 << 24};
  if (big > 1e17)
    return strata_error(STRATA_EBADINPUT,
                        "%s: micro_batch x seq x (seq x heads + vocab + 8 x "
                        "hidden + heads x head_dim + 4 x topk x hidden) is "
                        "%.3g (at most 1e17)",
                        pre, big);
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    if (v[i] > max[i])
      return strata_error(STRATA_EBADINPUT, "%s: %s %d (at most %d)", pre,
                          names[i], v[i], max[i]);
  if (moe > 1e14)
    return strata_error(STRATA_EBADINPUT,
                        "%s: experts x hidden x (moe_ffn + ffn + 1) is %.3g "
                        "(at most 1e14)",
                        pre, moe);
  return 0;
}

static int check_opts(const strata_gen_opts_t *o, int kv) {
  if (o->layers < 1 || o->hidden < 1 || o->heads < 1 || o->seq < 1 ||
      o->vocab < 1 || o->micro_batch < 1 || o->ffn < 0 || o->kv_heads < 0)
    return strata_error(STRATA_EBADINPUT,
                        "layers, hidden, heads, seq, vocab and micro_batch "
                        "must be >= 1");
  if (o->hidden % o->heads && o->head_dim <= 0 && o->kv_lora <= 0)
    return strata_error(
        STRATA_EBADINPUT, "hidden %d is not a multiple of heads %d%s",
        o->hidden, o->heads,
        o->family == STRATA_FAMILY_LLAMA ? " (give the head size, --head-dim)"
                                         : "");
  if (o->heads % kv)
    return strata_error(STRATA_EBADINPUT,
                        "heads %d is not a multiple of kv_heads %d", o->heads,
                        kv);
  if (kv != o->heads && o->family != STRATA_FAMILY_LLAMA)
    return strata_error(STRATA_EBADINPUT,
                        "kv_heads %d differs from heads %d: grouped-query "
                        "attention is available for the llama family only",
                        kv, o->heads);
  if ((unsigned)o->dtype >= STRATA_DTYPE_COUNT ||
      o->dtype == STRATA_DTYPE_I64 || o->dtype == STRATA_DTYPE_I32 ||
      o->dtype == STRATA_DTYPE_U8)
    return strata_error(STRATA_EBADINPUT,
                        "activations need a float dtype (f32, bf16, f16, f8)");
  int rc = check_variants(o, kv);
  if (rc) return rc;
  return check_sizes(o);
}

static void init_ctx(gen_t *G, const strata_gen_opts_t *o, int kv) {
  G->o = o;
  G->b = o->micro_batch;
  G->s = o->seq;
  G->h = o->hidden;
  G->a = o->heads;
  G->kv = o->kv_lora > 0 ? o->heads : kv;
  G->d = o->head_dim > 0 ? o->head_dim : o->hidden / o->heads;
  G->f = o->ffn ? o->ffn : default_ffn(o->family, o->hidden);
  G->V = o->vocab;
  G->dt = o->dtype;
}

static void set_variant_hp(strata_graph_t *g, const gen_t *G) {
  const strata_gen_opts_t *o = G->o;
  g->hp.head_dim = o->head_dim > 0 ? o->head_dim : 0;
  g->hp.qkv_bias = o->qkv_bias > 0;
  g->hp.out_bias = o->out_bias > 0;
  g->hp.window = o->window > 0 ? o->window : 0;
  g->hp.window_every = o->window > 0 ? o->window_every : 0;
  g->hp.rope_theta = o->rope_theta > 0 ? o->rope_theta : 0;
  if (o->experts > 0) {
    g->hp.experts = o->experts;
    g->hp.topk = o->topk;
    g->hp.moe_ffn = o->moe_ffn ? o->moe_ffn : (int)G->f;
    g->hp.shared_ffn = o->shared_ffn;
    g->hp.first_dense = o->first_dense;
    g->hp.expert_bias = o->expert_bias > 0;
    g->hp.capacity = o->capacity;
  }
  g->hp.mtp_layers = o->mtp_layers > 0 ? o->mtp_layers : 0;
  g->hp.qk_norm = o->qk_norm > 0 ? o->qk_norm : 0; /* 2: L2 */
  g->hp.nope_every = o->nope_every > 0 ? o->nope_every : 0;
  if (o->experts > 0) {
    g->hp.moe_every = o->moe_every > 1 ? o->moe_every : 0;
    g->hp.router_sigmoid = o->router_sigmoid > 0;
  }
  /* the share the graph rotates: none recorded when it rounds to all */
  if (rotary_dims(G)) g->hp.rotary_percent = o->rotary_percent;
  g->hp.rope_scaling = o->rope_scaling;
  if (o->kv_lora > 0) {
    g->hp.q_lora = o->q_lora;
    g->hp.kv_lora = o->kv_lora;
    g->hp.qk_nope = o->qk_nope;
    g->hp.qk_rope = o->qk_rope;
    g->hp.v_head = o->v_head;
  }
}

static void set_hp(strata_graph_t *g, const gen_t *G) {
  const strata_gen_opts_t *o = G->o;
  snprintf(g->hp.family, sizeof g->hp.family, "%s",
           strata_family_name(o->family));
  g->hp.layers = o->layers;
  g->hp.hidden = o->hidden;
  g->hp.heads = o->heads;
  g->hp.kv_heads = (int)G->kv;
  g->hp.ffn = (int)G->f;
  g->hp.vocab = o->vocab;
  g->hp.max_seq = o->seq;
  g->hp.flash_attention = !!o->flash_attention;
  g->hp.dropout = !!o->dropout;
  set_variant_hp(g, G);
  g->micro_batch = o->micro_batch;
  g->seq_len = o->seq;
}

int strata_generate(const strata_gen_opts_t *o, const char *name,
                    strata_graph_t **out) {
  gen_t G;
  int kv = o->kv_heads ? o->kv_heads : o->heads;
  int rc = check_opts(o, kv > 0 ? kv : 1);
  *out = NULL;
  if (rc) return rc;
  memset(&G, 0, sizeof G);
  init_ctx(&G, o, kv);
  if (!(G.g = strata_graph_create(name ? name : strata_family_name(o->family))))
    return STRATA_ENOMEM;
  set_hp(G.g, &G);
  if (o->family == STRATA_FAMILY_BERT)
    bert(&G);
  else if (o->family == STRATA_FAMILY_LLAMA)
    llama(&G);
  else
    gpt(&G);
  rc = G.rc ? G.rc : strata_graph_validate(G.g);
  if (rc)
    strata_graph_destroy(G.g);
  else
    *out = G.g;
  return rc;
}
