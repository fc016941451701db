/*
 * modules.c - Megatron-LM's recompute modules (--recompute-modules;
 * megatron/core/transformer/transformer_config.py, recompute_modules):
 * which module of its layer each op belongs to, read from the ops' kinds
 * and their order in the block, and their names.
 *
 * A layer runs its attention side (the input norm, the projections, the
 * core attention between split_heads and merge_heads, the output
 * projection and the residual add), then its MLP side (the pre-MLP norm,
 * a dense MLP or the experts: router, dispatch, grouped GEMMs and their
 * activation, combine, and the shared experts beside them).  Megatron-LM
 * checkpoints core_attn, mlp, moe and shared_experts keeping the module's
 * output (tensor_parallel.checkpoint), and layernorm, moe_act and
 * mla_up_proj dropping it too (CheckpointWithoutOutput): those recompute
 * what their consumer saved.
 */
#include <stdio.h>
#include <string.h>

#include "intraop/stage.h"

static const struct {
  const char *name;
  unsigned bit;
} module_names[] = {
    {"core_attn", STRATA_RCM_CORE_ATTN},
    {"layernorm", STRATA_RCM_LAYERNORM},
    {"mlp", STRATA_RCM_MLP},
    {"moe", STRATA_RCM_MOE},
    {"moe_act", STRATA_RCM_MOE_ACT},
    {"shared_experts", STRATA_RCM_SHARED_EXPERTS},
    {"mla_up_proj", STRATA_RCM_MLA_UP_PROJ},
};
#define N_MODULES (int)(sizeof module_names / sizeof module_names[0])

int strata_recompute_modules_parse(const char *list, unsigned *out) {
  char name[32];
  unsigned m = 0;
  for (const char *p = list; p && *p;) {
    size_t n = strcspn(p, ", ");
    if (n == 0) {
      p++;
      continue;
    }
    snprintf(name, sizeof name, "%.*s", n < sizeof name ? (int)n : 31, p);
    int i = 0;
    while (i < N_MODULES && strcmp(module_names[i].name, name))
      i++;
    if (i == N_MODULES || n >= sizeof name)
      return strata_error(STRATA_EINVAL,
                          "unknown recompute module '%s' (core_attn, "
                          "layernorm, mlp, moe, moe_act, shared_experts, "
                          "mla_up_proj)",
                          name);
    m |= module_names[i].bit;
    p += n;
  }
  if (!m)
    return strata_error(STRATA_EINVAL, "--recompute-modules names no module");
  *out = m;
  return 0;
}

int strata_recompute_modules_format(unsigned m, const char *sep, char *buf,
                                    size_t size) {
  size_t o = 0;
  if (size) buf[0] = '\0';
  for (int i = 0; i < N_MODULES && o < size; i++)
    if (m & module_names[i].bit)
      o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? sep : "",
                            module_names[i].name);
  return o < size ? 0 : -1;
}

static int is_norm(strata_op_kind_t k) {
  return k == STRATA_OP_RMSNORM || k == STRATA_OP_LAYERNORM;
}

static int is_act(strata_op_kind_t k) {
  return k == STRATA_OP_SWIGLU || k == STRATA_OP_GELU || k == STRATA_OP_SILU ||
         k == STRATA_OP_RELU || k == STRATA_OP_MUL;
}

static int is_expert(strata_op_kind_t k) {
  return k == STRATA_OP_MOE_ROUTER || k == STRATA_OP_MOE_DISPATCH ||
         k == STRATA_OP_GROUPED_LINEAR || k == STRATA_OP_MOE_COMBINE;
}

static int producer_kind(const strata_graph_t *g, const strata_op_t *op,
                         int slot) {
  int p = op->n_in > slot ? g->tensors[op->in[slot]].producer : -1;
  return p >= 0 && g->ops[p].block == op->block ? (int)g->ops[p].kind : -1;
}

/* A norm on the residual stream (the input or pre-MLP norm), not one
 * inside the attention (q/k norms, MLA's latent norms). */
static int residual_norm(const strata_graph_t *g, const strata_op_t *op) {
  int k = producer_kind(g, op, 0);
  return is_norm(op->kind) && (k < 0 || k == STRATA_OP_ADD);
}

