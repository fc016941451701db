/*
 * report_par.c - what the summary and the JSON say about context and
 * expert parallelism, FP8 and the mixture of experts (report.c calls in
 * here; the summary's lines through export/plan_text.h's table).  Everything is
 * printed only where it is used -- cp > 1, ep > 1, FP8, experts -- so a dense
 * BF16 plan reads as it always has.
 */
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "merge/merge_int.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

void strata_plan_config_name(const strata_plan_config_t *c, char *buf,
                             size_t size) {
  size_t n = 0;
  n += (size_t)snprintf(buf + n, size - n, "tp %d", c->tp);
  if (c->cp > 1 && n < size)
    n += (size_t)snprintf(buf + n, size - n, ", cp %d", c->cp);
  if (c->ep > 1 && n < size)
    n += (size_t)snprintf(buf + n, size - n, ", ep %d, etp %d", c->ep, c->etp);
  if (n < size)
    n += (size_t)snprintf(buf + n, size - n, ", pp %d, dp %d, micro %d", c->pp,
                          c->dp, c->micro_batch);
  if (c->vpp > 1 && n < size) /* two schedules can differ by vpp alone */
    n += (size_t)snprintf(buf + n, size - n, ", vpp %d", c->vpp);
  if (c->sequence_parallel && n < size)
    n += (size_t)snprintf(buf + n, size - n, ", sp");
  if (c->fp8 && n < size) n += (size_t)snprintf(buf + n, size - n, ", fp8");
  if (c->zero_stage >= 2 && n < size)
    n += (size_t)snprintf(buf + n, size - n, ", ZeRO %d", c->zero_stage);
  if (n < size)
    snprintf(buf + n, size - n, ", recompute %s",
             strata_recompute_name(c->recompute));
}

/* "tp 4, cp 2, ep 8 (etp 1), pp 8, dp 16": the degrees of the plan. */
void st__degrees(const strata_plan_t *p, char *buf, size_t size) {
  size_t n = (size_t)snprintf(buf, size, "tp %d", p->tp);
  if (p->cp > 1 && n < size)
    n += (size_t)snprintf(buf + n, size - n, ", cp %d", p->cp);
  if (p->ep > 1 && n < size)
    n += (size_t)snprintf(buf + n, size - n, ", ep %d (etp %d)", p->ep, p->etp);
  if (n < size) snprintf(buf + n, size - n, ", pp %d, dp %d", p->pp, p->dp);
}

/* Whether the MoE layer's line is shown: where the plan sets one of its
 * choices (Megatron-LM's defaults, as exported, are not repeated). */
int st__text_moe_shown(const strata_plan_t *p) {
  return p->experts > 0 &&
         (p->moe_dispatcher || p->moe_flex_backend || p->moe_router_dtype ||
          p->moe_drop_policy || !p->moe_grouped_gemm || p->moe_shared_overlap);
}

void st__text_moe_layer(strata_buf_t *b, const strata_plan_t *p,
                        const char *label) {
  int d = p->moe_dispatcher;
  strata_buf_printf(b, "  %-20s %s dispatcher", label,
                    strata_moe_token_dispatcher_name(d));
  if (STRATA_CHOICE(d) == STRATA_MOE_FLEX)
    strata_buf_printf(b, " (%s)",
                      strata_moe_flex_backend_name(p->moe_flex_backend));
  strata_buf_printf(b, ", router %s, %s GEMMs",
                    strata_moe_router_dtype_name(p->moe_router_dtype),
                    p->moe_grouped_gemm ? "grouped" : "sequential");
  if (p->moe_drop_policy)
    strata_buf_printf(b, ", drops by %s",
                      strata_moe_token_drop_policy_name(p->moe_drop_policy));
  if (p->moe_shared_overlap)
    strata_buf_puts(b, ", shared experts under the dispatch");
  strata_buf_puts(b, "\n");
}

