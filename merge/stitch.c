/*
 * stitch.c - strata_merge_stitch: join the stage plans into one step.
 *
 * Between consecutive stages the boundary activation (the output tensor of
 * the block holding the sender's last layer, scaled from the trace's
 * micro-batch to the plan's) crosses once per micro-batch forward and its
 * gradient once backward.  Each sending device holds the part its last
 * op's placement gives it ("[S(1)]" divides by that mesh axis; "[R]" and
 * "[P]" keep it whole) and sends it to its peer on the receiving submesh,
 * all pairs at once, over the link between the two submeshes (the cluster
 * decides the level from the two ranks).  When the receiver's first op
 * wants another layout and the sender sharded the tensor, the receiver
 * all-gathers it on its own devices; a receiver that wants a shard of a
 * whole tensor slices it locally for free.
 *
 * The step is then the 1F1B schedule of sched.c plus the gradient sync of
 * each stage after its last backward: step = max over stages of (end of
 * its last backward + its sync_seconds), which is the makespan plus the
 * first stage's sync when stages are alike (docs/plan-format.md).
 */
#include <math.h>
#include <string.h>

#include "merge/merge_int.h"

int st__stage_devices(const strata_plan_stage_t *st) {
  return st->nodes * st->gpus_per_node;
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

static const char *placement_of(const strata_plan_stage_t *st, int last) {
  const strata_stage_result_t *r = st->result;
  int i = last ? st__last_layer_op(r) : st__first_layer_op(r);
  return i >= 0 ? r->ops[i].placement : "[R]";
}

/* Ranks of a stage's devices (node-major numbering) into ranks[]. */
static int stage_ranks(const strata_cluster_t *c, const strata_plan_stage_t *st,
                       int **out) {
  int gpn = strata_cluster_gpus_per_node(c), n = st__stage_devices(st);
  int node0 = gpn > 0 ? st->first_rank / gpn : 0;
  int local0 = gpn > 0 ? st->first_rank % gpn : 0;
  int *r = strata_calloc((size_t)(n > 0 ? n : 1), sizeof *r);
  if (!r) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int a = 0; a < st->nodes; a++)
    for (int b = 0; b < st->gpus_per_node; b++)
      r[a * st->gpus_per_node + b] = (node0 + a) * gpn + local0 + b;
  *out = r;
  return 0;
}

/* All-gather of bytes over the receiver's devices. */
static int regather(const strata_cluster_t *c, const strata_plan_stage_t *rx,
                    double bytes, double *t) {
  int *ranks = NULL, rc;
  if (!c) {
    *t = strata_coll_time(STRATA_COLL_ALLGATHER, bytes, st__stage_devices(rx),
                          &rx->mesh.axis[0]);
    return 0;
  }
  rc = stage_ranks(c, rx, &ranks);
  if (!rc)
    rc = strata_cluster_coll_time_ranks(c, STRATA_COLL_ALLGATHER, bytes, ranks,
                                        st__stage_devices(rx), t);
  strata_free(ranks);
  return rc;
}

static int send_time(const strata_cluster_t *c, const strata_plan_stage_t *tx,
                     const strata_plan_stage_t *rx, double bytes, double *t) {
  int ranks[2] = {tx->first_rank, rx->first_rank};
  if (!c) {
    *t = strata_coll_time(STRATA_COLL_P2P, bytes, 2, &tx->mesh.axis[0]);
    return 0;
  }
  return strata_cluster_coll_time_ranks(c, STRATA_COLL_P2P, bytes, ranks, 2, t);
}

/* The boundary activation after layer `layer` for the plan's micro-batch. */
static int boundary_bytes(const strata_plan_t *p, const strata_graph_t *g,
                          int layer, double *bytes) {
  int b = strata_graph_layer_block(g, layer);
  if (b < 0)
    return strata_error(STRATA_EBADINPUT,
                        "stitch: layer %d is in no block of model '%s'", layer,
                        g->name);
  *bytes = (double)strata_tensor_bytes(&g->tensors[g->blocks[b].output]);
  if (p->micro_batch > 0 && g->micro_batch > 0 &&
      p->micro_batch != g->micro_batch)
    *bytes *= (double)p->micro_batch / g->micro_batch;
  return 0;
}

