/*
 * stitch.c - strata_merge_stitch: the rates and model facts of a plan.
 *
 * The planner costs the whole step (model/eval.c: stages, p2p between
 * them, the schedule, the gradient synchronisation, the optimizer step)
 * with the same evaluation `strata estimate` prints; stitching adds what
 * follows from it and from the graph: tokens per second, model FLOP
 * utilisation, the peak device, and the model facts the exporters need.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "merge/merge_int.h"

int st__stage_devices(const strata_plan_stage_t *st) {
  return st->nodes * st->gpus_per_node;
}

int strata_plan_rank_layers(const strata_plan_t *p, int rank) {
  int n = 0;
  for (int s = 0; p && s < p->n_stages; s++)
    if (p->stages[s].rank == rank)
      n += p->stages[s].layer_end - p->stages[s].layer_begin;
  return n;
}

/* One model chunk as Megatron-LM's layout writes it. */
static void chunk_token(const strata_plan_t *p, int s, char *t, size_t n) {
  int layers = p->stages[s].layer_end - p->stages[s].layer_begin;
  int last = s == p->n_stages - 1;
  char mtp[24] = "";
  if (last && p->mtp_layers > 0)
    snprintf(mtp, sizeof mtp, p->mtp_layers > 1 ? "m*%d" : "m", p->mtp_layers);
  snprintf(t, n, "%s%s%.0d%s%s", s == 0 ? "E" : "",
           layers > 1    ? "t*"
           : layers == 1 ? "t"
                         : "",
           layers > 1 ? layers : 0, mtp, last ? "L" : "");
}

const char *st__dev(const strata_plan_t *p) {
  return p && p->npu ? "NPU" : "GPU";
}

int strata_plan_layout(const strata_plan_t *p, char *buf, size_t size) {
  char tok[64], next[64];
  size_t o = 0;
  if (!p || !p->stages || p->n_stages < 1 || size < 1) return -1;
  buf[0] = '\0';
  for (int s = 0; s < p->n_stages && o < size;) {
    int r = 1;
    chunk_token(p, s, tok, sizeof tok);
    while (s + r < p->n_stages - 1) { /* a run of equal chunks */
      chunk_token(p, s + r, next, sizeof next);
      if (strcmp(tok, next)) break;
      r++;
    }
    int end = s + r == p->n_stages;
    if (r > 1)
      o += (size_t)snprintf(buf + o, size - o, "(%s|)*%d", tok, r);
    else
      o += (size_t)snprintf(buf + o, size - o, "%s%s", tok, end ? "" : "|");
    s += r;
  }
  return o < size ? 0 : -1;
}

char *strata_plan_layout_dup(const strata_plan_t *p) {
  /* a stage's token is at most 40 bytes ("Et*N" "m*N" "L" "|", a run's
   * "(" ")*N"): never too short */
  size_t cap = 64 + 48 * (size_t)(p && p->n_stages > 0 ? p->n_stages : 0);
  char *v = strata_malloc(cap);
  if (v && strata_plan_layout(p, v, cap)) {
    strata_free(v);
    v = NULL;
  }
  return v;
}

static int chunk_size(const strata_plan_t *p, int s) {
  return p->stages[s].layer_end - p->stages[s].layer_begin;
}

int strata_plan_rank_form(const strata_plan_t *p) {
  int pp = p->pp > 1 ? p->pp : 1;
  for (int s = 0; s < p->n_stages; s++)
    if (chunk_size(p, s) < 1 || chunk_size(p, s) != chunk_size(p, s % pp))
      return 0;
  for (int r = 2; r + 1 < pp && r < p->n_stages; r++)
    if (chunk_size(p, r) != chunk_size(p, 1)) return 0;
  return 1;
}

int st__placement_shards(const char *pl, const strata_mesh_t *m) {
  int shards = 1, axis = 0;
  if (!pl) return 1;
  for (const char *q = pl; *q && axis < STRATA_MESH_MAX_DIMS; q++) {
    if (*q == 'S' && q[1] == '(') {
      if (axis < m->ndim) shards *= m->shape[axis];
    }
    if (*q == ',') axis++;
  }
  return shards > 0 ? shards : 1;
}

