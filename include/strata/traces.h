/*
 * traces.h - the model: a graph of operators over tensors for one training
 * micro-batch, with repeated identical layers stored once.
 *
 * The graph is plain data (like hwloc's objects): callers read the arrays
 * directly; only create/load/destroy manage memory.
 *
 * Layers.  Operators are stored in topological order.  Those of a
 * transformer layer form a block; a block is stored once with a repeat
 * count ("decoder x 96").  Operators outside every block have layer -1:
 * the prologue (embedding) before the first block and the epilogue (final
 * norm, head, loss) after the last.  The model has strata_graph_layers()
 * layers; block b covers layers [blocks[b].layer0, layer0 + repeat).
 * Instance i + 1 of a block reads what instance i wrote: a block has one
 * input and one output tensor of the same shape (the residual stream).
 */
#ifndef STRATA_TRACES_H
#define STRATA_TRACES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STRATA_TRACE_VERSION 1
#define STRATA_MAX_DIMS 6
#define STRATA_MAX_OP_INPUTS 4
#define STRATA_MAX_OP_OUTPUTS 3
/* Sentinel of strata_op_t.flops: no count given (generic: one FLOP per
 * output element). */
#define STRATA_FLOPS_UNSET (-1.0)

/* X(enum, name, bytes per element) */
#define STRATA_DTYPE_MAP(X)                                                    \
  X(F32, "f32", 4)                                                             \
  X(BF16, "bf16", 2)                                                           \
  X(F16, "f16", 2)                                                             \
  X(F8, "f8", 1)                                                               \
  X(I64, "i64", 8)                                                             \
  X(I32, "i32", 4)                                                             \
  X(U8, "u8", 1)

typedef enum {
#define STRATA_DT_ENUM_(e, n, b) STRATA_DTYPE_##e,
  STRATA_DTYPE_MAP(STRATA_DT_ENUM_)
#undef STRATA_DT_ENUM_
      STRATA_DTYPE_COUNT
} strata_dtype_t;

typedef enum {
  STRATA_TENSOR_INPUT,     /* fed from outside: tokens, labels */
  STRATA_TENSOR_PARAM,     /* a trained weight */
  STRATA_TENSOR_ACTIVATION /* produced by an operator */
} strata_tensor_kind_t;

/*
 * Operator kinds: X(enum, name).  docs/trace-format.md has the shape rule,
 * FLOPs and saved tensors of each; in short (b batch, s sequence, h
 * hidden, "..." any leading dims, weights [out, in] as PyTorch's):
 *   embedding       tokens[b,s] (int), table[V,h] (, pos[S,h]) -> [b,s,h]
 *   layernorm, rmsnorm  x[...,h], gamma[h] (, beta[h]) -> [...,h]
 *   linear          x[...,k], w[n,k] (, bias[n]) -> [...,n]
 *   matmul          a[B...,m,k], b[B'...,k,n] -> [B...,m,n] (B' divides B)
 *   softmax gelu silu relu dropout rope: x -> same shape
 *   swiglu          x[...,2f] -> [...,f]
 *   mul, add        x, y (y broadcast to x: right-aligned dims equal or 1)
 *                   -> x's shape
 *   scale           x -> same shape, a unary op whose backward saves
 *                   nothing (times a constant, a fixed mask)
 *   split_heads     x[b,s,(q+2kv)*d] -> q, k, v [b,heads,s,d] (or one)
 *   merge_heads     x[b,n,s,d] -> [b,s,n*d]
 *   transpose       x[...,m,n] -> [...,n,m]
 *   reshape         x -> y with the same element count
 *   flash_attention q[b,h,s,d], k, v [b,kv,s,d] (, bias[h,s,s]) -> [b,h,s,d]
 *   cross_entropy   logits[...,V], labels[...] (int) -> []
 *   split           x -> 1 to 3 parts along `axis` (sizes sum to x's)
 *   slice           x -> x[..., start:end, ...] along `axis`
 *   concat          1 to 4 inputs joined along `axis`
 *   permute         x -> dims reordered by `perm`
 *   gather          idx[...] (int), table[V,...] -> [..., table dims 1..]
 *   patch_embed     img[b,c,H,W], w[h,c,p,q] (, bias[h]) -> [b,(H/p)(W/q),h]
 *   cross_attention q[b,h,s,d], k, v [b,kv,t,d] -> [b,h,s,d]
 *   generic         anything: FLOPs from `flops`, every activation input
 *                   saved (what an importer cannot map)
 * Mixture of experts and latent attention (docs/trace-format.md):
 *   moe_router     x[...,h], w[E,h] (, bias[E]) -> scores[...,E]; attr topk
 *   moe_dispatch   x[b,s,h], scores[b,s,E] -> [E,b,C,h]: each token's
 *                  topk copies grouped by expert, C = ceil(s*topk*cf/E)
 *                  per sequence with cf the capacity factor (attr
 *                  capacity; 0: dropless, the mean)
 *   grouped_linear x[E,b,C,k], w[E,n,k] (, bias[E,n]) -> [E,b,C,n]
 *   moe_combine    y[E,b,C,h], scores[b,s,E] -> [b,s,h]: the copies back
 *                  to their tokens, weighted by their scores
 *   mla_kv         kv[b,s,H*(dn+dv)], k_rope[b,s,dr] -> k[b,H,s,dn+dr],
 *                  v[b,H,s,dv] (attr heads, v_dim = dv): the latent
 *                  attention's per-head keys with the shared rotary part
 * flash_attention's v may have a head size of its own (latent attention):
 * q, k [.., dq], v [.., dv] -> [b,h,s,dv].
 */
