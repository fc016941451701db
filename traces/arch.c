/*
 * arch.c - a transformer from an architecture description (st__arch_t):
 * what the Hugging Face families differ in (head size apart from hidden
 * / heads, biases, tied or untied head, learned, rotary or relative
 * positions, partial rotary, gated MLPs, parallel attention and MLP,
 * post-norm, sandwich norms, q/k norms, sliding windows, encoder-decoder
 * with cross-attention) built from the same op kinds as the presets.
 *
 * Layers that differ (a sliding window on some only) become runs: each
 * maximal run of identical layers is one block with its repeat, its op
 * names prefixed with "L<first layer>." when there are several runs.  An
 * encoder-decoder is the encoder's blocks, the encoder's final norm as a
 * block of its own (one op, one layer: the decoders read its output), then
 * the decoder's blocks; the decoder's embedding and both relative position
 * biases are computed in the prologue.  Op names follow the presets'
 * (qkv, proj, fc1, fc2, ...; docs/import.md lists them).
 *
 * As in gen.c the first error sticks: helpers are no-ops after it and the
 * builder checks once at the end.
 */
#include <stdio.h>
#include <string.h>

#include "traces/traces_int.h"

#define DROPOUT_P 0.1
#define NAME_MAX_ 160
#define PNAME_MAX (NAME_MAX_ + 40)

typedef struct {
  int ndim;
  int64_t d[STRATA_MAX_DIMS];
} shp_t;

#define SH2(a, b) ((shp_t){2, {(a), (b)}})
#define SH3(a, b, c) ((shp_t){3, {(a), (b), (c)}})
#define SH4(a, b, c, e) ((shp_t){4, {(a), (b), (c), (e)}})

typedef struct {
  strata_graph_t *g;
  const st__arch_t *a;
  int rc;
  int64_t b, s, h, nh, kv, d, f, V;
  strata_dtype_t dt;
  char pre[32]; /* op name prefix of the current block */
  int causal;   /* of the self-attention being built (encoders: no) */
} ab_t;

void st__arch_init(st__arch_t *a) {
  memset(a, 0, sizeof *a);
  a->micro_batch = 1;
  a->dtype = STRATA_DTYPE_BF16;
  a->flash_attention = 1;
  a->causal = 1;
  a->window_every = 1;
}

static const char *pname(ab_t *A, const char *n, char *buf) {
  snprintf(buf, PNAME_MAX, "%s%s", A->pre, n);
  return buf;
}

static int tensor(ab_t *A, const char *name, strata_tensor_kind_t kind,
                  strata_dtype_t dt, shp_t sh) {
  if (A->rc) return 0;
  int t = strata_graph_add_tensor(A->g, name, sh.ndim, sh.d, dt, kind);
  if (t < 0) A->rc = t;
  return t < 0 ? 0 : t;
}

static int param(ab_t *A, const char *op, const char *what, shp_t sh) {
  char n[NAME_MAX_], b[PNAME_MAX];
  snprintf(n, sizeof n, "%s.%s", op, what);
  return tensor(A, pname(A, n, b), STRATA_TENSOR_PARAM, A->dt, sh);
}

static shp_t shape_of(ab_t *A, int t) {
  shp_t sh = {0, {0}};
  if (A->rc) return sh;
  sh.ndim = A->g->tensors[t].ndim;
  memcpy(sh.d, A->g->tensors[t].shape, sizeof sh.d);
  return sh;
}

static strata_op_t *last(ab_t *A) {
  static _Thread_local strata_op_t dummy;
  return A->rc ? &dummy : &A->g->ops[A->g->n_ops - 1];
}

static void opn(ab_t *A, const char *name, strata_op_kind_t kind, int n_in,
                const int *in, int n_out, const int *out) {
  char b[PNAME_MAX];
  if (A->rc) return;
  int rc =
      strata_graph_add_op(A->g, pname(A, name, b), kind, n_in, in, n_out, out);
  if (rc < 0) A->rc = rc;
}