/* Per-layer CUDA graphs, where the plan names an implementation. */
void st__text_cuda_graphs(strata_buf_t *b, const strata_plan_t *p,
                          const char *label) {
  int n = 0;
  strata_buf_printf(b, "  %-20s %s", label,
                    strata_cuda_graph_impl_name(p->cuda_graph_impl));
  for (int k = 0; strata_cuda_graph_scope_name(k); k++)
    if (p->cuda_graph_scope & (1 << k))
      strata_buf_printf(b, "%s%s", n++ ? ", " : ", capturing ",
                        strata_cuda_graph_scope_name(k));
  if (p->cuda_graph_impl == STRATA_CUDA_GRAPH_FULL)
    strata_buf_puts(b, ", capturing the whole training step");
  else if (!n && STRATA_CHOICE(p->cuda_graph_impl) != STRATA_CUDA_GRAPH_NONE)
    strata_buf_puts(b, ", capturing each whole layer");
  strata_buf_puts(b, "\n");
}

/* The experts: how many, their size and how tokens are kept. */
void st__text_experts(strata_buf_t *b, const strata_plan_t *p,
                      const char *label) {
  strata_buf_printf(b, "  %-20s %d routed, top-%d, hidden %d", label,
                    p->experts, p->topk, p->moe_ffn);
  if (p->shared_ffn) strata_buf_printf(b, ", shared %d", p->shared_ffn);
  strata_buf_printf(b, ", %d MoE layers", p->moe_layers);
  if (p->capacity > 0)
    strata_buf_printf(b, ", capacity factor %g\n", p->capacity);
  else
    strata_buf_printf(b, ", dropless (imbalance %g)\n",
                      p->moe_imbalance > 1 ? p->moe_imbalance : 1.0);
}

int st__expert_dp(const strata_plan_t *p) {
  return p->ep > 0 && p->etp > 0
             ? (int)((long long)p->tp * (p->cp > 1 ? p->cp : 1) * p->dp /
                     ((long long)p->ep * p->etp))
             : p->dp;
}

/* Which extra memory columns the rank table shows. */
static int any_col(const strata_plan_t *p, int which) {
  for (int r = 0; p->ranks && r < p->pp; r++) {
    const strata_mem_items_t *m = &p->ranks[r].mem;
    double v = which == 0   ? m->experts
               : which == 1 ? m->ep_buffers
                            : m->cp_buffers;
    if (v > 0) return 1;
  }
  return 0;
}

void st__summary_mem_head(strata_buf_t *b, const strata_plan_t *p) {
  if (any_col(p, 1)) strata_buf_printf(b, " %6s", "ep a2a");
  if (any_col(p, 2)) strata_buf_printf(b, " %6s", "cp kv");
  if (any_col(p, 0)) strata_buf_printf(b, "  (experts)");
}

void st__summary_mem_row(strata_buf_t *b, const strata_plan_t *p,
                         const strata_mem_items_t *m) {
  if (any_col(p, 1)) strata_buf_printf(b, " %6.2f", m->ep_buffers / GIB);
  if (any_col(p, 2)) strata_buf_printf(b, " %6.2f", m->cp_buffers / GIB);
  if (any_col(p, 0)) strata_buf_printf(b, "  (%7.2f)", m->experts / GIB);
}

/* ---- JSON: keys present where used ---- */

int st__json_par_items(cJSON *o, const strata_mem_items_t *m) {
  int bad = 0;
  if (m->ep_buffers > 0)
    bad |= st__json_add_num(o, "ep_buffers_bytes", m->ep_buffers);
  if (m->cp_buffers > 0)
    bad |= st__json_add_num(o, "cp_buffers_bytes", m->cp_buffers);
  if (m->experts > 0) bad |= st__json_add_num(o, "experts_bytes", m->experts);
  return bad;
}

int st__json_par_config(cJSON *o, const strata_plan_config_t *c) {
  int bad = 0;
  if (c->cp > 1) bad |= st__json_add_num(o, "cp", c->cp);
  if (c->ep > 1)
    bad |=
        st__json_add_num(o, "ep", c->ep) | st__json_add_num(o, "etp", c->etp);
  if (c->fp8) bad |= st__json_add_str(o, "precision", "fp8");
  return bad;
}