#define STRATA_OP_MAP(X)                                                       \
  X(EMBEDDING, "embedding")                                                    \
  X(LAYERNORM, "layernorm")                                                    \
  X(RMSNORM, "rmsnorm")                                                        \
  X(LINEAR, "linear")                                                          \
  X(MATMUL, "matmul")                                                          \
  X(SOFTMAX, "softmax")                                                        \
  X(GELU, "gelu")                                                              \
  X(SILU, "silu")                                                              \
  X(SWIGLU, "swiglu")                                                          \
  X(MUL, "mul")                                                                \
  X(DROPOUT, "dropout")                                                        \
  X(ADD, "add")                                                                \
  X(ROPE, "rope")                                                              \
  X(SPLIT_HEADS, "split_heads")                                                \
  X(MERGE_HEADS, "merge_heads")                                                \
  X(TRANSPOSE, "transpose")                                                    \
  X(RESHAPE, "reshape")                                                        \
  X(FLASH_ATTENTION, "flash_attention")                                        \
  X(CROSS_ENTROPY, "cross_entropy")                                            \
  X(SPLIT, "split")                                                            \
  X(SLICE, "slice")                                                            \
  X(CONCAT, "concat")                                                          \
  X(PERMUTE, "permute")                                                        \
  X(GATHER, "gather")                                                          \
  X(PATCH_EMBED, "patch_embed")                                                \
  X(CROSS_ATTENTION, "cross_attention")                                        \
  X(GENERIC, "generic")                                                        \
  X(RELU, "relu")                                                              \
  X(SCALE, "scale")                                                            \
  X(MOE_ROUTER, "moe_router")                                                  \
  X(MOE_DISPATCH, "moe_dispatch")                                              \
  X(GROUPED_LINEAR, "grouped_linear")                                          \
  X(MOE_COMBINE, "moe_combine")                                                \
  X(MLA_KV, "mla_kv")                                                          \
  X(SIGMOID, "sigmoid")

typedef enum {
#define STRATA_OP_ENUM_(e, n) STRATA_OP_##e,
  STRATA_OP_MAP(STRATA_OP_ENUM_)
#undef STRATA_OP_ENUM_
      STRATA_OP_COUNT
} strata_op_kind_t;