/* One op, one new output "<op>.out". */
static int op1(ab_t *A, const char *name, strata_op_kind_t kind, int n_in,
               const int *in, shp_t sh) {
  char n[NAME_MAX_], b[PNAME_MAX];
  snprintf(n, sizeof n, "%s.out", name);
  int y = tensor(A, pname(A, n, b), STRATA_TENSOR_ACTIVATION, A->dt, sh);
  opn(A, name, kind, n_in, in, 1, &y);
  return y;
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
  last(A)->dropout_p = DROPOUT_P;
  return y;
}

/* A norm over the last dim of x (of size n). */
static int norm(ab_t *A, const char *name, int x, int64_t n) {
  int gamma = param(A, name, "weight", (shp_t){1, {n}});
  if (A->a->rms)
    return op1(A, name, STRATA_OP_RMSNORM, 2, (int[]){x, gamma},
               shape_of(A, x));
  if (!A->a->norm_bias)
    return op1(A, name, STRATA_OP_LAYERNORM, 2, (int[]){x, gamma},
               shape_of(A, x));
  int beta = param(A, name, "bias", (shp_t){1, {n}});
  return op1(A, name, STRATA_OP_LAYERNORM, 3, (int[]){x, gamma, beta},
             shape_of(A, x));
}

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
  return linear_w(A, name, x, w,
                  bias ? param(A, name, "bias", (shp_t){1, {n}}) : -1);
}

/* ---- attention ---- */

/* Rotary positions on x [b,n,s,d]: all of each head, or the first
 * rotary_dim dims (split, rotate, concatenate back, as the partial rotary
 * of GPT-NeoX and Phi is computed). */
static int rope(ab_t *A, const char *name, int x) {
  int64_t rd = A->a->rotary_dim;
  if (rd <= 0 || rd >= A->d) return ew(A, name, STRATA_OP_ROPE, x);
  char n1[NAME_MAX_], n2[NAME_MAX_], n3[NAME_MAX_], b[PNAME_MAX];
  shp_t sh = shape_of(A, x);
  snprintf(n1, sizeof n1, "%s_split", name);
  snprintf(n2, sizeof n2, "%s_split.rot", name);
  snprintf(n3, sizeof n3, "%s_split.pass", name);
  shp_t r = sh, p = sh;
  r.d[3] = rd, p.d[3] = A->d - rd;
  int rot = tensor(A, pname(A, n2, b), STRATA_TENSOR_ACTIVATION, A->dt, r);
  int pass = tensor(A, pname(A, n3, b), STRATA_TENSOR_ACTIVATION, A->dt, p);
  opn(A, n1, STRATA_OP_SPLIT, 1, &x, 2, (int[]){rot, pass});
  last(A)->axis = 3;
  int y = ew(A, name, STRATA_OP_ROPE, rot);
  snprintf(n1, sizeof n1, "%s_cat", name);
  int c = op1(A, n1, STRATA_OP_CONCAT, 2, (int[]){y, pass}, sh);
  last(A)->axis = 3;
  return c;
}

/* x [b,s,n*d] -> [b,n,s,d] (one-output split_heads). */
static int heads_of(ab_t *A, const char *name, int x, int64_t n) {
  int y = op1(A, name, STRATA_OP_SPLIT_HEADS, 1, &x, SH4(A->b, n, A->s, A->d));
  last(A)->heads = (int)n;
  return y;
}

static void qkv_self(ab_t *A, int x, int *q, int *k, int *v) {
  char b[PNAME_MAX];
  int y = linear(A, "qkv", x, (A->nh + 2 * A->kv) * A->d, A->a->qkv_bias);
  *q = tensor(A, pname(A, "q", b), STRATA_TENSOR_ACTIVATION, A->dt,
              SH4(A->b, A->nh, A->s, A->d));
  *k = tensor(A, pname(A, "k", b), STRATA_TENSOR_ACTIVATION, A->dt,
              SH4(A->b, A->kv, A->s, A->d));
  *v = tensor(A, pname(A, "v", b), STRATA_TENSOR_ACTIVATION, A->dt,
              SH4(A->b, A->kv, A->s, A->d));
  opn(A, "split", STRATA_OP_SPLIT_HEADS, 1, &y, 3, (int[]){*q, *k, *v});
  last(A)->heads = (int)A->nh;
  last(A)->kv_heads = (int)A->kv;
}