/* Fill m[i] for the ops of block b. */
static void block_modules(const strata_graph_t *g, int b, unsigned *m) {
  const strata_block_t *bl = &g->blocks[b];
  int mlp_side = 0, heads = 0, attended = 0, mla = 0, moe = 0;
  for (int i = bl->first_op; i < bl->first_op + bl->n_ops; i++) {
    mla |= g->ops[i].kind == STRATA_OP_MLA_KV;
    moe |= is_expert(g->ops[i].kind);
  }
  for (int i = bl->first_op; i < bl->first_op + bl->n_ops; i++) {
    const strata_op_t *op = &g->ops[i];
    strata_op_kind_t k = op->kind;
    int in0 = producer_kind(g, op, 0);
    unsigned x = 0;
    if (residual_norm(g, op)) {
      x = STRATA_RCM_LAYERNORM;
    } else if (!mlp_side) {
      if (k == STRATA_OP_SPLIT_HEADS || k == STRATA_OP_MLA_KV) heads = 1;
      if (k == STRATA_OP_FLASH_ATTENTION ||
          (heads && !attended &&
           (k == STRATA_OP_MATMUL || k == STRATA_OP_SOFTMAX ||
            k == STRATA_OP_SCALE || k == STRATA_OP_DROPOUT)))
        x = STRATA_RCM_CORE_ATTN;
      else if (mla && !attended &&
               ((k == STRATA_OP_LINEAR && in0 >= 0 && is_norm(in0)) ||
                k == STRATA_OP_SPLIT_HEADS || k == STRATA_OP_ROPE ||
                k == STRATA_OP_MLA_KV))
        x = STRATA_RCM_MLA_UP_PROJ;
      if (k == STRATA_OP_MERGE_HEADS || k == STRATA_OP_FLASH_ATTENTION)
        attended = 1;
      if (k == STRATA_OP_ADD && attended) mlp_side = 1;
    } else if (is_expert(k)) {
      x = STRATA_RCM_MOE;
    } else if (is_act(k) && in0 == STRATA_OP_GROUPED_LINEAR) {
      x = STRATA_RCM_MOE | STRATA_RCM_MOE_ACT;
    } else if (k == STRATA_OP_LINEAR ||
               is_act(k)) { /* not the bias-dropout-add */
      x = moe ? STRATA_RCM_MOE | STRATA_RCM_SHARED_EXPERTS : STRATA_RCM_MLP;
    }
    m[i - bl->first_op] = x;
  }
}

unsigned strata_op_modules(const strata_graph_t *g, int op) {
  unsigned m[512];
  if (!g || op < 0 || op >= g->n_ops || g->ops[op].block < 0) return 0;
  const strata_block_t *bl = &g->blocks[g->ops[op].block];
  if (bl->n_ops > 512) return 0;
  block_modules(g, g->ops[op].block, m);
  return m[op - bl->first_op];
}

void st__graph_modules(const strata_graph_t *g, unsigned *m) {
  for (int i = 0; i < g->n_ops; i++)
    m[i] = 0;
  for (int b = 0; b < g->n_blocks; b++)
    block_modules(g, b, m + g->blocks[b].first_op);
}

/* Modules that drop their output too (CheckpointWithoutOutput). */
#define DROP_OUTPUT                                                            \
  (STRATA_RCM_LAYERNORM | STRATA_RCM_MOE_ACT | STRATA_RCM_MLA_UP_PROJ)

int st__module_drops(const strata_graph_t *g, const unsigned *mods_of, int t,
                     unsigned active) {
  int p = g->tensors[t].producer;
  if (!active || p < 0 || g->tensors[t].kind != STRATA_TENSOR_ACTIVATION)
    return 0;
  unsigned mp = mods_of[p] & active;
  if (!mp) return 0;
  if (mp & DROP_OUTPUT) return 1;
  /* kept at the module's edge: dropped only when every consumer is in a
   * module it shares with the producer */
  unsigned inside = mp;
  const strata_block_t *bl = &g->blocks[g->ops[p].block];
  for (int i = p + 1; i < bl->first_op + bl->n_ops && inside; i++)
    for (int s = 0; s < g->ops[i].n_in; s++)
      if (g->ops[i].in[s] == t) inside &= mods_of[i];
  return inside != 0;
}