static int boundary(const strata_plan_t *p, const strata_graph_t *g,
                    const strata_cluster_t *c, int s, double *t) {
  const strata_plan_stage_t *tx = &p->stages[s], *rx = &p->stages[s + 1];
  double bytes = 0, send = 0, gather = 0;
  const char *pt = placement_of(tx, 1), *pr = placement_of(rx, 0);
  int shards = st__placement_shards(pt, &tx->mesh);
  int rc = boundary_bytes(p, g, tx->layer_end - 1, &bytes);
  if (!rc) rc = send_time(c, tx, rx, bytes / shards, &send);
  if (!rc && shards > 1 && strcmp(pt, pr) != 0)
    rc = regather(c, rx, bytes, &gather);
  if (rc) {
    strata_error_prefix("stitch: boundary between stages %d and %d", s, s + 1);
    return rc;
  }
  *t = send + gather;
  return 0;
}

static int check_plan(const strata_plan_t *p, const strata_graph_t *g) {
  if (!p || !g || p->n_stages < 1 || !p->stages)
    return strata_error(STRATA_EINVAL, "stitch: a plan with no stage");
  for (int s = 0; s < p->n_stages; s++) {
    const strata_plan_stage_t *st = &p->stages[s];
    if (st->layer_end <= st->layer_begin || st->layer_begin < 0 ||
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
  p->max_position = g->hp.max_seq > 0 ? g->hp.max_seq : g->seq_len;
  if (!p->seq_len) p->seq_len = g->seq_len;
}

static void fill_rates(strata_plan_t *p, const strata_graph_t *g,
                       const strata_cluster_t *c) {
  if (!p->devices)
    for (int s = 0; s < p->n_stages; s++)
      p->devices += st__stage_devices(&p->stages[s]) * (p->dp > 0 ? p->dp : 1);
  if (p->gpu_peak_flops <= 0 && c)
    p->gpu_peak_flops = strata_cluster_gpu_peak_flops(c);
  if (p->gpu_memory_bytes <= 0 && c)
    p->gpu_memory_bytes = (double)strata_cluster_gpu_memory(c);
  if (p->model_flops_per_step <= 0) {
    strata_graph_stats_t gs;
    strata_graph_stats(g, &gs);
    p->model_flops_per_step = gs.flops_per_microbatch * p->global_batch /
                              (g->micro_batch > 0 ? g->micro_batch : 1);
  }
  p->tokens_per_second = p->step_seconds > 0 ? (double)p->global_batch *
                                                   p->seq_len / p->step_seconds
                                             : 0;
  double denom = p->step_seconds * p->devices * p->gpu_peak_flops;
  p->mfu = denom > 0 ? p->model_flops_per_step / denom : 0;
  p->peak_memory_bytes = 0;
  for (int s = 0; s < p->n_stages; s++) {
    const strata_stage_result_t *r = p->stages[s].result;
    if (r && r->peak_memory_bytes > p->peak_memory_bytes)
      p->peak_memory_bytes = r->peak_memory_bytes;
  }
}

static int schedule(strata_plan_t *p) {
  st__sched_t S;
  double *scratch = NULL;
  int rc = st__sched_from_plan(p, &S, &scratch);
  if (!rc) rc = st__sched_run(&S);
  if (!rc) p->step_seconds = S.step;
  st__sched_free(&S);
  strata_free(scratch);
  return rc;
}

int strata_merge_stitch(strata_plan_t *p, const strata_graph_t *g,
                        const strata_cluster_t *c) {
  int rc = check_plan(p, g);
  double *p2p = NULL;
  if (rc) return rc;
  if (p->n_stages > 1) {
    p2p = strata_calloc((size_t)p->n_stages - 1, sizeof *p2p);
    if (!p2p) return strata_error(STRATA_ENOMEM, "out of memory");
    for (int s = 0; !rc && s + 1 < p->n_stages; s++)
      rc = boundary(p, g, c, s, &p2p[s]);
    if (rc) goto out;
    strata_free(p->p2p_seconds);
    p->p2p_seconds = p2p;
    p2p = NULL;
  }
  model_facts(p, g);
  if (p->n_micro < 1 && p->micro_batch > 0 && p->dp > 0)
    p->n_micro = p->global_batch / (p->micro_batch * p->dp);
  rc = schedule(p);
  if (!rc) fill_rates(p, g, c);
out:
  strata_free(p2p);
  return rc;
}