typedef struct {
  char *name;
  int ndim; /* 0 for a scalar */
  int64_t shape[STRATA_MAX_DIMS];
  strata_dtype_t dtype;
  strata_tensor_kind_t kind;
  int producer; /* index of the op that writes it, -1 for inputs/params */
  /* The block each of whose instances holds its own copy (an activation
   * produced in the block, or a param used only there), else -1.  Filled
   * by strata_graph_validate. */
  int block;
} strata_tensor_t;

typedef struct {
  char *name;
  strata_op_kind_t kind;
  int n_in, n_out;
  int in[STRATA_MAX_OP_INPUTS]; /* tensor indices */
  int out[STRATA_MAX_OP_OUTPUTS];
  int layer; /* first layer of its block, or -1 outside blocks */
  int block; /* index into blocks, or -1 */
  /* attributes (0 where not used) */
  int heads, kv_heads; /* split_heads */
  double dropout_p;    /* dropout */
  int causal;          /* flash_attention */
  /* split, slice, concat, gather: the dim they work along (gather: of the
   * table, 0); slice: the range [start, end) of that dim */
  int axis;
  int64_t start, end;
  /* permute: output dim i is input dim perm[i] (ndim entries) */
  signed char perm[STRATA_MAX_DIMS];
  /* flash_attention: sliding-window attention over the `window` latest
   * keys of each query (0: every key) */
  int window;
  /* generic: forward FLOPs of one instance (STRATA_FLOPS_UNSET: one per
   * output element); 0 for every other kind */
  double flops;
  int topk;        /* moe_router, moe_dispatch, moe_combine */
  double capacity; /* moe_dispatch, moe_combine: capacity factor, 0 dropless */
  int v_dim;       /* mla_kv: the value head size */
} strata_op_t;

typedef struct {
  char *name;
  int first_op, n_ops; /* ops [first_op, first_op + n_ops) */
  int repeat;          /* >= 1 */
  int layer0;          /* index of its first layer */
  int input, output;   /* tensors: the residual stream in and out */
} strata_block_t;

struct st__graph_index;

/* RoPE scaling as a Hugging Face config's rope_scaling states it (type
 * NONE: none).  llama3: factor, low and high frequency factors, the
 * original context; linear: factor; yarn: factor, the original context,
 * beta_slow (low), beta_fast (high), mscale, mscale_all_dim and
 * correction ranges left unrounded (truncate false: unrounded 1).
 * full_only: on the full-attention layers only, the sliding-window ones
 * unscaled (Gemma 3).  It
 * changes the model trained but costs nothing: exported, or refused by an
 * export that cannot say it. */
typedef enum {
  STRATA_ROPE_SCALING_NONE,
  STRATA_ROPE_SCALING_LLAMA3,
  STRATA_ROPE_SCALING_LINEAR,
  STRATA_ROPE_SCALING_YARN,
  STRATA_ROPE_SCALING_COUNT
} strata_rope_scaling_type_t;

typedef struct {
  int type; /* strata_rope_scaling_type_t */
  double factor, low, high, mscale, mscale_all;
  int original; /* original_max_position_embeddings (0: not given) */
  int unrounded, full_only;
} strata_rope_scaling_t;

/* "llama3", "linear", "yarn" ("none" for NONE, NULL past the last). */
const char *strata_rope_scaling_name(int type);

