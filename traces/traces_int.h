/*
 * traces_int.h - what the files of traces/ share and nothing outside uses:
 * the per-kind shape check (kinds.c) that validation and the loader call,
 * a shape formatter for messages, the transformer builder that every model
 * front end goes through, and the name indexes.
 */
#ifndef STRATA_TRACES_INT_H
#define STRATA_TRACES_INT_H

#include <stddef.h>

#include "strata/core.h"
#include "strata/traces.h"

/* Largest block repeat accepted (keeps totals far from overflow). */
#define STRATA_MAX_REPEAT 1000000

/* The rate of every dropout op the builder writes. */
#define ST__DROPOUT_P 0.1

/* Check op's arity, attributes, dtypes and shapes against the rule of its
 * kind (the table in traces.h).  Returns 0, or STRATA_EBADINPUT with a
 * message naming the op, its kind and the shapes involved.  Tensor indices
 * must already be in range. */
int st__op_check(const strata_graph_t *g, const strata_op_t *op);

/* 1 if op's first output is a view of all of its (single) input: reading
 * the output is reading the input's storage (transpose, reshape,
 * merge_heads, one-output split_heads). */
int st__op_is_full_view(const strata_op_t *op);

/* "[1,2048,2304]" into buf. */
const char *st__shape_str(const strata_tensor_t *t, char *buf, size_t size);

/* The tensor whose storage t is a full view of (t itself if none). */
int st__storage_root(const strata_graph_t *g, int t);

/* ---- the transformer builder (arch.c) ----
 *
 * One description of a transformer that covers what the built-in
 * families, their presets and the imported model families differ in;
 * st__arch_build turns it into a graph, and is the only code that does.
 * Every field that changes parameter counts, FLOPs or memory is here, and
 * the few names that differ between the families are too, so a family is
 * a row of values, not a code path: gen.c fills it from strata_gen_opts_t
 * (presets, `trace gen`, the mixtures of experts of hf.c), hf.c from a
 * Hugging Face config.json. */
typedef enum { ST__ACT_GELU, ST__ACT_RELU, ST__ACT_SILU } st__act_t;

/* The model facts of a trace's "model" object beside its sizes
 * (docs/trace-format.md), once for the reader and the writer: the
 * integers (written when not 0) and the numbers (when > 0) of
 * strata_graph_t.hp, each under its member's name.  The flags stay in
 * their files: qk_norm is two of them. */
/* clang-format off */
#define ST__HP_INTS(X)                                                         \
  X(head_dim) X(window) X(window_every) X(experts) X(topk) X(moe_ffn)          \
  X(shared_ffn) X(first_dense) X(q_lora) X(kv_lora) X(qk_nope) X(qk_rope)      \
  X(v_head) X(mtp_layers) X(moe_every) X(nope_every) X(router_groups)          \
  X(router_group_topk) X(window_from) X(attn_chunk)
#define ST__HP_NUMS(X)                                                         \
  X(rope_theta) X(capacity) X(rotary_percent) X(router_topk_scale)             \
  X(glu_limit) X(norm_eps) X(init_std)
/* clang-format on */