/* Cross-attention: q from x, k and v from the encoder's output. */
static void qkv_cross(ab_t *A, int x, int enc, int *q, int *k, int *v) {
  *q = heads_of(A, "xq_heads", linear(A, "xq", x, A->nh * A->d, 0), A->nh);
  *k = heads_of(A, "xk_heads", linear(A, "xk", enc, A->kv * A->d, 0), A->kv);
  *v = heads_of(A, "xv_heads", linear(A, "xv", enc, A->kv * A->d, 0), A->kv);
}

/* softmax(q k^T + bias) v, fused or as its matmuls; window as given. */
static int core(ab_t *A, const char *pfx, int q, int k, int v, int bias,
                int causal, int window, int cross) {
  char n[NAME_MAX_];
#define N_(x) (snprintf(n, sizeof n, "%s%s", pfx, x), n)
  if (A->a->flash_attention) {
    int nin = bias >= 0 ? 4 : 3;
    int y = op1(A, N_("attn"),
                cross ? STRATA_OP_CROSS_ATTENTION : STRATA_OP_FLASH_ATTENTION,
                nin, (int[]){q, k, v, bias}, SH4(A->b, A->nh, A->s, A->d));
    last(A)->heads = (int)A->nh;
    last(A)->kv_heads = (int)A->kv;
    last(A)->causal = causal;
    last(A)->window = window;
    return y;
  }
  int64_t t = A->s;
  int kT =
      op1(A, N_("kT"), STRATA_OP_TRANSPOSE, 1, &k, SH4(A->b, A->kv, A->d, t));
  int sc = op1(A, N_("scores"), STRATA_OP_MATMUL, 2, (int[]){q, kT},
               SH4(A->b, A->nh, A->s, t));
  if (bias >= 0) sc = add(A, N_("pos_bias"), sc, bias);
  int p = dropout(A, N_("attn_dropout"),
                  ew(A, N_("softmax"), STRATA_OP_SOFTMAX, sc));
  return op1(A, N_("context"), STRATA_OP_MATMUL, 2, (int[]){p, v},
             SH4(A->b, A->nh, A->s, A->d));
#undef N_
}

static int attention(ab_t *A, int x, int bias, int window, int enc) {
  int q, k, v, cross = enc >= 0;
  const char *pfx = cross ? "x" : "";
  char n[NAME_MAX_];
  if (cross)
    qkv_cross(A, x, enc, &q, &k, &v);
  else
    qkv_self(A, x, &q, &k, &v);
  if (A->a->qk_norm && !cross) {
    q = norm(A, "q_norm", q, A->d);
    k = norm(A, "k_norm", k, A->d);
  }
  if (A->a->rope && !cross) {
    q = rope(A, "rope_q", q);
    k = rope(A, "rope_k", k);
  }
  int ctx = core(A, pfx, q, k, v, bias, cross ? 0 : A->causal, window, cross);
  snprintf(n, sizeof n, "%smerge", pfx);
  int m =
      op1(A, n, STRATA_OP_MERGE_HEADS, 1, &ctx, SH3(A->b, A->s, A->nh * A->d));
  snprintf(n, sizeof n, "%sproj", pfx);
  return linear(A, n, m, A->h, A->a->out_bias);
}

/* ---- MLP ---- */

static int mul(ab_t *A, int x, int y) {
  return op1(A, "gate_mul", STRATA_OP_MUL, 2, (int[]){x, y}, shape_of(A, x));
}