typedef struct strata_graph {
  char *name;
  int micro_batch; /* b the trace was made at */
  int seq_len;     /* s */
  int n_tensors, n_ops, n_blocks;
  strata_tensor_t *tensors;
  strata_op_t *ops;
  strata_block_t *blocks;
  /* Model hyper-parameters when known (generators set them; 0 otherwise).
   * Used by exporters and formula checks, never by the cost model. */
  struct strata_graph_hp {
    char family[16]; /* "gpt", "bert", "llama" or "" */
    int layers, hidden, heads, kv_heads, ffn, vocab, max_seq;
    int flash_attention, dropout;
    /* variants and mixture of experts (0: none; see strata_gen_opts_t) */
    int head_dim, qkv_bias, out_bias, qk_norm, window, window_every;
    double rope_theta;
    int experts, topk, moe_ffn, shared_ffn, first_dense, expert_bias;
    double capacity;
    int q_lora, kv_lora, qk_nope, qk_rope, v_head;
    int mtp_layers;        /* multi-token prediction modules after the head */
    double rotary_percent; /* of each head's dims rotated (0: all) */
    /* experts on layers l >= first_dense with (l + 1) % moe_every == 0
     * (0, 1: all); no RoPE on layers with (l + 1) % nope_every == 0 (0:
     * none; exported, costs nothing); the router's scores a sigmoid */
    int moe_every, nope_every, router_sigmoid;
    /* group-limited routing (DeepSeek-V3 section 2.1.2: the experts in
     * router_groups groups, a token's top-k from its router_group_topk
     * best groups; 0: none) and the routed experts' output scaling (0:
     * none); no count changes, Megatron-LM runs them */
    int router_groups, router_group_topk;
    double router_topk_scale;
    /* the router's training settings, as strata_gen_opts_t states them
     * (exported; they cost nothing) */
    double router_aux_loss, router_jitter;
    int router_seq_aux, router_pre_softmax, router_expert_bias;
    strata_rope_scaling_t rope_scaling;
    /* the model's trained context, max_position_embeddings (0: not
     * known) */
    int max_positions;
    /* more variants, exported or refused (0: none): biases on a gated
     * MLP (LLaMA's mlp_bias; GPT's MLP biases are its family's); the
     * window only from layer window_from on (Qwen2's max_window_layers);
     * attention in chunks of attn_chunk tokens on the RoPE layers (Llama
     * 4's attention_chunk_size; costed as causal attention); a learned
     * softmax offset per head, the attention sinks (gpt-oss; not built:
     * heads x layers parameters); gpt-oss's clamped GLU, glu_limit the
     * clamp (up + 1 times gate * sigmoid(1.702 gate)) */
    int mlp_bias, window_from, attn_chunk, attn_sinks;
    double glu_limit;
    /* the norms' epsilon and the weights' initial standard deviation, as
     * the config gives them (0: not given) */
    double norm_eps, init_std;
  } hp;
  /* Private: hash indexes of the tensor, op and block names, kept by the
   * builders so that lookups by name take constant time. */
  struct st__graph_index *index;
} strata_graph_t;

/* ---- kinds and dtypes ---- */
const char *strata_op_kind_name(strata_op_kind_t k);
int strata_op_kind_parse(const char *name, strata_op_kind_t *out);
const char *strata_dtype_name(strata_dtype_t d);
int strata_dtype_parse(const char *name, strata_dtype_t *out);
int strata_dtype_size(strata_dtype_t d);

/* What an op saves for its backward pass: a bit per input (bit i) and per
 * output (bit 8 + i); plus 1-byte-per-element masks of its first output
 * (dropout) and extra bytes that scale with nothing in the layout (e.g.
 * flash attention's log-sum-exp, computed by strata_op_extra_saved). */
#define STRATA_SAVE_IN(i) (1u << (i))
#define STRATA_SAVE_OUT(i) (1u << (8 + (i)))
#define STRATA_SAVE_MASK (1u << 16)
unsigned strata_op_saves(const strata_graph_t *g, const strata_op_t *op);
/* Bytes saved for backward by op (one instance), unsharded: the saved
 * activations (params and inputs are resident anyway and count nothing)
 * plus strata_op_extra_saved. */
int64_t strata_op_saved_bytes(const strata_graph_t *g, const strata_op_t *op);
/* The part of it that is no tensor: the dropout mask (1 byte per element
 * of the first output) and flash attention's log-sum-exp (4*b*heads*s). */
int64_t strata_op_extra_saved(const strata_graph_t *g, const strata_op_t *op);
/* How many times its own bytes op keeps saved input `slot` at (the cross
 * entropy's fp32 softmax of bf16 logits: 2; otherwise 1). */
int strata_op_saved_scale(const strata_graph_t *g, const strata_op_t *op,
                          int slot);
