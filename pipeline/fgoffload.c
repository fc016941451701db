/*
 * fgoffload.c - Megatron-LM's fine-grained activation offloading
 * (--offload-modules; megatron/core/pipeline_parallel/
 * fine_grained_activation_offload.py): what one layer's offloaded
 * modules save for backward, the bytes that go to the host.
 *
 * Megatron-LM opens a group at each offloaded module's forward
 * (group_start hooks saved_tensors_hooks), so what the module saves for
 * backward is the group's; the group is copied to pinned host memory on
 * its own stream and reloaded before the module's backward.  The modules
 * are read from the trace's ops in layer order: the residual norms
 * (attn_norm before the attention, mlp_norm after), the linears of the
 * attention's input (qkv_linear) and output (attn_proj) around the core
 * attention (intraop/modules.c's core_attn), the experts' first grouped
 * GEMM (expert_fc1) and their activation (moe_act).  Their saved bytes
 * are kept per graph once (at setup): sharded over the stage's tp x cp
 * ranks, but for the residual norms' and qkv_linear's input, which are
 * whole over tp without sequence parallelism.
 */
#include "pipeline/search.h"

/* One op's offload module (a STRATA_OFM_* bit; 0: none) as the walk over
 * its layer reaches it; *attended, *mlp_side, *fc1 the walk's state. */
static unsigned op_module(const strata_graph_t *g, int i, int *attended,
                          int *mlp_side, int *fc1) {
  strata_op_kind_t k = g->ops[i].kind;
  unsigned rcm = strata_op_modules(g, i), x = 0;
  if (rcm & STRATA_RCM_LAYERNORM)
    x = *mlp_side ? STRATA_OFM_MLP_NORM : STRATA_OFM_ATTN_NORM;
  else if (rcm & STRATA_RCM_CORE_ATTN)
    x = STRATA_OFM_CORE_ATTN;
  else if (rcm & STRATA_RCM_MOE_ACT)
    x = STRATA_OFM_MOE_ACT;
  else if (k == STRATA_OP_GROUPED_LINEAR && !*fc1)
    x = STRATA_OFM_EXPERT_FC1, *fc1 = 1;
  else if (k == STRATA_OP_LINEAR && !*mlp_side)
    x = *attended ? STRATA_OFM_ATTN_PROJ : STRATA_OFM_QKV_LINEAR;
  if (k == STRATA_OP_MERGE_HEADS || k == STRATA_OP_FLASH_ATTENTION)
    *attended = 1;
  if (k == STRATA_OP_ADD && *attended) *mlp_side = 1;
  return x;
}

/* The offloaded modules' saved bytes of graph g's layers, over all of
 * them: out[0] sharded over tp x cp, out[1] over cp alone without
 * sequence parallelism. */
static void graph_bytes(const strata_graph_t *g, unsigned mods, double *out) {
  const unsigned whole =
      STRATA_OFM_ATTN_NORM | STRATA_OFM_MLP_NORM | STRATA_OFM_QKV_LINEAR;
  out[0] = out[1] = 0;
  for (int b = 0; b < g->n_blocks; b++) {
    const strata_block_t *bl = &g->blocks[b];
    int attended = 0, mlp_side = 0, fc1 = 0;
    for (int i = bl->first_op; i < bl->first_op + bl->n_ops; i++) {
      unsigned x = op_module(g, i, &attended, &mlp_side, &fc1) & mods;
      if (!x) continue;
      double s = (double)strata_op_saved_bytes(g, &g->ops[i]) * bl->repeat;
      out[x & whole ? 1 : 0] += s;
    }
  }
}

void st__fg_prepare(st__search_t *S) {
  unsigned mods = (unsigned)S->o->offload_modules;
  for (int i = 0; i < S->n_graphs; i++) {
    S->fg_bytes[i][0] = S->fg_bytes[i][1] = 0;
    if (mods && S->graphs[i]) graph_bytes(S->graphs[i], mods, S->fg_bytes[i]);
  }
}

double st__fg_layer_bytes(const st__search_t *S, const st__family_t *f) {
  const double *b = S->fg_bytes[f->graph];
  int cp = f->cp > 1 ? f->cp : 1, tp = f->tp > 1 ? f->tp : 1;
  if (S->L < 1 || !(b[0] + b[1] > 0)) return 0;
  return (b[0] / (tp * cp) + b[1] / (f->sp ? tp * cp : cp)) / S->L;
}
