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
#include <string.h>

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

/* Each module's saved bytes of graph g's layers, over all of them:
 * out[k][0] sharded over tp x cp, out[k][1] over cp alone without
 * sequence parallelism, k the bit of its STRATA_OFM_*. */
static void graph_bytes(const strata_graph_t *g, double (*out)[2]) {
  const unsigned whole =
      STRATA_OFM_ATTN_NORM | STRATA_OFM_MLP_NORM | STRATA_OFM_QKV_LINEAR;
  for (int k = 0; k < ST__FG_MODULES; k++)
    out[k][0] = out[k][1] = 0;
  for (int b = 0; b < g->n_blocks; b++) {
    const strata_block_t *bl = &g->blocks[b];
    int attended = 0, mlp_side = 0, fc1 = 0;
    for (int i = bl->first_op; i < bl->first_op + bl->n_ops; i++) {
      unsigned x = op_module(g, i, &attended, &mlp_side, &fc1);
      int k = 0;
      if (!x) continue;
      while (!(x & 1u << k))
        k++;
      double s = (double)strata_op_saved_bytes(g, &g->ops[i]) * bl->repeat;
      out[k][x & whole ? 1 : 0] += s;
    }
  }
}

void st__fg_prepare(st__search_t *S) {
  int need = S->o->offload_modules > 0 || S->o->search_offload;
  for (int i = 0; i < S->n_graphs; i++) {
    memset(S->fg_bytes[i], 0, sizeof S->fg_bytes[i]);
    if (need && S->graphs[i]) graph_bytes(S->graphs[i], S->fg_bytes[i]);
  }
}

/* The modules whose saved activations family f's selective recompute
 * drops already (its --recompute-modules; without them the attention's
 * scores, which only unfused attention saves): nothing of theirs is left
 * to offload. */
static unsigned recomputed(const st__search_t *S, const st__family_t *f) {
  unsigned m = S->o->recompute_modules, r = 0;
  if (f->rc != STRATA_RECOMPUTE_SELECTIVE) return 0;
  if ((m & STRATA_RCM_CORE_ATTN) || (!m && !S->rules.flash_attention))
    r |= STRATA_OFM_CORE_ATTN;
  if (m & STRATA_RCM_LAYERNORM) r |= STRATA_OFM_ATTN_NORM | STRATA_OFM_MLP_NORM;
  if (m & (STRATA_RCM_MOE | STRATA_RCM_MOE_ACT)) r |= STRATA_OFM_MOE_ACT;
  if (m & STRATA_RCM_MOE) r |= STRATA_OFM_EXPERT_FC1;
  return r;
}

double st__fg_layer_bytes(const st__search_t *S, const st__family_t *f,
                          unsigned mods) {
  int cp = f->cp > 1 ? f->cp : 1, tp = f->tp > 1 ? f->tp : 1;
  double a = 0, w = 0;
  mods &= ~recomputed(S, f);
  if (!mods || S->L < 1) return 0;
  for (int k = 0; k < ST__FG_MODULES; k++)
    if (mods & 1u << k) {
      a += S->fg_bytes[f->graph][k][0];
      w += S->fg_bytes[f->graph][k][1];
    }
  return (a / (tp * cp) + w / (f->sp ? tp * cp : cp)) / S->L;
}

/* The sets --search-offload tries, heaviest modules first (Megatron-LM's
 * guide offloads core_attn and expert_fc1, and recomputes the cheap
 * ones): the attention's core and output, then its input, then the
 * norms; with experts each with the experts' GEMM input and activation
 * too. */
int st__fg_sets(const st__search_t *S, const st__family_t *f, unsigned *sets) {
  const unsigned att = STRATA_OFM_CORE_ATTN | STRATA_OFM_ATTN_PROJ,
                 qkv = att | STRATA_OFM_QKV_LINEAR,
                 norms = qkv | STRATA_OFM_ATTN_NORM | STRATA_OFM_MLP_NORM,
                 moe = STRATA_OFM_EXPERT_FC1 | STRATA_OFM_MOE_ACT;
  const unsigned all[ST__FG_SETS] = {att,       qkv,       norms,
                                     att | moe, qkv | moe, norms | moe};
  strata_rules_config_t c = S->rules; /* the family's layers: the */
  int n = 0;                          /* rulebook's ST__AT_LAYER rows */
  c.tp = f->tp, c.cp = f->cp, c.ep = f->ep, c.etp = f->etp;
  c.recompute = f->rc, c.sequence_parallel = f->sp;
  for (int i = 0; i < ST__FG_SETS; i++) {
    c.offload_modules = (int)all[i];
    if (!strata_rules_check(&c, ST__AT_LAYER, NULL)) sets[n++] = all[i];
  }
  return n;
}

unsigned st__offload_fg_room(const st__search_t *S, const st__cfg_t *cf) {
  const strata_plan_opts_t *o = S->o;
  unsigned sets[ST__FG_SETS], u = 0;
  if (!o->search_offload || o->offload_modules || o->offload_layers > 0 ||
      o->framework != STRATA_FRAMEWORK_MEGATRON)
    return 0;
  int n = st__fg_sets(S, cf->f, sets);
  for (int i = 0; i < n; i++)
    u |= sets[i];
  return u;
}