/* Forward and forward+backward FLOPs of one instance of op. */
double strata_op_flops_fwd(const strata_graph_t *g, const strata_op_t *op);
double strata_op_flops(const strata_graph_t *g, const strata_op_t *op);
/* The same with causal attention's masked half counted (the FLOP
 * convention that does not halve it). */
double strata_op_flops_unmasked(const strata_graph_t *g, const strata_op_t *op);

/* ---- tensors ---- */
int64_t strata_tensor_numel(const strata_tensor_t *t);
int64_t strata_tensor_bytes(const strata_tensor_t *t);

/* ---- the graph ---- */
strata_graph_t *strata_graph_create(const char *name);
void strata_graph_destroy(strata_graph_t *g); /* accepts NULL */
/* Builders (generators and the loader use them).  Return the new index,
 * or a negative STRATA_E* code.  shape has ndim entries. */
int strata_graph_add_tensor(strata_graph_t *g, const char *name, int ndim,
                            const int64_t *shape, strata_dtype_t dtype,
                            strata_tensor_kind_t kind);
int strata_graph_add_op(strata_graph_t *g, const char *name,
                        strata_op_kind_t kind, int n_in, const int *in,
                        int n_out, const int *out);
/* Ops [first_op, n_ops) become one block repeated `repeat` times. */
int strata_graph_add_block(strata_graph_t *g, const char *name, int first_op,
                           int n_ops, int repeat, int input, int output);
int strata_graph_find_tensor(const strata_graph_t *g, const char *name);
int strata_graph_find_op(const strata_graph_t *g, const char *name);

/* Check everything a loader must: producers, kinds, shapes, cycles (the
 * order is topological), blocks.  Fills producer and layer fields.
 * Returns 0 or STRATA_EBADINPUT naming the op or tensor. */
int strata_graph_validate(strata_graph_t *g);

/* Fold each run of consecutive structurally identical blocks (the same
 * ops, attributes, shapes and wiring, whatever the names) into its first
 * block with the summed repeat, as if the model had been stored with
 * repeats (docs/trace-format.md).  The trace loader does it; g must be
 * validated and is validated again.  *folded (may be NULL) gets the number
 * of blocks folded away.  On failure (out of memory) g is unusable. */
int strata_graph_fold_repeats(strata_graph_t *g, int *folded);

/* A copy of validated g at another micro-batch size: every tensor that
 * carries the batch (found by following it from the inputs whose dim 0 is
 * g->micro_batch through each op's rule; parameters never do) has that
 * dim scaled by micro_batch / g->micro_batch, and the copy is validated.
 * STRATA_EBADINPUT naming the op or tensor where the batch cannot be
 * re-shaped (a slice of the batch, a dim the batch is not a factor of). */
int strata_graph_rebatch(const strata_graph_t *g, int micro_batch,
                         strata_graph_t **out);

/* Bytes saved for backward by ops [first_op, first_op + n_ops), one
 * instance each, counting a tensor once even when several ops save it or
 * views of it (transpose, reshape, merge_heads of a saved tensor share its
 * storage).  A GPT block gives s*b*h*(34 + 5*a*s/h) at 2-byte activations.
 * Needs a validated graph. */
int64_t strata_graph_saved_bytes(const strata_graph_t *g, int first_op,
                                 int n_ops);

/* The tensor whose storage t shares: t itself, or what a chain of views
 * (transpose, reshape, merge_heads, one-output split_heads) reads. */
int strata_tensor_storage(const strata_graph_t *g, int t);

/* Number of layers (sum of block repeats). */
int strata_graph_layers(const strata_graph_t *g);
/* The block holding layer l (0 <= l < layers), or -1. */
int strata_graph_layer_block(const strata_graph_t *g, int layer);

/* Whole-model totals of a validated graph (counting repeats; a parameter
 * used by several ops, as a tied embedding, counts once; activation_bytes
 * sums strata_graph_saved_bytes over each block times its repeat, the
 * prologue and the epilogue). */
