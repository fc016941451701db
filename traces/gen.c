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
} gen_t;

static int tensor(gen_t *G, const char *name, strata_tensor_kind_t kind,
                  strata_dtype_t dt, shape_t sh) {
  if (G->rc) return 0;
  int t = strata_graph_add_tensor(G->g, name, sh.ndim, sh.d, dt, kind);
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
  if (G->rc) return;
  int rc = strata_graph_add_op(G->g, name, kind, n_in, in, n_out, out);
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
  int gamma = param(G, name, "weight", S1(G->h));
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

/* Attention core from q, k, v to the merged context [b,s,a*d]. */
static int attention(gen_t *G, int q, int k, int v, int causal) {
  int ctx;
  if (G->o->flash_attention) {
    ctx = op1(G, "attn", STRATA_OP_FLASH_ATTENTION, 3, (int[]){q, k, v},
              S4(G->b, G->a, G->s, G->d));
    last_op(G)->heads = (int)G->a;
    last_op(G)->kv_heads = (int)G->kv;
    last_op(G)->causal = causal;
  } else {
    int kT =
        op1(G, "kT", STRATA_OP_TRANSPOSE, 1, &k, S4(G->b, G->kv, G->d, G->s));
    int sc = op1(G, "scores", STRATA_OP_MATMUL, 2, (int[]){q, kT},
                 S4(G->b, G->a, G->s, G->s));
    int p = dropout(G, "attn_dropout", ew(G, "softmax", STRATA_OP_SOFTMAX, sc));
    ctx = op1(G, "context", STRATA_OP_MATMUL, 2, (int[]){p, v},
              S4(G->b, G->a, G->s, G->d));
  }
  return op1(G, "merge", STRATA_OP_MERGE_HEADS, 1, &ctx,
             S3(G->b, G->s, G->a * G->d));
}

/* Token ids and labels, [b,s] i64 inputs. */
static void inputs(gen_t *G, int *tokens, int *labels) {
  *tokens = tensor(G, "tokens", STRATA_TENSOR_INPUT, STRATA_DTYPE_I64,
                   S2(G->b, G->s));
  *labels = tensor(G, "labels", STRATA_TENSOR_INPUT, STRATA_DTYPE_I64,
                   S2(G->b, G->s));
}

static void block(gen_t *G, const char *name, int first_op, int in, int out) {
  if (G->rc) return;
  int rc = strata_graph_add_block(G->g, name, first_op, G->g->n_ops - first_op,
                                  G->o->layers, in, out);
  if (rc < 0) G->rc = rc;
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

static void llama(gen_t *G) {
  int tokens, labels, q, k, v;
  inputs(G, &tokens, &labels);
  int wte = param(G, "embed", "weight", S2(G->V, G->h));
  int x = op1(G, "embed", STRATA_OP_EMBEDDING, 2, (int[]){tokens, wte},
              S3(G->b, G->s, G->h));
  x = dropout(G, "embed_dropout", x);

  int first = G->g->n_ops;
  int y = norm(G, "norm1", STRATA_OP_RMSNORM, x);
  split(G, linear(G, "qkv", y, (G->a + 2 * G->kv) * G->d, 0), &q, &k, &v);
  q = ew(G, "rope_q", STRATA_OP_ROPE, q);
  k = ew(G, "rope_k", STRATA_OP_ROPE, k);
  y = linear(G, "proj", attention(G, q, k, v, 1), G->h, 0);
  int r1 = add(G, "residual1", x, dropout(G, "proj_dropout", y));
  y = linear(G, "fc1", norm(G, "norm2", STRATA_OP_RMSNORM, r1), 2 * G->f, 0);
  y = op1(G, "swiglu", STRATA_OP_SWIGLU, 1, &y, S3(G->b, G->s, G->f));
  y = linear(G, "fc2", y, G->h, 0);
  int r2 = add(G, "residual2", r1, dropout(G, "mlp_dropout", y));
  block(G, "decoder", first, x, r2);

  y = norm(G, "final_norm", STRATA_OP_RMSNORM, r2);
  int w =
      G->o->tie_embeddings ? wte : param(G, "head", "weight", S2(G->V, G->h));
  loss(G, linear_w(G, "head", y, w, -1), labels);
}

/* ---- options ---- */

static int default_ffn(strata_family_t f, int hidden) {
  if (f != STRATA_FAMILY_LLAMA) return 4 * hidden;
  int64_t n = (int64_t)8 * hidden / 3;
  return (int)((n + 255) / 256 * 256);
}

static int check_opts(const strata_gen_opts_t *o, int kv) {
  if (o->layers < 1 || o->hidden < 1 || o->heads < 1 || o->seq < 1 ||
      o->vocab < 1 || o->micro_batch < 1 || o->ffn < 0 || o->kv_heads < 0)
    return strata_error(STRATA_EBADINPUT,
                        "layers, hidden, heads, seq, vocab and micro_batch "
                        "must be >= 1");
  if (o->hidden % o->heads)
    return strata_error(STRATA_EBADINPUT,
                        "hidden %d is not a multiple of heads %d", o->hidden,
                        o->heads);
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
  double big = (double)o->micro_batch * o->seq *
               ((double)o->seq * o->heads + o->vocab + 8.0 * o->hidden);
  if (big > 1e17 || o->layers > 1000000 || o->hidden > (1 << 24))
    return strata_error(STRATA_EBADINPUT, "model sizes are out of range");
  return 0;
}

static void init_ctx(gen_t *G, const strata_gen_opts_t *o, int kv) {
  G->o = o;
  G->b = o->micro_batch;
  G->s = o->seq;
  G->h = o->hidden;
  G->a = o->heads;
  G->kv = kv;
  G->d = o->hidden / o->heads;
  G->f = o->ffn ? o->ffn : default_ffn(o->family, o->hidden);
  G->V = o->vocab;
  G->dt = o->dtype;
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