int st__first_layer_op(const strata_stage_result_t *r) {
  for (int i = 0; r && i < r->n_ops; i++)
    if (r->ops[i].layer >= 0) return i;
  return -1;
}

int st__last_layer_op(const strata_stage_result_t *r) {
  for (int i = r ? r->n_ops - 1 : -1; i >= 0; i--)
    if (r->ops[i].layer >= 0) return i;
  return -1;
}

static int check_plan(const strata_plan_t *p, const strata_graph_t *g) {
  if (!p || !g || p->n_stages < 1 || !p->stages || p->pp < 1 || !p->ranks)
    return strata_error(STRATA_EINVAL, "stitch: a plan with no stage");
  /* a chunk may hold no layer (the embedding's or the loss's alone, or
   * one a Megatron-LM layout leaves empty), the whole not */
  if (p->stages[p->n_stages - 1].layer_end <= p->stages[0].layer_begin)
    return strata_error(STRATA_EINVAL, "stitch: a plan of no layer");
  for (int s = 0; s < p->n_stages; s++) {
    const strata_plan_stage_t *st = &p->stages[s];
    if (st->layer_end < st->layer_begin || st->layer_begin < 0 ||
        st__stage_devices(st) < 1)
      return strata_error(STRATA_EINVAL,
                          "stitch: stage %d has layers [%d, %d) on %d x %d "
                          "devices",
                          s, st->layer_begin, st->layer_end, st->nodes,
                          st->gpus_per_node);
  }
  return 0;
}

/* Model facts for the exporters, from the graph's hyper-parameters. */
static void model_facts(strata_plan_t *p, const strata_graph_t *g) {
  p->flash_attention = g->hp.flash_attention;
  p->dropout = g->hp.dropout;
  p->untie_embeddings = strata_graph_find_tensor(g, "head.weight") >= 0;
  /* the model's trained context (max_position_embeddings) where it is
   * known, never below the sequence planned (Megatron-LM asserts
   * max_position_embeddings >= seq_length) */
  int seq = g->hp.max_seq > 0 ? g->hp.max_seq : g->seq_len;
  p->max_position = g->hp.max_positions > seq ? g->hp.max_positions : seq;
  if (!p->seq_len) p->seq_len = g->seq_len;
}

static void fill_rates(strata_plan_t *p, const strata_graph_t *g,
                       const strata_cluster_t *c) {
  if (p->gpu_peak_flops <= 0 && c)
    p->gpu_peak_flops =
        strata_cluster_gpu_peak_flops_at(c, strata_lowp_peak_bits(p->fp8));
  if (p->gpu_memory_bytes <= 0 && c)
    p->gpu_memory_bytes = (double)strata_cluster_gpu_memory(c);
  if (c) /* Ascend: the output says NPU where it names a device */
    p->npu = !strcmp(strata_cluster_device_kind(c), "NPU");
  if (p->model_flops_per_step <= 0 || p->model_flops_unmasked_per_step <= 0) {
    strata_graph_stats_t gs;
    double mb = g->micro_batch > 0 ? g->micro_batch : 1;
    strata_graph_stats(g, &gs);
    if (p->model_flops_per_step <= 0)
      p->model_flops_per_step = gs.flops_per_microbatch * p->global_batch / mb;
    if (p->model_flops_unmasked_per_step <= 0)
      p->model_flops_unmasked_per_step =
          gs.flops_unmasked_per_microbatch * p->global_batch / mb;
  }
  p->tokens_per_second = p->step_seconds > 0 ? (double)p->global_batch *
                                                   p->seq_len / p->step_seconds
                                             : 0;
  double denom = p->step_seconds * p->devices * p->gpu_peak_flops;
  p->mfu = denom > 0 ? p->model_flops_per_step / denom : 0;
  p->peak_memory_bytes = 0;
  for (int r = 0; r < p->pp; r++)
    if (p->ranks[r].mem.total > p->peak_memory_bytes)
      p->peak_memory_bytes = p->ranks[r].mem.total;
}

int strata_merge_stitch(strata_plan_t *p, const strata_graph_t *g,
                        const strata_cluster_t *c) {
  int rc = check_plan(p, g);
  if (rc) return rc;
  model_facts(p, g);
  fill_rates(p, g, c);
  return 0;
}