typedef struct {
  int64_t parameters;
  int layers;
  int64_t ops;                 /* with repeats expanded */
  int64_t tensors;             /* with repeats expanded */
  double flops_per_microbatch; /* forward + backward, no recompute */
  /* the same with causal attention counted whole (not halved) */
  double flops_unmasked_per_microbatch;
  int64_t weight_bytes;     /* parameters in their dtype */
  int64_t activation_bytes; /* saved for backward, one micro-batch */
  /* Parameters one token's forward multiplies by: all but the experts a
   * router does not pick (each grouped_linear weight counts topk/E of
   * itself) and the rows of an embedding table it does not look up (an
   * embedding table counts nothing unless a linear also uses it: a tied
   * head).  Publishers differ on the input embedding: add its table for
   * the convention that counts it. */
  int64_t active_parameters;
  int64_t embedding_parameters; /* tables read only by embedding ops */
} strata_graph_stats_t;
void strata_graph_stats(const strata_graph_t *g, strata_graph_stats_t *st);

/* A graph's mixture of experts, read from its ops (a trace file says as
 * much as a preset): experts 0 when it has no router.  The routers must
 * agree (experts, topk); moe_ffn is the experts' hidden size (the second
 * grouped_linear's input width), glu 1 when their first one is gated
 * (twice as wide); moe_layers counts layers holding a router and
 * first_moe the first of them. */
typedef struct {
  int experts, topk, moe_ffn, glu;
  int moe_layers, first_moe;
  double capacity;           /* 0: dropless */
  int64_t expert_parameters; /* all grouped_linear weights and biases */
} strata_moe_info_t;
void strata_graph_moe(const strata_graph_t *g, strata_moe_info_t *m);

/* ---- the trace file (JSON, docs/trace-format.md) ---- */
/* Parse text; `where` (a file name) prefixes messages. */
int strata_trace_parse(const char *text, size_t len, const char *where,
                       strata_graph_t **out);
int strata_trace_load(const char *path, strata_graph_t **out);
/* Serialise to a strata_free-able string. */
int strata_trace_write(const strata_graph_t *g, char **text, size_t *len);

/* ---- generators ---- */
typedef enum {
  STRATA_FAMILY_GPT,
  STRATA_FAMILY_BERT,
  STRATA_FAMILY_LLAMA
} strata_family_t;

/* kv_heads 0 means heads (no grouped-query attention); ffn 0 means the
 * family's default: 4*hidden for GPT and BERT, LLaMA's
 * 256*ceil(8*hidden/3/256) for LLaMA.  GPT and BERT presets leave both at 0,
 * so overriding hidden scales the MLP; LLaMA presets fix them. */