typedef struct {
  char family[16]; /* hp.family of the graph */
  int layers, hidden, heads, kv_heads, head_dim, ffn, vocab, seq, micro_batch;
  strata_dtype_t dtype;
  int flash_attention, dropout;
  int max_pos;     /* learned absolute positions: table rows (0: none) */
  int type_vocab;  /* token-type embeddings (BERT; 0: none) */
  int types_first; /* their ids declared with the other inputs */
  int rope;        /* rotary positions on q and k */
  int rotary_dim;  /* dims of each head rotated (0: all of them) */
  int rms;         /* rmsnorm, else layernorm */
  int norm_bias;   /* layernorm with a bias */
  st__act_t act;   /* the MLP's activation */
  int gated;       /* act(gate) * up: SwiGLU, GeGLU */
  int qkv_bias, out_bias, mlp_bias, head_bias;
  int parallel;      /* attention and MLP side by side: 1 one norm, 2 two */
  int post_norm;     /* BERT: a norm after each residual add */
  int sandwich;      /* Gemma 2: norms on the attention and MLP outputs */
  int post_only;     /* OLMo 2: those norms and none on their inputs */
  int qk_norm;       /* Qwen 3: a norm of q and k over the head dim */
  int embed_norm;    /* BERT: a norm after the embeddings */
  int tie;           /* the head uses the embedding table */
  int mlm_head;      /* BERT: dense, gelu and norm before the head */
  int logit_softcap; /* Gemma 2: tanh capping of the logits */
  int causal;
  int window;        /* sliding-window attention (0: none) */
  int window_from;   /* first layer with the window */
  int window_every;  /* k: full attention on every k-th layer from
                        window_from, the window between (Gemma 2: 2,
                        Gemma 3: 6) */
  int long_window;   /* a window no shorter than the sequence is still
                        stated on the attention (else it is none) */
  int dec_layers;    /* > 0: encoder-decoder (T5) with this many decoders */
  int rel_buckets;   /* T5: relative position bias, [buckets, heads] */
  double rope_theta; /* the rotary base (0: not given); costs nothing */
  double norm_eps;   /* the norms' epsilon (0: not given); costs nothing */
  double init_std;   /* the weights' initial std (0: not given); likewise */
  /* mixture of experts on layers l >= first_dense with (l + 1) %
   * moe_every == 0 (0, 1: all): experts routed top-k of SwiGLU MLPs of
   * moe_ffn, a shared one of shared_ffn (0: none), sigmoid-gated with
   * shared_gate; expert_bias: biased router and experts; capacity: slots
   * per expert as a factor (0: dropless) */
  int experts, topk, moe_ffn, shared_ffn, shared_gate, expert_bias;
  int first_dense, moe_every;
  double capacity;
  /* multi-head latent attention (kv_lora > 0; DeepSeek) */
  int q_lora, kv_lora, qk_nope, qk_rope, v_head;
  int mtp_layers; /* multi-token prediction modules after the head */
  /* names that differ between families: the layers' block ("decoder"),
   * the two norms of a layer ("ln1", "ln2"), the MLP's activation op
   * ("act"), and whether a run's block takes its ops' prefix ("L3.decoder")
   * or its first layer as a suffix ("decoder3") */
  const char *block, *norm1, *norm2, *act_op;
  int run_prefix;
  struct strata_graph_hp hp; /* what the graph records (its caller's) */
} st__arch_t;

/* Defaults: bf16, micro-batch 1, flash attention, causal, the names of
 * the imported families; everything else 0. */
void st__arch_init(st__arch_t *a);
/* Sizes the builder relies on, as a Hugging Face config may break them
 * (the generator checks its options itself).  0, or STRATA_EBADINPUT
 * naming the size. */
int st__arch_check(const st__arch_t *a);
/* The hyper-parameters a described model records (a->hp), as an imported
 * config states them. */
void st__arch_hp(st__arch_t *a);
/* The graph of a checked description (st__arch_check or the generator's
 * checks), named name, validated; its hp is a->hp. */
int st__arch_build(const st__arch_t *a, const char *name, strata_graph_t **out);
/* A shorter mixture (fewer layers than its dense ones) keeps its last
 * layer's experts (opts.c). */
void st__keep_a_moe_layer(strata_gen_opts_t *o);

/* Model files (hf.c, trace_read.c): a parsed JSON document. */
struct cJSON;
int st__hf_from_json(const struct cJSON *root, const char *where,
                     const strata_gen_opts_t *overrides, strata_graph_t **out);
int st__trace_from_json(const struct cJSON *root, const char *where,
                        strata_graph_t **out);

/* Name indexes (names.c).  which: one of these. */
enum { ST__NAME_TENSOR, ST__NAME_OP, ST__NAME_BLOCK };
/* Index of the item named name, or -1. */
int st__name_find(const strata_graph_t *g, int which, const char *name);
/* Index item i (already in its array) under its name. */
int st__name_add(strata_graph_t *g, int which, int i);
void st__name_index_free(strata_graph_t *g);
/* Rebuild every index from the arrays (after items were removed). */
int st__name_reindex(strata_graph_t *g);

/* Fold runs of consecutive structurally identical blocks into one
 * repeated block (fold.c).  g must be validated; it is validated again. */
int st__graph_fold(strata_graph_t *g, int *folded);

#endif