static strata_op_kind_t act_kind(st__act_t act) {
  return act == ST__ACT_RELU   ? STRATA_OP_RELU
         : act == ST__ACT_SILU ? STRATA_OP_SILU
                               : STRATA_OP_GELU;
}

static int mlp(ab_t *A, int x) {
  const st__arch_t *a = A->a;
  if (a->gated && a->act == ST__ACT_SILU) { /* fused gate and up, SwiGLU */
    int y = linear(A, "fc1", x, 2 * A->f, a->mlp_bias);
    y = op1(A, "swiglu", STRATA_OP_SWIGLU, 1, &y, SH3(A->b, A->s, A->f));
    return linear(A, "fc2", y, A->h, a->mlp_bias);
  }
  if (a->gated) { /* GeGLU and the like: act(gate) * up */
    int gate = ew(A, "act", act_kind(a->act),
                  linear(A, "fc1_gate", x, A->f, a->mlp_bias));
    int up = linear(A, "fc1_up", x, A->f, a->mlp_bias);
    return linear(A, "fc2", mul(A, gate, up), A->h, a->mlp_bias);
  }
  int y =
      ew(A, "act", act_kind(a->act), linear(A, "fc1", x, A->f, a->mlp_bias));
  return linear(A, "fc2", y, A->h, a->mlp_bias);
}

/* ---- layers ---- */

/* One layer from residual stream x: the decoder's with enc >= 0 (a
 * cross-attention after the self-attention). */
static int layer(ab_t *A, int x, int bias, int window, int enc) {
  const st__arch_t *a = A->a;
  if (a->post_norm) { /* BERT */
    int y = dropout(A, "proj_dropout", attention(A, x, bias, window, -1));
    int n1 = norm(A, "ln1", add(A, "residual1", x, y), A->h);
    y = dropout(A, "mlp_dropout", mlp(A, n1));
    return norm(A, "ln2", add(A, "residual2", n1, y), A->h);
  }
  if (a->parallel) { /* GPT-NeoX (two norms), Phi-1/2 (one) */
    int n1 = norm(A, "ln1", x, A->h);
    int n2 = a->parallel == 2 ? norm(A, "ln2", x, A->h) : n1;
    int y = dropout(A, "proj_dropout", attention(A, n1, bias, window, -1));
    int m = dropout(A, "mlp_dropout", mlp(A, n2));
    return add(A, "residual2", add(A, "residual1", x, y), m);
  }
  int pre = !a->post_only;
  int y = attention(A, pre ? norm(A, "ln1", x, A->h) : x, bias, window, -1);
  if (a->sandwich) y = norm(A, "post_attn_norm", y, A->h);
  x = add(A, "residual1", x, dropout(A, "proj_dropout", y));
  if (enc >= 0) {
    y = attention(A, norm(A, "xln", x, A->h), -1, 0, enc);
    x = add(A, "xresidual", x, dropout(A, "xproj_dropout", y));
  }
  y = mlp(A, pre ? norm(A, "ln2", x, A->h) : x);
  if (a->sandwich) y = norm(A, "post_mlp_norm", y, A->h);
  return add(A, "residual2", x, dropout(A, "mlp_dropout", y));
}

/* The window layer l attends over (0: all keys). */
static int window_of(const st__arch_t *a, int l) {
  if (a->window <= 0 || a->window >= a->seq || l < a->window_from) return 0;
  if (a->window_every > 1 && (l - a->window_from + 1) % a->window_every == 0)
    return 0; /* every window_every-th layer attends to all keys */
  return a->window;
}

static void block(ab_t *A, const char *name, int first_op, int repeat, int in,
                  int out) {
  if (A->rc) return;
  int rc = strata_graph_add_block(A->g, name, first_op, A->g->n_ops - first_op,
                                  repeat, in, out);
  if (rc < 0) A->rc = rc;
}