typedef struct {
  strata_family_t family;
  int layers, hidden, heads, kv_heads, ffn, seq, vocab, micro_batch;
  strata_dtype_t dtype;
  int flash_attention; /* 1: fused flash attention, no s^2 activations */
  int dropout;         /* 1: dropout layers present */
  int tie_embeddings;  /* GPT: 1 (head uses the embedding table) */
  /* LLaMA-family variants (0: none; flags -1 in strata_gen_opts_keep). */
  int head_dim;      /* attention head size (0: hidden / heads) */
  int qkv_bias;      /* biases on q, k and v */
  int out_bias;      /* ... on the attention output projection */
  int qk_norm;       /* RMSNorm of each head's q and k (Qwen3) */
  int window;        /* sliding-window attention over this many keys */
  int window_every;  /* ... except on every window_every-th layer, l with
                        (l + 1) % window_every == 0, which attend to all
                        keys (0, 1: on all of them; gpt-oss and Gemma 2
                        alternate: 2; Gemma 3: 6) */
  double rope_theta; /* rotary base (exported; costs nothing) */
  strata_rope_scaling_t rope_scaling; /* (exported; costs nothing) */
  /* Mixture of experts: experts 0 is a dense MLP.  Layers from
   * first_dense on route each token to topk of `experts` SwiGLU experts
   * of moe_ffn (0: ffn) plus an always-used shared expert of shared_ffn
   * (0: none); capacity is the capacity factor (0: dropless);
   * expert_bias puts biases on the router and the experts (gpt-oss). */
  int experts, topk, moe_ffn, shared_ffn, first_dense, expert_bias;
  int shared_gate; /* a sigmoid of a linear of the input scales the shared
                      expert's output (Qwen2-MoE) */
  double capacity;
  /* Multi-head latent attention (DeepSeek-V2/V3) when kv_lora > 0: q
   * through a rank-q_lora bottleneck (0: a full projection), keys and
   * values through a rank-kv_lora latent; per head qk_nope + qk_rope
   * query/key dims (the rotary part shared by the heads) and v_head
   * value dims. */
  int q_lora, kv_lora, qk_nope, qk_rope, v_head;
  /* Multi-token prediction (DeepSeek-V3, arXiv:2412.19437 section 2.2;
   * Megatron-LM's --mtp-num-layers): this many modules after the model,
   * module k predicting token i + k + 2 from the previous depth's hidden
   * state and token i + k + 1's embedding through one layer like the
   * model's last, to the shared head (0: none; -1 in
   * strata_gen_opts_keep: keep). */
  int mtp_layers;
  /* RoPE on this share of each head's dims (GLM-4.5: 0.5; 0: all) */
  double rotary_percent;
  /* Llama 4: experts every moe_every-th layer ((l + 1) % moe_every == 0;
   * 0, 1: every layer from first_dense on), no RoPE every nope_every-th
   * layer (0: none; the RoPE is still counted: it costs a few bytes);
   * qk_norm 2: q/k L2 norms (built as RMSNorms); router_sigmoid: the
   * router's scores through a sigmoid (DeepSeek-V3, GLM-4.5, Llama 4;
   * exported, costs nothing more; -1 in strata_gen_opts_keep: keep). */
  int moe_every, nope_every, router_sigmoid;
  /* Group-limited routing and the routed experts' scaling, as in
   * strata_graph_t.hp (0: none). */
  int router_groups, router_group_topk;
  double router_topk_scale;
  /* How the router is trained (exported; they change no count, 0: none):
   * the load-balancing loss's coefficient (router_aux_loss_coef, DeepSeek's
   * aux_loss_alpha; 0: no such loss), per sequence rather than per batch
   * (DeepSeek's seq_aux), the multiplicative jitter of the router's input
   * (router_jitter_noise); router_pre_softmax: the top-k weights are the
   * softmax over all experts, not renormalised over the k chosen
   * (norm_topk_prob false); router_expert_bias: the auxiliary-loss-free
   * balancing bias, updated outside the gradient (DeepSeek-V3's
   * e_score_correction_bias, topk_method noaux_tc). */
  double router_aux_loss, router_jitter;
  int router_seq_aux, router_pre_softmax, router_expert_bias;
  /* the model's trained context, max_position_embeddings (0: not
   * known; exported, costs nothing) */
  int max_positions;
  /* Llama 4's chunked attention, gpt-oss's sinks and clamped GLU, as in
   * strata_graph_t.hp (0: none; recorded, not built). */
  int attn_chunk, attn_sinks;
  double glu_limit;
  double norm_eps; /* the norms' epsilon (0: not given; exported) */
  double init_std; /* initializer_range (0: not given; exported) */
} strata_gen_opts_t;

/* Defaults of a family (GPT-2-small-like sizes); callers override. */
void strata_gen_opts_init(strata_gen_opts_t *o, strata_family_t family);
/* Overrides for strata_model_load that change nothing: every size 0,
 * dtype STRATA_DTYPE_COUNT, flash_attention, dropout and tie_embeddings
 * -1.  Set only what should change. */
void strata_gen_opts_keep(strata_gen_opts_t *o);
int strata_family_parse(const char *name, strata_family_t *out);
const char *strata_family_name(strata_family_t f);
int strata_generate(const strata_gen_opts_t *o, const char *name,
                    strata_graph_t **out);
/* Presets: "bert-large", "gpt-1.7b" ... "gpt-1t", "gpt3-175b",
 * "llama2-70b", "llama3-405b", and the mixtures of experts
 * "mixtral-8x7b", "mixtral-8x22b", "deepseek-v3", "qwen3-235b-a22b",
 * "gpt-oss-120b".  Fills opts; STRATA_ENOTFOUND otherwise. */
int strata_preset_opts(const char *preset, strata_gen_opts_t *o);
/* NULL-terminated list of preset names. */
const char *const *strata_preset_names(void);
/* ---- Hugging Face configs (docs/import.md) ---- */
/* A config.json as its model_type describes it (llama, mistral, qwen2,
 * qwen3, gemma, gemma2, phi3, gpt2, gpt_neox, bert, t5; the mixtures of
 * experts mixtral, qwen2_moe, qwen3_moe, deepseek_v2/v3, gpt_oss,
 * glm4_moe, llama4 and llama4_text), validated.
 * overrides (NULL: none; start from strata_gen_opts_keep) may change
 * layers, seq, micro_batch, dtype, flash_attention and dropout; anything
 * else is STRATA_EINVAL.  An unknown model_type, or one whose op kinds do
 * not exist yet (mixture of experts), is STRATA_EUNSUPPORTED; a field the
 * importer does not understand is STRATA_EBADINPUT naming it.  The
 * sequence defaults to max_position_embeddings capped at 4096. */
int strata_hf_parse(const char *text, size_t len, const char *where,
                    const strata_gen_opts_t *overrides, strata_graph_t **out);
int strata_hf_load(const char *path, const strata_gen_opts_t *overrides,
                   strata_graph_t **out);
/* ---- ONNX models (docs/import.md) ---- */
/* A transformer as torch.onnx.export (or Hugging Face's exporters) writes
 * it: its nodes as ops with the file's shapes (MatMul/Gemm with a weight
 * -> linear, LayerNorm or its decomposed form, the erf form of GELU,
 * Gather of a table -> embedding, attention as matmul/scale/softmax/
 * matmul, anything else generic), its numbered modules ("/h.0/...") as
 * layers folded into repeated blocks, and a cross-entropy loss on the
 * logits.  Parameters are the float initializers read as weights, a tied
 * head counted once (docs/import.md has the rule).  Only shapes are read:
 * a model whose weights are in external data files imports as well.
 * overrides (NULL: none; from strata_gen_opts_keep) may set seq and
 * micro_batch (where the file names those dims; a fixed batch is
 * re-shaped) and dtype (of every float tensor); any other is
 * STRATA_EINVAL.  A file that is no ONNX model, has no graph, bad dims,
 * or no numbered layers is STRATA_EBADINPUT naming `where` and the
 * problem.  The file is read whole: at most 2 GiB (protobuf's limit),
 * about twice that in memory while it is decoded. */
int strata_onnx_parse(const void *data, size_t len, const char *where,
                      const strata_gen_opts_t *overrides, strata_graph_t **out);
int strata_onnx_load(const char *path, const strata_gen_opts_t *overrides,
                     strata_graph_t **out);

/* A preset name, a family name ("gpt", "bert", "llama": its defaults), a
 * trace file path, an ONNX model (a path ending in .onnx:
 * strata_onnx_load, with the overrides it allows) or a Hugging Face
 * config.json path (a JSON object with
 * "model_type" and no "format": strata_hf_load, which takes the
 * overrides it allows), validated.  overrides (NULL: none; start from
 * strata_gen_opts_keep) change a preset's or family's options: a size
 * field > 0 replaces the preset's, dtype replaces it unless it is
 * STRATA_DTYPE_COUNT, and flash_attention, dropout and tie_embeddings are
 * -1 keep, 0 off, 1 on; overrides.family is ignored.  A trace file takes
 * no overrides (STRATA_EINVAL if any is set).  An unknown spec gives
 * STRATA_ENOTFOUND with a message listing the presets. */
int strata_model_load(const char *spec, const strata_gen_opts_t *overrides,
                      strata_graph_t **out);

#ifdef __cplusplus
}
#endif
#endif