/* Layers [0, n) as runs of identical layers; returns the stream out. */
static int stack(ab_t *A, const char *kind, int n, int x, int bias, int enc) {
  int runs = 0;
  A->causal = A->a->dec_layers && enc < 0 ? 0 : A->a->causal;
  for (int l = 0; l < n; l++)
    runs += l == 0 || window_of(A->a, l) != window_of(A->a, l - 1);
  for (int l = 0; l < n;) {
    int w = window_of(A->a, l), r = 1;
    while (l + r < n && window_of(A->a, l + r) == w)
      r++;
    char bname[64];
    if (runs > 1) {
      snprintf(A->pre, sizeof A->pre, "%s%d.", enc >= 0 ? "D" : "L", l);
      snprintf(bname, sizeof bname, "%s%d", kind, l);
    } else {
      snprintf(A->pre, sizeof A->pre, "%s", A->a->dec_layers ? kind : "");
      if (A->a->dec_layers) strcat(A->pre, ".");
      snprintf(bname, sizeof bname, "%s", kind);
    }
    int first = A->rc ? 0 : A->g->n_ops;
    int y = layer(A, x, bias, w, enc);
    block(A, bname, first, r, x, y);
    x = y;
    l += r;
  }
  A->pre[0] = '\0';
  return x;
}

/* ---- prologue and epilogue ---- */

static int embed(ab_t *A, const char *name, int tokens, int table) {
  int pos = -1;
  if (A->a->max_pos) pos = param(A, name, "pos", SH2(A->a->max_pos, A->h));
  int x = op1(A, name, STRATA_OP_EMBEDDING, pos >= 0 ? 3 : 2,
              (int[]){tokens, table, pos}, SH3(A->b, A->s, A->h));
  if (A->a->type_vocab) {
    int types = tensor(A, "token_types", STRATA_TENSOR_INPUT, STRATA_DTYPE_I64,
                       SH2(A->b, A->s));
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
  int ids = tensor(A, n, STRATA_TENSOR_INPUT, STRATA_DTYPE_I64,
                   SH3(A->b, A->s, A->s));
  int tab = param(A, name, "weight", SH2(A->a->rel_buckets, A->nh));
  int g = op1(A, name, STRATA_OP_GATHER, 2, (int[]){ids, tab},
              SH4(A->b, A->s, A->s, A->nh));
  snprintf(n, sizeof n, "%s_heads", name);
  int y = op1(A, n, STRATA_OP_PERMUTE, 1, &g, SH4(A->b, A->nh, A->s, A->s));
  memcpy(last(A)->perm, (signed char[]){0, 3, 1, 2}, 4);
  return y;
}

static void head(ab_t *A, int x, int wte, int labels) {
  const st__arch_t *a = A->a;
  if (a->mlm_head) {
    x = ew(A, "mlm_gelu", STRATA_OP_GELU, linear(A, "mlm_dense", x, A->h, 1));
    x = norm(A, "mlm_norm", x, A->h);
  } else {
    x = norm(A, "final_norm", x, A->h);
  }
  int w = a->tie ? wte : param(A, "head", "weight", SH2(A->V, A->h));
  int y = linear_w(A, "head", x, w,
                   a->head_bias ? param(A, "head", "bias", (shp_t){1, {A->V}})
                                : -1);
  if (a->logit_softcap) { /* logits/cap, tanh, *cap: 3 FLOPs an element */
    double n = A->rc ? 0 : (double)strata_tensor_numel(&A->g->tensors[y]);
    y = ew(A, "softcap", STRATA_OP_GENERIC, y);
    last(A)->flops = 3 * n;
  }
  char b[PNAME_MAX];
  int l = tensor(A, pname(A, "loss.out", b), STRATA_TENSOR_ACTIVATION,
                 STRATA_DTYPE_F32, (shp_t){0, {0}});
  opn(A, "loss", STRATA_OP_CROSS_ENTROPY, 2, (int[]){y, labels}, 1, &l);
}

static void build(ab_t *A) {
  const st__arch_t *a = A->a;
  int tokens = tensor(A, "tokens", STRATA_TENSOR_INPUT, STRATA_DTYPE_I64,
                      SH2(A->b, A->s));
  int labels = tensor(A, "labels", STRATA_TENSOR_INPUT, STRATA_DTYPE_I64,
                      SH2(A->b, A->s));
  int wte = param(A, "embed", "weight", SH2(A->V, A->h));
  int x = dropout(A, "embed_dropout", embed(A, "embed", tokens, wte));
  if (!a->dec_layers) {
    head(A, stack(A, "decoder", a->layers, x, -1, -1), wte, labels);
    return;
  }
  int dtok = tensor(A, "dec_tokens", STRATA_TENSOR_INPUT, STRATA_DTYPE_I64,
                    SH2(A->b, A->s));
  int dx = dropout(A, "dec_embed_dropout", embed(A, "dec_embed", dtok, wte));
  int eb = a->rel_buckets ? rel_bias(A, "enc_rel") : -1;
  int db = a->rel_buckets ? rel_bias(A, "dec_rel") : -1;
  int e = stack(A, "encoder", a->layers, x, eb, -1);
  int first = A->rc ? 0 : A->g->n_ops;
  int en = norm(A, "encoder_norm", e, A->h);
  block(A, "encoder_norm", first, 1, e, en);
  head(A, stack(A, "decoder", a->dec_layers, dx, db, en), wte, labels);
}

/* ---- checks and the graph ---- */

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

static int check_arch(const st__arch_t *a) {
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

static void set_hp(strata_graph_t *g, const st__arch_t *a, int64_t kv) {
  snprintf(g->hp.family, sizeof g->hp.family, "%s", a->family);
  g->hp.layers = a->layers + a->dec_layers;
  g->hp.hidden = a->hidden;
  g->hp.heads = a->heads;
  g->hp.kv_heads = (int)kv;
  g->hp.ffn = a->ffn;
  g->hp.vocab = a->vocab;
  g->hp.max_seq = a->max_pos ? a->max_pos : a->seq;
  g->hp.flash_attention = !!a->flash_attention;
  g->hp.dropout = !!a->dropout;
  /* the variants an exporter states (merge/export_megatron_par.c) */
  if (a->head_dim > 0 && a->heads > 0 &&
      (int64_t)a->head_dim * a->heads != a->hidden)
    g->hp.head_dim = a->head_dim;
  g->hp.qkv_bias = !!a->qkv_bias;
  g->hp.out_bias = !!a->out_bias;
  g->hp.qk_norm = !!a->qk_norm;
  g->hp.rope_theta = a->rope_theta > 0 ? a->rope_theta : 0;
  int64_t d = a->head_dim > 0 ? a->head_dim
              : a->heads      ? a->hidden / a->heads
                              : 0;
  if (a->rotary_dim > 0 && a->rotary_dim < d)
    g->hp.rotary_percent = (double)a->rotary_dim / (double)d;
  if (a->window > 0 && a->window < a->seq && a->window_from == 0) {
    g->hp.window = a->window;
    g->hp.window_every = a->window_every > 1 ? a->window_every : 0;
  }
  g->micro_batch = a->micro_batch;
  g->seq_len = a->seq;
}

int st__arch_build(const st__arch_t *a, const char *name,
                   strata_graph_t **out) {
  ab_t A;
  int rc = check_arch(a);
  *out = NULL;
  if (rc) return rc;
  memset(&A, 0, sizeof A);
  A.a = a;
  A.b = a->micro_batch, A.s = a->seq, A.h = a->hidden, A.nh = a->heads;
  A.kv = a->kv_heads ? a->kv_heads : a->heads;
  A.d = a->head_dim ? a->head_dim : a->hidden / a->heads;
  A.f = a->ffn, A.V = a->vocab, A.dt = a->dtype;
  if (!(A.g = strata_graph_create(name))) return STRATA_ENOMEM;
  set_hp(A.g, a, A.kv);
  build(&A);
  rc = A.rc ? A.rc : strata_graph_validate(A.g);
  if (rc)
    strata_graph_destroy(A.g);
  else
    *out = A.g;
  return rc;
}
